//! A command under zklock at a terminal behaves as it does under flock(1):
//! it runs in the terminal's foreground group, so it reads the terminal and
//! the terminal's Ctrl-C reaches it, and Ctrl-Z cannot leave it stopped with
//! zklock waiting. Driven through a real pseudo-terminal
//! (support/terminal.py, on Python's pty module), zklock in its foreground
//! as a shell would start it.

use crate::support;

use std::process::Command;
use std::time::Duration;

use support::{Run, Running, TestEnv, Zklock};

/// The driver that runs a command on a fresh pseudo-terminal.
const DRIVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/zklock/support/terminal.py"
);
/// How long the driver lets the steps and the command take in all; the
/// driver exits 99 ([`HUNG`]) after that.
const DEADLINE_SECS: u32 = 30;
const HUNG: i32 = 99;

/// Runs `zklock` on a new terminal, following `steps` (`expect:TEXT`,
/// `send:TEXT`); the run's stdout is what the terminal showed.
pub(crate) fn on_terminal(zklock: &Zklock, steps: &[&str]) -> Run {
    on_terminal_through(&[], zklock, steps)
}

/// [`on_terminal`], with zklock's command line given to `wrapper` (say,
/// `sh -c 'stty tostop; exec "$@"' sh`) as its last arguments.
pub(crate) fn on_terminal_through(wrapper: &[&str], zklock: &Zklock, steps: &[&str]) -> Run {
    let template = zklock.through(wrapper);
    let mut command = Command::new("/usr/bin/python3");
    command
        .arg(DRIVER)
        .arg(DEADLINE_SECS.to_string())
        .args(steps)
        .arg("--")
        .args(wrapper)
        .arg(template.get_program())
        .args(template.get_args());
    for (key, value) in template.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    let run = Running::start(command, format!("[terminal] {}", zklock.cmdline()), None)
        .wait(Duration::from_secs(u64::from(DEADLINE_SECS) + 30));
    assert_ne!(run.code, Some(HUNG), "hung on the terminal: {run:?}");
    run
}

/// A command that says it is ready, then reads a line from the terminal.
fn reader(env: &TestEnv) -> Zklock {
    env.zklock([
        "lock",
        "tty",
        "--",
        "sh",
        "-c",
        "echo ready; read -r line; echo got:$line",
    ])
}

fn assert_no_node(env: &TestEnv) {
    let left = env.zk().children_if_any("/locks/tty");
    assert!(left.is_empty(), "nodes left behind: {left:?}");
}

#[test]
fn an_interactive_command_reads_its_line_from_the_terminal() {
    let env = TestEnv::new();
    let run = on_terminal(
        &reader(&env),
        &["expect:ready", "send:hello\\n", "expect:got:hello"],
    );
    run.assert_success();
    assert_no_node(&env);
}

#[test]
fn ctrl_c_at_the_terminal_ends_the_command_and_releases() {
    let env = TestEnv::new();
    let run = on_terminal(&reader(&env), &["expect:ready", "send:\\x03"]);
    run.assert_code(130);
    assert!(!run.stdout.contains("got:"), "the read went on: {run:?}");
    assert_no_node(&env);
}

#[test]
fn ctrl_backslash_at_the_terminal_reaches_the_command() {
    let env = TestEnv::new();
    let run = on_terminal(&reader(&env), &["expect:ready", "send:\\x1c"]);
    run.assert_code(131);
    assert_no_node(&env);
}

#[test]
fn ctrl_z_neither_hangs_zklock_nor_strands_the_command() {
    let env = TestEnv::new();
    // The command is continued at once, and zklock says so on the terminal
    // (the echo of Ctrl-Z is `^Z`): the command still reads the next line,
    // and zklock ends with it.
    let run = on_terminal(
        &reader(&env),
        &[
            "expect:ready",
            "send:\\x1a",
            "expect:Ctrl-Z",
            "send:after\\n",
            "expect:got:after",
        ],
    );
    run.assert_success();
    assert_no_node(&env);
}

#[test]
fn the_terminal_comes_back_to_zklock_after_the_command() {
    let env = TestEnv::new();
    // The shell after zklock would be stopped (SIGTTIN) reading the terminal
    // if zklock had not taken it back: here zklock is the "shell", and a
    // second command under it reads the terminal too.
    let script = format!(
        "{zklock} -H {hosts} lock tty -- sh -c 'echo first; read -r a; echo got:$a' && \
         echo between && read -r b && echo shell-got:$b",
        zklock = support::cmd::ZKLOCK,
        hosts = env.hosts(),
    );
    let mut command = Command::new("/usr/bin/python3");
    command.args([
        DRIVER,
        &DEADLINE_SECS.to_string(),
        "expect:first",
        "send:one\\n",
        "expect:between",
        "send:two\\n",
        "expect:shell-got:two",
        "--",
        "/bin/sh",
        "-c",
        &script,
    ]);
    let run = Running::start(command, "[terminal] sh -c ...".into(), None)
        .wait(Duration::from_secs(u64::from(DEADLINE_SECS) + 30));
    assert_ne!(run.code, Some(HUNG), "hung on the terminal: {run:?}");
    run.assert_success();
    assert!(run.stdout.contains("got:one"), "{run:?}");
    assert_no_node(&env);
}

