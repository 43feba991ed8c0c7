//! Deleting many nodes fast and safely: every delete carries the data
//! version its node was seen at, so a node that changed since it was read
//! is left alone, and the deletes are pipelined on one session.
//!
//! The client sends a request the moment it is made, so up to [`IN_FLIGHT`]
//! deletes are outstanding at once and the server works through them back
//! to back instead of waiting a round trip for each. They are sent in the
//! order given, and ZooKeeper applies one session's requests in order.

use std::future::Future;

use futures::stream::{FuturesUnordered, StreamExt};
use zookeeper_client as zkc;

use super::{Class, Error, Session, class_of};

/// Deletes outstanding at once on the session.
pub const IN_FLIGHT: usize = 512;

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

/// Deletes every node at the version it was seen at, at most [`IN_FLIGHT`]
/// at a time, sent in the given order; `on_done` hears of each outcome as
/// it comes. Connection losses are retried node by node with the session's
/// policy. Fails on any other error (the session is lost, no permission);
/// deletes already sent may have been done by then.
pub async fn delete_seen(
    session: &Session,
    nodes: impl IntoIterator<Item = Seen>,
    mut on_done: impl FnMut(&Seen, Deletion),
) -> Result<(), Error> {
    let mut nodes = nodes.into_iter();
    let mut in_flight = FuturesUnordered::new();
    loop {
        while in_flight.len() < IN_FLIGHT {
            let Some(node) = nodes.next() else { break };
            in_flight.push(delete_one(session, node));
        }
        let Some(done) = in_flight.next().await else {
            return Ok(());
        };
        let (node, deletion) = done?;
        on_done(&node, deletion);
    }
}

/// Sends the delete of `node` now, and returns the wait for its outcome,
/// retries included.
fn delete_one(
    session: &Session,
    node: Seen,
) -> impl Future<Output = Result<(Seen, Deletion), Error>> + '_ {
    let first = session.client().delete(&node.path, Some(node.version));
    async move {
        let retry = session.retry();
        let mut result = first.await;
        let mut attempt = 0;
        loop {
            let deletion = match result {
                Ok(()) => Deletion::Deleted,
                Err(zkc::Error::NoNode) if attempt > 0 => Deletion::Deleted,
                Err(zkc::Error::NoNode) => Deletion::Gone,
                Err(zkc::Error::BadVersion) => Deletion::Changed,
                Err(zkc::Error::NotEmpty) => Deletion::HasChildren,
                Err(err) if class_of(&err) == Class::Recoverable && attempt < retry.retries => {
                    tracing::info!("retrying the delete of {} after {err}", node.path);
                    tokio::time::sleep(retry.backoff(attempt)).await;
                    attempt += 1;
                    result = session
                        .client()
                        .delete(&node.path, Some(node.version))
                        .await;
                    continue;
                }
                Err(err) => return Err(Error::op("delete", &node.path, err)),
            };
            return Ok((node, deletion));
        }
    }
}
