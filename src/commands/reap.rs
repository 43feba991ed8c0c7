//! `zklock reap [PATH]`: delete stale contender nodes (by age, by session,
//! by a session gone from every member for a while, or all) and, with
//! `--empty`, empty lock directories, after a `--yes` or
//! a yes at the prompt; `--dry-run` only lists them. What to delete and how
//! is decided in [`crate::admin::reap`]; this module asks, shows and
//! reports.

use std::io::IsTerminal;

use anyhow::Result;
use serde::Serialize;

use crate::admin::RecordInto;
use crate::admin::reap::{self, NodeToReap, ReapRole, Reaped, Selector, Skipped};
use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::lock::end::{EndHow, Ender, Ending};
use crate::output::{self, Column, Printer, Report, Table};
use crate::usage::UsageError;
use crate::zk::Session;
use crate::zk::sessions::{Absences, Ask, Connection, Survey, Surveyor};

use super::{
    NODE_ACTIONS, ask, connected_cell, connected_warning, cut_to_line, node_action_rows,
    node_sequence, note_unreadable, show_progress, with_session_and_surveyor,
};

/// What `reap` was asked for.
#[derive(Clone, Debug)]
pub struct ReapArgs {
    /// The path to reap below.
    pub path: String,
    /// Which contenders to delete.
    pub selector: Selector,
    /// Also delete empty lock directories.
    pub empty: bool,
    /// Only list what would go.
    pub dry_run: bool,
    /// Delete without asking.
    pub yes: bool,
    /// `--reason`, for the end records.
    pub reason: Option<String>,
}

/// Checks that something is selected: a selector, or `--empty`.
pub(crate) fn check_selection(selector: &Selector, empty: bool) -> Result<(), UsageError> {
    if selector.is_empty() && !empty {
        return Err(UsageError::new(
            "say what to reap: --older-than DUR, --session ID, --disconnected-for DUR, --all, \
             or --empty",
        ));
    }
    Ok(())
}

/// What reap did.
#[derive(Debug, Serialize)]
pub(crate) struct ReapReport {
    #[serde(skip)]
    path: String,
    deleted: Vec<String>,
    skipped: Vec<Skipped>,
}

impl Report for ReapReport {
    fn summary(&self) -> Option<String> {
        Some(format!(
            "{}: {} deleted, {} left alone",
            self.path,
            self.deleted.len(),
            self.skipped.len()
        ))
    }

    fn columns(&self) -> &'static [Column] {
        NODE_ACTIONS
    }

    fn rows(&self, table: &mut Table<'_>) -> std::io::Result<()> {
        node_action_rows(table, &[(&self.deleted, "deleted")], &self.skipped)
    }
}

/// What reap would do (`--dry-run`), and what it would leave alone.
#[derive(Debug, Serialize)]
pub(crate) struct DryRunReport {
    #[serde(skip)]
    path: String,
    would_delete: Vec<NodeToReap>,
    deleted: [String; 0],
    skipped: Vec<Skipped>,
}

impl Report for DryRunReport {
    fn summary(&self) -> Option<String> {
        Some(format!(
            "{}: would delete {}",
            self.path,
            summary(&self.would_delete)
        ))
    }

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[
            Column::whole("NODE").wide(),
            Column::whole("LOCK"),
            Column::whole("SEQ"),
            Column::whole("WHAT"),
            Column::whole("SESSION"),
            Column::whole("CONNECTED").goes(3),
            Column::whole("AGE").goes(2),
            Column::whole("RECORD").goes(4),
            Column::text("OWNER").goes(1),
        ];
        COLUMNS
    }

    fn rows(&self, table: &mut Table<'_>) -> std::io::Result<()> {
        for node in &self.would_delete {
            let record = match node.end_record {
                Some(true) => "yes",
                Some(false) => "no",
                None => "-",
            };
            table.row([
                node.path.clone(),
                crate::names::shown(&node.lock).into_owned(),
                node_sequence(&node.path).unwrap_or("-").to_owned(),
                node.what.as_str().to_owned(),
                node.session.clone().unwrap_or_else(|| "-".to_owned()),
                connected_cell(node.connection, node.absent_ms),
                output::format_age_ms(node.age_ms),
                record.to_owned(),
                node.owner.clone().unwrap_or_else(|| "-".to_owned()),
            ])?;
        }
        Ok(())
    }
}

