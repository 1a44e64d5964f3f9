//! The layer rule of ARCHITECTURE.md ("kubeset-runtime"): the crate's
//! modules import each other without a cycle, each imports only modules of
//! lower layers, and no function is over 120 lines. Read from the sources
//! by the workspace's `tests/layers/mod.rs`.

#[path = "../../../tests/layers/mod.rs"]
mod layers;

use std::path::{Path, PathBuf};

/// The layers, lowest first: a module may import only modules of a lower
/// layer. Every module has its place here (a new one is placed when it is
/// added).
const LAYERS: &[&[&str]] = &[
    // Leaves: the backoff, memory accounting, metadata-only objects, the
    // status helpers, and the parts that stand alone (events, leader
    // election, the webhook server).
    &[
        "backoff", "memory", "metadata", "status", "events", "leader", "webhook",
    ],
    // The watcher.
    &["watcher"],
    // Over the watcher: the store (reflector), projections, waits.
    &["store", "projection", "wait"],
    // Over the store: object references, the work queue, predicates,
    // shared caches, shards.
    &["object_ref", "queue", "predicates", "shared", "shard"],
    // Metrics of queues, caches and watches.
    &["metrics"],
    // The controller over all of it; finalizers over the controller.
    &["controller"],
    &["finalizer"],
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn modules_import_without_a_cycle() {
    let graph = layers::graph(&src_dir(), layers::top_level);
    assert!(
        graph["controller"].contains("queue"),
        "the reader sees controller → queue"
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
