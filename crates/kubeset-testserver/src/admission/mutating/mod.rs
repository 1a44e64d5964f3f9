//! `MutatingAdmissionPolicy` and `MutatingAdmissionPolicyBinding`
//! (admissionregistration.k8s.io/v1beta1, beta and off by default in
//! kube-apiserver 1.35; GA as v1 in 1.36), as kube-apiserver's mutating
//! admission policy plugin applies them.
//!
//! [`admit`] runs on every create and update before the validating
//! policies ([`super::policy`]), as the real server's mutating admission
//! runs before its validating admission; what it changes is defaulted and
//! validated again ([`super::policies`]). Policies and bindings are read
//! from the store, as the validating ones.
//!
//! Policies run in the order of their names, each once per binding (by
//! name) and parameter object. kube-apiserver sets no order: it runs them
//! in Go's map order over its policy cache, kept until a policy or binding
//! changes, so a test whose answer depends on the order passes here and
//! may fail on a cluster (make such policies `reinvocationPolicy:
//! IfNeeded`, or independent). Matching (`matchConstraints`, the
//! binding's `matchResources`), parameters (`paramKind`, `paramRef`) and
//! `matchConditions` are the validating policies'. Then every mutation in
//! order, each seeing the object as the one before left it:
//! - `patchType: ApplyConfiguration`: the expression builds an
//!   `Object{...}` apply configuration, merged into the object as
//!   structured-merge-diff merges an apply (maps key by key, `listType:
//!   map` lists by their keys); one that sets an atomic list, map or
//!   struct is refused (`may not mutate atomic arrays, maps or structs`).
//! - `patchType: JSONPatch`: the expression builds a list of
//!   `JSONPatch{op, path, value, from}`, applied as a JSON patch; a failing
//!   `test` operation leaves the object as it was.
//!
//! `reinvocationPolicy: IfNeeded` runs a policy once more when a policy
//! after it changed the object. A mutation that fails (an expression
//! error, a type mismatch, a patch that does not apply) is an error of its
//! policy; under `failurePolicy: Fail` (the default) the write is refused
//! with 403 and the first error's reason (`Invalid` for a mutation or a
//! match condition, `Forbidden` for a binding's parameters), under
//! `Ignore` it is dropped.
//!
//! Not done: the `authorizer` library and `request.userInfo`, type
//! checking of expressions when a policy is stored, the runtime cost
//! budget, other plugins' reinvocation.

mod object;

use serde_json::{Value, json};

use super::policy::{self, Failure, GROUP, Lookup, Operation, Request, name_of};
use crate::patch::PatchError;
use crate::shape::{ListKind, Shape};
use crate::status::ApiError;

/// The policies' resource.
const POLICIES: &str = "mutatingadmissionpolicies";
/// The bindings' resource.
const BINDINGS: &str = "mutatingadmissionpolicybindings";

/// A failure of one policy under one binding.
struct PolicyError {
    policy: String,
    binding: String,
    failure: Failure,
}

/// One policy under one of its bindings.
#[derive(Clone, Copy)]
struct Invocation<'a> {
    policy: &'a Value,
    binding: &'a Value,
}

/// Applies every mutating policy bound to a request like `req` to
/// `object` (`req.object` is not read: `object` is the one written).
/// Returns whether the object changed, or the refusal of a policy that
/// failed under `failurePolicy: Fail`.
pub(crate) fn admit(
    world: &dyn Lookup,
    req: &Request<'_>,
    object: &mut Value,
) -> Result<bool, ApiError> {
    if req.res.group == GROUP || req.operation == Operation::Delete {
        return Ok(false);
    }
    let bindings = world.objects(GROUP, BINDINGS);
    if bindings.is_empty() {
        return Ok(false);
    }
    let policies = world.objects(GROUP, POLICIES);
    let invocations = invocations(
        policies.iter().map(|p| &**p).collect(),
        bindings.iter().map(|b| &**b).collect(),
    );
    let namespace = policy::namespace_of(world, req);
    let namespace = namespace.as_deref();
    let before = object.clone();
    let mut errors = Vec::new();
    let mut last_change = None;
    for (i, inv) in invocations.iter().enumerate() {
        if invoke(world, *inv, req, namespace, object, &mut errors) {
            last_change = Some(i);
        }
    }
    // A policy that asks for it runs again when one after it changed the
    // object (once, as the real server reinvokes once).
    if let Some(last) = last_change {
        for inv in invocations.iter().take(last) {
            if inv.policy["spec"]["reinvocationPolicy"].as_str() == Some("IfNeeded") {
                invoke(world, *inv, req, namespace, object, &mut errors);
            }
        }
    }
    if let Some(e) = refusal(req, &errors) {
        return Err(e);
    }
    Ok(*object != before)
}

