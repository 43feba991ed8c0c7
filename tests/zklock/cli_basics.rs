//! Connection, paths, errors and `stat` against a real ZooKeeper: the exit
//! codes, the connect-string and environment rules, the zkCli stat fields and
//! their JSON. Also proves the harness itself:
//! dedicated servers restart, ensembles survive losing their leader.

use crate::support;

use std::time::Duration;

use support::{
    Blackhole, NodeReport, TestEnv, ZkEnsemble, ZkServer, dead_port, digest_acl, digest_id,
    shared_server, wait_until,
};
use zookeeper_client as zkc;

/// The zkCli `stat` field names, in zkCli's order.
const ZKCLI_FIELDS: [&str; 11] = [
    "cZxid",
    "ctime",
    "mZxid",
    "mtime",
    "pZxid",
    "cversion",
    "dataVersion",
    "aclVersion",
    "ephemeralOwner",
    "dataLength",
    "numChildren",
];

/// Bound for a command that must not wait for any server: a third of the
/// 30 s its connect would wait, room enough for a loaded machine.
const QUICK: Duration = Duration::from_secs(10);

/// How long nodes and processes get to come and go.
const WAIT: Duration = Duration::from_secs(30);

#[test]
fn stat_of_zookeeper_node_shows_zkcli_fields() {
    let env = TestEnv::new();
    // The chroot hides /zookeeper: ask the server without one.
    let run = env
        .zklock(["stat", "/zookeeper"])
        .hosts(env.servers())
        .run();
    run.assert_success();
    let mut last = 0;
    for field in ZKCLI_FIELDS {
        let at = run
            .stdout
            .find(field)
            .unwrap_or_else(|| panic!("no {field} in {run:?}"));
        assert!(at >= last, "{field} out of zkCli's order in {run:?}");
        last = at;
    }

    let run = env
        .zklock(["stat", "/zookeeper", "-o", "json"])
        .hosts(env.servers())
        .run();
    let report: NodeReport = run.assert_success().json();
    assert_eq!(report.path, "/zookeeper");
    assert!(report.stat.num_children >= 1, "{run:?}");
    assert_eq!(report.stat.ephemeral_owner, "0x0");
}

#[test]
fn stat_of_a_node_matches_the_server() {
    let env = TestEnv::new();
    let stat = env.zk().create("/node", b"hello world");
    let updated = env.zk().set("/node", b"hello, world");
    env.zk().create("/node/child", b"");

    let run = env.zklock(["stat", "/node", "-o", "json"]).run();
    let report: NodeReport = run.assert_success().json();
    assert_eq!(report.path, "/node");
    assert_eq!(report.data.as_deref(), Some("hello, world"));
    let s = &report.stat;
    assert_eq!(s.data_length, 12);
    assert_eq!(s.ephemeral_owner, "0x0");
    assert_eq!(s.czxid, stat.czxid);
    assert_eq!(s.ctime_ms, stat.ctime);
    assert_eq!(s.mzxid, updated.mzxid);
    assert_eq!(s.mtime_ms, updated.mtime);
    assert_eq!(s.data_version, 1);
    assert_eq!(s.acl_version, 0);
    assert_eq!(s.num_children, 1);
    assert_eq!(s.cversion, 1);
    assert!(s.pzxid > s.mzxid, "{run:?}");

    // The table shows the data and the zxids in zkCli's hex, and the
    // times in the local zone with its offset (here a zone of the
    // TZ variable's own, 5 h 30 min east).
    env.zklock(["stat", "/node"])
        .env("TZ", "ZKT-5:30")
        .run()
        .assert_success()
        .assert_stdout_contains("hello, world")
        .assert_stdout_contains(&format!("0x{:x}", stat.czxid))
        .assert_stdout_contains(&support::local_time(stat.ctime, 19_800))
        .assert_stdout_contains(&support::local_time(updated.mtime, 19_800));

    // An empty node has null data.
    let report: NodeReport = env
        .zklock(["stat", "/node/child", "-o", "json"])
        .run()
        .assert_success()
        .json();
    assert_eq!(report.data, None);
    assert_eq!(report.stat.data_length, 0);
}

