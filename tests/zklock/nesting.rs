//! Re-entry against a real ZooKeeper: a zklock nested in a hold of the
//! same lock whose mode covers its request runs its command at once under
//! that hold, makes no node, and is stopped when that hold ends; a copied
//! `ZKLOCK_HELD` re-enters nothing.

use crate::support;

use std::time::Duration;

use support::{Scratch, TestEnv, wait_until};

const WAIT: Duration = Duration::from_secs(30);

/// `OUTER /e/a -- zklock INNER /e/a -- sh -c SCRIPT`.
fn nested(env: &TestEnv, outer: &str, inner: &str, script: &str) -> support::Zklock {
    let hosts = env.hosts();
    let zklock = env!("CARGO_BIN_EXE_zklock");
    env.zklock([
        outer, "/e/a", "--", zklock, "-H", &hosts, inner, "/e/a", "--", "sh", "-c", script,
    ])
    .timeout(WAIT)
}

#[test]
fn lock_in_lock_and_read_in_write_run_at_once_under_the_enclosing_hold() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let seen = scratch.file("seen");
    // The inner command runs under the enclosing hold, named once.
    let script = format!("echo \"$ZKLOCK_HELD\" > '{}'; exit 3", seen.display());
    let run = nested(&env, "lock", "lock", &script).run();
    run.assert_code(3);
    let held = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(
        held.trim().lines().count(),
        1,
        "one hold, named once: {held:?}"
    );
    assert!(env.zk().children_if_any("/e/a").is_empty());

    nested(&env, "wlock", "rlock", "true")
        .run()
        .assert_success();
    nested(&env, "rlock", "rlock", "true")
        .run()
        .assert_success();
    nested(&env, "lock", "lock", "true").run().assert_success();
}

#[test]
fn a_copied_zklock_held_does_not_re_enter() {
    let env = TestEnv::new();
    let mut holder = env.zklock(["lock", "/e/a"]).spawn();
    let token = holder.next_line(WAIT);
    env.zklock(["lock", "/e/a", "-n", "--", "true"])
        .env("ZKLOCK_HELD", &token)
        .run()
        .assert_code(1);
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
}

#[test]
fn the_re_entered_command_stops_when_the_enclosing_hold_is_deleted() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let ready = scratch.file("ready");
    let script = format!("touch '{}'; exec sleep 600", ready.display());
    let mut outer = nested(&env, "lock", "lock", &script).spawn();
    wait_until(WAIT, "the re-entered command runs", || ready.exists());
    let nodes = env.zk().children("/e/a");
    assert_eq!(nodes.len(), 1, "re-entry makes no node of its own");
    env.zklock(["release", &format!("/e/a/{}", nodes[0])])
        .run()
        .assert_success();
    // The outer zklock's command, the inner zklock, reports the loss (4),
    // and so does the outer one.
    outer.wait(WAIT).assert_code(4);
}

#[test]
fn a_read_inside_a_read_with_a_writer_queued_between_exits_7() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let (ready, go, code) = (
        scratch.file("ready"),
        scratch.file("go"),
        scratch.file("code"),
    );
    let script = format!(
        "touch '{}'; while [ ! -e '{}' ]; do sleep 0.05; done; '{}' -H '{}' rlock /e/a -- true; echo $? > '{}'",
        ready.display(),
        go.display(),
        env!("CARGO_BIN_EXE_zklock"),
        env.hosts(),
        code.display()
    );
    let mut outer = env
        .zklock(["rlock", "/e/a", "--", "sh", "-c", &script])
        .spawn();
    wait_until(WAIT, "the reader holds", || ready.exists());
    let mut writer = env.zklock(["wlock", "/e/a", "--", "true"]).spawn();
    wait_until(WAIT, "the writer queues", || {
        env.zk().children("/e/a").len() == 2
    });
    std::fs::write(&go, b"").unwrap();
    outer.wait(WAIT).assert_success();
    assert_eq!(
        std::fs::read_to_string(&code).unwrap().trim(),
        "7",
        "the inner reader refuses"
    );
    writer.wait(WAIT).assert_success();
}

#[test]
fn the_re_entered_command_stops_when_the_enclosing_zklock_is_killed() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let pid_file = scratch.file("pid");
    let script = format!("echo $$ > '{}'; exec sleep 600", pid_file.display());
    let mut outer = nested(&env, "lock", "lock", &script).spawn();
    let pid: i32 = support::wait_for(WAIT, "the re-entered command runs", || {
        std::fs::read_to_string(&pid_file).ok()?.trim().parse().ok()
    });
    outer.kill();
    wait_until(WAIT, "the re-entered command is stopped", || {
        !support::process_alive(pid)
    });
}

