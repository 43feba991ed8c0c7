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
//! The guard is forked early: by [`fork`], from `main`, while zklock is
//! still one thread with a small address space and no descriptor but its
//! standard streams, so the fork is cheap and the child may run ordinary
//! code. By the time the lock is ours zklock is a runtime with threads, a
//! ZooKeeper socket and megabytes of memory; forking all that on the way to
//! the command cost more than the rest of the hand-over. The guard sets
//! itself up at once (its own process group, the parent-death signal, child
//! subreaper, every signal blocked) and waits on a pipe. When the lock is
//! held, zklock sends the command line and its extra environment down that
//! pipe ([`Standby::start`]); the guard starts the command the way
//! posix_spawn does, with a child that shares the guard's memory until it
//! execs (so not even the guard's page tables are copied), which joins the
//! guard's group, asks for SIGKILL when the guard dies, restores the signal
//! state zklock started with, and execs. The guard's first word on its
//! report pipe says whether the exec worked. When zklock gives up instead,
//! or dies, the guard ends without starting anything (a [`Standby`] dropped
//! unused makes sure of it). The guard's copy of zklock's memory keeps
//! nothing of the parsed settings: the caller drops them in the guard
//! before it serves, and a [`Secret`](crate::zk::Secret) wipes its bytes as
//! it goes.
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

use std::ffi::{CStr, CString};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStringExt;

use crate::sys::{self, Forked, Waited, pipe};

/// What [`fork`] leaves in each process.
pub(crate) enum Fork {
    /// In zklock: the guard, waiting for the command.
    Zklock(Standby),
    /// In the guard process: what it runs, once the caller has dropped what
    /// the guard needs none of (the parsed settings and their secrets).
    Guard(Guard),
}

/// The guard process's side of [`fork`], ready to set itself up and wait.
pub(crate) struct Guard {
    zklock: libc::pid_t,
    go: OwnedFd,
    report: OwnedFd,
    original_mask: libc::sigset_t,
}

impl Guard {
    /// Runs the guard: waits for the command, starts it and watches over
    /// its group until every process of it has ended. Never returns.
    pub(crate) fn serve(self) -> ! {
        guard(self.zklock, self.go, self.report, &self.original_mask)
    }
}

/// Forks the guard, which waits for the command until zklock starts it
/// ([`Standby::start`]) or gives up (drops the [`Standby`]).
///
/// Only while the process has a single thread: the child runs ordinary code.
pub(crate) fn fork() -> io::Result<Fork> {
    let (go_read, go_write) = pipe()?;
    let (report_read, report_write) = pipe()?;
    // Blocked before the fork, so that no signal reaches the guard before
    // it is ready for it.
    let original_mask = sys::block_all_signals();
    let zklock = std::process::id() as libc::pid_t;
    // The caller guarantees a single thread, so the child may go on with
    // ordinary code.
    let forked = match sys::fork() {
        Ok(Forked::Child) => {
            drop((go_write, report_read));
            return Ok(Fork::Guard(Guard {
                zklock,
                go: go_read,
                report: report_write,
                original_mask,
            }));
        }
        Ok(Forked::Parent(pid)) => Ok(pid),
        Err(err) => Err(err),
    };
    sys::set_signal_mask(&original_mask);
    let pid = forked?;
    // As the guard does itself: whichever comes first, its group exists
    // before zklock can lend it the terminal.
    sys::set_process_group(pid, pid);
    drop((go_read, report_write));
    Ok(Fork::Zklock(Standby {
        pid,
        go: Some(go_write),
        report: Some(report_read),
    }))
}

/// A guard waiting for its command; dropped before the command is handed
/// over, it is killed and reaped.
pub(crate) struct Standby {
    pid: libc::pid_t,
    /// The pipe on which zklock sends the command; closed unused, it tells
    /// the guard to end.
    go: Option<OwnedFd>,
    report: Option<OwnedFd>,
}

