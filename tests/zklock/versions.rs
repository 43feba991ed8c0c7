//! The interoperability subset against every ZooKeeper server line that
//! scripts/versions fetches (3.4 to 3.9, the newest release of each), each
//! with the peers its users run, and ensembles that mix two lines: one as a
//! rolling upgrade does, one of a member that lacks multi-read and
//! persistent watches beside one that has them. Debian's 3.8.0 runs the
//! rest of the suite.
//!
//! One server per line, started on first use and shared by that line's
//! tests ([`release_server`]); every test runs in a chroot of its own.
//! Each line is a module of its own, so one line runs alone with
//! `cargo test --test zklock versions::v3_5::`, and every failure names the
//! release it ran against.
//!
//! Peers are paired with servers, not crossed: every library meets the
//! oldest and the newest line on which zklock can lock (3.5 and 3.9). 3.4
//! closes the session after the requests zklock needs, which one test shows.

use crate::support;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use support::json::WatchEvent;
use support::peers::{self, Library, acquired, peer, times_out};
use support::proxy::{self, FaultProxy, op};
use support::secured;
use support::{Lock, Release, Running, TestEnv, ZkEnsemble, ZkOptions, release_server};

const WAIT: Duration = Duration::from_secs(30);
/// How long a peer tries before it reports TIMEOUT.
const KEPT_OUT: &str = "800";

/// Runs `test` in a fresh chroot on `line`'s shared server; a failure
/// names the release.
fn against(line: &'static str, test: impl FnOnce(&TestEnv)) {
    let release = Release::of(line);
    let env = TestEnv::with_server(release_server(&release));
    named(&release.to_string(), || test(&env));
}

/// Runs `test`; if it panics, panics again with `what` in front.
fn named(what: &str, test: impl FnOnce()) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(test)) {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default();
        panic!("against {what}: {message}");
    }
}

/// `zklock VERB -n LOCK -- true`: 0 when it got the lock, 1 when taken.
fn tries(env: &TestEnv, verb: &str, lock: &str, extra: &[&str]) -> i32 {
    let run = env
        .zklock([verb, "-n"])
        .args(extra)
        .args([lock, "--", "true"])
        .run();
    run.code
        .unwrap_or_else(|| panic!("zklock was killed: {}", run.stderr))
}

/// `zklock VERB LOCK` held in the background until released; returns once
/// it holds.
fn holds(env: &TestEnv, verb: &str, lock: &str, extra: &[&str]) -> Running {
    let mut holder = env.zklock([verb]).args(extra).arg(lock).spawn();
    holder.next_line(WAIT);
    holder
}

fn lets_go(mut holder: Running) {
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
}

fn stat(env: &TestEnv, lock: &str) -> Lock {
    env.zklock(["-o", "json", "stat", lock])
        .run()
        .assert_success()
        .json()
}

/// zklock's own locks: a mutex, readers beside readers and not beside a
/// writer, and a semaphore's leases.
fn locks(env: &TestEnv) {
    let holder = holds(env, "lock", "m", &[]);
    assert_eq!(tries(env, "lock", "m", &[]), 1, "a held mutex was taken");
    lets_go(holder);
    assert_eq!(tries(env, "lock", "m", &[]), 0, "a free mutex was refused");

    let reader = holds(env, "rlock", "rw", &[]);
    assert_eq!(tries(env, "rlock", "rw", &[]), 0, "readers must share");
    assert_eq!(
        tries(env, "wlock", "rw", &[]),
        1,
        "a writer got in beside a reader"
    );
    lets_go(reader);
    let writer = holds(env, "wlock", "rw", &[]);
    assert_eq!(
        tries(env, "rlock", "rw", &[]),
        1,
        "a reader got in beside a writer"
    );
    lets_go(writer);

    let leases = ["--max-leases", "2"];
    let first = holds(env, "sem", "s", &leases);
    let second = holds(env, "sem", "s", &leases);
    assert_eq!(
        tries(env, "sem", "s", &leases),
        1,
        "a third lease of two was granted"
    );
    lets_go(first);
    assert_eq!(
        tries(env, "sem", "s", &leases),
        0,
        "a freed lease was refused"
    );
    lets_go(second);
}

