//! Each lock's summary: how many holds, their hold and wait times at the
//! 50th and 99th percentiles and at most, and how many ended uncleanly.
//!
//! Percentiles come from a histogram, not from every duration kept: its
//! buckets are exact below 1,024 ms and within 0.2% above, and it grows
//! with the number of distinct buckets used (a few hundred at most), not
//! with the number of holds, as the replay must.

use std::collections::BTreeMap;

use super::replay::Hold;

/// Durations in ms, counted in buckets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Durations {
    buckets: BTreeMap<u32, u64>,
    count: u64,
    max: i64,
}

/// Below this a bucket holds one value; above, the top ten bits of one.
const EXACT: u64 = 1 << 10;

fn bucket(ms: i64) -> u32 {
    let ms = ms.max(0) as u64;
    if ms < EXACT {
        return ms as u32;
    }
    let shift = 63 - ms.leading_zeros() - 9;
    (shift << 10) + (ms >> shift) as u32
}

/// The smallest value of a bucket.
fn low(bucket: u32) -> i64 {
    let shift = bucket >> 10;
    if shift == 0 {
        return i64::from(bucket);
    }
    i64::from(bucket & 1023) << shift
}

impl Durations {
    pub(crate) fn add(&mut self, ms: i64) {
        *self.buckets.entry(bucket(ms)).or_default() += 1;
        self.count += 1;
        self.max = self.max.max(ms);
    }

    /// The `q`-th quantile (0 to 1): the smallest counted value that at
    /// least `q` of the values are at or below; `None` with none counted.
    pub(crate) fn quantile(&self, q: f64) -> Option<i64> {
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count.max(1));
        let mut seen = 0;
        for (&bucket, &n) in &self.buckets {
            seen += n;
            if seen >= rank {
                return Some(low(bucket).min(self.max));
            }
        }
        None
    }

    pub(crate) fn max(&self) -> Option<i64> {
        (self.count > 0).then_some(self.max)
    }
}

/// One lock's summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LockSummary {
    /// Every contender shown.
    pub contenders: u64,
    /// How long each hold lasted, of those that ended.
    pub held: Durations,
    /// How long each contender waited, of those whose wait ended.
    pub waited: Durations,
    /// Holds that began (ended or not).
    pub holds: u64,
    /// Holds that ended otherwise than by their own release.
    pub unclean: u64,
}

impl LockSummary {
    pub(crate) fn count(&mut self, hold: &Hold) {
        self.contenders += 1;
        if hold.holding_ms.is_some() {
            self.holds += 1;
        }
        if let Some(ms) = hold.held_ms() {
            self.held.add(ms);
        }
        if let Some(ms) = hold.waited_ms() {
            self.waited.add(ms);
        }
        if hold.holding_ms.is_some() && hold.end.as_ref().is_some_and(|end| !end.how.is_clean()) {
            self.unclean += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_exact_below_a_second_and_close_above() {
        let mut durations = Durations::default();
        for ms in 1..=100 {
            durations.add(ms);
        }
        assert_eq!(durations.quantile(0.5), Some(50));
        assert_eq!(durations.quantile(0.99), Some(99));
        assert_eq!(durations.max(), Some(100));
        let mut long = Durations::default();
        for ms in [10_000, 20_000, 3_600_123] {
            long.add(ms);
        }
        let p50 = long.quantile(0.5).unwrap();
        assert!((19_960..=20_000).contains(&p50), "{p50}");
        assert_eq!(long.max(), Some(3_600_123));
        assert_eq!(Durations::default().quantile(0.5), None);
    }

    #[test]
    fn buckets_keep_their_order() {
        let mut last = 0;
        for ms in (0..5_000_000).step_by(997) {
            let b = bucket(ms);
            assert!(b >= last, "{ms}");
            assert!(low(b) <= ms && ms - low(b) <= ms / 500, "{ms}: {}", low(b));
            last = b;
        }
    }
}
