//! The typed `Api`: get, list, create, patch (merge and server-side
//! apply), delete, watch and `entry`, on k8s-openapi's models written as
//! struct literals.

use std::collections::BTreeMap;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Container, Pod, PodSpec};
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointSlice};
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;
use kube::api::{
    Api, DeleteParams, ListParams, ObjectList, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use serde_json::json;

use crate::support::{BoxError, server, within};

fn config_map(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(BTreeMap::from([("app".to_owned(), "porting".to_owned())])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("key".to_owned(), value.to_owned())])),
        ..ConfigMap::default()
    }
}

#[tokio::test]
async fn crud_and_list_iteration() -> Result<(), BoxError> {
    let (_server, client) = server().await?;
    let cms: Api<ConfigMap> = Api::default_namespaced(client);

    let created = cms
        .create(&PostParams::default(), &config_map("one", "1"))
        .await?;
    assert_eq!(created.name_any(), "one");
    assert!(created.resource_version().is_some());
    cms.create(&PostParams::default(), &config_map("two", "2"))
        .await?;

    let got = cms.get("one").await?;
    assert_eq!(
        got.data
            .as_ref()
            .and_then(|d| d.get("key"))
            .map(String::as_str),
        Some("1")
    );
    assert!(cms.get_opt("missing").await?.is_none());

    let mut names = Vec::new();
    let list: ObjectList<ConfigMap> = cms
        .list(&ListParams::default().labels("app=porting"))
        .await?;
    for cm in list {
        names.push(cm.name_any());
    }
    names.sort();
    assert_eq!(names, ["one", "two"]);

    let patch = json!({"data": {"key": "merged"}});
    let patched = cms
        .patch("one", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    assert_eq!(patched.data.unwrap()["key"], "merged");

    cms.delete("two", &DeleteParams::default()).await?;
    assert!(cms.get_opt("two").await?.is_none());
    Ok(())
}

#[tokio::test]
async fn server_side_apply_with_a_field_manager() -> Result<(), BoxError> {
    let (_server, client) = server().await?;
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let pod = Pod {
        metadata: ObjectMeta {
            name: Some("web".to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "main".to_owned(),
                image: Some("nginx:1.27".to_owned()),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    };
    let params = PatchParams::apply("porting-test").force();
    let applied = pods.patch("web", &params, &Patch::Apply(&pod)).await?;
    let managers: Vec<String> = applied
        .managed_fields()
        .iter()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert!(
        managers.contains(&"porting-test".to_owned()),
        "{managers:?}"
    );
    let image = applied.spec.unwrap().containers[0].image.clone();
    assert_eq!(image.as_deref(), Some("nginx:1.27"));
    Ok(())
}

#[tokio::test]
async fn watch_sees_added_modified_deleted() -> Result<(), BoxError> {
    let (_server, client) = server().await?;
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    let list = cms.list(&ListParams::default()).await?;
    let rv = list.metadata.resource_version.clone().unwrap_or_default();
    let mut stream = cms
        .watch(&WatchParams::default().timeout(30), &rv)
        .await?
        .boxed();

    cms.create(&PostParams::default(), &config_map("watched", "a"))
        .await?;
    let patch = json!({"data": {"key": "b"}});
    cms.patch("watched", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    cms.delete("watched", &DeleteParams::default()).await?;

    let mut seen = Vec::new();
    while seen.len() < 3 {
        let event = within("the watch's next event", stream.try_next()).await??;
        match event {
            Some(WatchEvent::Added(cm)) => seen.push(format!("added {}", cm.name_any())),
            Some(WatchEvent::Modified(cm)) => seen.push(format!("modified {}", cm.name_any())),
            Some(WatchEvent::Deleted(cm)) => seen.push(format!("deleted {}", cm.name_any())),
            Some(WatchEvent::Bookmark(_)) => {}
            Some(WatchEvent::Error(e)) => return Err(format!("watch error: {e:?}").into()),
            None => return Err("the watch ended early".into()),
        }
    }
    assert_eq!(
        seen,
        ["added watched", "modified watched", "deleted watched"]
    );
    Ok(())
}

#[tokio::test]
async fn entry_gets_or_creates_and_modifies() -> Result<(), BoxError> {
    let (_server, client) = server().await?;
    let cms: Api<ConfigMap> = Api::default_namespaced(client);

    let mut entry = cms
        .entry("settings")
        .await?
        .or_insert(|| config_map("settings", "first"));
    entry.commit(&PostParams::default()).await?;
    assert_eq!(cms.get("settings").await?.data.unwrap()["key"], "first");

    let mut entry = cms.entry("settings").await?.and_modify(|cm| {
        cm.data
            .get_or_insert_with(BTreeMap::new)
            .insert("key".to_owned(), "second".to_owned());
    });
    if let kube::api::entry::Entry::Occupied(occupied) = &mut entry {
        occupied.commit(&PostParams::default()).await?;
    } else {
        return Err("the entry was not found".into());
    }
    assert_eq!(cms.get("settings").await?.data.unwrap()["key"], "second");
    Ok(())
}

/// Fields k8s-openapi's `v1_35` models have as plain values because
/// Kubernetes 1.35 requires them (v1.36 no longer does: `Option` under
/// `v1_36`), written as struct literals and read back.
#[tokio::test]
async fn fields_the_version_requires_are_plain_values() -> Result<(), BoxError> {
    let (_server, client) = server().await?;
    let meta = |name: &str| ObjectMeta {
        name: Some(name.to_owned()),
        ..ObjectMeta::default()
    };
    let roles: Api<Role> = Api::namespaced(client.clone(), "default");
    let role = Role {
        metadata: meta("reader"),
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec![String::new()]),
            resources: Some(vec!["configmaps".to_owned()]),
            verbs: vec!["get".to_owned()],
            ..PolicyRule::default()
        }]),
    };
    roles.create(&PostParams::default(), &role).await?;
    let bindings: Api<RoleBinding> = Api::namespaced(client.clone(), "default");
    let binding = RoleBinding {
        metadata: meta("reader"),
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".to_owned(),
            kind: "Role".to_owned(),
            name: "reader".to_owned(),
        },
        subjects: None,
    };
    let created = bindings.create(&PostParams::default(), &binding).await?;
    let api_group: String = created.role_ref.api_group;
    assert_eq!(api_group, "rbac.authorization.k8s.io");

    let slices: Api<EndpointSlice> = Api::namespaced(client, "default");
    let slice = EndpointSlice {
        metadata: meta("web-1"),
        address_type: "IPv4".to_owned(),
        endpoints: vec![Endpoint {
            addresses: vec!["10.0.0.7".to_owned()],
            ..Endpoint::default()
        }],
        ports: None,
    };
    let created = slices.create(&PostParams::default(), &slice).await?;
    let endpoints: Vec<Endpoint> = created.endpoints;
    assert_eq!(endpoints.len(), 1);
    assert_eq!(endpoints[0].addresses, ["10.0.0.7"]);
    Ok(())
}
