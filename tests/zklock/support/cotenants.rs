//! A shared ensemble's tree, for the tests of every command that deletes or
//! writes: the nodes other software keeps beside our locks, many of them
//! named like lock contenders, and real stale locks of every dialect held by
//! live sessions.
//!
//! - [`CoTenants::create`] lays out what Kafka, HBase, Solr, job queues,
//!   caches and applications leave: ephemeral broker ids, `/controller`,
//!   topics, an emptied admin queue, persistent sequential `write-N` and
//!   `read-N` records, config nodes named `lock-0000000001`, a job queue of
//!   `seq-N`, persistent `x-<digits>-N` ids, a kazoo `Queue` consumed by
//!   kazoo itself, caches with a number for data and hex-named children, an
//!   election, and containers that hold application data.
//!   [`CoTenants::snapshot`] reads every one of those nodes (czxid, mzxid,
//!   data), so a test can prove that not one changed.
//! - [`StaleLocks::create`] takes locks of every dialect (zklock's four, a
//!   TTL lock, Curator's mutex and semaphore, kazoo's mutex, semaphore and
//!   `ephemeral=False` lock, generic names), some of them inside the
//!   co-tenants' directories, and knows every contender node and lock
//!   directory.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use zookeeper_client as zkc;

use super::cmd::{Running, TestEnv};
use super::peers::{Library, acquired, peer};
use super::{Zk, wait_until};

const WAIT: Duration = Duration::from_secs(30);

/// Debian's Python, the one that sees python3-kazoo.
const PYTHON: &str = "/usr/bin/python3";

/// The top directories of the co-tenants' trees.
pub const COTENANT_ROOTS: &[&str] = &[
    "/kafka", "/hbase", "/app", "/jobs", "/tasks", "/cache", "/solr",
];

/// A 32-hex-digit name, as kazoo (and caches keyed by uuid) name nodes.
pub fn hex32(n: u32) -> String {
    format!("{n:08x}0000000000000000{n:08x}")
}

/// What a co-tenant node is: czxid, mzxid, ephemeral owner and data.
pub type NodeState = (i64, i64, i64, Vec<u8>);

/// The co-tenants' nodes, and the session that owns their ephemeral ones
/// (open until dropped, like a running broker).
pub struct CoTenants {
    pub session: Zk,
}

