//! What zklock prints, for people and for scripts: tables that never break
//! an identifier and cut only free text, on real terminals of 60 and 80
//! columns; JSON that is one whole document on stdout or nothing, with the
//! error as a JSON object on stderr; `ls`'s filters and sort orders over a
//! shared tree; an absent lock root that is simply "no locks".

use crate::support;
use crate::terminal::on_terminal;

use std::collections::BTreeSet;
use std::time::Duration;

use support::cotenants::{CoTenants, StaleLocks};
use support::json::{ErrorReport, Lock, LockDump, ReapDryRun, ReleaseReport, SessionDump};
use support::{Run, TestEnv, Zklock, dead_port, wait_until};

const WAIT: Duration = Duration::from_secs(30);

/// What the terminal showed, as lines without the terminal's carriage returns.
fn screen(run: &Run) -> Vec<String> {
    run.stdout
        .split('\n')
        .map(|line| line.trim_end_matches('\r').to_owned())
        .filter(|line| !line.is_empty())
        .collect()
}

/// `zklock` on a terminal `columns` wide.
fn at_width(zklock: Zklock, columns: u16) -> Vec<String> {
    let run = on_terminal(&zklock.env("COLUMNS", columns.to_string()), &[]);
    run.assert_success();
    screen(&run)
}

/// Takes a lock with a detached holder and returns its grant.
fn detached(env: &TestEnv, lock: &str, extra: &[&str]) -> support::json::Grant {
    env.zklock(["-o", "json", "lock", lock, "--detach", "--lease", "2m"])
        .args(extra)
        .run()
        .assert_success()
        .json()
}

#[test]
fn json_failures_leave_stdout_empty_and_report_the_error_on_stderr() {
    let env = TestEnv::new();
    let dead = format!("127.0.0.1:{}", dead_port());
    let cases: Vec<(Zklock, i32)> = vec![
        (env.zklock(["ls", "/nope"]), 6),
        (env.zklock(["dump", "nope"]), 6),
        (env.zklock(["dump", "--sessions", "/nope"]), 6),
        (env.zklock(["stat", "nope"]), 6),
        (env.zklock(["release", "/locks/nope/lock-0000000001"]), 6),
        (env.zklock(["reap", "/nope", "--all", "--yes"]), 6),
        (env.zklock(["ls", "a//b"]), 2),
        (env.zklock(["ls", "--older-than", "soon"]), 2),
        (env.zklock(["ls", "--no-such-flag"]), 2),
        (env.zklock(["ls", "--connect-timeout", "1s"]).hosts(dead), 3),
    ];
    for (zklock, code) in cases {
        let run = zklock.arg("-o").arg("json").run();
        run.assert_code(code);
        assert_eq!(run.stdout, "", "stdout must hold nothing: {run:?}");
        let last = run.stderr.lines().last().unwrap_or_default();
        let error: ErrorReport = serde_json::from_str(last).unwrap_or_else(|e| {
            panic!("stderr's last line is not the error object ({e}): {run:?}")
        });
        assert_eq!(error.exit_code, code, "{run:?}");
    }
}

#[test]
fn every_inspection_and_release_answers_json_as_one_document() {
    let env = TestEnv::new();
    let grant = detached(&env, "jsonish", &[]);
    let locks: Vec<Lock> = env
        .zklock(["ls", "-o", "json"])
        .run()
        .assert_success()
        .json();
    assert_eq!(locks.len(), 1, "{locks:#?}");
    let lock: Lock = env
        .zklock(["stat", "jsonish", "-o", "json"])
        .run()
        .assert_success()
        .json();
    assert_eq!(lock.holders[0].path, grant.token);
    assert_eq!(lock.holders[0].fence, grant.fence);
    assert_eq!(lock.holders[0].session, grant.session);
    let dump: LockDump = env
        .zklock(["dump", "-o", "json"])
        .run()
        .assert_success()
        .json();
    assert_eq!(dump.locks.len(), 1);
    let sessions: SessionDump = env
        .zklock(["dump", "--sessions", "-o", "json"])
        .run()
        .assert_success()
        .json();
    assert_eq!(sessions.sessions.len(), 1);
    let dry: ReapDryRun = env
        .zklock(["reap", "--all", "--dry-run", "-o", "json"])
        .run()
        .assert_success()
        .json();
    assert!(
        dry.would_delete.iter().any(|n| n.path == grant.token),
        "{dry:?}"
    );

    let released: ReleaseReport = env
        .zklock(["release", &grant.token, "-o", "json"])
        .run()
        .assert_success()
        .json();
    assert_eq!(released.deleted, std::slice::from_ref(&grant.token));
    // Nothing left to release: still a document, saying nothing was done.
    let again: ReleaseReport = env
        .zklock(["release", &grant.token, "--if-exists", "-o", "json"])
        .run()
        .assert_success()
        .json();
    assert_eq!(
        again,
        ReleaseReport {
            deleted: vec![],
            revoked: vec![],
            skipped: vec![]
        }
    );
}

