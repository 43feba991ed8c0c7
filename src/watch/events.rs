//! Lock events for `watch`: what changed between two readings of a lock.
//!
//! The events of one change go out in one order ([`in_event_order`]),
//! whether they come from comparing two whole readings ([`changes`]) or
//! from the queue `watch` keeps node by node: departures first, then the
//! holders that stop holding, from the last one back, then the contenders
//! that start holding or arrive, in queue order. A handoff reads
//! `released`, then `acquired`; a contender that takes its place ahead of
//! the holders reads `waiting` for each of them, then `acquired`. So even
//! between the events of one change, holders stand ahead of waiters and a
//! lock never shows more holders than its rules allow.

use std::collections::HashMap;

use serde::Serialize;

use crate::clock;
use crate::lock::ContenderMode;
use crate::lock::end::EndHow;
use crate::model::{Contender, Lock};
use crate::zk;

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum EventKind {
    /// Current state when the watch began: this contender holds.
    Holding,
    /// Current state when the watch began: this contender waits.
    Queued,
    /// End of the current state; changes follow.
    Watching,
    /// A contender arrived and waits (or a holder went back to waiting).
    Waiting,
    /// A contender holds now that did not before.
    Acquired,
    /// A holder's node is gone.
    Released,
    /// A waiter's node is gone before it held.
    Left,
    /// The holder just acquired keeps a lock-delay, and the hold before
    /// ended uncleanly: its command waits.
    #[serde(rename = "lock_delay")]
    LockDelay,
    /// The lock directory was deleted.
    Gone,
    /// The connection was lost (or the session replaced): changes while it
    /// was down may be missing; the state was read again.
    Gap,
}

impl EventKind {
    /// The name used in output.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EventKind::Holding => "holding",
            EventKind::Queued => "queued",
            EventKind::Watching => "watching",
            EventKind::Waiting => "waiting",
            EventKind::Acquired => "acquired",
            EventKind::Released => "released",
            EventKind::Left => "left",
            EventKind::LockDelay => "lock_delay",
            EventKind::Gone => "gone",
            EventKind::Gap => "gap",
        }
    }

    /// True for the events that report a change (what `--count` counts), not
    /// the state at the start or the watch's own news.
    pub(crate) fn is_change(self) -> bool {
        matches!(
            self,
            EventKind::Waiting
                | EventKind::Acquired
                | EventKind::Released
                | EventKind::Left
                | EventKind::Gone
        )
    }
}

/// One event: what happened to which lock and contender, and how many hold
/// and wait in that lock after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LockEvent {
    /// When the watch saw it, in milliseconds since the epoch.
    pub time_ms: i64,
    pub kind: EventKind,
    /// The lock directory (for `watching` and `gap`: the watched path).
    pub lock: String,
    /// The contender it is about; `None` for `watching`, `gone` and `gap`.
    pub contender: Option<Contender>,
    /// Holders after the event (for `watching` and `gap`: in every lock
    /// under the watched path).
    pub holders: usize,
    /// Waiters after the event, counted like `holders`.
    pub waiters: usize,
    /// How long the hold or wait that this event ends lasted, and how a
    /// hold ended, as far as the watch can tell (see `ends`).
    pub lasted: Lasted,
}

/// What the watch knows of a hold or a wait that an event ends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Lasted {
    /// On `released`: how long the contender held, when the watch saw the
    /// hold begin.
    pub held_ms: Option<i64>,
    /// On `acquired`: how long the contender waited, when the watch saw it
    /// arrive.
    pub waited_ms: Option<i64>,
    /// On `released`: how the hold ended.
    pub how: Option<HoldEnd>,
}

/// How a hold ended, and what says so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HoldEnd {
    pub how: How,
    pub evidence: Evidence,
    /// Who ended it and why, when an end record says so.
    pub by: Option<EndedBy>,
}

/// Who ended a hold and why, from the end record zklock wrote.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct EndedBy {
    pub user: String,
    pub host: String,
    pub pid: u32,
    pub reason: Option<String>,
}

/// How a hold ended, as far as a client can tell: ZooKeeper does not say
/// who deleted a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum How {
    /// The node was deleted while its session lived on: released by its
    /// owner, or broken by another client.
    DeletedWhileSessionAlive,
    /// Its session ended (closed or expired), which deletes its nodes.
    SessionEnded,
    /// `__REVOKE__` was written into the node before it went.
    Revoked,
    /// A zklock holder let go.
    Released,
    /// A zklock holding part of a set of locks gave up the set.
    GaveUp,
    /// A zklock holder stopped its command at `--max-hold` and let go.
    MaxHold,
    /// `zklock release` deleted it.
    Broken,
    /// `zklock reap` deleted it.
    Reaped,
    /// A zklock holder lost its lock and deleted what was left of it.
    Lost,
    /// Nothing tells.
    Unknown,
}

