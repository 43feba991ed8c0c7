//! Why a server gave no session: the client library retries every host
//! until the connect timeout and then reports only that it gave up, so when
//! it does, each host is tried once more by hand to tell the reasons apart
//! (a name that does not resolve, a port that refuses, a server that never
//! answers or hangs up, a TLS handshake that fails).
//!
//! A name that does not resolve is also checked before connecting: when no
//! host resolves, waiting out the connect timeout cannot help.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use super::error::NoSession;
use super::hosts::{Hosts, format_server};
use super::secure::{self, TlsConfig};

/// Why one server gave no session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Reason {
    /// Its name does not resolve.
    NoSuchHost(String),
    /// Nothing listens on its port.
    Refused,
    /// The TCP connection was not accepted in time.
    ConnectTimedOut(Duration),
    /// Connected, but the server sent nothing in time (a hung server).
    NoAnswer(Duration),
    /// Connected, and the server hung up without an answer, or answered in
    /// TLS: a TLS port spoken to in plaintext.
    HungUp,
    /// The TLS handshake failed, for the reason given.
    Handshake(String),
    /// The server answers, but granted no session in time (no quorum, or
    /// refusing this client).
    NoSession,
    /// Any other failure to connect.
    Other(String),
}

impl Reason {
    /// What kind of failure this is, for scripts.
    fn kind(&self) -> NoSession {
        match self {
            Reason::NoSuchHost(_) => NoSession::NoSuchHost,
            Reason::Refused => NoSession::Refused,
            Reason::ConnectTimedOut(_) | Reason::NoAnswer(_) => NoSession::TimedOut,
            Reason::HungUp => NoSession::Dropped,
            Reason::NoSession => NoSession::NoQuorum,
            Reason::Handshake(_) | Reason::Other(_) => NoSession::Mixed,
        }
    }

    /// A stable name for the reason, for the JSON log.
    pub(super) fn code(&self) -> &'static str {
        match self {
            Reason::NoSuchHost(_) => "no_such_host",
            Reason::Refused => "refused",
            Reason::ConnectTimedOut(_) => "timed_out",
            Reason::NoAnswer(_) => "no_answer",
            Reason::HungUp => "hung_up",
            Reason::Handshake(_) => "tls_handshake",
            Reason::NoSession => "no_session",
            Reason::Other(_) => "other",
        }
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let wait = |d: &Duration| humantime::format_duration(*d).to_string();
        match self {
            Reason::NoSuchHost(why) => write!(f, "no such host ({why})"),
            Reason::Refused => write!(f, "connection refused (nothing listens on that port)"),
            Reason::ConnectTimedOut(d) => {
                write!(f, "timed out: no TCP connection within {}", wait(d))
            }
            Reason::NoAnswer(d) => write!(
                f,
                "timed out: connected, but the server did not answer within {}",
                wait(d)
            ),
            Reason::HungUp => write!(
                f,
                "the server closed the connection at once without answering: too many \
                 connections from this host (the server's maxClientCnxns), a TLS port (then \
                 use --tls or tcp+tls://), or a server shutting down"
            ),
            Reason::Handshake(why) => write!(f, "TLS handshake failed: {why}"),
            Reason::NoSession => write!(
                f,
                "the server answers but granted no session in time (has the ensemble a quorum? \
                 are there too many connections from this host, past its maxClientCnxns?)"
            ),
            Reason::Other(why) => write!(f, "{why}"),
        }
    }
}

/// One server to diagnose: its host, port, and whether it is spoken to in
/// TLS.
#[derive(Clone, Debug)]
pub(super) struct Target {
    pub host: String,
    pub port: u16,
    pub tls: bool,
}

impl Target {
    /// Every server of `hosts`, with whether it is spoken to in TLS
    /// (`every_host`: `--tls` was given), for telling why none gave a
    /// session.
    pub(super) fn every(hosts: &Hosts, every_host: bool) -> Vec<Target> {
        hosts
            .with_tls(every_host)
            .map(|(host, port, tls)| Target {
                host: host.to_owned(),
                port,
                tls,
            })
            .collect()
    }

