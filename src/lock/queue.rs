//! The lock queue: who holds a lock and whom each waiter waits for.
//!
//! This is the one place that answers the question, for acquiring (`lock`)
//! and for inspecting (`stat`, `ls`, `watch`, `reap`) alike, so what zklock
//! shows can never disagree with what it does.

use super::name::{self, ContenderKind, ContenderMode, Dialect};

/// One recognised contender node of a lock directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct QueueEntry {
    /// The child name, e.g. `_c_<uuid>-lock-0000000003`.
    pub name: String,
    pub dialect: Dialect,
    pub kind: ContenderKind,
    /// The sequence suffix as a signed 32-bit number.
    pub sequence: i32,
}

impl QueueEntry {
    /// The contender a child named `name` is, when its name is one.
    pub(crate) fn parse(name: &str) -> Option<QueueEntry> {
        name::parse(name).map(|parsed| QueueEntry {
            name: name.to_owned(),
            dialect: parsed.dialect,
            kind: parsed.kind,
            sequence: parsed.sequence,
        })
    }

    /// Exclusive or shared.
    pub(crate) fn mode(&self) -> ContenderMode {
        self.kind.mode()
    }
}

/// Queue order: by sequence number (signed 32-bit), then exclusive before
/// shared (a Curator writer that downgrades makes a read node with its own
/// sequence number), then by name; never by the whole name. The name alone
/// decides the other fields, so this order agrees with equality.
impl Ord for QueueEntry {
    fn cmp(&self, other: &QueueEntry) -> std::cmp::Ordering {
        (self.sequence, is_shared(self), &self.name).cmp(&(
            other.sequence,
            is_shared(other),
            &other.name,
        ))
    }
}

impl PartialOrd for QueueEntry {
    fn partial_cmp(&self, other: &QueueEntry) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Where a contender stands in its queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Standing {
    /// It holds the lock.
    Holding,
    /// It waits; the index is the contender whose deletion it watches.
    WaitingOn(usize),
}

/// The contenders of one lock directory in queue order, with each one's
/// standing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LockQueue {
    contenders: Vec<QueueEntry>,
    standings: Vec<Standing>,
}

impl LockQueue {
    /// Builds the queue from a directory's child names, in queue order (the
    /// order of [`QueueEntry`]). Children that are not contenders of any
    /// recognised dialect are ignored.
    pub(crate) fn from_children<I, S>(children: I) -> LockQueue
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut contenders: Vec<QueueEntry> = children
            .into_iter()
            .filter_map(|child| QueueEntry::parse(&child.into()))
            .collect();
        contenders.sort();
        let standings = standings(&contenders);
        LockQueue {
            contenders,
            standings,
        }
    }

    /// Every contender, in queue order.
    pub(crate) fn contenders(&self) -> &[QueueEntry] {
        &self.contenders
    }

    /// Each contender with its standing, in queue order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&QueueEntry, Standing)> {
        self.contenders.iter().zip(self.standings.iter().copied())
    }

    /// The contenders that hold the lock now.
    pub(crate) fn holders(&self) -> impl Iterator<Item = &QueueEntry> {
        self.entries()
            .filter(|(_, s)| *s == Standing::Holding)
            .map(|(c, _)| c)
    }

    /// The standing of the contender named `name`, or `None` when it is not
    /// in the queue. A waiter's standing names the contender it waits on.
    pub(crate) fn standing_of(&self, name: &str) -> Option<(Standing, Option<&QueueEntry>)> {
        let index = self.contenders.iter().position(|c| c.name == name)?;
        let standing = self.standings[index];
        Some((standing, self.waiting_on(standing)))
    }

    /// The contender a standing waits on; `None` for a holder.
    pub(crate) fn waiting_on(&self, standing: Standing) -> Option<&QueueEntry> {
        match standing {
            Standing::Holding => None,
            Standing::WaitingOn(ahead) => self.contenders.get(ahead),
        }
    }

    /// Takes the contender named `name` out of the queue, when it is in it,
    /// and works out everyone's standing again.
    pub(crate) fn remove(&mut self, name: &str) {
        if let Some(index) = self.contenders.iter().position(|c| c.name == name) {
            self.contenders.remove(index);
            self.standings = standings(&self.contenders);
        }
    }

    /// The contenders ahead of the one named `name`, nearest last; none
    /// when it is not in the queue.
    pub(crate) fn ahead_of(&self, name: &str) -> &[QueueEntry] {
        let index = self.contenders.iter().position(|c| c.name == name);
        &self.contenders[..index.unwrap_or(0)]
    }

    /// Keeps only the contenders `keep` says yes to, and works out
    /// everyone's standing again, once for all of them.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&QueueEntry) -> bool) {
        let before = self.contenders.len();
        self.contenders.retain(|contender| keep(contender));
        if self.contenders.len() != before {
            self.standings = standings(&self.contenders);
        }
    }

    /// How many contenders the queue holds.
    pub(crate) fn len(&self) -> usize {
        self.contenders.len()
    }

    /// True when no contender is left.
    pub(crate) fn is_empty(&self) -> bool {
        self.contenders.is_empty()
    }
}

