//! The README's Quick start (`crates/kubeset/examples/quickstart.rs`, kept
//! identical to the README by `crates/kubeset/tests/readme.rs`) runs twice
//! in a row against a real kube-apiserver: the second run meets the
//! object and the field ownership the first one left.

#[path = "../../../crates/kubeset/examples/quickstart.rs"]
#[allow(dead_code)]
mod quickstart;

use kubeset::api::core::v1::ConfigMap;
use kubeset::{Api, Client};

use crate::common::connect;

#[tokio::test]
async fn readme_quick_start_runs_twice() {
    let ctx = connect!("readme-quickstart");
    // The example works in the client's default namespace: this test's own.
    let client = Client::new(ctx.client.rest().clone(), ctx.ns.clone());
    for run in 1..=2 {
        if let Err(e) = quickstart::greet(client.clone()).await {
            panic!("run {run} of the quick start failed: {e}");
        }
    }
    let cm = Api::<ConfigMap>::default_namespaced(client)
        .get("greeting")
        .await
        .expect("greeting exists");
    let data = cm.data.unwrap_or_default();
    assert_eq!(data.get("hello").map(String::as_str), Some("kubeset"));
    let managers: Vec<String> = cm
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    // The apply took .data.hello over; the create's manager owns nothing
    // of it any more, so only "my-controller" is left on .data.
    assert!(
        managers.iter().any(|m| m == "my-controller"),
        "{managers:?}"
    );
}
