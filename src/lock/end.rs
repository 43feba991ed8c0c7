//! The end record: what zklock writes into a lock directory's data in the
//! same transaction as the delete whenever it ends a hold or a wait itself.
//!
//! ZooKeeper keeps nothing of a deleted node, and a watch event carries no
//! data, so whoever sees a contender go cannot tell a release from a break
//! or a crash. A write into the directory, in the multi that deletes the
//! node, can: it is applied with the delete or not at all, and anyone who
//! reads the directory after seeing the delete finds it (until the next
//! end overwrites it). The record names the nodes it ended, so a reader
//! knows whether it speaks of the node it saw go.
//!
//! Each record also carries what the records before it knew
//! ([`Evidence`]): how many deletes of the directory's children the
//! records account for, and the latest end among them that was unclean or
//! that no record told of, on the server's clock. ZooKeeper counts every
//! create and every delete of a child in the directory's `cversion`, so one
//! read of a directory made empty tells how many children were ever
//! deleted; a count above the records' is an end no record tells of. So a
//! writer reads the directory, writes the record before it carried forward
//! with its own end, at the version it read, and reads again when another
//! write came in between: every field of the record (a `--once-per` run
//! among them) passes from one end to the next.
//!
//! The directory's data is only ever written where no library reads it
//! ([`directory_for`]), and only over nothing or a record: any other data
//! is an application's, and the delete then goes alone. The record is JSON
//! of one fixed shape, `{"zklock_end": {...}}`, which other tools
//! (`history`) parse too: its fields keep their names and order, and new
//! ones go last.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::delay::ServerClock;
use super::name::{self, ContenderKind, Dialect};
use super::owner::Owner;
use super::semaphore;
use crate::zk::batch::{self, Batcher};
use crate::zk::delete::{self, Deletion, Seen};
use crate::zk::{self, Deleted, DirWrite, Session, path};

/// The record's one version so far: later fields are optional, so that a
/// reader of either age reads the other's records.
pub(crate) const VERSION: u32 = 1;

/// The longest `--reason` kept: the record shares the directory's data with
/// nothing, but ZooKeeper refuses a write larger than its buffer, and a
/// refused record would cost the end its record.
pub(crate) const MAX_REASON_BYTES: usize = 4096;

/// How many times a record is written again over a directory written
/// between its read and its write: each such write is another end (or a
/// `--once-per` contender's stamp or remake of the directory), so the
/// tries run out only under a storm of them, and the delete then goes
/// alone.
pub(crate) const TRIES: u32 = 16;

/// How zklock ended a hold or a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndHow {
    /// Its own holder let go.
    Released,
    /// Its own waiter (or a holder of part of a set) gave up.
    GaveUp,
    /// Its own holder stopped the command at `--max-hold` and let go.
    MaxHold,
    /// `zklock release` deleted another's node.
    Broken,
    /// `zklock reap` deleted it.
    Reaped,
    /// Its own holder lost the lock (the node deleted or revoked, the
    /// session silent too long) and deleted what was left of it: its
    /// command was stopped mid-way.
    Lost,
}

impl EndHow {
    /// The name used in the record and in output.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EndHow::Released => "released",
            EndHow::GaveUp => "gave_up",
            EndHow::MaxHold => "max_hold",
            EndHow::Broken => "broken",
            EndHow::Reaped => "reaped",
            EndHow::Lost => "lost",
        }
    }

    /// True for the ends a holder makes itself: it had finished when it let
    /// go. A break or a reap ends a hold whose holder may still be at work,
    /// and a lost hold was stopped, not finished.
    pub(crate) fn is_clean(self) -> bool {
        match self {
            EndHow::Released | EndHow::GaveUp | EndHow::MaxHold => true,
            EndHow::Broken | EndHow::Reaped | EndHow::Lost => false,
        }
    }
}

/// Who ended it: the zklock process that wrote the record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ender {
    pub user: String,
    pub host: String,
    pub pid: u32,
}

impl Ender {
    /// `user@host pid N`, as owners are shown.
    pub(crate) fn summary(&self) -> String {
        format!("{}@{} pid {}", self.user, self.host, self.pid)
    }

    /// The process whose owner record is `owner` (the same user, host and
    /// pid, read once).
    pub(crate) fn of_owner(owner: &Owner) -> Ender {
        Ender {
            user: owner.user.clone(),
            host: owner.host.clone(),
            pid: owner.pid,
        }
    }

    /// This process.
    pub fn of_this_process() -> Ender {
        Ender::of_owner(&Owner::of_this_process(None, None))
    }
}

