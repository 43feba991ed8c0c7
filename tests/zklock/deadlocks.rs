//! Wait chains and `deadlocks` against a real ZooKeeper: kazoo sessions
//! that hold one lock and wait on another, zklock holders, and contender
//! nodes with zklock owner records made exactly as zklock makes them;
//! asserting the JSON, the exit codes and that ZooKeeper is left alone.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::peers::{self, Library, acquired, peer};
use support::proxy::{ClientMessage, FaultProxy, op};
use support::{Scratch, TestEnv, Zk, wait_until};
use zookeeper_client as zkc;

const WAIT: Duration = Duration::from_secs(30);

/// `deadlocks ARGS -o json`: its exit code and its cycles.
fn deadlocks(env: &TestEnv, args: &[&str]) -> (i32, Vec<Value>) {
    let run = env
        .zklock(["deadlocks"].iter().chain(args).chain(&["-o", "json"]))
        .run();
    let code = run.code.unwrap_or(-1);
    assert!(code == 0 || code == 1, "deadlocks exits 0 or 1: {run:?}");
    (code, run.json())
}

/// The chain `stat LOCK -o json` gives the lock's first waiter.
fn first_waiters_chain(env: &TestEnv, lock: &str) -> Vec<Value> {
    let lock: Value = env
        .zklock(["stat", lock, "-o", "json"])
        .run()
        .assert_success()
        .json();
    lock["waiters"][0]["blocked_by"].as_array().unwrap().clone()
}

/// Waits until `dir` has `n` children.
fn wait_for_children(zk: &Zk, dir: &str, n: usize) {
    wait_until(WAIT, &format!("{dir} has {n} children"), || {
        zk.children_if_any(dir).len() == n
    });
}

/// A zklock owner record of process `pid` on one host and boot, with a
/// `-w` deadline or not.
fn record(pid: u32, deadline: bool) -> Vec<u8> {
    let mut owner = json!({
        "tool": "zklock", "version": "0.1.0", "host": "build7", "pid": pid,
        "user": "ci", "command": ["make"], "time": "2026-01-01T00:00:00.000Z", "data": null,
        "identity": {"boot_id": "b00t", "pid_ns": "pid:[4026531836]", "group": pid, "group_start": 42},
    });
    if deadline {
        owner["deadline_ms"] = json!(i64::MAX / 2);
    }
    serde_json::to_vec(&owner).unwrap()
}

/// Two sessions, each one zklock by its owner records, crossing two locks:
/// session 1 holds /x/a and waits on /x/b, session 2 the other way round.
/// Returns the sessions (they own the nodes) and the path of the node
/// session 2 made last, the youngest.
pub(crate) fn crossed_zklocks(env: &TestEnv, deadline: bool) -> (Zk, Zk, String) {
    crossed_zklocks_on(env, ["/x/a", "/x/b"], deadline)
}

/// [`crossed_zklocks`] on the locks `a` and `b`: the youngest node is in `a`.
fn crossed_zklocks_on(env: &TestEnv, [a, b]: [&str; 2], deadline: bool) -> (Zk, Zk, String) {
    let (one, two) = (env.connect(), env.connect());
    for zk in [&one, &two] {
        zk.mkdir_p(a);
        zk.mkdir_p(b);
    }
    one.create_ephemeral_sequential(&format!("{a}/lock-"), &record(100, false));
    two.create_ephemeral_sequential(&format!("{b}/lock-"), &record(200, false));
    one.create_ephemeral_sequential(&format!("{b}/lock-"), &record(100, false));
    let youngest = two.create_ephemeral_sequential(&format!("{a}/lock-"), &record(200, deadline));
    (one, two, youngest)
}

#[test]
fn one_zklock_on_each_side_of_a_cycle_makes_it_certain() {
    let env = TestEnv::new();
    let (_one, _two, youngest) = crossed_zklocks(&env, false);

    let (code, cycles) = deadlocks(&env, &["/x"]);
    assert_eq!(code, 1, "a cycle was found");
    assert_eq!(cycles.len(), 1, "{cycles:#?}");
    let cycle = &cycles[0];
    assert_eq!(cycle["certain"], true, "{cycle:#}");
    assert_eq!(cycle["break_with"], format!("zklock release {youngest}"));
    let mut edges: Vec<(&str, &str)> = cycle["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["lock"].as_str().unwrap(), e["via"].as_str().unwrap()))
        .collect();
    edges.sort();
    assert_eq!(edges, [("/x/a", "locks"), ("/x/b", "locks")]);
    for edge in cycle["edges"].as_array().unwrap() {
        assert_ne!(edge["waiter"]["session"], edge["holder"]["session"]);
        assert!(edge["holder"]["owner"].as_str().unwrap().contains("build7"));
    }
    let (code, certain) = deadlocks(&env, &["/x", "--certain"]);
    assert_eq!((code, certain.len()), (1, 1));
    let (code, old) = deadlocks(&env, &["/x", "--min-age", "1h"]);
    assert_eq!((code, old.len()), (0, 0), "younger than an hour");

    // Breaking it at the youngest contender ends it.
    env.zklock(["release", &youngest]).run().assert_success();
    assert_eq!(deadlocks(&env, &["/x"]), (0, Vec::new()));
}

/// Lock names that a terminal or a shell would misread: bidi and
/// zero-width characters, separators, quotes, backslashes, text that reads
/// as escapes or as shell syntax, letters outside ASCII. (ZooKeeper
/// refuses control characters such as a newline in a path, so no node can
/// hold one; the quoting is tested with them on its own.)
const MISREAD_NAMES: &[&str] = &[
    "evil\u{202e}abc",
    "de\u{200b}ploy",
    "\u{feff}bom\u{2060}wj\u{200d}zwj\u{00ad}",
    "line\u{2028}para\u{2029}",
    "it's \"quoted\"",
    "back\\slash\\xe2\\x80\\xae",
    "$(touch pwned)`touch pwned`${HOME}!!",
    "déploiement 配置",
];

/// The shells that read `$'…'`: bash and zsh, and dash or `sh` once they
/// do (dash 0.5.12 does not).
fn shells_that_read_ansi_c_quotes() -> Vec<&'static str> {
    support::secured::require_tool("bash", "bash");
    support::secured::require_tool("zsh", "zsh");
    let mut shells = vec!["bash", "zsh"];
    for shell in ["dash", "sh"] {
        let read = std::process::Command::new(shell)
            .args(["-c", "printf %s $'\\x41'"])
            .output();
        if read.is_ok_and(|out| out.stdout == b"A") {
            shells.push(shell);
        }
    }
    shells
}

/// The `release` the table of `deadlocks DIR` suggests, as a person would
/// copy it off the screen, checked against the JSON's `break_with`.
fn suggested_release(env: &TestEnv, dir: &str) -> String {
    let shown = env
        .zklock(["deadlocks", dir])
        .run()
        .assert_code(1)
        .stdout
        .clone();
    let line = shown
        .lines()
        .find_map(|line| {
            line.split_once("break it with: ")
                .map(|(_, command)| command)
        })
        .unwrap_or_else(|| panic!("no release suggested: {shown}"))
        .to_owned();
    let (_, cycles) = deadlocks(env, &[dir]);
    assert_eq!(cycles[0]["break_with"], line.as_str());
    assert!(line.is_ascii(), "shown as plain ASCII: {line}");
    line
}

