//! `lock --detach`: hand a lock to a background holder process and return.
//!
//! A ZooKeeper session cannot move between processes, so the foreground
//! starts this same command line again as a holder (its own session, no
//! terminal, stdio on /dev/null), and waits for its word over a pipe: the
//! token once the lock is held, or the exit code and message of its failure.
//! The holder then keeps the session until it is told to let go.

use std::fs::File;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::io::AsyncReadExt;

use super::Signals;
use crate::sys::{self, pipe};
use crate::zk;

/// The hidden option that makes a zklock process the detached holder,
/// reporting on the given file descriptor.
pub(crate) const HOLDER_FLAG: &str = "--holder-report-fd";

/// The descriptor the holder reports on.
const REPORT_FD: i32 = 3;

/// The hidden option that tells the holder where to read its
/// secured-connection settings.
const SECRETS_FLAG: &str = "--holder-secrets-fd";

/// The descriptor the holder reads its secured-connection settings from.
const SECRETS_FD: i32 = 4;

/// The options that carry the secured-connection settings: the holder gets
/// them over [`SECRETS_FD`] instead, so that no secret sits in its argv for
/// the whole lease. Those that take a value, then the switches.
const SECURED_OPTIONS: [&str; 10] = [
    "--auth",
    "--auth-file",
    "--tls-ca",
    "--tls-cert",
    "--tls-key",
    "--sasl",
    "--sasl-user",
    "--sasl-password-file",
    "--sasl-service",
    "--sasl-host",
];
const SECURED_SWITCHES: [&str; 2] = ["--tls", "--tls-no-verify-hostname"];

/// A lock that is held: what `lock --detach` and `lock --ttl` print, the
/// token alone or, with `-o json`, all of it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Grant {
    /// The node path, which `zklock release` takes.
    pub token: String,
    /// The lock directory.
    pub lock: String,
    /// The fencing token: the node's czxid.
    pub fence: i64,
    /// The holding session, `0x...`.
    pub session: String,
}

/// What the holder said.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum HolderWord {
    /// The lock is held.
    Held(Grant),
    /// The holder gave up: its exit code, the cause (the JSON error's
    /// word) and message.
    Failed(u8, String, String),
}

/// Starts the holder (this process's own command line, without its
/// secured-connection options, plus [`HOLDER_FLAG`]), hands it those settings
/// over a pipe, and waits for its word. A signal meanwhile is passed on to
/// the holder, which then leaves the queue and reports.
pub(crate) async fn spawn_holder(
    signals: &mut Signals,
    secured: &zk::Secured,
) -> Result<(HolderWord, Option<i32>)> {
    let (read_end, write_end) = pipe().context("cannot make a pipe")?;
    let (secrets_read, secrets_write) = pipe().context("cannot make a pipe")?;
    let mut command =
        Command::new(std::env::current_exe().context("cannot find zklock's own binary")?);
    command
        .args(without_secured_options(std::env::args_os().skip(1)))
        .args([HOLDER_FLAG, &REPORT_FD.to_string()])
        .args([SECRETS_FLAG, &SECRETS_FD.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .current_dir("/");
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(|n| {
            ["ZKLOCK_AUTH", "ZKLOCK_TLS", "ZKLOCK_SASL"]
                .iter()
                .any(|prefix| n.starts_with(prefix))
        }) {
            command.env_remove(name);
        }
    }
    let report_raw = std::os::fd::AsRawFd::as_raw_fd(&write_end);
    let secrets_raw = std::os::fd::AsRawFd::as_raw_fd(&secrets_read);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(move || {
            // No controlling terminal, no process group of the caller's.
            sys::new_session()?;
            for (from, to) in [(report_raw, REPORT_FD), (secrets_raw, SECRETS_FD)] {
                sys::inherit_as(from, to)?;
            }
            // Nothing else of the caller's goes with the holder: a CI runner
            // waiting for EOF on a descriptor it handed zklock must not wait
            // as long as the lock is held. Closed at the exec, not here, so
            // that the exec can still report its failure.
            sys::close_on_exec_from(SECRETS_FD + 1);
            Ok(())
        });
    }
    let holder = command
        .spawn()
        .context("cannot start the background holder")?;
    drop(write_end);
    drop(secrets_read);
    // The settings are small (certificates and a few credentials), far
    // below a pipe's buffer, so this write does not wait for the holder.
    File::from(secrets_write)
        .write_all(secured.to_handover().as_bytes())
        .context("cannot hand the connection settings to the background holder")?;
    let pid = holder.id() as i32;
    let mut pipe = tokio::net::unix::pipe::Receiver::from_owned_fd(read_end)?;
    let mut text = String::new();
    let mut interrupted = None;
    let read = pipe.read_to_string(&mut text);
    tokio::pin!(read);
    loop {
        tokio::select! {
            result = &mut read => {
                result.context("cannot read the holder's report")?;
                break;
            }
            signal = signals.next(), if interrupted.is_none() => {
                interrupted = Some(signal);
                sys::kill(pid, libc::SIGTERM);
            }
        }
    }
    Ok((parse_word(&text)?, interrupted))
}

