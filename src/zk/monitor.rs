//! The session monitor: the latest moment at which the ZooKeeper leader may
//! expire our session, so a holder can stop its command before the lock can
//! pass on.
//!
//! Only the leader expires sessions. A follower records which of its
//! clients' sessions it heard from ("touched") and hands that list to the
//! leader in its answer to each of the leader's pings, which the leader sends
//! every half tick. The leader then expires a session no earlier than one
//! session timeout after the touch it learnt of (rounded up to a whole tick,
//! which only makes it later). A follower cut off from the leader keeps
//! answering reads and pings of its own for a while, so an answer from it
//! proves nothing about the leader.
//!
//! What does prove something is a `sync` answered: the follower forwards it
//! to the leader on the same ordered stream as its ping answers, and the
//! leader answers it only while the session is alive. So when a request `j`
//! was answered at `r_j` and a `sync` sent at `s_k >= r_j + ping_gap` is
//! answered on the same connection, one leader ping fell between the
//! follower's touch for `j` and its forwarding of `k`, and its answer, which
//! carried the touch, reached the leader before `k` did. The leader thus
//! learnt of a touch that happened after `j` was sent, and cannot expire the
//! session before `s_j + session timeout`. That `s_j` is the evidence.
//!
//! The client does not know the server's tick. ZooKeeper never grants a
//! session timeout below two ticks unless its administrator lowers
//! `minSessionTimeout` below that, so a tick is at most half the granted
//! timeout and the leader pings at least every quarter of it: that quarter is
//! the `ping_gap`. The clocks of this host and the leader may run at slightly
//! different rates; `clock_slack` (a fiftieth of the timeout) covers a 2%
//! difference.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use tokio::sync::watch;
use tokio::time::Instant;
use zookeeper_client as zkc;

use super::Session;

/// Why the monitor gave up on the session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Lapse {
    /// The session ended (expired, closed, authentication failed): how, in
    /// the client library's words (its type stays in `zk`).
    Ended(String),
    /// The leader may expire the session within `margin`: the latest evidence
    /// that it heard of the session is this old.
    Silent(Duration),
}

/// The time budget derived from a granted session timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Timing {
    pub session_timeout: Duration,
    /// The longest the leader may go between pings to a follower.
    pub ping_gap: Duration,
    /// What covers a difference in clock rates between us and the leader.
    pub clock_slack: Duration,
    /// How often the heartbeat sends a `sync`.
    pub heartbeat: Duration,
}

impl Timing {
    pub(crate) fn for_session(session_timeout: Duration) -> Timing {
        Timing {
            session_timeout,
            ping_gap: session_timeout / 4,
            clock_slack: session_timeout / 50,
            heartbeat: (session_timeout / 20).max(Duration::from_millis(10)),
        }
    }

    /// How long a connection may stay silent before the client gives up on
    /// it and moves to another server: well inside what `ride_through`
    /// leaves, so a frozen server costs a reconnect, not the lock.
    pub(crate) fn silence_limit(requested_timeout: Duration) -> Duration {
        (requested_timeout / 10).max(Duration::from_millis(100))
    }

    /// The `--kill-after` that fits the session when none is given.
    pub(crate) fn default_kill_after(&self) -> Duration {
        self.session_timeout / 5
    }

    /// How long after the latest evidence the command must start stopping so
    /// that it is gone, `margin` later, before the leader can expire the
    /// session.
    pub(crate) fn stop_after_evidence(&self, margin: Duration) -> Duration {
        self.session_timeout
            .saturating_sub(self.clock_slack)
            .saturating_sub(margin)
    }

    /// How long the connection may fail to confirm anything before the
    /// command must be stopped, counted from the last answered `sync` while
    /// all was well (the evidence then lags it by a ping gap and a
    /// heartbeat). `None` when there is no room at all: the command would be
    /// stopped even with a healthy connection.
    pub(crate) fn ride_through(&self, margin: Duration) -> Option<Duration> {
        let lag = self.ping_gap + 2 * self.heartbeat;
        self.stop_after_evidence(margin)
            .checked_sub(lag)
            .filter(|room| *room >= 2 * self.heartbeat)
    }
}

/// The latest evidence that the leader heard of the session, kept fresh by a
/// heartbeat task for as long as this lives. The task borrows the session's
/// client for each `sync` from a slot that [`stop`](Self::stop) empties:
/// the client closes the session when its last handle goes, so stop the
/// heartbeat before closing.
pub(crate) struct LeaderEvidence {
    latest: watch::Receiver<Instant>,
    heartbeat: tokio::task::JoinHandle<()>,
    client: ClientSlot,
}

impl Drop for LeaderEvidence {
    fn drop(&mut self) {
        self.client.empty();
        self.heartbeat.abort();
    }
}

/// The heartbeat's handle on the client, which its owner can take away at
/// once: an aborted task is only dropped, with what it holds, when the
/// runtime next gets to it, and a close asked for meanwhile would wait.
#[derive(Clone)]
struct ClientSlot(Arc<Mutex<Option<zkc::Client>>>);

