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

use std::io::IsTerminal;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;

use crate::sys;

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
        let (foreground, own_group) = (sys::foreground_group(tty.as_fd()), sys::process_group());
        (foreground == own_group).then_some(Terminal {
            tty,
            own_group,
            lent_to: None,
            modes: None,
        })
    }

    /// Makes `group` the terminal's foreground group, until this is
    /// dropped, and keeps the terminal's modes to restore then. Without the
    /// terminal the command still runs, as it would in the background.
    pub(super) fn lend_to(&mut self, group: libc::pid_t) {
        self.modes = sys::terminal_modes(self.tty.as_fd());
        if sys::set_foreground_group(self.tty.as_fd(), group) {
            self.lent_to = Some(group);
        }
    }

    /// True when the terminal was lent to a group.
    pub(super) fn was_lent(&self) -> bool {
        self.lent_to.is_some()
    }
}

impl Drop for Terminal {
    /// Takes the terminal back, if it is still the command's group's (a
    /// group that handed it on, a shell of its own say, keeps it), and
    /// restores the modes it had when it was lent.
    fn drop(&mut self) {
        let Some(group) = self.lent_to else { return };
        let tty = self.tty.as_fd();
        if sys::foreground_group(tty) == group {
            sys::set_foreground_group(tty, self.own_group);
        }
        if let Some(modes) = &self.modes
            && sys::foreground_group(tty) == self.own_group
        {
            sys::restore_terminal_modes(tty, modes);
        }
    }
}

/// What Ctrl-Z prints instead of stopping zklock. It takes the place of
/// the row the cursor is on, which holds the spinner of a wait (its cursor
/// sits at its first column, see `output::live`) with the echoed `^Z`, or
/// only that echo: the spinner is drawn again below it, and no half of it
/// is left above.
const CTRL_Z_NOTICE: &[u8] = b"\r\x1b[Jzklock: Ctrl-Z does not suspend zklock: a stopped zklock \
    would lose its place or its lock (Ctrl-C gives up or releases)\r\n";

/// What zklock prints when the guard has continued a command that Ctrl-Z
/// stopped.
const CTRL_Z_COMMAND_NOTICE: &[u8] = b"\r\nzklock: Ctrl-Z does not suspend a command under a \
    lock: a stopped command would hold the lock with no one to continue it \
    (Ctrl-C stops it and releases)\r\n";

/// Tells the person at the terminal that their Ctrl-Z was undone, as while
/// zklock waits or holds. zklock is then in the background of the
/// terminal, and writes there all the same: it ignores SIGTTOU.
pub(super) fn ctrl_z_passed_over() {
    if std::io::stderr().is_terminal() {
        sys::write_once(libc::STDERR_FILENO, CTRL_Z_COMMAND_NOTICE);
    }
}

/// Makes Ctrl-Z leave zklock running, with a notice on the terminal, while
/// it waits for a lock or holds one: a stopped zklock keeps no session
/// alive, so a waiter would lose its place (and `fg` would find the wait
/// failed) and a holder the lock, which would go to another contender while
/// the person believes it suspended and held. A command under the lock is
/// continued the same way by the guard. The handler is the default again in
/// any program zklock executes.
pub(crate) fn refuse_ctrl_z() {
    sys::write_on_signal(libc::SIGTSTP, CTRL_Z_NOTICE);
}
