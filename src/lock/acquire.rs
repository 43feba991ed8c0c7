//! Acquiring a lock: the protected create, the herd-free wait, and
//! giving up without leaving a node behind.
//!
//! A [`Contention`] is one contender's life before it holds: it creates its
//! node, waits on exactly one node ahead of it, and, on every path that gives
//! up, deletes its own node with [`Contention::abandon`].

use std::collections::HashSet;
use std::time::Duration;

use tokio::time::Instant;

use super::delay::{Entry, ServerClock, Way};
use super::end::{self, DirRead, EndHow, Ender, Ending, Known, OwnEnd};
use super::name::{self, ContenderKind, Dialect, own_prefix};
use super::node;
use super::once;
use super::owner::Owner;
use super::queue::{LockQueue, QueueEntry, Standing};
use crate::zk::batch::Batcher;
use crate::zk::{self, Class, NodeEvent, NodeWatch, Session, path};

/// What to lock and how.
#[derive(Clone, Debug)]
pub(crate) struct LockSpec {
    /// The lock directory, an absolute path.
    pub path: String,
    pub kind: ContenderKind,
    pub dialect: Dialect,
    /// The data of the contender node (the owner record).
    pub data: Vec<u8>,
    /// A persistent node the server removes after this long unused, instead
    /// of an ephemeral node that dies with the session.
    pub ttl: Option<Duration>,
    /// Who we are, for the end record of our node.
    pub ender: Ender,
    /// A `--once-per` contender: its end record keeps the lock's last
    /// counted run.
    pub keeps_last_run: bool,
}

/// How long to wait for the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Patience {
    /// Give up at once if someone else holds it.
    NoWait,
    /// Wait until this instant.
    Until(Instant),
    /// Wait as long as it takes.
    Forever,
}

impl Patience {
    /// The patience of `--no-wait` / `--timeout`.
    pub(crate) fn new(no_wait: bool, timeout: Option<Duration>) -> Patience {
        match (no_wait, timeout) {
            (true, _) => Patience::NoWait,
            (false, Some(timeout)) => Patience::Until(Instant::now() + timeout),
            (false, None) => Patience::Forever,
        }
    }
}

/// The node that holds a lock for us.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Held {
    /// The lock directory.
    pub lock: String,
    /// The full path of our node: the token.
    pub node: String,
    /// The fencing token: our node's czxid.
    pub fence: i64,
}

/// How a try for the lock ended, when it ended without an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// We hold the lock.
    Acquired(Held),
    /// `--no-wait` found the lock taken, or `--timeout` ran out.
    NotAcquired,
}

/// What a waiter is told while it waits: the contender that holds the lock
/// (the head of the queue) and its data, when asked for.
#[derive(Clone, Debug)]
pub(crate) struct Waiting {
    pub holder: QueueEntry,
    pub holder_data: Option<(Vec<u8>, zk::Stat)>,
    /// How many contenders are ahead of us.
    pub ahead: usize,
}

/// Why waiting failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AcquireError {
    #[error(transparent)]
    Zk(#[from] zk::Error),
    #[error("our contender node {0} was deleted while we waited")]
    NodeDeleted(String),
    #[error("the ZooKeeper session ended while waiting for {0}")]
    SessionEnded(String),
    /// The lock came too late to be held: the leader had gone unheard for
    /// so long that it may expire the session any moment.
    #[error(
        "no word from the ZooKeeper leader for {} by the time {path} was acquired: the server \
         may expire the session any moment, so the lock was let go at once",
        humantime::format_duration(Duration::from_millis(silent.as_millis() as u64))
    )]
    LeaderSilent { path: String, silent: Duration },
    #[error(
        "the semaphore {path} is sized {stored} (the number of leases in its data), not \
         --max-leases {asked}; every client of a semaphore must agree on its size"
    )]
    MaxLeasesDiffer {
        path: String,
        stored: u32,
        asked: u32,
    },
    /// `--once-per` found a lock directory zklock did not make persistent
    /// and that it may not make again.
    #[error(
        "{path} cannot keep a --once-per window: the window lives in a lock directory that \
         zklock made persistent itself (a container, which `zklock lock` and Curator make, \
         goes once idle, and the last run with it; no client can tell the two apart), and {why}"
    )]
    Unkept { path: String, why: once::Unkept },
}

