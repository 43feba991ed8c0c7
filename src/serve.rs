//! Serving HTTP to whoever can reach a port, within bounds no client can
//! push (the exporter's port may be open to a whole network, and nothing
//! there may starve it):
//!
//! - a connection has [`REQUEST_TIMEOUT`] to send a request's headers,
//!   counted from when it was accepted or last answered, so a client that
//!   trickles its headers a byte at a time and one that keeps a connection
//!   open without asking anything are both cut off;
//! - headers are bounded in size, so each connection holds a small buffer
//!   at most, and a flood of connections costs little memory;
//! - connections are capped, in all and from one address (an IPv6 /64
//!   counts as one address). At a cap, the newcomer is let in and an older
//!   connection closed: the oldest that has had no answer yet, else the
//!   oldest. A client that floods from one address pushes out only its own
//!   connections; a scraper's connection is answered a moment after it is
//!   accepted, so it is never the oldest unanswered for long;
//! - the cap in all leaves [`RESERVED_DESCRIPTORS`] below the process's
//!   descriptor limit, so a flood cannot take from the exporter the
//!   descriptors its own ZooKeeper sessions need.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::sys;

/// How long a connection has to send a request's headers, from when it was
/// accepted or last answered.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// The most connections served at once, when descriptors allow.
pub(crate) const MAX_CONNECTIONS: usize = 256;

/// The most connections served at once from one address.
pub(crate) const MAX_PER_ADDRESS: usize = 16;

/// Descriptors below the process's limit that connections never take:
/// for the ZooKeeper sessions (the watch's, the cycle search's, the
/// survey's connection to each member), name lookups and the standard
/// streams.
pub(crate) const RESERVED_DESCRIPTORS: u64 = 64;

/// The largest request head (request line and headers) read, in bytes; a
/// larger one is answered 431 and its connection closed. A scraper's is a
/// few hundred.
const MAX_HEAD_BYTES: usize = 8 * 1024;

/// The most a connection's read buffer may hold (the HTTP library's least
/// allowed is 8 KiB).
const MAX_BUFFER_BYTES: usize = 16 * 1024;

/// The caps on connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Connections served at once, in all.
    pub connections: usize,
    /// Connections served at once from one address.
    pub per_address: usize,
}

impl Limits {
    /// The caps for this process, from its descriptor limit.
    pub(crate) fn for_this_process() -> Limits {
        Limits::for_descriptors(sys::descriptor_limit())
    }

    /// The caps for a process that may have `descriptors` open (`None`:
    /// no limit): [`MAX_CONNECTIONS`], or fewer, so that
    /// [`RESERVED_DESCRIPTORS`] stay free; one at the least.
    fn for_descriptors(descriptors: Option<u64>) -> Limits {
        let room = descriptors.map_or(u64::MAX, |d| d.saturating_sub(RESERVED_DESCRIPTORS));
        let connections = usize::try_from(room)
            .unwrap_or(usize::MAX)
            .clamp(1, MAX_CONNECTIONS);
        Limits {
            connections,
            per_address: MAX_PER_ADDRESS.min(connections),
        }
    }
}

/// Answers every connection on `listener` with `respond`, within `limits`,
/// until dropped.
pub(crate) async fn serve<R>(listener: TcpListener, limits: Limits, respond: R)
where
    R: Fn(&Request<Incoming>) -> Response<Full<Bytes>> + Clone + Send + 'static,
{
    let open: Arc<Mutex<Open<JoinHandle<()>>>> = Arc::default();
    let mut http = http1::Builder::new();
    // Without a timer the HTTP library's header timeout never fires.
    http.timer(TokioTimer::new())
        .header_read_timeout(REQUEST_TIMEOUT)
        .max_header_size(MAX_HEAD_BYTES)
        .max_buf_size(MAX_BUFFER_BYTES);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(err) => {
                // Out of descriptors, say: the next accept may work.
                tracing::warn!("accepting a connection failed: {err}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let client = client_of(peer.ip());
        let closing = lock(&open).make_room(client, limits);
        // Each is waited for, so its descriptor is free before the next
        // connection is taken.
        for task in closing {
            task.abort();
            let _ = task.await;
        }
        let answered = Arc::new(AtomicBool::new(false));
        let mut now_open = lock(&open);
        let id = now_open.next_id();
        let leaving = Leaving {
            id,
            open: Arc::clone(&open),
        };
        let task = tokio::spawn(connection(
            http.clone(),
            stream,
            respond.clone(),
            Arc::clone(&answered),
            leaving,
        ));
        now_open.admit(id, client, answered, task);
    }
}

/// Whom a connection from `ip` counts against for the cap per address: an
/// IPv4 address, or an IPv6 /64, the least a network hands one host, which
/// can take any address in it at will.
fn client_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                IpAddr::from(segments)
            }
        },
        v4 => v4,
    }
}

/// Serves one connection until it ends; `answered` is set at its first
/// request.
async fn connection<R>(
    http: http1::Builder,
    stream: TcpStream,
    respond: R,
    answered: Arc<AtomicBool>,
    _leaving: Leaving,
) where
    R: Fn(&Request<Incoming>) -> Response<Full<Bytes>> + Send + 'static,
{
    let service = service_fn(move |request| {
        answered.store(true, Ordering::Relaxed);
        let answer = respond(&request);
        async move { Ok::<_, Infallible>(answer) }
    });
    if let Err(err) = http.serve_connection(TokioIo::new(stream), service).await {
        tracing::debug!("an HTTP connection ended: {err}");
    }
}

