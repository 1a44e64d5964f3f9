//! The webhook calls: a POST over HTTPS (rustls with the ring provider and
//! hyper's HTTP/1.1 client connection, both already the server's
//! dependencies), the server certificate verified against the webhook's
//! `caBundle` only, the whole call bounded by the webhook's timeout and
//! the answer by [`MAX_RESPONSE`].
//!
//! Connections are kept alive and reused ([`Pool`]): one pool per
//! endpoint (the URL's host and port and the CA trusted), the TLS
//! configuration built once for it. Bounded: at most
//! [`MAX_IDLE_PER_ENDPOINT`] idle connections per endpoint, none idle
//! longer than [`IDLE_TIMEOUT`], at most [`MAX_ENDPOINTS`] endpoints (the
//! least recently used dropped first). A connection is put back only
//! after its answer was read whole and when the webhook did not ask to
//! close it (`Connection: close`, which the webhook server of
//! `kubeset::runtime::webhook` sends on connections made with a rotated
//! certificate). A request that a pooled connection could not send
//! (closed meanwhile) goes out on a new one; one it sent is never sent
//! again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response, Uri, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

use crate::admission::webhook::MAX_RESPONSE;

/// Idle connections kept per endpoint.
const MAX_IDLE_PER_ENDPOINT: usize = 4;
/// How long an idle connection is kept.
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// Endpoints remembered (their TLS configuration and idle connections).
const MAX_ENDPOINTS: usize = 64;

type Sender = SendRequest<Full<Bytes>>;

/// POSTs `body` to `url` (`?timeout=Ns` added, as kube-apiserver's client
/// does) and returns the answer's body; `Err` says why the call failed,
/// in the words upstream's errors use.
pub(crate) async fn post(
    url: &str,
    ca: Option<&[u8]>,
    body: Vec<u8>,
    timeout: Duration,
) -> Result<Vec<u8>, String> {
    post_to(&with_timeout(url, timeout), ca, body, timeout)
        .await
        .map_err(|e| format!("failed to call webhook: {e}"))
}

/// `url` with `?timeout=Ns` added, as kube-apiserver's webhook client
/// sends its timeout.
pub(crate) fn with_timeout(url: &str, timeout: Duration) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}timeout={}s", timeout.as_secs())
}

/// POSTs `body` to `url` as it is, bounded by `timeout`; `Err` in the
/// words of Go's HTTP client (`Post "url": why`).
pub(crate) async fn post_to(
    url: &str,
    ca: Option<&[u8]>,
    body: Vec<u8>,
    timeout: Duration,
) -> Result<Vec<u8>, String> {
    match tokio::time::timeout(timeout, call(url, ca, body)).await {
        Ok(Ok(b)) => Ok(b),
        Ok(Err(e)) => Err(format!("Post \"{url}\": {e}")),
        Err(_) => Err(format!("Post \"{url}\": context deadline exceeded")),
    }
}

/// Where a webhook is called: host, port and the CA's PEM.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Endpoint {
    host: String,
    port: u16,
    ca: Vec<u8>,
}

async fn call(url: &str, ca: Option<&[u8]>, body: Vec<u8>) -> Result<Vec<u8>, String> {
    let uri: Uri = url.parse().map_err(|e| format!("invalid URL: {e}"))?;
    if uri.scheme_str() != Some("https") {
        return Err("unsupported protocol scheme: only https is allowed".into());
    }
    let host = uri.host().ok_or("the URL has no host")?;
    let endpoint = Endpoint {
        host: host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned(),
        port: uri.port_u16().unwrap_or(443),
        ca: ca.map(<[u8]>::to_vec).unwrap_or_default(),
    };
    let (tls, idle) = pool().checkout(&endpoint)?;
    let mut req = request(&uri, Bytes::from(body))?;
    // A pooled connection may have closed meanwhile: then a new one.
    if let Some(mut sender) = idle
        && sender.ready().await.is_ok()
    {
        match sender.try_send_request(req).await {
            Ok(resp) => return read(&endpoint, sender, resp).await,
            // Not sent (the connection closed meanwhile): a new one.
            Err(mut e) => match e.take_message() {
                Some(unsent) => req = unsent,
                None => return Err(e.error().to_string()),
            },
        }
    }
    let mut sender = connect(&endpoint, tls).await?;
    let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
    read(&endpoint, sender, resp).await
}

