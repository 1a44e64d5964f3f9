//! `auth-provider: gcp` with Google application default credentials
//! (feature `oauth`) over real sockets: a token endpoint of our own on
//! loopback, named by the credentials' `token_uri`, checks the service
//! account's signed JWT grant with the public half of the test key
//! (`config_fixtures/rsa.public.pkcs1.pem`, written by `openssl rsa
//! -RSAPublicKey_out` from `rsa.pkcs8.pem`) and hands out the token the
//! embedded API server accepts.
//!
//! The credentials are found through the environment
//! (`GOOGLE_APPLICATION_CREDENTIALS`, `HOME`), which a test cannot set in
//! its own process (the workspace forbids `unsafe`, and the other tests'
//! threads read it): each test runs this test binary again as a child
//! process, with the environment set, to run `adc_child`, and reads what
//! the child printed.

#[path = "config_fixtures/support.rs"]
mod support;

use std::{
    net::SocketAddr,
    path::Path,
    process::Command,
    sync::{Arc, Mutex},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use base64::Engine as _;
use kubeset_rest::{
    Error, RestClient,
    config::{Config, KubeConfigOptions},
};
use kubeset_testserver::TestServer;
use serde_json::{Value, json};
use support::{fixtures, write};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpListener,
};

/// The token the API server accepts.
const GOOD: &str = "ya29.service-account-token";
const EMAIL: &str = "deployer@project.iam.gserviceaccount.com";
/// How many requests the child makes (its environment).
const REQUESTS_VAR: &str = "KUBESET_GCP_CHILD_REQUESTS";
/// How long a child may take (the hanging endpoint's test takes 30 s).
const CHILD_DEADLINE: Duration = Duration::from_secs(180);

/// One request the token endpoint received.
#[derive(Debug, Clone)]
struct Received {
    path: String,
    form: Vec<(String, String)>,
}

impl Received {
    fn get(&self, key: &str) -> Option<&str> {
        self.form
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// What the endpoint answers to its `n`th request (from 0); `None`: never.
type Answer = Arc<dyn Fn(usize, &Received) -> Option<(u16, String)> + Send + Sync>;

/// A plain HTTP token endpoint on loopback that records each request.
async fn token_endpoint(answer: Answer) -> (SocketAddr, Arc<Mutex<Vec<Received>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = log.clone();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let (answer, seen) = (answer.clone(), seen.clone());
            tokio::spawn(async move {
                while let Some(received) = read_request(&mut tcp).await {
                    let n = {
                        let mut seen = seen.lock().unwrap();
                        seen.push(received.clone());
                        seen.len() - 1
                    };
                    let Some((status, body)) = answer(n, &received) else {
                        // Hold the connection open without answering.
                        let mut rest = Vec::new();
                        let _ = tcp.read_to_end(&mut rest).await;
                        return;
                    };
                    let response = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if tcp.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, log)
}

/// Reads one HTTP/1.1 request with a `content-length` form body.
async fn read_request(tcp: &mut (impl AsyncReadExt + Unpin)) -> Option<Received> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = tcp.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = tcp.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    }
    let form = url::form_urlencoded::parse(&buf[head_end..head_end + length])
        .into_owned()
        .collect();
    Some(Received {
        path: head.lines().next()?.split(' ').nth(1)?.to_owned(),
        form,
    })
}

/// Hands out `tokens[n]` (the last one after) with `expires_in`.
fn tokens(tokens: &'static [&'static str], expires_in: u64) -> Answer {
    Arc::new(move |n, _| {
        let token = tokens[n.min(tokens.len() - 1)];
        let body = json!({"access_token": token, "expires_in": expires_in, "token_type": "Bearer"});
        Some((200, body.to_string()))
    })
}

/// A service account's key file for the endpoint at `addr`.
fn service_account(addr: SocketAddr) -> String {
    let key = std::fs::read_to_string(fixtures().join("rsa.pkcs8.pem")).unwrap();
    json!({
        "type": "service_account",
        "project_id": "project",
        "private_key_id": "key-1",
        "private_key": key,
        "client_email": EMAIL,
        "client_id": "1234",
        "token_uri": format!("http://{addr}/token"),
    })
    .to_string()
}

/// A kubeconfig whose user is `auth-provider: gcp` with `config`;
/// `cluster` is the cluster's map.
fn kubeconfig(dir: &Path, cluster: &str, config: &str) -> std::path::PathBuf {
    let yaml = format!(
        "apiVersion: v1
kind: Config
current-context: c
contexts: [{{name: c, context: {{cluster: k, user: u}}}}]
clusters: [{{name: k, cluster: {cluster}}}]
users:
- {{name: u, user: {{auth-provider: {{name: gcp, config: {config}}}}}}}
"
    );
    write(dir, "kubeconfig", yaml)
}

/// Runs `adc_child` with `env` (nothing else of Google's or gcloud's
/// environment; `HOME` an empty directory unless set) making `requests`
/// requests; what each request gave, `OK` or `ERR <error chain>`.
async fn child(home: &Path, env: &[(&str, &Path)], requests: usize) -> Vec<String> {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--ignored", "--exact", "adc_child", "--nocapture"])
        .env_remove("GOOGLE_APPLICATION_CREDENTIALS")
        .env_remove("CLOUDSDK_CONFIG")
        .env("HOME", home)
        .env(REQUESTS_VAR, requests.to_string());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let output = tokio::time::timeout(
        CHILD_DEADLINE,
        tokio::task::spawn_blocking(move || cmd.output()),
    )
    .await
    .expect("the child ends within its deadline")
    .unwrap()
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results: Vec<String> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("GCP-CHILD "))
        .map(str::to_owned)
        .collect();
    assert_eq!(results.len(), requests, "{stdout}");
    results
}

