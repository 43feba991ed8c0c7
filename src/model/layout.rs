//! Which listed directories are locks, and which nodes to read for each.
//!
//! The walk lists the tree first and hands the listing here. A directory is
//! a lock when it has
//!
//! - a `leases` child: a Curator semaphore, whose `leases/` and `locks/`
//!   children are its parts, not locks of their own;
//! - kazoo lease children (`<hex32>`) or a `<name>-__lock__` sibling: a
//!   kazoo semaphore, confirmed once its data (the maximum number of leases)
//!   is read and only when the sibling exists; the sibling is its part;
//! - contender children: a mutex, read-write lock or election;
//! - no children and the well-known name of a leader node (`leaders`): a
//!   leader node, confirmed once read (ephemeral, with that service's data);
//! - when the walk reads last runs ([`Runs::Read`]), no children and an end
//!   record in its data that keeps a `--once-per` run: an emptied lock, idle
//!   between runs, confirmed once read.
//!
//! Children that are none of these are not contenders: they are walked into
//! (a lock may live below them) but never counted. Names only pick what to
//! read: whether a node read is a contender after all (its type) is decided
//! when the lock is built from the reads (`model`).

use std::cmp::Ordering;
use std::collections::HashMap;

use super::leaders;
use super::locks::{self, LastRun, Lock, NodeRead, QueueReading, Reads};
use crate::lock::Dialect;
use crate::lock::end::{EndRecord, directory_for};
use crate::lock::name;
use crate::lock::semaphore::{self, CURATOR_LEASES, CURATOR_LOCKS};
use crate::zk::path;

/// How far a walk goes below its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Depth {
    /// The start node only, with the parts a semaphore keeps below or beside
    /// it (`stat`).
    Lock,
    /// Everything at or below the start (`ls`, `dump`).
    Tree,
}

/// Whether a walk reads each lock's last counted `--once-per` run too: the
/// data of every lock directory that takes an end record, and of every
/// empty node, where an emptied lock keeps it. Only `ls` lists them; every
/// other walk sends no more requests than it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Runs {
    Skip,
    Read,
}

/// Directory path → its children's names, as listed.
pub(crate) type ChildrenByDir = HashMap<String, Vec<String>>;

/// The children of `dir` to list next. Contender and lease nodes are never
/// listed: their names say they are leaves of a lock.
pub(crate) fn children_to_list(
    dir: &str,
    children: &[String],
    start: &str,
    depth: Depth,
) -> Vec<String> {
    match depth {
        Depth::Tree => children
            .iter()
            .filter(|child| name::parse(child).is_none() && !is_curator_lease(child))
            .map(|child| path::join(dir, child))
            .collect(),
        Depth::Lock if dir == start && children.iter().any(|c| c == CURATOR_LEASES) => {
            [CURATOR_LEASES, CURATOR_LOCKS]
                .into_iter()
                .filter(|part| children.iter().any(|c| c == part))
                .map(|part| path::join(dir, part))
                .collect()
        }
        Depth::Lock => Vec::new(),
    }
}

/// The directory that may be the internal lock of a kazoo semaphore at
/// `start`, and so must be listed with it; `None` for the root.
pub(crate) fn kazoo_lock_beside(start: &str) -> Option<String> {
    (start != "/").then(|| semaphore::kazoo_lock_path(start))
}

fn is_curator_lease(name: &str) -> bool {
    semaphore::parse_lease(name).is_some_and(|lease| lease.dialect == Dialect::Curator)
}

/// What a lock directory turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Queue,
    CuratorSemaphore,
    /// Confirmed by its data when read; else its contenders and its internal
    /// lock are reported as plain locks.
    KazooSemaphore,
    /// A leader node of this service, itself the one node read.
    Leader(Dialect),
    /// An empty node, a lock when its data keeps a last run.
    Idle,
}

/// A lock directory found in the listing, and the nodes to read for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Site {
    path: String,
    shape: Shape,
    /// The nodes to read: (directory, names), in the order `build` expects.
    groups: Vec<(String, Vec<String>)>,
    /// Whether a kazoo semaphore's internal lock may be reported as a lock
    /// of its own when the semaphore is not confirmed: not when it lies
    /// outside the walk (beside its start).
    lock_beside_in_scope: bool,
    /// Whether a kazoo semaphore's internal lock directory exists: kazoo
    /// makes it on the first acquire, so a node with a number for data and
    /// hex-named children but no such sibling is some application's cache.
    lock_beside_listed: bool,
    /// What the walk reads of the last run; with [`Runs::Read`] every lock
    /// built says so, found or not.
    runs: Runs,
    /// Whether the directory itself is read first, for the end record in
    /// its data.
    reads_dir: bool,
}

