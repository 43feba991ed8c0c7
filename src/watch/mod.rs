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

mod events;
mod queue;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use futures::FutureExt;
use futures::future::{self, BoxFuture};
use futures::stream::{FuturesUnordered, StreamExt};

use crate::clock;
use crate::lock::name;
use crate::lock::semaphore::{self, CURATOR_LEASES, CURATOR_LOCKS, KAZOO_LOCK_SUFFIX};
use crate::model::layout::{self, Depth};
use crate::model::locks::NodeRead;
use crate::model::{Lock, LockKind, read_lock, walk_with_dirs};
use crate::zk::{self, ConnectOptions, Session, path};

use events::Counts;
pub(crate) use events::{EventKind, LockEvent};
use queue::LiveQueue;

/// How a watch hears of changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WatchMethod {
    /// A persistent recursive watch (ZooKeeper 3.6+).
    PersistentRecursive,
    /// One-shot child watches on every directory, re-armed as they fire.
    OneShot,
}

impl WatchMethod {
    /// The name of the `watching` log event's `method` field.
    fn name(self) -> &'static str {
        match self {
            WatchMethod::PersistentRecursive => "persistent",
            WatchMethod::OneShot => "one-shot",
        }
    }

    /// The name used in messages.
    fn as_str(self) -> &'static str {
        match self {
            WatchMethod::PersistentRecursive => "a persistent recursive watch",
            WatchMethod::OneShot => "one-shot watches (the server has no persistent watches)",
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
}

/// Where notifications come from.
enum Feed {
    Persistent {
        main: zk::TreeWatch,
        /// The watch on a kazoo semaphore's internal lock beside the target.
        beside: Option<zk::TreeWatch>,
        /// A terminal session state a watcher delivered: it must not be
        /// polled again.
        ended: Option<zk::SessionState>,
    },
    OneShot(OneShotWatches),
}

