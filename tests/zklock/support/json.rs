//! Typed mirrors of zklock's JSON output (as the man pages document it), written
//! independently of src/ so that a change to the contract breaks a test.
//! Unknown fields are refused: a new field must be added here on purpose.

use serde::Deserialize;

/// `stat` of a plain node: `{"path", "stat": {...}, "data"}`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct NodeReport {
    pub path: String,
    pub stat: NodeStat,
    /// Lossy UTF-8, or null when the node has no data.
    pub data: Option<String>,
    /// An emptied `--once-per` lock's last counted run, when it has one.
    pub last_run: Option<serde_json::Value>,
}

/// The zkCli stat fields, in snake_case.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct NodeStat {
    pub czxid: i64,
    pub ctime_ms: i64,
    pub mzxid: i64,
    pub mtime_ms: i64,
    pub pzxid: i64,
    pub cversion: i32,
    pub data_version: i32,
    pub acl_version: i32,
    /// `0x` and lowercase hex; `0x0` for a persistent node.
    pub ephemeral_owner: String,
    pub data_length: i32,
    pub num_children: i32,
}

/// A lock (`ls` prints an array of these, `stat` of a lock one):
/// `{"path", "kind", "dialect", "holders", "waiters"}`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    pub path: String,
    /// `mutex`, `read-write`, `semaphore`, `election` or `leader`.
    pub kind: String,
    pub dialect: String,
    pub holders: Vec<Contender>,
    pub waiters: Vec<Contender>,
    /// `stat`: a `--once-per` lock's last counted run, or null.
    pub last_run: Option<serde_json::Value>,
}

/// One contender node of a lock.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Contender {
    pub path: String,
    pub name: String,
    /// The sequence suffix; null for kazoo's semaphore leases, which have none.
    pub sequence: Option<i64>,
    /// `exclusive`, `shared` or `lease`.
    pub mode: String,
    /// The owner session, `0x...`.
    pub session: String,
    pub ctime_ms: i64,
    pub age_ms: i64,
    /// The fencing token: the czxid of the node.
    pub fence: i64,
    /// Raw data as lossy UTF-8, or null when empty.
    pub data: Option<String>,
    /// zklock's parsed owner JSON, or null.
    pub owner: Option<serde_json::Value>,
    /// The full path of the node it waits on; null for a holder and for a
    /// semaphore acquirer waiting for any lease.
    pub waiting_on: Option<String>,
    /// An HBase contender's decoded TableLock, or null.
    pub table_lock: Option<TableLock>,
    /// Who is behind the session, or null when unknown.
    pub client: Option<Client>,
    /// For a waiter: whether its session watches the node it waits on.
    pub watching: Option<bool>,
    /// `connected`, `disconnected` or `unknown`; null without a session.
    pub connection: Option<String>,
    /// Every stat field: present in `dump` only.
    #[serde(default)]
    pub stat: Option<NodeStat>,
    /// A waiter's chain beyond its queue: present in `stat` only, on
    /// waiters.
    #[serde(default)]
    pub blocked_by: Option<Vec<Hop>>,
}

/// One hop of a waiter's chain (`stat`'s `blocked_by`).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Hop {
    pub lock: String,
    pub node: String,
    pub session: String,
    pub owner: String,
    pub age_ms: i64,
    /// `session`, `nesting` or `locks`.
    pub via: String,
    pub loops: bool,
}

/// The client behind a contender's session, as the ensemble reports it.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Client {
    /// `host:port` it connects from; null when not connected.
    pub address: Option<String>,
    /// The member it is connected to, as the connect string names it.
    pub server: Option<String>,
    pub connected: bool,
    /// How long the session has been gone across the surveys of one
    /// process; absent until two surveys have shown it so.
    #[serde(default)]
    pub absent_ms: Option<i64>,
}

/// HBase's TableLock decoded from `PBUF` data; fields null when absent.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TableLock {
    /// `qualifier` in the default namespace, else `namespace:qualifier`.
    pub table: Option<String>,
    /// `host,port,start_code`.
    pub owner: Option<String>,
    pub thread_id: Option<i64>,
    pub shared: Option<bool>,
    pub purpose: Option<String>,
    pub create_time_ms: Option<i64>,
    /// What could not be decoded, escaped.
    pub undecoded: Option<String>,
}

/// `dump`: `{"path", "time_ms", "locks"}`, contenders with `stat`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LockDump {
    pub path: String,
    pub time_ms: i64,
    pub locks: Vec<Lock>,
}

/// `dump --sessions`: `{"path", "time_ms", "sessions"}`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SessionDump {
    pub path: String,
    pub time_ms: i64,
    pub sessions: Vec<SessionGroup>,
}

/// What one session holds and waits for.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SessionGroup {
    /// `0x...`; `0x0` gathers persistent nodes.
    pub session: String,
    pub holding: Vec<SessionEntry>,
    pub waiting: Vec<SessionEntry>,
}

