//! `--once-per`: a command run at most once per window across every
//! contender of its lock, the window on the server's clock, whatever the
//! contenders' own clocks say.

use crate::support;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use support::cotenants::CoTenants;
use support::peers::{self, Library, acquired, peer};
use support::proxy::{ClientMessage, FaultProxy, op};
use support::{Run, Running, TestEnv, ZkOptions, ZkServer, Zklock, digest_acl, wait_until};
use zookeeper_client as zkc;

use crate::terminal::{on_terminal, shown_lines, spinner_mark};

const WAIT: Duration = Duration::from_secs(30);

/// Where Debian's `faketime` package puts libfaketime.
const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

/// A zklock whose wall clock (and its command's) is `skew_s` seconds off.
fn skewed(env: &TestEnv, skew_s: i64, args: &[&str]) -> Zklock {
    assert!(
        Path::new(LIBFAKETIME).exists(),
        "libfaketime is not installed: run scripts/setup (or: apt-get install faketime)"
    );
    env.zklock(args)
        .env("LD_PRELOAD", LIBFAKETIME)
        .env("FAKETIME", format!("{skew_s:+}s"))
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
}

/// The server's clock now: the mtime of a write.
fn server_now_ms(env: &TestEnv) -> i64 {
    env.zk().mkdir_p("/clock");
    env.zk().set("/clock", b"").mtime
}

/// The last counted run the end record in `dir` keeps, if any.
fn ran_in(env: &TestEnv, dir: &str) -> Option<serde_json::Value> {
    let (data, _) = env.zk().try_get(dir).ok()?;
    let record: serde_json::Value = serde_json::from_slice(&data).ok()?;
    let ran = record["zklock_end"]["ran"].clone();
    (!ran.is_null()).then_some(ran)
}

