//! Breaking a lock asks first, as `reap` does: a prompt on a terminal that
//! shows each holder's session, age, owner and whether it is connected,
//! `--yes` off a terminal (without it: usage error, nothing done), and
//! `--dry-run` to list.

use crate::support;
use crate::terminal::on_terminal;

use support::TestEnv;
use support::json::ErrorReport;

/// A detached zklock holder of `lock`: its token.
fn held(env: &TestEnv, lock: &str) -> String {
    let grant: support::json::Grant = env
        .zklock(["-o", "json", "lock", lock, "--detach", "--lease", "2m"])
        .run()
        .assert_success()
        .json();
    grant.token
}

#[test]
fn release_holders_asks_on_a_terminal_and_needs_yes_elsewhere() {
    let env = TestEnv::new();
    let token = held(&env, "deploy");
    let exists = || env.zk().exists(&token).is_some();

    for breaking in [
        &["release", "deploy", "--holders"][..],
        &["release", "deploy", "--revoke", "--force-after", "1s"][..],
    ] {
        let run = env.zklock(["-o", "json"]).args(breaking).run();
        run.assert_code(2);
        let error: ErrorReport = serde_json::from_str(run.stderr.trim()).expect("JSON error");
        assert_eq!(error.cause, "usage");
        assert!(
            exists(),
            "{breaking:?} off a terminal without --yes did nothing"
        );
    }

    let listed: serde_json::Value = env
        .zklock(["-o", "json", "release", "deploy", "--holders", "--dry-run"])
        .run()
        .assert_success()
        .json();
    assert_eq!(listed["would_break"][0]["path"], token.as_str());
    assert_eq!(listed["would_break"][0]["client"]["connected"], true);
    assert!(exists(), "--dry-run deletes nothing");

    // On a terminal: the prompt names the holder's session; no keeps it.
    let session = listed["would_break"][0]["session"]
        .as_str()
        .unwrap()
        .to_owned();
    let expect_session = format!("expect:{session}");
    let refused = on_terminal(
        &env.zklock(["release", "deploy", "--holders"]),
        &[&expect_session, "expect:[y/N]", "send:n\\n"],
    );
    refused.assert_code(2);
    assert!(exists(), "no at the prompt deletes nothing");
    let confirmed = on_terminal(
        &env.zklock(["release", "deploy", "--holders"]),
        &["expect:[y/N]", "send:y\\n"],
    );
    confirmed.assert_success();
    support::wait_until(
        std::time::Duration::from_secs(30),
        "the holder's node is gone",
        || !exists(),
    );
}
