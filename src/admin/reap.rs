//! What `reap` deletes, and deleting it.
//!
//! Reaping removes other clients' nodes, so it takes only what it can name
//! with certainty: contender nodes that the one model ([`Lock`]) recognises,
//! chosen by age or session, and empty lock directories. Each is deleted at
//! the data version it was read at ([`zk::delete`]), so a node that changed
//! between the reading and the deleting is left alone and reported.
//!
//! An empty node does not say what it once held, so an *empty lock
//! directory* is decided from what can be seen: a node at or below the
//! reaped path with no children and no data, persistent or a container,
//! that once had children (cversion > 0) — or a lock directory whose every
//! contender this reap deletes and which has no other child. Never `/`,
//! `/zookeeper`, the lock root or anything above it.

use std::collections::HashMap;
use std::time::Duration;

use serde::Serialize;

use crate::model::{Contender, Depth, Lock, LockKind, WalkProgress, walk_with_dirs};
use crate::output;
use crate::zk::batch::{BATCH, Batcher};
use crate::zk::delete::{self, Deletion, Seen};
use crate::zk::{self, Session, path};

/// Which contender nodes to reap; a node must match every selector given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    /// Nodes created at least this long ago (by their ctime).
    pub older_than: Option<Duration>,
    /// Nodes of this owner session.
    pub session: Option<i64>,
    /// Every contender node.
    pub all: bool,
}

impl Selector {
    /// True when no selector is given: no contender is picked.
    pub fn is_empty(&self) -> bool {
        !self.all && self.older_than.is_none() && self.session.is_none()
    }

    fn picks(&self, contender: &Contender) -> bool {
        !self.is_empty()
            && self
                .older_than
                .is_none_or(|age| contender.age_ms >= age.as_millis() as i64)
            && self.session.is_none_or(|id| contender.session() == id)
    }
}

/// What a node to reap is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Doom {
    /// A contender that holds its lock.
    Holder,
    /// A contender that waits.
    Waiter,
    /// An empty lock directory.
    EmptyDirectory,
}

impl Doom {
    /// The name used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            Doom::Holder => "holder",
            Doom::Waiter => "waiter",
            Doom::EmptyDirectory => "empty lock directory",
        }
    }
}

/// One node to reap, as it was read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Doomed {
    pub path: String,
    /// The data version it was read at: the delete carries it.
    #[serde(skip)]
    pub version: i32,
    pub what: Doom,
    /// The lock it belongs to (for a directory: itself).
    pub lock: String,
    /// The owner session, `0x...`; null for a directory.
    pub session: Option<String>,
    /// How old the node is (from its ctime).
    pub age_ms: i64,
    /// Who the contender is, as `stat` shows it; null for a directory.
    pub owner: Option<String>,
}

/// Everything a reap would delete under a path: contenders first, in the
/// order they go (per lock, waiters from the back of the queue, then the
/// holders, so no waiter is granted a lock only to lose it), then the
/// empty directories, deepest first.
#[derive(Debug, Default)]
pub struct ReapPlan {
    pub nodes: Vec<Doomed>,
    /// How far the walk came, and what it could not read.
    pub walked: WalkProgress,
}

/// A node left alone, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// What a reap did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reaped {
    pub deleted: Vec<String>,
    /// Nodes left alone because they changed or have children.
    pub skipped: Vec<Skipped>,
    /// Nodes that were already gone (someone else removed them).
    pub gone: Vec<String>,
}

