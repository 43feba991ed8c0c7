//! verify's own nodes: the path it creates (and refuses when it exists),
//! a fresh lock directory per round below it, the watch for any node it
//! did not make, and their removal.
//!
//! verify's nodes are persistent, deleted by verify itself: a container
//! could be removed by the server between two holders and made again by
//! the next one, which would leave verify unable to tell its directories
//! from anyone's. Below a round's directory the holders' contender nodes
//! are verify's too: ephemeral nodes of the sessions its proxy saw granted
//! to its holders. Anything else that appears under the path is a
//! stranger's, and the run stops.
//!
//! A server with persistent recursive watches (3.6 and later) tells of
//! each node made; on older ones the directories are listed again every
//! [`SWEEP`]. A node made and deleted between two looks is not seen.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::usage::UsageError;
use crate::zk::{self, Lifetime, Session};

/// How often the directories are listed where the server cannot tell of
/// each node made.
const SWEEP: Duration = Duration::from_millis(500);

/// What the watch saw.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Seen {
    /// A node verify did not make, with its owner session (0 when it has
    /// none).
    Stranger { path: String, owner: i64 },
    /// verify's own session ended.
    SessionEnded(String),
}

/// The path and what verify made under it, watched by a task of its own,
/// which nothing the run waits for can hold up.
pub(crate) struct Tree {
    session: Arc<Session>,
    pub path: String,
    /// The round directories, oldest first; the watch reads them too.
    rounds: Arc<Mutex<Vec<String>>>,
    watcher: JoinHandle<()>,
    seen: mpsc::UnboundedReceiver<Seen>,
}

/// The watch for strangers.
struct Watcher {
    session: Arc<Session>,
    path: String,
    rounds: Arc<Mutex<Vec<String>>>,
    /// The nodes judged verify's.
    known: HashSet<String>,
    watch: Watching,
    /// Whether a session is one of verify's holders'.
    ours: Box<dyn Fn(i64) -> bool + Send + Sync>,
}

enum Watching {
    Persistent(zk::TreeWatch),
    Sweeping(tokio::time::Interval),
}

impl Tree {
    /// Creates `path` (its missing ancestors as containers, as a lock's
    /// are), refusing one that exists, and watches what is made under it;
    /// `ours` says whether a session is one of verify's holders'.
    pub(crate) async fn create(
        session: Session,
        path: &str,
        ours: impl Fn(i64) -> bool + Send + Sync + 'static,
    ) -> Result<Tree> {
        if let Some(parent) = zk::path::parent(path).filter(|parent| *parent != "/") {
            session.make_ancestors(parent).await?;
        }
        match session.create_node(path, b"", Lifetime::Persistent).await {
            Ok(_) => {}
            Err(err) if err.is_node_exists() => {
                session.close().await;
                return Err(UsageError::new(format!(
                    "{path} exists: verify works only under a path of its own, which it creates \
                     and removes; give another --path, or none for a new name"
                ))
                .into());
            }
            Err(err) => {
                session.close().await;
                return Err(err.into());
            }
        }
        let watch = match session.watch_tree(path).await {
            Ok(watch) => Ok(Watching::Persistent(watch)),
            Err(err) if err.is_unimplemented() => {
                Ok(Watching::Sweeping(tokio::time::interval(SWEEP)))
            }
            Err(err) => Err(err),
        };
        let session = Arc::new(session);
        let rounds = Arc::new(Mutex::new(Vec::new()));
        let (tell, seen) = mpsc::unbounded_channel();
        let watcher = match watch {
            Ok(watch) => {
                let watcher = Watcher {
                    session: session.clone(),
                    path: path.to_owned(),
                    rounds: rounds.clone(),
                    known: HashSet::from([path.to_owned()]),
                    watch,
                    ours: Box::new(ours),
                };
                tokio::spawn(watcher.run(tell))
            }
            Err(err) => {
                let tree = Tree {
                    session,
                    path: path.to_owned(),
                    rounds,
                    watcher: tokio::spawn(async {}),
                    seen,
                };
                tree.remove().await;
                return Err(err.into());
            }
        };
        Ok(Tree {
            session,
            path: path.to_owned(),
            rounds,
            watcher,
            seen,
        })
    }

    /// The session timeout the server granted verify's own session.
    pub(crate) fn session_timeout(&self) -> Duration {
        self.session.session_timeout()
    }

    /// Makes the lock directory of round `round`.
    pub(crate) async fn new_round(&mut self, round: usize) -> Result<String> {
        let dir = zk::path::join(&self.path, &format!("round-{round:04}"));
        // Known to the watch before it can be told of it.
        self.rounds
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(dir.clone());
        self.session
            .create_node(&dir, b"", Lifetime::Persistent)
            .await
            .with_context(|| format!("cannot make the lock directory {dir}"))?;
        Ok(dir)
    }

