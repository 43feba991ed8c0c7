//! reap against a real ZooKeeper: what it selects (age, session, all, empty
//! lock directories), what it never touches, the confirmation it needs,
//! nodes that change between reading and deleting, and the holder that
//! loses its lock.

use crate::support;

use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::json::{ReapDryRun, ReapReport};
use support::peers::{self, Library, acquired, peer};
use support::proxy::{FaultProxy, Trigger, op};
use support::{TestEnv, Zk, wait_until};
use zklock::admin::reap::{self, Selector};
use zklock::zk::{self, ConnectOptions, Hosts, RetryPolicy};
use zookeeper_client as zkc;

const WAIT: Duration = Duration::from_secs(20);

/// Creates `n` ephemeral-sequential contenders `DIR/lock-N` on `zk`'s
/// session, making `dir` first; returns their paths.
fn contenders(zk: &Zk, dir: &str, n: usize) -> Vec<String> {
    zk.mkdir_p(dir);
    (0..n)
        .map(|_| zk.create_ephemeral_sequential(&format!("{dir}/lock-"), b""))
        .collect()
}

fn exists(env: &TestEnv, path: &str) -> bool {
    env.zk().exists(path).is_some()
}

fn reap_json(env: &TestEnv, args: &[&str]) -> ReapReport {
    env.zklock(["-o", "json", "reap"])
        .args(args)
        .run()
        .assert_success()
        .json()
}

fn sorted(mut paths: Vec<String>) -> Vec<String> {
    paths.sort();
    paths
}

#[test]
fn dry_run_lists_and_deletes_nothing() {
    let env = TestEnv::new();
    let holder = env.connect();
    let nodes = contenders(&holder, "/locks/d", 2);
    let run = env
        .zklock(["-o", "json", "reap", "--all", "--dry-run"])
        .run();
    run.assert_success();
    let plan: ReapDryRun = run.json();
    let listed: Vec<(&str, &str)> = plan
        .would_delete
        .iter()
        .map(|n| (n.path.as_str(), n.what.as_str()))
        .collect();
    // Waiters go first, from the back of the queue, then the holder.
    assert_eq!(
        listed,
        [(nodes[1].as_str(), "waiter"), (nodes[0].as_str(), "holder")]
    );
    assert_eq!(plan.would_delete[0].session, Some(holder.session_hex()));
    assert_eq!(plan.would_delete[0].lock, "/locks/d");
    assert!(plan.deleted.is_empty() && plan.skipped.is_empty());
    assert!(nodes.iter().all(|node| exists(&env, node)));

    env.zklock(["reap", "--all", "--dry-run"])
        .run()
        .assert_success()
        .assert_stdout_contains("would delete 1 holder, 1 waiter")
        .assert_stdout_contains(&nodes[1]);
}

