//! `zklock completions SHELL` and `zklock man [COMMAND]`: print a completion
//! script, or show a man page (through man(1) at a terminal).
//!
//! Both are generated from the clap definitions by `cli::generate`, which
//! also writes them under completions/ and man/ for packages; a test fails
//! with a diff when those files are stale.

use std::io::IsTerminal;

use anyhow::Result;

use crate::config::Globals;
use crate::exit::ExitStatus;

/// The shells zklock ships completions for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

impl Shell {
    /// Every shell, in the order the files are listed.
    pub const ALL: [Shell; 3] = [Shell::Bash, Shell::Zsh, Shell::Fish];

    /// The checked-in file name under completions/.
    pub fn file_name(self) -> &'static str {
        match self {
            Shell::Bash => "zklock.bash",
            Shell::Zsh => "_zklock",
            Shell::Fish => "zklock.fish",
        }
    }
}

/// The file name under man/ of the page for `command` ("" for zklock).
pub fn man_file_name(command: &str) -> String {
    if command.is_empty() {
        "zklock.1".to_owned()
    } else {
        format!("zklock-{command}.1")
    }
}

/// Prints a completion script or a man page, as generated from the
/// command-line definitions (the same text as the checked-in file).
pub fn print(globals: &Globals, text: &str) -> Result<ExitStatus> {
    globals.printer.own_text(text.trim_end())?;
    Ok(ExitStatus::Success)
}

/// Shows a man page: at a terminal through man(1), formatted and paged as
/// `git help` shows its pages; into a pipe or a file as roff, for `man -l`,
/// a package or a check. Where man cannot be run, the roff is printed and
/// stderr says why.
pub fn show_man(globals: &Globals, page: &str) -> Result<ExitStatus> {
    if !std::io::stdout().is_terminal() {
        return print(globals, page);
    }
    match through_man(page) {
        Ok(status) if status.success() => Ok(ExitStatus::Success),
        Ok(status) => {
            globals.printer.note(&format!("man failed: {status}"));
            Ok(ExitStatus::Other)
        }
        Err(err) => {
            globals
                .printer
                .note(&format!("cannot run man ({err}): the page's roff follows"));
            print(globals, page)
        }
    }
}

/// Runs `man -l -` with `page` on its stdin, and waits for it (the reader
/// may page for as long as they like).
fn through_man(page: &str) -> std::io::Result<std::process::ExitStatus> {
    use std::io::Write;
    let mut man = std::process::Command::new("man")
        .args(["-l", "-"])
        .stdin(std::process::Stdio::piped())
        .spawn()?;
    if let Some(mut stdin) = man.stdin.take() {
        // man may quit before it has read the whole page (a reader who
        // presses q at once): a broken pipe is no error.
        let _ = stdin.write_all(page.as_bytes());
    }
    man.wait()
}
