//! `zklock check TOKEN... [--fence N]...`: whether each token's node holds
//! its lock now ([`crate::model::check`]), for the resource a lock guards
//! and for the command under it before a critical write. Exit 0 when every
//! one does, 1 when one does not, as `test` answers.

use anyhow::Result;
use serde::Serialize;

use crate::clock;
use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::model::check::{self, TokenCheck};
use crate::output::{self, Column, Report, Table};
use crate::usage::UsageError;

use super::with_session;

/// Refuses, before any connection, a token named as no lock library names
/// its nodes, and `--fence` given other than once per token.
pub(crate) fn check_args(tokens: &[String], fences: &[i64]) -> Result<(), UsageError> {
    if let Some(token) = tokens.iter().find(|token| !check::is_token(token)) {
        return Err(UsageError::new(format!(
            "{token} is not a lock contender or semaphore lease node, so it is no token"
        )));
    }
    if !fences.is_empty() && fences.len() != tokens.len() {
        return Err(UsageError::new(format!(
            "--fence is given {} times for {} tokens: give it once per token, in the same order",
            fences.len(),
            tokens.len()
        )));
    }
    Ok(())
}

/// What `check` was asked for.
#[derive(Clone, Debug)]
pub struct CheckArgs {
    /// The tokens: contender or lease node paths.
    pub tokens: Vec<String>,
    /// `--fence`: none, or the fencing token each node must have, in the
    /// order of the tokens.
    pub fences: Vec<i64>,
}

/// Every token's answer: a JSON array, or a table.
#[derive(Serialize)]
#[serde(transparent)]
struct Checked(Vec<TokenCheck>);

impl Report for Checked {
    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[
            Column::whole("NODE"),
            Column::whole("HELD"),
            Column::whole("FENCE"),
            Column::whole("AGE"),
            Column::whole("LOCK").wide(),
        ];
        COLUMNS
    }

    fn rows(&self, table: &mut Table<'_>) -> std::io::Result<()> {
        for checked in &self.0 {
            table.row([
                checked.node.clone(),
                if checked.held { "yes" } else { "no" }.to_owned(),
                checked
                    .fence
                    .map_or("-".to_owned(), |fence| fence.to_string()),
                checked.age_ms.map_or("-".to_owned(), output::format_age_ms),
                checked.lock.clone(),
            ])?;
        }
        Ok(())
    }
}

/// Runs `check` in one session, closed at the end.
pub(crate) async fn run(globals: &Globals, args: CheckArgs) -> Result<ExitStatus> {
    let checked = with_session(globals, async |session| {
        let now = clock::now_ms();
        let mut checked = Vec::with_capacity(args.tokens.len());
        for (index, token) in args.tokens.iter().enumerate() {
            let fence = args.fences.get(index).copied();
            checked.push(check::check(session, token, fence, now).await?);
        }
        Ok(checked)
    })
    .await?;
    let all_held = checked.iter().all(|checked| checked.held);
    globals.printer.report(&Checked(checked))?;
    Ok(if all_held {
        ExitStatus::Success
    } else {
        ExitStatus::NotHeld
    })
}
