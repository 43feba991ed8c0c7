//! The lock model that `ls`, `stat` and `dump` show: a lock with its holders
//! and waiters, each contender with its node's stat and data.
//!
//! Who holds and who waits comes from [`LockQueue`] (mutexes and read-write
//! locks) and [`SemaphoreQueue`] (semaphores) in `src/lock/`; this module
//! only attaches what was read from ZooKeeper to their answers.

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::{Serialize, Serializer};

use super::hbase::{self, TableLock};
use super::leaders;
use crate::lock::end::{EndRecord, Ran};
use crate::lock::semaphore::{self, AcquirerWait, Lease};
use crate::lock::{
    ContenderKind, ContenderMode, Dialect, LockQueue, Owner, SemaphoreQueue, node, queue,
};
use crate::zk::sessions::{Client, Connection, Survey};
use crate::zk::{self, path};

/// What kind of lock a directory is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LockKind {
    Mutex,
    ReadWrite,
    Semaphore,
    /// A leader election: its candidates queue like a mutex's contenders,
    /// and the first leads.
    Election,
    /// One ephemeral node at a well-known name whose owner leads.
    Leader,
}

impl LockKind {
    /// The name used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            LockKind::Mutex => "mutex",
            LockKind::ReadWrite => "read-write",
            LockKind::Semaphore => "semaphore",
            LockKind::Election => "election",
            LockKind::Leader => "leader",
        }
    }

    /// False for elections and leader nodes: they belong to services that
    /// pick their leader through them, and deleting a node there does not
    /// free a stuck lock, it deposes a leader. zklock shows them and never
    /// reaps or releases them.
    pub fn may_be_broken(self) -> bool {
        !matches!(self, LockKind::Election | LockKind::Leader)
    }
}

/// Whose lock it is: one library's, or several libraries' (`mixed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockDialect {
    One(Dialect),
    Mixed,
}

impl LockDialect {
    /// The name used in output: a dialect's name, or `mixed`.
    pub fn as_str(self) -> &'static str {
        match self {
            LockDialect::One(dialect) => dialect.as_str(),
            LockDialect::Mixed => "mixed",
        }
    }

    /// The dialect of a set of contenders: theirs when they agree, else mixed.
    fn of(mut dialects: impl Iterator<Item = Dialect>) -> LockDialect {
        let Some(first) = dialects.next() else {
            return LockDialect::Mixed;
        };
        if dialects.all(|d| d == first) {
            LockDialect::One(first)
        } else {
            LockDialect::Mixed
        }
    }
}

impl fmt::Display for LockDialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for LockDialect {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A node as read from ZooKeeper.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NodeRead {
    pub data: Vec<u8>,
    pub stat: zk::Stat,
}

/// One contender of a lock, with its node's stat and data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contender {
    /// The node's full path.
    pub path: String,
    /// The node's name.
    pub name: String,
    pub dialect: Dialect,
    /// The sequence suffix; `None` for kazoo's leases, which have none.
    pub sequence: Option<i32>,
    pub mode: ContenderMode,
    pub stat: zk::Stat,
    pub data: Vec<u8>,
    /// How old the node was when it was read.
    pub age_ms: i64,
    /// The full path of the node this contender waits on; `None` for a holder,
    /// and for a semaphore acquirer that waits for any lease to go.
    pub waiting_on: Option<String>,
    /// Who is behind its session, when the ensemble said ([`Lock::attach_clients`]).
    pub client: Option<Client>,
    /// For a waiter: whether its session watches the node it waits on;
    /// `None` when unknown. A waiter that does not will never hear that its
    /// turn came.
    pub watching: Option<bool>,
}

impl Contender {
    /// The owner session (`0` for a persistent node).
    pub fn session(&self) -> i64 {
        self.stat.ephemeral_owner
    }

    /// The fencing token: the node's czxid.
    pub fn fence(&self) -> i64 {
        self.stat.czxid
    }

    /// Whether its session is connected now, as far as its client says;
    /// `None` for a node without a session (persistent or TTL).
    pub fn connection(&self) -> Option<Connection> {
        (self.session() != 0).then(|| Connection::of(self.client.as_ref()))
    }

    /// zklock's owner record, when zklock made the node.
    pub fn owner(&self) -> Option<Owner> {
        Owner::parse(&self.data)
    }

