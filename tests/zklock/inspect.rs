//! ls, stat and dump against a real ZooKeeper: the locks of every dialect,
//! made by Curator and kazoo themselves or named exactly as their libraries
//! name them, read back with kind, dialect, holders, waiters and owners.

use crate::support;

use std::collections::BTreeSet;
use std::time::Duration;

use support::cotenants::{CoTenants, hex32};
use support::hbase;
use support::json::{Lock, LockDump, NodeReport, SessionDump, SessionEntry};
use support::peers::{self, Library, acquired, peer};
use support::{TestEnv, Zk, digest_acl, wait_until};
use zookeeper_client as zkc;

const WAIT: Duration = Duration::from_secs(30);
const UUID: &str = "2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f";
const HEX: &str = "0123456789abcdef0123456789abcdef";

fn ls(env: &TestEnv, path: &str) -> Vec<Lock> {
    env.zklock(["ls", path, "-o", "json"])
        .run()
        .assert_success()
        .json()
}

fn stat(env: &TestEnv, path: &str) -> Lock {
    env.zklock(["stat", path, "-o", "json"])
        .run()
        .assert_success()
        .json()
}

fn find<'a>(locks: &'a [Lock], path: &str) -> &'a Lock {
    locks
        .iter()
        .find(|lock| lock.path == path)
        .unwrap_or_else(|| panic!("no lock {path} in {locks:#?}"))
}

fn paths(contenders: &[support::Contender]) -> Vec<&str> {
    contenders.iter().map(|c| c.path.as_str()).collect()
}

/// Waits until `dir` has `n` children.
fn wait_for_children(zk: &Zk, dir: &str, n: usize) {
    wait_until(WAIT, &format!("{dir} has {n} children"), || {
        zk.try_get(dir).is_ok() && zk.children(dir).len() == n
    });
}

/// Creates an ephemeral-sequential `PREFIX<seq>` in `dir`, making `dir`
/// first; returns the full path.
fn contender(zk: &Zk, dir: &str, prefix: &str, data: &[u8]) -> String {
    zk.mkdir_p(dir);
    zk.create_ephemeral_sequential(&format!("{dir}/{prefix}"), data)
}

fn assert_kind(lock: &Lock, kind: &str, dialect: &str) {
    assert_eq!(
        (lock.kind.as_str(), lock.dialect.as_str()),
        (kind, dialect),
        "{lock:#?}"
    );
}

#[test]
fn curator_mutex_and_read_write_locks_made_by_curator() {
    let env = TestEnv::new();
    let mut holder = peer(&env, Library::Curator, "/locks/m", "mutex", &[]);
    let held = acquired(&mut holder, WAIT);
    let _waiter = peer(&env, Library::Curator, "/locks/m", "mutex", &[]);
    let mut reader = peer(&env, Library::Curator, "/locks/rw", "read", &[]);
    let read = acquired(&mut reader, WAIT);
    let _writer = peer(&env, Library::Curator, "/locks/rw", "write", &[]);
    wait_for_children(env.zk(), "/locks/m", 2);
    wait_for_children(env.zk(), "/locks/rw", 2);

    let locks = ls(&env, "/locks");
    assert_eq!(locks.len(), 2, "{locks:#?}");
    let mutex = find(&locks, "/locks/m");
    assert_kind(mutex, "mutex", "curator");
    assert_eq!(paths(&mutex.holders), [held.as_str()]);
    assert_eq!(mutex.waiters.len(), 1);
    assert_eq!(mutex.waiters[0].waiting_on.as_deref(), Some(held.as_str()));
    assert_eq!(mutex.holders[0].mode, "exclusive");
    assert!(mutex.holders[0].name.contains("-lock-"));
    // Curator stores the client's IP address; it is shown, not parsed.
    let data = mutex.holders[0].data.as_deref().expect("Curator's data");
    assert!(data.parse::<std::net::IpAddr>().is_ok(), "{data}");
    assert_eq!(mutex.holders[0].owner, None);

    let rw = find(&locks, "/locks/rw");
    assert_kind(rw, "read-write", "curator");
    assert_eq!(paths(&rw.holders), [read.as_str()]);
    assert_eq!(rw.holders[0].mode, "shared");
    assert_eq!(rw.waiters[0].mode, "exclusive");
    assert_eq!(rw.waiters[0].waiting_on.as_deref(), Some(read.as_str()));
    peers::release(holder);
    peers::release(reader);
}

