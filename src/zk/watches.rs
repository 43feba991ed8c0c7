//! Watches, wrapped so that the client crate's watcher types stay in this
//! module: a one-shot watch on a node, as lock waiters set on the node ahead
//! of them and on their own.

use std::pin::Pin;

use zookeeper_client as zkc;

use super::{Error, Session};

/// What a one-shot watch on a node saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeEvent {
    /// The node was deleted.
    Deleted,
    /// The node was created, or its data or children changed.
    Changed,
    /// The session ended (expired, closed or refused); the state is given.
    SessionEnded(String),
}

/// A one-shot watch on one node, set by [`Session::watch_stat`] or
/// [`Session::watch_data`]. Dropping
/// it forgets the watch on this side.
pub struct NodeWatch(Pin<Box<dyn Future<Output = zkc::WatchedEvent> + Send>>);

impl NodeWatch {
    /// Resolves with the first event on the node; cancel-safe, so it can be
    /// awaited again in a loop until it fires. Once it has fired, the watch
    /// is spent: set a new one. Watches survive a reconnect (the client sets
    /// them again), so a lost connection alone is no event.
    pub async fn changed(&mut self) -> NodeEvent {
        let event = (&mut self.0).await;
        match event.event_type {
            zkc::EventType::NodeDeleted => NodeEvent::Deleted,
            zkc::EventType::Session => NodeEvent::SessionEnded(event.session_state.to_string()),
            _ => NodeEvent::Changed,
        }
    }
}

impl Session {
    /// A node's stat, or `None` when it does not exist, with a watch set on
    /// it either way (its creation, change or deletion fires it); retries
    /// through connection loss.
    pub async fn watch_stat(&self, path: &str) -> Result<(Option<zkc::Stat>, NodeWatch), Error> {
        let client = self.client();
        let (stat, watcher) = self
            .retry()
            .run(|| client.check_and_watch_stat(path))
            .await
            .map_err(|e| Error::op("watch", path, e))?;
        Ok((stat, NodeWatch(Box::pin(watcher.changed()))))
    }

    /// A node's data and stat, with a watch set on it (its change or
    /// deletion fires it). One attempt: the caller decides what a lost
    /// connection means.
    pub async fn watch_data(&self, path: &str) -> Result<(Vec<u8>, NodeWatch), Error> {
        let (data, _, watcher) = self
            .client()
            .get_and_watch_data(path)
            .await
            .map_err(|e| Error::op("watch", path, e))?;
        Ok((data, NodeWatch(Box::pin(watcher.changed()))))
    }
}
