//! Admission webhooks (`MutatingWebhookConfiguration`,
//! `ValidatingWebhookConfiguration`, admissionregistration.k8s.io/v1): the
//! pure half of kube-apiserver's webhook admission plugins — which
//! webhooks a write calls, the `AdmissionReview` sent, how an answer is
//! read and what a refusal looks like. The calls themselves (network I/O,
//! never under the store's lock) are [`crate::webhooks`]'s.
//!
//! A write with webhooks configured is run in passes, each a complete
//! write through the store ([`Pass`]): the first (a dry run) records what
//! the mutating webhooks are sent, at the point of the admission chain
//! where kube-apiserver calls them (after the mutating admission
//! policies, before the object is validated again); the webhooks'
//! patches are then replayed by the later passes at that same point. The
//! last pass checks that the stored object the webhooks saw is still the
//! live one (its `resourceVersion`) and is retried otherwise, as
//! kube-apiserver's `GuaranteedUpdate` re-runs admission on a conflict.
//!
//! Matching, as `predicates/{rules,namespace,object}` and the generic
//! dispatcher: `rules` (operations, `apiGroups`, `apiVersions`,
//! `resources` with `*`, `res/sub` and `*/*`, `scope`), the
//! `namespaceSelector` (the namespace's labels; a Namespace's own; any
//! cluster-scoped object matches), the `objectSelector` (the new or the
//! old object's labels), then `matchConditions` (CEL, the same
//! interpreter as the admission policies; an error follows
//! `failurePolicy`). Writes of webhook configurations and admission
//! policies are never sent to webhooks, as upstream exempts them.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use base64::Engine as _;
use serde_json::{Value, json};

use super::policy::{self, Lookup, Operation, Request};
use crate::status::ApiError;
use crate::util;

/// The plural of the mutating configurations.
pub(crate) const MUTATING: &str = "mutatingwebhookconfigurations";
/// The plural of the validating configurations.
pub(crate) const VALIDATING: &str = "validatingwebhookconfigurations";

/// The largest answer read from a webhook (our bound; kube-apiserver
/// reads what the webhook sends within its timeout).
pub(crate) const MAX_RESPONSE: usize = 3 * 1024 * 1024;

/// The default `timeoutSeconds` and its largest value.
const DEFAULT_TIMEOUT: u64 = 10;
const MAX_TIMEOUT: u64 = 30;

/// One webhook a write calls: its configuration's entry.
#[derive(Debug, Clone)]
pub(crate) struct Hook {
    /// The webhook's `name`.
    pub(crate) name: String,
    /// The entry of `webhooks[]`.
    pub(crate) spec: Value,
}

impl Hook {
    /// Whether a failure to call it (or to read its answer) is ignored.
    pub(crate) fn fails_open(&self) -> bool {
        self.spec["failurePolicy"].as_str() == Some("Ignore")
    }

    /// `timeoutSeconds`: 10 when unset, within 1..=30.
    pub(crate) fn timeout_secs(&self) -> u64 {
        self.spec["timeoutSeconds"]
            .as_u64()
            .unwrap_or(DEFAULT_TIMEOUT)
            .clamp(1, MAX_TIMEOUT)
    }

    /// `clientConfig.url`, or why it cannot be called in-process.
    pub(crate) fn url(&self) -> Result<&str, String> {
        let cc = &self.spec["clientConfig"];
        if let Some(u) = cc["url"].as_str() {
            return Ok(u);
        }
        if cc["service"].is_object() {
            return Err(format!(
                "failed to call webhook: service {}/{} cannot be resolved by the embedded server (use clientConfig.url)",
                cc["service"]["namespace"].as_str().unwrap_or_default(),
                cc["service"]["name"].as_str().unwrap_or_default()
            ));
        }
        Err("failed to call webhook: neither url nor service is set in clientConfig".into())
    }

