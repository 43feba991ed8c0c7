//! Running a command under a lock: start it in its own process
//! group behind a guard that kills the group if zklock dies (forked when
//! zklock starts, see [`guard`], and handed down as a value to here), forward
//! signals to it, and stop it when the lock is lost or its time is up.

pub(crate) mod detach;
pub(crate) mod guard;
mod signals;
mod terminal;

use std::future::Future;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use anyhow::{Context, Result};
use futures::FutureExt;
use tokio::io::AsyncReadExt;

use crate::sys::{self, Waited, kill_group};
pub(crate) use signals::{Signals, is_interrupt, stay_out_of_job_control};
use terminal::Terminal;
pub(crate) use terminal::refuse_ctrl_z;

/// The command to run and how to stop it.
#[derive(Clone, Debug)]
pub(crate) struct CommandSpec {
    /// The command and its arguments; with `shell`, one string for `sh -c`.
    pub argv: Vec<String>,
    pub shell: bool,
    /// Extra environment (`ZKLOCK_LOCK`, `ZKLOCK_NODE`, ...).
    pub env: Vec<(String, String)>,
    /// Sent to the process group when the lock is lost.
    pub kill_signal: i32,
    /// How long to wait after `kill_signal` before SIGKILL.
    pub kill_after: Duration,
    /// `--max-hold`: how long the command may run before it is stopped as
    /// on a loss.
    pub max_hold: Option<Duration>,
}

/// How a supervised command ended.
#[derive(Debug)]
pub(crate) enum Ending<L> {
    /// It ended by itself, and so did every other process of its group: how
    /// (its code, or the signal that killed it).
    Exited(std::process::ExitStatus),
    /// The lock was lost and the command was stopped.
    Stopped(L),
    /// The command ran its `max_hold` out and was stopped: its own exit
    /// code then (128+n for the signal n that ended it).
    OutOfTime(u8),
    /// The guard died before the command ended (killed from outside: its
    /// exit code, 128+n for signal n); the command's group was stopped.
    GuardDied(u8),
}

