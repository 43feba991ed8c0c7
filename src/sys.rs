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
