//! Asking one member who is connected to it, and making sure the answer is
//! its own.
//!
//! A member answers through the `cons` (and `wchc`) four-letter words on
//! its client port when its `4lw.commands.whitelist` allows them: what
//! comes back on that port is that member's. Else through its AdminServer's
//! `connections` (and `watches`) commands over HTTP, on the port
//! `--admin-port` gives it. That port may be another member's (members
//! sharing a host, one `--admin-port` for all), and another member's list
//! would leave out every session connected to this one; so the answer
//! counts only when the same AdminServer's `configuration` gives this
//! member's client port, and the server id the ensemble's configuration
//! gives its address where it gives one. Where the ensemble's
//! configuration cannot be read, `srvr` (the one word every whitelist
//! allows by default) says whether the member runs alone.
//!
//! Every answer is outside input: read up to a limit (an answer longer is
//! no answer, since a list cut short would leave sessions out), all the
//! answers of one survey together up to [`SURVEY_BYTES`], and parsed into
//! what is kept without building a tree of the rest.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::Ask;
use super::members::Member;
use crate::zk::hosts::format_server;

/// The longest list of connections read from one member: some 24,000
/// connections as the AdminServer writes them, 60,000 as `cons` does.
const MAX_LIST: usize = 16 << 20;

/// The longest answer about watches, which only annotate (`stat`'s "not
/// watching"): beyond it they are unknown, and nothing else is.
const MAX_WATCHES: usize = 4 << 20;

/// The longest answer to `configuration` or `srvr`: a page of text.
const MAX_SMALL: usize = 64 << 10;

/// The most one survey reads from all its members together.
pub(super) const SURVEY_BYTES: usize = 64 << 20;

/// How much is read from a socket at a time.
const CHUNK: usize = 16 << 10;

/// What is left of one survey's [`SURVEY_BYTES`], shared by its members.
#[derive(Debug)]
pub(super) struct Budget {
    left: AtomicUsize,
}

impl Budget {
    pub(super) fn new() -> Budget {
        Budget {
            left: AtomicUsize::new(SURVEY_BYTES),
        }
    }

    /// Takes `n` bytes; false when fewer are left.
    fn take(&self, n: usize) -> bool {
        self.left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(n)
            })
            .is_ok()
    }
}

/// What one member lists: session → client address, and session → watched
/// paths when asked and allowed.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Lists {
    pub(super) connections: Vec<(i64, String)>,
    pub(super) watches: Option<Vec<(i64, Vec<String>)>>,
}

/// One member's answer, proven its own.
#[derive(Debug)]
pub(super) struct Answer {
    pub(super) lists: Lists,
    /// The server id its AdminServer proved; `None` when it answered `cons`.
    pub(super) id: Option<i64>,
    /// Whether `srvr` says it runs alone; asked only with `alone`.
    pub(super) standalone: bool,
}

/// Asks `member` for its lists (through `cons`, else its AdminServer, whose
/// answer must prove itself), and with `alone` whether it runs alone; the
/// error says why no list of its own came.
pub(super) async fn ask_member(
    member: &Member,
    ask: Ask,
    alone: bool,
    budget: &Budget,
) -> Result<Answer, String> {
    let standalone = async { alone && runs_alone(member, budget).await };
    let (lists, standalone) = tokio::join!(lists_of(member, ask, budget), standalone);
    let (lists, id) = lists?;
    Ok(Answer {
        lists,
        id,
        standalone,
    })
}

async fn lists_of(
    member: &Member,
    ask: Ask,
    budget: &Budget,
) -> Result<(Lists, Option<i64>), String> {
    let refused = match four_letter_lists(member, ask, budget).await {
        Ok(lists) => return Ok((lists, None)),
        Err(why) => why,
    };
    match admin_lists(member, ask, budget).await {
        Ok((lists, id)) => Ok((lists, Some(id))),
        Err(why) => Err(format!(
            "{refused}, and its AdminServer on port {} {why}",
            member.admin_port
        )),
    }
}