    /// Waits for a node verify did not make, or for the end of its
    /// session. Cancel-safe.
    pub(crate) async fn stranger(&mut self) -> Seen {
        match self.seen.recv().await {
            Some(seen) => seen,
            None => std::future::pending().await,
        }
    }

    /// Waits until every round's directory is empty, for at most `within`,
    /// and deletes them and the path; returns what is left (a directory
    /// that kept a node, or any node under the path not verify's). With a
    /// stranger's node under the path, deletes nothing but the empty
    /// round directories.
    pub(crate) async fn remove_within(self, within: Duration) -> Vec<String> {
        self.watcher.abort();
        let _ = self.watcher.await;
        let deadline = tokio::time::Instant::now() + within;
        let mut left = Vec::new();
        let rounds =
            std::mem::take(&mut *self.rounds.lock().unwrap_or_else(PoisonError::into_inner));
        for dir in &rounds {
            loop {
                match self.session.send_delete(dir, None).await {
                    Ok(_) => break,
                    Err(err) if err.is_not_empty() && tokio::time::Instant::now() < deadline => {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    Err(_) => {
                        left.push(dir.clone());
                        break;
                    }
                }
            }
        }
        if self.session.send_delete(&self.path, None).await.is_err() {
            left.push(self.path.clone());
        }
        // The watcher, the only other holder of the session, is gone.
        if let Ok(session) = Arc::try_unwrap(self.session) {
            session.close().await;
        }
        left
    }

    /// Deletes what can be deleted at once.
    pub(crate) async fn remove(self) -> Vec<String> {
        self.remove_within(Duration::ZERO).await
    }
}

impl Watcher {
    /// Watches until it finds a stranger's node or the session ends, and
    /// says which.
    async fn run(mut self, tell: mpsc::UnboundedSender<Seen>) {
        let seen = self.stranger().await;
        let _ = tell.send(seen);
    }

    async fn stranger(&mut self) -> Seen {
        loop {
            let made = match &mut self.watch {
                Watching::Persistent(watch) => match watch.changed().await {
                    zk::WatchEvent::Node {
                        path,
                        change: zk::NodeChange::Created,
                    } => vec![path],
                    // Only what is there needs remembering.
                    zk::WatchEvent::Node {
                        path,
                        change: zk::NodeChange::Deleted,
                    } => {
                        self.known.remove(&path);
                        continue;
                    }
                    zk::WatchEvent::Session(state) if state.is_over() => {
                        return Seen::SessionEnded(state.to_string());
                    }
                    _ => continue,
                },
                Watching::Sweeping(interval) => {
                    interval.tick().await;
                    match self.listed().await {
                        Ok(listed) => listed,
                        Err(err) => return Seen::SessionEnded(err.to_string()),
                    }
                }
            };
            for path in made {
                if let Some(seen) = self.judge(&path).await {
                    return seen;
                }
            }
        }
    }

    fn rounds(&self) -> Vec<String> {
        self.rounds
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Every node under the path now, but those already judged.
    async fn listed(&self) -> Result<Vec<String>, zk::Error> {
        let mut found = Vec::new();
        for dir in std::iter::once(self.path.clone()).chain(self.rounds()) {
            let children = match self.session.children(&dir).await {
                Ok(children) => children,
                Err(err) if err.is_no_node() => continue,
                Err(err) => return Err(err),
            };
            found.extend(
                children
                    .iter()
                    .map(|child| zk::path::join(&dir, child))
                    .filter(|path| !self.known.contains(path)),
            );
        }
        Ok(found)
    }

    /// A stranger, unless `path` is verify's: one of its directories, or
    /// an ephemeral node of a holder's session right below a round's. A
    /// node gone before it could be read cannot be told, and is let be.
    async fn judge(&mut self, path: &str) -> Option<Seen> {
        let rounds = self.rounds();
        if self.known.contains(path) || rounds.iter().any(|round| round == path) {
            return None;
        }
        let in_a_round = zk::path::parent(path).is_some_and(|dir| rounds.iter().any(|r| r == dir));
        let owner = match self.session.stat(path).await {
            Ok(Some(stat)) => stat.ephemeral_owner,
            Ok(None) => return None,
            Err(err) => return Some(Seen::SessionEnded(err.to_string())),
        };
        if in_a_round && owner != 0 && (self.ours)(owner) {
            self.known.insert(path.to_owned());
            return None;
        }
        Some(Seen::Stranger {
            path: path.to_owned(),
            owner,
        })
    }
}