impl AcquireError {
    /// What this failure means: a session lost before the lock was ours
    /// counts as unreachable.
    pub(crate) fn failure(&self) -> zk::Failure {
        match self {
            AcquireError::Zk(err) => err.failure(),
            AcquireError::NodeDeleted(_) => zk::Failure::Other,
            AcquireError::SessionEnded(_) | AcquireError::LeaderSilent { .. } => {
                zk::Failure::Unreachable
            }
            AcquireError::MaxLeasesDiffer { .. } | AcquireError::Unkept { .. } => {
                zk::Failure::Unusable
            }
        }
    }
}

/// One contender on its way to holding a lock.
pub(crate) struct Contention<'s> {
    session: &'s Session,
    spec: LockSpec,
    /// Our node's name prefix (the part before the sequence).
    prefix: String,
    /// Our node's child name, once created.
    node: Option<String>,
    fence: i64,
    /// Once acquired after a wait: the watch set on our own node while
    /// waiting, if the node was still as we made it then.
    kept_own_watch: Option<NodeWatch>,
    /// What we learnt of the ends before ours, once our node is made.
    entry: Option<Entry>,
    /// While we wait: the node ahead of us, whose presence at our give-up
    /// proves that we never held.
    behind: Option<String>,
    /// `--lock-delay`: the lock directory is made persistent, so that the
    /// server does not remove it emptied, and the evidence of its ends
    /// with it.
    makes_persistent: bool,
}

/// The watch on our own node while we wait, and whether the node was at
/// the version we created it at when the watch was set: then it held the
/// owner record we wrote, and no revocation mark.
struct OwnWatch {
    watch: NodeWatch,
    as_made: bool,
}

const CREATE_ATTEMPTS: u32 = 5;

