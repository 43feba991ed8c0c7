//! The checked-in completions and man pages match the clap definitions, and
//! every man page is complete: each has every section a reader looks for,
//! names only pages that exist, and lists the exit codes zklock really uses;
//! the user guide's table of exit codes is made from the same table.
//!
//! When the freshness check fails, regenerate them with
//! `ZKLOCK_REGENERATE=1 cargo test --test zklock generated` and commit the result.

use std::path::PathBuf;

use crate::support::Zklock;
use zklock::cli;
use zklock::commands::generated::{Shell, man_file_name};
use zklock::exit::ExitStatus;

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
    assert!(
        stale.is_empty(),
        "{}\nregenerate with: ZKLOCK_REGENERATE=1 cargo test --test zklock generated",
        stale.join("\n")
    );
}

/// The section headings of a roff page, in order.
fn sections(page: &str) -> Vec<String> {
    page.lines()
        .filter_map(|line| line.strip_prefix(".SH "))
        .map(|heading| heading.trim_matches('"').to_owned())
        .collect()
}

/// The body of section `heading`: its lines up to the next heading.
fn section<'p>(page: &'p str, heading: &str) -> Vec<&'p str> {
    page.lines()
        .skip_while(|line| line.strip_prefix(".SH ").map(|h| h.trim_matches('"')) != Some(heading))
        .skip(1)
        .take_while(|line| !line.starts_with(".SH "))
        .collect()
}

#[test]
fn every_man_page_has_every_section_in_order() {
    let wanted = [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "OPTIONS",
        "EXIT STATUS",
        "ENVIRONMENT",
        "FILES",
        "EXAMPLES",
        "SEE ALSO",
    ];
    for (command, page) in cli::man_pages() {
        let found = sections(&page);
        let in_order: Vec<&str> = found
            .iter()
            .map(String::as_str)
            .filter(|h| wanted.contains(h))
            .collect();
        assert_eq!(in_order, wanted, "zklock {command}: sections {found:?}");
        assert!(
            !found.iter().any(|h| h == "EXTRA"),
            "zklock {command}: {found:?}"
        );
    }
}

#[test]
fn see_also_names_only_pages_that_exist() {
    let pages = cli::man_pages();
    let files: Vec<String> = pages.iter().map(|(c, _)| man_file_name(c)).collect();
    for (command, page) in &pages {
        let text = page.replace("\\-", "-");
        // Every reference anywhere on the page, not only in SEE ALSO.
        for word in text.split(|c: char| c.is_whitespace() || c == ',') {
            let Some(name) = word.strip_suffix("(1)") else {
                continue;
            };
            let name = name.trim_start_matches(|c: char| !c.is_ascii_alphanumeric());
            if !name.starts_with("zklock") {
                continue;
            }
            assert!(
                files.contains(&format!("{name}.1")),
                "zklock {command} names {name}(1), which is not among {files:?}"
            );
        }
        let see_also = section(&text, "SEE ALSO").join(" ");
        for (other, _) in pages.iter().filter(|(other, _)| other != command) {
            let reference = match other.as_str() {
                "" => "zklock(1)".to_owned(),
                other => format!("zklock-{other}(1)"),
            };
            assert!(
                see_also.contains(&reference),
                "zklock {command}: SEE ALSO lacks {reference}: {see_also}"
            );
        }
    }
}

#[test]
fn exit_status_lists_every_code_exit_rs_defines() {
    for (command, page) in cli::man_pages() {
        let body = section(&page, "EXIT STATUS");
        let tags: Vec<String> = body
            .windows(2)
            .filter(|pair| pair[0] == ".TP")
            .map(|pair| pair[1].replace("\\fB", "").replace("\\fR", ""))
            .collect();
        let expected: Vec<String> = ExitStatus::TABLE
            .iter()
            .map(|(status, _)| status.documented_code())
            .collect();
        assert_eq!(tags, expected, "zklock {command}");
        for code in ["0", "1", "2", "3", "4", "5", "6", "10", "126", "127"] {
            assert!(
                tags.iter().any(|t| t == code),
                "zklock {command} lacks exit {code}"
            );
        }
    }
}

#[test]
fn environment_lists_the_variables_zklock_reads() {
    for (command, page) in cli::man_pages() {
        let body = section(&page, "ENVIRONMENT").join("\n").replace("\\-", "-");
        for variable in [
            "ZKLOCK_HOSTS",
            "ZK_HOSTS",
            "ZKLOCK_AUTH",
            "ZKLOCK_ROOT",
            "ZKLOCK_CLUSTER",
            "ZKLOCK_CONFIG",
            "NO_COLOR",
        ] {
            assert!(body.contains(variable), "zklock {command}: no {variable}");
        }
        let files = section(&page, "FILES").join("\n");
        assert!(
            files.contains("config.toml"),
            "zklock {command}: FILES {files}"
        );
    }
}

#[test]
fn examples_show_the_pages_own_command() {
    for (command, page) in cli::man_pages().into_iter().filter(|(c, _)| !c.is_empty()) {
        let examples = section(&page, "EXAMPLES").join("\n").replace("\\-", "-");
        assert!(
            examples.contains(&format!("zklock {command}")),
            "zklock {command}: EXAMPLES show no `zklock {command}`:\n{examples}"
        );
    }
}

#[test]
fn man_offers_and_prints_a_page_per_subcommand() {
    for (command, page) in cli::man_pages() {
        let mut args = vec!["man".to_owned()];
        if !command.is_empty() {
            args.push(command.clone());
        }
        let run = Zklock::new(&args).no_hosts().run();
        assert_eq!(run.code, Some(0), "zklock man {command}: {}", run.stderr);
        assert_eq!(
            run.stdout.trim_end(),
            page.trim_end(),
            "zklock man {command}"
        );
    }
    let run = Zklock::new(["man", "no-such-command"]).no_hosts().run();
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stdout.is_empty());
}

/// The user guide's table of exit codes, made from the one table in exit.rs.
fn guide_exit_table() -> String {
    let mut table = String::from("| code | meaning |\n|---|---|\n");
    for (status, meaning) in ExitStatus::TABLE {
        table += &format!("| {} | {meaning} |\n", status.documented_code());
    }
    table
}

#[test]
fn the_guide_lists_the_exit_codes_of_exit_rs() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/GUIDE.md");
    let guide = std::fs::read_to_string(&file).expect("read docs/GUIDE.md");
    let heading = "## Exit codes\n\n";
    let start = guide
        .find(heading)
        .expect("docs/GUIDE.md has ## Exit codes")
        + heading.len();
    let end = start + guide[start..].find("\n\n").expect("the table ends");
    let expected = format!(
        "{}{}{}",
        &guide[..start],
        guide_exit_table().trim_end(),
        &guide[end..]
    );
    if let Some(stale) = check(file, &expected) {
        panic!("{stale}\nregenerate with: ZKLOCK_REGENERATE=1 cargo test --test zklock generated");
    }
}
