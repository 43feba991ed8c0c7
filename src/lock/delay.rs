//! `--lock-delay`: after a hold that ended uncleanly, the next holder waits
//! before its command runs.
//!
//! A holder that cannot fence itself (a Curator or kazoo client, a process
//! paused by the kernel, a debugger or a full disk) may go on writing after
//! its session is gone and its node deleted. Nothing in ZooKeeper can stop
//! it; waiting a while before touching the resource bounds the overlap by
//! how long such a pause lasts. A clean end needs no such wait: the holder
//! let go itself, so it had finished.
//!
//! What is clean is told by the end records ([`super::end`]), which zklock
//! writes in the transaction that deletes its node, and which carry
//! forward what the records before them knew: how many deletes of the
//! directory's children they account for, and the latest end that was
//! unclean (a break, a reap, a lost hold) or unknown (a delete no record
//! tells of: a session that expired or closed, another library's release,
//! a directory made anew after the server removed it with its records).
//! ZooKeeper counts every create and delete of a child in the directory's
//! `cversion`, so one read of the directory says whether any delete went
//! unrecorded since the last record: then an end is unknown, dated when
//! it was first seen. The delay is owed until DUR after the latest unclean
//! or unknown end, not only after the last one: behind several readers, one
//! that ended uncleanly costs the delay even when the others released.
//!
//! Times are the server's: ZooKeeper's leader stamps each create with its
//! own clock (`ctime`), and a contender relates that to its own clock by
//! the moments its create was sent and answered ([`ServerClock`]). Every
//! bound leans towards waiting longer: an unknown end is dated no earlier
//! than it was seen, and a deadline on the server's clock is met on ours no
//! sooner than it passed there. A give-up (`-n`, `-w`, a signal) during
//! the delay writes its record like any end, carrying the owed end on, so
//! the next try waits only what is left: a delay is owed once, not for
//! ever.
//!
//! Every holder keeps the evidence, with the flag or without: it reads the
//! directory in the pipeline that creates its node (no round trip of its
//! own), or, after a wait, sends the read as the lock becomes its own and
//! looks at the answer only when it needs it (with the flag, before the
//! command runs; else at its end).
//!
//! A mutex's holder writes its record at the version of that read, in the
//! one round trip that deletes its node and closes its session, as a
//! release always has. A write at a version read earlier fails if anyone
//! wrote the directory since, and a failure that comes with the close
//! cannot be tried again: the session's close then removes the node with
//! no record, an unknown end. The ends most likely to come in between are
//! those of waiters behind the holder (a `-n` fleet, a `-w` running out),
//! so such a waiter, which never held, writes no record: it deletes its
//! node in a transaction that checks that the node ahead of it is still
//! there, and leaves the directory's data to the holder. The holder's
//! record, counting only the deletes it read, vouches for the rest before
//! its own as ended before it held or never held (see
//! [`super::end::DirRead::ends`]). Every other writer (a shared holder, a
//! give-up behind readers, a `--once-per` hold, a lost hold, a break, a
//! reap) reads the directory right before its write, writes at that
//! version and reads again when it changed, so that its count is exact: a
//! reader's release costs one read more, which keeps the count of several
//! readers ending at once exact, where a count off by one would make the
//! next writer wait for nothing.

use std::time::Duration;

use futures::future::BoxFuture;
use tokio::time::Instant;

use super::acquire::Patience;
use super::end::{self, DirRead, EndHow, Ending, Known, Unclean};
use super::hold::HeldLock;
use super::take::{Event, NotTaken};
use crate::run::Signals;
use crate::zk::{self, DirWrite};

/// A contender's view of the server's clock: the time the leader stamped on
/// its node's create (`ctime`), between two moments on its own clock, the
/// create's sending and its answer. Both clocks are taken to run at one
/// rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ServerClock {
    ctime_ms: i64,
    sent: Instant,
    answered: Instant,
}

