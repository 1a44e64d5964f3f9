//! Size limits as a default kube-apiserver v1.35 + etcd v3.6 enforce them,
//! with the real server's answers (checked against it by
//! `tests/validation.rs`):
//!
//! | limit | default, source | answer |
//! |---|---|---|
//! | request body | 3 MiB: `MaxRequestBodyBytes: int64(3 * 1024 * 1024)` in k8s.io/apiserver v0.35 `pkg/server/config.go` `NewConfig`; read by `limitedReadBody` (`pkg/endpoints/handlers/rest.go`) | `413 RequestEntityTooLarge`, `Request entity too large: limit is 3145728` |
//! | stored object | 1.5 MiB: etcd v3.6 `embed.DefaultMaxRequestBytes = 1.5 * 1024 * 1024` (`--max-request-bytes`) | `500`, no reason, `etcdserver: request is too large` (the apiserver passes etcd's error through for a create or update) |
//! | ConfigMap / Secret data | 1 MiB: `core.MaxSecretSize` (k8s.io/kubernetes v1.35 `pkg/apis/core/types.go`), summed over `data` and `binaryData` (`ValidateConfigMap`) or `data` (`ValidateSecret`) | `422 Invalid`, cause `FieldValueTooLong` on field `[]`: `Too long: may not be more than 1048576 bytes` |
//! | JSON patch operations | 10000: `maxJSONPatchOperations` in `pkg/endpoints/handlers/patch.go` | `413`, `Request entity too large: The allowed maximum operations in a JSON patch is 10000, got N` |
//!
//! The stored size is measured on our JSON encoding; etcd measures the
//! protobuf of built-in kinds (a little smaller) plus the request's
//! framing, so objects within a few percent of 1.5 MiB may be judged
//! differently. Above 2 MiB the real server's gRPC client refuses first
//! (`500 rpc error: code = ResourceExhausted ...`); we answer etcd's text
//! for both.

use serde_json::Value;

use crate::resources::Resource;
use crate::status::ApiError;

/// kube-apiserver's `MaxRequestBodyBytes`.
pub(crate) const MAX_REQUEST_BODY: usize = 3 * 1024 * 1024;
/// etcd's `--max-request-bytes` default.
pub(crate) const MAX_OBJECT: usize = 1024 * 1024 * 3 / 2;
/// `core.MaxSecretSize`.
const MAX_DATA: usize = 1024 * 1024;
/// `maxJSONPatchOperations`.
pub(crate) const MAX_JSON_PATCH_OPS: usize = 10_000;

/// `413` for a body over [`MAX_REQUEST_BODY`].
pub(crate) fn body_too_large() -> ApiError {
    too_large(format!("limit is {MAX_REQUEST_BODY}"))
}

/// `413` for a JSON patch of more than [`MAX_JSON_PATCH_OPS`] operations.
pub(crate) fn check_json_patch(patch: &Value) -> Result<(), ApiError> {
    match patch.as_array() {
        Some(ops) if ops.len() > MAX_JSON_PATCH_OPS => Err(too_large(format!(
            "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPS}, got {}",
            ops.len()
        ))),
        _ => Ok(()),
    }
}

fn too_large(what: String) -> ApiError {
    ApiError {
        code: 413,
        reason: "RequestEntityTooLarge",
        message: format!("Request entity too large: {what}"),
        details: None,
    }
}

/// Counts bytes without keeping them.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 = self.0.saturating_add(buf.len());
        if self.0 > MAX_OBJECT {
            // Stop serialising as soon as the limit is passed.
            return Err(std::io::Error::other("too large"));
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The checks of an object about to be stored: the kind's data limit
/// (validation, 422) and the store's size limit (500).
pub(crate) fn check_object(res: &Resource, name: &str, obj: &Value) -> Result<(), ApiError> {
    check_data_size(res, name, obj)?;
    let mut c = Counter(0);
    if serde_json::to_writer(&mut c, obj).is_err() {
        return Err(ApiError {
            code: 500,
            reason: "",
            message: "etcdserver: request is too large".into(),
            details: None,
        });
    }
    Ok(())
}

fn check_data_size(res: &Resource, name: &str, obj: &Value) -> Result<(), ApiError> {
    let fields: &[&str] = match (res.group.as_str(), res.plural.as_str()) {
        ("", "configmaps") => &["data", "binaryData"],
        ("", "secrets") => &["data"],
        _ => return Ok(()),
    };
    let decoded = |field: &str, v: &str| {
        // binaryData and Secret data are base64: count the decoded bytes.
        if field == "binaryData" || res.plural == "secrets" {
            v.len() / 4 * 3
        } else {
            v.len()
        }
    };
    let total: usize = fields
        .iter()
        .filter_map(|f| obj.get(*f).and_then(Value::as_object).map(|m| (*f, m)))
        .flat_map(|(f, m)| {
            m.values()
                .filter_map(Value::as_str)
                .map(move |v| decoded(f, v))
        })
        .sum();
    if total > MAX_DATA {
        return Err(ApiError::invalid(
            res,
            name,
            &[(
                "[]",
                "FieldValueTooLong",
                format!("Too long: may not be more than {MAX_DATA} bytes"),
            )],
        ));
    }
    Ok(())
}
