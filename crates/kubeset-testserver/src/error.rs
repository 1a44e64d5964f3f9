//! The error type of the public API.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Errors from starting, controlling or configuring the server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A replica's listener could not be bound.
    #[error("binding replica {replica} to {addr}")]
    Bind {
        /// Replica index.
        replica: usize,
        /// The address asked for.
        addr: SocketAddr,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The admin listener could not be bound.
    #[error("binding the admin endpoint to {addr}")]
    BindAdmin {
        /// The address asked for.
        addr: SocketAddr,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Generating the CA or serving certificate failed.
    #[error("generating the {what} certificate")]
    Certificate {
        /// `CA` or `serving`.
        what: &'static str,
        /// The rcgen error.
        #[source]
        source: rcgen::Error,
    },
    /// Building the rustls configuration failed.
    #[error("configuring TLS")]
    Tls {
        /// The rustls error.
        #[source]
        source: rustls::Error,
    },
    /// The kubeconfig could not be written.
    #[error("writing the kubeconfig to {path}")]
    WriteKubeconfig {
        /// Where it was written.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// An OpenAPI spec file could not be read or parsed.
    #[error("reading the OpenAPI spec {path}")]
    ReadSpecs {
        /// The file (or directory).
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// The server refused an object (for example an invalid CRD).
    #[error("the server refused the object ({code} {reason}): {message}")]
    Rejected {
        /// HTTP status code.
        code: u16,
        /// Status reason, e.g. `Invalid`.
        reason: &'static str,
        /// Status message.
        message: String,
    },
    /// The object's `apiVersion`/`kind` names no served resource.
    #[error("no served resource for apiVersion {api_version:?} kind {kind:?}")]
    UnknownKind {
        /// The object's apiVersion.
        api_version: String,
        /// The object's kind.
        kind: String,
    },
}

impl From<crate::status::ApiError> for Error {
    fn from(e: crate::status::ApiError) -> Self {
        Error::Rejected {
            code: e.code,
            reason: e.reason,
            message: e.message,
        }
    }
}
