//! The layer rule of ARCHITECTURE.md ("kubeset-bench"): the crate's
//! modules import each other without a cycle, each imports only modules of
//! lower layers, and no function is over 120 lines. Read from the sources
//! by the workspace's `tests/layers/mod.rs`.

#[path = "../../../tests/layers/mod.rs"]
mod layers;

/// The layers, lowest first (every module placed).
const LAYERS: &[&[&str]] = &[
    // Process figures and statistics.
    &["proc", "stats"],
    // One measurement each.
    &["codec", "codec_protobuf", "memory", "roundtrip", "watch"],
    // Measurements built on another.
    &["failover", "scale", "watch_protobuf"],
    // The command line that runs them.
    &["cli"],
];

layers::layer_tests!(LAYERS, layers::top_level, "cli" => "scale");
