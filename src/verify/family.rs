//! The processes verify starts, and how it reaches them: by pidfd alone.
//!
//! verify starts each holder (`zklock lock ... -- zklock verify-section`)
//! itself, in a session of its own (no terminal, so no Ctrl-C of the
//! person's reaches it), asking for SIGKILL should verify die. Below each
//! holder are its guard and its section; verify is their child subreaper,
//! so when a holder dies they become verify's children, and it reaps
//! whatever ends ([`Reaper`]), the holders' exits dispatched by pid.
//!
//! A pid is a name that the kernel gives again once its process is reaped;
//! a signal sent by pid or process group after that reaches a stranger.
//! So every signal goes through a pidfd ([`Pidfd`]), which names one
//! process for good. A holder's pidfd is opened while it is verify's
//! unreaped child, when its pid cannot have moved on. The guard and
//! section below it are found from the pid the section logs, and each is
//! proven by its parent: the section's parent is the guard, whose parent
//! is the holder, read while both pidfds show their processes alive
//! ([`Below::find`]). A holder's credentials go to it over a pipe, as
//! `--detach` hands them to its background holder, never in its argv or
//! environment.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use tokio::io::unix::AsyncFd;
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::procfs;
use crate::sys::{self, Waited};

/// The descriptor a holder reads its secured-connection settings from.
const SECRETS_FD: i32 = 3;

/// One process, named by a pidfd.
pub(crate) struct Pidfd {
    pid: i32,
    fd: AsyncFd<OwnedFd>,
}

impl Pidfd {
    /// A pidfd of process `pid` now; `None` when there is none (it ended,
    /// or pidfds are missing: Linux before 5.3).
    fn open(pid: i32) -> Option<Pidfd> {
        let fd = sys::pidfd(pid)?;
        // SAFETY: the descriptor is ours, and the AsyncFd owns it: it stays
        // open for as long as it is registered.
        let fd =
            unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }.ok()?;
        Some(Pidfd { pid, fd })
    }

    /// The pid it had when opened (for messages: never to signal).
    pub(crate) fn pid(&self) -> i32 {
        self.pid
    }

    /// Sends `signal`; false when the process has ended.
    pub(crate) fn signal(&self, signal: i32) -> bool {
        sys::pidfd_signal(self.fd.get_ref().as_fd(), signal)
    }

    /// True once the process has ended.
    pub(crate) fn has_ended(&self) -> bool {
        sys::wait_readable_within([self.fd.get_ref().as_raw_fd()], 0)[0]
    }

    /// Resolves when the process has ended.
    pub(crate) async fn ended(&self) {
        // A pidfd turns readable when its process ends, and stays so.
        let _ = self.fd.readable().await;
    }
}

/// A holder as started: its pidfd, and the pipe its section reads verify's
/// word from.
pub(crate) struct Holder {
    pub zklock: Pidfd,
    /// Written to (or closed) to end the section; `None` once it was.
    word: Option<File>,
    /// What the holder writes to stderr, for the evidence of an exit code
    /// that was not the one expected.
    pub stderr: File,
}

impl Holder {
    /// Tells the section to end; later calls do nothing.
    pub(crate) fn end_section(&mut self) {
        if let Some(mut word) = self.word.take() {
            // A section gone already reads nothing: nothing to tell.
            let _ = word.write_all(b"end\n");
        }
    }
}

/// Starts `exe` with `args` as a holder: its own session, SIGKILL when
/// verify dies, standard output on `log` (the sections' shared log),
/// standard input a pipe of verify's, `secrets` written to it on a pipe.
/// No `ZKLOCK_*` or `ZK_HOSTS` variable goes with it: its settings are
/// all in `args` and `secrets`, whatever verify's environment or profile
/// said.
pub(crate) fn spawn(
    exe: &std::path::Path,
    args: &[String],
    log: &OwnedFd,
    secrets: &str,
) -> io::Result<Holder> {
    let (word_read, word_write) = sys::pipe()?;
    let (stderr_read, stderr_write) = sys::pipe()?;
    let (secrets_read, secrets_write) = sys::pipe()?;
    let mut command = Command::new(exe);
    command
        .args(args)
        .stdin(Stdio::from(word_read))
        .stdout(Stdio::from(log.try_clone()?))
        .stderr(Stdio::from(stderr_write))
        .current_dir("/");
    for (name, _) in std::env::vars_os() {
        let ours = name
            .to_str()
            .is_some_and(|name| name.starts_with("ZKLOCK_") || name == "ZK_HOSTS");
        if ours {
            command.env_remove(name);
        }
    }
    let verify = std::process::id() as libc::pid_t;
    let secrets_raw = secrets_read.as_raw_fd();
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(move || {
            sys::new_session()?;
            sys::on_parent_death(libc::SIGKILL);
            // verify may have died before the request took.
            if sys::parent_pid() != verify {
                sys::exit_now(1);
            }
            sys::inherit_as(secrets_raw, SECRETS_FD)?;
            sys::close_on_exec_from(SECRETS_FD + 1);
            Ok(())
        });
    }
    let child = command.spawn()?;
    drop(secrets_read);
    // Unreaped, the child's pid is its own until the reaper collects it.
    let zklock = Pidfd::open(child.id() as i32)
        .ok_or_else(|| io::Error::other("no pidfd for a holder (Linux 5.3 or later is needed)"))?;
    // Small, far below a pipe's buffer: the write does not wait for the holder.
    File::from(secrets_write).write_all(secrets.as_bytes())?;
    Ok(Holder {
        zklock,
        word: Some(File::from(word_write)),
        stderr: File::from(stderr_read),
    })
}

