//! `ValidatingAdmissionPolicy` and `ValidatingAdmissionPolicyBinding`
//! (admissionregistration.k8s.io/v1), as kube-apiserver's validating
//! admission policy plugin evaluates them.
//!
//! [`admit`] runs on every create, update and delete of a served resource
//! after the write's own validation (the real server's validating
//! admission runs after the strategy's validation). Policies, bindings,
//! parameters and namespaces are read from the store: they are ordinary
//! objects, and a policy applies from the write that stores it (the real
//! server's policy informer takes up to a second).
//!
//! For every binding (by name) whose policy exists and matches the request
//! (`matchConstraints`, then the binding's `matchResources`: resource
//! rules by group, version, resource and operation, `excludeResourceRules`,
//! `namespaceSelector`, `objectSelector`), once per parameter object
//! (`paramKind` + the binding's `paramRef`: `name` or `selector`,
//! `namespace`, `parameterNotFoundAction`): the `matchConditions` decide
//! whether it applies, the `variables` are evaluated, then every
//! validation. A failure is reported as the binding's `validationActions`
//! say: `Deny` refuses the write (`ValidatingAdmissionPolicy 'p' with
//! binding 'b' denied request: MESSAGE`, 422 Invalid unless the
//! validation names a `reason`), `Warn` adds a `Warning`, `Audit` is not
//! visible. An expression that fails to evaluate is a failure under
//! `failurePolicy: Fail` (the default) and ignored under `Ignore`.
//!
//! CEL variables: `object`, `oldObject` (`null` where there is none),
//! `request` (`operation`, `name`, `namespace`, `kind`, `resource`,
//! `dryRun`), `params`, `namespaceObject`, `variables`.
//!
//! Not done: `auditAnnotations`, `matchPolicy: Equivalent` across
//! versions, type checking of expressions against the matched kinds
//! (`status.typeChecking`), the `authorizer` library, `request.userInfo`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use cel::objects::{Key, Map};
use serde_json::{Value, json};

use super::cel as rules;
use crate::resources::Resource;
use crate::selectors::{LabelSelector, selector_to_string};
use crate::status::ApiError;

/// The API group of policies and bindings; its writes are never subject
/// to policies (as the real server exempts them).
pub(super) const GROUP: &str = "admissionregistration.k8s.io";

/// What admission reads from the store.
pub(crate) trait Lookup {
    /// Every stored object of the resource `plural` in `group` (borrowed
    /// where the store keeps it parsed, as it does namespaces and the
    /// admission configuration).
    fn objects(&self, group: &str, plural: &str) -> Vec<Cow<'_, Value>>;
    /// The served resource of `apiVersion` and `kind`.
    fn kind(&self, api_version: &str, kind: &str) -> Option<Arc<Resource>>;
}

/// The operation of a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    /// A create (POST, or an apply/update that creates).
    Create,
    /// An update or patch.
    Update,
    /// A delete.
    Delete,
}

impl Operation {
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Create => "CREATE",
            Self::Update => "UPDATE",
            Self::Delete => "DELETE",
        }
    }
}

/// One write as the policies see it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Request<'a> {
    pub(crate) res: &'a Resource,
    pub(crate) operation: Operation,
    pub(crate) namespace: &'a str,
    pub(crate) name: &'a str,
    /// The object written; `None` on a delete.
    pub(crate) object: Option<&'a Value>,
    /// The stored object on an update or delete.
    pub(crate) old: Option<&'a Value>,
    pub(crate) dry_run: bool,
}

impl<'a> Request<'a> {
    /// The delete of `old`, the stored object.
    pub(crate) fn delete(
        res: &'a Resource,
        namespace: &'a str,
        name: &'a str,
        old: &'a Value,
        dry_run: bool,
    ) -> Self {
        Request {
            res,
            operation: Operation::Delete,
            namespace,
            name,
            object: None,
            old: Some(old),
            dry_run,
        }
    }
}

