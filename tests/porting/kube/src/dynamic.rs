//! The dynamic `Api` over `DynamicObject`s addressed by an `ApiResource`,
//! and `Discovery`.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Discovery;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, PostParams};
use serde_json::json;

use crate::support::{BoxError, server};

#[tokio::test]
async fn dynamic_objects_round_trip_and_parse() -> Result<(), BoxError> {
    let (_server, client) = server().await?;
    let resource = ApiResource::erase::<ConfigMap>(&());
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &resource);

    let obj = DynamicObject::new("dyn", &resource).data(json!({"data": {"key": "value"}}));
    let created = api.create(&PostParams::default(), &obj).await?;
    // kube-rs's DynamicObject is a Resource (ResourceExt::name_any);
    // kubeset's has an inherent `name_any`: the field reads the same in both.
    assert_eq!(created.metadata.name.as_deref(), Some("dyn"));
    assert_eq!(created.data["data"]["key"], "value");

    let names: Vec<String> = api
        .list(&ListParams::default())
        .await?
        .into_iter()
        .filter_map(|o| o.metadata.name)
        .collect();
    assert!(names.contains(&"dyn".to_owned()), "{names:?}");

    let all: Api<DynamicObject> = Api::all_with(client, &resource);
    assert!(!all.list(&ListParams::default()).await?.items.is_empty());

    let typed: ConfigMap = api.get("dyn").await?.try_parse()?;
    assert_eq!(typed.data.unwrap()["key"], "value");
    Ok(())
}

#[tokio::test]
async fn discovery_finds_the_groups() -> Result<(), BoxError> {
    let (_server, client) = server().await?;
    let discovery = Discovery::new(client).run().await?;
    assert!(discovery.has_group("apps"));
    assert!(discovery.has_group(""));
    assert!(!discovery.has_group("no.such.group"));
    Ok(())
}
