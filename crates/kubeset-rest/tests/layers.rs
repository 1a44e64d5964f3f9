//! The layer rule of ARCHITECTURE.md ("kubeset-rest"): the crate's modules
//! import each other without a cycle, and each module of the table below
//! imports only modules of lower layers. Read from the sources (a module's
//! `crate::…` paths outside comments and its `#[cfg(test)]` part; the
//! reader is the workspace's `tests/layers/mod.rs`), so the import cycle
//! the request path once had cannot come back unseen. Every function is
//! held to the style guide's 120 lines.

#[path = "../../../tests/layers/mod.rs"]
mod layers;

/// The layers, lowest first: a module may import only modules of a lower
/// layer. Every module has its place here (a new one is placed when it is
/// added).
const LAYERS: &[&[&str]] = &[
    // Leaves: pure rules and plain types, no crate imports but these.
    &[
        "verb",
        "url",
        "status",
        "transport",
        "budget",
        "auth",
        "backoff",
        "rate_limit",
        "warning",
        "collection",
        "content",
        "upgrade",
        "service",
        "field_path",
        "chain",
    ],
    // The error enum and what only needs it; the sans-IO description.
    &["metrics", "error"],
    &["failover", "response", "desc", "sent"],
    // kube-rs's form of a prepared request's URI.
    &["kube_uri"],
    // When to retry, and the pure attempt decision.
    &["retry"],
    &["decide"],
    // The client's shared state, then the transport over it.
    &["client"],
    &["discovery"],
    &["execute"],
    &["watch"],
    // The builder that meets the transport; config builds clients.
    &["request", "config", "fuzz_hooks"],
    // Watches opened in protobuf, on the builder.
    &["watch_protobuf"],
    // The streaming subresources: their own connection over the client.
    &["ws"],
];

layers::layer_tests!(LAYERS, layers::top_level, "request" => "execute");
