//! The reopen rule of a watch that resumes after its stream ends, shared
//! by [`ResumableWatch`](crate::ResumableWatch) and kubeset-runtime's
//! watcher: which events are replays, and how long to wait before the
//! next stream. Pure: time and randomness come from the caller.
//!
//! It follows client-go's reflector where the reflector has a rule and is
//! stricter where it has none:
//! - The wait is the reflector's backoff ([`Backoff::reflector`]: 800 ms
//!   doubling to 30 s, jittered, starting over after 2 minutes without a
//!   failure). A stream is **healthy** when it moved the resourceVersion
//!   forward or stayed open for [`HEALTHY_STREAM`] (2 minutes, the
//!   reflector's reset period) or for the whole `timeoutSeconds` it asked
//!   for; a healthy stream resets the backoff and is reopened at once,
//!   any other stream waits the next delay. An event alone does not make
//!   a stream healthy: a server that cuts every stream after replaying
//!   the same event is backed off, not hammered (client-go's reflector
//!   reopens at once after any stream that delivered an event).
//! - A **replay** is an event whose resourceVersion is not newer than the
//!   one the stream was opened from, or than the last one it delivered:
//!   after a reopen from `R`, an `ADDED` at `R` or older. kube-apiserver's
//!   resourceVersions are etcd revisions, one global increasing sequence,
//!   so "newer than the last delivered" implies "newer than the last
//!   delivered for that object". Replays are dropped, never handed to the
//!   caller twice. Versions are compared as integers; a version that is
//!   not one (an aggregated API's own scheme) is opaque, as the API
//!   convention says, and only its equality to the opening version is
//!   judged. A stream opened without a version (`""` or `"0"`) starts with
//!   the current state in no order, and nothing in it is a replay.

use std::time::{Duration, Instant};

use crate::backoff::{Backoff, jitter};

/// A stream that stayed open this long was healthy even without new
/// events (client-go's reflector resets its backoff after 2 minutes).
pub const HEALTHY_STREAM: Duration = Duration::from_secs(120);

/// The shortest `timeoutSeconds` client-go's reflector asks of a watch
/// (5 minutes); it draws each one from `[5 min, 10 min)` so that many
/// clients do not reconnect in step.
pub const MIN_WATCH_TIMEOUT: Duration = Duration::from_secs(300);

/// The `timeoutSeconds` of a watch for the draw `r` in `[0, 1)`: client-go's
/// reflector's `[300, 600)` (out-of-range draws are clamped).
///
/// ```
/// use kubeset_rest::watch::watch_timeout_seconds;
/// assert_eq!(watch_timeout_seconds(0.0), 300);
/// assert_eq!(watch_timeout_seconds(0.5), 450);
/// assert_eq!(watch_timeout_seconds(0.999_999), 599);
/// assert_eq!(watch_timeout_seconds(f64::NAN), 300);
/// ```
pub fn watch_timeout_seconds(r: f64) -> u32 {
    let min = MIN_WATCH_TIMEOUT.as_secs_f64();
    let r = if r.is_finite() {
        r.clamp(0.0, 1.0)
    } else {
        0.0
    };
    // Below 600 even for r = 1.0 (the draw is never 1).
    (min + (r * min).min(min - 1.0)) as u32
}

/// [`watch_timeout_seconds`] with a random draw.
pub fn random_watch_timeout_seconds() -> u32 {
    watch_timeout_seconds(jitter())
}

/// The last resourceVersion a stream was opened from or delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Floor {
    /// Opened without a version: the current state, unordered.
    Unordered,
    /// An integer version (kube-apiserver's).
    Numeric(u64),
    /// Another scheme: only equality is known.
    Opaque(String),
}

impl Floor {
    fn of(rv: &str) -> Self {
        match rv.parse::<u64>() {
            Ok(0) => Floor::Unordered,
            Ok(n) => Floor::Numeric(n),
            Err(_) if rv.is_empty() => Floor::Unordered,
            Err(_) => Floor::Opaque(rv.to_owned()),
        }
    }
}

/// What to do with one event of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Verdict {
    /// Hand it to the caller; its resourceVersion is the one to resume from.
    Deliver,
    /// A replay of what was delivered already: drop it, keep the
    /// resourceVersion to resume from as it was.
    Replay,
}

