//! Cluster profiles: `[clusters.NAME]` tables in zklock's configuration
//! file, each holding global options (hosts, root, TLS, SASL, ACL,
//! timeouts...), so that one name stands for everything an ensemble needs.
//!
//! A profile's options count for less than the command line and the
//! environment, and for more than the built-in defaults. They are applied as
//! if given on the command line before every other argument, for the options
//! that neither a flag nor a variable set: clap then parses and checks them
//! exactly as it does flags, and the core never sees the file.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};
use toml::de::{DeTable, DeValue};

use crate::usage::UsageError;

/// The option that selects a profile, and its variable.
pub(super) const CLUSTER_OPTION: &str = "cluster";

/// What the FILES section of every man page says about the file.
pub(super) const FILE_EXPLAINED: &str = "The configuration file, in TOML. Each \
    [clusters.NAME] table is a profile that -C/--cluster NAME or ZKLOCK_CLUSTER selects; \
    its keys are global options, by their long names without the dashes in front (hosts, \
    root, session-timeout, connect-timeout, auth-file, tls, tls-ca, tls-cert, tls-key, \
    sasl, sasl-user, sasl-password-file, acl, admin-port, ...): a string or number for an \
    option that takes a value, true for a switch, an array for a repeatable option. A flag or a \
    variable overrides the profile. An unknown profile or key, a value an option refuses, \
    or a file that is not TOML is a usage error (exit 2) naming the file and the line. \
    The file is read only when a profile is selected. Keep secrets in the files a \
    profile names (auth-file, sasl-password-file, tls-key): zklock never prints them.";

/// An example file, for the man pages.
pub(super) const FILE_EXAMPLE: &str = "\
[clusters.prod]
hosts = \"zk1:2281,zk2:2281,zk3:2281/app\"
tls = true
tls-ca = \"/etc/zklock/prod-ca.pem\"
auth-file = \"/etc/zklock/prod.auth\"
acl = [\"creator\"]

[clusters.test]
hosts = \"localhost:2181\"
root = \"/test-locks\"
connect-timeout = \"2s\"";

/// The configuration file: `$ZKLOCK_CONFIG`, else
/// `$XDG_CONFIG_HOME/zklock/config.toml`, else `~/.config/zklock/config.toml`.
fn config_file() -> Option<PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    if let Some(file) = set("ZKLOCK_CONFIG") {
        return Some(file.into());
    }
    let config_home = set("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| set("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(config_home.join("zklock").join("config.toml"))
}

/// Makes a relative `$ZKLOCK_CONFIG` absolute, so that a detached holder,
/// which runs this command line again from `/`, reads the same file.
///
/// Must run before any other thread starts, as `Cli::from_env` does.
pub(super) fn pin_config_path() {
    let Some(file) = std::env::var_os("ZKLOCK_CONFIG").map(PathBuf::from) else {
        return;
    };
    if file.as_os_str().is_empty() || file.is_absolute() {
        return;
    }
    if let Ok(absolute) = std::path::absolute(&file) {
        // SAFETY: no other thread exists yet (see above), so nothing reads
        // or changes the environment meanwhile.
        unsafe { std::env::set_var("ZKLOCK_CONFIG", absolute) };
    }
}

/// The arguments the selected profile adds in front of the command line:
/// one `--OPTION=VALUE` (or `--SWITCH`) for each of its options that neither
/// a flag nor a variable set. Empty when no profile is selected.
pub(super) fn arguments(
    command: &Command,
    matches: &ArgMatches,
) -> Result<Vec<OsString>, UsageError> {
    let Some(name) = matches.get_one::<String>(CLUSTER_OPTION) else {
        return Ok(Vec::new());
    };
    let file = config_file().ok_or_else(|| {
        UsageError::new(format!(
            "--cluster {name}: no configuration file (set ZKLOCK_CONFIG, or HOME)"
        ))
    })?;
    let text = std::fs::read_to_string(&file).map_err(|e| {
        UsageError::new(format!(
            "--cluster {name}: cannot read {}: {e}",
            file.display()
        ))
    })?;
    let source = Source {
        file: file.display().to_string(),
        text: &text,
    };
    let profile = source.profile(name)?;
    let mut added = Vec::new();
    for (key, value) in profile.iter() {
        let option = key.get_ref().as_ref();
        let at = source.at(key.span().start);
        let arg = profile_option(command, option)
            .ok_or_else(|| UsageError::new(format!("{at}: unknown option {option:?}")))?;
        if set_outside_profile(matches, arg) {
            continue;
        }
        for word in source.words(arg, option, value.get_ref(), value.span().start)? {
            check_value(arg, option, &word)
                .map_err(|why| UsageError::new(format!("{at}: {option}: {why}")))?;
            added.push(OsString::from(format!("--{option}={word}")));
        }
        if is_switch(arg) && value.get_ref().as_bool() == Some(true) {
            added.push(OsString::from(format!("--{option}")));
        }
    }
    Ok(added)
}

/// The file's text and name, for errors that say where.
struct Source<'t> {
    file: String,
    text: &'t str,
}

impl<'t> Source<'t> {
    /// `FILE:LINE` of a byte offset.
    fn at(&self, offset: usize) -> String {
        // Counted in bytes: an offset inside a character cannot panic.
        let line = self
            .text
            .bytes()
            .take(offset)
            .filter(|&b| b == b'\n')
            .count()
            + 1;
        format!("{}:{line}", self.file)
    }

