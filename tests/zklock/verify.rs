//! `zklock verify` against real servers: a standalone server and a
//! three-member ensemble, every fault class injected into real holders; a
//! path that exists refused; Ctrl-C in the middle of a pause leaving no
//! node and no process; the proxy closing a connection that is no
//! holder's; the holders' credentials kept off their argv and environment.
//!
//! What is asserted is the verdict's JSON, the exit status, ZooKeeper's
//! state and the processes in /proc, never the wording of the report.
//! Short session timeouts (2 s) keep each run to seconds.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::support::json::Verdict;
use crate::support::{Running, TestEnv, ZkEnsemble, wait_for, wait_until};

/// A session timeout short enough for rounds of a few seconds.
const SESSION: &str = "2s";

/// How long a run of `duration` may take: its time, the round under way
/// then, and the cleanup.
fn within(duration: Duration) -> Duration {
    duration + Duration::from_secs(60)
}

/// `zklock verify` on `env` with a 2 s session, JSON out, and `args`.
fn verify(env: &TestEnv, args: &[&str]) -> crate::support::Zklock {
    env.zklock(["--session-timeout", SESSION, "-o", "json", "verify"])
        .args(args)
}

/// Fails unless `verdict` passed with every class asked for injected, each
/// cut and kill followed by a stop in time with positive margins, and the
/// path gone.
#[track_caller]
fn assert_passed_with_every_fault(env: &TestEnv, verdict: &Verdict) {
    assert!(verdict.passed, "{verdict:#?}");
    assert!(verdict.violations.is_empty(), "{:#?}", verdict.violations);
    assert_eq!(verdict.cut_short, None);
    assert_eq!(verdict.session_timeout_ms, 2000, "as granted");
    assert_eq!(verdict.kill_after_ms, 400, "a fifth of the session");
    for class in &verdict.faults {
        assert!(class.requested && class.injected >= 1, "{class:?}");
        if class.class != "pause" {
            assert_eq!(class.stopped_in_time, class.injected, "{class:?}");
            let margin = class.margin_to_expiry_ms.expect("a margin");
            assert!(margin.min > 0 && margin.min <= margin.median, "{class:?}");
        }
    }
    assert!(verdict.sections > verdict.injected.len(), "{verdict:#?}");
    assert!(
        env.zk().exists(&verdict.path).is_none(),
        "{} was removed",
        verdict.path
    );
}

#[test]
fn thirty_seconds_of_every_fault_on_a_standalone_server_find_no_violation() {
    let env = TestEnv::new();
    let mut running = verify(&env, &["--duration", "30s"]).spawn();
    let below = descendants_while(&mut running);
    let run = running.wait(within(Duration::from_secs(30)));
    run.assert_success();
    let verdict: Verdict = run.json();
    assert_eq!(verdict.mode, "exclusive");
    assert_eq!(verdict.contenders, 5);
    assert_passed_with_every_fault(&env, &verdict);
    assert_none_left(&below);
}

#[test]
fn thirty_seconds_of_every_fault_on_a_three_member_ensemble_find_no_violation() {
    let ensemble = ZkEnsemble::start(3);
    let env = TestEnv::with_ensemble(&ensemble);
    let run = verify(&env, &["--duration", "30s", "--mode", "rw"])
        .timeout(within(Duration::from_secs(30)))
        .run();
    run.assert_success();
    let verdict: Verdict = run.json();
    assert_eq!(verdict.mode, "rw");
    assert_passed_with_every_fault(&env, &verdict);
}

#[test]
fn a_path_that_exists_is_refused_and_left_as_it_was() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/mine/below");
    env.zk().set("/mine", b"keep");
    let before = env.zk().get("/mine").1;
    let run = verify(&env, &["--path", "/mine", "--duration", "30s"]).run();
    run.assert_code(2);
    let (data, after) = env.zk().get("/mine");
    assert_eq!(data, b"keep");
    assert_eq!(after, before, "not touched");
    assert_eq!(env.zk().children("/mine"), ["below"]);
}

#[test]
fn what_verify_cannot_run_is_refused_before_a_holder_starts() {
    let env = TestEnv::new();
    for contenders in ["1", "21"] {
        verify(&env, &["--contenders", contenders])
            .run()
            .assert_code(2);
    }
    // Its proxy must read the holders' connections.
    env.zklock(["--tls", "verify"]).run().assert_code(2);
    // One round per fault does not fit in 5 s of 2 s sessions.
    verify(&env, &["--duration", "5s"]).run().assert_code(2);
    assert!(
        env.zk().children_if_any("/locks").is_empty(),
        "no path was made"
    );
}

