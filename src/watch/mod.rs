//! Following the locks under a path as they change, for `watch`.
//!
//! ZooKeeper's notifications only say which node was made, deleted or had
//! its data changed, not what it is. So this module reads what changed, and
//! decides what it means with the one model and the one set of queue rules
//! `stat` uses, so what `watch` prints agrees with what `stat` shows at
//! that moment.
//!
//! A queue lock (mutex, read-write lock, election) it has read is kept as
//! its contenders in queue order (`queue::LiveQueue`) and brought up to date
//! node by node, in the order the notifications came: a deleted contender
//! needs no read, a new one or one whose data changed is read alone (its
//! stat and data decide whether it is a contender at all), and the events
//! come from the contenders the change moved, so a change costs the same
//! however long the queue. The persistent watch names every node that
//! changed, so nothing else can differ. Anything else that changed (a lock
//! directory, a semaphore, a leader node, a lock not seen before) is read
//! again whole ([`read_lock`]) and the old and new readings are compared
//! (`events::changes`).
//!
//! Notifications come from one persistent recursive watch on the path
//! (ZooKeeper 3.6+), plus one on the internal lock a kazoo semaphore keeps
//! beside it. A server without them answers "unimplemented"; then every
//! directory of the tree gets a one-shot child watch, armed before the tree
//! is read and re-armed when it fires, and each firing reads the whole tree
//! again, so nothing between two readings is lost either way.
//!
//! After a reconnect, notifications of the time in between may be missing
//! (ZOOKEEPER-4698, and any contender that came and went): the whole tree is
//! read again, a `gap` event says so, and the transitions follow. An expired
//! session is replaced by a new one the same way.

mod delays;
mod ends;
mod events;
mod feed;
mod queue;
mod sites;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::FutureExt;
use futures::future;

use crate::clock;
use crate::model::layout::Depth;
use crate::model::locks::NodeRead;
use crate::model::{Lock, LockKind, read_lock, walk_with_dirs};
use crate::zk::sessions::{AdminPorts, Surveyor};
use crate::zk::{self, ConnectOptions, Session, path};

pub(crate) use delays::lock_delay_ms;
use ends::{SessionProbe, Timings};
use events::Counts;
pub(crate) use events::{EventKind, HoldEnd, How, Lasted, LockEvent};
use feed::{Feed, FeedEvent, NodeChanges, WatchMethod, arm, read_tree_armed, wait};
use queue::LiveQueue;
use sites::{affected_sites, changed_contenders, owner_of_part};

/// The locks of a copy kept outside the watch that changes have made
/// stale, gathered from their events until the copy is brought up to date
/// ([`LockWatch::update_copy`]): copying a long queue after every change
/// would cost more than following it.
#[derive(Debug, Default)]
pub(crate) struct Stale {
    paths: BTreeSet<String>,
    /// Everything was read again (a gap, the start): every lock is stale.
    all: bool,
}

impl Stale {
    /// Notes the locks `events` changed.
    pub(crate) fn note(&mut self, events: &[LockEvent]) {
        for event in events {
            match event.kind {
                EventKind::Gap | EventKind::Watching => self.all = true,
                _ => {
                    self.paths.insert(event.lock.clone());
                }
            }
        }
    }
}

/// The locks at and below a path, kept up to date.
pub(crate) struct LockWatch {
    connect: ConnectOptions,
    session: Session,
    states: zk::SessionStates,
    target: String,
    feed: Feed,
    /// The locks as last read, by path.
    locks: BTreeMap<String, Known>,
    /// Directories known to exist whose deletion is news (`gone`): every
    /// lock seen, and the target.
    dirs: BTreeSet<String>,
    /// When each hold and wait began, for the durations of their ends.
    timings: Timings,
    /// How the last hold of each lock ended, for `lock_delay` events.
    delays: delays::Delays,
    /// Asks the ensemble whether the session of a hold that ended lives.
    probe: SessionProbe,
    /// Whether the session is connected and the locks as read are current.
    connected: Arc<AtomicBool>,
}

