//! `--lock-delay`: after a hold that ended uncleanly (a holder killed with
//! its guard, cut off from its server, broken, reaped, or a library's
//! holder frozen past its session), or whose end no record tells of, the
//! next holder waits before its command runs; after clean releases it does
//! not. What is measured is what zklock says it waited
//! (`ZKLOCK_LOCK_DELAYED`), its JSON and the owner record, not the wall
//! clock.

use crate::support;

use std::time::{Duration, Instant};

use support::json::ErrorReport;
use support::peers::{Library, acquired, peer};
use support::proxy::FaultProxy;
use support::{Running, TestEnv, Zklock, wait_for, wait_until};

use crate::watch::{expect, next_event};

const WAIT: Duration = Duration::from_secs(30);

/// `zklock lock LOCK EXTRA... -- <print $ZKLOCK_LOCK_DELAYED>`.
fn reporting(env: &TestEnv, lock: &str, extra: &[&str]) -> Zklock {
    reporting_as(env, "lock", lock, extra)
}

/// [`reporting`] with another verb (`rlock`, `wlock`, `sem`).
fn reporting_as(env: &TestEnv, verb: &str, lock: &str, extra: &[&str]) -> Zklock {
    env.zklock([verb, lock])
        .args(extra)
        .args(["--", "sh", "-c", "echo \"$ZKLOCK_LOCK_DELAYED\""])
}

/// The lock-delay of the tests that first settle their lock.
const DELAY: Duration = Duration::from_secs(3);

/// Sits out, with `verb` and `extra`, the delay a lock directory new to
/// zklock owes once (what ended in it before is unknown), so that the
/// holds after it owe only for their own ends.
fn settle(env: &TestEnv, verb: &str, lock: &str, extra: &[&str]) {
    env.zklock([verb, lock, "--lock-delay", "3s"])
        .args(extra)
        .args(["--", "true"])
        .run()
        .assert_success();
}

/// Runs a [`reporting`] zklock (or waits for a spawned one) and returns how
/// long it says the lock-delay held its command back, in milliseconds.
fn delay_of(running: Running) -> u64 {
    let mut running = running;
    let run = running.wait(WAIT);
    run.assert_success();
    run.stdout
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("no ZKLOCK_LOCK_DELAYED: {run:?}"))
}

/// Fails unless `waited` ms is the whole lock-delay of `delay`, counted
/// from an end seen just before the lock was ours: no less than the delay
/// less a round trip or two, and not much more.
#[track_caller]
fn assert_whole_delay(waited: u64, delay: Duration) {
    let delay = delay.as_millis() as u64;
    assert!(
        (delay - 600..=delay + 300).contains(&waited),
        "waited {waited} ms for a lock-delay of {delay} ms"
    );
}

/// Ends a hold of `dir` uncleanly, as a Curator or kazoo client's release
/// does: a contender made and deleted with no end record.
fn end_uncleanly(env: &TestEnv, dir: &str) {
    env.zk().mkdir_p(dir);
    let node = env.zk().create_ephemeral_sequential(
        &format!("{dir}/_c_0e7e4d3c-7a4b-4f0c-9d7e-0b9f2a1c5d6e-lock-"),
        b"",
    );
    env.zk().delete(&node);
}

/// Starts `zklock` and returns it once its node is the `n`th in `dir`.
fn queued(env: &TestEnv, zklock: Zklock, dir: &str, n: usize) -> Running {
    let mut running = zklock.spawn();
    wait_until(WAIT, &format!("{n} contenders in {dir}"), || {
        if let Some(run) = running.try_wait() {
            panic!("a waiter ended early: {run:?}");
        }
        env.zk().children_if_any(dir).len() == n
    });
    running
}

/// The guard zklock forked for its command.
fn guard_of(zklock: &Running) -> i32 {
    let children = format!("/proc/{0}/task/{0}/children", zklock.pid());
    wait_for(WAIT, "zklock's guard process", || {
        std::fs::read_to_string(&children)
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|pid| pid.parse::<i32>().ok())
            .find(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .is_ok_and(|comm| comm.trim() == "zklock-guard")
            })
    })
}

