//! `zklock sem`: leases of one semaphore shared with the real Curator
//! (`InterProcessSemaphoreV2`) and kazoo (`Semaphore`) clients. Every
//! critical section logs its start and end to one fencing log, which shows
//! how many ran at once.

use crate::support;

use std::time::{Duration, Instant};

use support::fencing::{self, FenceLog, FencedCommand};
use support::peers::{self, Library, acquired, peer};
use support::proxy::FaultProxy;
use support::{
    Lock, Running, Scratch, TestEnv, Zklock, assert_lease_ran_its_course, process_alive, wait_until,
};

const WAIT: Duration = Duration::from_secs(60);
/// A section that lasts until its holder is stopped.
const FOREVER: &str = "sleep 600";

/// The two layouts zklock takes leases in, with the library that shares it.
const LAYOUTS: [(Library, &str); 2] = [(Library::Curator, "curator"), (Library::Kazoo, "kazoo")];

/// `zklock -v sem --dialect DIALECT NAME --max-leases MAX OPTIONS...`.
fn sem(env: &TestEnv, name: &str, max: u32, dialect: &str, options: &[&str]) -> Zklock {
    let max = max.to_string();
    env.zklock([
        "-v",
        "sem",
        "--dialect",
        dialect,
        name,
        "--max-leases",
        &max,
    ])
    .json_log()
    .args(options)
}

/// [`sem`] running the fenced section of `who` around `body`.
fn fenced(
    env: &TestEnv,
    log: &FenceLog,
    name: &str,
    max: u32,
    dialect: &str,
    who: &str,
    body: &str,
) -> Zklock {
    sem(env, name, max, dialect, &[])
        .arg("--")
        .args(log.command(who, body))
}

/// The nodes a semaphore at `/locks/NAME` keeps while anyone holds or waits:
/// its leases and its internal mutex's contenders.
fn nodes_of(env: &TestEnv, name: &str, dialect: &str) -> Vec<String> {
    let zk = env.zk();
    let dirs = match dialect {
        "kazoo" => [format!("/locks/{name}"), format!("/locks/{name}-__lock__")],
        _ => [
            format!("/locks/{name}/leases"),
            format!("/locks/{name}/locks"),
        ],
    };
    dirs.iter()
        .flat_map(|dir| zk.children_if_any(dir))
        .collect()
}

fn assert_nothing_left(env: &TestEnv, name: &str, dialect: &str) {
    wait_until(WAIT, "every lease and mutex node is gone", || {
        nodes_of(env, name, dialect).is_empty()
    });
}

/// `peers` library clients, each taking a lease `loops` times, and
/// `zklocks` zklock holders, all on one semaphore of `max` leases with
/// sections of 200 ms: never more than `max` at once, every section runs,
/// nothing is left behind. Returns the largest concurrency the log shows.
fn share_a_semaphore(
    library: Library,
    dialect: &str,
    max: u32,
    peers: usize,
    loops: usize,
    zklocks: usize,
) -> usize {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let log = FenceLog::new(&scratch);
    let log_path = log.path().display().to_string();
    let max_text = max.to_string();
    let loops_text = loops.to_string();
    let peer_options = [
        "--max-leases",
        &max_text,
        "--loops",
        &loops_text,
        "--hold-ms",
        "200",
        "--log",
        &log_path,
    ];
    let library_clients: Vec<Running> = (0..peers)
        .map(|_| peer(&env, library, "/locks/s", "semaphore", &peer_options))
        .collect();
    let zklock_clients: Vec<Running> = (0..zklocks)
        .map(|i| {
            fenced(
                &env,
                &log,
                "s",
                max,
                dialect,
                &format!("zklock-{i}"),
                "sleep 0.2",
            )
            .spawn()
        })
        .collect();
    for mut client in library_clients.into_iter().chain(zklock_clients) {
        client.wait(WAIT).assert_success();
    }
    let (most, sections) = log.assert_concurrency();
    assert_eq!(
        sections,
        peers * loops + zklocks,
        "every section ran\n{}",
        log.text()
    );
    assert!(
        most <= max as usize,
        "{most} sections at once on a semaphore of {max}\n{}",
        log.text()
    );
    assert_nothing_left(&env, "s", dialect);
    eprintln!(
        "{library:?} and zklock, {max} leases: at most {most} sections at once, {sections} in all"
    );
    most
}