/// A validation that failed under a binding.
pub(super) struct Failure {
    pub(super) message: String,
    pub(super) reason: Option<String>,
}

/// What the policies decided on a write.
#[derive(Debug, Default)]
pub(crate) struct Decision {
    /// The `Warning` texts of `Warn` bindings (sent also with a refusal).
    pub(crate) warnings: Vec<String>,
    /// The refusal of the first `Deny` binding that failed.
    pub(crate) denied: Option<ApiError>,
}

/// Evaluates every policy bound to a request like `req`.
pub(crate) fn admit(world: &dyn Lookup, req: &Request<'_>) -> Decision {
    if req.res.group == GROUP {
        return Decision::default();
    }
    let mut bindings = world.objects(GROUP, "validatingadmissionpolicybindings");
    if bindings.is_empty() {
        return Decision::default();
    }
    bindings.sort_by(|a, b| name_of(a).cmp(name_of(b)));
    let policies = world.objects(GROUP, "validatingadmissionpolicies");
    let namespace = namespace_of(world, req);
    let namespace = namespace.as_deref();
    let (mut warnings, mut denied) = (Vec::new(), None);
    for binding in &bindings {
        let spec = &binding["spec"];
        let policy_name = spec["policyName"].as_str().unwrap_or_default();
        let Some(policy) = policies.iter().find(|p| name_of(p) == policy_name) else {
            continue;
        };
        if !matches(&policy["spec"]["matchConstraints"], req, namespace)
            || !binding_matches(spec, req, namespace)
        {
            continue;
        }
        let failures = evaluate(world, policy, binding, req, namespace);
        let actions = strings(&spec["validationActions"]);
        let (p, b) = (policy_name, name_of(binding));
        for f in failures {
            if actions.contains(&"Warn") {
                warnings.push(format!(
                    "Validation failed for ValidatingAdmissionPolicy '{p}' with binding '{b}': {}",
                    f.message
                ));
            }
            if actions.contains(&"Deny") && denied.is_none() {
                denied = Some(refusal(req, p, b, &f));
            }
        }
    }
    Decision { warnings, denied }
}

/// The stored Namespace of a namespaced request (`namespaceObject`).
pub(super) fn namespace_of<'a>(world: &'a dyn Lookup, req: &Request<'_>) -> Option<Cow<'a, Value>> {
    (!req.namespace.is_empty())
        .then(|| {
            world
                .objects("", "namespaces")
                .into_iter()
                .find(|n| name_of(n) == req.namespace)
        })
        .flatten()
}

/// The refusal of a `Deny` binding: the real server's `NewForbidden`, with
/// the validation's reason and its code.
fn refusal(req: &Request<'_>, policy: &str, binding: &str, f: &Failure) -> ApiError {
    let text = format!(
        "ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: {}",
        f.message
    );
    let (reason, code) = match f.reason.as_deref() {
        Some("Forbidden") => ("Forbidden", 403),
        Some("RequestEntityTooLarge") => ("RequestEntityTooLarge", 413),
        _ => ("Invalid", 422),
    };
    let res = req.res;
    let qualified = if res.group.is_empty() {
        res.plural.clone()
    } else {
        format!("{}.{}", res.plural, res.group)
    };
    let mut details = json!({"name": req.name, "kind": res.plural, "causes": [{"message": text}]});
    if !res.group.is_empty() {
        details["group"] = json!(res.group);
    }
    ApiError {
        code,
        reason,
        message: format!("{qualified} \"{}\" is forbidden: {text}", req.name),
        details: Some(details),
    }
}

