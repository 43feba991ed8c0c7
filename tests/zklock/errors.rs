//! Errors name their cause: each failure below exits with its code and
//! puts a stable `cause` word in the JSON error on stderr (the wording for
//! people is not tested). A connection the server drops at once (its limit
//! of connections from one host) is retried for as long as the lock may
//! wait, so many processes started together from one host all get the lock;
//! a read whose connection is lost is retried `--retries` times.

use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::support;

use support::fencing::Stage;
use support::json::ErrorReport;
use support::proxy::{ClientMessage, FaultProxy, Trigger, op};
use support::{TestEnv, ZkOptions, ZkServer, Zklock, dead_port};
use zookeeper_client as zkc;

#[test]
fn each_failure_has_its_exit_code_and_cause() {
    let env = TestEnv::new();
    let read_only = [zkc::Acl::new(
        zkc::Permission::READ,
        zkc::AuthId::new("world", "anyone"),
    )];
    env.zk().mkdir_p("/locks");
    env.zk().create_with(
        "/locks/sealed",
        b"",
        &zkc::CreateMode::Persistent.with_acls(zkc::Acls::new(&read_only)),
    );
    let refused = format!("127.0.0.1:{}", dead_port());
    let no_chroot = format!("{}/no-such-chroot", env.hosts());
    env.zklock(["lock", "held", "--detach", "--lease", "1m"])
        .run()
        .assert_success();
    let cases: Vec<(Zklock, i32, &str)> = vec![
        (env.zklock(["-o", "json", "ls", "a//b"]), 2, "usage"),
        (
            env.zklock(["-o", "json", "lock", "x", "-w", "-1", "--", "true"]),
            2,
            "usage",
        ),
        (env.zklock(["-o", "json", "stat", "nope"]), 6, "no_node"),
        (
            env.zklock(["-o", "json", "lock", "held", "-n", "--", "true"]),
            1,
            "not_acquired",
        ),
        (
            Zklock::new(["-o", "json", "ls", "--connect-timeout", "1s"]).hosts(refused),
            3,
            "connection_refused",
        ),
        (
            env.zklock(["-o", "json", "lock", "sealed/deploy", "-n", "--detach"]),
            5,
            "acl_denied",
        ),
        (
            Zklock::new(["-o", "json", "lock", "deploy", "-n", "--detach"]).hosts(no_chroot),
            6,
            "no_chroot",
        ),
    ];
    for (zklock, code, cause) in cases {
        let run = zklock.run();
        assert_eq!(ErrorReport::of(&run, code).cause, cause, "{}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    }
}

/// The names of ZooKeeper's requests: a person asked about a lock or a
/// node, so no message shows one of them before a path.
const REQUEST_NAMES: &[&str] = &[
    "list",
    "get",
    "getData",
    "getChildren",
    "getChildren2",
    "exists",
    "stat",
    "sync",
    "multi",
    "setData",
    "revoke",
    "addWatch",
];

/// The request name `message` shows right before a path, if any.
fn request_name_before_a_path(message: &str) -> Option<String> {
    let words: Vec<&str> = message.split_whitespace().collect();
    words.windows(2).find_map(|pair| {
        let named = REQUEST_NAMES.contains(&pair[0]) && pair[1].starts_with('/');
        named.then(|| format!("{} {}", pair[0], pair[1]))
    })
}

#[test]
fn where_a_node_is_missing_no_command_names_a_request() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/tryout");
    let missing = "/tryout/nosuch";
    let token = "/tryout/nosuch/_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000001";
    let cases: &[(&[&str], i32, &str)] = &[
        (&["ls", missing], 6, "no_node"),
        (&["ls", missing, "-o", "prometheus"], 6, "no_node"),
        (&["stat", missing], 6, "no_node"),
        (&["stat", token], 6, "no_node"),
        (&["dump", missing], 6, "no_node"),
        (&["deadlocks", missing], 6, "no_node"),
        (&["reap", missing, "--all", "--yes"], 6, "no_node"),
        (&["release", token], 6, "no_node"),
        (&["release", missing, "--holders", "--yes"], 6, "no_node"),
        (&["release", missing, "--revoke"], 6, "no_node"),
    ];
    for &(args, code, cause) in cases {
        let shown = env.zklock(args).run();
        shown.assert_code(code);
        assert!(shown.stderr.contains(missing), "{args:?}: {}", shown.stderr);
        assert_eq!(
            request_name_before_a_path(&shown.stderr),
            None,
            "{args:?}: {}",
            shown.stderr
        );
        let json = env.zklock(args).args(["-o", "json"]).run();
        let report = ErrorReport::of(&json, code);
        assert_eq!(report.cause, cause, "{args:?}");
        assert_eq!(
            request_name_before_a_path(&report.error),
            None,
            "{report:?}"
        );
    }
}

/// A server that accepts every connection and closes it at once, as a
/// ZooKeeper server does past its limit of connections from one host;
/// counts the connections.
fn dropping_server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address").to_string();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&accepted);
    std::thread::spawn(move || {
        for connection in listener.incoming() {
            counter.fetch_add(1, Ordering::SeqCst);
            drop(connection);
        }
    });
    (address, accepted)
}

