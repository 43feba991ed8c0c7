//! The calls into the C library that the rest of zklock makes, each behind
//! a safe function, so that the `unsafe` they need is in one place and each
//! block says why it is sound. (The guard's exec, which runs on memory it
//! shares with the guard, stays in `run::guard` with its own SAFETY notes.)

use std::os::fd::{AsRawFd, FromRawFd};

/// True when `signal`'s disposition is to be ignored: as the process
/// started, until zklock changes it.
pub(crate) fn is_ignored(signal: libc::c_int) -> bool {
    // SAFETY: sigaction with no new action only writes the current one into
    // the struct we own; a zeroed sigaction is a valid value to overwrite.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut current) == 0
            && current.sa_sigaction == libc::SIG_IGN
    }
}

/// Ignores `signal` from now on (for this process; a command exec'd from
/// it inherits the ignore).
pub(crate) fn ignore(signal: libc::c_int) {
    // SAFETY: setting a disposition to SIG_IGN installs no code of ours and
    // has no memory-safety preconditions.
    unsafe {
        libc::signal(signal, libc::SIG_IGN);
    }
}

/// Marks every descriptor from `first` up close-on-exec. Async-signal-safe:
/// for a child between fork and exec.
pub(crate) fn close_on_exec_from(first: libc::c_int) {
    let first = first.max(0) as libc::c_uint;
    // SAFETY: close_range only changes descriptor flags; it touches no
    // memory of ours.
    let marked = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    } == 0;
    if !marked {
        // Kernels before 5.11: one descriptor at a time, up to the limit.
        // SAFETY: sysconf and fcntl take and return plain integers.
        unsafe {
            let limit = libc::sysconf(libc::_SC_OPEN_MAX).clamp(0, 65536) as libc::c_int;
            for fd in first as libc::c_int..limit {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
    }
}

/// Gives `signal` its default action again.
pub(crate) fn default_action(signal: libc::c_int) {
    // SAFETY: SIG_DFL installs no code of ours and has no memory-safety
    // preconditions.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
    }
}

/// Turns core dumps off for the rest of this process: no core file
/// (`RLIMIT_CORE` 0, soft and hard) and not dumpable (which also stops a
/// core handler that ignores the limit, and ptrace by other processes of
/// the same user). For a zklock about to die of a signal that dumps core:
/// its memory may hold credentials.
pub(crate) fn forbid_core_dumps() {
    let none = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: setrlimit reads the struct we own; prctl with
    // PR_SET_DUMPABLE takes plain integers. Neither touches other memory.
    unsafe {
        libc::setrlimit(libc::RLIMIT_CORE, &none);
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

/// Raises `signal` with its default action, unblocked, so that a signal
/// whose default ends the process ends it now, with the wait status the
/// signal gives. Returns only if that action does not end the process.
pub(crate) fn raise_with_default_action(signal: libc::c_int) {
    default_action(signal);
    unblock(&[signal]);
    // SAFETY: raise takes a plain integer and has no memory-safety
    // preconditions.
    unsafe {
        libc::raise(signal);
    }
}

/// A signal set holding `signals`.
pub(crate) fn signal_set(signals: &[libc::c_int]) -> libc::sigset_t {
    // SAFETY: sigset_t is plain data, for which all zeroes is a valid value;
    // sigemptyset and sigaddset only write the set we own.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in signals {
            libc::sigaddset(&mut set, *signal);
        }
        set
    }
}

/// Blocks every signal in this thread; returns the mask it had.
pub(crate) fn block_all_signals() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigfillset and sigprocmask only write
    // the sets we own.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_BLOCK, &all, &mut before);
        before
    }
}

/// Sets this thread's signal mask to `mask`.
pub(crate) fn set_signal_mask(mask: &libc::sigset_t) {
    // SAFETY: sigprocmask reads the set we own and writes nothing else.
    unsafe {
        libc::sigprocmask(libc::SIG_SETMASK, mask, std::ptr::null_mut());
    }
}