/// `3 holders, 1 waiter and 2 empty lock directories`.
fn summary(nodes: &[NodeToReap]) -> String {
    let count = |what: ReapRole| nodes.iter().filter(|n| n.what == what).count();
    format!(
        "{}, {} and {}",
        output::counted(count(ReapRole::Holder), "holder", "holders"),
        output::counted(count(ReapRole::Waiter), "waiter", "waiters"),
        output::counted(
            count(ReapRole::EmptyDirectory),
            "empty lock directory",
            "empty lock directories"
        )
    )
}

/// Reaps under the path: reads it, lists or confirms, deletes, reports.
pub(crate) async fn run(globals: &Globals, args: ReapArgs) -> Result<ExitStatus> {
    with_session_and_surveyor(
        globals,
        Ask::Connections,
        async |session, surveyor, survey| reap(globals, session, (surveyor, survey), &args).await,
    )
    .await
}

async fn reap(
    globals: &Globals,
    session: &Session,
    (surveyor, survey): (&Surveyor, &Survey),
    args: &ReapArgs,
) -> Result<ExitStatus> {
    let printer = &globals.printer;
    let progress = printer.progress();
    let mut plan = reap::plan(
        session,
        &args.path,
        &globals.root,
        args.selector,
        args.empty,
        |walked| show_progress(progress.as_ref(), &args.path, walked),
    )
    .await?;
    drop(progress);
    let mut absences = Absences::default();
    let watched;
    let survey = match args.selector.disconnected_for {
        Some(wanted) => {
            let progress = printer.progress();
            watched = plan
                .watch_sessions(
                    surveyor,
                    (survey, &mut absences),
                    wanted,
                    |waited, sessions| {
                        if let Some(progress) = &progress {
                            progress.set(watching(waited, wanted, sessions));
                        }
                    },
                )
                .await;
            &watched
        }
        None => survey,
    };
    plan.mark(survey, &absences);
    tracing::info!(
        "read {} under {}: {} to reap",
        output::counted(plan.walked.nodes(), "node", "nodes"),
        args.path,
        plan.nodes.len()
    );
    note_unreadable(printer, &plan.walked);
    if plan.nodes.is_empty() {
        printer.note(&format!("nothing to reap under {}", args.path));
    }
    if args.dry_run || !args.yes {
        plan.mark_records(session).await?;
    }
    if args.dry_run {
        if let Some(first) = plan.spared.first() {
            printer.note(&format!(
                "{} left alone (-o json lists each): {}",
                output::counted(plan.spared.len(), "contender", "contenders"),
                first.reason
            ));
        }
        printer.report(&DryRunReport {
            path: args.path.clone(),
            would_delete: plan.nodes,
            deleted: [],
            skipped: plan.spared,
        })?;
        return Ok(ExitStatus::Success);
    }
    if !plan.nodes.is_empty() && !args.yes {
        confirm(
            &args.path,
            &plan.nodes,
            args.selector.disconnected_for.is_some(),
        )
        .await?;
    }
    if let Some(wanted) = args.selector.disconnected_for {
        plan.recheck(surveyor, &mut absences, wanted).await;
    }
    let total = plan.nodes.len() as u64;
    let bar = printer.progress_bar(total, &format!("deleting under {}", args.path));
    let ending = Ending {
        how: EndHow::Reaped,
        by: Ender::of_this_process(),
        reason: args.reason.clone(),
    };
    let (reaped, stopped) = reap::execute(session, &plan.nodes, &ending, |done| {
        if let Some(bar) = &bar {
            bar.set_position(done as u64);
        }
    })
    .await;
    drop(bar);
    tracing::info!("deletes done");
    let Reaped {
        deleted,
        mut skipped,
        gone,
    } = reaped;
    skipped.extend(plan.spared);
    let left_alone = !skipped.is_empty();
    skipped.extend(gone.into_iter().map(|path| Skipped {
        path,
        reason: "it was already gone".to_owned(),
    }));
    // What was deleted before an error is reported too, then the error.
    report(printer, &args.path, deleted, skipped)?;
    stopped?;
    Ok(if left_alone {
        ExitStatus::Other
    } else {
        ExitStatus::Success
    })
}

