//! The adaptive limiter's state as metrics, read from the limiter at each
//! scrape (a prometheus-client `Collector`).

use std::sync::Arc;

use kubeset_client::rest::rate_limit::{AdaptiveLimiter, LevelStats};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

/// The label value of the limiter's unclassified state (routes not yet
/// seen answered, servers without API Priority and Fairness).
pub const UNCLASSIFIED_LEVEL: &str = "unclassified";

/// Exports an [`AdaptiveLimiter`]'s state per priority level, read at each
/// scrape (no cost between scrapes). One limiter per registry (its names
/// would repeat otherwise); label `priority_level`: the level's UID, or
/// [`UNCLASSIFIED_LEVEL`].
///
/// | metric | type |
/// |---|---|
/// | `kubeset_adaptive_limiter_limit` | gauge: the current cap of requests in flight |
/// | `kubeset_adaptive_limiter_in_flight` | gauge: requests in flight |
/// | `kubeset_adaptive_limiter_queued` | gauge: requests waiting for a slot (the level full or held by a `Retry-After`) |
/// | `kubeset_adaptive_limiter_throttled_total` | counter: 429 answers |
/// | `kubeset_adaptive_limiter_decreases_total` | counter: times the cap was decreased |
/// | `kubeset_adaptive_limiter_retry_after_waits_total` | counter: requests held (or refused at their wait budget) by a server's `Retry-After` |
/// | `kubeset_adaptive_limiter_retry_after_wait_seconds_total` | counter: the time they were held, added up |
///
/// ```
/// use std::sync::Arc;
/// use kubeset_client::rest::rate_limit::AdaptiveLimiter;
/// use kubeset_runtime::metrics::{LimiterMetrics, prometheus_client::registry::Registry};
///
/// let limiter = Arc::new(AdaptiveLimiter::default());
/// let mut registry = Registry::default();
/// LimiterMetrics::register(&mut registry, limiter.clone());
/// // Pass `limiter` to `RestConfig::with_adaptive_limiter`.
/// ```
#[derive(Debug)]
pub struct LimiterMetrics {
    limiter: Arc<AdaptiveLimiter>,
}

impl LimiterMetrics {
    /// Registers `limiter`'s metrics in `registry`.
    pub fn register(registry: &mut Registry, limiter: Arc<AdaptiveLimiter>) {
        registry.register_collector(Box::new(LimiterMetrics { limiter }));
    }
}

