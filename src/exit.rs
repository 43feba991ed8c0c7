//! The exit-code table, and the one place where an error becomes an
//! exit code.
//!
//! Scripts branch on these numbers, so every failure path in zklock ends here:
//! commands return `Result<ExitStatus>`, and `main` asks [`status_of_error`] which
//! code an error deserves.
//!
//! Not every ending is a number. A shell stops a loop or a script when a
//! program it ran was killed by Ctrl-C (SIGINT) or Ctrl-\\ (SIGQUIT), but
//! not when the program exits 130: so after those zklock cleans up and then
//! dies of the same signal ([`end`]), as GNU timeout does.

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitCode;

use crate::history::LogError;
use crate::lock::AcquireError;
use crate::run::{self, CannotRun, WhyNot};
use crate::sys;
use crate::usage::UsageError;
use crate::zk;

/// How zklock ends; the codes are a contract with scripts, listed in the
/// user guide (docs/GUIDE.md) and every man page.
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
    /// 1: `check` found a token whose node does not hold its lock now.
    NotHeld,
    /// 1: `verify` saw a violation, could not inject a fault it was asked
    /// for, or was cut short.
    Unsafe,
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
    /// 8: our contender node was deleted while we waited (by `release`, say):
    /// nothing ran, and a script can tell this from a crash.
    NodeDeleted,
    /// 10: anything else.
    Other,
    /// 126: the command was found but could not be executed.
    CommandNotExecutable,
    /// 127: the command was not found.
    CommandNotFound,
    /// 124: the command ran its `--max-hold` out and was stopped, as
    /// timeout(1) exits; with `--preserve-status`, the command's own status.
    MaxHold(Option<u8>),
    /// The supervised command's own exit code (128+n when killed by signal n).
    Child(u8),
    /// zklock itself was stopped by signal n while waiting: 128+n.
    Interrupted(i32),
    /// zklock dies of signal n once it has let go and given the terminal
    /// back: the shell sees 128+n and a death by that signal.
    DiesOf(i32),
}

impl ExitStatus {
    /// The numeric process exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::NotAcquired(code) | ExitStatus::Child(code) => code,
            ExitStatus::TimedOut | ExitStatus::Found | ExitStatus::NotHeld | ExitStatus::Unsafe => {
                1
            }
            ExitStatus::Usage => 2,
            ExitStatus::Unreachable => 3,
            ExitStatus::LockLost => 4,
            ExitStatus::PermissionDenied => 5,
            ExitStatus::NoNode => 6,
            ExitStatus::WouldDeadlock => 7,
            ExitStatus::NodeDeleted => 8,
            ExitStatus::Other => 10,
            ExitStatus::CommandNotExecutable => 126,
            ExitStatus::CommandNotFound => 127,
            ExitStatus::MaxHold(preserved) => preserved.unwrap_or(124),
            ExitStatus::Interrupted(signal) | ExitStatus::DiesOf(signal) => {
                128u8.saturating_add(signal as u8)
            }
        }
    }

    /// How zklock ends when `signal` stopped its wait: it dies of an
    /// interrupt (Ctrl-C, Ctrl-\\), so that the shell stops its loop or
    /// script as it would for flock(1); any other signal is exit 128+n.
    pub(crate) fn on_signal(signal: i32) -> ExitStatus {
        if run::is_interrupt(signal) {
            ExitStatus::DiesOf(signal)
        } else {
            ExitStatus::Interrupted(signal)
        }
    }

    /// How zklock ends when the command it ran ended with `status`: with
    /// the command's code (128+n for signal n), but dying of the signal
    /// when an interrupt killed the command (the terminal's Ctrl-C reaches
    /// the command alone: zklock must pass it on).
    pub(crate) fn of_command(status: std::process::ExitStatus) -> ExitStatus {
        match status.signal() {
            Some(signal) if run::is_interrupt(signal) => ExitStatus::DiesOf(signal),
            _ => ExitStatus::Child(run::exit_code(status)),
        }
    }
}

/// Ends zklock as `status` says: the exit code to return from `main`, or,
/// for [`ExitStatus::DiesOf`], death by the signal, with core dumps turned
/// off first (a core of zklock could hold the credentials it was given).
/// Call once everything is let go: nothing runs after the signal.
pub fn end(status: ExitStatus) -> ExitCode {
    if let ExitStatus::DiesOf(signal) = status {
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        sys::forbid_core_dumps();
        sys::raise_with_default_action(signal);
    }
    ExitCode::from(status.code())
}

