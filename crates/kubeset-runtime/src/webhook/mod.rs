//! A typed webhook server (feature `webhook`): validating and mutating
//! admission handlers per kind and operation, and CRD conversion between
//! typed versions through a hub, served over TLS with a certificate from
//! files or a Secret (reloaded when they change) or from a CA of the
//! server's own, renewed before it expires.
//!
//! - [`Webhook`]: the routes. [`Webhook::validate`] registers a handler
//!   that answers `Ok(warnings)` or [`Denied`]; [`Webhook::mutate`] one that
//!   answers [`Mutated`] (the changed object), from which the server
//!   computes the RFC 6902 JSON patch ([`json_diff`]).
//! - [`Webhook::convert`]: a CRD conversion webhook at a path: a
//!   [`Conversion`] table, the hub version `H` and its spokes
//!   ([`Conversion::spoke`]: `TryFrom` both ways, so `From` is enough),
//!   answering `ConversionReview`s (`kubeset_client::conversion`) by each
//!   object's `apiVersion` and the `desiredAPIVersion`: spoke → hub →
//!   spoke, an object already at the desired version as it came. Failures
//!   ([`ConversionError`]) name the object's index and name, the version,
//!   and for a decoding failure the serde path; `metadata` is answered as
//!   it came except labels and annotations, and a conversion that changed
//!   anything else fails naming the field. The body limit and the
//!   deadline below bound it too (the conversion runs off the async
//!   threads). The CRD: `kubeset_client::crd::with_conversion_webhook`;
//!   its `caBundle`: [`set_conversion_ca_bundle`].
//! - [`Webhook::bind`] → [`WebhookServer`]: listens, serves HTTP/1.1 over
//!   rustls, and stops on [`WebhookServer::run`]'s shutdown future
//!   (requests in flight are answered first).
//! - Bounds: a request body over [`Webhook::max_body_size`] (8 MiB) is
//!   answered 413, one not received within [`Webhook::body_timeout`]
//!   (10 s) 408; a handler slower than [`Webhook::deadline`] (10 s;
//!   kube-apiserver waits at most 30 s) is answered with a denied review
//!   saying so; a review that does not decode is answered 400 naming the
//!   serde path (`request.object.data.x`). A TLS handshake may take 10 s,
//!   a request's headers 30 s.
//! - The serving certificate comes from a [`CertSource`] given to
//!   [`Webhook::bind`]; see "Certificates" below.
//!
//! # Certificates
//!
//! Which source:
//!
//! - [`CertFiles`]: a PEM pair on disk (a mounted Secret, cert-manager's
//!   `Certificate`, a file you write). Checked (a `stat` of both files)
//!   on every new connection and every request; a changed pair is loaded
//!   for the next handshakes. Something else renews it.
//! - [`SecretCert`]: a `kubernetes.io/tls` Secret (`tls.crt`, `tls.key`,
//!   optional `ca.crt`) read through the API and watched by name, for a
//!   webhook whose certificate someone else renews (cert-manager, a
//!   controller of yours) without a volume mount or the kubelet's sync
//!   delay of a mounted Secret. Several replicas may serve one Secret.
//! - [`CertRotator`]: self-managed, for one replica: a CA of the
//!   server's own and its leaf, in memory, renewed before they expire,
//!   with every `caBundle` it was given (validating, mutating
//!   configurations, a CRD's conversion webhook) re-registered on each CA
//!   change ([`set_ca_bundle`], [`set_conversion_ca_bundle`]). A restart
//!   makes a new CA and registers it.
//!
//! The refresh rule of [`CertRotator`]: a certificate is renewed its
//! `renew_before` ahead of its `notAfter` (default 90 days, at most half
//! its lifetime; a leaf cut short by its CA's expiry at half its life); a
//! leaf never outlives its CA. A new CA joins the bundle beside the old
//! one; once that bundle is registered everywhere and `bundle_settle` has
//! passed (the API servers' time to load it), a leaf of the new CA is
//! served, then the old CA leaves the bundle. So the served leaf always
//! verifies against the registered bundle.
//!
//! Whatever the source, a new certificate is served from the next TLS
//! handshake on; a handshake in flight finishes with the one it started
//! with, and connections made with an older certificate are closed after
//! their current response (`Connection: close`), so clients move to the
//! new one without a failed request.
//!
//! What happens at each failure (the served certificate is always kept,
//! and the failure is reported in [`TlsStats::last_error`] and
//! [`TlsStats::failed_reloads`] and logged with `tracing`):
//!
//! - at [`Webhook::bind`]: files that do not load, a Secret that is
//!   missing or does not hold a good pair, rotator settings that do not fit
//!   ([`WebhookError::Lifetime`] naming both settings) or a registration
//!   refused (a configuration that does not exist) are errors: nothing
//!   is served;
//! - later, files or a Secret that change to a bad pair (unparsable, a key
//!   that does not fit), a Secret deleted: the last good pair is served
//!   until a good one appears;
//! - a rotator's step that fails (the API server unreachable, a
//!   registration refused) is retried, 1 s doubling to 30 s; meanwhile a
//!   leaf that is due is still renewed by its own (registered) CA, and a
//!   leaf of a new CA is not served before its bundle is registered.
//!
//! [`SelfSignedCa`]: a CA and leaf certificates for given DNS names and
//! IPs (rcgen), with a lifetime ([`SelfSignedCa::generate_for`],
//! [`SelfSignedCa::issue_for`]), written as PEM files; what the rotator
//! uses, for a rotation of your own.
//!
//! ```no_run
//! use kubeset_client::admission::{AdmissionRequest, Operation};
//! use kubeset_client::api::core::v1::ConfigMap;
//! use kubeset_runtime::webhook::{CertFiles, Denied, Mutated, Webhook};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Webhook::new()
//!     .validate::<ConfigMap, _>("/validate", |req: AdmissionRequest<ConfigMap>| async move {
//!         let cm = req.object.unwrap_or_default();
//!         if cm.data.is_some_and(|d| d.contains_key("password")) {
//!             return Err(Denied::new("ConfigMaps must not hold passwords; use a Secret"));
//!         }
//!         Ok(vec![])
//!     })
//!     .mutate_for::<ConfigMap, _>("/mutate", &[Operation::Create], |req: AdmissionRequest<ConfigMap>| async move {
//!         let mut cm = req.object.unwrap_or_default();
//!         cm.metadata.labels.get_or_insert_default().insert("team".into(), "a".into());
//!         Ok(Mutated::new(cm).with_warning("labelled team=a"))
//!     })
//!     .bind("0.0.0.0:8443", CertFiles::new("/certs/tls.crt", "/certs/tls.key"))
//!     .await?;
//! server.run(async { let _ = tokio::signal::ctrl_c().await; }).await;
//! # Ok(()) }
//! ```
//!
//! Not here yet: the embedded test server calling webhooks (issue 36,
//! item 4).

