//! Deleting many nodes fast and safely: every delete carries the data
//! version its node was seen at, so a node that changed since it was read
//! is left alone, and the deletes are batched and pipelined on one session.
//!
//! Deletes go in multi requests of [`BATCH`]: the server applies each as one
//! transaction, which costs it far less than as many single requests. A
//! multi is all or nothing, so when one delete in it fails (the node
//! changed, went, or has children) that node's outcome is known and the
//! others are sent again one by one. Up to [`IN_FLIGHT`] batches are
//! outstanding at once (the client sends a request the moment it is made),
//! sent in the order given; ZooKeeper applies one session's requests in
//! order.

use std::future::Future;

use futures::future;
use futures::stream::{FuturesUnordered, StreamExt};
use zookeeper_client as zkc;

use super::{Class, Error, Session, class_of};

/// Deletes per multi request.
pub const BATCH: usize = 128;

/// Multi requests outstanding at once on the session.
pub const IN_FLIGHT: usize = 8;

/// A node to delete, and the data version it was seen at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub path: String,
    pub version: i32,
}

/// What became of one delete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deletion {
    /// The node is deleted (or a retry after a connection loss found it
    /// gone: the first attempt did it, SPEC §3).
    Deleted,
    /// The node changed since it was seen (bad version): left alone.
    Changed,
    /// The node was gone before we came.
    Gone,
    /// The node has children: left alone.
    HasChildren,
}

impl Deletion {
    /// Why the node was left alone, for people; `None` when it was deleted.
    pub fn left_alone_because(self) -> Option<&'static str> {
        match self {
            Deletion::Deleted => None,
            Deletion::Changed => Some("it changed since it was read"),
            Deletion::Gone => Some("it was already gone"),
            Deletion::HasChildren => Some("it has children, so it is no contender node"),
        }
    }
}

/// Deletes every node at the version it was seen at, in batches of
/// [`BATCH`], at most [`IN_FLIGHT`] batches at a time, sent in the given
/// order; `on_done` hears of each outcome as it comes. Connection losses are
/// retried with the session's policy. Fails on any other error (the session
/// is lost, no permission); deletes already sent may have been done by then.
pub async fn delete_seen(
    session: &Session,
    nodes: impl IntoIterator<Item = Seen>,
    mut on_done: impl FnMut(&Seen, Deletion),
) -> Result<(), Error> {
    let mut nodes = nodes.into_iter().peekable();
    let mut in_flight = FuturesUnordered::new();
    loop {
        while in_flight.len() < IN_FLIGHT && nodes.peek().is_some() {
            let batch: Vec<Seen> = nodes.by_ref().take(BATCH).collect();
            in_flight.push(delete_batch(session, batch)?);
        }
        let Some(done) = in_flight.next().await else {
            return Ok(());
        };
        for (node, deletion) in done? {
            on_done(&node, deletion);
        }
    }
}

/// Sends the deletes of `batch` now, as one multi request, and returns the
/// wait for their outcomes.
fn delete_batch(
    session: &Session,
    batch: Vec<Seen>,
) -> Result<impl Future<Output = Result<Vec<(Seen, Deletion)>, Error>> + '_, Error> {
    let mut writer = session.client().new_multi_writer();
    for node in &batch {
        writer
            .add_delete(&node.path, Some(node.version))
            .map_err(|e| Error::op("delete", &node.path, e))?;
    }
    let commit = writer.commit();
    Ok(async move {
        match commit.await {
            Ok(_) => Ok(batch
                .into_iter()
                .map(|node| (node, Deletion::Deleted))
                .collect()),
            Err(zkc::MultiWriteError::OperationFailed { index, source }) => {
                let mut others = batch;
                let failed = others.remove(index);
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
        err => Err(Error::op("delete", &node.path, err)),
    }
}
