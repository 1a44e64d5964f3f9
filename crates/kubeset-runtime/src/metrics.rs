//! Controller metrics with controller-runtime's names, through
//! [`prometheus-client`](https://docs.rs/prometheus-client) (the official
//! Prometheus Rust client: OpenMetrics text, no global registry, no
//! exporter threads; builds dtoa, itoa, parking_lot and a small derive).
//! Feature `metrics` of this crate, `metrics` of `kubeset`.
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `controller_runtime_reconcile_total` | counter | `controller`, `result` (`success`, `error`, `requeue`, `requeue_after`) |
//! | `controller_runtime_reconcile_errors_total` | counter | `controller` |
//! | `controller_runtime_reconcile_time_seconds` | histogram | `controller` |
//! | `controller_runtime_active_workers` | gauge | `controller` |
//! | `controller_runtime_reconcile_timeouts_total` | counter | `controller` (reconciles cancelled at [`Config::reconcile_timeout`](crate::Config::reconcile_timeout)) |
//! | `workqueue_depth` | gauge | `name`, `priority` (keys ready per [`Priority`], as controller-runtime's priority queue; delayed keys are not counted, as in client-go; beyond 25 distinct priorities the rest add up under `other`) |
//! | `workqueue_adds_total` | counter | `name` |
//! | `workqueue_retries_total` | counter | `name` |
//! | `workqueue_queue_duration_seconds` | histogram | `name` |
//! | `workqueue_work_duration_seconds` | histogram | `name` |
//! | `kubeset_watch_errors_total` | counter | `controller`, `reason` (`decode`, `list`, `watch`, `memory_budget`, …) |
//! | `kubeset_cache_objects` | gauge | `controller` (objects in the primary cache, a relist's new ones included) |
//! | `kubeset_cache_bytes` | gauge | `controller` (their estimated bytes, see [`crate::memory`]; 0 unless the cache counts them) |
//!
//! The last three have no controller-runtime counterpart: each watcher
//! error (after which the watch restarts, or, for `decode`, skips an
//! object; `memory_budget` stops it), and what the cache holds
//! (controller-runtime#3182 asks for a cache-size metric).
//!
//! [`Metrics::rest`] bridges the REST layer's hooks
//! (`kubeset::rest::metrics::Metrics`, set with
//! `RestConfig::with_metrics`) into the same registry, with client-go's
//! (component-base) names:
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `rest_client_request_duration_seconds` | histogram | `verb` |
//! | `rest_client_rate_limiter_duration_seconds` | histogram | `verb` |
//! | `rest_client_requests_total` | counter | `code` (`<error>` for a transport failure), `method`, `host` |
//! | `rest_client_request_retries_total` | counter | `code`, `verb`, `host` |
//!
//! [`LimiterMetrics`] exports kubeset-rest's adaptive limiter
//! (`RestConfig::with_adaptive_limiter`) per priority level: its cap,
//! requests in flight and queued, 429s, decreases and the waits a
//! server's `Retry-After` imposed (`kubeset_adaptive_limiter_*`, read from
//! the limiter at each scrape; no client-go or controller-runtime
//! counterpart: their client-side limiter is a static token bucket).
//!
//! Without the feature, [`ControllerMetrics`] is a no-op and nothing of
//! prometheus-client is built.
//!
//! [`serve`] answers Prometheus' scrapes of `/metrics` from the registry
//! (plain HTTP/1.1, bounded requests), as controller-runtime's metrics
//! server does on its `BindAddress`:
//!
//! ```ignore
//! let mut registry = prometheus_client::registry::Registry::default();
//! let metrics = kubeset_runtime::metrics::Metrics::register(&mut registry);
//! let controller = Controller::new(api, WatcherConfig::default())
//!     .with_metrics(metrics.controller("greeter"));
//! tokio::spawn(kubeset_runtime::metrics::serve("0.0.0.0:8080", Arc::new(registry)));
//! ```
// Without the feature these items do not exist: their links go to the
// crate's feature table.
#![cfg_attr(
    not(feature = "metrics"),
    doc = "\n[`Metrics::rest`]: ../index.html#features\n[`LimiterMetrics`]: ../index.html#features\n[`serve`]: ../index.html#features"
)]

