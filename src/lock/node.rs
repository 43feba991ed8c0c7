//! What a node is by its stat, and the one rule that says whether a child of
//! a lock directory is a contender.
//!
//! A name alone proves nothing: ZooKeeper ensembles are shared, and Kafka,
//! HBase, job queues and applications keep persistent sequential nodes whose
//! names (`lock-0000000001`, `write-0000000001`, `x-12-0000000003`) look like
//! lock contenders. Every lock library makes its contenders so that they go
//! when their owner does: ephemeral (owned by a session) or, for zklock's
//! `--ttl`, a TTL node. The one exception is kazoo's lock made with
//! `ephemeral=False`, whose persistent nodes carry a name no one else makes
//! (`<hex32>__lock__N`). So a child is a contender when its name is one a
//! lock library makes *and* its node is of a type that library makes.

use zookeeper_client as zkc;

use super::name::{self, Dialect, Parsed};

/// The ephemeralOwner ZooKeeper gives a container node.
pub const CONTAINER_OWNER: i64 = i64::MIN;

/// The high byte of the ephemeralOwner of a TTL node (ZooKeeper's extended
/// node types; server id 255 is reserved for them).
const EXTENDED_TYPE_BYTE: u64 = 0xff;

/// How long a node lives, as its stat's ephemeralOwner says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifetime {
    /// Until someone deletes it.
    Persistent,
    /// Until it is deleted or, once it has had children, it has none.
    Container,
    /// Until its session ends.
    Ephemeral { session: i64 },
    /// Until it has gone unchanged, childless, for its time to live.
    Ttl,
}

impl Lifetime {
    /// The lifetime of the node with this stat.
    pub fn of(stat: &zkc::Stat) -> Lifetime {
        match stat.ephemeral_owner {
            0 => Lifetime::Persistent,
            CONTAINER_OWNER => Lifetime::Container,
            owner if (owner as u64) >> 56 == EXTENDED_TYPE_BYTE => Lifetime::Ttl,
            session => Lifetime::Ephemeral { session },
        }
    }
}

/// The recognised contender `name` is, when a node of that name with this
/// stat is one: ephemeral or TTL in every dialect, persistent only for
/// kazoo's names, which no one but kazoo makes.
pub fn contender(name: &str, stat: &zkc::Stat) -> Option<Parsed> {
    let parsed = name::parse(name)?;
    is_contender_type(parsed.dialect, stat).then_some(parsed)
}

/// True when a node with this stat is of a type `dialect`'s library makes
/// its contenders as (see [`contender`]).
pub fn is_contender_type(dialect: Dialect, stat: &zkc::Stat) -> bool {
    match Lifetime::of(stat) {
        Lifetime::Ephemeral { .. } | Lifetime::Ttl => true,
        Lifetime::Persistent => dialect == Dialect::Kazoo,
        Lifetime::Container => false,
    }
}

/// True when a semaphore lease node with this stat is one: Curator and
/// kazoo make every lease ephemeral, so that it goes with its holder.
pub fn is_lease_type(stat: &zkc::Stat) -> bool {
    matches!(Lifetime::of(stat), Lifetime::Ephemeral { .. })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "0123456789abcdef0123456789abcdef";
    const UUID: &str = "2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f";

    fn stat(owner: i64) -> zkc::Stat {
        zkc::Stat {
            czxid: 1,
            mzxid: 1,
            pzxid: 1,
            ctime: 0,
            mtime: 0,
            version: 0,
            cversion: 0,
            aversion: 0,
            ephemeral_owner: owner,
            data_length: 0,
            num_children: 0,
        }
    }

    const PERSISTENT: i64 = 0;
    const SESSION: i64 = 0x1000_0a2b_3c4d_0005;
    /// A session of a server whose id is 128 or more: negative.
    const HIGH_SERVER_SESSION: i64 = 0x8100_0000_0000_0001u64 as i64;
    const TTL: i64 = 0xff00_0000_0000_03e8u64 as i64;

    #[test]
    fn lifetimes_come_from_the_ephemeral_owner() {
        assert_eq!(Lifetime::of(&stat(PERSISTENT)), Lifetime::Persistent);
        assert_eq!(Lifetime::of(&stat(CONTAINER_OWNER)), Lifetime::Container);
        assert_eq!(Lifetime::of(&stat(TTL)), Lifetime::Ttl);
        assert_eq!(
            Lifetime::of(&stat(SESSION)),
            Lifetime::Ephemeral { session: SESSION }
        );
        assert_eq!(
            Lifetime::of(&stat(HIGH_SERVER_SESSION)),
            Lifetime::Ephemeral {
                session: HIGH_SERVER_SESSION
            }
        );
    }

    #[test]
    fn generic_names_on_persistent_nodes_are_application_data() {
        for name in [
            "lock-0000000001",
            "app-lock-0000000002",
            "write-0000000003",
            "read-0000000004",
            "x-72057594037927936-0000000005",
            &format!("_c_{UUID}-lock-0000000006"),
            &format!("_c_{UUID}-__READ__0000000007"),
        ] {
            assert!(contender(name, &stat(PERSISTENT)).is_none(), "{name}");
            assert!(contender(name, &stat(CONTAINER_OWNER)).is_none(), "{name}");
            assert!(contender(name, &stat(SESSION)).is_some(), "{name}");
            assert!(
                contender(name, &stat(HIGH_SERVER_SESSION)).is_some(),
                "{name}"
            );
            assert!(contender(name, &stat(TTL)).is_some(), "{name}");
        }
    }

    #[test]
    fn kazoo_names_are_contenders_even_persistent() {
        for name in [
            format!("{HEX}__lock__0000000001"),
            format!("{HEX}__rlock__0000000002"),
        ] {
            assert!(contender(&name, &stat(PERSISTENT)).is_some(), "{name}");
            assert!(contender(&name, &stat(SESSION)).is_some(), "{name}");
        }
        assert!(contender("seq-0000000001", &stat(SESSION)).is_none());
    }

    #[test]
    fn leases_are_ephemeral() {
        assert!(is_lease_type(&stat(SESSION)));
        assert!(!is_lease_type(&stat(PERSISTENT)));
        assert!(!is_lease_type(&stat(TTL)));
        assert!(!is_lease_type(&stat(CONTAINER_OWNER)));
    }
}