impl From<EndHow> for How {
    fn from(how: EndHow) -> How {
        match how {
            EndHow::Released => How::Released,
            EndHow::GaveUp => How::GaveUp,
            EndHow::MaxHold => How::MaxHold,
            EndHow::Broken => How::Broken,
            EndHow::Reaped => How::Reaped,
            EndHow::Lost => How::Lost,
        }
    }
}

impl How {
    /// How the end record this came from said the hold ended; `None` for
    /// what a client tells without one.
    pub(crate) fn recorded(self) -> Option<EndHow> {
        match self {
            How::Released => Some(EndHow::Released),
            How::GaveUp => Some(EndHow::GaveUp),
            How::MaxHold => Some(EndHow::MaxHold),
            How::Broken => Some(EndHow::Broken),
            How::Reaped => Some(EndHow::Reaped),
            How::Lost => Some(EndHow::Lost),
            How::DeletedWhileSessionAlive | How::SessionEnded | How::Revoked | How::Unknown => None,
        }
    }

    /// The name used in output and as the exporter's `how` label.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            How::DeletedWhileSessionAlive => "deleted_while_session_alive",
            How::SessionEnded => "session_ended",
            How::Revoked => "revoked",
            How::Released => "released",
            How::GaveUp => "gave_up",
            How::MaxHold => "max_hold",
            How::Broken => "broken",
            How::Reaped => "reaped",
            How::Lost => "lost",
            How::Unknown => "unknown",
        }
    }

    /// Every value, for counters that start at 0.
    pub(crate) const ALL: [How; 10] = [
        How::DeletedWhileSessionAlive,
        How::SessionEnded,
        How::Revoked,
        How::Released,
        How::GaveUp,
        How::MaxHold,
        How::Broken,
        How::Reaped,
        How::Lost,
        How::Unknown,
    ];
}

/// What a [`How`] rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Evidence {
    /// The node's data was `__REVOKE__` when last read.
    RevokeWritten,
    /// Another node of the same session is still in the watched tree.
    SessionHasOtherNodes,
    /// An ensemble member lists a connection of the session.
    SessionConnected,
    /// Every member answered, and none lists the session.
    SessionListedNowhere,
    /// Some member could not be asked about its sessions.
    MembersSilent,
    /// A persistent node (a TTL lock) has no session to ask about.
    NoSession,
    /// The end record zklock wrote into the lock directory as it deleted
    /// the node names it.
    EndRecord,
}

impl Evidence {
    /// The evidence for people.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Evidence::RevokeWritten => "__REVOKE__ was written into the node",
            Evidence::SessionHasOtherNodes => "its session still has other nodes here",
            Evidence::SessionConnected => "its session is still connected",
            Evidence::SessionListedNowhere => "no ensemble member lists its session",
            Evidence::MembersSilent => "some ensemble member could not be asked",
            Evidence::NoSession => "a persistent node has no session",
            Evidence::EndRecord => "the end record written with the delete names it",
        }
    }
}

/// A lock event as JSON: one object per line of `watch -o json`.
#[derive(Serialize)]
struct LockEventJson<'a> {
    time: String,
    time_ms: i64,
    event: EventKind,
    lock: &'a str,
    node: Option<&'a str>,
    mode: Option<ContenderMode>,
    session: Option<String>,
    fence: Option<i64>,
    owner_text: Option<String>,
    waiting_on: Option<&'a str>,
    holders: usize,
    waiters: usize,
    held_ms: Option<i64>,
    waited_ms: Option<i64>,
    how: Option<How>,
    how_evidence: Option<Evidence>,
    ended_by: Option<&'a EndedBy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lock_delay_ms: Option<u64>,
}

impl Serialize for LockEvent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let contender = self.contender.as_ref();
        LockEventJson {
            time: clock::format_utc_ms(self.time_ms),
            time_ms: self.time_ms,
            event: self.kind,
            lock: &self.lock,
            node: contender.map(|c| c.path.as_str()),
            mode: contender.map(|c| c.mode),
            session: contender.map(|c| zk::format_session(c.session())),
            fence: contender.map(Contender::fence),
            owner_text: contender.map(Contender::owner_text),
            waiting_on: contender.and_then(|c| c.waiting_on.as_deref()),
            holders: self.holders,
            waiters: self.waiters,
            held_ms: self.lasted.held_ms,
            waited_ms: self.lasted.waited_ms,
            how: self.lasted.how.as_ref().map(|end| end.how),
            how_evidence: self.lasted.how.as_ref().map(|end| end.evidence),
            ended_by: self.lasted.how.as_ref().and_then(|end| end.by.as_ref()),
            lock_delay_ms: (self.kind == EventKind::LockDelay)
                .then(|| super::delays::lock_delay_ms(self))
                .flatten(),
        }
        .serialize(serializer)
    }
}