/// One node the record ended, and the session that owned it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EndedNode {
    /// The child name, not the path: the record lies in its directory.
    pub node: String,
    /// `0x` and hex, as ZooKeeper's tools print it.
    pub session: String,
}

/// The last counted run of a `--once-per` lock: when it started, on the
/// server's clock, the window it opened, and who ran it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Ran {
    pub at_ms: i64,
    pub per_ms: u64,
    pub by: Ender,
}

/// What the records of a directory, up to this one, know of every end in
/// it: kept so that `--lock-delay` can tell from one read whether any hold
/// since the directory was made ended uncleanly, and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Evidence {
    /// How many deletes of the directory's children (counted from its
    /// making, modulo 2^31, as [`DirRead::deletes`] counts them) the
    /// records account for, this one's included.
    pub deletes: u32,
    /// False when the writer was an exclusive holder that did not read the
    /// directory again at its end: the deletes of waiters behind it, which
    /// never held, are then accounted for without being counted (see
    /// [`DirRead::ends`]).
    pub exact: bool,
    /// The latest end before this record's own that was unclean, or that no
    /// record told of, on the server's clock; `None` when there was none.
    pub unclean: Option<Unclean>,
}

/// An end that was unclean or unknown, and when, on the server's clock:
/// for an unknown one, no earlier than it happened (when it was first
/// seen, or later).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Unclean {
    pub at_ms: i64,
    /// No record told how it ended (a session's expiry, a library's
    /// release, or evidence lost with its directory).
    pub unknown: bool,
}

impl Unclean {
    /// The later of two, either possibly absent.
    pub(crate) fn latest(a: Option<Unclean>, b: Option<Unclean>) -> Option<Unclean> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if b.at_ms > a.at_ms { b } else { a }),
            (a, b) => a.or(b),
        }
    }
}

/// The record itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EndRecord {
    pub version: u32,
    pub nodes: Vec<EndedNode>,
    pub how: EndHow,
    pub by: Ender,
    pub reason: Option<String>,
    pub ran: Option<Ran>,
    /// The directory is a persistent node that zklock made itself (for
    /// `--once-per` or `--lock-delay`): the only kind that keeps a
    /// `--once-per` window. A client cannot tell a container (which the
    /// server removes once idle, record and all) from a persistent node by
    /// its stat, so the maker says so here, and every record after carries
    /// it forward. Absent from the records of zklocks before it, which read
    /// as unmarked.
    #[serde(default)]
    pub made_persistent: bool,
    /// Absent from the records of zklocks that kept none: what the
    /// directory went through before them is then unknown.
    #[serde(default)]
    pub evidence: Option<Evidence>,
}

/// The document in the directory's data: the record under a key of its
/// own, so that it is never taken for anything else.
#[derive(Serialize, Deserialize)]
struct Document {
    zklock_end: EndRecord,
}

/// What an end says, before it knows its nodes: made once by whoever ends,
/// stamped with the nodes of each directory as it deletes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ending {
    pub how: EndHow,
    pub by: Ender,
    pub reason: Option<String>,
}

impl Ending {
    /// An end of `how` by `by`, with no reason given.
    pub fn new(how: EndHow, by: Ender) -> Ending {
        Ending {
            how,
            by,
            reason: None,
        }
    }

    /// This end of `nodes` (path and owner session each), written over
    /// `before`, the record the directory held (or none): every field of
    /// that record is kept but the end's own and the evidence, which the
    /// writer gives.
    pub(crate) fn record<'a>(
        &self,
        nodes: impl IntoIterator<Item = (&'a str, i64)>,
        before: Option<EndRecord>,
        evidence: Option<Evidence>,
    ) -> EndRecord {
        let nodes = nodes
            .into_iter()
            .map(|(node, session)| EndedNode {
                node: path::basename(node).to_owned(),
                session: zk::format_session(session),
            })
            .collect();
        let base = before.unwrap_or_else(|| EndRecord {
            version: VERSION,
            nodes: Vec::new(),
            how: self.how,
            by: self.by.clone(),
            reason: None,
            ran: None,
            made_persistent: false,
            evidence: None,
        });
        EndRecord {
            version: VERSION,
            nodes,
            how: self.how,
            by: self.by.clone(),
            reason: self.reason.clone(),
            evidence,
            ..base
        }
    }
}

