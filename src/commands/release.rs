//! `zklock release TARGET`: the command around [`crate::admin::release`]: checks
//! the token before connecting, and reports what was done as a table or
//! JSON.

use anyhow::Result;

use crate::admin::release::{ReleaseAction, Released, release};
use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::lock::{name, semaphore};
use crate::output::{Column, Report, Table};
use crate::usage::UsageError;
use crate::zk::{self, path};

use super::{NODE_ACTIONS, node_action_rows, with_session};

/// What `release` was asked for.
#[derive(Clone, Debug)]
pub struct ReleaseArgs {
    /// The token (a contender node) or, with `--holders`/`--revoke`, the lock.
    pub target: String,
    pub action: ReleaseAction,
    /// A token whose node is already gone is not an error.
    pub if_exists: bool,
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
    let mut report = Released::default();
    let result = with_session(globals, async |session| {
        release(session, &args.target, args.action, &mut report).await
    })
    .await;
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
