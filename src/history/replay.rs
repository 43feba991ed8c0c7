//! Transactions replayed into holds: every contender of every lock
//! directory from its create to its end, when it began to hold, and how it
//! ended.
//!
//! Who holds is decided by the queue rules `lock` and `stat` use, asked
//! after each transaction about the directories it touched (see `queue`,
//! which asks only about the contenders that may begin to hold). A
//! contender that the rules let hold begins to at that transaction's time.
//! Where libraries of different dialects share a directory, each contender
//! holds by its own library's rules instead (see `overlap`), and two
//! holders at once are an overlap.
//!
//! Only live contenders are kept, each small (see `kept`), once in its
//! directory's queue and once under its session: memory follows the
//! contenders alive at one time, however long the log. Every step of a
//! transaction costs time in the logarithm of the live contenders at most,
//! whatever they are (thousands of readers sharing a lock, leases waiting
//! on one holder, a multi ending thousands at once), so the replay's time
//! follows the log's length. A contender is handed out as it ends, and
//! those still alive when the log ends at [`Replay::finish`].

mod leases;
mod queue;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

use leases::Leases;
use queue::{At, Queue};

use super::ends::{self, Recorded};
use super::kept::{self, Who};
use super::overlap::{Overlap, Overlaps};
use super::stats::LockSummary;
use super::txnlog::{Create, Multi, Op, Txn};
use crate::lock::end::Ender;
use crate::lock::node;
use crate::lock::queue::QueueEntry;
use crate::lock::{ContenderMode, Dialect};
use crate::zk::{self, path};

/// Which lock directories are replayed: one, or every one below a path.
#[derive(Clone, Debug)]
pub(crate) struct Scope {
    /// The absolute path of the lock, or of the subtree.
    pub path: String,
}

impl Scope {
    /// True for `dir` itself and every directory below it, and for the
    /// internal lock kazoo keeps beside a semaphore at the path.
    fn covers(&self, dir: &str) -> bool {
        path::is_at_or_below(dir, &self.path)
            || dir
                .strip_suffix(crate::lock::semaphore::KAZOO_LOCK_SUFFIX)
                .is_some_and(|semaphore| semaphore == self.path)
    }
}

/// The span of time whose holds are shown: those alive at any moment of it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Window {
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
}

impl Window {
    /// True when a contender alive from `from_ms` to `to_ms` (`None`:
    /// still alive) was alive within the window.
    fn overlaps(&self, from_ms: i64, to_ms: Option<i64>) -> bool {
        let after_since = match (self.since_ms, to_ms) {
            (Some(since), Some(to)) => to >= since,
            _ => true,
        };
        after_since && self.until_ms.is_none_or(|until| from_ms <= until)
    }

    /// True when a transaction at `time_ms` comes after the window.
    pub(crate) fn is_past(&self, time_ms: i64) -> bool {
        self.until_ms.is_some_and(|until| time_ms > until)
    }
}

/// How a contender ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum How {
    /// Deleted by its own session after it held (or an end record says so).
    Released,
    /// Deleted by its own session before it ever held.
    GaveUp,
    /// zklock ended its hold at `--max-hold`, as its end record says.
    MaxHold,
    /// zklock lost its hold (its command was stopped) and deleted its
    /// node, as its end record says.
    Lost,
    /// Its session was closed by its client.
    ClosedByClient,
    /// Its session was closed by the server: it expired.
    Expired,
    /// Deleted by another session.
    Broken,
    /// Deleted by `zklock reap`, as its end record says.
    Reaped,
    /// Removed by the server when its TTL ran out.
    TtlExpired,
}

impl How {
    /// The stable word used in JSON.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            How::Released => "released",
            How::GaveUp => "gave_up",
            How::MaxHold => "max_hold",
            How::Lost => "lost",
            How::ClosedByClient => "closed_by_client",
            How::Expired => "expired",
            How::Broken => "broken",
            How::Reaped => "reaped",
            How::TtlExpired => "ttl_expired",
        }
    }

    /// Released or given up by its own holder: nothing went wrong.
    pub(crate) fn is_clean(self) -> bool {
        matches!(self, How::Released | How::GaveUp)
    }

    /// What an end record's `how` says; `None` for a word not known here
    /// (the record then counts for nothing).
    pub(super) fn recorded(word: &str) -> Option<How> {
        Some(match word {
            "released" => How::Released,
            "gave_up" => How::GaveUp,
            "max_hold" => How::MaxHold,
            "lost" => How::Lost,
            "broken" => How::Broken,
            "reaped" => How::Reaped,
            _ => return None,
        })
    }
}

/// A contender's end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct End {
    pub at_ms: i64,
    /// The transaction that ended it.
    pub zxid: i64,
    pub how: How,
    /// The session that deleted it, when not its own.
    pub by_session: Option<i64>,
    /// Who ran the zklock that ended it, from its end record.
    pub breaker: Option<Ender>,
    /// The reason its end record gives.
    pub reason: Option<String>,
}

/// One contender's life in a lock: a hold, or a wait that never held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Hold {
    /// The lock directory (see `kept` for the longest paths).
    pub lock: String,
    /// The node's name in it.
    pub node: String,
    pub dialect: Dialect,
    pub mode: ContenderMode,
    /// Its owner session; for a node no session owns, the one that made it.
    pub session: i64,
    /// The fencing token: the zxid that created it.
    pub fence: i64,
    /// Whose it is, as the data it was created with says.
    pub who: Who,
    pub created_ms: i64,
    /// When the queue rules first let it hold; `None` if they never did.
    pub holding_ms: Option<i64>,
    /// `None` while it was still alive where the replay stopped.
    pub end: Option<End>,
}

impl Hold {
    /// How long it waited: until it held, or until it ended without;
    /// `None` also when times from the log are too far apart to count.
    pub(crate) fn waited_ms(&self) -> Option<i64> {
        let until = self.holding_ms.or(self.end.as_ref().map(|end| end.at_ms))?;
        until.checked_sub(self.created_ms)
    }

