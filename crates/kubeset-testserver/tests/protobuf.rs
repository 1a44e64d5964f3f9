//! Protobuf content negotiation over real sockets: built-in kinds are
//! read and written in `application/vnd.kubernetes.protobuf`, errors come
//! back as a protobuf `Status`, custom resources stay JSON (415 for a
//! protobuf body, 406 when only protobuf is acceptable).

mod common;

use common::*;
use kubeset_api::api::core::v1::ConfigMap;
use kubeset_api::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry, Status};
use kubeset_api::protobuf::{self, CONTENT_TYPE};
use kubeset_testserver::TestServer;
use serde_json::json;

async fn send_pb(
    c: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    accept: &str,
    body: Option<Vec<u8>>,
) -> (u16, String, Vec<u8>) {
    let mut r = c.request(method, url).header("Accept", accept);
    if let Some(b) = body {
        r = r.header("Content-Type", CONTENT_TYPE).body(b);
    }
    let resp = r.send().await.expect("request");
    let code = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    (code, ct, resp.bytes().await.expect("body").to_vec())
}

const BOTH: &str = "application/vnd.kubernetes.protobuf, application/json";

#[tokio::test]
async fn built_in_kinds_in_protobuf_both_ways() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let cms = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("pb".into());
    cm.data = Some([("a".to_owned(), "b".to_owned())].into());
    let (code, ct, body) = send_pb(
        &c,
        reqwest::Method::POST,
        &cms,
        BOTH,
        Some(protobuf::encode_object(&cm)),
    )
    .await;
    assert_eq!((code, ct.as_str()), (201, CONTENT_TYPE));
    let created: ConfigMap = protobuf::decode_object(&body).unwrap();
    assert_eq!(created.data, cm.data);
    assert!(created.metadata.uid.is_some() && created.metadata.resource_version.is_some());

    // GET: protobuf when preferred, JSON when JSON comes first.
    let (code, ct, body) =
        send_pb(&c, reqwest::Method::GET, &format!("{cms}/pb"), BOTH, None).await;
    assert_eq!((code, ct.as_str()), (200, CONTENT_TYPE));
    let got: ConfigMap = protobuf::decode_object(&body).unwrap();
    assert_eq!(got.metadata.uid, created.metadata.uid);
    let (_, ct, body) = send_pb(
        &c,
        reqwest::Method::GET,
        &format!("{cms}/pb"),
        "application/json, application/vnd.kubernetes.protobuf",
        None,
    )
    .await;
    assert_eq!(ct, "application/json");
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&body).unwrap()["data"]["a"],
        "b"
    );

    // A list, through the generic List<T> codec of the envelope's raw.
    let (code, ct, body) = send_pb(&c, reqwest::Method::GET, &cms, BOTH, None).await;
    assert_eq!((code, ct.as_str()), (200, CONTENT_TYPE));
    let u = protobuf::Unknown::parse(&body).unwrap();
    assert_eq!(
        (u.api_version.as_str(), u.kind.as_str()),
        ("v1", "ConfigMapList")
    );
    let list: kubeset_api::List<ConfigMap> = protobuf::decode(u.raw).unwrap();
    assert_eq!(list.items.len(), 1);

    // PUT in protobuf.
    let mut changed = got.clone();
    changed.data = Some([("a".to_owned(), "c".to_owned())].into());
    let (code, _, body) = send_pb(
        &c,
        reqwest::Method::PUT,
        &format!("{cms}/pb"),
        BOTH,
        Some(protobuf::encode_object(&changed)),
    )
    .await;
    assert_eq!(code, 200);
    let updated: ConfigMap = protobuf::decode_object(&body).unwrap();
    assert_eq!(updated.data, changed.data);

    // Errors are a protobuf Status.
    let (code, ct, body) = send_pb(
        &c,
        reqwest::Method::GET,
        &format!("{cms}/missing"),
        BOTH,
        None,
    )
    .await;
    assert_eq!((code, ct.as_str()), (404, CONTENT_TYPE));
    let status: Status = protobuf::decode_typed(&body, "v1", "Status").unwrap();
    assert_eq!(status.code, Some(404));
    assert_eq!(status.reason.as_deref(), Some("NotFound"));

    // Garbage in protobuf is a 400, not a crash.
    let (code, _, _) = send_pb(
        &c,
        reqwest::Method::POST,
        &cms,
        BOTH,
        Some(b"k8s\0\x0a\xff".to_vec()),
    )
    .await;
    assert_eq!(code, 400);
}

