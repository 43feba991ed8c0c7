//! The generated files: shell completions and man pages, both made from the
//! clap definitions, checked in under completions/ and man/ and kept fresh by
//! a test. Every subcommand gets its page and its completions from the
//! definitions alone: a new subcommand needs nothing added here.

use clap::builder::PossibleValuesParser;
use clap::{Arg, Command, CommandFactory, Subcommand, ValueHint};

use super::{CliCommand, Root};
use crate::commands::generated::Shell;
use crate::exit::{CAUSES, ExitStatus};
use crate::usage::UsageError;

/// zklock's command line as clap parses it: the derived definitions, each
/// subcommand's arguments still to be defined when it is used.
pub fn command() -> Command {
    CliCommand::augment_subcommands(root()).mut_subcommands(with_help_split)
}

/// zklock without its subcommands: its settings and global options. Help
/// names the variable behind an option and never its value, one form for
/// every option: a value may be a secret, or a host list as long as a line.
pub(super) fn root() -> Command {
    Root::command().mut_args(|arg| arg.hide_env_values(true))
}

/// `root` with only the subcommand `name`, for a command line that uses it
/// (`None` when there is no such subcommand).
pub(super) fn command_with_only(root: Command, name: &str) -> Option<Command> {
    let subcommands = CliCommand::augment_subcommands(Command::new("zklock"));
    let wanted = subcommands.find_subcommand(name)?.clone();
    Some(root.subcommand(with_help_split(wanted)))
}

/// `sub` with the text after its options split for `-h` and `--help`: `-h`
/// shows the first block (its examples), `--help` and the man page the
/// whole. Either way each paragraph of prose is one line, which clap wraps
/// to the terminal's width: broken where the source breaks it, it would
/// break again, raggedly, at any other width. Lines that begin with a space
/// (examples, lists, tables) stay as written.
fn with_help_split(sub: Command) -> Command {
    let Some(after) = sub.get_after_help().map(ToString::to_string) else {
        return sub;
    };
    let whole = sub
        .get_after_long_help()
        .map_or_else(|| after.clone(), ToString::to_string);
    let first_block = after.split("\n\n").next().unwrap_or_default();
    sub.after_help(super::help::unbroken(first_block))
        .after_long_help(super::help::unbroken(&whole))
}

/// Every definition, built (global options copied into each subcommand):
/// what the completions read.
fn definitions() -> Command {
    let mut command = command();
    command.build();
    command
}

/// The page names `man` takes: the subcommands. Known only once the
/// definitions exist, so `man` asks for them when it is parsed.
pub(super) fn man_page_names() -> PossibleValuesParser {
    PossibleValuesParser::new(subcommand_names(&command()))
}

/// Every subcommand but clap's `help` and the hidden ones (internal
/// plumbing), in definition order.
fn subcommand_names(command: &Command) -> Vec<String> {
    command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .map(|sub| sub.get_name().to_owned())
        .filter(|name| name != "help")
        .collect()
}

/// Generates the completion script for `shell` from these definitions (what
/// completions/ must hold).
pub fn completion_script(shell: Shell) -> String {
    let generator = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut offered = offered(&definitions());
    let mut script = Vec::new();
    clap_complete::generate(generator, &mut offered, "zklock", &mut script);
    let mut script = String::from_utf8(script).expect("completion scripts are UTF-8");
    let runners = command_runners(&definitions());
    match shell {
        Shell::Bash => script += &bash_command_completion(&runners),
        Shell::Fish => {
            script += &fish_positional_values(&definitions());
            script += &fish_command_completion(&runners);
        }
        Shell::Zsh => script = zsh_command_completion(&script),
    }
    script
}

/// The command line as completions offer it: without the hidden flags
/// (internal plumbing, which clap_complete would offer), and with value
/// names a shell's completion system can quote (zsh's `_arguments` reads a
/// colon in one as the start of an action to run). What clap added when it
/// built the definitions it adds to the copy again.
fn offered(command: &Command) -> Command {
    let mut copy = Command::new(command.get_name().to_owned());
    if let Some(about) = command.get_about() {
        copy = copy.about(about.clone());
    }
    if let Some(version) = command.get_version() {
        copy = copy.version(version.to_owned());
    }
    // A subcommand's own options first, then the global ones.
    let (global, own): (Vec<&Arg>, Vec<&Arg>) = command
        .get_arguments()
        .filter(|arg| !arg.is_hide_set() && !added_by_clap(arg.get_id().as_str()))
        .partition(|arg| arg.is_global_set());
    for arg in own.into_iter().chain(global) {
        copy = copy.arg(with_plain_value_names(arg.clone()));
    }
    let own_subcommands = command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set() && !added_by_clap(sub.get_name()));
    for sub in own_subcommands {
        copy = copy.subcommand(offered(sub));
    }
    copy
}

