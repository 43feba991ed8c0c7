//! The wire limit of one uncontended lock-run-release: what any ZooKeeper
//! client must at least do, spoken directly on the socket with nothing but
//! the standard library and libc, so that it carries no client library's
//! costs (no reactor thread, no ping after the handshake, no second buffer).
//!
//! Usage: `wire_floor HOST:PORT LOCK_DIR COMMAND...`, or
//! `wire_floor --check HOST:PORT NODE` for the limit of `zklock check`.
//!
//! Three round trips, the fewest the job allows:
//!
//! 1. the session handshake (ConnectRequest);
//! 2. create an ephemeral-sequential contender under a protected name (the
//!    `_c_<uuid>-lock-` prefix Curator and zklock use, so a retried create
//!    could be recognised) and list LOCK_DIR, both written at once; the
//!    listing is processed after the create, so it holds our node and shows
//!    whether anything is ahead of it;
//! 3. after COMMAND has run, delete the node and close the session, both
//!    written at once, and read both replies.
//!
//! No owner record, no watch, no heartbeat, no retry: zklock can only be
//! slower.
//!
//! `--check` asks whether NODE exists as fresh as the leader's: the
//! handshake, then a sync, a read of NODE and the close, all written at
//! once (the server answers a session's requests in order, the read after
//! the sync): two round trips. Exits 0 when NODE exists, 1 when not. It measures an uncontended lock only and fails if another
//! contender is ahead. Exits with COMMAND's exit code.
//!
//! The encoding is ZooKeeper's jute: every frame is a 4-byte big-endian
//! length and a body; integers are big-endian, strings and buffers carry a
//! 4-byte length, vectors a 4-byte count.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, ExitCode};
use std::time::Duration;

/// Operation codes of the requests this program sends.
const OP_CREATE: i32 = 1;
const OP_DELETE: i32 = 2;
const OP_GET_DATA: i32 = 4;
const OP_GET_CHILDREN: i32 = 8;
const OP_SYNC: i32 = 9;
/// ZooKeeper's error code for a node that does not exist.
const NO_NODE: i32 = -101;
const OP_CLOSE_SESSION: i32 = -11;
/// Create flags: ephemeral (1) and sequential (2).
const EPHEMERAL_SEQUENTIAL: i32 = 3;
/// Every permission (read, write, create, delete, admin).
const PERMS_ALL: i32 = 31;
const SESSION_TIMEOUT_MS: i32 = 10_000;
/// Digits of the sequence number the server appends.
const SEQUENCE_DIGITS: usize = 10;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, host, node] = args.as_slice()
        && flag == "--check"
    {
        return match check(host, node) {
            Ok(exists) => ExitCode::from(u8::from(!exists)),
            Err(message) => {
                eprintln!("wire_floor: {message}");
                ExitCode::from(2)
            }
        };
    }
    let [host, dir, command @ ..] = args.as_slice() else {
        eprintln!("usage: wire_floor HOST:PORT LOCK_DIR COMMAND...");
        return ExitCode::from(2);
    };
    if command.is_empty() {
        eprintln!("usage: wire_floor HOST:PORT LOCK_DIR COMMAND...");
        return ExitCode::from(2);
    }
    match lock_run_release(host, dir, command) {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("wire_floor: {message}");
            ExitCode::from(2)
        }
    }
}

fn lock_run_release(host: &str, dir: &str, command: &[String]) -> Result<u8, String> {
    let mut session = Session::connect(host)?;
    let prefix = format!("{dir}/_c_{}-lock-", random_uuid()?);
    let mut create = Request::new(1, OP_CREATE);
    create
        .string(&prefix)
        .buffer(b"")
        .int(1) // one ACL: world:anyone, every permission
        .int(PERMS_ALL)
        .string("world")
        .string("anyone")
        .int(EPHEMERAL_SEQUENTIAL);
    let mut list = Request::new(2, OP_GET_CHILDREN);
    list.string(dir).bool(false);
    session.send(&[create, list])?;
    let node = session.reply(1)?.string()?;
    let mut listing = session.reply(2)?;
    let children: Vec<String> = (0..listing.int()?)
        .map(|_| listing.string())
        .collect::<Result<_, _>>()?;
    let mine = &node[node.rfind('/').map_or(0, |slash| slash + 1)..];
    let first = children.iter().min_by_key(|name| sequence(name));
    if first.map(String::as_str) != Some(mine) {
        return Err(format!(
            "{mine} is not first in {dir}: the limit measures an uncontended lock"
        ));
    }
    let status = Command::new(&command[0])
        .args(&command[1..])
        .status()
        .map_err(|e| format!("run {}: {e}", command[0]))?;
    let mut delete = Request::new(3, OP_DELETE);
    delete.string(&node).int(-1);
    session.send(&[delete, Request::new(4, OP_CLOSE_SESSION)])?;
    session.reply(3)?;
    session.reply(4)?;
    Ok(status.code().map_or(1, |code| code as u8))
}

