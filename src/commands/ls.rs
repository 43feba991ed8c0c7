//! `zklock ls [PATH]`: every lock under PATH, recursively, one line each,
//! narrowed by filters and sorted as asked.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::clock;
use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::model::cycles::count_cycles;
use crate::model::waitfor::GraphBuilder;
use crate::model::{self, Depth, Lock, LockDialect, Runs, WalkProgress, is_absent};
use crate::names;
use crate::output::prometheus::{self, Exposition, LockFigures, LockGauges};
use crate::output::{self, Column, Listing, Printer, Table};
use crate::zk::Session;
use crate::zk::sessions::{Ask, Survey};

use super::{
    client_host, collect_locks, contender_connected, note_unreadable, show_progress,
    with_session_and_survey,
};

/// What `ls` was asked for.
#[derive(Debug)]
pub struct LsArgs {
    /// The absolute path to list below.
    pub path: String,
    /// Whether PATH was named: a named path that does not exist is an
    /// error, while an absent default root only means there are no locks.
    pub named: bool,
    pub filter: LsFilter,
    pub sort: LsSort,
    /// Print metrics (`-o prometheus`) instead of a listing.
    pub metrics: Option<MetricsOutput>,
}

/// Where `ls -o prometheus` puts its metrics.
#[derive(Debug)]
pub struct MetricsOutput {
    /// The file to replace (`--output-file`); stdout when `None`.
    pub file: Option<PathBuf>,
}

/// Which locks `ls` shows; every condition given must hold.
#[derive(Debug, Default)]
pub struct LsFilter {
    /// Only locks with waiters.
    pub contended: bool,
    /// Only locks held now.
    pub held: bool,
    /// Only locks whose oldest holder has held them at least this long.
    pub older_than: Option<Duration>,
    /// Only locks one of whose holders' owner text contains this.
    pub owner: Option<String>,
    /// Only locks of this dialect (one library's, or `mixed`).
    pub dialect: Option<LockDialect>,
}

impl LsFilter {
    /// True when `lock` passes every condition given.
    pub fn admits(&self, lock: &Lock) -> bool {
        (!self.contended || !lock.waiters.is_empty())
            && (!self.held || !lock.holders.is_empty())
            && self.older_than.is_none_or(|age| {
                lock.oldest_holder()
                    .is_some_and(|c| c.age_ms >= age.as_millis() as i64)
            })
            && self.owner.as_deref().is_none_or(|owner| {
                lock.holders
                    .iter()
                    .any(|holder| holder.owner_text().contains(owner))
            })
            && self.dialect.is_none_or(|dialect| lock.dialect == dialect)
    }
}

/// The order of `ls`'s lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LsSort {
    /// By lock path: the walk's own order, streamed as it goes.
    #[default]
    Path,
    /// Longest held first (then by path); free locks last.
    Age,
    /// Most waiters first (then by path).
    Waiters,
}

impl LsSort {
    /// Puts `locks` (in path order) in this order; stable, so ties keep
    /// their path order.
    fn apply(self, locks: &mut [Lock]) {
        match self {
            LsSort::Path => {}
            LsSort::Age => locks.sort_by_key(|lock| {
                lock.oldest_holder()
                    .map_or(i64::MAX, |holder| holder.stat.ctime)
            }),
            LsSort::Waiters => locks.sort_by_key(|lock| std::cmp::Reverse(lock.waiters.len())),
        }
    }
}

/// The columns of `ls`'s table; HELD FOR, CONNECTED, HOST and OWNER are of
/// the oldest holder. A row is a lock, not a contender: whether its holder
/// is connected is in `-o wide`, beside its host, and in the JSON of every
/// contender. A row too wide for the width gives up its owner, then KIND,
/// then HELD FOR; the lock and its counts stay.
const COLUMNS: &[Column] = &[
    Column::whole("LOCK"),
    Column::whole("KIND").goes(2),
    Column::whole("DIALECT").wide(),
    Column::whole("HOLDERS"),
    Column::whole("WAITERS"),
    Column::whole("HELD FOR").goes(3),
    Column::whole("CONNECTED").wide(),
    Column::whole("HOST").wide(),
    Column::text("OWNER").goes(1),
];

/// `lock`'s line in the table.
fn row(table: &mut Table<'_>, lock: &Lock) -> std::io::Result<()> {
    let oldest = lock.oldest_holder();
    let holders = match lock.max_leases {
        Some(max) => format!("{}/{max}", lock.holders.len()),
        None => lock.holders.len().to_string(),
    };
    table.row([
        names::shown(&lock.path).into_owned(),
        lock.kind.as_str().to_owned(),
        lock.dialect.to_string(),
        holders,
        lock.waiters.len().to_string(),
        oldest.map_or("-".to_owned(), |c| output::format_age_ms(c.age_ms)),
        oldest.map_or("-".to_owned(), contender_connected),
        oldest.map_or("-".to_owned(), client_host),
        oldest.map_or("-".to_owned(), |c| c.owner_text()),
    ])
}

