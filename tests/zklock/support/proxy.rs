//! A fault-injecting TCP proxy between a client and one ZooKeeper server, so
//! fault tests can break a connection in exactly the way they need, without
//! root: [`FaultProxy`].
//!
//! Modes, switchable at any time with [`FaultProxy::set_mode`]:
//!
//! - [`Mode::Pass`]: bytes flow both ways.
//! - [`Mode::Freeze`]: bytes are held in both directions (neither read nor
//!   written), connections stay open, new connections are accepted and held
//!   too: a hung network. Back to `Pass`, everything held flows on.
//! - [`Mode::Cut`]: every connection is reset (RST both ways), and new ones
//!   are reset as soon as they are accepted, until the mode changes.
//! - [`Mode::DropAfter`]: bytes flow until the client sends a request that
//!   matches the [`Trigger`]; that request (and nothing after it) is
//!   forwarded, the server's reply is swallowed, and once the server has
//!   answered (so the request certainly took effect) the connection is reset.
//!   The mode then becomes the trigger's `then` (`Pass` or `Cut`). What was
//!   dropped is recorded ([`FaultProxy::wait_for_drop`]).
//! - [`Mode::Forge`]: a hostile server. Every request of the given types is
//!   answered at once by a reply the proxy forges ([`Forgery`]) and is not
//!   forwarded, so the forgery is its only answer and the connection can
//!   go on; the other requests flow, whole frames at a time.
//!
//! Apart from the mode, [`FaultProxy::hold_four_letter_words`] holds the
//! connections that ask a four-letter word (`cons`, `wchc`, ...) rather
//! than for a session: a survey of the members that is slow to come back;
//! and [`FaultProxy::delay_replies`] holds every reply after the handshake
//! for a while before it goes on: a server slow to answer;
//! [`FaultProxy::slow_handshakes`] holds the server's answer to the next
//! handshakes: a server slow to take connections.
//!
//! Dropping the proxy stops it and resets every connection.
//!
//! ZooKeeper's framing ([`ClientFramer`], [`ServerFramer`]): every message is
//! a 4-byte big-endian length and a body. The client's first message is the
//! ConnectRequest and the server's first the ConnectResponse; after them a
//! request starts with `xid: i32, type: i32` (most then carry a path, a
//! length-prefixed string) and a reply with `xid: i32, zxid: i64, err: i32`.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::cmd::TestEnv;

/// ZooKeeper request types (`ZooDefs.OpCode`) the tests trigger on.
pub mod op {
    pub const CREATE: i32 = 1;
    pub const DELETE: i32 = 2;
    pub const EXISTS: i32 = 3;
    pub const GET_DATA: i32 = 4;
    pub const SET_DATA: i32 = 5;
    pub const SET_ACL: i32 = 7;
    pub const GET_CHILDREN: i32 = 8;
    pub const SYNC: i32 = 9;
    pub const CHECK: i32 = 13;
    pub const PING: i32 = 11;
    pub const GET_CHILDREN2: i32 = 12;
    pub const MULTI: i32 = 14;
    pub const CREATE2: i32 = 15;
    pub const RECONFIG: i32 = 16;
    pub const CREATE_CONTAINER: i32 = 19;
    pub const DELETE_CONTAINER: i32 = 20;
    pub const CREATE_TTL: i32 = 21;
    pub const MULTI_READ: i32 = 22;
    /// A persistent watch (3.6 and later).
    pub const ADD_WATCH: i32 = 106;
    /// Every request that creates a node.
    pub const CREATE_LIKE: &[i32] = &[CREATE, CREATE2, CREATE_CONTAINER, CREATE_TTL];
    /// Every request that changes the tree (a multi is a transaction of
    /// writes; reads go together in a multi-read).
    pub const WRITES: &[i32] = &[
        CREATE,
        DELETE,
        SET_DATA,
        SET_ACL,
        MULTI,
        CREATE2,
        RECONFIG,
        CREATE_CONTAINER,
        DELETE_CONTAINER,
        CREATE_TTL,
    ];

    /// True for the request types whose body starts with a path.
    pub fn has_path(op: i32) -> bool {
        matches!(
            op,
            CREATE
                | DELETE
                | EXISTS
                | GET_DATA
                | SET_DATA
                | GET_CHILDREN
                | GET_CHILDREN2
                | CREATE2
                | CREATE_CONTAINER
                | CREATE_TTL
                | SYNC
        )
    }
}

/// One message the client sent, as the framer saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientMessage {
    /// The first message of a connection: whether it asks for a session
    /// a server in read-only mode may grant.
    Connect { read_only: bool },
    /// A request: its xid, type and, for the types that have one, its path;
    /// for a multi-read, the path of each of its reads, and for a multi
    /// transaction those of its deletes, data writes and checks, in order.
    Request {
        xid: i32,
        op: i32,
        path: Option<String>,
        multi_paths: Vec<String>,
    },
}

