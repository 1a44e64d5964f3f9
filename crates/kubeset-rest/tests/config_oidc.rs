//! `auth-provider: oidc` (feature `oidc`) over real sockets: a small OIDC
//! issuer of our own on loopback HTTPS (discovery and token endpoint,
//! trusted through `idp-certificate-authority-data`), and the embedded API
//! server accepting only the id-token the issuer hands out.

#[path = "config_fixtures/support.rs"]
mod support;

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use base64::Engine as _;
use kubeset_rest::{
    Error, RestClient,
    config::{Config, KubeConfigOptions, Kubeconfig},
};
use kubeset_testserver::TestServer;
use rustls::{
    ServerConfig,
    pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer},
};
use serde_json::{Value, json};
use support::{Issued, Pki};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpListener,
};
use tokio_rustls::TlsAcceptor;

/// Bounds every request of a test (no timing assertion: a hang fails).
const DEADLINE: Duration = Duration::from_secs(60);

fn b64url(s: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s)
}

/// An unsigned JWT (the API server here compares the token, it does not
/// verify it) expiring `exp_from_now` seconds from now.
fn jwt(subject: &str, exp_from_now: i64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let claims = json!({"iss": "test", "sub": subject, "exp": now + exp_from_now});
    format!(
        "{}.{}.c2ln",
        b64url(r#"{"alg":"RS256"}"#),
        b64url(&claims.to_string())
    )
}

/// One request the issuer received.
#[derive(Debug, Clone)]
struct Received {
    method: String,
    path: String,
    authorization: Option<String>,
    body: String,
}

type Answer = Arc<dyn Fn(&Received) -> (u16, String) + Send + Sync>;

/// The issuer: an HTTPS server on loopback that records each request
/// (head and body) and answers through `answer`.
async fn issuer(cert: &Issued, answer: Answer) -> (SocketAddr, Arc<Mutex<Vec<Received>>>) {
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert.key_der.clone()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.cert_der.clone()], key)
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = log.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, answer, seen) = (acceptor.clone(), answer.clone(), seen.clone());
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                while let Some(received) = read_request(&mut tls).await {
                    let (status, body) = answer(&received);
                    seen.lock().unwrap().push(received);
                    let response = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if tls.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, log)
}

/// Reads one HTTP/1.1 request with a `content-length` body (what the
/// client sends here).
async fn read_request(tls: &mut (impl AsyncReadExt + Unpin)) -> Option<Received> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = tls.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let header = |name: &str| {
        head.lines()
            .skip(1)
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_owned())
    };
    let length: usize = header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = tls.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    }
    let mut request_line = head.lines().next()?.split(' ');
    Some(Received {
        method: request_line.next()?.to_owned(),
        path: request_line.next()?.to_owned(),
        authorization: header("authorization"),
        body: String::from_utf8_lossy(&buf[head_end..head_end + length]).into_owned(),
    })
}

/// The discovery document and token endpoint of an issuer at `/idp`,
/// handing out `fresh` for the refresh-token `r1` (client credentials in
/// the header, as RFC 6749 2.3.1 encodes them).
fn discovery_and_token(fresh: String) -> Answer {
    Arc::new(
        move |r: &Received| match (r.method.as_str(), r.path.as_str()) {
            ("GET", "/idp/.well-known/openid-configuration") => (
                200,
                json!({"issuer": "x", "token_endpoint": "https://127.0.0.1:PORT/idp/token"})
                    .to_string(),
            ),
            ("POST", "/idp/token") => {
                let basic = format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode("kubectl:se%2Fcret")
                );
                let form_ok = r.body.contains("grant_type=refresh_token")
                    && r.body.contains("refresh_token=r1");
                if r.authorization.as_deref() == Some(basic.as_str()) && form_ok {
                    let answer = json!({"id_token": fresh, "refresh_token": "r2", "access_token": "a", "token_type": "Bearer"});
                    (200, answer.to_string())
                } else {
                    (
                        400,
                        json!({"error": "invalid_grant", "error_description": "bad refresh"})
                            .to_string(),
                    )
                }
            }
            _ => (404, "{}".to_owned()),
        },
    )
}

/// Puts the issuer's own port into the token endpoint it advertises.
fn with_port(answer: Answer, port: Arc<Mutex<u16>>) -> Answer {
    Arc::new(move |r: &Received| {
        let (status, body) = answer(r);
        let port = *port.lock().unwrap();
        (status, body.replace("PORT", &port.to_string()))
    })
}

/// A client of the embedded server whose user is `auth-provider: oidc`.
fn client(server: &TestServer, pki: &Pki, issuer_url: &str, id_token: &str) -> RestClient {
    let ca = base64::engine::general_purpose::STANDARD.encode(&pki.ca_pem);
    let yaml = format!(
        "apiVersion: v1
kind: Config
current-context: c
contexts: [{{name: c, context: {{cluster: k, user: u}}}}]
clusters: [{{name: k, cluster: {{server: '{server}'}}}}]
users:
- name: u
  user:
    auth-provider:
      name: oidc
      config:
        idp-issuer-url: '{issuer_url}'
        idp-certificate-authority-data: {ca}
        client-id: kubectl
        client-secret: se/cret
        id-token: '{id_token}'
        refresh-token: r1
",
        server = server.url()
    );
    let kubeconfig = Kubeconfig::from_yaml(&yaml).unwrap();
    let config = Config::from_custom_kubeconfig_sync(kubeconfig, &KubeConfigOptions::default())
        .expect("the oidc user loads");
    RestClient::new(config.rest_config().unwrap().with_qps_burst(-1.0, 0)).unwrap()
}

