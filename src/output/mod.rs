//! Output: one set of rows, rendered as a table ([`table`]) or as JSON
//! (serde_json), and the one printer that owns quiet, colour and layout.
//!
//! Commands compute a report once and hand it to [`Printer::report`], or
//! stream a listing through [`Printer::listing`]; they never format output
//! themselves, so table and JSON cannot drift apart.
//!
//! With `-o json`, stdout holds one whole document or nothing: a streamed
//! document starts only with its first element (so a command that fails
//! before finding anything prints nothing), and a failure after that closes
//! the document before the error goes to stderr.
//!
//! Node names, data and owner records come from anyone who can write to
//! ZooKeeper. Every text this module puts before a person goes through
//! [`inert`], and every JSON document through [`inert_json`], so that no
//! node can move the cursor, retitle or clear the terminal, reorder what
//! is shown with bidirectional overrides, or hide a character in a name
//! (a zero-width space, a line separator) that makes it another node.

mod live;
pub(crate) mod prometheus;
pub(crate) mod table;
mod time;

use std::io::{IsTerminal, Write};

use serde::Serialize;

pub(crate) use live::{LinePart, StderrBeside};
pub(crate) use table::{Column, Fitted, Layout, Table, cut, hanging, wrap};
pub(crate) use time::{format_age_ms, format_local_clock_ms, format_local_ms};

/// `-o/--output`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
}

/// A result a command prints: serialisable for JSON, and able to lay itself
/// out as a table.
pub trait Report: Serialize {
    /// The columns of the table form.
    fn columns(&self) -> &'static [Column];

    /// Writes the rows of the table form.
    fn rows(&self, table: &mut Table<'_>) -> std::io::Result<()>;

    /// Lines printed below the table (not in JSON): a summary of the rows,
    /// last, so that it is still on the screen when a long table is done.
    fn summary(&self) -> Option<String> {
        None
    }
}

/// Everything that decides how zklock talks to a person or a script.
#[derive(Clone, Copy, Debug)]
pub struct Printer {
    pub format: Format,
    pub quiet: bool,
    pub color: bool,
    /// Tables show every column and cut nothing (`-o wide`, `--no-trunc`).
    pub wide: bool,
    /// Print the header line of tables (`ls --no-headers` clears it).
    pub headers: bool,
}

impl Printer {
    /// A printer for `format`; colour only when stderr is a terminal and
    /// `NO_COLOR` is unset or empty.
    pub fn new(format: Format, quiet: bool) -> Printer {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Printer {
            format,
            quiet,
            color: !no_color && std::io::stderr().is_terminal(),
            wide: false,
            headers: true,
        }
    }

    /// Prints a report on stdout in the chosen format. Neither form is
    /// built whole in memory: JSON is serialised straight onto stdout, and
    /// the table is streamed row by row.
    pub fn report(&self, report: &impl Report) -> anyhow::Result<()> {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        match self.format {
            Format::Json => {
                serde_json::to_writer_pretty(InertJson::new(&mut out), report)?;
                out.write_all(b"\n")?;
                out.flush()?;
            }
            Format::Table => {
                let mut table = self.table(Box::new(&mut out), report.columns());
                report.rows(&mut table)?;
                table.finish()?;
                if let Some(summary) = report.summary() {
                    writeln!(out, "\n{}", inert(&summary))?;
                }
                out.flush()?;
            }
        }
        Ok(())
    }

    /// A table of `columns` written to `out` in this printer's layout.
    fn table<'w>(&self, out: Box<dyn Write + 'w>, columns: &'static [Column]) -> Table<'w> {
        Table::new(out, columns, Layout::for_stdout(self.wide, self.headers))
    }

