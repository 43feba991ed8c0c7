//! The wait-for graph across locks: who waits on whom, beyond one queue.
//!
//! Inside a lock, a waiter waits on the contenders the queue's rules name
//! ([`queue::blockers`], the rules `lock` acts on). Across locks, a
//! contender is let go only when its owner goes on, and its owner goes on
//! only once its other waits are granted. Two contenders have one owner
//! when they share a session (possible: one session may serve several
//! threads), when one zklock holds several locks (proven: a zklock is one
//! thread of work), or when a zklock's owner record says it is nested in
//! the other's hold (proven: it checked its own ancestry). A detached
//! holder has no process of its own that waits: the process that started
//! it (and the one it lives for) stands for it, so a zklock waiter whose
//! recorded lineage has that process waits as its owner (possible only: the
//! shell may run that waiter in the background, or release the hold
//! later). Owner records count only as written at creation: anyone may
//! rewrite an open node's data.
//!
//! The graph holds the contenders of the contended locks only (a wait
//! elsewhere makes that lock contended too), one vertex per owner session
//! instead of an edge between every two of its contenders, and one vertex
//! per full semaphore for "any of its lease holders" instead of an edge
//! from every waiter to every holder, so it grows with the waiters and
//! their sessions, and stays linear in a queue's length and in a
//! semaphore's leases and waiters alike. A cycle keeps a semaphore's wait
//! as one [`Knot`] of waiters and holders, never as their pairs.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use serde::Serialize;

use super::locks::{Contender, LastRun, Lock, LockKind, LockSummary};
use crate::lock::{self, Lineage, Owner, queue};

/// How a contender's owner is known to wait elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Via {
    /// The other wait is on the same ZooKeeper session.
    Session,
    /// The other wait is a zklock nested in this hold.
    Nesting,
    /// One zklock holds or waits for both locks.
    Locks,
    /// This is a detached holder, and the other wait is a zklock started
    /// by the process that started it, or by the one it lives for.
    Detached,
}

impl Via {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Via::Session => "session",
            Via::Nesting => "nesting",
            Via::Locks => "locks",
            Via::Detached => "detached",
        }
    }

    /// Why a link this way leaves a cycle only possible, if it does.
    fn doubt(self) -> Option<Doubt> {
        match self {
            Via::Session => Some(Doubt::Session),
            Via::Detached => Some(Doubt::Detached),
            Via::Nesting | Via::Locks => None,
        }
    }
}

/// Why a cycle is only possible, not certain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Doubt {
    /// A waiter gives up by itself at its `-w` deadline.
    Deadline,
    /// A semaphore's waiter goes on once any one lease holder does.
    Semaphore,
    /// Only a session links two waits: zklock cannot see the process
    /// behind it, which may serve several threads, one of which goes on.
    Session,
    /// A detached holder's starter stands for it, and may run its waiter
    /// in the background, or release the hold later.
    Detached,
    /// A node of the cycle changed between the two readings.
    Changed,
}

/// One contender of a contended lock, as the graph needs it.
#[derive(Clone, Debug)]
pub(crate) struct Vertex {
    /// Index into the graph's locks.
    pub lock: usize,
    pub path: String,
    pub session: i64,
    pub owner_text: String,
    /// The program its owner record names, if any.
    pub program: Option<String>,
    pub age_ms: i64,
    pub holding: bool,
    /// The node's czxid and mzxid, to tell it was not changed since.
    pub zxids: (i64, i64),
    /// True when the trusted owner record has a `-w` deadline.
    deadline: bool,
    /// True when the trusted owner record says its zklock looks for
    /// cycles through its own wait while it waits.
    checks_cycles: bool,
    /// The owner record, when zklock wrote it at the node's creation, until
    /// the edges are made. Boxed: inline it would be most of every vertex,
    /// record or none, and of the graph's memory.
    record: Option<Box<Owner>>,
}

/// A lock of the graph.
#[derive(Clone, Debug)]
pub(crate) struct LockVertex {
    pub path: String,
    /// The holder that has held longest, as an index of the graph's
    /// contenders.
    oldest_holder: Option<usize>,
}

/// How a vertex goes on: once all the vertices it waits on went (a queue
/// waiter, a holder, an owner), or once any of them did (a semaphore's
/// "any lease holder": one lease going suffices).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Need {
    All,
    Any,
}

/// The owner of one session's contenders.
#[derive(Clone, Debug)]
struct OwnerVertex {
    via: Via,
}

/// A semaphore whose every lease is held, with waiters: each waiter waits
/// on its one "any lease holder" vertex, which goes on once any holder
/// does. Its contenders are contiguous in the graph, holders first.
#[derive(Clone, Debug)]
struct AnyHolder {
    /// Index into the graph's locks.
    lock: usize,
    holders: Range<usize>,
    waiters: Range<usize>,
}

/// The wait-for graph of the contended locks under one path.
#[derive(Debug, Default)]
pub(crate) struct WaitGraph {
    pub locks: Vec<LockVertex>,
    pub contenders: Vec<Vertex>,
    owners: Vec<OwnerVertex>,
    any_holders: Vec<AnyHolder>,
    /// Out-edges of every vertex: contenders first, then owners, then
    /// the semaphores' "any lease holder" vertices.
    edges: Vec<Vec<usize>>,
    need: Vec<Need>,
    /// For each holder, the zklock waiters its owner waits as, and how:
    /// those nested in its hold; for a detached holder, those its stand-ins
    /// started.
    waits_as: HashMap<usize, Vec<(usize, Via)>>,
    /// For each contender, its session's owner vertex.
    owner_of: Vec<Option<usize>>,
}

/// A wait-for cycle (or a semaphore's knot).
#[derive(Clone, Debug)]
pub(crate) struct Cycle {
    /// Each wait of the cycle inside a queue: (waiter, holder, how the
    /// holder's owner waits on), as indexes of the graph's contenders.
    pub edges: Vec<(usize, usize, Via)>,
    /// Each semaphore of the cycle whose waiters wait on any of its
    /// holders: kept whole, not as every waiter-holder pair.
    pub knots: Vec<Knot>,
    /// Why it is only possible, each once, in order; none when every edge
    /// is proven (a wait in a queue, not for a semaphore's lease, which any
    /// holder may free) and no waiter gives up by itself: it is certain.
    pub doubts: Vec<Doubt>,
    /// How long the cycle has stood: the age of its youngest contender.
    pub since_ms: i64,
    /// Its youngest contender, where deleting one node breaks it.
    pub youngest: usize,
    /// Every contender on it, including the waiters whose wait is on
    /// another waiter of their own queue (not an edge of their own).
    pub contenders: Vec<usize>,
}