/// ls, stat, dump, deadlocks, watch, release and reap over a lock with a
/// holder and a waiter.
fn inspection(env: &TestEnv) {
    let holder = holds(env, "lock", "i", &[]);
    let waiter = env.zklock(["lock", "i"]).spawn();
    support::wait_until(WAIT, "the waiter queued", || {
        env.zk().children_if_any("/locks/i").len() == 2
    });
    let lock = stat(env, "i");
    assert_eq!(
        (lock.holders.len(), lock.waiters.len()),
        (1, 1),
        "{lock:#?}"
    );
    let listed: Vec<Lock> = env
        .zklock(["-o", "json", "ls"])
        .run()
        .assert_success()
        .json();
    assert_eq!(listed.len(), 1, "{listed:#?}");
    assert_eq!(listed[0].holders[0].path, lock.holders[0].path);
    let dump = env.zklock(["dump", "--sessions"]).run();
    dump.assert_success()
        .assert_stdout_contains(&lock.holders[0].path);
    // deadlocks finds a cycle and confirms it after a sync, with the reads
    // this line offers.
    let (_one, _two, _) = crate::deadlocks::crossed_zklocks(env, false);
    let found = env.zklock(["-o", "json", "deadlocks", "/x"]).run();
    found.assert_code(1);
    let cycles: Vec<serde_json::Value> = found.json();
    assert_eq!(
        cycles
            .iter()
            .map(|c| c["certain"].clone())
            .collect::<Vec<_>>(),
        [serde_json::Value::Bool(true)],
        "{cycles:#?}"
    );

    // watch sees the holder go and the waiter take over.
    let mut watching = env
        .zklock(["watch", "--until", "free", "--timeout", "30s", "i"])
        .spawn();
    lets_go(holder);
    let mut waiter = waiter;
    support::wait_until(WAIT, "the waiter holds", || {
        stat(env, "i").waiters.is_empty()
    });
    env.zklock(["release", "--holders", "--yes", "i"])
        .run()
        .assert_success();
    watching.wait(WAIT).assert_success();
    waiter.wait(WAIT);

    // reap takes the nodes of the session it is told and nothing else.
    let other = env.connect();
    other.mkdir_p("/locks/r");
    let stale = other.create_ephemeral_sequential(
        "/locks/r/_c_00000000-0000-0000-0000-000000000000-lock-",
        b"",
    );
    env.zk().mkdir_p("/app/config");
    env.zklock([
        "reap",
        "--session",
        &other.session_hex(),
        "--yes",
        "/locks/r",
    ])
    .run()
    .assert_success();
    assert!(env.zk().exists(&stale).is_none(), "reap left {stale}");
    assert!(
        env.zk().exists("/app/config").is_some(),
        "reap touched another tenant's node"
    );
}

/// The dialect `stat` names for `library`'s nodes. go-zookeeper's are told
/// apart from Curator's, whose layout zklock queues under beside them.
fn shown_as(library: Library) -> &'static str {
    match library {
        Library::GoZookeeper => "go-zookeeper",
        _ => library.dialect(),
    }
}

/// A library's holder keeps zklock out, and zklock's holder keeps the
/// library's contender out until it lets go.
fn excludes(env: &TestEnv, library: Library, mode: &str, verb: &str, dialect: &str) {
    named(&library.describe(), || {
        let lock = format!("{verb}-{library:?}");
        let path = format!("/locks/{lock}");
        let mut theirs = peer(env, library, &path, mode, &[]);
        let node = acquired(&mut theirs, WAIT);
        assert_eq!(
            tries(env, verb, &lock, &[]),
            1,
            "zklock got in beside the library"
        );
        let seen = stat(env, &lock);
        assert_eq!(
            seen.holders
                .iter()
                .map(|h| h.path.as_str())
                .collect::<Vec<_>>(),
            [node.as_str()],
            "stat does not show the library's holder: {seen:#?}"
        );
        assert_eq!(
            seen.dialect,
            shown_as(library),
            "stat names the wrong library: {seen:#?}"
        );
        peers::release(theirs);

        let ours = holds(env, verb, &lock, &["--dialect", dialect]);
        let mut kept_out = peer(env, library, &path, mode, &["--timeout-ms", KEPT_OUT]);
        times_out(&mut kept_out, WAIT);
        let mut waiter = peer(env, library, &path, mode, &[]);
        lets_go(ours);
        acquired(&mut waiter, WAIT);
        peers::release(waiter);
    });
}

