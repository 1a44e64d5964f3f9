//! `Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`
//! (and `as=PartialObjectMetadataList`) answered as kube-apiserver answers
//! it, written once and run against both servers: the embedded one by
//! `crates/kubeset/tests/partial_metadata.rs`, a real kube-apiserver by
//! `tests/tests/suite/partial_metadata.rs`. The includer names the client
//! crate `k` and hands each scenario a client and a namespace.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use http::HeaderValue;
use http::header::ACCEPT;
use serde_json::{Value, json};

use super::k;
use k::api::core::v1::ConfigMap;
use k::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k::params::{ListParams, PostParams, WatchParams};
use k::{Api, Client, WatchEvent};

const OBJECT: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

/// Generous bound for a busy machine; every wait is bounded by it.
const DEADLINE: Duration = Duration::from_secs(60);

/// A raw request's status and body as JSON.
async fn raw(client: &Client, ns: &str, name: Option<&str>, accept: &str) -> (u16, Value) {
    let mut req = client.rest().get().namespace(ns).resource("configmaps");
    if let Some(name) = name {
        req = req.name(name);
    } else {
        req = req.param("limit", "10");
    }
    let resp = req
        .header(
            ACCEPT,
            HeaderValue::from_str(accept).expect("an Accept value"),
        )
        .send_raw()
        .await
        .expect("the request is answered");
    let body = serde_json::from_slice(&resp.body).expect("a JSON answer");
    (resp.status.as_u16(), body)
}

async fn create(client: &Client, ns: &str, name: &str) {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(BTreeMap::from([("app".to_owned(), "pom".to_owned())])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("key".to_owned(), "value".to_owned())])),
        ..ConfigMap::default()
    };
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("the ConfigMap is created");
}

/// The keys of a JSON object, sorted.
fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    k.sort_unstable();
    k
}

/// GET and LIST as metadata: the kinds, the metadata kept, nothing else.
pub async fn get_and_list(client: Client, ns: &str) {
    create(&client, ns, "a").await;

    let (code, obj) = raw(&client, ns, Some("a"), OBJECT).await;
    assert_eq!(code, 200, "{obj}");
    assert_eq!(keys(&obj), ["apiVersion", "kind", "metadata"], "{obj}");
    assert_eq!(obj["kind"], "PartialObjectMetadata");
    assert_eq!(obj["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(obj["metadata"]["name"], "a");
    assert_eq!(obj["metadata"]["labels"], json!({"app": "pom"}));
    assert!(obj["metadata"]["resourceVersion"].is_string(), "{obj}");

    let (code, list) = raw(&client, ns, None, LIST).await;
    assert_eq!(code, 200, "{list}");
    assert_eq!(list["kind"], "PartialObjectMetadataList");
    assert_eq!(list["apiVersion"], "meta.k8s.io/v1");
    assert!(list["metadata"]["resourceVersion"].is_string(), "{list}");
    let items = list["items"].as_array().expect("items");
    assert_eq!(items.len(), 1, "{list}");
    assert_eq!(keys(&items[0]), ["apiVersion", "kind", "metadata"]);
    assert_eq!(items[0]["kind"], "PartialObjectMetadata");
    assert_eq!(items[0]["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(items[0]["metadata"]["name"], "a");

    let beta = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1";
    let (code, obj) = raw(&client, ns, Some("a"), beta).await;
    assert_eq!(
        (code, &obj["apiVersion"]),
        (200, &json!("meta.k8s.io/v1beta1"))
    );

    // kube-rs's typed calls read the same answers.
    let cms: Api<ConfigMap> = Api::namespaced(client, ns);
    let meta = cms.get_metadata("a").await.expect("get_metadata");
    let types = meta.types.expect("the answer's type");
    assert_eq!(
        (types.api_version.as_str(), types.kind.as_str()),
        ("meta.k8s.io/v1", "PartialObjectMetadata")
    );
    let listed = cms
        .list_metadata(&ListParams::default())
        .await
        .expect("list_metadata");
    assert_eq!(listed.items.len(), 1);
    assert_eq!(listed.items[0].metadata.name.as_deref(), Some("a"));
}

/// What is refused with 406, and what is not.
pub async fn refusals(client: Client, ns: &str) {
    create(&client, ns, "a").await;
    let not_acceptable = |(code, v): (u16, Value)| {
        assert_eq!(code, 406, "{v}");
        assert_eq!(v["kind"], "Status", "{v}");
        assert_eq!(v["reason"], "NotAcceptable", "{v}");
        assert_eq!(v["code"], 406, "{v}");
        v["message"].as_str().unwrap_or_default().to_owned()
    };
    // The wrong one of the two for the answer.
    let m = not_acceptable(raw(&client, ns, None, OBJECT).await);
    assert!(
        m.starts_with("you requested PartialObjectMetadata, but the requested object is a list"),
        "{m}"
    );
    let m = not_acceptable(raw(&client, ns, Some("a"), LIST).await);
    assert!(
        m.starts_with(
            "you requested PartialObjectMetadataList, but the requested object is not a list"
        ),
        "{m}"
    );
    // An `as=` not served, alone; in another group.
    let m = not_acceptable(
        raw(
            &client,
            ns,
            Some("a"),
            "application/json;as=Foo;g=meta.k8s.io;v=v1",
        )
        .await,
    );
    assert!(
        m.starts_with("only the following media types are accepted: "),
        "{m}"
    );
    not_acceptable(
        raw(
            &client,
            ns,
            Some("a"),
            "application/json;as=PartialObjectMetadata;g=apps;v=v1",
        )
        .await,
    );

    // Not served, with a plain JSON fallback: the whole object.
    let (code, obj) = raw(
        &client,
        ns,
        Some("a"),
        "application/json;as=Foo;g=meta.k8s.io;v=v1, application/json",
    )
    .await;
    assert_eq!((code, &obj["kind"]), (200, &json!("ConfigMap")));
    assert_eq!(obj["data"]["key"], "value");
    // An error stays the server's Status.
    let (code, st) = raw(&client, ns, Some("missing"), OBJECT).await;
    assert_eq!(
        (code, &st["kind"], &st["reason"]),
        (404, &json!("Status"), &json!("NotFound"))
    );
}

/// A watch asked for metadata: its events carry `PartialObjectMetadata`.
pub async fn watch(client: Client, ns: &str) {
    create(&client, ns, "a").await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let rv = cms
        .list_metadata(&ListParams::default())
        .await
        .expect("list_metadata")
        .metadata
        .resource_version
        .expect("the list's resourceVersion");
    let mut events = cms
        .watch_metadata(&WatchParams::default().timeout(30), &rv)
        .await
        .expect("watch_metadata")
        .boxed();
    create(&client, ns, "b").await;
    let event = tokio::time::timeout(DEADLINE, events.next())
        .await
        .expect("an event within the deadline")
        .expect("the stream is open")
        .expect("a decoded event");
    let WatchEvent::Added(meta) = event else {
        panic!("expected ADDED of b, got {event:?}");
    };
    assert_eq!(meta.metadata.name.as_deref(), Some("b"));
    let types = meta.types.expect("the event object's type");
    assert_eq!(
        (types.api_version.as_str(), types.kind.as_str()),
        ("meta.k8s.io/v1", "PartialObjectMetadata")
    );
}
