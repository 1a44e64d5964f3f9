//! Pods and pod templates (`ValidatePodCreate`, `ValidatePodUpdate`,
//! `ValidatePodTemplateSpec`, `ValidatePodSpec` of
//! `pkg/apis/core/validation`): containers, ports, env, mounts,
//! resources, volumes, policies, tolerations, and what a pod update may
//! change (images, `activeDeadlineSeconds` downwards, added tolerations).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::{Errs, has, int, list, port_name_problems, port_num_problems, s};

/// The volume sources of a `VolumeSource`, in upstream's order.
const SOURCES: &[&str] = &[
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
    "image",
];

const MAX_INT32: i64 = 2_147_483_647;

/// A Pod: its spec on create; on an update the spec too, then what may
/// change.
pub(crate) fn pod(e: &mut Errs, obj: &Value, old: Option<&Value>) {
    let spec = &obj["spec"];
    pod_spec(e, spec, "spec", true);
    let Some(old) = old else {
        if !list(spec, "ephemeralContainers").is_empty() {
            e.forbidden("spec.ephemeralContainers", "cannot be set on create");
        }
        return;
    };
    pod_update(e, spec, &old["spec"]);
}

/// `ValidatePodTemplateSpec` of the template at `path` (its labels are
/// reported at `<path>.labels`, as upstream's path is written).
pub(crate) fn template(e: &mut Errs, tmpl: &Value, path: &str) {
    if let Some(l) = tmpl.pointer("/metadata/labels") {
        e.labels(&format!("{path}.labels"), l);
    }
    let spec = &tmpl["spec"];
    pod_spec(e, spec, &format!("{path}.spec"), false);
    if !list(spec, "ephemeralContainers").is_empty() {
        e.forbidden(
            &format!("{path}.spec.ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        );
    }
}

/// A pod spec's `restartPolicy` after defaults.
pub(crate) fn restart_policy(spec: &Value) -> &str {
    match s(spec, "restartPolicy") {
        "" => "Always",
        p => p,
    }
}

/// `ValidatePodSpec` (`is_pod`: a Pod's own spec, whose containers'
/// requests are defaulted from their limits).
fn pod_spec(e: &mut Errs, spec: &Value, path: &str, is_pod: bool) {
    let vols = volumes(e, spec, path);
    let containers = list(spec, "containers");
    let cpath = format!("{path}.containers");
    if containers.is_empty() {
        e.required(&cpath, "");
    }
    let mut names = BTreeSet::new();
    for (i, c) in containers.iter().enumerate() {
        let p = format!("{cpath}[{i}]");
        container(e, c, &p, &vols, is_pod);
        if !names.insert(s(c, "name")) {
            e.duplicate(&format!("{p}.name"), &json!(s(c, "name")));
        }
        container_restart_policy(e, c, &p);
    }
    for (i, c) in list(spec, "initContainers").iter().enumerate() {
        let p = format!("{path}.initContainers[{i}]");
        container(e, c, &p, &vols, is_pod);
        if s(c, "restartPolicy") != "Always" {
            container_restart_policy(e, c, &p);
        }
        let name = s(c, "name");
        if names.contains(name) {
            e.duplicate(&format!("{p}.name"), &json!(name));
        } else if !name.is_empty() {
            names.insert(name);
        }
        if s(c, "restartPolicy") != "Always" {
            for probe in [
                "lifecycle",
                "livenessProbe",
                "readinessProbe",
                "startupProbe",
            ] {
                if has(c, probe) {
                    e.forbidden(
                        &format!("{p}.{probe}"),
                        "may not be set for init containers without restartPolicy=Always",
                    );
                }
            }
        }
    }
    policies(e, spec, path);
}

/// `validateContainerRestartPolicy` (the `ContainerRestartRules` gate is
/// on in v1.35): a container's own `restartPolicy`, when set, is one of
/// the pod's.
fn container_restart_policy(e: &mut Errs, c: &Value, p: &str) {
    let rp = s(c, "restartPolicy");
    if has(c, "restartPolicy") && !["Always", "Never", "OnFailure"].contains(&rp) {
        e.not_supported(
            &format!("{p}.restartPolicy"),
            &json!(rp),
            &["Always", "Never", "OnFailure"],
        );
    }
}

/// The spec-level fields after the containers, in upstream's order.
fn policies(e: &mut Errs, spec: &Value, path: &str) {
    let restart = restart_policy(spec);
    if !["Always", "OnFailure", "Never"].contains(&restart) {
        e.not_supported(
            &format!("{path}.restartPolicy"),
            &json!(restart),
            &["Always", "OnFailure", "Never"],
        );
    }
    let dns = match s(spec, "dnsPolicy") {
        "" => "ClusterFirst",
        d => d,
    };
    let dns_ok = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
    if !dns_ok.contains(&dns) {
        e.not_supported(&format!("{path}.dnsPolicy"), &json!(dns), &dns_ok);
    }
    if let Some(m) = spec.get("nodeSelector") {
        e.labels(&format!("{path}.nodeSelector"), m);
    }
    for key in ["serviceAccountName", "nodeName"] {
        let v = s(spec, key);
        if !v.is_empty() {
            e.dns_subdomain(&format!("{path}.{key}"), v);
        }
    }
    if let Some(n) = int(spec, "activeDeadlineSeconds").filter(|n| !(1..=MAX_INT32).contains(n)) {
        e.invalid(
            &format!("{path}.activeDeadlineSeconds"),
            &n.into(),
            "must be between 1 and 2147483647, inclusive",
        );
    }
    for key in ["hostname", "subdomain"] {
        let v = s(spec, key);
        if !v.is_empty() {
            e.dns_label(&format!("{path}.{key}"), v);
        }
    }
    tolerations(e, list(spec, "tolerations"), &format!("{path}.tolerations"));
    let pc = s(spec, "priorityClassName");
    if !pc.is_empty() {
        e.dns_subdomain(&format!("{path}.priorityClassName"), pc);
    }
}

/// `ValidateVolumes`: the names of the volumes without errors (the ones
/// mounts may name).
fn volumes<'a>(e: &mut Errs, spec: &'a Value, path: &str) -> BTreeSet<&'a str> {
    let mut names = BTreeSet::new();
    for (i, v) in list(spec, "volumes").iter().enumerate() {
        let p = format!("{path}.volumes[{i}]");
        let mut el = Errs::default();
        volume_source(&mut el, v, &p);
        let name = s(v, "name");
        if name.is_empty() {
            el.required(&format!("{p}.name"), "");
        } else {
            el.dns_label(&format!("{p}.name"), name);
        }
        if names.contains(name) {
            el.duplicate(&format!("{p}.name"), &json!(name));
        }
        if el.0.is_empty() {
            names.insert(name);
        } else {
            e.0.extend(el.0);
        }
    }
    names
}

