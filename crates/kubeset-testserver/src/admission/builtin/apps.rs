//! The apps group (`pkg/apis/apps/validation`): Deployments,
//! ReplicaSets, StatefulSets and DaemonSets: replicas, selectors that
//! select their template, the template (a pod template that restarts
//! `Always`), update strategies, and the update rules (an immutable
//! selector; a StatefulSet's spec beyond its mutable fields).

use serde_json::{Value, json};

use super::pod::{restart_policy, template};
use super::{
    Errs, IntOrPercent, go_fields, go_strategy, has, int, int_or_percent, label_selector, list, s,
    selector_is_empty, selects_template,
};

/// The checks of a replicated template (`ValidatePodTemplateSpecForReplicaSet`
/// and its StatefulSet twin): the selector selects it (unless empty), the
/// template is valid, restarts `Always`, has no `activeDeadlineSeconds`.
fn replica_template(e: &mut Errs, spec: &Value, converts: bool, kind: &str) {
    if !converts {
        e.invalid_selector("spec.selector", &spec["selector"], "invalid label selector");
        return;
    }
    let tmpl = &spec["template"];
    selects_template(e, &spec["selector"], tmpl);
    template(e, tmpl, "spec.template");
    template_restart_always(e, &tmpl["spec"], kind);
}

/// A controller's template restarts `Always` and has no
/// `activeDeadlineSeconds`.
fn template_restart_always(e: &mut Errs, tspec: &Value, kind: &str) {
    let rp = restart_policy(tspec);
    if rp != "Always" {
        e.not_supported("spec.template.spec.restartPolicy", &json!(rp), &["Always"]);
    }
    if has(tspec, "activeDeadlineSeconds") {
        e.forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            &format!("activeDeadlineSeconds in {kind} is not Supported"),
        );
    }
}

/// The selector of a Deployment or ReplicaSet: required, valid, not
/// empty. Returns whether it converts to a selector.
fn required_selector(e: &mut Errs, spec: &Value, kind: &str) -> bool {
    let sel = &spec["selector"];
    if sel.is_null() {
        e.required("spec.selector", "");
        return true;
    }
    let converts = label_selector(e, sel, "spec.selector");
    if selector_is_empty(sel) {
        e.invalid_selector(
            "spec.selector",
            sel,
            &format!("empty selector is invalid for {kind}"),
        );
    }
    converts
}

/// `ValidateImmutableField` of `spec.selector`.
fn immutable_selector(e: &mut Errs, obj: &Value, old: Option<&Value>) {
    if let Some(old) = old
        && obj.pointer("/spec/selector") != old.pointer("/spec/selector")
    {
        e.invalid_selector(
            "spec.selector",
            obj.pointer("/spec/selector").unwrap_or(&Value::Null),
            "field is immutable",
        );
    }
}

/// `ValidateDeployment` / `ValidateDeploymentUpdate` (replicas default
/// to 1, the strategy to RollingUpdate 25%/25%, progressDeadlineSeconds to
/// 600).
pub(crate) fn deployment(e: &mut Errs, obj: &Value, old: Option<&Value>) {
    let spec = &obj["spec"];
    e.nonnegative("spec.replicas", int(spec, "replicas"));
    let converts = required_selector(e, spec, "deployment");
    replica_template(e, spec, converts, "ReplicaSet");
    strategy(e, &spec["strategy"]);
    let min_ready = int(spec, "minReadySeconds").unwrap_or(0);
    e.nonnegative("spec.minReadySeconds", Some(min_ready));
    e.nonnegative(
        "spec.revisionHistoryLimit",
        int(spec, "revisionHistoryLimit"),
    );
    let pds = int(spec, "progressDeadlineSeconds").unwrap_or(600);
    e.nonnegative("spec.progressDeadlineSeconds", Some(pds));
    if pds <= min_ready {
        e.invalid(
            "spec.progressDeadlineSeconds",
            &pds.into(),
            "must be greater than minReadySeconds",
        );
    }
    immutable_selector(e, obj, old);
}