#[test]
fn a_node_verify_did_not_make_stops_the_run_and_is_left_alone() {
    let env = TestEnv::new();
    let mut running = verify(&env, &["--duration", "30s", "--faults", "kill", "-v"])
        .json_log()
        .spawn();
    let dir: String = wait_for(within(Duration::ZERO), "a round begins", || {
        running
            .log_events("round")
            .first()
            .and_then(|event| event["dir"].as_str().map(str::to_owned))
    });
    let stranger = format!("{dir}/someone-else-s");
    let made = std::time::Instant::now();
    env.zk().create(&stranger, b"theirs");
    let run = running.wait(Duration::from_secs(30));
    run.assert_code(1);
    assert!(
        made.elapsed() < Duration::from_secs(15),
        "stopped {:?} after the node appeared, not at its 30 s end",
        made.elapsed()
    );
    let verdict: Verdict = run.json();
    assert!(
        verdict
            .cut_short
            .as_deref()
            .is_some_and(|why| why.contains(&stranger)),
        "{verdict:#?}"
    );
    assert_eq!(env.zk().get(&stranger).0, b"theirs", "left alone");
}

#[test]
fn ctrl_c_in_a_pause_continues_what_was_stopped_and_leaves_no_node_or_process() {
    let env = TestEnv::new();
    let mut running = verify(&env, &["--duration", "60s", "--faults", "pause", "-v"])
        .json_log()
        .spawn();
    let verify_pid = running.pid() as i32;
    wait_until(within(Duration::ZERO), "a holder is paused", || {
        descendants(verify_pid)
            .iter()
            .any(|process| process.stopped)
    });
    let below = descendants(verify_pid);
    let interrupted = std::time::Instant::now();
    running.signal(libc::SIGINT);
    let run = running.wait(Duration::from_secs(30));
    // Continued, the paused holder lets go at once; left stopped, it would
    // hold verify for its whole grace (--kill-after, a session timeout and
    // 5 s: 7.4 s here) and then be killed.
    assert!(
        interrupted.elapsed() < Duration::from_secs(5),
        "verify took {:?} to put things back",
        interrupted.elapsed()
    );
    // It dies of the signal, as zklock does after Ctrl-C, once all is put
    // back, and says why in its verdict.
    run.assert_died_of(libc::SIGINT);
    let verdict: Verdict = run.json();
    assert!(!verdict.passed);
    assert!(
        verdict
            .cut_short
            .as_deref()
            .is_some_and(|why| why.contains("SIGINT"))
    );
    assert_none_left(&below);
    assert!(
        env.zk().children_if_any("/locks").is_empty(),
        "no node left"
    );
}

#[test]
fn the_proxy_closes_a_connection_that_is_no_holder_s_unread() {
    let env = TestEnv::new();
    let mut running = verify(&env, &["--duration", "12s", "--faults", "kill", "-v"])
        .json_log()
        .spawn();
    let address: String = wait_for(within(Duration::ZERO), "the proxy listens", || {
        running
            .log_events("proxy_listening")
            .first()
            .and_then(|event| event["address"].as_str().map(str::to_owned))
    });
    // While holders run: their connections are relayed, this one must not be.
    let verify_pid = running.pid() as i32;
    wait_until(within(Duration::ZERO), "holders run", || {
        descendants(verify_pid).len() >= 5
    });
    let mut stranger = TcpStream::connect(&address).expect("connect to the proxy");
    stranger
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // A ConnectRequest, as any client's first words: relayed, the server
    // would answer with a session.
    let mut request = Vec::new();
    request.extend_from_slice(&0i32.to_be_bytes());
    request.extend_from_slice(&0i64.to_be_bytes());
    request.extend_from_slice(&2000i32.to_be_bytes());
    request.extend_from_slice(&0i64.to_be_bytes());
    request.extend_from_slice(&16i32.to_be_bytes());
    request.extend_from_slice(&[0; 16]);
    let mut frame = (request.len() as i32).to_be_bytes().to_vec();
    frame.extend(request);
    let _ = stranger.write_all(&frame);
    let mut answer = [0u8; 64];
    match stranger.read(&mut answer) {
        Ok(0) => {}
        Err(err) if err.kind() == std::io::ErrorKind::ConnectionReset => {}
        other => panic!("the proxy answered a stranger: {other:?} {answer:?}"),
    }
    let run = running.wait(within(Duration::from_secs(12)));
    run.assert_success();
    let verdict: Verdict = run.json();
    assert!(verdict.passed, "{verdict:#?}");
    assert_eq!(verdict.refused_connections, 1);
}