/// One contender of a session, with its lock.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SessionEntry {
    pub lock: String,
    pub kind: String,
    pub dialect: String,
    pub contender: Contender,
}

/// `watch -o json`: one event per line.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct WatchEvent {
    /// RFC 3339 UTC with milliseconds.
    pub time: String,
    pub time_ms: i64,
    /// `holding`, `queued`, `watching`, `waiting`, `acquired`, `released`,
    /// `left`, `lock_delay`, `gone` or `gap`.
    pub event: String,
    /// The lock directory; for `watching` and `gap` the watched path.
    pub lock: String,
    /// The contender's node; null for `watching`, `gone` and `gap`.
    pub node: Option<String>,
    pub mode: Option<String>,
    pub session: Option<String>,
    pub fence: Option<i64>,
    /// The owner as text (as stat's OWNER column shows it).
    pub owner_text: Option<String>,
    pub waiting_on: Option<String>,
    pub holders: u64,
    pub waiters: u64,
    /// On `released`, when the watch saw the hold begin.
    pub held_ms: Option<i64>,
    /// On `acquired`, when the watch saw the wait begin.
    pub waited_ms: Option<i64>,
    /// On `released`: `deleted_while_session_alive`, `session_ended`,
    /// `revoked`, what an end record says (`released`, `gave_up`,
    /// `max_hold`, `broken`, `reaped`) or `unknown`.
    pub how: Option<String>,
    /// What `how` rests on.
    pub how_evidence: Option<String>,
    /// Who ended the hold and why, from the end record.
    pub ended_by: Option<EndedBy>,
    /// On `lock_delay`: the delay the new holder keeps.
    #[serde(default)]
    pub lock_delay_ms: Option<u64>,
}

/// The zklock that ended a hold, as a watch event names it.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct EndedBy {
    pub user: String,
    pub host: String,
    pub pid: u32,
    pub reason: Option<String>,
}

/// `reap -o json`: `{"deleted", "skipped"}`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ReapReport {
    pub deleted: Vec<String>,
    pub skipped: Vec<ReapSkipped>,
}

/// A node reap (or release) left alone, and why.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ReapSkipped {
    pub path: String,
    pub reason: String,
}

/// `reap --dry-run -o json`: `{"would_delete", "deleted": [], "skipped": []}`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ReapDryRun {
    pub would_delete: Vec<ReapNode>,
    pub deleted: Vec<String>,
    pub skipped: Vec<ReapSkipped>,
}

/// A node `reap --dry-run` would delete.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ReapNode {
    pub path: String,
    /// `holder`, `waiter` or `empty-directory`.
    pub what: String,
    pub lock: String,
    /// `0x...`; null for a directory.
    pub session: Option<String>,
    pub age_ms: i64,
    /// As stat shows it; null for a directory.
    pub owner: Option<String>,
    /// `connected`, `disconnected` or `unknown`; null for a directory.
    pub connection: Option<String>,
    /// How long every member has left the session unlisted across reap's
    /// surveys; null unless two surveys have.
    pub absent_ms: Option<i64>,
    /// Whether the end record would go into its lock directory (which
    /// holds nothing or a record); null for a directory.
    pub end_record: Option<bool>,
}

/// Any command's failure with `-o json`, on stderr: `{"error", "exit_code",
/// "cause"}`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ErrorReport {
    /// For people; never matched by tests.
    pub error: String,
    pub exit_code: i32,
    /// A stable word for what went wrong.
    pub cause: String,
    /// A pending lock-delay (`lock_delay`): its lock, what is left of it,
    /// and whether the end it follows is `unclean` or `unknown`.
    #[serde(default)]
    pub lock: Option<String>,
    #[serde(default)]
    pub left_ms: Option<u64>,
    #[serde(default)]
    pub last_end: Option<String>,
}

impl ErrorReport {
    /// The JSON error of a failed `-o json` run (the last line of its
    /// stderr), after checking its exit code.
    pub fn of(run: &super::Run, code: i32) -> ErrorReport {
        run.assert_code(code);
        let line = run.stderr.lines().last().unwrap_or_default();
        let report: ErrorReport = serde_json::from_str(line)
            .unwrap_or_else(|err| panic!("no JSON error ({err}): {}", run.stderr));
        assert_eq!(report.exit_code, code, "{report:?}");
        report
    }
}

/// `release -o json`: `{"deleted", "revoked", "skipped"}`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ReleaseReport {
    pub deleted: Vec<String>,
    pub revoked: Vec<String>,
    pub skipped: Vec<ReapSkipped>,
}

/// `lock --detach` and `lock --ttl` with `-o json`: what was granted.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    /// The node's path: what `release` takes.
    pub token: String,
    pub lock: String,
    /// The fencing token: the node's czxid.
    pub fence: i64,
    /// The session that holds it, `0x...`.
    pub session: String,
}

