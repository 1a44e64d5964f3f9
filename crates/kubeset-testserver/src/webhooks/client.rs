//! One webhook call: a POST over HTTPS (rustls with the ring provider and
//! hyper's HTTP/1.1 client connection, both already the server's
//! dependencies), the server certificate verified against the webhook's
//! `caBundle` only, the whole call bounded by the webhook's timeout and
//! the answer by [`MAX_RESPONSE`].

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Uri, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

use crate::admission::webhook::MAX_RESPONSE;

/// POSTs `body` to `url` (`?timeout=Ns` added, as kube-apiserver's client
/// does) and returns the answer's body; `Err` says why the call failed,
/// in the words upstream's errors use.
pub(crate) async fn post(
    url: &str,
    ca: Option<&[u8]>,
    body: Vec<u8>,
    timeout: Duration,
) -> Result<Vec<u8>, String> {
    let sep = if url.contains('?') { '&' } else { '?' };
    let full = format!("{url}{sep}timeout={}s", timeout.as_secs());
    match tokio::time::timeout(timeout, call(&full, ca, body)).await {
        Ok(Ok(b)) => Ok(b),
        Ok(Err(e)) => Err(format!("failed to call webhook: Post \"{full}\": {e}")),
        Err(_) => Err(format!(
            "failed to call webhook: Post \"{full}\": context deadline exceeded"
        )),
    }
}

async fn call(url: &str, ca: Option<&[u8]>, body: Vec<u8>) -> Result<Vec<u8>, String> {
    let uri: Uri = url.parse().map_err(|e| format!("invalid URL: {e}"))?;
    if uri.scheme_str() != Some("https") {
        return Err("unsupported protocol scheme: only https is allowed".into());
    }
    let host = uri.host().ok_or("the URL has no host")?;
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = uri.port_u16().unwrap_or(443);
    let tls = tls_config(ca)?;
    let name = ServerName::try_from(host.clone()).map_err(|e| format!("invalid host: {e}"))?;
    let tcp = tokio::net::TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|e| format!("dial tcp {host}:{port}: {e}"))?;
    let stream = tokio_rustls::TlsConnector::from(Arc::new(tls))
        .connect(name, tcp)
        .await
        .map_err(|e| format!("tls: {e}"))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    let driver = tokio::spawn(conn);
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let req = Request::post(path)
        .header(header::HOST, uri.authority().map_or("", |a| a.as_str()))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, */*")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let resp = sender.send_request(req).await.map_err(|e| e.to_string());
    let out = match resp {
        Ok(resp) => {
            let status = resp.status();
            let body = Limited::new(resp.into_body(), MAX_RESPONSE)
                .collect()
                .await
                .map_err(|e| format!("reading the answer: {e}"))?
                .to_bytes();
            if status.is_success() {
                Ok(body.to_vec())
            } else {
                Err(format!(
                    "the server responded with the status code {} but did not return more information",
                    status.as_u16()
                ))
            }
        }
        Err(e) => Err(e),
    };
    driver.abort();
    out
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
