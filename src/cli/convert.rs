//! From parsed arguments to plain configuration: every check that needs no
//! server (paths, hosts, durations, flags that go together) happens here, so
//! a usage error exits 2 before any connection is made.

use std::path::Path;
use std::time::Duration;

use super::{
    Cli, CliCommand, DEFAULT_HOSTS, DEFAULT_ROOT, DialectArg, FaultArg, GlobalArgs, LockCmdArgs,
    LsCmdArgs, LsDialectArg, LsSortArg, OutputFormat, ReapCmdArgs, ReleaseCmdArgs, SaslArg,
    SemCmdArgs, ShellArg, UntilArg, VerifyCmdArgs, VerifyModeArg, WatchCmdArgs,
};
use crate::admin::reap::Selector;
use crate::admin::release::ReleaseAction;
use crate::commands::exporter::ExporterArgs;
use crate::commands::history::HistoryArgs;
use crate::commands::lock::{self as lock_command, Detached, Holding, LockArgs};
use crate::commands::release::{self, ReleaseArgs};
use crate::commands::top::TopArgs;
use crate::commands::{
    Subcommand, check, deadlocks, dump, generated::Shell, ls, reap, stat::StatArgs, watch,
};
use crate::config::Globals;
use crate::history::Source;
use crate::lock::once::OncePer;
use crate::lock::{ContenderKind, Dialect, end, name};
use crate::model::LockDialect;
use crate::output::{Format, Printer};
use crate::run::parse_signal;
use crate::usage::UsageError;
use crate::verify::{self, Fault, Mode, Plan};
use crate::zk::sessions::AdminPorts;
use crate::zk::{
    self, Auth, ConnectOptions, Hosts, NodeAcl, RetryPolicy, SaslConfig, Secret, Secured, TlsConfig,
};

impl From<ShellArg> for Shell {
    fn from(shell: ShellArg) -> Shell {
        match shell {
            ShellArg::Bash => Shell::Bash,
            ShellArg::Zsh => Shell::Zsh,
            ShellArg::Fish => Shell::Fish,
        }
    }
}

impl ReleaseCmdArgs {
    fn into_release_args(self, root: &str) -> Result<ReleaseArgs, UsageError> {
        let target = zk::path::resolve(root, &self.target)?;
        let action = match (self.holders, self.revoke) {
            (true, _) => ReleaseAction::Holders,
            (false, true) => ReleaseAction::Revoke {
                force_after: self.force_after,
            },
            (false, false) => {
                release::check_token(&target)?;
                ReleaseAction::Token
            }
        };
        if (self.yes || self.dry_run) && action == ReleaseAction::Token {
            return Err(UsageError::new(
                "--yes and --dry-run apply to --holders and --revoke, which break a lock; \
                 releasing a token deletes that one node",
            ));
        }
        Ok(ReleaseArgs {
            target,
            action,
            if_exists: self.if_exists,
            yes: self.yes,
            dry_run: self.dry_run,
            reason: self.reason,
        })
    }
}

impl WatchCmdArgs {
    fn into_watch_args(self, root: &str) -> Result<watch::WatchArgs, UsageError> {
        Ok(watch::WatchArgs {
            target: resolve_or_root(root, self.target)?,
            until: self.until.map(|until| match until {
                UntilArg::Free => watch::Until::Free,
                UntilArg::Held => watch::Until::Held,
            }),
            timeout: self.timeout,
            count: self.count,
        })
    }
}

pub(super) fn parse_session_arg(text: &str) -> Result<i64, String> {
    zk::parse_session(text).map_err(|e| e.to_string())
}

impl ReapCmdArgs {
    fn into_reap_args(self, root: &str) -> Result<reap::ReapArgs, UsageError> {
        let selector = Selector {
            older_than: self.older_than,
            session: self.session,
            all: self.all,
            disconnected_for: self.disconnected_for,
        };
        reap::check_selection(&selector, self.empty)?;
        Ok(reap::ReapArgs {
            path: resolve_or_root(root, self.path)?,
            selector,
            empty: self.empty,
            dry_run: self.dry_run,
            yes: self.yes,
            reason: self.reason,
        })
    }
}

