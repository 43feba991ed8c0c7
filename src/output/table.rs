//! Tables for people, streamed row by row.
//!
//! Four promises shape the layout:
//!
//! - Every table has a fixed default set of columns, fitted to a width: the
//!   terminal's when stdout is one, else `COLUMNS` when set, else 80, so that
//!   what a pipe or a log receives reads as an 80-column terminal shows it.
//!   `-o wide` adds the rest of the columns and neither cuts nor fits.
//! - An identifier (a path, a node name, a session id, a pid, a token) is
//!   never cut: whatever is printed can be copied back into `release` or
//!   `reap --session`. A row's name (its first cell) too long to share a
//!   line with the columns that stay goes on lines of its own above the
//!   rest of its row; an identifier that its column cannot hold wraps
//!   within it. Either way every line it goes on from ends in [`GOES_ON`],
//!   so that the pieces join back into the whole.
//! - A row too wide for the width gives way in a fixed order: free text (an
//!   owner record) is cut between words with "…", down to [`MIN_TEXT`]
//!   columns, never between a word and the number after it (`pid 2905`);
//!   then the columns that may go go, in the order their table gives
//!   ([`Column::goes`]), the name's own length aside when it cannot share
//!   a line anyway; then the widest identifiers narrow and wrap, as above.
//!   A sentence (a reason) is never cut but wraps within its column.
//! - An escape that stands for a control character (`\x1b`, `\u{202e}`)
//!   and a character with the marks drawn on it are never parted by a cut
//!   or a wrap.
//!
//! Memory stays flat in the number of rows: column widths come from a
//! bounded look-ahead of the first [`LOOK_AHEAD`] rows, which are held back
//! until the widths are known; every later row is written as it comes. A
//! later identifier wider than any in the look-ahead shifts the rest of its
//! own line while that line still fits the width, and wraps otherwise.

use std::borrow::Cow;
use std::io::{self, IsTerminal, Write};

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::inert;

/// How many rows decide the column widths before anything is printed.
pub(crate) const LOOK_AHEAD: usize = 500;

/// Spaces between two columns.
pub(crate) const GAP: usize = 2;

/// The narrowest a free-text column is ever cut or wrapped to; below it, the
/// column goes, if its table lets it.
const MIN_TEXT: usize = 10;

/// The narrowest an identifier is ever wrapped to: a character two columns
/// wide and the mark.
const MIN_WRAP: usize = 3;

/// What ends a line that an identifier, or a word of a sentence, goes on
/// from.
pub(crate) const GOES_ON: char = '↵';

/// The width a table is fitted to when stdout is not a terminal and
/// `COLUMNS` is not set.
pub(crate) const DEFAULT_WIDTH: usize = 80;

/// What a column holds, which decides whether it may be cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    /// Identifiers and short values: never cut; wrapped with [`GOES_ON`]
    /// only where the line cannot hold them.
    Whole,
    /// Free text: cut between words with "…" to fit the width.
    Cut,
    /// Sentences: wrapped within the column, never cut.
    Wrap,
}

/// One column of a table: its header, what it holds, whether the default
/// table shows it or only `-o wide`, and when it goes from a row too wide.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    pub header: &'static str,
    pub fit: Fit,
    pub wide_only: bool,
    /// The column's place in the order the columns go in when a row does
    /// not fit, the lowest first; `None` for a column that stays.
    pub goes: Option<u8>,
}

impl Column {
    /// A column of identifiers or short values, never cut.
    pub const fn whole(header: &'static str) -> Column {
        Column {
            header,
            fit: Fit::Whole,
            wide_only: false,
            goes: None,
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

    /// This column, left out of a table whose rows do not fit the width
    /// once its free text is as narrow as it gets: the columns go `order`
    /// first, lowest first, the rightmost first among equals.
    pub const fn goes(self, order: u8) -> Column {
        Column {
            goes: Some(order),
            ..self
        }
    }
}

/// How a table is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The width to fit the table into; `None` prints every cell whole.
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
        Layout {
            width: (!wide).then(stdout_width),
            headers,
            wide,
        }
    }
}

/// The width of the text written to stdout: the terminal's, else
/// `COLUMNS`, else [`DEFAULT_WIDTH`].
pub(crate) fn stdout_width() -> usize {
    io::stdout()
        .is_terminal()
        .then(terminal_width)
        .flatten()
        .or_else(env_columns)
        .unwrap_or(DEFAULT_WIDTH)
}