/// A lock as the watch keeps it between readings.
enum Known {
    /// A queue, kept up to date node by node.
    Queue(LiveQueue),
    /// Anything else (a semaphore, a leader node, a semaphore's internal
    /// mutex read alone): read whole again when it changes.
    Whole(Lock),
}

impl Known {
    fn new(lock: Lock) -> Known {
        let queue = matches!(
            lock.kind,
            LockKind::Mutex | LockKind::ReadWrite | LockKind::Election
        );
        if queue && owner_of_part(&lock.path).is_none() {
            Known::Queue(LiveQueue::new(lock))
        } else {
            Known::Whole(lock)
        }
    }

    fn counts(&self) -> Counts {
        match self {
            Known::Queue(queue) => queue.counts(),
            Known::Whole(lock) => Counts::of(Some(lock)),
        }
    }

    /// The lock as a reading now would show it; `None` when no contender
    /// is left.
    fn lock(&self, now_ms: i64) -> Option<Cow<'_, Lock>> {
        match self {
            Known::Queue(queue) => queue.lock(now_ms).map(Cow::Owned),
            Known::Whole(lock) => Some(Cow::Borrowed(lock)),
        }
    }
}

/// What reading one lock directory found.
enum Reading {
    /// For a queue kept node by node: its contenders that changed, each
    /// read again (`None`: gone), in the order of their notifications.
    Contenders(Vec<(String, Option<NodeRead>)>),
    Lock(Lock),
    /// The node exists but is no lock (no contender left).
    NoLock,
    /// The node does not exist.
    Missing,
}

/// Why the whole tree is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Occasion {
    /// The first reading: the state as events, then `watching`.
    Start,
    /// A one-shot watch fired: the transitions.
    Change,
    /// After a reconnect or a new session: `gap`, then the transitions.
    Gap,
}

impl LockWatch {
    /// Connects, starts watching `target` (which need not exist yet) and
    /// reads its locks; returns the watch and the current state as events:
    /// `holding` and `queued` for each contender, then `watching`.
    /// Whether the session of a hold that ended lives is asked of the
    /// ensemble's members, as the session reads them, each at its port of
    /// `admin_ports` when it refuses the four-letter words.
    pub(crate) async fn start(
        connect: ConnectOptions,
        admin_ports: &AdminPorts,
        target: String,
    ) -> anyhow::Result<(LockWatch, Vec<LockEvent>)> {
        let session = zk::connect(&connect).await?;
        let feed = arm(&session, &target).await?;
        let surveyor = Surveyor::of_ensemble(&session, &connect.hosts, admin_ports).await;
        let mut watch = LockWatch {
            states: session.session_states(),
            timings: Timings::default(),
            delays: delays::Delays::default(),
            probe: SessionProbe::new(surveyor),
            connected: Arc::new(AtomicBool::new(true)),
            connect,
            session,
            target,
            feed,
            locks: BTreeMap::new(),
            dirs: BTreeSet::new(),
        };
        tracing::info!(
            event = "watching",
            path = %watch.target,
            method = watch.method().as_str(),
            "watching {} with {} watches",
            watch.target,
            watch.method().as_str()
        );
        let mut events = watch.read_everything(Occasion::Start).await?;
        // Nothing is reported yet, so a reconnect during the start (a
        // server that lacks a request closes the connection after refusing
        // it) is no gap: the start is read again after it. A loss not yet
        // healed is left to the first wait, which tells the reconnect as a
        // gap.
        while let Some(state) = watch.states.changed().now_or_never() {
            match state {
                zk::SessionState::Connected => {
                    watch.rearm_after_reconnect().await?;
                    events = watch.read_everything(Occasion::Start).await?;
                }
                zk::SessionState::Disconnected => {
                    watch.connected.store(false, Ordering::Relaxed);
                    break;
                }
                ended => anyhow::bail!("the ZooKeeper session ended ({ended}) as the watch began"),
            }
        }
        watch.timings.annotate(&mut events);
        Ok((watch, events))
    }

