//! Nodes (`pkg/registry/core/node`).

use serde_json::Value;

use super::Strategy;
use crate::fields::{FieldSet, NODES, Unknown};
use crate::printers::{NODE_COLS, Printer, Tail, named, node};
use crate::resources::Resource;

/// Nodes: no `generation`.
pub(crate) struct Nodes;

impl Strategy for Nodes {
    fn tracks_generation(&self, _: &Resource, _: &Value) -> bool {
        false
    }

    /// A Node's registry keeps the body's status on create (a kubelet
    /// registers its node with its capacity).
    fn keeps_status_on_create(&self) -> bool {
        true
    }

    fn fields(&self, _: &Resource) -> FieldSet {
        FieldSet::builtin(NODES, Unknown::NotSupported)
    }

    fn printer(&self) -> Option<Printer> {
        Some(named(NODE_COLS, node, Tail::None))
    }
}
