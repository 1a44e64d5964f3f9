//! The layer rule of ARCHITECTURE.md ("codegen"): the crate's modules
//! import each other without a cycle, each imports only modules of lower
//! layers, and no hand-written function is over 120 lines. Read from the
//! sources by the workspace's `tests/layers/mod.rs`.
//!
//! A node is a top-level module, except in `proto/`: the `.proto` reader
//! and its error (`proto`, `proto/parse.rs`), its join with the IR
//! (`proto::join`: `join.rs`, `go_values.rs`) and the codec emitter
//! (`proto::emit`) sit at three heights — the crate's error wraps the
//! reader's, the join reads the IR, and the emitter writes through the
//! models' emitter's output; and in `ir/`: the lowering of a spec
//! (`ir::lowering`: `lowering.rs`, `paths.rs`) sits above the IR's types
//! and above `schema`, the lowering of one JSON schema into them.

#[path = "../../tests/layers/mod.rs"]
mod layers;

/// The layers, lowest first (every node placed).
const LAYERS: &[&[&str]] = &[
    // Which merged Kubernetes version has what, and the gates made of it.
    &["versions"],
    // The specs as read, and the `.proto` reader with its error.
    &["spec", "proto"],
    // Rust names for what the specs name; the crate's error enum.
    &["names", "error"],
    // The spec folder and the standalone CRD reader's plumbing.
    &["spec_dir", "standalone"],
    // Several releases' specs merged into one input.
    &["merge"],
    // The intermediate representation: its types, tables, fixups and the
    // clients' view of it.
    &["ir"],
    // What reads the IR: the one lowering of a JSON schema, examples, the
    // model layout, the join of proto field numbers.
    &["schema", "examples", "layout", "proto::join"],
    // The lowering of a whole spec (definitions through `schema`, the
    // resource table from its paths).
    &["ir::lowering"],
    // The models' emitter.
    &["emit"],
    // Emitters over it: clients, schemas, protobuf codecs; CRDs.
    &["emit_client", "emit_schema", "proto::emit", "crd"],
];

layers::layer_tests!(LAYERS, node_of, "proto::emit" => "emit");

fn node_of(path: &[String]) -> Option<String> {
    match (path.first()?.as_str(), path.get(1).map(String::as_str)) {
        ("proto", Some("join" | "go_values")) => Some("proto::join".to_owned()),
        ("proto", Some("emit")) => Some("proto::emit".to_owned()),
        ("ir", Some("lowering" | "paths")) => Some("ir::lowering".to_owned()),
        (first, _) => Some(first.to_owned()),
    }
}

#[test]
fn proto_parts_are_nodes_of_their_own() {
    let path = |p: &[&str]| p.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        node_of(&path(&["proto", "go_values"])).as_deref(),
        Some("proto::join")
    );
    assert_eq!(
        node_of(&path(&["proto", "emit", "x"])).as_deref(),
        Some("proto::emit")
    );
    assert_eq!(
        node_of(&path(&["proto", "ProtoError"])).as_deref(),
        Some("proto")
    );
    assert_eq!(node_of(&path(&["crd", "share"])).as_deref(), Some("crd"));
    assert_eq!(
        node_of(&path(&["ir", "paths"])).as_deref(),
        Some("ir::lowering")
    );
    assert_eq!(node_of(&path(&["ir", "Ty"])).as_deref(), Some("ir"));
}
