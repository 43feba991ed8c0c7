//! The ZooKeeper core: connecting (hosts, chroot, auth, timeouts, read-only),
//! the retry policy, error classes, and closing a session properly.
//!
//! Everything above this module talks to ZooKeeper through [`Session`], which
//! names the operation and path in every error and retries reads through
//! connection loss.

mod acl;
pub(crate) mod batch;
pub(crate) mod delete;
mod error;
mod hosts;
pub(crate) mod monitor;
mod nodes;
pub(crate) mod path;
mod reach;
mod retry;
mod secure;
pub(crate) mod sessions;
mod watches;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use zookeeper_client as zkc;

pub(crate) use acl::NodeAcl;
pub(crate) use error::{Class, Error, Failure, NoSession, Trouble, class_of};
pub use hosts::Hosts;
pub(crate) use nodes::{ChildrenChange, ChildrenWatch, Deleted, DirWrite, Lifetime};
pub use retry::RetryPolicy;
pub(crate) use secure::{SaslConfig, Secret, Secured, TlsConfig};
pub(crate) use watches::{
    NodeChange, NodeEvent, NodeWatch, SessionState, SessionStates, TreeWatch, WatchEvent,
};
/// A node's stat as ZooKeeper returns it: the one type of the client crate
/// the layers above see, plain data.
pub(crate) use zookeeper_client::Stat;

use crate::usage::UsageError;

/// One `--auth SCHEME:CREDENTIAL`, e.g. `digest:alice:secret`.
/// The credential is a [`Secret`]: it never shows in a log or an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Auth {
    pub scheme: String,
    pub credential: Secret,
}

impl Auth {
    /// Parses `SCHEME:CREDENTIAL`; the credential may itself contain colons.
    /// The error never repeats the text: without a colon, it may be a bare
    /// password.
    pub fn parse(text: &str) -> Result<Auth, UsageError> {
        match text.split_once(':') {
            Some((scheme, credential)) if !scheme.is_empty() && !credential.is_empty() => {
                Ok(Auth {
                    scheme: scheme.to_owned(),
                    credential: Secret::new(credential),
                })
            }
            _ => Err(UsageError::new(
                "bad --auth value (not shown, it may be a secret): expected SCHEME:CREDENTIAL, \
                 e.g. digest:user:password",
            )),
        }
    }
}

/// How to reach ZooKeeper: everything `--hosts`, `--auth` and the timeouts say.
#[derive(Clone, Debug)]
pub struct ConnectOptions {
    pub hosts: Hosts,
    pub session_timeout: Duration,
    pub connect_timeout: Duration,
    /// Credentials, TLS and SASL.
    pub secured: Secured,
    /// The ACL of every node this session creates.
    pub acl: NodeAcl,
    pub read_only: bool,
    pub retry: RetryPolicy,
    /// How long to keep trying when every server drops the connection at
    /// once (see [`NoSession::Dropped`]): a lock's `-w`; `None` for
    /// `connect_timeout` × (`retries` + 1).
    pub patience: Option<Duration>,
}

/// An open ZooKeeper session and the policy to retry its reads.
pub struct Session {
    client: zkc::Client,
    retry: RetryPolicy,
    acl: NodeAcl,
    /// False once the server answered a multi-read "unimplemented". Kept
    /// for the session, not per reading: a server that lacks a request
    /// (3.4, 3.5) closes the connection after saying so, so asking again on
    /// every reading would cost a reconnect each time.
    multi_read: AtomicBool,
}