/// The width of the terminal on stdout, as the terminal says.
fn terminal_width() -> Option<usize> {
    crate::sys::terminal_columns(libc::STDOUT_FILENO)
        .map(usize::from)
        .filter(|&columns| columns > 0)
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
    settled: Option<Settled>,
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
            settled: None,
        }
    }

    /// Adds a row: one cell per column, each made safe for a terminal.
    pub fn row(&mut self, cells: impl IntoIterator<Item = String>) -> io::Result<()> {
        let mut next = self.shown.iter().peekable();
        let cells: Vec<String> = cells
            .into_iter()
            .enumerate()
            .filter(|(i, _)| next.next_if_eq(&i).is_some())
            .map(|(_, cell)| inert_owned(cell))
            .collect();
        if let Some(settled) = &self.settled {
            let text = settled.lines(&cells).concat();
            return self.out.write_all(text.as_bytes());
        }
        self.held.push(cells);
        if self.held.len() >= LOOK_AHEAD {
            self.settle()?;
        }
        Ok(())
    }

    /// Writes the rows held back and flushes.
    pub fn finish(mut self) -> io::Result<()> {
        if self.settled.is_none() {
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
        let settled = Settled::new(self.columns.clone(), headers, &self.held, self.layout.width);
        let mut text = String::new();
        if headers {
            text.extend(settled.lines(&settled.header()));
        }
        for row in std::mem::take(&mut self.held) {
            text.extend(settled.lines(&row));
        }
        self.settled = Some(settled);
        self.out.write_all(text.as_bytes())
    }
}

/// `cell` made safe for a terminal, reusing it when it already is.
fn inert_owned(cell: String) -> String {
    match inert(&cell) {
        Cow::Borrowed(_) => cell,
        Cow::Owned(escaped) => escaped,
    }
}

/// A table's columns with their widths settled: what lays out each row.
#[derive(Debug)]
struct Settled {
    columns: Vec<Column>,
    /// Each column's width, `None` for one that went.
    widths: Vec<Option<usize>>,
    /// The width the table is fitted to; `None` prints every cell whole.
    width: Option<usize>,
}

impl Settled {
    /// The widths of `columns` for `rows` (and their headers when shown)
    /// in `width`, as [`plan`] gives them. A first cell (a row's name)
    /// too wide to share the line with the columns that stay does not
    /// widen its column: that name goes on lines of its own above the rest
    /// of its row, each ended with [`GOES_ON`] (see [`Settled::lines`]).
    fn new(
        columns: Vec<Column>,
        headers: bool,
        rows: &[Vec<String>],
        width: Option<usize>,
    ) -> Settled {
        let mut natural = natural_widths(&columns, headers, rows, None);
        let widths = match width {
            Some(width) => {
                let limit = first_limit(&columns, &natural, width);
                natural[0] = natural_widths(&columns[..1], headers, rows, Some(limit))[0];
                plan(&columns, &natural, width)
            }
            None => natural.into_iter().map(Some).collect(),
        };
        Settled {
            columns,
            widths,
            width,
        }
    }

    /// The header row's cells.
    fn header(&self) -> Vec<String> {
        self.columns.iter().map(|c| c.header.to_owned()).collect()
    }

    /// The lines of one row, each ended with a newline: one line, or more
    /// when a cell wraps, its continuation lines blank in every other
    /// column.
    fn lines(&self, cells: &[String]) -> Vec<String> {
        let kept: Vec<(usize, usize)> = self
            .widths
            .iter()
            .enumerate()
            .filter_map(|(i, width)| width.map(|width| (i, width)))
            .collect();
        let empty = String::new();
        let cell = |i: usize| cells.get(i).unwrap_or(&empty).as_str();
        let Some(limit) = self.width else {
            let pieces: Vec<Vec<Cow<'_, str>>> = kept
                .iter()
                .map(|&(i, _)| vec![Cow::Borrowed(cell(i))])
                .collect();
            return join_lines(&pieces, &kept);
        };
        // A cell wider than its column (a row after the look-ahead) shifts
        // the rest of its line while the line still fits.
        let shifted: usize = kept
            .iter()
            .map(|&(i, width)| match self.columns[i].fit {
                Fit::Whole => width.max(cell(i).width()),
                _ => width,
            })
            .sum::<usize>()
            + GAP * kept.len().saturating_sub(1);
        let mut above = Vec::new();
        let pieces: Vec<Vec<Cow<'_, str>>> = kept
            .iter()
            .map(|&(i, width)| match self.columns[i].fit {
                Fit::Whole if shifted <= limit => vec![Cow::Borrowed(cell(i))],
                Fit::Whole if i == 0 && cell(i).width() > width => {
                    above = full_lines(cell(i), limit);
                    Vec::new()
                }
                fit => cell_lines(fit, cell(i), width),
            })
            .collect();
        let mut lines: Vec<String> = above.into_iter().map(|line| line + "\n").collect();
        lines.extend(join_lines(&pieces, &kept));
        lines
    }
}