/// A semaphore's part in a cycle: its waiters there, each of which goes
/// on once any one of its holders there does, and every one of those
/// holders' owners waits on in the cycle.
#[derive(Clone, Debug)]
pub(crate) struct Knot {
    /// Index into the graph's locks.
    pub lock: usize,
    /// In queue order, as indexes of the graph's contenders.
    pub waiters: Vec<usize>,
    /// In grant order, each with how its owner waits on.
    pub holders: Vec<(usize, Via)>,
}

impl Cycle {
    /// True when nothing leaves the cycle in doubt.
    pub(crate) fn certain(&self) -> bool {
        self.doubts.is_empty()
    }

    /// Adds a reason for doubt.
    pub(crate) fn doubt(&mut self, doubt: Doubt) {
        if let Err(at) = self.doubts.binary_search(&doubt) {
            self.doubts.insert(at, doubt);
        }
    }

    /// Every contender a wait of the cycle names, a knot's each once;
    /// a contender on several waits comes as often.
    pub(crate) fn nodes(&self) -> impl Iterator<Item = usize> + '_ {
        let pairs = self.edges.iter().flat_map(|&(w, h, _)| [w, h]);
        let knots = self.knots.iter().flat_map(|knot| {
            let holders = knot.holders.iter().map(|&(h, _)| h);
            knot.waiters.iter().copied().chain(holders)
        });
        pairs.chain(knots)
    }
}

/// One hop of a wait chain: a blocker in another lock, and how the
/// previous blocker's owner comes to wait on it.
#[derive(Clone, Debug)]
pub(crate) struct Hop {
    pub blocker: usize,
    pub via: Via,
    /// True on the hop that comes back to a blocker already on the chain.
    pub loops: bool,
}

/// Builds a [`WaitGraph`] a lock at a time, as a walk hands them over, so
/// that only the contended locks' contenders are kept, and only what the
/// graph needs of them.
#[derive(Debug, Default)]
pub(crate) struct GraphBuilder {
    graph: WaitGraph,
    by_path: HashMap<String, usize>,
    queue_edges: Vec<(Vec<usize>, Need)>,
}

impl GraphBuilder {
    /// Adds `lock` when it is contended; elections and leader nodes never
    /// count (their participants are not blocked).
    pub(crate) fn add(&mut self, lock: &Lock) {
        if !lock.waiters.is_empty() && lock.kind.may_be_broken() {
            let graph = &mut self.graph;
            graph.add_lock(lock, &mut self.by_path, &mut self.queue_edges);
        }
    }

    /// True when a lock at `path` was added.
    pub(crate) fn has_lock(&self, path: &str) -> bool {
        self.graph.lock_at(path).is_some()
    }

    /// Starts on the lock `stat` shows, whose contenders come a window at
    /// a time after the rest of the graph was added (see [`Focus`]).
    pub(crate) fn focus(&self) -> Focus {
        Focus {
            holders: Vec::new(),
            waiters: Vec::new(),
            sessions: self.graph.contenders.iter().map(|v| v.session).collect(),
            paths: self.by_path.keys().cloned().collect(),
            stand_ins: self
                .graph
                .contenders
                .iter()
                .filter(|vertex| vertex.holding)
                .filter_map(|vertex| vertex.record.as_deref())
                .flat_map(stand_ins)
                .collect(),
            ties: HashSet::new(),
        }
    }

    /// Adds the lock `summary`, with what a [`Focus`] kept of its
    /// contenders, contended or not: its waiters are counted in its
    /// summary, not kept.
    pub(crate) fn add_focus(&mut self, focus: Focus, summary: &LockSummary) {
        if summary.kind.may_be_broken() {
            let lock = Lock {
                path: summary.path.clone(),
                kind: summary.kind,
                dialect: summary.dialect,
                holders: focus.holders,
                waiters: focus.waiters,
                max_leases: summary.max_leases,
                last_run: LastRun::Unread,
            };
            let graph = &mut self.graph;
            graph.add_lock(&lock, &mut self.by_path, &mut self.queue_edges);
        }
    }

    /// The graph of every lock added.
    pub(crate) fn finish(mut self) -> WaitGraph {
        self.graph.link_owners(&self.by_path, self.queue_edges);
        self.graph
    }
}

/// What the graph keeps of one long lock, read a window at a time, for
/// its chain: its holders, and of its waiters only one for each tie to the
/// rest of the graph (a session of a contender there, with the process its
/// records name; a hold there that an owner record is nested in; a process
/// that stands for a detached holder there, in its lineage). A
/// waiter's chain beyond its queue is the chain of the queue's holders, so
/// the waiters with the same tie lead to the same place, and the untied
/// ones lead nowhere a chain goes: memory grows with the holders and the
/// ties, not with the queue. Such a graph gives chains, not cycles.
#[derive(Debug)]
pub(crate) struct Focus {
    holders: Vec<Contender>,
    /// The waiters kept, one for each tie.
    waiters: Vec<Contender>,
    /// The sessions of every contender in the graph or held here.
    sessions: HashSet<i64>,
    /// The paths of every contender in the graph or held here.
    paths: HashSet<String>,
    /// The processes that stand for the detached holders in the graph or
    /// here.
    stand_ins: HashSet<HostProcess>,
    /// The ties of the waiters kept.
    ties: HashSet<Tie>,
}

/// How a waiter of a [`Focus`] is tied to the rest of the graph.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Tie {
    /// Its session, and the process its trusted record names, if any (the
    /// process tells a zklock holding several locks from a shared session).
    Session(i64, Option<Process>),
    /// A hold its trusted record says it is nested in.
    Nesting(String),
    /// A process in its trusted record's lineage that stands for a
    /// detached holder.
    Lineage(HostProcess),
}

impl Focus {
    /// Looks at the next contender in queue order (holders come first),
    /// and keeps a copy when the graph needs it.
    pub(crate) fn offer(&mut self, contender: &Contender, holding: bool) {
        if holding {
            self.sessions.insert(contender.session());
            self.paths.insert(contender.path.clone());
            let record = trusted_record(contender);
            self.stand_ins.extend(record.iter().flat_map(stand_ins));
            self.holders.push(contender.clone());
            return;
        }
        let mut new = false;
        for tie in self.ties_of(contender) {
            new |= self.ties.insert(tie);
        }
        if new {
            // Its wait inside the queue is on the holders' chain already.
            self.waiters.push(Contender {
                waiting_on: None,
                ..contender.clone()
            });
        }
    }

