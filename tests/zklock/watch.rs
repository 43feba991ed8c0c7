//! watch against a real ZooKeeper: the events of zklock, Curator and kazoo
//! contenders in order, --until, --timeout and --count, a server restart
//! inside the session timeout and an expired session (each a gap), and the
//! one-shot watches used on a server without persistent ones.

use crate::support;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use support::json::WatchEvent;
use support::peers::{self, Library, acquired, peer};
use support::proxy::FaultProxy;
use support::{Running, TestEnv, ZkServer, wait_until};
use zookeeper_client as zkc;

const WAIT: Duration = Duration::from_secs(20);

/// `zklock -o json watch ARGS...`, started; returns once it has printed
/// the state it began with (up to its `watching` line), and that state.
fn watch(env: &TestEnv, args: &[&str]) -> (Running, Vec<WatchEvent>) {
    let mut watching = env.zklock(["-o", "json", "watch"]).args(args).spawn();
    let mut state = Vec::new();
    loop {
        let event = next_event(&mut watching);
        let done = event.event == "watching";
        state.push(event);
        if done {
            return (watching, state);
        }
    }
}

/// The next event a JSON watch prints.
pub(crate) fn next_event(watching: &mut Running) -> WatchEvent {
    let line = watching.next_line(WAIT);
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?} is no watch event: {e}"))
}

/// The next event, which must be `kind` about `node` (or, for lock-level
/// events, about the lock `node`).
#[track_caller]
pub(crate) fn expect(watching: &mut Running, kind: &str, node: &str) -> WatchEvent {
    let event = next_event(watching);
    let about = event.node.as_deref().unwrap_or(&event.lock);
    assert_eq!((event.event.as_str(), about), (kind, node), "{event:#?}");
    event
}

/// `zklock lock LOCK` holding until SIGTERM, once it holds; and its token.
fn hold(env: &TestEnv, lock: &str) -> (Running, String) {
    let mut holder = env.zklock(["lock", lock]).spawn();
    let token = holder.next_line(WAIT);
    (holder, token)
}

fn release(mut holder: Running) {
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
}

fn czxid(env: &TestEnv, node: &str) -> i64 {
    env.zk().get(node).1.czxid
}

#[test]
fn zklock_contenders_wait_acquire_release_in_order_and_the_directory_goes() {
    let env = TestEnv::new();
    let (mut watching, state) = watch(&env, &["w"]);
    assert_eq!(state.len(), 1, "nothing holds /locks/w yet: {state:#?}");
    assert_eq!((state[0].holders, state[0].waiters), (0, 0));
    assert_eq!(state[0].lock, "/locks/w");

    let (first, first_node) = hold(&env, "w");
    let event = expect(&mut watching, "acquired", &first_node);
    assert_eq!(event.fence, Some(czxid(&env, &first_node)));
    assert_eq!(event.mode.as_deref(), Some("exclusive"));
    assert_eq!((event.holders, event.waiters), (1, 0));
    let owner = event.owner_text.expect("owner text");
    assert!(owner.contains(&format!("pid {}", first.pid())), "{owner}");
    assert_eq!(event.time_ms / 1000, {
        let secs = humantime::parse_rfc3339(&event.time).expect("RFC 3339 time");
        secs.duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64
    });

    let mut second = env.zklock(["lock", "w"]).spawn();
    let waiting = next_event(&mut watching);
    assert_eq!(waiting.event, "waiting", "{waiting:#?}");
    assert_eq!(waiting.waiting_on.as_deref(), Some(first_node.as_str()));
    assert_eq!((waiting.holders, waiting.waiters), (1, 1));
    let second_node = waiting.node.clone().expect("node");

    release(first);
    let released = expect(&mut watching, "released", &first_node);
    assert_eq!((released.holders, released.waiters), (0, 1));
    let handed = expect(&mut watching, "acquired", &second_node);
    assert!(
        handed.fence > released.fence,
        "fences grow with every holder"
    );
    assert_eq!(second.next_line(WAIT), second_node);

    release(second);
    expect(&mut watching, "released", &second_node);
    // zklock makes lock directories as containers: the server deletes them.
    let gone = expect(&mut watching, "gone", "/locks/w");
    assert_eq!((gone.holders, gone.waiters), (0, 0));
    assert!(watching.is_running());
}

