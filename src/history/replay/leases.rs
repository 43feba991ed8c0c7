//! Semaphore leases replayed as holds: Curator's `InterProcessSemaphoreV2`,
//! kazoo's `Semaphore`, and zklock's `sem` in either layout (see
//! `lock::semaphore`).
//!
//! A lease node is not a queue contender: every lease of a semaphore holds
//! at once, up to its maximum. What orders the acquirers is the semaphore's
//! internal lock (`<path>/locks` for Curator, `<path>-__lock__` for kazoo),
//! replayed as a lock of its own; a lease is told by who creates it:
//!
//! - A Curator lease is created by the holder of the internal lock, which
//!   keeps that lock while more leases exist than allowed. So the lease
//!   begins to hold when that node of the internal lock goes (a lease
//!   created with no internal-lock node of its session holds at once).
//! - A kazoo lease is created only once there is room, by the holder of the
//!   internal lock: it holds from its creation. A hex name created by a
//!   session that holds no such lock is not a lease.
//!
//! A lease's wait counts from when its acquirer queued on the internal lock:
//! that is how long the client waited for a lease. Leases of one semaphore
//! never overlap as exclusive holders do; only more leases held at once than
//! the maximum kazoo stores in the semaphore's data would be an overlap.
//! Curator keeps its maximum in no node, so its leases are never counted.
//!
//! The leases waiting for room are kept under the internal-lock node whose
//! going lets them hold, so that a holder making thousands of them costs
//! nothing per transaction after; the held ones are counted, not listed,
//! for the overlaps. The maxima are remembered from the creates of
//! persistent nodes and the data writes whose data is a number, a bounded
//! number of them under their paths as kept (see `kept`), so that a log
//! full of such nodes cannot exhaust memory.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

use super::{Cause, Ended, Found, Live, Node, Owned, Replay};
use crate::history::kept::{self, Who};
use crate::history::overlap::{self, Holder, Overlaps};
use crate::history::txnlog::{Create, Txn};
use crate::lock::ContenderMode;
use crate::lock::Dialect;
use crate::lock::queue::QueueEntry;
use crate::lock::semaphore::{self, CURATOR_LEASES, CURATOR_LOCKS};
use crate::zk::{self, path};

/// At most this many semaphores' maxima are remembered at once.
const MAXIMA: usize = 4096;

/// An internal-lock node: its directory and itself.
type LockNode = (Rc<str>, Rc<QueueEntry>);

/// A lease: its semaphore and its name.
type LeaseOf = (Rc<str>, Rc<str>);

/// The live leases and what they need.
#[derive(Debug, Default)]
pub(super) struct Leases {
    /// Each semaphore with a live lease.
    semaphores: HashMap<Rc<str>, Semaphore>,
    /// The leases waiting for room, under the internal-lock node whose
    /// going lets them hold.
    waiting_on: BTreeMap<LockNode, BTreeSet<LeaseOf>>,
    /// The maximum that nodes' data gives, by path as kept (kazoo's
    /// semaphores).
    maxima: HashMap<Box<str>, u32>,
    /// Semaphores whose leases changed in the transaction being applied.
    touched: BTreeSet<Rc<str>>,
    /// Moments with more leases held than the maximum, when asked for.
    overlaps: Option<Overlaps>,
}

/// One semaphore's live leases.
#[derive(Debug, Default)]
struct Semaphore {
    leases: HashMap<Rc<str>, LiveLease>,
    /// Those that hold, in grant order (by fence).
    holding: BTreeSet<(i64, Rc<str>)>,
    /// Set when one began or ended to hold, until its overlaps are told.
    changed: bool,
}

/// A live lease.
#[derive(Debug)]
struct LiveLease {
    dialect: Dialect,
    live: Live,
    /// The internal-lock node it waits for, until it holds.
    waits_for: Option<LockNode>,
}

/// Where a lease node lives: its semaphore, and the semaphore's internal
/// lock directory.
struct Site {
    semaphore: String,
    internal_lock: String,
    dialect: Dialect,
}