impl Standby {
    /// The guard's pid, the id of the process group the command will join.
    pub(crate) fn pid(&self) -> libc::pid_t {
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
            // The guard is our unreaped child, so its pid is still its own;
            // it started nothing that a kill could leave behind.
            sys::kill(self.pid, libc::SIGKILL);
            sys::wait_pid(self.pid, 0);
        }
    }
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

/// The command a message of [`encode`] carries, as C strings within it:
/// (argv, the extra `NAME=value` pairs); `None` when it is incomplete or
/// malformed.
fn decode(
    message: &[u8],
) -> Option<(
    impl Iterator<Item = &CStr> + Clone,
    impl Iterator<Item = &CStr> + Clone,
)> {
    let (length, body) = message.split_first_chunk::<8>()?;
    if u64::from_ne_bytes(*length) != body.len() as u64 || body.last() != Some(&0) {
        return None;
    }
    let mut fields = body
        .split_inclusive(|byte| *byte == 0)
        .map(|field| CStr::from_bytes_with_nul(field).expect("one NUL, at the end"));
    let argc: usize = fields.next()?.to_str().ok()?.parse().ok()?;
    let env = fields.clone().skip(argc);
    let well_formed = argc > 0
        && fields.clone().count() >= argc
        && env.clone().all(|pair| pair.to_bytes().contains(&b'='));
    well_formed.then_some((fields.take(argc), env))
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
    // Its own process group, for the command to join: zklock forwards
    // signals to it, and the terminal is lent to it.
    sys::set_process_group(0, 0);
    sys::set_process_name(c"zklock-guard");
    sys::on_parent_death(death_signal());
    let _ = sys::become_subreaper();
    if sys::parent_pid() != zklock {
        sys::exit_now(0);
    }
    // Whatever does not depend on the command is made ready while zklock
    // waits for the lock: after the fork, the first write to each page of
    // memory costs a fault, and none of them should come after the lock.
    let mut launcher = Launcher::new(original_mask);
    let mut message = written_buffer();
    if !wait_for_command(go, &mut message) {
        sys::exit_now(0);
    }
    let report = report.as_raw_fd();
    let started = match decode(&message) {
        Some((argv, env)) => launcher.start(argv, env),
        None => Err(io::Error::from_raw_os_error(libc::EINVAL)),
    };
    match started {
        Ok(command) => {
            say(report, STARTED);
            watch_over(command, report)
        }
        Err(err) => {
            say(report, err.raw_os_error().unwrap_or(libc::EIO));
            // The command never ran.
            sys::exit_now(127)
        }
    }
}

/// An empty buffer whose room has been written, so that filling it later
/// costs no page faults.
fn written_buffer<T: Copy + Default>() -> Vec<T> {
    let mut buffer = vec![T::default(); 16 * 1024 / size_of::<T>()];
    buffer.clear();
    buffer
}

