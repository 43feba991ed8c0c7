//! Tables at an 80-column terminal: every table's default columns fit 80
//! columns for ordinary names, even with long owners and a long queue, and
//! `-o wide` shows the rest whole; so do `watch`'s lines.

use crate::terminal::on_terminal;

use support::{TestEnv, Zklock};

use crate::support;

const COLUMNS: u16 = 80;

/// What an 80-column terminal showed for `zklock`, line by line.
fn shown(zklock: Zklock) -> Vec<String> {
    let run = on_terminal(&zklock.env("COLUMNS", COLUMNS.to_string()), &[]);
    run.assert_success();
    run.stdout
        .split('\n')
        .map(|line| line.trim_end_matches('\r').to_owned())
        .filter(|line| !line.is_empty())
        .collect()
}

/// The lines of `lines` wider than the terminal.
fn too_wide(lines: &[String]) -> Vec<&String> {
    lines
        .iter()
        .filter(|line| line.chars().count() > usize::from(COLUMNS))
        .collect()
}

#[test]
fn every_table_fits_80_columns_with_long_owners_and_50_waiters() {
    let env = TestEnv::new();
    let owner = "nightly settlement for every merchant in the eu region, started by the \
                 scheduler on batch-host-17 for the finance team";
    let grant: support::json::Grant = env
        .zklock(["-o", "json", "lock", "deploy", "--detach", "--lease", "2m"])
        .args(["--data", owner])
        .run()
        .assert_success()
        .json();
    let waiters = env.connect();
    for _ in 0..50 {
        waiters.create_ephemeral_sequential("/locks/deploy/lock-", owner.as_bytes());
    }
    let tables = [
        vec!["ls"],
        vec!["stat", "deploy"],
        vec!["dump", "-o", "table"],
        vec!["dump", "--sessions", "-o", "table"],
        vec!["reap", "--all", "--dry-run"],
        vec!["watch", "deploy", "--until", "held"],
    ];
    for args in &tables {
        let lines = shown(env.zklock(args));
        assert!(lines.len() > 1, "{args:?} printed a table: {lines:#?}");
        assert_eq!(too_wide(&lines), Vec::<&String>::new(), "{args:?}");
    }
    let stat = shown(env.zklock(["stat", "deploy"]));
    assert_eq!(
        stat.len(),
        1 + 1 + 51,
        "heading, header, 51 rows: {stat:#?}"
    );
    let wide = shown(env.zklock(["stat", "deploy", "-o", "wide"]));
    let node = grant.token.rsplit('/').next().unwrap();
    assert!(
        wide.iter()
            .any(|line| line.contains(node) && line.contains(owner)),
        "-o wide shows the node and the owner whole: {wide:#?}"
    );
    let watched = shown(env.zklock(["watch", "deploy", "--until", "held"]));
    assert_eq!(
        watched.iter().filter(|line| line.contains("#")).count(),
        51,
        "one line per node, named by its sequence number: {watched:#?}"
    );
    let wide = shown(env.zklock(["watch", "deploy", "--until", "held", "-o", "wide"]));
    assert!(
        wide.iter()
            .any(|line| line.contains(&grant.token) && line.contains(owner)),
        "watch -o wide shows the node's path and the owner whole: {wide:#?}"
    );
    let revoked = shown(env.zklock(["release", "deploy", "--revoke"]));
    assert_eq!(too_wide(&revoked), Vec::<&String>::new());
}

#[test]
fn look_alike_names_are_refused_and_told_apart() {
    let env = TestEnv::new();
    for odd in ["deploy ", " deploy", "de\u{200b}ploy", "deploy\u{feff}"] {
        let run = env
            .zklock(["-o", "json", "lock", odd, "-n", "--detach"])
            .run();
        run.assert_code(2);
        let error: support::json::ErrorReport =
            serde_json::from_str(run.stderr.trim()).expect("a JSON error");
        assert_eq!(error.cause, "usage", "{odd:?}");
    }
    assert!(env.zk().exists("/locks/deploy ").is_none(), "nothing made");
    // A lock another library already holds under such a name can be joined.
    env.zklock(["lock", "deploy ", "-n", "--allow-odd-name", "--", "true"])
        .run()
        .assert_success();
    // Every command reads such names, and tables set them apart.
    let holder = env.connect();
    holder.mkdir_p("/locks/deploy");
    holder.mkdir_p("/locks/deploy ");
    holder.create_ephemeral_sequential("/locks/deploy/lock-", b"");
    holder.create_ephemeral_sequential("/locks/deploy /lock-", b"");
    let rows = shown(env.zklock(["ls"]));
    let locks: Vec<&str> = rows
        .iter()
        .skip(1)
        .map(|row| row.split("  ").next().unwrap())
        .collect();
    assert_eq!(locks, ["/locks/deploy", "\"/locks/deploy \""], "{rows:#?}");
}