impl VerifyCmdArgs {
    fn into_plan(self, root: &str) -> Result<Plan, UsageError> {
        let path = match self.path {
            Some(path) => zk::path::resolve(root, &path)?,
            // A name nobody else has, and that says whose it is.
            None => zk::path::join(
                root,
                &format!(
                    "zklock-verify-{}",
                    &uuid::Uuid::new_v4().simple().to_string()[..12]
                ),
            ),
        };
        zk::path::check_lock_directory(&path)?;
        let mut faults: Vec<Fault> = Vec::new();
        for fault in self.faults {
            let fault = match fault {
                FaultArg::Cut => Fault::Cut,
                FaultArg::Pause => Fault::Pause,
                FaultArg::Kill => Fault::Kill,
            };
            if !faults.contains(&fault) {
                faults.push(fault);
            }
        }
        Ok(Plan {
            duration: self.duration,
            contenders: usize::from(self.contenders),
            mode: match self.mode {
                VerifyModeArg::Exclusive => Mode::Exclusive,
                VerifyModeArg::Rw => Mode::ReadWrite,
            },
            faults,
            path,
            kill_after: self.kill_after,
        })
    }
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

impl From<LsDialectArg> for LockDialect {
    fn from(dialect: LsDialectArg) -> LockDialect {
        let one = match dialect {
            LsDialectArg::Mixed => return LockDialect::Mixed,
            LsDialectArg::Curator => Dialect::Curator,
            LsDialectArg::Kazoo => Dialect::Kazoo,
            LsDialectArg::Hbase => Dialect::Hbase,
            LsDialectArg::ZkRecipe => Dialect::ZkRecipe,
            LsDialectArg::ZkCRecipe => Dialect::ZkCRecipe,
            LsDialectArg::GoZookeeper => Dialect::GoZookeeper,
            LsDialectArg::Solr => Dialect::Solr,
            LsDialectArg::Kafka => Dialect::Kafka,
            LsDialectArg::Hadoop => Dialect::Hadoop,
            LsDialectArg::Helix => Dialect::Helix,
            LsDialectArg::Generic => Dialect::Generic,
        };
        LockDialect::One(one)
    }
}

impl LockCmdArgs {
    fn into_lock_args(
        self,
        root: &str,
        kind: ContenderKind,
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
        let mut paths = self.lock_paths(root)?.into_iter();
        let path = paths
            .next()
            .ok_or_else(|| UsageError::new("no lock named"))?;
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
        self.check_flags_apply()?;
        self.check_once_per(kind)?;
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
            (None, false, None) => Holding::Command(lock_command::LockedCommand {
                argv: if self.shell {
                    vec![self.command.join(" ")]
                } else {
                    self.command
                },
                shell: self.shell,
                kill_signal: self.kill_signal.unwrap_or(libc::SIGTERM),
                kill_after: self.kill_after,
                max_hold: self.max_hold,
                preserve_status: self.preserve_status,
            }),
        };
        let once_per = self.once_per.map(|per| OncePer {
            per,
            even_on_failure: self.once_per_even_on_failure,
        });
        Ok(LockArgs {
            path,
            others: paths.collect(),
            kind,
            max_leases: None,
            dialect,
            no_wait: self.no_wait,
            timeout: self.timeout,
            conflict_exit_code: self.conflict_exit_code,
            data: self.data,
            record_command: self.record_command,
            lock_delay: self.lock_delay,
            holding,
            once_per,
        })
    }
}

impl SemCmdArgs {
    /// The lock options, for a lease: only the dialects whose semaphores
    /// zklock can join, and no lease that outlives its holder.
    fn into_lock_args(
        self,
        root: &str,
        session_timeout: Duration,
        ends_with_separator: bool,
    ) -> Result<LockArgs, UsageError> {
        if !matches!(self.lock.dialect, DialectArg::Curator | DialectArg::Kazoo) {
            return Err(UsageError::new(
                "sem makes Curator's and kazoo's semaphores only: use --dialect curator or kazoo",
            ));
        }
        if self.lock.locks.len() > 1 {
            return Err(UsageError::new(
                "sem takes one semaphore: a lease of each of several semaphores is not \
                 supported (run one zklock sem inside another)",
            ));
        }
        if self.lock.once_per.is_some() {
            return Err(UsageError::new(
                "--once-per applies only to lock and wlock: the holders of a semaphore's \
                 leases hold together, and could all find the window open",
            ));
        }
        if self.lock.ttl.is_some() {
            return Err(UsageError::new(
                "--ttl applies only to lock, rlock and wlock: a lease must end with its \
                 holder's session, or the semaphore's clients would count it forever",
            ));
        }
        let lock = self.lock.into_lock_args(
            root,
            ContenderKind::Mutex,
            session_timeout,
            ends_with_separator,
        )?;
        Ok(LockArgs {
            max_leases: Some(self.max_leases),
            ..lock
        })
    }
}

