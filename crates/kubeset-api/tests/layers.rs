//! The layer rule of ARCHITECTURE.md ("kubeset-api"): the crate's modules
//! import each other without a cycle, each imports only modules of lower
//! layers, and no hand-written function is over 120 lines (generated files
//! start with the generator's preamble and are not held to it). Read from
//! the sources by the workspace's `tests/layers/mod.rs`.
//!
//! A node is a top-level module, except in `types/`: the scalar types the
//! models are made of (`Quantity`, `Time`, `IntOrString`, …: the node
//! `types`) sit below the models, and the types made of models (`List`,
//! `WatchEvent`, the `Status` helpers, the `JSONSchemaProps` helpers: the
//! node `types::models`) above them.

#[path = "../../../tests/layers/mod.rs"]
mod layers;

/// The parts of `types/` that are made of models.
const ON_MODELS: &[&str] = &["list", "watch", "status", "json_schema"];

/// The layers, lowest first (every node placed).
const LAYERS: &[&[&str]] = &[
    // Serde helpers of the generated code, the resource table, the
    // spec/status traits, the selected Kubernetes version.
    &["serde_util", "resources", "object", "version"],
    // The scalar types the models are made of.
    &["types"],
    // The models: meta/v1 first, every group on it.
    &["apimachinery"],
    &["api", "apiextensions_apiserver", "kube_aggregator"],
    // What is made of models: lists, watch events, the `Resource` trait.
    &["types::models", "resource"],
    // Codecs, schemas and layout checks over all of it.
    &["protobuf", "schema", "layout"],
];

layers::layer_tests!(LAYERS, node_of, "api" => "apimachinery");

fn node_of(path: &[String]) -> Option<String> {
    match (path.first()?.as_str(), path.get(1).map(String::as_str)) {
        ("types", Some(part)) if ON_MODELS.contains(&part) => Some("types::models".to_owned()),
        (first, _) => Some(first.to_owned()),
    }
}
