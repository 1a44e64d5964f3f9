//! Client-side rate limiting: client-go's token bucket (default QPS 5,
//! burst 10), a fixed rate, and [`AdaptiveLimiter`], a per-priority-level
//! concurrency cap that follows the server's API Priority and Fairness.
//!
//! A plain [`RestClient`](crate::RestClient) keeps client-go's static 5/10
//! (a CLI or script that does not expect to be throttled by APF gains
//! nothing from learning). A controller's client should use the adaptive
//! limiter and no static one, as controller-runtime since v0.21
//! (`RestConfig::with_adaptive_limiter` and `with_qps_burst(-1.0, 0)`),
//! keeping a static cap only as an opt-in safety net.

use std::{fmt, sync::Mutex, time::Duration};

use tokio::time::Instant;

mod adaptive;

pub use adaptive::{
    AdaptiveConfig, AdaptiveLimiter, FLOW_SCHEMA_UID_HEADER, LevelStats, PRIORITY_LEVEL_UID_HEADER,
};
pub(crate) use adaptive::{AdaptivePermit, Answer};

/// client-go's default QPS.
pub const DEFAULT_QPS: f32 = 5.0;
/// client-go's default burst.
pub const DEFAULT_BURST: u32 = 10;

/// Decides how long a request must wait before it is sent.
pub trait RateLimiter: Send + Sync + fmt::Debug {
    /// Take a permit and return how long the caller must wait before using
    /// it (zero: go now). The permit is taken even if the caller gives up.
    fn reserve(&self) -> Duration;

    /// Take a permit only when its wait is shorter than `max_wait` (`None`:
    /// any wait; a zero wait always goes): `Ok(wait)`, or `Err(wait)` with
    /// the wait it would have been and **no permit taken**, as Go's
    /// `rate.Limiter.Wait` with a context deadline (client-go's limiter).
    /// The call's time budget asks this, so a call that gives up at once
    /// does not delay the calls behind it. The default takes the permit
    /// with [`reserve`](Self::reserve) whatever the answer (a limiter that
    /// cannot give one back); [`TokenBucket`] overrides it.
    fn reserve_within(&self, max_wait: Option<Duration>) -> Result<Duration, Duration> {
        let wait = self.reserve();
        if refused(wait, max_wait) {
            Err(wait)
        } else {
            Ok(wait)
        }
    }
}

/// Whether `wait` is too long for `max_wait` (a zero wait never is).
fn refused(wait: Duration, max_wait: Option<Duration>) -> bool {
    max_wait.is_some_and(|max| !wait.is_zero() && wait >= max)
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

impl TokenBucket {
    /// Refill, then take a token unless its wait is refused for
    /// `max_wait`: the wait, and whether the token was taken.
    fn take(&self, max_wait: Option<Duration>) -> (Duration, bool) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let elapsed = now.saturating_duration_since(state.last).as_secs_f64();
        state.tokens = (state.tokens + elapsed * self.qps).min(self.burst);
        state.last = now;
        let left = state.tokens - 1.0;
        let wait = if left >= 0.0 {
            Duration::ZERO
        } else {
            Duration::try_from_secs_f64(-left / self.qps).unwrap_or(Duration::MAX)
        };
        if refused(wait, max_wait) {
            return (wait, false);
        }
        state.tokens = left;
        (wait, true)
    }
}

impl RateLimiter for TokenBucket {
    fn reserve(&self) -> Duration {
        self.take(None).0
    }

    fn reserve_within(&self, max_wait: Option<Duration>) -> Result<Duration, Duration> {
        match self.take(max_wait) {
            (wait, true) => Ok(wait),
            (wait, false) => Err(wait),
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

    #[tokio::test(start_paused = true)]
    async fn a_refused_wait_takes_no_slot() {
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        // (qps 1, burst 2), one call after another at the same instant:
        // (the call's budget, the answer).
        let cases = [
            (Some(ms(1)), Ok(Duration::ZERO)),
            (None, Ok(Duration::ZERO)),
            // The third waits 1 s: refused by a shorter (or equal) budget,
            // and the bucket is as it was.
            (Some(ms(500)), Err(s(1))),
            (Some(s(1)), Err(s(1))),
            (Some(ms(1001)), Ok(s(1))),
            // The slot above was taken: the next waits 2 s, not 3 s.
            (Some(s(2)), Err(s(2))),
            (None, Ok(s(2))),
        ];
        let b = TokenBucket::new(1.0, 2);
        for (i, (budget, want)) in cases.into_iter().enumerate() {
            assert_eq!(b.reserve_within(budget), want, "call {i} with {budget:?}");
        }
        // The default of a limiter that cannot give a slot back spends it,
        // and still answers by the same rule.
        #[derive(Debug)]
        struct Fixed(std::sync::atomic::AtomicU32);
        impl RateLimiter for Fixed {
            fn reserve(&self) -> Duration {
                self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Duration::from_secs(1)
            }
        }
        let f = Fixed(std::sync::atomic::AtomicU32::new(0));
        assert_eq!(f.reserve_within(Some(ms(10))), Err(s(1)));
        assert_eq!(f.reserve_within(None), Ok(s(1)));
        assert_eq!(f.0.load(std::sync::atomic::Ordering::Relaxed), 2);
    }
}