#[test]
fn stat_of_an_ephemeral_node_names_its_session() {
    let env = TestEnv::new();
    let owner = env.connect();
    owner.create_ephemeral("/eph", b"mine");
    let report: NodeReport = env
        .zklock(["stat", "/eph", "-o", "json"])
        .run()
        .assert_success()
        .json();
    assert_eq!(report.stat.ephemeral_owner, owner.session_hex());
}

#[test]
fn lock_names_resolve_under_the_root() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/deploy");
    env.zk().mkdir_p("/other/x");
    let report: NodeReport = env
        .zklock(["stat", "deploy", "-o", "json"])
        .run()
        .assert_success()
        .json();
    assert_eq!(report.path, "/locks/deploy");

    let report: NodeReport = env
        .zklock(["stat", "x", "--root", "/other", "-o", "json"])
        .run()
        .assert_success()
        .json();
    assert_eq!(report.path, "/other/x");

    let report: NodeReport = env
        .zklock(["stat", "x", "-o", "json"])
        .env("ZKLOCK_ROOT", "/other")
        .run()
        .assert_success()
        .json();
    assert_eq!(report.path, "/other/x");

    // A name that starts with `/` is a path, whatever the root.
    let report: NodeReport = env
        .zklock(["stat", "/other/x", "-o", "json"])
        .env("ZKLOCK_ROOT", "/locks")
        .run()
        .assert_success()
        .json();
    assert_eq!(report.path, "/other/x");
}

#[test]
fn missing_node_exits_6_naming_the_path() {
    let env = TestEnv::new();
    env.zklock(["stat", "/no/such/node"])
        .run()
        .assert_code(6)
        .assert_stderr_contains("/no/such/node");
    env.zklock(["stat", "nosuchlock"])
        .run()
        .assert_code(6)
        .assert_stderr_contains("/locks/nosuchlock");
}

#[test]
fn unreachable_server_exits_3_within_the_connect_timeout() {
    // A port that refuses connections, and one that accepts them but never
    // answers (a hung server).
    let hole = Blackhole::new();
    let refused = format!("127.0.0.1:{}", dead_port());
    for address in [refused, hole.address()] {
        let run = support::Zklock::new(["stat", "/", "--connect-timeout", "1s"])
            .hosts(&address)
            .run();
        run.assert_code(3)
            .assert_stderr_contains(&address)
            .assert_faster_than(Duration::from_secs(4));
    }
}

#[test]
fn unless_given_the_session_timeout_is_10s_and_the_connect_timeout_5s() {
    // A server that never answers keeps zklock for the connect timeout,
    // then for the whole of the 2 s in which each host is tried once more
    // to find out why.
    let hole = Blackhole::new();
    let mut unanswered = support::Zklock::new(["stat", "/"])
        .hosts(hole.address())
        .spawn();
    let env = TestEnv::new();
    let mut holder = env.zklock(["lock", "timeouts"]).spawn();
    let token = holder.next_line(Duration::from_secs(20));
    let session = env.zk().get(&token).1.ephemeral_owner;
    // The server's own view of the session: the timeout it was asked for
    // (it grants anything from 400 ms to 60 s).
    let cons = shared_server().four_letter("cons");
    let connection = cons
        .lines()
        .find(|line| line.contains(&format!("sid=0x{session:x},")))
        .unwrap_or_else(|| panic!("no connection of 0x{session:x}: {cons}"));
    assert!(connection.contains(",to=10000,"), "{connection}");
    holder.signal(libc::SIGTERM);
    holder.wait(Duration::from_secs(20)).assert_success();
    let run = unanswered.wait(Duration::from_secs(20));
    run.assert_code(3);
    run.assert_took(Duration::from_millis(6_900)..Duration::from_millis(8_500));
}

