//! `zklock release TARGET`: the command around [`crate::admin::release`]: checks
//! the token before connecting, and reports what was done as a table or
//! JSON.

use std::io::IsTerminal;

use anyhow::Result;
use serde::Serialize;

use crate::admin::release::{ReleaseAction, Released, break_holders, holders, release, seen};
use crate::admin::{RecordInto, records_into};
use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::lock::end::{EndHow, Ender, Ending};
use crate::lock::{name, semaphore};
use crate::model::Contender;
use crate::output::{self, Column, Report, Table};
use crate::usage::UsageError;
use crate::zk::sessions::{Ask, Survey};
use crate::zk::{self, Session, path};

use super::{
    NODE_ACTIONS, ask, connected_warning, contender_connected, holder_line, node_action_rows,
    sequence, with_session, with_session_and_survey,
};

/// What `release` was asked for.
#[derive(Clone, Debug)]
pub struct ReleaseArgs {
    /// The token (a contender node) or, with `--holders`/`--revoke`, the lock.
    pub target: String,
    pub action: ReleaseAction,
    /// A token whose node is already gone is not an error.
    pub if_exists: bool,
    /// Break holders without asking.
    pub yes: bool,
    /// Only list the holders that would be broken.
    pub dry_run: bool,
    /// `--reason`, for the end records.
    pub reason: Option<String>,
}

/// True when `action` deletes holders, which is asked about on a terminal
/// and needs `--yes` elsewhere, as `reap` does.
fn deletes_holders(action: ReleaseAction) -> bool {
    matches!(
        action,
        ReleaseAction::Holders
            | ReleaseAction::Revoke {
                force_after: Some(_)
            }
    )
}

/// The holders a release would break (`--dry-run`), and the lock
/// directories their end record would go into.
#[derive(Serialize)]
struct WouldBreak<'a> {
    #[serde(skip)]
    lock: &'a str,
    #[serde(skip)]
    holders: &'a [Contender],
    would_break: Vec<crate::model::ContenderJson<'a>>,
    end_records: Vec<RecordInto>,
}

impl Report for WouldBreak<'_> {
    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[
            Column::whole("NODE").wide(),
            Column::whole("SEQ"),
            Column::whole("SESSION"),
            Column::whole("AGE").goes(2),
            Column::whole("CONNECTED").goes(3),
            Column::text("OWNER").goes(1),
        ];
        COLUMNS
    }

    fn rows(&self, table: &mut Table<'_>) -> std::io::Result<()> {
        would_break_rows(table, self.holders)
    }

    fn summary(&self) -> Option<String> {
        let mut summary = format!(
            "{}: would break {}",
            self.lock,
            output::counted(self.would_break.len(), "holder", "holders")
        );
        for into in &self.end_records {
            summary += &format!("\n{}", into.line());
        }
        Some(summary)
    }
}

/// The dry run's table rows, from the holders themselves.
fn would_break_rows(table: &mut Table<'_>, holders: &[Contender]) -> std::io::Result<()> {
    for holder in holders {
        table.row([
            holder.path.clone(),
            sequence(holder),
            zk::format_session(holder.session()),
            output::format_age_ms(holder.age_ms),
            contender_connected(holder),
            holder.owner_text(),
        ])?;
    }
    Ok(())
}

impl Report for Released {
    fn columns(&self) -> &'static [Column] {
        NODE_ACTIONS
    }

    fn rows(&self, table: &mut Table<'_>) -> std::io::Result<()> {
        let done: [(&[String], &str); 2] = [
            (&self.deleted, "deleted"),
            (&self.revoked, "asked to let go (__REVOKE__)"),
        ];
        node_action_rows(table, &done, &self.skipped)
    }
}

/// Checks that `target` may be deleted as a token, before any connection:
/// not the root, and named like a lock contender or a semaphore lease of a
/// known dialect.
pub(crate) fn check_token(target: &str) -> Result<(), UsageError> {
    let name = path::basename(target);
    if target == "/" || (name::parse(name).is_none() && semaphore::parse_lease(name).is_none()) {
        return Err(UsageError::new(format!(
            "{target} is not a lock contender or semaphore lease node; refusing to delete it \
             (to break a lock by its name, use --holders)"
        )));
    }
    Ok(())
}