mod certs;
mod convert;
mod error;
mod handler;
mod patch;
mod register;
mod rotation;
mod rotator;
mod secret;
mod selfsigned;
mod server;
mod source;

pub use certs::{CertFiles, TlsStats};
pub use convert::{Conversion, ConversionError, Reviewed};
pub use error::WebhookError;
pub use handler::{Denied, MutateHandler, Mutated, SideEffects, ValidateHandler};
pub use patch::{PatchOp, json_diff};
pub use register::{WebhookConfiguration, set_ca_bundle, set_conversion_ca_bundle};
pub use rotator::CertRotator;
pub use secret::SecretCert;
pub use selfsigned::{LeafCert, SelfSignedCa};
pub use server::WebhookServer;
pub use source::CertSource;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use kubeset_client::Resource;
use kubeset_client::admission::Operation;
use serde::Serialize;
use serde::de::DeserializeOwned;

use convert::ErasedConversion;
use handler::{Erased, Route};

/// The default limit of a request body: 8 MiB (an `AdmissionReview`
/// carries the object and the old object; etcd's default value limit is
/// 1.5 MiB).
pub const DEFAULT_MAX_BODY: usize = 8 * 1024 * 1024;
/// The default time to receive a request body: 10 s.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// The default deadline of a handler: 10 s (kube-apiserver's default
/// `timeoutSeconds`; its maximum is 30 s).
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(10);

