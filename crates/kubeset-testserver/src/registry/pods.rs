//! Pods and PodTemplates (`pkg/registry/core/pod`, `core/podtemplate`).
//! Their defaults are [`crate::defaults`]'s (`pod`), their validation
//! [`crate::admission`]'s.

use serde_json::Value;

use super::{Strategy, Sub};
use crate::fields::{FieldSet, PODS, Unknown};
use crate::printers::{POD_COLS, Printer, Tail, named, pod};
use crate::resources::Resource;

/// Pods.
pub(crate) struct Pods;

impl Strategy for Pods {
    fn fields(&self, _: &Resource) -> FieldSet {
        FieldSet::builtin(PODS, Unknown::NotSupported)
    }

    fn printer(&self) -> Option<Printer> {
        Some(named(POD_COLS, pod, Tail::None))
    }

    fn subresource(&self, name: &str) -> Option<Sub> {
        match name {
            "binding" => Some(Sub::Binding),
            "ephemeralcontainers" => Some(Sub::EphemeralContainers),
            "resize" => Some(Sub::Resize),
            other => super::scale(other),
        }
    }
}

/// PodTemplates: no spec, but their template is tracked by `generation`.
pub(crate) struct PodTemplates;

impl Strategy for PodTemplates {
    fn tracks_generation(&self, _: &Resource, _: &Value) -> bool {
        true
    }
}
