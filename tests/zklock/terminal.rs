//! A command under zklock at a terminal behaves as it does under flock(1):
//! it runs in the terminal's foreground group, so it reads the terminal and
//! the terminal's Ctrl-C reaches it, and Ctrl-Z cannot leave it stopped with
//! zklock waiting. Driven through a real pseudo-terminal
//! (support/terminal.py, on Python's pty module), zklock in its foreground
//! as a shell would start it.

use crate::support;

use std::process::Command;
use std::time::{Duration, Instant};

use support::proxy::{ClientMessage, FaultProxy, op};
use support::tmux::{PROMPT, Tmux, command_line};
use support::{Run, Running, TestEnv, Zklock, wait_until};

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

/// A lock whose name and holder make the spinner's line longer than any
/// terminal the tests use, so that it is cut to every width.
const LONG_LOCK: &str = "team-payments/nightly-settlement-batch-for-every-merchant-in-the-eu";

/// The holder's own words about itself, which the spinner shows.
const OWNER: &str = "settlement run for every merchant in the eu region, started by cron";

/// Holds [`LONG_LOCK`] for two minutes, from a detached zklock that says
/// it is `owner`.
fn hold_long_lock(env: &TestEnv, owner: &str) {
    env.zklock([
        "lock", LONG_LOCK, "--detach", "--lease", "2m", "--data", owner,
    ])
    .run()
    .assert_success();
}

