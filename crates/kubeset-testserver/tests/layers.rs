//! The layer rule of ARCHITECTURE.md ("kubeset-testserver"): the crate's
//! modules import each other without a cycle, and each module of the table
//! below imports only modules of lower layers. Read from the sources (a
//! module's `crate::…`, `super::…` and `self::…` paths outside comments
//! and its `#[cfg(test)]` part; the reader is the workspace's
//! `tests/layers/mod.rs`), so the import cycle the request path once had
//! (`http → verbs → store → deletion → http`) cannot come back unseen.
//!
//! It also holds every function of the crate (all hand-written) to the
//! style guide's 120 lines.
//!
//! A node is a top-level module, except two parts of `admission`: the CRD
//! schema compiler (its `schema`, `cel`, `validate`, `format` and
//! `shape`), which imports nothing of the crate but itself and the name
//! rules (`names`) and is the node `admission::schema`: `resources` keeps
//! a CRD version's compiled schema, so it sits below `resources` while the
//! rest of `admission` sits above; and the built-in validation of the
//! kinds' own fields (`builtin`), the node `admission::builtin`: each
//! kind's strategy in `registry` calls it, so it sits below `registry`,
//! which sits below the rest of `admission` (which looks the strategies
//! up).

#[path = "../../../tests/layers/mod.rs"]
mod layers;

/// The schema compiler's submodules of `admission` (one node).
const COMPILER: &[&str] = &["schema", "cel", "validate", "format", "shape"];

/// The built-in validation's submodule of `admission` (a node of its own).
const BUILTIN: &str = "builtin";

/// The layers, lowest first: a module may import only modules of a lower
/// layer. Every module has its place here (a new one is placed when it is
/// added).
const LAYERS: &[&[&str]] = &[
    // Leaves: plain types and pure rules that import nothing of the crate.
    &[
        "util", "auth", "bounds", "owners", "fieldset", "faults", "names",
    ],
    // The CRD schema compiler (its CEL format library uses `names`).
    &["admission::schema"],
    // The served resources (a CRD version keeps its compiled schema).
    &["resources"],
    // What only needs a resource: errors as Status, selectable fields,
    // list types and map keys, events' two versions, discovery documents.
    &["status", "fields", "shape", "events", "discovery"],
    // `as=PartialObjectMetadata` answers (refused as Status errors).
    &["partial"],
    // The wire plumbing, selectors, structured merge, bounds, the rules
    // every kind's strategy names.
    &[
        "error",
        "wire",
        "selectors",
        "smd",
        "limits",
        "services",
        "validation",
        "review",
    ],
    &[
        "immutable",
        "patch",
        "printers",
        "defaults",
        "inflight",
        "options",
        "protobuf",
        "deletion",
        "openapi",
        "kubeconfig",
        "tls",
    ],
    // The built-in validation of the kinds' own fields.
    &["admission::builtin"],
    // One strategy per kind, looked up from a table: each names its
    // kind's defaults and built-in validation.
    &["registry"],
    // Admission, field management, Tables, connection state.
    &["admission", "apply", "conns"],
    // Typed decoding; the webhooks' HTTPS client.
    &["typed", "webhook_client"],
    // CRD conversion webhooks: the rules the store converts by, and
    // their calls, which reads make after the store answered.
    &["conversion"],
    // The generic store: the strategies' hooks in kube-apiserver's order;
    // Tables by the strategies' printers.
    &["store", "table"],
    // What works over the store.
    &["gc", "fanout", "subresource", "stream"],
    &["watch", "shared", "controllers"],
    // The verbs, then routing, then the connections that call it.
    &["verbs"],
    // Admission webhooks called around the verbs' writes.
    &["webhooks"],
    &["http", "fuzz_hooks"],
    &["server"],
    &["replica"],
    &["admin"],
];

layers::layer_tests!(LAYERS, node_of, "http" => "verbs");

/// The node of a module path: its top-level module, or
/// `admission::schema` for the schema compiler, `admission::builtin` for
/// the built-in validation.
fn node_of(path: &[String]) -> Option<String> {
    let first = path.first()?;
    if first == "admission" && path.get(1).is_some_and(|s| COMPILER.contains(&s.as_str())) {
        return Some("admission::schema".to_owned());
    }
    if first == "admission" && path.get(1).is_some_and(|s| s == BUILTIN) {
        return Some("admission::builtin".to_owned());
    }
    Some(first.clone())
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn admission_parts_are_nodes_of_their_own() {
    assert_eq!(
        node_of(&strings(&["admission", "cel", "value"])).as_deref(),
        Some("admission::schema")
    );
    assert_eq!(
        node_of(&strings(&["admission", "policy"])).as_deref(),
        Some("admission")
    );
    assert_eq!(
        node_of(&strings(&["admission", "builtin", "pod"])).as_deref(),
        Some("admission::builtin")
    );
}
