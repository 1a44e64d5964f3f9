//! The README's Quick start (`crates/kubeset/examples/quickstart.rs`, kept
//! identical to the README by `crates/kubeset/tests/readme.rs`) runs twice
//! in a row against a real kube-apiserver: the second run meets the
//! object and the field ownership the first one left.

#[path = "../../../crates/kubeset/tests/common/quickstart.rs"]
mod quickstart;

use kubeset::Client;

use crate::common::connect;

#[tokio::test]
async fn readme_quick_start_runs_twice() {
    let ctx = connect!("readme-quickstart");
    // The example works in the client's default namespace: this test's own.
    quickstart::run_twice(Client::new(ctx.client.rest().clone(), ctx.ns.clone())).await;
}
