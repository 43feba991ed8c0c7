//! Who is behind each session: the client address a session connects from,
//! the server it is connected to, and which nodes it watches, as the
//! ensemble's members report them.
//!
//! Every member is asked once, all in parallel, each within one short
//! deadline, so a slow or silent server costs at most [`ASK_TIMEOUT`] and
//! never blocks the answer. Who the members are and whether those heard
//! from are the whole ensemble is [`members`]'s to say; how one member is
//! asked, and when its answer is its own, [`ask`]'s.
//!
//! A session that no list names is not connected now only when the lists
//! are whole: each member's own (another member's list, given in its
//! place, would leave out every session connected to it), and every member
//! of the ensemble heard from. Then its client is gone or cut off, and the
//! session lives on only until it expires, or until its client comes back.
//! Short of that the answer is unknown, and unknown is never taken for
//! gone. [`Absences`] keeps how long each session has stayed unlisted
//! across the surveys one process makes, which is what breaking a lock of
//! a disconnected session is decided on.

mod ask;
mod members;

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use futures::future::join_all;
use serde::Serialize;

use super::{Hosts, Session};
use ask::{Budget, Lists, ask_member};
use members::{Ensemble, Heard, Members};

pub(crate) use members::{AdminPort, AdminPorts};

/// How long one member may take to answer, four-letter words and
/// AdminServer together: long enough for a loaded server's first HTTP
/// request, short enough that a hung member delays the answer by little.
pub(crate) const ASK_TIMEOUT: Duration = Duration::from_secs(3);

/// The client of one session, as `client` in the JSON of a contender.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Client {
    /// `host:port` the client connects from; `None` when not connected.
    pub address: Option<String>,
    /// The member it is connected to: `host:port` as the connect string or
    /// the ensemble's configuration names it.
    pub server: Option<String>,
    pub connected: bool,
    /// How long every member has left the session unlisted, across the
    /// surveys this process made ([`Absences`]); only once two surveys
    /// have, and never while it is connected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub absent_ms: Option<i64>,
}

impl Client {
    /// The client's host, without its port.
    pub fn host(&self) -> Option<&str> {
        let address = self.address.as_deref()?;
        Some(address.rsplit_once(':').map_or(address, |(host, _)| host))
    }
}

/// Whether a session has a connection now, as the members said.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Connection {
    /// Some member lists it.
    Connected,
    /// Every member gave its own list, the lists cover the ensemble, and
    /// none names it.
    Disconnected,
    /// No list names it, and the lists are not whole: some member gave
    /// none proven its own, or some member may have been left unheard.
    Unknown,
}

impl Connection {
    /// What `client` (as [`Survey::client`] gives it) says.
    pub fn of(client: Option<&Client>) -> Connection {
        match client {
            Some(client) if client.connected => Connection::Connected,
            Some(_) => Connection::Disconnected,
            None => Connection::Unknown,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Connection::Connected => "connected",
            Connection::Disconnected => "disconnected",
            Connection::Unknown => "unknown",
        }
    }
}

/// What to ask each member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ask {
    /// Connections only (`ls`).
    Connections,
    /// Connections and watches (`stat`).
    ConnectionsAndWatches,
}

/// What the ensemble's members said about their sessions.
#[derive(Clone, Debug, Default)]
pub struct Survey {
    /// Session → where its client connects from, and which of `servers`
    /// lists it.
    clients: HashMap<i64, (String, usize)>,
    /// The members that listed sessions, `host:port` each.
    servers: Vec<String>,
    /// Session → the paths (as the server sees them) it watches; `None` when
    /// not asked or some member did not say.
    watches: Option<HashMap<i64, HashSet<String>>>,
    /// The chroot of the connect string, which the server's paths include.
    chroot: Option<String>,
    /// Why a session no list names may still be connected: each member
    /// without a list proven its own, and each way the members heard from
    /// fall short of the ensemble.
    doubts: Vec<String>,
    /// When the first member was asked and the last answered; `None` for
    /// a survey made of nothing.
    asked: Option<Instant>,
    answered: Option<Instant>,
}

impl Survey {
    /// The client of `session`; `None` when unknown (no list names it, and
    /// the lists are not whole).
    pub fn client(&self, session: i64) -> Option<Client> {
        if let Some((address, server)) = self.clients.get(&session) {
            return Some(Client {
                address: Some(address.clone()),
                server: self.servers.get(*server).cloned(),
                connected: true,
                absent_ms: None,
            });
        }
        self.doubts.is_empty().then_some(Client {
            address: None,
            server: None,
            connected: false,
            absent_ms: None,
        })
    }

    /// Whether `session` is connected now.
    pub fn connection(&self, session: i64) -> Connection {
        Connection::of(self.client(session).as_ref())
    }

