//! Adaptive flow control that follows the server's API Priority and
//! Fairness (APF) instead of a fixed client-side rate.
//!
//! [`AdaptiveLimiter`] caps how many requests are **in flight** per server
//! priority level and moves that cap by the server's answers (additive
//! increase, multiplicative decrease, as TCP's congestion window):
//!
//! - every answer names its priority level and flow schema in
//!   [`PRIORITY_LEVEL_UID_HEADER`] and [`FLOW_SCHEMA_UID_HEADER`]; the
//!   limiter learns which level a route (verb and URL template) lands in and
//!   keys its state by that level, so a throttled level does not slow the
//!   requests of another one (routes not seen yet, and servers without APF,
//!   share one "unclassified" state);
//! - a `429 Too Many Requests` divides the level's cap by the decrease
//!   factor (once per round trip: only a request sent after the last
//!   decrease decreases again) and holds every request of the level until
//!   the server's `Retry-After` has passed (1 s when absent, at most the
//!   configured cap);
//! - an answer that is not a 429, while the level is busy (at least half of
//!   its cap in flight), raises the cap: by one per answer until the first
//!   decrease (slow start), then by one per cap's worth of answers.
//!
//! It does not replace the retry of a 429 (the request loop still honours
//! `Retry-After` and its retry limit); it makes the next requests wait
//! instead of being refused. A static token bucket
//! ([`TokenBucket`](super::TokenBucket)) can be kept beside it as a safety
//! net: both apply.

use std::{
    collections::HashMap,
    fmt,
    sync::{Arc, Mutex},
    time::Duration,
};

use http::HeaderMap;
use tokio::{sync::Notify, time::Instant};

/// The response header naming the APF priority level that handled a request.
pub const PRIORITY_LEVEL_UID_HEADER: &str = "x-kubernetes-pf-prioritylevel-uid";
/// The response header naming the APF flow schema a request matched.
pub const FLOW_SCHEMA_UID_HEADER: &str = "x-kubernetes-pf-flowschema-uid";

/// Routes (verb and URL template) remembered; later ones stay
/// unclassified.
const MAX_ROUTES: usize = 4096;
/// Priority levels tracked; answers naming more are kept unclassified.
const MAX_LEVELS: usize = 256;
/// Longest UID header value read (a UID is 36 characters).
const MAX_UID_LEN: usize = 128;

/// Settings of an [`AdaptiveLimiter`].
///
/// ```
/// use kubeset_rest::rate_limit::AdaptiveConfig;
/// let config = AdaptiveConfig::new().initial_concurrency(4).max_concurrency(64);
/// assert_eq!(config.initial(), 4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[must_use]
pub struct AdaptiveConfig {
    initial: u32,
    min: u32,
    max: u32,
    decrease: f64,
    default_retry_after: Duration,
    max_pause: Duration,
}

impl Default for AdaptiveConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl AdaptiveConfig {
    /// Cap 8 in flight per level to start, between 1 and 1024; halved on a
    /// 429; a 429 without `Retry-After` holds its level 1 s; a
    /// `Retry-After` above 60 s holds it 60 s.
    pub fn new() -> Self {
        Self {
            initial: 8,
            min: 1,
            max: 1024,
            decrease: 0.5,
            default_retry_after: Duration::from_secs(1),
            max_pause: Duration::from_secs(60),
        }
    }

    /// The cap of a level never seen throttled (at least 1).
    pub fn initial_concurrency(mut self, n: u32) -> Self {
        self.initial = n.max(1);
        self
    }

    /// The lowest cap (at least 1).
    pub fn min_concurrency(mut self, n: u32) -> Self {
        self.min = n.max(1);
        self
    }

    /// The highest cap (at least 1).
    pub fn max_concurrency(mut self, n: u32) -> Self {
        self.max = n.max(1);
        self
    }

