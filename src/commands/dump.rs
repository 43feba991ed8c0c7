//! `zklock dump [PATH] [--sessions]`: every lock and contender under PATH
//! with full stat and data, as one JSON document (for bug reports and
//! diffing); `--sessions` groups the contenders by owner session.

use std::collections::BTreeMap;

use anyhow::Result;
use serde::{Serialize, Serializer};

use crate::clock;
use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::model::{
    self, Contender, Depth, Lock, LockDialect, LockKind, Runs, WalkProgress, WithStats,
};
use crate::output::{self, Column, Printer, Report, Table};
use crate::zk::sessions::{Ask, Survey};
use crate::zk::{self, Session};

use super::{
    collect_locks, note_unreadable, relative, sequence, show_progress, state,
    with_session_and_survey,
};

/// What `dump` was asked for.
#[derive(Debug)]
pub struct DumpArgs {
    /// The absolute path to dump below.
    pub path: String,
    /// Group contenders by their owner session.
    pub sessions: bool,
}

/// Every contender under a path, grouped by owner session.
#[derive(Debug, Serialize)]
pub(crate) struct SessionDump {
    pub path: String,
    pub time_ms: i64,
    pub sessions: Vec<SessionGroup>,
}

/// What one session holds and waits for.
#[derive(Debug, Serialize)]
pub(crate) struct SessionGroup {
    #[serde(serialize_with = "session_hex")]
    pub session: i64,
    pub holding: Vec<SessionEntry>,
    pub waiting: Vec<SessionEntry>,
}

/// One contender of a session, with the lock it belongs to.
#[derive(Debug)]
pub(crate) struct SessionEntry {
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
    pub(crate) fn new(path: String, time_ms: i64, locks: Vec<Lock>) -> SessionDump {
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
    fn columns(&self) -> &'static [Column] {
        COLUMNS
    }

    fn rows(&self, table: &mut Table<'_>) -> std::io::Result<()> {
        for group in &self.sessions {
            let holding = group.holding.iter().map(|e| (e, true));
            for (entry, holds) in holding.chain(group.waiting.iter().map(|e| (e, false))) {
                contender_row(table, &entry.lock, &entry.contender, holds)?;
            }
        }
        Ok(())
    }
}

/// The columns of `dump`'s table: one line per contender.
const COLUMNS: &[Column] = &[
    Column::whole("LOCK"),
    Column::whole("NODE").wide(),
    Column::whole("SEQ"),
    Column::whole("STATE").goes(2),
    Column::whole("SESSION"),
    Column::whole("FENCE").wide(),
    Column::whole("CTIME").wide(),
    Column::whole("MTIME").wide(),
    Column::whole("VERSION").wide(),
    Column::text("OWNER").goes(1),
];

fn contender_row(
    table: &mut Table<'_>,
    lock: &str,
    contender: &Contender,
    holding: bool,
) -> std::io::Result<()> {
    table.row([
        crate::names::shown(lock).into_owned(),
        relative(lock, &contender.path).to_owned(),
        sequence(contender),
        state(lock, contender, holding),
        zk::format_session(contender.session()),
        contender.fence().to_string(),
        output::format_local_ms(contender.stat.ctime),
        output::format_local_ms(contender.stat.mtime),
        contender.stat.version.to_string(),
        contender.owner_text(),
    ])
}

/// Dumps every lock under the path: streamed, lock by lock, as one JSON
/// document or a table; grouped by session once everything is read.
pub(crate) async fn run(globals: &Globals, args: DumpArgs) -> Result<ExitStatus> {
    let printer = &globals.printer;
    let time_ms = clock::now_ms();
    let walked = with_session_and_survey(globals, Ask::Connections, async |session, survey| {
        if !args.sessions {
            return stream(session, &args.path, survey, time_ms, printer).await;
        }
        let (walked, locks) =
            collect_locks(session, &args.path, Runs::Skip, survey, printer).await?;
        printer.report(&SessionDump::new(args.path.clone(), time_ms, locks))?;
        Ok(walked)
    })
    .await?;
    note_unreadable(printer, &walked);
    Ok(ExitStatus::Success)
}

async fn stream(
    session: &Session,
    path: &str,
    survey: &Survey,
    time_ms: i64,
    printer: &Printer,
) -> Result<WalkProgress> {
    let progress = printer.progress();
    let fields = [("path", path.into()), ("time_ms", time_ms.into())];
    let mut listing = printer.listing(COLUMNS, Some((&fields, "locks")), progress.as_ref())?;
    let walked = model::walk(
        session,
        path,
        Depth::Tree,
        Runs::Skip,
        |p| show_progress(progress.as_ref(), path, p),
        |mut lock| {
            lock.attach_clients(survey);
            listing.push(&WithStats(&lock), |table| {
                lock.standings().try_for_each(|(contender, holding)| {
                    contender_row(table, &lock.path, contender, holding)
                })
            })
        },
    )
    .await;
    listing.close(walked)
}