/// The most the first column can be given in `width`: what is left beside
/// the other columns that stay, each as narrow as it gets.
fn first_limit(columns: &[Column], natural: &[usize], width: usize) -> usize {
    let staying: Vec<usize> = (1..columns.len())
        .filter(|&i| columns[i].goes.is_none())
        .collect();
    let others: usize = staying.iter().map(|&i| least(columns, natural, i)).sum();
    width.saturating_sub(others + GAP * staying.len())
}

/// The narrowest column `i` gets before columns go: a whole column its
/// natural width, free text no less than [`MIN_TEXT`].
fn least(columns: &[Column], natural: &[usize], i: usize) -> usize {
    match columns[i].fit {
        Fit::Whole => natural[i],
        Fit::Cut | Fit::Wrap => natural[i].min(MIN_TEXT),
    }
}

/// A row's name on lines of its own, of at most `width` columns, each
/// ended with [`GOES_ON`]: the rest of the name, or of its row, follows on
/// the next line.
fn full_lines(text: &str, width: usize) -> Vec<String> {
    chunks(text, width.saturating_sub(1).max(1))
        .into_iter()
        .map(|mut line| {
            line.push(GOES_ON);
            line
        })
        .collect()
}

/// The lines of a row whose kept columns (index, width) hold the cells
/// that take the lines `pieces` gives: columns [`GAP`] apart, trailing
/// blanks left out, every line ended with a newline.
fn join_lines(pieces: &[Vec<Cow<'_, str>>], kept: &[(usize, usize)]) -> Vec<String> {
    let lines = pieces.iter().map(Vec::len).max().unwrap_or(0);
    (0..lines)
        .map(|n| {
            let line: Vec<&str> = pieces
                .iter()
                .map(|cell| cell.get(n).map_or("", |piece| piece.as_ref()))
                .collect();
            let last = line.iter().rposition(|piece| !piece.is_empty());
            let mut text = String::new();
            for (i, piece) in line.iter().enumerate().take(last.map_or(0, |l| l + 1)) {
                text.push_str(piece);
                if Some(i) != last {
                    let width = kept.get(i).map_or(0, |&(_, width)| width);
                    let pad = width.saturating_sub(piece.width()) + GAP;
                    text.extend(std::iter::repeat_n(' ', pad));
                }
            }
            text.push('\n');
            text
        })
        .collect()
}

/// Each column's natural width: its widest cell in `rows`, and its header
/// when `headers` are shown; with a `limit`, cells wider than it are not
/// counted.
fn natural_widths(
    columns: &[Column],
    headers: bool,
    rows: &[Vec<String>],
    limit: Option<usize>,
) -> Vec<usize> {
    let mut natural: Vec<usize> = columns
        .iter()
        .map(|c| if headers { c.header.width() } else { 0 })
        .collect();
    for row in rows {
        for (width, cell) in natural.iter_mut().zip(row) {
            let cell = cell.width();
            if limit.is_none_or(|limit| cell <= limit) {
                *width = (*width).max(cell);
            }
        }
    }
    natural
}

/// Each column's width in a table fitted to `width`, from each column's
/// natural width; `None` for a column that went. The table gives way in
/// the order the module's documentation gives: free text narrows to
/// [`MIN_TEXT`], then columns go in their order, then the widest of the
/// whole columns narrow to a common width (no less than [`MIN_WRAP`]).
/// Free text shares what is left, the narrower first.
fn plan(columns: &[Column], natural: &[usize], width: usize) -> Vec<Option<usize>> {
    let least = |i: usize| least(columns, natural, i);
    let mut shown = vec![true; columns.len()];
    let need = |shown: &[bool]| {
        let kept: Vec<usize> = (0..columns.len()).filter(|&i| shown[i]).collect();
        kept.iter().map(|&i| least(i)).sum::<usize>() + GAP * kept.len().saturating_sub(1)
    };
    let mut going: Vec<usize> = (0..columns.len())
        .filter(|&i| columns[i].goes.is_some())
        .collect();
    going.sort_by_key(|&i| (columns[i].goes, std::cmp::Reverse(i)));
    for i in going {
        if need(&shown) <= width {
            break;
        }
        shown[i] = false;
    }
    let kept: Vec<usize> = (0..columns.len()).filter(|&i| shown[i]).collect();
    let (whole, text): (Vec<usize>, Vec<usize>) =
        kept.iter().partition(|&&i| columns[i].fit == Fit::Whole);
    let gaps = GAP * kept.len().saturating_sub(1);
    let flexible: usize = text.iter().map(|&i| least(i)).sum();
    let naturals: Vec<usize> = whole.iter().map(|&i| natural[i]).collect();
    let cap = common_cap(&naturals, width.saturating_sub(gaps + flexible));
    let mut widths = vec![None; columns.len()];
    for &i in &whole {
        widths[i] = Some(natural[i].min(cap));
    }
    let used: usize = whole.iter().filter_map(|&i| widths[i]).sum::<usize>() + gaps;
    let mut room = width.saturating_sub(used);
    let mut text = text;
    text.sort_by_key(|&i| natural[i]);
    let mut left = text.len();
    for i in text {
        let share = room / left.max(1);
        let given = natural[i].min(share.max(least(i)));
        widths[i] = Some(given);
        room = room.saturating_sub(given);
        left -= 1;
    }
    widths
}

/// The widest any of columns as wide as `naturals` may be for all to fit
/// in `room`: the widest are narrowed first, to one width, never below
/// [`MIN_WRAP`]; `usize::MAX` when they fit as they are.
fn common_cap(naturals: &[usize], room: usize) -> usize {
    let total = |cap: usize| naturals.iter().map(|&n| n.min(cap)).sum::<usize>();
    let widest = naturals.iter().copied().max().unwrap_or(0);
    if total(widest) <= room {
        return usize::MAX;
    }
    let (mut fits, mut too_wide) = (MIN_WRAP, widest);
    if total(fits) > room {
        return MIN_WRAP;
    }
    while too_wide - fits > 1 {
        let middle = fits + (too_wide - fits) / 2;
        if total(middle) <= room {
            fits = middle;
        } else {
            too_wide = middle;
        }
    }
    fits
}

/// The lines `cell` takes in a column `width` wide that holds what `fit`
/// says: an identifier wrapped with [`GOES_ON`], free text cut, a sentence
/// wrapped between words.
fn cell_lines(fit: Fit, cell: &str, width: usize) -> Vec<Cow<'_, str>> {
    match fit {
        Fit::Whole => wrap_identifier(cell, width),
        Fit::Cut => vec![cut(cell, width)],
        Fit::Wrap => wrap(cell, width),
    }
}