    /// Whether `session` watches `path` (a path of this connection, below
    /// the chroot); `None` when the watches are unknown.
    pub fn watches(&self, session: i64, path: &str) -> Option<bool> {
        let watches = self.watches.as_ref()?;
        let full = match &self.chroot {
            Some(chroot) if path == "/" => chroot.clone(),
            Some(chroot) => format!("{chroot}{path}"),
            None => path.to_owned(),
        };
        Some(
            watches
                .get(&session)
                .is_some_and(|paths| paths.contains(&full)),
        )
    }

    /// Why a session no list names may still be connected; `None` when the
    /// lists are whole.
    pub fn doubts(&self) -> Option<String> {
        (!self.doubts.is_empty()).then(|| self.doubts.join("; "))
    }

    /// The note that says why some sessions are unknown; `None` when none is.
    pub fn why_unknown(&self) -> Option<String> {
        self.doubts()
            .map(|doubts| format!("who is connected is unknown: {doubts}"))
    }

    /// Takes in the lists of the member at `server`.
    fn add(&mut self, server: String, lists: Lists) {
        let index = self.servers.len();
        self.servers.push(server);
        // Reserved in one go: a map doubled step by step holds its old
        // table and its new one at once, for a list of every connection.
        self.clients.reserve(lists.connections.len());
        for (session, address) in lists.connections {
            self.clients.insert(session, (address, index));
        }
        match (&mut self.watches, lists.watches) {
            (Some(all), Some(watches)) => {
                for (session, paths) in watches {
                    all.entry(session).or_default().extend(paths);
                }
            }
            (watches, _) => *watches = None,
        }
    }
}

/// Who is asked, and where: the members, the chroot their paths include,
/// and what says whether they are the whole ensemble.
#[derive(Clone, Debug)]
pub struct Surveyor {
    members: Members,
    chroot: Option<String>,
}

impl Surveyor {
    /// The members of the connect string `hosts` and of the ensemble's
    /// configuration as `session` reads it (`/zookeeper/config`), each
    /// asked at its AdminServer port of `ports` when it refuses `cons`.
    pub async fn of_ensemble(session: &Session, hosts: &Hosts, ports: &AdminPorts) -> Surveyor {
        let ensemble = Ensemble::read(session.ensemble_config().await);
        Surveyor {
            members: Members::new(hosts.members(), ports, ensemble),
            chroot: hosts.chroot().map(str::to_owned),
        }
    }

    /// Asks every member about its sessions, in parallel.
    pub async fn survey(&self, ask: Ask) -> Survey {
        let asked = Instant::now();
        let budget = Budget::new();
        let alone = self.members.needs_standalone();
        let answers = join_all(
            self.members
                .asked
                .iter()
                .map(|member| within_timeout(ask_member(member, ask, alone, &budget))),
        )
        .await;
        let mut survey = Survey {
            chroot: self.chroot.clone(),
            watches: (ask == Ask::ConnectionsAndWatches).then(HashMap::new),
            asked: Some(asked),
            answered: Some(Instant::now()),
            ..Survey::default()
        };
        let mut heard = Vec::new();
        for (member, answer) in self.members.asked.iter().zip(answers) {
            match answer {
                Ok(answer) => {
                    heard.push(Heard {
                        member,
                        id: answer.id,
                        standalone: answer.standalone,
                    });
                    survey.add(member.address(), answer.lists);
                }
                Err(why) => survey.doubts.push(format!("{} {why}", member.address())),
            }
        }
        survey.doubts.extend(self.members.unasked.iter().cloned());
        survey
            .doubts
            .extend(self.members.ensemble.unheard(&self.members.asked, &heard));
        survey
    }
}

/// `ask`, or why not when it takes longer than [`ASK_TIMEOUT`].
async fn within_timeout<T>(ask: impl Future<Output = Result<T, String>>) -> Result<T, String> {
    tokio::time::timeout(ASK_TIMEOUT, ask)
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "gave no answer within {}ms",
                ASK_TIMEOUT.as_millis()
            ))
        })
}

/// How long each session of interest has stayed unlisted by every member,
/// across the surveys this process made: the first and last such survey,
/// and how many there were. A survey that lists the session, or whose
/// lists are not whole, ends its run: "unknown" never counts as absent. Only the sessions the caller names are kept, so memory follows
/// what is shown, not every session a survey leaves out.
#[derive(Debug, Default)]
pub struct Absences {
    runs: HashMap<i64, Run>,
}

/// One session's unbroken run of surveys that left it unlisted.
#[derive(Clone, Copy, Debug)]
struct Run {
    /// When the first of them had its last answer.
    since: Instant,
    /// When the latest of them was first asked.
    until: Instant,
    surveys: u32,
}