    /// How this watch hears of changes.
    fn method(&self) -> WatchMethod {
        match self.feed {
            Feed::Persistent { .. } => WatchMethod::PersistentRecursive,
            Feed::OneShot(_) => WatchMethod::OneShot,
        }
    }

    /// How many contenders hold and wait, in every lock under the target.
    pub(crate) fn totals(&self) -> (usize, usize) {
        self.locks
            .values()
            .map(Known::counts)
            .fold((0, 0), |(holders, waiters), counts| {
                (holders + counts.holders, waiters + counts.waiters)
            })
    }

    /// Waits for the next change and returns its events (never none).
    /// Fails when the session ends for good (closed, authentication failed)
    /// or a replacement for an expired one cannot be had.
    pub(crate) async fn next(&mut self) -> anyhow::Result<Vec<LockEvent>> {
        loop {
            if let Some(events) = self.next_before(None).await? {
                return Ok(events);
            }
        }
    }

    /// [`LockWatch::next`], or `None` when no news has come by `deadline`.
    /// Only the wait for news is given up at the deadline, never the
    /// reading of a change that came, so no change is lost.
    pub(crate) async fn next_before(
        &mut self,
        deadline: Option<tokio::time::Instant>,
    ) -> anyhow::Result<Option<Vec<LockEvent>>> {
        loop {
            let deadline = async {
                match deadline {
                    Some(deadline) => tokio::time::sleep_until(deadline).await,
                    None => std::future::pending().await,
                }
            };
            let feed_event = tokio::select! {
                biased;
                feed_event = wait(&mut self.feed, &mut self.states) => feed_event,
                () = deadline => return Ok(None),
            };
            let events = match feed_event {
                FeedEvent::Nodes(nodes) => self.read_sites(&nodes).await?,
                FeedEvent::Fired => self.read_everything(Occasion::Change).await?,
                FeedEvent::Disconnected => {
                    self.connected.store(false, Ordering::Relaxed);
                    Vec::new()
                }
                FeedEvent::Reconnected => {
                    self.rearm_after_reconnect().await?;
                    let events = self.read_everything(Occasion::Gap).await?;
                    self.connected.store(true, Ordering::Relaxed);
                    events
                }
                FeedEvent::Ended(zk::SessionState::Expired) => {
                    tracing::warn!("session expired; starting a new one");
                    self.connected.store(false, Ordering::Relaxed);
                    self.renew().await?;
                    let events = self.read_everything(Occasion::Gap).await?;
                    self.connected.store(true, Ordering::Relaxed);
                    events
                }
                FeedEvent::Ended(state) => {
                    anyhow::bail!("the ZooKeeper session ended ({state}) while watching")
                }
            };
            if !events.is_empty() {
                let mut events = events;
                self.timings.annotate(&mut events);
                if events.iter().any(|e| e.kind == EventKind::Released) {
                    let records = ends::end_records(&self.session, &events).await;
                    let live = self.sessions();
                    self.probe.explain(&mut events, &live, &records).await;
                }
                return Ok(Some(self.delays.mark(events)));
            }
        }
    }

    /// Who is asked whether a session lives: the members as the watch's
    /// first session read them.
    pub(crate) fn surveyor(&self) -> &Surveyor {
        self.probe.surveyor()
    }