impl ClientSlot {
    /// The client, unless the slot was emptied.
    fn get(&self) -> Option<zkc::Client> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn empty(&self) {
        drop(self.0.lock().unwrap_or_else(|e| e.into_inner()).take());
    }
}

impl LeaderEvidence {
    /// Stops the heartbeat. It no longer holds the client once this
    /// returns, unless a `sync` of its is on the wire (the handle goes with
    /// the answer), so a close asked for next goes out at once, behind the
    /// requests sent before it.
    pub(crate) fn stop(self) {
        drop(self);
    }

    /// Starts the heartbeat of `session`. The first evidence is the
    /// session's creation, which the leader made after the connect request
    /// that asked for it was sent. Not earlier: a connect that was retried
    /// for seconds (a server at its limit of connections from this host
    /// drops the first attempts) would leave that much less of the deadline.
    pub(crate) fn track(session: &Session) -> LeaderEvidence {
        let (sender, latest) = watch::channel(session.connect_sent());
        let timing = Timing::for_session(session.session_timeout());
        let states = session.client().state_watcher();
        let client = ClientSlot(Arc::new(Mutex::new(Some(session.client().clone()))));
        let heartbeat = tokio::spawn(heartbeat(client.clone(), states, timing, sender));
        LeaderEvidence {
            latest,
            heartbeat,
            client,
        }
    }

    /// The latest evidence.
    pub(crate) fn latest(&self) -> Instant {
        *self.latest.borrow()
    }

    /// How long the leader has gone unheard, when that is already too long
    /// to stop a command `margin` before it could expire a session of
    /// `session_timeout`; `None` while there is time.
    pub(crate) fn lapsed(&self, session_timeout: Duration, margin: Duration) -> Option<Duration> {
        let silent = self.latest().elapsed();
        let stop_after = Timing::for_session(session_timeout).stop_after_evidence(margin);
        (silent >= stop_after).then_some(silent)
    }
}

/// The answered heartbeats of the current connection, oldest first, and the
/// evidence they give.
#[derive(Debug, Default)]
struct Answers {
    /// (sent, answered) of each answered `sync` on this connection.
    seen: VecDeque<(Instant, Instant)>,
    /// After a reconnect: the send time of the last `sync` answered on the
    /// old connection, and when the change was noticed.
    carried: Option<(Instant, Instant)>,
}

impl Answers {
    /// Records a `sync` sent at `sent` and answered at `answered`, and returns
    /// the evidence it gives, if any.
    ///
    /// Pairs on one connection: the send time of the latest earlier request
    /// answered at least `ping_gap` before `sent`, since the leader learnt of
    /// a touch made after it.
    ///
    /// Across a reconnect: a server takes a known session back only once the
    /// leader has validated it, and the leader touches the session when it
    /// does. The client asked for that only after it gave up the old
    /// connection, so after the last answer there, hence after that answer's
    /// request was sent. The first `sync` sent after the change was noticed
    /// and answered shows the new connection is up.
    fn record(&mut self, sent: Instant, answered: Instant, ping_gap: Duration) -> Option<Instant> {
        let old_enough = |(_, r): &(Instant, Instant)| *r + ping_gap <= sent;
        while self.seen.get(1).is_some_and(old_enough) {
            self.seen.pop_front();
        }
        let paired = self
            .seen
            .front()
            .filter(|answer| old_enough(answer))
            .map(|(s, _)| *s);
        let carried = match self.carried {
            Some((evidence, noticed)) if sent >= noticed => {
                self.carried = None;
                Some(evidence)
            }
            _ => None,
        };
        self.seen.push_back((sent, answered));
        paired.max(carried)
    }

    /// Forgets the answers of this connection, keeping what a reconnect
    /// already noticed will prove.
    fn forget(&mut self) {
        self.seen.clear();
    }

    /// The connection changed (noticed at `noticed`): a touch on the old
    /// server says nothing about pings on the new one, so start afresh, but
    /// carry what the reconnect itself will prove.
    fn reconnecting(&mut self, noticed: Instant) {
        let last = self.seen.back().map(|(s, _)| *s);
        let carried = self.carried.map(|(evidence, _)| evidence).max(last);
        self.carried = carried.map(|evidence| (evidence, noticed));
        self.seen.clear();
    }
}

