//! Transactions replayed into holds: every contender of every lock
//! directory from its create to its end, when it began to hold, and how it
//! ended.
//!
//! Who holds is decided by the queue rules `lock` and `stat` use
//! (`lock::queue::waits_on`), asked after each transaction about the
//! directories it touched. The holders are always the first contenders of a
//! queue, so only those up to the first waiter are looked at. A contender
//! that the rules put at the head begins to hold at that transaction's time.
//! Where libraries of different dialects share a directory, each contender
//! holds by its own library's rules instead (see `overlap`), and two
//! holders at once are an overlap.
//!
//! Only live contenders are kept, each once in its directory's queue and
//! once under its session: memory follows the contenders alive at one time,
//! however long the log. A contender is handed out as it ends, and those
//! still alive when the log ends at [`Replay::finish`].

mod leases;

use std::collections::{BTreeMap, HashMap, HashSet};

use leases::Leases;

use super::overlap::{self, Holder, Overlap, Overlaps, Seen};
use super::stats::LockSummary;
use super::txnlog::{Create, Op, Txn};
use crate::lock::end::{EndHow, EndRecord, Ender};
use crate::lock::queue::{self, Ahead, QueueEntry};
use crate::lock::{ContenderMode, Dialect, Owner, node};
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
    /// Deleted by its own zklock after it lost the lock (its command was
    /// stopped), as its end record says.
    Lost,
}

impl How {
    /// The stable word used in JSON.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            How::Released => "released",
            How::GaveUp => "gave_up",
            How::MaxHold => "max_hold",
            How::ClosedByClient => "closed_by_client",
            How::Expired => "expired",
            How::Broken => "broken",
            How::Reaped => "reaped",
            How::TtlExpired => "ttl_expired",
            How::Lost => "lost",
        }
    }

    /// Released or given up by its own holder: nothing went wrong.
    pub(crate) fn is_clean(self) -> bool {
        matches!(self, How::Released | How::GaveUp)
    }

    /// What an end record says of how the hold ended.
    fn recorded(how: EndHow) -> How {
        match how {
            EndHow::Released => How::Released,
            EndHow::GaveUp => How::GaveUp,
            EndHow::MaxHold => How::MaxHold,
            EndHow::Broken => How::Broken,
            EndHow::Reaped => How::Reaped,
            EndHow::Lost => How::Lost,
        }
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
    /// The lock directory.
    pub lock: String,
    /// The node's name in it.
    pub node: String,
    pub dialect: Dialect,
    pub mode: ContenderMode,
    /// Its owner session; for a node no session owns, the one that made it.
    pub session: i64,
    /// The fencing token: the zxid that created it.
    pub fence: i64,
    /// The data it was created with: whose it is.
    pub data: Vec<u8>,
    /// The data read as zklock's owner record, when it is one: read once,
    /// as the node joins.
    pub owner: Option<Box<Owner>>,
    pub created_ms: i64,
    /// When the queue rules first let it hold; `None` if they never did.
    pub holding_ms: Option<i64>,
    /// `None` while it was still alive where the replay stopped.
    pub end: Option<End>,
}

impl Hold {
    /// How long it waited: until it held, or until it ended without.
    pub(crate) fn waited_ms(&self) -> Option<i64> {
        let until = self.holding_ms.or(self.end.as_ref().map(|end| end.at_ms))?;
        Some(until - self.created_ms)
    }

    /// How long it held, once its hold ended.
    pub(crate) fn held_ms(&self) -> Option<i64> {
        Some(self.end.as_ref()?.at_ms - self.holding_ms?)
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

/// A live contender.
#[derive(Debug)]
struct Live {
    session: i64,
    ephemeral: bool,
    fence: i64,
    created_ms: i64,
    data: Vec<u8>,
    /// Made by zklock when its data is an owner record.
    owner: Option<Box<Owner>>,
    holding_ms: Option<i64>,
}

impl Live {
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
            data: self.data,
            owner: self.owner,
            created_ms: self.created_ms,
            holding_ms: self.holding_ms,
            end,
        }
    }
}

