//! The layer rule of ARCHITECTURE.md ("kubeset-client"): the crate's
//! modules import each other without a cycle, each imports only modules of
//! lower layers, and no function is over 120 lines. Read from the sources
//! by the workspace's `tests/layers/mod.rs`.

#[path = "../../../tests/layers/mod.rs"]
mod layers;

/// The layers, lowest first: a module may import only modules of a lower
/// layer. Every module has its place here (a new one is placed when it is
/// added).
const LAYERS: &[&[&str]] = &[
    // The client handle, the dynamic object, the query parameters, the
    // protobuf plumbing: nothing of the crate below them.
    &["client", "dynamic", "params", "protobuf"],
    // What builds on one of them: URLs, patches, the review envelopes
    // (and the type and group-version-kind names), CRD helpers, apply
    // markers.
    &["url", "patch", "admission", "apply", "crd"],
    // The typed API over all of it; conversion reviews over admission's
    // envelope; discovery (kinds named with admission's types).
    &["api_typed", "conversion", "discovery"],
    // What works through the typed API (metadata-only reads and scale of
    // any kind among it).
    &["clientset", "entry", "ws", "partial", "scale"],
];

layers::layer_tests!(LAYERS, layers::top_level, "api_typed" => "url");
