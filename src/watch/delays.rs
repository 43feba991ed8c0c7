//! The `lock_delay` event: a holder that keeps `--lock-delay` took a lock
//! whose hold before ended uncleanly, so its command waits.
//!
//! The watch sees the same evidence the holder judges by: how the hold
//! before ended (from its end record, else from what the session survey
//! tells), and the delay the new holder's owner record states. A hold
//! that ended before the watch began, or in a gap, is not known, and no
//! event is made for what follows it.

use std::collections::HashMap;

use crate::lock::Owner;
use crate::lock::end::EndHow;

use super::events::{EventKind, How, LockEvent};

/// How the last hold of each lock ended, as far as the watch saw: `true`
/// when uncleanly.
#[derive(Default)]
pub(super) struct Delays {
    unclean: HashMap<String, bool>,
}

impl Delays {
    /// `events` (one change, in order, with how each hold ended), with a
    /// `lock_delay` event after each `acquired` of a holder that keeps a
    /// lock-delay, when the hold before it ended uncleanly.
    pub(super) fn mark(&mut self, events: Vec<LockEvent>) -> Vec<LockEvent> {
        let mut marked = Vec::with_capacity(events.len());
        for event in events {
            let delayed = match event.kind {
                EventKind::Released => {
                    let how = event.lasted.how.as_ref().map(|end| end.how);
                    self.unclean.insert(event.lock.clone(), !is_clean(how));
                    None
                }
                EventKind::Gone | EventKind::Gap | EventKind::Watching => {
                    self.unclean.clear();
                    None
                }
                EventKind::Acquired
                    if self.unclean.get(&event.lock) == Some(&true)
                        && lock_delay_ms(&event).is_some() =>
                {
                    Some(LockEvent {
                        kind: EventKind::LockDelay,
                        lasted: Default::default(),
                        ..event.clone()
                    })
                }
                _ => None,
            };
            marked.push(event);
            marked.extend(delayed);
        }
        marked
    }
}

/// True for the ends a zklock holder makes itself, known by its record.
fn is_clean(how: Option<How>) -> bool {
    how.and_then(How::recorded).is_some_and(EndHow::is_clean)
}

/// The lock-delay the contender of `event` keeps, in milliseconds, from its
/// owner record.
pub(crate) fn lock_delay_ms(event: &LockEvent) -> Option<u64> {
    let contender = event.contender.as_ref()?;
    Owner::parse(&contender.data)?.lock_delay_ms
}
