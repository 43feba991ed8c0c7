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
//! The directory's data is only ever written where no library reads it
//! ([`directory_for`]): a kazoo semaphore keeps its maximum there.
//! The record is JSON of one fixed shape, `{"zklock_end": {...}}`, which
//! other tools (`history`) parse too: its fields keep their names and
//! order.

use serde::{Deserialize, Serialize};

use super::name::{self, ContenderKind, Dialect};
use super::once::LastRuns;
use super::owner::Owner;
use super::semaphore;
use crate::zk::delete::Seen;
use crate::zk::{self, DirWrite, path};

/// The record's one version so far.
pub(crate) const VERSION: u32 = 1;

/// The longest `--reason` kept: the record shares the directory's data with
/// nothing, but ZooKeeper refuses a write larger than its buffer, and a
/// refused record would cost the end its record.
pub(crate) const MAX_REASON_BYTES: usize = 4096;

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
        }
    }

    /// True for the ends a holder makes itself: it had finished when it let
    /// go. A break or a reap ends a hold whose holder may still be at work.
    pub(crate) fn is_clean(self) -> bool {
        match self {
            EndHow::Released | EndHow::GaveUp | EndHow::MaxHold => true,
            EndHow::Broken | EndHow::Reaped => false,
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

/// The record itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EndRecord {
    pub version: u32,
    pub nodes: Vec<EndedNode>,
    pub how: EndHow,
    pub by: Ender,
    pub reason: Option<String>,
    pub ran: Option<Ran>,
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

    /// The write that records this end of our node at `node` (of
    /// `session`) in its directory; `None` where no record is written
    /// ([`directory_for`]).
    pub(crate) fn write_for(&self, node: &str, session: i64) -> Option<DirWrite> {
        directory_for(node).map(|dir| DirWrite {
            dir: dir.to_owned(),
            data: self.record([(node, session)]),
            version: None,
        })
    }

    /// The write of this end of `nodes` into `dir`, in the transaction
    /// that deletes them, keeping the last counted run `runs` read there
    /// and made at the version read; `None` when their directory takes no
    /// record ([`directory_for`]) or was not read.
    pub(crate) fn record_in(
        &self,
        dir: &str,
        nodes: &[&Seen],
        runs: &LastRuns,
    ) -> Option<DirWrite> {
        let (ran, version) = runs.in_dir(dir)?;
        let nodes_of = |node: &&Seen| directory_for(&node.path) == Some(dir);
        nodes.iter().all(nodes_of).then(|| DirWrite {
            dir: dir.to_owned(),
            data: self.record_keeping(
                nodes.iter().map(|node| (node.path.as_str(), node.owner)),
                ran,
            ),
            version: Some(version),
        })
    }

    /// The record of this end for `nodes` (path and owner session each),
    /// as the bytes written into their directory.
    pub(crate) fn record<'a>(&self, nodes: impl IntoIterator<Item = (&'a str, i64)>) -> Vec<u8> {
        self.record_keeping(nodes, None)
    }

    /// The record of this end for `nodes`, keeping `ran`, the lock's last
    /// counted `--once-per` run.
    pub(crate) fn record_keeping<'a>(
        &self,
        nodes: impl IntoIterator<Item = (&'a str, i64)>,
        ran: Option<Ran>,
    ) -> Vec<u8> {
        EndRecord {
            version: VERSION,
            nodes: nodes
                .into_iter()
                .map(|(node, session)| EndedNode {
                    node: path::basename(node).to_owned(),
                    session: zk::format_session(session),
                })
                .collect(),
            how: self.how,
            by: self.by.clone(),
            reason: self.reason.clone(),
            ran,
        }
        .to_bytes()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ending(how: EndHow, reason: Option<&str>) -> Ending {
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

    #[test]
    fn the_record_has_its_one_shape() {
        let bytes = ending(EndHow::Released, None).record([("/l/_c_x-lock-0000000001", 0x1f)]);
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            r#"{"zklock_end":{"version":1,"nodes":[{"node":"_c_x-lock-0000000001","session":"0x1f"}],"how":"released","by":{"user":"u","host":"h","pid":123},"reason":null,"ran":null}}"#
        );
        let broken = ending(EndHow::Broken, Some("stuck")).record([("/l/a-0000000002", 2)]);
        assert!(
            String::from_utf8(broken).unwrap().contains(
                r#""how":"broken","by":{"user":"u","host":"h","pid":123},"reason":"stuck""#
            )
        );
    }

    #[test]
    fn a_record_names_only_its_own_nodes() {
        let bytes = ending(EndHow::Reaped, Some("old"))
            .record([("/l/lock-0000000001", 1), ("/l/lock-0000000002", 2)]);
        let record = EndRecord::parse(&bytes).unwrap();
        assert!(record.names("/l/lock-0000000002", 2));
        // The same name under another session is another node.
        assert!(!record.names("/l/lock-0000000002", 3));
        assert!(naming(&bytes, "/l/lock-0000000003", 3).is_none());
        assert_eq!(record.who_and_why(), "u@h pid 123: old");
    }

    #[test]
    fn anything_else_is_no_record() {
        for data in [&b""[..], b"3", b"{}", b"{\"zklock_end\":1}", b"\xff{"] {
            assert_eq!(EndRecord::parse(data), None);
        }
        let future = br#"{"zklock_end":{"version":2,"nodes":[],"how":"released","by":{"user":"u","host":"h","pid":1},"reason":null,"ran":null}}"#;
        assert_eq!(EndRecord::parse(future), None);
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
}
