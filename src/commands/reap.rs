//! `zklock reap [PATH]`: delete stale contender nodes (by age, by session,
//! or all) and, with `--empty`, empty lock directories, after a `--yes` or
//! a yes at the prompt; `--dry-run` only lists them. What to delete and how
//! is decided in [`crate::admin::reap`]; this module asks, shows and
//! reports.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::{Context, Result};
use comfy_table::Table;
use serde::Serialize;

use crate::admin::reap::{self, Doom, Doomed, Reaped, Selector, Skipped};
use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::output::{self, Printer, Report};
use crate::usage::UsageError;
use crate::zk::{self, Session};

use super::ls;

/// Short examples for `zklock reap -h`.
pub const EXAMPLES: &str = "\
Examples:
  zklock reap --older-than 1h --dry-run     what would go: contenders older than an hour
  zklock reap --older-than 1h               delete them (asks on a terminal)
  zklock reap --session 0x1000a2b3c4d0005 --yes app
                                            every node of that session under /locks/app
  zklock reap --all --empty --yes old-app   everything under /locks/old-app, directories too";

/// The full help of `zklock reap --help` and its man page.
pub fn manual() -> String {
    format!(
        "{EXAMPLES}

Selectors (a node must match every one given): --older-than DUR (the
node's ctime is at least DUR ago, by this machine's clock), --session ID
(its owner session, 0x... as zklock and zkCli print it, or decimal), --all
(every contender). At least one, or --empty alone; otherwise exit 2.

Only lock contender nodes are ever deleted: the holders and waiters ls and
stat show, of every dialect (semaphore leases and their acquirers too). A
node is a contender when its name is one a lock library makes and its node
is one that library makes: ephemeral (owned by a session); persistent only
for kazoo's <hex32>__lock__N names and zklock's own --ttl nodes (known by
zklock's owner record). A persistent lock-0000000001, write-N, read-N or
x-<digits>-N is some application's data and is never touched, nor is any
other child of a lock directory (broker ids, election nodes, queue
entries). Per lock, waiters go first, from the back of the queue, then
holders, so no waiter is granted a lock only to lose it.

--empty also deletes the lock directories this reap empties: a lock
directory at or below PATH whose every contender this reap deletes, with no
other child and no data, after its contenders. An empty node found empty is
never deleted: nothing shows what it held (Kafka's broker list, an emptied
queue), and the server shows containers to clients as persistent nodes.
zklock's and Curator's lock directories are containers and go by themselves
once empty. Never /, /zookeeper, --root or anything above it; never a
semaphore's directory.

Every node is deleted only if it is still the node that was listed (and
shown at the prompt): just before its delete, its stat is read again
(batched) and its czxid and owner session must match, and the delete
carries the data version it was read at. A node that changed, or was
deleted and made again under the same name, is left alone and reported.
What remains is one round trip between that read and the delete. The
deletes go on one session in multi requests of 128 (one transaction on the
server each), 8 requests in flight; when one delete of a multi fails, that
node is reported and the others are deleted one by one. --dry-run only
lists. Otherwise, with stdin a terminal zklock lists what will go and asks;
without a terminal it needs --yes, and exits 2 without deleting anything.

A reap that stops on an error (a lost session, a delete refused) prints
what it deleted before the error, then the error and its exit code.
Deleting a node needs DELETE permission on its parent: a refused delete
names the parent whose ACL refused it (exit 5).

A live holder whose node is reaped has lost its lock: a zklock holder stops
its command and exits 4; other libraries' holders may not notice at all.
That is the price of reaping: reap what is stale, not what is slow.

Exit: 0 when every node selected is gone (including nodes someone else
removed meanwhile); 10 when some were left alone; 2 when not confirmed; 5
when a delete was refused. JSON: {{\"deleted\": [path], \"skipped\":
[{{\"path\", \"reason\"}}]}}; with --dry-run {{\"would_delete\": [node],
\"deleted\": [], \"skipped\": []}}, where node = {{\"path\", \"what\" (holder,
waiter, empty-directory), \"lock\", \"session\" (0x..., null for a
directory), \"age_ms\", \"owner\" (as stat shows it; null for a
directory)}}."
    )
}

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
}

/// Checks that something is selected: a selector, or `--empty`.
pub fn check_selection(selector: &Selector, empty: bool) -> Result<(), UsageError> {
    if selector.is_empty() && !empty {
        return Err(UsageError::new(
            "say what to reap: --older-than DUR, --session ID, --all, or --empty",
        ));
    }
    Ok(())
}

/// What reap did.
#[derive(Debug, Serialize)]
pub struct ReapReport {
    #[serde(skip)]
    path: String,
    deleted: Vec<String>,
    skipped: Vec<Skipped>,
}

impl Report for ReapReport {
    fn heading(&self) -> Option<String> {
        Some(format!(
            "{}: {} deleted, {} left alone",
            self.path,
            self.deleted.len(),
            self.skipped.len()
        ))
    }

