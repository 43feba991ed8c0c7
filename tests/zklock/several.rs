//! Several locks at once against a real ZooKeeper: `lock A B -- COMMAND`
//! takes them in one canonical order (so `lock B A` beside it never
//! deadlocks), all or nothing, stops the command when any one is lost, and
//! tells the command every lock it holds.

use crate::support;

use std::time::Duration;

use support::fencing::FenceLog;
use support::{Scratch, TestEnv, wait_until};

const WAIT: Duration = Duration::from_secs(60);

#[test]
fn two_invocations_naming_the_same_locks_in_either_order_never_deadlock_or_overlap() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let log = FenceLog::new(&scratch);
    let rounds = |who: &'static str, locks: [&'static str; 2]| {
        let (env, log) = (&env, &log);
        move || {
            for _ in 0..30 {
                env.zklock(["lock", locks[0], locks[1], "--"])
                    .args(log.command(who, "sleep 0.01"))
                    .timeout(WAIT)
                    .run()
                    .assert_success();
            }
        }
    };
    std::thread::scope(|scope| {
        scope.spawn(rounds("ab", ["/s/a", "/s/b"]));
        scope.spawn(rounds("ba", ["/s/b", "/s/a"]));
    });
    // Both hold /s/a, the first in canonical order, whose fence the log
    // carries: no two sections overlapped, and every one ended.
    let holds = log.assert_exclusive();
    assert_eq!(holds.len(), 60, "{}", log.text());
    assert!(env.zk().children_if_any("/s/a").is_empty());
    assert!(env.zk().children_if_any("/s/b").is_empty());
}

#[test]
fn no_wait_with_one_lock_taken_leaves_no_node() {
    let env = TestEnv::new();
    let mut holder = env.zklock(["lock", "/s/b"]).spawn();
    let token = holder.next_line(WAIT);
    env.zklock(["lock", "/s/a", "/s/b", "/s/c", "-n", "--", "true"])
        .timeout(WAIT)
        .run()
        .assert_code(1);
    assert!(
        env.zk().children_if_any("/s/a").is_empty(),
        "the node in /s/a was deleted"
    );
    assert!(
        env.zk().children_if_any("/s/c").is_empty(),
        "/s/c was never queued for"
    );
    assert_eq!(
        env.zk().children("/s/b"),
        [token.rsplit('/').next().unwrap()],
        "only the holder's node is left in /s/b"
    );
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
}

#[test]
fn the_command_is_stopped_when_any_one_lock_is_lost() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let ready = scratch.file("ready");
    let script = format!("touch '{}'; exec sleep 600", ready.display());
    let mut run = env
        .zklock(["lock", "/s/b", "/s/a", "--", "sh", "-c", &script])
        .timeout(WAIT)
        .spawn();
    wait_until(WAIT, "the command runs", || ready.exists());
    let nodes = env.zk().children("/s/b");
    assert_eq!(nodes.len(), 1);
    env.zk().delete(&format!("/s/b/{}", nodes[0]));
    run.wait(WAIT).assert_code(4);
    wait_until(WAIT, "the node in /s/a is released", || {
        env.zk().children_if_any("/s/a").is_empty()
    });
}

#[test]
fn the_command_sees_every_lock_node_and_fence_in_canonical_order() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let seen = scratch.file("seen");
    let ready = scratch.file("ready");
    let script = format!(
        "printf '%s\\n--\\n%s\\n--\\n%s\\n--\\n%s %s %s\\n' \"$ZKLOCK_LOCKS\" \"$ZKLOCK_NODES\" \
         \"$ZKLOCK_FENCES\" \"$ZKLOCK_LOCK\" \"$ZKLOCK_NODE\" \"$ZKLOCK_FENCE\" > '{}'; \
         touch '{}'; exec sleep 600",
        seen.display(),
        ready.display()
    );
    // Named out of order and once twice: taken once each, sorted by path.
    let mut run = env
        .zklock([
            "lock", "/s/c", "/s/a", "/s/c", "/s/b", "--", "sh", "-c", &script,
        ])
        .timeout(WAIT)
        .spawn();
    wait_until(WAIT, "the command runs", || ready.exists());
    let text = std::fs::read_to_string(&seen).unwrap();
    let parts: Vec<Vec<&str>> = text
        .trim_end()
        .split("\n--\n")
        .map(|part| part.lines().collect())
        .collect();
    let locks = ["/s/a", "/s/b", "/s/c"];
    assert_eq!(parts[0], locks, "{text}");
    let nodes: Vec<String> = locks
        .iter()
        .map(|lock| {
            let children = env.zk().children(lock);
            assert_eq!(children.len(), 1, "one node in {lock}");
            format!("{lock}/{}", children[0])
        })
        .collect();
    assert_eq!(parts[1], nodes, "{text}");
    let fences: Vec<String> = nodes
        .iter()
        .map(|node| env.zk().get(node).1.czxid.to_string())
        .collect();
    assert_eq!(parts[2], fences, "{text}");
    assert_eq!(
        parts[3],
        [format!("{} {} {}", locks[0], nodes[0], fences[0]).as_str()],
        "the single-lock variables name the first"
    );
    // Granted in canonical order: the fences grow with the paths.
    let czxids: Vec<i64> = fences.iter().map(|f| f.parse().unwrap()).collect();
    assert!(czxids.windows(2).all(|w| w[0] < w[1]), "{czxids:?}");
    run.signal(libc::SIGTERM);
    run.wait(WAIT);
    for lock in locks {
        assert!(env.zk().children_if_any(lock).is_empty(), "{lock} released");
    }
}

#[test]
fn several_locks_need_a_command_and_refuse_detach_ttl_and_sem() {
    let env = TestEnv::new();
    for args in [
        vec!["lock", "/s/a", "/s/b"],
        vec!["rlock", "/s/a", "/s/b"],
        vec!["lock", "/s/a", "/s/b", "--detach"],
        vec!["wlock", "/s/a", "/s/b", "--ttl", "1m"],
        vec!["sem", "--max-leases", "2", "/s/a", "/s/b", "--", "true"],
    ] {
        let run = env.zklock(&args).timeout(WAIT).run();
        run.assert_code(2);
        assert!(
            env.zk().children_if_any("/s/a").is_empty() && env.zk().exists("/s/a").is_none(),
            "{args:?} touched nothing"
        );
    }
    // One lock without `--` is still held until a signal; several with a
    // command are fine.
    env.zklock(["wlock", "/s/a", "/s/b", "--", "true"])
        .timeout(WAIT)
        .run()
        .assert_success();
}
