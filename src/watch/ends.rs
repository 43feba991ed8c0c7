//! How long holds and waits lasted, and how each hold ended, added to the
//! events of a change after they are found.
//!
//! Durations count on the watch's own clock, from the event that began a
//! hold or a wait to the one that ends it; a hold or wait already under way
//! when the watch began, or whose end fell in a gap, has none (the node's
//! ctime would mix the server's clock with ours, and a gap hides when it
//! ended).
//!
//! ZooKeeper does not say who deleted a node, so how a hold ended rests on
//! what a client can see right after: the end record a zklock wrote into
//! the lock directory in the transaction that deleted it, when it names
//! the node (read once per directory, after the change: a later end may
//! have written over it already); the `__REVOKE__` its node last held;
//! another node of its session still in the tree (the session lives); else
//! what the ensemble members say of the session's connections.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::lock::end::{self, EndRecord};
use crate::lock::hold::REVOKE;
use crate::zk::Session;
use crate::zk::sessions::{Ask, Survey, Surveyor};

use super::events::{EndedBy, EventKind, Evidence, HoldEnd, How, LockEvent};

/// The least time between two surveys of the ensemble, so that a busy tree
/// costs its members at most one `cons` each per interval.
const SURVEY_INTERVAL: Duration = Duration::from_secs(1);

/// How long the events of a change wait for the survey: a member that does
/// not answer must not hold up the stream (the hold's end is then `unknown`).
const SURVEY_WAIT: Duration = Duration::from_millis(500);

/// When the watch saw each contender's hold or wait begin, by node path.
#[derive(Default)]
pub(super) struct Timings {
    began: HashMap<String, Began>,
}

/// When the watch saw a contender begin waiting or holding; `None` when it
/// was already under way, or began unseen.
#[derive(Clone, Copy, Default)]
struct Began {
    waiting: Option<i64>,
    holding: Option<i64>,
}

impl Timings {
    /// Adds `held_ms` and `waited_ms` to `events` (one change, in order)
    /// and notes the holds and waits they begin.
    pub(super) fn annotate(&mut self, events: &mut [LockEvent]) {
        // After a gap, the time of an end is only when it was noticed.
        let mut after_gap = false;
        for event in events {
            let time = event.time_ms;
            let node = match (&event.contender, event.kind) {
                (_, EventKind::Gap) => {
                    after_gap = true;
                    continue;
                }
                (_, EventKind::Gone) => {
                    let lock = format!("{}/", event.lock);
                    self.began.retain(|node, _| !node.starts_with(&lock));
                    continue;
                }
                (Some(contender), _) => contender.path.clone(),
                (None, _) => continue,
            };
            match event.kind {
                EventKind::Holding | EventKind::Queued => {
                    self.began.insert(node, Began::default());
                }
                EventKind::Waiting => {
                    let began = self.began.entry(node).or_default();
                    began.waiting = (!after_gap).then_some(time);
                    began.holding = None;
                }
                EventKind::Acquired => {
                    // A contender new to the watch that holds at once waited
                    // for nothing.
                    let began = self.began.entry(node).or_insert(Began {
                        waiting: (!after_gap).then_some(time),
                        holding: None,
                    });
                    event.lasted.waited_ms = began.waiting.map(|since| time - since);
                    began.holding = (!after_gap).then_some(time);
                }
                EventKind::Released => {
                    let began = self.began.remove(&node).unwrap_or_default();
                    event.lasted.held_ms = began
                        .holding
                        .filter(|_| !after_gap)
                        .map(|since| time - since);
                }
                EventKind::Left => {
                    self.began.remove(&node);
                }
                EventKind::Watching | EventKind::Gone | EventKind::Gap | EventKind::LockDelay => {}
            }
        }
    }
}

/// Asks the ensemble about sessions, at most once per [`SURVEY_INTERVAL`].
pub(super) struct SessionProbe {
    surveyor: Surveyor,
    last: Option<Instant>,
}

