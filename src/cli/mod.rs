//! Every clap definition of zklock, and their translation into plain
//! configuration. Nothing below this module imports clap.

use std::time::Duration;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

use crate::admin::reap::Selector;
use crate::commands::lock::{self as lock_command, Detached, Holding, LockArgs};
use crate::commands::release::{self, How, ReleaseArgs};
use crate::commands::{Command, dump, generated::Shell, ls, reap, stat, stat::StatArgs, watch};
use crate::config::Globals;
use crate::lock::{Dialect, Kind, name};
use crate::output::{Format, Printer};
use crate::run::parse_signal;
use crate::usage::UsageError;
use crate::zk::{self, Auth, ConnectOptions, Hosts, RetryPolicy};

const EXAMPLES: &str = "\
Examples:
  zklock lock deploy -- ./deploy.sh      run deploy.sh while holding /locks/deploy
  zklock ls                              every lock under /locks
  zklock stat /zookeeper                 the zkCli stat fields of a node
  ZKLOCK_HOSTS=zk1,zk2,zk3/app zklock ls  use an ensemble and a chroot";

/// The connect string when neither `-H`, `ZKLOCK_HOSTS` nor `ZK_HOSTS` gives one.
const DEFAULT_HOSTS: &str = "127.0.0.1:2181";
/// Where lock names live when neither `--root` nor `ZKLOCK_ROOT` says.
const DEFAULT_ROOT: &str = "/locks";

/// Drive and inspect distributed locks kept in Apache ZooKeeper.
///
/// zklock recognises the locks that Apache Curator, kazoo, HBase and
/// ZooKeeper's own recipe leave, and takes its own in Curator's layout.
#[derive(Debug, Parser)]
#[command(name = "zklock", version, after_help = EXAMPLES, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: CliCommand,

    /// The command line ended with a bare `--`: a command was meant to follow
    /// (what `-- "$@"` gives when `$@` is empty).
    #[arg(skip)]
    pub ends_with_separator: bool,
}

impl Cli {
    /// Parses the process's arguments. A clap error exits 2, with a hint
    /// where a habit from flock(1) leads astray.
    pub fn from_env() -> Cli {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        let mut cli = Cli::try_parse_from(&args).unwrap_or_else(|err| with_hint(err).exit());
        cli.ends_with_separator = args.len() > 1 && args.last().is_some_and(|arg| arg == "--");
        cli
    }
}

/// Adds a tip to clap's error for a word where none is expected, in a
/// command that runs a COMMAND: that is almost always the command written
/// without `--` before it.
fn with_hint(mut err: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let stray_word = err.kind() == ErrorKind::UnknownArgument
        && matches!(
            err.get(ContextKind::InvalidArg),
            Some(ContextValue::String(word)) if !word.starts_with('-')
        );
    let runs_a_command = matches!(
        err.get(ContextKind::Usage),
        Some(ContextValue::StyledStr(usage)) if usage.to_string().contains("-- <COMMAND>")
    );
    if stray_word && runs_a_command {
        err.insert(
            ContextKind::Suggested,
            ContextValue::StyledStrs(vec![
                "to run a command under the lock, put it after `--`: zklock lock NAME -- COMMAND..."
                    .into(),
            ]),
        );
    }
    err
}

/// Options every subcommand takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// ZooKeeper connect string: host:port[,host:port...][/chroot]; falls back to env ZK_HOSTS,
    /// then 127.0.0.1:2181
    #[arg(
        short = 'H',
        long,
        global = true,
        env = "ZKLOCK_HOSTS",
        hide_env_values = true,
        value_name = "HOSTS"
    )]
    pub hosts: Option<String>,

    /// Session timeout to ask the server for
    #[arg(long, global = true, default_value = "10s", value_parser = parse_duration, value_name = "DUR")]
    pub session_timeout: Duration,

    /// Give up when no server answers within this time (exit 3)
    #[arg(long, global = true, default_value = "5s", value_parser = parse_duration, value_name = "DUR")]
    pub connect_timeout: Duration,

    /// Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)
    #[arg(
        long,
        global = true,
        env = "ZKLOCK_AUTH",
        value_name = "SCHEME:CREDENTIAL",
        hide_env_values = true
    )]
    pub auth: Vec<String>,

    /// Allow a read-only server (inspection commands only)
    #[arg(long, global = true)]
    pub read_only: bool,

    /// Where lock names live: `deploy` means ROOT/deploy
    #[arg(
        long,
        global = true,
        env = "ZKLOCK_ROOT",
        default_value = DEFAULT_ROOT,
        value_name = "PATH",
        hide_env_values = true
    )]
    pub root: String,

    /// Retries of a request after a connection loss
    #[arg(long, global = true, default_value_t = 5, value_name = "N")]
    pub retries: u32,

    /// Output format [default: table; json for dump]
    #[arg(short, long, global = true, value_enum)]
    pub output: Option<OutputFormat>,

    /// Print nothing but results and errors
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Log what zklock does to stderr (-vv for more)
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// `-o/--output` values.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum OutputFormat {
    Table,
    Json,
}

