//! Hostile names, data and servers: a tree of names in many scripts (with
//! combining marks, bidi controls, a 255-byte name, digits of other
//! scripts where a sequence would be) and of data no library wrote (invalid
//! UTF-8, data at the server's size limit, forged owner records, malformed
//! protobuf and JSON where each dialect keeps its own), with live
//! contenders of zklock, Curator and kazoo. Every command reads it without
//! a panic, prints no raw control character, and writes JSON that parses;
//! locks of any script exclude each other across the libraries; a server
//! that forges counts, lengths, short or miscounted answers makes zklock
//! fail cleanly, and an oversized reply fails its request alone.

use crate::support;

use std::time::Duration;

use support::json::{ErrorReport, Lock};
use support::peers::{self, Library, acquired, peer, times_out};
use support::proxy::{ClientMessage, FLOOD, FaultProxy, Forgery, Mode, OVERSIZED, op};
use support::{Run, TestEnv, Zk, wait_until};

const WAIT: Duration = Duration::from_secs(30);
const UUID: &str = "2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f";
const HEX: &str = "0123456789abcdef0123456789abcdef";

/// Lock names zklock may create: letters of several scripts, and marks
/// inside a name.
const SCRIPTS: &[&str] = &[
    "déploiement",
    "Größenänderung",
    "развёртывание",
    "配置文件",
    "ロック",
    "e\u{301}te\u{301}",
];

/// Ten digits of scripts other than ASCII, where a sequence would be.
const FOREIGN_DIGITS: &[&str] = &[
    "\u{660}\u{661}\u{662}\u{663}\u{664}\u{665}\u{666}\u{667}\u{668}\u{669}",
    "\u{ff10}\u{ff11}\u{ff12}\u{ff13}\u{ff14}\u{ff15}\u{ff16}\u{ff17}\u{ff18}\u{ff19}",
    "\u{966}\u{967}\u{968}\u{969}\u{96a}\u{96b}\u{96c}\u{96d}\u{96e}\u{96f}",
];

/// Fails on a panic (exit 101) or a death by signal.
fn assert_no_crash(run: &Run) {
    assert!(
        run.code.is_some_and(|code| code != 101),
        "`{}` crashed (code {:?}, signal {:?})\nstderr:\n{}",
        run.cmdline,
        run.code,
        run.signal,
        run.stderr
    );
}

/// True for what drives a terminal or reorders text.
fn is_raw_control(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// Fails when either stream holds a raw control or bidi character.
fn assert_inert(run: &Run) {
    for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        if let Some(c) = text.chars().find(|&c| is_raw_control(c)) {
            panic!(
                "`{}` wrote a raw {c:?} on {stream}:\n{text}",
                run.cmdline.escape_debug()
            );
        }
    }
}

/// Fails unless stdout is JSON (one document, or one a line), ending in a
/// newline.
fn assert_json(run: &Run) {
    assert!(
        run.stdout.ends_with('\n'),
        "`{}`: no final newline",
        run.cmdline.escape_debug()
    );
    let whole = serde_json::from_str::<serde_json::Value>(&run.stdout);
    let lines = run
        .stdout
        .lines()
        .all(|line| serde_json::from_str::<serde_json::Value>(line).is_ok());
    assert!(
        whole.is_ok() || lines,
        "`{}` printed invalid JSON:\n{}",
        run.cmdline.escape_debug(),
        run.stdout
    );
}

