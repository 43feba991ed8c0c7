//! Which lock directories a change touches: the mapping from the nodes a
//! notification names to the locks whose state they may have changed (a
//! contender's directory, the semaphore a lease or internal lock belongs
//! to), and whether a change touched only contenders, so that reading those
//! nodes alone brings a queue up to date.

use std::collections::BTreeSet;

use crate::lock::name;
use crate::lock::semaphore::{self, CURATOR_LEASES, CURATOR_LOCKS, KAZOO_LOCK_SUFFIX};
use crate::model::layout;
use crate::zk::{self, path};

use super::feed::NodeChanges;

/// The changes among `changes` that touch the lock at `site`, when each is
/// of a contender node directly in it: then reading those nodes again is
/// reading the lock again. `None` when anything else there changed (the
/// directory's children, a part of a semaphore, something named
/// otherwise). A new end record in the directory's data changes no one's
/// standing: it is read for the ends it explains, not as the lock.
pub(super) fn changed_contenders<'c>(
    target: &str,
    site: &str,
    changes: &'c NodeChanges,
) -> Option<Vec<(&'c str, zk::NodeChange)>> {
    let mut changed = Vec::new();
    for (node, change) in changes {
        let touches = affected_sites(target, &BTreeSet::from([node.clone()]));
        if !touches.contains(site) || (node == site && *change == zk::NodeChange::DataChanged) {
            continue;
        }
        let contender_here = path::parent(node) == Some(site)
            && name::parse(path::basename(node)).is_some()
            && touches.len() == 1;
        if !contender_here {
            return None;
        }
        changed.push((node.as_str(), *change));
    }
    Some(changed)
}

/// The lock directories whose state a change of `nodes` may have changed:
/// a contender's or lease's directory, any other node itself; with the
/// semaphore a part belongs to. Only directories at or below `target`
/// count, and the target for the internal lock a kazoo semaphore keeps
/// beside it.
pub(super) fn affected_sites(target: &str, nodes: &BTreeSet<String>) -> BTreeSet<String> {
    let beside = layout::kazoo_lock_beside(target);
    let mut sites = BTreeSet::new();
    for node in nodes {
        let name = path::basename(node);
        let is_leaf = name::parse(name).is_some() || semaphore::parse_lease(name).is_some();
        let dir = match path::parent(node) {
            Some(parent) if is_leaf => parent,
            _ => node.as_str(),
        };
        if beside
            .as_deref()
            .is_some_and(|b| path::is_at_or_below(dir, b))
        {
            sites.insert(target.to_owned());
            continue;
        }
        for site in std::iter::once(dir.to_owned()).chain(owner_of_part(dir)) {
            if path::is_at_or_below(&site, target) {
                sites.insert(site);
            }
        }
    }
    sites
}

/// The semaphore `dir` would be a part of: the parent of a `leases` or
/// `locks` directory (Curator), the node beside a `-__lock__` one (kazoo).
pub(super) fn owner_of_part(dir: &str) -> Option<String> {
    let name = path::basename(dir);
    if name == CURATOR_LEASES || name == CURATOR_LOCKS {
        return path::parent(dir).map(str::to_owned);
    }
    dir.strip_suffix(KAZOO_LOCK_SUFFIX)
        .filter(|owner| !owner.is_empty() && !owner.ends_with('/'))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sites(target: &str, nodes: &[&str]) -> Vec<String> {
        let nodes = nodes.iter().map(|n| n.to_string()).collect();
        affected_sites(target, &nodes).into_iter().collect()
    }

    #[test]
    fn a_contender_change_touches_its_directory() {
        assert_eq!(
            sites(
                "/locks",
                &["/locks/a/_c_2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f-lock-0000000001"]
            ),
            ["/locks/a"]
        );
        assert_eq!(
            sites("/locks/a", &["/locks/a/lock-0000000001"]),
            ["/locks/a"]
        );
        // A directory itself (made, deleted, its data changed).
        assert_eq!(
            sites("/locks", &["/locks/b", "/locks/b/c"]),
            ["/locks/b", "/locks/b/c"]
        );
        // Nothing outside the target.
        assert!(sites("/locks/a", &["/locks/ab/lock-0000000001", "/locks"]).is_empty());
    }

    #[test]
    fn a_semaphore_part_touches_the_semaphore() {
        let lease = "/l/s/leases/_c_2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f-lease-0000000001";
        assert_eq!(sites("/l", &[lease]), ["/l/s", "/l/s/leases"]);
        assert_eq!(
            sites("/l/s", &["/l/s/locks/lock-0000000001"]),
            ["/l/s", "/l/s/locks"]
        );
        assert_eq!(
            sites(
                "/l",
                &["/l/k-__lock__/0123456789abcdef0123456789abcdef__lock__0000000001"]
            ),
            ["/l/k", "/l/k-__lock__"]
        );
        // The internal lock beside the target belongs to the target.
        assert_eq!(sites("/l/k", &["/l/k-__lock__/lock-0000000002"]), ["/l/k"]);
        assert_eq!(owner_of_part("/-__lock__"), None);
    }
}
