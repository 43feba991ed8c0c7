//! The live line: one line on stderr that zklock redraws in place while it
//! waits for a lock (the spinner) or works through a tree (the progress
//! line), and takes off the terminal when that ends, whichever way.
//!
//! A terminal that shrinks reflows a line longer than its new width into
//! several rows (tmux, VTE, kitty, iTerm2 do; xterm cuts it instead), and
//! the program is not told how. So the line never asks where its old rows
//! went: it is drawn one column short of the width (the cursor never waits
//! at the margin to wrap) and the cursor is left at its first column. A
//! reflowing terminal keeps the cursor on the first row of the reflowed
//! line, a cutting one on the cut line; from there, "clear to the end of
//! the screen" removes every row the old line occupies in both, and the
//! new line is drawn in their place. A line is written with autowrap off,
//! so one drawn just before a resize and read by the terminal just after
//! it is cut, not wrapped. A resize redraws the line at once
//! (SIGWINCH, unless zklock started with it ignored); the echo of Ctrl-C or
//! Ctrl-Z lands on the line's first columns and goes with it. Whatever
//! zklock itself writes while the line is shown (stdout beside a progress
//! line, the `-v` log) takes the line off first and has it drawn again
//! below, so no row holds half of each.

use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use tokio::signal::unix::{Signal, SignalKind, signal};
use unicode_width::UnicodeWidthStr;

use super::cut;

/// How often the line moves on (its spinner's frame, the time so far).
const TICK: Duration = Duration::from_millis(100);

/// The spinner's frames, one column each.
const FRAMES: [char; 8] = ['⠁', '⠂', '⠄', '⡀', '⢀', '⠠', '⠐', '⠈'];

/// The cells of a progress bar.
const BAR_CELLS: u64 = 30;

/// Takes the line's rows off the screen from the cursor, which sits at the
/// line's first column: see the module's note.
const CLEAR: &[u8] = b"\r\x1b[J";

/// Autowrap off, and on again: a line drawn for the width before a resize
/// that the terminal reads after it is cut at the margin, not wrapped onto
/// a row the next draw would not clear.
const NO_WRAP: &[u8] = b"\x1b[?7l";
const WRAP: &[u8] = b"\x1b[?7h";

/// The width assumed when stderr cannot say its own.
const DEFAULT_COLUMNS: usize = 80;

/// The line that is live now, if any: the log, written from anywhere,
/// finds it here.
static LIVE: Mutex<Weak<Mutex<Line>>> = Mutex::new(Weak::new());

/// What the line shows, as a ticker task and its owner both draw it.
pub(crate) struct LiveLine {
    line: Arc<Mutex<Line>>,
    ticker: tokio::task::JoinHandle<()>,
}

/// A piece of what a line says: its parts go from the most useful to the
/// least, and those the width has no room for are left out from the last,
/// whole; only the first is ever cut (between words).
#[derive(Clone, Debug)]
pub(crate) struct LinePart {
    text: String,
    /// The age shown after the text (`for 3m 12s`), of what began then (ms
    /// since the epoch); kept current as the line is redrawn.
    since_ms: Option<i64>,
}

impl LinePart {
    /// A part that says `text` (already made inert).
    pub(crate) fn text(text: String) -> LinePart {
        LinePart {
            text,
            since_ms: None,
        }
    }

    /// A part that says `text`, then how long ago `since_ms` was.
    pub(crate) fn aged(text: String, since_ms: i64) -> LinePart {
        LinePart {
            text,
            since_ms: Some(since_ms),
        }
    }

    /// The part with its text made inert.
    fn made_inert(self) -> LinePart {
        LinePart {
            text: super::inert(&self.text).into_owned(),
            ..self
        }
    }

    fn shown(&self) -> String {
        match self.since_ms {
            Some(since) => {
                let age = super::time::format_age_ms(crate::clock::now_ms() - since);
                format!("{} for {age}", self.text)
            }
            None => self.text.clone(),
        }
    }
}

/// What goes between two parts of a line.
const BETWEEN_PARTS: &str = "; ";

struct Line {
    message: Vec<LinePart>,
    /// `(done, total)`: a bar instead of the spinner.
    position: Option<(u64, u64)>,
    /// The wait's limit, shown after the time so far (`[2s/30s]`).
    limit: Option<Duration>,
    color: bool,
    started: Instant,
    /// Nothing is drawn before then, so quick work prints nothing at all.
    shown_from: Instant,
    frame: usize,
    /// The line is on the screen.
    drawn: bool,
    /// Stdout or the log left a row unfinished, which the line would
    /// clear: it waits until that row is done.
    row_open: bool,
    over: bool,
}

impl LiveLine {
    /// Starts a line that is drawn from `delay` on, redrawn every tick and
    /// at every resize; `None` outside the async runtime, which draws it.
    pub(crate) fn start(color: bool, limit: Option<Duration>, delay: Duration) -> Option<LiveLine> {
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let now = Instant::now();
        let line = Arc::new(Mutex::new(Line {
            message: Vec::new(),
            position: None,
            limit,
            color,
            started: now,
            shown_from: now + delay,
            frame: 0,
            drawn: false,
            row_open: false,
            over: false,
        }));
        let ticker = runtime.spawn(keep_drawn(Arc::clone(&line)));
        *LIVE.lock().unwrap_or_else(PoisonError::into_inner) = Arc::downgrade(&line);
        Some(LiveLine { line, ticker })
    }

