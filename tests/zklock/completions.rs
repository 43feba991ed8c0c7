//! The shipped completion scripts, run through each shell's own completion
//! machinery: bash's completion function with COMP_WORDS and COMP_CWORD
//! (bash-completion loaded, as on a desktop), zsh's compsys in a real
//! interactive zsh on a pseudo-terminal (zpty), and fish's `complete -C`.
//!
//! Each test asks for one thing a user types TAB for and checks what the
//! shell offers: never a hidden flag, the subcommands after `zklock man`,
//! a command and then its files after `--`, and (zsh) no error for
//! `--auth`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support::secured::{require_tool, scratch_dir};

/// The checked-in scripts (kept equal to the generated ones by `generated`).
fn completions_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("completions")
}

/// A directory with a file to complete, the shells' working directory.
fn workdir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch_dir().join("completions");
        std::fs::create_dir_all(&dir).expect("create the completion test dir");
        std::fs::write(dir.join("alpha-file.txt"), "").expect("create a file to complete");
        dir
    })
}

/// What a shell printed and wrote to stderr.
struct Offered {
    words: Vec<String>,
    stderr: String,
}

impl Offered {
    fn has(&self, word: &str) -> bool {
        self.words.iter().any(|w| w == word)
    }
}

fn run(mut command: Command) -> (String, String) {
    let out = command
        .current_dir(workdir())
        .output()
        .expect("run the shell");
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Completes `line` (the last word, possibly empty, is the one completed)
/// in bash: the function `complete -p zklock` names is called as readline
/// would call it.
const BASH_DRIVER: &str = r#"
script=$1; shift
source /usr/share/bash-completion/bash_completion
source "$script"
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
spec=$(complete -p zklock)
function=${spec##*-F }
function=${function%% *}
"$function" zklock "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
"#;

fn bash(line: &str) -> Offered {
    require_tool("bash", "bash");
    assert!(
        Path::new("/usr/share/bash-completion/bash_completion").is_file(),
        "bash-completion is not installed: run scripts/setup (or: apt-get install bash-completion)"
    );
    let mut words: Vec<&str> = line.split(' ').collect();
    if line.ends_with(' ') {
        words.pop();
        words.push("");
    }
    let mut command = Command::new("timeout");
    command
        .args([
            "30",
            "bash",
            "--norc",
            "--noprofile",
            "-c",
            BASH_DRIVER,
            "bash",
        ])
        .arg(completions_dir().join("zklock.bash"))
        .args(words);
    let (stdout, stderr) = run(command);
    Offered {
        words: stdout.lines().map(str::to_owned).collect(),
        stderr,
    }
}

/// Completes `line` in an interactive zsh on a pseudo-terminal, with compsys
/// loaded from the completions directory. Every match the completion adds
/// is printed between markers by a wrapper around `compadd`; the inner
/// shell's stderr goes to a file, returned as `stderr`. The markers are
/// assembled at run time so the terminal's echo of the set-up never
/// contains them.
const ZSH_DRIVER: &str = r#"
zmodload zsh/zpty || exit 90
zpty z zsh -f -i
zpty -w z "exec 2>${(q)3}"
zpty -w z 'PROMPT="" RPROMPT=""; unsetopt zle_bracketed_paste 2>/dev/null'
zpty -w z "fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z 'compadd() {
  if [[ " $* " == *" -"[OAD]" "* ]]; then builtin compadd "$@"; return; fi
  local -a __hits; builtin compadd -A __hits "$@"; local ret=$?
  local o="<""m>" c="</""m>"; print -r -- $o${^__hits}$c
  builtin compadd "$@"; return ret
}'
zpty -w z '__zklock_test_done() { print -r -- "<""done>" }; comppostfuncs=(__zklock_test_done)'
zpty -w z 'zstyle ":completion:*" list-prompt ""; zstyle ":completion:*" menu no'
zpty -n -w z "$2"$'\t'
local line
while zpty -r z line; do
  [[ $line == *'<done>'* ]] && break
  print -r -- "$line"
done
zpty -d z
"#;

fn zsh(line: &str) -> Offered {
    require_tool("zsh", "zsh");
    let errors = workdir().join(format!("zsh-stderr-{}", unique()));
    let mut command = Command::new("timeout");
    command
        .args(["30", "zsh", "-f", "-c", ZSH_DRIVER, "zsh"])
        .arg(completions_dir())
        .arg(line)
        .arg(&errors);
    let (stdout, _) = run(command);
    let words = stdout
        .split("<m>")
        .skip(1)
        .filter_map(|rest| rest.split_once("</m>"))
        .map(|(word, _)| word.to_owned())
        .collect();
    let stderr = std::fs::read_to_string(&errors).unwrap_or_default();
    Offered { words, stderr }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Completes `line` with fish's `complete -C`, the script sourced.
fn fish(line: &str) -> Offered {
    require_tool("fish", "fish");
    let mut command = Command::new("timeout");
    command
        .args(["30", "fish", "--no-config", "-c"])
        .arg("source $argv[1]; complete -C $argv[2]")
        .arg(completions_dir().join("zklock.fish"))
        .arg(line);
    let (stdout, stderr) = run(command);
    Offered {
        words: stdout
            .lines()
            .map(|l| l.split('\t').next().unwrap_or_default().to_owned())
            .collect(),
        stderr,
    }
}

type Shell = fn(&str) -> Offered;
const SHELLS: [(&str, Shell); 3] = [("bash", bash), ("zsh", zsh), ("fish", fish)];

#[test]
fn hidden_flags_are_never_offered() {
    for (shell, complete) in SHELLS {
        let global = complete("zklock --ho");
        assert!(global.has("--hosts"), "{shell}: {:?}", global.words);
        for line in [
            "zklock --hol",
            "zklock lock deploy --hol",
            "zklock ls --hol",
        ] {
            let offered = complete(line);
            assert!(
                !offered.words.iter().any(|w| w.starts_with("--holder")),
                "{shell} offers a hidden flag for {line:?}: {:?}",
                offered.words
            );
        }
    }
}

#[test]
fn man_offers_every_subcommand() {
    // Every one but the hidden internal plumbing, which has no page.
    let names: Vec<String> = zklock::cli::command()
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .map(|sub| sub.get_name().to_owned())
        .collect();
    for (shell, complete) in SHELLS {
        let offered = complete("zklock man ");
        for name in &names {
            assert!(
                offered.has(name),
                "{shell}: no {name} in {:?}",
                offered.words
            );
        }
    }
}

#[test]
fn after_the_separator_a_command_then_its_files() {
    for (shell, complete) in SHELLS {
        for runner in ["lock", "rlock", "wlock"] {
            let command = complete(&format!("zklock {runner} -n deploy -- mkdi"));
            assert!(
                command.has("mkdir"),
                "{shell} {runner}: {:?} {}",
                command.words,
                command.stderr
            );
        }
        let files = complete("zklock lock deploy -- cat alp");
        assert!(
            files.has("alpha-file.txt"),
            "{shell}: {:?} {}",
            files.words,
            files.stderr
        );
    }
}

#[test]
fn zsh_completes_a_value_whose_name_has_a_colon() {
    let offered = zsh("zklock --auth ");
    assert!(
        offered.stderr.is_empty(),
        "zsh reported an error: {}",
        offered.stderr
    );
    // The value is free text, so zsh falls back to files.
    assert!(offered.has("alpha-file.txt"), "{:?}", offered.words);
}

#[test]
fn tab_offers_what_fits_the_word() {
    let mut subcommands: Vec<String> = zklock::cli::command()
        .get_subcommands()
        .map(|sub| sub.get_name().to_owned())
        .collect();
    subcommands.push("help".to_owned());
    for (shell, complete) in SHELLS {
        // At `zklock <TAB>`: the subcommands, not the 30 options first.
        let first = complete("zklock ");
        assert!(
            !first.words.is_empty() && first.words.iter().all(|w| subcommands.contains(w)),
            "{shell}: {:?}",
            first.words
        );
        // A lone `-` is no completion of anything.
        let stat = complete("zklock stat ");
        assert!(!stat.has("-"), "{shell}: {:?}", stat.words);
        // `man` takes a page name, nothing else.
        let man = complete("zklock man ");
        assert!(
            man.words.iter().all(|w| subcommands.contains(w)),
            "{shell}: {:?}",
            man.words
        );
    }
}
