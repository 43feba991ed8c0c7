//! `zklock history` against the truth: real servers of every line from 3.5
//! to 3.9 (and Debian's 3.8) write their transaction logs while zklock,
//! Curator and kazoo contenders hold and end in every way (a release, a
//! kill -9 that lets the session expire, a client that closes its session
//! holding, a break by `zklock release`, a break with an end record); then
//! `zklock history --data-dir` on the server's data dir must report each
//! hold with its node, owner, session and how it ended, and every
//! transaction it names must be the one ZooKeeper's own `TxnLogToolkit`
//! dumps from the same files. A log cut off or damaged stops the reading
//! with an error naming the record's offset, after what was read before it.

mod ensemble;
mod semaphores;
mod shapes;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::support;

use support::json::{History, HistoryHold, HistoryOverlaps};
use support::peers::{self, Library, acquired, peer};
use support::server::tools_classpath;
use support::{Release, Running, TestEnv, ZkOptions, ZkServer, wait_until};

const WAIT: Duration = Duration::from_secs(30);

/// How one contender of the scenario ended, as the test made it end.
struct Truth {
    /// The node's path in the test's chroot.
    node: String,
    session: i64,
    how: &'static str,
    /// The session that deleted it, when not its own.
    ended_by: Option<i64>,
    /// What its data must hold: zklock's `--data`, kazoo's identifier.
    data_has: Option<&'static str>,
}

/// The session that owns the node at `path` now.
fn owner_of(env: &TestEnv, path: &str) -> i64 {
    env.zk()
        .exists(path)
        .unwrap_or_else(|| panic!("{path} is not there"))
        .ephemeral_owner
}

fn gone(env: &TestEnv, path: &str) {
    wait_until(WAIT, &format!("{path} to go"), || {
        env.zk().exists(path).is_none()
    });
}

/// A peer that holds `lock`: it, its node and its session.
fn holding(
    env: &TestEnv,
    library: Library,
    lock: &str,
    mode: &str,
    extra: &[&str],
) -> (Running, String, i64) {
    let mut peer = peer(env, library, lock, mode, extra);
    let node = acquired(&mut peer, WAIT);
    let session = owner_of(env, &node);
    (peer, node, session)
}

/// zklock holding `lock` under `sh -c SCRIPT` after printing its node and
/// session: the running zklock, the node and the session.
fn zklock_holding(
    env: &TestEnv,
    verb: &str,
    lock: &str,
    data: &str,
    script: &str,
) -> (Running, String, i64) {
    let mut holder = env
        .zklock([verb, lock, "--data", data, "--", "sh", "-c"])
        .arg(format!("echo \"$ZKLOCK_NODE $ZKLOCK_SESSION\"; {script}"))
        .spawn();
    let line = holder.next_line(WAIT);
    let (node, session) = line.split_once(' ').unwrap_or_else(|| panic!("{line:?}"));
    let session = i64::from_str_radix(session.trim_start_matches("0x"), 16).unwrap();
    (holder, node.to_owned(), session)
}

fn ends(peer: &mut Running, line: &str) {
    peer.signal(libc::SIGTERM);
    let said = peer.next_line(WAIT);
    assert!(said.starts_with(line), "expected {line}, got {said:?}");
    peer.wait(WAIT).assert_success();
}

/// Makes every kind of end happen on `/h` (a mutex) and `/rw` (a read-write
/// lock); returns what must be found.
fn scenario(env: &TestEnv) -> Vec<Truth> {
    let mut truths = Vec::new();
    let mut truth = |node: &str, session, how, ended_by, data_has| {
        truths.push(Truth {
            node: node.to_owned(),
            session,
            how,
            ended_by,
            data_has,
        })
    };
    // zklock: a clean release.
    let (mut clean, node, session) = zklock_holding(env, "lock", "/h", "clean-run", "true");
    clean.wait(WAIT).assert_success();
    truth(&node, session, "released", None, Some("clean-run"));
    // Curator: a clean release.
    let (curator, node, session) = holding(env, Library::Curator, "/h", "mutex", &[]);
    peers::release(curator);
    truth(&node, session, "released", None, None);
    // kazoo killed -9: its session expires, closed by the server.
    let (mut doomed, node, session) = holding(
        env,
        Library::Kazoo,
        "/h",
        "mutex",
        &["--identifier", "kazoo-killed"],
    );
    doomed.kill();
    gone(env, &node);
    truth(&node, session, "expired", None, Some("kazoo-killed"));
    // Curator and kazoo closing their session while holding.
    let (mut closing, node, session) =
        holding(env, Library::Curator, "/h", "mutex", &["--abandon"]);
    ends(&mut closing, "ABANDONED");
    truth(&node, session, "closed_by_client", None, None);
    let (mut closing, node, session) = holding(
        env,
        Library::Kazoo,
        "/h",
        "mutex",
        &["--abandon", "--identifier", "kazoo-closed"],
    );
    ends(&mut closing, "ABANDONED");
    truth(
        &node,
        session,
        "closed_by_client",
        None,
        Some("kazoo-closed"),
    );
    // zklock broken by `zklock release --holders`: deleted by another session.
    let (mut victim, node, session) = zklock_holding(env, "lock", "/h", "victim", "exec sleep 600");
    env.zklock(["release", "/h", "--holders", "--yes"])
        .run()
        .assert_success();
    victim.wait(WAIT).assert_code(4);
    truth(&node, session, "broken", Some(-1), Some("victim"));
    // kazoo broken with an end record written in the same multi.
    let (mut stuck, node, session) = holding(
        env,
        Library::Kazoo,
        "/h",
        "mutex",
        &["--identifier", "kazoo-stuck"],
    );
    let breaker = env.connect();
    break_with_end_record(&breaker, "/h", &node);
    truth(
        &node,
        session,
        "broken",
        Some(breaker.session_id()),
        Some("kazoo-stuck"),
    );
    stuck.kill();
    // A read-write lock: two readers of two libraries share, a zklock
    // writer waits for both.
    let (curator_reader, r1, s1) = holding(env, Library::Curator, "/rw", "read", &[]);
    let (kazoo_reader, r2, s2) = holding(
        env,
        Library::Kazoo,
        "/rw",
        "read",
        &["--identifier", "kazoo-reader"],
    );
    let mut writer = env
        .zklock(["wlock", "/rw", "--data", "writer", "--", "true"])
        .spawn();
    wait_until(WAIT, "the writer to queue", || {
        env.zk().children("/rw").len() == 3
    });
    peers::release(curator_reader);
    peers::release(kazoo_reader);
    writer.wait(WAIT).assert_success();
    truth(&r1, s1, "released", None, None);
    truth(&r2, s2, "released", None, Some("kazoo-reader"));
    truths
}