impl<'s> Contention<'s> {
    /// A contention for `spec` on `session`; nothing is sent yet.
    pub(crate) fn new(session: &'s Session, spec: LockSpec) -> Contention<'s> {
        let token = uuid::Uuid::new_v4().to_string();
        let prefix = own_prefix(spec.dialect, spec.kind, &token, session.id())
            .expect("the command line only allows kinds the dialect can make");
        Contention::named(session, spec, prefix)
    }

    /// A contention whose node is named `prefix` and a sequence number: a
    /// node no lock kind names, such as a semaphore's lease.
    pub(super) fn named(session: &'s Session, spec: LockSpec, prefix: String) -> Contention<'s> {
        Contention {
            session,
            spec,
            prefix,
            node: None,
            fence: 0,
            kept_own_watch: None,
            entry: None,
            behind: None,
            makes_persistent: false,
        }
    }

    /// Keeps the evidence of the lock's ends for `--lock-delay`: makes a
    /// missing lock directory persistent.
    pub(crate) fn make_persistent(&mut self) {
        self.makes_persistent = true;
    }

    /// Once our node is made: what we learnt of the ends before ours (the
    /// contention keeps none after).
    pub(crate) fn take_entry(&mut self) -> Option<Entry> {
        self.entry.take()
    }

    /// Once our node is made: how we came to hold, learnt since, in place
    /// of what was learnt before (a lease's wait for room).
    pub(super) fn came_by(&mut self, way: Way) {
        if let Some(entry) = self.entry.take() {
            self.entry = Some(entry.came_by(way));
        }
    }

    /// A mutex's node: no one else holds while it does.
    fn is_exclusive(&self) -> bool {
        name::parse(&self.prefix_with_sequence())
            .is_some_and(|parsed| parsed.kind == ContenderKind::Mutex)
    }

    /// Our node's name as a name parser sees it: the sequence's digits
    /// matter only as digits.
    fn prefix_with_sequence(&self) -> String {
        format!("{}0000000000", self.prefix)
    }

    /// Our node, once created: its path and fencing token.
    pub(super) fn own_node(&self) -> Option<Held> {
        let node = self.node.as_deref()?;
        Some(Held {
            lock: self.spec.path.clone(),
            node: self.node_path(node),
            fence: self.fence,
        })
    }

    /// Enters the queue and waits according to `patience`. `on_wait` is
    /// called each time the queue ahead of us changes; with `holder_details`
    /// the holder's data is read for it (one more request per change).
    ///
    /// Cancel-safe: if the future is dropped, [`Contention::abandon`] still
    /// finds and deletes our node.
    pub(crate) async fn acquire(
        &mut self,
        patience: Patience,
        holder_details: bool,
        mut on_wait: impl FnMut(&Waiting),
    ) -> Result<Outcome, AcquireError> {
        let children = self.enter().await?;
        let me = self.node.clone().expect("entered the queue");
        // The queue as far as we know it: our listing, less the nodes we saw
        // go since. No node made after the listing can be ahead of us (see
        // `listing_bounds_the_queue_ahead`), so the real queue ahead of us
        // is always a part of this one, and whatever it says we may do
        // with more nodes ahead holds with fewer.
        //
        // When the node we watch goes, it is struck out, and so are the
        // nodes still ahead of us in what we know that turn out to be gone
        // (see `look_ahead`). Nothing of what we know tells whether they
        // went: the node that went may have held (then all of them had gone
        // before it) or given up while they were there, and both look the
        // same from here.
        let mut known = LockQueue::from_children(children);
        // Nodes named like contenders whose type says they are not (some
        // application's persistent `lock-0000000001`): they never go, so
        // waiting on one would be waiting forever.
        let mut not_contenders = HashSet::new();
        let mut own_watch = None;
        // The node ahead whose deletion we saw last: who held before us.
        let mut gone = None;
        loop {
            let ahead = match known.standing_of(&me) {
                None => return Err(AcquireError::NodeDeleted(self.node_path(&me))),
                Some((Standing::Holding, _)) => {
                    self.behind = None;
                    if let Some(gone) = gone {
                        // Sent now, its answer looked at when wanted.
                        let read = Box::pin(self.session.send_get_data(&self.spec.path));
                        self.came_by(Way::Waited { gone, read });
                    }
                    self.kept_own_watch = own_watch
                        .filter(|own: &OwnWatch| own.as_made)
                        .map(|own| own.watch);
                    return Ok(Outcome::Acquired(Held {
                        lock: self.spec.path.clone(),
                        node: self.node_path(&me),
                        fence: self.fence,
                    }));
                }
                Some((Standing::WaitingOn(_), ahead)) => {
                    ahead.expect("a waiter waits on someone").clone()
                }
            };
            self.behind = Some(self.node_path(&ahead.name));
            if patience == Patience::NoWait {
                return Ok(Outcome::NotAcquired);
            }
            on_wait(&self.waiting(&known, &me, holder_details).await);
            match self
                .wait_for_deletion(&ahead, patience, &mut own_watch)
                .await?
            {
                AheadChange::Gone if listing_bounds_the_queue_ahead(&me) => {
                    known.remove(&ahead.name);
                    known = self.look_ahead(known, &me).await?;
                    gone = Some(ahead.name);
                }
                AheadChange::Gone => {
                    known = self.relist(&not_contenders).await?;
                    gone = Some(ahead.name);
                }
                AheadChange::Changed => {}
                AheadChange::OwnChanged => own_watch = None,
                AheadChange::NotAContender => {
                    tracing::info!(
                        "{} is no contender (its node type), not waiting on it",
                        ahead.name
                    );
                    known.remove(&ahead.name);
                    not_contenders.insert(ahead.name);
                }
                AheadChange::StillThere => return Ok(Outcome::NotAcquired),
            }
        }
    }

    /// A watch on our own node, so that its deletion while we wait is seen
    /// without listing the directory again.
    async fn watch_own(&self) -> Result<OwnWatch, AcquireError> {
        let path = self.own_path();
        match self.session.watch_stat(&path).await? {
            (Some(stat), watch) => Ok(OwnWatch {
                watch,
                as_made: node::is_as_created(&stat),
            }),
            (None, _) => Err(AcquireError::NodeDeleted(path)),
        }
    }

    /// After [`acquire`](Self::acquire) granted the lock following a wait:
    /// the watch it had set on our own node, while the node was still as we
    /// made it. Holding can go on with it instead of removing it and setting
    /// the same watch again, two requests of every contended handoff.
    pub(crate) fn take_own_watch(&mut self) -> Option<NodeWatch> {
        self.kept_own_watch.take()
    }

    /// The queue from a new listing, less the nodes already found to be no
    /// contenders.
    async fn relist(&self, not_contenders: &HashSet<String>) -> Result<LockQueue, zk::Error> {
        let children = self.list().await?;
        Ok(LockQueue::from_children(
            children.into_iter().filter(|c| !not_contenders.contains(c)),
        ))
    }

    /// The queue once the nodes ahead of `me` in `known` that are gone are
    /// out of it, asked in one round trip: the ahead part of a queue only
    /// shrinks, so only they can still be ahead of us.
    ///
    /// The server answers about 13 bytes a node, a fifth of what a listing
    /// costs for each node in it. A listing is cheaper only when most nodes
    /// ahead have gone and few are behind us, and how many are behind is
    /// not known without another request: waiters that join together each
    /// list before the others have made their nodes.
    async fn look_ahead(&self, mut known: LockQueue, me: &str) -> Result<LockQueue, zk::Error> {
        let ahead = known.ahead_of(me);
        if ahead.is_empty() {
            return Ok(known);
        }
        let paths: Vec<String> = ahead.iter().map(|c| self.node_path(&c.name)).collect();
        // A server without multi-read (before 3.6) costs one more round
        // trip here each time: such old servers are rare, and a contention
        // that kept what it learnt would be larger for every caller.
        let present = Batcher::new(self.session).exist(&paths).await?;
        let gone: HashSet<String> = ahead
            .iter()
            .zip(present)
            .filter(|(_, present)| !present)
            .map(|(contender, _)| contender.name.clone())
            .collect();
        known.retain(|contender| !gone.contains(&contender.name));
        Ok(known)
    }

    /// Gives up: deletes our node, if we made one, with the end record
    /// saying so.
    pub(crate) async fn abandon(&mut self) -> Result<(), zk::Error> {
        self.end(EndHow::GaveUp).await
    }

    /// Deletes our node, if we made one (the node we know, or, when the
    /// create's answer was lost, the node found by our prefix and session),
    /// with the end record of `how` in its directory.
    ///
    /// A mutex's waiter that gives up while the node ahead of it is still
    /// there never held: it deletes its node alone, in a transaction that
    /// checks that node, and leaves the directory's data to the holder,
    /// whose record accounts for it (see [`super::end::DirRead::ends`]).
    pub(crate) async fn end(&mut self, how: EndHow) -> Result<(), zk::Error> {
        let node = match self.node.take() {
            Some(node) => Some(node),
            None => self.find_own_node().await?,
        };
        let Some(node) = node else {
            return Ok(());
        };
        let node = self.node_path(&node);
        if let Some(ahead) = self.behind.take().filter(|_| self.is_exclusive())
            && how == EndHow::GaveUp
            && self.session.delete_behind(&node, &ahead).await?
        {
            return Ok(());
        }
        let ending = Ending::new(how, self.spec.ender.clone());
        let (before, read, clock) = match &mut self.entry {
            Some(entry) => {
                let clock = *entry.clock();
                let judged = entry.judged().await;
                (judged.known(), judged.read.clone(), Some(clock))
            }
            None => (Known::default(), None, None),
        };
        let end = OwnEnd {
            ending: &ending,
            before,
            clock: clock.as_ref(),
            read,
            ran: None,
        };
        end::end_own(self.session, &node, end).await
    }

    fn node_path(&self, name: &str) -> String {
        path::join(&self.spec.path, name)
    }

    fn own_path(&self) -> String {
        self.node_path(self.node.as_deref().unwrap_or_default())
    }

    /// Creates our node (making missing ancestors) and lists the directory
    /// in the same round trip. After a connection loss, adopts the node the
    /// lost create made, if any, instead of creating a second one.
    pub(super) async fn enter(&mut self) -> Result<Vec<String>, AcquireError> {
        let retry = self.session.retry();
        let target = self.node_path(&self.prefix);
        let mut attempt = 0;
        let sent = Instant::now();
        loop {
            // The directory as it was just before our create, read in the
            // same round trip (sent first, answered first), and its stat
            // with the listing: what the ends before ours were, and the
            // version our end record is written at.
            let read = self.session.get_data(&self.spec.path);
            let create = self
                .session
                .create_sequential(&target, &self.spec.data, self.spec.ttl);
            let list = self.session.children_and_stat_once(&self.spec.path);
            let (read, created, listed) = tokio::join!(read, create, list);
            let answered = Instant::now();
            match created {
                Ok((stat, sequence)) => {
                    self.node = Some(format!("{}{sequence}", self.prefix));
                    self.fence = stat.czxid;
                    let way = Way::Arrived {
                        read: read.map(|(data, stat)| DirRead { data, stat }),
                        after: listed.as_ref().ok().map(|(_, stat)| *stat),
                        listed_at: answered,
                    };
                    let clock = ServerClock::new(stat.ctime, sent, answered);
                    self.entry = Some(Entry::new(clock, self.is_exclusive(), way));
                    return match listed {
                        Ok((children, _)) => Ok(children),
                        Err(_) => Ok(self.list().await?),
                    };
                }
                Err(err) if err.is_no_node() && attempt < CREATE_ATTEMPTS => {
                    if self.spec.keeps_last_run || self.makes_persistent {
                        let by = &self.spec.ender;
                        once::make_directory(self.session, &self.spec.path, by).await?;
                    } else {
                        self.session.make_ancestors(&self.spec.path).await?;
                    }
                }
                Err(err) if err.class() == Class::Recoverable && attempt < retry.retries => {
                    tokio::time::sleep(retry.backoff(attempt)).await;
                    if let Some(node) = self.find_own_node().await? {
                        tracing::info!("adopting {node}, created before the connection was lost");
                        let stat = self.stat_of(&node).await?;
                        self.fence = stat.map_or(0, |s| s.czxid);
                        // Its create's answer is lost, and the directory
                        // as it was before it with it. (A node gone since
                        // is no hold: the queue finds it missing.)
                        self.entry = stat.map(|stat| {
                            let clock = ServerClock::new(stat.ctime, sent, Instant::now());
                            Entry::new(clock, self.is_exclusive(), Way::Unknown)
                        });
                        self.node = Some(node);
                        return Ok(self.list().await?);
                    }
                }
                Err(err) if err.is_unimplemented() && self.spec.ttl.is_some() => {
                    return Err(zk::Error::Unsupported(
                        "the server refuses TTL nodes: --ttl needs ZooKeeper 3.5.3 or later \
                         started with extendedTypesEnabled=true (zookeeper.extendedTypesEnabled)"
                            .into(),
                    )
                    .into());
                }
                Err(err) => return Err(err.into()),
            }
            attempt += 1;
        }
    }

    /// Our node among the children: one with our prefix whose ephemeral owner
    /// is this session. A node of an earlier, dead session is never adopted.
    /// A TTL node has no owner session; its prefix, with a uuid made for this
    /// contention alone, is proof enough.
    async fn find_own_node(&self) -> Result<Option<String>, zk::Error> {
        let children = match self.list().await {
            Ok(children) => children,
            Err(err) if err.is_no_node() => return Ok(None),
            Err(err) => return Err(err),
        };
        for child in children.into_iter().filter(|c| c.starts_with(&self.prefix)) {
            if let Some(stat) = self.stat_of(&child).await?
                && (self.spec.ttl.is_some() || stat.ephemeral_owner == self.session.id())
            {
                return Ok(Some(child));
            }
        }
        Ok(None)
    }

    async fn stat_of(&self, child: &str) -> Result<Option<zk::Stat>, zk::Error> {
        self.session.stat(&self.node_path(child)).await
    }

    async fn list(&self) -> Result<Vec<String>, zk::Error> {
        self.session.children(&self.spec.path).await
    }

    async fn waiting(&self, queue: &LockQueue, me: &str, holder_details: bool) -> Waiting {
        let holder = queue
            .holders()
            .next()
            .or_else(|| queue.contenders().first())
            .expect("a waiter has someone ahead")
            .clone();
        let holder_data = if holder_details {
            self.session
                .get_data(&self.node_path(&holder.name))
                .await
                .ok()
        } else {
            None
        };
        let ahead = queue
            .contenders()
            .iter()
            .position(|c| c.name == me)
            .unwrap_or(0);
        Waiting {
            holder,
            holder_data,
            ahead,
        }
    }

    /// Watches the one node we wait on until it is deleted or our patience
    /// runs out, minding `own`, the watch on our own node, meanwhile (set
    /// in the same round trip as the first watch when there is none). The
    /// watch's answer is the node's stat, so a node that is no contender by
    /// its type (a persistent generic name: application data) is known at no
    /// extra cost and not waited on.
    async fn wait_for_deletion(
        &self,
        ahead: &QueueEntry,
        patience: Patience,
        own: &mut Option<OwnWatch>,
    ) -> Result<AheadChange, AcquireError> {
        let path = self.node_path(&ahead.name);
        let ((stat, mut watch), own) = match own {
            Some(own) => (self.session.watch_stat(&path).await?, own),
            None => {
                let (watched, own_watch) =
                    tokio::join!(self.session.watch_stat(&path), self.watch_own());
                (watched?, own.insert(own_watch?))
            }
        };
        let Some(stat) = stat else {
            return Ok(AheadChange::Gone);
        };
        if !node::is_contender_by_stat(ahead.dialect, &stat) && !self.is_own_ttl_node(&path).await?
        {
            return Ok(AheadChange::NotAContender);
        }
        tracing::info!(event = "waiting", node = %path, "watching {path}: the lock is ours once it goes");
        let deadline = match patience {
            Patience::Until(deadline) => Some(deadline),
            _ => None,
        };
        tokio::select! {
            event = watch.changed() => match event {
                NodeEvent::Deleted => Ok(AheadChange::Gone),
                NodeEvent::Changed => Ok(AheadChange::Changed),
                NodeEvent::SessionEnded(_) => Err(AcquireError::SessionEnded(self.spec.path.clone())),
            },
            event = own.watch.changed() => match event {
                NodeEvent::Deleted => Err(AcquireError::NodeDeleted(self.own_path())),
                NodeEvent::Changed => Ok(AheadChange::OwnChanged),
                NodeEvent::SessionEnded(_) => Err(AcquireError::SessionEnded(self.spec.path.clone())),
            },
            _ = sleep_until(deadline) => Ok(AheadChange::StillThere),
        }
    }
}

/// How far from the end of the sequence counter's range our listing stops
/// being a bound on who can be ahead of us. A node made after our listing
/// gets a higher sequence number than ours, so it queues behind us, unless
/// the directory's counter wraps to negative numbers meanwhile; within this
/// many changes of the wrap, a waiter lists the directory again instead.
const WRAP_MARGIN: i32 = 1 << 28;

/// True when no node made after our listing can sort ahead of `me`, our
/// node: the counter is far from its wrap.
fn listing_bounds_the_queue_ahead(me: &str) -> bool {
    name::parse(me).is_some_and(|me| me.sequence < i32::MAX - WRAP_MARGIN)
}

impl Contention<'_> {
    /// True when the unowned node at `path` is a zklock `--ttl` contender,
    /// known by its owner record; one more read, only for a node named like
    /// a contender that no session owns. Gone counts as not ours to wait on:
    /// the watch set on it fires and we look again anyway.
    async fn is_own_ttl_node(&self, path: &str) -> Result<bool, AcquireError> {
        match self.session.get_data(path).await {
            Ok((data, _)) => Ok(Owner::parse(&data).is_some()),
            Err(err) if err.is_no_node() => Ok(true),
            Err(err) => Err(err.into()),
        }
    }
}

/// What became of the node a waiter watched.
enum AheadChange {
    /// It went.
    Gone,
    /// It is still there but changed: watch it again.
    Changed,
    /// Our own node changed but is there: watch it again.
    OwnChanged,
    /// Named like a contender, but of a type no lock library makes its
    /// contenders as: it is not in the queue.
    NotAContender,
    /// Patience ran out while it was there.
    StillThere,
}

pub(super) async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