/// The `--help` and `--version` flags and the `help` subcommand, which clap
/// adds to every command it builds.
fn added_by_clap(id: &str) -> bool {
    matches!(id, "help" | "version")
}

fn with_plain_value_names(arg: Arg) -> Arg {
    let Some(names) = arg.get_value_names() else {
        return arg;
    };
    let plain: Vec<String> = names
        .iter()
        .map(|name| name.replace(|c: char| !c.is_ascii_alphanumeric() && c != '_', "-"))
        .collect();
    arg.value_names(plain)
}

/// The subcommands that run a command given after `--` (their last
/// positional argument is a command line).
fn command_runners(command: &Command) -> Vec<String> {
    command
        .get_subcommands()
        .filter(|sub| {
            sub.get_positionals()
                .any(|arg| arg.get_value_hint() == ValueHint::CommandWithArguments)
        })
        .map(|sub| sub.get_name().to_owned())
        .collect()
}

/// Bash: after `--` in a subcommand that runs a command, complete that
/// command as bash would on its own (its name, then its arguments, with
/// bash-completion's `_command_offset` when loaded); anything else goes to
/// the generated function, whose options are kept for a word that begins
/// with `-`.
fn bash_command_completion(runners: &[String]) -> String {
    let patterns = runners
        .iter()
        .map(|name| format!("*\" {name} \"*"))
        .collect::<Vec<_>>()
        .join("|");
    format!(
        r#"
# The command run under a lock (after `--`): its name, then its own arguments.
_zklock_with_command() {{
    local i
    for ((i = 1; i < COMP_CWORD; i++)); do
        [[ ${{COMP_WORDS[i]}} == -- ]] || continue
        case " ${{COMP_WORDS[*]:1:i-1}} " in
            {patterns}) ;;
            *) break ;;
        esac
        if declare -F _comp_command_offset >/dev/null; then
            _comp_command_offset $((i + 1))
        elif declare -F _command_offset >/dev/null; then
            _command_offset $((i + 1))
        elif ((COMP_CWORD == i + 1)); then
            COMPREPLY=($(compgen -c -- "${{COMP_WORDS[COMP_CWORD]}}"))
        else
            COMPREPLY=($(compgen -f -- "${{COMP_WORDS[COMP_CWORD]}}"))
        fi
        return 0
    done
    _zklock "$@"
    # Options only for a word that begins with `-`: `zklock <TAB>` offers
    # the subcommands, and an argument's place never gets a lone `-`.
    if [[ ${{COMP_WORDS[COMP_CWORD]}} != -* ]]; then
        local word kept=()
        for word in "${{COMPREPLY[@]}}"; do
            [[ $word == -* ]] || kept+=("$word")
        done
        COMPREPLY=("${{kept[@]}}")
    fi
}}
complete -F _zklock_with_command -o bashdefault -o default zklock
"#
    )
}

