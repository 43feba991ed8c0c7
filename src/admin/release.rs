//! Releasing locks by hand: delete a contender by its token, break a lock by
//! deleting its holders, or ask the holders to let go (Curator's
//! revocation).
//!
//! Only contender nodes (by name and node type, as `stat` shows them) are
//! ever deleted, and each only if it is still the node that was read (same
//! czxid and owner session) at the version read, so a node that changed or
//! was made again meanwhile is left alone. `__REVOKE__` is written only into
//! holders whose library obeys it: Curator's mutexes and read-write locks,
//! and zklock's own holders.

use std::time::Duration;

use serde::Serialize;

use super::reap::Skipped;
use crate::lock::end::{self, Ending};
use crate::lock::hold::REVOKE;
use crate::lock::{ContenderKind, ContenderMode, Dialect, Owner, node, semaphore};
use crate::model::{self, Contender, LockKind};
use crate::usage::UsageError;
use crate::zk::delete::{Deletion, Seen};
use crate::zk::{self, Session, path};

/// Which nodes to remove, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleaseAction {
    /// Delete the node named by the token.
    Token,
    /// Delete the nodes that hold the lock now.
    Holders,
    /// Write `__REVOKE__` into the holders' nodes; delete those still there
    /// after the grace period, if one is given.
    Revoke { force_after: Option<Duration> },
}

/// What a release did to each node.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Released {
    pub deleted: Vec<String>,
    pub revoked: Vec<String>,
    pub skipped: Vec<Skipped>,
}

/// Does `action` to `target` (a token, or with `Holders`/`Revoke` a lock),
/// recording in `done` what became of each node, and in each directory
/// the end record of `ending`. A token that is no
/// contender, and an election or leader node, is refused before anything
/// is written; an error stops the release, with `done` saying what it did
/// before.
pub(crate) async fn release(
    session: &Session,
    target: &str,
    action: ReleaseAction,
    ending: &Ending,
    report: &mut Released,
) -> anyhow::Result<()> {
    match action {
        ReleaseAction::Token => {
            let (data, stat) = session.get_data(target).await?;
            check_contender(target, &stat, &data)?;
            let token = Seen::new(target, &stat);
            delete_all(session, vec![token], ending, report).await?;
        }
        action => {
            let holders = holders(session, target).await?;
            break_holders(session, action, holders, ending, report).await?;
        }
    }
    Ok(())
}

/// Does `action` (`Holders` or `Revoke`) to `holders`, as read by
/// [`holders`] (and, on a terminal, confirmed): each is deleted or written
/// only if it is still the node that was read; a delete leaves the end
/// record of `ending` in the directory (`__REVOKE__` is no end: the holder
/// lets go itself).
pub(crate) async fn break_holders(
    session: &Session,
    action: ReleaseAction,
    holders: Vec<Contender>,
    ending: &Ending,
    report: &mut Released,
) -> anyhow::Result<()> {
    match action {
        ReleaseAction::Token => {}
        ReleaseAction::Holders => {
            delete_all(session, holders.iter().map(seen), ending, report).await?;
        }
        ReleaseAction::Revoke { force_after } => {
            let mut to_break = Vec::new();
            for holder in holders {
                if !obeys_revoke(&holder) {
                    match force_after {
                        Some(_) => to_break.push(seen(&holder)),
                        None => report.skip(&holder.path, IGNORES_REVOKE),
                    }
                    continue;
                }
                to_break.extend(revoke(session, seen(&holder), report).await?);
            }
            if let Some(grace) = force_after {
                let remaining = wait_until_gone(session, to_break, grace).await?;
                delete_all(session, remaining, ending, report).await?;
            }
        }
    }
    Ok(())
}

/// Why a holder was not asked to let go.
const IGNORES_REVOKE: &str = "its library does not obey __REVOKE__ (only Curator and zklock \
     holders do); only --force-after DUR, a delete, can break it";

/// Refuses (exit 2) a token whose node is no contender: one with children,
/// or a persistent node named like one, which lock libraries never make (a
/// config node called `lock-0000000001`, an HBase-like record).
fn check_contender(target: &str, stat: &zk::Stat, data: &[u8]) -> Result<(), UsageError> {
    let refuse = |why: &str| {
        Err(UsageError::new(format!(
            "{target} {why}, so it is no lock contender node; refusing to delete it"
        )))
    };
    if stat.num_children > 0 {
        return refuse("has children");
    }
    if semaphore::parse_lease(path::basename(target)).is_some() && node::is_lease_type(stat) {
        return Ok(());
    }
    let Some(parsed) = node::contender(path::basename(target), stat, data) else {
        return refuse(
            "is owned by no session (lock libraries make their contenders ephemeral; a \
             persistent node with this name is some application's data)",
        );
    };
    if parsed.kind == ContenderKind::Election {
        return Err(refuse_leader(target, LockKind::Election));
    }
    Ok(())
}

