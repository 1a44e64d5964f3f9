//! Hooks for request metrics (client-go's `tools/metrics`).
//!
//! All methods have empty defaults; implement the ones you export.

use std::{fmt, time::Duration};

use crate::verb::Verb;

/// Receives measurements from every request of a client.
///
/// `url_template` is the request path with the namespace replaced by
/// `{namespace}` and the name by `{name}` (no query), so that it has a
/// bounded number of values.
pub trait Metrics: Send + Sync + fmt::Debug {
    /// Latency of one attempt, until the response (for `send`: its whole
    /// body) arrived or failed.
    fn request_latency(&self, verb: Verb, url_template: &str, latency: Duration) {
        let _ = (verb, url_template, latency);
    }

    /// Result of one attempt: the status code, or `None` for a transport
    /// error.
    fn request_result(&self, verb: Verb, host: &str, code: Option<u16>) {
        let _ = (verb, host, code);
    }

    /// An attempt is being retried; `code` is that of the attempt that
    /// failed (`None` for a transport error).
    fn request_retry(&self, verb: Verb, host: &str, code: Option<u16>) {
        let _ = (verb, host, code);
    }

    /// Time spent waiting for the client-side rate limiter.
    fn rate_limiter_latency(&self, verb: Verb, url_template: &str, wait: Duration) {
        let _ = (verb, url_template, wait);
    }
}
