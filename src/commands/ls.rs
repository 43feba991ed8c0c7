//! `zklock ls [PATH]`: every lock under PATH, recursively, one line each.

use anyhow::Result;
use comfy_table::Table;
use serde::Serialize;

use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::model::{self, Contender, Depth, Lock, WalkProgress};
use crate::output::{self, Format, Printer, Report};
use crate::zk::Session;
use crate::zk::sessions::{Ask, Survey};

use super::{collect_locks, note_unreadable, show_progress, with_session_and_survey};

/// What `ls` was asked for.
#[derive(Debug)]
pub struct LsArgs {
    /// The absolute path to list below.
    pub path: String,
}

/// The locks found, as `ls` shows them.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct LockList(pub Vec<Lock>);

impl Report for LockList {
    fn table(&self) -> Table {
        let mut table = output::table(&[
            "LOCK", "KIND", "DIALECT", "HOLDERS", "WAITERS", "HELD FOR", "HOST", "OWNER",
        ]);
        for lock in &self.0 {
            let oldest = lock.oldest_holder();
            let holders = match lock.max_leases {
                Some(max) => format!("{}/{max}", lock.holders.len()),
                None => lock.holders.len().to_string(),
            };
            table.add_row([
                lock.path.clone(),
                lock.kind.as_str().to_owned(),
                lock.dialect.to_string(),
                holders,
                lock.waiters.len().to_string(),
                oldest.map_or("-".to_owned(), |c| output::format_age_ms(c.age_ms)),
                oldest.map_or("-".to_owned(), client_host),
                oldest.map_or("-".to_owned(), |c| c.owner_text()),
            ]);
        }
        table
    }
}

/// The host a contender's client connects from, `disconnected` when its
/// session has no connection now, or `-` when unknown.
pub fn client_host(contender: &Contender) -> String {
    match &contender.client {
        Some(client) => client.host().unwrap_or("disconnected").to_owned(),
        None => "-".to_owned(),
    }
}

/// Lists every lock under the path: streamed as JSON, or as one table
/// once everything is read.
pub async fn run(globals: &Globals, args: LsArgs) -> Result<ExitStatus> {
    let printer = &globals.printer;
    let walked =
        with_session_and_survey(
            globals,
            Ask::Connections,
            async |session, survey| match printer.format {
                Format::Json => stream_json(session, &args.path, survey, printer).await,
                Format::Table => {
                    let (walked, locks) =
                        collect_locks(session, &args.path, survey, printer).await?;
                    printer.report(&LockList(locks))?;
                    Ok(walked)
                }
            },
        )
        .await?;
    note_unreadable(printer, &walked);
    if walked.locks == 0 {
        printer.note(&format!("no locks under {}", args.path));
    }
    Ok(ExitStatus::Success)
}

async fn stream_json(
    session: &Session,
    path: &str,
    survey: &Survey,
    printer: &Printer,
) -> Result<WalkProgress> {
    let progress = printer.progress();
    let mut stream = printer.json_array(progress.as_ref())?;
    let walked = model::walk(
        session,
        path,
        Depth::Tree,
        |p| show_progress(progress.as_ref(), path, p),
        |mut lock| {
            lock.attach_clients(survey);
            stream.push(&lock)
        },
    )
    .await?;
    stream.finish()?;
    Ok(walked)
}
