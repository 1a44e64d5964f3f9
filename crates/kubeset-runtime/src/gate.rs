//! The local view of which shards this replica may reconcile, and the
//! fence around each reconcile: [`ShardGate`], shared by
//! [`shard`](crate::shard) (a gate of many shards, each on its Lease) and
//! [`leader`](crate::leader) (leadership is its one-shard case), below
//! both. `hash` is the shard of an object (KEP-5866's hash of its uid).

// With `leader` but not `shard`, only the gate and the hash it needs are
// used: leader election's warm standby reconciles through it.
#![cfg_attr(not(feature = "shard"), allow(dead_code))]

use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;

use tokio::sync::{Notify, watch};
use tokio::time::Instant;

pub(crate) mod hash;
#[cfg(feature = "metrics")]
pub(crate) mod metrics;

use hash::{shard_of, uid_hash};

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// Reconciles of this shard may start or run until then.
    until: Option<Instant>,
    /// Changes on every revoke, so a fence of an earlier tenure stays
    /// closed after a re-acquire.
    epoch: u64,
    /// Fences alive (reconciles running).
    inflight: usize,
}

#[derive(Debug)]
struct Inner {
    shards: u32,
    slots: Mutex<Vec<Slot>>,
    /// Bumped on every change of a slot: fences re-check.
    changed: watch::Sender<u64>,
    /// The shards held (sorted), for triggers and readiness.
    held: watch::Sender<Vec<u32>>,
    /// The shards held with their epochs: a lapse and re-acquire between
    /// two looks still shows as a new tenure.
    tenures: watch::Sender<Vec<(u32, u64)>>,
    /// Signalled when a fence is dropped.
    drained: Notify,
    /// Reconciles admitted per shard, with the group's name.
    #[cfg(feature = "metrics")]
    metrics: std::sync::OnceLock<(metrics::ShardMetrics, String)>,
}

/// Which shards this replica holds, as `Sharder` keeps
/// it: cheap to clone, shared with the controller
/// ([`Controller::sharded`](crate::Controller::sharded)). A shard counts
/// as held only until the deadline its last successful Lease write set,
/// whether or not the sharder's loop runs: the gate closes by itself.
///
/// ```
/// use kubeset_runtime::shard::ShardGate;
/// let gate = ShardGate::new(64);
/// assert!(gate.admit("any-uid").is_none(), "nothing is held at first");
/// assert!(gate.held().is_empty());
/// ```
#[derive(Debug, Clone)]
pub struct ShardGate {
    inner: Arc<Inner>,
}

impl ShardGate {
    /// A gate over `shards` shards (at least 1), none held.
    #[must_use]
    pub fn new(shards: u32) -> Self {
        let shards = shards.max(1);
        let n = usize::try_from(shards).unwrap_or(usize::MAX);
        ShardGate {
            inner: Arc::new(Inner {
                shards,
                slots: Mutex::new(vec![Slot::default(); n]),
                changed: watch::channel(0).0,
                held: watch::channel(Vec::new()).0,
                tenures: watch::channel(Vec::new()).0,
                drained: Notify::new(),
                #[cfg(feature = "metrics")]
                metrics: std::sync::OnceLock::new(),
            }),
        }
    }

    /// The number of shards.
    #[must_use]
    pub fn shards(&self) -> u32 {
        self.inner.shards
    }

    fn slots(&self) -> MutexGuard<'_, Vec<Slot>> {
        // A panic while holding this lock cannot leave a slot half
        // written (plain copies), so a poisoned lock is still consistent.
        self.inner
            .slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn index(&self, shard: u32) -> Option<usize> {
        (shard < self.inner.shards).then(|| usize::try_from(shard).ok())?
    }

    /// The shard of an object's uid.
    #[must_use]
    pub fn shard_of_uid(&self, uid: &str) -> u32 {
        shard_of(uid_hash(uid), self.inner.shards)
    }

    /// Whether `shard` is held at this instant.
    #[must_use]
    pub fn is_held(&self, shard: u32) -> bool {
        let now = Instant::now();
        self.index(shard)
            .and_then(|i| self.slots()[i].until)
            .is_some_and(|until| now < until)
    }

    /// The shards held (as last published by the sharder; sorted).
    #[must_use]
    pub fn held(&self) -> Vec<u32> {
        self.inner.held.borrow().clone()
    }

    /// Changes whenever the set of held shards does.
    #[must_use]
    pub fn subscribe(&self) -> watch::Receiver<Vec<u32>> {
        self.inner.held.subscribe()
    }