#[test]
fn malformed_input_exits_2_before_connecting() {
    // A server that would hang any connection for 30 s: a quick exit 2 proves
    // the input was refused before a connection was tried.
    let hole = Blackhole::new();
    let slow = hole.address();
    let cases: [(&[&str], &str, &str); 13] = [
        (&["stat", "a//b"], "a//b", "path"),
        (&["stat", "a/"], "a/", "path"),
        (&["stat", "/a/../b"], "/a/../b", "path"),
        (&["stat", "/x/"], "/x/", "path"),
        (&["stat", ".."], "..", "path"),
        // Characters the server refuses in names, found before connecting.
        (&["lock", "dep\nloy", "--", "true"], "U+000A", "path"),
        (
            &["lock", "deploy\u{1F512}", "--", "true"],
            "U+1F512",
            "path",
        ),
        // `-- "$@"` with nothing in "$@": a command was meant to come.
        (&["lock", "cf", "--"], "--", "command"),
        // A command without `--` before it.
        (&["lock", "cf", "true"], "true", "--"),
        (&["-H", "zk:notaport", "stat", "/"], "notaport", "host"),
        (&["-H", ",,", "stat", "/"], ",,", "host"),
        (
            &["--connect-timeout", "5 fortnights", "stat", "/"],
            "--connect-timeout",
            "duration",
        ),
        (
            &["--session-timeout", "soon", "stat", "/"],
            "soon",
            "duration",
        ),
    ];
    for (args, names, says) in cases {
        // Global options first: what follows `--` belongs to the command.
        let mut cmd = if args.contains(&"--connect-timeout") {
            support::Zklock::new(args)
        } else {
            support::Zklock::new(["--connect-timeout", "30s"]).args(args)
        };
        if !args.contains(&"-H") {
            cmd = cmd.hosts(&slow);
        }
        let run = cmd.run();
        run.assert_code(2)
            .assert_stderr_contains(names)
            .assert_faster_than(QUICK);
        assert!(
            run.stderr.to_lowercase().contains(says),
            "expected the message to say what is wrong ({says}): {run:?}"
        );
    }
}

#[test]
fn acl_refusal_exits_5_and_auth_opens_it() {
    let env = TestEnv::new();
    let acl = [digest_acl("alice", "secret", zkc::Permission::ALL)];
    env.zk().create_with(
        "/secret",
        b"for alice",
        &zkc::CreateMode::Persistent.with_acls(zkc::Acls::new(&acl)),
    );

    let run = env.zklock(["stat", "/secret"]).run();
    run.assert_code(5).assert_stderr_contains("/secret");
    assert!(
        run.stderr.to_lowercase().contains("permission denied"),
        "{run:?}"
    );
    env.zklock(["stat", "/secret", "--auth", "digest:alice:wrong"])
        .run()
        .assert_code(5);

    let report: NodeReport = env
        .zklock([
            "stat",
            "/secret",
            "--auth",
            "digest:alice:secret",
            "-o",
            "json",
        ])
        .run()
        .assert_success()
        .json();
    assert_eq!(report.data.as_deref(), Some("for alice"));

    // From the environment, so the password is not in the process list.
    env.zklock(["stat", "/secret"])
        .env("ZKLOCK_AUTH", "digest:alice:secret")
        .run()
        .assert_success()
        .assert_stdout_contains("for alice");
}

#[test]
fn digest_ids_match_zookeeper() {
    // As printed by
    // java -cp zookeeper.jar org.apache.zookeeper.server.auth.DigestAuthenticationProvider alice:secret
    assert_eq!(
        digest_id("alice", "secret"),
        "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E="
    );
}