const LOCK_EXAMPLES: &str = "\
Examples:
  zklock lock deploy -- ./deploy.sh          run deploy.sh holding /locks/deploy
  zklock lock -n deploy -- ./deploy.sh       give up at once (exit 1) if it is taken
  zklock lock -w 30s -E 75 deploy -- make    wait at most 30s; exit 75 if not acquired
  zklock lock --shell deploy -- 'a && b'     run a shell command line
  zklock lock deploy                         print the token, hold until Ctrl-C
  zklock lock --dialect kazoo jobs -- ./x    take the lock so kazoo clients see it

Across script steps:
  tok=$(zklock lock deploy --detach --while-pid $$)   held until this shell exits,
  ./step1; ./step2                                    or until:
  zklock release \"$tok\"
  tok=$(zklock lock deploy --detach --lease 10m)      held at most 10 minutes
  tok=$(zklock lock maint --ttl 2h)                   a persistent node; no process
                                                      holds it; the server deletes
                                                      it 2h after its last change

The command gets ZKLOCK_LOCK, ZKLOCK_NODE, ZKLOCK_FENCE (the node's czxid, a
fencing token that grows with every new holder) and ZKLOCK_SESSION. zklock
exits with the command's exit code (128+n if it died of signal n), 1 if the
lock was not acquired (change with -E), 3 if ZooKeeper was unreachable, 4 if
the lock was lost while held (the command is stopped: --kill-signal, then
SIGKILL after --kill-after). / and /zookeeper (and below) are never locks:
exit 2, before connecting.";

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum CliCommand {
    /// Take an exclusive lock; run COMMAND under it, or hold it until a signal
    #[command(after_help = LOCK_EXAMPLES)]
    Lock(LockCmdArgs),

    /// Take the read side of a read-write lock (readers share)
    #[command(after_help = LOCK_EXAMPLES)]
    Rlock(LockCmdArgs),

    /// Take the write side of a read-write lock (exclusive)
    #[command(after_help = LOCK_EXAMPLES)]
    Wlock(LockCmdArgs),

    /// Delete a lock node by its token, or break a lock: delete or revoke its holders
    #[command(after_help = "\
Examples:
  tok=$(zklock lock deploy --detach); ...; zklock release \"$tok\"
  zklock release --if-exists \"$tok\"           no error if it is already gone
  zklock release --holders deploy             delete whatever holds /locks/deploy now
  zklock release --revoke --force-after 30s deploy
                                              ask the holders to let go (Curator's
                                              revocation: __REVOKE__ in their nodes),
                                              delete those still there after 30s

Only lock contender nodes are deleted, as ls and stat show them: a name a lock
library makes, on a node that library makes (ephemeral; persistent only for
kazoo's names and zklock's --ttl nodes). A token naming anything else (a
persistent config node called lock-0000000001, a node with children) is
refused with exit 2. Each node is deleted only if it is still the node read
(same czxid and owner session) at the version read: a node that changed or
was made again meanwhile is left alone, and said so (exit 10).
--revoke writes __REVOKE__ only into holders that obey it: Curator's and
zklock's own (any dialect); kazoo, HBase and ZooKeeper-recipe holders are
reported, and only --force-after (a delete) breaks them.
A token whose node is gone exits 6 (0 with --if-exists). A zklock holder whose
node is deleted or revoked stops its command and exits 4. A release that
stops on an error prints what it did before it, then the error; a delete
refused by the parent's ACL (deleting needs DELETE on the parent) exits 5.
JSON: {\"deleted\": [path], \"revoked\": [path], \"skipped\": [{\"path\", \"reason\"}]}")]
    Release(ReleaseCmdArgs),

    /// Show one lock in full (who holds, who waits on whom), or a plain node's stat and data
    #[command(after_help = stat::EXAMPLES, after_long_help = stat::manual())]
    Stat {
        /// A lock name (under --root) or an absolute node path
        target: String,
    },

    /// List every lock under PATH, recursively: kind, dialect, holders, waiters, owner
    #[command(after_help = ls::EXAMPLES, after_long_help = ls::manual())]
    Ls {
        /// A name under --root or an absolute path [default: --root]
        path: Option<String>,
    },

    /// Dump every lock and contender under PATH with full stat and data (JSON)
    #[command(after_help = dump::EXAMPLES, after_long_help = dump::manual())]
    Dump {
        /// A name under --root or an absolute path [default: --root]
        path: Option<String>,

        /// Group the contenders by owner session: what each client holds or waits for
        #[arg(long)]
        sessions: bool,
    },

    /// Follow a lock (or every lock under a path) live: waiting, acquired, released, gone
    #[command(after_help = watch::EXAMPLES, after_long_help = watch::manual())]
    Watch(WatchCmdArgs),

    /// Delete stale lock contender nodes (by age, session, or all) and empty lock directories
    #[command(after_help = reap::EXAMPLES, after_long_help = reap::manual())]
    Reap(ReapCmdArgs),

    /// Print shell completions (bash, zsh, fish)
    #[command(after_help = "Example:\n  zklock completions bash > /etc/bash_completion.d/zklock")]
    Completions {
        /// The shell
        shell: ShellArg,
    },

    /// Print a man page: zklock's, or a subcommand's
    #[command(after_help = "Examples:\n  zklock man | man -l -\n  zklock man stat | man -l -")]
    Man {
        /// The subcommand whose page to print
        command: Option<String>,
    },
}

