//! The exit-code table, and the one place where an error becomes an
//! exit code.
//!
//! Scripts branch on these numbers, so every failure path in zklock ends here:
//! commands return `Result<ExitStatus>`, and `main` asks [`status_for`] which
//! code an error deserves.

use crate::lock::AcquireError;
use crate::run::{CannotRun, WhyNot};
use crate::usage::UsageError;
use crate::zk;

/// How zklock ends; the codes are a contract with scripts, listed in the
/// README and every man page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: the command did what was asked.
    Success,
    /// 1 (or `-E N`): the lock was taken and we did not wait, or the wait timed out.
    NotAcquired(u8),
    /// 1: `watch --timeout` ran out before its end condition.
    TimedOut,
    /// 1: `deadlocks` found a cycle.
    Found,
    /// 2: bad flag, bad path, bad duration, bad host string.
    Usage,
    /// 3: ZooKeeper could not be reached, or the session ended before the lock was ours.
    Unreachable,
    /// 4: the lock was lost while held; the command was stopped.
    LockLost,
    /// 5: an ACL or the authentication refused us.
    PermissionDenied,
    /// 6: no such lock or node.
    NoNode,
    /// 7: waiting would deadlock: a write inside a read of the same lock,
    /// or a certain wait-for cycle through our wait.
    WouldDeadlock,
    /// 10: anything else.
    Other,
    /// 126: the command was found but could not be executed.
    CommandNotExecutable,
    /// 127: the command was not found.
    CommandNotFound,
    /// The supervised command's own exit code (128+n when killed by signal n).
    Child(u8),
    /// zklock itself was stopped by signal n while waiting: 128+n.
    Interrupted(i32),
}

impl ExitStatus {
    /// The numeric process exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::NotAcquired(code) | ExitStatus::Child(code) => code,
            ExitStatus::TimedOut | ExitStatus::Found => 1,
            ExitStatus::Usage => 2,
            ExitStatus::Unreachable => 3,
            ExitStatus::LockLost => 4,
            ExitStatus::PermissionDenied => 5,
            ExitStatus::NoNode => 6,
            ExitStatus::WouldDeadlock => 7,
            ExitStatus::Other => 10,
            ExitStatus::CommandNotExecutable => 126,
            ExitStatus::CommandNotFound => 127,
            ExitStatus::Interrupted(signal) => 128u8.saturating_add(signal as u8),
        }
    }
}

impl ExitStatus {
    /// Every way zklock ends, with what it means to a script: the table the
    /// man pages print, so that it lists exactly the codes [`code`] gives.
    ///
    /// [`code`]: ExitStatus::code
    pub const TABLE: [(ExitStatus, &'static str); 15] = [
        (ExitStatus::Success, "the command did what was asked"),
        (
            ExitStatus::NotAcquired(1),
            "the lock was taken and --no-wait did not wait, or --timeout ran out \
             (another code with -E N)",
        ),
        (
            ExitStatus::TimedOut,
            "watch --timeout ran out before its end condition",
        ),
        (
            ExitStatus::Found,
            "deadlocks found a wait-for cycle (with --certain: a certain one)",
        ),
        (
            ExitStatus::Usage,
            "usage error: a bad flag, path, duration, host string or cluster profile",
        ),
        (
            ExitStatus::Unreachable,
            "ZooKeeper could not be reached (the message says why, host by host), or the \
             session ended before the lock was acquired",
        ),
        (
            ExitStatus::LockLost,
            "the lock was lost while held (session expired, node deleted or revoked); the \
             command was stopped",
        ),
        (
            ExitStatus::PermissionDenied,
            "permission denied: an ACL or the authentication refused",
        ),
        (ExitStatus::NoNode, "no such lock or node"),
        (
            ExitStatus::WouldDeadlock,
            "waiting would deadlock: a write lock asked inside a read hold of the same lock \
             (an upgrade that is never granted), or a certain wait-for cycle through this wait",
        ),
        (ExitStatus::Other, "any other error"),
        (
            ExitStatus::CommandNotExecutable,
            "COMMAND was found but could not be executed",
        ),
        (ExitStatus::CommandNotFound, "COMMAND was not found"),
        (
            ExitStatus::Child(0),
            "with COMMAND: the command's own exit code (128+n if signal n killed it)",
        ),
        (
            ExitStatus::Interrupted(0),
            "zklock itself was stopped by signal n while waiting",
        ),
    ];

    /// How [`ExitStatus::TABLE`] writes this status's code: the number, or
    /// what it is made of when it varies.
    pub fn documented_code(self) -> String {
        match self {
            ExitStatus::Child(_) => "COMMAND's".to_owned(),
            ExitStatus::Interrupted(_) => "128+n".to_owned(),
            other => other.code().to_string(),
        }
    }
}

/// The exit status an error deserves: the first error in its chain that knows
/// its class decides; anything unknown is 10.
pub fn status_for(err: &anyhow::Error) -> ExitStatus {
    err.chain()
        .find_map(|cause| {
            if cause.downcast_ref::<UsageError>().is_some() {
                Some(ExitStatus::Usage)
            } else if let Some(err) = cause.downcast_ref::<CannotRun>() {
                match err.why {
                    WhyNot::NotFound => Some(ExitStatus::CommandNotFound),
                    WhyNot::NotExecutable => Some(ExitStatus::CommandNotExecutable),
                    WhyNot::Other => None,
                }
            } else if let Some(err) = cause.downcast_ref::<AcquireError>() {
                Some(status_of(err.failure()))
            } else {
                cause
                    .downcast_ref::<zk::Error>()
                    .map(|err| status_of(err.failure()))
            }
        })
        .unwrap_or(ExitStatus::Other)
}

/// The exit status of a kind of failure.
pub fn status_of(failure: zk::Failure) -> ExitStatus {
    match failure {
        zk::Failure::Unreachable => ExitStatus::Unreachable,
        zk::Failure::Denied => ExitStatus::PermissionDenied,
        zk::Failure::NoNode => ExitStatus::NoNode,
        zk::Failure::Unusable => ExitStatus::Usage,
        zk::Failure::Other => ExitStatus::Other,
    }
}

/// True when `err` comes from writing to a pipe whose reader has gone.
pub fn is_closed_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .and_then(serde_json::Error::io_error_kind)
                == Some(std::io::ErrorKind::BrokenPipe)
    })
}