    /// Replaces the message (already made inert) and redraws.
    pub(crate) fn set_message(&self, message: String) {
        self.replace(vec![LinePart::text(message)]);
    }

    /// Replaces the message with `parts`, the most useful first (made
    /// inert here), and redraws.
    pub(crate) fn set_parts(&self, parts: Vec<LinePart>) {
        self.replace(parts.into_iter().map(LinePart::made_inert).collect());
    }

    fn replace(&self, message: Vec<LinePart>) {
        let mut line = self.lock();
        line.message = message;
        line.draw();
    }

    /// Shows a bar at `done` of `total` in place of the spinner, and redraws.
    pub(crate) fn set_position(&self, done: u64, total: u64) {
        let mut line = self.lock();
        line.position = Some((done, total));
        line.draw();
    }

    /// Writes `buf` on stdout with the line off the screen, and draws the
    /// line again below it once the row `buf` ends is finished.
    pub(crate) fn write_stdout(&self, buf: &[u8]) -> std::io::Result<usize> {
        self.lock().write_beside(&mut std::io::stdout(), buf)
    }

    fn lock(&self) -> MutexGuard<'_, Line> {
        lock(&self.line)
    }
}

/// The line leaves the terminal whichever way its work ends: done, given
/// up, a signal or an error.
impl Drop for LiveLine {
    fn drop(&mut self) {
        self.ticker.abort();
        let mut line = self.lock();
        line.clear();
        line.over = true;
        let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
        if std::ptr::eq(live.as_ptr(), Arc::as_ptr(&self.line)) {
            *live = Weak::new();
        }
    }
}

/// Stderr for the log: a write while a line is live takes the line off the
/// screen, so the log starts on a row of its own, and draws the line again
/// below it. Without a live line (always, when stderr is no terminal) the
/// bytes go to stderr as they are.
pub(crate) struct StderrBeside;

impl Write for StderrBeside {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let live = LIVE
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .upgrade();
        match live {
            Some(line) => lock(&line).write_beside(&mut std::io::stderr(), buf),
            None => std::io::stderr().write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

fn lock(line: &Mutex<Line>) -> MutexGuard<'_, Line> {
    line.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Moves the line on every tick and redraws it at once on every resize.
async fn keep_drawn(line: Arc<Mutex<Line>>) {
    let mut resizes = resizes();
    let mut ticks = tokio::time::interval(TICK);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            _ = ticks.tick() => {
                let mut line = lock(&line);
                line.frame = line.frame.wrapping_add(1);
                line.draw();
            }
            () = next_resize(&mut resizes) => lock(&line).draw(),
        }
    }
}

/// The terminal's resizes, unless zklock started with SIGWINCH ignored: a
/// signal ignored at the start stays ignored, as every other one does (the
/// line then catches up with a resize on its next tick).
fn resizes() -> Option<Signal> {
    if crate::sys::is_ignored(libc::SIGWINCH) {
        return None;
    }
    signal(SignalKind::window_change()).ok()
}

async fn next_resize(resizes: &mut Option<Signal>) {
    if let Some(resizes) = resizes
        && resizes.recv().await.is_some()
    {
        return;
    }
    std::future::pending().await
}

impl Line {
    /// Draws the line over its old rows, in one write, leaving the cursor
    /// at its first column.
    fn draw(&mut self) {
        if self.over || self.row_open || Instant::now() < self.shown_from {
            return;
        }
        let columns =
            crate::sys::terminal_columns(libc::STDERR_FILENO).map_or(DEFAULT_COLUMNS, usize::from);
        let mut out = NO_WRAP.to_vec();
        out.extend_from_slice(CLEAR);
        out.extend_from_slice(self.render(columns.saturating_sub(1)).as_bytes());
        out.extend_from_slice(WRAP);
        out.push(b'\r');
        self.drawn = true;
        let _ = std::io::stderr().write_all(&out);
    }

    /// Writes `buf` to `out` with the line off the screen, and draws the
    /// line again below it once the row `buf` ends is finished.
    fn write_beside(&mut self, out: &mut impl Write, buf: &[u8]) -> std::io::Result<usize> {
        self.clear();
        let written = out.write(buf)?;
        out.flush()?;
        self.row_open = !buf[..written].ends_with(b"\n");
        self.draw();
        Ok(written)
    }

    fn clear(&mut self) {
        if std::mem::take(&mut self.drawn) {
            let _ = std::io::stderr().write_all(CLEAR);
        }
    }

