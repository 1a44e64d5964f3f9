//! The layer rule of ARCHITECTURE.md ("kubeset-bench"): the crate's
//! modules import each other without a cycle, each imports only modules of
//! lower layers, and no function is over 120 lines. Read from the sources
//! by the workspace's `tests/layers/mod.rs`.

#[path = "../../../tests/layers/mod.rs"]
mod layers;

use std::path::{Path, PathBuf};

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

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn modules_import_without_a_cycle() {
    let graph = layers::graph(&src_dir(), layers::top_level);
    assert!(
        graph["cli"].contains("scale"),
        "the reader sees cli → scale"
    );
    layers::assert_no_cycle(&graph);
}

#[test]
fn each_layer_imports_only_lower_layers() {
    layers::assert_layers(&layers::graph(&src_dir(), layers::top_level), LAYERS);
}

#[test]
fn functions_fit_a_screen_or_two() {
    layers::assert_short_functions(&src_dir());
}