/// The hostile tree under `/locks`, with no live contender: returns the
/// paths of the locks in it.
fn plant(zk: &Zk) -> Vec<String> {
    let mut locks = Vec::new();
    let mut contender = |dir: &str, prefix: &str, data: &[u8]| {
        zk.mkdir_p(dir);
        zk.create_ephemeral_sequential(&format!("{dir}/{prefix}"), data);
        locks.push(dir.to_owned());
    };
    let long = format!("{}x", "é".repeat(127));
    assert_eq!(long.len(), 255);
    let bidi = "a\u{202e}b\u{2066}c\u{200f}";
    let forged_owner = br#"{"tool":"zklock","version":"\u001b[31m","host":"evil\n\u202e","pid":4294967295,"user":"\u0000","command":["\u001b]0;x\u0007"],"time":"never","data":null}"#;
    let bad_types = br#"{"tool":"zklock","pid":-1,"host":7}"#;
    contender(&format!("/locks/{long}"), "lock-", b"");
    contender(&format!("/locks/{bidi}"), "lock-", b"\xff\xfe\x1b[2J\xc3");
    contender(
        "/locks/forged",
        &format!("_c_{UUID}-lock-"),
        forged_owner.as_slice(),
    );
    contender("/locks/forged", &format!("_c_{UUID}-lock-"), bad_types);
    contender(
        "/locks/big",
        &format!("{HEX}__lock__"),
        &vec![0x1b; 1_000_000],
    );
    contender("/locks/配置文件", "lock-", "\u{1b}[31m配置\n".as_bytes());
    // HBase's table lock with protobuf that ends inside a field, and a
    // master whose record is not protobuf at all.
    contender(
        "/hbase/table-lock/t",
        "write-",
        b"PBUF\x0a\xff\xff\xff\xff\x0f",
    );
    zk.mkdir_p("/hbase");
    zk.create_ephemeral("/hbase/master", b"\xff\x00\x00\x00\x10PBUF\x0a\x05x");
    // Kafka's and Hadoop's leader nodes with broken records.
    zk.create_ephemeral("/controller", br#"{"brokerid":"#);
    zk.mkdir_p("/hadoop-ha/ns");
    zk.create_ephemeral(
        "/hadoop-ha/ns/ActiveStandbyElectorLock",
        b"\x0a\x80\x80\x80\x80\x80\x80",
    );
    // A kazoo semaphore whose size is not a number.
    zk.mkdir_p("/locks/sem");
    zk.set("/locks/sem", "٣".as_bytes());
    contender("/locks/sem", &format!("{HEX}__lock__"), b"{");
    // Children that are no contenders, in a lock and a semaphore that
    // zklock takes. (Curator counts every child of `leases` against the
    // limit, whatever its name, and so does zklock.)
    zk.mkdir_p("/locks/S/leases");
    zk.create("/locks/S/leases/配置文件", b"");
    for digits in FOREIGN_DIGITS {
        zk.create_ephemeral(&format!("/locks/S/leases/_c_{UUID}-lease-{digits}"), b"");
    }
    zk.mkdir_p("/locks/L");
    zk.create("/locks/L/配置文件", b"");
    for digits in FOREIGN_DIGITS {
        zk.create_ephemeral(&format!("/locks/L/lock-{digits}"), b"");
    }
    locks.sort();
    locks.dedup();
    locks
}

#[test]
fn every_command_reads_a_hostile_tree_without_panic_or_raw_text() {
    let env = TestEnv::new();
    let zk = env.zk();
    let locks = plant(zk);
    // Live contenders: zklock's, Curator's and kazoo's on names of other
    // scripts; zklock's lock on the directory of foreign children.
    let mut own = env.zklock(["lock", "déploiement"]).spawn();
    own.wait_for_stdout(WAIT, "zklock holds déploiement", |out| !out.is_empty());
    let mut curator = peer(&env, Library::Curator, "/locks/ロック", "mutex", &[]);
    acquired(&mut curator, WAIT);
    let mut kazoo = peer(&env, Library::Kazoo, "/locks/развёртывание", "mutex", &[]);
    acquired(&mut kazoo, WAIT);
    env.zklock(["lock", "/locks/L", "--", "true"])
        .run()
        .assert_success();
    env.zklock(["sem", "/locks/S", "--max-leases", "10", "--", "true"])
        .run()
        .assert_success();

    let mut runs = vec![
        env.zklock(["ls"]).run(),
        env.zklock(["ls", "/", "-o", "json"]).run(),
        env.zklock(["dump", "/"]).run(),
        env.zklock(["reap", "/", "--dry-run", "--all"]).run(),
        env.zklock(["reap", "/", "--dry-run", "--all", "-o", "json"])
            .run(),
        env.zklock([
            "watch",
            "/",
            "--count",
            "1",
            "--timeout",
            "2s",
            "-o",
            "json",
        ])
        .run(),
        env.zklock(["watch", "/locks", "--count", "1", "--timeout", "2s"])
            .run(),
    ];
    for lock in &locks {
        runs.push(env.zklock(["stat", lock]).run());
        runs.push(env.zklock(["stat", lock, "-o", "json"]).run());
    }
    let bidi = locks
        .iter()
        .find(|lock| lock.contains('\u{202e}'))
        .expect("the bidi lock");
    runs.push(
        env.zklock(["release", bidi, "--holders", "--if-exists"])
            .run(),
    );
    for run in &runs {
        assert_no_crash(run);
        assert_inert(run);
        if run.cmdline.contains("json") || run.cmdline.contains("dump") {
            assert_json(run);
        }
    }
    // Every planted lock is seen, under its own name.
    let ls: Vec<serde_json::Value> = runs[1].json();
    for lock in locks.iter().filter(|lock| !lock.contains('\u{202e}')) {
        assert!(
            ls.iter().any(|found| found["path"] == lock.as_str()),
            "{lock:?} missing from ls"
        );
    }
    own.signal(libc::SIGTERM);
    own.wait(WAIT);
    peers::release(curator);
    peers::release(kazoo);
}

#[test]
fn a_detached_grant_on_a_bidi_path_is_valid_json() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/a\u{202e}b");
    let run = env
        .zklock([
            "lock",
            "/locks/a\u{202e}b",
            // A bidi control is invisible: zklock creates such a name only
            // when told the lock is meant to be joined.
            "--allow-odd-name",
            "--detach",
            "--lease",
            "30s",
            "-o",
            "json",
        ])
        .run();
    run.assert_success();
    assert_inert(&run);
    assert_json(&run);
    let grant: serde_json::Value = run.json();
    assert_eq!(grant["lock"], "/locks/a\u{202e}b");
    let token = grant["token"].as_str().expect("a token");
    env.zklock(["release", token]).run().assert_success();
}

