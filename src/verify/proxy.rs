//! verify's proxy: every holder reaches the ensemble through it, so that
//! verify can cut a holder off as a partition does (its bytes held, in
//! both directions, no reset), and knows, for every holder, which sessions
//! it was granted, with what timeout, and when its bytes last went on to
//! the server (after which the server cannot expire its session for one
//! session timeout).
//!
//! It listens on 127.0.0.1 only, one port per member of the connect
//! string, and relays a connection only when it comes from a holder that
//! verify started and that runs now. A loopback peer says nothing of who it
//! is, and anyone on the host can connect: another user could otherwise
//! reach the ensemble through verify, or race a holder for a port. So each
//! connection is traced to its process before a byte is relayed: the
//! kernel's table of TCP sockets (`/proc/net/tcp`) gives the inode and
//! owner of the peer's socket, and that inode must be among the open
//! descriptors of one of verify's live holders (verify's unreaped children,
//! whose pids cannot have been given to anyone else). Any other connection
//! is closed at once, unread.
//!
//! ZooKeeper frames every message with a 4-byte length; the server's first
//! one on a connection is the ConnectResponse (protocol version, timeout,
//! session id, password), which is read on its way through and never
//! kept beyond the session id and the timeout.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::procfs;
use crate::sys;

/// The longest ConnectResponse read: a timeout, a session id and a
/// password of 16 bytes take some 40.
const MAX_HANDSHAKE: usize = 256;

/// A session a holder was granted, as the server's answer said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Granted {
    pub session: i64,
    pub timeout_ms: u64,
}

/// The proxy: its ports, and what it knows of each holder's traffic.
pub(crate) struct Proxy {
    shared: Arc<Shared>,
    listeners: Vec<JoinHandle<()>>,
    /// The address each member is reached at, in the connect string's order.
    pub addresses: Vec<SocketAddrV4>,
}

struct Shared {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The live holders by pid: those whose connections are relayed.
    runs_by_pid: HashMap<i32, u64>,
    /// What each run's connections did.
    links: HashMap<u64, Link>,
    /// Every session any holder was granted.
    sessions: std::collections::HashSet<i64>,
    /// Connections closed unrelayed: no holder's.
    refused: u64,
}

/// One run's traffic.
struct Link {
    /// True while the run is cut off.
    cut: watch::Sender<bool>,
    /// When its bytes last went on to a server (monotonic µs).
    last_sent_us: Option<u64>,
    /// Its relays, ended when verify drops the run's connections.
    relays: Vec<tokio::task::AbortHandle>,
    /// The session it was last granted.
    granted: Option<Granted>,
}

impl Link {
    fn new() -> Link {
        Link {
            cut: watch::channel(false).0,
            last_sent_us: None,
            relays: Vec::new(),
            granted: None,
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        for listener in &self.listeners {
            listener.abort();
        }
        for link in self.shared.lock().links.values() {
            for relay in &link.relays {
                relay.abort();
            }
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Proxy {
    /// Listens on a port of 127.0.0.1 for each of `members` (host, port),
    /// relaying to it.
    pub(crate) async fn start(members: &[(String, u16)]) -> std::io::Result<Proxy> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
        });
        let mut listeners = Vec::new();
        let mut addresses = Vec::new();
        for member in members {
            let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
            let SocketAddr::V4(address) = listener.local_addr()? else {
                unreachable!("bound to an IPv4 address");
            };
            tracing::info!(
                event = "proxy_listening",
                address = %address,
                "relaying holders to {}:{} through {address}",
                member.0,
                member.1
            );
            addresses.push(address);
            listeners.push(tokio::spawn(accept(
                listener,
                address,
                member.clone(),
                shared.clone(),
            )));
        }
        Ok(Proxy {
            shared,
            listeners,
            addresses,
        })
    }

    /// Relays the connections of the holder `pid` from now on, as run `run`.
    pub(crate) fn admit(&self, pid: i32, run: u64) {
        let mut state = self.shared.lock();
        state.runs_by_pid.insert(pid, run);
        state.links.entry(run).or_insert_with(Link::new);
    }

    /// Relays no new connection of the holder `pid`: it has been reaped,
    /// and its pid may be another process's soon.
    pub(crate) fn forget(&self, pid: i32) {
        self.shared.lock().runs_by_pid.remove(&pid);
    }

    /// Holds every byte of `run`'s connections, and of those it makes
    /// from now on, in both directions, until [`Proxy::drop_connections`].
    pub(crate) fn cut(&self, run: u64) {
        if let Some(link) = self.shared.lock().links.get(&run) {
            link.cut.send_replace(true);
        }
    }

    /// Lets `run`'s held bytes flow on again.
    pub(crate) fn heal(&self, run: u64) {
        if let Some(link) = self.shared.lock().links.get(&run) {
            link.cut.send_replace(false);
        }
    }

    /// Closes `run`'s connections, whatever they hold.
    pub(crate) fn drop_connections(&self, run: u64) {
        if let Some(link) = self.shared.lock().links.get_mut(&run) {
            for relay in link.relays.drain(..) {
                relay.abort();
            }
        }
    }

    /// When `run`'s bytes last went on to a server (monotonic µs).
    pub(crate) fn last_sent_us(&self, run: u64) -> Option<u64> {
        self.shared
            .lock()
            .links
            .get(&run)
            .and_then(|link| link.last_sent_us)
    }

    /// Whether a session is one some holder was granted, as the proxy will
    /// know it from now on.
    pub(crate) fn holder_sessions(&self) -> impl Fn(i64) -> bool + Send + Sync + 'static {
        let shared = self.shared.clone();
        move |session| shared.lock().sessions.contains(&session)
    }