impl LockCmdArgs {
    /// The locks named, resolved, in their canonical order: sorted by path,
    /// duplicates removed. Every lock shares the connection's chroot, so
    /// this is also the order of their full server-side paths, and two
    /// zklocks naming the same locks in any order take them in one order
    /// and never deadlock each other. Several only with a command: a held
    /// set has no one token to print or release.
    fn lock_paths(&self, root: &str) -> Result<Vec<String>, UsageError> {
        if let [_, second, ..] = self.locks.as_slice() {
            let why = if self.detach || self.holder_report_fd.is_some() {
                "--detach holds one lock"
            } else if self.ttl.is_some() {
                "--ttl leaves one node"
            } else if self.command.is_empty() {
                return Err(UsageError::new(format!(
                    "unexpected argument {second:?}: to run a command under the lock, put it \
                     after `--`: zklock lock NAME -- COMMAND... (several locks are taken \
                     together only for a command: zklock lock A B -- COMMAND...)"
                )));
            } else {
                ""
            };
            if !why.is_empty() {
                return Err(UsageError::new(format!(
                    "several locks are taken only to run a command under them all (lock A B \
                     -- COMMAND); {why}"
                )));
            }
        }
        let mut paths = Vec::new();
        for lock in &self.locks {
            let path = zk::path::resolve(root, lock)?;
            zk::path::check_lock_directory(&path)?;
            if let Some(oddity) = crate::names::oddity(lock)
                && !self.allow_odd_name
            {
                return Err(UsageError::new(format!(
                    "refusing to create the lock {lock:?}: it has {oddity}, so it would look \
                     like another lock and be a different one (--allow-odd-name joins a lock \
                     another library already uses under this name)"
                )));
            }
            paths.push(path);
        }
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    /// Refuses a flag that would have no effect in the mode asked for: a
    /// flag silently ignored is a promise silently broken.
    fn check_flags_apply(&self) -> Result<(), UsageError> {
        let runs_command = !self.command.is_empty();
        let detached = self.detach || self.holder_report_fd.is_some();
        let patient = self.no_wait || self.timeout.is_some() || self.once_per.is_some();
        let checks = [
            (
                self.lease.is_some() && !detached,
                "--lease applies only with --detach: a command under the lock holds it until \
                 the command ends (bound it with --max-hold DUR), \
                 and a hold without a command lasts until a signal",
            ),
            (
                self.while_pid.is_some() && !detached,
                "--while-pid applies only with --detach",
            ),
            (
                self.kill_signal.is_some() && !runs_command,
                "--kill-signal applies only to a command run under the lock (after `--`)",
            ),
            (
                self.kill_after.is_some() && !runs_command,
                "--kill-after applies only to a command run under the lock (after `--`)",
            ),
            (
                self.max_hold.is_some() && !runs_command,
                "--max-hold applies only to a command run under the lock (after `--`); a \
                 --detach holder is bounded by --lease",
            ),
            (
                self.preserve_status && self.max_hold.is_none(),
                "--preserve-status applies only with --max-hold: without it zklock always \
                 exits with the command's own status",
            ),
            (
                self.conflict_exit_code != 1 && !patient,
                "-E/--conflict-exit-code applies only with --no-wait, --timeout or --once-per: \
                 without them zklock waits for the lock as long as it takes",
            ),
        ];
        match checks.into_iter().find(|(refused, _)| *refused) {
            Some((_, why)) => Err(UsageError::new(why)),
            None => Ok(()),
        }
    }
}

impl LockCmdArgs {
    /// Refuses `--once-per` where a window could open for two at once, or
    /// where there is no run to count: a shared read hold, a command
    /// that is not there, a holder left behind.
    fn check_once_per(&self, kind: ContenderKind) -> Result<(), UsageError> {
        if self.once_per.is_none() {
            return Ok(());
        }
        let why = if kind == ContenderKind::Read {
            "rlock holds are shared, and every reader could find the window open at once; use \
             lock or wlock"
        } else if self.detach || self.holder_report_fd.is_some() || self.ttl.is_some() {
            "a run is counted only for a command under the lock, not for a node left behind"
        } else if self.command.is_empty() {
            "it counts the runs of a command under the lock (after `--`)"
        } else if self.locks.len() > 1 {
            "the window belongs to one lock: take the others inside the command"
        } else {
            return Ok(());
        };
        Err(UsageError::new(format!("--once-per: {why}")))
    }
}

pub(super) fn parse_signal_arg(text: &str) -> Result<i32, String> {
    parse_signal(text)
        .ok_or_else(|| format!("unknown signal {text:?} (write e.g. TERM, INT, KILL or 15)"))
}

/// The longest duration any option takes: a century of 365.25-day years,
/// as humantime counts `100y`. Every duration ends up
/// added to a clock or counted in milliseconds, and a value past this is a
/// typing slip, not a plan; refusing it keeps every sum and conversion exact
/// instead of wrapping (an age that wraps negative selects every contender).
const LONGEST_DURATION: Duration = Duration::from_secs(100 * 31_557_600);

/// Takes a `--reason` of at most [`end::MAX_REASON_BYTES`] bytes: it is
/// written into ZooKeeper with each delete, and a write too large for the
/// server would cost the delete its record.
pub(super) fn parse_reason(text: &str) -> Result<String, String> {
    if text.len() > end::MAX_REASON_BYTES {
        return Err(format!(
            "a reason of {} bytes is too long (at most {})",
            text.len(),
            end::MAX_REASON_BYTES
        ));
    }
    Ok(text.to_owned())
}

/// Parses a duration written like `500ms`, `30s`, `10m`; a bare number is
/// seconds, as flock(1) and timeout(1) read it (`-w 30`, `-w 0.5`,
/// `-w 1e3`). Values longer than [`LONGEST_DURATION`] are refused.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    parse_duration_within(text, LONGEST_DURATION, "the limit of 100 years")
}

