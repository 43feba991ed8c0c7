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
