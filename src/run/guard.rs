//! The guard between zklock and its command: the command's whole process
//! group dies with zklock, even a SIGKILLed zklock, and zklock learns how the
//! command ended from the guard's report, never from the guard's own end.
//!
//! A parent-death signal reaches only the process that asked for it, and a
//! fork clears it, so a command's own children (`sh -c 'a & b'`) would
//! outlive zklock. Instead a guard process stays between zklock and the
//! command, leads the command's process group, asks for a parent-death
//! signal, and when it comes kills the whole group. The command itself asks
//! for SIGKILL when the guard dies, so it dies even when zklock and the guard
//! are killed together.
//!
//! The guard is forked early: by [`stand_by`], from `main`, while zklock is
//! still one thread with a small address space and no descriptor but its
//! standard streams, so the fork is cheap and the child may run ordinary
//! code. By the time the lock is ours zklock is a runtime with threads, a
//! ZooKeeper socket and megabytes of memory; forking all that on the way to
//! the command cost more than the rest of the hand-over. The guard sets
//! itself up at once (its own process group, the parent-death signal, child
//! subreaper, every signal blocked) and waits on a pipe. When the lock is
//! held, zklock sends the command line and its extra environment down that
//! pipe ([`Standby::start`]); the guard forks the command (cheap: the guard
//! is small), which joins the guard's group, restores the signal state
//! zklock started with, and execs. The guard's first word on its report pipe
//! says whether the exec worked. When zklock gives up instead, or dies, the
//! guard ends without starting anything ([`dismiss`] makes sure of it before
//! zklock exits).
//!
//! From then on the guard adopts the group's orphans (it is a child
//! subreaper) and waits until the command and every other process of the
//! group has ended: the lock is held as long as any of them runs, the way
//! flock(1)'s lock lives as long as a process holds the inherited
//! descriptor. Then it writes the command's wait status to the report pipe
//! and ends the same way the command did.
//!
//! The parent-death signal fires when the thread that forked the guard ends,
//! not the process: `main`'s thread forks it, and that thread runs the
//! runtime until zklock exits.

use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::sync::Mutex;

use super::signals::FORWARDED;

/// The guard forked at start-up, until zklock starts the command behind it
/// or gives up.
static STANDING_BY: Mutex<Option<Standby>> = Mutex::new(None);

/// Forks the guard, which waits for the command until zklock starts it
/// ([`take`], [`Standby::start`]) or gives up ([`dismiss`]).
///
/// Only while the process has a single thread: the child runs ordinary code.
pub(crate) fn stand_by() -> io::Result<()> {
    let (go_read, go_write) = pipe()?;
    let (report_read, report_write) = pipe()?;
    // SAFETY: plain libc calls; the caller guarantees a single thread, so
    // the child may go on with ordinary code.
    let original_mask = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut original: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        // Blocked before the fork, so that no signal reaches the guard
        // before it is ready for it.
        libc::sigprocmask(libc::SIG_BLOCK, &all, &mut original);
        original
    };
    let zklock = std::process::id() as libc::pid_t;
    // SAFETY: see above.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        drop((go_write, report_read));
        guard(zklock, go_read, report_write, &original_mask);
    }
    let forked = io::Error::last_os_error();
    // SAFETY: restores the mask saved above.
    unsafe { libc::sigprocmask(libc::SIG_SETMASK, &original_mask, std::ptr::null_mut()) };
    if pid < 0 {
        return Err(forked);
    }
    drop((go_read, report_write));
    let standby = Standby {
        pid,
        go: Some(go_write),
        report: Some(report_read),
    };
    *STANDING_BY.lock().unwrap_or_else(|p| p.into_inner()) = Some(standby);
    Ok(())
}

