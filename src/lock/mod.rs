//! The lock recipes: node names and dialects, queue order, who holds and who
//! waits, and the acquire/release protocol of SPEC §4.

pub mod name;
pub mod queue;

pub use name::{Dialect, Kind, Mode};
pub use queue::{Contender, LockQueue, Standing};
