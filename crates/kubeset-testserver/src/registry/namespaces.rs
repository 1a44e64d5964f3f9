//! Namespaces (`pkg/registry/core/namespace`): named as DNS labels, no
//! `generation`; a delete marks one `Terminating` while its
//! `spec.finalizers` hold it (the namespace controller empties it, then
//! finalizes it), and its objects go with it.

use serde_json::{Value, json};

use super::{Cascade, Strategy, Sub};
use crate::admission::builtin;
use crate::defaults;
use crate::fields::{FieldSet, NAMESPACES, Unknown};
use crate::printers::{Printer, STATUS_COLS, Tail, named, s};
use crate::resources::Resource;
use crate::validation::{Cause, NameRule};

/// Namespaces.
pub(crate) struct Namespaces;

impl Strategy for Namespaces {
    fn name_rule(&self) -> NameRule {
        NameRule::Label
    }

    fn tracks_generation(&self, _: &Resource, _: &Value) -> bool {
        false
    }

    fn on_decode(&self, obj: &mut Value) {
        defaults::namespace(obj);
    }

    fn on_create(&self, _: &Resource, obj: &mut Value) {
        defaults::namespace(obj);
    }

    fn after_record(&self, obj: &mut Value) {
        defaults::namespace_finalizer(obj);
    }

    fn prepare_for_update(&self, live: &Value, new: &mut Value) {
        defaults::keep_namespace_finalizers(live, new);
    }

    fn validate(&self, _: &Resource, obj: &Value, _: Option<&Value>) -> Vec<Cause> {
        builtin::collect(|e| builtin::core::namespace(e, obj))
    }

    fn held_by_spec(&self, obj: &Value) -> bool {
        obj.pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty())
    }

    fn cascade(&self) -> Cascade {
        Cascade::NamespaceContents
    }

    fn fields(&self, _: &Resource) -> FieldSet {
        FieldSet::builtin(NAMESPACES, Unknown::NotSupported)
    }

    fn printer(&self) -> Option<Printer> {
        Some(named(
            STATUS_COLS,
            |o| vec![json!(s(o, "/status/phase"))],
            Tail::Age,
        ))
    }

    fn subresource(&self, name: &str) -> Option<Sub> {
        if name == "finalize" {
            return Some(Sub::Finalize);
        }
        super::scale(name)
    }
}
