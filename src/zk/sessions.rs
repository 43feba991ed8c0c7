//! Who is behind each session: the client address a session connects from,
//! the server it is connected to, and which nodes it watches, as the
//! ensemble's members report them.
//!
//! Every member is asked once, all in parallel, each within one short
//! deadline, so a slow or silent server costs at most [`ASK_TIMEOUT`] and
//! never blocks the answer. The members are those of the connect string and
//! those the ensemble's own configuration (`/zookeeper/config`) names with a
//! client address, observers among them: a client may be connected to a
//! server the connect string leaves out, and a session only a forgotten
//! member lists would pass for disconnected. A member answers through the
//! `cons` (and `wchc`) four-letter words when its `4lw.commands.whitelist`
//! allows them, else through its AdminServer's `connections` (and
//! `watches`) commands over HTTP. A session that no member lists while every
//! member answered is not connected now: its client is gone or cut off, and
//! the session lives on only until it expires, or until its client comes
//! back. [`Absences`] keeps how long each session has stayed so across the
//! surveys one process makes, which is what breaking a lock of a
//! disconnected session is decided on.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use futures::future::join_all;
use serde::Serialize;
use serde_json::Value as Json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::Hosts;
use super::hosts::format_server;

/// How long one member may take to answer, four-letter words and
/// AdminServer together: long enough for a loaded server's first HTTP
/// request, short enough that a hung member delays the answer by little.
pub(crate) const ASK_TIMEOUT: Duration = Duration::from_secs(3);

/// The AdminServer's port when none is given: ZooKeeper's default.
pub(crate) const DEFAULT_ADMIN_PORT: u16 = 8080;

/// The most members ever asked: a configuration a server sends may name any
/// number, and each costs a connection.
const MAX_MEMBERS: usize = 256;

/// Replies are cut at this size: a member with very many connections is
/// still read in bounded memory.
const MAX_REPLY: u64 = 64 << 20;

/// The client of one session, as `client` in the JSON of a contender.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Client {
    /// `host:port` the client connects from; `None` when not connected.
    pub address: Option<String>,
    /// The member (`host:port` of the connect string) it is connected to.
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
    /// Every member answered, and none lists it.
    Disconnected,
    /// No answering member lists it, and some member did not answer.
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
    clients: HashMap<i64, Client>,
    /// Session → the paths (as the server sees them) it watches; `None` when
    /// not asked or some member did not say.
    watches: Option<HashMap<i64, HashSet<String>>>,
    /// The chroot of the connect string, which the server's paths include.
    chroot: Option<String>,
    /// Members that did not answer, with why.
    silent: Vec<String>,
    /// When the first member was asked and the last answered; `None` for
    /// a survey made of nothing.
    asked: Option<Instant>,
    answered: Option<Instant>,
}

