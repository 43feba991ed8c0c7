//! `zklock ls [PATH]`: every lock under PATH, recursively, one line each.

use anyhow::Result;
use comfy_table::Table;
use serde::Serialize;

use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::model::{self, Contender, Depth, Lock, WalkProgress};
use crate::output::{self, Format, Printer, Progress, Report};
use crate::zk::Session;
use crate::zk::sessions::{Ask, Survey};

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
    let (session, survey) = super::connect_and_survey(globals, Ask::Connections).await?;
    let progress = printer.progress();
    let read = match printer.format {
        Format::Json => stream_json(&session, &args.path, &survey, progress.as_ref(), printer)
            .await
            .map(|walked| (walked, None)),
        Format::Table => collect(&session, &args.path, progress.as_ref())
            .await
            .map(|(walked, locks)| (walked, with_clients(locks, &survey)))
            .map(|(walked, locks)| (walked, Some(LockList(locks)))),
    };
    if let Some(progress) = progress {
        progress.finish();
    }
    session.close().await;
    let (walked, table) = read?;
    if let Some(table) = table {
        printer.report(&table)?;
    }
    note_unreadable(printer, &walked);
    if walked.locks == 0 {
        printer.note(&format!("no locks under {}", args.path));
    }
    Ok(ExitStatus::Success)
}

fn with_clients(mut locks: Vec<Lock>, survey: &Survey) -> Vec<Lock> {
    for lock in &mut locks {
        lock.attach_clients(survey);
    }
    locks
}

async fn stream_json(
    session: &Session,
    path: &str,
    survey: &Survey,
    progress: Option<&Progress>,
    printer: &Printer,
) -> Result<WalkProgress> {
    let mut stream = printer.json_array(progress)?;
    let walked = model::walk(
        session,
        path,
        Depth::Tree,
        |p| show_progress(progress, path, p),
        |mut lock| {
            lock.attach_clients(survey);
            stream.push(&lock)
        },
    )
    .await?;
    stream.finish()?;
    Ok(walked)
}

/// Every lock under `path`, in path order.
pub async fn collect(
    session: &Session,
    path: &str,
    progress: Option<&Progress>,
) -> Result<(WalkProgress, Vec<Lock>)> {
    let mut locks = Vec::new();
    let walked = model::walk(
        session,
        path,
        Depth::Tree,
        |p| show_progress(progress, path, p),
        |lock| {
            locks.push(lock);
            Ok(())
        },
    )
    .await?;
    Ok((walked, locks))
}

/// Shows how far a walk of `path` has come on the progress line, if any.
pub fn show_progress(progress: Option<&Progress>, path: &str, walked: &WalkProgress) {
    if let Some(progress) = progress {
        progress.set(format!(
            "reading {path}: {} directories listed, {} nodes read, {} locks",
            walked.listed, walked.read, walked.locks
        ));
    }
}

/// Tells the person about directories the walk could not list.
pub fn note_unreadable(printer: &Printer, walked: &WalkProgress) {
    for dir in &walked.unreadable {
        printer.note(&format!(
            "skipped {dir}: permission denied by its ACL (locks below it are not shown)"
        ));
    }
}
