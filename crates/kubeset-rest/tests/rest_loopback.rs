//! The REST client against a scripted HTTP server on 127.0.0.1.

mod support;

use std::{
    sync::{Arc, Mutex},
    time::{Duration, SystemTime},
};

use futures::StreamExt;
use http::HeaderValue;
use kubeset_rest::{
    Error, PatchType, RestClient, RestConfig, StatusReason, TransportKind, Verb, WatchEvent,
    auth::{AuthFuture, Authenticator},
    metrics::Metrics,
    rate_limit::RateLimiter,
    warning::{DedupWarnings, Warning, WarningHandler},
};
use serde::Deserialize;
use support::{RecordingSleeper, Reply, Server};

fn config(server: &Server, sleeper: &Arc<RecordingSleeper>) -> RestConfig {
    RestConfig::new(server.url())
        .with_qps_burst(-1.0, 0)
        .without_backoff()
        .with_sleeper(sleeper.clone())
        .with_timeout(Duration::from_secs(30))
}

fn new_client(server: &Server) -> (RestClient, Arc<RecordingSleeper>) {
    let sleeper = Arc::new(RecordingSleeper::default());
    (RestClient::new(config(server, &sleeper)).unwrap(), sleeper)
}

#[derive(Debug, Deserialize, PartialEq)]
struct Pod {
    metadata: Meta,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Meta {
    name: String,
}

const POD: &str = r#"{"kind":"Pod","metadata":{"name":"web-0"}}"#;

#[tokio::test]
async fn get_decodes_and_sends_client_go_headers() {
    let server = Server::start(vec![Reply::json(200, POD)]).await;
    let sleeper = Arc::new(RecordingSleeper::default());
    let mut extra = http::HeaderMap::new();
    extra.insert("impersonate-user", HeaderValue::from_static("alice"));
    extra.append("impersonate-group", HeaderValue::from_static("g1"));
    extra.append("impersonate-group", HeaderValue::from_static("g2"));
    extra.insert("x-replaced", HeaderValue::from_static("default"));
    let client = RestClient::new(
        RestConfig::new(format!("{}/p", server.url()))
            .with_user_agent("kubeset-test/1")
            .with_default_headers(extra)
            .with_sleeper(sleeper),
    )
    .unwrap();
    let pod: Pod = client
        .get()
        .namespace("default")
        .resource("pods")
        .name("web-0")
        .param("pretty", "true")
        .header(
            http::HeaderName::from_static("x-replaced"),
            HeaderValue::from_static("mine"),
        )
        .send_json()
        .await
        .unwrap();
    assert_eq!(pod.metadata.name, "web-0");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].method, "GET");
    assert_eq!(
        reqs[0].target,
        "/p/api/v1/namespaces/default/pods/web-0?pretty=true"
    );
    assert_eq!(reqs[0].header("accept"), Some("application/json, */*"));
    assert_eq!(reqs[0].header("user-agent"), Some("kubeset-test/1"));
    assert_eq!(reqs[0].header("impersonate-user"), Some("alice"));
    let groups: Vec<_> = reqs[0]
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("impersonate-group"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(groups, vec!["g1", "g2"]);
    let replaced: Vec<_> = reqs[0]
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("x-replaced"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(replaced, vec!["mine"]);
}

#[tokio::test]
async fn response_carries_status_content_type_body_and_warnings() {
    let reply = Reply::json(201, POD)
        .with_header("Warning", r#"299 - "deprecated API", 299 - "second""#)
        .with_header("Warning", r#"199 - "not for the handler""#);
    let server = Server::start(vec![reply]).await;
    #[derive(Debug, Default)]
    struct Collect(Mutex<Vec<String>>);
    impl WarningHandler for Collect {
        fn handle_warning(&self, w: &Warning) {
            self.0.lock().unwrap().push(w.text.clone());
        }
    }
    let seen = Arc::new(Collect::default());
    let sleeper = Arc::new(RecordingSleeper::default());
    let client = RestClient::new(
        config(&server, &sleeper).with_warning_handler(Arc::new(DedupWarnings::new(seen.clone()))),
    )
    .unwrap();
    let resp = client
        .post()
        .namespace("ns")
        .resource("pods")
        .json_body(&serde_json::json!({"a": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status.as_u16(), 201);
    assert_eq!(resp.content_type(), Some("application/json"));
    assert_eq!(&resp.body[..], POD.as_bytes());
    let texts: Vec<_> = resp
        .warnings
        .iter()
        .map(|w| (w.code, w.text.as_str()))
        .collect();
    assert_eq!(
        texts,
        vec![
            (299, "deprecated API"),
            (299, "second"),
            (199, "not for the handler")
        ]
    );
    assert_eq!(*seen.0.lock().unwrap(), vec!["deprecated API", "second"]);
    let req = &server.requests()[0];
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(req.body, br#"{"a":1}"#);
}

#[tokio::test]
async fn status_body_becomes_typed_error_with_verbatim_message() {
    let status = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"pods"},"code":404}"#;
    let conflict = r#"{"kind":"Status","status":"Failure","message":"the object has been modified","reason":"Conflict","code":409}"#;
    let server = Server::start(vec![Reply::json(404, status), Reply::json(409, conflict)]).await;
    let (client, _) = new_client(&server);
    let err = client
        .get()
        .resource("pods")
        .name("x")
        .send()
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    assert_eq!(err.to_string(), "pods \"x\" not found");
    let api = err.api_error().unwrap();
    assert_eq!(api.status_reason, StatusReason::NotFound);
    assert_eq!(api.code, 404);
    assert_eq!(api.details.as_ref().unwrap()["name"], "x");
    let err = client
        .put()
        .resource("pods")
        .name("x")
        .body("{}")
        .send()
        .await
        .unwrap_err();
    assert!(err.is_conflict());
    assert!(!err.is_not_found());
}

#[tokio::test]
async fn non_status_bodies_get_client_go_messages() {
    let long = "x".repeat(5000);
    let cases: Vec<(Reply, Verb, StatusReason, String)> = vec![
        (Reply::text(400, "bad"), Verb::Get, StatusReason::BadRequest, "the server rejected our request for an unknown reason".into()),
        (Reply::text(401, ""), Verb::Get, StatusReason::Unauthorized, "the server has asked for the client to provide credentials".into()),
        (Reply::text(403, " you may not \n"), Verb::Get, StatusReason::Forbidden, "you may not".into()),
        (Reply::json(403, r#"{"x":1}"#), Verb::Get, StatusReason::Forbidden, "unknown".into()),
        (Reply::text(404, "nope"), Verb::Get, StatusReason::NotFound, "the server could not find the requested resource".into()),
        (Reply::text(405, ""), Verb::Get, StatusReason::MethodNotAllowed, "the server does not allow this method on the requested resource".into()),
        (Reply::text(406, ""), Verb::Get, StatusReason::NotAcceptable, "the server was unable to respond with a content type that the client supports".into()),
        (Reply::text(406, "only yaml"), Verb::Get, StatusReason::NotAcceptable, "only yaml".into()),
        (Reply::text(409, ""), Verb::Post, StatusReason::AlreadyExists, "the server reported a conflict".into()),
        (Reply::text(409, ""), Verb::Put, StatusReason::Conflict, "the server reported a conflict".into()),
        (Reply::text(415, "use json"), Verb::Post, StatusReason::UnsupportedMediaType, "use json".into()),
        (Reply::text(422, ""), Verb::Post, StatusReason::Invalid, "the server rejected our request due to an error in our request".into()),
        (Reply::text(429, ""), Verb::Get, StatusReason::TooManyRequests, "the server has received too many requests and has asked us to try again later".into()),
        (Reply::text(503, ""), Verb::Get, StatusReason::ServiceUnavailable, "the server is currently unable to handle the request".into()),
        (Reply::text(504, ""), Verb::Get, StatusReason::Timeout, "the server was unable to return a response in the time allotted, but may still be processing the request".into()),
        (Reply::text(500, "boom \"quoted\""), Verb::Get, StatusReason::InternalError, r#"an error on the server ("boom \"quoted\"") has prevented the request from succeeding"#.into()),
        (Reply::json(502, r#"{"kind":"Status","status":"Success"}"#), Verb::Get, StatusReason::InternalError, r#"an error on the server ("unknown") has prevented the request from succeeding"#.into()),
        (Reply::Http { status: 500, headers: vec![], body: long.clone().into_bytes() }, Verb::Get, StatusReason::InternalError, format!("an error on the server (\"{}\") has prevented the request from succeeding", &long[..2048])),
        (Reply::text(418, "teapot"), Verb::Get, StatusReason::Unknown(String::new()), "the server responded with the status code 418 but did not return more information".into()),
        (Reply::text(302, ""), Verb::Get, StatusReason::Unknown(String::new()), "the server responded with the status code 302 but did not return more information".into()),
    ];
    let n = cases.len();
    let replies = cases.iter().map(|c| c.0.clone()).collect();
    let server = Server::start(replies).await;
    let (client, _) = new_client(&server);
    for (_, verb, reason, message) in cases {
        let err = client.verb(verb).resource("pods").send().await.unwrap_err();
        let api = err.api_error().unwrap_or_else(|| panic!("{err:?}"));
        assert_eq!(api.status_reason, reason, "{message}");
        assert_eq!(api.message, message);
        assert!(!api.from_status);
    }
    assert_eq!(server.requests().len(), n);
}

#[tokio::test]
async fn empty_success_body_is_a_clear_error() {
    let server = Server::start(vec![Reply::json(200, ""), Reply::json(200, "{not json")]).await;
    let (client, _) = new_client(&server);
    let err = client.get().send_json::<Pod>().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "0-length response with status code: 200 and content type: application/json"
    );
    let err = client.get().send_json::<Pod>().await.unwrap_err();
    assert!(matches!(err, Error::Decode { .. }), "{err:?}");
}

#[tokio::test]
async fn builder_and_preflight_errors_never_reach_the_network() {
    let server = Server::start(vec![]).await;
    let (client, _) = new_client(&server);
    let err = client
        .post()
        .namespace("")
        .resource("pods")
        .body("{}")
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "an empty namespace may not be set during creation"
    );
    let err = client.get().namespace("a/b").send().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"invalid namespace "a/b": [may not contain '/']"#
    );
    let err = client.get().name("").watch::<Pod>().await.unwrap_err();
    assert_eq!(err.to_string(), "resource name may not be empty");
    assert!(server.requests().is_empty());
}

fn retry_after(status: u16, value: &str) -> Reply {
    Reply::text(status, "slow down").with_header("Retry-After", value)
}

#[tokio::test]
async fn retry_after_integer_sleeps_and_resends_the_whole_body() {
    let server = Server::start(vec![
        retry_after(429, "1"),
        retry_after(429, "1"),
        retry_after(429, "1"),
        retry_after(429, "1"),
        Reply::json(200, POD),
    ])
    .await;
    let (client, sleeper) = new_client(&server);
    client.get().resource("pods").send().await.unwrap();
    assert_eq!(sleeper.secs(), vec![0, 1, 1, 1, 1]);
    assert_eq!(server.requests().len(), 5);

    let body: Vec<u8> = (0..4000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let server = Server::start(vec![
        retry_after(429, "0"),
        retry_after(500, "0"),
        retry_after(501, "0"),
        retry_after(504, "0"),
        Reply::json(201, POD),
    ])
    .await;
    let (client, _) = new_client(&server);
    let resp = client
        .post()
        .resource("pods")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status.as_u16(), 201);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5);
    for r in reqs {
        assert_eq!(r.body, body);
        assert_eq!(r.header("content-length"), Some("4000"));
    }
}

#[tokio::test]
async fn retry_after_http_date_is_honoured() {
    let when = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
    let server = Server::start(vec![retry_after(503, &when), Reply::json(200, POD)]).await;
    let (client, sleeper) = new_client(&server);
    client.get().send().await.unwrap();
    let waits = sleeper.waits.lock().unwrap().clone();
    assert_eq!(waits.len(), 2);
    // Second resolution on the wire, and the request takes a moment.
    assert!(
        waits[1] >= Duration::from_secs(20) && waits[1] <= Duration::from_secs(30),
        "{waits:?}"
    );
}

#[tokio::test]
async fn no_retry_without_retry_after_or_on_4xx_and_max_retries_caps() {
    let server = Server::start(vec![
        Reply::text(500, "no header"),
        retry_after(404, "1"),
        retry_after(503, "0"),
        retry_after(503, "0"),
        retry_after(503, "0"),
    ])
    .await;
    let (client, _) = new_client(&server);
    let err = client.get().send().await.unwrap_err();
    assert!(err.is_internal_error());
    let err = client.get().send().await.unwrap_err();
    assert!(err.is_not_found());
    assert_eq!(server.requests().len(), 2);
    let err = client.get().max_retries(2).send().await.unwrap_err();
    let api = err.api_error().unwrap();
    assert!(api.is_service_unavailable());
    assert_eq!(api.retry_after, Some(Duration::ZERO));
    assert!(err.is_retryable());
    assert_eq!(server.requests().len(), 5);
}

#[tokio::test]
async fn sleep_is_max_of_backoff_and_retry_after() {
    let server = Server::start(vec![retry_after(500, "5"), Reply::json(200, POD)]).await;
    let sleeper = Arc::new(RecordingSleeper::default());
    let cfg =
        config(&server, &sleeper).with_backoff(Duration::from_secs(1), Duration::from_secs(60));
    RestClient::new(cfg).unwrap().get().send().await.unwrap();
    assert_eq!(sleeper.secs(), vec![0, 5]);

    let server = Server::start(vec![
        retry_after(500, "2"),
        retry_after(500, "2"),
        retry_after(500, "2"),
        Reply::json(200, POD),
    ])
    .await;
    let sleeper = Arc::new(RecordingSleeper::default());
    let cfg =
        config(&server, &sleeper).with_backoff(Duration::from_secs(1), Duration::from_secs(60));
    RestClient::new(cfg).unwrap().get().send().await.unwrap();
    assert_eq!(sleeper.secs(), vec![0, 2, 2, 4]);
}

#[tokio::test]
async fn backoff_sequence_is_shared_by_requests_of_one_client() {
    let codes = [429u16, 500, 501, 502, 300, 500, 501, 502];
    let server = Server::start(codes.iter().map(|c| Reply::text(*c, "")).collect()).await;
    let sleeper = Arc::new(RecordingSleeper::default());
    let cfg =
        config(&server, &sleeper).with_backoff(Duration::from_secs(1), Duration::from_secs(60));
    let client = RestClient::new(cfg).unwrap();
    for _ in codes {
        let _ = client.get().send().await;
    }
    assert_eq!(sleeper.secs(), vec![0, 1, 2, 4, 8, 0, 1, 2]);
}

#[tokio::test]
async fn get_is_retried_on_reset_and_eof_with_error_chain() {
    let server = Server::start(vec![Reply::Reset, Reply::Close, Reply::json(200, POD)]).await;
    let (client, sleeper) = new_client(&server);
    let pod: Pod = client.get().send_json().await.unwrap();
    assert_eq!(pod.metadata.name, "web-0");
    assert_eq!(sleeper.secs(), vec![0, 1, 1]);
    assert_eq!(server.requests().len(), 3);

    // Final failure after a different earlier one: both are reported.
    let server = Server::start(vec![Reply::Close, Reply::Reset]).await;
    let (client, _) = new_client(&server);
    let err = client.get().max_retries(1).send().await.unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains(" - error from a previous attempt: "), "{msg}");
    assert!(
        msg.starts_with("connection reset on GET http://127.0.0.1:"),
        "{msg}"
    );
    let tail = format!(
        " - error from a previous attempt: unexpected EOF on GET http://{}/api/v1",
        server.addr
    );
    assert!(msg.ends_with(&tail), "{msg}");
    assert!(matches!(err, Error::Retried { .. }), "{err:?}");
    assert!(err.is_retryable());
}

#[tokio::test]
async fn post_is_not_retried_on_transport_errors_and_refused_is_not_retried() {
    let server = Server::start(vec![Reply::Reset, Reply::json(200, POD)]).await;
    let (client, _) = new_client(&server);
    let err = client.post().body("{}").send().await.unwrap_err();
    assert!(err.transport_kind().is_some(), "{err:?}");
    assert_eq!(err.transport_kind(), Some(TransportKind::Reset));
    assert_eq!(server.requests().len(), 1);

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let sleeper = Arc::new(RecordingSleeper::default());
    let client = RestClient::new(
        RestConfig::new(format!("http://{addr}"))
            .with_qps_burst(-1.0, 0)
            .with_sleeper(sleeper.clone()),
    )
    .unwrap();
    let err = client.get().send().await.unwrap_err();
    assert_eq!(
        err.transport_kind(),
        Some(TransportKind::Refused),
        "{err:?}"
    );
    assert_eq!(sleeper.secs(), vec![0]);
    assert!(
        err.to_string()
            .starts_with("connection refused on GET http://127.0.0.1:"),
        "{err}"
    );
}

#[tokio::test]
async fn timeouts() {
    let server = Server::start(vec![Reply::Hang, Reply::Hang]).await;
    let sleeper = Arc::new(RecordingSleeper::default());
    let client =
        RestClient::new(config(&server, &sleeper).with_timeout(Duration::from_millis(300)))
            .unwrap();
    let err = client.get().send().await.unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    assert!(err.is_timeout());
    // Per-request timeout: sent as a parameter and enforced.
    let (client, _) = new_client(&server);
    let err = client
        .get()
        .timeout(Duration::from_millis(300))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[1].target, "/api/v1?timeout=300ms");
}

#[tokio::test]
async fn into_http_is_what_the_first_attempt_sends() {
    let server = Server::start(vec![Reply::json(200, "{}")]).await;
    let mut defaults = http::HeaderMap::new();
    defaults.append("impersonate-group", HeaderValue::from_static("a"));
    defaults.append("impersonate-group", HeaderValue::from_static("b"));
    let tokens = Arc::new(Tokens {
        current: Mutex::new(7),
        invalidations: Mutex::new(0),
    });
    let sleeper = Arc::new(RecordingSleeper::default());
    let c = RestClient::new(
        config(&server, &sleeper)
            .with_default_headers(defaults)
            .with_user_agent("ua/1")
            .with_authenticator(tokens),
    )
    .unwrap();
    let request = || {
        c.post()
            .namespace("ns")
            .resource("pods")
            .name("a b")
            .sub_resource(["exec"])
            .param("command", "ls")
            .param("command", "-l")
            .body(&b"{}"[..])
    };
    let http = request().into_http().await.unwrap();
    request().send().await.unwrap();
    let sent = &server.requests()[0];
    assert_eq!(http.method().as_str(), sent.method);
    assert_eq!(
        http.uri().to_string(),
        format!("{}{}", server.url(), sent.target)
    );
    assert_eq!(
        sent.target,
        "/api/v1/namespaces/ns/pods/a%20b/exec?command=ls&command=-l"
    );
    for name in ["authorization", "accept", "content-type", "user-agent"] {
        assert_eq!(
            http.headers().get(name).and_then(|v| v.to_str().ok()),
            sent.header(name),
            "{name}"
        );
    }
    assert_eq!(http.headers()["authorization"], "Bearer t7");
    assert_eq!(
        http.headers().get_all("impersonate-group").iter().count(),
        2
    );
    assert_eq!(&http.body()[..], &sent.body[..]);
    // Builder errors are the description's.
    let err = c.get().namespace("a/b").into_http().await.unwrap_err();
    assert!(matches!(err, Error::InvalidRequest { .. }), "{err}");
}

#[derive(Debug)]
struct Tokens {
    current: Mutex<u32>,
    invalidations: Mutex<u32>,
}

impl Authenticator for Tokens {
    fn authorization(&self) -> AuthFuture<'_> {
        let n = *self.current.lock().unwrap();
        Box::pin(async move {
            Ok(Some(
                HeaderValue::from_str(&format!("Bearer t{n}")).unwrap(),
            ))
        })
    }
    fn invalidate(&self) {
        *self.invalidations.lock().unwrap() += 1;
        *self.current.lock().unwrap() += 1;
    }
}

#[tokio::test]
async fn unauthorized_invalidates_and_retries_once() {
    let server = Server::start(vec![
        Reply::text(401, ""),
        Reply::json(200, POD),
        Reply::text(401, ""),
        Reply::text(401, ""),
        Reply::text(401, ""),
    ])
    .await;
    let auth = Arc::new(Tokens {
        current: Mutex::new(1),
        invalidations: Mutex::new(0),
    });
    let sleeper = Arc::new(RecordingSleeper::default());
    let client =
        RestClient::new(config(&server, &sleeper).with_authenticator(auth.clone())).unwrap();
    client.get().send().await.unwrap();
    let err = client.get().send().await.unwrap_err();
    assert!(err.is_unauthorized());
    let auths: Vec<_> = server
        .requests()
        .iter()
        .map(|r| r.header("authorization").unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        auths,
        vec!["Bearer t1", "Bearer t2", "Bearer t2", "Bearer t3"]
    );
    assert_eq!(*auth.invalidations.lock().unwrap(), 2);
    assert_eq!(server.remaining(), 1);
}

#[derive(Debug, Default)]
struct Recorder {
    latency: Mutex<Vec<(Verb, String)>>,
    results: Mutex<Vec<Option<u16>>>,
    retries: Mutex<Vec<Option<u16>>>,
    throttled: Mutex<Vec<Duration>>,
}

impl Metrics for Recorder {
    fn request_latency(&self, verb: Verb, url_template: &str, _latency: Duration) {
        self.latency
            .lock()
            .unwrap()
            .push((verb, url_template.to_owned()));
    }
    fn request_result(&self, _verb: Verb, host: &str, code: Option<u16>) {
        assert!(host.starts_with("127.0.0.1:"));
        self.results.lock().unwrap().push(code);
    }
    fn request_retry(&self, _verb: Verb, _host: &str, code: Option<u16>) {
        self.retries.lock().unwrap().push(code);
    }
    fn rate_limiter_latency(&self, _verb: Verb, _url_template: &str, wait: Duration) {
        self.throttled.lock().unwrap().push(wait);
    }
}

#[tokio::test]
async fn metrics_hook_sees_templates_codes_retries_and_throttling() {
    let server = Server::start(vec![
        Reply::Reset,
        retry_after(503, "0"),
        Reply::json(200, POD),
        Reply::json(200, POD),
        Reply::json(200, POD),
        Reply::json(200, POD),
    ])
    .await;
    let metrics = Arc::new(Recorder::default());
    let sleeper = Arc::new(RecordingSleeper::default());
    let client = RestClient::new(
        config(&server, &sleeper)
            .with_metrics(metrics.clone())
            .with_qps_burst(1.0, 3),
    )
    .unwrap();
    client
        .get()
        .namespace("ns")
        .resource("pods")
        .name("p")
        .send()
        .await
        .unwrap();
    for _ in 0..3 {
        client.get().resource("pods").send().await.unwrap();
    }
    let latency = metrics.latency.lock().unwrap().clone();
    assert_eq!(latency.len(), 6);
    assert_eq!(
        latency[0],
        (
            Verb::Get,
            "/api/v1/namespaces/{namespace}/pods/{name}".into()
        )
    );
    assert_eq!(latency[5], (Verb::Get, "/api/v1/pods".into()));
    assert_eq!(
        *metrics.results.lock().unwrap(),
        vec![None, Some(503), Some(200), Some(200), Some(200), Some(200)]
    );
    assert_eq!(*metrics.retries.lock().unwrap(), vec![None, Some(503)]);
    // Burst 3 then one per second: the 4th and later reservations wait.
    let throttled = metrics.throttled.lock().unwrap().clone();
    // The recording sleeper does not wait, so reservations queue up.
    let longest = throttled.iter().max().copied().unwrap_or_default();
    assert!(longest >= Duration::from_secs(1), "{throttled:?}");
    assert!(longest <= Duration::from_secs(3), "{throttled:?}");
}

#[derive(Debug, Default)]
struct CountingLimiter(Mutex<u32>);

impl RateLimiter for CountingLimiter {
    fn reserve(&self) -> Duration {
        *self.0.lock().unwrap() += 1;
        Duration::from_millis(7)
    }
}

#[tokio::test]
async fn custom_rate_limiter_is_asked_for_every_attempt() {
    let server = Server::start(vec![retry_after(429, "0"), Reply::json(200, POD)]).await;
    let limiter = Arc::new(CountingLimiter::default());
    let sleeper = Arc::new(RecordingSleeper::default());
    // The explicit limiter wins even when QPS/burst is set after it.
    let client = RestClient::new(
        config(&server, &sleeper)
            .with_rate_limiter(limiter.clone())
            .with_qps_burst(100.0, 100),
    )
    .unwrap();
    client.get().send().await.unwrap();
    assert_eq!(*limiter.0.lock().unwrap(), 2);
    let waits = sleeper.waits.lock().unwrap().clone();
    assert_eq!(
        waits
            .iter()
            .filter(|w| **w == Duration::from_millis(7))
            .count(),
        2
    );
}

#[tokio::test]
async fn patch_types_set_content_type_and_apply_params() {
    let server = Server::start(vec![Reply::json(200, POD), Reply::json(200, POD)]).await;
    let (client, _) = new_client(&server);
    client
        .patch(PatchType::StrategicMerge)
        .namespace("ns")
        .resource("pods")
        .name("p")
        .body(r#"{"metadata":{}}"#)
        .send()
        .await
        .unwrap();
    client
        .patch(PatchType::Apply {
            field_manager: "kubeset".into(),
            force: true,
        })
        .namespace("ns")
        .resource("pods")
        .name("p")
        .body("metadata: {}")
        .send()
        .await
        .unwrap();
    let reqs = server.requests();
    assert_eq!(reqs[0].method, "PATCH");
    assert_eq!(
        reqs[0].header("content-type"),
        Some("application/strategic-merge-patch+json")
    );
    assert_eq!(
        reqs[1].header("content-type"),
        Some("application/apply-patch+yaml")
    );
    assert_eq!(
        reqs[1].target,
        "/api/v1/namespaces/ns/pods/p?fieldManager=kubeset&force=true"
    );
}

fn chunked(chunks: Vec<&[u8]>, finish: bool) -> Reply {
    Reply::Chunked {
        status: 200,
        headers: vec![("Content-Type".into(), "application/json".into())],
        chunks: chunks
            .into_iter()
            .map(|c| (Duration::from_millis(5), c.to_vec()))
            .collect(),
        finish,
    }
}

#[tokio::test]
async fn watch_over_the_wire_split_mid_line() {
    let events = concat!(
        r#"{"type":"ADDED","object":{"metadata":{"name":"a"}}}"#,
        "\n",
        r#"{"type":"MODIFIED","object":{"metadata":{"name":"b"}}}"#,
        "\n",
        r#"{"type":"DELETED","object":{"metadata":{"name":"c"}}}"#,
        "\n",
        r#"{"type":"BOOKMARK","object":{"metadata":{"name":"d"}}}"#,
        "\n",
        r#"{"type":"ERROR","object":{"kind":"Status","status":"Failure","reason":"Expired","code":410,"message":"too old resource version"}}"#,
        "\n",
    )
    .as_bytes();
    let pieces: Vec<&[u8]> = events.chunks(13).collect();
    // A watch cut short after the first retry: EOF at connect is retried.
    let server = Server::start(vec![Reply::Close, chunked(pieces, true)]).await;
    let (client, _) = new_client(&server);
    let stream = client
        .get()
        .resource("pods")
        .param("watch", "true")
        .watch::<Pod>()
        .await
        .unwrap();
    let got: Vec<_> = stream.collect().await;
    assert_eq!(got.len(), 5);
    let name = |e: &WatchEvent<Pod>| match e {
        WatchEvent::Added(p)
        | WatchEvent::Modified(p)
        | WatchEvent::Deleted(p)
        | WatchEvent::Bookmark(p) => p.metadata.name.clone(),
        WatchEvent::Error(e) => e.message.clone(),
    };
    let got: Vec<_> = got.into_iter().map(Result::unwrap).collect();
    assert!(matches!(got[0], WatchEvent::Added(_)));
    assert!(matches!(got[1], WatchEvent::Modified(_)));
    assert!(matches!(got[2], WatchEvent::Deleted(_)));
    assert!(matches!(got[3], WatchEvent::Bookmark(_)));
    assert_eq!(
        got.iter().map(name).collect::<Vec<_>>(),
        vec!["a", "b", "c", "d", "too old resource version"]
    );
    match &got[4] {
        WatchEvent::Error(e) => assert!(e.is_gone() && e.code == 410),
        other => panic!("{other:?}"),
    }
    assert_eq!(server.requests()[1].target, "/api/v1/pods?watch=true");
}

#[tokio::test]
async fn watch_errors_once_on_a_truncated_stream_and_on_bad_lines() {
    let truncated = chunked(
        vec![b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n{\"type\":\"MOD"],
        false,
    );
    let unknown = chunked(
        vec![b"{\"type\":\"RESYNC\",\"object\":{}}\n{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n"],
        true,
    );
    let malformed = chunked(vec![b"{\"type\":\"ADDED\",\"object\":[]}\n"], true);
    let server = Server::start(vec![
        truncated,
        unknown,
        malformed,
        Reply::json(
            410,
            r#"{"kind":"Status","status":"Failure","reason":"Gone","code":410,"message":"gone"}"#,
        ),
    ])
    .await;
    let (client, _) = new_client(&server);

    // Cut mid-event: the caller learns it (client-go drops it silently).
    let got: Vec<_> = client.get().watch::<Pod>().await.unwrap().collect().await;
    assert_eq!(got.len(), 2);
    assert!(matches!(got[0], Ok(WatchEvent::Added(_))));
    assert!(matches!(got[1], Err(Error::WatchCut { received: 12 })));

    let got: Vec<_> = client.get().watch::<Pod>().await.unwrap().collect().await;
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].as_ref().unwrap_err().to_string(),
        "got invalid watch event type: RESYNC"
    );

    let got: Vec<_> = client.get().watch::<Pod>().await.unwrap().collect().await;
    assert_eq!(got.len(), 1);
    assert!(matches!(got[0], Err(Error::WatchDecode { .. })));

    let err = client.get().watch::<Pod>().await.unwrap_err();
    assert!(err.is_gone());
    assert_eq!(err.to_string(), "gone");
}

#[tokio::test]
async fn stream_yields_raw_bytes_and_never_retries_transport_errors() {
    let logs = Reply::Chunked {
        status: 200,
        headers: vec![("Content-Type".into(), "text/plain".into())],
        chunks: vec![
            (Duration::from_millis(5), b"line 1\nli".to_vec()),
            (Duration::from_millis(5), b"ne 2\n".to_vec()),
        ],
        finish: true,
    };
    let server = Server::start(vec![
        logs,
        Reply::Close,
        Reply::json(207, POD),
        Reply::text(404, ""),
    ])
    .await;
    let (client, _) = new_client(&server);
    let mut s = client
        .get()
        .namespace("ns")
        .resource("pods")
        .name("p")
        .sub_resource(["log"])
        .param("follow", "true")
        .stream()
        .await
        .unwrap();
    let mut all = Vec::new();
    while let Some(chunk) = s.next().await {
        all.extend_from_slice(&chunk.unwrap());
    }
    assert_eq!(all, b"line 1\nline 2\n");
    let err = client.get().stream().await.err().unwrap();
    assert!(err.transport_kind().is_some(), "{err:?}");
    assert_eq!(server.requests().len(), 2);
    // Any 2xx is success for a stream.
    let _ = client.get().stream().await.unwrap();
    let err = client.get().stream().await.err().unwrap();
    assert!(err.is_not_found());
}

/// Deterministic pseudo-random bytes (xorshift).
fn garbage(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x & 0xff) as u8
        })
        .collect()
}

