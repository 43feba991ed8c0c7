//! `zklock deadlocks [PATH]`: every wait-for cycle (or semaphore knot)
//! among the locks under PATH, certain or possible (and why only
//! possible), each with the owners of its waits, as `stat` names them, and
//! the `release` command that breaks it.
//!
//! A lock with many waits in one cycle (a full semaphore's waiters on its
//! lease holders, a writer behind many readers) is printed as one summary
//! of counts and a few of each side, not pair by pair: a semaphore of
//! 2,000 leases and 2,000 waiters would otherwise be four million lines.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use anyhow::Result;
use serde::Serialize;

use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::model::cycles::{confirmed, wait_graph};
use crate::model::is_absent;
use crate::model::waitfor::{Cycle, Doubt, Knot, Via, WaitGraph};
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

/// Up to this many waits of one lock in a cycle are printed pair by pair;
/// more are summarised.
const PAIRS_SHOWN: usize = 16;

/// How many waiters and holders a summary names.
const SAMPLE: usize = 3;

/// One contender of a cycle, as JSON.
#[derive(Debug, Serialize)]
struct Party {
    node: String,
    session: String,
    owner: String,
    /// The program its owner record names, if any.
    command: Option<String>,
    /// In a summary's holders: how this holder's owner waits on.
    #[serde(skip_serializing_if = "Option::is_none")]
    via: Option<Via>,
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

/// How the waiters of a summary wait on its holders.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
enum Waits {
    /// Each goes on once any one of the holders does.
    Semaphore,
    /// Each on those its queue names (a writer on every reader ahead).
    Queue,
}

impl Waits {
    fn as_str(self) -> &'static str {
        match self {
            Waits::Semaphore => "semaphore",
            Waits::Queue => "queue",
        }
    }
}

/// Every contender of one side of a summary: how many, and the first few.
#[derive(Debug, Serialize)]
struct Sample {
    count: usize,
    sample: Vec<Party>,
}

impl Sample {
    /// Its first session, and how many more there are: `0x1f00 +299`.
    fn shown(&self) -> String {
        let first = self.sample.first().map_or("-", |party| &party.session);
        match self.count {
            0 | 1 => first.to_owned(),
            n => format!("{first} +{}", n - 1),
        }
    }

    /// Its first owner, as [`Party::shown`] puts it, and how many more
    /// there are: `ci@build7 pid 4242 make +299`.
    fn owner(&self) -> String {
        let first = self
            .sample
            .first()
            .map_or_else(|| "-".to_owned(), Party::shown);
        match self.count {
            0 | 1 => first,
            n => format!("{first} +{}", n - 1),
        }
    }
}

impl Party {
    /// Its owner as `stat` names it, and the program it runs:
    /// `ci@build7 pid 4242 make`.
    fn shown(&self) -> String {
        match &self.command {
            Some(command) => format!("{} {command}", self.owner),
            None => self.owner.clone(),
        }
    }
}

/// The many waits of one lock in a cycle: its waiters there and the
/// holders they wait on, each side counted and sampled.
#[derive(Debug, Serialize)]
struct Summary {
    lock: String,
    via: Waits,
    waiters: Sample,
    holders: Sample,
}

/// One entry of a cycle's `edges`: a wait, or a summary of a lock's many.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Entry {
    Pair(Edge),
    Summary(Summary),
}

/// A cycle as `deadlocks` prints it.
#[derive(Debug, Serialize)]
struct Found {
    certain: bool,
    /// Why it is only possible; empty when it is certain.
    doubts: Vec<Doubt>,
    since_ms: i64,
    edges: Vec<Entry>,
    break_with: String,
}

/// Every cycle found, in the order found.
#[derive(Debug, Serialize)]
#[serde(transparent)]
struct Deadlocks(Vec<Found>);

