//! The embedded API server (kubeset-testserver) calling a CRD conversion
//! webhook served by `kubeset_runtime::webhook`, over real TLS sockets:
//! the shared scenarios (`conversion_scenarios/mod.rs`), which
//! `tests/tests/suite/conversion.rs` runs against a real kube-apiserver.
//! Each test has its own server, so its own CRD.

// The derives of the shared scenarios name `::kubeset`.
extern crate kubeset_client as kubeset;

use kubeset_client as k;
use kubeset_runtime as rt;

mod conversion_scenarios;

use conversion_scenarios::Converting;
use k::Client;
use k::api::core::v1::Namespace;
use k::params::PostParams;
use k::rest::{RestClient, RestConfig};
use kubeset_testserver::TestServer;

/// A fresh embedded server with the scenarios' CRD and webhook, and a
/// namespace of the test's own (the server kept alive by the caller).
async fn converting(ns: &str) -> (TestServer, Converting) {
    let server = TestServer::start()
        .await
        .expect("the embedded server starts");
    let rest = RestClient::new(RestConfig::new(server.url())).expect("a client");
    let client = Client::new(rest, "default");
    let namespace: Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": ns}})).expect("namespace");
    k::Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .expect("namespace created");
    let c = Converting::start(client, ns).await;
    (server, c)
}

#[tokio::test]
async fn written_in_one_version_read_in_the_other() {
    let (_server, c) = converting("both").await;
    conversion_scenarios::written_in_one_version_read_in_the_other(&c, true).await;
    c.stop().await;
}

#[tokio::test]
async fn a_list_converts_objects_written_in_both_versions() {
    let (_server, c) = converting("listed").await;
    conversion_scenarios::a_list_converts_objects_written_in_both_versions(&c, true).await;
    c.stop().await;
}

#[tokio::test]
async fn a_watch_sees_an_update_written_in_the_other_version() {
    let (_server, c) = converting("watched").await;
    conversion_scenarios::a_watch_sees_an_update_written_in_the_other_version(&c).await;
    c.stop().await;
}

#[tokio::test]
async fn a_merge_patch_to_the_other_version() {
    let (_server, c) = converting("patched").await;
    conversion_scenarios::a_merge_patch_to_the_other_version(&c, true).await;
    c.stop().await;
}

#[tokio::test]
async fn failed_conversions_answer_as_the_real_server() {
    let (_server, c) = converting("failed").await;
    conversion_scenarios::failed_conversions_answer_as_the_real_server(&c).await;
    c.stop().await;
}

#[tokio::test]
async fn hostile_answers_fail_the_read() {
    let (_server, c) = converting("hostile").await;
    conversion_scenarios::hostile_answers_fail_the_read(&c).await;
    c.stop().await;
}

#[tokio::test]
async fn a_server_side_apply_to_the_other_version() {
    let (_server, c) = converting("applied").await;
    conversion_scenarios::a_server_side_apply_to_the_other_version(&c, true).await;
    c.stop().await;
}