#[test]
fn hosts_come_from_flag_then_zklock_hosts_then_zk_hosts() {
    let env = TestEnv::new();
    env.zk().create("/here", b"found");
    let dead = format!("127.0.0.1:{}", dead_port());
    let stat = || {
        env.zklock(["stat", "/here", "--connect-timeout", "1s"])
            .no_hosts()
    };

    // ZKLOCK_HOSTS when -H is absent, before ZK_HOSTS.
    stat()
        .env("ZKLOCK_HOSTS", env.hosts())
        .env("ZK_HOSTS", &dead)
        .run()
        .assert_success()
        .assert_stdout_contains("found");
    // ZK_HOSTS when neither -H nor ZKLOCK_HOSTS.
    stat()
        .env("ZK_HOSTS", env.hosts())
        .run()
        .assert_success()
        .assert_stdout_contains("found");
    // -H wins over both.
    stat()
        .hosts(env.hosts())
        .env("ZKLOCK_HOSTS", &dead)
        .env("ZK_HOSTS", &dead)
        .run()
        .assert_success()
        .assert_stdout_contains("found");
    stat()
        .hosts(&dead)
        .env("ZKLOCK_HOSTS", env.hosts())
        .env("ZK_HOSTS", env.hosts())
        .run()
        .assert_code(3)
        .assert_stderr_contains(&dead);
    // A second -H overrides the first, as an alias's is overridden where
    // it is used; and the other way round; before the subcommand or after.
    for (first, last, code) in [(&dead, &env.hosts(), 0), (&env.hosts(), &dead, 3)] {
        let args = ["-H", last, "stat", "/here", "--connect-timeout", "1s"];
        support::Zklock::new(args)
            .hosts(first)
            .run()
            .assert_code(code);
        stat()
            .hosts(first)
            .args(["-H", last])
            .run()
            .assert_code(code);
    }
}

#[test]
fn ensemble_serves_through_the_loss_of_its_leader() {
    let ensemble = ZkEnsemble::start(3);
    let env = TestEnv::with_ensemble(&ensemble);
    env.zk().create("/kept", b"by the quorum");
    let stat_zookeeper = || {
        env.zklock(["stat", "/zookeeper", "-o", "json"])
            .hosts(ensemble.connect_string())
            .run()
    };
    let report: NodeReport = stat_zookeeper().assert_success().json();
    assert_eq!(report.path, "/zookeeper");

    let leader = ensemble.leader();
    ensemble.server(leader).kill();
    let new_leader = ensemble.leader();
    assert_ne!(new_leader, leader);
    stat_zookeeper().assert_success();
    env.zklock(["stat", "/kept"])
        .run()
        .assert_success()
        .assert_stdout_contains("by the quorum");

    // The old leader rejoins as a follower.
    ensemble.server(leader).start();
    assert_eq!(ensemble.server(leader).mode().as_deref(), Some("follower"));
}

#[test]
fn dedicated_server_restarts_on_the_same_port_with_its_data() {
    let server = ZkServer::new();
    let port = server.port();
    let env = TestEnv::with_server(&server);
    env.zk().create("/keep", b"v1");
    let stat = || {
        env.zklock(["stat", "/keep", "--connect-timeout", "1s"])
            .run()
    };
    stat().assert_success().assert_stdout_contains("v1");

    server.stop();
    assert!(!server.is_running());
    stat()
        .assert_code(3)
        .assert_stderr_contains(&server.address());
    server.start();
    assert_eq!(server.port(), port);
    stat().assert_success().assert_stdout_contains("v1");

    server.restart();
    assert_eq!(server.port(), port);
    // The helper's session survives the restart: it reconnects on its own.
    wait_until(
        Duration::from_secs(10),
        "the test client reconnects",
        || env.zk().try_get("/keep").is_ok(),
    );
    env.zk().set("/keep", b"v2");
    stat().assert_success().assert_stdout_contains("v2");

    // A frozen server holds connections but answers nothing.
    server.freeze();
    stat().assert_code(3);
    server.thaw();
    stat().assert_success().assert_stdout_contains("v2");
}

