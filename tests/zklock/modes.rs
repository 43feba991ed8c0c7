//! What `lock` promises a script, as flock(1) does: a command that cannot
//! start exits 127 or 126, a flag that would be ignored is refused before any
//! connection, the defaults hold on a server that grants short sessions, a
//! conflict names the holder, and `watch --until` answers a state that
//! already holds.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use support::{TestEnv, ZkOptions, ZkServer, dead_port};

const SOON: Duration = Duration::from_secs(15);

fn assert_no_node(env: &TestEnv, lock: &str) {
    let left = env.zk().children_if_any(&format!("/locks/{lock}"));
    assert!(left.is_empty(), "nodes left under {lock}: {left:?}");
}

#[test]
fn a_command_that_cannot_start_exits_127_or_126_and_releases() {
    let env = TestEnv::new();
    env.zklock(["lock", "cannot", "--", "/nonexistent/zklock-test-command"])
        .run()
        .assert_code(127);
    assert_no_node(&env, "cannot");
    env.zklock(["lock", "cannot", "--", "no-such-command-on-any-path"])
        .run()
        .assert_code(127);
    assert_no_node(&env, "cannot");

    let dir = support::Scratch::new();
    let script = dir.file("not-executable");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    env.zklock(["lock", "cannot", "--"])
        .arg(&script)
        .run()
        .assert_code(126);
    env.zklock(["lock", "cannot", "--"])
        .arg(dir.file(""))
        .run()
        .assert_code(126);
    assert_no_node(&env, "cannot");

    // A command's own 127 is still its own.
    env.zklock(["lock", "cannot", "--", "sh", "-c", "exit 127"])
        .run()
        .assert_code(127);
    assert_no_node(&env, "cannot");
}

#[test]
fn flags_that_do_not_apply_are_usage_errors_before_connecting() {
    // No server listens there: a refusal that connected first would be 3.
    let nowhere = format!("127.0.0.1:{}", dead_port());
    let refused: &[&[&str]] = &[
        &["lock", "x", "--kill-after", "1s"],
        &["lock", "x", "--kill-signal", "INT"],
        &["lock", "x", "--kill-after", "1s", "--detach"],
        &["lock", "x", "--lease", "1s", "--", "sleep", "3"],
        &["lock", "x", "--lease", "1s"],
        &["lock", "x", "--while-pid", "1", "--", "true"],
        &["lock", "x", "-E", "3", "--", "true"],
        &["-o", "json", "lock", "x"],
        &["-o", "json", "rlock", "x"],
        &["--read-only", "lock", "x", "--", "true"],
        &["--read-only", "wlock", "x"],
        &["--read-only", "release", "--holders", "--yes", "x"],
        &["--read-only", "reap", "--all", "--yes"],
        &["-o", "json", "completions", "bash"],
        // A lease ends with its holder's session: no --ttl for a semaphore.
        &["sem", "x", "--max-leases", "2", "--ttl", "1m"],
    ];
    for args in refused {
        let run = support::Zklock::new(*args).hosts(&nowhere).run();
        assert_eq!(run.code, Some(2), "{run:?}");
        assert!(run.stdout.is_empty(), "{run:?}");
    }
}

#[test]
fn json_of_detach_and_ttl_is_the_grant() {
    let env = TestEnv::new();
    // A detached holder's node belongs to its session; a TTL node to none.
    for (mode, ephemeral) in [
        (&["--detach", "--lease", "30s"][..], true),
        (&["--ttl", "30s"], false),
    ] {
        let run = env
            .zklock(["-o", "json", "lock", "granted"])
            .args(mode)
            .run();
        let grant: support::json::Grant = run.assert_success().json();
        assert_eq!(grant.lock, "/locks/granted", "{run:?}");
        let stat = env
            .zk()
            .exists(&grant.token)
            .unwrap_or_else(|| panic!("no node {}: {run:?}", grant.token));
        assert_eq!(grant.fence, stat.czxid, "{run:?}");
        let session = i64::from_str_radix(grant.session.trim_start_matches("0x"), 16).unwrap();
        assert_ne!(session, 0, "{run:?}");
        let owner = if ephemeral { session } else { 0 };
        assert_eq!(stat.ephemeral_owner, owner, "{run:?}");
        env.zklock(["release", &grant.token]).run().assert_success();
        support::wait_until(SOON, "the holder to let go", || {
            env.zk().children_if_any("/locks/granted").is_empty()
        });
    }
}

