//! Reading many nodes in few requests: multi-read batches (ZooKeeper 3.6+)
//! of up to [`BATCH`] reads each, so the server handles one request where it
//! would handle sixty-four. A server without multi-read answers
//! "unimplemented"; from then on, for the rest of the session, each batch
//! goes out as single requests, all sent at once.
//!
//! Every batch is retried whole through connection loss (reads are
//! idempotent). What one read in it fails with (no node, no permission) is
//! that read's answer, for the walk to judge.

use std::sync::atomic::Ordering;

use futures::future;
use zookeeper_client as zkc;

use super::{self as zk, Session};

/// Reads per request.
pub(crate) const BATCH: usize = 64;

/// Existence questions per request: each answer is 13 bytes or so.
const EXIST_BATCH: usize = 1024;

/// Bytes of paths per existence request: well inside the 1 MiB a server
/// accepts by default (`jute.maxbuffer`).
const EXIST_BATCH_BYTES: usize = 128 * 1024;

/// What one read of a node's data answered.
pub(crate) type DataRead = Result<(Vec<u8>, zkc::Stat), zk::Error>;
/// What one listing of a node's children answered.
pub(crate) type ChildrenRead = Result<Vec<String>, zk::Error>;

/// Batched reads on one session.
pub(crate) struct Batcher<'s> {
    session: &'s Session,
}

impl<'s> Batcher<'s> {
    /// A batcher that tries multi-read unless the session's server has
    /// already answered it "unimplemented".
    pub(crate) fn new(session: &'s Session) -> Batcher<'s> {
        Batcher { session }
    }

    /// The children of each of `dirs`, in order.
    pub(crate) async fn list(&self, dirs: &[String]) -> Result<Vec<ChildrenRead>, zk::Error> {
        let multi = self
            .multi(dirs, |reader, dir| reader.add_get_children(dir))
            .await;
        let Some(results) = multi.filter(|results| !is_too_large(results, dirs)) else {
            return Ok(future::join_all(dirs.iter().map(|dir| self.session.children(dir))).await);
        };
        let results = results.map_err(|e| batch_error("list", dirs, e))?;
        check_answer_count("list", dirs, &results)?;
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
        let Some(results) = multi.filter(|results| !is_too_large(results, paths)) else {
            return Ok(
                future::join_all(paths.iter().map(|path| self.session.get_data(path))).await,
            );
        };
        let results = results.map_err(|e| batch_error("get", paths, e))?;
        check_answer_count("get", paths, &results)?;
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

    /// Which of `paths` exist, in order, asked in batches written together
    /// before any answer is awaited. Each node is asked for its children:
    /// the smallest answer ZooKeeper gives about a node, an empty list or
    /// "no node" (an `exists` of a node that is there answers with its
    /// whole stat). Only "no node" counts as absent; any other answer for
    /// one node (no permission to list it, say) counts as present, which a
    /// caller that waits on what is present can afford.
    ///
    /// The answers are so small that a batch is bounded by what the request
    /// carries instead: up to [`EXIST_BATCH`] paths of at most
    /// [`EXIST_BATCH_BYTES`] in all, so that a waiter far down a long queue
    /// asks about everything ahead of it in one or two requests.
    pub(crate) async fn exist(&self, paths: &[String]) -> Result<Vec<bool>, zk::Error> {
        let batches = by_size(paths, EXIST_BATCH, EXIST_BATCH_BYTES);
        let batches = future::try_join_all(batches.map(|batch| self.list(batch))).await?;
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
        if !self.session.multi_read().load(Ordering::Relaxed) {
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
            self.session.multi_read().store(false, Ordering::Relaxed);
            return None;
        }
        Some(result)
    }
}

/// `paths` cut into consecutive batches of at most `count` paths and at
/// most `bytes` bytes of paths each; a path longer than `bytes` goes alone.
fn by_size(paths: &[String], count: usize, bytes: usize) -> impl Iterator<Item = &[String]> {
    let mut rest = paths;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut size = 0;
        let taken = rest
            .iter()
            .take(count)
            .take_while(|path| {
                size += path.len();
                size <= bytes
            })
            .count()
            .max(1);
        let (batch, tail) = rest.split_at(taken);
        rest = tail;
        Some(batch)
    })
}

/// True when a batch of several reads failed because its one answer was
/// larger than the client takes: asked one by one, each node gets its own
/// answer, and only the node whose answer is itself too large fails, under
/// its own name.
fn is_too_large(results: &Result<Vec<zkc::MultiReadResult>, zkc::Error>, paths: &[String]) -> bool {
    paths.len() > 1 && matches!(results, Err(zkc::Error::ReplyTooLarge { .. }))
}

/// A multi-read answers every read it carried, in order. An answer with
/// more or fewer results (a broken or hostile server) is an error for the
/// batch: zipped with the paths, it would silently drop nodes or pair them
/// with another node's answer.
fn check_answer_count(
    op: &'static str,
    paths: &[String],
    results: &[zkc::MultiReadResult],
) -> Result<(), zk::Error> {
    if results.len() == paths.len() {
        return Ok(());
    }
    let why = format!(
        "the server answered a batch of reads with the wrong number of results ({} for {})",
        results.len(),
        paths.len()
    );
    Err(batch_error(op, paths, zkc::Error::UnexpectedError(why)))
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

#[cfg(test)]
mod tests {
    use super::by_size;

    fn paths(lengths: &[usize]) -> Vec<String> {
        lengths.iter().map(|&n| "x".repeat(n)).collect()
    }

    fn sizes(paths: &[String], count: usize, bytes: usize) -> Vec<usize> {
        by_size(paths, count, bytes).map(<[String]>::len).collect()
    }

    #[test]
    fn batches_are_bounded_by_count_and_by_bytes_and_keep_every_path_in_order() {
        let all = paths(&[10; 10]);
        assert_eq!(sizes(&all, 4, 1000), [4, 4, 2]);
        assert_eq!(sizes(&all, 100, 30), [3, 3, 3, 1]);
        assert_eq!(sizes(&all, 100, 1000), [10]);
        let joined: Vec<&String> = by_size(&all, 3, 25).flatten().collect();
        assert_eq!(joined, all.iter().collect::<Vec<_>>());
    }

    #[test]
    fn a_path_longer_than_the_byte_bound_goes_alone() {
        let all = paths(&[5, 50, 5]);
        assert_eq!(sizes(&all, 100, 20), [1, 1, 1]);
        assert!(by_size(&[], 10, 10).next().is_none());
    }
}