/// A whole table fitted to a width at once, for a screen drawn whole: its
/// header's lines and each row's, laid out as a streamed table's are.
#[derive(Debug)]
pub(crate) struct Fitted {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Fitted {
    /// The default columns of `rows` of `columns` (one cell per column)
    /// fitted to `width`, every cell made safe for a terminal; lines come
    /// without their newlines.
    pub(crate) fn new(columns: &[Column], rows: Vec<Vec<String>>, width: usize) -> Fitted {
        let shown: Vec<usize> = (0..columns.len())
            .filter(|&i| !columns[i].wide_only)
            .collect();
        let rows: Vec<Vec<String>> = rows
            .into_iter()
            .map(|mut row| {
                let mut take = |i: usize| row.get_mut(i).map(std::mem::take).unwrap_or_default();
                shown.iter().map(|&i| inert_owned(take(i))).collect()
            })
            .collect();
        let columns = shown.iter().map(|&i| columns[i]).collect();
        let settled = Settled::new(columns, true, &rows, Some(width));
        let lines = |cells: &[String]| -> Vec<String> {
            settled
                .lines(cells)
                .into_iter()
                .map(|line| line.trim_end_matches('\n').to_owned())
                .collect()
        };
        Fitted {
            header: lines(&settled.header()),
            rows: rows.iter().map(|row| lines(row)).collect(),
        }
    }
}

/// The length of the escape (`\x1b`, `\u{202e}`, `\n`, `\"`) that `text`
/// starts with, if it starts with one.
fn escape_len(text: &str) -> Option<usize> {
    let rest = text.strip_prefix('\\')?.as_bytes();
    let len = match *rest.first()? {
        b'x' if rest.get(1..3)?.iter().all(u8::is_ascii_hexdigit) => 3,
        b'u' if rest.get(1) == Some(&b'{') => rest.iter().take(12).position(|&b| b == b'}')? + 1,
        b'n' | b'r' | b't' | b'0' | b'\\' | b'"' | b'\'' => 1,
        _ => return None,
    };
    Some(1 + len)
}

/// `text` in the pieces a cut or a wrap never parts: an escape whole, and
/// a character with the zero-width marks that follow it.
fn units(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let mut end = escape_len(rest).unwrap_or(first.len_utf8());
        for c in rest[end..].chars() {
            if c.width() != Some(0) {
                break;
            }
            end += c.len_utf8();
        }
        let (unit, tail) = rest.split_at(end);
        rest = tail;
        Some(unit)
    })
}

