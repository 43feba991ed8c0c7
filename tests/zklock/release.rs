//! Locks that span script steps: lock --detach, lock --ttl, and release by
//! token, by holders, and by revocation.

use crate::support;

use std::process::Command;
use std::time::Duration;

use support::peers::{self, Library, acquired, peer};
use support::{Running, TestEnv, ZkOptions, ZkServer, wait_until};

const WAIT: Duration = Duration::from_secs(20);

/// The pid in the owner record of a zklock node.
fn owner_pid(env: &TestEnv, node: &str) -> i32 {
    let (data, _) = env.zk().get(node);
    let owner: serde_json::Value = serde_json::from_slice(&data).expect("owner JSON");
    owner["pid"].as_i64().expect("pid") as i32
}

/// `zklock lock LOCK --detach EXTRA...`: returns the token.
fn detach(env: &TestEnv, lock: &str, extra: &[&str]) -> String {
    let mut args = vec!["lock", lock, "--detach"];
    args.extend_from_slice(extra);
    let run = env.zklock(args).run();
    run.assert_success();
    run.stdout.trim().to_owned()
}

fn is_free(env: &TestEnv, lock: &str) -> bool {
    env.zk()
        .children_if_any(&format!("/locks/{lock}"))
        .is_empty()
}

#[test]
fn a_detached_lock_is_held_until_released_by_its_token() {
    let env = TestEnv::new();
    // As a script takes it: the command substitution returns at once.
    let script = format!(
        "tok=$({} -H {} lock dx --detach) && echo \"$tok\"",
        support::cmd::ZKLOCK,
        env.hosts()
    );
    let mut shell = Command::new("sh");
    shell.args(["-c", &script]);
    let mut run = Running::start(shell, "sh -c 'tok=$(zklock lock dx --detach)'".into(), None);
    let run = run.wait(Duration::from_secs(10));
    run.assert_success()
        .assert_faster_than(Duration::from_secs(5));
    let token = run.stdout.trim().to_owned();
    assert!(token.starts_with("/locks/dx/_c_"), "{token}");
    let holder = owner_pid(&env, &token);
    assert!(support::process_alive(holder));
    env.zklock(["lock", "-n", "dx", "--", "true"])
        .run()
        .assert_code(1);
    env.zklock(["release", &token])
        .run()
        .assert_success()
        .assert_stdout_contains(&token);
    wait_until(WAIT, "the holder process ends", || {
        !support::process_alive(holder)
    });
    assert!(is_free(&env, "dx"));
}

#[test]
fn a_detached_lock_that_is_taken_fails_in_the_foreground() {
    let env = TestEnv::new();
    let token = detach(&env, "taken", &[]);
    env.zklock(["lock", "-n", "taken", "--detach"])
        .run()
        .assert_code(1)
        .assert_stderr_contains("held by another");
    env.zklock(["lock", "-w", "300ms", "-E", "9", "taken", "--detach"])
        .run()
        .assert_code(9)
        .assert_stderr_contains("timed out");
    assert_eq!(
        env.zk().children_if_any("/locks/taken").len(),
        1,
        "the failed holders left no node"
    );
    env.zklock(["release", &token]).run().assert_success();
}

#[test]
fn while_pid_ties_the_lock_to_a_process() {
    let env = TestEnv::new();
    let mut tied = Command::new("sleep")
        .arg("60")
        .spawn()
        .expect("spawn sleep");
    let pid = tied.id().to_string();
    let token = detach(&env, "tied", &["--while-pid", &pid]);
    let holder = owner_pid(&env, &token);
    assert!(!is_free(&env, "tied"));
    tied.kill().expect("kill sleep");
    tied.wait().expect("reap sleep");
    wait_until(WAIT, "the lock frees when the process ends", || {
        is_free(&env, "tied")
    });
    wait_until(WAIT, "the holder ends", || !support::process_alive(holder));
}

