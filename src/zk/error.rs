//! ZooKeeper errors in three classes (normal, recoverable, fatal), each
//! naming what failed.
//!
//! Recipes ask one question of an error, [`Class`], instead of matching raw
//! codes all over: normal errors are part of a protocol, recoverable ones are
//! retried, fatal ones end the session's work.

use std::time::Duration;

use zookeeper_client as zkc;

/// The three error classes: what a recipe does about an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// Node exists, no node, bad version, not empty: handled where they happen.
    Normal,
    /// Connection loss, operation timeout: retried with backoff.
    Recoverable,
    /// Session expired, auth failed, closed: never retried.
    Fatal,
}

/// The class of a client-library error.
///
/// A request in flight when its connection fails gets `ConnectionLoss` only
/// when the server closed the connection in order; when the connection was
/// reset, failed to write, or went silent ("no response from connection in
/// N ms"), the client library fails it with a `Custom` error wrapping that
/// cause. The session goes on either way (the client reconnects), so both
/// are connection losses.
pub(crate) fn class_of(err: &zkc::Error) -> Class {
    use zkc::Error::*;
    match err {
        ConnectionLoss | Timeout | Throttled | Custom(_) => Class::Recoverable,
        SessionExpired | AuthFailed | ClientClosed | NoHosts | SessionMoved => Class::Fatal,
        _ => Class::Normal,
    }
}

/// A failed ZooKeeper interaction, with what was attempted and where.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No server gave a session: after trying for `waited`, or at once
    /// (`waited` is `None`) when no host name resolves. `why` says, host
    /// by host, what went wrong; `kind` is what every host had in common.
    #[error("cannot reach ZooKeeper at {hosts}{}: {why}", gave_up_after(*.waited))]
    Unreachable {
        hosts: String,
        waited: Option<Duration>,
        why: String,
        kind: NoSession,
    },
    /// Connecting failed for another reason (authentication, expired session).
    #[error("cannot connect to ZooKeeper at {hosts}: {}", describe(.cause))]
    Connect { hosts: String, cause: zkc::Error },
    /// A TLS handshake failed, for the reason given.
    #[error("cannot connect to ZooKeeper at {hosts} over TLS: {why}")]
    Handshake { hosts: String, why: String },
    /// The TLS or SASL settings cannot be used (a PEM file that does not
    /// parse, a mechanism not built in).
    #[error("cannot connect to ZooKeeper at {hosts}: {why}")]
    Setup { hosts: String, why: String },
    /// The server refused the SASL authentication.
    #[error(
        "cannot connect to ZooKeeper at {hosts}: SASL {mechanism} authentication was refused \
         or could not start (check the user, the password, or the Kerberos ticket: klist)"
    )]
    SaslRefused {
        hosts: String,
        mechanism: &'static str,
    },
    /// An operation on a path failed. `op` is the operation's name for
    /// code and logs; the message says what failed in a user's words.
    #[error("{}", explain(op, path, cause))]
    Operation {
        op: &'static str,
        path: String,
        cause: zkc::Error,
    },
    /// A delete the parent's ACL refused: deleting a node takes DELETE
    /// permission on its parent, not on the node.
    #[error(
        "cannot delete {path}: permission denied by the ACL of its parent {parent} \
         (deleting a node needs DELETE permission on the parent)"
    )]
    DeleteRefused { path: String, parent: String },
    /// The server is read-only and the operation needs a writable one.
    #[error("{0}")]
    ReadOnly(String),
    /// The server lacks a feature the operation needs.
    #[error("{0}")]
    Unsupported(String),
}

impl Error {
    /// The error a read of a missing node gives: for the unit tests of the
    /// layers above, which never name the client crate.
    #[cfg(test)]
    pub(crate) fn no_node(op: &'static str, path: &str) -> Error {
        Error::op(op, path, zkc::Error::NoNode)
    }

    /// An operation error for `op` on `path`.
    pub fn op(op: &'static str, path: &str, cause: zkc::Error) -> Error {
        Error::Operation {
            op,
            path: path.to_owned(),
            cause,
        }
    }