    /// True while the session is connected (and so the locks as read are
    /// current), shared with whoever reads it while the watch waits.
    pub(crate) fn connected(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.connected)
    }

    /// The lock at `path` as a reading now would show it; `None` when there
    /// is none.
    pub(crate) fn lock(&self, path: &str, now_ms: i64) -> Option<Cow<'_, Lock>> {
        self.locks.get(path).and_then(|known| known.lock(now_ms))
    }

    /// Brings `copy`, a copy of the locks by path kept outside the watch,
    /// up to date: the locks `stale` names are taken again (all of them
    /// after a gap or at the start), and `stale` is emptied.
    pub(crate) fn update_copy(
        &self,
        copy: &mut BTreeMap<String, Lock>,
        stale: &mut Stale,
        now_ms: i64,
    ) {
        let stale = std::mem::take(stale);
        if stale.all {
            *copy = self
                .locks(now_ms)
                .map(|lock| (lock.path.clone(), lock.into_owned()))
                .collect();
            return;
        }
        for path in stale.paths {
            match self.lock(&path, now_ms) {
                Some(lock) => {
                    copy.insert(path, lock.into_owned());
                }
                None => {
                    copy.remove(&path);
                }
            }
        }
    }

    /// Every lock under the target as a reading now would show it.
    pub(crate) fn locks(&self, now_ms: i64) -> impl Iterator<Item = Cow<'_, Lock>> {
        self.locks
            .values()
            .filter_map(move |known| known.lock(now_ms))
    }

    /// The sessions of every contender under the target now.
    fn sessions(&self) -> HashSet<i64> {
        let now = clock::now_ms();
        let mut sessions = HashSet::new();
        for lock in self.locks(now) {
            sessions.extend(lock.contenders().map(|c| c.session()));
        }
        sessions
    }

    /// Closes the session.
    pub(crate) async fn close(self) {
        drop(self.feed);
        self.session.close().await;
    }

    /// Sets the persistent watches again after a reconnect: zookeeper-client
    /// 0.11.2 does not restore them on the new connection (its SetWatches
    /// carries one-shot watches only), so the server has forgotten them.
    /// The new watches are set before the old ones are dropped, so dropping
    /// those removes nothing on the server.
    async fn rearm_after_reconnect(&mut self) -> Result<(), zk::Error> {
        if let Feed::Persistent { .. } = self.feed {
            self.feed = arm(&self.session, &self.target).await?;
        }
        Ok(())
    }

    /// Replaces an expired session with a new one, watches armed again.
    async fn renew(&mut self) -> anyhow::Result<()> {
        let session = zk::connect(&self.connect).await?;
        self.feed = arm(&session, &self.target).await?;
        self.states = session.session_states();
        std::mem::replace(&mut self.session, session).close().await;
        Ok(())
    }

    /// Reads every lock under the target again (arming one-shot watches
    /// first) and returns the events for the occasion.
    async fn read_everything(&mut self, occasion: Occasion) -> anyhow::Result<Vec<LockEvent>> {
        let (locks, target_exists) = match &mut self.feed {
            Feed::Persistent { .. } => read_tree(&self.session, &self.target, |_| {}).await?,
            Feed::OneShot(watches) => read_tree_armed(&self.session, &self.target, watches).await?,
        };
        let now = clock::now_ms();
        let unseen: Vec<&String> = self
            .dirs
            .iter()
            .filter(|d| !locks.contains_key(*d))
            .collect();
        let stats = future::try_join_all(unseen.iter().map(|dir| self.session.stat(dir))).await?;
        let gone: BTreeSet<String> = unseen
            .into_iter()
            .zip(stats)
            .filter(|(_, stat)| stat.is_none())
            .map(|(dir, _)| dir.clone())
            .collect();
        let mut events = Vec::new();
        match occasion {
            Occasion::Start => {
                for lock in locks.values() {
                    events.extend(events::snapshot(lock, now));
                }
            }
            Occasion::Change => {}
            Occasion::Gap => {
                let (holders, waiters) = self.totals();
                events.push(events::lock_event(
                    EventKind::Gap,
                    &self.target,
                    holders,
                    waiters,
                    now,
                ));
            }
        }
        if occasion != Occasion::Start {
            let paths: BTreeSet<&String> = self.locks.keys().chain(locks.keys()).collect();
            for path in paths {
                let old = self.locks.get(path).and_then(|known| known.lock(now));
                events.extend(events::changes(path, old.as_deref(), locks.get(path), now));
                if gone.contains(path) {
                    events.push(events::lock_event(EventKind::Gone, path, 0, 0, now));
                }
            }
            // Deepest first: a tree goes from its leaves up.
            for dir in gone
                .iter()
                .rev()
                .filter(|dir| !self.locks.contains_key(*dir))
            {
                events.push(events::lock_event(EventKind::Gone, dir, 0, 0, now));
            }
        }
        self.dirs.retain(|dir| !gone.contains(dir));
        self.dirs.extend(locks.keys().cloned());
        if target_exists {
            self.dirs.insert(self.target.clone());
        }
        self.locks = locks
            .into_iter()
            .map(|(path, lock)| (path, Known::new(lock)))
            .collect();
        if occasion == Occasion::Start {
            let (holders, waiters) = self.totals();
            events.push(events::lock_event(
                EventKind::Watching,
                &self.target,
                holders,
                waiters,
                now,
            ));
        }
        Ok(events)
    }

    /// Reads the locks that `changes` may have touched, and returns the
    /// transitions.
    async fn read_sites(&mut self, changes: &NodeChanges) -> anyhow::Result<Vec<LockEvent>> {
        let nodes: BTreeSet<String> = changes.iter().map(|(node, _)| node.clone()).collect();
        let sites = affected_sites(&self.target, &nodes);
        let readings =
            future::try_join_all(sites.iter().map(|site| self.reread(site, changes))).await?;
        let mut readings: BTreeMap<&String, Reading> = sites.iter().zip(readings).collect();
        // The parts of a semaphore read as locks of their own when read
        // alone; the semaphore they belong to is the lock.
        let parts: Vec<&String> = readings
            .keys()
            .filter(|site| {
                owner_of_part(site).is_some_and(|owner| {
                    matches!(readings.get(&owner), Some(Reading::Lock(lock))
                        if lock.kind == LockKind::Semaphore)
                })
            })
            .copied()
            .collect();
        let now = clock::now_ms();
        let mut events = Vec::new();
        for part in parts {
            readings.remove(part);
            // Read alone before its semaphore had leases, it was a lock.
            events.extend(self.replace(part, None, now));
        }
        for (site, reading) in readings {
            match reading {
                Reading::Contenders(nodes) => events.extend(self.update_queue(site, nodes, now)),
                Reading::Lock(lock) => {
                    events.extend(self.replace(site, Some(lock), now));
                    self.dirs.insert(site.clone());
                }
                Reading::NoLock => {
                    events.extend(self.replace(site, None, now));
                    if *site == self.target {
                        self.dirs.insert(site.clone());
                    }
                }
                Reading::Missing => {
                    events.extend(self.replace(site, None, now));
                    if self.dirs.remove(site) {
                        events.push(events::lock_event(EventKind::Gone, site, 0, 0, now));
                    }
                }
            }
        }
        Ok(events)
    }

    /// Puts `new`, a reading of the whole lock at `site`, in place of what
    /// was known of it, and returns the transitions.
    fn replace(&mut self, site: &str, new: Option<Lock>, now: i64) -> Vec<LockEvent> {
        let old = self.locks.remove(site);
        let old = old.as_ref().and_then(|known| known.lock(now));
        let events = events::changes(site, old.as_deref(), new.as_ref(), now);
        if let Some(lock) = new {
            self.locks.insert(site.to_owned(), Known::new(lock));
        }
        events
    }

    /// Brings the queue at `site` up to date with its contenders that
    /// changed, one after another, and returns the transitions.
    fn update_queue(
        &mut self,
        site: &str,
        nodes: Vec<(String, Option<NodeRead>)>,
        now: i64,
    ) -> Vec<LockEvent> {
        let Some(Known::Queue(queue)) = self.locks.get_mut(site) else {
            return Vec::new();
        };
        let mut events = Vec::new();
        for (name, read) in nodes {
            events.extend(match read {
                Some(read) => queue.update(&name, read, now),
                None => queue.remove(&name, now),
            });
        }
        if queue.is_empty() {
            self.locks.remove(site);
        }
        events
    }
}