/// The POST of `body` to `uri`.
fn request(uri: &Uri, body: Bytes) -> Result<Request<Full<Bytes>>, String> {
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    Request::post(path)
        .header(header::HOST, uri.authority().map_or("", |a| a.as_str()))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, */*")
        .body(Full::new(body))
        .map_err(|e| e.to_string())
}

/// A new TLS connection to `endpoint`, its driver spawned (it ends when
/// the connection closes or its sender is dropped).
async fn connect(endpoint: &Endpoint, tls: Arc<rustls::ClientConfig>) -> Result<Sender, String> {
    let Endpoint { host, port, .. } = endpoint;
    let name = ServerName::try_from(host.clone()).map_err(|e| format!("invalid host: {e}"))?;
    let tcp = tokio::net::TcpStream::connect((host.as_str(), *port))
        .await
        .map_err(|e| format!("dial tcp {host}:{port}: {}", dial_error(&e)))?;
    let stream = tokio_rustls::TlsConnector::from(tls)
        .connect(name, tcp)
        .await
        .map_err(|e| format!("tls: {e}"))?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!(%e, "webhook connection ended");
        }
    });
    Ok(sender)
}

/// A failed connect in the words of Go's dialer (`connect: connection
/// refused`), which kube-apiserver's webhook errors carry.
fn dial_error(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connect: connection refused".into(),
        std::io::ErrorKind::ConnectionReset => "read: connection reset by peer".into(),
        std::io::ErrorKind::TimedOut => "i/o timeout".into(),
        _ => e.to_string(),
    }
}

/// The answer's body (bounded); the connection goes back to the pool when
/// it was read whole and may be kept.
async fn read(
    endpoint: &Endpoint,
    sender: Sender,
    resp: Response<Incoming>,
) -> Result<Vec<u8>, String> {
    let status = resp.status();
    let close = resp
        .headers()
        .get(header::CONNECTION)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"close"));
    let body = Limited::new(resp.into_body(), MAX_RESPONSE)
        .collect()
        .await
        .map_err(|e| format!("reading the answer: {e}"))?
        .to_bytes();
    if !close {
        pool().checkin(endpoint, sender);
    }
    if status.is_success() {
        Ok(body.to_vec())
    } else {
        Err(format!(
            "the server responded with the status code {} but did not return more information",
            status.as_u16()
        ))
    }
}

/// The process's webhook connections.
fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(Pool::default)
}

/// Idle connections and TLS configurations by endpoint.
#[derive(Default)]
struct Pool {
    endpoints: Mutex<HashMap<Endpoint, Pooled>>,
}

struct Pooled {
    tls: Arc<rustls::ClientConfig>,
    idle: Vec<(Sender, Instant)>,
    used: Instant,
}

impl Pool {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Endpoint, Pooled>> {
        self.endpoints.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The endpoint's TLS configuration and an idle connection that is
    /// still open, if one is kept.
    fn checkout(
        &self,
        endpoint: &Endpoint,
    ) -> Result<(Arc<rustls::ClientConfig>, Option<Sender>), String> {
        let now = Instant::now();
        let mut map = self.lock();
        prune(&mut map, now);
        if !map.contains_key(endpoint) {
            let ca = (!endpoint.ca.is_empty()).then_some(endpoint.ca.as_slice());
            let tls = Arc::new(tls_config(ca)?);
            if map.len() >= MAX_ENDPOINTS
                && let Some(oldest) = map
                    .iter()
                    .min_by_key(|(_, p)| p.used)
                    .map(|(e, _)| e.clone())
            {
                map.remove(&oldest);
            }
            let fresh = Pooled {
                tls,
                idle: Vec::new(),
                used: now,
            };
            map.insert(endpoint.clone(), fresh);
        }
        let Some(p) = map.get_mut(endpoint) else {
            return Err("the webhook connection pool lost an endpoint".into());
        };
        p.used = now;
        while let Some((sender, _)) = p.idle.pop() {
            if !sender.is_closed() {
                return Ok((p.tls.clone(), Some(sender)));
            }
        }
        Ok((p.tls.clone(), None))
    }

    /// Keeps `sender` idle for `endpoint` (dropped, closing it, when the
    /// endpoint keeps enough).
    fn checkin(&self, endpoint: &Endpoint, sender: Sender) {
        let mut map = self.lock();
        if let Some(p) = map.get_mut(endpoint)
            && p.idle.len() < MAX_IDLE_PER_ENDPOINT
            && !sender.is_closed()
        {
            p.idle.push((sender, Instant::now()));
        }
    }
}

/// Drops the connections idle longer than [`IDLE_TIMEOUT`] and the
/// endpoints unused that long.
fn prune(map: &mut HashMap<Endpoint, Pooled>, now: Instant) {
    map.retain(|_, p| {
        p.idle
            .retain(|(s, since)| now.duration_since(*since) < IDLE_TIMEOUT && !s.is_closed());
        now.duration_since(p.used) < IDLE_TIMEOUT
    });
}

/// A client configuration trusting the PEM certificates of `ca` only
/// (none: nothing is trusted, as the embedded server has no system
/// roots to fall back on).
fn tls_config(ca: Option<&[u8]>) -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    if let Some(pem) = ca {
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| format!("caBundle: {e}"))?;
            roots.add(cert).map_err(|e| format!("caBundle: {e}"))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}
