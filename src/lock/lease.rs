//! Taking a lease of a semaphore, in Curator's `InterProcessSemaphoreV2`
//! layout or kazoo's `Semaphore` layout, so that zklock and those clients
//! together never hold more leases than the semaphore allows.
//!
//! Both libraries serialise acquirers on an internal mutex; its holder alone
//! may add a lease, and waits (holding it) until there is room:
//!
//! - Curator: take the mutex `<path>/locks/`, create the lease
//!   `<path>/leases/_c_<uuid>-lease-N`, and while `leases/` has more children
//!   than the maximum, wait for a change of them. Once within the maximum,
//!   let the mutex go and hold the lease.
//! - kazoo: the maximum is the data of `<path>` (made with it if missing,
//!   refused if it says another number); take the kazoo lock
//!   `<path>-__lock__`, and create the lease `<path>/<hex32>` once `<path>`
//!   has fewer children than the maximum, then let the lock go.
//!
//! Only the mutex holder watches the leases, and the other acquirers each
//! wait on the one mutex node ahead of them: one freed lease wakes one
//! client. Every path that gives up deletes our lease and our mutex node
//! ([`LeaseContention::abandon`]).

use super::acquire::{AcquireError, Contention, Held, LockSpec, Outcome, Patience, sleep_until};
use super::delay::{Entry, ServerClock, Way};
use super::end::{EndHow, Ender};
use super::name::{ContenderKind, Dialect};
use super::semaphore::{CURATOR_LEASES, CURATOR_LOCKS, kazoo_lock_path, kazoo_max_leases};
use crate::zk::{self, ChildrenChange, ChildrenWatch, Class, Lifetime, Session, class_of, path};

/// Which semaphore to take a lease of, and how.
#[derive(Clone, Debug)]
pub(crate) struct SemaphoreSpec {
    /// The semaphore node, an absolute path.
    pub path: String,
    /// Curator or kazoo: whose layout.
    pub dialect: Dialect,
    /// The most leases held at once.
    pub max_leases: u32,
    /// The data of our lease and mutex nodes (the owner record).
    pub data: Vec<u8>,
    /// Who we are, for the end records of our nodes.
    pub ender: Ender,
}

/// One acquirer of a semaphore lease, before it holds one.
pub(crate) struct LeaseContention<'s> {
    session: &'s Session,
    spec: SemaphoreSpec,
    /// The internal mutex every acquirer of the semaphore queues on.
    mutex: Contention<'s>,
    lease: LeaseNode<'s>,
    /// What a kazoo lease learnt of the ends before it: nothing (its
    /// directory keeps no record), on its node's clock.
    named_entry: Option<Entry>,
}

/// Our lease node, as each layout makes it.
enum LeaseNode<'s> {
    /// Curator's: protected ephemeral-sequential, made before the wait
    /// (boxed: a contention is many times the size of a name).
    Sequential(Box<Contention<'s>>),
    /// kazoo's: ephemeral at a name of our own, made once there is room.
    Named(String),
}

