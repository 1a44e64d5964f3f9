//! The HTTP conversation with a Kubernetes API server: client-go's `rest`
//! package in Rust.
//!
//! A [`RestClient`] is built from a [`RestConfig`]; each call starts a
//! [`Request`] whose URL follows client-go's rules exactly, and is sent with
//! retries (`Retry-After`, connection resets), per-host backoff, a
//! client-side rate limiter, credentials from an [`auth::Authenticator`],
//! and typed errors ([`ApiError`] with a [`StatusReason`]).
//!
//! With several API servers ([`RestConfig::with_endpoints`],
//! [`RestConfig::with_endpoint_discovery`]) each call spreads its budget
//! over them and moves to the next one on a connection failure
//! ([`failover`]); [`Request::watch_resumable`] resumes a watch on another
//! server from the last resourceVersion.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kubeset_rest::Error> {
//! use kubeset_rest::{RestClient, RestConfig};
//! let client = RestClient::new(RestConfig::new("https://127.0.0.1:6443"))?;
//! let pod: serde_json::Value = client
//!     .get()
//!     .namespace("default")
//!     .resource("pods")
//!     .name("web-0")
//!     .send_json()
//!     .await?;
//! # let _ = pod; Ok(()) }
//! ```

pub mod auth;
pub mod backoff;
pub mod budget;
mod chain;
mod client;
mod collection;
pub mod config;
pub mod content;
mod decide;
pub mod desc;
mod discovery;
mod error;
mod execute;
pub mod failover;
mod field_path;
#[doc(hidden)]
pub mod fuzz_hooks;
mod kube_uri;
pub mod metrics;
pub mod rate_limit;
mod request;
mod response;
mod retry;
mod sent;
pub mod service;
mod status;
mod transport;
#[cfg(feature = "ws")]
mod upgrade;
mod url;
mod verb;
pub mod warning;
pub mod watch;
mod watch_protobuf;
#[cfg(feature = "ws")]
pub mod ws;

pub use chain::ErrorChain;
pub use client::{
    DEFAULT_MAX_RESPONSE_BODY, DEFAULT_WATCH_IDLE_TIMEOUT, RestClient, RestConfig,
    build::IntoRestClient,
};
pub use collection::CollectionPath;
pub use error::{ApiError, Error};
pub use request::Request;
pub use response::{Response, decode::from_json};
pub use status::StatusReason;
pub use status::{ApplyConflict, MAX_APPLY_CONFLICTS};
pub use transport::{RedirectRefused, TransportKind};
pub use url::go_duration;
pub use verb::{PatchType, Verb};
pub use watch::{ResumableWatch, WatchEvent, WatchStream};
