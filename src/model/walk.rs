//! The tree walk behind `ls`, `stat` and `dump`: list the tree, find the
//! locks in it, read their nodes, and hand each lock over in path order.
//!
//! Every request goes out on one session, batched and pipelined: reads go
//! in multi-read batches of [`BATCH`], and up to [`WINDOW`] batches are
//! outstanding at once, so a walk costs about as many round trips as the
//! tree is deep, and the server handles one request per batch, not per node.
//!
//! 1. *List*: directories are listed concurrently, breadth first. Only the
//!    names are kept (a few dozen bytes a node); contender and lease nodes
//!    are never listed, their names say they are leaves.
//! 2. *Read*: the data and stat of every contender are read in path order
//!    through an ordered window, and each lock goes to the caller as soon as
//!    its last node is read. Only the locks inside the window are in memory
//!    at once, however large the tree. A walk asked for last runs
//!    ([`Runs::Read`]) reads in the same window the lock directories whose
//!    data takes an end record, and every empty node listed.

use futures::stream::{self, FuturesUnordered, Stream, StreamExt, TryStreamExt};

use super::layout::{self, ChildrenByDir, Depth, Runs};
use super::locks::{ContenderState, Lock, LockSummary, NodeRead, QueueReading};
use crate::clock;
use crate::zk::batch::{BATCH, Batcher, DataRead};
use crate::zk::{self, Session, path};

/// The most batches a walk keeps outstanding on its session.
const WINDOW: usize = 16;

/// The deepest a walk goes below its start. ZooKeeper has no depth limit of
/// its own, but no lock tree is a thousand levels deep; a tree that is (or a
/// server that invents one level after another) ends the walk with an error
/// naming the directory, instead of a walk that never ends.
pub(crate) const MAX_DEPTH: usize = 1000;

/// How often (in nodes listed or read) a walk reports its progress.
const PROGRESS_EVERY: u64 = 256;

/// How far a walk has come, and what it could not read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WalkProgress {
    /// Directories listed.
    pub listed: u64,
    /// Nodes read: contenders, leases, kazoo semaphore nodes, and the lock
    /// directories and empty nodes read for last runs.
    pub read: u64,
    /// Locks handed over.
    pub locks: u64,
    /// Directories below the start that an ACL kept us from listing.
    pub unreadable: Vec<String>,
}

impl WalkProgress {
    /// Nodes listed or read so far.
    pub fn nodes(&self) -> u64 {
        self.listed + self.read
    }
}

/// True when `err` says that `path` itself does not exist.
pub(crate) fn is_absent(err: &anyhow::Error, path: &str) -> bool {
    err.chain()
        .filter_map(|cause| cause.downcast_ref::<zk::Error>())
        .any(|err| err.is_no_node() && err.path() == Some(path))
}

/// Reads every lock at `start` or, with [`Depth::Tree`], below it, and
/// hands each to `on_lock` in path order, with its last `--once-per` run
/// when `runs` asks; `progress` hears how far the walk has come every few
/// hundred nodes. Fails when `start` does not exist (exit 6) or cannot be
/// listed; nodes that go while the walk runs are left out.
pub(crate) async fn walk(
    session: &Session,
    start: &str,
    depth: Depth,
    runs: Runs,
    progress: impl FnMut(&WalkProgress),
    on_lock: impl FnMut(Lock) -> anyhow::Result<()>,
) -> anyhow::Result<WalkProgress> {
    let walk = Walk {
        start,
        depth,
        runs,
        left_out: None,
    };
    walk_sites(session, walk, progress, |_, _| {}, on_lock).await
}

/// [`walk`], also telling `on_dir` of every directory it listed, with its
/// children, once the listing is complete and before any lock is handed
/// over: `reap` finds empty directories this way, and `watch` the
/// directories to set one-shot watches on.
pub(crate) async fn walk_with_dirs(
    session: &Session,
    start: &str,
    depth: Depth,
    progress: impl FnMut(&WalkProgress),
    on_dir: impl FnMut(&str, &[String]),
    on_lock: impl FnMut(Lock) -> anyhow::Result<()>,
) -> anyhow::Result<WalkProgress> {
    let walk = Walk {
        start,
        depth,
        runs: Runs::Skip,
        left_out: None,
    };
    walk_sites(session, walk, progress, on_dir, on_lock).await
}

