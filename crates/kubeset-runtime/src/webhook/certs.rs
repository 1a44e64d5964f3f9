//! The serving certificate from a file pair, reloaded when the files change.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use kubeset_client::rest::ErrorChain;

use super::WebhookError;

/// The largest certificate or key file read: 1 MiB.
pub(crate) const MAX_PEM_FILE: u64 = 1024 * 1024;

/// A PEM certificate chain file (leaf first) and its PEM private key
/// file (PKCS#8, PKCS#1 or SEC1), as a Secret of type
/// `kubernetes.io/tls` mounts them (`tls.crt`, `tls.key`).
///
/// ```
/// let files = kubeset_runtime::webhook::CertFiles::new("/certs/tls.crt", "/certs/tls.key");
/// assert_eq!(files.cert().to_str(), Some("/certs/tls.crt"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertFiles {
    cert: PathBuf,
    key: PathBuf,
}

impl CertFiles {
    /// The pair.
    pub fn new(cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        CertFiles {
            cert: cert.into(),
            key: key.into(),
        }
    }

    /// The certificate file.
    pub fn cert(&self) -> &Path {
        &self.cert
    }

    /// The key file.
    pub fn key(&self) -> &Path {
        &self.key
    }
}

/// What a file looked like when it was last read: a change of any part
/// means it was rewritten (a rename gives a new inode).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    inode: u64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let inode = 0;
    Some(Stamp {
        modified: meta.modified().ok(),
        len: meta.len(),
        inode,
    })
}

/// Counters of the serving certificate, shared with the server
/// ([`WebhookServer::tls_stats`](super::WebhookServer::tls_stats)).
///
/// ```no_run
/// # async fn f(server: kubeset_runtime::webhook::WebhookServer) {
/// let stats = server.tls_stats();
/// println!("certificate {} served in {:?} handshakes", stats.generation(), stats.handshakes_per_generation());
/// # }
/// ```
#[derive(Clone)]
pub struct TlsStats {
    inner: Arc<Shared>,
}

impl fmt::Debug for TlsStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsStats")
            .field("generation", &self.generation())
            .field("handshakes", &self.handshakes_per_generation())
            .field("failed_reloads", &self.failed_reloads())
            .field("last_error", &self.last_error())
            .finish()
    }
}

impl TlsStats {
    /// Which certificate is served: 0 is the one loaded at start, each
    /// successful reload adds 1.
    pub fn generation(&self) -> usize {
        self.inner.lock().handshakes.len().saturating_sub(1)
    }

    /// How many TLS handshakes got each generation's certificate.
    pub fn handshakes_per_generation(&self) -> Vec<u64> {
        self.inner.lock().handshakes.clone()
    }

    /// How many changed file pairs or Secrets did not load, or rotations
    /// failed (the served certificate was kept each time).
    pub fn failed_reloads(&self) -> u64 {
        self.inner.failed.load(Ordering::Relaxed)
    }

    /// The last such failure, naming the file, the Secret or the step.
    pub fn last_error(&self) -> Option<String> {
        self.inner.lock().last_error.clone()
    }

    /// The CA bundle (PEM) that verifies the served certificate, when the
    /// source knows it: a Secret's `ca.crt`, or the rotator's bundle (the
    /// current CA, and the previous one during an overlap).
    pub fn ca_bundle(&self) -> Option<String> {
        self.inner.lock().ca_bundle.clone()
    }
}

struct State {
    /// The files' stamps when last read (`None` for a pushed source).
    stamps: (Option<Stamp>, Option<Stamp>),
    current: Arc<CertifiedKey>,
    /// Handshakes per generation; its length is the generation count.
    handshakes: Vec<u64>,
    last_error: Option<String>,
    /// The CA bundle (PEM) that goes with the served certificate, when the
    /// source knows it (a Secret's `ca.crt`, a [`CertRotator`](super::CertRotator)).
    ca_bundle: Option<String>,
}

struct Shared {
    state: Mutex<State>,
    failed: AtomicU64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Where the served certificate comes from: files checked on each
/// connection, or a task that pushes each new pair ([`Reloading::install`]).
#[derive(Debug)]
pub(crate) enum Origin {
    /// Read from the files when their stamps change.
    Files(CertFiles),
    /// Installed by its owner (a Secret watch, a rotator), named for logs.
    Pushed(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Files(files) => write!(f, "{}", files.cert.display()),
            Origin::Pushed(what) => f.write_str(what),
        }
    }
}

/// The resolver rustls asks for the certificate of each handshake.
pub(crate) struct Reloading {
    origin: Origin,
    provider: Arc<CryptoProvider>,
    shared: Arc<Shared>,
}