    /// The factor a 429 multiplies the cap by (clamped to 0.05..=0.95).
    pub fn decrease_factor(mut self, factor: f64) -> Self {
        self.decrease = if factor.is_nan() {
            0.5
        } else {
            factor.clamp(0.05, 0.95)
        };
        self
    }

    /// The longest a server's `Retry-After` holds a level.
    pub fn max_pause(mut self, max: Duration) -> Self {
        self.max_pause = max;
        self
    }

    /// The starting cap.
    pub fn initial(&self) -> u32 {
        self.initial.clamp(self.min.min(self.max), self.max)
    }
}

/// What the limiter knows of one priority level, from
/// [`AdaptiveLimiter::levels`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelStats {
    /// The priority level's UID (from [`PRIORITY_LEVEL_UID_HEADER`]); empty
    /// for the unclassified state.
    pub priority_level_uid: String,
    /// The flow schemas seen sending to this level.
    pub flow_schema_uids: Vec<String>,
    /// The current cap of requests in flight.
    pub limit: u32,
    /// Requests in flight now.
    pub in_flight: u32,
    /// The most requests ever in flight at once.
    pub peak_in_flight: u32,
    /// Answers that were not a 429.
    pub completed: u64,
    /// 429 answers.
    pub throttled: u64,
    /// Times the cap was decreased.
    pub decreases: u64,
    /// Requests waiting for a slot now (the level full, or held by a
    /// `Retry-After`).
    pub queued: u32,
    /// Requests that were held by a server's `Retry-After` (each counted
    /// once, however long it waited).
    pub retry_after_waits: u64,
    /// The time requests spent held by a `Retry-After`, added up.
    pub retry_after_wait: Duration,
}

#[derive(Debug)]
struct Level {
    limit: f64,
    in_flight: u32,
    peak_in_flight: u32,
    paused_until: Option<Instant>,
    last_decrease: Option<Instant>,
    flow_schemas: Vec<String>,
    completed: u64,
    throttled: u64,
    decreases: u64,
    queued: u32,
    retry_after_waits: u64,
    retry_after_wait: Duration,
}

impl Level {
    fn new(config: &AdaptiveConfig) -> Self {
        Level {
            limit: f64::from(config.initial()),
            in_flight: 0,
            peak_in_flight: 0,
            paused_until: None,
            last_decrease: None,
            flow_schemas: Vec::new(),
            completed: 0,
            throttled: 0,
            decreases: 0,
            queued: 0,
            retry_after_waits: 0,
            retry_after_wait: Duration::ZERO,
        }
    }

    /// Whole requests allowed in flight.
    fn cap(&self) -> u32 {
        // Truncation wanted: a cap of 2.7 lets 2 in flight.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let cap = self.limit.floor().max(1.0) as u32;
        cap
    }

    fn released(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }
}

#[derive(Debug, Default)]
struct State {
    /// Route → priority level UID.
    routes: HashMap<String, String>,
    /// Priority level UID ("" unclassified) → its state.
    levels: HashMap<String, Level>,
}

impl State {
    fn level(&mut self, uid: &str, config: &AdaptiveConfig) -> &mut Level {
        let uid = if self.levels.contains_key(uid) || self.levels.len() < MAX_LEVELS {
            uid
        } else {
            ""
        };
        self.levels
            .entry(uid.to_owned())
            .or_insert_with(|| Level::new(config))
    }
}

/// A per-priority-level concurrency cap that follows the server (see the
/// module docs). Install it with
/// [`RestConfig::with_adaptive_limiter`](crate::RestConfig::with_adaptive_limiter);
/// one limiter may be shared by several clients of the same identity.
///
/// ```
/// use std::sync::Arc;
/// use kubeset_rest::{RestConfig, rate_limit::{AdaptiveConfig, AdaptiveLimiter}};
/// let limiter = Arc::new(AdaptiveLimiter::new(AdaptiveConfig::new()));
/// let config = RestConfig::new("https://127.0.0.1:6443")
///     .with_adaptive_limiter(limiter.clone())
///     // No static limiter (add one as a safety net if wanted).
///     .with_qps_burst(-1.0, 0);
/// # let _ = config;
/// assert!(limiter.levels().is_empty());
/// ```
pub struct AdaptiveLimiter {
    config: AdaptiveConfig,
    state: Mutex<State>,
    released: Notify,
}