async fn list_namespaces(c: &RestClient) -> Result<Value, Error> {
    tokio::time::timeout(
        DEADLINE,
        c.get().resource("namespaces").send_json::<Value>(),
    )
    .await
    .expect("within the deadline")
}

/// The error and its causes, one line.
fn chain(err: &Error) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        text.push_str(&format!(" / {s}"));
        source = s.source();
    }
    text
}

async fn setup(
    answer: impl FnOnce(String) -> Answer,
) -> (TestServer, Pki, String, Arc<Mutex<Vec<Received>>>, String) {
    let fresh = jwt("alice", 3600);
    let server = TestServer::builder()
        .token(Some(fresh.clone()))
        .start()
        .await
        .unwrap();
    let pki = Pki::new("idp-ca");
    let port = Arc::new(Mutex::new(0));
    let (addr, log) = issuer(
        &pki.server(&["127.0.0.1"]),
        with_port(answer(fresh.clone()), port.clone()),
    )
    .await;
    *port.lock().unwrap() = addr.port();
    (server, pki, format!("https://{addr}/idp"), log, fresh)
}

#[tokio::test]
async fn an_expired_id_token_is_refreshed_at_the_discovered_endpoint() {
    let (server, pki, issuer_url, log, _fresh) = setup(discovery_and_token).await;
    let c = client(&server, &pki, &issuer_url, &jwt("alice", -60));
    list_namespaces(&c)
        .await
        .expect("the refreshed id-token is accepted");
    list_namespaces(&c).await.expect("and kept");
    let seen: Vec<(String, String)> = log
        .lock()
        .unwrap()
        .iter()
        .map(|r| (r.method.clone(), r.path.clone()))
        .collect();
    assert_eq!(
        seen,
        [
            (
                "GET".to_owned(),
                "/idp/.well-known/openid-configuration".to_owned()
            ),
            ("POST".to_owned(), "/idp/token".to_owned()),
        ],
        "one discovery, one refresh"
    );
}

#[tokio::test]
async fn a_valid_id_token_is_sent_without_asking_the_issuer() {
    let (server, pki, issuer_url, log, fresh) = setup(discovery_and_token).await;
    let c = client(&server, &pki, &issuer_url, &fresh);
    list_namespaces(&c).await.expect("the id-token is accepted");
    assert!(log.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_401_refreshes_a_token_whose_exp_is_still_ahead() {
    let (server, pki, issuer_url, log, _fresh) = setup(discovery_and_token).await;
    let c = client(&server, &pki, &issuer_url, &jwt("revoked", 3600));
    // The server refuses the revoked token; the 401 marks it stale, so the
    // first request's retry or the next request refreshes it.
    if let Err(e) = list_namespaces(&c).await {
        assert!(e.is_unauthorized(), "{e}");
    }
    list_namespaces(&c)
        .await
        .expect("the refreshed id-token is accepted");
    let posts = log
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(posts, 1);
}

#[tokio::test]
async fn a_refused_refresh_retries_with_the_credentials_in_the_form_then_names_the_refusal() {
    let refuse = |_fresh: String| -> Answer {
        Arc::new(|r: &Received| match r.method.as_str() {
            "GET" => (
                200,
                json!({"token_endpoint": "https://127.0.0.1:PORT/idp/token"}).to_string(),
            ),
            _ => (
                400,
                json!({"error": "invalid_grant", "error_description": "refresh token revoked"})
                    .to_string(),
            ),
        })
    };
    let (server, pki, issuer_url, log, _fresh) = setup(refuse).await;
    let c = client(&server, &pki, &issuer_url, &jwt("alice", -60));
    let err = list_namespaces(&c).await.expect_err("no usable token");
    let chain = chain(&err);
    assert!(
        chain.contains("OIDC") && chain.contains("invalid_grant: refresh token revoked"),
        "{chain}"
    );
    assert!(
        !chain.contains("r1") && !chain.contains("se/cret"),
        "no secrets: {chain}"
    );
    let posts: Vec<Received> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.method == "POST")
        .cloned()
        .collect();
    assert_eq!(posts.len(), 2, "header first, then the form: {posts:?}");
    assert!(posts[0].authorization.is_some() && !posts[0].body.contains("client_id"));
    assert!(posts[1].authorization.is_none() && posts[1].body.contains("client_id=kubectl"));
    assert!(
        posts[1].body.contains("client_secret=se%2Fcret"),
        "{}",
        posts[1].body
    );
}

#[tokio::test]
async fn an_issuer_with_an_untrusted_certificate_is_refused() {
    let (server, _pki, issuer_url, log, _fresh) = setup(discovery_and_token).await;
    let other = Pki::new("someone-else");
    let c = client(&server, &other, &issuer_url, &jwt("alice", -60));
    let err = list_namespaces(&c)
        .await
        .expect_err("the issuer's certificate is not trusted");
    let chain = chain(&err);
    assert!(
        chain.contains("OIDC request to https://127.0.0.1"),
        "{chain}"
    );
    assert!(log.lock().unwrap().is_empty());
}