use std::time::Duration;

use crate::memory::CacheMemory;
use crate::queue::Priority;
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

    /// Whether anything is recorded (callers skip work for a no-op).
    pub(crate) fn enabled(&self) -> bool {
        #[cfg(feature = "metrics")]
        return self.inner.is_some();
        #[cfg(not(feature = "metrics"))]
        false
    }

    pub(crate) fn queue_depth(&self, _by_priority: &[(Priority, usize)]) {
        #[cfg(feature = "metrics")]
        if let Some(m) = &self.inner {
            m.depth(_by_priority);
        }
    }

    pub(crate) fn cache(&self, _held: CacheMemory) {
        #[cfg(feature = "metrics")]
        if let Some(m) = &self.inner {
            m.cache_objects
                .set(i64::try_from(_held.objects).unwrap_or(i64::MAX));
            m.cache_bytes
                .set(i64::try_from(_held.bytes).unwrap_or(i64::MAX));
        }
    }

    pub(crate) fn reconcile_timeout(&self) {
        #[cfg(feature = "metrics")]
        if let Some(m) = &self.inner {
            m.timeouts.inc();
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

    pub(crate) fn reconciled(&self, _took: Duration, _result: &'static str) {
        #[cfg(feature = "metrics")]
        if let Some(m) = &self.inner {
            m.reconciled(_took, _result);
        }
    }

    pub(crate) fn active(&self, _n: usize) {
        #[cfg(feature = "metrics")]
        if let Some(m) = &self.inner {
            m.active.set(i64::try_from(_n).unwrap_or(i64::MAX));
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
pub use imp::{Metrics, RestMetrics};
#[cfg(feature = "metrics")]
mod limiter;
#[cfg(feature = "metrics")]
pub use limiter::{LimiterMetrics, UNCLASSIFIED_LEVEL};
#[cfg(feature = "metrics")]
mod serve;
/// The metrics crate, for the `Registry` and the text encoder.
#[cfg(feature = "metrics")]
pub use prometheus_client;
#[cfg(feature = "metrics")]
pub use serve::{HEAD_TIMEOUT, MAX_HEAD, serve, serve_listener};

#[cfg(feature = "metrics")]
mod imp {
    use std::sync::Arc;
    use std::time::Duration;

    use kubeset_client::rest::Verb;
    use prometheus_client::metrics::counter::Counter;
    use prometheus_client::metrics::family::Family;
    use prometheus_client::metrics::gauge::Gauge;
    use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
    use prometheus_client::registry::Registry;

    use super::ControllerMetrics;
    use crate::watcher::WatcherError;

    type Labels = Vec<(&'static str, String)>;
    type Hist = Family<Labels, Histogram, fn() -> Histogram>;

    /// controller-runtime's buckets for reconcile time: 5 ms to ~80 s.
    fn seconds() -> Histogram {
        Histogram::new(exponential_buckets(0.005, 2.0, 15))
    }

    /// The metric families, registered once per registry; hand each
    /// controller its handles with [`Metrics::controller`]. Cheap to clone.
    #[derive(Debug, Clone)]
    pub struct Metrics {
        reconcile_total: Family<Labels, Counter>,
        reconcile_errors: Family<Labels, Counter>,
        reconcile_time: Hist,
        active_workers: Family<Labels, Gauge>,
        timeouts: Family<Labels, Counter>,
        cache_objects: Family<Labels, Gauge>,
        cache_bytes: Family<Labels, Gauge>,
        depth: Family<Labels, Gauge>,
        adds: Family<Labels, Counter>,
        retries: Family<Labels, Counter>,
        queue_duration: Hist,
        work_duration: Hist,
        watch_errors: Family<Labels, Counter>,
        rest: RestMetrics,
    }

    /// The REST layer's hooks into a registry ([`Metrics::rest`]).
    #[derive(Debug, Clone)]
    pub struct RestMetrics {
        latency: Hist,
        rate_limiter: Hist,
        requests: Family<Labels, Counter>,
        retries: Family<Labels, Counter>,
    }

    fn code_label(code: Option<u16>) -> String {
        code.map_or_else(|| "<error>".to_owned(), |c| c.to_string())
    }

    impl kubeset_client::rest::metrics::Metrics for RestMetrics {
        fn request_latency(&self, verb: Verb, _url_template: &str, latency: Duration) {
            let labels = vec![("verb", verb.as_str().to_owned())];
            self.latency
                .get_or_create(&labels)
                .observe(latency.as_secs_f64());
        }

        fn request_result(&self, verb: Verb, host: &str, code: Option<u16>) {
            let labels = vec![
                ("code", code_label(code)),
                ("method", verb.as_str().to_owned()),
                ("host", host.to_owned()),
            ];
            self.requests.get_or_create(&labels).inc();
        }

        fn request_retry(&self, verb: Verb, host: &str, code: Option<u16>) {
            let labels = vec![
                ("code", code_label(code)),
                ("verb", verb.as_str().to_owned()),
                ("host", host.to_owned()),
            ];
            self.retries.get_or_create(&labels).inc();
        }

        fn rate_limiter_latency(&self, verb: Verb, _url_template: &str, wait: Duration) {
            let labels = vec![("verb", verb.as_str().to_owned())];
            self.rate_limiter
                .get_or_create(&labels)
                .observe(wait.as_secs_f64());
        }
    }

    impl RestMetrics {
        /// client-go's `rest_client_*` families.
        fn register(&self, r: &mut Registry) {
            r.register(
                "rest_client_request_duration_seconds",
                "Request latency per verb",
                self.latency.clone(),
            );
            r.register(
                "rest_client_rate_limiter_duration_seconds",
                "Client-side rate limiter wait per verb",
                self.rate_limiter.clone(),
            );
            r.register(
                "rest_client_requests",
                "Requests per status code, method and host",
                self.requests.clone(),
            );
            r.register(
                "rest_client_request_retries",
                "Retried requests per status code, verb and host",
                self.retries.clone(),
            );
        }
    }

    impl Metrics {
        /// The REST layer's hooks, recording into this registry: pass
        /// `Arc::new(metrics.rest())` to `RestConfig::with_metrics`.
        pub fn rest(&self) -> RestMetrics {
            self.rest.clone()
        }

        /// Registers every family in `registry`.
        pub fn register(registry: &mut Registry) -> Self {
            let m = Metrics::families();
            m.register_controller(registry);
            m.register_workqueue(registry);
            m.rest.register(registry);
            registry.register(
                "kubeset_watch_errors",
                "Watcher errors (each followed by a restart, or a skipped object for decode)",
                m.watch_errors.clone(),
            );
            m
        }

        /// The families, not registered yet.
        fn families() -> Self {
            Metrics {
                reconcile_total: Family::default(),
                reconcile_errors: Family::default(),
                reconcile_time: Family::new_with_constructor(seconds),
                active_workers: Family::default(),
                timeouts: Family::default(),
                cache_objects: Family::default(),
                cache_bytes: Family::default(),
                depth: Family::default(),
                adds: Family::default(),
                retries: Family::default(),
                queue_duration: Family::new_with_constructor(seconds),
                work_duration: Family::new_with_constructor(seconds),
                watch_errors: Family::default(),
                rest: RestMetrics {
                    latency: Family::new_with_constructor(seconds),
                    rate_limiter: Family::new_with_constructor(seconds),
                    requests: Family::default(),
                    retries: Family::default(),
                },
            }
        }

        /// controller-runtime's reconcile families and kubeset's cache sizes.
        fn register_controller(&self, r: &mut Registry) {
            r.register(
                "controller_runtime_reconcile",
                "Reconciles per controller and result",
                self.reconcile_total.clone(),
            );
            r.register(
                "controller_runtime_reconcile_errors",
                "Failed reconciles per controller",
                self.reconcile_errors.clone(),
            );
            r.register(
                "controller_runtime_reconcile_time_seconds",
                "Time per reconcile",
                self.reconcile_time.clone(),
            );
            r.register(
                "controller_runtime_active_workers",
                "Reconciles running now",
                self.active_workers.clone(),
            );
            r.register(
                "controller_runtime_reconcile_timeouts",
                "Reconciles cancelled at the reconcile timeout",
                self.timeouts.clone(),
            );
            r.register(
                "kubeset_cache_objects",
                "Objects in the primary cache",
                self.cache_objects.clone(),
            );
            r.register(
                "kubeset_cache_bytes",
                "Estimated bytes of the objects in the primary cache",
                self.cache_bytes.clone(),
            );
        }

        /// client-go's work queue families.
        fn register_workqueue(&self, r: &mut Registry) {
            r.register(
                "workqueue_depth",
                "Keys waiting in the work queue",
                self.depth.clone(),
            );
            r.register(
                "workqueue_adds",
                "Keys added to the work queue",
                self.adds.clone(),
            );
            r.register(
                "workqueue_retries",
                "Keys requeued after a failure",
                self.retries.clone(),
            );
            r.register(
                "workqueue_queue_duration_seconds",
                "Time a key waited ready before being processed",
                self.queue_duration.clone(),
            );
            r.register(
                "workqueue_work_duration_seconds",
                "Time a key took to process",
                self.work_duration.clone(),
            );
        }

        /// The handles of the controller `name`.
        pub fn controller(&self, name: &str) -> ControllerMetrics {
            let by_controller = vec![("controller", name.to_owned())];
            let by_name = vec![("name", name.to_owned())];
            ControllerMetrics {
                inner: Some(Arc::new(Inner {
                    name: name.to_owned(),
                    families: self.clone(),
                    errors: self.reconcile_errors.get_or_create_owned(&by_controller),
                    time: self.reconcile_time.get_or_create_owned(&by_controller),
                    active: self.active_workers.get_or_create_owned(&by_controller),
                    timeouts: self.timeouts.get_or_create_owned(&by_controller),
                    cache_objects: self.cache_objects.get_or_create_owned(&by_controller),
                    cache_bytes: self.cache_bytes.get_or_create_owned(&by_controller),
                    seen: std::sync::Mutex::new(Vec::new()),
                    adds: self.adds.get_or_create_owned(&by_name),
                    retries: self.retries.get_or_create_owned(&by_name),
                    queue_duration: self.queue_duration.get_or_create_owned(&by_name),
                    work_duration: self.work_duration.get_or_create_owned(&by_name),
                })),
            }
        }
    }

    #[derive(Debug)]
    pub(super) struct Inner {
        name: String,
        families: Metrics,
        errors: Counter,
        time: Histogram,
        pub(super) active: Gauge,
        pub(super) timeouts: Counter,
        pub(super) cache_objects: Gauge,
        pub(super) cache_bytes: Gauge,
        /// Priority labels of `workqueue_depth` set so far (at most 25).
        seen: std::sync::Mutex<Vec<String>>,
        pub(super) adds: Counter,
        pub(super) retries: Counter,
        pub(super) queue_duration: Histogram,
        work_duration: Histogram,
    }

    /// Distinct priority labels of `workqueue_depth` (controller-runtime's
    /// cap); the rest add up under `other`.
    const MAX_PRIORITY_LABELS: usize = 25;

    impl Inner {
        pub(super) fn depth(&self, by_priority: &[(crate::queue::Priority, usize)]) {
            let mut seen = self
                .seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let mut now: Vec<(String, i64)> = seen.iter().map(|l| (l.clone(), 0)).collect();
            for (p, n) in by_priority {
                let mut label = p.to_string();
                if !seen.contains(&label) {
                    if seen.len() < MAX_PRIORITY_LABELS {
                        seen.push(label.clone());
                        now.push((label.clone(), 0));
                    } else {
                        label = "other".to_owned();
                        if !now.iter().any(|(l, _)| *l == label) {
                            now.push((label.clone(), 0));
                        }
                    }
                }
                if let Some(slot) = now.iter_mut().find(|(l, _)| *l == label) {
                    slot.1 += i64::try_from(*n).unwrap_or(i64::MAX);
                }
            }
            for (label, n) in now {
                let labels = vec![("name", self.name.clone()), ("priority", label)];
                self.families.depth.get_or_create(&labels).set(n);
            }
        }

        pub(super) fn reconciled(&self, took: Duration, result: &'static str) {
            let labels = vec![
                ("controller", self.name.clone()),
                ("result", result.to_owned()),
            ];
            self.families.reconcile_total.get_or_create(&labels).inc();
            if result == "error" {
                self.errors.inc();
            }
            self.time.observe(took.as_secs_f64());
            self.work_duration.observe(took.as_secs_f64());
        }

        pub(super) fn watch_error(&self, e: &WatcherError) {
            let reason = match e {
                WatcherError::Decode { .. } | WatcherError::DecodeProtobuf { .. } => "decode",
                WatcherError::InitialList { .. } => "list",
                WatcherError::WatchOpen { .. } => "watch_open",
                WatcherError::WatchStream { .. } => "watch_stream",
                WatcherError::WatchEvent { .. } => "watch_event",
                WatcherError::WatchClosedEarly => "watch_closed_early",
                WatcherError::StreamingListIncomplete => "streaming_list_incomplete",
                WatcherError::MemoryBudget { .. } => "memory_budget",
            };
            let labels = vec![
                ("controller", self.name.clone()),
                ("reason", reason.to_owned()),
            ];
            self.families.watch_errors.get_or_create(&labels).inc();
        }
    }
}

#[cfg(all(test, feature = "metrics"))]
mod tests {
    use std::time::Duration;

    use kubeset_client::rest::Verb;
    use kubeset_client::rest::metrics::Metrics as _;
    use prometheus_client::encoding::text::encode;
    use prometheus_client::registry::Registry;

    use super::Metrics;

    /// Every family, in the order `/metrics` lists them, with its help
    /// (a family is listed once it holds a sample: one is recorded in each).
    #[test]
    fn families_are_registered_in_order_with_their_help() {
        let mut registry = Registry::default();
        let m = Metrics::register(&mut registry);
        let c = m.controller("c");
        c.reconciled(Duration::from_millis(1), "error");
        c.active(1);
        c.reconcile_timeout();
        c.cache(crate::memory::CacheMemory {
            objects: 1,
            bytes: 1,
        });
        c.queue_depth(&[(crate::Priority::NORMAL, 1)]);
        c.queue_add();
        c.retry();
        c.queue_wait(Duration::from_millis(1));
        let decode = serde_json::from_str::<u8>("x").expect_err("not a number");
        c.watch_error(&crate::watcher::WatcherError::Decode {
            type_name: "u8",
            namespace: None,
            name: None,
            resource_version: None,
            path: ".".to_owned(),
            source: decode,
        });
        let rest = m.rest();
        rest.request_latency(Verb::Get, "/", Duration::from_millis(1));
        rest.rate_limiter_latency(Verb::Get, "/", Duration::from_millis(1));
        rest.request_result(Verb::Get, "h", Some(200));
        rest.request_retry(Verb::Get, "h", Some(500));
        let mut text = String::new();
        encode(&mut text, &registry).expect("encodes");
        let help: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# HELP "))
            .collect();
        assert_eq!(
            help,
            [
                "controller_runtime_reconcile Reconciles per controller and result.",
                "controller_runtime_reconcile_errors Failed reconciles per controller.",
                "controller_runtime_reconcile_time_seconds Time per reconcile.",
                "controller_runtime_active_workers Reconciles running now.",
                "controller_runtime_reconcile_timeouts Reconciles cancelled at the reconcile timeout.",
                "kubeset_cache_objects Objects in the primary cache.",
                "kubeset_cache_bytes Estimated bytes of the objects in the primary cache.",
                "workqueue_depth Keys waiting in the work queue.",
                "workqueue_adds Keys added to the work queue.",
                "workqueue_retries Keys requeued after a failure.",
                "workqueue_queue_duration_seconds Time a key waited ready before being processed.",
                "workqueue_work_duration_seconds Time a key took to process.",
                "rest_client_request_duration_seconds Request latency per verb.",
                "rest_client_rate_limiter_duration_seconds Client-side rate limiter wait per verb.",
                "rest_client_requests Requests per status code, method and host.",
                "rest_client_request_retries Retried requests per status code, verb and host.",
                "kubeset_watch_errors Watcher errors (each followed by a restart, or a skipped object for decode).",
            ]
        );
    }

    #[test]
    fn names_and_labels_follow_controller_runtime_and_client_go() {
        let mut registry = Registry::default();
        let m = Metrics::register(&mut registry);
        let c = m.controller("greeter");
        c.queue_add();
        c.queue_depth(&[
            (crate::Priority::NORMAL, 3),
            (crate::Priority::INITIAL_LIST, 2),
        ]);
        c.queue_depth(&[(crate::Priority::NORMAL, 3)]);
        c.reconcile_timeout();
        c.cache(crate::memory::CacheMemory {
            objects: 7,
            bytes: 9000,
        });
        c.reconciled(Duration::from_millis(20), "success");
        c.reconciled(Duration::from_millis(20), "error");
        c.retry();
        let rest = m.rest();
        rest.request_latency(
            Verb::Get,
            "/api/v1/namespaces/{namespace}/pods",
            Duration::from_millis(3),
        );
        rest.request_result(Verb::Get, "10.0.0.1:6443", Some(200));
        rest.request_result(Verb::Get, "10.0.0.1:6443", None);
        let mut text = String::new();
        encode(&mut text, &registry).expect("encodes");
        for want in [
            "controller_runtime_reconcile_total{controller=\"greeter\",result=\"success\"} 1",
            "controller_runtime_reconcile_total{controller=\"greeter\",result=\"error\"} 1",
            "controller_runtime_reconcile_errors_total{controller=\"greeter\"} 1",
            "controller_runtime_reconcile_time_seconds_count{controller=\"greeter\"} 2",
            "workqueue_adds_total{name=\"greeter\"} 1",
            "workqueue_depth{name=\"greeter\",priority=\"0\"} 3",
            "workqueue_depth{name=\"greeter\",priority=\"-100\"} 0",
            "controller_runtime_reconcile_timeouts_total{controller=\"greeter\"} 1",
            "kubeset_cache_objects{controller=\"greeter\"} 7",
            "kubeset_cache_bytes{controller=\"greeter\"} 9000",
            "workqueue_retries_total{name=\"greeter\"} 1",
            "workqueue_work_duration_seconds_count{name=\"greeter\"} 2",
            "rest_client_request_duration_seconds_count{verb=\"GET\"} 1",
            "rest_client_requests_total{code=\"200\",method=\"GET\",host=\"10.0.0.1:6443\"} 1",
            "rest_client_requests_total{code=\"<error>\",method=\"GET\",host=\"10.0.0.1:6443\"} 1",
        ] {
            assert!(text.contains(want), "missing {want} in\n{text}");
        }
    }
}