/// Zsh: the generated script hands a command argument to `_cmdambivalent`
/// with the words of every positional argument before it, so the lock name
/// would be taken for the command; complete from the word after `--`. The
/// LOCK words of `lock A B -- COMMAND` come as one list that swallows the
/// command, so that list completes a command once `--` is behind it.
fn zsh_command_completion(script: &str) -> String {
    const HELPER: &str = r#"
# The command run under a lock (after `--`): its name, then its own arguments.
(( $+functions[_zklock_command] )) ||
_zklock_command() {
    local separator=${words[(i)--]}
    (( separator < CURRENT )) || return 1
    words=("${(@)words[separator+1,-1]}")
    (( CURRENT -= separator ))
    _normal
}

# The LOCK words, then (after `--`) the command.
(( $+functions[_zklock_lock_or_command] )) ||
_zklock_lock_or_command() {
    if (( ${words[(i)--]} < CURRENT )); then
        _zklock_command
    else
        _default
    fi
}

"#;
    let script = script
        .replace(":_cmdambivalent'", ":_zklock_command'")
        .lines()
        .map(|line| match line.strip_prefix("'*::locks -- ") {
            Some(_) => line.replacen(":_default'", ":_zklock_lock_or_command'", 1),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let run = script
        .rfind("\nif [ \"$funcstack[1]\"")
        .expect("clap_complete's zsh script ends by running or registering its function");
    format!("{}{HELPER}{}", &script[..run], &script[run + 1..])
}

/// Fish: the values a subcommand's positional argument takes (`man`'s
/// pages, `completions`' shells), which clap_complete's fish script leaves
/// out.
fn fish_positional_values(command: &Command) -> String {
    let mut script = String::new();
    for sub in command.get_subcommands() {
        for arg in sub.get_positionals().filter(|arg| !arg.is_hide_set()) {
            let values: Vec<String> = arg
                .get_possible_values()
                .iter()
                .filter(|value| !value.is_hide_set())
                .map(|value| value.get_name().to_owned())
                .collect();
            if !values.is_empty() {
                script += &format!(
                    "complete -c zklock -n \"__fish_zklock_using_subcommand {}\" -f -a \"{}\"\n",
                    sub.get_name(),
                    values.join(" ")
                );
            }
        }
    }
    script
}

/// Fish: after `--` in a subcommand that runs a command, complete the rest
/// of the line as fish completes it on its own.
fn fish_command_completion(runners: &[String]) -> String {
    let runners = runners.join(" ");
    format!(
        r#"
# The command run under a lock (after `--`): its name, then its own arguments.
function __fish_zklock_after_separator
    set -l words (commandline -opc)
    set -l at (contains -i -- -- $words); or return 1
    __fish_seen_subcommand_from {runners}
end
function __fish_zklock_complete_command
    set -l words (commandline -opc)
    set -l at (contains -i -- -- $words)
    set -l command
    if test $at -lt (count $words)
        set command (string escape -- $words[(math $at + 1)..-1])
    end
    complete -C "$command $(commandline -ct)"
end
complete -c zklock -n __fish_zklock_after_separator -x -a "(__fish_zklock_complete_command)"
"#
    )
}

/// Generates every man page from these definitions: the subcommand name (""
/// for zklock itself) and the page in roff (what man/ must hold).
pub fn man_pages() -> Vec<(String, String)> {
    // clap's `help` subcommand has no page of its own, so no page names it.
    let mut command = command().disable_help_subcommand(true);
    command.build();
    let names = subcommand_names(&command);
    let mut pages = vec![(String::new(), render_man(command.clone(), "", &names))];
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        let name = sub.get_name().to_owned();
        let page = render_man(sub.clone().name(format!("zklock-{name}")), &name, &names);
        pages.push((name, page));
    }
    pages
}

/// The man page of subcommand `name`, or zklock's.
pub fn man_page(name: Option<&str>) -> Result<String, UsageError> {
    let wanted = name.unwrap_or_default();
    man_pages()
        .into_iter()
        .find(|(name, _)| name == wanted)
        .map(|(_, page)| page)
        .ok_or_else(|| UsageError::new(format!("no man page for {wanted:?}")))
}

/// The page of `command` (`name` is "" for zklock itself): clap_mangen's
/// name, synopsis, description and options, then the sections zklock
/// writes itself.
fn render_man(command: Command, name: &str, all: &[String]) -> String {
    // A man page lists every option with its text, also those `-h` leaves
    // out (clap_mangen takes the short help).
    let command = command.mut_args(|arg| arg.hide_short_help(false));
    let examples = command.get_after_help().map(|text| text.to_string());
    let manual = command.get_after_long_help().map(|text| text.to_string());
    let environment = environment(&command);
    let synopsis = synopsis_section(&command, name);
    let man = clap_mangen::Man::new(command);
    let mut roff = String::new();
    roff += &rendered(&man, clap_mangen::Man::render_title);
    roff += &rendered(&man, clap_mangen::Man::render_name_section);
    roff += &synopsis;
    roff += &rendered(&man, clap_mangen::Man::render_description_section);
    // The long help repeats the examples first; the rest explains.
    if let Some(manual) = &manual {
        let explanation = examples
            .as_deref()
            .and_then(|short| manual.strip_prefix(short))
            .unwrap_or(manual);
        roff += &preformatted(explanation.trim_matches('\n'));
    }
    roff += &rendered(&man, clap_mangen::Man::render_options_section);
    if name.is_empty() {
        roff += &rendered(&man, clap_mangen::Man::render_subcommands_section);
    }
    roff += &exit_status_section();
    roff += &json_errors_section();
    roff += &environment_section(&environment);
    roff += &files_section();
    roff += ".SH EXAMPLES\n";
    roff += &preformatted(examples.as_deref().unwrap_or_default().trim_matches('\n'));
    roff += &see_also_section(name, all);
    roff
}

/// The SYNOPSIS: every option with the name of its value (`[-w|--timeout
/// DUR]`), the command's own first, then the arguments; set ragged and
/// unhyphenated, so that no option is split across lines.
fn synopsis_section(command: &Command, name: &str) -> String {
    let bold = |text: &str| format!("\\fB{}\\fR", escape(text));
    let mut words = vec![bold(format!("zklock {name}").trim_end())];
    let (global, own): (Vec<&Arg>, Vec<&Arg>) = command
        .get_arguments()
        .filter(|arg| !arg.is_hide_set() && !arg.is_positional())
        .partition(|arg| arg.is_global_set());
    for arg in own.into_iter().chain(global) {
        let mut flags = Vec::new();
        if let Some(short) = arg.get_short() {
            flags.push(bold(&format!("-{short}")));
        }
        if let Some(long) = arg.get_long() {
            flags.push(bold(&format!("--{long}")));
        }
        let mut item = flags.join("|");
        if arg.get_action().takes_values() {
            let value = arg
                .get_value_names()
                .and_then(|names| names.first())
                .map_or_else(|| arg.get_id().as_str().to_uppercase(), |v| v.to_string());
            // An unbreakable space keeps an option with its value.
            item += &format!("\\ \\fI{}\\fR", escape(&value));
        }
        let repeats = matches!(
            arg.get_action(),
            clap::ArgAction::Count | clap::ArgAction::Append
        );
        words.push(format!("[{item}]{}", if repeats { "..." } else { "" }));
    }
    for arg in command.get_positionals() {
        let value = arg
            .get_value_names()
            .and_then(|names| names.first())
            .map_or_else(|| arg.get_id().as_str().to_uppercase(), |v| v.to_string());
        let value = format!("\\fI{}\\fR", escape(&value));
        words.push(match (arg.is_last_set(), arg.is_required_set()) {
            (true, _) => format!("[\\-\\- {value}...]"),
            (false, true) => value,
            (false, false) => format!("[{value}]"),
        });
    }
    if command.has_subcommands() {
        words.push("\\fISUBCOMMAND\\fR".to_owned());
    }
    format!(
        ".SH SYNOPSIS\n.nh\n.ad l\n{}\n.ad b\n.hy\n",
        words.join("\n")
    )
}

/// One of clap_mangen's sections.
type RenderSection = fn(&clap_mangen::Man, &mut dyn std::io::Write) -> std::io::Result<()>;

fn rendered(man: &clap_mangen::Man, section: RenderSection) -> String {
    let mut roff = Vec::new();
    section(man, &mut roff).expect("rendering into memory cannot fail");
    String::from_utf8(roff).expect("man pages are UTF-8")
}

/// Text escaped for roff: indented lines (examples, tables) kept as
/// written, and prose filled by man to the reader's width, so that a page
/// fits 80 columns whatever its margin.
fn preformatted(text: &str) -> String {
    let mut roff = String::from(".PP\n.nf\n");
    let mut filling = false;
    for line in text.lines() {
        let prose = !line.is_empty() && !line.starts_with(' ');
        if prose != filling {
            roff += if prose { ".fi\n" } else { ".nf\n" };
            filling = prose;
        }
        roff += &escape(line);
        roff.push('\n');
    }
    roff + ".fi\n"
}

/// One line of text as roff prints it, not as a request.
fn escape(line: &str) -> String {
    let escaped = line.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// A tagged paragraph: `tag` in bold, then its text.
fn entry(tag: &str, text: &str) -> String {
    format!(".TP\n\\fB{}\\fR\n{}\n", escape(tag), escape(text))
}

fn exit_status_section() -> String {
    let mut roff = String::from(".SH \"EXIT STATUS\"\n");
    for (status, meaning) in ExitStatus::TABLE {
        roff += &entry(&status.documented_code(), meaning);
    }
    roff
}

/// What the JSON error's `cause` may say, word by word.
fn json_errors_section() -> String {
    let mut roff = String::from(
        ".SH \"JSON ERRORS\"\nWith \\-o json, an error goes to stderr as one JSON \
         object {\"error\", \"exit_code\", \"cause\"}, where cause is one of these \
         words:\n",
    );
    for (cause, meaning) in CAUSES {
        roff += &entry(cause, meaning);
    }
    roff
}

/// The variables every page lists besides the options' own: what zklock
/// reads that no option stands for.
const OTHER_VARIABLES: [(&str, &str); 7] = [
    (
        "ZK_HOSTS",
        "The connect string when neither --hosts nor ZKLOCK_HOSTS gives one \
         (the variable ZooKeeper's own tools read).",
    ),
    (
        "ZKLOCK_CONFIG",
        "The configuration file holding the cluster profiles (see FILES).",
    ),
    (
        "XDG_CONFIG_HOME",
        "Where the configuration file is looked for without ZKLOCK_CONFIG \
         (default ~/.config).",
    ),
    (
        "ZKLOCK_LOG_FORMAT",
        "json: the -v log is JSON lines, each moment a script may wait for \
         carrying an \"event\" field.",
    ),
    ("NO_COLOR", "When set (to anything), nothing is coloured."),
    (
        "KRB5CCNAME",
        "The Kerberos ticket cache --sasl gssapi authenticates from.",
    ),
    (
        "ZKLOCK_LOCK, ZKLOCK_NODE, ZKLOCK_FENCE, ZKLOCK_SESSION, ZKLOCK_HELD",
        "Set by zklock for a command run under a lock: the lock, its node, \
         the fencing token (the node's czxid), the session, and every \
         enclosing hold's node, one a line (a hint for a nested zklock, \
         which proves nesting from its ancestry).",
    ),
];

/// The variables that stand for an option of `command`, with the option's
/// help; options and their variables come from the definitions, so a new
/// one is listed by itself.
fn environment(command: &Command) -> Vec<(String, String)> {
    command
        .get_arguments()
        .filter(|arg| !arg.is_hide_set())
        .filter_map(|arg| {
            let variable = arg.get_env()?.to_string_lossy().into_owned();
            let option = arg
                .get_long()
                .map_or_else(String::new, |long| format!("--{long}"));
            // The whole help, its paragraphs run together.
            let help = arg
                .get_long_help()
                .or_else(|| arg.get_help())
                .map(|help| help.to_string().replace("\n\n", ". "))
                .unwrap_or_default();
            let help = help.trim_end_matches('.');
            Some((variable, format!("The default of {option}: {help}.")))
        })
        .collect()
}

fn environment_section(own: &[(String, String)]) -> String {
    let mut roff = String::from(".SH ENVIRONMENT\n");
    for (variable, text) in own {
        roff += &entry(variable, text);
    }
    for (variable, text) in OTHER_VARIABLES {
        roff += &entry(variable, text);
    }
    roff
}

fn files_section() -> String {
    let mut roff = String::from(".SH FILES\n");
    roff += &entry(
        "$ZKLOCK_CONFIG, else $XDG_CONFIG_HOME/zklock/config.toml, else ~/.config/zklock/config.toml",
        super::profile::FILE_EXPLAINED,
    );
    roff += &preformatted(super::profile::FILE_EXAMPLE);
    roff
}

/// zklock(1) and every subcommand's page but this one's.
fn see_also_section(name: &str, all: &[String]) -> String {
    let mut pages: Vec<String> = Vec::new();
    if !name.is_empty() {
        pages.push("zklock(1)".to_owned());
    }
    pages.extend(
        all.iter()
            .filter(|other| *other != name)
            .map(|other| format!("zklock-{other}(1)")),
    );
    format!(".SH \"SEE ALSO\"\n{}\n", escape(&pages.join(", ")))
}