#[test]
fn the_state_at_the_start_lists_holders_and_queued_waiters_of_every_lock_below() {
    let env = TestEnv::new();
    let (a, a_node) = hold(&env, "app/a");
    let (b, b_node) = hold(&env, "app/b");
    let mut queued = env.zklock(["lock", "app/b"]).spawn();
    wait_until(WAIT, "a waiter queues on /locks/app/b", || {
        env.zk().children("/locks/app/b").len() == 2
    });
    let (_watching, state) = watch(&env, &["app"]);
    for event in &state {
        assert_eq!(support::rfc3339_ms(&event.time), event.time_ms, "{event:?}");
    }
    let summary: Vec<(&str, &str)> = state
        .iter()
        .map(|e| (e.event.as_str(), e.node.as_deref().unwrap_or(&e.lock)))
        .collect();
    assert_eq!(summary.len(), 4, "{state:#?}");
    assert_eq!(summary[0], ("holding", a_node.as_str()));
    assert_eq!(summary[1], ("holding", b_node.as_str()));
    assert_eq!(summary[2].0, "queued");
    assert_eq!(state[2].waiting_on.as_deref(), Some(b_node.as_str()));
    assert_eq!(summary[3], ("watching", "/locks/app"));
    assert_eq!((state[3].holders, state[3].waiters), (2, 1));
    queued.kill();
    release(a);
    release(b);
}

#[test]
fn curator_contenders_in_order() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/c");
    let (mut watching, _) = watch(&env, &["c"]);
    let mut holder = peer(&env, Library::Curator, "/locks/c", "mutex", &[]);
    let held = acquired(&mut holder, WAIT);
    let event = expect(&mut watching, "acquired", &held);
    // Curator stores the client's IP address: the owner text shows it.
    let owner = event.owner_text.expect("owner");
    assert!(owner.parse::<std::net::IpAddr>().is_ok(), "{owner}");
    assert_eq!(event.fence, Some(czxid(&env, &held)));

    let mut waiter = peer(&env, Library::Curator, "/locks/c", "mutex", &[]);
    let waiting = next_event(&mut watching);
    assert_eq!(waiting.event, "waiting", "{waiting:#?}");
    assert_eq!(waiting.waiting_on.as_deref(), Some(held.as_str()));

    peers::release(holder);
    expect(&mut watching, "released", &held);
    let next = acquired(&mut waiter, WAIT);
    assert_eq!(Some(&next), waiting.node.as_ref());
    expect(&mut watching, "acquired", &next);
    peers::release(waiter);
    expect(&mut watching, "released", &next);
}

#[test]
fn kazoo_contenders_in_order() {
    let env = TestEnv::new();
    let (mut watching, _) = watch(&env, &["k"]);
    let mut reader = peer(
        &env,
        Library::Kazoo,
        "/locks/k",
        "read",
        &["--identifier", "reader-1"],
    );
    let read = acquired(&mut reader, WAIT);
    let event = expect(&mut watching, "acquired", &read);
    assert_eq!(event.owner_text.as_deref(), Some("reader-1"));
    assert_eq!(event.mode.as_deref(), Some("shared"));

    let mut writer = peer(
        &env,
        Library::Kazoo,
        "/locks/k",
        "write",
        &["--identifier", "writer-1"],
    );
    let waiting = next_event(&mut watching);
    assert_eq!(
        (waiting.event.as_str(), waiting.owner_text.as_deref()),
        ("waiting", Some("writer-1")),
        "{waiting:#?}"
    );
    assert_eq!(waiting.mode.as_deref(), Some("exclusive"));

    peers::release(reader);
    expect(&mut watching, "released", &read);
    let written = acquired(&mut writer, WAIT);
    expect(&mut watching, "acquired", &written);
    peers::release(writer);
    expect(&mut watching, "released", &written);
}

#[test]
fn until_free_returns_only_after_the_holder_releases() {
    let env = TestEnv::new();
    let (holder, node) = hold(&env, "maint");
    // The wide form names the node by its whole path.
    let mut waiting = env
        .zklock(["-o", "wide", "watch", "--until", "free", "maint"])
        .spawn();
    waiting.wait_for_stdout(WAIT, "watch printed the state", |out| {
        out.contains("watching")
    });
    assert!(waiting.is_running(), "the lock is held: watch waits");
    release(holder);
    let run = waiting.wait(WAIT);
    run.assert_success();
    let released = run
        .stdout_lines()
        .into_iter()
        .find(|line| line.contains("released"))
        .unwrap_or_else(|| panic!("no released line: {run:?}"));
    assert!(released.contains(&node), "{released}");

    // Free already: at once.
    env.zklock(["watch", "--until", "free", "maint"])
        .run()
        .assert_success()
        .assert_faster_than(Duration::from_secs(10));
    env.zklock(["watch", "--until", "free", "/no/such/lock"])
        .run()
        .assert_success();
}

