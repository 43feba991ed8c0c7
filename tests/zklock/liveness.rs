//! Whether a contender's session is alive: `ls`, `stat`, `top` and
//! `reap --dry-run` mark it connected, disconnected or unknown, from what
//! every member says; `reap --disconnected-for` breaks only what every
//! member has left unlisted for that long, and spares a session that comes
//! back before the delete. And the holder's command, as `ps` shows it.

use crate::support;

use std::time::{Duration, Instant};

use support::json::{Contender, Lock, ReapDryRun, ReapReport, ReapSkipped};
use support::peers::{Library, acquired, peer};
use support::proxy::FaultProxy;
use support::tmux::{Tmux, command_line};
use support::{
    Running, Scratch, TestEnv, Zk, ZkEnsemble, ZkOptions, free_ports, wait_for, wait_until,
};

const WAIT: Duration = Duration::from_secs(30);

/// `zklock lock LOCK` holding until killed, once it holds; and its token.
fn hold(env: &TestEnv, lock: &str, command: &[&str]) -> (Running, String) {
    let holder = env.zklock(["lock", lock]).args(command).spawn();
    let name = wait_for(WAIT, "the holder holds", || {
        env.zk()
            .children_if_any(&format!("/locks/{lock}"))
            .first()
            .cloned()
    });
    (holder, format!("/locks/{lock}/{name}"))
}

/// A session that holds `/locks/LOCK` and then loses its connection through
/// `proxy` while the session lives on (30 s): its client is cut off, not
/// gone. Returns the client, to keep the session, and the node.
fn cut_off_holder(env: &TestEnv, proxy: &FaultProxy, lock: &str) -> (Zk, String) {
    let client = Zk::connect_with(&proxy.hosts(env), |c| {
        c.with_session_timeout(Duration::from_secs(30))
    });
    client.mkdir_p(&format!("/locks/{lock}"));
    let node = client.create_ephemeral_sequential(&format!("/locks/{lock}/lock-"), b"");
    proxy.cut();
    (client, node)
}

/// Every contender of `ls -o json`, by its node's path.
fn ls_contenders(env: &TestEnv, hosts: Option<&str>) -> Vec<Contender> {
    let mut ls = env.zklock(["ls", "-o", "json"]);
    if let Some(hosts) = hosts {
        ls = ls.hosts(hosts);
    }
    let locks: Vec<Lock> = ls.run().assert_success().json();
    locks
        .into_iter()
        .flat_map(|lock| lock.holders.into_iter().chain(lock.waiters))
        .collect()
}

/// The `connection` of the contender at `node`.
pub fn connection_of(contenders: &[Contender], node: &str) -> Option<String> {
    contenders
        .iter()
        .find(|c| c.path == node)
        .unwrap_or_else(|| panic!("no contender {node} in {contenders:#?}"))
        .connection
        .clone()
}

/// The CONNECTED cell of the first row of `table` that contains `row`.
pub fn cell(table: &str, row: &str) -> Option<String> {
    let header = table.lines().find(|line| line.contains("CONNECTED"))?;
    let at = header.find("CONNECTED")?;
    let row = table.lines().find(|line| line.contains(row))?;
    Some(row.get(at..)?.split("  ").next()?.trim().to_owned())
}

fn dry_run(env: &TestEnv, selector: &[&str]) -> ReapDryRun {
    env.zklock(["-o", "json", "reap", "--dry-run"])
        .args(selector)
        .run()
        .assert_success()
        .json()
}