#[test]
fn kazoo_locks_made_by_kazoo_show_their_identifiers() {
    let env = TestEnv::new();
    let mut holder = peer(
        &env,
        Library::Kazoo,
        "/locks/k",
        "mutex",
        &["--identifier", "worker-1"],
    );
    let held = acquired(&mut holder, WAIT);
    let _waiter = peer(
        &env,
        Library::Kazoo,
        "/locks/k",
        "mutex",
        &["--identifier", "worker-2"],
    );
    let mut reader = peer(
        &env,
        Library::Kazoo,
        "/locks/r",
        "read",
        &["--identifier", "r1"],
    );
    let read = acquired(&mut reader, WAIT);
    let _writer = peer(
        &env,
        Library::Kazoo,
        "/locks/r",
        "write",
        &["--identifier", "w1"],
    );
    wait_for_children(env.zk(), "/locks/r", 2);
    let _late_reader = peer(
        &env,
        Library::Kazoo,
        "/locks/r",
        "read",
        &["--identifier", "r2"],
    );
    wait_for_children(env.zk(), "/locks/k", 2);
    wait_for_children(env.zk(), "/locks/r", 3);

    let locks = ls(&env, "/locks");
    let mutex = find(&locks, "/locks/k");
    assert_kind(mutex, "mutex", "kazoo");
    assert_eq!(paths(&mutex.holders), [held.as_str()]);
    assert_eq!(mutex.holders[0].data.as_deref(), Some("worker-1"));
    assert_eq!(mutex.waiters[0].data.as_deref(), Some("worker-2"));
    assert!(mutex.holders[0].name.contains("__lock__"));

    let rw = find(&locks, "/locks/r");
    assert_kind(rw, "read-write", "kazoo");
    assert_eq!(paths(&rw.holders), [read.as_str()]);
    let waiters: Vec<(&str, Option<&str>)> = rw
        .waiters
        .iter()
        .map(|c| (c.data.as_deref().unwrap_or(""), c.waiting_on.as_deref()))
        .collect();
    // The late reader waits on the writer ahead of it, not on the reader.
    assert_eq!(
        waiters,
        [
            ("w1", Some(read.as_str())),
            ("r2", Some(rw.waiters[0].path.as_str()))
        ]
    );
    peers::release(holder);
    peers::release(reader);
}

#[test]
fn curator_semaphore_made_by_curator() {
    let env = TestEnv::new();
    let one = ["--max-leases", "1"];
    let mut holder = peer(&env, Library::Curator, "/locks/sem", "semaphore", &one);
    let lease = acquired(&mut holder, WAIT);
    let _pending = peer(&env, Library::Curator, "/locks/sem", "semaphore", &one);
    wait_for_children(env.zk(), "/locks/sem/leases", 2);
    let _queued = peer(&env, Library::Curator, "/locks/sem", "semaphore", &one);
    wait_for_children(env.zk(), "/locks/sem/locks", 2);

    let locks = ls(&env, "/locks");
    assert_eq!(
        locks.len(),
        1,
        "the internal mutex is no lock of its own: {locks:#?}"
    );
    let sem = stat(&env, "sem");
    assert_eq!(paths(&sem.holders), paths(&locks[0].holders));
    assert_eq!(paths(&sem.waiters), paths(&locks[0].waiters));
    assert_kind(&sem, "semaphore", "curator");
    assert_eq!(paths(&sem.holders), [lease.as_str()]);
    assert!(sem.holders[0].name.contains("-lease-"));
    assert!(
        sem.holders
            .iter()
            .chain(&sem.waiters)
            .all(|c| c.mode == "lease")
    );
    // The second client has its lease node but waits for room, holding the
    // internal mutex; the third queues on that mutex behind it.
    let pending = &sem.waiters[0];
    assert!(
        pending.path.starts_with("/locks/sem/leases/"),
        "{pending:?}"
    );
    assert_eq!(pending.waiting_on, None);
    let queued = &sem.waiters[1];
    assert!(queued.path.starts_with("/locks/sem/locks/"), "{queued:?}");
    assert_eq!(queued.waiting_on.as_deref(), Some(pending.path.as_str()));
    assert_eq!(sem.waiters.len(), 2);
    peers::release(holder);
}