    /// Starts a listing on stdout: one element at a time, as a table of
    /// `columns` or, with `-o json`, a JSON array (or, with `json_object`,
    /// the object of those fields whose last field is the array named), so
    /// a listing of any length never sits in memory whole. On a terminal,
    /// writes pause the `progress` line, if any, so the two never mix.
    pub fn listing<'p>(
        &self,
        columns: &'static [Column],
        json_object: Option<(&[(&str, serde_json::Value)], &str)>,
        progress: Option<&'p Progress>,
    ) -> anyhow::Result<Listing<'p>> {
        let out = stdout_beside(progress);
        Ok(match (self.format, json_object) {
            (Format::Json, None) => Listing::Json(JsonStream::array(out)),
            (Format::Json, Some((fields, array))) => {
                Listing::Json(JsonStream::object_with_array(out, fields, array)?)
            }
            (Format::Table, _) => Listing::Table(self.table(Box::new(out), columns)),
        })
    }

    /// Prints the lines above a streamed table (a lock's heading in `stat`),
    /// fitted to the width as [`Printer::paragraph`] does; nothing with `-o
    /// json`.
    pub fn table_heading(&self, heading: &str) -> anyhow::Result<()> {
        match self.format {
            Format::Table => self.paragraph(&format!("{heading}\n"), HEADING_INDENT),
            Format::Json => Ok(()),
        }
    }

    /// Prints the lines below a table (what a report found besides its
    /// rows), after an empty line, fitted as [`Printer::table_heading`]
    /// fits a heading; nothing with `-o json`.
    pub fn table_footing(&self, footing: &str) -> anyhow::Result<()> {
        match self.format {
            Format::Table => self.paragraph(&format!("\n{footing}\n"), HEADING_INDENT),
            Format::Json => Ok(()),
        }
    }

    /// Prints the lines of `text` on stdout, each fitted to the width tables
    /// are fitted to: wrapped between words, a word too long for a line (a
    /// path) wrapped with the mark, lines after the first indented by
    /// `indent`; with `-o wide`, as they are. A control character in them
    /// is shown escaped.
    pub fn paragraph(&self, text: &str, indent: usize) -> anyhow::Result<()> {
        let width = Layout::for_stdout(self.wide, self.headers).width;
        let lines: Vec<String> = text
            .split('\n')
            .flat_map(|line| match width {
                Some(width) => hanging(&inert(line), width, indent),
                None => vec![inert(line).into_owned()],
            })
            .collect();
        write_stdout(&lines.join("\n"))
    }

    /// Prints one line on stdout (a token, an event), whatever the format;
    /// a control character in it is shown escaped.
    pub fn line(&self, text: &str) -> anyhow::Result<()> {
        write_stdout(&inert(text))
    }

    /// Prints `value` as one line of JSON on stdout.
    pub fn json_line(&self, value: &impl Serialize) -> anyhow::Result<()> {
        write_stdout(&inert_json(serde_json::to_string(value)?))
    }

    /// Prints text zklock wrote itself (a man page, a completion script) on
    /// stdout as it is.
    pub fn own_text(&self, text: &str) -> anyhow::Result<()> {
        write_stdout(text)
    }

    /// Tells the person something on stderr, unless `-q`.
    pub fn note(&self, text: &str) {
        if !self.quiet {
            eprintln!("zklock: {}", inert(text));
        }
    }
}

/// How far the lines of a heading after its first are indented.
const HEADING_INDENT: usize = 2;

/// Makes a panic (a bug: no input should reach one) report itself through
/// [`inert`]: its message may carry a node's name or data, which must not
/// reach the terminal raw there either. The exit code stays 101.
pub fn escape_panics() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(no message)");
        let place = info.location().map_or(String::new(), |at| {
            format!(" at {}:{}", at.file(), at.line())
        });
        eprintln!("{}", panic_report(&place, message));
    }));
}

/// The line a panic with `message` at `place` prints.
fn panic_report(place: &str, message: &str) -> String {
    format!(
        "zklock: internal error, please report it{place}: {}",
        inert(message)
    )
}