/// `args` without the secured-connection options and their values, up to a
/// `--` (what follows is a command's, not ours).
fn without_secured_options(
    args: impl Iterator<Item = std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    let mut kept = Vec::new();
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        if arg == "--" {
            kept.push(arg);
            kept.extend(args);
            break;
        }
        let text = arg.to_string_lossy();
        let name = text.split_once('=').map_or(text.as_ref(), |(name, _)| name);
        if SECURED_SWITCHES.contains(&name) {
            continue;
        }
        if SECURED_OPTIONS.contains(&name) {
            if !text.contains('=') {
                args.next();
            }
            continue;
        }
        kept.push(arg);
    }
    kept
}

fn parse_word(text: &str) -> Result<HolderWord> {
    let line = text.lines().next().unwrap_or_default();
    if let Some(grant) = line.strip_prefix("HELD ") {
        return Ok(HolderWord::Held(serde_json::from_str(grant)?));
    }
    if let Some(rest) = line.strip_prefix("FAILED ")
        && let Some((code, rest)) = rest.split_once(' ')
        && let Some((cause, message)) = rest.split_once(' ')
        && let Ok(code) = code.parse()
    {
        let message = message.replace("\\n", "\n");
        return Ok(HolderWord::Failed(code, cause.to_owned(), message));
    }
    bail!("the background holder ended without saying whether it holds the lock")
}

/// The holder's side of the pipe.
pub(crate) struct Reporter {
    pipe: File,
}

impl Reporter {
    /// The reporter on descriptor `fd`, which the foreground handed over.
    pub(crate) fn from_fd(fd: i32) -> Result<Reporter> {
        let Some(pipe) = sys::take_inherited(fd) else {
            bail!("{HOLDER_FLAG} {fd}: no such open descriptor");
        };
        Ok(Reporter {
            pipe: File::from(pipe),
        })
    }

    /// Says the lock is held, and closes the pipe so the caller returns.
    pub(crate) fn held(mut self, grant: &Grant) {
        let grant = serde_json::to_string(grant).expect("a grant serializes");
        let _ = writeln!(self.pipe, "HELD {grant}");
    }

    /// Says the holder gave up, with its exit code, cause (one word) and
    /// message.
    pub(crate) fn failed(mut self, code: u8, cause: &str, message: &str) {
        let message = message.replace('\n', "\\n");
        let _ = writeln!(self.pipe, "FAILED {code} {cause} {message}");
    }
}

/// Resolves when process `pid` has ended (at once if it does not exist).
pub(crate) async fn process_exit(pid: i32) {
    if let Some(pidfd) = sys::pidfd(pid) {
        // SAFETY: we own the descriptor and keep it open while registered.
        let registered = unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE)
        };
        if let Ok(watch) = registered {
            let _ = watch.readable().await;
            return;
        }
    }
    // Without pidfd (old kernels), ask every tenth of a second.
    while process_exists(pid) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub(crate) use sys::process_exists;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holder_gets_no_secured_option_in_its_argv() {
        let args = [
            "lock",
            "--auth",
            "digest:a:S3CRET",
            "x",
            "--auth=digest:b:S3CRET",
            "--tls",
            "--tls-key",
            "k.pem",
            "--sasl-password-file=pw",
            "--detach",
            "-H",
            "h",
        ];
        let kept = without_secured_options(args.iter().map(Into::into));
        assert_eq!(kept, ["lock", "x", "--detach", "-H", "h"]);
        let after = without_secured_options(["a", "--", "--auth", "v"].iter().map(Into::into));
        assert_eq!(after, ["a", "--", "--auth", "v"]);
    }

    #[test]
    fn parses_the_holders_word() {
        let grant = Grant {
            token: "/locks/x y/n1".into(),
            lock: "/locks/x y".into(),
            fence: 7,
            session: "0x1".into(),
        };
        let word = format!("HELD {}\n", serde_json::to_string(&grant).unwrap());
        assert_eq!(parse_word(&word).unwrap(), HolderWord::Held(grant));
        assert_eq!(
            parse_word("FAILED 3 timed_out cannot reach\\nZooKeeper\n").unwrap(),
            HolderWord::Failed(3, "timed_out".into(), "cannot reach\nZooKeeper".into())
        );
        assert!(parse_word("").is_err());
        assert!(parse_word("FAILED x y").is_err());
    }
}
