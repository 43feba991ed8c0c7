//! Who the ensemble's members are, where each is asked, and whether the
//! members heard from stand for the whole ensemble.
//!
//! The members asked are those of the connect string and those the
//! ensemble's own configuration (`/zookeeper/config`) names with a client
//! address, observers among them: a client may be connected to a server the
//! connect string leaves out. The configuration is also what says the
//! lists are whole: every `server.N` it names must be heard from, or a
//! session connected there would pass for disconnected. A dynamic
//! configuration gives each server's client address (`;HOST:PORT`), and so
//! where it is asked and which server id its AdminServer must prove. A
//! static one gives none; such a server is then known by the id an
//! AdminServer proved, or else stood for by a member of the connect string
//! that answered `cons` on its host, one member for one server.
//!
//! An empty configuration is a standalone server's: from 3.5 on, a server
//! in an ensemble always keeps the ensemble's there. Where none can be read
//! (3.4 keeps none; an ACL may refuse it), nothing says who else is a
//! member, so the lists are whole only when every member says, through
//! `srvr`, that it runs alone.
//!
//! The configuration names no AdminServer ports, and members that share a
//! host listen on different ones: `--admin-port` gives them per member
//! ([`AdminPorts`]).

use std::collections::{HashMap, HashSet};

use super::super::hosts::{format_server, parse_address};
use crate::zk::Error;

/// The AdminServer's port when none is given: ZooKeeper's default.
const DEFAULT_ADMIN_PORT: u16 = 8080;

/// The most members ever asked: a configuration a server sends may name any
/// number, and each costs a connection.
const MAX_MEMBERS: usize = 256;

/// How many servers a message names before it counts the rest.
const NAMED_IN_A_MESSAGE: usize = 3;

/// Where each member's AdminServer listens (`--admin-port`): one port for
/// every member not named, and a port of its own for each member named by
/// its client address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdminPorts {
    every: u16,
    /// `((host, client port), AdminServer port)`, the last one given for a
    /// member only.
    named: Vec<((String, u16), u16)>,
}

impl Default for AdminPorts {
    fn default() -> AdminPorts {
        AdminPorts {
            every: DEFAULT_ADMIN_PORT,
            named: Vec::new(),
        }
    }
}

/// One `--admin-port` value: `PORT` for every member not named, or
/// `HOST:CLIENTPORT=PORT` for one member, its host and client port as the
/// connect string writes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum AdminPort {
    Every(u16),
    Member((String, u16), u16),
}

impl AdminPort {
    pub(crate) fn parse(value: &str) -> Result<AdminPort, String> {
        let bad = |why: String| {
            format!("{why}: write PORT for every member, or HOST:CLIENTPORT=PORT for one")
        };
        match value.rsplit_once('=') {
            None => port(value).map(AdminPort::Every).map_err(bad),
            Some((member, admin)) => {
                let admin = port(admin).map_err(bad)?;
                let member = parse_address(member.trim()).map_err(bad)?;
                Ok(AdminPort::Member(member, admin))
            }
        }
    }
}

impl AdminPorts {
    /// The ports `values` give: the last bare `PORT` for every member not
    /// named, and the last port given for each member named.
    pub(crate) fn new(values: &[AdminPort]) -> AdminPorts {
        let mut ports = AdminPorts::default();
        for value in values {
            match value {
                AdminPort::Every(every) => ports.every = *every,
                AdminPort::Member(member, admin) => {
                    ports.named.retain(|(named, _)| !is_member(named, member));
                    ports.named.push((member.clone(), *admin));
                }
            }
        }
        ports
    }

    /// The AdminServer port of the member at `host:port`.
    fn of(&self, host: &str, port: u16) -> u16 {
        self.named
            .iter()
            .find(|((named, client), _)| *client == port && same_host(named, host))
            .map_or(self.every, |(_, admin)| *admin)
    }
}

fn port(text: &str) -> Result<u16, String> {
    match text.trim().parse::<u16>() {
        Ok(port) if port > 0 => Ok(port),
        _ => Err(format!("bad port {text:?}")),
    }
}

/// Host names are not case-sensitive; addresses compare as written.
fn same_host(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

fn is_member((host, port): &(String, u16), (other, other_port): &(String, u16)) -> bool {
    port == other_port && same_host(host, other)
}

/// One member to ask.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Member {
    pub(super) host: String,
    /// Its client port.
    pub(super) port: u16,
    pub(super) admin_port: u16,
    /// The server id the configuration gives this client address: its
    /// AdminServer must say the same.
    pub(super) id: Option<i64>,
}

