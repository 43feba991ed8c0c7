//! Wait chains: where a lock's holder's owner waits, on whom, and so on to
//! the root blocker. `stat` prints them under a lock, `top` above a queue,
//! and a waiting `lock` looks for cycles in the same tree; one place says
//! which tree that is and what a hop shows.

use serde::Serialize;

use super::waitfor::{Via, WaitGraph};
use crate::zk;

/// Where chains are followed: the tree under the root; for a lock outside
/// it, the tree its directory is in (the directory's parent), rather than
/// the whole ensemble.
pub(crate) fn chains_under<'a>(root: &'a str, lock: &'a str) -> &'a str {
    if zk::path::is_at_or_below(lock, root) {
        root
    } else {
        zk::path::parent(lock).unwrap_or(lock)
    }
}

/// One hop of a waiter's chain beyond its own queue, as JSON: a blocker
/// in another lock, and how the previous blocker's owner waits on it.
#[derive(Debug, Serialize)]
pub(crate) struct HopJson {
    pub lock: String,
    pub node: String,
    pub session: String,
    pub owner: String,
    pub age_ms: i64,
    pub via: Via,
    /// True on the hop that comes back to a blocker already on the chain.
    pub loops: bool,
}

/// The chain beyond the queue of the lock at `path`, from its holder that
/// has held longest: every waiter of the lock waits on that holder first,
/// so they all share it, and it is worked out once.
pub(crate) fn chain(graph: &WaitGraph, path: &str) -> Vec<HopJson> {
    let Some(lock) = graph.lock_at(path) else {
        return Vec::new();
    };
    graph
        .chain(lock)
        .into_iter()
        .map(|hop| {
            let blocker = &graph.contenders[hop.blocker];
            HopJson {
                lock: graph.locks[blocker.lock].path.clone(),
                node: blocker.path.clone(),
                session: zk::format_session(blocker.session),
                owner: blocker.owner_text.clone(),
                age_ms: blocker.age_ms,
                via: hop.via,
                loops: hop.loops,
            }
        })
        .collect()
}