/// [`walk`] of the tree below `start`, leaving out `left_out` when it is a
/// queue: `stat` reads that lock a window at a time instead of whole, and
/// its directory, listed already, is not listed again (a long queue's
/// listing is most of what the walk would fetch). A lock read whole is
/// handed over as usual.
pub(crate) async fn walk_around(
    session: &Session,
    start: &str,
    left_out: &ListedLock<'_>,
    progress: impl FnMut(&WalkProgress),
    on_lock: impl FnMut(Lock) -> anyhow::Result<()>,
) -> anyhow::Result<WalkProgress> {
    let walk = Walk {
        start,
        depth: Depth::Tree,
        runs: Runs::Skip,
        left_out: left_out.queue_dir(),
    };
    walk_sites(session, walk, progress, |_, _| {}, on_lock).await
}

/// Where a walk goes: from `start` as deep as `depth`, reading last runs as
/// `runs` asks, leaving out the queue whose directory is `left_out`.
struct Walk<'a> {
    start: &'a str,
    depth: Depth,
    runs: Runs,
    left_out: Option<QueueDir>,
}

/// A queue's directory as [`list_lock`] listed it, less the queue's
/// contenders: what a walk needs to go on below it without listing it
/// again.
#[derive(Clone, Debug)]
struct QueueDir {
    path: String,
    /// The directory's children that are not contenders.
    others: Vec<String>,
}

async fn walk_sites(
    session: &Session,
    Walk {
        start,
        depth,
        runs,
        left_out,
    }: Walk<'_>,
    mut progress: impl FnMut(&WalkProgress),
    mut on_dir: impl FnMut(&str, &[String]),
    mut on_lock: impl FnMut(Lock) -> anyhow::Result<()>,
) -> anyhow::Result<WalkProgress> {
    let batcher = Batcher::new(session);
    let mut state = WalkProgress::default();
    let left_out_path = left_out.as_ref().map(|dir| dir.path.clone());
    let lister = Lister::new(start, depth, left_out);
    let listing = lister.list(&batcher, &mut state, &mut progress).await?;
    for (dir, children) in &listing {
        on_dir(dir, children);
    }
    let mut sites = layout::find_sites(listing, start, depth, runs);
    if let Some(left_out) = left_out_path {
        // Only what is not a contender of the queue was kept of its
        // directory, which could pass for another kind of lock there.
        sites.retain(|site| !site.is_at(&left_out));
    }
    let mut reads = read_in_order(
        &batcher,
        session,
        sites.iter().flat_map(|site| site.reads()),
    );
    for site in &sites {
        let mut nodes = Vec::with_capacity(site.read_count());
        for _ in 0..site.read_count() {
            nodes.push(reads.next().await.expect("one read per node of a site")?);
            state.read += 1;
            if state.nodes().is_multiple_of(PROGRESS_EVERY) {
                progress(&state);
            }
        }
        for lock in site.build(nodes, clock::now_ms()) {
            state.locks += 1;
            on_lock(lock)?;
        }
    }
    Ok(state)
}

/// The lock at `path`, or `None` when the node is not one. Fails when the
/// node does not exist (exit 6).
pub(crate) async fn read_lock(session: &Session, path: &str) -> anyhow::Result<Option<Lock>> {
    let mut found = None;
    walk(
        session,
        path,
        Depth::Lock,
        Runs::Skip,
        |_| {},
        |lock| {
            if lock.path == path {
                found = Some(lock);
            }
            Ok(())
        },
    )
    .await?;
    Ok(found)
}

/// The stat of each of `paths`, in order (`None` for a node that has gone),
/// read as a walk reads its nodes: in batches, pipelined, so a few thousand
/// nodes cost a few round trips, not one each.
pub(crate) async fn read_stats(
    session: &Session,
    paths: Vec<String>,
) -> anyhow::Result<Vec<Option<zk::Stat>>> {
    let batcher = Batcher::new(session);
    let stats = read_in_order(&batcher, session, paths.into_iter())
        .map_ok(|read| read.map(|node| node.stat))
        .try_collect()
        .await?;
    Ok(stats)
}

