//! Locks that span script steps: lock --detach, lock --ttl, and release by
//! token, by holders, and by revocation.

use crate::support;

use std::process::Command;
use std::time::{Duration, Instant};

use std::collections::BTreeMap;

use support::cotenants::{CoTenants, NodeState, StaleLocks};
use support::json::ReleaseReport;
use support::peers::{self, Library, acquired, peer};
use support::watches::watches;
use support::{Running, TestEnv, ZkOptions, ZkServer, assert_lease_ran_its_course, wait_until};

const WAIT: Duration = Duration::from_secs(20);

/// The pid in the owner record of a zklock node.
fn owner_pid(env: &TestEnv, node: &str) -> i32 {
    let (data, _) = env.zk().get(node);
    let owner: serde_json::Value = serde_json::from_slice(&data).expect("owner JSON");
    owner["pid"].as_i64().expect("pid") as i32
}

/// `zklock lock LOCK --detach EXTRA...`: returns the token.
fn detach(env: &TestEnv, lock: &str, extra: &[&str]) -> String {
    let mut args = vec!["lock", lock, "--detach"];
    args.extend_from_slice(extra);
    let run = env.zklock(args).run();
    run.assert_success();
    run.stdout.trim().to_owned()
}

fn is_free(env: &TestEnv, lock: &str) -> bool {
    env.zk()
        .children_if_any(&format!("/locks/{lock}"))
        .is_empty()
}

#[test]
fn a_detached_lock_is_held_until_released_by_its_token() {
    let env = TestEnv::new();
    // As a script takes it: the command substitution returns at once.
    let script = format!(
        "tok=$({} -H {} lock dx --detach) && echo \"$tok\"",
        support::cmd::ZKLOCK,
        env.hosts()
    );
    let mut shell = Command::new("sh");
    shell.args(["-c", &script]);
    let mut run = Running::start(shell, "sh -c 'tok=$(zklock lock dx --detach)'".into(), None);
    let run = run.wait(Duration::from_secs(10));
    run.assert_success()
        .assert_faster_than(Duration::from_secs(5));
    let token = run.stdout.trim().to_owned();
    assert!(token.starts_with("/locks/dx/_c_"), "{token}");
    let holder = owner_pid(&env, &token);
    assert!(support::process_alive(holder));
    env.zklock(["lock", "-n", "dx", "--", "true"])
        .run()
        .assert_code(1);
    env.zklock(["release", &token, "-o", "wide"])
        .run()
        .assert_success()
        .assert_stdout_contains(&token);
    wait_until(WAIT, "the holder process ends", || {
        !support::process_alive(holder)
    });
    assert!(is_free(&env, "dx"));
}

#[test]
fn a_detach_behind_a_holder_prints_its_token_only_once_it_holds() {
    let env = TestEnv::new();
    let first = detach(&env, "queue", &[]);
    let mut second = env.zklock(["lock", "queue", "--detach"]).spawn();
    // The second's holder is queued and, in the server's view, watches the
    // first's node: it waits, and the foreground must wait with it.
    let queued = support::wait_for(WAIT, "the second contender waits on the first", || {
        if let Some(run) = second.try_wait() {
            panic!("--detach returned while another held the lock: {run:?}");
        }
        let children = env.zk().children_if_any("/locks/queue");
        let own = children
            .iter()
            .map(|child| format!("/locks/queue/{child}"))
            .find(|path| *path != first)?;
        let session = env.zk().exists(&own)?.ephemeral_owner;
        let watched = format!("{}{first}", env.chroot());
        watches(support::shared_server(), session, &watched).then_some(own)
    });
    assert!(
        second.is_running() && second.stdout().is_empty(),
        "--detach printed a token while the lock was held by another"
    );
    env.zklock(["release", &first]).run().assert_success();
    let run = second.wait(WAIT);
    run.assert_success();
    assert_eq!(
        run.stdout.trim(),
        queued,
        "the token is the node that waited"
    );
    assert_eq!(env.zk().children_if_any("/locks/queue").len(), 1);
    env.zklock(["lock", "-n", "queue", "--", "true"])
        .run()
        .assert_code(1);
    env.zklock(["release", &queued]).run().assert_success();
}