/// Sends a `sync` every heartbeat and publishes the evidence the answers
/// give. After a failure or a reconnect it sends the next one as soon as
/// the client is connected again, so a reconnect is re-confirmed at once.
async fn heartbeat(
    client: ClientSlot,
    mut states: zkc::StateWatcher,
    timing: Timing,
    evidence: watch::Sender<Instant>,
) {
    let mut answers = Answers::default();
    loop {
        if states.peek_state().is_terminated() {
            return;
        }
        let Some(handle) = client.get() else {
            return;
        };
        let sent = Instant::now();
        let answered = handle.sync("/").await;
        drop(handle);
        // A change of state means this answer may have come on either
        // connection: use none of it, and ask again.
        if states.changed().now_or_never().is_some() {
            answers.reconnecting(Instant::now());
            continue;
        }
        match answered {
            Ok(()) => {
                if let Some(proof) = answers.record(sent, Instant::now(), timing.ping_gap) {
                    evidence.send_if_modified(|latest| {
                        let newer = proof > *latest;
                        if newer {
                            *latest = proof;
                        }
                        newer
                    });
                }
                tokio::time::sleep(timing.heartbeat).await;
            }
            Err(err) => {
                tracing::debug!("heartbeat sync failed: {err}");
                // Only a reconnect proves anything about the time before it;
                // a failure without one leaves no pair to trust either.
                match tokio::time::timeout(timing.heartbeat, states.changed()).await {
                    Ok(_) => answers.reconnecting(Instant::now()),
                    Err(_) => answers.forget(),
                }
            }
        }
    }
}

/// Resolves when the session is over, or when the leader may expire it
/// within `margin` of now, by the evidence `evidence` keeps.
pub(crate) async fn lapse(session: &Session, evidence: &LeaderEvidence, margin: Duration) -> Lapse {
    let client = session.client();
    let timing = Timing::for_session(client.session_timeout());
    let stop_after = timing.stop_after_evidence(margin);
    let deadline = || evidence.latest() + stop_after;
    let mut states = client.state_watcher();
    let mut state = states.state();
    loop {
        if state.is_terminated() {
            return Lapse::Ended(state.to_string());
        }
        tokio::select! {
            next = states.changed() => {
                report_change(next, deadline());
                state = next;
            }
            // The heartbeat may have moved the deadline while we slept.
            () = tokio::time::sleep_until(deadline()) => if let Some(silent) = evidence.lapsed(timing.session_timeout, margin) {
                tracing::warn!(
                    "no evidence that the ZooKeeper leader heard of the session for {silent:?} \
                     (session timeout {:?}, margin {margin:?}): the lock counts as lost",
                    timing.session_timeout
                );
                return Lapse::Silent(silent);
            }
        }
    }
}

fn report_change(state: zkc::SessionState, deadline: Instant) {
    match state {
        zkc::SessionState::Disconnected => tracing::warn!(
            "connection to ZooKeeper lost; the lock counts as lost in {:?} unless it comes back",
            deadline.saturating_duration_since(Instant::now())
        ),
        zkc::SessionState::SyncConnected => {
            tracing::info!(event = "reconnected", "reconnected to ZooKeeper")
        }
        other => tracing::info!("session state: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_session_leaves_room_to_ride_through_a_reconnect() {
        let timing = Timing::for_session(Duration::from_secs(10));
        let kill_after = timing.default_kill_after();
        assert_eq!(kill_after, Duration::from_secs(2));
        let room = timing.ride_through(kill_after).expect("room");
        assert!(room > Duration::from_secs(4), "{room:?}");
        assert!(Timing::silence_limit(Duration::from_secs(10)) * 3 < room);
    }

    #[test]
    fn a_short_session_works_with_its_default_kill_after() {
        let timing = Timing::for_session(Duration::from_secs(2));
        assert!(timing.ride_through(timing.default_kill_after()).is_some());
    }

    #[test]
    fn a_kill_after_that_eats_the_session_leaves_no_room() {
        let timing = Timing::for_session(Duration::from_secs(10));
        assert_eq!(
            timing.ride_through(Duration::from_secs(5)),
            Some(Duration::from_millis(1300))
        );
        assert_eq!(timing.ride_through(Duration::from_secs(7)), None);
    }

    #[test]
    fn evidence_needs_a_ping_gap_between_an_answer_and_a_later_sync() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let gap = ms(1000);
        let mut answers = Answers::default();
        assert_eq!(answers.record(t0, t0 + ms(10), gap), None);
        assert_eq!(answers.record(t0 + ms(500), t0 + ms(510), gap), None);
        // Sent 1000 ms after the first answer: the first request's send time.
        assert_eq!(answers.record(t0 + ms(1010), t0 + ms(1020), gap), Some(t0));
        assert_eq!(
            answers.record(t0 + ms(1600), t0 + ms(1610), gap),
            Some(t0 + ms(500))
        );
        // A reconnect noticed at 2000: the next sync sent after it carries
        // the last one answered before it, and pairs start afresh.
        answers.reconnecting(t0 + ms(2000));
        assert_eq!(answers.record(t0 + ms(1900), t0 + ms(2100), gap), None);
        assert_eq!(
            answers.record(t0 + ms(2200), t0 + ms(2210), gap),
            Some(t0 + ms(1600))
        );
        assert_eq!(answers.record(t0 + ms(2700), t0 + ms(2710), gap), None);
    }
}
