//! Acting from `top`, in a real terminal (tmux) on real servers beside
//! other software's nodes: release, revoke and reap of the lock or
//! contender chosen, each confirmed in the view; Esc and every key but `y`
//! do nothing; the act is on the incarnation shown when the confirmation
//! opened; `--read-only` refuses.

use crate::support;

use std::time::Duration;

use support::cotenants::CoTenants;
use support::peers::{self, Library, acquired, peer, peer_on};
use support::proxy::FaultProxy;
use support::tmux::{Tmux, command_line};
use support::{TestEnv, ZkServer, wait_for, wait_until};

const WAIT: Duration = Duration::from_secs(30);

/// top on `path` in an 80x24 window, once it shows `lock`, filtered to it.
fn top_on(env: &TestEnv, args: &[&str], lock: &str) -> Tmux {
    let tmux = Tmux::start(80, 24);
    let mut argv = vec!["top"];
    argv.extend(args);
    tmux.send(&[&command_line(&env.zklock(argv)), "Enter"]);
    shows(&tmux, lock);
    tmux.send(&["/", lock, "Enter"]);
    shows(&tmux, &format!("filter: {lock}"));
    tmux
}

/// Waits until the screen shows `text`, which may go on over lines (top
/// wraps a line too long, indenting what goes on); returns the screen with
/// each line trimmed and joined to the next by a space.
#[track_caller]
fn shows(tmux: &Tmux, text: &str) -> String {
    let flat = |screen: &str| {
        let lines: Vec<&str> = screen.lines().map(str::trim).collect();
        lines.join(" ")
    };
    let screen = tmux.screen_until(WAIT, &format!("the screen shows {text:?}"), |screen| {
        flat(screen).contains(text)
    });
    flat(&screen)
}

/// The end record in the directory `dir`: how, its nodes (name and
/// session) and reason.
#[track_caller]
fn end_record(env: &TestEnv, dir: &str) -> (String, Vec<(String, String)>, Option<String>) {
    let (data, _) = env.zk().get(dir);
    let document: serde_json::Value = serde_json::from_slice(&data).unwrap_or_else(|e| {
        panic!("{dir} holds no end record ({e}): {data:?}");
    });
    let record = &document["zklock_end"];
    let nodes = record["nodes"]
        .as_array()
        .expect("the record's nodes")
        .iter()
        .map(|node| {
            let text = |key: &str| node[key].as_str().unwrap_or_default().to_owned();
            (text("node"), text("session"))
        })
        .collect();
    (
        record["how"].as_str().unwrap_or_default().to_owned(),
        nodes,
        record["reason"].as_str().map(str::to_owned),
    )
}

fn quit(tmux: &Tmux) {
    tmux.send(&["q"]);
    tmux.wait_for_prompt();
}