/// Deletes `node` from `lock` on `breaker`'s session in one multi with the
/// end record zklock writes into the directory.
fn break_with_end_record(breaker: &support::Zk, lock: &str, node: &str) {
    let name = node.rsplit('/').next().unwrap();
    let owner = breaker
        .exists(node)
        .expect("the node to break")
        .ephemeral_owner;
    let record = format!(
        r#"{{"zklock_end":{{"version":1,"nodes":[{{"node":"{name}","session":"0x{owner:x}"}}],"how":"broken","by":{{"user":"ops","host":"bastion","pid":4242}},"reason":"stuck deploy","ran":null}}}}"#
    );
    breaker
        .block_on(async {
            let mut multi = breaker.client().new_multi_writer();
            multi.add_set_data(lock, record.as_bytes(), None)?;
            multi.add_delete(node, None)?;
            multi.commit().await
        })
        .expect("the multi that breaks the hold");
}

/// `zklock history` of the test's chroot on `server`'s data directory.
fn history_of(env: &TestEnv, server: &ZkServer) -> History {
    env.zklock(["history", env.chroot(), "--data-dir"])
        .arg(server.data_dir())
        .args(["-o", "json"])
        .run()
        .assert_success()
        .json()
}

/// Checks every truth against the history, and returns the holds found,
/// by node path in the chroot.
fn check(env: &TestEnv, history: &History, truths: &[Truth]) -> HashMap<String, HistoryHold> {
    let by_node: HashMap<String, HistoryHold> = history
        .holds
        .iter()
        .map(|hold| {
            let lock = hold.lock.strip_prefix(env.chroot()).unwrap_or(&hold.lock);
            (format!("{lock}/{}", hold.node), hold.clone())
        })
        .collect();
    for truth in truths {
        let hold = by_node.get(&truth.node).unwrap_or_else(|| {
            panic!("{} is not in the history: {:#?}", truth.node, history.holds)
        });
        let what = format!("{}: {hold:#?}", truth.node);
        assert_eq!(hold.session, format!("0x{:x}", truth.session), "{what}");
        assert_eq!(hold.how.as_deref(), Some(truth.how), "{what}");
        assert!(hold.holding_ms.is_some(), "it held: {what}");
        assert!(hold.held_ms.is_some_and(|ms| ms >= 0), "{what}");
        match truth.ended_by {
            None => assert_eq!(hold.ended_by, None, "{what}"),
            Some(-1) => assert!(
                hold.ended_by.as_ref().is_some_and(|by| *by != hold.session),
                "another session: {what}"
            ),
            Some(session) => assert_eq!(hold.ended_by, Some(format!("0x{session:x}")), "{what}"),
        }
        if let Some(data) = truth.data_has {
            // zklock's `--data` is in its owner record; a library's data as
            // it wrote it.
            let said = match &hold.owner {
                Some(owner) => owner["data"].as_str().map(str::to_owned),
                None => hold.data.clone(),
            };
            assert!(
                said.is_some_and(|d| d.contains(data)),
                "data {data}: {what}"
            );
        }
    }
    by_node
}

