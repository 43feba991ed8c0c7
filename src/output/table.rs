//! Tables for people, streamed row by row.
//!
//! Three promises shape the layout:
//!
//! - Every table has a fixed default set of columns, chosen to fit 80
//!   columns for ordinary names whatever the terminal's width, so that a
//!   script reading a table sees the same columns everywhere; `-o wide`
//!   adds the rest and cuts nothing.
//! - An identifier (a path, a node name, a session id, a token, a header) is
//!   never broken or cut: whatever is printed can be copied back into
//!   `release` or `reap --session`. A column of identifiers is as wide as
//!   its widest cell; a longer cell pushes the rest of its line to the right
//!   rather than wrap.
//! - Free text (an owner record, node data) is cut with an ellipsis to fit
//!   the width; a sentence (a reason) is never cut but wraps within its
//!   column. The width is the terminal's when stdout is one, else
//!   `COLUMNS` when set; with neither (a pipe or a file) every cell is
//!   printed whole.
//!
//! Memory stays flat in the number of rows: column widths come from a
//! bounded look-ahead of the first [`LOOK_AHEAD`] rows, which are held back
//! until the widths are known; every later row is written as it comes. A
//! later identifier wider than any in the look-ahead shifts its own line and
//! no other.

use std::io::{self, IsTerminal, Write};

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::inert;

/// How many rows decide the column widths before anything is printed.
pub(crate) const LOOK_AHEAD: usize = 500;

/// Spaces between two columns.
const GAP: usize = 2;

/// The narrowest a free-text column is ever cut or wrapped to.
const MIN_TEXT: usize = 10;

/// What a column holds, which decides whether it may be cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    /// Identifiers and short values: always printed whole.
    Whole,
    /// Free text: cut with "…" to fit the width.
    Cut,
    /// Sentences: wrapped within the column, never cut.
    Wrap,
}

/// One column of a table: its header, what it holds, and whether the
/// default table shows it or only `-o wide`.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    pub header: &'static str,
    pub fit: Fit,
    pub wide_only: bool,
}

impl Column {
    /// A column of identifiers or short values, never cut.
    pub const fn whole(header: &'static str) -> Column {
        Column {
            header,
            fit: Fit::Whole,
            wide_only: false,
        }
    }

    /// A column of free text, cut to fit the width.
    pub const fn text(header: &'static str) -> Column {
        Column {
            fit: Fit::Cut,
            ..Column::whole(header)
        }
    }

    /// A column of sentences, wrapped to fit the width.
    pub const fn sentence(header: &'static str) -> Column {
        Column {
            fit: Fit::Wrap,
            ..Column::whole(header)
        }
    }

    /// This column, shown only with `-o wide`.
    pub const fn wide(self) -> Column {
        Column {
            wide_only: true,
            ..self
        }
    }
}

/// How a table is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The width to fit free text into; `None` prints every cell whole.
    pub width: Option<usize>,
    /// Whether the header line is printed.
    pub headers: bool,
    /// Every column, every cell whole (`-o wide`).
    pub wide: bool,
}

impl Layout {
    /// The layout for stdout: the default columns fitted to the width (see
    /// the module's documentation), or with `wide` every column whole.
    pub fn for_stdout(wide: bool, headers: bool) -> Layout {
        let width = if wide {
            None
        } else if io::stdout().is_terminal() {
            Some(terminal_width().or_else(env_columns).unwrap_or(80))
        } else {
            env_columns()
        };
        Layout {
            width,
            headers,
            wide,
        }
    }
}

/// The width of the terminal on stdout, as the terminal says.
fn terminal_width() -> Option<usize> {
    crate::sys::terminal_columns(libc::STDOUT_FILENO).map(usize::from)
}

/// `COLUMNS`, when it holds a width.
fn env_columns() -> Option<usize> {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|columns| columns.parse().ok())
        .filter(|&columns| columns > 0)
}

/// A table being written: rows go in one at a time, and out once the
/// column widths are settled. [`Table::finish`] writes what is held back.
/// A table with no rows prints nothing at all, not even its header.
pub struct Table<'w> {
    out: Box<dyn Write + 'w>,
    /// Which of the columns given are shown, by position.
    shown: Vec<usize>,
    columns: Vec<Column>,
    layout: Layout,
    held: Vec<Vec<String>>,
    widths: Option<Vec<usize>>,
}