/// The replay's state: every live contender, by directory and by session.
#[derive(Debug)]
pub(crate) struct Replay {
    scope: Scope,
    window: Window,
    /// Each lock directory with a live contender: its queue, in queue order.
    queues: HashMap<String, BTreeMap<QueueEntry, Live>>,
    /// Each session's live ephemeral contenders (their full paths): what
    /// its close ends.
    sessions: HashMap<i64, HashSet<String>>,
    /// How many live contenders of each dialect each directory has: one
    /// dialect alone needs only zklock's joint rules.
    dialects: HashMap<String, HashMap<Dialect, usize>>,
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
            sessions: HashMap::new(),
            dialects: HashMap::new(),
            summaries: BTreeMap::new(),
            overlaps: overlaps.then(Overlaps::default),
            last_zxid: i64::MIN,
            leases: Leases::new(overlaps),
        }
    }

    /// Applies one transaction; each contender it ends goes to `emit`.
    pub(crate) fn apply(&mut self, txn: &Txn, emit: &mut impl FnMut(Found)) {
        if txn.zxid <= self.last_zxid {
            return;
        }
        self.last_zxid = txn.zxid;
        let mut touched = Vec::new();
        match &txn.op {
            Op::Multi(ops) => {
                let records = end_records(ops);
                for op in ops {
                    self.apply_op(txn, op, &records, &mut touched, emit);
                }
            }
            Op::CloseSession => self.close_session(txn, &mut touched, emit),
            op => self.apply_op(txn, op, &[], &mut touched, emit),
        }
        for dir in touched {
            let holders = self.settle(&dir, txn.time_ms);
            self.watch_overlaps(&dir, holders, txn, emit);
        }
        self.settle_leases(txn, emit);
    }

    fn apply_op(
        &mut self,
        txn: &Txn,
        op: &Op,
        records: &[(&str, EndRecord)],
        touched: &mut Vec<String>,
        emit: &mut impl FnMut(Found),
    ) {
        match op {
            Op::Create(create) => {
                if !self.create_lease(txn, create) {
                    self.note_create(create);
                    self.create(txn, create, touched);
                }
            }
            Op::Delete { path, by_server } => {
                if self.delete_lease(txn, path, *by_server, records, emit) {
                    return;
                }
                let Some((dir, name)) = self.split(path) else {
                    return;
                };
                let Some((entry, live)) = self.take(dir, name) else {
                    return;
                };
                let record = records
                    .iter()
                    .find(|(at, record)| *at == dir && record.names(name, live.session))
                    .map(|(_, record)| record);
                let end = deleted(txn, *by_server, &live, record);
                touched.push(dir.to_owned());
                self.emit(dir.to_owned(), entry, live, Some(end), emit);
            }
            Op::SetData { path, data } => self.note_data(path, data),
            Op::CreateSession | Op::CloseSession | Op::Multi(_) | Op::Other => {}
        }
    }

    /// A created node joins its directory's queue when it is a contender
    /// by the rule `ls` and `stat` use (see `lock::node`).
    fn create(&mut self, txn: &Txn, create: &Create, touched: &mut Vec<String>) {
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
            data_length: create.data.len() as i32,
            num_children: 0,
        };
        if let Some(dir) = self.join(&create.path, &create.data, &stat, txn.session) {
            touched.push(dir);
        }
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
        let mut dirs: Vec<String> = self.queues.keys().cloned().collect();
        dirs.sort();
        for dir in dirs {
            let holders = self.settle(&dir, i64::MAX);
            let queue = self
                .queues
                .get_mut(&dir)
                .into_iter()
                .flat_map(|q| q.values_mut());
            let mut from_ms = i64::MIN;
            for live in queue.filter(|live| live.holding_ms == Some(i64::MAX)) {
                live.holding_ms = Some(live.created_ms);
                from_ms = from_ms.max(live.created_ms);
            }
            if let Some(overlaps) = &mut self.overlaps {
                overlaps.update(&dir, holders, zxid, from_ms);
            }
        }
        self.last_zxid = self.last_zxid.max(zxid);
    }

    /// Puts the node at `full` in its directory's queue when it is a
    /// contender in scope, owned by `session`; its directory, when it
    /// joined. A node already there (a transaction the snapshot already
    /// shows) is left as it is.
    fn join(&mut self, full: &str, data: &[u8], stat: &zk::Stat, session: i64) -> Option<String> {
        let (dir, name) = self.split(full)?;
        let entry = QueueEntry::parse(name)?;
        if !node::is_contender(entry.dialect, stat, data) {
            return None;
        }
        let queue = self.queues.entry(dir.to_owned()).or_default();
        if queue.contains_key(&entry) {
            return None;
        }
        let ephemeral = stat.ephemeral_owner != 0;
        queue.insert(
            entry.clone(),
            Live {
                session,
                ephemeral,
                fence: stat.czxid,
                created_ms: stat.ctime,
                data: data.to_vec(),
                owner: Owner::parse(data).map(Box::new),
                holding_ms: None,
            },
        );
        if ephemeral {
            self.sessions
                .entry(session)
                .or_default()
                .insert(full.to_owned());
        }
        *self
            .dialects
            .entry(dir.to_owned())
            .or_default()
            .entry(entry.dialect)
            .or_default() += 1;
        Some(dir.to_owned())
    }

    /// A session's close ends every ephemeral contender it still had: by
    /// the server (cxid 0: it expired) or by its client.
    fn close_session(
        &mut self,
        txn: &Txn,
        touched: &mut Vec<String>,
        emit: &mut impl FnMut(Found),
    ) {
        let Some(paths) = self.sessions.remove(&txn.session) else {
            return;
        };
        let how = if txn.cxid == 0 {
            How::Expired
        } else {
            How::ClosedByClient
        };
        let mut paths: Vec<String> = paths.into_iter().collect();
        paths.sort();
        for full in paths {
            let end = End {
                at_ms: txn.time_ms,
                zxid: txn.zxid,
                how,
                by_session: None,
                breaker: None,
                reason: None,
            };
            if self.close_lease(&full, end.clone(), emit) {
                continue;
            }
            let Some((dir, name)) = split(&full) else {
                continue;
            };
            let Some((entry, live)) = self.take(dir, name) else {
                continue;
            };
            touched.push(dir.to_owned());
            self.emit(dir.to_owned(), entry, live, Some(end), emit);
        }
    }

    /// The directory and name of `path`, when the directory is in scope.
    fn split<'p>(&self, full: &'p str) -> Option<(&'p str, &'p str)> {
        split(full).filter(|(dir, _)| self.scope.covers(dir))
    }

    /// Takes the contender `name` out of `dir`'s queue and its session's set.
    fn take(&mut self, dir: &str, name: &str) -> Option<(QueueEntry, Live)> {
        let entry = QueueEntry::parse(name)?;
        let queue = self.queues.get_mut(dir)?;
        let live = queue.remove(&entry)?;
        if queue.is_empty() {
            self.queues.remove(dir);
        }
        if let Some(counts) = self.dialects.get_mut(dir)
            && let Some(count) = counts.get_mut(&entry.dialect)
        {
            *count -= 1;
            if *count == 0 {
                counts.remove(&entry.dialect);
            }
            if counts.is_empty() {
                self.dialects.remove(dir);
            }
        }
        if live.ephemeral
            && let Some(paths) = self.sessions.get_mut(&live.session)
        {
            paths.remove(&path::join(dir, name));
            if paths.is_empty() {
                self.sessions.remove(&live.session);
            }
        }
        Some((entry, live))
    }

    /// Marks the contenders of `dir` that the queue rules now let hold:
    /// zklock's joint rules, and where dialects share the directory, each
    /// contender's own library's rules (see `overlap`), whose holders it
    /// returns.
    fn settle(&mut self, dir: &str, time_ms: i64) -> Vec<Holder> {
        self.settle_jointly(dir, time_ms);
        let mixed = self
            .dialects
            .get(dir)
            .is_some_and(|counts| counts.len() > 1);
        let Some(queue) = self.queues.get_mut(dir).filter(|_| mixed) else {
            return Vec::new();
        };
        let holders = overlap::own_rule_holders(queue.iter().map(|(entry, live)| {
            let seen = Seen {
                session: live.session,
                fence: live.fence,
                zklock: live.owner.is_some(),
                holding: live.holding_ms.is_some(),
            };
            (entry, seen)
        }));
        for holder in &holders {
            if let Some(live) = QueueEntry::parse(&holder.node).and_then(|e| queue.get_mut(&e)) {
                live.holding_ms.get_or_insert(time_ms);
            }
        }
        holders
    }

    /// Marks the contenders of `dir` that zklock's joint queue rules (every
    /// dialect's contenders in one queue) now let hold.
    fn settle_jointly(&mut self, dir: &str, time_ms: i64) {
        let Some(queue) = self.queues.get_mut(dir) else {
            return;
        };
        let Some(head) = queue.keys().next().cloned() else {
            return;
        };
        let mut just_ahead: Option<QueueEntry> = None;
        let mut exclusive: Option<QueueEntry> = None;
        let mut holding = Vec::new();
        for entry in queue.keys() {
            let ahead = Ahead {
                just_ahead: just_ahead.as_ref(),
                exclusive: exclusive.as_ref().map(|e| (e, e)),
                head: &head,
            };
            if queue::waits_on(entry, ahead).is_some() {
                break;
            }
            holding.push(entry.clone());
            if !queue::is_shared(entry) {
                exclusive = Some(entry.clone());
            }
            just_ahead = Some(entry.clone());
        }
        for entry in holding {
            if let Some(live) = queue.get_mut(&entry) {
                live.holding_ms.get_or_insert(time_ms);
            }
        }
    }

    /// Ends `dir`'s overlap when its holders changed, handing it out, and
    /// begins one when they now conflict.
    fn watch_overlaps(
        &mut self,
        dir: &str,
        holders: Vec<Holder>,
        txn: &Txn,
        emit: &mut impl FnMut(Found),
    ) {
        let Some(overlaps) = &mut self.overlaps else {
            return;
        };
        if let Some(ended) = overlaps.update(dir, holders, txn.zxid, txn.time_ms)
            && self.window.overlaps(ended.from_ms, ended.until_ms)
        {
            emit(Found::Overlap(ended));
        }
    }

    /// Hands a contender out (see [`Replay::hand_out`]).
    fn emit(
        &mut self,
        lock: String,
        entry: QueueEntry,
        live: Live,
        end: Option<End>,
        emit: &mut impl FnMut(Found),
    ) {
        let (dialect, mode) = (entry.dialect, entry.mode());
        let hold = live.into_hold(lock, entry.name, dialect, mode, end);
        self.hand_out(hold, emit);
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
        self.summaries
            .entry(hold.lock.clone())
            .or_default()
            .count(&hold);
        emit(Found::Hold(hold));
    }

    /// Hands out every contender still alive, lock by lock in queue order,
    /// and returns each lock's summary.
    pub(crate) fn finish(mut self, emit: &mut impl FnMut(Found)) -> Vec<(String, LockSummary)> {
        let mut locks: Vec<String> = self.queues.keys().cloned().collect();
        locks.sort();
        for lock in locks {
            let queue = self.queues.remove(&lock).unwrap_or_default();
            for (entry, live) in queue {
                self.emit(lock.clone(), entry, live, None, emit);
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

/// The end records a multi writes, with the directory each is written to.
fn end_records(ops: &[Op]) -> Vec<(&str, EndRecord)> {
    ops.iter()
        .filter_map(|op| match op {
            Op::SetData { path, data } => Some((path.as_str(), EndRecord::parse(data)?)),
            _ => None,
        })
        .collect()
}

/// How a delete of `live` in `txn` ended it: the server's removal of a TTL
/// node, what an end record in the same transaction says, or else by whom:
/// its own session (released, or gave up if it never held) or another
/// (broken).
fn deleted(txn: &Txn, by_server: bool, live: &Live, record: Option<&EndRecord>) -> End {
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
    let how = record.map_or(plain, |record| How::recorded(record.how));
    End {
        at_ms: txn.time_ms,
        zxid: txn.zxid,
        how,
        by_session: (!own && !by_server).then_some(txn.session),
        breaker: record.map(|record| record.by.clone()),
        reason: record.and_then(|record| record.reason.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::txnlog::Create;

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

        pub(super) fn txn(&mut self, session: i64, cxid: i32, op: Op) {
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

    pub(super) fn create(path: &str, data: &[u8], ephemeral: bool) -> Op {
        Op::Create(Create {
            path: path.into(),
            data: data.to_vec(),
            ephemeral,
        })
    }

    fn delete(name: &str) -> Op {
        Op::Delete {
            path: format!("/l/{name}"),
            by_server: false,
        }
    }

    fn end_record(name: &str, how: &str) -> Op {
        let data = format!(
            r#"{{"zklock_end":{{"version":1,"nodes":[{{"node":"{name}","session":"0x100"}}],"how":"{how}","by":{{"user":"ops","host":"h","pid":7}},"reason":"stuck","ran":null}}}}"#
        );
        Op::SetData {
            path: "/l".into(),
            data: data.into_bytes(),
        }
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
        feed.txn(
            B,
            3,
            Op::Multi(vec![
                end_record("lock-0000000004", "broken"),
                delete("lock-0000000004"),
            ]),
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
                path: format!("/l/{kazoo}"),
                by_server: true,
            },
        );
        feed.create(A, "lock-0000000002");
        feed.txn(
            C,
            4,
            Op::Multi(vec![
                delete("lock-0000000002"),
                end_record("lock-0000000002", "reaped"),
            ]),
        );
        // A multi's setData of other data is no end record.
        feed.create(B, "lock-0000000003");
        feed.txn(
            C,
            5,
            Op::Multi(vec![
                Op::SetData {
                    path: "/l".into(),
                    data: b"{}".to_vec(),
                },
                delete("lock-0000000003"),
            ]),
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
        assert_eq!(out[0].data, b"worker-1");
        assert_eq!(out[0].end.as_ref().unwrap().by_session, None);
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