/// One row per wait: the cycle, its waiter's and holder's owners (as
/// `stat` names them) and sessions (`-o wide`), how the holder's owner
/// waits on, and the lock; for a summary, the first waiter's and holder's
/// with how many more, and how they wait. A row too wide gives up VIA,
/// then cuts the owners.
const COLUMNS: &[Column] = &[
    Column::whole("CYCLE"),
    Column::text("WAITER"),
    Column::whole("WAITER SESSION").wide(),
    Column::text("HOLDER"),
    Column::whole("HOLDER SESSION").wide(),
    Column::whole("VIA").goes(1),
    Column::whole("LOCK"),
];

impl Report for Deadlocks {
    fn columns(&self) -> &'static [Column] {
        COLUMNS
    }

    fn rows(&self, table: &mut Table<'_>) -> std::io::Result<()> {
        for (number, cycle) in self.0.iter().enumerate() {
            for entry in &cycle.edges {
                let [waiter, waiter_session, holder, holder_session, via, lock] = match entry {
                    Entry::Pair(edge) => [
                        edge.waiter.shown(),
                        edge.waiter.session.clone(),
                        edge.holder.shown(),
                        edge.holder.session.clone(),
                        edge.via.as_str().to_owned(),
                        edge.lock.clone(),
                    ],
                    Entry::Summary(summary) => [
                        summary.waiters.owner(),
                        summary.waiters.shown(),
                        summary.holders.owner(),
                        summary.holders.shown(),
                        summary.via.as_str().to_owned(),
                        summary.lock.clone(),
                    ],
                };
                let number = (number + 1).to_string();
                table.row([
                    number,
                    waiter,
                    waiter_session,
                    holder,
                    holder_session,
                    via,
                    lock,
                ])?;
            }
        }
        Ok(())
    }
}

impl Deadlocks {
    /// The lines above the table, for each cycle: whether it is certain,
    /// how long it has stood and the release that breaks it, and why it is
    /// only possible; then a blank one.
    fn heading_lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .0
            .iter()
            .enumerate()
            .flat_map(|(number, cycle)| {
                let how = if cycle.certain { "certain" } else { "possible" };
                let heading = format!(
                    "cycle {}: {how}, for {}; break it with: {}",
                    number + 1,
                    output::format_age_ms(cycle.since_ms),
                    cycle.break_with
                );
                let doubts: Vec<&str> = cycle.doubts.iter().map(|&d| doubt_text(d)).collect();
                let why =
                    (!doubts.is_empty()).then(|| format!("  only possible: {}", doubts.join("; ")));
                std::iter::once(heading).chain(why)
            })
            .collect();
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines
    }
}

/// Why a cycle is only possible, for people.
fn doubt_text(doubt: Doubt) -> &'static str {
    match doubt {
        Doubt::Deadline => "a waiter gives up at its -w deadline",
        Doubt::Semaphore => "a semaphore, whose waiters go on once any one lease holder does",
        Doubt::Session => {
            "a session whose process zklock cannot see (it may serve threads that go on)"
        }
        Doubt::Detached => {
            "a detached holder (its starter may run the waiter in the background, or release \
             the hold later)"
        }
        Doubt::Changed => "a node changed between two readings",
    }
}

/// What `deadlocks` says when it finds no cycle: none under the path, of
/// those asked for.
fn none_found(args: &DeadlocksArgs) -> String {
    let certain = if args.certain { "certain " } else { "" };
    let standing = args.min_age.map_or_else(String::new, |age| {
        format!(" standing {}", humantime::format_duration(age))
    });
    format!("no {certain}wait-for cycles{standing} under {}", args.path)
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
            .filter(|cycle| args.certain <= cycle.certain())
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
    if found.0.is_empty() {
        printer.note(&none_found(&args));
        return Ok(ExitStatus::Success);
    }
    Ok(ExitStatus::Found)
}

/// A cycle as printed, from the graph's indexes.
fn found(graph: &WaitGraph, cycle: &Cycle) -> Found {
    Found {
        certain: cycle.certain(),
        doubts: cycle.doubts.clone(),
        since_ms: cycle.since_ms,
        edges: entries(graph, cycle),
        break_with: release_command(&graph.contenders[cycle.youngest].path),
    }
}

