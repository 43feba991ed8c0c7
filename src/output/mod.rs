//! Output: one set of rows, rendered as a table (comfy-table) or as JSON
//! (serde_json), and the one printer that owns quiet and colour.
//!
//! Commands compute a report once and hand it to [`Printer::report`]; they
//! never format output themselves, so table and JSON cannot drift apart.

use std::io::{IsTerminal, Write};

use comfy_table::{ContentArrangement, Table, presets};
use serde::Serialize;

/// `-o/--output`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
}

/// A result a command prints: serialisable for JSON, and able to lay itself
/// out as a table.
pub trait Report: Serialize {
    /// The table form of this report.
    fn table(&self) -> Table;

    /// Lines printed above the table (not in JSON): a summary of what the
    /// rows are about.
    fn heading(&self) -> Option<String> {
        None
    }
}

/// Everything that decides how zklock talks to a person or a script.
#[derive(Clone, Copy, Debug)]
pub struct Printer {
    pub format: Format,
    pub quiet: bool,
    pub color: bool,
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
        }
    }

    /// Prints a report on stdout in the chosen format.
    pub fn report(&self, report: &impl Report) -> anyhow::Result<()> {
        let text = match self.format {
            Format::Json => serde_json::to_string_pretty(report)?,
            Format::Table => match report.heading() {
                Some(heading) => format!("{heading}\n\n{}", report.table()),
                None => report.table().to_string(),
            },
        };
        let mut out = std::io::stdout().lock();
        writeln!(out, "{text}")?;
        out.flush()?;
        Ok(())
    }

    /// Prints one line on stdout (a token, say), whatever the format.
    pub fn line(&self, text: &str) -> anyhow::Result<()> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{text}")?;
        out.flush()?;
        Ok(())
    }

    /// Tells the person something on stderr, unless `-q`.
    pub fn note(&self, text: &str) {
        if !self.quiet {
            eprintln!("zklock: {text}");
        }
    }
}

/// A table in zklock's house style: no borders, wrapped
/// to the terminal width when there is one.
pub fn table(header: &[&str]) -> Table {
    let mut table = Table::new();
    table
        .load_style(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Dynamic);
    if !header.is_empty() {
        table.set_header(header.iter().copied());
    }
    table
}

/// Node data as text for people and JSON: lossy UTF-8, or `None` when empty.
pub fn data_text(data: &[u8]) -> Option<String> {
    (!data.is_empty()).then(|| String::from_utf8_lossy(data).into_owned())
}

/// A spinner on stderr while zklock waits; drawn only on a terminal.
pub struct Spinner {
    bar: indicatif::ProgressBar,
}

impl Printer {
    /// `bar` in zklock's spinner style: a spinner (cyan when colour is on),
    /// the message, and the time so far.
    fn spinning(&self, bar: indicatif::ProgressBar) -> indicatif::ProgressBar {
        let template = if self.color {
            "{spinner:.cyan} {msg} [{elapsed}]"
        } else {
            "{spinner} {msg} [{elapsed}]"
        };
        if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        bar
    }

    /// A spinner with `message`, or `None` when stderr is not a terminal or
    /// `-q` was given: nothing is ever drawn into a pipe or a log.
    pub fn spinner(&self, message: &str) -> Option<Spinner> {
        if self.quiet || !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = self.spinning(indicatif::ProgressBar::new_spinner());
        bar.set_message(message.to_owned());
        bar.enable_steady_tick(std::time::Duration::from_millis(100));
        Some(Spinner { bar })
    }
}

impl Spinner {
    /// Replaces the message.
    pub fn set(&self, message: String) {
        self.bar.set_message(message);
    }

    /// Removes the spinner from the terminal.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

/// A duration for people, to the second: `3m 12s`.
pub fn format_age_ms(ms: i64) -> String {
    let secs = std::time::Duration::from_secs((ms.max(0) / 1000) as u64);
    humantime::format_duration(secs).to_string()
}

/// How long work runs before [`Printer::progress`] draws anything.
pub const PROGRESS_DELAY: std::time::Duration = std::time::Duration::from_millis(300);

/// A progress line on stderr for work that may take long (a tree walk).
/// Drawn only on a terminal, and only once the work has run for
/// [`PROGRESS_DELAY`], so a quick run prints nothing at all.
pub struct Progress {
    bar: indicatif::ProgressBar,
    started: std::time::Instant,
    shown: std::cell::Cell<bool>,
}

impl Printer {
    /// A progress line, or `None` when stderr is not a terminal or `-q` was
    /// given.
    pub fn progress(&self) -> Option<Progress> {
        if self.quiet || !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = self.spinning(indicatif::ProgressBar::with_draw_target(
            None,
            indicatif::ProgressDrawTarget::hidden(),
        ));
        bar.enable_steady_tick(std::time::Duration::from_millis(100));
        Some(Progress {
            bar,
            started: std::time::Instant::now(),
            shown: std::cell::Cell::new(false),
        })
    }