    /// How long it held, once its hold ended.
    pub(crate) fn held_ms(&self) -> Option<i64> {
        self.end.as_ref()?.at_ms.checked_sub(self.holding_ms?)
    }
}

/// What the replay hands out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// A contender, once it ended (or where the replay stopped).
    Hold(Hold),
    /// Two holders at once, once their span ended; only when asked for.
    Overlap(Overlap),
}

/// A live contender, or lease: small, whatever its node held.
#[derive(Debug)]
struct Live {
    session: i64,
    ephemeral: bool,
    fence: i64,
    created_ms: i64,
    who: Who,
    holding_ms: Option<i64>,
}

impl Live {
    /// A contender created by `create` in `txn` (or seen in a snapshot with
    /// `stat`), owned by `session`.
    fn new(dialect: Dialect, data: &[u8], stat: &zk::Stat, session: i64) -> Live {
        Live {
            session,
            ephemeral: stat.ephemeral_owner != 0,
            fence: stat.czxid,
            created_ms: stat.ctime,
            who: Who::of(dialect, data, session),
            holding_ms: None,
        }
    }

    /// The hold this life makes as `node` of `lock`.
    fn into_hold(
        self,
        lock: String,
        node: String,
        dialect: Dialect,
        mode: ContenderMode,
        end: Option<End>,
    ) -> Hold {
        Hold {
            lock,
            node,
            dialect,
            mode,
            session: self.session,
            fence: self.fence,
            who: self.who,
            created_ms: self.created_ms,
            holding_ms: self.holding_ms,
            end,
        }
    }
}

/// What a session owns that its close ends: a queue's contender, by its
/// lock directory, or a semaphore's lease, by its semaphore and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Owned {
    Contender(Rc<str>, Rc<QueueEntry>),
    Lease(Rc<str>, Rc<str>),
}

/// What each session owns, in one set ordered by session: a set of each
/// session's would cost a tree node for each of the many sessions that own
/// one contender. `None` stands below a session's own.
#[derive(Debug, Default)]
struct Sessions(BTreeSet<(i64, Option<Owned>)>);

impl Sessions {
    fn add(&mut self, session: i64, owned: Owned) {
        self.0.insert((session, Some(owned)));
    }

    fn remove(&mut self, session: i64, owned: Owned) {
        self.0.remove(&(session, Some(owned)));
    }

    /// Takes out everything `session` owns.
    fn close(&mut self, session: i64) -> Vec<Owned> {
        let owned: Vec<Owned> = self
            .0
            .range((session, None)..)
            .take_while(|(owner, _)| *owner == session)
            .filter_map(|(_, owned)| owned.clone())
            .collect();
        for one in &owned {
            self.0.remove(&(session, Some(one.clone())));
        }
        owned
    }
}

/// A contender or lease that a transaction ended: its end is known once
/// the whole transaction was read, with any end record a multi wrote.
struct Ended {
    /// The lock directory, or the semaphore.
    lock: Rc<str>,
    node: Node,
    live: Live,
    cause: Cause,
    /// The end record that names it, of those the transaction wrote.
    record: Option<usize>,
}

/// What an ended node was.
enum Node {
    Contender(Rc<QueueEntry>),
    /// A lease, by name.
    Lease(Rc<str>, Dialect),
}

impl Node {
    fn name(&self) -> &str {
        match self {
            Node::Contender(entry) => &entry.name,
            Node::Lease(name, _) => name,
        }
    }
}

/// What ended it.
enum Cause {
    /// A delete, by the server or a session; an end record would be in
    /// `dir`, the node's directory.
    Deleted { dir: Rc<str>, by_server: bool },
    /// Its session's close.
    Closed(How),
}

impl Ended {
    /// The contender `entry` of `lock`, ended by `cause`.
    fn of(lock: Rc<str>, entry: Rc<QueueEntry>, live: Live, cause: Cause) -> Ended {
        Ended {
            lock,
            node: Node::Contender(entry),
            live,
            cause,
            record: None,
        }
    }

    /// The hold it was, ended in `txn`, whose end records are `records`.
    fn into_hold(self, txn: &Txn<'_>, records: &[Recorded]) -> Hold {
        let end = match &self.cause {
            Cause::Deleted { by_server, .. } => deleted(
                txn,
                *by_server,
                &self.live,
                self.record.and_then(|i| records.get(i)),
            ),
            Cause::Closed(how) => End {
                at_ms: txn.time_ms,
                zxid: txn.zxid,
                how: *how,
                by_session: None,
                breaker: None,
                reason: None,
            },
        };
        let (dialect, mode) = match &self.node {
            Node::Contender(entry) => (entry.dialect, entry.mode()),
            Node::Lease(_, dialect) => (*dialect, ContenderMode::Lease),
        };
        let node = self.node.name().to_owned();
        self.live
            .into_hold(self.lock.to_string(), node, dialect, mode, Some(end))
    }
}

/// What one transaction did, gathered as its operations are applied.
#[derive(Default)]
struct Step {
    ended: Vec<Ended>,
    /// The lock directories whose contenders changed.
    touched: BTreeSet<Rc<str>>,
}

/// The replay's state: every live contender, by directory and by session.
#[derive(Debug)]
pub(crate) struct Replay {
    scope: Scope,
    window: Window,
    /// Each lock directory with a live contender.
    queues: HashMap<Rc<str>, Queue>,
    /// Each session's live ephemeral contenders and leases.
    sessions: Sessions,
    summaries: BTreeMap<String, LockSummary>,
    /// The overlaps in progress, when they are asked for.
    overlaps: Option<Overlaps>,
    /// The last transaction applied: logs that overlap are read once.
    last_zxid: i64,
    /// Semaphore leases, which are no queue's contenders.
    leases: Leases,
}

impl Replay {
    /// A replay of `scope` within `window`; it hands out overlaps when
    /// `overlaps` says so.
    pub(crate) fn new(scope: Scope, window: Window, overlaps: bool) -> Replay {
        Replay {
            scope,
            window,
            queues: HashMap::new(),
            sessions: Sessions::default(),
            summaries: BTreeMap::new(),
            overlaps: overlaps.then(Overlaps::default),
            last_zxid: i64::MIN,
            leases: Leases::new(overlaps),
        }
    }

