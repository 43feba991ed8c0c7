//! What a run proves: the records verify kept as it went (every section
//! from its log, every holder's exit, every fault), checked once it is
//! over, into the [`Verdict`] the command prints.
//!
//! The checks:
//!
//! - no two sections that exclude each other overlap, but a paused
//!   holder's and a later one with a greater fence: a fencing resource
//!   would refuse the paused holder, and no client can stop it;
//! - fences grow in grant order: a writer's is greater than every fence
//!   granted before it, a reader's than every writer's before it;
//! - after a cut or a kill, the holder's command stopped before the
//!   server could expire its session (its last bytes through verify's proxy
//!   plus the session timeout) and before the next holder began: both
//!   margins must be positive;
//! - every holder's exit is the documented one for what happened to it;
//! - every fault asked for was injected, and nothing was left behind.
//!
//! Times are the host's monotonic clock in microseconds, which every
//! process of the host shares and no change of the wall clock moves; the
//! verdict shows them as wall-clock milliseconds.

use std::collections::HashMap;

use serde::Serialize;

use super::{Fault, KillTarget, Mode};

/// A section as its log lines and verify's pidfd told it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SectionRecord {
    pub run: u64,
    pub contender: usize,
    pub writes: bool,
    pub fence: i64,
    pub pid: i32,
    pub start_us: u64,
    /// When it stopped, and how; `None` if it never did.
    pub stop: Option<(u64, Stopped)>,
}

/// How a section stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stopped {
    /// verify told it to (its `end` line).
    Told,
    /// The kill signal ended it (its `stop` line).
    Signalled,
    /// It was killed without a word: the time is when verify saw it gone,
    /// a bound it ended before.
    Killed,
}

/// How a holder ended, as its wait status said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exit {
    Code(u8),
    Signal(i32),
}

impl Exit {
    pub(crate) fn of(status: i32) -> Exit {
        if libc::WIFSIGNALED(status) {
            Exit::Signal(libc::WTERMSIG(status))
        } else {
            Exit::Code(libc::WEXITSTATUS(status) as u8)
        }
    }

    fn shown(self) -> String {
        match self {
            Exit::Code(code) => code.to_string(),
            Exit::Signal(signal) => format!("killed by signal {signal}"),
        }
    }
}

/// What happened to a holder, which decides its documented exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    /// It waited and gave up at its `-w`: exit 1.
    GaveUp,
    /// It never held: ZooKeeper could not be reached, or its session was
    /// lost (the leader unheard too long) before the lock came: exit 3.
    Unreachable,
    /// Its section ran, and no fault hit it, but it lost its lock (a stall
    /// of the host, the network or the server): exit 4.
    LostHolding,
    /// Its section ran and ended on verify's word: exit 0.
    Ran,
    /// A fault hit it while it held.
    Faulted(Fault, Option<KillTarget>),
    /// It ended without running its section and without giving up: no
    /// exit is right for that.
    Stranded,
    /// verify ended it while cutting the run short: not checked.
    ShutDown,
}

impl Fate {
    /// The documented exit of a holder this happened to.
    fn expected(self) -> Option<Exit> {
        Some(match self {
            Fate::GaveUp => Exit::Code(1),
            Fate::Unreachable => Exit::Code(3),
            Fate::LostHolding => Exit::Code(4),
            Fate::Ran => Exit::Code(0),
            // The lock was lost while held; the command was stopped.
            Fate::Faulted(Fault::Cut | Fault::Pause, _) => Exit::Code(4),
            Fate::Faulted(Fault::Kill, Some(KillTarget::Guard)) => Exit::Code(10),
            Fate::Faulted(Fault::Kill, _) => Exit::Signal(libc::SIGKILL),
            Fate::ShutDown | Fate::Stranded => return None,
        })
    }
}

/// One holder process from start to exit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RunRecord {
    pub run: u64,
    pub contender: usize,
    pub fate: Fate,
    pub exit: Option<Exit>,
    /// The end of what it wrote to stderr.
    pub stderr: String,
}

/// One fault, as injected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FaultRecord {
    pub fault: Fault,
    pub target: Option<KillTarget>,
    pub run: u64,
    pub at_us: u64,
    /// For a pause: when the holder was continued.
    pub resumed_us: Option<u64>,
    /// The session timeout the holder was granted.
    pub timeout_ms: u64,
    /// When its bytes last went on to the server before its section
    /// stopped.
    pub last_sent_us: Option<u64>,
}

