//! Credentials supplied per request.
//!
//! The config layer (kubeconfig tokens, token files, exec plugins, in-cluster
//! service-account tokens) implements [`Authenticator`]; the request layer
//! asks it for an `Authorization` header before every attempt and tells it
//! when the server answered 401 so that cached credentials are refreshed.

use std::{error::Error as StdError, fmt, future::Future, pin::Pin};

use http::HeaderValue;

/// Error type at the authenticator plug-in boundary.
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// Future returned by [`Authenticator::authorization`].
pub type AuthFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Option<HeaderValue>, BoxError>> + Send + 'a>>;

/// Supplies the `Authorization` header of each request.
///
/// Implementations must redact secrets in their `Debug` output.
pub trait Authenticator: Send + Sync + fmt::Debug {
    /// The `Authorization` header value for the next request, or `None` to
    /// send the request without one. May refresh credentials.
    fn authorization(&self) -> AuthFuture<'_>;

    /// Called after the server answered 401 Unauthorized: drop cached
    /// credentials so that the next [`authorization`](Self::authorization)
    /// obtains fresh ones.
    fn invalidate(&self) {}
}
