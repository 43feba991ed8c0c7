//! The connect string `host:port[,host:port...][/chroot]`, where a host may
//! say how to talk to it: `tcp://host:port` in plain text, `tcp+tls://host:port`
//! over TLS.
//!
//! Parsed and checked here, before any connection, so that a malformed host
//! string exits 2 with a message instead of a client-library error.

use std::fmt;

use super::path;
use crate::usage::UsageError;

/// The port ZooKeeper listens on when a host names none.
const DEFAULT_PORT: u16 = 2181;

/// How a server is talked to, when its host string says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Protocol {
    /// No prefix: plain text, or TLS with `--tls`.
    Unsaid,
    /// `tcp://`
    Plain,
    /// `tcp+tls://`
    Tls,
}

impl Protocol {
    const PREFIXES: [(Protocol, &'static str); 2] =
        [(Protocol::Tls, "tcp+tls://"), (Protocol::Plain, "tcp://")];

    fn prefix(self) -> &'static str {
        Protocol::PREFIXES
            .iter()
            .find(|(protocol, _)| *protocol == self)
            .map_or("", |(_, prefix)| prefix)
    }

    /// Splits a `tcp://` or `tcp+tls://` prefix off a server.
    fn split(server: &str) -> (Protocol, &str) {
        Protocol::PREFIXES
            .iter()
            .find_map(|(protocol, prefix)| {
                server.strip_prefix(prefix).map(|rest| (*protocol, rest))
            })
            .unwrap_or((Protocol::Unsaid, server))
    }
}

/// One server of the connect string.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Server {
    protocol: Protocol,
    host: String,
    port: u16,
}

/// A parsed connect string: the servers to try and an optional chroot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hosts {
    servers: Vec<Server>,
    chroot: Option<String>,
}

impl Hosts {
    /// Parses `host[:port][,host[:port]...][/chroot]`. Hosts may be names,
    /// IPv4 addresses or bracketed IPv6 addresses; a missing port is 2181.
    pub fn parse(text: &str) -> Result<Hosts, UsageError> {
        let bad = |why: String| UsageError::new(format!("bad host string {text:?}: {why}"));
        let (list, chroot) = split_chroot(text);
        if let Some(chroot) = chroot {
            path::validate(chroot).map_err(|e| bad(format!("chroot: {e}")))?;
        }
        if list.trim().is_empty() {
            return Err(bad("no host given".into()));
        }
        let servers = list
            .split(',')
            .map(|server| parse_server(server.trim()).map_err(&bad))
            .collect::<Result<Vec<_>, _>>()?;
        let chroot = chroot.filter(|c| *c != "/").map(str::to_owned);
        Ok(Hosts { servers, chroot })
    }

    /// The ensemble members the connect string names: host and client port.
    pub fn members(&self) -> Vec<(String, u16)> {
        self.servers
            .iter()
            .map(|s| (s.host.clone(), s.port))
            .collect()
    }

    /// The chroot, if any: the prefix of every path the server sees.
    pub fn chroot(&self) -> Option<&str> {
        self.chroot.as_deref()
    }

    /// The servers, as `host:port` with their protocol prefix, for messages.
    pub fn servers(&self) -> String {
        self.servers
            .iter()
            .map(|server| {
                format!(
                    "{}{}",
                    server.protocol.prefix(),
                    format_server(&server.host, server.port)
                )
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// True when some server is named with `tcp+tls://`.
    pub fn any_tls(&self) -> bool {
        self.servers.iter().any(|s| s.protocol == Protocol::Tls)
    }

    /// Every server as host and port, with whether it is spoken to in TLS
    /// (`tcp+tls://`, or unprefixed when `every_host` is set: `--tls` was
    /// given).
    pub(super) fn with_tls(&self, every_host: bool) -> impl Iterator<Item = (&str, u16, bool)> {
        self.servers.iter().map(move |s| {
            let tls = match s.protocol {
                Protocol::Tls => true,
                Protocol::Unsaid => every_host,
                Protocol::Plain => false,
            };
            (s.host.as_str(), s.port, tls)
        })
    }
}

/// Splits `servers/chroot` at the first `/` that is not part of a
/// `tcp://` or `tcp+tls://` prefix.
fn split_chroot(text: &str) -> (&str, Option<&str>) {
    let mut from = 0;
    while let Some(found) = text[from..].find('/') {
        let at = from + found;
        // Only a whole `//` ends a prefix; skipping two bytes after a lone
        // `/` could land inside the next character (`tcp:/é`).
        let ends_prefix = text[at..].starts_with("//")
            && Protocol::PREFIXES
                .iter()
                .any(|(_, prefix)| text[..at + 2].ends_with(prefix));
        if ends_prefix {
            from = at + 2;
            continue;
        }
        return (&text[..at], Some(&text[at..]));
    }
    (text, None)
}

impl fmt::Display for Hosts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.servers())?;
        if let Some(chroot) = &self.chroot {
            f.write_str(chroot)?;
        }
        Ok(())
    }
}