    fn table(&self) -> Table {
        let mut table = output::table(&["NODE", "ACTION"]);
        for path in &self.deleted {
            table.add_row([path.as_str(), "deleted"]);
        }
        for skipped in &self.skipped {
            table.add_row([
                skipped.path.clone(),
                format!("left alone: {}", skipped.reason),
            ]);
        }
        table
    }
}

/// What reap would do (`--dry-run`).
#[derive(Debug, Serialize)]
pub struct DryRunReport {
    #[serde(skip)]
    path: String,
    would_delete: Vec<Doomed>,
    deleted: [String; 0],
    skipped: [Skipped; 0],
}

impl Report for DryRunReport {
    fn heading(&self) -> Option<String> {
        Some(format!(
            "{}: would delete {}",
            self.path,
            summary(&self.would_delete)
        ))
    }

    fn table(&self) -> Table {
        let mut table = output::table(&["NODE", "WHAT", "SESSION", "AGE", "OWNER"]);
        for node in &self.would_delete {
            table.add_row([
                node.path.clone(),
                node.what.as_str().to_owned(),
                node.session.clone().unwrap_or_else(|| "-".to_owned()),
                output::format_age_ms(node.age_ms),
                node.owner.clone().unwrap_or_else(|| "-".to_owned()),
            ]);
        }
        table
    }
}

/// `3 holders, 1 waiter and 2 empty lock directories`.
fn summary(nodes: &[Doomed]) -> String {
    let count = |what: Doom| nodes.iter().filter(|n| n.what == what).count();
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "{}, {} and {}",
        plural(count(Doom::Holder), "holder", "holders"),
        plural(count(Doom::Waiter), "waiter", "waiters"),
        plural(
            count(Doom::EmptyDirectory),
            "empty lock directory",
            "empty lock directories"
        )
    )
}

/// Reaps under the path: reads it, lists or confirms, deletes, reports.
pub async fn run(globals: &Globals, args: ReapArgs) -> Result<ExitStatus> {
    let session = zk::connect(&globals.connect).await?;
    let result = reap(globals, &session, &args).await;
    session.close().await;
    result
}

async fn reap(globals: &Globals, session: &Session, args: &ReapArgs) -> Result<ExitStatus> {
    let printer = &globals.printer;
    let progress = printer.progress();
    let planned = reap::plan(
        session,
        &args.path,
        &globals.root,
        args.selector,
        args.empty,
        |walked| ls::show_progress(progress.as_ref(), &args.path, walked),
    )
    .await;
    if let Some(progress) = progress {
        progress.finish();
    }
    let plan = planned?;
    tracing::info!(
        "read {} nodes under {}: {} to reap",
        plan.walked.nodes(),
        args.path,
        plan.nodes.len()
    );
    ls::note_unreadable(printer, &plan.walked);
    if plan.nodes.is_empty() {
        printer.note(&format!("nothing to reap under {}", args.path));
    }
    if args.dry_run {
        printer.report(&DryRunReport {
            path: args.path.clone(),
            would_delete: plan.nodes,
            deleted: [],
            skipped: [],
        })?;
        return Ok(ExitStatus::Success);
    }
    if !plan.nodes.is_empty() && !args.yes {
        confirm(&args.path, &plan.nodes).await?;
    }
    let total = plan.nodes.len() as u64;
    let bar = printer.progress_bar(total, &format!("deleting under {}", args.path));
    let (reaped, stopped) = reap::execute(session, &plan.nodes, |done| {
        if let Some(bar) = &bar {
            bar.set_position(done as u64);
        }
    })
    .await;
    if let Some(bar) = bar {
        bar.finish();
    }
    tracing::info!("deletes done");
    let Reaped {
        deleted,
        mut skipped,
        gone,
    } = reaped;
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

/// How many of the nodes to show before asking.
const SHOWN_BEFORE_ASKING: usize = 20;

/// Asks on the terminal whether to delete `nodes`; fails with a usage
/// error (exit 2) when stdin is no terminal or the answer is not yes.
async fn confirm(path: &str, nodes: &[Doomed]) -> Result<()> {
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
    for node in nodes.iter().take(SHOWN_BEFORE_ASKING) {
        question += &format!("  {}  ({})\n", node.path, node.what.as_str());
    }
    if nodes.len() > SHOWN_BEFORE_ASKING {
        question += &format!(
            "  ... and {} more (--dry-run lists them all)\n",
            nodes.len() - SHOWN_BEFORE_ASKING
        );
    }
    question += "Delete them? [y/N] ";
    let answer = tokio::task::spawn_blocking(move || -> std::io::Result<String> {
        let mut stderr = std::io::stderr().lock();
        stderr.write_all(question.as_bytes())?;
        stderr.flush()?;
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        Ok(answer)
    })
    .await
    .context("asking for confirmation")?
    .context("reading the answer from the terminal")?;
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(()),
        _ => Err(UsageError::new("not confirmed; nothing was deleted").into()),
    }
}
