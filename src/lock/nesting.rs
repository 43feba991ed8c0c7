//! Nesting: a zklock started, however indirectly, by the command of a
//! zklock that holds a lock is nested in that hold.
//!
//! The environment only says where to look: `ZKLOCK_HELD` lists every
//! enclosing hold, one node path a line, innermost last. `sudo`, `env -i`
//! and ssh drop it, so when it is not ours we look for it in our
//! ancestors' environments; and anyone can copy it, so a hold counts only
//! when its owner record, as written at the node's creation, names a
//! command (a process group whose leader started at a given time, on this
//! boot, in this pid namespace) that is among our own ancestors.

use super::name::ContenderMode;
use super::owner::{Identity, Owner, user_name};
use super::queue::{LockQueue, QueueEntry, Standing};
use crate::procfs;
use crate::zk::{Session, path};

/// The variable that lists the enclosing holds.
pub(crate) const HELD: &str = "ZKLOCK_HELD";

/// How far up the process tree to look: deeper chains are not nesting
/// anyone set up on purpose.
const MAX_ANCESTORS: usize = 64;

/// `ZKLOCK_HELD` for a command run under our holds of `nodes`: the
/// enclosing holds we were given, then `nodes`; each node is named once, as
/// a command re-entered under an enclosing hold runs under that same hold.
pub(crate) fn held_for_command(nodes: &[&str]) -> String {
    let given = std::env::var(HELD).unwrap_or_default();
    let mut held: Vec<&str> = given.lines().filter(|hold| !nodes.contains(hold)).collect();
    held.extend(nodes);
    held.join("\n")
}

/// An enclosing hold this process is proven to be nested in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Enclosing {
    /// Its node.
    pub node: String,
    /// True when the hold's guard stops this process with the hold: we run
    /// in its command's process group, as its user. Only then may we
    /// re-enter it, for only then does the hold last as long as we do: the
    /// guard waits for its group alone, and signals only its own user's
    /// processes. `setsid`, `setpgid` (job control, `timeout`, `script`,
    /// sudo's `use_pty`) or another user leave the hold's reach while
    /// still descending from its command.
    pub guarded: bool,
}

/// The enclosing holds this process is proven to be nested in: of the
/// `hints` ([`hints`]), those whose node is still there, with a zklock
/// owner record written at its creation that names a command among our
/// ancestors. Costs one read per hint, and nothing when there is none.
pub(crate) async fn proven(session: &Session, hints: Vec<String>) -> Vec<Enclosing> {
    let mut holds = Vec::new();
    for hint in hints {
        let Ok((data, stat)) = session.get_data(&hint).await else {
            continue;
        };
        let Some(record) = (stat.mzxid == stat.czxid)
            .then(|| Owner::parse(&data))
            .flatten()
        else {
            continue;
        };
        let Some(identity) = record.identity.filter(descends_from) else {
            continue;
        };
        let guarded = identity.group == crate::sys::process_group() && record.user == user_name();
        holds.push(Enclosing {
            node: hint,
            guarded,
        });
    }
    holds
}

/// The enclosing hold that makes asking for `lock` in `asked` mode an
/// upgrade, which the queue never grants: a read hold of the same lock,
/// when the request is exclusive. Our request would queue behind our own
/// hold, which cannot end before we do.
pub(crate) fn upgrade<'a>(
    lock: &str,
    asked: ContenderMode,
    holds: &'a [String],
) -> Option<&'a str> {
    let shared = |hold: &&String| {
        QueueEntry::parse(path::basename(hold)).is_some_and(|e| e.mode() == ContenderMode::Shared)
    };
    holds
        .iter()
        .filter(|_| asked == ContenderMode::Exclusive)
        .filter(|hold| path::parent(hold) == Some(lock))
        .find(shared)
        .map(String::as_str)
}

/// The enclosing hold under which a request for `lock` in `asked` mode
/// re-enters, by the queue's own rules: one of ours that holds the lock now
/// and covers the request (an exclusive hold covers anything; a read hold
/// covers a read when no exclusive contender but ours is in the queue, as
/// a new read node would otherwise queue behind it).
pub(crate) fn reentry<'a>(
    lock: &str,
    asked: ContenderMode,
    holds: &'a [String],
    queue: &LockQueue,
) -> Option<&'a str> {
    let ours = |name: &str| holds.iter().any(|hold| path::join(lock, name) == *hold);
    let others_exclusive = queue
        .contenders()
        .iter()
        .any(|c| c.mode() != ContenderMode::Shared && !ours(&c.name));
    holds
        .iter()
        .filter(|hold| path::parent(hold) == Some(lock))
        .find(|hold| {
            let name = path::basename(hold);
            let holding = matches!(queue.standing_of(name), Some((Standing::Holding, _)));
            let covers = match QueueEntry::parse(name).map(|e| e.mode()) {
                Some(ContenderMode::Shared) => asked == ContenderMode::Shared && !others_exclusive,
                Some(_) => true,
                None => false,
            };
            holding && covers
        })
        .map(String::as_str)
}

/// The holds `ZKLOCK_HELD` names: ours, or else the nearest ancestor's.
pub(crate) fn hints() -> Vec<String> {
    let held = std::env::var(HELD)
        .ok()
        .or_else(|| ancestors().find_map(|pid| variable_of(pid, HELD)))
        .unwrap_or_default();
    held.lines()
        .filter(|line| line.starts_with('/'))
        .map(str::to_owned)
        .collect()
}