    /// The `[clusters.NAME]` table.
    fn profile(&self, name: &str) -> Result<DeTable<'t>, UsageError> {
        let document = DeTable::parse(self.text).map_err(|e| {
            let at = self.at(e.span().map_or(0, |span| span.start));
            UsageError::new(format!("{at}: not TOML: {}", e.message()))
        })?;
        let clusters = document.get_ref().get("clusters").ok_or_else(|| {
            UsageError::new(format!(
                "{}: no [clusters.{name}] table (the file has no profiles)",
                self.file
            ))
        })?;
        let Some(clusters) = clusters.get_ref().as_table() else {
            return Err(UsageError::new(format!(
                "{}: clusters is not a table of profiles",
                self.at(clusters.span().start)
            )));
        };
        let known = clusters
            .keys()
            .map(|key| key.get_ref().as_ref().to_owned())
            .collect::<Vec<_>>()
            .join(", ");
        let profile = clusters.get(name).ok_or_else(|| {
            UsageError::new(format!(
                "{}: no profile {name:?} (the file has: {known})",
                self.file
            ))
        })?;
        match profile.get_ref().as_table() {
            Some(table) => Ok(table.clone()),
            None => Err(UsageError::new(format!(
                "{}: clusters.{name} is not a table of options",
                self.at(profile.span().start)
            ))),
        }
    }

    /// The values a profile entry gives its option, as command-line words
    /// (none for a switch, which is added as a bare flag).
    fn words(
        &self,
        arg: &Arg,
        option: &str,
        value: &DeValue<'_>,
        offset: usize,
    ) -> Result<Vec<String>, UsageError> {
        let at = self.at(offset);
        if is_switch(arg) {
            return match value.as_bool() {
                Some(_) => Ok(Vec::new()),
                None => Err(UsageError::new(format!(
                    "{at}: {option} is a switch: write true or false"
                ))),
            };
        }
        let repeatable = matches!(arg.get_action(), ArgAction::Append);
        let items: Vec<&DeValue<'_>> = match value.as_array() {
            Some(array) if repeatable => array.iter().map(|item| item.get_ref()).collect(),
            Some(_) => {
                return Err(UsageError::new(format!(
                    "{at}: {option} takes one value, not an array"
                )));
            }
            None => vec![value],
        };
        items
            .into_iter()
            .map(|item| {
                scalar(item).ok_or_else(|| {
                    UsageError::new(format!(
                        "{at}: {option}: expected a string or a number, found {}",
                        item.type_str()
                    ))
                })
            })
            .collect()
    }
}

/// A string or a number, as the command line would write it.
fn scalar(value: &DeValue<'_>) -> Option<String> {
    match value {
        DeValue::String(text) => Some(text.as_ref().to_owned()),
        DeValue::Integer(number) if number.radix() == 10 => Some(number.as_str().to_owned()),
        DeValue::Float(number) => Some(number.as_str().to_owned()),
        _ => None,
    }
}

/// The global option a profile key names: any option every subcommand
/// takes, except the profile selector itself, internal ones and help.
fn profile_option<'c>(command: &'c Command, key: &str) -> Option<&'c Arg> {
    command.get_arguments().find(|arg| {
        arg.get_long() == Some(key)
            && arg.is_global_set()
            && !arg.is_hide_set()
            && arg.get_id() != CLUSTER_OPTION
    })
}

fn is_switch(arg: &Arg) -> bool {
    matches!(arg.get_action(), ArgAction::SetTrue | ArgAction::Count)
}

/// True when a flag or a variable gave this option: those win over the
/// profile. `ZK_HOSTS`, the fallback variable of --hosts, counts too.
fn set_outside_profile(matches: &ArgMatches, arg: &Arg) -> bool {
    let id = arg.get_id().as_str();
    let given = matches!(
        matches.value_source(id),
        Some(ValueSource::CommandLine | ValueSource::EnvVariable)
    );
    given || (id == "hosts" && std::env::var_os("ZK_HOSTS").is_some())
}

/// Runs the option's own value check on one value from the profile, so a
/// bad value is reported with the file and line, not as a flag nobody typed.
fn check_value(arg: &Arg, option: &str, word: &str) -> Result<(), String> {
    let alone = arg
        .clone()
        .global(false)
        .env(None)
        .requires(clap::builder::Resettable::Reset)
        .conflicts_with(clap::builder::Resettable::Reset);
    Command::new("zklock")
        .no_binary_name(true)
        .arg(alone)
        .try_get_matches_from([format!("--{option}={word}")])
        .map(drop)
        .map_err(|err| {
            let text = err.to_string();
            let first = text.lines().next().unwrap_or_default();
            first.trim_start_matches("error: ").to_owned()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        /// Any configuration file is a profile or a usage error naming a
        /// line, never a panic.
        #[test]
        fn any_file_is_a_profile_or_a_usage_error(
            text in "\\PC{0,60}|\\[clusters\\.(p|é)\\]\n([a-zé-]{1,12} = (\"[^\"\\\\]{0,12}\"|[0-9]{1,30}|true|\\[\"é\"\\]|\\{\\})\n){0,4}",
            offset in 0..200usize,
        ) {
            let source = Source { file: "f".to_owned(), text: &text };
            let _ = source.profile("p");
            let _ = source.profile("é");
            let _ = source.at(offset);
        }
    }
}
