//! `zklock verify`: runs [`crate::verify`] with a progress line, and prints
//! its verdict: a heading, one row per fault class, then the violations
//! with their evidence and the advice; or the whole verdict as JSON. Also
//! the hidden `verify-section`, the critical section of verify's holders.

use anyhow::Result;
use serde::Serialize;

use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::output::{self, Column, Report, Table};
use crate::verify::checks::{ClassReport, SectionReport, Spread};
use crate::verify::section::{self, SectionArgs, SectionEnd};
use crate::verify::{self, Fault, Plan, Tally, Verdict, shown_ms};

/// Runs the test `plan` asks for and prints what it found.
pub(crate) async fn run(globals: &Globals, plan: Plan) -> Result<ExitStatus> {
    let progress = globals
        .printer
        .progress_bar(plan.duration.as_secs().max(1), "verify: starting");
    let outcome = verify::run(&plan, &globals.connect, |tally| {
        if let Some(progress) = &progress {
            progress.set_position(tally.elapsed.as_secs());
            progress.set(progress_text(tally));
        }
    })
    .await?;
    drop(progress);
    let verdict = outcome.verdict;
    globals.printer.table_heading(&heading(&verdict))?;
    globals.printer.report(&Shown(&verdict))?;
    globals.printer.table_footing(&footing(&verdict))?;
    Ok(match outcome.signal {
        Some(signal) => ExitStatus::on_signal(signal),
        None if verdict.passed => ExitStatus::Success,
        None => ExitStatus::Unsafe,
    })
}

/// Runs a holder's critical section.
pub(crate) fn section(args: &SectionArgs) -> Result<ExitStatus> {
    Ok(match section::run(args)? {
        SectionEnd::Told => ExitStatus::Success,
        SectionEnd::Signalled => ExitStatus::Interrupted(libc::SIGTERM),
    })
}

fn progress_text(tally: &Tally) -> String {
    let faults: Vec<String> = Fault::ALL
        .iter()
        .zip(tally.injected)
        .map(|(fault, count)| format!("{} {count}", fault.as_str()))
        .collect();
    format!(
        "verify: round {}, {}; {}",
        tally.round,
        output::counted(tally.sections, "section", "sections"),
        faults.join(", ")
    )
}

fn heading(verdict: &Verdict) -> String {
    format!(
        "verify {}: {}\n{} ({}) for {} (ran {}) in {}: {}, {}{}\nsession timeout {} (as \
         granted), --kill-after {}",
        verdict.path,
        if verdict.passed { "passed" } else { "FAILED" },
        output::counted(verdict.contenders, "contender", "contenders"),
        verdict.mode,
        shown_ms(verdict.duration_ms as i64),
        shown_ms(verdict.ran_ms as i64 / 1000 * 1000),
        output::counted(verdict.rounds, "round", "rounds"),
        output::counted(verdict.sections, "section", "sections"),
        output::counted(verdict.give_ups, "give-up", "give-ups"),
        match verdict.unreachable + verdict.lost_without_fault {
            0 => String::new(),
            lost => format!(", {lost} lost with no fault"),
        },
        shown_ms(verdict.session_timeout_ms as i64),
        shown_ms(verdict.kill_after_ms as i64),
    )
}

/// The verdict as the printer lays it out.
#[derive(Serialize)]
#[serde(transparent)]
struct Shown<'a>(&'a Verdict);

impl Report for Shown<'_> {
    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[
            Column::whole("FAULT"),
            Column::whole("INJECTED"),
            Column::sentence("OUTCOME"),
            Column::whole("TO EXPIRY").goes(2),
            Column::whole("TO NEXT GRANT").goes(1),
        ];
        COLUMNS
    }

    fn rows(&self, table: &mut Table<'_>) -> std::io::Result<()> {
        let shown = self
            .0
            .faults
            .iter()
            .filter(|c| c.requested || c.injected > 0);
        for class in shown {
            table.row([
                class.class.to_owned(),
                class.injected.to_string(),
                outcome(self.0, class),
                spread(class.margin_to_expiry_ms),
                spread(class.margin_to_next_grant_ms),
            ])?;
        }
        Ok(())
    }
}