    fn ties_of(&self, waiter: &Contender) -> Vec<Tie> {
        let record = trusted_record(waiter);
        let session = waiter.session();
        let by_session = (session != 0 && self.sessions.contains(&session))
            .then(|| Tie::Session(session, record.as_ref().map(process)));
        let by_nesting = record
            .iter()
            .flat_map(|owner| owner.nested_in.iter())
            .filter(|hold| self.paths.contains(*hold))
            .map(|hold| Tie::Nesting(hold.clone()));
        let by_lineage = record
            .iter()
            .flat_map(lineage_of)
            .filter(|process| self.stand_ins.contains(process))
            .map(Tie::Lineage);
        by_session
            .into_iter()
            .chain(by_nesting)
            .chain(by_lineage)
            .collect()
    }
}

/// A process on a host since its boot, as an owner record names it.
type Process = (String, u32, Option<String>);

fn process(owner: &Owner) -> Process {
    let boot = owner.identity.as_ref().map(|i| i.boot_id.clone());
    (owner.host.clone(), owner.pid, boot)
}

/// A process as a lineage names it: its boot, its pid namespace, its pid
/// and start.
type HostProcess = (String, String, lock::Process);

/// The processes of a record's lineage, at most [`Lineage::MAX_PROCESSES`]
/// of them: the zklock that wrote it and those that wait while it waits.
fn lineage_of(owner: &Owner) -> Vec<HostProcess> {
    let Some(lineage) = &owner.lineage else {
        return Vec::new();
    };
    let processes = lineage.processes.iter().take(Lineage::MAX_PROCESSES);
    let place = |&process| (lineage.boot_id.clone(), lineage.pid_ns.clone(), process);
    processes.map(place).collect()
}

/// The processes that stand for a detached holder, as its record names
/// them: the one that started it, the one it lives for.
fn stand_ins(owner: &Owner) -> Vec<HostProcess> {
    let (Some(lineage), Some(detached)) = (&owner.lineage, &owner.detached) else {
        return Vec::new();
    };
    let place = |process| (lineage.boot_id.clone(), lineage.pid_ns.clone(), process);
    detached.owners().map(place).collect()
}

