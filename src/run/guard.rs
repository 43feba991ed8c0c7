//! The guard between zklock and its command: the command's whole process
//! group dies with zklock, even a SIGKILLed zklock, and zklock learns how the
//! command ended from the guard's report, never from the guard's own end.
//!
//! A parent-death signal reaches only the process that asked for it, and a
//! fork clears it, so a command's own children (`sh -c 'a & b'`) would
//! outlive zklock. Instead the forked child splits once more before exec:
//! the command goes on to exec, and the guard stays behind in the command's
//! process group, asks for a parent-death signal, and when it comes kills
//! the whole group. The command itself asks for SIGKILL when the guard dies,
//! so it dies even when zklock and the guard are killed together.
//!
//! The guard adopts the group's orphans (it is a child subreaper) and waits
//! until the command and every other process of the group has ended: the
//! lock is held as long as any of them runs, the way flock(1)'s lock lives as
//! long as a process holds the inherited descriptor. Then it writes the
//! command's wait status to the report pipe and ends the same way the
//! command did.
//!
//! Everything here runs between fork and exec: async-signal-safe calls only.

use std::io;
use std::os::fd::RawFd;

/// Splits the forked child into the guard (which never returns) and the
/// command (which returns `Ok` and goes on to exec). `zklock` is zklock's
/// pid, to notice that it died before the guard was set up; `report` is the
/// write end of the pipe on which the guard reports the command's status
/// (close-on-exec, so the command never holds it).
///
/// # Safety
/// Only to be called in a `pre_exec` closure, after the child joined its own
/// process group.
pub(super) unsafe fn split_off(zklock: libc::pid_t, report: RawFd) -> io::Result<()> {
    // SAFETY: plain libc calls on values of our own; see the module doc.
    unsafe {
        // Blocked before the fork, so that a command that ends at once cannot
        // send its SIGCHLD before the guard is ready to wait for it.
        let waited = guard_signals();
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigprocmask(libc::SIG_BLOCK, &waited, &mut before);
        let guard_pid = libc::getpid();
        match libc::fork() {
            -1 => {
                let err = io::Error::last_os_error();
                libc::sigprocmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
                Err(err)
            }
            0 => {
                libc::sigprocmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != guard_pid {
                    libc::raise(libc::SIGKILL);
                }
                Ok(())
            }
            command => guard(zklock, command, report, &waited),
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

/// The signal the guard gets when zklock dies: one zklock never forwards.
fn death_signal() -> libc::c_int {
    libc::SIGRTMIN() + 1
}

unsafe fn guard(
    zklock: libc::pid_t,
    command: libc::pid_t,
    report: RawFd,
    waited: &libc::sigset_t,
) -> ! {
    // SAFETY: plain libc calls on values of our own; see the module doc.
    unsafe {
        // Signals zklock forwards to the group are for the command. SIGCHLD
        // is never ignored, not even for a moment: the command would be
        // reaped unseen.
        for signal in 1..32 {
            if ![libc::SIGCHLD, libc::SIGKILL, libc::SIGSTOP].contains(&signal) {
                libc::signal(signal, libc::SIG_IGN);
            }
        }
        libc::prctl(libc::PR_SET_NAME, c"zklock-guard".as_ptr());
        libc::prctl(libc::PR_SET_PDEATHSIG, death_signal());
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
        if libc::getppid() != zklock {
            libc::killpg(0, libc::SIGKILL);
        }
        close_all_but(report);
        let mut command_status = None;
        loop {
            reap(command, &mut command_status);
            if let Some(status) = command_status
                && !group_has_children()
            {
                let bytes = status.to_ne_bytes();
                libc::write(report, bytes.as_ptr().cast(), bytes.len());
                end_like(status);
            }
            let mut info: libc::siginfo_t = std::mem::zeroed();
            if libc::sigwaitinfo(waited, &mut info) == death_signal() {
                libc::killpg(0, libc::SIGKILL);
            }
        }
    }
}

/// Holds nothing open but `keep`: not the caller's pipes, nor the pipe on
/// which the command's exec reports success by closing it.
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
    // SAFETY: plain libc calls; see the module doc.
    unsafe {
        if libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            libc::signal(signal, libc::SIG_DFL);
            let mut all: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::sigprocmask(libc::SIG_UNBLOCK, &all, std::ptr::null_mut());
            libc::kill(libc::getpid(), signal);
            libc::_exit(128 + signal);
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}
