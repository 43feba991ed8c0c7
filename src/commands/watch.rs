//! `zklock watch LOCK|PATH`: a live stream of lock events under a path, one
//! line each (JSON Lines with `-o json`), until `--until`, `--count` or
//! `--timeout` ends it. The events come from [`LockWatch`]; this module
//! prints them and decides when to stop.

use std::time::Duration;

use anyhow::Result;

use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::output::{self, Format, Printer};
use crate::run::Signals;
use crate::watch::{Ending, EventKind, LockEvent, LockWatch};
use crate::zk;

use super::state;

/// What `watch` was asked for.
#[derive(Clone, Debug)]
pub struct WatchArgs {
    /// The lock, or a path with locks below it.
    pub target: String,
    /// End when the locks reach this state.
    pub until: Option<Until>,
    /// Exit 1 when this runs out first.
    pub timeout: Option<Duration>,
    /// End after this many changes.
    pub count: Option<u64>,
}

/// The state `--until` waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Until {
    /// No lock under the path has a holder.
    Free,
    /// Some lock under the path has a holder.
    Held,
}

impl Until {
    fn reached(self, watch: &LockWatch) -> bool {
        let (holders, _) = watch.totals();
        match self {
            Until::Free => holders == 0,
            Until::Held => holders > 0,
        }
    }
}

/// Why the stream ended.
enum End {
    Done,
    Interrupted(i32),
}

/// Prints the locks under the path and their changes until told to stop.
pub(crate) async fn run(globals: &Globals, args: WatchArgs) -> Result<ExitStatus> {
    let mut signals = Signals::catch()?;
    // Connecting is bounded by --connect-timeout; --timeout counts from the
    // first reading, so a state that already holds is always seen.
    let started = tokio::select! {
        started = LockWatch::start(globals.connect.clone(), globals.admin_port, args.target.clone()) => started?,
        signal = signals.next() => return Ok(ExitStatus::Interrupted(signal)),
    };
    let (mut watch, first) = started;
    let timed_out = async {
        match args.timeout {
            Some(timeout) => tokio::time::sleep(timeout).await,
            None => std::future::pending().await,
        }
    };
    let ended = tokio::select! {
        biased;
        ended = follow(&globals.printer, &args, &mut watch, first, &mut signals) => ended,
        () = timed_out => Ok(None),
    };
    watch.close().await;
    Ok(match ended? {
        Some(End::Done) => ExitStatus::Success,
        Some(End::Interrupted(signal)) => ExitStatus::Interrupted(signal),
        None => timeout(&globals.printer, &args),
    })
}

fn timeout(printer: &Printer, args: &WatchArgs) -> ExitStatus {
    if args.until.is_some() || args.count.is_some() {
        printer.note(&format!(
            "timed out watching {} (--timeout {})",
            args.target,
            humantime::format_duration(args.timeout.unwrap_or_default())
        ));
    }
    ExitStatus::TimedOut
}

/// Prints the first events and then every change, until `--until` or
/// `--count` is satisfied or a signal comes.
async fn follow(
    printer: &Printer,
    args: &WatchArgs,
    watch: &mut LockWatch,
    first: Vec<LockEvent>,
    signals: &mut Signals,
) -> Result<Option<End>> {
    for event in &first {
        print(printer, event)?;
    }
    let mut changes = 0;
    loop {
        if args.until.is_some_and(|until| until.reached(watch)) {
            return Ok(Some(End::Done));
        }
        let events = tokio::select! {
            events = watch.next() => events?,
            signal = signals.next() => return Ok(Some(End::Interrupted(signal))),
        };
        for event in &events {
            print(printer, event)?;
            if event.kind.is_change() {
                changes += 1;
                if args.count == Some(changes) {
                    return Ok(Some(End::Done));
                }
            }
        }
    }
}

fn print(printer: &Printer, event: &LockEvent) -> Result<()> {
    match printer.format {
        Format::Json => printer.json_line(event),
        Format::Table => printer.line(&line(event)),
    }
}

/// An event for people: the time, the event, the node (or lock) and what
/// matters about it.
fn line(event: &LockEvent) -> String {
    let time = output::format_local_ms(event.time_ms);
    let kind = event.kind.as_str();
    let counts = format!("[{} holding, {} waiting]", event.holders, event.waiters);
    let Some(contender) = &event.contender else {
        let what = match event.kind {
            EventKind::Watching => "the state above is current; changes follow",
            EventKind::Gone => "the lock directory was deleted",
            _ => "connection to ZooKeeper was lost: changes meanwhile may be missing; read again",
        };
        return format!("{time}  {kind:<8}  {}  {what}  {counts}", event.lock);
    };
    let holding = matches!(event.kind, EventKind::Holding | EventKind::Acquired);
    let standing = match event.kind {
        EventKind::Released | EventKind::Left => String::new(),
        _ if holding => format!("  fence {}", contender.fence()),
        _ => format!("  {}", state(&event.lock, contender, false)),
    };
    format!(
        "{time}  {kind:<8}  {}  {}{standing}  session {}  {}{}  {counts}",
        contender.path,
        contender.mode.as_str(),
        zk::format_session(contender.session()),
        contender.owner_text(),
        ending(&event.ending),
    )
}

/// What an event says of the hold or wait it ends: how long it lasted
/// and how a hold ended, with the evidence; empty when it ends none.
fn ending(ending: &Ending) -> String {
    let mut text = String::new();
    if let Some(ms) = ending.waited_ms {
        text += &format!("  waited {}", output::format_age_ms(ms));
    }
    if let Some(ms) = ending.held_ms {
        text += &format!("  held {}", output::format_age_ms(ms));
    }
    if let Some(end) = ending.how {
        text += &format!("  {} ({})", end.how.as_str(), end.evidence.as_str());
    }
    text
}
