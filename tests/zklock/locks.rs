//! lock, rlock and wlock against a real ZooKeeper: mutual exclusion, fencing,
//! read/write rules, no herd, nothing left behind, exit codes, lock loss.

use crate::support;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use support::fencing::{self, Stage, grant_order, touch, wait_for_file};
use support::proxy::{ClientMessage, FaultProxy, op};
use support::watches::watches_by_session;
use support::{Running, Scratch, TestEnv, Zklock, dead_port, wait_until};

const WAIT: Duration = Duration::from_secs(20);

/// Starts `zklock <verb> <lock> [extra...]` holding until a signal, and
/// returns it once it printed its token.
fn hold(env: &TestEnv, verb: &str, lock: &str, extra: &[&str]) -> (Running, String) {
    let mut args = vec![verb, lock];
    args.extend_from_slice(extra);
    let mut holder = env.zklock(args).spawn();
    let token = holder.next_line(WAIT);
    (holder, token)
}

/// Starts a contender that must wait, and returns once its node is in the
/// queue (the directory has `queued` children).
fn queue_behind(env: &TestEnv, verb: &str, lock: &str, queued: usize, extra: &[&str]) -> Running {
    let mut args = vec![verb, lock];
    args.extend_from_slice(extra);
    let waiter = env.zklock(args).json_log().spawn();
    let dir = format!("/locks/{lock}");
    wait_until(WAIT, &format!("{queued} contenders in {dir}"), || {
        env.zk().children_if_any(&dir).len() == queued
    });
    waiter
}

fn release(mut holder: Running) {
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
}