/// True when the holder's library lets go on `__REVOKE__`: Curator's
/// (revocable) mutexes and read-write locks, and zklock's holders in any
/// dialect and kind, known by their owner record. Curator's semaphore
/// leases have no revocation: writing into them would report a lease as
/// asked to let go that never will.
pub(crate) fn obeys_revoke(holder: &Contender) -> bool {
    let curator_lock = holder.dialect == Dialect::Curator && holder.mode != ContenderMode::Lease;
    curator_lock || Owner::parse(&holder.data).is_some()
}

/// The contender as it was read, for a delete of that node alone.
pub(crate) fn seen(contender: &Contender) -> Seen {
    Seen::new(&contender.path, &contender.stat)
}

impl Released {
    /// True when nothing was done and nothing left alone.
    pub(crate) fn is_empty(&self) -> bool {
        self.deleted.is_empty() && self.revoked.is_empty() && self.skipped.is_empty()
    }

    fn skip(&mut self, path: &str, reason: &str) {
        self.skipped.push(Skipped {
            path: path.to_owned(),
            reason: reason.to_owned(),
        });
    }
}

/// The contenders that hold `lock` now, as `stat` shows them (the one lock
/// model); refuses (exit 2) an election or a leader node,
/// whose holder is a service's leader, not a stuck lock.
pub(crate) async fn holders(session: &Session, lock: &str) -> anyhow::Result<Vec<Contender>> {
    match model::read_lock(session, lock).await? {
        Some(found) if !found.kind.may_be_broken() => Err(refuse_leader(lock, found.kind).into()),
        Some(found) => Ok(found.holders),
        None => Ok(Vec::new()),
    }
}

fn refuse_leader(path: &str, kind: LockKind) -> UsageError {
    UsageError::new(format!(
        "{path} is {} (its service picks its leader with it); zklock shows elections and \
         leader nodes but never deletes or revokes their nodes",
        match kind {
            LockKind::Election => "a node of a leader election",
            _ => "a leader node",
        }
    ))
}

/// Deletes the nodes, each only if it is still at the version seen (with
/// the shared batched delete, which retries through connection loss), with
/// the end record of `ending` written over what each directory holds (its
/// last `--once-per` run kept) where it holds nothing or a record; a node
/// that changed or went meanwhile is reported, not deleted.
async fn delete_all(
    session: &Session,
    nodes: impl IntoIterator<Item = Seen>,
    ending: &Ending,
    report: &mut Released,
) -> Result<(), zk::Error> {
    let nodes: Vec<Seen> = nodes.into_iter().collect();
    end::delete_recording(
        session,
        nodes,
        ending,
        &|_| false,
        |node, deletion| match deletion.left_alone_because() {
            None => report.deleted.push(node.path.clone()),
            Some(reason) => report.skip(&node.path, reason),
        },
    )
    .await
}

/// Writes `__REVOKE__` into the node if it is still the node seen, at the
/// version seen; returns it at its new version. A write checks the version
/// alone, and a node made again under the same name starts at the version
/// of the first: its czxid and owner are read first (`top` revokes what
/// was shown a while ago).
async fn revoke(
    session: &Session,
    node: Seen,
    report: &mut Released,
) -> Result<Option<Seen>, zk::Error> {
    match session.stat(&node.path).await? {
        Some(stat) if node.is_same_node(&stat) => {}
        Some(_) => {
            let why = Deletion::Recreated.left_alone_because().unwrap_or_default();
            report.skip(&node.path, why);
            return Ok(None);
        }
        None => return Ok(None),
    }
    match session
        .set_data_at("revoke", &node.path, REVOKE, node.version)
        .await
    {
        Ok(stat) => {
            report.revoked.push(node.path.clone());
            Ok(Some(Seen {
                version: stat.version,
                ..node
            }))
        }
        Err(err) if err.is_bad_version() => {
            report.skip(
                &node.path,
                Deletion::Changed.left_alone_because().unwrap_or_default(),
            );
            Ok(None)
        }
        Err(err) if err.is_no_node() => Ok(None),
        Err(err) => Err(err),
    }
}

/// Waits up to `grace` for the revoked nodes to go; returns those still
/// there, at the version they were last seen at. A node made again under
/// the same name is someone else's: it counts as gone.
async fn wait_until_gone(
    session: &Session,
    nodes: Vec<Seen>,
    grace: Duration,
) -> Result<Vec<Seen>, zk::Error> {
    let deadline = tokio::time::Instant::now() + grace;
    let mut remaining = Vec::new();
    for node in nodes {
        loop {
            let (stat, mut watch) = session.watch_stat(&node.path).await?;
            let Some(stat) = stat.filter(|stat| stat.czxid == node.czxid) else {
                break;
            };
            if tokio::time::timeout_at(deadline, watch.changed())
                .await
                .is_err()
            {
                remaining.push(Seen {
                    version: stat.version,
                    ..node
                });
                break;
            }
        }
    }
    Ok(remaining)
}