/// The JSON error document on the last line of `stderr`.
fn json_error(stderr: &str) -> serde_json::Value {
    serde_json::from_str(stderr.trim().lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no JSON error ({e}): {stderr}"))
}

#[test]
fn six_contenders_with_skewed_clocks_run_once_per_window() {
    let env = TestEnv::new();
    let scratch = support::Scratch::new();
    let log = scratch.file("runs");
    let log_text = log.to_str().expect("a UTF-8 path");
    const WINDOW_MS: i64 = 3000;
    // Each run says what its own clock read, what the machine's read, and
    // how far off its own was set.
    let job = format!("echo \"$(date +%s) $(env -u LD_PRELOAD date +%s) $FAKETIME\" >> {log_text}");
    let mut skews = [-30, -18, -6, 6, 18, 30];
    let mut runs_at = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(180);
    // Rounds of six at once, each started in another order, until three
    // windows ran: whoever comes first after the window opens runs, the
    // others exit with -E's code. However long a round takes, one that
    // begins after the window opened (the server is on this machine's
    // clock) must run.
    while runs_at.len() < 3 {
        assert!(
            Instant::now() < deadline,
            "three windows did not run within 180 s: {runs_at:?}"
        );
        skews.rotate_left(1);
        let last = runs_at.last().copied();
        let began_ms = server_now_ms(&env);
        let mut round: Vec<_> = skews
            .iter()
            .map(|&skew| {
                skewed(
                    &env,
                    skew,
                    &[
                        "lock",
                        "-E",
                        "3",
                        "-w",
                        "20s",
                        "--once-per",
                        "3s",
                        "job",
                        "--",
                        "sh",
                        "-c",
                        &job,
                    ],
                )
                .spawn()
            })
            .collect();
        for contender in &mut round {
            let run = contender.wait(WAIT);
            assert!(
                matches!(run.code, Some(0 | 3)),
                "neither ran nor found it ran: {run:?}"
            );
        }
        let ran = ran_in(&env, "/locks/job").map(|ran| ran["at_ms"].as_i64().expect("at_ms"));
        if let Some(last) = last
            && began_ms >= last + WINDOW_MS
        {
            assert!(
                ran.is_some_and(|at| at > last),
                "a round begun at {began_ms}, after the window from {last} closed, ran nothing"
            );
        }
        runs_at.extend(ran);
    }
    let lines = std::fs::read_to_string(&log).expect("the runs' log");
    let runs: Vec<(i64, i64, i64)> = lines
        .lines()
        .map(|line| {
            let mut words = line.split(' ');
            let mut clock = || words.next().expect("a clock").parse().expect("seconds");
            let (skewed, real) = (clock(), clock());
            let skew = words.next().expect("a skew").trim_end_matches('s');
            (skewed, real, skew.parse().expect("a skew"))
        })
        .collect();
    assert_eq!(runs.len(), runs_at.len(), "every run counted once: {lines}");
    let at: Vec<i64> = runs_at.into_iter().collect();
    for pair in at.windows(2) {
        assert!(
            pair[1] - pair[0] >= WINDOW_MS,
            "runs {} ms apart on the server's clock, with a window of {WINDOW_MS} ms: \
             {at:?}, {lines}",
            pair[1] - pair[0]
        );
    }
    // The skews were in force: each run's clock was off the machine's by
    // its own skew, read within the same moment.
    for (skewed, real, skew) in &runs {
        assert!(
            (skewed - real - skew).abs() <= 1,
            "a run's clock {skewed} is not the machine's {real} off by {skew} s: {lines}"
        );
    }
}

#[test]
fn a_failed_run_does_not_count_and_no_end_forgets_the_last_run() {
    let env = TestEnv::new();
    let once = |window: &str, command: &[&str]| {
        let mut args = vec![
            "-o",
            "json",
            "lock",
            "-E",
            "3",
            "--once-per",
            window,
            "f",
            "--",
        ];
        args.extend(command);
        env.zklock(args)
    };
    // A failed run does not count: the next contender runs.
    once("1h", &["false"]).run().assert_code(1);
    assert_eq!(ran_in(&env, "/locks/f"), None);
    let mut ran = once("1h", &["true"]).spawn();
    let runner = ran.pid();
    ran.wait(WAIT).assert_success();
    let last = ran_in(&env, "/locks/f").expect("the run counted");
    assert_eq!(last["by"]["pid"], runner, "{last}");
    assert_eq!(last["per_ms"], 3_600_000, "{last}");
    // Within the window: the conflict code, and who ran when.
    let suppressed = once("1h", &["true"]).run();
    suppressed.assert_code(3);
    let error = json_error(&suppressed.stderr);
    assert_eq!(error["cause"], "ran_recently", "{error}");
    assert_eq!(error["exit_code"], 3, "{error}");
    assert_eq!(error["ran_at_ms"], last["at_ms"], "{error}");
    assert_eq!(error["ran_by"]["pid"], runner, "{error}");
    assert_eq!(
        error["window_opens_at_ms"].as_i64(),
        last["at_ms"].as_i64().map(|at| at + 3_600_000),
        "{error}"
    );
    // The suppressed hold's end kept the run.
    assert_eq!(ran_in(&env, "/locks/f").as_ref(), Some(&last));

    // A short window, open again: a failed run, and a give-up while
    // another holds, each keep the last counted run.
    let opens = last["at_ms"].as_i64().expect("at_ms") + 1000;
    wait_until(WAIT, "a window of 1s opens", || server_now_ms(&env) > opens);
    let mut ran = once("1s", &["true"]).spawn();
    let runner = ran.pid();
    ran.wait(WAIT).assert_success();
    let last = ran_in(&env, "/locks/f").expect("the run counted");
    assert_eq!(last["by"]["pid"], runner, "{last}");
    let opens = last["at_ms"].as_i64().expect("at_ms") + 1000;
    wait_until(WAIT, "the window opens", || server_now_ms(&env) > opens);
    once("1s", &["false"]).run().assert_code(1);
    assert_eq!(ran_in(&env, "/locks/f").as_ref(), Some(&last));
    let mut holder = once("1s", &["sleep", "60"]).spawn();
    wait_until(WAIT, "the holder holds", || {
        !env.zk().children_if_any("/locks/f").is_empty()
    });
    // A waiter that gives up behind the holder never held: with the flag
    // or without, it leaves the directory as it was.
    let args = ["lock", "-n", "--once-per", "1s", "f", "--", "true"];
    let before = env.zk().get("/locks/f");
    env.zklock(args).run().assert_code(1);
    env.zklock(["lock", "-n", "f", "--", "true"])
        .run()
        .assert_code(1);
    let after = env.zk().get("/locks/f");
    assert_eq!((after.0, after.1.version), (before.0, before.1.version));
    assert_eq!(ran_in(&env, "/locks/f").as_ref(), Some(&last));
    // The holder, stopped (a run that does not count), writes back the run
    // it found when it began.
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT);
    assert_eq!(ran_in(&env, "/locks/f").as_ref(), Some(&last));
    // Without a holder, -n runs at once: the window is open.
    env.zklock(args).run().assert_success();
}

#[test]
fn even_on_failure_counts_a_failed_run_and_one_killed_mid_way() {
    let env = TestEnv::new();
    let once = |lock: &str, command: &[&str]| {
        let mut args = vec![
            "lock",
            "-E",
            "3",
            "-w",
            "20s",
            "--once-per",
            "1h",
            "--once-per-even-on-failure",
            lock,
            "--",
        ];
        args.extend(command);
        env.zklock(args)
    };
    let mut failed = once("e", &["false"]).spawn();
    let pid = failed.pid();
    failed.wait(WAIT).assert_code(1);
    let last = ran_in(&env, "/locks/e").expect("the failed run counted");
    assert_eq!(last["by"]["pid"], pid, "{last}");
    once("e", &["true"]).run().assert_code(3);

    // Recorded when it starts: a run killed with zklock still counts.
    let mut killed = once("k", &["sleep", "60"]).spawn();
    let pid = killed.pid();
    let last = support::wait_for(WAIT, "the run recorded at its start", || {
        ran_in(&env, "/locks/k")
    });
    assert_eq!(last["by"]["pid"], pid, "{last}");
    killed.signal(libc::SIGKILL);
    killed.wait(WAIT);
    once("k", &["true"]).run().assert_code(3);
    assert_eq!(ran_in(&env, "/locks/k").as_ref(), Some(&last));
}

