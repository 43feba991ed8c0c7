//! zklock and the real Curator and kazoo (Debian's packages) on the same lock
//! path: each pair excludes the other, readers share with readers.

use crate::support;

use std::time::{Duration, Instant};

use support::peers::{self, Library, acquired, peer, times_out};
use support::watches::watches;
use support::{Running, TestEnv};

const WAIT: Duration = Duration::from_secs(30);
/// How long a peer tries before it reports TIMEOUT (the lock is held by the
/// other side, so it must).
const KEPT_OUT: &str = "800";

/// A zklock holder of `lock`, once it holds, and its token.
fn zklock_holds(env: &TestEnv, verb: &str, lock: &str, dialect: &str) -> (Running, String) {
    let mut holder = env.zklock([verb, "--dialect", dialect, lock]).spawn();
    let token = holder.next_line(WAIT);
    (holder, token)
}

fn zklock_releases(mut holder: Running) {
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
}

fn zklock_tries(env: &TestEnv, verb: &str, lock: &str) -> i32 {
    let run = env.zklock([verb, "-n", lock, "--", "true"]).run();
    run.code
        .unwrap_or_else(|| panic!("zklock was killed: {}", run.stderr))
}

/// A library's holder keeps zklock out until it lets go.
fn library_holder_excludes_zklock(library: Library, mode: &str, verb: &str) {
    let env = TestEnv::new();
    let mut holder = peer(&env, library, "/locks/x", mode, &[]);
    acquired(&mut holder, WAIT);
    assert_eq!(
        zklock_tries(&env, verb, "x"),
        1,
        "{library:?} {mode} holder must keep out zklock {verb}"
    );
    peers::release(holder);
    assert_eq!(zklock_tries(&env, verb, "x"), 0);
}

/// A zklock holder keeps a library's contender out, and the contender gets
/// the lock once zklock lets go: handed off to the node that waited, which
/// the server shows watching zklock's before zklock lets go.
fn zklock_holder_excludes_library(library: Library, verb: &str, dialect: &str, mode: &str) {
    let env = TestEnv::new();
    let (holder, token) = zklock_holds(&env, verb, "x", dialect);
    let mut kept_out = peer(&env, library, "/locks/x", mode, &["--timeout-ms", KEPT_OUT]);
    times_out(&mut kept_out, WAIT);
    let mut waiter = peer(&env, library, "/locks/x", mode, &[]);
    let watched = format!("{}{token}", env.chroot());
    let waiting = support::wait_for(WAIT, "the library's waiter watches zklock's node", || {
        env.zk()
            .children_if_any("/locks/x")
            .into_iter()
            .find(|child| {
                let path = format!("/locks/x/{child}");
                path != token
                    && env.zk().exists(&path).is_some_and(|stat| {
                        watches(support::shared_server(), stat.ephemeral_owner, &watched)
                    })
            })
    });
    assert!(
        waiter.stdout().trim_end() == "READY",
        "{library:?} got in while zklock held"
    );
    let released = Instant::now();
    zklock_releases(holder);
    let node = acquired(&mut waiter, WAIT);
    // Handed off by zklock's delete, not by the server expiring its 10 s
    // session.
    assert!(
        released.elapsed() < Duration::from_secs(5),
        "{library:?} got the lock {:?} after zklock let go",
        released.elapsed()
    );
    assert_eq!(
        node.rsplit('/').next(),
        Some(waiting.as_str()),
        "{library:?}: the lock went to the node that waited"
    );
    assert!(env.zk().exists(&token).is_none(), "zklock's node is gone");
    peers::release(waiter);
}

#[test]
fn curator_mutex_and_zklock_lock_exclude_each_other() {
    library_holder_excludes_zklock(Library::Curator, "mutex", "lock");
    zklock_holder_excludes_library(Library::Curator, "lock", "curator", "mutex");
}

#[test]
fn kazoo_lock_and_zklock_lock_exclude_each_other() {
    library_holder_excludes_zklock(Library::Kazoo, "mutex", "lock");
    zklock_holder_excludes_library(Library::Kazoo, "lock", "kazoo", "mutex");
}