#[test]
fn until_held_returns_once_someone_holds() {
    let env = TestEnv::new();
    let (mut watching, _) = watch(&env, &["--until", "held", "job"]);
    let (holder, node) = hold(&env, "job");
    let run = watching.wait(WAIT);
    run.assert_success();
    let events: Vec<WatchEvent> = run.json_lines();
    let last = events.last().expect("events");
    assert_eq!(
        (last.event.as_str(), last.node.as_deref()),
        ("acquired", Some(node.as_str()))
    );
    release(holder);
}

#[test]
fn timeout_exits_1() {
    let env = TestEnv::new();
    let run = env.zklock(["watch", "--timeout", "300ms", "quiet"]).run();
    run.assert_code(1);
    assert!(run.elapsed >= Duration::from_millis(300), "{run:?}");
    assert!(run.stdout.contains("watching"), "{run:?}");

    let (holder, _) = hold(&env, "busy");
    env.zklock(["watch", "--until", "free", "-w", "300ms", "busy"])
        .run()
        .assert_code(1)
        .assert_stderr_contains("timed out");
    release(holder);
}

#[test]
fn count_stops_after_n_changes() {
    let env = TestEnv::new();
    let (holder, node) = hold(&env, "n");
    let (mut watching, state) = watch(&env, &["--count", "2", "n"]);
    assert_eq!(state[0].event, "holding", "the state does not count");
    let mut waiter = env.zklock(["lock", "n"]).spawn();
    // Released only once watch has seen the waiter wait: a reading after
    // both changes would show a handoff and no waiting.
    assert_eq!(next_event(&mut watching).event, "waiting");
    release(holder);
    let run = watching.wait(WAIT);
    run.assert_success();
    let events: Vec<WatchEvent> = run.json_lines();
    let changes: Vec<&str> = events[2..].iter().map(|e| e.event.as_str()).collect();
    assert_eq!(changes, ["waiting", "released"], "{events:#?}");
    assert_eq!(events[3].node.as_deref(), Some(node.as_str()));
    waiter.next_line(WAIT);
    waiter.signal(libc::SIGTERM);
    waiter.wait(WAIT).assert_success();
}

#[test]
fn a_signal_ends_the_watch_with_128_plus_n() {
    let env = TestEnv::new();
    let (mut watching, _) = watch(&env, &["sig"]);
    watching.signal(libc::SIGTERM);
    watching.wait(WAIT).assert_code(128 + libc::SIGTERM);
}

#[test]
fn the_stream_survives_a_server_restart_and_says_there_was_a_gap() {
    let server = ZkServer::new();
    let env = TestEnv::with_server(&server);
    env.zk().mkdir_p("/locks/r");
    // Persistent contenders (kazoo's ephemeral=False), so that the server
    // restart cannot take them with a session.
    let persistent = zkc::CreateMode::PersistentSequential.with_acls(zkc::Acls::anyone_all());
    let prefix = "/locks/r/0123456789abcdef0123456789abcdef__lock__";
    let (_, first) = env.zk().create_with(prefix, b"", &persistent);
    let mut watching = env
        .zklock(["--session-timeout", "30s", "-o", "json", "watch", "r"])
        .spawn();
    expect(&mut watching, "holding", &first);
    expect(&mut watching, "watching", "/locks/r");

    server.restart();
    // A change right after the restart: before or after watch is back, it
    // comes after the gap line. (The test's own client reconnects too.)
    wait_until(WAIT, "the holder's node is deleted", || {
        matches!(
            env.zk().try_delete(&first),
            Ok(()) | Err(zkc::Error::NoNode)
        )
    });
    let gap = expect(&mut watching, "gap", "/locks/r");
    assert_eq!(
        (gap.holders, gap.waiters),
        (1, 0),
        "the state before the gap"
    );
    expect(&mut watching, "released", &first);

    let (_, second) = env.zk().create_with(prefix, b"", &persistent);
    expect(&mut watching, "acquired", &second);
    assert!(watching.is_running());
}

