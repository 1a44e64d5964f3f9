//! Pods and PodTemplates (`pkg/registry/core/pod`, `core/podtemplate`).
//! Their defaults' rules are [`crate::defaults`]'s (`pod`, `zero`), their
//! validation's [`crate::admission::builtin`]'s (`pod`).

use serde_json::Value;

use super::{Strategy, Sub};
use crate::admission::builtin;
use crate::defaults;
use crate::fields::{FieldSet, PODS, Unknown};
use crate::printers::{POD_COLS, Printer, Tail, named, pod};
use crate::resources::Resource;
use crate::validation::Cause;

/// Pods.
pub(crate) struct Pods;

impl Strategy for Pods {
    fn on_decode(&self, obj: &mut Value) {
        defaults::pod::pod(obj);
    }

    fn go_zero(&self, zero: &mut Value) {
        defaults::zero::pod(zero);
    }

    fn on_create(&self, _: &Resource, obj: &mut Value) {
        defaults::pod::pending_status(obj);
    }

    fn after_record(&self, obj: &mut Value) {
        defaults::pod::pod_admission(obj);
    }

    fn validate(&self, _: &Resource, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
        builtin::collect(|e| builtin::pod::pod(e, obj, old))
    }

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

    fn on_decode(&self, obj: &mut Value) {
        defaults::pod_template(obj);
    }

    fn go_zero(&self, zero: &mut Value) {
        defaults::zero::pod_template(zero);
    }

    fn validate(&self, _: &Resource, obj: &Value, _: Option<&Value>) -> Vec<Cause> {
        builtin::collect(|e| builtin::pod::template(e, &obj["template"], "template"))
    }
}