/// The API server, the token endpoint, a temp dir with the kubeconfig
/// (`config` its provider's map) and the service account's key file.
struct Setup {
    _server: Option<TestServer>,
    dir: tempfile::TempDir,
    addr: SocketAddr,
    log: Arc<Mutex<Vec<Received>>>,
}

impl Setup {
    async fn new(answer: Answer, config: &str) -> Self {
        let server = TestServer::builder()
            .token(Some(GOOD.to_owned()))
            .start()
            .await
            .unwrap();
        let cluster = format!("{{server: '{}'}}", server.url());
        Self::with_cluster(Some(server), &cluster, answer, config).await
    }

    async fn with_cluster(
        server: Option<TestServer>,
        cluster: &str,
        answer: Answer,
        config: &str,
    ) -> Self {
        let (addr, log) = token_endpoint(answer).await;
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        kubeconfig(dir.path(), cluster, config);
        write(dir.path(), "sa.json", service_account(addr));
        Self {
            _server: server,
            dir,
            addr,
            log,
        }
    }

    /// The child with `KUBECONFIG` and `GOOGLE_APPLICATION_CREDENTIALS`
    /// pointing at the files here.
    async fn run_with_key_file(&self, requests: usize) -> Vec<String> {
        let (kubeconfig, key) = (
            self.dir.path().join("kubeconfig"),
            self.dir.path().join("sa.json"),
        );
        let env = [
            ("KUBECONFIG", kubeconfig.as_path()),
            ("GOOGLE_APPLICATION_CREDENTIALS", key.as_path()),
        ];
        child(&self.dir.path().join("home"), &env, requests).await
    }

    fn received(&self) -> Vec<Received> {
        self.log.lock().unwrap().clone()
    }
}

fn b64url_decode(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .unwrap()
}

/// Checks `assertion`'s RS256 signature with the test key's public half
/// and returns its header and claims.
fn verified(assertion: &str) -> (Value, Value) {
    let pem = std::fs::read_to_string(fixtures().join("rsa.public.pkcs1.pem")).unwrap();
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap();
    let (input, signature) = assertion.rsplit_once('.').unwrap();
    ring::signature::UnparsedPublicKey::new(&ring::signature::RSA_PKCS1_2048_8192_SHA256, der)
        .verify(input.as_bytes(), &b64url_decode(signature))
        .expect("the signature verifies with the public key");
    let (head, claims) = input.split_once('.').unwrap();
    (
        serde_json::from_slice(&b64url_decode(head)).unwrap(),
        serde_json::from_slice(&b64url_decode(claims)).unwrap(),
    )
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test]
async fn a_service_accounts_signed_grant_is_verified_and_its_token_reaches_the_api_server() {
    let setup = Setup::new(tokens(&[GOOD], 3600), "{scopes: 'scope-a,scope-b'}").await;
    let before = unix_now();
    let results = setup.run_with_key_file(2).await;
    let after = unix_now();
    assert_eq!(results, ["OK", "OK"], "the token is accepted, then kept");
    let received = setup.received();
    assert_eq!(received.len(), 1, "one grant for both requests");
    let grant = &received[0];
    assert_eq!(grant.path, "/token");
    assert_eq!(
        grant.get("grant_type"),
        Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
    );
    let (head, claims) = verified(grant.get("assertion").expect("an assertion"));
    assert_eq!(head, json!({"alg": "RS256", "typ": "JWT", "kid": "key-1"}));
    assert_eq!(claims["iss"], EMAIL);
    assert_eq!(claims["scope"], "scope-a scope-b");
    assert_eq!(claims["aud"], format!("http://{}/token", setup.addr));
    let iat = claims["iat"].as_u64().unwrap();
    assert!(
        (before..=after).contains(&iat),
        "{before} <= {iat} <= {after}"
    );
    assert_eq!(claims["exp"].as_u64(), Some(iat + 3600));
}