#[test]
fn ls_stat_and_reap_dry_run_mark_each_session_connected_disconnected_or_unknown() {
    let env = TestEnv::new();
    let (mut live, live_node) = hold(&env, "live", &[]);
    let proxy = FaultProxy::start(env.servers());
    let (_dead, dead_node) = cut_off_holder(&env, &proxy, "dead");
    let ttl = env.zklock(["lock", "ttl", "--ttl", "1h"]).run();
    let ttl_node = ttl.assert_success().stdout.trim().to_owned();

    let contenders = wait_for(WAIT, "the server drops the cut connection", || {
        let contenders = ls_contenders(&env, None);
        (connection_of(&contenders, &dead_node).as_deref() == Some("disconnected"))
            .then_some(contenders)
    });
    assert_eq!(
        connection_of(&contenders, &live_node).as_deref(),
        Some("connected")
    );
    assert_eq!(connection_of(&contenders, &ttl_node), None, "no session");

    let wide = env.zklock(["ls", "-o", "wide"]).run();
    assert_eq!(
        cell(&wide.stdout, "/locks/dead ").as_deref(),
        Some("no"),
        "{}",
        wide.stdout
    );
    assert_eq!(
        cell(&wide.stdout, "/locks/live ").as_deref(),
        Some("yes"),
        "{}",
        wide.stdout
    );
    assert_eq!(
        cell(&wide.stdout, "/locks/ttl ").as_deref(),
        Some("-"),
        "{}",
        wide.stdout
    );

    let stat: Lock = env
        .zklock(["stat", "/locks/dead", "-o", "json"])
        .run()
        .assert_success()
        .json();
    assert_eq!(stat.holders[0].connection.as_deref(), Some("disconnected"));
    let table = env.zklock(["stat", "/locks/dead"]).run();
    assert_eq!(
        cell(&table.stdout, "holding").as_deref(),
        Some("no"),
        "{}",
        table.stdout
    );

    let planned = dry_run(&env, &["--older-than", "0s"]);
    let marked = |node: &str| {
        let planned = planned.would_delete.iter().find(|n| n.path == node);
        planned
            .unwrap_or_else(|| panic!("{node} not in {planned:#?}"))
            .connection
            .clone()
    };
    assert_eq!(marked(&live_node).as_deref(), Some("connected"));
    assert_eq!(marked(&dead_node).as_deref(), Some("disconnected"));
    assert_eq!(marked(&ttl_node), None);
    let table = env
        .zklock(["reap", "--dry-run", "--older-than", "0s"])
        .run();
    assert!(table.stdout.contains("CONNECTED"), "{}", table.stdout);

    // A member that does not answer (nothing listens on its port): who no
    // answering member lists may be connected to it.
    let silent = format!("127.0.0.1:{}", free_ports(1)[0]);
    let hosts = format!("{},{silent}{}", env.servers(), env.chroot());
    let contenders = ls_contenders(&env, Some(&hosts));
    assert_eq!(
        connection_of(&contenders, &live_node).as_deref(),
        Some("connected")
    );
    assert_eq!(
        connection_of(&contenders, &dead_node).as_deref(),
        Some("unknown")
    );
    live.kill();
}

#[test]
fn reap_disconnected_for_breaks_only_a_session_no_member_listed_that_long() {
    let env = TestEnv::new();
    let (mut live, live_node) = hold(&env, "live", &[]);
    let proxy = FaultProxy::start(env.servers());
    let (_dead, dead_node) = cut_off_holder(&env, &proxy, "dead");
    let ttl = env.zklock(["lock", "ttl", "--ttl", "1h"]).run();
    let ttl_node = ttl.assert_success().stdout.trim().to_owned();
    wait_until(WAIT, "the server drops the cut connection", || {
        connection_of(&ls_contenders(&env, None), &dead_node).as_deref() == Some("disconnected")
    });

    let asked = Instant::now();
    let planned = dry_run(&env, &["--disconnected-for", "2s"]);
    assert!(
        asked.elapsed() >= Duration::from_secs(2),
        "it watched first"
    );
    let paths: Vec<&str> = planned
        .would_delete
        .iter()
        .map(|n| n.path.as_str())
        .collect();
    assert_eq!(paths, [dead_node.as_str()], "{planned:#?}");
    let absent = planned.would_delete[0]
        .absent_ms
        .expect("how long it was gone");
    assert!(absent >= 2000, "{absent}");

    let reaped: serde_json::Value = env
        .zklock(["-o", "json", "reap", "--disconnected-for", "1s", "--yes"])
        .run()
        .assert_success()
        .json();
    assert_eq!(
        reaped["deleted"],
        serde_json::json!([dead_node]),
        "{reaped}"
    );
    assert!(env.zk().exists(&live_node).is_some());
    assert!(
        env.zk().exists(&ttl_node).is_some(),
        "no session, never chosen"
    );
    live.kill();
}

