//! `zklock stat LOCK|NODE`: one lock in full, contenders in queue order; or,
//! on a node that is not a lock, its zkCli stat fields and data.

use anyhow::Result;
use serde::Serialize;

use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::lock::end::Ran;
use crate::lock::once;
use crate::model::chains::{HopJson, chain, chains_under};
use crate::model::waitfor::GraphBuilder;
use crate::model::{self, ListedLock, LockKind, LockSummary, LockWindows, NodeStat, last_run_json};
use crate::output::{self, Column, Printer, Report, Table};
use crate::zk::Session;
use crate::zk::sessions::{Ask, Survey};

use super::{
    CHAIN_INDENT, CONTENDER_COLUMNS, chain_lines, contender_row, last_run_line, show_progress,
    with_session_and_survey,
};

/// What `stat` was asked for.
#[derive(Debug)]
pub struct StatArgs {
    /// The absolute path of the node.
    pub path: String,
}

/// A plain node: its path, stat and data.
#[derive(Debug, Serialize)]
pub(crate) struct NodeReport {
    pub path: String,
    pub stat: NodeStat,
    pub data: Option<String>,
    /// An emptied `--once-per` lock's last counted run, from its end record.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "last_run")]
    pub last_run: Option<Ran>,
}

/// A last run as [`last_run_json`] writes it.
fn last_run<S: serde::Serializer>(ran: &Option<Ran>, serializer: S) -> Result<S::Ok, S::Error> {
    last_run_json(ran.as_ref()).serialize(serializer)
}

impl Report for NodeReport {
    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[Column::whole(""), Column::text("")];
        COLUMNS
    }

    fn rows(&self, table: &mut Table<'_>) -> std::io::Result<()> {
        let s = &self.stat;
        let rows: [(&str, String); 12] = [
            ("cZxid", format!("0x{:x}", s.czxid)),
            ("ctime", output::format_local_ms(s.ctime_ms)),
            ("mZxid", format!("0x{:x}", s.mzxid)),
            ("mtime", output::format_local_ms(s.mtime_ms)),
            ("pZxid", format!("0x{:x}", s.pzxid)),
            ("cversion", s.cversion.to_string()),
            ("dataVersion", s.data_version.to_string()),
            ("aclVersion", s.acl_version.to_string()),
            ("ephemeralOwner", s.ephemeral_owner.clone()),
            ("dataLength", s.data_length.to_string()),
            ("numChildren", s.num_children.to_string()),
            ("data", self.data.clone().unwrap_or_default()),
        ];
        for (field, value) in rows {
            table.row([field.to_owned(), value])?;
        }
        if let Some(ran) = &self.last_run {
            table.row(["lastRun".to_owned(), last_run_line(ran)])?;
        }
        Ok(())
    }
}

/// What the heading above a lock's table says: the lock, what it is, and
/// how many hold and wait.
fn heading(lock: &LockSummary) -> String {
    let holders = match (lock.kind, lock.max_leases) {
        (LockKind::Semaphore, Some(max)) => format!(
            "{} of {}",
            lock.holders,
            output::counted(max, "lease held", "leases held")
        ),
        (LockKind::Semaphore, None) => output::counted(lock.holders, "lease held", "leases held"),
        _ => output::counted(lock.holders, "holder", "holders"),
    };
    let what = match lock.kind {
        LockKind::Election => "election".to_owned(),
        LockKind::Leader => "leader node".to_owned(),
        kind => format!("{} lock", kind.as_str()),
    };
    format!(
        "{}: {what} ({}), {holders}, {}",
        crate::names::shown(&lock.path),
        lock.dialect,
        output::counted(lock.waiters, "waiter", "waiters")
    )
}

/// The wait-for graph of the locks around the lock `listed` at `path`, the
/// tree chains are followed in ([`chains_under`]), without that lock's
/// queue: `stat` reads it apart, a window at a time.
async fn graph_around(
    globals: &Globals,
    session: &Session,
    path: &str,
    listed: &ListedLock<'_>,
) -> Result<GraphBuilder> {
    let under = chains_under(&globals.root, path);
    let progress = globals.printer.progress();
    let mut graph = GraphBuilder::default();
    model::walk_around(
        session,
        under,
        listed,
        |p| show_progress(progress.as_ref(), under, p),
        |lock| {
            graph.add(&lock);
            Ok(())
        },
    )
    .await?;
    Ok(graph)
}

/// A waiter as JSON: the contender, and its chain beyond its queue.
#[derive(Serialize)]
struct WaiterJson<'a> {
    #[serde(flatten)]
    contender: model::ContenderJson<'a>,
    blocked_by: &'a [HopJson],
}

