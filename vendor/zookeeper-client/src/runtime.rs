//! Socket and timer of the runtime that drives the client.
//!
//! By default they are those of `async-net` and `async-io`, whose reactor runs in a thread of its own.
//! With feature `tokio`, a socket or timer created inside a tokio runtime is tokio's own: tokio's driver
//! then polls it on the runtime's thread, with no second reactor thread to start and no cross-thread
//! wake-up per readiness. That runtime must have both io and time enabled. Outside a tokio runtime, they
//! fall back to `async-net` and `async-io` as without the feature.

#[cfg(not(feature = "tokio"))]
pub use async_io::Timer;
#[cfg(not(feature = "tokio"))]
pub use async_net::TcpStream;
#[cfg(feature = "tokio")]
pub use with_tokio::{TcpStream, Timer};

#[cfg(feature = "tokio")]
mod with_tokio {
    use std::future::Future;
    use std::io::{IoSlice, Result};
    use std::pin::Pin;
    use std::task::{ready, Context, Poll};
    use std::time::{Duration, Instant};

    use futures::io::{AsyncRead, AsyncWrite};
    use tokio::io::{AsyncRead as _, AsyncWrite as _, ReadBuf};
    use tokio::time::Sleep;

    fn in_tokio_runtime() -> bool {
        tokio::runtime::Handle::try_current().is_ok()
    }

    /// A TCP stream implementing `futures`' io traits over either runtime's socket.
    #[derive(Debug)]
    pub enum TcpStream {
        Tokio(tokio::net::TcpStream),
        AsyncNet(async_net::TcpStream),
    }

    impl TcpStream {
        pub async fn connect(addr: (&str, u16)) -> Result<Self> {
            if in_tokio_runtime() {
                tokio::net::TcpStream::connect(addr).await.map(Self::Tokio)
            } else {
                async_net::TcpStream::connect(addr).await.map(Self::AsyncNet)
            }
        }
    }

    impl AsyncRead for TcpStream {
        fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<Result<usize>> {
            match self.get_mut() {
                Self::Tokio(stream) => {
                    let mut buf = ReadBuf::new(buf);
                    ready!(Pin::new(stream).poll_read(cx, &mut buf))?;
                    Poll::Ready(Ok(buf.filled().len()))
                },
                Self::AsyncNet(stream) => Pin::new(stream).poll_read(cx, buf),
            }
        }
    }

    impl AsyncWrite for TcpStream {
        fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<Result<usize>> {
            match self.get_mut() {
                Self::Tokio(stream) => Pin::new(stream).poll_write(cx, buf),
                Self::AsyncNet(stream) => Pin::new(stream).poll_write(cx, buf),
            }
        }

        fn poll_write_vectored(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            bufs: &[IoSlice<'_>],
        ) -> Poll<Result<usize>> {
            match self.get_mut() {
                Self::Tokio(stream) => Pin::new(stream).poll_write_vectored(cx, bufs),
                Self::AsyncNet(stream) => Pin::new(stream).poll_write_vectored(cx, bufs),
            }
        }

        fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
            match self.get_mut() {
                Self::Tokio(stream) => Pin::new(stream).poll_flush(cx),
                Self::AsyncNet(stream) => Pin::new(stream).poll_flush(cx),
            }
        }

