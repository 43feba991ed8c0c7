//! Semaphores: locks that several contenders hold at once, each
//! by a *lease* node, up to a maximum.
//!
//! - Curator's `InterProcessSemaphoreV2` at `<path>` keeps each lease as an
//!   ephemeral-sequential `<path>/leases/_c_<uuid>-lease-N`. An acquirer first
//!   takes the internal mutex `<path>/locks/`, then creates its lease; while
//!   more leases exist than allowed, it waits *holding that mutex*, its lease
//!   node already in place. The maximum is not stored in ZooKeeper.
//! - kazoo's `Semaphore` at `<path>` keeps each lease as an ephemeral
//!   `<path>/<hex32>` (no sequence) and the maximum in `<path>`'s data. An
//!   acquirer queues on the kazoo lock `<path>-__lock__`; its holder creates a
//!   lease once one is free, so a waiting acquirer has no lease node yet.
//!
//! Who holds a semaphore and who waits is decided here; the order within the
//! internal mutex is that mutex's own [`LockQueue`], as for every other lock.

use super::name::{self, Dialect};
use super::queue::{LockQueue, QueueEntry, Standing};

/// The child of a Curator semaphore that holds the leases.
pub(crate) const CURATOR_LEASES: &str = "leases";
/// The child of a Curator semaphore that holds its internal mutex.
pub(crate) const CURATOR_LOCKS: &str = "locks";
/// What kazoo appends to a semaphore's path to name its internal lock.
pub(crate) const KAZOO_LOCK_SUFFIX: &str = "-__lock__";

/// A recognised lease node name: whose, and its sequence if it has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LeaseName {
    pub dialect: Dialect,
    /// Curator's sequence suffix; kazoo's leases have none.
    pub sequence: Option<i32>,
}

/// Recognises a lease node name: Curator's `_c_<uuid>-lease-N` or kazoo's
/// `<hex32>`; `None` for anything else.
pub(crate) fn parse_lease(name: &str) -> Option<LeaseName> {
    if name::is_hex32(name) {
        return Some(LeaseName {
            dialect: Dialect::Kazoo,
            sequence: None,
        });
    }
    let (stem, sequence) = name::split_sequence(name)?;
    (stem.starts_with("_c_") && stem.ends_with("-lease-")).then_some(LeaseName {
        dialect: Dialect::Curator,
        sequence: Some(sequence),
    })
}

/// The path of the kazoo lock that acquirers of the semaphore at `path`
/// queue on.
pub(crate) fn kazoo_lock_path(path: &str) -> String {
    format!("{path}{KAZOO_LOCK_SUFFIX}")
}

/// The maximum number of leases kazoo stores in the semaphore node: its data
/// as a decimal number; `None` when the data is anything else.
pub(crate) fn kazoo_max_leases(data: &[u8]) -> Option<u32> {
    std::str::from_utf8(data).ok()?.trim().parse().ok()
}

/// One lease node of a semaphore.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Lease {
    /// The child name.
    pub name: String,
    pub dialect: Dialect,
    pub sequence: Option<i32>,
    /// The node's czxid: kazoo's leases have no sequence, so they are granted
    /// in creation order.
    pub czxid: i64,
    /// The session that owns the (ephemeral) lease node.
    pub session: i64,
}

