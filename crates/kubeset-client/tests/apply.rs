//! Server-side apply with `extract`, `Api::apply`/`apply_status`/`apply_scale`
//! and typed conflicts against the embedded API server
//! (kubeset-testserver); `tests/tests/suite/apply.rs` runs the same
//! scenarios (`apply_scenarios/mod.rs`) against a real kube-apiserver.

use kubeset_client as k;

mod apply_scenarios;

use k::Client;
use k::rest::{RestClient, RestConfig};
use kubeset_testserver::TestServer;

/// A fresh embedded server and a client for it (kept alive by the
/// returned server).
async fn server() -> (TestServer, Client) {
    let server = TestServer::start()
        .await
        .expect("the embedded server starts");
    let rest = RestClient::new(RestConfig::new(server.url())).expect("a client");
    let client = Client::new(rest, "default");
    (server, client)
}

#[tokio::test]
async fn extract_change_apply() {
    let (_server, client) = server().await;
    apply_scenarios::extract_change_apply(client, "default").await;
}

#[tokio::test]
async fn conflict_then_force() {
    let (_server, client) = server().await;
    apply_scenarios::conflict_then_force(client, "default").await;
}

#[tokio::test]
async fn status_apply() {
    let (_server, client) = server().await;
    apply_scenarios::status_apply(client, "default").await;
}

#[tokio::test]
async fn scale_apply() {
    let (_server, client) = server().await;
    apply_scenarios::scale_apply(client, "default").await;
}

#[tokio::test]
async fn containers_merge_by_name() {
    let (_server, client) = server().await;
    apply_scenarios::containers_merge_by_name(client, "default").await;
}

#[tokio::test]
async fn empty_map_then_filled() {
    let (_server, client) = server().await;
    apply_scenarios::empty_map_then_filled(client, "default").await;
}

#[tokio::test]
async fn typed_extract_change_apply() {
    let (_server, client) = server().await;
    apply_scenarios::typed::typed_extract_change_apply(client, "default").await;
}

#[tokio::test]
async fn typed_round_trip() {
    let (_server, client) = server().await;
    apply_scenarios::typed::typed_round_trip(client, "default").await;
}

#[tokio::test]
async fn derived_apply() {
    let (_server, client) = server().await;
    apply_scenarios::typed::derived_apply(client, "default").await;
}