/// Parses `--session-timeout`: ZooKeeper carries it as a signed 32-bit
/// count of milliseconds, so anything past about 24 days cannot be asked
/// for (the server clamps far below that anyway, to 20 ticks by default).
pub(super) fn parse_session_timeout(text: &str) -> Result<Duration, String> {
    let longest = Duration::from_millis(i32::MAX as u64);
    let limit = format!(
        "a session timeout's limit of {} (ZooKeeper counts it in 32-bit milliseconds)",
        humantime::format_duration(longest)
    );
    parse_duration_within(text, longest, &limit)
}

/// Parses a duration of at most `longest`. Every value past it, however
/// it is written (an integer too large for any type, a float, an
/// exponent, any unit), gets the one message that names `limit`.
fn parse_duration_within(text: &str, longest: Duration, limit: &str) -> Result<Duration, String> {
    let bad = |why: String| format!("bad duration {text:?}: {why} (write e.g. 500ms, 30s, 10m)");
    let too_long = || format!("bad duration {text:?}: longer than {limit}");
    let duration = if is_bare_number(text) {
        let seconds: f64 = text.parse().map_err(|_| bad("not a number".into()))?;
        // An infinite count (`1e999` parses as one) is past it too; the
        // characters of a bare number cannot spell NaN.
        if seconds > longest.as_secs_f64() {
            return Err(too_long());
        }
        Duration::from_secs_f64(seconds)
    } else {
        match humantime::parse_duration(text) {
            Ok(duration) => duration,
            Err(humantime::DurationError::NumberOverflow) => return Err(too_long()),
            Err(err) => return Err(bad(err.to_string())),
        }
    };
    if duration > longest {
        return Err(too_long());
    }
    Ok(duration)
}

/// True for what is meant as a count of seconds without a unit: digits,
/// with a fraction or an exponent or both (`30`, `0.5`, `.5`, `1e3`,
/// `2.5E-1`); Rust's float syntax then decides whether it is one.
fn is_bare_number(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || b".eE+-".contains(&b))
}

impl Cli {
    /// The output format asked for, or the command's default: what an error
    /// is reported in, even one found before the arguments are checked.
    pub fn output_format(&self) -> Format {
        format_or(self.global.output, self.command.default_format())
    }