/// The state of `lock` as events: `holding` for each holder, `queued` for
/// each waiter, in queue order.
pub(super) fn snapshot(lock: &Lock, time_ms: i64) -> Vec<LockEvent> {
    lock.standings()
        .map(|(contender, holds)| LockEvent {
            time_ms,
            kind: if holds {
                EventKind::Holding
            } else {
                EventKind::Queued
            },
            lock: lock.path.clone(),
            contender: Some(contender.clone()),
            holders: lock.holders.len(),
            waiters: lock.waiters.len(),
            lasted: Lasted::default(),
        })
        .collect()
}

/// The events that take the lock at `path` from `old` to `new` (`None`: no
/// lock there, no contender left): first the contenders that are gone
/// (`released` or `left`), then those whose standing changed, in event
/// order ([`in_event_order`]). The counts of each event are those after it,
/// as if the events happened one after another.
pub(super) fn changes(
    path: &str,
    old: Option<&Lock>,
    new: Option<&Lock>,
    time_ms: i64,
) -> Vec<LockEvent> {
    let standings = |lock: Option<&Lock>| -> HashMap<String, bool> {
        lock.map(|lock| {
            lock.standings()
                .map(|(c, holds)| (c.path.clone(), holds))
                .collect()
        })
        .unwrap_or_default()
    };
    let (before, after) = (standings(old), standings(new));
    let mut counts = Counts::of(old);
    let mut events = Vec::new();
    let gone = old
        .into_iter()
        .flat_map(Lock::contenders)
        .filter(|c| !after.contains_key(&c.path));
    for contender in gone {
        let held = before.get(&contender.path).copied();
        events.extend(counts.change(path, contender, held, None, time_ms));
    }
    let moved = new
        .into_iter()
        .flat_map(Lock::standings)
        .map(|(contender, holds)| (contender, before.get(&contender.path).copied(), holds));
    for (contender, held, holds) in in_event_order(moved.collect()) {
        events.extend(counts.change(path, contender, held, Some(holds), time_ms));
    }
    events
}

/// The contenders of one lock whose standing may have changed, given in
/// queue order with their standing before (`None`: not there) and whether
/// they hold now, put in the order their events go out: first those that
/// stop holding, from the last one back, then the others in queue order.
pub(super) fn in_event_order<T>(
    moved: Vec<(T, Option<bool>, bool)>,
) -> Vec<(T, Option<bool>, bool)> {
    let (mut stopped, others): (Vec<_>, Vec<_>) = moved
        .into_iter()
        .partition(|(_, held, holds)| *held == Some(true) && !holds);
    stopped.reverse();
    stopped.extend(others);
    stopped
}

/// How many contenders of one lock hold and wait, kept as its events
/// happen one after another: each event carries the counts after it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Counts {
    pub holders: usize,
    pub waiters: usize,
}

impl Counts {
    /// The counts of `lock` (none when there is no lock).
    pub(super) fn of(lock: Option<&Lock>) -> Counts {
        lock.map_or(Counts::default(), |lock| Counts {
            holders: lock.holders.len(),
            waiters: lock.waiters.len(),
        })
    }

    /// The event for `contender` of the lock at `path`, whose standing went
    /// from `before` to `after` (`Some(true)` holding, `Some(false)`
    /// waiting, `None` not a contender there), counted; `None` when its
    /// standing did not change.
    pub(super) fn change(
        &mut self,
        path: &str,
        contender: &Contender,
        before: Option<bool>,
        after: Option<bool>,
        time_ms: i64,
    ) -> Option<LockEvent> {
        let kind = match (before, after) {
            _ if before == after => return None,
            (_, Some(true)) => EventKind::Acquired,
            (_, Some(false)) => EventKind::Waiting,
            (Some(true), None) => EventKind::Released,
            (_, None) => EventKind::Left,
        };
        for (standing, add) in [(before, false), (after, true)] {
            let count = match standing {
                Some(true) => &mut self.holders,
                Some(false) => &mut self.waiters,
                None => continue,
            };
            *count = if add { *count + 1 } else { *count - 1 };
        }
        Some(LockEvent {
            time_ms,
            kind,
            lock: path.to_owned(),
            contender: Some(contender.clone()),
            holders: self.holders,
            waiters: self.waiters,
            lasted: Lasted::default(),
        })
    }
}

/// A lock-level event (`watching`, `gone`, `gap`) with the given counts.
pub(super) fn lock_event(
    kind: EventKind,
    lock: &str,
    holders: usize,
    waiters: usize,
    time_ms: i64,
) -> LockEvent {
    LockEvent {
        time_ms,
        kind,
        lock: lock.to_owned(),
        contender: None,
        holders,
        waiters,
        lasted: Lasted::default(),
    }
}