/// Reads the command from the go pipe into `message`; false when zklock
/// closed it without one (it gave up) or died.
fn wait_for_command(go: OwnedFd, message: &mut Vec<u8>) -> bool {
    // Readable when the parent-death signal comes (it stays pending,
    // blocked, for the guard's later wait as well).
    let Some(zklock_died) = sys::signal_descriptor(&[death_signal()]) else {
        return false;
    };
    let mut go = std::fs::File::from(go);
    let mut chunk = [0u8; 4096];
    loop {
        let [died, _] = sys::wait_readable([zklock_died.as_raw_fd(), go.as_raw_fd()]);
        if died {
            return false;
        }
        match go.read(&mut chunk) {
            Ok(0) => return !message.is_empty(),
            Ok(n) => message.extend_from_slice(&chunk[..n]),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// What starting the command takes but the command itself: the environment
/// zklock started with, and memory for the pointer arrays exec takes and
/// for the stack of the command's side of the clone.
struct Launcher {
    /// `NAME=value`.
    inherited_env: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
    stack: Vec<u8>,
    original_mask: libc::sigset_t,
}

impl Launcher {
    fn new(original_mask: &libc::sigset_t) -> Launcher {
        let inherited_env = std::env::vars_os()
            .filter_map(|(name, value)| {
                let mut pair = name.into_vec();
                pair.push(b'=');
                pair.extend(value.into_vec());
                CString::new(pair).ok()
            })
            .collect();
        Launcher {
            inherited_env,
            argv: written_buffer(),
            envp: written_buffer(),
            stack: vec![1; command_stack(512)],
            original_mask: *original_mask,
        }
    }

    /// Starts `argv` (the program first) with `extra_env` (`NAME=value`) in
    /// the guard's process group, and returns its pid once it has exec'd:
    /// the way posix_spawn does, with a child that shares the guard's memory
    /// (no page tables to copy) while the guard waits for its exec.
    /// posix_spawn itself cannot ask for the parent-death signal.
    fn start<'a>(
        &'a mut self,
        argv: impl Iterator<Item = &'a CStr>,
        extra_env: impl Iterator<Item = &'a CStr> + Clone,
    ) -> io::Result<libc::pid_t> {
        self.argv.clear();
        self.argv.extend(argv.map(CStr::as_ptr));
        self.argv.push(std::ptr::null());
        self.envp.clear();
        self.envp
            .extend(environment(&self.inherited_env, extra_env).map(CStr::as_ptr));
        self.envp.push(std::ptr::null());
        let room = command_stack(self.argv.len());
        if self.stack.len() < room {
            self.stack.resize(room, 0);
        }
        let mut exec = Exec {
            argv: self.argv.as_ptr(),
            envp: self.envp.as_ptr(),
            original_mask: self.original_mask,
            guard: std::process::id() as libc::pid_t,
            errno: 0,
        };
        // The top of the stack, aligned as the ABI wants it.
        let top = (self.stack.as_mut_ptr_range().end as usize) & !15;
        // SAFETY: the child runs `exec_command` on its own stack, on memory
        // the guard keeps alive and leaves alone until the child has exec'd
        // or exited: CLONE_VFORK suspends the guard until then.
        let pid = unsafe {
            libc::clone(
                exec_command,
                top as *mut libc::c_void,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                (&raw mut exec).cast(),
            )
        };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the child has exec'd or exited: the field is the guard's
        // again.
        let errno = unsafe { std::ptr::read_volatile(&raw const exec.errno) };
        if errno != 0 {
            // Reaps the child that failed to exec.
            sys::wait_pid(pid, 0);
            return Err(io::Error::from_raw_os_error(errno));
        }
        Ok(pid)
    }
}

/// The `inherited` environment with `extra` added, each replacing an
/// inherited variable of its name (as for a zklock run by the command of
/// another).
fn environment<'a>(
    inherited: &'a [CString],
    extra: impl Iterator<Item = &'a CStr> + Clone,
) -> impl Iterator<Item = &'a CStr> {
    fn name(pair: &CStr) -> &[u8] {
        let bytes = pair.to_bytes();
        &bytes[..bytes.iter().position(|b| *b == b'=').unwrap_or(bytes.len())]
    }
    let replaced = extra.clone();
    inherited
        .iter()
        .map(CString::as_c_str)
        .filter(move |pair| !replaced.clone().any(|added| name(added) == name(pair)))
        .chain(extra)
}

/// The stack the command's side of the clone needs for `argc` arguments:
/// a PATH search builds each candidate path on it, and a script without
/// `#!` goes to sh with a copy of its argv, one longer.
fn command_stack(argc: usize) -> usize {
    16 * 1024 + (argc + 2) * size_of::<usize>()
}