    /// The PEM of `clientConfig.caBundle` (base64 on the wire).
    pub(crate) fn ca_pem(&self) -> Result<Option<Vec<u8>>, String> {
        match self.spec["clientConfig"]["caBundle"].as_str() {
            None | Some("") => Ok(None),
            Some(b) => base64::engine::general_purpose::STANDARD
                .decode(b)
                .map(Some)
                .map_err(|e| format!("failed to call webhook: caBundle is not base64: {e}")),
        }
    }

    /// Whether it is called again when a later mutation changed the
    /// object (`reinvocationPolicy: IfNeeded`; `Never` is the default).
    pub(crate) fn reinvoke_if_needed(&self) -> bool {
        self.spec["reinvocationPolicy"].as_str() == Some("IfNeeded")
    }

    /// Whether the webhook may be sent a dry-run request
    /// (`sideEffects: None` or `NoneOnDryRun`).
    pub(crate) fn allows_dry_run(&self) -> bool {
        matches!(
            self.spec["sideEffects"].as_str(),
            Some("None" | "NoneOnDryRun")
        )
    }
}

/// The attributes of a write that the webhooks are sent.
#[derive(Debug, Clone)]
pub(crate) struct Attributes {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) kind: String,
    pub(crate) resource: String,
    pub(crate) operation: Operation,
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) old: Option<Value>,
    pub(crate) dry_run: bool,
}

/// What one pass saw at the webhooks' points of the admission chain.
#[derive(Debug, Clone, Default)]
pub(crate) struct Recorded {
    pub(crate) attrs: Option<Attributes>,
    /// The object the mutating webhooks are sent (after the mutating
    /// policies), and the ones that match.
    pub(crate) to_mutate: Option<Value>,
    pub(crate) mutating: Vec<Hook>,
    /// The object the validating webhooks are sent (after all mutation
    /// and validation), and the ones that match.
    pub(crate) to_validate: Option<Value>,
    pub(crate) validating: Vec<Hook>,
    /// The request's `name` at the validating webhooks' point (a
    /// generated name is known there, not at the mutating webhooks').
    pub(crate) validated_name: Option<String>,
    /// `metadata.resourceVersion` of the stored object the pass read.
    pub(crate) old_rv: Option<String>,
    /// A matchCondition that failed closed.
    pub(crate) refused: Option<ApiError>,
}

/// One pass of a write through the store with webhooks configured.
#[derive(Debug, Default)]
pub(crate) struct Pass {
    /// The subresource written (`status`, `scale`, …), empty for the
    /// object itself.
    pub(crate) subresource: String,
    /// The JSON patches of the mutating webhooks, replayed in order.
    pub(crate) patches: Vec<Value>,
    /// The stored object's `resourceVersion` the webhooks saw; the pass
    /// fails as stale when the live one differs.
    pub(crate) expect_old_rv: Option<Option<String>>,
    /// Set when `expect_old_rv` did not hold.
    pub(crate) stale: AtomicBool,
    pub(crate) record: Mutex<Recorded>,
    /// The validation refusal of the object as the client sent it, held
    /// until the mutating admission has run ([`Pass::defer`]).
    pub(crate) deferred: Mutex<Option<ApiError>>,
    /// What the server made up for a new object, shared by the passes of
    /// one run of the write ([`Pass::made_up`]).
    pub(crate) made_up: std::sync::Arc<Mutex<Vec<(&'static str, String)>>>,
}

impl Pass {
    fn recorded(&self) -> std::sync::MutexGuard<'_, Recorded> {
        self.record.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What the pass recorded.
    pub(crate) fn take(&self) -> Recorded {
        std::mem::take(&mut *self.recorded())
    }

    /// Holds the validation refusal `e` of the object before mutation:
    /// kube-apiserver validates after the mutating admission (policies and
    /// webhooks), so a webhook may still make the object valid. The
    /// admission chain answers it ([`Pass::take_deferred`]) when nothing
    /// mutated the object, and validates the mutated object otherwise.
    pub(crate) fn defer(&self, e: ApiError) {
        *self.deferred.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
    }