    /// Checks and converts the parsed arguments into plain configuration.
    /// Every usage error (bad path, bad host string) surfaces here, before
    /// any connection is made.
    pub fn into_config(self) -> Result<(Globals, Subcommand), UsageError> {
        if let Some(err) = self.profile_error {
            return Err(err);
        }
        self.command.check_global_flags_apply(&self.global)?;
        let output = self.global.output;
        let mut globals = self
            .global
            .into_globals(self.command.default_format(), self.command.is_offline())?;
        if let CliCommand::Ls(args) = &self.command {
            globals.printer.headers = !args.no_headers;
        }
        let root = globals.root.as_str();
        let session_timeout = globals.connect.session_timeout;
        let separator = self.ends_with_separator;
        let command = match self.command {
            CliCommand::Lock(args) => Subcommand::Lock(args.into_lock_args(
                root,
                ContenderKind::Mutex,
                session_timeout,
                separator,
            )?),
            CliCommand::Rlock(args) => Subcommand::Lock(args.into_lock_args(
                root,
                ContenderKind::Read,
                session_timeout,
                separator,
            )?),
            CliCommand::Wlock(args) => Subcommand::Lock(args.into_lock_args(
                root,
                ContenderKind::Write,
                session_timeout,
                separator,
            )?),
            CliCommand::Sem(args) => {
                Subcommand::Lock(args.into_lock_args(root, session_timeout, separator)?)
            }
            CliCommand::Release(args) => Subcommand::Release(args.into_release_args(root)?),
            CliCommand::Check { tokens, fences } => {
                let tokens = tokens
                    .iter()
                    .map(|token| zk::path::resolve(root, token))
                    .collect::<Result<Vec<_>, _>>()?;
                check::check_args(&tokens, &fences)?;
                Subcommand::Check(check::CheckArgs { tokens, fences })
            }
            CliCommand::Stat { target } => Subcommand::Stat(StatArgs {
                path: zk::path::resolve(root, &target)?,
            }),
            CliCommand::Ls(args) => Subcommand::Ls(args.into_ls_args(root, output)?),
            CliCommand::Dump { path, sessions } => Subcommand::Dump(dump::DumpArgs {
                path: resolve_or_root(root, path)?,
                sessions,
            }),
            CliCommand::Deadlocks {
                path,
                min_age,
                certain,
            } => Subcommand::Deadlocks(deadlocks::DeadlocksArgs {
                named: path.is_some(),
                path: resolve_or_root(root, path)?,
                min_age,
                certain,
            }),
            CliCommand::Watch(args) => Subcommand::Watch(args.into_watch_args(root)?),
            CliCommand::Reap(args) => Subcommand::Reap(args.into_reap_args(root)?),
            CliCommand::History(args) => {
                let now = crate::clock::now_ms();
                Subcommand::History(HistoryArgs {
                    path: resolve_or_root(root, args.path)?,
                    source: match args.data_dir {
                        Some(dir) => Source::DataDir(dir),
                        None => Source::Logs(args.log),
                    },
                    since_ms: args.since.map(|moment| moment.as_ms(now)),
                    until_ms: args.until.map(|moment| moment.as_ms(now)),
                    overlaps: args.overlaps,
                })
            }
            CliCommand::Top { path } => Subcommand::Top(TopArgs {
                path: resolve_or_root(root, path)?,
            }),
            CliCommand::Exporter(args) => Subcommand::Exporter(ExporterArgs {
                path: resolve_or_root(root, args.path)?,
                listen: args.listen,
                max_locks: args.max_locks as usize,
                survey_interval: args.survey_interval,
            }),
            CliCommand::Verify(args) => Subcommand::Verify(args.into_plan(root)?),
            CliCommand::VerifySection { run, stubborn } => {
                Subcommand::VerifySection(verify::section::SectionArgs { run, stubborn })
            }
            CliCommand::Completions { shell } => {
                Subcommand::Completions(super::completion_script(shell.into()))
            }
            CliCommand::Man { command } => Subcommand::Man(super::man_page(command.as_deref())?),
        };
        // A lock that may wait keeps trying a server that drops connections
        // (its per-host limit) for as long as it may wait.
        if let Subcommand::Lock(args) = &command
            && !args.no_wait
        {
            globals.connect.patience = args.timeout;
        }
        Ok((globals, command))
    }
}

impl LsCmdArgs {
    /// The checked `ls` arguments; `output` is `-o`, which decides whether
    /// `ls` prints metrics, and so which of its own flags apply.
    fn into_ls_args(
        self,
        root: &str,
        output: Option<OutputFormat>,
    ) -> Result<ls::LsArgs, UsageError> {
        let metrics = matches!(output, Some(OutputFormat::Prometheus));
        if metrics && (self.sort.is_some() || self.no_headers) {
            return Err(UsageError::new(
                "--sort and --no-headers do not apply to -o prometheus: metrics have no order and \
                 no header line",
            ));
        }
        if !metrics && self.output_file.is_some() {
            return Err(UsageError::new(
                "--output-file applies only with -o prometheus (for the textfile collector); \
                 redirect stdout for the other formats",
            ));
        }
        Ok(ls::LsArgs {
            metrics: metrics.then_some(ls::MetricsOutput {
                file: self.output_file,
            }),
            named: self.path.is_some(),
            path: resolve_or_root(root, self.path)?,
            filter: ls::LsFilter {
                contended: self.contended,
                held: self.held,
                older_than: self.older_than,
                owner: self.owner,
                dialect: self.dialect.map(LockDialect::from),
            },
            sort: match self.sort {
                None | Some(LsSortArg::Path) => ls::LsSort::Path,
                Some(LsSortArg::Age) => ls::LsSort::Age,
                Some(LsSortArg::Waiters) => ls::LsSort::Waiters,
            },
        })
    }
}

impl CliCommand {
    /// True for the commands that never connect (`completions`, `man`): they
    /// read no connection settings, so a broken `ZKLOCK_HOSTS` cannot fail
    /// them.
    pub(super) fn is_offline(&self) -> bool {
        matches!(
            self,
            CliCommand::Completions { .. }
                | CliCommand::Man { .. }
                | CliCommand::VerifySection { .. }
        )
    }