pub(super) fn name_of(v: &Value) -> &str {
    v.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Whether `criteria` (a policy's `matchConstraints` or a binding's
/// `matchResources`) select the request.
pub(super) fn matches(criteria: &Value, req: &Request<'_>, namespace: Option<&Value>) -> bool {
    if !selector_matches(
        &criteria["namespaceSelector"],
        namespace_labels_of(req, namespace),
    ) {
        return false;
    }
    let object_ok = [req.object, req.old]
        .into_iter()
        .flatten()
        .any(|o| selector_matches(&criteria["objectSelector"], Some(o)));
    if !object_ok {
        return false;
    }
    let hit = |rules: &Value| {
        rules
            .as_array()
            .is_some_and(|rs| rs.iter().any(|r| rule_matches(r, req)))
    };
    hit(&criteria["resourceRules"]) && !hit(&criteria["excludeResourceRules"])
}

/// Whether a binding's `matchResources` (absent: everything its policy
/// matches) select the request; without `resourceRules` they do not
/// constrain the resource (only the selectors and exclusions do).
pub(super) fn binding_matches(
    binding: &Value,
    req: &Request<'_>,
    namespace: Option<&Value>,
) -> bool {
    let m = &binding["matchResources"];
    if m.is_null() {
        return true;
    }
    if m["resourceRules"].as_array().is_none_or(Vec::is_empty) {
        let mut all = m.clone();
        all["resourceRules"] = json!([{"apiGroups": ["*"], "apiVersions": ["*"],
            "resources": ["*"], "operations": ["*"]}]);
        return matches(&all, req, namespace);
    }
    matches(m, req, namespace)
}

/// What a namespace selector is matched against: the request's namespace,
/// or a Namespace being written itself; `None` for a cluster-scoped
/// resource (which every namespace selector matches).
pub(super) fn namespace_labels_of<'a>(
    req: &Request<'a>,
    namespace: Option<&'a Value>,
) -> Option<&'a Value> {
    if req.res.group.is_empty() && req.res.plural == "namespaces" {
        return req.object.or(req.old);
    }
    if !req.res.namespaced {
        return None;
    }
    // A namespaced object whose namespace is not stored matches nothing
    // that names labels.
    Some(namespace.unwrap_or(&Value::Null))
}

/// Whether the label selector `sel` (absent: everything) matches `obj`
/// (`None`: a cluster-scoped request, matched by every selector).
pub(super) fn selector_matches(sel: &Value, obj: Option<&Value>) -> bool {
    let Some(obj) = obj else {
        return true;
    };
    if sel.is_null() {
        return true;
    }
    match LabelSelector::parse(&selector_to_string(sel)) {
        Ok(s) => s.matches(obj),
        Err(_) => false,
    }
}

/// One `NamedRuleWithOperations`.
fn rule_matches(rule: &Value, req: &Request<'_>) -> bool {
    let any = |field: &str, want: &str| {
        strings(&rule[field])
            .iter()
            .any(|v| *v == "*" || v.eq_ignore_ascii_case(want))
    };
    let res = req.res;
    let scope_ok = match rule["scope"].as_str().unwrap_or("*") {
        "Namespaced" => res.namespaced,
        "Cluster" => !res.namespaced,
        _ => true,
    };
    let names = strings(&rule["resourceNames"]);
    scope_ok
        && any("operations", req.operation.name())
        && any("apiGroups", &res.group)
        && any("apiVersions", &res.version)
        && any("resources", &res.plural)
        && (names.is_empty() || names.contains(&req.name))
}

/// The failures of `policy` under `binding`, over each parameter object.
fn evaluate(
    world: &dyn Lookup,
    policy: &Value,
    binding: &Value,
    req: &Request<'_>,
    namespace: Option<&Value>,
) -> Vec<Failure> {
    let spec = &policy["spec"];
    let fail_closed = spec["failurePolicy"].as_str() != Some("Ignore");
    let params = match params(world, spec, &binding["spec"], req) {
        Ok(p) => p,
        Err(message) => {
            return vec![Failure {
                message,
                reason: None,
            }];
        }
    };
    let mut out = Vec::new();
    for param in params {
        let base = base_vars(req, namespace, param.as_ref());
        match run(spec, &base, fail_closed) {
            Ok(f) => out.extend(f),
            Err(f) => out.push(f),
        }
    }
    out
}