    /// The value of `key` the passes share, made by `make` the first
    /// time.
    pub(crate) fn made_up(&self, key: &'static str, make: impl FnOnce() -> String) -> String {
        let mut m = self.made_up.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, v)) = m.iter().find(|(k, _)| *k == key) {
            return v.clone();
        }
        let v = make();
        m.push((key, v.clone()));
        v
    }

    /// The refusal held by [`Pass::defer`], if any.
    pub(crate) fn take_deferred(&self) -> Option<ApiError> {
        self.deferred
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// The mutating webhooks' point: records the object and the matching
    /// webhooks, then applies the replayed patches to `obj`. Whether it
    /// changed `obj`.
    pub(crate) fn mutate(
        &self,
        world: &dyn Lookup,
        req: &Request<'_>,
        obj: &mut Value,
    ) -> Result<bool, ApiError> {
        if exempt(req) {
            return Ok(false);
        }
        let old_rv = req.old.map(|o| rv(o).to_owned());
        if let Some(want) = &self.expect_old_rv
            && *want != old_rv
        {
            self.stale.store(true, Ordering::SeqCst);
            return Err(ApiError::conflict(
                req.res,
                req.name,
                "the object has been modified; please apply your changes to the latest version and try again",
            ));
        }
        let (sent, generated) = self.as_sent(req, obj);
        let seen = Request {
            object: Some(&sent),
            ..*req
        };
        let (hooks, refused) = matching(world, &seen, MUTATING, &self.subresource);
        {
            let mut r = self.recorded();
            let mut attrs = attributes(req);
            if generated {
                attrs.name.clear();
            }
            r.attrs = Some(attrs);
            r.old_rv = old_rv;
            r.to_mutate = Some(sent);
            r.mutating = hooks;
            r.refused = refused;
        }
        let before = obj.clone();
        for p in &self.patches {
            crate::patch::json_patch(obj, p).map_err(|e| {
                ApiError::internal(&format!("JSON patch of a mutating webhook failed: {e:?}"))
            })?;
        }
        Ok(*obj != before)
    }

    /// The object the mutating webhooks are sent, and whether its name was
    /// generated: on a create, as kube-apiserver's create handler has it
    /// before the store's `BeforeCreate`, without the `uid` and
    /// `creationTimestamp` the server stamps and without the name it
    /// generates for a `generateName` (the request's `name` is then empty).
    fn as_sent(&self, req: &Request<'_>, obj: &Value) -> (Value, bool) {
        let mut sent = obj.clone();
        if req.operation != Operation::Create || !self.subresource.is_empty() {
            return (sent, false);
        }
        let generated = self
            .made_up
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .any(|(k, v)| *k == "name" && v == req.name);
        if let Some(meta) = sent.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("uid");
            meta.remove("creationTimestamp");
            if generated {
                meta.remove("name");
            }
        }
        (sent, generated)
    }

    /// A DELETE of `req.old`: records it and the matching mutating and
    /// validating webhooks (both are sent `object: null`).
    pub(crate) fn delete(&self, world: &dyn Lookup, req: &Request<'_>) {
        if exempt(req) {
            return;
        }
        let (mutating, m_refused) = matching(world, req, MUTATING, &self.subresource);
        let (validating, v_refused) = matching(world, req, VALIDATING, &self.subresource);
        let mut r = self.recorded();
        r.attrs = Some(attributes(req));
        r.old_rv = req.old.map(|o| rv(o).to_owned());
        r.mutating = mutating;
        r.validating = validating;
        r.refused = m_refused.or(v_refused);
    }

    /// The validating webhooks' point: records the final object and the
    /// matching webhooks.
    pub(crate) fn validate(&self, world: &dyn Lookup, req: &Request<'_>) {
        if exempt(req) {
            return;
        }
        let (hooks, refused) = matching(world, req, VALIDATING, &self.subresource);
        let mut r = self.recorded();
        match r.attrs {
            None => {
                r.attrs = Some(attributes(req));
                r.old_rv = req.old.map(|o| rv(o).to_owned());
            }
            // A generated name, sent empty to the mutating webhooks, is
            // the validating webhooks' `name`.
            Some(_) => r.validated_name = Some(req.name.to_owned()),
        }
        r.to_validate = req.object.cloned();
        r.validating = hooks;
        if r.refused.is_none() {
            r.refused = refused;
        }
    }
}