/// `validateVolumeSource`: one source at most (none is `emptyDir` after
/// defaults), and the required fields of the common ones.
fn volume_source(e: &mut Errs, v: &Value, p: &str) {
    let mut count = 0;
    for src in SOURCES.iter().filter(|k| has(v, k)) {
        let sp = format!("{p}.{src}");
        if count > 0 {
            e.forbidden(&sp, "may not specify more than 1 volume type");
            continue;
        }
        count += 1;
        let body = &v[*src];
        let required: &[&str] = match *src {
            "hostPath" => &["path"],
            "secret" => &[],
            "nfs" => &["server", "path"],
            "persistentVolumeClaim" => &["claimName"],
            "configMap" => &["name"],
            "csi" => &["driver"],
            _ => &[],
        };
        for f in required {
            if s(body, f).is_empty() {
                e.required(&format!("{sp}.{f}"), "");
            }
        }
        if *src == "secret" && s(body, "secretName").is_empty() {
            e.required(&format!("{sp}.secretName"), "");
        }
        if let Some(m) = int(body, "defaultMode").filter(|m| !(0..=0o777).contains(m)) {
            e.invalid(
                &format!("{sp}.defaultMode"),
                &m.into(),
                "must be a number between 0 and 0777 (octal), both inclusive",
            );
        }
    }
}