#[test]
fn zklock_and_curator_never_exceed_the_leases_together() {
    let most = share_a_semaphore(Library::Curator, "curator", 2, 3, 3, 4);
    assert_eq!(most, 2, "the leases were contended: two were held at once");
}

#[test]
fn zklock_and_kazoo_never_exceed_the_leases_together() {
    let most = share_a_semaphore(Library::Kazoo, "kazoo", 2, 3, 3, 4);
    assert_eq!(most, 2, "the leases were contended: two were held at once");
}

/// The library's lease holder, one of `max`, once it holds.
fn library_holds(env: &TestEnv, library: Library, name: &str, max: u32) -> Running {
    let max = max.to_string();
    let mut holder = peer(
        env,
        library,
        &format!("/locks/{name}"),
        "semaphore",
        &["--max-leases", &max],
    );
    acquired(&mut holder, WAIT);
    holder
}

#[test]
fn no_free_lease_gives_the_conflict_code_and_leaves_nothing() {
    for (library, dialect) in LAYOUTS {
        let env = TestEnv::new();
        let holder = library_holds(&env, library, "c", 1);
        let before = nodes_of(&env, "c", dialect);
        sem(&env, "c", 1, dialect, &["-n", "--", "true"])
            .run()
            .assert_code(1);
        sem(&env, "c", 1, dialect, &["-n", "-E", "75", "--", "true"])
            .run()
            .assert_code(75);
        sem(&env, "c", 1, dialect, &["-w", "300ms", "--", "true"])
            .run()
            .assert_code(1);
        assert_eq!(
            nodes_of(&env, "c", dialect),
            before,
            "{dialect}: our nodes are gone"
        );
        if library == Library::Curator {
            // Curator keeps no record of the size: a client that says two
            // takes a second lease.
            sem(&env, "c", 2, dialect, &["-n", "--", "true"])
                .run()
                .assert_success();
        }
        peers::release(holder);
        sem(&env, "c", 1, dialect, &["-n", "--", "true"])
            .run()
            .assert_success();
        assert_nothing_left(&env, "c", dialect);
    }
}

#[test]
fn a_waiter_gets_the_lease_a_library_client_lets_go() {
    for (library, dialect) in LAYOUTS {
        let env = TestEnv::new();
        let holder = library_holds(&env, library, "w", 1);
        let mut waiter = sem(&env, "w", 1, dialect, &["--", "true"]).spawn();
        wait_until(WAIT, "zklock waits for a lease", || {
            !waiter.log_events("waiting_for_lease").is_empty()
                || !waiter.log_events("waiting").is_empty()
        });
        assert!(
            waiter.is_running(),
            "{dialect}: zklock waits while the lease is taken"
        );
        peers::release(holder);
        waiter.wait(WAIT).assert_success();
        assert_nothing_left(&env, "w", dialect);
    }
}

#[test]
fn kazoo_max_leases_that_differ_are_refused_with_the_stored_number() {
    let env = TestEnv::new();
    let holder = library_holds(&env, Library::Kazoo, "k", 5);
    let run = sem(&env, "k", 3, "kazoo", &["--", "true"]).run();
    run.assert_code(2).assert_stderr_contains("5");
    assert_eq!(
        env.zk().get("/locks/k").0,
        b"5",
        "the stored number is kept"
    );
    assert_eq!(nodes_of(&env, "k", "kazoo").len(), 1, "only kazoo's lease");
    peers::release(holder);
    // zklock makes the semaphore node with its number, and kazoo checks it.
    sem(&env, "fresh", 4, "kazoo", &["--", "true"])
        .run()
        .assert_success();
    assert_eq!(env.zk().get("/locks/fresh").0, b"4");
    let mut kept_out = peer(
        &env,
        Library::Kazoo,
        "/locks/fresh",
        "semaphore",
        &["--max-leases", "2"],
    );
    kept_out.wait(WAIT).assert_code(2);
}

/// A zklock lease holder running a section until it is stopped.
fn zklock_holds(
    env: &TestEnv,
    log: &FenceLog,
    name: &str,
    dialect: &str,
    hosts: Option<&str>,
    options: &[&str],
) -> (Running, FencedCommand) {
    let mut zklock = sem(env, name, 2, dialect, options);
    if let Some(hosts) = hosts {
        zklock = zklock.hosts(hosts);
    }
    fencing::holder(zklock.arg("--").args(log.command("holder", FOREVER)))
}