/// True when the contender holds shared (a reader), not exclusive.
pub(crate) fn is_shared(contender: &QueueEntry) -> bool {
    contender.mode() == ContenderMode::Shared
}

/// The queue rules in one pass: an exclusive contender holds when no one
/// is ahead and otherwise waits on the one just ahead; a shared contender
/// holds when no exclusive one is ahead and otherwise waits on the nearest
/// exclusive one ahead. A shared contender with the same sequence number as
/// the exclusive holder is that writer's downgrade (Curator names the read
/// node after the write node it holds), so it holds with it.
fn standings(contenders: &[QueueEntry]) -> Vec<Standing> {
    let mut last_exclusive: Option<usize> = None;
    contenders
        .iter()
        .enumerate()
        .map(|(i, contender)| {
            let ahead = Ahead {
                just_ahead: i.checked_sub(1),
                exclusive: last_exclusive.map(|at| (at, &contenders[at])),
                head: 0,
            };
            if !is_shared(contender) {
                last_exclusive = Some(i);
            }
            match waits_on(contender, ahead) {
                None => Standing::Holding,
                Some(ahead) => Standing::WaitingOn(ahead),
            }
        })
        .collect()
}

/// What is ahead of a contender in its queue, each named by its place `P`
/// (an index, or a key of an ordered map): all the queue rules look at.
pub(crate) struct Ahead<'a, P> {
    /// The contender just ahead; `None` for the first.
    pub just_ahead: Option<P>,
    /// The nearest exclusive contender ahead, if any.
    pub exclusive: Option<(P, &'a QueueEntry)>,
    /// The first contender of the queue.
    pub head: P,
}

/// The queue rules for one contender (see [`standings`]): `None` when it
/// holds, else the place of the contender it waits on.
pub(crate) fn waits_on<P: PartialEq>(contender: &QueueEntry, ahead: Ahead<'_, P>) -> Option<P> {
    if !is_shared(contender) {
        return ahead.just_ahead;
    }
    match ahead.exclusive {
        None => None,
        Some((at, exclusive)) if at == ahead.head && exclusive.sequence == contender.sequence => {
            None
        }
        Some((at, _)) => Some(at),
    }
}

