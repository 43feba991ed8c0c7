//! Lending the terminal to the command, as a shell lends it to a job.
//!
//! The command runs in its own process group (the guard's),
//! and a process group that is not the terminal's foreground group is
//! stopped (SIGTTIN) when it reads the terminal, and never gets the
//! terminal's Ctrl-C or Ctrl-\. So when zklock runs in the terminal's
//! foreground, it makes the guard's group the foreground group before the
//! command is started in it, and takes the terminal back once the whole
//! group has ended. zklock in the background, or without a controlling
//! terminal, changes nothing.
//!
//! zklock sits in a background group meanwhile: changing the foreground group
//! from there raises SIGTTOU unless the caller blocks it, so every change here
//! is made with SIGTTOU blocked in the calling thread.
//!
//! As a shell does for a job, zklock saves the terminal's modes before it
//! lends the terminal and restores them when it takes the terminal back,
//! whatever ended the command: a full-screen program (an editor, a pager)
//! stopped by a signal or a lost lock leaves the terminal raw, without
//! echo, and the person's shell would inherit that.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

/// The controlling terminal, while zklock is in its foreground group.
pub(super) struct Terminal {
    tty: OwnedFd,
    /// zklock's own process group, to give the terminal back to.
    own_group: libc::pid_t,
    /// The group the terminal was lent to.
    lent_to: Option<libc::pid_t>,
    /// The terminal's modes before it was lent.
    modes: Option<libc::termios>,
}

impl Terminal {
    /// The controlling terminal if zklock is in its foreground group; `None`
    /// when there is no terminal or zklock runs in the background.
    pub(super) fn if_foreground() -> Option<Terminal> {
        // Never inherited; and opening it cannot make it anyone's controlling
        // terminal.
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC)
            .open("/dev/tty")
            .ok()?;
        let tty = OwnedFd::from(tty);
        // SAFETY: plain calls on a descriptor we own.
        let (foreground, own_group) =
            unsafe { (libc::tcgetpgrp(tty.as_raw_fd()), libc::getpgrp()) };
        (foreground == own_group).then_some(Terminal {
            tty,
            own_group,
            lent_to: None,
            modes: None,
        })
    }

    /// Makes `group` the terminal's foreground group, until this is
    /// dropped. Without the terminal the command still runs, as it would in
    /// the background.
    pub(super) fn lend_to(&mut self, group: libc::pid_t) {
        // SAFETY: termios is plain data, which tcgetattr fills.
        let mut modes: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: a terminal descriptor we own, and a struct to fill.
        if unsafe { libc::tcgetattr(self.tty.as_raw_fd(), &mut modes) } == 0 {
            self.modes = Some(modes);
        }
        // SAFETY: a terminal descriptor we own.
        if unsafe { set_foreground(self.tty.as_raw_fd(), group) } == 0 {
            self.lent_to = Some(group);
        }
    }
}

impl Drop for Terminal {
    /// Takes the terminal back, if it is still the command's group's (a
    /// group that handed it on, a shell of its own say, keeps it), and
    /// restores the modes it had when it was lent.
    fn drop(&mut self) {
        let Some(group) = self.lent_to else { return };
        let fd = self.tty.as_raw_fd();
        // SAFETY: plain calls on a descriptor we own.
        unsafe {
            if libc::tcgetpgrp(fd) == group {
                set_foreground(fd, self.own_group);
            }
            if let Some(modes) = &self.modes
                && libc::tcgetpgrp(fd) == self.own_group
            {
                // TCSADRAIN: what the command wrote is shown in its own
                // modes before they change.
                libc::tcsetattr(fd, libc::TCSADRAIN, modes);
            }
        }
    }
}

/// tcsetpgrp with SIGTTOU blocked in this thread, so that a background
/// caller is not stopped for it.
unsafe fn set_foreground(tty: RawFd, group: libc::pid_t) -> libc::c_int {
    // SAFETY: sigset_t is plain data; the calls only read and fill it.
    unsafe {
        let mut ttou: libc::sigset_t = std::mem::zeroed();
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut ttou);
        libc::sigaddset(&mut ttou, libc::SIGTTOU);
        libc::pthread_sigmask(libc::SIG_BLOCK, &ttou, &mut before);
        let result = libc::tcsetpgrp(tty, group);
        libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
        result
    }
}

/// Makes Ctrl-Z leave zklock running, with a notice on the terminal, while
/// it waits for a lock or holds one without a command: a stopped zklock
/// keeps no session alive, so a waiter would lose its place (and `fg`
/// would find the wait failed) and a holder the lock, which would go to
/// another contender while the person believes it suspended and held. A
/// command under the lock is continued the same way by the guard. The
/// handler is the default again in any program zklock executes.
pub(crate) fn refuse_ctrl_z() {
    extern "C" fn notice(_: libc::c_int) {
        const NOTICE: &[u8] = b"\r\nzklock: Ctrl-Z does not suspend zklock: a stopped zklock \
            would lose its place or its lock (Ctrl-C gives up or releases)\r\n";
        // SAFETY: write(2) is async-signal-safe; the buffer is static.
        unsafe {
            libc::write(libc::STDERR_FILENO, NOTICE.as_ptr().cast(), NOTICE.len());
        }
    }
    // SAFETY: the handler only calls write(2), which is async-signal-safe.
    unsafe {
        let handler: extern "C" fn(libc::c_int) = notice;
        libc::signal(libc::SIGTSTP, handler as *const () as libc::sighandler_t);
    }
}