async fn four_letter_lists(member: &Member, ask: Ask, budget: &Budget) -> Result<Lists, String> {
    let (cons, wchc) = tokio::join!(four_letter_word(member, "cons", MAX_LIST, budget), async {
        match ask {
            Ask::ConnectionsAndWatches => {
                Some(four_letter_word(member, "wchc", MAX_WATCHES, budget).await)
            }
            Ask::Connections => None,
        }
    });
    let connections = parse_cons(&cons?).ok_or("refuses the cons four-letter word")?;
    let watches = wchc
        .and_then(Result::ok)
        .and_then(|reply| parse_wchc(&reply));
    Ok(Lists {
        connections,
        watches,
    })
}

async fn admin_lists(member: &Member, ask: Ask, budget: &Budget) -> Result<(Lists, i64), String> {
    let (configuration, connections, watches) = tokio::join!(
        admin_command(member, "configuration", MAX_SMALL, budget),
        admin_command(member, "connections", MAX_LIST, budget),
        async {
            match ask {
                Ask::ConnectionsAndWatches => {
                    Some(admin_command(member, "watches", MAX_WATCHES, budget).await)
                }
                Ask::Connections => None,
            }
        }
    );
    let id = prove(member, &configuration?)?;
    let connections =
        parse_admin_connections(&connections?).ok_or("gave no list of connections")?;
    let watches = watches
        .and_then(Result::ok)
        .and_then(|body| parse_admin_watches(&body));
    Ok((
        Lists {
            connections,
            watches,
        },
        id,
    ))
}

/// Whether `srvr` says the member runs alone.
async fn runs_alone(member: &Member, budget: &Budget) -> bool {
    four_letter_word(member, "srvr", MAX_SMALL, budget)
        .await
        .is_ok_and(|reply| reply.lines().any(|line| line.trim() == "Mode: standalone"))
}

/// The AdminServer's `configuration`: whose server it is.
#[derive(Deserialize)]
struct Configuration {
    client_port: i64,
    server_id: i64,
}

/// The server id of `member`'s AdminServer when its `configuration` (the
/// body of its answer) proves it is that member's: the same client port,
/// and the id the ensemble's configuration gives the member, if it gives
/// one. The error says whose it is instead.
fn prove(member: &Member, configuration: &str) -> Result<i64, String> {
    let Configuration {
        client_port,
        server_id,
    } = serde_json::from_str(configuration)
        .map_err(|_| "gave no configuration (client_port, server_id) to say whose it is")?;
    if client_port != i64::from(member.port) {
        return Err(format!(
            "is that of server.{server_id}, whose client port is {client_port}, not {}",
            member.port
        ));
    }
    match member.id {
        Some(id) if id != server_id => Err(format!(
            "is that of server.{server_id}, where /zookeeper/config names server.{id} at {}",
            member.address()
        )),
        _ => Ok(server_id),
    }
}

/// Sends a four-letter word to the member's client port and reads the
/// whole reply, up to `limit` bytes.
async fn four_letter_word(
    member: &Member,
    word: &str,
    limit: usize,
    budget: &Budget,
) -> Result<String, String> {
    exchange(&member.host, member.port, word.as_bytes(), limit, budget)
        .await
        .map(|reply| String::from_utf8_lossy(&reply).into_owned())
        .map_err(|why| format!("did not answer the {word} four-letter word ({why})"))
}

/// Runs an AdminServer command over HTTP and returns the body of its
/// answer, up to `limit` bytes in all.
async fn admin_command(
    member: &Member,
    command: &str,
    limit: usize,
    budget: &Budget,
) -> Result<String, String> {
    let (host, port) = (&member.host, member.admin_port);
    let request = format!(
        "GET /commands/{command} HTTP/1.0\r\nHost: {}\r\nConnection: close\r\n\r\n",
        format_server(host, port)
    );
    let mut reply = exchange(host, port, request.as_bytes(), limit, budget)
        .await
        .map_err(|why| format!("did not answer ({why})"))?;
    let end = reply
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .ok_or("gave no HTTP answer")?;
    let head = String::from_utf8_lossy(&reply[..end]);
    let status = head.split_whitespace().nth(1).unwrap_or_default();
    if status != "200" {
        let status: String = status.chars().take(16).collect();
        return Err(format!("answered HTTP status {status:?} to {command}"));
    }
    // The body alone, in the buffer it came in: an answer near the limit
    // is not copied.
    reply.drain(..end + 4);
    String::from_utf8(reply).map_err(|_| format!("answered {command} in no UTF-8"))
}