#[test]
fn an_absent_or_empty_lock_root_is_no_locks() {
    let env = TestEnv::new();
    for made in [false, true] {
        if made {
            env.zk().mkdir_p("/locks");
        }
        let table = env.zklock(["ls"]).run();
        table.assert_success();
        assert_eq!(table.stdout, "", "no header over no rows: {table:?}");
        let json: Vec<Lock> = env
            .zklock(["ls", "-o", "json"])
            .run()
            .assert_success()
            .json();
        assert!(json.is_empty(), "{json:?}");
    }
    // A path that was named must exist.
    env.zklock(["ls", "/locks/nope"]).run().assert_code(6);
}

/// A node's sequence number as tables show it: its last ten digits
/// without leading zeros.
fn sequence_of(node: &str) -> String {
    let digits = &node[node.len() - 10..];
    let shown = digits.trim_start_matches('0');
    if shown.is_empty() { "0" } else { shown }.to_owned()
}

/// The row of the table whose first cell is `first`: a name too long to
/// share its row is on a line of its own above it, ending with `↵`.
fn row<'a>(lines: &'a [String], first: &str) -> &'a str {
    let at = lines
        .iter()
        .position(|line| {
            line.split_whitespace()
                .next()
                .map(|cell| cell.trim_end_matches('↵'))
                == Some(first)
        })
        .unwrap_or_else(|| panic!("no row for {first} in {lines:#?}"));
    match lines[at].trim_end().ends_with('↵') {
        true => &lines[at + 1],
        false => &lines[at],
    }
}

