//! The session monitor: how long the server may have gone without hearing
//! from us, so a holder can stop its command before the server could expire
//! the session and grant the lock to someone else (SPEC §9).
//!
//! The server expires a session no earlier than one session timeout after it
//! last heard from it, and it certainly heard from us when it answered a
//! request: so the send time of the last answered request, plus the session
//! timeout, bounds the life of our lock from below. A light heartbeat keeps
//! that figure fresh while all is well.

use std::cell::Cell;
use std::time::Duration;

use tokio::time::Instant;
use zookeeper_client as zkc;

use super::Session;

/// Why the monitor gave up on the session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lapse {
    /// The session ended (expired, closed, authentication failed).
    Ended(zkc::SessionState),
    /// No request was answered for so long that the server may expire the
    /// session within `margin`: the last answer's request was sent this long
    /// ago.
    Silent(Duration),
}

/// How often the heartbeat asks, given the session timeout and the margin:
/// a third of the time the deadline allows, so two lost heartbeats in a row
/// still leave room before it.
pub fn heartbeat_interval(session_timeout: Duration, margin: Duration) -> Duration {
    let allowed = session_timeout.saturating_sub(margin).min(session_timeout);
    (allowed / 3).max(Duration::from_millis(20))
}

/// Resolves when the session is over, or when no request has been answered
/// for the session timeout less `margin` (counted from the send time of the
/// last answered request; `answered` is one known to be answered already).
/// A heartbeat `exists` on `probe` keeps the figure fresh; a reconnect in
/// time lets the monitor go on.
pub async fn lapse(session: &Session, probe: &str, answered: Instant, margin: Duration) -> Lapse {
    let client = session.client();
    let timeout = client.session_timeout();
    let last_answered = Cell::new(answered);
    let interval = heartbeat_interval(timeout, margin);
    let heartbeat = async {
        loop {
            let sent = Instant::now();
            if client.check_stat(probe).await.is_ok() {
                last_answered.set(last_answered.get().max(sent));
            }
            tokio::time::sleep(interval).await;
        }
    };
    let deadline = || last_answered.get() + timeout.saturating_sub(margin);
    let watch = async {
        let mut states = client.state_watcher();
        let mut state = states.state();
        loop {
            if state.is_terminated() {
                return Lapse::Ended(state);
            }
            tokio::select! {
                next = states.changed() => {
                    report_change(next, deadline());
                    state = next;
                }
                // The heartbeat may have moved the deadline while we slept.
                () = tokio::time::sleep_until(deadline()) => if deadline() <= Instant::now() {
                    let silent = last_answered.get().elapsed();
                    tracing::warn!(
                        "no answer from ZooKeeper for {silent:?} (session timeout {timeout:?}, \
                         margin {margin:?}): the lock counts as lost"
                    );
                    return Lapse::Silent(silent);
                }
            }
        }
    };
    tokio::select! {
        lapse = watch => lapse,
        () = heartbeat => unreachable!("the heartbeat never ends"),
    }
}

fn report_change(state: zkc::SessionState, deadline: Instant) {
    match state {
        zkc::SessionState::Disconnected => tracing::warn!(
            "connection to ZooKeeper lost; the lock counts as lost in {:?} unless it comes back",
            deadline.saturating_duration_since(Instant::now())
        ),
        zkc::SessionState::SyncConnected => tracing::info!("reconnected to ZooKeeper"),
        other => tracing::info!("session state: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heartbeat_leaves_room_before_the_deadline() {
        let s = Duration::from_secs;
        assert_eq!(heartbeat_interval(s(9), s(0)), s(3));
        assert_eq!(heartbeat_interval(s(10), s(4)), s(2));
        assert_eq!(heartbeat_interval(s(2), s(5)), Duration::from_millis(20));
    }
}
