//! One lock directory's live contenders, kept so that finding who begins to
//! hold costs time in the contenders that begin to, not in those that
//! already hold or still wait.
//!
//! Who holds is decided by the queue rules `lock` and `stat` use
//! (`lock::queue::waits_on`). Under them a contender holds or not by what
//! is ahead of it alone (the head, the one just ahead and the nearest
//! exclusive one), and those that hold make a run from the head. So a view
//! of the queue keeps its contenders, its exclusive ones and those it may
//! still let hold, each in queue order; after a change only the first of
//! the last kind are asked, up to the first that still waits. A shared
//! run of thousands of readers costs nothing more per transaction than a
//! queue of one.
//!
//! Once a contender holds it holds until it ends: its library told its
//! client so and does not ask again. A node made ahead of it later (which
//! no library makes, but a wrapped counter or a hand-made name can) does
//! not unmake that hold; it may hold beside it, and that is an overlap.
//!
//! There are two kinds of view: zklock's joint rules over every dialect's
//! contenders, and, where dialects share the directory, each library's own
//! rules over its own dialect's contenders, of which only those not made
//! by zklock hold by them (see `overlap`). A directory of one dialect (as
//! nearly all are) keeps only the first.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use super::Live;
use crate::history::overlap::{self, Holder};
use crate::lock::Dialect;
use crate::lock::queue::{self, Ahead, QueueEntry};

/// When a contender that the rules now let hold began to.
#[derive(Clone, Copy, Debug)]
pub(super) enum At {
    /// At this time: the transaction that let it.
    Time(i64),
    /// At its creation: the snapshot the replay starts from cannot tell
    /// when a waiter became a holder.
    Creation,
}

/// An ordering of a queue's contenders: what the rules ask of it.
trait Order {
    fn head(&self) -> Option<&QueueEntry>;
    /// The contender just ahead of `entry`.
    fn before(&self, entry: &QueueEntry) -> Option<&QueueEntry>;
}

impl Order for BTreeSet<Rc<QueueEntry>> {
    fn head(&self) -> Option<&QueueEntry> {
        self.first().map(|entry| &**entry)
    }

    fn before(&self, entry: &QueueEntry) -> Option<&QueueEntry> {
        self.range::<QueueEntry, _>(..entry)
            .next_back()
            .map(|entry| &**entry)
    }
}

impl Order for BTreeMap<Rc<QueueEntry>, Live> {
    fn head(&self) -> Option<&QueueEntry> {
        self.first_key_value().map(|(entry, _)| &**entry)
    }

    fn before(&self, entry: &QueueEntry) -> Option<&QueueEntry> {
        self.range::<QueueEntry, _>(..entry)
            .next_back()
            .map(|(entry, _)| &**entry)
    }
}

/// What a view's rules ask of its contenders, besides their order: the
/// exclusive ones, and those the view may still let hold.
#[derive(Debug, Default)]
struct Rules {
    exclusive: BTreeSet<Rc<QueueEntry>>,
    waiting: BTreeSet<Rc<QueueEntry>>,
}

impl Rules {
    fn insert(&mut self, entry: &Rc<QueueEntry>, may_hold: bool) {
        if !queue::is_shared(entry) {
            self.exclusive.insert(entry.clone());
        }
        if may_hold {
            self.waiting.insert(entry.clone());
        }
    }

    fn remove(&mut self, entry: &QueueEntry) {
        self.exclusive.remove(entry);
        self.waiting.remove(entry);
    }

    /// The first contender the view (in `order`) may still let hold, when
    /// its rules let it hold now.
    fn next_holder(&self, order: &impl Order) -> Option<Rc<QueueEntry>> {
        let first = self.waiting.first()?;
        let ahead = Ahead {
            just_ahead: order.before(first),
            exclusive: self
                .exclusive
                .range::<QueueEntry, _>(..&**first)
                .next_back()
                .map(|e| (&**e, &**e)),
            head: order.head()?,
        };
        queue::waits_on(first, ahead)
            .is_none()
            .then(|| first.clone())
    }
}

