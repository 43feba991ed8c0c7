//! Deleting many nodes fast and safely: each node is deleted only if it is
//! still the incarnation that was seen (same czxid, same owner session) and
//! at the version it was seen at, so a node that changed since it was read,
//! or that was deleted and made again under the same name, is left alone.
//! The deletes are batched and pipelined on one session.
//!
//! ZooKeeper's delete can check a node's data version, not which node it is:
//! a lock directory that is deleted and made again restarts its sequence
//! numbers, and its new first contender has the name and the version (0) of
//! the old one. So each batch first reads the stat of its nodes (one
//! multi-read) and compares czxid and ephemeral owner; only the nodes that
//! are still the ones seen go into the delete. What remains is the time
//! between that read's answer and the delete's arrival: one round trip.
//!
//! Deletes go in multi requests of [`BATCH`]: the server applies each as one
//! transaction, which costs it far less than as many single requests. A
//! multi is all or nothing, so when one delete in it fails (the node
//! changed, went, or has children) that node's outcome is known and the
//! others are sent again one by one.
//!
//! The caller may have something written into each directory in the
//! transaction that deletes nodes in it (zklock's end record, naming them):
//! one write per directory per batch, ahead of the deletes, each at the
//! version the caller read. A directory written since then fails the
//! batch, and its nodes are handed back undeleted ([`Deletion::DirChanged`])
//! for the caller to read again. A directory whose ACL refuses the write
//! must not stop the deletes, which is what deleting had the power to do
//! before: the batch is then sent again as plain deletes, one by one, as
//! are the others of a batch where one delete failed. Up to [`IN_FLIGHT`] batches are
//! outstanding at once (the client sends a request the moment it is made),
//! sent in the order given; ZooKeeper applies one session's requests in
//! order.

use std::future::Future;

use futures::future;
use futures::stream::{self, FuturesUnordered, StreamExt};
use zookeeper_client as zkc;

use super::batch::{self, Batcher};
use super::{Class, DirWrite, Error, Session, class_of, path};

/// Deletes per multi request.
pub(crate) const BATCH: usize = 128;

/// Multi requests outstanding at once on the session.
pub(crate) const IN_FLIGHT: usize = 8;

/// Batches whose stats are read ahead of their deletes: enough to keep the
/// session busy, few enough that the check stays close to the delete.
const CONFIRMED_AHEAD: usize = 2;

/// A node to delete, as it was seen: which incarnation (its czxid and owner
/// session) and its data version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub path: String,
    pub version: i32,
    /// The node's czxid: a node made again under the same name has another.
    pub czxid: i64,
    /// The node's ephemeralOwner (0 for a persistent node).
    pub owner: i64,
}

impl Seen {
    /// The node at `path` as its stat shows it.
    pub fn new(path: impl Into<String>, stat: &zkc::Stat) -> Seen {
        Seen {
            path: path.into(),
            version: stat.version,
            czxid: stat.czxid,
            owner: stat.ephemeral_owner,
        }
    }

    /// True when `stat` is of the same incarnation as the node seen.
    pub(crate) fn is_same_node(&self, stat: &zkc::Stat) -> bool {
        stat.czxid == self.czxid && stat.ephemeral_owner == self.owner
    }
}

/// What became of one delete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Deletion {
    /// The node is deleted (or a retry after a connection loss found it
    /// gone: the first attempt did it).
    Deleted,
    /// The node changed since it was seen (bad version): left alone.
    Changed,
    /// Another node has the name now (deleted and made again since it was
    /// seen): left alone.
    Recreated,
    /// The node was gone before we came.
    Gone,
    /// The node has children: left alone.
    HasChildren,
    /// A directory's write in the same transaction met data written since
    /// the version it names: nothing was done, the node is still there.
    DirChanged,
}

impl Deletion {
    /// Why the node was left alone, for people; `None` when it was deleted.
    pub(crate) fn left_alone_because(self) -> Option<&'static str> {
        match self {
            Deletion::Deleted => None,
            Deletion::Changed => Some("it changed since it was read"),
            Deletion::Recreated => {
                Some("it is a new node under the same name, made after the one that was read")
            }
            Deletion::Gone => Some("it was already gone"),
            Deletion::HasChildren => Some("it has children, so it is no contender node"),
            Deletion::DirChanged => {
                Some("its lock directory was written between reading it and the delete")
            }
        }
    }
}

