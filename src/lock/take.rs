//! Taking locks: what `lock`, `rlock`, `wlock` and `sem` do between their
//! arguments and a held lock, as one operation on a [`Request`].
//!
//! [`take`] connects (never to a read-only server), proves which enclosing
//! holds of ours the process is nested in, and for each lock in canonical
//! order re-enters an enclosing hold that covers it or waits in its queue,
//! looking meanwhile for a certain wait-for cycle through the wait when it
//! is nested. It hands over the [`HeldLock`], or says why the locks are not
//! ours ([`NotTaken`]) once every node it made is deleted and the session
//! closed. Nothing here prints: the caller hears how the wait goes as
//! [`Event`]s, and shows them as it likes.

use std::time::Duration;

use super::acquire::{Held, LockSpec, Outcome, Patience, Waiting};
use super::acquisition::{Acquisition, QueueChange};
use super::delay::{self, Delayed};
use super::end::Ender;
use super::hold::{HeldLock, Hold, Loss, give_up};
use super::name::{ContenderKind, Dialect};
use super::nesting::{self, Enclosing};
use super::once;
use super::owner::{Detachment, Owner};
use super::queue::LockQueue;
use crate::model::{self, Contender, Lock, chains, cycles};
use crate::run::Signals;
use crate::usage::UsageError;
use crate::zk::monitor::{LeaderEvidence, Timing};
use crate::zk::{self, ConnectOptions, Session};

/// What to take, how, and for what.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    /// The locks, in canonical order (sorted by path, duplicates removed);
    /// for a lease, the semaphore.
    pub locks: Vec<String>,
    pub kind: ContenderKind,
    /// One of at most this many leases of the semaphore, rather than the
    /// lock.
    pub max_leases: Option<u32>,
    pub dialect: Dialect,
    /// `-n`: give up at once when a lock is taken.
    pub no_wait: bool,
    /// `-w`: how long all the waits together may take.
    pub timeout: Option<Duration>,
    /// The command, as the owner record names it, and `--data`.
    pub recorded: (Option<Vec<String>>, Option<String>),
    /// What a request that an enclosing hold covers does.
    pub reentry: Reentry,
    /// For a detached holder, what its record says of it.
    pub detached: Option<Detachment>,
    /// A persistent node the server removes after this long unused.
    pub ttl: Option<Duration>,
    /// The root the wait chains are followed under.
    pub root: String,
    /// Whether [`Event::Waiting`] and [`Event::Leases`] should say who
    /// holds: one more read per change in the queue.
    pub details: bool,
    /// A `--once-per` request: a give-up's end record keeps the lock's last
    /// counted run.
    pub keeps_last_run: bool,
    /// `--lock-delay`: after a hold that ended uncleanly, wait this long
    /// (from its end) before handing the locks over.
    pub lock_delay: Option<Duration>,
}

/// What a request does that an enclosing hold of ours covers.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Reentry {
    /// Nothing will run under the lock that the hold could stop: queue, as
    /// anyone would.
    Queue,
    /// A command will run in the process group `group` (its guard's),
    /// stopped within `kill_after` (`None`: a share of the session
    /// timeout) of a loss: run it under the enclosing hold at once.
    Run {
        group: libc::pid_t,
        kill_after: Option<Duration>,
    },
}