/// One dialect's own view of a queue: its contenders, in order, and its
/// rules.
#[derive(Debug, Default)]
struct Own {
    all: BTreeSet<Rc<QueueEntry>>,
    rules: Rules,
}

impl Own {
    fn insert(&mut self, entry: &Rc<QueueEntry>, may_hold: bool) {
        self.all.insert(entry.clone());
        self.rules.insert(entry, may_hold);
    }

    fn next_holder(&self) -> Option<Rc<QueueEntry>> {
        self.rules.next_holder(&self.all)
    }
}

/// Who holds a queue now, counted so that an overlap is known in constant
/// time and named in time bounded by how many it names.
#[derive(Debug, Default)]
pub(super) struct Holders {
    in_order: BTreeSet<Rc<QueueEntry>>,
    exclusive: BTreeSet<Rc<QueueEntry>>,
    /// Each holder under its session, in one set ordered by session (a
    /// set of each session's would cost a tree node for each of the many
    /// sessions that hold once); `None` stands below a session's holders.
    by_session: BTreeSet<(i64, Option<Rc<QueueEntry>>)>,
    /// Set when one began or ended, until [`Holders::take_change`].
    changed: bool,
}

impl Holders {
    fn add(&mut self, entry: &Rc<QueueEntry>, session: i64) {
        self.in_order.insert(entry.clone());
        if !queue::is_shared(entry) {
            self.exclusive.insert(entry.clone());
        }
        self.by_session.insert((session, Some(entry.clone())));
        self.changed = true;
    }

    fn remove(&mut self, entry: &Rc<QueueEntry>, session: i64) {
        self.in_order.remove(&**entry);
        self.exclusive.remove(&**entry);
        self.by_session.remove(&(session, Some(entry.clone())));
        self.changed = true;
    }

    /// True when two sessions hold, one of them exclusively. (One session
    /// holding twice is a Curator writer's downgrade, or re-entry.)
    pub(super) fn conflict(&self) -> bool {
        let session = |held: Option<&(i64, _)>| held.map(|(session, _)| *session);
        !self.exclusive.is_empty()
            && session(self.by_session.first()) != session(self.by_session.last())
    }

    /// True when the holders changed since this was last asked.
    pub(super) fn take_change(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// How many hold.
    pub(super) fn count(&self) -> usize {
        self.in_order.len()
    }

    /// The contender `session` holds, the first in queue order.
    pub(super) fn of_session(&self, session: i64) -> Option<&Rc<QueueEntry>> {
        let (holder, entry) = self.by_session.range((session, None)..).next()?;
        entry.as_ref().filter(|_| *holder == session)
    }
}

/// A lock directory's live contenders and the views that rule them.
#[derive(Debug, Default)]
pub(super) struct Queue {
    contenders: BTreeMap<Rc<QueueEntry>, Live>,
    /// zklock's joint rules, over `contenders`.
    joint: Rules,
    /// The one dialect of every contender so far, until a second comes.
    dialect: Option<Dialect>,
    /// Each dialect's own view, once the directory has had two; kept until
    /// the queue empties, so that a dialect coming and going again makes
    /// them once.
    own: Option<BTreeMap<Dialect, Own>>,
    holders: Holders,
}

impl Queue {
    /// Adds `live` as the contender `entry`, kept once for every place
    /// that names it; `None` when the queue has it already (a transaction
    /// the snapshot already shows).
    pub(super) fn join(&mut self, entry: QueueEntry, live: Live) -> Option<Rc<QueueEntry>> {
        if self.contenders.contains_key(&entry) {
            return None;
        }
        let entry = Rc::new(entry);
        self.joint.insert(&entry, true);
        let by_own_rules = live.who.owner().is_none();
        self.contenders.insert(entry.clone(), live);
        match (&mut self.own, self.dialect) {
            (Some(own), _) => own
                .entry(entry.dialect)
                .or_default()
                .insert(&entry, by_own_rules),
            (None, Some(dialect)) if dialect != entry.dialect => self.own = Some(self.own_views()),
            (None, _) => self.dialect = Some(entry.dialect),
        }
        Some(entry)
    }