/// Runs `release`. Exit 6 when the token's node is gone (unless
/// `--if-exists`), 10 when a node changed between reading and deleting. A
/// release that stops on an error reports what it did before, then fails.
pub(crate) async fn run(globals: &Globals, args: ReleaseArgs) -> Result<ExitStatus> {
    let confirm = deletes_holders(args.action) && !args.yes && !args.dry_run;
    if confirm && !std::io::stdin().is_terminal() {
        return Err(UsageError::new(format!(
            "refusing to break the holders of {} without --yes (stdin is not a terminal to \
             ask on); nothing was done, --dry-run lists them",
            args.target
        ))
        .into());
    }
    let mut report = Released::default();
    let ending = Ending {
        how: EndHow::Broken,
        by: Ender::of_this_process(),
        reason: args.reason.clone(),
    };
    let result = match args.action {
        ReleaseAction::Token => {
            with_session(globals, async |session| {
                release(session, &args.target, args.action, &ending, &mut report).await
            })
            .await
        }
        action => {
            let broke =
                with_session_and_survey(globals, Ask::Connections, async |session, survey| {
                    break_asked(
                        globals,
                        session,
                        survey,
                        (&args, action, &ending),
                        &mut report,
                    )
                    .await
                })
                .await;
            match broke {
                Ok(false) => return Ok(ExitStatus::Success),
                other => other.map(drop),
            }
        }
    };
    if result.is_err() && !report.is_empty() {
        globals.printer.report(&report)?;
    }
    match result {
        Err(err)
            if args.if_exists
                && err
                    .downcast_ref::<zk::Error>()
                    .is_some_and(zk::Error::is_no_node) =>
        {
            globals
                .printer
                .note(&format!("{} is already gone", args.target));
            // What was done before the node went is printed above; with
            // nothing done, the empty report still tells a script so.
            if report.is_empty() {
                globals.printer.report(&report)?;
            }
            return Ok(ExitStatus::Success);
        }
        other => other?,
    };
    if report.is_empty() {
        globals
            .printer
            .note(&format!("nothing holds {}", args.target));
    }
    globals.printer.report(&report)?;
    Ok(if report.skipped.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Other
    })
}

/// Reads the lock's holders, with whether each session is connected; lists
/// them (`--dry-run`, returning false) or asks before deleting any (unless
/// `--yes`), then breaks them as `action` says.
async fn break_asked(
    globals: &Globals,
    session: &Session,
    survey: &Survey,
    (args, action, ending): (&ReleaseArgs, ReleaseAction, &Ending),
    report: &mut Released,
) -> Result<bool> {
    let mut found = holders(session, &args.target).await?;
    for holder in &mut found {
        holder.attach_client(survey);
    }
    let asks = deletes_holders(action) && !args.yes && !found.is_empty();
    let end_records = match args.dry_run || asks {
        true => {
            let seen: Vec<_> = found.iter().map(seen).collect();
            records_into(session, &seen, |_| false).await?
        }
        false => Vec::new(),
    };
    if args.dry_run {
        globals.printer.report(&WouldBreak {
            lock: &args.target,
            holders: &found,
            would_break: found.iter().map(|h| h.json(false)).collect(),
            end_records,
        })?;
        return Ok(false);
    }
    if asks {
        let mut question = format!(
            "zklock: release will delete {} of {}:\n",
            output::counted(found.len(), "holder", "holders"),
            output::inert(&args.target)
        );
        for holder in &found {
            question += &holder_line(holder);
            question.push('\n');
        }
        for into in &end_records {
            question += &format!("{}\n", output::inert(&into.line()));
        }
        let connected = found
            .iter()
            .filter(|h| h.client.as_ref().is_some_and(|c| c.connected))
            .count();
        question += &connected_warning(connected);
        question += "Delete them? [y/N] ";
        ask(question).await?;
    }
    break_holders(session, action, found, ending, report).await?;
    Ok(true)
}
