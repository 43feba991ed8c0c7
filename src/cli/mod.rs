//! Every clap definition of zklock: the command line as structs. Nothing
//! outside this module imports clap.
//!
//! - `help`: the help text and examples, as prose;
//! - `convert`: the translation into plain configuration, with every
//!   check that needs no server;
//! - `generate`: shell completions and man pages made from these
//!   definitions.

mod convert;
mod generate;
mod help;
mod profile;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgMatches, Args, FromArgMatches, Parser, Subcommand, ValueEnum, ValueHint};

use crate::usage::UsageError;
use crate::zk::Secret;
use crate::zk::sessions::AdminPort;
pub use convert::parse_duration;
use convert::{parse_reason, parse_session_arg, parse_signal_arg};
pub use generate::{command, completion_script, man_page, man_pages};

/// The connect string when neither `-H`, `ZKLOCK_HOSTS` nor `ZK_HOSTS` gives one.
const DEFAULT_HOSTS: &str = "127.0.0.1:2181";
/// Where lock names live when neither `--root` nor `ZKLOCK_ROOT` says.
const DEFAULT_ROOT: &str = "/locks";

/// Drive and inspect distributed locks kept in Apache ZooKeeper.
///
/// zklock recognises the locks that Apache Curator, kazoo, HBase and
/// ZooKeeper's own recipe leave, and takes its own in Curator's layout.
//
// zklock itself before its subcommands are added: its name, version, help
// and global options. Only its definitions are used; a command line is
// read into a `Cli`.
#[derive(Parser)]
#[command(name = "zklock", version, after_help = help::ZKLOCK_EXAMPLES, max_term_width = 100)]
#[command(subcommand_required = true, arg_required_else_help = true)]
// An option given twice takes the last value, as kubectl and etcdctl read
// theirs, so that a shell alias (`alias zk='zklock -H prod:2181'`) can be
// overridden on the line that uses it.
#[command(args_override_self = true)]
struct Root {
    #[command(flatten)]
    _global: GlobalArgs,
}

/// A command line as zklock reads it: the global options and the
/// subcommand with its own.
#[derive(Debug, Args)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: CliCommand,

    /// The command line ended with a bare `--`: a command was meant to follow
    /// (what `-- "$@"` gives when `$@` is empty).
    #[arg(skip)]
    pub ends_with_separator: bool,

    /// What was wrong with the cluster profile `--cluster` selected: reported
    /// as every usage error is, when the arguments are converted.
    #[arg(skip)]
    pub profile_error: Option<UsageError>,
}

impl Cli {
    /// Parses the process's arguments. A clap error exits 2, with a hint
    /// where a habit from flock(1) leads astray.
    pub fn from_env() -> Cli {
        let (args, auth_values) = take_auth_values(std::env::args_os().collect());
        profile::pin_config_path();
        let mut cli = Cli::with_profile(&args);
        cli.ends_with_separator = args.len() > 1 && args.last().is_some_and(|arg| arg == "--");
        cli.global.auth_values = auth_values;
        forget_secret_environment();
        cli
    }
}

impl Cli {
    /// Parses `args`, with the options of the cluster profile selected (if
    /// any) put in front of them; they count only where neither a flag nor a
    /// variable gave the option. The commands that never connect read no
    /// profile.
    fn with_profile(args: &[OsString]) -> Cli {
        let (mut command, mut cli, matches) = parse(args);
        if cli.command.is_offline() {
            return cli;
        }
        match profile::arguments(&command, &matches) {
            Ok(added) if added.is_empty() => cli,
            Ok(added) => {
                let (program, rest) = args.split_at(1);
                let args: Vec<_> = program
                    .iter()
                    .cloned()
                    .chain(added)
                    .chain(rest.iter().cloned())
                    .collect();
                parse_with(&mut command, &args).0
            }
            Err(err) => {
                cli.profile_error = Some(err);
                cli
            }
        }
    }
}

/// Parses `args` with the definitions they need, and gives those back for
/// a second parse. clap copies every global option into every subcommand
/// a command has, which is most of what parsing costs a short-lived
/// zklock; so a command line that names a subcommand is parsed first with
/// zklock holding that one alone. Where that fails (a word taken for the
/// subcommand was not one, help, a mistake) the whole of zklock parses it,
/// and its answer (help, an error with suggestions) is the one given. Both
/// read the words before the subcommand with the same definitions, so
/// where the first succeeds the second would have read the same.
fn parse(args: &[OsString]) -> (clap::Command, Cli, ArgMatches) {
    let root = generate::root();
    if let Some(mut command) =
        named_subcommand(&root, args).and_then(|name| generate::command_with_only(root, name))
        && let Ok((cli, matches)) = try_parse(&mut command, args)
    {
        return (command, cli, matches);
    }
    let mut command = command();
    let (cli, matches) = parse_with(&mut command, args);
    (command, cli, matches)
}

/// Parses `args` with `command`; a clap error exits 2. Parsing builds
/// `command` in place, so that a second parse, with a profile's options,
/// builds nothing again.
fn parse_with(command: &mut clap::Command, args: &[OsString]) -> (Cli, ArgMatches) {
    try_parse(command, args).unwrap_or_else(|err| {
        let err = closest_subcommand_first(without_variables(with_hint(err), command, args));
        refuse(err, args)
    })
}

fn try_parse(
    command: &mut clap::Command,
    args: &[OsString],
) -> Result<(Cli, ArgMatches), clap::Error> {
    let matches = command.try_get_matches_from_mut(args)?;
    let cli = Cli::from_arg_matches(&matches)?;
    Ok((cli, matches))
}

/// The first word of `args` that is neither an option of `root` nor the
/// value of one: the subcommand, when the command line names one. A guess
/// from the options alone; [`parse`] does not rely on it being right.
fn named_subcommand<'a>(root: &clap::Command, args: &'a [OsString]) -> Option<&'a str> {
    let mut words = args.iter().skip(1);
    while let Some(word) = words.next() {
        let word = word.to_str()?;
        let takes_a_value = if let Some(long) = word.strip_prefix("--") {
            !long.contains('=')
                && root
                    .get_arguments()
                    .any(|arg| arg.get_long() == Some(long) && arg.get_action().takes_values())
        } else if let Some(shorts) = word.strip_prefix('-').filter(|shorts| !shorts.is_empty()) {
            // In `-vH`, the last letter may take the next word as its value.
            shorts.chars().last().is_some_and(|last| {
                root.get_arguments()
                    .any(|arg| arg.get_short() == Some(last) && arg.get_action().takes_values())
            })
        } else {
            return Some(word);
        };
        if takes_a_value {
            words.next();
        }
    }
    None
}