/// Each event as (kind, node, holders, waiters), for tests to compare
/// streams of events at a glance.
#[cfg(test)]
pub(super) fn kinds(events: &[LockEvent]) -> Vec<(&str, &str, usize, usize)> {
    events
        .iter()
        .map(|e| {
            let node = e.contender.as_ref().map_or("", |c| c.name.as_str());
            (e.kind.as_str(), node, e.holders, e.waiters)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::locks::{NodeRead, queue_lock};

    const NOW: i64 = 1_700_000_100_000;

    fn lock(names: &[&str]) -> Option<Lock> {
        let reads = names
            .iter()
            .map(|name| {
                // Each node's czxid and session follow its sequence number.
                let i: i64 = name[name.len() - 10..].parse().unwrap();
                let stat = zk::Stat {
                    pzxid: 0,
                    ctime: NOW,
                    mtime: NOW,
                    ..zk::test_stat(10 + i, 0x100 + i)
                };
                let read = NodeRead {
                    data: Vec::new(),
                    stat,
                };
                (name.to_string(), read)
            })
            .collect();
        queue_lock("/l", reads, NOW)
    }

    #[test]
    fn a_handoff_is_released_then_acquired() {
        let old = lock(&["lock-0000000001", "lock-0000000002", "lock-0000000003"]);
        let new = lock(&["lock-0000000002", "lock-0000000003"]);
        let events = changes("/l", old.as_ref(), new.as_ref(), NOW);
        assert_eq!(
            kinds(&events),
            [
                ("released", "lock-0000000001", 0, 2),
                ("acquired", "lock-0000000002", 1, 1)
            ]
        );
        assert_eq!(events[1].contender.as_ref().unwrap().fence(), 12);
    }

    #[test]
    fn arrivals_wait_or_acquire_and_waiters_leave() {
        let events = changes("/l", None, lock(&["lock-0000000001"]).as_ref(), NOW);
        assert_eq!(kinds(&events), [("acquired", "lock-0000000001", 1, 0)]);
        let old = lock(&["lock-0000000001", "lock-0000000002"]);
        let new = lock(&["lock-0000000001", "lock-0000000003"]);
        let events = changes("/l", old.as_ref(), new.as_ref(), NOW);
        assert_eq!(
            kinds(&events),
            [
                ("left", "lock-0000000002", 1, 0),
                ("waiting", "lock-0000000003", 1, 1)
            ]
        );
        let events = changes("/l", old.as_ref(), None, NOW);
        assert_eq!(
            kinds(&events),
            [
                ("released", "lock-0000000001", 0, 1),
                ("left", "lock-0000000002", 0, 0)
            ]
        );
        assert!(changes("/l", old.as_ref(), old.as_ref(), NOW).is_empty());
    }

    #[test]
    fn readers_acquire_together_when_the_writer_goes() {
        let old = lock(&["write-0000000001", "read-0000000002", "read-0000000003"]);
        let new = lock(&["read-0000000002", "read-0000000003"]);
        let events = changes("/l", old.as_ref(), new.as_ref(), NOW);
        assert_eq!(
            kinds(&events),
            [
                ("released", "write-0000000001", 0, 2),
                ("acquired", "read-0000000002", 1, 1),
                ("acquired", "read-0000000003", 2, 0)
            ]
        );
    }

    #[test]
    fn the_snapshot_lists_holders_then_waiters_and_only_changes_count() {
        let state = lock(&["lock-0000000001", "lock-0000000002"]).unwrap();
        let events = snapshot(&state, NOW);
        assert_eq!(
            kinds(&events),
            [
                ("holding", "lock-0000000001", 1, 1),
                ("queued", "lock-0000000002", 1, 1)
            ]
        );
        assert!(events.iter().all(|e| !e.kind.is_change()));
        assert!(EventKind::Gone.is_change() && !EventKind::Gap.is_change());
    }

    #[test]
    fn json_names_the_node_and_its_owner_and_fence() {
        let state = lock(&["lock-0000000001", "lock-0000000002"]).unwrap();
        let json = serde_json::to_value(&snapshot(&state, NOW)[1]).unwrap();
        assert_eq!(json["event"], "queued");
        assert_eq!(json["node"], "/l/lock-0000000002");
        assert_eq!(json["waiting_on"], "/l/lock-0000000001");
        assert_eq!(json["fence"], 12);
        assert_eq!(json["session"], "0x102");
        assert_eq!(json["owner_text"], "session 0x102");
        assert_eq!(json["time_ms"], NOW);
        let gone = serde_json::to_value(lock_event(EventKind::Gone, "/l", 0, 0, NOW)).unwrap();
        assert_eq!(gone["node"], serde_json::Value::Null);
        assert_eq!(gone["event"], "gone");
    }
}
