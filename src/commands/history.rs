//! `zklock history [LOCK|PATH] --data-dir DIR`: every hold of every lock,
//! rebuilt offline from a ZooKeeper server's transaction logs, and how each
//! ended. The reading and the replay are `history`'s; this maps the
//! arguments and renders what it hands out, as it hands it out.

use anyhow::Result;
use serde::Serialize;

use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::history::{
    self, Durations, Found, Gap, Hold, Holder, How, LockSummary, Overlap, Scope, Source, Who,
    Window,
};
use crate::lock::end::Ender;
use crate::lock::{ContenderMode, Owner};
use crate::output::{Column, Format, Report, Table, format_age_ms, format_local_ms};
use crate::zk;

use super::node_sequence;

/// What `history` was asked for.
#[derive(Debug)]
pub struct HistoryArgs {
    /// The lock, or the path below which every lock is shown.
    pub path: String,
    pub source: Source,
    /// Only contenders alive at some moment of this window (ms since the
    /// epoch).
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    /// Show the overlaps (two holders at once) instead of the holds.
    pub overlaps: bool,
}

pub(crate) async fn run(globals: &Globals, args: HistoryArgs) -> Result<ExitStatus> {
    let printer = &globals.printer;
    let plan = history::plan(&args.source, args.since_ms)?;
    if let Some(gap) = &plan.gap {
        printer.note(&gap_text(gap));
    }
    let total = plan
        .files()
        .filter_map(|file| std::fs::metadata(file).ok())
        .map(|meta| meta.len())
        .sum();
    let progress = printer.progress_bar(total, "reading the transaction logs");
    let (columns, key) = if args.overlaps {
        (OVERLAPS, "overlaps")
    } else {
        (HOLDS, "holds")
    };
    let mut listing = printer.listing(columns, Some((&[], key)), progress.as_ref())?;
    let mut failed = None;
    let window = Window {
        since_ms: args.since_ms,
        until_ms: args.until_ms,
    };
    let replayed = history::replay(
        &plan,
        Scope { path: args.path },
        window,
        args.overlaps,
        &mut |done| {
            if let Some(progress) = &progress {
                progress.set_position(done);
            }
        },
        &mut |found| {
            if failed.is_some() {
                return;
            }
            let pushed = match &found {
                Found::Hold(hold) if !args.overlaps => {
                    listing.push(&Deferred(hold), |table| hold_row(table, hold))
                }
                Found::Overlap(overlap) => listing.push(&OverlapJson::of(overlap), |table| {
                    overlap_row(table, overlap)
                }),
                Found::Hold(_) => Ok(()),
            };
            if let Err(err) = pushed {
                failed = Some(err);
            }
        },
    );
    if let Some(err) = failed {
        return listing.close(Err(err));
    }
    let summaries: Vec<SummaryJson> = if args.overlaps {
        Vec::new()
    } else {
        replayed.summaries.iter().map(SummaryJson::of).collect()
    };
    if printer.format == Format::Json && !args.overlaps {
        listing.next_array("locks")?;
        for summary in &summaries {
            listing.push(summary, |_| Ok(()))?;
        }
    }
    listing.finish()?;
    drop(progress);
    if printer.format == Format::Table && !summaries.is_empty() {
        // The locks' table of its own, below the holds'.
        println!();
        printer.report(&Summaries(&summaries))?;
    }
    match replayed.stopped {
        Some(err) => Err(err.into()),
        None => Ok(ExitStatus::Success),
    }
}

/// Why the history of a data directory starts where it does.
fn gap_text(gap: &Gap) -> String {
    let logged = gap
        .logged_until
        .map_or_else(String::new, |zxid| format!(" after {zxid:#x}"));
    format!(
        "this server's own logs lack transactions{logged} up to {:#x}: it applied them from a \
         snapshot its leader sent (or after its log was cut back), and saved it as that \
         snapshot; the history starts there, and what came before is in another member's data \
         directory",
        gap.snapshot
    )
}

/// The columns of the holds' table: one row per contender.
const HOLDS: &[Column] = &[
    Column::whole("LOCK"),
    Column::whole("NODE").wide(),
    Column::whole("SEQ"),
    Column::whole("DIALECT").wide(),
    Column::whole("MODE").wide(),
    Column::whole("SESSION"),
    Column::whole("FENCE").wide(),
    Column::whole("CREATED").wide(),
    Column::whole("HOLDING FROM"),
    Column::whole("ENDED").wide(),
    Column::whole("WAITED").wide(),
    Column::whole("HELD"),
    Column::sentence("HOW"),
    Column::text("OWNER"),
];