/// Exits on a command line clap refuses: as JSON on stderr when the command
/// line asked for JSON, so a script that did gets its usage error as JSON
/// too; else as clap writes it.
fn refuse(err: clap::Error, args: &[OsString]) -> ! {
    if err.use_stderr() && asks_for_json(args) {
        let message = err.render().to_string();
        let message = message.trim().trim_start_matches("error: ");
        crate::output::print_error(crate::output::Format::Json, message, 2, "usage");
        std::process::exit(2);
    }
    if err.use_stderr() {
        // One prefix for every error zklock prints, clap's among them.
        let message = err.render().to_string();
        eprint!("zklock: {}", message.trim_start_matches("error: "));
        std::process::exit(err.exit_code());
    }
    err.exit()
}

/// True when the command line asks for JSON output, read before clap could
/// parse it: a script that asked for JSON gets its usage error as JSON too.
/// The last `-o` counts, as it does when clap reads it; the words of a
/// command after `--` are not zklock's.
fn asks_for_json(args: &[OsString]) -> bool {
    let args: Vec<&str> = args
        .iter()
        .filter_map(|arg| arg.to_str())
        .take_while(|&arg| arg != "--")
        .collect();
    let mut json = false;
    for (at, arg) in args.iter().enumerate() {
        let value = match *arg {
            "-o" | "--output" => args.get(at + 1).copied(),
            arg => arg
                .strip_prefix("--output=")
                .or_else(|| arg.strip_prefix("-o")),
        };
        if let Some(value) = value.filter(|value| !value.is_empty()) {
            json = value == "json";
        }
    }
    json
}

/// The environment variables that hold secrets themselves (not the names
/// of files that hold them).
const SECRET_VARIABLES: [&str; 1] = [AUTH_VARIABLE];

/// The option whose values are secrets themselves, the same with its
/// value in one word, and its variable.
const AUTH_OPTION: &str = "--auth";
const AUTH_PREFIX: &str = "--auth=";
const AUTH_VARIABLE: &str = "ZKLOCK_AUTH";

/// What clap gets in place of each `--auth` value.
const STAND_IN: &str = "*";

/// Takes the `--auth` values, and `ZKLOCK_AUTH`'s when no `--auth` is
/// given, out of the arguments before clap sees them. clap keeps copies of
/// what it parses and frees them unwiped, and the guard process, forked
/// after the parse, would keep them for as long as the command runs. Each
/// value leaves a stand-in, so that clap still sees the option given (a
/// profile's credentials count only where it is not); the process's own
/// argument strings are overwritten where they held a value. Words after
/// a bare `--` are the command's, and a value clap would refuse (missing,
/// not UTF-8) is left to it.
///
/// Must run before any other thread starts: `from_env` runs first in `main`.
fn take_auth_values(args: Vec<OsString>) -> (Vec<OsString>, Vec<Secret>) {
    let found = auth_values_in(&args);
    // Where each argument starts in the strings, NUL after NUL.
    let starts: Vec<usize> = args
        .iter()
        .scan(0, |next, arg| {
            let at = *next;
            *next += arg.len() + 1;
            Some(at)
        })
        .collect();
    let spans: Vec<_> = found
        .iter()
        .map(|&(index, from)| starts[index] + from..starts[index] + args[index].len())
        .collect();
    crate::sys::blot_arguments(&args, &spans);
    let mut values = Vec::new();
    let mut kept = Vec::with_capacity(args.len() + 1);
    for (index, arg) in args.into_iter().enumerate() {
        let Some(&(_, from)) = found.iter().find(|(at, _)| *at == index) else {
            kept.push(arg);
            continue;
        };
        let mut whole = arg.into_vec();
        match std::str::from_utf8(&whole[from..]) {
            Ok(value) => {
                values.push(Secret::new(value));
                kept.push(OsString::from(if from == 0 {
                    STAND_IN.to_owned()
                } else {
                    format!("{AUTH_PREFIX}{STAND_IN}")
                }));
                whole.fill(0);
            }
            Err(_) => kept.push(OsString::from_vec(whole)),
        }
    }
    if found.is_empty()
        && let Some(Ok(value)) = std::env::var_os(AUTH_VARIABLE).map(OsString::into_string)
    {
        values.push(Secret::new(value));
        kept.insert(
            1.min(kept.len()),
            OsString::from(format!("{AUTH_PREFIX}{STAND_IN}")),
        );
        crate::sys::wipe_environment_variable(AUTH_VARIABLE);
    }
    (kept, values)
}

/// Where the `--auth` values of `args` are: each value's argument and the
/// byte it starts at.
fn auth_values_in(args: &[OsString]) -> Vec<(usize, usize)> {
    use std::os::unix::ffi::OsStrExt;
    let mut found = Vec::new();
    let mut words = args.iter().enumerate().skip(1);
    while let Some((index, arg)) = words.next() {
        let bytes = arg.as_bytes();
        if bytes == b"--" {
            break;
        }
        if bytes == AUTH_OPTION.as_bytes() {
            if let Some((next, value)) = words.next()
                && !value.as_bytes().starts_with(b"-")
            {
                found.push((next, 0));
            }
        } else if bytes.starts_with(AUTH_PREFIX.as_bytes()) {
            found.push((index, AUTH_PREFIX.len()));
        }
    }
    found
}

