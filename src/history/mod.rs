//! Lock history rebuilt offline from a ZooKeeper server's own transaction
//! logs: every contender of every lock, when it began to hold, and how it
//! ended.
//!
//! The server logs, in zxid order and stamped with the leader's clock,
//! every create with its data (zklock's owner record, Curator's and kazoo's
//! identifiers), every delete with the session that made it, and every
//! session's close, telling the server's own (an expiry) from a client's by
//! the request number. That is everything a lock's history needs, long
//! after the nodes are gone. `txnlog` reads the records, `replay` runs them
//! through the queue rules `lock` and `stat` use, and `stats` summarises
//! each lock. The reading streams: one record at a time, the live
//! contenders and one histogram per lock, whatever the size of the logs.

mod ends;
mod jute;
mod kept;
mod overlap;
mod replay;
mod sets;
mod snapshot;
mod stats;
mod txnlog;

use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

pub(crate) use kept::Who;
pub(crate) use overlap::{Holder, Overlap};
pub(crate) use replay::{Found, Hold, How, Scope, Window};
pub(crate) use stats::{Durations, LockSummary};

use replay::Replay;
use snapshot::{SnapError, SnapProblem, Snapshot};
use txnlog::{Problem, RecordError, TxnLog};

/// Where the transaction logs are.
#[derive(Clone, Debug)]
pub enum Source {
    /// A server's `dataDir`, or the `version-2` directory in it.
    DataDir(PathBuf),
    /// Log files named one by one.
    Logs(Vec<PathBuf>),
}

/// A log that could not be read, or not to its end.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LogError {
    #[error("{}: {}", .0.display(), .1)]
    Record(PathBuf, RecordError),
    #[error("{}: {}", .0.display(), .1)]
    Unreadable(PathBuf, io::Error),
    #[error("{}: {}", .0.display(), .1)]
    Snapshot(PathBuf, SnapError),
    #[error("no transaction logs (log.*) in {}", .0.display())]
    NoLogs(PathBuf),
}

impl LogError {
    /// True when a record itself is damaged (cut off, or failing its
    /// checksum), not the file unreadable.
    pub(crate) fn is_damage(&self) -> bool {
        match self {
            LogError::Record(_, err) => !matches!(err.problem, Problem::Io(_)),
            LogError::Snapshot(_, err) => !matches!(err.problem, SnapProblem::Io(_)),
            LogError::Unreadable(..) | LogError::NoLogs(_) => false,
        }
    }

    /// True when the trouble is with the snapshot the replay starts from.
    pub(crate) fn in_snapshot(&self) -> bool {
        matches!(self, LogError::Snapshot(..))
    }
}

/// What a replay reads: the snapshot it starts from, if any, then the
/// transaction logs after it, in zxid order.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// The snapshot and the zxid its name says it was taken at.
    pub snapshot: Option<(PathBuf, i64)>,
    pub logs: Vec<PathBuf>,
}

impl Plan {
    /// Every file the replay reads, the snapshot first.
    pub(crate) fn files(&self) -> impl Iterator<Item = &Path> {
        let snapshot = self.snapshot.iter().map(|(file, _)| file.as_path());
        snapshot.chain(self.logs.iter().map(PathBuf::as_path))
    }
}