impl Site {
    /// The full paths of the nodes to read, in order.
    pub(crate) fn reads(&self) -> impl Iterator<Item = String> + '_ {
        let dir = self.reads_dir.then(|| self.path.clone());
        dir.into_iter().chain(
            self.groups
                .iter()
                .flat_map(|(dir, names)| names.iter().map(move |name| path::join(dir, name))),
        )
    }

    /// How many nodes [`Site::reads`] yields.
    pub(crate) fn read_count(&self) -> usize {
        let nodes: usize = self.groups.iter().map(|(_, names)| names.len()).sum();
        nodes + usize::from(self.reads_dir)
    }

    /// True when this is the lock at `path`.
    pub(crate) fn is_at(&self, path: &str) -> bool {
        self.path == path
    }

    /// The contenders of a mutex, read-write lock or election, ready to be
    /// read in queue order; the site itself when it is of another shape.
    pub(crate) fn into_queue(self) -> Result<QueueReading, Site> {
        match self.shape {
            Shape::Queue => {
                let names = self.groups.into_iter().flat_map(|(_, names)| names);
                Ok(QueueReading::new(&self.path, names))
            }
            _ => Err(self),
        }
    }

    /// The locks this site holds, from the reads of [`Site::reads`] in order
    /// (`None` for a node that was gone by then).
    pub(crate) fn build(&self, reads: Vec<Option<NodeRead>>, now_ms: i64) -> Vec<Lock> {
        let mut reads = reads.into_iter();
        let record = if self.reads_dir {
            reads
                .next()
                .flatten()
                .and_then(|dir| EndRecord::parse(&dir.data))
        } else {
            None
        };
        let ran = record.as_ref().and_then(|record| record.ran.clone());
        let mut groups: Vec<Reads> = self
            .groups
            .iter()
            .map(|(_, names)| {
                names
                    .iter()
                    .zip(reads.by_ref())
                    .filter_map(|(name, read)| Some((name.clone(), read?)))
                    .collect()
            })
            .collect();
        let mut take = |i: usize| std::mem::take(&mut groups[i]);
        let path = self.path.as_str();
        let locks = match self.shape {
            Shape::Queue => vec![locks::queue_lock(path, take(0), now_ms)],
            Shape::Leader(dialect) => {
                let read = take(0).pop().map(|(_, read)| read);
                vec![locks::leader_lock(path, dialect, read, now_ms)]
            }
            Shape::CuratorSemaphore => {
                vec![locks::curator_semaphore(path, take(0), take(1), now_ms)]
            }
            Shape::KazooSemaphore => {
                let max_leases = take(0)
                    .first()
                    .filter(|_| self.lock_beside_listed)
                    .and_then(|(_, read)| semaphore::kazoo_max_leases(&read.data));
                match max_leases {
                    Some(max) => vec![locks::kazoo_semaphore(path, max, take(1), take(2), now_ms)],
                    None if self.lock_beside_in_scope => vec![
                        locks::queue_lock(path, take(3), now_ms),
                        locks::queue_lock(&semaphore::kazoo_lock_path(path), take(2), now_ms),
                    ],
                    None => vec![locks::queue_lock(path, take(3), now_ms)],
                }
            }
            Shape::Idle => vec![record.and_then(|record| locks::idle_lock(path, record))],
        };
        let mut locks: Vec<Lock> = locks.into_iter().flatten().collect();
        if self.runs == Runs::Read {
            for lock in &mut locks {
                lock.last_run = LastRun::Read(ran.clone());
            }
        }
        locks
    }
}

