//! `history` of every member of a real three-member ensemble against what
//! ran: zklock, Curator and kazoo holders contend for two locks (each
//! between zklock and one library, in that library's layout) while the
//! leader is killed, the others go on, and the killed member comes back.
//! Snapshots come every few dozen transactions (`snapCount=40`), before and after
//! each leader change. While the killed member is down, more transactions
//! pass than the leader keeps for a returning member, and the leader never
//! reads its logs for one (`zookeeper.snapshotSizeFactor=-1`): so the killed
//! member is brought up to date by a snapshot the leader sends, as a member
//! that was down long is.
//!
//! Every member's data directory is then read with `--data-dir`. Whether a
//! member's own logs lack transactions it applied is decided apart from
//! zklock, from the transactions ZooKeeper's own `FileTxnLog` reads from its
//! logs (`tests/peers/LoggedZxids.java`): a snapshot whose zxid the member
//! never logged, though it logged before it, is one its leader sent. Where there is none, the history shows every
//! section the fencing log records, each inside its hold, and the same as
//! `--log` over the same files; where there is one, it says so on stderr
//! and shows every section after it, the same as the other members. No
//! member shows a contender still alive where its logs end: none was.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::{WAIT, churn, log_starts, logs, snapshots};
use crate::support;
use support::server::tools_classpath;

use support::fencing::{FenceLog, Section};
use support::json::{History, HistoryHold};
use support::peers::{Library, peer};
use support::{Running, Scratch, TestEnv, ZkEnsemble, ZkOptions, ZkServer};

/// The locks, each with the library (and zklock's dialect) whose layout it
/// has.
const LOCKS: [(&str, Library, &str); 2] = [
    ("c", Library::Curator, "curator"),
    ("k", Library::Kazoo, "kazoo"),
];

/// Sessions long enough to outlive a leader's election on a busy machine.
const SESSION_MS: &str = "30000";

/// Curator's and kazoo's peers, each holding its lock `loops` times for a
/// tenth of a second and logging each section into its lock's log.
fn peers(env: &TestEnv, logs: &[FenceLog], loops: usize) -> Vec<Running> {
    let loops = loops.to_string();
    LOCKS
        .iter()
        .zip(logs)
        .map(|((lock, library, _), log)| {
            let log = log.path().display().to_string();
            let options = [
                "--loops",
                &loops,
                "--hold-ms",
                "100",
                "--session-timeout-ms",
                SESSION_MS,
                "--log",
                &log,
            ];
            peer(env, *library, &format!("/locks/{lock}"), "mutex", &options)
        })
        .collect()
}

/// zklock holders beside the peers, `times` turns on each lock, each a
/// fenced section of a tenth of a second.
fn zklocks(env: &TestEnv, logs: &[FenceLog], round: &str, times: usize) {
    for i in 0..times {
        for ((lock, _, dialect), log) in LOCKS.iter().zip(logs) {
            let who = format!("zklock-{round}-{lock}-{i}");
            let options = [
                "lock",
                lock,
                "--dialect",
                dialect,
                "--session-timeout",
                "30s",
            ];
            env.zklock(options)
                .arg("--")
                .args(log.command(&who, "sleep 0.1"))
                .run()
                .assert_success();
        }
    }
}

/// One round: the peers and zklock contend until each has had its turns;
/// `meanwhile` runs once they have begun.
fn round(env: &TestEnv, logs: &[FenceLog], name: &str, meanwhile: impl FnOnce()) {
    let peers = peers(env, logs, 6);
    zklocks(env, logs, name, 1);
    meanwhile();
    zklocks(env, logs, name, 2);
    for mut peer in peers {
        peer.wait(WAIT * 2).assert_success();
    }
}

/// LoggedZxids, compiled once per test binary: its class directory.
fn logged_zxids_classes() -> &'static Path {
    static CLASSES: OnceLock<PathBuf> = OnceLock::new();
    CLASSES.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("logged-zxids");
        std::fs::create_dir_all(&out).expect("create the class dir");
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/LoggedZxids.java");
        let status = Command::new("javac")
            .args(["-nowarn", "-cp", &tools_classpath(None), "-d"])
            .arg(&out)
            .arg(source)
            .status()
            .expect("javac (scripts/setup installs default-jdk-headless)");
        assert!(status.success(), "javac LoggedZxids.java failed");
        out
    })
}

/// Every zxid `server` logged, as its own `FileTxnLog` reads its logs.
fn logged(server: &ZkServer) -> BTreeSet<i64> {
    let out = Command::new("java")
        .arg("-cp")
        .arg(format!(
            "{}:{}:/usr/share/java/slf4j-nop.jar",
            logged_zxids_classes().display(),
            tools_classpath(None)
        ))
        .arg("LoggedZxids")
        .arg(server.data_dir().join("version-2"))
        .output()
        .expect("run LoggedZxids");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|hex| i64::from_str_radix(hex, 16).expect("a zxid"))
        .collect()
}

/// What ZooKeeper's own reader says of a member's data directory: the
/// newest snapshot whose zxid its logs lack though they hold an earlier
/// one.
fn snapshot_sent_by_the_leader(server: &ZkServer) -> Option<i64> {
    let logged = logged(server);
    let first = *logged.first()?;
    snapshots(server)
        .into_iter()
        .map(|(zxid, _)| zxid as i64)
        .filter(|zxid| *zxid > first && !logged.contains(zxid))
        .max()
}