    /// The session `run`'s holder was last granted.
    pub(crate) fn granted(&self, run: u64) -> Option<Granted> {
        self.shared
            .lock()
            .links
            .get(&run)
            .and_then(|link| link.granted)
    }

    /// How many connections were closed unrelayed.
    pub(crate) fn refused(&self) -> u64 {
        self.shared.lock().refused
    }
}

/// Takes connections on `listener` (at `address`) and relays each of a
/// holder's to `member`.
async fn accept(
    listener: TcpListener,
    address: SocketAddrV4,
    member: (String, u16),
    shared: Arc<Shared>,
) {
    loop {
        let Ok((client, peer)) = listener.accept().await else {
            continue;
        };
        let peer_socket = match peer {
            SocketAddr::V4(peer) => procfs::tcp_socket(peer, address),
            SocketAddr::V6(_) => None,
        };
        // A peer that has hung up already (a holder that connected as it
        // ended): nobody is there to relay to, or to refuse.
        if peer_socket.is_some_and(|socket| !socket.established || socket.inode == 0) {
            continue;
        }
        let Some(run) = peer_socket.and_then(|socket| holder_behind(&shared, socket)) else {
            tracing::warn!("closed a connection from {peer}: no holder of this verify's");
            drop(client);
            shared.lock().refused += 1;
            continue;
        };
        let relay = tokio::spawn(relay(client, member.clone(), run, shared.clone()));
        let mut state = shared.lock();
        match state.links.get_mut(&run) {
            Some(link) => link.relays.push(relay.abort_handle()),
            None => relay.abort(),
        }
    }
}

/// The run of the live holder that holds `socket`, the peer of a
/// connection to the proxy, if one does.
fn holder_behind(shared: &Shared, socket: procfs::TcpSocket) -> Option<u64> {
    if socket.owner != sys::real_uid() {
        return None;
    }
    let state = shared.lock();
    state
        .runs_by_pid
        .iter()
        .find(|(pid, _)| procfs::holds_socket(**pid, socket.inode))
        .map(|(_, run)| *run)
}