#[test]
fn reap_disconnected_for_chooses_nothing_while_a_member_does_not_answer() {
    let ensemble = ZkEnsemble::start(3);
    let env = TestEnv::with_ensemble(&ensemble);
    let proxy = FaultProxy::start(&ensemble.server(0).address());
    let (_dead, dead_node) = cut_off_holder(&env, &proxy, "dead");
    let on_first = format!("{}{}", ensemble.server(0).address(), env.chroot());
    let (mut live, live_node) = {
        let mut holder = env.zklock(["lock", "live"]).hosts(&on_first).spawn();
        let token = holder.next_line(WAIT);
        (holder, token)
    };
    wait_until(
        WAIT,
        "every member has forgotten the cut connection",
        || connection_of(&ls_contenders(&env, None), &dead_node).as_deref() == Some("disconnected"),
    );
    // A follower: a leader's going would drop every client for a while.
    let follower = ensemble.followers().into_iter().find(|&i| i != 0).unwrap();
    ensemble.server(follower).stop();
    let contenders = ls_contenders(&env, None);
    assert_eq!(
        connection_of(&contenders, &dead_node).as_deref(),
        Some("unknown")
    );
    assert_eq!(
        connection_of(&contenders, &live_node).as_deref(),
        Some("connected")
    );

    // The contender is left alone, and said to be: listed under `skipped`
    // by the dry run, and a reap exits 10 for it.
    let planned = dry_run(&env, &["--disconnected-for", "1s"]);
    assert!(planned.would_delete.is_empty(), "{planned:#?}");
    assert_eq!(spared_as_unknown(&planned.skipped), [dead_node.as_str()]);
    let reaped: ReapReport = env
        .zklock(["-o", "json", "reap", "--disconnected-for", "1s", "--yes"])
        .run()
        .assert_code(10)
        .json();
    assert!(reaped.deleted.is_empty(), "{reaped:#?}");
    assert_eq!(spared_as_unknown(&reaped.skipped), [dead_node.as_str()]);
    assert!(env.zk().exists(&dead_node).is_some());
    live.kill();
}

/// The nodes of `skipped` left alone because whether their session is
/// connected was unknown.
pub fn spared_as_unknown(skipped: &[ReapSkipped]) -> Vec<&str> {
    skipped
        .iter()
        .filter(|s| {
            s.reason
                .starts_with("whether its session is connected is unknown")
        })
        .map(|s| s.path.as_str())
        .collect()
}

#[test]
fn a_session_that_comes_back_before_the_delete_is_spared() {
    let env = TestEnv::new();
    let proxy = FaultProxy::start(env.servers());
    let (_back, node) = cut_off_holder(&env, &proxy, "back");
    wait_until(WAIT, "the server drops the cut connection", || {
        connection_of(&ls_contenders(&env, None), &node).as_deref() == Some("disconnected")
    });
    let scratch = Scratch::new();
    let tmux = Tmux::start(100, 40);
    let before = tmux.stty(&scratch.file("before"));
    let reap = env.zklock(["reap", "--disconnected-for", "1s"]);
    tmux.launch(&command_line(&reap), &scratch);
    let prompt = tmux.screen_until(WAIT, "reap asks", |screen| screen.contains("[y/N]"));
    assert!(prompt.contains("not connected for"), "{prompt}");
    assert!(prompt.contains("a decision, not a cleanup"), "{prompt}");
    proxy.pass();
    wait_until(WAIT, "the session is connected again", || {
        connection_of(&ls_contenders(&env, None), &node).as_deref() == Some("connected")
    });
    tmux.send(&["y", "Enter"]);
    assert_eq!(tmux.ended(&before, &scratch), 10, "left alone");
    assert!(
        tmux.screen().contains("connected again"),
        "{}",
        tmux.screen()
    );
    assert!(env.zk().exists(&node).is_some(), "spared");
}

/// A frozen holder (SIGSTOP) keeps its connection open, and the server
/// lists it until the session expires and takes the node with it: it shows
/// connected all along, so `--disconnected-for` can never find it.
#[test]
fn a_frozen_holder_shows_connected_until_its_session_expires() {
    let env = TestEnv::new();
    let mut holder = peer(
        &env,
        Library::Kazoo,
        "/locks/frozen",
        "mutex",
        &["--session-timeout-ms", "10000"],
    );
    let node = acquired(&mut holder, WAIT);
    holder.signal(libc::SIGSTOP);
    let mut seen = 0;
    wait_until(WAIT, "the server expires the frozen session", || {
        let contenders = ls_contenders(&env, None);
        if contenders.iter().all(|c| c.path != node) {
            return true;
        }
        assert_eq!(
            connection_of(&contenders, &node).as_deref(),
            Some("connected"),
            "after {seen} observations"
        );
        seen += 1;
        false
    });
    assert!(seen > 0, "the node was gone before ls saw it");
    holder.signal(libc::SIGCONT);
    holder.kill();
}