        /// Shuts down the write half, as `async-net` does.
        fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
            match self.get_mut() {
                Self::Tokio(stream) => Pin::new(stream).poll_shutdown(cx),
                Self::AsyncNet(stream) => Pin::new(stream).poll_close(cx),
            }
        }
    }

    /// A timer with the part of `async_io::Timer`'s behaviour the client uses: a future that
    /// completes with the instant it was due at; an interval one is due again a period later each
    /// time it completes, and any other never completes again.
    #[derive(Debug)]
    pub enum Timer {
        Never,
        Tokio { sleep: Pin<Box<Sleep>>, period: Option<Duration> },
        AsyncIo(async_io::Timer),
    }

    impl Timer {
        pub fn never() -> Self {
            Self::Never
        }

        pub fn at(deadline: Instant) -> Self {
            Self::due(deadline, None)
        }

        pub fn after(duration: Duration) -> Self {
            Instant::now().checked_add(duration).map_or_else(Self::never, Self::at)
        }

        pub fn interval(period: Duration) -> Self {
            Instant::now().checked_add(period).map_or_else(Self::never, |start| Self::due(start, Some(period)))
        }

        fn due(deadline: Instant, period: Option<Duration>) -> Self {
            if !in_tokio_runtime() {
                return Self::AsyncIo(match period {
                    None => async_io::Timer::at(deadline),
                    Some(period) => async_io::Timer::interval_at(deadline, period),
                });
            }
            let sleep = Box::pin(tokio::time::sleep_until(deadline.into()));
            Self::Tokio { sleep, period }
        }
    }

    impl Future for Timer {
        type Output = Instant;

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Instant> {
            let this = self.get_mut();
            match this {
                Self::Never => Poll::Pending,
                Self::AsyncIo(timer) => Pin::new(timer).poll(cx),
                Self::Tokio { sleep, period } => {
                    ready!(sleep.as_mut().poll(cx));
                    let due = sleep.deadline().into_std();
                    match period.and_then(|period| due.checked_add(period)) {
                        Some(next) => sleep.as_mut().reset(next.into()),
                        None => *this = Self::Never,
                    }
                    Poll::Ready(due)
                },
            }
        }
    }
}

#[cfg(all(test, feature = "tokio"))]
mod tests {
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};

    use futures::{AsyncReadExt, AsyncWriteExt};

    use super::{TcpStream, Timer};

    fn tokio_runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    }

    #[test]
    fn timer_inside_tokio_runtime() {
        tokio_runtime().block_on(async {
            let start = Instant::now();
            let timer = Timer::after(Duration::from_millis(5));
            assert!(matches!(timer, Timer::Tokio { .. }));
            let due = timer.await;
            assert!(due >= start + Duration::from_millis(5));
            assert!(Instant::now() >= due);
        });
    }

    #[test]
    fn interval_inside_tokio_runtime() {
        tokio_runtime().block_on(async {
            let period = Duration::from_millis(5);
            let mut tick = Timer::interval(period);
            let first = (&mut tick).await;
            let second = (&mut tick).await;
            assert_eq!(second - first, period);
        });
    }

    #[test]
    fn timer_never() {
        tokio_runtime().block_on(async {
            let mut never = Timer::never();
            assert!(futures::poll!(&mut never).is_pending());
            Timer::after(Duration::from_millis(5)).await;
            assert!(futures::poll!(&mut never).is_pending());
        });
    }

    #[test]
    fn timer_outside_tokio_runtime() {
        let timer = Timer::after(Duration::from_millis(5));
        assert!(matches!(timer, Timer::AsyncIo(_)));
        let start = Instant::now();
        futures::executor::block_on(timer);
        assert!(Instant::now() >= start + Duration::from_millis(5));
    }

    /// Connects to `listener`, exchanges a request and a reply, and closes the write half.
    async fn exchange(listener: &std::net::TcpListener) -> TcpStream {
        let port = listener.local_addr().unwrap().port();
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let (mut server, _) = listener.accept().unwrap();
        stream.write_all(b"ping").await.unwrap();
        let mut request = [0u8; 4];
        server.read_exact(&mut request).unwrap();
        assert_eq!(&request, b"ping");
        server.write_all(b"pong").unwrap();
        let mut reply = [0u8; 4];
        stream.read_exact(&mut reply).await.unwrap();
        assert_eq!(&reply, b"pong");
        stream.close().await.unwrap();
        assert_eq!(server.read(&mut request).unwrap(), 0);
        stream
    }

    #[test]
    fn tcp_stream_inside_tokio_runtime() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = tokio_runtime().block_on(exchange(&listener));
        assert!(matches!(stream, TcpStream::Tokio(_)));
    }

    #[test]
    fn tcp_stream_outside_tokio_runtime() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = futures::executor::block_on(exchange(&listener));
        assert!(matches!(stream, TcpStream::AsyncNet(_)));
    }
}
