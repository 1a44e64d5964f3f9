//! Errors of the REST layer.

use std::time::Duration;

use crate::{
    auth::BoxError,
    budget::{MAX_SERVER_WAIT, WaitCause},
    status::{ApplyConflict, StatusBody, StatusReason},
    transport::TransportKind,
    url::go_duration,
    verb::Verb,
};

/// An error answered by the API server: a failed `Status` body, or a
/// status code whose body said nothing usable (client-go's `StatusError`).
///
/// `Display` prints the message verbatim, as client-go does.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
#[non_exhaustive]
pub struct ApiError {
    /// The typed `reason`.
    pub status_reason: StatusReason,
    /// The HTTP status code (or the `code` of the `Status` body).
    pub code: u16,
    /// The human-readable message, verbatim from the server when it sent one.
    pub message: String,
    /// The `details` of the `Status`, if any.
    pub details: Option<serde_json::Value>,
    /// How long the server asked the client to wait (`Retry-After` or
    /// `details.retryAfterSeconds`).
    pub retry_after: Option<Duration>,
    /// Whether the error came from a `Status` body (rather than being made
    /// up from the status code).
    pub from_status: bool,
}

impl ApiError {
    /// An error with a reason, code and message and nothing else.
    pub fn new(status_reason: StatusReason, code: u16, message: impl Into<String>) -> Self {
        Self {
            status_reason,
            code,
            message: message.into(),
            details: None,
            retry_after: None,
            from_status: false,
        }
    }

    /// Build from a failed `Status`; `http_code` is used when the body has
    /// no `code`.
    pub(crate) fn from_status(status: StatusBody, http_code: u16) -> Self {
        let retry_after = status.retry_after();
        let code = status
            .code
            .and_then(|c| u16::try_from(c).ok())
            .filter(|c| *c != 0)
            .unwrap_or(http_code);
        Self {
            status_reason: StatusReason::parse(status.reason.as_deref().unwrap_or("")),
            code,
            message: status.message.unwrap_or_default(),
            details: status.details,
            retry_after,
            from_status: true,
        }
    }

    fn reason_or_code(&self, reason: &StatusReason, code: u16) -> bool {
        self.status_reason == *reason || (!self.status_reason.is_known() && self.code == code)
    }

    /// NotFound (or an unknown reason with 404).
    pub fn is_not_found(&self) -> bool {
        self.reason_or_code(&StatusReason::NotFound, 404)
    }
    /// AlreadyExists.
    pub fn is_already_exists(&self) -> bool {
        self.status_reason == StatusReason::AlreadyExists
    }
    /// Conflict (or an unknown reason with 409).
    pub fn is_conflict(&self) -> bool {
        self.reason_or_code(&StatusReason::Conflict, 409)
    }
    /// Invalid (or an unknown reason with 422).
    pub fn is_invalid(&self) -> bool {
        self.reason_or_code(&StatusReason::Invalid, 422)
    }
    /// Gone or Expired (or an unknown reason with 410): relist needed.
    pub fn is_gone(&self) -> bool {
        self.status_reason == StatusReason::Expired || self.reason_or_code(&StatusReason::Gone, 410)
    }
    /// Forbidden (or an unknown reason with 403).
    pub fn is_forbidden(&self) -> bool {
        self.reason_or_code(&StatusReason::Forbidden, 403)
    }
    /// Unauthorized (or an unknown reason with 401).
    pub fn is_unauthorized(&self) -> bool {
        self.reason_or_code(&StatusReason::Unauthorized, 401)
    }
    /// TooManyRequests or code 429.
    pub fn is_too_many_requests(&self) -> bool {
        self.status_reason == StatusReason::TooManyRequests || self.code == 429
    }
    /// BadRequest (or an unknown reason with 400).
    pub fn is_bad_request(&self) -> bool {
        self.reason_or_code(&StatusReason::BadRequest, 400)
    }
    /// MethodNotAllowed (or an unknown reason with 405).
    pub fn is_method_not_allowed(&self) -> bool {
        self.reason_or_code(&StatusReason::MethodNotAllowed, 405)
    }
    /// Timeout (or an unknown reason with 504).
    pub fn is_timeout(&self) -> bool {
        self.reason_or_code(&StatusReason::Timeout, 504)
    }
    /// ServerTimeout.
    pub fn is_server_timeout(&self) -> bool {
        self.status_reason == StatusReason::ServerTimeout
    }
    /// InternalError (or an unknown reason with 500).
    pub fn is_internal_error(&self) -> bool {
        self.reason_or_code(&StatusReason::InternalError, 500)
    }
    /// ServiceUnavailable (or an unknown reason with 503).
    pub fn is_service_unavailable(&self) -> bool {
        self.reason_or_code(&StatusReason::ServiceUnavailable, 503)
    }
    /// RequestEntityTooLarge (or an unknown reason with 413).
    pub fn is_request_entity_too_large(&self) -> bool {
        self.reason_or_code(&StatusReason::RequestEntityTooLarge, 413)
    }