#[test]
fn a_suggested_release_pasted_into_a_shell_deletes_exactly_its_node() {
    let env = TestEnv::new();
    let shells = shells_that_read_ansi_c_quotes();
    let scratch = Scratch::new();
    let bin = std::path::Path::new(support::cmd::ZKLOCK).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (n, name) in MISREAD_NAMES.iter().enumerate() {
        for shell in &shells {
            let dir = format!("/p{n}-{shell}");
            let a = format!("{dir}/{name}");
            let (_one, _two, youngest) = crossed_zklocks_on(&env, [&a, &format!("{dir}/b")], false);
            let mut others: Vec<String> = [&a, &format!("{dir}/b")]
                .iter()
                .flat_map(|lock| {
                    let children = env.zk().children(lock);
                    children
                        .into_iter()
                        .map(move |child| format!("{lock}/{child}"))
                })
                .filter(|node| *node != youngest)
                .collect();
            // The nodes a reader of the name might take it for: the name as
            // it looks (its invisible characters left out), and as an
            // escaped rendering spells it.
            for look_alike in [
                name.chars()
                    .filter(|&c| c == ' ' || c.is_alphanumeric() || c.is_ascii_punctuation())
                    .collect(),
                name.chars()
                    .flat_map(char::escape_debug)
                    .collect::<String>(),
            ] {
                if look_alike != *name {
                    let node = youngest.replace(name, &look_alike);
                    env.zk().mkdir_p(&node);
                    others.push(node);
                }
            }

            let release = suggested_release(&env, &dir);
            let shell_args: &[&str] = if *shell == "bash" {
                &["-H", "-c"]
            } else {
                &["-c"]
            };
            let pasted = std::process::Command::new(shell)
                .args(shell_args)
                .arg(&release)
                .current_dir(scratch.file(""))
                .env_clear()
                .env("PATH", &path)
                .env("HOME", scratch.file(""))
                .env("ZKLOCK_HOSTS", env.hosts())
                .output()
                .expect("run the shell");
            assert!(pasted.status.success(), "{shell}: {release}: {pasted:?}");
            assert!(
                env.zk().exists(&youngest).is_none(),
                "{shell}: {release} left {youngest:?}"
            );
            for other in &others {
                assert!(
                    env.zk().exists(other).is_some(),
                    "{shell}: {release} deleted {other:?}"
                );
            }
            assert!(
                !scratch.file("pwned").exists(),
                "{shell} ran a command from {release}"
            );
        }
    }
}

#[test]
fn a_deadline_or_a_rewritten_record_leaves_a_cycle_possible() {
    let env = TestEnv::new();
    let (_one, _two, _) = crossed_zklocks(&env, true);
    let (code, cycles) = deadlocks(&env, &["/x"]);
    assert_eq!(code, 1);
    assert_eq!(
        cycles[0]["certain"], false,
        "a waiter with -w gives up by itself"
    );
    assert_eq!(deadlocks(&env, &["/x", "--certain"]), (0, Vec::new()));

    let env = TestEnv::new();
    let (one, _two, _) = crossed_zklocks(&env, false);
    let holder = format!("/x/a/{}", one.children("/x/a")[0]);
    let holder = if one.get(&holder).1.ephemeral_owner == one.session_id() {
        holder
    } else {
        format!("/x/a/{}", one.children("/x/a")[1])
    };
    one.set(&holder, &record(100, false));
    let (code, cycles) = deadlocks(&env, &["/x"]);
    assert_eq!(code, 1, "the sessions still cross");
    assert_eq!(
        cycles[0]["certain"], false,
        "a record rewritten after creation proves nothing"
    );
}

/// How each edge of `cycle` is known, in its order: `session`, `locks`
/// or `nesting`.
fn vias(cycle: &Value) -> Vec<&Value> {
    cycle["edges"]
        .as_array()
        .expect("a cycle's edges")
        .iter()
        .map(|edge| &edge["via"])
        .collect()
}

/// Two peer sessions of `libraries` crossing `DIR/a` and `DIR/b`: the
/// first holds `a` and waits on `b`, the second holds `b` and waits on `a`;
/// returned once both waits are queued.
fn crossing_sessions(
    env: &TestEnv,
    libraries: [Library; 2],
    dir: &str,
) -> (support::Running, support::Running) {
    let scratch = Scratch::new();
    let go = scratch.file("go");
    let go = go.to_str().unwrap();
    let (a, b) = (format!("{dir}/a"), format!("{dir}/b"));
    let mut first = peer(
        env,
        libraries[0],
        &a,
        "mutex",
        &["--then", &b, "--then-after", go],
    );
    let mut second = peer(
        env,
        libraries[1],
        &b,
        "mutex",
        &["--then", &a, "--then-after", go],
    );
    acquired(&mut first, WAIT);
    acquired(&mut second, WAIT);
    std::fs::write(go, b"").unwrap();
    wait_for_children(env.zk(), &a, 2);
    wait_for_children(env.zk(), &b, 2);
    (first, second)
}

#[test]
fn kazoo_sessions_that_hold_one_lock_and_wait_on_another_are_a_possible_cycle() {
    let env = TestEnv::new();
    let (one, two) = crossing_sessions(&env, [Library::Kazoo, Library::Kazoo], "/k");

    let (code, cycles) = deadlocks(&env, &["/k"]);
    assert_eq!(code, 1);
    assert_eq!(cycles.len(), 1, "{cycles:#?}");
    assert_eq!(
        cycles[0]["certain"], false,
        "one session may be several threads"
    );
    let vias = vias(&cycles[0]);
    assert_eq!(vias, [&json!("session"), &json!("session")]);
    assert_eq!(deadlocks(&env, &["/k", "--certain"]), (0, Vec::new()));

    // stat shows each waiter's chain around the loop.
    let lock: Value = env
        .zklock(["stat", "/k/a", "-o", "json"])
        .run()
        .assert_success()
        .json();
    let chain = lock["waiters"][0]["blocked_by"].as_array().unwrap().clone();
    assert_eq!(chain.len(), 2, "{chain:#?}");
    assert_eq!(chain[0]["lock"], "/k/b");
    assert_eq!(
        (&chain[0]["via"], &chain[0]["loops"]),
        (&json!("session"), &json!(false))
    );
    assert_eq!(chain[1]["lock"], "/k/a");
    assert_eq!(chain[1]["loops"], true);
    assert_eq!(chain[1]["node"], lock["holders"][0]["path"]);

    // Inspecting changed nothing: both nodes of each lock are still there.
    assert_eq!(env.zk().children("/k/a").len(), 2);
    peers::release(one);
    peers::release(two);
}

/// `stat` of a queue wider than a read window (4,096 contenders) follows
/// its chain without reading the queue whole, and still finds the wait
/// that loops back into it far behind its first window. Session 1 holds
/// /q/long and waits on /q/other; session 2 holds /q/other and waits on
/// /q/long behind 5,000 waiters of a third session; each session is one
/// zklock by its records.
#[test]
fn stat_of_a_long_queue_finds_the_loop_back_into_it_beyond_its_first_window() {
    let env = TestEnv::new();
    let (one, two, crowd) = (env.connect(), env.connect(), env.connect());
    one.mkdir_p("/q/long");
    one.mkdir_p("/q/other");
    let held = one.create_ephemeral_sequential("/q/long/lock-", &record(100, false));
    two.create_ephemeral_sequential("/q/other/lock-", &record(200, false));
    one.create_ephemeral_sequential("/q/other/lock-", &record(100, false));
    let sequential = zkc::CreateMode::EphemeralSequential.with_acls(zkc::Acls::anyone_all());
    let made = crowd.block_on(futures::future::join_all(
        (0..5000).map(|_| crowd.client().create("/q/long/lock-", b"", &sequential)),
    ));
    assert!(made.iter().all(Result::is_ok), "the crowd's nodes are made");
    let last = two.create_ephemeral_sequential("/q/long/lock-", &record(200, false));

    let lock: Value = env
        .zklock(["stat", "/q/long", "-o", "json"])
        .run()
        .assert_success()
        .json();
    let waiters = lock["waiters"].as_array().unwrap();
    assert_eq!(waiters.len(), 5001);
    assert_eq!(waiters[5000]["path"], last.as_str());
    let chain = waiters[5000]["blocked_by"].as_array().unwrap();
    let hops: Vec<(&Value, &Value, &Value)> = chain
        .iter()
        .map(|hop| (&hop["lock"], &hop["via"], &hop["loops"]))
        .collect();
    assert_eq!(
        hops,
        [
            (&json!("/q/other"), &json!("locks"), &json!(false)),
            (&json!("/q/long"), &json!("locks"), &json!(true)),
        ],
        "{chain:#?}"
    );
    assert_eq!(chain[1]["node"], held.as_str());
    assert_eq!(waiters[0]["blocked_by"], waiters[5000]["blocked_by"]);
    drop((one, two, crowd));
}