/// A managed-fields set that is not JSON: protobuf carries it as bytes,
/// which kubeset reads as Go does (unchecked) and checks when it writes the
/// object as JSON. The server refuses the create with a 400 naming
/// `FieldsV1` and stores nothing.
#[tokio::test]
async fn a_field_set_that_is_not_json_is_a_bad_request() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let cms = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("bad-fields".into());
    cm.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
        manager: Some("me".into()),
        operation: Some("Update".into()),
        fields_type: Some("FieldsV1".into()),
        fields_v1: Some(FieldsV1::from_json(r#"{"f:data":{}}"#).unwrap()),
        ..ManagedFieldsEntry::default()
    }]);
    let mut bytes = protobuf::encode_object(&cm);
    let good: &[u8] = br#"{"f:data":{}}"#;
    let at = bytes
        .windows(good.len())
        .position(|w| w == good)
        .expect("the field set's bytes");
    bytes[at..at + good.len()].copy_from_slice(br#"{"f:data":{{}"#);

    let read: ConfigMap = protobuf::decode_object(&bytes).expect("decodes, as in Go");
    let fields = read.metadata.managed_fields.as_ref().unwrap()[0]
        .fields_v1
        .as_ref()
        .unwrap();
    assert_eq!(fields.as_json(), r#"{"f:data":{{}"#);
    let err = serde_json::to_string(&read).unwrap_err().to_string();
    assert!(err.contains("FieldsV1 is not JSON"), "{err}");

    let (code, ct, body) = send_pb(&c, reqwest::Method::POST, &cms, BOTH, Some(bytes)).await;
    assert_eq!((code, ct.as_str()), (400, CONTENT_TYPE));
    let status: Status = protobuf::decode_typed(&body, "v1", "Status").unwrap();
    let message = status.message.unwrap_or_default();
    assert!(message.contains("FieldsV1 is not JSON"), "{message}");
    let (code, _, _) = send_pb(
        &c,
        reqwest::Method::GET,
        &format!("{cms}/bad-fields"),
        BOTH,
        None,
    )
    .await;
    assert_eq!(code, 404, "nothing was stored");
}

#[tokio::test]
async fn custom_resources_stay_json() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let u = s.url();
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]
        }
    });
    let (code, _) = post(
        &c,
        &format!("{u}/apis/apiextensions.k8s.io/v1/customresourcedefinitions"),
        &crd,
    )
    .await;
    assert_eq!(code, 201);
    let widgets = format!("{u}/apis/example.com/v1/namespaces/default/widgets");
    let (code, _) = post(
        &c,
        &widgets,
        &json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}),
    )
    .await;
    assert_eq!(code, 201);
    // A protobuf body for a custom resource: 415.
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("x".into());
    let (code, _, _) = send_pb(
        &c,
        reqwest::Method::POST,
        &widgets,
        BOTH,
        Some(protobuf::encode_object(&cm)),
    )
    .await;
    assert_eq!(code, 415);
    // Protobuf preferred, JSON acceptable: JSON.
    let (code, ct, _) = send_pb(
        &c,
        reqwest::Method::GET,
        &format!("{widgets}/w"),
        BOTH,
        None,
    )
    .await;
    assert_eq!((code, ct.as_str()), (200, "application/json"));
    // Only protobuf: 406.
    let (code, _, _) = send_pb(
        &c,
        reqwest::Method::GET,
        &format!("{widgets}/w"),
        CONTENT_TYPE,
        None,
    )
    .await;
    assert_eq!(code, 406);
}