/// One message the server sent, as the framer saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerMessage {
    /// The first message of a connection.
    Connected,
    /// A reply (or, with xid -1, a watch notification).
    Reply { xid: i32, zxid: i64, err: i32 },
}

/// Splits a byte stream into length-prefixed frames. `push` returns, for each
/// frame completed by the new bytes, the offset in those bytes just past the
/// frame's end, and the frame's body.
#[derive(Debug, Default)]
struct Frames {
    partial: Vec<u8>,
}

impl Frames {
    fn push(&mut self, bytes: &[u8]) -> Vec<(usize, Vec<u8>)> {
        let mut done = Vec::new();
        for (i, &byte) in bytes.iter().enumerate() {
            self.partial.push(byte);
            if self.partial.len() >= 4 {
                let len = i32::from_be_bytes(self.partial[..4].try_into().expect("4 bytes"));
                let len = usize::try_from(len.max(0)).expect("non-negative");
                if self.partial.len() == 4 + len {
                    done.push((i + 1, self.partial.split_off(4)));
                    self.partial.clear();
                }
            }
        }
        done
    }
}

fn be_i32(body: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(body.get(at..at + 4)?.try_into().ok()?))
}

fn be_i64(body: &[u8], at: usize) -> Option<i64> {
    Some(i64::from_be_bytes(body.get(at..at + 8)?.try_into().ok()?))
}

/// The length-prefixed string at `at` in `body`, and the offset past it.
fn string_at(body: &[u8], at: usize) -> Option<(String, usize)> {
    let len = usize::try_from(be_i32(body, at)?).ok()?;
    let bytes = body.get(at + 4..at + 4 + len)?;
    Some((String::from_utf8_lossy(bytes).into_owned(), at + 4 + len))
}

/// The paths of a multi-read's reads: after the xid and type, each read is
/// a header (type, done flag, error) and its path and watch flag, until a
/// header marked done.
fn multi_read_paths(body: &[u8]) -> Vec<String> {
    let mut paths = Vec::new();
    let mut at = 8;
    while let (Some(read), Some(&0)) = (be_i32(body, at), body.get(at + 4)) {
        if read != op::GET_CHILDREN && read != op::GET_DATA {
            break;
        }
        let Some((path, past)) = string_at(body, at + 9) else {
            break;
        };
        paths.push(path);
        at = past + 1;
    }
    paths
}

/// The paths of a multi transaction's deletes, data writes and checks, in
/// order, up to its first operation of another type (a create, whose record
/// is longer): enough to tell the multi that deletes a node and writes its
/// directory's end record. Each operation is a MultiHeader (type, done,
/// err) and its request, whose path comes first.
fn multi_write_paths(body: &[u8]) -> Vec<String> {
    let mut paths = Vec::new();
    let mut at = 8;
    while let (Some(kind), Some(&0)) = (be_i32(body, at), body.get(at + 4)) {
        let Some((path, past)) = string_at(body, at + 9) else {
            break;
        };
        let next = match kind {
            // path, version
            op::DELETE | op::CHECK => past + 4,
            // path, data, version
            op::SET_DATA => match be_i32(body, past).and_then(|len| usize::try_from(len).ok()) {
                Some(len) => past + 4 + len + 4,
                None => past + 4 + 4,
            },
            _ => break,
        };
        paths.push(path);
        at = next;
    }
    paths
}

/// The `readOnly` flag that ends a ConnectRequest (protocol version,
/// last zxid seen, timeout, session id, password, then the flag); false
/// when an old client leaves it out.
fn connect_asks_read_only(body: &[u8]) -> bool {
    let Some(password) = be_i32(body, 24).and_then(|len| usize::try_from(len).ok()) else {
        return false;
    };
    body.get(28 + password) == Some(&1)
}

/// The framing of the client→server direction.
#[derive(Debug, Default)]
pub struct ClientFramer {
    frames: Frames,
    connected: bool,
}

impl ClientFramer {
    pub fn new() -> ClientFramer {
        ClientFramer::default()
    }

    /// Feeds bytes in stream order; returns each message they complete, with
    /// the offset in `bytes` just past its end.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<(usize, ClientMessage)> {
        self.frames
            .push(bytes)
            .into_iter()
            .map(|(end, body)| {
                if !self.connected {
                    self.connected = true;
                    return (
                        end,
                        ClientMessage::Connect {
                            read_only: connect_asks_read_only(&body),
                        },
                    );
                }
                let xid = be_i32(&body, 0).unwrap_or(0);
                let op = be_i32(&body, 4).unwrap_or(0);
                let path = if op::has_path(op) {
                    string_at(&body, 8).map(|(path, _)| path)
                } else {
                    None
                };
                let multi_paths = match op {
                    op::MULTI_READ => multi_read_paths(&body),
                    op::MULTI => multi_write_paths(&body),
                    _ => Vec::new(),
                };
                let request = ClientMessage::Request {
                    xid,
                    op,
                    path,
                    multi_paths,
                };
                (end, request)
            })
            .collect()
    }
}

