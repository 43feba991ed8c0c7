//! `zklock deadlocks [PATH]`: every wait-for cycle (or semaphore knot)
//! among the locks under PATH, certain or possible, each with the
//! `release` command that breaks it.

use std::time::Duration;

use anyhow::Result;
use serde::Serialize;

use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::model::cycles::{confirmed, wait_graph};
use crate::model::is_absent;
use crate::model::waitfor::{Cycle, Via, WaitGraph};
use crate::output::{self, Column, Report, Table};
use crate::zk;

use super::{note_unreadable, release_command, show_progress, with_session};

/// What `deadlocks` was asked for.
#[derive(Debug)]
pub struct DeadlocksArgs {
    /// The absolute path to look below.
    pub path: String,
    /// Whether PATH was named: a named path that does not exist is an
    /// error, while an absent default root only means there is no cycle.
    pub named: bool,
    /// Only cycles that have stood at least this long.
    pub min_age: Option<Duration>,
    /// Only certain cycles.
    pub certain: bool,
}

/// One contender of a cycle, as JSON.
#[derive(Debug, Serialize)]
struct Party {
    node: String,
    session: String,
    owner: String,
}

/// One wait of a cycle: the waiter, in the lock, on the holder, whose
/// owner waits on the next edge's waiter `via` what.
#[derive(Debug, Serialize)]
struct Edge {
    lock: String,
    waiter: Party,
    holder: Party,
    via: Via,
}

/// A cycle as `deadlocks` prints it.
#[derive(Debug, Serialize)]
struct Found {
    certain: bool,
    since_ms: i64,
    edges: Vec<Edge>,
    break_with: String,
}

/// Every cycle found, in the order found.
#[derive(Debug, Serialize)]
#[serde(transparent)]
struct Deadlocks(Vec<Found>);

/// One row per wait: the cycle, its waiter's and holder's sessions, how
/// the holder's owner waits on, and the lock.
const COLUMNS: &[Column] = &[
    Column::whole("CYCLE"),
    Column::whole("WAITER"),
    Column::whole("HOLDER"),
    Column::whole("VIA"),
    Column::text("LOCK"),
];

impl Report for Deadlocks {
    fn columns(&self) -> &'static [Column] {
        COLUMNS
    }

    fn rows(&self, table: &mut Table<'_>) -> std::io::Result<()> {
        for (number, cycle) in self.0.iter().enumerate() {
            for edge in &cycle.edges {
                table.row([
                    (number + 1).to_string(),
                    edge.waiter.session.clone(),
                    edge.holder.session.clone(),
                    edge.via.as_str().to_owned(),
                    edge.lock.clone(),
                ])?;
            }
        }
        Ok(())
    }
}

impl Deadlocks {
    /// The lines above the table, one per cycle: whether it is certain, how
    /// long it has stood and the release that breaks it; then a blank one.
    fn heading_lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .0
            .iter()
            .enumerate()
            .map(|(number, cycle)| {
                let how = if cycle.certain { "certain" } else { "possible" };
                format!(
                    "cycle {}: {how}, for {}; break it with: {}",
                    number + 1,
                    output::format_age_ms(cycle.since_ms),
                    cycle.break_with
                )
            })
            .collect();
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines
    }
}

/// Finds and prints the cycles under the path; exits 1 when any is found.
pub(crate) async fn run(globals: &Globals, args: DeadlocksArgs) -> Result<ExitStatus> {
    let printer = &globals.printer;
    let (walked, found) = with_session(globals, async |session| {
        let progress = printer.progress();
        let shown = |p: &_| show_progress(progress.as_ref(), &args.path, p);
        let (walked, graph) = match wait_graph(session, &args.path, shown).await {
            Err(err) if !args.named && is_absent(&err, &args.path) => Default::default(),
            read => read?,
        };
        let cycles = confirmed(session, &args.path, &graph, graph.cycles()).await?;
        let found = cycles
            .into_iter()
            .filter(|cycle| args.certain <= cycle.certain)
            .filter(|cycle| {
                args.min_age
                    .is_none_or(|age| cycle.since_ms >= age.as_millis() as i64)
            })
            .map(|cycle| found(&graph, &cycle))
            .collect();
        Ok((walked, found))
    })
    .await?;
    note_unreadable(printer, &walked);
    let found = Deadlocks(found);
    if printer.format == output::Format::Table {
        for line in found.heading_lines() {
            printer.line(&line)?;
        }
    }
    printer.report(&found)?;
    Ok(if found.0.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Found
    })
}

/// A cycle as printed, from the graph's indexes.
fn found(graph: &WaitGraph, cycle: &Cycle) -> Found {
    let party = |v: usize| {
        let vertex = &graph.contenders[v];
        Party {
            node: vertex.path.clone(),
            session: zk::format_session(vertex.session),
            owner: vertex.owner_text.clone(),
        }
    };
    let edges = cycle
        .edges
        .iter()
        .map(|&(waiter, holder, via)| Edge {
            lock: graph.locks[graph.contenders[waiter].lock].path.clone(),
            waiter: party(waiter),
            holder: party(holder),
            via,
        })
        .collect();
    Found {
        certain: cycle.certain,
        since_ms: cycle.since_ms,
        edges,
        break_with: release_command(&graph.contenders[cycle.youngest].path),
    }
}