#[test]
fn siblings_nested_in_one_hold_all_re_enter_and_run_together() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let zklock = env!("CARGO_BIN_EXE_zklock");
    let hosts = env.hosts();
    // Each sibling marks itself and waits until the other has too: they
    // finish only if both run at the same time.
    let sibling = |me: &str, other: &str| {
        format!(
            "'{zklock}' -H '{hosts}' lock /e/a -- sh -c \"touch '{}'; while [ ! -e '{}' ]; do sleep 0.05; done\"",
            scratch.file(me).display(),
            scratch.file(other).display()
        )
    };
    let script = format!(
        "{} & {} & wait",
        sibling("one", "two"),
        sibling("two", "one")
    );
    env.zklock(["lock", "/e/a", "--", "sh", "-c", &script])
        .timeout(WAIT)
        .run()
        .assert_success();
    assert!(scratch.file("one").exists() && scratch.file("two").exists());
}

#[test]
fn re_entry_after_the_enclosing_hold_was_lost_does_not_re_enter() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let (ready, lost, go, code) = (
        scratch.file("ready"),
        scratch.file("lost"),
        scratch.file("go"),
        scratch.file("code"),
    );
    // The command outlives the loss of its hold for a while (it ignores
    // --kill-signal until --kill-after), and only then asks for the lock
    // again, as a nested zklock with the hold's node in ZKLOCK_HELD.
    let zklock = env!("CARGO_BIN_EXE_zklock");
    let script = format!(
        "trap 'touch {lost}' TERM; touch {ready}; \
         while [ ! -e {go} ]; do sleep 0.05; done; \
         '{zklock}' -H '{hosts}' lock /e/a -n -- true; echo $? > {code}; exec sleep 600",
        lost = lost.display(),
        ready = ready.display(),
        go = go.display(),
        code = code.display(),
        hosts = env.hosts(),
    );
    let mut outer = env
        .zklock([
            "--session-timeout",
            "40s",
            "lock",
            "--kill-after",
            "15s",
            "/e/a",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .timeout(WAIT)
        .spawn();
    wait_until(WAIT, "the command runs", || ready.exists());
    let nodes = env.zk().children("/e/a");
    assert_eq!(nodes.len(), 1);
    env.zk().delete(&format!("/e/a/{}", nodes[0]));
    wait_until(WAIT, "the command is told of the loss", || lost.exists());
    let mut other = env.zklock(["lock", "/e/a"]).spawn();
    let token = other.next_line(WAIT);
    std::fs::write(&go, "").unwrap();
    wait_until(WAIT, "the nested zklock ends", || {
        std::fs::read_to_string(&code).is_ok_and(|c| c.ends_with('\n'))
    });
    // Not re-entered: the lost hold covers nothing, and the lock is
    // another's, so `-n` gives up.
    assert_eq!(std::fs::read_to_string(&code).unwrap().trim(), "1");
    assert_eq!(
        env.zk().children("/e/a"),
        [token.rsplit('/').next().unwrap()],
        "only the other holder's node"
    );
    outer.wait(WAIT).assert_code(4);
    other.signal(libc::SIGTERM);
    other.wait(WAIT).assert_success();
}

#[test]
fn a_lease_in_a_lease_of_the_same_semaphore_runs_at_once() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let seen = scratch.file("seen");
    let zklock = env!("CARGO_BIN_EXE_zklock");
    let hosts = env.hosts();
    let script = format!("echo \"$ZKLOCK_NODE\" > '{}'; exit 3", seen.display());
    // One lease in all, held by the enclosing sem: a nested sem that queued
    // would give up (-n, exit 1) instead of running its command.
    let sem = ["sem", "--max-leases", "1", "/e/s"];
    env.zklock(sem)
        .args(["--", zklock, "-H", &hosts])
        .args(sem)
        .args(["-n", "--", "sh", "-c", &script])
        .timeout(WAIT)
        .run()
        .assert_code(3);
    let node = std::fs::read_to_string(&seen).unwrap();
    assert!(
        node.starts_with("/e/s/leases/"),
        "the enclosing lease: {node:?}"
    );
    assert!(env.zk().children_if_any("/e/s/leases").is_empty());
}