/// What the command's side of the clone reads and writes: prepared by the
/// guard beforehand, so that the child only makes system calls.
struct Exec {
    /// The program first, null-terminated.
    argv: *const *const libc::c_char,
    /// `NAME=value` pairs, null-terminated.
    envp: *const *const libc::c_char,
    original_mask: libc::sigset_t,
    guard: libc::pid_t,
    /// Set by the child when the exec failed.
    errno: libc::c_int,
}

/// The command's side, between clone and exec: dies with the guard, takes
/// the signal state zklock started with, and execs, searching PATH as a
/// shell does. Shares the guard's memory: nothing here may allocate or take
/// a lock (the [`sys`] calls made here make system calls only).
extern "C" fn exec_command(exec: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `exec` is the guard's `Exec`, alive until this execs or exits,
    // and the guard leaves it alone meanwhile (CLONE_VFORK).
    let exec = unsafe { &mut *exec.cast::<Exec>() };
    sys::on_parent_death(libc::SIGKILL);
    if sys::parent_pid() != exec.guard {
        sys::exit_now(127);
    }
    restore_signals(&exec.original_mask);
    // SAFETY: argv and envp are null-terminated arrays of pointers to
    // NUL-terminated strings that the guard keeps alive; glibc's execvpe
    // runs without allocating.
    unsafe { libc::execvpe(*exec.argv, exec.argv, exec.envp) };
    exec.errno = io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO);
    sys::exit_now(127)
}

/// The signal state the command starts with: the one zklock started with,
/// which the guard still has (it was forked before zklock caught any
/// signal), so that a signal ignored when zklock started (`nohup`, `trap ''
/// HUP`, the SIGINT and SIGQUIT of a background job) stays ignored, as
/// under flock(1). Only SIGCHLD and SIGPIPE take their default action: the
/// guard waits for SIGCHLD, and the Rust runtime ignored SIGPIPE before
/// `main`, whatever zklock was started with. Async-signal-safe: for the
/// child between clone and exec.
fn restore_signals(original_mask: &libc::sigset_t) {
    for signal in [libc::SIGCHLD, libc::SIGPIPE] {
        sys::default_action(signal);
    }
    sys::set_signal_mask(original_mask);
}

/// Writes one word to the report pipe (zklock may be gone: then nobody reads).
fn say(report: RawFd, word: libc::c_int) {
    sys::write_once(report, &word.to_ne_bytes());
}

/// Waits for the command and every other process of its group, reports the
/// command's wait status, and ends like it. When zklock dies first, kills
/// the group. Only in the guard, with SIGCHLD and the death signal blocked.
fn watch_over(command: libc::pid_t, report: RawFd) -> ! {
    // Nothing open but the report pipe: not the standard streams, which are
    // the command's.
    sys::close_all_but(report);
    // Its command's end, and zklock's death.
    let waited = sys::signal_set(&[libc::SIGCHLD, death_signal()]);
    let mut command_status = None;
    loop {
        reap(command, &mut command_status, report);
        // While a child of the guard is still in its process group (the
        // group's processes either are such children or descend from one).
        if let Some(status) = command_status
            && !sys::group_has_children(sys::process_group())
        {
            say(report, status);
            end_like(status);
        }
        if sys::wait_for_signal(&waited) == death_signal() {
            sys::kill_group(0, libc::SIGKILL);
        }
    }
}

/// Reaps every child that has ended (the command, and orphans of the group
/// the guard adopted), noting the command's status. When Ctrl-Z (SIGTSTP)
/// stopped any of them, the group is continued: see
/// [`continue_after_ctrl_z`].
fn reap(command: libc::pid_t, command_status: &mut Option<libc::c_int>, report: RawFd) {
    let mut ctrl_z = false;
    while let Waited::Child(pid, status) = sys::wait_pid(-1, libc::WNOHANG | libc::WUNTRACED) {
        if libc::WIFSTOPPED(status) {
            ctrl_z |= libc::WSTOPSIG(status) == libc::SIGTSTP;
        } else if pid == command {
            *command_status = Some(status);
        }
    }
    if ctrl_z {
        continue_after_ctrl_z(report);
    }
}