#[test]
fn locks_named_in_any_script_exclude_each_other_across_libraries() {
    let env = TestEnv::new();
    for name in SCRIPTS {
        let lock = format!("/locks/{name}");
        // zklock takes each library's lock in that library's naming.
        for (library, dialect) in [(Library::Curator, "curator"), (Library::Kazoo, "kazoo")] {
            let mut holder = env.zklock(["lock", &lock, "--dialect", dialect]).spawn();
            holder.wait_for_stdout(WAIT, "zklock holds", |out| !out.is_empty());
            let mut kept_out = peer(&env, library, &lock, "mutex", &["--timeout-ms", "1500"]);
            times_out(&mut kept_out, WAIT);
            holder.signal(libc::SIGTERM);
            holder.wait(WAIT).assert_success();
            // zklock made the directory a container, which the server
            // reaps once empty. kazoo's Lock cannot recover when the
            // directory it found goes before it creates its node (it does
            // not retry "no node"), so the next peer starts once the empty
            // container is gone and makes the directory itself.
            wait_until(WAIT, "the empty lock directory reaped", || {
                env.zk().exists(&lock).is_none()
            });
            let mut other = peer(&env, library, &lock, "mutex", &[]);
            acquired(&mut other, WAIT);
            env.zklock(["lock", &lock, "--no-wait", "--", "true"])
                .run()
                .assert_code(1);
            peers::release(other);
        }
    }
}