/// Every (policy, binding) pair, by policy name, then binding name.
fn invocations<'a>(
    mut policies: Vec<&'a Value>,
    mut bindings: Vec<&'a Value>,
) -> Vec<Invocation<'a>> {
    policies.sort_by_key(|p| name_of(p));
    bindings.sort_by_key(|b| name_of(b));
    policies
        .iter()
        .flat_map(|policy| {
            bindings
                .iter()
                .filter(|b| b["spec"]["policyName"].as_str() == Some(name_of(policy)))
                .map(|binding| Invocation { policy, binding })
        })
        .collect()
}

/// Runs one policy under one binding on `object`, once per parameter:
/// whether it changed the object. Failures join `errors`.
fn invoke(
    world: &dyn Lookup,
    inv: Invocation<'_>,
    req: &Request<'_>,
    namespace: Option<&Value>,
    object: &mut Value,
    errors: &mut Vec<PolicyError>,
) -> bool {
    let spec = &inv.policy["spec"];
    let binding = &inv.binding["spec"];
    let mut fail = |failure: Failure| {
        if spec["failurePolicy"].as_str() != Some("Ignore") {
            errors.push(PolicyError {
                policy: name_of(inv.policy).to_owned(),
                binding: name_of(inv.binding).to_owned(),
                failure,
            });
        }
    };
    let snapshot = object.clone();
    let view = Request {
        object: Some(&snapshot),
        ..*req
    };
    if !policy::matches(&spec["matchConstraints"], &view, namespace)
        || !policy::binding_matches(binding, &view, namespace)
    {
        return false;
    }
    let params = match policy::params(world, spec, binding, &view) {
        Ok(p) => p,
        Err(message) => {
            fail(Failure {
                message,
                reason: None,
            });
            return false;
        }
    };
    let fail_closed = spec["failurePolicy"].as_str() != Some("Ignore");
    let before = object.clone();
    for param in params {
        let snapshot = object.clone();
        let view = Request {
            object: Some(&snapshot),
            ..*req
        };
        let base = policy::base_vars(&view, namespace, param.as_ref());
        match policy::conditions(spec, &base, fail_closed) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(mut f) => {
                f.reason = Some("Invalid".into());
                fail(f);
                continue;
            }
        }
        for m in spec["mutations"].as_array().into_iter().flatten() {
            let snapshot = object.clone();
            let view = Request {
                object: Some(&snapshot),
                ..*req
            };
            let vars =
                policy::variables(spec, &policy::base_vars(&view, namespace, param.as_ref()));
            if let Err(message) = mutate(m, &vars, req, object) {
                fail(Failure {
                    message,
                    reason: Some("Invalid".into()),
                });
            }
        }
    }
    *object != before
}

/// Applies one mutation to `object`, or says why it cannot.
fn mutate(
    m: &Value,
    vars: &[(&str, cel::Value)],
    req: &Request<'_>,
    object: &mut Value,
) -> Result<(), String> {
    match m["patchType"].as_str() {
        Some("ApplyConfiguration") => {
            let src = m["applyConfiguration"]["expression"]
                .as_str()
                .unwrap_or_default();
            let v = object::eval(src, vars)?;
            if object::type_name(&v) != Some("Object") {
                return Err(format!(
                    "unsupported return type from ApplyConfiguration expression: {}",
                    v.type_of()
                ));
            }
            let patch = object::to_json(&v, Some("Object"), 0)?;
            let shape = crate::shape::of(req.res);
            let mut found = Vec::new();
            atomics(&patch, &shape, &mut String::new(), &mut found);
            if !found.is_empty() {
                return Err(format!(
                    "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: {}",
                    found.join(", ")
                ));
            }
            *object = crate::smd::merge(object, &patch, &shape)
                .map_err(|e| format!("error applying patch: failed to merge patch: {}", e.0))?;
            Ok(())
        }
        Some("JSONPatch") => {
            let src = m["jsonPatch"]["expression"].as_str().unwrap_or_default();
            let ops = json_patch(&object::eval(src, vars)?)?;
            match crate::patch::json_patch(object, &ops) {
                Ok(()) => Ok(()),
                // A failing test leaves the object as it was.
                Err(PatchError::Invalid(e)) if e.ends_with("test failed") => Ok(()),
                Err(
                    PatchError::Invalid(e) | PatchError::BadRequest(e) | PatchError::Unknown(e),
                ) => Err(format!("JSONPath: {e}")),
            }
        }
        other => Err(format!(
            "unsupported patchType: {}",
            other.unwrap_or_default()
        )),
    }
}

