//! Subresources that write one part of their parent object, as
//! kube-apiserver serves them: `pods/binding`, `pods/ephemeralcontainers`,
//! `pods/resize`, `serviceaccounts/token`, `namespaces/finalize` and
//! `certificatesigningrequests/approval`, and `scale` (in
//! [`scale`]).
//!
//! Each one is a read-modify-write of the parent through [`Store::modify`]
//! (so watchers see one `MODIFIED` event and `resourceVersion` checks
//! apply), except `token`, which stores nothing. The part a subresource may
//! change is taken from the request and every other change in the request
//! is dropped, as upstream does; changing or removing an existing
//! ephemeral container, or Approved together with Denied, is refused
//! (422).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::Method;
use serde_json::{Value, json};

use crate::apply::Scope;
use crate::resources::Resource;
use crate::status::{self, ApiError};
use crate::store::{Store, WriteCtx};
use crate::util;

pub(crate) use crate::registry::Sub;

mod scale;
use crate::store::check_rv;

/// Audience of a token request that names none.
const DEFAULT_AUDIENCE: &str = "https://kubernetes.default.svc.cluster.local";
/// Lifetime of a token request that names none (upstream's default).
const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
/// Shortest lifetime upstream accepts.
const MIN_EXPIRATION_SECONDS: i64 = 600;
/// Longest lifetime upstream accepts (2^32 seconds).
const MAX_EXPIRATION_SECONDS: i64 = 1 << 32;

/// One request to a subresource of this module.
pub(crate) struct Call<'a> {
    pub(crate) store: &'a Store,
    pub(crate) res: &'a Resource,
    pub(crate) ns: &'a str,
    pub(crate) name: &'a str,
    pub(crate) sub: Sub,
    pub(crate) method: &'a Method,
    pub(crate) ctx: &'a WriteCtx,
}

impl Call<'_> {
    /// Read-modify-write of the parent, spec and status alike; 404 when it
    /// does not exist.
    fn modify(&self, f: impl FnOnce(&Value) -> Result<Value, ApiError>) -> Result<Value, ApiError> {
        let main = Scope::Main {
            status_separate: false,
        };
        self.store
            .modify(self.res, self.ns, self.name, main, self.ctx, |live| {
                f(live.ok_or_else(|| ApiError::not_found(self.res, self.name))?)
            })
    }
}

/// What a request body asks for: a whole object (POST, PUT) or a change
/// to apply to the live parent (PATCH).
pub(crate) enum Desired<'a> {
    /// The posted or replaced object.
    Object(Value),
    /// Applies a patch to (a copy of) the live parent.
    Patch(&'a dyn Fn(&mut Value) -> Result<(), ApiError>),
    /// A server-side apply configuration (only `scale` takes one).
    Apply {
        /// The configuration.
        config: &'a Value,
        /// `force=true`.
        force: bool,
    },
}

/// Serves `call` (`None`: a GET, no body): the response code and body.
pub(crate) fn serve(
    call: &Call<'_>,
    desired: Option<Desired<'_>>,
) -> Result<(u16, Value), ApiError> {
    if !call.sub.allows(call.method) {
        return Err(ApiError::method_not_allowed());
    }
    if call.sub == Sub::Scale {
        return Ok((200, scale::serve(call, desired)?));
    }
    let Some(desired) = desired else {
        return Ok((200, call.store.get(call.res, call.ns, call.name)?));
    };
    match call.sub {
        Sub::Binding => {
            let Desired::Object(binding) = desired else {
                return Err(ApiError::method_not_allowed());
            };
            bind(call, &binding)?;
            Ok((201, status::success(None)))
        }
        Sub::Token => {
            let Desired::Object(request) = desired else {
                return Err(ApiError::method_not_allowed());
            };
            Ok((201, token(call, request)?))
        }
        _ => Ok((200, write_part(call, desired)?)),
    }
}

/// `pods/binding`: assigns the pod to the binding's target node, once.
fn bind(call: &Call<'_>, binding: &Value) -> Result<(), ApiError> {
    let node = binding
        .pointer("/target/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    if node.is_empty() {
        return Err(ApiError::invalid(
            call.res,
            call.name,
            &[("target.name", "FieldValueRequired", "Required value".into())],
        ));
    }
    let kind = binding
        .pointer("/target/kind")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !kind.is_empty() && kind != "Node" {
        return Err(ApiError::invalid(
            call.res,
            call.name,
            &[(
                "target.kind",
                "FieldValueNotSupported",
                format!("Unsupported value: \"{kind}\": supported values: \"Node\""),
            )],
        ));
    }
    let binding_res = sub_resource(call.res, Sub::Binding);
    call.modify(|live| {
        if live.pointer("/metadata/deletionTimestamp").is_some() {
            return Err(ApiError::conflict(
                &binding_res,
                call.name,
                &format!(
                    "pod {} is being deleted, cannot be assigned to a host",
                    call.name
                ),
            ));
        }
        let assigned = live
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !assigned.is_empty() {
            return Err(ApiError::conflict(
                &binding_res,
                call.name,
                &format!(
                    "pod {} is already assigned to node \"{assigned}\"",
                    call.name
                ),
            ));
        }
        let mut pod = live.clone();
        pod["spec"]["nodeName"] = json!(node);
        if let Some(Value::Object(annotations)) = binding.pointer("/metadata/annotations") {
            let meta = &mut pod["metadata"];
            if !meta["annotations"].is_object() {
                meta["annotations"] = json!({});
            }
            for (k, v) in annotations {
                meta["annotations"][k] = v.clone();
            }
        }
        set_condition(
            &mut pod,
            json!({"type": "PodScheduled", "status": "True",
                       "lastTransitionTime": util::now_rfc3339()}),
        );
        Ok(pod)
    })?;
    Ok(())
}

