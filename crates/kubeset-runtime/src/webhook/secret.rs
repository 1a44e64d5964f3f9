//! The serving certificate from a Secret, watched through the API.

use std::sync::Arc;

use futures::StreamExt as _;
use kubeset_client::api::core::v1::Secret;
use kubeset_client::{Api, Client};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;
use rustls::sign::CertifiedKey;

use super::WebhookError;
use super::certs::{BadPair, MAX_PEM_FILE, Reloading, parse_pair};
use super::rotator::Background;
use crate::watcher::{Event, WatcherConfig, watcher};

/// A Secret holding the serving certificate as `kubernetes.io/tls` does:
/// `tls.crt` (PEM chain, leaf first), `tls.key` (PEM key) and optionally
/// `ca.crt` (PEM CA bundle, shown by [`TlsStats::ca_bundle`](super::TlsStats::ca_bundle)).
/// Pass it to [`Webhook::bind`](super::Webhook::bind): the Secret is read
/// at bind (a missing or bad one is an error then), then watched (by
/// name); each change that holds a good pair is served from the next TLS
/// handshake on, and connections made with the older certificate are
/// closed after their current response. A change that does not load, a
/// deleted Secret, or one missing after the watch relists keeps the last
/// good pair served and is reported ([`TlsStats::last_error`](super::TlsStats::last_error),
/// [`TlsStats::failed_reloads`](super::TlsStats::failed_reloads), a `tracing` error).
/// Each value may be up to 1 MiB.
///
/// The client needs `get`, `list` and `watch` on Secrets in the namespace.
///
/// ```no_run
/// use kubeset_runtime::webhook::{SecretCert, Webhook};
/// # async fn f(client: kubeset_client::Client) -> Result<(), kubeset_runtime::webhook::WebhookError> {
/// let certs = SecretCert::new(&client, "my-ns", "my-webhook-tls");
/// let server = Webhook::new().bind("0.0.0.0:8443", certs).await?;
/// # let _ = server;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct SecretCert {
    client: Client,
    namespace: String,
    name: String,
}

/// The three values, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Content {
    cert: Vec<u8>,
    key: Vec<u8>,
    ca: Option<Vec<u8>>,
}

impl SecretCert {
    /// The Secret `name` in `namespace`.
    pub fn new(client: &Client, namespace: &str, name: &str) -> Self {
        SecretCert {
            client: client.clone(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    fn error(&self, reason: String) -> WebhookError {
        WebhookError::SecretContent {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            reason,
        }
    }

    /// Reads the Secret, and answers the resolver and the watch task.
    pub(crate) async fn start(
        self,
        provider: Arc<CryptoProvider>,
    ) -> Result<(Arc<Reloading>, Background), WebhookError> {
        let api: Api<Secret> = Api::namespaced(self.client.clone(), &self.namespace);
        let secret = api
            .get(&self.name)
            .await
            .map_err(|source| WebhookError::SecretRead {
                namespace: self.namespace.clone(),
                name: self.name.clone(),
                source: Box::new(source),
            })?;
        let content = self.content(&secret)?;
        let (key, ca) = self.load(&content, &provider)?;
        let what = format!("the Secret {}/{}", self.namespace, self.name);
        let reloading = Arc::new(Reloading::pushed(what, key, ca, provider));
        let task = Box::pin(self.watch(api, content, reloading.clone()));
        Ok((reloading, task))
    }

    /// The values, each present where required and bounded.
    fn content(&self, secret: &Secret) -> Result<Content, WebhookError> {
        let data = secret.data.as_ref();
        let value = |key: &str| -> Result<Option<Vec<u8>>, WebhookError> {
            let Some(bytes) = data.and_then(|d| d.get(key)) else {
                return Ok(None);
            };
            if bytes.0.len() as u64 > MAX_PEM_FILE {
                let reason =
                    format!("{key} is over {MAX_PEM_FILE} bytes; not a certificate or key");
                return Err(self.error(reason));
            }
            Ok(Some(bytes.0.clone()))
        };
        let required = |key: &str| value(key)?.ok_or_else(|| self.error(format!("has no {key}")));
        Ok(Content {
            cert: required("tls.crt")?,
            key: required("tls.key")?,
            ca: value("ca.crt")?,
        })
    }

    /// The pair checked (the key is the leaf's) and `ca.crt` parsed.
    fn load(
        &self,
        content: &Content,
        provider: &CryptoProvider,
    ) -> Result<(CertifiedKey, Option<String>), WebhookError> {
        let key = parse_pair(&content.cert, &content.key, provider).map_err(|bad| match bad {
            BadPair::Cert(reason) => self.error(format!("tls.crt: {reason}")),
            BadPair::Key(reason) => self.error(format!("tls.key: {reason}")),
            BadPair::Mismatch(source) => WebhookError::SecretKeyMismatch {
                namespace: self.namespace.clone(),
                name: self.name.clone(),
                source: Box::new(source),
            },
        })?;
        let ca = match &content.ca {
            None => None,
            Some(bytes) => Some(self.ca_bundle(bytes)?),
        };
        Ok((key, ca))
    }

    fn ca_bundle(&self, bytes: &[u8]) -> Result<String, WebhookError> {
        let certs = CertificateDer::pem_slice_iter(bytes)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.error(format!("ca.crt: not a PEM certificate bundle: {e}")))?;
        if certs.is_empty() {
            return Err(self.error("ca.crt holds no CERTIFICATE block".to_owned()));
        }
        String::from_utf8(bytes.to_vec())
            .map_err(|_| self.error("ca.crt is not UTF-8 text".to_owned()))
    }

    /// Watches the Secret by name until the server stops.
    async fn watch(self, api: Api<Secret>, mut last: Content, reloading: Arc<Reloading>) {
        let config = WatcherConfig::default().fields(&format!("metadata.name={}", self.name));
        let events = watcher(api, config);
        futures::pin_mut!(events);
        let mut seen = false;
        while let Some(event) = events.next().await {
            match event {
                Ok(Event::Init) => seen = false,
                Ok(Event::InitApply(secret) | Event::Apply(secret)) => {
                    seen = true;
                    self.changed(&secret, &mut last, &reloading);
                }
                Ok(Event::InitDone) if !seen => {
                    reloading.reject(&self.error("is missing".to_owned()));
                }
                Ok(Event::InitDone) => {}
                Ok(Event::Delete(_)) => {
                    reloading.reject(&self.error("was deleted".to_owned()));
                }
                Err(e) => tracing::warn!(
                    "webhook: watching the Secret {}/{}: {e}",
                    self.namespace,
                    self.name
                ),
            }
        }
    }

    /// Serves the Secret's pair if it changed and loads.
    fn changed(&self, secret: &Secret, last: &mut Content, reloading: &Reloading) {
        let loaded = self.content(secret).and_then(|content| {
            if content == *last {
                return Ok(None);
            }
            let (key, ca) = self.load(&content, reloading.provider())?;
            Ok(Some((content, key, ca)))
        });
        match loaded {
            Ok(None) => {}
            Ok(Some((content, key, ca))) => {
                *last = content;
                reloading.install(key, ca);
            }
            Err(e) => reloading.reject(&e),
        }
    }
}