#[test]
fn once_per_is_refused_where_a_window_could_open_twice_or_nothing_runs() {
    let env = TestEnv::new();
    for args in [
        &["rlock", "--once-per", "1h", "u", "--", "true"][..],
        &[
            "sem",
            "--max-leases",
            "2",
            "--once-per",
            "1h",
            "u",
            "--",
            "true",
        ],
        &["lock", "--once-per", "1h", "u"],
        &["lock", "--once-per", "1h", "--detach", "u"],
        &["lock", "--once-per", "1h", "u", "v", "--", "true"],
        &["lock", "--once-per-even-on-failure", "u", "--", "true"],
    ] {
        env.zklock(args).run().assert_code(2);
    }
    // -E is accepted with --once-per alone.
    env.zklock(["lock", "-E", "5", "--once-per", "1h", "u", "--", "true"])
        .run()
        .assert_success();
    env.zklock(["lock", "-E", "5", "--once-per", "1h", "u", "--", "true"])
        .run()
        .assert_code(5);
}

/// Runs `true` under `lock --once-per 90m s`: the pid that ran it and the
/// run its end record keeps.
fn run_once_per_90m(env: &TestEnv) -> (u32, serde_json::Value) {
    let mut ran = env
        .zklock(["lock", "--once-per", "90m", "s", "--", "true"])
        .spawn();
    let runner = ran.pid();
    ran.wait(WAIT).assert_success();
    (runner, ran_in(env, "/locks/s").expect("the run counted"))
}

#[test]
fn stat_shows_the_last_run_and_when_the_window_opens() {
    let env = TestEnv::new();
    let (runner, last) = run_once_per_90m(&env);
    let assert_shown = |shown: &serde_json::Value| assert_last_run(shown, &last, runner);
    let stat = || {
        let shown = env.zklock(["-o", "json", "stat", "s"]).run();
        shown.assert_success();
        serde_json::from_str::<serde_json::Value>(&shown.stdout).expect("JSON")
    };
    // Emptied, the directory is shown as a node; held, as a lock.
    assert_shown(&stat());
    let mut holder = env.zklock(["lock", "s"]).spawn();
    holder.next_line(WAIT);
    assert_shown(&stat());
    let table = env.zklock(["stat", "s"]).run();
    assert!(
        table.stdout.contains("last --once-per run"),
        "{}",
        table.stdout
    );
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
    // A lock never run under --once-per shows none.
    let mut holder = env.zklock(["lock", "plain"]).spawn();
    holder.next_line(WAIT);
    let shown = env.zklock(["-o", "json", "stat", "plain"]).run();
    let lock: serde_json::Value = serde_json::from_str(&shown.stdout).expect("JSON");
    assert!(lock["last_run"].is_null(), "{lock}");
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
}

/// Asserts that `shown` has `last` for its `last_run`, run by `runner`, as
/// `stat` and `ls` write it.
fn assert_last_run(shown: &serde_json::Value, last: &serde_json::Value, runner: u32) {
    let at = last["at_ms"].as_i64().expect("at_ms");
    assert_eq!(shown["last_run"]["at_ms"], at, "{shown}");
    assert_eq!(shown["last_run"]["by"]["pid"], runner, "{shown}");
    assert_eq!(shown["last_run"]["per_ms"], 90 * 60_000, "{shown}");
    assert_eq!(
        shown["last_run"]["window_opens_at_ms"],
        at + 90 * 60_000,
        "{shown}"
    );
}

/// The locks `ls -o json` lists under the root, by path.
fn listed(env: &TestEnv) -> std::collections::BTreeMap<String, serde_json::Value> {
    let run = env.zklock(["-o", "json", "ls"]).run();
    run.assert_success();
    let locks: Vec<serde_json::Value> = run.json();
    locks
        .into_iter()
        .map(|lock| (lock["path"].as_str().expect("a path").to_owned(), lock))
        .collect()
}

#[test]
fn ls_lists_an_idle_once_per_lock_with_its_last_run() {
    let env = TestEnv::new();
    let (runner, last) = run_once_per_90m(&env);
    // Empty nodes beside it whose data is no end record are no locks.
    env.zk().create("/locks/config", br#"{"x":1}"#);
    env.zk().create_with(
        "/locks/parent",
        b"",
        &zkc::CreateMode::Container.with_acls(zkc::Acls::anyone_all()),
    );
    let locks = listed(&env);
    assert_eq!(locks.keys().collect::<Vec<_>>(), ["/locks/s"], "{locks:?}");
    let idle = &locks["/locks/s"];
    assert_eq!(idle["holders"], serde_json::json!([]), "{idle}");
    assert_eq!(idle["waiters"], serde_json::json!([]), "{idle}");
    assert_eq!(idle["kind"], "mutex", "{idle}");
    assert_last_run(idle, &last, runner);
    let table = env.zklock(["ls", "--held"]).run();
    assert!(!table.stdout.contains("/locks/s"), "{}", table.stdout);
    let table = env.zklock(["ls"]).run();
    let row = table
        .stdout
        .lines()
        .find(|line| line.starts_with("/locks/s "));
    let counts: Vec<&str> = row
        .unwrap_or_else(|| panic!("no row for the idle lock: {}", table.stdout))
        .split_whitespace()
        .skip(2)
        .take(2)
        .collect();
    assert_eq!(counts, ["0", "0"], "{}", table.stdout);

    // Held, it is listed with its holder and the same last run.
    let mut holder = env.zklock(["lock", "s"]).spawn();
    holder.next_line(WAIT);
    let mut plain = env.zklock(["lock", "plain"]).spawn();
    plain.next_line(WAIT);
    let locks = listed(&env);
    assert_eq!(
        locks["/locks/s"]["holders"].as_array().map(Vec::len),
        Some(1)
    );
    assert_last_run(&locks["/locks/s"], &last, runner);
    // A lock never run under --once-per has none.
    assert!(locks["/locks/plain"]["last_run"].is_null(), "{locks:?}");
    for running in [&mut holder, &mut plain] {
        running.signal(libc::SIGTERM);
        running.wait(WAIT).assert_success();
    }
}

#[test]
fn a_kazoo_semaphore_keeps_its_listing_and_shows_no_last_run() {
    let env = TestEnv::new();
    let mut holder = env
        .zklock([
            "sem",
            "--dialect",
            "kazoo",
            "k",
            "--max-leases",
            "2",
            "--",
            "sleep",
            "60",
        ])
        .spawn();
    // The lease is made while zklock holds the semaphore's internal lock
    // beside it, which is a lock of its own until let go.
    wait_until(
        WAIT,
        "the lease is taken and the internal lock let go",
        || {
            !env.zk().children_if_any("/locks/k").is_empty()
                && env.zk().children_if_any("/locks/k-__lock__").is_empty()
        },
    );
    let locks = listed(&env);
    assert_eq!(locks.keys().collect::<Vec<_>>(), ["/locks/k"], "{locks:?}");
    let semaphore = &locks["/locks/k"];
    assert_eq!(semaphore["kind"], "semaphore", "{semaphore}");
    assert_eq!(semaphore["holders"].as_array().map(Vec::len), Some(1));
    assert!(semaphore["last_run"].is_null(), "{semaphore}");
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT);
    wait_until(WAIT, "the lease is gone", || {
        env.zk().children_if_any("/locks/k").is_empty()
    });
    // Emptied, its node holds its maximum, no end record: no lock.
    assert!(listed(&env).is_empty());
}