impl Survey {
    /// The client of `session`; `None` when unknown (some member did not
    /// answer, and no answering one lists it).
    pub fn client(&self, session: i64) -> Option<Client> {
        if let Some(client) = self.clients.get(&session) {
            return Some(client.clone());
        }
        self.silent.is_empty().then_some(Client {
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

    /// Why some clients are unknown: the members that did not answer; `None`
    /// when every one did.
    pub fn why_unknown(&self) -> Option<String> {
        (!self.silent.is_empty())
            .then(|| format!("client addresses unknown: {}", self.silent.join("; ")))
    }
}

/// Asks every member of `hosts` about its sessions, in parallel; the
/// AdminServer is sought on `admin_port` of each member's host.
pub(crate) async fn survey(hosts: &Hosts, admin_port: u16, ask: Ask) -> Survey {
    Surveyor::new(hosts, admin_port).survey(ask).await
}

/// Who is asked, and where: the members, the chroot their paths include,
/// the AdminServer's port.
#[derive(Clone, Debug)]
pub struct Surveyor {
    members: Vec<(String, u16)>,
    /// Members that cannot be asked, with why: every survey counts them as
    /// silent.
    unasked: Vec<String>,
    chroot: Option<String>,
    admin_port: u16,
}

impl Surveyor {
    /// The members of the connect string.
    pub fn new(hosts: &Hosts, admin_port: u16) -> Surveyor {
        Surveyor {
            members: hosts.members(),
            unasked: Vec::new(),
            chroot: hosts.chroot().map(str::to_owned),
            admin_port,
        }
    }

    /// Adds the members the ensemble's configuration (`/zookeeper/config`)
    /// names with a client address that are not asked yet, and returns a
    /// surveyor of those alone. A member it names without a client address
    /// is taken to be the connect string's member on its host; when the
    /// connect string names none there, or the configuration names more
    /// members than are ever asked, that member cannot be asked, and every
    /// survey says so: nobody is called disconnected who may be connected
    /// to it.
    pub fn add_configured(&mut self, config: &[u8]) -> Surveyor {
        let mut added = Surveyor {
            members: Vec::new(),
            unasked: Vec::new(),
            ..self.clone()
        };
        for member in configured(config) {
            let asked = self.members.len() + added.members.len();
            match member.client {
                _ if asked >= MAX_MEMBERS => added.unasked.push(format!(
                    "{} ({}) is beyond the {MAX_MEMBERS} members zklock asks",
                    member.name, member.host
                )),
                Some(client) if !self.members.contains(&client) => added.members.push(client),
                Some(_) => {}
                None if self.members.iter().any(|(host, _)| *host == member.host) => {}
                None => added.unasked.push(format!(
                    "{} ({}) has no client address in /zookeeper/config and is not in the \
                     connect string",
                    member.name, member.host
                )),
            }
        }
        self.members.extend(added.members.iter().cloned());
        self.unasked.extend(added.unasked.iter().cloned());
        added
    }

    /// True when there is nobody to ask, and nobody who cannot be.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.unasked.is_empty()
    }

    /// Asks every member about its sessions, in parallel.
    pub async fn survey(&self, ask: Ask) -> Survey {
        let asked = Instant::now();
        let answers = join_all(
            self.members
                .iter()
                .map(|(host, port)| within_timeout(ask_member(host, *port, self.admin_port, ask))),
        )
        .await;
        let mut survey = Survey {
            chroot: self.chroot.clone(),
            watches: (ask == Ask::ConnectionsAndWatches).then(HashMap::new),
            asked: Some(asked),
            answered: Some(Instant::now()),
            ..Survey::default()
        };
        for ((host, port), answer) in self.members.iter().zip(answers) {
            let server = format_server(host, *port);
            match answer {
                Ok(member) => survey.add(&server, member),
                Err(why) => survey.silent.push(format!("{server} {why}")),
            }
        }
        survey.silent.extend(self.unasked.iter().cloned());
        survey
    }
}

/// A member as a dynamic configuration names it, each line
/// `server.N=HOST:QUORUM:ELECTION[:ROLE][;[CLIENT_HOST:]CLIENT_PORT]`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Configured {
    /// `server.N`, for messages.
    name: String,
    /// The server's own host.
    host: String,
    /// Where its clients connect; `None` when the line does not say. A
    /// wildcard client host (`0.0.0.0`, `::`) is reached at `host`.
    client: Option<(String, u16)>,
}

/// The members of a dynamic configuration; other lines are left out.
fn configured(config: &[u8]) -> Vec<Configured> {
    let text = String::from_utf8_lossy(config);
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.trim().split_once('=')?;
            key.strip_prefix("server.")?;
            let (quorum, client) = match value.split_once(';') {
                Some((quorum, client)) => (quorum, Some(client.trim())),
                None => (value, None),
            };
            let host = split_host(quorum)?.0;
            (!host.is_empty()).then(|| Configured {
                name: key.to_owned(),
                host: host.to_owned(),
                client: client.and_then(|client| client_address(host, client)),
            })
        })
        .collect()
}

/// The client address of a configuration line's `[CLIENT_HOST:]PORT`.
fn client_address(server_host: &str, client: &str) -> Option<(String, u16)> {
    let (host, port) = match client.parse::<u16>() {
        Ok(port) => (server_host, port),
        Err(_) => {
            let (host, rest) = split_host(client)?;
            let port = rest.strip_prefix(':')?.parse().ok()?;
            let wildcard = matches!(host, "0.0.0.0" | "::" | "0:0:0:0:0:0:0:0" | "");
            (if wildcard { server_host } else { host }, port)
        }
    };
    (port != 0).then(|| (host.to_owned(), port))
}

