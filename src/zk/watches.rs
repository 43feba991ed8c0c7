//! Watches, wrapped so that the client crate's watcher types stay in this
//! module: a one-shot watch on a node, as lock waiters set on the node ahead
//! of them and on their own; for `watch`, the session's states, a
//! persistent recursive watch on a tree, and one-shot watches on
//! directories for servers without persistent ones.

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

/// A one-shot watch on one node, set by [`Session::watch_stat`]. Dropping
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
    pub async fn watch_stat(&self, path: &str) -> Result<(Option<super::Stat>, NodeWatch), Error> {
        let client = self.client();
        let (stat, watcher) = self
            .retry()
            .run(|| client.check_and_watch_stat(path))
            .await
            .map_err(|e| Error::op("watch", path, e))?;
        Ok((stat, NodeWatch(Box::pin(watcher.changed()))))
    }
}

/// The state of a session, as a watch of it reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionState {
    /// The connection is lost; the client is reconnecting.
    Disconnected,
    /// Connected (again), to a read-write or a read-only server.
    Connected,
    /// The server expired the session.
    Expired,
    /// The server refused the session's authentication.
    AuthFailed,
    /// The session was closed.
    Closed,
}

impl SessionState {
    /// True when the session is over for good.
    pub fn is_over(self) -> bool {
        matches!(
            self,
            SessionState::Expired | SessionState::AuthFailed | SessionState::Closed
        )
    }
}

impl From<zkc::SessionState> for SessionState {
    fn from(state: zkc::SessionState) -> SessionState {
        match state {
            zkc::SessionState::Disconnected => SessionState::Disconnected,
            zkc::SessionState::SyncConnected | zkc::SessionState::ConnectedReadOnly => {
                SessionState::Connected
            }
            zkc::SessionState::Expired => SessionState::Expired,
            zkc::SessionState::AuthFailed => SessionState::AuthFailed,
            zkc::SessionState::Closed => SessionState::Closed,
        }
    }
}

impl std::fmt::Display for SessionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self, f)
    }
}

/// The changes of a session's state, from [`Session::session_states`].
pub struct SessionStates(zkc::StateWatcher);

impl SessionStates {
    /// Resolves with the state after the next change. Only the latest state
    /// is kept, so a loss and the reconnect after it may come as one change.
    pub async fn changed(&mut self) -> SessionState {
        self.0.changed().await.into()
    }
}

/// What a tree or directory watch saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchEvent {
    /// The node at `path` changed as `change` says.
    Node { path: String, change: NodeChange },
    /// The session's state changed.
    Session(SessionState),
}

/// How a node changed, as the server's notification says: a persistent
/// recursive watch reports creations, deletions and data changes; a child
/// watch reports children changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeChange {
    Created,
    Deleted,
    DataChanged,
    ChildrenChanged,
}

impl From<zkc::WatchedEvent> for WatchEvent {
    fn from(event: zkc::WatchedEvent) -> WatchEvent {
        let change = match event.event_type {
            zkc::EventType::Session => return WatchEvent::Session(event.session_state.into()),
            zkc::EventType::NodeCreated => NodeChange::Created,
            zkc::EventType::NodeDeleted => NodeChange::Deleted,
            zkc::EventType::NodeDataChanged => NodeChange::DataChanged,
            zkc::EventType::NodeChildrenChanged => NodeChange::ChildrenChanged,
        };
        WatchEvent::Node {
            path: event.path,
            change,
        }
    }
}

/// A persistent recursive watch on a tree, set by [`Session::watch_tree`];
/// it fires for every change at or below its path until dropped.
pub struct TreeWatch(zkc::PersistentWatcher);

impl TreeWatch {
    /// Resolves with the next event; cancel-safe.
    pub async fn changed(&mut self) -> WatchEvent {
        self.0.changed().await.into()
    }
}

/// A one-shot watch on a directory's children or on its existence, set by
/// [`Session::watch_dir`].
pub struct DirWatch(zkc::OneshotWatcher);

impl DirWatch {
    /// Resolves with the one event the watch delivers.
    pub async fn changed(self) -> WatchEvent {
        self.0.changed().await.into()
    }
}

impl Session {
    /// The changes of this session's state from now on.
    pub fn session_states(&self) -> SessionStates {
        SessionStates(self.client().state_watcher())
    }

    /// Sets a persistent recursive watch on `path` (which need not exist),
    /// retrying through connection loss. A server older than 3.6 answers
    /// "unimplemented" ([`Error::is_unimplemented`]).
    pub async fn watch_tree(&self, path: &str) -> Result<TreeWatch, Error> {
        let client = self.client();
        self.retry()
            .run(|| client.watch(path, zkc::AddWatchMode::PersistentRecursive))
            .await
            .map(TreeWatch)
            .map_err(|e| Error::op("watch", path, e))
    }

    /// A child watch on `dir`; when it does not exist, an existence watch if
    /// `even_if_missing`, else none. Retries through connection loss.
    pub async fn watch_dir(
        &self,
        dir: &str,
        even_if_missing: bool,
    ) -> Result<Option<DirWatch>, Error> {
        let client = self.client();
        let listed = self
            .retry()
            .run(|| client.list_and_watch_children(dir))
            .await;
        match listed {
            Ok((_, watcher)) => Ok(Some(DirWatch(watcher))),
            Err(zkc::Error::NoNode) if even_if_missing => self
                .retry()
                .run(|| client.check_and_watch_stat(dir))
                .await
                .map(|(_, watcher)| Some(DirWatch(watcher)))
                .map_err(|e| Error::op("watch", dir, e)),
            Err(zkc::Error::NoNode) => Ok(None),
            Err(err) => Err(Error::op("watch", dir, err)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_terminal_states_end_a_session() {
        let state = |s: zkc::SessionState| SessionState::from(s);
        assert_eq!(
            state(zkc::SessionState::ConnectedReadOnly),
            SessionState::Connected
        );
        assert!(!state(zkc::SessionState::Disconnected).is_over());
        assert!(!state(zkc::SessionState::SyncConnected).is_over());
        for over in [
            zkc::SessionState::Expired,
            zkc::SessionState::AuthFailed,
            zkc::SessionState::Closed,
        ] {
            assert!(state(over).is_over());
            assert_eq!(state(over).to_string(), over.to_string());
        }
    }
}
