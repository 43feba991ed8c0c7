//! Elections and leader nodes beside locks: every layout a shared ensemble
//! holds (Kafka, Solr, Hadoop HA, Helix, HBase 2, Curator's LeaderLatch and
//! LeaderSelector, kazoo's Election, Party and Lease, go-zookeeper and the C
//! client's lock recipe), as `ls` and `stat` show them, and proof that `reap`
//! and `release` never depose a leader.

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use support::json::{Lock, ReapDryRun, ReapReport, WatchEvent};
use support::peers::{Library, acquired, peer};
use support::{TestEnv, Zk, wait_until};

const WAIT: Duration = Duration::from_secs(30);
const HEX: &str = "0123456789abcdef0123456789abcdef";

/// A protobuf length-delimited field.
fn bytes_field(number: u8, bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![(number << 3) | 2, bytes.len() as u8];
    out.extend_from_slice(bytes);
    out
}

/// A protobuf varint field (values below 2^14).
fn varint_field(number: u8, value: u16) -> Vec<u8> {
    vec![number << 3, (value as u8 & 0x7f) | 0x80, (value >> 7) as u8]
}

/// Hadoop's `ActiveNodeInfo` as the ZKFC writes it.
fn active_node_info(namenode: &[u8], host: &[u8]) -> Vec<u8> {
    [
        bytes_field(1, b"mycluster"),
        bytes_field(2, namenode),
        bytes_field(3, host),
        varint_field(4, 8020),
        varint_field(5, 8019),
    ]
    .concat()
}

/// HBase 2's master node: `0xff`, the writer id's length and bytes, `PBUF`,
/// then `Master { ServerName master = 1; info_port = 3 }`.
fn hbase_master(host: &[u8], port: u16) -> Vec<u8> {
    let server = [bytes_field(1, host), varint_field(2, port)].concat();
    let id = b"master:16000";
    let mut data = vec![0xff];
    data.extend((id.len() as u32).to_be_bytes());
    data.extend(id);
    data.extend(b"PBUF");
    data.extend([bytes_field(1, &server), varint_field(3, 16010)].concat());
    data
}