    /// The fields a server-side apply could not take because other field
    /// managers own them: the `FieldManagerConflict` causes of a 409
    /// Conflict, typed; `None` for any other error (a stale
    /// resourceVersion's 409 included). Retry with `force` to take them.
    ///
    /// ```
    /// use kubeset_rest::{ApiError, StatusReason};
    /// let mut err = ApiError::new(StatusReason::Conflict, 409, "Apply failed with 1 conflict");
    /// err.details = Some(serde_json::json!({"causes": [{
    ///     "reason": "FieldManagerConflict",
    ///     "message": "conflict with \"editor\" using v1",
    ///     "field": ".data.k",
    /// }]}));
    /// let conflicts = err.apply_conflicts().unwrap();
    /// assert_eq!((conflicts[0].manager.as_str(), conflicts[0].field.as_str()), ("editor", ".data.k"));
    /// ```
    pub fn apply_conflicts(&self) -> Option<Vec<ApplyConflict>> {
        if !self.is_conflict() {
            return None;
        }
        ApplyConflict::from_details(self.details.as_ref()?)
    }

    /// Whether trying again later can succeed: the server asked for a delay
    /// (`Retry-After`), or the reason or code says it was overloaded or
    /// timed out (429, 502, 503, 504, Timeout, ServerTimeout).
    pub fn is_retryable(&self) -> bool {
        self.retry_after.is_some()
            || self.is_too_many_requests()
            || self.is_server_timeout()
            || self.is_timeout()
            || self.is_service_unavailable()
            || matches!(self.code, 502..=504)
    }
}