/// Once parsed, the secrets in the environment are wiped and removed, so
/// that neither the command run under a lock nor the guard process inherits
/// them, and /proc/PID/environ of this process no longer shows them.
///
/// Must run before any other thread starts: `from_env` runs first in `main`.
fn forget_secret_environment() {
    for name in SECRET_VARIABLES {
        // Overwritten in place: /proc/PID/environ shows the block itself.
        crate::sys::wipe_environment_variable(name);
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
    // clap's tip for a word that looks like a flag is to put it after
    // `--`, which for a negative number (`-w -1`) would make it the command.
    let negative_number = err.kind() == ErrorKind::UnknownArgument
        && matches!(
            err.get(ContextKind::InvalidArg),
            Some(ContextValue::String(word))
                if word.strip_prefix('-').is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        );
    if negative_number {
        err.insert(
            ContextKind::Suggested,
            ContextValue::StyledStrs(vec![
                "durations and counts cannot be negative: write 0 or more (e.g. -w 30s)".into(),
            ]),
        );
    }
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

/// clap's usage line after an error names every option that has a value,
/// those a variable gave as well, as though the command line had said them
/// (`Usage: zklock lock --hosts <HOSTS> <LOCK>...`): to a reader, options it
/// must give. The options only a variable gave are taken out of it.
fn without_variables(
    mut err: clap::Error,
    command: &clap::Command,
    args: &[OsString],
) -> clap::Error {
    use clap::error::{ContextKind, ContextValue};
    let Some(ContextValue::StyledStr(usage)) = err.get(ContextKind::Usage) else {
        return err;
    };
    let mut usage = usage.to_string();
    let from_variables = command.get_arguments().filter(|arg| {
        arg.get_env()
            .is_some_and(|name| std::env::var_os(name).is_some())
            && !given_on_the_line(arg, args)
    });
    for arg in from_variables {
        let Some(long) = arg.get_long() else { continue };
        let value = arg
            .get_value_names()
            .and_then(|names| names.first())
            .filter(|_| arg.get_action().takes_values());
        let shown = match value {
            Some(value) => format!(" --{long} <{value}>"),
            None => format!(" --{long}"),
        };
        usage = usage.replace(&shown, "");
    }
    err.insert(ContextKind::Usage, ContextValue::StyledStr(usage.into()));
    err
}

/// True when `args` give `arg` before any bare `--`, in any of its forms.
fn given_on_the_line(arg: &clap::Arg, args: &[OsString]) -> bool {
    let long = arg.get_long().map(|long| format!("--{long}"));
    args.iter()
        .skip(1)
        .filter_map(|word| word.to_str())
        .take_while(|&word| word != "--")
        .any(|word| {
            let as_long = long.as_deref().is_some_and(|long| {
                word == long
                    || word
                        .strip_prefix(long)
                        .is_some_and(|rest| rest.starts_with('='))
            });
            let as_short = arg.get_short().is_some_and(|short| {
                !word.starts_with("--") && word.starts_with('-') && word.contains(short)
            });
            as_long || as_short
        })
}

/// clap ranks the subcommands like a mistyped one by a similarity that
/// puts `rlock` before `lock` for `lokc`; a typist's slip (a letter left
/// out, added, changed, or two swapped) is what a suggestion should undo.
/// Only the subcommands fewest such slips away are suggested.
fn closest_subcommand_first(mut err: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue};
    let (Some(ContextValue::String(typed)), Some(ContextValue::Strings(suggested))) = (
        err.get(ContextKind::InvalidSubcommand),
        err.get(ContextKind::SuggestedSubcommand),
    ) else {
        return err;
    };
    let distance = |name: &String| slips(typed, name);
    let Some(fewest) = suggested.iter().map(distance).min() else {
        return err;
    };
    let closest: Vec<String> = suggested
        .iter()
        .filter(|name| distance(name) == fewest)
        .cloned()
        .collect();
    err.insert(
        ContextKind::SuggestedSubcommand,
        ContextValue::Strings(closest),
    );
    err
}

/// How many slips of a typist turn `typed` into `name`: letters left out,
/// added or changed, and neighbours swapped, each counting one (the
/// optimal string alignment distance).
fn slips(typed: &str, name: &str) -> usize {
    let a: Vec<char> = typed.chars().collect();
    let b: Vec<char> = name.chars().collect();
    // Three rows of the table: two back (for a swap), the last, this one.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut last: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let changed = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (last[j] + 1).min(row[j - 1] + 1).min(last[j - 1] + changed);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        before = std::mem::replace(&mut last, row);
    }
    last[b.len()]
}

/// The help headings of the options every subcommand takes, so that a
/// subcommand's own options come first in its help and the 25 connection
/// and security options do not bury them (`-h` shows only `-H` and
/// `--root` of them, which most command lines need; `--help` and the man
/// pages list them all).
const CONNECTION: &str = "Connection options";
const SECURITY: &str = "Security options (TLS, SASL, credentials, ACLs)";
const OUTPUT: &str = "Output options";

