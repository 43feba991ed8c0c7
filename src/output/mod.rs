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
            Format::Table => report.table().to_string(),
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

/// Formats milliseconds since the epoch as an RFC 3339 UTC time.
pub fn format_time_ms(ms: i64) -> String {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms.max(0) as u64);
    humantime::format_rfc3339_millis(time).to_string()
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
    /// A spinner with `message`, or `None` when stderr is not a terminal or
    /// `-q` was given: nothing is ever drawn into a pipe or a log.
    pub fn spinner(&self, message: &str) -> Option<Spinner> {
        if self.quiet || !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = indicatif::ProgressBar::new_spinner();
        let template = if self.color {
            "{spinner:.cyan} {msg} [{elapsed}]"
        } else {
            "{spinner} {msg} [{elapsed}]"
        };
        if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
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

/// Milliseconds since the epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