#[tokio::test]
async fn garbage_responses_never_panic() {
    let mut replies = Vec::new();
    for seed in 1..=12u64 {
        replies.push(Reply::Raw(garbage(seed, 64 + (seed as usize) * 37)));
    }
    let mut with_status = |status: u16, body: Vec<u8>, ct: &str| {
        replies.push(Reply::Http {
            status,
            headers: vec![("Content-Type".into(), ct.into())],
            body,
        });
    };
    with_status(200, garbage(99, 300), "application/json");
    with_status(500, garbage(98, 3000), "text/plain");
    with_status(404, garbage(97, 300), "application/json");
    with_status(
        200,
        b"{\"kind\":\"Status\",\"status\":\"Failure\",\"code\":99999}".to_vec(),
        "application/json",
    );
    with_status(
        429,
        b"{\"kind\":\"Status\",\"status\":\"Failure\",\"details\":{\"retryAfterSeconds\":-1}}"
            .to_vec(),
        "application/json",
    );
    with_status(200, b"\xff\xfe{}".to_vec(), "application/json");
    replies.push(Reply::Raw(
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort".to_vec(),
    ));
    replies.push(Reply::Raw(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".to_vec(),
    ));
    replies.push(Reply::Raw(b"HTTP/1.1 999 Weird\r\nRetry-After: 99999999999999999999\r\nWarning: 299 - \"\xff\"\r\n\r\n".to_vec()));
    replies.push(Reply::Raw(b"HTTP/1.1 503 X\r\nRetry-After: Thu, 01 Jan 1970 00:00:00 GMT\r\nContent-Length: 0\r\n\r\n".to_vec()));
    let n = replies.len();
    let server = Server::start(replies).await;
    let (client, _) = new_client(&server);
    for _ in 0..n {
        // Any outcome is fine as long as it is a value, not a panic.
        let _ = client
            .post()
            .body("x")
            .max_retries(0)
            .send_json::<Pod>()
            .await;
    }
    assert_eq!(server.requests().len(), n);
    // The same garbage as a watch stream.
    let server = Server::start(vec![chunked(
        vec![&garbage(5, 500), b"\n", &garbage(6, 100)],
        true,
    )])
    .await;
    let (client, _) = new_client(&server);
    let got: Vec<_> = client.get().watch::<Pod>().await.unwrap().collect().await;
    assert!(got.len() <= 1);
}