/// The framing of the server→client direction.
#[derive(Debug, Default)]
pub struct ServerFramer {
    frames: Frames,
    connected: bool,
}

impl ServerFramer {
    pub fn new() -> ServerFramer {
        ServerFramer::default()
    }

    /// True when every frame fed so far is complete.
    pub fn at_boundary(&self) -> bool {
        self.frames.partial.is_empty()
    }

    /// Feeds bytes in stream order; returns each message they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<ServerMessage> {
        self.frames
            .push(bytes)
            .into_iter()
            .map(|(_, body)| {
                if !self.connected {
                    self.connected = true;
                    return ServerMessage::Connected;
                }
                ServerMessage::Reply {
                    xid: be_i32(&body, 0).unwrap_or(0),
                    zxid: be_i64(&body, 4).unwrap_or(0),
                    err: be_i32(&body, 12).unwrap_or(0),
                }
            })
            .collect()
    }
}

/// Which request [`Mode::DropAfter`] waits for, and what comes after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trigger {
    /// Request types that match (e.g. [`op::CREATE_LIKE`]).
    pub ops: Vec<i32>,
    /// If set, the request's path must contain this.
    pub path_contains: Option<String>,
    /// The mode once the connection is cut: `Pass` (the client reconnects at
    /// once) or `Cut` (it stays cut off until the test says otherwise).
    pub then: Box<Mode>,
}

impl Trigger {
    /// The next request of one of these types; then back to `Pass`.
    pub fn on(ops: &[i32]) -> Trigger {
        Trigger {
            ops: ops.to_vec(),
            path_contains: None,
            then: Box::new(Mode::Pass),
        }
    }

    /// Only requests whose path contains `text`.
    pub fn path_contains(mut self, text: &str) -> Trigger {
        self.path_contains = Some(text.to_owned());
        self
    }

    /// Fires again on each of the next `times` matching requests, one cut
    /// for each, before `then`: a request that loses its connection every
    /// time it is sent. Comes after [`Trigger::then`], which it keeps for
    /// the last cut.
    pub fn again(self, times: usize) -> Trigger {
        (0..times).fold(self, |inner, _| Trigger {
            then: Box::new(Mode::DropAfter(inner.clone())),
            ..inner
        })
    }

    /// After the cut, stay in `mode` instead of `Pass`.
    pub fn then(mut self, mode: Mode) -> Trigger {
        self.then = Box::new(mode);
        self
    }

    /// True when `message` fires this trigger.
    pub fn matches(&self, message: &ClientMessage) -> bool {
        match message {
            ClientMessage::Connect { .. } => false,
            ClientMessage::Request {
                op,
                path,
                multi_paths,
                ..
            } => {
                self.ops.contains(op)
                    && match &self.path_contains {
                        None => true,
                        Some(text) => path.iter().chain(multi_paths).any(|p| p.contains(text)),
                    }
            }
        }
    }
}

/// What the proxy does with bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Pass,
    Freeze,
    Cut,
    DropAfter(Trigger),
    /// Answer every request of these types with this forgery.
    Forge(Vec<i32>, Forgery),
}

/// A reply no honest server sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forgery {
    /// A listing (or, for a multi-read, its first result, a listing) that
    /// announces `i32::MAX` children and carries none.
    HugeCount,
    /// A frame that announces `i32::MAX` bytes, followed by [`FLOOD`] zeros
    /// (or fewer, if the client hangs up first); then the connection closes.
    HugeFrame,
    /// A whole reply of [`OVERSIZED`] bytes, just past the most a client
    /// keeps: a success header, then zeros. The connection goes on.
    Oversized,
    /// [`Forgery::Oversized`] for a multi-read of more than one read; any
    /// other request goes on to the server.
    OversizedBatch,
    /// A frame that announces a negative length.
    NegativeLength,
    /// A multi-read answer that ends before its first result.
    EmptyMulti,
    /// A multi-read answer with one result fewer than the reads it answers,
    /// each "no node".
    MultiShort,
    /// A multi-read answer with one result more than the reads it answers,
    /// each "no node".
    MultiLong,
}

/// The body of a [`Forgery::Oversized`] reply: one byte past the 64 MiB a
/// client keeps of a reply.
pub const OVERSIZED: usize = (64 << 20) + 1;

/// ZooKeeper's "no node" error code.
const NO_NODE: i32 = -101;

/// ZooKeeper's error code for a request the server does not implement.
pub const UNIMPLEMENTED: i32 = -6;

/// A multi-read result header: type, done, error.
fn multi_header(kind: i32, done: bool, err: i32) -> Vec<u8> {
    let mut header = kind.to_be_bytes().to_vec();
    header.push(u8::from(done));
    header.extend(err.to_be_bytes());
    header
}

