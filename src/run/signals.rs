//! The signals zklock forwards to its command or ends a hold on.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// The signals zklock catches and passes on to its command's group.
pub(super) const FORWARDED: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// The [`FORWARDED`] signals, caught from the moment this is made.
pub(crate) struct Signals {
    streams: [(i32, Signal); 4],
}

impl Signals {
    /// Installs the handlers. Call before acquiring, so a signal that comes
    /// while waiting is caught and the contender node removed.
    pub(crate) fn catch() -> std::io::Result<Signals> {
        let catch = |n: i32| signal(SignalKind::from_raw(n)).map(|s| (n, s));
        let [a, b, c, d] = FORWARDED;
        Ok(Signals {
            streams: [catch(a)?, catch(b)?, catch(c)?, catch(d)?],
        })
    }

    /// Waits for the next signal and returns its number.
    pub(crate) async fn next(&mut self) -> i32 {
        let [(a, sa), (b, sb), (c, sc), (d, sd)] = &mut self.streams;
        tokio::select! {
            _ = sa.recv() => *a,
            _ = sb.recv() => *b,
            _ = sc.recv() => *c,
            _ = sd.recv() => *d,
        }
    }
}
