//! What the exporter knows between scrapes: the locks as the live watch
//! last showed them, the counters and histograms the watch's events feed,
//! the latest session survey, and which locks get series of their own.
//!
//! The watch task writes it after each change and the render task reads
//! it once a second; a scrape reads neither (it is served the document
//! rendered last), so a scrape costs the same however large the tree.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::model::Lock;
use crate::model::cycles::CycleCounts;
use crate::output::prometheus::{
    self, Exposition, Family, Histogram, LockFigures, LockGauges, MetricType,
};
use crate::watch::{EventKind, How, LockEvent, LockWatch, Stale};
use crate::zk::sessions::Survey;

/// The bounds of the duration histograms, in seconds: from a millisecond
/// (an uncontended handoff) to a day (a lock forgotten over a weekend shows
/// in `+Inf`).
const DURATION_BUCKETS: &[f64] = &[
    0.001, 0.005, 0.025, 0.1, 0.5, 1.0, 5.0, 30.0, 60.0, 300.0, 900.0, 3600.0, 14400.0, 86400.0,
];

/// The `lock` label of the series that add up the locks beyond
/// `--max-locks`; no lock path can be it, as every path begins with `/`.
pub(super) const OTHER_LOCKS: &str = "(other)";

/// What the exporter knows.
pub(super) struct State {
    /// The locks under the path as last taken from the watch, by path.
    locks: BTreeMap<String, Lock>,
    /// The locks changed since.
    stale: Stale,
    /// When the exporter saw each lock's hold begin (milliseconds since the
    /// epoch), by lock path; a hold under way when it began is not here.
    held_since: HashMap<String, i64>,
    acquisitions: u64,
    hold_ends: BTreeMap<How, u64>,
    hold_durations: Histogram,
    wait_durations: Histogram,
    /// The latest session survey; `None` before the first.
    survey: Option<Survey>,
    /// The wait-for cycles the latest search found; `None` before the
    /// first, when nothing is known (never 0 for that).
    cycles: Option<CycleCounts>,
    /// The locks with series of their own: once in, a lock stays in until
    /// it is gone, so its series do not come and go with contention.
    shown: BTreeSet<String>,
    max_locks: usize,
    /// Whether the current watch's session is connected; `None` while
    /// there is no watch.
    connected: Option<Arc<AtomicBool>>,
    /// When the locks were last known current.
    last_current_ms: Option<i64>,
}

impl State {
    pub(super) fn new(max_locks: usize) -> State {
        State {
            locks: BTreeMap::new(),
            stale: Stale::default(),
            held_since: HashMap::new(),
            acquisitions: 0,
            hold_ends: How::ALL.into_iter().map(|how| (how, 0)).collect(),
            hold_durations: Histogram::new(DURATION_BUCKETS),
            wait_durations: Histogram::new(DURATION_BUCKETS),
            survey: None,
            cycles: None,
            shown: BTreeSet::new(),
            max_locks,
            connected: None,
            last_current_ms: None,
        }
    }

    /// A new watch began with the events `first`: its locks replace what
    /// was known.
    pub(super) fn restart(&mut self, watch: &LockWatch, first: &[LockEvent], now_ms: i64) {
        self.connected = Some(watch.connected());
        self.stale.note(first);
        self.refresh(watch, now_ms);
        self.held_since.clear();
    }

    /// The watch ended; what was known stays served until a new one begins.
    pub(super) fn lost(&mut self) {
        self.connected = None;
    }

    pub(super) fn set_survey(&mut self, survey: Survey) {
        self.survey = Some(survey);
    }

    pub(super) fn set_cycles(&mut self, cycles: CycleCounts) {
        self.cycles = Some(cycles);
    }

    /// Counts the events of one change and notes the locks they touched,
    /// to be taken from the watch at the next [`State::refresh`].
    pub(super) fn apply(&mut self, events: &[LockEvent]) {
        for event in events {
            self.count(event);
        }
        self.stale.note(events);
    }

    /// Takes the locks that changed since the last time from the watch.
    pub(super) fn refresh(&mut self, watch: &LockWatch, now_ms: i64) {
        watch.update_copy(&mut self.locks, &mut self.stale, now_ms);
        let locks = &self.locks;
        self.held_since
            .retain(|path, _| locks.get(path).is_some_and(|l| !l.holders.is_empty()));
    }

    /// Counts one event.
    fn count(&mut self, event: &LockEvent) {
        let seconds = |ms: i64| ms.max(0) as f64 / 1000.0;
        match event.kind {
            EventKind::Acquired => {
                self.acquisitions += 1;
                if let Some(ms) = event.lasted.waited_ms {
                    self.wait_durations.observe(seconds(ms));
                }
                if event.holders == 1 {
                    self.held_since
                        .entry(event.lock.clone())
                        .or_insert(event.time_ms);
                }
            }
            EventKind::Released => {
                if let Some(ms) = event.lasted.held_ms {
                    self.hold_durations.observe(seconds(ms));
                }
                let how = event
                    .lasted
                    .how
                    .as_ref()
                    .map_or(How::Unknown, |end| end.how);
                *self.hold_ends.entry(how).or_default() += 1;
                if event.holders == 0 {
                    self.held_since.remove(&event.lock);
                }
            }
            EventKind::Gone => {
                self.held_since.remove(&event.lock);
            }
            _ => {}
        }
    }