#[test]
fn stat_follows_a_chain_across_dialects_to_the_root_blocker() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let go = scratch.file("go");
    let go = go.to_str().unwrap();
    // zklock (Curator's names) holds /c/z; kazoo session 2 holds /c/b and
    // waits on /c/z; kazoo session 1 holds /c/a and waits on /c/b; a
    // Curator client waits on /c/a.
    let mut root = env.zklock(["lock", "/c/z"]).spawn();
    root.next_line(WAIT);
    let mut two = peer(
        &env,
        Library::Kazoo,
        "/c/b",
        "mutex",
        &["--then", "/c/z", "--then-after", go],
    );
    let mut one = peer(
        &env,
        Library::Kazoo,
        "/c/a",
        "mutex",
        &["--then", "/c/b", "--then-after", go],
    );
    acquired(&mut two, WAIT);
    acquired(&mut one, WAIT);
    std::fs::write(go, b"").unwrap();
    let waiter = peer(&env, Library::Curator, "/c/a", "mutex", &[]);
    for dir in ["/c/z", "/c/b", "/c/a"] {
        wait_for_children(env.zk(), dir, 2);
    }

    let chain = first_waiters_chain(&env, "/c/a");
    let hops: Vec<(&str, &str, bool)> = chain
        .iter()
        .map(|h| {
            (
                h["lock"].as_str().unwrap(),
                h["via"].as_str().unwrap(),
                h["loops"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        hops,
        [("/c/b", "session", false), ("/c/z", "session", false)]
    );
    assert!(
        chain[1]["owner"].as_str().unwrap().contains("pid"),
        "zklock's record: {chain:#?}"
    );
    assert!(chain.iter().all(|h| h["age_ms"].as_i64().unwrap() >= 0));
    assert_eq!(
        deadlocks(&env, &["/c"]),
        (0, Vec::new()),
        "a chain, not a cycle"
    );

    root.signal(libc::SIGTERM);
    root.wait(WAIT).assert_success();
    peers::release(waiter);
    peers::release(one);
    peers::release(two);
}

/// The names Curator's client gives its protected nodes, for the nodes a
/// test makes as Curator makes them.
const CURATOR_UUID: &str = "2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f";

/// Makes `DIR/_c_<uuid>-WHAT-N` on `zk`'s session as Curator does: making
/// `DIR` again when the server has just removed it, an empty container.
fn curator_node(zk: &Zk, dir: &str, what: &str) -> String {
    let sequential = zkc::CreateMode::EphemeralSequential.with_acls(zkc::Acls::anyone_all());
    let prefix = format!("{dir}/_c_{CURATOR_UUID}-{what}-");
    support::wait_for(WAIT, &format!("{prefix} is made"), || {
        zk.mkdir_p(dir);
        Some(zk.try_create_with(&prefix, b"", &sequential).ok()?.1)
    })
}

/// A chain of five locks, each of another library, and each wait one its
/// library really makes: a kazoo waiter on kazoo's lock, whose holder's
/// session waits (kazoo honouring HBase's names) on an HBase write lock;
/// that lock's session waits for the one lease of a semaphore, holding its
/// internal mutex with its lease made, as Curator's semaphore does; the
/// lease is a zklock's, whose nested zklock waits on a Curator mutex; that
/// Curator session waits on go-zookeeper's lock, the root. `stat` shows
/// the chain to the root in JSON and below its table; `deadlocks` finds no
/// cycle in it.
#[test]
fn stat_follows_a_chain_of_five_locks_across_five_libraries_to_the_root() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let go = scratch.file("go");
    let go = go.to_str().unwrap();
    let mut gozk = peer(&env, Library::GoZookeeper, "/c/gozk", "mutex", &[]);
    let root = acquired(&mut gozk, WAIT);
    let then = |lock: &'static str| ["--then", lock, "--then-after", go];
    let mut curator = peer(
        &env,
        Library::Curator,
        "/c/curator",
        "mutex",
        &then("/c/gozk"),
    );
    let curator_holds = acquired(&mut curator, WAIT);
    let mut sem = nested_with(
        &env,
        &scratch,
        &["sem", "/c/sem", "--max-leases", "1"],
        "lock /c/curator -- true",
    );
    let lease = format!("/c/sem/leases/{}", env.zk().children("/c/sem/leases")[0]);
    let hbase = env.connect();
    hbase.mkdir_p("/c/hbase");
    let table_lock = hbase.create_ephemeral_sequential(
        "/c/hbase/write-",
        &support::hbase::table_lock("default", "orders", false, "alter"),
    );
    curator_node(&hbase, "/c/sem/locks", "lock");
    curator_node(&hbase, "/c/sem/leases", "lease");
    let mut kazoo = peer(
        &env,
        Library::Kazoo,
        "/c/kazoo",
        "mutex",
        &[&then("/c/hbase")[..], &["--extra-pattern", "write-"]].concat(),
    );
    acquired(&mut kazoo, WAIT);
    let waiter = peer(&env, Library::Kazoo, "/c/kazoo", "mutex", &[]);
    std::fs::write(go, b"").unwrap();
    for dir in ["/c/kazoo", "/c/hbase", "/c/curator", "/c/gozk"] {
        wait_for_children(env.zk(), dir, 2);
    }

    let chain = first_waiters_chain(&env, "/c/kazoo");
    let hops: Vec<(&Value, &Value, &Value, &Value)> = chain
        .iter()
        .map(|hop| (&hop["lock"], &hop["node"], &hop["via"], &hop["loops"]))
        .collect();
    let (no, session, nesting) = (json!(false), json!("session"), json!("nesting"));
    assert_eq!(
        hops,
        [
            (&json!("/c/hbase"), &json!(table_lock), &session, &no),
            (&json!("/c/sem"), &json!(lease), &session, &no),
            (&json!("/c/curator"), &json!(curator_holds), &nesting, &no),
            (&json!("/c/gozk"), &json!(root), &session, &no),
        ],
        "{chain:#?}"
    );
    assert_eq!(chain[0]["session"], hbase.session_hex());
    assert!(chain.iter().all(|h| h["age_ms"].as_i64().unwrap() >= 0));

    // The table shows the same chain below it, hop by hop, in order, and
    // ends on the root blocker (each hop on one line, with -o wide).
    let table = env.zklock(["stat", "/c/kazoo", "-o", "wide"]).run();
    let text = &table.assert_success().stdout;
    let lines: Vec<&str> = text.lines().collect();
    let at = |node: &str| {
        lines
            .iter()
            .rposition(|line| line.contains(node))
            .unwrap_or_else(|| panic!("{node} is not shown:\n{text}"))
    };
    let shown: Vec<usize> = [&table_lock, &lease, &curator_holds, &root]
        .iter()
        .map(|node| at(node))
        .collect();
    assert!(shown.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert_eq!(shown[3], lines.len() - 1, "the root comes last:\n{text}");

    assert_eq!(
        deadlocks(&env, &["/c"]),
        (0, Vec::new()),
        "a chain, not a cycle"
    );

    sem.signal(libc::SIGTERM);
    sem.wait(WAIT);
    drop(hbase);
    for peer in [waiter, kazoo, curator, gozk] {
        peers::release(peer);
    }
}

#[test]
fn long_queues_many_readers_elections_and_idle_sessions_are_no_cycle() {
    let env = TestEnv::new();
    let zk = env.zk();
    // A long queue, one session per contender.
    let sessions: Vec<Zk> = (0..40).map(|_| env.connect()).collect();
    zk.mkdir_p("/n/long");
    for session in &sessions {
        session.create_ephemeral_sequential("/n/long/lock-", b"");
    }
    // Many readers ahead of a writer, in the reverse of their sessions'
    // order in the long queue: readers taken for exclusive contenders
    // would each wait on a session that waits on theirs in the long queue.
    zk.mkdir_p("/n/rw");
    for session in sessions[..10].iter().rev() {
        session.create_ephemeral_sequential("/n/rw/read-", b"");
    }
    sessions[39].create_ephemeral_sequential("/n/rw/write-", b"");
    // One session holds two locks and waits on none.
    let idle = env.connect();
    for dir in ["/n/p", "/n/q"] {
        zk.mkdir_p(dir);
        idle.create_ephemeral_sequential(&format!("{dir}/lock-"), b"");
        sessions[20].create_ephemeral_sequential(&format!("{dir}/lock-"), b"");
    }
    // An election whose candidates cross a lock: the leader waits in the
    // long queue on the other candidate, which would wait on the leader if
    // an election were a lock.
    zk.mkdir_p("/n/election");
    sessions[1].create_ephemeral_sequential("/n/election/n_", b"");
    sessions[0].create_ephemeral_sequential("/n/election/n_", b"");
    assert_eq!(deadlocks(&env, &["/n"]), (0, Vec::new()));
    assert_eq!(
        deadlocks(&env, &["/"]),
        (0, Vec::new()),
        "the same from the chroot's top"
    );
}

#[test]
fn deadlocks_under_a_path_that_does_not_exist_exits_6() {
    let env = TestEnv::new();
    env.zklock(["deadlocks", "/nowhere"]).run().assert_code(6);
}

/// `zklock lock OUTER -- sh -c '…'`: once holding OUTER, the command marks
/// `ready`, waits for `go`, then runs `INNER` (a zklock taking the next
/// lock) through `wrap` (`env -i` to drop the environment, say), and
/// writes its exit code into `code-OUTER`.
fn nested(
    env: &TestEnv,
    scratch: &Scratch,
    outer: &str,
    inner: &str,
    wrap: &str,
) -> support::Running {
    let name = outer.replace('/', "-");
    let ready = scratch.file(&format!("ready{name}"));
    let script = format!(
        "touch '{ready}'; while [ ! -e '{go}' ]; do sleep 0.05; done; \
         {wrap} '{zklock}' -H '{hosts}' lock {inner} -- true; echo $? > '{code}'",
        ready = ready.display(),
        go = scratch.file("go").display(),
        zklock = env!("CARGO_BIN_EXE_zklock"),
        hosts = env.hosts(),
        code = scratch.file(&format!("code{name}")).display(),
    );
    let running = env
        .zklock(["lock", outer, "--", "sh", "-c", &script])
        .spawn();
    wait_until(WAIT, &format!("{outer} is held"), || ready.exists());
    running
}

/// Nested zklocks in a ring of `locks`, directly or through `wrap`: each
/// holds one lock and its nested zklock waits on the next. Exactly one of
/// them (the youngest waiter) exits 7, the others then get their locks,
/// and nothing is left behind.
fn nested_cycle(locks: &[&str], wrap: &str) {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let next = locks.iter().cycle().skip(1);
    let mut outers: Vec<support::Running> = locks
        .iter()
        .zip(next)
        .map(|(outer, inner)| nested(&env, &scratch, outer, inner, wrap))
        .collect();
    std::fs::write(scratch.file("go"), b"").unwrap();
    for outer in &mut outers {
        outer.wait(WAIT).assert_success();
    }
    let codes: Vec<String> = locks
        .iter()
        .map(|lock| {
            let code = scratch.file(&format!("code{}", lock.replace('/', "-")));
            std::fs::read_to_string(code).unwrap().trim().to_owned()
        })
        .collect();
    let refused = codes.iter().filter(|code| *code == "7").count();
    assert!(
        codes.iter().all(|code| code == "0" || code == "7") && refused == 1,
        "one refuses the cycle, the others go on: {codes:?}"
    );
    for lock in locks {
        assert!(
            env.zk().children_if_any(lock).is_empty(),
            "{lock} is left empty"
        );
    }
}

#[test]
fn nested_zklocks_crossing_two_locks_refuse_the_certain_cycle() {
    nested_cycle(&["/y/a", "/y/b"], "");
}

#[test]
fn nested_zklocks_in_a_ring_of_three_locks_refuse_the_certain_cycle() {
    nested_cycle(&["/y/a", "/y/b", "/y/c"], "");
}

/// Both waiters look, and both may find the cycle at once: they agree on
/// the one to give up every time, however the race between them goes.
#[test]
fn of_two_nested_zklocks_closing_a_cycle_exactly_one_exits_7_every_time() {
    for _ in 0..30 {
        nested_cycle(&["/y/a", "/y/b"], "");
    }
}

/// A session holding /y/a that then queues on /y/b, with the owner record
/// of a zklock holding several locks from before waiters said they look
/// for cycles, closes a certain cycle with a nested zklock that already
/// waits on /y/a: nothing wakes that waiter, and the closing waiter never
/// gives up by itself. The nested zklock finds the cycle at a timed look
/// and gives up, and the session's wait on /y/b is then granted.
#[test]
fn a_cycle_closed_by_a_waiter_that_does_not_look_is_broken_by_the_nested_zklock_on_it() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let proxy = FaultProxy::start(env.servers());
    let other = env.connect();
    for dir in ["/y/a", "/y/b"] {
        other.mkdir_p(dir);
    }
    let held = other.create_ephemeral_sequential("/y/a/lock-", &record(100, false));
    let (ready, go, code) = (
        scratch.file("ready"),
        scratch.file("go"),
        scratch.file("code"),
    );
    let script = format!(
        "touch '{ready}'; while [ ! -e '{go}' ]; do sleep 0.05; done; \
         '{zklock}' -H '{through}' --root /y lock /y/a -- true; echo $? > '{code}'",
        ready = ready.display(),
        go = go.display(),
        zklock = env!("CARGO_BIN_EXE_zklock"),
        through = proxy.hosts(&env),
        code = code.display(),
    );
    let mut outer = env
        .zklock(["lock", "/y/b", "--", "sh", "-c", &script])
        .spawn();
    wait_until(WAIT, "/y/b is held", || ready.exists());
    std::fs::write(&go, b"").unwrap();
    wait_for_children(env.zk(), "/y/a", 2);
    // Two looks of the waiter under its root, the second with no wake-up:
    // the cycle closed after them is found by a later one.
    let looked = format!("{}/y", env.chroot());
    wait_until(WAIT, "the nested waiter looks twice", || {
        let sent = proxy.client_messages();
        let syncs = sent.iter().filter(|message| {
            matches!(message, ClientMessage::Request { op, path: Some(path), .. }
                if *op == op::SYNC && *path == looked)
        });
        syncs.count() >= 2
    });
    let queued = other.create_ephemeral_sequential("/y/b/lock-", &record(100, false));
    outer.wait(WAIT).assert_success();
    assert_eq!(std::fs::read_to_string(&code).unwrap().trim(), "7");
    let name = |path: &str| path.rsplit('/').next().unwrap().to_owned();
    assert_eq!(env.zk().children("/y/a"), [name(&held)]);
    assert_eq!(env.zk().children("/y/b"), [name(&queued)], "granted");
}

#[test]
fn nesting_is_proven_from_the_ancestry_when_env_i_dropped_the_environment() {
    nested_cycle(&["/y/a", "/y/b"], "env -i");
}

#[test]
fn a_nested_zklock_with_a_deadline_waits_and_deadlocks_calls_it_possible() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let mut one = nested(&env, &scratch, "/y/a", "/y/b -w 1h", "");
    let mut two = nested(&env, &scratch, "/y/b", "/y/a -w 1h", "");
    std::fs::write(scratch.file("go"), b"").unwrap();
    wait_for_children(env.zk(), "/y/a", 2);
    wait_for_children(env.zk(), "/y/b", 2);
    let (code, cycles) = deadlocks(&env, &["/y"]);
    assert_eq!(code, 1, "{cycles:#?}");
    assert_eq!(
        cycles[0]["certain"], false,
        "each waiter gives up by itself"
    );
    let vias = vias(&cycles[0]);
    assert_eq!(vias, [&json!("nesting"), &json!("nesting")]);
    for zklock in [&mut one, &mut two] {
        zklock.signal(libc::SIGTERM);
        zklock.wait(WAIT);
    }
}