/// The lines below the table: why the run was cut short, the violations
/// with their evidence, the paused holders that ran on, the advice.
fn footing(verdict: &Verdict) -> String {
    let mut lines = Vec::new();
    if let Some(why) = &verdict.cut_short {
        lines.push(format!("Cut short: {why}."));
    }
    if verdict.violations.is_empty() {
        lines.push("No violation.".to_owned());
    } else {
        lines.push(format!(
            "{}:",
            output::counted(verdict.violations.len(), "violation", "violations")
        ));
    }
    for violation in &verdict.violations {
        lines.push(format!("  {}: {}", violation.kind, violation.message));
        lines.extend(violation.sections.iter().map(section_line));
    }
    let mut paused: Vec<&SectionReport> = Vec::new();
    for [earlier, _] in &verdict.allowed_overlaps {
        if !paused.iter().any(|p| p.run == earlier.run) {
            paused.push(earlier);
        }
    }
    if !paused.is_empty() {
        lines.push(
            "Paused holders that ran on after their lock passed (allowed: a fencing resource \
             refuses the smaller fence):"
                .to_owned(),
        );
    }
    for earlier in paused {
        let later: Vec<&SectionReport> = verdict
            .allowed_overlaps
            .iter()
            .filter(|[e, _]| e.run == earlier.run)
            .map(|[_, later]| later)
            .collect();
        lines.push(section_line(earlier));
        if let Some(first) = later.first() {
            lines.push(format!(
                "      beside {} of greater fences, the first from {}",
                output::counted(later.len(), "later holder", "later holders"),
                clock_ms(first.start_ms)
            ));
        }
    }
    lines.extend(
        verdict
            .advice
            .iter()
            .map(|advice| format!("Advice: {advice}.")),
    );
    if verdict.refused_connections > 0 {
        lines.push(format!(
            "The proxy closed {} that came from no holder of this run.",
            output::counted(verdict.refused_connections, "connection", "connections")
        ));
    }
    lines.join("\n")
}

/// What followed the faults of a class.
fn outcome(verdict: &Verdict, class: &ClassReport) -> String {
    if class.class == Fault::Pause.as_str() {
        return format!(
            "{} allowed (smaller fence)",
            output::counted(class.overlaps_allowed, "overlap", "overlaps")
        );
    }
    let mut outcome = format!("{} stopped in time", class.stopped_in_time);
    if class.class == Fault::Kill.as_str() {
        // What was killed: zklock, its guard, or both.
        let targets: Vec<&str> = ["zklock", "guard", "both"]
            .into_iter()
            .filter(|target| {
                verdict
                    .injected
                    .iter()
                    .any(|fault| fault.target == Some(target))
            })
            .collect();
        outcome += &format!(" ({})", targets.join(", "));
    }
    outcome
}

/// `MIN / MEDIAN`, or `-`.
fn spread(spread: Option<Spread>) -> String {
    spread.map_or("-".to_owned(), |spread| {
        format!("{} / {}", shown_ms(spread.min), shown_ms(spread.median))
    })
}

/// A section as evidence: run, mode, fence, pid, and when it ran, to the
/// millisecond (its contender is in the JSON).
fn section_line(section: &SectionReport) -> String {
    let until = match section.stop_ms {
        Some(stop) => format!("{} ({})", clock_ms(stop), section.stopped),
        None => "never stopped".to_owned(),
    };
    let mode = match section.mode {
        "exclusive" => String::new(),
        mode => format!(" ({mode})"),
    };
    format!(
        "    run {}{mode}, fence {}, pid {}: {} to {until}",
        section.run,
        section.fence,
        section.pid,
        clock_ms(section.start_ms)
    )
}

/// A moment as the local time of day, to the millisecond.
fn clock_ms(ms: i64) -> String {
    format!(
        "{}.{:03}",
        output::format_local_clock_ms(ms),
        ms.rem_euclid(1000)
    )
}
