//! Mutations of other clients' nodes: reaping stale contenders and empty lock
//! directories, and releasing or revoking a lock by hand. Kept apart from the read-only model, because every path here
//! deletes, and deletes only what the model proves to be a lock.

pub mod reap;
pub(crate) mod release;