impl Member {
    /// `host:port`, as messages and `client.server` name it.
    pub(super) fn address(&self) -> String {
        format_server(&self.host, self.port)
    }
}

/// Every member to ask, and what says whether they are the whole ensemble.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Members {
    pub(super) asked: Vec<Member>,
    /// Members that cannot be asked, with why: no survey's lists are whole.
    pub(super) unasked: Vec<String>,
    pub(super) ensemble: Ensemble,
}

impl Members {
    /// The members of `connect` (`(host, client port)` each) and those
    /// `ensemble` names with a client address, each asked at its port of
    /// `ports`.
    pub(super) fn new(
        connect: Vec<(String, u16)>,
        ports: &AdminPorts,
        ensemble: Ensemble,
    ) -> Members {
        let member = |(host, port): (String, u16), id| Member {
            admin_port: ports.of(&host, port),
            host,
            port,
            id,
        };
        let mut members = Members {
            asked: connect
                .into_iter()
                .map(|address| member(address, None))
                .collect(),
            unasked: Vec::new(),
            ensemble,
        };
        let Ensemble::Configured(servers) = &members.ensemble else {
            return members;
        };
        for server in servers {
            let Some(client) = &server.client else {
                continue;
            };
            let known = members
                .asked
                .iter()
                .position(|asked| asked.port == client.1 && same_host(&asked.host, &client.0));
            match known {
                Some(at) => members.asked[at].id = Some(server.id),
                None if members.asked.len() >= MAX_MEMBERS => members.unasked.push(format!(
                    "server.{} ({}) is beyond the {MAX_MEMBERS} members zklock asks",
                    server.id,
                    format_server(&client.0, client.1)
                )),
                None => members.asked.push(member(client.clone(), Some(server.id))),
            }
        }
        members
    }

    /// Whether the ensemble may have members nobody asked: its
    /// configuration could not be read.
    pub(super) fn needs_standalone(&self) -> bool {
        matches!(self.ensemble, Ensemble::Unread(_))
    }
}

/// What the ensemble's configuration says of its members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Ensemble {
    /// The servers it names.
    Configured(Vec<Configured>),
    /// It is empty: a standalone server, the only member.
    Standalone,
    /// It could not be read, for this reason.
    Unread(String),
}

impl Ensemble {
    /// What the configuration as read (`/zookeeper/config`) says. A
    /// configuration that names no server, or has a server line zklock
    /// cannot read, says nothing: it could leave a member out.
    pub(super) fn read(config: Result<Vec<u8>, Error>) -> Ensemble {
        match config {
            Err(err) if err.is_no_node() => Ensemble::Unread(
                "the server keeps no /zookeeper/config (ZooKeeper before 3.5)".to_owned(),
            ),
            Err(err) => Ensemble::Unread(err.to_string()),
            Ok(config) if config.is_empty() => Ensemble::Standalone,
            Ok(config) => match configured(&config) {
                Some(servers) if servers.is_empty() => {
                    Ensemble::Unread("/zookeeper/config names no server".to_owned())
                }
                Some(servers) => Ensemble::Configured(servers),
                None => Ensemble::Unread(
                    "/zookeeper/config has a server line zklock cannot read".to_owned(),
                ),
            },
        }
    }

    /// Each way the members `heard` (of those `asked`) fall short of the
    /// whole ensemble; empty when they stand for all of it.
    pub(super) fn unheard(&self, asked: &[Member], heard: &[Heard<'_>]) -> Vec<String> {
        match self {
            Ensemble::Standalone => Vec::new(),
            Ensemble::Unread(_) if !heard.is_empty() && heard.iter().all(|h| h.standalone) => {
                Vec::new()
            }
            Ensemble::Unread(why) => vec![format!(
                "{why}, and not every member says (srvr) that it runs alone: members nobody \
                 asked may hold connections"
            )],
            Ensemble::Configured(servers) => unplaced(servers, asked, heard),
        }
    }
}

/// A member whose list is proven its own, and what it said of itself.
#[derive(Clone, Copy, Debug)]
pub(super) struct Heard<'a> {
    pub(super) member: &'a Member,
    /// The server id its AdminServer proved; `None` when it answered `cons`.
    pub(super) id: Option<i64>,
    /// Whether it said, through `srvr`, that it runs alone (asked only when
    /// the configuration could not be read).
    pub(super) standalone: bool,
}