/// The transactions `TxnLogToolkit` dumps from every log of `server`:
/// zxid → (session, cxid, operation, the rest of the line).
fn toolkit_dump(
    server: &ZkServer,
    release: Option<&Release>,
) -> HashMap<i64, (i64, i64, String, String)> {
    let mut txns = HashMap::new();
    for log in logs(server) {
        let out = Command::new("java")
            .args(["-cp", &tools_classpath(release)])
            .arg("org.apache.zookeeper.server.persistence.TxnLogToolkit")
            .arg(&log)
            .output()
            .expect("run TxnLogToolkit");
        let text = String::from_utf8_lossy(&out.stdout);
        for line in text.lines() {
            let Some((_, rest)) = line.split_once(" session 0x") else {
                continue;
            };
            let mut words = rest.splitn(6, ' ');
            let hex = |word: Option<&str>| {
                i64::from_str_radix(word.unwrap_or_default().trim_start_matches("0x"), 16)
                    .unwrap_or(i64::MIN)
            };
            let session =
                u64::from_str_radix(words.next().unwrap_or_default(), 16).unwrap_or(0) as i64;
            let (_, cxid, _, zxid) = (
                words.next(),
                hex(words.next()),
                words.next(),
                hex(words.next()),
            );
            let mut rest = words.next().unwrap_or_default().splitn(2, ' ');
            let op = rest.next().unwrap_or_default().to_owned();
            txns.insert(
                zxid,
                (
                    session,
                    cxid,
                    op,
                    rest.next().unwrap_or_default().to_owned(),
                ),
            );
        }
        assert!(
            !txns.is_empty() || !out.status.success(),
            "TxnLogToolkit printed nothing for {}",
            log.display()
        );
    }
    assert!(!txns.is_empty(), "TxnLogToolkit read no transaction");
    txns
}

fn logs(server: &ZkServer) -> Vec<PathBuf> {
    let dir = server.data_dir().join("version-2");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("log.")
        })
        .collect();
    logs.sort();
    logs
}

/// True when a dumped record names `path`: as text, or as 3.5's toolkit
/// prints a multi's operations, their bytes in hex.
fn mentions(rest: &str, path: &str) -> bool {
    let hex: String = path.bytes().map(|b| format!("{b:02x}")).collect();
    rest.contains(path) || rest.contains(&hex)
}

/// Every create and end the history names is the transaction the
/// toolkit shows at that zxid, by that session.
fn agrees_with_toolkit(
    env: &TestEnv,
    holds: &HashMap<String, HistoryHold>,
    dump: &HashMap<i64, (i64, i64, String, String)>,
) {
    for (node, hold) in holds {
        let session = i64::from_str_radix(hold.session.trim_start_matches("0x"), 16).unwrap();
        let (by, _, op, rest) = dump.get(&hold.fence).unwrap_or_else(|| {
            panic!(
                "no transaction 0x{:x} (the create of {node}) in the dump",
                hold.fence
            )
        });
        assert!(
            op.starts_with("create"),
            "{node}: zxid 0x{:x} is {op} {rest}",
            hold.fence
        );
        assert!(
            rest.starts_with(&format!("{}{node},", env.chroot())),
            "{node}: {rest}"
        );
        assert_eq!(*by, session, "{node}: its create's session");
        let Some(zxid) = hold.ended_zxid else {
            continue;
        };
        let (by, cxid, op, rest) = dump
            .get(&zxid)
            .unwrap_or_else(|| panic!("no transaction 0x{zxid:x} (the end of {node})"));
        match hold.how.as_deref() {
            Some("expired") => assert_eq!(
                (op.as_str(), *by, *cxid),
                ("closeSession", session, 0),
                "{node}"
            ),
            Some("closed_by_client") => {
                assert_eq!((op.as_str(), *by), ("closeSession", session), "{node}");
                assert_ne!(*cxid, 0, "{node}: a client's close has a request number");
            }
            Some(how) => {
                assert!(op == "delete" || op == "multi", "{node} {how}: {op} {rest}");
                assert!(
                    mentions(rest, &format!("{}{node}", env.chroot())),
                    "{node}: {rest}"
                );
                let deleter = hold.ended_by.as_ref().map_or(session, |by| {
                    i64::from_str_radix(by.trim_start_matches("0x"), 16).unwrap()
                });
                assert_eq!(*by, deleter, "{node} {how}: the deleting session");
            }
            None => {}
        }
    }
}

/// The whole check on one server: the scenario, the history, the toolkit.
fn against(release: Option<Release>) {
    let options = match &release {
        Some(release) => ZkOptions::default().release(release),
        None => ZkOptions::default(),
    };
    let server = ZkServer::with_options(&options);
    let env = TestEnv::with_server(&server);
    let truths = scenario(&env);
    let history = history_of(&env, &server);
    let holds = check(&env, &history, &truths);
    // The writer held only once both readers had gone.
    let writer = history
        .holds
        .iter()
        .find(|h| h.mode == "exclusive" && h.lock.ends_with("/rw"))
        .expect("the writer");
    let readers_gone = history
        .holds
        .iter()
        .filter(|h| h.mode == "shared")
        .filter_map(|h| h.ended_ms)
        .max()
        .unwrap();
    assert_eq!(writer.holding_ms, Some(readers_gone), "{writer:#?}");
    let shared = history
        .holds
        .iter()
        .filter(|h| h.mode == "shared" && h.holding_ms.is_some())
        .count();
    assert_eq!(shared, 2, "both readers held");
    let recorded = history
        .holds
        .iter()
        .find(|h| h.reason.is_some())
        .expect("the hold broken with an end record");
    assert_eq!(recorded.reason.as_deref(), Some("stuck deploy"));
    let breaker = recorded.breaker.as_ref().expect("its breaker");
    assert_eq!(
        (breaker.user.as_str(), breaker.host.as_str(), breaker.pid),
        ("ops", "bastion", 4242)
    );
    assert_eq!(recorded.data.as_deref(), Some("kazoo-stuck"));
    let mutex = history
        .locks
        .iter()
        .find(|l| l.lock.ends_with("/h"))
        .expect("the summary of /h");
    assert_eq!((mutex.holds, mutex.unclean), (7, 5), "{mutex:#?}");
    agrees_with_toolkit(&env, &holds, &toolkit_dump(&server, release.as_ref()));
}

