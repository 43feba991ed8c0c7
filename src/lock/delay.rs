//! `--lock-delay`: after a hold that ended uncleanly, the next holder waits
//! before its command runs.
//!
//! A holder that cannot fence itself (a Curator or kazoo client, a process
//! paused by the kernel, a debugger or a full disk) may go on writing after
//! its session is gone and its node deleted. Nothing in ZooKeeper can stop
//! it; waiting a while before touching the resource bounds the overlap by
//! how long such a pause lasts. A clean end needs no such wait: the holder
//! let go itself, so it had finished. Which is which is told by the end
//! record ([`super::end`]), which zklock writes in the transaction that
//! deletes its node: a deletion without one (a session that expired or
//! closed, another library's release) is unclean, and so are a break and a
//! reap, which ended a hold its owner did not finish.
//!
//! The judgement costs no round trip on arrival at a free lock: the
//! directory is read in the pipeline that creates our node and lists the
//! queue, before the create. After a wait, the one read of the directory
//! once the node ahead of us went tells whether it left cleanly.

use std::time::Duration;

use tokio::time::Instant;

use super::acquire::Patience;
use super::end::{EndHow, EndRecord};
use super::hold::HeldLock;
use super::take::{Event, NotTaken};
use crate::run::Signals;
use crate::zk::{self, path};

/// How the hold before ours ended, as far as a contender can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LastEnd {
    /// Its holder let go itself (or there was no hold before ours).
    Clean,
    /// It ended uncleanly, no later than this moment: the delay counts
    /// from here.
    Unclean(Instant),
}

/// True for the ends only a holder makes (a waiter gives up, it never
/// releases).
fn ends_a_hold(how: EndHow) -> bool {
    matches!(how, EndHow::Released | EndHow::MaxHold)
}

/// The last end before our node, from the directory as read just before
/// our create (`read`), its stat
/// as listed just after (`after`; `None` when that listing failed), and
/// when we arrived.
///
/// Clean only when no child was deleted between the two readings (each
/// change of the children adds one to `cversion`, and a create one child
/// as well: the two grew alike), and the last change of the children
/// before the first was the transaction of a clean end record (the
/// directory's `pzxid` is its `mzxid`). Anything else (a crashed holder's
/// session expiring, another library's delete, a change between the
/// readings) is an unclean end at a moment we cannot know: the delay counts
/// from our arrival. So is a directory with no record at all, missing or
/// new: the server deletes an emptied container directory, and its record
/// with it, so a lock that looks never held may have ended uncleanly.
pub(super) fn on_arrival(
    read: &Result<(Vec<u8>, zk::Stat), zk::Error>,
    after: Option<&zk::Stat>,
    arrived: Instant,
) -> LastEnd {
    let clean = match (read, after) {
        (Ok((data, before)), Some(after)) => {
            after.cversion - before.cversion == after.num_children - before.num_children
                && last_change_was_clean(data, before)
        }
        _ => false,
    };
    if clean {
        LastEnd::Clean
    } else {
        LastEnd::Unclean(arrived)
    }
}

/// True when the last change of the children of the directory whose
/// `data` and `stat` these are was the transaction of a clean end record.
/// A record that names no node speaks of no end: the one a `--once-per`
/// directory is made with, whose create leaves `pzxid` at `mzxid` too, tells
/// nothing of the hold before (a removed container's, say).
fn last_change_was_clean(data: &[u8], stat: &zk::Stat) -> bool {
    stat.pzxid == stat.mzxid
        && EndRecord::parse(data)
            .is_some_and(|record| record.how.is_clean() && !record.nodes.is_empty())
}

/// The last end before our lease after a wait for room, from the leases'
/// directory as `read` once there was: only the holder of the semaphore's
/// mutex (we, then) adds a lease, so the last change of the leases was an
/// end, clean when it wrote a clean record; otherwise unclean, from when
/// the room was `seen`.
pub(super) fn after_lease_wait(
    read: &Result<(Vec<u8>, zk::Stat), zk::Error>,
    seen: Instant,
) -> LastEnd {
    match read {
        Ok((data, stat)) if last_change_was_clean(data, stat) => LastEnd::Clean,
        _ => LastEnd::Unclean(seen),
    }
}