/// `validateContainerCommon`.
fn container(e: &mut Errs, c: &Value, p: &str, vols: &BTreeSet<&str>, is_pod: bool) {
    let name = s(c, "name");
    if name.is_empty() {
        e.required(&format!("{p}.name"), "");
    } else {
        e.dns_label(&format!("{p}.name"), name);
    }
    if s(c, "image").is_empty() {
        e.required(&format!("{p}.image"), "");
    }
    let tmp = s(c, "terminationMessagePolicy");
    if !["", "File", "FallbackToLogsOnError"].contains(&tmp) {
        e.not_supported(
            &format!("{p}.terminationMessagePolicy"),
            &json!(tmp),
            &["File", "FallbackToLogsOnError"],
        );
    }
    ports(e, list(c, "ports"), &format!("{p}.ports"));
    env(e, list(c, "env"), &format!("{p}.env"));
    mounts(
        e,
        list(c, "volumeMounts"),
        &format!("{p}.volumeMounts"),
        vols,
    );
    let pull = s(c, "imagePullPolicy");
    if !["", "Always", "IfNotPresent", "Never"].contains(&pull) {
        e.not_supported(
            &format!("{p}.imagePullPolicy"),
            &json!(pull),
            &["Always", "IfNotPresent", "Never"],
        );
    }
    let mut res = c.get("resources").cloned().unwrap_or(Value::Null);
    if is_pod {
        requests_from_limits(&mut res);
    }
    super::core::resources(e, &res, &format!("{p}.resources"));
}

/// `SetDefaults_Pod`: a container's request of each limited resource
/// defaults to its limit.
fn requests_from_limits(res: &mut Value) {
    let Some(limits) = res.get("limits").and_then(Value::as_object).cloned() else {
        return;
    };
    let Some(r) = res.as_object_mut() else { return };
    let req = r
        .entry("requests")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(req) = req {
        for (k, v) in limits {
            req.entry(k).or_insert(v);
        }
    }
}

/// `validateContainerPorts` (a port's protocol defaults to TCP).
fn ports(e: &mut Errs, ports: &[Value], path: &str) {
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let name = s(port, "name");
        if !name.is_empty() {
            let msgs = port_name_problems(name);
            if !msgs.is_empty() {
                e.invalid_each(&format!("{p}.name"), name, msgs);
            } else if !names.insert(name) {
                e.duplicate(&format!("{p}.name"), &json!(name));
            }
        }
        match int(port, "containerPort").unwrap_or(0) {
            0 => e.required(&format!("{p}.containerPort"), ""),
            n => {
                for m in port_num_problems(n) {
                    e.invalid(&format!("{p}.containerPort"), &n.into(), &m);
                }
            }
        }
        if let Some(n) = int(port, "hostPort").filter(|n| *n != 0) {
            for m in port_num_problems(n) {
                e.invalid(&format!("{p}.hostPort"), &n.into(), &m);
            }
        }
        protocol(e, port, &format!("{p}.protocol"));
    }
}

/// A port's `protocol` (TCP when absent).
pub(crate) fn protocol(e: &mut Errs, port: &Value, path: &str) {
    let proto = s(port, "protocol");
    if !["", "TCP", "UDP", "SCTP"].contains(&proto) {
        e.not_supported(path, &json!(proto), &["SCTP", "TCP", "UDP"]);
    }
}