#[test]
fn while_pid_of_no_process_is_a_usage_error() {
    let env = TestEnv::new();
    env.zklock(["lock", "x", "--detach", "--while-pid", "999999999"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("no such process");
    assert!(env.zk().exists("/locks/x").is_none());
}

#[test]
fn a_lease_frees_the_lock_when_it_runs_out() {
    let env = TestEnv::new();
    detach(&env, "leased", &["--lease", "1s"]);
    assert!(
        !is_free(&env, "leased"),
        "held right after the foreground returned"
    );
    wait_until(WAIT, "the lease frees the lock", || is_free(&env, "leased"));
}

#[test]
fn a_ttl_lock_is_held_with_no_process_alive_until_released() {
    let env = TestEnv::new();
    let run = env.zklock(["lock", "ttl", "--ttl", "1h"]).run();
    run.assert_success();
    let token = run.stdout.trim().to_owned();
    let (_, stat) = env.zk().get(&token);
    assert_eq!(
        stat.ephemeral_owner, 0,
        "a persistent node, owned by no session"
    );
    env.zklock(["lock", "-n", "ttl", "--", "true"])
        .run()
        .assert_code(1);
    env.zklock(["release", &token]).run().assert_success();
    assert!(is_free(&env, "ttl"));
}

#[test]
fn a_ttl_lock_expires_on_the_server() {
    let env = TestEnv::new();
    let run = env.zklock(["lock", "expiring", "--ttl", "1s"]).run();
    run.assert_success();
    let token = run.stdout.trim().to_owned();
    assert!(env.zk().exists(&token).is_some());
    // The harness runs the server's TTL sweep every 500 ms.
    wait_until(WAIT, "the server deletes the TTL node", || {
        env.zk().exists(&token).is_none()
    });
    env.zklock(["lock", "-n", "expiring", "--", "true"])
        .run()
        .assert_success();
}

#[test]
fn a_ttl_lock_on_a_server_without_ttl_says_what_the_server_needs() {
    let server = ZkServer::with_options(&ZkOptions::default().config("extendedTypesEnabled=false"));
    let env = TestEnv::with_server(&server);
    env.zklock(["lock", "x", "--ttl", "1m"])
        .run()
        .assert_code(10)
        .assert_stderr_contains("extendedTypesEnabled=true");
    assert!(env.zk().children_if_any("/locks/x").is_empty());
}

#[test]
fn release_holders_breaks_a_lock_and_the_holder_stops_its_command() {
    let env = TestEnv::new();
    let mut holder = env
        .zklock([
            "lock",
            "broken",
            "--",
            "sh",
            "-c",
            "echo $$; exec sleep 1000",
        ])
        .spawn();
    let pid: i32 = holder.next_line(WAIT).parse().expect("pid");
    let run = env
        .zklock(["-o", "json", "release", "--holders", "broken"])
        .run();
    run.assert_success();
    let report: serde_json::Value = run.json();
    assert_eq!(
        report["deleted"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
    holder.wait(WAIT).assert_code(4);
    assert!(!support::process_alive(pid));
}

#[test]
fn revoke_stops_a_zklock_holder_in_every_mode() {
    let env = TestEnv::new();
    let mut with_command = env.zklock(["lock", "r1", "--", "sleep", "1000"]).spawn();
    let mut plain = env.zklock(["lock", "r2"]).spawn();
    plain.next_line(WAIT);
    let token = detach(&env, "r3", &[]);
    let detached = owner_pid(&env, &token);
    wait_until(WAIT, "the command holder holds", || !is_free(&env, "r1"));
    for lock in ["r1", "r2", "r3"] {
        env.zklock(["release", "--revoke", lock])
            .run()
            .assert_success()
            .assert_stdout_contains("__REVOKE__");
    }
    with_command
        .wait(WAIT)
        .assert_code(4)
        .assert_stderr_contains("revoked");
    plain.wait(WAIT).assert_code(4);
    wait_until(WAIT, "the detached holder lets go", || {
        !support::process_alive(detached)
    });
    for lock in ["r1", "r2", "r3"] {
        wait_until(WAIT, "the revoked lock is free", || is_free(&env, lock));
    }
}

#[test]
fn revoke_with_force_after_deletes_a_holder_that_ignores_it() {
    let env = TestEnv::new();
    let mut curator = peer(&env, Library::Curator, "/locks/stubborn", "mutex", &[]);
    acquired(&mut curator, WAIT);
    let run = env
        .zklock([
            "-o",
            "json",
            "release",
            "--revoke",
            "--force-after",
            "500ms",
            "stubborn",
        ])
        .run();
    run.assert_success();
    let report: serde_json::Value = run.json();
    assert_eq!(
        report["revoked"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
    assert_eq!(
        report["deleted"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
    assert!(is_free(&env, "stubborn"));
    peers::release(curator);
}

#[test]
fn a_revocable_curator_holder_lets_go_when_revoked() {
    let env = TestEnv::new();
    let mut curator = peer(
        &env,
        Library::Curator,
        "/locks/polite",
        "mutex",
        &["--revocable"],
    );
    acquired(&mut curator, WAIT);
    env.zklock(["release", "--revoke", "--force-after", "20s", "polite"])
        .run()
        .assert_success();
    assert!(curator.next_line(WAIT).starts_with("REVOKED"));
    assert!(is_free(&env, "polite"));
}

#[test]
fn release_refuses_what_is_not_a_contender_node() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/x");
    env.zk().create("/locks/x/config", b"keep me");
    env.zk().create("/locks/x/lock-0000000001", b"");
    env.zk().create("/locks/x/lock-0000000001/child", b"");
    for target in [
        "/locks/x/config",
        "/",
        "/locks/x",
        "/locks/x/lock-0000000001",
    ] {
        env.zklock(["release", target])
            .run()
            .assert_code(2)
            .assert_stderr_contains("refusing");
    }
    assert!(env.zk().exists("/locks/x/config").is_some());
    assert!(env.zk().exists("/locks/x/lock-0000000001/child").is_some());
}

#[test]
fn release_of_a_gone_token_exits_6_unless_if_exists() {
    let env = TestEnv::new();
    let gone = "/locks/x/_c_0c6b9f2e-1111-2222-3333-444455556666-lock-0000000007";
    env.zklock(["release", gone])
        .run()
        .assert_code(6)
        .assert_stderr_contains("no such node");
    env.zklock(["release", "--if-exists", gone])
        .run()
        .assert_success();
}

#[test]
fn release_holders_deletes_a_generic_holder_at_the_version_it_read() {
    let env = TestEnv::new();
    let holder_session = env.connect();
    holder_session.mkdir_p("/locks/v");
    let node = holder_session.create_ephemeral_sequential("/locks/v/lock-", b"");
    holder_session.set(&node, b"changed once, before release reads it");
    let waiter = holder_session.create_ephemeral_sequential("/locks/v/lock-", b"");
    env.zklock(["release", "--holders", "v"])
        .run()
        .assert_success();
    assert!(env.zk().exists(&node).is_none(), "the holder is deleted");
    assert!(
        env.zk().exists(&waiter).is_some(),
        "the waiter is not a holder and stays"
    );
}