    /// HBase's decoded table-lock record, for an HBase contender.
    pub fn table_lock(&self) -> Option<TableLock> {
        (self.dialect == Dialect::Hbase)
            .then(|| hbase::decode(&self.data))
            .flatten()
    }

    /// Who this is, for people: see [`owner_text`].
    pub fn owner_text(&self) -> String {
        owner_text(self.dialect, &self.data, self.session())
    }
}

/// Who a contender is, for people: zklock's owner record (`user@host pid N
/// COMMAND "data"`, the command as `ps` shows it, with its arguments only
/// when the record has them), HBase's decoded owner, a leader node's decoded
/// leader, the data as text (Curator's IP address, kazoo's identifier), or
/// else its session.
pub(crate) fn owner_text(dialect: Dialect, data: &[u8], session: i64) -> String {
    if let Some(owner) = Owner::parse(data) {
        return owner.text();
    }
    if dialect == Dialect::Hbase
        && let Some(table_lock) = hbase::decode(data)
    {
        return table_lock.summary();
    }
    if let Some(leader) = leaders::owner(dialect, data) {
        return leader;
    }
    if data.is_empty() {
        format!("session {}", zk::format_session(session))
    } else {
        hbase::safe_text(data)
    }
}

/// One lock: its directory, kind and dialect, who holds it and who waits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lock {
    /// The lock directory.
    pub path: String,
    pub kind: LockKind,
    pub dialect: LockDialect,
    /// In queue (grant) order.
    pub holders: Vec<Contender>,
    /// In queue order.
    pub waiters: Vec<Contender>,
    /// A kazoo semaphore's maximum number of leases.
    pub max_leases: Option<u32>,
    /// Its last counted `--once-per` run, when the walk was asked to read it.
    pub(crate) last_run: LastRun,
}

/// What a walk learnt of a lock's last counted `--once-per` run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum LastRun {
    /// The walk did not look: only `ls` pays the reads.
    #[default]
    Unread,
    /// The run the end record in its directory keeps; `None` when none
    /// counted, or its directory takes no record.
    Read(Option<Ran>),
}

impl Lock {
    /// Every contender in queue order: the holders, then the waiters.
    pub fn contenders(&self) -> impl Iterator<Item = &Contender> {
        self.standings().map(|(contender, _)| contender)
    }

    /// Every contender in queue order, with whether it holds the lock.
    pub fn standings(&self) -> impl DoubleEndedIterator<Item = (&Contender, bool)> {
        let holders = self.holders.iter().map(|c| (c, true));
        holders.chain(self.waiters.iter().map(|c| (c, false)))
    }

    /// The holder that has held the lock longest.
    pub fn oldest_holder(&self) -> Option<&Contender> {
        self.holders.iter().max_by_key(|c| c.age_ms)
    }

    /// Fills in each contender's client, and for each waiter whether it
    /// watches the node it waits on, from what the ensemble said.
    pub fn attach_clients(&mut self, survey: &Survey) {
        for contender in self.holders.iter_mut().chain(&mut self.waiters) {
            contender.attach_client(survey);
        }
    }

    /// What the lock is, without its contenders, and its contenders in
    /// queue order, each with whether it holds.
    pub(crate) fn into_parts(self) -> (LockSummary, Vec<ContenderState>) {
        let summary = LockSummary {
            path: self.path,
            kind: self.kind,
            dialect: self.dialect,
            holders: self.holders.len(),
            waiters: self.waiters.len(),
            max_leases: self.max_leases,
        };
        let holders = self.holders.into_iter().map(|c| (c, true));
        let standings = holders.chain(self.waiters.into_iter().map(|c| (c, false)));
        (summary, standings.collect())
    }
}

impl Contender {
    /// Fills in its client, and for a waiter whether it watches the node it
    /// waits on, from what the ensemble said.
    pub(crate) fn attach_client(&mut self, survey: &Survey) {
        let session = self.session();
        if session == 0 {
            return;
        }
        self.client = survey.client(session);
        self.watching = self
            .waiting_on
            .as_deref()
            .and_then(|ahead| survey.watches(session, ahead));
    }
}

/// Nodes read for a lock, by name, in the order they were listed.
pub(crate) type Reads = Vec<(String, NodeRead)>;

/// A contender with whether it holds its lock, in queue order.
pub(crate) type ContenderState = (Contender, bool);