#[test]
fn a_dropped_connection_is_retried_for_as_long_as_the_lock_may_wait() {
    let (address, accepted) = dropping_server();
    let lock = |extra: &[&str]| {
        let started = Instant::now();
        let run = Zklock::new(["-o", "json", "--connect-timeout", "1s", "--retries", "1"])
            .args(["lock", "deploy", "--detach", "--lease", "1m"])
            .args(extra)
            .hosts(address.clone())
            .run();
        (run, started.elapsed())
    };
    // Without -w: connect timeout × (retries + 1) = 2 s, then give up.
    let (run, took) = lock(&[]);
    assert_eq!(ErrorReport::of(&run, 3).cause, "connection_dropped");
    assert!(
        took >= Duration::from_millis(1500),
        "gave up after {took:?}"
    );
    // With -w 5s: tried again and again until about 5 s have gone by.
    let before = accepted.load(Ordering::SeqCst);
    let (run, took) = lock(&["-w", "5s"]);
    assert_eq!(ErrorReport::of(&run, 3).cause, "connection_dropped");
    assert!(took >= Duration::from_secs(3), "gave up after {took:?}");
    assert!(took < Duration::from_secs(20), "gave up after {took:?}");
    assert!(
        accepted.load(Ordering::SeqCst) - before >= 4,
        "tried several times"
    );
}

/// 24 from one host against 15 connections, with `-w 40s`: the first holds
/// for 9 s, long enough that those refused at first connect only after
/// more than the 7.8 s that the default session and --kill-after leave,
/// some to find the lock free at once. The time they spent refused is no
/// evidence against their session: each holds in turn and runs its command
/// (none counts its lock lost at once, exit 4, nor gives up, exit 3).
#[test]
fn many_locks_from_one_host_past_the_servers_connection_limit_all_succeed() {
    let server = ZkServer::with_options(
        &ZkOptions::default()
            .config("maxClientCnxns=15")
            .config("forceSync=no"),
    );
    let stage = Stage::new(TestEnv::with_server(&server), "fanout");
    let waiter = |i: usize, body: &str| {
        stage
            .fenced(&stage.hosts(), &["-w", "40s"], &format!("w{i}"), body)
            .spawn()
    };
    let mut running = vec![waiter(0, "sleep 9")];
    stage.log().wait_for_start("w0", Duration::from_secs(30));
    running.extend((1..24).map(|i| waiter(i, "true")));
    for (i, process) in running.iter_mut().enumerate() {
        let run = process.wait(Duration::from_secs(120));
        assert_eq!(run.code, Some(0), "process {i}: {}", run.stderr);
    }
    assert_eq!(stage.log().assert_exclusive().len(), 24, "{}", stage.log());
}

/// The first backoff's full length: each retry waits a random point in the
/// upper half of its backoff, which doubles from this.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

/// `--retries N`: a read whose connection is lost each time it is sent is
/// sent N + 1 times (6 by default), the retries spaced by the documented
/// backoff, and then zklock gives up: exit 3, cause `connection_lost`. The
/// read is `stat`'s get of a node that is not a lock.
#[test]
fn a_read_that_loses_its_connection_every_time_is_sent_retries_plus_one_times() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/plain");
    let proxy = FaultProxy::start(env.servers());
    let is_read = |message: &ClientMessage| {
        matches!(message, ClientMessage::Request { op: op::GET_DATA, path: Some(path), .. }
            if path.ends_with("/locks/plain"))
    };
    for (flag, retries) in [(None, 5), (Some("2"), 2), (Some("0"), 0)] {
        // More cuts than the retries: a retry too many would be cut too,
        // and counted.
        proxy.drop_after(
            Trigger::on(&[op::GET_DATA])
                .path_contains("/locks/plain")
                .again(retries + 2),
        );
        let before = proxy.times_sent(is_read).len();
        let run = Zklock::new(["-o", "json", "stat", "plain"])
            .args(flag.map(|n| ["--retries", n]).into_iter().flatten())
            .hosts(proxy.hosts(&env))
            .run();
        assert_eq!(
            ErrorReport::of(&run, 3).cause,
            "connection_lost",
            "{}",
            run.cmdline
        );
        assert!(run.stdout.is_empty(), "{}", run.stdout);
        let sent = proxy.times_sent(is_read).split_off(before);
        assert_eq!(sent.len(), retries + 1, "{}", run.cmdline);
        for (retry, pair) in (0..).zip(sent.windows(2)) {
            let full = FIRST_BACKOFF * (1 << retry);
            let waited = pair[1] - pair[0];
            // The proxy sees each send a little after it happens: the lower
            // margin. The client reconnects while it waits, so only a slow
            // reconnect adds to the backoff: the upper margin.
            assert!(
                waited >= full / 2 - Duration::from_millis(20)
                    && waited <= full + Duration::from_millis(500),
                "retry {retry} after {waited:?}, with a backoff of {full:?} jittered"
            );
        }
    }
}