/// The parameter objects of a binding: `[None]` for a policy without
/// `paramKind`, or the message of a refusal.
pub(super) fn params(
    world: &dyn Lookup,
    spec: &Value,
    binding: &Value,
    req: &Request<'_>,
) -> Result<Vec<Option<Value>>, String> {
    let kind = &spec["paramKind"];
    if kind.is_null() {
        return Ok(vec![None]);
    }
    let r = &binding["paramRef"];
    if r.is_null() {
        return Err(
            "failed to configure binding: paramRef is required when paramKind is set".into(),
        );
    }
    let (api_version, k) = (
        kind["apiVersion"].as_str().unwrap_or_default(),
        kind["kind"].as_str().unwrap_or_default(),
    );
    let Some(res) = world.kind(api_version, k) else {
        return Err(format!(
            "failed to configure policy: failed to find resource referenced by paramKind: '{api_version}, Kind={k}'"
        ));
    };
    let ns = match r["namespace"].as_str() {
        Some(n) if !n.is_empty() => n,
        _ => req.namespace,
    };
    let mut found: Vec<Value> = world
        .objects(&res.group, &res.plural)
        .into_iter()
        .filter(|o| {
            !res.namespaced || o.pointer("/metadata/namespace").and_then(Value::as_str) == Some(ns)
        })
        .filter(|o| match r["name"].as_str() {
            Some(n) if !n.is_empty() => name_of(o) == n,
            _ => selector_matches(&r["selector"], Some(o)) && !r["selector"].is_null(),
        })
        .map(Cow::into_owned)
        .collect();
    found.sort_by(|a, b| name_of(a).cmp(name_of(b)));
    if found.is_empty() {
        return match r["parameterNotFoundAction"].as_str() {
            Some("Allow") => Ok(Vec::new()),
            _ => {
                Err("no params found for policy binding with `Deny` parameterNotFoundAction".into())
            }
        };
    }
    Ok(found.into_iter().map(Some).collect())
}

/// The variables every expression sees, but `variables`.
pub(super) fn base_vars(
    req: &Request<'_>,
    namespace: Option<&Value>,
    param: Option<&Value>,
) -> Vec<(&'static str, cel::Value)> {
    let conv = |v: Option<&Value>| v.map_or(cel::Value::Null, |v| rules::value::to_cel(None, v));
    let res = req.res;
    let request = json!({
        "operation": req.operation.name(),
        "name": req.name,
        "namespace": req.namespace,
        "kind": {"group": res.group, "version": res.version, "kind": res.kind},
        "resource": {"group": res.group, "version": res.version, "resource": res.plural},
        "requestKind": {"group": res.group, "version": res.version, "kind": res.kind},
        "requestResource": {"group": res.group, "version": res.version, "resource": res.plural},
        "dryRun": req.dry_run,
    });
    vec![
        ("object", conv(req.object)),
        ("oldObject", conv(req.old)),
        ("request", conv(Some(&request))),
        ("params", conv(param)),
        ("namespaceObject", conv(namespace)),
    ]
}

/// The outcome of one expression.
pub(super) enum Outcome {
    Value(cel::Value),
    Error(String),
}

/// `source` parsed (cached by its text), on a thread with the stack
/// cel-rust's recursive parser needs ([`rules::on_compile_stack`]).
pub(super) fn compile(source: &str) -> Result<Arc<cel::Program>, String> {
    if let Some(p) = rules::parsed(source) {
        return Ok(p);
    }
    let source = source.to_owned();
    rules::on_compile_stack(move || rules::parse(&source).map_err(|e| e.to_string()))
        .map_err(|e| format!("cannot compile: {e}"))?
}