type Labels = [(&'static str, String); 1];

fn labels(level: &LevelStats) -> Labels {
    let uid = if level.priority_level_uid.is_empty() {
        UNCLASSIFIED_LEVEL.to_owned()
    } else {
        level.priority_level_uid.clone()
    };
    [("priority_level", uid)]
}

/// One family: `value` of every level.
fn family<M: EncodeMetric>(
    encoder: &mut DescriptorEncoder<'_>,
    levels: &[LevelStats],
    (name, help): (&str, &str),
    value: impl Fn(&LevelStats) -> M,
) -> Result<(), std::fmt::Error> {
    let Some(first) = levels.first() else {
        return Ok(());
    };
    let mut metric = encoder.encode_descriptor(name, help, None, value(first).metric_type())?;
    for level in levels {
        let labels = labels(level);
        value(level).encode(metric.encode_family(&labels)?)?;
    }
    Ok(())
}

impl Collector for LimiterMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let levels = self.limiter.levels();
        let gauge = |n: u32| ConstGauge::new(i64::from(n));
        family(
            &mut encoder,
            &levels,
            (
                "kubeset_adaptive_limiter_limit",
                "Current cap of requests in flight per priority level",
            ),
            |l| gauge(l.limit),
        )?;
        family(
            &mut encoder,
            &levels,
            (
                "kubeset_adaptive_limiter_in_flight",
                "Requests in flight per priority level",
            ),
            |l| gauge(l.in_flight),
        )?;
        family(
            &mut encoder,
            &levels,
            (
                "kubeset_adaptive_limiter_queued",
                "Requests waiting for a slot per priority level",
            ),
            |l| gauge(l.queued),
        )?;
        family(
            &mut encoder,
            &levels,
            (
                "kubeset_adaptive_limiter_throttled",
                "429 answers per priority level",
            ),
            |l| ConstCounter::new(l.throttled),
        )?;
        family(
            &mut encoder,
            &levels,
            (
                "kubeset_adaptive_limiter_decreases",
                "Decreases of the cap per priority level",
            ),
            |l| ConstCounter::new(l.decreases),
        )?;
        family(
            &mut encoder,
            &levels,
            (
                "kubeset_adaptive_limiter_retry_after_waits",
                "Requests held by a server's Retry-After per priority level",
            ),
            |l| ConstCounter::new(l.retry_after_waits),
        )?;
        family(
            &mut encoder,
            &levels,
            (
                "kubeset_adaptive_limiter_retry_after_wait_seconds",
                "Time requests were held by a Retry-After per priority level",
            ),
            |l| ConstCounter::new(l.retry_after_wait.as_secs_f64()),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use kubeset_client::api::core::v1::ConfigMap;
    use kubeset_client::rest::rate_limit::{AdaptiveConfig, AdaptiveLimiter};
    use kubeset_client::rest::{RestClient, RestConfig};
    use kubeset_client::{Api, Client};
    use kubeset_testserver::TestServer;
    use prometheus_client::encoding::text::encode;
    use prometheus_client::registry::Registry;
    use serde_json::json;

    use super::LimiterMetrics;

    /// Long enough that a request started once the 429 is seen is still
    /// held by it on a loaded machine; the test takes about this long.
    const RETRY_AFTER: Duration = Duration::from_secs(5);

    fn scrape(registry: &Registry) -> String {
        let mut text = String::new();
        encode(&mut text, registry).expect("encodes");
        text
    }

    /// The value of the sample `line` starts with, if scraped.
    fn sample(text: &str, line: &str) -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(line)?.trim().parse().ok())
    }

    /// Polls the registry until `line` reads `want` (a 60 s guard).
    async fn until(registry: &Registry, line: &str, want: f64) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let text = scrape(registry);
            if sample(&text, line) == Some(want) {
                return text;
            }
            assert!(
                Instant::now() < deadline,
                "{line} never read {want}:\n{text}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    // Budget: about 5 s (the server's Retry-After), twice (the throttled
    // GET's own retry waits it out too).
    #[tokio::test]
    async fn a_429_shows_as_throttled_held_and_queued_then_drains() {
        let server = TestServer::start().await.expect("server");
        server
            .create(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}}))
            .expect("a ConfigMap");
        let limiter = Arc::new(AdaptiveLimiter::new(
            AdaptiveConfig::new().initial_concurrency(4),
        ));
        let mut registry = Registry::default();
        LimiterMetrics::register(&mut registry, limiter.clone());
        assert_eq!(
            scrape(&registry),
            "# EOF\n",
            "no level seen yet: no samples"
        );
        let rest = RestClient::new(
            RestConfig::new(server.url())
                .with_qps_burst(-1.0, 0)
                .with_adaptive_limiter(limiter),
        )
        .expect("client");
        let api: Api<ConfigMap> = Api::namespaced(Client::new(rest, "default"), "default");

        let replica = server.replica(0).expect("replica 0");
        replica.faults().fail_next(1, 429, Some(RETRY_AFTER));
        let first = tokio::spawn({
            let api = api.clone();
            async move { api.get("a").await }
        });
        let unclassified = "{priority_level=\"unclassified\"}";
        until(
            &registry,
            &format!("kubeset_adaptive_limiter_throttled_total{unclassified}"),
            1.0,
        )
        .await;
        // Held by the Retry-After: waiting, and counted as held.
        let second = tokio::spawn({
            let api = api.clone();
            async move { api.get("a").await }
        });
        let text = until(
            &registry,
            &format!("kubeset_adaptive_limiter_queued{unclassified}"),
            1.0,
        )
        .await;
        for (line, want) in [
            ("kubeset_adaptive_limiter_limit", 2.0),
            ("kubeset_adaptive_limiter_decreases_total", 1.0),
            ("kubeset_adaptive_limiter_retry_after_waits_total", 1.0),
        ] {
            assert_eq!(
                sample(&text, &format!("{line}{unclassified}")),
                Some(want),
                "{line}:\n{text}"
            );
        }
        first
            .await
            .expect("joins")
            .expect("the throttled GET is retried");
        second.await.expect("joins").expect("the held GET succeeds");
        let text = scrape(&registry);
        assert_eq!(
            sample(
                &text,
                &format!("kubeset_adaptive_limiter_queued{unclassified}")
            ),
            Some(0.0)
        );
        assert_eq!(
            sample(
                &text,
                &format!("kubeset_adaptive_limiter_in_flight{unclassified}")
            ),
            Some(0.0)
        );
        let held = sample(
            &text,
            &format!("kubeset_adaptive_limiter_retry_after_wait_seconds_total{unclassified}"),
        )
        .expect("held time scraped");
        assert!(
            held > 0.0 && held <= RETRY_AFTER.as_secs_f64(),
            "{held} s:\n{text}"
        );
        assert!(
            text.contains("# TYPE kubeset_adaptive_limiter_limit gauge"),
            "{text}"
        );
        server.shutdown().await;
    }
}