/// How many reads the multi-read request `body` carries: each is a header,
/// a path and a watch flag, up to a header marked done.
fn reads_in_multi(body: &[u8]) -> usize {
    let mut at = 8;
    let mut reads = 0;
    while body.get(at + 4) == Some(&0) {
        let Some(len) = be_i32(body, at + 9).and_then(|len| usize::try_from(len).ok()) else {
            break;
        };
        at += 9 + 4 + len + 1;
        reads += 1;
    }
    reads
}

impl Forgery {
    /// True when this forgery answers the request whose body (after its
    /// length) is `request`, among those of the types it is set on.
    pub fn answers(self, request: &[u8]) -> bool {
        self != Forgery::OversizedBatch || reads_in_multi(request) > 1
    }

    /// True when the forged frame is followed by [`OVERSIZED`] bytes, less
    /// the reply header it carries.
    fn is_oversized(self) -> bool {
        matches!(self, Forgery::Oversized | Forgery::OversizedBatch)
    }

    /// The forged frame answering the request whose body (after its length)
    /// is `request`. An [`Forgery::Oversized`] reply is its header alone:
    /// [`write_zeros`] sends the rest.
    pub fn frame(self, request: &[u8]) -> Vec<u8> {
        let xid = be_i32(request, 0).unwrap_or(0);
        let op = be_i32(request, 4).unwrap_or(0);
        let mut body = xid.to_be_bytes().to_vec();
        body.extend(0i64.to_be_bytes());
        body.extend(0i32.to_be_bytes());
        let no_nodes = |results: usize| {
            let mut answer = Vec::new();
            for _ in 0..results {
                answer.extend(multi_header(-1, false, NO_NODE));
                answer.extend(NO_NODE.to_be_bytes());
            }
            answer.extend(multi_header(-1, true, -1));
            answer
        };
        let announced = match self {
            Forgery::HugeFrame => i32::MAX,
            Forgery::NegativeLength => -1,
            Forgery::Oversized | Forgery::OversizedBatch => {
                i32::try_from(OVERSIZED).expect("a 64 MiB frame")
            }
            Forgery::HugeCount => {
                if op == op::MULTI_READ {
                    body.extend(multi_header(op::GET_CHILDREN, false, 0));
                }
                body.extend(i32::MAX.to_be_bytes());
                i32::try_from(body.len()).expect("a small frame")
            }
            Forgery::EmptyMulti => {
                body.extend(multi_header(-1, true, -1));
                i32::try_from(body.len()).expect("a small frame")
            }
            Forgery::MultiShort => {
                body.extend(no_nodes(reads_in_multi(request).saturating_sub(1)));
                i32::try_from(body.len()).expect("a small frame")
            }
            Forgery::MultiLong => {
                body.extend(no_nodes(reads_in_multi(request) + 1));
                i32::try_from(body.len()).expect("a small frame")
            }
        };
        let mut frame = announced.to_be_bytes().to_vec();
        frame.extend(body);
        frame
    }
}

/// A request forwarded by [`Mode::DropAfter`] whose reply never reached the
/// client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dropped {
    pub xid: i32,
    pub op: i32,
    pub path: Option<String>,
    /// The server's reply: `(zxid, err)`; `None` if it did not answer within
    /// [`REPLY_WAIT`] (then the connection was reset anyway).
    pub reply: Option<(i64, i32)>,
}

/// The most bytes of a [`Forgery::HugeFrame`] sent on one connection.
pub const FLOOD: u64 = 128 << 20;

/// How long a dropped request's reply is waited for before the reset.
pub const REPLY_WAIT: Duration = Duration::from_secs(5);
/// How often blocked pumps look at the mode again.
const POLL: Duration = Duration::from_millis(10);

struct Shared {
    upstream: SocketAddr,
    state: Mutex<State>,
    changed: Condvar,
    stopping: AtomicBool,
    /// Bytes written to clients so far: it grows when a client hears from
    /// the server.
    to_clients: AtomicU64,
}

#[derive(Default)]
struct State {
    mode: Option<Mode>,
    conns: Vec<Arc<Conn>>,
    dropped: Vec<Dropped>,
    accepted: usize,
    /// A [`Mode::DropAfter`] trigger has fired and its connection is being
    /// cut: no other request fires it.
    firing: bool,
    /// Every message clients sent, in the order the proxy read them, with
    /// when it read each.
    sent: Vec<(Instant, ClientMessage)>,
    /// The xid and error code of every reply the server sent.
    answers: Vec<(i32, i32)>,
    /// How long each piece of replies waits before it goes on to the client.
    delay: Duration,
    /// How many handshakes are still to be held back, and for how long each.
    slow_handshakes: (usize, Duration),
    /// Connections that ask a four-letter word wait while this is set.
    holding_words: bool,
    /// How many connections have asked a four-letter word so far.
    words_asked: usize,
}

