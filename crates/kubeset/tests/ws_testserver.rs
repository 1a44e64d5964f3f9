//! exec, attach and port-forward through kubeset's own client against the
//! embedded server's simulated runtime, over real sockets (TLS and a
//! bearer token where it matters).

use std::time::Duration;

use kubeset::api::core::v1::Pod;
use kubeset::rest::config::{Config, KubeConfigOptions, Kubeconfig};
use kubeset::rest::ws::UpgradeError;
use kubeset::rest::{RestClient, RestConfig};
use kubeset::ws::{AttachParams, TerminalSize, exit_code};
use kubeset::{Api, Client, Error};
use kubeset_testserver::TestServer;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Generous bound for anything a busy CI machine does.
const DEADLINE: Duration = Duration::from_secs(60);

async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(DEADLINE, f)
        .await
        .expect("within the deadline")
}

fn pod(name: &str, node: Option<&str>) -> serde_json::Value {
    let mut p = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{
            "name": "main", "image": "x", "command": ["cat"], "stdin": true, "stdinOnce": true,
            "env": [{"name": "GREETING", "value": "hello"}],
            "ports": [{"name": "http", "containerPort": 8080}, {"containerPort": 7}],
        }, {"name": "side", "image": "y"}]},
    });
    if let Some(n) = node {
        p["spec"]["nodeName"] = json!(n);
    }
    p
}

async fn setup() -> (TestServer, Api<Pod>) {
    let server = TestServer::builder()
        .container_runtime(true)
        .start()
        .await
        .expect("server starts");
    server.create(pod("web", Some("node-1"))).expect("pod");
    server.create(pod("pending", None)).expect("pod");
    let rest =
        RestClient::new(RestConfig::new(server.url()).with_qps_burst(-1.0, 0)).expect("client");
    (
        server,
        Api::default_namespaced(Client::new(rest, "default")),
    )
}

fn main_container() -> AttachParams {
    AttachParams::default().container("main")
}

async fn read_all(r: Option<impl tokio::io::AsyncRead + Unpin>) -> String {
    let mut s = String::new();
    r.expect("pipe").read_to_string(&mut s).await.expect("read");
    s
}

#[tokio::test]
async fn exec_stdout_stderr_and_exit_codes() {
    let (_server, pods) = setup().await;
    let mut p = within(pods.exec("web", ["echo", "hi", "there"], &main_container()))
        .await
        .unwrap();
    assert_eq!(within(read_all(p.stdout())).await, "hi there\n");
    let status = within(p.take_status().unwrap()).await.expect("a status");
    assert_eq!(exit_code(&status), Some(0));
    within(p.join()).await.unwrap();

    let mut p = within(pods.exec(
        "web",
        ["sh", "-c", "echo out; nope; exit 3"],
        &main_container(),
    ))
    .await
    .unwrap();
    let (out, err) = (p.stdout(), p.stderr());
    let (out, err) = within(async { tokio::join!(read_all(out), read_all(err)) }).await;
    assert_eq!(out, "out\n");
    assert!(err.contains("\"nope\": executable file not found"), "{err}");
    let status = within(p.take_status().unwrap()).await.expect("a status");
    assert_eq!(status.reason.as_deref(), Some("NonZeroExitCode"));
    assert_eq!(exit_code(&status), Some(3));

    let mut p = within(pods.exec("web", ["env"], &main_container()))
        .await
        .unwrap();
    let env = within(read_all(p.stdout())).await;
    assert!(
        env.contains("GREETING=hello\n") && env.contains("HOSTNAME=web\n"),
        "{env}"
    );
}

