//! The lock recipes: node names and dialects, queue order, who holds and who
//! waits, and the acquire/hold/release protocol.

pub mod acquire;
pub mod hold;
pub mod lease;
pub mod name;
pub mod node;
pub mod owner;
pub mod queue;
pub mod semaphore;

pub use acquire::{AcquireError, Contention, Held, LockSpec, Outcome, Patience, Waiting};
pub use hold::Loss;
pub use lease::{LeaseContention, SemaphoreSpec};
pub use name::{ContenderKind, ContenderMode, Dialect};
pub use owner::Owner;
pub use queue::{LockQueue, QueueEntry, Standing};
pub use semaphore::{Lease, SemaphoreQueue};
