//! kube-rs idioms that kubeset lacked until the controller-rs port
//! (issue #32): `meta_mut()` with only `Resource` imported (controller-rs's
//! fixtures), `Store::wait_until_ready().await?`, `Discovery`'s groups
//! (`groups`, `get`, `resolve_gvk`, `ApiGroup`'s versions and recommended
//! resources, a subresource's kind, `run_aggregated`, `resolve_typemeta`,
//! `resolve_object`), and `get_scale`/`patch_scale`/`replace_scale` on a custom
//! kind with a `scale` subresource.

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams, TypeMeta};
use kube::discovery::Scope;
use kube::runtime::wait::{await_condition, conditions};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{CustomResourceExt, Discovery, Resource};
use serde_json::json;

use crate::crd::{Database, DatabaseSpec};
use crate::support::{BoxError, server, within};

/// A ConfigMap built as controller-rs's fixtures build a Document: the
/// metadata reached through `Resource::meta_mut` (only `Resource` in
/// scope, no `ResourceExt`).
fn fixture(name: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.meta_mut().name = Some(name.to_owned());
    cm.meta_mut().namespace = Some("default".to_owned());
    cm
}

#[tokio::test]
async fn store_wait_until_ready_is_a_result() -> Result<(), BoxError> {
    let (_server, client) = server().await?;
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    cms.create(&PostParams::default(), &fixture("ready"))
        .await?;

    let (reader, writer) = reflector::store();
    let stream = reflector(writer, watcher(cms, watcher::Config::default()))
        .default_backoff()
        .applied_objects();
    let drain = tokio::spawn(stream.for_each(|_| futures::future::ready(())));
    within("the store's first state", reader.wait_until_ready()).await??;
    assert_eq!(reader.state().len(), 1);
    drain.abort();

    // A store whose writer is gone before it was ready never will be.
    let (never, writer) = reflector::store::<ConfigMap>();
    drop(writer);
    let dropped: Result<(), kube::runtime::reflector::store::WriterDropped> =
        never.wait_until_ready().await;
    assert!(dropped.is_err());
    Ok(())
}

#[tokio::test]
async fn discovery_by_group() -> Result<(), BoxError> {
    let (_server, client) = server().await?;
    let discovery = Discovery::new(client).run().await?;

    let names: Vec<&str> = discovery.groups().map(|g| g.name()).collect();
    assert!(names.contains(&"") && names.contains(&"apps"), "{names:?}");
    let apps = discovery.get("apps").ok_or("no apps group")?;
    assert_eq!(apps.name(), "apps");
    assert_eq!(apps.preferred_version(), Some("v1"));
    assert!(apps.versions().any(|v| v == "v1"));
    let (deployments, caps) = apps
        .recommended_kind("Deployment")
        .ok_or("no Deployment in apps")?;
    assert_eq!(deployments.plural, "deployments");
    assert_eq!(caps.scope, Scope::Namespaced);
    assert!(caps.supports_operation("watch"));
    // A subresource's `ApiResource` carries the kind it answers with.
    let sub_kind = |name: &str| {
        caps.subresources
            .iter()
            .find(|(sub, _)| sub.plural.ends_with(name))
            .map(|(sub, _)| sub.kind.clone())
    };
    assert_eq!(sub_kind("scale").as_deref(), Some("Scale"));
    assert_eq!(sub_kind("status").as_deref(), Some("Deployment"));
    assert!(
        apps.recommended_resources()
            .iter()
            .any(|(ar, _)| ar.kind == "StatefulSet")
    );

    let gvk = GroupVersionKind::gvk("", "v1", "Namespace");
    let (namespaces, caps) = discovery.resolve_gvk(&gvk).ok_or("no v1 Namespace")?;
    assert_eq!(namespaces.plural, "namespaces");
    assert_eq!(caps.scope, Scope::Cluster);
    assert!(discovery.get("no.such.group").is_none());
    Ok(())
}

#[tokio::test]
async fn discovery_resolves_types_and_objects() -> Result<(), BoxError> {
    let (_server, client) = server().await?;
    let discovery = Discovery::new(client).run_aggregated().await?;

    let tm = TypeMeta {
        api_version: "apps/v1".to_owned(),
        kind: "Deployment".to_owned(),
    };
    let (deployments, caps) = discovery
        .resolve_typemeta(&tm)
        .ok_or("apps/v1 Deployment")?;
    assert_eq!(deployments.plural, "deployments");
    assert_eq!(caps.scope, Scope::Namespaced);
    let core = TypeMeta {
        api_version: "v1".to_owned(),
        kind: "Namespace".to_owned(),
    };
    let (namespaces, _) = discovery.resolve_typemeta(&core).ok_or("v1 Namespace")?;
    assert_eq!(namespaces.plural, "namespaces");
    let unknown = TypeMeta {
        api_version: "apps/v1".to_owned(),
        kind: "NoSuchKind".to_owned(),
    };
    assert!(discovery.resolve_typemeta(&unknown).is_none());

    // An object met at run time (an admission request, a watch of
    // something else): its own type fields name its resource.
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x", "namespace": "default"},
    }))?;
    let (cms, caps) = discovery.resolve_object(&obj).ok_or("v1 ConfigMap")?;
    assert_eq!(
        (cms.plural.as_str(), caps.scope),
        ("configmaps", Scope::Namespaced)
    );
    let untyped: DynamicObject = serde_json::from_value(json!({"metadata": {"name": "x"}}))?;
    assert!(discovery.resolve_object(&untyped).is_none());
    Ok(())
}

#[tokio::test]
async fn scale_of_a_custom_kind() -> Result<(), BoxError> {
    let (_server, client) = server().await?;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Database::crd())
        .await?;
    let established = await_condition(
        crds,
        "databases.porting.example.com",
        conditions::is_crd_established(),
    );
    within("the CRD's Established condition", established).await??;

    let dbs: Api<Database> = Api::namespaced(client, "default");
    let spec = DatabaseSpec {
        engine: "postgres".to_owned(),
        replicas: 2,
    };
    dbs.create(&PostParams::default(), &Database::new("scaled", spec))
        .await?;

    let scale = dbs.get_scale("scaled").await?;
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(2));

    let patch = Patch::Merge(json!({"spec": {"replicas": 3}}));
    let scale = dbs
        .patch_scale("scaled", &PatchParams::default(), &patch)
        .await?;
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(3));
    assert_eq!(dbs.get("scaled").await?.spec.replicas, 3);

    let mut scale = dbs.get_scale("scaled").await?;
    if let Some(spec) = scale.spec.as_mut() {
        spec.replicas = Some(5);
    }
    let replaced = dbs
        .replace_scale("scaled", &PostParams::default(), &scale)
        .await?;
    assert_eq!(replaced.spec.as_ref().and_then(|s| s.replicas), Some(5));
    assert_eq!(dbs.get("scaled").await?.spec.replicas, 5);
    Ok(())
}