#[test]
fn only_ls_listing_reads_lock_directories_and_empty_nodes() {
    let env = TestEnv::new();
    env.zklock(["lock", "--once-per", "90m", "idle", "--", "true"])
        .run()
        .assert_success();
    let mut holder = env
        .zklock(["lock", "--once-per", "90m", "held", "--", "sleep", "60"])
        .spawn();
    wait_until(WAIT, "the holder holds", || {
        !env.zk().children_if_any("/locks/held").is_empty()
    });
    let proxy = FaultProxy::start(env.servers());
    // How many times one zklock asked for each of `paths` (below the test's
    // chroot), in any request: the listing asks for each once, a read of
    // its data once more.
    let asked = |args: &[&str], paths: &[&str]| -> (Vec<usize>, String) {
        let before = proxy.client_messages().len();
        let run = Zklock::new(args).hosts(proxy.hosts(&env)).run();
        run.assert_success();
        let sent = proxy.client_messages()[before..].to_vec();
        let times = paths
            .iter()
            .map(|wanted| {
                sent.iter()
                    .map(|message| match message {
                        ClientMessage::Request {
                            path, multi_paths, ..
                        } => {
                            let single = path.iter().filter(|p| p.ends_with(wanted)).count();
                            single + multi_paths.iter().filter(|p| p.ends_with(wanted)).count()
                        }
                        ClientMessage::Connect { .. } => 0,
                    })
                    .sum()
            })
            .collect();
        (times, run.stdout)
    };
    let dirs = ["/locks/idle", "/locks/held"];
    let (listing, _) = asked(&["-o", "json", "ls"], &dirs);
    assert_eq!(listing, [2, 2], "ls lists and reads each");
    let (metrics, text) = asked(&["ls", "-o", "prometheus"], &dirs);
    assert_eq!(metrics, [1, 1], "ls -o prometheus only lists them");
    assert!(!text.contains("/locks/idle"), "{text}");
    assert!(text.contains("/locks/held"), "{text}");
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT);
}

#[test]
fn without_the_flag_no_request_is_added_and_with_it_the_window_costs_two_reads_and_a_write() {
    let env = TestEnv::new();
    let proxy = FaultProxy::start(env.servers());
    // The requests (their types) one zklock sends besides pings.
    let sent_by = |args: &[&str]| -> Vec<i32> {
        let before = proxy.client_messages().len();
        Zklock::new(args)
            .hosts(proxy.hosts(&env))
            .run()
            .assert_success();
        proxy.client_messages()[before..]
            .iter()
            .filter_map(|message| match message {
                ClientMessage::Request { op, .. } if *op != op::PING => Some(*op),
                _ => None,
            })
            .collect()
    };
    // Each lock reads its directory in the round trip of its create and
    // listing (one read each time they are sent), and writes it only in
    // the transaction of its end.
    let count = |sent: &[i32], wanted: i32| sent.iter().filter(|op| **op == wanted).count();
    let plain = sent_by(&["lock", "p", "--", "true"]);
    assert_eq!(
        (count(&plain, op::GET_DATA), count(&plain, op::SET_DATA)),
        (count(&plain, op::GET_CHILDREN2), 0),
        "a lock without --once-per read or wrote its directory besides: {plain:?}"
    );
    // Besides those: the read of the directory's mark before queueing
    // (which finds it missing at first and makes it), the window's read
    // and write before the command, the read before the end record; the
    // same in a directory it made before (the second run finds the window
    // closed).
    let args = ["lock", "-E", "0", "--once-per", "1h", "q", "--", "true"];
    for _ in 0..2 {
        let once = sent_by(&args);
        assert_eq!(
            (
                count(&once, op::GET_DATA) - count(&once, op::GET_CHILDREN2),
                count(&once, op::SET_DATA)
            ),
            (3, 1),
            "{once:?}"
        );
    }
}