impl WaitGraph {
    /// The graph of `locks` (see [`GraphBuilder::add`]).
    #[cfg(test)]
    pub(crate) fn new<'a>(locks: impl IntoIterator<Item = &'a Lock>) -> WaitGraph {
        let mut builder = GraphBuilder::default();
        for lock in locks {
            builder.add(lock);
        }
        builder.finish()
    }

    fn add_lock(
        &mut self,
        lock: &Lock,
        by_path: &mut HashMap<String, usize>,
        queue_edges: &mut Vec<(Vec<usize>, Need)>,
    ) {
        let index = self.locks.len();
        let first = self.contenders.len();
        let mut modes = Vec::new();
        for (contender, holding) in lock.standings() {
            by_path.insert(contender.path.clone(), self.contenders.len());
            modes.push(contender.mode);
            self.contenders.push(vertex(index, contender, holding));
        }
        let oldest_holder = lock
            .oldest_holder()
            .and_then(|holder| by_path.get(&holder.path).copied());
        self.locks.push(LockVertex {
            path: lock.path.clone(),
            oldest_holder,
        });
        let free_lease = lock
            .max_leases
            .is_some_and(|max| lock.holders.len() < max as usize);
        for (at, contender) in lock.contenders().enumerate() {
            let blocking = match (lock.kind, contender.waiting_on.as_deref()) {
                _ if at < lock.holders.len() => (Vec::new(), Need::All),
                (LockKind::Semaphore, _) => (Vec::new(), Need::All),
                (_, Some(ahead)) => match by_path.get(ahead) {
                    Some(&named) if named >= first => {
                        let range = queue::blockers(&modes, at, named - first);
                        (
                            (first + range.start..first + range.end).collect(),
                            Need::All,
                        )
                    }
                    _ => (Vec::new(), Need::All),
                },
                (_, None) => (Vec::new(), Need::All),
            };
            queue_edges.push(blocking);
        }
        if lock.kind == LockKind::Semaphore && !free_lease {
            let holders = first..first + lock.holders.len();
            self.any_holders.push(AnyHolder {
                lock: index,
                waiters: holders.end..self.contenders.len(),
                holders,
            });
        }
    }

    /// Adds the owners' vertices and every edge. The owner records are not
    /// needed after, and go: they would be most of the graph's memory.
    fn link_owners(
        &mut self,
        by_path: &HashMap<String, usize>,
        queue_edges: Vec<(Vec<usize>, Need)>,
    ) {
        let count = self.contenders.len();
        let mut sessions: HashMap<i64, Vec<usize>> = HashMap::new();
        for (index, vertex) in self.contenders.iter().enumerate() {
            if vertex.session != 0 {
                sessions.entry(vertex.session).or_default().push(index);
            }
        }
        let (mut edges, mut need): (Vec<_>, Vec<_>) = queue_edges.into_iter().unzip();
        self.owner_of = vec![None; count];
        let mut sessions: Vec<(i64, Vec<usize>)> = sessions.into_iter().collect();
        sessions.sort_unstable();
        for (_, members) in sessions {
            let waiting: Vec<usize> = members
                .iter()
                .copied()
                .filter(|&m| !self.contenders[m].holding)
                .collect();
            if members.len() < 2 || waiting.is_empty() {
                continue;
            }
            let owner = count + self.owners.len();
            self.owners.push(OwnerVertex {
                via: self.session_via(&members),
            });
            for &member in &members {
                self.owner_of[member] = Some(owner - count);
                if self.contenders[member].holding {
                    edges[member].push(owner);
                }
            }
            edges.push(waiting);
            need.push(Need::All);
        }
        for group in &self.any_holders {
            let vertex = edges.len();
            for waiter in group.waiters.clone() {
                edges[waiter].push(vertex);
            }
            edges.push(group.holders.clone().collect());
            need.push(Need::Any);
        }
        let records = self.records();
        let nesting = self.nesting_links(&records, by_path);
        let detached = self.detached_links(&records);
        let links = nesting.into_iter().map(|link| (link, Via::Nesting));
        let links = links.chain(detached.into_iter().map(|link| (link, Via::Detached)));
        for ((holder, waiter), via) in links {
            edges[holder].push(waiter);
            let waits_as = self.waits_as.entry(holder).or_default();
            waits_as.push((waiter, via));
        }
        self.edges = edges;
        self.need = need;
        for vertex in &mut self.contenders {
            vertex.record = None;
        }
    }

    /// The trusted owner records of the contenders, by index (borrowed: a
    /// copy beside them would double the graph at its peak).
    fn records(&self) -> Vec<(usize, &Owner)> {
        self.contenders
            .iter()
            .enumerate()
            .filter_map(|(index, vertex)| Some((index, vertex.record.as_deref()?)))
            .collect()
    }

    /// Each hold with each zklock waiter whose record says it is nested in
    /// it (and came after it).
    fn nesting_links(
        &self,
        records: &[(usize, &Owner)],
        by_path: &HashMap<String, usize>,
    ) -> Vec<(usize, usize)> {
        let mut links = Vec::new();
        for &(index, record) in records {
            for enclosing in &record.nested_in {
                if let Some(&hold) = by_path.get(enclosing)
                    && self.contenders[hold].zxids.0 < self.contenders[index].zxids.0
                {
                    links.push((hold, index));
                }
            }
        }
        links
    }

    /// Each detached holder with each zklock waiter that waits as its
    /// owner: one whose lineage has a process that stands for the holder.
    fn detached_links(&self, records: &[(usize, &Owner)]) -> Vec<(usize, usize)> {
        let holding = |index: &usize| self.contenders[*index].holding;
        let mut waiting_as: HashMap<HostProcess, Vec<usize>> = HashMap::new();
        for (index, record) in records.iter().filter(|(index, _)| !holding(index)) {
            for process in lineage_of(record) {
                waiting_as.entry(process).or_default().push(*index);
            }
        }
        let mut links = Vec::new();
        for (holder, record) in records.iter().filter(|(index, _)| holding(index)) {
            let mut waiters: Vec<usize> = stand_ins(record)
                .iter()
                .filter_map(|process| waiting_as.get(process))
                .flatten()
                .copied()
                .collect();
            waiters.sort_unstable();
            waiters.dedup();
            links.extend(waiters.into_iter().map(|waiter| (*holder, waiter)));
        }
        links
    }

    /// `locks` when every member is one zklock (trusted records naming the
    /// same process on the same host and boot: a zklock never shares its
    /// session between threads of work), else `session`.
    fn session_via(&self, members: &[usize]) -> Via {
        let process = |m: &usize| self.contenders[*m].record.as_deref().map(process);
        let first = process(&members[0]);
        if first.is_some() && members.iter().all(|m| process(m) == first) {
            Via::Locks
        } else {
            Via::Session
        }
    }

    /// The vertices stuck for ever as things stand: those that can go on
    /// only once some vertex goes on that itself cannot (a least fixed
    /// point: a vertex is free when all, or for a semaphore's "any lease
    /// holder" any, of the vertices it waits on are free).
    fn stuck(&self) -> Vec<bool> {
        let n = self.edges.len();
        let mut into: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (from, outs) in self.edges.iter().enumerate() {
            for &to in outs {
                into[to].push(from);
            }
        }
        let mut left: Vec<usize> = (0..n)
            .map(|v| match self.need[v] {
                _ if self.edges[v].is_empty() => 0,
                Need::All => self.edges[v].len(),
                Need::Any => 1,
            })
            .collect();
        let mut free: Vec<usize> = (0..n).filter(|&v| left[v] == 0).collect();
        let mut stuck = vec![true; n];
        while let Some(v) = free.pop() {
            stuck[v] = false;
            for &p in &into[v] {
                if left[p] > 0 {
                    left[p] -= 1;
                    if left[p] == 0 {
                        free.push(p);
                    }
                }
            }
        }
        stuck
    }

    /// Every cycle or knot: each strongly connected part of the stuck
    /// vertices that loops.
    pub(crate) fn cycles(&self) -> Vec<Cycle> {
        let stuck = self.stuck();
        strongly_connected(&self.edges, &stuck)
            .into_iter()
            .filter_map(|part| self.cycle(&part))
            .collect()
    }

    fn cycle(&self, part: &[usize]) -> Option<Cycle> {
        let count = self.contenders.len();
        let inside: HashSet<usize> = part.iter().copied().collect();
        let loops = part.len() > 1 || self.edges[part[0]].contains(&part[0]);
        if !loops {
            return None;
        }
        // How a holder's owner waits on inside the cycle, if it does.
        let link = |holder: usize| -> Option<Via> {
            let next = self.edges[holder]
                .iter()
                .find(|&&next| inside.contains(&next))?;
            match *next {
                next if next >= count => Some(self.owners[next - count].via),
                next => self
                    .waits_as
                    .get(&holder)?
                    .iter()
                    .find(|w| w.0 == next)
                    .map(|w| w.1),
            }
        };
        let mut edges = Vec::new();
        for &waiter in part.iter().filter(|&&v| v < count) {
            if self.contenders[waiter].holding {
                continue;
            }
            let holders = self.edges[waiter]
                .iter()
                .filter(|&&h| h < count && inside.contains(&h));
            for &holder in holders {
                if let Some(via) = link(holder) {
                    edges.push((waiter, holder, via));
                }
            }
        }
        let any_holders = count + self.owners.len();
        let knots: Vec<Knot> = part
            .iter()
            .filter_map(|&v| self.any_holders.get(v.checked_sub(any_holders)?))
            .map(|group| Knot {
                lock: group.lock,
                waiters: group
                    .waiters
                    .clone()
                    .filter(|w| inside.contains(w))
                    .collect(),
                holders: group
                    .holders
                    .clone()
                    .filter(|h| inside.contains(h))
                    .filter_map(|h| Some((h, link(h)?)))
                    .collect(),
            })
            .collect();
        if edges.is_empty() && knots.is_empty() {
            return None;
        }
        let members = || part.iter().copied().filter(|&v| v < count);
        // The youngest by creation order: the zxid orders every write of
        // the ensemble, where ages are read at slightly different moments
        // of the walk and may tie or cross.
        let youngest = members().max_by_key(|&v| self.contenders[v].zxids.0)?;
        let doubts = self.doubts(&edges, &knots);
        Some(Cycle {
            edges,
            knots,
            doubts,
            since_ms: self.contenders[youngest].age_ms,
            youngest,
            contenders: members().collect(),
        })
    }

    /// Why a cycle of `edges` and `knots` is only possible, in order: a knot
    /// is never certain (any of its holders may free a lease), nor is a link
    /// that is not proven, nor a waiter that gives up by itself.
    fn doubts(&self, edges: &[(usize, usize, Via)], knots: &[Knot]) -> Vec<Doubt> {
        let knot_holders = knots.iter().flat_map(|knot| &knot.holders);
        let links = edges.iter().map(|e| e.2).chain(knot_holders.map(|h| h.1));
        let knot_waiters = knots.iter().flat_map(|knot| &knot.waiters).copied();
        let mut waiters = edges.iter().map(|e| e.0).chain(knot_waiters);
        let semaphore = (!knots.is_empty()).then_some(Doubt::Semaphore);
        let deadline = waiters
            .any(|waiter| self.contenders[waiter].deadline)
            .then_some(Doubt::Deadline);
        let mut doubts: Vec<Doubt> = links
            .filter_map(Via::doubt)
            .chain(semaphore)
            .chain(deadline)
            .collect();
        doubts.sort_unstable();
        doubts.dedup();
        doubts
    }

    /// The chain of blockers beyond the queue of the lock `lock`, starting
    /// from the holder that has held it longest: where that holder's owner
    /// waits, on whom, and so on to the root blocker, following at each
    /// branch the blocker that has held longest.
    pub(crate) fn chain(&self, lock: usize) -> Vec<Hop> {
        let Some(mut at) = self.locks[lock].oldest_holder else {
            return Vec::new();
        };
        let mut seen = HashSet::from([at]);
        let mut hops = Vec::new();
        while let Some((blocker, via)) = self.next_blocker(at) {
            let loops = !seen.insert(blocker);
            hops.push(Hop {
                blocker,
                via,
                loops,
            });
            if loops {
                break;
            }
            at = blocker;
        }
        hops
    }

    /// Where the owner of contender `at` waits: the blocker there that has
    /// held longest, and how.
    fn next_blocker(&self, at: usize) -> Option<(usize, Via)> {
        let count = self.contenders.len();
        let by_session = self.owner_of[at].into_iter().flat_map(|owner| {
            let via = self.owners[owner].via;
            self.edges[count + owner].iter().map(move |&w| (w, via))
        });
        let waits_as = self.waits_as.get(&at).into_iter().flatten().copied();
        by_session
            .chain(waits_as)
            .filter(|&(w, _)| w != at && !self.contenders[w].holding)
            .filter_map(|(w, via)| {
                let blocker = self.locks[self.contenders[w].lock].oldest_holder?;
                Some((blocker, via))
            })
            .max_by_key(|&(blocker, _)| self.contenders[blocker].age_ms)
    }

    /// The index of the lock at `path`, when it is in the graph.
    pub(crate) fn lock_at(&self, path: &str) -> Option<usize> {
        self.locks.iter().position(|lock| lock.path == path)
    }
}

