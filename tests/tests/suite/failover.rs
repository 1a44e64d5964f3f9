//! Failover across three real kube-apiservers on one etcd: SIGKILL the one
//! serving a watch, SIGSTOP (hang) the next; requests and the open watch
//! carry on through the survivor with no event lost or repeated.
//!
//! Runs on an instance of its own (killed servers cannot be restarted by
//! `realkube.sh`), stopped at the end (SIGCONT included) also on panic.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use kubeset::api::core::v1::ConfigMap;
use kubeset::params::{ListParams, PostParams, WatchParams};
use kubeset::rest::{RestClient, Verb};
use kubeset::{Api, Client, WatchEvent};
use kubeset_tests::instance::Instance;
use kubeset_tests::{Identity, RealKube, error_chain};
use serde_json::json;
use tokio::sync::mpsc;

use crate::common::typed;

/// Creates `name`, accepting AlreadyExists: a POST cut short by a killed
/// server may have been applied before the client moved on (as Patroni).
async fn create(cms: &Api<ConfigMap>, name: &str) -> Duration {
    let cm: ConfigMap = typed(json!({"metadata": {"name": name}, "data": {"n": name}}));
    let started = Instant::now();
    match cms.create(&PostParams::default(), &cm).await {
        Ok(_) => {}
        Err(e) if e.is_already_exists() => {}
        Err(e) => panic!("creating {name} during failover: {}", error_chain(&e)),
    }
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_and_watch_survive_sigkill_and_sigstop() {
    if kubeset_tests::realkube("failover").await.is_none() {
        return;
    }
    let instance = tokio::task::spawn_blocking(|| {
        Instance::start(
            "realkube-suite-failover",
            &[
                "--apiservers",
                "3",
                "--port",
                "16445",
                "--etcd-port",
                "23810",
            ],
        )
    })
    .await
    .expect("start task")
    .unwrap_or_else(|e| panic!("starting the failover instance: {}", error_chain(&e)));
    let servers = instance.env.servers.clone();
    assert_eq!(servers.len(), 3);
    let kube = RealKube {
        env: instance.env.clone(),
    };
    let config = kube
        .config(None, Identity::Admin)
        .unwrap_or_else(|e| panic!("{}", error_chain(&e)));
    let rest = config
        .rest_config()
        .expect("rest config")
        .with_endpoints(servers[1..].iter().cloned())
        .with_request_deadline(Duration::from_secs(12))
        // A hung server sends nothing: notice within 4 s (bookmarks keep
        // a healthy quiet watch from looking hung for long).
        .with_watch_idle_timeout(Duration::from_secs(4));
    let client = Client::new(RestClient::new(rest).expect("client"), "default");
    let ns = kubeset_tests::create_namespace(&client, "failover")
        .await
        .unwrap_or_else(|e| panic!("{}", error_chain(&e)));
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);

    let start_rv = cms
        .list(&ListParams::default())
        .await
        .unwrap_or_else(|e| panic!("{}", error_chain(&e)))
        .metadata
        .resource_version
        .unwrap_or_default();
    let mut pairs = Vec::new();
    WatchParams::default()
        .bookmarks()
        .watch_pairs(&start_rv, &mut pairs);
    let mut req = cms.request(Verb::Get, None);
    for (k, v) in pairs {
        req = req.param(k, v);
    }
    let mut watch = req
        .watch_resumable::<ConfigMap>()
        .await
        .unwrap_or_else(|e| panic!("opening the watch: {}", error_chain(&e)));
    let serving = watch.endpoint().to_owned();
    let watched_index = servers
        .iter()
        .position(|s| *s == serving)
        .unwrap_or_else(|| panic!("watch served by {serving}, not one of {servers:?}"));

    // Events go to the test through a channel; the watch keeps running.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let collector = tokio::spawn(async move {
        while let Some(item) = watch.next().await {
            let event = match item {
                Ok(WatchEvent::Added(c)) => Ok(("ADDED", c)),
                Ok(WatchEvent::Modified(c)) => Ok(("MODIFIED", c)),
                Ok(WatchEvent::Deleted(c)) => Ok(("DELETED", c)),
                Ok(WatchEvent::Bookmark(_)) => continue,
                Ok(WatchEvent::Error(e)) => Err(e.to_string()),
                Err(e) => Err(error_chain(&e)),
            };
            let msg = event.map(|(t, c)| {
                (
                    t,
                    c.metadata.name.unwrap_or_default(),
                    c.metadata.resource_version.unwrap_or_default(),
                )
            });
            if tx
                .send((msg, watch.resumes(), watch.endpoint().to_owned()))
                .is_err()
            {
                break;
            }
        }
    });

    let mut latencies = Vec::new();
    for i in 0..4 {
        latencies.push(("before", create(&cms, &format!("cm-{i:02}")).await));
    }

    // 1. SIGKILL the server holding the watch.
    instance
        .signal(watched_index, "KILL")
        .unwrap_or_else(|e| panic!("{}", error_chain(&e)));
    for i in 4..8 {
        latencies.push(("after kill", create(&cms, &format!("cm-{i:02}")).await));
    }
    // 2. SIGSTOP the server the client now prefers (it answered last).
    let preferred = client.rest().endpoints();
    let stopped = servers
        .iter()
        .position(|s| preferred.first() == Some(s))
        .unwrap_or_else(|| panic!("first endpoint {preferred:?} unknown"));
    assert_ne!(stopped, watched_index, "a killed server is not preferred");
    instance
        .signal(stopped, "STOP")
        .unwrap_or_else(|e| panic!("{}", error_chain(&e)));
    for i in 8..12 {
        latencies.push(("after stop", create(&cms, &format!("cm-{i:02}")).await));
    }
    let survivor = 3 - watched_index - stopped;
    assert_eq!(
        client.rest().endpoints().first(),
        Some(&servers[survivor]),
        "the survivor answers first now"
    );

    // Every created object arrives exactly once, in resourceVersion order.
    let expected: BTreeSet<String> = (0..12).map(|i| format!("cm-{i:02}")).collect();
    let mut seen = Vec::new();
    let mut last_rv = 0u64;
    let mut resumes = 0;
    let mut endpoint = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    while seen.len() < expected.len() {
        let got = tokio::time::timeout_at(deadline, rx.recv()).await;
        let (msg, r, ep) = match got {
            Ok(Some(m)) => m,
            Ok(None) => panic!("the watch ended; seen {seen:?}"),
            Err(_) => panic!("watch events missing after 90 s; seen {seen:?}"),
        };
        let (t, name, rv) = msg.unwrap_or_else(|e| panic!("watch failed: {e}; seen {seen:?}"));
        assert_eq!(t, "ADDED", "{name}");
        let rv: u64 = rv.parse().expect("numeric resourceVersion");
        assert!(
            rv > last_rv,
            "{name} at {rv} after {last_rv}: repeated or reordered"
        );
        last_rv = rv;
        seen.push(name);
        resumes = r;
        endpoint = ep;
    }
    assert_eq!(
        seen.iter().cloned().collect::<BTreeSet<_>>(),
        expected,
        "every object exactly once"
    );
    assert_eq!(seen.len(), expected.len());
    assert!(resumes >= 1, "the watch never resumed");
    assert_eq!(
        endpoint, servers[survivor],
        "the watch ends up on the survivor"
    );

    for (phase, took) in &latencies {
        println!("failover create {phase}: {took:?}");
    }
    println!("watch resumed {resumes} time(s); now on {endpoint}");
    collector.abort();
    // Drop stops the instance (SIGCONT first for the stopped server).
    drop(instance);
}