/// The member's history of the locks, as JSON, read from `source` (its
/// data directory, or its log files), and what it said on stderr.
fn history(env: &TestEnv, source: &[&str], files: &[PathBuf]) -> (History, String) {
    let locks = format!("{}/locks", env.chroot());
    let run = env
        .zklock(["history", &locks])
        .args(source)
        .args(files)
        .args(["-o", "json"])
        .run();
    let run = run.assert_success();
    (run.json(), run.stderr.clone())
}

/// The holds by fence.
fn by_fence(history: &History) -> HashMap<i64, &HistoryHold> {
    history
        .holds
        .iter()
        .map(|hold| (hold.fence, hold))
        .collect()
}

/// Checks member `i`'s history against the sections that ran; returns its
/// holds from after its start, by fence.
fn check_member(
    env: &TestEnv,
    ensemble: &ZkEnsemble,
    i: usize,
    sections: &[Section],
) -> (Option<i64>, History) {
    let server = ensemble.server(i);
    let sent = snapshot_sent_by_the_leader(server);
    let data_dir = server.data_dir();
    let (read, said) = history(env, &["--data-dir"], &[data_dir]);
    let what = format!("member {i} (snapshot sent by its leader: {sent:x?})");
    for hold in &read.holds {
        assert!(
            hold.how.is_some(),
            "{what}: no contender was alive when the ensemble stopped: {hold:#?}"
        );
    }
    let holds = by_fence(&read);
    let shown = sections
        .iter()
        .filter(|section| sent.is_none_or(|zxid| section.fence > zxid));
    for section in shown {
        let hold = holds
            .get(&section.fence)
            .unwrap_or_else(|| panic!("{what}: the section of {section:#?} is not in the history"));
        let within = hold
            .holding_ms
            .is_some_and(|from| from <= section.start.ms as i64)
            && hold.ended_ms.is_some_and(|to| to >= section.end.ms as i64);
        assert!(within, "{what}: {section:#?} outside its hold {hold:#?}");
        assert_eq!(hold.how.as_deref(), Some("released"), "{what}: {hold:#?}");
    }
    match sent {
        None => {
            assert!(said.is_empty(), "{what}: {said}");
            // Everything since the first transaction, as the logs alone.
            let (whole, _) = history(env, &["--log"], &logs(server));
            assert_eq!(
                read.holds, whole.holds,
                "{what}: --data-dir and --log differ"
            );
            assert!(read.holds.len() >= sections.len(), "{what}");
        }
        Some(_) => assert!(!said.is_empty(), "{what}: no word of where it starts"),
    }
    (sent, read)
}

#[test]
fn every_members_data_directory_shows_what_ran_across_a_leader_killed_and_brought_back() {
    let options = ZkOptions::default()
        .config("snapCount=40")
        .jvm_flag("-Dzookeeper.snapshotSizeFactor=-1");
    let ensemble = ZkEnsemble::start_with(3, &options);
    let env = TestEnv::with_ensemble(&ensemble);
    let scratch = Scratch::new();
    let log: Vec<FenceLog> = LOCKS
        .iter()
        .map(|(lock, _, _)| FenceLog::at(scratch.file(&format!("{lock}.log"))))
        .collect();
    round(&env, &log, "first", || {});
    let killed = ensemble.leader();
    round(&env, &log, "leader-killed", || {
        ensemble.server(killed).kill();
        ensemble.leader();
    });
    // More transactions than the leader keeps for a returning member (it
    // keeps 500 proposals at least).
    round(&env, &log, "while-down", || churn(&env, 300));
    round(&env, &log, "back", || {
        ensemble.server(killed).start();
        ensemble.leader();
    });
    round(&env, &log, "last", || {});
    for i in 0..ensemble.len() {
        ensemble.server(i).stop();
    }
    let sections: Vec<Section> = log.iter().flat_map(FenceLog::assert_exclusive).collect();
    let read: Vec<(Option<i64>, History)> = (0..ensemble.len())
        .map(|i| check_member(&env, &ensemble, i, &sections))
        .collect();
    assert!(
        read[killed].0.is_some(),
        "the killed member was brought back by its leader's snapshot: {:?}",
        log_starts(ensemble.server(killed))
    );
    assert!(
        read.iter().any(|(sent, _)| sent.is_none()),
        "the leader that never synced has every transaction in its logs"
    );
    // What two members both show from after the later one's start is the
    // same, hold for hold.
    for (a, (sent_a, history_a)) in read.iter().enumerate() {
        for (sent_b, history_b) in &read[a + 1..] {
            let from = sent_a.max(sent_b).unwrap_or(i64::MIN);
            let later = |history: &History| -> Vec<HistoryHold> {
                let mut holds: Vec<HistoryHold> = history
                    .holds
                    .iter()
                    .filter(|hold| hold.fence > from)
                    .cloned()
                    .collect();
                holds.sort_by_key(|hold| hold.fence);
                holds
            };
            assert_eq!(later(history_a), later(history_b), "member {a} and another");
        }
    }
}
