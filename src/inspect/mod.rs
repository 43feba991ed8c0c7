//! Inspection: walking a ZooKeeper tree for locks and modelling what is
//! found, for `ls`, `stat`, `dump`, `watch` and `reap`.
//!
//! It exists so that every command that looks at locks sees them the same
//! way: one walk ([`walk`]) that reads a tree fast and in bounded memory, one
//! model ([`Lock`], [`Contender`]) of what a lock directory is, whose
//! holders and waiters come from the lock-queue model in `src/lock/` that
//! `lock` itself acts on, and one JSON form of it (SPEC §7). It also decodes
//! what other libraries store in their nodes (HBase's protobuf).

mod events;
mod hbase;
mod json;
mod layout;
mod model;
mod node;
mod protobuf;
pub mod reap;
mod walk;
mod watch;

pub use events::{EventKind, LockEvent};
pub use hbase::TableLock;
pub use json::{ContenderJson, WithStats};
pub use layout::Depth;
pub use model::{Contender, ContenderMode, Lock, LockDialect, LockKind, owner_text};
pub use node::NodeStat;
pub use walk::{WalkProgress, read_lock, walk};
pub use watch::LockWatch;
