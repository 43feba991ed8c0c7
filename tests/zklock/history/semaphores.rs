//! Semaphores in the history, against real clients: Curator's
//! `InterProcessSemaphoreV2`, kazoo's `Semaphore` and zklock's `sem` in
//! both layouts take, wait for, give up and lose leases on a real server;
//! the log read back must show each lease as a hold of its semaphore (when
//! it was asked for, when it began to hold, how it ended), no overlap among
//! leases within the maximum, and zklock's several-lock holds as one set.

use super::{WAIT, gone, history_of, holding};
use crate::support;

use support::json::{History, HistoryHold, HistoryOverlaps};
use support::peers::{self, Library, acquired, peer, times_out};
use support::{TestEnv, ZkServer, wait_until};

/// The leases of the semaphore `name` in the history, in the order
/// handed out.
fn leases<'h>(env: &TestEnv, history: &'h History, name: &str) -> Vec<&'h HistoryHold> {
    let lock = format!("{}{name}", env.chroot());
    history
        .holds
        .iter()
        .filter(|h| h.lock == lock && h.mode == "lease")
        .collect()
}

/// The lease whose node path (in the chroot) is `node`.
fn lease<'h>(history: &'h History, node: &str) -> &'h HistoryHold {
    history
        .holds
        .iter()
        .find(|h| h.mode == "lease" && node.ends_with(&format!("/{}", h.node)))
        .unwrap_or_else(|| panic!("{node} in {:#?}", history.holds))
}

fn session_of(env: &TestEnv, node: &str) -> String {
    let owner = env
        .zk()
        .exists(node)
        .unwrap_or_else(|| panic!("{node} is not there"))
        .ephemeral_owner;
    format!("0x{owner:x}")
}

#[test]
fn curator_and_kazoo_leases_are_holds_of_their_semaphore() {
    let server = ZkServer::new();
    let env = TestEnv::with_server(&server);
    let two = ["--max-leases", "2"];
    // Curator, two leases: two hold; a third makes its lease, waits for
    // room holding the internal lock and gives up; a fourth waits the same
    // way and holds once a lease goes; one holder's session expires (kill
    // -9).
    let (first, first_node, _) = holding(&env, Library::Curator, "/cs", "semaphore", &two);
    let (mut doomed, doomed_node, _) = holding(&env, Library::Curator, "/cs", "semaphore", &two);
    let doomed_session = session_of(&env, &doomed_node);
    let waiting = || {
        wait_until(WAIT, "a third lease to wait for room", || {
            env.zk().children_if_any("/cs/leases").len() == 3
        })
    };
    let mut quitter = peer(
        &env,
        Library::Curator,
        "/cs",
        "semaphore",
        &["--max-leases", "2", "--timeout-ms", "1500"],
    );
    waiting();
    times_out(&mut quitter, WAIT);
    let mut third = peer(&env, Library::Curator, "/cs", "semaphore", &two);
    waiting();
    peers::release(first);
    let third_node = acquired(&mut third, WAIT);
    doomed.kill();
    gone(&env, &doomed_node);
    peers::release(third);
    // kazoo, one lease: the second acquirer waits on the internal lock
    // and holds once the first lets go, then closes its session holding.
    let one = ["--max-leases", "1"];
    let (k1, k1_node, _) = holding(&env, Library::Kazoo, "/ks", "semaphore", &one);
    let mut k2 = peer(
        &env,
        Library::Kazoo,
        "/ks",
        "semaphore",
        &["--max-leases", "1", "--abandon", "--identifier", "kazoo-k2"],
    );
    wait_until(WAIT, "the second kazoo acquirer to queue", || {
        !env.zk().children_if_any("/ks-__lock__").is_empty()
    });
    peers::release(k1);
    let k2_node = acquired(&mut k2, WAIT);
    let k2_session = session_of(&env, &k2_node);
    k2.signal(libc::SIGTERM);
    k2.wait(WAIT).assert_success();
    gone(&env, &k2_node);

    let history = history_of(&env, &server);
    let curator = leases(&env, &history, "/cs");
    assert_eq!(curator.len(), 4, "{curator:#?}");
    let hows: Vec<Option<&str>> = curator.iter().map(|h| h.how.as_deref()).collect();
    for how in ["released", "expired", "gave_up"] {
        assert!(hows.contains(&Some(how)), "{how} in {hows:?}");
    }
    assert!(curator.iter().all(|h| h.dialect == "curator"));
    let (first, doomed, third) = (
        lease(&history, &first_node),
        lease(&history, &doomed_node),
        lease(&history, &third_node),
    );
    assert_eq!(first.how.as_deref(), Some("released"));
    assert_eq!(
        (doomed.how.as_deref(), doomed.session.as_str()),
        (Some("expired"), doomed_session.as_str())
    );
    // The fourth lease's node was made at once, but it held only once the
    // first lease went and its client let the internal lock go.
    assert!(third.holding_ms > first.ended_ms, "{third:#?}");
    let internal = history
        .holds
        .iter()
        .find(|h| h.lock.ends_with("/cs/locks") && h.session == third.session)
        .expect("its hold of the internal lock");
    assert_eq!(third.holding_ms, internal.ended_ms, "{third:#?}");
    assert_eq!(third.created_ms, internal.created_ms, "{third:#?}");
    assert!(third.waited_ms.is_some_and(|ms| ms > 0), "{third:#?}");
    let quitter = curator
        .iter()
        .find(|h| h.how.as_deref() == Some("gave_up"))
        .unwrap();
    assert_eq!((quitter.holding_ms, quitter.held_ms), (None, None));

    let kazoo = leases(&env, &history, "/ks");
    assert_eq!(kazoo.len(), 2, "{kazoo:#?}");
    let (k1, k2) = (lease(&history, &k1_node), lease(&history, &k2_node));
    assert_eq!(k1.how.as_deref(), Some("released"));
    assert_eq!(
        (k2.how.as_deref(), k2.session.as_str()),
        (Some("closed_by_client"), k2_session.as_str())
    );
    // Its wait counts from its queueing on the internal lock, before the
    // first lease went; its lease node was made once it could hold.
    assert!(k2.created_ms < k1.ended_ms.unwrap(), "{k2:#?}");
    assert!(k2.holding_ms >= k1.ended_ms, "{k2:#?}");
    assert_eq!(k2.data.as_deref(), Some("kazoo-k2"));
    // One summary per semaphore.
    let summary = history
        .locks
        .iter()
        .find(|l| l.lock == format!("{}/cs", env.chroot()))
        .expect("the summary of /cs");
    assert_eq!((summary.contenders, summary.holds), (4, 3), "{summary:#?}");
    assert_eq!(summary.unclean, 1, "the expiry: {summary:#?}");

    // Leases within the maximum are no overlap.
    let found: HistoryOverlaps = env
        .zklock(["history", env.chroot(), "--overlaps", "--data-dir"])
        .arg(server.data_dir())
        .args(["-o", "json"])
        .run()
        .assert_success()
        .json();
    assert!(found.overlaps.is_empty(), "{:#?}", found.overlaps);
}