/// The reopen rule's state for one watch across its streams (see the
/// module docs): call [`opened`](Self::opened) for each stream,
/// [`event`](Self::event) for each event of it, and
/// [`ended`](Self::ended) when it ends, for the wait before the next.
/// The `…_at` forms take the time and the jitter draw (for tests); the
/// others read tokio's clock (which a paused test clock controls) and
/// draw the jitter themselves.
///
/// ```
/// use std::time::{Duration, Instant};
/// use kubeset_rest::backoff::Backoff;
/// use kubeset_rest::watch::{Verdict, WatchProgress};
///
/// let mut p = WatchProgress::new(Backoff::reflector());
/// let t = Instant::now();
/// p.opened_at("10", None, t);
/// assert_eq!(p.event(Some("10")), Verdict::Replay);
/// // Ended at once, nothing new: the reflector's first delay.
/// assert_eq!(p.ended_at(t, 0.0), Duration::from_millis(800));
/// p.opened_at("10", None, t);
/// assert_eq!(p.event(Some("11")), Verdict::Deliver);
/// // The version moved: reopen at once, the backoff starts over.
/// assert_eq!(p.ended_at(t, 0.0), Duration::ZERO);
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct WatchProgress {
    backoff: Backoff,
    floor: Floor,
    /// The version the current stream opened from (opaque comparison).
    opened_from: Floor,
    opened_at: Option<Instant>,
    /// How long the current stream must stay open to count as healthy.
    healthy_after: Duration,
    advanced: bool,
}

impl WatchProgress {
    /// A watch whose reopen waits follow `backoff`.
    pub fn new(backoff: Backoff) -> Self {
        Self {
            backoff,
            floor: Floor::Unordered,
            opened_from: Floor::Unordered,
            opened_at: None,
            healthy_after: HEALTHY_STREAM,
            advanced: false,
        }
    }

    /// The same rule with another backoff schedule (the current streak
    /// of failures is forgotten).
    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// A stream was opened at `now` from resourceVersion `rv`, asking the
    /// server to end it after `timeout` (its `timeoutSeconds`), if it did.
    /// A stream of 9 s or more counts as having lasted a 10 s timeout
    /// (the server counts from when it got the request).
    pub fn opened_at(&mut self, rv: &str, timeout: Option<Duration>, now: Instant) {
        self.floor = Floor::of(rv);
        self.opened_from = self.floor.clone();
        self.opened_at = Some(now);
        self.healthy_after = timeout.map_or(HEALTHY_STREAM, |t| {
            t.saturating_sub(t / 10).min(HEALTHY_STREAM)
        });
        self.advanced = false;
    }

    /// [`opened_at`](Self::opened_at) now.
    pub fn opened(&mut self, rv: &str, timeout: Option<Duration>) {
        self.opened_at(rv, timeout, now());
    }

    /// An event (bookmarks included) of the current stream with this
    /// resourceVersion: whether it is new, or a replay to drop. An event
    /// without a version (or with `"0"`) is delivered and moves nothing.
    pub fn event(&mut self, rv: Option<&str>) -> Verdict {
        let seen = rv.map_or(Floor::Unordered, Floor::of);
        if seen == Floor::Unordered {
            return Verdict::Deliver;
        }
        let replay = match (&self.floor, &seen) {
            (Floor::Numeric(floor), Floor::Numeric(n)) => n <= floor,
            (Floor::Opaque(floor), Floor::Opaque(v)) => v == floor,
            _ => false,
        };
        if replay {
            return Verdict::Replay;
        }
        if seen != self.opened_from {
            self.advanced = true;
        }
        // Within an unordered initial state, versions go up and down.
        if self.floor != Floor::Unordered {
            self.floor = seen;
        }
        Verdict::Deliver
    }

    /// The resourceVersion moved past the one the stream opened from.
    pub fn advanced(&self) -> bool {
        self.advanced
    }

    /// The current stream ended (cleanly or not) at `now`: the wait before
    /// the next one, zero after a healthy stream (see the module docs).
    /// `jitter` in `[0, 1)` is the backoff's random draw.
    pub fn ended_at(&mut self, now: Instant, jitter: f64) -> Duration {
        let lasted = self
            .opened_at
            .map_or(Duration::ZERO, |at| now.saturating_duration_since(at));
        if self.advanced || lasted >= self.healthy_after {
            self.backoff.reset();
            return Duration::ZERO;
        }
        self.backoff.next_delay_at(now, jitter)
    }

    /// Any other failure (a stream that could not be opened, a list that
    /// failed) at `now`: the next delay of the same backoff.
    pub fn failed_at(&mut self, now: Instant, jitter: f64) -> Duration {
        self.backoff.next_delay_at(now, jitter)
    }

