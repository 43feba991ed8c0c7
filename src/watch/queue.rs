//! One queue lock (a mutex, a read-write lock, an election) as `watch`
//! keeps it between changes: its contenders in queue order, brought up to
//! date one node at a time.
//!
//! A change of one contender costs a few ordered-map lookups, however long
//! the queue: the queue rules decide a contender's standing from the
//! contender just ahead of it, the nearest exclusive one ahead and the head
//! (`lock::queue::waits_on`, the rules `lock` and `stat` use), and the
//! holders are always the first contenders of the queue. So a change can
//! only move the boundary between holders and waiters, and only the
//! contenders it moves past are looked at: each of them gets an event.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use super::events::{self, Counts, LockEvent};
use crate::lock::node;
use crate::lock::queue::{self, Ahead, QueueEntry};
use crate::model::locks::{NodeRead, queue_lock, queued_contender};
use crate::model::{Contender, Lock};
use crate::zk::path;

/// The contenders of one queue lock, in queue order, with who holds.
#[derive(Debug)]
pub(super) struct LiveQueue {
    /// The lock directory.
    path: String,
    /// Every contender, in queue order. Their `waiting_on` is left empty:
    /// it is worked out when a contender is shown.
    contenders: BTreeMap<QueueEntry, Contender>,
    /// The exclusive ones among them, to find the nearest ahead of anyone.
    exclusive: BTreeSet<QueueEntry>,
    /// The last contender that holds: the holders are the contenders up to
    /// it, as the queue rules never let a waiter stand ahead of a holder.
    last_holder: Option<QueueEntry>,
    counts: Counts,
}

impl LiveQueue {
    /// The queue `lock` (a mutex, read-write lock or election) read whole.
    pub(super) fn new(lock: Lock) -> LiveQueue {
        let mut queue = LiveQueue {
            path: lock.path,
            contenders: BTreeMap::new(),
            exclusive: BTreeSet::new(),
            last_holder: None,
            counts: Counts::default(),
        };
        for mut contender in lock.holders.into_iter().chain(lock.waiters) {
            let Some(entry) = QueueEntry::parse(&contender.name) else {
                continue;
            };
            contender.waiting_on = None;
            queue.add(entry, contender);
        }
        // Everyone waits until the queue rules say who holds.
        queue.counts.waiters = queue.contenders.len();
        queue.settle_events(None, 0);
        queue
    }

    /// How many hold and how many wait.
    pub(super) fn counts(&self) -> Counts {
        self.counts
    }

    /// True when no contender is left: then there is no lock.
    pub(super) fn is_empty(&self) -> bool {
        self.contenders.is_empty()
    }

    /// The lock as a reading of it now would show it; `None` when no
    /// contender is left. It costs as much as the queue is long: for
    /// comparing with a reading of the whole tree.
    pub(super) fn lock(&self, now_ms: i64) -> Option<Lock> {
        let reads = self.contenders.iter().map(|(entry, contender)| {
            let read = NodeRead {
                data: contender.data.clone(),
                stat: contender.stat,
            };
            (entry.name.clone(), read)
        });
        queue_lock(&self.path, reads.collect(), now_ms)
    }

    /// The node `name` of this directory was deleted: its `released` or
    /// `left` event, then the `acquired` events of those who hold now.
    pub(super) fn remove(&mut self, name: &str, time_ms: i64) -> Vec<LockEvent> {
        let Some(entry) = QueueEntry::parse(name) else {
            return Vec::new();
        };
        let Some(gone) = self.shown(&entry) else {
            return Vec::new();
        };
        let held = self.holds(&entry);
        if self.last_holder.as_ref() == Some(&entry) {
            self.last_holder = self.before(&entry).cloned();
        }
        self.contenders.remove(&entry);
        self.exclusive.remove(&entry);
        let departure = self
            .counts
            .change(&self.path, &gone, Some(held), None, time_ms);
        let mut events: Vec<LockEvent> = departure.into_iter().collect();
        events.extend(self.settle_events(None, time_ms));
        events
    }

    /// The node `name` of this directory was read as `read` after it was
    /// made or its data changed: a contender by the contender rule joins
    /// the queue (`acquired` or `waiting`, and `waiting` for any holder it
    /// now stands ahead of) or has its data brought up to date; any other
    /// node is no contender, and leaves the queue if it was in it.
    pub(super) fn update(&mut self, name: &str, read: NodeRead, time_ms: i64) -> Vec<LockEvent> {
        let entry = QueueEntry::parse(name)
            .filter(|_| node::contender(name, &read.stat, &read.data).is_some());
        let Some(entry) = entry else {
            return self.remove(name, time_ms);
        };
        if let Some(known) = self.contenders.get_mut(&entry) {
            known.data = read.data;
            known.stat = read.stat;
            return Vec::new();
        }
        let contender = queued_contender(&self.path, &entry, entry.mode(), read, time_ms);
        self.add(entry.clone(), contender);
        self.settle_events(Some(&entry), time_ms)
    }

