//! The lock recipes: node names and dialects, queue order, who holds and who
//! waits, and the acquire/hold/release protocol.

pub(crate) mod acquire;
pub(crate) mod hold;
pub(crate) mod lease;
pub(crate) mod name;
pub(crate) mod nesting;
pub(crate) mod node;
pub(crate) mod owner;
pub(crate) mod queue;
pub(crate) mod semaphore;

pub(crate) use acquire::{AcquireError, Contention, Held, LockSpec, Outcome, Patience, Waiting};
pub(crate) use lease::{LeaseContention, SemaphoreSpec};
pub(crate) use name::{ContenderKind, ContenderMode, Dialect};
pub use owner::{Identity, Owner};
pub(crate) use queue::LockQueue;
pub(crate) use semaphore::SemaphoreQueue;