/// How the taking goes, for whoever shows it.
pub(crate) enum Event<'a> {
    /// Our node is in the queue of this lock: a wait begins.
    Queued(&'a str),
    /// The queue ahead of us changed: who holds, how many are ahead.
    Waiting(&'a str, &'a Waiting),
    /// The leases of the semaphore we wait for, as they stand now.
    Leases(&'a Lock, u32),
    /// The wait that [`Event::Queued`] began is over, however it ended.
    Waited,
    /// This lock is ours at once, under this enclosing hold.
    Reentered(&'a Held),
    /// An earlier hold of a lock ended uncleanly, or how it ended is
    /// unknown: the locks are ours, but handed over only after the rest of
    /// the lock-delay.
    Delaying(&'a Delayed),
}

/// Why the locks are not ours. Every node made on the way is deleted and
/// the session closed.
pub(crate) enum NotTaken {
    /// `-n` found the lock taken, or `-w` ran out; who held it then.
    Conflict {
        lock: String,
        holders: Vec<Contender>,
    },
    /// A write request under our own read hold of the same lock: never
    /// granted while that hold lasts.
    Upgrade { hold: String },
    /// An enclosing hold covers the request, but its guard would not stop
    /// us with it: re-entered, we could outlive it; queued, we would wait
    /// on our own ancestor.
    Unguarded { lock: String, hold: String },
    /// A certain wait-for cycle runs through our wait, and we are the one
    /// of it to give up; the node whose release breaks it.
    Cycle { lock: String, break_with: String },
    /// `-n` found a lock-delay pending, or it would outlast `-w`: the
    /// lock, and how much of the delay was left.
    Delayed(Delayed),
    /// A lock was lost while its lock-delay ran.
    Lost { held: Held, loss: Loss },
    /// A signal came while we waited.
    Interrupted(i32),
    /// The wait failed (no connection, no permission, ...).
    Failed(anyhow::Error),
}

/// A failure on the way to the locks.
fn failed(err: impl Into<anyhow::Error>) -> NotTaken {
    NotTaken::Failed(err.into())
}

/// Takes the locks `request` names, on a session to the ensemble `connect`
/// names: one after the other in their canonical order, with one patience
/// for every wait; on every other path the nodes made so far are deleted
/// and the session closed.
///
/// A zklock nested in an enclosing hold of ours (proven from its ancestry)
/// may not queue behind it: an upgrade that can never be granted gives up
/// at once, and a request that hold covers re-enters it (when a command
/// will run, within the hold's guard) or gives up.
pub(crate) async fn take(
    connect: &ConnectOptions,
    request: &Request,
    events: &impl Fn(Event<'_>),
    signals: &mut Signals,
) -> Result<HeldLock, NotTaken> {
    let group = match request.reentry {
        Reentry::Run { group, .. } => Some(group),
        Reentry::Queue => None,
    };
    // The owner record (the password database, the host name) and the
    // hints of enclosing holds (our ancestors' environments) are read while
    // the server answers the handshake, not before or after it. The yield
    // lets the runtime see the socket connected (it polls its sockets
    // before it resumes a task that yielded) and the connect, polled first,
    // send the handshake; a near server has the connection up at once, and
    // the record made before the handshake was sent would be in its way.
    let (session, (owner, hints)) = tokio::join!(biased; connect_writable(connect), async {
        tokio::task::yield_now().await;
        let (command, data) = request.recorded.clone();
        let owner = Owner::of_this_process(command, data)
            .in_group(group)
            .in_lineage(request.detached.clone())
            .with_lock_delay(request.lock_delay);
        (owner, nesting::hints())
    });
    let session = session.map_err(failed)?;
    // `-w` counts from the session, as the connect has its own timeout;
    // the record states the same moment, so that whoever reads it
    // (`deadlocks`) knows when this waiter really gives up.
    let patience = Patience::new(request.no_wait, request.timeout);
    let owner = owner.with_deadline(request.timeout.filter(|_| !request.no_wait));
    let enclosing = nesting::proven(&session, hints).await;
    let owner = owner.nested_in(enclosing.iter().map(|hold| hold.node.clone()).collect());
    let margin = match refusal(request, &session, &owner).await {
        Ok(margin) => margin,
        Err(not_taken) => {
            session.close().await;
            return Err(not_taken);
        }
    };
    let evidence = LeaderEvidence::track(&session);
    let ender = Ender::of_owner(&owner);
    let mut holds = Vec::new();
    for lock in &request.locks {
        let one = One {
            request,
            lock,
            owner: &owner,
            enclosing: &enclosing,
        };
        match one.take(&session, patience, events, signals).await {
            Ok(hold) => holds.push(hold),
            Err(not_taken) => {
                give_up(session, evidence, holds, ender).await;
                return Err(not_taken);
            }
        }
    }
    let mut ends = Vec::new();
    if request.lock_delay.is_some() {
        for hold in &mut holds {
            ends.extend(hold.last_end().await);
        }
    }
    let mut holds = holds.into_iter();
    let Some(first) = holds.next() else {
        give_up(session, evidence, Vec::new(), ender).await;
        return Err(failed(anyhow::anyhow!("no lock was named")));
    };
    let held = HeldLock::new(session, evidence, (first, holds.collect()), margin, ender)
        .await
        .map_err(failed)?;
    match request
        .lock_delay
        .and_then(|lock_delay| delay::until(&ends, lock_delay))
    {
        Some(owed) => delay::sit_out(held, owed, patience, margin, (events, signals)).await,
        None => Ok(held),
    }
}

/// Why `request` may not queue at all, before any node is made: an upgrade
/// under our own read hold, or a `--kill-after` the session timeout the
/// server granted leaves no room for. Otherwise the time a command's stop
/// may take (its `--kill-after`; none without a command), which the hold's
/// first deadline must leave room for.
async fn refusal(
    request: &Request,
    session: &Session,
    owner: &Owner,
) -> Result<Duration, NotTaken> {
    let upgrade = request
        .locks
        .iter()
        .filter(|_| request.max_leases.is_none())
        .find_map(|lock| nesting::upgrade(lock, request.kind.mode(), &owner.nested_in));
    if let Some(hold) = upgrade {
        return Err(NotTaken::Upgrade {
            hold: hold.to_owned(),
        });
    }
    match request.reentry {
        Reentry::Run { kill_after, .. } => kill_after_for(session, kill_after).map_err(failed),
        Reentry::Queue => Ok(Duration::ZERO),
    }
}

/// One lock of a [`Request`], with who asks and the holds it is nested in.
struct One<'a> {
    request: &'a Request,
    lock: &'a str,
    owner: &'a Owner,
    enclosing: &'a [Enclosing],
}

impl One<'_> {
    /// Takes the lock on `session`: re-enters an enclosing hold that covers
    /// it, or waits in its queue as `patience` allows, with what it learnt
    /// of the ends before its hold. Our node is deleted on every path that
    /// gives up.
    async fn take(
        &self,
        session: &Session,
        patience: Patience,
        events: &impl Fn(Event<'_>),
        signals: &mut Signals,
    ) -> Result<Hold, NotTaken> {
        if let Some(hold) = self.enclosing_hold(session).await.map_err(failed)? {
            if !self
                .enclosing
                .iter()
                .any(|e| e.node == hold.node && e.guarded)
            {
                return Err(NotTaken::Unguarded {
                    lock: self.lock.to_owned(),
                    hold: hold.node,
                });
            }
            events(Event::Reentered(&hold));
            return Ok(Hold::reentered(hold));
        }
        let request = self.request;
        let ender = Ender::of_owner(self.owner);
        if request.keeps_last_run {
            once::claim_directory(session, self.lock, &ender)
                .await
                .map_err(failed)?;
        }
        let spec = LockSpec {
            path: self.lock.to_owned(),
            kind: request.kind,
            dialect: request.dialect,
            data: self.owner.to_bytes(),
            ttl: request.ttl,
            ender,
            keeps_last_run: request.keeps_last_run,
        };
        let mut acquisition = Acquisition::new(session, spec, request.max_leases);
        if request.lock_delay.is_some() {
            acquisition.make_persistent();
        }
        // Before the wait is shown: Ctrl-Z at a prompt that shows it must
        // find zklock refusing to stop.
        crate::run::refuse_ctrl_z();
        events(Event::Queued(self.lock));
        let waited = self
            .wait(session, &mut acquisition, patience, events, signals)
            .await;
        let kept_watch = acquisition.take_own_watch();
        let entry = acquisition.take_entry();
        waited.map(|held| Hold::ours(held, kept_watch, entry))
    }

    /// Re-entry: the enclosing hold of ours that holds this lock now in a
    /// mode that covers the request ([`nesting::reentry`]), or a lease of
    /// this semaphore granted to an enclosing hold ([`enclosing_lease`]),
    /// for the command to run under at once, with no node of its own;
    /// stopped if that hold ends, and never released by us. `None` when
    /// there is no such hold or no command.
    async fn enclosing_hold(&self, session: &Session) -> Result<Option<Held>, zk::Error> {
        let holds = &self.owner.nested_in;
        if matches!(self.request.reentry, Reentry::Queue) || holds.is_empty() {
            return Ok(None);
        }
        let node = match self.request.max_leases {
            Some(_) => enclosing_lease(session, self.lock, holds).await,
            None => {
                let children = session.children(self.lock).await.unwrap_or_default();
                let queue = LockQueue::from_children(children);
                let asked = self.request.kind.mode();
                nesting::reentry(self.lock, asked, holds, &queue).map(str::to_owned)
            }
        };
        let Some(node) = node else {
            return Ok(None);
        };
        Ok(session.stat(&node).await?.map(|stat| Held {
            lock: self.lock.to_owned(),
            fence: stat.czxid,
            node,
        }))
    }

    /// Waits for the lock, or a signal, telling `events` who holds and how
    /// many wait. Our nodes are deleted on every path that gives up.
    ///
    /// Nested, it also looks for a certain wait-for cycle through our wait
    /// (see [`cycles::certain_cycle`]), and gives up when it is ours to.
    async fn wait(
        &self,
        session: &Session,
        acquisition: &mut Acquisition<'_>,
        patience: Patience,
        events: &impl Fn(Event<'_>),
        signals: &mut Signals,
    ) -> Result<Held, NotTaken> {
        let woke = tokio::sync::Notify::new();
        let cycle = async {
            // Only a nested zklock can close a cycle that it could prove
            // certain; a free lock costs no extra round trip.
            if !self.owner.checks_cycles {
                return std::future::pending().await;
            }
            let under = chains::chains_under(&self.request.root, self.lock);
            cycles::certain_cycle(session, under, &woke).await
        };
        let ended = tokio::select! {
            outcome = self.queue(session, acquisition, patience, events, &woke) => match outcome {
                Ok(Outcome::Acquired(held)) => Ok(held),
                Ok(Outcome::NotAcquired) => Err(NotTaken::Conflict {
                    lock: self.lock.to_owned(),
                    holders: Vec::new(),
                }),
                Err(err) => Err(self.failed_wait(err)),
            },
            signal = signals.next() => Err(NotTaken::Interrupted(signal)),
            break_with = cycle => Err(NotTaken::Cycle { lock: self.lock.to_owned(), break_with }),
        };
        events(Event::Waited);
        let mut not_taken = match ended {
            Ok(held) => return Ok(held),
            Err(not_taken) => not_taken,
        };
        if let NotTaken::Conflict { holders, .. } = &mut not_taken {
            *holders = who_holds(session, self.lock).await;
        }
        let abandoned = acquisition.abandon().await;
        match (not_taken, abandoned) {
            (failed @ NotTaken::Failed(_), Err(cleanup)) => {
                tracing::warn!("could not remove our node: {cleanup}");
                Err(failed)
            }
            (_, Err(cleanup)) => Err(failed(cleanup)),
            (not_taken, Ok(())) => Err(not_taken),
        }
    }

    /// A wait that failed: a lost session is said to be lost before the
    /// lock was ours.
    fn failed_wait(&self, err: super::AcquireError) -> NotTaken {
        let lost_session = err.failure() == zk::Failure::Unreachable;
        let err = anyhow::Error::from(err);
        failed(if lost_session {
            err.context(format!(
                "the session was lost before {} was acquired",
                self.lock
            ))
        } else {
            err
        })
    }

    /// Queues as `patience` allows, telling `events` of every change ahead
    /// (with the holder's data, or the semaphore's leases, when the request
    /// wants details) and `woke` of every one.
    async fn queue(
        &self,
        session: &Session,
        acquisition: &mut Acquisition<'_>,
        patience: Patience,
        events: &impl Fn(Event<'_>),
        woke: &tokio::sync::Notify,
    ) -> Result<Outcome, super::AcquireError> {
        let details = self.request.details;
        // A semaphore's holders and queue are the model's to read, once per
        // change, and only when someone shows them.
        let leases_changed = tokio::sync::Notify::new();
        let on_change = |change: QueueChange<'_>| {
            woke.notify_one();
            match change {
                QueueChange::Lock(waiting) => events(Event::Waiting(self.lock, waiting)),
                QueueChange::Semaphore => leases_changed.notify_one(),
            }
        };
        let acquire = acquisition.acquire(patience, details, on_change);
        let refresh = async {
            while let (true, Some(max_leases)) = (details, self.request.max_leases) {
                leases_changed.notified().await;
                if let Ok(Some(semaphore)) = model::read_lock(session, self.lock).await {
                    events(Event::Leases(&semaphore, max_leases));
                }
            }
            std::future::pending().await
        };
        tokio::select! {
            outcome = acquire => outcome,
            never = refresh => never,
        }
    }
}

/// The lease of the semaphore at `path` that an enclosing hold of ours
/// holds now, granted (not one still pending): a lease covers a lease of
/// the same semaphore, as an exclusive hold covers an exclusive request.
async fn enclosing_lease(session: &Session, path: &str, holds: &[String]) -> Option<String> {
    let semaphore = model::read_lock(session, path).await.ok()??;
    semaphore
        .holders
        .into_iter()
        .map(|lease| lease.path)
        .find(|lease| holds.contains(lease))
}

/// Who holds the lock at `path` now (every lease, for a semaphore); none
/// when that cannot be read.
async fn who_holds(session: &Session, path: &str) -> Vec<Contender> {
    match model::read_lock(session, path).await {
        Ok(Some(lock)) => lock.holders,
        _ => Vec::new(),
    }
}

/// Opens a session for taking a lock: never on a read-only server.
async fn connect_writable(connect: &ConnectOptions) -> anyhow::Result<Session> {
    let mut options = connect.clone();
    options.read_only = false;
    let session = zk::connect(&options).await?;
    if session.is_read_only() {
        session.close().await;
        return Err(
            zk::Error::ReadOnly("refusing to lock on a read-only ZooKeeper server".into()).into(),
        );
    }
    Ok(session)
}

/// The `--kill-after` of a command on `session`: `asked`, or a share of the
/// granted session timeout. A usage error when it leaves no room to stop
/// the command before the leader could expire the session.
pub(crate) fn kill_after_for(
    session: &Session,
    asked: Option<Duration>,
) -> Result<Duration, UsageError> {
    let timing = Timing::for_session(session.session_timeout());
    let kill_after = asked.unwrap_or_else(|| timing.default_kill_after());
    if timing.ride_through(kill_after).is_none() {
        return Err(UsageError::new(format!(
            "the server granted a session timeout of {} and --kill-after is {}: the command \
             could not be stopped in time before the server may expire the session; lower \
             --kill-after (it may be at most about half the session timeout)",
            humantime::format_duration(timing.session_timeout),
            humantime::format_duration(kill_after)
        )));
    }
    Ok(kill_after)
}