/// The guard forked at start-up, for the caller to start the command behind.
pub(super) fn take() -> Option<Standby> {
    STANDING_BY.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// Ends the guard forked at start-up if no command was started behind it:
/// it is gone when this returns.
pub(crate) fn dismiss() {
    drop(take());
}

/// A guard waiting for its command; dropped before the command is handed
/// over, it is killed and reaped.
pub(super) struct Standby {
    pid: libc::pid_t,
    /// The pipe on which zklock sends the command; closed unused, it tells
    /// the guard to end.
    go: Option<OwnedFd>,
    report: Option<OwnedFd>,
}

impl Standby {
    /// The guard's pid, the id of the process group the command will join.
    pub(super) fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Sends the guard `argv` (the program first) and `env` (added to the
    /// environment zklock started with), which it starts at once; returns
    /// the read end of the guard's report pipe.
    pub(super) fn start(
        mut self,
        argv: &[String],
        env: &[(String, String)],
    ) -> io::Result<OwnedFd> {
        let go = self.go.take().expect("a standby guard has its go pipe");
        // A broken pipe (the guard died) is an error here, not a signal:
        // the Rust runtime ignores SIGPIPE.
        std::fs::File::from(go).write_all(&encode(argv, env))?;
        Ok(self
            .report
            .take()
            .expect("a standby guard has its report pipe"))
    }
}

impl Drop for Standby {
    fn drop(&mut self) {
        if self.report.is_some() {
            // SAFETY: the guard is our unreaped child, so its pid is still
            // its own; it started nothing that a kill could leave behind.
            unsafe {
                libc::kill(self.pid, libc::SIGKILL);
                libc::waitpid(self.pid, std::ptr::null_mut(), 0);
            }
        }
    }
}

/// A pipe with both ends closed on exec: (read end, write end).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two descriptors, which we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors are fresh and ours alone.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The command as the go pipe carries it: the number of arguments, the
/// arguments, then the `NAME=value` pairs of the extra environment, each
/// NUL-terminated (none of them can hold a NUL), after the length of the
/// whole, so that a message cut short by zklock's death is never taken for
/// a command.
fn encode(argv: &[String], env: &[(String, String)]) -> Vec<u8> {
    let mut body = format!("{}\0", argv.len()).into_bytes();
    for arg in argv {
        body.extend_from_slice(arg.as_bytes());
        body.push(0);
    }
    for (name, value) in env {
        body.extend_from_slice(format!("{name}={value}\0").as_bytes());
    }
    let mut message = (body.len() as u64).to_ne_bytes().to_vec();
    message.extend_from_slice(&body);
    message
}

/// The command a message of [`encode`] carries: (argv, env); `None` when it
/// is incomplete or malformed.
fn decode(message: &[u8]) -> Option<(Vec<String>, Vec<(String, String)>)> {
    let (length, body) = message.split_first_chunk::<8>()?;
    if u64::from_ne_bytes(*length) != body.len() as u64 || body.last() != Some(&0) {
        return None;
    }
    let mut fields = body[..body.len() - 1]
        .split(|byte| *byte == 0)
        .map(|field| String::from_utf8(field.to_vec()).ok());
    let argc: usize = fields.next()??.parse().ok()?;
    let argv: Vec<String> = fields.by_ref().take(argc).collect::<Option<_>>()?;
    let env = fields
        .map(|pair| {
            let pair = pair?;
            let (name, value) = pair.split_once('=')?;
            Some((name.to_owned(), value.to_owned()))
        })
        .collect::<Option<_>>()?;
    (argc > 0 && argv.len() == argc).then_some((argv, env))
}

/// The guard's first word on the report pipe once the command was started:
/// the command execs. Any other word is the errno of the failed start.
pub(super) const STARTED: i32 = 0;

/// The signal the guard gets when zklock dies: one zklock never forwards.
fn death_signal() -> libc::c_int {
    libc::SIGRTMIN() + 1
}

/// The guard process: sets itself up, waits for the command, starts it and
/// watches over its group until every process of it has ended. Never
/// returns. Every signal is blocked on entry; `original_mask` is zklock's.
fn guard(zklock: libc::pid_t, go: OwnedFd, report: OwnedFd, original_mask: &libc::sigset_t) -> ! {
    // SAFETY: plain libc calls on values of our own.
    unsafe {
        // Its own process group, for the command to join: zklock forwards
        // signals to it, and the terminal is lent to it.
        libc::setpgid(0, 0);
        libc::prctl(libc::PR_SET_NAME, c"zklock-guard".as_ptr());
        libc::prctl(libc::PR_SET_PDEATHSIG, death_signal());
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
        if libc::getppid() != zklock {
            libc::_exit(0);
        }
    }
    let Some((argv, env)) = wait_for_command(go) else {
        // SAFETY: ends the guard without running anything of zklock's.
        unsafe { libc::_exit(0) }
    };
    let report = report.as_raw_fd();
    match start_command(&argv, &env, original_mask) {
        Ok(command) => {
            say(report, STARTED);
            // SAFETY: see watch_over.
            unsafe { watch_over(command, report) }
        }
        Err(err) => {
            say(report, err.raw_os_error().unwrap_or(libc::EIO));
            // SAFETY: ends the guard; the command never ran.
            unsafe { libc::_exit(127) }
        }
    }
}

/// Reads the command from the go pipe; `None` when zklock closed it without
/// one (it gave up) or died.
fn wait_for_command(go: OwnedFd) -> Option<(Vec<String>, Vec<(String, String)>)> {
    let zklock_died = death_notice()?;
    let mut go = std::fs::File::from(go);
    let mut message = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let mut ready = [
            libc::pollfd {
                fd: zklock_died.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: go.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: poll writes only the two entries we own.
        if unsafe { libc::poll(ready.as_mut_ptr(), 2, -1) } < 0 {
            continue;
        }
        if ready[0].revents != 0 {
            return None;
        }
        match go.read(&mut chunk) {
            Ok(0) => return decode(&message),
            Ok(n) => message.extend_from_slice(&chunk[..n]),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

/// A descriptor that becomes readable when the parent-death signal comes
/// (it stays pending, blocked, for the guard's later wait as well).
fn death_notice() -> Option<OwnedFd> {
    // SAFETY: sigset_t is plain data; signalfd returns a new descriptor.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, death_signal());
        let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC);
        (fd >= 0).then(|| OwnedFd::from_raw_fd(fd))
    }
}

/// Forks and execs the command in the guard's process group; returns its
/// pid once the exec has worked.
fn start_command(
    argv: &[String],
    env: &[(String, String)],
    original_mask: &libc::sigset_t,
) -> io::Result<libc::pid_t> {
    let mut command = std::process::Command::new(&argv[0]);
    command.args(&argv[1..]);
    command.envs(env.iter().map(|(name, value)| (name, value)));
    let guard = std::process::id() as libc::pid_t;
    let original_mask = *original_mask;
    // SAFETY: the closure runs in the forked child of this single-threaded
    // process, and makes only async-signal-safe calls.
    unsafe {
        command.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != guard {
                libc::raise(libc::SIGKILL);
            }
            restore_signals(&original_mask);
            Ok(())
        });
    }
    command.spawn().map(|child| child.id() as libc::pid_t)
}

/// The signal state the command starts with: the one zklock started with,
/// except that the signals zklock forwards, SIGCHLD and SIGPIPE take their
/// default action, as they would after an exec of zklock's runtime, which
/// catches the first ones and ignores SIGPIPE.
///
/// # Safety
/// Async-signal-safe: for the child between fork and exec.
unsafe fn restore_signals(original_mask: &libc::sigset_t) {
    // SAFETY: plain libc calls.
    unsafe {
        for signal in FORWARDED.into_iter().chain([libc::SIGCHLD, libc::SIGPIPE]) {
            libc::signal(signal, libc::SIG_DFL);
        }
        libc::sigprocmask(libc::SIG_SETMASK, original_mask, std::ptr::null_mut());
    }
}

/// Writes one word to the report pipe (zklock may be gone: then nobody reads).
fn say(report: RawFd, word: libc::c_int) {
    let bytes = word.to_ne_bytes();
    // SAFETY: writes from a buffer we own.
    unsafe {
        libc::write(report, bytes.as_ptr().cast(), bytes.len());
    }
}

/// Waits for the command and every other process of its group, reports the
/// command's wait status, and ends like it. When zklock dies first, kills
/// the group.
///
/// # Safety
/// Only in the guard, with SIGCHLD and the death signal blocked.
unsafe fn watch_over(command: libc::pid_t, report: RawFd) -> ! {
    // SAFETY: plain libc calls on values of our own.
    unsafe {
        close_all_but(report);
        let waited = guard_signals();
        let mut command_status = None;
        loop {
            reap(command, &mut command_status);
            if let Some(status) = command_status
                && !group_has_children()
            {
                say(report, status);
                end_like(status);
            }
            let mut info: libc::siginfo_t = std::mem::zeroed();
            if libc::sigwaitinfo(&waited, &mut info) == death_signal() {
                libc::killpg(0, libc::SIGKILL);
            }
        }
    }
}

/// The signals the guard waits for: its command's end, and zklock's death.
unsafe fn guard_signals() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; the calls only fill it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::sigaddset(&mut set, death_signal());
        set
    }
}