/// With `--routable-addresses` the servers publish themselves in
/// `default/kubernetes`; a client configured with one server finds all.
#[tokio::test]
async fn endpoint_discovery_finds_every_server() {
    let ctx = crate::common::connect!("discovery-endpoints");
    let servers = &ctx.kube.env.servers;
    if servers.iter().any(|s| s.contains("://127.")) {
        panic!(
            "realkube runs on loopback addresses, which Kubernetes refuses in EndpointSlices: \
             start it with --routable-addresses (as CI does) for this test"
        );
    }
    let config = ctx
        .kube
        .config(None, Identity::Admin)
        .unwrap_or_else(|e| panic!("{}", error_chain(&e)));
    let rest = config
        .rest_config()
        .expect("rest config")
        .with_endpoint_discovery(true);
    let client = Client::new(RestClient::new(rest).expect("client"), "default");
    assert_eq!(client.rest().endpoints(), servers[..1].to_vec());
    // Discovery runs with the first call.
    let found = kubeset_tests::eventually(
        Duration::from_secs(30),
        "every server to be discovered",
        || async {
            let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ctx.ns);
            cms.list(&ListParams::default())
                .await
                .unwrap_or_else(|e| panic!("{}", error_chain(&e)));
            let mut found = client.rest().endpoints();
            found.sort();
            (found.len() == servers.len()).then_some(found)
        },
    )
    .await;
    let mut expected = servers.clone();
    expected.sort();
    assert_eq!(found, expected);
    // The configured server stays first.
    assert_eq!(client.rest().endpoints().first(), servers.first());
}