/// Connects, writes `request`, and reads until the peer closes: at most
/// `limit` bytes, each taken from `budget` (the caller bounds the time).
async fn exchange(
    host: &str,
    port: u16,
    request: &[u8],
    limit: usize,
    budget: &Budget,
) -> Result<Vec<u8>, String> {
    let mut stream = TcpStream::connect((host, port))
        .await
        .map_err(|err| err.to_string())?;
    stream
        .write_all(request)
        .await
        .map_err(|err| err.to_string())?;
    let mut reply = Vec::new();
    let mut chunk = vec![0; CHUNK];
    loop {
        let read = stream
            .read(&mut chunk)
            .await
            .map_err(|err| err.to_string())?;
        if read == 0 {
            return Ok(reply);
        }
        if reply.len().saturating_add(read) > limit {
            return Err(format!("an answer over {} KiB", limit >> 10));
        }
        if !budget.take(read) {
            return Err(format!(
                "the members' answers together went over {} MiB",
                SURVEY_BYTES >> 20
            ));
        }
        reply.extend_from_slice(&chunk[..read]);
    }
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

/// The sessions and client addresses of a `connections` answer, plain and
/// TLS connections alike.
fn parse_admin_connections(body: &str) -> Option<Vec<(i64, String)>> {
    #[derive(Deserialize)]
    struct Reply {
        connections: Sessions,
        #[serde(default)]
        secure_connections: Option<Sessions>,
    }
    let reply: Reply = serde_json::from_str(body).ok()?;
    let mut sessions = reply.connections.0;
    sessions.extend(reply.secure_connections.map(|s| s.0).unwrap_or_default());
    Some(sessions)
}

/// The sessions of a `watches` answer, with the paths each watches.
fn parse_admin_watches(body: &str) -> Option<Vec<(i64, Vec<String>)>> {
    #[derive(Deserialize)]
    struct Reply {
        session_id_to_watched_paths: Watched,
    }
    serde_json::from_str::<Reply>(body)
        .ok()
        .map(|reply| reply.session_id_to_watched_paths.0)
}

/// A session id as the AdminServer writes it: a JSON number (Java's signed
/// long) or a decimal string (a map key).
struct SessionId(i64);

impl<'de> Deserialize<'de> for SessionId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<SessionId, D::Error> {
        struct Id;
        impl Visitor<'_> for Id {
            type Value = SessionId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a session id")
            }
            fn visit_i64<E>(self, id: i64) -> Result<SessionId, E> {
                Ok(SessionId(id))
            }
            fn visit_u64<E>(self, id: u64) -> Result<SessionId, E> {
                Ok(SessionId(id as i64))
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<SessionId, E> {
                text.parse::<i64>()
                    .or_else(|_| text.parse::<u64>().map(|id| id as i64))
                    .map(SessionId)
                    .map_err(|_| E::custom("not a session id"))
            }
        }
        deserializer.deserialize_any(Id)
    }
}

/// One connection as the AdminServer describes it; its other fields are
/// passed over as they are read.
#[derive(Deserialize)]
struct Connection {
    session_id: Option<SessionId>,
    remote_socket_address: Option<String>,
}

/// The sessions and client addresses of a list of connections, each kept
/// as it is read and only when it has both (a connection still shaking
/// hands has no session): memory follows the sessions, not the list.
struct Sessions(Vec<(i64, String)>);

impl<'de> Deserialize<'de> for Sessions {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Sessions, D::Error> {
        struct Each;
        impl<'de> Visitor<'de> for Each {
            type Value = Sessions;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of connections")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut list: A) -> Result<Sessions, A::Error> {
                let mut sessions = Vec::new();
                while let Some(connection) = list.next_element::<Connection>()? {
                    if let Connection {
                        session_id: Some(SessionId(session)),
                        remote_socket_address: Some(address),
                    } = connection
                    {
                        let address = match address.strip_prefix('/') {
                            Some(bare) => bare.to_owned(),
                            None => address,
                        };
                        sessions.push((session, address));
                    }
                }
                Ok(Sessions(sessions))
            }
        }
        deserializer.deserialize_seq(Each)
    }
}

/// Session → watched paths, each session kept as it is read.
struct Watched(Vec<(i64, Vec<String>)>);

