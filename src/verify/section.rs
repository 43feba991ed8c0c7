//! The critical section verify's holders run under the lock, and the log
//! its lines make.
//!
//! Each holder runs this as its command (`zklock verify-section`, a hidden
//! subcommand of the same binary), so that the section goes through the
//! guard, the process group and the self-fencing every user's command
//! goes through. It writes one line when it starts, one every [`TICK`]
//! while it runs, and one when it ends, each with its fence
//! (`ZKLOCK_FENCE`), its pid and the host's monotonic clock, to its
//! standard output: a pipe every holder shares, read by verify. A line is
//! one `write` of less than `PIPE_BUF`, so lines of different sections
//! never mix.
//!
//! It ends when verify says so (a line, or the end of its standard input),
//! and on the kill signal, unless it is one of the stubborn sections that
//! ignore that signal: those only SIGKILL ends, after `--kill-after`. A
//! section killed that way writes no last line; verify sees its end on a
//! pidfd of its own.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::sys;

/// How often a running section says it still runs.
pub(crate) const TICK: Duration = Duration::from_millis(20);

/// The longest line a section writes; verify drops any longer one.
pub(crate) const MAX_LINE: usize = 128;

/// What a section was asked to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionArgs {
    /// The number verify gave the zklock that runs it.
    pub run: u64,
    /// Ignores the kill signal (SIGTERM): only SIGKILL ends it.
    pub stubborn: bool,
}

/// How a section ended by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SectionEnd {
    /// verify told it to.
    Told,
    /// The kill signal came.
    Signalled,
}

/// What a line of the log says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Said {
    /// The section began: the lock is held.
    Start,
    /// It still runs.
    Tick,
    /// A stubborn section got the kill signal, and runs on.
    Term,
    /// It ends on the kill signal.
    Stop,
    /// It ends as verify told it.
    End,
}

impl Said {
    const WORDS: [(Said, &'static str); 5] = [
        (Said::Start, "start"),
        (Said::Tick, "tick"),
        (Said::Term, "term"),
        (Said::Stop, "stop"),
        (Said::End, "end"),
    ];

    fn word(self) -> &'static str {
        Said::WORDS
            .iter()
            .find(|(said, _)| *said == self)
            .map_or("", |(_, word)| word)
    }
}

/// One line of the log: `WORD RUN FENCE PID MICROSECONDS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Line {
    pub said: Said,
    pub run: u64,
    pub fence: i64,
    pub pid: i32,
    /// When, on the host's monotonic clock.
    pub at_us: u64,
}

impl Line {
    /// The line as written, newline included.
    fn text(&self) -> String {
        format!(
            "{} {} {} {} {}\n",
            self.said.word(),
            self.run,
            self.fence,
            self.pid,
            self.at_us
        )
    }

    /// Reads a line of the log (without its newline); `None` for anything
    /// else.
    pub(crate) fn parse(text: &str) -> Option<Line> {
        let mut words = text.split(' ');
        let word = words.next()?;
        let said = Said::WORDS.iter().find(|(_, w)| *w == word)?.0;
        let line = Line {
            said,
            run: words.next()?.parse().ok()?,
            fence: words.next()?.parse().ok()?,
            pid: words.next()?.parse().ok()?,
            at_us: words.next()?.parse().ok()?,
        };
        words.next().is_none().then_some(line)
    }
}

/// Runs the section until verify ends it or the kill signal does.
pub(crate) fn run(args: &SectionArgs) -> Result<SectionEnd> {
    let fence = std::env::var("ZKLOCK_FENCE")
        .ok()
        .and_then(|fence| fence.parse().ok())
        .context("the section runs under zklock, which sets ZKLOCK_FENCE")?;
    // Read from a descriptor rather than handled: the section decides what
    // the signal does, and says so in its log.
    sys::block(&[libc::SIGTERM]);
    let signals = sys::signal_descriptor(&[libc::SIGTERM]).context("cannot watch for SIGTERM")?;
    let mut signals = std::fs::File::from(signals);
    let mut stdin = std::io::stdin().lock();
    let line = |said| Line {
        said,
        run: args.run,
        fence,
        pid: std::process::id() as i32,
        at_us: sys::monotonic_us(),
    };
    say(line(Said::Start))?;
    let tick = TICK.as_millis() as libc::c_int;
    loop {
        let [told, signalled] =
            sys::wait_readable_within([stdin.as_raw_fd(), signals.as_raw_fd()], tick);
        if told {
            // A word or the end of the pipe: either way, verify is done.
            let _ = stdin.read(&mut [0u8; 64]);
            say(line(Said::End))?;
            return Ok(SectionEnd::Told);
        }
        if signalled {
            // The siginfo is read off, or the descriptor stays readable.
            let _ = signals.read(&mut [0u8; 128]);
            if !args.stubborn {
                say(line(Said::Stop))?;
                return Ok(SectionEnd::Signalled);
            }
            say(line(Said::Term))?;
        } else {
            say(line(Said::Tick))?;
        }
    }
}

/// Writes `line` in one write; fails when verify no longer reads.
fn say(line: Line) -> Result<()> {
    let text = line.text();
    if text.len() > MAX_LINE {
        bail!("a section's line is longer than {MAX_LINE} bytes");
    }
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("verify no longer reads the sections' log")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back_as_written_and_nothing_else_reads_as_one() {
        let line = Line {
            said: Said::Term,
            run: 17,
            fence: -4,
            pid: 4242,
            at_us: u64::MAX,
        };
        let text = line.text();
        assert!(text.len() <= MAX_LINE);
        assert_eq!(Line::parse(text.trim_end()), Some(line));
        for bad in [
            "",
            "tick",
            "tick 1 2 3",
            "tick 1 2 3 4 5",
            "tock 1 2 3 4",
            "tick -1 2 3 4",
            "tick 1 2 3 -4",
            "tick 1 2 3 4 ",
            "tick 1 2 99999999999 4",
        ] {
            assert_eq!(Line::parse(bad), None, "{bad:?}");
        }
    }
}