/// The JSON patch a `JSONPatch` expression's value stands for.
fn json_patch(v: &cel::Value) -> Result<Value, String> {
    let cel::Value::List(items) = v else {
        return Err("type mismatch: JSONPatchType.expression should evaluate to array".into());
    };
    let mut ops = Vec::new();
    for item in items.iter() {
        if object::type_name(item) != Some("JSONPatch") {
            return Err(format!(
                "type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, got an element of type {}",
                item.type_of()
            ));
        }
        let mut op = object::to_json(item, None, 0)?;
        if let Some(value) = field(item, "value") {
            // An Object literal as a value is checked against its own name.
            op["value"] = object::to_json(value, object::type_name(value), 0)?;
        }
        ops.push(op);
    }
    Ok(Value::Array(ops))
}

/// Field `name` of a typed map.
fn field<'a>(v: &'a cel::Value, name: &str) -> Option<&'a cel::Value> {
    match v {
        cel::Value::Map(m) => m.map.iter().find_map(|(k, x)| match k {
            cel::objects::Key::String(s) if s.as_str() == name => Some(x),
            _ => None,
        }),
        _ => None,
    }
}

/// The paths of atomic lists, maps and structs an apply configuration
/// sets (structured-merge-diff's path syntax: `.spec.ports`, `[0]`).
fn atomics(v: &Value, shape: &Shape, at: &mut String, out: &mut Vec<String>) {
    match (shape.resolve(Some(v)), v) {
        (Shape::Object { fields, atomic, .. }, Value::Object(m)) => {
            if *atomic {
                out.push(at.clone());
            }
            for (k, x) in m {
                if let Some(child) = fields.get(k) {
                    let len = at.len();
                    at.push('.');
                    at.push_str(k);
                    atomics(x, child, at, out);
                    at.truncate(len);
                }
            }
        }
        (Shape::List { item, kind }, Value::Array(a)) => {
            if *kind == ListKind::Atomic {
                out.push(at.clone());
            }
            for (i, x) in a.iter().enumerate() {
                let len = at.len();
                at.push_str(&format!("[{i}]"));
                atomics(x, item, at, out);
                at.truncate(len);
            }
        }
        _ => {}
    }
}

/// The problems of a mutating policy or binding itself, as the real
/// server's validation reports them (a subset: what is required, enum
/// values, expressions that do not compile).
pub(crate) fn problems(plural: &str, obj: &Value) -> Vec<(String, &'static str, String)> {
    let spec = &obj["spec"];
    let mut out = Vec::new();
    let required = |out: &mut Vec<_>, field: &str, m: &str| {
        out.push((field.to_owned(), "FieldValueRequired", m.to_owned()));
    };
    match plural {
        POLICIES => {
            if spec["matchConstraints"].is_null() {
                required(&mut out, "spec.matchConstraints", "Required value");
            }
            let mutations = spec["mutations"].as_array().map_or(&[][..], Vec::as_slice);
            if mutations.is_empty() {
                required(
                    &mut out,
                    "spec.mutations",
                    "Required value: mutations must contain at least one item",
                );
            }
            for list in ["matchConditions", "variables"] {
                policy::expressions(spec, list, &mut out);
            }
            for (i, m) in mutations.iter().enumerate() {
                mutation_problems(i, m, &mut out);
            }
            match spec["reinvocationPolicy"].as_str() {
                None => required(&mut out, "spec.reinvocationPolicy", "Required value"),
                Some("IfNeeded" | "Never") => {}
                Some(other) => out.push((
                    "spec.reinvocationPolicy".into(),
                    "FieldValueNotSupported",
                    format!(
                        "Unsupported value: {}: supported values: \"IfNeeded\", \"Never\"",
                        json!(other)
                    ),
                )),
            }
        }
        BINDINGS => {
            if spec["policyName"].as_str().is_none_or(str::is_empty) {
                required(&mut out, "spec.policyName", "Required value");
            }
            let r = &spec["paramRef"];
            if r.is_object() && r["parameterNotFoundAction"].is_null() {
                required(
                    &mut out,
                    "spec.paramRef.parameterNotFoundAction",
                    "Required value",
                );
            }
        }
        _ => {}
    }
    out
}