/// `completions` values.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ShellArg {
    Bash,
    Zsh,
    Fish,
}

impl From<ShellArg> for Shell {
    fn from(shell: ShellArg) -> Shell {
        match shell {
            ShellArg::Bash => Shell::Bash,
            ShellArg::Zsh => Shell::Zsh,
            ShellArg::Fish => Shell::Fish,
        }
    }
}

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

/// The arguments of `lock`, `rlock` and `wlock`.
#[derive(Debug, Args)]
pub struct LockCmdArgs {
    /// The lock: a name under --root, or an absolute path
    pub lock: String,

    /// Give up at once if the lock is taken (exit 1, or -E)
    #[arg(short, long)]
    pub no_wait: bool,

    /// Give up after waiting this long (exit 1, or -E)
    #[arg(short = 'w', long, value_parser = parse_duration, value_name = "DUR", conflicts_with = "no_wait")]
    pub timeout: Option<Duration>,

    /// Exit code when the lock is not acquired
    #[arg(short = 'E', long, default_value_t = 1, value_name = "N")]
    pub conflict_exit_code: u8,

    /// Text to store in the lock node's owner record
    #[arg(long, value_name = "TEXT")]
    pub data: Option<String>,

    /// Whose node names to create, so that library's clients wait for us
    #[arg(long, value_enum, default_value_t = DialectArg::Curator)]
    pub dialect: DialectArg,

    /// Run COMMAND through `sh -c` (its words joined by spaces)
    #[arg(long, requires = "command")]
    pub shell: bool,

    /// Leave a background holder with the lock, print the token, exit
    #[arg(long, conflicts_with_all = ["command", "ttl"])]
    pub detach: bool,

    /// With --detach: release after this long
    #[arg(long, value_parser = parse_duration, value_name = "DUR", requires = "detach")]
    pub lease: Option<Duration>,

    /// With --detach: release when process PID ends (e.g. `--while-pid $$`)
    #[arg(long, value_name = "PID", requires = "detach")]
    pub while_pid: Option<i32>,

    /// Make a persistent lock node that the server deletes DUR after it was
    /// last used, print the token, exit (needs extendedTypesEnabled=true)
    #[arg(long, value_parser = parse_duration, value_name = "DUR", conflicts_with = "command")]
    pub ttl: Option<Duration>,

    /// Internal: be the background holder of --detach, reporting on FD
    #[arg(long, hide = true, value_name = "FD")]
    pub holder_report_fd: Option<i32>,