#[test]
fn a_copied_zklock_held_proves_no_nesting() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let mut one = nested(&env, &scratch, "/y/a", "/y/b", "");
    let enclosing = format!("/y/a/{}", env.zk().children("/y/a")[0]);
    // An unrelated zklock, with a copy of the variable one's command has.
    let mut two = env
        .zklock(["lock", "/y/a", "--", "true"])
        .env("ZKLOCK_HELD", &enclosing)
        .spawn();
    wait_for_children(env.zk(), "/y/a", 2);
    let waiter = env
        .zk()
        .children("/y/a")
        .into_iter()
        .map(|name| format!("/y/a/{name}"))
        .find(|path| *path != enclosing)
        .unwrap();
    let record: Value = serde_json::from_slice(&env.zk().get(&waiter).0).unwrap();
    assert_eq!(record["tool"], "zklock");
    assert_eq!(
        record.get("nested_in"),
        None,
        "a copied variable is no proof: {record:#}"
    );
    for zklock in [&mut two, &mut one] {
        zklock.signal(libc::SIGTERM);
        zklock.wait(WAIT);
    }
}

#[test]
fn a_write_lock_inside_a_read_hold_of_the_same_lock_exits_7_at_once() {
    let env = TestEnv::new();
    let zklock = env!("CARGO_BIN_EXE_zklock");
    let hosts = env.hosts();
    let inner = |mode: &str, lock: &str| -> Vec<String> {
        [zklock, "-H", &hosts, mode, lock, "--", "true"]
            .map(String::from)
            .to_vec()
    };
    let run = |outer: &str, inner: Vec<String>| {
        let mut args = vec![outer.to_owned(), "/r/a".to_owned(), "--".to_owned()];
        args.extend(inner);
        env.zklock(args).timeout(WAIT).run()
    };
    let upgrade = run("rlock", inner("wlock", "/r/a"));
    upgrade.assert_code(7);
    assert!(
        upgrade.elapsed < Duration::from_secs(20),
        "at once: {upgrade:?}"
    );
    assert!(
        env.zk().children_if_any("/r/a").is_empty(),
        "no node is left behind"
    );
    // Not an upgrade: a read inside a read, a write elsewhere.
    run("rlock", inner("rlock", "/r/a")).assert_success();
    run("rlock", inner("wlock", "/r/b")).assert_success();
    // A copied variable is no proof: an unrelated writer just waits.
    let mut reader = env.zklock(["rlock", "/r/a"]).spawn();
    let token = reader.next_line(WAIT);
    env.zklock(["wlock", "/r/a", "-n", "--", "true"])
        .env("ZKLOCK_HELD", &token)
        .run()
        .assert_code(1);
    reader.signal(libc::SIGTERM);
    reader.wait(WAIT).assert_success();
}

