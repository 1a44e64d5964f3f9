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

    /// The request layer's patch type and the query parameters left to
    /// add, from `params`: the one place where apply's `fieldManager` and
    /// `force` go to the request layer's [`PatchType::Apply`] (which sends
    /// them), so they are not sent twice; other patches keep every
    /// parameter.
    pub(crate) fn request_parts(&self, params: &PatchParams) -> (PatchType, PatchParams) {
        let kind = match self {
            Patch::Apply(_) => {
                let apply = PatchType::Apply {
                    field_manager: params.field_manager.clone().unwrap_or_default(),
                    force: params.force,
                };
                let rest = PatchParams {
                    field_manager: None,
                    force: false,
                    ..params.clone()
                };
                return (apply, rest);
            }
            Patch::Json(_) => PatchType::Json,
            Patch::Merge(_) => PatchType::Merge,
            Patch::Strategic(_) => PatchType::StrategicMerge,
        };
        (kind, params.clone())
    }

    pub(crate) fn is_apply(&self) -> bool {
        matches!(self, Patch::Apply(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::QueryParams;

    fn pairs(params: &PatchParams) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        params.query_pairs(&mut out);
        out
    }

    #[test]
    fn apply_parameters_go_with_the_patch_type_only() {
        let params = PatchParams::apply("ctl").force().dry_run();
        let (kind, rest) = Patch::Apply(()).request_parts(&params);
        assert_eq!(
            kind,
            PatchType::Apply {
                field_manager: "ctl".into(),
                force: true
            }
        );
        assert_eq!(pairs(&rest), [("dryRun", "All".to_owned())]);
        let (kind, rest) = Patch::Merge(()).request_parts(&params);
        assert_eq!(kind, PatchType::Merge);
        assert_eq!(rest, params);
        let (kind, _) = Patch::Json(()).request_parts(&params);
        assert_eq!(kind, PatchType::Json);
        let (kind, _) = Patch::Strategic(()).request_parts(&params);
        assert_eq!(kind, PatchType::StrategicMerge);
    }
}