#[tokio::test]
async fn without_scopes_client_gos_defaults_are_asked_for() {
    let setup = Setup::new(tokens(&[GOOD], 3600), "{}").await;
    assert_eq!(setup.run_with_key_file(1).await, ["OK"]);
    let (_, claims) = verified(setup.received()[0].get("assertion").unwrap());
    assert_eq!(
        claims["scope"],
        "https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/userinfo.email"
    );
}

#[tokio::test]
async fn a_token_near_its_expiry_is_fetched_again() {
    // 5 s is within the 10 s margin: each request needs a new token.
    let setup = Setup::new(tokens(&[GOOD], 5), "{}").await;
    assert_eq!(setup.run_with_key_file(3).await, ["OK", "OK", "OK"]);
    assert_eq!(setup.received().len(), 3);
}

#[tokio::test]
async fn a_401_fetches_a_new_token_before_its_expiry() {
    let setup = Setup::new(tokens(&["ya29.revoked", GOOD], 3600), "{}").await;
    let results = setup.run_with_key_file(2).await;
    // The first request's retry or the second request has the new token.
    assert!(
        results[0] == "OK" || results[0].contains("401") || results[0].contains("Unauthorized"),
        "{results:?}"
    );
    assert_eq!(results[1], "OK");
    assert_eq!(setup.received().len(), 2);
}

#[tokio::test]
async fn gclouds_authorized_user_file_is_found_under_home_and_its_refresh_token_used() {
    let setup = Setup::new(tokens(&[GOOD], 3600), "{}").await;
    let home = setup.dir.path().join("home");
    let gcloud = home.join(".config").join("gcloud");
    std::fs::create_dir_all(&gcloud).unwrap();
    let file = json!({
        "type": "authorized_user",
        "client_id": "test-client.apps.googleusercontent.com",
        "client_secret": "test-client-secret",
        "refresh_token": "1//refresh",
        "token_uri": format!("http://{}/token", setup.addr),
    });
    write(
        &gcloud,
        "application_default_credentials.json",
        file.to_string(),
    );
    let kubeconfig = setup.dir.path().join("kubeconfig");
    let results = child(&home, &[("KUBECONFIG", kubeconfig.as_path())], 1).await;
    assert_eq!(results, ["OK"]);
    let received = setup.received();
    assert_eq!(received.len(), 1);
    let grant = &received[0];
    assert_eq!(grant.get("grant_type"), Some("refresh_token"));
    assert_eq!(grant.get("refresh_token"), Some("1//refresh"));
    assert_eq!(
        grant.get("client_id"),
        Some("test-client.apps.googleusercontent.com")
    );
    assert_eq!(grant.get("client_secret"), Some("test-client-secret"));
}

#[tokio::test]
async fn no_credentials_anywhere_is_named_with_where_they_were_looked_for() {
    let setup = Setup::new(tokens(&[GOOD], 3600), "{}").await;
    let home = setup.dir.path().join("home");
    let kubeconfig = setup.dir.path().join("kubeconfig");
    let results = child(&home, &[("KUBECONFIG", kubeconfig.as_path())], 1).await;
    let expected = format!(
        "auth-provider gcp: application default credentials: none found: \
         GOOGLE_APPLICATION_CREDENTIALS is not set and {} does not exist",
        home.join(".config/gcloud/application_default_credentials.json")
            .display()
    );
    assert!(results[0].contains(&expected), "{results:?}");
    assert!(
        results[0].contains("metadata server is not asked"),
        "{results:?}"
    );
    assert!(setup.received().is_empty());
}

#[tokio::test]
async fn a_credentials_file_of_another_type_is_named() {
    let setup = Setup::new(tokens(&[GOOD], 3600), "{}").await;
    let file = json!({"type": "external_account", "audience": "//iam.googleapis.com/x"});
    let key = write(setup.dir.path(), "sa.json", file.to_string());
    let results = setup.run_with_key_file(1).await;
    let expected = format!(
        "auth-provider gcp: {}: type \"external_account\" is not supported",
        key.display()
    );
    assert!(results[0].contains(&expected), "{results:?}");
    assert!(setup.received().is_empty());
}

#[tokio::test]
async fn a_credentials_file_that_cannot_be_read_is_named() {
    let setup = Setup::new(tokens(&[GOOD], 3600), "{}").await;
    let missing = setup.dir.path().join("deleted.json");
    let kubeconfig = setup.dir.path().join("kubeconfig");
    let env = [
        ("KUBECONFIG", kubeconfig.as_path()),
        ("GOOGLE_APPLICATION_CREDENTIALS", missing.as_path()),
    ];
    let results = child(&setup.dir.path().join("home"), &env, 1).await;
    let expected = format!(
        "user \"u\" in {}: auth-provider gcp: {}: cannot be read (",
        kubeconfig.display(),
        missing.display()
    );
    assert!(results[0].contains(&expected), "{results:?}");
    assert!(setup.received().is_empty());
}