/// Takes a connection off the open ones when its task ends, however it
/// ends (its own end, or closed to make room).
struct Leaving {
    id: u64,
    open: Arc<Mutex<Open<JoinHandle<()>>>>,
}

impl Drop for Leaving {
    fn drop(&mut self) {
        lock(&self.open).by_age.remove(&self.id);
    }
}

fn lock<T>(open: &Mutex<T>) -> MutexGuard<'_, T> {
    open.lock().unwrap_or_else(|p| p.into_inner())
}

/// The open connections, oldest first, each with what closes it (`T`).
struct Open<T> {
    next: u64,
    by_age: BTreeMap<u64, Admitted<T>>,
}

impl<T> Default for Open<T> {
    fn default() -> Open<T> {
        Open {
            next: 0,
            by_age: BTreeMap::new(),
        }
    }
}

/// One open connection.
struct Admitted<T> {
    address: IpAddr,
    /// Whether it has sent a whole request yet.
    answered: Arc<AtomicBool>,
    closer: T,
}

impl<T> Open<T> {
    /// The number of the next connection: numbers only grow, so they order
    /// the connections by age.
    fn next_id(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    fn admit(&mut self, id: u64, address: IpAddr, answered: Arc<AtomicBool>, closer: T) {
        let admitted = Admitted {
            address,
            answered,
            closer,
        };
        self.by_age.insert(id, admitted);
    }

    /// Takes off the connections that must close for one more from
    /// `address` to keep within `limits`, and returns what closes them.
    fn make_room(&mut self, address: IpAddr, limits: Limits) -> Vec<T> {
        let mut closing = Vec::new();
        let same = |a: &Admitted<T>| a.address == address;
        while self.by_age.values().filter(|a| same(a)).count() >= limits.per_address
            && let Some(closer) = self.take_oldest(same)
        {
            closing.push(closer);
        }
        while self.by_age.len() >= limits.connections
            && let Some(closer) = self.take_oldest(|_| true)
        {
            closing.push(closer);
        }
        closing
    }

    /// Takes off the oldest connection of those `among` admits that has not
    /// been answered, else the oldest of them.
    fn take_oldest(&mut self, among: impl Fn(&Admitted<T>) -> bool) -> Option<T> {
        let oldest = |unanswered: bool| {
            self.by_age
                .iter()
                .find(|(_, a)| among(a) && !(unanswered && a.answered.load(Ordering::Relaxed)))
                .map(|(id, _)| *id)
        };
        let id = oldest(true).or_else(|| oldest(false))?;
        self.by_age.remove(&id).map(|a| a.closer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    /// Open connections numbered 1, 2, ... from the addresses given, each
    /// closed by its own number; answered where `answered` says.
    fn open(connections: &[(u8, bool)]) -> Open<u64> {
        let mut open = Open::default();
        for &(last, answered) in connections {
            let id = open.next_id();
            open.admit(id, address(last), Arc::new(AtomicBool::new(answered)), id);
        }
        open
    }

    const LIMITS: Limits = Limits {
        connections: 4,
        per_address: 2,
    };

    #[test]
    fn the_caps_leave_descriptors_for_zookeeper() {
        let limits = |descriptors| Limits::for_descriptors(descriptors);
        assert_eq!(
            limits(None),
            Limits {
                connections: 256,
                per_address: 16
            }
        );
        assert_eq!(limits(Some(1024)).connections, 256);
        assert_eq!(
            limits(Some(256)),
            Limits {
                connections: 192,
                per_address: 16
            }
        );
        assert_eq!(
            limits(Some(70)),
            Limits {
                connections: 6,
                per_address: 6
            }
        );
        assert_eq!(
            limits(Some(10)),
            Limits {
                connections: 1,
                per_address: 1
            }
        );
    }

    #[test]
    fn an_ipv6_64_counts_as_one_address() {
        let v6 = |text: &str| client_of(text.parse().expect("an address"));
        assert_eq!(v6("2001:db8:1:2:aaaa::1"), v6("2001:db8:1:2:bbbb::2"));
        assert_ne!(v6("2001:db8:1:2::1"), v6("2001:db8:1:3::1"));
        let v4 = IpAddr::from([192, 0, 2, 7]);
        assert_eq!((v6("::ffff:192.0.2.7"), v6("192.0.2.7")), (v4, v4));
    }

    #[test]
    fn below_the_caps_nothing_closes() {
        let mut open = open(&[(1, false), (2, false), (3, false)]);
        assert!(open.make_room(address(4), LIMITS).is_empty());
    }

    #[test]
    fn an_address_at_its_cap_loses_its_oldest_unanswered_connection() {
        let mut open = open(&[(1, true), (2, false), (1, false)]);
        assert_eq!(open.make_room(address(1), LIMITS), [3]);
        assert_eq!(open.by_age.keys().copied().collect::<Vec<_>>(), [1, 2]);
        let mut answered = self::open(&[(1, true), (1, true)]);
        assert_eq!(answered.make_room(address(1), LIMITS), [1]);
    }

    #[test]
    fn at_the_cap_in_all_the_oldest_unanswered_connection_goes() {
        let mut open = open(&[(1, true), (2, true), (3, false), (4, false)]);
        assert_eq!(open.make_room(address(5), LIMITS), [3]);
        let mut answered = self::open(&[(1, true), (2, true), (3, true), (4, true)]);
        assert_eq!(answered.make_room(address(5), LIMITS), [1]);
    }
}