    /// [`ended_at`](Self::ended_at) now, with a random jitter.
    pub fn ended(&mut self) -> Duration {
        self.ended_at(now(), jitter())
    }

    /// [`failed_at`](Self::failed_at) now, with a random jitter.
    pub fn failed(&mut self) -> Duration {
        self.failed_at(now(), jitter())
    }
}

fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_stream_that_replays_one_event_backs_off_every_time() {
        let mut p = WatchProgress::new(Backoff::reflector());
        let t = Instant::now();
        let mut waits = Vec::new();
        for _ in 0..8 {
            p.opened_at("5", None, t);
            assert_eq!(p.event(Some("5")), Verdict::Replay);
            assert_eq!(p.event(Some("4")), Verdict::Replay);
            waits.push(p.ended_at(t, 0.0));
        }
        let want = [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000];
        assert_eq!(waits, want.map(ms));
    }

    #[test]
    fn new_versions_reset_and_repeats_within_a_stream_are_replays() {
        let mut p = WatchProgress::new(Backoff::reflector());
        let t = Instant::now();
        p.opened_at("5", None, t);
        assert_eq!(p.ended_at(t, 0.0), ms(800));
        p.opened_at("5", None, t);
        assert_eq!(p.event(Some("6")), Verdict::Deliver);
        assert_eq!(p.event(Some("6")), Verdict::Replay);
        assert_eq!(p.event(Some("3")), Verdict::Replay);
        assert_eq!(p.event(None), Verdict::Deliver);
        assert_eq!(p.event(Some("0")), Verdict::Deliver);
        assert_eq!(p.event(Some("6")), Verdict::Replay, "\"0\" moves nothing");
        assert_eq!(p.event(Some("8")), Verdict::Deliver);
        assert_eq!(p.ended_at(t, 0.0), Duration::ZERO);
        // Reset: the next failure starts at 800 ms again.
        p.opened_at("8", None, t);
        assert_eq!(p.ended_at(t, 0.0), ms(800));
    }

    #[test]
    fn healthy_by_time_is_two_minutes_or_the_requested_timeout() {
        let mut p = WatchProgress::new(Backoff::reflector());
        let t = Instant::now();
        p.opened_at("5", None, t);
        assert_eq!(p.ended_at(t + Duration::from_secs(119), 0.0), ms(800));
        p.opened_at("5", None, t);
        assert_eq!(p.ended_at(t + HEALTHY_STREAM, 0.0), Duration::ZERO);
        p.opened_at("5", Some(Duration::from_secs(10)), t);
        assert_eq!(p.ended_at(t + Duration::from_secs(8), 0.0), ms(800));
        p.opened_at("5", Some(Duration::from_secs(10)), t);
        assert_eq!(p.ended_at(t + Duration::from_secs(9), 0.0), Duration::ZERO);
    }

    #[test]
    fn unordered_initial_state_and_opaque_versions() {
        let mut p = WatchProgress::new(Backoff::reflector());
        let t = Instant::now();
        for start in ["", "0"] {
            p.opened_at(start, None, t);
            for rv in ["9", "3", "9", "12"] {
                assert_eq!(p.event(Some(rv)), Verdict::Deliver, "{start:?} {rv}");
            }
            assert!(p.advanced());
        }
        // A version of "0" (or none) never counts as progress.
        p.opened_at("5", None, t);
        assert_eq!(p.event(Some("0")), Verdict::Deliver);
        assert_eq!(p.event(None), Verdict::Deliver);
        assert!(!p.advanced());
        p.opened_at("abc", None, t);
        assert_eq!(p.event(Some("abc")), Verdict::Replay);
        assert!(!p.advanced());
        assert_eq!(p.event(Some("abd")), Verdict::Deliver);
        assert_eq!(p.event(Some("7")), Verdict::Deliver);
        assert!(p.advanced());
        // Absurd versions are compared, never a panic.
        p.opened_at("18446744073709551615", None, t);
        assert_eq!(p.event(Some("18446744073709551616")), Verdict::Deliver);
        assert_eq!(p.event(Some("-1")), Verdict::Deliver);
    }

    #[test]
    fn other_failures_share_the_backoff() {
        let mut p = WatchProgress::new(Backoff::reflector());
        let t = Instant::now();
        assert_eq!(p.failed_at(t, 0.0), ms(800));
        p.opened_at("1", None, t);
        assert_eq!(p.ended_at(t, 0.0), ms(1600));
    }
}