/// Opens a session. Fails with [`Error::Unreachable`] (naming the hosts) when
/// no server answers within the connect timeout. When every server drops
/// the connection at once, which is what a server at its limit of
/// connections from one host does (many processes started together from one
/// machine), the connect is tried again with backoff for as long as
/// `options.patience` allows: those connections come free as the other
/// processes finish.
pub async fn connect(options: &ConnectOptions) -> Result<Session, Error> {
    let started = std::time::Instant::now();
    let patience = options.patience.unwrap_or_else(|| {
        options
            .connect_timeout
            .saturating_mul(options.retry.retries.saturating_add(1))
    });
    let mut attempt = 0;
    // The reasons of the last try alone are logged: they are what the
    // error says, and a retried try would repeat them.
    let mut reasons = Vec::new();
    loop {
        // A server at its connection limit drops us, but a slot may come
        // free between the try and the diagnosis, which then finds a server
        // that answers: a lock that may wait keeps trying that too.
        let err = match connect_once(options, started, &mut reasons).await {
            Err(
                err @ Error::Unreachable {
                    kind: NoSession::Dropped,
                    ..
                },
            ) => err,
            Err(
                err @ Error::Unreachable {
                    kind: NoSession::NoQuorum,
                    ..
                },
            ) if options.patience.is_some() => err,
            done => {
                reach::log(&reasons);
                return done;
            }
        };
        let pause = options.retry.backoff(attempt);
        if started.elapsed() + pause >= patience {
            reach::log(&reasons);
            return Err(err);
        }
        tracing::info!("every server dropped the connection at once; trying again in {pause:?}");
        tokio::time::sleep(pause).await;
        attempt = attempt.saturating_add(1);
    }
}

/// One try at a session, for [`connect`], which began at `started`; what
/// each server did wrong when none gave a session goes into `reasons`.
async fn connect_once(
    options: &ConnectOptions,
    started: std::time::Instant,
    reasons: &mut Vec<(reach::Target, reach::Reason)>,
) -> Result<Session, Error> {
    reasons.clear();
    // A silent connection is given up well inside the session's deadline, so
    // a frozen server costs a reconnect to another one rather than the lock.
    let silence = monitor::Timing::silence_limit(options.session_timeout);
    let mut connector = zkc::Client::connector()
        .with_session_timeout(options.session_timeout)
        .with_connection_timeout(silence.min(options.connect_timeout))
        .with_readonly(options.read_only);
    for auth in &options.secured.auth {
        connector = connector.with_auth(&auth.scheme, auth.credential.expose().as_bytes());
    }
    let setup_failed = |why: String| Error::Setup {
        hosts: options.hosts.servers(),
        why,
    };
    if let Some(tls) = &options.secured.tls {
        connector = connector.with_tls(tls.options().map_err(setup_failed)?);
    }
    match &options.secured.sasl {
        Some(sasl) => connector = connector.with_sasl(sasl.options().map_err(setup_failed)?),
        // A server that requires SASL refuses our first request instead, one
        // round trip sooner than a ping after the handshake would; the
        // refusal is the same failure (permission denied). With SASL, the
        // ping stays: it tells a refused SASL login from other failures.
        None => connector = connector.with_lazy_auth_check(),
    }
    let hosts = options.hosts.to_string();
    let every_host_tls = options
        .secured
        .tls
        .as_ref()
        .is_some_and(|tls| tls.every_host);
    tracing::info!(
        "connecting to {hosts}{}",
        if every_host_tls { " over TLS" } else { "" }
    );
    let targets = reach::Target::every(&options.hosts, every_host_tls);
    if let Some(found) = reach::none_resolves(&targets).await {
        *reasons = found;
        return Err(no_session(options, None, reasons));
    }
    let attempt = async {
        if every_host_tls {
            connector.secure_connect(&hosts).await
        } else {
            connector.connect(&hosts).await
        }
    };
    let outcome = tokio::select! {
        outcome = tokio::time::timeout(options.connect_timeout, attempt) => outcome,
        refused = reach::every_address_refuses(&targets) => {
            *reasons = refused;
            return Err(no_session(options, Some(started.elapsed()), reasons));
        }
    };
    let client = match outcome {
        Err(_)
        | Ok(Err(zkc::Error::Timeout | zkc::Error::NoHosts | zkc::Error::ConnectionLoss)) => {
            return Err(unreachable(options, started, reasons).await);
        }
        Ok(Err(zkc::Error::AuthFailed)) if options.secured.sasl.is_some() => {
            return Err(Error::SaslRefused {
                hosts: options.hosts.servers(),
                mechanism: options
                    .secured
                    .sasl
                    .as_ref()
                    .map_or("", SaslConfig::mechanism),
            });
        }
        Ok(Err(cause)) => {
            return Err(Error::Connect {
                hosts: options.hosts.servers(),
                cause,
            });
        }
        Ok(Ok(client)) => client,
    };
    tracing::info!(
        "session 0x{:x} established, timeout {:?}",
        client.session_id().0,
        client.session_timeout()
    );
    Ok(Session {
        client,
        retry: options.retry,
        acl: options.acl.clone(),
        multi_read: AtomicBool::new(true),
    })
}

