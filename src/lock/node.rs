//! What a node is by its stat, and the one rule that says whether a child of
//! a lock directory is a contender.
//!
//! A name alone proves nothing: ZooKeeper ensembles are shared, and Kafka,
//! HBase, job queues and applications keep persistent sequential nodes whose
//! names (`lock-0000000001`, `write-0000000001`, `x-12-0000000003`) look like
//! lock contenders. Every lock library makes its contenders so that they go
//! when their owner does: ephemeral, owned by a session. The exceptions are
//! persistent nodes no one else makes: kazoo's lock taken with
//! `ephemeral=False` (`<hex32>__lock__N`, a name unique to kazoo), and
//! zklock's own `--ttl` nodes, which carry zklock's owner record as data.
//!
//! The server reports ephemeralOwner 0 for every node that no session owns:
//! persistent, container and TTL nodes alike. So a client cannot tell a TTL
//! node or a container from a persistent node by its stat; the rule rests on
//! what it can see.

use super::name::{self, Dialect, Parsed};
use super::owner::Owner;
use crate::zk;

/// Which session owns a node, as its stat tells a client: how long it lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ownership {
    /// No session owns it: persistent, a container or a TTL node.
    Unowned,
    /// Until its session ends.
    Ephemeral { session: i64 },
}

impl Ownership {
    /// The ownership of the node with this stat.
    pub(crate) fn of(stat: &zk::Stat) -> Ownership {
        match stat.ephemeral_owner {
            0 => Ownership::Unowned,
            session => Ownership::Ephemeral { session },
        }
    }
}

/// The recognised contender `name` is, when the node of that name with this
/// stat and data is one (see [`is_contender`]).
pub(crate) fn contender(name: &str, stat: &zk::Stat, data: &[u8]) -> Option<Parsed> {
    let parsed = name::parse(name)?;
    is_contender(parsed.dialect, stat, data).then_some(parsed)
}

/// True when a node named in `dialect` with this stat and data is a
/// contender: ephemeral, or persistent where only a lock library makes
/// such a node (kazoo's names, zklock's owner record).
pub(crate) fn is_contender(dialect: Dialect, stat: &zk::Stat, data: &[u8]) -> bool {
    is_contender_by_stat(dialect, stat) || Owner::parse(data).is_some()
}

/// True while one of our own nodes is at the version we created it at: it
/// holds the owner record we wrote, so no revocation mark, and nothing
/// needs reading to know it.
pub(crate) fn is_as_created(stat: &zk::Stat) -> bool {
    stat.version == 0
}

/// True when the stat alone proves a node named in `dialect` a contender;
/// when false, only its data can ([`is_contender`]).
pub(crate) fn is_contender_by_stat(dialect: Dialect, stat: &zk::Stat) -> bool {
    match Ownership::of(stat) {
        Ownership::Ephemeral { .. } => true,
        Ownership::Unowned => dialect == Dialect::Kazoo,
    }
}

/// True when a semaphore lease node with this stat is one: Curator and
/// kazoo make every lease ephemeral, so that it goes with its holder.
pub(crate) fn is_lease_type(stat: &zk::Stat) -> bool {
    matches!(Ownership::of(stat), Ownership::Ephemeral { .. })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "0123456789abcdef0123456789abcdef";
    const UUID: &str = "2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f";

    fn stat(owner: i64) -> zk::Stat {
        zk::test_stat(1, owner)
    }

    const UNOWNED: i64 = 0;
    const SESSION: i64 = 0x1000_0a2b_3c4d_0005;
    /// A session of a server whose id is 128 or more: negative.
    const HIGH_SERVER_SESSION: i64 = 0x8100_0000_0000_0001u64 as i64;

    #[test]
    fn ownership_comes_from_the_ephemeral_owner() {
        assert_eq!(Ownership::of(&stat(UNOWNED)), Ownership::Unowned);
        assert_eq!(
            Ownership::of(&stat(SESSION)),
            Ownership::Ephemeral { session: SESSION }
        );
        assert_eq!(
            Ownership::of(&stat(HIGH_SERVER_SESSION)),
            Ownership::Ephemeral {
                session: HIGH_SERVER_SESSION
            }
        );
    }

    #[test]
    fn generic_names_on_persistent_nodes_are_application_data() {
        let zklock = Owner::of_this_process(None, None).to_bytes();
        for name in [
            "lock-0000000001",
            "app-lock-0000000002",
            "write-0000000003",
            "read-0000000004",
            "x-72057594037927936-0000000005",
            &format!("_c_{UUID}-lock-0000000006"),
            &format!("_c_{UUID}-__READ__0000000007"),
        ] {
            assert!(contender(name, &stat(UNOWNED), b"").is_none(), "{name}");
            assert!(
                contender(name, &stat(UNOWNED), b"max=10").is_none(),
                "{name}"
            );
            assert!(contender(name, &stat(SESSION), b"").is_some(), "{name}");
            assert!(
                contender(name, &stat(HIGH_SERVER_SESSION), b"").is_some(),
                "{name}"
            );
            // zklock's own --ttl node, known by its owner record.
            assert!(contender(name, &stat(UNOWNED), &zklock).is_some(), "{name}");
        }
    }

    #[test]
    fn kazoo_names_are_contenders_even_persistent() {
        for name in [
            format!("{HEX}__lock__0000000001"),
            format!("{HEX}__rlock__0000000002"),
        ] {
            assert!(contender(&name, &stat(UNOWNED), b"").is_some(), "{name}");
            assert!(contender(&name, &stat(SESSION), b"").is_some(), "{name}");
        }
        assert!(contender("seq-0000000001", &stat(SESSION), b"").is_none());
        assert!(is_contender_by_stat(Dialect::Kazoo, &stat(UNOWNED)));
        assert!(!is_contender_by_stat(Dialect::Generic, &stat(UNOWNED)));
    }

    #[test]
    fn leases_are_ephemeral() {
        assert!(is_lease_type(&stat(SESSION)));
        assert!(!is_lease_type(&stat(UNOWNED)));
    }
}
