//! The last finalizer of a deleting object removed, against a real
//! kube-apiserver. The scenario is shared with the embedded server's run
//! (`crates/kubeset/tests/finalizer_events.rs`).

use kubeset as k;

#[path = "../../../crates/kubeset/tests/finalizer_scenarios/mod.rs"]
mod scenarios;

use crate::common::connect;

#[tokio::test]
async fn last_finalizer_removed_is_one_deleted_event() {
    let ctx = connect!("finalizer-events");
    scenarios::last_finalizer_removed(ctx.client, &ctx.ns).await;
}