/// Prints a lock in full as its windows come in: as a heading and a table
/// of its contenders, or as the same JSON object as one element of `ls`,
/// whose holders come first in queue order and are followed by its waiters,
/// each with its chain (`blocked_by`).
async fn print_lock(
    printer: &Printer,
    survey: &Survey,
    (summary, hops, last_run): (LockSummary, Vec<HopJson>, Option<Ran>),
    mut windows: LockWindows<'_>,
) -> Result<()> {
    printer.table_heading(&heading(&summary))?;
    if let Some(ran) = &last_run {
        printer.table_heading(&last_run_line(ran))?;
    }
    let fields = [
        ("path", serde_json::to_value(&summary.path)?),
        ("kind", serde_json::to_value(summary.kind)?),
        ("dialect", serde_json::to_value(summary.dialect)?),
        ("last_run", last_run_json(last_run.as_ref())),
    ];
    let mut listing = printer.listing(CONTENDER_COLUMNS, Some((&fields, "holders")), None)?;
    let mut among_holders = true;
    let mut detached = Vec::new();
    let printed = async {
        while let Some(window) = windows.next().await? {
            for (mut contender, holding) in window {
                contender.attach_client(survey);
                if among_holders && !holding {
                    listing.next_array("waiters")?;
                    among_holders = false;
                }
                let row = contender_row(&summary.path, &contender, holding);
                let push = |table: &mut Table<'_>| table.row(row);
                if holding {
                    detached.extend(detached_line(&summary.path, &contender));
                    listing.push(&contender.json(false), push)?;
                } else {
                    let waiter = WaiterJson {
                        contender: contender.json(false),
                        blocked_by: &hops,
                    };
                    listing.push(&waiter, push)?;
                }
            }
        }
        if among_holders {
            listing.next_array("waiters")?;
        }
        anyhow::Ok(())
    }
    .await;
    listing.close(printed)?;
    if printer.format == output::Format::Table && !detached.is_empty() {
        printer.line("")?;
        printer.paragraph(
            "Detached holders, which outlive the process that started them:",
            CHAIN_INDENT,
        )?;
        for line in detached {
            printer.paragraph(&line, CHAIN_INDENT)?;
        }
    }
    if printer.format == output::Format::Table && !hops.is_empty() {
        for line in chain_lines(&hops) {
            printer.paragraph(&line, CHAIN_INDENT)?;
        }
    }
    Ok(())
}

/// What ends a detached holder of the lock at `lock`, and who started it,
/// as its owner record says: `lock-0000000001: started by pid 4242; ends
/// on release, or when pid 4242 ends, or 10m after its grant`. `None` for
/// any other holder.
fn detached_line(lock: &str, holder: &model::Contender) -> Option<String> {
    let detached = holder.owner()?.detached?;
    let started = detached
        .started_by
        .map_or_else(String::new, |p| format!("started by pid {}; ", p.pid));
    let ends: Vec<String> = std::iter::once("on release".to_owned())
        .chain(
            detached
                .while_pid
                .map(|p| format!("when pid {} ends", p.pid)),
        )
        .chain(detached.lease_ms.map(|ms| {
            let lease = std::time::Duration::from_millis(ms);
            format!("{} after its grant", humantime::format_duration(lease))
        }))
        .collect();
    let node = super::relative(lock, &holder.path);
    Some(format!("  {node}: {started}ends {}", ends.join(", or ")))
}

/// Shows the lock at the path, or the node's stat when it is not a lock; a
/// missing node exits 6.
pub(crate) async fn run(globals: &Globals, args: StatArgs) -> Result<ExitStatus> {
    with_session_and_survey(
        globals,
        Ask::ConnectionsAndWatches,
        async |session, survey| show(globals, session, survey, args.path).await,
    )
    .await?;
    Ok(ExitStatus::Success)
}

/// Shows the lock at `path`, each waiter with its chain, or the node's
/// stat. A long queue is read twice, a window at a time: once for its
/// summary (printed first, it depends on every contender), handing each
/// window meanwhile to the [`Focus`](crate::model::waitfor::Focus) that
/// keeps what the chains need of it; once more to print it.
async fn show(globals: &Globals, session: &Session, survey: &Survey, path: String) -> Result<()> {
    let Some(listed) = model::list_lock(session, &path).await? else {
        return show_node(globals, session, path).await;
    };
    let mut graph = None;
    if listed.may_have_waiters() {
        graph = Some(graph_around(globals, session, &path, &listed).await?);
    }
    // A lock the walk read whole is in the graph already.
    let mut focus = graph
        .as_ref()
        .filter(|graph| !graph.has_lock(&path))
        .map(GraphBuilder::focus);
    let read = listed.read(|window| {
        if let Some(focus) = &mut focus {
            for (contender, holding) in window {
                focus.offer(contender, *holding);
            }
        }
    });
    let Some((summary, windows)) = read.await? else {
        return show_node(globals, session, path).await;
    };
    let hops = match graph {
        Some(mut graph) if summary.waiters > 0 => {
            if let Some(focus) = focus {
                graph.add_focus(focus, &summary);
            }
            chain(&graph.finish(), &path)
        }
        _ => Vec::new(),
    };
    let last_run = once::last_run_of(session, &path).await;
    print_lock(&globals.printer, survey, (summary, hops, last_run), windows).await
}

/// Shows a node that is not a lock: its stat and data.
async fn show_node(globals: &Globals, session: &Session, path: String) -> Result<()> {
    let (data, stat) = session.get_data(&path).await?;
    globals.printer.report(&NodeReport {
        path,
        stat: NodeStat::from(&stat),
        data: output::data_text(&data),
        last_run: once::last_run(&data),
    })
}