#[test]
fn a_break_by_release_and_a_reap_keep_the_last_run() {
    let env = TestEnv::new();
    let once = |extra: &[&str], command: &[&str]| {
        let mut args = vec!["lock", "-E", "3", "--once-per", "1h"];
        args.extend(extra);
        args.extend(["b", "--"]);
        args.extend(command);
        env.zklock(args)
    };
    let end_in = |dir: &str| {
        let (data, _) = env.zk().get(dir);
        serde_json::from_slice::<serde_json::Value>(&data).expect("an end record")["zklock_end"]
            .clone()
    };
    let holds = || !env.zk().children_if_any("/locks/b").is_empty();
    // A --once-per holder whose run counts when it starts, broken mid-run.
    let mut holder = once(&["--once-per-even-on-failure"], &["sleep", "60"]).spawn();
    let last = support::wait_for(WAIT, "the run recorded at its start", || {
        ran_in(&env, "/locks/b")
    });
    env.zklock(["release", "--holders", "--yes", "b"])
        .run()
        .assert_success();
    holder.wait(WAIT).assert_code(4);
    let ended = end_in("/locks/b");
    assert_eq!(ended["how"], "broken", "{ended}");
    assert_eq!(ended["ran"], last, "{ended}");
    once(&[], &["true"]).run().assert_code(3);

    // A later holder without the flag, broken: the window stays closed.
    let mut holder = env.zklock(["lock", "b", "--", "sleep", "60"]).spawn();
    wait_until(WAIT, "the holder holds", holds);
    env.zklock(["release", "--holders", "--yes", "b"])
        .run()
        .assert_success();
    holder.wait(WAIT).assert_code(4);
    assert_eq!(end_in("/locks/b")["ran"], last);
    once(&[], &["true"]).run().assert_code(3);

    // A detached holder reaped: the same.
    env.zklock(["lock", "b", "--detach"]).run().assert_success();
    env.zklock(["reap", "--all", "--yes", "b"])
        .run()
        .assert_success();
    let ended = end_in("/locks/b");
    assert_eq!(ended["how"], "reaped", "{ended}");
    assert_eq!(ended["ran"], last, "{ended}");
    once(&[], &["true"]).run().assert_code(3);
}

/// The end record in `dir`, which must hold one.
#[track_caller]
fn record_in(env: &TestEnv, dir: &str) -> serde_json::Value {
    let (data, _) = env.zk().get(dir);
    let record: serde_json::Value = serde_json::from_slice(&data)
        .unwrap_or_else(|e| panic!("{dir} holds no record ({e}): {data:?}"));
    record["zklock_end"].clone()
}

/// The `-v` log events named `event` in a run's stderr (with
/// `ZKLOCK_LOG_FORMAT=json`).
fn events(run: &Run, event: &str) -> Vec<serde_json::Value> {
    run.stderr
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|line| line["event"] == event)
        .collect()
}

/// An emptied container of the test's own: the server removes it at its
/// next container check, so its going marks one.
fn emptied_container(env: &TestEnv) -> String {
    let path = format!("/check-{}", support::unique());
    let container = zkc::CreateMode::Container.with_acls(zkc::Acls::anyone_all());
    env.zk().create_with(&path, b"", &container);
    env.zk().create(&format!("{path}/child"), b"");
    env.zk().delete(&format!("{path}/child"));
    path
}

/// Waits until the server's container check has run since now (it may
/// still be removing what it found).
fn a_container_check_passes(env: &TestEnv) {
    let path = emptied_container(env);
    wait_until(WAIT, "the server's container check", || {
        env.zk().exists(&path).is_none()
    });
}

/// Waits until every container emptied before now is gone, or never will
/// be: a check removes what it found one after the other, and the server
/// runs one check at a time, so once a container emptied after a check
/// began its removals is gone, that check is over.
fn every_emptied_container_is_removed(env: &TestEnv) {
    a_container_check_passes(env);
    a_container_check_passes(env);
}

/// How often the container tests' own server removes emptied containers:
/// seldom enough for a round of releases and `--once-per` runs to fall
/// between two checks, often enough to wait for a few.
const CONTAINER_CHECK_MS: u32 = 5000;

/// Who made a lock directory before `--once-per` first ran in it: a
/// container (`zklock lock`, Curator) or a persistent node (kazoo, a person
/// with zkCli, here with an ACL of their own).
#[derive(Clone, Copy, Debug)]
enum Maker {
    Zklock,
    Curator,
    Kazoo,
    ByHand,
}

