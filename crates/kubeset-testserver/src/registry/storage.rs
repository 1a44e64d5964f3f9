//! PersistentVolumeClaims, PersistentVolumes and StorageClasses
//! (`pkg/registry/core/persistentvolumeclaim`, `core/persistentvolume`,
//! `storage/storageclass`). Their defaults and protection finalizers are
//! [`crate::defaults`]'s.

use serde_json::Value;

use super::Strategy;
use crate::printers::{PV_COLS, PVC_COLS, Printer, SC_COLS, Tail, named, pv, pvc};
use crate::printers::{storage_class_row, unnamed};
use crate::resources::Resource;

/// PersistentVolumeClaims: no `generation`.
pub(crate) struct Claims;

impl Strategy for Claims {
    fn tracks_generation(&self, _: &Resource, _: &Value) -> bool {
        false
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

    fn printer(&self) -> Option<Printer> {
        Some(named(PV_COLS, pv, Tail::None))
    }
}

/// StorageClasses: the name cell says `(default)` for the default class.
pub(crate) struct Classes;

impl Strategy for Classes {
    fn printer(&self) -> Option<Printer> {
        Some(unnamed(SC_COLS, storage_class_row, Tail::None))
    }
}