/// `ValidateEnv` with relaxed names (the `RelaxedEnvironmentVariableValidation`
/// gate is on by default).
fn env(e: &mut Errs, vars: &[Value], path: &str) {
    for (i, v) in vars.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let name = s(v, "name");
        if name.is_empty() {
            e.required(&format!("{p}.name"), "");
        } else if name
            .bytes()
            .any(|c| !(b' '..=b'~').contains(&c) || c == b'=')
        {
            e.invalid(
                &format!("{p}.name"),
                &json!(name),
                "a valid environment variable name must consist only of printable ASCII characters other than '='",
            );
        }
        let Some(from) = v.get("valueFrom").filter(|f| !f.is_null()) else {
            continue;
        };
        let fp = format!("{p}.valueFrom");
        let sources = [
            "fieldRef",
            "resourceFieldRef",
            "configMapKeyRef",
            "secretKeyRef",
            "fileKeyRef",
        ]
        .iter()
        .filter(|k| has(from, k))
        .count();
        if sources == 0 {
            e.invalid(
                &fp,
                &json!(""),
                "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
            );
        } else if !s(v, "value").is_empty() {
            e.invalid(
                &fp,
                &json!(""),
                "may not be specified when `value` is not empty",
            );
        } else if sources > 1 {
            e.invalid(
                &fp,
                &json!(""),
                "may not have more than one field specified at a time",
            );
        }
    }
}

/// `ValidateVolumeMounts`.
fn mounts(e: &mut Errs, mounts: &[Value], path: &str, vols: &BTreeSet<&str>) {
    let mut points = BTreeSet::new();
    for (i, m) in mounts.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let name = s(m, "name");
        if name.is_empty() {
            e.required(&format!("{p}.name"), "");
        }
        if !vols.contains(name) {
            e.not_found(&format!("{p}.name"), &json!(name));
        }
        let at = s(m, "mountPath");
        if at.is_empty() {
            e.required(&format!("{p}.mountPath"), "");
        }
        if !points.insert(at) {
            e.invalid(&format!("{p}.mountPath"), &json!(at), "must be unique");
        }
        if !s(m, "subPath").is_empty() && !s(m, "subPathExpr").is_empty() {
            e.invalid(
                &format!("{p}.subPathExpr"),
                &json!(s(m, "subPathExpr")),
                "subPathExpr and subPath are mutually exclusive",
            );
        }
    }
}

/// `ValidateTolerations`.
fn tolerations(e: &mut Errs, tols: &[Value], path: &str) {
    for (i, t) in tols.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let (key, op, value) = (s(t, "key"), s(t, "operator"), s(t, "value"));
        if !key.is_empty() {
            e.label_name(&format!("{p}.key"), key);
        }
        if key.is_empty() && op != "Exists" {
            e.invalid(
                &format!("{p}.operator"),
                &json!(op),
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            );
        }
        if has(t, "tolerationSeconds") && s(t, "effect") != "NoExecute" {
            e.invalid(
                &format!("{p}.effect"),
                &json!(s(t, "effect")),
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            );
        }
        match op {
            "" | "Equal" => {
                let msgs = crate::validation::label_value_problems(value);
                if !msgs.is_empty() {
                    e.invalid(&format!("{p}.operator"), &json!(value), &msgs.join(";"));
                }
            }
            "Exists" => {
                if !value.is_empty() {
                    e.invalid(
                        &format!("{p}.operator"),
                        &json!(value),
                        "value must be empty when `operator` is 'Exists'",
                    );
                }
            }
            _ => e.not_supported(&format!("{p}.operator"), &json!(op), &["Equal", "Exists"]),
        }
        let effect = s(t, "effect");
        if !["", "NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect) {
            e.not_supported(
                &format!("{p}.effect"),
                &json!(effect),
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            );
        }
    }
}