impl fmt::Debug for AdaptiveLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdaptiveLimiter")
            .field("config", &self.config)
            .field("levels", &self.levels().len())
            .finish()
    }
}

impl Default for AdaptiveLimiter {
    fn default() -> Self {
        Self::new(AdaptiveConfig::new())
    }
}

/// A header value that reads as a UID (bounded, visible ASCII).
fn uid_header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    let v = headers.get(name)?.to_str().ok()?.trim();
    let ok = !v.is_empty() && v.len() <= MAX_UID_LEN && v.bytes().all(|b| b.is_ascii_graphic());
    ok.then_some(v)
}

/// What an answer tells the limiter.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Answer<'a> {
    /// The status, `None` for a transport failure.
    pub(crate) status: Option<u16>,
    /// The parsed `Retry-After`.
    pub(crate) retry_after: Option<Duration>,
    pub(crate) headers: Option<&'a HeaderMap>,
}

impl AdaptiveLimiter {
    /// A limiter with no history.
    pub fn new(config: AdaptiveConfig) -> Self {
        Self {
            config,
            state: Mutex::new(State::default()),
            released: Notify::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The levels seen so far, the unclassified one first (by UID).
    pub fn levels(&self) -> Vec<LevelStats> {
        let state = self.lock();
        let mut out: Vec<LevelStats> = state
            .levels
            .iter()
            .map(|(uid, l)| LevelStats {
                priority_level_uid: uid.clone(),
                flow_schema_uids: l.flow_schemas.clone(),
                limit: l.cap(),
                in_flight: l.in_flight,
                peak_in_flight: l.peak_in_flight,
                completed: l.completed,
                throttled: l.throttled,
                decreases: l.decreases,
                queued: l.queued,
                retry_after_waits: l.retry_after_waits,
                retry_after_wait: l.retry_after_wait,
            })
            .collect();
        out.sort_by(|a, b| a.priority_level_uid.cmp(&b.priority_level_uid));
        out
    }

    /// Take a slot for `route` (verb and URL template), waiting while its
    /// level is full or held by a `Retry-After`, at most `max_wait`
    /// (`Err(waited)` past it).
    pub(crate) async fn acquire(
        self: &Arc<Self>,
        route: String,
        max_wait: Option<Duration>,
    ) -> Result<AdaptivePermit, Duration> {
        let start = Instant::now();
        let deadline = max_wait.map(|m| start + m);
        let mut waiting = Waiting {
            limiter: self,
            level: None,
            paused_since: None,
            held: false,
        };
        loop {
            let released = self.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            let held_until = {
                let mut state = self.lock();
                let now = Instant::now();
                waiting.settle(&mut state, now);
                let uid = state.routes.get(&route).cloned().unwrap_or_default();
                let level = state.level(&uid, &self.config);
                let paused = level.paused_until.filter(|until| *until > now);
                if paused.is_none() && level.in_flight < level.cap() {
                    level.in_flight += 1;
                    level.peak_in_flight = level.peak_in_flight.max(level.in_flight);
                    waiting.leave(&mut state, now);
                    return Ok(AdaptivePermit {
                        limiter: Arc::clone(self),
                        route,
                        level: uid,
                        sent: now,
                        done: false,
                    });
                }
                waiting.wait_in(&mut state, &uid, paused.is_some(), now);
                paused
            };
            if let (Some(until), Some(deadline)) = (held_until, deadline)
                && until >= deadline
            {
                return Err(until.saturating_duration_since(start));
            }
            let far = start + Duration::from_secs(86_400 * 365);
            let timer = tokio::time::sleep_until(held_until.unwrap_or(far));
            let limit = tokio::time::sleep_until(deadline.unwrap_or(far));
            tokio::select! {
                () = released => {}
                () = timer => {}
                () = limit => return Err(start.elapsed()),
            }
        }
    }

    /// Learn from an answer and free the slot.
    fn finish(&self, permit: &AdaptivePermit, answer: Answer<'_>) {
        let config = &self.config;
        let mut state = self.lock();
        let learned = answer.headers.and_then(|h| {
            let level = uid_header(h, PRIORITY_LEVEL_UID_HEADER)?;
            Some((level, uid_header(h, FLOW_SCHEMA_UID_HEADER)))
        });
        // Free the slot where it was taken.
        let busy = {
            let level = state.level(&permit.level, config);
            let busy = f64::from(level.in_flight) >= level.limit * 0.5;
            level.released();
            busy
        };
        let target = match learned {
            Some((uid, _)) => uid.to_owned(),
            None => permit.level.clone(),
        };
        if let Some((uid, schema)) = learned {
            let known = state.routes.get(&permit.route).map(String::as_str);
            if known != Some(uid) && (known.is_some() || state.routes.len() < MAX_ROUTES) {
                state.routes.insert(permit.route.clone(), uid.to_owned());
            }
            let level = state.level(uid, config);
            if let Some(schema) = schema
                && !level.flow_schemas.iter().any(|s| s == schema)
                && level.flow_schemas.len() < 16
            {
                level.flow_schemas.push(schema.to_owned());
            }
        }
        let level = state.level(&target, config);
        match answer.status {
            Some(429) => {
                level.throttled += 1;
                let now = Instant::now();
                let pause = answer
                    .retry_after
                    .unwrap_or(config.default_retry_after)
                    .min(config.max_pause);
                let until = now + pause;
                if level.paused_until.is_none_or(|t| t < until) {
                    level.paused_until = Some(until);
                }
                if level.last_decrease.is_none_or(|t| permit.sent > t) {
                    let floor = f64::from(config.min.min(config.max));
                    level.limit = (level.limit * config.decrease).max(floor);
                    level.last_decrease = Some(now);
                    level.decreases += 1;
                }
            }
            Some(_) => {
                level.completed += 1;
                if busy && level.limit < f64::from(config.max) {
                    let step = if level.decreases == 0 {
                        1.0
                    } else {
                        1.0 / level.limit
                    };
                    level.limit = (level.limit + step).min(f64::from(config.max));
                }
            }
            None => {}
        }
        drop(state);
        self.released.notify_waiters();
    }

    fn abandon(&self, permit: &AdaptivePermit) {
        self.lock().level(&permit.level, &self.config).released();
        self.released.notify_waiters();
    }
}

/// A request waiting in [`AdaptiveLimiter::acquire`]: counted in its
/// level's `queued` (and, while a `Retry-After` holds it, in the level's
/// Retry-After figures) until it takes a slot, gives up or is dropped.
struct Waiting<'l> {
    limiter: &'l AdaptiveLimiter,
    /// The level it is counted in.
    level: Option<String>,
    /// Since when a `Retry-After` holds it (this wait).
    paused_since: Option<Instant>,
    /// Whether it was counted in `retry_after_waits`.
    held: bool,
}

impl Waiting<'_> {
    /// Adds the time held by a `Retry-After` since the last look.
    fn settle(&mut self, state: &mut State, now: Instant) {
        if let (Some(uid), Some(since)) = (&self.level, self.paused_since.take()) {
            let level = state.level(uid, &self.limiter.config);
            level.retry_after_wait += now.saturating_duration_since(since);
        }
    }