/// Why no session was made, server by server: a TLS handshake that fails
/// says why; a SASL mechanism that could not even start (GSSAPI without a
/// ticket) leaves the client library retrying servers that do answer;
/// otherwise each server's reason (no such host, refused, silent, hung up).
async fn unreachable(
    options: &ConnectOptions,
    started: std::time::Instant,
    reasons: &mut Vec<(reach::Target, reach::Reason)>,
) -> Error {
    let hosts = options.hosts.servers();
    let tls = options.secured.tls.clone();
    let every_host_tls = tls.as_ref().is_some_and(|tls| tls.every_host);
    let budget = options.connect_timeout.min(Duration::from_secs(2));
    let targets = reach::Target::every(&options.hosts, every_host_tls);
    *reasons = reach::diagnose(targets, tls, budget).await;
    let answered = reasons
        .iter()
        .any(|(_, reason)| *reason == reach::Reason::NoSession);
    if let Some(sasl) = &options.secured.sasl
        && answered
        && options.secured.tls.is_none()
    {
        return Error::SaslRefused {
            hosts,
            mechanism: sasl.mechanism(),
        };
    }
    let handshake = reasons.iter().find_map(|(target, reason)| match reason {
        reach::Reason::Handshake(why) => Some(format!("{}: {why}", target.name())),
        _ => None,
    });
    if let Some(why) = handshake {
        return Error::Handshake { hosts, why };
    }
    no_session(options, Some(started.elapsed()), reasons)
}

/// No server gave a session, each for its reason, after `waited`.
fn no_session(
    options: &ConnectOptions,
    waited: Option<Duration>,
    reasons: &[(reach::Target, reach::Reason)],
) -> Error {
    Error::Unreachable {
        hosts: options.hosts.servers(),
        waited,
        why: reach::describe(reasons),
        kind: reach::kind(reasons),
    }
}

impl Session {
    /// The underlying client, for the requests this module wraps.
    pub(super) fn client(&self) -> &zkc::Client {
        &self.client
    }