    /// The client-library error behind this one, if any.
    pub fn cause(&self) -> Option<&zkc::Error> {
        match self {
            Error::Connect { cause, .. } | Error::Operation { cause, .. } => Some(cause),
            _ => None,
        }
    }

    /// The path an operation named, if this is an operation's error.
    pub fn path(&self) -> Option<&str> {
        match self {
            Error::Operation { path, .. } | Error::DeleteRefused { path, .. } => Some(path),
            _ => None,
        }
    }

    /// True when a create failed because the connect string's chroot does
    /// not exist: the parent of a node right under the root is the root,
    /// which always exists unless it is a chroot.
    pub fn is_missing_chroot(&self) -> bool {
        matches!(self, Error::Operation { op: "create", path, cause: zkc::Error::NoNode }
            if super::path::parent(path) == Some("/"))
    }

    /// True when the node the operation named does not exist.
    pub fn is_no_node(&self) -> bool {
        matches!(self.cause(), Some(zkc::Error::NoNode))
    }

    /// True when the node the operation would create is there already.
    pub fn is_node_exists(&self) -> bool {
        matches!(self.cause(), Some(zkc::Error::NodeExists))
    }

    /// True when a delete failed because the node still has children.
    pub fn is_not_empty(&self) -> bool {
        matches!(self.cause(), Some(zkc::Error::NotEmpty))
    }

    /// True when the server does not implement the request (an older
    /// server, or one without extended types).
    pub fn is_unimplemented(&self) -> bool {
        matches!(self.cause(), Some(zkc::Error::Unimplemented))
    }

    /// True when the node was not at the version the request expected.
    pub fn is_bad_version(&self) -> bool {
        matches!(self.cause(), Some(zkc::Error::BadVersion))
    }

    /// True when the node's ACL refused the request.
    pub fn is_no_auth(&self) -> bool {
        matches!(self.cause(), Some(zkc::Error::NoAuth))
    }

    /// What to do about this error: go on, retry, or stop. An error with no
    /// client-library cause came from connecting (fatal) or from a check of
    /// our own (normal).
    pub(crate) fn class(&self) -> Class {
        match self {
            Error::Connect { cause, .. } | Error::Operation { cause, .. } => class_of(cause),
            Error::Unreachable { .. }
            | Error::Handshake { .. }
            | Error::Setup { .. }
            | Error::SaslRefused { .. } => Class::Fatal,
            Error::DeleteRefused { .. } | Error::ReadOnly(_) | Error::Unsupported(_) => {
                Class::Normal
            }
        }
    }

    /// What went wrong, for scripts.
    pub fn trouble(&self) -> Trouble {
        use zkc::Error::*;
        match self {
            Error::Unreachable { kind, .. } => Trouble::Unreachable(*kind),
            Error::Handshake { .. } => Trouble::Handshake,
            Error::Setup { .. } => Trouble::Setup,
            Error::SaslRefused { .. } => Trouble::AuthFailed,
            Error::DeleteRefused { .. } => Trouble::AclDenied,
            Error::ReadOnly(_) => Trouble::ReadOnly,
            Error::Unsupported(_) => Trouble::Unsupported,
            err if err.is_missing_chroot() => Trouble::NoChroot,
            Error::Connect { cause, .. } | Error::Operation { cause, .. } => match cause {
                NoNode => Trouble::NoNode,
                NoAuth | InvalidAcl => Trouble::AclDenied,
                AuthFailed => Trouble::AuthFailed,
                BadVersion | NodeExists | NotEmpty => Trouble::NodeChanged,
                ConnectionLoss | Timeout | Custom(_) | NoHosts => Trouble::ConnectionLost,
                SessionExpired | SessionMoved | ClientClosed => Trouble::SessionLost,
                _ => Trouble::Other,
            },
        }
    }

