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
    /// Where the server's own logs lack transactions it applied, so that
    /// the replay starts at the snapshot after them.
    pub gap: Option<Gap>,
}

/// Transactions a server applied without logging them: brought up to date
/// by a snapshot its leader sent (or by a truncation of its log), it logs
/// only what came after. Its logs cannot be replayed across them; the
/// replay starts from the snapshot it saved there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Gap {
    /// The last transaction logged before it, when known.
    pub logged_until: Option<i64>,
    /// The snapshot saved after it: the replay's start.
    pub snapshot: i64,
}

impl Plan {
    /// Every file the replay reads, the snapshot first.
    pub(crate) fn files(&self) -> impl Iterator<Item = &Path> {
        let snapshot = self.snapshot.iter().map(|(file, _)| file.as_path());
        snapshot.chain(self.logs.iter().map(PathBuf::as_path))
    }
}

/// What to read of `source` for holds alive from `since_ms` on: log files
/// named one by one are read whole, in the order their names say. A data
/// directory is read as its server restores itself, from a snapshot and
/// the logs from the one that holds the transaction after it, but from the
/// oldest snapshot its logs go on from without a gap (or with `since_ms`,
/// the newest taken at or before it): see [`start`].
pub(crate) fn plan(source: &Source, since_ms: Option<i64>) -> Result<Plan, LogError> {
    let dir = match source {
        Source::Logs(files) => {
            let mut logs = files.clone();
            logs.sort_by_key(|file| first_zxid(file));
            return Ok(Plan {
                logs,
                ..Plan::default()
            });
        }
        Source::DataDir(dir) => dir,
    };
    let (dir, logs, snapshots) = files_in(dir)?;
    let starts = starts(&logs);
    let zxids: Vec<i64> = snapshots.iter().map(|(zxid, _)| *zxid).collect();
    let log_zxids: Vec<i64> = starts.iter().map(|(start, _)| *start).collect();
    let file_of = |zxid: i64| snapshots.iter().find(|(z, _)| *z == zxid).map(|(_, f)| f);
    // The transaction after a snapshot came no later than --since.
    let before_since = |zxid: i64| {
        since_ms.is_some_and(|since| {
            starts
                .iter()
                .find(|(start, _)| *start > zxid)
                .and_then(|(_, file)| first_time(file))
                .is_some_and(|time| time <= since)
        })
    };
    let start = start(
        &zxids,
        &log_zxids,
        &mut |zxid| reached(&starts, zxid),
        &before_since,
    );
    let snapshot = start
        .snapshot
        .and_then(|zxid| Some((file_of(zxid)?.clone(), zxid)));
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
    Ok(Plan {
        snapshot,
        logs,
        gap: start.gap,
    })
}

/// The zxid each log starts at, with the log.
fn starts(logs: &[PathBuf]) -> Vec<(i64, &Path)> {
    logs.iter()
        .filter_map(|file| Some((first_zxid(file)? as i64, file.as_path())))
        .collect()
}

/// Where a replay starts: the snapshot, and the gap that kept it from
/// starting earlier.
#[derive(Debug, Default, PartialEq, Eq)]
struct Start {
    snapshot: Option<i64>,
    gap: Option<Gap>,
}

/// How the logs stand to a snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reach {
    /// They hold its transaction, or go on without a gap after it.
    Continued,
    /// They lack transactions up to it, the last logged before it being
    /// `logged_until` (when known).
    Lacking { logged_until: Option<i64> },
}