    /// The ACL of every node this session creates.
    pub(super) fn acls(&self) -> zkc::Acls<'_> {
        self.acl.acls()
    }

    /// Whether this session's server may have multi-read: true until it
    /// answered one "unimplemented".
    pub(super) fn multi_read(&self) -> &AtomicBool {
        &self.multi_read
    }

    /// The retry policy of this session.
    pub fn retry(&self) -> RetryPolicy {
        self.retry
    }

    /// The session id, as ZooKeeper shows it (`0x...`).
    pub fn id(&self) -> i64 {
        self.client.session_id().0
    }

    /// The session timeout the server granted.
    pub fn session_timeout(&self) -> Duration {
        self.client.session_timeout()
    }

    /// When the connect request that made this session was sent (not when
    /// its answer came, nor when the first of the attempts before it began):
    /// the leader created the session after this.
    pub(crate) fn connect_sent(&self) -> tokio::time::Instant {
        tokio::time::Instant::from_std(self.client.connect_sent())
    }

    /// True when connected to a read-only server.
    pub fn is_read_only(&self) -> bool {
        self.client.session().is_readonly()
    }

    /// Reads a node's data and stat, retrying through connection loss.
    pub async fn get_data(&self, path: &str) -> Result<(Vec<u8>, Stat), Error> {
        self.retry
            .run(|| self.client.get_data(path))
            .await
            .map_err(|e| Error::op("get", path, e))
    }

    /// The ensemble's configuration (`/zookeeper/config`, which no chroot
    /// hides): empty on a standalone server, an error where the server
    /// keeps none (before 3.5) or will not say (an ACL).
    pub async fn ensemble_config(&self) -> Result<Vec<u8>, Error> {
        let (config, _) = self
            .retry
            .run(|| self.client.get_config())
            .await
            .map_err(|e| Error::op("get", "/zookeeper/config", e))?;
        Ok(config)
    }

    /// A node's stat, or `None` when it does not exist, retrying through
    /// connection loss. Needs no read permission on the node.
    pub async fn stat(&self, path: &str) -> Result<Option<Stat>, Error> {
        self.retry
            .run(|| self.client.check_stat(path))
            .await
            .map_err(|e| Error::op("stat", path, e))
    }

    /// Waits until the server this session talks to has caught up with the
    /// leader, so what is read next is at least as new as every write
    /// committed before: a second reading that confirms a first one.
    pub async fn sync(&self, path: &str) -> Result<(), Error> {
        self.retry
            .run(|| self.client.sync(path))
            .await
            .map_err(|e| Error::op("sync", path, e))
    }

    /// Lists a node's children (no watch), retrying through connection loss.
    pub async fn children(&self, path: &str) -> Result<Vec<String>, Error> {
        self.retry
            .run(|| self.client.list_children(path))
            .await
            .map_err(|e| Error::op("list", path, e))
    }

    /// Lists a node's children once: a lost connection is the caller's to
    /// handle (as when the listing rides along with a create whose own
    /// failure decides what comes next).
    pub async fn children_once(&self, path: &str) -> Result<Vec<String>, Error> {
        self.client
            .list_children(path)
            .await
            .map_err(|e| Error::op("list", path, e))
    }

    /// [`Session::children_once`], with the node's stat as of the listing.
    pub async fn children_and_stat_once(&self, path: &str) -> Result<(Vec<String>, Stat), Error> {
        self.client
            .get_children(path)
            .await
            .map_err(|e| Error::op("list", path, e))
    }

    /// Closes the session and waits until the server has dropped it, so its
    /// ephemeral nodes go at once instead of one session timeout later.
    pub async fn close(self) {
        let mut state = self.client.state_watcher();
        let wait = self.client.session_timeout();
        drop(self.client);
        let closed = async {
            let mut current = state.state();
            while !current.is_terminated() {
                current = state.changed().await;
            }
        };
        if tokio::time::timeout(wait, closed).await.is_err() {
            tracing::warn!("session did not close within {wait:?}");
        }
    }
}

/// Formats a session id the way ZooKeeper's tools do: `0x` and lowercase hex.
pub fn format_session(id: i64) -> String {
    format!("0x{id:x}")
}

/// Parses a session id as ZooKeeper's tools print it (`0x` and hex) or as
/// a decimal number.
pub fn parse_session(text: &str) -> Result<i64, UsageError> {
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).map(|id| id as i64).ok(),
        None => text.parse::<i64>().ok(),
    };
    parsed.ok_or_else(|| {
        UsageError::new(format!(
            "bad session id {text:?}: write it as ZooKeeper prints it (0x1000a2b3c4d0005) or in decimal"
        ))
    })
}

/// A node's stat for unit tests: made at `czxid` (every zxid copies it) by
/// session `owner` (0: owned by none), at time 0, version 0, with no data
/// and no children. Tests set what else matters with `..test_stat(..)`.
#[cfg(test)]
pub(crate) fn test_stat(czxid: i64, owner: i64) -> Stat {
    Stat {
        czxid,
        mzxid: czxid,
        pzxid: czxid,
        ctime: 0,
        mtime: 0,
        version: 0,
        cversion: 0,
        aversion: 0,
        ephemeral_owner: owner,
        data_length: 0,
        num_children: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_read_back_as_they_are_printed() {
        for id in [0x1000a2b3c4d0005, 0, i64::MIN, -1] {
            assert_eq!(parse_session(&format_session(id)).unwrap(), id);
        }
        assert_eq!(
            parse_session("72057594037927941").unwrap(),
            0x100000000000005
        );
        assert!(parse_session("0xzz").is_err());
        assert!(parse_session("session").is_err());
    }
}