/// Everything a run leaves for the checks.
#[derive(Debug, Default)]
pub(crate) struct Records {
    pub sections: Vec<SectionRecord>,
    pub runs: Vec<RunRecord>,
    pub faults: Vec<FaultRecord>,
    /// Holders that did not end when they should have: what was seen.
    pub stuck: Vec<String>,
    /// Nodes and processes left when the run was over.
    pub nodes_left: Vec<String>,
    pub processes_left: Vec<i32>,
}

/// What the run was asked and what it met, for the verdict.
#[derive(Clone, Debug)]
pub(crate) struct Setting {
    pub path: String,
    pub mode: Mode,
    pub contenders: usize,
    pub faults: Vec<Fault>,
    pub duration_ms: u64,
    pub ran_ms: u64,
    pub session_timeout_ms: u64,
    pub kill_after_ms: u64,
    pub rounds: usize,
    pub refused_connections: u64,
    /// Why the run stopped before its time, if it did.
    pub cut_short: Option<String>,
    /// Wall-clock ms minus monotonic ms: how a monotonic time is shown.
    pub wall_offset_ms: i64,
}

/// A margin is thin below this: a stall of the holder's host this long
/// (a loaded machine, a paging storm) would cost the lock.
const THIN_MS: i64 = 250;

/// The outcome of a run: what the command prints, table or JSON.
#[derive(Debug, Serialize)]
pub(crate) struct Verdict {
    pub passed: bool,
    pub path: String,
    pub mode: &'static str,
    pub contenders: usize,
    pub duration_ms: u64,
    pub ran_ms: u64,
    pub session_timeout_ms: u64,
    pub kill_after_ms: u64,
    pub rounds: usize,
    pub sections: usize,
    pub give_ups: usize,
    /// Waiters that lost their session when the lock came (exit 3).
    pub unreachable: usize,
    /// Holders that lost their lock with no fault injected (exit 4).
    pub lost_without_fault: usize,
    pub refused_connections: u64,
    pub cut_short: Option<String>,
    pub faults: Vec<ClassReport>,
    pub injected: Vec<FaultReport>,
    pub allowed_overlaps: Vec<[SectionReport; 2]>,
    pub violations: Vec<Violation>,
    pub advice: Vec<String>,
}

/// One fault class over the run.
#[derive(Debug, Serialize)]
pub(crate) struct ClassReport {
    pub class: &'static str,
    pub requested: bool,
    pub injected: usize,
    /// Cut and kill: the holder's command stopped before the lock could
    /// pass on.
    pub stopped_in_time: usize,
    /// Pause: overlaps with a later holder, allowed for the paused one's
    /// smaller fence.
    pub overlaps_allowed: usize,
    pub margin_to_expiry_ms: Option<Spread>,
    pub margin_to_next_grant_ms: Option<Spread>,
}

/// The smallest and the median of some margins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Spread {
    pub min: i64,
    pub median: i64,
}

/// One fault and what followed.
#[derive(Debug, Serialize)]
pub(crate) struct FaultReport {
    pub class: &'static str,
    pub target: Option<&'static str>,
    pub run: u64,
    pub contender: usize,
    pub fence: Option<i64>,
    pub at_ms: i64,
    pub resumed_ms: Option<i64>,
    pub stopped_ms: Option<i64>,
    pub margin_to_expiry_ms: Option<i64>,
    pub margin_to_next_grant_ms: Option<i64>,
    pub exit: Option<String>,
}

/// A section as the verdict shows it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SectionReport {
    pub run: u64,
    pub contender: usize,
    pub mode: &'static str,
    pub fence: i64,
    pub pid: i32,
    pub start_ms: i64,
    pub stop_ms: Option<i64>,
    pub stopped: &'static str,
}

/// Something the lock, or the run, got wrong, with its evidence.
#[derive(Debug, Serialize)]
pub(crate) struct Violation {
    /// `overlap`, `fence_order`, `late_stop`, `exit_code`, `stuck`,
    /// `not_injected`, `node_left` or `process_left`.
    pub kind: &'static str,
    pub message: String,
    pub sections: Vec<SectionReport>,
}

