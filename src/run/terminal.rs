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
        })
    }

    /// Makes `group` the terminal's foreground group, until this is
    /// dropped. Without the terminal the command still runs, as it would in
    /// the background.
    pub(super) fn lend_to(&mut self, group: libc::pid_t) {
        if sys::set_foreground_group(self.tty.as_fd(), group) {
            self.lent_to = Some(group);
        }
    }
}

impl Drop for Terminal {
    /// Takes the terminal back, if it is still the command's group's: a
    /// group that handed it on (a shell of its own, say) keeps it.
    fn drop(&mut self) {
        let Some(group) = self.lent_to else { return };
        let tty = self.tty.as_fd();
        if sys::foreground_group(tty) == group {
            sys::set_foreground_group(tty, self.own_group);
        }
    }
}