impl ServerClock {
    /// The clock of a node whose create, sent at `sent` and answered at
    /// `answered`, was stamped `ctime_ms`.
    pub(crate) fn new(ctime_ms: i64, sent: Instant, answered: Instant) -> ServerClock {
        ServerClock {
            ctime_ms,
            sent,
            answered,
        }
    }

    /// The server's time at our moment `at`, or later: the create was
    /// stamped after it was sent.
    pub(crate) fn upper_ms(&self, at: Instant) -> i64 {
        let since = at.saturating_duration_since(self.sent);
        let since_ms = i64::try_from(since.as_millis()).unwrap_or(i64::MAX);
        self.ctime_ms.saturating_add(since_ms).saturating_add(1)
    }

    /// Our moment at which the server's clock reads `at_ms`, or later: the
    /// create was stamped before it was answered.
    fn local(&self, at_ms: i64) -> Instant {
        let ahead = at_ms.saturating_sub(self.ctime_ms);
        let span = Duration::from_millis(ahead.unsigned_abs());
        if ahead >= 0 {
            self.answered
                .checked_add(span)
                .unwrap_or_else(|| self.answered + FAR_FUTURE)
        } else {
            self.answered.checked_sub(span).unwrap_or(self.answered)
        }
    }
}

/// What stands for "never" on our clock: past any patience a lock command
/// accepts (durations stop at 100 years).
const FAR_FUTURE: Duration = Duration::from_secs(200 * 365 * 24 * 3600);

/// A read of the lock directory sent earlier, its answer wanted later.
pub(crate) type PendingRead = BoxFuture<'static, Result<(Vec<u8>, zk::Stat), zk::Error>>;

/// What a contender learnt on its way to holding of the ends before its
/// hold, and of its directory: judged when its lock-delay or its end
/// record needs it ([`Entry::judged`]).
pub(crate) struct Entry {
    clock: ServerClock,
    /// A mutex's node: no one else holds while it does.
    exclusive: bool,
    state: EntryState,
}

enum EntryState {
    Unjudged(Way),
    Judged(Judged),
}

/// How the lock became ours.
pub(crate) enum Way {
    /// Free on arrival: the directory as read just before our create, and
    /// its stat as listed just after (`None` when that listing failed),
    /// answered at `listed_at`.
    Arrived {
        read: Result<DirRead, zk::Error>,
        after: Option<zk::Stat>,
        listed_at: Instant,
    },
    /// After a wait: `gone` is the child name of the node ahead whose
    /// deletion made the lock ours, and `read` the read of the directory
    /// sent then.
    Waited { gone: String, read: PendingRead },
    /// A lease after a wait for room: the read of the leases' directory
    /// sent once there was.
    Room { read: PendingRead },
    /// Nothing to judge by (our node adopted after a lost answer, or a
    /// directory that keeps no record): every end before is unknown.
    Unknown,
}

/// The judgement of an [`Entry`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Judged {
    /// The latest unclean or unknown end before our hold, if any; never
    /// later than when it was judged.
    pub unclean: Option<Unclean>,
    /// The directory as last read, which an exclusive holder's record is
    /// written over.
    pub read: Option<DirRead>,
    /// How many deletes of the directory's children the judgement covers.
    pub deletes: Option<u32>,
}

impl Judged {
    /// What it knew, for a record written over another read.
    pub(crate) fn known(&self) -> Known {
        Known {
            unclean: self.unclean,
            deletes: self.deletes,
            seen_ms: None,
        }
    }
}

impl Entry {
    /// What a contender whose node's clock is `clock` learnt by `way`.
    pub(crate) fn new(clock: ServerClock, exclusive: bool, way: Way) -> Entry {
        Entry {
            clock,
            exclusive,
            state: EntryState::Unjudged(way),
        }
    }

    /// The contender's view of the server's clock.
    pub(crate) fn clock(&self) -> &ServerClock {
        &self.clock
    }