/// The servers `servers` names without a client address that no member
/// heard stands for, host by host, each host said once. A server given
/// with its client address was asked there, and a failure there is that
/// member's own. One without is stood for by the member whose AdminServer
/// proved its id, else by a member on its host that answered without
/// proving one (through `cons`), as many servers as there are such members.
/// A member there that did not answer at all might be one of them too: its
/// failure is said already, and a shortfall is said only beyond it.
fn unplaced(servers: &[Configured], asked: &[Member], heard: &[Heard<'_>]) -> Vec<String> {
    let proven: HashSet<i64> = heard.iter().filter_map(|h| h.id).collect();
    let mut by_host: HashMap<String, Vec<i64>> = HashMap::new();
    let mut hosts: Vec<&str> = Vec::new();
    for server in servers {
        if server.client.is_some() || proven.contains(&server.id) {
            continue;
        }
        let ids = by_host
            .entry(server.host.to_ascii_lowercase())
            .or_insert_with(|| {
                hosts.push(&server.host);
                Vec::new()
            });
        ids.push(server.id);
    }
    let proved_an_id = |member: &Member| {
        heard
            .iter()
            .any(|h| std::ptr::eq(h.member, member) && h.id.is_some())
    };
    hosts
        .into_iter()
        .filter_map(|host| {
            let ids = &by_host[&host.to_ascii_lowercase()];
            let could_be = asked
                .iter()
                .filter(|member| member.id.is_none() && same_host(&member.host, host))
                .filter(|member| !proved_an_id(member))
                .count();
            (ids.len() > could_be).then(|| {
                format!(
                    "/zookeeper/config names {} on {host} without a client address, and {} \
                     asked there could be them: name each member in the connect string",
                    servers_named(ids),
                    counted_members(could_be)
                )
            })
        })
        .collect()
}

/// `server.1, server.2 and 5 more`.
fn servers_named(ids: &[i64]) -> String {
    let mut names: Vec<String> = ids
        .iter()
        .take(NAMED_IN_A_MESSAGE)
        .map(|id| format!("server.{id}"))
        .collect();
    if ids.len() > NAMED_IN_A_MESSAGE {
        names.push(format!("{} more", ids.len() - NAMED_IN_A_MESSAGE));
    }
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

fn counted_members(n: usize) -> String {
    match n {
        0 => "no member".to_owned(),
        1 => "only 1 member".to_owned(),
        n => format!("only {n} members"),
    }
}

/// A server as a configuration names it, each line
/// `server.N=HOST:QUORUM:ELECTION[:ROLE][;[CLIENT_HOST:]CLIENT_PORT]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Configured {
    /// The N of `server.N`: its server id.
    id: i64,
    /// The server's own host.
    host: String,
    /// Where its clients connect; `None` when the line does not say. A
    /// wildcard client host (`0.0.0.0`, `::`) is reached at `host`.
    client: Option<(String, u16)>,
}

/// The servers of a configuration, other lines left out; `None` when a
/// server line cannot be read.
fn configured(config: &[u8]) -> Option<Vec<Configured>> {
    let text = String::from_utf8_lossy(config);
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.trim().split_once('=')?;
            let id = key.trim().strip_prefix("server.")?;
            Some(server_line(id, value))
        })
        .collect()
}