/// Lists the locks under the path that pass the filter, as a table or a
/// JSON array. In path order each lock is printed as soon as it is read;
/// another order needs the whole listing first, and holds it in memory.
pub(crate) async fn run(globals: &Globals, args: LsArgs) -> Result<ExitStatus> {
    let printer = &globals.printer;
    let walked =
        with_session_and_survey(
            globals,
            Ask::Connections,
            async |session, survey| match &args.metrics {
                Some(output) => export(session, &args, survey, output, printer).await,
                None => list(session, &args, survey, printer).await,
            },
        )
        .await?;
    note_unreadable(printer, &walked);
    if walked.locks == 0 {
        printer.note(&format!("no locks under {}", args.path));
    }
    Ok(ExitStatus::Success)
}

async fn list(
    session: &Session,
    args: &LsArgs,
    survey: &Survey,
    printer: &Printer,
) -> Result<WalkProgress> {
    let progress = printer.progress();
    let mut listing = printer.listing(COLUMNS, None, progress.as_ref())?;
    let show = |listing: &mut Listing<'_>, lock: &Lock| {
        if args.filter.admits(lock) {
            listing.push(lock, |table| row(table, lock))?;
        }
        Ok(())
    };
    let walked = if args.sort == LsSort::Path {
        model::walk(
            session,
            &args.path,
            Depth::Tree,
            Runs::Read,
            |p| show_progress(progress.as_ref(), &args.path, p),
            |mut lock| {
                lock.attach_clients(survey);
                show(&mut listing, &lock)
            },
        )
        .await
    } else {
        match collect_locks(session, &args.path, Runs::Read, survey, printer).await {
            Ok((walked, mut locks)) => {
                args.sort.apply(&mut locks);
                locks
                    .iter()
                    .try_for_each(|lock| show(&mut listing, lock))
                    .map(|()| walked)
            }
            Err(err) => Err(err),
        }
    };
    let walked = match walked {
        Err(err) if !args.named && is_absent(&err, &args.path) => Ok(WalkProgress::default()),
        walked => walked,
    };
    listing.close(walked)
}

/// Reads the locks under the path and writes the gauges of those that pass
/// the filter in the Prometheus text format, to stdout or atomically to the
/// file asked for. Only the gauges and the wait-for graph (the contended
/// locks' contenders) are kept during the walk, not the locks. The cycle
/// count is of every lock under the path, filtered or not: a cycle runs
/// across locks, and one the filter half hid would still be a deadlock.
async fn export(
    session: &Session,
    args: &LsArgs,
    survey: &Survey,
    output: &MetricsOutput,
    printer: &Printer,
) -> Result<WalkProgress> {
    let started = Instant::now();
    let mut gauges = LockGauges::default();
    let mut graph = GraphBuilder::default();
    let walked = model::walk(
        session,
        &args.path,
        Depth::Tree,
        Runs::Skip,
        |_| {},
        |mut lock| {
            lock.attach_clients(survey);
            graph.add(&lock);
            if args.filter.admits(&lock) {
                let labels =
                    prometheus::lock_labels(&lock.path, lock.kind.as_str(), lock.dialect.as_str());
                gauges.push(labels, LockFigures::of(&lock, clock::now_ms()));
            }
            Ok(())
        },
    )
    .await;
    let walked = match walked {
        Err(err) if !args.named && is_absent(&err, &args.path) => WalkProgress::default(),
        walked => walked?,
    };
    let graph = graph.finish();
    let cycles = count_cycles(session, &args.path, &graph).await?;
    let families: Vec<_> = gauges
        .into_families()
        .into_iter()
        .chain([
            cycles.family(),
            prometheus::scrape_duration(started.elapsed().as_secs_f64()),
        ])
        .collect();
    let text = prometheus::render(&families, Exposition::Text);
    match &output.file {
        Some(file) => replace_file(file, text.as_bytes())?,
        None => prometheus::print(&text, printer)?,
    }
    Ok(walked)
}

/// Replaces `file` with `contents` at once: written to a temporary file in
/// the same directory (so the rename cannot cross file systems) whose name
/// does not end in `.prom` (so the textfile collector never reads it half
/// written), flushed to disk, then renamed over `file`.
fn replace_file(file: &Path, contents: &[u8]) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let name = file
        .file_name()
        .with_context(|| format!("--output-file {}: not a file name", file.display()))?;
    let dir = match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut temporary_name = std::ffi::OsString::from(".");
    temporary_name.push(name);
    temporary_name.push(format!(".{}.tmp", std::process::id()));
    let temporary = dir.join(temporary_name);
    let written = (|| {
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(&temporary)?;
        out.write_all(contents)?;
        out.sync_all()?;
        std::fs::rename(&temporary, file)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written.with_context(|| format!("writing {}", file.display()))
}