/// What `ValidatePodUpdate` adds to the spec's validation: containers
/// neither added nor removed, `activeDeadlineSeconds` only lowered,
/// tolerations only added, and nothing else changed but images.
fn pod_update(e: &mut Errs, new: &Value, old: &Value) {
    for key in ["containers", "initContainers"] {
        let (n, o) = (list(new, key), list(old, key));
        if n.len() != o.len() {
            e.forbidden(
                &format!("spec.{key}"),
                "pod updates may not add or remove containers",
            );
            return;
        }
        for (i, c) in n.iter().enumerate() {
            let image = s(c, "image");
            if image.is_empty() {
                e.required(&format!("spec.{key}[{i}].image"), "");
            }
            if image.trim() != image {
                e.invalid(
                    &format!("spec.{key}[{i}].image"),
                    &json!(image),
                    "must not have leading or trailing whitespace",
                );
            }
        }
    }
    let (nd, od) = (
        int(new, "activeDeadlineSeconds"),
        int(old, "activeDeadlineSeconds"),
    );
    let path = "spec.activeDeadlineSeconds";
    match (nd, od) {
        (Some(n), _) if !(0..=MAX_INT32).contains(&n) => {
            e.invalid(
                path,
                &n.into(),
                "must be between 0 and 2147483647, inclusive",
            );
            return;
        }
        (Some(n), Some(o)) if o < n => {
            e.invalid(
                path,
                &n.into(),
                "must be less than or equal to previous value",
            );
            return;
        }
        (None, Some(_)) => e.invalid(
            path,
            &Value::Null,
            "must not update from a positive integer to nil value",
        ),
        _ => {}
    }
    only_added_tolerations(e, list(new, "tolerations"), list(old, "tolerations"));
    if munged(new, old) != normalized(old) {
        e.forbidden(
            "spec",
            "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
        );
    }
}

/// `validateOnlyAddedTolerations`: each old toleration is still there
/// (its `tolerationSeconds` may change), then the new list is validated.
fn only_added_tolerations(e: &mut Errs, new: &[Value], old: &[Value]) {
    let strip = |t: &Value| {
        let mut t = normalize_value(t);
        if let Value::Object(m) = &mut t {
            m.remove("tolerationSeconds");
        }
        t
    };
    let kept = old.iter().all(|o| new.iter().any(|n| strip(n) == strip(o)));
    if !kept {
        e.forbidden(
            "spec.tolerations",
            "existing toleration can not be modified except its tolerationSeconds",
        );
        return;
    }
    tolerations(e, new, "spec.tolerations");
}

/// The new spec with what an update may change taken from the old one,
/// normalised as [`normalized`].
fn munged(new: &Value, old: &Value) -> Value {
    let mut m = new.clone();
    for key in ["containers", "initContainers"] {
        if let Some(cs) = m.get_mut(key).and_then(Value::as_array_mut) {
            for (c, o) in cs.iter_mut().zip(list(old, key)) {
                if let Value::Object(c) = c {
                    c.insert(
                        "image".into(),
                        o.get("image").cloned().unwrap_or(Value::Null),
                    );
                }
            }
        }
    }
    if let Value::Object(o) = &mut m {
        for key in ["activeDeadlineSeconds", "tolerations", "schedulingGates"] {
            match old.get(key) {
                Some(v) => o.insert(key.into(), v.clone()),
                None => o.remove(key),
            };
        }
    }
    normalized(&m)
}

/// A pod spec as compared by the update rule: the defaults the real
/// server writes filled in (so a stored object with them and a write
/// without them compare equal), and `null`, `""` and `[]` dropped (Go's
/// zero values and empty slices are equal to absent ones there).
fn normalized(spec: &Value) -> Value {
    let mut v = normalize_value(spec);
    let Value::Object(m) = &mut v else { return v };
    for (k, d) in [
        ("restartPolicy", json!("Always")),
        ("dnsPolicy", json!("ClusterFirst")),
        ("terminationGracePeriodSeconds", json!(30)),
        ("schedulerName", json!("default-scheduler")),
        ("securityContext", json!({})),
        ("enableServiceLinks", json!(true)),
    ] {
        m.entry(k).or_insert(d);
    }
    for key in ["containers", "initContainers"] {
        if let Some(Value::Array(cs)) = m.get_mut(key) {
            cs.iter_mut().for_each(container_defaults);
        }
    }
    if let Some(Value::Array(vs)) = m.get_mut("volumes") {
        for v in vs.iter_mut().filter_map(Value::as_object_mut) {
            if !SOURCES.iter().any(|s| v.contains_key(*s)) {
                v.insert("emptyDir".into(), json!({}));
            }
        }
    }
    v
}