/// Deletes every node that is still the one seen, at the version it was
/// seen at, in batches of [`BATCH`], at most [`IN_FLIGHT`] batches at a
/// time, sent in the given order; `on_done` hears of each outcome as it
/// comes. Connection losses are retried with the session's policy. Fails on
/// any other error (the session is lost, no permission): no new batch is
/// sent then, the batches already sent are waited for and their outcomes
/// reported, and the first error is returned.
///
/// `records` says what to write into a directory in the transaction that
/// deletes the given nodes of it, and at which version; `None` for nothing
/// ([`no_records`]). A write refused at its version leaves the directory
/// as it was and the batch's nodes in place, each reported
/// [`Deletion::DirChanged`]; a write the ACL refuses, or into a directory
/// gone, leaves the nodes to be deleted alone.
pub(crate) async fn delete_seen(
    session: &Session,
    nodes: impl IntoIterator<Item = Seen>,
    records: &impl Fn(&str, &[&Seen]) -> Option<DirWrite>,
    mut on_done: impl FnMut(&Seen, Deletion),
) -> Result<(), Error> {
    let batcher = Batcher::new(session);
    let nodes: Vec<Seen> = nodes.into_iter().collect();
    let mut confirmed = stream::iter(nodes.chunks(BATCH))
        .map(|batch| confirm(&batcher, session, batch.to_vec()))
        .buffered(CONFIRMED_AHEAD);
    let mut in_flight = FuturesUnordered::new();
    let mut failure = None;
    while failure.is_none() {
        let Some(next) = confirmed.next().await else {
            break;
        };
        match next.and_then(|(same, others)| {
            for (node, deletion) in others {
                on_done(&node, deletion);
            }
            Ok(if same.is_empty() {
                None
            } else {
                Some(delete_batch(session, same, records)?)
            })
        }) {
            Ok(sent) => in_flight.extend(sent),
            Err(err) => failure = Some(err),
        }
        while in_flight.len() >= IN_FLIGHT {
            let done = in_flight.next().await.expect("batches in flight");
            record(done, &mut on_done, &mut failure);
        }
    }
    while let Some(done) = in_flight.next().await {
        record(done, &mut on_done, &mut failure);
    }
    failure.map_or(Ok(()), Err)
}

/// Reports a batch's outcomes, or keeps its failure if it is the first.
fn record(
    done: Result<Vec<(Seen, Deletion)>, Error>,
    on_done: &mut impl FnMut(&Seen, Deletion),
    failure: &mut Option<Error>,
) {
    match done {
        Ok(outcomes) => {
            for (node, deletion) in outcomes {
                on_done(&node, deletion);
            }
        }
        Err(err) => {
            failure.get_or_insert(err);
        }
    }
}

/// Reads the stats of `batch` (multi-reads, retried through connection
/// loss) and splits it into the nodes that are still the ones seen and the
/// outcomes of the others: gone, or another node under the same name.
async fn confirm(
    batcher: &Batcher<'_>,
    session: &Session,
    batch: Vec<Seen>,
) -> Result<(Vec<Seen>, Vec<(Seen, Deletion)>), Error> {
    let mut same = Vec::with_capacity(batch.len());
    let mut others = Vec::new();
    for chunk in batch.chunks(batch::BATCH) {
        let paths: Vec<String> = chunk.iter().map(|node| node.path.clone()).collect();
        for (node, read) in chunk.iter().zip(batcher.read(&paths).await?) {
            let stat = match read {
                Ok((_, stat)) => Some(stat),
                Err(err) if err.is_no_node() => None,
                // The ACL hides its data; its stat needs no permission.
                Err(err) if matches!(err.cause(), Some(zkc::Error::NoAuth)) => {
                    session.stat(&node.path).await?
                }
                Err(err) => return Err(err),
            };
            match stat {
                Some(stat) if node.is_same_node(&stat) => same.push(node.clone()),
                Some(_) => others.push((node.clone(), Deletion::Recreated)),
                None => others.push((node.clone(), Deletion::Gone)),
            }
        }
    }
    Ok((same, others))
}

/// Writes nothing into any directory.
pub(crate) fn no_records(_: &str, _: &[&Seen]) -> Option<DirWrite> {
    None
}

/// What `records` writes into each directory of `batch` with the nodes of
/// it there, in the order the directories first come.
fn directory_writes(
    batch: &[Seen],
    records: &impl Fn(&str, &[&Seen]) -> Option<DirWrite>,
) -> Vec<DirWrite> {
    let mut dirs: Vec<(&str, Vec<&Seen>)> = Vec::new();
    for node in batch {
        let dir = path::parent(&node.path).unwrap_or("/");
        match dirs.iter_mut().find(|(known, _)| *known == dir) {
            Some((_, nodes)) => nodes.push(node),
            None => dirs.push((dir, vec![node])),
        }
    }
    dirs.into_iter()
        .filter_map(|(dir, nodes)| records(dir, &nodes))
        .collect()
}