#[test]
fn names_outside_the_basic_multilingual_plane_are_a_usage_error() {
    let env = TestEnv::new();
    for args in [
        vec!["lock", "🔒", "--", "true"],
        vec!["sem", "deploy-😀", "--max-leases", "2", "--", "true"],
        vec!["ls", "/locks/\u{10348}"],
        vec!["lock", "𝔡𝔢𝔭𝔩𝔬𝔶", "-o", "json", "--detach"],
    ] {
        let run = env.zklock(args).run();
        run.assert_code(2);
        assert_inert(&run);
    }
    assert!(env.zk().children_if_any("/locks").is_empty());
}

#[test]
fn tls_settings_without_a_tls_host_are_a_usage_error() {
    let env = TestEnv::new();
    let run = env
        .zklock(["ls", "--tls-ca", "/etc/ssl/certs/ca-certificates.crt"])
        .run();
    run.assert_code(2);
    run.assert_stderr_contains("--tls");
    let from_env = env
        .zklock(["ls"])
        .env("ZKLOCK_TLS_NO_VERIFY_HOSTNAME", "true")
        .run();
    from_env.assert_code(2);
}

#[test]
fn out_of_range_durations_are_a_usage_error() {
    let env = TestEnv::new();
    for args in [
        vec!["reap", "--older-than", "300000000y", "--dry-run"],
        vec!["lock", "x", "-w", "1e30s", "--", "true"],
        vec!["lock", "x", "-w", "99999999999999999999", "--", "true"],
        vec!["ls", "--session-timeout", "30d"],
        vec!["ls", "--older-than", "101y"],
    ] {
        env.zklock(args).run().assert_code(2);
    }
    // The same from a profile and from the environment.
    let config = support::secured::scratch_dir().join("hostile-durations.toml");
    std::fs::write(
        &config,
        "[clusters.far]\nconnect-timeout = \"300000000y\"\n",
    )
    .expect("write the configuration file");
    env.zklock(["ls", "-C", "far"])
        .env("ZKLOCK_CONFIG", &config)
        .run()
        .assert_code(2);
    assert!(env.zk().children_if_any("/locks").is_empty());
}

#[test]
fn malformed_host_strings_are_a_usage_error() {
    for hosts in ["tcp:/é", "tcp+tls:/配", "é:２１８１", "[::1"] {
        let run = support::Zklock::new(["ls"]).hosts(hosts).run();
        run.assert_code(2);
        assert_inert(&run);
    }
}

/// Runs `zklock` to its end, watching its peak resident memory (VmHWM);
/// returns the run and that peak, in bytes.
pub fn run_measuring_memory(zklock: &support::Zklock) -> (Run, u64) {
    let mut running = zklock.spawn();
    let status = format!("/proc/{}/status", running.pid());
    let mut peak = 0;
    let run = support::wait_for(WAIT, "zklock to finish", || {
        let kib = std::fs::read_to_string(&status).ok().and_then(|text| {
            let line = text.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
            line.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        });
        peak = peak.max(kib.unwrap_or(0) * 1024);
        running.try_wait()
    });
    (run, peak)
}

#[test]
fn a_server_that_forges_counts_or_short_answers_fails_zklock_cleanly() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/a/b");
    let proxy = FaultProxy::start(env.servers());
    let forgeries = [
        (
            vec![op::MULTI_READ, op::GET_CHILDREN, op::GET_CHILDREN2],
            Forgery::HugeCount,
        ),
        (vec![op::MULTI_READ], Forgery::EmptyMulti),
        (
            vec![op::MULTI_READ, op::GET_CHILDREN, op::GET_CHILDREN2],
            Forgery::HugeFrame,
        ),
    ];
    for (ops, forgery) in forgeries {
        proxy.set_mode(Mode::Forge(ops, forgery));
        for args in [vec!["ls", "-o", "json"], vec!["stat", "a"]] {
            let zklock = support::Zklock::new(args)
                .hosts(proxy.hosts(&env))
                .args(["--connect-timeout", "3s"]);
            let (run, peak) = run_measuring_memory(&zklock);
            assert_no_crash(&run);
            assert!(
                run.code != Some(0),
                "{forgery:?}: `{}` succeeded",
                run.cmdline
            );
            assert_inert(&run);
            // The flood is 128 MiB: a client that kept it would show.
            assert!(
                peak < FLOOD / 2,
                "{forgery:?}: `{}` grew to {peak} bytes",
                run.cmdline
            );
        }
    }
    proxy.pass();
    wait_until(WAIT, "zklock reads through the healed proxy", || {
        support::Zklock::new(["ls"])
            .hosts(proxy.hosts(&env))
            .run()
            .code
            == Some(0)
    });
}

