//! The RBAC group (`pkg/apis/rbac/validation`): rules name verbs and
//! either resources (with API groups) or non-resource URLs; bindings refer
//! to a Role or ClusterRole of `rbac.authorization.k8s.io` that never
//! changes, and name subjects of a known kind.

use serde_json::{Value, json};

use super::{Errs, list, s};
use crate::validation::{self, NameRule};

const GROUP: &str = "rbac.authorization.k8s.io";

/// `ValidateRole` / `ValidateClusterRole` (`namespaced`: a Role).
pub(crate) fn role(e: &mut Errs, obj: &Value, namespaced: bool) {
    for (i, rule) in list(obj, "rules").iter().enumerate() {
        policy_rule(e, rule, namespaced, &format!("rules[{i}]"));
    }
}

/// `ValidatePolicyRule`.
fn policy_rule(e: &mut Errs, rule: &Value, namespaced: bool, p: &str) {
    if list(rule, "verbs").is_empty() {
        e.required(
            &format!("{p}.verbs"),
            "verbs must contain at least one value",
        );
    }
    let urls = list(rule, "nonResourceURLs");
    if !urls.is_empty() {
        let at = format!("{p}.nonResourceURLs");
        if namespaced {
            e.invalid(
                &at,
                &rule["nonResourceURLs"],
                "namespaced rules cannot apply to non-resource URLs",
            );
        }
        let resourceful = ["apiGroups", "resources", "resourceNames"]
            .iter()
            .any(|k| !list(rule, k).is_empty());
        if resourceful {
            e.invalid(
                &at,
                &rule["nonResourceURLs"],
                "rules cannot apply to both regular resources and non-resource URLs",
            );
        }
        return;
    }
    if list(rule, "apiGroups").is_empty() {
        e.required(
            &format!("{p}.apiGroups"),
            "resource rules must supply at least one api group",
        );
    }
    if list(rule, "resources").is_empty() {
        e.required(
            &format!("{p}.resources"),
            "resource rules must supply at least one resource",
        );
    }
}

/// `ValidateRoleBinding` / `ValidateClusterRoleBinding` and their updates
/// (`namespaced`: a RoleBinding). A User or Group subject's `apiGroup`
/// defaults to the RBAC group.
pub(crate) fn binding(e: &mut Errs, obj: &Value, old: Option<&Value>, namespaced: bool) {
    let rr = &obj["roleRef"];
    let group = s(rr, "apiGroup");
    if group != GROUP {
        e.not_supported("roleRef.apiGroup", &json!(group), &[GROUP]);
    }
    let kind = s(rr, "kind");
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&kind) {
        e.not_supported("roleRef.kind", &json!(kind), kinds);
    }
    let name = s(rr, "name");
    if name.is_empty() {
        e.required("roleRef.name", "");
    } else {
        e.invalid_each(
            "roleRef.name",
            name,
            validation::path_segment_problems(name),
        );
    }
    for (i, sub) in list(obj, "subjects").iter().enumerate() {
        subject(e, sub, namespaced, &format!("subjects[{i}]"));
    }
    if let Some(old) = old
        && old.get("roleRef") != obj.get("roleRef")
    {
        e.invalid("roleRef", rr, "cannot change roleRef");
    }
}

/// `ValidateRoleBindingSubject` after defaults.
fn subject(e: &mut Errs, sub: &Value, namespaced: bool, p: &str) {
    let name = s(sub, "name");
    if name.is_empty() {
        e.required(&format!("{p}.name"), "");
    }
    let group = s(sub, "apiGroup");
    match s(sub, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                e.invalid_each(
                    &format!("{p}.name"),
                    name,
                    validation::problems(NameRule::Subdomain, name),
                );
            }
            if !group.is_empty() {
                e.not_supported(&format!("{p}.apiGroup"), &json!(group), &[""]);
            }
            if !namespaced && s(sub, "namespace").is_empty() {
                e.required(&format!("{p}.namespace"), "");
            }
        }
        "User" | "Group" => {
            if !group.is_empty() && group != GROUP {
                e.not_supported(&format!("{p}.apiGroup"), &json!(group), &[GROUP]);
            }
        }
        other => e.not_supported(
            &format!("{p}.kind"),
            &json!(other),
            &["ServiceAccount", "User", "Group"],
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_and_bindings() {
        let mut e = Errs::default();
        role(&mut e, &json!({"rules": [{"verbs": []}]}), true);
        let fields: Vec<_> = e.0.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(
            fields,
            ["rules[0].verbs", "rules[0].apiGroups", "rules[0].resources"]
        );
        let rr = json!({"apiGroup": GROUP, "kind": "Role", "name": "r"});
        let ok = json!({"roleRef": rr, "subjects": [{"kind": "User", "name": "u"}]});
        let mut e = Errs::default();
        binding(&mut e, &ok, None, true);
        assert!(e.0.is_empty());
        let mut changed = ok.clone();
        changed["roleRef"]["name"] = json!("other");
        binding(&mut e, &changed, Some(&ok), true);
        assert_eq!(e.0[0].0, "roleRef");
    }
}