fn rv(o: &Value) -> &str {
    o.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Writes no webhook is called for: webhook configurations and admission
/// policies themselves (upstream's `IsExemptAdmissionConfigurationResource`).
fn exempt(req: &Request<'_>) -> bool {
    req.res.group == policy::GROUP
}

fn attributes(req: &Request<'_>) -> Attributes {
    let res = req.res;
    Attributes {
        group: res.group.clone(),
        version: res.version.clone(),
        kind: res.kind.clone(),
        resource: res.plural.clone(),
        operation: req.operation,
        namespace: req.namespace.to_owned(),
        name: req.name.to_owned(),
        old: req.old.cloned(),
        dry_run: req.dry_run,
    }
}

/// The webhooks of the configurations of `plural` that the request
/// matches: configurations by name, webhooks in their order; and the
/// refusal of a matchCondition that failed to evaluate under
/// `failurePolicy: Fail`.
pub(crate) fn matching(
    world: &dyn Lookup,
    req: &Request<'_>,
    plural: &str,
    sub: &str,
) -> (Vec<Hook>, Option<ApiError>) {
    let mut configs = world.objects(policy::GROUP, plural);
    configs.sort_by(|a, b| policy::name_of(a).cmp(policy::name_of(b)));
    let namespace = policy::namespace_of(world, req);
    let namespace = namespace.as_deref();
    let mut out = Vec::new();
    for config in &configs {
        for spec in config["webhooks"].as_array().into_iter().flatten() {
            let hook = Hook {
                name: spec["name"].as_str().unwrap_or_default().to_owned(),
                spec: spec.clone(),
            };
            match applies(&hook, req, namespace, sub) {
                Ok(true) => out.push(hook),
                Ok(false) => {}
                Err(e) => return (out, Some(e)),
            }
        }
    }
    (out, None)
}

/// Whether a webhook of the stored configurations may be called for a
/// write of `res` (subresource `sub`) in namespace `ns` by one of
/// `operations`, before the object is known: `rules` (operations,
/// groups, versions, resources, `scope`) and the `namespaceSelector` (the
/// stored namespace's labels) decide. The `objectSelector` and the
/// `matchConditions` need the object as admission sees it (after a patch
/// or an apply is computed and the mutating policies ran), so a webhook
/// that passes the first two may match; the passes decide the rest.
/// Writes exempt from webhooks match none.
pub(crate) fn may_match(
    world: &dyn Lookup,
    res: &crate::resources::Resource,
    ns: &str,
    sub: &str,
    operations: &[Operation],
) -> bool {
    if res.group == policy::GROUP {
        return false;
    }
    let ns = if res.namespaced { ns } else { "" };
    operations.iter().any(|&operation| {
        let req = Request {
            res,
            operation,
            namespace: ns,
            name: "",
            object: None,
            old: None,
            dry_run: false,
        };
        // A Namespace's own labels (not known yet) decide its
        // namespaceSelector: `None` here, which every selector matches.
        let namespace = policy::namespace_of(world, &req);
        let labels = policy::namespace_labels_of(&req, namespace.as_deref());
        let configs: Vec<_> = [MUTATING, VALIDATING]
            .iter()
            .flat_map(|p| world.objects(policy::GROUP, p))
            .collect();
        configs
            .iter()
            .flat_map(|c| c["webhooks"].as_array().into_iter().flatten())
            .any(|spec| {
                spec["rules"]
                    .as_array()
                    .is_some_and(|rs| rs.iter().any(|r| rule_matches(r, &req, sub)))
                    && policy::selector_matches(&spec["namespaceSelector"], labels)
            })
    })
}

/// Whether one webhook is called for the request.
fn applies(
    hook: &Hook,
    req: &Request<'_>,
    namespace: Option<&Value>,
    sub: &str,
) -> Result<bool, ApiError> {
    let spec = &hook.spec;
    let rules_hit = spec["rules"]
        .as_array()
        .is_some_and(|rs| rs.iter().any(|r| rule_matches(r, req, sub)));
    if !rules_hit {
        return Ok(false);
    }
    let ns_labels = policy::namespace_labels_of(req, namespace);
    if !policy::selector_matches(&spec["namespaceSelector"], ns_labels) {
        return Ok(false);
    }
    let sel = &spec["objectSelector"];
    if !(empty_selector(sel)
        || [req.object, req.old]
            .into_iter()
            .flatten()
            .any(|o| policy::selector_matches(sel, Some(o))))
    {
        return Ok(false);
    }
    let base = policy::base_vars(req, namespace, None);
    match policy::conditions(spec, &base, !hook.fails_open()) {
        Ok(hit) => Ok(hit),
        Err(f) => Err(ApiError::internal(&format!(
            "failed calling webhook \"{}\": {}",
            hook.name, f.message
        ))),
    }
}

fn empty_selector(sel: &Value) -> bool {
    sel.is_null()
        || (sel["matchLabels"].as_object().is_none_or(|m| m.is_empty())
            && sel["matchExpressions"].as_array().is_none_or(Vec::is_empty))
}

/// One `RuleWithOperations`, as upstream's `rules.Matcher`: a resource
/// `res/sub` names a subresource, `*` every resource but no subresource,
/// `res/*` and `*/*` subresources too.
fn rule_matches(rule: &Value, req: &Request<'_>, sub: &str) -> bool {
    let strs = |f: &str| -> Vec<&str> {
        rule[f]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    let any = |f: &str, want: &str| strs(f).iter().any(|v| *v == "*" || *v == want);
    let res = req.res;
    let scope_ok = match rule["scope"].as_str().unwrap_or("*") {
        "Namespaced" => res.namespaced,
        "Cluster" => !res.namespaced,
        _ => true,
    };
    let resource_ok = strs("resources").iter().any(|r| {
        let (r, s) = r.split_once('/').unwrap_or((r, ""));
        (r == "*" || r == res.plural) && (s == "*" || s == sub)
    });
    scope_ok
        && resource_ok
        && any("operations", req.operation.name())
        && any("apiGroups", &res.group)
        && any("apiVersions", &res.version)
}

/// The `AdmissionReview` (v1) sent to a webhook: `uid` fresh per call.
pub(crate) fn review(
    attrs: &Attributes,
    sub: &str,
    object: Option<&Value>,
    user: &Value,
    options: &Value,
    uid: &str,
) -> Value {
    let kind = json!({"group": attrs.group, "version": attrs.version, "kind": attrs.kind});
    let resource =
        json!({"group": attrs.group, "version": attrs.version, "resource": attrs.resource});
    let mut r = json!({
        "uid": uid,
        "kind": kind,
        "resource": resource,
        "requestKind": kind,
        "requestResource": resource,
        "operation": attrs.operation.name(),
        "userInfo": user,
        "object": object.cloned().unwrap_or(Value::Null),
        "oldObject": attrs.old.clone().unwrap_or(Value::Null),
        "dryRun": attrs.dry_run,
        "options": options,
    });
    if !sub.is_empty() {
        r["subResource"] = json!(sub);
        r["requestSubResource"] = json!(sub);
    }
    if !attrs.name.is_empty() {
        r["name"] = json!(attrs.name);
    }
    if !attrs.namespace.is_empty() {
        r["namespace"] = json!(attrs.namespace);
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": r})
}

/// A webhook's answer, read.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    pub(crate) allowed: bool,
    /// `response.status` of a refusal.
    pub(crate) status: Value,
    /// The JSON patch of a mutating webhook.
    pub(crate) patch: Option<Value>,
    pub(crate) warnings: Vec<String>,
}

/// Reads a webhook's answer to the review of `uid`; `Err` is a failure to
/// call it (subject to `failurePolicy`), worded as upstream's.
pub(crate) fn read_answer(body: &[u8], uid: &str, mutating: bool) -> Result<Answer, String> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| format!("received invalid webhook response: {e}"))?;
    if v["apiVersion"] != "admission.k8s.io/v1" || v["kind"] != "AdmissionReview" {
        return Err(format!(
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {}, Kind={}",
            v["apiVersion"].as_str().unwrap_or_default(),
            v["kind"].as_str().unwrap_or_default()
        ));
    }
    let r = &v["response"];
    if !r.is_object() {
        return Err("webhook response was absent".into());
    }
    let got = r["uid"].as_str().unwrap_or_default();
    if got != uid {
        return Err(format!("expected response.uid=\"{uid}\", got \"{got}\""));
    }
    let mut answer = Answer {
        allowed: r["allowed"].as_bool().unwrap_or(false),
        status: r["status"].clone(),
        patch: None,
        warnings: util::strings(&r["warnings"]),
    };
    if let Some(p) = r["patch"].as_str().filter(|p| !p.is_empty()) {
        if !mutating {
            return Err("validating webhooks may not return patches".into());
        }
        match r["patchType"].as_str() {
            Some("JSONPatch") => {}
            Some(t) => return Err(format!("unsupported patch type \"{t}\"")),
            None => return Err("patchType must be set when a patch is returned".into()),
        }
        let raw = base64::engine::general_purpose::STANDARD
            .decode(p)
            .map_err(|e| format!("received invalid webhook response: patch is not base64: {e}"))?;
        let patch: Value = serde_json::from_slice(&raw)
            .map_err(|e| format!("received invalid webhook response: patch is not JSON: {e}"))?;
        answer.patch = Some(patch);
    }
    Ok(answer)
}