/// A TCP proxy to a ZooKeeper server that renames every addWatch request
/// (opcode 106) to an opcode no server knows, so the server answers it as
/// ZooKeeper before 3.6 answers addWatch: "unimplemented", and closes the
/// connection. Everything else passes unchanged.
struct ServerWithoutAddWatch {
    port: u16,
}

const ADD_WATCH: i32 = 106;
const UNKNOWN_OP: i32 = 9999;

impl ServerWithoutAddWatch {
    fn start(upstream: String) -> ServerWithoutAddWatch {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().expect("proxy address").port();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                let (Ok(client_back), Ok(server_back)) = (client.try_clone(), server.try_clone())
                else {
                    continue;
                };
                std::thread::spawn(move || copy_requests(client, server));
                std::thread::spawn(move || copy_replies(server_back, client_back));
            }
        });
        ServerWithoutAddWatch { port }
    }

    fn hosts(&self, env: &TestEnv) -> String {
        format!("127.0.0.1:{}{}", self.port, env.chroot())
    }
}

/// Client to server, frame by frame (4-byte length, then the body); after
/// the ConnectRequest a body starts with xid and opcode.
fn copy_requests(mut client: TcpStream, mut server: TcpStream) {
    let mut first = true;
    loop {
        let mut length = [0u8; 4];
        if client.read_exact(&mut length).is_err() {
            break;
        }
        let mut body = vec![0u8; i32::from_be_bytes(length).max(0) as usize];
        if client.read_exact(&mut body).is_err() {
            break;
        }
        if !first
            && body.len() >= 8
            && i32::from_be_bytes(body[4..8].try_into().unwrap()) == ADD_WATCH
        {
            body[4..8].copy_from_slice(&UNKNOWN_OP.to_be_bytes());
        }
        first = false;
        if server
            .write_all(&length)
            .and_then(|()| server.write_all(&body))
            .is_err()
        {
            break;
        }
    }
    let _ = server.shutdown(std::net::Shutdown::Both);
}

fn copy_replies(mut server: TcpStream, mut client: TcpStream) {
    let _ = std::io::copy(&mut server, &mut client);
    let _ = client.shutdown(std::net::Shutdown::Both);
}

#[test]
fn one_shot_watches_on_a_server_without_persistent_ones() {
    let env = TestEnv::new();
    let old = ServerWithoutAddWatch::start(env.servers().to_owned());
    let mut watching = support::Zklock::new(["-v", "-o", "json", "watch", "app"])
        .json_log()
        .hosts(old.hosts(&env))
        .spawn();
    expect(&mut watching, "watching", "/locks/app");
    wait_until(WAIT, "watch says it uses one-shot watches", || {
        watching
            .log_events("watching")
            .iter()
            .any(|event| event["method"] == "one-shot")
    });

    // A lock in a directory that did not exist when the watch began.
    let (first, first_node) = hold(&env, "app/deep/x");
    expect(&mut watching, "acquired", &first_node);
    let mut second = env.zklock(["lock", "app/deep/x"]).spawn();
    let waiting = next_event(&mut watching);
    assert_eq!(waiting.event, "waiting", "{waiting:#?}");
    release(first);
    expect(&mut watching, "released", &first_node);
    let second_node = waiting.node.expect("node");
    expect(&mut watching, "acquired", &second_node);
    assert_eq!(second.next_line(WAIT), second_node);
    release(second);
    expect(&mut watching, "released", &second_node);
    expect(&mut watching, "gone", "/locks/app/deep/x");
}

