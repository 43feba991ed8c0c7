//! Holding a lock: noticing that it is lost, and letting it go.

use std::cell::Cell;
use std::fmt;
use std::time::Duration;

use super::acquire::{AcquireError, Held};
use super::delay::{Entry, LastEnd};
use super::end::{self, EndHow, EndRecord, Ender, Ending, Known, OwnEnd, Ran};
use super::node;
use crate::zk::monitor::{self, Lapse, LeaderEvidence};
use crate::zk::{self, Class, Deleted, NodeEvent, NodeWatch, Session, class_of, delete};

/// What Curator's revocation writes into a holder's node.
pub(crate) const REVOKE: &[u8] = b"__REVOKE__";

/// Why a held lock is gone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Loss {
    /// Our node was deleted (reaped, force-released); with the end record
    /// that names it, when whoever deleted it wrote one (boxed: a record is
    /// many times the size of the other losses).
    Deleted(Option<Box<EndRecord>>),
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
            Loss::Deleted(None) => f.write_str("our lock node was deleted"),
            Loss::Deleted(Some(record)) => write!(
                f,
                "our lock node was deleted ({} by {})",
                record.how.as_str(),
                record.who_and_why()
            ),
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
            Ok(None) => return Loss::Deleted(None),
            Err(err) if err.is_no_node() => return Loss::Deleted(None),
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
            NodeEvent::Deleted => return Loss::Deleted(None),
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

/// The locks that are ours, in one session: the session, our node in each
/// lock (in the order they were taken, the first named by [`HeldLock::held`]),
/// and the heartbeat that shows the leader still keeps the session. It
/// lets them all go at once ([`HeldLock::release`]); dropped without that,
/// its session closes and the server removes our nodes with it.
pub(crate) struct HeldLock {
    session: Session,
    first: Hold,
    /// The other locks of `lock A B -- COMMAND`, after the first.
    rest: Vec<Hold>,
    evidence: LeaderEvidence,
    /// Set once [`HeldLock::lost`] has found a lock gone: our node's name
    /// may then be another's.
    lost: Cell<Option<Loss>>,
    /// Who we are, for the end records of our nodes.
    ender: Ender,
    /// For a `--once-per` hold, the last counted run its end record keeps.
    last_run: Cell<Option<LastRun>>,
    /// How long the lock-delay held the locks back before they were handed
    /// over.
    delayed: Duration,
}

/// The last counted run of a `--once-per` lock, as its holder knows it
/// (`None`: no run ever counted).
pub(crate) struct LastRun(pub Option<Ran>);

/// One lock of a [`HeldLock`]: our node in it, and whose node that is.
pub(crate) struct Hold {
    held: Held,
    /// The watch set on our node while we waited, for the first watch of
    /// the hold to go on with.
    kept_watch: Cell<Option<NodeWatch>>,
    /// Whose node it is: ours, or an enclosing hold's that a nested zklock
    /// re-entered, which is that hold's to release, never ours.
    node_of: NodeOf,
    /// What we learnt of the ends before our hold, for the lock-delay and
    /// our end record; `None` for an enclosing hold's node.
    entry: Option<Entry>,
}

/// Whose node a [`Hold`] holds by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NodeOf {
    /// The node we made.
    Ours,
    /// An enclosing hold's node, re-entered.
    EnclosingHold,
}

impl Hold {
    /// Our node `held`; `kept` is a watch already set on it while it was as
    /// we made it; `entry`, what we learnt of the ends before our hold.
    pub(crate) fn ours(held: Held, kept: Option<NodeWatch>, entry: Option<Entry>) -> Hold {
        Hold {
            held,
            kept_watch: Cell::new(kept),
            node_of: NodeOf::Ours,
            entry,
        }
    }

    /// The enclosing hold `held`, re-entered: watched as our own would be,
    /// so that what runs under it stops when it ends, but left alone when
    /// we let go.
    pub(crate) fn reentered(held: Held) -> Hold {
        Hold {
            node_of: NodeOf::EnclosingHold,
            ..Hold::ours(held, None, None)
        }
    }

    /// How the ends before our hold went, for the lock-delay of its lock;
    /// `None` for an enclosing hold's node, which was no wait of ours.
    pub(crate) async fn last_end(&mut self) -> Option<(String, LastEnd)> {
        let entry = self.entry.as_mut()?;
        let clock = *entry.clock();
        let unclean = entry.judged().await.unclean;
        Some((self.held.lock.clone(), LastEnd { unclean, clock }))
    }

    /// The node itself and what we learnt on our way to it, when it is ours
    /// to delete.
    fn ours_to_delete(self) -> Option<(Held, Option<Entry>)> {
        (self.node_of == NodeOf::Ours).then_some((self.held, self.entry))
    }
}

