//! Pagination, label and field selectors.

use std::collections::BTreeSet;

use futures::TryStreamExt as _;
use kubeset::Api;
use kubeset::api::core::v1::{ConfigMap, Pod};
use kubeset::params::{ListParams, PostParams};
use serde_json::json;

use crate::common::{connect, ok, typed};

fn names<'a>(items: impl IntoIterator<Item = &'a ConfigMap>) -> BTreeSet<String> {
    items
        .into_iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect()
}

#[tokio::test]
async fn pagination_with_limit_and_continue() {
    let ctx = connect!("paginate");
    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let mut expected = BTreeSet::new();
    for i in 0..7 {
        let name = format!("page-{i}");
        let cm: ConfigMap = typed(json!({"metadata": {"name": name, "labels": {"set": "paged"}}}));
        ok("create", cms.create(&PostParams::default(), &cm).await);
        expected.insert(name);
    }

    // The namespace holds only these seven (no controller adds
    // kube-root-ca.crt), so no selector is needed, and without one the
    // server counts what remains.
    let params = ListParams::default().limit(3);
    let first = ok("page 1", cms.list(&params).await);
    assert_eq!(first.items.len(), 3);
    let token = first.metadata.continue_.clone().expect("a continue token");
    assert_eq!(
        first.metadata.remaining_item_count,
        Some(4),
        "remainingItemCount"
    );
    // With a label selector it cannot know, and says nothing.
    let selected = ok(
        "selected page",
        cms.list(&ListParams::default().labels("set=paged").limit(3))
            .await,
    );
    assert_eq!(selected.items.len(), 3);
    assert_eq!(selected.metadata.remaining_item_count, None);
    let second = ok(
        "page 2",
        cms.list(&params.clone().continue_token(&token)).await,
    );
    assert_eq!(second.items.len(), 3);
    let token = second.metadata.continue_.clone().expect("a continue token");
    let third = ok(
        "page 3",
        cms.list(&params.clone().continue_token(&token)).await,
    );
    assert_eq!(third.items.len(), 1);
    assert!(
        third.metadata.continue_.as_deref().unwrap_or("").is_empty(),
        "the last page has no continue token"
    );
    let mut seen = names(&first.items);
    seen.extend(names(&second.items));
    seen.extend(names(&third.items));
    assert_eq!(seen, expected);
    // Every page is served at the first page's resourceVersion.
    assert_eq!(
        first.metadata.resource_version,
        third.metadata.resource_version
    );

    // The stream follows continue tokens by itself.
    let streamed: Vec<ConfigMap> = ok(
        "paginated stream",
        cms.list_paginated(ListParams::default().labels("set=paged").limit(2))
            .try_collect()
            .await,
    );
    assert_eq!(streamed.len(), 7);
    assert_eq!(names(&streamed), expected);
}

#[tokio::test]
async fn label_and_field_selectors() {
    let ctx = connect!("selectors");
    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    for (name, labels) in [
        ("web-a", json!({"app": "web", "tier": "fe"})),
        (
            "web-b",
            json!({"app": "web", "tier": "be", "canary": "true"}),
        ),
        ("db", json!({"app": "db", "tier": "be"})),
        ("bare", json!({})),
    ] {
        let cm: ConfigMap = typed(json!({"metadata": {"name": name, "labels": labels}}));
        ok("create", cms.create(&PostParams::default(), &cm).await);
    }
    let select = |sel: &'static str| {
        let cms = cms.clone();
        async move { names(&ok(sel, cms.list(&ListParams::default().labels(sel)).await).items) }
    };
    let set = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<BTreeSet<_>>();
    assert_eq!(select("app=web").await, set(&["web-a", "web-b"]));
    assert_eq!(select("app!=web").await, set(&["bare", "db"]));
    assert_eq!(select("tier in (be)").await, set(&["db", "web-b"]));
    assert_eq!(select("tier notin (be)").await, set(&["bare", "web-a"]));
    assert_eq!(select("canary").await, set(&["web-b"]));
    assert_eq!(select("!canary,tier").await, set(&["db", "web-a"]));
    assert_eq!(select("app=web,tier=be").await, set(&["web-b"]));

    let fields = |sel: String| {
        let cms = cms.clone();
        async move { names(&ok(&sel, cms.list(&ListParams::default().fields(&sel)).await).items) }
    };
    assert_eq!(fields("metadata.name=db".into()).await, set(&["db"]));
    assert_eq!(
        fields("metadata.name!=db,metadata.name!=bare".into()).await,
        set(&["web-a", "web-b"])
    );
    assert_eq!(
        fields(format!("metadata.namespace={}", ctx.ns)).await.len(),
        4
    );

    // A field the server cannot select on is a typed 400.
    let err = cms
        .list(&ListParams::default().fields("data.x=1"))
        .await
        .expect_err("unsupported field selector");
    assert!(err.is_bad_request(), "{err}");

    // Pods have more selectable fields (status.phase, spec.nodeName).
    let pods: Api<Pod> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let pod: Pod = typed(json!({
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "registry.invalid/c:1"}]}
    }));
    ok(
        "create pod",
        pods.create(&PostParams::default(), &pod).await,
    );
    let pending = ok(
        "pending pods",
        pods.list(&ListParams::default().fields("status.phase=Pending,spec.nodeName="))
            .await,
    );
    assert_eq!(pending.items.len(), 1);
    let running = ok(
        "running pods",
        pods.list(&ListParams::default().fields("status.phase=Running"))
            .await,
    );
    assert!(running.items.is_empty());
}