impl Maker {
    /// Makes `/locks/NAME` as this maker does, holding it (by a process,
    /// returned) where the maker is a lock.
    fn make(self, env: &TestEnv, name: &str) -> Option<Running> {
        let dir = format!("/locks/{name}");
        match self {
            Maker::Zklock => {
                let mut holder = env.zklock(["lock", name]).spawn();
                holder.next_line(WAIT);
                Some(holder)
            }
            Maker::Curator | Maker::Kazoo => {
                let library = match self {
                    Maker::Curator => Library::Curator,
                    _ => Library::Kazoo,
                };
                let mut holder = peer(env, library, &dir, "mutex", &[]);
                acquired(&mut holder, WAIT);
                Some(holder)
            }
            Maker::ByHand => {
                let acl = [
                    zkc::Acl::new(zkc::Permission::ALL, zkc::AuthId::new("world", "anyone")),
                    digest_acl("ops", "secret", zkc::Permission::ADMIN),
                ];
                let persistent = zkc::CreateMode::Persistent.with_acls(zkc::Acls::new(&acl));
                env.zk().create_with(&dir, b"", &persistent);
                None
            }
        }
    }
}

/// `zklock lock -E 3 --once-per 1h NAME -- true`.
fn once_an_hour(env: &TestEnv, name: &str) -> Zklock {
    env.zklock(["lock", "-E", "3", "--once-per", "1h", name, "--", "true"])
}

/// Lets every holder go (SIGTERM), all at once, and waits for each.
fn release_all(holders: Vec<Running>) {
    for holder in &holders {
        holder.signal(libc::SIGTERM);
    }
    for mut holder in holders {
        holder.wait(WAIT).assert_success();
    }
}

#[test]
fn a_directory_another_client_made_is_made_again_persistent_and_keeps_its_window_past_the_container_check()
 {
    let options = ZkOptions::default().jvm_flag(format!(
        "-Dznode.container.checkIntervalMs={CONTAINER_CHECK_MS}"
    ));
    let server = ZkServer::with_options(&options);
    let env = TestEnv::with_server(&server);
    env.zk().mkdir_p("/locks");
    let makers = [Maker::Zklock, Maker::Curator, Maker::Kazoo, Maker::ByHand];
    let named = |tag: &str| -> Vec<String> {
        makers
            .iter()
            .map(|maker| format!("{maker:?}-{tag}").to_lowercase())
            .collect()
    };
    let make_all = |names: &[String]| -> Vec<Running> {
        let holders = makers
            .iter()
            .zip(names)
            .filter_map(|(maker, name)| maker.make(&env, name))
            .collect();
        // What all this rests on: the server shows a container to clients
        // as it shows a persistent node.
        for name in names {
            let (_, stat) = env.zk().get(&format!("/locks/{name}"));
            assert_eq!(stat.ephemeral_owner, 0, "{name}");
        }
        holders
    };
    // Used, then left idle past the server's check: the containers are
    // gone, kazoo's and the person's directories are not; --once-per runs
    // in each.
    let idle = named("idle");
    release_all(make_all(&idle));
    every_emptied_container_is_removed(&env);
    let left: Vec<bool> = idle
        .iter()
        .map(|name| env.zk().exists(&format!("/locks/{name}")).is_some())
        .collect();
    assert_eq!(left, [false, false, true, true], "{idle:?}");
    for name in &idle {
        once_an_hour(&env, name).run().assert_success();
    }
    // Used and emptied, and found by --once-per before the check: a round
    // in which the check came between the releases and the runs proves
    // nothing of a container (it may have gone first), and another round
    // begins.
    let mut round = 0;
    let fresh = loop {
        round += 1;
        assert!(
            round <= 4,
            "the server's container check came between the releases and the runs of every round"
        );
        let names = named(&round.to_string());
        let holders = make_all(&names);
        a_container_check_passes(&env);
        let no_check_since = emptied_container(&env);
        release_all(holders);
        for name in &names {
            once_an_hour(&env, name).run().assert_success();
        }
        if env.zk().exists(&no_check_since).is_some() {
            break names;
        }
    };
    let mut runs = Vec::new();
    for name in idle.iter().chain(&fresh) {
        let dir = format!("/locks/{name}");
        let record = record_in(&env, &dir);
        assert_eq!(record["made_persistent"], true, "{dir}: {record}");
        assert!(!record["ran"].is_null(), "{dir}: {record}");
        runs.push(record["ran"].clone());
    }
    // The ACL a person gave each directory is the ACL it has now.
    for name in [&idle[3], &fresh[3]] {
        let acl = env.zk().get_acl(&format!("/locks/{name}"));
        assert!(
            acl.contains(&digest_acl("ops", "secret", zkc::Permission::ADMIN)),
            "{name}: {acl:?}"
        );
        assert_eq!(acl.len(), 2, "{name}: {acl:?}");
    }
    // Idle past the server's check, every directory is still there with its
    // run, and the window is closed.
    every_emptied_container_is_removed(&env);
    for (name, ran) in idle.iter().chain(&fresh).zip(&runs) {
        assert_eq!(ran_in(&env, &format!("/locks/{name}")).as_ref(), Some(ran));
        once_an_hour(&env, name).run().assert_code(3);
    }
}