/// `history -o json`: every contender, then each lock's summary.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct History {
    pub holds: Vec<HistoryHold>,
    pub locks: Vec<HistoryLock>,
}

/// One contender's life in `history`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HistoryHold {
    pub lock: String,
    pub node: String,
    pub dialect: String,
    pub mode: String,
    pub session: String,
    pub fence: i64,
    pub owner: Option<serde_json::Value>,
    /// The data as text, cut, when it is no owner record.
    pub data: Option<String>,
    pub created_ms: i64,
    pub holding_ms: Option<i64>,
    pub ended_ms: Option<i64>,
    pub ended_zxid: Option<i64>,
    /// released, gave_up, max_hold, lost, closed_by_client, expired,
    /// broken, reaped, ttl_expired; null while alive.
    pub how: Option<String>,
    pub ended_by: Option<String>,
    pub breaker: Option<HistoryBreaker>,
    pub reason: Option<String>,
    pub waited_ms: Option<i64>,
    pub held_ms: Option<i64>,
    /// The same for the holds one zklock took together.
    pub set: Option<String>,
}

/// Who broke a hold, from its end record.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct HistoryBreaker {
    pub user: String,
    pub host: String,
    pub pid: u32,
}

/// `history --overlaps -o json`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HistoryOverlaps {
    pub overlaps: Vec<HistoryOverlap>,
}

/// A span in which two sessions held one lock at once.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct HistoryOverlap {
    pub lock: String,
    pub from_ms: i64,
    pub from_zxid: i64,
    pub until_ms: Option<i64>,
    pub until_zxid: Option<i64>,
    /// The holders named: the first 16, and the first 16 exclusive ones.
    pub holders: Vec<HistoryHolder>,
    /// How many held.
    pub holder_count: usize,
}

/// One holder of an overlap.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct HistoryHolder {
    pub node: String,
    pub dialect: String,
    pub mode: String,
    pub session: String,
    pub fence: i64,
}

/// One lock's summary in `history`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HistoryLock {
    pub lock: String,
    pub contenders: u64,
    pub holds: u64,
    pub unclean: u64,
    pub hold_ms: HistorySpread,
    pub wait_ms: HistorySpread,
}

/// Percentiles of durations, in ms.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct HistorySpread {
    pub p50: Option<i64>,
    pub p99: Option<i64>,
    pub max: Option<i64>,
}

/// `verify -o json`: the verdict of a run.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    pub passed: bool,
    pub path: String,
    /// `exclusive` or `rw`.
    pub mode: String,
    pub contenders: usize,
    pub duration_ms: u64,
    pub ran_ms: u64,
    pub session_timeout_ms: u64,
    pub kill_after_ms: u64,
    pub rounds: usize,
    pub sections: usize,
    pub give_ups: usize,
    /// Holders that never reached the lock (exit 3) with no fault.
    pub unreachable: usize,
    /// Holders that lost their lock with no fault (exit 4).
    pub lost_without_fault: usize,
    pub refused_connections: u64,
    /// Why the run stopped before its time, or null.
    pub cut_short: Option<String>,
    /// One per fault class: cut, pause, kill.
    pub faults: Vec<FaultClass>,
    pub injected: Vec<InjectedFault>,
    pub allowed_overlaps: Vec<[VerifiedSection; 2]>,
    pub violations: Vec<Violation>,
    pub advice: Vec<String>,
}

/// A fault class of a verdict.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FaultClass {
    pub class: String,
    pub requested: bool,
    pub injected: usize,
    pub stopped_in_time: usize,
    pub overlaps_allowed: usize,
    pub margin_to_expiry_ms: Option<Spread>,
    pub margin_to_next_grant_ms: Option<Spread>,
}

/// The smallest and the median of some margins (ms).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Spread {
    pub min: i64,
    pub median: i64,
}

/// One fault a run injected.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct InjectedFault {
    pub class: String,
    /// For a kill: `zklock`, `guard` or `both`.
    pub target: Option<String>,
    pub run: u64,
    pub contender: usize,
    pub fence: Option<i64>,
    pub at_ms: i64,
    pub resumed_ms: Option<i64>,
    pub stopped_ms: Option<i64>,
    pub margin_to_expiry_ms: Option<i64>,
    pub margin_to_next_grant_ms: Option<i64>,
    pub exit: Option<String>,
}

/// A critical section as a verdict shows it.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct VerifiedSection {
    pub run: u64,
    pub contender: usize,
    /// `exclusive`, `read` or `write`.
    pub mode: String,
    pub fence: i64,
    pub pid: i32,
    pub start_ms: i64,
    pub stop_ms: Option<i64>,
    /// `told`, `signal`, `killed` or `running`.
    pub stopped: String,
}

/// A violation a run found, with its evidence.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Violation {
    pub kind: String,
    pub message: String,
    pub sections: Vec<VerifiedSection>,
}
