//! The Kubernetes `Status` object as it travels in error bodies and watch
//! `ERROR` events, and its typed `reason`.

use std::{fmt, time::Duration};

use serde::Deserialize;

/// The machine-readable `reason` of a failed `Status` (metav1.StatusReason).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StatusReason {
    /// The resource does not exist.
    NotFound,
    /// The resource being created already exists.
    AlreadyExists,
    /// A write conflicted (stale resourceVersion).
    Conflict,
    /// The request body failed validation.
    Invalid,
    /// The caller may not do this.
    Forbidden,
    /// Credentials are missing or invalid.
    Unauthorized,
    /// The server asks the client to slow down.
    TooManyRequests,
    /// The request did not finish in time; it may still complete.
    Timeout,
    /// The server could not finish the request in time; retry is safe.
    ServerTimeout,
    /// The resource (version) is gone.
    Gone,
    /// The requested resourceVersion is too old.
    Expired,
    /// The request was malformed.
    BadRequest,
    /// The verb is not supported on this resource.
    MethodNotAllowed,
    /// None of the accepted content types can be produced.
    NotAcceptable,
    /// The request body's content type is not supported.
    UnsupportedMediaType,
    /// The request body is too large.
    RequestEntityTooLarge,
    /// An internal error on the server.
    InternalError,
    /// The server is temporarily unavailable.
    ServiceUnavailable,
    /// Any other reason, or none (the empty string).
    Unknown(String),
}

impl StatusReason {
    /// Parse the wire value (`"NotFound"`, …); anything else is `Unknown`.
    pub fn parse(reason: &str) -> Self {
        match reason {
            "NotFound" => Self::NotFound,
            "AlreadyExists" => Self::AlreadyExists,
            "Conflict" => Self::Conflict,
            "Invalid" => Self::Invalid,
            "Forbidden" => Self::Forbidden,
            "Unauthorized" => Self::Unauthorized,
            "TooManyRequests" => Self::TooManyRequests,
            "Timeout" => Self::Timeout,
            "ServerTimeout" => Self::ServerTimeout,
            "Gone" => Self::Gone,
            "Expired" => Self::Expired,
            "BadRequest" => Self::BadRequest,
            "MethodNotAllowed" => Self::MethodNotAllowed,
            "NotAcceptable" => Self::NotAcceptable,
            "UnsupportedMediaType" => Self::UnsupportedMediaType,
            "RequestEntityTooLarge" => Self::RequestEntityTooLarge,
            "InternalError" => Self::InternalError,
            "ServiceUnavailable" => Self::ServiceUnavailable,
            other => Self::Unknown(other.to_owned()),
        }
    }

    /// The wire value.
    pub fn as_str(&self) -> &str {
        match self {
            Self::NotFound => "NotFound",
            Self::AlreadyExists => "AlreadyExists",
            Self::Conflict => "Conflict",
            Self::Invalid => "Invalid",
            Self::Forbidden => "Forbidden",
            Self::Unauthorized => "Unauthorized",
            Self::TooManyRequests => "TooManyRequests",
            Self::Timeout => "Timeout",
            Self::ServerTimeout => "ServerTimeout",
            Self::Gone => "Gone",
            Self::Expired => "Expired",
            Self::BadRequest => "BadRequest",
            Self::MethodNotAllowed => "MethodNotAllowed",
            Self::NotAcceptable => "NotAcceptable",
            Self::UnsupportedMediaType => "UnsupportedMediaType",
            Self::RequestEntityTooLarge => "RequestEntityTooLarge",
            Self::InternalError => "InternalError",
            Self::ServiceUnavailable => "ServiceUnavailable",
            Self::Unknown(other) => other,
        }
    }

    /// Whether this is one of the known reasons (not `Unknown`).
    pub fn is_known(&self) -> bool {
        !matches!(self, Self::Unknown(_))
    }
}