/// How many contenders of one lock [`LockWindows`] reads at a time.
pub(crate) const CONTENDERS_PER_WINDOW: usize = 4 * WINDOW * BATCH;

/// The lock at `path` listed for `stat`, or `None` when the node is not a
/// lock; fails when it does not exist (exit 6). A queue is known by its
/// contenders' names alone until [`ListedLock::read`] reads them; a
/// semaphore or a leader node is read whole at once.
pub(crate) async fn list_lock<'s>(
    session: &'s Session,
    path: &str,
) -> anyhow::Result<Option<ListedLock<'s>>> {
    let batcher = Batcher::new(session);
    let mut state = WalkProgress::default();
    let lister = Lister::new(path, Depth::Lock, None);
    let listing = lister.list(&batcher, &mut state, &mut |_| {}).await?;
    let others = listing
        .get(path)
        .map(|children| layout::not_contenders(children))
        .unwrap_or_default();
    let Some(site) = layout::find_sites(listing, path, Depth::Lock, Runs::Skip).pop() else {
        return Ok(None);
    };
    let contenders = match site.into_queue() {
        Ok(queue) => Listed::Queue(queue, others),
        Err(site) => {
            let nodes: Vec<Option<NodeRead>> = read_in_order(&batcher, session, site.reads())
                .try_collect()
                .await?;
            let built = site.build(nodes, clock::now_ms());
            let Some(lock) = built.into_iter().find(|lock| lock.path == path) else {
                return Ok(None);
            };
            Listed::Whole(lock)
        }
    };
    Ok(Some(ListedLock {
        session,
        batcher,
        contenders,
    }))
}

/// A lock [`list_lock`] found.
pub(crate) struct ListedLock<'s> {
    session: &'s Session,
    batcher: Batcher<'s>,
    contenders: Listed,
}

/// What is known of a listed lock's contenders.
enum Listed {
    /// A queue's names, in queue order, none read yet; and the other
    /// children of its directory.
    Queue(QueueReading, Vec<String>),
    /// A lock read whole.
    Whole(Lock),
}

impl<'s> ListedLock<'s> {
    /// The queue's directory as listed, for a walk around it; `None` for a
    /// lock read whole.
    fn queue_dir(&self) -> Option<QueueDir> {
        match &self.contenders {
            Listed::Queue(queue, others) => Some(QueueDir {
                path: queue.dir().to_owned(),
                others: others.clone(),
            }),
            Listed::Whole(_) => None,
        }
    }

    /// False when no contender can be waiting. For a queue this is told
    /// from the names, before any node is read: reading can only find
    /// some of them gone, which makes no one wait who did not.
    pub(crate) fn may_have_waiters(&self) -> bool {
        match &self.contenders {
            Listed::Queue(queue, _) => queue.summary().is_some_and(|lock| lock.waiters > 0),
            Listed::Whole(lock) => !lock.waiters.is_empty(),
        }
    }

    /// Reads every contender once, in queue order, handing each window of
    /// them to `on_window` as it comes, and returns the lock's summary, which
    /// depends on every contender, with [`LockWindows`] that hand them over
    /// again; `None` when no contender is left. Only the first window is
    /// kept, the rest are read again as they are handed over; only the
    /// names of a queue are held whole. A lock of one window is read once.
    pub(crate) async fn read(
        self,
        mut on_window: impl FnMut(&[ContenderState]),
    ) -> anyhow::Result<Option<(LockSummary, LockWindows<'s>)>> {
        let ListedLock {
            session,
            batcher,
            contenders,
        } = self;
        let mut queue = match contenders {
            Listed::Whole(lock) => {
                let (summary, standings) = lock.into_parts();
                on_window(&standings);
                let windows = LockWindows {
                    session,
                    batcher,
                    first: Some(standings),
                    rest: None,
                };
                return Ok(Some((summary, windows)));
            }
            Listed::Queue(queue, _) => queue,
        };
        let first = read_window(&batcher, session, &mut queue).await?;
        let second = queue.confirmed();
        if let Some(first) = &first {
            on_window(first);
        }
        while let Some(window) = read_window(&batcher, session, &mut queue).await? {
            on_window(&window);
        }
        let Some(summary) = queue.summary() else {
            return Ok(None);
        };
        queue.rewind(second);
        let windows = LockWindows {
            session,
            batcher,
            first,
            rest: Some(queue),
        };
        Ok(Some((summary, windows)))
    }
}