/// The refusal of a webhook that answered `allowed: false`, as upstream's
/// `webhookerrors.ToStatusErr`: its status code (403 when below 400),
/// reason and message, the message prefixed with the webhook's name.
pub(crate) fn denied(hook: &str, status: &Value) -> ApiError {
    let by = format!("admission webhook \"{hook}\" denied the request");
    let code = status["code"]
        .as_u64()
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..600).contains(c))
        .unwrap_or(403);
    let message = status["message"].as_str().unwrap_or_default();
    let reason = status["reason"].as_str().unwrap_or_default();
    let message = if !message.is_empty() {
        format!("{by}: {message}")
    } else if !reason.is_empty() {
        format!("{by}: {reason}")
    } else {
        format!("{by} without explanation")
    };
    ApiError {
        code,
        reason: known_reason(reason),
        message,
        details: status.get("details").filter(|d| d.is_object()).cloned(),
    }
}

/// A `StatusReason` kept as the server's own text; one the API does not
/// define is dropped.
fn known_reason(r: &str) -> &'static str {
    const KNOWN: &[&str] = &[
        "Unauthorized",
        "Forbidden",
        "NotFound",
        "AlreadyExists",
        "Conflict",
        "Gone",
        "Invalid",
        "ServerTimeout",
        "StoreReadError",
        "Timeout",
        "TooManyRequests",
        "BadRequest",
        "MethodNotAllowed",
        "NotAcceptable",
        "RequestEntityTooLarge",
        "UnsupportedMediaType",
        "InternalError",
        "Expired",
        "ServiceUnavailable",
    ];
    KNOWN.iter().copied().find(|k| *k == r).unwrap_or("")
}