impl<'w> Table<'w> {
    /// A table of `columns` written to `out` as `layout` says: every row
    /// gives a cell for each of `columns`, and the layout picks those shown.
    pub fn new(out: Box<dyn Write + 'w>, columns: &'static [Column], layout: Layout) -> Table<'w> {
        let shown: Vec<usize> = (0..columns.len())
            .filter(|&i| layout.wide || !columns[i].wide_only)
            .collect();
        Table {
            out,
            columns: shown.iter().map(|&i| columns[i]).collect(),
            shown,
            layout,
            held: Vec::new(),
            widths: None,
        }
    }

    /// Adds a row: one cell per column, each made safe for a terminal.
    pub fn row(&mut self, cells: impl IntoIterator<Item = String>) -> io::Result<()> {
        let mut next = self.shown.iter().peekable();
        let cells: Vec<String> = cells
            .into_iter()
            .enumerate()
            .filter(|(i, _)| next.next_if_eq(&i).is_some())
            .map(|(_, cell)| match inert(&cell) {
                std::borrow::Cow::Borrowed(_) => cell,
                std::borrow::Cow::Owned(escaped) => escaped,
            })
            .collect();
        if self.widths.is_some() {
            return self.write_row(&cells);
        }
        self.held.push(cells);
        if self.held.len() >= LOOK_AHEAD {
            self.settle()?;
        }
        Ok(())
    }

    /// Writes the rows held back and flushes.
    pub fn finish(mut self) -> io::Result<()> {
        if self.widths.is_none() {
            self.settle()?;
        }
        self.out.flush()
    }

    /// Fixes the column widths from the rows held back, and writes the header
    /// and those rows.
    fn settle(&mut self) -> io::Result<()> {
        if self.held.is_empty() {
            return Ok(());
        }
        let headers = self.layout.headers && self.columns.iter().any(|c| !c.header.is_empty());
        let mut natural: Vec<usize> = self
            .columns
            .iter()
            .map(|c| if headers { c.header.width() } else { 0 })
            .collect();
        for row in &self.held {
            for (width, cell) in natural.iter_mut().zip(row) {
                *width = (*width).max(cell.width());
            }
        }
        self.widths = Some(fit(&self.columns, natural, self.layout.width));
        if headers {
            let header: Vec<String> = self.columns.iter().map(|c| c.header.to_owned()).collect();
            self.write_row(&header)?;
        }
        for row in std::mem::take(&mut self.held) {
            self.write_row(&row)?;
        }
        Ok(())
    }

    /// Writes one row: one line, or more when a sentence wraps, its
    /// continuation lines blank in every other column.
    fn write_row(&mut self, cells: &[String]) -> io::Result<()> {
        let widths = self.widths.as_deref().unwrap_or_default();
        let pieces: Vec<Vec<std::borrow::Cow<'_, str>>> = cells
            .iter()
            .zip(&self.columns)
            .enumerate()
            .map(|(i, (cell, column))| {
                let width = widths.get(i).copied().unwrap_or(0);
                match (column.fit, self.layout.width) {
                    (Fit::Cut, Some(_)) => vec![cut(cell, width)],
                    (Fit::Wrap, Some(_)) => wrap(cell, width),
                    _ => vec![std::borrow::Cow::Borrowed(cell.as_str())],
                }
            })
            .collect();
        let lines = pieces.iter().map(Vec::len).max().unwrap_or(0);
        let mut text = String::new();
        for n in 0..lines {
            let line: Vec<&str> = pieces
                .iter()
                .map(|cell| cell.get(n).map_or("", |piece| piece.as_ref()))
                .collect();
            let last = line.iter().rposition(|piece| !piece.is_empty());
            for (i, piece) in line.iter().enumerate().take(last.map_or(0, |l| l + 1)) {
                text.push_str(piece);
                if Some(i) != last {
                    let width = widths.get(i).copied().unwrap_or(0);
                    let pad = width.saturating_sub(piece.width()) + GAP;
                    text.extend(std::iter::repeat_n(' ', pad));
                }
            }
            text.push('\n');
        }
        self.out.write_all(text.as_bytes())
    }
}

/// Column widths from each column's natural width (its widest cell): whole
/// columns keep theirs, and free-text columns share what is left of `width`,
/// the narrower first, none below [`MIN_TEXT`].
fn fit(columns: &[Column], natural: Vec<usize>, width: Option<usize>) -> Vec<usize> {
    let Some(width) = width else {
        return natural;
    };
    let whole: usize = columns
        .iter()
        .zip(&natural)
        .filter(|(c, _)| c.fit == Fit::Whole)
        .map(|(_, w)| w)
        .sum();
    let gaps = GAP * columns.len().saturating_sub(1);
    let mut room = width.saturating_sub(whole + gaps);
    let mut text: Vec<usize> = (0..columns.len())
        .filter(|&i| columns[i].fit != Fit::Whole)
        .collect();
    text.sort_by_key(|&i| natural[i]);
    let mut widths = natural;
    let mut left = text.len();
    for i in text {
        let share = room / left.max(1);
        widths[i] = widths[i].min(share.max(MIN_TEXT));
        room = room.saturating_sub(widths[i]);
        left -= 1;
    }
    widths
}

/// `text` in at most `width` columns: whole when it fits, else its start
/// and "…".
pub(crate) fn cut(text: &str, width: usize) -> std::borrow::Cow<'_, str> {
    if text.width() <= width {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut shown = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        shown.push(c);
        used += w;
    }
    shown.push('…');
    std::borrow::Cow::Owned(shown)
}

