//! The README's Quick start run twice on a client, and what it must leave
//! behind; shared by `crates/kubeset/tests/readme.rs` (embedded server) and
//! `tests/tests/suite/readme.rs` (real kube-apiserver), which include this
//! file by path.

#[path = "../../examples/quickstart.rs"]
#[allow(dead_code)]
mod example;

use kubeset::api::core::v1::ConfigMap;
use kubeset::{Api, Client};

/// Runs the Quick start twice in `client`'s default namespace, then checks
/// the object: the apply's value, and its manager owning it.
pub async fn run_twice(client: Client) {
    for run in 1..=2 {
        if let Err(e) = example::greet(client.clone()).await {
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
    assert!(
        managers.iter().any(|m| m == "my-controller"),
        "{managers:?}"
    );
}
