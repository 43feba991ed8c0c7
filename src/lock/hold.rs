//! Holding a lock: noticing that it is lost, and letting it go.

use std::cell::Cell;
use std::fmt;
use std::time::Duration;

use super::acquire::Held;
use super::node;
use crate::zk::monitor::{self, Lapse, LeaderEvidence};
use crate::zk::{self, Class, NodeEvent, NodeWatch, Session, class_of, delete};

/// What Curator's revocation writes into a holder's node.
pub(crate) const REVOKE: &[u8] = b"__REVOKE__";

/// Why a held lock is gone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Loss {
    /// Our node was deleted (reaped, force-released).
    Deleted,
    /// `__REVOKE__` was written into our node.
    Revoked,
    /// The session expired or was closed.
    SessionEnded(String),
    /// No evidence that the leader heard of the session for so long that it
    /// may expire the session any moment now.
    Silent(Duration),
}

impl fmt::Display for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Loss::Deleted => f.write_str("our lock node was deleted"),
            Loss::Revoked => f.write_str("the lock was revoked (__REVOKE__ written to our node)"),
            Loss::SessionEnded(state) => write!(f, "the ZooKeeper session ended ({state})"),
            Loss::Silent(silent) => write!(
                f,
                "the connection to ZooKeeper was down too long (no word from the leader \
                 for {}); the server may expire our session any moment",
                humantime::format_duration(Duration::from_millis(silent.as_millis() as u64))
            ),
        }
    }
}

/// Resolves when the lock `held` is lost: its node deleted or revoked, the
/// session over, or the leader free to expire the session within `margin`
/// (the time the command needs to stop) by what `evidence` shows. Never
/// resolves while the lock is ours. `kept`: a watch already set on our node
/// while it was as we made it, to go on with instead of setting one.
async fn lost(
    session: &Session,
    held: &Held,
    kept: Option<NodeWatch>,
    evidence: &LeaderEvidence,
    margin: Duration,
) -> Loss {
    tokio::select! {
        loss = node_lost(session, held, kept) => loss,
        lapse = monitor::lapse(session, evidence, margin) => match lapse {
            Lapse::Ended(state) => Loss::SessionEnded(state),
            Lapse::Silent(silent) => Loss::Silent(silent),
        },
    }
}

/// Resolves when our node is deleted or revoked, or the session is over.
/// Watches survive a reconnect (the client re-registers them).
async fn node_lost(session: &Session, held: &Held, mut kept: Option<NodeWatch>) -> Loss {
    let mut attempt = 0;
    loop {
        let watched = match kept.take() {
            Some(watch) => Ok(Some((false, watch))),
            None => watch_own_node(session, &held.node).await,
        };
        let (revoked, mut watch) = match watched {
            Ok(Some(watched)) => watched,
            Ok(None) => return Loss::Deleted,
            Err(err) if err.is_no_node() => return Loss::Deleted,
            Err(err) if err.cause().map(class_of) == Some(Class::Recoverable) => {
                tokio::time::sleep(session.retry().backoff(attempt)).await;
                attempt = attempt.saturating_add(1);
                continue;
            }
            Err(err) => return Loss::SessionEnded(cause_text(&err)),
        };
        attempt = 0;
        if revoked {
            return Loss::Revoked;
        }
        match watch.changed().await {
            NodeEvent::Deleted => return Loss::Deleted,
            NodeEvent::SessionEnded(state) => return Loss::SessionEnded(state),
            NodeEvent::Changed => {}
        }
    }
}

/// Sets a watch on our node (its change or deletion fires it) and tells
/// whether it carries the revocation mark; `None` when it is gone. While
/// the node is at the version we created it at, it holds the owner record
/// we wrote, so its stat is enough: the record itself, a few hundred bytes
/// a handoff, is read back only once something has written to the node.
async fn watch_own_node(
    session: &Session,
    node: &str,
) -> Result<Option<(bool, NodeWatch)>, zk::Error> {
    let (stat, watch) = session.watch_stat(node).await?;
    let Some(stat) = stat else {
        return Ok(None);
    };
    if node::is_as_created(&stat) {
        return Ok(Some((false, watch)));
    }
    let (data, _) = session.get_data(node).await?;
    Ok(Some((data == REVOKE, watch)))
}

/// The client library's words for why a request failed, without our own
/// operation and path around them.
fn cause_text(err: &zk::Error) -> String {
    err.cause()
        .map_or_else(|| err.to_string(), ToString::to_string)
}

/// A lock that is ours: the session that holds it, our node, and the
/// heartbeat that shows the leader still keeps the session. It lets itself
/// go ([`HeldLock::release`]); dropped without that, its session closes
/// and the server removes our node with it.
pub(crate) struct HeldLock {
    session: Session,
    held: Held,
    evidence: LeaderEvidence,
    /// The watch set on our node while we waited, for the first watch of
    /// the hold to go on with.
    kept_watch: Cell<Option<NodeWatch>>,
    /// Set once [`HeldLock::lost`] has found the lock gone: our node's name
    /// may then be another's.
    lost: Cell<Option<Loss>>,
    /// Whose node it is: ours, or an enclosing hold's that a nested zklock
    /// re-entered, which is that hold's to release, never ours.
    node_of: NodeOf,
}