#[test]
fn a_curator_and_a_kazoo_session_crossing_two_locks_are_a_possible_cycle() {
    let env = TestEnv::new();
    let (curator, kazoo) = crossing_sessions(&env, [Library::Curator, Library::Kazoo], "/m");
    // A zklock queues on /m/a too: it waits on the cycle, it is not in it.
    let mut waiter = env.zklock(["lock", "/m/a", "--", "true"]).spawn();
    wait_for_children(env.zk(), "/m/a", 3);

    let (code, cycles) = deadlocks(&env, &["/m"]);
    assert_eq!(code, 1);
    assert_eq!(cycles.len(), 1, "{cycles:#?}");
    assert_eq!(cycles[0]["certain"], false);
    let edges = cycles[0]["edges"].as_array().unwrap();
    assert_eq!(
        edges.len(),
        2,
        "the zklock waiter is no part of it: {edges:#?}"
    );
    let mut locks: Vec<&str> = edges.iter().map(|e| e["lock"].as_str().unwrap()).collect();
    locks.sort();
    assert_eq!(locks, ["/m/a", "/m/b"]);

    let lock: Value = env
        .zklock(["stat", "/m/a", "-o", "json"])
        .run()
        .assert_success()
        .json();
    for waiter in lock["waiters"].as_array().unwrap() {
        let chain = waiter["blocked_by"].as_array().unwrap();
        assert_eq!(chain.last().unwrap()["loops"], true, "{chain:#?}");
    }
    waiter.signal(libc::SIGTERM);
    waiter.wait(WAIT);
    peers::release(curator);
    peers::release(kazoo);
    wait_for_children(env.zk(), "/m/a", 0);
}

/// A nested zklock and a kazoo session crossing two locks: the zklock's
/// side is proven, kazoo's rests on a shared session, so the cycle is
/// possible; `deadlocks` lists it, and the zklock, which refuses only a
/// certain cycle, keeps waiting.
#[test]
fn a_nested_zklock_and_a_kazoo_session_crossing_two_locks_are_a_possible_cycle() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let go = scratch.file("go");
    let mut kazoo = peer(
        &env,
        Library::Kazoo,
        "/z/b",
        "mutex",
        &["--then", "/z/a", "--then-after", go.to_str().unwrap()],
    );
    acquired(&mut kazoo, WAIT);
    let mut zklock = nested(&env, &scratch, "/z/a", "/z/b", "");
    std::fs::write(&go, b"").unwrap();
    wait_for_children(env.zk(), "/z/a", 2);
    wait_for_children(env.zk(), "/z/b", 2);

    let (code, cycles) = deadlocks(&env, &["/z"]);
    assert_eq!((code, cycles.len()), (1, 1), "{cycles:#?}");
    assert_eq!(cycles[0]["certain"], false, "{:#}", cycles[0]);
    let mut vias = vias(&cycles[0]);
    vias.sort_by_key(|via| via.to_string());
    assert_eq!(vias, [&json!("nesting"), &json!("session")]);
    assert_eq!(
        env.zk().children("/z/b").len(),
        2,
        "the nested zklock still waits"
    );
    assert!(!scratch.file("code-z-a").exists(), "and has not given up");

    zklock.signal(libc::SIGTERM);
    zklock.wait(WAIT);
    peers::release(kazoo);
    wait_for_children(env.zk(), "/z/a", 0);
}

/// `zklock ARGS -- sh -c '…'`: once holding, the command marks `ready`,
/// waits for `go`, then runs the zklock `INNER`.
fn nested_with(env: &TestEnv, scratch: &Scratch, args: &[&str], inner: &str) -> support::Running {
    let ready = scratch.file(&format!("ready{}", support::unique()));
    let script = format!(
        "touch '{ready}'; while [ ! -e '{go}' ]; do sleep 0.05; done; '{zklock}' -H '{hosts}' {inner}",
        ready = ready.display(),
        go = scratch.file("go").display(),
        zklock = env!("CARGO_BIN_EXE_zklock"),
        hosts = env.hosts(),
    );
    let mut argv: Vec<&str> = args.to_vec();
    argv.extend(["--", "sh", "-c", &script]);
    let running = env.zklock(argv).spawn();
    wait_until(WAIT, "the outer zklock holds", || ready.exists());
    running
}

#[test]
fn a_semaphore_whose_every_lease_holder_waits_is_a_knot_and_a_free_lease_is_none() {
    for (max, knot) in [("1", true), ("2", false)] {
        let env = TestEnv::new();
        let scratch = Scratch::new();
        // The lease holder waits on /m; /m's holder waits for a lease.
        let mut one = nested_with(
            &env,
            &scratch,
            &["sem", "/s", "--max-leases", max],
            "lock /m -- true",
        );
        let inner = format!("sem /s --max-leases {max} -- true");
        let mut two = nested_with(&env, &scratch, &["lock", "/m"], &inner);
        std::fs::write(scratch.file("go"), b"").unwrap();
        if knot {
            wait_for_children(env.zk(), "/m", 2);
            wait_until(WAIT, "a lease waits", || {
                let lock: Value = env.zklock(["stat", "/s", "-o", "json"]).run().json();
                lock["waiters"].as_array().is_some_and(|w| !w.is_empty())
            });
            let (code, cycles) = deadlocks(&env, &["/"]);
            assert_eq!(code, 1, "{cycles:#?}");
            assert_eq!(cycles.len(), 1);
            assert_eq!(cycles[0]["certain"], false, "a lease is no exclusive hold");
            for zklock in [&mut one, &mut two] {
                zklock.signal(libc::SIGTERM);
                zklock.wait(WAIT);
            }
        } else {
            one.wait(WAIT).assert_success();
            two.wait(WAIT).assert_success();
            assert_eq!(deadlocks(&env, &["/"]), (0, Vec::new()));
        }
    }
}