#[test]
fn kazoo_semaphore_made_by_kazoo() {
    let env = TestEnv::new();
    let two = |id: &'static str| ["--max-leases", "2", "--identifier", id];
    let mut a = peer(&env, Library::Kazoo, "/locks/ks", "semaphore", &two("a"));
    let lease_a = acquired(&mut a, WAIT);
    let mut b = peer(&env, Library::Kazoo, "/locks/ks", "semaphore", &two("b"));
    let lease_b = acquired(&mut b, WAIT);
    let _c = peer(&env, Library::Kazoo, "/locks/ks", "semaphore", &two("c"));
    wait_for_children(env.zk(), "/locks/ks-__lock__", 1);
    let _d = peer(&env, Library::Kazoo, "/locks/ks", "semaphore", &two("d"));
    wait_for_children(env.zk(), "/locks/ks-__lock__", 2);

    let locks = ls(&env, "/locks");
    assert_eq!(locks.len(), 1, "{locks:#?}");
    let sem = &locks[0];
    assert_eq!(sem.path, "/locks/ks");
    assert_kind(sem, "semaphore", "kazoo");
    assert_eq!(
        paths(&sem.holders).into_iter().collect::<BTreeSet<_>>(),
        BTreeSet::from([lease_a.as_str(), lease_b.as_str()])
    );
    for holder in &sem.holders {
        assert_eq!(holder.sequence, None, "kazoo's leases have no sequence");
        assert_eq!(holder.mode, "lease");
        assert!(["a", "b"].contains(&holder.data.as_deref().unwrap_or("")));
    }
    // c holds the internal lock and waits for a lease; d queues behind it.
    assert_eq!(sem.waiters.len(), 2);
    assert!(sem.waiters[0].path.starts_with("/locks/ks-__lock__/"));
    assert_eq!(sem.waiters[0].waiting_on, None);
    assert_eq!(
        sem.waiters[1].waiting_on.as_deref(),
        Some(sem.waiters[0].path.as_str())
    );
    let by_stat = stat(&env, "ks");
    assert_eq!(paths(&by_stat.holders), paths(&sem.holders));
    assert_eq!(paths(&by_stat.waiters), paths(&sem.waiters));
    env.zklock(["ls"])
        .run()
        .assert_success()
        .assert_stdout_contains("2/2");
    env.zklock(["stat", "ks"])
        .run()
        .assert_success()
        .assert_stdout_contains("2 of 2 leases held, 2 waiters")
        .assert_stdout_contains("waiting for a lease");
    peers::release(a);
    peers::release(b);
}

#[test]
fn hbase_table_locks_decode_owner_table_and_purpose() {
    let env = TestEnv::new();
    let zk = env.zk();
    let dir = "/hbase/table-lock/ns:orders";
    let writer = contender(
        zk,
        dir,
        "write-",
        &hbase::table_lock("ns", "orders", false, "alter"),
    );
    let reader = contender(
        zk,
        dir,
        "read-",
        &hbase::table_lock("ns", "orders", true, "scan"),
    );
    let broken = contender(
        zk,
        "/hbase/table-lock/t2",
        "write-",
        b"PBUF\x2a\x03ok!\x12\x09\xff\x1b[2J",
    );

    let locks = ls(&env, "/hbase");
    let lock = find(&locks, dir);
    assert_kind(lock, "read-write", "hbase");
    assert_eq!(paths(&lock.holders), [writer.as_str()]);
    assert_eq!(paths(&lock.waiters), [reader.as_str()]);
    let table_lock = lock.holders[0].table_lock.clone().expect("decoded");
    assert_eq!(table_lock.table.as_deref(), Some("ns:orders"));
    assert_eq!(
        table_lock.owner.as_deref(),
        Some("rs1.example.com,16020,1700000000123")
    );
    assert_eq!(table_lock.thread_id, Some(77));
    assert_eq!(table_lock.shared, Some(false));
    assert_eq!(table_lock.purpose.as_deref(), Some("alter"));
    assert_eq!(table_lock.create_time_ms, Some(1_700_000_001_000));
    assert_eq!(table_lock.undecoded, None);
    let read_lock = lock.waiters[0].table_lock.clone().expect("decoded");
    assert_eq!(
        (read_lock.shared, read_lock.purpose.as_deref()),
        (Some(true), Some("scan"))
    );

    // Bytes that are not a TableLock are kept, escaped, and never break the listing.
    let broken_lock = find(&locks, "/hbase/table-lock/t2");
    assert_eq!(paths(&broken_lock.holders), [broken.as_str()]);
    let undecodable = broken_lock.holders[0]
        .table_lock
        .clone()
        .expect("PBUF data");
    assert_eq!(undecodable.purpose.as_deref(), Some("ok!"));
    let undecoded = undecodable.undecoded.expect("bad bytes reported");
    assert!(undecoded.contains("\\xff"), "{undecoded}");

    let table = env.zklock(["stat", dir, "-o", "wide"]).run();
    table
        .assert_success()
        .assert_stdout_contains("rs1.example.com,16020,1700000000123 table ns:orders (alter)");
    let raw = env.zklock(["stat", "/hbase/table-lock/t2"]).run();
    assert!(
        !raw.stdout.contains('\x1b'),
        "raw escape bytes reached the terminal"
    );
}

#[test]
fn zookeeper_recipe_and_generic_locks() {
    let env = TestEnv::new();
    let zk = env.zk();
    let other = env.connect();
    let recipe = contender(zk, "/locks/zr", &format!("x-{}-", zk.session_id()), b"");
    let recipe_waiter = contender(
        &other,
        "/locks/zr",
        &format!("x-{}-", other.session_id()),
        b"",
    );
    let generic = contender(zk, "/locks/g", "lock-", b"job 1");
    let named = contender(zk, "/locks/g", "myapp-lock-", b"job 2");

    let locks = ls(&env, "/locks");
    let zr = find(&locks, "/locks/zr");
    assert_kind(zr, "mutex", "zk-recipe");
    assert_eq!(paths(&zr.holders), [recipe.as_str()]);
    assert_eq!(paths(&zr.waiters), [recipe_waiter.as_str()]);
    assert_eq!(zr.holders[0].session, zk.session_hex());
    assert_eq!(zr.waiters[0].session, other.session_hex());
    let g = find(&locks, "/locks/g");
    assert_kind(g, "mutex", "generic");
    assert_eq!(paths(&g.holders), [generic.as_str()]);
    assert_eq!(paths(&g.waiters), [named.as_str()]);
    assert_eq!(g.holders[0].data.as_deref(), Some("job 1"));
}

