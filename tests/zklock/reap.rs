//! reap against a real ZooKeeper: what it selects (age, session, all, empty
//! lock directories), what it never touches, the confirmation it needs,
//! nodes that change between reading and deleting, and the holder that
//! loses its lock.

use crate::support;

use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use std::collections::{BTreeMap, BTreeSet};

use support::cotenants::{CoTenants, NodeState, StaleLocks};
use support::json::{Lock, ReapDryRun, ReapReport};
use support::peers::{self, Library, acquired, peer};
use support::proxy::{FaultProxy, Trigger, op};
use support::{TestEnv, Zk, wait_until};
use zklock::admin::reap::{self, Selector};
use zklock::lock::end::{EndHow, Ender, Ending};
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

    env.zklock(["reap", "--all", "--dry-run", "-o", "wide"])
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
        zklock::clock::now_ms() - stat.ctime >= 2500
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
    zk.create("/locks/mixed/lock-0000000100", b"a config node");
    zk.create("/locks/mixed/write-0000000101", b"a record");
    let report = reap_json(&env, &["--all", "--empty", "--yes"]);
    assert_eq!(sorted(report.deleted), nodes);
    for kept in [
        "/locks/mixed",
        "/locks/mixed/config",
        "/locks/mixed/notes/readme",
        "/locks/mixed/lock",
        "/locks/mixed/lock-latest",
        "/locks/mixed/lock-0000000100",
        "/locks/mixed/write-0000000101",
    ] {
        assert!(exists(&env, kept), "{kept} was deleted");
    }

    // Named like a contender, but persistent and with a child: application
    // data, never a contender.
    zk.mkdir_p("/locks/odd/lock-0000000009/data");
    let report = reap_json(&env, &["--all", "--empty", "--yes", "odd"]);
    assert!(
        report.deleted.is_empty() && report.skipped.is_empty(),
        "{report:?}"
    );
    assert!(exists(&env, "/locks/odd/lock-0000000009/data"));
}

#[test]
fn empty_deletes_only_the_lock_directories_this_reap_empties() {
    let env = TestEnv::new();
    let zk = env.zk();
    // A persistent lock directory whose contenders are gone (as kazoo and
    // HBase leave them): an empty persistent node, as an emptied queue or
    // broker list is. Nothing proves it a lock directory any more.
    let abandoned = env.connect();
    contenders(&abandoned, "/locks/old/a", 1);
    abandoned.close();
    // Not lock directories: never had a child, holds data, holds a child.
    zk.mkdir_p("/locks/fresh");
    zk.create("/locks/config", b"x");
    zk.mkdir_p("/locks/busy/inner");
    // A stale persistent lock directory with a contender left: the reap
    // that deletes the contender proves it and deletes it too.
    let stale = env.connect();
    let doomed = contenders(&stale, "/locks/stale", 1);
    let holder = env.connect();
    let live = contenders(&holder, "/locks/live", 1);

    let plan: ReapDryRun = env
        .zklock(["-o", "json", "reap", "--empty", "--dry-run"])
        .run()
        .assert_success()
        .json();
    assert!(plan.would_delete.is_empty(), "{plan:?}");
    let session = stale.session_hex();
    let report = reap_json(&env, &["--session", &session, "--empty", "--yes"]);
    assert_eq!(
        sorted(report.deleted),
        sorted(vec![doomed[0].clone(), "/locks/stale".to_owned()])
    );
    for kept in [
        "/locks",
        "/locks/old/a",
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
        secured: Default::default(),
        acl: Default::default(),
        read_only: false,
        retry: RetryPolicy::new(5),
        patience: None,
    };
    let session = runtime.block_on(zk::connect(&options)).expect("connect");
    (runtime, session)
}