    /// A fence for a reconcile of the object with `uid`, if its shard is
    /// held now; `None` otherwise (the reconcile must not start).
    #[must_use]
    pub fn admit(&self, uid: &str) -> Option<Fence> {
        let shard = self.shard_of_uid(uid);
        let i = self.index(shard)?;
        let now = Instant::now();
        let mut slots = self.slots();
        let slot = &mut slots[i];
        if slot.until.is_none_or(|u| now >= u) {
            return None;
        }
        slot.inflight += 1;
        let epoch = slot.epoch;
        drop(slots);
        #[cfg(feature = "metrics")]
        if let Some((m, group)) = self.inner.metrics.get() {
            m.reconciled(group, shard);
        }
        Some(Fence {
            gate: self.clone(),
            shard,
            epoch,
        })
    }

    /// Counts admitted reconciles per shard into `metrics` (the first
    /// call wins).
    #[cfg(feature = "metrics")]
    pub(crate) fn set_metrics(&self, metrics: metrics::ShardMetrics, group: &str) {
        let _ = self.inner.metrics.set((metrics, group.to_owned()));
    }

    /// Extends `shard` until `until` (a successful Lease write).
    /// Returns whether it was not held before.
    pub(crate) fn extend(&self, shard: u32, until: Instant) -> bool {
        let Some(i) = self.index(shard) else {
            return false;
        };
        let now = Instant::now();
        let newly = {
            let mut slots = self.slots();
            let slot = &mut slots[i];
            let newly = slot.until.is_none_or(|u| now >= u);
            if newly {
                // A lapsed tenure's fences must not revive.
                slot.epoch += 1;
            }
            slot.until = Some(until);
            newly
        };
        self.publish();
        newly
    }

    /// Stops `shard` now: no reconcile starts, running ones are cancelled
    /// at their next poll. Returns whether it was held.
    pub(crate) fn revoke(&self, shard: u32) -> bool {
        let Some(i) = self.index(shard) else {
            return false;
        };
        let was = {
            let mut slots = self.slots();
            let slot = &mut slots[i];
            let was = slot.until.is_some_and(|u| Instant::now() < u);
            slot.until = None;
            slot.epoch += 1;
            was
        };
        self.publish();
        was
    }

    /// The deadline of `shard`, if it has one (passed or not).
    pub(crate) fn until(&self, shard: u32) -> Option<Instant> {
        self.index(shard).and_then(|i| self.slots()[i].until)
    }

    /// Reconciles of `shard` still running (their fences not dropped).
    pub(crate) fn inflight(&self, shard: u32) -> usize {
        self.index(shard).map_or(0, |i| self.slots()[i].inflight)
    }

    /// Waits until no fence of `shard` is alive or `deadline` passes;
    /// returns whether it drained.
    pub(crate) async fn drain(&self, shard: u32, deadline: Instant) -> bool {
        loop {
            let notified = self.inner.drained.notified();
            if self.inflight(shard) == 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.inflight(shard) == 0;
            }
        }
    }

    /// Republishes the held set (also after a deadline lapsed).
    pub(crate) fn publish(&self) {
        let now = Instant::now();
        let tenures: Vec<(u32, u64)> = {
            let slots = self.slots();
            (0..self.inner.shards)
                .zip(slots.iter())
                .filter(|(_, s)| s.until.is_some_and(|u| now < u))
                .map(|(i, s)| (i, s.epoch))
                .collect()
        };
        let held: Vec<u32> = tenures.iter().map(|(i, _)| *i).collect();
        self.inner.tenures.send_if_modified(|v| {
            let changed = *v != tenures;
            *v = tenures;
            changed
        });
        self.inner.held.send_if_modified(|v| {
            let changed = *v != held;
            *v = held;
            changed
        });
        self.inner.changed.send_modify(|g| *g = g.wrapping_add(1));
    }

    /// The held shards with their epochs (for the controller's trigger).
    pub(crate) fn subscribe_tenures(&self) -> watch::Receiver<Vec<(u32, u64)>> {
        self.inner.tenures.subscribe()
    }

    /// Whether the fence's tenure is still open (same epoch, before the
    /// deadline), and the deadline.
    fn open(&self, shard: u32, epoch: u64) -> Option<Instant> {
        let i = self.index(shard)?;
        let slot = self.slots()[i];
        let until = slot.until?;
        (slot.epoch == epoch && Instant::now() < until).then_some(until)
    }
}

/// Permission to reconcile one object while its shard stays held (see
/// [`ShardGate::admit`]). Dropping it tells the sharder the reconcile is
/// over.
#[derive(Debug)]
#[must_use]
pub struct Fence {
    gate: ShardGate,
    shard: u32,
    epoch: u64,
}

