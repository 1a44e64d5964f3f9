//! The last finalizer of a deleting object removed, on the embedded API
//! server; `tests/tests/suite/finalizer_events.rs` runs the same scenario
//! (`finalizer_scenarios/mod.rs`) against a real kube-apiserver.

use kubeset as k;

mod finalizer_scenarios;

use k::rest::{RestClient, RestConfig};
use kubeset_testserver::TestServer;

#[tokio::test]
async fn last_finalizer_removed_is_one_deleted_event() {
    let server = TestServer::start()
        .await
        .expect("the embedded server starts");
    let rest = RestClient::new(RestConfig::new(server.url())).expect("a client");
    let client = k::Client::new(rest, "default");
    finalizer_scenarios::last_finalizer_removed(client, "default").await;
}