/// Runs the command until it and every other process of its group have
/// ended, forwarding `signals` to the group. If `lost` resolves first, or
/// the command has run the spec's `max_hold`, the group gets the kill
/// signal, then SIGKILL after the grace period, and the loss (or the
/// command's status) is returned. Whichever way it ends, no process of the group is left
/// when this returns (but those that left the group on purpose, and a guard
/// that has made its report and is only exiting).
///
/// The command starts behind `standby`, the guard forked at start-up
/// ([`guard::fork`]).
pub(crate) async fn supervise<L>(
    standby: guard::Standby,
    spec: &CommandSpec,
    signals: &mut Signals,
    lost: impl Future<Output = L>,
) -> Result<Ending<L>> {
    adopt_orphans()?;
    tokio::pin!(lost);
    // One poll before the start puts the requests of `lost` (the watch on
    // our node, the first heartbeat) on the wire, so that they travel while
    // the command starts instead of after.
    if let Some(loss) = (&mut lost).now_or_never() {
        return Ok(Ending::Stopped(loss));
    }
    let (mut group, mut report) = Group::start(standby, spec)?;
    match report.started().await {
        Started::Running => {}
        Started::Failed(err) => {
            group.wait_until_gone().await;
            return Err(CannotRun::new(spec.program(), err).into());
        }
        Started::GuardDied => return group.guard_died(spec).await,
    }
    // The report comes once the command and the rest of its group are gone:
    // the lock can go at once, without waiting for the guard's own end.
    let report = report.status();
    tokio::pin!(report);
    // Counted from the command's start, as timeout(1) counts.
    let out_of_time = async {
        match spec.max_hold {
            Some(max_hold) => tokio::time::sleep(max_hold).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(out_of_time);
    loop {
        tokio::select! {
            reported = &mut report => {
                return match reported {
                    Some(command_status) => {
                        let status = std::process::ExitStatus::from_raw(command_status);
                        group.take_terminal_back(status.signal());
                        Ok(Ending::Exited(status))
                    }
                    None => group.guard_died(spec).await,
                };
            }
            signal = signals.next() => {
                tracing::info!("forwarding signal {signal} to the command");
                kill_group(group.id, signal);
            }
            loss = &mut lost => {
                group.stop(spec).await;
                return Ok(Ending::Stopped(loss));
            }
            () = &mut out_of_time => {
                tracing::info!("the command has run its --max-hold out");
                group.stop(spec).await;
                // The guard reports the command's status once the group is
                // gone, unless SIGKILL took the guard too.
                let status = match (&mut report).await {
                    Some(status) => status,
                    None => group.guard_exit().await,
                };
                return Ok(Ending::OutOfTime(exit_code(std::process::ExitStatus::from_raw(status))));
            }
        }
    }
}

/// Makes zklock the parent of its descendants' orphans, so that when the
/// guard dies, the command's processes become zklock's children and zklock
/// can wait for them to end.
fn adopt_orphans() -> Result<()> {
    sys::become_subreaper().context("cannot adopt the command's orphans")
}

/// The command's process group: the guard (zklock's child, the group
/// leader), the command, and whatever the command starts.
struct Group {
    /// The guard's pid, which is the group's id.
    id: i32,
    /// The guard's wait status once zklock has reaped it.
    guard_ended: Option<i32>,
    /// The terminal lent to the group while zklock is in the foreground;
    /// taken back when the group is dropped, once all of it has ended.
    terminal: Option<Terminal>,
    /// Wakes the waits for the group's end.
    children_ended: tokio::signal::unix::Signal,
}

/// The read end of the pipe on which the guard reports whether the command
/// started, then the command's wait status. Only the guard holds the write
/// end: the pipe's end without a report means the guard died.
struct ReportPipe(tokio::net::unix::pipe::Receiver);

/// The guard's first word: how the start of the command went.
enum Started {
    /// The command execs.
    Running,
    /// The command could not be started.
    Failed(std::io::Error),
    /// The guard died before it said.
    GuardDied,
}

impl ReportPipe {
    /// The guard's next word; `None` if it died without one.
    async fn word(&mut self) -> Option<i32> {
        let mut bytes = [0u8; 4];
        self.0
            .read_exact(&mut bytes)
            .await
            .ok()
            .map(|_| i32::from_ne_bytes(bytes))
    }

    /// Whether the command execs, as soon as it does or fails to.
    async fn started(&mut self) -> Started {
        match self.word().await {
            Some(guard::STARTED) => Started::Running,
            Some(errno) => Started::Failed(std::io::Error::from_raw_os_error(errno)),
            None => Started::GuardDied,
        }
    }

    /// The command's wait status as soon as the guard reports it, which it
    /// does once every process of the group has ended; `None` if the guard
    /// died without a report. Meanwhile, each Ctrl-Z the guard undid is
    /// told on the terminal.
    async fn status(mut self) -> Option<i32> {
        loop {
            match self.word().await? {
                guard::CONTINUED_AFTER_CTRL_Z => terminal::ctrl_z_passed_over(),
                status => return Some(status),
            }
        }
    }
}

impl Group {
    /// Lends the terminal to the group of the guard `standby` and has the
    /// guard start the command; with the guard's report to come.
    fn start(standby: guard::Standby, spec: &CommandSpec) -> Result<(Group, ReportPipe)> {
        let children_ended = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::child())
            .context("cannot watch for the command's end")?;
        let id = standby.pid();
        // Before the command exists, so that it never runs in the background
        // of the terminal.
        let mut terminal = Terminal::if_foreground();
        if let Some(terminal) = &mut terminal {
            terminal.lend_to(id);
        }
        let group = Group {
            id,
            guard_ended: None,
            terminal,
            children_ended,
        };
        let report = standby
            .start(&spec.program_and_args(), &spec.env)
            .with_context(|| format!("cannot hand {:?} to the guard process", spec.program()))?;
        let report = tokio::net::unix::pipe::Receiver::from_owned_fd(report)
            .context("cannot wait for the guard's report")?;
        Ok((group, ReportPipe(report)))
    }

    /// Takes the terminal back once the whole group has ended, the command
    /// killed by `died_of` if a signal killed it. The terminal's Ctrl-C or
    /// quit key reached the command's group alone, while without zklock it
    /// would have reached zklock's own group, the one the terminal was lent
    /// from: the shell script or pipeline zklock runs in, which stops only
    /// if it gets the signal too. So such an interrupt is passed on to that
    /// group, as the terminal would have sent it; zklock catches its own
    /// copy, lets go, and then dies of the signal itself.
    fn take_terminal_back(&mut self, died_of: Option<i32>) {
        let Some(terminal) = self.terminal.take() else {
            return;
        };
        let lent = terminal.was_lent();
        drop(terminal);
        if let Some(signal) = died_of.filter(|signal| lent && is_interrupt(*signal)) {
            kill_group(0, signal);
        }
    }

    /// The guard died before the command ended (killed from outside): stops
    /// the group and says so, with the guard's exit code.
    async fn guard_died<L>(&mut self, spec: &CommandSpec) -> Result<Ending<L>> {
        let code = exit_code(std::process::ExitStatus::from_raw(self.guard_exit().await));
        tracing::warn!("the guard process died (exit code {code}) before the command ended");
        self.stop(spec).await;
        Ok(Ending::GuardDied(code))
    }

    /// Stops the group: the kill signal, then SIGKILL after the grace
    /// period; returns once every process of it is gone.
    async fn stop(&mut self, spec: &CommandSpec) {
        tracing::warn!("stopping the command (signal {})", spec.kill_signal);
        kill_group(self.id, spec.kill_signal);
        if tokio::time::timeout(spec.kill_after, self.wait_until_gone())
            .await
            .is_err()
        {
            tracing::warn!(
                "the command outlived {:?}; sending SIGKILL",
                spec.kill_after
            );
            kill_group(self.id, libc::SIGKILL);
            self.wait_until_gone().await;
        }
    }

    /// Waits until the guard and every process of the group that zklock
    /// adopted have ended (and reaps them).
    async fn wait_until_gone(&mut self) {
        self.guard_exit().await;
        while self.reap_adopted() {
            self.children_may_have_ended().await;
        }
    }

    /// The guard's wait status, once it has ended (reaped by this).
    async fn guard_exit(&mut self) -> i32 {
        loop {
            if let Some(status) = self.guard_ended {
                return status;
            }
            match sys::wait_pid(self.id, libc::WNOHANG) {
                Waited::Running => self.children_may_have_ended().await,
                Waited::Child(_, status) => self.guard_ended = Some(status),
                // Not ours to wait for (cannot happen): as if killed.
                Waited::None => self.guard_ended = Some(libc::SIGKILL),
            }
        }
    }

    /// Returns on a SIGCHLD, or after a while in any case: a SIGCHLD may be
    /// merged with one already taken.
    async fn children_may_have_ended(&mut self) {
        let _ = tokio::time::timeout(Duration::from_millis(100), self.children_ended.recv()).await;
    }

    /// Reaps the group's adopted processes that have ended; true while some
    /// are left.
    fn reap_adopted(&self) -> bool {
        loop {
            match sys::wait_pid(-self.id, libc::WNOHANG) {
                Waited::Running => return true,
                Waited::Child(..) => continue,
                Waited::None => return false,
            }
        }
    }
}

impl CommandSpec {
    /// The program and its arguments as the guard execs them.
    fn program_and_args(&self) -> Vec<String> {
        if self.shell {
            let mut argv = vec!["/bin/sh".to_owned(), "-c".to_owned()];
            argv.extend(self.argv.iter().cloned());
            argv
        } else {
            self.argv.clone()
        }
    }

    /// The command's name for messages: its first word.
    fn program(&self) -> &str {
        self.argv.first().map(String::as_str).unwrap_or("sh")
    }
}

/// The command could not be started: not found, not executable, or another
/// reason the exec failed.
#[derive(Debug, thiserror::Error)]
#[error("cannot run {name:?}")]
pub(crate) struct CannotRun {
    pub name: String,
    pub why: WhyNot,
    source: std::io::Error,
}

/// Why a command could not run, in the classes shells and env(1) tell apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WhyNot {
    NotFound,
    NotExecutable,
    Other,
}