/// The semaphore a node at `full` would be a lease of, by its name and
/// place: Curator's `<sem>/leases/_c_<uuid>-lease-N`, kazoo's `<sem>/<hex32>`.
fn site(full: &str) -> Option<Site> {
    let dir = path::parent(full)?;
    let lease = semaphore::parse_lease(path::basename(full))?;
    match lease.dialect {
        Dialect::Kazoo => Some(Site {
            semaphore: dir.to_owned(),
            internal_lock: semaphore::kazoo_lock_path(dir),
            dialect: Dialect::Kazoo,
        }),
        _ => {
            if path::basename(dir) != CURATOR_LEASES {
                return None;
            }
            let semaphore = path::parent(dir)?;
            Some(Site {
                semaphore: semaphore.to_owned(),
                internal_lock: path::join(semaphore, CURATOR_LOCKS),
                dialect: Dialect::Curator,
            })
        }
    }
}

impl Leases {
    /// Leases that report overlaps when `overlaps` says so.
    pub(super) fn new(overlaps: bool) -> Leases {
        Leases {
            overlaps: overlaps.then(Overlaps::default),
            ..Leases::default()
        }
    }

    /// Remembers `data` as the maximum of the node at `full` when it is a
    /// number, and forgets it otherwise.
    pub(super) fn note_data(&mut self, full: &str, data: &[u8]) {
        let full = kept::name(full);
        match semaphore::kazoo_max_leases(data) {
            Some(max) if self.maxima.len() < MAXIMA || self.maxima.contains_key(&*full) => {
                self.maxima.insert(full.into(), max);
            }
            _ => {
                self.maxima.remove(&*full);
            }
        }
    }

    /// Forgets what was remembered of the node at `full`, now deleted.
    pub(super) fn forget(&mut self, full: &str) {
        self.maxima.remove(&*kept::name(full));
    }

    /// The internal-lock node `dir`'s `entry` went, at `at_ms`: the leases
    /// that waited for it hold.
    pub(super) fn release_waiting_on(&mut self, dir: &Rc<str>, entry: &Rc<QueueEntry>, at_ms: i64) {
        let Some(waiting) = self.waiting_on.remove(&(dir.clone(), entry.clone())) else {
            return;
        };
        for (semaphore, name) in waiting {
            let Some(leases) = self.semaphores.get_mut(&semaphore) else {
                continue;
            };
            if let Some(lease) = leases.leases.get_mut(&name) {
                lease.waits_for = None;
                lease.live.holding_ms.get_or_insert(at_ms);
                leases.holding.insert((lease.live.fence, name));
                leases.changed = true;
                self.touched.insert(semaphore);
            }
        }
    }
}

impl Replay {
    /// Remembers a maximum a node's data may give, for nodes in scope.
    pub(super) fn note_data(&mut self, full: &str, data: &[u8]) {
        if self.scope.covers(full) {
            self.leases.note_data(full, data);
        }
    }

    /// Remembers the maximum a created persistent node's data may give (a
    /// kazoo semaphore is one; ephemeral nodes, which sessions' closes
    /// remove unseen, would only fill the bounded room).
    pub(super) fn note_create(&mut self, create: &Create<'_>) {
        if !create.ephemeral {
            self.note_data(&create.path, create.data);
        }
    }

    /// A created node that is no contender: a lease when its name, its
    /// place and the session's hold of the internal lock say so.
    pub(super) fn create_lease(&mut self, txn: &Txn<'_>, create: &Create<'_>) -> bool {
        if !create.ephemeral {
            return false;
        }
        let Some(site) = site(&create.path).filter(|site| self.scope.covers(&site.semaphore))
        else {
            return false;
        };
        let acquirer = self.acquirer(&site.internal_lock, txn.session);
        if site.dialect == Dialect::Kazoo && acquirer.is_none() {
            return false;
        }
        let holds_now = site.dialect == Dialect::Kazoo || acquirer.is_none();
        let live = Live {
            session: txn.session,
            ephemeral: true,
            fence: txn.zxid,
            created_ms: acquirer.as_ref().map_or(txn.time_ms, |(_, queued)| *queued),
            who: Who::of(site.dialect, create.data, txn.session),
            holding_ms: holds_now.then_some(txn.time_ms),
        };
        let waits_for = acquirer.filter(|_| !holds_now).map(|(node, _)| node);
        self.add_lease(&create.path, site, live, waits_for);
        true
    }

