//! The signals zklock forwards to its command or ends a hold on, the ones
//! it keeps out of while it holds a lock, and the interrupts after which it
//! dies of the signal rather than exiting.

use std::task::Poll;

use tokio::signal::unix::{Signal, SignalKind, signal};

/// The signals zklock catches and passes on to its command's group, unless
/// zklock started with them ignored.
const FORWARDED: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// The signals a terminal sends its foreground group from the keyboard to
/// end what runs (Ctrl-C, and the quit key, Ctrl-\\): a shell stops a loop or
/// script when a program it waits for dies of one of these.
pub(crate) fn is_interrupt(signal: i32) -> bool {
    matches!(signal, libc::SIGINT | libc::SIGQUIT)
}

/// Every signal whose default action ends a process and that a handler can
/// catch, but the faults that only the process's own code raises (SIGSEGV,
/// SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS, SIGABRT); the real-time signals
/// besides. SIGPIPE is not among them: the Rust runtime ignores it, and a
/// closed pipe is a failed write.
const ENDING: [i32; 14] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGTERM,
    libc::SIGSTKFLT,
    libc::SIGXCPU,
    libc::SIGXFSZ,
    libc::SIGVTALRM,
    libc::SIGPROF,
    libc::SIGPOLL,
    libc::SIGPWR,
];

/// The [`FORWARDED`] signals zklock did not start with ignored, caught from
/// the moment this is made. A signal ignored at the start (`nohup`, `trap ''
/// HUP`, SIGINT and SIGQUIT for a background job of a non-interactive shell)
/// stays ignored, for zklock and for its command, as under flock(1).
pub(crate) struct Signals {
    streams: Vec<(i32, Signal)>,
}

impl Signals {
    /// Installs the handlers. Call before acquiring, so a signal that comes
    /// while waiting is caught and the contender node removed.
    pub(crate) fn catch() -> std::io::Result<Signals> {
        Signals::catch_these(FORWARDED)
    }

    /// Catches every signal that would end zklock and can be caught (but
    /// those it started with ignored), for a program that must put
    /// something back before it ends: the terminal, for `top`.
    pub(crate) fn catch_every_ending() -> std::io::Result<Signals> {
        let realtime = libc::SIGRTMIN()..=libc::SIGRTMAX();
        Signals::catch_these(ENDING.into_iter().chain(realtime))
    }

    fn catch_these(signals: impl IntoIterator<Item = i32>) -> std::io::Result<Signals> {
        let streams = signals
            .into_iter()
            .filter(|n| !crate::sys::is_ignored(*n))
            .map(|n| signal(SignalKind::from_raw(n)).map(|s| (n, s)))
            .collect::<std::io::Result<_>>()?;
        Ok(Signals { streams })
    }

    /// Waits for the next signal and returns its number; never resolves
    /// when every signal caught was ignored from the start.
    pub(crate) async fn next(&mut self) -> i32 {
        std::future::poll_fn(|cx| {
            for (number, stream) in &mut self.streams {
                if stream.poll_recv(cx).is_ready() {
                    return Poll::Ready(*number);
                }
            }
            Poll::Pending
        })
        .await
    }
}

/// Keeps zklock out of job control for as long as it holds a lock: a
/// stopped zklock sends no heartbeat and never stops its command, while the
/// lock passes on. While the command owns the terminal zklock sits in a
/// background group, where writing its `-v` log under `stty tostop`
/// (SIGTTOU) or reading the terminal (SIGTTIN) would stop it, and SIGTSTP
/// from `kill` would too. Holding without a command, zklock is in the
/// foreground, where Ctrl-Z would stop it while the person believes the
/// lock suspended and held: it says so instead. Ignored, the write goes
/// through and the read fails; the command's own signal state is the one
/// zklock started with.
pub(crate) fn stay_out_of_job_control() {
    for signal in [libc::SIGTTOU, libc::SIGTTIN] {
        crate::sys::ignore(signal);
    }
    super::terminal::refuse_ctrl_z();
}