#[test]
fn concurrent_commands_never_overlap_and_fences_grow_in_grant_order() {
    let env = TestEnv::new();
    let dir = Scratch::new();
    let log = dir.file("log");
    let section = format!(
        "echo start $ZKLOCK_FENCE >> {log}; sleep 0.02; echo end $ZKLOCK_FENCE >> {log}",
        log = log.display()
    );
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let command = env.zklock(["lock", "mutex", "--", "sh", "-c", &section]);
            std::thread::spawn(move || {
                for _ in 0..5 {
                    command.run().assert_success();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("worker thread");
    }
    let text = std::fs::read_to_string(&log).expect("read log");
    let lines: Vec<(&str, i64)> = text
        .lines()
        .map(|l| {
            let (what, fence) = l.split_once(' ').expect("log line");
            (what, fence.parse().expect("fence"))
        })
        .collect();
    assert_eq!(lines.len(), 40, "{text}");
    let mut last_fence = i64::MIN;
    for pair in lines.chunks(2) {
        assert_eq!(pair[0].0, "start", "overlap in:\n{text}");
        assert_eq!(pair[1], ("end", pair[0].1), "overlap in:\n{text}");
        assert!(pair[0].1 > last_fence, "fence did not grow:\n{text}");
        last_fence = pair[0].1;
    }
    assert!(env.zk().children_if_any("/locks/mutex").is_empty());
}

#[test]
fn the_command_gets_the_lock_environment_and_its_exit_code_passes_through() {
    let env = TestEnv::new();
    let run = env
        .zklock([
            "lock",
            "envy",
            "--",
            "sh",
            "-c",
            "echo $ZKLOCK_LOCK; echo $ZKLOCK_NODE; echo $ZKLOCK_FENCE; echo $ZKLOCK_SESSION; exit 7",
        ])
        .run();
    run.assert_code(7);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "/locks/envy");
    assert!(
        lines[1].starts_with("/locks/envy/_c_") && lines[1].contains("-lock-"),
        "{}",
        lines[1]
    );
    assert!(lines[2].parse::<i64>().expect("fence") > 0);
    assert!(lines[3].starts_with("0x"), "{}", lines[3]);

    let killed = env
        .zklock(["lock", "envy", "--", "sh", "-c", "kill -TERM $$"])
        .run();
    killed.assert_code(128 + libc::SIGTERM);
}

#[test]
fn the_fence_is_the_czxid_of_the_holders_node_and_grows() {
    let env = TestEnv::new();
    let report = "echo $ZKLOCK_NODE $ZKLOCK_FENCE $ZKLOCK_SESSION; exec sleep 1000";
    let mut fences = Vec::new();
    for _ in 0..2 {
        let mut holder = env
            .zklock(["lock", "fenced", "--", "sh", "-c", report])
            .spawn();
        let line = holder.next_line(WAIT);
        let fields: Vec<&str> = line.split(' ').collect();
        let (_, stat) = env.zk().get(fields[0]);
        assert_eq!(
            fields[1].parse::<i64>().expect("fence"),
            stat.czxid,
            "{line}"
        );
        assert_eq!(fields[2], format!("0x{:x}", stat.ephemeral_owner), "{line}");
        fences.push(stat.czxid);
        holder.signal(libc::SIGTERM);
        holder.wait(WAIT).assert_code(128 + libc::SIGTERM);
    }
    assert!(fences[1] > fences[0], "{fences:?}");
}

#[test]
fn shell_runs_the_command_line_through_sh() {
    let env = TestEnv::new();
    env.zklock([
        "lock", "--shell", "sh", "--", "echo", "a", "&&", "exit", "5",
    ])
    .run()
    .assert_code(5)
    .assert_stdout_contains("a");
    // Without --shell, no shell interprets the words.
    env.zklock(["lock", "nosh", "--", "echo", "a", "&&", "exit", "5"])
        .run()
        .assert_success()
        .assert_stdout_contains("a && exit 5");
}

#[test]
fn conflicts_exit_1_or_the_chosen_code_and_leave_no_node() {
    let env = TestEnv::new();
    let (holder, token) = hold(&env, "lock", "busy", &[]);
    env.zklock(["lock", "-n", "busy", "--", "true"])
        .run()
        .assert_code(1);
    env.zklock(["lock", "-n", "-E", "42", "busy", "--", "true"])
        .run()
        .assert_code(42);
    let timed_out = env
        .zklock(["lock", "-w", "300ms", "busy", "--", "true"])
        .run();
    timed_out.assert_code(1).assert_stderr_contains("timed out");
    assert!(
        !timed_out.stderr.contains('\r'),
        "no spinner on a non-terminal: {:?}",
        timed_out.stderr
    );
    let children = env.zk().children_if_any("/locks/busy");
    assert_eq!(
        children.len(),
        1,
        "only the holder's node is left: {children:?}"
    );
    assert!(token.ends_with(&children[0]));
    release(holder);
    assert!(env.zk().children_if_any("/locks/busy").is_empty());
}

#[test]
fn a_signal_while_waiting_removes_our_node_and_exits_promptly() {
    let env = TestEnv::new();
    let (holder, _) = hold(&env, "lock", "sig", &[]);
    for signal in [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM] {
        let mut waiter = queue_behind(&env, "lock", "sig", 2, &[]);
        waiter.signal(signal);
        // Promptly, loaded or not: the holder keeps the lock for good.
        let run = waiter.wait(WAIT);
        // An interrupt (Ctrl-C, the quit key) is passed on to whoever
        // started zklock: it dies of it, as a shell loop needs.
        if signal == libc::SIGTERM {
            run.assert_code(128 + signal);
        } else {
            run.assert_died_of(signal);
        }
        assert_eq!(env.zk().children_if_any("/locks/sig").len(), 1);
    }
    release(holder);
}

#[test]
fn readers_share_and_writers_exclude_in_queue_order() {
    let stage = Stage::on_shared_server("rw");
    let hosts = stage.hosts();
    let fenced = |verb: &str, who: &str, body: &str| {
        Zklock::new([verb, "rw", "--"])
            .hosts(&hosts)
            .args(stage.log().command(who, body))
    };
    let r1_done = stage.file("r1-done");
    let (mut r1, _) = fencing::holder(fenced("rlock", "r1", &wait_for_file(&r1_done)));
    // r2 stays in its section a second after r1 let go: the window in which
    // a writer woken by r1's release would begin beside it.
    let r2_body = format!("{}; sleep 1", wait_for_file(&r1_done));
    let (mut r2, _) = fencing::holder(fenced("rlock", "r2", &r2_body));
    let mut w3 = stage.queued(3, fenced("wlock", "w3", "sleep 0.3"));
    // A reader that comes after a waiting writer waits for it: no starvation.
    let mut r4 = stage.queued(4, fenced("rlock", "r4", "true"));
    touch(&r1_done);
    for contender in [&mut r1, &mut r2, &mut w3, &mut r4] {
        contender.wait(WAIT).assert_success();
    }
    let sections = stage.log().assert_shared_only_among(&["r1", "r2", "r4"]);
    assert_eq!(
        grant_order(&sections),
        ["r1", "r2", "w3", "r4"],
        "{}",
        stage.log()
    );
    assert!(
        sections[0].end.line > sections[1].start.line,
        "the readers shared\n{}",
        stage.log()
    );
    stage.assert_no_dead_nodes();
}

#[test]
fn a_writer_excludes_readers_and_writers() {
    let env = TestEnv::new();
    let (w1, _) = hold(&env, "wlock", "wx", &[]);
    env.zklock(["rlock", "-n", "wx", "--", "true"])
        .run()
        .assert_code(1);
    env.zklock(["wlock", "-n", "wx", "--", "true"])
        .run()
        .assert_code(1);
    env.zklock(["lock", "-n", "wx", "--", "true"])
        .run()
        .assert_code(1);
    release(w1);
    env.zklock(["rlock", "-n", "wx", "--", "true"])
        .run()
        .assert_success();
}

/// The lock directory's contenders in queue order, as full server paths
/// with the session that owns each.
fn queue_with_sessions(env: &TestEnv, dir: &str) -> Vec<(String, i64)> {
    let mut children = env.zk().children_if_any(dir);
    children.sort_by_key(|c| c[c.len().saturating_sub(10)..].to_owned());
    children
        .into_iter()
        .filter_map(|child| {
            let path = format!("{dir}/{child}");
            let owner = env.zk().exists(&path)?.ephemeral_owner;
            Some((format!("{}{path}", env.chroot()), owner))
        })
        .collect()
}

/// Fails unless, in the server's view, every waiter in `dir` watches the
/// contender just ahead of it and no other contender, and no session
/// watches the directory itself; waits for the waiters to set their
/// watches.
fn assert_each_waiter_watches_only_its_predecessor(env: &TestEnv, dir: &str, waiters: usize) {
    let full_dir = format!("{}{dir}", env.chroot());
    let mut seen = String::new();
    wait_until(WAIT, "each waiter watches its predecessor", || {
        let queue = queue_with_sessions(env, dir);
        let watches = watches_by_session(support::shared_server());
        seen = format!("queue {queue:?}\nwatches {watches:?}");
        queue.len() == waiters + 1
            && queue.windows(2).all(|pair| {
                let (ahead, (own, session)) = (&pair[0].0, &pair[1]);
                let on_contenders: BTreeSet<&String> = watches
                    .get(session)
                    .into_iter()
                    .flatten()
                    .filter(|path| path.starts_with(&full_dir) && *path != own)
                    .collect();
                on_contenders == BTreeSet::from([ahead])
            })
    });
    let on_the_directory = support::shared_server().four_letter("wchp");
    assert!(
        !on_the_directory
            .lines()
            .any(|line| line.trim_end() == full_dir),
        "a session watches the lock directory: a release would wake every waiter\n{seen}\n{on_the_directory}"
    );
}

#[test]
fn one_release_wakes_exactly_one_waiter() {
    let env = TestEnv::new();
    let dir = "/locks/herd";
    let (holder, _) = hold(&env, "lock", "herd", &[]);
    let mut waiters: Vec<Running> = (0..5)
        .map(|i| queue_behind(&env, "lock", "herd", i + 2, &[]))
        .collect();
    assert_each_waiter_watches_only_its_predecessor(&env, dir, 5);
    release(holder);
    let mut first = waiters.remove(0);
    first.next_line(WAIT);
    assert_each_waiter_watches_only_its_predecessor(&env, dir, 4);
    for waiter in &waiters {
        assert!(waiter.stdout().is_empty(), "only the next in line holds");
    }
    release(first);
    for waiter in waiters.iter_mut() {
        waiter.signal(libc::SIGTERM);
    }
}

/// Runs `zklock lock LOCK OPTIONS... -- sh -c 'sleep 1000 & ...; wait'` and
/// returns it, once it holds, with its node and the pid of the command's own
/// child (the sleep), which must die with the command's process group.
fn sleeping_holder(env: &TestEnv, lock: &str, options: &[&str]) -> (Running, String, i32) {
    let mut args = vec!["lock", lock];
    args.extend_from_slice(options);
    args.extend(["--", "sh", "-c", "sleep 1000 & echo $! $ZKLOCK_NODE; wait"]);
    let mut holder = env.zklock(args).spawn();
    let line = holder.next_line(WAIT);
    let (pid, node) = line.split_once(' ').expect("pid and node");
    let pid = pid.parse().expect("pid");
    (holder, node.to_owned(), pid)
}

#[test]
fn a_deleted_node_is_a_lost_lock_and_the_command_is_stopped() {
    let env = TestEnv::new();
    let (mut holder, node, pid) = sleeping_holder(&env, "lost", &[]);
    env.zk().delete(&node);
    let run = holder.wait(WAIT);
    run.assert_code(4).assert_stderr_contains("lost");
    assert!(!support::process_alive(pid), "the command was stopped");
}

#[test]
fn revocation_is_a_lost_lock() {
    let env = TestEnv::new();
    let (mut holder, token) = hold(&env, "lock", "revoked", &[]);
    env.zk().set(&token, b"__REVOKE__");
    holder
        .wait(WAIT)
        .assert_code(4)
        .assert_stderr_contains("revoked");
    assert!(env.zk().children_if_any("/locks/revoked").is_empty());
}

#[test]
fn a_sigkilled_zklock_takes_its_command_along_and_the_lock_frees_with_the_session() {
    let env = TestEnv::new();
    let (mut holder, _, pid) = sleeping_holder(
        &env,
        "killed",
        &["--session-timeout", "1s", "--kill-after", "200ms"],
    );
    holder.kill();
    wait_until(WAIT, "the command died with zklock", || {
        !support::process_alive(pid)
    });
    env.zklock(["lock", "-w", "20s", "killed", "--", "true"])
        .run()
        .assert_success();
}

#[test]
fn signals_are_forwarded_to_the_command() {
    let env = TestEnv::new();
    for (name, signal) in [
        ("INT", libc::SIGINT),
        ("TERM", libc::SIGTERM),
        ("HUP", libc::SIGHUP),
        ("QUIT", libc::SIGQUIT),
    ] {
        let script = "trap 'echo got-$1; exit 3' $1; echo ready; while :; do sleep 0.05; done";
        let mut holder = env
            .zklock(["lock", "fwd", "--", "sh", "-c", script, "sh", name])
            .spawn();
        assert_eq!(holder.next_line(WAIT), "ready");
        holder.signal(signal);
        let run = holder.wait(WAIT);
        run.assert_code(3);
        assert_eq!(
            run.stdout_lines(),
            ["ready", &format!("got-{name}")],
            "{run:?}"
        );
        assert!(env.zk().children_if_any("/locks/fwd").is_empty());
    }
}

/// A holder whose command notes every catchable signal it gets in `got`
/// and carries on, so that only SIGKILL ends it; returned once it holds,
/// with its node and the command's pid.
fn stubborn_holder(
    env: &TestEnv,
    lock: &str,
    options: &[&str],
    got: &Path,
) -> (Running, String, i32) {
    let script = "for sig in INT TERM HUP QUIT USR1; do trap \"echo $sig >> '$1'\" $sig; done; \
                  echo $$ $ZKLOCK_NODE; while :; do sleep 0.05; done";
    let mut args = vec!["lock", lock];
    args.extend_from_slice(options);
    let got = got.to_str().expect("a UTF-8 path");
    args.extend(["--", "sh", "-c", script, "sh", got]);
    let mut holder = env.zklock(args).spawn();
    let line = holder.next_line(WAIT);
    let (pid, node) = line.split_once(' ').expect("pid and node");
    (holder, node.to_owned(), pid.parse().expect("pid"))
}

/// [`assert_a_stubborn_command_is_killed`] in a chroot of the shared
/// server, allowing zklock 2.5 s beyond the grace.
fn a_stubborn_command_is_killed_after_the_grace(
    options: &[&str],
    signal: &str,
    grace: Duration,
    lose: impl FnOnce(&TestEnv, &str),
) {
    let late = Duration::from_millis(2500);
    assert_a_stubborn_command_is_killed(&TestEnv::new(), options, (signal, grace, late), lose);
}

/// A lost lock stops a command that ignores the stop signal: `signal` (a
/// name) first, SIGKILL `grace` later, exit 4, zklock gone less than `late`
/// after that (counted from the signal's arrival). `lose` takes the lock away (given the node).
pub(crate) fn assert_a_stubborn_command_is_killed(
    env: &TestEnv,
    options: &[&str],
    (signal, grace, late): (&str, Duration, Duration),
    lose: impl FnOnce(&TestEnv, &str),
) {
    let scratch = Scratch::new();
    let got = scratch.file("got");
    let (mut holder, node, pid) = stubborn_holder(env, "stubborn", options, &got);
    let lost = Instant::now();
    lose(env, &node);
    let signals = || std::fs::read_to_string(&got).unwrap_or_default();
    wait_until(WAIT, "the command gets the stop signal", || {
        !signals().is_empty()
    });
    // Within the grace the command runs on (on a machine so loaded that
    // the signal came later than that, only the timing below can tell).
    if lost.elapsed() < grace {
        assert!(
            support::process_alive(pid),
            "the command still runs after the stop signal, within the grace"
        );
    }
    let run = holder.wait(WAIT);
    let stopped = lost.elapsed();
    let exited = std::time::SystemTime::now();
    run.assert_code(4);
    assert!(!support::process_alive(pid), "SIGKILL ended the command");
    assert_eq!(
        signals(),
        format!("{signal}\n"),
        "only --kill-signal before SIGKILL"
    );
    // From the loss, at least the grace; from the stop signal's arrival
    // (when the command wrote it down), at most `late` more: how soon
    // zklock heard of the loss is no part of the grace.
    let signalled = std::fs::metadata(&got)
        .and_then(|meta| meta.modified())
        .expect("the command wrote the signal down");
    let after_signal = exited.duration_since(signalled).unwrap_or_default();
    assert!(
        stopped >= grace && after_signal < grace + late,
        "zklock ended {stopped:?} after the loss and {after_signal:?} after the stop signal; \
         the command was to be killed {grace:?} after the stop signal\n{run:?}"
    );
    assert!(env.zk().children_if_any("/locks/stubborn").is_empty());
}

#[test]
fn a_deleted_node_stops_a_stubborn_command_with_the_kill_signal_then_sigkill() {
    let options = ["--kill-signal", "USR1", "--kill-after", "1500ms"];
    a_stubborn_command_is_killed_after_the_grace(
        &options,
        "USR1",
        Duration::from_millis(1500),
        |env, node| env.zk().delete(node),
    );
}

#[test]
fn a_revoked_lock_stops_a_stubborn_command_with_the_kill_signal_then_sigkill() {
    let options = ["--kill-signal", "INT", "--kill-after", "1s"];
    a_stubborn_command_is_killed_after_the_grace(
        &options,
        "INT",
        Duration::from_secs(1),
        |env, node| {
            env.zk().set(node, b"__REVOKE__");
        },
    );
}

#[test]
fn kill_after_defaults_to_a_fifth_of_the_granted_session() {
    // The shared server grants the 10 s asked for: SIGTERM, then SIGKILL 2 s
    // later, not the 5 s of a fixed default nor half the session.
    let options = ["--session-timeout", "10s"];
    a_stubborn_command_is_killed_after_the_grace(
        &options,
        "TERM",
        Duration::from_secs(2),
        |env, node| env.zk().delete(node),
    );
}

/// How many threads process `pid` has.
fn thread_count(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap_or_else(|e| panic!("the threads of process {pid}: {e}"))
        .count()
}

#[test]
fn a_holder_sends_a_sync_every_twentieth_of_its_session() {
    let env = TestEnv::new();
    let proxy = FaultProxy::start(env.servers());
    // Granted as asked: a sync every 200 ms, each answer the evidence the
    // self-fencing deadline counts from.
    let run = Zklock::new([
        "lock",
        "synced",
        "--session-timeout",
        "4s",
        "--",
        "sleep",
        "3",
    ])
    .hosts(proxy.hosts(&env))
    .run();
    run.assert_success();
    let syncs = proxy.requests_of(&[op::SYNC]);
    // Give or take a late wake-up on a busy machine, and the first sync.
    let expected = run.elapsed.as_secs_f64() / 0.2;
    assert!(
        (expected * 0.6..=expected * 1.4 + 1.0).contains(&(syncs as f64)),
        "{syncs} syncs in {:?}",
        run.elapsed
    );
}

#[test]
fn a_holder_and_its_guard_each_run_on_a_single_thread() {
    // The session's socket and timers are driven by the runtime's own
    // thread. A reactor thread of the client library's would cost every run
    // its start-up and a cross-thread wake-up per reply.
    let env = TestEnv::new();
    let mut holder = env
        .zklock([
            "lock",
            "threads",
            "--",
            "sh",
            "-c",
            "echo $PPID; exec sleep 1000",
        ])
        .spawn();
    let guard: u32 = holder.next_line(WAIT).parse().expect("the guard's pid");
    for pid in [holder.pid(), guard] {
        assert_eq!(thread_count(pid), 1, "threads of zklock process {pid}");
    }
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT);
    assert!(env.zk().children_if_any("/locks/threads").is_empty());
}

