//! The metrics of locks in the exposition formats Prometheus reads: the
//! text format (version 0.0.4, what node_exporter's textfile collector and
//! `promtool check metrics` read) and OpenMetrics 1.0 (what a scraper asks
//! for in `Accept`).
//!
//! The two differ only in how a counter's family is named, and in the
//! `# EOF` line OpenMetrics ends with; everything else (labels, escapes,
//! histograms) is written the same, by the one writer here, so `ls -o
//! prometheus` and the exporter cannot drift apart. No sample carries a
//! timestamp: the scraper stamps each scrape itself.
//!
//! Label values are lock paths, kinds and dialects only; owner hosts, users
//! and commands never become labels (each holder would make a new series).
//! A label value is the lock's path exactly, with only the escapes the
//! formats require (backslash, double quote, line feed): any other escape
//! would let two paths (one holding a control character, one holding the
//! text of its escape) become one series. A document is exact in a file, a
//! pipe or an HTTP answer; only on a terminal is it shown escaped for
//! display ([`print()`]), with a note that says so.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};

use super::Printer;
use crate::model::cycles::CycleCounts;
use crate::model::{Contender, Lock};

/// Which exposition format to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exposition {
    /// The Prometheus text format, version 0.0.4.
    Text,
    /// OpenMetrics 1.0.
    OpenMetrics,
}

impl Exposition {
    /// The HTTP `Content-Type` of a document in this format.
    pub(crate) fn content_type(self) -> &'static str {
        match self {
            Exposition::Text => "text/plain; version=0.0.4; charset=utf-8",
            Exposition::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// What a family's samples are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MetricType {
    Gauge,
    /// A counter; its name ends in `_total`.
    Counter,
    Histogram,
}

/// One metric family: its samples, all of one type, written together.
#[derive(Clone, Debug)]
pub(crate) struct Family {
    pub name: &'static str,
    pub help: &'static str,
    pub kind: MetricType,
    pub samples: Vec<Sample>,
}

/// One series of a family: its labels and its value.
#[derive(Clone, Debug)]
pub(crate) struct Sample {
    pub labels: Vec<(&'static str, String)>,
    pub value: Value,
}

/// A sample's value.
#[derive(Clone, Debug)]
pub(crate) enum Value {
    Number(f64),
    /// A histogram: the cumulative count at or below each bucket's upper
    /// bound (in increasing order, `+Inf` implied by `count`), the count
    /// and the sum of what was observed.
    Histogram {
        buckets: Vec<(f64, u64)>,
        count: u64,
        sum: f64,
    },
}

impl Family {
    /// A family with no samples yet.
    pub(crate) fn new(name: &'static str, help: &'static str, kind: MetricType) -> Family {
        Family {
            name,
            help,
            kind,
            samples: Vec::new(),
        }
    }