/// Options every subcommand takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Take the global options of cluster profile NAME, a [clusters.NAME] table of the
    /// configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and
    /// variables override it
    #[arg(
        short = 'C',
        long,
        global = true,
        help_heading = CONNECTION,
        hide_short_help = true,
        env = "ZKLOCK_CLUSTER",
        value_name = "NAME"
    )]
    pub cluster: Option<String>,

    /// ZooKeeper servers
    ///
    /// host:port[,host:port...][/chroot]; falls back to env ZK_HOSTS, then 127.0.0.1:2181.
    #[arg(
        short = 'H',
        long,
        global = true,
        help_heading = CONNECTION,
        env = "ZKLOCK_HOSTS",
        hide_env_values = true,
        value_name = "HOSTS"
    )]
    pub hosts: Option<String>,

    /// Session timeout to ask the server for
    #[arg(long, global = true,
        help_heading = CONNECTION,
        hide_short_help = true, default_value = "10s", value_parser = convert::parse_session_timeout, value_name = "DUR")]
    pub session_timeout: Duration,

    /// Give up when no server answers within this time (exit 3)
    #[arg(long, global = true,
        help_heading = CONNECTION,
        hide_short_help = true, default_value = "5s", value_parser = parse_duration, value_name = "DUR")]
    pub connect_timeout: Duration,

    /// Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)
    #[arg(
        long,
        global = true,
        help_heading = SECURITY,
        hide_short_help = true,
        env = "ZKLOCK_AUTH",
        value_name = "SCHEME:CREDENTIAL",
        hide_env_values = true
    )]
    pub auth: Vec<String>,

    /// The values of `--auth` (or `ZKLOCK_AUTH`) themselves, which
    /// [`Cli::from_env`] takes out of the arguments before clap sees them:
    /// `auth` then holds a stand-in for each.
    #[arg(skip)]
    pub auth_values: Vec<Secret>,

    /// Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in
    /// the process list
    #[arg(long, global = true,
        help_heading = SECURITY,
        hide_short_help = true, env = "ZKLOCK_AUTH_FILE", value_name = "FILE")]
    pub auth_file: Option<PathBuf>,

    /// Talk TLS to every host (ZooKeeper's secureClientPort); or name single hosts
    /// tcp+tls://host:port
    #[arg(long, global = true,
        help_heading = SECURITY,
        hide_short_help = true, env = "ZKLOCK_TLS")]
    pub tls: bool,

    /// Trust the CA certificates in this PEM file [default: the system's trust store]
    #[arg(long, global = true,
        help_heading = SECURITY,
        hide_short_help = true, env = "ZKLOCK_TLS_CA", value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,

    /// Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs
    #[arg(
        long,
        global = true,
        help_heading = SECURITY,
        hide_short_help = true,
        env = "ZKLOCK_TLS_CERT",
        value_name = "FILE",
        requires = "tls_key"
    )]
    pub tls_cert: Option<PathBuf>,

    /// The private key (PEM) of --tls-cert
    #[arg(
        long,
        global = true,
        help_heading = SECURITY,
        hide_short_help = true,
        env = "ZKLOCK_TLS_KEY",
        value_name = "FILE",
        requires = "tls_cert"
    )]
    pub tls_key: Option<PathBuf>,

    /// Accept a server certificate that does not name the host connected to
    #[arg(long, global = true,
        help_heading = SECURITY,
        hide_short_help = true, env = "ZKLOCK_TLS_NO_VERIFY_HOSTNAME")]
    pub tls_no_verify_hostname: bool,

    /// Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi
    /// (Kerberos, from the ticket cache of KRB5CCNAME)
    #[arg(
        long,
        global = true,
        help_heading = SECURITY,
        hide_short_help = true,
        env = "ZKLOCK_SASL",
        value_enum,
        value_name = "MECHANISM"
    )]
    pub sasl: Option<SaslArg>,

    /// The DIGEST-MD5 user name
    #[arg(long, global = true,
        help_heading = SECURITY,
        hide_short_help = true, env = "ZKLOCK_SASL_USER", value_name = "USER")]
    pub sasl_user: Option<String>,

    /// The file holding the DIGEST-MD5 password (its first line)
    #[arg(
        long,
        global = true,
        help_heading = SECURITY,
        hide_short_help = true,
        env = "ZKLOCK_SASL_PASSWORD_FILE",
        value_name = "FILE"
    )]
    pub sasl_password_file: Option<PathBuf>,

    /// The service part of the server's Kerberos principal
    #[arg(
        long,
        global = true,
        help_heading = SECURITY,
        hide_short_help = true,
        env = "ZKLOCK_SASL_SERVICE",
        default_value = "zookeeper",
        value_name = "NAME"
    )]
    pub sasl_service: String,

    /// The host part of the server's Kerberos principal [default: the host connected to]
    #[arg(long, global = true,
        help_heading = SECURITY,
        hide_short_help = true, env = "ZKLOCK_SASL_HOST", value_name = "HOST")]
    pub sasl_host: Option<String>,

    /// ACL of the nodes zklock creates: open, creator (all for your identities, read for the
    /// world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)
    #[arg(
        long,
        global = true,
        help_heading = SECURITY,
        hide_short_help = true,
        env = "ZKLOCK_ACL",
        value_delimiter = ',',
        value_name = "ACL"
    )]
    pub acl: Vec<String>,

    /// Read the secured-connection settings from this descriptor (a detached holder's)
    #[arg(long, global = true,
        help_heading = CONNECTION,
        hide_short_help = true, hide = true, value_name = "FD")]
    pub holder_secrets_fd: Option<i32>,

    /// Allow a read-only server (inspection commands only)
    #[arg(long, global = true,
        help_heading = CONNECTION,
        hide_short_help = true)]
    pub read_only: bool,

    /// Where locks live
    ///
    /// A lock name `deploy` means ROOT/deploy.
    #[arg(
        long,
        global = true,
        help_heading = CONNECTION,
        env = "ZKLOCK_ROOT",
        default_value = DEFAULT_ROOT,
        value_name = "PATH",
        hide_env_values = true
    )]
    pub root: String,

    /// The ensemble members' AdminServer port, asked (`connections`, `watches`, `configuration`)
    /// who is behind each session when a member refuses the cons and wchc four-letter words: PORT
    /// for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or
    /// comma-separated) [default: 8080]
    ///
    /// An AdminServer's answer counts for a member only when its `configuration` gives that
    /// member's client port (and server id): members that share a host need a port each.
    #[arg(
        long,
        global = true,
        help_heading = CONNECTION,
        hide_short_help = true,
        env = "ZKLOCK_ADMIN_PORT",
        value_delimiter = ',',
        value_parser = AdminPort::parse,
        value_name = "[MEMBER=]PORT",
        hide_env_values = true
    )]
    pub(crate) admin_port: Vec<AdminPort>,

    /// Retries of a request after a connection loss
    #[arg(long, global = true,
        help_heading = CONNECTION,
        hide_short_help = true, default_value_t = 5, value_name = "N")]
    pub retries: u32,

    /// Output format [default: table; json for dump]
    #[arg(short, long, global = true,
        help_heading = OUTPUT, value_enum)]
    pub output: Option<OutputFormat>,

    /// Print nothing but results and errors
    #[arg(short, long, global = true,
        help_heading = OUTPUT)]
    pub quiet: bool,

    /// The same as -o wide: every column, nothing cut
    ///
    /// Nothing is cut or wrapped either.
    #[arg(long, global = true,
        help_heading = OUTPUT)]
    pub no_trunc: bool,

    /// Log what zklock does to stderr (-vv for more)
    #[arg(short, long, global = true,
        help_heading = OUTPUT, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// `--sasl` values.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum SaslArg {
    #[value(name = "digest-md5")]
    DigestMd5,
    Gssapi,
}

/// `-o/--output` values.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum OutputFormat {
    /// A fixed set of columns fitted to the terminal's width (80 off one)
    Table,
    /// A table of every column, with nothing cut or wrapped
    Wide,
    Json,
    /// The Prometheus text format (`ls` only)
    Prometheus,
}