impl Vertex {
    /// True when its trusted owner record says its zklock looks for
    /// cycles through its own wait while it waits.
    pub(crate) fn checks_cycles(&self) -> bool {
        self.checks_cycles
    }
}

/// The contender's owner record, when written at its creation: anyone may
/// rewrite an open node's data.
fn trusted_record(contender: &Contender) -> Option<Owner> {
    trusted(contender).then(|| contender.owner()).flatten()
}

/// True when the node's data is as written at its creation.
fn trusted(contender: &Contender) -> bool {
    contender.stat.mzxid == contender.stat.czxid
}

/// The vertex of `contender`, its owner record parsed once for all three
/// things it gives.
fn vertex(lock: usize, contender: &Contender, holding: bool) -> Vertex {
    let owner = contender.owner();
    let owner_text = owner
        .as_ref()
        .map_or_else(|| contender.owner_text(), Owner::text);
    let program = owner
        .as_ref()
        .and_then(|owner| owner.command.as_ref()?.first().cloned());
    let record = owner.filter(|_| trusted(contender)).map(Box::new);
    Vertex {
        lock,
        path: contender.path.clone(),
        session: contender.session(),
        owner_text,
        program,
        age_ms: contender.age_ms,
        holding,
        zxids: (contender.stat.czxid, contender.stat.mzxid),
        deadline: record.as_ref().is_some_and(|r| r.deadline_ms.is_some()),
        checks_cycles: record.as_ref().is_some_and(|r| r.checks_cycles),
        record,
    }
}