    /// A node of the snapshot the replay starts from, when it is a lease:
    /// held since its creation, as far as the snapshot tells (it cannot
    /// tell when a waiting Curator lease began to hold, as it cannot for a
    /// queue's holder). The hold of the internal lock that made a kazoo
    /// lease is long gone by then, so a kazoo lease is known instead by the
    /// maximum its semaphore's data gives, seen earlier in the snapshot: a
    /// parent comes before its children there. True when it was a lease.
    pub(super) fn seed_lease(&mut self, full: &str, data: &[u8], stat: &zk::Stat) -> bool {
        if stat.ephemeral_owner == 0 {
            return false;
        }
        let Some(site) = site(full).filter(|site| self.scope.covers(&site.semaphore)) else {
            return false;
        };
        if site.dialect == Dialect::Kazoo
            && !self
                .leases
                .maxima
                .contains_key(&*kept::name(&site.semaphore))
        {
            return false;
        }
        let mut live = Live::new(site.dialect, data, stat, stat.ephemeral_owner);
        live.holding_ms = Some(stat.ctime);
        self.add_lease(full, site, live, None);
        true
    }

    /// Keeps `live` as a lease of `site` at `full`, under its session too,
    /// whose close ends it, and under the internal-lock node it
    /// `waits_for`.
    fn add_lease(&mut self, full: &str, site: Site, live: Live, waits_for: Option<LockNode>) {
        let semaphore: Rc<str> = Rc::from(kept::name(&site.semaphore));
        let semaphore = self
            .leases
            .semaphores
            .get_key_value(&semaphore)
            .map_or(semaphore, |(key, _)| key.clone());
        let name: Rc<str> = Rc::from(kept::name(path::basename(full)));
        self.sessions
            .add(live.session, Owned::Lease(semaphore.clone(), name.clone()));
        if let Some(node) = &waits_for {
            self.leases
                .waiting_on
                .entry(node.clone())
                .or_default()
                .insert((semaphore.clone(), name.clone()));
        }
        let leases = self.leases.semaphores.entry(semaphore.clone()).or_default();
        if live.holding_ms.is_some() {
            leases.holding.insert((live.fence, name.clone()));
            leases.changed = true;
        }
        let lease = LiveLease {
            dialect: site.dialect,
            live,
            waits_for,
        };
        leases.leases.insert(name, lease);
        self.leases.touched.insert(semaphore);
    }

    /// The node of `internal_lock` that `session` holds, with when it was
    /// created: the acquirer that creates a lease.
    fn acquirer(&self, internal_lock: &str, session: i64) -> Option<(LockNode, i64)> {
        let (dir, queue) = self.queues.get_key_value(&*kept::name(internal_lock))?;
        let entry = queue.holders().of_session(session)?;
        let created = queue.get(entry)?.created_ms;
        Some(((dir.clone(), entry.clone()), created))
    }

    /// A deleted node that may be a live lease: ended as `deleted` will
    /// tell (with the end record written beside it, if any).
    pub(super) fn delete_lease(&mut self, full: &str, by_server: bool) -> Option<Ended> {
        let site = site(full)?;
        let dir = path::parent(full).unwrap_or_default();
        let cause = Cause::Deleted {
            dir: Rc::from(kept::name(dir)),
            by_server,
        };
        let semaphore = kept::name(&site.semaphore);
        self.take_lease(&semaphore, &kept::name(path::basename(full)), cause)
    }

    /// Takes the live lease `name` of `semaphore` out, ended by `cause`.
    pub(super) fn take_lease(
        &mut self,
        semaphore: &str,
        name: &str,
        cause: Cause,
    ) -> Option<Ended> {
        let key = self.leases.semaphores.get_key_value(semaphore)?.0.clone();
        let leases = self.leases.semaphores.get_mut(&key)?;
        let (name, lease) = leases.leases.remove_entry(name)?;
        if leases.holding.remove(&(lease.live.fence, name.clone())) {
            leases.changed = true;
        }
        if leases.leases.is_empty() {
            self.leases.semaphores.remove(&key);
        }
        if let Some(node) = &lease.waits_for
            && let Some(waiting) = self.leases.waiting_on.get_mut(node)
        {
            waiting.remove(&(key.clone(), name.clone()));
            if waiting.is_empty() {
                self.leases.waiting_on.remove(node);
            }
        }
        self.sessions
            .remove(lease.live.session, Owned::Lease(key.clone(), name.clone()));
        self.leases.touched.insert(key.clone());
        Some(Ended {
            lock: key,
            node: Node::Lease(name, lease.dialect),
            live: lease.live,
            cause,
            record: None,
        })
    }

