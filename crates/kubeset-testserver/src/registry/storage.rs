//! PersistentVolumeClaims, PersistentVolumes and StorageClasses
//! (`pkg/registry/core/persistentvolumeclaim`, `core/persistentvolume`,
//! `storage/storageclass`). The rules of their defaults and protection
//! finalizers are [`crate::defaults`]'s (`storage`), a claim's validation
//! [`crate::admission::builtin`]'s (`core`).

use serde_json::Value;

use super::Strategy;
use crate::admission::builtin;
use crate::defaults;
use crate::printers::{PV_COLS, PVC_COLS, Printer, SC_COLS, Tail, named, pv, pvc};
use crate::printers::{storage_class_row, unnamed};
use crate::resources::Resource;
use crate::validation::Cause;

/// PersistentVolumeClaims: no `generation`.
pub(crate) struct Claims;

impl Strategy for Claims {
    fn tracks_generation(&self, _: &Resource, _: &Value) -> bool {
        false
    }

    fn on_decode(&self, obj: &mut Value) {
        defaults::storage::claim(obj);
    }

    fn go_zero(&self, zero: &mut Value) {
        defaults::zero::claim(zero);
    }

    fn after_record(&self, obj: &mut Value) {
        defaults::storage::claim_protection(obj);
    }

    fn validate(&self, _: &Resource, obj: &Value, _: Option<&Value>) -> Vec<Cause> {
        builtin::collect(|e| builtin::core::pvc(e, obj))
    }

    fn printer(&self) -> Option<Printer> {
        Some(named(PVC_COLS, pvc, Tail::None))
    }
}

/// PersistentVolumes: no `generation`.
pub(crate) struct Volumes;

impl Strategy for Volumes {
    fn tracks_generation(&self, _: &Resource, _: &Value) -> bool {
        false
    }

    fn on_decode(&self, obj: &mut Value) {
        defaults::storage::volume(obj);
    }

    fn after_record(&self, obj: &mut Value) {
        defaults::storage::volume_protection(obj);
        defaults::storage::phase_transition(obj);
    }

    fn printer(&self) -> Option<Printer> {
        Some(named(PV_COLS, pv, Tail::None))
    }
}

/// StorageClasses: the name cell says `(default)` for the default class.
pub(crate) struct Classes;

impl Strategy for Classes {
    fn on_decode(&self, obj: &mut Value) {
        defaults::storage::storage_class(obj);
    }

    fn printer(&self) -> Option<Printer> {
        Some(unnamed(SC_COLS, storage_class_row, Tail::None))
    }
}