    /// The same contender, come to hold by `way`, learnt since.
    pub(crate) fn came_by(self, way: Way) -> Entry {
        Entry {
            state: EntryState::Unjudged(way),
            ..self
        }
    }

    /// How the ends before our hold went, judged once (waiting for a read
    /// sent earlier, if its answer is not in yet).
    pub(crate) async fn judged(&mut self) -> &Judged {
        if let EntryState::Unjudged(way) = &mut self.state {
            let way = std::mem::replace(way, Way::Unknown);
            let judged = judge(way, &self.clock, self.exclusive).await;
            self.state = EntryState::Judged(judged);
        }
        match &self.state {
            EntryState::Judged(judged) => judged,
            EntryState::Unjudged(_) => unreachable!("judged just now"),
        }
    }

    /// How the end of our hold at `node` (of `session`) is written in one
    /// round trip with the session's close, as `ending` says: `Some` write
    /// (or `Some(None)`, the delete alone, over an application's data) for
    /// an exclusive holder whose directory was read, at the version read;
    /// `None` when the end must read the directory first.
    pub(crate) async fn closing_write(
        &mut self,
        node: &str,
        session: i64,
        ending: &Ending,
    ) -> Option<Option<DirWrite>> {
        if !self.exclusive {
            return None;
        }
        let dir = end::directory_for(node)?;
        let judged = self.judged().await;
        let read = judged.read.as_ref()?;
        let Some(before) = read.data().into_previous() else {
            return Some(None);
        };
        let evidence = read.evidence(1, false, judged.unclean);
        let record = ending.record([(node, session)], before, evidence);
        Some(Some(read.write(dir, &record)))
    }
}

/// Judges `way` on `clock`: the latest unclean or unknown end before our
/// hold.
async fn judge(way: Way, clock: &ServerClock, exclusive: bool) -> Judged {
    let answered = |read: Result<(Vec<u8>, zk::Stat), zk::Error>| {
        let at_ms = clock.upper_ms(Instant::now());
        (read.map(|(data, stat)| DirRead { data, stat }), at_ms)
    };
    let (unclean, read, deletes) = match way {
        Way::Arrived {
            read,
            after,
            listed_at,
        } => {
            let unclean = on_arrival(&read, after.as_ref(), clock, listed_at);
            (unclean, read.ok(), after.as_ref().and_then(end::deletes))
        }
        Way::Waited { gone, read } => {
            let (read, at_ms) = answered(read.await);
            let unclean = after_wait(&read, &gone, exclusive, at_ms);
            let read = read.ok();
            let deletes = read.as_ref().and_then(DirRead::deletes);
            (unclean, read, deletes)
        }
        Way::Room { read } => {
            let (read, at_ms) = answered(read.await);
            let unclean = after_lease_wait(&read, at_ms);
            let read = read.ok();
            let deletes = read.as_ref().and_then(DirRead::deletes);
            (unclean, read, deletes)
        }
        Way::Unknown => {
            let unknown = unknown_at(clock.upper_ms(Instant::now()));
            (Some(unknown), None, None)
        }
    };
    let now_ms = clock.upper_ms(Instant::now());
    Judged {
        unclean: unclean.map(|end| Unclean {
            at_ms: end.at_ms.min(now_ms),
            ..end
        }),
        read,
        deletes,
    }
}

/// An end no record tells of, seen at `at_ms` on the server's clock.
fn unknown_at(at_ms: i64) -> Unclean {
    Unclean {
        at_ms,
        unknown: true,
    }
}

