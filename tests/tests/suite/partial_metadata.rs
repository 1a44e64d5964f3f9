//! `Accept: …;as=PartialObjectMetadata` (and `…List`) against a real
//! kube-apiserver. The scenarios are shared with the embedded server's run
//! (`crates/kubeset/tests/partial_metadata.rs`), so both servers answer
//! the same test bodies.

use kubeset as k;

#[path = "../../../crates/kubeset/tests/partial_metadata_scenarios/mod.rs"]
mod scenarios;

use crate::common::connect;

#[tokio::test]
async fn partial_metadata_get_and_list() {
    let ctx = connect!("pom-get-list");
    scenarios::get_and_list(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn partial_metadata_refusals() {
    let ctx = connect!("pom-refusals");
    scenarios::refusals(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn partial_metadata_watch() {
    let ctx = connect!("pom-watch");
    scenarios::watch(ctx.client, &ctx.ns).await;
}