pub(crate) fn format_server(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// One server as the connect string writes it, `host[:port]` (a port left
/// out is 2181), as its host and port; a `tcp://` or `tcp+tls://` prefix
/// says nothing here.
pub(crate) fn parse_address(text: &str) -> Result<(String, u16), String> {
    parse_server(text).map(|server| (server.host, server.port))
}

fn parse_server(server: &str) -> Result<Server, String> {
    let (protocol, server) = Protocol::split(server);
    if server.is_empty() {
        return Err("empty host in the list".into());
    }
    let (host, port) = if let Some(rest) = server.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("unclosed '[' in {server:?}"))?;
        match after {
            "" => (host, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return Err(format!("unexpected text after ']' in {server:?}")),
            },
        }
    } else {
        match server.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (server, None),
        }
    };
    if host.is_empty() || host.chars().any(|c| c.is_whitespace()) {
        return Err(format!("bad host name in {server:?}"));
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(port) => match port.parse::<u16>() {
            Ok(port) if port > 0 => port,
            _ => return Err(format!("bad port {port:?} in {server:?}")),
        },
    };
    Ok(Server {
        protocol,
        host: host.to_owned(),
        port,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_several_hosts_and_a_chroot() {
        let hosts = Hosts::parse("zk1:2181,zk2,10.0.0.3:2182/app/locks").unwrap();
        assert_eq!(hosts.servers(), "zk1:2181,zk2:2181,10.0.0.3:2182");
        assert_eq!(
            hosts.to_string(),
            "zk1:2181,zk2:2181,10.0.0.3:2182/app/locks"
        );
    }

    #[test]
    fn each_host_may_name_its_protocol() {
        let hosts = Hosts::parse("tcp+tls://zk1:2281,tcp://zk2,zk3/app").unwrap();
        assert_eq!(
            hosts.servers(),
            "tcp+tls://zk1:2281,tcp://zk2:2181,zk3:2181"
        );
        assert_eq!(
            hosts.to_string(),
            "tcp+tls://zk1:2281,tcp://zk2:2181,zk3:2181/app"
        );
        assert!(hosts.any_tls());
        let tls = |every_host| {
            let servers = hosts.with_tls(every_host).filter(|&(_, _, tls)| tls);
            servers
                .map(|(host, port, _)| (host, port))
                .collect::<Vec<_>>()
        };
        assert_eq!(tls(false), [("zk1", 2281)]);
        assert_eq!(tls(true).len(), 2);
        assert!(Hosts::parse("tcp+tls://").is_err());
        assert!(Hosts::parse("udp://zk1").is_err());
    }

    #[test]
    fn parses_ipv6() {
        let hosts = Hosts::parse("[::1]:2181").unwrap();
        assert_eq!(hosts.to_string(), "[::1]:2181");
    }

    #[test]
    fn rejects_malformed_host_strings() {
        for (text, why) in [
            ("", "no host"),
            ("zk1:notaport", "bad port"),
            ("zk1:0", "bad port"),
            ("zk1:99999", "bad port"),
            ("zk1,,zk2", "empty host"),
            ("zk1:2181/a/", "chroot"),
            ("zk1:2181//a", "chroot"),
            ("[::1", "unclosed"),
            // A lone `/` after `tcp:` with a multi-byte character next.
            ("tcp:/é", "bad port"),
            ("tcp+tls:/配", "bad port"),
            ("tcp://é:２１８１", "bad port"),
        ] {
            let err = Hosts::parse(text).unwrap_err().to_string();
            assert!(err.contains(why), "{text:?}: {err}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        /// Any text is a connect string or a usage error, never a panic.
        #[test]
        fn any_text_parses_or_is_refused(text in "\\PC{0,30}|(tcp(\\+tls)?:/{0,2})?[a-zé配:\\[\\]0-9,/]{0,20}") {
            let _ = Hosts::parse(&text);
        }

        /// A parsed connect string prints as one that parses to the same.
        #[test]
        fn printed_hosts_parse_back(text in "(tcp(\\+tls)?://)?[a-z0-9é]{1,8}(:[0-9]{1,5})?(,[a-z]{1,5})?(/[a-zé]{1,5})?") {
            if let Ok(hosts) = Hosts::parse(&text) {
                proptest::prop_assert_eq!(Hosts::parse(&hosts.to_string()).ok(), Some(hosts));
            }
        }
    }
}