#[tokio::test]
async fn exec_with_stdin_closes_it_on_v5() {
    let (_server, pods) = setup().await;
    let mut p = within(pods.exec("web", ["cat"], &main_container().stdin(true)))
        .await
        .unwrap();
    let mut stdin = p.stdin().unwrap();
    let out = p.stdout();
    let reader = tokio::spawn(read_all(out));
    stdin.write_all(b"line one\nline two\n").await.unwrap();
    stdin.shutdown().await.unwrap();
    drop(stdin);
    assert_eq!(within(reader).await.unwrap(), "line one\nline two\n");
    assert_eq!(
        within(p.take_status().unwrap())
            .await
            .as_ref()
            .and_then(exit_code),
        Some(0)
    );
}

#[tokio::test]
async fn attach_runs_the_container_command() {
    let (_server, pods) = setup().await;
    let mut p = within(pods.attach("web", &main_container().stdin(true)))
        .await
        .unwrap();
    let mut stdin = p.stdin().unwrap();
    let reader = tokio::spawn(read_all(p.stdout()));
    stdin.write_all(b"attached\n").await.unwrap();
    drop(stdin);
    assert_eq!(within(reader).await.unwrap(), "attached\n");
    within(p.join()).await.unwrap();
}

#[tokio::test]
async fn tty_resize_reaches_the_command() {
    let (_server, pods) = setup().await;
    let ap = AttachParams::interactive_tty().container("main");
    let mut p = within(pods.exec("web", ["sh"], &ap)).await.unwrap();
    assert!(p.stderr().is_none(), "a TTY merges stderr into stdout");
    let sizes = p.terminal_size().expect("a TTY has a size channel");
    let mut stdin = p.stdin().unwrap();
    let mut out = p.stdout().unwrap();
    let mut seen = String::new();
    for (w, h) in [(80u16, 24u16), (132, 43)] {
        sizes
            .send(TerminalSize {
                width: w,
                height: h,
            })
            .await
            .unwrap();
        stdin.write_all(b"stty size\n").await.unwrap();
        let want = format!("{h} {w}\n");
        within(async {
            let mut buf = [0u8; 256];
            while !seen.ends_with(&want) {
                let n = out.read(&mut buf).await.unwrap();
                assert!(n > 0, "stdout ended early: {seen:?}");
                seen.push_str(std::str::from_utf8(&buf[..n]).unwrap());
            }
        })
        .await;
    }
    stdin.write_all(b"exit 7\n").await.unwrap();
    let status = within(p.take_status().unwrap()).await.expect("a status");
    assert_eq!(exit_code(&status), Some(7));
}

#[tokio::test]
async fn refusals_are_api_errors() {
    let (_server, pods) = setup().await;
    let err = pods
        .exec("pending", ["echo"], &main_container())
        .await
        .unwrap_err();
    let api = err.api_error().expect("an API error");
    assert_eq!(
        (api.code, api.message.as_str()),
        (400, "pod pending does not have a host assigned")
    );
    let err = pods
        .exec("ghost", ["echo"], &main_container())
        .await
        .unwrap_err();
    assert!(err.api_error().is_some_and(|e| e.is_not_found()), "{err:?}");
    let err = pods
        .exec("web", ["echo"], &AttachParams::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.api_error().map(|e| e.message.as_str()),
        Some("a container name must be specified for pod web, choose one of: [main side]")
    );
}

/// A `cat` that answered once: the process, its stdin and its stdout.
async fn live_cat(
    pods: &Api<Pod>,
) -> (
    kubeset::ws::AttachedProcess,
    impl tokio::io::AsyncWrite + Unpin,
    impl tokio::io::AsyncRead + Unpin,
) {
    let mut p = within(pods.exec("web", ["cat"], &main_container().stdin(true)))
        .await
        .unwrap();
    let mut stdin = p.stdin().unwrap();
    let mut out = p.stdout().unwrap();
    stdin.write_all(b"ping\n").await.unwrap();
    let mut buf = [0u8; 5];
    within(out.read_exact(&mut buf)).await.unwrap();
    assert_eq!(&buf, b"ping\n");
    (p, stdin, out)
}