/// Sets (replaces by `type`) one of `status.conditions`.
fn set_condition(obj: &mut Value, condition: Value) {
    let status = &mut obj["status"];
    if !status.is_object() {
        *status = json!({});
    }
    let conditions = &mut status["conditions"];
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    if let Value::Array(list) = conditions {
        list.retain(|c| c.get("type") != condition.get("type"));
        list.push(condition);
    }
}

/// `serviceaccounts/token`: a `TokenRequest` answered with an (unsigned)
/// JWT naming the service account. Nothing is stored.
fn token(call: &Call<'_>, mut request: Value) -> Result<Value, ApiError> {
    let sa = call.store.get(call.res, call.ns, call.name)?;
    let token_res = sub_resource(call.res, Sub::Token);
    let seconds = match request.pointer("/spec/expirationSeconds") {
        None | Some(Value::Null) => DEFAULT_EXPIRATION_SECONDS,
        Some(v) => v.as_i64().unwrap_or(0),
    };
    let invalid = |why: String| {
        ApiError::invalid(
            &token_res,
            "",
            &[("spec.expirationSeconds", "FieldValueInvalid", why)],
        )
    };
    if seconds < MIN_EXPIRATION_SECONDS {
        return Err(invalid(format!(
            "Invalid value: {seconds}: may not specify a duration less than 10 minutes"
        )));
    }
    if seconds > MAX_EXPIRATION_SECONDS {
        return Err(invalid(format!(
            "Invalid value: {seconds}: may not specify a duration larger than 2^32 seconds"
        )));
    }
    let audiences = match request.pointer("/spec/audiences") {
        Some(Value::Array(a)) if !a.is_empty() => a.clone(),
        _ => vec![json!(DEFAULT_AUDIENCE)],
    };
    let now = util::now_secs();
    let exp = now + seconds.unsigned_abs();
    let sa_uid = sa.pointer("/metadata/uid").cloned().unwrap_or(Value::Null);
    let claims = json!({
        "aud": audiences,
        "exp": exp,
        "iat": now,
        "nbf": now,
        "iss": "kubeset-testserver",
        "jti": util::uid(),
        "sub": format!("system:serviceaccount:{}:{}", call.ns, call.name),
        "kubernetes.io": {
            "namespace": call.ns,
            "serviceaccount": {"name": call.name, "uid": sa_uid},
        },
    });
    // Unsigned (`alg: none`): a test server has no key a client could check.
    let jwt = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    request["apiVersion"] = json!("authentication.k8s.io/v1");
    request["kind"] = json!("TokenRequest");
    request["metadata"] = json!({
        "name": call.name,
        "namespace": call.ns,
        "creationTimestamp": util::rfc3339(now),
    });
    if !request["spec"].is_object() {
        request["spec"] = json!({});
    }
    request["spec"]["audiences"] = json!(audiences);
    request["spec"]["expirationSeconds"] = json!(seconds);
    request["status"] = json!({"token": jwt, "expirationTimestamp": util::rfc3339(exp)});
    Ok(request)
}

/// The PUT/PATCH subresources: the live parent with only this
/// subresource's part taken from the request.
fn write_part(call: &Call<'_>, desired: Desired<'_>) -> Result<Value, ApiError> {
    call.modify(|live| {
        let wanted = match desired {
            Desired::Object(obj) => {
                check_rv(call.res, call.name, &obj, live)?;
                obj
            }
            Desired::Patch(patch) => {
                let mut obj = live.clone();
                patch(&mut obj)?;
                obj
            }
            Desired::Apply { .. } => return Err(ApiError::method_not_allowed()),
        };
        let mut out = live.clone();
        match call.sub {
            Sub::Finalize => {
                out["spec"]["finalizers"] = wanted
                    .pointer("/spec/finalizers")
                    .cloned()
                    .unwrap_or_else(|| json!([]));
            }
            Sub::Approval => approve(call, live, &wanted, &mut out)?,
            Sub::EphemeralContainers => ephemeral(call, live, &wanted, &mut out)?,
            Sub::Resize => resize(&wanted, &mut out),
            Sub::Scale | Sub::Binding | Sub::Token => {}
        }
        Ok(out)
    })
}