#[test]
fn zklock_holders_show_their_owner_record() {
    let env = TestEnv::new();
    let mut holder = env.zklock(["lock", "own", "--data", "release 42"]).spawn();
    let token = holder.next_line(WAIT);
    let waiter = env.zklock(["lock", "own", "--", "sleep", "0.1"]).spawn();
    wait_for_children(env.zk(), "/locks/own", 2);

    let lock = stat(&env, "own");
    assert_kind(&lock, "mutex", "curator");
    let held = &lock.holders[0];
    assert_eq!(held.path, token);
    let owner = held.owner.as_ref().expect("zklock's owner record");
    assert_eq!(owner["tool"], "zklock");
    assert_eq!(owner["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(owner["host"], support::output_of("hostname", &[]));
    assert_eq!(owner["user"], support::output_of("id", &["-un"]));
    assert_eq!(owner["command"], serde_json::Value::Null);
    assert_eq!(owner["data"], "release 42");
    assert_eq!(owner["pid"], holder.pid());
    let (_, node) = env.zk().get(&token);
    // The time the contender was made, as RFC 3339 UTC.
    let time = owner["time"].as_str().expect("a time");
    let made_ms = support::rfc3339_ms(time);
    assert!(
        (made_ms - node.ctime).abs() < 2_000,
        "{time} {}",
        node.ctime
    );
    // A command is recorded by its program name.
    assert_eq!(
        lock.waiters[0].owner.as_ref().unwrap()["command"],
        serde_json::json!(["sleep"])
    );
    assert_eq!(held.fence, node.czxid);
    assert_eq!(held.ctime_ms, node.ctime);
    assert!(held.age_ms >= 0);
    assert_eq!(lock.waiters[0].owner.as_ref().unwrap()["pid"], waiter.pid());
    assert_eq!(lock.waiters[0].waiting_on.as_deref(), Some(token.as_str()));
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
}

#[test]
fn a_mixed_directory_is_ordered_by_sequence_across_dialects() {
    let env = TestEnv::new();
    let zk = env.zk();
    let dir = "/locks/mixed";
    let recipe = contender(zk, dir, &format!("x-{}-", zk.session_id()), b"");
    let kazoo = contender(zk, dir, &format!("{HEX}__lock__"), b"");
    let hbase_read = contender(zk, dir, "read-", b"");
    let curator_read = contender(zk, dir, &format!("_c_{UUID}-__READ__"), b"");
    let generic = contender(zk, dir, "lock-", b"");

    let lock = stat(&env, dir);
    assert_kind(&lock, "read-write", "mixed");
    assert_eq!(paths(&lock.holders), [recipe.as_str()]);
    let waits: Vec<(&str, Option<&str>)> = lock
        .waiters
        .iter()
        .map(|c| (c.path.as_str(), c.waiting_on.as_deref()))
        .collect();
    assert_eq!(
        waits,
        [
            (kazoo.as_str(), Some(recipe.as_str())),
            // Readers wait on the nearest writer ahead, whoever made it.
            (hbase_read.as_str(), Some(kazoo.as_str())),
            (curator_read.as_str(), Some(kazoo.as_str())),
            (generic.as_str(), Some(curator_read.as_str())),
        ]
    );
    let sequences: Vec<i64> = lock
        .holders
        .iter()
        .chain(&lock.waiters)
        .map(|c| c.sequence.expect("sequential"))
        .collect();
    assert_eq!(sequences, [0, 1, 2, 3, 4]);

    // Readers of several libraries at the front all hold.
    let front = "/locks/readers";
    let r1 = contender(zk, front, "read-", b"");
    let r2 = contender(zk, front, &format!("_c_{UUID}-__READ__"), b"");
    let r3 = contender(zk, front, &format!("{HEX}__rlock__"), b"");
    let w = contender(zk, front, &format!("_c_{UUID}-__WRIT__"), b"");
    let lock = stat(&env, front);
    assert_eq!(
        paths(&lock.holders),
        [r1.as_str(), r2.as_str(), r3.as_str()]
    );
    assert_eq!(paths(&lock.waiters), [w.as_str()]);
    assert_eq!(lock.waiters[0].waiting_on.as_deref(), Some(r3.as_str()));
}

#[test]
fn wrapped_negative_sequences_come_first() {
    let env = TestEnv::new();
    let zk = env.zk();
    zk.mkdir_p("/locks/wrap");
    let names = [
        "lock-2147483647",
        "lock-0000000003",
        "lock--000000005",
        &format!("_c_{UUID}-lock--2147483648"),
    ];
    for name in names {
        zk.create_ephemeral(&format!("/locks/wrap/{name}"), b"");
    }
    let lock = stat(&env, "wrap");
    let order: Vec<(&str, Option<i64>)> = lock
        .holders
        .iter()
        .chain(&lock.waiters)
        .map(|c| (c.name.as_str(), c.sequence))
        .collect();
    assert_eq!(
        order,
        [
            (names[3], Some(-2147483648)),
            ("lock--000000005", Some(-5)),
            ("lock-0000000003", Some(3)),
            ("lock-2147483647", Some(2147483647)),
        ]
    );
    assert_kind(&lock, "mutex", "mixed");
    assert_eq!(lock.holders[0].session, zk.session_hex());
}

#[test]
fn non_lock_siblings_are_neither_listed_nor_counted() {
    let env = TestEnv::new();
    let zk = env.zk();
    let holder = contender(zk, "/locks/app", "lock-", b"");
    let waiter = contender(zk, "/locks/app", "lock-", b"");
    zk.create("/locks/app/config", b"{\"retries\": 3}");
    zk.mkdir_p("/locks/app/notes/readme");
    zk.mkdir_p("/locks/plain/deeper");
    zk.create("/locks/plain/deeper/cfg", b"x");
    let nested = contender(zk, "/locks/plain/deeper/nested", "lock-", b"");
    let below_app = contender(zk, "/locks/app/notes/sub", "write-", b"");

    let locks = ls(&env, "/locks");
    let found: Vec<&str> = locks.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(
        found,
        [
            "/locks/app",
            "/locks/app/notes/sub",
            "/locks/plain/deeper/nested"
        ]
    );
    let app = &locks[0];
    assert_eq!(paths(&app.holders), [holder.as_str()]);
    assert_eq!(paths(&app.waiters), [waiter.as_str()]);
    assert_eq!(paths(&locks[1].holders), [below_app.as_str()]);
    assert_eq!(paths(&locks[2].holders), [nested.as_str()]);

    let under_plain = ls(&env, "plain");
    assert_eq!(under_plain.len(), 1);
    assert_eq!(under_plain[0].path, "/locks/plain/deeper/nested");
}

#[test]
fn stat_of_a_plain_node_keeps_the_zkcli_view() {
    let env = TestEnv::new();
    let zk = env.zk();
    zk.create("/locks", b"");
    zk.create("/locks/cfg", b"v=1");
    zk.create("/locks/cfg/child", b"");
    let report: NodeReport = env
        .zklock(["stat", "cfg", "-o", "json"])
        .run()
        .assert_success()
        .json();
    assert_eq!(report.path, "/locks/cfg");
    assert_eq!(report.data.as_deref(), Some("v=1"));
    assert_eq!(report.stat.num_children, 1);
    env.zklock(["stat", "cfg"])
        .run()
        .assert_success()
        .assert_stdout_contains("numChildren")
        .assert_stdout_contains("v=1");

    // A lock whose contenders have all gone is a plain node again.
    let node = contender(zk, "/locks/gone", "lock-", b"");
    assert_eq!(stat(&env, "gone").holders.len(), 1);
    zk.delete(&node);
    let report: NodeReport = env
        .zklock(["stat", "gone", "-o", "json"])
        .run()
        .assert_success()
        .json();
    assert_eq!(report.stat.num_children, 0);
}

#[test]
fn dump_carries_full_stats_and_groups_by_session() {
    let env = TestEnv::new();
    let s1 = env.connect();
    let s2 = env.connect();
    let a_held = contender(&s1, "/locks/a", "lock-", b"s1 holds a");
    let b_held = contender(&s2, "/locks/b", "lock-", b"s2 holds b");
    let b_waits = contender(&s1, "/locks/b", "lock-", b"s1 waits for b");
    let a_waits = contender(&s2, "/locks/a", "lock-", b"s2 waits for a");
    // A TTL lock: no session owns it.
    let ttl = env.zklock(["lock", "ttl", "--ttl", "1h"]).run();
    ttl.assert_success();
    let ttl = ttl.stdout.trim().to_owned();

    let dump: LockDump = env.zklock(["dump"]).run().assert_success().json();
    assert_eq!(dump.path, "/locks");
    assert!(dump.time_ms > 0);
    let found: Vec<&str> = dump.locks.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(found, ["/locks/a", "/locks/b", "/locks/ttl"]);
    for contender in dump
        .locks
        .iter()
        .flat_map(|l| l.holders.iter().chain(&l.waiters))
    {
        let stat = contender
            .stat
            .as_ref()
            .expect("dump carries every stat field");
        let (data, node) = env.zk().get(&contender.path);
        assert_eq!(stat.czxid, contender.fence);
        assert_eq!(stat.czxid, node.czxid);
        assert_eq!(stat.mtime_ms, node.mtime);
        assert_eq!(stat.ephemeral_owner, contender.session);
        assert_eq!(stat.data_length as usize, data.len());
    }
    assert!(
        ls(&env, "/locks")
            .iter()
            .all(|l| l.holders[0].stat.is_none())
    );

    let by_session: SessionDump = env
        .zklock(["dump", "--sessions"])
        .run()
        .assert_success()
        .json();
    let groups: Vec<(&str, Vec<&str>, Vec<&str>)> = by_session
        .sessions
        .iter()
        .map(|g| {
            (
                g.session.as_str(),
                entry_paths(&g.holding),
                entry_paths(&g.waiting),
            )
        })
        .collect();
    let s1_hex = s1.session_hex();
    let s2_hex = s2.session_hex();
    assert_eq!(
        groups,
        [
            ("0x0", vec![ttl.as_str()], vec![]),
            (
                s1_hex.as_str(),
                vec![a_held.as_str()],
                vec![b_waits.as_str()]
            ),
            (
                s2_hex.as_str(),
                vec![b_held.as_str()],
                vec![a_waits.as_str()]
            ),
        ]
    );
    let entry = &by_session.sessions[1].waiting[0];
    assert_eq!(
        (entry.lock.as_str(), entry.kind.as_str()),
        ("/locks/b", "mutex")
    );
    assert_eq!(entry.dialect, "generic");
    assert!(entry.contender.stat.is_some());

    let table = env.zklock(["dump", "--sessions", "-o", "table"]).run();
    table.assert_success();
    let rows: Vec<&str> = table.stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), 5, "{}", table.stdout);
    assert!(
        rows[1].contains(&s1_hex) && rows[2].contains(&s1_hex),
        "{}",
        table.stdout
    );
}