// The subcommands. Each one's arguments are defined only when a command
// line uses it (clap's `defer`), so that parsing builds one subcommand, not
// seventeen. This comment, and those of the argument structs below, are not
// doc comments: clap would take them for the description `--help` prints,
// and the deferred ones over the subcommand's own.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum CliCommand {
    /// Take an exclusive lock; run COMMAND under it, or hold it
    ///
    /// Until a signal, when no COMMAND is given.
    #[command(after_help = help::LOCK_EXAMPLES)]
    Lock(LockCmdArgs),

    /// Take the read side of a read-write lock (readers share)
    #[command(after_help = help::RLOCK_EXAMPLES)]
    Rlock(LockCmdArgs),

    /// Take the write side of a read-write lock (exclusive)
    #[command(after_help = help::WLOCK_EXAMPLES)]
    Wlock(LockCmdArgs),

    /// Hold one of N leases of a semaphore; run COMMAND under it
    ///
    /// Curator's or kazoo's semaphore; without COMMAND, hold the lease until a signal.
    #[command(after_help = help::SEM_EXAMPLES)]
    Sem(SemCmdArgs),

    /// Release by token, or break a lock (delete or revoke)
    ///
    /// Delete a lock node by its token, or break a lock: delete or revoke its holders.
    #[command(after_help = help::RELEASE_EXAMPLES)]
    Release(ReleaseCmdArgs),

    /// Tell whether each TOKEN's node holds its lock now
    ///
    /// After a sync; exit 0 when all do, 1 when one does not: for the resource a lock guards,
    /// or the command before a write.
    #[command(after_help = help::check::EXAMPLES, after_long_help = help::check::manual())]
    Check {
        /// A token: the node path `lock` printed
        ///
        /// Or gave the command as $ZKLOCK_NODE.
        #[arg(required = true, value_name = "TOKEN")]
        tokens: Vec<String>,

        /// The fencing token (czxid) the node must have
        ///
        /// $ZKLOCK_FENCE: a node made again under the same name has another; once per TOKEN, in
        /// order.
        #[arg(long = "fence", value_name = "N", action = clap::ArgAction::Append)]
        fences: Vec<i64>,
    },

    /// Show one lock in full, or a plain node's stat
    ///
    /// Who holds, who waits on whom; for a plain node, its stat and data.
    #[command(after_help = help::stat::EXAMPLES, after_long_help = help::stat::manual())]
    Stat {
        /// A lock name (under --root) or an absolute node path
        target: String,
    },

    /// List every lock under PATH, recursively
    ///
    /// Kind, dialect, holders, waiters, owner.
    #[command(after_help = help::ls::EXAMPLES, after_long_help = help::ls::manual())]
    Ls(LsCmdArgs),

    /// Dump every lock and contender under PATH (JSON)
    ///
    /// With full stat and data.
    #[command(after_help = help::dump::EXAMPLES, after_long_help = help::dump::manual())]
    Dump {
        /// A name under --root or an absolute path [default: --root]
        path: Option<String>,

        /// Group the contenders by owner session
        ///
        /// What each client holds or waits for.
        #[arg(long)]
        sessions: bool,
    },

    /// Find every wait-for cycle across the locks under PATH
    ///
    /// Who waits on whom, certain or possible, and the release that breaks it (exit 1 when one
    /// is found).
    #[command(after_help = help::deadlocks::EXAMPLES, after_long_help = help::deadlocks::manual())]
    Deadlocks {
        /// A name under --root or an absolute path [default: --root]
        path: Option<String>,

        /// Only cycles that have stood at least DUR
        ///
        /// Since their youngest contender came.
        #[arg(long, value_parser = parse_duration, value_name = "DUR")]
        min_age: Option<Duration>,

        /// Only certain cycles
        ///
        /// Every edge proven, no waiter that gives up by itself.
        #[arg(long)]
        certain: bool,
    },

    /// Every hold of every lock, from transaction logs
    ///
    /// Rebuilt offline from a ZooKeeper server's transaction logs, and how each ended.
    #[command(after_help = help::history::EXAMPLES, after_long_help = help::history::manual())]
    History(HistoryCmdArgs),

    /// Follow the locks under a path live
    ///
    /// Waiting, acquired, released, gone.
    #[command(after_help = help::watch::EXAMPLES, after_long_help = help::watch::manual())]
    Watch(WatchCmdArgs),

    /// Delete stale lock contender nodes
    ///
    /// By age, session, or all; and empty lock directories.
    #[command(after_help = help::reap::EXAMPLES, after_long_help = help::reap::manual())]
    Reap(ReapCmdArgs),

    /// Serve the locks' metrics for Prometheus
    ///
    /// The metrics of the locks under PATH, over HTTP, kept current live.
    #[command(after_help = help::exporter::EXAMPLES, after_long_help = help::exporter::manual())]
    Exporter(ExporterCmdArgs),

    /// Watch the locks under PATH live, full screen
    ///
    /// Holders, waiters, oldest hold and wait.
    #[command(after_help = help::top::EXAMPLES, after_long_help = help::top::manual())]
    Top {
        /// A name under --root or an absolute path [default: --root]
        path: Option<String>,
    },

    /// Test the lock under faults on your own ensemble
    ///
    /// Real zklock holders contend under a new path while their connections are cut, they are
    /// paused and killed; exit 0 when no two held at once and every command stopped in time, 1
    /// with the evidence when not.
    #[command(after_help = help::verify::EXAMPLES, after_long_help = help::verify::manual())]
    Verify(VerifyCmdArgs),

    /// Internal: the critical section verify's holders run
    #[command(hide = true)]
    VerifySection {
        /// The number verify gave the holder
        #[arg(long)]
        run: u64,

        /// Ignore the kill signal
        #[arg(long)]
        stubborn: bool,
    },

    /// Print shell completions (bash, zsh, fish)
    #[command(after_help = "Example:\n  zklock completions bash > /etc/bash_completion.d/zklock")]
    Completions {
        /// The shell
        shell: ShellArg,
    },

    /// Show a man page, zklock's or a subcommand's
    ///
    /// Through man at a terminal; as roff into a pipe or a file.
    #[command(after_help = "Examples:\n  zklock man stat\n  zklock man stat > zklock-stat.1")]
    Man {
        /// The subcommand whose page to print
        #[arg(value_parser = generate::man_page_names())]
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

// The arguments of `verify`.
#[derive(Debug, Args)]
pub struct VerifyCmdArgs {
    /// How long to run
    ///
    /// The round under way then is finished; each fault takes a round of about two session
    /// timeouts.
    #[arg(long, value_parser = parse_duration, value_name = "DUR", default_value = "2m")]
    pub duration: Duration,

    /// How many holders contend (2 to 20)
    ///
    /// Each is a zklock with a session of its own, counted against each server's connections
    /// from this host.
    #[arg(long, value_name = "N", default_value_t = 5,
        value_parser = clap::value_parser!(u8).range(
            crate::verify::MIN_CONTENDERS as i64..=crate::verify::MAX_CONTENDERS as i64))]
    pub contenders: u8,

    /// exclusive (lock) or rw (rlock and wlock mixed)
    #[arg(long, value_enum, value_name = "MODE", default_value_t = VerifyModeArg::Exclusive)]
    pub mode: VerifyModeArg,

    /// The faults to inject: cut, pause, kill (comma-separated)
    #[arg(long, value_enum, value_name = "LIST", value_delimiter = ',',
        default_values_t = [FaultArg::Cut, FaultArg::Pause, FaultArg::Kill])]
    pub faults: Vec<FaultArg>,

    /// The path to work under, which must not exist
    ///
    /// A name under --root or an absolute path; verify creates and removes it [default: a new
    /// name under --root].
    #[arg(long, value_name = "PATH")]
    pub path: Option<String>,

    /// The holders' --kill-after: SIGKILL this long after SIGTERM
    ///
    /// [default: a fifth of the session timeout the server grants]
    #[arg(long, value_parser = parse_duration, value_name = "DUR")]
    pub kill_after: Option<Duration>,
}