/// `approval`: `status.conditions` from the request, with `status`
/// defaulted to `True`; Approved and Denied exclude each other, and
/// neither may be removed once set.
fn approve(call: &Call<'_>, live: &Value, wanted: &Value, out: &mut Value) -> Result<(), ApiError> {
    let mut conditions = match wanted.pointer("/status/conditions") {
        Some(Value::Array(c)) => c.clone(),
        _ => Vec::new(),
    };
    let now = util::now_rfc3339();
    for c in &mut conditions {
        if c.get("status")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            c["status"] = json!("True");
        }
        for stamp in ["lastUpdateTime", "lastTransitionTime"] {
            if c.get(stamp).is_none_or(Value::is_null) {
                c[stamp] = json!(now);
            }
        }
    }
    let has = |list: &[Value], t: &str| {
        list.iter()
            .any(|c| c.get("type").and_then(Value::as_str) == Some(t))
    };
    let mut causes = Vec::new();
    if has(&conditions, "Approved") && has(&conditions, "Denied") {
        causes.push((
            "status.conditions",
            "FieldValueInvalid",
            "Invalid value: \"Denied\": Approved and Denied conditions are mutually exclusive"
                .to_owned(),
        ));
    }
    let before = match live.pointer("/status/conditions") {
        Some(Value::Array(c)) => c.as_slice(),
        _ => &[],
    };
    for t in ["Approved", "Denied"] {
        if has(before, t) && !has(&conditions, t) {
            causes.push((
                "status.conditions",
                "FieldValueForbidden",
                format!("Forbidden: updates may not remove a condition of type \"{t}\""),
            ));
        }
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid(call.res, call.name, &causes));
    }
    if !out["status"].is_object() {
        out["status"] = json!({});
    }
    out["status"]["conditions"] = Value::Array(conditions);
    Ok(())
}

fn named<'a>(list: &'a [Value], name: &str) -> Option<&'a Value> {
    list.iter()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(name))
}

fn array<'a>(obj: &'a Value, pointer: &str) -> &'a [Value] {
    obj.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `ephemeralcontainers`: `spec.ephemeralContainers` from the request;
/// existing ones may be neither changed nor removed, names are unique
/// across all containers of the pod.
fn ephemeral(
    call: &Call<'_>,
    live: &Value,
    wanted: &Value,
    out: &mut Value,
) -> Result<(), ApiError> {
    let new = array(wanted, "/spec/ephemeralContainers");
    let mut causes: Vec<(String, &str, String)> = Vec::new();
    for c in array(live, "/spec/ephemeralContainers") {
        let name = c.get("name").and_then(Value::as_str).unwrap_or("");
        let why = match named(new, name) {
            None => "removed",
            Some(now) if now != c => "changed",
            Some(_) => continue,
        };
        causes.push((
            "spec.ephemeralContainers".into(),
            "FieldValueForbidden",
            format!("Forbidden: existing ephemeral containers \"{name}\" may not be {why}"),
        ));
    }
    for (i, c) in new.iter().enumerate() {
        let name = c.get("name").and_then(Value::as_str).unwrap_or("");
        let field = format!("spec.ephemeralContainers[{i}].name");
        if name.is_empty() {
            causes.push((field, "FieldValueRequired", "Required value".into()));
            continue;
        }
        let clash = named(array(live, "/spec/containers"), name).is_some()
            || named(array(live, "/spec/initContainers"), name).is_some()
            || named(&new[..i], name).is_some();
        if clash {
            causes.push((
                field,
                "FieldValueDuplicate",
                format!("Duplicate value: \"{name}\""),
            ));
        }
    }
    ApiError::invalid_if_any(call.res, call.name, &causes)?;
    out["spec"]["ephemeralContainers"] = Value::Array(new.to_vec());
    Ok(())
}

/// `resize`: each container's `resources` and `resizePolicy` from the
/// request's container of the same name; every other change is dropped.
fn resize(wanted: &Value, out: &mut Value) {
    let want = array(wanted, "/spec/containers");
    let Some(Value::Array(have)) = out.pointer_mut("/spec/containers") else {
        return;
    };
    for c in have {
        let name = c.get("name").and_then(Value::as_str).unwrap_or("");
        let Some(w) = named(want, name) else {
            continue;
        };
        let (Some(c), Some(w)) = (c.as_object_mut(), w.as_object()) else {
            continue;
        };
        for key in ["resources", "resizePolicy"] {
            match w.get(key) {
                Some(v) => c.insert(key.to_owned(), v.clone()),
                None => c.remove(key),
            };
        }
    }
}

/// `pods/binding` as a resource of its own, for error messages
/// (`Operation cannot be fulfilled on pods/binding "x"`).
fn sub_resource(res: &Resource, sub: Sub) -> Resource {
    let mut r = res.clone();
    r.plural = format!("{}/{}", res.plural, sub.name());
    if sub == Sub::Token {
        r.kind = "TokenRequest".into();
        r.group = "authentication.k8s.io".into();
    }
    r
}