/// The problems of mutation `i`: its patch type, the configuration it
/// names, its expression.
fn mutation_problems(i: usize, m: &Value, out: &mut Vec<(String, &'static str, String)>) {
    let at = format!("spec.mutations[{i}]");
    let key = match m["patchType"].as_str() {
        Some("ApplyConfiguration") => "applyConfiguration",
        Some("JSONPatch") => "jsonPatch",
        None => {
            out.push((
                format!("{at}.patchType"),
                "FieldValueRequired",
                "Required value".into(),
            ));
            return;
        }
        Some(other) => {
            out.push((
                format!("{at}.patchType"),
                "FieldValueNotSupported",
                format!(
                    "Unsupported value: {}: supported values: \"ApplyConfiguration\", \"JSONPatch\"",
                    json!(other)
                ),
            ));
            return;
        }
    };
    let Some(src) = m[key]["expression"].as_str() else {
        out.push((
            format!("{at}.{key}"),
            "FieldValueRequired",
            format!(
                "Required value: must be specified when patchType is {}",
                m["patchType"].as_str().unwrap_or_default()
            ),
        ));
        return;
    };
    let err = super::cel::bounded(src)
        .err()
        .or_else(|| policy::compile(src).err());
    if let Some(e) = err {
        out.push((
            format!("{at}.{key}.expression"),
            "FieldValueInvalid",
            format!("Invalid value: {}: compilation failed: {e}", json!(src)),
        ));
    }
}

/// The refusal of the failures that count: 403 as kube-apiserver's
/// `NewForbidden`, with the first one's reason (`Forbidden` when it has
/// none) and message, every failure a cause.
fn refusal(req: &Request<'_>, errors: &[PolicyError]) -> Option<ApiError> {
    let first = errors.first()?;
    let text = |e: &PolicyError| {
        format!(
            "policy '{}' with binding '{}' denied request: {}",
            e.policy, e.binding, e.failure.message
        )
    };
    let reason = match first.failure.reason.as_deref() {
        Some("Invalid") => "Invalid",
        _ => "Forbidden",
    };
    let res = req.res;
    let causes: Vec<Value> = errors.iter().map(|e| json!({"message": text(e)})).collect();
    let mut details = json!({"name": req.name, "kind": res.plural, "causes": causes});
    if !res.group.is_empty() {
        details["group"] = json!(res.group);
    }
    Some(ApiError {
        code: 403,
        reason,
        message: text(first),
        details: Some(details),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn shape() -> Shape {
        crate::shape::from_schema(
            &serde_json::from_value(json!({"type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "ports": {"type": "array", "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["port"],
                        "items": {"type": "object", "properties": {"port": {"type": "integer"}}}},
                    "sel": {"type": "object", "x-kubernetes-map-type": "atomic",
                        "additionalProperties": {"type": "string"}}}}}}))
            .unwrap(),
        )
    }

    #[test]
    fn atomic_lists_and_maps_in_an_apply_configuration_are_named() {
        let mut found = Vec::new();
        let patch = json!({"spec": {"tags": ["a"], "ports": [{"port": 1}], "sel": {"a": "b"}}});
        atomics(&patch, &shape(), &mut String::new(), &mut found);
        found.sort();
        assert_eq!(found, vec![".spec.sel", ".spec.tags"]);
    }
}