/// Every contender the one at `at` waits on, given `named`, the one
/// [`waits_on`] names, as a range of places in a queue whose modes are
/// `modes`: the one named, or, for an exclusive waiter just behind a run
/// of shared contenders, that whole run (a writer behind several readers
/// waits until all of them are gone, though it watches only the nearest).
pub(crate) fn blockers(modes: &[ContenderMode], at: usize, named: usize) -> std::ops::Range<usize> {
    let exclusive = modes.get(at) != Some(&ContenderMode::Shared);
    let mut start = named;
    if exclusive && named + 1 == at {
        while start > 0
            && modes[start] == ContenderMode::Shared
            && modes[start - 1] == ContenderMode::Shared
        {
            start -= 1;
        }
    }
    start..named + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const UUID: &str = "2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f";

    fn curator(kind: &str, seq: i32) -> String {
        format!("_c_{UUID}-{kind}{seq:010}")
    }

    fn holders(queue: &LockQueue) -> Vec<String> {
        queue.holders().map(|c| c.name.clone()).collect()
    }

    fn waits_on(queue: &LockQueue, name: &str) -> Option<String> {
        queue.standing_of(name).unwrap().1.map(|c| c.name.clone())
    }

    #[test]
    fn a_writer_behind_readers_is_blocked_by_all_of_them() {
        use ContenderMode::{Exclusive as X, Shared as S};
        let modes = [X, S, S, S, X, S, X];
        assert_eq!(
            blockers(&modes, 4, 3),
            1..4,
            "the writer waits on every reader"
        );
        assert_eq!(blockers(&modes, 5, 4), 4..5, "a reader waits on the writer");
        assert_eq!(blockers(&modes, 6, 5), 5..6, "behind one reader, that one");
        assert_eq!(blockers(&modes, 1, 0), 0..1);
        assert_eq!(blockers(&[S, S, X], 2, 1), 0..2, "readers at the head");
    }

    #[test]
    fn the_first_exclusive_contender_holds_and_each_waits_on_the_one_ahead() {
        let queue =
            LockQueue::from_children(["lock-0000000003", "lock-0000000001", "lock-0000000002"]);
        assert_eq!(holders(&queue), ["lock-0000000001"]);
        assert_eq!(
            waits_on(&queue, "lock-0000000002").as_deref(),
            Some("lock-0000000001")
        );
        assert_eq!(
            waits_on(&queue, "lock-0000000003").as_deref(),
            Some("lock-0000000002")
        );
        assert_eq!(queue.contenders().len() - holders(&queue).len(), 2);
    }

    #[test]
    fn readers_share_until_a_writer() {
        let r1 = curator("__READ__", 1);
        let r2 = curator("__READ__", 2);
        let w3 = curator("__WRIT__", 3);
        let r4 = curator("__READ__", 4);
        let r5 = curator("__READ__", 5);
        let w6 = curator("__WRIT__", 6);
        let queue = LockQueue::from_children([&r5, &w3, &r1, &w6, &r4, &r2].map(String::clone));
        assert_eq!(holders(&queue), [r1.clone(), r2.clone()]);
        // The writer waits on the reader just ahead of it.
        assert_eq!(waits_on(&queue, &w3), Some(r2.clone()));
        // Readers behind a writer wait on that writer, not on each other.
        assert_eq!(waits_on(&queue, &r4), Some(w3.clone()));
        assert_eq!(waits_on(&queue, &r5), Some(w3.clone()));
        assert_eq!(waits_on(&queue, &w6), Some(r5));
    }

    #[test]
    fn a_reader_never_waits_on_a_writer_queued_after_it() {
        let r1 = curator("__READ__", 1);
        let w2 = curator("__WRIT__", 2);
        let queue = LockQueue::from_children([w2.clone(), r1.clone()]);
        assert_eq!(holders(&queue), std::slice::from_ref(&r1));
        assert_eq!(waits_on(&queue, &w2), Some(r1));
    }

    #[test]
    fn a_writer_holds_alone() {
        let w1 = curator("__WRIT__", 1);
        let r2 = curator("__READ__", 2);
        let queue = LockQueue::from_children([r2.clone(), w1.clone()]);
        assert_eq!(holders(&queue), std::slice::from_ref(&w1));
        assert_eq!(waits_on(&queue, &r2), Some(w1));
    }

    #[test]
    fn a_downgraded_writer_holds_with_its_read_node_and_others_still_wait() {
        let other = "ffffffff-8a7b-4c3d-9e2f-1a2b3c4d5e6f";
        let w1 = curator("__WRIT__", 1);
        // The read node repeats the writer's sequence; its uuid sorts first.
        let r1 = format!(
            "_c_{}-__READ__{:010}",
            "00000000-0000-0000-0000-000000000000", 1
        );
        let r2 = format!("_c_{other}-__READ__{:010}", 2);
        let w3 = curator("__WRIT__", 3);
        let queue = LockQueue::from_children([r2.clone(), w3.clone(), r1.clone(), w1.clone()]);
        let order: Vec<&str> = queue.contenders().iter().map(|c| c.name.as_str()).collect();
        assert_eq!(order, [&w1, &r1, &r2, &w3]);
        assert_eq!(holders(&queue), [w1.clone(), r1.clone()]);
        assert_eq!(waits_on(&queue, &r2), Some(w1.clone()));
        assert_eq!(waits_on(&queue, &w3), Some(r2));
        // A reader of a later writer's sequence waits on that writer.
        let queue = LockQueue::from_children([w1.clone(), r1.clone(), w3.clone()]);
        assert_eq!(holders(&queue), [w1, r1]);
    }

    #[test]
    fn orders_by_signed_sequence_across_the_wrap() {
        let queue = LockQueue::from_children([
            "lock-2147483647",
            "lock--000000002",
            "lock--2147483648",
            "lock-0000000001",
        ]);
        let order: Vec<&str> = queue.contenders().iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            order,
            [
                "lock--2147483648",
                "lock--000000002",
                "lock-0000000001",
                "lock-2147483647"
            ]
        );
    }

    #[test]
    fn orders_by_sequence_not_by_name_across_dialects() {
        let kazoo = "0123456789abcdef0123456789abcdef__lock__0000000002";
        let hbase_read = "read-0000000003";
        let queue = LockQueue::from_children([
            hbase_read.to_owned(),
            kazoo.to_owned(),
            curator("lock-", 4),
            "x-72057594037927936-0000000001".to_owned(),
        ]);
        let dialects: Vec<Dialect> = queue.contenders().iter().map(|c| c.dialect).collect();
        assert_eq!(
            dialects,
            [
                Dialect::ZkRecipe,
                Dialect::Kazoo,
                Dialect::Hbase,
                Dialect::Curator
            ]
        );
        assert_eq!(holders(&queue), ["x-72057594037927936-0000000001"]);
        assert_eq!(waits_on(&queue, hbase_read).as_deref(), Some(kazoo));
    }

    #[test]
    fn ignores_foreign_children() {
        let queue = LockQueue::from_children(["leases", "config", "lock-0000000005", "readme"]);
        assert_eq!(holders(&queue), ["lock-0000000005"]);
        assert_eq!(queue.contenders().len(), 1);
        assert!(LockQueue::from_children(["leases", "locks"]).is_empty());
    }

    #[test]
    fn each_entry_names_the_contender_it_waits_on() {
        let queue = LockQueue::from_children(["lock-0000000002", "lock-0000000001"]);
        let pairs: Vec<(&str, Option<&str>)> = queue
            .entries()
            .map(|(c, s)| {
                (
                    c.name.as_str(),
                    queue.waiting_on(s).map(|o| o.name.as_str()),
                )
            })
            .collect();
        assert_eq!(
            pairs,
            [
                ("lock-0000000001", None),
                ("lock-0000000002", Some("lock-0000000001"))
            ]
        );
    }

    #[test]
    fn what_is_ahead_of_a_contender_and_striking_out_many_at_once() {
        let mut queue = LockQueue::from_children([
            "lock-0000000004",
            "lock-0000000001",
            "lock-0000000003",
            "lock-0000000002",
        ]);
        let ahead: Vec<&str> = queue
            .ahead_of("lock-0000000003")
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(ahead, ["lock-0000000001", "lock-0000000002"]);
        assert!(queue.ahead_of("lock-0000000001").is_empty());
        assert!(queue.ahead_of("lock-0000000009").is_empty());
        queue.retain(|c| c.sequence != 1 && c.sequence != 3);
        assert_eq!(holders(&queue), ["lock-0000000002"]);
        assert_eq!(
            waits_on(&queue, "lock-0000000004").as_deref(),
            Some("lock-0000000002")
        );
    }

    #[test]
    fn a_missing_name_has_no_standing() {
        let queue = LockQueue::from_children(["lock-0000000001"]);
        assert!(queue.standing_of("lock-0000000002").is_none());
        assert_eq!(
            queue.standing_of("lock-0000000001").unwrap().0,
            Standing::Holding
        );
    }
}