#[test]
fn a_clean_release_costs_the_next_holder_no_delay_and_the_owner_record_states_it() {
    let env = TestEnv::new();
    // A persistent directory made by hand: what ended in it before is
    // unknown, so the first arrival is owed the delay, once: the holders
    // after it owe nothing more once it has passed.
    env.zk().mkdir_p("/locks/c");
    let delay = ["--lock-delay", "3s"];
    assert_whole_delay(
        delay_of(reporting(&env, "c", &delay).spawn()),
        Duration::from_secs(3),
    );
    // A lock whose last hold was released, by a holder without the flag.
    env.zklock(["lock", "c", "--", "true"])
        .run()
        .assert_success();
    assert_eq!(delay_of(reporting(&env, "c", &delay).spawn()), 0);
    // A hand-off from a holder that released.
    let mut holder = env.zklock(["lock", "c"]).spawn();
    holder.next_line(WAIT);
    let waiter = queued(&env, reporting(&env, "c", &delay), "/locks/c", 2);
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
    assert_eq!(delay_of(waiter), 0);
    // -n takes a lock whose last hold was released.
    assert_eq!(
        delay_of(reporting(&env, "c", &["-n", "--lock-delay", "3s"]).spawn()),
        0
    );
    // The owner record states the delay the holder keeps, from its
    // create: here, while it still sits out the rest of 1m30s after the
    // first arrival.
    let mut holder = env.zklock(["lock", "c", "--lock-delay", "1m30s"]).spawn();
    let token = wait_for(WAIT, "the holder's node", || {
        env.zk().children_if_any("/locks/c").into_iter().next()
    });
    let (data, _) = env.zk().get(&format!("/locks/c/{token}"));
    let owner: serde_json::Value = serde_json::from_slice(&data).expect("an owner record");
    assert_eq!(owner["lock_delay_ms"], 90_000, "{owner}");
    let stat = env.zklock(["-o", "json", "stat", "c"]).run();
    stat.assert_success();
    let report: serde_json::Value = serde_json::from_str(&stat.stdout).expect("stat's JSON");
    assert_eq!(
        report["holders"][0]["owner"]["lock_delay_ms"], 90_000,
        "{report}"
    );
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_code(128 + libc::SIGTERM);
    // Without the flag, nothing is passed on but that no delay was kept.
    let plain = env
        .zklock([
            "lock",
            "c",
            "--",
            "sh",
            "-c",
            "echo \"$ZKLOCK_LOCK_DELAYED\"",
        ])
        .run();
    plain.assert_success();
    assert_eq!(plain.stdout.trim(), "0");
}

#[test]
fn a_lock_found_free_after_an_unclean_end_waits_the_whole_delay_from_arrival() {
    let env = TestEnv::new();
    // Persistent directories, which the server never deletes emptied.
    for dir in ["/locks/f", "/locks/w", "/locks/s/leases"] {
        env.zk().mkdir_p(dir);
    }
    let delay = Duration::from_secs(2);
    // A library's release writes no record.
    end_uncleanly(&env, "/locks/f");
    assert_whole_delay(
        delay_of(reporting(&env, "f", &["--lock-delay", "2s"]).spawn()),
        delay,
    );
    // A clean release since: no delay.
    assert_eq!(
        delay_of(reporting(&env, "f", &["--lock-delay", "2s"]).spawn()),
        0
    );
    // A clean record is still there, but an unclean end came after it: the
    // directory's last change of its children is no longer the record's.
    end_uncleanly(&env, "/locks/f");
    assert_whole_delay(
        delay_of(reporting(&env, "f", &["--lock-delay", "2s"]).spawn()),
        delay,
    );
    // wlock and a Curator semaphore read their directories the same way.
    end_uncleanly(&env, "/locks/w");
    let wlock = env.zklock(["wlock", "w", "--lock-delay", "2s"]).args([
        "--",
        "sh",
        "-c",
        "echo \"$ZKLOCK_LOCK_DELAYED\"",
    ]);
    assert_whole_delay(delay_of(wlock.spawn()), delay);
    let sem = || {
        env.zklock(["sem", "s", "--max-leases", "2", "--lock-delay", "2s"])
            .args(["--", "sh", "-c", "echo \"$ZKLOCK_LOCK_DELAYED\""])
    };
    // A directory with no record yet: unclean, as after the server removed
    // an emptied one; then a clean release.
    assert_whole_delay(delay_of(sem().spawn()), delay);
    assert_eq!(delay_of(sem().spawn()), 0);
    end_uncleanly(&env, "/locks/s/leases");
    assert_whole_delay(delay_of(sem().spawn()), delay);
}