/// Everything that can go wrong in the REST layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request was built wrongly (bad path segment, field set twice,
    /// preflight); returned by `send` without any network call.
    #[error("{message}")]
    InvalidRequest {
        /// client-go's message.
        message: String,
    },

    /// The client configuration is unusable.
    #[error("invalid client configuration: {reason}")]
    InvalidConfig {
        /// What is wrong.
        reason: String,
    },

    /// The client configuration could not be loaded or resolved
    /// (kubeconfig, in-cluster environment, exec plugin): kube-rs's
    /// `Error::InferConfig`/`Error::Kubeconfig` under one variant, so
    /// `Client::try_from(config)?` and `Config::infer().await?` reach a
    /// function returning this error.
    #[error("loading the client configuration")]
    Config {
        /// The config layer's error (a `ConfigError`; boxed as a trait
        /// object so that this low layer does not import the config layer:
        /// `downcast_ref::<ConfigError>()` gets it back).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// The HTTP client could not be built.
    #[error("building the HTTP client")]
    HttpClient {
        /// The cause.
        #[source]
        source: reqwest::Error,
    },

    /// TLS setup failed (no trust roots, bad provider).
    #[error("setting up TLS")]
    Tls {
        /// The cause.
        #[source]
        source: rustls::Error,
    },

    /// The request body could not be serialized.
    #[error("serializing the request body")]
    SerializeBody {
        /// The cause.
        #[source]
        source: serde_json::Error,
    },

    /// The server answered with an error status.
    #[error(transparent)]
    Api(Box<ApiError>),

    /// The connection failed or broke before a response was complete.
    #[error("{kind} on {verb} {url}")]
    Transport {
        /// Classification (refused, reset, timeout, TLS, …).
        kind: TransportKind,
        /// HTTP method.
        verb: Verb,
        /// Full URL of the attempt.
        url: String,
        /// The cause.
        #[source]
        source: reqwest::Error,
    },

    /// The tower service of a client built over one
    /// ([`RestClient::from_service`](crate::RestClient::from_service))
    /// failed to answer. Final: a service's errors are not retried.
    #[error("{verb} {url}: the client's service failed")]
    Service {
        /// HTTP method.
        verb: Verb,
        /// The request's URL (its path and query when the client has no
        /// base URL).
        url: String,
        /// The service's error.
        #[source]
        source: crate::service::BoxError,
    },

    /// Reading a response body from a client's tower service failed.
    #[error("reading the response body from the client's service")]
    ServiceBody {
        /// The body's error.
        #[source]
        source: crate::service::BoxError,
    },

    /// No (complete) response within the timeout.
    #[error("{verb} {url}: no response within {}", go_duration(*timeout))]
    Timeout {
        /// HTTP method.
        verb: Verb,
        /// Full URL of the attempt.
        url: String,
        /// The timeout that expired.
        timeout: Duration,
    },

    /// Reading a streamed body (watch, logs) failed.
    #[error("{kind} while reading the response body")]
    Body {
        /// Classification.
        kind: TransportKind,
        /// The cause.
        #[source]
        source: reqwest::Error,
    },

    /// A successful response had no body to decode.
    #[error("0-length response with status code: {code} and content type: {content_type}")]
    EmptyBody {
        /// HTTP status code.
        code: u16,
        /// The response's Content-Type (may be empty).
        content_type: String,
    },

    /// The body could not be decoded into the requested type.
    #[error("decoding the response body as {type_name}")]
    Decode {
        /// The Rust type asked for.
        type_name: &'static str,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },

    /// A stream (exec, attach, port-forward) could not be opened or broke.
    #[cfg(feature = "ws")]
    #[error("streaming")]
    Upgrade {
        /// The cause.
        #[source]
        source: crate::upgrade::UpgradeError,
    },

    /// The authenticator failed to supply credentials.
    #[error("obtaining credentials")]
    Auth {
        /// The cause.
        #[source]
        source: BoxError,
    },

    /// The last attempt failed and an earlier attempt failed differently
    /// (client-go's `WrapPreviousError`).
    #[error("{last} - error from a previous attempt: {previous}")]
    Retried {
        /// The error of the final attempt.
        last: Box<Error>,
        /// The error of the latest earlier failed attempt.
        previous: Box<Error>,
    },

    /// A watch event had an unknown `type`.
    #[error("got invalid watch event type: {event_type}")]
    InvalidWatchEventType {
        /// The type received.
        event_type: String,
    },

    /// A protobuf body could not be decoded into the requested type.
    #[error("decoding the protobuf response body as {type_name}")]
    DecodeProtobuf {
        /// The Rust type asked for.
        type_name: &'static str,
        /// The cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// A protobuf watch frame is not a valid `WatchEvent`, or its object
    /// did not decode.
    #[error("unable to decode a protobuf event from the watch stream")]
    WatchFrame {
        /// The cause.
        #[source]
        source: FrameError,
    },

    /// A watch event line could not be decoded.
    #[error("unable to decode an event from the watch stream")]
    WatchDecode {
        /// The cause.
        #[source]
        source: serde_json::Error,
    },

    /// Every API server tried within the call's budget failed to answer
    /// (failover); one entry per attempt, in order.
    #[error("no API server answered: {}", describe_failures(attempts))]
    AllEndpointsFailed {
        /// Each attempt: the endpoint and why it failed.
        attempts: Vec<EndpointFailure>,
    },

    /// The call's time budget cannot cover the next wait (a server's
    /// `Retry-After`, backoff, the rate limiter, a failover pause), or,
    /// without a budget, a server asked for a wait above
    /// [`MAX_SERVER_WAIT`](crate::budget::MAX_SERVER_WAIT): the call fails
    /// at once instead of sleeping past it.
    #[error(
        "{verb} {url}: {cause} of {} exceeds {}{}",
        go_duration(*wait),
        describe_budget(*budget, *remaining),
        last.as_ref().map(|e| format!("; last error: {e}")).unwrap_or_default()
    )]
    BudgetExhausted {
        /// HTTP method.
        verb: Verb,
        /// Full URL of the request.
        url: String,
        /// What the wait was for.
        cause: WaitCause,
        /// The wait that was asked for.
        wait: Duration,
        /// The call's whole budget (`None`: the call had none).
        budget: Option<Duration>,
        /// What was left of it.
        remaining: Option<Duration>,
        /// The error of the last attempt (the server's answer that asked
        /// for the wait), if any.
        last: Option<Box<Error>>,
    },

    /// A non-streaming response body is larger than the client's limit
    /// ([`RestConfig::with_max_response_body`](crate::RestConfig::with_max_response_body)).
    #[error("{verb} {url}: response body larger than the limit of {limit} bytes{}",
        content_length.map(|n| format!(" (Content-Length: {n})")).unwrap_or_default())]
    ResponseTooLarge {
        /// HTTP method.
        verb: Verb,
        /// Full URL of the request.
        url: String,
        /// The limit in bytes.
        limit: usize,
        /// The Content-Length the server announced, if it did.
        content_length: Option<u64>,
    },

    /// A streamed body (watch, logs) ran past the client's deadline for it:
    /// the request's `timeout` plus a grace of 1 s (the server should have
    /// ended it by then).
    #[error("the stream did not end within {}", go_duration(*deadline))]
    StreamDeadline {
        /// The deadline that passed.
        deadline: Duration,
    },

    /// A watch stream ended in the middle of an event: the event is lost
    /// to this stream (a resumable watch reopens from the last one seen).
    #[error("the watch stream ended in the middle of an event ({received} bytes of it received)")]
    WatchCut {
        /// How many bytes of the unfinished event had arrived.
        received: usize,
    },

    /// A watch line grew beyond the limit without a newline.
    #[error("watch event larger than {limit} bytes")]
    WatchLineTooLong {
        /// The limit in bytes.
        limit: usize,
    },
}