#[test]
fn a_directory_with_contenders_or_another_programs_data_is_refused_at_once_and_left_alone() {
    let env = TestEnv::new();
    let _cotenants = CoTenants::create(&env);
    let mut holder = peer(&env, Library::Curator, "/locks/held", "mutex", &[]);
    let node = acquired(&mut holder, WAIT);
    let before = CoTenants::snapshot(&env);
    let held_before = env.zk().get("/locks/held");
    let refused = |lock: &str| {
        let run = env
            .zklock([
                "-o",
                "json",
                "lock",
                "-w",
                "1m",
                "--once-per",
                "1h",
                lock,
                "--",
                "true",
            ])
            .run();
        run.assert_code(2);
        let error = json_error(&run.stderr);
        assert_eq!(error["cause"], "once_per_directory", "{lock}: {error}");
        // At once: no wait for the holder's release.
        assert!(run.elapsed < Duration::from_secs(20), "{lock}: {run:?}");
    };
    // A Curator holder's container, and the co-tenants' nodes named as
    // locks: a container holding application data, nodes with children,
    // with data, or both.
    for lock in [
        "/locks/held",
        "/app/cache-parent",
        "/cache/shards",
        "/app/config",
        "/kafka/brokers/topics/orders/partitions/0/state",
    ] {
        refused(lock);
    }
    assert_eq!(
        env.zk().children("/locks/held"),
        [node.rsplit('/').next().unwrap()]
    );
    let held_after = env.zk().get("/locks/held");
    assert_eq!(
        (held_after.0, held_after.1.mzxid),
        (held_before.0, held_before.1.mzxid)
    );
    assert_eq!(CoTenants::snapshot(&env), before);
    peers::release(holder);
}

#[test]
fn contenders_racing_to_make_a_directory_again_run_once_and_settle_on_one() {
    let env = TestEnv::new();
    let scratch = support::Scratch::new();
    let log = scratch.file("runs");
    let job = format!("echo run >> {}", log.to_str().expect("a UTF-8 path"));
    env.zk().mkdir_p("/locks");
    for round in 1..=4 {
        // Made by hand, persistent and empty: the first contender makes it
        // again, and the others must find that one, not a third.
        let dir = format!("/locks/race-{round}");
        let by_hand = env.zk().create(&dir, b"").czxid;
        let mut racers: Vec<Running> = (0..6)
            .map(|_| {
                env.zklock([
                    "lock",
                    "-E",
                    "3",
                    "-w",
                    "30s",
                    "--once-per",
                    "1h",
                    &dir,
                    "--",
                    "sh",
                    "-c",
                    &job,
                ])
                .spawn()
            })
            .collect();
        let mut codes: Vec<Option<i32>> = racers.iter_mut().map(|r| r.wait(WAIT).code).collect();
        codes.sort_unstable();
        assert_eq!(
            codes,
            [Some(0), Some(3), Some(3), Some(3), Some(3), Some(3)]
        );
        let ran = std::fs::read_to_string(&log).expect("the runs' log");
        assert_eq!(ran.lines().count(), round, "one run per round: {ran}");
        let (_, stat) = env.zk().get(&dir);
        assert_ne!(stat.czxid, by_hand, "{dir} was not made again");
        let record = record_in(&env, &dir);
        assert_eq!(record["made_persistent"], true, "{record}");
        assert!(!record["ran"].is_null(), "{record}");
    }
}

#[test]
fn a_plain_zklocks_ends_keep_the_last_run_and_the_mark() {
    let env = TestEnv::new();
    once_an_hour(&env, "p").run().assert_success();
    let last = ran_in(&env, "/locks/p").expect("the run counted");
    let (_, made) = env.zk().get("/locks/p");
    // Each end without the flag writes its own record over the one there:
    // a writer's release, a reader's, and a writer's give-up behind a
    // reader; each keeps the run and the mark.
    let kept = |how: &str| {
        let record = record_in(&env, "/locks/p");
        assert_eq!(record["how"], how, "{record}");
        assert_eq!(record["made_persistent"], true, "{record}");
        assert_eq!(record["ran"], last, "{record}");
    };
    let before = env.zk().get("/locks/p").1.version;
    env.zklock(["lock", "p", "--", "true"])
        .run()
        .assert_success();
    assert_ne!(env.zk().get("/locks/p").1.version, before, "no record");
    kept("released");
    let mut reader = env.zklock(["rlock", "p"]).spawn();
    reader.next_line(WAIT);
    env.zklock(["wlock", "-n", "p", "--", "true"])
        .run()
        .assert_code(1);
    kept("gave_up");
    reader.signal(libc::SIGTERM);
    reader.wait(WAIT).assert_success();
    kept("released");
    // So the window stays closed, in the directory --once-per made.
    once_an_hour(&env, "p").run().assert_code(3);
    assert_eq!(env.zk().get("/locks/p").1.czxid, made.czxid);
}

#[test]
fn a_directory_lock_delay_made_keeps_a_once_per_window_as_it_is() {
    let env = TestEnv::new();
    env.zklock(["lock", "--lock-delay", "1s", "d", "--", "true"])
        .run()
        .assert_success();
    let (_, made) = env.zk().get("/locks/d");
    let record = record_in(&env, "/locks/d");
    assert_eq!(record["made_persistent"], true, "{record}");
    // --once-per runs there without making it again, and its window holds.
    once_an_hour(&env, "d").run().assert_success();
    assert_eq!(env.zk().get("/locks/d").1.czxid, made.czxid);
    assert!(ran_in(&env, "/locks/d").is_some());
    once_an_hour(&env, "d").run().assert_code(3);
}