/// Holds nothing open but `keep`: not the standard streams, which are the
/// command's.
unsafe fn close_all_but(keep: RawFd) {
    // SAFETY: closing descriptors has no memory-safety preconditions.
    unsafe {
        let keep = keep as u32;
        let below = keep == 0 || libc::syscall(libc::SYS_close_range, 0u32, keep - 1, 0u32) == 0;
        let above = libc::syscall(libc::SYS_close_range, keep + 1, u32::MAX, 0u32) == 0;
        if !(below && above) {
            for fd in (0..1024).filter(|fd| *fd != keep as i32) {
                libc::close(fd);
            }
        }
    }
}

/// Reaps every child that has ended (the command, and orphans of the group
/// the guard adopted), noting the command's status. A child stopped by
/// SIGTSTP (Ctrl-Z) has its group continued: see [`continue_after_ctrl_z`].
unsafe fn reap(command: libc::pid_t, command_status: &mut Option<libc::c_int>) {
    // SAFETY: waitpid only writes the status we own.
    unsafe {
        loop {
            let mut status = 0;
            match libc::waitpid(-1, &mut status, libc::WNOHANG | libc::WUNTRACED) {
                stopped if stopped > 0 && libc::WIFSTOPPED(status) => {
                    continue_after_ctrl_z(libc::WSTOPSIG(status));
                }
                ended if ended == command => *command_status = Some(status),
                ended if ended > 0 => {}
                _ => return,
            }
        }
    }
}