/// Whose node a [`HeldLock`] holds by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NodeOf {
    /// The node we made.
    Ours,
    /// An enclosing hold's node, re-entered.
    EnclosingHold,
}

impl HeldLock {
    /// The lock `held` on `session`, whose heartbeat is `evidence`; `kept`
    /// is a watch already set on our node while it was as we made it.
    pub(crate) fn new(
        session: Session,
        held: Held,
        evidence: LeaderEvidence,
        kept: Option<NodeWatch>,
    ) -> HeldLock {
        HeldLock {
            session,
            held,
            evidence,
            kept_watch: Cell::new(kept),
            lost: Cell::new(None),
            node_of: NodeOf::Ours,
        }
    }

    /// The enclosing hold `held` re-entered on `session`: watched as our
    /// own would be, so that what runs under it stops when it ends, but
    /// left alone when we let go.
    pub(crate) fn reentered(session: Session, held: Held, evidence: LeaderEvidence) -> HeldLock {
        HeldLock {
            node_of: NodeOf::EnclosingHold,
            ..HeldLock::new(session, held, evidence, None)
        }
    }

    /// Our node: the lock directory, the token and the fencing token.
    pub(crate) fn held(&self) -> &Held {
        &self.held
    }

    /// The session that holds the lock.
    pub(crate) fn session(&self) -> &Session {
        &self.session
    }

    /// Resolves when the lock is lost, `margin` before the leader could
    /// expire the session; never while the lock is ours.
    pub(crate) async fn lost(&self, margin: Duration) -> Loss {
        let kept = self.kept_watch.take();
        let loss = lost(&self.session, &self.held, kept, &self.evidence, margin).await;
        self.lost.set(Some(loss.clone()));
        loss
    }

    /// Lets the lock go: deletes our node and closes the session, both in
    /// one round trip, then waits until the session is closed. If the
    /// delete is lost with the connection, the client keeps closing the
    /// session through reconnects, and the server removes our ephemeral
    /// node with it. After a loss, only our own incarnation of the node is
    /// deleted (see [`release_after_loss`]).
    pub(crate) async fn release(self) -> Result<(), zk::Error> {
        let HeldLock {
            session,
            held,
            evidence,
            lost,
            node_of,
            ..
        } = self;
        evidence.stop();
        if node_of == NodeOf::EnclosingHold {
            session.close().await;
            return Ok(());
        }
        match lost.into_inner() {
            None => {}
            // The server removed our ephemeral node with the session.
            Some(Loss::SessionEnded(_)) => {
                session.close().await;
                return Ok(());
            }
            Some(_) => {
                // Bounded: with the connection down, a request waits for a
                // reconnect that may never come.
                let wait = session.session_timeout();
                let _ = tokio::time::timeout(wait, release_after_loss(&session, &held)).await;
                session.close().await;
                return Ok(());
            }
        }
        let delete = session.send_delete(&held.node);
        let ((), deleted) = tokio::join!(session.close(), delete);
        match deleted {
            Ok(()) => Ok(()),
            Err(err) if err.class() != Class::Normal => {
                tracing::info!("{err}: not confirmed; the closed session removes the node");
                Ok(())
            }
            Err(err) => Err(err),
        }
    }

    /// Closes the session and leaves our node to the server: a node with a
    /// time to live outlives it.
    pub(crate) async fn leave(self) {
        self.evidence.stop();
        self.session.close().await;
    }
}

/// After the lock was lost our node may be gone, and its name another's: a
/// directory deleted and made again restarts its sequence numbers (HBase's
/// `write-N` at 0). So the node at our token is deleted only while it is
/// still ours, the incarnation we made (our czxid, our session), as reap
/// deletes; otherwise it is left alone. Nothing is left behind either way:
/// the session, closed next, takes an ephemeral node of ours with it.
async fn release_after_loss(session: &Session, held: &Held) {
    let ours = |stat: &zk::Stat| stat.czxid == held.fence && stat.ephemeral_owner == session.id();
    match session.stat(&held.node).await {
        Ok(Some(stat)) if ours(&stat) => {
            let node = delete::Seen::new(held.node.clone(), &stat);
            if let Err(err) = delete::delete_seen(session, [node], |_, _| {}).await {
                tracing::info!("{err}: the closed session removes our node");
            }
        }
        Ok(Some(_)) => tracing::info!("{} is another's node now: left alone", held.node),
        Ok(None) => {}
        Err(err) => tracing::info!("{err}: the closed session removes our node, if any"),
    }
}