/// The peers each line's users run: every library on the oldest and the
/// newest line, the newest Curator and kazoo on every line.
fn peers_of(line: &str) -> Vec<Library> {
    match line {
        "3.5" | "3.9" => vec![
            Library::Curator,
            Library::NewestCurator,
            Library::Kazoo,
            Library::NewestKazoo,
            Library::GoZookeeper,
        ],
        _ => vec![Library::NewestCurator, Library::NewestKazoo],
    }
}

fn with_peers(env: &TestEnv, line: &str) {
    for library in peers_of(line) {
        excludes(env, library, "mutex", "lock", library.dialect());
        if library != Library::GoZookeeper {
            excludes(env, library, "write", "rlock", library.dialect());
        }
    }
}

/// What end records count, each line's `cversion` counting every create
/// and delete of a child (a client's, a closed session's): the first
/// arrival at a new lock is owed the delay (what ended before is unknown),
/// clean ends after it none, alone or shared, and a delete no record tells
/// of the whole delay.
fn lock_delay_evidence(env: &TestEnv) {
    let delayed = |verb: &str| -> u64 {
        let run = env
            .zklock([verb, "d", "--lock-delay", "2s", "--"])
            .args(["sh", "-c", "echo \"$ZKLOCK_LOCK_DELAYED\""])
            .run();
        run.assert_success();
        run.stdout.trim().parse().expect("ZKLOCK_LOCK_DELAYED")
    };
    let whole = 1_400..=2_300;
    assert!(whole.contains(&delayed("lock")), "a new lock");
    lets_go(holds(env, "lock", "d", &[]));
    assert_eq!(delayed("lock"), 0, "after a release");
    let readers = [holds(env, "rlock", "d", &[]), holds(env, "rlock", "d", &[])];
    readers.into_iter().for_each(lets_go);
    assert_eq!(delayed("wlock"), 0, "after readers' releases");
    let library = env.connect();
    library.create_ephemeral_sequential(
        "/locks/d/_c_0e7e4d3c-7a4b-4f0c-9d7e-0b9f2a1c5d6e-lock-",
        b"",
    );
    library.close();
    assert!(whole.contains(&delayed("lock")), "after a closed session");
}

macro_rules! server_lines {
    ($($module:ident: $line:literal),* $(,)?) => {$(
        mod $module {
            #[test]
            fn zklock_locks() {
                super::against($line, super::locks);
            }

            #[test]
            fn inspection() {
                super::against($line, super::inspection);
            }

            #[test]
            fn peers_exclude_zklock() {
                super::against($line, |env| super::with_peers(env, $line));
            }

            #[test]
            fn lock_delay_evidence() {
                super::against($line, super::lock_delay_evidence);
            }
        }
    )*};
}

server_lines! {
    v3_5: "3.5",
    v3_6: "3.6",
    v3_7: "3.7",
    v3_8: "3.8",
    v3_9: "3.9",
}

/// A rolling upgrade caught midway: two members of the older line, one of
/// the newer. zklock and the newest Curator exclude each other on it.
#[test]
fn mixed_ensemble_of_two_lines() {
    let (old, new) = (Release::of("3.8"), Release::of("3.9"));
    let members = [&old, &old, &new].map(|release| ZkOptions::default().release(release));
    let ensemble = ZkEnsemble::start_members_with(&members);
    let env = TestEnv::with_ensemble(&ensemble);
    named(&format!("an ensemble of {old} and {new}"), || {
        locks(&env);
        excludes(&env, Library::NewestCurator, "mutex", "lock", "curator");
    });
}