impl EndRecord {
    /// The record as the bytes written into a directory.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let document = Document {
            zklock_end: self.clone(),
        };
        serde_json::to_vec(&document).expect("an end record always serializes")
    }

    /// The record in a directory's `data`; `None` for anything else (no
    /// data, a library's own, a record of a version not known here).
    pub(crate) fn parse(data: &[u8]) -> Option<EndRecord> {
        if !data.starts_with(b"{") {
            return None;
        }
        let document: Document = serde_json::from_slice(data).ok()?;
        (document.zklock_end.version == VERSION).then_some(document.zklock_end)
    }

    /// True when the record names the node at `node` of `session`: a
    /// record of another node says nothing of this one.
    pub(crate) fn names(&self, node: &str, session: i64) -> bool {
        let name = path::basename(node);
        let session = zk::format_session(session);
        self.nodes
            .iter()
            .any(|ended| ended.node == name && ended.session == session)
    }

    /// Who ended it, for people: `user@host pid N`, with the reason.
    pub(crate) fn who_and_why(&self) -> String {
        let who = self.by.summary();
        match &self.reason {
            Some(reason) => format!("{who}: {reason}"),
            None => who,
        }
    }

    /// The latest unclean or unknown end the record knows of, its own
    /// included, when `written_ms` is the time its directory's data was
    /// last written (no earlier than the record's own transaction).
    fn latest_unclean(&self, written_ms: i64) -> Option<Unclean> {
        let before = self.evidence.and_then(|evidence| evidence.unclean);
        let own = (!self.how.is_clean()).then_some(Unclean {
            at_ms: written_ms,
            unknown: false,
        });
        Unclean::latest(before, own)
    }
}

/// A lock directory as one read saw it: its data and its stat, from the
/// same answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DirRead {
    pub data: Vec<u8>,
    pub stat: zk::Stat,
}

/// What a lock directory's data is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum DirData {
    /// Nothing.
    Empty,
    /// An end record (boxed: many times the size of the others).
    Record(Box<EndRecord>),
    /// Anything else: an application's, never written over.
    Other,
}

impl DirData {
    /// The record a new one is written over: `Some(None)` over nothing,
    /// `None` where none may be written.
    pub(crate) fn into_previous(self) -> Option<Option<EndRecord>> {
        match self {
            DirData::Empty => Some(None),
            DirData::Record(record) => Some(Some(*record)),
            DirData::Other => None,
        }
    }
}

/// What one read of a directory proves of the ends in it so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ends {
    /// Every delete of a child is accounted for by the records.
    pub accounted: bool,
    /// The latest end the records know to have been unclean or unknown.
    pub unclean: Option<Unclean>,
}

/// The count [`DirRead::deletes`] keeps: deletes modulo 2^31.
const DELETES_MASK: u32 = 0x7fff_ffff;

/// [`DirRead::deletes`] of a directory whose stat is `stat`.
pub(crate) fn deletes(stat: &zk::Stat) -> Option<u32> {
    let changes = (i64::from(stat.cversion) - i64::from(stat.num_children)).rem_euclid(1 << 32);
    (changes % 2 == 0).then_some((changes / 2) as u32)
}

/// What a writer knew of the ends before its own, besides the read it
/// writes over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Known {
    /// The latest unclean or unknown end it learnt of.
    pub unclean: Option<Unclean>,
    /// How many deletes of the directory's children that covers, when it
    /// read the directory itself on its way in: the ends unaccounted for
    /// among them are dated in `unclean` already.
    pub deletes: Option<u32>,
    /// The server's time no earlier than its read: when an end it finds
    /// unaccounted for, and knew nothing of, was seen. Without it, only the
    /// record of an unclean end of its own dates one (at its write).
    pub seen_ms: Option<i64>,
}

impl DirRead {
    /// How many of the directory's children were ever deleted, modulo
    /// 2^31: ZooKeeper adds one to `cversion` for each create and each
    /// delete of a child (a 32-bit count that wraps), so for a directory
    /// made with no children `cversion - numChildren` is twice the deletes.
    /// `None` when it is odd: a stat no such directory has.
    pub(crate) fn deletes(&self) -> Option<u32> {
        deletes(&self.stat)
    }

    /// What the directory's data is.
    pub(crate) fn data(&self) -> DirData {
        if self.data.is_empty() {
            return DirData::Empty;
        }
        EndRecord::parse(&self.data)
            .map_or(DirData::Other, |record| DirData::Record(Box::new(record)))
    }

    /// True when an end record may be written here: the data is nothing
    /// or a record.
    pub(crate) fn takes_record(&self) -> bool {
        !matches!(self.data(), DirData::Other)
    }

    /// True when the record here names the child `name` and is an
    /// exclusive holder's, which vouches for every delete before its own.
    pub(crate) fn vouches_for(&self, name: &str) -> bool {
        let DirData::Record(record) = self.data() else {
            return false;
        };
        record.evidence.is_some_and(|evidence| !evidence.exact)
            && record.nodes.iter().any(|ended| ended.node == name)
    }