#[test]
fn a_curator_semaphore_hands_its_lease_on() {
    let env = TestEnv::new();
    let one = ["--max-leases", "1"];
    let (mut watching, _) = watch(&env, &["sem"]);
    // The semaphore's events (of its leases and of the acquirers queued in
    // its internal mutex) until `kind` of `node`, in order. Curator takes
    // the internal mutex (sem/locks) before its first lease makes
    // sem/leases: until then that mutex is a lock of its own, as ls shows
    // it too; those events are left out.
    let mut until = |kind: &str, node: &str| {
        let mut seen = Vec::new();
        loop {
            let event = next_event(&mut watching);
            if event.lock == "/locks/sem/locks" {
                continue;
            }
            assert_eq!(event.lock, "/locks/sem", "{event:#?}");
            let done = event.event == kind && event.node.as_deref() == Some(node);
            seen.push((event.event, event.node.unwrap_or_default()));
            if done {
                return seen;
            }
        }
    };
    let mut first = peer(&env, Library::Curator, "/locks/sem", "semaphore", &one);
    let lease = acquired(&mut first, WAIT);
    until("acquired", &lease);

    let mut second = peer(&env, Library::Curator, "/locks/sem", "semaphore", &one);
    wait_until(WAIT, "the second lease is pending", || {
        env.zk().children("/locks/sem/leases").len() == 2
    });
    peers::release(first);
    let next = acquired(&mut second, WAIT);
    let handoff = until("acquired", &next);
    // The first lease's release comes before the next lease is acquired.
    assert!(
        handoff
            .iter()
            .any(|(kind, node)| kind == "released" && *node == lease),
        "no release of {lease} before the next lease: {handoff:#?}"
    );
    peers::release(second);
}

#[test]
fn an_expired_session_is_replaced_and_says_there_was_a_gap() {
    let server = ZkServer::new();
    let env = TestEnv::with_server(&server);
    let proxy = FaultProxy::start(env.servers());
    let mut watching =
        support::Zklock::new(["--session-timeout", "1s", "-o", "json", "watch", "x"])
            .hosts(proxy.hosts(&env))
            .spawn();
    expect(&mut watching, "watching", "/locks/x");
    let sessions = || {
        server.mntr()["zk_global_sessions"]
            .parse::<u64>()
            .expect("a count")
    };
    let before = sessions();
    proxy.freeze();
    wait_until(WAIT, "the server expires watch's session", || {
        sessions() < before
    });
    let (holder, node) = hold(&env, "x");
    proxy.pass();
    expect(&mut watching, "gap", "/locks/x");
    expect(&mut watching, "acquired", &node);
    release(holder);
    expect(&mut watching, "released", &node);
}

/// Who holds and who waits, by node path, as `stat` reads the lock now.
fn standings_read_now(env: &TestEnv, lock: &str) -> BTreeMap<String, bool> {
    let run = env.zklock(["-o", "json", "stat", lock]).run();
    run.assert_success();
    let lock: support::json::Lock = run.json();
    let holders = lock.holders.into_iter().map(|c| (c.path, true));
    holders
        .chain(lock.waiters.into_iter().map(|c| (c.path, false)))
        .collect()
}

/// A watch's event stream folded into the standings it implies (node:
/// holding or not, and its mode), each event checked against them as it
/// comes: so a dropped, repeated or misordered event fails at once, not
/// only in the end state.
#[derive(Default)]
struct Fold {
    standings: BTreeMap<String, (bool, String)>,
}

impl Fold {
    /// How many hold and how many wait.
    fn counts(&self) -> (u64, u64) {
        let holders = self.standings.values().filter(|(holds, _)| *holds).count();
        (holders as u64, (self.standings.len() - holders) as u64)
    }

    /// Applies the state a watch began with, up to its `watching` event,
    /// whose counts are those of the whole state.
    #[track_caller]
    fn start(state: &[WatchEvent]) -> Fold {
        let mut fold = Fold::default();
        let (watching, contenders) = state.split_last().expect("a watching event");
        for event in contenders {
            fold.apply(event);
        }
        assert_eq!(fold.counts(), (watching.holders, watching.waiters));
        fold
    }

    /// Applies the events of `watching` until the standings are those
    /// `stat` reads for `lock` now (failing when the events stop short).
    #[track_caller]
    fn catch_up(&mut self, env: &TestEnv, lock: &str, watching: &mut Running) {
        let expected = standings_read_now(env, lock);
        while self.standings() != expected {
            self.apply(&next_event(watching));
        }
    }

    /// Who holds and who waits, by node path.
    fn standings(&self) -> BTreeMap<String, bool> {
        self.standings
            .iter()
            .map(|(node, (holds, _))| (node.clone(), *holds))
            .collect()
    }

