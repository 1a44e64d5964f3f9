//! A fault-injecting proxy on loopback, between a client under test and a
//! real API server.
//!
//! [`FaultProxy::start`] listens on `127.0.0.1:<ephemeral>` and applies one
//! [`Fault`] to the first `times` connections it accepts (every connection
//! when `None`), then passes the rest through unchanged:
//!
//! - **TCP level** ([`Fault::Refuse`], [`Fault::StallHandshake`]): nothing
//!   listens, or the connection is accepted and never answered, so the TLS
//!   handshake stalls. No TLS termination is involved.
//! - **HTTP level** (every other fault): the proxy terminates TLS with a
//!   certificate of its own CA ([`FaultProxy::ca`], to be trusted by the
//!   client), reads the request head, and either answers itself
//!   ([`Fault::Respond`]: a `Status` with a `Retry-After`, as an overloaded
//!   server does) or opens a TLS connection of its own to the upstream
//!   server (presenting the admin client certificate, [`Upstream`]) and
//!   relays the exchange, breaking the response as the fault says: never
//!   answering, withholding the body, resetting the connection mid-body,
//!   dripping it, or cutting a watch in the middle of an event.
//!
//! Both sides speak HTTP/1.1 (the only ALPN protocol offered), so the
//! relayed bytes are the plaintext HTTP/1.1 exchange: a fault is exact to
//! the byte. Counters ([`FaultProxy::connections`],
//! [`FaultProxy::requests`], [`FaultProxy::faulted`]) tell how many
//! attempts the client made. Dropping the proxy stops it.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_rustls::{TlsAcceptor, TlsConnector};

use crate::{HarnessError, RealkubeEnv};

/// The largest request or response head the proxy reads.
const MAX_HEAD: usize = 64 * 1024;

/// Bytes of the next watch event passed before [`Fault::TruncateWatch`]
/// cuts the stream.
const PARTIAL_EVENT_BYTES: usize = 24;

/// What the proxy does to a faulted connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Relay unchanged.
    Pass,
    /// Nothing listens on the port: every connection is refused.
    Refuse,
    /// Accept the TCP connection, never answer: the TLS handshake stalls.
    StallHandshake,
    /// Complete the handshake, read the request, never answer.
    HangBeforeHeaders,
    /// Relay the response head, then withhold the body (connection open).
    HangAfterHeaders,
    /// Relay the head and this many body bytes, then reset (TCP RST).
    ResetMidBody {
        /// Body bytes passed before the reset.
        after: usize,
    },
    /// Relay the response `bytes` at a time, one piece every `every`.
    Drip {
        /// Bytes per piece.
        bytes: usize,
        /// Pause before each piece.
        every: Duration,
    },
    /// Relay a watch response through `events` complete event lines and
    /// the first bytes of the next, then close the connection cleanly
    /// (TLS close_notify and FIN): a stream cut in the middle of an event.
    TruncateWatch {
        /// Complete events passed.
        events: usize,
    },
    /// Answer the request ourselves: `status` with a `Status` body, the
    /// given `Retry-After` header if any, and `Connection: close`.
    Respond {
        /// The HTTP status code.
        status: u16,
        /// The `Retry-After` value, verbatim.
        retry_after: Option<String>,
    },
}

/// The upstream API server: its address and the TLS client configuration
/// the proxy dials it with.
#[derive(Clone)]
pub struct Upstream {
    addr: SocketAddr,
    server_name: ServerName<'static>,
    connector: TlsConnector,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("addr", &self.addr)
            .finish()
    }
}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> HarnessError {
    let what = what.into();
    move |source| HarnessError::Io { what, source }
}

