//! Reading many nodes in few requests: multi-read batches (ZooKeeper 3.6+)
//! of up to [`BATCH`] reads each, so the server handles one request where it
//! would handle sixty-four. A server without multi-read answers
//! "unimplemented"; from then on each batch goes out as single requests,
//! all sent at once.
//!
//! Every batch is retried whole through connection loss (reads are
//! idempotent). What one read in it fails with (no node, no permission) is
//! that read's answer, for the walk to judge.

use std::sync::atomic::{AtomicBool, Ordering};

use futures::future;
use zookeeper_client as zkc;

use super::{self as zk, Session};

/// Reads per request.
pub(crate) const BATCH: usize = 64;

/// What one read of a node's data answered.
pub(crate) type DataRead = Result<(Vec<u8>, zkc::Stat), zk::Error>;
/// What one listing of a node's children answered.
pub(crate) type ChildrenRead = Result<Vec<String>, zk::Error>;

/// Batched reads on one session.
pub(crate) struct Batcher<'s> {
    session: &'s Session,
    multi_read: AtomicBool,
}

impl<'s> Batcher<'s> {
    /// A batcher that tries multi-read first.
    pub(crate) fn new(session: &'s Session) -> Batcher<'s> {
        Batcher {
            session,
            multi_read: AtomicBool::new(true),
        }
    }

    /// The children of each of `dirs`, in order.
    pub(crate) async fn list(&self, dirs: &[String]) -> Result<Vec<ChildrenRead>, zk::Error> {
        let multi = self
            .multi(dirs, |reader, dir| reader.add_get_children(dir))
            .await;
        let Some(results) = multi else {
            return Ok(future::join_all(dirs.iter().map(|dir| self.session.children(dir))).await);
        };
        let results = results.map_err(|e| batch_error("list", dirs, e))?;
        Ok(dirs
            .iter()
            .zip(results)
            .map(|(dir, result)| match result {
                zkc::MultiReadResult::Children { children } => Ok(children),
                zkc::MultiReadResult::Error { err } => Err(zk::Error::op("list", dir, err)),
                other => Err(unexpected("list", dir, &other)),
            })
            .collect())
    }

    /// The data and stat of each of `paths`, in order.
    pub(crate) async fn read(&self, paths: &[String]) -> Result<Vec<DataRead>, zk::Error> {
        let multi = self
            .multi(paths, |reader, path| reader.add_get_data(path))
            .await;
        let Some(results) = multi else {
            return Ok(
                future::join_all(paths.iter().map(|path| self.session.get_data(path))).await,
            );
        };
        let results = results.map_err(|e| batch_error("get", paths, e))?;
        Ok(paths
            .iter()
            .zip(results)
            .map(|(path, result)| match result {
                zkc::MultiReadResult::Data { data, stat } => Ok((data, stat)),
                zkc::MultiReadResult::Error { err } => Err(zk::Error::op("get", path, err)),
                other => Err(unexpected("get", path, &other)),
            })
            .collect())
    }

    /// Which of `paths` exist, in order, asked in batches of [`BATCH`]
    /// written together before any answer is awaited. Each node is asked
    /// for its children: the smallest answer ZooKeeper gives about a node,
    /// an empty list or "no node" (an `exists` of a node that is there
    /// answers with its whole stat). Only "no node" counts as absent; any
    /// other answer for one node (no permission to list it, say) counts as
    /// present, which a caller that waits on what is present can afford.
    pub(crate) async fn exist(&self, paths: &[String]) -> Result<Vec<bool>, zk::Error> {
        let batches =
            future::try_join_all(paths.chunks(BATCH).map(|batch| self.list(batch))).await?;
        Ok(batches
            .into_iter()
            .flatten()
            .map(|read| !matches!(read, Err(err) if err.is_no_node()))
            .collect())
    }

    /// One multi-read of `add(path)` for every path, retried through
    /// connection loss; `None` when the server has no multi-read.
    async fn multi(
        &self,
        paths: &[String],
        add: impl Fn(&mut zkc::MultiReader<'_>, &str) -> Result<(), zkc::Error>,
    ) -> Option<Result<Vec<zkc::MultiReadResult>, zkc::Error>> {
        if !self.multi_read.load(Ordering::Relaxed) {
            return None;
        }
        let client = self.session.client();
        let result = self
            .session
            .retry()
            .run(|| {
                let mut reader = client.new_multi_reader();
                let added = paths.iter().try_for_each(|path| add(&mut reader, path));
                let commit = reader.commit();
                async move {
                    added?;
                    commit.await
                }
            })
            .await;
        if matches!(result, Err(zkc::Error::Unimplemented)) {
            tracing::info!("the server has no multi-read; reading node by node");
            self.multi_read.store(false, Ordering::Relaxed);
            return None;
        }
        Some(result)
    }
}

fn batch_error(op: &'static str, paths: &[String], cause: zkc::Error) -> zk::Error {
    let first = paths.first().map_or("", String::as_str);
    zk::Error::op(op, first, cause)
}

fn unexpected(op: &'static str, path: &str, result: &zkc::MultiReadResult) -> zk::Error {
    zk::Error::op(
        op,
        path,
        zkc::Error::UnexpectedError(format!("unexpected multi-read answer {result:?}")),
    )
}
