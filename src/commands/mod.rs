//! One module per subcommand, each a short function over the core that
//! returns the exit status.

pub mod dump;
pub mod generated;
pub mod lock;
pub mod ls;
pub mod reap;
pub mod release;
pub mod stat;
pub mod watch;

use anyhow::Result;

use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::zk::sessions::{self, Ask, Survey};
use crate::zk::{self, Session};

/// A subcommand with its checked arguments.
#[derive(Debug)]
pub enum Command {
    Lock(lock::LockArgs),
    Release(release::ReleaseArgs),
    Stat(stat::StatArgs),
    Ls(ls::LsArgs),
    Dump(dump::DumpArgs),
    Watch(watch::WatchArgs),
    Reap(reap::ReapArgs),
    Completions(generated::Shell),
    Man(Option<String>),
}

/// Runs one subcommand.
pub async fn run(globals: &Globals, command: Command) -> Result<ExitStatus> {
    match command {
        Command::Lock(args) => lock::run(globals, args).await,
        Command::Release(args) => release::run(globals, args).await,
        Command::Stat(args) => stat::run(globals, args).await,
        Command::Ls(args) => ls::run(globals, args).await,
        Command::Dump(args) => dump::run(globals, args).await,
        Command::Watch(args) => watch::run(globals, args).await,
        Command::Reap(args) => reap::run(globals, args).await,
        Command::Completions(shell) => generated::completions(globals, shell),
        Command::Man(page) => generated::man(globals, page.as_deref()),
    }
}

/// Opens a session and, at the same time, asks every ensemble member who is
/// behind its sessions, so the survey costs no time beyond the connect (it is
/// bounded by a short timeout per member).
pub async fn connect_and_survey(globals: &Globals, ask: Ask) -> Result<(Session, Survey)> {
    let (session, survey) = tokio::join!(
        zk::connect(&globals.connect),
        sessions::survey(&globals.connect.hosts, globals.admin_port, ask)
    );
    if let Some(why) = survey.why_unknown() {
        globals.printer.note(&why);
    }
    Ok((session?, survey))
}