/// What to read of `source` for holds alive from `since_ms` on: log files
/// named one by one are read whole, in the order their names say; a data
/// directory's are read from its newest snapshot taken at or before
/// `since_ms` (with no `since_ms`, its oldest that the logs go on from),
/// and the logs from the one that holds the transaction after it.
pub(crate) fn plan(source: &Source, since_ms: Option<i64>) -> Result<Plan, LogError> {
    let dir = match source {
        Source::Logs(files) => {
            let mut logs = files.clone();
            logs.sort_by_key(|file| first_zxid(file));
            return Ok(Plan {
                snapshot: None,
                logs,
            });
        }
        Source::DataDir(dir) => dir,
    };
    let (dir, logs, snapshots) = files_in(dir)?;
    let starts = starts(&logs);
    let snapshot = pick_snapshot(&snapshots, &starts, since_ms);
    if logs.is_empty() && snapshot.is_none() {
        return Err(LogError::NoLogs(dir));
    }
    // Logs whose every transaction the snapshot already holds are left out:
    // those followed by one that starts at or before the transaction after it.
    let after = snapshot.as_ref().map_or(i64::MIN, |(_, zxid)| *zxid);
    let logs = starts
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            starts
                .get(i + 1)
                .is_none_or(|(next, _)| *next > after.saturating_add(1))
        })
        .map(|(_, (_, file))| file.to_path_buf())
        .collect();
    Ok(Plan { snapshot, logs })
}

/// The zxid each log starts at, with the log.
fn starts(logs: &[PathBuf]) -> Vec<(i64, &Path)> {
    logs.iter()
        .filter_map(|file| Some((first_zxid(file)? as i64, file.as_path())))
        .collect()
}

/// The snapshot to start from, of `snapshots` (zxid order): the newest
/// taken at or before `since_ms` when there is one, else the oldest; only
/// those that the logs go on from without a gap.
fn pick_snapshot(
    snapshots: &[SnapshotFile],
    logs: &[(i64, &Path)],
    since_ms: Option<i64>,
) -> Option<(PathBuf, i64)> {
    let continued = |zxid: i64| logs.first().is_some_and(|(start, _)| *start <= zxid + 1);
    let usable: Vec<&SnapshotFile> = snapshots
        .iter()
        .filter(|(zxid, _)| continued(*zxid))
        .collect();
    let by_since = since_ms.and_then(|since| {
        usable.iter().rev().find(|(zxid, _)| {
            // The first transaction logged after the snapshot's zxid came
            // no earlier than the snapshot.
            logs.iter()
                .find(|(start, _)| start > zxid)
                .and_then(|(_, file)| first_time(file))
                .is_some_and(|time| time <= since)
        })
    });
    by_since
        .or(usable.first())
        .map(|(zxid, file)| (file.clone(), *zxid))
}

/// The time of a log's first transaction.
fn first_time(file: &Path) -> Option<i64> {
    let input = BufReader::new(File::open(file).ok()?);
    let mut log = TxnLog::open(input).ok()?;
    let txn = log.next_txn().ok()??;
    Some(txn.time_ms)
}

/// A snapshot's zxid and file.
type SnapshotFile = (i64, PathBuf);

/// The log files of a data directory (in `version-2` when it has one) and
/// its snapshots, by zxid; with the directory they are in.
fn files_in(dir: &Path) -> Result<(PathBuf, Vec<PathBuf>, Vec<SnapshotFile>), LogError> {
    let nested = dir.join("version-2");
    let dir = if nested.is_dir() {
        nested
    } else {
        dir.to_owned()
    };
    let entries = std::fs::read_dir(&dir).map_err(|err| LogError::Unreadable(dir.clone(), err))?;
    let (mut logs, mut snapshots) = (Vec::new(), Vec::new());
    for entry in entries {
        let file = entry
            .map_err(|err| LogError::Unreadable(dir.clone(), err))?
            .path();
        if first_zxid(&file).is_some() {
            logs.push(file);
        } else if let Some((zxid, _)) = snapshot::snapshot_name(&file) {
            snapshots.push((zxid as i64, file));
        }
    }
    logs.sort_by_key(|file| first_zxid(file));
    snapshots.sort();
    Ok((dir, logs, snapshots))
}

/// The zxid a log's name says it starts at (`log.1a2b`).
fn first_zxid(file: &Path) -> Option<u64> {
    let name = file.file_name()?.to_str()?;
    u64::from_str_radix(name.strip_prefix("log.")?, 16).ok()
}