/// The latest unclean or unknown end before our node, from the directory
/// as read just before our create (`read`), its stat as listed just after
/// (`after`; `None` when that listing failed, answered at `listed_at`),
/// on our node's `clock`.
///
/// What the read proves ([`DirRead::ends`]) holds up to the read; any end
/// it leaves unaccounted for came before it, so before our create, whose
/// stamp dates it. A child deleted between the read and the listing (each
/// change of the children adds one to `cversion`, and our create one child
/// as well: the two grew alike unless a delete came between) is an end
/// seen when the listing was answered. A directory missing, new or keeping
/// no record is an unknown end: the server deletes an emptied container,
/// and its records with it.
pub(super) fn on_arrival(
    read: &Result<DirRead, zk::Error>,
    after: Option<&zk::Stat>,
    clock: &ServerClock,
    listed_at: Instant,
) -> Option<Unclean> {
    let Ok(read) = read else {
        return Some(unknown_at(clock.ctime_ms));
    };
    let ends = read.ends();
    let before = (!ends.accounted).then(|| unknown_at(clock.ctime_ms));
    let between = after
        .is_none_or(|after| {
            let grew = |of: fn(&zk::Stat) -> i32| i64::from(of(after)) - i64::from(of(&read.stat));
            grew(|stat| stat.cversion) != grew(|stat| stat.num_children)
        })
        .then(|| unknown_at(clock.upper_ms(listed_at)));
    Unclean::latest(Unclean::latest(ends.unclean, before), between)
}

/// The latest unclean or unknown end before our hold after a wait: `gone`
/// is the node ahead of us whose deletion made the lock ours, `read` the
/// directory as read after, at `read_ms` on the server's clock at the
/// latest.
///
/// What the read proves holds. Beyond it, an exclusive holder trusts the
/// record of the node it saw go when that record is an exclusive holder's
/// (which vouches for every delete before its own): after it, only nodes
/// behind us changed, which never held while we did. Anything else is an
/// end unaccounted for, dated when we read.
pub(super) fn after_wait(
    read: &Result<DirRead, zk::Error>,
    gone: &str,
    exclusive: bool,
    read_ms: i64,
) -> Option<Unclean> {
    let Ok(read) = read else {
        return Some(unknown_at(read_ms));
    };
    let ends = read.ends();
    let handed_over = exclusive && read.vouches_for(gone);
    if ends.accounted || handed_over {
        ends.unclean
    } else {
        Unclean::latest(ends.unclean, Some(unknown_at(read_ms)))
    }
}

/// The latest unclean or unknown end before our lease after a wait for
/// room, from the leases' directory as `read` once there was, at
/// `read_ms` at the latest: what the read proves, and an end unaccounted
/// for dated then.
pub(super) fn after_lease_wait(read: &Result<DirRead, zk::Error>, read_ms: i64) -> Option<Unclean> {
    match read {
        Ok(read) => {
            let ends = read.ends();
            let unaccounted = (!ends.accounted).then(|| unknown_at(read_ms));
            Unclean::latest(ends.unclean, unaccounted)
        }
        Err(_) => Some(unknown_at(read_ms)),
    }
}

/// How the ends before one of our holds went, for the lock-delay: the
/// latest unclean or unknown one and the clock to meet it on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LastEnd {
    pub unclean: Option<Unclean>,
    pub clock: ServerClock,
}

/// What holds the locks back: the lock whose delay ends last, when, and
/// whether its end is unknown (rather than known unclean).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Owed<'a> {
    pub until: Instant,
    pub lock: &'a str,
    pub unknown: bool,
}

/// When the delay after `ends` (the ends before each of our holds) is
/// over; `None` when no end was unclean or unknown.
pub(super) fn until(ends: &[(String, LastEnd)], delay: Duration) -> Option<Owed<'_>> {
    let delay_ms = i64::try_from(delay.as_millis()).unwrap_or(i64::MAX);
    ends.iter()
        .filter_map(|(lock, end)| {
            let unclean = end.unclean?;
            Some(Owed {
                until: end.clock.local(unclean.at_ms.saturating_add(delay_ms)),
                lock: lock.as_str(),
                unknown: unclean.unknown,
            })
        })
        .max_by_key(|owed| owed.until)
}