/// Reports an error on stderr: a line for people, or with `-o json` one
/// JSON object `{"error", "exit_code", "cause"}`, so a script reading JSON
/// never has to parse prose (`cause` is a stable word, see
/// `exit::cause_for`). Stdout is left alone.
pub fn print_error(format: Format, message: &str, exit_code: u8, cause: &str) {
    print_error_with(format, message, exit_code, cause, serde_json::json!({}));
}

/// [`print_error`], with the fields of the object `details` after the
/// cause in JSON: what a script needs to act on this cause.
pub fn print_error_with(
    format: Format,
    message: &str,
    exit_code: u8,
    cause: &str,
    details: serde_json::Value,
) {
    match format {
        Format::Table => eprintln!("zklock: {}", inert(message)),
        Format::Json => {
            let mut error = serde_json::json!({
                "error": message,
                "exit_code": exit_code,
                "cause": cause,
            });
            if let (Some(error), serde_json::Value::Object(details)) =
                (error.as_object_mut(), details)
            {
                error.extend(details);
            }
            eprintln!("{}", inert_json(error.to_string()));
        }
    }
}

fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

/// True for the characters that drive a terminal or hide in it: the C0
/// and C1 controls and DEL (escape sequences, carriage return, backspace),
/// and the invisible ones of [`crate::names::is_invisible`] (bidirectional
/// marks, embeddings, overrides and isolates, zero-width characters and
/// every other default-ignorable code point, the line and paragraph
/// separators), which reorder, hide or break what is shown.
fn is_unsafe(c: char) -> bool {
    c.is_control() || crate::names::is_invisible(c)
}

/// `text` safe to show on a terminal: every control character and
/// invisible character is written as an escape (`\n`, `\r`, `\t`, `\x1b`,
/// `\u{202e}`, `\u{200b}`), so the text stays on one line and reads as it
/// is stored.
pub fn inert(text: &str) -> std::borrow::Cow<'_, str> {
    if text.bytes().all(|b| (b' '..0x7f).contains(&b)) || !text.chars().any(is_unsafe) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe(c) && (c as u32) < 0x100 => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if is_unsafe(c) => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A JSON document whose strings hold no raw DEL, C1 or invisible
/// character: serde_json escapes the C0 controls itself, the rest are
/// written as `\uXXXX` (a surrogate pair beyond the Basic Multilingual
/// Plane, as JSON spells those), which means the same to every JSON
/// reader, so the document stays faithful and a terminal it is printed on
/// stays unharmed.
pub fn inert_json(json: String) -> String {
    match json_escaped(&json) {
        std::borrow::Cow::Borrowed(_) => json,
        std::borrow::Cow::Owned(escaped) => escaped,
    }
}