/// The snapshot to start from, of `snapshots` (their zxids, oldest first),
/// given the zxids the logs start at (`logs`, oldest first), how the logs
/// `reach` a snapshot that a log began before, and whether the transaction
/// after a zxid came no later than `--since` (`since_ok`; false for all
/// without it).
///
/// This is how the server itself picks (the newest snapshot, and the logs
/// from the one that holds the transaction after it), taken back to the
/// oldest snapshot from which the logs go on to their end without a gap. A
/// snapshot's name is the last transaction it applied, so its logs hold
/// that transaction, unless the server applied it without logging it: a
/// snapshot its leader sent (or a truncated log), saved at once. Its logs
/// before then cannot be replayed into what came after, so nothing starts
/// before the newest such snapshot, and the replay starts there at the
/// earliest. A snapshot before every log is continued by the first log
/// when that log holds the very next transaction: one after it, or the
/// first of a later epoch after a snapshot at an epoch's start (`snapshot.0`
/// before `log.100000001`, where a member's first epoch begins).
fn start(
    snapshots: &[i64],
    logs: &[i64],
    reach: &mut impl FnMut(i64) -> Reach,
    since_ok: &dyn Fn(i64) -> bool,
) -> Start {
    let first_log = logs.first().copied();
    let mut usable = Vec::new();
    let mut gap = None;
    for &zxid in snapshots.iter().rev() {
        let continued = match first_log {
            None => true,
            Some(first) if first > zxid => first_after(zxid, first),
            Some(first) if first == zxid => true,
            Some(_) => match reach(zxid) {
                Reach::Continued => true,
                Reach::Lacking { logged_until } => {
                    usable.push(zxid);
                    gap = Some(Gap {
                        logged_until,
                        snapshot: zxid,
                    });
                    break;
                }
            },
        };
        if continued {
            usable.push(zxid);
        }
    }
    let snapshot = usable
        .iter()
        .find(|&&zxid| since_ok(zxid))
        .or(usable.last())
        .copied();
    Start { snapshot, gap }
}

/// True when `first`, the first transaction logged, comes right after a
/// snapshot at `zxid`: the next zxid, or the first of a later epoch (the
/// next a server logs after an epoch ends; `snapshot.0` before
/// `log.100000001`, where an ensemble's first epoch begins).
fn first_after(zxid: i64, first: i64) -> bool {
    first == zxid.saturating_add(1) || (first >> 32 > zxid >> 32 && first & 0xffff_ffff == 1)
}

/// How the logs (`starts`, oldest first) reach the snapshot at `zxid`: they
/// hold its transaction, or they lack it. A snapshot at an epoch's start
/// names no transaction, so the logs never hold it: a server saves one only
/// when its leader sends it, before the epoch's first transaction. A log
/// that cannot be read to there counts as reaching it: its damage is
/// reported when it is replayed.
fn reached(starts: &[(i64, &Path)], zxid: i64) -> Reach {
    let Some((_, log)) = starts.iter().rev().find(|(start, _)| *start <= zxid) else {
        return Reach::Continued;
    };
    match logged_around(log, zxid) {
        Some(Around {
            found: false,
            before,
        }) => Reach::Lacking {
            logged_until: before,
        },
        _ => Reach::Continued,
    }
}

/// What a log holds around a zxid.
struct Around {
    /// The zxid itself.
    found: bool,
    /// The last transaction before it.
    before: Option<i64>,
}

