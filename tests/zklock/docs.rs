//! The documentation stays true to the program: every `zklock` command line
//! in a shell example is one zklock accepts, every link between the
//! documents leads to a file and a heading that exist, every sample table
//! has the columns zklock prints, and the README's test command is the one
//! CI runs.
//!
//! An example is checked by running it with `--help` put before its `--`
//! (or at its end): clap then parses every flag and value before it, and
//! exits 0 only when all of them are known and valid, without connecting
//! anywhere.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::support::{TestEnv, Zklock};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every user and developer document: the top-level ones and docs/*.md.
fn documents() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "BENCHMARKS.md"]
        .iter()
        .map(|name| root().join(name))
        .collect();
    let mut in_docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("read docs/")
        .map(|entry| entry.expect("a docs/ entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    in_docs.sort();
    files.extend(in_docs);
    files
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|err| panic!("read {}: {err}", path.display()))
}

/// The lines of the document's fenced blocks of the given language, with
/// backslash continuations joined.
fn fenced_lines(text: &str, language: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut inside = None::<bool>;
    let mut pending = String::new();
    for line in text.lines() {
        if let Some(fence) = line.trim_start().strip_prefix("```") {
            inside = match inside {
                None => Some(fence.trim() == language),
                Some(_) => None,
            };
            continue;
        }
        if inside != Some(true) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(start) => pending.push_str(start),
            None => {
                pending.push_str(line);
                lines.push(std::mem::take(&mut pending));
            }
        }
    }
    lines
}

/// The shell words of `text` up to the end of its command (an unquoted
/// `#`, `|`, `;`, `&`, `>`, `<` or `)`), each word that holds a `$`
/// expansion replaced by a stand-in, since only its place matters.
fn shell_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut started = false;
    let mut expands = false;
    let mut chars = text.chars().peekable();
    let mut finish = |word: &mut String, started: &mut bool, expands: &mut bool| {
        if *started {
            words.push(if *expands {
                "1".to_owned()
            } else {
                std::mem::take(word)
            });
        }
        word.clear();
        *started = false;
        *expands = false;
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                started = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                started = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        '$' => {
                            expands = true;
                            word.push(c);
                        }
                        _ => word.push(c),
                    }
                }
            }
            '\\' => {
                started = true;
                word.extend(chars.next());
            }
            '$' => {
                started = true;
                expands = true;
                word.push(c);
            }
            '#' if !started => break,
            '|' | ';' | '&' | '>' | '<' | ')' => break,
            c if c.is_whitespace() => finish(&mut word, &mut started, &mut expands),
            c => {
                started = true;
                word.push(c);
            }
        }
    }
    finish(&mut word, &mut started, &mut expands);
    words
}

/// The argument lists of the `zklock` command lines in a shell line: at
/// its start, or after `$(`, `|`, `&&`, `;`.
fn zklock_commands(line: &str) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    for (at, _) in line.match_indices("zklock ") {
        let before = line[..at].trim_end();
        let starts_command = before.is_empty()
            || ["$(", "|", "&&", ";", "sudo"]
                .iter()
                .any(|sep| before.ends_with(sep));
        if starts_command {
            commands.push(shell_words(&line[at + "zklock ".len()..]));
        }
    }
    commands
}

/// The arguments with `--help` put before the command's `--`, or at the end.
fn asking_for_help(args: &[String]) -> Vec<String> {
    let end = args
        .iter()
        .position(|arg| arg == "--")
        .unwrap_or(args.len());
    let mut asked = args[..end].to_vec();
    asked.push("--help".to_owned());
    asked
}

#[test]
fn every_zklock_example_in_the_docs_is_a_command_line_zklock_accepts() {
    let mut checked = 0;
    let mut refused = Vec::new();
    for file in documents() {
        for line in fenced_lines(&read(&file), "sh") {
            for args in zklock_commands(&line) {
                let run = Zklock::new(asking_for_help(&args)).no_hosts().run();
                checked += 1;
                if run.code != Some(0) {
                    refused.push(format!("{}: {line}\n{}", file.display(), run.stderr));
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} examples found: is the extraction broken?"
    );
    assert!(
        refused.is_empty(),
        "{} examples zklock refuses:\n{}",
        refused.len(),
        refused.join("\n")
    );
}

/// The headings of a document (outside code blocks), each with its level
/// and the anchor GitHub makes for it: lower case, punctuation dropped,
/// spaces as hyphens, a repeated heading numbered.
fn headings(text: &str) -> Vec<(usize, String)> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut headings = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#');
        let level = line.len() - title.len();
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let count = seen.entry(slug.clone()).or_default();
        headings.push((
            level,
            match *count {
                0 => slug,
                n => format!("{slug}-{n}"),
            },
        ));
        *count += 1;
    }
    headings
}