    /// After a transaction: the semaphores whose held leases changed are
    /// checked against their maximum.
    pub(super) fn settle_leases(&mut self, txn: &Txn<'_>, emit: &mut impl FnMut(Found)) {
        for semaphore in std::mem::take(&mut self.leases.touched) {
            self.watch_lease_overlaps(&semaphore, (txn.zxid, txn.time_ms), emit);
        }
    }

    /// Ends `semaphore`'s overlap when its held leases changed, and begins
    /// one while more leases are held than its known maximum.
    fn watch_lease_overlaps(
        &mut self,
        semaphore: &str,
        at: (i64, i64),
        emit: &mut impl FnMut(Found),
    ) {
        let Some(overlaps) = &mut self.leases.overlaps else {
            return;
        };
        let ended = match self.leases.semaphores.get_mut(semaphore) {
            Some(leases) => {
                if !std::mem::take(&mut leases.changed) {
                    return;
                }
                let count = leases.holding.len();
                let over = self
                    .leases
                    .maxima
                    .get(semaphore)
                    .is_some_and(|&max| count > max as usize);
                let shown = || {
                    leases
                        .holding
                        .iter()
                        .take(overlap::SHOWN)
                        .filter_map(|(fence, name)| {
                            let lease = leases.leases.get(name)?;
                            Some(Holder {
                                node: name.to_string(),
                                dialect: lease.dialect,
                                mode: ContenderMode::Lease,
                                session: lease.live.session,
                                fence: *fence,
                            })
                        })
                        .collect()
                };
                overlaps.changed(semaphore, over, at, count, shown)
            }
            None => overlaps.changed(semaphore, false, at, 0, Vec::new),
        };
        if let Some(ended) = ended
            && self.window.overlaps(ended.from_ms, ended.until_ms)
        {
            emit(Found::Overlap(ended));
        }
    }

    /// Hands out every lease still alive, semaphore by semaphore in grant
    /// order, and the overlaps of leases still in progress.
    pub(super) fn finish_leases(&mut self, emit: &mut impl FnMut(Found)) {
        let mut semaphores: Vec<Rc<str>> = self.leases.semaphores.keys().cloned().collect();
        semaphores.sort();
        for semaphore in semaphores {
            let leases = self
                .leases
                .semaphores
                .remove(&semaphore)
                .unwrap_or_default();
            let mut leases: Vec<(Rc<str>, LiveLease)> = leases.leases.into_iter().collect();
            leases.sort_by_key(|(_, lease)| lease.live.fence);
            for (name, lease) in leases {
                let hold = lease.live.into_hold(
                    semaphore.to_string(),
                    name.to_string(),
                    lease.dialect,
                    ContenderMode::Lease,
                    None,
                );
                self.hand_out(hold, emit);
            }
        }
        for open in self
            .leases
            .overlaps
            .take()
            .into_iter()
            .flat_map(Overlaps::finish)
        {
            if self.window.overlaps(open.from_ms, None) {
                emit(Found::Overlap(open));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{Feed, assert_linear, create};
    use super::*;
    use crate::history::replay::{Hold, How, Scope};
    use crate::history::txnlog::Op;

    const A: i64 = 0x100;
    const B: i64 = 0x200;
    const C: i64 = 0x300;
    const UUID: &str = "2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f";
    const HEX: [&str; 3] = [
        "0123456789abcdef0123456789abcde0",
        "0123456789abcdef0123456789abcde1",
        "0123456789abcdef0123456789abcde2",
    ];

    fn delete(path: &str) -> Op<'_> {
        Op::Delete {
            path: path.into(),
            by_server: false,
        }
    }

    /// Curator's internal-lock node and lease of acquirer `n`.
    fn curator(n: i32) -> (String, String) {
        (
            format!("/s/locks/_c_{UUID}-lock-{n:010}"),
            format!("/s/leases/_c_{UUID}-lease-{n:010}"),
        )
    }

    /// A lease handed out: node, how it ended, when it was created, began
    /// to hold and ended.
    type Seen<'a> = (&'a str, Option<How>, i64, Option<i64>, Option<i64>);

    fn leases(holds: &[Hold]) -> Vec<Seen<'_>> {
        holds
            .iter()
            .filter(|h| h.mode == ContenderMode::Lease)
            .map(|h| {
                assert_eq!(h.lock, "/s");
                let end = h.end.as_ref();
                (
                    h.node.as_str(),
                    end.map(|e| e.how),
                    h.created_ms,
                    h.holding_ms,
                    end.map(|e| e.at_ms),
                )
            })
            .collect()
    }

