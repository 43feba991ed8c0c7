//! Which wait a lock command queues in: a lock's, with one contender node,
//! or a semaphore's, with a lease node and a node on its internal mutex.
//! The command says what it wants ([`Acquisition::new`]); everything after
//! is the same for both.

use super::acquire::{AcquireError, Contention, LockSpec, Outcome, Patience, Waiting};
use super::delay::Entry;
use super::lease::{LeaseContention, SemaphoreSpec};
use crate::zk::{self, NodeWatch, Session};

/// A lock's contention or a semaphore lease's.
pub(crate) enum Acquisition<'s> {
    /// Boxed, as the lease is: each carries a node's worth of state.
    Lock(Box<Contention<'s>>),
    /// Boxed: a lease's contention carries two nodes' worth of state.
    Lease(Box<LeaseContention<'s>>),
}

/// What changed ahead of a waiter, for whoever shows the wait.
pub(crate) enum QueueChange<'a> {
    /// The lock's queue ahead of us, with its holder.
    Lock(&'a Waiting),
    /// Something changed among a semaphore's leases or its waiters: the
    /// model reads them, when someone wants to know.
    Semaphore,
}

impl<'s> Acquisition<'s> {
    /// The lock `spec` names, or with `max_leases` one lease of the
    /// semaphore at `spec.path` (its kind and time to live do not apply).
    pub(crate) fn new(session: &'s Session, spec: LockSpec, max_leases: Option<u32>) -> Self {
        match max_leases {
            Some(max_leases) => Acquisition::Lease(Box::new(LeaseContention::new(
                session,
                SemaphoreSpec {
                    path: spec.path,
                    dialect: spec.dialect,
                    max_leases,
                    data: spec.data,
                    ender: spec.ender,
                },
            ))),
            None => Acquisition::Lock(Box::new(Contention::new(session, spec))),
        }
    }

    /// Waits as `patience` allows; `on_change` hears of every change ahead
    /// of us (with `holder_details`, a lock's holder's data is read for it,
    /// one more request per change).
    ///
    /// Cancel-safe: if the future is dropped, [`Acquisition::abandon`] still
    /// finds and deletes our nodes.
    pub(crate) async fn acquire(
        &mut self,
        patience: Patience,
        holder_details: bool,
        mut on_change: impl FnMut(QueueChange<'_>),
    ) -> Result<Outcome, AcquireError> {
        match self {
            Acquisition::Lock(contention) => {
                let on_wait = |waiting: &Waiting| on_change(QueueChange::Lock(waiting));
                contention.acquire(patience, holder_details, on_wait).await
            }
            Acquisition::Lease(contention) => {
                let on_wait = || on_change(QueueChange::Semaphore);
                contention.acquire(patience, on_wait).await
            }
        }
    }

    /// The watch a lock's wait left on our node (see
    /// [`Contention::take_own_watch`]); a lease has none to hand on.
    pub(crate) fn take_own_watch(&mut self) -> Option<NodeWatch> {
        match self {
            Acquisition::Lock(contention) => contention.take_own_watch(),
            Acquisition::Lease(_) => None,
        }
    }

    /// With `--lock-delay`: keeps the evidence of the lock's ends, making
    /// a missing lock directory persistent.
    pub(crate) fn make_persistent(&mut self) {
        match self {
            Acquisition::Lock(contention) => contention.make_persistent(),
            Acquisition::Lease(contention) => contention.make_persistent(),
        }
    }

    /// Once acquired: what we learnt of the ends before our hold (the
    /// lease's, for a semaphore).
    pub(crate) fn take_entry(&mut self) -> Option<Entry> {
        match self {
            Acquisition::Lock(contention) => contention.take_entry(),
            Acquisition::Lease(contention) => contention.take_entry(),
        }
    }

    /// Deletes every node we made on the way.
    pub(crate) async fn abandon(&mut self) -> Result<(), zk::Error> {
        match self {
            Acquisition::Lock(contention) => contention.abandon().await,
            Acquisition::Lease(contention) => contention.abandon().await,
        }
    }
}
