//! What `reap` deletes, and deleting it.
//!
//! Reaping removes other clients' nodes on an ensemble other software shares,
//! so it takes only what it can name with certainty: contender nodes that
//! the one model ([`Lock`]) recognises by name and node type, chosen by age
//! or session, and empty lock directories. Each is deleted only if it is
//! still the node that was read (same czxid and owner session) at the data
//! version it was read at ([`zk::delete`]); anything else is left alone and
//! reported.
//!
//! An empty node does not say what it once held: Kafka's `/brokers/ids`, an
//! emptied admin queue or a consumed kazoo `Queue` are empty persistent
//! nodes too. So an *empty lock directory* is one known to be a lock
//! directory: a container node (the type lock libraries make their
//! directories as; ZooKeeper deletes it itself soon after its last child),
//! or a lock directory whose every contender this reap deletes and which
//! has no other child. Never `/`, `/zookeeper`, the lock root or anything
//! above it.

use std::collections::HashMap;
use std::time::Duration;

use serde::Serialize;

use super::layout::Depth;
use super::model::{Contender, Lock, LockKind};
use super::walk::{WalkProgress, walk_with_dirs};
use crate::lock::node::Lifetime;
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
    /// The node as it was read: the delete is of that node alone.
    #[serde(skip)]
    pub seen: Seen,
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
    // Lock directories this reap empties, with the contenders it deletes.
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
        let mut candidates: Vec<Candidate> = child_counts
            .into_iter()
            .filter(|(_, children)| *children == 0)
            .map(|(dir, _)| Candidate {
                dir,
                contenders: 0,
                emptied: false,
            })
            .chain(emptied.into_iter().map(|(dir, contenders)| Candidate {
                dir,
                contenders,
                emptied: true,
            }))
            .filter(|candidate| may_reap_directory(&candidate.dir, root))
            .collect();
        candidates.sort_by(|a, b| b.dir.split('/').cmp(a.dir.split('/')));
        candidates.dedup_by(|a, b| a.dir == b.dir);
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
            seen: Seen::new(&contender.path, &contender.stat),
            what,
            lock: lock.path.clone(),
            session: Some(zk::format_session(contender.session())),
            age_ms: contender.age_ms,
            owner: Some(contender.owner_text()),
        })
}

/// A directory that may be an empty lock directory once this reap is done.
struct Candidate {
    dir: String,
    /// The children it has now: the contenders this reap deletes.
    contenders: usize,
    /// Whether it is a lock directory this reap empties.
    emptied: bool,
}

/// The candidates that are empty lock directories by their stat, read in
/// batches.
async fn empty_directories(
    session: &Session,
    candidates: Vec<Candidate>,
) -> Result<Vec<Doomed>, zk::Error> {
    let batcher = Batcher::new(session);
    let now = output::now_ms();
    let mut found = Vec::new();
    for chunk in candidates.chunks(BATCH) {
        let paths: Vec<String> = chunk.iter().map(|c| c.dir.clone()).collect();
        for (candidate, read) in chunk.iter().zip(batcher.read(&paths).await?) {
            let stat = match read {
                Ok((_, stat)) => stat,
                Err(err) if err.is_no_node() => continue,
                Err(err) => return Err(err),
            };
            if is_an_empty_lock_directory(&stat, candidate) {
                let dir = &candidate.dir;
                found.push(Doomed {
                    path: dir.clone(),
                    seen: Seen::new(dir, &stat),
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

/// No data and no children but the contenders being reaped; and a
/// container (made as a lock directory), or a persistent node this reap
/// empties of its contenders. An empty persistent node the reap did not
/// empty is anyone's: a broker list, a queue, a config node.
fn is_an_empty_lock_directory(stat: &zookeeper_client::Stat, candidate: &Candidate) -> bool {
    let known = match Lifetime::of(stat) {
        Lifetime::Container => true,
        Lifetime::Persistent => candidate.emptied && candidate.contenders > 0,
        Lifetime::Ephemeral { .. } | Lifetime::Ttl => false,
    };
    known && stat.data_length == 0 && stat.num_children as usize == candidate.contenders
}

/// Never `/`, ZooKeeper's own `/zookeeper`, the lock root or its ancestors.
fn may_reap_directory(dir: &str, root: &str) -> bool {
    !path::is_reserved(dir) && !path::is_at_or_below(root, dir)
}

/// Deletes the planned nodes, each only if it is still the node read, at
/// the version it was read at: contenders first, then directories (a
/// directory's delete is sent after its contenders' deletes are answered).
/// `progress` hears how many are done. A node that changed, was made again,
/// has children or is gone is not deleted. A reap that stops on an error
/// still says what it did before: the error comes with the outcomes so far.
pub async fn execute(
    session: &Session,
    nodes: &[Doomed],
    mut progress: impl FnMut(usize),
) -> (Reaped, Result<(), zk::Error>) {
    let mut reaped = Reaped::default();
    let mut done = 0;
    let (dirs, contenders): (Vec<&Doomed>, Vec<&Doomed>) = nodes
        .iter()
        .partition(|node| node.what == Doom::EmptyDirectory);
    for (batch, are_dirs) in [(contenders, false), (dirs, true)] {
        let seen = batch.iter().map(|node| node.seen.clone());
        let result = delete::delete_seen(session, seen, |node, deletion| {
            reaped.record(node, deletion, are_dirs);
            done += 1;
            progress(done);
        })
        .await;
        if result.is_err() {
            return (reaped, result);
        }
    }
    (reaped, Ok(()))
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

    fn candidate(contenders: usize, emptied: bool) -> Candidate {
        Candidate {
            dir: "/locks/a".to_owned(),
            contenders,
            emptied,
        }
    }

    const CONTAINER: i64 = i64::MIN;
    const TTL: i64 = 0xff00_0000_0000_0005u64 as i64;

    #[test]
    fn an_empty_lock_directory_is_a_container_or_one_this_reap_empties() {
        // A container: made as a lock directory.
        assert!(is_an_empty_lock_directory(
            &stat(0, 0, 2, CONTAINER),
            &candidate(0, false)
        ));
        // A persistent lock directory whose contenders this reap deletes
        // (kazoo's, HBase's).
        assert!(is_an_empty_lock_directory(
            &stat(0, 2, 6, 0),
            &candidate(2, true)
        ));
        // An empty persistent node this reap did not empty: a broker list,
        // a consumed queue, an admin queue.
        assert!(!is_an_empty_lock_directory(
            &stat(0, 0, 4, 0),
            &candidate(0, false)
        ));
        // Data: a kazoo semaphore's maximum, a config node.
        assert!(!is_an_empty_lock_directory(
            &stat(1, 0, 4, CONTAINER),
            &candidate(0, false)
        ));
        assert!(!is_an_empty_lock_directory(
            &stat(1, 2, 4, 0),
            &candidate(2, true)
        ));
        // An ephemeral node (a kazoo lease), a TTL node.
        for owner in [0x1234, TTL] {
            assert!(!is_an_empty_lock_directory(
                &stat(0, 0, 4, owner),
                &candidate(0, false)
            ));
        }
        // A child other than the contenders reaped.
        assert!(!is_an_empty_lock_directory(
            &stat(0, 3, 6, 0),
            &candidate(2, true)
        ));
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
        let mut contender = super::super::model::queue_lock(
            "/l",
            vec![(
                "lock-0000000001".to_owned(),
                super::super::model::NodeRead {
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