#[test]
fn a_detached_lock_that_is_taken_fails_in_the_foreground() {
    let env = TestEnv::new();
    let token = detach(&env, "taken", &[]);
    env.zklock(["lock", "-n", "taken", "--detach"])
        .run()
        .assert_code(1)
        .assert_stderr_contains("is held by");
    env.zklock(["lock", "-w", "300ms", "-E", "9", "taken", "--detach"])
        .run()
        .assert_code(9)
        .assert_stderr_contains("timed out");
    assert_eq!(
        env.zk().children_if_any("/locks/taken").len(),
        1,
        "the failed holders left no node"
    );
    env.zklock(["release", &token]).run().assert_success();
}

#[test]
fn while_pid_ties_the_lock_to_a_process() {
    let env = TestEnv::new();
    let mut tied = Command::new("sleep")
        .arg("60")
        .spawn()
        .expect("spawn sleep");
    let pid = tied.id().to_string();
    let token = detach(&env, "tied", &["--while-pid", &pid]);
    let holder = owner_pid(&env, &token);
    assert!(!is_free(&env, "tied"));
    tied.kill().expect("kill sleep");
    tied.wait().expect("reap sleep");
    wait_until(WAIT, "the lock frees when the process ends", || {
        is_free(&env, "tied")
    });
    wait_until(WAIT, "the holder ends", || !support::process_alive(holder));
}

#[test]
fn a_detached_holder_lets_go_on_sigterm() {
    let env = TestEnv::new();
    let token = detach(&env, "termed", &[]);
    let holder = owner_pid(&env, &token);
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe {
        libc::kill(holder, libc::SIGTERM);
    }
    // Inside the 10 s session, with room for a loaded machine: a release,
    // not an expiry.
    wait_until(
        Duration::from_secs(8),
        "the holder deletes its node",
        || env.zk().exists(&token).is_none(),
    );
    wait_until(WAIT, "the holder ends", || !support::process_alive(holder));
}

