//! [`Patch`]: the four patch flavours of the API server.

use kubeset_rest::PatchType;
use serde::Serialize;

use crate::params::PatchParams;

/// A patch body and how the server must apply it.
#[derive(Debug, Clone, PartialEq)]
pub enum Patch<T: Serialize> {
    /// Server-side apply: `T` is the whole intent of the field manager
    /// named in [`PatchParams::field_manager`] (required).
    Apply(T),
    /// RFC 6902 JSON patch: `T` serializes to an array of operations.
    Json(T),
    /// RFC 7386 JSON merge patch.
    Merge(T),
    /// Kubernetes strategic merge patch (lists merged by their keys).
    Strategic(T),
}

impl<T: Serialize> Patch<T> {
    /// The body.
    pub fn body(&self) -> &T {
        match self {
            Patch::Apply(t) | Patch::Json(t) | Patch::Merge(t) | Patch::Strategic(t) => t,
        }
    }

    /// The request layer's patch type. Apply carries the field manager and
    /// `force` from `params`, which then must not be added again.
    pub(crate) fn patch_type(&self, params: &PatchParams) -> PatchType {
        match self {
            Patch::Apply(_) => PatchType::Apply {
                field_manager: params.field_manager.clone().unwrap_or_default(),
                force: params.force,
            },
            Patch::Json(_) => PatchType::Json,
            Patch::Merge(_) => PatchType::Merge,
            Patch::Strategic(_) => PatchType::StrategicMerge,
        }
    }

    pub(crate) fn is_apply(&self) -> bool {
        matches!(self, Patch::Apply(_))
    }
}