/// Every path the reads in `sent` name (a multi-read's each), as seen from
/// `chroot`; a `sync` reads nothing.
fn paths_read(sent: &[ClientMessage], chroot: &str) -> Vec<String> {
    sent.iter()
        .flat_map(|message| match message {
            ClientMessage::Request {
                op,
                path,
                multi_paths,
                ..
            } if !op::WRITES.contains(op) && *op != op::SYNC => {
                path.iter().chain(multi_paths).cloned().collect()
            }
            _ => Vec::new(),
        })
        .map(|path| path.strip_prefix(chroot).unwrap_or(&path).to_owned())
        .collect()
}

/// True when `path` is one of `trees` or below one, or the directory
/// beside one where kazoo keeps a semaphore's lock (every reading of a
/// path lists it too, as the path may be such a semaphore).
fn within(path: &str, trees: &[&str]) -> bool {
    trees.iter().any(|tree| {
        path.strip_prefix(tree)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/') || rest == "-__lock__")
    })
}

#[test]
fn a_free_lock_is_taken_without_reading_other_locks_and_a_nested_waiter_reads_only_under_its_root()
{
    let env = TestEnv::new();
    // Contended locks beside the ones taken, under both roots.
    for dir in ["/locks/other", "/app/other"] {
        env.zk().mkdir_p(dir);
        for _ in 0..2 {
            env.zk()
                .create_ephemeral_sequential(&format!("{dir}/lock-"), b"");
        }
    }
    env.zk().mkdir_p("/app/busy");
    env.zk().create_ephemeral_sequential("/app/busy/lock-", b"");
    let proxy = FaultProxy::start(env.servers());
    let through = proxy.hosts(&env);
    // Each zklock through the proxy, nested in a hold of /held or not: what
    // it asks of the server, from the proxy's count.
    let asked = |nested: bool, args: &[&str], code: i32| {
        let before = proxy.client_messages().len();
        let mut inner = vec![env!("CARGO_BIN_EXE_zklock"), "-H", &through];
        inner.extend(args);
        inner.extend(["--", "true"]);
        let run = if nested {
            env.zklock(["lock", "/held", "--"]).args(&inner).run()
        } else {
            support::Zklock::new(&inner[1..]).run()
        };
        run.assert_code(code);
        paths_read(&proxy.client_messages()[before..], env.chroot())
    };
    // Free at once: it reads its own lock, and the enclosing hold's node it
    // is nested in; no other lock.
    let free = asked(true, &["lock", "free"], 0);
    assert!(
        free.iter().all(|p| within(p, &["/locks/free", "/held"])),
        "{free:#?}"
    );
    // Nested in no hold, a waiter never looks either.
    let alone = asked(false, &["--root", "/app", "lock", "busy", "-w", "1s"], 1);
    assert!(
        alone.iter().all(|p| within(p, &["/app/busy"])),
        "{alone:#?}"
    );
    // A nested waiter looks for a cycle through its wait: among the locks
    // under its root, never beyond.
    let looked = asked(true, &["--root", "/app", "lock", "busy", "-w", "1s"], 1);
    assert!(
        looked.iter().any(|p| within(p, &["/app/other"])),
        "a nested waiter reads the locks under its root: {looked:#?}"
    );
    assert!(
        looked.iter().all(|p| within(p, &["/app", "/held"])),
        "{looked:#?}"
    );
}

#[test]
fn deadlocks_reads_a_cycles_nodes_again_after_a_sync_once_each_in_a_few_batches() {
    const LOCKS: usize = 200;
    let env = TestEnv::new();
    // One session holds and waits in every lock: one possible cycle through
    // all of them.
    let ring = env.connect();
    let mut cycle_nodes = Vec::new();
    for i in 0..LOCKS {
        let dir = format!("/ring/lock-{i:03}");
        ring.mkdir_p(&dir);
        for _ in 0..2 {
            cycle_nodes.push(ring.create_ephemeral_sequential(&format!("{dir}/lock-"), b""));
        }
    }
    // A contended lock beside it whose holder waits on nothing.
    let (holder, waiter) = (env.connect(), env.connect());
    holder.mkdir_p("/ring/free");
    holder.create_ephemeral_sequential("/ring/free/lock-", b"");
    waiter.create_ephemeral_sequential("/ring/free/lock-", b"");
    let proxy = FaultProxy::start(env.servers());
    let through = proxy.hosts(&env);

    let run = support::Zklock::new(["-H", &through, "deadlocks", "/ring", "-o", "json"]).run();
    run.assert_code(1);
    let cycles: Vec<Value> = run.json();
    assert_eq!(cycles.len(), 1, "{cycles:#?}");
    assert_eq!(cycles[0]["edges"].as_array().map(Vec::len), Some(LOCKS));

    // After the sync, the second reading: every node of the cycle once, no
    // other node, in multi-read batches of 64 sent together.
    let sent = proxy.client_messages();
    let is = |message: &ClientMessage, wanted: &[i32]| matches!(message, ClientMessage::Request { op, .. } if wanted.contains(op));
    let sync = sent.iter().rposition(|m| is(m, &[op::SYNC]));
    let after = &sent[sync.expect("deadlocks syncs before its second reading") + 1..];
    let mut reread = paths_read(after, env.chroot());
    reread.sort();
    cycle_nodes.sort();
    assert_eq!(reread, cycle_nodes, "the cycle's nodes, once each");
    let reads = [op::EXISTS, op::GET_DATA, op::MULTI_READ];
    let requests = after.iter().filter(|m| is(m, &reads)).count();
    let batches = (2 * LOCKS).div_ceil(64);
    assert!(
        (1..=batches + 2).contains(&requests),
        "{requests} read requests for {} nodes",
        2 * LOCKS
    );
}

/// Leases (and as many acquirers) in each semaphore of the summary test.
const LEASES: usize = 300;

/// Makes every path of `paths` on `zk`'s session as `mode`, with `data`,
/// all requests in flight at once.
fn create_batch(zk: &Zk, paths: impl Iterator<Item = String>, mode: zkc::CreateMode, data: &[u8]) {
    let options = &mode.with_acls(zkc::Acls::anyone_all());
    let made =
        zk.block_on(futures::future::join_all(paths.map(|path| async move {
            zk.client().create(&path, data, options).await
        })));
    assert!(made.iter().all(Result::is_ok), "every node is made");
}