/// `verify --mode` values.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum VerifyModeArg {
    Exclusive,
    Rw,
}

/// `verify --faults` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FaultArg {
    /// The holder's connection held (bytes held, no reset) past its session timeout
    Cut,
    /// The holder (zklock, its guard and its command) stopped past its session timeout
    Pause,
    /// zklock, its guard, or both killed with SIGKILL
    Kill,
}

// The arguments of `history`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("logs").required(true).args(["data_dir", "log"]))]
pub struct HistoryCmdArgs {
    /// A lock name or a path [default: --root]
    ///
    /// That lock, or every lock below it.
    pub path: Option<String>,

    /// A ZooKeeper server's dataDir
    ///
    /// Or the version-2 directory in it: every log.* file there.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// Transaction log files
    ///
    /// Read in the order of the zxids their names end in.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub log: Vec<PathBuf>,

    /// Only contenders alive at or after TIME
    ///
    /// An RFC 3339 UTC time (e.g. 2026-11-27T03:12:00Z), or a duration ago (e.g. 2h).
    #[arg(long, value_parser = parse_moment, value_name = "TIME|DUR")]
    pub since: Option<Moment>,

    /// Only contenders alive at or before TIME
    ///
    /// A time or a duration ago; the reading stops there.
    #[arg(long, value_parser = parse_moment, value_name = "TIME|DUR")]
    pub until: Option<Moment>,

    /// List overlapping holds instead of holds
    ///
    /// Every span of time in which two sessions held a lock at once, one of them exclusively,
    /// by the rules each holder's own library follows.
    #[arg(long)]
    pub overlaps: bool,
}

/// `--since`/`--until`: a point in time, or a duration before now.
#[derive(Clone, Copy, Debug)]
pub enum Moment {
    /// Milliseconds since the epoch.
    At(i64),
    Ago(Duration),
}

impl Moment {
    /// In milliseconds since the epoch, `now_ms` being now.
    pub fn as_ms(self, now_ms: i64) -> i64 {
        match self {
            Moment::At(ms) => ms,
            Moment::Ago(ago) => {
                now_ms.saturating_sub(i64::try_from(ago.as_millis()).unwrap_or(i64::MAX))
            }
        }
    }
}

/// Parses `--since`/`--until`: an RFC 3339 time (UTC), or a duration ago.
fn parse_moment(text: &str) -> Result<Moment, String> {
    if let Ok(ago) = parse_duration(text) {
        return Ok(Moment::Ago(ago));
    }
    let at = humantime::parse_rfc3339_weak(text).map_err(|_| {
        format!("bad time {text:?}: write a UTC time (2026-11-27T03:12:00Z) or a duration ago (2h)")
    })?;
    let ms = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|_| format!("bad time {text:?}: before 1970"))?
        .as_millis();
    Ok(Moment::At(i64::try_from(ms).unwrap_or(i64::MAX)))
}

// The arguments of `lock`, `rlock` and `wlock`.
#[derive(Debug, Args)]
pub struct LockCmdArgs {
    /// The lock: a name under --root, or a path
    ///
    /// Several only with `-- COMMAND`: taken together, in one canonical order.
    #[arg(required = true, value_name = "LOCK")]
    pub locks: Vec<String>,

    /// Give up at once if the lock is taken
    ///
    /// Exit 1, or the code -E gives.
    #[arg(short, long)]
    pub no_wait: bool,

    /// Give up after waiting DUR (exit 1, or -E)
    ///
    /// DUR counts from the session; connecting is bounded by --connect-timeout. The owner
    /// record states the moment, for `deadlocks`.
    #[arg(short = 'w', long, value_parser = parse_duration, value_name = "DUR", conflicts_with = "no_wait")]
    pub timeout: Option<Duration>,

    /// Exit code when not acquired
    #[arg(short = 'E', long, default_value_t = 1, value_name = "N")]
    pub conflict_exit_code: u8,

    /// Text to store in the lock node's owner record
    #[arg(long, value_name = "TEXT")]
    pub data: Option<String>,

    /// Record COMMAND's whole command line
    ///
    /// In the owner record, which every client that can read the node sees [default: only the
    /// program's name].
    #[arg(long)]
    pub record_command: bool,

    /// Whose node names to make
    ///
    /// So that that library's clients wait for us.
    #[arg(long, value_enum, default_value_t = DialectArg::Curator)]
    pub dialect: DialectArg,

    /// Take a lock whose name has odd characters
    ///
    /// White space at either end, or an invisible character: to join a lock another library
    /// already uses under such a name.
    #[arg(long)]
    pub allow_odd_name: bool,

    /// Run COMMAND through `sh -c`
    ///
    /// Its words joined by spaces.
    #[arg(long, requires = "command")]
    pub shell: bool,

    /// Hold in the background; print the token, exit
    #[arg(long, conflicts_with_all = ["command", "ttl"])]
    pub detach: bool,

    /// With --detach: release after DUR
    ///
    /// A command under the lock is bounded by --max-hold instead.
    #[arg(long, value_parser = parse_duration, value_name = "DUR", requires = "detach")]
    pub lease: Option<Duration>,

    /// With --detach: release when process PID ends
    ///
    /// E.g. `--while-pid $$`.
    #[arg(long, value_name = "PID", requires = "detach")]
    pub while_pid: Option<i32>,

    /// Make a node the server deletes DUR after use
    ///
    /// A persistent lock node, which the server deletes DUR after it was last used; print the
    /// token, exit (needs extendedTypesEnabled=true).
    #[arg(long, value_parser = parse_duration, value_name = "DUR", conflicts_with = "command")]
    pub ttl: Option<Duration>,

    /// Internal: be the background holder of --detach, reporting on FD
    #[arg(long, hide = true, value_name = "FD")]
    pub holder_report_fd: Option<i32>,

