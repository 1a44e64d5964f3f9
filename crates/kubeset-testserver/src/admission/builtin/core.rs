//! The core group besides pods (`pkg/apis/core/validation`): Services,
//! Namespaces, PersistentVolumeClaims, Events, and the container resource
//! requirements pods and templates share.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{Errs, IntOrPercent, has, int, list, port_name_problems, port_num_problems, s};
use crate::validation;

/// `validateResourceRequirements` of a container's `resources` at `path`.
pub(crate) fn resources(e: &mut Errs, res: &Value, path: &str) {
    let limits = res.get("limits").and_then(Value::as_object);
    let lim_path = format!("{path}.limits");
    let req_path = format!("{path}.requests");
    for (name, q) in limits.into_iter().flatten() {
        let p = format!("{lim_path}[{name}]");
        resource_name(e, name, &p);
        quantity(e, name, q, &p);
    }
    for (name, q) in res
        .get("requests")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let p = format!("{req_path}[{name}]");
        resource_name(e, name, &p);
        quantity(e, name, q, &p);
        let overcommit = is_native(name) && !name.starts_with("hugepages-");
        match limits.and_then(|l| l.get(name)) {
            Some(l) => {
                let (rq, lq) = (parse_quantity(q), parse_quantity(l));
                if !overcommit && rq != lq {
                    e.invalid(
                        &req_path,
                        q,
                        &format!("must be equal to {name} limit of {}", qtext(l)),
                    );
                } else if rq.zip(lq).is_some_and(|(r, l)| r > l) {
                    e.invalid(
                        &req_path,
                        q,
                        &format!("must be less than or equal to {name} limit of {}", qtext(l)),
                    );
                }
            }
            None if !overcommit => {
                e.required(
                    &lim_path,
                    "Limit must be set for non overcommitable resources",
                );
            }
            None => {}
        }
    }
}

fn qtext(q: &Value) -> String {
    q.as_str().map_or_else(|| q.to_string(), str::to_owned)
}

/// `IsNativeResource`: no domain, or a `kubernetes.io/` one.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `validateContainerResourceName`.
fn resource_name(e: &mut Errs, name: &str, p: &str) {
    let msgs = validation::qualified_name_problems(name, "resource name");
    if !msgs.is_empty() {
        e.invalid_each(p, name, msgs);
        return;
    }
    const STANDARD: &[&str] = &[
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    ];
    let huge = name.starts_with("hugepages-");
    if !name.contains('/') {
        if !STANDARD.contains(&name) && !huge && !name.starts_with("requests.hugepages-") {
            e.invalid(
                p,
                &json!(name),
                "must be a standard resource type or fully qualified",
            );
        }
        if !["cpu", "memory", "ephemeral-storage"].contains(&name) && !huge {
            e.invalid(
                p,
                &json!(name),
                "must be a standard resource for containers",
            );
        }
    } else if !is_native(name)
        && (name.starts_with("requests.")
            || !validation::qualified_name_problems(&format!("requests.{name}"), "").is_empty())
    {
        e.invalid(
            p,
            &json!(name),
            "doesn't follow extended resource name standard",
        );
    }
}

/// `ValidateResourceQuantityValue`: not negative, whole for an extended
/// resource.
fn quantity(e: &mut Errs, name: &str, q: &Value, p: &str) {
    let Some(v) = parse_quantity(q) else { return };
    if v < 0.0 {
        e.invalid(p, &json!(qtext(q)), "must be greater than or equal to 0");
    }
    if !is_native(name) && v.fract() != 0.0 {
        e.invalid(p, &json!(qtext(q)), "must be an integer");
    }
}

/// A resource quantity's value (`1Gi`, `100m`, `1e3`, `-1`), or `None`
/// when it does not parse (decoding refuses those before validation).
pub(crate) fn parse_quantity(q: &Value) -> Option<f64> {
    if let Some(n) = q.as_f64() {
        return Some(n);
    }
    kubeset_api::types::Quantity(q.as_str()?.to_owned()).to_f64()
}

/// A Service's `type` after defaults.
fn service_type(spec: &Value) -> &str {
    match s(spec, "type") {
        "" => "ClusterIP",
        t => t,
    }
}