    /// Applies one event of one lock, checking that it is a transition the
    /// standings allow; that its counts are those of the standings after
    /// it; that the holders still stand ahead of every waiter and an
    /// exclusive holder holds alone; and that a waiter waits on a node
    /// ahead of it.
    #[track_caller]
    fn apply(&mut self, event: &WatchEvent) {
        let node = event.node.clone().unwrap_or_else(|| panic!("{event:#?}"));
        let before = self.standings.get(&node).map(|(holds, _)| *holds);
        let (allowed, after) = match event.event.as_str() {
            "holding" => (before.is_none(), Some(true)),
            "queued" => (before.is_none(), Some(false)),
            "acquired" => (before != Some(true), Some(true)),
            "waiting" => (before != Some(false), Some(false)),
            "released" => (before == Some(true), None),
            "left" => (before == Some(false), None),
            other => panic!("unexpected event {other}: {event:#?}"),
        };
        assert!(allowed, "{node} was {before:?}: {event:#?}");
        match after {
            Some(holds) => {
                let mode = event.mode.clone().expect("a contender's mode");
                self.standings.insert(node.clone(), (holds, mode));
            }
            None => {
                self.standings.remove(&node);
            }
        }
        let holders: Vec<(&String, &String)> = self
            .standings
            .iter()
            .filter(|(_, (holds, _))| *holds)
            .map(|(node, (_, mode))| (node, mode))
            .collect();
        // The state at the start carries the lock's counts; each change the
        // counts after it.
        let state = ["holding", "queued"].contains(&event.event.as_str());
        let counts = self.counts();
        if !state {
            assert_eq!((event.holders, event.waiters), counts, "after {event:#?}");
        }
        let last_holder = holders.iter().map(|(n, _)| sequence(n)).max();
        let first_waiter = self
            .standings
            .iter()
            .filter(|(_, (holds, _))| !holds)
            .map(|(n, _)| sequence(n))
            .min();
        if let (Some(last), Some(first)) = (last_holder, first_waiter) {
            assert!(last < first, "a waiter ahead of a holder after {event:#?}");
        }
        if holders.iter().any(|(_, mode)| *mode == "exclusive") {
            assert_eq!(holders.len(), 1, "an exclusive holder shares: {event:#?}");
        }
        if event.event == "waiting" {
            let ahead = event.waiting_on.as_ref().expect("whom it waits on");
            assert!(
                sequence(ahead) < sequence(&node),
                "waits on {ahead}, not ahead of it: {event:#?}"
            );
        }
    }
}

/// The sequence number a contender node's name ends in.
fn sequence(node: &str) -> i64 {
    node[node.len() - 10..].parse().expect("a sequence number")
}

#[test]
fn the_event_stream_agrees_with_a_full_reading_after_churn() {
    let env = TestEnv::new();
    let zk = env.zk();
    zk.mkdir_p("/locks/churn");
    let prefix = "/locks/churn/_c_2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f-";
    let contender = |i: usize| {
        let kind = if i.is_multiple_of(3) {
            "__WRIT__"
        } else {
            "__READ__"
        };
        zk.create_ephemeral_sequential(&format!("{prefix}{kind}"), b"")
    };
    let mut nodes: Vec<String> = (0..30).map(contender).collect();
    let (mut watching, state) = watch(&env, &["churn"]);
    let mut fold = Fold::start(&state);
    // Holders, waiters in the middle and at the tail go; newcomers queue.
    for round in 0..60 {
        let index = [0, nodes.len() / 2, nodes.len() - 1][round % 3];
        zk.delete(&nodes.remove(index));
        nodes.push(contender(round));
    }
    fold.catch_up(&env, "churn", &mut watching);
    assert_eq!(fold.standings().len(), 30);
    watching.signal(libc::SIGTERM);
}

/// What the heavy churn below does in one step.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// A reader or a writer (Curator's names), or a mutex contender (the
    /// generic name), queues.
    Queue(&'static str),
    /// The first contender goes: a handoff.
    DeleteHead,
    /// A waiter in the middle gives up.
    DeleteMiddle,
    /// A persistent node with a contender's name, which is no contender:
    /// some application's data.
    Foreign,
    /// A foreign node takes zklock's owner record as its data (so it is a
    /// contender, as zklock's --ttl locks are), or gives it up again.
    ToggleOwner,
}