#[test]
fn every_end_on_debians_server_as_the_toolkit_reads_it() {
    against(None);
}

#[test]
fn every_end_on_3_5_as_the_toolkit_reads_it() {
    against(Some(Release::of("3.5")));
}

#[test]
fn every_end_on_3_6_as_the_toolkit_reads_it() {
    against(Some(Release::of("3.6")));
}

#[test]
fn every_end_on_3_7_as_the_toolkit_reads_it() {
    against(Some(Release::of("3.7")));
}

#[test]
fn every_end_on_3_8_as_the_toolkit_reads_it() {
    against(Some(Release::of("3.8")));
}

#[test]
fn every_end_on_3_9_as_the_toolkit_reads_it() {
    against(Some(Release::of("3.9")));
}

/// A kazoo mutex and a Curator mutex on one directory, on a real server:
/// kazoo skips Curator's node, and Curator sorts kazoo's (by its whole
/// name) after its own, so both hold at once. `--overlaps` reports that
/// span with both holders, from the create that began it to the delete
/// that ended it, and the holds show each holding by its own rules.
#[test]
fn two_libraries_sharing_a_directory_hold_at_once_and_overlaps_show_it() {
    let server = ZkServer::new();
    let env = TestEnv::with_server(&server);
    let (kazoo, kazoo_node, kazoo_session) = holding(
        &env,
        Library::Kazoo,
        "/mix",
        "mutex",
        &["--identifier", "kazoo-first"],
    );
    let (curator, curator_node, curator_session) =
        holding(&env, Library::Curator, "/mix", "mutex", &[]);
    peers::release(curator);
    peers::release(kazoo);
    // A lock of one library alone never overlaps.
    zklock_holding(&env, "lock", "/alone", "alone", "true")
        .0
        .wait(WAIT)
        .assert_success();
    let read = |extra: &[&str]| {
        let run = env
            .zklock(["history", env.chroot(), "--data-dir"])
            .arg(server.data_dir())
            .args(extra)
            .args(["-o", "json"])
            .run();
        run.assert_success();
        run
    };
    let history: History = read(&[]).json();
    let hold = |node: &str| {
        history
            .holds
            .iter()
            .find(|h| node.ends_with(&format!("/{}", h.node)))
            .unwrap_or_else(|| panic!("{node} in {:#?}", history.holds))
    };
    let (kazoo_hold, curator_hold) = (hold(&kazoo_node), hold(&curator_node));
    assert_eq!(curator_hold.holding_ms, Some(curator_hold.created_ms));
    assert_eq!(curator_hold.how.as_deref(), Some("released"));
    assert!(kazoo_hold.holding_ms.is_some());

    let found: HistoryOverlaps = read(&["--overlaps"]).json();
    assert_eq!(found.overlaps.len(), 1, "{:#?}", found.overlaps);
    let overlap = &found.overlaps[0];
    assert_eq!(overlap.lock, format!("{}/mix", env.chroot()));
    assert_eq!(overlap.from_zxid, curator_hold.fence);
    assert_eq!(overlap.until_zxid, curator_hold.ended_zxid);
    assert_eq!(
        (overlap.from_ms, overlap.until_ms),
        (curator_hold.created_ms, curator_hold.ended_ms)
    );
    let holders: Vec<(&str, &str, String)> = overlap
        .holders
        .iter()
        .map(|h| (h.dialect.as_str(), h.mode.as_str(), h.session.clone()))
        .collect();
    assert_eq!(
        holders,
        [
            ("kazoo", "exclusive", format!("0x{kazoo_session:x}")),
            ("curator", "exclusive", format!("0x{curator_session:x}")),
        ]
    );
    assert_eq!(overlap.holders[0].fence, kazoo_hold.fence);

    let table = env
        .zklock(["history", env.chroot(), "--overlaps", "--data-dir"])
        .arg(server.data_dir())
        .args(["-o", "wide"])
        .run();
    table.assert_success();
    for node in [&kazoo_node, &curator_node] {
        let name = node.rsplit('/').next().unwrap();
        assert!(table.stdout.contains(name), "{}", table.stdout);
    }
    assert!(!table.stdout.contains("/alone"), "{}", table.stdout);
}

