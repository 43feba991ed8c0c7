//! The layers hold: clap only in `cli/` (and `main.rs`), the ZooKeeper
//! client crate only in `zk/`, and nothing under `zk/`, `lock/`, `model/` or
//! `verify/` reaches up to `exit` or `output`. Read from the source, so a change that
//! breaks a layer fails here, naming the file and line.

use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// One rule: code (not comments) that names any of `uses` may only be in
/// files under one of `allowed` (paths relative to `src/`); with
/// `forbidden`, it may be anywhere but under those.
struct Rule {
    what: &'static str,
    uses: &'static [&'static str],
    allowed: &'static [&'static str],
    forbidden: &'static [&'static str],
}

const RULES: &[Rule] = &[
    Rule {
        what: "clap outside cli/ and main.rs",
        uses: &["clap::", "clap_complete", "clap_mangen", "use clap"],
        allowed: &["cli/", "main.rs"],
        forbidden: &[],
    },
    Rule {
        what: "the ZooKeeper client crate outside zk/",
        uses: &["zookeeper_client::", "use zookeeper_client", "zkc::"],
        allowed: &["zk/"],
        forbidden: &[],
    },
    Rule {
        what: "exit or output below the commands",
        uses: &[
            "crate::exit",
            "crate::output",
            "crate::{exit",
            "crate::{output",
        ],
        allowed: &[],
        forbidden: &["zk/", "lock/", "model/", "verify/"],
    },
];

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src/") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

/// The lines of `text` that break `rule` for the file at `relative`.
fn breaches(rule: &Rule, relative: &str, text: &str) -> Vec<String> {
    let under = |dirs: &[&str]| dirs.iter().any(|dir| relative.starts_with(dir));
    let applies = if rule.forbidden.is_empty() {
        !under(rule.allowed)
    } else {
        under(rule.forbidden)
    };
    if !applies {
        return Vec::new();
    }
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .filter(|(_, line)| rule.uses.iter().any(|used| line.contains(used)))
        .map(|(n, line)| format!("{}: src/{relative}:{}: {}", rule.what, n + 1, line.trim()))
        .collect()
}

#[test]
fn every_layer_keeps_to_itself() {
    let mut files = Vec::new();
    sources(Path::new(SRC), &mut files);
    assert!(files.len() > 20, "too few sources under {SRC}: {files:?}");
    let mut found = Vec::new();
    for file in &files {
        let relative = file
            .strip_prefix(SRC)
            .expect("under src/")
            .to_string_lossy()
            .trim_start_matches('/')
            .to_owned();
        let text = std::fs::read_to_string(file).expect("read a source file");
        for rule in RULES {
            found.extend(breaches(rule, &relative, &text));
        }
    }
    assert!(found.is_empty(), "layers broken:\n{}", found.join("\n"));
}

#[test]
fn the_layer_check_sees_a_breach() {
    let clap_in_lock = breaches(
        &RULES[0],
        "lock/hold.rs",
        "use clap::Parser;\n// clap:: in a comment",
    );
    assert_eq!(clap_in_lock.len(), 1, "{clap_in_lock:?}");
    assert!(breaches(&RULES[0], "cli/mod.rs", "use clap::Parser;").is_empty());
    assert_eq!(
        breaches(&RULES[1], "commands/ls.rs", "let s: zkc::Stat;").len(),
        1
    );
    assert_eq!(
        breaches(&RULES[2], "model/walk.rs", "use crate::output::inert;").len(),
        1
    );
    assert!(breaches(&RULES[2], "commands/ls.rs", "use crate::output::inert;").is_empty());
}