#[test]
fn a_holder_killed_with_its_guard_costs_the_next_holder_the_delay() {
    let env = TestEnv::new();
    let mut holder = env
        .zklock(["--session-timeout", "2s", "lock", "k", "--", "sleep", "600"])
        .spawn();
    let guard = guard_of(&holder);
    wait_until(WAIT, "the holder's node", || {
        env.zk().children_if_any("/locks/k").len() == 1
    });
    let waiter = queued(
        &env,
        reporting(&env, "k", &["--lock-delay", "3s"]),
        "/locks/k",
        2,
    );
    // Nothing is left to stop the command: it runs on, as a paused or
    // unfenced holder would. zklock is stopped first: between the two
    // kills it would see its guard die and release the lock itself.
    holder.signal(libc::SIGSTOP);
    // SAFETY: kill(2) on a pid this test found as zklock's child.
    unsafe { libc::kill(guard, libc::SIGKILL) };
    holder.kill();
    let waited = delay_of(waiter);
    // SAFETY: the command's process group, led by the dead guard.
    unsafe { libc::kill(-guard, libc::SIGKILL) };
    assert_whole_delay(waited, Duration::from_secs(3));
}

#[test]
fn a_holder_cut_off_from_its_server_costs_the_next_holder_the_delay_after_its_expiry() {
    let env = TestEnv::new();
    let proxy = FaultProxy::start(&support::shared_server().address());
    let mut holder = env
        .zklock(["--session-timeout", "3s", "lock", "p"])
        .hosts(proxy.hosts(&env))
        .args(["--kill-after", "1s", "--", "sleep", "600"])
        .spawn();
    wait_until(WAIT, "the holder's node", || {
        env.zk().children_if_any("/locks/p").len() == 1
    });
    let waiter = queued(
        &env,
        reporting(&env, "p", &["--lock-delay", "2s"]),
        "/locks/p",
        2,
    );
    proxy.freeze();
    holder.wait(WAIT).assert_code(4);
    assert_whole_delay(delay_of(waiter), Duration::from_secs(2));
    proxy.pass();
}

#[test]
fn a_break_costs_the_next_holder_the_delay_and_a_loss_while_delaying_is_a_loss() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/b");
    let mut victim = env.zklock(["lock", "b"]).spawn();
    victim.next_line(WAIT);
    let waiter = queued(
        &env,
        reporting(&env, "b", &["--lock-delay", "2s"]),
        "/locks/b",
        2,
    );
    env.zklock(["release", "--holders", "b", "--yes"])
        .run()
        .assert_success();
    victim.wait(WAIT).assert_code(4);
    assert_whole_delay(delay_of(waiter), Duration::from_secs(2));
    // Broken while it delays: the lock is lost, the command never runs.
    end_uncleanly(&env, "/locks/b");
    let scratch = support::Scratch::new();
    let marker = scratch.file("ran");
    let mut delaying = env
        .zklock(["lock", "b", "--lock-delay", "1m", "--", "touch"])
        .arg(marker.display().to_string())
        .spawn();
    wait_until(WAIT, "the delaying holder's node", || {
        env.zk().children_if_any("/locks/b").len() == 1
    });
    env.zklock(["release", "--holders", "b", "--yes"])
        .run()
        .assert_success();
    let run = delaying.wait(WAIT);
    run.assert_code(4).assert_stderr_contains("lost");
    assert!(run.elapsed < Duration::from_secs(20), "{run:?}");
    assert!(!marker.exists(), "the command ran");
}

#[test]
fn a_kazoo_holder_frozen_past_its_session_costs_the_next_holder_the_delay() {
    let env = TestEnv::new();
    let mut frozen = peer(&env, Library::Kazoo, "/locks/z", "mutex", &[]);
    acquired(&mut frozen, WAIT);
    let waiter = queued(
        &env,
        reporting(&env, "z", &["--dialect", "kazoo", "--lock-delay", "2s"]),
        "/locks/z",
        2,
    );
    frozen.signal(libc::SIGSTOP);
    let waited = delay_of(waiter);
    frozen.signal(libc::SIGCONT);
    frozen.kill();
    assert_whole_delay(waited, Duration::from_secs(2));
}

