//! Requests the lock and semaphore recipes make beyond plain reads:
//! creating nodes (one of a given lifetime, a contender's sequential node,
//! the missing directories above a lock, a lock directory made again as a
//! persistent node), deleting our own node, writing
//! at a version, and listing children with a watch on them.

use std::future::Future;

use futures::future::Either;
use std::time::Duration;

use zookeeper_client as zkc;

use super::{Class, Error, Session, Stat, class_of, path};

/// How long a created node lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifetime {
    /// Until deleted.
    Persistent,
    /// Until deleted or this session ends.
    Ephemeral,
}

/// A write into a node's directory made in the same transaction as the
/// node's delete, so that whoever sees the node go can read why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirWrite {
    pub dir: String,
    pub data: Vec<u8>,
    /// Written only while the directory is at this version, the one read:
    /// the write keeps what it replaces, and never lands on data written
    /// since. A changed directory fails the transaction
    /// ([`Deleted::DirChanged`]) and nothing is done.
    pub version: i32,
}

/// How a delete went, when it did not fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deleted {
    /// The node is gone (with the write, when one was asked for).
    Done,
    /// The directory's ACL refused the write: nothing was done.
    WriteRefused,
    /// The directory was written since the version the write names:
    /// nothing was done.
    DirChanged,
}

/// How a watched listing ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChildrenChange {
    /// The children (or the node itself) changed: list again.
    Changed,
    /// The session ended; `state` says how.
    SessionEnded(String),
}

/// The one-shot watch set by [`Session::children_watched`].
pub struct ChildrenWatch(zkc::OneshotWatcher);

impl ChildrenWatch {
    /// Resolves at the first change of the listed node's children.
    pub async fn changed(self) -> ChildrenChange {
        let event = self.0.changed().await;
        match event.event_type {
            zkc::EventType::Session => {
                ChildrenChange::SessionEnded(event.session_state.to_string())
            }
            _ => ChildrenChange::Changed,
        }
    }
}

impl Session {
    /// Lists `path`'s children and watches them for the next change,
    /// retrying through connection loss.
    pub async fn children_watched(
        &self,
        path: &str,
    ) -> Result<(Vec<String>, ChildrenWatch), Error> {
        let (children, watcher) = self
            .retry()
            .run(|| self.client().list_and_watch_children(path))
            .await
            .map_err(|e| Error::op("list", path, e))?;
        Ok((children, ChildrenWatch(watcher)))
    }

    /// Creates `path` with `data` and this session's ACL, once: a create
    /// whose answer is lost is not repeated here, because only the caller
    /// knows how to tell its own node from someone else's.
    pub async fn create_node(
        &self,
        path: &str,
        data: &[u8],
        lifetime: Lifetime,
    ) -> Result<Stat, Error> {
        let mode = match lifetime {
            Lifetime::Persistent => zkc::CreateMode::Persistent,
            Lifetime::Ephemeral => zkc::CreateMode::Ephemeral,
        };
        self.client()
            .create(path, data, &mode.with_acls(self.acls()))
            .await
            .map(|(stat, _)| stat)
            .map_err(|e| Error::op("create", path, e))
    }

    /// Creates a sequential node named `prefix` and a sequence number, with
    /// `data` and this session's ACL, once (like [`Session::create_node`]):
    /// ephemeral, or, given a `ttl`, persistent and removed by the server
    /// after that long unused. Returns its stat and the sequence number as
    /// ZooKeeper appended it to the name.
    pub async fn create_sequential(
        &self,
        prefix: &str,
        data: &[u8],
        ttl: Option<Duration>,
    ) -> Result<(Stat, String), Error> {
        let acls = self.acls();
        let options = match ttl {
            Some(ttl) => zkc::CreateMode::PersistentSequential
                .with_acls(acls)
                .with_ttl(ttl),
            None => zkc::CreateMode::EphemeralSequential.with_acls(acls),
        };
        self.client()
            .create(prefix, data, &options)
            .await
            .map(|(stat, sequence)| (stat, sequence.to_string()))
            .map_err(|e| Error::op("create", prefix, e))
    }