impl Fence {
    /// The shard.
    #[must_use]
    pub fn shard(&self) -> u32 {
        self.shard
    }

    /// Runs `fut` while the shard stays held: `None` if it was revoked or
    /// its deadline passed first. The check comes before every poll of
    /// `fut`, so no code of `fut` runs after the deadline.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use kubeset_runtime::shard::ShardGate;
    /// let gate = ShardGate::new(1);
    /// assert!(gate.admit("uid").is_none());
    /// # }
    /// ```
    pub async fn guard<F: Future>(self, fut: F) -> Option<F::Output> {
        let mut changes = self.gate.inner.changed.subscribe();
        let mut fut = pin!(fut);
        loop {
            let until = self.gate.open(self.shard, self.epoch)?;
            let mut wake = pin!(async {
                tokio::select! {
                    _ = changes.changed() => {}
                    () = tokio::time::sleep_until(until) => {}
                }
            });
            let step = std::future::poll_fn(|cx| {
                if self.gate.open(self.shard, self.epoch).is_none() {
                    return Poll::Ready(None);
                }
                if wake.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Some(None));
                }
                fut.as_mut().poll(cx).map(|out| Some(Some(out)))
            })
            .await;
            match step {
                None => return None,
                Some(Some(out)) => return Some(out),
                // Something changed or the deadline came: re-check.
                Some(None) => {}
            }
        }
    }
}

impl Drop for Fence {
    fn drop(&mut self) {
        if let Some(i) = self.gate.index(self.shard) {
            let mut slots = self.gate.slots();
            slots[i].inflight = slots[i].inflight.saturating_sub(1);
        }
        self.gate.inner.drained.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn a_fence_cancels_at_the_deadline_and_on_revoke() {
        let gate = ShardGate::new(1);
        assert!(gate.extend(0, Instant::now() + Duration::from_secs(5)));
        let fence = gate.admit("x").expect("held");
        assert_eq!(gate.inflight(0), 1);
        // The reconcile would run for 10 s; the deadline is at 5 s.
        let out = fence
            .guard(tokio::time::sleep(Duration::from_secs(10)))
            .await;
        assert_eq!(out, None);
        assert_eq!(gate.inflight(0), 0, "the dropped fence is counted out");
        assert!(!gate.is_held(0));

        assert!(gate.extend(0, Instant::now() + Duration::from_secs(5)));
        let fence = gate.admit("x").expect("held again");
        let g2 = gate.clone();
        let revoker = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            g2.revoke(0)
        });
        let out = fence
            .guard(tokio::time::sleep(Duration::from_secs(3)))
            .await;
        assert_eq!(out, None, "revoked after 1 s");
        assert!(revoker.await.expect("joins"));
        assert!(gate.admit("x").is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn renewals_keep_a_fence_open_and_an_old_tenure_stays_closed() {
        let gate = ShardGate::new(1);
        gate.extend(0, Instant::now() + Duration::from_secs(2));
        let fence = gate.admit("x").expect("held");
        let g2 = gate.clone();
        let renewer = tokio::spawn(async move {
            for _ in 0..4 {
                tokio::time::sleep(Duration::from_secs(1)).await;
                g2.extend(0, Instant::now() + Duration::from_secs(2));
            }
        });
        let out = fence.guard(async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            7
        });
        assert_eq!(out.await, Some(7), "renewed every second, never lapsed");
        renewer.await.expect("joins");

        let stale = gate.admit("x").expect("held");
        gate.revoke(0);
        gate.extend(0, Instant::now() + Duration::from_secs(9));
        assert_eq!(
            stale.guard(async { 1 }).await,
            None,
            "a fence of the revoked tenure"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn drain_waits_for_running_fences() {
        let gate = ShardGate::new(2);
        gate.extend(0, Instant::now() + Duration::from_secs(60));
        gate.extend(1, Instant::now() + Duration::from_secs(60));
        let uid = (0..)
            .map(|i| format!("uid-{i}"))
            .find(|u| gate.shard_of_uid(u) == 1)
            .expect("some uid lands in shard 1");
        let fence = gate.admit(&uid).expect("held");
        assert_eq!(gate.held(), vec![0, 1]);
        let deadline = Instant::now() + Duration::from_secs(1);
        assert!(
            !gate.drain(1, deadline).await,
            "still running at the deadline"
        );
        assert!(gate.drain(0, deadline).await, "shard 0 has nothing running");
        drop(fence);
        assert!(gate.drain(1, Instant::now() + Duration::from_secs(1)).await);
    }
}