#[tokio::test]
async fn a_server_that_goes_away_fails_the_stream() {
    let (server, pods) = setup().await;
    let (mut p, _stdin, mut out) = live_cat(&pods).await;
    let status = p.take_status().unwrap();
    server.shutdown().await;
    assert_eq!(within(status).await, None, "no status from a dead server");
    let err = within(p.join()).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Upgrade {
                source: UpgradeError::Closed | UpgradeError::WebSocket { .. }
            }
        ),
        "{err:?}"
    );
    let mut rest = Vec::new();
    assert_eq!(
        within(out.read_to_end(&mut rest)).await.unwrap(),
        0,
        "stdout ends"
    );
}

#[tokio::test]
async fn port_forward_http_echo_and_refused() {
    let (_server, pods) = setup().await;
    let mut pf = within(pods.portforward("web", &[8080, 7, 9]))
        .await
        .unwrap();
    let mut http = pf.take_stream(8080).unwrap();
    http.write_all(b"GET / HTTP/1.1\r\nHost: pod\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    within(async {
        let mut buf = [0u8; 1024];
        while !answer.ends_with(b"hello from port 8080\n") {
            let n = http.read(&mut buf).await.unwrap();
            assert!(n > 0);
            answer.extend_from_slice(&buf[..n]);
        }
    })
    .await;
    assert!(answer.starts_with(b"HTTP/1.1 200 OK\r\n"));

    let mut echo = pf.take_stream(7).unwrap();
    echo.write_all(b"echo me").await.unwrap();
    let mut buf = [0u8; 7];
    within(echo.read_exact(&mut buf)).await.unwrap();
    assert_eq!(&buf, b"echo me");

    let mut nine = pf.take_stream(9).unwrap();
    let err = pf.take_error(9).unwrap();
    nine.write_all(b"x").await.unwrap();
    let msg = within(err)
        .await
        .expect("an error for a port nothing listens on");
    assert!(msg.contains("connection refused"), "{msg}");
    drop((http, echo, nine));
    within(pf.join()).await.unwrap();
}

#[tokio::test]
async fn exec_over_tls_with_a_bearer_token() {
    let server = TestServer::builder()
        .container_runtime(true)
        .tls(true)
        .token(Some(kubeset_testserver::generate_token()))
        .start()
        .await
        .unwrap();
    server.create(pod("web", Some("node-1"))).unwrap();
    let kc = Kubeconfig::from_yaml(&server.kubeconfig_yaml()).unwrap();
    let config = Config::from_custom_kubeconfig_sync(kc, &KubeConfigOptions::default()).unwrap();
    let pods: Api<Pod> = Api::default_namespaced(Client::try_from_config(&config).unwrap());
    let mut p = within(pods.exec("web", ["echo", "secure"], &main_container()))
        .await
        .unwrap();
    assert_eq!(within(read_all(p.stdout())).await, "secure\n");

    // Without the token: the server's 401, before any upgrade.
    let mut anon = config.clone();
    anon.authenticator = None;
    let pods: Api<Pod> = Api::default_namespaced(Client::try_from_config(&anon).unwrap());
    let err = within(pods.exec("web", ["echo"], &main_container()))
        .await
        .unwrap_err();
    assert_eq!(err.api_error().map(|e| e.code), Some(401), "{err:?}");
}

#[tokio::test]
async fn a_stream_opens_on_the_next_endpoint_when_one_is_down() {
    let server = TestServer::builder()
        .replicas(2)
        .container_runtime(true)
        .start()
        .await
        .unwrap();
    server.create(pod("web", Some("node-1"))).unwrap();
    let urls = server.urls();
    server.faults(0).unwrap().down().await;
    let rest = RestClient::new(
        RestConfig::new(urls[0].clone())
            .with_endpoints([urls[1].clone()])
            .with_qps_burst(-1.0, 0),
    )
    .unwrap();
    let pods: Api<Pod> = Api::default_namespaced(Client::new(rest, "default"));
    let mut p = within(pods.exec("web", ["echo", "failed over"], &main_container()))
        .await
        .unwrap();
    assert_eq!(within(read_all(p.stdout())).await, "failed over\n");
    assert_eq!(
        server.faults(1).unwrap().requests_served(),
        1,
        "replica 1 served the upgrade"
    );
}

