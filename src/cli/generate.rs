//! The generated files: shell completions and man pages, both made from the
//! clap definitions, checked in under completions/ and man/ and kept fresh by
//! a test.

use clap::CommandFactory;

use super::Cli;
use crate::commands::generated::Shell;

/// Generates the completion script for `shell` from these definitions (what
/// completions/ must hold).
pub fn completion_script(shell: Shell) -> String {
    let generator = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut script = Vec::new();
    clap_complete::generate(generator, &mut Cli::command(), "zklock", &mut script);
    String::from_utf8(script).expect("completion scripts are UTF-8")
}

/// Generates every man page from these definitions: the subcommand name (""
/// for zklock itself) and the page in roff (what man/ must hold).
pub fn man_pages() -> Vec<(String, String)> {
    let mut command = Cli::command();
    command.build();
    let mut pages = vec![(String::new(), render_man(command.clone()))];
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = sub.get_name().to_owned();
        let page = render_man(sub.clone().name(format!("zklock-{name}")));
        pages.push((name, page));
    }
    pages
}

fn render_man(command: clap::Command) -> String {
    let mut page = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut page)
        .expect("rendering into memory cannot fail");
    String::from_utf8(page).expect("man pages are UTF-8")
}
