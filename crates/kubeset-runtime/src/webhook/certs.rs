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

use super::WebhookError;

/// The largest certificate or key file read: 1 MiB.
const MAX_PEM_FILE: u64 = 1024 * 1024;

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

    /// How many changed file pairs did not load (the old certificate was kept).
    pub fn failed_reloads(&self) -> u64 {
        self.inner.failed.load(Ordering::Relaxed)
    }

    /// The last reload failure, naming the file.
    pub fn last_error(&self) -> Option<String> {
        self.inner.lock().last_error.clone()
    }
}

struct State {
    stamps: (Option<Stamp>, Option<Stamp>),
    current: Arc<CertifiedKey>,
    /// Handshakes per generation; its length is the generation count.
    handshakes: Vec<u64>,
    last_error: Option<String>,
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

/// The resolver rustls asks for the certificate of each handshake.
pub(crate) struct Reloading {
    files: CertFiles,
    provider: Arc<CryptoProvider>,
    shared: Arc<Shared>,
}

impl fmt::Debug for Reloading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reloading")
            .field("files", &self.files)
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
        let current = Arc::new(read_pair(&files, &provider)?);
        let state = State {
            stamps,
            current,
            handshakes: vec![0],
            last_error: None,
        };
        Ok(Reloading {
            files,
            provider,
            shared: Arc::new(Shared {
                state: Mutex::new(state),
                failed: AtomicU64::new(0),
            }),
        })
    }

    pub(crate) fn stats(&self) -> TlsStats {
        TlsStats {
            inner: self.shared.clone(),
        }
    }

    /// Reloads the pair if either file changed since it was last read,
    /// and answers the generation now served. Two `stat`s when nothing
    /// changed. A pair that does not load keeps the old certificate.
    pub(crate) fn refresh(&self) -> usize {
        let stamps = (stamp(&self.files.cert), stamp(&self.files.key));
        let mut state = self.shared.lock();
        if state.stamps != stamps {
            state.stamps = stamps;
            match read_pair(&self.files, &self.provider) {
                Ok(key) => {
                    state.current = Arc::new(key);
                    state.handshakes.push(0);
                    tracing::info!(
                        cert = %self.files.cert.display(),
                        generation = state.handshakes.len() - 1,
                        "webhook: serving the reloaded certificate"
                    );
                }
                Err(e) => {
                    let message = error_chain(&e);
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

/// The error and its sources, each once: a `Display` that already ends
/// with its source's text (as [`WebhookError`]'s do) is not repeated.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
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

/// Reads, parses and checks the pair (the key must be the leaf's).
fn read_pair(files: &CertFiles, provider: &CryptoProvider) -> Result<CertifiedKey, WebhookError> {
    let pem_error = |path: &Path, reason: String| WebhookError::Pem {
        path: path.to_owned(),
        reason,
    };
    let cert_pem = read_limited(&files.cert)?;
    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_error(&files.cert, format!("not a PEM certificate chain: {e}")))?;
    if chain.is_empty() {
        return Err(pem_error(
            &files.cert,
            "holds no CERTIFICATE block".to_owned(),
        ));
    }
    let key_pem = read_limited(&files.key)?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| pem_error(&files.key, format!("not a PEM private key: {e}")))?;
    CertifiedKey::from_der(chain, key, provider).map_err(|source| WebhookError::KeyMismatch {
        cert: files.cert.clone(),
        key: files.key.clone(),
        source,
    })
}