impl HeldLock {
    /// The locks `first` and `rest` on `session`, whose heartbeat is
    /// `evidence`, just acquired, to be held with `margin` to stop a command
    /// in before the leader could expire the session. A wait that outlived
    /// that deadline (a connection down too long, or a session made too
    /// long ago) ends here: the locks were never held, they are let go, and
    /// the session counts as lost before the lock was acquired.
    pub(crate) async fn new(
        session: Session,
        evidence: LeaderEvidence,
        (first, rest): (Hold, Vec<Hold>),
        margin: Duration,
        ender: Ender,
    ) -> Result<HeldLock, AcquireError> {
        if let Some(silent) = evidence.lapsed(session.session_timeout(), margin) {
            let path = first.held.lock.clone();
            give_up(
                session,
                evidence,
                std::iter::once(first).chain(rest).collect(),
                ender,
            )
            .await;
            return Err(AcquireError::LeaderSilent { path, silent });
        }
        Ok(HeldLock {
            session,
            first,
            rest,
            evidence,
            lost: Cell::new(None),
            ender,
            last_run: Cell::new(None),
            delayed: Duration::ZERO,
        })
    }

    /// The locks, handed over after a lock-delay of `delayed`.
    pub(crate) fn delayed_for(self, delayed: Duration) -> HeldLock {
        HeldLock { delayed, ..self }
    }

    /// How long the lock-delay held the locks back (zero without one).
    pub(crate) fn delayed(&self) -> Duration {
        self.delayed
    }

    /// Our node in the first lock: the lock directory, the token and the
    /// fencing token.
    pub(crate) fn held(&self) -> &Held {
        &self.first.held
    }

    /// Our node in every lock, the first first.
    pub(crate) fn all_held(&self) -> impl Iterator<Item = &Held> {
        std::iter::once(&self.first)
            .chain(&self.rest)
            .map(|hold| &hold.held)
    }

    /// Makes the end record of this `--once-per` hold keep `run` as the
    /// last counted run, or the one the directory names then if later.
    pub(crate) fn keep_last_run(&self, run: Option<Ran>) {
        self.last_run.set(Some(LastRun(run)));
    }

    /// The session that holds the locks.
    pub(crate) fn session(&self) -> &Session {
        &self.session
    }

    /// Resolves when any of the locks is lost, `margin` before the leader
    /// could expire the session; never while they are all ours. Says which
    /// (the first, when the session is what ended).
    pub(crate) async fn lost(&self, margin: Duration) -> (&Held, Loss) {
        let holds: Vec<&Hold> = std::iter::once(&self.first).chain(&self.rest).collect();
        let nodes = holds
            .iter()
            .map(|hold| Box::pin(node_lost(&self.session, &hold.held, hold.kept_watch.take())));
        let (which, loss) = tokio::select! {
            (loss, index, _) = futures::future::select_all(nodes) => (holds[index], loss),
            lapse = monitor::lapse(&self.session, &self.evidence, margin) => (&self.first, match lapse {
                Lapse::Ended(state) => Loss::SessionEnded(state),
                Lapse::Silent(silent) => Loss::Silent(silent),
            }),
        };
        let loss = match loss {
            Loss::Deleted(None) => Loss::Deleted(ended_by(&self.session, &which.held.node).await),
            loss => loss,
        };
        self.lost.set(Some(loss.clone()));
        (&which.held, loss)
    }

    /// Lets the locks go: deletes our nodes, each with the end record of
    /// `how` in its directory, and closes the session, all in one round
    /// trip, then waits until the session is closed. If a delete is lost
    /// with the connection, or a directory refuses the record, the client
    /// keeps closing the session through reconnects, and the server
    /// removes our ephemeral nodes with it. After a loss, only our own
    /// incarnation of each node is deleted (see [`release_after_loss`]).
    pub(crate) async fn release(self, how: EndHow) -> Result<(), zk::Error> {
        let HeldLock {
            session,
            first,
            rest,
            evidence,
            lost,
            ender,
            last_run,
            ..
        } = self;
        let ours: Vec<(Held, Option<Entry>)> = std::iter::once(first)
            .chain(rest)
            .filter_map(Hold::ours_to_delete)
            .collect();
        match lost.into_inner() {
            None => {
                let ending = Ending::new(how, ender);
                let_go(session, evidence, ours, &ending, last_run.into_inner()).await
            }
            // The server removed our ephemeral nodes with the session.
            Some(Loss::SessionEnded(_)) => {
                evidence.stop();
                session.close().await;
                Ok(())
            }
            Some(_) => {
                evidence.stop();
                // Bounded: with the connection down, a request waits for a
                // reconnect that may never come.
                let wait = session.session_timeout();
                let ending = Ending::new(EndHow::Lost, ender);
                let each = ours
                    .iter()
                    .map(|(held, _)| release_after_loss(&session, held, &ending));
                let _ = tokio::time::timeout(wait, futures::future::join_all(each)).await;
                session.close().await;
                Ok(())
            }
        }
    }

    /// Closes the session and leaves our node to the server: a node with a
    /// time to live outlives it.
    pub(crate) async fn leave(self) {
        self.evidence.stop();
        self.session.close().await;
    }
}