#[test]
fn a_deleted_lease_stops_the_command_with_exit_4() {
    for (_, dialect) in LAYOUTS {
        let env = TestEnv::new();
        let scratch = Scratch::new();
        let log = FenceLog::new(&scratch);
        let (mut holder, fenced) = zklock_holds(&env, &log, "d", dialect, None, &[]);
        assert_eq!(
            fenced.fence,
            env.zk().get(&fenced.node).1.czxid,
            "ZKLOCK_FENCE is the lease's czxid"
        );
        env.zk().delete(&fenced.node);
        holder.wait(WAIT).assert_code(4);
        assert!(
            !process_alive(fenced.pid),
            "{dialect}: the command was stopped"
        );
        let (_, sections) = log.assert_concurrency();
        assert_eq!(sections, 1);
        assert_nothing_left(&env, "d", dialect);
    }
}

#[test]
fn a_lost_session_stops_the_command_with_exit_4() {
    for (_, dialect) in LAYOUTS {
        let env = TestEnv::new();
        let scratch = Scratch::new();
        let log = FenceLog::new(&scratch);
        let proxy = FaultProxy::start(&support::shared_server().address());
        let through_proxy = proxy.hosts(&env);
        let options = ["--session-timeout", "3s", "--kill-after", "1s"];
        let (mut holder, fenced) =
            zklock_holds(&env, &log, "e", dialect, Some(&through_proxy), &options);
        proxy.freeze();
        holder.wait(WAIT).assert_code(4);
        assert!(
            !process_alive(fenced.pid),
            "{dialect}: the command was stopped"
        );
        // The server expires the cut-off session, and its lease with it.
        assert_nothing_left(&env, "e", dialect);
        proxy.pass();
    }
}

#[test]
fn stat_ls_and_reap_handle_zklock_leases_as_the_libraries_leases() {
    for (library, dialect) in LAYOUTS {
        let env = TestEnv::new();
        let scratch = Scratch::new();
        let log = FenceLog::new(&scratch);
        let peer_holder = library_holds(&env, library, "r", 2);
        let (mut holder, fenced) = zklock_holds(&env, &log, "r", dialect, None, &[]);
        let mut waiter = sem(&env, "r", 2, dialect, &["--", "true"]).spawn();
        wait_until(WAIT, "zklock waits for a lease", || {
            !waiter.log_events("waiting_for_lease").is_empty()
                || !waiter.log_events("waiting").is_empty()
        });
        let lock: Lock = env
            .zklock(["-o", "json", "stat", "r"])
            .run()
            .assert_success()
            .json();
        assert_eq!(lock.kind, "semaphore");
        assert_eq!(
            lock.holders.len(),
            2,
            "{dialect}: both leases hold: {lock:?}"
        );
        assert!(lock.holders.iter().all(|h| h.mode == "lease"), "{lock:?}");
        let ours = lock
            .holders
            .iter()
            .find(|h| h.path == fenced.node)
            .expect("our lease is shown");
        assert!(
            ours.owner.is_some(),
            "zklock's owner record is read: {ours:?}"
        );
        assert_eq!(ours.fence, fenced.fence);
        let listed: Vec<Lock> = env
            .zklock(["-o", "json", "ls"])
            .run()
            .assert_success()
            .json();
        assert!(
            listed
                .iter()
                .any(|l| l.path == "/locks/r" && l.holders.len() == 2),
            "{listed:?}"
        );
        // Reaping the semaphore deletes every lease: ours is lost (exit 4)
        // and the waiter gets in.
        let session = fenced.session.clone();
        env.zklock(["reap", "--session", &session, "--yes", "r"])
            .run()
            .assert_success();
        holder.wait(WAIT).assert_code(4);
        waiter.wait(WAIT).assert_success();
        peers::release(peer_holder);
        assert_nothing_left(&env, "r", dialect);
    }
}