/// The host at the start of `text` (a bracketed IPv6 address without its
/// brackets) and what follows it.
fn split_host(text: &str) -> Option<(&str, &str)> {
    match text.strip_prefix('[') {
        Some(rest) => {
            let (host, after) = rest.split_once(']')?;
            Some((host, after))
        }
        None => {
            let end = text.find(':').unwrap_or(text.len());
            Some((&text[..end], &text[end..]))
        }
    }
}

impl Survey {
    /// This survey with `other`'s members' answers added, as one survey of
    /// all: it began when the first began and ended when the last ended.
    pub fn merge(&mut self, other: Survey) {
        self.clients.extend(other.clients);
        match (&mut self.watches, other.watches) {
            (Some(all), Some(watches)) => {
                for (session, paths) in watches {
                    all.entry(session).or_default().extend(paths);
                }
            }
            (watches, _) => *watches = None,
        }
        self.silent.extend(other.silent);
        self.asked = self.asked.min(other.asked).or(self.asked.or(other.asked));
        self.answered = self.answered.max(other.answered);
    }

    fn add(&mut self, server: &str, member: Member) {
        for (session, address) in member.connections {
            self.clients.insert(
                session,
                Client {
                    address: Some(address),
                    server: Some(server.to_owned()),
                    connected: true,
                    absent_ms: None,
                },
            );
        }
        match (&mut self.watches, member.watches) {
            (Some(all), Some(watches)) => {
                for (session, paths) in watches {
                    all.entry(session).or_default().extend(paths);
                }
            }
            (watches, _) => *watches = None,
        }
    }
}

/// How long each session of interest has stayed unlisted by every member,
/// across the surveys this process made: the first and last such survey,
/// and how many there were. A survey that lists the session, or in which
/// some member did not answer, ends its run: "unknown" never counts as
/// absent. Only the sessions the caller names are kept, so memory follows
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

/// One member's answer: session → client address, and session → watched
/// paths when asked and allowed.
#[derive(Debug, Default, PartialEq, Eq)]
struct Member {
    connections: Vec<(i64, String)>,
    watches: Option<Vec<(i64, Vec<String>)>>,
}