    /// Each dialect's own view of the contenders now.
    fn own_views(&self) -> BTreeMap<Dialect, Own> {
        let mut own: BTreeMap<Dialect, Own> = BTreeMap::new();
        for (entry, live) in &self.contenders {
            let may_hold = live.who.owner().is_none() && live.holding_ms.is_none();
            own.entry(entry.dialect)
                .or_default()
                .insert(entry, may_hold);
        }
        own
    }

    /// Takes the contender `entry` out.
    pub(super) fn take(&mut self, entry: &QueueEntry) -> Option<(Rc<QueueEntry>, Live)> {
        let (entry, live) = self.contenders.remove_entry(entry)?;
        self.joint.remove(&entry);
        if let Some(own) = &mut self.own
            && let Some(view) = own.get_mut(&entry.dialect)
        {
            view.all.remove(&*entry);
            view.rules.remove(&entry);
            if view.all.is_empty() {
                own.remove(&entry.dialect);
            }
        }
        if live.holding_ms.is_some() {
            self.holders.remove(&entry, live.session);
        }
        Some((entry, live))
    }

    /// True once no contender is left.
    pub(super) fn is_empty(&self) -> bool {
        self.contenders.is_empty()
    }

    /// Marks the contenders the rules now let hold: zklock's joint rules,
    /// and where dialects share the directory, each library's own.
    pub(super) fn settle(&mut self, at: At) {
        while let Some(entry) = self.joint.next_holder(&self.contenders) {
            self.mark(&entry, at);
        }
        let dialects: Vec<Dialect> = match &self.own {
            Some(own) if own.len() > 1 => own.keys().copied().collect(),
            _ => return,
        };
        for dialect in dialects {
            while let Some(entry) = self
                .own
                .as_ref()
                .and_then(|own| own.get(&dialect))
                .and_then(Own::next_holder)
            {
                self.mark(&entry, at);
            }
        }
    }

    fn mark(&mut self, entry: &Rc<QueueEntry>, at: At) {
        self.joint.waiting.remove(&**entry);
        if let Some(view) = self
            .own
            .as_mut()
            .and_then(|own| own.get_mut(&entry.dialect))
        {
            view.rules.waiting.remove(&**entry);
        }
        let Some(live) = self.contenders.get_mut(&**entry) else {
            return;
        };
        if live.holding_ms.is_none() {
            live.holding_ms = Some(match at {
                At::Time(ms) => ms,
                At::Creation => live.created_ms,
            });
            self.holders.add(entry, live.session);
        }
    }

    pub(super) fn holders(&self) -> &Holders {
        &self.holders
    }

    pub(super) fn holders_mut(&mut self) -> &mut Holders {
        &mut self.holders
    }

    /// The contender `entry`, while it lives.
    pub(super) fn get(&self, entry: &QueueEntry) -> Option<&Live> {
        self.contenders.get(entry)
    }

    /// The holders to name in an overlap: the first [`overlap::SHOWN`] in
    /// queue order, and the first as many exclusive ones (an overlap's
    /// cause), in queue order.
    pub(super) fn shown(&self) -> Vec<Holder> {
        let mut shown: Vec<&Rc<QueueEntry>> = (self.holders.in_order.iter().take(overlap::SHOWN))
            .chain(self.holders.exclusive.iter().take(overlap::SHOWN))
            .collect();
        shown.sort();
        shown.dedup();
        shown
            .into_iter()
            .filter_map(|entry| {
                let live = self.contenders.get(&**entry)?;
                Some(Holder {
                    node: entry.name.clone(),
                    dialect: entry.dialect,
                    mode: entry.mode(),
                    session: live.session,
                    fence: live.fence,
                })
            })
            .collect()
    }

    /// The latest creation among those that hold.
    pub(super) fn last_holder_created(&self) -> Option<i64> {
        self.holders
            .in_order
            .iter()
            .filter_map(|entry| self.contenders.get(&**entry))
            .map(|live| live.created_ms)
            .max()
    }

    /// Every contender, in queue order.
    pub(super) fn into_contenders(self) -> impl Iterator<Item = (Rc<QueueEntry>, Live)> {
        self.contenders.into_iter()
    }
}
