//! The checked-in completions and man pages match the clap definitions.
//!
//! When this fails, regenerate them with
//! `ZKLOCK_REGENERATE=1 cargo test --test zklock generated` and commit the result.

use std::path::PathBuf;

use zklock::cli;
use zklock::commands::generated::{MAN_PAGES, Shell, man_file_name};

fn check(file: PathBuf, expected: &str) -> Option<String> {
    if std::env::var_os("ZKLOCK_REGENERATE").is_some() {
        std::fs::write(&file, expected).expect("write generated file");
        return None;
    }
    let actual = std::fs::read_to_string(&file).unwrap_or_default();
    (actual != expected)
        .then(|| format!("{} is stale:\n{}", file.display(), diff(&actual, expected)))
}

fn diff(actual: &str, expected: &str) -> String {
    let actual: Vec<&str> = actual.lines().collect();
    let expected: Vec<&str> = expected.lines().collect();
    let mut out = String::new();
    for i in 0..actual.len().max(expected.len()) {
        let (a, e) = (actual.get(i), expected.get(i));
        if a != e {
            out += &format!(
                "  line {}:\n  - {}\n  + {}\n",
                i + 1,
                a.unwrap_or(&""),
                e.unwrap_or(&"")
            );
        }
    }
    out
}

#[test]
fn completions_and_man_pages_are_fresh() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut stale = Vec::new();
    for shell in Shell::ALL {
        let file = root.join("completions").join(shell.file_name());
        stale.extend(check(file, &cli::completion_script(shell)));
    }
    let pages = cli::man_pages();
    for (command, page) in &pages {
        stale.extend(check(root.join("man").join(man_file_name(command)), page));
    }
    let generated: Vec<&str> = pages.iter().map(|(c, _)| c.as_str()).collect();
    let shipped: Vec<&str> = MAN_PAGES.iter().map(|(c, _)| *c).collect();
    assert_eq!(
        generated, shipped,
        "commands::generated::MAN_PAGES must list one page per subcommand"
    );
    assert!(
        stale.is_empty(),
        "{}\nregenerate with: ZKLOCK_REGENERATE=1 cargo test --test zklock generated",
        stale.join("\n")
    );
}
