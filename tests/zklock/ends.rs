//! How holds end, told by the end record zklock writes into the lock
//! directory in the transaction that deletes a node; --max-hold; and
//! `check`, which a resource asks whether a token still holds.

use crate::support;

use std::time::Duration;

use serde::Deserialize;
use zookeeper_client as zkc;

use support::peers::{self, Library, acquired, peer};
use support::{TestEnv, wait_until};

use crate::watch::{expect, next_event};

const WAIT: Duration = Duration::from_secs(20);

/// The end record as this suite reads it: every field, none unknown.
#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct Document {
    zklock_end: EndRecord,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct EndRecord {
    version: u32,
    nodes: Vec<EndedNode>,
    how: String,
    by: By,
    reason: Option<String>,
    ran: Option<serde_json::Value>,
    made_persistent: bool,
    evidence: Option<Evidence>,
}

/// What the records before it knew of the directory's ends.
#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct Evidence {
    deletes: u32,
    exact: bool,
    unclean: Option<Unclean>,
}

/// The latest unclean or unknown end, on the server's clock.
#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct Unclean {
    at_ms: i64,
    unknown: bool,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct EndedNode {
    node: String,
    session: String,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct By {
    user: String,
    host: String,
    pid: u32,
}

/// The end record in the directory `dir`, which must hold one.
#[track_caller]
fn record_in(env: &TestEnv, dir: &str) -> EndRecord {
    let (data, _) = env.zk().get(dir);
    let document: Document = serde_json::from_slice(&data).unwrap_or_else(|e| {
        panic!(
            "{dir} holds no end record ({e}): {:?}",
            String::from_utf8_lossy(&data)
        )
    });
    document.zklock_end
}

/// Asserts that `record` says `how` of exactly the node `node`, by the
/// process `pid`.
#[track_caller]
fn assert_ended(record: &EndRecord, how: &str, node: &str, pid: u32) {
    let name = node.rsplit('/').next().unwrap_or_default();
    assert_eq!(record.version, 1, "{record:?}");
    assert_eq!(record.how, how, "{record:?}");
    assert_eq!(
        record
            .nodes
            .iter()
            .map(|n| n.node.as_str())
            .collect::<Vec<_>>(),
        [name],
        "{record:?}"
    );
    assert!(record.nodes[0].session.starts_with("0x"), "{record:?}");
    assert_eq!(record.by.pid, pid, "{record:?}");
    assert_eq!(record.ran, None, "{record:?}");
}

/// Runs `zklock` to its successful end; the pid it ran as, which its end
/// records name.
fn succeeds_as(zklock: support::Zklock) -> u32 {
    let mut running = zklock.spawn();
    let pid = running.pid();
    running.wait(WAIT).assert_success();
    pid
}

/// A child of `dir` other than the holder's node at `held`.
fn other_child(env: &TestEnv, dir: &str, held: &str) -> Option<String> {
    let children = env.zk().children_if_any(dir);
    children
        .into_iter()
        .find(|name| !held.ends_with(name.as_str()))
}

/// `zklock lock LOCK` holding until SIGTERM, once it holds; its token.
fn hold(env: &TestEnv, lock: &str) -> (support::Running, String) {
    let mut holder = env.zklock(["lock", lock]).spawn();
    let token = holder.next_line(WAIT);
    (holder, token)
}

#[test]
fn a_release_a_give_up_and_a_max_hold_stop_each_leave_their_record() {
    let env = TestEnv::new();
    // Persistent directories: the server removes an emptied container, and
    // its record with it, before this test could read it.
    for dir in ["/locks/r", "/locks/m"] {
        env.zk().mkdir_p(dir);
    }
    // A command run under the lock, released when it ends: the record
    // names the node it ran under, in the exact shape other tools read.
    let run = env
        .zklock(["lock", "r", "--", "sh", "-c", "echo \"$ZKLOCK_NODE\""])
        .run();
    run.assert_success();
    let node = run.stdout.trim();
    let (data, _) = env.zk().get("/locks/r");
    let text = String::from_utf8(data).expect("UTF-8");
    // A new directory: the one delete counted, the ends before it unknown
    // from the first arrival on.
    assert!(
        text.starts_with(r#"{"zklock_end":{"version":1,"nodes":[{"node":""#)
            && text.contains(r#""how":"released","by":{"user":""#)
            && text.contains(
                r#","reason":null,"ran":null,"made_persistent":false,"evidence":{"deletes":1,"exact":false,"unclean":{"at_ms":"#
            )
            && text.ends_with(r#","unknown":true}}}}"#),
        "{text}"
    );
    let record = record_in(&env, "/locks/r");
    assert_eq!(record.how, "released");
    assert!(node.ends_with(&record.nodes[0].node), "{node} {record:?}");

    // A give-up at -w's end, and one by a signal, behind a reader each
    // name the waiter.
    let mut reader = env.zklock(["rlock", "g"]).spawn();
    let held = reader.next_line(WAIT);
    let mut timed_out = env
        .zklock(["wlock", "-w", "300ms", "g", "--", "true"])
        .spawn();
    let pid = timed_out.pid();
    let waiter = support::wait_for(WAIT, "the waiter's node", || {
        other_child(&env, "/locks/g", &held)
    });
    timed_out.wait(WAIT).assert_code(1);
    assert_ended(&record_in(&env, "/locks/g"), "gave_up", &waiter, pid);
    let mut signalled = env.zklock(["wlock", "g", "--", "true"]).spawn();
    let pid = signalled.pid();
    let waiter = support::wait_for(WAIT, "the waiter's node", || {
        other_child(&env, "/locks/g", &held)
    });
    signalled.signal(libc::SIGTERM);
    signalled.wait(WAIT).assert_code(128 + libc::SIGTERM);
    assert_ended(&record_in(&env, "/locks/g"), "gave_up", &waiter, pid);
    reader.signal(libc::SIGTERM);
    reader.wait(WAIT).assert_success();
    // Behind a mutex's holder, a waiter that gives up never held: it
    // leaves the directory's data to the holder, whose record accounts
    // for it.
    let (mut holder, held) = hold(&env, "x");
    let before = env.zk().get("/locks/x");
    let mut timed_out = env
        .zklock(["lock", "-w", "300ms", "x", "--", "true"])
        .spawn();
    support::wait_for(WAIT, "the waiter's node", || {
        other_child(&env, "/locks/x", &held)
    });
    timed_out.wait(WAIT).assert_code(1);
    let after = env.zk().get("/locks/x");
    assert_eq!((after.0, after.1.version), (before.0, before.1.version));
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
    let record = record_in(&env, "/locks/x");
    assert_eq!(record.how, "released");
    assert!(held.ends_with(&record.nodes[0].node), "{held} {record:?}");

    // --max-hold: stopped, exit 124, the record says so.
    let mut bounded = env
        .zklock(["lock", "--max-hold", "300ms", "m", "--", "sleep", "30"])
        .spawn();
    let pid = bounded.pid();
    let node = support::wait_for(WAIT, "the bounded hold's node", || {
        env.zk().children_if_any("/locks/m").into_iter().next()
    });
    bounded.wait(WAIT).assert_code(124);
    assert_ended(&record_in(&env, "/locks/m"), "max_hold", &node, pid);
}

#[test]
fn a_break_names_who_broke_it_and_why_to_the_victim_watch_and_the_record() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/b");
    let mut watching = env.zklock(["-o", "json", "watch", "b"]).spawn();
    while next_event(&mut watching).event != "watching" {}
    let mut victim = env.zklock(["lock", "b", "--", "sleep", "60"]).spawn();
    let node = support::wait_for(WAIT, "the victim's node", || {
        env.zk().children_if_any("/locks/b").into_iter().next()
    });
    let node = format!("/locks/b/{node}");
    expect(&mut watching, "acquired", &node);
    let breaker_pid = succeeds_as(env.zklock([
        "release",
        "--holders",
        "b",
        "--yes",
        "--reason",
        "stuck since Monday",
    ]));
    let record = record_in(&env, "/locks/b");
    assert_ended(&record, "broken", &node, breaker_pid);
    assert_eq!(record.reason.as_deref(), Some("stuck since Monday"));
    let released = expect(&mut watching, "released", &node);
    assert_eq!(
        (released.how.as_deref(), released.how_evidence.as_deref()),
        (Some("broken"), Some("end_record")),
        "{released:#?}"
    );
    let by = released.ended_by.expect("who broke it");
    assert_eq!(
        (by.pid, by.reason.as_deref()),
        (breaker_pid, Some("stuck since Monday"))
    );
    let lost = victim.wait(WAIT);
    lost.assert_code(4);
    lost.assert_stderr_contains(&format!(
        "broken by {}@{} pid {breaker_pid}: stuck since Monday",
        record.by.user, record.by.host
    ));
}

#[test]
fn release_by_token_a_forced_revoke_and_reap_leave_records_beside_the_libraries() {
    let env = TestEnv::new();
    for dir in ["/locks/t", "/locks/c"] {
        env.zk().mkdir_p(dir);
    }
    // A detached zklock's token, released.
    let token = env.zklock(["lock", "t", "--detach"]).run();
    token.assert_success();
    let token = token.stdout.trim().to_owned();
    let pid = succeeds_as(env.zklock(["release", &token, "--reason", "done"]));
    let record = record_in(&env, "/locks/t");
    assert_ended(&record, "broken", &token, pid);
    assert_eq!(record.reason.as_deref(), Some("done"));

    // A kazoo holder ignores __REVOKE__: --force-after deletes it.
    let mut kazoo = peer(&env, Library::Kazoo, "/locks/k", "mutex", &[]);
    let kazoo_node = acquired(&mut kazoo, WAIT);
    let pid = succeeds_as(env.zklock([
        "release",
        "--revoke",
        "--force-after",
        "200ms",
        "--yes",
        "k",
    ]));
    assert_ended(&record_in(&env, "/locks/k"), "broken", &kazoo_node, pid);

    // A Curator holder reaped: its library never reads the directory.
    let mut curator = peer(&env, Library::Curator, "/locks/c", "mutex", &[]);
    let curator_node = acquired(&mut curator, WAIT);
    let pid = succeeds_as(env.zklock(["reap", "--all", "--yes", "--reason", "old", "c"]));
    let record = record_in(&env, "/locks/c");
    assert_ended(&record, "reaped", &curator_node, pid);
    assert_eq!(record.reason.as_deref(), Some("old"));
    peers::release(kazoo);
    peers::release(curator);
}

#[test]
fn a_kazoo_semaphore_keeps_its_maximum_and_a_refused_record_still_deletes() {
    let env = TestEnv::new();
    let mut lease = env
        .zklock(["sem", "--dialect", "kazoo", "--max-leases", "2", "s"])
        .spawn();
    let lease_node = lease.next_line(WAIT);
    lease.signal(libc::SIGTERM);
    lease.wait(WAIT).assert_success();
    assert!(env.zk().exists(&lease_node).is_none());
    let mut kazoo = peer(
        &env,
        Library::Kazoo,
        "/locks/s",
        "semaphore",
        &["--max-leases", "2"],
    );
    let kazoo_lease = acquired(&mut kazoo, WAIT);
    env.zklock(["release", &kazoo_lease, "--reason", "x"])
        .run()
        .assert_success();
    assert_eq!(env.zk().get("/locks/s").0, b"2", "kazoo's maximum");
    peers::release(kazoo);

    // A directory whose ACL forbids the write: the delete goes alone.
    let holder = env.connect();
    holder.mkdir_p("/locks/w");
    let no_write = zkc::Permission::READ | zkc::Permission::CREATE | zkc::Permission::DELETE;
    env.zk().set_acl(
        "/locks/w",
        &[zkc::Acl::new(no_write, zkc::AuthId::anyone())],
    );
    let node = holder.create_ephemeral_sequential("/locks/w/lock-", b"");
    env.zklock(["release", &node]).run().assert_success();
    assert!(env.zk().exists(&node).is_none());
    let node = holder.create_ephemeral_sequential("/locks/w/lock-", b"");
    env.zklock(["reap", "--all", "--yes", "w"])
        .run()
        .assert_success();
    assert!(env.zk().exists(&node).is_none());
    env.zklock(["lock", "w", "--", "true"])
        .run()
        .assert_success();
    wait_until(WAIT, "the released lock is free", || {
        env.zk().children_if_any("/locks/w").is_empty()
    });
    assert_eq!(env.zk().get("/locks/w").0, b"", "nothing was written");
}

#[test]
fn max_hold_kills_a_grandchild_that_ignores_sigterm_and_frees_the_lock_in_time() {
    let env = TestEnv::new();
    // sh starts a child that ignores TERM and outlives sh's own end.
    let script = "trap '' TERM; (trap '' TERM; sleep 6543) & wait";
    let mut bounded = env
        .zklock([
            "-o",
            "json",
            "lock",
            "--max-hold",
            "500ms",
            "--kill-after",
            "500ms",
            "x",
            "--",
            "sh",
            "-c",
            script,
        ])
        .spawn();
    support::wait_for(WAIT, "the hold", || {
        env.zk().children_if_any("/locks/x").into_iter().next()
    });
    let began = std::time::Instant::now();
    wait_until(WAIT, "the lock is free", || {
        env.zk().children_if_any("/locks/x").is_empty()
    });
    let freed = began.elapsed();
    // A second of --max-hold and --kill-after, with room for a loaded
    // machine; a grandchild left alive would hold it for 6543 s.
    assert!(
        freed < Duration::from_secs(10),
        "freed {freed:?} after the hold began: more than --max-hold and --kill-after"
    );
    let run = bounded.wait(WAIT);
    run.assert_code(124);
    let error: serde_json::Value =
        serde_json::from_str(run.stderr.trim().lines().last().unwrap_or_default())
            .expect("a JSON error");
    assert_eq!(error["cause"], "max_hold", "{error}");
    assert_eq!(error["exit_code"], 124, "{error}");
    // Nothing of the group is left: the grandchild is gone.
    let left = std::process::Command::new("pgrep")
        .args(["-f", "sleep 6543"])
        .output()
        .expect("run pgrep");
    assert!(left.stdout.is_empty(), "left behind: {left:?}");
    // --preserve-status: the command's own status (it died of SIGKILL).
    env.zklock([
        "lock",
        "--max-hold",
        "300ms",
        "--kill-after",
        "300ms",
        "--preserve-status",
        "x",
        "--",
        "sh",
        "-c",
        "trap '' TERM; sleep 30",
    ])
    .run()
    .assert_code(128 + libc::SIGKILL);
    // Stopped by TERM alone, 124 all the same.
    env.zklock(["lock", "--max-hold", "200ms", "x", "--", "sleep", "30"])
        .run()
        .assert_code(124);
}

#[test]
fn max_hold_without_a_command_or_with_detach_is_a_usage_error() {
    let env = TestEnv::new();
    for args in [
        &["lock", "--max-hold", "1s", "u"][..],
        &["lock", "--max-hold", "1s", "--detach", "u"],
        &["lock", "--preserve-status", "u", "--", "true"],
        &["sem", "--max-leases", "1", "--max-hold", "1s", "u"],
    ] {
        env.zklock(args).run().assert_code(2);
    }
}

/// `zklock -o json check TOKEN [--fence N]`: the exit code and the answer.
fn check(env: &TestEnv, token: &str, fence: Option<i64>) -> (i32, serde_json::Value) {
    let mut args = vec!["-o".to_owned(), "json".into(), "check".into(), token.into()];
    if let Some(fence) = fence {
        args.extend(["--fence".to_owned(), fence.to_string()]);
    }
    let run = env.zklock(args).run();
    let answer: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    (run.code.expect("an exit code"), answer[0].clone())
}

#[test]
fn check_tells_a_holder_from_a_waiter_a_broken_hold_and_a_node_made_again() {
    let env = TestEnv::new();
    let (mut holder, token) = hold(&env, "f");
    let fence = env.zk().exists(&token).expect("the token").czxid;
    let (code, answer) = check(&env, &token, Some(fence));
    assert_eq!(code, 0, "{answer}");
    assert_eq!(
        (
            &answer["held"],
            &answer["lock"],
            &answer["node"],
            &answer["fence"]
        ),
        (
            &serde_json::json!(true),
            &serde_json::json!("/locks/f"),
            &serde_json::json!(token),
            &serde_json::json!(fence)
        )
    );
    assert!(answer["age_ms"].as_i64().is_some(), "{answer}");
    // A waiter does not hold; nor does the holder under another fence.
    let mut waiter = env.zklock(["lock", "f"]).spawn();
    let waiting = support::wait_for(WAIT, "the waiter's node", || {
        let children = env.zk().children_if_any("/locks/f");
        children
            .into_iter()
            .find(|name| !token.ends_with(name.as_str()))
    });
    assert_eq!(check(&env, &format!("/locks/f/{waiting}"), None).0, 1);
    assert_eq!(check(&env, &token, Some(fence + 1)).0, 1);
    // Broken: gone, and the waiter holds now.
    env.zklock(["release", &token]).run().assert_success();
    holder.wait(WAIT).assert_code(4);
    let (code, answer) = check(&env, &token, Some(fence));
    assert_eq!((code, &answer["fence"]), (1, &serde_json::Value::Null));
    let second = waiter.next_line(WAIT);
    assert_eq!(check(&env, &second, None).0, 0);
    waiter.signal(libc::SIGTERM);
    waiter.wait(WAIT).assert_success();
    // The same name made again: the old fence fails, the new one passes.
    let owner = env.connect();
    owner.mkdir_p("/locks/f");
    owner.create_ephemeral(&token, b"");
    let made_again = env.zk().exists(&token).expect("made again").czxid;
    assert_ne!(made_again, fence);
    assert_eq!(check(&env, &token, Some(fence)).0, 1);
    assert_eq!(check(&env, &token, Some(made_again)).0, 0);
    // A path no library names is no token.
    env.zklock(["check", "/locks/f"]).run().assert_code(2);
}

#[test]
fn check_in_the_command_guards_its_write() {
    let env = TestEnv::new();
    let zklock = support::cmd::ZKLOCK;
    let script = format!(
        "{zklock} -H '{}' check \"$ZKLOCK_NODE\" --fence \"$ZKLOCK_FENCE\" && echo wrote",
        env.hosts()
    );
    env.zklock(["lock", "w", "--", "sh", "-c", &script])
        .run()
        .assert_success()
        .assert_stdout_contains("wrote");
}

/// The end record and the delete of every way zklock ends a hold go in one
/// transaction: the directory's last change of its children (`pzxid`) and
/// the last write of its data (`mzxid`) are the same zxid, and the record
/// names the node that went.
#[test]
fn the_end_record_and_the_delete_are_one_transaction() {
    let env = TestEnv::new();
    let dir = "/locks/t";
    env.zk().mkdir_p(dir);
    let one = |what: &str, node: &str, left: usize| {
        let (_, stat) = env.zk().get(dir);
        assert_eq!(stat.pzxid, stat.mzxid, "{what}: two transactions");
        assert_eq!(env.zk().children_if_any(dir).len(), left, "{what}");
        let record = record_in(&env, dir);
        assert!(node.ends_with(&record.nodes[0].node), "{what}: {record:?}");
    };
    let released = env
        .zklock(["lock", "t", "--", "sh", "-c", "echo \"$ZKLOCK_NODE\""])
        .run();
    released.assert_success();
    one("a release", released.stdout.trim(), 0);
    let (mut holder, token) = hold(&env, "t");
    env.zklock(["release", "--holders", "t", "--yes"])
        .run()
        .assert_success();
    holder.wait(WAIT).assert_code(4);
    one("a break", &token, 0);
    let (mut holder, token) = hold(&env, "t");
    env.zklock(["reap", "--all", "--yes"])
        .run()
        .assert_success();
    holder.wait(WAIT).assert_code(4);
    one("a reap", &token, 0);
    let (mut holder, token) = hold(&env, "t");
    env.zk().set(&token, b"__REVOKE__");
    holder.wait(WAIT).assert_code(4);
    one("a lost hold", &token, 0);
    // A give-up behind a reader, which reads the directory first.
    let mut reader = env.zklock(["rlock", "t"]).spawn();
    let held = reader.next_line(WAIT);
    let mut writer = env
        .zklock(["wlock", "-w", "300ms", "t", "--", "true"])
        .spawn();
    let waiter = support::wait_for(WAIT, "the writer's node", || other_child(&env, dir, &held));
    writer.wait(WAIT).assert_code(1);
    one("a give-up", &waiter, 1);
    reader.signal(libc::SIGTERM);
    reader.wait(WAIT).assert_success();
    one("a shared release", &held, 0);
}

/// A hold that was lost (its command stopped, exit 4) is no clean end: its
/// own zklock deletes what is left of it with a `lost` record, which the
/// next holder's lock-delay counts as unclean, and `watch` and `history`
/// show.
#[test]
fn a_lost_hold_leaves_a_lost_record_that_watch_and_history_show() {
    let server = support::ZkServer::new();
    let env = TestEnv::with_server(&server);
    env.zk().mkdir_p("/locks/l");
    let mut watching = env.zklock(["-o", "json", "watch", "l"]).spawn();
    while next_event(&mut watching).event != "watching" {}
    let mut holder = env.zklock(["lock", "l", "--", "sleep", "60"]).spawn();
    let pid = holder.pid();
    let node = support::wait_for(WAIT, "the holder's node", || {
        env.zk().children_if_any("/locks/l").into_iter().next()
    });
    let node = format!("/locks/l/{node}");
    expect(&mut watching, "acquired", &node);
    env.zk().set(&node, b"__REVOKE__");
    holder.wait(WAIT).assert_code(4);
    assert_ended(&record_in(&env, "/locks/l"), "lost", &node, pid);
    let released = expect(&mut watching, "released", &node);
    assert_eq!(released.how.as_deref(), Some("lost"), "{released:#?}");
    let history: support::json::History = env
        .zklock(["history", env.chroot(), "--data-dir"])
        .arg(server.data_dir())
        .args(["-o", "json"])
        .run()
        .assert_success()
        .json();
    let name = node.rsplit('/').next().unwrap_or_default();
    let hold = history
        .holds
        .iter()
        .find(|hold| hold.node == name)
        .unwrap_or_else(|| panic!("no hold of {name}: {history:#?}"));
    assert_eq!(hold.how.as_deref(), Some("lost"), "{hold:#?}");
    // The next holder keeping a lock-delay waits it out.
    let next = env
        .zklock(["lock", "l", "--lock-delay", "2s", "--"])
        .args(["sh", "-c", "echo \"$ZKLOCK_LOCK_DELAYED\""])
        .run();
    next.assert_success();
    let waited: u64 = next.stdout.trim().parse().expect("ZKLOCK_LOCK_DELAYED");
    assert!(waited >= 1_400, "waited {waited} ms after a lost hold");
}

/// An application's data in a directory zklock sees as a lock directory:
/// kazoo's config node with a lock beside it.
const CONFIG: &[u8] = br#"{"db":"prod-primary","replicas":3}"#;

/// The end record goes only over nothing or a record: under contenders of
/// every layout whose directory holds an application's data, a release by
/// token and a reap delete the contender alone (and their dry run and
/// prompt say so), and so do zklock's own holders, with their data there
/// from the start or written while they held.
#[test]
fn an_applications_data_above_a_contender_is_never_written_over() {
    let env = TestEnv::new();
    let app = env.connect();
    let hbase = support::hbase::table_lock("default", "t1", false, "app");
    let layouts: [(&str, &str, &[u8]); 5] = [
        ("/svc/config", "worker-lock-", b""),
        ("/svc/recipe", "lock-", b""),
        (
            "/svc/kazoo",
            "0123456789abcdef0123456789abcdef__lock__",
            b"",
        ),
        (
            "/svc/curator",
            "_c_2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f-lock-",
            b"",
        ),
        ("/svc/hbase/table-lock/t1", "write-", &hbase),
    ];
    for (dir, _, _) in layouts {
        env.zk().mkdir_p(dir);
        env.zk().set(dir, CONFIG);
    }
    let untouched = |dir: &str, version: i32| {
        let (data, stat) = env.zk().get(dir);
        assert_eq!(
            (String::from_utf8_lossy(&data), stat.version),
            (String::from_utf8_lossy(CONFIG), version),
            "{dir} was written"
        );
    };
    let contenders = || -> Vec<String> {
        layouts
            .iter()
            .map(|(dir, prefix, data)| {
                app.create_ephemeral_sequential(&format!("{dir}/{prefix}"), data)
            })
            .collect()
    };
    // Release by token.
    for node in contenders() {
        env.zklock(["release", &node]).run().assert_success();
        assert!(env.zk().exists(&node).is_none(), "{node} is left");
    }
    for (dir, _, _) in layouts {
        untouched(dir, 1);
    }
    // A break's dry run says no record goes into it.
    let node = app.create_ephemeral_sequential("/svc/config/worker-lock-", b"");
    let dry: serde_json::Value = env
        .zklock([
            "-o",
            "json",
            "release",
            "--holders",
            "/svc/config",
            "--dry-run",
        ])
        .run()
        .assert_success()
        .json();
    assert_eq!(
        dry["end_records"],
        serde_json::json!([{"dir": "/svc/config", "end_record": false}]),
        "{dry}"
    );
    env.zk().delete(&node);
    // Reap: its dry run says no record goes into any of them.
    let nodes = contenders();
    let listed = || -> support::json::ReapDryRun {
        env.zklock([
            "-o",
            "json",
            "reap",
            "/svc",
            "--older-than",
            "1s",
            "--dry-run",
        ])
        .run()
        .assert_success()
        .json()
    };
    wait_until(WAIT, "every contender is a second old", || {
        listed().would_delete.len() == nodes.len()
    });
    for node in listed().would_delete {
        assert_eq!(node.end_record, Some(false), "{node:?}");
    }
    env.zklock(["reap", "/svc", "--older-than", "1s", "-y"])
        .run()
        .assert_success();
    for (node, (dir, _, _)) in nodes.iter().zip(layouts) {
        assert!(env.zk().exists(node).is_none(), "{node} is left");
        untouched(dir, 1);
    }
    // zklock's own holders, over the data from the start: a release, a
    // shared release, a give-up behind a reader, a lost hold.
    let own = "/svc/config";
    for verb in ["lock", "rlock"] {
        env.zklock([verb, own, "--", "true"]).run().assert_success();
    }
    let mut reader = env.zklock(["rlock", own]).spawn();
    reader.next_line(WAIT);
    env.zklock(["wlock", "-n", own, "--", "true"])
        .run()
        .assert_code(1);
    reader.signal(libc::SIGTERM);
    reader.wait(WAIT).assert_success();
    let mut holder = env.zklock(["lock", own, "--", "sleep", "60"]).spawn();
    let node = support::wait_for(WAIT, "the holder's node", || {
        env.zk().children_if_any(own).into_iter().next()
    });
    env.zk().set(&format!("{own}/{node}"), b"__REVOKE__");
    holder.wait(WAIT).assert_code(4);
    untouched(own, 1);
    // Data an application writes while zklock holds, after its read.
    for verb in ["lock", "rlock"] {
        let late = format!("/svc/late-{verb}");
        env.zk().mkdir_p(&late);
        let mut holder = env.zklock([verb, &late]).spawn();
        holder.next_line(WAIT);
        let written = env.zk().set(&late, CONFIG);
        holder.signal(libc::SIGTERM);
        holder.wait(WAIT).assert_success();
        assert!(env.zk().children_if_any(&late).is_empty(), "{verb}");
        untouched(&late, written.version);
    }
}