impl LockWatch {
    /// Reads the lock directory `site` again after `changes`: for a queue
    /// kept node by node where only contenders changed, just those that
    /// are still there; else all of it.
    async fn reread(&self, site: &String, changes: &NodeChanges) -> anyhow::Result<Reading> {
        if let Some(Known::Queue(_)) = self.locks.get(site)
            && let Some(changed) = changed_contenders(&self.target, site, changes)
            && let Some(nodes) = self.read_contenders(&changed).await?
        {
            return Ok(Reading::Contenders(nodes));
        }
        read_site(&self.session, site).await
    }

    /// The contenders `changed`, each read again (all requests at once)
    /// unless its notification says it is gone, by name in the order of
    /// their notifications; `None` when one could not be read (no
    /// permission): then the whole lock is read as a walk reads it.
    async fn read_contenders(
        &self,
        changed: &[(&str, zk::NodeChange)],
    ) -> Result<Option<Vec<(String, Option<NodeRead>)>>, zk::Error> {
        let to_read: BTreeSet<&str> = changed
            .iter()
            .filter(|(_, change)| *change != zk::NodeChange::Deleted)
            .map(|(node, _)| *node)
            .collect();
        let reads = future::try_join_all(to_read.iter().map(|node| async move {
            match self.session.get_data(node).await {
                Ok((data, stat)) => Ok(Some((*node, Some(NodeRead { data, stat })))),
                Err(err) if err.is_no_node() => Ok(Some((*node, None))),
                Err(err) if err.failure() == zk::Failure::Denied => Ok(None),
                Err(err) => Err(err),
            }
        }))
        .await?;
        let Some(reads) = reads.into_iter().collect::<Option<HashMap<_, _>>>() else {
            return Ok(None);
        };
        let nodes = changed.iter().map(|(node, change)| {
            let read = match change {
                zk::NodeChange::Deleted => None,
                _ => reads[node].clone(),
            };
            (path::basename(node).to_owned(), read)
        });
        Ok(Some(nodes.collect()))
    }
}

