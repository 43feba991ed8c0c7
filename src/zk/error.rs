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
    /// No server gave a session: within the connect timeout, or at once
    /// (`timeout` is `None`) when no host name resolves. `why` says, host
    /// by host, what went wrong.
    #[error("cannot reach ZooKeeper at {hosts}{}: {why}", gave_up_after(*.timeout))]
    Unreachable {
        hosts: String,
        timeout: Option<Duration>,
        why: String,
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
    /// An operation on a path failed.
    #[error("{op} {path}: {}", describe(.cause))]
    Operation {
        op: &'static str,
        path: String,
        cause: zkc::Error,
    },
    /// A delete the parent's ACL refused: deleting a node takes DELETE
    /// permission on its parent, not on the node.
    #[error(
        "delete {path}: permission denied by the ACL of its parent {parent} \
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

    /// True when the node the operation named does not exist.
    pub fn is_no_node(&self) -> bool {
        matches!(self.cause(), Some(zkc::Error::NoNode))
    }

    /// True when the node the operation would create is there already.
    pub fn is_node_exists(&self) -> bool {
        matches!(self.cause(), Some(zkc::Error::NodeExists))
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

/// A sentence for an operator, instead of the library's terse wording.
/// ` within DURATION` when zklock waited, for the unreachable message.
fn gave_up_after(timeout: Option<Duration>) -> String {
    timeout.map_or_else(String::new, |timeout| {
        format!(" within {}", humantime::format_duration(timeout))
    })
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
    fn messages_name_the_operation_and_path() {
        let err = Error::op("stat", "/a/b", zkc::Error::NoNode);
        assert_eq!(err.to_string(), "stat /a/b: no such node");
        assert_eq!(err.failure(), Failure::NoNode);
        let err = Error::op("create", "/x", zkc::Error::NoAuth);
        assert_eq!(err.failure(), Failure::Denied);
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
