//! The review kinds (`SelfSubjectAccessReview`, `SubjectAccessReview`,
//! `LocalSubjectAccessReview`, `SelfSubjectRulesReview`,
//! `SelfSubjectReview`): create-only, never stored, answered with their
//! `status` filled in, as kube-apiserver does. The embedded server
//! authenticates (the optional token) but does not authorize, so every
//! access is allowed, as under kube-apiserver's `AlwaysAllow`.

use serde_json::{Value, json};

use crate::resources::Resource;
use crate::status::ApiError;

/// The user a request authenticates as (the kubeconfig's token user).
const USER: &str = "kubeset-admin";

/// The answer to a create of a review kind; `None` for any other kind.
pub(crate) fn answer(res: &Resource, mut obj: Value) -> Result<Option<Value>, ApiError> {
    let status = match (res.group.as_str(), res.plural.as_str()) {
        (
            "authorization.k8s.io",
            "selfsubjectaccessreviews" | "subjectaccessreviews" | "localsubjectaccessreviews",
        ) => json!({"allowed": true}),
        ("authorization.k8s.io", "selfsubjectrulesreviews") => json!({
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": false,
        }),
        ("authentication.k8s.io", "selfsubjectreviews") => json!({
            "userInfo": {"username": USER, "groups": ["system:masters", "system:authenticated"]},
        }),
        _ => return Ok(None),
    };
    let Value::Object(m) = &mut obj else {
        return Err(ApiError::bad_request("the review must be an object"));
    };
    if res.plural.ends_with("accessreviews") && !m.get("spec").is_some_and(Value::is_object) {
        return Err(ApiError::unprocessable(format!(
            "{} in version \"{}\" cannot be handled as a {}: spec is required",
            res.kind, res.version, res.kind
        )));
    }
    m.insert("apiVersion".into(), res.api_version().into());
    m.insert("kind".into(), res.kind.clone().into());
    m.insert("metadata".into(), json!({}));
    m.insert("status".into(), status);
    Ok(Some(obj))
}
