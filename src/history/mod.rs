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

mod jute;
mod overlap;
mod replay;
mod sets;
mod stats;
mod txnlog;

use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

pub(crate) use overlap::{Holder, Overlap};
pub(crate) use replay::{Found, Hold, How, Scope, Window};
pub(crate) use stats::{Durations, LockSummary};

use replay::Replay;
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
    #[error("no transaction logs (log.*) in {}", .0.display())]
    NoLogs(PathBuf),
}

impl LogError {
    /// True when a record itself is damaged (cut off, or failing its
    /// checksum), not the file unreadable.
    pub(crate) fn is_damage(&self) -> bool {
        matches!(self, LogError::Record(_, err) if !matches!(err.problem, Problem::Io(_)))
    }
}

/// The log files of `source`, in zxid order: a data directory's `log.*`
/// files, or those named (sorted the same way when their names say).
pub(crate) fn log_files(source: &Source) -> Result<Vec<PathBuf>, LogError> {
    let mut files = match source {
        Source::Logs(files) => files.clone(),
        Source::DataDir(dir) => logs_in(dir)?,
    };
    files.sort_by_key(|file| first_zxid(file));
    Ok(files)
}

/// The `log.*` files of a data directory (in `version-2` when it has one).
fn logs_in(dir: &Path) -> Result<Vec<PathBuf>, LogError> {
    let nested = dir.join("version-2");
    let dir = if nested.is_dir() {
        nested
    } else {
        dir.to_owned()
    };
    let entries = std::fs::read_dir(&dir).map_err(|err| LogError::Unreadable(dir.clone(), err))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|err| LogError::Unreadable(dir.clone(), err))?;
        if first_zxid(&entry.path()).is_some() {
            files.push(entry.path());
        }
    }
    if files.is_empty() {
        return Err(LogError::NoLogs(dir));
    }
    Ok(files)
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

/// Replays `files` in order: each contender of the locks in `scope` alive
/// within `window` goes to `emit` as it ends, and those alive where the
/// logs end (or `window` does) last; so does each overlap when `overlaps`
/// asks for them; `progress` hears the bytes read.
pub(crate) fn replay(
    files: &[PathBuf],
    scope: Scope,
    window: Window,
    overlaps: bool,
    progress: Progress<'_>,
    emit: &mut impl FnMut(Found),
) -> Replayed {
    let mut replay = Replay::new(scope, window, overlaps);
    let mut before = 0;
    let mut stopped = None;
    for file in files {
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