/// Compiles (cached) and runs `source` with `vars`.
pub(super) fn eval(source: &str, vars: &[(&str, cel::Value)]) -> Outcome {
    if let Err(e) = rules::bounded(source) {
        return Outcome::Error(e);
    }
    let program = match compile(source) {
        Ok(p) => p,
        Err(e) => return Outcome::Error(format!("compilation failed: {e}")),
    };
    rules::BASE.with(|base| {
        let mut ctx = base.new_inner_scope();
        for (k, v) in vars {
            ctx.add_variable_from_value(*k, v.clone());
        }
        match program.execute(&ctx) {
            Ok(v) => Outcome::Value(v),
            Err(e) => Outcome::Error(rules::go_error(&e)),
        }
    })
}

/// Match conditions, variables and validations of one policy over one
/// parameter: the failures, or `Err` of a match condition that failed
/// closed.
fn run(
    spec: &Value,
    base: &[(&'static str, cel::Value)],
    fail_closed: bool,
) -> Result<Vec<Failure>, Failure> {
    if !conditions(spec, base, fail_closed)? {
        return Ok(Vec::new());
    }
    let vars = variables(spec, base);
    let mut out = Vec::new();
    for v in spec["validations"].as_array().into_iter().flatten() {
        if let Some(f) = validation(v, &vars, fail_closed) {
            out.push(f);
        }
    }
    Ok(out)
}

/// Whether a policy's `matchConditions` all hold; `Err` of one that
/// failed to evaluate under `failurePolicy: Fail` (under `Ignore` such a
/// condition means the policy does not apply).
pub(super) fn conditions(
    spec: &Value,
    base: &[(&'static str, cel::Value)],
    fail_closed: bool,
) -> Result<bool, Failure> {
    for c in spec["matchConditions"].as_array().into_iter().flatten() {
        let expr = c["expression"].as_str().unwrap_or_default();
        match eval(expr, base) {
            Outcome::Value(cel::Value::Bool(true)) => {}
            Outcome::Value(cel::Value::Bool(false)) => return Ok(false),
            Outcome::Value(_) | Outcome::Error(_) if !fail_closed => return Ok(false),
            Outcome::Value(v) => {
                return Err(condition_error(
                    c,
                    &format!("no such overload: {}", v.type_of()),
                ));
            }
            Outcome::Error(e) => return Err(condition_error(c, &e)),
        }
    }
    Ok(true)
}

/// `base` and the policy's `variables`, each evaluated in order (one that
/// fails is left out, so that an expression naming it fails).
pub(super) fn variables<'a>(
    spec: &Value,
    base: &[(&'a str, cel::Value)],
) -> Vec<(&'a str, cel::Value)> {
    let mut vars: Vec<(&str, cel::Value)> = base.to_vec();
    let mut variables: HashMap<Key, cel::Value> = HashMap::new();
    for v in spec["variables"].as_array().into_iter().flatten() {
        let name = v["name"].as_str().unwrap_or_default();
        let mut scope = vars.clone();
        scope.push((
            "variables",
            cel::Value::Map(Map {
                map: Arc::new(variables.clone()),
            }),
        ));
        if let Outcome::Value(x) = eval(v["expression"].as_str().unwrap_or_default(), &scope) {
            variables.insert(Key::from(name.to_owned()), x);
        }
    }
    vars.push((
        "variables",
        cel::Value::Map(Map {
            map: Arc::new(variables),
        }),
    ));
    vars
}

fn condition_error(c: &Value, e: &str) -> Failure {
    Failure {
        message: format!(
            "failed to evaluate matchCondition '{}': {e}",
            c["name"].as_str().unwrap_or_default()
        ),
        reason: None,
    }
}

/// One validation: its failure, if it fails.
fn validation(v: &Value, vars: &[(&str, cel::Value)], fail_closed: bool) -> Option<Failure> {
    let expr = v["expression"].as_str().unwrap_or_default();
    let reason = v["reason"].as_str().map(str::to_owned);
    let error = |e: &str| {
        fail_closed.then(|| Failure {
            message: format!("expression '{expr}' resulted in error: {e}"),
            reason: None,
        })
    };
    match eval(expr, vars) {
        Outcome::Value(cel::Value::Bool(true)) => None,
        Outcome::Value(cel::Value::Bool(false)) => {
            let message = v["messageExpression"]
                .as_str()
                .and_then(|m| match eval(m, vars) {
                    Outcome::Value(cel::Value::String(s)) => {
                        let t = s.trim();
                        (!t.is_empty() && !t.contains('\n') && t.len() <= rules::MAX_MESSAGE_BYTES)
                            .then(|| t.to_owned())
                    }
                    _ => None,
                })
                .or_else(|| {
                    v["message"]
                        .as_str()
                        .filter(|m| !m.is_empty())
                        .map(str::to_owned)
                })
                .unwrap_or_else(|| format!("failed expression: {}", expr.trim()));
            Some(Failure { message, reason })
        }
        Outcome::Value(other) => error(&format!("no such overload: {}", other.type_of())),
        Outcome::Error(e) => error(&e),
    }
}

/// The problems of a policy or binding itself, as the real server's
/// validation reports them (a subset: what is required, and expressions
/// that do not compile).
pub(crate) fn problems(res: &Resource, obj: &Value) -> Vec<(String, &'static str, String)> {
    let mut out = Vec::new();
    if res.group != GROUP {
        return out;
    }
    let spec = &obj["spec"];
    match res.plural.as_str() {
        "validatingadmissionpolicies" => {
            if spec["matchConstraints"].is_null() {
                out.push((
                    "spec.matchConstraints".into(),
                    "FieldValueRequired",
                    "Required value".into(),
                ));
            }
            let none = |k: &str| spec[k].as_array().is_none_or(Vec::is_empty);
            if none("validations") && none("auditAnnotations") {
                let m = "Required value: validations or auditAnnotations must contain at least one item";
                out.push(("spec.validations".into(), "FieldValueRequired", m.into()));
                out.push((
                    "spec.auditAnnotations".into(),
                    "FieldValueRequired",
                    m.into(),
                ));
            }
            reasons(spec, &mut out);
            for list in ["matchConditions", "variables", "validations"] {
                expressions(spec, list, &mut out);
            }
        }
        "validatingadmissionpolicybindings"
            if spec["validationActions"]
                .as_array()
                .is_none_or(Vec::is_empty) =>
        {
            out.push((
                "spec.validationActions".into(),
                "FieldValueRequired",
                "Required value: at least one validation action is required".into(),
            ));
        }
        _ => {}
    }
    out
}

/// The validations' reasons the real server supports.
const REASONS: &[&str] = &["Forbidden", "Invalid", "RequestEntityTooLarge"];

/// Each validation's `reason` that is not one of [`REASONS`].
fn reasons(spec: &Value, out: &mut Vec<(String, &'static str, String)>) {
    for (i, v) in spec["validations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(r) = v["reason"].as_str().filter(|r| !REASONS.contains(r)) {
            out.push((
                format!("spec.validations[{i}].reason"),
                "FieldValueNotSupported",
                format!(
                    "Unsupported value: {}: supported values: \"Forbidden\", \"Invalid\", \"RequestEntityTooLarge\"",
                    serde_json::to_string(r).unwrap_or_default()
                ),
            ));
        }
    }
}

/// Each expression of `spec[list]` that does not compile (its
/// `expression` and `messageExpression`).
pub(super) fn expressions(spec: &Value, list: &str, out: &mut Vec<(String, &'static str, String)>) {
    for (i, item) in spec[list].as_array().into_iter().flatten().enumerate() {
        for key in ["expression", "messageExpression"] {
            let Some(src) = item[key].as_str() else {
                continue;
            };
            let err = rules::bounded(src).err().or_else(|| compile(src).err());
            if let Some(e) = err {
                out.push((
                    format!("spec.{list}[{i}].{key}"),
                    "FieldValueInvalid",
                    format!(
                        "Invalid value: {}: compilation failed: {e}",
                        serde_json::to_string(src).unwrap_or_default()
                    ),
                ));
            }
        }
    }
}