#[test]
fn release_from_top_deletes_the_chosen_holder_alone_after_a_yes() {
    let env = TestEnv::new();
    let _cotenants = CoTenants::create(&env);
    let mut kazoo = peer(&env, Library::Kazoo, "/locks/kazoo", "mutex", &[]);
    let kazoo_node = acquired(&mut kazoo, WAIT);
    let holder = env.connect();
    let waiter = env.connect();
    env.zk().mkdir_p("/locks/alpha");
    let held = holder.create_ephemeral_sequential("/locks/alpha/lock-", b"");
    let queued = waiter.create_ephemeral_sequential("/locks/alpha/lock-", b"");
    env.zk().mkdir_p("/locks/beta");
    let other = holder.create_ephemeral_sequential("/locks/beta/lock-", b"");
    let before = CoTenants::snapshot(&env);
    let (_, held_stat) = env.zk().get(&held);

    // Read-only: the keys are not offered, and refused.
    let tmux = top_on(&env, &["--read-only"], "/locks/alpha");
    assert!(!tmux.screen().contains("r: release"), "{}", tmux.screen());
    tmux.send(&["r"]);
    shows(&tmux, "--read-only: no release, revoke or reap from here");
    quit(&tmux);
    assert!(env.zk().exists(&held).is_some());

    let tmux = top_on(&env, &[], "/locks/alpha");
    shows(&tmux, "r: release  v: revoke  x: reap");
    // Esc cancels; so does n; other keys do nothing.
    for cancel in ["Escape", "n"] {
        tmux.send(&["r"]);
        let screen = shows(&tmux, "Release /locks/alpha: delete 1 contender");
        assert!(screen.contains(&held), "{screen}");
        assert!(screen.contains(&holder.session_hex()), "{screen}");
        assert!(!screen.contains(&queued), "only the holder: {screen}");
        tmux.send(&["Enter", "q", "x", "j"]);
        shows(&tmux, "y: yes  n or Esc: cancel");
        tmux.send(&[cancel]);
        shows(&tmux, "cancelled: nothing was done");
        assert_eq!(env.zk().exists(&held), Some(held_stat), "{cancel}");
    }
    // A reason, then a yes.
    tmux.send(&["r"]);
    shows(&tmux, "Reason: none (Tab to give one)");
    tmux.send(&["Tab", "stuck since monday", "Enter"]);
    shows(&tmux, "Reason: stuck since monday");
    tmux.send(&["y"]);
    shows(&tmux, &format!("deleted {held} (end record: broken)"));
    quit(&tmux);

    assert!(env.zk().exists(&held).is_none());
    assert!(env.zk().exists(&queued).is_some(), "the waiter stays");
    assert!(env.zk().exists(&other).is_some(), "the lock beside stays");
    assert!(env.zk().exists(&kazoo_node).is_some(), "kazoo's lock stays");
    assert_eq!(
        CoTenants::snapshot(&env),
        before,
        "a co-tenant node changed"
    );
    let (how, nodes, reason) = end_record(&env, "/locks/alpha");
    assert_eq!(how, "broken");
    let name = held.rsplit('/').next().unwrap().to_owned();
    assert_eq!(nodes, [(name, holder.session_hex())]);
    assert_eq!(reason.as_deref(), Some("stuck since monday"));
    peers::release(kazoo);
}

#[test]
fn a_node_made_again_between_the_confirmation_and_the_yes_is_neither_deleted_nor_revoked() {
    let env = TestEnv::new();
    let first = env.connect();
    env.zk().mkdir_p("/locks/gamma");
    let held = first.create_ephemeral_sequential("/locks/gamma/lock-", b"");
    let tmux = top_on(&env, &[], "/locks/gamma");
    tmux.send(&["r"]);
    shows(&tmux, &held);
    // Gone and made again under the same name, by another session.
    first.close();
    let again = env.connect();
    again.create_ephemeral(&held, b"");
    tmux.send(&["y"]);
    shows(&tmux, &format!("left alone {held}: it is a new node"));
    quit(&tmux);
    let (_, stat) = env.zk().get(&held);
    assert_eq!(
        stat.ephemeral_owner,
        again.session_id(),
        "the new node stays"
    );
    assert_eq!(env.zk().get("/locks/gamma").0, b"", "no end record");

    // Nor is __REVOKE__ written into one (a Curator holder's, which would
    // obey it), though it is at the version the first was. The first
    // one's data, its owner as the confirmation shows it, is escaped.
    let first = env.connect();
    env.zk().mkdir_p("/locks/eps");
    let held = first.create_ephemeral_sequential(
        "/locks/eps/_c_2f6a0e2e-5b7c-4f0e-9a43-7d0c1b8e9f10-lock-",
        b"\x1b]2;pwned\x07ops\nroot",
    );
    let tmux = top_on(&env, &[], "/locks/eps");
    tmux.send(&["v"]);
    let screen = shows(&tmux, &held);
    assert!(screen.contains(r"\x1b]2;pwned\x07ops\nroot"), "{screen}");
    first.close();
    let again = env.connect();
    again.create_ephemeral(&held, b"");
    tmux.send(&["y"]);
    shows(&tmux, &format!("left alone {held}: it is a new node"));
    quit(&tmux);
    assert_eq!(env.zk().get(&held).0, b"", "nothing written");
}