/// The routes and bounds of a webhook server; [`bind`](Self::bind) starts it.
///
/// ```
/// use kubeset_client::admission::AdmissionRequest;
/// use kubeset_client::api::core::v1::Secret;
/// use kubeset_runtime::webhook::{Denied, Webhook};
/// let webhook = Webhook::new()
///     .max_body_size(1024 * 1024)
///     .deadline(std::time::Duration::from_secs(5))
///     .validate::<Secret, _>("/secrets", |req: AdmissionRequest<Secret>| async move {
///         match req.object.and_then(|s| s.type_) {
///             Some(t) if t == "Opaque" => Ok(vec![]),
///             other => Err(Denied::new(format!("type {other:?} is not allowed here"))),
///         }
///     });
/// assert_eq!(webhook.paths(), vec!["/secrets"]);
/// ```
#[must_use]
#[derive(Clone)]
pub struct Webhook {
    pub(crate) routes: HashMap<String, Vec<Route>>,
    pub(crate) conversions: HashMap<String, Arc<dyn ErasedConversion>>,
    pub(crate) side_effects: HashMap<String, SideEffects>,
    pub(crate) max_body: usize,
    pub(crate) deadline: Duration,
    pub(crate) body_timeout: Duration,
}

impl Default for Webhook {
    fn default() -> Self {
        Webhook {
            routes: HashMap::new(),
            conversions: HashMap::new(),
            side_effects: HashMap::new(),
            max_body: DEFAULT_MAX_BODY,
            deadline: DEFAULT_DEADLINE,
            body_timeout: DEFAULT_BODY_TIMEOUT,
        }
    }
}

impl std::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhook")
            .field("paths", &self.paths())
            .field("max_body", &self.max_body)
            .field("deadline", &self.deadline)
            .field("body_timeout", &self.body_timeout)
            .finish_non_exhaustive()
    }
}