/// Blocks `signals` in this thread (for a [`signal_descriptor`] to read).
pub(crate) fn block(signals: &[libc::c_int]) {
    let set = signal_set(signals);
    // SAFETY: sigprocmask reads the set we own and writes nothing else.
    unsafe {
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Unblocks `signals` in this thread.
pub(crate) fn unblock(signals: &[libc::c_int]) {
    let set = signal_set(signals);
    // SAFETY: sigprocmask reads the set we own and writes nothing else.
    unsafe {
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
}

/// Waits for one of the blocked signals in `set`; returns its number.
pub(crate) fn wait_for_signal(set: &libc::sigset_t) -> libc::c_int {
    // SAFETY: siginfo_t is plain data; sigwaitinfo writes only the one we own.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::sigwaitinfo(set, &mut info)
    }
}

/// A descriptor that becomes readable when one of `signals` (blocked) is
/// pending; the signal stays pending for a later wait.
pub(crate) fn signal_descriptor(signals: &[libc::c_int]) -> Option<std::os::fd::OwnedFd> {
    let set = signal_set(signals);
    // SAFETY: signalfd reads the set we own and returns a new descriptor.
    let fd = unsafe { libc::signalfd(-1, &set, libc::SFD_CLOEXEC) };
    // SAFETY: the descriptor is new and ours alone.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// Waits until one of `fds` is readable (or hung up); returns which, in
/// their order. Interrupted waits are retried.
pub(crate) fn wait_readable<const N: usize>(fds: [std::os::fd::RawFd; N]) -> [bool; N] {
    wait_readable_within(fds, -1)
}

/// [`wait_readable`], giving up after `timeout_ms` (-1: never): then none
/// is. An interrupted wait is retried for the whole time again.
pub(crate) fn wait_readable_within<const N: usize>(
    fds: [std::os::fd::RawFd; N],
    timeout_ms: libc::c_int,
) -> [bool; N] {
    let mut ready = fds.map(|fd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    });
    // SAFETY: poll writes only the revents of the entries we own, whose
    // number it is given.
    while unsafe { libc::poll(ready.as_mut_ptr(), N as libc::nfds_t, timeout_ms) } < 0 {}
    ready.map(|entry| entry.revents != 0)
}

/// What [`fork`] returns in each process.
pub(crate) enum Forked {
    /// In the parent: the child's pid.
    Parent(libc::pid_t),
    /// In the child.
    Child,
}

/// Forks this process.
///
/// The child of a process with threads may only make async-signal-safe
/// calls until it execs: call this while the process has a single thread,
/// or make only such calls in the child.
pub(crate) fn fork() -> std::io::Result<Forked> {
    // SAFETY: fork has no memory-safety preconditions of its own; what the
    // child may do is the caller's to keep (see above).
    match unsafe { libc::fork() } {
        0 => Ok(Forked::Child),
        pid if pid > 0 => Ok(Forked::Parent(pid)),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// Moves process `pid` (0: this one) into the process group `group` (0: a
/// new one it leads). Failure (the child already did it) is harmless here.
pub(crate) fn set_process_group(pid: libc::pid_t, group: libc::pid_t) {
    // SAFETY: setpgid takes and returns plain integers.
    unsafe {
        libc::setpgid(pid, group);
    }
}

/// This process's group.
pub(crate) fn process_group() -> libc::pid_t {
    // SAFETY: getpgrp cannot fail.
    unsafe { libc::getpgrp() }
}

/// This process's parent.
pub(crate) fn parent_pid() -> libc::pid_t {
    // SAFETY: getppid cannot fail.
    unsafe { libc::getppid() }
}

/// The real user id.
pub(crate) fn real_uid() -> libc::uid_t {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() }
}

/// Ends this process at once with `code`, running nothing of Rust's (no
/// destructors, no buffered output flushed): for a child of a fork.
pub(crate) fn exit_now(code: libc::c_int) -> ! {
    // SAFETY: _exit is async-signal-safe and never returns.
    unsafe { libc::_exit(code) }
}

/// Sends `signal` to process `pid`; false when it failed (no such
/// process, not ours).
pub(crate) fn kill(pid: libc::pid_t, signal: libc::c_int) -> bool {
    // SAFETY: kill takes and returns plain integers.
    unsafe { libc::kill(pid, signal) == 0 }
}

/// Sends `signal` to process group `group` (0: this process's own); a gone
/// group is no error worth telling.
pub(crate) fn kill_group(group: libc::pid_t, signal: libc::c_int) {
    // SAFETY: killpg takes and returns plain integers.
    unsafe {
        libc::killpg(group, signal);
    }
}

/// True when process `pid` exists (signal 0 succeeds or is refused).
pub(crate) fn process_exists(pid: libc::pid_t) -> bool {
    kill(pid, 0) || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// What [`wait_pid`] found.
pub(crate) enum Waited {
    /// A child ended or stopped: its pid and wait status.
    Child(libc::pid_t, libc::c_int),
    /// Children match, none has changed yet (only with `WNOHANG`).
    Running,
    /// No child matches.
    None,
}

/// waitpid(2) for `pid` (-1: any child; -G: any of group G) with `flags`.
pub(crate) fn wait_pid(pid: libc::pid_t, flags: libc::c_int) -> Waited {
    let mut status = 0;
    // SAFETY: waitpid only writes the status we own.
    match unsafe { libc::waitpid(pid, &mut status, flags) } {
        0 => Waited::Running,
        ended if ended > 0 => Waited::Child(ended, status),
        _ => Waited::None,
    }
}

/// True while a child of this process in group `group` is still there
/// (ended or not), without reaping it.
pub(crate) fn group_has_children(group: libc::pid_t) -> bool {
    // SAFETY: siginfo_t is plain data; with WNOWAIT waitid only reports,
    // into the struct we own.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(
            libc::P_PGID,
            group as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        ) == 0
    }
}

/// Makes this process the parent of its descendants' orphans.
pub(crate) fn become_subreaper() -> std::io::Result<()> {
    // SAFETY: prctl with plain integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Asks for `signal` when this thread's parent ends.
pub(crate) fn on_parent_death(signal: libc::c_int) {
    // SAFETY: prctl with plain integer arguments.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, signal);
    }
}

/// Names this process (as `ps` and `pkill` see it).
pub(crate) fn set_process_name(name: &std::ffi::CStr) {
    // SAFETY: PR_SET_NAME reads the NUL-terminated string we own.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, name.as_ptr());
    }
}

/// A pipe with both ends closed on exec: (read end, write end).
pub(crate) fn pipe() -> std::io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two descriptors, which we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors are fresh and ours alone.
    Ok(unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    })
}