/// go-zookeeper's lock (its `_c_<hex32>-lock-N` nodes, from the real
/// library) and HBase 1.x's table locks (`write-N`/`read-N` with their
/// protobuf data, made as HBase makes them) are replayed by their own
/// rules: a go-zookeeper release and expiry, an HBase reader that holds only
/// once the writer ahead of it goes, then closes its session.
#[test]
fn go_zookeeper_and_hbase_holds_are_read_from_the_log() {
    let server = ZkServer::new();
    let env = TestEnv::with_server(&server);
    let (released, released_node, _) = holding(&env, Library::GoZookeeper, "/go", "mutex", &[]);
    peers::release(released);
    let (mut killed, killed_node, _) = holding(&env, Library::GoZookeeper, "/go", "mutex", &[]);
    killed.kill();
    gone(&env, &killed_node);

    let writer = env.connect();
    writer.mkdir_p("/hb");
    let write = writer.create_ephemeral_sequential(
        "/hb/write-",
        &support::hbase::table_lock("default", "orders", false, "alter"),
    );
    let reader = env.connect();
    let read = reader.create_ephemeral_sequential(
        "/hb/read-",
        &support::hbase::table_lock("default", "orders", true, "scan"),
    );
    writer.delete(&write);
    reader.close();
    gone(&env, &read);

    let run = env
        .zklock(["history", env.chroot(), "--data-dir"])
        .arg(server.data_dir())
        .args(["-o", "json"])
        .run();
    run.assert_success();
    let history: History = run.json();
    let hold = |node: &str| {
        history
            .holds
            .iter()
            .find(|h| node.ends_with(&format!("/{}", h.node)))
            .unwrap_or_else(|| panic!("{node} in {:#?}", history.holds))
    };
    let seen = |node: &str| {
        let h = hold(node);
        (h.mode.as_str(), h.how.as_deref(), h.holding_ms.is_some())
    };
    assert_eq!(seen(&released_node), ("exclusive", Some("released"), true));
    assert_eq!(seen(&killed_node), ("exclusive", Some("expired"), true));
    assert_eq!(hold(&write).dialect, "hbase");
    assert_eq!(seen(&write), ("exclusive", Some("released"), true));
    assert_eq!(seen(&read), ("shared", Some("closed_by_client"), true));
    assert_eq!(hold(&read).holding_ms, hold(&write).ended_ms);
}

/// The end of the written part of a log: its last record's end mark, the
/// last byte before the preallocated zeros.
fn written_end(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .rposition(|&b| b != 0)
        .expect("a log with records")
        + 1
}

/// The offset of each record of a log, from its framing.
fn record_offsets(bytes: &[u8]) -> Vec<usize> {
    let mut offsets = Vec::new();
    let mut at = 16;
    while at + 12 <= bytes.len() {
        let len = i32::from_be_bytes(bytes[at + 8..at + 12].try_into().unwrap());
        if len <= 0 {
            break;
        }
        offsets.push(at);
        at += 13 + len as usize;
    }
    offsets
}

/// A log cut off in its last record, and one with a byte changed in a
/// record: each stops the reading with an error naming the record's
/// offset (exit 10, cause damaged_log), after the holds read before it.
#[test]
fn a_cut_off_or_damaged_log_names_the_record_after_what_came_before() {
    let server = ZkServer::new();
    let env = TestEnv::with_server(&server);
    for data in ["first", "second", "third"] {
        zklock_holding(&env, "lock", "/h", data, "true")
            .0
            .wait(WAIT)
            .assert_success();
    }
    let log = logs(&server).pop().unwrap();
    let bytes = std::fs::read(&log).unwrap();
    let scratch = support::Scratch::new();
    let history = |bytes: &[u8]| {
        let copy = scratch.file(&format!("log.{}", support::unique()));
        std::fs::write(&copy, bytes).unwrap();
        let run = env
            .zklock(["history", env.chroot(), "--log"])
            .arg(&copy)
            .args(["-o", "json"])
            .run();
        (run, copy)
    };
    let (whole, _) = history(&bytes);
    let whole: History = whole.assert_success().json();
    assert_eq!(whole.holds.len(), 3);

    let end = written_end(&bytes);
    let offsets = record_offsets(&bytes);
    let last = *offsets.last().unwrap();
    let (run, copy) = history(&bytes[..end - 3]);
    run.assert_code(10);
    let error: serde_json::Value = serde_json::from_str(run.stderr.trim()).expect("a JSON error");
    assert_eq!(error["cause"], "damaged_log", "{error}");
    let message = error["error"].as_str().unwrap();
    assert!(
        message.contains(&copy.display().to_string())
            && message.contains(&format!("offset {last}"))
            && message.contains("cut off"),
        "{message}"
    );
    let read: History = run.json();
    let released = read
        .holds
        .iter()
        .filter(|h| h.how.as_deref() == Some("released"))
        .count();
    assert!(
        released >= 2,
        "the holds before the cut are shown: {:#?}",
        read.holds
    );

    // A byte changed inside the record that creates the second hold.
    let second = whole.holds[1].fence;
    let mut damaged = bytes.clone();
    let at = *offsets
        .iter()
        .find(|&&at| {
            i64::from_be_bytes(bytes[at + 12 + 12..at + 12 + 20].try_into().unwrap()) == second
        })
        .expect("the second create's record");
    damaged[at + 40] ^= 0x20;
    let (run, _) = history(&damaged);
    run.assert_code(10);
    let error: serde_json::Value = serde_json::from_str(run.stderr.trim()).unwrap();
    let message = error["error"].as_str().unwrap();
    assert!(
        message.contains(&format!("offset {at}")) && message.contains("checksum"),
        "{message}"
    );
    let read: History = run.json();
    assert_eq!(
        read.holds.len(),
        1,
        "the first hold only: {:#?}",
        read.holds
    );
    assert_eq!(read.holds[0].how.as_deref(), Some("released"));
}

