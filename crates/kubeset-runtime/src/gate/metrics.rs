//! The sharder's metrics (feature `metrics`), controller-runtime style.
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `controller_runtime_shards_held` | gauge | `group`, `identity` |
//! | `controller_runtime_shard_handoffs_total` | counter | `group`, `identity`, `direction` (`acquired`, `released`, `lapsed`) |
//! | `controller_runtime_shard_takeover_seconds` | histogram | `group`, `identity` (from wanting a shard held by someone else or no one to holding it) |
//! | `controller_runtime_shard_reconciles_total` | counter | `group`, `shard` (reconciles admitted per shard) |

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;

fn seconds() -> Histogram {
    // 50 ms to ~14 min: a hand-off is a Lease expiry or a release.
    Histogram::new(exponential_buckets(0.05, 2.0, 15))
}

/// The sharder's metric families; cheap to clone. Give them to
/// `Sharder::with_metrics`.
///
/// ```
/// use kubeset_runtime::metrics::prometheus_client::registry::Registry;
/// use kubeset_runtime::shard::ShardMetrics;
/// let mut registry = Registry::default();
/// let metrics = ShardMetrics::register(&mut registry);
/// # let _ = metrics;
/// ```
#[derive(Debug, Clone)]
pub struct ShardMetrics {
    held: Family<Labels, Gauge>,
    handoffs: Family<Labels, Counter>,
    takeover: Family<Labels, Histogram, fn() -> Histogram>,
    reconciles: Family<Labels, Counter>,
}

impl ShardMetrics {
    /// Registers the families in `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let m = ShardMetrics {
            held: Family::default(),
            handoffs: Family::default(),
            takeover: Family::new_with_constructor(seconds),
            reconciles: Family::default(),
        };
        registry.register(
            "controller_runtime_shards_held",
            "Shards whose Lease this replica holds",
            m.held.clone(),
        );
        registry.register(
            "controller_runtime_shard_handoffs",
            "Shards acquired, released or lapsed (renew deadline passed)",
            m.handoffs.clone(),
        );
        registry.register(
            "controller_runtime_shard_takeover_seconds",
            "Time from wanting a shard to holding its Lease",
            m.takeover.clone(),
        );
        registry.register(
            "controller_runtime_shard_reconciles",
            "Reconciles admitted per shard",
            m.reconciles.clone(),
        );
        m
    }

    fn labels(group: &str, identity: &str) -> Labels {
        vec![
            ("group", group.to_owned()),
            ("identity", identity.to_owned()),
        ]
    }

    pub(crate) fn held(&self, group: &str, identity: &str, n: usize) {
        self.held
            .get_or_create(&Self::labels(group, identity))
            .set(i64::try_from(n).unwrap_or(i64::MAX));
    }

    pub(crate) fn handoff(&self, group: &str, identity: &str, direction: &'static str) {
        let mut labels = Self::labels(group, identity);
        labels.push(("direction", direction.to_owned()));
        self.handoffs.get_or_create(&labels).inc();
    }

    pub(crate) fn takeover(&self, group: &str, identity: &str, secs: f64) {
        self.takeover
            .get_or_create(&Self::labels(group, identity))
            .observe(secs);
    }

    /// Counts a reconcile admitted in `shard`.
    pub fn reconciled(&self, group: &str, shard: u32) {
        self.reconciles
            .get_or_create(&vec![
                ("group", group.to_owned()),
                ("shard", shard.to_string()),
            ])
            .inc();
    }
}
