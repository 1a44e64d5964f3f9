//! kube-rs's tower-mock tests: a `Client` over `tower_test::mock::pair()`,
//! a task answering what the mock receives, the requests' method, path
//! and body asserted as controller-rs asserts them.

use http::{Method, Request, Response, StatusCode};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use kube::client::Body;
use kube::{Client, ResourceExt};
use serde_json::json;

use crate::support::{BoxError, within};

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

#[tokio::test]
async fn get_through_a_mock_service() -> Result<(), BoxError> {
    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let server = tokio::spawn(async move {
        let (request, send) = handle.next_request().await.expect("a request");
        assert_eq!(request.method(), Method::GET);
        assert_eq!(
            request.uri().path(),
            "/api/v1/namespaces/default/configmaps/settings"
        );
        let body = serde_json::to_vec(&config_map("settings")).expect("json");
        send.send_response(
            Response::builder()
                .body(Body::from(body))
                .expect("response"),
        );
    });
    let cms: Api<ConfigMap> = Api::default_namespaced(Client::new(service, "default"));
    let cm = cms.get("settings").await?;
    assert_eq!(cm.name_any(), "settings");
    within("the mock's answer", server).await??;
    Ok(())
}

#[tokio::test]
async fn apply_sends_the_field_manager_and_body() -> Result<(), BoxError> {
    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let server = tokio::spawn(async move {
        let (request, send) = handle.next_request().await.expect("a request");
        assert_eq!(request.method(), Method::PATCH);
        let uri = request.uri().to_string();
        assert!(
            uri.starts_with("/api/v1/namespaces/default/configmaps/settings?"),
            "{uri}"
        );
        assert!(
            uri.contains("fieldManager=porting") && uri.contains("force=true"),
            "{uri}"
        );
        let content_type = request.headers()[http::header::CONTENT_TYPE]
            .to_str()
            .expect("ascii");
        assert_eq!(content_type, "application/apply-patch+yaml");
        let body = request.into_body().collect_bytes().await.expect("the body");
        let sent: serde_json::Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(sent["data"]["key"], "value");
        let mut answer = config_map("settings");
        answer.data = Some([("key".to_owned(), "value".to_owned())].into());
        let body = serde_json::to_vec(&answer).expect("json");
        send.send_response(
            Response::builder()
                .body(Body::from(body))
                .expect("response"),
        );
    });
    let cms: Api<ConfigMap> = Api::default_namespaced(Client::new(service, "default"));
    let patch = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"key": "value"}});
    let params = PatchParams::apply("porting").force();
    let applied = cms
        .patch("settings", &params, &Patch::Apply(&patch))
        .await?;
    assert_eq!(applied.data.unwrap()["key"], "value");
    within("the mock's answer", server).await??;
    Ok(())
}

#[tokio::test]
async fn a_status_answer_is_an_api_error() -> Result<(), BoxError> {
    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let server = tokio::spawn(async move {
        let (_request, send) = handle.next_request().await.expect("a request");
        let status = json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": "configmaps \"gone\" not found", "reason": "NotFound", "code": 404,
        });
        let response = Response::builder()
            .status(StatusCode::NOT_FOUND)
            .body(Body::from(serde_json::to_vec(&status).expect("json")))
            .expect("response");
        send.send_response(response);
    });
    let cms: Api<ConfigMap> = Api::default_namespaced(Client::new(service, "default"));
    let err = cms.get("gone").await.expect_err("a 404");
    let message = err.to_string();
    assert!(message.contains("not found"), "{message}");
    within("the mock's answer", server).await??;
    Ok(())
}