#[test]
fn revoke_from_top_writes_revoke_and_a_revocable_curator_holder_lets_go() {
    let env = TestEnv::new();
    let mut polite = peer(
        &env,
        Library::Curator,
        "/locks/polite",
        "mutex",
        &["--revocable"],
    );
    acquired(&mut polite, WAIT);
    let mut deaf = peer(&env, Library::Curator, "/locks/deaf", "mutex", &[]);
    let deaf_node = acquired(&mut deaf, WAIT);

    let tmux = top_on(&env, &[], "/locks/deaf");
    tmux.send(&["v"]);
    shows(
        &tmux,
        "Revoke /locks/deaf: write __REVOKE__ into 1 contender",
    );
    tmux.send(&["y"]);
    shows(&tmux, &format!("asked {deaf_node} to let go (__REVOKE__)"));
    quit(&tmux);
    // Byte for byte what Curator reads; a holder without a revocation
    // listener keeps its node.
    assert_eq!(env.zk().get(&deaf_node).0, b"__REVOKE__");

    let tmux = top_on(&env, &[], "/locks/polite");
    tmux.send(&["v", "y"]);
    shows(&tmux, "to let go (__REVOKE__)");
    assert!(polite.next_line(WAIT).starts_with("REVOKED"));
    wait_until(WAIT, "the revoked Curator holder lets go", || {
        env.zk().children_if_any("/locks/polite").is_empty()
    });
    quit(&tmux);
    peers::release(deaf);
}

#[test]
fn reap_from_top_deletes_a_contender_whose_session_is_cut_off() {
    let server = ZkServer::new();
    let env = TestEnv::with_server(&server);
    let proxy = FaultProxy::start(&server.address());
    // A kazoo holder that reaches the server only through the proxy, with
    // a session that outlives the test; and a live waiter behind it.
    let mut dead = peer_on(
        &proxy.hosts(&env),
        Library::Kazoo,
        "/locks/delta",
        "mutex",
        &["--session-timeout-ms", "60000"],
    );
    let dead_node = acquired(&mut dead, WAIT);
    let mut live = peer(&env, Library::Kazoo, "/locks/delta", "mutex", &[]);
    let live_node = wait_for(WAIT, "the live kazoo waiter queues", || {
        let children = env.zk().children("/locks/delta");
        let waiting = children
            .iter()
            .find(|child| !dead_node.ends_with(child.as_str()))?;
        Some(format!("/locks/delta/{waiting}"))
    });
    dead.signal(libc::SIGSTOP);
    proxy.cut();
    wait_until(WAIT, "the server notices the holder is gone", || {
        let stat: support::json::Lock = env
            .zklock(["stat", "/locks/delta", "-o", "json"])
            .run()
            .assert_success()
            .json();
        stat.holders[0].connection.as_deref() == Some("disconnected")
    });

    let tmux = top_on(&env, &[], "/locks/delta");
    // The opened lock, its live waiter chosen: a warning that it is alive.
    tmux.send(&["Enter", "Down", "x"]);
    let screen = shows(&tmux, "Reap /locks/delta: delete 1 contender");
    assert!(screen.contains(&live_node), "{screen}");
    assert!(
        screen.contains("1 of these sessions is connected"),
        "{screen}"
    );
    tmux.send(&["Escape"]);
    shows(&tmux, "cancelled: nothing was done");
    tmux.send(&["Escape"]);
    shows(&tmux, "s: sort");
    // On the list, reap takes the contenders known to be disconnected.
    tmux.send(&["x"]);
    let screen = shows(&tmux, "Reap /locks/delta: delete 1 contender");
    assert!(screen.contains(&dead_node), "{screen}");
    assert!(screen.contains("not connected"), "{screen}");
    assert!(!screen.contains(&live_node), "{screen}");
    assert!(!screen.contains("sessions is connected"), "{screen}");
    tmux.send(&["y"]);
    shows(&tmux, &format!("deleted {dead_node} (end record: reaped)"));
    quit(&tmux);

    assert!(env.zk().exists(&dead_node).is_none());
    assert_eq!(
        acquired(&mut live, WAIT),
        live_node,
        "the live waiter holds"
    );
    let (how, nodes, reason) = end_record(&env, "/locks/delta");
    assert_eq!(how, "reaped");
    assert_eq!(nodes.len(), 1, "{nodes:?}");
    assert_eq!(reason, None);
    dead.signal(libc::SIGCONT);
    dead.kill();
    peers::release(live);
}