#[test]
fn tables_on_60_and_80_columns_keep_every_identifier_whole() {
    let env = TestEnv::new();
    let lock = "/locks/team-payments/nightly-settlement-batch";
    let owner = "settlement run for every merchant in the eu region, started by the scheduler";
    let grant = detached(&env, lock, &["--data", owner]);
    // A waiter behind it, in a session of its own.
    let waiter_zk = env.connect();
    let waiter = waiter_zk.create_ephemeral_sequential(&format!("{lock}/lock-"), b"");
    let waiter_session = format!("{:#x}", waiter_zk.session_id());
    let holder_node = grant.token.rsplit('/').next().unwrap().to_owned();
    let holder_seq = sequence_of(&holder_node);
    let waiter_seq = sequence_of(waiter.rsplit('/').next().unwrap());

    for columns in [60, 80] {
        let ls = at_width(env.zklock(["ls"]), columns);
        // At 80 the lock shares its line with the counts, and OWNER goes;
        // at 60 it takes a line of its own, and OWNER has room, cut.
        let header: Vec<&str> = ls[0].split_whitespace().collect();
        let mut expected = vec!["LOCK", "KIND", "HOLDERS", "WAITERS", "HELD", "FOR"];
        if columns == 60 {
            expected.push("OWNER");
        }
        assert_eq!(header, expected, "{ls:#?}");
        let lock_row = row(&ls, lock);
        assert_eq!(
            lock_row.ends_with('…'),
            columns == 60,
            "owner is cut: {ls:#?}"
        );
        assert!(!lock_row.contains("scheduler"), "{ls:#?}");

        let stat = at_width(env.zklock(["stat", lock]), columns);
        let holder_row = row(&stat, &holder_seq);
        let waiter_row = row(&stat, &waiter_seq);
        assert!(
            waiter_row.contains(&format!("waiting on {holder_seq}")),
            "a waiter names whom it waits on by sequence number: {stat:#?}"
        );
        assert!(
            holder_row
                .split_whitespace()
                .any(|cell| cell == grant.session),
            "holder's session whole: {stat:#?}"
        );
        assert!(
            waiter_row
                .split_whitespace()
                .any(|cell| cell == waiter_session),
            "waiter's session whole: {stat:#?}"
        );
        assert!(
            stat.iter().any(|line| line.starts_with(lock)),
            "the heading names the lock whole: {stat:#?}"
        );

        // What the table shows can be copied back into the commands that
        // act on it.
        let session = waiter_row
            .split_whitespace()
            .find(|cell| cell.starts_with("0x"))
            .unwrap();
        let dry: ReapDryRun = env
            .zklock(["reap", "--session", session, "--dry-run", "-o", "json"])
            .run()
            .assert_success()
            .json();
        let doomed: Vec<&str> = dry.would_delete.iter().map(|n| n.path.as_str()).collect();
        assert_eq!(doomed, [waiter.as_str()], "{dry:?}");
        let copied_lock = ls
            .iter()
            .filter_map(|line| line.strip_prefix(lock))
            .find(|rest| rest.is_empty() || rest.starts_with([' ', '↵']))
            .map(|_| lock)
            .expect("the lock's name whole on a line");
        let wide = at_width(env.zklock(["stat", lock, "-o", "wide"]), columns);
        let copied_node = row(&wide, &holder_node).split_whitespace().next().unwrap();
        assert_eq!(format!("{copied_lock}/{copied_node}"), grant.token);
    }
    let released: ReleaseReport = env
        .zklock(["release", &format!("{lock}/{holder_node}"), "-o", "json"])
        .run()
        .assert_success()
        .json();
    assert_eq!(released.deleted, [grant.token]);
}

#[test]
fn a_120_kb_owner_is_cut_to_the_width_and_whole_with_wide() {
    let env = TestEnv::new();
    let data = "x".repeat(120 * 1024);
    detached(&env, "big", &["--data", &data]);
    let columns = 80;
    let short = at_width(env.zklock(["ls"]), columns);
    let big = row(&short, "/locks/big");
    assert!(big.chars().count() <= usize::from(columns), "{big}");
    assert!(big.ends_with('…'), "{big}");

    let whole = at_width(env.zklock(["ls", "--no-trunc"]), columns);
    assert!(row(&whole, "/locks/big").contains(&data));
    // A pipe is 80 columns wide, unless -o wide.
    let piped = env.zklock(["ls"]).run();
    piped.assert_success();
    let lines = piped.stdout_lines();
    assert!(
        lines.iter().all(|line| line.chars().count() <= 80),
        "{lines:?}"
    );
    let wide = env.zklock(["ls", "-o", "wide"]).run();
    wide.assert_success();
    assert!(
        wide.stdout_lines().iter().any(|line| line.contains(&data)),
        "-o wide gets the owner whole in a pipe"
    );
}

/// `ls -o json` with `filter`, as lock paths.
fn ls_paths(env: &TestEnv, filter: &[&str]) -> Vec<String> {
    let locks: Vec<Lock> = env
        .zklock(["ls", "/", "-o", "json"])
        .args(filter)
        .run()
        .assert_success()
        .json();
    locks.into_iter().map(|lock| lock.path).collect()
}

fn paths_where(all: &[Lock], keep: impl Fn(&Lock) -> bool) -> Vec<String> {
    all.iter()
        .filter(|lock| keep(lock))
        .map(|lock| lock.path.clone())
        .collect()
}