#[test]
fn top_marks_whether_each_holder_is_connected_and_for_how_long_it_is_gone() {
    let env = TestEnv::new();
    let (mut live, _) = hold(&env, "live", &[]);
    let proxy = FaultProxy::start(env.servers());
    let (_dead, _) = cut_off_holder(&env, &proxy, "dead");
    let tmux = Tmux::start(100, 24);
    tmux.send(&[&command_line(&env.zklock(["top"])), "Enter"]);
    // The second survey, ten seconds on, tells how long it has been gone.
    let screen = tmux.screen_until(WAIT, "top shows how long the holder is gone", |screen| {
        cell(screen, "/locks/dead")
            .is_some_and(|cell| cell.starts_with("no ") && cell.ends_with('s'))
    });
    assert_eq!(
        cell(&screen, "/locks/live").as_deref(),
        Some("yes"),
        "{screen}"
    );
    tmux.send(&["q"]);
    tmux.wait_for_prompt();
    live.kill();
}

#[test]
fn the_holder_s_command_shows_escaped_with_its_arguments_only_when_recorded() {
    let env = TestEnv::new();
    let (mut plain, _) = hold(&env, "plain", &["--", "sleep", "300"]);
    let (mut whole, _) = hold(
        &env,
        "whole",
        &[
            "--record-command",
            "--",
            "sh",
            "-c",
            "sleep 300",
            "x\x1b[2Jred",
        ],
    );
    let ls = env.zklock(["ls", "-o", "wide"]).run();
    ls.assert_success();
    let row = |lock: &str| {
        ls.stdout_lines()
            .into_iter()
            .find(|line| line.starts_with(lock))
            .unwrap_or_else(|| panic!("no row for {lock}: {}", ls.stdout))
            .to_owned()
    };
    assert!(row("/locks/plain").ends_with(" sleep"), "{}", ls.stdout);
    assert!(
        row("/locks/whole").ends_with(" sh -c sleep 300 x\\x1b[2Jred"),
        "{}",
        ls.stdout
    );
    assert!(!ls.stdout.contains('\x1b'), "escaped");

    // Free text, cut between words where 80 columns have no room for it.
    let stat = env
        .zklock(["stat", "/locks/plain"])
        .env("COLUMNS", "120")
        .run();
    let row = stat
        .stdout_lines()
        .into_iter()
        .find(|line| line.contains("holding"));
    assert!(
        row.is_some_and(|row| row.ends_with(" sleep")),
        "{}",
        stat.stdout
    );
    let conflict = env.zklock(["lock", "-n", "plain", "--", "true"]).run();
    conflict.assert_code(1);
    assert!(conflict.stderr.contains(" sleep ("), "{}", conflict.stderr);
    plain.kill();
    whole.kill();
}

#[test]
fn a_member_only_the_ensemble_s_configuration_names_is_asked_too() {
    let member = ZkOptions::default().client_addresses();
    let ensemble = ZkEnsemble::start_members_with(&[
        member.clone(),
        member.clone(),
        member.clone(),
        member.observer(),
    ]);
    let env = TestEnv::on(&ensemble.server(0).address());
    // A holder connected to the observer alone, which the connect string
    // leaves out: only the configuration says to ask it.
    let observer = format!("{}{}", ensemble.server(3).address(), env.chroot());
    let holder = Zk::connect_with(&observer, |c| c);
    holder.mkdir_p("/locks/observed");
    let node = holder.create_ephemeral_sequential("/locks/observed/lock-", b"");
    let contenders = ls_contenders(&env, None);
    assert_eq!(
        connection_of(&contenders, &node).as_deref(),
        Some("connected")
    );
    let planned = dry_run(&env, &["--disconnected-for", "1s"]);
    assert!(planned.would_delete.is_empty(), "{planned:#?}");
}