    /// What this read proves of every end so far. The deletes are
    /// accounted for when the records count as many as the directory went
    /// through; or, for the record of an exclusive holder that did not
    /// count the waiters behind it, when nothing changed the directory
    /// after that record's transaction (its `pzxid`, the last change of the
    /// children, is its `mzxid`, the last write of its data): every node
    /// deleted before it then ended before that holder held (and that
    /// holder accounted for it on its way in) or was a waiter behind it,
    /// which never held. A directory with no record, an application's
    /// data, or a record that keeps no evidence proves nothing.
    pub(crate) fn ends(&self) -> Ends {
        let DirData::Record(record) = self.data() else {
            return Ends {
                accounted: false,
                unclean: None,
            };
        };
        let Some(evidence) = record.evidence else {
            return Ends {
                accounted: false,
                unclean: None,
            };
        };
        let counted = self.deletes() == Some(evidence.deletes & DELETES_MASK);
        let nothing_since = !evidence.exact && self.stat.pzxid == self.stat.mzxid;
        Ends {
            accounted: counted || nothing_since,
            unclean: record.latest_unclean(self.stat.mtime),
        }
    }

    /// The evidence a writer leaves that read the directory as this, and
    /// deletes `deleted` more children in its transaction: every delete
    /// read here and its own counted (`exact`), or accounted for by an
    /// exclusive holder, and `unclean` the latest unclean or unknown end
    /// it knows of before its own. `None` when this stat cannot count.
    pub(crate) fn evidence(
        &self,
        deleted: usize,
        exact: bool,
        unclean: Option<Unclean>,
    ) -> Option<Evidence> {
        let deleted = u32::try_from(deleted).ok()?;
        let deletes = self.deletes()?.wrapping_add(deleted) & DELETES_MASK;
        Some(Evidence {
            deletes,
            exact,
            unclean,
        })
    }

    /// The write of `record` into `dir`, at the version read.
    pub(crate) fn write(&self, dir: &str, record: &EndRecord) -> DirWrite {
        DirWrite {
            dir: dir.to_owned(),
            data: record.to_bytes(),
            version: self.stat.version,
        }
    }

    /// The record of a writer that reads the directory just before it
    /// writes (this read) and deletes `nodes` (path and owner session) as
    /// `ending` says: the deletes read here counted; an end this read finds
    /// unaccounted for, unless `known` covers it, dated when it was seen;
    /// the unclean end the writer knew of besides, kept; and the
    /// directory's last `--once-per` run, or `ran` when it is later. `None`
    /// over an application's data.
    pub(crate) fn next_record(
        &self,
        ending: &Ending,
        nodes: &[(&str, i64)],
        known: Known,
        ran: Option<Ran>,
    ) -> Option<EndRecord> {
        let previous = self.data().into_previous()?;
        let ends = self.ends();
        let new = !ends.accounted && (known.deletes.is_none() || known.deletes != self.deletes());
        let found = new.then_some(known.seen_ms).flatten().map(|at_ms| Unclean {
            at_ms,
            unknown: true,
        });
        let unclean = Unclean::latest(Unclean::latest(known.unclean, ends.unclean), found);
        let evidence = self.evidence(nodes.len(), true, unclean);
        let mut record = ending.record(nodes.iter().copied(), previous, evidence);
        record.ran = later(record.ran.take(), ran);
        Some(record)
    }
}

/// The later of two runs.
pub(crate) fn later(a: Option<Ran>, b: Option<Ran>) -> Option<Ran> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.at_ms > a.at_ms { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// The directory whose data takes the end record of the contender at
/// `node`; `None` where a library reads that data or may: a kazoo
/// semaphore's lease lies in the semaphore node, which holds the maximum,
/// and an election's directory belongs to the service that elects.
/// Curator's mutexes, read-write locks and semaphores (`leases/`,
/// `locks/`), kazoo's locks, HBase's, go-zookeeper's and ZooKeeper's own
/// recipes read their directories' children only.
///
/// Only a contender's or a lease's node has one: a directory `reap --empty`
/// deletes is no hold.
pub(crate) fn directory_for(node: &str) -> Option<&str> {
    let child = path::basename(node);
    let takes_one = match (semaphore::parse_lease(child), name::parse(child)) {
        (Some(lease), _) => lease.dialect != Dialect::Kazoo,
        (None, Some(parsed)) => parsed.kind != ContenderKind::Election,
        (None, None) => false,
    };
    path::parent(node).filter(|dir| takes_one && *dir != "/")
}

/// The record in `data` when it names the node at `node` of `session`.
pub(crate) fn naming(data: &[u8], node: &str, session: i64) -> Option<EndRecord> {
    EndRecord::parse(data).filter(|record| record.names(node, session))
}

/// How one of our own nodes ends, for [`end_own`].
pub(crate) struct OwnEnd<'a> {
    pub ending: &'a Ending,
    /// What we learnt of the ends before ours, on our way in: carried into
    /// the record (its `seen_ms` is ours to give, from `clock`).
    pub before: Known,
    /// Our node's view of the server's clock, to date an end we find
    /// unaccounted for.
    pub clock: Option<&'a ServerClock>,
    /// A read of the directory to write at first; `None` to read it now.
    pub read: Option<DirRead>,
    /// The run a `--once-per` hold keeps, when later than the directory's.
    pub ran: Option<Ran>,
}

