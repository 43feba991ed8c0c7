//! Contender node names: which library made a node, what kind of lock it asks
//! for, and its sequence number.
//!
//! | dialect   | exclusive                                   | shared               |
//! |-----------|---------------------------------------------|----------------------|
//! | Curator   | `_c_<uuid>-lock-N`, `_c_<uuid>-__WRIT__N`   | `_c_<uuid>-__READ__N`|
//! | kazoo     | `<hex32>__lock__N`                          | `<hex32>__rlock__N`  |
//! | HBase 1.x | `write-N`                                   | `read-N`             |
//! | ZK recipe | `x-<sessionid>-N`                           |                      |
//! | ZK C recipe | `x-<sessionid as 16 hex digits>-N`        |                      |
//! | go-zookeeper | `_c_<hex32>-lock-N`                      |                      |
//! | generic   | `lock-N`, `<anything>-lock-N`               |                      |
//!
//! Elections are lock queues under another name: the lowest node leads.
//!
//! | dialect   | election                                    |
//! |-----------|---------------------------------------------|
//! | Curator   | `_c_<uuid>-latch-N` (LeaderLatch)           |
//! | Solr      | `<sessionid>-<node>-n_N` (overseer, shard leaders) |
//! | ZK recipe | `n_N`                                       |
//!
//! The same names are produced here for zklock's own nodes, so that parsing
//! and naming can never disagree.

use std::fmt;

use serde::Serialize;

/// The library whose naming a contender node follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dialect {
    Curator,
    Kazoo,
    Hbase,
    ZkRecipe,
    /// The lock recipe of ZooKeeper's C client.
    ZkCRecipe,
    GoZookeeper,
    Solr,
    /// Leader nodes only: Kafka's `/controller`.
    Kafka,
    /// Leader nodes only: Hadoop HA's `ActiveStandbyElectorLock`.
    Hadoop,
    /// Leader nodes only: Helix's `CONTROLLER/LEADER`.
    Helix,
    Generic,
}

impl Dialect {
    /// The name used in output and in `--dialect`.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Curator => "curator",
            Dialect::Kazoo => "kazoo",
            Dialect::Hbase => "hbase",
            Dialect::ZkRecipe => "zk-recipe",
            Dialect::ZkCRecipe => "zk-c-recipe",
            Dialect::GoZookeeper => "go-zookeeper",
            Dialect::Solr => "solr",
            Dialect::Kafka => "kafka",
            Dialect::Hadoop => "hadoop",
            Dialect::Helix => "helix",
            Dialect::Generic => "generic",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which recipe a contender's node takes part in, as its name says: a
/// mutex, a read or write lock, or an election. How it holds is its
/// [`ContenderMode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ContenderKind {
    /// A plain mutex.
    Mutex,
    /// The read side of a read-write lock.
    Read,
    /// The write side of a read-write lock.
    Write,
    /// A candidate in a leader election: the first one leads.
    Election,
}

/// How a contender holds once it is at the head of its queue: alone, shared
/// with other readers, or as one of a semaphore's leases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ContenderMode {
    Exclusive,
    Shared,
    Lease,
}

impl ContenderMode {
    /// The name used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            ContenderMode::Exclusive => "exclusive",
            ContenderMode::Shared => "shared",
            ContenderMode::Lease => "lease",
        }
    }
}

impl ContenderKind {
    /// Readers share; every other kind is exclusive. (Only a semaphore's
    /// lease, which has no kind of its own, holds as a lease.)
    pub fn mode(self) -> ContenderMode {
        match self {
            ContenderKind::Read => ContenderMode::Shared,
            ContenderKind::Mutex | ContenderKind::Write | ContenderKind::Election => {
                ContenderMode::Exclusive
            }
        }
    }
}

/// A recognised contender: its dialect, kind and sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Parsed {
    pub dialect: Dialect,
    pub kind: ContenderKind,
    pub sequence: i32,
}

/// Recognises a contender name, or `None` for a child that is not one (no
/// sequence suffix, or a name no dialect makes).
pub(crate) fn parse(name: &str) -> Option<Parsed> {
    let (stem, sequence) = split_sequence(name)?;
    let (dialect, kind) = classify(stem)?;
    Some(Parsed {
        dialect,
        kind,
        sequence,
    })
}