#[test]
fn the_holders_get_their_credentials_over_a_pipe_never_in_argv_or_environment() {
    let env = TestEnv::new();
    let secret = format!("S3CRET-{}", std::process::id());
    let auth = format!("digest:verifier:{secret}");
    // Only the holders' identity may make nodes in the round's directory:
    // a holder without the credentials could not queue.
    let mut running = env
        .zklock(["--session-timeout", SESSION, "-o", "json", "--auth", &auth])
        .args(["--acl", "creator-only", "verify", "--duration", "12s"])
        .args(["--faults", "kill"])
        .spawn();
    let verify_pid = running.pid() as i32;
    let mut looked = 0;
    wait_until(within(Duration::ZERO), "verify ends", || {
        // A child between its fork and its exec is still verify itself.
        let below = descendants(verify_pid).into_iter().filter(|process| {
            let cmdline =
                std::fs::read(format!("/proc/{}/cmdline", process.pid)).unwrap_or_default();
            !cmdline
                .split(|byte| *byte == 0)
                .any(|word| word == b"verify")
        });
        for process in below {
            // zklock blots an --auth value in its own argv and wipes
            // ZKLOCK_AUTH in its own environment as it starts: their names
            // stay, and would tell that the secret went that way.
            for (file, name) in [("cmdline", "--auth"), ("environ", "ZKLOCK_AUTH=")] {
                let text =
                    std::fs::read(format!("/proc/{}/{file}", process.pid)).unwrap_or_default();
                let text = String::from_utf8_lossy(&text);
                assert!(
                    !text.contains(&secret) && !text.contains(name),
                    "the secret went by the {file} of process {}: {text:?}",
                    process.pid
                );
                looked += 1;
            }
        }
        !running.is_running()
    });
    assert!(looked > 20, "the holders were looked at ({looked} files)");
    let run = running.wait(Duration::ZERO);
    run.assert_success();
    let verdict: Verdict = run.json();
    assert!(verdict.passed, "{verdict:#?}");
}

/// A process below verify, seen at one moment.
#[derive(Clone, Copy, Debug)]
struct Below {
    pid: i32,
    /// Its start time (clock ticks since boot): a pid given again later is
    /// another process.
    started: u64,
    stopped: bool,
}

/// `/proc/PID/stat`'s state, parent and start time.
fn stat_of(pid: i32) -> Option<(char, i32, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    Some((
        state,
        fields.get(1)?.parse().ok()?,
        fields.get(19)?.parse().ok()?,
    ))
}

/// Every process below `pid` now.
fn descendants(pid: i32) -> Vec<Below> {
    let all: Vec<(i32, char, i32, u64)> = std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter_map(|pid| {
            stat_of(pid).map(|(state, parent, started)| (pid, state, parent, started))
        })
        .collect();
    let mut found: Vec<Below> = Vec::new();
    let mut parents = vec![pid];
    while let Some(parent) = parents.pop() {
        for &(child, state, _, started) in all.iter().filter(|(_, _, p, _)| *p == parent) {
            found.push(Below {
                pid: child,
                started,
                stopped: state == 'T',
            });
            parents.push(child);
        }
    }
    found
}

/// The processes seen below a running verify until it ends (every holder
/// it started, with its guard and section, as far as a look at the
/// process table every few milliseconds catches them).
fn descendants_while(running: &mut Running) -> Vec<Below> {
    let verify_pid = running.pid() as i32;
    let mut seen: Vec<Below> = Vec::new();
    while running.is_running() {
        for process in descendants(verify_pid) {
            if !seen
                .iter()
                .any(|s| s.pid == process.pid && s.started == process.started)
            {
                seen.push(process);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(seen.len() > 10, "holders were seen below verify: {seen:?}");
    seen
}

/// Fails if any of `processes` is still there.
#[track_caller]
fn assert_none_left(processes: &[Below]) {
    let left: Vec<&Below> = processes
        .iter()
        .filter(|process| {
            stat_of(process.pid).is_some_and(|(state, _, started)| {
                started == process.started && !matches!(state, 'Z' | 'X')
            })
        })
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