/// Deletes our own node `node` with the end record `end` makes, written at
/// the version of the directory read (the one known, or read now), and
/// again over a fresh read when the directory was written in between, at
/// most [`TRIES`] times; then, as where the directory takes no record, is
/// unreadable, or holds an application's data, the delete goes alone. The
/// session is left open.
pub(crate) async fn end_own(
    session: &Session,
    node: &str,
    end: OwnEnd<'_>,
) -> Result<(), zk::Error> {
    let OwnEnd {
        ending,
        before,
        clock,
        mut read,
        ran,
    } = end;
    if let Some(dir) = directory_for(node) {
        for _ in 0..TRIES {
            let read = match read.take() {
                Some(read) => read,
                None => match session.get_data(dir).await {
                    Ok((data, stat)) => DirRead { data, stat },
                    // Unreadable, or gone and our node with it.
                    Err(err) if err.is_no_node() || err.is_no_auth() => break,
                    Err(err) => return Err(err),
                },
            };
            let known = Known {
                seen_ms: clock.map(|clock| clock.upper_ms(tokio::time::Instant::now())),
                ..before
            };
            let ours = [(node, session.id())];
            let Some(record) = read.next_record(ending, &ours, known, ran.clone()) else {
                break;
            };
            match session
                .delete_own(node, Some(&read.write(dir, &record)))
                .await?
            {
                Deleted::DirChanged => continue,
                _ => return Ok(()),
            }
        }
    }
    session.delete_own(node, None).await?;
    Ok(())
}

/// The lock directories of nodes about to be deleted by another's hand (a
/// break, a reap, the holder of a lost lock), each as one read saw it: the
/// records written into them keep what they held, at the version read. A
/// directory gone or unreadable is left out, and gets no record.
#[derive(Debug, Default)]
pub(crate) struct DirReads(HashMap<String, DirRead>);

impl DirReads {
    /// Reads the directories of `nodes` that take an end record, in
    /// multi-reads.
    pub(crate) async fn of(session: &Session, nodes: &[Seen]) -> Result<DirReads, zk::Error> {
        let mut dirs: Vec<String> = nodes
            .iter()
            .filter_map(|node| directory_for(&node.path))
            .map(str::to_owned)
            .collect();
        dirs.sort_unstable();
        dirs.dedup();
        let batcher = Batcher::new(session);
        let mut reads = HashMap::new();
        for chunk in dirs.chunks(batch::BATCH) {
            for (dir, read) in chunk.iter().zip(batcher.read(chunk).await?) {
                match read {
                    Ok((data, stat)) => {
                        reads.insert(dir.clone(), DirRead { data, stat });
                    }
                    Err(err) if err.is_no_node() || err.is_no_auth() => {}
                    Err(err) => return Err(err),
                }
            }
        }
        Ok(DirReads(reads))
    }

    /// The directory at `dir` as read; `None` when it was not.
    pub(crate) fn get(&self, dir: &str) -> Option<&DirRead> {
        self.0.get(dir)
    }

    /// The write of `ending`'s record of `nodes` into `dir`, in the
    /// transaction that deletes them; `None` when their directory takes no
    /// record, was not read, or holds an application's data.
    fn write(&self, ending: &Ending, dir: &str, nodes: &[&Seen]) -> Option<DirWrite> {
        let read = self.get(dir)?;
        if !nodes
            .iter()
            .all(|node| directory_for(&node.path) == Some(dir))
        {
            return None;
        }
        let ended: Vec<(&str, i64)> = nodes
            .iter()
            .map(|node| (node.path.as_str(), node.owner))
            .collect();
        let record = read.next_record(ending, &ended, Known::default(), None)?;
        Some(read.write(dir, &record))
    }
}

