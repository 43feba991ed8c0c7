//! `zklock watch LOCK|PATH`: a live stream of lock events under a path, one
//! line each (JSON Lines with `-o json`), until `--until`, `--count` or
//! `--timeout` ends it. The events come from [`LockWatch`]; this module
//! prints them and decides when to stop.

use std::time::Duration;

use anyhow::Result;

use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::model::Contender;
use crate::output::{self, Format, Layout, Printer};
use crate::run::Signals;
use crate::watch::{EventKind, HoldEnd, Lasted, LockEvent, LockWatch};
use crate::zk;

use super::{node_sequence, state};

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
        started = LockWatch::start(globals.connect.clone(), &globals.admin_ports, args.target.clone()) => started?,
        signal = signals.next() => return Ok(ExitStatus::on_signal(signal)),
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
        Some(End::Interrupted(signal)) => ExitStatus::on_signal(signal),
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
        Format::Table if printer.wide => printer.line(&wide_line(event)),
        Format::Table => {
            // Read per event, so a resized terminal is followed.
            let width = Layout::for_stdout(false, true).width;
            for line in lines(event, width) {
                printer.line(&line)?;
            }
            Ok(())
        }
    }
}

/// How far a sentence below an event's line is indented: under its kind.
const INDENT: usize = 10;

/// An event as a person at a terminal `width` columns wide reads it: a line
/// of the clock time, the event, the lock and the node's sequence number
/// (identifiers, never cut: a lock too long for the line wraps with the
/// mark), its mode and state, and its owner cut to what is left of the
/// width, or left out when not even its first word fits; below it, indented, the sentence that goes with it
/// (how a hold or a wait ended, what a lock-wide event means), wrapped and
/// never cut. `None` is no width: nothing is cut or wrapped.
fn lines(event: &LockEvent, width: Option<usize>) -> Vec<String> {
    let clock = output::format_local_clock_ms(event.time_ms);
    let kind = event.kind.as_str();
    let lock = output::inert(&event.lock);
    let (head, sentence) = match &event.contender {
        None => (
            format!("{clock}  {kind:<8}  {lock}  {}", counts(event)),
            lock_sentence(event.kind).to_owned(),
        ),
        Some(contender) => {
            let node = node_label(&contender.path);
            let head = format!(
                "{clock}  {kind:<8}  {lock} {node}  {}{}",
                contender.mode.as_str(),
                standing(event, contender)
            );
            let owner = output::inert(&contender.owner_text()).into_owned();
            let room = width.map_or(usize::MAX, |width| {
                width.saturating_sub(unicode_width::UnicodeWidthStr::width(head.as_str()) + 2)
            });
            let head = match output::cut(&owner, room) {
                shown if room >= MIN_OWNER && !owner.is_empty() && shown != "…" => {
                    format!("{head}  {shown}")
                }
                _ => head,
            };
            (head, lasted_text(&event.lasted).trim_start().to_owned())
        }
    };
    // A lock too long for the line wraps, never cut.
    let mut lines = match width {
        Some(width) => output::hanging(&head, width, INDENT),
        None => vec![head],
    };
    let room = width.map(|width| width.saturating_sub(INDENT));
    let wrapped = match room {
        Some(room) if !sentence.is_empty() => output::wrap(&sentence, room.max(MIN_OWNER)),
        _ if !sentence.is_empty() => vec![sentence.as_str().into()],
        _ => Vec::new(),
    };
    let indent = " ".repeat(INDENT);
    lines.extend(wrapped.iter().map(|piece| format!("{indent}{piece}")));
    lines
}

/// The fewest columns worth showing an owner in; with less room the owner
/// is left to `-o wide`.
const MIN_OWNER: usize = 8;

/// A node as the default line names it: `#` and its sequence number, or
/// its name when it has none.
fn node_label(path: &str) -> String {
    match node_sequence(path) {
        Some(sequence) => format!("#{sequence}"),
        None => output::inert(zk::path::basename(path)).into_owned(),
    }
}

/// What a lock-wide event means.
fn lock_sentence(kind: EventKind) -> &'static str {
    match kind {
        EventKind::Watching => "the state above is current; changes follow",
        EventKind::Gone => "the lock directory was deleted",
        _ => "connection to ZooKeeper was lost: changes meanwhile may be missing; read again",
    }
}

/// How many hold and wait the lock after the event.
fn counts(event: &LockEvent) -> String {
    format!("[{} holding, {} waiting]", event.holders, event.waiters)
}

/// A contender's fence while it holds, whom it waits on while it waits,
/// nothing once it has gone; with the two spaces that set it off.
fn standing(event: &LockEvent, contender: &Contender) -> String {
    let holding = matches!(event.kind, EventKind::Holding | EventKind::Acquired);
    match event.kind {
        EventKind::Released | EventKind::Left => String::new(),
        EventKind::LockDelay => match crate::watch::lock_delay_ms(event) {
            Some(ms) => format!("  lock-delay {}", output::format_age_ms(ms as i64)),
            None => String::new(),
        },
        _ if holding => format!("  fence {}", contender.fence()),
        _ => format!("  {}", state(&event.lock, contender, false)),
    }
}

/// An event with everything on one line, nothing cut (`-o wide`): the
/// local date and time, the event, the node's full path, its mode and
/// state, session and owner, how it ended, and the lock's counts.
fn wide_line(event: &LockEvent) -> String {
    let time = output::format_local_ms(event.time_ms);
    let kind = event.kind.as_str();
    let Some(contender) = &event.contender else {
        return format!(
            "{time}  {kind:<8}  {}  {}  {}",
            event.lock,
            lock_sentence(event.kind),
            counts(event)
        );
    };
    format!(
        "{time}  {kind:<8}  {}  {}{}  session {}  {}{}  {}",
        contender.path,
        contender.mode.as_str(),
        standing(event, contender),
        zk::format_session(contender.session()),
        contender.owner_text(),
        lasted_text(&event.lasted),
        counts(event),
    )
}

/// What an event says of the hold or wait it ends: how long it lasted
/// and how a hold ended, with the evidence; empty when it ends none.
fn lasted_text(lasted: &Lasted) -> String {
    let mut text = String::new();
    if let Some(ms) = lasted.waited_ms {
        text += &format!("  waited {}", output::format_age_ms(ms));
    }
    if let Some(ms) = lasted.held_ms {
        text += &format!("  held {}", output::format_age_ms(ms));
    }
    match &lasted.how {
        Some(HoldEnd {
            how, by: Some(by), ..
        }) => {
            let who = format!("{}@{} pid {}", by.user, by.host, by.pid);
            let why = by.reason.as_deref().map(|reason| format!(": {reason}"));
            let said = format!("{who}{}", why.unwrap_or_default());
            text += &format!("  {} by {}", how.as_str(), output::inert(&said));
        }
        Some(end) => text += &format!("  {} ({})", end.how.as_str(), end.evidence.as_str()),
        None => {}
    }
    text
}