/// The contenders of one lock, handed over a window at a time in queue
/// order ([`ListedLock::read`]).
pub(crate) struct LockWindows<'s> {
    session: &'s Session,
    batcher: Batcher<'s>,
    /// The contenders read already, until handed over: the first window of
    /// a queue, or a lock read whole.
    first: Option<Vec<ContenderState>>,
    /// The queue to read on from the second window; `None` for a lock read
    /// whole.
    rest: Option<QueueReading>,
}

impl LockWindows<'_> {
    /// The next contenders in queue order, each with whether it holds the
    /// lock; `None` once every one has been handed over. Nodes gone since
    /// they were listed are left out.
    pub(crate) async fn next(&mut self) -> anyhow::Result<Option<Vec<ContenderState>>> {
        if let Some(first) = self.first.take() {
            return Ok(Some(first));
        }
        match &mut self.rest {
            Some(queue) => read_window(&self.batcher, self.session, queue).await,
            None => Ok(None),
        }
    }
}

/// Reads the next [`CONTENDERS_PER_WINDOW`] contenders of `queue` and
/// confirms them; `None` when none is left to read.
async fn read_window(
    batcher: &Batcher<'_>,
    session: &Session,
    queue: &mut QueueReading,
) -> anyhow::Result<Option<Vec<ContenderState>>> {
    let paths: Vec<String> = queue
        .unread()
        .iter()
        .take(CONTENDERS_PER_WINDOW)
        .map(|queued| path::join(queue.dir(), &queued.name))
        .collect();
    if paths.is_empty() {
        return Ok(None);
    }
    let reads: Vec<Option<NodeRead>> = read_in_order(batcher, session, paths.into_iter())
        .try_collect()
        .await?;
    Ok(Some(queue.confirm(reads, clock::now_ms())))
}

/// Reads the data and stat of every path, in order (`None` for a node that
/// has gone), in batches of [`BATCH`] with at most [`WINDOW`] outstanding.
fn read_in_order<'a>(
    batcher: &'a Batcher<'a>,
    session: &'a Session,
    paths: impl Iterator<Item = String> + 'a,
) -> impl Stream<Item = Result<Option<NodeRead>, zk::Error>> + 'a {
    stream::iter(paths)
        .chunks(BATCH)
        .map(move |paths| read_batch(batcher, session, paths))
        .buffered(WINDOW)
        .flat_map(|batch| stream::iter(flatten(batch)))
}

/// Whether a directory must exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Presence {
    /// The start: its absence is the caller's error.
    Required,
    /// Anything else: it may have gone, or never have been there.
    Optional,
}

/// The listing of a walk: the directories listed, and those still to list.
struct Lister<'a> {
    start: &'a str,
    depth: Depth,
    listing: ChildrenByDir,
    todo: Vec<(String, Presence)>,
    /// A directory listed already, taken as it is when the walk comes to it.
    known: Option<QueueDir>,
}