/// Writes `bytes` to `fd` in one call, ignoring the outcome (the reader
/// may be gone). Async-signal-safe.
pub(crate) fn write_once(fd: std::os::fd::RawFd, bytes: &[u8]) {
    // SAFETY: write reads the buffer we own, for its length.
    unsafe {
        libc::write(fd, bytes.as_ptr().cast(), bytes.len());
    }
}

/// Closes every descriptor but `keep`.
pub(crate) fn close_all_but(keep: std::os::fd::RawFd) {
    let keep = keep as libc::c_uint;
    // SAFETY: close_range takes plain integers; closing descriptors has no
    // memory-safety preconditions in this process, which owns them all.
    let closed = |first: libc::c_uint, last: libc::c_uint| unsafe {
        libc::syscall(libc::SYS_close_range, first, last, 0 as libc::c_uint) == 0
    };
    let below = keep == 0 || closed(0, keep - 1);
    let above = closed(keep + 1, libc::c_uint::MAX);
    if !(below && above) {
        for fd in (0..1024).filter(|fd| *fd != keep as libc::c_int) {
            // SAFETY: as above.
            unsafe {
                libc::close(fd);
            }
        }
    }
}

/// Takes descriptor `fd`, handed over by the parent at exec and named on
/// the command line; `None` when it is not open. Call it once per
/// descriptor, before anything else could have opened one of that number.
pub(crate) fn take_inherited(fd: std::os::fd::RawFd) -> Option<std::os::fd::OwnedFd> {
    // SAFETY: F_GETFD only checks that the descriptor is open.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return None;
    }
    // SAFETY: the descriptor is open, and (see above) nothing else in this
    // process owns it.
    Some(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// Makes `to` a copy of `from`, kept across exec. Async-signal-safe: for a
/// child between fork and exec.
pub(crate) fn inherit_as(from: std::os::fd::RawFd, to: std::os::fd::RawFd) -> std::io::Result<()> {
    // dup2 onto itself would keep close-on-exec; clear it instead.
    // SAFETY: fcntl and dup2 take and return plain integers.
    let moved = unsafe {
        if from == to {
            libc::fcntl(to, libc::F_SETFD, 0)
        } else {
            libc::dup2(from, to)
        }
    };
    if moved < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Starts a new session led by this process: no controlling terminal.
/// Async-signal-safe.
pub(crate) fn new_session() -> std::io::Result<()> {
    // SAFETY: setsid takes no arguments.
    if unsafe { libc::setsid() } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// A descriptor that becomes readable when process `pid` ends; `None`
/// without pidfd (kernels before 5.3) or when it is gone.
pub(crate) fn pidfd(pid: libc::pid_t) -> Option<std::os::fd::OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    // SAFETY: a new descriptor, ours alone.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as std::os::fd::RawFd) })
}

/// Sends `signal` to the process `pidfd` refers to: never to another
/// process that has since taken its pid. False when it failed (the
/// process has ended, or is not ours to signal).
pub(crate) fn pidfd_signal(pidfd: std::os::fd::BorrowedFd<'_>, signal: libc::c_int) -> bool {
    // SAFETY: pidfd_send_signal takes a descriptor the borrow keeps open, a
    // signal number, no siginfo (null) and no flags.
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            signal,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        ) == 0
    }
}