/// `ValidateServiceCreate` / `ValidateServiceUpdate` (`validateService`),
/// the checks of the fields a client sets; cluster IPs are
/// `crate::services`' and `crate::immutable`'s.
pub(crate) fn service(e: &mut Errs, obj: &Value, _old: Option<&Value>) {
    let spec = &obj["spec"];
    let ty = service_type(spec);
    let headless = s(spec, "clusterIP") == "None"
        || list(spec, "clusterIPs").first().and_then(Value::as_str) == Some("None");
    let ports = list(spec, "ports");
    if ports.is_empty() && !headless && ty != "ExternalName" {
        e.required("spec.ports", "");
    }
    match ty {
        "LoadBalancer" | "NodePort" if headless => e.invalid(
            "spec.clusterIPs[0]",
            &json!("None"),
            &format!("may not be set to 'None' for {ty} services"),
        ),
        "ExternalName" => {
            let cname = s(spec, "externalName");
            let cname = cname.strip_suffix('.').unwrap_or(cname);
            if cname.is_empty() {
                e.required("spec.externalName", "");
            } else {
                e.dns_subdomain("spec.externalName", cname);
            }
        }
        _ => {}
    }
    let mut names = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        service_port(
            e,
            p,
            ports.len() > 1,
            &mut names,
            &format!("spec.ports[{i}]"),
        );
    }
    if let Some(sel) = spec.get("selector") {
        e.labels("spec.selector", sel);
    }
    let affinity = match s(spec, "sessionAffinity") {
        "" => "None",
        a => a,
    };
    if !["ClientIP", "None"].contains(&affinity) {
        e.not_supported(
            "spec.sessionAffinity",
            &json!(affinity),
            &["ClientIP", "None"],
        );
    }
    let types = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
    if !types.contains(&ty) {
        e.not_supported("spec.type", &json!(ty), &types);
    }
    service_port_sets(e, ports, ty);
}

/// The per-type and cross-port rules: no node port on a ClusterIP
/// Service, no node port or (protocol, port) twice.
fn service_port_sets(e: &mut Errs, ports: &[Value], ty: &str) {
    if ty == "ClusterIP" {
        for (i, p) in ports.iter().enumerate() {
            if int(p, "nodePort").unwrap_or(0) != 0 {
                e.forbidden(
                    &format!("spec.ports[{i}].nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                );
            }
        }
    }
    let proto = |p: &Value| match s(p, "protocol") {
        "" => "TCP".to_owned(),
        x => x.to_owned(),
    };
    let mut node_ports = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        let np = int(p, "nodePort").unwrap_or(0);
        if np != 0 && !node_ports.insert((proto(p), np)) {
            e.duplicate(&format!("spec.ports[{i}].nodePort"), &np.into());
        }
    }
    let mut seen = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        let port = int(p, "port").unwrap_or(0);
        if !seen.insert((proto(p), port)) {
            e.duplicate(
                &format!("spec.ports[{i}]"),
                &json!({"port": port, "protocol": proto(p)}),
            );
        }
    }
}

/// `validateServicePort` (protocol and targetPort defaulted: TCP, the
/// port).
fn service_port<'a>(
    e: &mut Errs,
    sp: &'a Value,
    require_name: bool,
    names: &mut BTreeSet<&'a str>,
    p: &str,
) {
    let name = s(sp, "name");
    if require_name && name.is_empty() {
        e.required(&format!("{p}.name"), "");
    } else if !name.is_empty() {
        e.dns_label(&format!("{p}.name"), name);
        if !names.insert(name) {
            e.duplicate(&format!("{p}.name"), &json!(name));
        }
    }
    let port = int(sp, "port").unwrap_or(0);
    for m in port_num_problems(port) {
        e.invalid(&format!("{p}.port"), &port.into(), &m);
    }
    super::pod::protocol(e, sp, &format!("{p}.protocol"));
    let target = match sp.get("targetPort") {
        None | Some(Value::Null) => json!(port),
        Some(Value::String(t)) if t.is_empty() => json!(port),
        Some(t) if t.as_i64() == Some(0) => json!(port),
        Some(t) => t.clone(),
    };
    let tp = format!("{p}.targetPort");
    match &target {
        Value::String(t) => e.invalid_each(&tp, t, port_name_problems(t)),
        other => {
            let n = IntOrPercent::of(other).value();
            for m in port_num_problems(n) {
                e.invalid(&tp, &n.into(), &m);
            }
        }
    }
    if let Some(ap) = sp.get("appProtocol").and_then(Value::as_str) {
        e.invalid_each(
            &format!("{p}.appProtocol"),
            ap,
            validation::qualified_name_problems(ap, "appProtocol"),
        );
    }
}

/// `ValidateNamespace`: each of `spec.finalizers` a qualified name, and a
/// standard one when it has no `/`.
pub(crate) fn namespace(e: &mut Errs, obj: &Value) {
    for f in list(&obj["spec"], "finalizers") {
        let f = f.as_str().unwrap_or_default();
        e.invalid_each(
            "spec.finalizers",
            f,
            validation::qualified_name_problems(f, "finalizer name"),
        );
        if !f.contains('/') && f != "kubernetes" {
            e.invalid(
                "spec.finalizers",
                &json!(f),
                "name is neither a standard finalizer name nor is it fully qualified",
            );
        }
    }
}