/// `ValidateDeploymentStrategy` after defaults.
fn strategy(e: &mut Errs, st: &Value) {
    let ty = match s(st, "type") {
        "" => "RollingUpdate",
        t => t,
    };
    let ru = st.get("rollingUpdate").filter(|v| !v.is_null());
    match ty {
        "Recreate" => {
            if ru.is_some() {
                e.forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                );
            }
        }
        "RollingUpdate" => {
            let p = "spec.strategy.rollingUpdate";
            let dflt = json!("25%");
            let unavailable = ru.and_then(|r| r.get("maxUnavailable")).unwrap_or(&dflt);
            let surge = ru.and_then(|r| r.get("maxSurge")).unwrap_or(&dflt);
            int_or_percent(e, unavailable, &format!("{p}.maxUnavailable"), false);
            int_or_percent(e, surge, &format!("{p}.maxSurge"), false);
            if IntOrPercent::of(unavailable).value() == 0 && IntOrPercent::of(surge).value() == 0 {
                e.invalid(
                    &format!("{p}.maxUnavailable"),
                    unavailable,
                    "may not be 0 when `maxSurge` is 0",
                );
            }
            if matches!(IntOrPercent::of(unavailable), IntOrPercent::Percent(Some(v)) if v > 100) {
                e.invalid(
                    &format!("{p}.maxUnavailable"),
                    unavailable,
                    "must not be greater than 100%",
                );
            }
        }
        _ => e.not_supported_shown(
            "spec.strategy",
            &go_strategy(
                st,
                &[
                    ("maxUnavailable", "MaxUnavailable"),
                    ("maxSurge", "MaxSurge"),
                ],
                &[],
            ),
            &["Recreate", "RollingUpdate"],
        ),
    }
}

/// `ValidateReplicaSet` / `ValidateReplicaSetUpdate`.
pub(crate) fn replicaset(e: &mut Errs, obj: &Value, old: Option<&Value>) {
    let spec = &obj["spec"];
    e.nonnegative("spec.replicas", int(spec, "replicas"));
    e.nonnegative("spec.minReadySeconds", int(spec, "minReadySeconds"));
    let converts = required_selector(e, spec, "deployment");
    replica_template(e, spec, converts, "ReplicaSet");
    immutable_selector(e, obj, old);
}

/// `ValidateStatefulSet` / `ValidateStatefulSetUpdate`.
pub(crate) fn statefulset(e: &mut Errs, obj: &Value, old: Option<&Value>) {
    let spec = &obj["spec"];
    let pmp = s(spec, "podManagementPolicy");
    if !["", "OrderedReady", "Parallel"].contains(&pmp) {
        e.invalid(
            "spec.podManagementPolicy",
            &json!(pmp),
            "must be 'OrderedReady' or 'Parallel'",
        );
    }
    sts_strategy(e, &spec["updateStrategy"]);
    e.nonnegative("spec.replicas", int(spec, "replicas"));
    e.nonnegative("spec.minReadySeconds", int(spec, "minReadySeconds"));
    let service = s(spec, "serviceName");
    if old.is_none() && !service.is_empty() {
        e.dns_label("spec.serviceName", service);
    }
    let sel = &spec["selector"];
    let mut converts = true;
    if sel.is_null() {
        e.required("spec.selector", "");
    } else {
        converts = label_selector(e, sel, "spec.selector");
        if selector_is_empty(sel) {
            e.invalid_selector(
                "spec.selector",
                sel,
                "empty selector is invalid for statefulset",
            );
        }
    }
    if converts {
        selects_template(e, sel, &spec["template"]);
        let mut tmpl = spec["template"].clone();
        if let Some(ts) = tmpl.get_mut("spec").and_then(Value::as_object_mut) {
            // Set by the controller from the set's identity.
            ts.remove("subdomain");
            ts.remove("hostname");
            claim_volumes(ts, list(spec, "volumeClaimTemplates"));
        }
        template(e, &tmpl, "spec.template");
    } else {
        e.invalid_selector("spec.selector", sel, "");
    }
    template_restart_always(e, &spec["template"]["spec"], "StatefulSet");
    if let Some(old) = old {
        sts_update(e, spec, &old["spec"]);
    }
}

/// The volumes a StatefulSet's pods get from its claim templates, added
/// to its template's (replacing those of the same name) before the
/// template is validated, as upstream's `volumesToAddForTemplates`: a
/// container may mount a claim template.
fn claim_volumes(ts: &mut serde_json::Map<String, Value>, claims: &[Value]) {
    if claims.is_empty() {
        return;
    }
    let names: Vec<&str> = claims.iter().map(|c| s(&c["metadata"], "name")).collect();
    let mut vols: Vec<Value> = names
        .iter()
        .map(|n| json!({"name": n, "persistentVolumeClaim": {"claimName": n}}))
        .collect();
    let own = ts.get("volumes").and_then(Value::as_array);
    let kept = own
        .into_iter()
        .flatten()
        .filter(|v| !names.contains(&s(v, "name")));
    vols.extend(kept.cloned());
    ts.insert("volumes".into(), Value::Array(vols));
}