impl fmt::Display for StatusReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The fields of a `Status` body that the client reads.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct StatusBody {
    pub(crate) kind: Option<String>,
    pub(crate) status: Option<String>,
    pub(crate) message: Option<String>,
    pub(crate) reason: Option<String>,
    pub(crate) code: Option<i64>,
    pub(crate) details: Option<serde_json::Value>,
}

impl StatusBody {
    /// Parse `body` as a `Status` if it is one (`kind: Status`); garbage or
    /// other kinds give `None`.
    pub(crate) fn parse(body: &[u8]) -> Option<Self> {
        let status: Self = serde_json::from_slice(body).ok()?;
        (status.kind.as_deref() == Some("Status")).then_some(status)
    }

    /// `status: Failure`.
    pub(crate) fn is_failure(&self) -> bool {
        self.status.as_deref() == Some("Failure")
    }

    /// `details.retryAfterSeconds` when positive.
    pub(crate) fn retry_after(&self) -> Option<Duration> {
        let secs = self.details.as_ref()?.get("retryAfterSeconds")?.as_u64()?;
        (secs > 0).then(|| Duration::from_secs(secs))
    }
}

/// Most causes read from one conflict answer; a server sends one per
/// conflicting field, so this bounds what a hostile body can make us keep.
pub const MAX_APPLY_CONFLICTS: usize = 1024;

/// One field a server-side apply wanted to change that another field
/// manager owns: a `FieldManagerConflict` cause of a 409 `Status`
/// (`details.causes[]`), read by [`ApiError::apply_conflicts`](crate::ApiError::apply_conflicts).
///
/// kube-apiserver writes the cause's message as `conflict with "<manager>"`,
/// followed by ` with subresource "<name>"` for an owner through a
/// subresource and ` using <apiVersion>` for an owner by update (a
/// non-apply write).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApplyConflict {
    /// The manager that owns the field (`"kubectl"`, unquoted).
    pub manager: String,
    /// The field as the server names it:
    /// `.spec.template.spec.containers[name="app"].image`.
    pub field: String,
    /// The subresource the owner wrote it through (`status`, `scale`), if any.
    pub subresource: Option<String>,
    /// The apiVersion of an owner by update (`Update` operation); `None`
    /// for an applier.
    pub api_version: Option<String>,
    /// The cause's message, verbatim.
    pub message: String,
}

impl ApplyConflict {
    /// Reads `details.causes` of a 409: every `FieldManagerConflict` cause,
    /// in order (at most [`MAX_APPLY_CONFLICTS`]); `None` when there is
    /// none.
    pub(crate) fn from_details(details: &serde_json::Value) -> Option<Vec<ApplyConflict>> {
        let causes = details.get("causes")?.as_array()?;
        let out: Vec<ApplyConflict> = causes
            .iter()
            .filter(|c| c.get("reason").and_then(|r| r.as_str()) == Some("FieldManagerConflict"))
            .take(MAX_APPLY_CONFLICTS)
            .map(|c| {
                let text = |k: &str| c.get(k).and_then(|v| v.as_str()).unwrap_or_default();
                ApplyConflict::parse(text("field"), text("message"))
            })
            .collect();
        (!out.is_empty()).then_some(out)
    }

    /// A conflict from a cause's `field` and `message`. A message in
    /// another shape keeps its text after `conflict with ` (or the whole
    /// text) as the manager.
    pub fn parse(field: &str, message: &str) -> ApplyConflict {
        let rest = message.strip_prefix("conflict with ").unwrap_or(message);
        let (manager, mut tail) = match go_quoted(rest) {
            Some((manager, tail)) => (manager, tail),
            None => (rest.to_owned(), ""),
        };
        let mut subresource = None;
        if let Some(after) = tail.strip_prefix(" with subresource ")
            && let Some((sub, t)) = go_quoted(after)
        {
            subresource = Some(sub);
            tail = t;
        }
        let api_version = tail
            .strip_prefix(" using ")
            .map(str::to_owned)
            .filter(|v| !v.is_empty());
        ApplyConflict {
            manager,
            field: field.to_owned(),
            subresource,
            api_version,
            message: message.to_owned(),
        }
    }
}