#[test]
fn the_delay_counts_within_the_wait_and_no_wait_gives_up_on_it() {
    let env = TestEnv::new();
    end_uncleanly(&env, "/locks/n");
    let no_wait = env
        .zklock([
            "-o",
            "json",
            "lock",
            "n",
            "-n",
            "-E",
            "75",
            "--lock-delay",
            "5s",
        ])
        .args(["--", "true"])
        .run();
    let error = ErrorReport::of(&no_wait, 75);
    assert_eq!(error.cause, "lock_delay", "{error:?}");
    assert!(env.zk().children_if_any("/locks/n").is_empty());
    // A delay that would outlast -w gives up at once.
    let short = env
        .zklock(["-o", "json", "lock", "n", "-w", "3s", "--lock-delay", "10s"])
        .args(["--", "true"])
        .run();
    assert_eq!(ErrorReport::of(&short, 1).cause, "lock_delay");
    assert!(short.elapsed < Duration::from_secs(3), "{short:?}");
    // Giving up wrote no clean end: the next holder still waits, within -w.
    assert_whole_delay(
        delay_of(reporting(&env, "n", &["-w", "10s", "--lock-delay", "2s"]).spawn()),
        Duration::from_secs(2),
    );
}

#[test]
fn several_locks_wait_for_the_one_that_ended_uncleanly() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/a");
    env.zklock(["lock", "a", "--", "true"])
        .run()
        .assert_success();
    end_uncleanly(&env, "/locks/b");
    let both = env.zklock(["lock", "a", "b", "--lock-delay", "2s"]).args([
        "--",
        "sh",
        "-c",
        "echo \"$ZKLOCK_LOCK_DELAYED\"",
    ]);
    assert_whole_delay(delay_of(both.spawn()), Duration::from_secs(2));
}

#[test]
fn watch_shows_a_holder_keeping_its_delay_after_an_unclean_end_only() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/v");
    let mut watching = env.zklock(["-o", "json", "watch", "v"]).spawn();
    while next_event(&mut watching).event != "watching" {}
    // A library's hold and release: unclean.
    let library = env.zk().create_ephemeral_sequential(
        "/locks/v/_c_0e7e4d3c-7a4b-4f0c-9d7e-0b9f2a1c5d6e-lock-",
        b"",
    );
    expect(&mut watching, "acquired", &library);
    env.zk().delete(&library);
    let released = expect(&mut watching, "released", &library);
    assert_ne!(released.how.as_deref(), Some("released"), "{released:#?}");
    let delayed = reporting(&env, "v", &["--lock-delay", "1s"]).spawn();
    let acquired = next_event(&mut watching);
    assert_eq!(acquired.event, "acquired", "{acquired:#?}");
    let node = acquired.node.clone().expect("the holder's node");
    let marked = expect(&mut watching, "lock_delay", &node);
    assert_eq!(marked.lock_delay_ms, Some(1000), "{marked:#?}");
    assert_whole_delay(delay_of(delayed), Duration::from_secs(1));
    let released = expect(&mut watching, "released", &node);
    assert_eq!(released.how.as_deref(), Some("released"), "{released:#?}");
    // After that clean release, the next holder keeps no delay: acquired,
    // then its own release, and nothing between.
    let mut holder = env.zklock(["lock", "v", "--lock-delay", "1s"]).spawn();
    let token = holder.next_line(WAIT);
    expect(&mut watching, "acquired", &token);
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
    expect(&mut watching, "released", &token);
}

#[test]
fn a_directory_once_per_makes_or_makes_again_owes_the_whole_delay_and_its_clean_release_none() {
    let env = TestEnv::new();
    let delay = Duration::from_secs(3);
    // Missing (the server may have removed an emptied container and its
    // record), and made by hand, empty, on a Curator holder's unclean end:
    // neither tells how the last hold ended, and the directory --once-per
    // makes of either must not say "clean" for them.
    end_uncleanly(&env, "/locks/by-hand");
    for lock in ["missing", "by-hand"] {
        let once = ["-w", "30s", "--lock-delay", "3s", "--once-per", "1h"];
        assert_whole_delay(delay_of(reporting(&env, lock, &once).spawn()), delay);
        // Its own release is clean: the next holder keeps no delay.
        assert_eq!(
            delay_of(reporting(&env, lock, &["-n", "--lock-delay", "3s"]).spawn()),
            0
        );
    }
}

