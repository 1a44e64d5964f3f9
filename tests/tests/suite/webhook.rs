//! Admission webhooks served by `kubeset::runtime::webhook` and called by
//! the real kube-apiserver (`clientConfig.url` on loopback, the scenario's
//! own CA in `caBundle`). The scenarios are
//! `crates/kubeset-runtime/tests/webhook_scenarios/mod.rs`, run unchanged
//! against the embedded server (which calls the webhooks itself) by
//! `crates/kubeset-runtime/tests/webhook_embedded.rs`: a denial reaches
//! the client as a typed 403 (the configuration self-registered with
//! `set_ca_bundle`), a mutation's patch is stored and its warning reaches
//! the client, the serving certificate is replaced twice while requests
//! flow without one failing (`failurePolicy: Fail`), two mutating
//! webhooks run in their configurations' name order, an unreachable
//! webhook fails closed or open by `failurePolicy`, selectors and a
//! `matchCondition` decide what is sent, UPDATEs carry `oldObject`, and
//! `sideEffects` with dry runs.
//!
//! Each configuration selects the test's own namespace only
//! (`namespaceSelector` on `kubernetes.io/metadata.name`), so tests
//! running beside these are not affected, and is deleted at the end.
//! kube-apiserver picks up a new configuration after a moment: each
//! scenario polls with probe objects until it sees its webhooks act.

use std::sync::Arc;

use kubeset::Client;
use kubeset::rest::RestClient;
use kubeset_tests::{Identity, TestContext};

use crate::common::connect;

use kubeset as k;
use kubeset::runtime as rt;

#[path = "../../../crates/kubeset-runtime/tests/webhook_scenarios/mod.rs"]
mod scenarios;

/// A client of the test's namespace whose warnings go to the returned
/// collector.
fn client_with_warnings(ctx: &TestContext) -> (Client, Arc<scenarios::Collect>) {
    let collect = Arc::new(scenarios::Collect::default());
    let config = ctx.kube.config(None, Identity::Admin).expect("config");
    let rest = config
        .rest_config()
        .expect("rest config")
        .with_warning_handler(collect.clone());
    let client = Client::new(RestClient::new(rest).expect("rest client"), ctx.ns.clone());
    (client, collect)
}

#[tokio::test]
async fn validating_webhook_denial_is_a_typed_403() {
    let ctx = connect!("webhook-deny");
    scenarios::validating_denial_is_a_typed_403(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn mutating_webhook_patch_is_stored_and_its_warning_reaches_the_client() {
    let ctx = connect!("webhook-mutate");
    let (client, warnings) = client_with_warnings(&ctx);
    scenarios::mutation_is_stored_and_its_warning_reaches_the_client(client, warnings, &ctx.ns)
        .await;
}

#[tokio::test]
async fn certificate_rotation_while_requests_flow_loses_none() {
    let ctx = connect!("webhook-rotate");
    scenarios::certificate_rotation_while_requests_flow_loses_none(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn rotated_webhook_keeps_its_connection() {
    let ctx = connect!("webhook-keepalive");
    scenarios::rotated_webhook_keeps_its_connection(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn webhook_mutating_webhooks_run_in_name_order() {
    let ctx = connect!("webhook-order");
    scenarios::mutating_webhooks_run_in_name_order(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn webhook_unreachable_fails_closed_or_open() {
    let ctx = connect!("webhook-unreachable");
    scenarios::unreachable_webhook_fails_closed_or_open(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn webhook_selectors_filter_what_is_sent() {
    let ctx = connect!("webhook-selectors");
    scenarios::selectors_filter_what_is_sent(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn webhook_match_condition_selects() {
    let ctx = connect!("webhook-conditions");
    scenarios::match_condition_selects(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn webhook_updates_are_sent_with_the_old_object() {
    let ctx = connect!("webhook-updates");
    scenarios::updates_are_sent_with_the_old_object(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn webhook_dry_run_and_side_effects() {
    let ctx = connect!("webhook-dry");
    scenarios::dry_run_and_side_effects(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn webhook_deletes_are_sent_with_the_old_object() {
    let ctx = connect!("webhook-deletes");
    scenarios::deletes_are_sent_with_the_old_object(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn webhook_mutation_makes_an_invalid_object_valid() {
    let ctx = connect!("webhook-fix");
    scenarios::mutation_makes_an_invalid_object_valid(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn webhook_that_cannot_match_is_not_called() {
    let ctx = connect!("webhook-unmatched");
    scenarios::webhooks_that_cannot_match_are_not_called(ctx.client, &ctx.ns, || None).await;
}

#[tokio::test]
async fn webhook_reinvocation_if_needed() {
    let ctx = connect!("webhook-reinvoke");
    scenarios::reinvocation_if_needed(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn webhook_generated_names_reach_the_validating_webhooks() {
    let ctx = connect!("webhook-generated");
    scenarios::generated_names_reach_the_validating_webhooks(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn webhook_certificate_served_from_a_secret() {
    let ctx = connect!("webhook-secret-source");
    scenarios::cert_sources::certificate_served_from_a_secret(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn webhook_self_managed_rotation_across_expiry_loses_none() {
    let ctx = connect!("webhook-expiry");
    scenarios::cert_sources::self_managed_rotation_across_expiry_loses_none(ctx.client, &ctx.ns)
        .await;
}

#[tokio::test]
async fn webhook_self_managed_failures_are_reported() {
    let ctx = connect!("webhook-rotator-failures");
    scenarios::cert_sources::self_managed_failures_are_reported(ctx.client, &ctx.ns).await;
}
