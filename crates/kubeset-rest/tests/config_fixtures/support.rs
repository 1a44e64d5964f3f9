//! Test support for the config tests: a CA and certificates made with
//! rcgen, and a loopback HTTPS server (tokio-rustls) that answers each
//! request through a closure and reports the client certificate it saw.

#![allow(dead_code)]

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, PublicKeyData,
};
use rustls::{
    RootCertStore, ServerConfig,
    pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer},
    server::WebPkiClientVerifier,
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpListener,
};
use tokio_rustls::TlsAcceptor;

/// A test CA that issues server and client certificates.
pub struct Pki {
    pub ca_pem: String,
    pub ca_der: CertificateDer<'static>,
    issuer: Issuer<'static, KeyPair>,
}

/// A certificate and its PKCS#8 key.
pub struct Issued {
    pub cert_pem: String,
    pub key_pem: String,
    pub cert_der: CertificateDer<'static>,
    pub key_der: Vec<u8>,
}

impl Pki {
    pub fn new(name: &str) -> Self {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let cert = params.self_signed(&key).unwrap();
        Self {
            ca_pem: cert.pem(),
            ca_der: cert.der().clone(),
            issuer: Issuer::new(params, key),
        }
    }

    /// A server certificate for the given DNS names / IP addresses.
    pub fn server(&self, names: &[&str]) -> Issued {
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .unwrap();
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Issued {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            cert_der: cert.der().clone(),
            key_der: key.serialize_der(),
        }
    }

    /// A client certificate with common name `cn` for the public key of `key`.
    pub fn client_for(&self, cn: &str, key: &impl PublicKeyData) -> String {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, cn);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        params.signed_by(key, &self.issuer).unwrap().pem()
    }

    /// A client certificate with a fresh ECDSA P-256 key (PKCS#8 PEM).
    pub fn client(&self, cn: &str) -> Issued {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, cn);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Issued {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            cert_der: cert.der().clone(),
            key_der: key.serialize_der(),
        }
    }
}

/// What the server saw of one request.
pub struct Seen<'a> {
    /// The request head (request line and headers), as text.
    pub head: &'a str,
    /// The client certificate's common name, if one was presented.
    pub client_cn: Option<String>,
}

impl Seen<'_> {
    /// The value of a header (case-insensitive name), first occurrence.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers(name).into_iter().next()
    }

    /// Every value of a header.
    pub fn headers(&self, name: &str) -> Vec<&str> {
        self.head
            .lines()
            .skip(1)
            .filter_map(|l| l.split_once(':'))
            .filter(|(k, _)| k.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
            .collect()
    }
}

pub type Handler = Arc<dyn Fn(&Seen<'_>) -> (u16, String) + Send + Sync>;

/// Starts an HTTPS server on 127.0.0.1 with the given certificate. With
/// `client_ca`, a client certificate signed by it is required.
pub async fn serve(server: &Issued, client_ca: Option<&Pki>, handler: Handler) -> SocketAddr {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap();
    let builder = match client_ca {
        Some(pki) => {
            let mut roots = RootCertStore::empty();
            roots.add(pki.ca_der.clone()).unwrap();
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .unwrap();
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server.key_der.clone()));
    let mut config = builder
        .with_single_cert(vec![server.cert_der.clone()], key)
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            let handler = handler.clone();
            tokio::spawn(async move {
                let Ok(Ok(mut tls)) =
                    tokio::time::timeout(Duration::from_secs(20), acceptor.accept(tcp)).await
                else {
                    return;
                };
                let client_cn = tls
                    .get_ref()
                    .1
                    .peer_certificates()
                    .and_then(|c| c.first())
                    .map(|c| common_name(c.as_ref()));
                // Serve requests on this connection until it closes.
                let mut buf = Vec::new();
                loop {
                    let mut chunk = [0u8; 4096];
                    let end = loop {
                        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            break Some(i + 4);
                        }
                        match tls.read(&mut chunk).await {
                            Ok(0) | Err(_) => break None,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    };
                    let Some(end) = end else { return };
                    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                    buf.drain(..end);
                    let (status, body) = handler(&Seen {
                        head: &head,
                        client_cn: client_cn.clone(),
                    });
                    let content_type = if body.starts_with('{') {
                        "application/json"
                    } else {
                        "text/plain"
                    };
                    let response = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if tls.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                    let _ = tls.flush().await;
                }
            });
        }
    });
    addr
}

/// The first CN attribute in a DER certificate (a crude scan, enough for
/// certificates made by these tests).
fn common_name(der: &[u8]) -> String {
    // OID 2.5.4.3 = 06 03 55 04 03, then a string tag and a length.
    let mut last = None;
    for i in 0..der.len().saturating_sub(7) {
        if der[i..i + 5] == [0x06, 0x03, 0x55, 0x04, 0x03] {
            let len = der[i + 6] as usize;
            let start = i + 7;
            if start + len <= der.len() {
                last = Some(String::from_utf8_lossy(&der[start..start + len]).into_owned());
            }
        }
    }
    // The subject comes after the issuer in the TBS certificate.
    last.unwrap_or_default()
}

/// A reqwest client on a rustls config built by the config layer.
pub fn client(tls: rustls::ClientConfig) -> reqwest::Client {
    reqwest::Client::builder()
        .use_preconfigured_tls(tls)
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// Writes `contents` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p
}

/// The fixtures directory.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/config_fixtures")
}
