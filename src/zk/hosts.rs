//! The connect string `host:port[,host:port...][/chroot]`.
//!
//! Parsed and checked here, before any connection, so that a malformed host
//! string exits 2 with a message instead of a client-library error.

use std::fmt;

use super::path;
use crate::usage::UsageError;

/// The port ZooKeeper listens on when a host names none.
const DEFAULT_PORT: u16 = 2181;

/// A parsed connect string: the servers to try and an optional chroot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hosts {
    servers: Vec<(String, u16)>,
    chroot: Option<String>,
}

impl Hosts {
    /// Parses `host[:port][,host[:port]...][/chroot]`. Hosts may be names,
    /// IPv4 addresses or bracketed IPv6 addresses; a missing port is 2181.
    pub fn parse(text: &str) -> Result<Hosts, UsageError> {
        let bad = |why: String| UsageError::new(format!("bad host string {text:?}: {why}"));
        let (list, chroot) = match text.find('/') {
            Some(i) => (&text[..i], Some(&text[i..])),
            None => (text, None),
        };
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
    pub fn members(&self) -> &[(String, u16)] {
        &self.servers
    }

    /// The chroot, if any: the prefix of every path the server sees.
    pub fn chroot(&self) -> Option<&str> {
        self.chroot.as_deref()
    }

    /// The servers, as `host:port`, for messages.
    pub fn servers(&self) -> String {
        self.servers
            .iter()
            .map(|(host, port)| format_server(host, *port))
            .collect::<Vec<_>>()
            .join(",")
    }
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

fn parse_server(server: &str) -> Result<(String, u16), String> {
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
    Ok((host.to_owned(), port))
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
        ] {
            let err = Hosts::parse(text).unwrap_err().to_string();
            assert!(err.contains(why), "{text:?}: {err}");
        }
    }
}