#[test]
fn heavy_churn_of_readers_writers_handoffs_and_impostors_streams_every_transition() {
    let env = TestEnv::new();
    let zk = env.zk();
    zk.mkdir_p("/locks/mix");
    // A real zklock holder, and a real zklock waiter behind the first
    // contenders: one is released, the other gives up, in the middle of
    // the churn.
    let (holder, holder_node) = hold(&env, "mix");
    let owner_record = zk.get(&holder_node).0;
    let curator = "/locks/mix/_c_2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f-";
    let queue = |kind: &str| {
        let prefix = match kind {
            "lock-" => "/locks/mix/lock-".to_owned(),
            _ => format!("{curator}{kind}"),
        };
        zk.create_ephemeral_sequential(&prefix, b"")
    };
    let mut contenders: Vec<String> = (0..12)
        .map(|i| queue(["__READ__", "__WRIT__", "lock-"][i % 3]))
        .collect();
    let waiter = env.zklock(["lock", "mix"]).spawn();
    wait_until(WAIT, "the zklock waiter queues", || {
        zk.children("/locks/mix").len() == 14
    });
    let (mut watching, state) = watch(&env, &["mix"]);
    let mut fold = Fold::start(&state);
    assert_eq!(fold.standings().len(), 14, "{state:#?}");

    let persistent = zkc::CreateMode::PersistentSequential.with_acls(zkc::Acls::anyone_all());
    let mut foreign: Vec<(String, bool)> = Vec::new();
    let mut holder = Some(holder);
    let mut waiter = Some(waiter);
    let mut rng = fastrand::Rng::with_seed(18);
    for round in 0..240 {
        if round == 10 {
            release(holder.take().expect("the holder"));
        }
        if round == 120 {
            let mut gave_up = waiter.take().expect("the waiter");
            gave_up.signal(libc::SIGTERM);
            gave_up.wait(WAIT);
        }
        let step = match rng.u8(0..20) {
            _ if contenders.len() < 8 => Step::Queue("__READ__"),
            0..=4 => Step::Queue("__READ__"),
            5..=6 => Step::Queue("__WRIT__"),
            7 => Step::Queue("lock-"),
            8..=11 => Step::DeleteHead,
            12..=15 => Step::DeleteMiddle,
            16..=17 => Step::Foreign,
            _ => Step::ToggleOwner,
        };
        match step {
            Step::Queue(kind) => contenders.push(queue(kind)),
            Step::DeleteHead => {
                // The head may be an impostor that took the owner record
                // with a sequence ahead of the queue: it stops being one.
                let impostor = foreign
                    .iter_mut()
                    .filter(|(_, owned)| *owned)
                    .min_by_key(|(node, _)| sequence(node))
                    .filter(|(node, _)| sequence(node) < sequence(&contenders[0]));
                match impostor {
                    Some((node, owned)) => {
                        *owned = false;
                        zk.set(node, b"");
                    }
                    None => zk.delete(&contenders.remove(0)),
                }
            }
            Step::DeleteMiddle => zk.delete(&contenders.remove(contenders.len() / 2)),
            Step::Foreign => {
                let (_, node) = zk.create_with("/locks/mix/lock-", b"", &persistent);
                foreign.push((node, false));
            }
            Step::ToggleOwner => {
                let pick = rng.usize(..foreign.len().max(1));
                if let Some((node, owned)) = foreign.get_mut(pick) {
                    *owned = !*owned;
                    zk.set(node, if *owned { &owner_record } else { b"" });
                }
            }
        }
        // After a step that moves the holders, and now and then: the
        // stream must reach what a full reading shows now, with no further
        // change to bring in an event that is late.
        if matches!(step, Step::DeleteHead | Step::ToggleOwner) || round % 25 == 0 {
            fold.catch_up(&env, "mix", &mut watching);
        }
    }
    fold.catch_up(&env, "mix", &mut watching);
    watching.signal(libc::SIGTERM);
}

#[test]
fn watch_without_a_path_follows_the_root() {
    let env = TestEnv::new();
    let (holder, node) = hold(&env, "team/job");
    // As ls, top and dump do, watch with no path takes --root: the hold
    // under it is in the state watch starts from.
    let (mut watching, state) = watch(&env, &["--count", "1"]);
    let held: Vec<&str> = state
        .iter()
        .filter(|event| event.event == "holding")
        .filter_map(|event| event.node.as_deref())
        .collect();
    assert_eq!(held, [node.as_str()], "{state:#?}");
    assert_eq!(
        state.last().map(|event| event.lock.as_str()),
        Some("/locks")
    );
    release(holder);
    watching.wait(WAIT).assert_success();
}