/// An identifier in lines of at most `width` columns: whole when it fits,
/// else broken anywhere but inside a unit (see [`units`]), every line but
/// the last ended with [`GOES_ON`]. Nothing is lost.
pub(crate) fn wrap_identifier(text: &str, width: usize) -> Vec<Cow<'_, str>> {
    if text.width() <= width {
        return vec![Cow::Borrowed(text)];
    }
    let mut lines = chunks(text, width.saturating_sub(1).max(1));
    let last = lines.pop().unwrap_or_default();
    lines
        .into_iter()
        .map(|mut line| {
            line.push(GOES_ON);
            Cow::Owned(line)
        })
        .chain([Cow::Owned(last)])
        .collect()
}

/// `text` in pieces of at most `width` columns, broken anywhere but inside
/// a unit; a unit wider than a piece is parted after all.
fn chunks(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    let mut add = |piece: &str, piece_width: usize| {
        if used + piece_width > width && used > 0 {
            lines.push(std::mem::take(&mut line));
            used = 0;
        }
        line.push_str(piece);
        used += piece_width;
    };
    for unit in units(text) {
        let unit_width = unit.width();
        if unit_width <= width {
            add(unit, unit_width);
            continue;
        }
        for c in unit.chars() {
            let mut buf = [0; 4];
            add(c.encode_utf8(&mut buf), c.width().unwrap_or(0));
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// `text` in at most `width` columns: whole when it fits, else as many of
/// its words as fit and "…". A cut falls only between words, never between
/// a word and a number after it (`pid 2905`, `session 0x10…`), so a number
/// is shown whole or not at all; when not even the first word fits, "…"
/// alone says that there is more.
pub(crate) fn cut(text: &str, width: usize) -> Cow<'_, str> {
    if text.width() <= width {
        return Cow::Borrowed(text);
    }
    let room = width.saturating_sub(1);
    let mut end = 0;
    let mut used = 0;
    let mut start = 0;
    for word in text.split(' ') {
        let word_end = start + word.len();
        used += word.width() + usize::from(start > 0);
        if used > room {
            break;
        }
        let number_follows = text[word_end..]
            .strip_prefix(' ')
            .is_some_and(|next| next.starts_with(|c: char| c.is_ascii_digit()));
        if !number_follows {
            end = word_end;
        }
        start = word_end + 1;
    }
    Cow::Owned(format!("{}…", text[..end].trim_end()))
}

/// `text` in lines of at most `width` columns, broken between words; a
/// word longer than a line is wrapped as an identifier is, with
/// [`GOES_ON`]. Nothing is lost.
pub(crate) fn wrap(text: &str, width: usize) -> Vec<Cow<'_, str>> {
    if text.width() <= width {
        return vec![Cow::Borrowed(text)];
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
        let mut pieces = wrap_identifier(word, width);
        let last = pieces.pop().unwrap_or_default();
        lines.extend(pieces.into_iter().map(Cow::into_owned));
        line = last.into_owned();
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines.into_iter().map(Cow::Owned).collect()
}

/// `text` as lines of at most `width` columns: its words wrapped as
/// [`wrap`] does, the leading spaces of its first line kept, and every
/// later line indented by `indent`.
pub(crate) fn hanging(text: &str, width: usize, indent: usize) -> Vec<String> {
    let body = text.trim_start_matches(' ');
    let lead = text.len() - body.len();
    let room = width.saturating_sub(lead.max(indent)).max(MIN_TEXT);
    wrap(body, room)
        .into_iter()
        .enumerate()
        .map(|(n, line)| {
            let pad = if n == 0 { lead } else { indent };
            format!("{}{line}", " ".repeat(pad))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLUMNS: &[Column] = &[
        Column::whole("LOCK"),
        Column::whole("SESSION"),
        Column::text("OWNER").goes(1),
    ];

    fn render_with(columns: &'static [Column], rows: &[Vec<String>], layout: Layout) -> String {
        let mut out = Vec::new();
        let mut table = Table::new(Box::new(&mut out), columns, layout);
        for row in rows {
            table.row(row.iter().cloned()).unwrap();
        }
        table.finish().unwrap();
        String::from_utf8(out).unwrap()
    }

    fn render(rows: &[[&str; 3]], layout: Layout) -> String {
        let rows: Vec<Vec<String>> = rows
            .iter()
            .map(|row| row.iter().map(|c| c.to_string()).collect())
            .collect();
        render_with(COLUMNS, &rows, layout)
    }

    fn fitted(width: usize) -> Layout {
        Layout {
            width: Some(width),
            headers: true,
            wide: false,
        }
    }

    /// The text of `line` from display column `from`, `width` columns on;
    /// a zero-width character goes with the one before it.
    fn slice(line: &str, from: usize, width: usize) -> String {
        let mut at = 0;
        let mut inside = false;
        let mut text = String::new();
        for c in line.chars() {
            let w = c.width().unwrap_or(0);
            if w > 0 {
                inside = at >= from && at < from + width;
            }
            if inside {
                text.push(c);
            }
            at += w;
        }
        text.trim_end().to_owned()
    }

    /// The whole cells of a table read back from its lines, each wrapped
    /// one joined: `rows` (the header first) are what went in, `widths`
    /// each column's (`None` for one that went). Fails on a line that does
    /// not read as the rows laid out.
    fn read_back(
        lines: &[&str],
        rows: &[Vec<String>],
        columns: &[Column],
        widths: &[Option<usize>],
        width: usize,
    ) -> Vec<Vec<String>> {
        let mut places = Vec::new();
        let mut from = 0;
        for (i, w) in widths.iter().enumerate() {
            if let Some(w) = *w {
                places.push((i, from, w));
                from += w + GAP;
            }
        }
        let key = places[0].2;
        let mut at = 0;
        let mut shown = Vec::new();
        for row in rows {
            let mut cells = vec![String::new(); columns.len()];
            if row[0].width() > key {
                // The name on lines of its own.
                let above = chunks(&row[0], width - 1).len();
                for line in &lines[at..at + above] {
                    cells[0].push_str(line.strip_suffix(GOES_ON).expect("the mark"));
                }
                at += above;
            }
            let main = at;
            for &(i, from, w) in &places {
                if columns[i].fit != Fit::Whole || (i == 0 && !cells[0].is_empty()) {
                    continue;
                }
                for line in &lines[main..] {
                    let piece = slice(line, from, w);
                    match piece.strip_suffix(GOES_ON) {
                        Some(start) => cells[i].push_str(start),
                        None => {
                            cells[i].push_str(&piece);
                            break;
                        }
                    }
                }
            }
            at += 1;
            while at < lines.len() && slice(lines[at], 0, key).is_empty() {
                at += 1;
            }
            shown.push(cells);
        }
        assert_eq!(at, lines.len(), "lines left over: {lines:#?}");
        shown
    }

    #[test]
    fn free_text_is_cut_between_words_and_never_parts_a_number() {
        let owner = "root@vm pid 29087 \"nightly settlement\"";
        assert_eq!(cut(owner, 60), owner);
        for (width, shown) in [
            (30, "root@vm pid 29087 \"nightly…"),
            (26, "root@vm pid 29087…"),
            (18, "root@vm pid 29087…"),
            (17, "root@vm…"),
            (12, "root@vm…"),
            (7, "…"),
        ] {
            assert_eq!(cut(owner, width), shown, "at {width}");
        }
        assert_eq!(cut("session 0x1000027b9001d", 20), "…");
    }

    #[test]
    fn identifiers_wrap_whole_with_the_mark_and_escapes_stay_whole() {
        let escaped = "/locks/a\\u{202e}b\\x1bc";
        for width in MIN_WRAP..escaped.len() {
            let pieces = wrap_identifier(escaped, width);
            assert!(pieces.len() > 1, "{pieces:?}");
            let mut joined = String::new();
            for (n, piece) in pieces.iter().enumerate() {
                assert!(piece.width() <= width, "{piece:?} at {width}");
                let text = if n + 1 < pieces.len() {
                    piece.strip_suffix(GOES_ON).expect("the mark")
                } else {
                    piece.as_ref()
                };
                if width > "\\u{202e}".len() {
                    for (i, _) in text.match_indices('\\') {
                        assert!(escape_len(&text[i..]).is_some(), "{text:?} parts an escape");
                    }
                }
                joined.push_str(text);
            }
            assert_eq!(joined, escaped);
        }
        let wide = "/配置/🔒/e\u{301}";
        for width in MIN_WRAP..wide.width() {
            let pieces = wrap_identifier(wide, width);
            assert!(
                pieces.iter().all(|piece| piece.width() <= width),
                "{pieces:?}"
            );
            let joined: String = pieces
                .iter()
                .map(|piece| piece.trim_end_matches(GOES_ON))
                .collect();
            assert_eq!(joined, wide);
            assert!(!pieces.iter().any(|piece| piece.starts_with('\u{301}')));
        }
    }

    #[test]
    fn a_row_gives_way_in_order_and_a_long_name_takes_lines_of_its_own() {
        let path = "/services/payments/locks/nightly-settlement";
        let session = "0x1000027b9001d";
        let owner = "root@vm pid 29087 \"settle\"";
        let rows = [[path, session, owner]];
        // Everything fits at 90.
        let shown = render(&rows, fitted(90));
        assert_eq!(
            shown.lines().nth(1).unwrap(),
            format!("{path}  {session}  {owner}")
        );
        // At 80 and 72 the owner is cut, between words; at 70 it goes.
        for (width, owner) in [(80, "root@vm pid 29087…"), (72, "root@vm…")] {
            let shown = render(&rows, fitted(width));
            assert_eq!(
                shown.lines().nth(1).unwrap(),
                format!("{path}  {session}  {owner}")
            );
        }
        let shown = render(&rows, fitted(70));
        assert_eq!(
            shown,
            format!(
                "LOCK{}  SESSION\n{path}  {session}\n",
                " ".repeat(path.len() - 4)
            )
        );
        // At 50 the path cannot share its line with the session: it goes on
        // a line of its own, and the owner comes back beside the session.
        let shown = render(&rows, fitted(50));
        assert!(shown.lines().all(|line| line.width() <= 50), "{shown}");
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines[1], format!("{path}{GOES_ON}"));
        assert!(
            lines[2].starts_with(&format!("      {session}  root@vm")),
            "{shown}"
        );
        // At 40 a path longer than the line wraps onto the next.
        let longer = format!("{path}/and/on/and/on");
        let shown = render(&[[longer.as_str(), session, owner]], fitted(40));
        let lines: Vec<&str> = shown.lines().collect();
        assert!(lines.iter().all(|line| line.width() <= 40), "{shown}");
        let name: String = lines[1..3]
            .iter()
            .map(|l| l.trim_end_matches(GOES_ON))
            .collect();
        assert_eq!(name, longer, "{shown}");
        assert!(lines[3].trim_start().starts_with(session), "{shown}");
        // Without a width (-o wide), every cell is whole on one line.
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
    fn rows_past_the_look_ahead_shift_while_they_fit_and_wrap_when_not() {
        let mut rows = vec![["/l/a", "0x1", "x"]; LOOK_AHEAD];
        rows.push(["/l/a-much-longer-lock-name", "0x2", "y"]);
        let long = format!("/l/{}", "b".repeat(60));
        rows.push([long.as_str(), "0x3", "z"]);
        let shown = render(
            &rows,
            Layout {
                width: Some(40),
                headers: false,
                wide: false,
            },
        );
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines[0], "/l/a  0x1  x");
        assert_eq!(lines[LOOK_AHEAD], "/l/a-much-longer-lock-name  0x2  y");
        assert!(lines.iter().all(|line| line.width() <= 40), "{shown}");
        let name: String = lines[LOOK_AHEAD + 1..LOOK_AHEAD + 3]
            .iter()
            .map(|l| l.trim_end_matches(GOES_ON))
            .collect();
        assert_eq!(name, long);
        assert_eq!(lines[LOOK_AHEAD + 3], "      0x3  z");
    }

    #[test]
    fn an_empty_table_prints_nothing_and_control_characters_are_escaped() {
        let layout = fitted(80);
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
            let cells = ["/locks/deploy/lock-0000000001", "0x1000027b9001d", reason];
            render_with(ACTIONS, &[cells.map(str::to_owned).to_vec()], layout)
        };
        let narrow = render(fitted(60));
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

    /// Many columns of every kind, as the widest tables have.
    const MANY: &[Column] = &[
        Column::whole("LOCK"),
        Column::whole("KIND").goes(2),
        Column::whole("HOLDERS"),
        Column::whole("WAITERS"),
        Column::whole("HELD FOR").goes(3),
        Column::whole("SESSION"),
        Column::text("OWNER").goes(1),
        Column::sentence("ACTION"),
    ];

    proptest::prop_compose! {
        /// A name of 10 to 150 characters, of ASCII, wide characters
        /// (CJK, emoji), a combining accent and control characters.
        fn name()(parts in proptest::collection::vec(
            proptest::sample::select(&[
                "a", "b", "/", "-", "7", "配", "置", "🔒", "\u{301}", "\x1b", "\u{202e}", "\t",
            ][..]),
            10..150,
        )) -> String {
            format!("/{}", parts.concat())
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// At any width, however narrow, any table is laid out, without a
        /// panic or a hang.
        #[test]
        fn any_width_lays_any_table_out(
            width in 0usize..40,
            paths in proptest::collection::vec(name(), 1..3),
        ) {
            let rows: Vec<Vec<String>> = paths
                .iter()
                .map(|path| MANY.iter().map(|_| path.clone()).collect())
                .collect();
            let shown = render_with(MANY, &rows, fitted(width));
            proptest::prop_assert!(shown.lines().count() > rows.len());
        }

        /// Any table at any of the usual widths fits the width on every
        /// line, and shows every identifier whole, wrapped at most, its
        /// pieces joining back into its escaped form; free text never
        /// shows a pid cut.
        #[test]
        fn any_table_fits_its_width_and_keeps_identifiers_whole(
            width in proptest::sample::select(&[40usize, 60, 80, 120, 200][..]),
            paths in proptest::collection::vec(name(), 1..5),
            pid in 1u32..4_000_000,
        ) {
            let owner = format!("root@vm pid {pid} \"a long command line with words\"");
            let rows: Vec<Vec<String>> = paths
                .iter()
                .enumerate()
                .map(|(n, path)| {
                    vec![
                        path.clone(),
                        "read-write".to_owned(),
                        format!("{n}/5"),
                        "12".to_owned(),
                        "3h 12m".to_owned(),
                        format!("0x1000027b900{n:02x}"),
                        owner.clone(),
                        "left alone: held by session 0x1 since noon".to_owned(),
                    ]
                })
                .collect();
            let shown = render_with(MANY, &rows, fitted(width));
            let lines: Vec<&str> = shown.lines().collect();
            for line in &lines {
                proptest::prop_assert!(line.width() <= width, "{} > {width}:\n{shown}", line.width());
            }
            let escaped: Vec<Vec<String>> = std::iter::once(MANY.iter().map(|c| c.header.to_owned()).collect())
                .chain(rows.iter().map(|row| row.iter().map(|cell| inert(cell).into_owned()).collect()))
                .collect();
            let settled = Settled::new(MANY.to_vec(), true, &escaped[1..], Some(width));
            let read = read_back(&lines, &escaped, MANY, &settled.widths, width);
            for (row, cells) in escaped.iter().zip(&read) {
                for (i, column) in MANY.iter().enumerate() {
                    if column.fit == Fit::Whole && settled.widths[i].is_some() {
                        proptest::prop_assert_eq!(&cells[i], &row[i], "{}:\n{}", column.header, shown);
                    }
                }
            }
            let pid = format!("pid {pid}");
            for line in &lines {
                proptest::prop_assert!(!line.contains("pid") || line.contains(&pid), "a pid cut:\n{}", shown);
            }
        }
    }
}