    /// Counts the request waiting in level `uid`, held by a `Retry-After`
    /// when `paused`.
    fn wait_in(&mut self, state: &mut State, uid: &str, paused: bool, now: Instant) {
        let config = &self.limiter.config;
        if self.level.as_deref() != Some(uid) {
            if let Some(old) = self.level.take() {
                let level = state.level(&old, config);
                level.queued = level.queued.saturating_sub(1);
            }
            state.level(uid, config).queued += 1;
            self.level = Some(uid.to_owned());
        }
        if paused {
            if !self.held {
                state.level(uid, config).retry_after_waits += 1;
                self.held = true;
            }
            self.paused_since = Some(now);
        }
    }

    /// No longer waiting.
    fn leave(&mut self, state: &mut State, now: Instant) {
        self.settle(state, now);
        if let Some(old) = self.level.take() {
            let level = state.level(&old, &self.limiter.config);
            level.queued = level.queued.saturating_sub(1);
        }
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.level.is_some() {
            let limiter = self.limiter;
            self.leave(&mut limiter.lock(), Instant::now());
        }
    }
}

/// A slot of an [`AdaptiveLimiter`]: freed by [`finish`](Self::finish), or
/// when dropped (a cancelled call, learning nothing).
pub(crate) struct AdaptivePermit {
    limiter: Arc<AdaptiveLimiter>,
    route: String,
    level: String,
    sent: Instant,
    done: bool,
}