/// One proxied connection.
struct Conn {
    client: TcpStream,
    upstream: TcpStream,
    dead: AtomicBool,
    /// Set while a dropped request's reply is awaited: the xid, and whether
    /// the reply came (with its zxid and error).
    gate: Mutex<Gate>,
    gate_changed: Condvar,
}

#[derive(Default)]
struct Gate {
    swallow: Option<i32>,
    reply: Option<(i64, i32)>,
    /// The client has been sent part of a server frame: nothing forged may
    /// go in until the rest has.
    mid_frame: bool,
}

impl Conn {
    fn is_dead(&self) -> bool {
        self.dead.load(Ordering::SeqCst)
    }

    /// Resets both sides at once (RST, not FIN).
    fn reset(&self) {
        self.dead.store(true, Ordering::SeqCst);
        reset(&self.client);
        reset(&self.upstream);
    }

    /// Closes both sides in order (FIN): one side went away.
    fn close(&self) {
        self.dead.store(true, Ordering::SeqCst);
        let _ = self.client.shutdown(Shutdown::Both);
        let _ = self.upstream.shutdown(Shutdown::Both);
    }
}

/// Resets a TCP connection now, even while other handles of the socket are
/// open: SO_LINGER 0, then a `connect(AF_UNSPEC)`, which makes Linux send an
/// RST and disconnect the socket.
fn reset(stream: &TcpStream) {
    let fd = stream.as_raw_fd();
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    let unspec = libc::sockaddr {
        sa_family: libc::AF_UNSPEC as libc::sa_family_t,
        sa_data: [0; 14],
    };
    // SAFETY: plain socket calls on a descriptor we own, with valid pointers
    // and sizes.
    let disconnected = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            size_of::<libc::linger>() as libc::socklen_t,
        );
        libc::connect(fd, &unspec, size_of::<libc::sockaddr>() as libc::socklen_t) == 0
    };
    if !disconnected {
        let _ = stream.shutdown(Shutdown::Both);
    }
}

/// A TCP proxy on a free loopback port in front of one ZooKeeper server.
pub struct FaultProxy {
    port: u16,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl FaultProxy {
    /// A proxy in [`Mode::Pass`] in front of `upstream` (`host:port`).
    pub fn start(upstream: &str) -> FaultProxy {
        let upstream: SocketAddr = upstream
            .parse()
            .unwrap_or_else(|e| panic!("bad upstream address {upstream:?}: {e}"));
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy port");
        let port = listener.local_addr().expect("proxy address").port();
        let shared = Arc::new(Shared {
            upstream,
            state: Mutex::new(State {
                mode: Some(Mode::Pass),
                ..State::default()
            }),
            changed: Condvar::new(),
            stopping: AtomicBool::new(false),
            to_clients: AtomicU64::new(0),
        });
        let acceptor = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name(format!("proxy-{port}"))
                .spawn(move || accept_loop(&listener, &shared))
                .expect("spawn the proxy thread")
        };
        FaultProxy {
            port,
            shared,
            acceptor: Some(acceptor),
        }
    }

    /// The proxy's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:PORT`, the address clients connect to.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The proxy's address with the test's chroot: the `-H` for zklock.
    pub fn hosts(&self, env: &TestEnv) -> String {
        format!("{}{}", self.address(), env.chroot())
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.state().mode.clone().expect("a mode")
    }

    /// Switches the mode. `Cut` resets every open connection at once.
    pub fn set_mode(&self, mode: Mode) {
        let mut state = self.state();
        if mode == Mode::Cut {
            for conn in state.conns.drain(..) {
                conn.reset();
            }
        }
        state.mode = Some(mode);
        self.shared.changed.notify_all();
    }

    /// [`Mode::Pass`]: heal.
    pub fn pass(&self) {
        self.set_mode(Mode::Pass);
    }

    /// [`Mode::Freeze`].
    pub fn freeze(&self) {
        self.set_mode(Mode::Freeze);
    }

    /// [`Mode::Cut`].
    pub fn cut(&self) {
        self.set_mode(Mode::Cut);
    }

    /// [`Mode::DropAfter`] with `trigger`.
    pub fn drop_after(&self, trigger: Trigger) {
        self.set_mode(Mode::DropAfter(trigger));
    }

