//! The layer rule of ARCHITECTURE.md ("kubeset-runtime"): the crate's
//! modules import each other without a cycle, each imports only modules of
//! lower layers, and no function is over 120 lines. Read from the sources
//! by the workspace's `tests/layers/mod.rs`.

#[path = "../../../tests/layers/mod.rs"]
mod layers;

/// The layers, lowest first: a module may import only modules of a lower
/// layer. Every module has its place here (a new one is placed when it is
/// added).
const LAYERS: &[&[&str]] = &[
    // The gate of shards and of leadership (pure bookkeeping and the
    // shard hash), below both.
    &["gate"],
    // Leaves: memory accounting, metadata-only objects, the status
    // helpers, and the parts that stand alone (events, leader election,
    // the webhook server).
    &[
        "memory", "metadata", "status", "events", "leader", "webhook",
    ],
    // The watcher.
    &["watcher"],
    // Over the watcher: the store (reflector), projections, waits, the
    // webhook server (its certificates from a watched Secret).
    &["store", "projection", "wait", "webhook"],
    // Over the store: object references, the work queue, predicates,
    // shared caches, shards.
    &["object_ref", "queue", "predicates", "shared", "shard"],
    // Metrics of queues, caches and watches.
    &["metrics"],
    // The controller over all of it; finalizers over the controller.
    &["controller"],
    &["finalizer"],
];

layers::layer_tests!(LAYERS, layers::top_level, "controller" => "queue");
