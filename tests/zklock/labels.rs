//! Prometheus label values are lock paths exactly: two locks, one whose
//! name holds U+202E and one whose name holds the text of its escape
//! (`\u{202e}`), are two series, in `ls -o prometheus` and in both of the
//! exporter's formats, as `promtool check metrics` and a reader of the
//! format see them; on a terminal the metrics are shown escaped, and
//! stderr says so.

use crate::monitoring::{WAIT, exporter, get, promtool_accepts};
use crate::support::tmux::{Tmux, command_line};
use crate::support::{Scratch, TestEnv, wait_until};

use std::collections::BTreeSet;

/// The two locks.
const LOCKS: [&str; 2] = ["/locks/bi\u{202e}di", "/locks/bi\\u{202e}di"];

/// Two locks, each with a contender, whose names differ only in a control
/// character and the text of its escape.
fn plant(env: &TestEnv) {
    for lock in LOCKS {
        env.zk().mkdir_p(lock);
        env.zk()
            .create_ephemeral_sequential(&format!("{lock}/lock-"), b"");
    }
}

/// The label values of one label of a sample line, read as the formats
/// define them (backslash escapes a backslash, a double quote or `n`).
fn label_values(line: &str) -> Vec<(String, String)> {
    let Some((_, labels)) = line.split_once('{') else {
        return Vec::new();
    };
    let mut chars = labels.chars();
    let mut values = Vec::new();
    loop {
        let name: String = chars.by_ref().take_while(|c| *c != '=').collect();
        assert_eq!(chars.next(), Some('"'), "a quoted value in {line:?}");
        let mut value = String::new();
        loop {
            match chars.next().expect("a closing quote") {
                '"' => break,
                '\\' => value.push(match chars.next() {
                    Some('n') => '\n',
                    Some(c @ ('\\' | '"')) => c,
                    other => panic!("{other:?} escaped in {line:?}"),
                }),
                c => value.push(c),
            }
        }
        values.push((name, value));
        match chars.next() {
            Some(',') => {}
            Some('}') => return values,
            other => panic!("{other:?} after a label in {line:?}"),
        }
    }
}

/// The `lock` labels of the `zklock_lock_holders` series of a document.
fn locks_of(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|line| line.starts_with("zklock_lock_holders{"))
        .flat_map(label_values)
        .filter(|(name, _)| name == "lock")
        .map(|(_, value)| value)
        .collect()
}

fn both_locks() -> BTreeSet<String> {
    LOCKS.iter().map(|lock| lock.to_string()).collect()
}

#[test]
fn a_control_character_and_the_text_of_its_escape_are_two_series() {
    let env = TestEnv::new();
    plant(&env);
    let listed = env.zklock(["-o", "prometheus", "ls", "/locks"]).run();
    listed.assert_success();
    promtool_accepts(&listed.stdout);
    assert_eq!(locks_of(&listed.stdout), both_locks(), "{}", listed.stdout);

    let (_running, address) = exporter(env.zklock(Vec::<&str>::new()), &[]);
    wait_until(WAIT, "the exporter serves both locks", || {
        get(&address, "/metrics", None).is_some_and(|(_, _, text)| locks_of(&text) == both_locks())
    });
    let (_, _, text) = get(&address, "/metrics", None).expect("an answer");
    promtool_accepts(&text);
    let open_metrics = "application/openmetrics-text;version=1.0.0";
    let (_, _, open) = get(&address, "/metrics", Some(open_metrics)).expect("an answer");
    assert!(open.ends_with("# EOF\n"));
    assert_eq!(locks_of(&open), both_locks(), "{open}");
}

#[test]
fn on_a_terminal_the_metrics_are_shown_escaped_and_stderr_says_so() {
    let env = TestEnv::new();
    plant(&env);
    let scratch = Scratch::new();
    let stderr = scratch.file("stderr");
    let tmux = Tmux::start(200, 40);
    let before = tmux.stty(&scratch.file("before"));
    let command = command_line(&env.zklock(["-o", "prometheus", "ls", "/locks"]));
    tmux.launch(&format!("{command} 2>{}", stderr.display()), &scratch);
    assert_eq!(tmux.ended(&before, &scratch), 0);
    let screen = tmux.screen();
    assert!(!screen.contains('\u{202e}'), "{screen}");
    assert!(
        screen.contains("zklock_lock_holders{lock=\"/locks/bi\\u{202e}di\""),
        "{screen}"
    );
    let said = std::fs::read_to_string(&stderr).expect("stderr");
    assert!(said.contains("escaped"), "{said}");
}