/// What a replay found besides the contenders it handed out.
#[derive(Debug)]
pub(crate) struct Replayed {
    /// Each lock's summary, by path.
    pub summaries: Vec<(String, LockSummary)>,
    /// Where the reading stopped early: a damaged record, or a file that
    /// could not be read. Everything before it was replayed.
    pub stopped: Option<LogError>,
}

/// How far a replay has come: bytes read of all the files.
pub(crate) type Progress<'a> = &'a mut dyn FnMut(u64);

/// Replays `plan`: the snapshot's contenders, then the logs in order.
/// Each contender of the locks in `scope` alive within `window` goes to
/// `emit` as it ends, and those alive where the logs end (or `window` does)
/// last; so does each overlap when `overlaps` asks for them; `progress`
/// hears the bytes read. A snapshot that cannot be read stops the replay
/// before anything is handed out: without the state it gives, the logs'
/// holds would be wrong.
pub(crate) fn replay(
    plan: &Plan,
    scope: Scope,
    window: Window,
    overlaps: bool,
    progress: Progress<'_>,
    emit: &mut impl FnMut(Found),
) -> Replayed {
    let mut replay = Replay::new(scope, window, overlaps);
    let mut before = 0;
    if let Some((file, zxid)) = &plan.snapshot {
        match seed(file, *zxid, &mut replay, progress) {
            Ok(size) => before = size,
            Err(err) => {
                return Replayed {
                    summaries: Vec::new(),
                    stopped: Some(err),
                };
            }
        }
    }
    let mut stopped = None;
    for file in &plan.logs {
        let offset = before;
        let mut within = |at: u64| progress(offset + at);
        match replay_file(file, &mut replay, window, &mut within, emit) {
            Ok(Flow::Next(size)) => before += size,
            Ok(Flow::PastWindow) => break,
            Err(err) => {
                stopped = Some(err);
                break;
            }
        }
    }
    Replayed {
        summaries: replay.finish(emit),
        stopped,
    }
}

/// Seeds `replay` with the contenders of the snapshot `file`, taken at
/// `zxid`; the bytes it read.
fn seed(
    file: &Path,
    zxid: i64,
    replay: &mut Replay,
    progress: Progress<'_>,
) -> Result<u64, LogError> {
    let damaged = |err| LogError::Snapshot(file.to_owned(), err);
    let mut snapshot = Snapshot::open(file).map_err(damaged)?;
    let mut told = 0;
    while let Some(node) = snapshot.next_node().map_err(damaged)? {
        replay.seed(node.path, node.data, &node.stat);
        let read = snapshot.file_offset();
        if read - told >= PROGRESS_STEP {
            told = read;
            progress(told);
        }
    }
    replay.seeded(zxid);
    let read = snapshot.file_offset();
    progress(read);
    Ok(read)
}

/// Where one file's replay left off.
enum Flow {
    /// On to the next file, this one's size read.
    Next(u64),
    /// A transaction came after the window: no more are needed.
    PastWindow,
}

/// How often progress is told, in bytes.
const PROGRESS_STEP: u64 = 1 << 20;

fn replay_file(
    file: &Path,
    replay: &mut Replay,
    window: Window,
    progress: &mut impl FnMut(u64),
    emit: &mut impl FnMut(Found),
) -> Result<Flow, LogError> {
    let unreadable = |err| LogError::Unreadable(file.to_owned(), err);
    let size = std::fs::metadata(file).map_err(unreadable)?.len();
    let input = BufReader::with_capacity(1 << 18, File::open(file).map_err(unreadable)?);
    let damaged = |err| LogError::Record(file.to_owned(), err);
    let mut log = TxnLog::open(input).map_err(damaged)?;
    let mut told = 0;
    while let Some(txn) = log.next_txn().map_err(damaged)? {
        if window.is_past(txn.time_ms) {
            return Ok(Flow::PastWindow);
        }
        replay.apply(&txn, emit);
        if log.offset() - told >= PROGRESS_STEP {
            told = log.offset();
            progress(told);
        }
    }
    progress(size);
    Ok(Flow::Next(size))
}