#[test]
fn without_yes_and_without_a_terminal_nothing_is_deleted() {
    let env = TestEnv::new();
    let holder = env.connect();
    let nodes = contenders(&holder, "/locks/t", 1);
    env.zklock(["reap", "--all"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("without --yes");
    assert!(exists(&env, &nodes[0]));
    let report = reap_json(&env, &["--all", "--yes"]);
    assert_eq!(report.deleted, nodes);
    assert!(!exists(&env, &nodes[0]));
}

#[test]
fn a_selector_or_empty_is_required() {
    let env = TestEnv::new();
    env.zklock(["reap"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("say what to reap");
    env.zklock(["reap", "--all", "--session", "0x1"])
        .run()
        .assert_code(2);
    env.zklock(["reap", "--session", "nobody", "--yes"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("bad session id");
}

#[test]
fn older_than_spares_young_nodes() {
    let env = TestEnv::new();
    let holder = env.connect();
    let old = contenders(&holder, "/locks/age", 2);
    let (_, stat) = env.zk().get(&old[1]);
    wait_until(WAIT, "the first nodes are 2.5 s old", || {
        zklock::output::now_ms() - stat.ctime >= 2500
    });
    let young = contenders(&holder, "/locks/age", 2);
    let report = reap_json(&env, &["--older-than", "2s", "--yes"]);
    assert_eq!(sorted(report.deleted), old);
    assert!(young.iter().all(|node| exists(&env, node)));
}

#[test]
fn session_picks_one_sessions_nodes_in_hex_or_decimal() {
    let env = TestEnv::new();
    let dead = env.connect();
    let alive = env.connect();
    let stale = contenders(&dead, "/locks/s", 1);
    let live = contenders(&alive, "/locks/s", 1);
    let more_stale = contenders(&dead, "/locks/s2", 1);
    let report = reap_json(&env, &["--session", &dead.session_hex(), "--yes", "s"]);
    assert_eq!(report.deleted, stale, "only under PATH");
    assert!(exists(&env, &live[0]) && exists(&env, &more_stale[0]));
    let decimal = dead.session_id().to_string();
    let report = reap_json(&env, &["--session", &decimal, "--yes"]);
    assert_eq!(report.deleted, more_stale);
    assert!(exists(&env, &live[0]));
}

#[test]
fn nodes_that_are_not_contenders_are_never_deleted_even_in_a_lock_directory() {
    let env = TestEnv::new();
    let holder = env.connect();
    let nodes = contenders(&holder, "/locks/mixed", 2);
    let zk = env.zk();
    zk.create("/locks/mixed/config", b"keep me");
    zk.create("/locks/mixed/notes", b"");
    zk.create("/locks/mixed/notes/readme", b"");
    zk.create("/locks/mixed/lock", b"");
    zk.create("/locks/mixed/lock-latest", b"");
    let report = reap_json(&env, &["--all", "--empty", "--yes"]);
    assert_eq!(sorted(report.deleted), nodes);
    for kept in [
        "/locks/mixed",
        "/locks/mixed/config",
        "/locks/mixed/notes/readme",
        "/locks/mixed/lock",
        "/locks/mixed/lock-latest",
    ] {
        assert!(exists(&env, kept), "{kept} was deleted");
    }

    // Named like a contender, but with a child: no contender node after
    // all. The delete finds the child and leaves it alone (exit 10).
    zk.mkdir_p("/locks/odd/lock-0000000009/data");
    let run = env
        .zklock(["-o", "json", "reap", "--all", "--yes", "odd"])
        .run();
    run.assert_code(10);
    let report: ReapReport = run.json();
    assert!(report.deleted.is_empty());
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(report.skipped[0].path, "/locks/odd/lock-0000000009");
    assert!(report.skipped[0].reason.contains("no contender node"));
    assert!(exists(&env, "/locks/odd/lock-0000000009/data"));
}

#[test]
fn empty_removes_empty_lock_directories_and_nothing_else() {
    let env = TestEnv::new();
    let zk = env.zk();
    // A persistent lock directory whose contenders are gone (as kazoo and
    // HBase leave them).
    let abandoned = env.connect();
    contenders(&abandoned, "/locks/old/a", 1);
    contenders(&abandoned, "/locks/old/b", 1);
    abandoned.close();
    // Not lock directories: never had a child, holds data, holds a child.
    zk.mkdir_p("/locks/fresh");
    zk.create("/locks/config", b"");
    zk.set("/locks/config", b"x");
    zk.create("/locks/config/sub", b"");
    zk.delete("/locks/config/sub");
    zk.mkdir_p("/locks/busy/inner");
    let holder = env.connect();
    let live = contenders(&holder, "/locks/live", 1);

    let report = reap_json(&env, &["--empty", "--yes"]);
    assert_eq!(sorted(report.deleted), ["/locks/old/a", "/locks/old/b"]);
    for kept in [
        "/locks",
        "/locks/old",
        "/locks/fresh",
        "/locks/config",
        "/locks/busy/inner",
        &live[0],
    ] {
        assert!(exists(&env, kept), "{kept} was deleted");
    }
}

#[test]
fn empty_with_a_selector_deletes_the_directories_it_empties() {
    let env = TestEnv::new();
    let holder = env.connect();
    let gone = contenders(&holder, "/locks/e/done", 2);
    let kept = contenders(&holder, "/locks/e/busy", 1);
    env.zk().create("/locks/e/busy/config", b"");
    let run = env
        .zklock(["-o", "json", "reap", "--all", "--empty", "--dry-run", "e"])
        .run();
    let plan: ReapDryRun = run.assert_success().json();
    let what: Vec<(&str, &str)> = plan
        .would_delete
        .iter()
        .map(|n| (n.path.as_str(), n.what.as_str()))
        .collect();
    assert_eq!(what.len(), 4, "{what:?}");
    assert_eq!(what[3], ("/locks/e/done", "empty-directory"));
    let report = reap_json(&env, &["--all", "--empty", "--yes", "e"]);
    let mut expected = vec![gone[0].clone(), gone[1].clone(), kept[0].clone()];
    expected.push("/locks/e/done".to_owned());
    assert_eq!(sorted(report.deleted), sorted(expected));
    assert!(exists(&env, "/locks/e/busy/config"));
}

/// A session of zklock's own, for driving its reap core directly.
fn session(env: &TestEnv) -> (tokio::runtime::Runtime, zk::Session) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let options = ConnectOptions {
        hosts: Hosts::parse(&env.hosts()).expect("hosts"),
        session_timeout: Duration::from_secs(10),
        connect_timeout: Duration::from_secs(10),
        auth: Vec::new(),
        read_only: false,
        retry: RetryPolicy::new(5),
    };
    let session = runtime.block_on(zk::connect(&options)).expect("connect");
    (runtime, session)
}

#[test]
fn a_node_that_changes_between_reading_and_deleting_is_left_alone() {
    let env = TestEnv::new();
    let holder = env.connect();
    let nodes = contenders(&holder, "/locks/v", 3);
    env.zk().mkdir_p("/locks/v2/x");
    env.zk().delete("/locks/v2/x");
    let (runtime, session) = session(&env);
    let all = Selector {
        all: true,
        ..Selector::default()
    };
    let plan = runtime
        .block_on(reap::plan(&session, "/locks", "/locks", all, true, |_| {}))
        .expect("plan");
    // Three contenders, the directory they leave empty, and /locks/v2.
    assert_eq!(plan.nodes.len(), 5, "{:#?}", plan.nodes);
    // Between the reading and the deleting: a holder's data is written
    // (its version moves on), another contender goes, and the empty
    // directory gets a child.
    holder.set(&nodes[0], b"still here");
    holder.delete(&nodes[2]);
    env.zk().create("/locks/v2/new", b"");
    let reaped = runtime
        .block_on(reap::execute(&session, &plan.nodes, |_| {}))
        .expect("execute");
    assert_eq!(reaped.deleted, [nodes[1].clone()]);
    assert_eq!(reaped.gone, [nodes[2].clone()]);
    let mut skipped: Vec<(&str, &str)> = reaped
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.reason.as_str()))
        .collect();
    skipped.sort();
    assert_eq!(
        skipped,
        [
            ("/locks/v", "it is not empty any more"),
            (nodes[0].as_str(), "it changed since it was read"),
            ("/locks/v2", "it is not empty any more"),
        ]
    );
    assert!(exists(&env, &nodes[0]) && exists(&env, "/locks/v2/new"));
    runtime.block_on(session.close());
}

#[test]
fn a_live_zklock_holder_whose_node_is_reaped_stops_its_command_and_exits_4() {
    let env = TestEnv::new();
    let mut holder = env
        .zklock(["lock", "live", "--", "sh", "-c", "echo $$; exec sleep 1000"])
        .spawn();
    let pid: i32 = holder.next_line(WAIT).parse().expect("pid");
    let report = reap_json(&env, &["--all", "--yes", "live"]);
    assert_eq!(report.deleted.len(), 1, "{report:?}");
    holder
        .wait(WAIT)
        .assert_code(4)
        .assert_stderr_contains("deleted");
    wait_until(WAIT, "the command is stopped", || {
        !support::process_alive(pid)
    });
}

#[test]
fn curator_and_kazoo_contenders_are_reaped_by_session() {
    let env = TestEnv::new();
    let mut curator = peer(&env, Library::Curator, "/locks/cur", "mutex", &[]);
    let curator_node = acquired(&mut curator, WAIT);
    let mut kazoo = peer(&env, Library::Kazoo, "/locks/kaz", "mutex", &[]);
    let kazoo_node = acquired(&mut kazoo, WAIT);
    let session = |node: &str| format!("0x{:x}", env.zk().get(node).1.ephemeral_owner);
    let report = reap_json(&env, &["--session", &session(&curator_node), "--yes"]);
    assert_eq!(report.deleted, [curator_node]);
    let report = reap_json(&env, &["--session", &session(&kazoo_node), "--yes"]);
    assert_eq!(report.deleted, [kazoo_node]);
    drop(curator);
    peers::release(kazoo);
}

#[test]
fn thousands_of_nodes_go_in_one_run() {
    let env = TestEnv::new();
    let holder = env.connect();
    holder.mkdir_p("/locks/many");
    let options = zkc::CreateMode::EphemeralSequential.with_acls(zkc::Acls::anyone_all());
    let dirs: Vec<String> = (0..100).map(|i| format!("/locks/many/l{i}")).collect();
    for dir in &dirs {
        holder.mkdir_p(dir);
    }
    holder.block_on(async {
        let client = holder.client();
        let prefixes: Vec<String> = (0..3000)
            .map(|i| format!("{}/lock-", dirs[i % 100]))
            .collect();
        let pending: Vec<_> = prefixes
            .iter()
            .map(|prefix| client.create(prefix, b"", &options))
            .collect();
        for created in futures::future::join_all(pending).await {
            created.expect("create");
        }
    });
    let started = Instant::now();
    let report = reap_json(&env, &["--all", "--yes", "many"]);
    assert_eq!(report.deleted.len(), 3000);
    assert!(report.skipped.is_empty());
    assert!(started.elapsed() < Duration::from_secs(20));
    for dir in &dirs {
        assert!(env.zk().children(dir).is_empty());
    }
}

/// Runs `zklock reap ARGS` with its stdin a terminal on which `answer` was
/// typed; returns the exit code and stderr.
fn reap_on_a_terminal(env: &TestEnv, args: &[&str], answer: &str) -> (Option<i32>, String) {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two descriptors into the integers given.
    let opened = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and are owned here alone.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut terminal = std::fs::File::from(master);
    std::io::Write::write_all(&mut terminal, answer.as_bytes()).expect("type the answer");
    let mut command: Command = env.zklock(["reap"]).args(args).command();
    command
        .stdin(Stdio::from(slave))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let child = command.spawn().expect("spawn zklock reap");
    let output = support::wait_for(WAIT, "reap on a terminal ends", {
        let mut child = Some(child);
        move || match child.as_mut().map(|c| c.try_wait()) {
            Some(Ok(Some(_))) => child.take().map(|c| c.wait_with_output().expect("output")),
            _ => None,
        }
    });
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn on_a_terminal_it_asks_and_only_yes_deletes() {
    let env = TestEnv::new();
    let holder = env.connect();
    let nodes = contenders(&holder, "/locks/ask", 1);
    let (code, stderr) = reap_on_a_terminal(&env, &["--all"], "n\n");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("Delete them? [y/N]"), "{stderr}");
    assert!(
        stderr.contains(&nodes[0]),
        "the prompt lists the node: {stderr}"
    );
    assert!(stderr.contains("not confirmed"), "{stderr}");
    assert!(exists(&env, &nodes[0]));
    let (code, stderr) = reap_on_a_terminal(&env, &["--all"], "yes\n");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!exists(&env, &nodes[0]));
}

#[test]
fn a_batch_whose_answer_is_lost_still_counts_its_nodes_deleted() {
    let env = TestEnv::new();
    let holder = env.connect();
    let nodes = contenders(&holder, "/locks/lost", 3);
    let proxy = FaultProxy::start(env.servers());
    // The batch of deletes reaches the server; its answer does not, and the
    // connection is reset: the retry finds the nodes gone, deleted by us.
    proxy.drop_after(Trigger::on(&[op::MULTI]));
    let run = support::Zklock::new(["-o", "json", "reap", "--all", "--yes", "lost"])
        .hosts(proxy.hosts(&env))
        .run();
    run.assert_success();
    proxy.wait_for_drop(WAIT);
    let report: ReapReport = run.json();
    assert!(report.skipped.is_empty(), "{report:?}");
    assert_eq!(sorted(report.deleted), nodes);
    assert!(nodes.iter().all(|node| !exists(&env, node)));
}