/// A StatefulSet's `updateStrategy` after defaults.
fn sts_strategy(e: &mut Errs, st: &Value) {
    let ru = st.get("rollingUpdate").filter(|v| !v.is_null());
    match s(st, "type") {
        "" | "RollingUpdate" => {
            if let Some(ru) = ru {
                let p = "spec.updateStrategy.rollingUpdate";
                e.nonnegative(&format!("{p}.partition"), int(ru, "partition"));
                if let Some(mu) = ru.get("maxUnavailable").filter(|v| !v.is_null()) {
                    let mp = format!("{p}.maxUnavailable");
                    int_or_percent(e, mu, &mp, false);
                    if IntOrPercent::of(mu).value() == 0 {
                        e.invalid(&mp, mu, "cannot be 0");
                    }
                    int_or_percent_max(e, mu, &mp);
                }
            }
        }
        "OnDelete" => {
            if let Some(ru) = ru {
                e.invalid_shown(
                    "spec.updateStrategy.rollingUpdate",
                    &go_fields(
                        ru,
                        &[
                            ("partition", "Partition"),
                            ("maxUnavailable", "MaxUnavailable"),
                        ],
                        &["partition"],
                    ),
                    "only allowed for updateStrategy 'RollingUpdate'",
                );
            }
        }
        _ => e.invalid_shown(
            "spec.updateStrategy",
            &go_strategy(
                st,
                &[
                    ("partition", "Partition"),
                    ("maxUnavailable", "MaxUnavailable"),
                ],
                &["partition"],
            ),
            "must be 'RollingUpdate' or 'OnDelete'",
        ),
    }
}

fn int_or_percent_max(e: &mut Errs, v: &Value, path: &str) {
    if matches!(IntOrPercent::of(v), IntOrPercent::Percent(Some(p)) if p > 100) {
        e.invalid(path, v, "must not be greater than 100%");
    }
}

/// Only `replicas`, `ordinals`, `template`, `updateStrategy`,
/// `revisionHistoryLimit`, `persistentVolumeClaimRetentionPolicy` and
/// `minReadySeconds` of a StatefulSet's spec may change.
fn sts_update(e: &mut Errs, new: &Value, old: &Value) {
    const MUTABLE: &[&str] = &[
        "replicas",
        "ordinals",
        "template",
        "updateStrategy",
        "revisionHistoryLimit",
        "persistentVolumeClaimRetentionPolicy",
        "minReadySeconds",
    ];
    let rest = |v: &Value| -> Value {
        let mut m = v.as_object().cloned().unwrap_or_default();
        m.retain(|k, x| !MUTABLE.contains(&k.as_str()) && !x.is_null());
        // Defaults the registry writes when absent.
        m.entry("podManagementPolicy")
            .or_insert(json!("OrderedReady"));
        Value::Object(m)
    };
    if rest(new) != rest(old) {
        e.forbidden(
            "spec",
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        );
    }
}

/// `ValidateDaemonSet` / `ValidateDaemonSetUpdate` (the update strategy
/// defaults to RollingUpdate with maxUnavailable 1, maxSurge 0).
pub(crate) fn daemonset(e: &mut Errs, obj: &Value, old: Option<&Value>) {
    let spec = &obj["spec"];
    immutable_selector(e, obj, old);
    let sel = &spec["selector"];
    if sel.is_null() || label_selector(e, sel, "spec.selector") {
        selects_template(e, sel, &spec["template"]);
    }
    if !sel.is_null() && selector_is_empty(sel) {
        e.invalid(
            "spec.selector",
            sel,
            "empty selector is invalid for daemonset",
        );
    }
    template(e, &spec["template"], "spec.template");
    template_restart_always(e, &spec["template"]["spec"], "DaemonSet");
    e.nonnegative("spec.minReadySeconds", int(spec, "minReadySeconds"));
    e.nonnegative("spec.templateGeneration", int(spec, "templateGeneration"));
    ds_strategy(e, &spec["updateStrategy"]);
    e.nonnegative(
        "spec.revisionHistoryLimit",
        int(spec, "revisionHistoryLimit"),
    );
}

