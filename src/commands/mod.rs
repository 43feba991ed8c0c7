//! One module per subcommand, each a short function over the core that
//! returns the exit status, and the plumbing they share: a session opened
//! and closed around the work, and how a tree walk reports on the terminal.

pub(crate) mod check;
pub(crate) mod deadlocks;
pub(crate) mod dump;
pub(crate) mod exporter;
pub mod generated;
pub(crate) mod history;
pub(crate) mod lock;
pub(crate) mod ls;
pub(crate) mod reap;
pub(crate) mod release;
pub(crate) mod stat;
pub(crate) mod top;
pub(crate) mod verify;
pub(crate) mod watch;

use std::pin::Pin;

use anyhow::{Context, Result};

use crate::admin::reap::Skipped;
use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::lock::end::Ran;
use crate::model::chains::HopJson;
use crate::model::{self, Contender, Depth, Lock, Runs, WalkProgress};
use crate::output::{self, Column, Printer, Progress, Table, counted};
use crate::run::guard::Standby;
use crate::usage::UsageError;
use crate::zk::sessions::{Ask, Client, Connection, Survey, Surveyor};
use crate::zk::{self, Session};

/// A subcommand with its checked arguments.
#[derive(Debug)]
pub enum Subcommand {
    Lock(lock::LockArgs),
    Release(release::ReleaseArgs),
    Check(check::CheckArgs),
    Stat(stat::StatArgs),
    Ls(ls::LsArgs),
    Dump(dump::DumpArgs),
    Deadlocks(deadlocks::DeadlocksArgs),
    History(history::HistoryArgs),
    Watch(watch::WatchArgs),
    Reap(reap::ReapArgs),
    Exporter(exporter::ExporterArgs),
    Top(top::TopArgs),
    Verify(crate::verify::Plan),
    /// The critical section of a verify holder.
    VerifySection(crate::verify::section::SectionArgs),
    /// The completion script to print.
    Completions(String),
    /// The man page to print.
    Man(String),
}

impl Subcommand {
    /// True when it runs a command under a lock.
    pub(crate) fn runs_a_command(&self) -> bool {
        matches!(self, Subcommand::Lock(args) if args.runs_a_command())
    }
}

/// Runs one subcommand; `guard` is the guard process forked for a command
/// run under a lock.
pub(crate) async fn run(
    globals: &Globals,
    command: Subcommand,
    guard: Option<Standby>,
) -> Result<ExitStatus> {
    // Each command's future is made in a frame of its own, boxed, and polled
    // through a pointer. Made or polled in this function, every command's
    // would count towards its stack frame (the largest over 100 KiB), and
    // every page of a frame that large is touched on entry, whichever
    // command runs: some 28 page faults in each `lock`, the command scripts
    // run in loops.
    let command = match command {
        Subcommand::Lock(args) => boxed(|| lock::run(globals, args, guard)),
        Subcommand::Release(args) => boxed(|| release::run(globals, args)),
        Subcommand::Check(args) => boxed(|| check::run(globals, args)),
        Subcommand::Stat(args) => boxed(|| stat::run(globals, args)),
        Subcommand::Ls(args) => boxed(|| ls::run(globals, args)),
        Subcommand::Dump(args) => boxed(|| dump::run(globals, args)),
        Subcommand::Deadlocks(args) => boxed(|| deadlocks::run(globals, args)),
        Subcommand::History(args) => boxed(|| history::run(globals, args)),
        Subcommand::Watch(args) => boxed(|| watch::run(globals, args)),
        Subcommand::Reap(args) => boxed(|| reap::run(globals, args)),
        Subcommand::Exporter(args) => boxed(|| exporter::run(globals, args)),
        Subcommand::Top(args) => boxed(|| top::run(globals, args)),
        Subcommand::Verify(plan) => boxed(|| verify::run(globals, plan)),
        Subcommand::VerifySection(args) => return verify::section(&args),
        Subcommand::Completions(script) => return generated::print(globals, &script),
        Subcommand::Man(page) => return generated::show_man(globals, &page),
    };
    command.await
}

/// A command's future on the heap, polled through a pointer.
type CommandFuture<'a> = Pin<Box<dyn Future<Output = Result<ExitStatus>> + 'a>>;

