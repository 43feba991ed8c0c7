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
//!
//! Holders are counted, not compared: an overlap is known in constant time
//! whatever the number of holders, and names at most [`SHOWN`] of them
//! (and as many exclusive ones) with the count of all, so thousands of
//! readers changing one at a time make as many overlaps of bounded size,
//! not thousands of lists of thousands.

use std::collections::BTreeMap;

use crate::lock::{ContenderMode, Dialect};

/// How many holders an overlap names (and how many exclusive ones at most
/// besides).
pub(crate) const SHOWN: usize = 16;

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
    /// The holders named (see [`SHOWN`]), in queue order.
    pub holders: Vec<Holder>,
    /// How many held.
    pub holder_count: usize,
}

/// The overlaps in progress, one per lock directory at most.
#[derive(Debug, Default)]
pub(super) struct Overlaps {
    open: BTreeMap<String, Overlap>,
}

impl Overlaps {
    /// After `dir`'s holders changed in transaction `zxid` at `at_ms`: its
    /// overlap ends and is returned, and a new one begins when they now
    /// `conflict`, naming those `shown` gives, of `count`.
    pub(super) fn changed(
        &mut self,
        dir: &str,
        conflict: bool,
        (zxid, at_ms): (i64, i64),
        count: usize,
        shown: impl FnOnce() -> Vec<Holder>,
    ) -> Option<Overlap> {
        let ended = self.open.remove(dir).map(|mut overlap| {
            overlap.until_ms = Some(at_ms);
            overlap.until_zxid = Some(zxid);
            overlap
        });
        if conflict {
            self.open.insert(
                dir.to_owned(),
                Overlap {
                    lock: dir.to_owned(),
                    from_ms: at_ms,
                    from_zxid: zxid,
                    until_ms: None,
                    until_zxid: None,
                    holders: shown(),
                    holder_count: count,
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