    /// Signal for the command's process group when the lock is lost
    #[arg(long, default_value = "TERM", value_parser = parse_signal_arg, value_name = "SIG")]
    pub kill_signal: i32,

    /// Wait this long after --kill-signal before SIGKILL [default: a fifth of the session
    /// timeout the server grants]
    #[arg(long, value_parser = parse_duration, value_name = "DUR")]
    pub kill_after: Option<Duration>,

    /// The command to run while holding the lock
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// The arguments of `release`.
#[derive(Debug, Args)]
pub struct ReleaseCmdArgs {
    /// A token (the node path `lock` printed); with --holders or --revoke, a lock
    pub target: String,

    /// TARGET is a lock: delete the nodes that hold it now
    #[arg(long, conflicts_with = "revoke")]
    pub holders: bool,

    /// TARGET is a lock: ask its holders to let go by writing __REVOKE__ into their nodes
    #[arg(long)]
    pub revoke: bool,

    /// With --revoke: delete the holders still there after DUR
    #[arg(long, value_parser = parse_duration, value_name = "DUR", requires = "revoke")]
    pub force_after: Option<Duration>,

    /// A token whose node is already gone is no error
    #[arg(long, conflicts_with_all = ["holders", "revoke"])]
    pub if_exists: bool,
}

impl ReleaseCmdArgs {
    fn into_release_args(self, root: &str) -> Result<ReleaseArgs, UsageError> {
        let target = zk::path::resolve(root, &self.target)?;
        let how = match (self.holders, self.revoke) {
            (true, _) => How::Holders,
            (false, true) => How::Revoke {
                force_after: self.force_after,
            },
            (false, false) => {
                release::check_token(&target)?;
                How::Token
            }
        };
        Ok(ReleaseArgs {
            target,
            how,
            if_exists: self.if_exists,
        })
    }
}

/// The arguments of `watch`.
#[derive(Debug, Args)]
pub struct WatchCmdArgs {
    /// A lock name (under --root) or an absolute path; every lock at or below it is followed
    pub target: String,

    /// Exit 0 once no lock under the path is held (free) or some lock is (held)
    #[arg(long, value_enum, value_name = "STATE")]
    pub until: Option<UntilArg>,

    /// Exit 1 if the watch is still going after DUR
    #[arg(short = 'w', long, value_parser = parse_duration, value_name = "DUR")]
    pub timeout: Option<Duration>,

    /// Exit 0 after N changes
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
}

/// `watch --until` values.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum UntilArg {
    Free,
    Held,
}

impl WatchCmdArgs {
    fn into_watch_args(self, root: &str) -> Result<watch::WatchArgs, UsageError> {
        Ok(watch::WatchArgs {
            target: zk::path::resolve(root, &self.target)?,
            until: self.until.map(|until| match until {
                UntilArg::Free => watch::Until::Free,
                UntilArg::Held => watch::Until::Held,
            }),
            timeout: self.timeout,
            count: self.count,
        })
    }
}

/// The arguments of `reap`.
#[derive(Debug, Args)]
pub struct ReapCmdArgs {
    /// A name under --root or an absolute path [default: --root]
    pub path: Option<String>,

    /// Contender nodes created at least DUR ago
    #[arg(long, value_parser = parse_duration, value_name = "DUR")]
    pub older_than: Option<Duration>,

    /// Contender nodes of this session (0x... or decimal)
    #[arg(long, value_parser = parse_session_arg, value_name = "ID")]
    pub session: Option<i64>,

    /// Every contender node
    #[arg(long, conflicts_with_all = ["older_than", "session"])]
    pub all: bool,

    /// Also delete empty lock directories (see the man page for which)
    #[arg(long)]
    pub empty: bool,

    /// Only list what would be deleted
    #[arg(long)]
    pub dry_run: bool,

    /// Delete without asking (needed when stdin is not a terminal)
    #[arg(short, long, conflicts_with = "dry_run")]
    pub yes: bool,
}

fn parse_session_arg(text: &str) -> Result<i64, String> {
    zk::parse_session(text).map_err(|e| e.to_string())
}

