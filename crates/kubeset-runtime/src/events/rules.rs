//! The pure rules of the recorder: which publishes are repeats of a
//! series, and which may be written (the spam filter). No I/O, no clock:
//! every function takes `now`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// A series ends when it has not been observed for this long (client-go's
/// `finishTime`, 6 minutes); the next occurrence starts a new Event.
pub const SERIES_FINISH: Duration = Duration::from_secs(6 * 60);

/// Burst of the per-object spam filter (client-go's
/// `defaultSpamBurst`, 25 writes).
pub const SPAM_BURST: u32 = 25;

/// One write token comes back every this long (client-go's
/// `defaultSpamQPS`, 1/300 s).
pub const SPAM_REFILL: Duration = Duration::from_secs(300);

/// At most this many series and spam buckets are remembered; the least
/// recently observed are forgotten first.
pub const CACHE_LIMIT: usize = 4096;

/// What makes two publishes the same series (client-go's `getKey`:
/// action, reason, reporting controller, regarding, related; not the type
/// and not the note, so a failure whose message varies is still one
/// series).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SeriesKey {
    /// The object the Event is about (`kind/namespace/name/uid`).
    pub regarding: String,
    /// The secondary object, if any.
    pub related: Option<String>,
    /// The Event's reason.
    pub reason: String,
    /// The Event's action.
    pub action: String,
    /// The reporting controller.
    pub reporting_controller: String,
}

/// What to do with a publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observation {
    /// The first of a series: create an Event.
    New,
    /// The `count`-th of a series (2 and up) whose Event is `name`.
    Repeat {
        /// The Event to update.
        name: String,
        /// The series count to write.
        count: i32,
    },
}

#[derive(Debug)]
struct Series {
    name: String,
    count: i32,
    last_observed: Instant,
}

/// Series by key.
#[derive(Debug, Default)]
pub struct Aggregator {
    series: HashMap<SeriesKey, Series>,
}

impl Aggregator {
    /// Records an occurrence of `key` at `now`; `name` is the Event name to
    /// use if it starts a series.
    pub fn observe(&mut self, key: &SeriesKey, name: &str, now: Instant) -> Observation {
        if let Some(s) = self.series.get_mut(key)
            && now.saturating_duration_since(s.last_observed) <= SERIES_FINISH
        {
            s.count = s.count.saturating_add(1);
            s.last_observed = now;
            return Observation::Repeat {
                name: s.name.clone(),
                count: s.count,
            };
        }
        if !self.series.contains_key(key) {
            evict_oldest(&mut self.series, |s| s.last_observed);
        }
        self.series.insert(
            key.clone(),
            Series {
                name: name.to_owned(),
                count: 1,
                last_observed: now,
            },
        );
        Observation::New
    }

    /// Forgets `key` (its Event is gone: the next occurrence creates one).
    #[cfg(test)]
    pub fn forget(&mut self, key: &SeriesKey) {
        self.series.remove(key);
    }
}

/// Makes room for one more entry when `map` is full: drops the entry
/// with the oldest `at`.
fn evict_oldest<K: Clone + Eq + std::hash::Hash, V>(
    map: &mut HashMap<K, V>,
    at: impl Fn(&V) -> Instant,
) {
    if map.len() < CACHE_LIMIT {
        return;
    }
    let oldest = map
        .iter()
        .min_by_key(|(_, v)| at(v))
        .map(|(k, _)| k.clone());
    if let Some(k) = oldest {
        map.remove(&k);
    }
}

#[derive(Debug)]
struct Bucket {
    tokens: u32,
    last_refill: Instant,
}

/// Token buckets per object (client-go's `EventSourceObjectSpamFilter`:
/// keyed by the reporting controller and the regarding object).
#[derive(Debug, Default)]
pub struct SpamFilter {
    buckets: HashMap<(String, String), Bucket>,
}