impl Violation {
    fn new(kind: &'static str, message: String) -> Violation {
        Violation {
            kind,
            message,
            sections: Vec::new(),
        }
    }
}

/// Checks `records` of a run set as `setting` says.
pub(crate) fn verdict(setting: &Setting, records: &Records) -> Verdict {
    let shown = Shown::new(setting, records);
    let mut sections: Vec<&SectionRecord> = records.sections.iter().collect();
    sections.sort_by_key(|section| (section.start_us, section.fence));
    let paused: Vec<u64> = records
        .faults
        .iter()
        .filter(|fault| fault.fault == Fault::Pause)
        .map(|fault| fault.run)
        .collect();
    let (overlaps, allowed) = overlaps(&sections, &paused);
    let mut violations = shown.by_earlier("overlap", "ran on while a later holder held", &overlaps);
    violations.extend(shown.by_earlier(
        "fence_order",
        "was followed by a holder whose fence is no greater",
        &fence_order(&sections),
    ));
    let injected: Vec<FaultReport> = records
        .faults
        .iter()
        .map(|fault| shown.fault(fault, &sections))
        .collect();
    for (fault, report) in records.faults.iter().zip(&injected) {
        violations.extend(late_stop(fault, report, &shown));
    }
    violations.extend(records.runs.iter().filter_map(exit_violation));
    violations.extend(
        records
            .stuck
            .iter()
            .map(|what| Violation::new("stuck", what.clone())),
    );
    let classes: Vec<ClassReport> = Fault::ALL
        .iter()
        .map(|&class| class_report(class, setting, &injected, &allowed, &records.faults))
        .collect();
    violations.extend(
        classes
            .iter()
            .filter(|class| class.requested && class.injected == 0)
            .map(|class| {
                Violation::new(
                    "not_injected",
                    format!(
                        "no {} fault could be injected in the time the run had",
                        class.class
                    ),
                )
            }),
    );
    violations.extend(
        records
            .nodes_left
            .iter()
            .map(|node| Violation::new("node_left", format!("{node} was left behind"))),
    );
    violations.extend(
        records
            .processes_left
            .iter()
            .map(|pid| Violation::new("process_left", format!("process {pid} was left behind"))),
    );
    let count = |fate| records.runs.iter().filter(|run| run.fate == fate).count();
    let mut advice = advice(setting, &classes, &violations);
    if count(Fate::Unreachable) + count(Fate::LostHolding) > 0 {
        advice.push(
            "holders lost their session or their lock with no fault injected (exit 3 or 4): \
             this host, its network or the ensemble stalled for much of the session timeout; \
             raise --session-timeout, or find what stalls"
                .to_owned(),
        );
    }
    Verdict {
        passed: violations.is_empty() && setting.cut_short.is_none(),
        path: setting.path.clone(),
        mode: setting.mode.as_str(),
        contenders: setting.contenders,
        duration_ms: setting.duration_ms,
        ran_ms: setting.ran_ms,
        session_timeout_ms: setting.session_timeout_ms,
        kill_after_ms: setting.kill_after_ms,
        rounds: setting.rounds,
        sections: records.sections.len(),
        give_ups: count(Fate::GaveUp),
        unreachable: count(Fate::Unreachable),
        lost_without_fault: count(Fate::LostHolding),
        refused_connections: setting.refused_connections,
        cut_short: setting.cut_short.clone(),
        faults: classes,
        injected,
        allowed_overlaps: allowed
            .iter()
            .map(|[a, b]| [shown.section(a), shown.section(b)])
            .collect(),
        violations,
        advice,
    }
}

/// When a section is over for the checks: when it stopped, or never.
fn stop_us(section: &SectionRecord) -> u64 {
    section.stop.map_or(u64::MAX, |(at, _)| at)
}

/// True when two sections may not run at once.
fn exclude(a: &SectionRecord, b: &SectionRecord) -> bool {
    a.writes || b.writes
}