/// The option that tells a holder where its secured-connection settings
/// are.
pub(crate) fn secrets_option() -> [String; 2] {
    ["--holder-secrets-fd".to_owned(), SECRETS_FD.to_string()]
}

/// The guard and section below a holder, proven to be its.
pub(crate) struct Below {
    pub guard: Pidfd,
    pub section: Pidfd,
}

impl Below {
    /// The guard and section of the holder `zklock`, given the pid its
    /// section logged; `None` unless the section's parent is a child of
    /// `zklock`, read while both run (see the module's note).
    pub(crate) fn find(zklock: &Pidfd, section: i32) -> Option<Below> {
        let parent =
            |pid: i32| procfs::process_stat(pid, 4).and_then(|parent| i32::try_from(parent).ok());
        let section_fd = Pidfd::open(section)?;
        let guard_fd = Pidfd::open(parent(section)?)?;
        let proven = parent(section) == Some(guard_fd.pid)
            && parent(guard_fd.pid) == Some(zklock.pid)
            && !section_fd.has_ended()
            && !guard_fd.has_ended()
            && !zklock.has_ended();
        proven.then_some(Below {
            guard: guard_fd,
            section: section_fd,
        })
    }
}

/// How a reaped process ended: its wait status.
pub(crate) type WaitStatus = i32;

/// Reaps every child of verify as it ends: the holders it started and the
/// guards and sections it adopted as their subreaper.
pub(crate) struct Reaper {
    children: Signal,
}

impl Reaper {
    /// Makes verify the subreaper of its descendants.
    pub(crate) fn start() -> io::Result<Reaper> {
        sys::become_subreaper()?;
        Ok(Reaper {
            children: signal(SignalKind::child())?,
        })
    }

    /// The children that have ended since the last call, at least one:
    /// pid and wait status. Cancel-safe: nothing is reaped but in the last
    /// step, which does not wait.
    pub(crate) async fn next(&mut self) -> HashMap<i32, WaitStatus> {
        loop {
            let reaped = reap_ended();
            if !reaped.is_empty() {
                return reaped;
            }
            // A SIGCHLD may merge with one taken before: look again anyway.
            let _ =
                tokio::time::timeout(std::time::Duration::from_millis(100), self.children.recv())
                    .await;
        }
    }
}

/// Reaps every child that has ended.
fn reap_ended() -> HashMap<i32, WaitStatus> {
    let mut reaped = HashMap::new();
    while let Waited::Child(pid, status) = sys::wait_pid(-1, libc::WNOHANG) {
        reaped.insert(pid, status);
    }
    reaped
}

/// verify's children left now, each named by a pidfd proven while it is
/// still verify's child: whatever a run leaves behind (holders, or the
/// guards and sections adopted when a holder died).
pub(crate) fn children_left() -> Vec<Pidfd> {
    let me = std::process::id() as i32;
    procfs::children_of(me)
        .into_iter()
        .filter_map(|pid| {
            let fd = Pidfd::open(pid)?;
            let still_ours = procfs::process_stat(pid, 4) == u64::try_from(me).ok();
            (still_ours && !fd.has_ended()).then_some(fd)
        })
        .collect()
}

/// Kills what [`children_left`] found and reaps it.
pub(crate) fn kill_and_reap(left: &[Pidfd]) {
    for process in left {
        process.signal(libc::SIGKILL);
    }
    for process in left {
        sys::wait_pid(process.pid, 0);
    }
}