/// The armed one-shot watches: the directories they are on, and their
/// firings.
#[derive(Default)]
struct OneShotWatches {
    armed: HashSet<String>,
    fired: FuturesUnordered<BoxFuture<'static, zk::WatchEvent>>,
    /// Directories whose watches fired, to arm again before the next reading.
    rearm: Vec<String>,
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

/// The nodes a persistent watch reported, and how each changed, in the
/// order it reported them.
type NodeChanges = Vec<(String, zk::NodeChange)>;

/// What woke the watch up.
enum News {
    /// These nodes changed (persistent watch).
    Nodes(NodeChanges),
    /// A one-shot watch fired: read everything again.
    Fired,
    /// The connection is back after a loss.
    Reconnected,
    /// The session is over.
    Ended(zk::SessionState),
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
    pub(crate) async fn start(
        connect: ConnectOptions,
        target: String,
    ) -> anyhow::Result<(LockWatch, Vec<LockEvent>)> {
        let session = zk::connect(&connect).await?;
        let feed = arm(&session, &target).await?;
        let mut watch = LockWatch {
            states: session.session_states(),
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
            method = watch.method().name(),
            "watching {} with {}",
            watch.target,
            watch.method().as_str()
        );
        let events = watch.read_everything(Occasion::Start).await?;
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
            let news = wait(&mut self.feed, &mut self.states).await;
            let events = match news {
                News::Nodes(nodes) => self.read_sites(&nodes).await?,
                News::Fired => self.read_everything(Occasion::Change).await?,
                News::Reconnected => {
                    self.rearm_after_reconnect().await?;
                    self.read_everything(Occasion::Gap).await?
                }
                News::Ended(zk::SessionState::Expired) => {
                    tracing::warn!("session expired; starting a new one");
                    self.renew().await?;
                    self.read_everything(Occasion::Gap).await?
                }
                News::Ended(state) => {
                    anyhow::bail!("the ZooKeeper session ended ({state}) while watching")
                }
            };
            if !events.is_empty() {
                return Ok(events);
            }
        }
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
            for dir in gone.iter().filter(|dir| !self.locks.contains_key(*dir)) {
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

/// The changes among `changes` that touch the lock at `site`, when each is
/// of a contender node directly in it: then reading those nodes again is
/// reading the lock again. `None` when anything else there changed (the
/// directory itself, a part of a semaphore, something named otherwise).
fn changed_contenders<'c>(
    target: &str,
    site: &str,
    changes: &'c NodeChanges,
) -> Option<Vec<(&'c str, zk::NodeChange)>> {
    let mut changed = Vec::new();
    for (node, change) in changes {
        let touches = affected_sites(target, &BTreeSet::from([node.clone()]));
        if !touches.contains(site) {
            continue;
        }
        let contender_here = path::parent(node) == Some(site)
            && name::parse(path::basename(node)).is_some()
            && touches.len() == 1;
        if !contender_here {
            return None;
        }
        changed.push((node.as_str(), *change));
    }
    Some(changed)
}

/// Sets the persistent recursive watches, or returns an empty set of
/// one-shot watches when the server has no persistent ones.
async fn arm(session: &Session, target: &str) -> Result<Feed, zk::Error> {
    let main = match session.watch_tree(target).await {
        Ok(main) => main,
        Err(err) if err.is_unimplemented() => {
            tracing::info!("the server has no persistent watches; using one-shot watches");
            // Such a server closes the connection after its answer: one
            // answered request later the client is connected again, and
            // the state watcher made after this sees no reconnect.
            session.stat(target).await?;
            return Ok(Feed::OneShot(OneShotWatches::default()));
        }
        Err(err) => return Err(err),
    };
    let beside = match layout::kazoo_lock_beside(target) {
        Some(beside) => Some(session.watch_tree(&beside).await?),
        None => None,
    };
    Ok(Feed::Persistent {
        main,
        beside,
        ended: None,
    })
}

/// What a wait woke up to, before it is understood.
enum Woke {
    State(zk::SessionState),
    Main(zk::WatchEvent),
    Beside(zk::WatchEvent),
    Fired(zk::WatchEvent),
}

/// Waits for news: a change, a reconnect, the session's end.
async fn wait(feed: &mut Feed, states: &mut zk::SessionStates) -> News {
    loop {
        let woke = match feed {
            Feed::Persistent {
                ended: Some(state), ..
            } => return News::Ended(*state),
            Feed::Persistent { main, beside, .. } => {
                let beside_event = async {
                    match beside {
                        Some(watcher) => watcher.changed().await,
                        None => future::pending().await,
                    }
                };
                tokio::select! {
                    state = states.changed() => Woke::State(state),
                    event = main.changed() => Woke::Main(event),
                    event = beside_event => Woke::Beside(event),
                }
            }
            Feed::OneShot(watches) => {
                let fired = async {
                    match watches.fired.next().await {
                        Some(event) => event,
                        None => future::pending().await,
                    }
                };
                tokio::select! {
                    state = states.changed() => Woke::State(state),
                    event = fired => Woke::Fired(event),
                }
            }
        };
        let news = match (woke, &mut *feed) {
            (Woke::State(state), _) => on_state(state),
            (Woke::Main(event), Feed::Persistent { main, ended, .. }) => {
                Some(drain(event, main, ended))
            }
            (
                Woke::Beside(event),
                Feed::Persistent {
                    beside: Some(beside),
                    ended,
                    ..
                },
            ) => Some(drain(event, beside, ended)),
            (Woke::Fired(event), Feed::OneShot(watches)) => Some(watches.on_fired(event)),
            _ => unreachable!("a wait wakes up to its own feed"),
        };
        if let Some(news) = news {
            return news;
        }
    }
}

/// The news in a session state change, if any: a reconnect, or the end.
/// The state watcher reports only the latest state, so a loss and the
/// reconnect after it may come as one change: any change to connected is
/// a reconnect.
fn on_state(state: zk::SessionState) -> Option<News> {
    match state {
        zk::SessionState::Disconnected => {
            tracing::warn!("connection to ZooKeeper lost; reconnecting");
            None
        }
        zk::SessionState::Connected => {
            tracing::info!(event = "reconnected", "reconnected to ZooKeeper");
            Some(News::Reconnected)
        }
        ended => Some(News::Ended(ended)),
    }
}

/// The nodes of `first` and of every notification already waiting behind
/// it; a terminal session state ends the feed.
fn drain(
    first: zk::WatchEvent,
    watcher: &mut zk::TreeWatch,
    ended: &mut Option<zk::SessionState>,
) -> News {
    let mut nodes = Vec::new();
    let mut next = Some(first);
    while let Some(event) = next.take() {
        match event {
            zk::WatchEvent::Session(state) if state.is_over() => {
                *ended = Some(state);
                break;
            }
            zk::WatchEvent::Session(_) => {}
            zk::WatchEvent::Node { path, change } => nodes.push((path, change)),
        }
        next = watcher.changed().now_or_never();
    }
    match (nodes.is_empty(), *ended) {
        (true, Some(state)) => News::Ended(state),
        _ => News::Nodes(nodes),
    }
}

impl OneShotWatches {
    /// Notes that a watch fired; its directory must be armed again.
    fn on_fired(&mut self, event: zk::WatchEvent) -> News {
        let mut next = Some(event);
        while let Some(event) = next.take() {
            let path = match event {
                zk::WatchEvent::Session(state) => return News::Ended(state),
                zk::WatchEvent::Node { path, .. } => path,
            };
            self.armed.remove(&path);
            self.rearm.push(path);
            next = self.fired.next().now_or_never().flatten();
        }
        News::Fired
    }