/// Relays `client` to `member` until either side closes, holding the
/// bytes while the run is cut.
async fn relay(client: TcpStream, member: (String, u16), run: u64, shared: Arc<Shared>) {
    let Some(mut cut) = shared
        .lock()
        .links
        .get(&run)
        .map(|link| link.cut.subscribe())
    else {
        return;
    };
    // A holder cut off reaches no server: not even a connection is made
    // for it (each would count against the server's connections from
    // this host, and a cut-off client tries again and again).
    if cut.wait_for(|cut| !cut).await.is_err() {
        return;
    }
    let Ok(server) = TcpStream::connect((member.0.as_str(), member.1)).await else {
        // The holder sees its connection close, as if the server refused.
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (client_in, client_out) = client.into_split();
    let (server_in, server_out) = server.into_split();
    let upstream = carry(client_in, server_out, cut.clone(), |_: &[u8]| {
        let mut state = shared.lock();
        if let Some(link) = state.links.get_mut(&run) {
            link.last_sent_us = Some(sys::monotonic_us());
        }
    });
    let mut handshake = Handshake::default();
    let downstream = carry(server_in, client_out, cut, |bytes: &[u8]| {
        if let Some(granted) = handshake.read(bytes) {
            let mut state = shared.lock();
            state.sessions.insert(granted.session);
            if let Some(link) = state.links.get_mut(&run) {
                link.granted = Some(granted);
            }
        }
    });
    tokio::join!(upstream, downstream);
}

/// Copies `from` to `to` until `from` ends, then ends `to`'s side; waits
/// while `cut` is set, before each read and before each write. `seen` is
/// told of each chunk as it goes on, before it is written: a session is
/// known before its holder can act on it, and a send time is never later
/// than the bytes it stands for.
async fn carry(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    mut cut: watch::Receiver<bool>,
    mut seen: impl FnMut(&[u8]),
) {
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        if cut.wait_for(|cut| !cut).await.is_err() {
            return;
        }
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        if cut.wait_for(|cut| !cut).await.is_err() {
            return;
        }
        seen(&buffer[..read]);
        if to.write_all(&buffer[..read]).await.is_err() {
            return;
        }
    }
    let _ = to.shutdown().await;
}

/// The first frame the server sends, gathered as it goes by.
#[derive(Default)]
struct Handshake {
    bytes: Vec<u8>,
    done: bool,
}

impl Handshake {
    /// Takes the next bytes from the server; the session they grant once
    /// the ConnectResponse is whole.
    fn read(&mut self, bytes: &[u8]) -> Option<Granted> {
        if self.done {
            return None;
        }
        let room = MAX_HANDSHAKE.saturating_sub(self.bytes.len());
        self.bytes
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
        let granted = connect_response(&self.bytes);
        self.done = granted.is_some() || self.bytes.len() >= MAX_HANDSHAKE;
        granted
    }
}

/// The timeout and session of a whole ConnectResponse frame at the start of
/// `bytes`: length, protocol version, timeout (ms), session id.
fn connect_response(bytes: &[u8]) -> Option<Granted> {
    let be_i32 = |at: usize| Some(i32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let length = usize::try_from(be_i32(0)?).ok()?;
    if bytes.len() < length.checked_add(4)? || length < 16 {
        return None;
    }
    let timeout_ms = u64::try_from(be_i32(8)?).ok()?;
    let session = i64::from_be_bytes(bytes.get(12..20)?.try_into().ok()?);
    Some(Granted {
        session,
        timeout_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(timeout_ms: i32, session: i64) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend_from_slice(&0i32.to_be_bytes());
        body.extend_from_slice(&timeout_ms.to_be_bytes());
        body.extend_from_slice(&session.to_be_bytes());
        body.extend_from_slice(&16i32.to_be_bytes());
        body.extend_from_slice(&[7u8; 16]);
        body.push(0);
        let mut frame = (body.len() as i32).to_be_bytes().to_vec();
        frame.extend(body);
        frame
    }

    #[test]
    fn the_session_and_timeout_are_read_from_a_connect_response_in_any_pieces() {
        let frame = response(2000, 0x1234_5678_9abc);
        let granted = Granted {
            session: 0x1234_5678_9abc,
            timeout_ms: 2000,
        };
        for cut in 0..frame.len() {
            let mut handshake = Handshake::default();
            let first = handshake.read(&frame[..cut]);
            let second = handshake.read(&frame[cut..]);
            assert_eq!(first.or(second), Some(granted), "cut at {cut}");
            assert_eq!(handshake.read(&frame), None, "read once");
        }
    }

    #[test]
    fn nothing_else_reads_as_a_grant_and_a_flood_is_not_kept() {
        assert_eq!(connect_response(&[]), None);
        assert_eq!(connect_response(&(-1i32).to_be_bytes()), None);
        assert_eq!(connect_response(&response(-5, 1)), None);
        let mut handshake = Handshake::default();
        for _ in 0..100 {
            assert_eq!(handshake.read(&[0xff; 4096]), None);
        }
        assert!(handshake.bytes.len() <= MAX_HANDSHAKE);
    }
}