fn entry_paths(entries: &[SessionEntry]) -> Vec<&str> {
    entries.iter().map(|e| e.contender.path.as_str()).collect()
}

#[test]
fn a_missing_path_exits_6_naming_it() {
    let env = TestEnv::new();
    for args in [
        vec!["ls", "/nope"],
        vec!["dump", "nope"],
        vec!["dump", "--sessions", "/nope"],
        vec!["stat", "nope"],
    ] {
        let run = env.zklock(&args).run();
        run.assert_code(6);
        let named = args.last().unwrap().trim_start_matches('/');
        run.assert_stderr_contains(named);
    }
}

#[test]
fn tables_summarise_locks_for_people() {
    let env = TestEnv::new();
    let zk = env.zk();
    contender(zk, "/locks/app", "lock-", b"batch-7");
    contender(zk, "/locks/app", "lock-", b"");
    zk.mkdir_p("/locks/none");

    let run = env.zklock(["ls"]).run();
    run.assert_success();
    let lines = run.stdout_lines();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        header,
        ["LOCK", "KIND", "HOLDERS", "WAITERS", "HELD", "FOR", "OWNER"]
    );
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    let row: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(&row[..4], ["/locks/app", "mutex", "1", "1"]);
    assert_eq!(row.last(), Some(&"batch-7"));
    assert!(
        run.stderr.is_empty(),
        "no progress off a terminal: {}",
        run.stderr
    );

    let run = env.zklock(["stat", "app"]).run();
    run.assert_success()
        .assert_stdout_contains("/locks/app: mutex lock (generic), 1 holder, 1 waiter")
        .assert_stdout_contains("holding")
        .assert_stdout_contains("waiting on 0");

    env.zklock(["ls", "none"])
        .run()
        .assert_success()
        .assert_stderr_contains("no locks under /locks/none");
}