/// A one-shot scripted server: answers the upgrade with `protocol` (or
/// none), then writes `frames` (server frames are unmasked) and closes.
async fn scripted(protocol: Option<&'static str>, frames: Vec<Vec<u8>>) -> String {
    use kubeset::rest::ws::tungstenite::handshake::derive_accept_key;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            sock.read_exact(&mut byte).await.unwrap();
            head.push(byte[0]);
        }
        let head = String::from_utf8(head).unwrap();
        let key = head
            .lines()
            .find_map(|l| {
                l.strip_prefix("sec-websocket-key: ")
                    .or_else(|| l.strip_prefix("Sec-WebSocket-Key: "))
            })
            .expect("a key")
            .trim()
            .to_owned();
        let mut answer = format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n",
            derive_accept_key(key.as_bytes())
        );
        if let Some(p) = protocol {
            answer.push_str(&format!("Sec-WebSocket-Protocol: {p}\r\n"));
        }
        answer.push_str("\r\n");
        sock.write_all(answer.as_bytes()).await.unwrap();
        for f in frames {
            sock.write_all(&f).await.unwrap();
        }
        sock.shutdown().await.ok();
    });
    url
}

/// An unmasked binary frame on `channel`.
fn binary(channel: u8, data: &[u8]) -> Vec<u8> {
    let len = data.len() + 1;
    assert!(len < 126);
    let mut f = vec![0x82, len as u8, channel];
    f.extend_from_slice(data);
    f
}

fn scripted_pods(url: String) -> Api<Pod> {
    let rest = RestClient::new(RestConfig::new(url).with_qps_burst(-1.0, 0)).unwrap();
    Api::default_namespaced(Client::new(rest, "default"))
}

#[tokio::test]
async fn a_v4_only_server_is_spoken_to_in_v4() {
    let status = br#"{"metadata":{},"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"5"}]}}"#;
    let url = scripted(
        Some("v4.channel.k8s.io"),
        vec![
            binary(1, b"v4 out"),
            binary(3, status),
            vec![0x88, 0x02, 0x03, 0xe8],
        ],
    )
    .await;
    let mut p = within(scripted_pods(url).exec("p", ["x"], &AttachParams::default()))
        .await
        .unwrap();
    assert_eq!(within(read_all(p.stdout())).await, "v4 out");
    let status = within(p.take_status().unwrap()).await.expect("a status");
    assert_eq!(exit_code(&status), Some(5));
    within(p.join()).await.unwrap();
}

#[tokio::test]
async fn protocol_violations_are_errors() {
    // No subprotocol chosen: refused, not guessed.
    let url = scripted(None, vec![]).await;
    let err = within(scripted_pods(url).exec("p", ["x"], &AttachParams::default()))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Upgrade {
                source: UpgradeError::Protocol { chosen: None, .. }
            }
        ),
        "{err:?}"
    );
    // Output, then the socket closes without a status: the stream failed.
    let url = scripted(Some("v5.channel.k8s.io"), vec![binary(1, b"partial")]).await;
    let mut p = within(scripted_pods(url).exec("p", ["x"], &AttachParams::default()))
        .await
        .unwrap();
    assert_eq!(within(read_all(p.stdout())).await, "partial");
    assert_eq!(within(p.take_status().unwrap()).await, None);
    let err = within(p.join()).await.unwrap_err();
    assert!(matches!(err, Error::Upgrade { .. }), "{err:?}");
}