impl<'s> LeaseContention<'s> {
    /// A contention for a lease of `spec`; nothing is sent yet.
    pub(crate) fn new(session: &'s Session, spec: SemaphoreSpec) -> LeaseContention<'s> {
        let token = uuid::Uuid::new_v4();
        let (mutex_path, lease) = match spec.dialect {
            Dialect::Kazoo => (
                kazoo_lock_path(&spec.path),
                LeaseNode::Named(path::join(&spec.path, &token.simple().to_string())),
            ),
            _ => {
                let leases = LockSpec {
                    path: path::join(&spec.path, CURATOR_LEASES),
                    kind: ContenderKind::Mutex,
                    dialect: Dialect::Curator,
                    data: spec.data.clone(),
                    ttl: None,
                    ender: spec.ender.clone(),
                    keeps_last_run: false,
                };
                let prefix = format!("_c_{token}-lease-");
                (
                    path::join(&spec.path, CURATOR_LOCKS),
                    LeaseNode::Sequential(Box::new(Contention::named(session, leases, prefix))),
                )
            }
        };
        let mutex = LockSpec {
            path: mutex_path,
            kind: ContenderKind::Mutex,
            dialect: spec.dialect,
            data: spec.data.clone(),
            ttl: None,
            ender: spec.ender.clone(),
            keeps_last_run: false,
        };
        LeaseContention {
            session,
            mutex: Contention::new(session, mutex),
            spec,
            lease,
            named_entry: None,
        }
    }

    /// Keeps the evidence of the leases' ends for `--lock-delay`: makes a
    /// missing leases' directory persistent.
    pub(crate) fn make_persistent(&mut self) {
        if let LeaseNode::Sequential(lease) = &mut self.lease {
            lease.make_persistent();
        }
    }

    /// Once our lease is made: what we learnt of the ends of the leases
    /// before ours. A kazoo semaphore's directory takes no end record (it
    /// holds the semaphore's size), so there every end is unknown.
    pub(crate) fn take_entry(&mut self) -> Option<Entry> {
        match &mut self.lease {
            LeaseNode::Sequential(lease) => lease.take_entry(),
            LeaseNode::Named(_) => self.named_entry.take(),
        }
    }

    /// Queues on the internal mutex, then waits for room, each according to
    /// `patience`. `on_wait` is called each time the wait starts or what we
    /// wait for changes.
    ///
    /// Cancel-safe: if the future is dropped, [`LeaseContention::abandon`]
    /// still finds and deletes our nodes.
    pub(crate) async fn acquire(
        &mut self,
        patience: Patience,
        mut on_wait: impl FnMut(),
    ) -> Result<Outcome, AcquireError> {
        if self.spec.dialect == Dialect::Kazoo {
            self.settle_kazoo_size().await?;
        }
        if self.mutex.acquire(patience, false, |_| on_wait()).await? == Outcome::NotAcquired {
            return Ok(Outcome::NotAcquired);
        }
        let Some(held) = self.wait_for_room(patience, &mut on_wait).await? else {
            return Ok(Outcome::NotAcquired);
        };
        // The lease is ours: the next acquirer may have the mutex.
        self.mutex.end(EndHow::Released).await?;
        Ok(Outcome::Acquired(held))
    }

    /// Deletes our lease, then our mutex node, whichever exist.
    pub(crate) async fn abandon(&mut self) -> Result<(), zk::Error> {
        match &mut self.lease {
            LeaseNode::Sequential(lease) => lease.abandon().await?,
            LeaseNode::Named(lease) => {
                self.session.delete_own(lease, None).await?;
            }
        }
        self.mutex.abandon().await
    }

    /// Holding the mutex: makes our lease and waits until it is within the
    /// maximum. `None` when patience ran out first.
    async fn wait_for_room(
        &mut self,
        patience: Patience,
        on_wait: &mut impl FnMut(),
    ) -> Result<Option<Held>, AcquireError> {
        let max = self.spec.max_leases as usize;
        let session = self.session;
        let mut waited = false;
        loop {
            let step = match &mut self.lease {
                LeaseNode::Sequential(lease) => curator_step(session, lease, max).await?,
                LeaseNode::Named(lease) => {
                    let made = kazoo_step(session, &self.spec.path, lease, &self.spec.data, max);
                    let (step, entry) = made.await?;
                    self.named_entry = self.named_entry.take().or(entry);
                    step
                }
            };
            let watch = match step {
                Step::Held(held) => {
                    if let (true, LeaseNode::Sequential(lease)) = (waited, &mut self.lease) {
                        // Sent now, its answer looked at when wanted: the
                        // leases' last change was an end, as only the
                        // mutex's holder (we) adds one.
                        let leases = path::parent(&held.node).expect("a lease has a parent");
                        let read = Box::pin(session.send_get_data(leases));
                        lease.came_by(Way::Room { read });
                    }
                    return Ok(Some(held));
                }
                Step::Full(_) if patience == Patience::NoWait => return Ok(None),
                Step::Full(watch) => watch,
            };
            on_wait();
            tracing::info!(
                event = "waiting_for_lease",
                node = %self.spec.path,
                "every lease of {} is taken ({max} in all): waiting for one to go",
                self.spec.path
            );
            if !self.changed_in_time(watch, patience).await? {
                return Ok(None);
            }
            waited = true;
        }
    }

    /// Waits for the watched leases to change: `false` when patience ran
    /// out first.
    async fn changed_in_time(
        &self,
        watch: ChildrenWatch,
        patience: Patience,
    ) -> Result<bool, AcquireError> {
        let deadline = match patience {
            Patience::Until(deadline) => Some(deadline),
            _ => None,
        };
        tokio::select! {
            change = watch.changed() => match change {
                ChildrenChange::Changed => Ok(true),
                ChildrenChange::SessionEnded(_) => {
                    Err(AcquireError::SessionEnded(self.spec.path.clone()))
                }
            },
            () = sleep_until(deadline) => Ok(false),
        }
    }

    /// kazoo keeps the semaphore's size in its node: make the node with our
    /// maximum, or check that the number there is ours. Data that is no
    /// number is left alone, as kazoo does.
    async fn settle_kazoo_size(&self) -> Result<(), AcquireError> {
        let path = &self.spec.path;
        let asked = self.spec.max_leases;
        let size = asked.to_string();
        match self
            .session
            .create_node(path, size.as_bytes(), Lifetime::Persistent)
            .await
        {
            Ok(_) => return Ok(()),
            Err(err) if err.is_no_node() => {
                if let Some(parent) = path::parent(path).filter(|p| *p != "/") {
                    self.session.make_ancestors(parent).await?;
                }
                match self
                    .session
                    .create_node(path, size.as_bytes(), Lifetime::Persistent)
                    .await
                {
                    Ok(_) => return Ok(()),
                    Err(err) if err.is_node_exists() => {}
                    Err(err) => return Err(err.into()),
                }
            }
            Err(err) if err.is_node_exists() => {}
            Err(err) => return Err(err.into()),
        }
        let (data, _) = self.session.get_data(path).await?;
        match kazoo_max_leases(&data) {
            Some(stored) if stored != asked => Err(AcquireError::MaxLeasesDiffer {
                path: path.clone(),
                stored,
                asked,
            }),
            _ => Ok(()),
        }
    }
}

/// Where one look at the leases left us.
enum Step {
    /// Our lease is within the maximum.
    Held(Held),
    /// No room yet; the watch fires when the leases change.
    Full(ChildrenWatch),
}

/// Curator: our lease exists (made on the first step) and counts; it is
/// held once the leases, ours included, are no more than `max`.
async fn curator_step(
    session: &Session,
    lease: &mut Contention<'_>,
    max: usize,
) -> Result<Step, AcquireError> {
    if lease.own_node().is_none() {
        lease.enter().await?;
    }
    let held = lease.own_node().expect("the lease was made");
    let dir = path::parent(&held.node).expect("a lease has a parent");
    let (children, watch) = session.children_watched(dir).await?;
    let name = &held.node[dir.len() + 1..];
    if !children.iter().any(|child| child == name) {
        return Err(AcquireError::NodeDeleted(held.node));
    }
    Ok(if children.len() <= max {
        Step::Held(Held {
            lock: path::parent(dir).expect("leases/ has a parent").to_owned(),
            ..held
        })
    } else {
        Step::Full(watch)
    })
}

/// kazoo: our lease is made only when the semaphore has fewer than `max`
/// children; it is held once it exists, with what it learnt of the ends
/// before it: nothing, on its node's clock.
async fn kazoo_step(
    session: &Session,
    semaphore: &str,
    lease: &str,
    data: &[u8],
    max: usize,
) -> Result<(Step, Option<Entry>), AcquireError> {
    let (children, watch) = session.children_watched(semaphore).await?;
    if children.len() >= max {
        return Ok((Step::Full(watch), None));
    }
    let sent = tokio::time::Instant::now();
    let stat = create_own_ephemeral(session, lease, data).await?;
    let clock = ServerClock::new(stat.ctime, sent, tokio::time::Instant::now());
    let held = Held {
        lock: semaphore.to_owned(),
        node: lease.to_owned(),
        fence: stat.czxid,
    };
    Ok((
        Step::Held(held),
        Some(Entry::new(clock, false, Way::Unknown)),
    ))
}

/// Creates the ephemeral `node`, retrying through connection loss; a node
/// there already is ours when this session owns it (a create whose answer
/// was lost), anyone else's is an error. Returns the node's stat.
async fn create_own_ephemeral(
    session: &Session,
    node: &str,
    data: &[u8],
) -> Result<zk::Stat, zk::Error> {
    let retry = session.retry();
    let mut attempt = 0;
    loop {
        let err = match session.create_node(node, data, Lifetime::Ephemeral).await {
            Ok(stat) => return Ok(stat),
            Err(err) => err,
        };
        if err.is_node_exists()
            && let Some(stat) = session.stat(node).await?
            && stat.ephemeral_owner == session.id()
        {
            return Ok(stat);
        }
        let recoverable = err.cause().map(class_of) == Some(Class::Recoverable);
        if !recoverable || attempt >= retry.retries {
            return Err(err);
        }
        tokio::time::sleep(retry.backoff(attempt)).await;
        attempt += 1;
    }
}