/// The future `make` makes, boxed: made in this function's frame, which is
/// only as large as that one future.
#[inline(never)]
fn boxed<'a, F>(make: impl FnOnce() -> F) -> CommandFuture<'a>
where
    F: Future<Output = Result<ExitStatus>> + 'a,
{
    Box::pin(make())
}

/// Opens a session with the global options, does `work` on it, and closes
/// the session whatever the work's outcome, so the server drops it at once.
pub async fn with_session<T>(
    globals: &Globals,
    work: impl AsyncFnOnce(&Session) -> Result<T>,
) -> Result<T> {
    let session = zk::connect(&globals.connect).await?;
    work_then_close(session, async |session| work(session).await).await
}

/// [`with_session`], asking every ensemble member who is behind its sessions
/// once the session is open (each member within a short timeout). When the
/// answer is unknown for some sessions, why is noted once.
pub async fn with_session_and_survey<T>(
    globals: &Globals,
    ask: Ask,
    work: impl AsyncFnOnce(&Session, &Survey) -> Result<T>,
) -> Result<T> {
    with_session_and_surveyor(globals, ask, async |session, _, survey| {
        work(session, survey).await
    })
    .await
}

/// [`with_session_and_survey`], handing the work the [`Surveyor`] too, for
/// a command that asks again. The session is opened first, alone: a survey
/// of servers that are not there adds nothing to "cannot reach", and the
/// session reads who the members are (`/zookeeper/config`).
pub async fn with_session_and_surveyor<T>(
    globals: &Globals,
    ask: Ask,
    work: impl AsyncFnOnce(&Session, &Surveyor, &Survey) -> Result<T>,
) -> Result<T> {
    with_session(globals, async |session| {
        let surveyor =
            Surveyor::of_ensemble(session, &globals.connect.hosts, &globals.admin_ports).await;
        let survey = surveyor.survey(ask).await;
        if let Some(why) = survey.why_unknown() {
            globals.printer.note(&why);
        }
        work(session, &surveyor, &survey).await
    })
    .await
}

async fn work_then_close<T>(
    session: Session,
    work: impl AsyncFnOnce(&Session) -> Result<T>,
) -> Result<T> {
    let result = work(&session).await;
    session.close().await;
    result
}