impl ReapCmdArgs {
    fn into_reap_args(self, root: &str) -> Result<reap::ReapArgs, UsageError> {
        let selector = Selector {
            older_than: self.older_than,
            session: self.session,
            all: self.all,
        };
        reap::check_selection(&selector, self.empty)?;
        Ok(reap::ReapArgs {
            path: resolve_or_root(root, self.path)?,
            selector,
            empty: self.empty,
            dry_run: self.dry_run,
            yes: self.yes,
        })
    }
}

/// `--dialect` values.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum DialectArg {
    Curator,
    Kazoo,
    Hbase,
    ZkRecipe,
}

impl From<DialectArg> for Dialect {
    fn from(dialect: DialectArg) -> Dialect {
        match dialect {
            DialectArg::Curator => Dialect::Curator,
            DialectArg::Kazoo => Dialect::Kazoo,
            DialectArg::Hbase => Dialect::Hbase,
            DialectArg::ZkRecipe => Dialect::ZkRecipe,
        }
    }
}

impl LockCmdArgs {
    fn into_lock_args(
        self,
        root: &str,
        kind: Kind,
        session_timeout: Duration,
        ends_with_separator: bool,
    ) -> Result<LockArgs, UsageError> {
        let dialect = Dialect::from(self.dialect);
        if ends_with_separator && self.command.is_empty() {
            return Err(UsageError::new(
                "nothing to run after `--`: give a command, or leave `--` out to hold the \
                 lock until a signal",
            ));
        }
        if let Some(kill_after) = self.kill_after
            && !self.command.is_empty()
            && kill_after >= session_timeout
        {
            return Err(UsageError::new(format!(
                "--kill-after ({}) must be shorter than --session-timeout ({}): the command \
                 has to be stopped before the server can expire the session",
                humantime::format_duration(kill_after),
                humantime::format_duration(session_timeout)
            )));
        }
        if !name::can_make(dialect, kind) {
            return Err(UsageError::new(format!(
                "the {dialect} dialect has no read locks; use curator, kazoo or hbase"
            )));
        }
        if self.ttl.is_some() && dialect == Dialect::Hbase {
            return Err(UsageError::new(
                "--ttl needs node names unique to this contender; use curator, kazoo or zk-recipe",
            ));
        }
        let until = Detached {
            lease: self.lease,
            while_pid: self.while_pid,
        };
        let holding = match (self.holder_report_fd, self.detach, self.ttl) {
            (Some(report_fd), _, _) => Holding::DetachedHolder { report_fd, until },
            (None, true, _) => Holding::Detach(until),
            (None, false, Some(ttl)) => Holding::Ttl(ttl),
            (None, false, None) if self.command.is_empty() => Holding::UntilSignal,
            (None, false, None) => Holding::Command(lock_command::Command {
                argv: if self.shell {
                    vec![self.command.join(" ")]
                } else {
                    self.command
                },
                shell: self.shell,
                kill_signal: self.kill_signal,
                kill_after: self.kill_after,
            }),
        };
        let path = zk::path::resolve(root, &self.lock)?;
        zk::path::check_lock_directory(&path)?;
        Ok(LockArgs {
            path,
            kind,
            dialect,
            no_wait: self.no_wait,
            timeout: self.timeout,
            conflict_exit_code: self.conflict_exit_code,
            data: self.data,
            holding,
        })
    }
}

fn parse_signal_arg(text: &str) -> Result<i32, String> {
    parse_signal(text)
        .ok_or_else(|| format!("unknown signal {text:?} (write e.g. TERM, INT, KILL or 15)"))
}

/// Parses a duration written like `500ms`, `30s`, `10m`; a bare number is
/// seconds, as flock(1) and timeout(1) read it (`-w 30`, `-w 0.5`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = |why: String| format!("bad duration {text:?}: {why} (write e.g. 500ms, 30s, 10m)");
    if text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        let seconds: f64 = text.parse().map_err(|_| bad("not a number".into()))?;
        return Duration::try_from_secs_f64(seconds).map_err(|e| bad(e.to_string()));
    }
    humantime::parse_duration(text).map_err(|e| bad(e.to_string()))
}