impl ExitStatus {
    /// Every way zklock ends, with what it means to a script: the table the
    /// man pages print, so that it lists exactly the codes [`code`] gives.
    ///
    /// [`code`]: ExitStatus::code
    pub const TABLE: [(ExitStatus, &'static str); 19] = [
        (ExitStatus::Success, "the command did what was asked"),
        (
            ExitStatus::NotAcquired(1),
            "the lock was taken and --no-wait did not wait, or --timeout ran out (or a \
             --lock-delay was pending or would outlast it), or --once-per found the \
             command ran within the window (another code with -E N)",
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
            ExitStatus::NotHeld,
            "check found a token whose node does not hold its lock now (gone, waiting, or \
             another fence)",
        ),
        (
            ExitStatus::Unsafe,
            "verify saw a violation (each is named with its evidence), could not inject a fault \
             it was asked for, or was cut short by a node it did not make or the loss of its \
             own session",
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
        (
            ExitStatus::NodeDeleted,
            "our contender node was deleted while we waited (by `zklock release`, say); \
             COMMAND did not run",
        ),
        (ExitStatus::Other, "any other error"),
        (
            ExitStatus::MaxHold(None),
            "the command ran its --max-hold out and was stopped, as timeout(1) exits (with \
             --preserve-status: the command's own status)",
        ),
        (
            ExitStatus::CommandNotExecutable,
            "COMMAND was found but could not be executed",
        ),
        (ExitStatus::CommandNotFound, "COMMAND was not found"),
        (
            ExitStatus::Child(0),
            "with COMMAND: the command's own exit code (128+n if signal n killed it; if \
             SIGINT or SIGQUIT did, zklock releases and dies of that signal too)",
        ),
        (
            ExitStatus::Interrupted(0),
            "zklock itself was stopped by signal n while waiting; after SIGINT or SIGQUIT (the \
             terminal's Ctrl-C or quit key) it dies of that signal, so that the shell stops its \
             loop or script",
        ),
    ];

    /// How [`ExitStatus::TABLE`] writes this status's code: the number, or
    /// what it is made of when it varies.
    pub fn documented_code(self) -> String {
        match self {
            ExitStatus::Child(_) => "COMMAND's".to_owned(),
            ExitStatus::Interrupted(_) | ExitStatus::DiesOf(_) => "128+n".to_owned(),
            other => other.code().to_string(),
        }
    }
}

/// The exit status an error deserves: the first error in its chain that knows
/// its class decides; anything unknown is 10.
pub fn status_of_error(err: &anyhow::Error) -> ExitStatus {
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
                Some(match err {
                    AcquireError::NodeDeleted(_) => ExitStatus::NodeDeleted,
                    err => status_of_failure(err.failure()),
                })
            } else {
                cause
                    .downcast_ref::<zk::Error>()
                    .map(|err| status_of_failure(err.failure()))
            }
        })
        .unwrap_or(ExitStatus::Other)
}

/// The `cause` of the JSON error: a stable snake_case word for what went
/// wrong, finer than the exit code, for scripts and tests to branch on. The
/// first error in the chain that knows its cause decides; the words are
/// listed in [`CAUSES`].
pub fn cause_for(err: &anyhow::Error) -> &'static str {
    err.chain()
        .find_map(|cause| {
            if cause.downcast_ref::<UsageError>().is_some() {
                Some("usage")
            } else if let Some(err) = cause.downcast_ref::<CannotRun>() {
                match err.why {
                    WhyNot::NotFound => Some("command_not_found"),
                    WhyNot::NotExecutable => Some("command_not_executable"),
                    WhyNot::Other => None,
                }
            } else if let Some(err) = cause.downcast_ref::<AcquireError>() {
                Some(match err {
                    AcquireError::Zk(err) => zk_cause(err),
                    AcquireError::NodeDeleted(_) => NODE_DELETED_WHILE_WAITING,
                    AcquireError::SessionEnded(_) | AcquireError::LeaderSilent { .. } => {
                        "session_lost"
                    }
                    AcquireError::MaxLeasesDiffer { .. } => "max_leases_differ",
                    AcquireError::Unkept { .. } => ONCE_PER_DIRECTORY,
                })
            } else if let Some(err) = cause.downcast_ref::<LogError>() {
                Some(match (err.is_damage(), err.in_snapshot()) {
                    (true, false) => "damaged_log",
                    (true, true) => "damaged_snapshot",
                    (false, _) => "other",
                })
            } else {
                cause.downcast_ref::<zk::Error>().map(zk_cause)
            }
        })
        .unwrap_or("other")
}

/// The cause of a lock not acquired: `--no-wait` found it taken, or
/// `--timeout` ran out (an outcome, not an error, but reported as one).
pub const NOT_ACQUIRED: &str = "not_acquired";

/// The cause of exit 8: our contender node was deleted while we waited.
const NODE_DELETED_WHILE_WAITING: &str = "node_deleted_while_waiting";

/// The cause of a command stopped at `--max-hold` (an outcome, not an
/// error, but reported as one).
pub const MAX_HOLD: &str = "max_hold";

/// The cause of a `--once-per` command not run: it ran within the window
/// (an outcome, not an error, but reported as one).
pub const RAN_RECENTLY: &str = "ran_recently";