/// Asks one member by four-letter words, else by its AdminServer; the error
/// says why neither answered.
async fn ask_member(host: &str, port: u16, admin_port: u16, ask: Ask) -> Result<Member, String> {
    let four_letter = async {
        let (cons, wchc) = tokio::join!(four_letter_word(host, port, "cons"), async {
            match ask {
                Ask::ConnectionsAndWatches => Some(four_letter_word(host, port, "wchc").await),
                Ask::Connections => None,
            }
        });
        let connections = parse_cons(&cons?).ok_or("refuses the cons four-letter word")?;
        let watches = wchc
            .and_then(|reply| reply.ok())
            .and_then(|r| parse_wchc(&r));
        Ok::<_, String>(Member {
            connections,
            watches,
        })
    };
    let refused = match four_letter.await {
        Ok(member) => return Ok(member),
        Err(why) => why,
    };
    let admin = async {
        let (connections, watches) =
            tokio::join!(admin_command(host, admin_port, "connections"), async {
                match ask {
                    Ask::ConnectionsAndWatches => {
                        Some(admin_command(host, admin_port, "watches").await)
                    }
                    Ask::Connections => None,
                }
            });
        let connections = parse_admin_connections(&connections?)
            .ok_or("its AdminServer gave no connections list")?;
        let watches = watches
            .and_then(|reply| reply.ok())
            .and_then(|r| parse_admin_watches(&r));
        Ok::<_, String>(Member {
            connections,
            watches,
        })
    };
    admin.await.map_err(|admin_why| {
        format!("{refused}, and its AdminServer on port {admin_port} did not answer ({admin_why})")
    })
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

/// Sends a four-letter word and reads the whole reply.
async fn four_letter_word(host: &str, port: u16, word: &str) -> Result<String, String> {
    exchange(host, port, word.as_bytes())
        .await
        .map_err(|why| format!("did not answer the {word} four-letter word ({why})"))
}

/// Runs an AdminServer command over HTTP and returns its JSON body.
async fn admin_command(host: &str, port: u16, command: &str) -> Result<Json, String> {
    let request = format!(
        "GET /commands/{command} HTTP/1.0\r\nHost: {}\r\nConnection: close\r\n\r\n",
        format_server(host, port)
    );
    let reply = exchange(host, port, request.as_bytes()).await?;
    let (head, body) = reply.split_once("\r\n\r\n").ok_or("no HTTP reply")?;
    let status = head.split_whitespace().nth(1).unwrap_or_default();
    if status != "200" {
        return Err(format!("HTTP status {status}"));
    }
    serde_json::from_str(body).map_err(|e| format!("bad JSON: {e}"))
}

/// Connects, writes `request`, reads until the peer closes (bounded by the
/// caller's [`ASK_TIMEOUT`]).
async fn exchange(host: &str, port: u16, request: &[u8]) -> Result<String, String> {
    let talk = async {
        let mut stream = TcpStream::connect((host, port)).await?;
        stream.write_all(request).await?;
        let mut reply = Vec::new();
        stream.take(MAX_REPLY).read_to_end(&mut reply).await?;
        Ok::<_, std::io::Error>(reply)
    };
    talk.await
        .map(|reply| String::from_utf8_lossy(&reply).into_owned())
        .map_err(|err| err.to_string())
}

/// The sessions of a `cons` reply, one connection a line:
/// ` /10.0.0.5:51234[1](queued=0,...,sid=0x1000a2b3c4d0005,...)`. A reply
/// with no such line is a refusal (a word off the whitelist): every `cons`
/// lists at least the connection that asks.
fn parse_cons(reply: &str) -> Option<Vec<(i64, String)>> {
    let mut listed = false;
    let mut sessions = Vec::new();
    for line in reply.lines() {
        let Some(rest) = line.trim().strip_prefix('/') else {
            continue;
        };
        listed = true;
        let Some(open) = rest.find("](") else {
            continue;
        };
        let Some(bracket) = rest[..open].rfind('[') else {
            continue;
        };
        let address = &rest[..bracket];
        let session = rest[open + 2..]
            .trim_end_matches(')')
            .split(',')
            .find_map(|field| field.strip_prefix("sid="))
            .and_then(parse_hex_session);
        if let Some(session) = session {
            sessions.push((session, address.to_owned()));
        }
    }
    listed.then_some(sessions)
}

/// The sessions and their paths of a `wchc` reply: a session id line, then
/// its paths each on a tab-indented line.
fn parse_wchc(reply: &str) -> Option<Vec<(i64, Vec<String>)>> {
    let mut watches: Vec<(i64, Vec<String>)> = Vec::new();
    for line in reply.lines() {
        if let Some(path) = line.strip_prefix('\t') {
            watches.last_mut()?.1.push(path.to_owned());
        } else if let Some(session) = parse_hex_session(line.trim()) {
            watches.push((session, Vec::new()));
        } else if !line.trim().is_empty() {
            return None;
        }
    }
    Some(watches)
}

fn parse_hex_session(text: &str) -> Option<i64> {
    let hex = text.strip_prefix("0x")?;
    u64::from_str_radix(hex, 16).ok().map(|id| id as i64)
}

/// A session id as the AdminServer writes it: a JSON number (Java's signed
/// long) or a decimal string (a map key).
fn json_session(value: &Json) -> Option<i64> {
    match value {
        Json::Number(n) => n.as_i64().or_else(|| n.as_u64().map(|id| id as i64)),
        Json::String(text) => text
            .parse::<i64>()
            .ok()
            .or_else(|| text.parse::<u64>().ok().map(|id| id as i64)),
        _ => None,
    }
}

fn parse_admin_connections(reply: &Json) -> Option<Vec<(i64, String)>> {
    let plain = reply.get("connections")?.as_array()?;
    let secure = reply
        .get("secure_connections")
        .and_then(Json::as_array)
        .into_iter()
        .flatten();
    Some(
        plain
            .iter()
            .chain(secure)
            .filter_map(|connection| {
                let session = json_session(connection.get("session_id")?)?;
                let address = connection.get("remote_socket_address")?.as_str()?;
                Some((session, address.trim_start_matches('/').to_owned()))
            })
            .collect(),
    )
}

fn parse_admin_watches(reply: &Json) -> Option<Vec<(i64, Vec<String>)>> {
    let sessions = reply.get("session_id_to_watched_paths")?.as_object()?;
    sessions
        .iter()
        .map(|(session, paths)| {
            let session = json_session(&Json::String(session.clone()))?;
            let paths = paths
                .as_array()?
                .iter()
                .filter_map(|p| p.as_str().map(str::to_owned))
                .collect();
            Some((session, paths))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONS: &str = " /127.0.0.1:57714[0](queued=0,recved=1,sent=0)\n /127.0.0.1:57704[1](queued=0,recved=6,sent=6,sid=0x100003557930000,lop=EXIS,est=1795373143206,to=4000,lcxid=0x5,lzxid=0x3,lresp=3504650,llat=2,minlat=0,avglat=16,maxlat=51)\n /[0:0:0:0:0:0:0:1]:4242[1](queued=0,sid=0x8100000000000001)\n\n";

    #[test]
    fn reads_sessions_and_addresses_from_cons() {
        assert_eq!(
            parse_cons(CONS),
            Some(vec![
                (0x100003557930000, "127.0.0.1:57704".to_owned()),
                (
                    0x8100000000000001u64 as i64,
                    "[0:0:0:0:0:0:0:1]:4242".to_owned()
                ),
            ])
        );
        assert_eq!(
            parse_cons("cons is not executed because it is not in the whitelist.\n"),
            None
        );
        assert_eq!(parse_cons(""), None);
    }

    #[test]
    fn reads_watches_from_wchc() {
        assert_eq!(
            parse_wchc("0x100003557930000\n\t/e/xx\n\t/e/yy\n0x2\n\t/a\n\n"),
            Some(vec![
                (
                    0x100003557930000,
                    vec!["/e/xx".to_owned(), "/e/yy".to_owned()]
                ),
                (2, vec!["/a".to_owned()]),
            ])
        );
        assert_eq!(
            parse_wchc("wchc is not executed because it is not in the whitelist.\n"),
            None
        );
    }

    #[test]
    fn reads_the_admin_servers_json() {
        let connections: Json = serde_json::from_str(
            r#"{"connections":[{"remote_socket_address":"127.0.0.1:34750","session_id":72057825283801088}],
               "secure_connections":[{"remote_socket_address":"/10.0.0.2:1","session_id":-9151314442816847871}],
               "command":"connections","error":null}"#,
        )
        .unwrap();
        assert_eq!(
            parse_admin_connections(&connections),
            Some(vec![
                (72057825283801088, "127.0.0.1:34750".to_owned()),
                (-9151314442816847871, "10.0.0.2:1".to_owned()),
            ])
        );
        let watches: Json = serde_json::from_str(
            r#"{"session_id_to_watched_paths":{"72057825283801088":["/e/xx"]},"command":"watches"}"#,
        )
        .unwrap();
        assert_eq!(
            parse_admin_watches(&watches),
            Some(vec![(72057825283801088, vec!["/e/xx".to_owned()])])
        );
    }

    #[test]
    fn a_session_no_answering_member_lists_is_disconnected_and_unknown_if_one_was_silent() {
        let mut survey = Survey {
            watches: Some(HashMap::new()),
            chroot: Some("/t".to_owned()),
            ..Survey::default()
        };
        survey.add(
            "zk1:2181",
            Member {
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
        survey.silent.push("zk2:2181 did not answer".to_owned());
        assert_eq!(survey.client(8), None);
        assert!(survey.client(7).is_some());
        assert!(survey.why_unknown().unwrap().contains("zk2:2181"));
        survey.add("zk3:2181", Member::default());
        assert_eq!(survey.watches(7, "/l/lock-0000000001"), None);
    }

    #[test]
    fn members_come_from_the_configuration_with_their_client_addresses() {
        let config = b"server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181\n\
server.2=zk2:2888:3888:participant;zk2.clients:2182\n\
server.3=[fd00::3]:2888:3888:observer;2183\n\
server.4=zk4:2888:3888;[::]:2184\n\
server.5=zk5:2888:3888:participant\n\
version=100000000\n";
        let clients: Vec<_> = configured(config).into_iter().map(|m| m.client).collect();
        assert_eq!(
            clients,
            vec![
                Some(("10.0.0.1".to_owned(), 2181)),
                Some(("zk2.clients".to_owned(), 2182)),
                Some(("fd00::3".to_owned(), 2183)),
                Some(("zk4".to_owned(), 2184)),
                None,
            ]
        );
        assert!(configured(b"").is_empty());
        let hosts = Hosts::parse("10.0.0.1:2181,zk9:2181/c").unwrap();
        let mut surveyor = Surveyor::new(&hosts, 8080);
        let added = surveyor.add_configured(config);
        assert_eq!(
            added.members.len(),
            3,
            "the connect string's member is not asked twice"
        );
        assert_eq!(surveyor.members.len(), 5);
        assert_eq!(added.chroot.as_deref(), Some("/c"));
        assert_eq!(
            added.unasked.len(),
            1,
            "zk5 names no client address: {added:?}"
        );
        assert!(added.unasked[0].contains("server.5 (zk5)"));
        // Named by the connect string on its host: asked there.
        let mut surveyor = Surveyor::new(&Hosts::parse("zk5:2181").unwrap(), 8080);
        assert!(
            surveyor
                .add_configured(b"server.5=zk5:2888:3888")
                .is_empty()
        );
        // A configuration of very many members: the rest are not asked, and
        // say so.
        let many: String = (0..1000)
            .map(|n| format!("server.{n}=h{n}:1:2;{}\n", 3000 + n))
            .collect();
        let added = Surveyor::new(&hosts, 8080).add_configured(many.as_bytes());
        assert_eq!(added.members.len() + 2, MAX_MEMBERS);
        assert_eq!(added.unasked.len(), 1000 + 2 - MAX_MEMBERS);
    }

    /// A survey at `at` in which every member answered, listing `listed`.
    fn survey_at(at: Instant, listed: &[i64], silent: bool) -> Survey {
        let mut survey = Survey {
            asked: Some(at),
            answered: Some(at + Duration::from_millis(10)),
            ..Survey::default()
        };
        survey.add(
            "zk1:2181",
            Member {
                connections: listed
                    .iter()
                    .map(|&s| (s, "10.0.0.5:1".to_owned()))
                    .collect(),
                watches: None,
            },
        );
        if silent {
            survey.silent.push("zk2:2181 did not answer".to_owned());
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        /// A member's four-letter-word and AdminServer replies are any text
        /// or JSON a server (or an impostor on its port) sends: read or
        /// refused, never a panic.
        #[test]
        fn any_reply_parses_or_is_refused(
            reply in "\\PC{0,80}|( */[0-9.:é]{0,12}\\[[0-9]\\]\\((sid=0x[0-9a-f]{0,17},?)?[a-z=0-9,]{0,12}\\)?\n){0,4}|(0x[0-9a-g]{0,17}\n\t/[^\n]{0,8}\n){0,3}",
        ) {
            let _ = parse_cons(&reply);
            let _ = parse_wchc(&reply);
            let _ = parse_hex_session(&reply);
            if let Ok(json) = serde_json::from_str::<Json>(&reply) {
                let _ = parse_admin_connections(&json);
                let _ = parse_admin_watches(&json);
            }
        }

        #[test]
        fn any_json_reply_parses_or_is_refused(id in proptest::prelude::any::<i64>(), text in "\\PC{0,20}") {
            let json = serde_json::json!({
                "connections": [{"session_id": id, "remote_socket_address": text}, {"session_id": text}],
                "session_id_to_watched_paths": {text.clone(): [text.clone(), id]},
            });
            let _ = parse_admin_connections(&json);
            let _ = parse_admin_watches(&json);
            let _ = json_session(&json);
        }
    }
}
