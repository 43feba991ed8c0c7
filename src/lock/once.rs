//! `--once-per`: a command that runs at most once per window across every
//! contender of its lock, on the server's clock.
//!
//! Hosts' clocks disagree, so no local clock may open a window: a client
//! sees the leader's clock only in the `mtime` and `ctime` the leader
//! stamps on what it writes. A holder learns "now" by writing the lock
//! directory's data back unchanged, at the version it read: the stat of
//! that write carries the leader's time of the moment it holds (its own
//! node's `ctime` is as old as its wait). The last counted run lives in the
//! end record, which every end writes over the record before it, keeping
//! its run (a `--once-per` hold's end the later of that and its own), at
//! the version it read, so that no give-up, failed run or break forgets
//! the window.
//!
//! The record lasts only as long as its directory, and the server removes
//! a container directory once it is idle, record and all: the window would
//! open again a minute after the last run. No client can tell a container
//! from a persistent node (the server shows both with `ephemeralOwner` 0),
//! and a mark in a child node would break go-zookeeper's lock, which fails
//! on a child name it cannot parse. So the window is kept only in a
//! directory zklock made persistent itself (for `--once-per`, or for
//! `--lock-delay`, which makes a missing one the same way) and marked so in
//! its end record, which every end record after carries on
//! ([`claim_directory`]): an unmarked one is made again, persistent and
//! marked, when nothing is lost by it (no child, no data but an end record,
//! whose run the new one keeps); any other is refused.
//!
//! A recorded run is believed only up to the window's length ahead of the
//! server's clock: a new leader's clock may lag the old one's by a little,
//! but a run further ahead was forged or stamped by a clock that jumped,
//! and would close the window for ever.
//!
//! The window belongs to the lock, not to the command: two jobs under one
//! lock suppress each other.

use std::fmt;
use std::time::Duration;

use super::acquire::AcquireError;
use super::end::{DirRead, EndHow, EndRecord, Ender, Ending, Ran, TRIES, Unclean, directory_for};
use super::hold::HeldLock;
use crate::zk::{self, Class, Session};

/// What `--once-per` asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OncePer {
    /// The window: at most one counted run starts within it.
    pub per: Duration,
    /// Count a run when it starts, whatever its end.
    pub even_on_failure: bool,
}

/// The window, as the holder finds it on the server's clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Window {
    /// Open: `run` is the run the holder would start now; `last` the last
    /// counted one, if any, which an end that does not count keeps;
    /// `disbelieved`, a run the directory named more than the window ahead
    /// of the server's clock, which no longer counts.
    Open {
        run: Ran,
        last: Option<Ran>,
        disbelieved: Option<Ran>,
    },
    /// Closed by the last counted run `last`, until `opens_at_ms`: its
    /// start and the window asked now, which may differ from the one it
    /// ran under; `now_ms` is the server's clock as the holder read it.
    Closed {
        last: Ran,
        opens_at_ms: i64,
        now_ms: i64,
    },
}

impl Ran {
    /// When the window this run opened closes again, on the server's
    /// clock: the next run under the same window may start then.
    pub(crate) fn opens_at_ms(&self) -> i64 {
        self.at_ms
            .saturating_add(i64::try_from(self.per_ms).unwrap_or(i64::MAX))
    }
}

impl OncePer {
    /// The window in milliseconds, as a run records it.
    fn per_ms(self) -> u64 {
        u64::try_from(self.per.as_millis()).unwrap_or(u64::MAX)
    }
}

/// Why a lock directory cannot keep a `--once-per` window: `--once-per`
/// did not make it, and cannot make it again without losing what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unkept {
    /// It has children: contenders of a lock that another client made.
    Contended(i32),
    /// Its data is no end record: another program's.
    ForeignData,
    /// Another client changed it (made it again, or wrote over its mark)
    /// between our reading and our use of it.
    Changed,
}

impl fmt::Display for Unkept {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unkept::Contended(children) => write!(
                f,
                "it is not empty ({}), so it cannot be made again: run the job once the lock is \
                 idle (--once-per then makes the directory again, persistent), or under a lock \
                 name of its own",
                match children {
                    1 => "a child".to_owned(),
                    n => format!("{n} children"),
                }
            ),
            Unkept::ForeignData => f.write_str(
                "it holds another program's data, which --once-per leaves alone: run the job \
                 under a lock name of its own",
            ),
            Unkept::Changed => f.write_str(
                "another client changed it (made it again, or wrote over its mark) while this \
                 contender queued: run the job again",
            ),
        }
    }
}

