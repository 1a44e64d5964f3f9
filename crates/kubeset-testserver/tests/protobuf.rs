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

/// A pod with many fields set: labels and annotations, an owner
/// reference and finalizers, containers with int-or-string ports,
/// quantities, env from fields, probes, a security context, volumes,
/// affinity, tolerations and a deadline.
fn busy_pod(name: &str) -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"app": "busy", "tier": "web", "n": name},
            "annotations": {"note": "\u{e9}t\u{e9} \"quoted\"\n", "empty": ""},
            "finalizers": ["example.com/keep"],
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                "uid": "0d1ba2e4-2b1d-4b7c-9d0e-3c5f6a7b8c9d", "controller": true,
                "blockOwnerDeletion": true}],
        },
        "spec": {
            "nodeName": "node-1",
            "activeDeadlineSeconds": 2_147_483_647,
            "terminationGracePeriodSeconds": 0,
            "containers": [{
                "name": "app", "image": "example.com/app:1.2.3",
                "args": ["--a=1", ""],
                "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                        {"name": "X", "value": "1"}],
                "resources": {"limits": {"cpu": "1500m", "memory": "1Gi"},
                              "requests": {"cpu": "0.25", "memory": "128974848"}},
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"},
                                  "periodSeconds": 3},
                "readinessProbe": {"tcpSocket": {"port": 8080}},
                "securityContext": {"runAsNonRoot": true, "runAsUser": 1000,
                                    "capabilities": {"drop": ["ALL"]}},
                "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": true}],
            }],
            "volumes": [{"name": "data", "emptyDir": {"sizeLimit": "1Gi"}},
                        {"name": "cfg", "configMap": {"name": "cfg", "defaultMode": 420}}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}}},
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 30}],
        },
    })
}

/// One frame of a protobuf watch: the event's type and its object's
/// `k8s\0` + envelope bytes (`WatchEvent`: `type` = 1, `object` = 2,
/// a `RawExtension` whose `raw` = 1).
fn frame_event(frame: &[u8]) -> (String, Vec<u8>) {
    fn record<'a>(b: &'a [u8], at: &mut usize, want: u8) -> &'a [u8] {
        assert_eq!(b[*at], want, "field key");
        *at += 1;
        let (mut len, mut shift) = (0usize, 0);
        loop {
            let byte = b[*at];
            *at += 1;
            len |= usize::from(byte & 0x7f) << shift;
            shift += 7;
            if byte < 0x80 {
                break;
            }
        }
        *at += len;
        &b[*at - len..*at]
    }
    let mut at = 0;
    let event_type = String::from_utf8(record(frame, &mut at, 0x0a).to_vec()).unwrap();
    let raw_ext = record(frame, &mut at, 0x12);
    let object = record(raw_ext, &mut 0, 0x0a).to_vec();
    (event_type, object)
}