/// zklock's own locks, and the newest kazoo beside them, on a three-server
/// ensemble of the oldest line that has ensembles zklock can lock on, where
/// a session may reach a follower that forwards its writes to the leader.
#[test]
fn v3_5_ensemble_of_three() {
    let release = Release::of("3.5");
    let ensemble = ZkEnsemble::start_with(3, &ZkOptions::default().release(&release));
    let env = TestEnv::with_ensemble(&ensemble);
    named(&format!("an ensemble of three {release}"), || {
        locks(&env);
        excludes(&env, Library::NewestKazoo, "mutex", "lock", "kazoo");
    });
}

/// With the four-letter words refused, the session survey asks the
/// AdminServer (3.5 and later) instead, on a dedicated server of `line`.
fn survey_through_the_admin_server(line: &'static str) {
    let release = Release::of(line);
    let server = support::ZkServer::with_options(
        &ZkOptions::default()
            .release(&release)
            .harness_words_only()
            .admin_server(),
    );
    let admin = server.admin_port();
    let env = TestEnv::with_server(&server);
    named(&release.to_string(), || {
        let _holder = holds(&env, "lock", "adm", &[]);
        let run = env
            .zklock([
                "-o",
                "json",
                "stat",
                "adm",
                "--admin-port",
                &admin.to_string(),
            ])
            .run();
        run.assert_success();
        let lock: Lock = run.json();
        let client = lock.holders[0].client.as_ref();
        assert!(
            client.is_some_and(|c| c.connected && c.address.is_some()),
            "the AdminServer's survey found no client: {lock:#?}; stderr: {}",
            run.stderr
        );
    });
}

#[test]
fn v3_5_survey_through_the_admin_server() {
    survey_through_the_admin_server("3.5");
}

#[test]
fn v3_9_survey_through_the_admin_server() {
    survey_through_the_admin_server("3.9");
}

/// TLS with client certificates, and SASL DIGEST-MD5 (not enforced: 3.5
/// cannot), on a dedicated server of `line`.
fn secured(line: &'static str) {
    let release = Release::of(line);
    let certs = format!("tls-{}", release.version);
    let options = secured::digest_sasl(ZkOptions::default().release(&release));
    let tls = secured::TlsServer::start(options, &certs);
    named(&release.to_string(), || {
        let over_tls = |args: &[&str]| {
            support::Zklock::new(["--tls", "--tls-ca", &tls.certs.ca()])
                .args(tls.certs.alice_flags())
                .args(args)
                .hosts(format!("localhost:{}", tls.port))
        };
        // The TLS port may open after the plain one serves.
        support::wait_until(WAIT, "the TLS port serves", || {
            over_tls(&["stat", "/"]).run().code == Some(0)
        });
        let holder = over_tls(&["lock", "tls", "--", "sleep", "600"]).spawn();
        support::wait_until(WAIT, "stat over TLS shows the TLS holder", || {
            let run = over_tls(&["-o", "json", "stat", "tls"]).run();
            run.code == Some(0) && run.json::<Lock>().holders.len() == 1
        });
        drop(holder);

        let over_sasl = |password: &str| {
            let file =
                secured::secret_file(&format!("{certs}-{password}"), &format!("{password}\n"));
            support::Zklock::new(["--sasl", "digest-md5", "--sasl-user", "alice"])
                .args(["--sasl-password-file", &file, "lock", "sasl", "--", "true"])
                .hosts(tls.server.address())
        };
        over_sasl("alice-pw").run().assert_success();
        over_sasl("wrong").run().assert_code(5);
    });
}

#[test]
fn v3_5_tls_and_sasl() {
    secured("3.5");
}

#[test]
fn v3_9_tls_and_sasl() {
    secured("3.9");
}