/// The pairs of sections (in start order) that ran at once though they
/// exclude each other: those not allowed, and those allowed because the
/// first was paused and had the smaller fence.
fn overlaps<'a>(
    sections: &[&'a SectionRecord],
    paused: &[u64],
) -> (Vec<[&'a SectionRecord; 2]>, Vec<[&'a SectionRecord; 2]>) {
    let mut violations = Vec::new();
    let mut allowed = Vec::new();
    // Those started so far that have not stopped by the next start.
    let mut open: Vec<&SectionRecord> = Vec::new();
    for &later in sections {
        open.retain(|earlier| stop_us(earlier) > later.start_us);
        for &earlier in &open {
            if !exclude(earlier, later) {
                continue;
            }
            if paused.contains(&earlier.run) && earlier.fence < later.fence {
                allowed.push([earlier, later]);
            } else {
                violations.push([earlier, later]);
            }
        }
        open.push(later);
    }
    (violations, allowed)
}

/// The sections (in start order) whose fence is no greater than that of an
/// earlier one it must follow: each with the earlier section it is not
/// above.
fn fence_order<'a>(sections: &[&'a SectionRecord]) -> Vec<[&'a SectionRecord; 2]> {
    let mut found = Vec::new();
    let mut highest: Option<&SectionRecord> = None;
    let mut highest_writer: Option<&SectionRecord> = None;
    for &section in sections {
        let must_pass = if section.writes {
            highest
        } else {
            highest_writer
        };
        if let Some(before) = must_pass.filter(|before| before.fence >= section.fence) {
            found.push([before, section]);
        }
        if highest.is_none_or(|h| section.fence > h.fence) {
            highest = Some(section);
        }
        if section.writes && highest_writer.is_none_or(|h| section.fence > h.fence) {
            highest_writer = Some(section);
        }
    }
    found
}

/// A late stop after a cut or a kill: a margin below zero.
fn late_stop(fault: &FaultRecord, report: &FaultReport, shown: &Shown<'_>) -> Option<Violation> {
    if fault.fault == Fault::Pause {
        return None;
    }
    let Some(stopped) = report.stopped_ms else {
        return Some(Violation::new(
            "late_stop",
            format!(
                "after the {} of run {}, its command never stopped",
                report.class, fault.run
            ),
        ));
    };
    let late = [
        (
            "the server could expire the session",
            report.margin_to_expiry_ms,
        ),
        ("the next holder began", report.margin_to_next_grant_ms),
    ]
    .into_iter()
    .find_map(|(what, margin)| {
        margin
            .filter(|margin| *margin < 0)
            .map(|margin| (what, margin))
    })?;
    let mut violation = Violation::new(
        "late_stop",
        format!(
            "after the {} of run {}, its command stopped {} after {}",
            report.class,
            fault.run,
            shown_ms(-late.1),
            late.0
        ),
    );
    violation.sections = shown.around(fault.run, stopped);
    Some(violation)
}

/// A holder whose exit is not the documented one for what happened to it.
fn exit_violation(run: &RunRecord) -> Option<Violation> {
    let got = run.exit.map_or("no exit".to_owned(), Exit::shown);
    let mut message = match (run.fate, run.fate.expected()) {
        (Fate::ShutDown, _) => return None,
        (_, Some(expected)) if run.exit == Some(expected) => return None,
        (_, Some(expected)) => format!(
            "run {} ({}) exited {got}, where {} is documented",
            run.run,
            run.fate.described(),
            expected.shown()
        ),
        (_, None) => format!(
            "run {} exited {got} without running its section or giving up",
            run.run
        ),
    };
    if !run.stderr.is_empty() {
        message += &format!("; it said: {}", run.stderr.trim());
    }
    Some(Violation::new("exit_code", message))
}

impl Fate {
    fn described(self) -> String {
        match self {
            Fate::GaveUp => "gave up waiting".to_owned(),
            Fate::Unreachable => "never reached the lock".to_owned(),
            Fate::LostHolding => "lost its lock with no fault".to_owned(),
            Fate::Ran => "ran its section".to_owned(),
            Fate::Faulted(fault, target) => match target {
                Some(target) => format!("{} of {}", fault.as_str(), target.as_str()),
                None => format!("{} while it held", fault.as_str()),
            },
            Fate::Stranded => "ended without its section".to_owned(),
            Fate::ShutDown => "shut down".to_owned(),
        }
    }
}

