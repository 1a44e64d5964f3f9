//! Where the serving certificate comes from: files, a Secret, or a
//! self-managed CA.

use std::sync::Arc;

use rustls::crypto::CryptoProvider;

use super::certs::Reloading;
use super::rotator::Background;
use super::{CertFiles, CertRotator, SecretCert, WebhookError};

/// The serving certificate's source, as [`Webhook::bind`](super::Webhook::bind)
/// takes it (each kind converts into it with `From`): see the module docs
/// on how to choose.
///
/// ```
/// use kubeset_runtime::webhook::{CertFiles, CertSource};
/// let source = CertSource::from(CertFiles::new("tls.crt", "tls.key"));
/// assert!(matches!(source, CertSource::Files(_)));
/// ```
#[derive(Debug, Clone)]
pub enum CertSource {
    /// A PEM file pair, checked on every connection and request.
    Files(CertFiles),
    /// A `kubernetes.io/tls` Secret, watched.
    Secret(SecretCert),
    /// A CA of the server's own, renewing itself and its leaf.
    Rotator(CertRotator),
}

impl From<CertFiles> for CertSource {
    fn from(files: CertFiles) -> Self {
        CertSource::Files(files)
    }
}

impl From<SecretCert> for CertSource {
    fn from(secret: SecretCert) -> Self {
        CertSource::Secret(secret)
    }
}

impl From<CertRotator> for CertSource {
    fn from(rotator: CertRotator) -> Self {
        CertSource::Rotator(rotator)
    }
}

impl CertSource {
    /// The first certificate loaded, and the task that keeps it current
    /// (none for files: they are checked per connection).
    pub(crate) async fn start(
        self,
        provider: Arc<CryptoProvider>,
    ) -> Result<(Arc<Reloading>, Option<Background>), WebhookError> {
        match self {
            CertSource::Files(files) => Ok((Arc::new(Reloading::load(files, provider)?), None)),
            CertSource::Secret(secret) => {
                let (certs, task) = secret.start(provider).await?;
                Ok((certs, Some(task)))
            }
            CertSource::Rotator(rotator) => {
                let (certs, task) = rotator.start(provider).await?;
                Ok((certs, Some(task)))
            }
        }
    }
}
