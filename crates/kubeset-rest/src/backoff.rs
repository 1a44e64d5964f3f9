//! Per-host exponential backoff (client-go's `URLBackoff`), the sleeper
//! the request loop waits with, and [`Backoff`], the watch's retry
//! schedule.

use std::{
    collections::HashMap,
    fmt,
    future::Future,
    pin::Pin,
    sync::Mutex,
    time::{Duration, Instant},
};

mod schedule;

pub use schedule::Backoff;
pub(crate) use schedule::jitter;

/// Environment variable with the backoff base in whole seconds.
pub const ENV_BACKOFF_BASE: &str = "KUBE_CLIENT_BACKOFF_BASE";
/// Environment variable with the backoff maximum in whole seconds.
pub const ENV_BACKOFF_DURATION: &str = "KUBE_CLIENT_BACKOFF_DURATION";

/// Backoff settings: the first wait and the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackoffSettings {
    /// Wait after the first failure; doubled after each further one.
    pub base: Duration,
    /// Cap of the wait.
    pub max: Duration,
}

impl BackoffSettings {
    /// client-go's default: read [`ENV_BACKOFF_BASE`] and
    /// [`ENV_BACKOFF_DURATION`]; `None` (no backoff) unless both are valid
    /// integers.
    pub fn from_env() -> Option<Self> {
        let base = std::env::var(ENV_BACKOFF_BASE).ok();
        let max = std::env::var(ENV_BACKOFF_DURATION).ok();
        Self::from_values(base.as_deref(), max.as_deref())
    }

    /// Parse the two environment values (seconds); `None` when either is
    /// missing or not an integer. Negative values mean no wait.
    pub fn from_values(base: Option<&str>, max: Option<&str>) -> Option<Self> {
        let secs = |v: Option<&str>| -> Option<Duration> {
            let n: i64 = v?.trim().parse().ok()?;
            Some(Duration::from_secs(u64::try_from(n).unwrap_or(0)))
        };
        Some(Self {
            base: secs(base)?,
            max: secs(max)?,
        })
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    backoff: Duration,
    last_update: Instant,
}

/// Exponential backoff keyed by `host:port`, shared by all requests of one
/// client. 429 and 5xx advance it; anything else (including transport
/// errors, reported as code 0) resets it.
#[derive(Debug)]
pub struct UrlBackoff {
    settings: BackoffSettings,
    entries: Mutex<HashMap<String, Entry>>,
}

impl UrlBackoff {
    /// A backoff with these settings and no history.
    pub fn new(settings: BackoffSettings) -> Self {
        Self {
            settings,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// How long to wait before the next request to `key`.
    pub fn get(&self, key: &str) -> Duration {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.get(key).map_or(Duration::ZERO, |e| e.backoff)
    }

    /// Record the outcome of a request to `key` at `now` (`code` 0 for a
    /// transport error).
    pub fn update(&self, key: &str, code: u16, now: Instant) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if code == 429 || code >= 500 {
            let max = self.settings.max;
            let next = match entries.get(key) {
                Some(e)
                    if now.saturating_duration_since(e.last_update) <= max.saturating_mul(2) =>
                {
                    e.backoff.saturating_mul(2).min(max)
                }
                _ => self.settings.base.min(max),
            };
            entries.insert(
                key.to_owned(),
                Entry {
                    backoff: next,
                    last_update: now,
                },
            );
        } else {
            entries.remove(key);
        }
    }
}

/// Future returned by [`Sleeper::sleep`].
pub type SleepFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// How the request loop waits (backoff, `Retry-After`, rate limiter).
/// Replaceable so that tests and simulations can record the waits.
pub trait Sleeper: Send + Sync + fmt::Debug {
    /// Wait for `duration` (called with zero too, so the sequence of waits
    /// is observable).
    fn sleep(&self, duration: Duration) -> SleepFuture;
}

/// Sleeps with tokio's timer; zero waits return at once.
#[derive(Debug, Default, Clone, Copy)]
pub struct TokioSleeper;

impl Sleeper for TokioSleeper {
    fn sleep(&self, duration: Duration) -> SleepFuture {
        Box::pin(async move {
            if !duration.is_zero() {
                tokio::time::sleep(duration).await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Settings of `base` and `max` whole seconds.
    fn secs(base: u64, max: u64) -> BackoffSettings {
        BackoffSettings {
            base: Duration::from_secs(base),
            max: Duration::from_secs(max),
        }
    }

    fn waits(settings: BackoffSettings, codes: &[u16]) -> Vec<u64> {
        let b = UrlBackoff::new(settings);
        let start = Instant::now();
        let mut now = start;
        let mut out = Vec::new();
        for &code in codes {
            let w = b.get("h:1");
            out.push(w.as_secs());
            now += w;
            b.update("h:1", code, now);
        }
        out
    }

    #[test]
    fn client_go_sequence() {
        assert_eq!(
            waits(secs(1, 60), &[429, 500, 501, 502, 300, 500, 501, 502]),
            vec![0, 1, 2, 4, 8, 0, 1, 2]
        );
    }

    #[test]
    fn capped_at_max() {
        assert_eq!(
            waits(secs(1, 50), &[500; 10]),
            vec![0, 1, 2, 4, 8, 16, 32, 50, 50, 50]
        );
    }

    #[test]
    fn transport_error_resets_and_keys_are_separate() {
        let b = UrlBackoff::new(secs(1, 60));
        let now = Instant::now();
        b.update("a:1", 503, now);
        b.update("a:1", 503, now);
        assert_eq!(b.get("a:1"), Duration::from_secs(2));
        assert_eq!(b.get("b:1"), Duration::ZERO);
        b.update("a:1", 0, now);
        assert_eq!(b.get("a:1"), Duration::ZERO);
    }

    #[test]
    fn quiet_for_twice_max_starts_over() {
        let b = UrlBackoff::new(secs(1, 4));
        let now = Instant::now();
        for _ in 0..4 {
            b.update("a:1", 500, now);
        }
        assert_eq!(b.get("a:1"), Duration::from_secs(4));
        b.update("a:1", 500, now + Duration::from_secs(9));
        assert_eq!(b.get("a:1"), Duration::from_secs(1));
    }

    #[test]
    fn env_values() {
        let want = Some(secs(1, 60));
        assert_eq!(BackoffSettings::from_values(Some("1"), Some("60")), want);
        assert_eq!(BackoffSettings::from_values(None, Some("60")), None);
        assert_eq!(BackoffSettings::from_values(Some("1"), None), None);
        assert_eq!(BackoffSettings::from_values(Some("x"), Some("60")), None);
        assert_eq!(BackoffSettings::from_values(Some("1.5"), Some("60")), None);
    }
}
