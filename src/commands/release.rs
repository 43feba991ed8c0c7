//! `zklock release TARGET`: delete a lock node by its token, break a lock by
//! deleting its holders, or ask the holders to let go (Curator's revocation).
//!
//! Only recognised contender nodes are ever deleted, and each delete carries
//! the version that was read, so a node that changed meanwhile is left alone.

use std::time::Duration;

use anyhow::Result;
use comfy_table::Table;
use serde::Serialize;
use zookeeper_client as zkc;

use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::inspect;
use crate::lock::hold::REVOKE;
use crate::lock::name;
use crate::output::{self, Report};
use crate::usage::UsageError;
use crate::zk::{self, Session, path};

/// What `release` was asked for.
#[derive(Clone, Debug)]
pub struct ReleaseArgs {
    /// The token (a contender node) or, with `--holders`/`--revoke`, the lock.
    pub target: String,
    pub how: How,
    /// A token whose node is already gone is not an error.
    pub if_exists: bool,
}

/// Which nodes to remove, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// Delete the node named by the token.
    Token,
    /// Delete the nodes that hold the lock now.
    Holders,
    /// Write `__REVOKE__` into the holders' nodes; delete those still there
    /// after the grace period, if one is given.
    Revoke { force_after: Option<Duration> },
}

/// What was done to each node.
#[derive(Debug, Default, Serialize)]
pub struct ReleaseReport {
    pub deleted: Vec<String>,
    pub revoked: Vec<String>,
    pub skipped: Vec<Skipped>,
}

/// A node left alone, and why.
#[derive(Debug, Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

impl Report for ReleaseReport {
    fn table(&self) -> Table {
        let mut table = output::table(&["node", "action"]);
        for path in &self.deleted {
            table.add_row([path.as_str(), "deleted"]);
        }
        for path in &self.revoked {
            table.add_row([path.as_str(), "asked to let go (__REVOKE__)"]);
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

/// Checks that `target` may be deleted as a token, before any connection:
/// not the root, and named like a lock contender of a known dialect.
pub fn check_token(target: &str) -> Result<(), UsageError> {
    if target == "/" || name::parse(path::basename(target)).is_none() {
        return Err(UsageError::new(format!(
            "{target} is not a lock contender node; refusing to delete it \
             (to break a lock by its name, use --holders)"
        )));
    }
    Ok(())
}

/// Runs `release`. Exit 6 when the token's node is gone (unless
/// `--if-exists`), 10 when a node changed between reading and deleting.
pub async fn run(globals: &Globals, args: ReleaseArgs) -> Result<ExitStatus> {
    let session = zk::connect(&globals.connect).await?;
    let result = release(&session, &args).await;
    session.close().await;
    let report = match result {
        Err(err)
            if args.if_exists
                && err
                    .downcast_ref::<zk::Error>()
                    .is_some_and(zk::Error::is_no_node) =>
        {
            globals
                .printer
                .note(&format!("{} is already gone", args.target));
            return Ok(ExitStatus::Success);
        }
        other => other?,
    };
    if report.deleted.is_empty() && report.revoked.is_empty() && report.skipped.is_empty() {
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

async fn release(session: &Session, args: &ReleaseArgs) -> Result<ReleaseReport> {
    let mut report = ReleaseReport::default();
    match args.how {
        How::Token => {
            let (_, stat) = session.get_data(&args.target).await?;
            if stat.num_children > 0 {
                return Err(UsageError::new(format!(
                    "{} has children, so it is no lock contender node; refusing to delete it",
                    args.target
                ))
                .into());
            }
            delete_seen(session, &args.target, stat.version, &mut report).await?;
        }
        How::Holders => {
            for (node, version) in holders(session, &args.target).await? {
                delete_seen(session, &node, version, &mut report).await?;
            }
        }
        How::Revoke { force_after } => {
            let mut revoked = Vec::new();
            for (node, version) in holders(session, &args.target).await? {
                if let Some(version) = revoke(session, &node, version, &mut report).await? {
                    revoked.push((node, version));
                }
            }
            if let Some(grace) = force_after {
                for (node, version) in wait_until_gone(session, revoked, grace).await? {
                    delete_seen(session, &node, version, &mut report).await?;
                }
            }
        }
    }
    Ok(report)
}

impl ReleaseReport {
    fn skip(&mut self, path: &str, reason: &str) {
        self.skipped.push(Skipped {
            path: path.to_owned(),
            reason: reason.to_owned(),
        });
    }
}

/// The nodes that hold `lock` now (as `stat` shows them: the one lock
/// model), with the versions they were seen at.
async fn holders(session: &Session, lock: &str) -> Result<Vec<(String, i32)>> {
    let holders = inspect::read_lock(session, lock)
        .await?
        .map(|lock| lock.holders)
        .unwrap_or_default();
    Ok(holders
        .into_iter()
        .map(|c| (c.path, c.stat.version))
        .collect())
}

/// Deletes `node` if it is still at `version`; a node that changed or went
/// meanwhile is reported, not deleted.
async fn delete_seen(
    session: &Session,
    node: &str,
    version: i32,
    report: &mut ReleaseReport,
) -> Result<(), zk::Error> {
    match session.client().delete(node, Some(version)).await {
        Ok(()) => report.deleted.push(node.to_owned()),
        Err(zkc::Error::BadVersion) => report.skip(node, "it changed since it was read"),
        Err(zkc::Error::NoNode) => report.skip(node, "it was already gone"),
        Err(zkc::Error::NotEmpty) => {
            report.skip(node, "it has children, so it is no contender node")
        }
        Err(err) => return Err(zk::Error::op("delete", node, err)),
    }
    Ok(())
}

/// Writes `__REVOKE__` into `node` if it is still at `version`; returns the
/// new version.
async fn revoke(
    session: &Session,
    node: &str,
    version: i32,
    report: &mut ReleaseReport,
) -> Result<Option<i32>, zk::Error> {
    match session.client().set_data(node, REVOKE, Some(version)).await {
        Ok(stat) => {
            report.revoked.push(node.to_owned());
            Ok(Some(stat.version))
        }
        Err(zkc::Error::BadVersion) => {
            report.skip(node, "it changed since it was read");
            Ok(None)
        }
        Err(zkc::Error::NoNode) => Ok(None),
        Err(err) => Err(zk::Error::op("revoke", node, err)),
    }
}

/// Waits up to `grace` for the revoked nodes to go; returns those still there.
async fn wait_until_gone(
    session: &Session,
    nodes: Vec<(String, i32)>,
    grace: Duration,
) -> Result<Vec<(String, i32)>, zk::Error> {
    let deadline = tokio::time::Instant::now() + grace;
    let mut remaining = Vec::new();
    for (node, _) in nodes {
        loop {
            let client = session.client();
            let (stat, watcher) = session
                .retry()
                .run(|| client.check_and_watch_stat(&node))
                .await
                .map_err(|e| zk::Error::op("watch", &node, e))?;
            let Some(stat) = stat else { break };
            if tokio::time::timeout_at(deadline, watcher.changed())
                .await
                .is_err()
            {
                remaining.push((node, stat.version));
                break;
            }
        }
    }
    Ok(remaining)
}