/// Reads the tree at `start` and returns what a reap with `selector` (and,
/// with `empty`, the empty lock directories) would delete. `root` is the
/// lock root, never deleted; `progress` hears how far the walk has come.
pub async fn plan(
    session: &Session,
    start: &str,
    root: &str,
    selector: Selector,
    empty: bool,
    progress: impl FnMut(&WalkProgress),
) -> anyhow::Result<ReapPlan> {
    let mut child_counts: HashMap<String, usize> = HashMap::new();
    let mut nodes = Vec::new();
    let mut emptied = Vec::new();
    let walked = walk_with_dirs(
        session,
        start,
        Depth::Tree,
        progress,
        |dir, children| {
            if empty && path::is_at_or_below(dir, start) {
                child_counts.insert(dir.to_owned(), children.len());
            }
        },
        |lock| {
            let before = nodes.len();
            nodes.extend(doomed_contenders(&lock, selector));
            let picked = nodes.len() - before;
            let contenders = lock.holders.len() + lock.waiters.len();
            if empty && lock.kind != LockKind::Semaphore && picked == contenders {
                emptied.push((lock.path, contenders));
            }
            Ok(())
        },
    )
    .await?;
    if empty {
        let mut candidates: Vec<(String, usize)> = child_counts
            .into_iter()
            .filter(|(_, children)| *children == 0)
            .chain(emptied)
            .filter(|(dir, _)| may_reap_directory(dir, root))
            .collect();
        candidates.sort_by(|(a, _), (b, _)| b.split('/').cmp(a.split('/')));
        candidates.dedup_by(|(a, _), (b, _)| a == b);
        nodes.extend(empty_directories(session, candidates).await?);
    }
    Ok(ReapPlan { nodes, walked })
}

/// The contenders of `lock` that `selector` picks, in the order to delete
/// them.
fn doomed_contenders(lock: &Lock, selector: Selector) -> impl Iterator<Item = Doomed> + '_ {
    let waiters = lock.waiters.iter().rev().map(|c| (c, Doom::Waiter));
    let holders = lock.holders.iter().rev().map(|c| (c, Doom::Holder));
    waiters
        .chain(holders)
        .filter(move |(contender, _)| selector.picks(contender))
        .map(|(contender, what)| Doomed {
            path: contender.path.clone(),
            version: contender.stat.version,
            what,
            lock: lock.path.clone(),
            session: Some(zk::format_session(contender.session())),
            age_ms: contender.age_ms,
            owner: Some(contender.owner_text()),
        })
}

/// The candidates (a directory and the children it may have now: none, or
/// the contenders this reap deletes) that are empty lock directories by
/// their stat, read in batches.
async fn empty_directories(
    session: &Session,
    candidates: Vec<(String, usize)>,
) -> Result<Vec<Doomed>, zk::Error> {
    let batcher = Batcher::new(session);
    let now = output::now_ms();
    let mut found = Vec::new();
    for chunk in candidates.chunks(BATCH) {
        let paths: Vec<String> = chunk.iter().map(|(dir, _)| dir.clone()).collect();
        for ((dir, children), read) in chunk.iter().zip(batcher.read(&paths).await?) {
            let stat = match read {
                Ok((_, stat)) => stat,
                Err(err) if err.is_no_node() => continue,
                Err(err) => return Err(err),
            };
            if looks_like_an_empty_lock_directory(&stat, *children) {
                found.push(Doomed {
                    path: dir.clone(),
                    version: stat.version,
                    what: Doom::EmptyDirectory,
                    lock: dir.clone(),
                    session: None,
                    age_ms: now - stat.ctime,
                    owner: None,
                });
            }
        }
    }
    Ok(found)
}

/// The ephemeralOwner ZooKeeper gives a container node.
const CONTAINER_OWNER: i64 = i64::MIN;

/// No data, no children but `children` (the contenders being reaped), once
/// had children, and persistent or a container (not ephemeral, not TTL).
fn looks_like_an_empty_lock_directory(stat: &zookeeper_client::Stat, children: usize) -> bool {
    stat.data_length == 0
        && stat.num_children as usize == children
        && stat.cversion > 0
        && (stat.ephemeral_owner == 0 || stat.ephemeral_owner == CONTAINER_OWNER)
}

/// Never `/`, ZooKeeper's own `/zookeeper`, the lock root or its ancestors.
fn may_reap_directory(dir: &str, root: &str) -> bool {
    dir != "/" && !path::is_at_or_below(dir, "/zookeeper") && !path::is_at_or_below(root, dir)
}

/// Deletes the planned nodes, each at the version it was read at:
/// contenders first, then directories (a directory's delete is sent after
/// its contenders' deletes are answered). `progress` hears how many are
/// done. A node that changed, has children or is gone is not deleted.
pub async fn execute(
    session: &Session,
    nodes: &[Doomed],
    mut progress: impl FnMut(usize),
) -> Result<Reaped, zk::Error> {
    let mut reaped = Reaped::default();
    let mut done = 0;
    let (dirs, contenders): (Vec<&Doomed>, Vec<&Doomed>) = nodes
        .iter()
        .partition(|node| node.what == Doom::EmptyDirectory);
    for (batch, are_dirs) in [(contenders, false), (dirs, true)] {
        let seen = batch.iter().map(|node| Seen {
            path: node.path.clone(),
            version: node.version,
        });
        delete::delete_seen(session, seen, |node, deletion| {
            reaped.record(node, deletion, are_dirs);
            done += 1;
            progress(done);
        })
        .await?;
    }
    Ok(reaped)
}