    /// Waits until a request has been dropped and returns the first.
    pub fn wait_for_drop(&self, timeout: Duration) -> Dropped {
        let start = Instant::now();
        let mut state = self.state();
        loop {
            if let Some(dropped) = state.dropped.first() {
                return dropped.clone();
            }
            if start.elapsed() > timeout {
                panic!("timed out after {timeout:?} waiting for the proxy to drop a request");
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, POLL)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Bytes the server sent that reached clients so far.
    pub fn bytes_to_clients(&self) -> u64 {
        self.shared.to_clients.load(Ordering::SeqCst)
    }

    /// Waits until a client hears from the server again (more bytes reach
    /// clients than now): after a heal, proof that a connection works.
    pub fn wait_for_traffic(&self, timeout: Duration) {
        let before = self.bytes_to_clients();
        super::wait_until(
            timeout,
            "a client hears from the server through the proxy",
            || self.bytes_to_clients() > before,
        );
    }

    /// While `hold` is true, a connection whose first bytes are a
    /// four-letter word sends them on only once it is false again.
    pub fn hold_four_letter_words(&self, hold: bool) {
        self.state().holding_words = hold;
        self.shared.changed.notify_all();
    }

    /// How many connections have asked a four-letter word so far, held or
    /// not.
    pub fn four_letter_words_asked(&self) -> usize {
        self.state().words_asked
    }

    /// Every message clients sent through the proxy so far, in order.
    pub fn client_messages(&self) -> Vec<ClientMessage> {
        self.state()
            .sent
            .iter()
            .map(|(_, message)| message.clone())
            .collect()
    }

    /// When the proxy read the first message clients sent that `picks`,
    /// if one came yet.
    pub fn first_sent(&self, picks: impl Fn(&ClientMessage) -> bool) -> Option<Instant> {
        self.times_sent(picks).first().copied()
    }

    /// When the proxy read each message clients sent that `picks`, in order.
    pub fn times_sent(&self, picks: impl Fn(&ClientMessage) -> bool) -> Vec<Instant> {
        self.state()
            .sent
            .iter()
            .filter(|(_, message)| picks(message))
            .map(|&(at, _)| at)
            .collect()
    }

    /// From now on, each piece of replies the server sends after the
    /// handshake waits `delay` before it goes on: every answer comes that
    /// much later, as from a server slow to read, while the requests reach
    /// the proxy (and [`FaultProxy::first_sent`]) when they are sent.
    pub fn delay_replies(&self, delay: Duration) {
        self.state().delay = delay;
    }

    /// Holds the server's answer to each of the next `count` handshakes for
    /// `delay` before it goes on (a client that gives up on a silent
    /// connection meanwhile tries again, and that try counts too).
    pub fn slow_handshakes(&self, count: usize, delay: Duration) {
        self.state().slow_handshakes = (count, delay);
    }

    /// How many requests of the types `ops` clients sent so far.
    pub fn requests_of(&self, ops: &[i32]) -> usize {
        self.state()
            .sent
            .iter()
            .filter(|(_, m)| matches!(m, ClientMessage::Request { op, .. } if ops.contains(op)))
            .count()
    }

    /// How many requests of the types `ops` the server answered with the
    /// error `err`, each matched to its answer by xid: for a proxy that one
    /// client's session goes through, whose xids never repeat.
    pub fn answered_with(&self, ops: &[i32], err: i32) -> usize {
        let state = self.state();
        let failed: Vec<i32> = state
            .answers
            .iter()
            .filter(|&&(_, answer)| answer == err)
            .map(|&(xid, _)| xid)
            .collect();
        state
            .sent
            .iter()
            .filter(|(_, m)| {
                matches!(m, ClientMessage::Request { xid, op, .. }
                    if ops.contains(op) && failed.contains(xid))
            })
            .count()
    }

    /// How many connections the proxy accepted so far.
    pub fn accepted(&self) -> usize {
        self.state().accepted
    }

    /// How many proxied connections are open now.
    pub fn open_connections(&self) -> usize {
        let mut state = self.state();
        state.conns.retain(|c| !c.is_dead());
        state.conns.len()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.shared.state)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        for conn in lock(&self.shared.state).conns.drain(..) {
            conn.reset();
        }
        self.shared.changed.notify_all();
        // Wake the acceptor.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for client in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        lock(&shared.state).accepted += 1;
        if lock(&shared.state).mode == Some(Mode::Cut) {
            reset(&client);
            continue;
        }
        let upstream = match TcpStream::connect_timeout(&shared.upstream, Duration::from_secs(2)) {
            Ok(upstream) => upstream,
            Err(_) => {
                // The server is down: the client sees its connection reset.
                reset(&client);
                continue;
            }
        };
        let _ = client.set_nodelay(true);
        let _ = upstream.set_nodelay(true);
        for stream in [&client, &upstream] {
            stream
                .set_read_timeout(Some(POLL))
                .expect("set a read timeout");
        }
        let (Ok(client_reader), Ok(upstream_reader)) = (client.try_clone(), upstream.try_clone())
        else {
            continue;
        };
        let conn = Arc::new(Conn {
            client,
            upstream,
            dead: AtomicBool::new(false),
            gate: Mutex::new(Gate::default()),
            gate_changed: Condvar::new(),
        });
        {
            let mut state = lock(&shared.state);
            // The mode may have become Cut meanwhile.
            if state.mode == Some(Mode::Cut) {
                conn.reset();
                continue;
            }
            state.conns.retain(|c| !c.is_dead());
            state.conns.push(conn.clone());
        }
        let (up_shared, up_conn) = (shared.clone(), conn.clone());
        let spawned = std::thread::Builder::new()
            .name("proxy-c2s".into())
            .spawn(move || client_to_server(client_reader, &up_shared, &up_conn));
        let (down_shared, down_conn) = (shared.clone(), conn.clone());
        let spawned_too = std::thread::Builder::new()
            .name("proxy-s2c".into())
            .spawn(move || server_to_client(upstream_reader, &down_shared, &down_conn));
        if spawned.is_err() || spawned_too.is_err() {
            conn.reset();
        }
    }
}

/// What a pump should do with bytes it holds, after waiting out a freeze.
enum Go {
    /// Forward them (the mode, for the client→server pump's trigger).
    Forward(Mode),
    /// The connection is gone (cut, closed, proxy stopping).
    Stop,
}

/// Waits while the proxy is frozen; then says whether to go on.
fn wait_unfrozen(shared: &Shared, conn: &Conn) -> Go {
    let mut state = lock(&shared.state);
    loop {
        if conn.is_dead() || shared.stopping.load(Ordering::SeqCst) {
            return Go::Stop;
        }
        match state.mode.clone().expect("a mode") {
            Mode::Freeze => {
                state = shared
                    .changed
                    .wait_timeout(state, POLL)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
            Mode::Cut => {
                conn.reset();
                return Go::Stop;
            }
            mode => return Go::Forward(mode),
        }
    }
}

/// Reads what is there (waiting at most [`POLL`]): `Some(n)` bytes (0 when
/// nothing came), `None` at EOF or on an error.
fn read_some(mut stream: &TcpStream, buf: &mut [u8]) -> Option<usize> {
    match stream.read(buf) {
        Ok(0) => None,
        Ok(n) => Some(n),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ) =>
        {
            Some(0)
        }
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Some(0),
        Err(_) => None,
    }
}

/// True when a connection's first bytes ask a four-letter word: a
/// ConnectRequest starts with its length, whose first byte is 0.
fn is_four_letter_word(first: &[u8]) -> bool {
    first.len() >= 4 && first[..4].iter().all(u8::is_ascii_lowercase)
}

/// Counts a four-letter word and waits while they are held; false when the
/// connection is gone meanwhile.
fn pass_four_letter_word(shared: &Shared, conn: &Conn) -> bool {
    let mut state = lock(&shared.state);
    state.words_asked += 1;
    shared.changed.notify_all();
    while state.holding_words {
        if conn.is_dead() || shared.stopping.load(Ordering::SeqCst) {
            return false;
        }
        state = shared
            .changed
            .wait_timeout(state, POLL)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
    true
}

fn client_to_server(reader: TcpStream, shared: &Shared, conn: &Conn) {
    let mut framer = ClientFramer::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut first = true;
    // In Forge mode only whole requests go on, so that a forged one can be
    // left out: the start of a request not yet whole waits here.
    let mut held: Vec<u8> = Vec::new();
    loop {
        if matches!(wait_unfrozen(shared, conn), Go::Stop) {
            return;
        }
        let n = match read_some(&reader, &mut buf) {
            Some(0) => continue,
            Some(n) => n,
            None => {
                conn.close();
                return;
            }
        };
        let bytes = &buf[..n];
        if std::mem::take(&mut first)
            && is_four_letter_word(bytes)
            && !pass_four_letter_word(shared, conn)
        {
            return;
        }
        let messages = framer.push(bytes);
        let now = Instant::now();
        lock(&shared.state)
            .sent
            .extend(messages.iter().map(|(_, message)| (now, message.clone())));
        // Bytes read before a freeze are held until it ends.
        let mode = match wait_unfrozen(shared, conn) {
            Go::Stop => return,
            Go::Forward(mode) => mode,
        };
        if let Mode::Forge(ops, forgery) = &mode {
            held.extend_from_slice(bytes);
            let base = held.len() - bytes.len();
            let (mut start, mut onward, mut forged) = (0, Vec::new(), false);
            // Under the gate, as the server's replies are written, so that
            // a forged frame never lands inside one of theirs.
            let mut gate = lock(&conn.gate);
            while gate.mid_frame && !conn.is_dead() {
                gate = conn
                    .gate_changed
                    .wait_timeout(gate, POLL)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
            for (end, message) in &messages {
                let frame = &held[start..base + end];
                start = base + end;
                let ClientMessage::Request { op, .. } = message else {
                    onward.extend_from_slice(frame);
                    continue;
                };
                let request = frame.get(4..).unwrap_or_default();
                if !ops.contains(op) || !forgery.answers(request) {
                    onward.extend_from_slice(frame);
                    continue;
                }
                forged = true;
                let mut client = &conn.client;
                let written = client.write_all(&forgery.frame(request)).is_ok()
                    && (!forgery.is_oversized() || write_zeros(client, OVERSIZED - 16).is_ok());
                if !written {
                    conn.close();
                    return;
                }
            }
            drop(gate);
            held.drain(..start);
            if forged && *forgery == Forgery::HugeFrame {
                flood(&conn.client);
                conn.close();
                return;
            }
            if (&conn.upstream).write_all(&onward).is_err() {
                conn.close();
                return;
            }
            continue;
        }
        if !held.is_empty() {
            // Forge mode ended inside a request: its start goes first.
            if (&conn.upstream).write_all(&held).is_err() {
                conn.close();
                return;
            }
            held.clear();
        }
        if let Mode::DropAfter(trigger) = mode
            && let Some((end, ClientMessage::Request { xid, op, path, .. })) =
                messages.iter().find(|(_, m)| trigger.matches(m)).cloned()
        {
            // Claim the trigger: only one request, on one connection, fires it.
            {
                let mut state = lock(&shared.state);
                if state.firing || state.mode != Some(Mode::DropAfter(trigger.clone())) {
                    drop(state);
                    if (&conn.upstream).write_all(bytes).is_err() {
                        conn.close();
                        return;
                    }
                    continue;
                }
                state.firing = true;
            }
            lock(&conn.gate).swallow = Some(xid);
            let forwarded = (&conn.upstream).write_all(&bytes[..end]).is_ok();
            let reply = if forwarded {
                let start = Instant::now();
                let mut gate = lock(&conn.gate);
                while gate.reply.is_none() && start.elapsed() < REPLY_WAIT && !conn.is_dead() {
                    gate = conn
                        .gate_changed
                        .wait_timeout(gate, POLL)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
                gate.reply
            } else {
                None
            };
            conn.reset();
            let mut state = lock(&shared.state);
            state.firing = false;
            // Unless the test switched modes meanwhile, the trigger's `then`.
            if state.mode == Some(Mode::DropAfter(trigger.clone())) {
                if *trigger.then == Mode::Cut {
                    for other in state.conns.drain(..) {
                        other.reset();
                    }
                }
                state.mode = Some((*trigger.then).clone());
            }
            state.dropped.push(Dropped {
                xid,
                op,
                path,
                reply,
            });
            shared.changed.notify_all();
            return;
        }
        if (&conn.upstream).write_all(bytes).is_err() {
            conn.close();
            return;
        }
    }
}

/// Writes zeros to `client` until a write fails or [`FLOOD`] bytes have
/// gone.
fn flood(client: &TcpStream) {
    // A client that stops reading without hanging up ends the flood too.
    let _ = client.set_write_timeout(Some(REPLY_WAIT));
    let _ = write_zeros(client, usize::try_from(FLOOD).expect("a 128 MiB flood"));
}

/// Writes `count` zeros to `client`, a piece at a time.
fn write_zeros(mut client: &TcpStream, count: usize) -> io::Result<()> {
    let zeros = [0u8; 64 * 1024];
    let mut left = count;
    while left > 0 {
        let piece = left.min(zeros.len());
        client.write_all(&zeros[..piece])?;
        left -= piece;
    }
    Ok(())
}

fn server_to_client(reader: TcpStream, shared: &Shared, conn: &Conn) {
    let mut framer = ServerFramer::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        if matches!(wait_unfrozen(shared, conn), Go::Stop) {
            return;
        }
        let n = match read_some(&reader, &mut buf) {
            Some(0) => continue,
            Some(n) => n,
            None => {
                conn.close();
                return;
            }
        };
        let bytes = &buf[..n];
        let messages = framer.push(bytes);
        let delay = {
            let mut state = lock(&shared.state);
            state
                .answers
                .extend(messages.iter().filter_map(|message| match *message {
                    ServerMessage::Reply { xid, err, .. } => Some((xid, err)),
                    ServerMessage::Connected => None,
                }));
            match state.slow_handshakes {
                (count, delay) if count > 0 && messages.contains(&ServerMessage::Connected) => {
                    state.slow_handshakes = (count - 1, delay);
                    delay
                }
                _ if messages.contains(&ServerMessage::Connected) => Duration::ZERO,
                _ => state.delay,
            }
        };
        std::thread::sleep(delay);
        if matches!(wait_unfrozen(shared, conn), Go::Stop) {
            return;
        }
        // The gate is held while writing, so once a request's reply is to be
        // swallowed, nothing read after that reaches the client.
        let mut gate = lock(&conn.gate);
        if let Some(swallow) = gate.swallow {
            for message in messages {
                if let ServerMessage::Reply { xid, zxid, err } = message
                    && xid == swallow
                {
                    gate.reply = Some((zxid, err));
                    conn.gate_changed.notify_all();
                }
            }
            continue;
        }
        if (&conn.client).write_all(bytes).is_err() {
            drop(gate);
            conn.close();
            return;
        }
        gate.mid_frame = !framer.at_boundary();
        conn.gate_changed.notify_all();
        shared.to_clients.fetch_add(n as u64, Ordering::SeqCst);
    }
}