#[test]
fn holding_without_a_command_prints_the_token_and_releases_on_a_signal() {
    let env = TestEnv::new();
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let (mut holder, token) = hold(&env, "lock", "plain", &[]);
        assert!(token.starts_with("/locks/plain/_c_"), "{token}");
        assert_eq!(env.zk().children_if_any("/locks/plain").len(), 1);
        holder.signal(signal);
        holder.wait(WAIT).assert_success();
        assert!(
            env.zk().exists(&token).is_none(),
            "signal {signal} released the lock"
        );
    }
}

#[test]
fn an_unreachable_server_exits_3() {
    let run = Zklock::new(["--connect-timeout", "500ms", "lock", "x", "--", "true"])
        .hosts(format!("127.0.0.1:{}", dead_port()))
        .run();
    run.assert_code(3).assert_stderr_contains("cannot reach");
}

#[test]
fn the_zk_recipe_has_no_read_lock() {
    let env = TestEnv::new();
    env.zklock(["rlock", "--dialect", "zk-recipe", "x", "--", "true"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("no read locks");
}

#[test]
fn every_dialect_excludes_every_other() {
    let env = TestEnv::new();
    for holder_dialect in ["curator", "kazoo", "hbase", "zk-recipe"] {
        let (holder, _) = hold(&env, "lock", "mixed", &["--dialect", holder_dialect]);
        for other in ["curator", "kazoo", "hbase", "zk-recipe"] {
            env.zklock(["lock", "-n", "--dialect", other, "mixed", "--", "true"])
                .run()
                .assert_code(1);
        }
        release(holder);
    }
}

#[test]
fn commands_that_end_at_once_never_hang_their_holder() {
    // A command that exits before its guard is set up must still be seen to
    // end (a race once hung one run in a few thousand).
    let env = TestEnv::new();
    let workers: Vec<_> = (0..8)
        .map(|_| {
            let command = env
                .zklock(["lock", "quick", "--", "true"])
                .timeout(Duration::from_secs(15));
            std::thread::spawn(move || {
                for _ in 0..25 {
                    command.run().assert_success();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("worker thread");
    }
}

#[test]
fn the_root_and_zookeepers_namespace_are_never_locks() {
    for (verb, lock) in [
        ("lock", "/"),
        ("rlock", "/"),
        ("wlock", "/zookeeper"),
        ("lock", "/zookeeper/quota"),
        ("rlock", "/zookeeper/config/x"),
    ] {
        // A dead port: the refusal comes before any connection.
        Zklock::new([verb, lock, "--", "true"])
            .hosts(format!("127.0.0.1:{}", dead_port()))
            .run()
            .assert_code(2)
            .assert_stderr_contains("reserved");
    }
    let env = TestEnv::new();
    env.zklock(["--root", "/", "lock", "zookeeper", "--", "true"])
        .run()
        .assert_code(2);
    env.zklock(["lock", "/zookeeper-apps/x", "--", "true"])
        .run()
        .assert_success();
}

#[test]
fn persistent_nodes_named_like_contenders_are_not_waited_on() {
    let env = TestEnv::new();
    let zk = env.zk();
    // Application data in the lock directory, ahead of any contender.
    zk.mkdir_p("/locks/shared");
    zk.create("/locks/shared/lock-0000000001", b"max=10");
    zk.create("/locks/shared/write-0000000002", b"a record");
    zk.create("/locks/shared/x-1234-0000000003", b"an id");
    for verb in ["lock", "wlock", "rlock"] {
        env.zklock([verb, "-w", "5s", "shared", "--", "true"])
            .run()
            .assert_success();
    }
    // zklock's own --ttl node is persistent too, yet a holder, also when
    // named as the ZooKeeper recipe names nodes.
    for (lock, dialect) in [("ttl-curator", "curator"), ("ttl-recipe", "zk-recipe")] {
        let run = env
            .zklock(["lock", lock, "--ttl", "1h", "--dialect", dialect])
            .run();
        run.assert_success();
        let token = run.stdout.trim().to_owned();
        env.zklock(["lock", "-w", "300ms", lock, "--", "true"])
            .run()
            .assert_code(1);
        env.zklock(["release", &token]).run().assert_success();
    }
}

/// The child name at the end of a node path.
fn node_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Stops the waiter `quitter` (it deletes its node and exits), then checks
/// that `behind`, which waited on it, now waits on the node `still_ahead`
/// instead of taking the lock: its own node is not the next after a node
/// that went unless that node was the holder.
fn quit_and_see_the_next_wait_on(mut quitter: Running, behind: &Running, still_ahead: &str) {
    quitter.signal(libc::SIGTERM);
    quitter.wait(WAIT);
    wait_until(WAIT, "the waiter watches the next node ahead", || {
        behind.log_events("waiting").len() >= 2
    });
    let events = behind.log_events("waiting");
    let watched = events[1]["node"].as_str().expect("the node waited on");
    assert_eq!(node_name(watched), node_name(still_ahead), "{events:#?}");
}

#[test]
fn a_waiter_whose_predecessor_gives_up_waits_on_for_the_holder() {
    let env = TestEnv::new();
    let (holder, token) = hold(&env, "lock", "quitter", &[]);
    let quitter = queue_behind(&env, "lock", "quitter", 2, &[]);
    let mut last = queue_behind(&env, "lock", "quitter", 3, &["-v", "--", "echo", "ran"]);
    wait_until(WAIT, "the last waiter watches the quitter", || {
        !last.log_events("waiting").is_empty()
    });
    quit_and_see_the_next_wait_on(quitter, &last, &token);
    assert!(
        last.is_running() && last.stdout().is_empty(),
        "the command ran while the lock was held"
    );
    release(holder);
    let run = last.wait(WAIT);
    run.assert_success().assert_stdout_contains("ran");
}

#[test]
fn a_reader_whose_writer_ahead_gives_up_waits_for_the_writer_that_holds() {
    let env = TestEnv::new();
    let (writer, token) = hold(&env, "wlock", "mixed", &[]);
    let mut first_reader = queue_behind(&env, "rlock", "mixed", 2, &["--", "echo", "read"]);
    let quitter = queue_behind(&env, "wlock", "mixed", 3, &[]);
    let mut reader = queue_behind(&env, "rlock", "mixed", 4, &["-v", "--", "echo", "read"]);
    wait_until(WAIT, "the reader watches the waiting writer", || {
        !reader.log_events("waiting").is_empty()
    });
    quit_and_see_the_next_wait_on(quitter, &reader, &token);
    assert!(
        reader.is_running() && reader.stdout().is_empty(),
        "a reader ran while a writer held"
    );
    release(writer);
    for reader in [&mut first_reader, &mut reader] {
        reader
            .wait(WAIT)
            .assert_success()
            .assert_stdout_contains("read");
    }
}

/// The node of the contender that joined `dir` last: the one among its
/// children that is not in `before`.
fn newcomer(env: &TestEnv, dir: &str, before: &[String]) -> String {
    env.zk()
        .children_if_any(dir)
        .into_iter()
        .find(|child| !before.contains(child))
        .expect("a new node in the lock directory")
}

#[test]
fn a_waiter_whose_predecessors_gave_up_waits_on_the_nearest_node_still_there() {
    let env = TestEnv::new();
    let dir = "/locks/gaps";
    let (holder, _) = hold(&env, "lock", "gaps", &[]);
    let before = env.zk().children_if_any(dir);
    let mut stays = queue_behind(&env, "lock", "gaps", 2, &[]);
    let stays_node = newcomer(&env, dir, &before);
    let first_quitter = queue_behind(&env, "lock", "gaps", 3, &[]);
    let second_quitter = queue_behind(&env, "lock", "gaps", 4, &[]);
    let mut last = queue_behind(&env, "lock", "gaps", 5, &["-v", "--", "echo", "ran"]);
    wait_until(WAIT, "the last waiter watches the second quitter", || {
        !last.log_events("waiting").is_empty()
    });
    // The waiter further ahead goes first, unseen by the last one: when
    // its own predecessor goes, the node just ahead of that is gone too,
    // yet two nodes further ahead are still there.
    release_waiter(first_quitter);
    quit_and_see_the_next_wait_on(second_quitter, &last, &stays_node);
    assert!(
        last.is_running() && last.stdout().is_empty(),
        "the command ran while the lock was held"
    );
    release(holder);
    stays.next_line(WAIT);
    assert!(
        last.is_running() && last.stdout().is_empty(),
        "the command ran while the waiter ahead held"
    );
    release(stays);
    last.wait(WAIT)
        .assert_success()
        .assert_stdout_contains("ran");
}

/// Stops a waiter (it deletes its node) and waits until it has exited.
fn release_waiter(mut waiter: Running) {
    waiter.signal(libc::SIGTERM);
    waiter.wait(WAIT);
}

/// A critical section as a command line: it appends `start VERB ID` and
/// then `end VERB ID` to `log`, and ignores SIGTERM, so that a section once
/// begun always ends.
fn section(log: &Path, verb: &str, id: usize) -> String {
    format!(
        "trap '' TERM; echo start {verb} {id} >> {log}; sleep 0.1; echo end {verb} {id} >> {log}",
        log = log.display()
    )
}

/// Checks a log of critical sections: while an exclusive section (`lock`,
/// `wlock`) runs no other does, while a shared one (`rlock`) runs no
/// exclusive one does, and every section that began ended.
fn assert_exclusion(text: &str) {
    let mut running: Vec<(&str, &str)> = Vec::new();
    for line in text.lines() {
        let mut fields = line.split(' ');
        let (what, verb, id) = (fields.next(), fields.next(), fields.next());
        let (Some(what), Some(verb), Some(id)) = (what, verb, id) else {
            panic!("a log line {line:?} in:\n{text}");
        };
        match what {
            "start" => {
                let exclusive = verb != "rlock";
                assert!(
                    running.is_empty() || !exclusive && running.iter().all(|(v, _)| *v == "rlock"),
                    "{verb} {id} began while {running:?} ran:\n{text}"
                );
                running.push((verb, id));
            }
            _ => running.retain(|section| *section != (verb, id)),
        }
    }
    assert!(
        running.is_empty(),
        "sections never ended: {running:?}:\n{text}"
    );
}

/// Queues a contender per verb of `verbs` behind a `holder_verb` holder of
/// `lock`, each running a critical section, releases the holder, and once
/// `after` sections have ended makes the contenders at `quitters` give up
/// while the others drain the queue. Checks the sections' log, that every
/// contender that stayed ran, and that no node is left.
fn drain_with_give_ups(
    holder_verb: &str,
    lock: &str,
    verbs: &[&str],
    quitters: &[usize],
    after: usize,
) {
    let env = TestEnv::new();
    let dir = Scratch::new();
    let log = dir.file("log");
    let (holder, _) = hold(&env, holder_verb, lock, &[]);
    let mut queued: Vec<Running> = verbs
        .iter()
        .enumerate()
        .map(|(id, verb)| {
            let command = section(&log, verb, id);
            queue_behind(&env, verb, lock, id + 2, &["--", "sh", "-c", &command])
        })
        .collect();
    release(holder);
    let ended = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .matches("end ")
            .count()
    };
    wait_until(WAIT, &format!("{after} sections ended"), || {
        ended() >= after
    });
    for &quitter in quitters {
        queued[quitter].signal(libc::SIGTERM);
    }
    for (id, contender) in queued.iter_mut().enumerate() {
        let run = contender.wait(WAIT);
        if !quitters.contains(&id) {
            run.assert_success();
        }
    }
    let text = std::fs::read_to_string(&log).expect("read log");
    assert_exclusion(&text);
    for id in (0..verbs.len()).filter(|id| !quitters.contains(id)) {
        assert!(
            text.contains(&format!("start {} {id}\n", verbs[id])),
            "contender {id} never ran:\n{text}"
        );
    }
    assert!(
        env.zk()
            .children_if_any(&format!("/locks/{lock}"))
            .is_empty()
    );
}

#[test]
fn give_ups_during_a_drain_never_let_two_hold() {
    drain_with_give_ups("lock", "drain", &["lock"; 8], &[4, 5], 2);
}

#[test]
fn give_ups_during_a_drain_of_readers_and_writers_never_let_a_writer_share() {
    let verbs = [
        "rlock", "rlock", "wlock", "rlock", "wlock", "wlock", "rlock", "rlock", "wlock",
    ];
    drain_with_give_ups("wlock", "rw-drain", &verbs, &[4, 5], 2);
}

#[test]
fn a_waiter_whose_own_node_is_released_exits_8_without_running() {
    let env = TestEnv::new();
    let (holder, token) = hold(&env, "lock", "deleted-waiter", &[]);
    // -o json with a command: stdout stays the command's, the error comes
    // on stderr as JSON.
    let mut waiter = queue_behind(
        &env,
        "lock",
        "deleted-waiter",
        2,
        &["-v", "-o", "json", "--", "echo", "ran"],
    );
    wait_until(WAIT, "the waiter watches the holder", || {
        !waiter.log_events("waiting").is_empty()
    });
    let dir = "/locks/deleted-waiter";
    let own = env
        .zk()
        .children_if_any(dir)
        .into_iter()
        .find(|child| child != node_name(&token))
        .expect("the waiter's node");
    // As the release that `deadlocks` suggests would.
    env.zklock(["release", &format!("{dir}/{own}")])
        .run()
        .assert_success();
    let run = waiter.wait(WAIT);
    let report = support::json::ErrorReport::of(&run, 8);
    assert_eq!(report.cause, "node_deleted_while_waiting", "{run:?}");
    assert!(run.stdout.is_empty(), "the command ran without the lock");
    release(holder);
}

/// An uncontended lock spends no round trip before its first request: right
/// after the session handshake, zklock sends the read of the lock
/// directory (the evidence of the ends before its own), its create and its
/// listing, together, without waiting for a ping's answer first.
#[test]
fn the_first_requests_after_the_handshake_are_the_read_the_create_and_the_listing() {
    let env = TestEnv::new();
    let proxy = FaultProxy::start(env.servers());
    Zklock::new(["lock", "first", "--", "true"])
        .hosts(proxy.hosts(&env))
        .run()
        .assert_success();
    let sent = proxy.client_messages();
    assert!(
        matches!(
            sent.first(),
            Some(ClientMessage::Connect { read_only: false })
        ),
        "{sent:?}"
    );
    let ops: Vec<i32> = sent[1..]
        .iter()
        .take(3)
        .filter_map(|message| match message {
            ClientMessage::Request { op, .. } => Some(*op),
            _ => None,
        })
        .collect();
    assert!(
        matches!(ops[..], [op::GET_DATA, create, op::GET_CHILDREN2] if op::CREATE_LIKE.contains(&create)),
        "the first requests are not the read, the create and the listing: {sent:?}"
    );
}

#[test]
fn the_directories_a_lock_needs_go_once_it_is_released() {
    let env = TestEnv::new();
    assert!(env.zk().exists("/locks").is_none(), "a fresh chroot");
    env.zklock(["lock", "deep/er/path", "--", "true"])
        .run()
        .assert_success();
    // zklock made /locks, /locks/deep, ... as containers: the server
    // removes each once it is empty, from the lock directory up.
    wait_until(WAIT, "every directory the lock needed is gone", || {
        env.zk().exists("/locks").is_none()
    });
}

/// Whether `name` has the shape of `template`, whose holes `{uuid}`,
/// `{hex32}` and `{seq}` (ten digits) stand for what varies.
fn has_layout(name: &str, template: &str) -> bool {
    let mut rest = name;
    let mut template = template;
    while let Some((literal, hole)) = template.split_once('{') {
        let Some(after) = rest.strip_prefix(literal) else {
            return false;
        };
        let (hole, next) = hole.split_once('}').expect("a closed hole");
        let (len, fits): (usize, fn(usize, char) -> bool) = match hole {
            "uuid" => (36, |i, c| {
                if [8, 13, 18, 23].contains(&i) {
                    c == '-'
                } else {
                    c.is_ascii_hexdigit()
                }
            }),
            "hex32" => (32, |_, c| c.is_ascii_hexdigit()),
            "seq" => (10, |_, c| c.is_ascii_digit()),
            other => panic!("no hole {other}"),
        };
        let Some(part) = after.get(..len) else {
            return false;
        };
        if !part.char_indices().all(|(i, c)| fits(i, c)) {
            return false;
        }
        rest = &after[len..];
        template = next;
    }
    rest == template
}

#[test]
fn each_dialect_names_its_nodes_as_its_library_does() {
    let env = TestEnv::new();
    let cases = [
        ("lock", "curator", "_c_{uuid}-lock-{seq}"),
        ("wlock", "curator", "_c_{uuid}-__WRIT__{seq}"),
        ("rlock", "curator", "_c_{uuid}-__READ__{seq}"),
        ("lock", "kazoo", "{hex32}__lock__{seq}"),
        ("wlock", "kazoo", "{hex32}__lock__{seq}"),
        ("rlock", "kazoo", "{hex32}__rlock__{seq}"),
        ("lock", "hbase", "write-{seq}"),
        ("wlock", "hbase", "write-{seq}"),
        ("rlock", "hbase", "read-{seq}"),
        // The session in decimal, as the recipe writes it.
        ("lock", "zk-recipe", "x-SESSION-{seq}"),
    ];
    for (verb, dialect, template) in cases {
        let lock = format!("{verb}-{dialect}");
        let said = "echo \"$ZKLOCK_NODE $ZKLOCK_SESSION\"";
        let run = env
            .zklock([verb, "--dialect", dialect, &lock, "--", "sh", "-c", said])
            .run();
        run.assert_success();
        let (node, session) = run.stdout.trim().split_once(' ').expect("node and session");
        let session = i64::from_str_radix(session.trim_start_matches("0x"), 16).expect("hex");
        let template = template.replace("SESSION", &session.to_string());
        let name = node
            .strip_prefix(&format!("/locks/{lock}/"))
            .unwrap_or_else(|| panic!("{node} is not in /locks/{lock}"));
        assert!(
            has_layout(name, &template),
            "{verb} --dialect {dialect}: {name}"
        );
    }
}
