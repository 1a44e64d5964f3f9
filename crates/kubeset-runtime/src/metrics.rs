//! Controller metrics with controller-runtime's names, through
//! [`prometheus-client`](https://docs.rs/prometheus-client) (feature
//! `metrics`, `kubeset` feature `runtime-metrics`).
//!
//! Without the feature, [`ControllerMetrics`] is a no-op and nothing of
//! prometheus-client is built.

use std::time::Duration;

use crate::watcher::WatcherError;

/// The metrics one controller records; cheap to clone. Without the
/// `metrics` feature every method is a no-op.
#[derive(Debug, Clone, Default)]
pub struct ControllerMetrics {
    #[cfg(feature = "metrics")]
    inner: Option<std::sync::Arc<imp::Inner>>,
}

impl ControllerMetrics {
    /// Records nothing.
    pub fn disabled() -> Self {
        ControllerMetrics::default()
    }

    pub(crate) fn queue_depth(&self, _n: usize) {
        #[cfg(feature = "metrics")]
        if let Some(m) = &self.inner {
            m.depth.set(i64::try_from(_n).unwrap_or(i64::MAX));
        }
    }

    pub(crate) fn queue_add(&self) {
        #[cfg(feature = "metrics")]
        if let Some(m) = &self.inner {
            m.adds.inc();
        }
    }

    pub(crate) fn queue_wait(&self, _waited: Duration) {
        #[cfg(feature = "metrics")]
        if let Some(m) = &self.inner {
            m.queue_duration.observe(_waited.as_secs_f64());
        }
    }

    pub(crate) fn retry(&self) {
        #[cfg(feature = "metrics")]
        if let Some(m) = &self.inner {
            m.retries.inc();
        }
    }

    pub(crate) fn reconciled(&self, _took: Duration, _ok: bool) {
        #[cfg(feature = "metrics")]
        if let Some(m) = &self.inner {
            m.reconciled(_took, _ok);
        }
    }

    pub(crate) fn watch_error(&self, _e: &WatcherError) {
        #[cfg(feature = "metrics")]
        if let Some(m) = &self.inner {
            m.watch_error(_e);
        }
    }
}

#[cfg(feature = "metrics")]
mod imp {}
