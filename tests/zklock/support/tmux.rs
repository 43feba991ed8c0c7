//! A real terminal for tests that look at the screen: a tmux server of the
//! test's own, with one window running a plain shell, typed into with
//! `send-keys` and read with `capture-pane` (what a person would see, after
//! tmux's own wrapping and reflowing).

use std::cell::Cell;
use std::process::Command;
use std::time::{Duration, Instant};

use super::{Scratch, Zklock, wait_until};

/// The shell prompt in the window, to tell when a command has ended.
pub const PROMPT: &str = "zk-test$";

/// How long the shell and the screen get to catch up.
const WAIT: Duration = Duration::from_secs(30);

/// How long tmux holds a pane's resize back after the one before, with a
/// margin.
const RESIZE_HELD_BACK: Duration = Duration::from_millis(300);

/// A tmux server of its own with one window running a plain shell.
pub struct Tmux {
    socket: String,
    /// When the window was last resized.
    resized: Cell<Option<Instant>>,
    _scratch: Scratch,
}

impl Tmux {
    /// A window of `columns` × `rows` with the shell's prompt showing.
    pub fn start(columns: u16, rows: u16) -> Tmux {
        super::find_on_path("tmux").unwrap_or_else(|| {
            panic!("tmux is not installed: run scripts/setup (or: apt-get install tmux)")
        });
        let tmux = Tmux {
            socket: format!("zklock-test-{}-{}", std::process::id(), super::unique()),
            resized: Cell::new(None),
            _scratch: Scratch::new(),
        };
        tmux.run(&[
            "new-session",
            "-d",
            "-x",
            &columns.to_string(),
            "-y",
            &rows.to_string(),
            "-s",
            "top",
            "env",
            "-i",
            "TERM=xterm-256color",
            "PATH=/usr/bin:/bin",
            &format!("PS1={PROMPT} "),
            "bash",
            "--norc",
            "--noprofile",
        ]);
        wait_until(WAIT, "the shell prompt shows", || {
            tmux.screen().contains(PROMPT)
        });
        tmux
    }

    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("run tmux");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types `keys` (tmux key names, or text) into the window.
    pub fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "top"];
        args.extend(keys);
        self.run(&args);
    }

    /// Copies what the programs in the window write to its terminal, from
    /// now on, to `file`: the bytes the screen is drawn from, where every
    /// redraw shows, however soon the next one covers it on the screen.
    pub fn copy_output(&self, file: &std::path::Path) {
        let command = format!("cat >> '{}'", file.display());
        self.run(&["pipe-pane", "-t", "top", "-o", &command]);
    }

    /// What the window shows now.
    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "top"])
    }

    /// The pid of the command the window's shell is running.
    pub fn foreground_pid(&self) -> i32 {
        let shell = self.run(&["display-message", "-p", "-t", "top", "#{pane_pid}"]);
        let shell = shell.trim();
        let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children"))
            .expect("the shell's children");
        let child = children.split_whitespace().next();
        child
            .and_then(|pid| pid.parse().ok())
            .unwrap_or_else(|| panic!("the shell runs no command: {children:?}"))
    }

    /// Polls the screen for `moment` at least; true once `shows` holds for
    /// it. For what may rightly not show yet: it fails nothing.
    pub fn shows_within(&self, moment: Duration, shows: impl Fn(&str) -> bool) -> bool {
        let start = Instant::now();
        loop {
            if shows(&self.screen()) {
                return true;
            }
            if start.elapsed() >= moment {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Polls the screen until `shows` holds for it, and returns it; fails
    /// naming `what`, with the last screen, once `timeout` has passed.
    pub fn screen_until(
        &self,
        timeout: Duration,
        what: &str,
        shows: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let screen = self.screen();
            if shows(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out after {timeout:?} waiting until {what}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Makes the window `columns` wide, as a person dragging its edge would:
    /// the program in the foreground gets SIGWINCH, at once after
    /// [`Tmux::wait_until_resizable`].
    pub fn resize(&self, columns: u16) {
        self.wait_until_resizable();
        self.run(&["resize-window", "-t", "top", "-x", &columns.to_string()]);
        self.resized.set(Some(Instant::now()));
    }

    /// Waits until a resize of the window reaches its program at once: tmux
    /// holds a pane's resize back until 250 ms after the one before.
    pub fn wait_until_resizable(&self) {
        if let Some(last) = self.resized.get() {
            std::thread::sleep(RESIZE_HELD_BACK.saturating_sub(last.elapsed()));
        }
    }

    /// Clears the screen and waits until it shows the prompt alone: until
    /// then, what the screen showed before is still there to be mistaken
    /// for what comes next.
    pub fn clear(&self) {
        self.send(&["clear", "Enter"]);
        wait_until(WAIT, "the screen is cleared", || {
            let screen = self.screen();
            let mut shown = screen.lines().filter(|row| !row.trim().is_empty());
            shown.next().map(str::trim_end) == Some(PROMPT) && shown.next().is_none()
        });
    }

    /// Waits until the shell's prompt is the last line shown again.
    pub fn wait_for_prompt(&self) {
        wait_until(WAIT, "the shell prompt is back", || {
            let screen = self.screen();
            screen
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| l.trim_end() == PROMPT)
        });
    }

    /// True while a program has the window on its alternate screen.
    pub fn on_alternate_screen(&self) -> bool {
        self.run(&["display-message", "-p", "-t", "top", "#{alternate_on}"])
            .trim()
            == "1"
    }

    /// Types `command` at the prompt, and after it what makes the shell
    /// keep its exit code for [`Tmux::ended`].
    pub fn launch(&self, command: &str, scratch: &Scratch) {
        let code = scratch.file("code");
        let _ = std::fs::remove_file(&code);
        self.send(&[&format!("{command}; echo $? > {}", code.display()), "Enter"]);
    }

    /// Waits until the command [`Tmux::launch`] typed has ended and the
    /// shell is back; fails unless the terminal is as `before` (what
    /// [`Tmux::stty`] read before it) and off the alternate screen. Returns
    /// the command's exit code.
    pub fn ended(&self, before: &str, scratch: &Scratch) -> i32 {
        self.wait_for_prompt();
        assert!(!self.on_alternate_screen(), "left on the alternate screen");
        assert_eq!(
            self.stty(&scratch.file("after")),
            before,
            "the terminal was left changed"
        );
        super::wait_for(WAIT, "the shell kept the exit code", || {
            std::fs::read_to_string(scratch.file("code"))
                .ok()?
                .trim()
                .parse()
                .ok()
        })
    }

    /// The terminal settings as `stty -a` prints them now.
    pub fn stty(&self, file: &std::path::Path) -> String {
        let _ = std::fs::remove_file(file);
        self.send(&[&format!("stty -a > {}", file.display()), "Enter"]);
        self.wait_for_prompt();
        wait_until(WAIT, "stty wrote its settings", || {
            std::fs::read_to_string(file).is_ok_and(|s| s.contains("speed"))
        });
        std::fs::read_to_string(file).expect("read stty's settings")
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

/// The shell command line that runs `zklock`.
pub fn command_line(zklock: &Zklock) -> String {
    let command: Vec<String> = zklock
        .argv()
        .iter()
        .map(|arg| format!("'{}'", arg.to_string_lossy().replace('\'', "'\\''")))
        .collect();
    format!("'{}' {}", super::cmd::ZKLOCK, command.join(" "))
}