fn tls_err(what: &str, e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Io {
        what: format!("fault proxy: {what}"),
        source: std::io::Error::other(e.to_string()),
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn read_pem_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, HarnessError> {
    CertificateDer::pem_file_iter(path)
        .and_then(Iterator::collect)
        .map_err(|e| tls_err(&format!("reading {}", path.display()), e))
}

impl Upstream {
    /// Apiserver 0 of a realkube instance, dialled with the instance's CA
    /// and its admin client certificate.
    pub fn realkube(env: &RealkubeEnv) -> Result<Self, HarnessError> {
        let server = env
            .servers
            .first()
            .ok_or_else(|| HarnessError::MissingSetting {
                name: "KUBESET_REALKUBE_SERVERS".to_owned(),
            })?;
        let bad = || HarnessError::BadSetting {
            name: "KUBESET_REALKUBE_SERVERS".to_owned(),
            value: server.clone(),
        };
        let addr: SocketAddr = server
            .strip_prefix("https://")
            .and_then(|s| s.parse().ok())
            .ok_or_else(bad)?;
        let mut roots = rustls::RootCertStore::empty();
        for cert in read_pem_certs(&env.ca)? {
            roots.add(cert).map_err(|e| tls_err("the realkube CA", e))?;
        }
        let chain = read_pem_certs(&env.client_cert)?;
        let key = PrivateKeyDer::from_pem_file(&env.client_key)
            .map_err(|e| tls_err("the admin client key", e))?;
        let mut config = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| tls_err("client protocol versions", e))?
            .with_root_certificates(roots)
            .with_client_auth_cert(chain, key)
            .map_err(|e| tls_err("the admin client certificate", e))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Self {
            addr,
            server_name: ServerName::IpAddress(addr.ip().into()),
            connector: TlsConnector::from(Arc::new(config)),
        })
    }
}

/// The proxy's serving identity: a fresh CA and a leaf for 127.0.0.1.
struct Identity {
    ca: CertificateDer<'static>,
    acceptor: TlsAcceptor,
}

fn identity() -> Result<Identity, HarnessError> {
    let cert = |e: rcgen::Error| tls_err("generating its certificates", e);
    let ca_key = KeyPair::generate().map_err(cert)?;
    let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(cert)?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    ca.distinguished_name
        .push(DnType::CommonName, "kubeset-fault-proxy-ca");
    let ca_der = ca.self_signed(&ca_key).map_err(cert)?.der().clone();
    let issuer = Issuer::new(ca, ca_key);
    let leaf_key = KeyPair::generate().map_err(cert)?;
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .map_err(cert)?
        .signed_by(&leaf_key, &issuer)
        .map_err(cert)?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_err("server protocol versions", e))?
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
        )
        .map_err(|e| tls_err("its serving certificate", e))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Identity {
        ca: ca_der,
        acceptor: TlsAcceptor::from(Arc::new(config)),
    })
}

/// Counters of one proxy.
#[derive(Debug, Default)]
struct Stats {
    connections: AtomicU64,
    requests: AtomicU64,
    faulted: AtomicU64,
}

/// A running fault proxy; see the [module docs](self).
#[derive(Debug)]
pub struct FaultProxy {
    addr: SocketAddr,
    ca: CertificateDer<'static>,
    stats: Arc<Stats>,
    task: Option<JoinHandle<()>>,
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// What the accept loop shares with each connection.
struct Shared {
    upstream: Upstream,
    acceptor: TlsAcceptor,
    fault: Fault,
    times: Option<u64>,
    stats: Arc<Stats>,
}

impl FaultProxy {
    /// Starts a proxy to `upstream` applying `fault` to the first `times`
    /// connections (all when `None`).
    pub async fn start(
        upstream: Upstream,
        fault: Fault,
        times: Option<u64>,
    ) -> Result<Self, HarnessError> {
        let id = identity()?;
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(io_err("fault proxy: binding 127.0.0.1:0"))?;
        let addr = listener
            .local_addr()
            .map_err(io_err("fault proxy: local address"))?;
        let stats = Arc::new(Stats::default());
        if fault == Fault::Refuse {
            // The port was just free; with the listener gone, connecting
            // to it is refused.
            drop(listener);
            return Ok(Self {
                addr,
                ca: id.ca,
                stats,
                task: None,
            });
        }
        let shared = Arc::new(Shared {
            upstream,
            acceptor: id.acceptor,
            fault,
            times,
            stats: stats.clone(),
        });
        let task = tokio::spawn(accept_loop(listener, shared));
        Ok(Self {
            addr,
            ca: id.ca,
            stats,
            task: Some(task),
        })
    }