#[test]
fn behind_a_reader_killed_and_one_released_cleanly_a_writer_waits_the_whole_delay() {
    let env = TestEnv::new();
    let dir = "/locks/rw";
    let kazoo = ["--dialect", "kazoo"];
    settle(&env, "wlock", "rw", &kazoo);
    let delayed = ["--dialect", "kazoo", "--lock-delay", "3s"];
    // A kazoo ReadLock killed with kill -9 and a zklock reader beside it
    // that releases cleanly after the kazoo session expired: the writer
    // queued behind both waits the whole delay.
    let readers = || {
        let mut killed = peer(&env, Library::Kazoo, dir, "read", &[]);
        acquired(&mut killed, WAIT);
        let mut clean = env.zklock(["rlock", "rw"]).args(kazoo).spawn();
        clean.next_line(WAIT);
        (killed, clean)
    };
    let end_both = |(mut killed, mut clean): (Running, Running), left: usize| {
        killed.kill();
        wait_until(WAIT, "the killed reader's session expired", || {
            env.zk().children_if_any(dir).len() == left
        });
        clean.signal(libc::SIGTERM);
        clean.wait(WAIT).assert_success();
    };
    let both = readers();
    let writer = queued(&env, reporting_as(&env, "wlock", "rw", &delayed), dir, 3);
    end_both(both, 2);
    assert_whole_delay(delay_of(writer), DELAY);
    // And a writer arriving at the lock, free, just after the same ends.
    end_both(readers(), 1);
    let writer = reporting_as(&env, "wlock", "rw", &delayed);
    assert_whole_delay(delay_of(writer.spawn()), DELAY);
}

#[test]
fn behind_readers_that_all_released_cleanly_a_writer_runs_at_once() {
    let env = TestEnv::new();
    let dir = "/locks/readers";
    settle(&env, "wlock", "readers", &[]);
    let mut readers: Vec<Running> = (0..3)
        .map(|_| {
            let mut reader = env.zklock(["rlock", "readers"]).spawn();
            reader.next_line(WAIT);
            reader
        })
        .collect();
    let delayed = ["--lock-delay", "3s"];
    let writer = queued(
        &env,
        reporting_as(&env, "wlock", "readers", &delayed),
        dir,
        4,
    );
    // All at once: their records are written over each other's at the
    // version each read, again when another came in between.
    for reader in &readers {
        reader.signal(libc::SIGTERM);
    }
    for reader in &mut readers {
        reader.wait(WAIT).assert_success();
    }
    assert_eq!(delay_of(writer), 0);
    let arriving = reporting_as(&env, "wlock", "readers", &delayed);
    assert_eq!(delay_of(arriving.spawn()), 0);
}

#[test]
fn a_taker_of_several_locks_that_gives_one_up_carries_its_unclean_end_on() {
    let env = TestEnv::new();
    settle(&env, "lock", "a", &[]);
    end_uncleanly(&env, "/locks/a");
    let mut holder = env.zklock(["lock", "b"]).spawn();
    holder.next_line(WAIT);
    // It takes a, then finds b taken: it lets a go with a give-up, which is
    // clean, but the end before it on a is not.
    env.zklock(["lock", "-n", "a", "b", "--", "true"])
        .run()
        .assert_code(1);
    assert_whole_delay(
        delay_of(reporting(&env, "a", &["--lock-delay", "3s"]).spawn()),
        DELAY,
    );
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
}