/// `ValidatePersistentVolumeClaimSpec` (on create; an update keeps the
/// spec as the registry's own rule checks).
pub(crate) fn pvc(e: &mut Errs, obj: &Value) {
    let spec = &obj["spec"];
    let modes = list(spec, "accessModes");
    if modes.is_empty() {
        e.required("spec.accessModes", "at least 1 access mode is required");
    }
    if let Some(sel) = spec.get("selector").filter(|v| !v.is_null()) {
        super::label_selector(e, sel, "spec.selector");
    }
    const MODES: &[&str] = &[
        "ReadOnlyMany",
        "ReadWriteMany",
        "ReadWriteOnce",
        "ReadWriteOncePod",
    ];
    let (mut once_pod, mut other) = (false, false);
    for m in modes {
        let m = m.as_str().unwrap_or_default();
        if !MODES.contains(&m) {
            e.not_supported("spec.accessModes", &json!(m), MODES);
        } else if m == "ReadWriteOncePod" {
            once_pod = true;
        } else {
            other = true;
        }
    }
    if once_pod && other {
        e.forbidden(
            "spec.accessModes",
            "may not use ReadWriteOncePod with other access modes",
        );
    }
    let storage = "spec.resources[storage]";
    match spec.pointer("/resources/requests/storage") {
        None => e.required(storage, ""),
        Some(q) => {
            if parse_quantity(q).is_some_and(|v| v <= 0.0) {
                e.invalid(storage, &json!(qtext(q)), "must be greater than zero");
            }
        }
    }
    let class = s(spec, "storageClassName");
    if !class.is_empty() {
        e.dns_subdomain("spec.storageClassName", class);
    }
    if has(spec, "volumeMode") {
        let vm = s(spec, "volumeMode");
        if !["Block", "Filesystem"].contains(&vm) {
            e.not_supported("spec.volumeMode", &json!(vm), &["Block", "Filesystem"]);
        }
    }
}

/// `legacyValidateEvent` (what a core/v1 Event write is checked for).
pub(crate) fn event(e: &mut Errs, obj: &Value) {
    let ns = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let inv_ns = obj
        .pointer("/involvedObject/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let path = "involvedObject.namespace";
    let mismatch = "does not match event.namespace";
    if s(obj, "eventTime").is_empty() {
        if (inv_ns.is_empty() && !ns.is_empty() && ns != "default")
            || (!inv_ns.is_empty() && !ns.is_empty() && ns != inv_ns)
        {
            e.invalid(path, &json!(inv_ns), mismatch);
        }
    } else {
        if inv_ns.is_empty() && ns != "default" && ns != "kube-system" {
            e.invalid(path, &json!(inv_ns), mismatch);
        }
        let rc = s(obj, "reportingComponent");
        if rc.is_empty() {
            e.required("reportingComponent", "");
        }
        e.invalid_each(
            "reportingComponent",
            rc,
            validation::qualified_name_problems(rc, "name"),
        );
        for (key, limit) in [("reportingInstance", 128), ("action", 128), ("reason", 128)] {
            let v = s(obj, key);
            if v.is_empty() {
                e.required(key, "");
            }
            if v.len() > limit {
                e.invalid(
                    key,
                    &json!(""),
                    &format!("can have at most {limit} characters"),
                );
            }
        }
        if s(obj, "message").len() > 1024 {
            e.invalid("message", &json!(""), "can have at most 1024 characters");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities() {
        assert_eq!(parse_quantity(&json!("100m")), Some(0.1));
        assert_eq!(parse_quantity(&json!("1Gi")), Some(1_073_741_824.0));
        assert_eq!(parse_quantity(&json!("1e3")), Some(1000.0));
        assert_eq!(parse_quantity(&json!("-1")), Some(-1.0));
        assert_eq!(parse_quantity(&json!(2)), Some(2.0));
        assert_eq!(parse_quantity(&json!("1Q")), None);
    }

    #[test]
    fn resource_rules() {
        let mut e = Errs::default();
        resources(
            &mut e,
            &json!({"requests": {"memory": "2Gi", "example.com/d": "1"}, "limits": {"memory": "1Gi"}}),
            "r",
        );
        let got: Vec<_> = e.0.iter().map(|c| (c.0.as_str(), c.1)).collect();
        assert_eq!(
            got,
            [
                ("r.limits", "FieldValueRequired"),
                ("r.requests", "FieldValueInvalid")
            ]
        );
    }

    #[test]
    fn service_rules() {
        let mut e = Errs::default();
        service(&mut e, &json!({"spec": {"ports": [{"port": 0}]}}), None);
        let fields: Vec<_> = e.0.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(fields, ["spec.ports[0].port", "spec.ports[0].targetPort"]);
        let mut e = Errs::default();
        service(&mut e, &json!({"spec": {"clusterIP": "None"}}), None);
        assert!(e.0.is_empty());
    }
}