/// zklock reads the locks of 3.4's peers (kazoo, go-zookeeper): `stat`
/// shows each holder and names its library. The harness's own client cannot
/// make a chroot there (it creates the 3.5 way), so each peer works under a
/// path of its own at the root.
#[test]
fn v3_4_zklock_reads_its_peers_locks() {
    let release = Release::of("3.4");
    let server = release_server(&release);
    named(&release.to_string(), || {
        for library in [Library::Kazoo, Library::NewestKazoo, Library::GoZookeeper] {
            named(&library.describe(), || {
                let path = format!("/v3_4-{}/{library:?}", support::unique());
                let mut theirs =
                    peers::peer_on(&server.connect_string(), library, &path, "mutex", &[]);
                let node = acquired(&mut theirs, WAIT);
                let seen: Lock = support::Zklock::new(["-o", "json", "stat", &path])
                    .hosts(server.connect_string())
                    .run()
                    .assert_success()
                    .json();
                let holders: Vec<&str> = seen.holders.iter().map(|h| h.path.as_str()).collect();
                assert_eq!(holders, [node.as_str()], "{seen:#?}");
                assert_eq!(seen.dialect, shown_as(library), "{seen:#?}");
                peers::release(theirs);
            });
        }
    });
}

/// A kazoo holder of `path` on 3.4 reached through a proxy, frozen and cut
/// off: its session lives on a minute with no connection. Returns it and
/// the proxy, to be kept, and its node.
fn cut_off_on_3_4(server: &str, path: &str) -> (Running, FaultProxy, String) {
    let proxy = FaultProxy::start(server);
    let mut holder = peers::peer_on(
        &proxy.address(),
        Library::NewestKazoo,
        path,
        "mutex",
        &["--session-timeout-ms", "60000"],
    );
    let node = acquired(&mut holder, WAIT);
    holder.signal(libc::SIGSTOP);
    proxy.cut();
    (holder, proxy, node)
}

/// The `connection` `ls PATH` gives the one contender under `path`, as
/// `servers` are asked.
fn connection_on_3_4(servers: &str, path: &str) -> Option<String> {
    let locks: Vec<Lock> = support::Zklock::new(["-o", "json", "ls", path])
        .hosts(servers)
        .run()
        .assert_success()
        .json();
    locks.first()?.holders.first()?.connection.clone()
}

/// 3.4 keeps no `/zookeeper/config`, so nothing says who the members are.
/// A standalone 3.4 server says it runs alone (`srvr`), and a session it no
/// longer lists is disconnected; on a 3.4 ensemble such a session is
/// unknown, and `reap --disconnected-for` leaves it alone (exit 10).
#[test]
fn v3_4_a_lone_server_proves_its_list_whole_and_an_ensemble_cannot() {
    let release = Release::of("3.4");
    named(&release.to_string(), || {
        let server = release_server(&release);
        let path = format!("/v3_4-{}/cut", support::unique());
        let (alone, _proxy, _) = cut_off_on_3_4(&server.address(), &path);
        support::wait_until(WAIT, "the lone server drops the cut connection", || {
            connection_on_3_4(&server.connect_string(), &path).as_deref() == Some("disconnected")
        });
        alone.signal(libc::SIGCONT);

        let ensemble = ZkEnsemble::start_with(3, &ZkOptions::default().release(&release));
        let (member, _proxy, node) = cut_off_on_3_4(&ensemble.server(0).address(), "/cut");
        let servers = ensemble.connect_string();
        support::wait_until(WAIT, "no member lists the cut holder", || {
            connection_on_3_4(&servers, "/cut").as_deref() != Some("connected")
        });
        assert_eq!(
            connection_on_3_4(&servers, "/cut").as_deref(),
            Some("unknown")
        );
        let run = support::Zklock::new(["-o", "json", "reap", "/cut", "--disconnected-for", "1s"])
            .args(["--yes"])
            .hosts(&servers)
            .run();
        run.assert_code(10);
        assert!(run.stderr.contains("/zookeeper/config"), "{}", run.stderr);
        let reaped: support::json::ReapReport = run.json();
        assert!(reaped.deleted.is_empty(), "{reaped:#?}");
        let left = support::Zk::connect(&servers);
        assert!(left.exists(&node).is_some(), "{node} was deleted");
        member.signal(libc::SIGCONT);
    });
}

