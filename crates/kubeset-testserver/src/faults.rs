//! Fault injection, per replica.
//!
//! Every request a replica serves first passes [`FaultState::before_request`]:
//! a hung replica never answers, latency delays, `fail_next` answers with a
//! status (and `Retry-After`), `malformed_next` answers with a truncated
//! JSON body. Watch streams observe `cut_watches` and hang too. `down` and
//! `up` live on [`Faults`](crate::Faults) because they close and reopen the listener.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::watch;

/// Whether a replica is serving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Serving normally.
    Up,
    /// Listener closed: connections are refused.
    Down,
    /// Connections are accepted, requests never answered.
    Hang,
}

impl Mode {
    /// `up`, `down` or `hang`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Up => "up",
            Mode::Down => "down",
            Mode::Hang => "hang",
        }
    }
}

/// A queued injected failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fail {
    pub(crate) remaining: u32,
    pub(crate) status: u16,
    pub(crate) retry_after: Option<u64>,
}

/// What to do with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Serve it.
    Serve,
    /// Answer this status (with `Retry-After` seconds).
    Fail {
        status: u16,
        retry_after: Option<u64>,
    },
    /// Answer a truncated JSON body.
    Malformed,
}

/// The fault state of one replica.
pub(crate) struct FaultState {
    mode: watch::Sender<Mode>,
    latency_ms: AtomicU64,
    fail: Mutex<Option<Fail>>,
    malformed: AtomicU32,
    cut: watch::Sender<u64>,
    served: AtomicU64,
}

impl FaultState {
    pub(crate) fn new() -> Self {
        Self {
            mode: watch::channel(Mode::Up).0,
            latency_ms: AtomicU64::new(0),
            fail: Mutex::new(None),
            malformed: AtomicU32::new(0),
            cut: watch::channel(0).0,
            served: AtomicU64::new(0),
        }
    }

    pub(crate) fn mode(&self) -> Mode {
        *self.mode.borrow()
    }

    pub(crate) fn set_mode(&self, m: Mode) {
        self.mode.send_replace(m);
    }

    pub(crate) fn latency(&self) -> Duration {
        Duration::from_millis(self.latency_ms.load(Ordering::SeqCst))
    }

    pub(crate) fn set_latency(&self, d: Duration) {
        self.latency_ms.store(
            u64::try_from(d.as_millis()).unwrap_or(u64::MAX),
            Ordering::SeqCst,
        );
    }

    pub(crate) fn set_fail(&self, count: u32, status: u16, retry_after: Option<u64>) {
        let mut f = self.fail.lock().unwrap_or_else(|p| p.into_inner());
        *f = (count > 0).then_some(Fail {
            remaining: count,
            status,
            retry_after,
        });
    }

    pub(crate) fn pending_fail(&self) -> Option<Fail> {
        *self.fail.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn set_malformed(&self, count: u32) {
        self.malformed.store(count, Ordering::SeqCst);
    }

    pub(crate) fn pending_malformed(&self) -> u32 {
        self.malformed.load(Ordering::SeqCst)
    }

    pub(crate) fn cut_watches(&self) {
        self.cut.send_modify(|g| *g += 1);
    }

    pub(crate) fn subscribe_cut(&self) -> watch::Receiver<u64> {
        self.cut.subscribe()
    }

    pub(crate) fn subscribe_mode(&self) -> watch::Receiver<Mode> {
        self.mode.subscribe()
    }

    /// Requests served since start (after faults were applied).
    pub(crate) fn served(&self) -> u64 {
        self.served.load(Ordering::SeqCst)
    }

    /// Waits while the replica hangs; returns the mode once it does not.
    pub(crate) async fn wait_not_hung(&self) -> Mode {
        let mut rx = self.mode.subscribe();
        loop {
            let m = *rx.borrow_and_update();
            if m != Mode::Hang {
                return m;
            }
            if rx.changed().await.is_err() {
                return m;
            }
        }
    }

    /// Applies hang and latency, then decides the fate of one request.
    pub(crate) async fn before_request(&self) -> Verdict {
        self.wait_not_hung().await;
        let lat = self.latency();
        if !lat.is_zero() {
            tokio::time::sleep(lat).await;
            self.wait_not_hung().await;
        }
        self.served.fetch_add(1, Ordering::SeqCst);
        {
            let mut f = self.fail.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(fail) = f.as_mut() {
                let v = Verdict::Fail {
                    status: fail.status,
                    retry_after: fail.retry_after,
                };
                fail.remaining -= 1;
                if fail.remaining == 0 {
                    *f = None;
                }
                return v;
            }
        }
        let took = self
            .malformed
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if took.is_ok() {
            return Verdict::Malformed;
        }
        Verdict::Serve
    }
}