/// A command under a lock is never left suspended. Ctrl-Z stops the
/// terminal's foreground group, which is the command's; zklock itself runs
/// on (it must, to keep the session that keeps the lock), so the shell that
/// started zklock would wait for it with the terminal held by a stopped
/// group: nothing could continue it. The guard continues the group at once
/// instead, so Ctrl-Z does nothing, as for a program that ignores it, and
/// tells zklock, which says so on the terminal (the guard has no terminal
/// of its own: its standard streams are closed). Stops for other reasons
/// (SIGSTOP, or reading the terminal from the background) are left alone:
/// whoever stopped the command continues it.
fn continue_after_ctrl_z(report: RawFd) {
    sys::kill_group(0, libc::SIGCONT);
    say(report, CONTINUED_AFTER_CTRL_Z);
}

/// The guard's word when it has continued its group after Ctrl-Z: a stop
/// status, which its last word (how the command ended) never is.
pub(super) const CONTINUED_AFTER_CTRL_Z: i32 = 0x7f | (libc::SIGTSTP << 8);

/// Ends the guard the way the command ended: with its exit code, or killed
/// by the same signal.
fn end_like(status: libc::c_int) -> ! {
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        sys::default_action(signal);
        // Only that signal: others forwarded to the group wait, blocked,
        // and must not end the guard in its place.
        sys::unblock(&[signal]);
        sys::kill(std::process::id() as libc::pid_t, signal);
        sys::exit_now(128 + signal);
    }
    sys::exit_now(libc::WEXITSTATUS(status))
}

#[cfg(test)]
mod tests {
    use super::*;

    type Command = (Vec<String>, Vec<(String, String)>);

    /// What [`decode`] finds, as the strings and pairs given to [`encode`].
    fn decoded(message: &[u8]) -> Option<Command> {
        let text = |field: &CStr| field.to_str().unwrap().to_owned();
        let (argv, env) = decode(message)?;
        let env = env.map(|pair| {
            let (name, value) = text(pair)
                .split_once('=')
                .map(|(n, v)| (n.to_owned(), v.to_owned()))
                .unwrap();
            (name, value)
        });
        Some((argv.map(text).collect(), env.collect()))
    }

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
        assert_eq!(decoded(&encode(&argv, &env)), Some((argv.clone(), env)));
        assert_eq!(decoded(&encode(&argv, &[])), Some((argv, Vec::new())));
    }

    #[test]
    fn a_message_cut_short_is_no_command() {
        let message = encode(&strings(&["true"]), &[("A".into(), "1".into())]);
        for cut in 0..message.len() {
            assert_eq!(decoded(&message[..cut]), None, "cut at {cut}");
        }
        assert_eq!(decoded(&encode(&[], &[])), None, "no program");
    }

    #[test]
    fn the_command_s_variables_replace_inherited_ones_of_the_same_name() {
        let pairs = |texts: &[&str]| -> Vec<CString> {
            texts.iter().map(|t| CString::new(*t).unwrap()).collect()
        };
        // As for a zklock run by the command of another.
        let inherited = pairs(&["PATH=/bin", "ZKLOCK_NODE=/outer/n1", "ZKLOCK_NODES=x"]);
        let extra = pairs(&["ZKLOCK_NODE=/inner/n2", "ZKLOCK_LOCK=/inner"]);
        let env: Vec<&CStr> =
            environment(&inherited, extra.iter().map(CString::as_c_str)).collect();
        let expected = pairs(&[
            "PATH=/bin",
            "ZKLOCK_NODES=x",
            "ZKLOCK_NODE=/inner/n2",
            "ZKLOCK_LOCK=/inner",
        ]);
        assert_eq!(
            env,
            expected.iter().map(CString::as_c_str).collect::<Vec<_>>()
        );
    }
}