    /// Creates the missing ancestors of `dir` (`dir` included) as CONTAINER
    /// nodes, so the server removes them once empty; on a server without
    /// containers, as PERSISTENT nodes. All creates go out in one round
    /// trip; the server applies them in order. One that finds its node there
    /// already, or loses its answer with the connection, is no failure: the
    /// caller's own create tells whether the directory is there.
    pub async fn make_ancestors(&self, dir: &str) -> Result<(), Error> {
        let mut dirs = Vec::new();
        let mut next = Some(dir);
        while let Some(d) = next.filter(|d| *d != "/") {
            dirs.push(d);
            next = path::parent(d);
        }
        dirs.reverse();
        for mode in [zkc::CreateMode::Container, zkc::CreateMode::Persistent] {
            let options = mode.with_acls(self.acls());
            let client = self.client();
            let creates: Vec<_> = dirs
                .iter()
                .map(|d| client.create(d, &[], &options))
                .collect();
            let mut unimplemented = false;
            for (dir, result) in dirs.iter().zip(await_in_order(creates).await) {
                match result {
                    Ok(_) | Err(zkc::Error::NodeExists) => {}
                    Err(zkc::Error::Unimplemented) => unimplemented = true,
                    Err(err) if class_of(&err) == Class::Recoverable => {}
                    Err(err) => return Err(Error::op("create", dir, err)),
                }
            }
            if !unimplemented {
                return Ok(());
            }
            tracing::info!("server has no container nodes; creating persistent ones");
        }
        Ok(())
    }

    /// Makes the childless node at `path` again as a persistent node
    /// holding `data`, with the ACL it has now: one transaction deletes it
    /// while it is still at `version` and creates it anew, so that nobody
    /// ever finds it missing, and nothing is done when it changed
    /// meanwhile. True when it was made again; false when it had changed (a
    /// write, a child, gone, or made again by another), for the caller to
    /// read it again. One attempt: an answer lost with the connection is a
    /// recoverable error, after which the caller reads it again too.
    pub async fn remake_persistent(
        &self,
        path: &str,
        version: i32,
        data: &[u8],
    ) -> Result<bool, Error> {
        let acl = match self.retry().run(|| self.client().get_acl(path)).await {
            Ok((acl, _)) => acl,
            Err(zkc::Error::NoNode) => return Ok(false),
            Err(err) => return Err(Error::op("read the ACL of", path, err)),
        };
        let options = zkc::CreateMode::Persistent.with_acls(zkc::Acls::new(&acl));
        let mut multi = self.client().new_multi_writer();
        multi
            .add_delete(path, Some(version))
            .and_then(|()| multi.add_create(path, data, &options))
            .map_err(|err| Error::op("make again", path, err))?;
        match multi.commit().await {
            Ok(_) => Ok(true),
            Err(zkc::MultiWriteError::OperationFailed {
                source:
                    zkc::Error::NoNode
                    | zkc::Error::BadVersion
                    | zkc::Error::NotEmpty
                    | zkc::Error::NodeExists,
                ..
            }) => Ok(false),
            Err(
                zkc::MultiWriteError::OperationFailed { source, .. }
                | zkc::MultiWriteError::RequestFailed { source },
            ) => Err(Error::op("make again", path, source)),
        }
    }

    /// Sends a delete of `path` (any version) before returning, with
    /// `write` into its directory in the same transaction when given; the
    /// future gives the answer, "no node" counting as done. Sent at once,
    /// so a request made after this call (closing the session) reaches the
    /// server after the delete. One attempt.
    pub fn send_delete(
        &self,
        path: &str,
        write: Option<&DirWrite>,
    ) -> impl Future<Output = Result<Deleted, Error>> + Send + use<> {
        let sent = match write {
            None => Either::Left(self.client().delete(path, None)),
            Some(write) => Either::Right(self.send_delete_writing(path, write)),
        };
        let path = path.to_owned();
        async move {
            match sent {
                Either::Left(sent) => match sent.await {
                    Ok(()) | Err(zkc::Error::NoNode) => Ok(Deleted::Done),
                    Err(err) => Err(Error::op("delete", &path, err)),
                },
                Either::Right(sent) => sent.await.map_err(|err| Error::op("delete", &path, err)),
            }
        }
    }

    /// Sends the write, then the delete of `path`, as one multi.
    fn send_delete_writing(
        &self,
        path: &str,
        write: &DirWrite,
    ) -> impl Future<Output = Result<Deleted, zkc::Error>> + Send + use<> {
        let mut multi = self.client().new_multi_writer();
        let added = multi
            .add_set_data(&write.dir, &write.data, Some(write.version))
            .and_then(|()| multi.add_delete(path, None));
        let sent = added.map(|()| multi.commit());
        async move {
            match sent?.await {
                Ok(_) => Ok(Deleted::Done),
                Err(zkc::MultiWriteError::OperationFailed { index, source }) => {
                    match (index, source) {
                        // The directory or the node is gone: so is the node.
                        (_, zkc::Error::NoNode) => Ok(Deleted::Done),
                        (0, zkc::Error::NoAuth) => Ok(Deleted::WriteRefused),
                        (0, zkc::Error::BadVersion) => Ok(Deleted::DirChanged),
                        (_, err) => Err(err),
                    }
                }
                Err(zkc::MultiWriteError::RequestFailed { source }) => Err(source),
            }
        }
    }