/// The lock directories in `listing`, in path order (component by
/// component: `/a`, `/a/b`, `/a-b`), and with [`Runs::Read`] the empty nodes
/// that may be idle locks. With [`Depth::Lock`] only `start` itself can be
/// one.
pub(crate) fn find_sites(
    mut listing: ChildrenByDir,
    start: &str,
    depth: Depth,
    runs: Runs,
) -> Vec<Site> {
    let mut dirs: Vec<String> = listing
        .keys()
        .filter(|dir| in_scope(dir, start, depth))
        .cloned()
        .collect();
    // A semaphore sorts before its parts, so it claims them first.
    dirs.sort_by(|a, b| by_components(a, b));
    dirs.into_iter()
        .filter_map(|dir| {
            let children = listing.remove(&dir)?;
            let idle = (runs == Runs::Read && children.is_empty() && may_be_idle(&dir))
                .then(|| dir.clone());
            let lock_beside_in_scope = in_scope(&semaphore::kazoo_lock_path(&dir), start, depth);
            site_of(dir, children, &mut listing, lock_beside_in_scope)
                .or_else(|| idle.map(Site::idle))
                .map(|site| site.reading(runs))
        })
        .collect()
}

/// Whether the empty node at `dir` may be an emptied lock: not the root,
/// whose data takes no record, nor a kazoo semaphore's lease, which is
/// listed (its name is no contender's) but is its semaphore's part.
fn may_be_idle(dir: &str) -> bool {
    dir != "/" && semaphore::parse_lease(path::basename(dir)).is_none()
}

impl Site {
    /// The empty node at `dir`, to be read for an end record.
    fn idle(dir: String) -> Site {
        Site {
            path: dir,
            shape: Shape::Idle,
            groups: Vec::new(),
            lock_beside_in_scope: false,
            lock_beside_listed: false,
            runs: Runs::Skip,
            reads_dir: false,
        }
    }

    /// This site, read as `runs` asks: with [`Runs::Read`] its directory
    /// too when its own contenders' ends are recorded there
    /// ([`directory_for`]; not a semaphore's, an election's or a leader
    /// node's), or when it is an empty node.
    fn reading(self, runs: Runs) -> Site {
        let records_here = |(dir, names): &(String, Vec<String>)| {
            names
                .iter()
                .any(|name| directory_for(&path::join(dir, name)) == Some(self.path.as_str()))
        };
        let reads_dir = runs == Runs::Read
            && match self.shape {
                Shape::Idle => true,
                Shape::Queue => self.groups.iter().any(records_here),
                _ => false,
            };
        Site {
            runs,
            reads_dir,
            ..self
        }
    }
}

fn in_scope(dir: &str, start: &str, depth: Depth) -> bool {
    match depth {
        Depth::Lock => dir == start,
        Depth::Tree => {
            start == "/"
                || dir == start
                || dir
                    .strip_prefix(start)
                    .is_some_and(|rest| rest.starts_with('/'))
        }
    }
}

fn by_components(a: &str, b: &str) -> Ordering {
    a.split('/').cmp(b.split('/'))
}

/// The names among `children` that are not a lock's contenders.
pub(crate) fn not_contenders(children: &[String]) -> Vec<String> {
    children
        .iter()
        .filter(|name| name::parse(name).is_none())
        .cloned()
        .collect()
}

fn contenders(names: &[String]) -> Vec<String> {
    names
        .iter()
        .filter(|name| name::parse(name).is_some())
        .cloned()
        .collect()
}

fn leases(names: &[String], dialect: Dialect) -> Vec<String> {
    names
        .iter()
        .filter(|name| semaphore::parse_lease(name).is_some_and(|l| l.dialect == dialect))
        .cloned()
        .collect()
}