/// Splits the sequence suffix ZooKeeper appends (`%010d` of a signed 32-bit
/// counter, so `-000000001` or `-2147483648` after a wrap) from the stem.
pub(crate) fn split_sequence(name: &str) -> Option<(&str, i32)> {
    // The suffix is ten ASCII bytes, so a name whose last ten bytes fall
    // inside a multi-byte character (`déploiement`, `配置文件`) has none;
    // `get` says so instead of slicing through the character. Digits of
    // other scripts (Arabic-Indic, full-width) are not ASCII and never count.
    let split = name.len().checked_sub(10)?;
    let (stem, tail) = (name.get(..split)?, name.get(split..)?);
    if tail.bytes().all(|b| b.is_ascii_digit()) {
        let value: i64 = tail.parse().ok()?;
        return match i32::try_from(value) {
            Ok(value) => Some((stem, value)),
            // Only -2147483648 prints with ten digits after its sign.
            Err(_) => {
                let stem = stem.strip_suffix('-')?;
                i32::try_from(-value).ok().map(|v| (stem, v))
            }
        };
    }
    let digits = tail.strip_prefix('-')?;
    if digits.bytes().all(|b| b.is_ascii_digit()) {
        let value: i32 = digits.parse().ok()?;
        return Some((stem, -value));
    }
    None
}

/// Which dialect and kind a stem (the name without its sequence) belongs to.
fn classify(stem: &str) -> Option<(Dialect, ContenderKind)> {
    if let Some(rest) = stem.strip_prefix("_c_") {
        return classify_curator(rest);
    }
    if let Some(prefix) = stem.strip_suffix("__lock__") {
        return is_hex32(prefix).then_some((Dialect::Kazoo, ContenderKind::Mutex));
    }
    if let Some(prefix) = stem.strip_suffix("__rlock__") {
        return is_hex32(prefix).then_some((Dialect::Kazoo, ContenderKind::Read));
    }
    match stem {
        "write-" => return Some((Dialect::Hbase, ContenderKind::Write)),
        "read-" => return Some((Dialect::Hbase, ContenderKind::Read)),
        "lock-" => return Some((Dialect::Generic, ContenderKind::Mutex)),
        "n_" => return Some((Dialect::ZkRecipe, ContenderKind::Election)),
        _ => {}
    }
    if let Some(session) = stem.strip_prefix("x-").and_then(|s| s.strip_suffix('-')) {
        return session_dialect(session).map(|dialect| (dialect, ContenderKind::Mutex));
    }
    if is_solr_candidate(stem) {
        return Some((Dialect::Solr, ContenderKind::Election));
    }
    stem.ends_with("-lock-")
        .then_some((Dialect::Generic, ContenderKind::Mutex))
}

/// A `_c_`-prefixed stem: Curator's locks and LeaderLatch take a uuid with
/// dashes, go-zookeeper's lock 32 hex digits without.
fn classify_curator(rest: &str) -> Option<(Dialect, ContenderKind)> {
    if let Some(id) = rest.strip_suffix("-lock-") {
        let dialect = if is_hex32(id) {
            Dialect::GoZookeeper
        } else {
            Dialect::Curator
        };
        return Some((dialect, ContenderKind::Mutex));
    }
    let kind = if rest.ends_with("-latch-") {
        ContenderKind::Election
    } else if rest.ends_with("-__READ__") {
        ContenderKind::Read
    } else if rest.ends_with("-__WRIT__") {
        ContenderKind::Write
    } else {
        return None;
    };
    Some((Dialect::Curator, kind))
}

/// The recipe whose session id this is: the Java recipe writes it in
/// decimal (negative for a server id of 128 or more, never with a leading
/// zero), the C client as 16 hex digits, zero-padded. Sixteen hex digits
/// that happen to be decimal ones without a leading zero could be either;
/// they are taken for the Java form.
fn session_dialect(session: &str) -> Option<Dialect> {
    let is_hex16 = session.len() == 16 && session.bytes().all(|b| b.is_ascii_hexdigit());
    let all_decimal = session.bytes().all(|b| b.is_ascii_digit());
    if is_hex16 && (session.starts_with('0') || !all_decimal) {
        return Some(Dialect::ZkCRecipe);
    }
    let decimal = session.strip_prefix('-').unwrap_or(session);
    (!decimal.is_empty() && decimal.bytes().all(|b| b.is_ascii_digit()))
        .then_some(Dialect::ZkRecipe)
}

