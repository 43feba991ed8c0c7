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
//! The window belongs to the lock, not to the command: two jobs under one
//! lock suppress each other.

use std::time::Duration;

use super::end::directory_for;
use super::end::{DirData, DirRead, EndHow, EndRecord, Ender, Ending, Ran, TRIES, Unclean};
use super::hold::HeldLock;
use crate::zk::{self, Session};

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
    /// counted one, if any, which an end that does not count keeps.
    Open { run: Ran, last: Option<Ran> },
    /// Closed by the last counted run `last`, until `opens_at_ms`: its
    /// start and the window asked now, which may differ from the one it
    /// ran under.
    Closed { last: Ran, opens_at_ms: i64 },
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

/// The window of the lock `lock` holds (its first), as [`stamp`] finds it;
/// from here on the hold's end record keeps the last counted run: the run
/// now starting when it counts at once, else the last one.
pub(crate) async fn open(lock: &HeldLock, once: OncePer, by: &Ender) -> Result<Window, zk::Error> {
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

/// Makes the lock directory `dir` of a `--once-per` lock, and its missing
/// ancestors: the directory a persistent node, not a container, which the
/// server removes once empty, and the last run with it. A create that finds
/// it there, or loses its answer, is no failure: the caller's own create
/// tells.
pub(crate) async fn make_directory(session: &Session, dir: &str) -> Result<(), zk::Error> {
    if let Some(parent) = zk::path::parent(dir).filter(|parent| *parent != "/") {
        session.make_ancestors(parent).await?;
    }
    match session
        .create_node(dir, &[], zk::Lifetime::Persistent)
        .await
    {
        Err(err) if err.class() == zk::Class::Normal && !err.is_node_exists() => Err(err),
        _ => Ok(()),
    }
}

/// The owner ZooKeeper gives a container node in its stat.
const CONTAINER_OWNER: i64 = i64::MIN;

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
/// starts, so that a run that crashes counts too.
pub(crate) async fn stamp(
    session: &Session,
    dir: &str,
    once: OncePer,
    by: &Ender,
) -> Result<Window, zk::Error> {
    let mut tries = 0;
    loop {
        tries += 1;
        let (data, stat) = session.get_data(dir).await?;
        if stat.ephemeral_owner == CONTAINER_OWNER && tries == 1 {
            tracing::warn!(
                "{dir} is a container node, which the server removes once it is empty, and the \
                 last --once-per run with it: make it a persistent node"
            );
        }
        let now = match session.set_data_at("stamp", dir, &data, stat.version).await {
            Ok(now) => now,
            Err(err) if err.is_bad_version() && tries < TRIES => continue,
            Err(err) => return Err(err),
        };
        let last = last_run(&data);
        let run = Ran {
            at_ms: now.mtime,
            per_ms: once.per_ms(),
            by: by.clone(),
        };
        if let Some(last) = last.clone() {
            let opens_at_ms = Ran {
                per_ms: run.per_ms,
                ..last.clone()
            }
            .opens_at_ms();
            if now.mtime < opens_at_ms {
                return Ok(Window::Closed { last, opens_at_ms });
            }
        }
        if !once.even_on_failure {
            return Ok(Window::Open { run, last });
        }
        let read = DirRead { data, stat: now };
        let Some(record) = with_run(&read, run.clone()) else {
            return Err(zk::Error::Unsupported(format!(
                "{dir} holds data that is no end record (an application's): the run cannot be \
                 recorded there, and zklock never writes over it"
            )));
        };
        match session
            .set_data_at("record the run in", dir, &record.to_bytes(), now.version)
            .await
        {
            Ok(_) => return Ok(Window::Open { run, last }),
            Err(err) if err.is_bad_version() && tries < TRIES => continue,
            Err(err) => return Err(err),
        }
    }
}

/// The directory as `read` (at the moment of the run, `read.stat.mtime`)
/// with `run` as its last counted run: the end record there, or, where
/// there is none, a record that names no node (and so speaks of no end) to
/// carry it, whose evidence counts every delete so far as an end of which
/// nothing is known, seen then. `None` over an application's data.
fn with_run(read: &DirRead, run: Ran) -> Option<EndRecord> {
    let mut record = match read.data() {
        DirData::Record(record) => *record,
        DirData::Empty => Ending::new(EndHow::Released, run.by.clone()).record([], None, None),
        DirData::Other => return None,
    };
    if record.evidence.is_none() {
        let seen = Unclean {
            at_ms: read.stat.mtime,
            unknown: true,
        };
        record.evidence = read.evidence(0, true, Some(seen));
    }
    record.ran = Some(run);
    Some(record)
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
    fn a_run_is_recorded_over_a_record_or_nothing_never_over_other_data() {
        let ending = Ending::new(EndHow::GaveUp, ran(1).by);
        let previous = ending
            .record([("/l/_c_x-lock-0000000001", 1)], None, None)
            .to_bytes();
        let kept = with_run(&read(&previous), ran(3)).unwrap();
        assert_eq!(kept.how, EndHow::GaveUp);
        assert_eq!(kept.ran, Some(ran(3)));
        assert!(kept.names("/l/_c_x-lock-0000000001", 1));
        let fresh = with_run(&read(b""), ran(4)).unwrap();
        assert!(fresh.nodes.is_empty());
        assert_eq!(fresh.ran, Some(ran(4)));
        // Every delete so far (two) counted, as an end no record told of.
        let evidence = fresh.evidence.unwrap();
        assert_eq!((evidence.deletes, evidence.exact), (2, true));
        assert_eq!(
            evidence.unclean,
            Some(Unclean {
                at_ms: 500,
                unknown: true
            })
        );
        assert_eq!(with_run(&read(br#"{"db":"prod-primary"}"#), ran(4)), None);
    }
}
