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
use std::time::Duration;

use anyhow::{Context, Result};

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

/// The path and what verify made under it.
pub(crate) struct Tree {
    session: Session,
    pub path: String,
    /// The round directories, oldest first.
    rounds: Vec<String>,
    /// The nodes judged verify's.
    known: HashSet<String>,
    /// Nodes told of, to judge.
    pending: Vec<String>,
    watch: Watching,
}

enum Watching {
    Persistent(zk::TreeWatch),
    Sweeping(tokio::time::Interval),
}

impl Tree {
    /// Creates `path` (its missing ancestors as containers, as a lock's
    /// are), refusing one that exists, and watches what is made under it.
    pub(crate) async fn create(session: Session, path: &str) -> Result<Tree> {
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
            Ok(watch) => Watching::Persistent(watch),
            Err(err) if err.is_unimplemented() => Watching::Sweeping(tokio::time::interval(SWEEP)),
            Err(err) => {
                let tree = Tree::new(
                    session,
                    path,
                    Watching::Sweeping(tokio::time::interval(SWEEP)),
                );
                tree.remove().await;
                return Err(err.into());
            }
        };
        Ok(Tree::new(session, path, watch))
    }

    fn new(session: Session, path: &str, watch: Watching) -> Tree {
        Tree {
            session,
            path: path.to_owned(),
            rounds: Vec::new(),
            known: HashSet::from([path.to_owned()]),
            pending: Vec::new(),
            watch,
        }
    }

    /// The session timeout the server granted verify's own session.
    pub(crate) fn session_timeout(&self) -> Duration {
        self.session.session_timeout()
    }

    /// Makes the lock directory of round `round`.
    pub(crate) async fn new_round(&mut self, round: usize) -> Result<String> {
        let dir = zk::path::join(&self.path, &format!("round-{round:04}"));
        self.known.insert(dir.clone());
        self.rounds.push(dir.clone());
        self.session
            .create_node(&dir, b"", Lifetime::Persistent)
            .await
            .with_context(|| format!("cannot make the lock directory {dir}"))?;
        Ok(dir)
    }

    /// Waits for a node verify did not make, or for the end of its session.
    /// `ours` says whether a session is one of its holders'. Cancel-safe: a
    /// node told of and not yet judged is judged at the next call.
    pub(crate) async fn stranger(&mut self, ours: impl Fn(i64) -> bool) -> Seen {
        loop {
            if let Some(path) = self.pending.first().cloned() {
                let judged = self.judge(&path, &ours).await;
                self.pending.remove(0);
                match judged {
                    Some(seen) => return seen,
                    None => continue,
                }
            }
            match &mut self.watch {
                Watching::Persistent(watch) => match watch.changed().await {
                    zk::WatchEvent::Node {
                        path,
                        change: zk::NodeChange::Created,
                    } => self.pending.push(path),
                    // Only what is there needs remembering.
                    zk::WatchEvent::Node {
                        path,
                        change: zk::NodeChange::Deleted,
                    } if !self.rounds.contains(&path) => {
                        self.known.remove(&path);
                    }
                    zk::WatchEvent::Session(state) if state.is_over() => {
                        return Seen::SessionEnded(state.to_string());
                    }
                    _ => {}
                },
                Watching::Sweeping(interval) => {
                    interval.tick().await;
                    match self.listed().await {
                        Ok(listed) => self.pending = listed,
                        Err(err) => return Seen::SessionEnded(err.to_string()),
                    }
                }
            }
        }
    }

    /// Every node under the path now, but those already judged.
    async fn listed(&self) -> Result<Vec<String>, zk::Error> {
        let mut found = Vec::new();
        for dir in std::iter::once(&self.path).chain(&self.rounds) {
            let children = match self.session.children(dir).await {
                Ok(children) => children,
                Err(err) if err.is_no_node() => continue,
                Err(err) => return Err(err),
            };
            found.extend(
                children
                    .iter()
                    .map(|child| zk::path::join(dir, child))
                    .filter(|path| !self.known.contains(path)),
            );
        }
        Ok(found)
    }

    /// A stranger, unless `path` is verify's: one of its directories, or
    /// an ephemeral node of a holder's session right below a round's. A
    /// node gone before it could be read cannot be told, and is let be.
    async fn judge(&mut self, path: &str, ours: impl Fn(i64) -> bool) -> Option<Seen> {
        if self.known.contains(path) {
            return None;
        }
        let in_a_round =
            zk::path::parent(path).is_some_and(|dir| self.rounds.iter().any(|r| r == dir));
        let owner = match self.session.stat(path).await {
            Ok(Some(stat)) => stat.ephemeral_owner,
            Ok(None) => return None,
            Err(err) => return Some(Seen::SessionEnded(err.to_string())),
        };
        if in_a_round && owner != 0 && ours(owner) {
            self.known.insert(path.to_owned());
            return None;
        }
        Some(Seen::Stranger {
            path: path.to_owned(),
            owner,
        })
    }

    /// Waits until every round's directory is empty, for at most `within`,
    /// and deletes them and the path; returns what is left (a directory
    /// that kept a node, or any node under the path not verify's). With a
    /// stranger's node under the path, deletes nothing but the empty
    /// round directories.
    pub(crate) async fn remove_within(self, within: Duration) -> Vec<String> {
        let deadline = tokio::time::Instant::now() + within;
        let mut left = Vec::new();
        for dir in &self.rounds {
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
        self.session.close().await;
        left
    }

    /// Deletes what can be deleted at once.
    pub(crate) async fn remove(self) -> Vec<String> {
        self.remove_within(Duration::ZERO).await
    }
}