/// One class's line of the verdict.
fn class_report(
    class: Fault,
    setting: &Setting,
    injected: &[FaultReport],
    allowed: &[[&SectionRecord; 2]],
    faults: &[FaultRecord],
) -> ClassReport {
    let of_class: Vec<&FaultReport> = injected
        .iter()
        .filter(|report| report.class == class.as_str())
        .collect();
    let margins = |margin: fn(&FaultReport) -> Option<i64>| {
        spread(
            of_class
                .iter()
                .filter_map(|report| margin(report))
                .collect(),
        )
    };
    let paused_runs: Vec<u64> = faults
        .iter()
        .filter(|fault| fault.fault == class)
        .map(|fault| fault.run)
        .collect();
    let timed = class != Fault::Pause;
    ClassReport {
        class: class.as_str(),
        requested: setting.faults.contains(&class),
        injected: of_class.len(),
        stopped_in_time: if timed {
            of_class
                .iter()
                .filter(|report| {
                    report.stopped_ms.is_some()
                        && [report.margin_to_expiry_ms, report.margin_to_next_grant_ms]
                            .iter()
                            .all(|margin| margin.is_none_or(|margin| margin >= 0))
                })
                .count()
        } else {
            0
        },
        overlaps_allowed: if timed {
            0
        } else {
            allowed
                .iter()
                .filter(|[earlier, _]| paused_runs.contains(&earlier.run))
                .count()
        },
        margin_to_expiry_ms: margins(|report| report.margin_to_expiry_ms).filter(|_| timed),
        margin_to_next_grant_ms: margins(|report| report.margin_to_next_grant_ms).filter(|_| timed),
    }
}

/// The smallest and median of `values` (of an even count, the upper of
/// the middle two); `None` for none.
fn spread(mut values: Vec<i64>) -> Option<Spread> {
    values.sort_unstable();
    Some(Spread {
        min: *values.first()?,
        median: values[values.len() / 2],
    })
}

/// What to change where a margin is thin, or a fault could not be had.
fn advice(setting: &Setting, classes: &[ClassReport], violations: &[Violation]) -> Vec<String> {
    let mut advice = Vec::new();
    let timeout = setting.session_timeout_ms as i64;
    for class in classes {
        // The margin to the next grant after a guard was killed is a hand-over
        // zklock makes itself, once the command is gone: never thin. The
        // margin to the session's expiry is what the settings leave.
        let thinnest = class.margin_to_expiry_ms.map(|spread| spread.min);
        if let Some(thinnest) = thinnest.filter(|m| (0..THIN_MS).contains(m)) {
            // Every term of the self-fencing deadline is a share of the
            // session timeout, so the margins grow with it.
            let needed = timeout
                .saturating_mul(THIN_MS)
                .checked_div(thinnest.max(1))
                .unwrap_or(timeout);
            advice.push(format!(
                "after a {} the command stopped only {} before the server could expire the \
                 session: a stall of zklock's host that long would let two holders run at once; \
                 raise --session-timeout from {} to at least {} (the margin grows with it)",
                class.class,
                shown_ms(thinnest),
                shown_ms(timeout),
                shown_ms(round_up_to_second(needed))
            ));
        }
    }
    if classes
        .iter()
        .any(|class| class.class == Fault::Pause.as_str() && class.overlaps_allowed > 0)
    {
        advice.push(
            "a paused holder ran on after its lock passed to another: no client can stop a \
             process that is not running, only the resource can refuse it; have it check \
             ZKLOCK_FENCE (or `zklock check --fence`) before each write"
                .to_owned(),
        );
    }
    if violations.iter().any(|v| v.kind == "not_injected") {
        advice.push(
            "give a longer --duration: each fault takes about two session timeouts".to_owned(),
        );
    }
    advice
}

fn round_up_to_second(ms: i64) -> i64 {
    ms.div_euclid(1000)
        .saturating_add(i64::from(ms.rem_euclid(1000) != 0))
        * 1000
}

/// Milliseconds as people read a duration (`1s 250ms`).
pub(crate) fn shown_ms(ms: i64) -> String {
    humantime::format_duration(std::time::Duration::from_millis(ms.unsigned_abs())).to_string()
}

/// How the records are shown: times on the wall clock, sections by run.
struct Shown<'a> {
    setting: &'a Setting,
    by_run: HashMap<u64, &'a SectionRecord>,
    contenders: HashMap<u64, usize>,
    sections: &'a [SectionRecord],
    runs: HashMap<u64, &'a RunRecord>,
}