/// The mutex or read-write lock at `path` from its contenders' reads; `None`
/// when none is left.
pub(crate) fn queue_lock(path: &str, reads: Reads, now_ms: i64) -> Option<Lock> {
    let mut reads: HashMap<String, NodeRead> = reads.into_iter().collect();
    let mut reading = QueueReading::new(path, reads.keys().cloned());
    let in_order = reading
        .unread()
        .iter()
        .map(|queued| reads.remove(&queued.name))
        .collect();
    let standings = reading.confirm(in_order, now_ms);
    Some(reading.summary()?.with_contenders(standings))
}

/// A mutex's, read-write lock's or election's contenders, put in queue order
/// by their names alone and confirmed front to back as their nodes are read,
/// so that a queue of any length can be read in windows with only the names
/// held whole.
///
/// Whether a node is a contender is known only once it is read (a node gone
/// since the listing, or a persistent look-alike, is not), and a contender's
/// standing depends on the contenders ahead of it alone. So once a window is
/// read, the nodes in it that are not contenders leave the queue, and the
/// standings of that window, whose every node ahead is then confirmed, are
/// final: a node found out later, further back, changes no standing already
/// given.
#[derive(Clone, Debug)]
pub(crate) struct QueueReading {
    dir: String,
    queue: LockQueue,
    /// How many contenders at the front of the queue are confirmed.
    confirmed: usize,
}

impl QueueReading {
    /// The queue of the lock directory `dir` from its children's names.
    pub(crate) fn new(dir: &str, names: impl IntoIterator<Item = String>) -> QueueReading {
        QueueReading {
            dir: dir.to_owned(),
            queue: LockQueue::from_children(names),
            confirmed: 0,
        }
    }

    /// The lock directory.
    pub(crate) fn dir(&self) -> &str {
        &self.dir
    }

    /// The contenders not yet confirmed, in queue order.
    pub(crate) fn unread(&self) -> &[queue::QueueEntry] {
        &self.queue.contenders()[self.confirmed..]
    }

    /// How many contenders at the front of the queue are confirmed.
    pub(crate) fn confirmed(&self) -> usize {
        self.confirmed
    }

    /// Takes the reads of the first `reads.len()` [`unread`](Self::unread)
    /// contenders, in order (`None` for a node that has gone), and returns
    /// those that are contenders, in queue order, each with whether it holds
    /// the lock.
    pub(crate) fn confirm(
        &mut self,
        reads: Vec<Option<NodeRead>>,
        now_ms: i64,
    ) -> Vec<ContenderState> {
        let window = &self.queue.contenders()[self.confirmed..self.confirmed + reads.len()];
        let reads: Vec<(&queue::QueueEntry, Option<NodeRead>)> = window
            .iter()
            .zip(reads)
            .map(|(queued, read)| {
                let read =
                    read.filter(|read| node::is_contender(queued.dialect, &read.stat, &read.data));
                (queued, read)
            })
            .collect();
        let dropped: HashSet<String> = reads
            .iter()
            .filter(|(_, read)| read.is_none())
            .map(|(queued, _)| queued.name.clone())
            .collect();
        let reads: Vec<NodeRead> = reads.into_iter().filter_map(|(_, read)| read).collect();
        if !dropped.is_empty() {
            self.queue.retain(|queued| !dropped.contains(&queued.name));
        }
        let start = self.confirmed;
        self.confirmed += reads.len();
        let queue = &self.queue;
        queue
            .entries()
            .skip(start)
            .zip(reads)
            .map(|((queued, standing), read)| {
                let ahead = queue.waiting_on(standing);
                let contender = queued_contender(&self.dir, queued, queued.mode(), read, now_ms)
                    .waiting_on(&self.dir, ahead);
                (contender, ahead.is_none())
            })
            .collect()
    }

    /// Reads again from the `position`th contender; what
    /// [`QueueReading::confirm`] has dropped stays out.
    pub(crate) fn rewind(&mut self, position: usize) {
        self.confirmed = position.min(self.confirmed);
    }

    /// The lock the confirmed contenders make, once every contender is
    /// confirmed; `None` when none is left.
    pub(crate) fn summary(&self) -> Option<LockSummary> {
        let queue = &self.queue;
        if queue.is_empty() {
            return None;
        }
        let holders = queue.holders().count();
        Some(LockSummary {
            path: self.dir.clone(),
            kind: queue_kind(queue),
            dialect: LockDialect::of(queue.contenders().iter().map(|c| c.dialect)),
            holders,
            waiters: queue.len() - holders,
            max_leases: None,
        })
    }
}