impl AdaptivePermit {
    /// Free the slot, learning from the answer.
    pub(crate) fn finish(mut self, answer: Answer<'_>) {
        self.done = true;
        self.limiter.finish(&self, answer);
    }
}

impl Drop for AdaptivePermit {
    fn drop(&mut self) {
        if !self.done {
            self.limiter.abandon(self);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    /// The statistics of the priority level `uid`.
    fn level(l: &AdaptiveLimiter, uid: &str) -> LevelStats {
        l.levels()
            .into_iter()
            .find(|s| s.priority_level_uid == uid)
            .unwrap()
    }

    fn headers(level: &str, schema: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            PRIORITY_LEVEL_UID_HEADER,
            HeaderValue::from_str(level).unwrap(),
        );
        h.insert(
            FLOW_SCHEMA_UID_HEADER,
            HeaderValue::from_str(schema).unwrap(),
        );
        h
    }

    fn answer(status: u16, h: Option<&HeaderMap>) -> Answer<'_> {
        Answer {
            status: Some(status),
            retry_after: None,
            headers: h,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn caps_in_flight_and_learns_the_level() {
        let l = Arc::new(AdaptiveLimiter::new(
            AdaptiveConfig::new().initial_concurrency(2),
        ));
        let a = l.acquire("GET /x".into(), None).await.unwrap();
        let b = l.acquire("GET /x".into(), None).await.unwrap();
        // The third waits for a slot, and gives up at its budget.
        let third = l
            .acquire("GET /x".into(), Some(Duration::from_secs(1)))
            .await;
        assert!(third.is_err());
        let h = headers("pl-1", "fs-1");
        a.finish(answer(200, Some(&h)));
        drop(b);
        let levels = l.levels();
        assert_eq!(levels.len(), 2, "{levels:?}");
        assert_eq!(levels[0].priority_level_uid, "");
        assert_eq!(levels[0].peak_in_flight, 2);
        assert_eq!(levels[0].in_flight, 0);
        assert_eq!(levels[1].priority_level_uid, "pl-1");
        assert_eq!(levels[1].flow_schema_uids, ["fs-1"]);
        assert_eq!(levels[1].completed, 1);
        // The route now counts against its learned level.
        let c = l.acquire("GET /x".into(), None).await.unwrap();
        assert_eq!(l.levels()[1].in_flight, 1);
        drop(c);
    }

    #[tokio::test(start_paused = true)]
    async fn a_429_halves_once_per_round_trip_and_holds_for_retry_after() {
        let l = Arc::new(AdaptiveLimiter::new(
            AdaptiveConfig::new().initial_concurrency(8),
        ));
        let h = headers("pl", "fs");
        let permits: Vec<_> = {
            let mut v = Vec::new();
            for _ in 0..8 {
                v.push(l.acquire("GET /y".into(), None).await.unwrap());
            }
            v
        };
        for p in permits {
            p.finish(Answer {
                status: Some(429),
                retry_after: Some(Duration::from_secs(3)),
                headers: Some(&h),
            });
        }
        let pl = level(&l, "pl");
        // Eight 429s of one round trip: one decrease (8 → 4).
        assert_eq!((pl.throttled, pl.decreases, pl.limit), (8, 1, 4));
        // Held for the server's 3 s: a 1 s budget fails at once.
        assert!(
            l.acquire("GET /y".into(), Some(Duration::from_secs(1)))
                .await
                .is_err()
        );
        let start = Instant::now();
        let waiter = tokio::spawn({
            let l = Arc::clone(&l);
            async move { l.acquire("GET /y".into(), None).await }
        });
        tokio::task::yield_now().await;
        let pl = level(&l, "pl");
        // Waiting now, and (with the one refused at its budget) two
        // requests held by the Retry-After.
        assert_eq!((pl.queued, pl.retry_after_waits), (1, 2));
        let p = waiter.await.unwrap().unwrap();
        assert_eq!(start.elapsed(), Duration::from_secs(3));
        let pl = level(&l, "pl");
        assert_eq!(
            (pl.queued, pl.retry_after_wait),
            (0, Duration::from_secs(3))
        );
        // A request sent after the decrease decreases again.
        p.finish(answer(429, Some(&h)));
        let pl = level(&l, "pl");
        assert_eq!((pl.decreases, pl.limit), (2, 2));
    }

    #[tokio::test(start_paused = true)]
    async fn grows_only_when_busy_and_ignores_hostile_headers() {
        let l = Arc::new(AdaptiveLimiter::new(
            AdaptiveConfig::new()
                .initial_concurrency(2)
                .max_concurrency(3),
        ));
        // One at a time: never busy enough to grow (1 of 2 is half: grows
        // once to 3, the maximum, and stays).
        for _ in 0..5 {
            let p = l.acquire("GET /z".into(), None).await.unwrap();
            let mut h = HeaderMap::new();
            h.insert(
                PRIORITY_LEVEL_UID_HEADER,
                HeaderValue::from_str(&"x".repeat(500)).unwrap(),
            );
            p.finish(answer(200, Some(&h)));
        }
        let levels = l.levels();
        // The overlong UID was ignored: only the unclassified level.
        assert_eq!(levels.len(), 1, "{levels:?}");
        assert_eq!(levels[0].limit, 3);
        assert_eq!(levels[0].completed, 5);
    }

    #[tokio::test(start_paused = true)]
    async fn a_hostile_retry_after_holds_at_most_the_cap() {
        let l = Arc::new(AdaptiveLimiter::new(
            AdaptiveConfig::new().max_pause(Duration::from_secs(5)),
        ));
        let p = l.acquire("GET /w".into(), None).await.unwrap();
        p.finish(Answer {
            status: Some(429),
            retry_after: Some(Duration::from_secs(u64::from(u32::MAX))),
            headers: None,
        });
        let start = Instant::now();
        let p = l.acquire("GET /w".into(), None).await.unwrap();
        assert_eq!(start.elapsed(), Duration::from_secs(5));
        // A transport failure (no answer) learns nothing.
        p.finish(Answer {
            status: None,
            retry_after: None,
            headers: None,
        });
        let levels = l.levels();
        assert_eq!((levels[0].throttled, levels[0].completed), (1, 0));
        assert_eq!(levels[0].in_flight, 0);
    }

    #[test]
    fn config_bounds() {
        let c = AdaptiveConfig::new()
            .initial_concurrency(0)
            .decrease_factor(f64::NAN);
        assert_eq!(c.initial(), 1);
        assert_eq!(c.decrease, 0.5);
        let c = AdaptiveConfig::new()
            .max_concurrency(4)
            .initial_concurrency(100);
        assert_eq!(c.initial(), 4);
        assert_eq!(AdaptiveConfig::new().decrease_factor(7.0).decrease, 0.95);
    }
}