fn describe_budget(budget: Option<Duration>, remaining: Option<Duration>) -> String {
    match (budget, remaining) {
        (Some(b), Some(r)) => format!(
            "the time budget of {} ({} left)",
            go_duration(b),
            go_duration(r)
        ),
        (Some(b), None) => format!("the time budget of {}", go_duration(b)),
        (None, _) => format!(
            "the longest server wait allowed without a time budget ({})",
            go_duration(MAX_SERVER_WAIT)
        ),
    }
}

fn describe_failures(attempts: &[EndpointFailure]) -> String {
    if attempts.is_empty() {
        return "no endpoint could be tried within the budget".to_owned();
    }
    let parts: Vec<String> = attempts
        .iter()
        .map(|a| format!("{} ({})", a.endpoint, a.kind))
        .collect();
    parts.join(", ")
}

impl From<ApiError> for Error {
    fn from(e: ApiError) -> Self {
        Error::Api(Box::new(e))
    }
}

impl Error {
    /// The server's error, if this is one (looking through `Retried`).
    pub fn api_error(&self) -> Option<&ApiError> {
        match self {
            Error::Api(e) => Some(e),
            Error::Retried { last, .. } => last.api_error(),
            Error::BudgetExhausted {
                last: Some(last), ..
            } => last.api_error(),
            _ => None,
        }
    }

    /// The transport classification, if this is a connection failure.
    pub fn transport_kind(&self) -> Option<TransportKind> {
        match self {
            Error::Transport { kind, .. } | Error::Body { kind, .. } => Some(*kind),
            Error::Timeout { .. } | Error::StreamDeadline { .. } => Some(TransportKind::Timeout),
            Error::WatchCut { .. } => Some(TransportKind::UnexpectedEof),
            Error::Retried { last, .. } => last.transport_kind(),
            Error::AllEndpointsFailed { attempts } => attempts.last().map(|a| a.kind),
            _ => None,
        }
    }

