//! A conversion webhook that answers wrongly on purpose, by the path it
//! is called at: a minimal HTTPS/1.1 server (one request per connection,
//! `Connection: close`) over tokio-rustls with the scenario's
//! certificate. Each path's calls are counted, so a scenario knows the
//! API server has reached it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::TestCerts;

/// The server: its base URL and the calls per path.
pub struct Hostile {
    /// `https://127.0.0.1:PORT`.
    pub base: String,
    calls: Arc<Mutex<HashMap<String, usize>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Hostile {
    /// Serves with `certs`' leaf on a free loopback port.
    pub async fn start(certs: &TestCerts) -> Hostile {
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&certs.cert)
            .expect("certificate file")
            .collect::<Result<_, _>>()
            .expect("certificates");
        let key = PrivateKeyDer::from_pem_file(&certs.key).expect("key file");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .expect("server config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("https://{}", listener.local_addr().expect("address"));
        let calls = Arc::new(Mutex::new(HashMap::new()));
        let counted = calls.clone();
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let (acceptor, counted) = (acceptor.clone(), counted.clone());
                tokio::spawn(async move {
                    if let Ok(tls) = acceptor.accept(tcp).await {
                        serve(tls, &counted).await;
                    }
                });
            }
        });
        Hostile { base, calls, task }
    }

    /// How many reviews `path` was sent.
    pub fn calls(&self, path: &str) -> usize {
        let calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        calls.get(path).copied().unwrap_or(0)
    }
}

/// Reads one request (head, then `Content-Length` bytes) and answers it.
async fn serve<S>(mut s: S, calls: &Mutex<HashMap<String, usize>>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match s.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if buf.len() > 1 << 20 {
            return;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let path = head
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .split('?')
        .next()
        .unwrap_or("/")
        .to_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while buf.len() < head_end + length {
        match s.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let review: Value = serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
    *calls
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(path.clone())
        .or_default() += 1;
    let body = answer(&path, &review);
    let reply = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = s.write_all(reply.as_bytes()).await;
    let _ = s.write_all(&body).await;
    let _ = s.shutdown().await;
}

/// The wrong answer of `path` to `review`.
fn answer(path: &str, review: &Value) -> Vec<u8> {
    let req = &review["request"];
    let desired = req["desiredAPIVersion"].as_str().unwrap_or_default();
    let converted = |f: &dyn Fn(&mut Value)| -> Vec<Value> {
        let objects = req["objects"].as_array().cloned().unwrap_or_default();
        objects
            .into_iter()
            .map(|mut o| {
                o["apiVersion"] = json!(desired);
                f(&mut o);
                o
            })
            .collect()
    };
    let ok = |objects: Vec<Value>| {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
               "response": {"uid": req["uid"], "result": {"status": "Success"},
                            "convertedObjects": objects}})
    };
    let v = match path {
        "/count" => ok(Vec::new()),
        "/version" => ok(converted(&|o| {
            o["apiVersion"] = json!(format!("{}/v9", super::GROUP));
        })),
        "/kind" => ok(converted(&|o| o["kind"] = json!("Robot"))),
        "/rename" => ok(converted(&|o| o["metadata"]["name"] = json!("other"))),
        "/uid" => {
            let mut v = ok(converted(&|_| {}));
            v["response"]["uid"] = json!("not-the-request-uid");
            v
        }
        "/failure" => json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                             "response": {"uid": req["uid"], "result": {"status": "Failure"}}}),
        "/garbage" => return b"this is not JSON".to_vec(),
        // Past the 3 MiB the embedded server reads.
        "/huge" => json!({"padding": "x".repeat(4 << 20)}),
        _ => ok(converted(&|_| {})),
    };
    serde_json::to_vec(&v).unwrap_or_default()
}
