//! Shared helpers for the integration tests: a plain reqwest client and a
//! line reader for watch streams.

#![allow(dead_code)]

use std::time::Duration;

use serde_json::Value;

/// Generous per-request timeout for a loaded 2-core machine.
pub const TIMEOUT: Duration = Duration::from_secs(20);

pub fn client() -> reqwest::Client {
    // Plain HTTP, but reqwest wants a process-wide provider to build at all.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(TIMEOUT)
        .build()
        .expect("client")
}

pub fn tls_client(ca_pem: &str, timeout: Duration) -> reqwest::Client {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.expect("pem")).expect("root");
    }
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    reqwest::Client::builder()
        .timeout(timeout)
        .tls_backend_preconfigured(config)
        .build()
        .expect("tls client")
}

/// Sends a request and returns status, headers and the JSON body.
pub async fn send(
    c: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    content_type: &str,
    body: Option<&Value>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut rb = c.request(method, url);
    if let Some(b) = body {
        rb = rb
            .header("content-type", content_type)
            .body(serde_json::to_vec(b).expect("encode"));
    }
    let resp = rb.send().await.expect("request");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let bytes = resp.bytes().await.expect("body");
    let v = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
    };
    (status, headers, v)
}

pub async fn get(c: &reqwest::Client, url: &str) -> (u16, Value) {
    let (s, _, v) = send(c, reqwest::Method::GET, url, "", None).await;
    (s, v)
}

pub async fn post(c: &reqwest::Client, url: &str, body: &Value) -> (u16, Value) {
    let (s, _, v) = send(
        c,
        reqwest::Method::POST,
        url,
        "application/json",
        Some(body),
    )
    .await;
    (s, v)
}

pub async fn put(c: &reqwest::Client, url: &str, body: &Value) -> (u16, Value) {
    let (s, _, v) = send(c, reqwest::Method::PUT, url, "application/json", Some(body)).await;
    (s, v)
}

pub async fn patch(c: &reqwest::Client, url: &str, ct: &str, body: &Value) -> (u16, Value) {
    let (s, _, v) = send(c, reqwest::Method::PATCH, url, ct, Some(body)).await;
    (s, v)
}

pub async fn delete(c: &reqwest::Client, url: &str) -> (u16, Value) {
    let (s, _, v) = send(c, reqwest::Method::DELETE, url, "", None).await;
    (s, v)
}

pub fn rv(v: &Value) -> u64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .expect("resourceVersion is a string")
        .parse()
        .expect("numeric resourceVersion")
}

/// Reads newline-delimited JSON events from a streaming response.
pub struct Lines {
    resp: reqwest::Response,
    buf: Vec<u8>,
}

impl Lines {
    pub async fn open(c: &reqwest::Client, url: &str) -> Self {
        let resp = c.get(url).send().await.expect("watch request");
        assert_eq!(resp.status().as_u16(), 200, "watch status for {url}");
        Self {
            resp,
            buf: Vec::new(),
        }
    }

    /// The next complete line as JSON; `None` at the end of the stream.
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(i) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=i).collect();
                return Some(serde_json::from_slice(&line).expect("event line is JSON"));
            }
            match tokio::time::timeout(TIMEOUT, self.resp.chunk())
                .await
                .expect("event within timeout")
            {
                Ok(Some(chunk)) => self.buf.extend_from_slice(&chunk),
                Ok(None) | Err(_) => return None,
            }
        }
    }

    /// Reads until the stream ends; returns the leftover bytes (a partial
    /// line) and whether it ended with an error rather than a clean end.
    pub async fn drain_to_end(mut self) -> (Vec<u8>, bool) {
        loop {
            match tokio::time::timeout(TIMEOUT, self.resp.chunk())
                .await
                .expect("stream ends within timeout")
            {
                Ok(Some(chunk)) => self.buf.extend_from_slice(&chunk),
                Ok(None) => return (self.buf, false),
                Err(_) => return (self.buf, true),
            }
        }
    }

    /// Next event that is not a BOOKMARK.
    pub async fn next_non_bookmark(&mut self) -> Option<Value> {
        loop {
            let e = self.next().await?;
            if e["type"] != "BOOKMARK" {
                return Some(e);
            }
        }
    }
}

/// The `KUBESET_REALKUBE_*` settings of the realkube instance named by
/// `KUBESET_REALKUBE_ENV` (the env file `realkube.sh start` writes), or
/// `None` when it is not set. The file is sourced by bash, so its `printf
/// %q` quoting (`\,` between the servers of a multi-server instance) is
/// read exactly as a shell reads it; an unreadable file fails the test.
pub fn realkube_env() -> Option<std::collections::BTreeMap<String, String>> {
    let path = std::env::var_os("KUBESET_REALKUBE_ENV")?;
    let out = std::process::Command::new("bash")
        .args(["-c", ". \"$1\" && env -0", "realkube-env"])
        .arg(&path)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "sourcing {}: {}",
        std::path::Path::new(&path).display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let vars: std::collections::BTreeMap<String, String> = out
        .stdout
        .split(|b| *b == 0)
        .filter_map(|kv| std::str::from_utf8(kv).ok()?.split_once('='))
        .filter(|(k, _)| k.starts_with("KUBESET_REALKUBE_"))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    assert!(
        vars.contains_key("KUBESET_REALKUBE_SERVERS"),
        "{} names no KUBESET_REALKUBE_SERVERS",
        std::path::Path::new(&path).display()
    );
    Some(vars)
}

/// The first API server of a realkube instance (`https://ADDR:PORT`).
pub fn realkube_server(env: &std::collections::BTreeMap<String, String>) -> String {
    env["KUBESET_REALKUBE_SERVERS"]
        .split(',')
        .next()
        .unwrap_or_default()
        .to_owned()
}