impl<'a> Lister<'a> {
    fn new(start: &'a str, depth: Depth, known: Option<QueueDir>) -> Lister<'a> {
        Lister {
            start,
            depth,
            listing: ChildrenByDir::new(),
            todo: Vec::new(),
            known,
        }
    }

    /// Lists `start` and the directories below it that `depth` asks for, in
    /// batches, at most [`WINDOW`] at a time.
    async fn list(
        mut self,
        batcher: &Batcher<'_>,
        state: &mut WalkProgress,
        progress: &mut impl FnMut(&WalkProgress),
    ) -> anyhow::Result<ChildrenByDir> {
        self.push(self.start.to_owned(), Presence::Required)?;
        if let Some(dir) = layout::kazoo_lock_beside(self.start) {
            self.push(dir, Presence::Optional)?;
        }
        let mut in_flight = FuturesUnordered::new();
        loop {
            while in_flight.len() < WINDOW && !self.todo.is_empty() {
                let batch = self.todo.split_off(self.todo.len().saturating_sub(BATCH));
                in_flight.push(async move {
                    let dirs: Vec<String> = batch.iter().map(|(dir, _)| dir.clone()).collect();
                    let listed = batcher.list(&dirs).await;
                    (batch, listed)
                });
            }
            let Some((batch, listed)) = in_flight.next().await else {
                break;
            };
            for ((dir, presence), children) in batch.into_iter().zip(listed?) {
                state.listed += 1;
                if state.nodes().is_multiple_of(PROGRESS_EVERY) {
                    progress(state);
                }
                match children {
                    Ok(children) => self.listed(dir, children)?,
                    Err(err) if presence == Presence::Required => return Err(err.into()),
                    Err(err) if err.is_no_node() => {}
                    Err(err) if is_no_auth(&err) => {
                        tracing::warn!("{err}");
                        state.unreadable.push(dir);
                    }
                    Err(err) => return Err(err.into()),
                }
            }
        }
        Ok(self.listing)
    }

    /// Puts `dir` on the list, or takes it as listed already.
    fn push(&mut self, dir: String, presence: Presence) -> anyhow::Result<()> {
        match self.known.take_if(|known| known.path == dir) {
            Some(known) => self.listed(dir, known.others),
            None => {
                self.todo.push((dir, presence));
                Ok(())
            }
        }
    }

    /// Keeps the listing of `dir`, and puts what to list below it on the
    /// list.
    fn listed(&mut self, dir: String, children: Vec<String>) -> anyhow::Result<()> {
        let next = layout::children_to_list(&dir, &children, self.start, self.depth);
        if !next.is_empty() && depth_below(self.start, &dir) >= MAX_DEPTH {
            anyhow::bail!(
                "{dir}: more than {MAX_DEPTH} levels below {}; the walk stops there",
                self.start
            );
        }
        for child in next {
            self.push(child, Presence::Optional)?;
        }
        self.listing.insert(dir, children);
        Ok(())
    }
}

/// How many levels `dir` lies below `start` (0 for `start` itself).
fn depth_below(start: &str, dir: &str) -> usize {
    let rest = dir.strip_prefix(start).unwrap_or(dir);
    rest.split('/').filter(|part| !part.is_empty()).count()
}

/// Reads a batch of nodes: `None` for a node that has gone; a node whose ACL
/// forbids reading its data is shown with its stat and no data.
async fn read_batch(
    batcher: &Batcher<'_>,
    session: &Session,
    paths: Vec<String>,
) -> Result<Vec<Option<NodeRead>>, zk::Error> {
    let mut nodes = Vec::with_capacity(paths.len());
    for (path, read) in paths.iter().zip(batcher.read(&paths).await?) {
        nodes.push(settle(session, path, read).await?);
    }
    Ok(nodes)
}

async fn settle(
    session: &Session,
    path: &str,
    read: DataRead,
) -> Result<Option<NodeRead>, zk::Error> {
    match read {
        Ok((data, stat)) => Ok(Some(NodeRead { data, stat })),
        Err(err) if err.is_no_node() => Ok(None),
        Err(err) if is_no_auth(&err) => Ok(session.stat(path).await?.map(|stat| NodeRead {
            data: Vec::new(),
            stat,
        })),
        Err(err) => Err(err),
    }
}

/// A batch's reads one by one, or its failure once.
fn flatten(
    batch: Result<Vec<Option<NodeRead>>, zk::Error>,
) -> Vec<Result<Option<NodeRead>, zk::Error>> {
    match batch {
        Ok(nodes) => nodes.into_iter().map(Ok).collect(),
        Err(err) => vec![Err(err)],
    }
}

fn is_no_auth(err: &zk::Error) -> bool {
    err.is_no_auth()
}