    /// `https://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// The CA certificate the client must trust for the HTTP-level faults.
    pub fn ca(&self) -> CertificateDer<'static> {
        self.ca.clone()
    }

    /// TCP connections accepted.
    pub fn connections(&self) -> u64 {
        self.stats.connections.load(Ordering::Relaxed)
    }

    /// Request heads read (HTTP-level faults and passed connections).
    pub fn requests(&self) -> u64 {
        self.stats.requests.load(Ordering::Relaxed)
    }

    /// Connections the fault was applied to.
    pub fn faulted(&self) -> u64 {
        self.stats.faulted.load(Ordering::Relaxed)
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    while let Ok((tcp, _)) = listener.accept().await {
        let n = shared.stats.connections.fetch_add(1, Ordering::Relaxed);
        let fault = if shared.times.is_none_or(|t| n < t) {
            shared.stats.faulted.fetch_add(1, Ordering::Relaxed);
            shared.fault.clone()
        } else {
            Fault::Pass
        };
        let shared = shared.clone();
        // A broken connection is the point of the exercise: its error ends
        // that connection only.
        tokio::spawn(async move {
            let _ = serve(tcp, fault, &shared).await;
        });
    }
}

/// Reads until the end of an HTTP head (`\r\n\r\n`); answers the bytes read
/// (the head and whatever followed it) and the head's length.
async fn read_head<R: AsyncRead + Unpin>(r: &mut R) -> std::io::Result<(Vec<u8>, usize)> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok((buf, end + 4));
        }
        if buf.len() > MAX_HEAD {
            return Err(std::io::Error::other("HTTP head too large"));
        }
        let n = r.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Waits until the peer closes (or errs), discarding what it sends.
async fn until_closed<R: AsyncRead + Unpin>(mut r: R) {
    let mut sink = [0u8; 4096];
    while matches!(r.read(&mut sink).await, Ok(n) if n > 0) {}
}

async fn serve(tcp: TcpStream, fault: Fault, shared: &Shared) -> std::io::Result<()> {
    if fault == Fault::StallHandshake {
        until_closed(tcp).await;
        return Ok(());
    }
    if matches!(fault, Fault::ResetMidBody { .. }) {
        // Closing with a zero linger sends RST instead of FIN.
        socket_linger_zero(&tcp)?;
    }
    let mut client = shared.acceptor.accept(tcp).await?;
    let (request, _) = read_head(&mut client).await?;
    shared.stats.requests.fetch_add(1, Ordering::Relaxed);
    match fault {
        Fault::HangBeforeHeaders => {
            until_closed(client).await;
            return Ok(());
        }
        Fault::Respond {
            status,
            retry_after,
        } => {
            client
                .write_all(&canned(status, retry_after.as_deref()))
                .await?;
            return client.shutdown().await;
        }
        _ => {}
    }
    let tcp = TcpStream::connect(shared.upstream.addr).await?;
    let mut upstream = shared
        .upstream
        .connector
        .connect(shared.upstream.server_name.clone(), tcp)
        .await?;
    upstream.write_all(&request).await?;
    let (client_r, mut client_w) = tokio::io::split(client);
    let (mut up_r, mut up_w) = tokio::io::split(upstream);
    let requests = async {
        let _ = tokio::io::copy(&mut { client_r }, &mut up_w).await;
    };
    let responses = relay(&fault, &mut up_r, &mut client_w);
    tokio::select! {
        () = requests => Ok(()),
        r = responses => r,
    }
}

#[allow(deprecated)] // tokio's note: a zero linger makes close send RST, as wanted here.
fn socket_linger_zero(tcp: &TcpStream) -> std::io::Result<()> {
    tcp.set_linger(Some(Duration::ZERO))
}

