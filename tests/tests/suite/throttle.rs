//! 429 Too Many Requests from a real server (max-in-flight 1, no APF),
//! retried by the client per `Retry-After`, seen through the metrics hook.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use kubeset::Client;
use kubeset::rest::metrics::Metrics;
use kubeset::rest::{RestClient, Verb};
use kubeset_tests::instance::Instance;
use kubeset_tests::{Identity, RealKube};

/// Counts attempts answered 429 and retries after a 429.
#[derive(Debug, Default)]
struct Count429 {
    answered: AtomicU32,
    retried: AtomicU32,
}

impl Metrics for Count429 {
    fn request_result(&self, _verb: Verb, _host: &str, code: Option<u16>) {
        if code == Some(429) {
            self.answered.fetch_add(1, Ordering::Relaxed);
        }
    }
    fn request_retry(&self, _verb: Verb, _host: &str, code: Option<u16>) {
        if code == Some(429) {
            self.retried.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// `n` concurrent GETs of the 3-4 MB `/openapi/v2` (each holds the only
/// in-flight slot while it is written); answers each call's result and time.
async fn burst(
    client: &Client,
    n: usize,
    retries: Option<u32>,
) -> Vec<(Result<(), kubeset::Error>, Duration)> {
    let calls = (0..n).map(|_| {
        let client = client.clone();
        async move {
            let started = Instant::now();
            let mut req = client.rest().get().abs_path(["openapi", "v2"]);
            if let Some(n) = retries {
                req = req.max_retries(n);
            }
            let result = req.send().await.map(|_| ());
            (result, started.elapsed())
        }
    });
    futures::future::join_all(calls).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_many_requests_is_retried_per_retry_after() {
    // Only to honour KUBESET_SKIP_REALKUBE and fail loudly when the binaries
    // are missing; the test runs its own server.
    if kubeset_tests::realkube("throttle").await.is_none() {
        return;
    }
    let instance = tokio::task::spawn_blocking(|| {
        Instance::start(
            "realkube-suite-429",
            &[
                "--port",
                "16444",
                "--etcd-port",
                "23800",
                "--no-apf",
                "--max-requests-inflight",
                "1",
                "--max-mutating-requests-inflight",
                "1",
            ],
        )
    })
    .await
    .expect("start task")
    .unwrap_or_else(|e| {
        panic!(
            "starting the 429 instance: {}",
            kubeset_tests::error_chain(&e)
        )
    });
    let kube = RealKube {
        env: instance.env.clone(),
    };
    // The admin identity (system:masters) is exempt from the limit.
    let config = kube
        .config(None, Identity::User)
        .unwrap_or_else(|e| panic!("{}", kubeset_tests::error_chain(&e)));
    let metrics = Arc::new(Count429::default());
    let rest = config
        .rest_config()
        .expect("rest config")
        .with_metrics(metrics.clone());
    let client = Client::new(RestClient::new(rest).expect("client"), "default");

    // Without retries, the 429 surfaces typed, with the server's Retry-After.
    let mut typed_429 = None;
    for _ in 0..10 {
        let results = burst(&client, 40, Some(0)).await;
        typed_429 = results.into_iter().find_map(|(r, _)| r.err());
        if typed_429.is_some() {
            break;
        }
    }
    let err = typed_429.expect("no 429 in 10 bursts of 40 concurrent GETs");
    assert!(err.is_too_many_requests(), "{err}");
    let api = err.api_error().expect("an API error");
    assert_eq!(api.code, 429);
    assert_eq!(api.retry_after, Some(Duration::from_secs(1)), "{api:?}");
    println!("429 without retries: {err} ({api:?})");

    // With the default 10 retries every call succeeds; some waited
    // Retry-After. The rejected calls all come back after the same 1 s,
    // and each time at least one gets the slot: 10 callers always make it
    // (40 do not: some are refused 11 times, as with client-go).
    let before = metrics.retried.load(Ordering::Relaxed);
    let mut slowest_retried = Duration::ZERO;
    for round in 0..10 {
        let results = burst(&client, 10, None).await;
        for (r, took) in &results {
            if let Err(e) = r {
                panic!(
                    "round {round}: a call failed despite retries: {}",
                    kubeset_tests::error_chain(e)
                );
            }
            slowest_retried = slowest_retried.max(*took);
        }
        if metrics.retried.load(Ordering::Relaxed) > before {
            break;
        }
    }
    let retried = metrics.retried.load(Ordering::Relaxed) - before;
    assert!(retried >= 1, "no 429 was retried in 10 bursts of 10");
    // A retried call slept Retry-After (1 s) before its second attempt.
    assert!(
        slowest_retried >= Duration::from_millis(950),
        "slowest call {slowest_retried:?} did not wait Retry-After"
    );
    println!(
        "429s answered: {}, retried: {retried}, slowest call {slowest_retried:?}",
        metrics.answered.load(Ordering::Relaxed)
    );
    drop(instance);
}