impl SpamFilter {
    /// Whether a write about `object` by `controller` may go out at `now`
    /// (takes a token when it may).
    pub fn allow(&mut self, controller: &str, object: &str, now: Instant) -> bool {
        let key = (controller.to_owned(), object.to_owned());
        if !self.buckets.contains_key(&key) {
            evict_oldest(&mut self.buckets, |b| b.last_refill);
        }
        let b = self.buckets.entry(key).or_insert(Bucket {
            tokens: SPAM_BURST,
            last_refill: now,
        });
        let refills =
            now.saturating_duration_since(b.last_refill).as_secs() / SPAM_REFILL.as_secs();
        if refills > 0 {
            let refills = u32::try_from(refills).unwrap_or(u32::MAX);
            b.tokens = b.tokens.saturating_add(refills).min(SPAM_BURST);
            b.last_refill += SPAM_REFILL * refills.min(SPAM_BURST);
            if b.tokens == SPAM_BURST {
                b.last_refill = now;
            }
        }
        if b.tokens == 0 {
            return false;
        }
        b.tokens -= 1;
        true
    }
}

/// Cuts `s` to at most `max` bytes at a character boundary.
pub fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(reason: &str) -> SeriesKey {
        SeriesKey {
            regarding: "Pod/ns/web/u1".into(),
            related: None,
            reason: reason.into(),
            action: "Reconcile".into(),
            reporting_controller: "example.com/ctl".into(),
        }
    }

    /// client-go's vectors (tools/events): the second occurrence starts a
    /// series at count 2; different reasons are different series; a series
    /// idle for longer than 6 minutes is finished.
    #[test]
    fn repeats_become_a_series_until_it_goes_idle() {
        let mut a = Aggregator::default();
        let t = Instant::now();
        assert_eq!(a.observe(&key("Failed"), "web.1", t), Observation::New);
        assert_eq!(
            a.observe(&key("Failed"), "web.2", t + Duration::from_secs(1)),
            Observation::Repeat {
                name: "web.1".into(),
                count: 2
            }
        );
        assert_eq!(a.observe(&key("Other"), "web.3", t), Observation::New);
        let mut at = t + Duration::from_secs(1);
        for count in 3..=10 {
            at += Duration::from_secs(60);
            assert_eq!(
                a.observe(&key("Failed"), "x", at),
                Observation::Repeat {
                    name: "web.1".into(),
                    count
                }
            );
        }
        let idle = at + SERIES_FINISH + Duration::from_secs(1);
        assert_eq!(a.observe(&key("Failed"), "web.9", idle), Observation::New);
        a.forget(&key("Failed"));
        assert_eq!(a.observe(&key("Failed"), "web.10", idle), Observation::New);
    }

    /// client-go's spam filter: a burst of 25 per object, then one write per
    /// 5 minutes; other objects and controllers have their own buckets.
    #[test]
    fn spam_filter_allows_a_burst_then_one_per_five_minutes() {
        let mut f = SpamFilter::default();
        let t = Instant::now();
        for i in 0..SPAM_BURST {
            assert!(f.allow("ctl", "Pod/ns/web", t), "write {i}");
        }
        assert!(!f.allow("ctl", "Pod/ns/web", t));
        assert!(f.allow("ctl", "Pod/ns/db", t), "another object");
        assert!(f.allow("other", "Pod/ns/web", t), "another controller");
        assert!(!f.allow("ctl", "Pod/ns/web", t + Duration::from_secs(299)));
        assert!(f.allow("ctl", "Pod/ns/web", t + Duration::from_secs(300)));
        assert!(!f.allow("ctl", "Pod/ns/web", t + Duration::from_secs(301)));
        let later = t + Duration::from_secs(300 * 100);
        for _ in 0..SPAM_BURST {
            assert!(
                f.allow("ctl", "Pod/ns/web", later),
                "refilled to the burst, not past it"
            );
        }
        assert!(!f.allow("ctl", "Pod/ns/web", later));
    }

    #[test]
    fn truncates_at_a_char_boundary() {
        assert_eq!(truncate("héllo", 2), "h");
        assert_eq!(truncate("héllo", 3), "hé");
        assert_eq!(truncate("abc", 10), "abc");
    }
}
