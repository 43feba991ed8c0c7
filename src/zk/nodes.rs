//! Requests the semaphore recipes make beyond plain reads: creating one
//! node of a given lifetime, and listing children with a watch on them.

use zookeeper_client as zkc;

use super::{Error, Session};

/// How long a created node lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifetime {
    /// Until deleted.
    Persistent,
    /// Until deleted or this session ends.
    Ephemeral,
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
    ) -> Result<zkc::Stat, Error> {
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
}