    /// Starts a JSON array streamed onto stdout, one element at a time, so
    /// a listing of any length never sits in memory whole. On a terminal,
    /// writes pause the `progress` line, if any, so the two never mix.
    pub fn json_array<'p>(&self, progress: Option<&'p Progress>) -> anyhow::Result<StdoutJson<'p>> {
        JsonStream::array(stdout_beside(progress))
    }

    /// Starts a JSON object streamed onto stdout: the `fields` first, then
    /// the field `array`, whose elements are streamed as by
    /// [`Printer::json_array`].
    pub fn json_object_with_array<'p>(
        &self,
        fields: &[(&str, serde_json::Value)],
        array: &str,
        progress: Option<&'p Progress>,
    ) -> anyhow::Result<StdoutJson<'p>> {
        JsonStream::object_with_array(stdout_beside(progress), fields, array)
    }
}

impl Printer {
    /// A progress bar counting up to `total`, with `message` beside it, or
    /// `None` as for [`Printer::progress`]; like that line, it is drawn only
    /// once the work has run for [`PROGRESS_DELAY`].
    pub fn progress_bar(&self, total: u64, message: &str) -> Option<Progress> {
        let progress = self.progress()?;
        let template = if self.color {
            "{bar:30.cyan/blue} {pos}/{len} {msg} [{elapsed}]"
        } else {
            "{bar:30} {pos}/{len} {msg} [{elapsed}]"
        };
        if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
            progress.bar.set_style(style);
        }
        progress.bar.set_length(total);
        progress.bar.set_message(message.to_owned());
        Some(progress)
    }
}

impl Progress {
    /// Replaces the message; draws the line once the work has run for
    /// [`PROGRESS_DELAY`].
    pub fn set(&self, message: String) {
        self.bar.set_message(message);
        self.show_when_due();
    }

    /// Moves a [`Printer::progress_bar`] to `done`; draws it once the work
    /// has run for [`PROGRESS_DELAY`].
    pub fn set_position(&self, done: u64) {
        self.bar.set_position(done);
        self.show_when_due();
    }

    fn show_when_due(&self) {
        if !self.shown.get() && self.started.elapsed() >= PROGRESS_DELAY {
            self.shown.set(true);
            self.bar
                .set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
    }

    /// Runs `f` with the line taken off the terminal.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }
}

/// The line leaves the terminal when the work is over, whichever way it ends.
impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
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

/// A JSON document being streamed (see [`Printer::json_array`]); what it
/// writes is what `serde_json::to_string_pretty` writes for the whole
/// document. [`JsonStream::finish`] closes it.
pub struct JsonStream<W: Write> {
    out: W,
    /// The indentation of the array's elements.
    indent: &'static str,
    close: &'static str,
    elements: u64,
}

impl<W: Write> JsonStream<W> {
    /// A stream of a top-level array.
    pub fn array(out: W) -> anyhow::Result<JsonStream<W>> {
        JsonStream::start(out, "[", "  ", "]")
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
        JsonStream::start(out, &head, "    ", "]\n}")
    }

    fn start(
        mut out: W,
        head: &str,
        indent: &'static str,
        close: &'static str,
    ) -> anyhow::Result<JsonStream<W>> {
        out.write_all(head.as_bytes())?;
        Ok(JsonStream {
            out,
            indent,
            close,
            elements: 0,
        })
    }

    /// Writes one element of the array.
    pub fn push(&mut self, element: &impl Serialize) -> anyhow::Result<()> {
        let separator: &[u8] = if self.elements == 0 { b"\n" } else { b",\n" };
        self.out.write_all(separator)?;
        self.out.write_all(self.indent.as_bytes())?;
        let indented = Indented {
            out: &mut self.out,
            indent: self.indent.as_bytes(),
        };
        serde_json::to_writer_pretty(indented, element)?;
        self.elements += 1;
        Ok(())
    }

    /// Closes the array (and the object around it), ends the line and
    /// flushes; returns the writer.
    pub fn finish(mut self) -> anyhow::Result<W> {
        if self.elements > 0 {
            let outer = &self.indent[..self.indent.len() - 2];
            write!(self.out, "\n{outer}")?;
        }
        writeln!(self.out, "{}", self.close)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Stdout, written with a progress line (if any) taken off the terminal.
pub struct StdoutBeside<'p> {
    progress: Option<&'p Progress>,
}

impl Write for StdoutBeside<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.progress {
            Some(progress) => progress.suspend(|| std::io::stdout().write(buf)),
            None => std::io::stdout().write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stdout().flush()
    }
}

/// A writer that indents every line after the first: pretty JSON nested
/// inside a streamed document. (Pretty JSON has no raw newline inside a
/// string, so every newline starts a line.)
struct Indented<'w, W: Write> {
    out: &'w mut W,
    indent: &'w [u8],
}

impl<W: Write> Write for Indented<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for (i, line) in buf.split(|&b| b == b'\n').enumerate() {
            if i > 0 {
                self.out.write_all(b"\n")?;
                self.out.write_all(self.indent)?;
            }
            self.out.write_all(line)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            JsonStream::array(Vec::new()).unwrap()
        };
        for element in elements {
            stream.push(element).unwrap();
        }
        String::from_utf8(stream.finish().unwrap()).unwrap()
    }

    #[test]
    fn a_streamed_document_prints_as_pretty_json_would() {
        let elements = [
            serde_json::json!({"a": [1, {"b": "x\ny"}], "c": null}),
            serde_json::json!([]),
            serde_json::json!("s"),
        ];
        for count in [0, 1, 3] {
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
}
