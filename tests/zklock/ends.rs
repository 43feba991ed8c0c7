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
    assert!(
        text.starts_with(r#"{"zklock_end":{"version":1,"nodes":[{"node":""#)
            && text.contains(r#""how":"released","by":{"user":""#)
            && text.ends_with(r#","reason":null,"ran":null}}"#),
        "{text}"
    );
    let record = record_in(&env, "/locks/r");
    assert_eq!(record.how, "released");
    assert!(node.ends_with(&record.nodes[0].node), "{node} {record:?}");

    // A give-up at -w's end, and one by a signal, each name the waiter.
    let (mut holder, held) = hold(&env, "g");
    let not_held = || {
        let children = env.zk().children_if_any("/locks/g");
        children
            .into_iter()
            .find(|name| !held.ends_with(name.as_str()))
    };
    let mut timed_out = env
        .zklock(["lock", "-w", "300ms", "g", "--", "true"])
        .spawn();
    let pid = timed_out.pid();
    let waiter = support::wait_for(WAIT, "the waiter's node", not_held);
    timed_out.wait(WAIT).assert_code(1);
    assert_ended(&record_in(&env, "/locks/g"), "gave_up", &waiter, pid);
    let mut signalled = env.zklock(["lock", "g", "--", "true"]).spawn();
    let pid = signalled.pid();
    let waiter = support::wait_for(WAIT, "the waiter's node", not_held);
    signalled.signal(libc::SIGTERM);
    signalled.wait(WAIT).assert_code(128 + libc::SIGTERM);
    assert_ended(&record_in(&env, "/locks/g"), "gave_up", &waiter, pid);
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();

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