    /// Refuses the global flags this command would ignore: `-o` where only a
    /// token or a script is printed, `--read-only` where zklock writes.
    fn check_global_flags_apply(&self, global: &GlobalArgs) -> Result<(), UsageError> {
        let takes_a_lock = self.lock_args().is_some();
        // With a command, stdout is the command's, and -o json shapes
        // zklock's errors on stderr alone.
        let json_applies = self.lock_args().is_some_and(|args| {
            args.detach
                || args.ttl.is_some()
                || args.holder_report_fd.is_some()
                || !args.command.is_empty()
        });
        if matches!(self, CliCommand::Exporter(_) | CliCommand::Top { .. })
            && global.output.is_some()
        {
            return Err(UsageError::new(
                "-o does not apply to exporter (it serves the Prometheus formats over HTTP) or \
                 top (a full-screen view)",
            ));
        }
        if matches!(global.output, Some(OutputFormat::Prometheus))
            && !matches!(self, CliCommand::Ls(_))
        {
            return Err(UsageError::new(
                "-o prometheus applies to ls only (zklock exporter serves the same metrics live)",
            ));
        }
        let json = matches!(global.output, Some(OutputFormat::Json));
        if json && ((takes_a_lock && !json_applies) || self.is_offline()) {
            return Err(UsageError::new(
                "-o json applies to lock, rlock, wlock and sem only with --detach, --ttl or a \
                 COMMAND (whose errors then go to stderr as JSON; a lock held until a signal \
                 prints just its token), and not to completions or man",
            ));
        }
        let writes = match self {
            CliCommand::Release(_) | CliCommand::Verify(_) => true,
            CliCommand::Reap(args) => !args.dry_run,
            _ => takes_a_lock,
        };
        if global.read_only && writes {
            return Err(UsageError::new(
                "--read-only applies only to inspection (stat, ls, dump, watch, reap --dry-run): \
                 a read-only server refuses every change",
            ));
        }
        Ok(())
    }

    /// The lock options of the commands that take a lock or a lease.
    fn lock_args(&self) -> Option<&LockCmdArgs> {
        match self {
            CliCommand::Lock(args) | CliCommand::Rlock(args) | CliCommand::Wlock(args) => {
                Some(args)
            }
            CliCommand::Sem(args) => Some(&args.lock),
            _ => None,
        }
    }

    /// The output format without `-o`: JSON for `dump`, a table otherwise.
    fn default_format(&self) -> Format {
        match self {
            CliCommand::Dump { .. } => Format::Json,
            _ => Format::Table,
        }
    }
}

