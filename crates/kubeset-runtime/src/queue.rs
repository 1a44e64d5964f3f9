//! The work queue of the controller: client-go's workqueue semantics with
//! controller-runtime's priorities (its `priorityqueue`), plus aging.
//!
//! A key is queued at most once, never handed out while it is being
//! processed (a trigger during processing queues it again afterwards), and
//! can be delayed (requeue after, per-key failure backoff, debounce).
//!
//! Each ready key waits in the tier of its [`Priority`]; a key added again
//! keeps the highest priority asked and the earliest time (as
//! controller-runtime's `AddWithOpts`). [`WorkQueue::pop`] serves the tier
//! of the highest *effective* priority, first in first out within it. A
//! tier that waits while others are served gains `aging` points per pop
//! that passes it over and starts again from its own priority when it is
//! served, so nothing starves (controller-runtime's queue has no aging and
//! starves its initial list under steady changes, controller-runtime#3496).
//! With the default 10 points, changes ([`Priority::NORMAL`]) keep 11 of
//! every 12 reconciles while initial-list keys ([`Priority::INITIAL_LIST`],
//! 100 below) wait; resync keys ([`Priority::RESYNC`]) get one in 22. The
//! rule counts pops, not time: it is the same on a fast and a slow machine.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt;
use std::time::Duration;

use tokio::time::Instant;

use crate::store::ObjectKey;

/// How urgent a reconcile is: higher first (controller-runtime's
/// `priority int`, with its `LowPriority` = −100 for the initial list).
///
/// ```
/// use kubeset_runtime::Priority;
/// assert!(Priority::NORMAL > Priority::INITIAL_LIST);
/// assert!(Priority::INITIAL_LIST > Priority::RESYNC);
/// assert_eq!(Priority::new(5).get(), 5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Priority(i32);

impl Priority {
    /// Changes seen by a watch, and every other trigger: 0.
    pub const NORMAL: Priority = Priority(0);
    /// Objects of an initial list or a relist whose object changed: −100
    /// (controller-runtime's `LowPriority`).
    pub const INITIAL_LIST: Priority = Priority(-100);
    /// Objects unchanged since the last reconcile's state: a relist's
    /// unchanged objects and [`reconcile_all_on`](crate::Controller::reconcile_all_on): −200.
    pub const RESYNC: Priority = Priority(-200);

    /// A priority of `n` points.
    pub const fn new(n: i32) -> Self {
        Priority(n)
    }

