//! Moments when a lock had two holders at once, at least one of them
//! exclusive, by the rules each holder's own library follows.
//!
//! One library never lets that happen in its own queue. Two libraries
//! sharing a directory can: each orders only the nodes named its own way
//! (kazoo skips Curator's `lock-` nodes, Curator sorts kazoo's by their
//! whole name), so each may see its own contender first. zklock orders
//! every dialect's contenders together, so a node of zklock's (its owner
//! record in the data) holds only when nothing at all is ahead of it; any
//! other node holds by its own dialect's queue rules over the nodes of that
//! dialect alone. The replay marks holds by these rules, and an overlap is
//! then the evidence an incident review needs.

use std::collections::{BTreeMap, HashMap};

use crate::lock::queue::{self, Ahead, QueueEntry};
use crate::lock::{ContenderMode, Dialect};

/// One of the holders of an overlap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Holder {
    pub node: String,
    pub dialect: Dialect,
    pub mode: ContenderMode,
    pub session: i64,
    pub fence: i64,
}

/// A span of time in which the same holders held one lock at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Overlap {
    pub lock: String,
    pub from_ms: i64,
    /// The transaction that made it.
    pub from_zxid: i64,
    /// When the holders changed; `None` while it lasted where the replay
    /// stopped.
    pub until_ms: Option<i64>,
    pub until_zxid: Option<i64>,
    /// Every holder at that time, in queue order.
    pub holders: Vec<Holder>,
}

/// What the overlap rules need of a live contender.
pub(super) struct Seen {
    pub session: i64,
    pub fence: i64,
    /// Made by zklock, which orders every dialect's contenders together.
    pub zklock: bool,
    /// Holding by those joint rules.
    pub holding: bool,
}

/// Who holds a queue (in queue order) by each holder's own library's rules.
pub(super) fn own_rule_holders<'q>(
    queue: impl Iterator<Item = (&'q QueueEntry, Seen)>,
) -> Vec<Holder> {
    /// One dialect's view of the queue so far: its head, the one just
    /// ahead and the nearest exclusive one.
    #[derive(Default)]
    struct View<'q> {
        head: Option<&'q QueueEntry>,
        just_ahead: Option<&'q QueueEntry>,
        exclusive: Option<&'q QueueEntry>,
    }
    let mut views: HashMap<Dialect, View<'q>> = HashMap::new();
    let mut holders = Vec::new();
    for (entry, seen) in queue {
        let view = views.entry(entry.dialect).or_default();
        let head = *view.head.get_or_insert(entry);
        let ahead = Ahead {
            just_ahead: view.just_ahead,
            exclusive: view.exclusive.map(|e| (e, e)),
            head,
        };
        let holds_here = queue::waits_on(entry, ahead).is_none();
        view.just_ahead = Some(entry);
        if !queue::is_shared(entry) {
            view.exclusive = Some(entry);
        }
        if (seen.zklock && seen.holding) || (!seen.zklock && holds_here) {
            holders.push(Holder {
                node: entry.name.clone(),
                dialect: entry.dialect,
                mode: entry.mode(),
                session: seen.session,
                fence: seen.fence,
            });
        }
    }
    holders
}

/// True when `holders` conflict: two sessions hold, one of them
/// exclusively. (One session holding twice is a Curator writer's
/// downgrade, or re-entry.)
pub(super) fn conflict(holders: &[Holder]) -> bool {
    holders.iter().any(|a| {
        holders.iter().any(|b| {
            a.session != b.session
                && (a.mode == ContenderMode::Exclusive || b.mode == ContenderMode::Exclusive)
        })
    })
}

/// The overlaps in progress, one per lock directory at most.
#[derive(Debug, Default)]
pub(super) struct Overlaps {
    open: BTreeMap<String, Overlap>,
}

impl Overlaps {
    /// Records `dir`'s holders after transaction `zxid` at `at_ms`: an
    /// overlap whose holders changed ends and is returned; a new one
    /// begins when they conflict.
    pub(super) fn update(
        &mut self,
        dir: &str,
        holders: Vec<Holder>,
        zxid: i64,
        at_ms: i64,
    ) -> Option<Overlap> {
        let conflicting = conflict(&holders);
        self.update_when(dir, holders, conflicting, zxid, at_ms)
    }

    /// As [`Overlaps::update`], with whether the holders conflict decided
    /// by the caller: a semaphore's leases conflict only past its maximum.
    pub(super) fn update_when(
        &mut self,
        dir: &str,
        holders: Vec<Holder>,
        conflicting: bool,
        zxid: i64,
        at_ms: i64,
    ) -> Option<Overlap> {
        if let Some(open) = self.open.get(dir)
            && conflicting
            && open.holders == holders
        {
            return None;
        }
        let ended = self.open.remove(dir).map(|mut overlap| {
            overlap.until_ms = Some(at_ms);
            overlap.until_zxid = Some(zxid);
            overlap
        });
        if conflicting {
            self.open.insert(
                dir.to_owned(),
                Overlap {
                    lock: dir.to_owned(),
                    from_ms: at_ms,
                    from_zxid: zxid,
                    until_ms: None,
                    until_zxid: None,
                    holders,
                },
            );
        }
        ended
    }

    /// The overlaps still in progress where the replay stopped.
    pub(super) fn finish(self) -> impl Iterator<Item = Overlap> {
        self.open.into_values()
    }
}
