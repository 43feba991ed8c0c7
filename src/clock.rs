//! Wall-clock time in ZooKeeper's unit: milliseconds since the Unix epoch,
//! which is how the server stamps a node's ctime and mtime. Ages are the
//! difference from [`now_ms`], so they are only as true as the clocks of
//! this machine and the server agree.

/// Milliseconds since the epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Formats milliseconds since the epoch as an RFC 3339 UTC time, the form
/// the JSON output uses.
pub fn format_utc_ms(ms: i64) -> String {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms.max(0) as u64);
    humantime::format_rfc3339_millis(time).to_string()
}