    /// Signal for the command when the lock is lost
    ///
    /// Sent to the command's process group [default: TERM].
    #[arg(long, value_parser = parse_signal_arg, value_name = "SIG")]
    pub kill_signal: Option<i32>,

    /// SIGKILL this long after --kill-signal
    ///
    /// [default: a fifth of the session timeout the server grants]
    #[arg(long, value_parser = parse_duration, value_name = "DUR")]
    pub kill_after: Option<Duration>,

    /// Stop the command after DUR; exit 124
    ///
    /// Stopped as on a lost lock (--kill-signal, then SIGKILL after --kill-after), then
    /// released.
    #[arg(long, value_parser = parse_duration, value_name = "DUR")]
    pub max_hold: Option<Duration>,

    /// With --max-hold: exit as the command did
    ///
    /// The stopped command's own status instead of 124.
    #[arg(long)]
    pub preserve_status: bool,

    /// Run COMMAND at most once per DUR, fleet-wide
    ///
    /// The window slides from the server-stamped start of the last run that succeeded, across
    /// every contender of the lock; the others exit 1 (or the code -E gives).
    #[arg(long, value_parser = parse_duration, value_name = "DUR")]
    pub once_per: Option<Duration>,

    /// With --once-per: count a run as it starts
    ///
    /// The run counts whether it succeeds, fails or is killed.
    // Shown by `--help` alone: a name this wide would push every option's
    // help onto a line of its own in `-h`.
    #[arg(long, requires = "once_per", hide_short_help = true)]
    pub once_per_even_on_failure: bool,
    /// After an unclean end, wait DUR before running
    ///
    /// When the lock's last hold ended uncleanly (its holder crashed, was cut off or paused past
    /// its session, or was broken or reaped), hold the lock DUR from that end before the command
    /// runs (counted within -w; with -n, give up).
    #[arg(long, value_parser = parse_duration, value_name = "DUR", conflicts_with = "ttl")]
    pub lock_delay: Option<Duration>,

    /// The command to run while holding the lock
    #[arg(last = true, value_name = "COMMAND", value_hint = ValueHint::CommandWithArguments)]
    pub command: Vec<String>,
}

// The arguments of `sem`: every option of `lock`, and the semaphore's size.
#[derive(Debug, Args)]
pub struct SemCmdArgs {
    /// The most leases held at once, by all clients
    ///
    /// Every client of the semaphore must give the same number.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_leases: u32,

    #[command(flatten)]
    pub lock: LockCmdArgs,
}

// The arguments of `release`.
#[derive(Debug, Args)]
pub struct ReleaseCmdArgs {
    /// A token; with --holders or --revoke, a lock
    ///
    /// A token is the node path `lock` printed.
    pub target: String,

    /// TARGET is a lock: delete the nodes that hold it now
    #[arg(long, conflicts_with = "revoke")]
    pub holders: bool,

    /// TARGET is a lock: ask its holders to let go
    ///
    /// By writing __REVOKE__ into their nodes.
    #[arg(long)]
    pub revoke: bool,

    /// With --revoke: delete holders left after DUR
    #[arg(long, value_parser = parse_duration, value_name = "DUR", requires = "revoke")]
    pub force_after: Option<Duration>,

    /// A token whose node is already gone is no error
    #[arg(long, conflicts_with_all = ["holders", "revoke"])]
    pub if_exists: bool,

    /// Delete without asking
    ///
    /// With --holders or --revoke --force-after; needed when stdin is not a terminal.
    #[arg(short, long)]
    pub yes: bool,

    /// List the holders that would be broken; do nothing
    ///
    /// With --holders or --revoke.
    #[arg(long, conflicts_with = "yes")]
    pub dry_run: bool,

    /// Why: kept in the end record of each delete
    ///
    /// Written into the lock directory with each delete; watch, the exporter and the broken
    /// holder read it.
    #[arg(long, value_name = "TEXT", value_parser = parse_reason, conflicts_with = "dry_run")]
    pub reason: Option<String>,
}

// The arguments of `watch`.
#[derive(Debug, Args)]
pub struct WatchCmdArgs {
    /// A lock name or a path [default: --root]
    ///
    /// Every lock at or below it is followed.
    pub target: Option<String>,

    /// Exit 0 once the path is free or held
    ///
    /// Free: no lock under the path is held; held: some lock is.
    #[arg(long, value_enum, value_name = "STATE")]
    pub until: Option<UntilArg>,

    /// Exit 1 if still watching DUR after the start
    ///
    /// DUR counts from the first reading; connecting is bounded by --connect-timeout.
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

// The arguments of `reap`.
#[derive(Debug, Args)]
pub struct ReapCmdArgs {
    /// A name under --root or an absolute path [default: --root]
    pub path: Option<String>,

    /// Contender nodes created at least DUR ago
    #[arg(long, value_parser = parse_duration, value_name = "DUR")]
    pub older_than: Option<Duration>,

    /// Contender nodes of this session
    ///
    /// ID is 0x... (as zklock shows sessions) or decimal.
    #[arg(long, value_parser = parse_session_arg, value_name = "ID")]
    pub session: Option<i64>,

    /// Every contender node
    #[arg(long, conflicts_with_all = ["older_than", "session"])]
    pub all: bool,

    /// Contender nodes whose session is gone DUR
    ///
    /// Those whose session no member has listed for at least DUR. Reap watches that long first, and asks again before the delete; never a node without a
    /// session.
    #[arg(long, value_parser = parse_duration, value_name = "DUR")]
    pub disconnected_for: Option<Duration>,

    /// Also delete empty lock directories
    ///
    /// See the manual for which.
    #[arg(long)]
    pub empty: bool,

    /// Only list what would be deleted
    #[arg(long)]
    pub dry_run: bool,

    /// Delete without asking
    ///
    /// Needed when stdin is not a terminal.
    #[arg(short, long, conflicts_with = "dry_run")]
    pub yes: bool,

    /// Why: kept in the end record of each delete
    ///
    /// Written into each lock directory with its deletes.
    #[arg(long, value_name = "TEXT", value_parser = parse_reason, conflicts_with = "dry_run")]
    pub reason: Option<String>,
}

// The arguments of `exporter`.
#[derive(Debug, Args)]
pub struct ExporterCmdArgs {
    /// A name under --root or an absolute path [default: --root]
    pub path: Option<String>,

    /// Serve /metrics here
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9731")]
    pub listen: std::net::SocketAddr,

    /// Locks with series of their own
    ///
    /// The most contended first, kept while they exist; the rest are added up under
    /// lock="(other)".
    #[arg(long, value_name = "N", default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_locks: u32,

