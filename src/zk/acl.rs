//! The ACL zklock puts on every node it creates (`--acl`): lock directories
//! and their ancestors, contender nodes and TTL nodes alike.
//!
//! Deleting a node takes DELETE permission on its parent, so the ACL of a
//! lock directory decides who may give up and who may break the lock, and
//! the ACL of a contender node who may overwrite or revoke it.

use std::fmt;

use zookeeper_client as zkc;

use crate::usage::UsageError;

/// One `--acl` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum AclEntry {
    /// `open`: everyone may do everything (world:anyone:cdrwa).
    Open,
    /// `creator`: everything for the session's authenticated identities,
    /// read for everyone else.
    Creator,
    /// `creator-only`: everything for the session's authenticated identities,
    /// nothing for anyone else.
    CreatorOnly,
    /// `SCHEME:ID:PERMS`, e.g. `sasl:alice:cdrwa` or
    /// `digest:alice:XH0dmdY…=:cdrw`.
    Explicit {
        scheme: String,
        id: String,
        perms: String,
    },
}

/// The ACL for the nodes zklock creates: the union of every `--acl` given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeAcl {
    entries: Vec<zkc::Acl>,
    /// The `--acl` values it was made of, for a process that must be given
    /// the same.
    given: Vec<AclEntry>,
}

impl Default for NodeAcl {
    /// World-writable, as Curator's and kazoo's locks are.
    fn default() -> Self {
        NodeAcl::from_entries(&[AclEntry::Open])
    }
}

impl NodeAcl {
    /// Parses the `--acl` values; none at all means `open`.
    pub fn parse<S: AsRef<str>>(values: &[S]) -> Result<NodeAcl, UsageError> {
        if values.is_empty() {
            return Ok(NodeAcl::default());
        }
        let entries = values
            .iter()
            .flat_map(|value| value.as_ref().split(','))
            .map(AclEntry::parse)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(NodeAcl::from_entries(&entries))
    }

    fn from_entries(entries: &[AclEntry]) -> NodeAcl {
        let mut acl: Vec<zkc::Acl> = Vec::new();
        for entry in entries {
            for item in entry.to_acl() {
                if !acl.contains(&item) {
                    acl.push(item);
                }
            }
        }
        NodeAcl {
            entries: acl,
            given: entries.to_vec(),
        }
    }

    /// The `--acl` values that make this ACL again.
    pub(crate) fn as_values(&self) -> Vec<String> {
        self.given.iter().map(AclEntry::to_string).collect()
    }

    /// The ACL in the client library's form, for a create.
    pub fn acls(&self) -> zkc::Acls<'_> {
        zkc::Acls::new(&self.entries)
    }

    /// True when the ACL names the creator's identities, which the server
    /// refuses for a session that has none.
    pub fn needs_identity(&self) -> bool {
        self.entries.iter().any(|acl| acl.scheme() == "auth")
    }
}

impl AclEntry {
    /// Parses one value: `open`, `creator`, `creator-only` or
    /// `SCHEME:ID:PERMS` (the id may contain colons, as digest ids do).
    pub(crate) fn parse(text: &str) -> Result<AclEntry, UsageError> {
        let text = text.trim();
        match text {
            "open" => return Ok(AclEntry::Open),
            "creator" => return Ok(AclEntry::Creator),
            "creator-only" => return Ok(AclEntry::CreatorOnly),
            _ => {}
        }
        let bad = |why: &str| {
            UsageError::new(format!(
                "bad --acl {text:?}: {why}; expected open, creator, creator-only or \
                 SCHEME:ID:PERMS, e.g. sasl:alice:cdrwa"
            ))
        };
        let (scheme, rest) = text.split_once(':').ok_or_else(|| bad("no scheme"))?;
        let (id, perms) = rest.rsplit_once(':').ok_or_else(|| bad("no permissions"))?;
        if scheme.is_empty() || id.is_empty() {
            return Err(bad("empty scheme or id"));
        }
        parse_perms(perms).ok_or_else(|| bad("permissions are letters of cdrwa"))?;
        Ok(AclEntry::Explicit {
            scheme: scheme.to_owned(),
            id: id.to_owned(),
            perms: perms.to_owned(),
        })
    }

    fn to_acl(&self) -> Vec<zkc::Acl> {
        let all = zkc::Permission::ALL;
        let read = zkc::Permission::READ;
        let world = zkc::AuthId::new("world", "anyone");
        let creator = zkc::AuthId::new("auth", "");
        match self {
            AclEntry::Open => vec![zkc::Acl::new(all, world)],
            AclEntry::Creator => vec![zkc::Acl::new(all, creator), zkc::Acl::new(read, world)],
            AclEntry::CreatorOnly => vec![zkc::Acl::new(all, creator)],
            AclEntry::Explicit { scheme, id, perms } => vec![zkc::Acl::new(
                parse_perms(perms).expect("checked when parsed"),
                zkc::AuthId::new(scheme, id),
            )],
        }
    }
}

impl fmt::Display for AclEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AclEntry::Open => f.write_str("open"),
            AclEntry::Creator => f.write_str("creator"),
            AclEntry::CreatorOnly => f.write_str("creator-only"),
            AclEntry::Explicit { scheme, id, perms } => write!(f, "{scheme}:{id}:{perms}"),
        }
    }
}

/// `cdrwa` letters (any order, each at most once) as a permission set.
fn parse_perms(text: &str) -> Option<zkc::Permission> {
    let mut perms = zkc::Permission::NONE;
    for letter in text.chars() {
        let perm = match letter.to_ascii_lowercase() {
            'c' => zkc::Permission::CREATE,
            'd' => zkc::Permission::DELETE,
            'r' => zkc::Permission::READ,
            'w' => zkc::Permission::WRITE,
            'a' => zkc::Permission::ADMIN,
            _ => return None,
        };
        if perms.has(perm) {
            return None;
        }
        perms = perms | perm;
    }
    (perms != zkc::Permission::NONE).then_some(perms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_policies_and_explicit_entries() {
        assert_eq!(NodeAcl::parse::<&str>(&[]).unwrap(), NodeAcl::default());
        let creator = NodeAcl::parse(&["creator"]).unwrap();
        assert!(creator.needs_identity());
        assert_eq!(creator.acls().len(), 2);
        let group = NodeAcl::parse(&["sasl:alice:cdrwa,sasl:bob:cdrw", "world:anyone:r"]).unwrap();
        assert!(!group.needs_identity());
        let acls = group.acls();
        assert_eq!(acls.len(), 3);
        assert_eq!(acls[1].id(), "bob");
        use zkc::Permission as P;
        assert_eq!(
            acls[1].permission(),
            P::CREATE | P::DELETE | P::READ | P::WRITE
        );
        assert_eq!(NodeAcl::parse(&group.as_values()).unwrap(), group);
        assert_eq!(NodeAcl::parse(&creator.as_values()).unwrap(), creator);
        let digest = AclEntry::parse("digest:alice:XH0dmdY+ZmTK8v=:cd").unwrap();
        assert_eq!(digest.to_string(), "digest:alice:XH0dmdY+ZmTK8v=:cd");
        for bad in [
            "",
            "sasl",
            "sasl:alice",
            "sasl:alice:x",
            "sasl::r",
            ":a:r",
            "s:a:rr",
        ] {
            assert!(AclEntry::parse(bad).is_err(), "{bad:?}");
        }
    }
}