impl Absences {
    /// Takes in `survey` for `sessions` (the others are forgotten).
    pub fn record(&mut self, survey: &Survey, sessions: impl IntoIterator<Item = i64>) {
        let (Some(asked), Some(answered)) = (survey.asked, survey.answered) else {
            self.runs.clear();
            return;
        };
        let mut runs = HashMap::new();
        for session in sessions {
            if session == 0 || survey.connection(session) != Connection::Disconnected {
                continue;
            }
            let run = match self.runs.get(&session) {
                Some(run) => Run {
                    until: asked,
                    surveys: run.surveys + 1,
                    ..*run
                },
                None => Run {
                    since: answered,
                    until: asked,
                    surveys: 1,
                },
            };
            runs.insert(session, run);
        }
        self.runs = runs;
    }

    /// Whether every member left `session` unlisted in the last survey,
    /// and in every one since its run began.
    pub fn is_absent(&self, session: i64) -> bool {
        self.runs.contains_key(&session)
    }

    /// How long `session` has been unlisted by every member in every survey
    /// since the first that left it so; `None` unless two surveys have.
    pub fn absent_for(&self, session: i64) -> Option<Duration> {
        let run = self.runs.get(&session).filter(|run| run.surveys >= 2)?;
        Some(run.until.saturating_duration_since(run.since))
    }

    /// `client` with how long its session has been absent.
    pub fn annotate(&self, session: i64, client: &mut Option<Client>) {
        if let Some(client) = client.as_mut().filter(|client| !client.connected) {
            client.absent_ms = self
                .absent_for(session)
                .map(|absent| absent.as_millis() as i64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_no_list_names_is_disconnected_and_unknown_while_a_doubt_stands() {
        let mut survey = Survey {
            watches: Some(HashMap::new()),
            chroot: Some("/t".to_owned()),
            ..Survey::default()
        };
        survey.add(
            "zk1:2181".to_owned(),
            Lists {
                connections: vec![(7, "10.0.0.5:4000".to_owned())],
                watches: Some(vec![(7, vec!["/t/l/lock-0000000001".to_owned()])]),
            },
        );
        let seven = survey.client(7).unwrap();
        assert_eq!(
            (seven.host(), seven.server.as_deref(), seven.connected),
            (Some("10.0.0.5"), Some("zk1:2181"), true)
        );
        assert_eq!(survey.client(8).map(|c| c.connected), Some(false));
        assert_eq!(survey.watches(7, "/l/lock-0000000001"), Some(true));
        assert_eq!(survey.watches(8, "/l/lock-0000000001"), Some(false));
        assert!(survey.why_unknown().is_none());
        survey.doubts.push("zk2:2181 did not answer".to_owned());
        assert_eq!(survey.client(8), None);
        assert_eq!(survey.connection(8), Connection::Unknown);
        assert!(survey.client(7).is_some());
        assert!(survey.why_unknown().unwrap().contains("zk2:2181"));
        survey.add("zk3:2181".to_owned(), Lists::default());
        assert_eq!(survey.watches(7, "/l/lock-0000000001"), None);
    }

    /// A survey at `at` in which every member answered, listing `listed`;
    /// with `doubt`, one whose lists are not whole.
    fn survey_at(at: Instant, listed: &[i64], doubt: bool) -> Survey {
        let mut survey = Survey {
            asked: Some(at),
            answered: Some(at + Duration::from_millis(10)),
            ..Survey::default()
        };
        survey.add(
            "zk1:2181".to_owned(),
            Lists {
                connections: listed
                    .iter()
                    .map(|&s| (s, "10.0.0.5:1".to_owned()))
                    .collect(),
                watches: None,
            },
        );
        if doubt {
            survey.doubts.push("zk2:2181 did not answer".to_owned());
        }
        survey
    }

    #[test]
    fn an_absence_counts_from_two_surveys_and_breaks_on_a_listing_or_a_silence() {
        let t0 = Instant::now();
        let second = Duration::from_secs(1);
        let mut absences = Absences::default();
        absences.record(&survey_at(t0, &[1], false), [1, 2, 3, 0]);
        assert_eq!(absences.absent_for(2), None, "one survey is not enough");
        absences.record(&survey_at(t0 + 5 * second, &[1, 3], false), [1, 2, 3]);
        let two = absences.absent_for(2).unwrap();
        assert!(two >= 4 * second && two < 5 * second, "{two:?}");
        assert_eq!(absences.absent_for(1), None, "listed");
        assert_eq!(absences.absent_for(3), None, "came back");
        assert_eq!(absences.absent_for(0), None, "no session");
        absences.record(&survey_at(t0 + 9 * second, &[1], true), [1, 2, 3]);
        assert_eq!(absences.absent_for(2), None, "unknown ends the run");
        absences.record(&survey_at(t0 + 10 * second, &[], false), [2]);
        absences.record(&survey_at(t0 + 12 * second, &[], false), [2]);
        let again = absences.absent_for(2).unwrap();
        assert!(again < 2 * second, "a new run starts afresh: {again:?}");
        let mut client = survey_at(t0, &[], false).client(2);
        absences.annotate(2, &mut client);
        assert_eq!(client.unwrap().absent_ms, Some(again.as_millis() as i64));
    }
}