/// Microseconds on the host's monotonic clock: one clock for every
/// process of the host, which no change of the wall clock moves.
pub(crate) fn monotonic_us() -> u64 {
    // SAFETY: timespec is plain data; clock_gettime writes only the one we
    // own.
    let time = unsafe {
        let mut time: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut time);
        time
    };
    let seconds = u64::try_from(time.tv_sec).unwrap_or(0);
    let micros = u64::try_from(time.tv_nsec / 1000).unwrap_or(0);
    seconds.saturating_mul(1_000_000).saturating_add(micros)
}

/// The terminal `tty`'s foreground process group.
pub(crate) fn foreground_group(tty: std::os::fd::BorrowedFd<'_>) -> libc::pid_t {
    // SAFETY: tcgetpgrp takes a descriptor the borrow keeps open.
    unsafe { libc::tcgetpgrp(tty.as_raw_fd()) }
}

/// Makes `group` the terminal's foreground group, with SIGTTOU blocked in
/// this thread so that a background caller is not stopped for it; false
/// when it failed.
pub(crate) fn set_foreground_group(tty: std::os::fd::BorrowedFd<'_>, group: libc::pid_t) -> bool {
    let ttou = signal_set(&[libc::SIGTTOU]);
    // SAFETY: the sets are ours, plain data; tcsetpgrp takes a descriptor
    // the borrow keeps open.
    unsafe {
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, &ttou, &mut before);
        let result = libc::tcsetpgrp(tty.as_raw_fd(), group);
        libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
        result == 0
    }
}

/// The terminal `tty`'s modes, when it says.
pub(crate) fn terminal_modes(tty: std::os::fd::BorrowedFd<'_>) -> Option<libc::termios> {
    // SAFETY: termios is plain data, which tcgetattr fills; the borrow
    // keeps the descriptor open.
    unsafe {
        let mut modes: libc::termios = std::mem::zeroed();
        (libc::tcgetattr(tty.as_raw_fd(), &mut modes) == 0).then_some(modes)
    }
}

/// Gives the terminal `tty` the modes `modes`, once what was written to it
/// has been shown in the modes it was written in (TCSADRAIN).
pub(crate) fn restore_terminal_modes(tty: std::os::fd::BorrowedFd<'_>, modes: &libc::termios) {
    // SAFETY: tcsetattr reads the struct we lend it; the borrow keeps the
    // descriptor open.
    unsafe {
        libc::tcsetattr(tty.as_raw_fd(), libc::TCSADRAIN, modes);
    }
}

/// The notice [`write_on_signal`]'s handler writes.
static SIGNAL_NOTICE: std::sync::OnceLock<&'static [u8]> = std::sync::OnceLock::new();

/// Makes `signal` write `notice` to stderr instead of taking its default
/// action. A handler, not an ignore, so that the programs zklock executes
/// start with the default action again. One notice per process: the first
/// one given stays.
pub(crate) fn write_on_signal(signal: libc::c_int, notice: &'static [u8]) {
    extern "C" fn write_notice(_: libc::c_int) {
        if let Some(notice) = SIGNAL_NOTICE.get() {
            // SAFETY: write(2) is async-signal-safe, and the notice static.
            unsafe {
                libc::write(libc::STDERR_FILENO, notice.as_ptr().cast(), notice.len());
            }
        }
    }
    let _ = SIGNAL_NOTICE.set(notice);
    let handler: extern "C" fn(libc::c_int) = write_notice;
    // SAFETY: the handler only reads a set OnceLock and calls write(2),
    // which is async-signal-safe.
    unsafe {
        libc::signal(signal, handler as *const () as libc::sighandler_t);
    }
}

/// The number of columns of the terminal on `fd`, when it is one and says.
pub(crate) fn terminal_columns(fd: std::os::fd::RawFd) -> Option<u16> {
    // SAFETY: winsize is plain data; TIOCGWINSZ fills the one we own and
    // nothing else.
    unsafe {
        let mut size: libc::winsize = std::mem::zeroed();
        (libc::ioctl(fd, libc::TIOCGWINSZ, &mut size) == 0 && size.ws_col > 0)
            .then_some(size.ws_col)
    }
}