#[test]
fn curator_write_lock_and_zklock_exclude_each_other() {
    library_holder_excludes_zklock(Library::Curator, "write", "rlock");
    library_holder_excludes_zklock(Library::Curator, "write", "wlock");
    zklock_holder_excludes_library(Library::Curator, "wlock", "curator", "read");
    zklock_holder_excludes_library(Library::Curator, "wlock", "curator", "write");
    zklock_holder_excludes_library(Library::Curator, "rlock", "curator", "write");
}

#[test]
fn kazoo_write_lock_and_zklock_exclude_each_other() {
    library_holder_excludes_zklock(Library::Kazoo, "write", "rlock");
    library_holder_excludes_zklock(Library::Kazoo, "write", "wlock");
    zklock_holder_excludes_library(Library::Kazoo, "wlock", "kazoo", "read");
    zklock_holder_excludes_library(Library::Kazoo, "wlock", "kazoo", "write");
    zklock_holder_excludes_library(Library::Kazoo, "rlock", "kazoo", "write");
}

#[test]
fn readers_share_across_libraries() {
    for (library, dialect) in [(Library::Curator, "curator"), (Library::Kazoo, "kazoo")] {
        let env = TestEnv::new();
        let mut reader = peer(&env, library, "/locks/r", "read", &[]);
        acquired(&mut reader, WAIT);
        assert_eq!(
            zklock_tries(&env, "rlock", "r"),
            0,
            "zklock reader shares with {library:?}"
        );
        assert_eq!(
            zklock_tries(&env, "wlock", "r"),
            1,
            "zklock writer waits for {library:?} reader"
        );
        let (holder, _) = zklock_holds(&env, "rlock", "r", dialect);
        let mut second = peer(&env, library, "/locks/r", "read", &[]);
        acquired(&mut second, WAIT);
        peers::release(second);
        peers::release(reader);
        zklock_releases(holder);
    }
}

/// A library's holder, a waiter of that library and a zklock waiter behind
/// it that both give up, the one further ahead first, and a zklock waiter
/// behind them all: once its own predecessor has gone it waits for the
/// library's holder, and runs once that lets go.
fn zklock_waits_past_gone_waiters_for_a_library_holder(library: Library, dialect: &str) {
    let env = TestEnv::new();
    let dir = "/locks/x";
    let queued = |count: usize| {
        support::wait_until(WAIT, &format!("{count} contenders in {dir}"), || {
            env.zk().children_if_any(dir).len() == count
        })
    };
    let mut holder = peer(&env, library, dir, "mutex", &[]);
    let holder_node = acquired(&mut holder, WAIT);
    let library_quitter = peer(&env, library, dir, "mutex", &[]);
    queued(2);
    let zklock_quitter = env.zklock(["lock", "--dialect", dialect, "x"]).spawn();
    queued(3);
    let mut last = env
        .zklock(["lock", "-v", "--dialect", dialect, "x", "--", "echo", "ran"])
        .json_log()
        .spawn();
    queued(4);
    support::wait_until(WAIT, "the last waiter watches its predecessor", || {
        !last.log_events("waiting").is_empty()
    });
    for mut quitter in [library_quitter, zklock_quitter] {
        quitter.signal(libc::SIGTERM);
        quitter.wait(WAIT);
    }
    support::wait_until(WAIT, "the last waiter watches the next node ahead", || {
        last.log_events("waiting").len() >= 2
    });
    let events = last.log_events("waiting");
    let watched = events[1]["node"].as_str().expect("the node waited on");
    assert_eq!(
        watched.rsplit('/').next(),
        holder_node.rsplit('/').next(),
        "{library:?}: {events:#?}"
    );
    assert!(
        last.is_running() && last.stdout().is_empty(),
        "{library:?} held while zklock ran"
    );
    peers::release(holder);
    last.wait(WAIT)
        .assert_success()
        .assert_stdout_contains("ran");
}

#[test]
fn zklock_waits_past_gone_waiters_for_a_curator_holder() {
    zklock_waits_past_gone_waiters_for_a_library_holder(Library::Curator, "curator");
}

#[test]
fn zklock_waits_past_gone_waiters_for_a_kazoo_holder() {
    zklock_waits_past_gone_waiters_for_a_library_holder(Library::Kazoo, "kazoo");
}