/// Waits until `owed.until` (the delay after `owed.lock`'s unclean or
/// unknown end) with the locks held, watching them for loss all the while,
/// within `patience`: a delay that would outlast it gives up at once, as
/// does `-n` when one is pending. `margin` is the time a command's stop
/// takes, which a loss must leave room for, as while the command runs.
///
/// Giving up, the locks are let go with the records of a give-up, which
/// carry the owed end on: the next holder waits only what is left of its
/// own delay after it.
pub(super) async fn sit_out(
    lock: HeldLock,
    owed: Owed<'_>,
    patience: Patience,
    margin: Duration,
    (events, signals): (&impl Fn(Event<'_>), &mut Signals),
) -> Result<HeldLock, NotTaken> {
    let started = Instant::now();
    let left = owed.until.saturating_duration_since(started);
    if left.is_zero() {
        return Ok(lock);
    }
    let out_of_time = match patience {
        Patience::NoWait => true,
        Patience::Until(deadline) => deadline < owed.until,
        Patience::Forever => false,
    };
    let delayed = Delayed {
        lock: owed.lock.to_owned(),
        left,
        unknown: owed.unknown,
    };
    if out_of_time {
        let _ = lock.release(EndHow::GaveUp).await;
        return Err(NotTaken::Delayed(delayed));
    }
    tracing::info!(
        event = "lock_delay",
        lock = %owed.lock,
        "{}: waiting {} before the command runs",
        delayed.why(),
        humantime::format_duration(round_ms(left))
    );
    events(Event::Delaying(&delayed));
    let ended = tokio::select! {
        () = tokio::time::sleep_until(owed.until) => None,
        (held, loss) = lock.lost(margin) => Some(NotTaken::Lost { held: held.clone(), loss }),
        signal = signals.next() => Some(NotTaken::Interrupted(signal)),
    };
    events(Event::Waited);
    match ended {
        None => Ok(lock.delayed_for(round_ms(started.elapsed()))),
        Some(not_taken) => {
            let _ = lock.release(EndHow::GaveUp).await;
            Err(not_taken)
        }
    }
}

/// A lock-delay that holds the locks back: which lock's, how much is
/// left, and whether the end it follows is unknown (no record tells how it
/// ended) or known to be unclean.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Delayed {
    pub lock: String,
    pub left: Duration,
    pub unknown: bool,
}

impl Delayed {
    /// Why, for people.
    pub(crate) fn why(&self) -> String {
        let lock = &self.lock;
        match self.unknown {
            true => format!("how an earlier hold of {lock} ended is unknown"),
            false => format!("an earlier hold of {lock} ended uncleanly"),
        }
    }
}

/// `duration` to the millisecond, as it is shown and passed on.
pub(crate) fn round_ms(duration: Duration) -> Duration {
    Duration::from_millis(duration.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::end::Evidence;
    use crate::lock::end::tests::{dir_stat, ending, read, record_bytes};

    /// A clock whose create was stamped 10,000 and sent and answered at
    /// `at`.
    fn clock(at: Instant) -> ServerClock {
        ServerClock::new(10_000, at, at)
    }

    fn unclean(at_ms: i64, unknown: bool) -> Option<Unclean> {
        Some(Unclean { at_ms, unknown })
    }

    fn counted(deletes: u32, exact: bool, unclean: Option<Unclean>) -> Option<Evidence> {
        Some(Evidence {
            deletes,
            exact,
            unclean,
        })
    }

    #[test]
    fn the_servers_clock_is_met_no_sooner_than_it_reads_so() {
        let sent = Instant::now();
        let answered = sent + Duration::from_millis(4);
        let clock = ServerClock::new(10_000, sent, answered);
        // 20 ms after sending, the server reads at most 10,021.
        assert_eq!(clock.upper_ms(sent + Duration::from_millis(20)), 10_021);
        // It reads 10,500 no sooner than 500 ms after the answer.
        assert_eq!(clock.local(10_500), answered + Duration::from_millis(500));
        assert_eq!(clock.local(9_998), answered - Duration::from_millis(2));
        // Values from a record, however large, do not overflow.
        assert!(clock.local(i64::MAX) > answered + Duration::from_secs(100 * 365 * 86_400));
        let _ = clock.local(i64::MIN);
    }

    #[test]
    fn a_free_lock_is_clean_only_when_every_end_is_accounted_for() {
        let now = Instant::now();
        let clock = clock(now);
        let node = "/l/lock-0000000003";
        let released = record_bytes(EndHow::Released, node, counted(2, true, None));
        let ok = |data: &[u8], stat| Ok(read(data, stat));
        // Two deletes, both counted; our create alone came between the
        // readings (and a contender behind us).
        let before = dir_stat(4, 0, (9, 9));
        for after in [dir_stat(5, 1, (10, 9)), dir_stat(6, 2, (11, 9))] {
            assert_eq!(
                on_arrival(&ok(&released, before), Some(&after), &clock, now),
                None
            );
        }
        // A child deleted between the readings: an end seen at the listing.
        let seen = clock.upper_ms(now);
        assert_eq!(
            on_arrival(
                &ok(&released, dir_stat(4, 1, (9, 9))),
                Some(&dir_stat(6, 1, (10, 9))),
                &clock,
                now
            ),
            unclean(seen, true)
        );
        // A delete the records do not count (a session that expired after
        // the release): unknown, before our create.
        assert_eq!(
            on_arrival(
                &ok(&released, dir_stat(6, 0, (12, 9))),
                Some(&dir_stat(7, 1, (13, 9))),
                &clock,
                now
            ),
            unclean(10_000, true)
        );
        // A break or a reap, counted: unclean when the record was written.
        for how in [EndHow::Broken, EndHow::Reaped, EndHow::Lost] {
            let data = record_bytes(how, node, counted(2, true, None));
            assert_eq!(
                on_arrival(
                    &ok(&data, before),
                    Some(&dir_stat(5, 1, (10, 9))),
                    &clock,
                    now
                ),
                unclean(9_000, false)
            );
        }
        // No record, a directory missing, a listing that failed.
        assert_eq!(
            on_arrival(
                &ok(b"", dir_stat(0, 0, (3, 3))),
                Some(&dir_stat(1, 1, (4, 3))),
                &clock,
                now
            ),
            unclean(10_000, true)
        );
        // Nor one zklock made (again) persistent, whose record names no
        // node and keeps no evidence.
        let mut made = ending(EndHow::Released, None).record([], None, None);
        made.made_persistent = true;
        assert_eq!(
            on_arrival(
                &ok(&made.to_bytes(), dir_stat(0, 0, (3, 3))),
                Some(&dir_stat(1, 1, (4, 3))),
                &clock,
                now
            ),
            unclean(10_000, true)
        );
        let missing = Err(zk::Error::no_node("get", "/l"));
        assert_eq!(
            on_arrival(&missing, None, &clock, now),
            unclean(10_000, true)
        );
        assert_eq!(
            on_arrival(&ok(&released, before), None, &clock, now),
            unclean(seen, true)
        );
    }

    #[test]
    fn behind_several_readers_one_end_unaccounted_for_is_owed() {
        let now = Instant::now();
        let clock = clock(now);
        // Three readers deleted, the last with a clean record that counts
        // only two: one ended unseen.
        let released = record_bytes(
            EndHow::Released,
            "/l/__READ__0000000005",
            counted(2, true, None),
        );
        let after = dir_stat(7, 1, (30, 20));
        assert_eq!(
            on_arrival(
                &Ok(read(&released, dir_stat(6, 0, (21, 20)))),
                Some(&after),
                &clock,
                now
            ),
            unclean(10_000, true)
        );
        // Its end carried on by the clean records after it, still owed.
        let carried = record_bytes(
            EndHow::Released,
            "/l/__READ__0000000006",
            counted(3, true, unclean(8_000, true)),
        );
        assert_eq!(
            on_arrival(
                &Ok(read(&carried, dir_stat(6, 0, (21, 21)))),
                Some(&after),
                &clock,
                now
            ),
            unclean(8_000, true)
        );
    }

    #[test]
    fn a_handoff_trusts_the_record_of_the_exclusive_holder_that_went() {
        let gone = "_c_x-lock-0000000003";
        let claim = record_bytes(
            EndHow::Released,
            &format!("/l/{gone}"),
            counted(1, false, unclean(50, true)),
        );
        // Waiters behind us changed the directory since: the holder's
        // record still vouches for the ends before its own.
        let changed = Ok(read(&claim, dir_stat(9, 2, (40, 30))));
        assert_eq!(after_wait(&changed, gone, true, 900), unclean(50, true));
        // Not for a shared holder, nor for a node it does not name.
        assert_eq!(after_wait(&changed, gone, false, 900), unclean(900, true));
        assert_eq!(
            after_wait(&changed, "_c_x-lock-0000000002", true, 900),
            unclean(900, true)
        );
        // Nothing to read: unknown.
        let missing = Err(zk::Error::no_node("get", "/l"));
        assert_eq!(after_wait(&missing, gone, true, 900), unclean(900, true));
    }

    #[test]
    fn a_lease_after_a_wait_is_clean_when_every_lease_that_went_is_counted() {
        let released = record_bytes(
            EndHow::Released,
            "/s/leases/_c_1-lease-0000000003",
            counted(3, true, None),
        );
        assert_eq!(
            after_lease_wait(&Ok(read(&released, dir_stat(8, 2, (9, 9)))), 70),
            None
        );
        assert_eq!(
            after_lease_wait(&Ok(read(&released, dir_stat(10, 2, (10, 9)))), 70),
            unclean(70, true)
        );
    }

    #[tokio::test]
    async fn an_end_ahead_of_the_servers_time_counts_as_now() {
        let now = Instant::now();
        let forged = record_bytes(
            EndHow::Broken,
            "/l/lock-0000000001",
            counted(1, true, unclean(i64::MAX, false)),
        );
        let way = Way::Arrived {
            read: Ok(read(&forged, dir_stat(2, 0, (5, 5)))),
            after: Some(dir_stat(3, 1, (6, 5))),
            listed_at: now,
        };
        let mut entry = Entry::new(clock(now), true, way);
        let judged = entry.judged().await.clone();
        let end = judged.unclean.unwrap();
        assert!(end.at_ms <= clock(now).upper_ms(Instant::now()), "{end:?}");
        // It is the directory read that the record is written over.
        assert_eq!(judged.read.unwrap().stat.cversion, 2);
    }

    #[test]
    fn the_delay_ends_after_the_latest_unclean_end() {
        let now = Instant::now();
        let delay = Duration::from_secs(10);
        let end = |at_ms, unknown| LastEnd {
            unclean: unclean(at_ms, unknown),
            clock: clock(now),
        };
        let ends = [
            ("/a".to_owned(), end(10_000, false)),
            (
                "/b".to_owned(),
                LastEnd {
                    unclean: None,
                    clock: clock(now),
                },
            ),
            ("/c".to_owned(), end(12_000, true)),
        ];
        assert_eq!(
            until(&ends, delay),
            Some(Owed {
                until: now + Duration::from_secs(12),
                lock: "/c",
                unknown: true,
            })
        );
        assert_eq!(until(&ends[1..2], delay), None);
        // An end long past owes nothing more.
        assert!(
            until(&[("/d".to_owned(), end(0, false))], delay)
                .unwrap()
                .until
                <= now
        );
    }
}