impl Reaped {
    fn record(&mut self, node: &Seen, deletion: Deletion, is_dir: bool) {
        let reason = match deletion {
            Deletion::Deleted => return self.deleted.push(node.path.clone()),
            Deletion::Gone => return self.gone.push(node.path.clone()),
            Deletion::HasChildren if is_dir => "it is not empty any more",
            other => other.left_alone_because().unwrap_or_default(),
        };
        self.skipped.push(Skipped {
            path: node.path.clone(),
            reason: reason.to_owned(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zookeeper_client as zkc;

    fn stat(data_length: i32, num_children: i32, cversion: i32, owner: i64) -> zkc::Stat {
        zkc::Stat {
            czxid: 1,
            mzxid: 1,
            pzxid: 1,
            ctime: 0,
            mtime: 0,
            version: 0,
            cversion,
            aversion: 0,
            ephemeral_owner: owner,
            data_length,
            num_children,
        }
    }

    #[test]
    fn an_empty_lock_directory_had_children_and_holds_no_data() {
        assert!(looks_like_an_empty_lock_directory(&stat(0, 0, 4, 0), 0));
        assert!(looks_like_an_empty_lock_directory(
            &stat(0, 0, 2, CONTAINER_OWNER),
            0
        ));
        assert!(looks_like_an_empty_lock_directory(&stat(0, 2, 6, 0), 2));
        // Never had a child: a node made for something else.
        assert!(!looks_like_an_empty_lock_directory(&stat(0, 0, 0, 0), 0));
        // Data: a kazoo semaphore's maximum, a config node.
        assert!(!looks_like_an_empty_lock_directory(&stat(1, 0, 4, 0), 0));
        // An ephemeral node (a kazoo lease), a TTL node.
        assert!(!looks_like_an_empty_lock_directory(
            &stat(0, 0, 4, 0x1234),
            0
        ));
        assert!(!looks_like_an_empty_lock_directory(
            &stat(0, 0, 4, -0x100_0000_0000_0000 + 5),
            0
        ));
        // A child other than the contenders reaped.
        assert!(!looks_like_an_empty_lock_directory(&stat(0, 3, 6, 0), 2));
    }

    #[test]
    fn the_root_its_ancestors_and_zookeeper_are_never_reaped() {
        assert!(may_reap_directory("/locks/a", "/locks"));
        assert!(!may_reap_directory("/locks", "/locks"));
        assert!(!may_reap_directory("/", "/locks"));
        assert!(!may_reap_directory("/apps", "/apps/locks"));
        assert!(!may_reap_directory("/zookeeper/quota", "/locks"));
        assert!(may_reap_directory("/apps/locks-old", "/apps/locks"));
    }

    #[test]
    fn selectors_combine() {
        let mut contender = crate::model::locks::queue_lock(
            "/l",
            vec![(
                "lock-0000000001".to_owned(),
                crate::model::locks::NodeRead {
                    data: Vec::new(),
                    stat: stat(0, 0, 0, 0x42),
                },
            )],
            60_000,
        )
        .unwrap()
        .holders
        .remove(0);
        contender.age_ms = 60_000;
        let minute = Some(Duration::from_secs(60));
        assert!(!Selector::default().picks(&contender));
        assert!(
            Selector {
                all: true,
                ..Default::default()
            }
            .picks(&contender)
        );
        assert!(
            Selector {
                older_than: minute,
                ..Default::default()
            }
            .picks(&contender)
        );
        let hour = Some(Duration::from_secs(3600));
        assert!(
            !Selector {
                older_than: hour,
                ..Default::default()
            }
            .picks(&contender)
        );
        let both = Selector {
            older_than: minute,
            session: Some(0x42),
            all: false,
        };
        assert!(both.picks(&contender));
        assert!(
            !Selector {
                session: Some(0x43),
                ..both
            }
            .picks(&contender)
        );
    }
}