/// Connect, sync, get and close, the last three written at once: whether
/// `node` exists.
fn check(host: &str, node: &str) -> Result<bool, String> {
    let mut session = Session::connect(host)?;
    let dir = &node[..node.rfind('/').unwrap_or(0).max(1)];
    let mut sync = Request::new(1, OP_SYNC);
    sync.string(dir);
    let mut get = Request::new(2, OP_GET_DATA);
    get.string(node).bool(false);
    session.send(&[sync, get, Request::new(3, OP_CLOSE_SESSION)])?;
    session.reply(1)?;
    let exists = match session.reply(2) {
        Ok(_) => true,
        Err(message) if message.ends_with(&format!("error {NO_NODE}")) => false,
        Err(message) => return Err(message),
    };
    session.reply(3)?;
    Ok(exists)
}

/// The sequence suffix of a contender's name (names without one sort last).
fn sequence(name: &str) -> i64 {
    name.len()
        .checked_sub(SEQUENCE_DIGITS)
        .and_then(|start| name.get(start..))
        .and_then(|digits| digits.parse().ok())
        .unwrap_or(i64::MAX)
}

/// A version 4 UUID from the kernel's random source.
fn random_uuid() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    // SAFETY: the buffer is valid for its whole length.
    let got = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if got != bytes.len() as isize {
        return Err("getrandom failed".into());
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

/// One request body: its header (xid, operation) and fields, jute-encoded.
struct Request(Vec<u8>);

impl Request {
    fn new(xid: i32, op: i32) -> Request {
        let mut request = Request(Vec::with_capacity(128));
        request.int(xid).int(op);
        request
    }

    fn int(&mut self, value: i32) -> &mut Request {
        self.0.extend_from_slice(&value.to_be_bytes());
        self
    }

    fn long(&mut self, value: i64) -> &mut Request {
        self.0.extend_from_slice(&value.to_be_bytes());
        self
    }

    fn bool(&mut self, value: bool) -> &mut Request {
        self.0.push(u8::from(value));
        self
    }

    fn buffer(&mut self, bytes: &[u8]) -> &mut Request {
        self.int(bytes.len() as i32);
        self.0.extend_from_slice(bytes);
        self
    }

    fn string(&mut self, text: &str) -> &mut Request {
        self.buffer(text.as_bytes())
    }
}

/// A reply body being decoded.
struct Reply {
    body: Vec<u8>,
    at: usize,
}

impl Reply {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let bytes = self
            .body
            .get(self.at..self.at + n)
            .ok_or("reply shorter than its fields")?;
        self.at += n;
        Ok(bytes)
    }

    fn int(&mut self) -> Result<i32, String> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into().unwrap()))
    }

    fn long(&mut self) -> Result<i64, String> {
        Ok(i64::from_be_bytes(self.take(8)?.try_into().unwrap()))
    }

    fn string(&mut self) -> Result<String, String> {
        let len = self.int()?;
        let bytes = self.take(len.max(0) as usize)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| "a string that is not UTF-8".into())
    }
}

/// A session: the socket after the handshake.
struct Session(TcpStream);

impl Session {
    fn connect(host: &str) -> Result<Session, String> {
        let stream = TcpStream::connect(host).map_err(|e| format!("connect to {host}: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let timeout = Some(Duration::from_millis(SESSION_TIMEOUT_MS as u64));
        stream
            .set_read_timeout(timeout)
            .map_err(|e| e.to_string())?;
        let mut session = Session(stream);
        // ConnectRequest: protocol version, last zxid seen, session timeout,
        // session id (0: a new session), password, read-only.
        let mut handshake = Request(Vec::with_capacity(64));
        handshake
            .int(0)
            .long(0)
            .int(SESSION_TIMEOUT_MS)
            .long(0)
            .buffer(&[0; 16])
            .bool(false);
        session.send(&[handshake])?;
        // ConnectResponse: protocol version, negotiated timeout, session id, ...
        let mut response = session.frame()?;
        let _protocol = response.int()?;
        let timeout = response.int()?;
        let _session_id = response.long()?;
        if timeout <= 0 {
            return Err("the server refused the session".into());
        }
        Ok(session)
    }

    /// Writes every request, each in its frame, with one system call.
    fn send(&mut self, requests: &[Request]) -> Result<(), String> {
        let mut bytes = Vec::with_capacity(requests.iter().map(|r| r.0.len() + 4).sum());
        for request in requests {
            bytes.extend_from_slice(&(request.0.len() as i32).to_be_bytes());
            bytes.extend_from_slice(&request.0);
        }
        self.0.write_all(&bytes).map_err(|e| format!("send: {e}"))
    }

    fn frame(&mut self) -> Result<Reply, String> {
        let mut len = [0u8; 4];
        self.0
            .read_exact(&mut len)
            .map_err(|e| format!("receive: {e}"))?;
        let mut body = vec![0u8; i32::from_be_bytes(len).max(0) as usize];
        self.0
            .read_exact(&mut body)
            .map_err(|e| format!("receive: {e}"))?;
        Ok(Reply { body, at: 0 })
    }

    /// The next reply, which must answer request `xid` without an error;
    /// positioned after its header (xid, zxid, error code).
    fn reply(&mut self, xid: i32) -> Result<Reply, String> {
        let mut reply = self.frame()?;
        let got = reply.int()?;
        let _zxid = reply.long()?;
        let error = reply.int()?;
        if got != xid {
            return Err(format!("expected the reply to request {xid}, got {got}"));
        }
        if error != 0 {
            return Err(format!("request {xid} failed with ZooKeeper error {error}"));
        }
        Ok(reply)
    }
}
