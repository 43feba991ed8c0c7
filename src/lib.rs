//! zklock: drive and inspect distributed locks kept in Apache ZooKeeper.
//!
//! The binary parses its arguments with [`cli`], and an [`Invocation`]
//! does the rest; integration tests and benchmarks reach the same core
//! through this crate.

// The crate's documentation is for the people who work on it, so it is
// built with private items (`cargo doc --document-private-items`), and the
// few public items may link to them.
#![allow(rustdoc::private_intra_doc_links)]

// The doc comments of the clap definitions are help text, written for a
// terminal: `[/chroot]` there is an optional part, not an intra-doc link.
pub mod admin;
#[allow(rustdoc::broken_intra_doc_links)]
pub mod cli;
pub mod clock;
pub mod commands;
pub(crate) mod config;
pub mod exit;
pub(crate) mod history;
pub mod lock;
pub(crate) mod model;
pub(crate) mod names;
pub mod output;
pub(crate) mod procfs;
pub(crate) mod run;
pub(crate) mod serve;
pub(crate) mod shell;
pub(crate) mod sys;
pub(crate) mod usage;
pub(crate) mod verify;
pub(crate) mod watch;
pub mod zk;

use anyhow::{Context, Result};

use crate::exit::ExitStatus;

/// A command line checked and turned into configuration, ready to run.
pub struct Invocation {
    globals: config::Globals,
    command: commands::Subcommand,
    /// The guard process the command run under a lock starts behind.
    guard: Option<run::guard::Standby>,
}

impl Invocation {
    /// Checks the parsed arguments: usage errors come back here, before any
    /// connection is made. When the command line runs a command under a
    /// lock, also forks the guard process that will start it: call this
    /// while the process has a single thread, before the async runtime.
    pub fn new(cli: cli::Cli) -> Result<Invocation> {
        let (globals, command) = cli.into_config()?;
        let guard = if command.runs_a_command() {
            match run::guard::fork().context("cannot start the guard process")? {
                run::guard::Fork::Zklock(standby) => Some(standby),
                run::guard::Fork::Guard(guard) => {
                    // The guard needs none of the settings, and keeps no
                    // copy of their secrets.
                    drop((globals, command));
                    guard.serve()
                }
            }
        } else {
            None
        };
        Ok(Invocation {
            globals,
            command,
            guard,
        })
    }

    /// Sets up logging and runs the subcommand. A guard that started no
    /// command ends when zklock lets go of it, before this returns.
    pub async fn run(self) -> Result<ExitStatus> {
        init_logging(self.globals.verbosity, self.globals.printer.color);
        commands::run(&self.globals, self.command, self.guard).await
    }
}

/// The environment variable that turns the `-v` log into JSON lines.
pub const LOG_FORMAT_ENV: &str = "ZKLOCK_LOG_FORMAT";

/// Logging to stderr for `-v`; coloured only when the printer colours
/// (stderr a terminal, `NO_COLOR` unset), and written beside the live line
/// when one is shown. With `ZKLOCK_LOG_FORMAT=json` each line is a JSON
/// object, and the moments scripts and tests may wait for carry a stable
/// `event` field (documented in docs/GUIDE.md); the wording of the messages
/// is for people and may change.
fn init_logging(verbosity: u8, color: bool) {
    use tracing::level_filters::LevelFilter;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let (ours, client) = match verbosity {
        0 => return,
        1 => (LevelFilter::INFO, LevelFilter::WARN),
        2 => (LevelFilter::DEBUG, LevelFilter::INFO),
        _ => (LevelFilter::TRACE, LevelFilter::DEBUG),
    };
    let filter = tracing_subscriber::filter::Targets::new()
        .with_target("zklock", ours)
        .with_target("zookeeper_client", client);
    let layer = tracing_subscriber::fmt::layer().with_writer(|| output::StderrBeside);
    let registry = tracing_subscriber::registry().with(filter);
    if std::env::var(LOG_FORMAT_ENV).is_ok_and(|format| format == "json") {
        registry.with(layer.json().flatten_event(true)).init();
    } else {
        registry.with(layer.with_ansi(color)).init();
    }
}