/// How many descriptors this process may have open (the soft
/// `RLIMIT_NOFILE`); `None` when it has no limit.
pub(crate) fn descriptor_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit, into the one we own.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    (read && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

/// `secs` since the epoch as local time; as UTC (offset 0) where the local
/// zone cannot be had.
pub(crate) fn local_time(secs: libc::time_t) -> libc::tm {
    // SAFETY: tm is plain data, for which all zeroes is a valid value;
    // localtime_r and gmtime_r only write the one we own.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&secs, &mut tm).is_null() {
            libc::gmtime_r(&secs, &mut tm);
            tm.tm_gmtoff = 0;
        }
        tm
    }
}

/// The CPU time the calling thread has used: what a test times work by,
/// so that other work on the machine does not count.
#[cfg(test)]
pub(crate) fn thread_cpu_time() -> std::time::Duration {
    // SAFETY: timespec is plain data; clock_gettime only writes the one we
    // own, and the thread CPU clock always exists on Linux.
    let spec = unsafe {
        let mut spec: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut spec);
        spec
    };
    std::time::Duration::new(spec.tv_sec as u64, spec.tv_nsec as u32)
}

/// This machine's host name.
pub(crate) fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; truncation is handled by
    // stopping at the first NUL or the end.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// The name of user `uid` in the password database.
pub(crate) fn user_name(uid: libc::uid_t) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut found = std::ptr::null_mut();
    // SAFETY: passwd is plain data, for which all zeroes is a valid value;
    // every pointer refers to memory that lives across the call, and buf's
    // length is passed with it.
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let rc = unsafe { libc::getpwuid_r(uid, &mut entry, buf.as_mut_ptr(), buf.len(), &mut found) };
    if rc != 0 || found.is_null() || entry.pw_name.is_null() {
        return None;
    }
    // SAFETY: on success pw_name points to a NUL-terminated string in buf.
    let name = unsafe { std::ffi::CStr::from_ptr(entry.pw_name) };
    Some(name.to_string_lossy().into_owned())
}

/// Overwrites the value of environment variable `name` in the process's
/// environment block (what /proc/PID/environ shows) and removes it.
///
/// Only while the process has a single thread: nothing may read or change
/// the environment meanwhile.
pub(crate) fn wipe_environment_variable(name: &str) {
    let Ok(key) = std::ffi::CString::new(name) else {
        return;
    };
    // SAFETY: one thread (see above); getenv returns a pointer into the
    // environment block, valid and writable for the value's length.
    unsafe {
        let value = libc::getenv(key.as_ptr());
        if !value.is_null() {
            std::ptr::write_bytes(value, 0, libc::strlen(value));
        }
        std::env::remove_var(name);
    }
}

/// Overwrites, in the process's own argument strings (the area
/// /proc/self/cmdline shows, where `argv` points), the bytes `spans` give
/// as offsets into `args` joined with NULs, as the kernel laid them out.
/// Nothing happens unless the area holds exactly `args`: then the offsets
/// are known to be right.
///
/// Only while the process has a single thread: nothing may read the
/// arguments meanwhile.
pub(crate) fn blot_arguments(args: &[std::ffi::OsString], spans: &[std::ops::Range<usize>]) {
    use std::os::unix::ffi::OsStrExt;
    // Most command lines hold no secret: then /proc is not read at all, on
    // the way to every lock.
    if spans.is_empty() {
        return;
    }
    let Some((start, end)) = argument_area() else {
        return;
    };
    // Compared piece by piece: a joined copy would be one more copy of
    // the secrets to wipe.
    let length: usize = args.iter().map(|arg| arg.len() + 1).sum();
    if end.checked_sub(start) != Some(length) {
        return;
    }
    // SAFETY: [start, end) is the argument area the kernel wrote at exec,
    // in this process's stack mapping, readable and writable for its
    // whole length (checked equal to what args_os read from it below).
    // One thread (see above), and no Rust reference to it exists: std
    // reads it only through raw pointers, when asked for the arguments.
    let area = unsafe { std::slice::from_raw_parts_mut(start as *mut u8, length) };
    let mut rest = &area[..];
    for arg in args {
        let (word, after) = rest.split_at(arg.len());
        if word != arg.as_bytes() || after.first() != Some(&0) {
            return;
        }
        rest = &after[1..];
    }
    for span in spans {
        if let Some(bytes) = area.get_mut(span.clone()) {
            bytes.fill(b'*');
        }
    }
}

/// Where the kernel put the argument strings: fields 48 and 49 of
/// /proc/self/stat.
fn argument_area() -> Option<(usize, usize)> {
    let stat = crate::procfs::read("/proc/self/stat")?;
    let field = |n| crate::procfs::stat_field(&stat, n)?.try_into().ok();
    Some((field(48)?, field(49)?))
}
