//! What sessions watch, in the server's own words (the `wchc` four-letter
//! word), so a test can see that a waiter waits on the right node without
//! trusting zklock's account of it.

use std::collections::{BTreeMap, BTreeSet};

use super::server::ZkServer;

/// For every session of `server`, the paths it has watches on: `wchc`
/// lists each session (`0x...`) followed by its paths, one per line,
/// indented by a tab.
pub fn watches_by_session(server: &ZkServer) -> BTreeMap<i64, BTreeSet<String>> {
    let text = server.four_letter("wchc");
    let mut watches: BTreeMap<i64, BTreeSet<String>> = BTreeMap::new();
    let mut session = None;
    for line in text.lines() {
        if let Some(path) = line.strip_prefix('\t') {
            if let Some(session) = session {
                watches.entry(session).or_default().insert(path.to_owned());
            }
        } else if let Some(hex) = line.trim().strip_prefix("0x") {
            session = i64::from_str_radix(hex, 16).ok();
        }
    }
    watches
}

/// True when session `session` of `server` watches `path` (a full server
/// path, chroot included).
pub fn watches(server: &ZkServer, session: i64, path: &str) -> bool {
    watches_by_session(server)
        .get(&session)
        .is_some_and(|paths| paths.contains(path))
}