#[test]
fn a_node_that_changes_between_reading_and_deleting_is_left_alone() {
    let env = TestEnv::new();
    let holder = env.connect();
    let nodes = contenders(&holder, "/locks/v", 3);
    let (runtime, session) = session(&env);
    let all = Selector {
        all: true,
        ..Selector::default()
    };
    let plan = runtime
        .block_on(reap::plan(&session, "/locks", "/locks", all, true, |_| {}))
        .expect("plan");
    // Three contenders and the directory they leave empty.
    assert_eq!(plan.nodes.len(), 4, "{:#?}", plan.nodes);
    // Between the reading and the deleting: a holder's data is written
    // (its version moves on) and another contender goes, so the directory
    // is not left empty.
    holder.set(&nodes[0], b"still here");
    holder.delete(&nodes[2]);
    let ending = Ending::new(EndHow::Reaped, Ender::of_this_process());
    let (reaped, result) = runtime.block_on(reap::execute(&session, &plan.nodes, &ending, |_| {}));
    result.expect("execute");
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
        ]
    );
    assert!(exists(&env, &nodes[0]));
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

/// The co-tenants' nodes as they are now, without the locks that live
/// among them (their contenders and directories go, rightly).
fn cotenant_nodes(env: &TestEnv, locks: &StaleLocks) -> BTreeMap<String, NodeState> {
    let mut nodes = CoTenants::snapshot(env);
    nodes.retain(|path, _| !locks.contenders.contains(path) && !locks.directories.contains(path));
    nodes
}

/// Every lock contender node `ls` shows under `/`: not the co-tenants'
/// elections and leader nodes, which `ls` shows too and reap never takes.
fn listed_contenders(env: &TestEnv) -> BTreeSet<String> {
    let locks: Vec<Lock> = env
        .zklock(["-o", "json", "ls", "/"])
        .run()
        .assert_success()
        .json();
    locks
        .iter()
        .filter(|lock| lock.kind != "election" && lock.kind != "leader")
        .flat_map(|lock| lock.holders.iter().chain(&lock.waiters))
        .map(|c| c.path.clone())
        .collect()
}

fn set(paths: &[String]) -> BTreeSet<String> {
    paths.iter().cloned().collect()
}

#[test]
fn reap_all_empty_over_a_shared_tree_takes_every_stale_lock_and_no_cotenant() {
    let env = TestEnv::new();
    let _cotenants = CoTenants::create(&env);
    let locks = StaleLocks::create(&env);
    let before = cotenant_nodes(&env, &locks);
    assert_eq!(listed_contenders(&env), set(&locks.contenders), "ls");

    // --empty alone proves no directory a lock directory.
    let plan: ReapDryRun = env
        .zklock(["-o", "json", "reap", "--empty", "--dry-run", "/"])
        .run()
        .assert_success()
        .json();
    assert!(plan.would_delete.is_empty(), "{plan:#?}");

    let plan: ReapDryRun = env
        .zklock(["-o", "json", "reap", "--all", "--empty", "--dry-run", "/"])
        .run()
        .assert_success()
        .json();
    let (dirs, nodes): (Vec<_>, Vec<_>) = plan
        .would_delete
        .iter()
        .partition(|node| node.what == "empty-directory");
    let nodes: BTreeSet<String> = nodes.iter().map(|n| n.path.clone()).collect();
    assert_eq!(nodes, set(&locks.contenders));
    for dir in &dirs {
        assert!(
            locks.directories.contains(&dir.path),
            "{} is no lock directory",
            dir.path
        );
    }
    assert_eq!(
        cotenant_nodes(&env, &locks),
        before,
        "a dry run changes nothing"
    );

    let run = env
        .zklock(["-o", "json", "reap", "--all", "--empty", "--yes", "/"])
        .run();
    run.assert_success();
    let report: ReapReport = run.json();
    let deleted = set(&report.deleted);
    for contender in &locks.contenders {
        assert!(
            deleted.contains(contender),
            "{contender} not reaped: {report:#?}"
        );
        assert!(!exists(&env, contender), "{contender} is still there");
    }
    for path in &deleted {
        assert!(
            locks.contenders.contains(path) || locks.directories.contains(path),
            "{path} is no lock node"
        );
    }
    assert_eq!(
        cotenant_nodes(&env, &locks),
        before,
        "a co-tenant node changed"
    );
    assert!(listed_contenders(&env).is_empty());
    locks.stop();
}

