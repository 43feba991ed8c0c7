//! The retry policy for recoverable errors: capped exponential
//! backoff with jitter.
//!
//! Only idempotent reads go through [`RetryPolicy::run`] blindly; writes whose
//! retry needs thought (a delete that finds no node, a sequential create) use
//! [`RetryPolicy::backoff`] in their own loops.

use std::future::Future;
use std::time::Duration;

use zookeeper_client as zkc;

use super::error::{Class, class_of};

/// How often and how patiently to retry a recoverable error.
#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub retries: u32,
    /// Delay before the first retry.
    pub base: Duration,
    /// Longest delay between two attempts.
    pub cap: Duration,
}

impl RetryPolicy {
    /// The default policy with `retries` retries: base 100 ms, cap 2 s.
    pub fn new(retries: u32) -> RetryPolicy {
        RetryPolicy {
            retries,
            base: Duration::from_millis(100),
            cap: Duration::from_secs(2),
        }
    }

    /// The delay before retry number `attempt` (0-based): `base * 2^attempt`,
    /// capped, then jittered to a random point in its upper half.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let full = self
            .base
            .saturating_mul(1u32.checked_shl(attempt).unwrap_or(u32::MAX))
            .min(self.cap);
        full / 2 + full.mul_f64(fastrand::f64() / 2.0)
    }

    /// Runs `op` until it succeeds, fails with an error that is not
    /// recoverable, or the retries are spent; returns the last result.
    pub async fn run<T, F, Fut>(&self, mut op: F) -> Result<T, zkc::Error>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, zkc::Error>>,
    {
        let mut attempt = 0;
        loop {
            match op().await {
                Err(err) if class_of(&err) == Class::Recoverable && attempt < self.retries => {
                    tracing::info!("retrying after {err}");
                    tokio::time::sleep(self.backoff(attempt)).await;
                    attempt += 1;
                }
                result => return result,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let policy = RetryPolicy::new(5);
        for _ in 0..100 {
            let first = policy.backoff(0);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let third = policy.backoff(2);
            assert!(third >= Duration::from_millis(200) && third <= Duration::from_millis(400));
            let late = policy.backoff(40);
            assert!(late >= Duration::from_secs(1) && late <= Duration::from_secs(2));
        }
    }

    #[tokio::test]
    async fn retries_only_recoverable_errors() {
        let policy = RetryPolicy {
            retries: 3,
            base: Duration::from_millis(1),
            cap: Duration::from_millis(2),
        };
        let mut calls = 0;
        let result: Result<(), _> = policy
            .run(|| {
                calls += 1;
                async { Err(zkc::Error::ConnectionLoss) }
            })
            .await;
        assert_eq!(result, Err(zkc::Error::ConnectionLoss));
        assert_eq!(calls, 4);

        let mut calls = 0;
        let result: Result<(), _> = policy
            .run(|| {
                calls += 1;
                async { Err(zkc::Error::NoNode) }
            })
            .await;
        assert_eq!(result, Err(zkc::Error::NoNode));
        assert_eq!(calls, 1);
    }
}
