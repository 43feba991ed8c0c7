//! The lock recipes: node names and dialects, queue order, who holds and who
//! waits, and the acquire/hold/release protocol.

pub(crate) mod acquire;
pub(crate) mod acquisition;
pub mod end;
pub(crate) mod hold;
pub(crate) mod lease;
pub(crate) mod name;
pub(crate) mod nesting;
pub(crate) mod node;
pub(crate) mod owner;
pub(crate) mod queue;
pub(crate) mod semaphore;

pub(crate) use acquire::{AcquireError, Held, LockSpec, Outcome, Patience, Waiting};
pub(crate) use acquisition::{Acquisition, QueueChange};
pub(crate) use hold::{HeldLock, Hold, Loss, give_up};
pub(crate) use name::{ContenderKind, ContenderMode, Dialect};
pub use owner::{Identity, Owner};
pub(crate) use queue::LockQueue;
pub(crate) use semaphore::SemaphoreQueue;