/// A failure to call a webhook under `failurePolicy: Fail`: 500, as
/// upstream's `failed calling webhook "<name>": <why>`.
pub(crate) fn call_failed(hook: &str, why: &str) -> ApiError {
    ApiError::internal(&format!("failed calling webhook \"{hook}\": {why}"))
}

/// A dry run that matches a webhook with side effects: refused without
/// calling it (400, upstream's `NewDryRunUnsupportedErr`).
pub(crate) fn dry_run_unsupported(hook: &str) -> ApiError {
    ApiError::bad_request(format!(
        "admission webhook \"{hook}\" does not support dry run"
    ))
}

/// The checks of a webhook configuration written (a subset of upstream's
/// `ValidateMutatingWebhookConfiguration`): every webhook names a
/// `sideEffects` that v1 allows and a `timeoutSeconds` within 1..=30.
pub(crate) fn problems(plural: &str, obj: &Value) -> Vec<(String, &'static str, String)> {
    let mut out = Vec::new();
    if plural != MUTATING && plural != VALIDATING {
        return out;
    }
    for (i, w) in obj["webhooks"].as_array().into_iter().flatten().enumerate() {
        let at = format!("webhooks[{i}]");
        // Required (v1 has no default); the typed decoding of the body
        // reads an absent one as "".
        match w["sideEffects"].as_str().unwrap_or_default() {
            "None" | "NoneOnDryRun" => {}
            "" => out.push((
                format!("{at}.sideEffects"),
                "FieldValueRequired",
                "Required value: must specify one of None, NoneOnDryRun".into(),
            )),
            s => out.push((
                format!("{at}.sideEffects"),
                "FieldValueNotSupported",
                format!("Unsupported value: \"{s}\": supported values: \"None\", \"NoneOnDryRun\""),
            )),
        }
        if let Some(t) = w["timeoutSeconds"].as_i64()
            && !(1..=30).contains(&t)
        {
            out.push((
                format!("{at}.timeoutSeconds"),
                "FieldValueInvalid",
                format!("Invalid value: {t}: the timeout value must be between 1 and 30 seconds"),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::resources::Resource;

    fn pods() -> std::sync::Arc<Resource> {
        crate::resources::builtin()
            .into_iter()
            .find(|r| r.group.is_empty() && r.plural == "pods")
            .expect("pods served")
    }

    fn req(res: &Resource) -> Request<'_> {
        Request {
            res,
            operation: Operation::Update,
            namespace: "ns",
            name: "p",
            object: None,
            old: None,
            dry_run: false,
        }
    }

    fn rule(resources: &[&str]) -> Value {
        json!({"operations": ["UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": resources})
    }

    #[test]
    fn resources_name_subresources_as_upstream_splits_them() {
        let res = pods();
        let r = req(&res);
        assert!(rule_matches(&rule(&["pods"]), &r, ""));
        assert!(!rule_matches(&rule(&["pods"]), &r, "status"));
        assert!(!rule_matches(&rule(&["*"]), &r, "status"));
        assert!(rule_matches(&rule(&["pods/status"]), &r, "status"));
        assert!(rule_matches(&rule(&["pods/*"]), &r, "status"));
        assert!(rule_matches(&rule(&["*/*"]), &r, "status"));
        assert!(!rule_matches(&rule(&["pods/status"]), &r, ""));
        let mut cluster = rule(&["pods"]);
        cluster["scope"] = json!("Cluster");
        assert!(!rule_matches(&cluster, &r, ""));
        let mut create = rule(&["pods"]);
        create["operations"] = json!(["CREATE"]);
        assert!(!rule_matches(&create, &r, ""));
    }

    /// Stored validating configurations and namespaces.
    struct World {
        configs: Vec<Value>,
        namespaces: Vec<Value>,
    }

    impl Lookup for World {
        fn objects(&self, group: &str, plural: &str) -> Vec<Cow<'_, Value>> {
            match (group, plural) {
                (policy::GROUP, VALIDATING) => self.configs.iter().map(Cow::Borrowed).collect(),
                ("", "namespaces") => self.namespaces.iter().map(Cow::Borrowed).collect(),
                _ => Vec::new(),
            }
        }

        fn kind(&self, _: &str, _: &str) -> Option<std::sync::Arc<Resource>> {
            None
        }
    }

    #[test]
    fn may_match_reads_rules_and_namespace_selector_only() {
        let res = pods();
        let hook = |rule: Value, ns_sel: Value, extra: Value| {
            let mut h = json!({"name": "h", "rules": [rule], "namespaceSelector": ns_sel});
            if let Some(m) = extra.as_object() {
                for (k, v) in m {
                    h[k] = v.clone();
                }
            }
            json!({"metadata": {"name": "c"}, "webhooks": [h]})
        };
        let world = |config: Value| World {
            configs: vec![config],
            namespaces: vec![json!({"metadata": {"name": "ns", "labels": {"team": "a"}}})],
        };
        let ops = [Operation::Create];
        let team = |t: &str| json!({"matchLabels": {"team": t}});
        let create = || {
            let mut r = rule(&["pods"]);
            r["operations"] = json!(["CREATE"]);
            r
        };
        let w = world(hook(create(), team("a"), json!({})));
        assert!(may_match(&w, &res, "ns", "", &ops));
        assert!(!may_match(&w, &res, "ns", "status", &ops));
        assert!(!may_match(&w, &res, "ns", "", &[Operation::Update]));
        assert!(
            !may_match(&w, &res, "other", "", &ops),
            "namespace not stored"
        );
        let w = world(hook(create(), team("b"), json!({})));
        assert!(!may_match(&w, &res, "ns", "", &ops), "namespaceSelector");
        // An objectSelector or a matchCondition needs the object: may match.
        let w = world(hook(
            create(),
            Value::Null,
            json!({"objectSelector": {"matchLabels": {"x": "y"}}, "matchConditions": [{"name": "f", "expression": "false"}]}),
        ));
        assert!(may_match(&w, &res, "ns", "", &ops));
    }

    #[test]
    fn a_denial_keeps_the_answer_code_from_400_on() {
        let d = denied(
            "w.example.com",
            &json!({"code": 422, "message": "no", "reason": "Invalid"}),
        );
        assert_eq!(d.code, 422);
        assert_eq!(d.reason, "Invalid");
        assert_eq!(
            d.message,
            "admission webhook \"w.example.com\" denied the request: no"
        );
        let d = denied("w.example.com", &json!({"code": 200}));
        assert_eq!(d.code, 403);
        assert_eq!(
            d.message,
            "admission webhook \"w.example.com\" denied the request without explanation"
        );
        let d = denied("w", &json!({"reason": "NotMine"}));
        assert_eq!(
            (d.reason, d.message.as_str()),
            ("", "admission webhook \"w\" denied the request: NotMine")
        );
    }

    #[test]
    fn an_answer_for_another_review_or_a_bad_patch_is_a_failure() {
        let answer = |r: Value| {
            serde_json::to_vec(&json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": r}))
                .expect("json")
        };
        let other = read_answer(&answer(json!({"uid": "b", "allowed": true})), "a", false);
        assert_eq!(
            other.err().as_deref(),
            Some("expected response.uid=\"a\", got \"b\"")
        );
        let patch = "W3sib3AiOiJhZGQiLCJwYXRoIjoiL3giLCJ2YWx1ZSI6MX1d"; // [{"op":"add","path":"/x","value":1}]
        let validating = read_answer(
            &answer(json!({"uid": "a", "allowed": true, "patch": patch, "patchType": "JSONPatch"})),
            "a",
            false,
        );
        assert!(validating.is_err());
        let mutating = read_answer(
            &answer(json!({"uid": "a", "allowed": true, "patch": patch, "patchType": "JSONPatch", "warnings": ["w"]})),
            "a",
            true,
        )
        .expect("a patch");
        assert_eq!(
            mutating.patch,
            Some(json!([{"op": "add", "path": "/x", "value": 1}]))
        );
        assert_eq!(mutating.warnings, ["w"]);
        assert!(read_answer(b"{", "a", true).is_err());
        assert!(
            read_answer(
                &answer(json!({"uid": "a", "allowed": true, "patch": patch})),
                "a",
                true
            )
            .is_err()
        );
    }

    #[test]
    fn timeouts_default_and_are_bounded() {
        let hook = |t: Value| Hook {
            name: "h".into(),
            spec: json!({"timeoutSeconds": t}),
        };
        assert_eq!(hook(Value::Null).timeout_secs(), 10);
        assert_eq!(hook(json!(45)).timeout_secs(), 30);
        assert_eq!(hook(json!(0)).timeout_secs(), 1);
        let service = Hook {
            name: "s".into(),
            spec: json!({"clientConfig": {"service": {"namespace": "n", "name": "svc"}}}),
        };
        assert!(service.url().is_err_and(|e| e.contains("service n/svc")));
    }
}
