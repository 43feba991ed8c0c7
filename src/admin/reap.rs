//! What `reap` deletes, and deleting it.
//!
//! Reaping removes other clients' nodes on an ensemble other software shares,
//! so it takes only what it can name with certainty: contender nodes that
//! the one model ([`Lock`]) recognises by name and node type, chosen by age
//! or session or a session gone from every member for a while, and empty
//! lock directories. Each is deleted only if it is
//! still the node that was read (same czxid and owner session) at the data
//! version it was read at ([`zk::delete`]); anything else is left alone and
//! reported.
//!
//! An empty node does not say what it once held: Kafka's `/brokers/ids`, an
//! emptied admin queue or a consumed kazoo `Queue` are empty persistent
//! nodes too, and the server shows a container (the type zklock and Curator
//! make lock directories as) to clients just like a persistent node. So the
//! only *empty lock directory* reap deletes is one it proves a lock
//! directory itself: a lock directory whose every contender this reap
//! deletes, with no other child and no data. Containers need no reaping:
//! the server deletes them once their last child is gone. Never `/`,
//! `/zookeeper`, the lock root or anything above it.
//!
//! A session no member lists is not dead: its client may be frozen or cut
//! off and come back before the server expires it, and a Curator or kazoo
//! holder that comes back does not notice that its node is gone. So a
//! contender is chosen for its disconnected session only when every survey
//! over the whole time asked for had every member's own list and the lists
//! covered the ensemble, none listing it, and once more just before the
//! delete ([`ReapPlan::recheck`]); never on a survey that could not tell
//! (such a contender is spared and reported), and never a node without a
//! session.

use std::time::Duration;

use serde::Serialize;

use super::records_into;
use crate::clock;
use crate::lock::end::{self, EndRecord, Ending, directory_for};
use crate::model::{Contender, Depth, Lock, LockKind, Runs, WalkProgress, walk};
use crate::zk::batch::{BATCH, Batcher};
use crate::zk::delete::{self, Deletion, Seen};
use crate::zk::sessions::{Absences, Ask, Connection, Survey, Surveyor};
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
    /// Nodes whose session every member has left unlisted, in every survey,
    /// for at least this long: only nodes with a session.
    pub disconnected_for: Option<Duration>,
}

impl Selector {
    /// True when no selector is given: no contender is picked.
    pub fn is_empty(&self) -> bool {
        !self.all
            && self.older_than.is_none()
            && self.session.is_none()
            && self.disconnected_for.is_none()
    }

    /// Whether `contender` passes the selectors that its node alone
    /// decides; `disconnected_for` also needs the surveys
    /// ([`ReapPlan::watch_sessions`]).
    fn picks(&self, contender: &Contender) -> bool {
        !self.is_empty()
            && self
                .older_than
                .is_none_or(|age| contender.age_ms >= age.as_millis() as i64)
            && self.session.is_none_or(|id| contender.session() == id)
            && (self.disconnected_for.is_none() || contender.session() != 0)
    }
}

/// What a node to reap is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReapRole {
    /// A contender that holds its lock.
    Holder,
    /// A contender that waits.
    Waiter,
    /// An empty lock directory.
    EmptyDirectory,
}

impl ReapRole {
    /// The name used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            ReapRole::Holder => "holder",
            ReapRole::Waiter => "waiter",
            ReapRole::EmptyDirectory => "empty lock directory",
        }
    }
}

/// One node to reap, as it was read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeToReap {
    pub path: String,
    /// The node as it was read: the delete is of that node alone.
    #[serde(skip)]
    pub seen: Seen,
    pub what: ReapRole,
    /// The lock it belongs to (for a directory: itself).
    pub lock: String,
    /// The owner session, `0x...`; null for a directory.
    pub session: Option<String>,
    /// How old the node is (from its ctime).
    pub age_ms: i64,
    /// Who the contender is, as `stat` shows it; null for a directory.
    pub owner: Option<String>,
    /// Whether its session is connected, as the last survey said; null for
    /// a directory or a node without a session.
    pub connection: Option<Connection>,
    /// How long every member has left its session unlisted, across the
    /// surveys this reap made; null unless two have.
    pub absent_ms: Option<i64>,
    /// Whether the end record would go into its lock directory (which
    /// holds nothing or a record); null for a directory, and until
    /// [`ReapPlan::mark_records`].
    pub end_record: Option<bool>,
}