/// `json` with every unsafe character but the newlines of pretty JSON
/// (outside strings it has only newlines and spaces) written as `\uXXXX`.
fn json_escaped(json: &str) -> std::borrow::Cow<'_, str> {
    // serde_json escapes every C0 control inside a string, and writes none
    // but newlines outside one, so ASCII without DEL, nearly every
    // document, is safe as it is; found by the fast scans of whole slices.
    if (json.is_ascii() && !json.as_bytes().contains(&0x7f))
        || !json.chars().any(|c| is_unsafe(c) && c != '\n')
    {
        return std::borrow::Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_unsafe(c) && c != '\n' {
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `n` and what it counts, in the form that agrees with it: `1 holder`,
/// `0 holders`, `2 holders`.
pub fn counted<N>(n: N, one: &str, many: &str) -> String
where
    N: std::fmt::Display + PartialEq + From<u8>,
{
    let noun = if n == N::from(1) { one } else { many };
    format!("{n} {noun}")
}

/// Node data as text for people and JSON: lossy UTF-8, or `None` when empty.
pub fn data_text(data: &[u8]) -> Option<String> {
    (!data.is_empty()).then(|| String::from_utf8_lossy(data).into_owned())
}

/// A spinner on stderr while zklock waits; drawn only on a terminal, as a
/// [`live::LiveLine`].
pub struct Spinner {
    line: live::LiveLine,
}

impl Printer {
    /// True when a live line (a spinner, a walk's progress) is drawn: on a
    /// terminal, unless quiet.
    pub fn shows_live_line(&self) -> bool {
        !self.quiet && std::io::stderr().is_terminal()
    }

    /// A spinner with `message`, or `None` when stderr is not a terminal or
    /// `-q` was given: nothing is ever drawn into a pipe or a log. It keeps
    /// to one line of the terminal's width (the message is cut to fit), and
    /// with a `limit` shows the wait's progress against it (`[2s/30s]`).
    pub fn spinner(&self, message: &str, limit: Option<std::time::Duration>) -> Option<Spinner> {
        if !self.shows_live_line() {
            return None;
        }
        let line = live::LiveLine::start(self.color, limit, std::time::Duration::ZERO)?;
        line.set_message(inert(message).into_owned());
        Some(Spinner { line })
    }
}

impl Spinner {
    /// Replaces the message with `parts`, the most useful first: those the
    /// terminal's width has no room for are left out whole, from the last.
    pub(crate) fn set_parts(&self, parts: Vec<LinePart>) {
        self.line.set_parts(parts);
    }

    /// Removes the spinner from the terminal (as dropping it does, whichever
    /// way the wait ends).
    pub fn finish(self) {
        drop(self);
    }
}

/// How long work runs before [`Printer::progress`] draws anything.
pub const PROGRESS_DELAY: std::time::Duration = std::time::Duration::from_millis(300);

/// A progress line on stderr for work that may take long (a tree walk).
/// Drawn only on a terminal, and only once the work has run for
/// [`PROGRESS_DELAY`], so a quick run prints nothing at all.
pub struct Progress {
    line: live::LiveLine,
    /// The count a [`Printer::progress_bar`] goes up to.
    total: u64,
}

impl Printer {
    /// A progress line, or `None` when stderr is not a terminal or `-q` was
    /// given.
    pub fn progress(&self) -> Option<Progress> {
        if !self.shows_live_line() {
            return None;
        }
        let line = live::LiveLine::start(self.color, None, PROGRESS_DELAY)?;
        Some(Progress { line, total: 0 })
    }

    /// A progress bar counting up to `total`, with `message` beside it, or
    /// `None` as for [`Printer::progress`]; like that line, it is drawn only
    /// once the work has run for [`PROGRESS_DELAY`].
    pub fn progress_bar(&self, total: u64, message: &str) -> Option<Progress> {
        let progress = Progress {
            total,
            ..self.progress()?
        };
        progress.line.set_position(0, total);
        progress.set(message.to_owned());
        Some(progress)
    }
}

impl Progress {
    /// Replaces the message.
    pub fn set(&self, message: String) {
        self.line.set_message(inert(&message).into_owned());
    }

    /// Moves a [`Printer::progress_bar`] to `done`.
    pub fn set_position(&self, done: u64) {
        self.line.set_position(done, self.total);
    }
}

/// A JSON document streamed onto stdout.
pub type StdoutJson<'p> = JsonStream<std::io::BufWriter<StdoutBeside<'p>>>;

/// Stdout, buffered; writes pause the progress line only when both share
/// the terminal (a redirected stdout never disturbs it).
fn stdout_beside(progress: Option<&Progress>) -> std::io::BufWriter<StdoutBeside<'_>> {
    let progress = progress.filter(|_| std::io::stdout().is_terminal());
    std::io::BufWriter::with_capacity(1 << 16, StdoutBeside { progress })
}

/// A listing being streamed onto stdout (see [`Printer::listing`]).
pub enum Listing<'p> {
    Json(StdoutJson<'p>),
    Table(Table<'p>),
}

impl Listing<'_> {
    /// Adds one element: `element` in JSON, or the rows `rows` writes in a
    /// table.
    pub fn push(
        &mut self,
        element: &impl Serialize,
        rows: impl FnOnce(&mut Table<'_>) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        match self {
            Listing::Json(stream) => stream.push(element),
            Listing::Table(table) => Ok(rows(table)?),
        }
    }

    /// Ends the JSON array being filled and starts the next field of the
    /// object around it, the array `name`: a lock's holders, then its
    /// waiters. A table goes on with the same rows.
    pub fn next_array(&mut self, name: &str) -> anyhow::Result<()> {
        match self {
            Listing::Json(stream) => stream.next_array(name),
            Listing::Table(_) => Ok(()),
        }
    }

    /// Ends the listing: closes the JSON document (an empty one prints as
    /// `[]`), or writes the rows of the table still held back.
    pub fn finish(self) -> anyhow::Result<()> {
        match self {
            Listing::Json(stream) => stream.finish().map(drop),
            Listing::Table(table) => Ok(table.finish()?),
        }
    }

    /// Ends the listing as the work that filled it ended: finished when it
    /// succeeded, abandoned (see [`Listing::abandon`]) when it failed.
    pub fn close<T>(self, work: anyhow::Result<T>) -> anyhow::Result<T> {
        match work {
            Ok(done) => {
                self.finish()?;
                Ok(done)
            }
            Err(err) => {
                self.abandon()?;
                Err(err)
            }
        }
    }

    /// Ends a listing whose work failed: a JSON document that has begun is
    /// closed, so stdout still holds one whole document (the error on
    /// stderr and the exit code say it is not complete), and one that has
    /// not begun prints nothing; a table prints the rows found so far.
    pub fn abandon(self) -> anyhow::Result<()> {
        match self {
            Listing::Json(stream) if stream.head.is_some() => Ok(()),
            listing => listing.finish(),
        }
    }
}

/// A JSON document being streamed (see [`Printer::listing`]); what it
/// writes is what `serde_json::to_string_pretty` writes for the whole
/// document. Nothing is written before the first element or
/// [`JsonStream::finish`], which closes it.
pub struct JsonStream<W: Write> {
    out: W,
    /// What opens the document, until it is written.
    head: Option<String>,
    /// The indentation of the array's elements.
    indent: &'static str,
    close: &'static str,
    elements: u64,
    /// The element being written, reused from one to the next.
    element: Vec<u8>,
}

impl<W: Write> JsonStream<W> {
    /// A stream of a top-level array.
    pub fn array(out: W) -> JsonStream<W> {
        JsonStream::start(out, "[".to_owned(), "  ", "]")
    }

    /// A stream of an object: `fields`, then the streamed array `array`.
    pub fn object_with_array(
        out: W,
        fields: &[(&str, serde_json::Value)],
        array: &str,
    ) -> anyhow::Result<JsonStream<W>> {
        let mut head = String::from("{\n");
        for (name, value) in fields {
            let value = serde_json::to_string_pretty(value)?.replace('\n', "\n  ");
            head += &format!("  {}: {value},\n", serde_json::to_string(name)?);
        }
        head += &format!("  {}: [", serde_json::to_string(array)?);
        Ok(JsonStream::start(out, inert_json(head), "    ", "]\n}"))
    }

    fn start(out: W, head: String, indent: &'static str, close: &'static str) -> JsonStream<W> {
        JsonStream {
            out,
            head: Some(head),
            indent,
            close,
            elements: 0,
            element: Vec::new(),
        }
    }

    /// Writes what opens the document, once.
    fn open(&mut self) -> std::io::Result<()> {
        match self.head.take() {
            Some(head) => self.out.write_all(head.as_bytes()),
            None => Ok(()),
        }
    }

    /// Writes one element of the array.
    ///
    /// The element is made whole in a buffer kept from one to the next, laid
    /// out already at its depth, then escaped and written at once: serde_json's
    /// many small writes would otherwise each cross the escaping. Nothing is
    /// flushed: the writer's buffer decides when stdout is written, as it
    /// does for a table's rows.
    pub fn push(&mut self, element: &impl Serialize) -> anyhow::Result<()> {
        self.open()?;
        self.element.clear();
        let separator: &[u8] = if self.elements == 0 { b"\n" } else { b",\n" };
        self.element.extend_from_slice(separator);
        self.element.extend_from_slice(self.indent.as_bytes());
        let layout = Nested::at(self.indent.len() / NESTED_INDENT.len());
        element.serialize(&mut serde_json::Serializer::with_formatter(
            &mut self.element,
            layout,
        ))?;
        // serde_json writes nothing but UTF-8.
        let text = std::str::from_utf8(&self.element)?;
        self.out.write_all(json_escaped(text).as_bytes())?;
        self.elements += 1;
        Ok(())
    }

    /// Closes the array and starts the next field of the object, the array
    /// `name`.
    pub fn next_array(&mut self, name: &str) -> anyhow::Result<()> {
        self.open()?;
        let outer = &self.indent[..self.indent.len() - 2];
        if self.elements > 0 {
            write!(self.out, "\n{outer}")?;
        }
        let name = serde_json::to_string(name)?;
        write!(self.out, "],\n{outer}{}: [", inert_json(name))?;
        self.elements = 0;
        Ok(())
    }

    /// Closes the array (and the object around it), ends the line and
    /// flushes; returns the writer.
    pub fn finish(mut self) -> anyhow::Result<W> {
        self.open()?;
        if self.elements > 0 {
            let outer = &self.indent[..self.indent.len() - 2];
            write!(self.out, "\n{outer}")?;
        }
        writeln!(self.out, "{}", self.close)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// One level of indentation in pretty JSON, as serde_json writes it.
const NESTED_INDENT: &str = "  ";

/// serde_json's pretty layout begun `depth` levels in, so that an element
/// of a streamed array comes out indented as it would inside the whole
/// document: each value on a line of its own, a level deeper than its
/// container, and `: ` after each key.
struct Nested {
    depth: usize,
    /// Whether the container being written has had a value yet.
    has_value: bool,
}

impl Nested {
    fn at(depth: usize) -> Nested {
        Nested {
            depth,
            has_value: false,
        }
    }

    fn open<W: ?Sized + Write>(&mut self, out: &mut W, mark: &[u8]) -> std::io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        out.write_all(mark)
    }

    fn close<W: ?Sized + Write>(&mut self, out: &mut W, mark: &[u8]) -> std::io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            out.write_all(b"\n")?;
            self.indent(out)?;
        }
        out.write_all(mark)
    }

    fn next<W: ?Sized + Write>(&mut self, out: &mut W, first: bool) -> std::io::Result<()> {
        out.write_all(if first { b"\n" } else { b",\n" })?;
        self.indent(out)
    }

    fn indent<W: ?Sized + Write>(&self, out: &mut W) -> std::io::Result<()> {
        (0..self.depth).try_for_each(|_| out.write_all(NESTED_INDENT.as_bytes()))
    }
}