/// 3.4 answers the requests of 3.5 and later ("create" with a stat in the
/// answer among them) with "unimplemented" and closes the session: zklock
/// fails at once (10, an error of no other class), takes nothing, and does
/// not hang.
#[test]
fn v3_4_refuses_zklock_locks() {
    let release = Release::of("3.4");
    let server = release_server(&release);
    named(&release.to_string(), || {
        support::Zklock::new(["lock", "-n", "x", "--", "true"])
            .hosts(server.connect_string())
            .run()
            .assert_code(10)
            .assert_faster_than(Duration::from_secs(20));
    });
}

/// `watch` on 3.4, which has neither persistent watches nor multi-read and
/// closes the connection after answering a request it lacks: it falls back
/// to one-shot watches and reading node by node once for the session, so it
/// sees a kazoo lock taken and let go with no `gap` between (asking again on
/// every reading cost a reconnect, and so a `gap`, each time).
#[test]
fn v3_4_watch_sees_a_kazoo_lock_taken_and_let_go() {
    let release = Release::of("3.4");
    let server = release_server(&release);
    named(&release.to_string(), || {
        let path = format!("/v3_4-{}/watched", support::unique());
        let mut watching =
            support::Zklock::new(["-o", "json", "watch", "--count", "2", "--timeout", "60s"])
                .arg(&path)
                .hosts(server.connect_string())
                .spawn();
        let started = crate::watch::next_event(&mut watching);
        assert_eq!(started.event, "watching", "{started:#?}");
        let mut theirs = peers::peer_on(
            &server.connect_string(),
            Library::NewestKazoo,
            &path,
            "mutex",
            &[],
        );
        let node = acquired(&mut theirs, WAIT);
        // Let go only once watch has seen the hold: a one-shot watch is
        // re-armed by a reading, and a hold that begins and ends within one
        // re-arming is not seen (a limit of one-shot watches).
        let taken = crate::watch::next_event(&mut watching);
        assert_eq!(taken.event, "acquired", "{taken:#?}");
        peers::release(theirs);
        let run = watching.wait(WAIT);
        run.assert_success();
        let events: Vec<WatchEvent> = run.json_lines();
        let seen: Vec<(&str, Option<&str>)> = events[1..]
            .iter()
            .map(|e| (e.event.as_str(), e.node.as_deref()))
            .collect();
        assert_eq!(
            seen,
            [
                ("acquired", Some(node.as_str())),
                ("released", Some(node.as_str()))
            ],
            "{events:#?}"
        );
    });
}

/// What a server lacks is learned from its answers and kept for the
/// session. On an ensemble of a 3.5 member (no multi-read, no persistent
/// watches) and a 3.9 member, each reached through a proxy that counts the
/// requests it sees: `ls` on the old member asks for a multi-read once and
/// then reads node by node, on the new one it reads in multi-reads, and
/// both list the same; `watch` asks the old member once for a persistent
/// watch and once for a multi-read, and when its session moves to the new
/// member it keeps one-shot watches and reading node by node there, and
/// still sees a lock taken and let go.
#[test]
fn what_a_server_lacks_is_learned_from_its_answers_and_kept_for_the_session() {
    let (old, new) = (Release::of("3.5"), Release::of("3.9"));
    let members = [&old, &new].map(|release| ZkOptions::default().release(release));
    let ensemble = ZkEnsemble::start_members_with(&members);
    let env = TestEnv::with_ensemble(&ensemble);
    let member = |i: usize| FaultProxy::start(&ensemble.server(i).address());
    named(&format!("an ensemble of {old} and {new}"), || {
        let _contenders = several_locks(&env);
        let (ls_old, ls_new) = (member(0), member(1));
        let listed_old = queues_through(&env, &ls_old);
        assert_eq!(listed_old.len(), 3, "{listed_old:#?}");
        assert_eq!(
            listed_old,
            queues_through(&env, &ls_new),
            "on {old} and {new}"
        );
        assert_eq!(refused(&ls_old, op::MULTI_READ), 1, "on {old}");
        assert!(ls_old.requests_of(NODE_READS) > 0, "on {old}");
        assert!(ls_new.requests_of(&[op::MULTI_READ]) > 0, "on {new}");

        // A watch of its own on the new member sets a persistent watch.
        let fresh = member(1);
        let mut watching_new = watch_through(&env, &[&fresh]);
        watching_new.kill();
        assert!(fresh.requests_of(&[op::ADD_WATCH]) > 0, "on {new}");

        // The new member turns connections away until the watch has begun
        // on the old one.
        let (to_old, to_new) = (member(0), member(1));
        to_new.cut();
        let mut watching = watch_through(&env, &[&to_old, &to_new]);
        let holder = holds(&env, "lock", "w", &[]);
        let taken = crate::watch::next_event(&mut watching);
        assert_eq!(taken.event, "acquired", "{taken:#?}");
        to_new.pass();
        to_old.cut();
        // The gap the move leaves is read over on the new member.
        let moved = crate::watch::next_event(&mut watching);
        assert_eq!(moved.event, "gap", "{moved:#?}");
        assert!(
            to_new.requests_of(NODE_READS) > 0,
            "nothing read node by node on {new}"
        );
        lets_go(holder);
        let released = crate::watch::next_event(&mut watching);
        assert_eq!(
            (released.event.as_str(), released.node.as_ref()),
            ("released", taken.node.as_ref()),
            "{released:#?}"
        );
        watching.kill();
        let lacking = [op::ADD_WATCH, op::MULTI_READ];
        assert_eq!(
            lacking.map(|request| refused(&to_old, request)),
            [1, 1],
            "on {old}: addWatch, multi-read refused"
        );
        assert_eq!(
            to_new.requests_of(&lacking),
            0,
            "on {new}: addWatch and multi-read asked"
        );
    });
}