#[test]
fn zklock_sem_leases_and_several_locks_taken_as_one_set() {
    let server = ZkServer::new();
    let env = TestEnv::with_server(&server);
    for (name, dialect) in [("/zc", "curator"), ("/zk", "kazoo")] {
        env.zklock([
            "sem",
            "--dialect",
            dialect,
            name,
            "--max-leases",
            "2",
            "--data",
            &format!("sem-{dialect}"),
            "--",
            "true",
        ])
        .run()
        .assert_success();
    }
    for _ in 0..2 {
        env.zklock(["lock", "/a", "/b", "--", "true"])
            .run()
            .assert_success();
    }
    // A semaphore named alone takes in kazoo's internal lock beside it.
    let alone: History = env
        .zklock(["history", &format!("{}/zk", env.chroot()), "--data-dir"])
        .arg(server.data_dir())
        .args(["-o", "json"])
        .run()
        .assert_success()
        .json();
    assert_eq!(leases(&env, &alone, "/zk").len(), 1, "{alone:#?}");

    let history = history_of(&env, &server);
    for (name, dialect) in [("/zc", "curator"), ("/zk", "kazoo")] {
        let found = leases(&env, &history, name);
        assert_eq!(found.len(), 1, "{name}: {:#?}", history.holds);
        let lease = found[0];
        assert_eq!(lease.dialect, dialect);
        assert_eq!(lease.how.as_deref(), Some("released"), "{lease:#?}");
        assert!(lease.owner.is_some(), "zklock's owner record: {lease:#?}");
        assert!(lease.held_ms.is_some(), "{lease:#?}");
    }
    // Each run's two holds are one set; the two runs are two sets.
    let sets: Vec<(&str, Option<&str>)> = history
        .holds
        .iter()
        .filter(|h| h.lock.ends_with("/a") || h.lock.ends_with("/b"))
        .map(|h| (h.lock.rsplit('/').next().unwrap(), h.set.as_deref()))
        .collect();
    assert_eq!(sets.len(), 4, "{sets:?}");
    assert!(sets.iter().all(|(_, set)| set.is_some()), "{sets:?}");
    let mut distinct: Vec<&str> = sets.iter().filter_map(|(_, set)| *set).collect();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 2, "{sets:?}");
    for set in distinct {
        let mut locks: Vec<&str> = sets
            .iter()
            .filter(|(_, s)| *s == Some(set))
            .map(|(lock, _)| *lock)
            .collect();
        locks.sort();
        assert_eq!(locks, ["a", "b"], "{sets:?}");
    }
}
