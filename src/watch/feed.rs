//! Where a watch hears of changes: the notification feed.
//!
//! One persistent recursive watch on the watched path (ZooKeeper 3.6+),
//! plus one on the internal lock a kazoo semaphore keeps beside it. A server
//! without them answers "unimplemented"; then every directory of the tree
//! gets a one-shot child watch, armed before the tree is read and re-armed
//! when it fires. Either way the feed only says which nodes changed, or that
//! the connection came back or the session ended; what a change means is
//! decided above it.

use std::collections::{BTreeMap, HashSet};

use futures::FutureExt;
use futures::future::{self, BoxFuture};
use futures::stream::{FuturesUnordered, StreamExt};

use crate::model::Lock;
use crate::model::layout;
use crate::zk::batch::Batcher;
use crate::zk::{self, Session};

/// How a watch hears of changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WatchMethod {
    /// A persistent recursive watch (ZooKeeper 3.6+).
    PersistentRecursive,
    /// One-shot child watches on every directory, re-armed as they fire.
    OneShot,
}

impl WatchMethod {
    /// Its word: the `watching` log event's `method` field, and the
    /// message's.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            WatchMethod::PersistentRecursive => "persistent",
            WatchMethod::OneShot => "one-shot",
        }
    }
}

/// Where notifications come from.
pub(super) enum Feed {
    Persistent {
        main: zk::TreeWatch,
        /// The watch on a kazoo semaphore's internal lock beside the target.
        beside: Option<zk::TreeWatch>,
        /// A terminal session state a watcher delivered: it must not be
        /// polled again.
        ended: Option<zk::SessionState>,
    },
    OneShot(OneShotWatches),
}

/// The armed one-shot watches: the directories they are on, and their
/// firings.
#[derive(Default)]
pub(super) struct OneShotWatches {
    armed: HashSet<String>,
    fired: FuturesUnordered<BoxFuture<'static, zk::WatchEvent>>,
    /// Directories whose watches fired, to arm again before the next reading.
    rearm: Vec<String>,
}

/// The nodes a persistent watch reported, and how each changed, in the
/// order it reported them.
pub(super) type NodeChanges = Vec<(String, zk::NodeChange)>;

/// What the feed reports, understood: which nodes changed, or what
/// became of the connection or the session.
pub(super) enum FeedEvent {
    /// These nodes changed (persistent watch).
    Nodes(NodeChanges),
    /// A one-shot watch fired: read everything again.
    Fired,
    /// The connection is lost; the client reconnects by itself.
    Disconnected,
    /// The connection is back after a loss.
    Reconnected,
    /// The session is over.
    Ended(zk::SessionState),
}

/// Sets the persistent recursive watches, or returns an empty set of
/// one-shot watches when the server has no persistent ones.
pub(super) async fn arm(session: &Session, target: &str) -> Result<Feed, zk::Error> {
    let main = match session.watch_tree(target).await {
        Ok(main) => main,
        Err(err) if err.is_unimplemented() => {
            tracing::info!("the server has no persistent watches; using one-shot watches");
            // Such a server may close the connection after its answer, and
            // one that lacks persistent watches lacks multi-read too: the
            // listing below asks for it, so the session learns that here,
            // and retries through the close. One answered request later the
            // client is connected again, and the state watcher made after
            // this sees no reconnect (no `gap` at the start of the watch).
            Batcher::new(session).list(&[target.to_owned()]).await?;
            return Ok(Feed::OneShot(OneShotWatches::default()));
        }
        Err(err) => return Err(err),
    };
    let beside = match layout::kazoo_lock_beside(target) {
        Some(beside) => Some(session.watch_tree(&beside).await?),
        None => None,
    };
    Ok(Feed::Persistent {
        main,
        beside,
        ended: None,
    })
}

/// What one of the feed's sources (the session states, a persistent
/// watch, the one-shot watches) delivered to a wait, before it is
/// understood as a [`FeedEvent`].
enum SourceEvent {
    State(zk::SessionState),
    Main(zk::WatchEvent),
    Beside(zk::WatchEvent),
    Fired(zk::WatchEvent),
}

/// Waits for the feed's next event: a change, a reconnect, the session's
/// end.
pub(super) async fn wait(feed: &mut Feed, states: &mut zk::SessionStates) -> FeedEvent {
    loop {
        let source_event = match feed {
            Feed::Persistent {
                ended: Some(state), ..
            } => return FeedEvent::Ended(*state),
            Feed::Persistent { main, beside, .. } => {
                let beside_event = async {
                    match beside {
                        Some(watcher) => watcher.changed().await,
                        None => future::pending().await,
                    }
                };
                tokio::select! {
                    state = states.changed() => SourceEvent::State(state),
                    event = main.changed() => SourceEvent::Main(event),
                    event = beside_event => SourceEvent::Beside(event),
                }
            }
            Feed::OneShot(watches) => {
                let fired = async {
                    match watches.fired.next().await {
                        Some(event) => event,
                        None => future::pending().await,
                    }
                };
                tokio::select! {
                    state = states.changed() => SourceEvent::State(state),
                    event = fired => SourceEvent::Fired(event),
                }
            }
        };
        let feed_event = match (source_event, &mut *feed) {
            (SourceEvent::State(state), _) => on_state(state),
            (SourceEvent::Main(event), Feed::Persistent { main, ended, .. }) => {
                Some(drain(event, main, ended))
            }
            (
                SourceEvent::Beside(event),
                Feed::Persistent {
                    beside: Some(beside),
                    ended,
                    ..
                },
            ) => Some(drain(event, beside, ended)),
            (SourceEvent::Fired(event), Feed::OneShot(watches)) => Some(watches.on_fired(event)),
            _ => unreachable!("a wait wakes up to its own feed"),
        };
        if let Some(feed_event) = feed_event {
            return feed_event;
        }
    }
}