/// `text` in lines of at most `width` columns, broken between words; a
/// word longer than a line is broken where the line ends. Nothing is lost.
pub(crate) fn wrap(text: &str, width: usize) -> Vec<std::borrow::Cow<'_, str>> {
    if text.width() <= width {
        return vec![std::borrow::Cow::Borrowed(text)];
    }
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|word| !word.is_empty()) {
        let room = if line.is_empty() {
            width
        } else {
            width.saturating_sub(line.width() + 1)
        };
        if word.width() <= room {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        for c in word.chars() {
            if line.width() + c.width().unwrap_or(0) > width && !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            line.push(c);
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines.into_iter().map(std::borrow::Cow::Owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLUMNS: &[Column] = &[
        Column::whole("LOCK"),
        Column::whole("SESSION"),
        Column::text("OWNER"),
    ];

    fn render(rows: &[[&str; 3]], layout: Layout) -> String {
        let mut out = Vec::new();
        let mut table = Table::new(Box::new(&mut out), COLUMNS, layout);
        for row in rows {
            table.row(row.iter().map(|c| c.to_string())).unwrap();
        }
        table.finish().unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn identifiers_stay_whole_and_free_text_is_cut_to_the_width() {
        let long_path = "/locks/a/very/long/path/that/does/not/fit/in/sixty/columns";
        let owner = "someone@somewhere pid 12 \"a long free text that goes on\"";
        let rows = [[long_path, "0x1000027b9001d", owner]];
        let shown = render(
            &rows,
            Layout {
                width: Some(60),
                headers: true,
                wide: false,
            },
        );
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines.len(), 2, "{shown}");
        assert!(lines[1].starts_with(long_path), "{shown}");
        assert!(lines[1].contains(" 0x1000027b9001d "), "{shown}");
        assert!(lines[1].ends_with('…'), "{shown}");
        assert!(!lines[1].contains("goes on"), "{shown}");
        let whole = render(
            &rows,
            Layout {
                width: None,
                headers: true,
                wide: true,
            },
        );
        assert!(whole.lines().nth(1).unwrap().ends_with(owner), "{whole}");
    }

    #[test]
    fn rows_past_the_look_ahead_keep_the_widths_and_stay_whole() {
        let mut rows = vec![["/l/a", "0x1", "x"]; LOOK_AHEAD];
        rows.push(["/l/a-much-longer-lock-name", "0x2", "y"]);
        let shown = render(
            &rows,
            Layout {
                width: Some(40),
                headers: false,
                wide: false,
            },
        );
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines.len(), LOOK_AHEAD + 1);
        assert_eq!(lines[0], "/l/a  0x1  x");
        assert_eq!(lines[LOOK_AHEAD], "/l/a-much-longer-lock-name  0x2  y");
    }

    #[test]
    fn an_empty_table_prints_nothing_and_control_characters_are_escaped() {
        let layout = Layout {
            width: Some(80),
            headers: true,
            wide: false,
        };
        assert_eq!(render(&[], layout), "");
        let shown = render(&[["/l/\x1b[2J", "0x1", "a\nb"]], layout);
        assert!(shown.contains("/l/\\x1b[2J"), "{shown}");
        assert!(shown.contains("a\\nb"), "{shown}");
    }

    #[test]
    fn the_default_table_hides_wide_columns_and_wraps_sentences_whole() {
        const ACTIONS: &[Column] = &[
            Column::whole("NODE"),
            Column::whole("SESSION").wide(),
            Column::sentence("ACTION"),
        ];
        let reason = "left alone: only --force-after can break a kazoo holder, which \
                      ignores __REVOKE__";
        let render = |layout: Layout| {
            let mut out = Vec::new();
            let mut table = Table::new(Box::new(&mut out), ACTIONS, layout);
            let cells = ["/locks/deploy/lock-0000000001", "0x1000027b9001d", reason];
            table.row(cells.map(str::to_owned)).unwrap();
            table.finish().unwrap();
            String::from_utf8(out).unwrap()
        };
        let narrow = render(Layout {
            width: Some(60),
            headers: true,
            wide: false,
        });
        assert!(!narrow.contains("SESSION"), "{narrow}");
        assert!(narrow.lines().all(|line| line.width() <= 60), "{narrow}");
        let words: Vec<&str> = narrow
            .lines()
            .skip(1)
            .flat_map(|line| line.split_whitespace())
            .collect();
        let expected: Vec<&str> = std::iter::once("/locks/deploy/lock-0000000001")
            .chain(reason.split_whitespace())
            .collect();
        assert_eq!(words, expected, "{narrow}");
        let wide = render(Layout {
            width: None,
            headers: true,
            wide: true,
        });
        assert_eq!(wide.lines().count(), 2, "{wide}");
        assert!(wide.contains("SESSION") && wide.contains(reason), "{wide}");
    }
}
