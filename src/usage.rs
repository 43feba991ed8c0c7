//! Usage errors: input that is wrong before any connection is made.
//!
//! Kept apart from ZooKeeper errors so that a bad path or host string always
//! exits 2 and never reaches the server.

/// A malformed argument: a path, a host string, a duration, a token.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl UsageError {
    /// A usage error with the given message.
    pub fn new(message: impl Into<String>) -> Self {
        UsageError(message.into())
    }
}