impl fmt::Debug for Reloading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reloading")
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl Reloading {
    /// Loads the pair; an error names the file.
    pub(crate) fn load(
        files: CertFiles,
        provider: Arc<CryptoProvider>,
    ) -> Result<Self, WebhookError> {
        let stamps = (stamp(&files.cert), stamp(&files.key));
        let current = read_pair(&files, &provider)?;
        Ok(Self::with(
            Origin::Files(files),
            stamps,
            current,
            None,
            provider,
        ))
    }

    /// Serves `first` until its owner installs another; `what` names the
    /// source in logs.
    pub(crate) fn pushed(
        what: String,
        first: CertifiedKey,
        ca_bundle: Option<String>,
        provider: Arc<CryptoProvider>,
    ) -> Self {
        Self::with(
            Origin::Pushed(what),
            (None, None),
            first,
            ca_bundle,
            provider,
        )
    }

    fn with(
        origin: Origin,
        stamps: (Option<Stamp>, Option<Stamp>),
        current: CertifiedKey,
        ca_bundle: Option<String>,
        provider: Arc<CryptoProvider>,
    ) -> Self {
        let state = State {
            stamps,
            current: Arc::new(current),
            handshakes: vec![0],
            last_error: None,
            ca_bundle,
        };
        Reloading {
            origin,
            provider,
            shared: Arc::new(Shared {
                state: Mutex::new(state),
                failed: AtomicU64::new(0),
            }),
        }
    }

    /// The crypto provider keys are loaded with.
    pub(crate) fn provider(&self) -> &CryptoProvider {
        &self.provider
    }

    /// Serves `key` from the next handshake on (a pushed source); its
    /// connections made before are closed after their current response.
    pub(crate) fn install(&self, key: CertifiedKey, ca_bundle: Option<String>) {
        let mut state = self.shared.lock();
        state.current = Arc::new(key);
        state.ca_bundle = ca_bundle;
        state.handshakes.push(0);
        tracing::info!(
            source = %self.origin,
            generation = state.handshakes.len() - 1,
            "webhook: serving the new certificate"
        );
    }

    /// Records a failure of the source (the served certificate is kept).
    pub(crate) fn reject(&self, error: &(dyn std::error::Error + 'static)) {
        let message = ErrorChain(error).to_string();
        tracing::error!(
            "webhook: keeping the certificate served from {}: {message}",
            self.origin
        );
        self.shared.lock().last_error = Some(message);
        self.shared.failed.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn stats(&self) -> TlsStats {
        TlsStats {
            inner: self.shared.clone(),
        }
    }

    /// Reloads the pair if either file changed since it was last read,
    /// and answers the generation now served. Two `stat`s when nothing
    /// changed (none for a pushed source). A pair that does not load keeps
    /// the old certificate.
    pub(crate) fn refresh(&self) -> usize {
        let Origin::Files(files) = &self.origin else {
            return self.shared.lock().handshakes.len() - 1;
        };
        let stamps = (stamp(&files.cert), stamp(&files.key));
        let mut state = self.shared.lock();
        if state.stamps != stamps {
            state.stamps = stamps;
            match read_pair(files, &self.provider) {
                Ok(key) => {
                    state.current = Arc::new(key);
                    state.handshakes.push(0);
                    tracing::info!(
                        cert = %files.cert.display(),
                        generation = state.handshakes.len() - 1,
                        "webhook: serving the reloaded certificate"
                    );
                }
                Err(e) => {
                    let message = ErrorChain(&e).to_string();
                    tracing::error!("webhook: keeping the old certificate: {message}");
                    state.last_error = Some(message);
                    self.shared.failed.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        state.handshakes.len() - 1
    }
}

impl ResolvesServerCert for Reloading {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let mut state = self.shared.lock();
        if let Some(count) = state.handshakes.last_mut() {
            *count += 1;
        }
        Some(state.current.clone())
    }
}

fn read_limited(path: &Path) -> Result<Vec<u8>, WebhookError> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(|source| WebhookError::ReadFile {
        path: path.to_owned(),
        source,
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_PEM_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| WebhookError::ReadFile {
            path: path.to_owned(),
            source,
        })?;
    if bytes.len() as u64 > MAX_PEM_FILE {
        return Err(WebhookError::FileTooLarge {
            path: path.to_owned(),
            limit: MAX_PEM_FILE,
        });
    }
    Ok(bytes)
}

/// Why a PEM pair does not make a serving certificate; each caller
/// names where the pair came from.
#[derive(Debug)]
pub(crate) enum BadPair {
    /// The certificate chain: what is wrong with it.
    Cert(String),
    /// The private key: what is wrong with it.
    Key(String),
    /// The key does not load or is not the leaf's.
    Mismatch(rustls::Error),
}

/// Parses and checks a PEM chain (leaf first) and its PEM key.
pub(crate) fn parse_pair(
    cert_pem: &[u8],
    key_pem: &[u8],
    provider: &CryptoProvider,
) -> Result<CertifiedKey, BadPair> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| BadPair::Cert(format!("not a PEM certificate chain: {e}")))?;
    if chain.is_empty() {
        return Err(BadPair::Cert("holds no CERTIFICATE block".to_owned()));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem)
        .map_err(|e| BadPair::Key(format!("not a PEM private key: {e}")))?;
    CertifiedKey::from_der(chain, key, provider).map_err(BadPair::Mismatch)
}

/// Reads, parses and checks the pair (the key must be the leaf's).
fn read_pair(files: &CertFiles, provider: &CryptoProvider) -> Result<CertifiedKey, WebhookError> {
    let pem_error = |path: &Path, reason: String| WebhookError::Pem {
        path: path.to_owned(),
        reason,
    };
    let cert_pem = read_limited(&files.cert)?;
    let key_pem = read_limited(&files.key)?;
    parse_pair(&cert_pem, &key_pem, provider).map_err(|bad| match bad {
        BadPair::Cert(reason) => pem_error(&files.cert, reason),
        BadPair::Key(reason) => pem_error(&files.key, reason),
        BadPair::Mismatch(source) => WebhookError::KeyMismatch {
            cert: files.cert.clone(),
            key: files.key.clone(),
            source,
        },
    })
}