/// The table fits 80 columns, keeps identifiers whole, and escapes what a
/// node's data says.
#[test]
fn the_table_keeps_identifiers_whole_and_escapes_data() {
    let server = ZkServer::new();
    let env = TestEnv::with_server(&server);
    let (mut holder, node, session) =
        zklock_holding(&env, "lock", "/h", "\u{1b}]0;owned\u{7}", "true");
    holder.wait(WAIT).assert_success();
    let run = env
        .zklock(["history", env.chroot(), "--data-dir"])
        .arg(server.data_dir())
        .run();
    run.assert_success();
    assert!(!run.stdout.contains('\u{1b}'), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!("0x{session:x}")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!("{}/h", env.chroot())),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("released"), "{}", run.stdout);
    for line in run.stdout.lines() {
        assert!(line.chars().count() <= 80, "wider than 80: {line:?}");
    }
    // The wide table cuts and wraps nothing: the node and the whole account
    // of how the hold ended stand on one line.
    let wide = env
        .zklock(["history", env.chroot(), "--data-dir"])
        .arg(server.data_dir())
        .args(["-o", "wide"])
        .run();
    let name = node.rsplit('/').next().unwrap();
    assert!(
        wide.stdout
            .lines()
            .any(|line| line.contains(name) && line.contains("released by its own session")),
        "{}",
        wide.stdout
    );
}

/// The snapshots in `server`'s data directory: zxid and file, oldest first.
fn snapshots(server: &ZkServer) -> Vec<(u64, PathBuf)> {
    let dir = server.data_dir().join("version-2");
    let mut found: Vec<(u64, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| {
            let path = entry.unwrap().path();
            let name = path
                .file_name()?
                .to_str()?
                .strip_prefix("snapshot.")?
                .to_owned();
            let hex = name.split('.').next()?;
            Some((u64::from_str_radix(hex, 16).ok()?, path))
        })
        .collect();
    found.sort();
    found
}

/// The zxid each log of `server` starts at, with the log, oldest first.
fn log_starts(server: &ZkServer) -> Vec<(u64, PathBuf)> {
    let mut starts: Vec<(u64, PathBuf)> = logs(server)
        .into_iter()
        .map(|log| {
            let hex = log.extension().and_then(|hex| hex.to_str()).unwrap();
            (u64::from_str_radix(hex, 16).unwrap(), log)
        })
        .collect();
    starts.sort();
    starts
}

/// `count` creates and deletes below the chroot: transactions enough for
/// a server with a small `snapCount` to roll its log and snapshot.
fn churn(env: &TestEnv, count: usize) {
    for i in 0..count {
        let path = format!("/churn-{i}");
        env.zk().create(&path, b"");
        env.zk().delete(&path);
    }
}

/// A server of `release` (Debian's when `None`) that snapshots every few
/// transactions, compressed with `method` when given.
fn snapshotting(release: Option<&Release>, method: Option<&str>) -> ZkServer {
    let mut options = ZkOptions::default().config("snapCount=10");
    if let Some(release) = release {
        options = options.release(release);
    }
    if let Some(method) = method {
        options = options.jvm_flag(format!("-Dzookeeper.snapshot.compression.method={method}"));
        if method == "snappy" && release.is_none() {
            // Debian's server does not put xerial's snappy on its classpath
            // (libsnappy-java installs it).
            options = options.jar("/usr/share/java/snappy-java.jar");
        }
    }
    ZkServer::with_options(&options)
}

/// A hold that began before a snapshot is read from it, with the logs
/// before the snapshot gone (as a server that purged them): its node,
/// session and fence as the server has them, holding from its ctime, and
/// its release from the log after the snapshot. `--since` after the
/// snapshot picks it; the snapshot's suffix is `method`'s. Returns the
/// server, the snapshot and `--since`.
fn from_snapshot(release: Option<Release>, method: Option<&str>) -> (ZkServer, PathBuf, String) {
    from_snapshot_held(release, method, (Library::Kazoo, "mutex"))
}

/// [`from_snapshot`] of a hold `library` takes in `mode` (a semaphore's
/// lease, its node in the snapshot with nothing in the logs left to say
/// it is one but its place and name).
fn from_snapshot_held(
    release: Option<Release>,
    method: Option<&str>,
    (library, mode): (Library, &str),
) -> (ZkServer, PathBuf, String) {
    let server = snapshotting(release.as_ref(), method);
    let env = TestEnv::with_server(&server);
    let (holder, node, session) = holding(&env, library, "/s", mode, &[]);
    let stat = env.zk().exists(&node).expect("the held node");
    wait_until(WAIT, "a snapshot taken after the hold began", || {
        churn(&env, 5);
        snapshots(&server)
            .iter()
            .any(|(zxid, _)| *zxid as i64 > stat.czxid)
    });
    // Logs after the snapshot, begun by these transactions.
    churn(&env, 15);
    let since = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
    let started = log_starts(&server);
    // The newest snapshot after the hold began that a log begun before
    // `since` follows: zklock's pick.
    let (snapshot_zxid, snapshot) = snapshots(&server)
        .into_iter()
        .rfind(|(zxid, _)| {
            *zxid as i64 > stat.czxid && started.iter().any(|(start, _)| start > zxid)
        })
        .expect("a snapshot after the hold, followed by a log");
    let suffix = method.map(|m| format!(".{m}")).unwrap_or_default();
    assert!(
        snapshot
            .to_string_lossy()
            .ends_with(&format!("{snapshot_zxid:x}{suffix}")),
        "{}",
        snapshot.display()
    );
    peers::release(holder);
    churn(&env, 2);
    // The logs the snapshot holds go, as after a purge.
    let started = log_starts(&server);
    let keep_from = started
        .iter()
        .rposition(|(start, _)| *start <= snapshot_zxid + 1)
        .expect("the log with the transaction after the snapshot");
    for (_, log) in &started[..keep_from] {
        std::fs::remove_file(log).unwrap();
    }
    let history: History = env
        .zklock(["history", env.chroot(), "--data-dir"])
        .arg(server.data_dir())
        .args(["--since", &since, "-o", "json"])
        .run()
        .assert_success()
        .json();
    let name = node.rsplit('/').next().unwrap();
    let hold = history
        .holds
        .iter()
        .find(|hold| hold.node == name)
        .unwrap_or_else(|| panic!("{name} in {history:#?}"));
    assert_eq!(hold.session, format!("0x{session:x}"), "{hold:#?}");
    assert_eq!(hold.fence, stat.czxid, "{hold:#?}");
    assert_eq!(hold.created_ms, stat.ctime, "{hold:#?}");
    assert_eq!(hold.holding_ms, Some(stat.ctime), "{hold:#?}");
    assert_eq!(hold.how.as_deref(), Some("released"), "{hold:#?}");
    assert!(hold.ended_zxid.unwrap() > snapshot_zxid as i64, "{hold:#?}");
    drop(env);
    (server, snapshot, since)
}