/// How many requests of the type `request` the server behind `proxy`
/// answered "unimplemented". A request sent into a connection the server
/// closes after such an answer is sent again on the next one, so the
/// requests sent may be more.
fn refused(proxy: &FaultProxy, request: i32) -> usize {
    proxy.answered_with(&[request], proxy::UNIMPLEMENTED)
}

/// The requests that read one node (its data, its children, or whether it
/// exists).
const NODE_READS: &[i32] = &[
    op::GET_DATA,
    op::GET_CHILDREN,
    op::GET_CHILDREN2,
    op::EXISTS,
];

/// Three locks of a holder and two waiters each, in Curator's layout, held
/// by one session of the test's own.
fn several_locks(env: &TestEnv) -> support::Zk {
    let contenders = env.connect();
    for lock in ["a", "b", "c"] {
        let dir = format!("/locks/{lock}");
        contenders.mkdir_p(&dir);
        for _ in 0..3 {
            contenders.create_ephemeral_sequential(
                &format!("{dir}/_c_00000000-0000-0000-0000-000000000000-lock-"),
                b"",
            );
        }
    }
    contenders
}

/// A lock's contenders, in order: each one's node and the node it waits on.
type Queue = Vec<(String, Option<String>)>;

/// What `ls` through `proxy` alone shows: each lock's path and queue.
fn queues_through(env: &TestEnv, proxy: &FaultProxy) -> Vec<(String, Queue)> {
    let listed: Vec<Lock> = support::Zklock::new(["-o", "json", "ls"])
        .hosts(proxy.hosts(env))
        .run()
        .assert_success()
        .json();
    listed
        .into_iter()
        .map(|lock| {
            let contenders = lock.holders.into_iter().chain(lock.waiters);
            let queue = contenders.map(|c| (c.path, c.waiting_on)).collect();
            (lock.path, queue)
        })
        .collect()
}

/// `watch w` through `proxies`, in that order, once it watches.
fn watch_through(env: &TestEnv, proxies: &[&FaultProxy]) -> Running {
    let hosts: Vec<String> = proxies.iter().map(|proxy| proxy.address()).collect();
    let mut watching = support::Zklock::new(["-o", "json", "watch", "--timeout", "60s", "w"])
        .hosts(format!("{}{}", hosts.join(","), env.chroot()))
        .spawn();
    let started = crate::watch::next_event(&mut watching);
    assert_eq!(started.event, "watching", "{started:#?}");
    watching
}