/// True when the command `identity` names is one of our ancestors.
fn descends_from(identity: &Identity) -> bool {
    ancestors().any(|pid| identity.is(pid))
}

/// Our ancestors, parent first, up to (not including) init.
fn ancestors() -> impl Iterator<Item = i32> {
    let parent = crate::sys::parent_pid();
    std::iter::successors(Some(parent), |&pid| parent_of(pid))
        .take_while(|&pid| pid > 1)
        .take(MAX_ANCESTORS)
}

/// The parent of process `pid`, from `/proc/PID/stat`.
fn parent_of(pid: i32) -> Option<i32> {
    procfs::process_stat(pid, 4)?.try_into().ok()
}

/// The value of `name` in the environment process `pid` started with,
/// when we may read it (our own user's processes).
fn variable_of(pid: i32, name: &str) -> Option<String> {
    let environ = procfs::read(&format!("/proc/{pid}/environ"))?;
    environ.split(|&b| b == 0).find_map(|entry| {
        let value = entry.strip_prefix(name.as_bytes())?.strip_prefix(b"=")?;
        Some(String::from_utf8_lossy(value).into_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_write_inside_a_read_of_the_same_lock_is_an_upgrade() {
        const UUID: &str = "2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f";
        let read = format!("/locks/a/_c_{UUID}-__READ__0000000001");
        let write = format!("/locks/a/_c_{UUID}-__WRIT__0000000002");
        let elsewhere = format!("/locks/b/_c_{UUID}-__READ__0000000003");
        let holds = [elsewhere.clone(), read.clone()];
        assert_eq!(
            upgrade("/locks/a", ContenderMode::Exclusive, &holds),
            Some(read.as_str())
        );
        assert_eq!(
            upgrade("/locks/a", ContenderMode::Shared, &holds),
            None,
            "read in read"
        );
        assert_eq!(
            upgrade("/locks/b/x", ContenderMode::Exclusive, &holds),
            None
        );
        let holds = [write, elsewhere];
        assert_eq!(
            upgrade("/locks/a", ContenderMode::Exclusive, &holds),
            None,
            "write in write"
        );
    }

    #[test]
    fn a_holding_enclosing_hold_that_covers_the_request_is_reentered() {
        const UUID: &str = "2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f";
        let name = |kind: &str, seq: i32| format!("_c_{UUID}-{kind}{seq:010}");
        let at = |name: &str| format!("/locks/a/{name}");
        let (mutex, r1, w2, r3) = (
            name("lock-", 1),
            name("__READ__", 1),
            name("__WRIT__", 2),
            name("__READ__", 3),
        );
        use ContenderMode::{Exclusive as X, Shared as S};

        let queue = LockQueue::from_children([mutex.clone(), name("lock-", 2)]);
        let holds = [at(&mutex)];
        assert_eq!(
            reentry("/locks/a", X, &holds, &queue),
            Some(holds[0].as_str()),
            "lock in lock"
        );
        assert_eq!(reentry("/locks/b", X, &holds, &queue), None, "another lock");
        let queue = LockQueue::from_children([name("lock-", 0), mutex.clone()]);
        assert_eq!(
            reentry("/locks/a", X, &holds, &queue),
            None,
            "our node does not hold"
        );

        let queue = LockQueue::from_children([r1.clone(), r3.clone()]);
        let holds = [at(&r1)];
        assert_eq!(
            reentry("/locks/a", S, &holds, &queue),
            Some(holds[0].as_str()),
            "read in read"
        );
        assert_eq!(reentry("/locks/a", X, &holds, &queue), None, "an upgrade");
        let queue = LockQueue::from_children([r1.clone(), w2.clone()]);
        assert_eq!(
            reentry("/locks/a", S, &holds, &queue),
            None,
            "a writer waits in between"
        );

        let queue = LockQueue::from_children([w2.clone(), r3]);
        let holds = [at(&w2)];
        assert_eq!(
            reentry("/locks/a", S, &holds, &queue),
            Some(holds[0].as_str()),
            "read in write"
        );
    }

    #[test]
    fn our_ancestry_starts_with_our_parent_and_ends_before_init() {
        let mut ancestors = ancestors();
        assert_eq!(ancestors.next(), Some(crate::sys::parent_pid()));
        assert!(ancestors.all(|pid| pid > 1));
        let ours = std::process::id() as i32;
        assert_eq!(parent_of(ours), Some(crate::sys::parent_pid()));
        assert!(variable_of(ours, "PATH").is_some());
        assert_eq!(variable_of(ours, "ZKLOCK_NO_SUCH_VARIABLE"), None);
    }

    #[test]
    fn a_group_among_our_ancestors_is_proven_and_a_copy_is_not() {
        let group = crate::sys::process_group();
        let parent_group = Identity::of_group(crate::sys::parent_pid());
        if let Some(parent) = parent_group {
            assert!(descends_from(&parent), "our parent is our ancestor");
        }
        let ours = Identity::of_group(std::process::id() as i32).unwrap();
        assert!(!descends_from(&ours), "we are not our own ancestor");
        let copied = Identity {
            group_start: ours.group_start + 1,
            group,
            ..ours
        };
        assert!(!descends_from(&copied));
    }
}