    /// What this failure means to whoever asked, whatever the operation.
    pub fn failure(&self) -> Failure {
        match self {
            Error::Unreachable { .. } | Error::Handshake { .. } => Failure::Unreachable,
            Error::Setup { .. } => Failure::Unusable,
            Error::SaslRefused { .. } => Failure::Denied,
            Error::ReadOnly(_) | Error::Unsupported(_) => Failure::Other,
            Error::DeleteRefused { .. } => Failure::Denied,
            Error::Connect { cause, .. } | Error::Operation { cause, .. } => failure_of(cause),
        }
    }
}

/// What kept every server from giving a session, when they all agree;
/// `Mixed` when they differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoSession {
    /// No host name resolves.
    NoSuchHost,
    /// Nothing listens on the port.
    Refused,
    /// The server closed the connection at once without a word: its limit
    /// of connections from one host (`maxClientCnxns`), a TLS port spoken
    /// to in plaintext, or a server shutting down. A client cannot tell
    /// these apart, so the first is waited out.
    Dropped,
    /// No connection, or no answer, in time.
    TimedOut,
    /// The server answers but grants no session (no quorum).
    NoQuorum,
    /// The servers failed in different ways, or in another way.
    Mixed,
}

/// What went wrong, finer than [`Failure`]: what a script may want to
/// branch on (the JSON error's `cause` is named from it at the command edge).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trouble {
    Unreachable(NoSession),
    Handshake,
    Setup,
    AuthFailed,
    AclDenied,
    NoChroot,
    NoNode,
    /// A node changed, appeared or gained children between a read and a write.
    NodeChanged,
    /// The connection was lost and retries did not bring it back.
    ConnectionLost,
    /// The session expired, moved or was closed.
    SessionLost,
    ReadOnly,
    Unsupported,
    Other,
}

/// The kinds of failure a person or a script tells apart; the exit code of
/// each is decided at the command edge, not here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// No server could be reached, or the session was lost.
    Unreachable,
    /// An ACL or the authentication refused us.
    Denied,
    /// The node does not exist.
    NoNode,
    /// The connection settings cannot be used (a PEM file that does not
    /// parse, a mechanism not built in): the operator's input is wrong.
    Unusable,
    /// Anything else.
    Other,
}

fn failure_of(err: &zkc::Error) -> Failure {
    use zkc::Error::*;
    match err {
        NoNode => Failure::NoNode,
        NoAuth | AuthFailed | InvalidAcl => Failure::Denied,
        ConnectionLoss | Timeout | Custom(_) | SessionExpired | SessionMoved | NoHosts
        | ClientClosed => Failure::Unreachable,
        _ => Failure::Other,
    }
}

/// ` (gave up after DURATION)` when zklock tried for a while, for the
/// unreachable message: the time it really took, in whole seconds (tenths
/// under ten seconds), so that the words match the clock.
fn gave_up_after(waited: Option<Duration>) -> String {
    waited.map_or_else(String::new, |waited| {
        let tenths = (waited.as_millis() + 50) / 100;
        let shown = if tenths < 100 && tenths % 10 != 0 {
            format!("{}.{}s", tenths / 10, tenths % 10)
        } else {
            format!("{}s", (tenths + 5) / 10)
        };
        format!(" (gave up after {shown})")
    })
}

/// What went wrong with an operation on `path`, for an operator, in the
/// words of someone who asked about a lock or a node, never the name of
/// the request: a node that is not there is "no lock or node", and a
/// create refused or failing for reasons that have a known fix says the
/// fix.
fn explain(op: &str, path: &str, cause: &zkc::Error) -> String {
    let parent = super::path::parent(path).unwrap_or("/");
    match (op, cause) {
        ("create", zkc::Error::NoAuth) => format!(
            "cannot create {path}: permission denied by the ACL of its parent {parent} \
             (creating a node needs CREATE permission on the parent): authenticate as \
             someone the ACL admits with --auth SCHEME:CREDENTIAL, --auth-file FILE or \
             ZKLOCK_AUTH"
        ),
        ("create", zkc::Error::NoNode) if parent == "/" => format!(
            "cannot create {path}: the chroot of the connect string does not exist on this \
             ensemble: create it first (zkCli.sh create /CHROOT), or correct -H/ZKLOCK_HOSTS"
        ),
        ("create", zkc::Error::NoNode) => {
            format!("cannot create {path}: its parent {parent} does not exist")
        }
        (_, zkc::Error::NoNode) => format!("no lock or node at {path}"),
        (op, cause) => format!("cannot {} {path}: {}", doing(op), describe(cause)),
    }
}

