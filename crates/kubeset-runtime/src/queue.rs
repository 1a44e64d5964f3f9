//! The work queue of the controller: client-go's workqueue semantics.
//!
//! A key is queued at most once, never handed out while it is being
//! processed (a trigger during processing queues it again afterwards), and
//! can be delayed (requeue after, per-key failure backoff, debounce).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::time::Duration;

use tokio::time::Instant;

use crate::store::ObjectKey;

/// A deduplicating, delaying work queue of keys (client-go's workqueue
/// semantics: a key is queued at most once, and never handed out while it
/// is being processed).
#[derive(Debug, Default)]
pub struct WorkQueue {
    ready: VecDeque<ObjectKey>,
    queued: HashSet<ObjectKey>,
    delayed: BTreeMap<(Instant, u64), ObjectKey>,
    delayed_at: HashMap<ObjectKey, (Instant, u64)>,
    seq: u64,
    active: HashSet<ObjectKey>,
    dirty: HashSet<ObjectKey>,
    failures: HashMap<ObjectKey, u32>,
    /// When each ready key became ready (for the queue-latency metric).
    ready_since: HashMap<ObjectKey, Instant>,
}

impl WorkQueue {
    /// Queues `key` now (no-op if queued; remembered if active).
    pub fn add(&mut self, key: ObjectKey) {
        if self.active.contains(&key) {
            self.dirty.insert(key);
            return;
        }
        if let Some(at) = self.delayed_at.remove(&key) {
            self.delayed.remove(&at);
        }
        if self.queued.insert(key.clone()) {
            self.ready_since.insert(key.clone(), Instant::now());
            self.ready.push_back(key);
        }
    }

    /// Queues `key` at `at`, or moves its delay to `at` if it is already
    /// delayed (a debounce: every trigger within the window pushes the
    /// reconcile back). No-op when it is ready or remembered as dirty.
    pub fn add_debounced(&mut self, key: ObjectKey, at: Instant) {
        if self.queued.contains(&key) || self.dirty.contains(&key) {
            return;
        }
        if self.active.contains(&key) {
            self.dirty.insert(key);
            return;
        }
        if let Some(prev) = self.delayed_at.remove(&key) {
            self.delayed.remove(&prev);
        }
        self.add_at(key, at);
    }

    /// Queues `key` at `at` (an earlier schedule or a queued key wins).
    pub fn add_at(&mut self, key: ObjectKey, at: Instant) {
        if self.queued.contains(&key) || self.dirty.contains(&key) {
            return;
        }
        if let Some(prev) = self.delayed_at.get(&key) {
            if prev.0 <= at {
                return;
            }
            let prev = *prev;
            self.delayed.remove(&prev);
        }
        self.seq += 1;
        let slot = (at, self.seq);
        self.delayed.insert(slot, key.clone());
        self.delayed_at.insert(key, slot);
    }

    /// Moves every key due at `now` to the ready queue.
    pub fn promote(&mut self, now: Instant) {
        while let Some(entry) = self.delayed.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let key = entry.remove();
            self.delayed_at.remove(&key);
            if self.active.contains(&key) {
                self.dirty.insert(key);
            } else if self.queued.insert(key.clone()) {
                self.ready_since.insert(key.clone(), now);
                self.ready.push_back(key);
            }
        }
    }

    /// When the next delayed key is due.
    pub fn next_due(&self) -> Option<Instant> {
        self.delayed.keys().next().map(|(at, _)| *at)
    }

    /// Takes the next ready key and marks it active.
    pub fn pop(&mut self) -> Option<ObjectKey> {
        self.pop_with_wait().map(|(key, _)| key)
    }

    /// Takes the next ready key, marks it active, and says how long it
    /// waited ready in the queue (controller-runtime's queue duration).
    pub fn pop_with_wait(&mut self) -> Option<(ObjectKey, Duration)> {
        let key = self.ready.pop_front()?;
        self.queued.remove(&key);
        let waited = self
            .ready_since
            .remove(&key)
            .map(|t| t.elapsed())
            .unwrap_or_default();
        self.active.insert(key.clone());
        Some((key, waited))
    }

    /// Keys ready to be processed (client-go's queue depth: delayed keys
    /// are not counted).
    pub fn ready_len(&self) -> usize {
        self.ready.len()
    }

    /// Keys being processed now.
    pub fn active_len(&self) -> usize {
        self.active.len()
    }

    /// Marks `key` no longer active; requeues it if it was triggered
    /// meanwhile. Returns whether it was requeued.
    pub fn done(&mut self, key: &ObjectKey) -> bool {
        self.active.remove(key);
        if self.dirty.remove(key) {
            self.add(key.clone());
            true
        } else {
            false
        }
    }

    /// Counts a failure of `key` and returns how many in a row.
    pub fn fail(&mut self, key: &ObjectKey) -> u32 {
        let n = self.failures.entry(key.clone()).or_insert(0);
        *n = n.saturating_add(1);
        *n
    }

    /// Forgets the failures of `key`.
    pub fn forget(&mut self, key: &ObjectKey) {
        self.failures.remove(key);
    }

    /// Keys waiting (ready or delayed), not counting active ones.
    pub fn len(&self) -> usize {
        self.ready.len() + self.delayed.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Per-key failure backoff: `base · 2^(failures−1)`, capped at `max`
/// (client-go's item exponential failure rate limiter: 5 ms to 1000 s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryBackoff {
    /// Delay after the first failure.
    pub base: Duration,
    /// Largest delay.
    pub max: Duration,
}