/// Builds, with `zk`'s session, the nodes each service writes: returns the
/// paths that must be shown, with kind and dialect.
fn services(zk: &Zk) -> BTreeMap<String, (&'static str, &'static str)> {
    let session = zk.session_id();
    for dir in [
        "/kafka",
        "/hadoop-ha/mycluster",
        "/helix/c1/CONTROLLER",
        "/hbase/backup-masters",
        "/solr/overseer_elect/election",
        "/go/jobs",
        "/cpp/jobs",
        "/zk-election",
    ] {
        zk.mkdir_p(dir);
    }
    zk.create_ephemeral(
        "/kafka/controller",
        br#"{"version":1,"brokerid":3,"timestamp":"1700000000000"}"#,
    );
    let info = active_node_info(b"nn1", b"nn1.example.com");
    zk.create_ephemeral("/hadoop-ha/mycluster/ActiveStandbyElectorLock", &info);
    zk.create("/hadoop-ha/mycluster/ActiveBreadCrumb", &info);
    zk.create_ephemeral(
        "/helix/c1/CONTROLLER/LEADER",
        br#"{"id":"controller_0","simpleFields":{"HELIX_VERSION":"1.0.4","LIVE_INSTANCE":"4242@ctl-1","SESSION_ID":"1"},"listFields":{},"mapFields":{}}"#,
    );
    zk.create_ephemeral(
        "/hbase/master",
        &hbase_master(b"hmaster-1.example.com", 16000),
    );
    let candidate = zk.create_ephemeral_sequential(
        &format!("/solr/overseer_elect/election/{session}-10.0.0.5:8983_solr-n_"),
        b"",
    );
    let candidate_name = candidate.rsplit('/').next().unwrap().to_owned();
    zk.create_ephemeral(
        "/solr/overseer_elect/leader",
        format!(r#"{{"id":"{candidate_name}"}}"#).as_bytes(),
    );
    zk.create_ephemeral_sequential(&format!("/go/jobs/_c_{HEX}-lock-"), b"");
    zk.create_ephemeral_sequential(&format!("/cpp/jobs/x-{session:016x}-"), b"");
    zk.create_ephemeral_sequential("/zk-election/n_", b"");
    zk.create_ephemeral_sequential("/zk-election/n_", b"");
    [
        ("/kafka/controller", ("leader", "kafka")),
        (
            "/hadoop-ha/mycluster/ActiveStandbyElectorLock",
            ("leader", "hadoop"),
        ),
        ("/helix/c1/CONTROLLER/LEADER", ("leader", "helix")),
        ("/hbase/master", ("leader", "hbase")),
        ("/solr/overseer_elect/election", ("election", "solr")),
        ("/solr/overseer_elect/leader", ("leader", "solr")),
        ("/go/jobs", ("mutex", "go-zookeeper")),
        ("/cpp/jobs", ("mutex", "zk-c-recipe")),
        ("/zk-election", ("election", "zk-recipe")),
    ]
    .into_iter()
    .map(|(path, what)| (path.to_owned(), what))
    .collect()
}

/// Nodes named like the services' but not theirs: persistent, or with data
/// that is no such record. None may be shown or deleted.
fn decoys(zk: &Zk) {
    zk.mkdir_p("/decoy/seq");
    zk.create(
        "/decoy/controller",
        br#"{"version":1,"brokerid":9,"timestamp":"1"}"#,
    );
    zk.create_ephemeral("/decoy/master", b"not an hbase record");
    zk.create("/decoy/seq/n_0000000001", b"");
    zk.create_ephemeral("/decoy/leader", br#"{"id":"x"}"#);
}

fn ls(env: &TestEnv, path: &str) -> Vec<Lock> {
    env.zklock(["ls", path, "-o", "json"])
        .run()
        .assert_success()
        .json()
}

/// The table row of `path` in `ls -o wide`'s output, every cell whole.
fn table_row(env: &TestEnv, path: &str) -> String {
    let run = env.zklock(["ls", "/", "-o", "wide"]).run();
    run.assert_success();
    run.stdout_lines()
        .into_iter()
        .find(|line| line.split_whitespace().next() == Some(path))
        .unwrap_or_else(|| panic!("no row for {path}"))
        .to_owned()
}

#[test]
fn every_service_layout_is_listed_with_its_kind_dialect_and_leader() {
    let env = TestEnv::new();
    let expected = services(env.zk());
    decoys(env.zk());

    let found: BTreeMap<String, (String, String)> = ls(&env, "/")
        .into_iter()
        .map(|lock| (lock.path, (lock.kind, lock.dialect)))
        .collect();
    let expected: BTreeMap<String, (String, String)> = expected
        .into_iter()
        .map(|(path, (kind, dialect))| (path, (kind.to_owned(), dialect.to_owned())))
        .collect();
    assert_eq!(found, expected);

    // Each leader's data, decoded into who leads.
    for (path, leader) in [
        ("/kafka/controller", "broker 3"),
        (
            "/hadoop-ha/mycluster/ActiveStandbyElectorLock",
            "nn1 at nn1.example.com:8020 (mycluster, zkfc port 8019)",
        ),
        ("/helix/c1/CONTROLLER/LEADER", "controller_0 (4242@ctl-1)"),
        ("/hbase/master", "hmaster-1.example.com,16000"),
        ("/solr/overseer_elect/leader", "10.0.0.5:8983_solr"),
    ] {
        let row = table_row(&env, path);
        assert!(row.trim_end().ends_with(leader), "{path}: {row:?}");
    }

    // The lowest n_ candidate leads; the other waits on it.
    let election = env
        .zklock(["stat", "/zk-election", "-o", "json"])
        .run()
        .assert_success()
        .json::<Lock>();
    let candidates = env.zk().children("/zk-election");
    assert_eq!(election.holders[0].name, candidates[0]);
    assert_eq!(
        election.waiters[0].waiting_on.as_deref(),
        Some(format!("/zk-election/{}", candidates[0]).as_str())
    );
    let leader = env
        .zklock(["stat", "/kafka/controller", "-o", "json"])
        .run()
        .assert_success()
        .json::<Lock>();
    assert_eq!((leader.kind.as_str(), leader.holders.len()), ("leader", 1));
    assert_eq!(leader.holders[0].session, env.zk().session_hex());

    // watch follows leader nodes too: the controller is held, by broker 3.
    let run = env
        .zklock([
            "watch",
            "/kafka/controller",
            "--until",
            "held",
            "--timeout",
            "10s",
            "-o",
            "json",
        ])
        .run();
    run.assert_success();
    let events: Vec<WatchEvent> = run.json_lines();
    assert!(
        events.iter().any(|e| e.event == "holding"
            && e.lock == "/kafka/controller"
            && e.owner_text.as_deref() == Some("broker 3")),
        "{events:#?}"
    );
}

#[test]
fn reap_and_release_never_delete_elections_or_leader_nodes() {
    let env = TestEnv::new();
    let shown = services(env.zk());
    decoys(env.zk());
    let reaped: ReapReport = env
        .zklock(["reap", "/", "--all", "--yes", "-o", "json"])
        .run()
        .assert_success()
        .json();
    let mut deleted = reaped.deleted.clone();
    deleted.sort();
    // Only the two lock contenders go.
    assert_eq!(deleted.len(), 2, "{deleted:?}");
    assert!(deleted[0].starts_with("/cpp/jobs/x-"), "{deleted:?}");
    assert!(deleted[1].starts_with("/go/jobs/_c_"), "{deleted:?}");
    for (path, (kind, _)) in &shown {
        if *kind == "mutex" {
            continue;
        }
        assert!(env.zk().exists(path).is_some(), "{path} was deleted");
        assert!(
            !env.zk().children_if_any(path).is_empty() || *kind == "leader",
            "{path} lost its candidates"
        );
        env.zklock(["release", "--holders", "--yes", path.as_str()])
            .run()
            .assert_code(2);
    }
    let candidate = env.zk().children("/zk-election").remove(0);
    let token = format!("/zk-election/{candidate}");
    env.zklock(["release", &token]).run().assert_code(2);
    env.zklock(["release", "/kafka/controller"])
        .run()
        .assert_code(2);
    assert_eq!(env.zk().children("/zk-election").len(), 2);
    assert!(env.zk().exists("/kafka/controller").is_some());
}

#[test]
fn curator_leader_latch_and_selector_and_kazoo_election_party_and_lease() {
    let env = TestEnv::new();
    let mut latch = peer(&env, Library::Curator, "/latch", "latch", &[]);
    let leading = acquired(&mut latch, WAIT);
    let _follower = peer(&env, Library::Curator, "/latch", "latch", &[]);
    let mut selector = peer(&env, Library::Curator, "/selector", "selector", &[]);
    let selected = acquired(&mut selector, WAIT);
    let _selectable = peer(&env, Library::Curator, "/selector", "selector", &[]);
    let mut elected = peer(&env, Library::Kazoo, "/election", "election", &[]);
    let elected_node = acquired(&mut elected, WAIT);
    let _candidate = peer(&env, Library::Kazoo, "/election", "election", &[]);
    let mut party = peer(&env, Library::Kazoo, "/party", "party", &[]);
    acquired(&mut party, WAIT);
    let mut lease = peer(&env, Library::Kazoo, "/lease", "lease", &[]);
    acquired(&mut lease, WAIT);
    for dir in ["/latch", "/selector", "/election"] {
        wait_until(WAIT, &format!("{dir} has 2 candidates"), || {
            env.zk().children_if_any(dir).len() == 2
        });
    }

    let locks = ls(&env, "/");
    let summary: Vec<(&str, &str, &str, usize, usize)> = locks
        .iter()
        .map(|l| {
            (
                l.path.as_str(),
                l.kind.as_str(),
                l.dialect.as_str(),
                l.holders.len(),
                l.waiters.len(),
            )
        })
        .collect();
    // A party's members and a lease's holder node are no queue: not shown.
    assert_eq!(
        summary,
        [
            ("/election", "mutex", "kazoo", 1, 1),
            ("/latch", "election", "curator", 1, 1),
            ("/selector", "mutex", "curator", 1, 1),
        ]
    );
    assert_eq!(locks[0].holders[0].path, elected_node);
    assert_eq!(locks[1].holders[0].path, leading);
    assert_eq!(locks[2].holders[0].path, selected);
    assert!(locks[1].holders[0].name.contains("-latch-"));

    // Reap spares the latch but would take the selector's and election's
    // lock nodes (they are locks); it never touches the party or the lease.
    let plan: ReapDryRun = env
        .zklock(["reap", "/", "--all", "--dry-run", "-o", "json"])
        .run()
        .assert_success()
        .json();
    let mut dirs: Vec<&str> = plan
        .would_delete
        .iter()
        .map(|node| node.path.rsplit_once('/').unwrap().0)
        .collect();
    dirs.dedup();
    assert_eq!(dirs, ["/election", "/selector"]);
}
