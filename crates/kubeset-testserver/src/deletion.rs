//! Deletion propagation, as kube-apiserver's generic registry and the
//! garbage collector do it.
//!
//! - **The server** ([`finalizers_after`], used by `Store::delete`): a
//!   DELETE with `propagationPolicy: Foreground` leaves the object with
//!   `deletionTimestamp` and the `foregroundDeletion` finalizer, `Orphan`
//!   (or the legacy `orphanDependents: true`) with the `orphan` finalizer;
//!   `Background` (the default of every served version) removes both, so
//!   an object with no other finalizer goes at once. A later DELETE may
//!   switch the policy, as upstream's `deletionFinalizersForGarbageCollection`.
//!   Without a garbage collector (kube-apiserver alone, or this server
//!   without controllers) such an object stays until someone removes the
//!   finalizer.
//! - **The collector** ([`crate::gc::propagate`], one pass of controllers-lite):
//!   `orphan` removes the owner's reference from every dependent, then the
//!   finalizer; `foregroundDeletion` deletes the dependents (in the
//!   foreground too) and removes the finalizer once none is left. Unlike
//!   the real collector it waits for every dependent, not only those with
//!   `blockOwnerDeletion`.

use serde_json::{Value, json};

use crate::status::ApiError;
use crate::wire::Query;

/// `metav1.FinalizerOrphanDependents`.
pub(crate) const ORPHAN: &str = "orphan";
/// `metav1.FinalizerDeleteDependents`.
pub(crate) const FOREGROUND: &str = "foregroundDeletion";

/// `DeleteOptions.propagationPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Propagation {
    Foreground,
    Background,
    Orphan,
}

/// What a DELETE asks for besides the name.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeleteOptions {
    /// `preconditions` (`uid`, `resourceVersion`).
    pub(crate) preconditions: Value,
    /// `dryRun: [All]` (body or query).
    pub(crate) dry_run: bool,
    /// The policy asked for; `None`: the object's finalizers, else
    /// background.
    pub(crate) propagation: Option<Propagation>,
}

impl DeleteOptions {
    /// Reads the body's `DeleteOptions` (`Null` when there is none) and
    /// the query's `propagationPolicy`/`orphanDependents`/`dryRun`,
    /// refused (422) as upstream's `ValidateDeleteOptions` refuses them.
    pub(crate) fn parse(body: &Value, query: &Query) -> Result<Self, ApiError> {
        let text = |k: &str| {
            body.get(k)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| query.get(k).map(str::to_owned))
        };
        let orphan = body
            .get("orphanDependents")
            .and_then(Value::as_bool)
            .or_else(|| query.get("orphanDependents").map(|v| v == "true"));
        let policy = text("propagationPolicy");
        let invalid = |reason: &str, message: String| {
            ApiError::invalid_kind(
                "DeleteOptions",
                "meta.k8s.io",
                "",
                &[("propagationPolicy", reason, message)],
            )
        };
        let propagation = match (policy.as_deref(), orphan) {
            (Some(p), Some(_)) => {
                return Err(invalid(
                    "FieldValueInvalid",
                    format!(
                        "Invalid value: \"{p}\": orphanDependents and deletionPropagation cannot be both set"
                    ),
                ));
            }
            (Some("Foreground"), None) => Some(Propagation::Foreground),
            (Some("Background"), None) => Some(Propagation::Background),
            (Some("Orphan"), None) => Some(Propagation::Orphan),
            (Some(other), None) => {
                return Err(invalid(
                    "FieldValueNotSupported",
                    format!(
                        "Unsupported value: {}: supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"",
                        serde_json::to_string(other).unwrap_or_default()
                    ),
                ));
            }
            (None, Some(true)) => Some(Propagation::Orphan),
            (None, Some(false)) => Some(Propagation::Background),
            (None, None) => None,
        };
        let dry_run = query.get("dryRun") == Some("All")
            || body
                .get("dryRun")
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(|x| x == "All"));
        Ok(Self {
            preconditions: body.get("preconditions").cloned().unwrap_or(Value::Null),
            dry_run,
            propagation,
        })
    }
}

/// The finalizers an object keeps when deleted with `policy`: its own
/// without `orphan` and `foregroundDeletion`, then the one the policy (or,
/// with none given, the object's existing choice) asks for.
pub(crate) fn finalizers_after(existing: &[Value], policy: Option<Propagation>) -> Vec<Value> {
    let has = |f: &str| existing.iter().any(|x| x == f);
    let wanted = match policy {
        Some(p) => p,
        None if has(ORPHAN) => Propagation::Orphan,
        None if has(FOREGROUND) => Propagation::Foreground,
        None => Propagation::Background,
    };
    let mut out: Vec<Value> = existing
        .iter()
        .filter(|f| *f != ORPHAN && *f != FOREGROUND)
        .cloned()
        .collect();
    match wanted {
        Propagation::Orphan => out.push(json!(ORPHAN)),
        Propagation::Foreground => out.push(json!(FOREGROUND)),
        Propagation::Background => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finalizers_as_upstream() {
        let f = |v: &[&str]| v.iter().map(|s| json!(s)).collect::<Vec<_>>();
        let fg = Some(Propagation::Foreground);
        assert_eq!(finalizers_after(&f(&[]), None), f(&[]));
        assert_eq!(finalizers_after(&f(&["x"]), fg), f(&["x", FOREGROUND]));
        assert_eq!(
            finalizers_after(&f(&[FOREGROUND]), Some(Propagation::Orphan)),
            f(&[ORPHAN])
        );
        assert_eq!(finalizers_after(&f(&[ORPHAN]), None), f(&[ORPHAN]));
        assert_eq!(
            finalizers_after(&f(&[ORPHAN, "x"]), Some(Propagation::Background)),
            f(&["x"])
        );
    }

    #[test]
    fn options_refused_as_upstream() {
        let q = Query::parse(None);
        let both = json!({"propagationPolicy": "Orphan", "orphanDependents": false});
        let e = DeleteOptions::parse(&both, &q).unwrap_err();
        assert_eq!(
            e.message,
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: \"Orphan\": orphanDependents and deletionPropagation cannot be both set"
        );
        let odd = json!({"propagationPolicy": "Sideways"});
        assert_eq!(DeleteOptions::parse(&odd, &q).unwrap_err().code, 422);
        let q = Query::parse(Some("propagationPolicy=Foreground"));
        let o = DeleteOptions::parse(&Value::Null, &q).unwrap();
        assert_eq!(o.propagation, Some(Propagation::Foreground));
        let legacy = json!({"orphanDependents": true});
        let o = DeleteOptions::parse(&legacy, &Query::parse(None)).unwrap();
        assert_eq!(o.propagation, Some(Propagation::Orphan));
    }
}