#[test]
fn ls_filters_and_sorts_a_shared_tree() {
    let env = TestEnv::new();
    let _cotenants = CoTenants::create(&env);
    let stale = StaleLocks::create(&env);
    let marked = detached(&env, "marked", &["--data", "needle-7f3"]);
    let all: Vec<Lock> = env
        .zklock(["ls", "/", "-o", "json"])
        .run()
        .assert_success()
        .json();

    let contended = paths_where(&all, |lock| !lock.waiters.is_empty());
    assert!(!contended.is_empty() && contended.len() < all.len());
    assert_eq!(ls_paths(&env, &["--contended"]), contended);
    let held = paths_where(&all, |lock| !lock.holders.is_empty());
    assert_eq!(ls_paths(&env, &["--held"]), held);
    let kazoo = paths_where(&all, |lock| lock.dialect == "kazoo");
    assert!(!kazoo.is_empty() && kazoo.len() < all.len());
    assert_eq!(ls_paths(&env, &["--dialect", "kazoo"]), kazoo);
    assert_eq!(
        ls_paths(&env, &["--owner", "needle-7f3"]),
        std::slice::from_ref(&marked.lock)
    );
    assert_eq!(
        ls_paths(&env, &["--owner", "needle-7f3", "--contended"]),
        Vec::<String>::new()
    );

    // Age: wait until the marked lock has been held a while, take a fresh
    // one, and only the older passes.
    wait_until(WAIT, "the marked lock is held for 3s", || {
        let lock: Lock = env
            .zklock(["stat", "marked", "-o", "json"])
            .run()
            .assert_success()
            .json();
        lock.holders[0].age_ms >= 3000
    });
    let fresh = detached(&env, "fresh", &[]);
    let old = ls_paths(&env, &["--older-than", "2s"]);
    assert!(old.contains(&marked.lock), "{old:?}");
    assert!(!old.contains(&fresh.lock), "{old:?}");
    assert_eq!(
        ls_paths(&env, &["--older-than", "1h"]),
        Vec::<String>::new()
    );

    // Sort orders.
    let by_path = ls_paths(&env, &[]);
    let mut sorted = by_path.clone();
    sorted.sort();
    assert_eq!(by_path, sorted);
    let by_waiters: Vec<Lock> = env
        .zklock(["ls", "/", "--sort", "waiters", "-o", "json"])
        .run()
        .assert_success()
        .json();
    let waiters: Vec<usize> = by_waiters.iter().map(|l| l.waiters.len()).collect();
    assert!(waiters.windows(2).all(|w| w[0] >= w[1]), "{waiters:?}");
    assert!(waiters[0] > 0);
    let by_age: Vec<Lock> = env
        .zklock(["ls", "/", "--sort", "age", "-o", "json"])
        .run()
        .assert_success()
        .json();
    let held_since: Vec<i64> = by_age
        .iter()
        .map(|l| {
            l.holders
                .iter()
                .map(|h| h.ctime_ms)
                .min()
                .unwrap_or(i64::MAX)
        })
        .collect();
    assert!(
        held_since.windows(2).all(|w| w[0] <= w[1]),
        "{held_since:?}"
    );
    let same: BTreeSet<&String> = by_age.iter().map(|l| &l.path).collect();
    assert_eq!(same, by_path.iter().collect());

    // The same filters apply to the table, which loses only its header line
    // with --no-headers.
    let table = env.zklock(["ls", "/", "--contended"]).run();
    table.assert_success();
    let lines = table.stdout_lines();
    assert_eq!(lines.len(), contended.len() + 1, "{table:?}");
    // The two runs are moments apart, so the age column may have ticked
    // over a second between them: every other cell must be the same.
    let age = lines[0]
        .split_whitespace()
        .position(|word| word == "HELD")
        .expect("the table has a HELD FOR column");
    let cells = |lines: &[&str]| -> Vec<Vec<String>> {
        lines
            .iter()
            .map(|line| {
                let mut cells: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
                cells.remove(age);
                cells
            })
            .collect()
    };
    let bare = env.zklock(["ls", "/", "--contended", "--no-headers"]).run();
    assert_eq!(
        cells(&bare.assert_success().stdout_lines()),
        cells(&lines[1..])
    );
    let firsts: Vec<&str> = lines[1..]
        .iter()
        .map(|line| line.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(firsts, contended);
    stale.stop();
}