    /// Its points.
    pub const fn get(self) -> i32 {
        self.0
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Points a waiting tier gains per pop that passes it over, by default.
pub const DEFAULT_AGING: u32 = 10;

/// The ready keys of one priority, oldest first. Entries of keys that
/// moved to a higher tier stay behind as stale (their sequence number no
/// longer matches) and are skipped.
#[derive(Debug, Default)]
struct Tier {
    keys: VecDeque<(ObjectKey, u64)>,
    live: usize,
    /// The pop count when this tier was last served or became non-empty.
    since: u64,
}

/// A deduplicating, delaying priority work queue of keys (see the module
/// docs).
///
/// ```
/// use kubeset_runtime::{ObjectKey, Priority, WorkQueue};
///
/// let mut q = WorkQueue::default();
/// q.add_with(ObjectKey::cluster("listed"), Priority::INITIAL_LIST);
/// q.add(ObjectKey::cluster("changed"));
/// assert_eq!(q.pop(), Some(ObjectKey::cluster("changed")));
/// assert_eq!(q.pop(), Some(ObjectKey::cluster("listed")));
/// ```
#[derive(Debug)]
pub struct WorkQueue {
    tiers: BTreeMap<Priority, Tier>,
    /// Ready keys: their tier and sequence number.
    queued: HashMap<ObjectKey, (Priority, u64)>,
    delayed: BTreeMap<(Instant, u64), ObjectKey>,
    delayed_at: HashMap<ObjectKey, (Instant, u64, Priority)>,
    seq: u64,
    pops: u64,
    aging: u32,
    active: HashSet<ObjectKey>,
    /// Keys triggered while active, with the priority asked.
    dirty: HashMap<ObjectKey, Priority>,
    failures: HashMap<ObjectKey, u32>,
    /// When each ready key became ready (for the queue-latency metric).
    ready_since: HashMap<ObjectKey, Instant>,
}

impl Default for WorkQueue {
    fn default() -> Self {
        WorkQueue::with_aging(DEFAULT_AGING)
    }
}

impl WorkQueue {
    /// An empty queue whose waiting tiers gain `aging` points per pop that
    /// passes them over (0: strict priorities, controller-runtime's).
    pub fn with_aging(aging: u32) -> Self {
        WorkQueue {
            tiers: BTreeMap::new(),
            queued: HashMap::new(),
            delayed: BTreeMap::new(),
            delayed_at: HashMap::new(),
            seq: 0,
            pops: 0,
            aging,
            active: HashSet::new(),
            dirty: HashMap::new(),
            failures: HashMap::new(),
            ready_since: HashMap::new(),
        }
    }

    /// Queues `key` now at [`Priority::NORMAL`] (no-op if queued;
    /// remembered if active).
    pub fn add(&mut self, key: ObjectKey) {
        self.add_with(key, Priority::NORMAL);
    }

    /// Queues `key` now at `priority`; a queued key moves up to it if it
    /// is higher, a delayed one is made ready, an active one is
    /// remembered to be queued when done.
    pub fn add_with(&mut self, key: ObjectKey, priority: Priority) {
        if let Some((key, priority)) = self.undelay_unless_active(key, priority) {
            self.make_ready(key, priority, Instant::now());
        }
    }

    /// A trigger of `key` at `priority` that queues or delays it: an
    /// active key is remembered as dirty instead (`None`); any other is
    /// taken out of the delayed keys, and goes on at the higher of
    /// `priority` and its delay's.
    fn undelay_unless_active(
        &mut self,
        key: ObjectKey,
        priority: Priority,
    ) -> Option<(ObjectKey, Priority)> {
        if self.active.contains(&key) {
            self.mark_dirty(key, priority);
            return None;
        }
        let priority = self
            .undelay(&key)
            .map_or(priority, |(_, p)| priority.max(p));
        Some((key, priority))
    }

    /// Takes `key` out of the delayed keys: when it was there, its time
    /// and priority.
    fn undelay(&mut self, key: &ObjectKey) -> Option<(Instant, Priority)> {
        let (at, seq, priority) = self.delayed_at.remove(key)?;
        self.delayed.remove(&(at, seq));
        Some((at, priority))
    }

    fn mark_dirty(&mut self, key: ObjectKey, priority: Priority) {
        let p = self.dirty.entry(key).or_insert(priority);
        *p = (*p).max(priority);
    }

    /// Puts `key` in the ready tier of `priority`, or moves it up there.
    fn make_ready(&mut self, key: ObjectKey, priority: Priority, now: Instant) {
        if let Some(&(p, _)) = self.queued.get(&key) {
            if p >= priority {
                return;
            }
            if let Some(tier) = self.tiers.get_mut(&p) {
                tier.live -= 1;
                if tier.live == 0 {
                    self.tiers.remove(&p);
                }
            }
        } else {
            self.ready_since.insert(key.clone(), now);
        }
        self.seq += 1;
        let pops = self.pops;
        let tier = self.tiers.entry(priority).or_default();
        if tier.live == 0 {
            tier.since = pops;
        }
        tier.live += 1;
        tier.keys.push_back((key.clone(), self.seq));
        self.queued.insert(key, (priority, self.seq));
    }

    /// Queues `key` at `at` at [`Priority::NORMAL`], or moves its delay to
    /// `at` if it is already delayed (a debounce: every trigger within the
    /// window pushes the reconcile back). No-op when it is ready or
    /// remembered as dirty.
    pub fn add_debounced(&mut self, key: ObjectKey, at: Instant) {
        self.add_debounced_with(key, at, Priority::NORMAL);
    }

    /// [`add_debounced`](Self::add_debounced) at `priority` (the highest
    /// asked is kept).
    pub fn add_debounced_with(&mut self, key: ObjectKey, at: Instant, priority: Priority) {
        if self.queued.contains_key(&key) || self.dirty.contains_key(&key) {
            return;
        }
        if let Some((key, priority)) = self.undelay_unless_active(key, priority) {
            self.delay(key, at, priority);
        }
    }

    fn delay(&mut self, key: ObjectKey, at: Instant, priority: Priority) {
        self.seq += 1;
        self.delayed.insert((at, self.seq), key.clone());
        self.delayed_at.insert(key, (at, self.seq, priority));
    }

    /// Queues `key` at `at` at [`Priority::NORMAL`] (an earlier schedule
    /// or a queued key wins).
    pub fn add_at(&mut self, key: ObjectKey, at: Instant) {
        self.add_at_with(key, at, Priority::NORMAL);
    }

    /// Queues `key` at `at` at `priority`: the earliest time and the
    /// highest priority asked win; a ready key stays ready (moved up if
    /// `priority` is higher).
    pub fn add_at_with(&mut self, key: ObjectKey, at: Instant, priority: Priority) {
        if self.queued.contains_key(&key) {
            self.make_ready(key, priority, Instant::now());
            return;
        }
        if let Some(p) = self.dirty.get_mut(&key) {
            *p = (*p).max(priority);
            return;
        }
        let (at, priority) = match self.undelay(&key) {
            Some((prev, p)) => (at.min(prev), priority.max(p)),
            None => (at, priority),
        };
        self.delay(key, at, priority);
    }

    /// Moves every key due at `now` to its ready tier.
    pub fn promote(&mut self, now: Instant) {
        while let Some(entry) = self.delayed.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let key = entry.remove();
            let Some((_, _, priority)) = self.delayed_at.remove(&key) else {
                continue;
            };
            if self.active.contains(&key) {
                self.mark_dirty(key, priority);
            } else {
                self.make_ready(key, priority, now);
            }
        }
    }

    /// When the next delayed key is due.
    pub fn next_due(&self) -> Option<Instant> {
        self.delayed.keys().next().map(|(at, _)| *at)
    }

    /// Takes the next ready key and marks it active.
    pub fn pop(&mut self) -> Option<ObjectKey> {
        self.pop_with_wait().map(|(key, _, _)| key)
    }

    /// The tier to serve: the highest effective priority (its own plus
    /// `aging` per pop since it was last served), ties to the higher own.
    fn next_tier(&self) -> Option<Priority> {
        self.tiers
            .iter()
            .filter(|(_, t)| t.live > 0)
            .map(|(p, t)| {
                let passed = i64::try_from(self.pops - t.since).unwrap_or(i64::MAX);
                let effective =
                    i64::from(p.0).saturating_add(passed.saturating_mul(i64::from(self.aging)));
                ((effective, *p), *p)
            })
            .max_by_key(|(rank, _)| *rank)
            .map(|(_, p)| p)
    }

    /// Takes the next ready key (see the module docs), marks it active,
    /// and says how long it waited ready in the queue (controller-runtime's
    /// queue duration) and at which priority.
    pub fn pop_with_wait(&mut self) -> Option<(ObjectKey, Duration, Priority)> {
        let priority = self.next_tier()?;
        let tier = self.tiers.get_mut(&priority)?;
        let key = loop {
            let (key, seq) = tier.keys.pop_front()?;
            if self.queued.get(&key) == Some(&(priority, seq)) {
                break key;
            }
        };
        tier.live -= 1;
        self.pops += 1;
        tier.since = self.pops;
        if tier.live == 0 {
            self.tiers.remove(&priority);
        }
        self.queued.remove(&key);
        let waited = self
            .ready_since
            .remove(&key)
            .map(|t| t.elapsed())
            .unwrap_or_default();
        self.active.insert(key.clone());
        Some((key, waited, priority))
    }

    /// Keys ready to be processed (client-go's queue depth: delayed keys
    /// are not counted).
    pub fn ready_len(&self) -> usize {
        self.queued.len()
    }

    /// Ready keys per priority, highest first (controller-runtime's
    /// `workqueue_depth{priority}`).
    pub fn ready_by_priority(&self) -> Vec<(Priority, usize)> {
        self.tiers
            .iter()
            .rev()
            .filter(|(_, t)| t.live > 0)
            .map(|(p, t)| (*p, t.live))
            .collect()
    }

    /// Keys being processed now.
    pub fn active_len(&self) -> usize {
        self.active.len()
    }

    /// Marks `key` no longer active; requeues it (at the highest priority
    /// asked meanwhile) if it was triggered meanwhile. Returns whether it
    /// was requeued.
    pub fn done(&mut self, key: &ObjectKey) -> bool {
        self.active.remove(key);
        if let Some(priority) = self.dirty.remove(key) {
            self.add_with(key.clone(), priority);
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
        self.queued.len() + self.delayed.len()
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
    fn higher_priorities_first_fifo_within_and_the_highest_asked_wins() {
        let mut q = WorkQueue::with_aging(0);
        q.add_with(k("l1"), Priority::INITIAL_LIST);
        q.add_with(k("l2"), Priority::INITIAL_LIST);
        q.add_with(k("r"), Priority::RESYNC);
        q.add(k("n"));
        q.add_with(k("l2"), Priority::NORMAL);
        q.add_with(k("n"), Priority::RESYNC);
        assert_eq!(
            q.ready_by_priority(),
            [
                (Priority::NORMAL, 2),
                (Priority::INITIAL_LIST, 1),
                (Priority::RESYNC, 1)
            ]
        );
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [k("n"), k("l2"), k("l1"), k("r")]);
        assert_eq!(q.ready_len(), 0);

        // Delayed: earliest time, highest priority; active: remembered.
        let t = Instant::now();
        q.add_at_with(k("d"), t + Duration::from_secs(9), Priority::RESYNC);
        q.add_at_with(k("d"), t + Duration::from_secs(5), Priority::NORMAL);
        q.add_at_with(k("d"), t + Duration::from_secs(1), Priority::INITIAL_LIST);
        q.promote(t + Duration::from_secs(1));
        q.add_with(k("x"), Priority::INITIAL_LIST);
        assert_eq!(
            q.pop_with_wait().map(|(k, _, p)| (k, p)),
            Some((k("d"), Priority::NORMAL))
        );
        q.add_with(k("d"), Priority::RESYNC);
        q.add_with(k("d"), Priority::NORMAL);
        assert!(q.done(&k("d")));
        assert_eq!(q.pop(), Some(k("d")), "requeued at the highest asked");
    }

    #[test]
    fn a_trigger_of_a_delayed_key_keeps_the_higher_priority_and_an_active_one_waits() {
        let mut q = WorkQueue::with_aging(0);
        let t = Instant::now();
        // Ready now: the delay's NORMAL beats the RESYNC asked.
        q.add_at_with(k("a"), t + Duration::from_secs(60), Priority::NORMAL);
        q.add_with(k("a"), Priority::RESYNC);
        assert_eq!(q.next_due(), None, "no longer delayed");
        assert_eq!(q.ready_by_priority(), [(Priority::NORMAL, 1)]);
        // Debounced: pushed back to the new time, at the delay's NORMAL.
        q.add_at_with(k("b"), t + Duration::from_secs(1), Priority::NORMAL);
        q.add_debounced_with(k("b"), t + Duration::from_secs(5), Priority::RESYNC);
        assert_eq!(q.next_due(), Some(t + Duration::from_secs(5)));
        q.promote(t + Duration::from_secs(5));
        assert_eq!(
            q.ready_by_priority(),
            [(Priority::NORMAL, 2)],
            "b went on at NORMAL"
        );
        // Active: both kinds of trigger are remembered, at the highest asked.
        assert_eq!(q.pop(), Some(k("a")));
        q.add_debounced_with(k("a"), t + Duration::from_secs(9), Priority::RESYNC);
        q.add_with(k("a"), Priority::INITIAL_LIST);
        assert_eq!(q.next_due(), None, "an active key is not delayed");
        assert_eq!(q.ready_by_priority(), [(Priority::NORMAL, 1)]);
        assert!(q.done(&k("a")));
        assert_eq!(
            q.ready_by_priority(),
            [(Priority::NORMAL, 1), (Priority::INITIAL_LIST, 1)]
        );
    }

    #[test]
    fn aging_serves_waiting_tiers_under_a_steady_stream_and_strict_starves_them() {
        // A steady stream of changes: one new NORMAL key before each pop.
        let run = |aging| {
            let mut q = WorkQueue::with_aging(aging);
            for i in 0..3 {
                q.add_with(k(&format!("list-{i}")), Priority::INITIAL_LIST);
            }
            q.add_with(k("resync"), Priority::RESYNC);
            let mut served = Vec::new();
            for i in 0..60 {
                q.add(k(&format!("change-{i}")));
                let key = q.pop().unwrap();
                q.done(&key);
                if !key.name.starts_with("change-") {
                    served.push((i, key.name));
                }
            }
            served
        };
        let aged = run(DEFAULT_AGING);
        let names: Vec<_> = aged.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(names, ["list-0", "resync", "list-1", "list-2"]);
        // Changes keep 11 of 12 pops while the initial list waits; the
        // resync key, 200 below, is served after 21 passes.
        assert_eq!(
            aged.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            [11, 21, 23, 35]
        );
        assert!(run(0).is_empty(), "strict priorities starve them");
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