/// What the request `op` did to its path, as a person says it.
fn doing(op: &str) -> &str {
    match op {
        "list" => "read the children of",
        "get" | "stat" | "sync" => "read",
        "revoke" => "ask the holder to let go of",
        other => other,
    }
}

fn describe(err: &zkc::Error) -> String {
    use zkc::Error::*;
    match err {
        NoNode => "no such node".into(),
        NodeExists => "node already exists".into(),
        NotEmpty => "node has children".into(),
        BadVersion => "node changed since it was read (version mismatch)".into(),
        NoAuth => "permission denied by the node's ACL".into(),
        AuthFailed => "authentication failed".into(),
        InvalidAcl => "invalid ACL".into(),
        ConnectionLoss => "connection to ZooKeeper lost".into(),
        Timeout => "ZooKeeper did not answer in time".into(),
        SessionExpired => "ZooKeeper session expired".into(),
        ClientClosed => "ZooKeeper session closed".into(),
        NotReadOnly => "the server is read-only".into(),
        Unimplemented => "the server does not implement this operation".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_the_spec() {
        assert_eq!(class_of(&zkc::Error::NoNode), Class::Normal);
        assert_eq!(class_of(&zkc::Error::BadVersion), Class::Normal);
        assert_eq!(class_of(&zkc::Error::ConnectionLoss), Class::Recoverable);
        assert_eq!(class_of(&zkc::Error::SessionExpired), Class::Fatal);
        assert_eq!(class_of(&zkc::Error::ClientClosed), Class::Fatal);
    }

    #[test]
    fn messages_name_the_path_in_a_users_words() {
        let err = Error::op("list", "/tryout/nosuch", zkc::Error::NoNode);
        assert_eq!(err.to_string(), "no lock or node at /tryout/nosuch");
        assert_eq!(err.failure(), Failure::NoNode);
        let err = Error::op("create", "/x", zkc::Error::NoAuth);
        assert_eq!(err.failure(), Failure::Denied);
        let ops = [
            "list", "get", "stat", "sync", "watch", "create", "delete", "revoke",
        ];
        let causes = [
            zkc::Error::NoNode,
            zkc::Error::NoAuth,
            zkc::Error::NodeExists,
            zkc::Error::BadVersion,
            zkc::Error::ConnectionLoss,
            zkc::Error::SessionExpired,
            zkc::Error::Unimplemented,
        ];
        for op in ops {
            for cause in &causes {
                let message = Error::op(op, "/a/b", cause.clone()).to_string();
                assert!(message.contains("/a/b"), "{message}");
                // Creating, deleting and watching are what a user says too.
                let users_word = matches!(op, "create" | "delete" | "watch");
                assert!(
                    users_word || !message.contains(&format!("{op} /a/b")),
                    "{message}"
                );
            }
        }
        let refused = Error::DeleteRefused {
            path: "/a/b".into(),
            parent: "/a".into(),
        };
        assert!(refused.to_string().starts_with("cannot delete /a/b:"));
    }

    #[test]
    fn errors_answer_for_their_cause() {
        let err = |cause| Error::op("delete", "/a", cause);
        assert_eq!(err(zkc::Error::ConnectionLoss).class(), Class::Recoverable);
        assert_eq!(err(zkc::Error::SessionExpired).class(), Class::Fatal);
        assert_eq!(err(zkc::Error::NoNode).class(), Class::Normal);
        assert!(err(zkc::Error::Unimplemented).is_unimplemented());
        assert!(err(zkc::Error::BadVersion).is_bad_version());
        assert!(err(zkc::Error::NoAuth).is_no_auth());
        assert!(!err(zkc::Error::NoNode).is_no_auth());
    }
}