/// A full semaphore of [`LEASES`] leases and as many acquirers queued on
/// its internal lock, in kazoo's layout and in Curator's, each made by a
/// session of its own, which so waits for a lease of its own: a knot each,
/// of 600 nodes and 90,000 waiter-holder pairs. `deadlocks` prints each as
/// one summary, its output and its entries linear in the nodes; `stat` of
/// either gives its waiters a chain of one hop; and a certain cycle beside
/// them is still found, certain.
#[test]
fn a_full_semaphore_is_one_summarised_knot_whose_output_grows_with_its_nodes() {
    let env = TestEnv::new();
    let (_one, _two, youngest) = crossed_zklocks(&env, false);
    let (kazoo, curator) = (env.connect(), env.connect());
    kazoo.mkdir_p("/big/kazoo-__lock__");
    kazoo.mkdir_p("/big/kazoo");
    kazoo.set("/big/kazoo", LEASES.to_string().as_bytes());
    let leases = (0..LEASES).map(|i| format!("/big/kazoo/{i:032x}"));
    create_batch(&kazoo, leases, zkc::CreateMode::Ephemeral, b"kazoo");
    let queue = (0..LEASES).map(|i| format!("/big/kazoo-__lock__/{i:032x}__lock__"));
    let sequential = zkc::CreateMode::EphemeralSequential;
    create_batch(&kazoo, queue, sequential, b"kazoo");
    for what in ["lease", "lock"] {
        let dir = format!("/big/curator/{what}s");
        curator.mkdir_p(&dir);
        let nodes = (0..LEASES).map(|_| format!("{dir}/_c_{CURATOR_UUID}-{what}-"));
        create_batch(&curator, nodes, sequential, b"10.0.0.1");
    }
    let nodes = 4 * LEASES;

    let run = env.zklock(["deadlocks", "/", "-o", "json"]).run();
    run.assert_code(1);
    assert!(
        run.stdout.len() < 50 * nodes,
        "{} bytes for {nodes} nodes",
        run.stdout.len()
    );
    let cycles: Vec<Value> = run.json();
    assert_eq!(cycles.len(), 3, "two knots and the crossing: {cycles:#?}");
    let entries: usize = cycles
        .iter()
        .map(|c| c["edges"].as_array().unwrap().len())
        .sum();
    assert!(entries <= 4, "{entries} entries");
    let crossing = cycles
        .iter()
        .find(|c| c["break_with"] == format!("zklock release {youngest}"));
    assert_eq!(crossing.expect("the crossing is found")["certain"], true);
    for (lock, holders) in [("/big/kazoo", LEASES), ("/big/curator", LEASES - 1)] {
        let knot = cycles
            .iter()
            .find(|c| c["edges"][0]["lock"] == lock)
            .unwrap_or_else(|| panic!("the knot of {lock}: {cycles:#?}"));
        assert_eq!(knot["certain"], false, "a lease is no exclusive hold");
        let [summary] = knot["edges"].as_array().unwrap().as_slice() else {
            panic!("one summary: {knot:#}");
        };
        assert_eq!(summary["via"], "semaphore", "{summary:#}");
        assert_eq!(summary["waiters"]["count"], LEASES, "{summary:#}");
        assert_eq!(summary["holders"]["count"], holders, "{summary:#}");
        let sample = summary["holders"]["sample"].as_array().unwrap();
        assert_eq!(sample.len(), 3);
        assert!(sample.iter().all(|holder| holder["via"] == "session"));
        assert!(summary["waiters"]["sample"][0]["node"].is_string());

        let stat: Value = env
            .zklock(["stat", lock, "-o", "json"])
            .run()
            .assert_success()
            .json();
        let waiters = stat["waiters"].as_array().unwrap();
        assert_eq!(waiters.len(), LEASES);
        let chain = waiters[0]["blocked_by"].as_array().unwrap();
        assert_eq!(chain.len(), 1, "{chain:#?}");
        assert_eq!(
            (&chain[0]["lock"], &chain[0]["loops"]),
            (&json!(lock), &json!(true))
        );
    }

    // The table: a line per cycle, a row per entry.
    let table = env.zklock(["deadlocks", "/"]).run();
    table.assert_code(1);
    let lines = table.stdout.lines().count();
    assert!(lines <= 12, "{lines} lines:\n{}", table.stdout);
    assert!(
        table.stdout.contains(&format!(" +{}", LEASES - 1)),
        "{}",
        table.stdout
    );
}

/// One session holding [`LEASES`] reads of a kazoo read-write lock and
/// queueing as many writes behind them waits on itself: its first writer
/// waits on every reader, printed as one summary entry, not a pair each.
#[test]
fn a_writer_behind_many_readers_of_its_own_session_is_one_summarised_wait() {
    let env = TestEnv::new();
    let rw = env.connect();
    rw.mkdir_p("/rw/lock");
    for kind in ["rlock", "lock"] {
        let nodes = (0..LEASES).map(|i| format!("/rw/lock/{i:032x}__{kind}__"));
        create_batch(&rw, nodes, zkc::CreateMode::EphemeralSequential, b"kazoo");
    }
    let (code, cycles) = deadlocks(&env, &["/rw"]);
    assert_eq!(code, 1);
    let [cycle] = cycles.as_slice() else {
        panic!("one cycle: {cycles:#?}");
    };
    assert_eq!(cycle["certain"], false, "a shared session proves nothing");
    let [summary] = cycle["edges"].as_array().unwrap().as_slice() else {
        panic!("one summary: {cycle:#}");
    };
    assert_eq!(summary["via"], "queue", "{summary:#}");
    assert_eq!(
        summary["waiters"]["count"], 1,
        "the first writer: {summary:#}"
    );
    assert_eq!(summary["holders"]["count"], LEASES, "{summary:#}");
}

/// A bash running `script`, with zklock on this test's ensemble as `"$@"`
/// and `vars` in its environment.
fn bash(env: &TestEnv, script: &str, vars: &[(&str, &str)]) -> support::Running {
    support::secured::require_tool("bash", "bash");
    let mut command = env
        .zklock(Vec::<&str>::new())
        .through(&["bash", "-c", script, "bash"]);
    command.envs(vars.iter().copied());
    support::Running::start(command, format!("bash -c {script:?}"), None)
}

/// The README's pattern: a shell holds `first` detached for as long as it
/// lives, then, once `go` exists, runs a command under `second`. The shell
/// runs under a hold of `outer`, so that its waiter is nested and looks for
/// a certain cycle through its wait (as an exit 7 would need). It prints
/// its pid, then the token.
const README_SHELL: &str = r#"exec "$@" lock "$OUTER" -- bash -c '
echo $$
tok=$("$@" lock "$FIRST" --detach --while-pid $$) || exit 99
echo "$tok"
until [ -e "$GO" ]; do sleep 0.05; done
"$@" lock "$SECOND" -- true
' bash "$@""#;

/// When the youngest contender under `dirs` was created, in ms since the
/// epoch by the server's clock.
fn youngest_ctime(zk: &Zk, dirs: &[&str]) -> i64 {
    dirs.iter()
        .flat_map(|dir| {
            zk.children_if_any(dir)
                .into_iter()
                .filter_map(move |child| zk.exists(&format!("{dir}/{child}")))
        })
        .map(|stat| stat.ctime)
        .max()
        .unwrap_or(i64::MAX)
}

fn now_ms() -> i64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    now.unwrap().as_millis() as i64
}

#[test]
fn two_shells_that_each_hold_one_lock_detached_and_wait_for_the_others_are_a_possible_cycle() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let go = scratch.file("go");
    let go = go.to_str().unwrap();
    let shell = |outer, first, second| {
        let vars = [
            ("OUTER", outer),
            ("FIRST", first),
            ("SECOND", second),
            ("GO", go),
        ];
        bash(&env, README_SHELL, &vars)
    };
    let mut one = shell("outer1", "a", "b");
    let mut two = shell("outer2", "b", "a");
    let pid_one: i32 = one.next_line(WAIT).trim().parse().unwrap();
    let token_a = one.next_line(WAIT).trim().to_owned();
    two.next_line(WAIT);
    let token_b = two.next_line(WAIT).trim().to_owned();
    std::fs::write(go, b"").unwrap();
    wait_for_children(env.zk(), "/locks/a", 2);
    wait_for_children(env.zk(), "/locks/b", 2);

    // Every waiter looks for a certain cycle at 1, 3 and 7 s: past them, a
    // cycle taken for certain would have made one of them exit 7.
    wait_until(WAIT, "the cycle has stood 8 s", || {
        assert!(
            one.is_running() && two.is_running(),
            "a waiter gave up: {:?} {:?}",
            one.stderr(),
            two.stderr()
        );
        now_ms() - youngest_ctime(env.zk(), &["/locks/a", "/locks/b"]) >= 8_000
    });
    let (code, cycles) = deadlocks(&env, &[]);
    assert_eq!((code, cycles.len()), (1, 1), "{cycles:#?}");
    let cycle = &cycles[0];
    assert_eq!(cycle["certain"], false, "{cycle:#}");
    assert_eq!(cycle["doubts"], json!(["detached"]), "{cycle:#}");
    assert_eq!(vias(cycle), [&json!("detached"), &json!("detached")]);
    for edge in cycle["edges"].as_array().unwrap() {
        assert_eq!(edge["waiter"]["command"], "true", "{edge:#}");
        assert!(edge["holder"]["owner"].as_str().unwrap().contains(" pid "));
    }
    let (code, certain) = deadlocks(&env, &["--certain"]);
    assert_eq!((code, certain.len()), (0, 0));
    assert!(one.is_running() && two.is_running(), "both keep waiting");

    // stat shows the chain, and marks the detached holder and what ends it.
    let chain = first_waiters_chain(&env, "a");
    assert_eq!(chain[0]["lock"], "/locks/b", "{chain:#?}");
    assert_eq!(chain[0]["via"], "detached");
    let stat: Value = env
        .zklock(["stat", "a", "-o", "json"])
        .run()
        .assert_success()
        .json();
    let detached = &stat["holders"][0]["owner"]["detached"];
    assert_eq!(detached["while_pid"]["pid"], pid_one, "{stat:#}");
    assert_eq!(detached["started_by"]["pid"], pid_one, "{stat:#}");
    assert_eq!(detached["lease_ms"], Value::Null);
    let table = env
        .zklock(["stat", "a"])
        .run()
        .assert_success()
        .stdout
        .clone();
    let mark = format!("ends on release, or when pid {pid_one} ends");
    assert!(table.contains(&mark), "{table}");

    let shown = env
        .zklock(["deadlocks"])
        .run()
        .assert_code(1)
        .stdout
        .clone();
    assert!(
        shown.contains("only possible: a detached holder"),
        "{shown}"
    );
    assert!(one.is_running() && two.is_running(), "both keep waiting");
    for (shell, token) in [(&mut one, &token_a), (&mut two, &token_b)] {
        shell.signal(libc::SIGTERM);
        shell.wait(WAIT);
        wait_until(WAIT, "the detached holder let go", || {
            env.zk().exists(token).is_none()
        });
    }
}