/// The cycle's waits as printed: lock by lock in the order the cycle
/// first names them, each lock's waits pair by pair when they are few,
/// else as one summary; then its knots, alike.
fn entries(graph: &WaitGraph, cycle: &Cycle) -> Vec<Entry> {
    let mut locks = Vec::new();
    let mut by_lock: HashMap<usize, Vec<(usize, usize, Via)>> = HashMap::new();
    for &edge in &cycle.edges {
        let lock = graph.contenders[edge.0].lock;
        by_lock
            .entry(lock)
            .or_insert_with(|| {
                locks.push(lock);
                Vec::new()
            })
            .push(edge);
    }
    let queues = locks.into_iter().flat_map(|lock| {
        let pairs = by_lock.remove(&lock).unwrap_or_default();
        if pairs.len() <= PAIRS_SHOWN {
            let pairs = pairs.into_iter();
            return pairs.map(|pair| pair_entry(graph, pair)).collect();
        }
        let waiters = distinct(pairs.iter().map(|&(w, _, _)| (w, None)));
        let holders = distinct(pairs.iter().map(|&(_, h, via)| (h, Some(via))));
        vec![summary(graph, lock, Waits::Queue, waiters, holders)]
    });
    let knots = cycle
        .knots
        .iter()
        .flat_map(|knot| knot_entries(graph, knot));
    queues.chain(knots).collect()
}

/// A knot's waits: every waiter on every holder when that is few pairs,
/// else one summary.
fn knot_entries(graph: &WaitGraph, knot: &Knot) -> Vec<Entry> {
    let pairs = knot.waiters.len().saturating_mul(knot.holders.len());
    if pairs <= PAIRS_SHOWN {
        let pairs = knot.waiters.iter().flat_map(|&waiter| {
            knot.holders
                .iter()
                .map(move |&(holder, via)| (waiter, holder, via))
        });
        return pairs.map(|pair| pair_entry(graph, pair)).collect();
    }
    let waiters = knot.waiters.iter().map(|&w| (w, None)).collect();
    let holders = knot
        .holders
        .iter()
        .map(|&(h, via)| (h, Some(via)))
        .collect();
    vec![summary(
        graph,
        knot.lock,
        Waits::Semaphore,
        waiters,
        holders,
    )]
}

/// The contenders of `sides`, each once, in their first order.
fn distinct(sides: impl Iterator<Item = (usize, Option<Via>)>) -> Vec<(usize, Option<Via>)> {
    let mut seen = HashSet::new();
    sides.filter(|&(v, _)| seen.insert(v)).collect()
}

fn pair_entry(graph: &WaitGraph, (waiter, holder, via): (usize, usize, Via)) -> Entry {
    Entry::Pair(Edge {
        lock: graph.locks[graph.contenders[waiter].lock].path.clone(),
        waiter: party(graph, waiter, None),
        holder: party(graph, holder, None),
        via,
    })
}

fn summary(
    graph: &WaitGraph,
    lock: usize,
    via: Waits,
    waiters: Vec<(usize, Option<Via>)>,
    holders: Vec<(usize, Option<Via>)>,
) -> Entry {
    let sample = |side: Vec<(usize, Option<Via>)>| Sample {
        count: side.len(),
        sample: side
            .into_iter()
            .take(SAMPLE)
            .map(|(v, via)| party(graph, v, via))
            .collect(),
    };
    Entry::Summary(Summary {
        lock: graph.locks[lock].path.clone(),
        via,
        waiters: sample(waiters),
        holders: sample(holders),
    })
}

/// The contender `v` as printed.
fn party(graph: &WaitGraph, v: usize, via: Option<Via>) -> Party {
    let vertex = &graph.contenders[v];
    Party {
        node: vertex.path.clone(),
        session: zk::format_session(vertex.session),
        owner: vertex.owner_text.clone(),
        command: vertex.program.clone(),
        via,
    }
}
