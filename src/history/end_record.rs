//! The end record zklock writes into a lock directory's data, in the same
//! multi transaction as the delete, whenever it ends a hold or a wait
//! itself: whose node, how it ended, who did it and why.
//!
//! History reads it from the log beside the delete. A directory's data that
//! is not this JSON (another library's, or anything at all) is simply not
//! an end record: it is read leniently and never fails a replay.

use serde::{Deserialize, Serialize};

/// The record as the directory's data carries it.
#[derive(Debug, Deserialize)]
struct Wrapper {
    zklock_end: EndRecord,
}

/// One end record.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub(crate) struct EndRecord {
    #[serde(default)]
    pub nodes: Vec<EndedNode>,
    pub how: String,
    #[serde(default)]
    pub by: Option<Breaker>,
    #[serde(default)]
    pub reason: Option<String>,
}

/// A node the record says ended.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub(crate) struct EndedNode {
    /// The child's name in the lock directory.
    pub node: String,
}

/// Who ran the zklock that wrote the record.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub(crate) struct Breaker {
    #[serde(default)]
    pub user: String,
    #[serde(default)]
    pub host: String,
    #[serde(default)]
    pub pid: u32,
}

impl Breaker {
    /// `user@host pid N`, as owners are shown.
    pub(crate) fn summary(&self) -> String {
        format!("{}@{} pid {}", self.user, self.host, self.pid)
    }
}

impl EndRecord {
    /// The end record `data` holds, if it holds one.
    pub(crate) fn parse(data: &[u8]) -> Option<EndRecord> {
        if !data.starts_with(b"{") {
            return None;
        }
        serde_json::from_slice::<Wrapper>(data)
            .ok()
            .map(|wrapper| wrapper.zklock_end)
    }

    /// True when it names the child `name`.
    pub(crate) fn names(&self, name: &str) -> bool {
        self.nodes.iter().any(|ended| ended.node == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_record_and_nothing_else() {
        let data = br#"{"zklock_end":{"version":1,"nodes":[{"node":"lock-0000000001","session":"0x1"}],"how":"broken","by":{"user":"ops","host":"h1","pid":42},"reason":"stuck deploy","ran":null}}"#;
        let record = EndRecord::parse(data).unwrap();
        assert!(record.names("lock-0000000001"));
        assert!(!record.names("lock-0000000002"));
        assert_eq!(record.how, "broken");
        assert_eq!(record.reason.as_deref(), Some("stuck deploy"));
        assert_eq!(record.by.unwrap().summary(), "ops@h1 pid 42");
        for other in [
            &b""[..],
            b"4",
            b"{\"max_leases\":3}",
            b"{not json",
            b"\xff\xfe",
        ] {
            assert_eq!(EndRecord::parse(other), None);
        }
    }
}