impl Webhook {
    /// No routes, 8 MiB bodies received within 10 s, 10 s deadline.
    ///
    /// ```
    /// assert!(kubeset_runtime::webhook::Webhook::new().paths().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The largest request body accepted; larger ones are answered 413.
    ///
    /// ```
    /// let w = kubeset_runtime::webhook::Webhook::new().max_body_size(64 * 1024);
    /// # let _ = w;
    /// ```
    pub fn max_body_size(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// How long a handler may take; a slower one is abandoned and the
    /// request denied with a message saying so. Keep it below the
    /// configuration's `timeoutSeconds`.
    ///
    /// ```
    /// let w = kubeset_runtime::webhook::Webhook::new().deadline(std::time::Duration::from_secs(3));
    /// # let _ = w;
    /// ```
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// How long a request body may take to arrive once its headers have;
    /// a slower one is answered 408 (a client trickling bytes does not
    /// hold a connection for ever).
    ///
    /// ```
    /// let w = kubeset_runtime::webhook::Webhook::new().body_timeout(std::time::Duration::from_secs(5));
    /// # let _ = w;
    /// ```
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// Declares what the handlers at `path` do besides answering
    /// (the configuration's `sideEffects`; default [`SideEffects::None`]).
    /// With [`SideEffects::Some`], a dry-run request is denied without
    /// calling them.
    ///
    /// ```
    /// use kubeset_runtime::webhook::{SideEffects, Webhook};
    /// let w = Webhook::new().side_effects("/audit", SideEffects::NoneOnDryRun);
    /// # let _ = w;
    /// ```
    pub fn side_effects(mut self, path: &str, side_effects: SideEffects) -> Self {
        self.side_effects.insert(path.to_owned(), side_effects);
        self
    }

    /// A validating handler at `path` for kind `K`, every operation.
    /// It answers `Ok(warnings)` to admit or [`Denied`] to reject.
    ///
    /// ```
    /// use kubeset_client::admission::AdmissionRequest;
    /// use kubeset_client::api::core::v1::ConfigMap;
    /// use kubeset_runtime::webhook::Webhook;
    /// let w = Webhook::new().validate::<ConfigMap, _>("/v", |_req: AdmissionRequest<ConfigMap>| async {
    ///     Ok(vec!["looked at it".to_owned()])
    /// });
    /// # let _ = w;
    /// ```
    pub fn validate<K, H>(self, path: &str, handler: H) -> Self
    where
        K: Resource + DeserializeOwned + Send + 'static,
        H: ValidateHandler<K>,
    {
        self.validate_for::<K, H>(path, &[], handler)
    }

    /// [`validate`](Self::validate) for the listed operations only (empty:
    /// all).
    ///
    /// ```
    /// use kubeset_client::admission::{AdmissionRequest, Operation};
    /// use kubeset_client::api::core::v1::ConfigMap;
    /// use kubeset_runtime::webhook::{Denied, Webhook};
    /// let w = Webhook::new().validate_for::<ConfigMap, _>("/v", &[Operation::Delete], |_req: AdmissionRequest<ConfigMap>| async {
    ///     Err::<Vec<String>, _>(Denied::new("ConfigMaps here are forever"))
    /// });
    /// # let _ = w;
    /// ```
    pub fn validate_for<K, H>(self, path: &str, operations: &[Operation], handler: H) -> Self
    where
        K: Resource + DeserializeOwned + Send + 'static,
        H: ValidateHandler<K>,
    {
        self.route::<K>(path, operations, handler::validator::<K, H>(handler))
    }

    /// A mutating handler at `path` for kind `K`, every operation that
    /// carries an object (CREATE, UPDATE, CONNECT with options). It answers
    /// the changed object ([`Mutated`]); the server sends the JSON patch
    /// from the object it received (as `K`) to the one answered.
    ///
    /// ```
    /// use kubeset_client::admission::AdmissionRequest;
    /// use kubeset_client::api::core::v1::ConfigMap;
    /// use kubeset_runtime::webhook::{Mutated, Webhook};
    /// let w = Webhook::new().mutate::<ConfigMap, _>("/m", |req: AdmissionRequest<ConfigMap>| async move {
    ///     let mut cm = req.object.unwrap_or_default();
    ///     cm.data.get_or_insert_default().entry("mode".into()).or_insert("default".into());
    ///     Ok(Mutated::new(cm))
    /// });
    /// # let _ = w;
    /// ```
    pub fn mutate<K, H>(self, path: &str, handler: H) -> Self
    where
        K: Resource + Serialize + DeserializeOwned + Send + 'static,
        H: MutateHandler<K>,
    {
        self.mutate_for::<K, H>(path, &[], handler)
    }

    /// [`mutate`](Self::mutate) for the listed operations only (empty: all).
    ///
    /// ```
    /// use kubeset_client::admission::{AdmissionRequest, Operation};
    /// use kubeset_client::api::core::v1::ConfigMap;
    /// use kubeset_runtime::webhook::{Mutated, Webhook};
    /// let w = Webhook::new().mutate_for::<ConfigMap, _>("/m", &[Operation::Create], |req: AdmissionRequest<ConfigMap>| async move {
    ///     Ok(Mutated::new(req.object.unwrap_or_default()))
    /// });
    /// # let _ = w;
    /// ```
    pub fn mutate_for<K, H>(self, path: &str, operations: &[Operation], handler: H) -> Self
    where
        K: Resource + Serialize + DeserializeOwned + Send + 'static,
        H: MutateHandler<K>,
    {
        self.route::<K>(path, operations, handler::mutator::<K, H>(handler))
    }

    /// A CRD conversion webhook at `path`: `ConversionReview`s
    /// (`apiextensions.k8s.io/v1`) answered by `conversion`, the versions
    /// of one kind around a hub ([`Conversion`]). The body limit and the
    /// deadline are the server's; a review that does not decode is
    /// answered 400 naming the serde path.
    ///
    /// ```
    /// use kubeset_client::api::core::v1::ConfigMap;
    /// use kubeset_runtime::webhook::{Conversion, Webhook};
    /// let w = Webhook::new().convert("/convert", Conversion::<ConfigMap>::new());
    /// assert_eq!(w.paths(), ["/convert"]);
    /// ```
    pub fn convert<H>(mut self, path: &str, conversion: Conversion<H>) -> Self
    where
        H: Resource + Serialize + DeserializeOwned + 'static,
    {
        self.conversions
            .insert(path.to_owned(), Arc::new(conversion));
        self
    }

    fn route<K: Resource>(
        mut self,
        path: &str,
        operations: &[Operation],
        handler: Arc<dyn Erased>,
    ) -> Self {
        self.routes.entry(path.to_owned()).or_default().push(Route {
            group: K::GROUP,
            kind: K::KIND,
            operations: operations.to_vec(),
            handler,
        });
        self
    }

    /// The registered paths, sorted.
    ///
    /// ```
    /// assert!(kubeset_runtime::webhook::Webhook::new().paths().is_empty());
    /// ```
    pub fn paths(&self) -> Vec<&str> {
        let mut paths: Vec<&str> = self
            .routes
            .keys()
            .chain(self.conversions.keys())
            .map(String::as_str)
            .collect();
        paths.sort_unstable();
        paths.dedup();
        paths
    }
}