/// Deletes `nodes` by another's hand, each only if it is still the node
/// seen ([`delete::delete_seen`]), with the end record of `ending` in each
/// directory that takes one and is not `spared` (one this reap deletes
/// too): written at the version read, and over a fresh read of the
/// directories written in between, at most [`TRIES`] times, then the
/// deletes go alone. `on_done` hears each node's outcome.
pub(crate) async fn delete_recording(
    session: &Session,
    nodes: Vec<Seen>,
    ending: &Ending,
    spared: &impl Fn(&str) -> bool,
    mut on_done: impl FnMut(&Seen, Deletion),
) -> Result<(), zk::Error> {
    let mut pending = nodes;
    for _ in 0..TRIES {
        if pending.is_empty() {
            return Ok(());
        }
        let reads = DirReads::of(session, &pending).await?;
        let records = |dir: &str, nodes: &[&Seen]| {
            (!spared(dir))
                .then(|| reads.write(ending, dir, nodes))
                .flatten()
        };
        let mut changed = Vec::new();
        delete::delete_seen(
            session,
            pending,
            &records,
            |node, deletion| match deletion {
                Deletion::DirChanged => changed.push(node.clone()),
                other => on_done(node, other),
            },
        )
        .await?;
        pending = changed;
    }
    delete::delete_seen(session, pending, &delete::no_records, on_done).await
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn ending(how: EndHow, reason: Option<&str>) -> Ending {
        Ending {
            how,
            by: Ender {
                user: "u".into(),
                host: "h".into(),
                pid: 123,
            },
            reason: reason.map(str::to_owned),
        }
    }

    /// A directory's stat: `cversion` changes of its children so far,
    /// `children` of them, the last at `pzxid`, its data written at `mzxid`
    /// and time `mtime`.
    pub(crate) fn dir_stat(cversion: i32, children: i32, (pzxid, mzxid): (i64, i64)) -> zk::Stat {
        zk::Stat {
            cversion,
            num_children: children,
            pzxid,
            mzxid,
            mtime: 9_000,
            version: 4,
            ..zk::test_stat(1, 0)
        }
    }

    /// A directory read with `data` and `stat`.
    pub(crate) fn read(data: &[u8], stat: zk::Stat) -> DirRead {
        DirRead {
            data: data.to_vec(),
            stat,
        }
    }

    /// The bytes of a record of `how` of `node`, with `evidence`.
    pub(crate) fn record_bytes(how: EndHow, node: &str, evidence: Option<Evidence>) -> Vec<u8> {
        ending(how, None)
            .record([(node, 7)], None, evidence)
            .to_bytes()
    }

    fn counted(deletes: u32, unclean: Option<Unclean>) -> Option<Evidence> {
        Some(Evidence {
            deletes,
            exact: true,
            unclean,
        })
    }

    #[test]
    fn the_record_has_its_one_shape() {
        let evidence = Evidence {
            deletes: 3,
            exact: false,
            unclean: Some(Unclean {
                at_ms: 1_700_000_000_000,
                unknown: true,
            }),
        };
        let bytes = ending(EndHow::Released, None)
            .record([("/l/_c_x-lock-0000000001", 0x1f)], None, Some(evidence))
            .to_bytes();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            r#"{"zklock_end":{"version":1,"nodes":[{"node":"_c_x-lock-0000000001","session":"0x1f"}],"how":"released","by":{"user":"u","host":"h","pid":123},"reason":null,"ran":null,"made_persistent":false,"evidence":{"deletes":3,"exact":false,"unclean":{"at_ms":1700000000000,"unknown":true}}}}"#
        );
        let broken = ending(EndHow::Broken, Some("stuck"))
            .record([("/l/a-0000000002", 2)], None, None)
            .to_bytes();
        assert!(
            String::from_utf8(broken).unwrap().contains(
                r#""how":"broken","by":{"user":"u","host":"h","pid":123},"reason":"stuck""#
            )
        );
    }

    #[test]
    fn an_older_zklocks_record_reads_unmarked_with_its_run_and_no_evidence() {
        let old = br#"{"zklock_end":{"version":1,"nodes":[],"how":"released","by":{"user":"u","host":"h","pid":1},"reason":null,"ran":{"at_ms":5,"per_ms":9,"by":{"user":"u","host":"h","pid":1}}}}"#;
        let record = EndRecord::parse(old).unwrap();
        assert_eq!(record.evidence, None);
        assert!(!record.made_persistent);
        assert_eq!(record.ran.map(|ran| ran.at_ms), Some(5));
        // And proves nothing of the ends before it.
        let ends = read(old, dir_stat(4, 0, (9, 9))).ends();
        assert!(!ends.accounted);
    }

    #[test]
    fn a_record_names_only_its_own_nodes() {
        let record = ending(EndHow::Reaped, Some("old")).record(
            [("/l/lock-0000000001", 1), ("/l/lock-0000000002", 2)],
            None,
            None,
        );
        assert!(record.names("/l/lock-0000000002", 2));
        // The same name under another session is another node.
        assert!(!record.names("/l/lock-0000000002", 3));
        assert!(naming(&record.to_bytes(), "/l/lock-0000000003", 3).is_none());
        assert_eq!(record.who_and_why(), "u@h pid 123: old");
    }

    #[test]
    fn anything_else_is_no_record() {
        for data in [&b""[..], b"3", b"{}", b"{\"zklock_end\":1}", b"\xff{"] {
            assert_eq!(EndRecord::parse(data), None);
        }
        let future = br#"{"zklock_end":{"version":2,"nodes":[],"how":"released","by":{"user":"u","host":"h","pid":1},"reason":null,"ran":null}}"#;
        assert_eq!(EndRecord::parse(future), None);
        // A count no record has is no record, and no panic.
        let huge = br#"{"zklock_end":{"version":1,"nodes":[],"how":"released","by":{"user":"u","host":"h","pid":1},"reason":null,"ran":null,"evidence":{"deletes":-1,"exact":true,"unclean":null}}}"#;
        assert_eq!(EndRecord::parse(huge), None);
    }

    #[test]
    fn no_record_where_a_library_reads_the_directory() {
        assert_eq!(
            directory_for("/locks/a/_c_9f-lock-0000000001"),
            Some("/locks/a")
        );
        assert_eq!(
            directory_for("/locks/s/leases/_c_9f-lease-0000000001"),
            Some("/locks/s/leases")
        );
        // A kazoo semaphore keeps its maximum in the node its leases are in.
        assert_eq!(
            directory_for("/locks/s/0123456789abcdef0123456789abcdef"),
            None
        );
        assert_eq!(directory_for("/e/_c_9f-latch-0000000001"), None);
        // An emptied lock directory that reap deletes.
        assert_eq!(directory_for("/hbase/table-lock/t2"), None);
    }

    #[test]
    fn deletes_are_half_of_cversion_less_the_children_through_the_wrap() {
        let deletes =
            |cversion, children| read(b"", dir_stat(cversion, children, (1, 1))).deletes();
        assert_eq!(deletes(0, 0), Some(0));
        assert_eq!(deletes(1, 1), Some(0));
        assert_eq!(deletes(2, 0), Some(1));
        assert_eq!(deletes(10, 2), Some(4));
        // No directory made empty has an odd difference.
        assert_eq!(deletes(3, 0), None);
        // cversion wraps at 2^31 to negative numbers: 2^31 + 2 changes, 2
        // children, 2^30 deletes.
        assert_eq!(deletes(i32::MIN + 2, 2), Some(1 << 30));
        // A full turn less two changes, no children: counted modulo 2^31.
        assert_eq!(deletes(-2, 0), Some((1 << 31) - 1));
    }

    #[test]
    fn a_read_accounts_for_every_end_only_when_the_records_count_them_all() {
        let node = "/l/lock-0000000003";
        let unclean = Some(Unclean {
            at_ms: 500,
            unknown: false,
        });
        // Four deletes, the records count four: every end accounted for,
        // and the latest unclean one known.
        let four = record_bytes(EndHow::Released, node, counted(4, unclean));
        let ends = read(&four, dir_stat(9, 1, (12, 10))).ends();
        assert_eq!(
            ends,
            Ends {
                accounted: true,
                unclean
            }
        );
        // A fifth delete no record counts: an end unaccounted for.
        let ends = read(&four, dir_stat(11, 1, (12, 10))).ends();
        assert!(!ends.accounted);
        assert_eq!(ends.unclean, unclean);
        // The count wraps as the directory's does.
        let wrapped = record_bytes(EndHow::Released, node, counted(1 << 30, None));
        assert!(
            read(&wrapped, dir_stat(i32::MIN + 2, 2, (1, 1)))
                .ends()
                .accounted
        );
        // An unclean end of the record's own is dated when its directory's
        // data was written.
        let broken = record_bytes(EndHow::Broken, node, counted(4, None));
        assert_eq!(
            read(&broken, dir_stat(8, 0, (7, 7))).ends().unclean,
            Some(Unclean {
                at_ms: 9_000,
                unknown: false
            })
        );
        // No record, an application's data, a record with no evidence.
        for data in [&b""[..], br#"{"db":"prod-primary","replicas":3}"#] {
            assert!(!read(data, dir_stat(0, 0, (1, 1))).ends().accounted);
        }
    }

    #[test]
    fn an_exclusive_holders_record_vouches_only_while_nothing_changed_after_it() {
        let node = "/l/_c_x-lock-0000000003";
        let claim = Some(Evidence {
            deletes: 2,
            exact: false,
            unclean: None,
        });
        let bytes = record_bytes(EndHow::Released, node, claim);
        // Three deletes, two counted: the third a waiter behind the holder,
        // which never held. Nothing changed since the record's transaction.
        let untouched = read(&bytes, dir_stat(6, 0, (20, 20)));
        assert!(untouched.ends().accounted);
        assert!(untouched.vouches_for("_c_x-lock-0000000003"));
        assert!(!untouched.vouches_for("_c_x-lock-0000000004"));
        // A child changed after it (or its data was written again): the
        // count must match.
        assert!(!read(&bytes, dir_stat(7, 1, (21, 20))).ends().accounted);
        assert!(!read(&bytes, dir_stat(6, 0, (20, 22))).ends().accounted);
        assert!(read(&bytes, dir_stat(5, 1, (21, 20))).ends().accounted);
        // An exact count vouches for nothing beyond it.
        let exact = read(
            &record_bytes(EndHow::Released, node, counted(2, None)),
            dir_stat(6, 0, (20, 20)),
        );
        assert!(!exact.ends().accounted);
        assert!(!exact.vouches_for("_c_x-lock-0000000003"));
    }

    #[test]
    fn the_next_record_keeps_what_the_last_held_and_counts_its_own() {
        let node = "/l/lock-0000000009";
        let ran = Ran {
            at_ms: 77,
            per_ms: 1000,
            by: ending(EndHow::Released, None).by,
        };
        let mut last = ending(EndHow::Released, None).record(
            [("/l/lock-0000000007", 7)],
            None,
            counted(3, None),
        );
        last.ran = Some(ran.clone());
        last.made_persistent = true;
        let unclean = |at_ms, unknown| Some(Unclean { at_ms, unknown });
        // Four deletes read, three counted: the fourth is unaccounted for,
        // dated when it was seen; the one before ours is kept too.
        let known = Known {
            unclean: unclean(100, false),
            deletes: None,
            seen_ms: Some(200),
        };
        let over = read(&last.to_bytes(), dir_stat(9, 1, (30, 28)));
        let next = over
            .next_record(&ending(EndHow::GaveUp, None), &[(node, 9)], known, None)
            .unwrap();
        assert_eq!(next.how, EndHow::GaveUp);
        assert!(next.names(node, 9));
        assert_eq!(next.ran, Some(ran.clone()));
        assert!(next.made_persistent);
        assert_eq!(
            next.evidence,
            Some(Evidence {
                deletes: 5,
                exact: true,
                unclean: unclean(200, true)
            })
        );
        // One the writer saw on its way in (four deletes then, as now) keeps
        // the date it gave it then.
        let seen_before = Known {
            deletes: Some(4),
            ..known
        };
        let next = over
            .next_record(
                &ending(EndHow::GaveUp, None),
                &[(node, 9)],
                seen_before,
                None,
            )
            .unwrap();
        assert_eq!(next.evidence.unwrap().unclean, unclean(100, false));
        // Accounted for: nothing dated, the earlier unclean end kept; a
        // later run replaces the one kept.
        let later_run = Ran { at_ms: 90, ..ran };
        let over = read(&last.to_bytes(), dir_stat(7, 1, (30, 28)));
        let next = over
            .next_record(
                &ending(EndHow::Released, None),
                &[(node, 9)],
                known,
                Some(later_run.clone()),
            )
            .unwrap();
        assert_eq!(next.ran, Some(later_run));
        assert_eq!(next.evidence.unwrap().unclean, unclean(100, false));
        assert_eq!(next.evidence.unwrap().deletes, 4);
        // Nothing is written over an application's data.
        let config = read(
            br#"{"db":"prod-primary","replicas":3}"#,
            dir_stat(2, 1, (3, 1)),
        );
        assert!(!config.takes_record());
        let none = config.next_record(&ending(EndHow::Broken, None), &[(node, 9)], known, None);
        assert_eq!(none, None);
    }

    #[test]
    fn the_later_run_is_kept() {
        let ran = |at_ms| Ran {
            at_ms,
            per_ms: 1000,
            by: ending(EndHow::Released, None).by,
        };
        assert_eq!(later(Some(ran(5)), Some(ran(9))), Some(ran(9)));
        assert_eq!(later(Some(ran(9)), Some(ran(5))), Some(ran(9)));
        assert_eq!(later(None, Some(ran(5))), Some(ran(5)));
        assert_eq!(later(None, None), None);
    }
}
