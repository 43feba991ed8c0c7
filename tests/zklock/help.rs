//! Help and man pages at an 80-column terminal: nothing wider than 80
//! columns, examples that fit without wrapping and paste as they are (no
//! `\` continuations), the command's own options before the connection and
//! security ones, and a SYNOPSIS that names every option's value.

use std::process::Command;

use crate::support::Zklock;
use crate::support::secured::require_tool;
use zklock::cli;

const SUBCOMMANDS: [&str; 14] = [
    "",
    "lock",
    "rlock",
    "wlock",
    "sem",
    "release",
    "check",
    "stat",
    "ls",
    "dump",
    "watch",
    "reap",
    "completions",
    "man",
];

/// `zklock SUBCOMMAND --help` (or `-h`) with the terminal `columns` wide.
fn help(subcommand: &str, flag: &str, columns: u16) -> String {
    let mut args: Vec<&str> = Vec::new();
    if !subcommand.is_empty() {
        args.push(subcommand);
    }
    args.push(flag);
    let run = Zklock::new(args).env("COLUMNS", columns.to_string()).run();
    run.assert_success();
    run.stdout
}

#[test]
fn help_fits_80_columns_and_examples_paste_as_they_are() {
    for subcommand in SUBCOMMANDS {
        for flag in ["-h", "--help"] {
            let text = help(subcommand, flag, 80);
            let wide: Vec<&str> = text.lines().filter(|l| l.chars().count() > 80).collect();
            assert!(wide.is_empty(), "zklock {subcommand} {flag}: {wide:#?}");
            // Unwrapped, every example line already fits.
            let unwrapped = help(subcommand, flag, 250);
            let examples = unwrapped.split("Examples:").nth(1).unwrap_or_default();
            for line in examples.lines().filter(|l| l.starts_with("  ")) {
                assert!(line.chars().count() <= 78, "zklock {subcommand}: {line}");
                assert!(!line.ends_with('\\'), "zklock {subcommand}: {line}");
            }
        }
    }
    let lock = help("lock", "--help", 80);
    let own = lock.find("--no-wait").unwrap();
    for heading in ["Connection options:", "Security options", "Output options:"] {
        let at = lock
            .find(heading)
            .unwrap_or_else(|| panic!("{heading}: {lock}"));
        assert!(own < at, "lock's own options come before {heading}");
    }
}

#[test]
fn man_pages_fit_80_columns_with_a_full_synopsis() {
    require_tool("man", "man-db");
    let dir = std::env::temp_dir().join(format!("zklock-man-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, page) in cli::man_pages() {
        let file = dir.join(format!("{name}.1"));
        std::fs::write(&file, &page).unwrap();
        let shown = Command::new("man")
            .arg("-l")
            .arg(&file)
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .output()
            .expect("man runs");
        let text = String::from_utf8_lossy(&shown.stdout);
        assert!(text.contains("SYNOPSIS"), "zklock {name}: {text}");
        let wide: Vec<&str> = text.lines().filter(|l| l.chars().count() > 80).collect();
        assert!(wide.is_empty(), "zklock {name}: {wide:#?}");
        if name == "lock" {
            let synopsis = text.split("DESCRIPTION").next().unwrap();
            assert!(synopsis.contains("--timeout DUR"), "{synopsis}");
            assert!(synopsis.contains("LOCK [-- COMMAND...]"), "{synopsis}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