    fn api(&self, f: impl Fn(&ApiError) -> bool) -> bool {
        self.api_error().is_some_and(f)
    }

    /// See [`ApiError::is_not_found`].
    pub fn is_not_found(&self) -> bool {
        self.api(ApiError::is_not_found)
    }
    /// See [`ApiError::is_already_exists`].
    pub fn is_already_exists(&self) -> bool {
        self.api(ApiError::is_already_exists)
    }
    /// See [`ApiError::is_conflict`].
    pub fn is_conflict(&self) -> bool {
        self.api(ApiError::is_conflict)
    }
    /// See [`ApiError::is_invalid`].
    pub fn is_invalid(&self) -> bool {
        self.api(ApiError::is_invalid)
    }
    /// See [`ApiError::is_gone`].
    pub fn is_gone(&self) -> bool {
        self.api(ApiError::is_gone)
    }
    /// See [`ApiError::is_forbidden`].
    pub fn is_forbidden(&self) -> bool {
        self.api(ApiError::is_forbidden)
    }
    /// See [`ApiError::is_unauthorized`].
    pub fn is_unauthorized(&self) -> bool {
        self.api(ApiError::is_unauthorized)
    }
    /// See [`ApiError::is_too_many_requests`].
    pub fn is_too_many_requests(&self) -> bool {
        self.api(ApiError::is_too_many_requests)
    }
    /// See [`ApiError::is_bad_request`].
    pub fn is_bad_request(&self) -> bool {
        self.api(ApiError::is_bad_request)
    }
    /// See [`ApiError::is_internal_error`].
    pub fn is_internal_error(&self) -> bool {
        self.api(ApiError::is_internal_error)
    }
    /// See [`ApiError::is_service_unavailable`].
    pub fn is_service_unavailable(&self) -> bool {
        self.api(ApiError::is_service_unavailable)
    }
    /// See [`ApiError::apply_conflicts`]: the fields an apply could not
    /// take, and their managers.
    pub fn apply_conflicts(&self) -> Option<Vec<ApplyConflict>> {
        self.api_error().and_then(ApiError::apply_conflicts)
    }
    /// A server-side (504/Timeout/ServerTimeout) or client-side timeout
    /// (an attempt's, a spent budget, a stream past its deadline).
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::BudgetExhausted { .. })
            || self.api(|e| e.is_timeout() || e.is_server_timeout())
            || self.transport_kind() == Some(TransportKind::Timeout)
    }

    /// Whether trying again can succeed: a retryable [`ApiError`], or a
    /// connection that was refused, reset, cut short or timed out.
    pub fn is_retryable(&self) -> bool {
        self.api(ApiError::is_retryable)
            || matches!(
                self.transport_kind(),
                Some(
                    TransportKind::Refused
                        | TransportKind::Reset
                        | TransportKind::UnexpectedEof
                        | TransportKind::Timeout
                )
            )
    }
}

/// One failed attempt of a call that tried several API servers.
#[derive(Debug)]
#[non_exhaustive]
pub struct EndpointFailure {
    /// The endpoint (`scheme://host:port`).
    pub endpoint: String,
    /// How it failed.
    pub kind: TransportKind,
    /// The attempt's error.
    pub error: Error,
}

#[cfg(feature = "ws")]
impl From<crate::upgrade::UpgradeError> for Error {
    fn from(source: crate::upgrade::UpgradeError) -> Self {
        Error::Upgrade { source }
    }
}

/// A protobuf watch frame that is not a valid `WatchEvent`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The frame is not valid protobuf.
    #[error("invalid protobuf in a watch event: {reason}")]
    Wire {
        /// What was wrong.
        reason: &'static str,
    },
    /// The event has no `type`.
    #[error("watch event without a type")]
    MissingType,
    /// The event has no `object`.
    #[error("{event_type} watch event without an object")]
    MissingObject {
        /// The event type.
        event_type: &'static str,
    },
    /// The caller's decoder refused the object.
    #[error("decoding the object of a {event_type} watch event")]
    Object {
        /// The event type.
        event_type: &'static str,
        /// The decoder's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}