    /// Applies one transaction; each contender it ends goes to `emit`.
    pub(crate) fn apply(&mut self, txn: &Txn<'_>, emit: &mut impl FnMut(Found)) {
        if txn.zxid <= self.last_zxid {
            return;
        }
        self.last_zxid = txn.zxid;
        let mut step = Step::default();
        let records = match &txn.op {
            Op::Multi(multi) => {
                for op in multi.ops() {
                    self.apply_op(txn, &op, &mut step);
                }
                read_records(multi, &mut step.ended)
            }
            Op::CloseSession => {
                self.close_session(txn, &mut step);
                Vec::new()
            }
            op => {
                self.apply_op(txn, op, &mut step);
                Vec::new()
            }
        };
        for ended in std::mem::take(&mut step.ended) {
            let hold = ended.into_hold(txn, &records);
            self.hand_out(hold, emit);
        }
        for dir in step.touched {
            if let Some(queue) = self.queues.get_mut(&dir) {
                queue.settle(At::Time(txn.time_ms));
            }
            self.watch_overlaps(&dir, (txn.zxid, txn.time_ms), emit);
        }
        self.settle_leases(txn, emit);
    }

    fn apply_op(&mut self, txn: &Txn<'_>, op: &Op<'_>, step: &mut Step) {
        match op {
            Op::Create(create) => {
                if !self.create_lease(txn, create) {
                    self.note_create(create);
                    self.create(txn, create, step);
                }
            }
            Op::Delete { path, by_server } => {
                self.leases.forget(path);
                if let Some(ended) = self.delete_lease(path, *by_server) {
                    step.ended.push(ended);
                    return;
                }
                self.delete(txn, path, *by_server, step);
            }
            Op::SetData { path, data } => self.note_data(path, data),
            Op::CreateSession | Op::CloseSession | Op::Multi(_) | Op::Other => {}
        }
    }

    /// A created node joins its directory's queue when it is a contender
    /// by the rule `ls` and `stat` use (see `lock::node`).
    fn create(&mut self, txn: &Txn<'_>, create: &Create<'_>, step: &mut Step) {
        let owner = if create.ephemeral { txn.session } else { 0 };
        let stat = zk::Stat {
            czxid: txn.zxid,
            mzxid: txn.zxid,
            pzxid: txn.zxid,
            ctime: txn.time_ms,
            mtime: txn.time_ms,
            version: 0,
            cversion: 0,
            aversion: 0,
            ephemeral_owner: owner,
            data_length: i32::try_from(create.data.len()).unwrap_or(i32::MAX),
            num_children: 0,
        };
        if let Some(dir) = self.join(&create.path, create.data, &stat, txn.session) {
            step.touched.insert(dir);
        }
    }

    /// A delete of a queue's contender ends it.
    fn delete(&mut self, txn: &Txn<'_>, full: &str, by_server: bool, step: &mut Step) {
        let Some((dir, name)) = self.split(full) else {
            return;
        };
        let Some(entry) = entry(name) else {
            return;
        };
        let dir = kept::name(dir);
        let Some((dir, entry, live)) = self.take(&dir, &entry, txn.time_ms) else {
            return;
        };
        let cause = Cause::Deleted {
            dir: dir.clone(),
            by_server,
        };
        step.ended.push(Ended::of(dir.clone(), entry, live, cause));
        step.touched.insert(dir);
    }

    /// A node of the snapshot the replay starts from joins its queue, or
    /// its semaphore's leases, as a create would; the creating session of a
    /// persistent node is not in a snapshot and reads as 0.
    pub(crate) fn seed(&mut self, path: &str, data: &[u8], stat: &zk::Stat) {
        if stat.ephemeral_owner == 0 {
            // A maximum a kazoo semaphore keeps, as a create's is noted.
            self.note_data(path, data);
        }
        if !self.seed_lease(path, data, stat) {
            self.join(path, data, stat, stat.ephemeral_owner);
        }
    }

    /// Once the snapshot is read: who holds in each queue, from its node's
    /// creation (the snapshot cannot tell when a waiter became a holder),
    /// and the transactions up to the snapshot's `zxid` taken as applied.
    pub(crate) fn seeded(&mut self, zxid: i64) {
        let mut dirs: Vec<Rc<str>> = self.queues.keys().cloned().collect();
        dirs.sort();
        for dir in dirs {
            let Some(queue) = self.queues.get_mut(&dir) else {
                continue;
            };
            queue.settle(At::Creation);
            let from_ms = queue.last_holder_created().unwrap_or(i64::MIN);
            self.watch_overlaps(&dir, (zxid, from_ms), &mut |_| {});
        }
        self.last_zxid = self.last_zxid.max(zxid);
    }

    /// Puts the node at `full` in its directory's queue when it is a
    /// contender in scope, owned by `session`; its directory, when it
    /// joined. A node already there (a transaction the snapshot already
    /// shows) is left as it is.
    fn join(&mut self, full: &str, data: &[u8], stat: &zk::Stat, session: i64) -> Option<Rc<str>> {
        let (dir, name) = self.split(full)?;
        let entry = entry(name)?;
        let live = Live::new(entry.dialect, data, stat, session);
        if !node::is_contender_by_stat(entry.dialect, stat) && live.who.owner().is_none() {
            return None;
        }
        let dir = self.queue_dir(&kept::name(dir));
        let ephemeral = live.ephemeral;
        let entry = self
            .queues
            .entry(dir.clone())
            .or_default()
            .join(entry, live)?;
        if ephemeral {
            self.sessions
                .add(session, Owned::Contender(dir.clone(), entry));
        }
        Some(dir)
    }

    /// The key of the queue of `dir`, shared by everything kept of it.
    fn queue_dir(&self, dir: &str) -> Rc<str> {
        self.queues
            .get_key_value(dir)
            .map_or_else(|| Rc::from(dir), |(key, _)| key.clone())
    }