/// Gives up the locks `holds` taken so far (some of a set, when another
/// could not be had): deletes our nodes among them, saying so in their end
/// records as `ender`, and closes the session.
pub(crate) async fn give_up(
    session: Session,
    evidence: LeaderEvidence,
    holds: Vec<Hold>,
    ender: Ender,
) {
    let ours = holds.into_iter().filter_map(Hold::ours_to_delete).collect();
    let ending = Ending::new(EndHow::GaveUp, ender);
    if let Err(err) = let_go(session, evidence, ours, &ending, None).await {
        tracing::warn!("could not remove our node: {err}");
    }
}

/// Deletes the nodes `ours`, each with the record of `ending` in its
/// directory, and closes the session. An exclusive holder's record is
/// written at the version of the directory it read on its way in, in the
/// one round trip that closes the session; it finds the directory written
/// since only when an end came in between that is no waiter's (a break, a
/// reap), and then the closed session removes its node without a record.
/// Every other end (a shared holder's, a `--once-per` hold's, which keeps
/// `last_run`) reads the directory first and writes at that version, again
/// if it changed, before the close.
async fn let_go(
    session: Session,
    evidence: LeaderEvidence,
    ours: Vec<(Held, Option<Entry>)>,
    ending: &Ending,
    last_run: Option<LastRun>,
) -> Result<(), zk::Error> {
    evidence.stop();
    let ran = last_run.as_ref().and_then(|LastRun(run)| run.clone());
    let mut kept = Ok(());
    let mut closing = Vec::new();
    for (held, mut entry) in ours {
        let write = match (&last_run, entry.as_mut()) {
            (None, Some(entry)) => entry.closing_write(&held.node, session.id(), ending).await,
            _ => None,
        };
        if let Some(write) = write {
            closing.push((held.node, write));
            continue;
        }
        let (before, clock) = match entry.as_mut() {
            Some(entry) => (entry.judged().await.known(), Some(*entry.clock())),
            None => (Known::default(), None),
        };
        let end = OwnEnd {
            ending,
            before,
            clock: clock.as_ref(),
            read: None,
            ran: ran.clone(),
        };
        match end::end_own(&session, &held.node, end).await {
            Err(err) if err.class() == Class::Normal => kept = Err(err),
            Err(err) => tracing::info!("{err}: the closed session removes the node"),
            Ok(()) => {}
        }
    }
    // Sent now, before the close below: the server takes them in order.
    let deletes: Vec<_> = closing
        .iter()
        .map(|(node, write)| session.send_delete(node, write.as_ref()))
        .collect();
    let ((), deleted) = tokio::join!(session.close(), futures::future::join_all(deletes));
    for result in deleted {
        match result {
            Ok(Deleted::Done) => {}
            Ok(Deleted::WriteRefused) => {
                tracing::info!(
                    "no permission to write the end record; the closed session removes the node"
                );
            }
            Ok(Deleted::DirChanged) => {
                tracing::info!(
                    "the lock directory was written since it was read; the closed session \
                     removes the node, without an end record"
                );
            }
            Err(err) if err.class() != Class::Normal => {
                tracing::info!("{err}: not confirmed; the closed session removes the node");
            }
            Err(err) => return Err(err),
        }
    }
    kept
}

/// The end record that names our node at `node`, in its directory, when
/// one is there: who deleted it and why. Bounded: a lost lock is reported
/// at once, with or without it.
async fn ended_by(session: &Session, node: &str) -> Option<Box<EndRecord>> {
    let dir = end::directory_for(node)?;
    let read = tokio::time::timeout(END_READ_WAIT, session.get_data(dir)).await;
    let (data, _) = read.ok()?.ok()?;
    end::naming(&data, node, session.id()).map(Box::new)
}

/// How long a victim waits to read who broke its lock.
const END_READ_WAIT: Duration = Duration::from_secs(1);

/// After the lock was lost our node may be gone, and its name another's: a
/// directory deleted and made again restarts its sequence numbers (HBase's
/// `write-N` at 0). So the node at our token is deleted only while it is
/// still ours, the incarnation we made (our czxid, our session), as reap
/// deletes, with the record of a `lost` hold (`ending`): its command was
/// stopped, not finished, which the next holder's lock-delay must know.
/// Otherwise it is left alone. Nothing is left behind either way: the
/// session, closed next, takes an ephemeral node of ours with it.
async fn release_after_loss(session: &Session, held: &Held, ending: &Ending) {
    let ours = |stat: &zk::Stat| stat.czxid == held.fence && stat.ephemeral_owner == session.id();
    match session.stat(&held.node).await {
        Ok(Some(stat)) if ours(&stat) => {
            let node = delete::Seen::new(held.node.clone(), &stat);
            let deleted = end::delete_recording(session, vec![node], ending, &|_| false, |_, _| {});
            if let Err(err) = deleted.await {
                tracing::info!("{err}: the closed session removes our node");
            }
        }
        Ok(Some(_)) => tracing::info!("{} is another's node now: left alone", held.node),
        Ok(None) => {}
        Err(err) => tracing::info!("{err}: the closed session removes our node, if any"),
    }
}