#[test]
fn a_conflict_names_the_holder() {
    let env = TestEnv::new();
    let mut holder = env
        .zklock(["lock", "busy", "--data", "nightly-backup"])
        .spawn();
    holder.next_line(SOON);
    for patience in [&["-n"][..], &["-w", "0.2"]] {
        let run = env
            .zklock(["lock", "busy"])
            .args(patience)
            .args(["--", "true"])
            .run();
        run.assert_code(1);
        // The owner record and the dialect, as the spinner shows them.
        assert!(run.stderr.contains("\"nightly-backup\""), "{run:?}");
        assert!(run.stderr.contains("(curator)"), "{run:?}");
    }
    holder.signal(libc::SIGTERM);
    holder.wait(SOON).assert_success();
    // Off a terminal the hold says nothing on stderr: no hint.
    assert!(holder.stderr().is_empty(), "{}", holder.stderr());
    assert_no_node(&env, "busy");
}

#[test]
fn quiet_leaves_only_results_and_errors() {
    let env = TestEnv::new();
    let mut holder = env.zklock(["lock", "busy"]).spawn();
    holder.next_line(SOON);
    let told = env.zklock(["lock", "busy", "-n", "--", "true"]).run();
    told.assert_code(1);
    assert!(!told.stderr.is_empty(), "a give-up names the holder");
    let quiet = env.zklock(["-q", "lock", "busy", "-n", "--", "true"]).run();
    quiet.assert_code(1);
    assert_eq!(quiet.stderr, "", "-q still told");
    // Results are still printed, and so are errors.
    let listed = env.zklock(["-q", "ls", "-o", "json"]).run();
    listed.assert_success();
    let locks: Vec<serde_json::Value> = listed.json();
    assert_eq!(locks.len(), 1, "{}", listed.stdout);
    let missing = env.zklock(["-q", "stat", "nope"]).run();
    missing.assert_code(6);
    assert!(!missing.stderr.is_empty(), "-q hid an error");
    holder.signal(libc::SIGTERM);
    holder.wait(SOON).assert_success();
}

#[test]
fn watch_until_answers_a_state_that_already_holds() {
    let env = TestEnv::new();
    let mut holder = env.zklock(["lock", "watched"]).spawn();
    holder.next_line(SOON);
    // The timeout counts from the first reading, not from connecting.
    env.zklock(["watch", "watched", "--until", "held", "-w", "10ms"])
        .run()
        .assert_success();
    env.zklock(["watch", "watched", "--until", "free", "-w", "10ms"])
        .run()
        .assert_code(1);
    holder.signal(libc::SIGTERM);
    holder.wait(SOON).assert_success();
    env.zklock(["watch", "watched", "--until", "free", "-w", "10ms"])
        .run()
        .assert_success();
}

#[test]
fn defaults_hold_on_a_server_that_grants_short_sessions() {
    // tickTime 200 ms and a 2 s ceiling: far below the 10 s zklock asks for.
    let server = ZkServer::with_options(&ZkOptions::default().config("maxSessionTimeout=2000"));
    let env = TestEnv::with_server(&server);
    env.zklock(["lock", "short", "--", "true"])
        .run()
        .assert_success();
    env.zklock(["--session-timeout", "1s", "lock", "short", "--", "true"])
        .run()
        .assert_success();
    // --kill-after comes from the 2 s granted, not the 10 s asked for: a
    // fifth of it, 400 ms, not 2 s.
    crate::locks::assert_a_stubborn_command_is_killed(
        &env,
        &[],
        (
            "TERM",
            Duration::from_millis(400),
            Duration::from_millis(1200),
        ),
        |env, node| env.zk().delete(node),
    );
    let run = env
        .zklock(["lock", "short", "--detach", "--lease", "1s"])
        .run();
    run.assert_success();
    support::wait_until(SOON, "the lease to run out", || {
        env.zk().children_if_any("/locks/short").is_empty()
    });
    env.zklock(["ls"]).run().assert_success();
    env.zklock(["watch", "short", "--until", "free", "-w", "1s"])
        .run()
        .assert_success();
}
