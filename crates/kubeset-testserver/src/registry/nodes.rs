//! Nodes (`pkg/registry/core/node`).

use serde_json::Value;

use super::Strategy;
use crate::defaults;
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

    fn on_decode(&self, obj: &mut Value) {
        defaults::workloads::node(obj);
    }

    fn after_record(&self, obj: &mut Value) {
        defaults::workloads::not_ready_taint(obj);
    }

    fn fields(&self, _: &Resource) -> FieldSet {
        FieldSet::builtin(NODES, Unknown::NotSupported)
    }

    fn printer(&self) -> Option<Printer> {
        Some(named(NODE_COLS, node, Tail::None))
    }
}