#[test]
fn the_directory_of_an_older_zklock_is_made_again_keeping_its_last_run() {
    let env = TestEnv::new();
    // What a zklock before the mark left in the persistent directory it made:
    // an end record with the last run, and no mark.
    let at_ms = server_now_ms(&env) - 60_000;
    let older = serde_json::json!({"zklock_end": {
        "version": 1,
        "nodes": [{"node": "_c_2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f-lock-0000000004", "session": "0x1"}],
        "how": "released",
        "by": {"user": "ops", "host": "h", "pid": 7},
        "reason": null,
        "ran": {"at_ms": at_ms, "per_ms": 3_600_000, "by": {"user": "ops", "host": "h", "pid": 7}},
    }});
    env.zk().mkdir_p("/locks");
    env.zk().create("/locks/old", older.to_string().as_bytes());
    let run = env
        .zklock([
            "-o",
            "json",
            "lock",
            "-E",
            "3",
            "--once-per",
            "1h",
            "old",
            "--",
            "true",
        ])
        .run();
    run.assert_code(3);
    assert_eq!(json_error(&run.stderr)["ran_at_ms"], at_ms);
    let record = record_in(&env, "/locks/old");
    assert_eq!(record["made_persistent"], true, "{record}");
    assert_eq!(record["ran"]["at_ms"], at_ms, "{record}");
}

/// Writes into the `--once-per` directory `dir` a record whose last run
/// began at `at_ms` (as anyone who may write the directory can, or a leader
/// whose clock jumped), keeping the rest of the record.
fn forge_run(env: &TestEnv, dir: &str, at_ms: i64) {
    let mut record = serde_json::json!({ "zklock_end": record_in(env, dir) });
    record["zklock_end"]["ran"] = serde_json::json!({
        "at_ms": at_ms,
        "per_ms": 3_600_000,
        "by": {"user": "mallory", "host": "elsewhere", "pid": 1},
    });
    env.zk().set(dir, record.to_string().as_bytes());
}

#[test]
fn a_recorded_run_more_than_the_window_ahead_is_not_believed_and_one_less_is() {
    let env = TestEnv::new();
    const HOUR_MS: i64 = 3_600_000;
    let once = |command: &str| {
        env.zklock([
            "-v",
            "-o",
            "json",
            "lock",
            "-E",
            "3",
            "--once-per",
            "1h",
            "f",
            "--",
            command,
        ])
        .json_log()
    };
    once("true").run().assert_success();
    // More than the window ahead: 2100 (with a run that fails), or a minute
    // past the bound.
    const IN_2100_MS: i64 = 4_102_444_800_000;
    for (ahead, command, ran) in [
        (None, "false", false),
        (Some(HOUR_MS + 60_000), "true", true),
    ] {
        let forged = ahead.map_or(IN_2100_MS, |ahead| server_now_ms(&env) + ahead);
        forge_run(&env, "/locks/f", forged);
        let mut running = once(command).spawn();
        let pid = running.pid();
        let run = running.wait(WAIT);
        run.assert_code(if ran { 0 } else { 1 });
        let ignored = events(&run, "future_run_ignored");
        assert_eq!(ignored.len(), 1, "{run:?}");
        assert_eq!(ignored[0]["ran_at_ms"], forged, "{run:?}");
        // Not written back: the run that counted now, or none.
        let last = ran_in(&env, "/locks/f");
        match ran {
            true => assert_eq!(last.map(|l| l["by"]["pid"].clone()), Some(pid.into())),
            false => assert_eq!(last, None),
        }
    }
    // Less than the window ahead: a new leader's clock may lag, so it is
    // believed, and the window stays closed until an hour after it.
    let forged = server_now_ms(&env) + HOUR_MS - 60_000;
    forge_run(&env, "/locks/f", forged);
    let run = once("true").run();
    run.assert_code(3);
    let error = json_error(&run.stderr);
    assert_eq!(error["window_opens_at_ms"], forged + HOUR_MS, "{error}");
    assert!(events(&run, "future_run_ignored").is_empty(), "{run:?}");
    assert_eq!(
        ran_in(&env, "/locks/f").map(|l| l["at_ms"].clone()),
        Some(forged.into())
    );
}

#[test]
fn a_closed_window_is_silent_off_a_terminal_and_a_short_line_on_one() {
    let env = TestEnv::new();
    // The guide's crontab line, on every host but the one that ran.
    let cron = env.zklock([
        "lock",
        "-E",
        "0",
        "--once-per",
        "55m",
        "report",
        "--",
        "true",
    ]);
    cron.run().assert_success();
    let suppressed = cron.run();
    suppressed.assert_success();
    assert_eq!(
        (suppressed.stdout.as_str(), suppressed.stderr.as_str()),
        ("", "")
    );
    // -v logs it.
    let logged = env
        .zklock([
            "-v",
            "lock",
            "-E",
            "0",
            "--once-per",
            "55m",
            "report",
            "--",
            "true",
        ])
        .json_log()
        .run();
    logged.assert_success();
    let told = events(&logged, "ran_recently");
    assert_eq!(told.len(), 1, "{logged:?}");
    assert_eq!(told[0]["lock"], "/locks/report", "{logged:?}");
    // At a terminal, besides the spinner of the (short) wait for the lock,
    // one line that names the lock.
    let shown: Vec<String> = shown_lines(&on_terminal(&cron, &[]).stdout)
        .into_iter()
        .filter(|line| !spinner_mark(line))
        .collect();
    assert_eq!(shown.len(), 1, "{shown:#?}");
    assert!(shown[0].contains("/locks/report"), "{shown:#?}");
}
