//! Who is behind each session: the client address and server `stat` and `ls`
//! report, gathered from the ensemble's `cons`/`wchc` four-letter words or
//! its AdminServer, and what they say when neither is open.

use crate::support;

use std::time::Duration;

use support::peers::{Library, acquired, peer, peer_on};
use support::proxy::FaultProxy;
use support::{Blackhole, Lock, Running, TestEnv, ZkOptions, ZkServer, wait_for, wait_until};

const WAIT: Duration = Duration::from_secs(30);

/// A kazoo holder of `lock` that reports its own end of its connection;
/// returns it with that `host:port`.
fn holder_with_address(env: &TestEnv, lock: &str, extra: &[&str]) -> (Running, String, String) {
    let mut args = vec!["--print-local"];
    args.extend_from_slice(extra);
    let mut holder = peer(env, Library::Kazoo, lock, "mutex", &args);
    let line = holder.next_line(WAIT);
    let local = line
        .strip_prefix("LOCAL ")
        .unwrap_or_else(|| panic!("expected LOCAL, got {line:?}"))
        .to_owned();
    let node = acquired(&mut holder, WAIT);
    (holder, local, node)
}

fn stat(env: &TestEnv, path: &str, extra: &[&str]) -> (Lock, String) {
    let run = env.zklock(["stat", path, "-o", "json"]).args(extra).run();
    run.assert_success();
    (run.json(), run.stderr.clone())
}

#[test]
fn stat_names_the_address_each_client_connects_from_and_its_server() {
    let env = TestEnv::new();
    let (_holder, local, node) = holder_with_address(&env, "/locks/a", &[]);
    let (_waiter, waiter_local, _) = {
        let mut args = vec!["--print-local"];
        args.push("--timeout-ms");
        args.push("600000");
        let mut waiter = peer(&env, Library::Kazoo, "/locks/a", "mutex", &args);
        let line = waiter.next_line(WAIT);
        (waiter, line.strip_prefix("LOCAL ").unwrap().to_owned(), ())
    };
    wait_until(WAIT, "the waiter queued", || {
        env.zk().children("/locks/a").len() == 2
    });
    // kazoo queues its node first and sets its watch on the node ahead
    // just after: wait for the watch.
    let lock = wait_for(WAIT, "the waiter watches the holder", || {
        let (lock, _) = stat(&env, "/locks/a", &[]);
        (lock.waiters.first()?.watching == Some(true)).then_some(lock)
    });
    let holder = &lock.holders[0];
    assert_eq!(holder.path, node);
    let client = holder.client.as_ref().expect("the holder's client");
    assert_eq!(client.address.as_deref(), Some(local.as_str()));
    assert_eq!(client.server.as_deref(), Some(env.servers()));
    assert!(client.connected);
    let waiter = &lock.waiters[0];
    let client = waiter.client.as_ref().expect("the waiter's client");
    assert_eq!(client.address.as_deref(), Some(waiter_local.as_str()));
    assert_eq!(holder.watching, None);

    // ls -o wide shows the holder's host.
    let ls = env.zklock(["ls", "/locks", "-o", "wide"]).run();
    ls.assert_success();
    let row = ls
        .stdout_lines()
        .into_iter()
        .find(|line| line.trim_start().starts_with("/locks/a"))
        .expect("a row for /locks/a")
        .to_owned();
    let host = local.rsplit_once(':').unwrap().0;
    assert!(row.split_whitespace().any(|cell| cell == host), "{row}");
}

#[test]
fn a_waiter_that_watches_nothing_is_pointed_out() {
    let env = TestEnv::new();
    let holder = env.connect();
    let stuck = env.connect();
    holder.mkdir_p("/locks/w");
    holder.create_ephemeral_sequential("/locks/w/lock-", b"");
    // A contender that queued and never set its watch.
    stuck.create_ephemeral_sequential("/locks/w/lock-", b"");
    let (lock, _) = stat(&env, "/locks/w", &[]);
    assert_eq!(lock.waiters[0].watching, Some(false));
    let table = env.zklock(["stat", "/locks/w"]).run();
    table.assert_success();
    let row = table
        .stdout_lines()
        .into_iter()
        .find(|line| line.contains(&stuck.session_hex()))
        .expect("the waiter's row")
        .to_owned();
    assert!(row.contains("not watching"), "{row}");
}