    fn add(&mut self, entry: QueueEntry, contender: Contender) {
        if !queue::is_shared(&entry) {
            self.exclusive.insert(entry.clone());
        }
        self.contenders.insert(entry, contender);
    }

    /// The contender just ahead of `entry`.
    fn before(&self, entry: &QueueEntry) -> Option<&QueueEntry> {
        self.contenders.range(..entry).next_back().map(|(e, _)| e)
    }

    /// Whom `entry` waits on by the queue rules; `None` when it holds.
    fn waits_on<'a>(&'a self, entry: &'a QueueEntry) -> Option<&'a QueueEntry> {
        let ahead = Ahead {
            just_ahead: self.before(entry),
            exclusive: self.exclusive.range(..entry).next_back().map(|e| (e, e)),
            head: self.contenders.keys().next().unwrap_or(entry),
        };
        queue::waits_on(entry, ahead)
    }

    /// Whether `entry` holds, as last settled.
    fn holds(&self, entry: &QueueEntry) -> bool {
        self.last_holder.as_ref().is_some_and(|last| entry <= last)
    }

    /// The contender `entry` as events show it: with the node it waits on.
    fn shown(&self, entry: &QueueEntry) -> Option<Contender> {
        let mut contender = self.contenders.get(entry)?.clone();
        contender.waiting_on = self
            .waits_on(entry)
            .map(|ahead| path::join(&self.path, &ahead.name));
        Some(contender)
    }

    /// [`LiveQueue::settle`] as events, in event order, counted.
    fn settle_events(&mut self, arrived: Option<&QueueEntry>, time_ms: i64) -> Vec<LockEvent> {
        let moved = events::in_event_order(self.settle(arrived));
        let mut events = Vec::with_capacity(moved.len());
        for (entry, before, holds) in moved {
            let contender = self.shown(&entry).expect("a moved contender is queued");
            let change = self
                .counts
                .change(&self.path, &contender, before, Some(holds), time_ms);
            events.extend(change);
        }
        events
    }