impl CoTenants {
    /// Lays out the co-tenants' trees in `env`'s chroot.
    pub fn create(env: &TestEnv) -> CoTenants {
        let session = env.connect();
        let zk = &session;
        let persistent_sequential =
            zkc::CreateMode::PersistentSequential.with_acls(zkc::Acls::anyone_all());
        // Kafka: ephemeral broker registrations named by number, the
        // controller (ephemeral JSON), topics, an admin queue emptied by the
        // controller.
        zk.mkdir_p("/kafka/brokers/ids");
        for id in 0..3 {
            zk.create_ephemeral(
                &format!("/kafka/brokers/ids/{id}"),
                format!("{{\"host\":\"broker-{id}\",\"port\":9092}}").as_bytes(),
            );
        }
        zk.create_ephemeral(
            "/kafka/controller",
            br#"{"version":1,"brokerid":0,"timestamp":"1700000000000"}"#,
        );
        zk.mkdir_p("/kafka/brokers/topics/orders/partitions/0");
        zk.create(
            "/kafka/brokers/topics/orders/partitions/0/state",
            br#"{"leader":0,"isr":[0,1]}"#,
        );
        zk.mkdir_p("/kafka/admin/delete_topics/old-topic");
        zk.delete("/kafka/admin/delete_topics/old-topic");
        // HBase 1.x-like persistent sequential records (table-lock names).
        zk.mkdir_p("/hbase/table-lock/t1");
        for prefix in ["write-", "read-", "read-", "write-"] {
            zk.create_with(
                &format!("/hbase/table-lock/t1/{prefix}"),
                b"PBUF\x0a\x02t1",
                &persistent_sequential,
            );
        }
        // An HBase WAL directory of persistent write-N / read-N records, with
        // children of their own.
        zk.mkdir_p("/hbase/wal");
        let (_, record) = zk.create_with("/hbase/wal/write-", b"segment", &persistent_sequential);
        zk.create(&format!("{record}/offset"), b"42");
        // Config nodes named like generic contenders, under a plain parent.
        zk.mkdir_p("/app/config");
        zk.create("/app/config/lock-0000000001", b"max=10");
        zk.create("/app/config/app-lock-0000000002", b"owner=ops");
        // Persistent ZooKeeper-recipe-like ids.
        zk.mkdir_p("/app/ids");
        for _ in 0..3 {
            zk.create_with("/app/ids/x-1234567-", b"id", &persistent_sequential);
        }
        // Persistent Curator-named nodes: Curator never makes these.
        zk.create(
            "/app/ids/_c_2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f-lock-0000000007",
            b"copied",
        );
        // A container of application data (Curator makes parents so).
        zk.create_with(
            "/app/cache-parent",
            b"",
            &zkc::CreateMode::Container.with_acls(zkc::Acls::anyone_all()),
        );
        zk.create("/app/cache-parent/entry", b"v");
        // A job queue.
        zk.mkdir_p("/jobs/queue");
        for _ in 0..3 {
            zk.create_with("/jobs/queue/seq-", b"job", &persistent_sequential);
        }
        // Caches whose data is a number and whose children are hex-named:
        // persistent entries, and ephemeral worker registrations.
        zk.mkdir_p("/cache");
        zk.create("/cache/shards", b"3");
        for n in 0..3 {
            zk.create(&format!("/cache/shards/{}", hex32(n)), b"shard");
        }
        zk.create("/cache/workers", b"2");
        for n in 10..12 {
            zk.create_ephemeral(&format!("/cache/workers/{}", hex32(n)), b"worker");
        }
        // A Solr-like election and its leader.
        zk.mkdir_p("/solr/overseer_elect/election");
        zk.create_with(
            &format!("/solr/overseer_elect/election/{}-node1-n_", zk.session_id()),
            b"",
            &zkc::CreateMode::EphemeralSequential.with_acls(zkc::Acls::anyone_all()),
        );
        zk.create_ephemeral("/solr/overseer_elect/leader", br#"{"id":"node1"}"#);
        // A kazoo Queue, filled and consumed by kazoo itself.
        run_kazoo(
            env,
            "q = zk.Queue('/tasks/queue')\n\
             q.put(b'one')\n\
             q.put(b'two')\n\
             assert q.get() == b'one'\n\
             assert q.get() == b'two'\n",
        );
        CoTenants { session }
    }

    /// Every co-tenant node, by path, as it is now.
    pub fn snapshot(env: &TestEnv) -> BTreeMap<String, NodeState> {
        let mut nodes = BTreeMap::new();
        for root in COTENANT_ROOTS {
            read_tree(env.zk(), root, &mut nodes);
        }
        nodes
    }
}

fn read_tree(zk: &Zk, path: &str, nodes: &mut BTreeMap<String, NodeState>) {
    let Ok((data, stat)) = zk.try_get(path) else {
        return;
    };
    nodes.insert(
        path.to_owned(),
        (stat.czxid, stat.mzxid, stat.ephemeral_owner, data),
    );
    for child in zk.children_if_any(path) {
        read_tree(zk, &format!("{path}/{child}"), nodes);
    }
}

/// Runs `script` with `zk`, a started KazooClient on `env`'s chroot.
pub fn run_kazoo(env: &TestEnv, script: &str) {
    let program = format!(
        "import sys\n\
         from kazoo.client import KazooClient\n\
         zk = KazooClient(hosts=sys.argv[1])\n\
         zk.start(timeout=20)\n\
         {script}\n\
         zk.stop()\n"
    );
    let output = Command::new(PYTHON)
        .args(["-c", &program, &env.hosts()])
        .output()
        .expect("run python3 with kazoo (apt-get install python3-kazoo)");
    assert!(
        output.status.success(),
        "kazoo script failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Stale locks of every dialect, held by live sessions and processes.
pub struct StaleLocks {
    /// Every contender node (holders, waiters, leases, acquirers).
    pub contenders: Vec<String>,
    /// The lock directories they are in.
    pub directories: Vec<String>,
    /// The session that made the raw contenders; it also owns co-tenant-like
    /// ephemeral nodes of its own (`/app/members/...`).
    pub session: Zk,
    /// Library peers holding their locks until dropped.
    pub peers: Vec<Running>,
}

impl StaleLocks {
    /// Takes the locks. Contenders live under `/locks` and inside the
    /// co-tenants' trees (`/app/config`, `/hbase/table-lock/t2`).
    pub fn create(env: &TestEnv) -> StaleLocks {
        let session = env.connect();
        let mut contenders = Vec::new();
        // zklock in each of its dialects, and a TTL lock.
        for (lock, extra) in [
            ("/locks/zk-curator", &[][..]),
            ("/locks/zk-kazoo", &["--dialect", "kazoo"][..]),
            ("/locks/zk-recipe", &["--dialect", "zk-recipe"][..]),
            ("/hbase/table-lock/t2", &["--dialect", "hbase"][..]),
            ("/locks/zk-ttl", &["--ttl", "1h"][..]),
        ] {
            let mut args = vec!["lock", lock];
            if !extra.contains(&"--ttl") {
                args.push("--detach");
            }
            args.extend_from_slice(extra);
            let run = env.zklock(args).run();
            run.assert_success();
            contenders.push(run.stdout.trim().to_owned());
        }
        // Generic names, ephemeral: next to the persistent config node of
        // the same name pattern, and in a directory of their own.
        contenders.push(session.create_ephemeral_sequential("/app/config/lock-", b"app"));
        session.mkdir_p("/locks/generic");
        contenders.push(session.create_ephemeral_sequential("/locks/generic/batch-lock-", b""));
        contenders.push(session.create_ephemeral_sequential("/locks/generic/batch-lock-", b""));
        // The raw session's own membership node: not a lock.
        session.mkdir_p("/app/members");
        session.create_ephemeral("/app/members/me", b"");
        // kazoo's persistent contender (ephemeral=False), made by kazoo.
        run_kazoo(
            env,
            "zk.Lock('/locks/kazoo-persistent', 'job-7').acquire(ephemeral=False)\n",
        );
        let persistent = session.children("/locks/kazoo-persistent");
        assert_eq!(persistent.len(), 1, "{persistent:?}");
        contenders.push(format!("/locks/kazoo-persistent/{}", persistent[0]));
        // Library peers: Curator's mutex and semaphore, kazoo's mutex and
        // semaphore.
        let mut peers = Vec::new();
        for (library, lock, mode) in [
            (Library::Curator, "/locks/curator-mutex", "mutex"),
            (Library::Curator, "/locks/curator-sem", "semaphore"),
            (Library::Kazoo, "/locks/kazoo-mutex", "mutex"),
            (Library::Kazoo, "/locks/kazoo-sem", "semaphore"),
        ] {
            let mut running = peer(env, library, lock, mode, &[]);
            contenders.push(acquired(&mut running, WAIT));
            peers.push(running);
        }
        // Curator's semaphore leaves its acquirer mutex node only while it
        // acquires; kazoo's leaves none. What is there now is what counts.
        let directories = contenders
            .iter()
            .map(|node| node[..node.rfind('/').expect("a path")].to_owned())
            .collect();
        wait_until(WAIT, "every contender exists", || {
            contenders
                .iter()
                .all(|node| env.zk().exists(node).is_some())
        });
        StaleLocks {
            contenders,
            directories,
            session,
            peers,
        }
    }

    /// Stops the library peers (their locks may have been reaped already).
    pub fn stop(self) {
        for mut peer in self.peers {
            peer.signal(libc::SIGTERM);
            let _ = peer.wait(WAIT);
        }
    }
}