impl<'de> Deserialize<'de> for Watched {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Watched, D::Error> {
        struct Each;
        impl<'de> Visitor<'de> for Each {
            type Value = Watched;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("sessions and their watched paths")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Watched, A::Error> {
                let mut watched = Vec::new();
                while let Some((SessionId(session), paths)) =
                    map.next_entry::<SessionId, Vec<String>>()?
                {
                    watched.push((session, paths));
                }
                Ok(Watched(watched))
            }
        }
        deserializer.deserialize_map(Each)
    }
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
        let connections = r#"{"connections":[{"remote_socket_address":"127.0.0.1:34750","session_id":72057825283801088,"interest_ops":1},{"remote_socket_address":"127.0.0.1:1"},{}],
               "secure_connections":[{"remote_socket_address":"/10.0.0.2:1","session_id":-9151314442816847871}],
               "command":"connections","error":null}"#;
        assert_eq!(
            parse_admin_connections(connections),
            Some(vec![
                (72057825283801088, "127.0.0.1:34750".to_owned()),
                (-9151314442816847871, "10.0.0.2:1".to_owned()),
            ])
        );
        assert_eq!(
            parse_admin_connections(r#"{"connections":[]}"#),
            Some(vec![]),
            "3.5 has no secure_connections"
        );
        assert_eq!(
            parse_admin_connections(r#"{"command":"connections"}"#),
            None
        );
        let watches = r#"{"session_id_to_watched_paths":{"72057825283801088":["/e/xx"]},"command":"watches"}"#;
        assert_eq!(
            parse_admin_watches(watches),
            Some(vec![(72057825283801088, vec!["/e/xx".to_owned()])])
        );
    }

    fn member(port: u16, id: Option<i64>) -> Member {
        Member {
            host: "127.0.0.1".to_owned(),
            port,
            admin_port: 8080,
            id,
        }
    }

    /// The `configuration` answer of server `id` serving clients on `port`.
    fn configuration(port: i64, id: i64) -> String {
        format!(
            r#"{{"client_port":{port},"data_dir":"/d","server_id":{id},"command":"configuration","error":null}}"#
        )
    }

    #[test]
    fn an_admin_server_proves_it_is_the_members_by_its_client_port_and_server_id() {
        assert_eq!(prove(&member(2182, None), &configuration(2182, 2)), Ok(2));
        assert_eq!(
            prove(&member(2182, Some(2)), &configuration(2182, 2)),
            Ok(2)
        );
        // Another member's AdminServer, asked at this member's port.
        let other = prove(&member(2182, None), &configuration(2181, 1)).unwrap_err();
        assert!(
            other.contains("server.1, whose client port is 2181, not 2182"),
            "{other}"
        );
        // The client port agrees, the id the configuration gives does not.
        let id = prove(&member(2182, Some(2)), &configuration(2182, 3)).unwrap_err();
        assert!(id.contains("names server.2 at 127.0.0.1:2182"), "{id}");
        // A secure-only server has no client port (-1): nothing proves it.
        assert!(prove(&member(2281, None), &configuration(-1, 1)).is_err());
        for unsaid in ["", "{}", r#"{"client_port":"2182","server_id":2}"#, "[]"] {
            assert!(prove(&member(2182, None), unsaid).is_err(), "{unsaid:?}");
        }
    }

    #[test]
    fn the_budget_is_shared_and_never_overdrawn() {
        let budget = Budget::new();
        assert!(budget.take(SURVEY_BYTES - 1));
        assert!(!budget.take(2));
        assert!(budget.take(1));
        assert!(!budget.take(1));
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
            let _ = parse_admin_connections(&reply);
            let _ = parse_admin_watches(&reply);
            let _ = prove(&member(1, Some(1)), &reply);
        }

        #[test]
        fn any_json_reply_parses_or_is_refused(id in proptest::prelude::any::<i64>(), text in "\\PC{0,20}") {
            let json = serde_json::json!({
                "connections": [{"session_id": id, "remote_socket_address": text}, {"session_id": text}],
                "session_id_to_watched_paths": {text.clone(): [text.clone(), id]},
                "client_port": id,
                "server_id": text,
            })
            .to_string();
            let _ = parse_admin_connections(&json);
            let _ = parse_admin_watches(&json);
            let _ = prove(&member(1, None), &json);
        }
    }
}
