//! The read-only lock model: walking a ZooKeeper tree for locks and modelling
//! what is found, for `ls`, `stat`, `dump`, and for `watch` and `reap` above.
//!
//! It exists so that every command that looks at locks sees them the same
//! way: one walk ([`walk()`]) that reads a tree fast and in bounded memory, one
//! model ([`Lock`], [`Contender`]) of what a lock directory is, whose
//! holders and waiters come from the lock-queue model in `src/lock/` that
//! `lock` itself acts on, and one JSON form of it. It also decodes what other
//! libraries store in their nodes (HBase's protobuf). Nothing here writes.

pub(crate) mod chains;
pub(crate) mod check;
pub(crate) mod cycles;
mod hbase;
mod json;
pub(crate) mod layout;
mod leaders;
pub(crate) mod locks;
mod node;
mod protobuf;
pub(crate) mod waitfor;
mod walk;

#[cfg(test)]
mod properties;

pub(crate) use json::{ContenderJson, WithStats, last_run_json};
pub(crate) use layout::{Depth, Runs};
pub(crate) use locks::{Contender, Lock, LockDialect, LockKind, LockSummary, owner_text};
pub(crate) use node::NodeStat;
pub(crate) use walk::{
    ListedLock, LockWindows, WalkProgress, is_absent, list_lock, read_lock, read_stats, walk,
    walk_around, walk_with_dirs,
};
