//! The retry schedule of a watch: client-go's reflector backoff (800 ms
//! doubling to 30 s, full jitter on top, start over after 2 minutes without
//! failures), used by [`ResumableWatch`](crate::ResumableWatch) and
//! re-exported by kubeset-runtime for its watcher (kube-rs's
//! `DefaultBackoff`).
//!
//! Time is passed in ([`Backoff::next_delay_at`]) so the schedule is tested
//! without sleeping; [`Backoff::next_delay`] reads `tokio::time::Instant`,
//! which tokio's paused test clock controls.

use std::time::{Duration, Instant};

/// Exponential backoff with jitter and a reset after a healthy period.
///
/// Two presets of one schedule: [`Backoff::default`] (kubeset-runtime's
/// watcher, as kube-rs: the jittered delay is capped at the maximum) and
/// [`Backoff::reflector`] (client-go's reflector exactly: the jitter is
/// added after the cap, so delays reach up to twice the maximum; the
/// resumable watch's reopen backoff).
#[derive(Debug, Clone)]
#[must_use]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    factor: f64,
    jitter: f64,
    /// Whether the jittered delay is capped at `max` too.
    cap_jitter: bool,
    reset_after: Duration,
    /// Base delay of the next failure (before jitter).
    next: Duration,
    /// When the last delay was handed out.
    last_failure: Option<Instant>,
}

impl Default for Backoff {
    /// client-go's reflector: 800 ms, ×2, cap 30 s, jitter 1.0, reset after 2 min.
    fn default() -> Self {
        Backoff {
            initial: Duration::from_millis(800),
            max: Duration::from_secs(30),
            factor: 2.0,
            jitter: 1.0,
            cap_jitter: true,
            reset_after: Duration::from_secs(120),
            next: Duration::from_millis(800),
            last_failure: None,
        }
    }
}

impl Backoff {
    /// client-go's reflector (`wait.NewExponentialBackoffManager(800ms,
    /// 30s, 2m, 2.0, 1.0)`): as [`Backoff::default`], with the jitter added
    /// after the cap (delays in `[d, 2d)`, up to 60 s).
    pub fn reflector() -> Self {
        Backoff {
            cap_jitter: false,
            ..Backoff::default()
        }
    }

    /// Sets the first delay and the cap.
    pub fn with_bounds(mut self, initial: Duration, max: Duration) -> Self {
        self.initial = initial;
        self.max = max.max(initial);
        self.next = initial;
        self
    }

    /// Sets the jitter factor: each delay `d` becomes `d + r·jitter·d`, `r`
    /// uniform in `[0, 1)`, then capped at the maximum. `0` disables it.
    pub fn with_jitter(mut self, jitter: f64) -> Self {
        self.jitter = if jitter.is_finite() {
            jitter.max(0.0)
        } else {
            0.0
        };
        self
    }

    /// Sets how long without failures resets the delay to the initial one.
    pub fn with_reset_after(mut self, reset_after: Duration) -> Self {
        self.reset_after = reset_after;
        self
    }

    /// The delay before retrying after a failure now.
    pub fn next_delay(&mut self) -> Duration {
        let r = jitter();
        self.next_delay_at(tokio::time::Instant::now().into_std(), r)
    }

    /// The delay before retrying after a failure at `now`, with the jitter
    /// draw `r` in `[0, 1)` given explicitly (for tests).
    pub fn next_delay_at(&mut self, now: Instant, r: f64) -> Duration {
        if let Some(last) = self.last_failure
            && now.saturating_duration_since(last) >= self.reset_after
        {
            self.next = self.initial;
        }
        self.last_failure = Some(now);
        let base = self.next.min(self.max);
        self.next = base.mul_f64(self.factor.max(1.0)).min(self.max);
        let r = if r.is_finite() {
            r.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let jittered = base.saturating_add(base.mul_f64(r * self.jitter));
        if self.cap_jitter {
            jittered.min(self.max)
        } else {
            jittered
        }
    }

    /// Forgets past failures: the next delay is the initial one.
    pub fn reset(&mut self) {
        self.next = self.initial;
        self.last_failure = None;
    }
}

/// A number in `[0, 1)` from the standard library's per-process random
/// hash keys (no dependency; jitter needs no quality).
pub(crate) fn jitter() -> f64 {
    use std::hash::BuildHasher as _;
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let h = std::hash::RandomState::new().hash_one(n);
    (h >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// `b` after `steps` delays drawn at `t` without jitter.
    fn stepped(mut b: Backoff, t: Instant, steps: usize) -> Backoff {
        for _ in 0..steps {
            b.next_delay_at(t, 0.0);
        }
        b
    }

    #[test]
    fn doubles_from_800ms_to_30s_without_jitter() {
        let mut b = Backoff::default();
        let t = Instant::now();
        let got: Vec<_> = (0..8).map(|i| b.next_delay_at(t + ms(i), 0.0)).collect();
        assert_eq!(
            got,
            [
                ms(800),
                ms(1600),
                ms(3200),
                ms(6400),
                ms(12800),
                ms(25600),
                ms(30000),
                ms(30000)
            ]
        );
    }

    #[test]
    fn jitter_adds_up_to_the_base_and_stays_under_the_cap() {
        let mut b = Backoff::default();
        let t = Instant::now();
        assert_eq!(b.next_delay_at(t, 0.5), ms(1200));
        assert_eq!(
            b.next_delay_at(t, 0.999_999),
            ms(1600) + ms(1600).mul_f64(0.999_999)
        );
        for _ in 0..10 {
            assert!(b.next_delay_at(t, 0.999) <= ms(30000));
        }
        // Out-of-range draws are clamped, never panic.
        assert!(b.next_delay_at(t, f64::NAN) <= ms(30000));
        assert!(b.next_delay_at(t, 7.0) <= ms(30000));
    }

    #[test]
    fn resets_after_two_healthy_minutes_only() {
        let t = Instant::now();
        let mut b = stepped(Backoff::default(), t, 5);
        let almost = t + Duration::from_secs(119);
        assert_eq!(b.next_delay_at(almost, 0.0), ms(25600));
        let later = almost + Duration::from_secs(120);
        assert_eq!(b.next_delay_at(later, 0.0), ms(800));
        assert_eq!(b.next_delay_at(later, 0.0), ms(1600));
    }

    #[test]
    fn custom_bounds_and_explicit_reset() {
        let mut b = Backoff::default()
            .with_bounds(ms(10), ms(40))
            .with_jitter(0.0);
        let t = Instant::now();
        let got: Vec<_> = (0..4).map(|_| b.next_delay_at(t, 0.9)).collect();
        assert_eq!(got, [ms(10), ms(20), ms(40), ms(40)]);
        b.reset();
        assert_eq!(b.next_delay_at(t, 0.9), ms(10));
    }

    #[test]
    fn reflector_jitters_above_the_cap() {
        let t = Instant::now();
        let mut b = stepped(Backoff::reflector(), t, 7);
        assert_eq!(b.next_delay_at(t, 0.5), ms(45000));
        assert_eq!(b.next_delay_at(t, 7.0), ms(60000));
        for _ in 0..100 {
            let j = jitter();
            assert!((0.0..1.0).contains(&j), "{j}");
        }
    }
}