#[test]
fn holding_without_a_command_at_a_terminal_says_how_to_release() {
    let env = TestEnv::new();
    let run = on_terminal(
        &env.zklock(["lock", "tty"]),
        &["expect:Ctrl-C", "send:\\x03"],
    );
    // A hold without a command ends normally on a signal.
    run.assert_success();
    assert!(run.stdout.contains("/locks/tty/"), "no token: {run:?}");
    assert_no_node(&env);
}

#[test]
fn ctrl_z_does_not_stop_a_hold_without_a_command() {
    let env = TestEnv::new();
    // A stopped zklock would keep no session: the lock would lapse while it
    // seemed held. So Ctrl-Z does nothing, and Ctrl-C still releases.
    let run = on_terminal(
        &env.zklock(["lock", "tty"]),
        &["expect:Ctrl-C", "send:\\x1a", "send:\\x03"],
    );
    run.assert_success();
    assert_no_node(&env);
}

#[test]
fn no_color_turns_the_colour_of_the_log_off() {
    let env = TestEnv::new();
    let logged = |no_color: Option<&str>| {
        let mut zklock = env.zklock(["-v", "lock", "painted", "--", "true"]);
        if let Some(value) = no_color {
            zklock = zklock.env("NO_COLOR", value);
        }
        let run = on_terminal(&zklock, &[]);
        run.assert_success();
        (coloured(&run.stdout), run)
    };
    for (no_color, expected) in [(None, true), (Some(""), true), (Some("1"), false)] {
        let (coloured, run) = logged(no_color);
        assert_eq!(coloured, expected, "NO_COLOR={no_color:?}: {run:?}");
    }
}

/// True when `shown` sets a colour: an SGR sequence (ESC [ parameters m)
/// with a foreground or background colour among its parameters. Bold,
/// reverse video and the reset to the default colours are no colour.
pub(crate) fn coloured(shown: &str) -> bool {
    shown.split("\x1b[").skip(1).any(|rest| {
        let Some(end) = rest.find(|c: char| !c.is_ascii_digit() && c != ';') else {
            return false;
        };
        rest[end..].starts_with('m')
            && rest[..end].split(';').any(|parameter| {
                matches!(
                    parameter.parse::<u32>(),
                    Ok(30..=38 | 40..=48 | 90..=97 | 100..=107)
                )
            })
    })
}

/// Runs `script` with `sh` on a new terminal, as a person's shell would,
/// where `$ZKLOCK` is the zklock under test (with its connect string); the
/// run's stdout is what the terminal showed.
fn shell_on_terminal(env: &TestEnv, script: &str, steps: &[&str]) -> Run {
    let zklock = env.zklock(Vec::<&str>::new()).command();
    let mut line = vec![zklock.get_program().to_string_lossy().into_owned()];
    line.extend(zklock.get_args().map(|a| a.to_string_lossy().into_owned()));
    let mut command = Command::new("/usr/bin/python3");
    command
        .arg(DRIVER)
        .arg(DEADLINE_SECS.to_string())
        .args(steps)
        .args(["--", "sh", "-c", script])
        .env("ZKLOCK", line.join(" "));
    for (key, value) in zklock.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    let run = Running::start(command, format!("[terminal] sh -c {script}"), None)
        .wait(Duration::from_secs(u64::from(DEADLINE_SECS) + 30));
    assert_ne!(run.code, Some(HUNG), "hung on the terminal: {run:?}");
    run
}

/// The terminal's modes before and after zklock ran a command that set raw
/// mode and no echo and was then stopped by `how` (a shell snippet run in
/// the background once the command is ready, or in the command itself),
/// with zklock's exit code.
fn modes_around(env: &TestEnv, stopper: &str, in_command: &str) -> (String, String, String) {
    let scratch = support::Scratch::new();
    let path = |name: &str| scratch.file(name).to_string_lossy().into_owned();
    let (before, after, ready) = (path("before"), path("after"), path("ready"));
    let script = format!(
        "stty -a > {before}; \
         ( while [ ! -e {ready} ]; do sleep 0.1; done; {stopper} ) & \
         $ZKLOCK lock tty -- sh -c 'stty raw -echo; touch {ready}; {in_command}'; \
         echo zklock-exit=$?; stty -a > {after}; wait"
    );
    let run = shell_on_terminal(env, &script, &[]);
    let code = run
        .stdout
        .split("zklock-exit=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no exit code: {run:?}"))
        .to_owned();
    let read = |file: &str| std::fs::read_to_string(file).expect("stty -a output");
    (read(&before), read(&after), code)
}