    /// Arms a child watch on each of `dirs` (all requests sent at once),
    /// or, for a directory of `even_if_missing` that does not exist, an
    /// existence watch. A directory that is gone is left alone: its
    /// parent's watch tells when it comes back.
    async fn arm(
        &mut self,
        session: &Session,
        dirs: Vec<String>,
        even_if_missing: &[String],
    ) -> Result<(), zk::Error> {
        let armed = future::try_join_all(dirs.into_iter().map(|dir| async move {
            let watcher = session
                .watch_dir(&dir, even_if_missing.contains(&dir))
                .await?;
            Ok::<_, zk::Error>((dir, watcher))
        }))
        .await?;
        for (dir, watcher) in armed {
            if let Some(watcher) = watcher {
                self.armed.insert(dir);
                self.fired.push(watcher.changed().boxed());
            }
        }
        Ok(())
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

/// [`read_tree`] with a one-shot watch on every directory before it is
/// read: the target (an existence watch while it is missing), the
/// directories whose watches fired, and any directory a reading lists that
/// is not watched yet, after which the tree is read again, until a reading
/// lists none new.
async fn read_tree_armed(
    session: &Session,
    target: &str,
    watches: &mut OneShotWatches,
) -> anyhow::Result<(BTreeMap<String, Lock>, bool)> {
    let must_watch: Vec<String> = std::iter::once(target.to_owned())
        .chain(layout::kazoo_lock_beside(target))
        .collect();
    let mut unwatched: Vec<String> = must_watch
        .iter()
        .cloned()
        .chain(std::mem::take(&mut watches.rearm))
        .collect();
    loop {
        unwatched.sort();
        unwatched.dedup();
        unwatched.retain(|dir| !watches.armed.contains(dir));
        watches
            .arm(session, std::mem::take(&mut unwatched), &must_watch)
            .await?;
        let mut listed = Vec::new();
        let reading = read_tree(session, target, |dir| listed.push(dir.to_owned())).await?;
        unwatched = listed
            .into_iter()
            .chain(must_watch.iter().cloned())
            .filter(|dir| !watches.armed.contains(dir))
            .collect();
        if unwatched.is_empty() {
            return Ok(reading);
        }
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

/// The lock directories whose state a change of `nodes` may have changed:
/// a contender's or lease's directory, any other node itself; with the
/// semaphore a part belongs to. Only directories at or below `target`
/// count, and the target for the internal lock a kazoo semaphore keeps
/// beside it.
fn affected_sites(target: &str, nodes: &BTreeSet<String>) -> BTreeSet<String> {
    let beside = layout::kazoo_lock_beside(target);
    let mut sites = BTreeSet::new();
    for node in nodes {
        let name = path::basename(node);
        let is_leaf = name::parse(name).is_some() || semaphore::parse_lease(name).is_some();
        let dir = match path::parent(node) {
            Some(parent) if is_leaf => parent,
            _ => node.as_str(),
        };
        if beside
            .as_deref()
            .is_some_and(|b| path::is_at_or_below(dir, b))
        {
            sites.insert(target.to_owned());
            continue;
        }
        for site in std::iter::once(dir.to_owned()).chain(owner_of_part(dir)) {
            if path::is_at_or_below(&site, target) {
                sites.insert(site);
            }
        }
    }
    sites
}

/// The semaphore `dir` would be a part of: the parent of a `leases` or
/// `locks` directory (Curator), the node beside a `-__lock__` one (kazoo).
fn owner_of_part(dir: &str) -> Option<String> {
    let name = path::basename(dir);
    if name == CURATOR_LEASES || name == CURATOR_LOCKS {
        return path::parent(dir).map(str::to_owned);
    }
    dir.strip_suffix(KAZOO_LOCK_SUFFIX)
        .filter(|owner| !owner.is_empty() && !owner.ends_with('/'))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sites(target: &str, nodes: &[&str]) -> Vec<String> {
        let nodes = nodes.iter().map(|n| n.to_string()).collect();
        affected_sites(target, &nodes).into_iter().collect()
    }

    #[test]
    fn a_contender_change_touches_its_directory() {
        assert_eq!(
            sites(
                "/locks",
                &["/locks/a/_c_2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f-lock-0000000001"]
            ),
            ["/locks/a"]
        );
        assert_eq!(
            sites("/locks/a", &["/locks/a/lock-0000000001"]),
            ["/locks/a"]
        );
        // A directory itself (made, deleted, its data changed).
        assert_eq!(
            sites("/locks", &["/locks/b", "/locks/b/c"]),
            ["/locks/b", "/locks/b/c"]
        );
        // Nothing outside the target.
        assert!(sites("/locks/a", &["/locks/ab/lock-0000000001", "/locks"]).is_empty());
    }

    #[test]
    fn a_semaphore_part_touches_the_semaphore() {
        let lease = "/l/s/leases/_c_2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f-lease-0000000001";
        assert_eq!(sites("/l", &[lease]), ["/l/s", "/l/s/leases"]);
        assert_eq!(
            sites("/l/s", &["/l/s/locks/lock-0000000001"]),
            ["/l/s", "/l/s/locks"]
        );
        assert_eq!(
            sites(
                "/l",
                &["/l/k-__lock__/0123456789abcdef0123456789abcdef__lock__0000000001"]
            ),
            ["/l/k", "/l/k-__lock__"]
        );
        // The internal lock beside the target belongs to the target.
        assert_eq!(sites("/l/k", &["/l/k-__lock__/lock-0000000002"]), ["/l/k"]);
        assert_eq!(owner_of_part("/-__lock__"), None);
    }
}