impl Default for RetryBackoff {
    fn default() -> Self {
        RetryBackoff {
            base: Duration::from_millis(5),
            max: Duration::from_secs(1000),
        }
    }
}

impl RetryBackoff {
    /// The delay after `failures` failures in a row (at least 1).
    pub fn delay(&self, failures: u32) -> Duration {
        let exp = failures.saturating_sub(1).min(40);
        let factor = 1u64 << exp;
        let nanos = u64::try_from(self.base.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(nanos.saturating_mul(factor)).min(self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(n: &str) -> ObjectKey {
        ObjectKey::namespaced("ns", n)
    }

    #[test]
    fn queue_dedups_and_never_hands_out_an_active_key() {
        let mut q = WorkQueue::default();
        q.add(k("a"));
        q.add(k("b"));
        q.add(k("a"));
        assert_eq!(q.len(), 2);
        let a = q.pop().unwrap();
        assert_eq!(a, k("a"));
        q.add(k("a"));
        q.add(k("a"));
        assert_eq!(q.pop(), Some(k("b")));
        assert_eq!(q.pop(), None, "a is active, its new trigger waits");
        assert!(
            q.done(&k("a")),
            "triggered while active: queued again, once"
        );
        assert_eq!(q.pop(), Some(k("a")));
        assert_eq!(q.pop(), None);
        assert!(!q.done(&k("a")));
        assert!(!q.done(&k("b")));
        assert!(q.is_empty());
    }

    #[test]
    fn delayed_keys_keep_the_earliest_schedule_and_yield_to_immediate_adds() {
        let mut q = WorkQueue::default();
        let t = Instant::now();
        q.add_at(k("a"), t + Duration::from_secs(10));
        q.add_at(k("a"), t + Duration::from_secs(5));
        q.add_at(k("a"), t + Duration::from_secs(20));
        assert_eq!(q.next_due(), Some(t + Duration::from_secs(5)));
        q.promote(t + Duration::from_secs(4));
        assert_eq!(q.pop(), None);
        q.promote(t + Duration::from_secs(5));
        assert_eq!(q.pop(), Some(k("a")));
        q.done(&k("a"));
        q.add_at(k("b"), t + Duration::from_secs(30));
        q.add(k("b"));
        assert_eq!(q.next_due(), None, "an immediate add cancels the delay");
        assert_eq!(q.pop(), Some(k("b")));
    }

    #[test]
    fn debounce_pushes_a_delayed_key_back_but_not_a_ready_one() {
        let mut q = WorkQueue::default();
        let t = Instant::now();
        q.add_debounced(k("a"), t + Duration::from_secs(1));
        q.add_debounced(k("a"), t + Duration::from_secs(3));
        assert_eq!(q.next_due(), Some(t + Duration::from_secs(3)));
        q.add(k("b"));
        q.add_debounced(k("b"), t + Duration::from_secs(9));
        assert_eq!(q.pop(), Some(k("b")), "ready stays ready");
        q.add_debounced(k("b"), t + Duration::from_secs(9));
        assert!(q.done(&k("b")), "a debounced trigger while active is kept");
    }

    #[test]
    fn retry_backoff_doubles_to_the_cap() {
        let r = RetryBackoff::default();
        assert_eq!(r.delay(1), Duration::from_millis(5));
        assert_eq!(r.delay(2), Duration::from_millis(10));
        assert_eq!(r.delay(11), Duration::from_millis(5120));
        assert_eq!(r.delay(30), Duration::from_secs(1000));
        assert_eq!(r.delay(u32::MAX), Duration::from_secs(1000));
        let mut q = WorkQueue::default();
        assert_eq!(q.fail(&k("a")), 1);
        assert_eq!(q.fail(&k("a")), 2);
        q.forget(&k("a"));
        assert_eq!(q.fail(&k("a")), 1);
    }
}