/// The site `dir` is, claiming (removing from `listing`) the parts of a
/// semaphore; `None` when it has no contenders.
fn site_of(
    dir: String,
    children: Vec<String>,
    listing: &mut ChildrenByDir,
    lock_beside_in_scope: bool,
) -> Option<Site> {
    // Ephemeral nodes have no children: a leader node never has any.
    if children.is_empty()
        && let Some(dialect) = leaders::leader_dialect(&dir)
    {
        let parent = path::parent(&dir).unwrap_or("/").to_owned();
        let itself = path::basename(&dir).to_owned();
        return Some(Site {
            groups: vec![(parent, vec![itself])],
            path: dir,
            shape: Shape::Leader(dialect),
            lock_beside_in_scope,
            lock_beside_listed: false,
            runs: Runs::Skip,
            reads_dir: false,
        });
    }
    if children.iter().any(|c| c == CURATOR_LEASES)
        && let Some(lease_names) = listing.remove(&path::join(&dir, CURATOR_LEASES))
    {
        let locks_dir = path::join(&dir, CURATOR_LOCKS);
        let acquirers = listing
            .remove(&locks_dir)
            .map(|names| contenders(&names))
            .unwrap_or_default();
        let leases = leases(&lease_names, Dialect::Curator);
        return (!leases.is_empty() || !acquirers.is_empty()).then(|| Site {
            groups: vec![
                (path::join(&dir, CURATOR_LEASES), leases),
                (locks_dir, acquirers),
            ],
            path: dir,
            shape: Shape::CuratorSemaphore,
            lock_beside_in_scope,
            lock_beside_listed: false,
            runs: Runs::Skip,
            reads_dir: false,
        });
    }
    let kazoo_leases = leases(&children, Dialect::Kazoo);
    let lock_dir = semaphore::kazoo_lock_path(&dir);
    let own = contenders(&children);
    let lock_beside_listed = listing.contains_key(&lock_dir);
    if dir != "/" && (!kazoo_leases.is_empty() || lock_beside_listed) {
        let acquirers = listing
            .remove(&lock_dir)
            .map(|names| contenders(&names))
            .unwrap_or_default();
        if kazoo_leases.is_empty() && acquirers.is_empty() && own.is_empty() {
            return None;
        }
        let parent = path::parent(&dir).unwrap_or("/").to_owned();
        let itself = path::basename(&dir).to_owned();
        return Some(Site {
            groups: vec![
                (parent, vec![itself]),
                (dir.clone(), kazoo_leases),
                (lock_dir, acquirers),
                (dir.clone(), own),
            ],
            path: dir,
            shape: Shape::KazooSemaphore,
            lock_beside_in_scope,
            lock_beside_listed,
            runs: Runs::Skip,
            reads_dir: false,
        });
    }
    (!own.is_empty()).then(|| Site {
        groups: vec![(dir.clone(), own)],
        path: dir,
        shape: Shape::Queue,
        lock_beside_in_scope,
        lock_beside_listed: false,
        runs: Runs::Skip,
        reads_dir: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const UUID: &str = "2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f";
    const HEX: &str = "0123456789abcdef0123456789abcdef";

    fn listing(entries: &[(&str, &[&str])]) -> ChildrenByDir {
        entries
            .iter()
            .map(|(dir, children)| {
                (
                    dir.to_string(),
                    children.iter().map(|c| c.to_string()).collect(),
                )
            })
            .collect()
    }

    fn paths(sites: &[Site]) -> Vec<(&str, Shape)> {
        sites.iter().map(|s| (s.path.as_str(), s.shape)).collect()
    }

    #[test]
    fn lists_every_child_but_contenders_and_leases() {
        let children: Vec<String> = [
            "a",
            "lock-0000000001",
            &format!("_c_{UUID}-lease-0000000001"),
            HEX,
            "leases",
        ]
        .iter()
        .map(|c| c.to_string())
        .collect();
        assert_eq!(
            children_to_list("/l", &children, "/l", Depth::Tree),
            ["/l/a", &format!("/l/{HEX}"), "/l/leases"]
        );
        assert_eq!(
            children_to_list("/l", &children, "/l", Depth::Lock),
            ["/l/leases"]
        );
        assert!(children_to_list("/l/a", &children, "/l", Depth::Lock).is_empty());
        assert_eq!(kazoo_lock_beside("/l").as_deref(), Some("/l-__lock__"));
        assert_eq!(kazoo_lock_beside("/"), None);
    }

    #[test]
    fn finds_locks_in_component_order_and_skips_plain_directories() {
        let lease = format!("_c_{UUID}-lease-0000000001");
        let acquirer = format!("_c_{UUID}-lock-0000000002");
        let sites = find_sites(
            listing(&[
                ("/l", &["a", "a-b", "sem", "plain"]),
                ("/l/a", &["lock-0000000001", "b", "notes"]),
                ("/l/a/b", &["write-0000000002"]),
                ("/l/a-b", &["lock-0000000003"]),
                ("/l/plain", &["config"]),
                ("/l/sem", &["leases", "locks"]),
                ("/l/sem/leases", &[&lease]),
                ("/l/sem/locks", &[&acquirer]),
            ]),
            "/l",
            Depth::Tree,
            Runs::Skip,
        );
        assert_eq!(
            paths(&sites),
            [
                ("/l/a", Shape::Queue),
                ("/l/a/b", Shape::Queue),
                ("/l/a-b", Shape::Queue),
                ("/l/sem", Shape::CuratorSemaphore),
            ]
        );
        assert_eq!(
            sites[3].reads().collect::<Vec<_>>(),
            [
                format!("/l/sem/leases/{lease}"),
                format!("/l/sem/locks/{acquirer}")
            ]
        );
        assert_eq!(sites[0].read_count(), 1);
    }

    #[test]
    fn a_kazoo_semaphore_claims_its_lock_beside_it() {
        let acquirer = format!("{HEX}__lock__0000000000");
        let sites = find_sites(
            listing(&[
                ("/l", &["s", "s-__lock__"]),
                ("/l/s", &[HEX]),
                ("/l/s-__lock__", &[&acquirer]),
            ]),
            "/l",
            Depth::Tree,
            Runs::Skip,
        );
        assert_eq!(paths(&sites), [("/l/s", Shape::KazooSemaphore)]);
        assert_eq!(
            sites[0].reads().collect::<Vec<_>>(),
            [
                "/l/s".to_owned(),
                format!("/l/s/{HEX}"),
                format!("/l/s-__lock__/{acquirer}")
            ]
        );
    }

    #[test]
    fn stat_depth_reports_only_the_start() {
        let sites = find_sites(
            listing(&[
                ("/l/s", &[HEX]),
                ("/l/s-__lock__", &[]),
                ("/l/s/x", &["lock-0000000001"]),
            ]),
            "/l/s",
            Depth::Lock,
            Runs::Skip,
        );
        assert_eq!(paths(&sites), [("/l/s", Shape::KazooSemaphore)]);
    }

    #[test]
    fn the_lock_beside_the_start_is_never_reported_alone() {
        let sites = find_sites(
            listing(&[("/l/x-__lock__", &["lock-0000000001"]), ("/l/x", &[])]),
            "/l/x",
            Depth::Tree,
            Runs::Skip,
        );
        assert_eq!(paths(&sites), [("/l/x", Shape::KazooSemaphore)]);
        let unconfirmed = sites[0].build(vec![read(b"config", 1), read(b"", 2)], 0);
        assert!(unconfirmed.is_empty(), "{unconfirmed:?}");
        let confirmed = sites[0].build(vec![read(b"1", 1), read(b"", 2)], 0);
        assert_eq!(confirmed[0].path, "/l/x");
    }

    fn read(data: &[u8], czxid: i64) -> Option<NodeRead> {
        Some(NodeRead {
            data: data.to_vec(),
            stat: crate::zk::Stat {
                data_length: data.len() as i32,
                ..crate::zk::test_stat(czxid, czxid)
            },
        })
    }

    #[test]
    fn leader_nodes_are_sites_of_their_own_only_when_ephemeral_with_their_record() {
        let sites = find_sites(
            listing(&[
                ("/", &["controller", "hbase", "config"]),
                ("/controller", &[]),
                ("/config", &[]),
                ("/hbase", &["master", "backup-masters"]),
                ("/hbase/master", &[]),
                ("/hbase/backup-masters", &[]),
            ]),
            "/",
            Depth::Tree,
            Runs::Skip,
        );
        assert_eq!(
            paths(&sites),
            [
                ("/controller", Shape::Leader(Dialect::Kafka)),
                ("/hbase/master", Shape::Leader(Dialect::Hbase)),
            ]
        );
        assert_eq!(sites[0].reads().collect::<Vec<_>>(), ["/controller"]);
        let kafka = br#"{"version":1,"brokerid":7,"timestamp":"1"}"#;
        let leader = sites[0].build(vec![read(kafka, 5)], 0);
        assert_eq!(leader[0].kind, locks::LockKind::Leader);
        assert_eq!(leader[0].holders[0].owner_text(), "broker 7");
        let mut persistent = read(kafka, 5);
        persistent.as_mut().unwrap().stat.ephemeral_owner = 0;
        assert!(sites[0].build(vec![persistent], 0).is_empty());
        assert!(sites[0].build(vec![read(b"not json", 5)], 0).is_empty());
        assert!(sites[0].build(vec![None], 0).is_empty());
        let stat_of_one = find_sites(
            listing(&[("/controller", &[])]),
            "/controller",
            Depth::Lock,
            Runs::Skip,
        );
        assert_eq!(
            paths(&stat_of_one),
            [("/controller", Shape::Leader(Dialect::Kafka))]
        );
    }

    #[test]
    fn reading_runs_reads_lock_directories_that_take_a_record_and_empty_nodes() {
        let lock = format!("_c_{UUID}-lock-0000000001");
        let candidate = format!("_c_{UUID}-latch-0000000001");
        let walk = |runs| {
            find_sites(
                listing(&[
                    ("/", &["l"]),
                    ("/l", &["a", "e", "k", "k-__lock__", "idle"]),
                    ("/l/a", &[&lock]),
                    ("/l/e", &[&candidate]),
                    ("/l/k", &[HEX]),
                    (&format!("/l/k/{HEX}"), &[]),
                    ("/l/k-__lock__", &[]),
                    ("/l/idle", &[]),
                ]),
                "/",
                Depth::Tree,
                runs,
            )
        };
        let read: Vec<Vec<String>> = walk(Runs::Read)
            .iter()
            .map(|site| site.reads().collect())
            .collect();
        assert_eq!(
            read,
            [
                vec!["/l/a".to_owned(), format!("/l/a/{lock}")],
                vec![format!("/l/e/{candidate}")],
                vec![format!("/l/idle")],
                vec!["/l/k".to_owned(), format!("/l/k/{HEX}")],
            ]
        );
        let sites = walk(Runs::Skip);
        assert_eq!(
            paths(&sites),
            [
                ("/l/a", Shape::Queue),
                ("/l/e", Shape::Queue),
                ("/l/k", Shape::KazooSemaphore)
            ]
        );
        assert!(sites.iter().all(|site| !site.reads_dir));
    }

    #[test]
    fn an_empty_node_is_a_lock_only_with_a_record_that_keeps_a_run() {
        use crate::lock::end::{EndHow, Ender, Ending, Ran};
        let by = Ender {
            user: "u".into(),
            host: "h".into(),
            pid: 7,
        };
        let ran = Ran {
            at_ms: 5,
            per_ms: 60_000,
            by: by.clone(),
        };
        let ending = Ending::new(EndHow::Released, by);
        let site = find_sites(listing(&[("/l/s", &[])]), "/l/s", Depth::Tree, Runs::Read).remove(0);
        // As a --once-per directory's record is: marked as made persistent.
        let mut kept = ending.record([("/l/s/write-0000000003", 1)], None, None);
        kept.ran = Some(ran.clone());
        kept.made_persistent = true;
        let written = kept.to_bytes();
        let idle = site.build(vec![read(&written, 1)], 0);
        assert_eq!(idle.len(), 1);
        assert_eq!(idle[0].path, "/l/s");
        assert_eq!(idle[0].kind, locks::LockKind::ReadWrite);
        assert_eq!(idle[0].dialect.as_str(), "hbase");
        assert!(idle[0].holders.is_empty() && idle[0].waiters.is_empty());
        assert_eq!(idle[0].last_run, LastRun::Read(Some(ran)));
        let no_run = ending
            .record([("/l/s/lock-0000000003", 1)], None, None)
            .to_bytes();
        for data in [&no_run[..], b"", br#"{"x":1}"#] {
            assert!(site.build(vec![read(data, 1)], 0).is_empty());
        }
        assert!(site.build(vec![None], 0).is_empty());
    }

    #[test]
    fn a_kazoo_semaphore_without_a_number_in_its_data_is_two_plain_locks() {
        let acquirer = format!("{HEX}__lock__0000000000");
        let site = find_sites(
            listing(&[
                ("/l", &["s", "s-__lock__"]),
                ("/l/s", &["lock-0000000001"]),
                ("/l/s-__lock__", &[&acquirer]),
            ]),
            "/l",
            Depth::Tree,
            Runs::Skip,
        )
        .remove(0);
        let not_a_semaphore = site.build(vec![read(b"config", 1), read(b"", 2), read(b"", 3)], 0);
        let found: Vec<(&str, &str)> = not_a_semaphore
            .iter()
            .map(|l| (l.path.as_str(), l.kind.as_str()))
            .collect();
        assert_eq!(found, [("/l/s", "mutex"), ("/l/s-__lock__", "mutex")]);
        let semaphore = site.build(vec![read(b"2", 1), read(b"", 2), None], 0);
        assert_eq!(semaphore.len(), 1);
        assert_eq!(semaphore[0].kind.as_str(), "semaphore");
        assert_eq!(semaphore[0].max_leases, Some(2));
    }
}
