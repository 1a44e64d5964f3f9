//! The webhook layer's error.

use std::path::PathBuf;
use std::time::Duration;

/// What went wrong starting the server, loading its certificate, making
/// certificates or registering them. (A bad request is not an error here:
/// it is answered over HTTP.)
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// The listening socket could not be bound.
    #[error("binding the webhook server to {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A certificate or key file could not be read.
    #[error("reading {}: {source}", path.display())]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A certificate or key file is larger than any PEM file should be.
    #[error("{} is over {limit} bytes; not a certificate or key", path.display())]
    FileTooLarge {
        /// The file.
        path: PathBuf,
        /// The limit.
        limit: u64,
    },
    /// A file's PEM did not parse, or held no certificate or key.
    #[error("{}: {reason}", path.display())]
    Pem {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// The key does not load or does not match the certificate.
    #[error("the key {} does not fit the certificate {}: {source}", key.display(), cert.display())]
    KeyMismatch {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// rustls's error.
        #[source]
        source: rustls::Error,
    },
    /// The TLS configuration could not be built.
    #[error("building the TLS configuration: {source}")]
    Tls {
        /// rustls's error.
        #[source]
        source: rustls::Error,
    },
    /// A certificate could not be generated.
    #[error("generating the {what} certificate: {source}")]
    Generate {
        /// Which one (`CA`, `leaf`).
        what: &'static str,
        /// rcgen's error (boxed: rcgen's types stay out of this API).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A certificate or key could not be written.
    #[error("writing {}: {source}", path.display())]
    WriteFile {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Patching `caBundle` into a webhook configuration or a CRD failed.
    #[error("setting the caBundle of {kind} {name}: {source}")]
    Register {
        /// `ValidatingWebhookConfiguration`, `MutatingWebhookConfiguration` or
        /// `CustomResourceDefinition`.
        kind: &'static str,
        /// The configuration's name.
        name: String,
        /// The API error (boxed: it is large, and this variant is rare).
        #[source]
        source: Box<kubeset_client::Error>,
    },
    /// The routes do not make a server: a path with both admission and
    /// conversion handlers, or a conversion table that is wrong.
    #[error("the webhook route {path}: {reason}")]
    Routes {
        /// The path.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A CRD to register a conversion `caBundle` in has no
    /// `conversion.strategy: Webhook`.
    #[error("the CustomResourceDefinition {name} has no conversion webhook to set the caBundle of")]
    NoConversionWebhook {
        /// The CRD's name.
        name: String,
    },
    /// A certificate Secret could not be read through the API.
    #[error("reading the Secret {namespace}/{name}: {source}")]
    SecretRead {
        /// The Secret's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
        /// The API error (boxed, as for [`WebhookError::Register`]).
        #[source]
        source: Box<kubeset_client::Error>,
    },
    /// A certificate Secret does not hold a usable pair (or `ca.crt`), or
    /// is gone.
    #[error("the Secret {namespace}/{name}: {reason}")]
    SecretContent {
        /// The Secret's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
        /// What is wrong, naming the key (`tls.crt`, `tls.key`, `ca.crt`).
        reason: String,
    },
    /// A certificate Secret's `tls.key` does not load or is not the key of
    /// its `tls.crt`.
    #[error("the Secret {namespace}/{name}: tls.key does not fit tls.crt: {source}")]
    SecretKeyMismatch {
        /// The Secret's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
        /// rustls's error (boxed: the variant stays small).
        #[source]
        source: Box<rustls::Error>,
    },
    /// A [`CertRotator`](super::CertRotator) setting is out of range or
    /// does not fit another.
    #[error("the webhook certificate setting {name} ({value:?}) {rule} {bound_name} ({bound:?})")]
    Lifetime {
        /// The setting (`leaf_renew_before`).
        name: &'static str,
        /// Its value.
        value: Duration,
        /// How it must relate to the bound (`must be at most half of`).
        rule: &'static str,
        /// The other setting or limit (`leaf_lifetime`).
        bound_name: &'static str,
        /// Its value.
        bound: Duration,
    },
}