    /// How often to survey sessions
    ///
    /// How often to ask the ensemble's members who is connected (for disconnected holders), and
    /// to search the locks for wait-for cycles.
    #[arg(long, value_parser = parse_duration, value_name = "DUR", default_value = "30s")]
    pub survey_interval: Duration,
}

// `ls`'s arguments: the path and what to show of it.
#[derive(Debug, clap::Args)]
pub struct LsCmdArgs {
    /// A name under --root or an absolute path [default: --root]
    pub path: Option<String>,

    /// Only locks that someone waits for
    #[arg(long)]
    pub contended: bool,

    /// Only locks held now
    #[arg(long)]
    pub held: bool,

    /// Only locks held for at least DUR
    ///
    /// By their oldest holder.
    #[arg(long, value_parser = parse_duration, value_name = "DUR")]
    pub older_than: Option<Duration>,

    /// Only locks where a holder's OWNER has TEXT
    ///
    /// One of whose holders' owner (as shown) contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub owner: Option<String>,

    /// Only locks of this dialect
    ///
    /// Mixed: contenders of several.
    #[arg(long, value_enum, value_name = "D")]
    pub dialect: Option<LsDialectArg>,

    /// The order of the lines [default: path]
    ///
    /// Path, age (longest held first) or waiters (most first).
    #[arg(long, value_enum, value_name = "KEY")]
    pub sort: Option<LsSortArg>,

    /// Print no header line
    #[arg(long)]
    pub no_headers: bool,

    /// With -o prometheus: write the metrics to FILE
    ///
    /// Replaced whole, atomically, as node_exporter's textfile collector needs, instead of
    /// stdout.
    #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub output_file: Option<PathBuf>,
}

/// `ls --dialect` values: every dialect zklock recognises, and `mixed`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum LsDialectArg {
    Curator,
    Kazoo,
    Hbase,
    ZkRecipe,
    ZkCRecipe,
    GoZookeeper,
    Solr,
    Kafka,
    Hadoop,
    Helix,
    Generic,
    Mixed,
}

/// `ls --sort` values.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum LsSortArg {
    Path,
    Age,
    Waiters,
}

/// `--dialect` values.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum DialectArg {
    Curator,
    Kazoo,
    Hbase,
    ZkRecipe,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positions(args: &[&str]) -> Vec<(usize, usize)> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        auth_values_in(&args)
    }

    #[test]
    fn auth_values_are_found_in_both_forms_and_never_in_the_command() {
        assert_eq!(
            positions(&["zklock", "--auth", "d:a:pw", "lock", "x", "--auth=d:b:pw"]),
            [(2, 0), (5, 7)]
        );
        assert_eq!(
            positions(&["zklock", "lock", "x", "--", "cmd", "--auth", "v"]),
            []
        );
        // What clap would refuse is left to it.
        assert_eq!(positions(&["zklock", "--auth", "--tls", "ls"]), []);
        assert_eq!(positions(&["zklock", "ls", "--auth"]), []);
        // The program name is never an option.
        assert_eq!(positions(&["--auth=x"]), []);
    }

    #[test]
    fn a_swap_is_one_slip_and_the_closest_subcommand_is_suggested_alone() {
        assert_eq!(slips("lokc", "lock"), 1);
        assert_eq!(slips("lokc", "rlock"), 2);
        assert_eq!(slips("lock", "lock"), 0);
        assert_eq!(slips("", "ls"), 2);
        assert_eq!(slips("lsx", "ls"), 1);
        assert_eq!(slips("stta", "stat"), 1);
    }

    fn words(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn a_command_line_reads_alike_with_its_subcommand_alone_and_with_every_one() {
        let lines = [
            ("zklock lock x -- true", "lock"),
            ("zklock -H h:1 lock x -- true", "lock"),
            ("zklock -vH h:1 -o json stat x", "stat"),
            (
                "zklock --hosts=h:1 --root /r sem --max-leases 2 x -- sh",
                "sem",
            ),
            ("zklock --connect-timeout 1s ls --held --sort age", "ls"),
            ("zklock -q rlock -w 1s x", "rlock"),
            ("zklock man stat", "man"),
        ];
        for (line, subcommand) in lines {
            let args = words(line);
            // The fast path is taken: the guess is the subcommand.
            assert_eq!(named_subcommand(&generate::root(), &args), Some(subcommand));
            let mut alone = generate::command_with_only(generate::root(), subcommand).expect(line);
            let alone = try_parse(&mut alone, &args).map(|(cli, _)| format!("{cli:?}"));
            let every = try_parse(&mut command(), &args).map(|(cli, _)| format!("{cli:?}"));
            assert_eq!(alone.expect(line), every.expect(line), "{line}");
        }
    }

    #[test]
    fn an_option_given_twice_takes_the_last_value() {
        let line = "zklock -H a:1 --root /a -o json -H b:2 -o table --root /b stat x";
        for mut command in [
            command(),
            generate::command_with_only(generate::root(), "stat").expect("stat"),
        ] {
            let (cli, _) = try_parse(&mut command, &words(line)).expect(line);
            assert_eq!(cli.global.hosts.as_deref(), Some("b:2"));
            assert_eq!(cli.global.root, "/b");
            assert!(matches!(cli.global.output, Some(OutputFormat::Table)));
        }
        assert!(!asks_for_json(&words(line)));
        assert!(asks_for_json(&words("zklock -o table --output=json ls")));
        assert!(asks_for_json(&words("zklock -otable -ojson ls")));
        assert!(!asks_for_json(&words("zklock lock x -- jq -o json")));
    }

    #[test]
    fn a_wrong_guess_of_the_subcommand_fails_to_parse_and_is_not_used() {
        // `-Z` is no option: its next word is taken for the subcommand.
        let args = words("zklock -Z lock stat x");
        let guess = named_subcommand(&generate::root(), &args).expect("a guess");
        assert_eq!(guess, "lock");
        let mut alone =
            generate::command_with_only(generate::root(), guess).expect("lock is a subcommand");
        assert!(try_parse(&mut alone, &args).is_err());
        // Help and unknown words go to every definition.
        for line in [
            "zklock",
            "zklock --help",
            "zklock help lock",
            "zklock lok x",
        ] {
            let args = words(line);
            let guess = named_subcommand(&generate::root(), &args);
            assert!(
                guess
                    .and_then(|name| generate::command_with_only(generate::root(), name))
                    .is_none(),
                "{line}"
            );
        }
    }
}
