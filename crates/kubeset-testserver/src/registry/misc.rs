//! Kinds with one or two rules of their own: Leases, Ingresses and
//! IngressClasses, PodDisruptionBudgets, HorizontalPodAutoscalers,
//! CertificateSigningRequests, ResourceSlices and the RBAC kinds.

use serde_json::{Value, json};

use super::{Strategy, Sub};
use crate::admission::builtin;
use crate::defaults;
use crate::fields::{CSRS, FieldSet, SLICES, Unknown};
use crate::printers::PDB_COLS;
use crate::printers::{self, Printer, Tail, named, or_none, s};
use crate::printers::{BINDING_COLS, HOLDER_COLS, HPA_COLS, INGRESS_CLASS_COLS, INGRESS_COLS};
use crate::resources::Resource;
use crate::validation::{Cause, NameRule};

/// Leases (`pkg/registry/coordination/lease`): no `generation`, and an
/// update must name the `resourceVersion` it replaces (leader election's
/// compare-and-swap).
pub(crate) struct Leases;

impl Strategy for Leases {
    fn tracks_generation(&self, _: &Resource, _: &Value) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn validate(&self, _: &Resource, obj: &Value, _: Option<&Value>) -> Vec<Cause> {
        builtin::collect(|e| builtin::coordination::lease(e, obj))
    }

    fn printer(&self) -> Option<Printer> {
        Some(named(
            HOLDER_COLS,
            |o| vec![json!(or_none(s(o, "/spec/holderIdentity")))],
            Tail::Age,
        ))
    }
}

/// A kind whose one rule of its own is its table printer.
pub(crate) struct Printed(Printer);

impl Strategy for Printed {
    fn printer(&self) -> Option<Printer> {
        Some(self.0)
    }
}

/// Ingresses.
pub(crate) static INGRESSES: Printed = Printed(named(INGRESS_COLS, printers::ingress, Tail::None));

/// IngressClasses.
pub(crate) static INGRESS_CLASSES: Printed = Printed(named(
    INGRESS_CLASS_COLS,
    printers::ingress_class,
    Tail::Age,
));

/// PodDisruptionBudgets.
pub(crate) static DISRUPTION_BUDGETS: Printed = Printed(named(PDB_COLS, printers::pdb, Tail::Age));

/// HorizontalPodAutoscalers.
pub(crate) struct Autoscalers;

impl Strategy for Autoscalers {
    fn on_create(&self, _: &Resource, obj: &mut Value) {
        defaults::hpa(obj);
    }

    fn printer(&self) -> Option<Printer> {
        Some(named(HPA_COLS, printers::hpa, Tail::Age))
    }
}

/// CertificateSigningRequests.
pub(crate) struct SigningRequests;

impl Strategy for SigningRequests {
    fn fields(&self, _: &Resource) -> FieldSet {
        FieldSet::builtin(CSRS, Unknown::NotSupported)
    }

    fn subresource(&self, name: &str) -> Option<Sub> {
        if name == "approval" {
            return Some(Sub::Approval);
        }
        super::scale(name)
    }
}

/// ResourceSlices.
pub(crate) struct ResourceSlices;

impl Strategy for ResourceSlices {
    fn fields(&self, _: &Resource) -> FieldSet {
        FieldSet::builtin(SLICES, Unknown::ResourceSlice)
    }
}

/// Roles and ClusterRoles: named as path segments; a Role's rules are
/// validated as namespaced, a ClusterRole's not.
pub(crate) struct Roles;

impl Strategy for Roles {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn validate(&self, res: &Resource, obj: &Value, _: Option<&Value>) -> Vec<Cause> {
        builtin::collect(|e| builtin::rbac::role(e, obj, res.namespaced))
    }
}

/// RoleBindings and ClusterRoleBindings: named as path segments; a
/// RoleBinding's subjects are validated as namespaced, a
/// ClusterRoleBinding's not.
pub(crate) struct RoleBindings;

impl Strategy for RoleBindings {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn validate(&self, res: &Resource, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
        builtin::collect(|e| builtin::rbac::binding(e, obj, old, res.namespaced))
    }

    fn printer(&self) -> Option<Printer> {
        Some(named(BINDING_COLS, printers::role_binding, Tail::None))
    }
}
