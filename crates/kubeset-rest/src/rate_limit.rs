//! Client-side rate limiting (client-go's token bucket, default QPS 5,
//! burst 10).

use std::{fmt, sync::Mutex, time::Duration};

use tokio::time::Instant;

/// client-go's default QPS.
pub const DEFAULT_QPS: f32 = 5.0;
/// client-go's default burst.
pub const DEFAULT_BURST: u32 = 10;

/// Decides how long a request must wait before it is sent.
pub trait RateLimiter: Send + Sync + fmt::Debug {
    /// Take a permit and return how long the caller must wait before using
    /// it (zero: go now). The permit is taken even if the caller gives up.
    fn reserve(&self) -> Duration;
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

/// A token bucket that starts full: `burst` requests go at once, then one
/// every `1/qps` seconds. Reservations queue: the `n`-th waiting caller is
/// told to wait `n/qps`.
#[derive(Debug)]
pub struct TokenBucket {
    qps: f64,
    burst: f64,
    state: Mutex<Bucket>,
}

impl TokenBucket {
    /// A bucket refilling at `qps` tokens per second holding at most `burst`
    /// (at least 1). `qps` must be positive; see
    /// [`RestConfig::with_qps_burst`](crate::RestConfig::with_qps_burst) for
    /// the defaults and "disabled" conventions.
    pub fn new(qps: f32, burst: u32) -> Self {
        let burst = f64::from(burst.max(1));
        Self {
            qps: f64::from(qps).max(f64::MIN_POSITIVE),
            burst,
            state: Mutex::new(Bucket {
                tokens: burst,
                last: Instant::now(),
            }),
        }
    }
}

impl RateLimiter for TokenBucket {
    fn reserve(&self) -> Duration {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let elapsed = now.saturating_duration_since(state.last).as_secs_f64();
        state.tokens = (state.tokens + elapsed * self.qps).min(self.burst);
        state.last = now;
        state.tokens -= 1.0;
        if state.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::try_from_secs_f64(-state.tokens / self.qps).unwrap_or(Duration::MAX)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn starts_full_then_waits() {
        let b = TokenBucket::new(1.0, 3);
        for _ in 0..3 {
            assert_eq!(b.reserve(), Duration::ZERO);
        }
        assert_eq!(b.reserve(), Duration::from_secs(1));
        assert_eq!(b.reserve(), Duration::from_secs(2));
        tokio::time::advance(Duration::from_secs(10)).await;
        // Refilled to the burst only (3), minus the two overdrawn.
        assert_eq!(b.reserve(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn sixteen_at_qps_10_burst_5_take_a_second() {
        let b = TokenBucket::new(10.0, 5);
        let start = Instant::now();
        for _ in 0..16 {
            let wait = b.reserve();
            tokio::time::sleep(wait).await;
        }
        let took = start.elapsed();
        assert!(took >= Duration::from_secs(1), "{took:?}");
        assert!(took < Duration::from_millis(1200), "{took:?}");
    }
}