    #[test]
    fn a_curator_lease_holds_once_its_acquirer_lets_the_internal_lock_go() {
        let mut feed = Feed::overlapping();
        let (lock_a, lease_a) = curator(0);
        let (lock_b, lease_b) = curator(1);
        let (lock_c, lease_c) = curator(2);
        feed.txn(A, 1, create(&lock_a, b"", true)); // 1: A holds the internal lock
        feed.txn(A, 2, create(&lease_a, b"", true)); // 2: its lease waits for room
        feed.txn(A, 3, delete(&lock_a)); // 3: room: the lease holds
        feed.txn(B, 1, create(&lock_b, b"", true)); // 4
        feed.txn(B, 2, create(&lease_b, b"", true)); // 5
        feed.txn(B, 3, delete(&lock_b)); // 6: two leases held at once
        feed.txn(C, 1, create(&lock_c, b"", true)); // 7
        feed.txn(C, 2, create(&lease_c, b"", true)); // 8: no room
        feed.txn(C, 3, delete(&lease_c)); // 9: C gives up
        feed.txn(C, 4, delete(&lock_c)); // 10
        feed.txn(A, 4, delete(&lease_a)); // 11: released
        feed.txn(B, 0, Op::CloseSession); // 12: B's session expired
        let (out, overlaps) = feed.finish_all();
        let name = |full: &str| full.rsplit('/').next().unwrap().to_owned();
        let (a, b, c) = (name(&lease_a), name(&lease_b), name(&lease_c));
        assert_eq!(
            leases(&out),
            [
                (c.as_str(), Some(How::GaveUp), 7000, None, Some(9000)),
                (
                    a.as_str(),
                    Some(How::Released),
                    1000,
                    Some(3000),
                    Some(11000)
                ),
                (
                    b.as_str(),
                    Some(How::Expired),
                    4000,
                    Some(6000),
                    Some(12000)
                ),
            ]
        );
        let lease = out.iter().find(|h| h.node == a).unwrap();
        assert_eq!(
            (lease.waited_ms(), lease.held_ms()),
            (Some(2000), Some(8000))
        );
        assert_eq!((lease.fence, lease.dialect), (2, Dialect::Curator));
        // The internal lock is a lock of its own; leases, with no maximum
        // known, never overlap.
        assert!(out.iter().any(|h| h.lock == "/s/locks"));
        assert!(overlaps.is_empty(), "{overlaps:#?}");
    }

    #[test]
    fn kazoo_leases_past_the_maximum_in_the_data_overlap() {
        let mut feed = Feed::overlapping();
        let lock = |n: i32| format!("/s-__lock__/{}__lock__{n:010}", HEX[2]);
        let lease = |n: usize| format!("/s/{}", HEX[n]);
        feed.txn(A, 1, create("/s", b"", false)); // 1
        feed.txn(
            A,
            2,
            Op::SetData {
                path: "/s".into(),
                data: b"1",
            },
        ); // 2: at most one lease
        feed.txn(A, 3, create(&lock(0), b"", true)); // 3: A holds the lock
        feed.txn(A, 4, create(&lease(0), b"", true)); // 4: A's lease holds
        feed.txn(A, 5, delete(&lock(0))); // 5
        // A hex-named node made by a session not holding the lock is no lease.
        feed.txn(B, 1, create(&lease(1), b"", true)); // 6
        feed.txn(C, 1, create(&lock(1), b"", true)); // 7
        feed.txn(C, 2, create(&lease(2), b"", true)); // 8: two leases, one allowed
        feed.txn(A, 6, delete(&lease(0))); // 9
        feed.txn(C, 3, Op::CloseSession); // 10: closed by its client
        let (out, overlaps) = feed.finish_all();
        assert_eq!(
            leases(&out),
            [
                (HEX[0], Some(How::Released), 3000, Some(4000), Some(9000)),
                (
                    HEX[2],
                    Some(How::ClosedByClient),
                    7000,
                    Some(8000),
                    Some(10000)
                ),
            ]
        );
        assert_eq!(overlaps.len(), 1, "{overlaps:#?}");
        let overlap = &overlaps[0];
        assert_eq!(
            (overlap.lock.as_str(), overlap.from_ms, overlap.until_ms),
            ("/s", 8000, Some(9000))
        );
        let nodes: Vec<&str> = overlap.holders.iter().map(|h| h.node.as_str()).collect();
        assert_eq!(nodes, [HEX[0], HEX[2]]);
    }