    /// `host:port`, as messages name a server.
    pub(super) fn name(&self) -> String {
        format_server(&self.host, self.port)
    }
}

/// The reason of every target that does not resolve, or `None` when some
/// target does (or might: an address needs no lookup).
pub(super) async fn none_resolves(targets: &[Target]) -> Option<Vec<(Target, Reason)>> {
    if targets
        .iter()
        .any(|t| t.host.parse::<std::net::IpAddr>().is_ok())
    {
        return None;
    }
    let mut failed = Vec::new();
    for target in targets {
        let found = tokio::net::lookup_host((target.host.as_str(), target.port))
            .await
            .map(|mut addresses| addresses.next().is_some());
        let why = match found {
            Ok(true) => return None,
            Ok(false) => "no address".to_owned(),
            Err(err) => err.to_string(),
        };
        failed.push((target.clone(), Reason::NoSuchHost(why)));
    }
    Some(failed)
}

/// How long a connect may go without a session before zklock looks whether
/// every server refuses it: a server that is up gives a session well
/// within this, so it is never asked twice.
const REFUSALS_LOOKED_FOR_AFTER: Duration = Duration::from_millis(200);

/// How long each address is given to accept or refuse the look.
const REFUSAL_BUDGET: Duration = Duration::from_secs(1);

/// Resolves once every address of every target refuses a TCP connection
/// (or no target resolves), looked at [`REFUSALS_LOOKED_FOR_AFTER`] into a
/// connect: with the reason of each target. Nothing listens there, so
/// waiting out the connect timeout cannot help, and flock(1) fails at once
/// on what it cannot open. When any address accepts, or fails otherwise
/// (a server that is slow, silent, or restarting behind a listener), it
/// never resolves: the connect timeout decides.
pub(super) async fn every_address_refuses(targets: &[Target]) -> Vec<(Target, Reason)> {
    tokio::time::sleep(REFUSALS_LOOKED_FOR_AFTER).await;
    let mut reasons = Vec::new();
    for target in targets {
        match refuses(target).await {
            Some(reason) => reasons.push((target.clone(), reason)),
            None => return std::future::pending().await,
        }
    }
    reasons
}

/// Why `target` gives no connection, when each of its addresses refuses
/// one or it has none; `None` when one accepts or fails otherwise.
async fn refuses(target: &Target) -> Option<Reason> {
    let addresses: Vec<SocketAddr> =
        match tokio::net::lookup_host((target.host.as_str(), target.port)).await {
            Ok(found) => found.collect(),
            Err(err) => return Some(Reason::NoSuchHost(err.to_string())),
        };
    if addresses.is_empty() {
        return Some(Reason::NoSuchHost("no address".into()));
    }
    for address in addresses {
        let tried = tokio::time::timeout(REFUSAL_BUDGET, tokio::net::TcpStream::connect(address));
        match tried.await {
            Ok(Err(err)) if err.kind() == std::io::ErrorKind::ConnectionRefused => {}
            _ => return None,
        }
    }
    Some(Reason::Refused)
}

/// Tries every target once, all at the same time, each within `budget`.
pub(super) async fn diagnose(
    targets: Vec<Target>,
    tls: Option<TlsConfig>,
    budget: Duration,
) -> Vec<(Target, Reason)> {
    let work = move || {
        std::thread::scope(|scope| {
            let tls = tls.as_ref();
            let probes: Vec<_> = targets
                .iter()
                .map(|target| scope.spawn(move || diagnose_one(target, tls, budget)))
                .collect();
            targets
                .iter()
                .cloned()
                .zip(probes)
                .map(|(target, probe)| {
                    let reason = probe
                        .join()
                        .unwrap_or_else(|_| Reason::Other("the diagnosis failed".into()));
                    (target, reason)
                })
                .collect()
        })
    };
    tokio::task::spawn_blocking(work).await.unwrap_or_default()
}