/// On Debian's server, plain and with snappy: a snapshot cut off, or with
/// a byte changed, stops `history` before it
/// shows anything: exit 10, cause damaged_snapshot, the error naming the
/// file and an offset.
fn damaged_snapshot(method: Option<&str>) {
    let (server, snapshot, since) = from_snapshot(None, method);
    let env = TestEnv::with_server(&server);
    let bytes = std::fs::read(&snapshot).unwrap();
    let half = bytes.len() / 2;
    let mut flipped = bytes.clone();
    flipped[half] ^= 0x10;
    for damaged in [bytes[..half].to_vec(), flipped] {
        std::fs::write(&snapshot, &damaged).unwrap();
        let run = env
            .zklock(["history", env.chroot(), "--data-dir"])
            .arg(server.data_dir())
            .args(["--since", &since, "-o", "json"])
            .run();
        run.assert_code(10);
        let error: serde_json::Value =
            serde_json::from_str(run.stderr.trim()).expect("a JSON error");
        assert_eq!(error["cause"], "damaged_snapshot", "{error}");
        let message = error["error"].as_str().unwrap();
        assert!(
            message.contains(&snapshot.display().to_string()) && message.contains("offset"),
            "{message}"
        );
        let read: History = run.json();
        assert!(read.holds.is_empty(), "{:#?}", read.holds);
    }
}

#[test]
fn a_cut_off_or_changed_snapshot_names_the_file_and_offset() {
    damaged_snapshot(None);
}

#[test]
fn a_cut_off_or_changed_snappy_snapshot_names_the_file_and_offset() {
    damaged_snapshot(Some("snappy"));
}

#[test]
fn a_kazoo_lease_taken_before_a_snapshot_on_3_8() {
    from_snapshot_held(
        Some(Release::of("3.8")),
        None,
        (Library::Kazoo, "semaphore"),
    );
}

#[test]
fn a_curator_lease_taken_before_a_gzip_snapshot_on_3_9() {
    from_snapshot_held(
        Some(Release::of("3.9")),
        Some("gz"),
        (Library::Curator, "semaphore"),
    );
}

#[test]
fn a_hold_begun_before_a_snapshot_on_3_5() {
    from_snapshot(Some(Release::of("3.5")), None);
}

#[test]
fn a_hold_begun_before_a_gzip_snapshot_on_3_6() {
    from_snapshot(Some(Release::of("3.6")), Some("gz"));
}

#[test]
fn a_hold_begun_before_a_snappy_snapshot_on_3_7() {
    from_snapshot(Some(Release::of("3.7")), Some("snappy"));
}

#[test]
fn a_hold_begun_before_a_snapshot_on_3_8() {
    from_snapshot(Some(Release::of("3.8")), None);
}

#[test]
fn a_hold_begun_before_a_snappy_snapshot_on_3_9() {
    from_snapshot(Some(Release::of("3.9")), Some("snappy"));
}

#[test]
fn a_hold_begun_before_a_gzip_snapshot_on_3_9() {
    from_snapshot(Some(Release::of("3.9")), Some("gz"));
}

/// A log of about `bytes`, written by ZooKeeper's own FileTxnLog (the
/// benchmark's writer, bench/WriteTxnLog.java), in a data dir of `scratch`.
fn written_log(scratch: &support::Scratch, bytes: u64) -> PathBuf {
    write_txn_log(scratch, &[&bytes.to_string()])
}

/// A data dir of `scratch` written by bench/WriteTxnLog.java with `args`
/// after the dir: a log of so many bytes, or one of its shapes.
fn write_txn_log(scratch: &support::Scratch, args: &[&str]) -> PathBuf {
    let classpath = "/usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:\
                     /usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-nop.jar";
    let classes = scratch.file("classes");
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/WriteTxnLog.java");
    let built = Command::new("javac")
        .args(["-nowarn", "-cp", classpath, "-d"])
        .arg(&classes)
        .arg(source)
        .status()
        .expect("javac (scripts/setup installs default-jdk-headless)");
    assert!(built.success());
    let data = scratch.file("data");
    let wrote = Command::new("java")
        .arg("-cp")
        .arg(format!("{}:{classpath}", classes.display()))
        .arg("WriteTxnLog")
        .arg(&data)
        .args(args)
        .status()
        .expect("java (scripts/setup installs default-jdk-headless)");
    assert!(wrote.success());
    data
}