/// Relays the upstream's responses to the client, breaking them as `fault`
/// says. Returning ends the connection (dropping both sides).
async fn relay<R, W>(fault: &Fault, up: &mut R, client: &mut W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    match *fault {
        Fault::HangAfterHeaders => {
            let (buf, head) = read_head(up).await?;
            client.write_all(&buf[..head]).await?;
            client.flush().await?;
            std::future::pending().await
        }
        Fault::ResetMidBody { after } => {
            let (buf, head) = read_head(up).await?;
            client.write_all(&buf[..head]).await?;
            let mut body = buf[head..].to_vec();
            let mut passed = 0usize;
            loop {
                let n = body.len().min(after - passed);
                client.write_all(&body[..n]).await?;
                client.flush().await?;
                passed += n;
                if passed == after {
                    return Ok(());
                }
                body.resize(4096, 0);
                let read = up.read(&mut body).await?;
                if read == 0 {
                    return Ok(());
                }
                body.truncate(read);
            }
        }
        Fault::Drip { bytes, every } => drip(up, client, bytes.max(1), every).await,
        Fault::TruncateWatch { events } => truncate_watch(up, client, events).await,
        _ => tokio::io::copy(up, client).await.map(drop),
    }
}

async fn drip<R, W>(
    up: &mut R,
    client: &mut W,
    bytes: usize,
    every: Duration,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut chunk = vec![0u8; 4096];
    loop {
        let n = up.read(&mut chunk).await?;
        if n == 0 {
            return client.shutdown().await;
        }
        for piece in chunk[..n].chunks(bytes) {
            tokio::time::sleep(every).await;
            client.write_all(piece).await?;
            client.flush().await?;
        }
    }
}

/// Passes `events` complete watch events (each a JSON line ending in
/// `}\n`, which chunked framing never contains) and the first bytes of the
/// next one, then closes cleanly.
async fn truncate_watch<R, W>(up: &mut R, client: &mut W, events: usize) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let (buf, head) = read_head(up).await?;
    client.write_all(&buf[..head]).await?;
    let mut pending = buf[head..].to_vec();
    let mut seen = 0usize;
    let mut prev = 0u8;
    let mut partial: Option<usize> = None;
    loop {
        let mut cut = None;
        for (i, &b) in pending.iter().enumerate() {
            if let Some(left) = partial.as_mut() {
                if *left == 0 {
                    cut = Some(i);
                    break;
                }
                *left -= 1;
            } else if prev == b'}' && b == b'\n' {
                seen += 1;
                if seen == events {
                    // Skip the CRLF ending this chunk and the next chunk's
                    // size line, then pass part of the event.
                    partial = Some(PARTIAL_EVENT_BYTES);
                }
            }
            prev = b;
        }
        let upto = cut.unwrap_or(pending.len());
        client.write_all(&pending[..upto]).await?;
        client.flush().await?;
        if cut.is_some() {
            return client.shutdown().await;
        }
        let mut chunk = [0u8; 4096];
        let n = up.read(&mut chunk).await?;
        if n == 0 {
            return client.shutdown().await;
        }
        pending = chunk[..n].to_vec();
    }
}

/// Our own answer: `status`, a `Status` body, `Retry-After` if given.
fn canned(status: u16, retry_after: Option<&str>) -> Vec<u8> {
    let (reason, text) = match status {
        429 => ("TooManyRequests", "Too Many Requests"),
        500 => ("InternalError", "Internal Server Error"),
        502 => ("", "Bad Gateway"),
        503 => ("ServiceUnavailable", "Service Unavailable"),
        504 => ("Timeout", "Gateway Timeout"),
        _ => ("", "Error"),
    };
    let body = serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": format!("fault proxy: {text}"),
        "reason": reason,
        "code": status,
    })
    .to_string();
    let mut head = format!(
        "HTTP/1.1 {status} {text}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(ra) = retry_after {
        head.push_str(&format!("Retry-After: {ra}\r\n"));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}