fn diagnose_one(target: &Target, tls: Option<&TlsConfig>, budget: Duration) -> Reason {
    let address = match resolve(target) {
        Ok(address) => address,
        Err(reason) => return reason,
    };
    let mut socket = match TcpStream::connect_timeout(&address, budget) {
        Ok(socket) => socket,
        Err(err) => {
            return match err.kind() {
                std::io::ErrorKind::ConnectionRefused => Reason::Refused,
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
                    Reason::ConnectTimedOut(budget)
                }
                _ => dropped_or_other(err),
            };
        }
    };
    match (target.tls, tls) {
        (true, Some(tls)) => {
            match secure::diagnose_handshake(tls, &target.host, target.port, budget) {
                Some(why) => Reason::Handshake(why),
                None => Reason::NoSession,
            }
        }
        _ => probe_plaintext(&mut socket, budget),
    }
}

fn resolve(target: &Target) -> Result<SocketAddr, Reason> {
    match (target.host.as_str(), target.port).to_socket_addrs() {
        Ok(mut found) => found
            .next()
            .ok_or_else(|| Reason::NoSuchHost("no address".into())),
        Err(err) => Err(Reason::NoSuchHost(err.to_string())),
    }
}

/// Asks a plaintext server a four-letter word (`isro`, harmless: it opens
/// no session). Any answer means a ZooKeeper listens; a TLS port answers
/// with a TLS alert or hangs up. The newline makes five bytes: a TLS server
/// reads a whole record header (five bytes) before it judges what came.
fn probe_plaintext(socket: &mut TcpStream, budget: Duration) -> Reason {
    /// The first byte of a TLS alert record.
    const TLS_ALERT: u8 = 0x15;
    let asked = socket
        .set_read_timeout(Some(budget))
        .and_then(|()| socket.set_write_timeout(Some(budget)))
        .and_then(|()| socket.write_all(b"isro\n"));
    if let Err(err) = asked {
        return dropped_or_other(err);
    }
    let mut first = [0u8; 1];
    match socket.read(&mut first) {
        Ok(0) => Reason::HungUp,
        Ok(_) if first[0] == TLS_ALERT => Reason::HungUp,
        Ok(_) => Reason::NoSession,
        Err(err)
            if matches!(
                err.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            Reason::NoAnswer(budget)
        }
        Err(err) => dropped_or_other(err),
    }
}

/// A connection closed under us is one dropped at once; any other error
/// stays as it is.
fn dropped_or_other(err: std::io::Error) -> Reason {
    use std::io::ErrorKind::*;
    match err.kind() {
        BrokenPipe | ConnectionReset | ConnectionAborted | UnexpectedEof => Reason::HungUp,
        _ => Reason::Other(err.to_string()),
    }
}

/// What every server's reason has in common.
pub(super) fn kind(reasons: &[(Target, Reason)]) -> NoSession {
    let mut kinds = reasons.iter().map(|(_, reason)| reason.kind());
    let first = kinds.next().unwrap_or(NoSession::Mixed);
    if kinds.all(|kind| kind == first) {
        first
    } else {
        NoSession::Mixed
    }
}

/// The reasons, one per server: `host:port: reason; ...`.
pub(super) fn describe(reasons: &[(Target, Reason)]) -> String {
    reasons
        .iter()
        .map(|(target, reason)| format!("{}: {reason}", target.name()))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Logs each reason as a declared event, for scripts and tests.
pub(super) fn log(reasons: &[(Target, Reason)]) {
    for (target, reason) in reasons {
        tracing::info!(
            event = "server_unreachable",
            server = %target.name(),
            reason = reason.code(),
            "{}: {reason}",
            target.name()
        );
    }
}