#[test]
fn a_detached_holder_outlives_the_step_that_started_it_and_is_no_one_elses_owner() {
    let env = TestEnv::new();
    // Step 1 holds a, without --while-pid, and its shell exits.
    let script = r#"tok=$("$@" lock a --detach --lease 10m) && echo "$tok""#;
    let mut step = bash(&env, script, &[]);
    let stepped = step.wait(WAIT);
    let token = stepped.assert_success().stdout.trim().to_owned();
    // Step 2 holds b for its shell's life and waits on a; step 3, a shell
    // of the same runner, waits on b.
    let mut two = bash(
        &env,
        r#"tok=$("$@" lock b --detach --while-pid $$) && "$@" lock a -- true"#,
        &[],
    );
    wait_until(WAIT, "step 2 waits on a", || {
        assert!(
            env.zk().exists(&token).is_some(),
            "the hold outlives the shell that started it"
        );
        env.zk().children_if_any("/locks/a").len() == 2
    });
    let mut three = bash(&env, r#""$@" lock b -- true; echo done"#, &[]);
    wait_for_children(env.zk(), "/locks/b", 2);
    assert!(env.zk().exists(&token).is_some());
    let (code, cycles) = deadlocks(&env, &[]);
    assert_eq!(
        (code, cycles.len()),
        (0, 0),
        "step 1's shell is gone: nothing waits as a's holder: {cycles:#?}"
    );
    let stat: Value = env
        .zklock(["stat", "a", "-o", "json"])
        .run()
        .assert_success()
        .json();
    let detached = &stat["holders"][0]["owner"]["detached"];
    assert_eq!(detached["while_pid"], Value::Null, "{stat:#}");
    assert_eq!(detached["lease_ms"], 600_000, "{stat:#}");
    assert!(detached["started_by"]["pid"].as_i64().unwrap() > 1);
    let table = env
        .zklock(["stat", "a"])
        .run()
        .assert_success()
        .stdout
        .clone();
    assert!(
        table.contains("ends on release, or 10m after its grant"),
        "{table}"
    );

    env.zklock(["release", &token]).run().assert_success();
    two.wait(WAIT).assert_success();
    three.wait(WAIT).assert_success();
}

#[test]
fn deadlocks_names_the_owners_and_why_a_cycle_is_only_possible() {
    let env = TestEnv::new();
    let (_one, _two, _) = crossed_zklocks(&env, true);
    let (_, cycles) = deadlocks(&env, &["/x"]);
    assert_eq!(cycles[0]["doubts"], json!(["deadline"]), "{cycles:#?}");
    let edge = &cycles[0]["edges"][0];
    assert_eq!(edge["holder"]["command"], "make", "{edge:#}");
    let shown = env
        .zklock(["deadlocks", "/x", "-o", "wide"])
        .run()
        .assert_code(1)
        .stdout
        .clone();
    assert!(shown.contains("WAITER SESSION"), "{shown}");
    assert!(shown.contains("ci@build7 pid 100 make"), "{shown}");
    assert!(
        shown.contains("only possible: a waiter gives up at its -w deadline"),
        "{shown}"
    );

    let env = TestEnv::new();
    let (one, two) = (env.connect(), env.connect());
    for dir in ["/s/a", "/s/b"] {
        one.mkdir_p(dir);
    }
    one.create_ephemeral_sequential("/s/a/lock-", b"");
    two.create_ephemeral_sequential("/s/b/lock-", b"");
    one.create_ephemeral_sequential("/s/b/lock-", b"");
    two.create_ephemeral_sequential("/s/a/lock-", b"");
    let (_, cycles) = deadlocks(&env, &["/s"]);
    assert_eq!(cycles[0]["doubts"], json!(["session"]), "{cycles:#?}");
    let shown = env.zklock(["deadlocks", "/s"]).run().stdout.clone();
    assert!(
        shown.contains("only possible: a session whose process zklock cannot see"),
        "{shown}"
    );

    let (code, certain) = deadlocks(&env, &["/s", "--certain"]);
    assert_eq!((code, certain.len()), (0, 0));
}

#[test]
fn deadlocks_says_so_when_there_is_no_cycle() {
    let env = TestEnv::new();
    let run = env.zklock(["deadlocks"]).run();
    run.assert_success();
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr.trim(), "zklock: no wait-for cycles under /locks");
    let (_one, _two, _) = crossed_zklocks(&env, true);
    let run = env.zklock(["deadlocks", "/x", "--certain"]).run();
    run.assert_success();
    assert!(
        run.stderr.contains("no certain wait-for cycles under /x"),
        "{run:?}"
    );
    let run = env.zklock(["deadlocks", "/x"]).run();
    run.assert_code(1);
    assert!(!run.stderr.contains("no "), "{run:?}");
}

/// A waiter's `-w` counts from its session, the connect being bounded by
/// `--connect-timeout`, and the deadline its owner record states, which
/// `deadlocks` trusts, is that same moment: after a slow connect the
/// record does not claim a give-up before the waiter even queued.
#[test]
fn a_waiter_s_recorded_deadline_is_when_it_gives_up_after_a_slow_connect() {
    let env = TestEnv::new();
    let mut holder = env.zklock(["lock", "d"]).spawn();
    holder.next_line(WAIT);
    let proxy = FaultProxy::start(env.servers());
    proxy.freeze();
    let started = std::time::Instant::now();
    let started_ms = support::fencing::now_ms() as i64;
    let mut waiter = support::Zklock::new(["lock", "-w", "2s", "d", "--", "true"])
        .hosts(proxy.hosts(&env))
        .spawn();
    // The stimulus: a handshake held back 1.5 s, within the connect timeout.
    std::thread::sleep(Duration::from_millis(1500));
    proxy.pass();
    wait_for_children(env.zk(), "/locks/d", 2);
    let waiting = env
        .zk()
        .children("/locks/d")
        .into_iter()
        // The later sequence: the names' prefixes are each process's own.
        .max_by_key(|name| name.rsplit('-').next().unwrap_or_default().to_owned())
        .expect("the waiter's node");
    let (data, _) = env.zk().get(&format!("/locks/d/{waiting}"));
    let owner: Value = serde_json::from_slice(&data).expect("an owner record");
    let deadline = owner["deadline_ms"].as_i64().expect("deadline_ms");
    // The session came 1.5 s after the start at the earliest, and the 2 s
    // count from it: a bound no slowness of zklock's can break, where a
    // count from the start would end about 1.5 s sooner.
    assert!(
        deadline >= started_ms + 3500,
        "the record gives up at {deadline}, {} ms after the waiter was started",
        deadline - started_ms
    );
    let run = waiter.wait(WAIT);
    run.assert_code(1);
    assert!(started.elapsed() >= Duration::from_millis(3400), "{run:?}");
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
}