/// Reads `n` frames of a protobuf watch.
async fn frames(c: &reqwest::Client, url: &str, n: usize) -> Vec<(String, Vec<u8>)> {
    let mut resp = c.get(url).header("Accept", BOTH).send().await.unwrap();
    assert_eq!(
        resp.headers()["content-type"],
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    let (mut buf, mut out) = (Vec::new(), Vec::new());
    while out.len() < n {
        if buf.len() >= 4 {
            let len = u32::from_be_bytes(buf[..4].try_into().unwrap()) as usize;
            if buf.len() >= 4 + len {
                out.push(frame_event(&buf[4..4 + len]));
                buf.drain(..4 + len);
                continue;
            }
        }
        let chunk = tokio::time::timeout(TIMEOUT, resp.chunk()).await.unwrap();
        buf.extend_from_slice(&chunk.unwrap().expect("the watch goes on"));
    }
    out
}

/// A list's metadata with whether it has a `continue` token in place of
/// the token (each answer has its own).
fn place(meta: &serde_json::Value) -> serde_json::Value {
    let mut meta = meta.clone();
    let cont = meta["continue"].as_str().is_some_and(|c| !c.is_empty());
    meta["continue"] = json!(cont);
    meta
}

/// Protobuf lists and watch events are written from each object's stored
/// text, not from a parsed answer: they decode, with kubeset-api's codec,
/// to exactly the objects the JSON answer holds (a pod with many fields
/// set), with the list's metadata (resourceVersion, continue,
/// remainingItemCount); an `as=PartialObjectMetadataList` answer, written
/// from each item's metadata, holds exactly the whole list's metadata.
#[tokio::test]
async fn protobuf_and_metadata_answers_hold_the_json_answers_objects() {
    use kubeset_api::api::core::v1::Pod;
    let s = TestServer::start().await.unwrap();
    let c = client();
    let pods = format!("{}/api/v1/namespaces/default/pods", s.url());
    let (_, before) = get(&c, &pods).await;
    for name in ["busy-a", "busy-b", "busy-c"] {
        let (code, body) = post(&c, &pods, &busy_pod(name)).await;
        assert_eq!(code, 201, "{body}");
    }
    let as_pods = |items: &serde_json::Value| -> Vec<Pod> {
        serde_json::from_value(items.clone()).expect("the JSON items are pods")
    };

    // A page of a list, then the rest: list metadata and items alike.
    for query in ["?limit=2", ""] {
        let (code, json_list) = get(&c, &format!("{pods}{query}")).await;
        assert_eq!(code, 200);
        let (code, ct, body) = send_pb(
            &c,
            reqwest::Method::GET,
            &format!("{pods}{query}"),
            BOTH,
            None,
        )
        .await;
        assert_eq!((code, ct.as_str()), (200, CONTENT_TYPE));
        let list = protobuf::dynamic::typed::<Pod>()
            .unwrap()
            .decode_list(&body)
            .unwrap();
        assert_eq!(list.items, as_pods(&json_list["items"]), "{query}");
        assert!(list.items[0].spec.as_ref().unwrap().affinity.is_some());
        let meta = serde_json::to_value(&list.metadata).unwrap();
        assert_eq!(place(&meta), place(&json_list["metadata"]), "{query}");
        if let Some(token) = list.metadata.continue_.as_deref() {
            // The token (each answer's own) continues where the JSON's does.
            let (_, rest) = get(&c, &format!("{pods}?continue={token}")).await;
            assert_eq!(as_pods(&rest["items"]).len(), 1);
            assert_eq!(rest["items"][0]["metadata"]["name"], "busy-c");
        }
        assert_eq!(
            protobuf::dynamic::to_json(&body).unwrap()["kind"],
            "PodList"
        );
    }
    let (_, json_list) = get(&c, &pods).await;
    let whole = as_pods(&json_list["items"]);

    // Watches: the history's events, then the initial state's.
    let from = format!("{pods}?watch=true&resourceVersion={}", rv(&before));
    let initial = format!("{pods}?watch=true");
    for url in [from, initial] {
        let got = frames(&c, &url, 3).await;
        let objects: Vec<Pod> = got
            .iter()
            .map(|(t, o)| {
                assert_eq!(t, "ADDED");
                protobuf::decode_object(o).unwrap()
            })
            .collect();
        assert_eq!(objects, whole, "{url}");
        let mut lines = Lines::open(&c, &url).await;
        for pod in &whole {
            let e = lines.next().await.unwrap();
            let obj: Pod = serde_json::from_value(e["object"].clone()).unwrap();
            assert_eq!(&obj, pod);
        }
    }

    // Metadata only, a page and the whole list, and a watch.
    const POM: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    for query in ["?limit=2", ""] {
        let (_, json_list) = get(&c, &format!("{pods}{query}")).await;
        let (code, ct, body) = send_pb(
            &c,
            reqwest::Method::GET,
            &format!("{pods}{query}"),
            POM,
            None,
        )
        .await;
        assert_eq!((code, ct.as_str()), (200, "application/json"));
        let partial: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(partial["kind"], "PartialObjectMetadataList");
        assert_eq!(partial["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(place(&partial["metadata"]), place(&json_list["metadata"]));
        let items = partial["items"].as_array().unwrap();
        assert_eq!(items.len(), json_list["items"].as_array().unwrap().len());
        for (p, whole) in items.iter().zip(json_list["items"].as_array().unwrap()) {
            assert_eq!(p["kind"], "PartialObjectMetadata");
            assert_eq!(p["metadata"], whole["metadata"]);
            assert_eq!(p.as_object().unwrap().len(), 3, "{p}");
        }
    }
    let mut resp = c
        .get(format!("{pods}?watch=true"))
        .header("Accept", POM.replace("List", ""))
        .send()
        .await
        .unwrap();
    let mut buf = Vec::new();
    for whole in json_list["items"].as_array().unwrap() {
        while !buf.contains(&b'\n') {
            let chunk = tokio::time::timeout(TIMEOUT, resp.chunk()).await.unwrap();
            buf.extend_from_slice(&chunk.unwrap().expect("the watch goes on"));
        }
        let line: Vec<u8> = buf
            .drain(..=buf.iter().position(|b| *b == b'\n').unwrap())
            .collect();
        let e: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(e["type"], "ADDED");
        assert_eq!(e["object"]["kind"], "PartialObjectMetadata");
        assert_eq!(e["object"]["metadata"], whole["metadata"]);
    }
}
