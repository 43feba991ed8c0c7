//! The `-v` log's JSON form (`ZKLOCK_LOG_FORMAT=json`): every line a JSON
//! object, and the moments the guide declares carrying their `event` with
//! its fields, which scripts may wait for. Their wording is free; these
//! fields are not. (`server_unreachable` has its own tests in
//! `unreachable`; `reconnected`, which carries no field, is waited for by
//! the fault tests.)

use crate::support;

use std::time::Duration;

use serde_json::Value;
use support::{Running, TestEnv};

const WAIT: Duration = Duration::from_secs(30);

/// The first `event` a `-v` zklock logs, once it has.
fn first_event(running: &Running, event: &str) -> Value {
    support::wait_for(WAIT, &format!("the {event} event"), || {
        running.log_events(event).into_iter().next()
    })
}

/// Fails unless every line of `stderr` is a JSON object.
#[track_caller]
fn every_line_is_json(stderr: &str) {
    for line in stderr.lines() {
        assert!(
            serde_json::from_str::<Value>(line).is_ok_and(|line| line.is_object()),
            "not a JSON object: {line:?}\n{stderr}"
        );
    }
}

#[test]
fn the_json_log_carries_each_declared_event_with_its_fields() {
    let env = TestEnv::new();
    let mut holder = env.zklock(["lock", "w"]).spawn();
    holder.next_line(WAIT);
    let held = format!("/locks/w/{}", env.zk().children("/locks/w")[0]);
    let mut waiter = env
        .zklock(["-v", "lock", "w", "--", "true"])
        .json_log()
        .spawn();
    assert_eq!(first_event(&waiter, "waiting")["node"], held.as_str());
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
    every_line_is_json(&waiter.wait(WAIT).assert_success().stderr);

    let mut lease = env.zklock(["sem", "s", "--max-leases", "1"]).spawn();
    lease.next_line(WAIT);
    let mut queued = env
        .zklock(["-v", "sem", "s", "--max-leases", "1", "--", "true"])
        .json_log()
        .spawn();
    assert_eq!(
        first_event(&queued, "waiting_for_lease")["node"],
        "/locks/s"
    );
    lease.signal(libc::SIGTERM);
    lease.wait(WAIT).assert_success();
    every_line_is_json(&queued.wait(WAIT).assert_success().stderr);

    let mut watching = env.zklock(["-v", "watch", "app"]).json_log().spawn();
    let started = first_event(&watching, "watching");
    assert_eq!(
        (&started["path"], &started["method"]),
        (&Value::from("/locks/app"), &Value::from("persistent")),
        "{started}"
    );
    watching.signal(libc::SIGTERM);
    every_line_is_json(&watching.wait(WAIT).stderr);
}