impl fmt::Display for ApplyConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (owned by {:?})", self.field, self.manager)
    }
}

/// A Go `%q` string at the start of `s` and what follows it: the common
/// escapes (`\"`, `\\`, `\n`, `\t`, `\uXXXX`, …) decoded; `None` when `s`
/// does not start with a complete quoted string.
fn go_quoted(s: &str) -> Option<(String, &str)> {
    let body = s.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &body[i + 1..])),
            '\\' => {
                let (_, e) = chars.next()?;
                match e {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'u' | 'U' | 'x' => {
                        let width = match e {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let hex: String = (0..width)
                            .filter_map(|_| chars.next())
                            .map(|(_, h)| h)
                            .collect();
                        let code = u32::from_str_radix(&hex, 16).ok()?;
                        out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
                    }
                    other => out.push(other),
                }
            }
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn conflict_causes_name_manager_field_and_owner_kind() {
        let details = json!({"name": "web", "group": "apps", "kind": "deployments", "causes": [
            {"reason": "FieldManagerConflict", "message": "conflict with \"a\"",
             "field": ".spec.template.spec.containers[name=\"app\"].image"},
            {"reason": "FieldValueInvalid", "message": "x", "field": "spec"},
            {"reason": "FieldManagerConflict", "message": "conflict with \"kube-controller-manager\" with subresource \"status\" using apps/v1",
             "field": ".status.replicas"},
            {"reason": "FieldManagerConflict", "message": "conflict with \"ed\\\"it\" using v1",
             "field": ".data.k"},
        ]});
        let got = ApplyConflict::from_details(&details).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].manager, "a");
        assert_eq!(
            got[0].field,
            ".spec.template.spec.containers[name=\"app\"].image"
        );
        assert_eq!(
            (got[0].subresource.as_deref(), got[0].api_version.as_deref()),
            (None, None)
        );
        assert_eq!(got[1].manager, "kube-controller-manager");
        assert_eq!(got[1].subresource.as_deref(), Some("status"));
        assert_eq!(got[1].api_version.as_deref(), Some("apps/v1"));
        assert_eq!(got[2].manager, "ed\"it");
        assert_eq!(got[2].api_version.as_deref(), Some("v1"));
        assert_eq!(
            got[0].to_string(),
            ".spec.template.spec.containers[name=\"app\"].image (owned by \"a\")"
        );
    }

    #[test]
    fn hostile_or_foreign_details_give_none_or_raw_text() {
        assert_eq!(ApplyConflict::from_details(&json!({})), None);
        assert_eq!(ApplyConflict::from_details(&json!({"causes": "x"})), None);
        assert_eq!(
            ApplyConflict::from_details(&json!({"causes": [1, null]})),
            None
        );
        // A cause without a message or in a foreign shape never panics.
        let odd = ApplyConflict::parse(".a", "conflict with \"unterminated");
        assert_eq!(odd.manager, "\"unterminated");
        let odd = ApplyConflict::parse(".a", "conflict with \"bad \\u12\"");
        assert_eq!(odd.manager, "\"bad \\u12\"");
        assert_eq!(ApplyConflict::parse("", "").manager, "");
        let many: Vec<serde_json::Value> = (0..MAX_APPLY_CONFLICTS + 5)
            .map(|i| json!({"reason": "FieldManagerConflict", "message": "conflict with \"m\"", "field": format!(".f{i}")}))
            .collect();
        let got = ApplyConflict::from_details(&json!({ "causes": many })).unwrap();
        assert_eq!(got.len(), MAX_APPLY_CONFLICTS);
        assert_eq!(
            go_quoted("\"\\u00e9\\x41\" rest"),
            Some(("éA".to_owned(), " rest"))
        );
    }
}