    /// The message within `space` columns: the first part (cut between
    /// words when it alone is too wide), then each next part while the
    /// whole fits; and whether anything was cut or left out.
    fn message_within(&self, space: usize) -> (String, bool) {
        let mut parts = self.message.iter().map(LinePart::shown);
        let first = parts.next().unwrap_or_default();
        let mut message = cut(&first, space).into_owned();
        if message != first {
            return (message, true);
        }
        for part in parts {
            let longer = format!("{message}{BETWEEN_PARTS}{part}");
            if longer.width() > space {
                return (message, true);
            }
            message = longer;
        }
        (message, false)
    }

    /// The line within `room` columns: the spinner or the bar, the message
    /// cut to what is left, and the time so far.
    fn render(&self, room: usize) -> String {
        let head = match self.position {
            Some((done, total)) => {
                let filled = (done.min(total) * BAR_CELLS)
                    .checked_div(total)
                    .unwrap_or(BAR_CELLS);
                let filled = usize::try_from(filled).unwrap_or(0);
                let empty = usize::try_from(BAR_CELLS).unwrap_or(0) - filled;
                format!("{}{} {done}/{total}", "█".repeat(filled), "░".repeat(empty))
            }
            None => FRAMES[self.frame % FRAMES.len()].to_string(),
        };
        let elapsed =
            humantime::format_duration(Duration::from_secs(self.started.elapsed().as_secs()));
        let tail = match self.limit {
            Some(limit) => format!("[{elapsed}/{}]", humantime::format_duration(limit)),
            None => format!("[{elapsed}]"),
        };
        let fixed = head.width() + tail.width() + 2;
        if room == 0 {
            return String::new();
        }
        if fixed >= room {
            return cut(&format!("{head} {tail}"), room).into_owned();
        }
        let space = room - fixed;
        let (message, short) = self.message_within(space);
        // A message cut between words or left without its last parts ends
        // short of its room: the time still goes at the end of the room, so
        // that a cut line always takes the width the line is drawn for.
        let pad = if short {
            space.saturating_sub(message.width())
        } else {
            0
        };
        let head = if self.color {
            format!("\x1b[36m{head}\x1b[0m")
        } else {
            head
        };
        format!("{head} {message}{:pad$} {tail}", "")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(message: &str, limit: Option<Duration>) -> Line {
        let now = Instant::now();
        Line {
            message: vec![LinePart::text(message.to_owned())],
            position: None,
            limit,
            color: false,
            started: now,
            shown_from: now,
            frame: 0,
            drawn: false,
            row_open: false,
            over: false,
        }
    }

    #[test]
    fn a_line_fits_the_room_at_every_width() {
        let long = line(
            &"waiting for /locks/deploy ".repeat(8),
            Some(Duration::from_secs(30)),
        );
        for room in [0, 1, 5, 9, 10, 39, 59, 99, 300] {
            let shown = long.render(room);
            assert!(shown.width() <= room, "{room}: {shown:?}");
        }
        // The message is cut between words: a path in it is whole or gone.
        let shown = long.render(59);
        assert!(shown.ends_with("[0s/30s]"), "{shown:?}");
        assert_eq!(shown.width(), 59, "{shown:?}");
        let (kept, _) = shown.split_once('…').expect("the message is cut");
        let last = kept.rsplit(' ').next().unwrap_or_default();
        assert!(
            ["waiting", "for", "/locks/deploy"].contains(&last),
            "{shown:?}"
        );
    }

    #[test]
    fn parts_that_do_not_fit_are_left_out_whole_from_the_last() {
        let mut wait = line("", Some(Duration::from_secs(300)));
        let since = crate::clock::now_ms() - 5_000;
        wait.message = vec![
            LinePart::aged("held by root@vm pid 13".to_owned(), since),
            LinePart::text("waiting for /locks/deploy".to_owned()),
            LinePart::text("2 ahead".to_owned()),
        ];
        let wide = wait.render(100);
        assert!(
            wide.contains("held by root@vm pid 13 for 5s; waiting for /locks/deploy; 2 ahead "),
            "{wide:?}"
        );
        // Narrower, the least useful parts go whole, from the last; the
        // owner and the age stay, and no number is followed by an
        // ellipsis. The time keeps to the end of the room.
        let narrower = wait.render(70);
        assert!(
            narrower.contains("held by root@vm pid 13 for 5s; waiting for /locks/deploy "),
            "{narrower:?}"
        );
        assert!(!narrower.contains("ahead"), "{narrower:?}");
        let narrow = wait.render(60);
        assert!(
            narrow.contains("held by root@vm pid 13 for 5s "),
            "{narrow:?}"
        );
        assert!(
            !narrow.contains("waiting") && !narrow.contains('…'),
            "{narrow:?}"
        );
        assert_eq!(narrow.width(), 60, "{narrow:?}");
        assert!(narrow.ends_with("s/5m]"), "{narrow:?}");
    }

    #[test]
    fn a_bar_counts_up_to_its_total() {
        let mut bar = line("deleting", None);
        bar.position = Some((3, 6));
        let shown = bar.render(80);
        assert!(shown.starts_with(&format!("{}{} 3/6", "█".repeat(15), "░".repeat(15))));
        bar.position = Some((0, 0));
        assert!(bar.render(80).starts_with(&"█".repeat(30)));
    }
}