/// `ValidateDaemonSetUpdateStrategy` after defaults.
fn ds_strategy(e: &mut Errs, st: &Value) {
    match s(st, "type") {
        "OnDelete" => {}
        "" | "RollingUpdate" => {
            let p = "spec.updateStrategy.rollingUpdate";
            let ru = st.get("rollingUpdate").cloned().unwrap_or(json!({}));
            let unavailable = ru.get("maxUnavailable").cloned().unwrap_or(json!(1));
            let surge = ru.get("maxSurge").cloned().unwrap_or(json!(0));
            let (up, sp) = (format!("{p}.maxUnavailable"), format!("{p}.maxSurge"));
            int_or_percent(e, &unavailable, &up, false);
            int_or_percent(e, &surge, &sp, false);
            int_or_percent_max(e, &unavailable, &up);
            int_or_percent_max(e, &surge, &sp);
            let has_u = IntOrPercent::of(&unavailable).value() != 0;
            let has_s = IntOrPercent::of(&surge).value() != 0;
            if has_u && has_s {
                e.invalid(
                    &sp,
                    &surge,
                    "may not be set when maxUnavailable is non-zero",
                );
            } else if !has_u && !has_s {
                e.required(&up, "cannot be 0 when maxSurge is 0");
            }
        }
        _ => e.not_supported_shown(
            "spec.updateStrategy",
            &go_strategy(
                st,
                &[
                    ("maxUnavailable", "MaxUnavailable"),
                    ("maxSurge", "MaxSurge"),
                ],
                &[],
            ),
            &["RollingUpdate", "OnDelete"],
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kind's validation.
    type Check = fn(&mut Errs, &Value, Option<&Value>);

    fn fields(f: Check, obj: &Value) -> Vec<String> {
        let mut e = Errs::default();
        f(&mut e, obj, None);
        e.0.into_iter().map(|c| c.0).collect()
    }

    #[test]
    fn deployments() {
        let ok = json!({"spec": {"selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
        assert!(fields(deployment, &ok).is_empty());
        let mut none = ok.clone();
        none["spec"].as_object_mut().unwrap().remove("selector");
        assert_eq!(
            fields(deployment, &none),
            ["spec.selector", "spec.template.metadata.labels"]
        );
        let mut slow = ok.clone();
        slow["spec"]["minReadySeconds"] = json!(700);
        assert_eq!(fields(deployment, &slow), ["spec.progressDeadlineSeconds"]);
    }

    #[test]
    fn daemonsets_and_statefulsets() {
        let ds = json!({"spec": {"template": {"metadata": {"labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]}},
            "updateStrategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}}});
        assert_eq!(
            fields(daemonset, &ds),
            [
                "spec.template.metadata.labels",
                "spec.updateStrategy.rollingUpdate.maxUnavailable"
            ]
        );
        let sts = json!({"spec": {"selector": {"matchLabels": {"a": "b"}}, "podManagementPolicy": "Random",
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
        assert_eq!(fields(statefulset, &sts), ["spec.podManagementPolicy"]);
    }

    /// A selector that misses the template's labels is refused for every
    /// kind; an empty one selects them (the sets that refuse an empty
    /// selector say so on `spec.selector`).
    #[test]
    fn the_selector_must_select_the_template() {
        let with = |sel: Value| {
            json!({"spec": {"selector": sel, "template": {"metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
        };
        let kinds: [(&str, Check); 4] = [
            ("deployment", deployment),
            ("replicaset", replicaset),
            ("statefulset", statefulset),
            ("daemonset", daemonset),
        ];
        let labels = "spec.template.metadata.labels".to_owned();
        for (kind, f) in kinds {
            let miss = fields(f, &with(json!({"matchLabels": {"a": "c"}})));
            assert!(miss.contains(&labels), "{kind}: {miss:?}");
            let by_expression = with(json!({"matchExpressions": [
                {"key": "a", "operator": "In", "values": ["b"]}]}));
            assert!(!fields(f, &by_expression).contains(&labels), "{kind}");
            let empty = fields(f, &with(json!({})));
            assert!(!empty.contains(&labels), "{kind}: {empty:?}");
        }
    }
}