/// The requests that list a directory, alone or in a batch.
const LISTINGS: [i32; 3] = [op::MULTI_READ, op::GET_CHILDREN, op::GET_CHILDREN2];

/// How many connections through `proxy` began a ZooKeeper session (the
/// others, if any, asked a four-letter word).
fn session_connections(proxy: &FaultProxy) -> usize {
    proxy
        .client_messages()
        .iter()
        .filter(|m| matches!(m, ClientMessage::Connect { .. }))
        .count()
}

/// `lock a -- true` through a proxy that answers every listing of the
/// lock's directory with `forgery`: the create goes through, the listings
/// fail, and zklock gives up. Checks that it exits 10, leaves no node and
/// never held more than half of an oversized reply; returns the proxy, to
/// be asked what went through it.
fn give_up_on_forged_listings(forgery: Forgery) -> FaultProxy {
    let env = TestEnv::new();
    let proxy = FaultProxy::start(env.servers());
    proxy.set_mode(Mode::Forge(LISTINGS.to_vec(), forgery));
    // Not --detach: the process measured must be the one that reads.
    let zklock = support::Zklock::new(["lock", "a", "--", "true"]).hosts(proxy.hosts(&env));
    let (run, peak) = run_measuring_memory(&zklock);
    assert_no_crash(&run);
    run.assert_code(10);
    // A client that kept the reply would be past 64 MiB.
    let limit = u64::try_from(OVERSIZED).expect("a size") / 2;
    assert!(peak < limit, "{forgery:?}: zklock grew to {peak} bytes");
    assert_eq!(env.zk().children_if_any("/locks/a"), Vec::<String>::new());
    proxy
}

#[test]
fn a_reply_over_64_mib_fails_its_own_request_and_the_connection_goes_on() {
    let proxy = give_up_on_forged_listings(Forgery::Oversized);
    // The give-up deleted our node through the connection the oversized
    // replies came on.
    assert_eq!(session_connections(&proxy), 1, "the connection ended");
    // The delete goes in one multi with the end record.
    assert_eq!(
        proxy.requests_of(&[op::DELETE, op::MULTI]),
        1,
        "the give-up's delete"
    );
}

/// `/locks/a` and `/locks/b`, each held by a node of the test's session
/// with `data`.
fn two_held_locks(env: &TestEnv, data: &[u8]) {
    for lock in ["/locks/a", "/locks/b"] {
        env.zk().mkdir_p(lock);
        env.zk()
            .create_ephemeral_sequential(&format!("{lock}/lock-"), data);
    }
}