fn hold_row(table: &mut Table<'_>, hold: &Hold) -> std::io::Result<()> {
    let dash = || "-".to_owned();
    let time = |ms: Option<i64>| ms.map_or_else(dash, format_local_ms);
    let span = |ms: Option<i64>| ms.map_or_else(dash, format_age_ms);
    table.row([
        hold.lock.clone(),
        hold.node.clone(),
        node_sequence(&hold.node).unwrap_or("-").to_owned(),
        hold.dialect.as_str().to_owned(),
        hold.mode.as_str().to_owned(),
        zk::format_session(hold.session),
        hold.fence.to_string(),
        format_local_ms(hold.created_ms),
        time(hold.holding_ms),
        time(hold.end.as_ref().map(|end| end.at_ms)),
        span(hold.waited_ms()),
        span(hold.held_ms()),
        how_text(hold),
        hold.who.owner_text(hold.session),
    ])
}

/// How a contender ended, for people.
fn how_text(hold: &Hold) -> String {
    let Some(end) = &hold.end else {
        return if hold.holding_ms.is_some() {
            "still holding where the log ends".to_owned()
        } else {
            "still waiting where the log ends".to_owned()
        };
    };
    let said = match end.how {
        How::Released => "released by its own session",
        How::GaveUp => "gave up (never held)",
        How::MaxHold => "released at its --max-hold",
        How::Lost => "lost: its command was stopped, and it let go",
        How::ClosedByClient => "session closed by the client",
        How::Expired => "closed by the server (expired)",
        How::Broken => "broken: deleted by another session",
        How::Reaped => "reaped: deleted by another session",
        How::TtlExpired => "removed by the server (its TTL ran out)",
    };
    let mut text = said.to_owned();
    if let Some(session) = end.by_session {
        text += &format!(" {}", zk::format_session(session));
    }
    if let Some(breaker) = &end.breaker {
        text += &format!(", by {}", breaker.summary());
    }
    if let Some(reason) = &end.reason {
        text += &format!(": {reason:?}");
    }
    text
}

/// The columns of the overlaps' table: one row per span of two holders.
const OVERLAPS: &[Column] = &[
    Column::whole("LOCK"),
    Column::whole("FROM"),
    Column::whole("UNTIL"),
    Column::whole("LASTED"),
    Column::whole("ZXID").wide(),
    Column::sentence("HOLDERS"),
];

fn overlap_row(table: &mut Table<'_>, overlap: &Overlap) -> std::io::Result<()> {
    let holders: Vec<String> = overlap
        .holders
        .iter()
        .map(|holder| {
            format!(
                "{} ({} {}, session {}, fence {})",
                holder.node,
                holder.dialect.as_str(),
                holder.mode.as_str(),
                zk::format_session(holder.session),
                holder.fence
            )
        })
        .collect();
    table.row([
        overlap.lock.clone(),
        format_local_ms(overlap.from_ms),
        overlap
            .until_ms
            .map_or_else(|| "where the log ends".to_owned(), format_local_ms),
        overlap
            .until_ms
            .and_then(|until| until.checked_sub(overlap.from_ms))
            .map_or_else(|| "-".to_owned(), format_age_ms),
        overlap.from_zxid.to_string(),
        holders_text(holders, overlap.holder_count),
    ])
}

/// The holders named, and how many more held.
fn holders_text(named: Vec<String>, count: usize) -> String {
    let more = count.saturating_sub(named.len());
    let mut text = named.join("; ");
    if more > 0 {
        text += &format!("; and {more} more");
    }
    text
}

/// One overlap as JSON.
#[derive(Serialize)]
struct OverlapJson<'a> {
    lock: &'a str,
    from_ms: i64,
    from_zxid: i64,
    until_ms: Option<i64>,
    until_zxid: Option<i64>,
    holders: Vec<HolderJson<'a>>,
    holder_count: usize,
}

impl OverlapJson<'_> {
    fn of(overlap: &Overlap) -> OverlapJson<'_> {
        OverlapJson {
            lock: &overlap.lock,
            from_ms: overlap.from_ms,
            from_zxid: overlap.from_zxid,
            until_ms: overlap.until_ms,
            until_zxid: overlap.until_zxid,
            holders: overlap.holders.iter().map(HolderJson::of).collect(),
            holder_count: overlap.holder_count,
        }
    }
}

/// One holder of an overlap as JSON.
#[derive(Serialize)]
struct HolderJson<'a> {
    node: &'a str,
    dialect: &'static str,
    mode: ContenderMode,
    session: String,
    fence: i64,
}