/// A command under a lock is never left suspended. Ctrl-Z stops the
/// terminal's foreground group, which is the command's; zklock itself runs
/// on (it must, to keep the session that keeps the lock), so the shell that
/// started zklock would wait for it with the terminal held by a stopped
/// group: nothing could continue it. The guard continues the group at once
/// instead, so Ctrl-Z does nothing, as for a program that ignores it. Stops
/// for other reasons (SIGSTOP, or reading the terminal from the background)
/// are left alone: whoever stopped the command continues it.
unsafe fn continue_after_ctrl_z(stop_signal: libc::c_int) {
    if stop_signal == libc::SIGTSTP {
        // SAFETY: killpg has no memory-safety preconditions.
        unsafe {
            libc::killpg(0, libc::SIGCONT);
        }
    }
}

/// True while a child of the guard is still in its process group: the
/// group's processes either are such children or descend from one.
unsafe fn group_has_children() -> bool {
    // SAFETY: WNOWAIT leaves the child as it is; the status is ours.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(
            libc::P_PGID,
            libc::getpgrp() as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        ) == 0
    }
}

/// Ends the guard the way the command ended: with its exit code, or killed
/// by the same signal.
unsafe fn end_like(status: libc::c_int) -> ! {
    // SAFETY: plain libc calls.
    unsafe {
        if libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            libc::signal(signal, libc::SIG_DFL);
            // Only that signal: others forwarded to the group wait, blocked,
            // and must not end the guard in its place.
            let mut only: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut only);
            libc::sigaddset(&mut only, signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, &only, std::ptr::null_mut());
            libc::kill(libc::getpid(), signal);
            libc::_exit(128 + signal);
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn the_command_crosses_the_go_pipe_whole() {
        let argv = strings(&["sh", "-c", "echo a=b; exit 3", ""]);
        let env = vec![
            (
                "ZKLOCK_NODE".to_owned(),
                "/locks/x y/_c_1-lock-0000000001".to_owned(),
            ),
            ("ZKLOCK_EMPTY".to_owned(), String::new()),
            ("ZKLOCK_EQUALS".to_owned(), "a=b".to_owned()),
        ];
        assert_eq!(decode(&encode(&argv, &env)), Some((argv.clone(), env)));
        assert_eq!(decode(&encode(&argv, &[])), Some((argv, Vec::new())));
    }

    #[test]
    fn a_message_cut_short_is_no_command() {
        let message = encode(&strings(&["true"]), &[("A".into(), "1".into())]);
        for cut in 0..message.len() {
            assert_eq!(decode(&message[..cut]), None, "cut at {cut}");
        }
        assert_eq!(decode(&encode(&[], &[])), None, "no program");
    }
}