#[test]
fn ls_sorted_by_path_lists_a_lock_before_what_is_under_it() {
    let env = TestEnv::new();
    let zk = env.zk();
    // Made out of order, so that neither creation order nor byte order
    // ('-' sorts before '/') gives the order by path components.
    for dir in ["/locks/a-b", "/locks/a/b", "/locks/a"] {
        contender(zk, dir, "lock-", b"");
    }
    for sort in [&["--sort", "path"][..], &[]] {
        let locks: Vec<Lock> = env
            .zklock(["ls", "-o", "json"])
            .args(sort)
            .run()
            .assert_success()
            .json();
        let paths: Vec<&str> = locks.iter().map(|lock| lock.path.as_str()).collect();
        assert_eq!(paths, ["/locks/a", "/locks/a/b", "/locks/a-b"], "{sort:?}");
    }
}

#[test]
fn ls_skips_a_directory_its_acl_hides() {
    let env = TestEnv::new();
    let zk = env.zk();
    contender(zk, "/locks/open", "lock-", b"");
    let acl = [digest_acl("alice", "secret", zkc::Permission::ALL)];
    zk.create_with(
        "/locks/secret",
        b"",
        &zkc::CreateMode::Persistent.with_acls(zkc::Acls::new(&acl)),
    );
    // A contender whose data its ACL hides is still shown, without data.
    zk.mkdir_p("/locks/veiled");
    let (veiled, _) = zk.create_with(
        "/locks/veiled/lock-",
        b"secret owner",
        &zkc::CreateMode::EphemeralSequential.with_acls(zkc::Acls::new(&acl)),
    );
    let run = env.zklock(["ls", "-o", "json"]).run();
    run.assert_success()
        .assert_stderr_contains("skipped /locks/secret: permission denied");
    let locks: Vec<Lock> = run.json();
    let paths: Vec<&str> = locks.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(paths, ["/locks/open", "/locks/veiled"]);
    let holder = &locks[1].holders[0];
    assert_eq!(holder.data, None);
    assert_eq!(holder.fence, veiled.czxid);
}