/// A lock without its contenders: what it is and how many hold and wait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LockSummary {
    /// The lock directory.
    pub path: String,
    pub kind: LockKind,
    pub dialect: LockDialect,
    pub holders: usize,
    pub waiters: usize,
    /// A kazoo semaphore's maximum number of leases.
    pub max_leases: Option<u32>,
}

impl LockSummary {
    /// The lock with these contenders, each with whether it holds.
    fn with_contenders(self, standings: Vec<ContenderState>) -> Lock {
        let (holders, waiters) = standings.into_iter().partition(|(_, holding)| *holding);
        let contenders =
            |standings: Vec<ContenderState>| standings.into_iter().map(|(c, _)| c).collect();
        Lock {
            path: self.path,
            kind: self.kind,
            dialect: self.dialect,
            holders: contenders(holders),
            waiters: contenders(waiters),
            max_leases: self.max_leases,
            last_run: LastRun::Unread,
        }
    }
}

/// What a queue is by its contenders' kinds: an election when any is a
/// candidate, a read-write lock when any reads or writes, else a mutex.
fn queue_kind(queue: &LockQueue) -> LockKind {
    let kinds = || queue.contenders().iter().map(|c| c.kind);
    if kinds().any(|kind| kind == ContenderKind::Election) {
        LockKind::Election
    } else if kinds().any(|kind| matches!(kind, ContenderKind::Read | ContenderKind::Write)) {
        LockKind::ReadWrite
    } else {
        LockKind::Mutex
    }
}

/// The emptied lock at `path` whose directory keeps `record`: listed for
/// its last counted `--once-per` run, `None` when the record keeps none. It
/// has no contender left to tell what it is, but the record names the nodes
/// whose end it wrote, and they do; a record that names none (a run that
/// counted as it started, whose holder's session expired) is taken for
/// what `lock` makes by default, a Curator mutex.
pub(crate) fn idle_lock(path: &str, record: EndRecord) -> Option<Lock> {
    let ran = record.ran?;
    let last = LockQueue::from_children(record.nodes.into_iter().map(|ended| ended.node));
    let dialect = match last.contenders() {
        [] => LockDialect::One(Dialect::Curator),
        ended => LockDialect::of(ended.iter().map(|c| c.dialect)),
    };
    Some(Lock {
        path: path.to_owned(),
        kind: queue_kind(&last),
        dialect,
        holders: Vec::new(),
        waiters: Vec::new(),
        max_leases: None,
        last_run: LastRun::Read(Some(ran)),
    })
}

/// The leader node at `path` of `dialect`'s service, from its read; `None`
/// when it is gone, not ephemeral, or its data is not that service's record.
pub(crate) fn leader_lock(
    path: &str,
    dialect: Dialect,
    read: Option<NodeRead>,
    now_ms: i64,
) -> Option<Lock> {
    let read = read.filter(|read| {
        matches!(
            node::Ownership::of(&read.stat),
            node::Ownership::Ephemeral { .. }
        )
    })?;
    leaders::owner(dialect, &read.data)?;
    let leader = Contender::read(
        path,
        (dialect, None, ContenderMode::Exclusive),
        read,
        now_ms,
    );
    Some(Lock {
        path: path.to_owned(),
        kind: LockKind::Leader,
        dialect: LockDialect::One(dialect),
        holders: vec![leader],
        waiters: Vec::new(),
        max_leases: None,
        last_run: LastRun::Unread,
    })
}

/// The Curator semaphore at `path` from the reads of its leases (in
/// `leases/`) and of its acquirers (in `locks/`); `None` when both are empty.
pub(crate) fn curator_semaphore(
    path: &str,
    leases: Reads,
    acquirers: Reads,
    now_ms: i64,
) -> Option<Lock> {
    let acquirers = contenders_only(acquirers);
    let acquirer_queue = LockQueue::from_children(acquirers.iter().map(|(n, _)| n.clone()));
    let acquirers: HashMap<String, NodeRead> = acquirers.into_iter().collect();
    let acquirer_session = acquirer_queue
        .holders()
        .next()
        .and_then(|holder| acquirers.get(&holder.name))
        .map(|read| read.stat.ephemeral_owner);
    let (lease_list, lease_reads) = split_leases(leases);
    let semaphore = SemaphoreQueue::curator(lease_list, acquirer_queue, acquirer_session);
    let leases_dir = path::join(path, semaphore::CURATOR_LEASES);
    let acquirers_dir = path::join(path, semaphore::CURATOR_LOCKS);
    semaphore_lock(
        path,
        &semaphore,
        SemaphoreNodes {
            leases_dir: &leases_dir,
            lease_reads,
            acquirers_dir: &acquirers_dir,
            acquirer_reads: acquirers,
        },
        None,
        now_ms,
    )
}

