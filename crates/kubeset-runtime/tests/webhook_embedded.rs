//! The embedded API server (kubeset-testserver) calling admission
//! webhooks served by `kubeset_runtime::webhook`, over real TLS sockets:
//! the shared scenarios (`webhook_scenarios/mod.rs`), which
//! `tests/tests/suite/webhook.rs` runs against a real kube-apiserver.

use kubeset_client as k;
use kubeset_runtime as rt;

mod webhook_scenarios;

use k::Client;
use k::api::core::v1::Namespace;
use k::params::PostParams;
use k::rest::{RestClient, RestConfig};
use kubeset_testserver::TestServer;
use std::sync::Arc;

/// A fresh embedded server, a client for it and a namespace of the test's
/// own (kept alive by the returned server).
async fn server(ns: &str) -> (TestServer, Client) {
    let server = TestServer::start()
        .await
        .expect("the embedded server starts");
    // No client-side rate limit, as the realkube suite's clients
    // (`kubeset_tests`): with client-go's 5 requests/s shared by a
    // scenario's creates and its watchers, the scenarios would measure the
    // token bucket, not the servers.
    let config = RestConfig::new(server.url()).with_qps_burst(-1.0, 0);
    let rest = RestClient::new(config).expect("a client");
    let client = Client::new(rest, "default");
    let namespace: Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": ns}})).expect("namespace");
    k::Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .expect("namespace created");
    (server, client)
}

#[tokio::test]
async fn validating_denial_is_a_typed_403() {
    let (_server, client) = server("deny").await;
    webhook_scenarios::validating_denial_is_a_typed_403(client, "deny").await;
}

#[tokio::test]
async fn mutating_webhooks_run_in_name_order() {
    let (_server, client) = server("order").await;
    webhook_scenarios::mutating_webhooks_run_in_name_order(client, "order").await;
}

#[tokio::test]
async fn unreachable_webhook_fails_closed_or_open() {
    let (_server, client) = server("unreachable").await;
    webhook_scenarios::unreachable_webhook_fails_closed_or_open(client, "unreachable").await;
}

#[tokio::test]
async fn selectors_filter_what_is_sent() {
    let (_server, client) = server("selectors").await;
    webhook_scenarios::selectors_filter_what_is_sent(client, "selectors").await;
}

#[tokio::test]
async fn match_condition_selects() {
    let (_server, client) = server("conditions").await;
    webhook_scenarios::match_condition_selects(client, "conditions").await;
}

#[tokio::test]
async fn dry_run_and_side_effects() {
    let (_server, client) = server("dry").await;
    webhook_scenarios::dry_run_and_side_effects(client, "dry").await;
}

#[tokio::test]
async fn updates_are_sent_with_the_old_object() {
    let (_server, client) = server("updates").await;
    webhook_scenarios::updates_are_sent_with_the_old_object(client, "updates").await;
}

#[tokio::test]
async fn mutation_is_stored_and_its_warning_reaches_the_client() {
    let (server, _) = server("mutate").await;
    let warnings = Arc::new(webhook_scenarios::Collect::default());
    let config = RestConfig::new(server.url())
        .with_qps_burst(-1.0, 0)
        .with_warning_handler(warnings.clone());
    let client = Client::new(RestClient::new(config).expect("a client"), "mutate");
    webhook_scenarios::mutation_is_stored_and_its_warning_reaches_the_client(
        client, warnings, "mutate",
    )
    .await;
}

#[tokio::test]
async fn certificate_rotation_while_requests_flow_loses_none() {
    let (_server, client) = server("rotate").await;
    webhook_scenarios::certificate_rotation_while_requests_flow_loses_none(client, "rotate").await;
}

#[tokio::test]
async fn rotated_webhook_keeps_its_connection() {
    let (_server, client) = server("keepalive").await;
    webhook_scenarios::rotated_webhook_keeps_its_connection(client, "keepalive").await;
}

#[tokio::test]
async fn deletes_are_sent_with_the_old_object() {
    let (_server, client) = server("deletes").await;
    webhook_scenarios::deletes_are_sent_with_the_old_object(client, "deletes").await;
}

#[tokio::test]
async fn mutation_makes_an_invalid_object_valid() {
    let (_server, client) = server("fix").await;
    webhook_scenarios::mutation_makes_an_invalid_object_valid(client, "fix").await;
}

#[tokio::test]
async fn webhooks_that_cannot_match_are_not_called() {
    let (server, client) = server("unmatched").await;
    webhook_scenarios::webhooks_that_cannot_match_are_not_called(client, "unmatched", || {
        Some(server.webhook_writes())
    })
    .await;
}

#[tokio::test]
async fn reinvocation_if_needed() {
    let (_server, client) = server("reinvoke").await;
    webhook_scenarios::reinvocation_if_needed(client, "reinvoke").await;
}

#[tokio::test]
async fn generated_names_reach_the_validating_webhooks() {
    let (_server, client) = server("generated").await;
    webhook_scenarios::generated_names_reach_the_validating_webhooks(client, "generated").await;
}

#[tokio::test]
async fn certificate_served_from_a_secret() {
    let (_server, client) = server("secret-source").await;
    webhook_scenarios::cert_sources::certificate_served_from_a_secret(client, "secret-source")
        .await;
}

#[tokio::test]
async fn self_managed_rotation_across_expiry_loses_none() {
    let (_server, client) = server("expiry").await;
    webhook_scenarios::cert_sources::self_managed_rotation_across_expiry_loses_none(
        client, "expiry",
    )
    .await;
}

#[tokio::test]
async fn self_managed_failures_are_reported() {
    let (_server, client) = server("rotator-failures").await;
    webhook_scenarios::cert_sources::self_managed_failures_are_reported(client, "rotator-failures")
        .await;
}