impl serde_json::ser::Formatter for Nested {
    fn begin_array<W: ?Sized + Write>(&mut self, out: &mut W) -> std::io::Result<()> {
        self.open(out, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, out: &mut W) -> std::io::Result<()> {
        self.close(out, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        out: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.next(out, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _out: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, out: &mut W) -> std::io::Result<()> {
        self.open(out, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, out: &mut W) -> std::io::Result<()> {
        self.close(out, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        out: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.next(out, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, out: &mut W) -> std::io::Result<()> {
        out.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _out: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// A writer that passes JSON on with every DEL, C1 or invisible character
/// written as `\uXXXX`, as [`inert_json`] does for a whole document, without the
/// document ever being in memory whole. A character split across two writes
/// waits for its other bytes.
pub struct InertJson<W: Write> {
    out: W,
    partial: Vec<u8>,
}

impl<W: Write> InertJson<W> {
    pub fn new(out: W) -> InertJson<W> {
        InertJson {
            out,
            partial: Vec::new(),
        }
    }

    fn pass(&mut self, text: &str) -> std::io::Result<()> {
        self.out.write_all(json_escaped(text).as_bytes())
    }
}

impl<W: Write> Write for InertJson<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let bytes = if self.partial.is_empty() {
            std::borrow::Cow::Borrowed(buf)
        } else {
            let mut joined = std::mem::take(&mut self.partial);
            joined.extend_from_slice(buf);
            std::borrow::Cow::Owned(joined)
        };
        let valid = match std::str::from_utf8(&bytes) {
            Ok(text) => text.len(),
            Err(err) if err.error_len().is_none() => err.valid_up_to(),
            Err(err) => return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, err)),
        };
        let (text, rest) = bytes.split_at(valid);
        // `valid` ends where from_utf8 found valid UTF-8 to end.
        self.pass(std::str::from_utf8(text).unwrap_or_default())?;
        self.partial = rest.to_vec();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Stdout, written with a progress line (if any) taken off the terminal.
pub struct StdoutBeside<'p> {
    progress: Option<&'p Progress>,
}

impl Write for StdoutBeside<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.progress {
            Some(progress) => progress.line.write_stdout(buf),
            None => std::io::stdout().write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stdout().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_text_cannot_drive_a_terminal() {
        let hostile = "a\x1b]0;pwned\x07b\rc\x7f\u{9b}2J\u{202e}fdp.exe\u{2066}\nz";
        let shown = inert(hostile);
        assert_eq!(
            shown,
            "a\\x1b]0;pwned\\x07b\\rc\\x7f\\x9b2J\\u{202e}fdp.exe\\u{2066}\\nz"
        );
        assert!(!shown.chars().any(is_unsafe));
        assert!(matches!(
            inert("/locks/deploy"),
            std::borrow::Cow::Borrowed(_)
        ));
        let json = inert_json(serde_json::to_string(&serde_json::json!({ "h": hostile })).unwrap());
        assert!(!json.chars().any(is_unsafe), "{json}");
        let back: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back["h"], hostile);
    }

    /// Every code point: a control or invisible character is shown
    /// escaped, alone and in the middle of a name, and its JSON parses back
    /// to it (as a surrogate pair beyond the Basic Multilingual Plane); any
    /// other is shown as it is.
    #[test]
    fn every_control_and_invisible_character_is_escaped_and_no_other() {
        let mut visible = String::new();
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            if !(c.is_control() || crate::names::is_invisible(c)) {
                visible.push(c);
                continue;
            }
            let text = format!("/locks/a{c}b");
            let shown = inert(&text);
            assert!(!shown.contains(c), "U+{:04X}: {shown}", c as u32);
            assert!(shown.starts_with("/locks/a\\") && shown.ends_with('b'));
            let json = inert_json(serde_json::to_string(&text).unwrap());
            assert!(json.is_ascii(), "U+{:04X}: {json}", c as u32);
            assert_eq!(serde_json::from_str::<String>(&json).unwrap(), text);
        }
        assert!(matches!(inert(&visible), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn a_count_agrees_with_its_noun() {
        assert_eq!(counted(0usize, "holder", "holders"), "0 holders");
        assert_eq!(counted(1u32, "holder", "holders"), "1 holder");
        assert_eq!(counted(2u64, "directory", "directories"), "2 directories");
    }

    #[test]
    fn a_panic_message_cannot_drive_a_terminal() {
        let report = panic_report(" at src/x.rs:1", "bad name \x1b[2J\u{202e}");
        assert!(!report.chars().any(is_unsafe), "{report}");
        assert!(report.contains("\\x1b[2J"), "{report}");
    }

    #[derive(Serialize)]
    struct Document<'a> {
        path: &'a str,
        time_ms: u64,
        locks: &'a [serde_json::Value],
    }

    fn streamed(elements: &[serde_json::Value], object: bool) -> String {
        let mut stream = if object {
            let fields = [("path", "/l".into()), ("time_ms", 7.into())];
            JsonStream::object_with_array(Vec::new(), &fields, "locks").unwrap()
        } else {
            JsonStream::array(Vec::new())
        };
        for element in elements {
            stream.push(element).unwrap();
        }
        String::from_utf8(stream.finish().unwrap()).unwrap()
    }

    #[derive(Serialize)]
    struct TwoArrays<'a> {
        path: &'a str,
        holders: &'a [serde_json::Value],
        waiters: &'a [serde_json::Value],
    }

    #[test]
    fn a_document_of_two_streamed_arrays_prints_as_pretty_json_would() {
        let elements = [serde_json::json!({"a": 1}), serde_json::json!("s")];
        for split in 0..=elements.len() {
            for end in split..=elements.len() {
                let (holders, waiters) = (&elements[..split], &elements[split..end]);
                let fields = [("path", "/l".into())];
                let mut stream =
                    JsonStream::object_with_array(Vec::new(), &fields, "holders").unwrap();
                holders.iter().for_each(|e| stream.push(e).unwrap());
                stream.next_array("waiters").unwrap();
                waiters.iter().for_each(|e| stream.push(e).unwrap());
                let whole = TwoArrays {
                    path: "/l",
                    holders,
                    waiters,
                };
                assert_eq!(
                    String::from_utf8(stream.finish().unwrap()).unwrap(),
                    serde_json::to_string_pretty(&whole).unwrap() + "\n"
                );
            }
        }
    }

    #[test]
    fn a_streamed_document_prints_as_pretty_json_would() {
        let elements = [
            serde_json::json!({"a": [1, {"b": "x\ny"}], "c": null, "d": {}, "e": [[], {"f": []}]}),
            serde_json::json!([]),
            serde_json::json!({}),
            serde_json::json!("s"),
        ];
        for count in [0, 1, 4] {
            let some = &elements[..count];
            let whole = Document {
                path: "/l",
                time_ms: 7,
                locks: some,
            };
            assert_eq!(
                streamed(some, false),
                serde_json::to_string_pretty(some).unwrap() + "\n"
            );
            assert_eq!(
                streamed(some, true),
                serde_json::to_string_pretty(&whole).unwrap() + "\n"
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        /// Any time or age a stat can carry is shown, however far off.
        #[test]
        fn any_time_or_age_formats(ms in proptest::prelude::any::<i64>()) {
            let _ = format_local_ms(ms);
            let _ = format_age_ms(ms);
        }

        /// Any text, however hostile, is shown without a raw control or
        /// invisible character, and in JSON (whole or streamed) parses back to
        /// itself.
        #[test]
        fn any_text_is_inert_and_its_json_round_trips(
            text in "\\PC{0,40}|[\\x00-\\x1f\\x7f-\\u{9f}\\u{200b}-\\u{200f}\\u{2028}-\\u{202e}\\u{2060}-\\u{2069}\\u{feff}\\u{e0001}a\\u{e9}\\u{914d}]{0,20}",
        ) {
            proptest::prop_assert!(!inert(&text).chars().any(is_unsafe));
            let value = serde_json::json!({ "path": text, "items": [text] });
            let json = inert_json(serde_json::to_string_pretty(&value).unwrap());
            proptest::prop_assert!(!json.chars().any(|c| is_unsafe(c) && c != '\n'));
            proptest::prop_assert_eq!(serde_json::from_str::<serde_json::Value>(&json).unwrap(), value.clone());
            let mut stream = JsonStream::object_with_array(Vec::new(), &[("path", value["path"].clone())], &text).unwrap();
            stream.push(&value).unwrap();
            let streamed = String::from_utf8(stream.finish().unwrap()).unwrap();
            proptest::prop_assert!(streamed.ends_with('\n'));
            let parsed: serde_json::Value = serde_json::from_str(&streamed).unwrap();
            proptest::prop_assert_eq!(&parsed[text.as_str()][0], &value);
        }
    }
}
