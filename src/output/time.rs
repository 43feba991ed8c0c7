//! Times for people, in one style everywhere a person reads them: a point in
//! time is this machine's local time with its date and zone offset
//! (`2026-11-22 16:20:53 +01:00`); a span is a duration to the second
//! (`3m 12s`). Only a live stream, read as it comes, shows the bare clock
//! time (`16:20:53`) by default, to fit its lines in 80 columns. JSON carries UTC RFC 3339 times and
//! milliseconds instead (`clock::format_utc_ms`), for programs.

/// A duration for people, to the second: `3m 12s`.
pub(crate) fn format_age_ms(ms: i64) -> String {
    let secs = std::time::Duration::from_secs((ms.max(0) / 1000) as u64);
    humantime::format_duration(secs).to_string()
}

/// Milliseconds since the epoch as local time with date and zone offset, to
/// the second: `2026-11-22 16:20:53 +01:00`. Where the local zone cannot be
/// had, the time is given in UTC, written `+00:00`.
pub(crate) fn format_local_ms(ms: i64) -> String {
    let secs = ms.div_euclid(1000) as libc::time_t;
    let tm = crate::sys::local_time(secs);
    let offset = tm.tm_gmtoff;
    let sign = if offset < 0 { '-' } else { '+' };
    let offset = offset.unsigned_abs();
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02} {sign}{:02}:{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        offset / 3600,
        offset % 3600 / 60,
    )
}

/// Milliseconds since the epoch as this machine's local clock time, to the
/// second: `16:20:53`.
pub(crate) fn format_local_clock_ms(ms: i64) -> String {
    let tm = crate::sys::local_time(ms.div_euclid(1000) as libc::time_t);
    format!("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_in_time_has_a_date_and_a_zone() {
        let shown = format_local_ms(1_700_000_000_000);
        let (date, rest) = shown.split_once(' ').unwrap();
        let (clock, zone) = rest.split_once(' ').unwrap();
        assert_eq!(date.len(), 10, "{shown}");
        assert_eq!(clock.len(), 8, "{shown}");
        assert!(zone.starts_with(['+', '-']) && zone.len() == 6, "{shown}");
        assert_eq!(format_age_ms(192_400), "3m 12s");
        assert_eq!(format_local_clock_ms(1_700_000_000_000), clock);
    }
}