#[test]
fn a_lock_found_free_after_a_break_or_a_reap_waits_the_whole_delay() {
    let env = TestEnv::new();
    let dir = "/locks/x";
    settle(&env, "lock", "x", &[]);
    let ended = |how: &[&str]| {
        let mut victim = env.zklock(["lock", "x", "--", "sleep", "60"]).spawn();
        wait_until(WAIT, "the victim's node", || {
            env.zk().children_if_any(dir).len() == 1
        });
        env.zklock(how).run().assert_success();
        victim.wait(WAIT).assert_code(4);
        // No waiter was queued: the next one finds the lock free.
        assert_whole_delay(
            delay_of(reporting(&env, "x", &["--lock-delay", "3s"]).spawn()),
            DELAY,
        );
    };
    ended(&["release", "--holders", "x", "--yes"]);
    ended(&["reap", "--all", "--yes"]);
    // One reader broken, the other released cleanly after it: the clean
    // record carries the break on.
    let mut broken = env
        .zklock(["rlock", "x", "--", "sh", "-c"])
        .arg("echo \"$ZKLOCK_NODE\"; exec sleep 60")
        .spawn();
    let token = broken.next_line(WAIT);
    let mut clean = env.zklock(["rlock", "x"]).spawn();
    clean.next_line(WAIT);
    env.zklock(["release", &token]).run().assert_success();
    broken.wait(WAIT).assert_code(4);
    clean.signal(libc::SIGTERM);
    clean.wait(WAIT).assert_success();
    let writer = reporting_as(&env, "wlock", "x", &["--lock-delay", "3s"]);
    assert_whole_delay(delay_of(writer.spawn()), DELAY);
}

#[test]
fn a_lease_taken_after_a_broken_lease_waits_the_whole_delay() {
    let env = TestEnv::new();
    let leases = "/locks/s/leases";
    let sem = ["--max-leases", "2"];
    settle(&env, "sem", "s", &sem);
    let mut victim = env
        .zklock(["sem", "s", "--max-leases", "2", "--", "sleep", "60"])
        .spawn();
    wait_until(WAIT, "the victim's lease", || {
        env.zk().children_if_any(leases).len() == 1
    });
    env.zklock(["release", "--holders", "s", "--yes"])
        .run()
        .assert_success();
    victim.wait(WAIT).assert_code(4);
    // A lease is free at once: the one broken before it is owed.
    let delayed = ["--max-leases", "2", "--lock-delay", "3s"];
    assert_whole_delay(
        delay_of(reporting_as(&env, "sem", "s", &delayed).spawn()),
        DELAY,
    );
}

#[test]
fn a_directory_the_server_removed_is_owed_the_delay_once_and_a_no_wait_fleet_runs_after_it() {
    let env = TestEnv::new();
    // A Curator holder killed in each of two locks: its session expires,
    // and the server removes the emptied container directory Curator made,
    // and whatever it held with it.
    for lock in ["/locks/cu", "/locks/cv"] {
        let mut curator = peer(&env, Library::Curator, lock, "mutex", &[]);
        acquired(&mut curator, WAIT);
        curator.kill();
    }
    wait_until(WAIT, "the server removed both directories", || {
        env.zk().exists("/locks/cu").is_none() && env.zk().exists("/locks/cv").is_none()
    });
    // The next arrival waits the whole delay.
    assert_whole_delay(
        delay_of(reporting(&env, "cv", &["--lock-delay", "3s"]).spawn()),
        DELAY,
    );
    // A fleet of -n tries, one after the other: each before the delay is
    // over gives up, saying the end it follows is unknown and what is left
    // of it, which each try carries on to the next; once it is over, one
    // runs.
    let first = Instant::now();
    let mut left = u64::MAX;
    let ran = loop {
        let tried = Instant::now();
        let run = env
            .zklock(["-o", "json", "lock", "-n", "--lock-delay", "3s", "cu"])
            .args(["--", "true"])
            .run();
        if run.code == Some(0) {
            break tried;
        }
        let error = ErrorReport::of(&run, 1);
        assert_eq!(error.cause, "lock_delay", "{error:?}");
        assert_eq!(error.last_end.as_deref(), Some("unknown"), "{error:?}");
        let now_left = error.left_ms.expect("left_ms");
        assert!(now_left < left, "owed anew: {now_left} ms after {left} ms");
        left = now_left;
        assert!(first.elapsed() < WAIT, "the fleet never ran");
    };
    let after = ran.duration_since(first);
    assert!(
        after >= DELAY - Duration::from_millis(600) && after <= DELAY + Duration::from_secs(2),
        "a try ran {after:?} after the first"
    );
    // Made persistent, the directory keeps what it learnt.
    assert!(env.zk().exists("/locks/cu").is_some());
}