/// What a waiting acquirer of a semaphore waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AcquirerWait<'a> {
    /// Any lease to go: it holds the internal mutex.
    ForLease,
    /// The acquirer just ahead of it in the internal mutex.
    OnAcquirer(&'a QueueEntry),
    /// The pending lease, whose client holds the internal mutex.
    OnLease(&'a Lease),
}

/// A semaphore's leases and acquirers, with who holds and who waits.
#[derive(Clone, Debug)]
pub(crate) struct SemaphoreQueue {
    dialect: Dialect,
    /// In grant order.
    leases: Vec<Lease>,
    /// The index of the Curator lease still waiting for room, if any.
    pending: Option<usize>,
    /// The contenders of the internal mutex.
    acquirers: LockQueue,
}

impl SemaphoreQueue {
    /// A Curator semaphore. `acquirer_session` is the session of the node
    /// that holds the internal mutex, if any: that client is acquiring now,
    /// so the newest lease is its own and waits for room when it is the
    /// session's. Leases are granted in sequence order.
    pub(crate) fn curator(
        mut leases: Vec<Lease>,
        acquirers: LockQueue,
        acquirer_session: Option<i64>,
    ) -> SemaphoreQueue {
        leases.sort_by(|a, b| {
            a.sequence
                .cmp(&b.sequence)
                .then_with(|| a.name.cmp(&b.name))
        });
        let pending = leases
            .len()
            .checked_sub(1)
            .filter(|&newest| Some(leases[newest].session) == acquirer_session);
        SemaphoreQueue {
            dialect: Dialect::Curator,
            leases,
            pending,
            acquirers,
        }
    }

    /// A kazoo semaphore: every lease node is granted (kazoo creates one only
    /// when there is room), in creation order.
    pub(crate) fn kazoo(mut leases: Vec<Lease>, acquirers: LockQueue) -> SemaphoreQueue {
        leases.sort_by_key(|lease| lease.czxid);
        SemaphoreQueue {
            dialect: Dialect::Kazoo,
            leases,
            pending: None,
            acquirers,
        }
    }

    /// Whose semaphore this is.
    pub(crate) fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The granted leases, in grant order.
    pub(crate) fn holders(&self) -> impl Iterator<Item = &Lease> {
        self.leases
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != self.pending)
            .map(|(_, lease)| lease)
    }

    /// The lease that waits for room (Curator only): its client holds the
    /// internal mutex until another lease goes.
    pub(crate) fn pending(&self) -> Option<&Lease> {
        self.pending.map(|i| &self.leases[i])
    }

    /// The acquirers that wait, in queue order, each with what it waits
    /// for. The holder of the internal mutex waits for a free lease; when its
    /// lease is [`pending`](Self::pending), it is that lease's client and is
    /// left out here, and the acquirer behind it waits on that lease.
    pub(crate) fn waiting_acquirers(
        &self,
    ) -> impl Iterator<Item = (&QueueEntry, AcquirerWait<'_>)> {
        let pending = self.pending();
        self.acquirers
            .entries()
            .filter(move |(_, standing)| !(pending.is_some() && *standing == Standing::Holding))
            .map(move |(contender, standing)| {
                let wait = match self.acquirers.waiting_on(standing) {
                    None => AcquirerWait::ForLease,
                    Some(ahead) => match pending {
                        Some(lease) if self.holds_internal_mutex(ahead) => {
                            AcquirerWait::OnLease(lease)
                        }
                        _ => AcquirerWait::OnAcquirer(ahead),
                    },
                };
                (contender, wait)
            })
    }

    fn holds_internal_mutex(&self, acquirer: &QueueEntry) -> bool {
        self.acquirers
            .holders()
            .any(|holder| holder.name == acquirer.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "2f1c4d9e8a7b4c3d9e2f1a2b3c4d5e6f";
    const UUID: &str = "2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f";

    fn lease(name: &str, sequence: Option<i32>, czxid: i64, session: i64) -> Lease {
        Lease {
            name: name.to_owned(),
            dialect: Dialect::Curator,
            sequence,
            czxid,
            session,
        }
    }

    fn names<'a>(leases: impl Iterator<Item = &'a Lease>) -> Vec<&'a str> {
        leases.map(|l| l.name.as_str()).collect()
    }

    #[test]
    fn recognises_lease_names() {
        assert_eq!(
            parse_lease(&format!("_c_{UUID}-lease-0000000004")),
            Some(LeaseName {
                dialect: Dialect::Curator,
                sequence: Some(4)
            })
        );
        assert_eq!(
            parse_lease(&format!("_c_{UUID}-lease--000000004")).and_then(|l| l.sequence),
            Some(-4)
        );
        assert_eq!(
            parse_lease(HEX),
            Some(LeaseName {
                dialect: Dialect::Kazoo,
                sequence: None
            })
        );
        for name in [
            "lease-0000000001",
            "leases",
            "locks",
            &HEX[1..],
            "x-lease-0000000001",
        ] {
            assert_eq!(parse_lease(name), None, "{name}");
        }
    }

    #[test]
    fn reads_kazoo_max_leases() {
        assert_eq!(kazoo_max_leases(b"3"), Some(3));
        assert_eq!(kazoo_max_leases(b" 12\n"), Some(12));
        assert_eq!(kazoo_max_leases(b""), None);
        assert_eq!(kazoo_max_leases(b"three"), None);
        assert_eq!(kazoo_max_leases(b"\xff"), None);
        assert_eq!(kazoo_lock_path("/locks/s"), "/locks/s-__lock__");
    }

    #[test]
    fn a_curator_lease_of_the_acquiring_session_waits() {
        let leases = vec![
            lease("c", Some(3), 30, 0x3),
            lease("a", Some(1), 10, 0x1),
            lease("b", Some(2), 20, 0x2),
        ];
        let acquirers = LockQueue::from_children(["lock-0000000007", "lock-0000000008"]);
        let queue = SemaphoreQueue::curator(leases.clone(), acquirers.clone(), Some(0x3));
        assert_eq!(names(queue.holders()), ["a", "b"]);
        assert_eq!(queue.pending().map(|l| l.name.as_str()), Some("c"));
        // The mutex holder is the pending lease's client: shown once, as its
        // lease, and the acquirer behind it waits on that lease.
        let waiting: Vec<(&str, AcquirerWait<'_>)> = queue
            .waiting_acquirers()
            .map(|(c, wait)| (c.name.as_str(), wait))
            .collect();
        assert_eq!(
            waiting,
            [("lock-0000000008", AcquirerWait::OnLease(&leases[0]))]
        );

        // No one acquiring: every lease is granted.
        let idle = SemaphoreQueue::curator(leases, LockQueue::default(), None);
        assert_eq!(names(idle.holders()), ["a", "b", "c"]);
        assert!(idle.pending().is_none());
    }

    #[test]
    fn a_curator_acquirer_without_a_lease_waits_for_one() {
        let leases = vec![lease("a", Some(1), 10, 0x1)];
        let acquirers = LockQueue::from_children(["lock-0000000007"]);
        let queue = SemaphoreQueue::curator(leases, acquirers, Some(0x9));
        assert_eq!(names(queue.holders()), ["a"]);
        assert!(queue.pending().is_none());
        let waiting: Vec<(&str, AcquirerWait<'_>)> = queue
            .waiting_acquirers()
            .map(|(c, wait)| (c.name.as_str(), wait))
            .collect();
        assert_eq!(waiting, [("lock-0000000007", AcquirerWait::ForLease)]);
    }

    #[test]
    fn kazoo_leases_are_all_granted_in_creation_order() {
        let leases = vec![lease("y", None, 20, 0x2), lease("x", None, 10, 0x1)];
        let acquirers = LockQueue::from_children([
            format!("{HEX}__lock__0000000002"),
            format!("{HEX}__lock__0000000001"),
        ]);
        let queue = SemaphoreQueue::kazoo(leases, acquirers);
        assert_eq!(queue.dialect(), Dialect::Kazoo);
        assert_eq!(names(queue.holders()), ["x", "y"]);
        let first = &queue.acquirers.contenders()[0];
        let waiting: Vec<(&str, AcquirerWait<'_>)> = queue
            .waiting_acquirers()
            .map(|(c, wait)| (c.name.as_str(), wait))
            .collect();
        assert_eq!(
            waiting,
            [
                (first.name.as_str(), AcquirerWait::ForLease),
                (
                    &format!("{HEX}__lock__0000000002"),
                    AcquirerWait::OnAcquirer(first)
                ),
            ]
        );
    }
}