/// `lock /e/a -- sh OUTER`, where OUTER runs `wrap` with `ZKLOCK` in it
/// standing for the nested `zklock lock /e/a -- sh INNER`, and writes its
/// exit code into `code`, all in `scratch`; INNER marks `start`, and `end`
/// a second later. Returns how long the enclosing zklock ran.
fn nested_through(env: &TestEnv, scratch: &Scratch, wrap: &str) -> Duration {
    let inner = scratch.file("inner.sh");
    let (start, end) = (scratch.file("start"), scratch.file("end"));
    let marks = format!(
        "touch '{}'; sleep 1; touch '{}'\n",
        start.display(),
        end.display()
    );
    std::fs::write(&inner, marks).unwrap();
    let nested = format!(
        "'{}' -H '{}' lock /e/a -- sh '{}'",
        env!("CARGO_BIN_EXE_zklock"),
        env.hosts(),
        inner.display()
    );
    let outer = scratch.file("outer.sh");
    let code = scratch.file("code");
    let script = format!(
        "{}\necho $? > '{}'\n",
        wrap.replace("ZKLOCK", &nested),
        code.display()
    );
    std::fs::write(&outer, script).unwrap();
    let started = std::time::Instant::now();
    env.zklock(["lock", "/e/a", "--", "sh", &outer.to_string_lossy()])
        .timeout(WAIT)
        .run()
        .assert_success();
    started.elapsed()
}

/// A nested zklock that left the enclosing hold's process group (a new
/// session, a new group), or runs as another user, is proven nested by its
/// ancestry but out of the guard's reach: it exits 7 at once, its command
/// never runs (so it cannot run beside the next holder), and it does not
/// wait on its own ancestor.
#[test]
fn a_nested_zklock_outside_the_holds_group_or_user_exits_7_at_once() {
    let env = TestEnv::new();
    // SAFETY: geteuid takes no arguments and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    assert!(
        root,
        "running a nested zklock as another user (setpriv) needs root"
    );
    let nobody = support::output_of("id", &["-u", "nobody"]);
    let another_uid = format!(
        "setpriv --reuid={} --regid=65534 --clear-groups ZKLOCK",
        nobody.trim()
    );
    let wraps = [
        ("setsid", "setsid ZKLOCK"),
        ("setpgid", "perl -e 'setpgrp; exec @ARGV' -- ZKLOCK"),
        ("timeout", "timeout 60 ZKLOCK"),
        ("script", "script -qec \"ZKLOCK\" /dev/null"),
        ("another uid", &another_uid),
    ];
    for (how, wrap) in wraps {
        let scratch = Scratch::new();
        let took = nested_through(&env, &scratch, wrap);
        let code = std::fs::read_to_string(scratch.file("code")).unwrap();
        assert_eq!(code.trim(), "7", "{how}: refused");
        assert!(
            !scratch.file("start").exists(),
            "{how}: the command never ran"
        );
        assert!(
            took < Duration::from_secs(15),
            "{how}: at once, took {took:?}"
        );
        assert!(
            env.zk().children_if_any("/e/a").is_empty(),
            "{how}: no node left"
        );
    }
}

/// A nested zklock that stays in the enclosing hold's process group
/// re-enters, whatever runs it: a double fork that the enclosing command
/// does not wait for, or `timeout --foreground`. The enclosing hold lasts
/// until the re-entered command has ended (the guard waits for its whole
/// group), so the next holder, queued meanwhile, finds it finished.
#[test]
fn a_nested_zklock_in_the_holds_group_re_enters_and_ends_before_the_next_holder() {
    let env = TestEnv::new();
    let wraps = [
        ("double fork", "( ZKLOCK & ) &"),
        ("timeout --foreground", "timeout --foreground 60 ZKLOCK"),
    ];
    for (how, wrap) in wraps {
        let scratch = Scratch::new();
        let (start, end) = (scratch.file("start"), scratch.file("end"));
        let next = std::thread::scope(|threads| {
            let outer = threads.spawn(|| nested_through(&env, &scratch, wrap));
            wait_until(WAIT, &format!("{how}: the re-entered command runs"), || {
                start.exists()
            });
            let next = env
                .zklock(["lock", "/e/a", "--", "test", "-e", &end.to_string_lossy()])
                .timeout(WAIT)
                .run();
            outer.join().unwrap();
            next
        });
        next.assert_success();
        assert!(
            env.zk().children_if_any("/e/a").is_empty(),
            "{how}: no node left"
        );
    }
}