/// Everything a reap would delete under a path: contenders first, in the
/// order they go (per lock, waiters from the back of the queue, then the
/// holders, so no waiter is granted a lock only to lose it), then the
/// empty directories, deepest first.
#[derive(Debug, Default)]
pub struct ReapPlan {
    pub nodes: Vec<NodeToReap>,
    /// Contenders every other selector chose that `--disconnected-for` left
    /// alone, with why: a survey could not tell whether their session was
    /// connected, or, at the last look, it was connected again. (Those
    /// whose session was found connected while they were watched are
    /// simply not chosen.)
    pub spared: Vec<Skipped>,
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
    /// Nodes left alone: changed, made again under the same name, or with
    /// children.
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
    let mut nodes = Vec::new();
    // Lock directories this reap empties, with the contenders it deletes.
    let mut emptied = Vec::new();
    let walked = walk(session, start, Depth::Tree, Runs::Skip, progress, |lock| {
        let before = nodes.len();
        nodes.extend(contenders_to_reap(&lock, selector));
        let picked = nodes.len() - before;
        let contenders = lock.holders.len() + lock.waiters.len();
        if empty
            && lock.kind != LockKind::Semaphore
            && picked == contenders
            && path::is_at_or_below(&lock.path, start)
            && may_reap_directory(&lock.path, root)
        {
            emptied.push(Emptied {
                dir: lock.path,
                contenders,
            });
        }
        Ok(())
    })
    .await?;
    emptied.sort_by(|a, b| b.dir.split('/').cmp(a.dir.split('/')));
    nodes.extend(empty_directories(session, emptied).await?);
    Ok(ReapPlan {
        nodes,
        spared: Vec::new(),
        walked,
    })
}

/// The contenders of `lock` that `selector` picks, in the order to delete
/// them; never a candidate of an election or a leader node: see
/// [`LockKind::may_be_broken`].
fn contenders_to_reap(lock: &Lock, selector: Selector) -> impl Iterator<Item = NodeToReap> + '_ {
    let selector = Some(selector).filter(|_| lock.kind.may_be_broken());
    lock.standings()
        .rev()
        .filter(move |(contender, _)| selector.is_some_and(|s| s.picks(contender)))
        .map(|(contender, holds)| node_to_reap(&lock.path, contender, holds))
}

/// A contender of the lock at `lock` to reap, as it was read (`holds`:
/// whether it holds): the delete is of that incarnation alone.
pub(crate) fn node_to_reap(lock: &str, contender: &Contender, holds: bool) -> NodeToReap {
    NodeToReap {
        path: contender.path.clone(),
        seen: Seen::new(&contender.path, &contender.stat),
        what: if holds {
            ReapRole::Holder
        } else {
            ReapRole::Waiter
        },
        lock: lock.to_owned(),
        session: Some(zk::format_session(contender.session())),
        age_ms: contender.age_ms,
        owner: Some(contender.owner_text()),
        connection: None,
        absent_ms: None,
        end_record: None,
    }
}

impl NodeToReap {
    /// The owner session of a contender; `None` for a directory or a node
    /// without a session.
    fn owner_session(&self) -> Option<i64> {
        (self.what != ReapRole::EmptyDirectory && self.seen.owner != 0).then_some(self.seen.owner)
    }
}

/// How often the members are asked again while sessions are watched: a
/// quarter of the time asked for, within bounds, so that a session that
/// comes back for a moment is likely seen.
fn resurvey_interval(wanted: Duration) -> Duration {
    (wanted / 4).clamp(Duration::from_millis(500), Duration::from_secs(10))
}

impl ReapPlan {
    /// Marks each contender with whether its session is connected, as
    /// `survey` says, and how long it has been gone, as `absences` say.
    pub fn mark(&mut self, survey: &Survey, absences: &Absences) {
        for node in &mut self.nodes {
            if let Some(session) = node.owner_session() {
                node.connection = Some(survey.connection(session));
                node.absent_ms = absences
                    .absent_for(session)
                    .map(|absent| absent.as_millis() as i64);
            }
        }
    }

    /// For `--disconnected-for`: keeps the contenders whose session every
    /// member leaves unlisted in `first` and in every survey after it until
    /// `wanted` has passed (two surveys at least), and the directories
    /// still emptied; spares each that a survey could not tell about.
    /// `waited` hears how long the watch has gone on, and how many sessions
    /// are still watched.
    pub async fn watch_sessions(
        &mut self,
        surveyor: &Surveyor,
        (first, absences): (&Survey, &mut Absences),
        wanted: Duration,
        mut waited: impl FnMut(Duration, usize),
    ) -> Survey {
        let started = tokio::time::Instant::now();
        self.take_in(
            first,
            absences,
            |absences, session| absences.is_absent(session),
            false,
        );
        let interval = resurvey_interval(wanted);
        let mut last = first.clone();
        loop {
            let sessions = self.sessions().count();
            if sessions == 0 {
                return last;
            }
            let done = self
                .sessions()
                .all(|session| absences.absent_for(session).is_some_and(|a| a >= wanted));
            if done {
                return last;
            }
            waited(started.elapsed(), sessions);
            tokio::time::sleep(interval).await;
            last = surveyor.survey(Ask::Connections).await;
            self.take_in(
                &last,
                absences,
                |absences, session| absences.is_absent(session),
                false,
            );
        }
    }

