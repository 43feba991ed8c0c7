//! The JSON form of locks and contenders, documented in the man
//! pages of `ls`, `stat` and `dump`.
//!
//! A lock: `{"path", "kind", "dialect", "last_run", "holders", "waiters"}`,
//! `last_run` only from a walk that read it (`ls`), null when none counted.
//! A contender:
//! `{"path", "name", "sequence", "mode", "session", "ctime_ms", "age_ms",
//! "fence", "data", "owner", "waiting_on", "table_lock", "client",
//! "watching", "connection"}`, and `dump` adds `"stat"`. `client` is
//! `{"address", "server", "connected"}` (with `"absent_ms"` once surveys
//! have shown the session gone) or null when unknown; `connection` is
//! `connected`, `disconnected` or `unknown`, null for a node without a
//! session; `watching` says whether a
//! waiter's session watches the node it waits on (null when unknown). Derived fields (`data` as text, `owner`, `table_lock`) are
//! computed while writing, so a lock in memory holds only the raw bytes.

use std::borrow::Cow;

use serde::{Serialize, Serializer};

use super::hbase::TableLock;
use super::locks::{Contender, LastRun, Lock, LockDialect, LockKind};
use super::node::NodeStat;
use crate::lock::ContenderMode;
use crate::lock::Owner;
use crate::lock::end::Ran;
use crate::zk;
use crate::zk::sessions::{Client, Connection};

/// A contender as JSON.
#[derive(Serialize)]
pub struct ContenderJson<'a> {
    path: &'a str,
    name: &'a str,
    sequence: Option<i32>,
    mode: ContenderMode,
    session: String,
    ctime_ms: i64,
    age_ms: i64,
    fence: i64,
    data: Option<Cow<'a, str>>,
    owner: Option<Owner>,
    waiting_on: Option<&'a str>,
    table_lock: Option<TableLock>,
    client: Option<&'a Client>,
    watching: Option<bool>,
    connection: Option<Connection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stat: Option<NodeStat>,
}

impl Contender {
    /// This contender as JSON; `full_stat` adds every stat field (`dump`).
    pub fn json(&self, full_stat: bool) -> ContenderJson<'_> {
        ContenderJson {
            path: &self.path,
            name: &self.name,
            sequence: self.sequence,
            mode: self.mode,
            session: zk::format_session(self.session()),
            ctime_ms: self.stat.ctime,
            age_ms: self.age_ms,
            fence: self.fence(),
            data: (!self.data.is_empty()).then(|| String::from_utf8_lossy(&self.data)),
            owner: self.owner(),
            waiting_on: self.waiting_on.as_deref(),
            table_lock: self.table_lock(),
            client: self.client.as_ref(),
            watching: self.watching,
            connection: self.connection(),
            stat: full_stat.then(|| NodeStat::from(&self.stat)),
        }
    }
}

/// A lock as JSON.
#[derive(Serialize)]
struct LockJson<'a> {
    path: &'a str,
    kind: LockKind,
    dialect: LockDialect,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_run: Option<serde_json::Value>,
    holders: Vec<ContenderJson<'a>>,
    waiters: Vec<ContenderJson<'a>>,
}

impl Lock {
    fn json(&self, full_stat: bool) -> LockJson<'_> {
        LockJson {
            path: &self.path,
            kind: self.kind,
            dialect: self.dialect,
            last_run: match &self.last_run {
                LastRun::Unread => None,
                LastRun::Read(ran) => Some(last_run_json(ran.as_ref())),
            },
            holders: self.holders.iter().map(|c| c.json(full_stat)).collect(),
            waiters: self.waiters.iter().map(|c| c.json(full_stat)).collect(),
        }
    }
}

impl Serialize for Lock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json(false).serialize(serializer)
    }
}

/// A lock whose contenders carry every stat field, as `dump` writes it.
pub(crate) struct WithStats<'a>(pub &'a Lock);

impl Serialize for WithStats<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.json(true).serialize(serializer)
    }
}

/// A `--once-per` lock's last counted run as JSON: when it started and
/// when its window opens again (on the server's clock), its window, and
/// who ran it; `null` when none counted.
pub(crate) fn last_run_json(ran: Option<&Ran>) -> serde_json::Value {
    ran.map_or(serde_json::Value::Null, |ran| {
        serde_json::json!({
            "at_ms": ran.at_ms,
            "per_ms": ran.per_ms,
            "by": ran.by,
            "window_opens_at_ms": ran.opens_at_ms(),
        })
    })
}
