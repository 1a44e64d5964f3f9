//! Failover across several real loopback API servers: the embedded test
//! server's replicas (with fault injection) and scripted HTTP servers.
//!
//! Timing asserts use lower bounds and loose upper bounds: the machine is
//! loaded.

mod support;

use std::time::{Duration, Instant};

use futures::StreamExt;
use kubeset_rest::{Error, RestClient, RestConfig, WatchEvent};
use kubeset_testserver::TestServer;
use serde_json::{Value, json};
use support::{Reply, Server};

/// A loopback port that refuses connections (bound, then released).
async fn refused_url() -> String {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    format!("http://{addr}")
}

fn client(first: &str, rest: &[String], budget: Duration) -> RestClient {
    RestClient::new(
        RestConfig::new(first)
            .with_endpoints(rest.iter().cloned())
            .with_request_deadline(budget)
            .with_qps_burst(-1.0, 0)
            .without_backoff(),
    )
    .unwrap()
}

async fn list_namespaces(c: &RestClient) -> Result<Value, Error> {
    c.get().resource("namespaces").send_json::<Value>().await
}

#[tokio::test]
async fn refused_first_endpoint_is_answered_by_the_second_at_once() {
    let server = TestServer::builder().replicas(1).start().await.unwrap();
    let dead = refused_url().await;
    let c = client(&dead, &[server.url()], Duration::from_secs(10));
    assert_eq!(c.endpoints(), [dead.clone(), server.url()]);
    let started = Instant::now();
    let list = list_namespaces(&c).await.unwrap();
    let took = started.elapsed();
    assert_eq!(list["kind"], "NamespaceList");
    // The per-node timeout is 5 s; a refusal costs next to nothing.
    assert!(took < Duration::from_secs(2), "took {took:?}");
    // The endpoint that answered is now preferred.
    assert_eq!(c.endpoints(), [server.url(), dead]);
    // And the next call goes straight to it.
    let before = server.faults(0).unwrap().requests_served();
    list_namespaces(&c).await.unwrap();
    assert_eq!(server.faults(0).unwrap().requests_served(), before + 1);
}

#[tokio::test]
async fn hung_first_endpoint_is_answered_by_the_second_after_one_per_node_timeout() {
    let server = TestServer::builder().replicas(2).start().await.unwrap();
    let urls = server.urls();
    server.faults(0).unwrap().hang();
    // 2 endpoints, 4 s budget → 2 s per node, no retries.
    let c = client(&urls[0], &urls[1..], Duration::from_secs(4));
    let started = Instant::now();
    let list = list_namespaces(&c).await.unwrap();
    let took = started.elapsed();
    assert_eq!(list["kind"], "NamespaceList");
    assert!(took >= Duration::from_millis(1900), "took {took:?}");
    assert!(took < Duration::from_secs(4), "took {took:?}");
    assert_eq!(c.endpoints()[0], urls[1]);
    assert_eq!(server.faults(1).unwrap().requests_served(), 1);
}

#[tokio::test]
async fn all_endpoints_down_is_one_error_listing_each_within_the_budget() {
    let server = TestServer::builder().replicas(3).start().await.unwrap();
    let urls = server.urls();
    for i in 0..3 {
        server.faults(i).unwrap().down().await;
    }
    let budget = Duration::from_secs(3);
    let c = client(&urls[0], &urls[1..], budget);
    let started = Instant::now();
    let err = list_namespaces(&c).await.unwrap_err();
    let took = started.elapsed();
    assert!(took < budget + Duration::from_secs(1), "took {took:?}");
    let Error::AllEndpointsFailed { attempts } = &err else {
        panic!("{err:?}");
    };
    for url in &urls {
        assert!(
            attempts.iter().any(|a| &a.endpoint == url),
            "{url} missing in {err}"
        );
        assert!(err.to_string().contains(url.as_str()), "{err}");
    }
    assert!(
        attempts
            .iter()
            .all(|a| a.kind == kubeset_rest::TransportKind::Refused),
        "{err}"
    );
    assert!(
        err.to_string().starts_with("no API server answered: "),
        "{err}"
    );
    assert!(err.is_retryable());
}