#[tokio::test]
async fn a_replica_taken_down_ends_its_streams() {
    let (server, pods) = setup().await;
    let (p, _stdin, mut out) = live_cat(&pods).await;
    server.faults(0).unwrap().down().await;
    let err = within(p.join()).await.unwrap_err();
    assert!(matches!(err, Error::Upgrade { .. }), "{err:?}");
    let mut rest = Vec::new();
    assert_eq!(within(out.read_to_end(&mut rest)).await.unwrap(), 0);
}

/// Hands out a wrong token and counts the invalidations.
#[derive(Debug, Default)]
struct WrongToken {
    invalidated: std::sync::atomic::AtomicUsize,
}

impl kubeset::rest::auth::Authenticator for WrongToken {
    fn authorization(&self) -> kubeset::rest::auth::AuthFuture<'_> {
        Box::pin(async { Ok(Some(http::HeaderValue::from_static("Bearer wrong"))) })
    }
    fn invalidate(&self) {
        self.invalidated
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[tokio::test]
async fn a_401_refreshes_the_credentials_and_is_not_retried() {
    let server = TestServer::builder()
        .container_runtime(true)
        .token(Some("right".into()))
        .start()
        .await
        .unwrap();
    server.create(pod("web", Some("node-1"))).unwrap();
    let auth = std::sync::Arc::new(WrongToken::default());
    let rest = RestClient::new(
        RestConfig::new(server.url())
            .with_authenticator(auth.clone())
            .with_qps_burst(-1.0, 0),
    )
    .unwrap();
    let pods: Api<Pod> = Api::default_namespaced(Client::new(rest, "default"));
    let err = within(pods.exec("web", ["echo"], &main_container()))
        .await
        .unwrap_err();
    assert_eq!(err.api_error().map(|e| e.code), Some(401), "{err:?}");
    assert_eq!(
        auth.invalidated.load(std::sync::atomic::Ordering::SeqCst),
        1
    );
    assert_eq!(
        server.faults(0).unwrap().requests_served(),
        1,
        "one attempt"
    );
}

#[tokio::test]
async fn attaches_share_the_main_process() {
    let (server, pods) = setup().await;
    server
        .create(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "shared", "namespace": "default"},
            "spec": {"nodeName": "n", "containers": [
                {"name": "c", "image": "x", "command": ["cat"], "stdin": true}]}}))
        .unwrap();
    let ap = AttachParams::default();
    let mut writer = within(pods.attach("shared", &ap.clone().stdin(true)))
        .await
        .unwrap();
    let mut watcher = within(pods.attach("shared", &ap)).await.unwrap();
    let mut stdin = writer.stdin().unwrap();
    let mut seen = watcher.stdout().unwrap();
    // The watcher subscribes once its upgrade is served: write until it
    // sees a line (output from before an attach is not replayed).
    async fn until_seen(
        stdin: &mut (impl tokio::io::AsyncWrite + Unpin),
        seen: &mut (impl tokio::io::AsyncRead + Unpin),
        line: &str,
    ) {
        within(async {
            let mut got = String::new();
            let mut buf = [0u8; 256];
            while !got.contains(line) {
                stdin.write_all(line.as_bytes()).await.unwrap();
                let n = tokio::time::timeout(Duration::from_millis(200), seen.read(&mut buf)).await;
                if let Ok(n) = n {
                    let n = n.unwrap();
                    assert!(n > 0, "the watcher's stdout ended");
                    got.push_str(std::str::from_utf8(&buf[..n]).unwrap());
                }
            }
        })
        .await;
    }
    until_seen(&mut stdin, &mut seen, "first\n").await;
    // Not stdinOnce: the writer leaving does not end the process; a new
    // attach writes to the same one, which the watcher still reads.
    drop(stdin);
    drop(writer);
    let mut again = within(pods.attach("shared", &ap.clone().stdin(true)))
        .await
        .unwrap();
    let mut stdin = again.stdin().unwrap();
    until_seen(&mut stdin, &mut seen, "second\n").await;
    drop(watcher);
}
