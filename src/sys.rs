//! The calls into the C library that the rest of zklock makes, each behind
//! a safe function, so that the `unsafe` they need is in one place and each
//! block says why it is sound.

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