#[test]
fn the_spinner_is_one_line_of_the_terminal_with_the_waits_progress() {
    let env = TestEnv::new();
    hold_long_lock(&env, OWNER);
    let run = on_terminal(
        &env.zklock(["lock", "-w", "2s", LONG_LOCK, "--", "true"])
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

/// Whether `line` names the holder whole (`held by USER@HOST pid N`) and
/// then how long it has held (`for 3s`).
fn holder_then_age(line: &str) -> bool {
    let Some((_, shown)) = line.split_once("held by ") else {
        return false;
    };
    let Some((owner, age)) = shown.split_once(" for ") else {
        return false;
    };
    let words: Vec<&str> = owner.split(' ').collect();
    let whole_pid = |pid: &str| !pid.is_empty() && pid.chars().all(|c| c.is_ascii_digit());
    matches!(words.as_slice(), [_, "pid", pid] if whole_pid(pid))
        && age.starts_with(|c: char| c.is_ascii_digit())
}

#[test]
fn at_60_columns_the_spinner_shows_the_holder_and_its_age_first() {
    let env = TestEnv::new();
    env.zklock(["lock", "tty", "--detach", "--lease", "2m"])
        .run()
        .assert_success();
    let run = on_terminal(
        &env.zklock(["lock", "-w", "2s", "tty", "--", "true"])
            .env("COLUMNS", "60"),
        &[],
    );
    run.assert_code(1);
    let drawn = without_escapes(&run.stdout);
    let spinner: Vec<&str> = drawn
        .split(['\r', '\n'])
        .filter(|line| line.contains("/2s]"))
        .collect();
    assert!(
        spinner.iter().any(|line| holder_then_age(line)),
        "{spinner:#?}"
    );
    assert!(
        spinner.iter().all(|line| !line.contains('…')),
        "{spinner:#?}"
    );
}

/// The lines a terminal showed, without escapes, empty lines or the
/// terminal's own echo of Ctrl-C.
pub(crate) fn shown_lines(output: &str) -> Vec<String> {
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

/// How long the screen gets to show what a test waits for.
const SCREEN_WAIT: Duration = Duration::from_secs(30);

/// The screen's rows that show anything, without their trailing blanks.
fn rows(screen: &str) -> Vec<&str> {
    screen
        .lines()
        .map(str::trim_end)
        .filter(|row| !row.is_empty())
        .collect()
}

/// The spinner's frame, when `row` is its line.
fn frame(row: &str) -> Option<char> {
    row.chars()
        .next()
        .filter(|c| ('\u{2800}'..='\u{28ff}').contains(c))
}

/// Whether `row` shows any part of the spinner's line: its frame, its
/// `waiting for`, its progress, or a piece of the lock's path (a row of a
/// reflowed line may hold nothing else).
fn spinner_like(row: &str) -> bool {
    spinner_mark(row)
        || row.contains("waiting for")
        || shows_piece_of(row, &format!("/locks/{LONG_LOCK}"))
}

/// Whether `row` shows a part of the spinner's line that nothing else
/// zklock writes does: its frame, its progress, or a piece of
/// [`LOUD_OWNER`].
pub(crate) fn spinner_mark(row: &str) -> bool {
    row.chars().any(|c| ('\u{2800}'..='\u{28ff}').contains(&c))
        || row.contains("s/30s]")
        || shows_piece_of(row, LOUD_OWNER)
}

/// Whether `row` holds eight characters of `text` in a row.
fn shows_piece_of(row: &str, text: &str) -> bool {
    let text: Vec<char> = text.chars().collect();
    text.windows(8)
        .any(|piece| row.contains(&piece.iter().collect::<String>()))
}

/// The screen's rows, when the last shows the spinner and no other row any
/// part of it (the rows above are the shell's, or zklock's notices).
fn spinner_last(screen: &str) -> Option<Vec<&str>> {
    let shown = rows(screen);
    let (last, above) = shown.split_last()?;
    (frame(last).is_some() && !above.iter().any(|row| spinner_like(row))).then_some(shown)
}

/// Starts a wait for [`LONG_LOCK`] at the window's prompt, on a clear
/// screen, typed short (through a shell function and a variable) so that
/// its own row fits every width the test makes; `flags` go before the
/// subcommand.
fn start_waiter(tmux: &Tmux, env: &TestEnv, flags: &str) {
    define_z(
        tmux,
        &env.zklock(Vec::<&str>::new()),
        &format!("L={LONG_LOCK}"),
    );
    tmux.send(&[&format!("z {flags} lock -w 30s $L -- true"), "Enter"]);
}

/// Defines the shell function `z` that runs `zklock` with its arguments
/// after the ones given, runs `also` (shell words) and clears the screen:
/// what is typed next fits one row.
fn define_z(tmux: &Tmux, zklock: &Zklock, also: &str) {
    let zklock = command_line(zklock);
    tmux.send(&[&format!("z() {{ {zklock} \"$@\"; }}; {also}"), "Enter"]);
    // The screen before the shell echoes the line is a prompt alone too:
    // the clear is typed once the shell has read the line.
    tmux.screen_until(SCREEN_WAIT, "the shell has read the line", |screen| {
        let shown = rows(screen);
        shown.len() > 1 && shown.last() == Some(&PROMPT)
    });
    tmux.clear();
}

/// Waits until the screen's last row is the spinner drawn for `columns`,
/// one column short of them, and no other row shows any part of it; that
/// screen.
fn spinner_drawn_for(tmux: &Tmux, columns: usize) -> String {
    let what = format!("the spinner is drawn alone for {columns} columns");
    tmux.screen_until(SCREEN_WAIT, &what, |screen| {
        spinner_last(screen).is_some_and(|shown| {
            let spinner = shown[shown.len() - 1];
            spinner.ends_with("/30s]") && spinner.chars().count() == columns - 1
        })
    })
}

/// The spinner's draws in `stream` (what zklock wrote to the terminal),
/// each its frame and how many columns it took. A draw is the line
/// between turning line wrap off and on again.
fn draws(stream: &str) -> Vec<(char, usize)> {
    stream
        .split("\u{1b}[?7l")
        .skip(1)
        .filter_map(|draw| {
            let (line, _) = draw.split_once("\u{1b}[?7h")?;
            let shown = without_escapes(line).replace('\r', "");
            Some((frame(&shown)?, shown.chars().count()))
        })
        .collect()
}

/// Resizes the window to `columns` and waits until zklock drew the
/// spinner for them with the frame of the draw before: a tick moves the
/// frame on, so that draw came from the resize, at once. The stream is
/// read, not the screen, so no draw is missed however slow the machine:
/// the test holds no race with the ticks.
fn redrawn_by_the_resize(tmux: &Tmux, columns: u16, stream: &std::path::Path) {
    let written =
        || String::from_utf8_lossy(&std::fs::read(stream).unwrap_or_default()).into_owned();
    let earlier = draws(&written()).len();
    tmux.resize(columns);
    let width = usize::from(columns) - 1;
    let what = format!("a draw for {columns} columns with the frame of the one before it");
    wait_until(Duration::from_secs(30), &what, || {
        let drawn = draws(&written());
        drawn
            .windows(2)
            .skip(earlier.saturating_sub(1))
            .any(|pair| pair[1] == (pair[0].0, width))
    });
    spinner_drawn_for(tmux, width + 1);
}

#[test]
fn a_resize_redraws_the_spinner_at_once_and_ctrl_c_leaves_a_clean_prompt() {
    let env = TestEnv::new();
    hold_long_lock(&env, OWNER);
    let tmux = Tmux::start(100, 24);
    let scratch = support::Scratch::new();
    let stream = scratch.file("stream");
    tmux.copy_output(&stream);
    start_waiter(&tmux, &env, "");
    spinner_drawn_for(&tmux, 100);
    // A shrink reflows the old line over two or three rows; a growth
    // leaves it short. Each time the spinner is drawn again at once, and
    // alone, for the new width.
    for columns in [60, 40, 100] {
        redrawn_by_the_resize(&tmux, columns, &stream);
    }
    // Ctrl-C gives up: the spinner and the echoed ^C go, and the prompt
    // comes on a clean row.
    tmux.send(&["C-c"]);
    tmux.screen_until(
        SCREEN_WAIT,
        "the shell's prompt is alone on its row, with nothing of the spinner left",
        |screen| {
            let shown = rows(screen);
            shown.last() == Some(&PROMPT)
                && !shown
                    .iter()
                    .any(|row| spinner_like(row) || row.contains("^C"))
        },
    );
    assert_eq!(
        env.zk().children(&format!("/locks/{LONG_LOCK}")).len(),
        1,
        "only the holder is left"
    );
}

#[test]
fn ctrl_z_while_waiting_leaves_no_half_line_of_the_spinner() {
    let env = TestEnv::new();
    hold_long_lock(&env, OWNER);
    let tmux = Tmux::start(100, 24);
    start_waiter(&tmux, &env, "");
    spinner_drawn_for(&tmux, 100);
    tmux.send(&["C-z"]);
    // The notice takes the spinner's row; the spinner goes on below it, and
    // nothing of the line it had drawn is left above.
    tmux.screen_until(
        SCREEN_WAIT,
        "a notice shows with the spinner alone below it",
        |screen| {
            spinner_last(screen)
                .is_some_and(|shown| shown.iter().any(|row| row.starts_with("zklock:")))
        },
    );
    tmux.send(&["C-c"]);
    tmux.wait_for_prompt();
}

#[test]
fn a_resize_signal_ignored_when_zklock_started_stays_ignored() {
    let env = TestEnv::new();
    hold_long_lock(&env, OWNER);
    let tmux = Tmux::start(100, 24);
    // The shell starts its commands with SIGWINCH ignored, as it ignores it.
    tmux.send(&["trap '' WINCH", "Enter"]);
    start_waiter(&tmux, &env, "");
    spinner_drawn_for(&tmux, 100);
    let zklock = tmux.foreground_pid();
    assert!(
        support::ignores(zklock, libc::SIGWINCH),
        "zklock catches the SIGWINCH it started with ignored"
    );
    // The line catches up with a resize at its next tick all the same.
    tmux.resize(60);
    spinner_drawn_for(&tmux, 60);
    tmux.send(&["C-c"]);
    tmux.wait_for_prompt();
}

#[test]
fn a_log_line_takes_a_row_of_its_own_above_the_spinner() {
    let env = TestEnv::new();
    hold_long_lock(&env, &LOUD_OWNER.repeat(20));
    let queue = format!("/locks/{LONG_LOCK}");
    // Two waiters ahead of the one at the terminal: each that gives up
    // makes it log the node it watches next, while its spinner shows.
    let mut ahead: Vec<Running> = (1..=2)
        .map(|n| {
            let waiter = env
                .zklock(["lock", "-w", "60s", LONG_LOCK, "--", "true"])
                .spawn();
            wait_until(SCREEN_WAIT, "the waiter ahead has queued", || {
                env.zk().children(&queue).len() == 1 + n
            });
            waiter
        })
        .collect();
    let tmux = Tmux::start(COLUMNS_FOR_THE_LOG, 40);
    start_waiter(&tmux, &env, "-v");
    let mut logged = log_rows_under_the_spinner(&tmux, 1);
    while let Some(mut waiter) = ahead.pop() {
        waiter.signal(libc::SIGTERM);
        waiter.wait(SCREEN_WAIT).assert_code(143);
        logged = log_rows_under_the_spinner(&tmux, logged + 1);
    }
    tmux.send(&["C-c"]);
    tmux.wait_for_prompt();
}

/// Wide enough for a log line about [`LONG_LOCK`] to fit a row, narrow
/// enough for the spinner's line, with [`LOUD_OWNER`] many times in it, to
/// be cut to the width: so a log line written over the spinner's would
/// leave the spinner's end beside it.
const COLUMNS_FOR_THE_LOG: u16 = 400;

/// A holder's words about itself that no log line has a piece of.
const LOUD_OWNER: &str = "QUARTERLY LEDGER CLOSE ";

/// Waits until the screen shows, below the command's row, at least
/// `at_least` rows of the log, each whole on a row of its own (a
/// timestamp first, nothing of the spinner's line in it), and the spinner
/// on the last row, drawn whole; returns how many log rows there are.
fn log_rows_under_the_spinner(tmux: &Tmux, at_least: usize) -> usize {
    let what = format!("{at_least} whole log rows show above the spinner, which is alone");
    let screen = tmux.screen_until(SCREEN_WAIT, &what, |screen| {
        let shown = rows(screen);
        let [_command, logged @ .., spinner] = shown.as_slice() else {
            return false;
        };
        frame(spinner).is_some()
            && spinner.ends_with("s/30s]")
            && logged.len() >= at_least
            && logged
                .iter()
                .all(|row| is_log_row(row) && !spinner_mark(row))
    });
    rows(&screen).len() - 2
}

/// Whether `row` starts as the log's lines do: a UTC timestamp
/// (`2024-05-01T12:00:00.123456Z`) and a level.
fn is_log_row(row: &str) -> bool {
    let Some((stamp, rest)) = row.split_once(' ') else {
        return false;
    };
    stamp.len() > 20
        && stamp.ends_with('Z')
        && stamp.chars().nth(10) == Some('T')
        && stamp[..4].chars().all(|c| c.is_ascii_digit())
        && ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"]
            .contains(&rest.trim_start().split(' ').next().unwrap_or(""))
}

// ------------------------------------------------------- progress lines

/// How long each answer through the slow proxy waits: a walk of a few
/// round trips takes seconds, and the deletes of one round trip outlast
/// the latest a live line may be drawn ([`LATE`]), so that a line drawn
/// only once an answer came is late.
const SLOW_ROUND_TRIP: Duration = Duration::from_millis(1500);

/// The latest, after [`PROGRESS_DELAY`], that a live line may be seen: a
/// tick of 100 ms, tmux's drawing and the test's looks at the screen, on a
/// loaded machine.
const LATE: Duration = Duration::from_millis(1000);

/// How long work runs before its progress line is drawn.
const PROGRESS_DELAY: Duration = Duration::from_millis(300);

/// Whether `row` is a live line: a spinner's frame or a progress bar's
/// cell first.
fn live_like(row: &str) -> bool {
    frame(row).is_some() || bar_like(row)
}

/// Whether `row` is a progress bar: a filled or an empty cell first.
fn bar_like(row: &str) -> bool {
    row.starts_with(BAR_CELLS)
}

/// A progress bar's filled and empty cells.
const BAR_CELLS: [char; 2] = ['\u{2588}', '\u{2591}'];

/// Whether `c` is drawn by a live line alone (a spinner's frame, a bar's
/// cell), never by what the commands print.
fn live_cell(c: char) -> bool {
    ('\u{2800}'..='\u{28ff}').contains(&c) || BAR_CELLS.contains(&c)
}

/// A run at the terminal: when a row that `live` picks was first seen, and
/// the screen once the prompt is back.
struct Watched {
    first_live: Option<Instant>,
    last_screen: String,
}

/// What the shell prints after zklock, with its exit code, on the row
/// below where zklock left the cursor: a live line left on that row stays
/// whole on the screen, however short (written over from its first
/// column, a line shorter than this would be covered; the shell's prompt
/// clears its row first).
const ENDED: &str = "zklock-exit=";

/// Types `z ARGS` (see [`define_z`]) and then [`ENDED`] on a cleared
/// screen and watches the screen, as often as tmux answers, until the
/// prompt is back.
fn watch_the_screen(tmux: &Tmux, args: &str, live: fn(&str) -> bool) -> Watched {
    let command = format!("z {args}; printf '\\n{ENDED}%s\\n' $?");
    let typed = format!("{PROMPT} {command}");
    tmux.send(&[&command, "Enter"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut first_live = None;
    loop {
        let screen = tmux.screen();
        let seen = Instant::now();
        let shown = rows(&screen);
        if first_live.is_none() && shown.iter().any(|row| live(row)) {
            first_live = Some(seen);
        }
        if shown.first() == Some(&typed.as_str())
            && shown.last() == Some(&PROMPT)
            && shown.len() > 1
        {
            return Watched {
                first_live,
                last_screen: screen,
            };
        }
        assert!(
            Instant::now() < deadline,
            "zklock {args} did not end; the screen:\n{screen}"
        );
    }
}

/// Whether `message` lists children: alone or in a multi-read, of `path`
/// when one is given.
fn lists(message: &ClientMessage, path: Option<&str>) -> bool {
    let ClientMessage::Request {
        op,
        path: read,
        multi_paths,
        ..
    } = message
    else {
        return false;
    };
    let listing = [op::GET_CHILDREN, op::GET_CHILDREN2, op::MULTI_READ].contains(op);
    listing
        && path.is_none_or(|path| {
            read.as_deref() == Some(path) || multi_paths.iter().any(|p| p == path)
        })
}

/// Runs `zklock ARGS` at a terminal through a proxy that holds every
/// answer [`SLOW_ROUND_TRIP`]: a live line that `live` picks must show
/// once the work has run [`PROGRESS_DELAY`] (measured from the first
/// request `starts` picks, which the work sends as it begins), not before,
/// and be gone when zklock ends. Returns the first word of each of the
/// screen's rows between the typed line and the prompt.
fn live_line_of(
    env: &TestEnv,
    args: &str,
    starts: impl Fn(&ClientMessage) -> bool,
    live: fn(&str) -> bool,
) -> Vec<String> {
    let proxy = FaultProxy::start(env.servers());
    proxy.delay_replies(SLOW_ROUND_TRIP);
    // Tall enough for all that `dump` prints of one lock, wide enough for
    // each line `stat` prints.
    let tmux = Tmux::start(250, 100);
    // A connection silent for a tenth of the session timeout is taken for
    // a dead one: that must outlast the slow round trips.
    let zklock = Zklock::new(["--session-timeout", "30s"]).hosts(proxy.hosts(env));
    define_z(&tmux, &zklock, "");
    let watched = watch_the_screen(&tmux, args, live);
    let started = proxy.first_sent(starts).unwrap_or_else(|| {
        panic!(
            "zklock {args} never began its work: {:?}",
            proxy.client_messages()
        )
    });
    let first_live = watched.first_live.unwrap_or_else(|| {
        panic!(
            "zklock {args} drew no live line; at the end:\n{}",
            watched.last_screen
        )
    });
    let after = first_live.checked_duration_since(started);
    assert!(
        after.is_some_and(|after| after >= PROGRESS_DELAY - Duration::from_millis(50)
            && after <= PROGRESS_DELAY + LATE),
        "zklock {args}: the live line showed {after:?} after the work began"
    );
    let shown = rows(&watched.last_screen);
    assert!(
        shown.len() > 2 && shown[shown.len() - 2] == format!("{ENDED}0"),
        "zklock {args} failed, or left its live line:\n{}",
        watched.last_screen
    );
    assert!(
        !shown.iter().any(|row| row.chars().any(live_cell)),
        "zklock {args} left a piece of its live line:\n{}",
        watched.last_screen
    );
    first_words(shown[1..shown.len() - 2].iter().copied())
}

/// The first word of each line `zklock ARGS` prints on stdout off a
/// terminal (the rest holds ages, which move on), as [`rows`] leaves them.
fn printed(env: &TestEnv, args: &[&str]) -> Vec<String> {
    // As wide as the terminal above: off a terminal, tables fit COLUMNS.
    let run = env.zklock(args).env("COLUMNS", "250").run();
    run.assert_success();
    first_words(run.stdout.lines().filter(|line| !line.trim().is_empty()))
}

fn first_words<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    lines
        .into_iter()
        .map(|line| {
            line.split_whitespace()
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

#[test]
fn ls_stat_and_dump_show_their_progress_line_after_300_ms_and_clear_it() {
    let env = TestEnv::new();
    let holder = env.connect();
    // A holder and a waiter in each lock: stat reads the tree around a
    // lock with waiters, for their chains.
    for lock in ["/locks/slow", "/locks/other"] {
        holder.mkdir_p(lock);
        for _ in 0..2 {
            holder.create_ephemeral_sequential(&format!("{lock}/lock-"), b"");
        }
    }
    let chroot = env.chroot().to_owned();
    let any_listing = |message: &ClientMessage| lists(message, None);
    // stat reads its lock first, then the tree around it for chains.
    let stat_starts = |message: &ClientMessage| lists(message, Some(&format!("{chroot}/locks")));
    for (args, starts) in [
        ("ls", &any_listing as &dyn Fn(&ClientMessage) -> bool),
        ("dump slow", &any_listing),
        ("stat slow", &stat_starts),
    ] {
        let shown = live_line_of(&env, args, starts, live_like);
        let words: Vec<&str> = args.split(' ').collect();
        assert_eq!(shown, printed(&env, &words), "zklock {args}");
    }
    // stat's line ends before it prints, and its first row would cover a
    // line left behind: with that output elsewhere, nothing covers it.
    let shown = live_line_of(&env, "stat slow >/dev/null", stat_starts, live_like);
    assert!(
        shown.is_empty(),
        "zklock stat printed on the terminal: {shown:?}"
    );
}

#[test]
fn reaps_progress_bar_shows_after_300_ms_and_is_cleared() {
    let env = TestEnv::new();
    let holder = env.connect();
    holder.mkdir_p("/locks/reaped");
    let nodes: Vec<String> = (0..3)
        .map(|_| holder.create_ephemeral_sequential("/locks/reaped/lock-", b""))
        .collect();
    // The walk reads the contenders and their directory once; the deletes
    // begin by reading the directory again (its end record may name a last
    // run to keep), then the contenders, to delete only what was shown.
    let directory = format!("{}/locks/reaped", env.chroot());
    let reads = std::cell::Cell::new(0);
    let deletes_begin = |message: &ClientMessage| {
        let ClientMessage::Request { multi_paths, .. } = message else {
            return false;
        };
        if multi_paths.contains(&directory) {
            reads.set(reads.get() + 1);
        }
        reads.get() == 2
    };
    live_line_of(&env, "reap --all --yes reaped", deletes_begin, bar_like);
    let left: Vec<&String> = nodes
        .iter()
        .filter(|node| env.zk().exists(node).is_some())
        .collect();
    assert!(left.is_empty(), "not reaped: {left:?}");
}

/// The lock the loops below take, in a lock directory of the test's own.
const LOOPED: &str = "looped";

/// `for i in 1 2 3; do echo began-$i; zklock lock LOOPED -- COMMAND; done;
/// echo after-loop`: a loop of locked commands as a person types it, or as
/// a script holds it. (The words it prints are quoted apart in the line,
/// so that the echo of the typed line never shows them.)
fn loop_of(env: &TestEnv, command: &[&str]) -> String {
    let zklock = command_line(&env.zklock(["lock", LOOPED, "--"]).args(command));
    format!("for i in 1 2 3; do echo began-$i; {zklock}; done; echo after\"\"-loop")
}

/// Types `line` at the prompt, waits until `ready` shows that the first
/// round has reached the point to interrupt (its command runs, or its
/// zklock waits), sends one Ctrl-C, and checks that the loop stopped
/// there: the prompt is back, no second round began, nothing after the
/// loop ran, the terminal is as it was, and no node of the loop is left.
fn one_ctrl_c_stops(tmux: &Tmux, env: &TestEnv, line: &str, ready: impl Fn(&str) -> bool) {
    let scratch = support::Scratch::new();
    let before = tmux.stty(&scratch.file("before"));
    // The last round's rows must be gone before this one's are looked for.
    tmux.clear();
    tmux.send(&[line, "Enter"]);
    tmux.screen_until(SCREEN_WAIT, "the first round is under way", |screen| {
        ready(screen)
    });
    tmux.send(&["C-c"]);
    tmux.wait_for_prompt();
    let screen = tmux.screen();
    assert!(
        !screen.contains("began-2") && !screen.contains("after-loop"),
        "the loop went on after Ctrl-C:\n{screen}"
    );
    assert_eq!(
        tmux.stty(&scratch.file("after")),
        before,
        "the terminal was left changed"
    );
    let left = env.zk().children_if_any(&format!("/locks/{LOOPED}"));
    assert!(left.len() <= 1, "the loop left its node: {left:?}");
}

#[test]
fn one_ctrl_c_stops_a_loop_of_locked_commands_and_a_script_running_it() {
    let env = TestEnv::new();
    let tmux = Tmux::start(250, 40);
    // Long enough that the Ctrl-C, sent once the command runs, comes
    // before it ends however loaded the machine.
    let line = loop_of(&env, &["sh", "-c", "echo run\"\"ning; sleep 60"]);
    // The command's own row, never a piece of a typed line.
    let running = |screen: &str| screen.lines().any(|row| row.trim_end() == "running");
    // The command owns the terminal, so only it gets the Ctrl-C: zklock
    // must die of the same signal for the shell to stop the loop.
    one_ctrl_c_stops(&tmux, &env, &line, running);
    assert!(
        env.zk()
            .children_if_any(&format!("/locks/{LOOPED}"))
            .is_empty()
    );
    // A script that runs the loop stops too, rather than going on and
    // ending 0: its shell must see the interrupt as well as zklock's death.
    let scratch = support::Scratch::new();
    let script = scratch.file("loop.sh");
    std::fs::write(&script, format!("{line}\n")).expect("write the script");
    one_ctrl_c_stops(&tmux, &env, &format!("bash {}", script.display()), running);
    assert!(
        env.zk()
            .children_if_any(&format!("/locks/{LOOPED}"))
            .is_empty()
    );
}

#[test]
fn one_ctrl_c_stops_a_loop_whose_zklock_waits() {
    let env = TestEnv::new();
    let mut holder = env.zklock(["lock", LOOPED]).spawn();
    holder.next_line(SCREEN_WAIT);
    let tmux = Tmux::start(250, 40);
    let line = loop_of(&env, &["true"]);
    let waiting = || env.zk().children_if_any(&format!("/locks/{LOOPED}")).len() == 2;
    one_ctrl_c_stops(&tmux, &env, &line, |_| waiting());
    let scratch = support::Scratch::new();
    let script = scratch.file("loop.sh");
    std::fs::write(&script, format!("{line}\n")).expect("write the script");
    one_ctrl_c_stops(&tmux, &env, &format!("bash {}", script.display()), |_| {
        waiting()
    });
    assert_eq!(
        env.zk().children(&format!("/locks/{LOOPED}")).len(),
        1,
        "only the holder is left"
    );
    holder.signal(libc::SIGTERM);
    holder.wait(SCREEN_WAIT).assert_success();
}
