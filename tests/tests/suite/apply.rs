//! Server-side apply you can read back (issue 35) against a real
//! kube-apiserver: `extract`, `Api::apply`/`apply_status`/`apply_scale` and
//! typed conflicts. The scenarios are shared with the embedded server's
//! run (`crates/kubeset-client/tests/apply.rs`), so both servers answer
//! the same test bodies.

use kubeset as k;

#[path = "../../../crates/kubeset-client/tests/apply_scenarios/mod.rs"]
mod scenarios;

use crate::common::connect;

#[tokio::test]
async fn apply_extract_change_apply() {
    let ctx = connect!("apply-extract");
    scenarios::extract_change_apply(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn apply_conflict_then_force() {
    let ctx = connect!("apply-conflict");
    scenarios::conflict_then_force(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn apply_status_of_a_custom_resource() {
    let ctx = connect!("apply-status");
    scenarios::status_apply(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn apply_scale_of_a_deployment() {
    let ctx = connect!("apply-scale");
    scenarios::scale_apply(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn apply_containers_merge_by_name() {
    let ctx = connect!("apply-containers");
    scenarios::containers_merge_by_name(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn apply_empty_map_then_filled() {
    let ctx = connect!("apply-empty-map");
    scenarios::empty_map_then_filled(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn apply_typed_extract_change_apply() {
    let ctx = connect!("apply-typed");
    scenarios::typed::typed_extract_change_apply(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn apply_typed_round_trip() {
    let ctx = connect!("apply-round-trip");
    scenarios::typed::typed_round_trip(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn apply_derived_apply_type() {
    let ctx = connect!("apply-derived");
    scenarios::typed::derived_apply(ctx.client, &ctx.ns).await;
}