    /// A session's close ends every ephemeral contender it still had: by
    /// the server (cxid 0: it expired) or by its client.
    fn close_session(&mut self, txn: &Txn<'_>, step: &mut Step) {
        let owned = self.sessions.close(txn.session);
        let how = if txn.cxid == 0 {
            How::Expired
        } else {
            How::ClosedByClient
        };
        for owned in owned {
            let ended = match owned {
                Owned::Lease(semaphore, name) => {
                    self.take_lease(&semaphore, &name, Cause::Closed(how))
                }
                Owned::Contender(dir, entry) => {
                    self.take(&dir, &entry, txn.time_ms)
                        .map(|(dir, entry, live)| {
                            step.touched.insert(dir.clone());
                            Ended::of(dir, entry, live, Cause::Closed(how))
                        })
                }
            };
            step.ended.extend(ended);
        }
    }

    /// The directory and name of `path`, when the directory is in scope.
    fn split<'p>(&self, full: &'p str) -> Option<(&'p str, &'p str)> {
        split(full).filter(|(dir, _)| self.scope.covers(dir))
    }

    /// Takes the contender `entry` out of `dir`'s queue and its session's
    /// set, at `at_ms`, letting the leases that waited for it hold.
    fn take(
        &mut self,
        dir: &str,
        entry: &QueueEntry,
        at_ms: i64,
    ) -> Option<(Rc<str>, Rc<QueueEntry>, Live)> {
        let dir = self.queues.get_key_value(dir)?.0.clone();
        let queue = self.queues.get_mut(&dir)?;
        let (entry, live) = queue.take(entry)?;
        if queue.is_empty() {
            self.queues.remove(&dir);
        }
        if live.ephemeral {
            self.sessions
                .remove(live.session, Owned::Contender(dir.clone(), entry.clone()));
        }
        self.leases.release_waiting_on(&dir, &entry, at_ms);
        Some((dir, entry, live))
    }

    /// Ends `dir`'s overlap when its holders changed, handing it out, and
    /// begins one when they now conflict.
    fn watch_overlaps(&mut self, dir: &str, at: (i64, i64), emit: &mut impl FnMut(Found)) {
        let Some(overlaps) = &mut self.overlaps else {
            return;
        };
        let ended = match self.queues.get_mut(dir) {
            Some(queue) => {
                if !queue.holders_mut().take_change() {
                    return;
                }
                let holders = queue.holders();
                overlaps.changed(dir, holders.conflict(), at, holders.count(), || {
                    queue.shown()
                })
            }
            None => overlaps.changed(dir, false, at, 0, Vec::new),
        };
        if let Some(ended) = ended
            && self.window.overlaps(ended.from_ms, ended.until_ms)
        {
            emit(Found::Overlap(ended));
        }
    }

    /// Hands a contender or lease out, when its life falls in the window,
    /// and counts it in its lock's summary.
    fn hand_out(&mut self, hold: Hold, emit: &mut impl FnMut(Found)) {
        if !self
            .window
            .overlaps(hold.created_ms, hold.end.as_ref().map(|end| end.at_ms))
        {
            return;
        }
        match self.summaries.get_mut(&hold.lock) {
            Some(summary) => summary.count(&hold),
            None => {
                let mut summary = LockSummary::default();
                summary.count(&hold);
                self.summaries.insert(hold.lock.clone(), summary);
            }
        }
        emit(Found::Hold(hold));
    }

    /// Hands out every contender still alive, lock by lock in queue order,
    /// and returns each lock's summary.
    pub(crate) fn finish(mut self, emit: &mut impl FnMut(Found)) -> Vec<(String, LockSummary)> {
        let mut locks: Vec<Rc<str>> = self.queues.keys().cloned().collect();
        locks.sort();
        for lock in locks {
            let queue = self.queues.remove(&lock).unwrap_or_default();
            for (entry, live) in queue.into_contenders() {
                let (dialect, mode) = (entry.dialect, entry.mode());
                let hold =
                    live.into_hold(lock.to_string(), entry.name.clone(), dialect, mode, None);
                self.hand_out(hold, emit);
            }
        }
        self.finish_leases(emit);
        for open in self.overlaps.take().into_iter().flat_map(Overlaps::finish) {
            if self.window.overlaps(open.from_ms, None) {
                emit(Found::Overlap(open));
            }
        }
        self.summaries.into_iter().collect()
    }
}

/// The directory and name of a node's path.
fn split(full: &str) -> Option<(&str, &str)> {
    Some((path::parent(full)?, path::basename(full)))
}

/// The contender a child named `name` is, with its name as kept.
fn entry(name: &str) -> Option<QueueEntry> {
    let mut entry = QueueEntry::parse(name)?;
    if let std::borrow::Cow::Owned(kept) = kept::name(name) {
        entry.name = kept;
    }
    Some(entry)
}

/// Reads the end records `multi` writes beside its deletes, giving each of
/// `ended` the first that names it (in its directory, with its session);
/// returns them. Only the nodes the multi ended are looked for, so a record
/// naming thousands of others costs the time to read it and nothing more.
fn read_records(multi: &Multi<'_>, ended: &mut [Ended]) -> Vec<Recorded> {
    let writes_record = || {
        multi
            .ops()
            .any(|op| matches!(op, Op::SetData { data, .. } if data.starts_with(b"{")))
    };
    if ended.is_empty() || !writes_record() {
        return Vec::new();
    }
    // Each node ended once: a contender lives once in its directory.
    let deleted: HashMap<(&str, &str), usize> = ended
        .iter()
        .enumerate()
        .filter_map(|(i, one)| match &one.cause {
            Cause::Deleted { dir, .. } => Some(((&**dir, one.node.name()), i)),
            Cause::Closed(_) => None,
        })
        .collect();
    let mut records = Vec::new();
    let mut found: Vec<(usize, usize)> = Vec::new();
    for op in multi.ops() {
        let Op::SetData { path, data } = op else {
            continue;
        };
        let dir = kept::name(&path);
        let mut named = Vec::new();
        let Some(recorded) = ends::read(data, |node, session| {
            let node = kept::name(node);
            if let Some(&i) = deleted.get(&(&*dir, &*node))
                && zk::parse_session(session).ok() == Some(ended[i].live.session)
            {
                named.push(i);
            }
        }) else {
            continue;
        };
        found.extend(named.into_iter().map(|i| (i, records.len())));
        records.push(recorded);
    }
    for (i, record) in found {
        ended[i].record.get_or_insert(record);
    }
    records
}