    /// Every family as it stands at `now_ms`.
    pub(super) fn families(&mut self, now_ms: i64) -> Vec<Family> {
        let connected = self
            .connected
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::Relaxed));
        if connected {
            self.last_current_ms = Some(now_ms);
        }
        self.choose_shown();
        let mut gauges = LockGauges::default();
        let mut held = Family::new(
            "zklock_lock_held_seconds",
            "How long the lock has been held, since the exporter saw the hold begin.",
            MetricType::Gauge,
        );
        let mut other: Option<LockFigures> = None;
        let mut aggregated = 0;
        for lock in self.locks.values_mut() {
            if let Some(survey) = &self.survey {
                lock.attach_clients(survey);
            }
            let figures = LockFigures::of(lock, now_ms);
            if !self.shown.contains(&lock.path) {
                aggregated += 1;
                other = Some(other.map_or(figures, |sum| sum.add(figures)));
                continue;
            }
            let labels =
                prometheus::lock_labels(&lock.path, lock.kind.as_str(), lock.dialect.as_str());
            if let Some(since) = self.held_since.get(&lock.path) {
                held.push(labels.clone(), (now_ms - since).max(0) as f64 / 1000.0);
            }
            gauges.push(labels, figures);
        }
        if let Some(figures) = other {
            gauges.push(prometheus::lock_labels(OTHER_LOCKS, "", ""), figures);
        }
        let mut families: Vec<Family> = gauges.into_families().into();
        families.push(held);
        families.extend(self.cycles.map(CycleCounts::family));
        families.extend(self.counters());
        families.extend(self.health(connected, aggregated));
        families
    }

    /// Keeps the locks shown that are still there, and fills the free
    /// places with the most contended of the rest.
    fn choose_shown(&mut self) {
        let locks = &self.locks;
        self.shown.retain(|path| locks.contains_key(path));
        let free = self.max_locks.saturating_sub(self.shown.len());
        if free == 0 {
            return;
        }
        let mut rest: Vec<&Lock> = locks
            .values()
            .filter(|lock| !self.shown.contains(&lock.path))
            .collect();
        rest.sort_by_key(|lock| {
            (
                std::cmp::Reverse(lock.waiters.len()),
                std::cmp::Reverse(lock.holders.len()),
            )
        });
        let chosen: Vec<String> = rest.iter().take(free).map(|l| l.path.clone()).collect();
        self.shown.extend(chosen);
    }

    /// The counters and histograms the events feed.
    fn counters(&self) -> Vec<Family> {
        let mut acquisitions = Family::new(
            "zklock_acquisitions_total",
            "Holds the exporter saw begin.",
            MetricType::Counter,
        );
        acquisitions.push(Vec::new(), self.acquisitions as f64);
        let mut ends = Family::new(
            "zklock_hold_ends_total",
            "Holds the exporter saw end, by how they ended as far as a client can tell.",
            MetricType::Counter,
        );
        for (how, count) in &self.hold_ends {
            ends.push(vec![("how", how.as_str().to_owned())], *count as f64);
        }
        let mut holds = Family::new(
            "zklock_hold_duration_seconds",
            "How long holds lasted whose beginning and end the exporter saw.",
            MetricType::Histogram,
        );
        holds.samples.push(self.hold_durations.sample(Vec::new()));
        let mut waits = Family::new(
            "zklock_wait_duration_seconds",
            "How long contenders waited before they held, when the exporter saw them arrive.",
            MetricType::Histogram,
        );
        waits.samples.push(self.wait_durations.sample(Vec::new()));
        vec![acquisitions, ends, holds, waits]
    }

    /// The exporter's own health.
    fn health(&self, connected: bool, aggregated: usize) -> Vec<Family> {
        let mut up = Family::new(
            "zklock_exporter_connected",
            "1 while the exporter's session is connected and its figures current, else 0.",
            MetricType::Gauge,
        );
        up.push(Vec::new(), if connected { 1.0 } else { 0.0 });
        let mut updated = Family::new(
            "zklock_exporter_last_update_seconds",
            "When the figures were last known current, in seconds since the epoch.",
            MetricType::Gauge,
        );
        if let Some(ms) = self.last_current_ms {
            updated.push(Vec::new(), ms as f64 / 1000.0);
        }
        let mut rest = Family::new(
            "zklock_exporter_locks_aggregated",
            "Locks beyond --max-locks, whose figures are added up under lock=\"(other)\".",
            MetricType::Gauge,
        );
        rest.push(Vec::new(), aggregated as f64);
        vec![up, updated, rest]
    }
}

/// The documents a scrape is served, rendered from the families once.
pub(super) fn render(families: &[Family]) -> (String, String) {
    (
        prometheus::render(families, Exposition::Text),
        prometheus::render(families, Exposition::OpenMetrics),
    )
}