/// Sends the deletes of `batch` now, as one multi request behind what
/// `records` writes into their directories, and returns the wait for their
/// outcomes.
fn delete_batch<'s, R: Fn(&str, &[&Seen]) -> Option<DirWrite>>(
    session: &'s Session,
    batch: Vec<Seen>,
    records: &R,
) -> Result<impl Future<Output = Result<Vec<(Seen, Deletion)>, Error>> + use<'s, R>, Error> {
    let writes = directory_writes(&batch, records);
    let mut writer = session.client().new_multi_writer();
    for write in &writes {
        writer
            .add_set_data(&write.dir, &write.data, Some(write.version))
            .map_err(|e| Error::op("write", &write.dir, e))?;
    }
    for node in &batch {
        writer
            .add_delete(&node.path, Some(node.version))
            .map_err(|e| Error::op("delete", &node.path, e))?;
    }
    let commit = writer.commit();
    let written = writes.len();
    Ok(async move {
        match commit.await {
            Ok(_) => Ok(batch
                .into_iter()
                .map(|node| (node, Deletion::Deleted))
                .collect()),
            Err(zkc::MultiWriteError::OperationFailed {
                index,
                source: zkc::Error::BadVersion,
            }) if index < written => {
                // A directory was written since it was read: nothing was
                // done, and only the caller can read it again.
                Ok(batch
                    .into_iter()
                    .map(|node| (node, Deletion::DirChanged))
                    .collect())
            }
            Err(zkc::MultiWriteError::OperationFailed { index, source }) if index < written => {
                // A directory refused its record or went: nothing was
                // done; the deletes go alone.
                tracing::info!("deleting without the directories' records after {source}");
                one_by_one(session, batch, 0).await
            }
            Err(zkc::MultiWriteError::OperationFailed { index, source }) => {
                let mut others = batch;
                let failed = others.remove(index - written);
                let deletion = outcome(&failed, source, 0)?;
                let mut outcomes = one_by_one(session, others, 0).await?;
                outcomes.push((failed, deletion));
                Ok(outcomes)
            }
            Err(zkc::MultiWriteError::RequestFailed { source })
                if class_of(&source) == Class::Recoverable && session.retry().retries > 0 =>
            {
                // Done or not: one by one now, where a node found gone
                // counts as deleted by this batch.
                tracing::info!("retrying a batch of deletes one by one after {source}");
                tokio::time::sleep(session.retry().backoff(0)).await;
                one_by_one(session, batch, 1).await
            }
            Err(zkc::MultiWriteError::RequestFailed { source }) => {
                let first = batch.first().map_or("", |node| node.path.as_str());
                Err(Error::op("delete", first, source))
            }
        }
    })
}

/// Deletes each node with a request of its own, all sent at once;
/// `attempt` is 1 when the nodes may have been deleted by an earlier try.
async fn one_by_one(
    session: &Session,
    nodes: Vec<Seen>,
    attempt: u32,
) -> Result<Vec<(Seen, Deletion)>, Error> {
    let pending: Vec<_> = nodes
        .into_iter()
        .map(|node| delete_one(session, node, attempt))
        .collect();
    future::try_join_all(pending).await
}

/// Sends the delete of `node` now, and returns the wait for its outcome,
/// retries included.
fn delete_one(
    session: &Session,
    node: Seen,
    mut attempt: u32,
) -> impl Future<Output = Result<(Seen, Deletion), Error>> + '_ {
    let first = session.client().delete(&node.path, Some(node.version));
    async move {
        let retry = session.retry();
        let mut result = first.await;
        loop {
            match result {
                Err(err) if class_of(&err) == Class::Recoverable && attempt < retry.retries => {
                    tracing::info!("retrying the delete of {} after {err}", node.path);
                    tokio::time::sleep(retry.backoff(attempt)).await;
                    attempt += 1;
                    result = session
                        .client()
                        .delete(&node.path, Some(node.version))
                        .await;
                }
                Ok(()) => return Ok((node, Deletion::Deleted)),
                Err(err) => {
                    let deletion = outcome(&node, err, attempt)?;
                    return Ok((node, deletion));
                }
            }
        }
    }
}

/// What a delete's error means for its node; `attempt` > 0 when an earlier
/// try may have deleted it. Errors that are no outcome are failures.
fn outcome(node: &Seen, err: zkc::Error, attempt: u32) -> Result<Deletion, Error> {
    match err {
        zkc::Error::NoNode if attempt > 0 => Ok(Deletion::Deleted),
        zkc::Error::NoNode => Ok(Deletion::Gone),
        zkc::Error::BadVersion => Ok(Deletion::Changed),
        zkc::Error::NotEmpty => Ok(Deletion::HasChildren),
        zkc::Error::NoAuth => Err(Error::DeleteRefused {
            path: node.path.clone(),
            parent: path::parent(&node.path).unwrap_or("/").to_owned(),
        }),
        err => Err(Error::op("delete", &node.path, err)),
    }
}
