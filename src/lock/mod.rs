//! The lock recipes: node names and dialects, queue order, who holds and who
//! waits, and the acquire/hold/release protocol; and taking a command's
//! locks as one operation ([`take()`]), on the model's reading of the tree
//! where a wait must look beyond its own queue.

pub(crate) mod acquire;
pub(crate) mod acquisition;
pub(crate) mod delay;
pub mod end;
pub(crate) mod hold;
pub(crate) mod lease;
pub(crate) mod name;
pub(crate) mod nesting;
pub(crate) mod node;
pub(crate) mod once;
pub(crate) mod owner;
pub(crate) mod queue;
pub(crate) mod semaphore;
pub(crate) mod take;

pub(crate) use acquire::{AcquireError, Held, Waiting};
pub(crate) use hold::{HeldLock, Loss};
pub(crate) use name::{ContenderKind, ContenderMode, Dialect};
pub use owner::{Detachment, Identity, Lineage, Owner, Process};
pub(crate) use queue::LockQueue;
pub(crate) use semaphore::SemaphoreQueue;
pub(crate) use take::{Event, NotTaken, Reentry, Request, kill_after_for, take};