/// The feed event in a session state change, if any: a loss, a reconnect, or
/// the end.
/// The state watcher reports only the latest state, so a loss and the
/// reconnect after it may come as one change: any change to connected is
/// a reconnect.
fn on_state(state: zk::SessionState) -> Option<FeedEvent> {
    match state {
        zk::SessionState::Disconnected => {
            tracing::warn!("connection to ZooKeeper lost; reconnecting");
            Some(FeedEvent::Disconnected)
        }
        zk::SessionState::Connected => {
            tracing::info!(event = "reconnected", "reconnected to ZooKeeper");
            Some(FeedEvent::Reconnected)
        }
        ended => Some(FeedEvent::Ended(ended)),
    }
}

/// The nodes of `first` and of every notification already waiting behind
/// it; a terminal session state ends the feed.
fn drain(
    first: zk::WatchEvent,
    watcher: &mut zk::TreeWatch,
    ended: &mut Option<zk::SessionState>,
) -> FeedEvent {
    let mut nodes = Vec::new();
    let mut next = Some(first);
    while let Some(event) = next.take() {
        match event {
            zk::WatchEvent::Session(state) if state.is_over() => {
                *ended = Some(state);
                break;
            }
            zk::WatchEvent::Session(_) => {}
            zk::WatchEvent::Node { path, change } => nodes.push((path, change)),
        }
        next = watcher.changed().now_or_never();
    }
    match (nodes.is_empty(), *ended) {
        (true, Some(state)) => FeedEvent::Ended(state),
        _ => FeedEvent::Nodes(nodes),
    }
}

impl OneShotWatches {
    /// Notes that a watch fired; its directory must be armed again.
    fn on_fired(&mut self, event: zk::WatchEvent) -> FeedEvent {
        let mut next = Some(event);
        while let Some(event) = next.take() {
            let path = match event {
                zk::WatchEvent::Session(state) => return FeedEvent::Ended(state),
                zk::WatchEvent::Node { path, .. } => path,
            };
            self.armed.remove(&path);
            self.rearm.push(path);
            next = self.fired.next().now_or_never().flatten();
        }
        FeedEvent::Fired
    }

    /// Arms a child watch on each of `dirs` (all requests sent at once),
    /// or, for a directory of `even_if_missing` that does not exist, an
    /// existence watch. A directory that is gone is left alone: its
    /// parent's watch tells when it comes back.
    async fn arm(
        &mut self,
        session: &Session,
        dirs: Vec<String>,
        even_if_missing: &[String],
    ) -> Result<(), zk::Error> {
        let armed = future::try_join_all(dirs.into_iter().map(|dir| async move {
            let watcher = session
                .watch_dir(&dir, even_if_missing.contains(&dir))
                .await?;
            Ok::<_, zk::Error>((dir, watcher))
        }))
        .await?;
        for (dir, watcher) in armed {
            if let Some(watcher) = watcher {
                self.armed.insert(dir);
                self.fired.push(watcher.changed().boxed());
            }
        }
        Ok(())
    }
}

/// [`read_tree`](super::read_tree) with a one-shot watch on every directory before it is
/// read: the target (an existence watch while it is missing), the
/// directories whose watches fired, and any directory a reading lists that
/// is not watched yet, after which the tree is read again, until a reading
/// lists none new.
pub(super) async fn read_tree_armed(
    session: &Session,
    target: &str,
    watches: &mut OneShotWatches,
) -> anyhow::Result<(BTreeMap<String, Lock>, bool)> {
    let must_watch: Vec<String> = std::iter::once(target.to_owned())
        .chain(layout::kazoo_lock_beside(target))
        .collect();
    let mut unwatched: Vec<String> = must_watch
        .iter()
        .cloned()
        .chain(std::mem::take(&mut watches.rearm))
        .collect();
    loop {
        unwatched.sort();
        unwatched.dedup();
        unwatched.retain(|dir| !watches.armed.contains(dir));
        watches
            .arm(session, std::mem::take(&mut unwatched), &must_watch)
            .await?;
        let mut listed = Vec::new();
        let reading = super::read_tree(session, target, |dir| listed.push(dir.to_owned())).await?;
        unwatched = listed
            .into_iter()
            .chain(must_watch.iter().cloned())
            .filter(|dir| !watches.armed.contains(dir))
            .collect();
        if unwatched.is_empty() {
            return Ok(reading);
        }
    }
}