/// One `server.N` line's id and value.
fn server_line(id: &str, value: &str) -> Option<Configured> {
    let id = id.parse().ok()?;
    let (quorum, client) = match value.split_once(';') {
        Some((quorum, client)) => (quorum, Some(client.trim())),
        None => (value, None),
    };
    let host = split_host(quorum.trim())?.0;
    if host.is_empty() {
        return None;
    }
    let client = match client {
        Some(client) => Some(client_address(host, client)?),
        None => None,
    };
    Some(Configured {
        id,
        host: host.to_owned(),
        client,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn connect(members: &[(&str, u16)]) -> Vec<(String, u16)> {
        members
            .iter()
            .map(|(host, port)| ((*host).to_owned(), *port))
            .collect()
    }

    fn admin_ports(values: &[&str]) -> AdminPorts {
        let values: Vec<AdminPort> = values
            .iter()
            .map(|value| AdminPort::parse(value).unwrap())
            .collect();
        AdminPorts::new(&values)
    }

    #[test]
    fn admin_ports_are_given_for_every_member_or_one_at_a_time() {
        let ports = admin_ports(&["9000", "zk1:2181=8081", "[fd00::2]:2182=8082"]);
        assert_eq!(ports.of("zk1", 2181), 8081);
        assert_eq!(ports.of("ZK1", 2181), 8081, "host names ignore case");
        assert_eq!(ports.of("fd00::2", 2182), 8082);
        assert_eq!(ports.of("zk1", 2182), 9000, "another client port");
        assert_eq!(ports.of("zk3", 2181), 9000);
        assert_eq!(admin_ports(&[]).of("zk1", 2181), 8080);
        // The last value for one member wins; a bare port, the last too.
        let ports = admin_ports(&["zk1:2181=1", "7", "zk1:2181=2", "8"]);
        assert_eq!((ports.of("zk1", 2181), ports.of("zk2", 2181)), (2, 8));
        // A host without a port is on 2181, as in the connect string.
        assert_eq!(admin_ports(&["zk1=5"]).of("zk1", 2181), 5);
        for bad in [
            "",
            "0",
            "x",
            "70000",
            "zk1:2181=",
            "=8080",
            "zk1:0=8080",
            "zk1:2181=0",
            "[::1=80",
        ] {
            let err = AdminPort::parse(bad).unwrap_err();
            assert!(err.contains("HOST:CLIENTPORT=PORT"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn servers_come_from_the_configuration_with_their_client_addresses() {
        let config = b"server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181\n\
server.2=zk2:2888:3888:participant;zk2.clients:2182\n\
server.3=[fd00::3]:2888:3888:observer;2183\n\
server.4=zk4:2888:3888;[::]:2184\n\
server.5=zk5:2888:3888:participant\n\
version=100000000\n";
        let servers = configured(config).unwrap();
        let clients: Vec<_> = servers.iter().map(|s| s.client.clone()).collect();
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
        assert_eq!(
            servers.iter().map(|s| s.id).collect::<Vec<_>>(),
            [1, 2, 3, 4, 5]
        );
        // A server line that cannot be read could hide a member.
        for unreadable in [
            &b"server.x=zk1:2888:3888"[..],
            b"server.1=:2888:3888",
            b"server.1=zk1:2888:3888;zk1:nope",
            b"server.1=[zk1:2888:3888",
        ] {
            assert_eq!(configured(unreadable), None, "{unreadable:?}");
        }
    }

    #[test]
    fn what_the_configuration_says_of_the_ensemble() {
        assert_eq!(Ensemble::read(Ok(Vec::new())), Ensemble::Standalone);
        assert!(matches!(
            Ensemble::read(Err(Error::no_node("get", "/zookeeper/config"))),
            Ensemble::Unread(why) if why.contains("before 3.5")
        ));
        assert!(matches!(
            Ensemble::read(Ok(b"version=100000000\n".to_vec())),
            Ensemble::Unread(why) if why.contains("names no server")
        ));
        assert!(matches!(
            Ensemble::read(Ok(b"server.x=a:1:2".to_vec())),
            Ensemble::Unread(_)
        ));
    }

    #[test]
    fn members_of_the_configuration_are_asked_with_the_id_it_gives_them() {
        let config = b"server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181\n\
server.2=zk2:2888:3888:participant;zk2:2182\n\
server.5=zk5:2888:3888:participant\n";
        let ports = admin_ports(&["zk2:2182=8082"]);
        let members = Members::new(
            connect(&[("10.0.0.1", 2181), ("zk9", 2181)]),
            &ports,
            Ensemble::read(Ok(config.to_vec())),
        );
        let asked: Vec<_> = members
            .asked
            .iter()
            .map(|m| (m.address(), m.admin_port, m.id))
            .collect();
        assert_eq!(
            asked,
            [
                ("10.0.0.1:2181".to_owned(), 8080, Some(1)),
                ("zk9:2181".to_owned(), 8080, None),
                ("zk2:2182".to_owned(), 8082, Some(2)),
            ],
            "the connect string's member is not asked twice"
        );
        // A configuration of very many members: the rest are not asked, and
        // say so.
        let many: String = (0..1000)
            .map(|n| format!("server.{n}=h{n}:1:2;{}\n", 3000 + n))
            .collect();
        let members = Members::new(
            connect(&[("a", 1), ("b", 1)]),
            &ports,
            Ensemble::read(Ok(many.into_bytes())),
        );
        assert_eq!(members.asked.len(), MAX_MEMBERS);
        assert_eq!(members.unasked.len(), 1000 + 2 - MAX_MEMBERS);
    }

    fn heard(member: &Member, id: Option<i64>) -> Heard<'_> {
        Heard {
            member,
            id,
            standalone: false,
        }
    }

    #[test]
    fn servers_without_a_client_address_are_stood_for_by_proven_ids_or_one_member_each() {
        // Three members on one host, a static configuration: no client
        // addresses.
        let config = b"server.1=h:1:2\nserver.2=h:3:4\nserver.3=h:5:6\n".to_vec();
        let three = Members::new(
            connect(&[("h", 2181), ("h", 2182), ("h", 2183)]),
            &AdminPorts::default(),
            Ensemble::read(Ok(config.clone())),
        );
        let asked = &three.asked[..];
        let [one, two, third] = asked else {
            panic!("{three:?}");
        };
        let unheard = |heard: &[Heard<'_>]| three.ensemble.unheard(asked, heard);
        // Each by its AdminServer's proven id, or each through cons.
        assert!(
            unheard(&[
                heard(one, Some(1)),
                heard(two, Some(2)),
                heard(third, Some(3))
            ])
            .is_empty()
        );
        assert!(unheard(&[heard(one, None), heard(two, None), heard(third, None)]).is_empty());
        assert!(unheard(&[heard(one, None), heard(two, Some(2)), heard(third, None)]).is_empty());
        // An id the configuration does not name stands for nobody.
        let strangers = unheard(&[heard(one, Some(7)), heard(two, Some(8)), heard(third, None)]);
        assert_eq!(strangers.len(), 1, "{strangers:?}");
        assert!(
            strangers[0].contains("server.1, server.2 and server.3 on h"),
            "{strangers:?}"
        );
        assert!(
            strangers[0].contains("only 1 member asked"),
            "{strangers:?}"
        );
        // A member that did not answer might be one of them: its own
        // failure is said, and no more.
        assert!(unheard(&[heard(one, Some(1)), heard(third, None)]).is_empty());

        // Two members asked do not stand for three servers, nor does one on
        // another host.
        let two_of_three = Members::new(
            connect(&[("h", 2181), ("h", 2182), ("other", 2181)]),
            &AdminPorts::default(),
            Ensemble::read(Ok(config)),
        );
        let asked = &two_of_three.asked[..];
        let short = two_of_three.ensemble.unheard(
            asked,
            &[
                heard(&asked[0], Some(1)),
                heard(&asked[1], None),
                heard(&asked[2], None),
            ],
        );
        assert_eq!(short.len(), 1, "{short:?}");
        assert!(short[0].contains("server.2 and server.3 on h"), "{short:?}");
    }

    #[test]
    fn a_standalone_server_is_whole_and_an_unread_configuration_only_when_every_member_runs_alone()
    {
        let members = Members::new(
            connect(&[("h", 2181)]),
            &AdminPorts::default(),
            Ensemble::Standalone,
        );
        assert!(!members.needs_standalone());
        assert!(members.ensemble.unheard(&members.asked, &[]).is_empty());
        let unread = Ensemble::Unread("cannot read /zookeeper/config".to_owned());
        let members = Members::new(
            connect(&[("h", 2181), ("h", 2182)]),
            &AdminPorts::default(),
            unread,
        );
        assert!(members.needs_standalone());
        let asked = &members.asked[..];
        let [one, two] = asked else {
            panic!("{members:?}");
        };
        let alone = |member| Heard {
            standalone: true,
            ..heard(member, None)
        };
        assert!(
            members
                .ensemble
                .unheard(asked, &[alone(one), alone(two)])
                .is_empty()
        );
        let not = members
            .ensemble
            .unheard(asked, &[alone(one), heard(two, None)]);
        assert!(
            not[0].starts_with("cannot read /zookeeper/config, and"),
            "{not:?}"
        );
        assert_eq!(
            members.ensemble.unheard(asked, &[]).len(),
            1,
            "nobody heard"
        );
    }

    #[test]
    fn messages_name_a_few_servers_and_count_the_rest() {
        assert_eq!(servers_named(&[1]), "server.1");
        assert_eq!(servers_named(&[1, 2]), "server.1 and server.2");
        assert_eq!(
            servers_named(&[1, 2, 3, 4, 5]),
            "server.1, server.2, server.3 and 2 more"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        /// Any configuration a server sends, and any `--admin-port` value,
        /// is read or refused, never a panic.
        #[test]
        fn any_configuration_or_admin_port_is_read_or_refused(
            config in "(server\\.[0-9x-]{0,3}=[\\[\\]a-zé0-9.:]{0,12}(;[\\[\\]a-z0-9.:]{0,10})?\n|\\PC{0,20}\n){0,5}",
            value in "[\\[\\]a-zé0-9.:=]{0,16}",
        ) {
            let ensemble = Ensemble::read(Ok(config.into_bytes()));
            let members = Members::new(connect(&[("h", 1)]), &AdminPorts::default(), ensemble);
            let _ = members.ensemble.unheard(&members.asked, &[heard(&members.asked[0], None)]);
            let _ = AdminPort::parse(&value);
        }
    }
}