    /// For `--disconnected-for`, just before the delete: asks the members
    /// once more and spares every contender whose session is listed again,
    /// or whose listing is unknown, and drops each directory that would not
    /// be emptied any more.
    pub async fn recheck(
        &mut self,
        surveyor: &Surveyor,
        absences: &mut Absences,
        wanted: Duration,
    ) {
        let survey = surveyor.survey(Ask::Connections).await;
        let gone = |absences: &Absences, session| {
            absences.absent_for(session).is_some_and(|a| a >= wanted)
        };
        self.take_in(&survey, absences, gone, true);
        self.mark(&survey, absences);
    }

    /// Takes in `survey` for `--disconnected-for`: keeps the contenders
    /// whose session `stays`, by `absences` with this survey counted, and
    /// the directories still emptied. Of those taken out, one the survey
    /// could not tell about is spared with why, and at the `last_look` one
    /// whose session is connected again too; one found connected before
    /// that is simply not chosen.
    fn take_in(
        &mut self,
        survey: &Survey,
        absences: &mut Absences,
        stays: impl Fn(&Absences, i64) -> bool,
        last_look: bool,
    ) {
        absences.record(survey, self.sessions());
        let absences = &*absences;
        for node in self.keep(|session| stays(absences, session)) {
            let Some(session) = node.owner_session() else {
                continue;
            };
            let reason = match survey.connection(session) {
                Connection::Unknown => format!(
                    "whether its session is connected is unknown ({})",
                    survey.doubts().unwrap_or_default()
                ),
                Connection::Connected if last_look => "its session is connected again".to_owned(),
                _ => continue,
            };
            self.spared.push(Skipped {
                path: node.path,
                reason,
            });
        }
    }

    /// Marks each contender with whether the end record would go into its
    /// directory as it is now (for `--dry-run` and the prompt): not into
    /// one this reap deletes, nor over an application's data.
    pub async fn mark_records(&mut self, session: &Session) -> Result<(), zk::Error> {
        let (dirs, contenders) = self.split();
        let seen: Vec<Seen> = contenders.iter().map(|node| node.seen.clone()).collect();
        let spared = |dir: &str| dirs.iter().any(|reaped| reaped.path == dir);
        let into = records_into(session, &seen, spared).await?;
        for node in &mut self.nodes {
            if node.what != ReapRole::EmptyDirectory {
                let dir = directory_for(&node.path);
                node.end_record = Some(
                    into.iter()
                        .any(|into| Some(into.dir.as_str()) == dir && into.end_record),
                );
            }
        }
        Ok(())
    }

    /// The empty directories and the contenders, apart.
    fn split(&self) -> (Vec<&NodeToReap>, Vec<&NodeToReap>) {
        split(&self.nodes)
    }

    /// The owner sessions of the contenders.
    fn sessions(&self) -> impl Iterator<Item = i64> + '_ {
        self.nodes.iter().filter_map(NodeToReap::owner_session)
    }

    /// Keeps the contenders whose session `stays` says, and the directories
    /// of which no contender was taken out; returns the contenders taken
    /// out.
    fn keep(&mut self, stays: impl Fn(i64) -> bool) -> Vec<NodeToReap> {
        let (kept, out): (Vec<NodeToReap>, Vec<NodeToReap>) = std::mem::take(&mut self.nodes)
            .into_iter()
            .partition(|node| node.owner_session().is_none_or(&stays));
        self.nodes = kept;
        self.nodes.retain(|node| {
            node.what != ReapRole::EmptyDirectory || !out.iter().any(|gone| gone.lock == node.path)
        });
        out
    }
}

/// A lock directory whose every contender this reap deletes.
struct Emptied {
    dir: String,
    /// The children it has now: the contenders this reap deletes.
    contenders: usize,
}