impl Cli {
    /// Checks and converts the parsed arguments into plain configuration.
    /// Every usage error (bad path, bad host string) surfaces here, before
    /// any connection is made.
    pub fn into_config(self) -> Result<(Globals, Command), UsageError> {
        let globals = self
            .global
            .into_globals(self.command.default_format(), self.command.is_offline())?;
        let root = globals.root.as_str();
        let session_timeout = globals.connect.session_timeout;
        let separator = self.ends_with_separator;
        let command = match self.command {
            CliCommand::Lock(args) => {
                Command::Lock(args.into_lock_args(root, Kind::Mutex, session_timeout, separator)?)
            }
            CliCommand::Rlock(args) => {
                Command::Lock(args.into_lock_args(root, Kind::Read, session_timeout, separator)?)
            }
            CliCommand::Wlock(args) => {
                Command::Lock(args.into_lock_args(root, Kind::Write, session_timeout, separator)?)
            }
            CliCommand::Release(args) => Command::Release(args.into_release_args(root)?),
            CliCommand::Stat { target } => Command::Stat(StatArgs {
                path: zk::path::resolve(root, &target)?,
            }),
            CliCommand::Ls { path } => Command::Ls(ls::LsArgs {
                path: resolve_or_root(root, path)?,
            }),
            CliCommand::Dump { path, sessions } => Command::Dump(dump::DumpArgs {
                path: resolve_or_root(root, path)?,
                sessions,
            }),
            CliCommand::Watch(args) => Command::Watch(args.into_watch_args(root)?),
            CliCommand::Reap(args) => Command::Reap(args.into_reap_args(root)?),
            CliCommand::Completions { shell } => Command::Completions(shell.into()),
            CliCommand::Man { command } => Command::Man(command),
        };
        Ok((globals, command))
    }
}

impl CliCommand {
    /// True for the commands that never connect (`completions`, `man`): they
    /// read no connection settings, so a broken `ZKLOCK_HOSTS` cannot fail
    /// them.
    fn is_offline(&self) -> bool {
        matches!(
            self,
            CliCommand::Completions { .. } | CliCommand::Man { .. }
        )
    }

    /// The output format without `-o`: JSON for `dump`, a table otherwise.
    fn default_format(&self) -> Format {
        match self {
            CliCommand::Dump { .. } => Format::Json,
            _ => Format::Table,
        }
    }
}

/// An optional PATH argument: resolved under `root`, or `root` itself.
fn resolve_or_root(root: &str, path: Option<String>) -> Result<String, UsageError> {
    match path {
        Some(path) => zk::path::resolve(root, &path),
        None => Ok(root.to_owned()),
    }
}

impl GlobalArgs {
    /// The checked global options; `offline` skips the connection settings
    /// (hosts, root, auth), which are then the built-in defaults.
    fn into_globals(self, default_format: Format, offline: bool) -> Result<Globals, UsageError> {
        let (hosts, root, auth) = if offline {
            (
                DEFAULT_HOSTS.to_owned(),
                DEFAULT_ROOT.to_owned(),
                Vec::new(),
            )
        } else {
            let hosts = self
                .hosts
                .or_else(|| std::env::var("ZK_HOSTS").ok())
                .unwrap_or_else(|| DEFAULT_HOSTS.to_owned());
            zk::path::validate(&self.root).map_err(|e| UsageError::new(format!("--root: {e}")))?;
            let auth = self
                .auth
                .iter()
                .map(|a| Auth::parse(a))
                .collect::<Result<Vec<_>, _>>()?;
            (hosts, self.root, auth)
        };
        let format = match self.output {
            Some(OutputFormat::Table) => Format::Table,
            Some(OutputFormat::Json) => Format::Json,
            None => default_format,
        };
        Ok(Globals {
            connect: ConnectOptions {
                hosts: Hosts::parse(&hosts)?,
                session_timeout: self.session_timeout,
                connect_timeout: self.connect_timeout,
                auth,
                read_only: self.read_only,
                retry: RetryPolicy::new(self.retries),
            },
            root,
            printer: Printer::new(format, self.quiet),
            verbosity: self.verbose,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_units_or_bare_seconds() {
        let ms = Duration::from_millis;
        assert_eq!(parse_duration("500ms"), Ok(ms(500)));
        assert_eq!(parse_duration("2m"), Ok(ms(120_000)));
        assert_eq!(parse_duration("30"), Ok(ms(30_000)));
        assert_eq!(parse_duration("0.25"), Ok(ms(250)));
        assert_eq!(parse_duration("0"), Ok(ms(0)));
        for bad in ["", "1.2.3", ".", "-5", "5 parsecs", "1e3"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }
}