#[test]
fn a_tree_larger_than_the_request_window_is_read_whole_and_in_order() {
    let env = TestEnv::new();
    let client = env.zk().client();
    env.zk().mkdir_p("/locks/big");
    let dirs: Vec<String> = (0..300).map(|i| format!("/locks/big/l{i:03}")).collect();
    let persistent = zkc::CreateMode::Persistent.with_acls(zkc::Acls::anyone_all());
    let sequential = zkc::CreateMode::EphemeralSequential.with_acls(zkc::Acls::anyone_all());
    let prefixes: Vec<String> = dirs.iter().map(|d| format!("{d}/lock-")).collect();
    env.zk().block_on(async {
        let made =
            futures::future::join_all(dirs.iter().map(|d| client.create(d, b"", &persistent)));
        assert!(made.await.iter().all(Result::is_ok));
        for _ in 0..3 {
            let made = futures::future::join_all(
                prefixes.iter().map(|p| client.create(p, b"", &sequential)),
            );
            assert!(made.await.iter().all(Result::is_ok));
        }
    });

    let run = env.zklock(["ls", "big", "-o", "json"]).run();
    let locks: Vec<Lock> = run.assert_success().json();
    let found: Vec<&str> = locks.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(found, dirs.iter().map(String::as_str).collect::<Vec<_>>());
    for lock in &locks {
        assert_eq!(
            (lock.holders.len(), lock.waiters.len()),
            (1, 2),
            "{lock:#?}"
        );
        assert!(lock.holders[0].path.ends_with("lock-0000000000"));
    }
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

#[test]
fn a_shared_tree_of_other_softwares_nodes_holds_no_lock() {
    let env = TestEnv::new();
    let _cotenants = CoTenants::create(&env);
    // Only the services' leader nodes and elections, which are what they
    // look like: no lock.
    let services = [
        ("/kafka/controller", "leader"),
        ("/solr/overseer_elect/election", "election"),
        ("/solr/overseer_elect/leader", "leader"),
    ];
    let kinds = |locks: &[Lock]| -> Vec<(String, String)> {
        locks
            .iter()
            .map(|l| (l.path.clone(), l.kind.clone()))
            .collect()
    };
    let expected: Vec<(String, String)> = services
        .iter()
        .map(|(path, kind)| (path.to_string(), kind.to_string()))
        .collect();
    assert_eq!(kinds(&ls(&env, "/")), expected);
    let dump: LockDump = env.zklock(["dump", "/"]).run().assert_success().json();
    let dumped: Vec<(String, String)> = dump
        .locks
        .iter()
        .map(|l| (l.path.clone(), l.kind.clone()))
        .collect();
    assert_eq!(dumped, expected);
    // stat shows the look-alikes as the plain nodes they are.
    for path in [
        "/app/config",
        "/hbase/table-lock/t1",
        "/hbase/wal",
        "/app/ids",
        "/cache/shards",
        "/cache/workers",
        "/kafka/brokers/ids",
    ] {
        let node: NodeReport = env
            .zklock(["stat", path, "-o", "json"])
            .run()
            .assert_success()
            .json();
        assert_eq!(node.path, path);
    }
    // Beside the services' leaders (always held), nothing is held, so watch
    // sees every lock free at once.
    for dir in ["/hbase", "/app", "/jobs", "/tasks", "/cache"] {
        env.zklock(["watch", dir, "--until", "free", "--timeout", "10s"])
            .run()
            .assert_success();
    }
}

#[test]
fn a_kazoo_semaphore_needs_ephemeral_leases_and_its_lock_beside_it() {
    let env = TestEnv::new();
    let zk = env.zk();
    let worker = env.connect();
    // A number for data and ephemeral hex-named children, but no lock
    // beside it: a registry, not a semaphore.
    zk.create("/registry", b"2");
    worker.create_ephemeral(&format!("/registry/{}", hex32(1)), b"w");
    // The lock beside it, but persistent hex-named children: a cache.
    zk.create("/cache", b"2");
    zk.create(&format!("/cache/{}", hex32(2)), b"c");
    zk.mkdir_p("/cache-__lock__");
    assert!(ls(&env, "/").is_empty(), "{:#?}", ls(&env, "/"));
    // Made so by kazoo: a semaphore.
    worker.create_ephemeral(&format!("/cache/{}", hex32(3)), b"lease");
    let locks = ls(&env, "/");
    assert_eq!(locks.len(), 1, "{locks:#?}");
    assert_kind(&locks[0], "semaphore", "kazoo");
    assert_eq!(paths(&locks[0].holders), [format!("/cache/{}", hex32(3))]);
}

/// Creates `count` ephemeral-sequential `PREFIX<seq>` nodes in `dir` at once,
/// in that order; returns their full paths.
fn contenders(zk: &Zk, dir: &str, prefix: &str, count: usize) -> Vec<String> {
    let sequential = zkc::CreateMode::EphemeralSequential.with_acls(zkc::Acls::anyone_all());
    let prefix = format!("{dir}/{prefix}");
    let made = zk.block_on(futures::future::join_all(
        (0..count).map(|_| zk.client().create(&prefix, b"", &sequential)),
    ));
    made.into_iter()
        .map(|made| format!("{prefix}{}", made.expect("create a contender").1))
        .collect()
}

/// `stat` reads a large lock a few thousand contenders at a time. A node
/// whose name looks like a contender's but that is persistent is some
/// application's, not a contender; one in front of the queue and one at the
/// front of the second window must not make the readers behind them wait,
/// and the heading counts only the real contenders, all read before it is
/// printed.
#[test]
fn stat_of_a_lock_wider_than_a_read_window_passes_over_look_alikes_at_its_edges() {
    let env = TestEnv::new();
    let zk = env.zk();
    let dir = "/locks/wide";
    zk.mkdir_p(dir);
    let writer = format!("_c_{UUID}-__WRIT__");
    let reader = format!("_c_{UUID}-__READ__");
    let look_alike = || {
        let persistent = zkc::CreateMode::PersistentSequential.with_acls(zkc::Acls::anyone_all());
        zk.create_with(&format!("{dir}/{writer}"), b"", &persistent)
            .1
    };
    // One window is 4,096 contenders by name: the look-alike and 4,095
    // readers; the second begins with the other look-alike.
    let front = look_alike();
    let mut holding = contenders(zk, dir, &reader, 4095);
    let edge = look_alike();
    holding.extend(contenders(zk, dir, &reader, 100));
    let real_writer = contenders(zk, dir, &writer, 1).remove(0);
    let behind = contenders(zk, dir, &reader, 10);

    let lock = stat(&env, "wide");
    assert_kind(&lock, "read-write", "curator");
    assert_eq!(
        paths(&lock.holders),
        holding,
        "every reader ahead of the writer holds"
    );
    assert!(lock.holders.iter().all(|c| c.waiting_on.is_none()));
    let mut waiting = vec![real_writer.clone()];
    waiting.extend(behind.iter().cloned());
    assert_eq!(paths(&lock.waiters), waiting);
    assert_eq!(lock.waiters[0].waiting_on.as_ref(), holding.last());
    for waiter in &lock.waiters[1..] {
        assert_eq!(waiter.waiting_on.as_ref(), Some(&real_writer), "{waiter:?}");
    }
    let shown: Vec<&str> = paths(&lock.holders);
    assert!(!shown.contains(&front.as_str()) && !shown.contains(&edge.as_str()));

    env.zklock(["stat", "wide"])
        .run()
        .assert_success()
        .assert_stdout_contains(&format!(
            "{dir}: read-write lock (curator), 4195 holders, 11 waiters"
        ));
}

#[test]
fn nothing_below_a_contender_is_read() {
    let env = TestEnv::new();
    let zk = env.zk();
    // kazoo's contenders may be persistent, so one can have children; what
    // lies below it is no lock of anyone's.
    zk.mkdir_p("/locks/k");
    let persistent = zkc::CreateMode::Persistent.with_acls(zkc::Acls::anyone_all());
    let kazoo = format!("{}__lock__0000000000", hex32(7));
    let below = format!("/locks/k/{kazoo}/inner");
    zk.create_with(&format!("/locks/k/{kazoo}"), b"", &persistent);
    contender(zk, &below, "lock-", b"");
    let proxy = support::proxy::FaultProxy::start(env.servers());
    let run = env
        .zklock(["ls", "-o", "json"])
        .hosts(proxy.hosts(&env))
        .run();
    let locks: Vec<Lock> = run.assert_success().json();
    let paths: Vec<&str> = locks.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(paths, ["/locks/k"]);
    let below_it: Vec<_> = proxy
        .client_messages()
        .into_iter()
        .filter(|m| match m {
            support::proxy::ClientMessage::Request {
                path, multi_paths, ..
            } => path
                .iter()
                .chain(multi_paths)
                .any(|p| p.contains(&format!("{kazoo}/"))),
            support::proxy::ClientMessage::Connect { .. } => false,
        })
        .collect();
    assert!(
        below_it.is_empty(),
        "read below the contender: {below_it:#?}"
    );
}