/// How a delete of `live` in `txn` ended it: the server's removal of a TTL
/// node, what an end record in the same transaction says, or else by whom:
/// its own session (released, or gave up if it never held) or another
/// (broken).
fn deleted(txn: &Txn<'_>, by_server: bool, live: &Live, record: Option<&Recorded>) -> End {
    let own = txn.session == live.session;
    let plain = if by_server {
        How::TtlExpired
    } else if !own {
        How::Broken
    } else if live.holding_ms.is_some() {
        How::Released
    } else {
        How::GaveUp
    };
    End {
        at_ms: txn.time_ms,
        zxid: txn.zxid,
        how: record.map_or(plain, |record| record.how),
        by_session: (!own && !by_server).then_some(txn.session),
        breaker: record.map(|record| record.by.clone()),
        reason: record.and_then(|record| record.reason.clone()),
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::txnlog::Create;
    use crate::history::txnlog::tests::{delete_op, multi, multi_of, set_data_op};
    use std::borrow::Cow;

    const UUID: &str = "2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f";
    const A: i64 = 0x100;
    const B: i64 = 0x200;
    const C: i64 = 0x300;

    /// A replay of `/l` fed transactions one at a time, collecting what it
    /// hands out.
    pub(super) struct Feed {
        replay: Replay,
        zxid: i64,
        out: Vec<Hold>,
        overlaps: Vec<Overlap>,
    }

    impl Feed {
        pub(super) fn new() -> Feed {
            Feed::within(Scope { path: "/".into() }, Window::default())
        }

        fn within(scope: Scope, window: Window) -> Feed {
            Feed {
                replay: Replay::new(scope, window, false),
                zxid: 0,
                out: Vec::new(),
                overlaps: Vec::new(),
            }
        }

        pub(super) fn txn(&mut self, session: i64, cxid: i32, op: Op<'_>) {
            self.zxid += 1;
            let txn = Txn {
                session,
                cxid,
                zxid: self.zxid,
                time_ms: self.zxid * 1000,
                op,
            };
            let (out, overlaps) = (&mut self.out, &mut self.overlaps);
            self.replay
                .apply(&txn, &mut |found| sort(found, out, overlaps));
        }

        /// A multi of `ops`, each an operation's type and record.
        pub(super) fn multi(&mut self, session: i64, cxid: i32, ops: &[(i32, Vec<u8>)]) {
            let record = multi(ops);
            self.txn(session, cxid, multi_of(&record));
        }

        /// Seeds the replay with a snapshot of `nodes` (path, data, stat)
        /// taken at `zxid`; the transactions fed next come after it.
        pub(super) fn snapshot(&mut self, nodes: &[(&str, &[u8], zk::Stat)], zxid: i64) {
            for (path, data, stat) in nodes {
                self.replay.seed(path, data, stat);
            }
            self.replay.seeded(zxid);
            self.zxid = zxid;
        }

        fn create(&mut self, session: i64, name: &str) {
            self.txn(session, 1, create(&format!("/l/{name}"), b"", true));
        }

        fn delete(&mut self, session: i64, name: &str) {
            self.txn(session, 2, delete(name));
        }

        fn finish(self) -> Vec<Hold> {
            self.finish_all().0
        }

        pub(super) fn finish_all(mut self) -> (Vec<Hold>, Vec<Overlap>) {
            let (out, overlaps) = (&mut self.out, &mut self.overlaps);
            self.replay.finish(&mut |found| sort(found, out, overlaps));
            (self.out, self.overlaps)
        }

        pub(super) fn overlapping() -> Feed {
            let mut feed = Feed::new();
            feed.replay = Replay::new(Scope { path: "/".into() }, Window::default(), true);
            feed
        }
    }

    fn sort(found: Found, out: &mut Vec<Hold>, overlaps: &mut Vec<Overlap>) {
        match found {
            Found::Hold(hold) => out.push(hold),
            Found::Overlap(overlap) => overlaps.push(overlap),
        }
    }

    pub(super) fn create<'a>(path: &'a str, data: &'a [u8], ephemeral: bool) -> Op<'a> {
        Op::Create(Create {
            path: path.into(),
            data,
            ephemeral,
        })
    }

    fn delete(name: &str) -> Op<'static> {
        Op::Delete {
            path: Cow::Owned(format!("/l/{name}")),
            by_server: false,
        }
    }

    /// The delete of `name` in `/l`, as a multi's operation.
    fn deletes(name: &str) -> (i32, Vec<u8>) {
        delete_op(&format!("/l/{name}"))
    }

    /// An end record of `how` for `name` of session A, as a multi's
    /// operation.
    fn end_record(name: &str, how: &str) -> (i32, Vec<u8>) {
        let data = format!(
            r#"{{"zklock_end":{{"version":1,"nodes":[{{"node":"{name}","session":"0x100"}}],"how":"{how}","by":{{"user":"ops","host":"h","pid":7}},"reason":"stuck","ran":null}}}}"#
        );
        set_data_op("/l", data.as_bytes())
    }

    /// A contender's node, how it ended, when it began to hold, how long.
    type Seen<'a> = (&'a str, Option<How>, Option<i64>, Option<i64>);

    fn hows(holds: &[Hold]) -> Vec<Seen<'_>> {
        holds
            .iter()
            .map(|h| {
                (
                    h.node.as_str(),
                    h.end.as_ref().map(|e| e.how),
                    h.holding_ms,
                    h.held_ms(),
                )
            })
            .collect()
    }

    #[test]
    fn a_mutex_handed_on_by_release_expiry_client_close_and_a_break() {
        let mut feed = Feed::new();
        feed.create(A, "lock-0000000001"); // zxid 1
        feed.create(B, "lock-0000000002"); // 2
        feed.create(C, "lock-0000000003"); // 3
        feed.delete(A, "lock-0000000001"); // 4: released, B holds
        feed.txn(B, 0, Op::CloseSession); // 5: B expired, C holds
        feed.create(A, "lock-0000000004"); // 6
        feed.txn(C, 9, Op::CloseSession); // 7: C closed by its client
        feed.create(B, "lock-0000000005"); // 8
        // A's hold is broken by session B's zklock release, with a reason.
        feed.multi(
            B,
            3,
            &[
                end_record("lock-0000000004", "broken"),
                deletes("lock-0000000004"),
            ],
        ); // 9
        feed.delete(B, "lock-0000000005"); // 10: released
        let out = feed.finish();
        assert_eq!(
            hows(&out),
            [
                (
                    "lock-0000000001",
                    Some(How::Released),
                    Some(1000),
                    Some(3000)
                ),
                (
                    "lock-0000000002",
                    Some(How::Expired),
                    Some(4000),
                    Some(1000)
                ),
                (
                    "lock-0000000003",
                    Some(How::ClosedByClient),
                    Some(5000),
                    Some(2000)
                ),
                ("lock-0000000004", Some(How::Broken), Some(7000), Some(2000)),
                (
                    "lock-0000000005",
                    Some(How::Released),
                    Some(9000),
                    Some(1000)
                ),
            ]
        );
        let broken = out[3].end.as_ref().unwrap();
        assert_eq!(broken.by_session, Some(B));
        assert_eq!(broken.reason.as_deref(), Some("stuck"));
        assert_eq!(broken.breaker.as_ref().unwrap().summary(), "ops@h pid 7");
        assert_eq!(out[1].waited_ms(), Some(2000));
        assert_eq!(out[0].fence, 1);
    }

    #[test]
    fn a_waiter_that_leaves_gave_up_and_a_plain_delete_by_another_is_broken() {
        let mut feed = Feed::new();
        feed.create(A, "lock-0000000001");
        feed.create(B, "lock-0000000002");
        feed.delete(B, "lock-0000000002");
        feed.delete(C, "lock-0000000001");
        let out = feed.finish();
        assert_eq!(
            hows(&out),
            [
                ("lock-0000000002", Some(How::GaveUp), None, None),
                ("lock-0000000001", Some(How::Broken), Some(1000), Some(3000)),
            ]
        );
        assert_eq!(out[0].waited_ms(), Some(1000));
        assert_eq!(out[1].end.as_ref().unwrap().by_session, Some(C));
        assert_eq!(out[1].end.as_ref().unwrap().breaker, None);
    }

    #[test]
    fn readers_share_and_a_writer_waits_for_all_of_them() {
        let r = |seq: i32| format!("_c_{UUID}-__READ__{seq:010}");
        let w = |seq: i32| format!("_c_{UUID}-__WRIT__{seq:010}");
        let mut feed = Feed::new();
        feed.create(A, &r(1));
        feed.create(B, &r(2));
        feed.create(C, &w(3));
        feed.create(A, &r(4));
        feed.delete(A, &r(1));
        feed.delete(B, &r(2)); // 6: the writer holds
        feed.delete(C, &w(3)); // 7: the reader behind it holds
        let out = feed.finish();
        assert_eq!(
            hows(&out),
            [
                (r(1).as_str(), Some(How::Released), Some(1000), Some(4000)),
                (r(2).as_str(), Some(How::Released), Some(2000), Some(4000)),
                (w(3).as_str(), Some(How::Released), Some(6000), Some(1000)),
                (r(4).as_str(), None, Some(7000), None),
            ]
        );
        assert_eq!(out[3].mode, ContenderMode::Shared);
        assert_eq!(out[3].dialect, Dialect::Curator);
    }

    #[test]
    fn only_contenders_count_and_the_scope_and_window_filter() {
        let mut feed = Feed::within(
            Scope { path: "/l".into() },
            Window {
                since_ms: Some(3500),
                until_ms: None,
            },
        );
        // A persistent look-alike, a foreign child, a lock elsewhere.
        feed.txn(A, 1, create("/l/lock-0000000001", b"", false));
        feed.txn(A, 1, create("/l/config", b"", true));
        feed.txn(A, 1, create("/other/lock-0000000001", b"", true));
        feed.create(A, "lock-0000000002"); // 4
        feed.delete(A, "lock-0000000002"); // 5: ends after --since
        feed.create(A, "lock-0000000003"); // 6
        let out = feed.finish();
        let nodes: Vec<&str> = out.iter().map(|h| h.node.as_str()).collect();
        assert_eq!(nodes, ["lock-0000000002", "lock-0000000003"]);
        let mut early = Feed::within(
            Scope { path: "/".into() },
            Window {
                since_ms: Some(3500),
                until_ms: None,
            },
        );
        early.create(A, "lock-0000000001");
        early.delete(A, "lock-0000000001");
        assert!(early.finish().is_empty(), "a hold over before --since");
    }

    #[test]
    fn a_kazoo_persistent_lock_a_ttl_node_and_a_recorded_reap() {
        let kazoo = "0123456789abcdef0123456789abcdef__lock__0000000001";
        let mut feed = Feed::new();
        feed.txn(A, 1, create(&format!("/l/{kazoo}"), b"worker-1", false));
        feed.txn(
            0,
            0,
            Op::Delete {
                path: format!("/l/{kazoo}").into(),
                by_server: true,
            },
        );
        feed.create(A, "lock-0000000002");
        feed.multi(
            C,
            4,
            &[
                deletes("lock-0000000002"),
                end_record("lock-0000000002", "reaped"),
            ],
        );
        // A multi's setData of other data is no end record.
        feed.create(B, "lock-0000000003");
        feed.multi(
            C,
            5,
            &[set_data_op("/l", b"{}"), deletes("lock-0000000003")],
        );
        let out = feed.finish();
        let ends: Vec<(How, Option<&str>)> = out
            .iter()
            .map(|h| {
                let end = h.end.as_ref().unwrap();
                (end.how, end.reason.as_deref())
            })
            .collect();
        assert_eq!(
            ends,
            [
                (How::TtlExpired, None),
                (How::Reaped, Some("stuck")),
                (How::Broken, None)
            ]
        );
        assert_eq!(
            out[0].who,
            Who::Other {
                data: Some("worker-1".into()),
                named: None
            }
        );
        assert_eq!(out[0].end.as_ref().unwrap().by_session, None);
    }

    #[test]
    fn durations_between_times_too_far_apart_are_unknown_not_wrapped() {
        // Times from a crafted log: a hold from the earliest time there is
        // to the latest, which no 64-bit duration spans.
        let mut feed = Feed::new();
        let txn = |zxid, time_ms, op| Txn {
            session: A,
            cxid: 1,
            zxid,
            time_ms,
            op,
        };
        let (out, overlaps) = (&mut feed.out, &mut feed.overlaps);
        let mut found = |found| sort(found, out, overlaps);
        feed.replay.apply(
            &txn(1, i64::MIN, create("/l/lock-0000000001", b"", true)),
            &mut found,
        );
        feed.replay
            .apply(&txn(2, i64::MAX, delete("lock-0000000001")), &mut found);
        let summaries = feed.replay.finish(&mut found);
        let hold = &feed.out[0];
        assert_eq!(hold.holding_ms, Some(i64::MIN));
        assert_eq!((hold.held_ms(), hold.waited_ms()), (None, Some(0)));
        assert_eq!(summaries[0].1.held.max(), None);
    }

    #[test]
    fn a_hold_its_zklock_lost_ends_lost_and_unclean() {
        let mut feed = Feed::new();
        feed.create(A, "lock-0000000001");
        feed.multi(
            A,
            2,
            &[
                end_record("lock-0000000001", "lost"),
                deletes("lock-0000000001"),
            ],
        );
        let mut out = Vec::new();
        let mut overlaps = Vec::new();
        let summaries = feed
            .replay
            .finish(&mut |found| sort(found, &mut out, &mut overlaps));
        let hold = &feed.out[0];
        assert_eq!(hold.end.as_ref().map(|end| end.how), Some(How::Lost));
        assert_eq!(summaries[0].1.unclean, 1);
    }

    #[test]
    fn a_repeated_transaction_is_applied_once() {
        let mut feed = Feed::new();
        feed.create(A, "lock-0000000001");
        feed.zxid -= 1;
        feed.txn(A, 2, delete("lock-0000000001"));
        assert_eq!(feed.finish()[0].end, None);
    }

    pub(super) fn snapshot_stat(owner: i64, czxid: i64, ctime: i64) -> zk::Stat {
        zk::Stat {
            czxid,
            mzxid: czxid,
            pzxid: czxid,
            ctime,
            mtime: ctime,
            version: 0,
            cversion: 0,
            aversion: 0,
            ephemeral_owner: owner,
            data_length: 0,
            num_children: 0,
        }
    }

    #[test]
    fn a_snapshot_seeds_holds_from_their_ctime_and_fuzzy_transactions_apply_once() {
        let mut feed = Feed::new();
        for (name, owner, czxid) in [
            ("lock-0000000001", A, 3),
            ("lock-0000000002", B, 4),
            ("lock-0000000003", B, 11),
        ] {
            feed.replay.seed(
                &format!("/l/{name}"),
                b"",
                &snapshot_stat(owner, czxid, czxid * 100),
            );
        }
        feed.replay.seed("/l", b"", &snapshot_stat(0, 2, 200));
        feed.replay.seeded(10);
        // Before the snapshot: already in it.
        feed.zxid = 5;
        feed.delete(A, "lock-0000000001");
        // After it, but already in the snapshot too (it is fuzzy): the
        // create of a node it has, the delete of one it no longer has.
        feed.zxid = 10;
        feed.create(B, "lock-0000000003");
        feed.delete(B, "lock-0000000009");
        feed.delete(A, "lock-0000000001");
        let out = feed.finish();
        let seen: Vec<(&str, Option<i64>, Option<i64>)> = out
            .iter()
            .map(|hold| {
                (
                    hold.node.as_str(),
                    hold.holding_ms,
                    hold.end.as_ref().map(|end| end.at_ms),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("lock-0000000001", Some(300), Some(13_000)),
                ("lock-0000000002", Some(13_000), None),
                ("lock-0000000003", None, None),
            ]
        );
        assert_eq!(
            (out[1].session, out[1].fence, out[1].created_ms),
            (B, 4, 400)
        );
        // The snapshot's node, not the log's create of it again.
        assert_eq!(out[2].created_ms, 1100);
    }

    /// Fails unless `replay(n)` takes time about linear in `n`: a run at
    /// eight times `n` may take at most 24 times the best run at `n`, in
    /// one of three rounds that each time both sizes. Time is the thread's
    /// CPU time, which other work on the machine does not lengthen. Work
    /// that grows with the square of the input takes 64 times as long, so
    /// it cannot pass (and at over 100 times it fails at once); linear work
    /// takes about eight times, n log n a little more.
    pub(super) fn assert_linear(what: &str, n: usize, replay: impl Fn(usize)) {
        const SCALE: usize = 8;
        let time = |n| {
            let start = crate::sys::thread_cpu_time();
            replay(n);
            crate::sys::thread_cpu_time().saturating_sub(start)
        };
        let mut small = std::time::Duration::MAX;
        for round in 1..=3 {
            small = small.min(time(n));
            let large = time(n * SCALE);
            let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-9);
            if ratio <= 24.0 {
                return;
            }
            assert!(
                round < 3 && ratio < 100.0,
                "{what}: {n} took {small:?}, {} took {large:?}: {ratio:.1} times as long",
                n * SCALE
            );
        }
    }

    #[test]
    fn thousands_of_readers_in_one_directory_cost_linear_time() {
        // HBase's readers, all holding at once: each new one is asked
        // about alone, not the thousands holding ahead of it.
        assert_linear("readers", 2000, |n| {
            let mut feed = Feed::new();
            for i in 0..n {
                feed.create(A + i as i64, &format!("read-{i:010}"));
            }
            let out = feed.finish();
            assert!(out.iter().all(|h| h.holding_ms == Some(h.created_ms)));
        });
        // Two libraries' readers, alternating, with their overlaps asked
        // for: counted, never compared pairwise.
        assert_linear("two libraries' readers", 1000, |n| {
            let mut feed = Feed::overlapping();
            for i in 0..n {
                let name = if i % 2 == 0 {
                    format!("{i:032x}__rlock__{i:010}")
                } else {
                    format!("_c_{UUID}-__READ__{i:010}")
                };
                feed.create(A + i as i64, &name);
            }
            let (out, overlaps) = feed.finish_all();
            assert_eq!(out.len(), n);
            assert!(overlaps.is_empty());
        });
        // A writer made ahead of thousands of readers, again and again (a
        // wrapped counter, a hand-made name): its every hold overlaps them,
        // and each overlap names a bounded few of them with their count.
        assert_linear("a writer ahead of readers", 1000, |n| {
            let mut feed = Feed::overlapping();
            for i in 0..n {
                feed.create(A + i as i64, &format!("read-{:010}", i + 10));
            }
            for _ in 0..n {
                feed.create(B, "write-0000000001");
                feed.delete(B, "write-0000000001");
            }
            let (_, overlaps) = feed.finish_all();
            assert_eq!(overlaps.len(), n);
            let last = overlaps.last().unwrap();
            assert_eq!(last.holder_count, n + 1);
            assert!(last.holders.len() <= 2 * super::super::overlap::SHOWN);
            assert_eq!(last.holders[0].node, "write-0000000001");
        });
    }

    #[test]
    fn one_multi_ending_thousands_beside_one_end_record_costs_linear_time() {
        assert_linear("a multi ending many", 2000, |n| {
            let mut feed = Feed::new();
            let names: Vec<String> = (0..n).map(|i| format!("lock-{i:010}")).collect();
            for name in &names {
                feed.create(A, name);
            }
            let nodes: Vec<String> = names
                .iter()
                .map(|name| format!(r#"{{"node":"{name}","session":"0x100"}}"#))
                .collect();
            let record = format!(
                r#"{{"zklock_end":{{"version":1,"nodes":[{}],"how":"reaped","by":{{"user":"ops","host":"h","pid":7}},"reason":null,"ran":null}}}}"#,
                nodes.join(",")
            );
            let mut ops = vec![set_data_op("/l", record.as_bytes())];
            ops.extend(names.iter().map(|name| deletes(name)));
            feed.multi(C, 1, &ops);
            let out = feed.finish();
            assert_eq!(out.len(), n);
            assert!(
                out.iter()
                    .all(|h| h.end.as_ref().unwrap().how == How::Reaped)
            );
        });
    }

    /// The holders' nodes of each overlap, with its span.
    fn spans(overlaps: &[Overlap]) -> Vec<(i64, Option<i64>, Vec<&str>)> {
        overlaps
            .iter()
            .map(|o| {
                let nodes = o.holders.iter().map(|h| h.node.as_str()).collect();
                (o.from_ms, o.until_ms, nodes)
            })
            .collect()
    }

    #[test]
    fn two_libraries_in_one_directory_each_hold_by_their_own_rules() {
        let kazoo = "0123456789abcdef0123456789abcdef__lock__0000000001";
        let curator = format!("_c_{UUID}-lock-0000000002");
        let mut feed = Feed::overlapping();
        feed.create(A, kazoo); // 1: kazoo holds
        feed.create(B, &curator); // 2: Curator holds too, by its own rules
        // A zklock node (its owner record as data, named as Curator names
        // its nodes) holds only when nothing of any dialect is ahead: it
        // waits behind kazoo's, so it adds no holder.
        let owner = br#"{"tool":"zklock","version":"1","host":"h","pid":7,"user":"ops","command":null,"time":"t","data":null}"#;
        let zklock = format!("_c_{UUID}-lock-0000000003");
        feed.txn(C, 1, create(&format!("/l/{zklock}"), owner, true)); // 3
        feed.delete(B, &curator); // 4: the overlap ends
        feed.delete(A, kazoo); // 5: zklock's node holds alone
        let (out, overlaps) = feed.finish_all();
        assert_eq!(
            spans(&overlaps),
            [(2000, Some(4000), vec![kazoo, curator.as_str()])]
        );
        assert_eq!(overlaps[0].from_zxid, 2);
        assert_eq!(overlaps[0].holders[1].session, B);
        // Curator's contender held by Curator's rules; zklock's waited by
        // its own until kazoo's went.
        let held = |node: &str| out.iter().find(|h| h.node == node).unwrap().holding_ms;
        assert_eq!(held(&curator), Some(2000));
        assert_eq!(held(&zklock), Some(5000));
    }

    #[test]
    fn readers_of_two_libraries_share_and_an_overlap_lasts_to_the_end() {
        let kazoo_reader = "0123456789abcdef0123456789abcdef__rlock__0000000001";
        let curator_reader = format!("_c_{UUID}-__READ__0000000002");
        let curator_writer = format!("_c_{UUID}-__WRIT__0000000003");
        let mut feed = Feed::overlapping();
        feed.create(A, kazoo_reader); // 1
        feed.create(B, &curator_reader); // 2: two readers share
        feed.delete(B, &curator_reader); // 3
        feed.create(B, &curator_writer); // 4: a writer beside kazoo's reader
        let (_, overlaps) = feed.finish_all();
        assert_eq!(
            spans(&overlaps),
            [(4000, None, vec![kazoo_reader, curator_writer.as_str()])]
        );
    }
}