    /// Moves the boundary between holders and waiters to where the queue
    /// rules put it after one contender left or `arrived`, and returns each
    /// contender whose standing that changed (the arrival always), with its
    /// standing before (`None` for the arrival) and whether it holds now, in
    /// queue order.
    ///
    /// The last holder that is still queued either still holds (then the
    /// contenders behind it that hold now follow it), or it does not (then
    /// it and the holders just ahead of it that do not hold any more are
    /// the ones that lost): the holders are the first contenders of the
    /// queue before and after the change.
    fn settle(&mut self, arrived: Option<&QueueEntry>) -> Vec<(QueueEntry, Option<bool>, bool)> {
        let was = |entry: &QueueEntry, held: bool| (Some(entry) != arrived).then_some(held);
        let mut moved = Vec::new();
        match self.last_holder.clone() {
            Some(last) if self.waits_on(&last).is_some() => {
                let mut holds_now = None;
                for entry in self.contenders.range(..=&last).rev().map(|(e, _)| e) {
                    if self.waits_on(entry).is_none() {
                        holds_now = Some(entry.clone());
                        break;
                    }
                    moved.push((entry.clone(), was(entry, true), false));
                }
                moved.reverse();
                self.last_holder = holds_now;
            }
            last => {
                let behind = match &last {
                    Some(last) => (Bound::Excluded(last), Bound::Unbounded),
                    None => (Bound::Unbounded, Bound::Unbounded),
                };
                for entry in self.contenders.range(behind).map(|(e, _)| e) {
                    if self.waits_on(entry).is_some() {
                        break;
                    }
                    moved.push((entry.clone(), was(entry, false), true));
                    self.last_holder = Some(entry.clone());
                }
            }
        }
        if let Some(arrived) = arrived
            && !moved.iter().any(|(entry, _, _)| entry == arrived)
        {
            let at = moved.partition_point(|(entry, _, _)| entry < arrived);
            moved.insert(at, (arrived.clone(), None, self.holds(arrived)));
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::Owner;
    use crate::watch::events::{self, kinds};
    use crate::zk;

    const NOW: i64 = 1_700_000_100_000;
    const PATH: &str = "/l";
    const UUID: &str = "2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f";
    const SESSION: i64 = 0x1000_0a2b_3c4d_0005;

    /// A node's read: made at `czxid`, ephemeral when `owned`, with `data`.
    fn read(czxid: i64, owned: bool, data: &[u8]) -> NodeRead {
        let owner = if owned { SESSION + czxid } else { 0 };
        NodeRead {
            data: data.to_vec(),
            stat: zk::Stat {
                ctime: NOW - czxid,
                data_length: data.len() as i32,
                ..zk::test_stat(czxid, owner)
            },
        }
    }

    /// The nodes of one directory and the queue kept from them, changed
    /// one node at a time; every change is checked against a reading of
    /// the whole directory.
    struct Churn {
        nodes: Vec<(String, NodeRead)>,
        live: LiveQueue,
        next_czxid: i64,
    }

    impl Churn {
        fn new() -> Churn {
            let empty = Lock {
                path: PATH.to_owned(),
                kind: crate::model::LockKind::Mutex,
                dialect: crate::model::LockDialect::Mixed,
                holders: Vec::new(),
                waiters: Vec::new(),
                max_leases: None,
                last_run: crate::model::locks::LastRun::Unread,
            };
            Churn {
                nodes: Vec::new(),
                live: LiveQueue::new(empty),
                next_czxid: 1,
            }
        }

        fn reading(&self) -> Option<Lock> {
            queue_lock(PATH, self.nodes.clone(), NOW)
        }

        /// Changes the directory with `change`, tells the queue with
        /// `tell`, and checks that its events are those between the whole
        /// readings before and after, and that it now reads as a whole
        /// reading does; returns the events.
        fn check(
            &mut self,
            change: impl FnOnce(&mut Vec<(String, NodeRead)>),
            tell: impl FnOnce(&mut LiveQueue) -> Vec<LockEvent>,
        ) -> Vec<LockEvent> {
            let before = self.reading();
            change(&mut self.nodes);
            let after = self.reading();
            let events = tell(&mut self.live);
            let expected = events::changes(PATH, before.as_ref(), after.as_ref(), NOW);
            assert_eq!(events, expected, "nodes now: {:#?}", self.nodes);
            assert_eq!(self.live.lock(NOW), after);
            assert_eq!(self.live.counts(), Counts::of(after.as_ref()));
            assert_eq!(self.live.is_empty(), after.is_none());
            events
        }

        fn make(&mut self, name: &str, owned: bool, data: &[u8]) -> Vec<LockEvent> {
            let node = read(self.next_czxid, owned, data);
            self.next_czxid += 1;
            let name = name.to_owned();
            let told = node.clone();
            self.check(
                |nodes| nodes.push((name.clone(), node)),
                |live| live.update(&name, told, NOW),
            )
        }

        fn delete(&mut self, name: &str) -> Vec<LockEvent> {
            self.check(
                |nodes| nodes.retain(|(n, _)| n != name),
                |live| live.remove(name, NOW),
            )
        }

        fn set_data(&mut self, name: &str, data: &[u8]) -> Vec<LockEvent> {
            let index = self.nodes.iter().position(|(n, _)| n == name).unwrap();
            let mut node = self.nodes[index].1.clone();
            node.data = data.to_vec();
            node.stat.data_length = data.len() as i32;
            node.stat.version += 1;
            let told = node.clone();
            self.check(
                |nodes| nodes[index].1 = node,
                |live| live.update(name, told, NOW),
            )
        }
    }

    fn curator(kind: &str, seq: i32) -> String {
        format!("_c_{UUID}-{kind}{seq:010}")
    }

    #[test]
    fn a_handoff_and_arrivals_in_a_mutex() {
        let mut churn = Churn::new();
        let events = churn.make("lock-0000000001", true, b"");
        assert_eq!(kinds(&events), [("acquired", "lock-0000000001", 1, 0)]);
        let events = churn.make("lock-0000000002", true, b"");
        assert_eq!(kinds(&events), [("waiting", "lock-0000000002", 1, 1)]);
        assert_eq!(
            events[0].contender.as_ref().unwrap().waiting_on.as_deref(),
            Some("/l/lock-0000000001")
        );
        churn.make("lock-0000000003", true, b"");
        let events = churn.delete("lock-0000000001");
        assert_eq!(
            kinds(&events),
            [
                ("released", "lock-0000000001", 0, 2),
                ("acquired", "lock-0000000002", 1, 1)
            ]
        );
        // A waiter that gives up in the middle: no one else moves.
        churn.make("lock-0000000004", true, b"");
        let events = churn.delete("lock-0000000003");
        assert_eq!(kinds(&events), [("left", "lock-0000000003", 1, 1)]);
        // Its follower now waits on the holder.
        let shown = churn
            .live
            .shown(&QueueEntry::parse("lock-0000000004").unwrap());
        assert_eq!(
            shown.unwrap().waiting_on.as_deref(),
            Some("/l/lock-0000000002")
        );
        assert!(churn.delete("lock-0000000009").is_empty());
    }

    #[test]
    fn readers_hold_together_up_to_the_first_writer() {
        let mut churn = Churn::new();
        churn.make(&curator("__READ__", 1), true, b"");
        churn.make(&curator("__READ__", 2), true, b"");
        let events = churn.make(&curator("__WRIT__", 3), true, b"");
        assert_eq!(kinds(&events)[0].0, "waiting");
        churn.make(&curator("__READ__", 4), true, b"");
        churn.make(&curator("__READ__", 5), true, b"");
        churn.delete(&curator("__READ__", 1));
        let events = churn.delete(&curator("__READ__", 2));
        assert_eq!(
            kinds(&events),
            [
                ("released", curator("__READ__", 2).as_str(), 0, 3),
                ("acquired", curator("__WRIT__", 3).as_str(), 1, 2)
            ]
        );
        let events = churn.delete(&curator("__WRIT__", 3));
        assert_eq!(
            kinds(&events)[1..],
            [
                ("acquired", curator("__READ__", 4).as_str(), 1, 1),
                ("acquired", curator("__READ__", 5).as_str(), 2, 0)
            ]
        );
    }

    #[test]
    fn a_contender_ahead_of_the_holders_takes_over() {
        let mut churn = Churn::new();
        churn.make(&curator("__WRIT__", 5), true, b"");
        // The writer's downgrade: a read node of the same sequence holds
        // with it.
        let events = churn.make(&curator("__READ__", 5), true, b"");
        assert_eq!(kinds(&events)[0].0, "acquired");
        churn.make(&curator("__READ__", 6), true, b"");
        // A wrapped sequence sorts first: everyone else waits, the holders
        // from the last one back, before it acquires.
        let events = churn.make("lock--000000002", true, b"");
        assert_eq!(
            kinds(&events),
            [
                ("waiting", curator("__READ__", 5).as_str(), 1, 2),
                ("waiting", curator("__WRIT__", 5).as_str(), 0, 3),
                ("acquired", "lock--000000002", 1, 3)
            ]
        );
        churn.delete("lock--000000002");
    }

    #[test]
    fn only_nodes_that_pass_the_contender_rule_count() {
        let mut churn = Churn::new();
        // A persistent node with a lock's name is some application's data.
        assert!(churn.make("lock-0000000001", false, b"").is_empty());
        churn.make("lock-0000000002", true, b"");
        // Until it carries zklock's owner record (a --ttl lock).
        let owner = Owner::of_this_process(None, None).to_bytes();
        let events = churn.set_data("lock-0000000001", &owner);
        assert_eq!(
            kinds(&events),
            [
                ("waiting", "lock-0000000002", 0, 1),
                ("acquired", "lock-0000000001", 1, 1)
            ]
        );
        assert!(churn.set_data("lock-0000000002", b"new data").is_empty());
        let events = churn.set_data("lock-0000000001", b"");
        assert_eq!(kinds(&events)[0], ("released", "lock-0000000001", 0, 1));
        assert!(churn.make("config", true, b"").is_empty());
    }

    /// Random churn of mixed contenders and non-contenders, each change
    /// checked against whole readings.
    #[test]
    fn random_churn_agrees_with_whole_readings() {
        let owner = Owner::of_this_process(None, None).to_bytes();
        for seed in 0..20 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let mut churn = Churn::new();
            let mut sequence = 0;
            for _ in 0..300 {
                let names: Vec<String> = churn.nodes.iter().map(|(n, _)| n.clone()).collect();
                match rng.u8(0..10) {
                    0..=3 => {
                        sequence += 1;
                        let seq = match rng.u8(0..10) {
                            // Ahead of the queue, or beside a writer.
                            0 => rng.i32(-3..sequence),
                            _ => sequence,
                        };
                        let name = match rng.u8(0..5) {
                            0 => format!("lock-{seq:010}"),
                            1 | 2 => curator("__READ__", seq),
                            3 => curator("__WRIT__", seq),
                            _ => format!("{}-__READ__{seq:010}", &UUID[..7]),
                        };
                        if !names.contains(&name) {
                            churn.make(&name, rng.u8(0..8) != 0, b"");
                        }
                    }
                    4..=7 if !names.is_empty() => {
                        churn.delete(&names[rng.usize(..names.len())]);
                    }
                    _ if !names.is_empty() => {
                        let data: &[u8] = if rng.bool() { &owner } else { b"x" };
                        churn.set_data(&names[rng.usize(..names.len())], data);
                    }
                    _ => {}
                }
            }
        }
    }
}