impl SessionProbe {
    pub(super) fn new(surveyor: Surveyor) -> SessionProbe {
        SessionProbe {
            surveyor,
            last: None,
        }
    }

    /// Who is asked.
    pub(super) fn surveyor(&self) -> &Surveyor {
        &self.surveyor
    }

    /// A survey taken now, or as soon as the interval allows; `None` when
    /// it takes longer than [`SURVEY_WAIT`].
    async fn survey(&mut self) -> Option<Survey> {
        if let Some(last) = self.last {
            tokio::time::sleep_until((last + SURVEY_INTERVAL).into()).await;
        }
        self.last = Some(Instant::now());
        let survey = self.surveyor.survey(Ask::Connections);
        tokio::time::timeout(SURVEY_WAIT, survey).await.ok()
    }

    /// Adds `how` to each `released` event of `events`. `live_sessions`
    /// are the sessions of every contender still in the watched tree;
    /// `records` the end records of their directories, by path.
    pub(super) async fn explain(
        &mut self,
        events: &mut [LockEvent],
        live_sessions: &HashSet<i64>,
        records: &HashMap<String, EndRecord>,
    ) {
        let mut survey = None;
        for event in events.iter_mut().filter(|e| e.kind == EventKind::Released) {
            let Some(contender) = &event.contender else {
                continue;
            };
            let session = contender.session();
            let record = end::directory_for(&contender.path)
                .and_then(|dir| records.get(dir))
                .filter(|record| record.names(&contender.path, session));
            if let Some(record) = record {
                event.lasted.how = Some(HoldEnd {
                    how: record.how.into(),
                    evidence: Evidence::EndRecord,
                    by: Some(EndedBy {
                        user: record.by.user.clone(),
                        host: record.by.host.clone(),
                        pid: record.by.pid,
                        reason: record.reason.clone(),
                    }),
                });
                continue;
            }
            let (how, evidence) = if contender.data == REVOKE {
                (How::Revoked, Evidence::RevokeWritten)
            } else if session == 0 {
                (How::Unknown, Evidence::NoSession)
            } else if live_sessions.contains(&session) {
                (
                    How::DeletedWhileSessionAlive,
                    Evidence::SessionHasOtherNodes,
                )
            } else {
                let survey = match &survey {
                    Some(survey) => survey,
                    None => survey.insert(self.survey().await),
                };
                match survey {
                    Some(survey) => from_survey(survey, session),
                    None => (How::Unknown, Evidence::MembersSilent),
                }
            };
            event.lasted.how = Some(HoldEnd {
                how,
                evidence,
                by: None,
            });
        }
    }
}

/// The end records in the directories of the holds that `events` end, by
/// directory, each read once; a directory that cannot be read, or holds
/// none, has none.
pub(super) async fn end_records(
    session: &Session,
    events: &[LockEvent],
) -> HashMap<String, EndRecord> {
    let dirs: HashSet<&str> = events
        .iter()
        .filter(|event| event.kind == EventKind::Released)
        .filter_map(|event| event.contender.as_ref())
        .filter_map(|contender| end::directory_for(&contender.path))
        .collect();
    let reads = dirs.into_iter().map(|dir| async move {
        let (data, _) = session.get_data(dir).await.ok()?;
        Some((dir.to_owned(), EndRecord::parse(&data)?))
    });
    futures::future::join_all(reads)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// What the survey says of `session`: a member lists a connection of it
/// (alive), every member answered and none lists it (ended: a session
/// between connections is not listed either, but its nodes stay until it
/// expires), or some member did not answer.
fn from_survey(survey: &Survey, session: i64) -> (How, Evidence) {
    match survey.client(session) {
        Some(client) if client.connected => {
            (How::DeletedWhileSessionAlive, Evidence::SessionConnected)
        }
        Some(_) => (How::SessionEnded, Evidence::SessionListedNowhere),
        None => (How::Unknown, Evidence::MembersSilent),
    }
}