#[test]
fn test_client_sessions_close_or_are_abandoned() {
    let env = TestEnv::new();
    let closing = env.connect();
    closing.create_ephemeral("/closed", b"");
    closing.close();
    assert!(
        env.zk().exists("/closed").is_none(),
        "closing a session drops its nodes at once"
    );

    let crashing = support::Zk::connect_with(&env.hosts(), |c| {
        c.with_session_timeout(Duration::from_millis(800))
    });
    crashing.create_ephemeral("/crashed", b"");
    crashing.abandon();
    assert!(
        env.zk().exists("/crashed").is_some(),
        "an abandoned session lingers"
    );
    wait_until(
        Duration::from_secs(10),
        "the abandoned session expires",
        || env.zk().exists("/crashed").is_none(),
    );
}

#[test]
fn shared_server_answers_four_letter_words() {
    let server = shared_server();
    assert_eq!(server.four_letter("ruok"), "imok");
    assert_eq!(server.mode().as_deref(), Some("standalone"));
    let mntr = server.mntr();
    assert!(mntr.contains_key("zk_znode_count"), "{mntr:?}");
}

#[test]
fn durations_without_a_unit_are_seconds_as_for_flock() {
    let env = TestEnv::new();
    let mut holder = env.zklock(["lock", "busy", "--", "sleep", "60"]).spawn();
    wait_until(WAIT, "the holder's node", || {
        !env.zk().children_if_any("/locks/busy").is_empty()
    });
    // 1.5 seconds, not milliseconds (a lower bound no load can break)
    // nor two minutes.
    let run = env
        .zklock(["lock", "-w", "1.5", "busy", "--", "true"])
        .run();
    run.assert_code(1);
    assert!(
        run.elapsed >= Duration::from_millis(1500) && run.elapsed < Duration::from_secs(60),
        "-w 1.5 gave up after {:?}",
        run.elapsed
    );
    env.zklock(["lock", "-w", "1", "-E", "75", "busy", "--", "true"])
        .run()
        .assert_code(75);
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT);
    wait_until(WAIT, "no node left", || {
        env.zk().children_if_any("/locks/busy").is_empty()
    });
}

#[test]
fn offline_commands_read_no_connection_settings() {
    for args in [&["completions", "bash"][..], &["man"], &["man", "lock"]] {
        support::Zklock::new(args)
            .no_hosts()
            .env("ZKLOCK_HOSTS", "not a host:string")
            .env("ZKLOCK_ROOT", "relative/root")
            .env("ZKLOCK_AUTH", "no-colon")
            .run()
            .assert_success();
    }
}

#[test]
fn a_closed_stdout_ends_every_command_quietly_with_exit_0() {
    let env = TestEnv::new();
    for n in 0..3 {
        env.zk().mkdir_p(&format!("/locks/l{n}"));
        env.zk()
            .create_ephemeral_sequential(&format!("/locks/l{n}/lock-"), b"");
    }
    let commands: [&[&str]; 7] = [
        &["ls"],
        &["ls", "-o", "json"],
        &["stat", "l0"],
        &["stat", "l0", "-o", "json"],
        &["dump"],
        &["man", "ls"],
        &["completions", "zsh"],
    ];
    for args in commands {
        let mut command = env.zklock(args).command();
        command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = command.spawn().expect("start zklock");
        // The reader is gone before zklock writes a byte.
        drop(child.stdout.take());
        let output = child.wait_with_output().expect("wait for zklock");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?} printed: {stderr}");
    }
}

#[test]
fn the_version_is_the_same_with_or_without_other_arguments() {
    let expected = format!("zklock {}\n", env!("CARGO_PKG_VERSION"));
    for flag in ["--version", "-V"] {
        let alone = support::Zklock::new([flag]).no_hosts().run();
        alone.assert_success();
        assert_eq!(alone.stdout, expected, "{flag}");
        // With another option, clap answers: the same words.
        let parsed = support::Zklock::new(["-q", flag]).no_hosts().run();
        parsed.assert_success();
        assert_eq!(parsed.stdout, alone.stdout, "{flag} after another option");
    }
}