/// The kazoo semaphore at `path` with `max_leases`, from the reads of its
/// leases (its children) and of its acquirers (in `<path>-__lock__`);
/// `None` when both are empty.
pub(crate) fn kazoo_semaphore(
    path: &str,
    max_leases: u32,
    leases: Reads,
    acquirers: Reads,
    now_ms: i64,
) -> Option<Lock> {
    let acquirers = contenders_only(acquirers);
    let acquirer_queue = LockQueue::from_children(acquirers.iter().map(|(n, _)| n.clone()));
    let (lease_list, lease_reads) = split_leases(leases);
    let semaphore = SemaphoreQueue::kazoo(lease_list, acquirer_queue);
    let acquirers_dir = semaphore::kazoo_lock_path(path);
    semaphore_lock(
        path,
        &semaphore,
        SemaphoreNodes {
            leases_dir: path,
            lease_reads,
            acquirers_dir: &acquirers_dir,
            acquirer_reads: acquirers.into_iter().collect(),
        },
        Some(max_leases),
        now_ms,
    )
}

/// Where a semaphore's nodes live and what was read of them.
struct SemaphoreNodes<'a> {
    leases_dir: &'a str,
    lease_reads: HashMap<String, NodeRead>,
    acquirers_dir: &'a str,
    acquirer_reads: HashMap<String, NodeRead>,
}

fn semaphore_lock(
    path: &str,
    semaphore: &SemaphoreQueue,
    mut nodes: SemaphoreNodes<'_>,
    max_leases: Option<u32>,
    now_ms: i64,
) -> Option<Lock> {
    let mut lease = |lease: &Lease| {
        let read = nodes.lease_reads.remove(&lease.name)?;
        Some(lease_contender(nodes.leases_dir, lease, read, now_ms))
    };
    let holders: Vec<Contender> = semaphore.holders().filter_map(&mut lease).collect();
    let mut waiters: Vec<Contender> = semaphore
        .pending()
        .and_then(&mut lease)
        .into_iter()
        .collect();
    for (acquirer, wait) in semaphore.waiting_acquirers() {
        if let Some(read) = nodes.acquirer_reads.remove(&acquirer.name) {
            let dir = nodes.acquirers_dir;
            let mut contender = queued_contender(dir, acquirer, ContenderMode::Lease, read, now_ms);
            contender.waiting_on = match wait {
                AcquirerWait::ForLease => None,
                AcquirerWait::OnAcquirer(ahead) => Some(path::join(dir, &ahead.name)),
                AcquirerWait::OnLease(lease) => Some(path::join(nodes.leases_dir, &lease.name)),
            };
            waiters.push(contender);
        }
    }
    if holders.is_empty() && waiters.is_empty() {
        return None;
    }
    Some(Lock {
        path: path.to_owned(),
        kind: LockKind::Semaphore,
        dialect: LockDialect::One(semaphore.dialect()),
        holders,
        waiters,
        max_leases,
        last_run: LastRun::Unread,
    })
}

/// The reads of nodes that are contenders by their name, type and data
/// ([`node::contender`]): a persistent `lock-0000000001` is some
/// application's data, not a lock.
fn contenders_only(mut reads: Reads) -> Reads {
    reads.retain(|(name, read)| node::contender(name, &read.stat, &read.data).is_some());
    reads
}

/// Splits lease reads into the leases the semaphore model needs and the
/// reads by name. Only ephemeral nodes are leases: a persistent hex-named
/// node is some application's data.
fn split_leases(reads: Reads) -> (Vec<Lease>, HashMap<String, NodeRead>) {
    let leases = reads
        .iter()
        .filter(|(_, read)| node::is_lease_type(&read.stat))
        .filter_map(|(name, read)| {
            let parsed = semaphore::parse_lease(name)?;
            Some(Lease {
                name: name.clone(),
                dialect: parsed.dialect,
                sequence: parsed.sequence,
                czxid: read.stat.czxid,
                session: read.stat.ephemeral_owner,
            })
        })
        .collect();
    (leases, reads.into_iter().collect())
}

