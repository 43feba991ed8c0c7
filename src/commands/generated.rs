//! `zklock completions SHELL` and `zklock man [COMMAND]`: print the files
//! checked in under completions/ and man/.
//!
//! The files are generated from the clap definitions by `cli::generate`;
//! a test fails with a diff when they are stale.

use anyhow::Result;

use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::usage::UsageError;

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

    fn script(self) -> &'static str {
        match self {
            Shell::Bash => include_str!("../../completions/zklock.bash"),
            Shell::Zsh => include_str!("../../completions/_zklock"),
            Shell::Fish => include_str!("../../completions/zklock.fish"),
        }
    }
}

/// The checked-in man pages: the subcommand (empty for zklock itself) and
/// the page.
pub const MAN_PAGES: &[(&str, &str)] = &[
    ("", include_str!("../../man/zklock.1")),
    ("lock", include_str!("../../man/zklock-lock.1")),
    ("rlock", include_str!("../../man/zklock-rlock.1")),
    ("wlock", include_str!("../../man/zklock-wlock.1")),
    ("sem", include_str!("../../man/zklock-sem.1")),
    ("release", include_str!("../../man/zklock-release.1")),
    ("stat", include_str!("../../man/zklock-stat.1")),
    ("ls", include_str!("../../man/zklock-ls.1")),
    ("dump", include_str!("../../man/zklock-dump.1")),
    ("watch", include_str!("../../man/zklock-watch.1")),
    ("reap", include_str!("../../man/zklock-reap.1")),
    (
        "completions",
        include_str!("../../man/zklock-completions.1"),
    ),
    ("man", include_str!("../../man/zklock-man.1")),
];

/// The file name under man/ of the page for `command` ("" for zklock).
pub fn man_file_name(command: &str) -> String {
    if command.is_empty() {
        "zklock.1".to_owned()
    } else {
        format!("zklock-{command}.1")
    }
}

/// Prints the completion script for `shell`.
pub fn completions(globals: &Globals, shell: Shell) -> Result<ExitStatus> {
    globals.printer.own_text(shell.script().trim_end())?;
    Ok(ExitStatus::Success)
}

/// Prints zklock's man page, or the page of subcommand `command`.
pub fn man(globals: &Globals, command: Option<&str>) -> Result<ExitStatus> {
    let wanted = command.unwrap_or("");
    let (_, page) = MAN_PAGES
        .iter()
        .find(|(name, _)| *name == wanted)
        .ok_or_else(|| UsageError::new(format!("no man page for {wanted:?}")))?;
    globals.printer.own_text(page.trim_end())?;
    Ok(ExitStatus::Success)
}