#[test]
fn while_pid_of_no_process_is_a_usage_error() {
    let env = TestEnv::new();
    env.zklock(["lock", "x", "--detach", "--while-pid", "999999999"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("no such process");
    assert!(env.zk().exists("/locks/x").is_none());
}

#[test]
fn a_lease_frees_the_lock_when_it_runs_out() {
    let env = TestEnv::new();
    let asked = Instant::now();
    detach(&env, "leased", &["--lease", "1s"]);
    assert!(
        !is_free(&env, "leased"),
        "held right after the foreground returned"
    );
    wait_until(WAIT, "the lease frees the lock", || is_free(&env, "leased"));
    assert_lease_ran_its_course(asked.elapsed(), Duration::from_secs(1));
}

#[test]
fn a_ttl_lock_is_held_with_no_process_alive_until_released() {
    let env = TestEnv::new();
    let run = env.zklock(["lock", "ttl", "--ttl", "1h"]).run();
    run.assert_success();
    let token = run.stdout.trim().to_owned();
    let (_, stat) = env.zk().get(&token);
    assert_eq!(
        stat.ephemeral_owner, 0,
        "a persistent node, owned by no session"
    );
    env.zklock(["lock", "-n", "ttl", "--", "true"])
        .run()
        .assert_code(1);
    env.zklock(["release", &token]).run().assert_success();
    assert!(is_free(&env, "ttl"));
}

#[test]
fn a_ttl_lock_expires_on_the_server() {
    let env = TestEnv::new();
    let run = env.zklock(["lock", "expiring", "--ttl", "1s"]).run();
    run.assert_success();
    let token = run.stdout.trim().to_owned();
    assert!(env.zk().exists(&token).is_some());
    // The harness runs the server's TTL sweep every 500 ms.
    wait_until(WAIT, "the server deletes the TTL node", || {
        env.zk().exists(&token).is_none()
    });
    env.zklock(["lock", "-n", "expiring", "--", "true"])
        .run()
        .assert_success();
}

#[test]
fn a_ttl_lock_on_a_server_without_ttl_says_what_the_server_needs() {
    let server = ZkServer::with_options(&ZkOptions::default().config("extendedTypesEnabled=false"));
    let env = TestEnv::with_server(&server);
    env.zklock(["lock", "x", "--ttl", "1m"])
        .run()
        .assert_code(10)
        .assert_stderr_contains("extendedTypesEnabled=true");
    assert!(env.zk().children_if_any("/locks/x").is_empty());
}

#[test]
fn release_holders_breaks_a_lock_and_the_holder_stops_its_command() {
    let env = TestEnv::new();
    let mut holder = env
        .zklock([
            "lock",
            "broken",
            "--",
            "sh",
            "-c",
            "echo $$; exec sleep 1000",
        ])
        .spawn();
    let pid: i32 = holder.next_line(WAIT).parse().expect("pid");
    let run = env
        .zklock(["-o", "json", "release", "--holders", "--yes", "broken"])
        .run();
    run.assert_success();
    let report: serde_json::Value = run.json();
    assert_eq!(
        report["deleted"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
    holder.wait(WAIT).assert_code(4);
    assert!(!support::process_alive(pid));
}

#[test]
fn revoke_stops_a_zklock_holder_in_every_mode() {
    let env = TestEnv::new();
    let mut with_command = env.zklock(["lock", "r1", "--", "sleep", "1000"]).spawn();
    let mut plain = env.zklock(["lock", "r2"]).spawn();
    plain.next_line(WAIT);
    let token = detach(&env, "r3", &[]);
    let detached = owner_pid(&env, &token);
    wait_until(WAIT, "the command holder holds", || !is_free(&env, "r1"));
    for lock in ["r1", "r2", "r3"] {
        env.zklock(["release", "--revoke", lock])
            .run()
            .assert_success()
            .assert_stdout_contains("__REVOKE__");
    }
    with_command
        .wait(WAIT)
        .assert_code(4)
        .assert_stderr_contains("revoked");
    plain.wait(WAIT).assert_code(4);
    wait_until(WAIT, "the detached holder lets go", || {
        !support::process_alive(detached)
    });
    for lock in ["r1", "r2", "r3"] {
        wait_until(WAIT, "the revoked lock is free", || is_free(&env, lock));
    }
}

/// A mark written while the waiter waits is seen once it holds: its stat
/// then shows a version it did not create the node at.
#[test]
fn a_waiter_revoked_while_it_waits_lets_go_once_its_turn_comes() {
    let env = TestEnv::new();
    let mut holder = env.zklock(["lock", "r4"]).spawn();
    holder.next_line(WAIT);
    let mut waiter = env.zklock(["lock", "r4", "--", "sleep", "1000"]).spawn();
    wait_until(WAIT, "the waiter queues", || {
        env.zk().children_if_any("/locks/r4").len() == 2
    });
    let mut queue = env.zk().children("/locks/r4");
    queue.sort_by_key(|name| name.rsplit('-').next().map(str::to_owned));
    env.zk()
        .set(&format!("/locks/r4/{}", queue[1]), b"__REVOKE__");
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT);
    waiter
        .wait(WAIT)
        .assert_code(4)
        .assert_stderr_contains("revoked");
    wait_until(WAIT, "the revoked lock is free", || is_free(&env, "r4"));
}

/// A waiter that comes to hold goes on with the watch it set on its own
/// node while waiting: the node deleted under it is seen all the same.
#[test]
fn a_holder_that_waited_sees_its_node_deleted() {
    let env = TestEnv::new();
    let mut holder = env.zklock(["lock", "r5"]).spawn();
    holder.next_line(WAIT);
    let mut waiter = env.zklock(["lock", "r5"]).spawn();
    wait_until(WAIT, "the waiter queues", || {
        env.zk().children_if_any("/locks/r5").len() == 2
    });
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT);
    let token = waiter.next_line(WAIT);
    env.zk().delete(token.trim());
    waiter
        .wait(WAIT)
        .assert_code(4)
        .assert_stderr_contains("lost");
}

#[test]
fn revoke_with_force_after_deletes_a_holder_that_ignores_it() {
    let env = TestEnv::new();
    let mut curator = peer(&env, Library::Curator, "/locks/stubborn", "mutex", &[]);
    acquired(&mut curator, WAIT);
    let run = env
        .zklock([
            "-o",
            "json",
            "release",
            "--revoke",
            "--yes",
            "--force-after",
            "500ms",
            "stubborn",
        ])
        .run();
    run.assert_success();
    let report: serde_json::Value = run.json();
    assert_eq!(
        report["revoked"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
    assert_eq!(
        report["deleted"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
    assert!(is_free(&env, "stubborn"));
    peers::release(curator);
}

#[test]
fn revoke_leaves_a_curator_lease_alone_unless_forced() {
    let env = TestEnv::new();
    let mut curator = peer(&env, Library::Curator, "/locks/sem", "semaphore", &[]);
    acquired(&mut curator, WAIT);
    let leases = env.zk().children("/locks/sem/leases");
    assert_eq!(leases.len(), 1, "{leases:?}");
    let lease = format!("/locks/sem/leases/{}", leases[0]);
    let before = env.zk().get(&lease);
    let run = env
        .zklock(["-o", "json", "release", "--revoke", "sem"])
        .run();
    run.assert_code(10);
    let report: serde_json::Value = run.json();
    assert_eq!(
        report["revoked"].as_array().map(Vec::len),
        Some(0),
        "{report}"
    );
    assert_eq!(report["skipped"][0]["path"], lease.as_str(), "{report}");
    assert_eq!(env.zk().get(&lease), before, "the lease was written to");
    env.zklock([
        "release",
        "--revoke",
        "--yes",
        "--force-after",
        "100ms",
        "sem",
    ])
    .run()
    .assert_success();
    wait_until(WAIT, "the forced lease to go", || {
        env.zk().exists(&lease).is_none()
    });
    peers::release(curator);
}

#[test]
fn a_revocable_curator_holder_lets_go_when_revoked() {
    let env = TestEnv::new();
    let mut curator = peer(
        &env,
        Library::Curator,
        "/locks/polite",
        "mutex",
        &["--revocable"],
    );
    acquired(&mut curator, WAIT);
    env.zklock([
        "release",
        "--revoke",
        "--yes",
        "--force-after",
        "20s",
        "polite",
    ])
    .run()
    .assert_success();
    assert!(curator.next_line(WAIT).starts_with("REVOKED"));
    assert!(is_free(&env, "polite"));
}

#[test]
fn release_refuses_what_is_not_a_contender_node() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/x");
    env.zk().create("/locks/x/config", b"keep me");
    env.zk().create("/locks/x/lock-0000000001", b"");
    env.zk().create("/locks/x/lock-0000000001/child", b"");
    for target in [
        "/locks/x/config",
        "/",
        "/locks/x",
        "/locks/x/lock-0000000001",
    ] {
        env.zklock(["release", target])
            .run()
            .assert_code(2)
            .assert_stderr_contains("refusing");
    }
    assert!(env.zk().exists("/locks/x/config").is_some());
    assert!(env.zk().exists("/locks/x/lock-0000000001/child").is_some());
}

#[test]
fn release_of_a_released_or_expired_token_exits_6_unless_if_exists() {
    let env = TestEnv::new();
    let released = detach(&env, "gone", &[]);
    env.zklock(["release", &released]).run().assert_success();
    // A holder whose session the server expires: killed, so it cannot
    // delete its node.
    let mut holder = env
        .zklock(["lock", "gone", "--session-timeout", "1s"])
        .spawn();
    let expired = holder.next_line(WAIT);
    holder.kill();
    wait_until(WAIT, "the server expires the holder's session", || {
        env.zk().exists(&expired).is_none()
    });
    // Another contender's node in the same directory, which must stay.
    let (mut other, other_token) = {
        let mut other = env.zklock(["lock", "gone"]).spawn();
        let token = other.next_line(WAIT);
        (other, token)
    };
    for token in [&released, &expired] {
        env.zklock(["release", token.as_str()]).run().assert_code(6);
        env.zklock(["release", "--if-exists", token.as_str()])
            .run()
            .assert_success();
    }
    assert!(
        env.zk().exists(&other_token).is_some(),
        "the live holder keeps its node"
    );
    other.signal(libc::SIGTERM);
    other.wait(WAIT).assert_success();
}

#[test]
fn release_of_a_gone_token_exits_6_unless_if_exists() {
    let env = TestEnv::new();
    let gone = "/locks/x/_c_0c6b9f2e-1111-2222-3333-444455556666-lock-0000000007";
    env.zklock(["release", gone])
        .run()
        .assert_code(6)
        .assert_stderr_contains(gone);
    env.zklock(["release", "--if-exists", gone])
        .run()
        .assert_success();
}

#[test]
fn release_holders_deletes_a_generic_holder_at_the_version_it_read() {
    let env = TestEnv::new();
    let holder_session = env.connect();
    holder_session.mkdir_p("/locks/v");
    let node = holder_session.create_ephemeral_sequential("/locks/v/lock-", b"");
    holder_session.set(&node, b"changed once, before release reads it");
    let waiter = holder_session.create_ephemeral_sequential("/locks/v/lock-", b"");
    env.zklock(["release", "--holders", "--yes", "v"])
        .run()
        .assert_success();
    assert!(env.zk().exists(&node).is_none(), "the holder is deleted");
    assert!(
        env.zk().exists(&waiter).is_some(),
        "the waiter is not a holder and stays"
    );
}

/// The co-tenants' nodes as they are now, without the locks among them.
fn cotenant_nodes(env: &TestEnv, locks: &StaleLocks) -> BTreeMap<String, NodeState> {
    let mut nodes = CoTenants::snapshot(env);
    nodes.retain(|path, _| !locks.contenders.contains(path) && !locks.directories.contains(path));
    nodes
}

fn release_json(env: &TestEnv, args: &[&str], code: i32) -> ReleaseReport {
    let run = env.zklock(["-o", "json", "release"]).args(args).run();
    run.assert_code(code);
    run.json()
}

#[test]
fn release_over_a_shared_tree_deletes_and_revokes_only_locks() {
    let env = TestEnv::new();
    let _cotenants = CoTenants::create(&env);
    let locks = StaleLocks::create(&env);
    let before = cotenant_nodes(&env, &locks);
    let contender_in = |dir: &str| -> String {
        let found: Vec<&String> = locks
            .contenders
            .iter()
            .filter(|node| node.starts_with(&format!("{dir}/")))
            .collect();
        assert_eq!(found.len(), 1, "{dir}: {found:?}");
        found[0].clone()
    };

    // Tokens that name persistent nodes: application data.
    for token in [
        "/app/config/lock-0000000001",
        "/app/config/app-lock-0000000002",
        "/hbase/table-lock/t1/write-0000000000",
        "/hbase/table-lock/t1/read-0000000001",
        "/app/ids/x-1234567-0000000000",
        "/app/ids/_c_2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f-lock-0000000007",
    ] {
        env.zklock(["release", token])
            .run()
            .assert_code(2)
            .assert_stderr_contains("refusing");
    }
    // The holder among them is the ephemeral one; the persistent config
    // node of the same name pattern is not in the queue.
    let raw = contender_in("/app/config");
    let report = release_json(&env, &["--holders", "--yes", "/app/config"], 0);
    assert_eq!(report.deleted, [raw]);
    let report = release_json(&env, &["--holders", "--yes", "/hbase/table-lock/t1"], 0);
    assert!(report.deleted.is_empty(), "{report:?}");

    // kazoo does not obey __REVOKE__: nothing is written, and it says so.
    let kazoo = contender_in("/locks/kazoo-mutex");
    let (_, kazoo_stat) = env.zk().get(&kazoo);
    let report = release_json(&env, &["--revoke", "/locks/kazoo-mutex"], 10);
    assert!(report.revoked.is_empty(), "{report:?}");
    assert_eq!(report.skipped.len(), 1, "{report:?}");
    assert_eq!(report.skipped[0].path, kazoo);
    assert_eq!(env.zk().get(&kazoo).1.mzxid, kazoo_stat.mzxid, "untouched");
    let persistent = contender_in("/locks/kazoo-persistent");
    let (_, persistent_stat) = env.zk().get(&persistent);
    release_json(&env, &["--revoke", "/locks/kazoo-persistent"], 10);
    assert_eq!(env.zk().get(&persistent).1.mzxid, persistent_stat.mzxid);
    // ... only --force-after breaks it.
    let report = release_json(
        &env,
        &[
            "--revoke",
            "--yes",
            "--force-after",
            "200ms",
            "/locks/kazoo-mutex",
        ],
        0,
    );
    assert_eq!(report.deleted, [kazoo]);

    // zklock's holders obey it in any dialect: an HBase-dialect holder.
    let hbase = contender_in("/hbase/table-lock/t2");
    let report = release_json(&env, &["--revoke", "/hbase/table-lock/t2"], 0);
    assert_eq!(report.revoked, std::slice::from_ref(&hbase));
    wait_until(WAIT, "the revoked zklock holder lets go", || {
        env.zk().exists(&hbase).is_none()
    });
    // A TTL token: persistent, zklock's by its owner record.
    let ttl = contender_in("/locks/zk-ttl");
    let report = release_json(&env, &[&ttl], 0);
    assert_eq!(report.deleted, [ttl]);

    assert_eq!(
        cotenant_nodes(&env, &locks),
        before,
        "a co-tenant node changed"
    );
    locks.stop();
}

#[test]
fn force_after_leaves_a_node_made_again_under_the_same_name() {
    let env = TestEnv::new();
    let old = env.connect();
    old.mkdir_p("/locks/again");
    let name = "/locks/again/_c_2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f-lock-";
    let node = old.create_ephemeral_sequential(name, b"10.0.0.1");
    let mut revoke = env
        .zklock([
            "-o",
            "json",
            "release",
            "--revoke",
            "--yes",
            "--force-after",
            "5s",
            "again",
        ])
        .spawn();
    wait_until(WAIT, "the holder is asked to let go", || {
        env.zk()
            .try_get(&node)
            .is_ok_and(|(data, _)| data == b"__REVOKE__")
    });
    // The holder's node goes, its directory goes, and a new holder takes
    // the same name, all at once (one transaction), before the grace period
    // ends: whoever looks next finds a node by that name.
    let new = env.connect();
    new.block_on(async {
        let mut writer = new.client().new_multi_writer();
        let dir = zookeeper_client::CreateMode::Persistent
            .with_acls(zookeeper_client::Acls::anyone_all());
        let contender = zookeeper_client::CreateMode::EphemeralSequential
            .with_acls(zookeeper_client::Acls::anyone_all());
        writer.add_delete(&node, None).expect("delete");
        writer.add_delete("/locks/again", None).expect("delete");
        writer
            .add_create("/locks/again", b"", &dir)
            .expect("create");
        writer
            .add_create(name, b"10.0.0.2", &contender)
            .expect("create");
        writer.commit().await.expect("one transaction");
    });
    assert_eq!(env.zk().get(&node).1.ephemeral_owner, new.session_id());
    let run = revoke.wait(WAIT);
    run.assert_success();
    let report: ReleaseReport = run.json();
    assert!(report.deleted.is_empty(), "{report:?}");
    assert_eq!(env.zk().get(&node).1.ephemeral_owner, new.session_id());
}

#[test]
fn release_holders_refused_by_the_parents_acl_names_the_parent() {
    let env = TestEnv::new();
    let holder = env.connect();
    holder.mkdir_p("/locks/guarded");
    let node = holder.create_ephemeral_sequential("/locks/guarded/lock-", b"");
    let no_delete = zookeeper_client::Permission::READ
        | zookeeper_client::Permission::WRITE
        | zookeeper_client::Permission::CREATE
        | zookeeper_client::Permission::ADMIN;
    env.zk().set_acl(
        "/locks/guarded",
        &[zookeeper_client::Acl::new(
            no_delete,
            zookeeper_client::AuthId::anyone(),
        )],
    );
    env.zklock(["release", "--holders", "--yes", "guarded"])
        .run()
        .assert_code(5)
        .assert_stderr_contains("parent /locks/guarded");
    assert!(env.zk().exists(&node).is_some());
    // A revocation that then may not delete: what it did comes first (the
    // holder, a Curator node no one obeys for, was revoked), then the error.
    holder.mkdir_p("/locks/revoked");
    let curator = holder.create_ephemeral_sequential(
        "/locks/revoked/_c_0f3b1f0e-5f7d-4c7a-9d7e-3f1e2c4b5a69-lock-",
        b"",
    );
    env.zk().set_acl(
        "/locks/revoked",
        &[zookeeper_client::Acl::new(
            no_delete,
            zookeeper_client::AuthId::anyone(),
        )],
    );
    let args = ["--revoke", "--force-after", "100ms", "--yes", "revoked"];
    let done = release_json(&env, &args, 5);
    assert_eq!(
        done,
        ReleaseReport {
            deleted: vec![],
            revoked: vec![curator.clone()],
            skipped: vec![]
        }
    );
    assert_eq!(env.zk().get(&curator).0, b"__REVOKE__");
}
