//! The swappable transport: `Client::new(service, namespace)` as kube-rs
//! users write it — a `tower_test::mock` pair answering by hand, and a
//! stack of tower layers over hyper's client against the embedded server.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use http::{Request, Response, StatusCode};
use kubeset_client::{
    Api, Client,
    api::core::v1::ConfigMap,
    rest::{Error, service::Body},
};
use kubeset_client::{
    Patch,
    params::{PatchParams, PostParams},
};
use tower::ServiceBuilder;

fn config_map(name: &str, value: &str) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": "7"},
        "data": {"k": value},
    })
}

/// kube-rs's controller-rs test shape: the test plays the API server on the
/// mock's handle, checks each request and answers it.
#[tokio::test]
async fn a_tower_mock_answers_typed_calls_and_sees_their_requests() {
    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let server = tokio::spawn(async move {
        let (req, send) = handle.next_request().await.expect("a get");
        assert_eq!(req.method(), http::Method::GET);
        assert_eq!(req.uri(), "/api/v1/namespaces/default/configmaps/settings");
        send.send_response(Response::new(Body::from(
            config_map("settings", "a").to_string(),
        )));

        let (req, send) = handle.next_request().await.expect("a patch");
        assert_eq!(req.method(), http::Method::PATCH);
        assert_eq!(
            req.uri().path(),
            "/api/v1/namespaces/default/configmaps/settings"
        );
        assert!(
            req.uri()
                .query()
                .unwrap_or("")
                .contains("fieldManager=mock-test")
        );
        assert_eq!(
            req.headers()[http::header::CONTENT_TYPE],
            "application/merge-patch+json"
        );
        let body = req.into_body().collect_bytes().await.expect("the body");
        let patch: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
        assert_eq!(patch, serde_json::json!({"data": {"k": "b"}}));
        send.send_response(Response::new(Body::from(
            config_map("settings", "b").to_string(),
        )));

        let (req, send) = handle.next_request().await.expect("a create");
        assert_eq!(
            req.uri().to_string(),
            "/api/v1/namespaces/default/configmaps?"
        );
        let status = serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": "configmaps \"settings\" already exists",
            "reason": "AlreadyExists", "code": 409,
        });
        let mut conflict = Response::new(Body::from(status.to_string()));
        *conflict.status_mut() = StatusCode::CONFLICT;
        send.send_response(conflict);
    });

    let api = Api::<ConfigMap>::default_namespaced(Client::new(service, "default"));
    let cm = api.get("settings").await.expect("get");
    assert_eq!(cm.data.unwrap()["k"], "a");
    let params = PatchParams {
        field_manager: Some("mock-test".to_owned()),
        dry_run: true,
        ..PatchParams::default()
    };
    let patched = api
        .patch(
            "settings",
            &params,
            &Patch::Merge(serde_json::json!({"data": {"k": "b"}})),
        )
        .await
        .expect("patch");
    assert_eq!(patched.data.unwrap()["k"], "b");
    let new: ConfigMap = serde_json::from_value(config_map("settings", "c")).unwrap();
    let err = api.create(&PostParams::default(), &new).await.unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    server.await.expect("the mock's checks");
}

/// A service's own failure is final (not retried) and names the request.
#[tokio::test]
async fn a_failing_service_is_reported_once_with_the_request() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let service = tower::service_fn(move |_req: Request<Body>| {
        counted.fetch_add(1, Ordering::SeqCst);
        async { Err::<Response<Body>, _>(std::io::Error::other("socket closed by the test")) }
    });
    let api = Api::<ConfigMap>::default_namespaced(Client::new(service, "default"));
    let err = api.get("x").await.unwrap_err();
    assert!(matches!(err, Error::Service { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "GET /api/v1/namespaces/default/configmaps/x: the client's service failed"
    );
    let cause = std::error::Error::source(&err)
        .expect("the cause")
        .to_string();
    assert_eq!(cause, "socket closed by the test");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// A stack of tower layers in front of hyper's client, sending to the
/// embedded API server over a real socket: the layers see every request
/// (here they set the server's address and count), typed calls and a watch
/// work through them.
#[tokio::test]
async fn a_layered_stack_over_hyper_reaches_the_embedded_server() {
    let server = kubeset_testserver::TestServer::start()
        .await
        .expect("server");
    let origin: http::Uri = server.url().parse().expect("the server's URL");
    let hyper = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Body>();
    let seen = Arc::new(AtomicUsize::new(0));
    let counted = seen.clone();
    let stack = ServiceBuilder::new()
        .map_request(move |mut req: Request<Body>| {
            counted.fetch_add(1, Ordering::SeqCst);
            let mut parts = origin.clone().into_parts();
            parts.path_and_query = req.uri().path_and_query().cloned();
            *req.uri_mut() = http::Uri::from_parts(parts).expect("a URI");
            req
        })
        .service(hyper);
    let client = Client::new(stack, "default");
    let api = Api::<ConfigMap>::default_namespaced(client);
    let new: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "through-layers"}, "data": {"k": "v"},
    }))
    .unwrap();
    api.create(&PostParams::default(), &new)
        .await
        .expect("create");
    let got = api.get("through-layers").await.expect("get");
    assert_eq!(got.data.unwrap()["k"], "v");
    let listed = api.list(&Default::default()).await.expect("list");
    assert_eq!(listed.items.len(), 1);
    assert!(seen.load(Ordering::SeqCst) >= 3);
    let err = api.get("missing").await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
}