/// The strongly connected parts of the graph `edges` among the vertices
/// `keep` says yes to (Tarjan's, without recursion, so a long chain cannot
/// overflow the stack).
fn strongly_connected(edges: &[Vec<usize>], keep: &[bool]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let n = edges.len();
    let mut order = vec![UNSEEN; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut parts = Vec::new();
    let mut next = 0;
    for root in (0..n).filter(|&v| keep[v]) {
        if order[root] != UNSEEN {
            continue;
        }
        let mut calls = vec![(root, 0usize)];
        order[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut edge)) = calls.last_mut() {
            if let Some(&w) = edges[v].get(*edge) {
                *edge += 1;
                if !keep[w] {
                    continue;
                }
                if order[w] == UNSEEN {
                    order[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(order[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == order[v] {
                let mut part = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    part.push(w);
                    if w == v {
                        break;
                    }
                }
                parts.push(part);
            }
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::{ContenderMode, Dialect};
    use crate::model::LockDialect;
    use crate::zk;

    const NOW: i64 = 1_700_000_100_000;

    /// A contender of the lock `lock` named `name`, created `age` seconds
    /// ago at zxid `czxid` by `session`, with `data`.
    struct Node<'a> {
        name: &'a str,
        mode: ContenderMode,
        session: i64,
        czxid: i64,
        data: Vec<u8>,
    }

    fn node(name: &str, session: i64, czxid: i64) -> Node<'_> {
        Node {
            name,
            mode: ContenderMode::Exclusive,
            session,
            czxid,
            data: Vec::new(),
        }
    }

    fn contender(lock: &str, node: &Node<'_>, waiting_on: Option<String>) -> Contender {
        let stat = zk::Stat {
            ctime: NOW - 1000 * (100 - node.czxid),
            mzxid: node.czxid,
            ..zk::test_stat(node.czxid, node.session)
        };
        Contender {
            path: format!("{lock}/{}", node.name),
            name: node.name.to_owned(),
            dialect: Dialect::Curator,
            sequence: None,
            mode: node.mode,
            stat,
            data: node.data.clone(),
            age_ms: NOW - stat.ctime,
            waiting_on,
            client: None,
            watching: None,
        }
    }

    /// A mutex at `path`: the first node holds, each other waits on the one
    /// ahead.
    fn mutex(path: &str, nodes: &[Node<'_>]) -> Lock {
        let mut waiters = Vec::new();
        for pair in nodes.windows(2) {
            let ahead = format!("{path}/{}", pair[0].name);
            waiters.push(contender(path, &pair[1], Some(ahead)));
        }
        Lock {
            path: path.to_owned(),
            kind: LockKind::Mutex,
            dialect: LockDialect::One(Dialect::Curator),
            holders: nodes
                .iter()
                .take(1)
                .map(|n| contender(path, n, None))
                .collect(),
            waiters,
            max_leases: None,
            last_run: LastRun::Unread,
        }
    }

    /// A zklock owner record of process `pid`, with a deadline or not.
    fn zklock(pid: u32, deadline: bool) -> Vec<u8> {
        let mut owner = Owner::of_this_process(None, None);
        owner.pid = pid;
        if deadline {
            owner.deadline_ms = Some(NOW + 60_000);
        }
        owner.to_bytes()
    }

    fn paths(graph: &WaitGraph, cycle: &Cycle) -> Vec<(String, String, Via)> {
        let path = |v: usize| graph.contenders[v].path.clone();
        let mut edges: Vec<_> = cycle
            .edges
            .iter()
            .map(|&(w, h, via)| (path(w), path(h), via))
            .collect();
        edges.sort();
        edges
    }

    /// Session 1 holds A and waits on B; session 2 holds B and waits on A;
    /// the nodes carry `data(session)`.
    fn crossed(data: impl Fn(i64) -> Vec<u8>) -> Vec<Lock> {
        let with = |name, session, czxid| Node {
            data: data(session),
            ..node(name, session, czxid)
        };
        vec![
            mutex("/locks/a", &[with("lock-1", 1, 10), with("lock-2", 2, 21)]),
            mutex("/locks/b", &[with("lock-1", 2, 11), with("lock-2", 1, 20)]),
        ]
    }

    #[test]
    fn two_sessions_crossing_two_locks_make_a_possible_cycle() {
        let locks = crossed(|_| Vec::new());
        let graph = WaitGraph::new(&locks);
        let cycles = graph.cycles();
        assert_eq!(cycles.len(), 1);
        let cycle = &cycles[0];
        assert!(!cycle.certain(), "a shared session proves nothing");
        assert_eq!(
            paths(&graph, cycle),
            [
                (
                    "/locks/a/lock-2".into(),
                    "/locks/a/lock-1".into(),
                    Via::Session
                ),
                (
                    "/locks/b/lock-2".into(),
                    "/locks/b/lock-1".into(),
                    Via::Session
                ),
            ]
        );
        assert_eq!(graph.contenders[cycle.youngest].path, "/locks/a/lock-2");
        assert_eq!(cycle.since_ms, 79_000);
    }

    #[test]
    fn the_youngest_contender_is_the_last_created_whatever_the_ages_read() {
        // Ages are read at different moments of a walk, so they may cross
        // the creation order; the zxids may not.
        let mut locks = crossed(|_| Vec::new());
        for lock in &mut locks {
            for contender in lock.holders.iter_mut().chain(&mut lock.waiters) {
                contender.age_ms = if contender.path == "/locks/a/lock-2" {
                    9_000
                } else {
                    5_000
                };
            }
        }
        let graph = WaitGraph::new(&locks);
        let cycle = &graph.cycles()[0];
        assert_eq!(graph.contenders[cycle.youngest].path, "/locks/a/lock-2");
    }

    #[test]
    fn one_zklock_on_both_sides_makes_it_certain_unless_a_deadline_or_a_rewrite() {
        let graph = WaitGraph::new(&crossed(|session| zklock(session as u32, false)));
        let cycles = graph.cycles();
        assert_eq!(cycles.len(), 1);
        assert!(cycles[0].certain());
        assert!(cycles[0].edges.iter().all(|e| e.2 == Via::Locks));

        let graph = WaitGraph::new(&crossed(|session| zklock(session as u32, session == 2)));
        assert!(
            !graph.cycles()[0].certain(),
            "a waiter that gives up by itself"
        );

        let mut locks = crossed(|session| zklock(session as u32, false));
        locks[0].holders[0].stat.mzxid += 100;
        let graph = WaitGraph::new(&locks);
        let cycles = graph.cycles();
        assert!(!cycles[0].certain(), "a rewritten record is not trusted");
        assert!(cycles[0].edges.iter().any(|e| e.2 == Via::Session));
    }

    #[test]
    fn nesting_links_a_hold_to_the_zklock_nested_in_it() {
        let outer = zklock(100, false);
        let nested = |enclosing: &str| {
            let mut owner = Owner::parse(&zklock(200, false)).unwrap();
            owner.nested_in = vec![enclosing.to_owned()];
            owner.to_bytes()
        };
        let locks = [
            mutex(
                "/locks/a",
                &[
                    Node {
                        data: outer.clone(),
                        ..node("lock-1", 1, 10)
                    },
                    Node {
                        data: nested("/locks/b/lock-1"),
                        ..node("lock-2", 3, 31)
                    },
                ],
            ),
            mutex(
                "/locks/b",
                &[
                    Node {
                        data: outer,
                        ..node("lock-1", 2, 20)
                    },
                    Node {
                        data: nested("/locks/a/lock-1"),
                        ..node("lock-2", 4, 30)
                    },
                ],
            ),
        ];
        let graph = WaitGraph::new(&locks);
        let cycles = graph.cycles();
        assert_eq!(cycles.len(), 1);
        assert!(cycles[0].certain());
        assert!(cycles[0].edges.iter().all(|e| e.2 == Via::Nesting));
    }

    #[test]
    fn long_queues_and_sessions_that_wait_on_nothing_are_no_cycle() {
        let nodes: Vec<String> = (0..2000).map(|i| format!("lock-{i}")).collect();
        let queue: Vec<Node<'_>> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| node(n, 1000 + i as i64, i as i64 + 1))
            .collect();
        let mut locks = vec![mutex("/locks/long", &queue)];
        // Session 1 holds two locks and waits on none.
        locks.push(mutex(
            "/locks/x",
            &[node("lock-1", 1, 5), node("lock-2", 7, 6)],
        ));
        locks.push(mutex(
            "/locks/y",
            &[node("lock-1", 1, 7), node("lock-2", 8, 8)],
        ));
        let graph = WaitGraph::new(&locks);
        assert!(graph.cycles().is_empty());
        assert!(graph.chain(0).is_empty());
    }

    #[test]
    fn a_chain_runs_across_locks_to_the_root_and_marks_a_loop() {
        let locks = [
            mutex("/locks/a", &[node("lock-1", 1, 10), node("lock-2", 9, 40)]),
            mutex("/locks/b", &[node("lock-1", 2, 11), node("lock-2", 1, 41)]),
            mutex("/locks/c", &[node("lock-1", 3, 12), node("lock-2", 2, 42)]),
        ];
        let graph = WaitGraph::new(&locks);
        let chain: Vec<_> = graph
            .chain(0)
            .iter()
            .map(|hop| {
                (
                    graph.contenders[hop.blocker].path.as_str(),
                    hop.via,
                    hop.loops,
                )
            })
            .collect();
        assert_eq!(
            chain,
            [
                ("/locks/b/lock-1", Via::Session, false),
                ("/locks/c/lock-1", Via::Session, false),
            ]
        );
        assert!(graph.cycles().is_empty());

        let graph = WaitGraph::new(&crossed(|_| Vec::new()));
        let chain = graph.chain(graph.lock_at("/locks/a").unwrap());
        assert_eq!(chain.len(), 2);
        assert!(chain[1].loops);
        assert_eq!(graph.contenders[chain[1].blocker].path, "/locks/a/lock-1");
    }

    #[test]
    fn a_focus_keeps_one_waiter_per_tie_and_gives_the_chain_of_the_whole_lock() {
        // Crossed as above, with a crowd of untied sessions behind session 2
        // in /locks/a, and session 2 once more at the back.
        let mut locks = crossed(|_| Vec::new());
        let crowd: Vec<String> = (0..60).map(|i| format!("lock-c{i}")).collect();
        let mut nodes = vec![node("lock-1", 1, 10), node("lock-2", 2, 21)];
        nodes.extend(
            crowd
                .iter()
                .enumerate()
                .map(|(i, name)| node(name, 1000 + i as i64, 30 + i as i64)),
        );
        nodes.push(node("lock-9", 2, 95));
        locks[0] = mutex("/locks/a", &nodes);
        let hops = |graph: &WaitGraph| -> Vec<(String, Via, bool)> {
            let lock = graph.lock_at("/locks/a").unwrap();
            let path = |hop: &Hop| graph.contenders[hop.blocker].path.clone();
            graph
                .chain(lock)
                .iter()
                .map(|hop| (path(hop), hop.via, hop.loops))
                .collect()
        };
        let whole = hops(&WaitGraph::new(&locks));
        assert_eq!(whole.len(), 2);

        let mut builder = GraphBuilder::default();
        builder.add(&locks[1]);
        let (summary, standings) = locks[0].clone().into_parts();
        let mut focus = builder.focus();
        for (contender, holding) in &standings {
            focus.offer(contender, *holding);
        }
        assert_eq!(focus.holders.len(), 1);
        assert_eq!(focus.waiters.len(), 1, "one waiter per tie");
        builder.add_focus(focus, &summary);
        assert_eq!(hops(&builder.finish()), whole);
    }

    /// A semaphore at `path` of `max` leases: `holders` hold one each,
    /// `waiting` wait for any of them.
    fn semaphore(path: &str, max: u32, holders: &[Node<'_>], waiting: &[Node<'_>]) -> Lock {
        let lease = |n: &Node<'_>| {
            contender(
                path,
                &Node {
                    mode: ContenderMode::Lease,
                    ..node(n.name, n.session, n.czxid)
                },
                None,
            )
        };
        Lock {
            path: path.to_owned(),
            kind: LockKind::Semaphore,
            dialect: LockDialect::One(Dialect::Kazoo),
            holders: holders.iter().map(lease).collect(),
            waiters: waiting.iter().map(lease).collect(),
            max_leases: Some(max),
            last_run: LastRun::Unread,
        }
    }

    #[test]
    fn a_semaphore_is_a_knot_only_while_every_lease_holder_waits() {
        // Sessions 1 and 2 hold both leases of S and each waits on M, held by 3,
        // who waits on S.
        let knot = |max| {
            [
                semaphore(
                    "/locks/s",
                    max,
                    &[node("l1", 1, 1), node("l2", 2, 2)],
                    &[node("l3", 3, 9)],
                ),
                mutex("/locks/m", &[node("lock-1", 3, 3), node("lock-2", 1, 4)]),
                mutex("/locks/n", &[node("lock-1", 5, 5), node("lock-2", 2, 6)]),
            ]
        };
        let graph = WaitGraph::new(&knot(2));
        assert!(
            graph.cycles().is_empty(),
            "session 2 waits on N, whose holder is free"
        );

        let mut locks = knot(2);
        locks[2] = mutex("/locks/n", &[node("lock-1", 3, 5), node("lock-2", 2, 6)]);
        let cycles = WaitGraph::new(&locks).cycles();
        assert_eq!(cycles.len(), 1, "every lease holder waits on session 3");
        assert!(!cycles[0].certain());
        assert_eq!(cycles[0].doubts, [Doubt::Semaphore, Doubt::Session]);

        locks[0] = semaphore(
            "/locks/s",
            3,
            &[node("l1", 1, 1), node("l2", 2, 2)],
            &[node("l3", 3, 9)],
        );
        assert!(WaitGraph::new(&locks).cycles().is_empty(), "a free lease");
    }

    /// Every out-edge of the graph.
    fn edge_count(graph: &WaitGraph) -> usize {
        graph.edges.iter().map(Vec::len).sum()
    }

    #[test]
    fn a_full_semaphore_costs_its_nodes_and_its_knot_is_kept_whole() {
        // One session holds all 300 leases and waits for 300 more: it
        // waits on itself, a knot of 600 contenders.
        let names: Vec<String> = (0..600).map(|i| format!("l{i}")).collect();
        let nodes: Vec<Node<'_>> = names
            .iter()
            .enumerate()
            .map(|(i, name)| node(name, 1, i as i64 + 1))
            .collect();
        let (holders, waiting) = nodes.split_at(300);
        let graph = WaitGraph::new(&[semaphore("/locks/s", 300, holders, waiting)]);
        assert!(
            edge_count(&graph) <= 2 * nodes.len(),
            "{} edges for {} contenders",
            edge_count(&graph),
            nodes.len()
        );
        let cycles = graph.cycles();
        assert_eq!(cycles.len(), 1);
        let cycle = &cycles[0];
        assert!(!cycle.certain(), "a lease is no exclusive hold");
        assert!(cycle.edges.is_empty(), "no pair is listed");
        let [knot] = &cycle.knots[..] else {
            panic!("one knot: {:?}", cycle.knots);
        };
        assert_eq!((knot.waiters.len(), knot.holders.len()), (300, 300));
        assert!(knot.holders.iter().all(|&(_, via)| via == Via::Session));
        assert_eq!(cycle.nodes().count(), 600);
        assert_eq!(graph.contenders[cycle.youngest].path, "/locks/s/l599");

        // Holders of sessions of their own wait on nothing: no knot.
        let free: Vec<Node<'_>> = holders
            .iter()
            .map(|n| node(n.name, 1000 + n.czxid, n.czxid))
            .collect();
        let graph = WaitGraph::new(&[semaphore("/locks/s", 300, &free, waiting)]);
        assert!(edge_count(&graph) <= 2 * nodes.len());
        assert!(graph.cycles().is_empty());
    }

    #[test]
    fn a_writer_behind_many_readers_costs_the_readers_once() {
        // One session holds 300 reads and queues 300 writes behind them.
        let names: Vec<String> = (0..600).map(|i| format!("lock-{i}")).collect();
        let nodes: Vec<Node<'_>> = names
            .iter()
            .enumerate()
            .map(|(i, name)| Node {
                mode: if i < 300 {
                    ContenderMode::Shared
                } else {
                    ContenderMode::Exclusive
                },
                ..node(name, 1, i as i64 + 1)
            })
            .collect();
        let mut lock = mutex("/locks/rw", &nodes[299..]);
        lock.kind = LockKind::ReadWrite;
        lock.holders = nodes[..300]
            .iter()
            .map(|n| contender("/locks/rw", n, None))
            .collect();
        let graph = WaitGraph::new(&[lock]);
        assert!(edge_count(&graph) <= 3 * nodes.len());
        let cycles = graph.cycles();
        assert_eq!(cycles.len(), 1);
        assert_eq!(
            cycles[0].edges.len(),
            300,
            "the first writer on each reader"
        );
    }

    /// The record of a zklock of process `pid` whose lineage is `pid`
    /// and then `ancestors` (each started at tick 7 of one boot), and, when
    /// `started_by` is given, a detached holder started by that process.
    fn lineage_record(pid: i32, ancestors: &[i32], started_by: Option<i32>) -> Vec<u8> {
        let process = |pid| lock::Process { pid, start: 7 };
        let mut owner = Owner::of_this_process(None, None);
        owner.pid = pid as u32;
        owner.lineage = Some(Lineage {
            boot_id: "b00t".into(),
            pid_ns: "pid:[1]".into(),
            processes: std::iter::once(pid)
                .chain(ancestors.iter().copied())
                .map(process)
                .collect(),
        });
        owner.detached = started_by.map(|shell| lock::Detachment {
            started_by: Some(process(shell)),
            while_pid: Some(process(shell)),
            lease_ms: None,
        });
        owner.to_bytes()
    }

    /// Two shells, 10 and 20, each with a detached holder of one lock and
    /// a zklock waiting for the other's: holders of sessions 1 and 2,
    /// waiters of sessions 3 and 4 whose lineages are `lineages`.
    fn crossed_shells(lineages: [&[i32]; 2]) -> Vec<Lock> {
        let at = |name, session, czxid, data| Node {
            data,
            ..node(name, session, czxid)
        };
        vec![
            mutex(
                "/locks/a",
                &[
                    at(
                        "lock-1",
                        1,
                        10,
                        lineage_record(11, &[9, 10, 1000], Some(10)),
                    ),
                    at("lock-2", 4, 31, lineage_record(22, lineages[1], None)),
                ],
            ),
            mutex(
                "/locks/b",
                &[
                    at(
                        "lock-1",
                        2,
                        20,
                        lineage_record(21, &[19, 20, 1000], Some(20)),
                    ),
                    at("lock-2", 3, 30, lineage_record(12, lineages[0], None)),
                ],
            ),
        ]
    }

    #[test]
    fn a_detached_holders_starter_waits_as_its_owner_and_the_cycle_is_possible() {
        let graph = WaitGraph::new(&crossed_shells([&[10, 1000], &[20, 1000]]));
        let cycles = graph.cycles();
        assert_eq!(cycles.len(), 1, "{cycles:?}");
        let cycle = &cycles[0];
        assert_eq!(cycle.doubts, [Doubt::Detached]);
        assert!(!cycle.certain());
        assert!(cycle.edges.iter().all(|e| e.2 == Via::Detached));
        let chain = graph.chain(graph.lock_at("/locks/a").unwrap());
        let path = |hop: &Hop| graph.contenders[hop.blocker].path.as_str();
        assert_eq!(path(&chain[0]), "/locks/b/lock-1");
        assert_eq!(chain[0].via, Via::Detached);

        // Waiters that other shells started do not wait as the holders'
        // owners, though all descend from 1000 (a CI runner, say): only a
        // holder's starter stands for it, not the starter's ancestors.
        let graph = WaitGraph::new(&crossed_shells([&[15, 1000], &[25, 1000]]));
        assert!(graph.cycles().is_empty());
        assert!(graph.chain(graph.lock_at("/locks/a").unwrap()).is_empty());
    }

    #[test]
    fn a_focus_keeps_the_waiter_a_detached_holders_starter_started() {
        let locks = crossed_shells([&[10, 1000], &[20, 1000]]);
        let whole = WaitGraph::new(&locks);
        let hops = |graph: &WaitGraph| -> Vec<(String, Via, bool)> {
            let lock = graph.lock_at("/locks/a").unwrap();
            let path = |hop: &Hop| graph.contenders[hop.blocker].path.clone();
            let hop = |hop: &Hop| (path(hop), hop.via, hop.loops);
            graph.chain(lock).iter().map(hop).collect()
        };
        assert_eq!(hops(&whole).len(), 2, "through b and back");

        let mut builder = GraphBuilder::default();
        builder.add(&locks[1]);
        let (summary, standings) = locks[0].clone().into_parts();
        let mut focus = builder.focus();
        for (contender, holding) in &standings {
            focus.offer(contender, *holding);
        }
        assert_eq!(focus.waiters.len(), 1, "tied by its lineage alone");
        builder.add_focus(focus, &summary);
        assert_eq!(hops(&builder.finish()), hops(&whole));
    }

    #[test]
    fn doubts_name_each_reason_a_cycle_is_only_possible() {
        let graph = WaitGraph::new(&crossed(|session| zklock(session as u32, session == 2)));
        assert_eq!(graph.cycles()[0].doubts, [Doubt::Deadline]);
        let graph = WaitGraph::new(&crossed(|_| Vec::new()));
        let mut cycle = graph.cycles().remove(0);
        assert_eq!(cycle.doubts, [Doubt::Session]);
        cycle.doubt(Doubt::Changed);
        cycle.doubt(Doubt::Changed);
        assert_eq!(cycle.doubts, [Doubt::Session, Doubt::Changed]);
    }

    #[test]
    fn an_election_is_never_part_of_a_cycle() {
        let mut locks = crossed(|_| Vec::new());
        locks[1].kind = LockKind::Election;
        assert!(WaitGraph::new(&locks).cycles().is_empty());
    }
}