/// Makes sure the lock directory `dir` keeps a `--once-per` window, before
/// we queue in it: one zklock made persistent and marked is kept as
/// it is; a missing one is made so (and its missing ancestors, containers);
/// an unmarked one with no child, whose data is empty or an end record, is
/// made again so in one transaction at the version read, keeping the
/// record's last run; `by` makes them. Anything else is refused: it may be
/// a container, which would lose the window once idle.
///
/// Contenders racing to make it again all read it again after a write that
/// finds it changed, and settle on the one that was made. A racer whose
/// read came before another's remake may still delete that new directory
/// while it is empty and at version 0, but nothing is lost then: both made
/// it from the same read, with the same last run, and no run has stamped
/// the new one yet.
pub(crate) async fn claim_directory(
    session: &Session,
    dir: &str,
    by: &Ender,
) -> Result<(), AcquireError> {
    for _ in 0..TRIES {
        let claimed = match session.get_data(dir).await {
            Err(err) if err.is_no_node() => make_directory(session, dir, by).await,
            Err(err) => return Err(err.into()),
            Ok((data, stat)) => match claim(&data, stat.num_children) {
                Claim::Marked => return Ok(()),
                Claim::Refused(why) => {
                    return Err(AcquireError::Unkept {
                        path: dir.to_owned(),
                        why,
                    });
                }
                Claim::MakeAgain(ran) => {
                    let marked = marked_record(by, ran);
                    session.remake_persistent(dir, stat.version, &marked).await
                }
            },
        };
        match claimed {
            Ok(true) => return Ok(()),
            // Read again: made by us or another, changed meanwhile, or an
            // answer lost with the connection.
            Ok(false) => {}
            Err(err) if err.class() == Class::Recoverable => {}
            Err(err) => return Err(err.into()),
        }
    }
    Err(AcquireError::Unkept {
        path: dir.to_owned(),
        why: Unkept::Changed,
    })
}

/// What [`claim_directory`] does with a lock directory it read.
#[derive(Debug, PartialEq, Eq)]
enum Claim {
    /// zklock made it persistent: it keeps the window.
    Marked,
    /// Made by another client, but nothing would be lost by making it
    /// again: no child, and no data but an end record, whose run this
    /// carries over.
    MakeAgain(Option<Ran>),
    /// Made by another client, and not ours to make again.
    Refused(Unkept),
}

/// What to do with the lock directory whose `data` this is and which has
/// `children` children.
fn claim(data: &[u8], children: i32) -> Claim {
    let record = EndRecord::parse(data);
    if record.as_ref().is_some_and(|record| record.made_persistent) {
        return Claim::Marked;
    }
    if children > 0 {
        return Claim::Refused(Unkept::Contended(children));
    }
    match record {
        Some(record) => Claim::MakeAgain(record.ran),
        None if data.is_empty() => Claim::MakeAgain(None),
        None => Claim::Refused(Unkept::ForeignData),
    }
}

/// The data a directory zklock makes persistent starts with: a record that
/// names no node, and so speaks of no end, marking it persistent and
/// keeping `ran`. It keeps no evidence: a directory missing or made again
/// may have lost its records with the one before it, so the ends before
/// are unknown, and the next `--lock-delay` holder owes the delay.
fn marked_record(by: &Ender, ran: Option<Ran>) -> Vec<u8> {
    EndRecord {
        ran,
        made_persistent: true,
        ..Ending::new(EndHow::Released, by.clone()).record([], None, None)
    }
    .to_bytes()
}

/// The window of the lock `lock` holds (its first), as [`stamp`] finds it;
/// from here on the hold's end record keeps the last counted run: the run
/// now starting when it counts at once, else the last one.
pub(crate) async fn open(
    lock: &HeldLock,
    once: OncePer,
    by: &Ender,
) -> Result<Window, AcquireError> {
    let held = lock.held();
    let dir = directory_for(&held.node).unwrap_or(&held.lock);
    let window = stamp(lock.session(), dir, once, by).await?;
    lock.keep_last_run(match &window {
        Window::Closed { last, .. } => Some(last.clone()),
        Window::Open { run, .. } if once.even_on_failure => Some(run.clone()),
        Window::Open { last, .. } => last.clone(),
    });
    Ok(window)
}

