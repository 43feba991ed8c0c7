//! Whether a token's node holds its lock now, for `check`: the question a
//! resource asks before it accepts a write from whoever says it holds.
//!
//! The answer comes after a `sync`, so it is as fresh as the leader's: a
//! server behind the leader could still show a node the leader has
//! deleted. A queue lock's standing comes from its listing alone, by the
//! same rules `lock` waits by (`LockQueue`): the sync, the listing and the
//! node's stat go out together and the server answers them in order, one
//! round trip. A semaphore's lease is read with the whole semaphore, as
//! `stat` reads it, since who holds a lease depends on the others.

use serde::Serialize;

use crate::lock::queue::{LockQueue, Standing};
use crate::lock::semaphore::{self, CURATOR_LEASES};
use crate::lock::{Dialect, name};
use crate::zk::{self, Session, path};

use super::walk::read_lock;

/// What a check found of one token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct TokenCheck {
    /// True when the node holds its lock now (and has the fence asked for).
    pub held: bool,
    /// The lock (for a lease, the semaphore).
    pub lock: String,
    /// The token's node.
    pub node: String,
    /// The node's czxid, its fencing token; `None` when it is gone.
    pub fence: Option<i64>,
    /// How long the node has existed (from its ctime); `None` when gone.
    pub age_ms: Option<i64>,
}

/// What a token's name says it is.
enum TokenKind {
    /// A contender of the queue lock in the directory.
    Queue,
    /// A lease of the semaphore at this path.
    Lease(String),
}

/// The kind of the token at `token`; `None` for a name no lock library
/// makes, which is no token.
fn token_kind(token: &str) -> Option<TokenKind> {
    let child = path::basename(token);
    let dir = path::parent(token)?;
    match semaphore::parse_lease(child) {
        Some(lease) if lease.dialect == Dialect::Kazoo => Some(TokenKind::Lease(dir.to_owned())),
        Some(_) if path::basename(dir) == CURATOR_LEASES => {
            path::parent(dir).map(|semaphore| TokenKind::Lease(semaphore.to_owned()))
        }
        _ => name::parse(child).map(|_| TokenKind::Queue),
    }
}

/// True when `token` is named as a lock contender or a semaphore lease:
/// anything else is no token, whatever node it is.
pub(crate) fn is_token(token: &str) -> bool {
    token_kind(token).is_some()
}

/// Whether the node at `token` holds its lock now, read on `session`
/// after a sync; `fence`, when given, must be its czxid too. `now_ms`
/// dates the node's age. A name that is no token ([`is_token`]) never
/// holds.
pub(crate) async fn check(
    session: &Session,
    token: &str,
    fence: Option<i64>,
    now_ms: i64,
) -> anyhow::Result<TokenCheck> {
    let (lock, stat, holds) = match token_kind(token) {
        None => (path::parent(token).unwrap_or("/").to_owned(), None, false),
        Some(kind) => holds_now(session, token, kind).await?,
    };
    let node_fence = stat.as_ref().map(|stat| stat.czxid);
    Ok(TokenCheck {
        held: holds && stat.is_some() && fence.is_none_or(|fence| node_fence == Some(fence)),
        lock,
        node: token.to_owned(),
        fence: node_fence,
        age_ms: stat.map(|stat| now_ms.saturating_sub(stat.ctime)),
    })
}

/// The lock of the token at `token` of `kind`, its node's stat (`None`
/// when gone), and whether it holds by its lock's rules.
async fn holds_now(
    session: &Session,
    token: &str,
    kind: TokenKind,
) -> anyhow::Result<(String, Option<zk::Stat>, bool)> {
    Ok(match kind {
        TokenKind::Queue => {
            let dir = path::parent(token).unwrap_or("/");
            let (synced, children, stat) = tokio::join!(
                session.sync(dir),
                session.children(dir),
                session.stat(token)
            );
            synced.or_else(gone_is_nothing)?;
            let children = children
                .map(Some)
                .or_else(gone_is_none)?
                .unwrap_or_default();
            let queue = LockQueue::from_children(children);
            let holds = matches!(
                queue.standing_of(path::basename(token)),
                Some((Standing::Holding, _))
            );
            (dir.to_owned(), stat?, holds)
        }
        TokenKind::Lease(semaphore) => {
            session.sync(&semaphore).await.or_else(gone_is_nothing)?;
            let stat = session.stat(token).await?;
            let holders = match read_lock(session, &semaphore).await {
                Ok(lock) => lock.map(|lock| lock.holders).unwrap_or_default(),
                Err(err)
                    if err
                        .downcast_ref::<zk::Error>()
                        .is_some_and(zk::Error::is_no_node) =>
                {
                    Vec::new()
                }
                Err(err) => return Err(err),
            };
            let holds = holders.iter().any(|holder| holder.path == token);
            (semaphore, stat, holds)
        }
    })
}

/// A sync of a directory that is gone is no failure: the listing after it
/// says the node is gone.
fn gone_is_nothing(err: zk::Error) -> Result<(), zk::Error> {
    if err.is_no_node() { Ok(()) } else { Err(err) }
}

/// A listing of a directory that is gone: no children.
fn gone_is_none<T>(err: zk::Error) -> Result<Option<T>, zk::Error> {
    if err.is_no_node() { Ok(None) } else { Err(err) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_a_contender_or_a_lease() {
        assert!(matches!(
            token_kind("/locks/a/_c_9f8e7d6c-5b4a-4938-8271-605f4e3d2c1b-lock-0000000001"),
            Some(TokenKind::Queue)
        ));
        assert!(matches!(
            token_kind("/locks/s/leases/_c_9f8e7d6c-5b4a-4938-8271-605f4e3d2c1b-lease-0000000001"),
            Some(TokenKind::Lease(semaphore)) if semaphore == "/locks/s"
        ));
        assert!(matches!(
            token_kind("/locks/s/0123456789abcdef0123456789abcdef"),
            Some(TokenKind::Lease(semaphore)) if semaphore == "/locks/s"
        ));
        assert!(token_kind("/locks/a/config").is_none());
        assert!(token_kind("/").is_none());
    }
}