fn report(
    printer: &Printer,
    path: &str,
    deleted: Vec<String>,
    skipped: Vec<Skipped>,
) -> Result<()> {
    printer.report(&ReapReport {
        path: path.to_owned(),
        deleted,
        skipped,
    })
}

/// The progress line while sessions are watched for `--disconnected-for`.
fn watching(waited: std::time::Duration, wanted: std::time::Duration, sessions: usize) -> String {
    format!(
        "watching {} that no member lists: {} of {}",
        output::counted(sessions, "session", "sessions"),
        humantime::format_duration(std::time::Duration::from_secs(waited.as_secs())),
        humantime::format_duration(wanted)
    )
}

/// Which lock directories the end record goes into, and which keep their
/// data (an application's) while their contenders are deleted alone: one
/// line each, for the prompt.
fn records_said(nodes: &[NodeToReap]) -> String {
    let mut said: Vec<RecordInto> = nodes
        .iter()
        .filter_map(|node| {
            let dir = crate::lock::end::directory_for(&node.path)?;
            Some(RecordInto {
                dir: dir.to_owned(),
                end_record: node.end_record?,
            })
        })
        .collect();
    said.sort_by(|a, b| a.dir.cmp(&b.dir));
    said.dedup();
    said.iter()
        .map(|into| format!("  {}\n", output::inert(&into.line())))
        .collect()
}

/// What a prompt says before breaking holds for their sessions' absence.
const DISCONNECTED_WARNING: &str = "\
warning: a session no member lists may still come back until the server
expires it, and a Curator or kazoo holder whose session comes back does not
notice that its node is gone: it goes on as if it held the lock. Breaking
these holds is a decision, not a cleanup.
";

/// How many of the nodes to show before asking.
const SHOWN_BEFORE_ASKING: usize = 20;

/// Asks on the terminal whether to delete `nodes`; fails with a usage
/// error (exit 2) when stdin is no terminal or the answer is not yes.
/// `disconnected` says they were chosen for their sessions' absence, which
/// their holders may not survive knowing nothing of.
async fn confirm(path: &str, nodes: &[NodeToReap], disconnected: bool) -> Result<()> {
    if !std::io::stdin().is_terminal() {
        return Err(UsageError::new(format!(
            "refusing to delete {} under {path} without --yes (stdin is not a terminal to ask \
             on); nothing was deleted, --dry-run lists them",
            summary(nodes)
        ))
        .into());
    }
    let mut question = format!(
        "zklock: reap will delete {} under {path}:\n",
        summary(nodes)
    );
    let mut connected = 0;
    for node in nodes.iter().take(SHOWN_BEFORE_ASKING) {
        question += &format!(
            "  {}  ({})\n",
            output::inert(&node.path),
            node.what.as_str()
        );
        let Some(session) = &node.session else {
            continue;
        };
        let state = match (node.connection, node.absent_ms) {
            (Some(Connection::Connected), _) => {
                connected += 1;
                "CONNECTED".to_owned()
            }
            (Some(Connection::Disconnected), Some(absent)) => {
                format!("not connected for {}", output::format_age_ms(absent))
            }
            (Some(Connection::Disconnected), None) => "not connected".to_owned(),
            _ => "connection unknown".to_owned(),
        };
        let details = format!(
            "      session {session}  age {}  {state}  {}",
            output::format_age_ms(node.age_ms),
            node.owner.as_deref().unwrap_or("-")
        );
        question += &cut_to_line(&output::inert(&details));
        question.push('\n');
    }
    question += &connected_warning(connected);
    if disconnected {
        question += DISCONNECTED_WARNING;
    }
    if nodes.len() > SHOWN_BEFORE_ASKING {
        question += &format!(
            "  ... and {} more (--dry-run lists them all)\n",
            nodes.len() - SHOWN_BEFORE_ASKING
        );
    }
    question += &records_said(nodes);
    question += "Delete them? [y/N] ";
    ask(question).await
}
