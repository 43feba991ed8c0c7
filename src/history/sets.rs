//! Holds taken together. One zklock takes every lock it is given (`lock A
//! B -- COMMAND`) on one session, writing one owner record into each node,
//! so the holds of one session with the same owner record were one set:
//! taken at once, and let go at once. Other libraries write nothing that
//! ties their nodes together, so only zklock's holds name a set.

use super::replay::Hold;
use crate::zk;

impl Hold {
    /// The set this hold was taken in, the same for every hold of it: its
    /// session, and the pid and creation time of its owner record; `None`
    /// for a node whose data is no owner record.
    pub(crate) fn set(&self) -> Option<String> {
        let owner = self.who.owner()?;
        Some(format!(
            "{} pid {} {}",
            zk::format_session(self.session),
            owner.pid,
            owner.time
        ))
    }
}

#[cfg(test)]
mod tests {
    use crate::history::{Hold, Who};
    use crate::lock::{ContenderMode, Dialect, Owner};

    fn hold(lock: &str, session: i64, data: Vec<u8>) -> Hold {
        Hold {
            lock: lock.into(),
            node: "lock-0000000001".into(),
            dialect: Dialect::Curator,
            mode: ContenderMode::Exclusive,
            session,
            fence: 1,
            who: Who::of(Dialect::Curator, &data, session),
            created_ms: 0,
            holding_ms: None,
            end: None,
        }
    }

    #[test]
    fn holds_of_one_session_and_owner_record_are_one_set() {
        let owner = Owner::of_this_process(None, None);
        let later = Owner {
            time: "2030-01-01T00:00:00Z".into(),
            ..owner.clone()
        };
        let a = hold("/a", 0x10, owner.to_bytes());
        let b = hold("/b", 0x10, owner.to_bytes());
        assert!(a.set().is_some());
        assert_eq!(a.set(), b.set());
        assert_ne!(a.set(), hold("/b", 0x11, owner.to_bytes()).set());
        assert_ne!(a.set(), hold("/b", 0x10, later.to_bytes()).set());
        assert_eq!(hold("/a", 0x10, b"kazoo-1".to_vec()).set(), None);
    }
}