#[tokio::test]
async fn a_token_endpoint_answering_500_is_named_with_the_oauth_error_only() {
    let answer: Answer = Arc::new(|_, _| {
        let body = json!({"error": "internal_failure", "error_description": "try later", "echo": "s3cret"});
        Some((500, body.to_string()))
    });
    let setup = Setup::new(answer, "{}").await;
    let results = setup.run_with_key_file(1).await;
    let expected = format!(
        "auth-provider gcp: http://{}/token: status 500 Internal Server Error, internal_failure: try later",
        setup.addr
    );
    assert!(results[0].contains(&expected), "{results:?}");
    assert!(!results[0].contains("s3cret"), "{results:?}");
}

#[tokio::test]
async fn a_token_endpoint_that_never_answers_is_given_up_on() {
    let setup = Setup::new(Arc::new(|_, _| None), "{}").await;
    let results = setup.run_with_key_file(1).await;
    let expected = format!(
        "auth-provider gcp: request to http://{}/token failed",
        setup.addr
    );
    assert!(results[0].contains(&expected), "{results:?}");
    assert_eq!(setup.received().len(), 1);
}

/// The `KUBESET_REALKUBE_*` settings of the instance named by
/// `KUBESET_REALKUBE_ENV` (the env file `realkube.sh start` writes, read
/// as bash reads it), `None` when it is not set.
fn realkube_env() -> Option<std::collections::BTreeMap<String, String>> {
    let path = std::env::var_os("KUBESET_REALKUBE_ENV")?;
    let out = Command::new("bash")
        .args(["-c", ". \"$1\" && env -0", "realkube-env"])
        .arg(&path)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(
        out.stdout
            .split(|b| *b == 0)
            .filter_map(|kv| std::str::from_utf8(kv).ok()?.split_once('='))
            .filter(|(k, _)| k.starts_with("KUBESET_REALKUBE_"))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
    )
}

#[tokio::test]
async fn on_realkube_a_service_accounts_token_is_accepted_and_renewed_after_a_401() {
    let Some(env) = realkube_env() else {
        eprintln!("KUBESET_REALKUBE_ENV is not set: the embedded server's tests above cover this");
        return;
    };
    // The static token of realkube's `kubeset-tester-token` (cluster-admin)
    // stands for the token Google would hand out; the first is refused.
    let user_token = env["KUBESET_REALKUBE_USER_TOKEN"].clone();
    let answer: Answer = Arc::new(move |n, _| {
        let token = if n == 0 { "ya29.revoked" } else { &user_token };
        Some((
            200,
            json!({"access_token": token, "expires_in": 3600}).to_string(),
        ))
    });
    let cluster = format!(
        "{{server: '{}', certificate-authority: '{}'}}",
        env["KUBESET_REALKUBE_SERVERS"].split(',').next().unwrap(),
        env["KUBESET_REALKUBE_CA"]
    );
    let setup = Setup::with_cluster(None, &cluster, answer, "{}").await;
    let results = setup.run_with_key_file(2).await;
    assert!(
        results[0] == "OK" || results[0].contains("401") || results[0].contains("Unauthorized"),
        "{results:?}"
    );
    assert_eq!(results[1], "OK");
    assert_eq!(setup.received().len(), 2);
    verified(setup.received()[1].get("assertion").unwrap());
}

/// The child process of the tests above: loads the kubeconfig the way a
/// program does (`KUBECONFIG`, then the credentials through the
/// environment the parent set) and prints one line per request.
#[test]
#[ignore = "the child process of this file's tests, which set its environment"]
fn adc_child() {
    let requests: usize = std::env::var(REQUESTS_VAR)
        .expect("run by this file's tests, with its environment set")
        .parse()
        .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let config = Config::from_kubeconfig(&KubeConfigOptions::default())
            .await
            .unwrap();
        let client =
            RestClient::new(config.rest_config().unwrap().with_qps_burst(-1.0, 0)).unwrap();
        for _ in 0..requests {
            let result: Result<Value, Error> =
                client.get().resource("namespaces").send_json().await;
            match result {
                Ok(_) => println!("GCP-CHILD OK"),
                Err(e) => println!("GCP-CHILD ERR {}", chain(&e)),
            }
        }
    });
}

/// The error and its causes, one line.
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(&format!(" / {s}"));
        source = s.source();
    }
    text
}