/// Reads `log` up to `zxid`; `None` when it cannot be read that far.
fn logged_around(log: &Path, zxid: i64) -> Option<Around> {
    let mut log = TxnLog::open(BufReader::with_capacity(1 << 18, File::open(log).ok()?)).ok()?;
    let mut before = None;
    while let Some(logged) = log.next_zxid().ok()? {
        if logged >= zxid {
            return Some(Around {
                found: logged == zxid,
                before,
            });
        }
        before = Some(logged);
    }
    Some(Around {
        found: false,
        before,
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::snapshot::tests::write_snapshot;
    use crate::history::txnlog::tests::LogWriter;

    const EPOCH1: i64 = 0x1_0000_0000;
    const EPOCH2: i64 = 0x2_0000_0000;

    /// [`start`] over these names, the logs reaching each snapshot in
    /// `lacking` only up to the zxid given, and `--since` after the
    /// snapshots in `before_since`.
    fn started(
        snapshots: &[i64],
        logs: &[i64],
        lacking: &[(i64, i64)],
        before_since: &[i64],
    ) -> Start {
        let mut reach = |zxid: i64| match lacking.iter().find(|(at, _)| *at == zxid) {
            Some((_, until)) => Reach::Lacking {
                logged_until: Some(*until),
            },
            None => Reach::Continued,
        };
        start(snapshots, logs, &mut reach, &|zxid| {
            before_since.contains(&zxid)
        })
    }

    fn from(snapshot: i64) -> Start {
        Start {
            snapshot: Some(snapshot),
            gap: None,
        }
    }

    #[test]
    fn a_members_first_snapshot_before_its_first_epochs_log_is_where_it_starts() {
        // snapshot.0, then epoch 1 from log.100000001: the logs go on from
        // it, so every hold since the first is read, not only those after
        // the later snapshots.
        let snapshots = [0, EPOCH1 + 0x50, EPOCH1 + 0xa0];
        let logs = [EPOCH1 + 1, EPOCH1 + 0x51, EPOCH1 + 0xa1];
        assert_eq!(started(&snapshots, &logs, &[], &[]), from(0));
        // With --since, the newest taken before it.
        let since = [0, EPOCH1 + 0x50];
        assert_eq!(started(&snapshots, &logs, &[], &since), from(EPOCH1 + 0x50));
        // The next transaction after a snapshot before every log, or the
        // first of a later epoch after one at an epoch's start.
        assert!(first_after(0, EPOCH1 + 1));
        assert!(first_after(EPOCH2, EPOCH2 + 1));
        assert!(first_after(EPOCH1, 0x3_0000_0001));
        assert!(first_after(EPOCH1 + 0x50, EPOCH1 + 0x51));
        assert!(first_after(EPOCH1 + 0x50, EPOCH2 + 1));
        assert!(!first_after(EPOCH1 + 0x50, EPOCH1 + 0x52));
        assert!(!first_after(0, EPOCH1 + 2));
        // A snapshot the first log does not go on from is no start: the
        // logs alone are read.
        let purged = started(&[EPOCH1 + 0x50], &[EPOCH1 + 0x60], &[], &[]);
        assert_eq!(purged, Start::default());
    }

    #[test]
    fn a_snapshot_at_an_epochs_start_is_a_start_unless_the_logs_lack_what_it_has() {
        let logs = [EPOCH1 + 1, EPOCH2 + 1];
        let snapshots = [0, EPOCH2];
        assert_eq!(started(&snapshots, &logs, &[], &[]), from(0));
        let lacking = started(&snapshots, &logs, &[(EPOCH2, EPOCH1 + 0x30)], &[]);
        assert_eq!(
            lacking,
            Start {
                snapshot: Some(EPOCH2),
                gap: Some(Gap {
                    logged_until: Some(EPOCH1 + 0x30),
                    snapshot: EPOCH2
                })
            }
        );
    }

    #[test]
    fn a_member_brought_up_to_date_by_its_leaders_snapshot_starts_there() {
        // Killed in epoch 1 after 0x40, brought back in epoch 2 by a
        // snapshot at 0x2000000a0 sent by the leader; a later snapshot of
        // its own at 0x200000100. Nothing starts before the leader's, even
        // with --since before it.
        let snapshots = [0, EPOCH1 + 0x20, EPOCH2 + 0xa0, EPOCH2 + 0x100];
        let logs = [EPOCH1 + 1, EPOCH1 + 0x21, EPOCH2 + 0xa1, EPOCH2 + 0x101];
        let gap = Some(Gap {
            logged_until: Some(EPOCH1 + 0x40),
            snapshot: EPOCH2 + 0xa0,
        });
        let lacking = [(EPOCH2 + 0xa0, EPOCH1 + 0x40)];
        assert_eq!(
            started(&snapshots, &logs, &lacking, &[]),
            Start {
                snapshot: Some(EPOCH2 + 0xa0),
                gap
            }
        );
        assert_eq!(
            started(&snapshots, &logs, &lacking, &[0, EPOCH1 + 0x20]),
            Start {
                snapshot: Some(EPOCH2 + 0xa0),
                gap
            }
        );
        let late = [0, EPOCH1 + 0x20, EPOCH2 + 0xa0, EPOCH2 + 0x100];
        assert_eq!(
            started(&snapshots, &logs, &lacking, &late).snapshot,
            Some(EPOCH2 + 0x100)
        );
        // A data directory of a snapshot alone starts there.
        assert_eq!(started(&[0x100], &[], &[], &[]), from(0x100));
    }

    /// A log of one transaction at each of `zxids`, written into `dir`,
    /// named after the first.
    fn log_of(dir: &Path, zxids: &[i64]) {
        let mut log = LogWriter::new();
        for &zxid in zxids {
            log.txn(1, 1, zxid, zxid, -10, &30000i32.to_be_bytes());
        }
        std::fs::write(dir.join(format!("log.{:x}", zxids[0])), log.bytes).unwrap();
    }

    #[test]
    fn the_logs_are_read_for_what_they_hold_around_each_snapshot() {
        let dir = std::env::temp_dir().join(format!("zklock-plan-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir(&dir).unwrap();
        // Epoch 1 logged to 0x104, a periodic snapshot at 0x102 inside it;
        // then the leader's snapshot at 0x200000009 and the logs after it.
        log_of(&dir, &[EPOCH1 + 1, EPOCH1 + 2, EPOCH1 + 3, EPOCH1 + 4]);
        log_of(&dir, &[EPOCH2 + 0xa, EPOCH2 + 0xb]);
        for zxid in [0, EPOCH1 + 2, EPOCH2 + 9] {
            let snapshot = write_snapshot(&[("", b"", 0, 0, 0)]);
            std::fs::write(dir.join(format!("snapshot.{zxid:x}")), snapshot).unwrap();
        }
        let read = plan(&Source::DataDir(dir.clone()), None).unwrap();
        assert_eq!(
            read.gap,
            Some(Gap {
                logged_until: Some(EPOCH1 + 4),
                snapshot: EPOCH2 + 9
            })
        );
        assert_eq!(
            read.snapshot.as_ref().map(|(_, zxid)| *zxid),
            Some(EPOCH2 + 9)
        );
        let names: Vec<&str> = read
            .logs
            .iter()
            .map(|log| log.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(names, ["log.20000000a"]);
        // Without the leader's snapshot, snapshot.0 is where it starts.
        std::fs::remove_file(dir.join(format!("snapshot.{:x}", EPOCH2 + 9))).unwrap();
        let read = plan(&Source::DataDir(dir.clone()), None).unwrap();
        assert_eq!(
            (read.snapshot.map(|(_, zxid)| zxid), read.gap),
            (Some(0), None)
        );
        assert_eq!(read.logs.len(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_snapshot_at_an_epochs_start_after_the_logs_is_one_the_leader_sent() {
        let dir = std::env::temp_dir().join(format!("zklock-plan-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir(&dir).unwrap();
        log_of(&dir, &[EPOCH1 + 1, EPOCH1 + 2]);
        log_of(&dir, &[EPOCH2 + 1]);
        let logs = [dir.join("log.100000001"), dir.join("log.200000001")];
        let starts = starts(&logs);
        assert_eq!(
            reached(&starts, EPOCH2),
            Reach::Lacking {
                logged_until: Some(EPOCH1 + 2)
            }
        );
        assert_eq!(reached(&starts, EPOCH1 + 2), Reach::Continued);
        assert_eq!(reached(&starts, EPOCH2 + 1), Reach::Continued);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