/// The format `-o` asked for, else `default`.
fn format_or(output: Option<OutputFormat>, default: Format) -> Format {
    match output {
        // Metrics go to stdout or a file on their own path; what zklock says
        // besides them (notes, errors) is text for people.
        Some(OutputFormat::Table | OutputFormat::Wide | OutputFormat::Prometheus) => Format::Table,
        Some(OutputFormat::Json) => Format::Json,
        None => default,
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
    /// (hosts, root, auth, AdminServer ports), which are then the built-in
    /// defaults.
    fn into_globals(self, default_format: Format, offline: bool) -> Result<Globals, UsageError> {
        let (hosts, root, secured, acl, admin_ports) = if offline {
            (
                DEFAULT_HOSTS.to_owned(),
                DEFAULT_ROOT.to_owned(),
                Secured::default(),
                NodeAcl::default(),
                AdminPorts::default(),
            )
        } else {
            let hosts = self
                .hosts
                .clone()
                .or_else(|| std::env::var("ZK_HOSTS").ok())
                .unwrap_or_else(|| DEFAULT_HOSTS.to_owned());
            zk::path::validate(&self.root).map_err(|e| UsageError::new(format!("--root: {e}")))?;
            let secured = match self.holder_secrets_fd {
                Some(fd) => read_handover(fd)?,
                None => self.secured(Hosts::parse(&hosts)?.any_tls())?,
            };
            let acl = NodeAcl::parse(&self.acl)?;
            let has_identity = !secured.auth.is_empty()
                || secured.sasl.is_some()
                || secured.tls.as_ref().is_some_and(|t| t.identity.is_some());
            if acl.needs_identity() && !has_identity {
                return Err(UsageError::new(
                    "--acl creator and creator-only give the nodes to the session's identities, \
                     and this session has none: add --auth, --sasl or a TLS client certificate",
                ));
            }
            let admin_ports = AdminPorts::new(&self.admin_port);
            (hosts, self.root.clone(), secured, acl, admin_ports)
        };
        let format = format_or(self.output, default_format);
        Ok(Globals {
            connect: ConnectOptions {
                hosts: Hosts::parse(&hosts)?,
                session_timeout: self.session_timeout,
                connect_timeout: self.connect_timeout,
                secured,
                acl,
                read_only: self.read_only,
                retry: RetryPolicy::new(self.retries),
                patience: None,
            },
            root,
            admin_ports,
            printer: Printer {
                wide: self.no_trunc || matches!(self.output, Some(OutputFormat::Wide)),
                ..Printer::new(format, self.quiet)
            },
            verbosity: self.verbose,
        })
    }

    /// Credentials (`--auth`, `--auth-file`), TLS and SASL, with every file
    /// they name read.
    fn secured(&self, some_host_tls: bool) -> Result<Secured, UsageError> {
        // The values themselves when the arguments were the process's,
        // else what clap read (a profile's, a parse in tests).
        let given: Vec<&str> = if self.auth_values.is_empty() {
            self.auth.iter().map(String::as_str).collect()
        } else {
            self.auth_values.iter().map(Secret::expose).collect()
        };
        let mut auth = given
            .into_iter()
            .map(Auth::parse)
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(file) = &self.auth_file {
            let text = Secret::new(read_file("--auth-file", file)?);
            for line in text
                .expose()
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
            {
                auth.push(Auth::parse(line).map_err(|e| {
                    UsageError::new(format!("--auth-file {}: {e}", file.display()))
                })?);
            }
        }
        let tls = if self.tls || some_host_tls {
            Some(self.tls_config()?)
        } else {
            self.refuse_tls_settings_without_tls()?;
            None
        };
        Ok(Secured {
            auth,
            tls,
            sasl: self.sasl_config()?,
        })
    }

    /// A TLS setting with no host spoken to in TLS would be ignored, and the
    /// connection would go out in plain text (credentials included) while the
    /// user believes it is protected: that is refused, never guessed.
    fn refuse_tls_settings_without_tls(&self) -> Result<(), UsageError> {
        let given = [
            (self.tls_ca.is_some(), "--tls-ca"),
            (self.tls_cert.is_some(), "--tls-cert"),
            (self.tls_key.is_some(), "--tls-key"),
            (self.tls_no_verify_hostname, "--tls-no-verify-hostname"),
        ];
        match given.into_iter().find(|(set, _)| *set) {
            Some((_, option)) => Err(UsageError::new(format!(
                "{option} is set (by a flag, ZKLOCK_* variable or profile) but no host is \
                 spoken to in TLS, so the connection would be plain text: add --tls (or \
                 ZKLOCK_TLS=true, or tls = true in the profile), or name the hosts \
                 tcp+tls://host:port"
            ))),
            None => Ok(()),
        }
    }

    fn tls_config(&self) -> Result<TlsConfig, UsageError> {
        let ca = match &self.tls_ca {
            Some(file) => read_file("--tls-ca", file)?,
            None => read_file("the system trust store", Path::new(SYSTEM_TRUST_STORE))?,
        };
        let identity = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some((
                read_file("--tls-cert", cert)?,
                Secret::new(read_file("--tls-key", key)?),
            )),
            _ => None,
        };
        Ok(TlsConfig {
            every_host: self.tls,
            ca,
            identity,
            verify_hostname: !self.tls_no_verify_hostname,
        })
    }

    fn sasl_config(&self) -> Result<Option<SaslConfig>, UsageError> {
        let Some(mechanism) = self.sasl else {
            return Ok(None);
        };
        Ok(Some(match mechanism {
            SaslArg::DigestMd5 => {
                let (Some(user), Some(file)) = (&self.sasl_user, &self.sasl_password_file) else {
                    return Err(UsageError::new(
                        "--sasl digest-md5 needs --sasl-user and --sasl-password-file",
                    ));
                };
                let text = Secret::new(read_file("--sasl-password-file", file)?);
                let password = text.expose().lines().next().unwrap_or_default().to_owned();
                SaslConfig::DigestMd5 {
                    user: user.clone(),
                    password: Secret::new(password),
                }
            }
            SaslArg::Gssapi => SaslConfig::Gssapi {
                service: self.sasl_service.clone(),
                host: self.sasl_host.clone(),
            },
        }))
    }
}

/// Where Debian and its derivatives keep the system's trusted CAs.
const SYSTEM_TRUST_STORE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// Reads a file an option names; the error names the option and the file,
/// never the content.
fn read_file(option: &str, file: &Path) -> Result<String, UsageError> {
    std::fs::read_to_string(file)
        .map_err(|e| UsageError::new(format!("{option}: cannot read {}: {e}", file.display())))
}