/// The last end before our node after a wait: `gone` is the node ahead of
/// us whose deletion made the lock ours, seen at `seen`; `alone` is false
/// when other nodes ahead went unseen meanwhile, so that `gone` may have
/// been a waiter and one of them the holder; `data` is the directory's, read
/// after `gone` went.
///
/// Clean when the record there names `gone` as ending cleanly: as a
/// release (only a holder releases), or, when it was alone ahead, in any
/// clean way. A record of anything else (a later end, another node) proves
/// nothing of `gone`, and its end counts as unclean from when we saw it.
pub(super) fn after_wait(data: Option<&[u8]>, gone: &str, alone: bool, seen: Instant) -> LastEnd {
    let name = path::basename(gone);
    let clean = data
        .and_then(EndRecord::parse)
        .filter(|record| record.nodes.iter().any(|ended| ended.node == name))
        .is_some_and(|record| record.how.is_clean() && (alone || ends_a_hold(record.how)));
    if clean {
        LastEnd::Clean
    } else {
        LastEnd::Unclean(seen)
    }
}

/// When the delay after `ends` (the last end before each of our nodes) is
/// over; `None` when every one was clean.
pub(super) fn until(ends: &[(String, LastEnd)], delay: Duration) -> Option<(Instant, &str)> {
    ends.iter()
        .filter_map(|(lock, end)| match end {
            LastEnd::Unclean(at) => Some((*at + delay, lock.as_str())),
            LastEnd::Clean => None,
        })
        .max_by_key(|(until, _)| *until)
}