/// The relative links of a document (`[text](target)`), outside code.
fn relative_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        for (at, _) in line.match_indices("](") {
            let rest = &line[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            if !target.contains("://") && !target.starts_with("mailto:") {
                links.push(target.to_owned());
            }
        }
    }
    links
}

#[test]
fn every_link_between_the_docs_leads_to_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in documents() {
        let dir = file.parent().expect("a document's directory");
        for link in relative_links(&read(&file)) {
            checked += 1;
            let (path, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target = if path.is_empty() {
                file.clone()
            } else {
                dir.join(path)
            };
            if !target.exists() {
                broken.push(format!("{}: {link}: no such file", file.display()));
                continue;
            }
            if !anchor.is_empty()
                && target.extension().is_some_and(|ext| ext == "md")
                && !headings(&read(&target))
                    .iter()
                    .any(|(_, known)| known == anchor)
            {
                broken.push(format!("{}: {link}: no such heading", file.display()));
            }
        }
    }
    assert!(checked > 30, "only {checked} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_quick_start_runs_the_test_command_ci_runs() {
    let ci = read(&root().join(".ci/run"));
    let command = ci
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .expect(".ci/run runs a command")
        .trim();
    let readme = read(&root().join("README.md"));
    assert!(
        fenced_lines(&readme, "sh")
            .iter()
            .any(|line| line.trim() == command),
        "the README shows no `{command}` block, which .ci/run runs"
    );
}

#[test]
fn the_guide_s_contents_list_every_section_in_order() {
    let guide = read(&root().join("docs/GUIDE.md"));
    let start = guide
        .find("## Contents\n")
        .expect("the guide has ## Contents");
    let end = start + 1 + guide[start + 1..].find("\n## ").expect("a section follows");
    let listed: Vec<&str> = guide[start..end]
        .split("](#")
        .skip(1)
        .map(|rest| rest.split(')').next().unwrap_or_default())
        .collect();
    let sections: Vec<String> = headings(&guide)
        .into_iter()
        .filter(|(level, anchor)| matches!(level, 2 | 3) && anchor != "contents")
        .map(|(_, anchor)| anchor)
        .collect();
    assert_eq!(
        listed, sections,
        "the guide's contents must list its ## and ### sections, in order"
    );
}

/// The words of the first table header among `lines`: a line of upper-case
/// words only.
fn header_words(lines: &[String]) -> Option<Vec<String>> {
    lines.iter().find_map(|line| {
        let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        let header = !words.is_empty()
            && words
                .iter()
                .all(|word| word.chars().all(|c| c.is_ascii_uppercase()));
        header.then_some(words)
    })
}

#[test]
fn the_table_samples_in_the_docs_have_the_columns_zklock_prints() {
    let env = TestEnv::new();
    env.zklock(["lock", "deploy", "--detach", "--lease", "2m"])
        .run()
        .assert_success();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for file in documents() {
        let lines = fenced_lines(&read(&file), "");
        for (i, line) in lines.iter().enumerate() {
            let Some(command) = line.strip_prefix("$ zklock ") else {
                continue;
            };
            let shown: Vec<String> = lines[i + 1..]
                .iter()
                .take_while(|line| !line.starts_with("$ "))
                .cloned()
                .collect();
            let Some(documented) = header_words(&shown) else {
                continue;
            };
            // The sample's locks are not in this ensemble: the columns are
            // the same for any lock, so the test's own stands in.
            let args: Vec<&str> = command
                .split_whitespace()
                .map(|arg| {
                    if arg.starts_with('/') {
                        "/locks/deploy"
                    } else {
                        arg
                    }
                })
                .collect();
            let run = env.zklock(&args).run();
            run.assert_success();
            let printed: Vec<String> = run.stdout.lines().map(str::to_owned).collect();
            checked += 1;
            if header_words(&printed) != Some(documented.clone()) {
                wrong.push(format!(
                    "{}: `zklock {command}` shows {documented:?}, zklock prints:\n{}",
                    file.display(),
                    run.stdout
                ));
            }
        }
    }
    assert!(checked >= 2, "only {checked} table samples found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
