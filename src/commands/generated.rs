//! `zklock completions SHELL` and `zklock man [COMMAND]`: print a completion
//! script or a man page.
//!
//! Both are generated from the clap definitions by `cli::generate`, which
//! also writes them under completions/ and man/ for packages; a test fails
//! with a diff when those files are stale.

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