/// The contender `queued` of the queue in `dir`, holding in `mode`, as
/// `read` at `now_ms`.
pub(crate) fn queued_contender(
    dir: &str,
    queued: &queue::QueueEntry,
    mode: ContenderMode,
    read: NodeRead,
    now_ms: i64,
) -> Contender {
    let identity = (queued.dialect, Some(queued.sequence), mode);
    Contender::read(&path::join(dir, &queued.name), identity, read, now_ms)
}

fn lease_contender(dir: &str, lease: &Lease, read: NodeRead, now_ms: i64) -> Contender {
    let identity = (lease.dialect, lease.sequence, ContenderMode::Lease);
    Contender::read(&path::join(dir, &lease.name), identity, read, now_ms)
}

impl Contender {
    /// The contender at `path`, of `(dialect, sequence, mode)`, as `read`
    /// at `now_ms`; it waits on no one until [`Contender::waiting_on`]
    /// says so, and its client is not yet known.
    fn read(
        path: &str,
        (dialect, sequence, mode): (Dialect, Option<i32>, ContenderMode),
        read: NodeRead,
        now_ms: i64,
    ) -> Contender {
        Contender {
            path: path.to_owned(),
            name: path::basename(path).to_owned(),
            dialect,
            sequence,
            mode,
            // The server's clock, or a forged stat, may say anything.
            age_ms: now_ms.saturating_sub(read.stat.ctime),
            stat: read.stat,
            data: read.data,
            waiting_on: None,
            client: None,
            watching: None,
        }
    }

