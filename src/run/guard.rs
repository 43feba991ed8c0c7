//! The guard between zklock and its command: the command's whole process
//! group dies with zklock, even a SIGKILLed zklock (SPEC §9).
//!
//! A parent-death signal reaches only the process that asked for it, and a
//! fork clears it, so a command's own children (`sh -c 'a & b'`) would
//! outlive zklock. Instead the forked child splits once more before exec:
//! the command goes on to exec, and the guard stays behind in the command's
//! process group, asks for a parent-death signal, and when it comes kills
//! the whole group. Otherwise the guard only waits for the command and ends
//! the same way it did, so zklock sees the command's own exit status.
//!
//! Everything here runs between fork and exec: async-signal-safe calls only.

use std::io;

/// Splits the forked child into the guard (which never returns) and the
/// command (which returns `Ok` and goes on to exec). `zklock` is zklock's
/// pid, to notice that it died before the guard was set up.
///
/// # Safety
/// Only to be called in a `pre_exec` closure, after the child joined its own
/// process group.
pub unsafe fn split_off(zklock: libc::pid_t) -> io::Result<()> {
    // SAFETY: plain libc calls on values of our own; see the module doc.
    unsafe {
        // Blocked before the fork, so that a command that ends at once cannot
        // send its SIGCHLD before the guard is ready to wait for it.
        let waited = guard_signals();
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigprocmask(libc::SIG_BLOCK, &waited, &mut before);
        match libc::fork() {
            -1 => {
                let err = io::Error::last_os_error();
                libc::sigprocmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
                Err(err)
            }
            0 => {
                libc::sigprocmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
                Ok(())
            }
            command => guard(zklock, command, &waited),
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

unsafe fn guard(zklock: libc::pid_t, command: libc::pid_t, waited: &libc::sigset_t) -> ! {
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
        if libc::getppid() != zklock {
            libc::killpg(0, libc::SIGKILL);
        }
        // Hold nothing open: not the caller's pipes, nor the pipe on which
        // the command's exec reports success by closing it.
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
            for fd in 0..1024 {
                libc::close(fd);
            }
        }
        loop {
            let mut status = 0;
            match libc::waitpid(command, &mut status, libc::WNOHANG) {
                ended if ended == command => end_like(status),
                // The command is gone and cannot be waited for: never hang.
                -1 => libc::_exit(255),
                _ => {}
            }
            let mut info: libc::siginfo_t = std::mem::zeroed();
            if libc::sigwaitinfo(waited, &mut info) == death_signal() {
                libc::killpg(0, libc::SIGKILL);
            }
        }
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