#[test]
fn a_batch_whose_answer_is_too_large_is_read_again_node_by_node() {
    let env = TestEnv::new();
    // Each holder with data: listing the locks and reading their holders
    // are batches of two reads.
    two_held_locks(&env, b"owner");
    let holders = |run: &Run| -> Vec<(String, Vec<String>)> {
        let locks: Vec<Lock> = run.json();
        locks
            .into_iter()
            .map(|lock| {
                (
                    lock.path,
                    lock.holders.into_iter().map(|h| h.path).collect(),
                )
            })
            .collect()
    };
    let direct = env.zklock(["ls", "-o", "json"]).run();
    direct.assert_success();
    let proxy = FaultProxy::start(env.servers());
    proxy.set_mode(Mode::Forge(vec![op::MULTI_READ], Forgery::OversizedBatch));
    let zklock = support::Zklock::new(["ls", "-o", "json"]).hosts(proxy.hosts(&env));
    let (run, peak) = run_measuring_memory(&zklock);
    run.assert_success();
    assert_eq!(holders(&run), holders(&direct));
    assert_eq!(holders(&run).len(), 2, "{}", run.stdout);
    let limit = u64::try_from(OVERSIZED).expect("a size") / 2;
    assert!(peak < limit, "zklock grew to {peak} bytes");
    assert_eq!(session_connections(&proxy), 1, "the connection ended");
    let single_reads = proxy.requests_of(&[op::GET_CHILDREN, op::GET_CHILDREN2, op::GET_DATA]);
    assert!(single_reads >= 4, "{single_reads} reads node by node");
}

#[test]
fn a_listing_over_64_mib_is_an_error_and_is_not_asked_again() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/a");
    env.zk().create_ephemeral_sequential("/locks/a/lock-", b"");
    let proxy = FaultProxy::start(env.servers());
    proxy.set_mode(Mode::Forge(LISTINGS.to_vec(), Forgery::Oversized));
    let run = support::Zklock::new(["ls", "a", "-o", "json"])
        .hosts(proxy.hosts(&env))
        .run();
    assert_no_crash(&run);
    assert_eq!(ErrorReport::of(&run, 10).cause, "other");
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    // The same listing would come back: asking again would only cost the
    // server and the network another 64 MiB each time. The batch (the
    // lock's directory and where a kazoo semaphore's acquirers would be)
    // goes once, and then each of its reads alone, once.
    assert_eq!(proxy.requests_of(&[op::MULTI_READ]), 1, "batches");
    let alone = proxy
        .client_messages()
        .into_iter()
        .filter(|m| {
            matches!(m, ClientMessage::Request { op, path: Some(path), .. }
                if LISTINGS.contains(op) && path.ends_with("/locks/a"))
        })
        .count();
    assert_eq!(alone, 1, "listings of /locks/a alone");
}

#[test]
fn a_negative_reply_length_ends_the_connection() {
    let proxy = give_up_on_forged_listings(Forgery::NegativeLength);
    assert!(session_connections(&proxy) > 1, "the connection went on");
}

#[test]
fn a_multi_read_answer_of_the_wrong_length_is_an_error_not_a_wrong_result() {
    let env = TestEnv::new();
    two_held_locks(&env, b"");
    let proxy = FaultProxy::start(env.servers());
    for forgery in [Forgery::MultiShort, Forgery::MultiLong] {
        proxy.set_mode(Mode::Forge(vec![op::MULTI_READ], forgery));
        for args in [vec!["ls", "-o", "json"], vec!["stat", "a", "-o", "json"]] {
            let run = support::Zklock::new(args).hosts(proxy.hosts(&env)).run();
            assert_no_crash(&run);
            assert_eq!(ErrorReport::of(&run, 10).cause, "other", "{forgery:?}");
            assert!(
                run.stdout.is_empty(),
                "{forgery:?}: `{}` answered {}",
                run.cmdline,
                run.stdout
            );
        }
    }
}

#[test]
fn a_walk_stops_with_an_error_a_thousand_levels_down() {
    let env = TestEnv::new();
    let zk = env.zk();
    let mut path = String::from("/locks");
    zk.mkdir_p(&path);
    for _ in 0..1001 {
        path.push_str("/d");
        zk.create(&path, b"");
    }
    let too_deep = env.zklock(["ls", "/locks", "-o", "json"]).run();
    assert_no_crash(&too_deep);
    assert!(too_deep.code != Some(0), "a 1001-level walk succeeded");
    assert_inert(&too_deep);
    // A thousand levels below the start are walked.
    let deep = env.zklock(["ls", "/locks/d", "-o", "json"]).run();
    deep.assert_success();
    assert_json(&deep);
}