/// The secured-connection settings a detached holder's parent wrote to
/// descriptor `fd`.
fn read_handover(fd: i32) -> Result<Secured, UsageError> {
    use std::io::Read;
    let Some(pipe) = crate::sys::take_inherited(fd) else {
        return Err(UsageError::new(format!(
            "--holder-secrets-fd {fd}: not open"
        )));
    };
    let mut pipe = std::fs::File::from(pipe);
    let mut text = String::new();
    pipe.read_to_string(&mut text)
        .ok()
        .and_then(|_| Secured::from_handover(&text))
        .ok_or_else(|| UsageError::new("the parent's connection settings could not be read"))
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
        assert_eq!(parse_duration("1e3"), Ok(ms(1_000_000)));
        assert_eq!(parse_duration("2.5E-1"), Ok(ms(250)));
        for bad in [
            "",
            "1.2.3",
            ".",
            "-5",
            "5 parsecs",
            "1e",
            "1e30s",
            "300000000y",
            "101y",
            "99999999999999999999",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_duration("100y"), Ok(LONGEST_DURATION));
        assert!(parse_session_timeout("24d").is_ok());
        assert!(parse_session_timeout("25d").is_err());
    }

    /// Durations past 100 years, written every way a duration can be:
    /// integers past every integer type, floats, exponents, every unit.
    fn past_every_limit() -> Vec<String> {
        let mut values: Vec<String> = [
            "18446744073709551616",
            "18446744073709551616.5",
            "340282366920938463463374607431768211456",
            "3155760001",
            "3155760000.001",
            "1.8e19",
            "1e30",
            "1E+400",
            "100y1ns",
            "101y",
            "18446744073709551615s",
        ]
        .iter()
        .map(|&value| value.to_owned())
        .collect();
        for unit in [
            "ns", "us", "ms", "s", "sec", "m", "min", "h", "hours", "d", "days", "w", "weeks", "M",
            "months", "y", "years",
        ] {
            values.push(format!("18446744073709551616{unit}"));
            values.push(format!("99999999999999999999{unit}"));
            if unit != "ns" && unit != "us" {
                values.push(format!("18446744073709551615{unit}"));
            }
        }
        values
    }

    /// Every flag that takes a duration, found in the definitions, refuses
    /// every value past its limit with one message, the same whichever way
    /// the value is written.
    #[test]
    fn every_duration_flag_refuses_every_value_past_its_limit_alike() {
        let mut every = crate::cli::command();
        every.build();
        let mut flags = std::collections::BTreeSet::new();
        for sub in every.get_subcommands() {
            let takes_a_duration = |arg: &&clap::Arg| {
                arg.get_value_names()
                    .is_some_and(|names| names.iter().any(|name| name == "DUR"))
            };
            // clap's own `help` is no subcommand of zklock's.
            let Some(mut command) = super::super::generate::command_with_only(
                super::super::generate::root(),
                sub.get_name(),
            ) else {
                continue;
            };
            for arg in sub.get_arguments().filter(takes_a_duration) {
                let flag = arg.get_long().expect("a duration flag has a long name");
                flags.insert(flag);
                let mut values = past_every_limit();
                let limit = if flag == "session-timeout" {
                    values.extend(["25d", "24d 20h 31m 24s", "2147483.648"].map(String::from));
                    "a session timeout's limit of 24days 20h 31m 23s 647ms (ZooKeeper counts \
                     it in 32-bit milliseconds)"
                } else {
                    "the limit of 100 years"
                };
                for value in values {
                    let line = ["zklock", sub.get_name(), &format!("--{flag}={value}")];
                    let refused = command
                        .try_get_matches_from_mut(line)
                        .expect_err(&value)
                        .to_string();
                    let expected = format!("bad duration {value:?}: longer than {limit}");
                    assert!(refused.contains(&expected), "--{flag} {value}: {refused}");
                }
            }
        }
        for flag in [
            "timeout",
            "session-timeout",
            "connect-timeout",
            "kill-after",
            "ttl",
        ] {
            assert!(flags.contains(flag), "--{flag} among {flags:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        /// Any text is a duration within the limit or an error, never a
        /// panic or a wrapped value.
        #[test]
        fn any_text_is_a_bounded_duration_or_an_error(text in "\\PC{0,24}|[0-9.]{0,30}|[0-9]{1,20}(ns|ms|s|m|h|d|w|y)") {
            if let Ok(duration) = parse_duration(&text) {
                proptest::prop_assert!(duration <= LONGEST_DURATION, "{text:?}");
            }
            if let Ok(duration) = parse_session_timeout(&text) {
                proptest::prop_assert!(duration.as_millis() <= i32::MAX as u128, "{text:?}");
            }
        }

        /// What zklock prints as a duration reads back as the same one.
        #[test]
        fn durations_round_trip(millis in 0..LONGEST_DURATION.as_millis() as u64) {
            let duration = Duration::from_millis(millis);
            let text = humantime::format_duration(duration).to_string();
            proptest::prop_assert_eq!(parse_duration(&text), Ok(duration));
        }
    }
}