#[tokio::test]
async fn all_down_then_one_comes_back_within_the_deadline() {
    let server = TestServer::builder().replicas(2).start().await.unwrap();
    let urls = server.urls();
    for i in 0..2 {
        server.faults(i).unwrap().down().await;
    }
    let c = client(&urls[0], &urls[1..], Duration::from_secs(8));
    let f1 = server.faults(1).unwrap();
    let back = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        f1.up().await.unwrap();
    });
    // First round fails at once; after the 1 s wait replica 1 answers.
    let started = Instant::now();
    list_namespaces(&c).await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(900));
    back.await.unwrap();
    assert_eq!(c.endpoints()[0], urls[1]);
}

#[tokio::test]
async fn http_statuses_never_fail_over() {
    let server = TestServer::builder().replicas(2).start().await.unwrap();
    let urls = server.urls();
    server.faults(0).unwrap().fail_next(1, 500, None);
    let c = client(&urls[0], &urls[1..], Duration::from_secs(10));
    let err = list_namespaces(&c).await.unwrap_err();
    assert_eq!(err.api_error().map(|e| e.code), Some(500), "{err}");
    assert_eq!(server.faults(1).unwrap().requests_served(), 0);
    assert_eq!(c.endpoints(), urls);
}

#[tokio::test]
async fn discovery_from_endpoint_slices() {
    let server = TestServer::builder().replicas(3).start().await.unwrap();
    let urls = server.urls();
    let c = RestClient::new(
        RestConfig::new(urls[0].clone())
            .with_endpoint_discovery(true)
            .with_qps_burst(-1.0, 0),
    )
    .unwrap();
    assert_eq!(c.endpoints(), [urls[0].clone()]);
    list_namespaces(&c).await.unwrap();
    let mut found = c.endpoints();
    // The serving endpoint stays first; the rest are shuffled.
    assert_eq!(found[0], urls[0]);
    found.sort();
    let mut want = urls.clone();
    want.sort();
    assert_eq!(found, want);
    // A discovered replica takes over when the configured one dies.
    server.faults(0).unwrap().down().await;
    list_namespaces(&c).await.unwrap();
    assert_ne!(c.endpoints()[0], urls[0]);
}

const SLICES: &str = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dkubernetes";
const ENDPOINTS: &str = "/api/v1/namespaces/default/endpoints/kubernetes";