#[test]
fn reap_by_session_and_age_over_a_shared_tree_touches_no_cotenant() {
    let env = TestEnv::new();
    let cotenants = CoTenants::create(&env);
    let locks = StaleLocks::create(&env);
    let before = cotenant_nodes(&env, &locks);

    // The co-tenants' own session owns broker ids, a controller, workers and
    // an election node: none of them is a lock.
    let brokers = cotenants.session.session_hex();
    let report = reap_json(&env, &["--session", &brokers, "--empty", "--yes", "/"]);
    assert!(report.deleted.is_empty(), "{report:#?}");

    // A session that holds locks and owns a membership node besides.
    let raw = locks.session.session_hex();
    let report = reap_json(&env, &["--session", &raw, "--empty", "--yes", "/"]);
    let raw_contenders: Vec<String> = locks
        .contenders
        .iter()
        .filter(|node| env.zk().exists(node).is_none())
        .cloned()
        .collect();
    assert_eq!(
        raw_contenders.len(),
        3,
        "the raw session's three contenders"
    );
    let deleted = set(&report.deleted);
    for node in &raw_contenders {
        assert!(deleted.contains(node), "{node}: {report:#?}");
    }
    assert!(deleted.contains("/locks/generic"), "{report:#?}");
    assert_eq!(deleted.len(), 4, "{report:#?}");
    assert!(exists(&env, "/app/members/me"));

    let report = reap_json(&env, &["--older-than", "0s", "--yes", "/"]);
    assert_eq!(
        report.deleted.len(),
        locks.contenders.len() - 3,
        "{report:#?}"
    );
    assert!(locks.contenders.iter().all(|node| !exists(&env, node)));
    assert_eq!(
        cotenant_nodes(&env, &locks),
        before,
        "a co-tenant node changed"
    );
    locks.stop();
}

/// Runs `zklock -o json reap ARGS` with its stdin a terminal, and hands
/// back the terminal once the prompt is shown, with the running reap.
fn reap_held_at_the_prompt(env: &TestEnv, args: &[&str]) -> (std::fs::File, support::Running) {
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
    let mut command: Command = env.zklock(["-o", "json", "reap"]).args(args).command();
    command.stdin(Stdio::from(slave));
    let running = support::Running::start_with_stdin(command, "zklock reap on a terminal".into());
    running.wait_for_stderr(WAIT, "the prompt", |stderr| stderr.contains("[y/N]"));
    (std::fs::File::from(master), running)
}

#[test]
fn a_node_made_again_under_the_same_name_after_the_prompt_is_left_alone() {
    let env = TestEnv::new();
    let old = env.connect();
    old.mkdir_p("/locks/reused");
    let node = old.create_ephemeral_sequential("/locks/reused/lock-", b"");
    assert_eq!(node, "/locks/reused/lock-0000000000");
    let (mut terminal, mut reap) = reap_held_at_the_prompt(&env, &["--all", "--empty"]);
    // While the prompt waits: the holder goes, its directory is deleted and
    // made again, and a new holder takes the same name (at version 0 too).
    old.close();
    env.zk().delete("/locks/reused");
    let new = env.connect();
    new.mkdir_p("/locks/reused");
    let again = new.create_ephemeral_sequential("/locks/reused/lock-", b"");
    assert_eq!(again, node);
    let (_, fresh) = env.zk().get(&again);
    std::io::Write::write_all(&mut terminal, b"yes\n").expect("answer");
    let run = reap.wait(WAIT);
    run.assert_code(10);
    let report: ReapReport = run.json();
    assert!(report.deleted.is_empty(), "{report:#?}");
    let skipped: BTreeSet<&str> = report.skipped.iter().map(|s| s.path.as_str()).collect();
    assert!(skipped.contains(node.as_str()), "{report:#?}");
    let (_, now) = env.zk().get(&again);
    assert_eq!(
        (now.czxid, now.ephemeral_owner),
        (fresh.czxid, new.session_id())
    );
    assert!(exists(&env, "/locks/reused"));
}

