//! `zklock dump [PATH] [--sessions]`: every lock and contender under PATH
//! with full stat and data, as one JSON document (for bug reports and
//! diffing); `--sessions` groups the contenders by owner session.

use std::collections::BTreeMap;

use anyhow::Result;
use comfy_table::Table;
use serde::{Serialize, Serializer};

use crate::clock;
use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::model::{self, Contender, Depth, Lock, LockDialect, LockKind, WalkProgress, WithStats};
use crate::output::{self, Format, Printer, Report};
use crate::zk::sessions::{Ask, Survey};
use crate::zk::{self, Session};

use super::{
    collect_locks, note_unreadable, relative, show_progress, state, with_session_and_survey,
};

/// What `dump` was asked for.
#[derive(Debug)]
pub struct DumpArgs {
    /// The absolute path to dump below.
    pub path: String,
    /// Group contenders by their owner session.
    pub sessions: bool,
}

/// Every lock under a path, each contender with its full stat.
#[derive(Debug)]
pub struct LockDump {
    pub path: String,
    pub time_ms: i64,
    pub locks: Vec<Lock>,
}

#[derive(Serialize)]
struct LockDumpJson<'a> {
    path: &'a str,
    time_ms: i64,
    locks: Vec<WithStats<'a>>,
}

impl Serialize for LockDump {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        LockDumpJson {
            path: &self.path,
            time_ms: self.time_ms,
            locks: self.locks.iter().map(WithStats).collect(),
        }
        .serialize(serializer)
    }
}

impl Report for LockDump {
    fn table(&self) -> Table {
        let mut table = contender_table();
        for lock in &self.locks {
            for (contender, holding) in lock.standings() {
                table.add_row(contender_row(&lock.path, contender, holding));
            }
        }
        table
    }
}

/// Every contender under a path, grouped by owner session.
#[derive(Debug, Serialize)]
pub struct SessionDump {
    pub path: String,
    pub time_ms: i64,
    pub sessions: Vec<SessionGroup>,
}

/// What one session holds and waits for.
#[derive(Debug, Serialize)]
pub struct SessionGroup {
    #[serde(serialize_with = "session_hex")]
    pub session: i64,
    pub holding: Vec<SessionEntry>,
    pub waiting: Vec<SessionEntry>,
}

/// One contender of a session, with the lock it belongs to.
#[derive(Debug)]
pub struct SessionEntry {
    pub lock: String,
    pub kind: LockKind,
    pub dialect: LockDialect,
    pub contender: Contender,
}

#[derive(Serialize)]
struct SessionEntryJson<'a> {
    lock: &'a str,
    kind: LockKind,
    dialect: LockDialect,
    contender: model::ContenderJson<'a>,
}

impl Serialize for SessionEntry {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        SessionEntryJson {
            lock: &self.lock,
            kind: self.kind,
            dialect: self.dialect,
            contender: self.contender.json(true),
        }
        .serialize(serializer)
    }
}

fn session_hex<S: Serializer>(session: &i64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&zk::format_session(*session))
}

impl SessionDump {
    /// Regroups `locks` by the sessions of their contenders.
    pub fn new(path: String, time_ms: i64, locks: Vec<Lock>) -> SessionDump {
        let mut groups: BTreeMap<i64, SessionGroup> = BTreeMap::new();
        for lock in locks {
            let Lock {
                path: lock_path,
                kind,
                dialect,
                holders,
                waiters,
                ..
            } = lock;
            let holding = holders.into_iter().map(|c| (c, true));
            for (contender, holds) in holding.chain(waiters.into_iter().map(|c| (c, false))) {
                let session = contender.session();
                let group = groups.entry(session).or_insert_with(|| SessionGroup {
                    session,
                    holding: Vec::new(),
                    waiting: Vec::new(),
                });
                let entry = SessionEntry {
                    lock: lock_path.clone(),
                    kind,
                    dialect,
                    contender,
                };
                if holds {
                    group.holding.push(entry);
                } else {
                    group.waiting.push(entry);
                }
            }
        }
        SessionDump {
            path,
            time_ms,
            sessions: groups.into_values().collect(),
        }
    }
}

impl Report for SessionDump {
    fn table(&self) -> Table {
        let mut table = contender_table();
        for group in &self.sessions {
            let holding = group.holding.iter().map(|e| (e, true));
            for (entry, holds) in holding.chain(group.waiting.iter().map(|e| (e, false))) {
                table.add_row(contender_row(&entry.lock, &entry.contender, holds));
            }
        }
        table
    }
}

fn contender_table() -> Table {
    output::table(&[
        "LOCK", "NODE", "STATE", "SESSION", "FENCE", "CTIME", "MTIME", "VERSION", "OWNER",
    ])
}

fn contender_row(lock: &str, contender: &Contender, holding: bool) -> Vec<String> {
    vec![
        lock.to_owned(),
        relative(lock, &contender.path).to_owned(),
        state(lock, contender, holding),
        zk::format_session(contender.session()),
        contender.fence().to_string(),
        clock::format_time_ms(contender.stat.ctime),
        clock::format_time_ms(contender.stat.mtime),
        contender.stat.version.to_string(),
        contender.owner_text(),
    ]
}

/// Dumps every lock under the path.
pub async fn run(globals: &Globals, args: DumpArgs) -> Result<ExitStatus> {
    let printer = &globals.printer;
    let time_ms = clock::now_ms();
    let walked = with_session_and_survey(globals, Ask::Connections, async |session, survey| {
        if printer.format == Format::Json && !args.sessions {
            return stream_json(session, &args.path, survey, time_ms, printer).await;
        }
        let (walked, locks) = collect_locks(session, &args.path, survey, printer).await?;
        let path = args.path.clone();
        if args.sessions {
            printer.report(&SessionDump::new(path, time_ms, locks))?;
        } else {
            printer.report(&LockDump {
                path,
                time_ms,
                locks,
            })?;
        }
        Ok(walked)
    })
    .await?;
    note_unreadable(printer, &walked);
    Ok(ExitStatus::Success)
}

async fn stream_json(
    session: &Session,
    path: &str,
    survey: &Survey,
    time_ms: i64,
    printer: &Printer,
) -> Result<WalkProgress> {
    let progress = printer.progress();
    let fields = [("path", path.into()), ("time_ms", time_ms.into())];
    let mut stream = printer.json_object_with_array(&fields, "locks", progress.as_ref())?;
    let walked = model::walk(
        session,
        path,
        Depth::Tree,
        |p| show_progress(progress.as_ref(), path, p),
        |mut lock| {
            lock.attach_clients(survey);
            stream.push(&WithStats(&lock))
        },
    )
    .await?;
    stream.finish()?;
    Ok(walked)
}