/// Every lock at and below `target`, and whether `target` exists; `on_dir`
/// hears of every directory listed.
async fn read_tree(
    session: &Session,
    target: &str,
    mut on_dir: impl FnMut(&str),
) -> anyhow::Result<(BTreeMap<String, Lock>, bool)> {
    let mut locks = BTreeMap::new();
    let walked = walk_with_dirs(
        session,
        target,
        Depth::Tree,
        |_| {},
        |dir, _| on_dir(dir),
        |lock| {
            locks.insert(lock.path.clone(), lock);
            Ok(())
        },
    )
    .await;
    match walked {
        Ok(_) => Ok((locks, true)),
        Err(err) if is_no_node(&err) => Ok((BTreeMap::new(), false)),
        Err(err) => Err(err),
    }
}

fn is_no_node(err: &anyhow::Error) -> bool {
    err.downcast_ref::<zk::Error>()
        .is_some_and(zk::Error::is_no_node)
}

/// Reads the lock directory `site` alone, as `stat` does.
async fn read_site(session: &Session, site: &str) -> anyhow::Result<Reading> {
    match read_lock(session, site).await {
        Ok(Some(lock)) => Ok(Reading::Lock(lock)),
        Ok(None) => Ok(Reading::NoLock),
        Err(err) if is_no_node(&err) => Ok(Reading::Missing),
        Err(err) => Err(err),
    }
}
