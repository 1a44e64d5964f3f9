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