    /// Deletes our own node, with `write` into its directory in the same
    /// transaction when given and allowed (else a plain delete), retrying
    /// through connection loss until it is gone or the session has ended.
    /// "No node" counts as done: a retry of a delete that went through, or
    /// a node the server already removed. So does an ended session: the
    /// server removes its ephemeral nodes. A directory written since the
    /// version `write` names leaves the node in place
    /// ([`Deleted::DirChanged`]): only the caller can make the write again.
    pub async fn delete_own(
        &self,
        path: &str,
        mut write: Option<&DirWrite>,
    ) -> Result<Deleted, Error> {
        let mut attempt = 0;
        loop {
            match self.send_delete(path, write).await {
                Ok(Deleted::WriteRefused) => {
                    if let Some(refused) = write.take() {
                        tracing::info!(
                            "no permission to write {}: deleting {path} alone",
                            refused.dir
                        );
                    }
                }
                Ok(done) => return Ok(done),
                Err(err) if err.class() == Class::Recoverable => {
                    tracing::info!("retrying delete of {path} after {err}");
                    tokio::time::sleep(self.retry().backoff(attempt)).await;
                    attempt = attempt.saturating_add(1);
                }
                Err(err) if err.class() == Class::Fatal => return Ok(Deleted::Done),
                Err(err) => return Err(err),
            }
        }
    }

    /// Deletes our own node `path` only while the node `ahead` of it is
    /// still there, in one transaction, retrying through connection loss:
    /// `false` (nothing done) when `ahead` is gone. A waiter that leaves
    /// while someone is still ahead of it never held.
    pub async fn delete_behind(&self, path: &str, ahead: &str) -> Result<bool, Error> {
        let mut attempt = 0;
        loop {
            let mut multi = self.client().new_multi_writer();
            multi
                .add_check_version(ahead, -1)
                .and_then(|()| multi.add_delete(path, None))
                .map_err(|e| Error::op("delete", path, e))?;
            let err = match multi.commit().await {
                Ok(_) => return Ok(true),
                Err(zkc::MultiWriteError::OperationFailed { index, source }) => {
                    match (index, source) {
                        (0, zkc::Error::NoNode) => return Ok(false),
                        // Ours is gone already: a retry of a delete that
                        // went through.
                        (_, zkc::Error::NoNode) => return Ok(true),
                        (_, err) => err,
                    }
                }
                Err(zkc::MultiWriteError::RequestFailed { source }) => source,
            };
            match class_of(&err) {
                Class::Recoverable => {
                    tokio::time::sleep(self.retry().backoff(attempt)).await;
                    attempt = attempt.saturating_add(1);
                }
                // The session is over: the server removes our node.
                Class::Fatal => return Ok(true),
                _ => return Err(Error::op("delete", path, err)),
            }
        }
    }

    /// Sends a read of `path`'s data and stat before returning, and gives
    /// the answer later: a read whose answer is wanted only after other
    /// work (a hold's end) costs no wait. One attempt.
    pub fn send_get_data(
        &self,
        path: &str,
    ) -> impl Future<Output = Result<(Vec<u8>, Stat), Error>> + Send + use<> {
        let sent = self.client().get_data(path);
        let path = path.to_owned();
        async move { sent.await.map_err(|e| Error::op("get", &path, e)) }
    }

    /// Writes `data` into `path` if it is still at `version`; returns its
    /// new stat. One attempt: a lost answer leaves the write unknown, and
    /// only the caller knows how to tell. `op` names the write in errors.
    pub async fn set_data_at(
        &self,
        op: &'static str,
        path: &str,
        data: &[u8],
        version: i32,
    ) -> Result<Stat, Error> {
        self.client()
            .set_data(path, data, Some(version))
            .await
            .map_err(|e| Error::op(op, path, e))
    }
}

/// Awaits every future, in order; they were all sent when made.
async fn await_in_order<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut results = Vec::with_capacity(futures.len());
    for future in futures {
        results.push(future.await);
    }
    results
}
