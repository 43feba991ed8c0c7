//! Running a command under a lock (SPEC §6, §9): start it in its own process
//! group behind a guard that kills the group if zklock dies, forward signals
//! to it, and stop it when the lock is lost.

pub mod detach;
mod guard;
mod signals;

use std::future::Future;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::time::Duration;

use anyhow::{Context, Result};

pub use signals::Signals;

/// The command to run and how to stop it.
#[derive(Clone, Debug)]
pub struct CommandSpec {
    /// The command and its arguments; with `shell`, one string for `sh -c`.
    pub argv: Vec<String>,
    pub shell: bool,
    /// Extra environment (`ZKLOCK_LOCK`, `ZKLOCK_NODE`, ...).
    pub env: Vec<(String, String)>,
    /// Sent to the process group when the lock is lost.
    pub kill_signal: i32,
    /// How long to wait after `kill_signal` before SIGKILL.
    pub kill_after: Duration,
}

/// How a supervised command ended.
#[derive(Debug)]
pub enum Ending<L> {
    /// It exited by itself: its exit code (128+n if killed by signal n).
    Exited(u8),
    /// The lock was lost and the command was stopped.
    Stopped(L),
}

/// Runs the command until it exits, forwarding `signals` to its process
/// group. If `lost` resolves first, the command's group gets the kill signal,
/// then SIGKILL after the grace period, and the loss is returned.
pub async fn supervise<L>(
    spec: &CommandSpec,
    signals: &mut Signals,
    lost: impl Future<Output = L>,
) -> Result<Ending<L>> {
    let mut child = spawn(spec)?;
    let group = child.id().context("the command has no process id")? as i32;
    tokio::pin!(lost);
    loop {
        tokio::select! {
            status = child.wait() => return Ok(Ending::Exited(exit_code(status?))),
            signal = signals.next() => {
                tracing::info!("forwarding signal {signal} to the command");
                kill_group(group, signal);
            }
            loss = &mut lost => {
                stop(&mut child, group, spec).await?;
                return Ok(Ending::Stopped(loss));
            }
        }
    }
}

fn spawn(spec: &CommandSpec) -> Result<tokio::process::Child> {
    let mut command = if spec.shell {
        let mut command = std::process::Command::new("/bin/sh");
        command.arg("-c").args(&spec.argv);
        command
    } else {
        let mut command = std::process::Command::new(&spec.argv[0]);
        command.args(&spec.argv[1..]);
        command
    };
    command.envs(spec.env.iter().map(|(k, v)| (k, v)));
    command.process_group(0);
    let zklock = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the child, in its own process group, and
    // makes only async-signal-safe calls.
    unsafe {
        command.pre_exec(move || guard::split_off(zklock));
    }
    let name = spec.argv.first().map(String::as_str).unwrap_or("sh");
    tokio::process::Command::from(command)
        .kill_on_drop(false)
        .spawn()
        .with_context(|| format!("cannot run {name:?}"))
}

/// Stops the command: the kill signal to its group, then SIGKILL after the
/// grace period.
async fn stop(child: &mut tokio::process::Child, group: i32, spec: &CommandSpec) -> Result<()> {
    tracing::warn!("stopping the command (signal {})", spec.kill_signal);
    kill_group(group, spec.kill_signal);
    if tokio::time::timeout(spec.kill_after, child.wait())
        .await
        .is_err()
    {
        tracing::warn!(
            "the command outlived {:?}; sending SIGKILL",
            spec.kill_after
        );
        kill_group(group, libc::SIGKILL);
        child.wait().await?;
    }
    Ok(())
}

fn kill_group(group: i32, signal: i32) {
    // SAFETY: killpg has no memory-safety preconditions; a gone group is ESRCH.
    unsafe {
        libc::killpg(group, signal);
    }
}

/// The exit code a shell would report: the code, or 128+n for signal n.
pub fn exit_code(status: std::process::ExitStatus) -> u8 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code as u8,
        (None, Some(signal)) => 128u8.saturating_add(signal as u8),
        (None, None) => 255,
    }
}

/// The signal number for a name like `TERM`, `SIGTERM` or `15`.
pub fn parse_signal(text: &str) -> Option<i32> {
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