#[test]
fn a_waiter_stopped_by_a_signal_leaves_nothing_and_the_next_gets_in() {
    for (library, dialect) in LAYOUTS {
        let env = TestEnv::new();
        let holder = library_holds(&env, library, "s", 1);
        let before = nodes_of(&env, "s", dialect);
        // The first waiter holds the internal mutex (with Curator, its lease
        // waits too); the second queues behind it.
        let mut first = sem(&env, "s", 1, dialect, &["--", "true"]).spawn();
        wait_until(WAIT, "the first waiter waits for a lease", || {
            !first.log_events("waiting_for_lease").is_empty()
        });
        let mut second = sem(&env, "s", 1, dialect, &["--", "true"]).spawn();
        wait_until(WAIT, "the second waiter queues on the mutex", || {
            !second.log_events("waiting").is_empty()
        });
        first.signal(libc::SIGTERM);
        first.wait(WAIT).assert_code(128 + libc::SIGTERM);
        wait_until(WAIT, "the first waiter's nodes are gone", || {
            let mut nodes = nodes_of(&env, "s", dialect);
            // The second waiter now holds the mutex: one node of its own
            // (and with Curator, its waiting lease).
            nodes.retain(|node| !before.contains(node));
            nodes.len() == if library == Library::Curator { 2 } else { 1 }
        });
        assert!(second.is_running(), "{dialect}: the lease is still taken");
        peers::release(holder);
        second.wait(WAIT).assert_success();
        assert_nothing_left(&env, "s", dialect);
    }
}

#[test]
fn the_spinner_shows_the_leases_and_their_holders() {
    let env = TestEnv::new();
    let holder = sem(&env, "t", 1, "curator", &["--data", "holder-7", "--detach"]).run();
    holder.assert_success();
    let token = holder.stdout.trim().to_owned();
    // At a terminal the waiter shows the lease taken by the holder's owner
    // record until its patience runs out.
    let waiter = env.zklock(["sem", "-w", "3s", "t", "--max-leases", "1", "--", "true"]);
    let steps = ["expect:1 of 1 lease taken", "expect:holder-7"];
    crate::terminal::on_terminal(&waiter, &steps).assert_code(1);
    env.zklock(["release", &token]).run().assert_success();
    assert_nothing_left(&env, "t", "curator");
}

#[test]
fn a_detached_lease_holds_until_released_or_its_lease_ends() {
    for (_, dialect) in LAYOUTS {
        let env = TestEnv::new();
        let grant: serde_json::Value = env
            .zklock([
                "-o",
                "json",
                "sem",
                "--dialect",
                dialect,
                "h",
                "--max-leases",
                "1",
            ])
            .arg("--detach")
            .run()
            .assert_success()
            .json();
        let token = grant["token"].as_str().expect("a token").to_owned();
        let (_, stat) = env.zk().get(&token);
        assert_eq!(
            grant["fence"], stat.czxid,
            "{dialect}: the fence is the lease's czxid"
        );
        assert_eq!(grant["lock"], "/locks/h");
        sem(&env, "h", 1, dialect, &["-n", "--", "true"])
            .run()
            .assert_code(1);
        env.zklock(["release", &token]).run().assert_success();
        assert_nothing_left(&env, "h", dialect);
        let asked = Instant::now();
        sem(&env, "h", 1, dialect, &["--detach", "--lease", "1s"])
            .run()
            .assert_success();
        assert_eq!(
            nodes_of(&env, "h", dialect).len(),
            1,
            "{dialect}: the lease is held"
        );
        assert_nothing_left(&env, "h", dialect);
        assert_lease_ran_its_course(asked.elapsed(), Duration::from_secs(1));
    }
}

#[test]
fn watch_follows_zklock_leases_beside_the_libraries() {
    for (library, dialect) in LAYOUTS {
        let env = TestEnv::new();
        let peer_holder = library_holds(&env, library, "v", 2);
        let mut watching = env.zklock(["-o", "json", "watch", "v"]).spawn();
        let next_event = |watching: &mut Running| -> serde_json::Value {
            let line = watching.next_line(WAIT);
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"))
        };
        while next_event(&mut watching)["event"] != "watching" {}
        let token = sem(&env, "v", 2, dialect, &["--detach"])
            .run()
            .assert_success()
            .stdout
            .trim()
            .to_owned();
        let acquired = loop {
            let event = next_event(&mut watching);
            if event["event"] == "acquired" {
                break event;
            }
        };
        assert_eq!(acquired["node"], token.as_str(), "{dialect}: {acquired}");
        env.zklock(["release", &token]).run().assert_success();
        let released = loop {
            let event = next_event(&mut watching);
            if event["event"] == "released" {
                break event;
            }
        };
        assert_eq!(released["node"], token.as_str(), "{dialect}: {released}");
        watching.signal(libc::SIGTERM);
        peers::release(peer_holder);
    }
}