/// Makes the lock directory `dir` of a `--once-per` or `--lock-delay` lock,
/// and its missing ancestors: the directory a persistent node, marked so
/// ([`claim_directory`]), its ancestors containers. The mark says only that
/// zklock made it persistent, which is true whichever flag made it: a later
/// `--once-per` keeps its window there as it is. True when this create made
/// it; one that finds it there, or loses its answer, is no failure: the
/// caller reads or creates again and tells.
pub(crate) async fn make_directory(
    session: &Session,
    dir: &str,
    by: &Ender,
) -> Result<bool, zk::Error> {
    if let Some(parent) = zk::path::parent(dir).filter(|parent| *parent != "/") {
        session.make_ancestors(parent).await?;
    }
    match session
        .create_node(dir, &marked_record(by, None), zk::Lifetime::Persistent)
        .await
    {
        Ok(_) => Ok(true),
        Err(err) if err.class() == Class::Normal && !err.is_node_exists() => Err(err),
        Err(_) => Ok(false),
    }
}

/// The last counted run of the lock at `dir`, for those who look; `None`
/// when there is none, or the directory cannot be read.
pub(crate) async fn last_run_of(session: &Session, dir: &str) -> Option<Ran> {
    let (data, _) = session.get_data(dir).await.ok()?;
    last_run(&data)
}

/// The last counted run the lock directory's data names.
pub(crate) fn last_run(data: &[u8]) -> Option<Ran> {
    EndRecord::parse(data).and_then(|record| record.ran)
}

/// The window of the lock directory `dir`, which we hold now, on the
/// leader's clock; `by` would run. Under `even_on_failure` an open window
/// is closed at once by a record of the run, written before the command
/// starts, so that a run that crashes counts too. A run the directory names
/// more than the window ahead of the server's clock is not believed, and
/// is taken out of the record at once, so that no end writes it back.
///
/// The directory must be one [`claim_directory`] would keep: our node in
/// it since we queued, it was claimed before, but another client may have
/// made it again (a container) or written over its mark meanwhile.
pub(crate) async fn stamp(
    session: &Session,
    dir: &str,
    once: OncePer,
    by: &Ender,
) -> Result<Window, AcquireError> {
    let mut tries = 0;
    loop {
        tries += 1;
        let (data, stat) = session.get_data(dir).await?;
        let Some(record) = EndRecord::parse(&data).filter(|record| record.made_persistent) else {
            return Err(AcquireError::Unkept {
                path: dir.to_owned(),
                why: Unkept::Changed,
            });
        };
        let now = match session.set_data_at("stamp", dir, &data, stat.version).await {
            Ok(now) => now,
            Err(err) if err.is_bad_version() && tries < TRIES => continue,
            Err(err) => return Err(err.into()),
        };
        let run = Ran {
            at_ms: now.mtime,
            per_ms: once.per_ms(),
            by: by.clone(),
        };
        let (last, disbelieved) = believed(record.ran.clone(), &run);
        if let Some(last) = last.clone() {
            let opens_at_ms = Ran {
                per_ms: run.per_ms,
                ..last.clone()
            }
            .opens_at_ms();
            if now.mtime < opens_at_ms {
                return Ok(Window::Closed {
                    last,
                    opens_at_ms,
                    now_ms: now.mtime,
                });
            }
        }
        let recorded = match (once.even_on_failure, &disbelieved) {
            (true, _) => Some(run.clone()),
            (false, Some(_)) => None,
            (false, None) => {
                return Ok(Window::Open {
                    run,
                    last,
                    disbelieved,
                });
            }
        };
        let record = with_run(record, &DirRead { data, stat: now }, recorded);
        match session
            .set_data_at("record the run in", dir, &record.to_bytes(), now.version)
            .await
        {
            Ok(_) => {
                return Ok(Window::Open {
                    run,
                    last,
                    disbelieved,
                });
            }
            Err(err) if err.is_bad_version() && tries < TRIES => continue,
            Err(err) => return Err(err.into()),
        }
    }
}

/// The recorded run `ran`, as `now` (the run that would start, on the
/// server's clock, under the window asked) sees it: believed, or, when it
/// starts more than the window ahead of now, not (the second of the pair).
/// A new leader's clock may lag the old one's, so a run a little ahead is
/// believed; one further ahead would keep the window shut for ever.
fn believed(ran: Option<Ran>, now: &Ran) -> (Option<Ran>, Option<Ran>) {
    let bound = now
        .at_ms
        .saturating_add(i64::try_from(now.per_ms).unwrap_or(i64::MAX));
    match ran {
        Some(ran) if ran.at_ms > bound => (None, Some(ran)),
        ran => (ran, None),
    }
}