impl<'a> Shown<'a> {
    fn new(setting: &'a Setting, records: &'a Records) -> Shown<'a> {
        Shown {
            setting,
            by_run: records.sections.iter().map(|s| (s.run, s)).collect(),
            contenders: records.runs.iter().map(|r| (r.run, r.contender)).collect(),
            sections: &records.sections,
            runs: records.runs.iter().map(|r| (r.run, r)).collect(),
        }
    }

    fn wall_ms(&self, us: u64) -> i64 {
        i64::try_from(us / 1000)
            .unwrap_or(i64::MAX)
            .saturating_add(self.setting.wall_offset_ms)
    }

    fn section(&self, section: &SectionRecord) -> SectionReport {
        SectionReport {
            run: section.run,
            contender: section.contender,
            mode: match (self.setting.mode, section.writes) {
                (Mode::Exclusive, _) => "exclusive",
                (Mode::ReadWrite, true) => "write",
                (Mode::ReadWrite, false) => "read",
            },
            fence: section.fence,
            pid: section.pid,
            start_ms: self.wall_ms(section.start_us),
            stop_ms: section.stop.map(|(at, _)| self.wall_ms(at)),
            stopped: match section.stop {
                None => "running",
                Some((_, Stopped::Told)) => "told",
                Some((_, Stopped::Signalled)) => "signal",
                Some((_, Stopped::Killed)) => "killed",
            },
        }
    }

    /// One violation per earlier section of `pairs` (in start order): it
    /// `did` to the first later one, with the count of the others.
    fn by_earlier(
        &self,
        kind: &'static str,
        did: &str,
        pairs: &[[&SectionRecord; 2]],
    ) -> Vec<Violation> {
        let mut violations: Vec<Violation> = Vec::new();
        let mut counts: Vec<usize> = Vec::new();
        for [earlier, later] in pairs {
            let seen = violations
                .iter()
                .position(|v| v.sections.first().is_some_and(|s| s.run == earlier.run));
            match seen {
                Some(at) => counts[at] += 1,
                None => {
                    violations.push(Violation {
                        kind,
                        message: format!(
                            "run {} (fence {}) {did}: run {} (fence {})",
                            earlier.run, earlier.fence, later.run, later.fence
                        ),
                        sections: vec![self.section(earlier), self.section(later)],
                    });
                    counts.push(0);
                }
            }
        }
        for (violation, more) in violations.iter_mut().zip(counts) {
            if more > 0 {
                violation.message += &format!(", and {more} more after it");
            }
        }
        violations
    }

    /// The faulted run's section and the first one to begin after
    /// `stopped_ms`.
    fn around(&self, run: u64, stopped_ms: i64) -> Vec<SectionReport> {
        let mut shown: Vec<SectionReport> = self
            .by_run
            .get(&run)
            .map(|s| self.section(s))
            .into_iter()
            .collect();
        shown.extend(
            self.sections
                .iter()
                .filter(|s| s.run != run && self.wall_ms(s.start_us) >= stopped_ms)
                .min_by_key(|s| s.start_us)
                .map(|s| self.section(s)),
        );
        shown
    }

    /// A fault as the verdict shows it, with its margins.
    fn fault(&self, fault: &FaultRecord, sections: &[&SectionRecord]) -> FaultReport {
        let victim = self.by_run.get(&fault.run).copied();
        let stopped_us = victim.and_then(|v| v.stop).map(|(at, _)| at);
        let timeout_us = fault.timeout_ms.saturating_mul(1000);
        let margin = |from: u64, to: u64| {
            let to = i64::try_from(to / 1000).unwrap_or(i64::MAX);
            let from = i64::try_from(from / 1000).unwrap_or(i64::MAX);
            to.saturating_sub(from)
        };
        let timed = fault.fault != Fault::Pause;
        let to_expiry = stopped_us
            .zip(fault.last_sent_us)
            .filter(|_| timed)
            .map(|(stopped, sent)| margin(stopped, sent.saturating_add(timeout_us)));
        let next_grant = victim.and_then(|victim| {
            sections
                .iter()
                .filter(|s| s.run != victim.run && exclude(s, victim))
                .map(|s| s.start_us)
                .find(|start| *start >= fault.at_us)
        });
        let to_next_grant = stopped_us
            .zip(next_grant)
            .filter(|_| timed)
            .map(|(stopped, next)| margin(stopped, next));
        FaultReport {
            class: fault.fault.as_str(),
            target: fault.target.map(KillTarget::as_str),
            run: fault.run,
            contender: self.contenders.get(&fault.run).copied().unwrap_or(0),
            fence: victim.map(|v| v.fence),
            at_ms: self.wall_ms(fault.at_us),
            resumed_ms: fault.resumed_us.map(|at| self.wall_ms(at)),
            stopped_ms: stopped_us.map(|at| self.wall_ms(at)),
            margin_to_expiry_ms: to_expiry,
            margin_to_next_grant_ms: to_next_grant,
            exit: self
                .runs
                .get(&fault.run)
                .and_then(|run| run.exit)
                .map(Exit::shown),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(run: u64, writes: bool, fence: i64, start: u64, stop: u64) -> SectionRecord {
        SectionRecord {
            run,
            contender: run as usize,
            writes,
            fence,
            pid: 100 + run as i32,
            start_us: start * 1000,
            stop: Some((stop * 1000, Stopped::Told)),
        }
    }

    fn setting(mode: Mode) -> Setting {
        Setting {
            path: "/v".into(),
            mode,
            contenders: 3,
            faults: vec![Fault::Cut],
            duration_ms: 1000,
            ran_ms: 1000,
            session_timeout_ms: 2000,
            kill_after_ms: 400,
            rounds: 1,
            refused_connections: 0,
            cut_short: None,
            wall_offset_ms: 0,
        }
    }

    fn cut(run: u64, at: u64, last_sent: u64) -> FaultRecord {
        FaultRecord {
            fault: Fault::Cut,
            target: None,
            run,
            at_us: at * 1000,
            resumed_us: None,
            timeout_ms: 2000,
            last_sent_us: Some(last_sent * 1000),
        }
    }

    fn kinds(verdict: &Verdict) -> Vec<&'static str> {
        verdict.violations.iter().map(|v| v.kind).collect()
    }

    fn ran(run: u64) -> RunRecord {
        RunRecord {
            run,
            contender: run as usize,
            fate: Fate::Ran,
            exit: Some(Exit::Code(0)),
            stderr: String::new(),
        }
    }

    #[test]
    fn holders_one_after_another_with_growing_fences_pass() {
        let records = Records {
            sections: vec![section(1, true, 10, 0, 100), section(2, true, 12, 100, 200)],
            runs: vec![ran(1), ran(2)],
            faults: vec![cut(1, 50, 40)],
            ..Records::default()
        };
        let verdict = verdict(&setting(Mode::Exclusive), &records);
        assert_eq!(kinds(&verdict), Vec::<&str>::new());
        assert!(verdict.passed);
        let report = &verdict.injected[0];
        assert_eq!(report.margin_to_expiry_ms, Some(2040 - 100));
        assert_eq!(report.margin_to_next_grant_ms, Some(0));
        assert_eq!(verdict.faults[0].stopped_in_time, 1);
    }

    #[test]
    fn an_overlap_a_fence_out_of_order_and_a_late_stop_are_each_named() {
        let records = Records {
            // Run 2 starts before run 1 stopped, with a smaller fence.
            sections: vec![
                section(1, true, 10, 0, 3000),
                section(2, true, 9, 2500, 2600),
            ],
            runs: vec![ran(1), ran(2)],
            faults: vec![cut(1, 100, 100)],
            ..Records::default()
        };
        let verdict = verdict(&setting(Mode::Exclusive), &records);
        assert_eq!(kinds(&verdict), ["overlap", "fence_order", "late_stop"]);
        assert_eq!(verdict.violations[0].sections.len(), 2);
        assert_eq!(verdict.injected[0].margin_to_expiry_ms, Some(2100 - 3000));
        assert!(!verdict.passed);
    }

    #[test]
    fn a_paused_holder_may_overlap_a_later_one_only_with_the_smaller_fence() {
        let pause = |run| FaultRecord {
            fault: Fault::Pause,
            resumed_us: Some(2_000_000),
            ..cut(run, 100, 100)
        };
        let overlapping = |later_fence| Records {
            sections: vec![
                section(1, true, 10, 0, 2100),
                section(2, true, later_fence, 1000, 1200),
            ],
            runs: vec![ran(2)],
            faults: vec![pause(1)],
            ..Records::default()
        };
        let mut with_pause = setting(Mode::Exclusive);
        with_pause.faults = vec![Fault::Pause];
        let allowed = verdict(&with_pause, &overlapping(11));
        assert_eq!(kinds(&allowed), Vec::<&str>::new());
        assert_eq!(allowed.allowed_overlaps.len(), 1);
        assert_eq!(allowed.faults[1].overlaps_allowed, 1);
        assert!(allowed.advice.iter().any(|a| a.contains("ZKLOCK_FENCE")));
        let refused = verdict(&with_pause, &overlapping(9));
        assert!(kinds(&refused).contains(&"overlap"));
    }

    #[test]
    fn readers_share_and_a_reader_s_fence_need_only_pass_the_writers() {
        let records = Records {
            // Two readers at once, the second with the smaller fence (both
            // granted when the writer before them let go), then a writer.
            sections: vec![
                section(1, true, 5, 0, 10),
                section(2, false, 8, 20, 40),
                section(3, false, 7, 21, 30),
                section(4, true, 9, 50, 60),
            ],
            ..Records::default()
        };
        let verdict = verdict(&setting(Mode::ReadWrite), &records);
        assert!(
            !kinds(&verdict)
                .iter()
                .any(|k| *k == "overlap" || *k == "fence_order"),
            "{:?}",
            verdict.violations
        );
        let mut writer_among = records;
        writer_among.sections[2].writes = true;
        let verdict = super::verdict(&setting(Mode::ReadWrite), &writer_among);
        assert!(kinds(&verdict).contains(&"overlap"));
        assert!(kinds(&verdict).contains(&"fence_order"));
    }

    #[test]
    fn an_exit_other_than_the_documented_one_is_named_and_so_is_a_fault_never_injected() {
        let mut killed = ran(1);
        killed.fate = Fate::Faulted(Fault::Kill, Some(KillTarget::Guard));
        killed.exit = Some(Exit::Code(0));
        let records = Records {
            runs: vec![killed],
            ..Records::default()
        };
        let verdict = verdict(&setting(Mode::Exclusive), &records);
        assert_eq!(kinds(&verdict), ["exit_code", "not_injected"]);
        assert!(verdict.violations[0].message.contains("10"));
        // A stall is told apart: counted and advised on, not a violation.
        let mut stalled = ran(2);
        stalled.fate = Fate::LostHolding;
        stalled.exit = Some(Exit::Code(4));
        let records = Records {
            runs: vec![stalled],
            ..Records::default()
        };
        let mut no_fault = setting(Mode::Exclusive);
        no_fault.faults.clear();
        let verdict = super::verdict(&no_fault, &records);
        assert_eq!(kinds(&verdict), Vec::<&str>::new());
        assert_eq!(verdict.lost_without_fault, 1);
        assert!(verdict.advice.iter().any(|a| a.contains("stalled")));
    }

    #[test]
    fn a_thin_margin_gets_advice_that_scales_the_session_timeout() {
        let records = Records {
            sections: vec![
                section(1, true, 10, 0, 1900),
                section(2, true, 12, 2500, 2600),
            ],
            faults: vec![cut(1, 100, 0)],
            ..Records::default()
        };
        let verdict = verdict(&setting(Mode::Exclusive), &records);
        assert!(verdict.passed, "{:?}", verdict.violations);
        assert_eq!(
            verdict.faults[0].margin_to_expiry_ms,
            Some(Spread {
                min: 100,
                median: 100
            })
        );
        assert!(
            verdict.advice[0].contains("--session-timeout from 2s to at least 5s"),
            "{:?}",
            verdict.advice
        );
    }

    #[test]
    fn the_spread_is_the_minimum_and_the_median() {
        assert_eq!(spread(vec![]), None);
        assert_eq!(spread(vec![5, 1, 9, 3]), Some(Spread { min: 1, median: 5 }));
        assert_eq!(spread(vec![5, 1, 9]), Some(Spread { min: 1, median: 5 }));
        assert_eq!(spread(vec![7]), Some(Spread { min: 7, median: 7 }));
    }
}