#[test]
fn a_holder_cut_off_while_frozen_shows_as_disconnected_until_its_session_expires() {
    let server = ZkServer::new();
    let env = TestEnv::with_server(&server);
    let proxy = FaultProxy::start(&server.address());
    // The holder reaches the server only through the proxy, with a session
    // that outlives the test's checks.
    let mut holder = peer_on(
        &proxy.hosts(&env),
        Library::Kazoo,
        "/locks/f",
        "mutex",
        &["--session-timeout-ms", "30000"],
    );
    let node = acquired(&mut holder, WAIT);
    let (lock, _) = stat(&env, "/locks/f", &[]);
    assert!(lock.holders[0].client.as_ref().unwrap().connected);

    holder.signal(libc::SIGSTOP);
    proxy.cut();
    let lock = wait_for(WAIT, "the server notices the holder is gone", || {
        let (lock, _) = stat(&env, "/locks/f", &[]);
        let client = lock.holders.first()?.client.clone()?;
        (!client.connected).then_some(lock)
    });
    assert_eq!(
        lock.holders[0].path, node,
        "the node outlives the connection"
    );
    let client = lock.holders[0].client.as_ref().unwrap();
    assert_eq!(
        (client.address.as_deref(), client.server.as_deref()),
        (None, None)
    );
    let table = env.zklock(["stat", "/locks/f"]).run();
    table.assert_success();
    let row = table
        .stdout_lines()
        .into_iter()
        .find(|line| line.contains("holding"));
    assert!(
        row.is_some_and(|row| row.split_whitespace().any(|cell| cell == "no")),
        "CONNECTED says no: {}",
        table.stdout
    );
    holder.signal(libc::SIGCONT);
    holder.kill();
}

#[test]
fn with_four_letter_words_off_the_admin_server_answers() {
    let server = ZkServer::with_options(&ZkOptions::default().harness_words_only().admin_server());
    let admin = server.admin_port();
    assert!(
        server.four_letter("cons").contains("not in the whitelist"),
        "cons must be refused for this test"
    );
    let env = TestEnv::with_server(&server);
    let (_holder, local, _) = holder_with_address(&env, "/locks/adm", &[]);
    let port = admin.to_string();
    let stat = || env.zklock(["stat", "/locks/adm", "-o", "json"]);
    for zklock in [
        stat().args(["--admin-port", &port]),
        stat().env("ZKLOCK_ADMIN_PORT", &port),
    ] {
        let run = zklock.run();
        run.assert_success();
        let lock: Lock = run.json();
        let client = lock.holders[0]
            .client
            .as_ref()
            .unwrap_or_else(|| panic!("no client for the holder: {run:?}"));
        assert_eq!(client.address.as_deref(), Some(local.as_str()));
        assert_eq!(client.server.as_deref(), Some(server.address().as_str()));
        assert!(client.connected);
        assert!(run.stderr.is_empty(), "{run:?}");
    }
}

#[test]
fn with_both_off_client_is_null_and_the_reason_is_said_once_without_waiting() {
    let server = ZkServer::with_options(&ZkOptions::default().harness_words_only());
    let env = TestEnv::with_server(&server);
    let (_holder, _, _) = holder_with_address(&env, "/locks/none", &[]);
    let _waiter = peer(
        &env,
        Library::Kazoo,
        "/locks/none",
        "mutex",
        &["--timeout-ms", "600000"],
    );
    wait_until(WAIT, "the waiter queued", || {
        env.zk().children("/locks/none").len() == 2
    });
    // An AdminServer port that accepts and never answers: a hung server.
    let hung = Blackhole::new();
    let run = env
        .zklock(["stat", "/locks/none", "-o", "json"])
        .args(["--admin-port", &hung.port().to_string()])
        .run();
    // Its 3 s deadline for the member, with room for a loaded machine: not
    // the hang of a server that never answers.
    run.assert_success()
        .assert_faster_than(Duration::from_secs(15));
    let lock: Lock = run.json();
    let contenders = lock.holders.iter().chain(&lock.waiters);
    assert!(contenders.clone().count() == 2, "{lock:#?}");
    assert!(contenders.clone().all(|c| c.client.is_none()), "{lock:#?}");
    let mentions = run
        .stderr
        .lines()
        .filter(|line| line.contains(&server.address()))
        .count();
    assert_eq!(mentions, 1, "{}", run.stderr);
}