impl CannotRun {
    fn new(name: &str, source: std::io::Error) -> CannotRun {
        let why = match source.raw_os_error() {
            Some(libc::ENOENT | libc::ENOTDIR) => WhyNot::NotFound,
            Some(libc::EACCES | libc::ENOEXEC | libc::EISDIR | libc::EPERM) => {
                WhyNot::NotExecutable
            }
            _ => WhyNot::Other,
        };
        CannotRun {
            name: name.to_owned(),
            why,
            source,
        }
    }
}

/// The exit code a shell would report: the code, or 128+n for signal n.
pub(crate) fn exit_code(status: std::process::ExitStatus) -> u8 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code as u8,
        (None, Some(signal)) => 128u8.saturating_add(signal as u8),
        (None, None) => 255,
    }
}

/// The signal number for a name like `TERM`, `SIGTERM` or `15`.
pub(crate) fn parse_signal(text: &str) -> Option<i32> {
    if let Ok(n) = text.parse::<i32>() {
        return (1..=64).contains(&n).then_some(n);
    }
    let name = text.trim_start_matches("SIG").to_ascii_uppercase();
    Some(match name.as_str() {
        "HUP" => libc::SIGHUP,
        "INT" => libc::SIGINT,
        "QUIT" => libc::SIGQUIT,
        "KILL" => libc::SIGKILL,
        "USR1" => libc::SIGUSR1,
        "USR2" => libc::SIGUSR2,
        "TERM" => libc::SIGTERM,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_signal_names_and_numbers() {
        assert_eq!(parse_signal("TERM"), Some(libc::SIGTERM));
        assert_eq!(parse_signal("SIGINT"), Some(libc::SIGINT));
        assert_eq!(parse_signal("kill"), Some(libc::SIGKILL));
        assert_eq!(parse_signal("9"), Some(9));
        assert_eq!(parse_signal("BOGUS"), None);
        assert_eq!(parse_signal("0"), None);
    }

    #[test]
    fn exit_codes_follow_the_shell() {
        assert_eq!(exit_code(std::process::ExitStatus::from_raw(3 << 8)), 3);
        assert_eq!(
            exit_code(std::process::ExitStatus::from_raw(libc::SIGTERM)),
            143
        );
    }
}