/// The directories this reap empties that will be empty lock directories
/// by their stat, read in batches.
async fn empty_directories(
    session: &Session,
    emptied: Vec<Emptied>,
) -> Result<Vec<NodeToReap>, zk::Error> {
    let batcher = Batcher::new(session);
    let now = clock::now_ms();
    let mut found = Vec::new();
    for chunk in emptied.chunks(BATCH) {
        let paths: Vec<String> = chunk.iter().map(|e| e.dir.clone()).collect();
        for (emptied, read) in chunk.iter().zip(batcher.read(&paths).await?) {
            let (data, stat) = match read {
                Ok(read) => read,
                Err(err) if err.is_no_node() => continue,
                Err(err) => return Err(err),
            };
            if is_left_empty(&data, &stat, emptied.contenders) {
                let dir = &emptied.dir;
                found.push(NodeToReap {
                    path: dir.clone(),
                    seen: Seen::new(dir, &stat),
                    what: ReapRole::EmptyDirectory,
                    lock: dir.clone(),
                    session: None,
                    age_ms: now.saturating_sub(stat.ctime),
                    owner: None,
                    connection: None,
                    absent_ms: None,
                    end_record: None,
                });
            }
        }
    }
    Ok(found)
}

/// No data but an end record, and no children but the `contenders` being
/// reaped.
fn is_left_empty(data: &[u8], stat: &zk::Stat, contenders: usize) -> bool {
    (data.is_empty() || EndRecord::parse(data).is_some())
        && stat.num_children as usize == contenders
}

/// Never `/`, ZooKeeper's own `/zookeeper`, the lock root or its ancestors.
fn may_reap_directory(dir: &str, root: &str) -> bool {
    !path::is_reserved(dir) && !path::is_at_or_below(root, dir)
}

/// The empty directories and the contenders of `nodes`, apart.
fn split(nodes: &[NodeToReap]) -> (Vec<&NodeToReap>, Vec<&NodeToReap>) {
    nodes
        .iter()
        .partition(|node| node.what == ReapRole::EmptyDirectory)
}

/// Deletes the planned nodes, each only if it is still the node read, at
/// the version it was read at: contenders first, then directories (a
/// directory's delete is sent after its contenders' deletes are answered).
/// `progress` hears how many are done. A node that changed, was made again,
/// has children or is gone is not deleted. A reap that stops on an error
/// still says what it did before: the error comes with the outcomes so far.
///
/// Each contender's directory takes the end record of `ending` over what it
/// holds (its last `--once-per` run kept), where it holds nothing or a
/// record, unless this reap deletes that directory too: a record would
/// change the version it is deleted at. A deleted directory is no hold and
/// has none.
pub async fn execute(
    session: &Session,
    nodes: &[NodeToReap],
    ending: &Ending,
    mut progress: impl FnMut(usize),
) -> (Reaped, Result<(), zk::Error>) {
    let mut reaped = Reaped::default();
    let mut done = 0;
    let (dirs, contenders) = split(nodes);
    let seen: Vec<Seen> = contenders.iter().map(|node| node.seen.clone()).collect();
    let spared = |dir: &str| dirs.iter().any(|reaped| reaped.path == dir);
    let result = end::delete_recording(session, seen, ending, &spared, |node, deletion| {
        reaped.record(node, deletion, false);
        done += 1;
        progress(done);
    })
    .await;
    if result.is_err() {
        return (reaped, result);
    }
    let seen = dirs.iter().map(|node| node.seen.clone());
    let result = delete::delete_seen(session, seen, &delete::no_records, |node, deletion| {
        reaped.record(node, deletion, true);
        done += 1;
        progress(done);
    })
    .await;
    (reaped, result)
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
    use crate::lock::end::{EndHow, Ender};

    fn stat(data_length: i32, num_children: i32, cversion: i32, owner: i64) -> zk::Stat {
        zk::Stat {
            cversion,
            data_length,
            num_children,
            ..zk::test_stat(1, owner)
        }
    }

    #[test]
    fn a_directory_is_left_empty_with_no_data_and_no_other_child() {
        assert!(is_left_empty(b"", &stat(0, 2, 6, 0), 2));
        // Data: a kazoo semaphore's maximum, a config node.
        assert!(!is_left_empty(b"3", &stat(1, 2, 4, 0), 2));
        // A child other than the contenders reaped.
        assert!(!is_left_empty(b"", &stat(0, 3, 6, 0), 2));
        // The record of how its last contender went is no data of its own.
        let record = Ending::new(EndHow::Released, Ender::of_this_process())
            .record([("/l/lock-0000000001", 1)], None, None)
            .to_bytes();
        assert!(is_left_empty(&record, &stat(1, 2, 6, 0), 2));
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
            ..Default::default()
        };
        assert!(both.picks(&contender));
        assert!(
            !Selector {
                session: Some(0x43),
                ..both
            }
            .picks(&contender)
        );
        let gone = Selector {
            disconnected_for: minute,
            ..both
        };
        assert!(gone.picks(&contender), "the surveys decide the rest");
        contender.stat.ephemeral_owner = 0;
        assert!(
            !Selector {
                session: None,
                ..gone
            }
            .picks(&contender),
            "a node without a session is never chosen for its absence"
        );
    }
}