/// Waits until `until` (the delay after `lock`'s unclean end) with the
/// locks held, watching them for loss all the while, within `patience`:
/// a delay that would outlast it gives up at once, as does `-n` when one
/// is pending. `margin` is the time a command's stop takes, which a loss
/// must leave room for, as while the command runs.
///
/// Giving up, the session is closed without an end record: the delay owed
/// to the unclean end is then owed by the next holder, which finds no
/// record of ours and counts its own delay from our end.
pub(super) async fn sit_out(
    lock: HeldLock,
    (until, delayed_lock): (Instant, &str),
    patience: Patience,
    margin: Duration,
    (events, signals): (&impl Fn(Event<'_>), &mut Signals),
) -> Result<HeldLock, NotTaken> {
    let started = Instant::now();
    let left = until.saturating_duration_since(started);
    if left.is_zero() {
        return Ok(lock);
    }
    let out_of_time = match patience {
        Patience::NoWait => true,
        Patience::Until(deadline) => deadline < until,
        Patience::Forever => false,
    };
    if out_of_time {
        lock.leave().await;
        return Err(NotTaken::Delayed {
            lock: delayed_lock.to_owned(),
            left,
        });
    }
    tracing::info!(
        event = "lock_delay",
        lock = %delayed_lock,
        "the last hold of {delayed_lock} ended uncleanly: waiting {} before the command runs",
        humantime::format_duration(round_ms(left))
    );
    events(Event::Delaying(delayed_lock, left));
    let ended = tokio::select! {
        () = tokio::time::sleep_until(until) => None,
        (held, loss) = lock.lost(margin) => Some(NotTaken::Lost { held: held.clone(), loss }),
        signal = signals.next() => Some(NotTaken::Interrupted(signal)),
    };
    events(Event::Waited);
    match ended {
        None => Ok(lock.delayed_for(round_ms(started.elapsed()))),
        Some(lost @ NotTaken::Lost { .. }) => {
            let _ = lock.release(EndHow::GaveUp).await;
            Err(lost)
        }
        Some(not_taken) => {
            lock.leave().await;
            Err(not_taken)
        }
    }
}

/// `duration` to the millisecond, as it is shown and passed on.
fn round_ms(duration: Duration) -> Duration {
    Duration::from_millis(duration.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::end::{Ender, Ending};

    fn record(how: EndHow, node: &str) -> Vec<u8> {
        let by = Ender {
            user: "u".into(),
            host: "h".into(),
            pid: 1,
        };
        Ending::new(how, by).record([(node, 7)])
    }

    /// A directory's stat with `cversion` changes of its children so far,
    /// `children` of them, the last at `pzxid`, and its data written at
    /// `mzxid`.
    fn stat(cversion: i32, children: i32, pzxid: i64, mzxid: i64) -> zk::Stat {
        zk::Stat {
            cversion,
            num_children: children,
            pzxid,
            mzxid,
            ..zk::test_stat(1, 0)
        }
    }

    #[test]
    fn a_free_lock_is_clean_only_after_a_clean_end_record_and_nothing_since() {
        let now = Instant::now();
        let released = record(EndHow::Released, "/l/lock-0000000003");
        let read = |data: &[u8], s| Ok((data.to_vec(), s));
        // Our create alone came between the readings.
        let ours = stat(5, 1, 10, 9);
        assert_eq!(
            on_arrival(&read(&released, stat(4, 0, 9, 9)), Some(&ours), now),
            LastEnd::Clean
        );
        // And a contender behind us.
        assert_eq!(
            on_arrival(
                &read(&released, stat(4, 0, 9, 9)),
                Some(&stat(6, 2, 11, 9)),
                now
            ),
            LastEnd::Clean
        );
        // A child deleted between the readings: an end we did not see.
        assert_eq!(
            on_arrival(&read(&released, stat(4, 1, 9, 9)), Some(&ours), now),
            LastEnd::Unclean(now)
        );
        // The last child change was not the record's transaction (a session
        // that expired after the release).
        assert_eq!(
            on_arrival(&read(&released, stat(4, 0, 12, 9)), Some(&ours), now),
            LastEnd::Unclean(now)
        );
        for how in [EndHow::Broken, EndHow::Reaped] {
            let data = record(how, "/l/lock-0000000003");
            assert_eq!(
                on_arrival(&read(&data, stat(4, 0, 9, 9)), Some(&ours), now),
                LastEnd::Unclean(now)
            );
        }
        assert_eq!(
            on_arrival(&read(b"", stat(4, 0, 9, 9)), Some(&ours), now),
            LastEnd::Unclean(now)
        );
        assert_eq!(
            on_arrival(&read(&released, stat(4, 0, 9, 9)), None, now),
            LastEnd::Unclean(now)
        );
        // A directory that never had a child, or none at all: the server
        // may have deleted it emptied, with its record.
        assert_eq!(
            on_arrival(&read(b"", stat(0, 0, 3, 3)), Some(&stat(1, 1, 4, 3)), now),
            LastEnd::Unclean(now)
        );
        // Nor one --once-per made (again) with a record that names no node.
        let made = Ending::new(EndHow::Released, Ender::of_this_process()).record([]);
        assert_eq!(
            on_arrival(&read(&made, stat(0, 0, 3, 3)), Some(&stat(1, 1, 4, 3)), now),
            LastEnd::Unclean(now)
        );
        let missing = Err(zk::Error::no_node("get", "/l"));
        assert_eq!(
            on_arrival(&missing, Some(&stat(1, 1, 4, 3)), now),
            LastEnd::Unclean(now)
        );
    }

    #[test]
    fn a_handoff_is_clean_only_when_the_record_names_the_node_that_went() {
        let now = Instant::now();
        let gone = "/l/lock-0000000003";
        let released = record(EndHow::Released, gone);
        let gave_up = record(EndHow::GaveUp, gone);
        assert_eq!(
            after_wait(Some(&released), gone, false, now),
            LastEnd::Clean
        );
        assert_eq!(after_wait(Some(&gave_up), gone, true, now), LastEnd::Clean);
        // Others ahead went too: the one that gave up may have been a
        // waiter, and the holder one of them.
        assert_eq!(
            after_wait(Some(&gave_up), gone, false, now),
            LastEnd::Unclean(now)
        );
        let other = record(EndHow::Released, "/l/lock-0000000002");
        assert_eq!(
            after_wait(Some(&other), gone, true, now),
            LastEnd::Unclean(now)
        );
        let broken = record(EndHow::Broken, gone);
        assert_eq!(
            after_wait(Some(&broken), gone, true, now),
            LastEnd::Unclean(now)
        );
        assert_eq!(after_wait(None, gone, true, now), LastEnd::Unclean(now));
    }

    #[test]
    fn a_lease_after_a_wait_is_clean_when_the_last_lease_to_go_wrote_a_clean_record() {
        let now = Instant::now();
        let released = record(EndHow::Released, "/s/leases/_c_1-lease-0000000003");
        let read = |s| Ok((released.clone(), s));
        assert_eq!(
            after_lease_wait(&read(stat(8, 2, 9, 9)), now),
            LastEnd::Clean
        );
        assert_eq!(
            after_lease_wait(&read(stat(8, 2, 10, 9)), now),
            LastEnd::Unclean(now)
        );
    }

    #[test]
    fn the_delay_ends_after_the_latest_unclean_end() {
        let now = Instant::now();
        let delay = Duration::from_secs(10);
        let ends = [
            ("/a".to_owned(), LastEnd::Unclean(now)),
            ("/b".to_owned(), LastEnd::Clean),
            (
                "/c".to_owned(),
                LastEnd::Unclean(now + Duration::from_secs(2)),
            ),
        ];
        assert_eq!(
            until(&ends, delay),
            Some((now + Duration::from_secs(12), "/c"))
        );
        assert_eq!(until(&ends[1..2], delay), None);
    }
}
