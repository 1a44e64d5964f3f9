//! `Status` objects for failed requests, in the shape kube-apiserver uses:
//! the same reasons, codes, messages and `details`.

use serde_json::{Value, json};

use crate::resources::Resource;

/// A failed API request, rendered as a `Status` body.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ApiError {
    pub(crate) code: u16,
    pub(crate) reason: &'static str,
    pub(crate) message: String,
    pub(crate) details: Option<Value>,
}

fn details(res: &Resource, name: &str) -> Value {
    let mut d = json!({"name": name, "kind": res.plural});
    if !res.group.is_empty() {
        d["group"] = json!(res.group);
    }
    d
}

/// The reason of [`ApiError::page_not_found`]: answered as plain text.
pub(crate) const PAGE_NOT_FOUND: &str = "PageNotFound";

impl ApiError {
    /// 400 BadRequest.
    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self {
            code: 400,
            reason: "BadRequest",
            message: message.into(),
            details: None,
        }
    }

    /// 500 InternalError, as `apierrors.NewInternalError` words it.
    pub(crate) fn internal(message: &str) -> Self {
        Self {
            code: 500,
            reason: "InternalError",
            message: format!("Internal error occurred: {message}"),
            details: Some(json!({"causes": [{"message": message}]})),
        }
    }

    /// 500 with no reason: what kube-apiserver answers when a client's
    /// mistake reaches it as a plain Go error rather than an API status (a
    /// `resourceVersion` that is not a number, one set on a create, an
    /// unknown strategic merge directive). The class and the missing reason
    /// are the real server's; the message is ours and names the mistake.
    pub(crate) fn client_mistake_500(message: impl Into<String>) -> Self {
        Self {
            code: 500,
            reason: "",
            message: message.into(),
            details: None,
        }
    }

    /// 401 Unauthorized.
    pub(crate) fn unauthorized() -> Self {
        Self {
            code: 401,
            reason: "Unauthorized",
            message: "Unauthorized".into(),
            details: None,
        }
    }

    /// 404 for a URL that names no resource.
    pub(crate) fn path_not_found() -> Self {
        Self {
            code: 404,
            reason: "NotFound",
            message: "the server could not find the requested resource".into(),
            details: Some(json!({})),
        }
    }

    /// 404 for a path no API handler serves (outside `/api` and `/apis`,
    /// or a group the server does not have): kube-apiserver's mux answers
    /// these with a plain-text `404 page not found`, not a `Status`.
    pub(crate) fn page_not_found() -> Self {
        Self {
            code: 404,
            reason: PAGE_NOT_FOUND,
            message: "404 page not found".into(),
            details: None,
        }
    }

    /// 404 `pods "x" not found`.
    pub(crate) fn not_found(res: &Resource, name: &str) -> Self {
        Self {
            code: 404,
            reason: "NotFound",
            message: format!("{} \"{name}\" not found", res.qualified()),
            details: Some(details(res, name)),
        }
    }

    /// 404 `namespaces "x" not found`, for objects in a missing namespace.
    pub(crate) fn namespace_not_found(ns: &str) -> Self {
        Self {
            code: 404,
            reason: "NotFound",
            message: format!("namespaces \"{ns}\" not found"),
            details: Some(json!({"name": ns, "kind": "namespaces"})),
        }
    }

    /// 403 Forbidden for a create in a namespace being deleted, as the
    /// `NamespaceLifecycle` admission plugin words it.
    pub(crate) fn namespace_terminating(res: &Resource, name: &str, ns: &str) -> Self {
        let mut d = details(res, name);
        d["causes"] = json!([{"reason": "NamespaceTerminating",
            "message": format!("namespace {ns} is being terminated"),
            "field": "metadata.namespace"}]);
        Self {
            code: 403,
            reason: "Forbidden",
            message: format!(
                "{} \"{name}\" is forbidden: unable to create new content in namespace {ns} because it is being terminated",
                res.qualified()
            ),
            details: Some(d),
        }
    }

    /// 405 MethodNotAllowed.
    pub(crate) fn method_not_allowed() -> Self {
        Self {
            code: 405,
            reason: "MethodNotAllowed",
            message: "the server does not allow this method on the requested resource".into(),
            details: Some(json!({})),
        }
    }

    /// 409 AlreadyExists.
    pub(crate) fn already_exists(res: &Resource, name: &str) -> Self {
        Self {
            code: 409,
            reason: "AlreadyExists",
            message: format!("{} \"{name}\" already exists", res.qualified()),
            details: Some(details(res, name)),
        }
    }

    /// 409 Conflict on a stale resourceVersion or failed precondition.
    pub(crate) fn conflict(res: &Resource, name: &str, why: &str) -> Self {
        Self {
            code: 409,
            reason: "Conflict",
            message: format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                res.qualified()
            ),
            details: Some(details(res, name)),
        }
    }

    /// 409 Conflict for a stale `resourceVersion`.
    pub(crate) fn modified(res: &Resource, name: &str) -> Self {
        Self::conflict(
            res,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 409 Conflict from server-side apply: `conflicts` are `(manager,
    /// field)` pairs, the manager as the real server prints it (`"m"`,
    /// `"m" using v1`), the field as `.spec.ports[name="a"].port`.
    pub(crate) fn apply_conflicts(res: &Resource, name: &str, conflicts: &[(&str, &str)]) -> Self {
        let n = conflicts.len();
        let message = if n == 1 {
            let (manager, field) = conflicts[0];
            format!("Apply failed with 1 conflict: conflict with {manager}: {field}")
        } else {
            // Grouped by manager, as the real server words it.
            let mut lines: Vec<String> = Vec::new();
            for (i, (manager, field)) in conflicts.iter().enumerate() {
                if i == 0 || conflicts[i - 1].0 != *manager {
                    lines.push(format!("conflicts with {manager}:"));
                }
                lines.push(format!("- {field}"));
            }
            format!("Apply failed with {n} conflicts: {}", lines.join("\n"))
        };
        let causes: Vec<Value> = conflicts
            .iter()
            .map(|(manager, field)| {
                json!({
                    "reason": "FieldManagerConflict",
                    "message": format!("conflict with {manager}"),
                    "field": field,
                })
            })
            .collect();
        let mut d = details(res, name);
        d["causes"] = Value::Array(causes);
        Self {
            code: 409,
            reason: "Conflict",
            message,
            details: Some(d),
        }
    }

    /// 422 Invalid with one cause per `(field, cause reason, message)`.
    pub(crate) fn invalid(res: &Resource, name: &str, causes: &[(&str, &str, String)]) -> Self {
        Self::invalid_kind(&res.kind, &res.group, name, causes)
    }

    /// 422 Invalid with `causes` (field, reason, message), or `Ok` when
    /// there are none.
    pub(crate) fn invalid_if_any(
        res: &Resource,
        name: &str,
        causes: &[(String, &'static str, String)],
    ) -> Result<(), Self> {
        if causes.is_empty() {
            return Ok(());
        }
        let borrowed: Vec<(&str, &str, String)> = causes
            .iter()
            .map(|(f, r, m)| (f.as_str(), *r, m.clone()))
            .collect();
        Err(Self::invalid(res, name, &borrowed))
    }

    /// 422 Invalid of a patch whose result the kind's type cannot hold,
    /// as the patch handler words it: the patched object's text (JSON
    /// quoted) is the bad value of the field `patch`.
    pub(crate) fn invalid_patch(patched: String, why: &str) -> Self {
        let shown = Value::String(patched);
        let message = format!("Invalid value: {shown}: {why}");
        Self::invalid_kind("", "", "", &[("patch", "FieldValueInvalid", message)])
    }

    /// 422 Invalid for an object of `kind` in `group` that is not a
    /// served resource (`DeleteOptions` in `meta.k8s.io`).
    pub(crate) fn invalid_kind(
        kind: &str,
        group: &str,
        name: &str,
        causes: &[(&str, &str, String)],
    ) -> Self {
        // As `field.ErrorList.ToAggregate`: the message names each
        // distinct error once (in order); the causes keep them all.
        let mut texts: Vec<String> = Vec::new();
        for (f, _, m) in causes {
            let t = format!("{f}: {m}");
            if !texts.contains(&t) {
                texts.push(t);
            }
        }
        let text = if texts.len() == 1 {
            texts[0].clone()
        } else {
            format!("[{}]", texts.join(", "))
        };
        let mut d = json!({"kind": kind});
        if !name.is_empty() {
            d["name"] = json!(name);
        }
        if !group.is_empty() {
            d["group"] = json!(group);
        }
        d["causes"] = causes
            .iter()
            .map(|(f, r, m)| json!({"reason": r, "message": m, "field": f}))
            .collect();
        let qualified = if group.is_empty() {
            kind.to_owned()
        } else {
            format!("{kind}.{group}")
        };
        Self {
            code: 422,
            reason: "Invalid",
            message: format!("{qualified} \"{name}\" is invalid: {text}"),
            details: Some(d),
        }
    }

    /// 422 for a patch that cannot be applied.
    pub(crate) fn unprocessable(message: impl Into<String>) -> Self {
        Self {
            code: 422,
            reason: "Invalid",
            message: message.into(),
            details: None,
        }
    }

    /// 410 Expired for a resourceVersion older than the kept history.
    pub(crate) fn expired(message: impl Into<String>) -> Self {
        Self {
            code: 410,
            reason: "Expired",
            message: message.into(),
            details: None,
        }
    }

    /// 415 UnsupportedMediaType.
    pub(crate) fn unsupported_media_type(ct: &str) -> Self {
        Self {
            code: 415,
            reason: "UnsupportedMediaType",
            message: format!(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json; got {ct}"
            ),
            details: None,
        }
    }

    /// An injected failure (`fail_next`): the status code with its usual reason.
    pub(crate) fn injected(code: u16) -> Self {
        let (reason, message) = match code {
            429 => (
                "TooManyRequests",
                "the server has received too many requests and has asked us to try again later",
            ),
            500 => (
                "InternalError",
                "an error on the server (\"injected\") has prevented the request from succeeding",
            ),
            503 => (
                "ServiceUnavailable",
                "the server is currently unable to handle the request",
            ),
            504 => (
                "Timeout",
                "the server was unable to return a response in the time allotted, but may still be processing the request",
            ),
            409 => ("Conflict", "the server reported a conflict"),
            404 => (
                "NotFound",
                "the server could not find the requested resource",
            ),
            403 => ("Forbidden", "forbidden"),
            401 => ("Unauthorized", "Unauthorized"),
            _ => ("InternalError", "injected failure"),
        };
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    /// The `Status` object.
    pub(crate) fn to_status(&self) -> Value {
        let mut v = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if self.reason.is_empty()
            && let Value::Object(m) = &mut v
        {
            // kube-apiserver's StatusReasonUnknown is "", left out.
            m.remove("reason");
        }
        if let Some(d) = &self.details {
            v["details"] = d.clone();
        }
        v
    }
}

/// A `Status` with `status: Success`.
pub(crate) fn success(details: Option<Value>) -> Value {
    let mut v = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"});
    if let Some(d) = details {
        v["details"] = d;
    }
    v
}
