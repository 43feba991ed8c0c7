//! Help and man pages at an 80-column terminal: nothing wider than 80
//! columns, examples that fit without wrapping and paste as they are (no
//! `\` continuations), the command's own options before the connection and
//! security ones, and a SYNOPSIS that names every option's value. `-h` is
//! short (an option a line, the examples), `--help` wraps its prose to the
//! terminal; variables are named, never their values; a mistyped
//! subcommand gets the closest; `man` at a terminal goes through man(1).

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

/// The lines of `text` under its option headings (`Options:`, `Output
/// options:`...), up to the examples.
fn option_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut in_options = false;
    for line in text.lines() {
        if line.starts_with("Examples:") || line.starts_with("Example:") {
            break;
        }
        if !line.starts_with(' ') && !line.is_empty() {
            in_options = line.ends_with("options:") || line.ends_with("Options:");
            continue;
        }
        if in_options && !line.is_empty() {
            lines.push(line);
        }
    }
    lines
}

#[test]
fn short_help_gives_each_option_one_line_with_its_examples_alone() {
    for subcommand in SUBCOMMANDS {
        let text = help(subcommand, "-h", 80);
        // A line of options that does not name one goes on the line above:
        // only a list of the values an option takes may be that long.
        let mut entry = String::new();
        for line in option_lines(&text) {
            if line.trim_start().starts_with('-') {
                entry = line.to_owned();
                continue;
            }
            entry = format!("{entry}\n{line}");
            assert!(
                entry.contains("[possible"),
                "zklock {subcommand} -h, an option's help on two lines:\n{entry}"
            );
        }
        // The prose of the manual is for --help.
        let after = text.split("Examples:").nth(1).unwrap_or_default();
        assert!(
            after
                .lines()
                .all(|line| line.is_empty() || line.starts_with("  ")),
            "zklock {subcommand} -h: {after}"
        );
    }
    let lock = help("lock", "-h", 80);
    assert!(lock.lines().count() < 70, "{lock}");
    assert!(help("lock", "--help", 80).contains("Several locks (lock A B C"));
}

#[test]
fn long_help_is_wrapped_to_the_terminal_not_where_the_source_breaks() {
    for columns in [60, 80, 100] {
        for subcommand in SUBCOMMANDS {
            let text = help(subcommand, "--help", columns);
            let width = usize::from(columns);
            let lines: Vec<&str> = text.lines().collect();
            for pair in lines.windows(2) {
                let (line, next) = (pair[0], pair[1]);
                let prose = |l: &str| !l.is_empty() && !l.starts_with(' ');
                // The usage line is clap's, one line however long.
                assert!(
                    line.starts_with("Usage:") || line.chars().count() <= width,
                    "zklock {subcommand} --help: {line}"
                );
                if !(prose(line) && prose(next)) {
                    continue;
                }
                // Within a paragraph, a line ends only where the next word
                // would not have fitted.
                let word = next.split(' ').next().unwrap_or_default();
                assert!(
                    line.chars().count() + 1 + word.chars().count() >= width,
                    "zklock {subcommand} --help at {columns} columns breaks early:\n{line}\n{next}"
                );
            }
        }
    }
}

#[test]
fn zklock_h_shows_the_hosts_and_the_root() {
    let text = help("", "-h", 80);
    for option in ["-H, --hosts <HOSTS>", "--root <PATH>"] {
        assert!(text.contains(option), "{option}: {text}");
    }
}

#[test]
fn a_variable_is_named_in_one_form_and_its_value_never_shown() {
    let run = Zklock::new(["lock", "--help"])
        .env("COLUMNS", "200")
        .env("ZKLOCK_CLUSTER", "")
        .env("ZKLOCK_HOSTS", "secret-host:2181")
        .env("ZKLOCK_SASL_USER", "alice")
        .run();
    run.assert_success();
    let hints: Vec<&str> = run
        .stdout
        .split("[env: ")
        .skip(1)
        .map(|rest| rest.split(']').next().unwrap_or_default())
        .collect();
    assert!(hints.len() > 10, "{}", run.stdout);
    for hint in hints {
        assert!(
            hint.chars().all(|c| c.is_ascii_uppercase() || c == '_'),
            "[env: {hint}]"
        );
    }
}

#[test]
fn a_usage_line_leaves_out_what_the_environment_set() {
    let run = Zklock::new(["lock"])
        .env("ZKLOCK_HOSTS", "h:1")
        .env("ZKLOCK_TLS_CA", "/ca.pem")
        .run();
    run.assert_code(2);
    let usage = run
        .stderr
        .lines()
        .find(|line| line.starts_with("Usage:"))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert!(usage.contains("<LOCK>"), "{usage}");
    assert!(
        !usage.contains("--hosts") && !usage.contains("--tls-ca"),
        "{usage}"
    );
    // What the command line gave is shown as clap shows it.
    let run = Zklock::new(["--tls-cert", "/c.pem", "lock", "x"]).run();
    run.assert_code(2);
    assert!(run.stderr.contains("--tls-key"), "{}", run.stderr);
}

#[test]
fn a_mistyped_subcommand_suggests_the_closest_alone() {
    for (typed, meant) in [("lokc", "lock"), ("stta", "stat"), ("wacth", "watch")] {
        let run = Zklock::new([typed, "x"]).run();
        run.assert_code(2);
        let tip = run
            .stderr
            .lines()
            .find(|line| line.contains("tip:"))
            .unwrap_or_else(|| panic!("{}", run.stderr));
        assert!(tip.ends_with(&format!("'{meant}'")), "{typed}: {tip}");
        assert!(
            tip.contains("a similar subcommand exists"),
            "{typed}: {tip}"
        );
    }
}

/// `zklock man lock` on a terminal, with `path` as PATH; what it showed.
fn man_on_terminal(path: &str) -> crate::support::Run {
    let run = crate::terminal::on_terminal(
        &Zklock::new(["man", "lock"])
            .env("PATH", path)
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env("MANWIDTH", "80"),
        &[],
    );
    run.assert_success();
    run
}

#[test]
fn man_at_a_terminal_shows_the_page_through_man_and_roff_elsewhere() {
    require_tool("man", "man-db");
    let shown = man_on_terminal(&std::env::var("PATH").unwrap_or_default());
    // man's heading line (its headings are set bold by overstriking).
    assert!(shown.stdout.contains("zklock-lock(1)"), "{}", shown.stdout);
    assert!(!shown.stdout.contains(".SH"), "{}", shown.stdout);
    // Into a pipe: the roff, for `man -l -` or a file.
    let piped = Zklock::new(["man", "lock"]).run();
    piped.assert_success();
    assert!(piped.stdout.contains(".SH SYNOPSIS"), "{}", piped.stdout);
    // Without man, the roff, and stderr says why.
    let empty = std::env::temp_dir().join(format!("zklock-no-man-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let without = man_on_terminal(empty.to_str().unwrap());
    assert!(
        without.stdout.contains(".SH SYNOPSIS"),
        "{}",
        without.stdout
    );
    assert!(
        without.stdout.contains("cannot run man"),
        "{}",
        without.stdout
    );
    std::fs::remove_dir_all(&empty).ok();
}