#[tokio::test]
async fn discovery_falls_back_to_endpoints_with_one_subset_per_replica() {
    let other = Server::start(vec![Reply::json(200, r#"{"kind":"NamespaceList"}"#)]).await;
    let dead = refused_url().await;
    let dead_port: u16 = dead.rsplit(':').next().unwrap().parse().unwrap();
    // Two subsets, each with its own port (one per replica).
    let endpoints = json!({"kind": "Endpoints", "subsets": [
        {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": other.addr.port(), "protocol": "TCP"}]},
        {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "metrics", "port": 1}, {"name": "https", "port": dead_port}]},
    ]});
    let seed = Server::start(vec![
        Reply::json(404, r#"{"kind":"Status","code":404}"#),
        Reply::json(200, &endpoints.to_string()),
    ])
    .await;
    let c = RestClient::new(
        RestConfig::new(seed.url())
            .with_endpoint_discovery(true)
            .with_qps_burst(-1.0, 0),
    )
    .unwrap();
    list_namespaces(&c).await.unwrap();
    let seen: Vec<String> = seed.requests().into_iter().map(|r| r.target).collect();
    assert_eq!(seen, [SLICES, ENDPOINTS]);
    // Whatever the shuffle, the refused one was skipped and `other`
    // answered, so it is first now.
    assert_eq!(c.endpoints(), [other.url(), dead]);
    assert_eq!(other.requests()[0].target, "/api/v1/namespaces");
}

#[tokio::test]
async fn forbidden_discovery_falls_back_to_the_configured_servers_once() {
    let forbidden = r#"{"kind":"Status","status":"Failure","reason":"Forbidden","code":403}"#;
    let ok = r#"{"kind":"NamespaceList"}"#;
    let seed = Server::start(vec![
        Reply::json(403, forbidden),
        Reply::json(200, ok),
        Reply::json(200, ok),
    ])
    .await;
    let extra = refused_url().await;
    let c = RestClient::new(
        RestConfig::new(seed.url())
            .with_endpoints([extra.clone()])
            .with_endpoint_discovery(true)
            .with_endpoint_discovery_ttl(Duration::ZERO)
            .with_qps_burst(-1.0, 0),
    )
    .unwrap();
    list_namespaces(&c).await.unwrap();
    list_namespaces(&c).await.unwrap();
    let seen: Vec<String> = seed.requests().into_iter().map(|r| r.target).collect();
    // Discovery was asked once (TTL zero would ask again were it still on).
    assert_eq!(seen, [SLICES, "/api/v1/namespaces", "/api/v1/namespaces"]);
    assert_eq!(c.endpoints(), [seed.url(), extra]);
}

#[tokio::test]
async fn failed_discovery_keeps_the_previous_set() {
    let seed = Server::start(vec![
        Reply::Reset,
        Reply::json(200, r#"{"kind":"NamespaceList"}"#),
    ])
    .await;
    let extra = refused_url().await;
    let c = RestClient::new(
        RestConfig::new(seed.url())
            .with_endpoints([extra.clone()])
            .with_endpoint_discovery(true)
            .with_qps_burst(-1.0, 0),
    )
    .unwrap();
    list_namespaces(&c).await.unwrap();
    assert_eq!(c.endpoints(), [seed.url(), extra]);
}

async fn create_cm(server: &TestServer, name: &str) -> String {
    let obj = server
        .create(json!({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": name, "namespace": "default"}, "data": {"n": name}}))
        .unwrap();
    obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Next ADDED event's resourceVersion (bookmarks skipped), with a
/// generous timeout.
async fn next_added(w: &mut kubeset_rest::ResumableWatch<Value>) -> String {
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), w.next())
            .await
            .expect("an event within 20 s")
            .expect("the watch goes on")
            .expect("no error");
        match ev {
            WatchEvent::Added(o) => {
                return o["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap()
                    .to_owned();
            }
            WatchEvent::Bookmark(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

fn replica_of(server: &TestServer, origin: &str) -> usize {
    server
        .urls()
        .iter()
        .position(|u| u == origin)
        .expect("a replica URL")
}

#[tokio::test]
async fn resumable_watch_survives_the_death_and_the_hang_of_its_server() {
    let server = TestServer::builder()
        .replicas(3)
        .bookmark_interval(Duration::from_millis(200))
        .start()
        .await
        .unwrap();
    let urls = server.urls();
    let c = RestClient::new(
        RestConfig::new(urls[0].clone())
            .with_endpoints(urls[1..].iter().cloned())
            .with_qps_burst(-1.0, 0)
            .with_request_deadline(Duration::from_secs(6))
            .with_watch_idle_timeout(Duration::from_millis(1500)),
    )
    .unwrap();
    let start_rv = server.resource_version().to_string();
    let mut w = c
        .get()
        .namespace("default")
        .resource("configmaps")
        .param("resourceVersion", &start_rv)
        .param("allowWatchBookmarks", "true")
        .param("watch", "true")
        .watch_resumable::<Value>()
        .await
        .unwrap();
    let mut want = Vec::new();
    let mut got = Vec::new();
    for i in 0..3 {
        want.push(create_cm(&server, &format!("a{i}")).await);
        got.push(next_added(&mut w).await);
    }
    // Down: the serving replica refuses and drops its connections.
    let first = replica_of(&server, w.endpoint());
    server.faults(first).unwrap().down().await;
    for i in 0..3 {
        want.push(create_cm(&server, &format!("b{i}")).await);
    }
    for _ in 0..3 {
        got.push(next_added(&mut w).await);
    }
    let second = replica_of(&server, w.endpoint());
    assert_ne!(second, first);
    assert!(w.resumes() >= 1);
    // Hang: the serving replica accepts and stops answering; the idle
    // timeout (no bookmark within 1.5 s) moves the watch on.
    server.faults(second).unwrap().hang();
    for i in 0..3 {
        want.push(create_cm(&server, &format!("c{i}")).await);
    }
    for _ in 0..3 {
        got.push(next_added(&mut w).await);
    }
    let third = replica_of(&server, w.endpoint());
    assert!(
        third != first && third != second,
        "{first} {second} {third}"
    );
    assert_eq!(got, want, "every event once, in order");
    assert_eq!(w.resource_version(), want.last().map(String::as_str));
}

#[tokio::test]
async fn resumable_watch_surfaces_gone_on_resume_as_a_typed_error() {
    let server = TestServer::builder()
        .replicas(2)
        .history(2)
        .start()
        .await
        .unwrap();
    let urls = server.urls();
    let c = client(&urls[0], &urls[1..], Duration::from_secs(6));
    let start_rv = server.resource_version().to_string();
    let mut w = c
        .get()
        .namespace("default")
        .resource("configmaps")
        .param("resourceVersion", &start_rv)
        .param("watch", "true")
        .watch_resumable::<Value>()
        .await
        .unwrap();
    let rv = create_cm(&server, "g0").await;
    assert_eq!(next_added(&mut w).await, rv);
    // While the watch is cut (its replica down, the other one hung),
    // history moves past its resourceVersion.
    let serving = replica_of(&server, w.endpoint());
    let other = server.faults(1 - serving).unwrap();
    other.hang();
    server.faults(serving).unwrap().down().await;
    for i in 1..6 {
        create_cm(&server, &format!("g{i}")).await;
    }
    other.up().await.unwrap();
    let item = tokio::time::timeout(Duration::from_secs(20), w.next())
        .await
        .expect("an item within 20 s")
        .expect("an error item");
    let err = item.unwrap_err();
    assert!(err.is_gone(), "{err}");
    assert!(w.next().await.is_none());
}

#[tokio::test]
async fn config_extra_endpoints_flow_into_the_client() {
    let server = TestServer::builder().replicas(2).start().await.unwrap();
    let urls = server.urls();
    let mut config = kubeset_rest::config::Config::new(urls[0].parse().unwrap());
    config.extra_endpoints = vec![urls[1].parse().unwrap()];
    let c = RestClient::new(config.rest_config().unwrap().with_qps_burst(-1.0, 0)).unwrap();
    assert_eq!(c.endpoints(), urls);
    server.faults(0).unwrap().down().await;
    list_namespaces(&c).await.unwrap();
    assert_eq!(c.endpoints()[0], urls[1]);
}

#[tokio::test]
async fn config_failover_settings_flow_into_the_client() {
    let server = TestServer::builder().replicas(3).start().await.unwrap();
    let urls = server.urls();
    let mut config = kubeset_rest::config::Config::new(urls[0].parse().unwrap());
    config.endpoint_discovery = true;
    config.request_deadline = Some(Duration::from_secs(2));
    let c = RestClient::new(config.rest_config().unwrap().with_qps_burst(-1.0, 0)).unwrap();
    // Discovery: the first call finds the other two replicas.
    list_namespaces(&c).await.unwrap();
    let mut found = c.endpoints();
    found.sort();
    let mut want = urls.clone();
    want.sort();
    assert_eq!(found, want);
    // Deadline: with every replica hung, the call gives up after the
    // configured 2 s budget, not the default 10 s.
    for i in 0..3 {
        server.faults(i).unwrap().hang();
    }
    let started = Instant::now();
    let err = list_namespaces(&c).await.unwrap_err();
    let took = started.elapsed();
    assert!(matches!(err, Error::AllEndpointsFailed { .. }), "{err}");
    assert!(took >= Duration::from_millis(1500), "took {took:?}");
    assert!(took < Duration::from_secs(8), "took {took:?}");
}

#[tokio::test]
async fn tls_failover_from_a_hung_server_via_kubeconfig() {
    // The shape of the real-apiserver case: https, a CA from the
    // kubeconfig, the first server accepting TCP but never answering.
    let server = TestServer::builder()
        .replicas(2)
        .tls(true)
        .start()
        .await
        .unwrap();
    let urls = server.urls();
    assert!(urls[0].starts_with("https://"));
    let kubeconfig =
        kubeset_rest::config::Kubeconfig::from_yaml(&server.kubeconfig_yaml()).unwrap();
    let mut config = kubeset_rest::config::Config::from_custom_kubeconfig_sync(
        kubeconfig,
        &kubeset_rest::config::KubeConfigOptions::default(),
    )
    .unwrap();
    config.extra_endpoints = vec![urls[1].parse().unwrap()];
    let c = RestClient::new(
        config
            .rest_config()
            .unwrap()
            .with_qps_burst(-1.0, 0)
            .with_request_deadline(Duration::from_secs(4)),
    )
    .unwrap();
    assert_eq!(c.endpoints(), urls);
    server.faults(0).unwrap().hang();
    let started = Instant::now();
    list_namespaces(&c).await.unwrap();
    let took = started.elapsed();
    // TCP is accepted, TLS never completes: the connect timeout,
    // max(1 s, per-node 2 s / 2), gives up on it (not the 2 s per node).
    assert!(took >= Duration::from_millis(900), "took {took:?}");
    assert!(took < Duration::from_secs(4), "took {took:?}");
    assert_eq!(c.endpoints()[0], urls[1]);
}

#[tokio::test]
async fn a_long_watch_timeout_does_not_stretch_the_budget_to_open_it() {
    let server = TestServer::builder().replicas(2).start().await.unwrap();
    let urls = server.urls();
    server.faults(0).unwrap().hang();
    // 2 s client budget → 1 s per node, whatever the watch's own timeout.
    let c = client(&urls[0], &urls[1..], Duration::from_secs(2));
    let started = Instant::now();
    let w = c
        .get()
        .namespace("default")
        .resource("configmaps")
        .param("watch", "true")
        .timeout(Duration::from_secs(600))
        .watch_resumable::<Value>()
        .await
        .unwrap();
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(900), "took {took:?}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert_eq!(w.endpoint(), urls[1]);
}

#[tokio::test]
async fn a_budget_under_one_second_still_tries_the_first_endpoint() {
    let server = TestServer::builder().replicas(2).start().await.unwrap();
    let urls = server.urls();
    let c = client(&urls[0], &urls[1..], Duration::from_millis(900));
    list_namespaces(&c).await.unwrap();
    assert_eq!(server.faults(0).unwrap().requests_served(), 1);
    // With the first one down there is no time left for the second.
    server.faults(0).unwrap().down().await;
    let err = list_namespaces(&c).await.unwrap_err();
    let Error::AllEndpointsFailed { attempts } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(attempts.len(), 1, "{err}");
    assert_eq!(attempts[0].endpoint, urls[0]);
}

// A resumable watch can move between tasks (controllers spawn them).
const _: fn() = || {
    fn is_send<T: Send + 'static>() {}
    is_send::<kubeset_rest::ResumableWatch<Value>>();
};