/// The cause of a `--once-per` lock refused at once: its directory was not
/// made persistent by `--once-per` and cannot be made again (exit 2).
const ONCE_PER_DIRECTORY: &str = "once_per_directory";

/// The cause of a lock not handed over: `--no-wait` found a lock-delay
/// pending, or it would outlast `--timeout` (an outcome, not an error, but
/// reported as one).
pub const LOCK_DELAY: &str = "lock_delay";

/// Every word [`cause_for`] gives, with what it means: the list the man
/// page prints.
pub const CAUSES: [(&str, &str); 30] = [
    (
        "usage",
        "a bad flag, path, duration, host string or profile",
    ),
    (
        NOT_ACQUIRED,
        "--no-wait found the lock taken, or --timeout ran out",
    ),
    (
        LOCK_DELAY,
        "an earlier hold ended uncleanly, or how it ended is unknown, and --no-wait found its \
         --lock-delay pending, or --timeout would run out first (JSON: lock, left_ms, last_end: \
         unclean or unknown)",
    ),
    (
        MAX_HOLD,
        "the command ran its --max-hold out and was stopped",
    ),
    (
        RAN_RECENTLY,
        "--once-per: the command ran within the window (JSON: ran_at_ms, ran_by, \
         window_opens_at_ms, on the server's clock)",
    ),
    (
        "no_such_host",
        "no host name of the connect string resolves",
    ),
    (
        "connection_refused",
        "nothing listens on the port of any server",
    ),
    (
        "connection_dropped",
        "every server closed the connection at once: its limit of connections \
         from one host (maxClientCnxns), a TLS port, or a server shutting down",
    ),
    ("timed_out", "no server answered in time"),
    ("no_quorum", "a server answers but grants no session"),
    (
        "unreachable",
        "the servers failed in different ways; the message says which",
    ),
    ("tls_handshake", "the TLS handshake failed"),
    ("bad_setup", "the TLS or SASL settings cannot be used"),
    (
        "auth_failed",
        "the authentication (SASL or --auth) was refused",
    ),
    ("acl_denied", "an ACL refused the operation"),
    (
        "no_chroot",
        "the chroot of the connect string does not exist",
    ),
    ("no_node", "no such lock or node"),
    ("node_changed", "a node changed between reading and writing"),
    (
        "connection_lost",
        "the connection was lost and retries did not bring it back",
    ),
    (
        "session_lost",
        "the session ended (expired or closed), or the leader went unheard too long for a \
         lock just acquired to count as held",
    ),
    (
        NODE_DELETED_WHILE_WAITING,
        "our contender node was deleted while we waited",
    ),
    (
        "max_leases_differ",
        "a semaphore's clients disagree on its size",
    ),
    (
        ONCE_PER_DIRECTORY,
        "--once-per found a lock directory it did not make persistent, which it cannot make \
         again (it has contenders, or another program's data)",
    ),
    ("read_only", "a read-only server cannot do what was asked"),
    (
        "unsupported",
        "the server lacks a feature the operation needs",
    ),
    ("command_not_found", "COMMAND was not found"),
    ("command_not_executable", "COMMAND could not be executed"),
    (
        "damaged_log",
        "history met a transaction log record cut off or failing its checksum",
    ),
    (
        "damaged_snapshot",
        "history met a snapshot cut off, corrupt or failing its checksum",
    ),
    ("other", "anything else"),
];

/// The cause of a ZooKeeper error (see [`cause_for`]).
fn zk_cause(err: &zk::Error) -> &'static str {
    use zk::{NoSession, Trouble};
    match err.trouble() {
        Trouble::Unreachable(NoSession::NoSuchHost) => "no_such_host",
        Trouble::Unreachable(NoSession::Refused) => "connection_refused",
        Trouble::Unreachable(NoSession::Dropped) => "connection_dropped",
        Trouble::Unreachable(NoSession::TimedOut) => "timed_out",
        Trouble::Unreachable(NoSession::NoQuorum) => "no_quorum",
        Trouble::Unreachable(NoSession::Mixed) => "unreachable",
        Trouble::Handshake => "tls_handshake",
        Trouble::Setup => "bad_setup",
        Trouble::AuthFailed => "auth_failed",
        Trouble::AclDenied => "acl_denied",
        Trouble::NoChroot => "no_chroot",
        Trouble::NoNode => "no_node",
        Trouble::NodeChanged => "node_changed",
        Trouble::ConnectionLost => "connection_lost",
        Trouble::SessionLost => "session_lost",
        Trouble::ReadOnly => "read_only",
        Trouble::Unsupported => "unsupported",
        Trouble::Other => "other",
    }
}

/// The exit status of a kind of failure.
pub fn status_of_failure(failure: zk::Failure) -> ExitStatus {
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