    #[test]
    fn leases_alive_in_the_snapshot_hold_from_their_creation_until_the_log_ends_them() {
        use super::super::tests::snapshot_stat;
        let mut feed = Feed::new();
        let (_, curator_lease) = curator(0);
        let kazoo_lease = format!("/s/{}", HEX[0]);
        let stranger = format!("/t/{}", HEX[1]);
        feed.snapshot(
            &[
                ("/s", b"2", snapshot_stat(0, 1, 1000)),
                (&curator_lease, b"", snapshot_stat(A, 3, 3000)),
                (&kazoo_lease, b"", snapshot_stat(B, 4, 4000)),
                // Hex-named under a node whose data is no maximum: no lease.
                ("/t", b"config", snapshot_stat(0, 5, 5000)),
                (&stranger, b"", snapshot_stat(C, 6, 6000)),
            ],
            10,
        );
        feed.txn(A, 1, delete(&curator_lease)); // 11
        feed.txn(B, 1, Op::CloseSession); // 12
        feed.txn(C, 1, delete(&stranger)); // 13
        let (out, _) = feed.finish_all();
        let curator_name = curator_lease.rsplit('/').next().unwrap();
        assert_eq!(
            leases(&out),
            [
                (
                    curator_name,
                    Some(How::Released),
                    3000,
                    Some(3000),
                    Some(11000)
                ),
                (
                    HEX[0],
                    Some(How::ClosedByClient),
                    4000,
                    Some(4000),
                    Some(12000)
                ),
            ]
        );
        let kazoo = out.iter().find(|h| h.node == HEX[0]).unwrap();
        assert_eq!((kazoo.fence, kazoo.session), (4, B));
        assert!(out.iter().all(|h| h.lock != "/t"), "{out:#?}");
    }

    #[test]
    fn leases_waiting_on_one_holder_cost_linear_time() {
        // One session holds Curator's internal lock while it makes leases,
        // each waiting for that lock to go; the transactions after them are
        // nothing to do with them, and cost as little.
        assert_linear("leases waiting on one holder", 3000, |n| {
            let mut feed = Feed::overlapping();
            let (lock, _) = curator(0);
            feed.txn(A, 1, create(&lock, b"", true));
            for i in 0..n {
                let lease = format!("/s/leases/_c_{UUID}-lease-{i:010}");
                feed.txn(A, 2, create(&lease, b"", true));
            }
            for i in 0..n {
                feed.txn(B + i as i64, 1, create(&format!("/other/n{i}"), b"", false));
            }
            feed.txn(A, 3, delete(&lock));
            let (out, _) = feed.finish_all();
            let held: Vec<_> = leases(&out).into_iter().filter(|l| l.3.is_some()).collect();
            assert_eq!(held.len(), n, "every lease holds once the lock goes");
        });
    }

    #[test]
    fn the_maxima_remembered_are_bounded() {
        let mut leases = Leases::default();
        for i in 0..MAXIMA + 10 {
            leases.note_data(&format!("/n{i}"), b"2");
        }
        assert_eq!(leases.maxima.len(), MAXIMA);
        leases.note_data("/n0", b"3");
        assert_eq!(leases.maxima.get("/n0"), Some(&3));
        leases.note_data("/n0", b"config");
        assert_eq!(leases.maxima.get("/n0"), None);
    }

    #[test]
    fn a_semaphores_scope_takes_in_kazoos_internal_lock_beside_it() {
        let scope = Scope { path: "/s".into() };
        assert!(scope.covers("/s-__lock__"));
        assert!(scope.covers("/s/leases"));
        assert!(!scope.covers("/s-__lock__x"));
        assert!(!scope.covers("/t-__lock__"));
    }
}
