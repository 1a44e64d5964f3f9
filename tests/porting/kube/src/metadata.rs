//! Metadata-only reads: `Api::get_metadata`, `list_metadata` and
//! `watch_metadata` into kube-rs's `PartialObjectMeta<K>` (its `types`
//! and `metadata` fields).

use std::collections::BTreeMap;

use futures::TryStreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{
    Api, ListParams, PartialObjectMeta, PartialObjectMetaExt, Patch, PatchParams, PostParams,
    WatchEvent, WatchParams,
};

use crate::support::{BoxError, server, within};

fn labelled(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(BTreeMap::from([("tier".to_owned(), "meta".to_owned())])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("big".to_owned(), "x".repeat(1024))])),
        ..ConfigMap::default()
    }
}

#[tokio::test]
async fn get_list_and_watch_metadata_only() -> Result<(), BoxError> {
    let (_server, client) = server().await?;
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    cms.create(&PostParams::default(), &labelled("one")).await?;

    let one: PartialObjectMeta<ConfigMap> = cms.get_metadata("one").await?;
    assert_eq!(one.metadata.name.as_deref(), Some("one"));
    // kube-apiserver answers `meta.k8s.io/v1` `PartialObjectMetadata`; the
    // embedded server ignores the `as=` of the Accept header and sends the
    // whole ConfigMap, whose other fields the decoding skips.
    let types = one.types.ok_or("the answer has no apiVersion/kind")?;
    assert!(!types.kind.is_empty() && !types.api_version.is_empty());
    assert!(one.metadata.labels.is_some_and(|l| l["tier"] == "meta"));

    let listed = cms
        .list_metadata(&ListParams::default().labels("tier=meta"))
        .await?;
    let names: Vec<String> = listed
        .items
        .iter()
        .filter_map(|m| m.metadata.name.clone())
        .collect();
    assert_eq!(names, ["one"]);
    let version = listed
        .metadata
        .resource_version
        .clone()
        .ok_or("the list has no resourceVersion")?;

    let events = cms
        .watch_metadata(&WatchParams::default().timeout(30), &version)
        .await?;
    let mut events = Box::pin(events);
    cms.create(&PostParams::default(), &labelled("two")).await?;
    let added = within("the ADDED event of two", async {
        while let Some(ev) = events.try_next().await? {
            if let WatchEvent::Added(meta) = ev {
                return Ok::<_, BoxError>(meta);
            }
        }
        Err("the watch ended".into())
    })
    .await??;
    assert_eq!(added.metadata.name.as_deref(), Some("two"));

    // A label applied server-side through the metadata alone.
    let labels = ObjectMeta {
        labels: Some(BTreeMap::from([("owner".to_owned(), "porting".to_owned())])),
        ..ObjectMeta::default()
    }
    .into_request_partial::<ConfigMap>();
    let patched = cms
        .patch_metadata(
            "two",
            &PatchParams::apply("porting-meta"),
            &Patch::Apply(&labels),
        )
        .await?;
    assert_eq!(
        patched
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("owner"))
            .map(String::as_str),
        Some("porting")
    );
    let stored = cms.get("two").await?;
    assert!(
        stored.data.is_some_and(|d| d.contains_key("big")),
        "the data stays"
    );
    Ok(())
}
