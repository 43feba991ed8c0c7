//! The tree walk behind `ls`, `stat` and `dump`: list the tree, find the
//! locks in it, read their nodes, and hand each lock over in path order.
//!
//! Every request goes out on one session, pipelined: up to
//! [`MAX_IN_FLIGHT`] are outstanding at once, so a walk costs about as many
//! round trips as the tree is deep plus its nodes divided by the window,
//! instead of one round trip per node.
//!
//! 1. *List*: directories are listed concurrently, breadth first. Only the
//!    names are kept (a few dozen bytes a node); contender and lease nodes
//!    are never listed, their names say they are leaves.
//! 2. *Read*: the data and stat of every contender are read in path order
//!    through an ordered window of the same size, and each lock goes to the
//!    caller as soon as its last node is read. Only the locks inside the
//!    window are in memory at once, however large the tree.

use futures::stream::{self, FuturesUnordered, StreamExt};

use super::layout::{self, Depth, Listing};
use super::model::{Lock, NodeRead};
use crate::output;
use crate::zk::{self, Session};
use zookeeper_client as zkc;

/// The most requests a walk keeps outstanding on its session.
pub const MAX_IN_FLIGHT: usize = 256;

/// How often (in answered requests) a walk reports its progress.
const PROGRESS_EVERY: u64 = 100;

/// How far a walk has come, and what it could not read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WalkProgress {
    /// Directories listed.
    pub listed: u64,
    /// Contender nodes read.
    pub read: u64,
    /// Locks handed over.
    pub locks: u64,
    /// Directories below the start that an ACL kept us from listing.
    pub unreadable: Vec<String>,
}

impl WalkProgress {
    /// Requests answered so far.
    pub fn requests(&self) -> u64 {
        self.listed + self.read
    }
}

/// Reads every lock at `start` or, with [`Depth::Tree`], below it, and
/// hands each to `on_lock` in path order; `progress` hears how far the walk
/// has come every hundred requests. Fails when `start` does not exist (exit
/// 6) or cannot be listed; nodes that go while the walk runs are left out.
pub async fn walk(
    session: &Session,
    start: &str,
    depth: Depth,
    mut progress: impl FnMut(&WalkProgress),
    mut on_lock: impl FnMut(Lock) -> anyhow::Result<()>,
) -> anyhow::Result<WalkProgress> {
    let mut state = WalkProgress::default();
    let listing = list_tree(session, start, depth, &mut state, &mut progress).await?;
    let sites = layout::find_sites(listing, start, depth);
    let mut reads = stream::iter(sites.iter().flat_map(|site| site.reads()))
        .map(|path| read_node(session, path))
        .buffered(MAX_IN_FLIGHT);
    for site in &sites {
        let mut nodes = Vec::with_capacity(site.read_count());
        for _ in 0..site.read_count() {
            let read = reads.next().await.expect("one read per node of a site")?;
            nodes.push(read);
            state.read += 1;
            if state.requests().is_multiple_of(PROGRESS_EVERY) {
                progress(&state);
            }
        }
        for lock in site.build(nodes, output::now_ms()) {
            state.locks += 1;
            on_lock(lock)?;
        }
    }
    Ok(state)
}

/// The lock at `path`, or `None` when the node is not one. Fails when the
/// node does not exist (exit 6).
pub async fn read_lock(session: &Session, path: &str) -> anyhow::Result<Option<Lock>> {
    let mut found = None;
    walk(
        session,
        path,
        Depth::Lock,
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

/// Whether a directory must exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Need {
    /// The start: its absence is the caller's error.
    Required,
    /// Anything else: it may have gone, or never have been there.
    Optional,
}

/// Lists `start` and the directories below it that `depth` asks for, at
/// most [`MAX_IN_FLIGHT`] at a time.
async fn list_tree(
    session: &Session,
    start: &str,
    depth: Depth,
    state: &mut WalkProgress,
    progress: &mut impl FnMut(&WalkProgress),
) -> anyhow::Result<Listing> {
    let mut listing = Listing::new();
    let mut todo = vec![(start.to_owned(), Need::Required)];
    todo.extend(layout::kazoo_lock_beside(start).map(|dir| (dir, Need::Optional)));
    let mut in_flight = FuturesUnordered::new();
    loop {
        while in_flight.len() < MAX_IN_FLIGHT
            && let Some((dir, need)) = todo.pop()
        {
            in_flight.push(async move {
                let children = session.children(&dir).await;
                (dir, need, children)
            });
        }
        let Some((dir, need, children)) = in_flight.next().await else {
            break;
        };
        state.listed += 1;
        if state.requests().is_multiple_of(PROGRESS_EVERY) {
            progress(state);
        }
        let children = match children {
            Ok(children) => children,
            Err(err) if need == Need::Required => return Err(err.into()),
            Err(err) if err.is_no_node() => continue,
            Err(err) if matches!(err.cause(), Some(zkc::Error::NoAuth)) => {
                tracing::warn!("{err}");
                state.unreadable.push(dir);
                continue;
            }
            Err(err) => return Err(err.into()),
        };
        let next = layout::children_to_list(&dir, &children, start, depth);
        todo.extend(next.into_iter().map(|child| (child, Need::Optional)));
        listing.insert(dir, children);
    }
    Ok(listing)
}

/// Reads a node's data and stat; `None` when it has gone. A node whose ACL
/// forbids reading its data is shown with its stat and no data.
async fn read_node(session: &Session, path: String) -> Result<Option<NodeRead>, zk::Error> {
    match session.get_data(&path).await {
        Ok((data, stat)) => Ok(Some(NodeRead { data, stat })),
        Err(err) if err.is_no_node() => Ok(None),
        Err(err) if matches!(err.cause(), Some(zkc::Error::NoAuth)) => {
            let stat = session.stat(&path).await?;
            Ok(stat.map(|stat| NodeRead {
                data: Vec::new(),
                stat,
            }))
        }
        Err(err) => Err(err),
    }
}