/// A transaction log that zklock reads through a FIFO: the test says when
/// each part of it is there, and when it ends, so what zklock shows while
/// it reads is looked at while it still reads, however fast it reads.
struct HeldLog {
    path: PathBuf,
    writer: Option<std::fs::File>,
}

impl HeldLog {
    /// A FIFO at `path`, named as a log is.
    fn new(path: PathBuf) -> HeldLog {
        let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `name` is a NUL-terminated path that outlives the call.
        let made = unsafe { libc::mkfifo(name.as_ptr(), 0o600) };
        assert_eq!(made, 0, "mkfifo {}", path.display());
        HeldLog { path, writer: None }
    }

    /// Waits until zklock opens the log to read it.
    fn opened(&mut self) {
        use std::os::unix::fs::OpenOptionsExt;
        let writer = support::wait_for(WAIT, "zklock opens the held log", || {
            // Without a reader, a FIFO refuses a writer that will not wait.
            std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&self.path)
                .ok()
        });
        self.writer = Some(writer);
    }

    /// Writes `bytes` as zklock reads them.
    fn feed(&mut self, bytes: &[u8]) {
        use std::io::Write;
        let writer = self.writer.as_mut().expect("opened");
        let mut rest = bytes;
        wait_until(WAIT, "zklock reads what the held log is fed", || {
            while !rest.is_empty() {
                match writer.write(rest) {
                    Ok(written) => rest = &rest[written..],
                    Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(err) => panic!("feeding {}: {err}", self.path.display()),
                }
            }
            rest.is_empty()
        });
    }

    /// Ends the log: zklock reads on past it.
    fn end(&mut self) {
        self.writer = None;
    }
}

/// How often zklock moves a log's progress bar, in bytes read.
const PROGRESS_STEP: usize = 1 << 20;

/// True when `screen` shows the progress bar of a read.
fn shows_bar(screen: &str) -> bool {
    screen.lines().any(|row| {
        row.starts_with(['\u{2588}', '\u{2591}']) && row.contains("reading the transaction logs")
    })
}

/// On a terminal a long read shows a progress bar of the bytes read, and
/// clears it; with stderr on a pipe nothing of it is drawn. A real log is
/// cut in two at a record: zklock reads its first part through a FIFO
/// (the bar's total is the second part, a plain file), fed a step of the
/// bar at a time until the bar shows and then held, its last step not
/// given, while the screen is read. A zklock on a pipe is held the same
/// way from before the one on the terminal starts until after its bar
/// showed, then fed whole: it had every chance to draw.
#[test]
fn a_long_read_shows_a_progress_bar_on_a_terminal_only() {
    use support::tmux::{Tmux, command_line};
    let scratch = support::Scratch::new();
    let data = written_log(&scratch, 8_000_000);
    let bytes = std::fs::read(data.join("version-2").join("log.1")).unwrap();
    let end = written_end(&bytes);
    let split = record_offsets(&bytes)
        .into_iter()
        .find(|&at| at >= 6 * PROGRESS_STEP + PROGRESS_STEP / 2)
        .expect("a log of over 6.5 MiB");
    let header = &bytes[..16];
    let first = [header, &bytes[16..split]].concat();
    let second = scratch.file("log.2");
    std::fs::write(&second, [header, &bytes[split..end]].concat()).unwrap();
    let env = TestEnv::new();
    let held = |name: &str| {
        std::fs::create_dir(scratch.file(name)).unwrap();
        let log = HeldLog::new(scratch.file(name).join("log.1"));
        let history = env
            .zklock(["history", "/locks/lock-1", "--log"])
            .arg(&log.path)
            .arg(&second);
        (log, history)
    };

    let (mut piped_log, piped) = held("piped");
    let mut piped = piped.spawn();
    piped_log.opened();

    let (mut log, history) = held("terminal");
    let tmux = Tmux::start(100, 30);
    tmux.send(&[
        &format!("{} >/dev/null; echo done\"\"-1", command_line(&history)),
        "Enter",
    ]);
    log.opened();
    // Nothing is drawn in zklock's first 300 ms: a step read in them shows
    // nothing, and the next one is fed. Five steps or more, each looked
    // for over 150 ms, take zklock past them; the last step is held back.
    let mut fed = 0;
    while fed + 2 * PROGRESS_STEP <= first.len() {
        log.feed(&first[fed..fed + PROGRESS_STEP]);
        fed += PROGRESS_STEP;
        if tmux.shows_within(Duration::from_millis(150), shows_bar) {
            break;
        }
    }
    tmux.screen_until(WAIT, "the progress bar, the read held", shows_bar);
    log.feed(&first[fed..]);
    log.end();
    let screen = tmux.screen_until(WAIT, "the end of the read", |screen| {
        screen.contains("done-1")
    });
    assert!(
        !screen.contains(['\u{2588}', '\u{2591}']),
        "the bar was left behind:\n{screen}"
    );

    piped_log.feed(&first);
    piped_log.end();
    let run = piped.wait(WAIT);
    run.assert_success();
    assert!(
        !run.stderr.contains(['\u{2588}', '\u{2591}']) && !run.stderr.contains('\r'),
        "a bar was drawn on a pipe: {:?}",
        run.stderr
    );
}