/// Solr's election candidates: `<session id in decimal>-<node name>-n_`.
fn is_solr_candidate(stem: &str) -> bool {
    let Some(rest) = stem.strip_suffix("-n_") else {
        return false;
    };
    let Some((session, node)) = rest.split_once('-') else {
        return false;
    };
    !session.is_empty() && session.bytes().all(|b| b.is_ascii_digit()) && !node.is_empty()
}

/// True for 32 hex digits: a uuid without its dashes, as kazoo names nodes.
pub(crate) fn is_hex32(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The name prefix zklock gives its own node in `dialect` for `kind`, or
/// `None` when that library has no such lock (the ZooKeeper recipe has no
/// read lock; generic names are recognised, never made). The server appends
/// the sequence. `token` is a fresh uuid that makes Curator and kazoo names
/// unique to this contender; `session` is the id the ZooKeeper recipe embeds.
pub(crate) fn own_prefix(
    dialect: Dialect,
    kind: ContenderKind,
    token: &str,
    session: i64,
) -> Option<String> {
    let prefix = match (dialect, kind) {
        (_, ContenderKind::Election) => return None,
        (Dialect::Curator, ContenderKind::Mutex) => format!("_c_{token}-lock-"),
        (Dialect::Curator, ContenderKind::Read) => format!("_c_{token}-__READ__"),
        (Dialect::Curator, ContenderKind::Write) => format!("_c_{token}-__WRIT__"),
        (Dialect::Kazoo, ContenderKind::Read) => format!("{}__rlock__", token.replace('-', "")),
        (Dialect::Kazoo, _) => format!("{}__lock__", token.replace('-', "")),
        (Dialect::Hbase, ContenderKind::Read) => "read-".to_owned(),
        (Dialect::Hbase, _) => "write-".to_owned(),
        (Dialect::ZkRecipe, ContenderKind::Mutex | ContenderKind::Write) => format!("x-{session}-"),
        (Dialect::ZkRecipe, ContenderKind::Read)
        | (
            Dialect::Generic
            | Dialect::ZkCRecipe
            | Dialect::GoZookeeper
            | Dialect::Solr
            | Dialect::Kafka
            | Dialect::Hadoop
            | Dialect::Helix,
            _,
        ) => return None,
    };
    Some(prefix)
}

/// True when zklock can make a `kind` node in `dialect`.
pub(crate) fn can_make(dialect: Dialect, kind: ContenderKind) -> bool {
    own_prefix(dialect, kind, "", 0).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(dialect: Dialect, kind: ContenderKind, sequence: i32) -> Option<Parsed> {
        Some(Parsed {
            dialect,
            kind,
            sequence,
        })
    }

    const UUID: &str = "2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f";
    const HEX: &str = "2f1c4d9e8a7b4c3d9e2f1a2b3c4d5e6f";

    #[test]
    fn recognises_every_dialect() {
        use ContenderKind::*;
        use Dialect::*;
        let cases = [
            (format!("_c_{UUID}-lock-0000000007"), p(Curator, Mutex, 7)),
            (format!("_c_{UUID}-__READ__0000000001"), p(Curator, Read, 1)),
            (
                format!("_c_{UUID}-__WRIT__0000000002"),
                p(Curator, Write, 2),
            ),
            (format!("{HEX}__lock__0000000003"), p(Kazoo, Mutex, 3)),
            (format!("{HEX}__rlock__0000000004"), p(Kazoo, Read, 4)),
            ("write-0000000005".to_owned(), p(Hbase, Write, 5)),
            ("read-0000000006".to_owned(), p(Hbase, Read, 6)),
            (
                "x-72057594037927936-0000000008".to_owned(),
                p(ZkRecipe, Mutex, 8),
            ),
            ("lock-0000000009".to_owned(), p(Generic, Mutex, 9)),
            ("myapp-lock-0000000010".to_owned(), p(Generic, Mutex, 10)),
            (
                "x-01000002a3b40000-0000000011".to_owned(),
                p(ZkCRecipe, Mutex, 11),
            ),
            // A C session id whose hex digits are all decimal ones.
            (
                "x-0100004512345678-0000000017".to_owned(),
                p(ZkCRecipe, Mutex, 17),
            ),
            (
                "x--9151314442816847872-0000000012".to_owned(),
                p(ZkRecipe, Mutex, 12),
            ),
            (
                format!("_c_{HEX}-lock-0000000013"),
                p(GoZookeeper, Mutex, 13),
            ),
            (
                format!("_c_{UUID}-latch-0000000014"),
                p(Curator, Election, 14),
            ),
            ("n_0000000015".to_owned(), p(ZkRecipe, Election, 15)),
            (
                "72057594037927936-127.0.0.1:8983_solr-n_0000000016".to_owned(),
                p(Solr, Election, 16),
            ),
        ];
        for (name, expected) in cases {
            assert_eq!(parse(&name), expected, "{name}");
        }
    }

    #[test]
    fn reads_wrapped_negative_sequences() {
        assert_eq!(parse("lock--000000001").map(|p| p.sequence), Some(-1));
        assert_eq!(parse("write--000000123").map(|p| p.sequence), Some(-123));
        assert_eq!(
            parse("lock--2147483648").map(|p| p.sequence),
            Some(i32::MIN)
        );
        assert_eq!(parse("lock-2147483647").map(|p| p.sequence), Some(i32::MAX));
        // From -1000000000 down a wrapped counter prints eleven characters:
        // after a stem that ends in `-` its last ten are read as positive.
        assert_eq!(
            split_sequence("lock--1000000000"),
            Some(("lock--", 1_000_000_000))
        );
        let curator = format!("_c_{UUID}-lock--000000005");
        assert_eq!(
            parse(&curator).map(|p| (p.dialect, p.sequence)),
            Some((Dialect::Curator, -5))
        );
    }

    #[test]
    fn ignores_children_that_are_not_contenders() {
        for name in [
            "leases",
            "locks",
            "config",
            "lock-",
            "lock-12",
            "0000000001",
            "data-0000000001",
            "notes-lock",
            "lock-000000000x",
            "2147483648",
            "__lock__0000000001",
            "abc__lock__0000000001",
            "_c_uuid-lease-0000000001",
            "lock-4294967295",
            "x-01000002a3b4000g-0000000001",
            "n_-0000000001x",
            "host-n_0000000001",
            "-127.0.0.1:8983_solr-n_0000000001",
            "72057594037927936--n_0000000001",
            "_c_abc-latch",
            // Names of other scripts: no sequence, and no slicing through a
            // character to look for one.
            "déploiement",
            "配置文件",
            "lock-é00000001",
            "развёртывание-lock-000000001",
            // Ten digits, but not ASCII ones: not a sequence ZooKeeper wrote.
            "lock-\u{660}\u{661}\u{662}\u{663}\u{664}\u{665}\u{666}\u{667}\u{668}\u{669}",
            "lock-\u{ff10}\u{ff11}\u{ff12}\u{ff13}\u{ff14}\u{ff15}\u{ff16}\u{ff17}\u{ff18}\u{ff19}",
            "lock-\u{966}\u{967}\u{968}\u{969}\u{96a}\u{96b}\u{96c}\u{96d}\u{96e}\u{96f}",
        ] {
            assert_eq!(parse(name), None, "{name}");
        }
    }

    #[test]
    fn names_of_any_script_keep_their_sequence() {
        let name = "配置文件-lock-0000000042";
        assert_eq!(
            parse(name).map(|p| (p.dialect, p.sequence)),
            Some((Dialect::Generic, 42))
        );
        assert_eq!(split_sequence("é-0000000007"), Some(("é-", 7)));
    }

    #[test]
    fn own_names_parse_back_to_their_dialect_and_mode() {
        use ContenderKind::*;
        use Dialect::*;
        for dialect in [Curator, Kazoo, Hbase, ZkRecipe] {
            for kind in [Mutex, Read, Write] {
                let Some(prefix) = own_prefix(dialect, kind, UUID, 72057594037927936) else {
                    assert_eq!((dialect, kind), (ZkRecipe, Read));
                    continue;
                };
                let name = format!("{prefix}0000000042");
                let parsed = parse(&name).unwrap_or_else(|| panic!("{name} not recognised"));
                assert_eq!(parsed.sequence, 42, "{name}");
                assert_eq!(parsed.dialect, dialect, "{name}");
                assert_eq!(parsed.kind.mode(), kind.mode(), "{name}");
            }
        }
        assert!(!can_make(Generic, Mutex));
        assert!(can_make(Curator, Read));
    }
}