/// `record`, the directory's as `read` (at the moment of the run,
/// `read.stat.mtime`), with `ran` as its last counted run. A record that
/// keeps no evidence (the one a directory is made with) gains it here: every
/// delete so far counted, as an end of which nothing is known, seen then.
fn with_run(mut record: EndRecord, read: &DirRead, ran: Option<Ran>) -> EndRecord {
    if record.evidence.is_none() {
        let seen = Unclean {
            at_ms: read.stat.mtime,
            unknown: true,
        };
        record.evidence = read.evidence(0, true, Some(seen));
    }
    record.ran = ran;
    record
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(at_ms: i64) -> Ran {
        Ran {
            at_ms,
            per_ms: 1000,
            by: Ender {
                user: "u".into(),
                host: "h".into(),
                pid: 7,
            },
        }
    }

    fn read(data: &[u8]) -> DirRead {
        DirRead {
            data: data.to_vec(),
            stat: zk::Stat {
                cversion: 6,
                num_children: 2,
                mtime: 500,
                ..zk::test_stat(1, 0)
            },
        }
    }

    #[test]
    fn a_window_opens_its_length_after_the_run() {
        assert_eq!(ran(5).opens_at_ms(), 1005);
    }

    #[test]
    fn only_a_marked_directory_is_kept_and_only_an_idle_one_of_ours_made_again() {
        let by = ran(1).by;
        let marked = marked_record(&by, Some(ran(3)));
        assert_eq!(claim(&marked, 0), Claim::Marked);
        assert_eq!(claim(&marked, 4), Claim::Marked);
        // Made with no evidence: the ends before it are unknown.
        assert_eq!(EndRecord::parse(&marked).unwrap().evidence, None);
        // Another zklock's end record, or none: made again, keeping the run.
        let mut unmarked =
            Ending::new(EndHow::Released, by).record([("/l/_c_x-lock-0000000001", 1)], None, None);
        unmarked.ran = Some(ran(3));
        let unmarked = unmarked.to_bytes();
        assert_eq!(claim(&unmarked, 0), Claim::MakeAgain(Some(ran(3))));
        assert_eq!(claim(b"", 0), Claim::MakeAgain(None));
        // Contenders in it, or another program's data: refused.
        assert_eq!(claim(&unmarked, 2), Claim::Refused(Unkept::Contended(2)));
        assert_eq!(claim(b"", 1), Claim::Refused(Unkept::Contended(1)));
        for data in [&b"{\"db\":\"prod\"}"[..], b"3", b"\xff"] {
            assert_eq!(claim(data, 0), Claim::Refused(Unkept::ForeignData));
        }
    }

    #[test]
    fn a_run_is_recorded_keeping_the_record_and_dating_what_it_did_not_count() {
        let by = ran(1).by;
        let mut previous = Ending::new(EndHow::GaveUp, by.clone()).record(
            [("/l/_c_x-lock-0000000001", 1)],
            None,
            None,
        );
        previous.made_persistent = true;
        let kept = with_run(previous.clone(), &read(&previous.to_bytes()), Some(ran(3)));
        assert_eq!(kept.how, EndHow::GaveUp);
        assert_eq!(kept.ran, Some(ran(3)));
        assert!(kept.made_persistent);
        assert!(kept.names("/l/_c_x-lock-0000000001", 1));
        // Every delete so far (two) counted, as an end no record told of.
        let evidence = kept.evidence.unwrap();
        assert_eq!((evidence.deletes, evidence.exact), (2, true));
        assert_eq!(
            evidence.unclean,
            Some(Unclean {
                at_ms: 500,
                unknown: true
            })
        );
        // A disbelieved run is taken out; evidence already kept stays.
        let counted = with_run(kept.clone(), &read(&kept.to_bytes()), None);
        assert_eq!(counted.ran, None);
        assert_eq!(counted.evidence, Some(evidence));
    }

    #[test]
    fn a_run_up_to_the_window_ahead_is_believed_and_one_further_is_not() {
        // Now is 10 000 under a window of 1000.
        let now = ran(10_000);
        assert_eq!(believed(Some(ran(11_000)), &now), (Some(ran(11_000)), None));
        assert_eq!(believed(Some(ran(11_001)), &now), (None, Some(ran(11_001))));
        assert_eq!(believed(Some(ran(5)), &now), (Some(ran(5)), None));
        assert_eq!(believed(None, &now), (None, None));
        let far = Ran {
            at_ms: i64::MAX,
            ..ran(0)
        };
        assert_eq!(believed(Some(far.clone()), &now), (None, Some(far)));
        let endless = Ran {
            per_ms: u64::MAX,
            ..ran(i64::MAX)
        };
        assert_eq!(believed(Some(ran(i64::MAX)), &endless).1, None);
    }
}