#[test]
fn terminal_modes_are_restored_after_a_lost_lock_and_a_signal() {
    let env = TestEnv::new();
    // The lock is broken from elsewhere while the command holds it raw.
    let (before, after, code) = modes_around(
        &env,
        "$ZKLOCK release tty --holders --yes >/dev/null 2>&1",
        "sleep 60",
    );
    assert_eq!(code, "4", "the lock was lost");
    assert_eq!(before, after, "modes after a lost lock");
    // The command dies of a signal with the terminal raw.
    let (before, after, code) = modes_around(&env, "true", "kill -TERM $$");
    assert_eq!(code, "143", "the command died of SIGTERM");
    assert_eq!(before, after, "modes after a signal");
}

/// `text` without the terminal's control sequences (`ESC [ ... letter`).
fn without_escapes(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[test]
fn the_spinner_is_one_line_of_the_terminal_with_the_waits_progress() {
    let env = TestEnv::new();
    let lock = "team-payments/nightly-settlement-batch-for-every-merchant-in-the-eu";
    let owner = "settlement run for every merchant in the eu region, started by cron";
    env.zklock(["lock", lock, "--detach", "--lease", "2m", "--data", owner])
        .run()
        .assert_success();
    let run = on_terminal(
        &env.zklock(["lock", "-w", "2s", lock, "--", "true"])
            .env("COLUMNS", "80"),
        &[],
    );
    run.assert_code(1);
    let drawn: Vec<String> = without_escapes(&run.stdout)
        .split(['\r', '\n'])
        .map(str::to_owned)
        .collect();
    assert!(
        drawn.iter().any(|line| line.contains("/2s]")),
        "the wait's progress: {drawn:#?}"
    );
    let spinner: Vec<&String> = drawn.iter().filter(|l| l.contains("/2s]")).collect();
    assert!(
        spinner.iter().all(|line| line.chars().count() <= 80),
        "{spinner:#?}"
    );
}

/// The lines a terminal showed, without escapes, empty lines or the
/// terminal's own echo of Ctrl-C.
fn shown_lines(output: &str) -> Vec<String> {
    without_escapes(output)
        .split(['\r', '\n'])
        .map(str::trim)
        .filter(|line| !line.is_empty() && *line != "^C")
        .map(str::to_owned)
        .collect()
}

#[test]
fn quiet_at_a_terminal_draws_nothing_beyond_what_it_prints_off_one() {
    let env = TestEnv::new();
    // A hold without a command: the token, and no word on how to release.
    let run = on_terminal(
        &env.zklock(["-q", "lock", "tty"]),
        &["expect:/locks/tty/", "send:\\x03"],
    );
    run.assert_success();
    let shown = shown_lines(&run.stdout);
    assert!(
        shown.len() == 1 && shown[0].starts_with("/locks/tty/"),
        "{shown:#?}"
    );
    // A wait that gives up: its message, and no spinner before it.
    env.zklock(["lock", "tty", "--detach", "--lease", "2m"])
        .run()
        .assert_success();
    let waiter = env.zklock(["-q", "lock", "-w", "1s", "tty", "--", "true"]);
    let off_a_terminal = waiter.run();
    off_a_terminal.assert_code(1);
    let run = on_terminal(&waiter, &[]);
    run.assert_code(1);
    assert_eq!(
        shown_lines(&run.stdout),
        shown_lines(&off_a_terminal.stderr)
    );
}

#[test]
fn ctrl_z_while_waiting_leaves_zklock_waiting() {
    let env = TestEnv::new();
    env.zklock(["lock", "tty", "--detach", "--lease", "2m"])
        .run()
        .assert_success();
    // A shell with job control runs zklock as a job of its own, as at a
    // person's prompt; a stopped zklock would be reported as stopped
    // (exit 148) instead of giving up after its 3 s (exit 1).
    let run = shell_on_terminal(
        &env,
        "set -m; $ZKLOCK lock -w 3s tty -- true; echo zklock-exit=$?",
        &["expect:waiting for", "send:\\x1a"],
    );
    let code = run
        .stdout
        .split("zklock-exit=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next());
    assert_eq!(code, Some("1"), "{run:?}");
}
