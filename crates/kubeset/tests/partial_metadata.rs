//! `as=PartialObjectMetadata` answers of the embedded API server
//! (kubeset-testserver); `tests/tests/suite/partial_metadata.rs` runs the
//! same scenarios (`partial_metadata_scenarios/mod.rs`) against a real
//! kube-apiserver.

use kubeset as k;

mod partial_metadata_scenarios;

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
    (server, Client::new(rest, "default"))
}

#[tokio::test]
async fn get_and_list_as_partial_metadata() {
    let (_server, client) = server().await;
    partial_metadata_scenarios::get_and_list(client, "default").await;
}

#[tokio::test]
async fn partial_metadata_refusals() {
    let (_server, client) = server().await;
    partial_metadata_scenarios::refusals(client, "default").await;
}

#[tokio::test]
async fn watch_as_partial_metadata() {
    let (_server, client) = server().await;
    partial_metadata_scenarios::watch(client, "default").await;
}
