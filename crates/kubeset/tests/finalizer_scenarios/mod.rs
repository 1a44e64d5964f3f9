//! The last finalizer removed from an object being deleted, as a watcher
//! sees it, written once and run against both servers: the embedded one
//! by `crates/kubeset/tests/finalizer_events.rs`, a real kube-apiserver by
//! `tests/tests/suite/finalizer_events.rs`. The includer names the client
//! crate `k`. Found by the echo operator's port (issue 32): an extra
//! MODIFIED event made it reconcile a deleted object once more.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;

use super::k;
use k::api::core::v1::ConfigMap;
use k::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k::params::{DeleteParams, PatchParams, PostParams, WatchParams};
use k::{Api, Client, Patch, WatchEvent};

/// Generous bound for a busy machine; every wait is bounded by it.
const DEADLINE: Duration = Duration::from_secs(60);

/// kube-apiserver does not store the update that empties the finalizers:
/// the object is deleted, watchers get one DELETED event carrying the
/// stored state (the finalizer still there) and no MODIFIED, and the
/// update is answered with the object as written at the stored
/// resourceVersion.
pub async fn last_finalizer_removed(client: Client, ns: &str) {
    let cms: Api<ConfigMap> = Api::namespaced(client, ns);
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some("held".to_owned()),
            finalizers: Some(vec!["example.com/hold".to_owned()]),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("k".to_owned(), "v".to_owned())])),
        ..ConfigMap::default()
    };
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create");
    cms.delete("held", &DeleteParams::default())
        .await
        .expect("delete (held by the finalizer)");
    let marked = cms.get("held").await.expect("the object is still there");
    assert!(marked.metadata.deletion_timestamp.is_some());
    let stored_rv = marked.metadata.resource_version.clone().expect("an rv");

    let wp = WatchParams::default()
        .fields("metadata.name=held")
        .timeout(30);
    let mut events = cms.watch(&wp, &stored_rv).await.expect("watch").boxed();
    let patch = serde_json::json!({"metadata": {"finalizers": null}});
    let answer = cms
        .patch("held", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("the finalizer removed");
    assert_eq!(answer.metadata.finalizers, None);
    assert!(answer.metadata.deletion_timestamp.is_some());
    assert_eq!(
        answer.metadata.resource_version.as_deref(),
        Some(stored_rv.as_str())
    );

    let event = tokio::time::timeout(DEADLINE, events.next())
        .await
        .expect("an event within the deadline")
        .expect("the stream is open")
        .expect("a decoded event");
    let WatchEvent::Deleted(last) = event else {
        panic!("expected DELETED first (no MODIFIED), got {event:?}");
    };
    assert_eq!(
        last.metadata.finalizers,
        Some(vec!["example.com/hold".to_owned()]),
        "the DELETED event carries the stored state"
    );
    assert_ne!(last.metadata.resource_version, Some(stored_rv));
    assert!(cms.get_opt("held").await.expect("get_opt").is_none());
}