    fn waiting_on(mut self, dir: &str, ahead: Option<&queue::QueueEntry>) -> Contender {
        self.waiting_on = ahead.map(|ahead| path::join(dir, &ahead.name));
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_100_000;
    const UUID: &str = "2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f";
    const HEX: &str = "0123456789abcdef0123456789abcdef";

    fn read(czxid: i64, session: i64, data: &[u8]) -> NodeRead {
        NodeRead {
            data: data.to_vec(),
            stat: zk::Stat {
                ctime: NOW - 1000 * czxid,
                mtime: NOW - 1000 * czxid,
                data_length: data.len() as i32,
                ..zk::test_stat(czxid, session)
            },
        }
    }

    fn reads(names: &[&str]) -> Reads {
        names
            .iter()
            .enumerate()
            .map(|(i, name)| (name.to_string(), read(i as i64 + 1, 0x100 + i as i64, b"")))
            .collect()
    }

    fn names(contenders: &[Contender]) -> Vec<&str> {
        contenders.iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn a_mutex_has_one_holder_and_waiters_name_the_node_ahead() {
        let lock = queue_lock(
            "/locks/a",
            reads(&["lock-0000000002", "lock-0000000001", "config"]),
            NOW,
        )
        .unwrap();
        assert_eq!(
            (lock.kind, lock.dialect),
            (LockKind::Mutex, LockDialect::One(Dialect::Generic))
        );
        assert_eq!(names(&lock.holders), ["lock-0000000001"]);
        assert_eq!(names(&lock.waiters), ["lock-0000000002"]);
        assert_eq!(
            lock.waiters[0].waiting_on.as_deref(),
            Some("/locks/a/lock-0000000001")
        );
        assert_eq!(lock.holders[0].path, "/locks/a/lock-0000000001");
        assert_eq!(lock.holders[0].age_ms, 2000);
        assert_eq!(lock.holders[0].mode, ContenderMode::Exclusive);
        assert!(queue_lock("/locks/a", reads(&["config"]), NOW).is_none());
    }

    #[test]
    fn readers_make_a_read_write_lock_and_several_dialects_a_mixed_one() {
        let lock = queue_lock(
            "/t",
            reads(&[
                "read-0000000001",
                &format!("{HEX}__rlock__0000000002"),
                "write-0000000003",
            ]),
            NOW,
        )
        .unwrap();
        assert_eq!(
            (lock.kind, lock.dialect),
            (LockKind::ReadWrite, LockDialect::Mixed)
        );
        assert_eq!(lock.holders.len(), 2);
        assert_eq!(lock.waiters[0].mode, ContenderMode::Exclusive);
        assert_eq!(lock.holders[1].mode, ContenderMode::Shared);
    }

    /// What a queue read in windows of `size` hands over: each contender's
    /// name and whom it waits on, in order.
    fn read_in_windows(
        names: &[&str],
        reads: &HashMap<&str, NodeRead>,
        size: usize,
    ) -> (Vec<(String, Option<String>)>, Option<LockSummary>) {
        let mut reading = QueueReading::new("/l", names.iter().map(|n| n.to_string()));
        let mut seen = Vec::new();
        // Every window confirms or drops each node it reads: one window a
        // node at most, however small.
        for _ in 0..names.len() {
            if reading.unread().is_empty() {
                break;
            }
            let window: Vec<Option<NodeRead>> = reading.unread()
                [..size.min(reading.unread().len())]
                .iter()
                .map(|queued| reads.get(queued.name.as_str()).cloned())
                .collect();
            for (contender, holding) in reading.confirm(window, NOW) {
                assert_eq!(holding, contender.waiting_on.is_none(), "{contender:?}");
                seen.push((contender.name, contender.waiting_on));
            }
        }
        assert!(reading.unread().is_empty(), "every node read");
        (seen, reading.summary())
    }

    #[test]
    fn a_queue_read_in_windows_stands_as_it_does_read_whole() {
        // A persistent look-alike writer in front and one at every window
        // boundary, and a writer gone since the listing: none of them is a
        // contender, so the readers ahead of the real writer all hold.
        let listed = [
            "write-0000000000",
            "read-0000000001",
            "write-0000000002",
            "read-0000000003",
            "write-0000000004",
            "read-0000000005",
            "read-0000000006",
            "write-0000000007",
            "read-0000000008",
        ];
        let mut all = reads(&listed);
        for (name, read) in &mut all {
            if ["write-0000000000", "write-0000000002", "write-0000000004"].contains(&name.as_str())
            {
                read.stat.ephemeral_owner = 0;
            }
        }
        let whole = queue_lock("/l", all.clone(), NOW).unwrap();
        assert_eq!(
            names(&whole.holders),
            [
                "read-0000000001",
                "read-0000000003",
                "read-0000000005",
                "read-0000000006"
            ]
        );
        assert_eq!(
            whole.waiters[1].waiting_on.as_deref(),
            Some("/l/write-0000000007")
        );
        // The gone node was listed, and its read finds nothing.
        let mut reads: HashMap<&str, NodeRead> =
            all.iter().map(|(n, r)| (n.as_str(), r.clone())).collect();
        reads.remove("read-0000000005");
        let whole = queue_lock(
            "/l",
            all.iter()
                .filter(|&(n, _)| n != "read-0000000005")
                .cloned()
                .collect(),
            NOW,
        )
        .unwrap();
        let expected: Vec<(String, Option<String>)> = whole
            .standings()
            .map(|(c, _)| (c.name.clone(), c.waiting_on.clone()))
            .collect();
        assert_eq!(expected.len(), 5);
        for size in 1..=listed.len() {
            let (seen, summary) = read_in_windows(&listed, &reads, size);
            assert_eq!(seen, expected, "windows of {size}");
            let summary = summary.unwrap();
            assert_eq!(
                (summary.kind, summary.holders, summary.waiters),
                (LockKind::ReadWrite, 3, 2),
                "windows of {size}"
            );
        }
    }

    #[test]
    fn a_queue_of_look_alikes_only_is_no_lock() {
        let mut all = reads(&["lock-0000000001", "lock-0000000002"]);
        for (_, read) in &mut all {
            read.stat.ephemeral_owner = 0;
        }
        let reads: HashMap<&str, NodeRead> =
            all.iter().map(|(n, r)| (n.as_str(), r.clone())).collect();
        let listed = ["lock-0000000001", "lock-0000000002"];
        assert_eq!(read_in_windows(&listed, &reads, 1), (Vec::new(), None));
    }

    #[test]
    fn candidates_make_an_election_whose_lowest_leads() {
        let latch = |seq: i32| format!("_c_{UUID}-latch-{seq:010}");
        let lock = queue_lock("/e", reads(&[&latch(2), &latch(1)]), NOW).unwrap();
        assert_eq!(
            (lock.kind, lock.dialect),
            (LockKind::Election, LockDialect::One(Dialect::Curator))
        );
        assert_eq!(names(&lock.holders), [latch(1)]);
        assert_eq!(names(&lock.waiters), [latch(2)]);
        assert!(!lock.kind.may_be_broken());
        assert!(LockKind::Mutex.may_be_broken());
        // A persistent n_ node is some application's sequence, no candidate.
        let mut persistent = reads(&["n_0000000001"]);
        persistent[0].1.stat.ephemeral_owner = 0;
        assert!(queue_lock("/e", persistent, NOW).is_none());
    }

    #[test]
    fn a_curator_semaphore_shows_its_pending_lease_and_queued_acquirers() {
        let lease = |seq: i32| format!("_c_{UUID}-lease-{seq:010}");
        let leases = vec![
            (lease(1), read(1, 0xa, b"10.0.0.1")),
            (lease(2), read(2, 0xb, b"10.0.0.2")),
            (lease(3), read(3, 0xc, b"10.0.0.3")),
        ];
        let acquirers = vec![
            (format!("_c_{UUID}-lock-0000000005"), read(4, 0xc, b"")),
            (format!("_c_{UUID}-lock-0000000006"), read(5, 0xd, b"")),
        ];
        let lock = curator_semaphore("/s", leases, acquirers, NOW).unwrap();
        assert_eq!(
            (lock.kind, lock.dialect),
            (LockKind::Semaphore, LockDialect::One(Dialect::Curator))
        );
        assert_eq!(names(&lock.holders), [lease(1), lease(2)]);
        assert_eq!(lock.holders[0].path, format!("/s/leases/{}", lease(1)));
        assert_eq!(
            names(&lock.waiters),
            [lease(3), format!("_c_{UUID}-lock-0000000006")]
        );
        assert_eq!(lock.waiters[0].waiting_on, None);
        // Behind the pending lease's client in the internal mutex.
        assert_eq!(
            lock.waiters[1].waiting_on,
            Some(format!("/s/leases/{}", lease(3)))
        );
        assert!(lock.contenders().all(|c| c.mode == ContenderMode::Lease));
        assert_eq!(lock.holders[0].owner_text(), "10.0.0.1");
    }

    #[test]
    fn a_kazoo_semaphore_holds_by_lease_nodes_and_queues_on_its_lock() {
        let other = "fedcba9876543210fedcba9876543210";
        let leases = vec![
            (other.to_owned(), read(7, 0x2, b"worker-2")),
            (HEX.to_owned(), read(3, 0x1, b"worker-1")),
        ];
        let acquirers = reads(&[&format!("{HEX}__lock__0000000000")]);
        let lock = kazoo_semaphore("/s", 2, leases, acquirers, NOW).unwrap();
        assert_eq!(names(&lock.holders), [HEX, other]);
        assert_eq!(lock.holders[0].sequence, None);
        assert_eq!(lock.max_leases, Some(2));
        assert_eq!(
            lock.waiters[0].path,
            format!("/s-__lock__/{HEX}__lock__0000000000")
        );
        assert_eq!(lock.waiters[0].waiting_on, None);
        assert!(kazoo_semaphore("/s", 2, Vec::new(), Vec::new(), NOW).is_none());
    }

    #[test]
    fn owner_text_prefers_zklock_then_hbase_then_data_then_session() {
        let mut contender = queue_lock("/a", reads(&["lock-0000000001"]), NOW)
            .unwrap()
            .holders
            .remove(0);
        assert_eq!(contender.owner_text(), "session 0x100");
        contender.data = b"host-\x07".to_vec();
        assert_eq!(contender.owner_text(), "host-\\x07");
        let owner = Owner::of_this_process(None, Some("v2".into()));
        contender.data = owner.to_bytes();
        assert_eq!(
            contender.owner_text(),
            format!("{} \"v2\"", owner.summary())
        );
        let runs = Owner::of_this_process(Some(vec!["deploy".into(), "--to".into()]), None);
        contender.data = runs.to_bytes();
        assert_eq!(
            contender.owner_text(),
            format!("{} deploy --to", runs.summary())
        );
        contender.dialect = Dialect::Hbase;
        contender.data = b"PBUF\x2a\x05alter".to_vec();
        assert_eq!(contender.owner_text(), "(alter)");
        assert_eq!(
            contender.table_lock().unwrap().purpose.as_deref(),
            Some("alter")
        );
    }
}