#[tokio::test]
async fn watch_retries_a_timed_out_connect_but_send_does_not() {
    let events = b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n";
    let server = Server::start(vec![Reply::Hang, chunked(vec![events], true), Reply::Hang]).await;
    let sleeper = Arc::new(RecordingSleeper::default());
    // The read timeout bounds each attempt's wait for the headers; the
    // client timeout (the whole call's budget) leaves room for a retry.
    let client = RestClient::new(
        config(&server, &sleeper)
            .with_timeout(Duration::from_secs(30))
            .with_read_timeout(Duration::from_millis(500)),
    )
    .unwrap();
    let got: Vec<_> = client.get().watch::<Pod>().await.unwrap().collect().await;
    assert_eq!(got.len(), 1);
    assert_eq!(server.requests().len(), 2);
    let err = client.get().send().await.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert_eq!(server.requests().len(), 3);
}

fn assert_send<T: Send>(_: &T) {}
fn assert_send_sync<T: Send + Sync + 'static>() {}

#[tokio::test]
async fn futures_and_types_can_cross_tasks() {
    assert_send_sync::<RestClient>();
    assert_send_sync::<Error>();
    assert_send_sync::<kubeset_rest::ApiError>();
    assert_send_sync::<kubeset_rest::Response>();
    let server = Server::start(vec![Reply::json(200, POD)]).await;
    let (client, _) = new_client(&server);
    let fut = client.get().send_json::<Pod>();
    assert_send(&fut);
    assert_send(&client.get().watch::<Pod>());
    assert_send(&client.get().stream());
    // And actually run one on another task.
    let pod = tokio::spawn(fut).await.unwrap().unwrap();
    assert_eq!(pod.metadata.name, "web-0");
}