impl HolderJson<'_> {
    fn of(holder: &Holder) -> HolderJson<'_> {
        HolderJson {
            node: &holder.node,
            dialect: holder.dialect.as_str(),
            mode: holder.mode,
            session: zk::format_session(holder.session),
            fence: holder.fence,
        }
    }
}

/// One contender as JSON.
#[derive(Serialize)]
struct HoldJson<'a> {
    lock: &'a str,
    node: &'a str,
    dialect: &'static str,
    mode: ContenderMode,
    session: String,
    fence: i64,
    owner: Option<&'a Owner>,
    /// The data as text, cut, when it is no owner record.
    data: Option<&'a str>,
    created_ms: i64,
    holding_ms: Option<i64>,
    ended_ms: Option<i64>,
    ended_zxid: Option<i64>,
    how: Option<&'static str>,
    ended_by: Option<String>,
    breaker: Option<&'a Ender>,
    reason: Option<&'a str>,
    waited_ms: Option<i64>,
    held_ms: Option<i64>,
    /// The same for the holds one zklock took together.
    set: Option<String>,
}

impl HoldJson<'_> {
    fn of(hold: &Hold) -> HoldJson<'_> {
        let end = hold.end.as_ref();
        HoldJson {
            lock: &hold.lock,
            node: &hold.node,
            dialect: hold.dialect.as_str(),
            mode: hold.mode,
            session: zk::format_session(hold.session),
            fence: hold.fence,
            owner: hold.who.owner(),
            data: match &hold.who {
                Who::Owner(_) => None,
                Who::Other { data, .. } => data.as_deref(),
            },
            created_ms: hold.created_ms,
            holding_ms: hold.holding_ms,
            ended_ms: end.map(|end| end.at_ms),
            ended_zxid: end.map(|end| end.zxid),
            how: end.map(|end| end.how.as_str()),
            ended_by: end.and_then(|end| end.by_session).map(zk::format_session),
            breaker: end.and_then(|end| end.breaker.as_ref()),
            reason: end.and_then(|end| end.reason.as_deref()),
            waited_ms: hold.waited_ms(),
            held_ms: hold.held_ms(),
            set: hold.set(),
        }
    }
}

/// A hold made into [`HoldJson`] only as it is written out: a table never
/// needs it so.
struct Deferred<'a>(&'a Hold);

impl Serialize for Deferred<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        HoldJson::of(self.0).serialize(serializer)
    }
}

/// Percentiles of durations, in ms.
#[derive(Serialize)]
struct Spread {
    p50: Option<i64>,
    p99: Option<i64>,
    max: Option<i64>,
}

impl Spread {
    fn of(durations: &Durations) -> Spread {
        Spread {
            p50: durations.quantile(0.5),
            p99: durations.quantile(0.99),
            max: durations.max(),
        }
    }
}

/// One lock's summary as JSON.
#[derive(Serialize)]
struct SummaryJson {
    lock: String,
    contenders: u64,
    holds: u64,
    unclean: u64,
    hold_ms: Spread,
    wait_ms: Spread,
}

impl SummaryJson {
    fn of((lock, summary): &(String, LockSummary)) -> SummaryJson {
        SummaryJson {
            lock: lock.clone(),
            contenders: summary.contenders,
            holds: summary.holds,
            unclean: summary.unclean,
            hold_ms: Spread::of(&summary.held),
            wait_ms: Spread::of(&summary.waited),
        }
    }
}

/// The summaries' table, below the holds'.
#[derive(Serialize)]
struct Summaries<'a>(&'a [SummaryJson]);

impl Report for Summaries<'_> {
    fn columns(&self) -> &'static [Column] {
        SUMMARY
    }

    fn rows(&self, table: &mut Table<'_>) -> std::io::Result<()> {
        let span = |ms: Option<i64>| ms.map_or_else(|| "-".to_owned(), format_age_ms);
        for summary in self.0 {
            table.row([
                summary.lock.clone(),
                summary.holds.to_string(),
                summary.unclean.to_string(),
                span(summary.hold_ms.p50),
                span(summary.hold_ms.p99),
                span(summary.hold_ms.max),
                span(summary.wait_ms.p50),
                span(summary.wait_ms.p99),
                span(summary.wait_ms.max),
            ])?;
        }
        Ok(())
    }
}

const SUMMARY: &[Column] = &[
    Column::whole("LOCK"),
    Column::whole("HOLDS"),
    Column::whole("UNCLEAN"),
    Column::whole("HOLD P50"),
    Column::whole("P99"),
    Column::whole("MAX"),
    Column::whole("WAIT P50"),
    Column::whole("P99"),
    Column::whole("MAX"),
];