fn container_defaults(c: &mut Value) {
    let image = s(c, "image").to_owned();
    let Value::Object(m) = c else { return };
    let latest = image.rsplit('/').next().is_some_and(|last| {
        !last.contains('@') && last.split_once(':').is_none_or(|(_, tag)| tag == "latest")
    });
    m.entry("imagePullPolicy")
        .or_insert(json!(if latest { "Always" } else { "IfNotPresent" }));
    m.entry("terminationMessagePath")
        .or_insert(json!("/dev/termination-log"));
    m.entry("terminationMessagePolicy").or_insert(json!("File"));
    if let Some(Value::Array(ps)) = m.get_mut("ports") {
        for p in ps.iter_mut().filter_map(Value::as_object_mut) {
            p.entry("protocol").or_insert(json!("TCP"));
        }
    }
    if let Some(r) = m.get_mut("resources") {
        requests_from_limits(r);
    }
}

/// `v` without `null`s, empty strings and empty lists (recursively).
fn normalize_value(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, x)| {
                    !(x.is_null()
                        || x.as_str() == Some("")
                        || x.as_array().is_some_and(Vec::is_empty))
                })
                .map(|(k, x)| (k.clone(), normalize_value(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(normalize_value).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causes(obj: &Value, old: Option<&Value>) -> Vec<(String, &'static str)> {
        let mut e = Errs::default();
        pod(&mut e, obj, old);
        e.0.into_iter().map(|c| (c.0, c.1)).collect()
    }

    #[test]
    fn defaults_are_not_errors() {
        let p = json!({"spec": {"containers": [{"name": "c", "image": "i",
            "ports": [{"containerPort": 80}]}], "volumes": [{"name": "v"}]}});
        assert!(causes(&p, None).is_empty());
    }

    #[test]
    fn spec_errors_in_upstream_order() {
        let p = json!({"spec": {"restartPolicy": "Bad", "containers": [{"name": "c"}],
            "volumes": [{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}]}});
        let got = causes(&p, None);
        let fields: Vec<&str> = got.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.volumes[1].name",
                "spec.containers[0].image",
                "spec.restartPolicy"
            ]
        );
    }

    #[test]
    fn hostile_shapes_do_not_panic() {
        let odd = json!({"spec": {"containers": ["x", 1, null, {"ports": "p", "env": [3]}],
            "volumes": [[]], "tolerations": {"a": 1}, "initContainers": [true]}});
        let mut e = Errs::default();
        pod(&mut e, &odd, Some(&odd));
        pod(
            &mut e,
            &odd,
            Some(&json!({"spec": {"containers": [{"image": "i"}, 2, 3, 4]}})),
        );
        template(&mut e, &json!("not an object"), "template");
        assert!(!e.0.is_empty());
    }

    #[test]
    fn update_rules() {
        let old = json!({"spec": {"containers": [{"name": "c", "image": "i"}],
            "tolerations": [{"key": "a", "operator": "Exists"}]}});
        let mut new = old.clone();
        new["spec"]["containers"][0]["image"] = json!("j");
        new["spec"]["tolerations"]
            .as_array_mut()
            .unwrap()
            .push(json!({"key": "b", "operator": "Exists"}));
        // A stored pod carries defaults the write does not: still equal.
        let mut stored = old.clone();
        stored["spec"]["dnsPolicy"] = json!("ClusterFirst");
        stored["spec"]["containers"][0]["imagePullPolicy"] = json!("Always");
        assert!(causes(&new, Some(&stored)).is_empty());
        let mut bad = old.clone();
        bad["spec"]["restartPolicy"] = json!("Never");
        assert_eq!(
            causes(&bad, Some(&old)),
            [("spec".to_owned(), "FieldValueForbidden")]
        );
    }
}