    /// Adds a sample of a number.
    pub(crate) fn push(&mut self, labels: Vec<(&'static str, String)>, value: f64) {
        self.samples.push(Sample {
            labels,
            value: Value::Number(value),
        });
    }
}

/// `families` as one document in `format`. A family without samples is
/// left out whole: a figure nobody can know is absent, never 0.
pub(crate) fn render(families: &[Family], format: Exposition) -> String {
    let mut out = String::new();
    for family in families.iter().filter(|f| !f.samples.is_empty()) {
        write_family(&mut out, family, format);
    }
    if format == Exposition::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

fn write_family(out: &mut String, family: &Family, format: Exposition) {
    let (kind, declared) = match (family.kind, format) {
        (MetricType::Gauge, _) => ("gauge", family.name),
        (MetricType::Histogram, _) => ("histogram", family.name),
        // OpenMetrics names a counter's family without the `_total` its
        // sample carries; the text format names the family as the sample.
        (MetricType::Counter, Exposition::OpenMetrics) => (
            "counter",
            family.name.strip_suffix("_total").unwrap_or(family.name),
        ),
        (MetricType::Counter, Exposition::Text) => ("counter", family.name),
    };
    let _ = writeln!(out, "# HELP {declared} {}", escape_help(family.help));
    let _ = writeln!(out, "# TYPE {declared} {kind}");
    for sample in &family.samples {
        match &sample.value {
            Value::Number(value) => write_sample(out, family.name, &sample.labels, None, *value),
            Value::Histogram {
                buckets,
                count,
                sum,
            } => {
                let bucket = format!("{}_bucket", family.name);
                for (bound, cumulative) in buckets {
                    let le = format_number(*bound);
                    write_sample(out, &bucket, &sample.labels, Some(&le), *cumulative as f64);
                }
                write_sample(out, &bucket, &sample.labels, Some("+Inf"), *count as f64);
                let count_name = format!("{}_count", family.name);
                write_sample(out, &count_name, &sample.labels, None, *count as f64);
                let sum_name = format!("{}_sum", family.name);
                write_sample(out, &sum_name, &sample.labels, None, *sum);
            }
        }
    }
}

fn write_sample(
    out: &mut String,
    name: &str,
    labels: &[(&'static str, String)],
    le: Option<&str>,
    value: f64,
) {
    out.push_str(name);
    let le = le.map(|le| ("le", le));
    let all = labels
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .chain(le);
    for (i, (label, text)) in all.enumerate() {
        out.push(if i == 0 { '{' } else { ',' });
        let _ = write!(out, "{label}=\"{}\"", escape_label(text));
    }
    if !labels.is_empty() || le.is_some() {
        out.push('}');
    }
    let _ = writeln!(out, " {}", format_number(value));
}

/// A number as both formats write it: integers without a fraction,
/// infinities as `+Inf`/`-Inf`.
fn format_number(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_owned()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf" } else { "-Inf" }.to_owned()
    } else {
        format!("{value}")
    }
}

/// A label value as the formats require, and no more, so that it reads
/// back as exactly `text`: backslash first (a backslash in `text` is never
/// taken for the start of an escape), then line feed and double quote.
fn escape_label(text: &str) -> String {
    escape_help(text).replace('"', "\\\"")
}

/// Help text as the formats require: backslash and line feed escaped.
fn escape_help(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

/// Writes `document` on stdout as it is; on a terminal, shown escaped for
/// display ([`super::inert`], line by line), with a note on stderr when
/// that changed anything, since a label shown so is not the lock's path.
pub(crate) fn print(document: &str, printer: &Printer) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if !out.is_terminal() {
        out.write_all(document.as_bytes())?;
        return Ok(out.flush()?);
    }
    let mut escaped = false;
    for line in document.lines() {
        let shown = super::inert(line);
        escaped |= matches!(shown, Cow::Owned(_));
        writeln!(out, "{shown}")?;
    }
    out.flush()?;
    if escaped {
        printer.note(
            "control characters in label values are shown escaped on this terminal; \
             redirect to a file or a pipe for the exact metrics",
        );
    }
    Ok(())
}

/// The per-lock gauge families, in the order they are written.
pub(crate) struct LockGauges {
    holders: Family,
    waiters: Family,
    holder_age: Family,
    oldest_wait: Family,
    disconnected: Family,
}

impl Default for LockGauges {
    fn default() -> LockGauges {
        LockGauges {
            holders: Family::new(
                "zklock_lock_holders",
                "Contenders holding the lock now.",
                MetricType::Gauge,
            ),
            waiters: Family::new(
                "zklock_lock_waiters",
                "Contenders waiting for the lock now.",
                MetricType::Gauge,
            ),
            holder_age: Family::new(
                "zklock_lock_holder_age_seconds",
                "Age of the oldest holding node, including any time it waited; absent when the \
                 lock is free.",
                MetricType::Gauge,
            ),
            oldest_wait: Family::new(
                "zklock_lock_oldest_wait_seconds",
                "Age of the oldest waiting node; absent when nobody waits.",
                MetricType::Gauge,
            ),
            disconnected: Family::new(
                "zklock_lock_disconnected_holders",
                "Holders whose session has no client connected to any ensemble member; absent \
                 when the members could not all be asked.",
                MetricType::Gauge,
            ),
        }
    }
}

/// The label set of one lock.
pub(crate) fn lock_labels(path: &str, kind: &str, dialect: &str) -> Vec<(&'static str, String)> {
    vec![
        ("lock", path.to_owned()),
        ("kind", kind.to_owned()),
        ("dialect", dialect.to_owned()),
    ]
}

/// What the gauges of one lock (or of several aggregated) say.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct LockFigures {
    pub holders: usize,
    pub waiters: usize,
    /// Age of the oldest holding node, in milliseconds.
    pub holder_age_ms: Option<i64>,
    /// Age of the oldest waiting node, in milliseconds.
    pub oldest_wait_ms: Option<i64>,
    /// Holders whose session has no connection; `None` when unknown.
    pub disconnected: Option<usize>,
}

impl LockFigures {
    /// The figures of `lock` at `now_ms` (milliseconds since the epoch):
    /// ages count from each node's ctime, as a reading then would.
    pub(crate) fn of(lock: &Lock, now_ms: i64) -> LockFigures {
        let oldest =
            |contenders: &[Contender]| contenders.iter().map(|c| now_ms - c.stat.ctime).max();
        LockFigures {
            holders: lock.holders.len(),
            waiters: lock.waiters.len(),
            holder_age_ms: oldest(&lock.holders),
            oldest_wait_ms: oldest(&lock.waiters),
            disconnected: disconnected_holders(&lock.holders),
        }
    }

    /// The figures of two groups of locks together: counts added, the
    /// oldest ages kept; disconnected holders known only when known in both.
    pub(crate) fn add(self, other: LockFigures) -> LockFigures {
        LockFigures {
            holders: self.holders + other.holders,
            waiters: self.waiters + other.waiters,
            holder_age_ms: self.holder_age_ms.max(other.holder_age_ms),
            oldest_wait_ms: self.oldest_wait_ms.max(other.oldest_wait_ms),
            disconnected: self
                .disconnected
                .zip(other.disconnected)
                .map(|(a, b)| a + b),
        }
    }
}

/// How many of `holders` have a session with no connection now; `None`
/// when the survey does not know some holder's session. A persistent node
/// (a TTL lock) has no session, so it is never disconnected.
fn disconnected_holders(holders: &[Contender]) -> Option<usize> {
    let mut count = 0;
    for holder in holders.iter().filter(|h| h.session() != 0) {
        match &holder.client {
            Some(client) if !client.connected => count += 1,
            Some(_) => {}
            None => return None,
        }
    }
    Some(count)
}

impl LockGauges {
    /// Adds the samples of the lock labelled `labels`.
    pub(crate) fn push(&mut self, labels: Vec<(&'static str, String)>, figures: LockFigures) {
        let seconds = |ms: i64| ms.max(0) as f64 / 1000.0;
        if let Some(ms) = figures.holder_age_ms {
            self.holder_age.push(labels.clone(), seconds(ms));
        }
        if let Some(ms) = figures.oldest_wait_ms {
            self.oldest_wait.push(labels.clone(), seconds(ms));
        }
        if let Some(count) = figures.disconnected {
            self.disconnected.push(labels.clone(), count as f64);
        }
        self.waiters.push(labels.clone(), figures.waiters as f64);
        self.holders.push(labels, figures.holders as f64);
    }

    /// The families, in the order they are written.
    pub(crate) fn into_families(self) -> [Family; 5] {
        [
            self.holders,
            self.waiters,
            self.holder_age,
            self.oldest_wait,
            self.disconnected,
        ]
    }
}

/// A histogram being filled: how many observations fell at or below each
/// bound, how many in all, and their sum.
#[derive(Clone, Debug)]
pub(crate) struct Histogram {
    bounds: &'static [f64],
    /// Observations per bucket (not cumulative); one more for `+Inf`.
    counts: Vec<u64>,
    sum: f64,
}

impl Histogram {
    /// An empty histogram with the upper `bounds` (increasing) of its buckets.
    pub(crate) fn new(bounds: &'static [f64]) -> Histogram {
        Histogram {
            bounds,
            counts: vec![0; bounds.len() + 1],
            sum: 0.0,
        }
    }

    pub(crate) fn observe(&mut self, value: f64) {
        let bucket = self.bounds.partition_point(|bound| *bound < value);
        self.counts[bucket] += 1;
        self.sum += value;
    }

    /// Its sample, cumulative as the formats write it.
    pub(crate) fn sample(&self, labels: Vec<(&'static str, String)>) -> Sample {
        let mut cumulative = 0;
        let buckets = self
            .bounds
            .iter()
            .zip(&self.counts)
            .map(|(bound, count)| {
                cumulative += count;
                (*bound, cumulative)
            })
            .collect();
        Sample {
            labels,
            value: Value::Histogram {
                buckets,
                count: self.counts.iter().sum(),
                sum: self.sum,
            },
        }
    }
}

// The counts are the cycle search's (`model::cycles`); the family they make
// is the format's.
impl CycleCounts {
    /// `zklock_deadlock_cycles`, one sample per value of `certain`, both
    /// always present once a search has run (0 is then a finding).
    pub(crate) fn family(self) -> Family {
        let mut family = Family::new(
            "zklock_deadlock_cycles",
            "Wait-for cycles among the locks: certain when every wait in it is proven, else \
             possible (a -w deadline, a semaphore, a session whose process zklock cannot see, \
             a detached holder).",
            MetricType::Gauge,
        );
        for (certain, count) in [("true", self.certain), ("false", self.possible)] {
            family.push(vec![("certain", certain.to_owned())], count as f64);
        }
        family
    }
}

/// `zklock_scrape_duration_seconds`: how long reading the locks took.
pub(crate) fn scrape_duration(seconds: f64) -> Family {
    let mut family = Family::new(
        "zklock_scrape_duration_seconds",
        "How long reading the locks from ZooKeeper took.",
        MetricType::Gauge,
    );
    family.push(Vec::new(), seconds);
    family
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy as _;

    #[test]
    fn label_values_cannot_break_a_line_or_a_quote() {
        let mut family = Family::new("zklock_lock_holders", "Holders.", MetricType::Gauge);
        family.push(lock_labels("/l/a\"b\\c\nd\x1b", "mutex", "curator"), 1.0);
        let text = render(&[family], Exposition::Text);
        assert_eq!(
            text,
            "# HELP zklock_lock_holders Holders.\n# TYPE zklock_lock_holders gauge\n\
             zklock_lock_holders{lock=\"/l/a\\\"b\\\\c\\nd\x1b\",kind=\"mutex\",\
             dialect=\"curator\"} 1\n"
        );
    }

    /// A label value read back as the formats define it.
    fn unescape_label(value: &str) -> String {
        let mut out = String::new();
        let mut chars = value.chars();
        while let Some(c) = chars.next() {
            out.push(match c {
                '\\' => match chars.next() {
                    Some('n') => '\n',
                    Some(escaped @ ('\\' | '"')) => escaped,
                    other => panic!("{other:?} after a backslash in {value:?}"),
                },
                c => c,
            });
        }
        out
    }

    /// Paths made of what escapes are made of: backslashes, quotes, line
    /// feeds, the text of an escape and the characters it stands for.
    fn path() -> impl proptest::strategy::Strategy<Value = String> {
        let piece = proptest::sample::select(vec![
            "\\", "\"", "\n", "n", "u", "{", "}", "202e", "\u{202e}", "\x1b", "x1b", "/", "a",
        ]);
        proptest::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]

        /// A label value reads back as its path, so two paths never share
        /// one; and it can neither end its line nor its quotes.
        #[test]
        fn a_label_value_reads_back_as_its_path(one in path(), other in path()) {
            let (a, b) = (escape_label(&one), escape_label(&other));
            proptest::prop_assert_eq!(&unescape_label(&a), &one);
            proptest::prop_assert_eq!(one == other, a == b);
            proptest::prop_assert!(!a.contains('\n'));
            proptest::prop_assert!(a.replace("\\\\", "").replace("\\\"", "").find('"').is_none());
        }

        /// Any text at all reads back as itself.
        #[test]
        fn any_label_value_reads_back(text in proptest::prelude::any::<String>()) {
            proptest::prop_assert_eq!(unescape_label(&escape_label(&text)), text);
        }
    }

    #[test]
    fn a_control_character_and_the_text_of_its_escape_are_two_series() {
        let mut family = Family::new("zklock_lock_holders", "Holders.", MetricType::Gauge);
        for path in ["/l/bi\u{202e}di", "/l/bi\\u{202e}di"] {
            family.push(lock_labels(path, "mutex", "curator"), 1.0);
        }
        let text = render(&[family], Exposition::OpenMetrics);
        assert!(text.contains("lock=\"/l/bi\u{202e}di\""), "{text}");
        assert!(text.contains("lock=\"/l/bi\\\\u{202e}di\""), "{text}");
    }

    #[test]
    fn cycle_counts_give_both_series_even_at_0() {
        let counts = CycleCounts {
            certain: 2,
            possible: 0,
        };
        let text = render(&[counts.family()], Exposition::Text);
        assert!(text.ends_with(
            "zklock_deadlock_cycles{certain=\"true\"} 2\n\
             zklock_deadlock_cycles{certain=\"false\"} 0\n"
        ));
    }

    #[test]
    fn a_histogram_counts_each_observation_in_its_bucket_and_above() {
        let mut histogram = Histogram::new(&[0.1, 1.0]);
        for value in [0.05, 0.1, 0.5, 7.0] {
            histogram.observe(value);
        }
        let Value::Histogram {
            buckets,
            count,
            sum,
        } = histogram.sample(Vec::new()).value
        else {
            panic!("not a histogram");
        };
        assert_eq!((buckets, count, sum), (vec![(0.1, 2), (1.0, 3)], 4, 7.65));
    }

    #[test]
    fn counters_and_histograms_follow_each_format() {
        let mut counter = Family::new("zklock_x_total", "X.", MetricType::Counter);
        counter.push(vec![("how", "revoked".to_owned())], 2.0);
        let mut histogram = Family::new("zklock_d_seconds", "D.", MetricType::Histogram);
        histogram.samples.push(Sample {
            labels: Vec::new(),
            value: Value::Histogram {
                buckets: vec![(0.5, 1), (1.0, 2)],
                count: 3,
                sum: 4.25,
            },
        });
        let empty = Family::new("zklock_unknown", "U.", MetricType::Gauge);
        let families = [counter, histogram, empty];
        let text = render(&families, Exposition::Text);
        assert!(
            text.contains("# TYPE zklock_x_total counter\nzklock_x_total{how=\"revoked\"} 2\n")
        );
        assert!(text.contains(
            "zklock_d_seconds_bucket{le=\"0.5\"} 1\nzklock_d_seconds_bucket{le=\"1\"} 2\n\
             zklock_d_seconds_bucket{le=\"+Inf\"} 3\nzklock_d_seconds_count 3\n\
             zklock_d_seconds_sum 4.25\n"
        ));
        assert!(!text.contains("zklock_unknown"));
        assert!(!text.contains("# EOF"));
        let open = render(&families, Exposition::OpenMetrics);
        assert!(open.contains("# TYPE zklock_x counter\nzklock_x_total{how=\"revoked\"} 2\n"));
        assert!(open.ends_with("# EOF\n"));
    }
}