/// Every lock under `path`, in path order, with its last `--once-per` run
/// when `runs` asks, each contender with its client from `survey`, with a
/// progress line while the walk is slow.
pub(crate) async fn collect_locks(
    session: &Session,
    path: &str,
    runs: Runs,
    survey: &Survey,
    printer: &Printer,
) -> Result<(WalkProgress, Vec<Lock>)> {
    let progress = printer.progress();
    let mut locks = Vec::new();
    let walked = model::walk(
        session,
        path,
        Depth::Tree,
        runs,
        |p| show_progress(progress.as_ref(), path, p),
        |mut lock| {
            lock.attach_clients(survey);
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
            "reading {path}: {} listed, {} read, {}",
            counted(walked.listed, "directory", "directories"),
            counted(walked.read, "node", "nodes"),
            counted(walked.locks, "lock", "locks")
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

/// `holding`, `waiting on SEQ` (the sequence number of the node it waits
/// on, which the SEQ column shows: a node name is too long for a table that
/// fits 80 columns), or `waiting for a lease`; with what is wrong when the
/// ensemble says so: a waiter that does not watch the node it waits on (it
/// will not wake). Whether the session is connected has a column of its
/// own ([`connected_cell`]).
pub fn state(lock: &str, contender: &Contender, holding: bool) -> String {
    let mut state = match &contender.waiting_on {
        _ if holding => "holding".to_owned(),
        Some(ahead) => format!(
            "waiting on {}",
            node_sequence(ahead).unwrap_or_else(|| relative(lock, ahead))
        ),
        None => "waiting for a lease".to_owned(),
    };
    // A disconnected waiter watches nothing: that is no news of its own.
    let disconnected = contender.connection() == Some(Connection::Disconnected);
    if !holding && contender.watching == Some(false) && !disconnected {
        state += " (not watching)";
    }
    state
}

/// Whether a session is connected, as the CONNECTED columns show it: `yes`;
/// `no`, with how long every member has left it unlisted once surveys have
/// shown it gone for a while; `unknown` when some member did not answer;
/// `-` for a node without a session.
pub(crate) fn connected_cell(connection: Option<Connection>, absent_ms: Option<i64>) -> String {
    match (connection, absent_ms) {
        (None, _) => "-".to_owned(),
        (Some(Connection::Connected), _) => "yes".to_owned(),
        (Some(Connection::Disconnected), Some(absent)) => {
            format!("no {}", output::format_age_ms(absent))
        }
        (Some(Connection::Disconnected), None) => "no".to_owned(),
        (Some(Connection::Unknown), _) => "unknown".to_owned(),
    }
}

/// [`connected_cell`] of a contender, its client as attached.
pub(crate) fn contender_connected(contender: &Contender) -> String {
    let absent = contender
        .client
        .as_ref()
        .and_then(|client| client.absent_ms);
    connected_cell(contender.connection(), absent)
}

/// A contender's sequence number as the SEQ column shows it, or `-`.
pub fn sequence(contender: &Contender) -> String {
    contender
        .sequence
        .map_or("-".to_owned(), |sequence| sequence.to_string())
}

/// The sequence number ZooKeeper appended to a node's name (its last ten
/// digits), without leading zeros, as SEQ shows it; `None` for a node
/// that has none.
pub fn node_sequence(path: &str) -> Option<&str> {
    let name = zk::path::basename(path);
    let digits = name.get(name.len().checked_sub(10)?..)?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let shown = digits.trim_start_matches('0');
    Some(if shown.is_empty() { "0" } else { shown })
}

/// Asks `question` on the terminal (stderr, answered on stdin); fails with
/// a usage error (exit 2) unless the answer is yes.
pub async fn ask(question: String) -> Result<()> {
    use std::io::{BufRead, Write};
    let answer = tokio::task::spawn_blocking(move || -> std::io::Result<String> {
        let mut stderr = std::io::stderr().lock();
        stderr.write_all(question.as_bytes())?;
        stderr.flush()?;
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        Ok(answer)
    })
    .await
    .context("asking for confirmation")?
    .context("reading the answer from the terminal")?;
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(()),
        _ => Err(UsageError::new("not confirmed; nothing was deleted").into()),
    }
}

/// One holder as a prompt shows it before breaking it: sequence, session,
/// age, whether its session is connected, and its owner, cut to a line.
pub fn holder_line(contender: &Contender) -> String {
    let connected = match &contender.client {
        Some(client) if client.connected => "CONNECTED",
        Some(_) => "not connected",
        None => "connection unknown",
    };
    let line = format!(
        "  {}  {}  held {}  {connected}  {}",
        sequence(contender),
        zk::format_session(contender.session()),
        output::format_age_ms(contender.age_ms),
        contender.owner_text()
    );
    cut_to_line(&output::inert(&line))
}

/// `text` cut with "…" to 80 columns: a line of a prompt.
pub fn cut_to_line(text: &str) -> String {
    match text.char_indices().nth(79) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// The warning a prompt ends with when `connected` of the sessions whose
/// nodes it would delete are connected: their processes are alive.
pub fn connected_warning(connected: usize) -> String {
    if connected == 0 {
        return String::new();
    }
    if connected == 1 {
        return "warning: 1 of these sessions is connected: its process is alive\n\
                and may still be working under the lock\n"
            .to_owned();
    }
    format!(
        "warning: {connected} of these sessions are connected: their processes are\n\
         alive and may still be working under the lock\n"
    )
}

/// The host a contender's client connects from, `disconnected` when its
/// session has no connection now, or `-` when unknown.
pub(crate) fn client_host(contender: &Contender) -> String {
    match &contender.client {
        Some(client) => client.host().unwrap_or("disconnected").to_owned(),
        None => "-".to_owned(),
    }
}

/// The lines after a lock's table that show its chain: where its holder's
/// owner waits, on whom, and so on to the root blocker.
pub(crate) fn chain_lines(hops: &[HopJson]) -> Vec<String> {
    let intro = [
        String::new(),
        "Beyond this lock, its holder's owner waits:".to_owned(),
    ];
    let hops = hops.iter().map(|hop| {
        let loops = if hop.loops {
            ": back on this chain, a cycle"
        } else {
            ""
        };
        format!(
            "  via {} on {} (session {}, held {}, {}){loops}",
            hop.via.as_str(),
            hop.node,
            hop.session,
            output::format_age_ms(hop.age_ms),
            hop.owner,
        )
    });
    intro.into_iter().chain(hops).collect()
}

/// How far a line of a chain that goes on from the line above is indented:
/// past `  via`.
pub(crate) const CHAIN_INDENT: usize = 6;

/// The columns of a lock's table: one row per contender. A row too wide
/// for the width gives up its owner, then AGE, MODE, CONNECTED and STATE;
/// the sequence number and the session stay.
pub(crate) const CONTENDER_COLUMNS: &[Column] = &[
    Column::whole("NODE").wide(),
    Column::whole("SEQ"),
    Column::whole("MODE").goes(3),
    Column::whole("STATE").goes(5),
    Column::whole("SESSION"),
    Column::whole("CONNECTED").goes(4),
    Column::whole("CLIENT").wide(),
    Column::whole("AGE").goes(2),
    Column::whole("FENCE").wide(),
    Column::text("OWNER").goes(1),
];

/// The row of [`CONTENDER_COLUMNS`] for a contender of the lock at `lock`.
pub(crate) fn contender_row(lock: &str, contender: &Contender, holding: bool) -> [String; 10] {
    [
        relative(lock, &contender.path).to_owned(),
        sequence(contender),
        contender.mode.as_str().to_owned(),
        state(lock, contender, holding),
        zk::format_session(contender.session()),
        contender_connected(contender),
        client(contender),
        output::format_age_ms(contender.age_ms),
        contender.fence().to_string(),
        contender.owner_text(),
    ]
}

/// `ADDRESS via SERVER`, `not connected`, or `-` when unknown.
fn client(contender: &Contender) -> String {
    match &contender.client {
        Some(Client {
            address: Some(address),
            server,
            ..
        }) => match server {
            Some(server) => format!("{address} via {server}"),
            None => address.clone(),
        },
        Some(_) => "not connected".to_owned(),
        None => "-".to_owned(),
    }
}

/// A `--once-per` lock's last counted run, for people.
pub(crate) fn last_run_line(ran: &Ran) -> String {
    format!(
        "last --once-per run: {} (server time) by {}; the window of {} opens at {}",
        output::format_local_ms(ran.at_ms),
        ran.by.summary(),
        humantime::format_duration(std::time::Duration::from_millis(ran.per_ms)),
        output::format_local_ms(ran.opens_at_ms()),
    )
}

/// The command that breaks a wait-for cycle by deleting `node`.
pub(crate) fn release_command(node: &str) -> String {
    format!("zklock release {}", crate::shell::word(node))
}

/// `path` relative to the lock directory when it lies below it.
pub fn relative<'a>(lock: &str, path: &'a str) -> &'a str {
    path.strip_prefix(lock)
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or(path)
}

/// The table of the commands that delete or revoke nodes (`reap`,
/// `release`): one row per node and what was done to it. The node's full
/// path is in `-o wide`; the default names it by lock and sequence number,
/// so that the reason beside it has room.
const NODE_ACTIONS: &[Column] = &[
    Column::whole("NODE").wide(),
    Column::whole("LOCK"),
    Column::whole("SEQ"),
    Column::sentence("ACTION"),
];

/// The rows of [`NODE_ACTIONS`]: each group of paths with its action, then
/// the nodes left alone, with the reason.
fn node_action_rows(
    table: &mut Table<'_>,
    done: &[(&[String], &str)],
    skipped: &[Skipped],
) -> std::io::Result<()> {
    let row = |table: &mut Table<'_>, path: &str, action: String| {
        let (lock, sequence) = match node_sequence(path) {
            Some(sequence) => (zk::path::parent(path).unwrap_or(path), sequence),
            None => (path, "-"),
        };
        table.row([
            path.to_owned(),
            crate::names::shown(lock).into_owned(),
            sequence.to_owned(),
            action,
        ])
    };
    for (paths, action) in done {
        for path in *paths {
            row(table, path, (*action).to_owned())?;
        }
    }
    for skipped in skipped {
        row(
            table,
            &skipped.path,
            format!("left alone: {}", skipped.reason),
        )?;
    }
    Ok(())
}
