//! `--once-per`: a command run at most once per window across every
//! contender of its lock, the window on the server's clock, whatever the
//! contenders' own clocks say.

use crate::support;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use support::proxy::{ClientMessage, FaultProxy, op};
use support::{TestEnv, Zklock, wait_until};
use zookeeper_client as zkc;

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
    let args = ["lock", "-n", "--once-per", "1s", "f", "--", "true"];
    env.zklock(args).run().assert_code(1);
    let record: serde_json::Value =
        serde_json::from_slice(&env.zk().get("/locks/f").0).expect("a record");
    assert_eq!(record["zklock_end"]["how"], "gave_up", "{record}");
    assert_eq!(ran_in(&env, "/locks/f").as_ref(), Some(&last));
    // A give-up without the flag forgets it; the holder, stopped (a run
    // that does not count), writes back the run it found when it began.
    env.zklock(["lock", "-n", "f", "--", "true"])
        .run()
        .assert_code(1);
    assert_eq!(ran_in(&env, "/locks/f"), None);
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
    wait_until(WAIT, "the lease is taken", || {
        !env.zk().children_if_any("/locks/k").is_empty()
    });
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
fn without_the_flag_no_request_is_added_and_with_it_the_window_costs_a_read_and_a_write() {
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
    let plain = sent_by(&["lock", "p", "--", "true"]);
    assert!(
        !plain.contains(&op::GET_DATA) && !plain.contains(&op::SET_DATA),
        "a lock without --once-per read or wrote its directory: {plain:?}"
    );
    let once = sent_by(&["lock", "--once-per", "1h", "q", "--", "true"]);
    let count = |wanted: i32| once.iter().filter(|op| **op == wanted).count();
    // The window's read and write before the command, the read before the
    // end record.
    assert_eq!(
        (count(op::GET_DATA), count(op::SET_DATA)),
        (2, 1),
        "{once:?}"
    );
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