#[test]
fn a_reap_stopped_by_a_parents_acl_reports_what_it_deleted_and_names_the_parent() {
    let env = TestEnv::new();
    let holder = env.connect();
    let mut before = Vec::new();
    for i in 0..150 {
        before.extend(contenders(&holder, &format!("/locks/a{i:03}"), 1));
    }
    let refused = contenders(&holder, "/locks/b", 2);
    let after = contenders(&holder, "/locks/c", 2);
    let no_delete = zkc::Permission::READ
        | zkc::Permission::WRITE
        | zkc::Permission::CREATE
        | zkc::Permission::ADMIN;
    env.zk().set_acl(
        "/locks/b",
        &[zkc::Acl::new(no_delete, zkc::AuthId::anyone())],
    );
    let run = env.zklock(["-o", "json", "reap", "--all", "--yes"]).run();
    run.assert_code(5);
    assert!(run.stderr.contains("parent /locks/b"), "{}", run.stderr);
    let report: ReapReport = run.json();
    assert!(
        !report.deleted.is_empty(),
        "what went before the error is reported"
    );
    for node in &report.deleted {
        assert!(!exists(&env, node), "{node} reported deleted but is there");
    }
    let gone = before
        .iter()
        .chain(&after)
        .filter(|node| !exists(&env, node))
        .count();
    assert_eq!(gone, report.deleted.len(), "every node deleted is reported");
    assert!(refused.iter().all(|node| exists(&env, node)));
}

#[test]
fn the_summary_comes_after_every_row() {
    let env = TestEnv::new();
    let holder = env.connect();
    let locks: Vec<String> = (0..5).map(|i| format!("/locks/s{i}")).collect();
    for lock in &locks {
        contenders(&holder, lock, 12);
    }
    for args in [&["--dry-run"][..], &["--yes"]] {
        let run = env.zklock(["reap", "--all"]).args(args).run();
        run.assert_success();
        // The heading, a row for each node, a blank line, the summary.
        let lines = run.stdout_lines();
        let [table @ .., blank, summary] = lines.as_slice() else {
            panic!("no summary: {run:?}");
        };
        assert!(blank.is_empty() && !summary.is_empty(), "{run:?}");
        assert_eq!(table.len(), 1 + 5 * 12, "{run:?}");
        for lock in &locks {
            let rows = table[1..]
                .iter()
                .filter(|row| row.split_whitespace().next() == Some(lock.as_str()))
                .count();
            assert_eq!(rows, 12, "{lock}: {run:?}");
        }
    }
    assert!(env.zk().children_if_any("/locks/s0").is_empty());
}

#[test]
fn empty_never_deletes_the_top_the_lock_root_or_what_is_above_it() {
    let env = TestEnv::new();
    let stale = env.connect();
    let session = stale.session_hex();
    // Three persistent directories, each holding a stale contender and
    // nothing else, as a lock directory does: the top of a connect
    // string's chroot, the lock root, and a node above a lock root.
    let cases = [
        (
            "/top",
            env.zklock(["--root", "/locks"])
                .hosts(format!("{}/top", env.hosts())),
            "/",
        ),
        ("/locks", env.zklock(Vec::<&str>::new()), "/locks"),
        ("/apps", env.zklock(["--root", "/apps/locks"]), "/"),
    ];
    for (dir, zklock, path) in cases {
        let doomed = contenders(&stale, dir, 1);
        let run = zklock
            .args([
                "-o",
                "json",
                "reap",
                "--session",
                &session,
                "--empty",
                "--yes",
                path,
            ])
            .run();
        let report: ReapReport = run.assert_success().json();
        let reaped: Vec<String> = report
            .deleted
            .iter()
            .map(|p| {
                if dir == "/top" {
                    format!("/top{p}")
                } else {
                    p.clone()
                }
            })
            .collect();
        assert_eq!(reaped, doomed, "{dir}");
        assert!(exists(&env, dir), "{dir} was deleted");
    }
}
