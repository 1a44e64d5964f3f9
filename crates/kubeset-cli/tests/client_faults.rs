//! The built binary against hostile servers, issue 29's client items: a
//! `Status` failure in a 200 answer, a WebSocket upgrade that never comes
//! (bounded by `--request-timeout`), port-forward streams that break the
//! channel protocol. Each server is a raw loopback server written here.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::*;
use kubeset::rest::ws::tungstenite::handshake::derive_accept_key;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Reads an HTTP request head; `None` at EOF.
async fn head(sock: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if sock.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        buf.push(byte[0]);
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// What the server does with a WebSocket upgrade.
#[derive(Clone)]
enum Upgrade {
    /// Never answers.
    Silent,
    /// Answers 101 (`v4.channel.k8s.io`), writes these bytes, then closes
    /// the connection (`true`) or holds it.
    Script(Vec<u8>, bool),
}

/// A server answering plain requests with `route(path)` (status, JSON
/// body; keep-alive) and upgrades as `upgrade` says.
async fn routed(
    route: fn(&str) -> (u16, String),
    upgrade: Upgrade,
) -> (String, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            tokio::spawn(connection(sock, route, upgrade.clone()));
        }
    });
    (url, task)
}

async fn connection(mut sock: TcpStream, route: fn(&str) -> (u16, String), upgrade: Upgrade) {
    while let Some(req) = head(&mut sock).await {
        if header(&req, "upgrade").is_some_and(|u| u.eq_ignore_ascii_case("websocket")) {
            let Upgrade::Script(script, close) = upgrade else {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return;
            };
            let key = header(&req, "sec-websocket-key").unwrap_or("");
            let answer = format!(
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                 Sec-WebSocket-Accept: {}\r\nSec-WebSocket-Protocol: v4.channel.k8s.io\r\n\r\n",
                derive_accept_key(key.as_bytes())
            );
            let _ = sock.write_all(answer.as_bytes()).await;
            let _ = sock.write_all(&script).await;
            if !close {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            return;
        }
        let path = req.split_whitespace().nth(1).unwrap_or("/").to_owned();
        let (status, body) = route(&path);
        let answer = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if sock.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
    }
}

const FAILURE: &str = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcdserver: request timed out","reason":"InternalError","code":500}"#;

/// Discovery of one resource (configmaps), a pod `p`, and a `Status`
/// failure with code 200 for the configmap list.
fn cluster(path: &str) -> (u16, String) {
    let path = path.split('?').next().unwrap_or(path);
    let body = match path {
        "/api" => r#"{"kind":"APIVersions","versions":["v1"]}"#,
        "/apis" => r#"{"kind":"APIGroupList","apiVersion":"v1","groups":[]}"#,
        "/api/v1" => {
            r#"{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["get","list"],"shortNames":["cm"]}]}"#
        }
        "/api/v1/namespaces/default/configmaps" => FAILURE,
        "/api/v1/namespaces/default/pods/p" => {
            r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default"},"spec":{"containers":[{"name":"c","image":"i"}]}}"#
        }
        _ => return (404, r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"NotFound","code":404,"message":"not here"}"#.to_owned()),
    };
    (200, body.to_owned())
}

fn args(url: &str, rest: &[&str]) -> Vec<String> {
    let mut all = vec!["--server", url, "--request-timeout", "2s"];
    all.extend_from_slice(rest);
    all.into_iter().map(str::to_owned).collect()
}

/// A `Status` failure answered with 200 is the error for every output
/// form, as kubectl reports it: nothing on stdout, exit 1. Before, `-o
/// json|yaml|name` printed an empty list and exited 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_failure_in_a_200_list_fails_every_output() {
    let (url, task) = routed(cluster, Upgrade::Silent).await;
    for output in [
        &[][..],
        &["-o", "json"],
        &["-o", "yaml"],
        &["-o", "name"],
        &["-o", "wide"],
    ] {
        let mut rest = vec!["get", "configmaps"];
        rest.extend_from_slice(output);
        let run = tokio::time::timeout(TIMEOUT, run_raw(args(&url, &rest)))
            .await
            .expect("hang guard");
        assert_eq!(run.stdout, "", "{output:?}");
        let line = run.fails(1);
        assert_eq!(
            line, "Error from server (InternalError): etcdserver: request timed out",
            "{output:?}"
        );
    }
    task.abort();
}

/// `--request-timeout` bounds the WebSocket upgrade of exec, attach and
/// port-forward (the error names it); before, a fixed 30 s did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_timeout_bounds_the_stream_upgrades() {
    let (url, task) = routed(cluster, Upgrade::Silent).await;
    for rest in [
        &["exec", "p", "-c", "c", "--", "true"][..],
        &["attach", "p", "-c", "c"],
    ] {
        let run = tokio::time::timeout(TIMEOUT, run_raw(args(&url, rest)))
            .await
            .expect("the upgrade must end at --request-timeout");
        let line = run.fails(1);
        assert!(
            line.contains("no upgrade answer") && line.contains("within 2s"),
            "{line}"
        );
    }
    let line = port_forward_error(&url, |line| line.contains("no upgrade answer")).await;
    assert!(line.contains("within 2s"), "{line}");
    task.abort();
}

/// Starts `port-forward p :80`, connects to the local port, reads to EOF,
/// and returns the first stderr line `want` accepts.
async fn port_forward_error(url: &str, want: fn(&str) -> bool) -> String {
    let refs = args(url, &["port-forward", "p", ":80"]);
    let refs: Vec<&str> = refs.iter().map(String::as_str).collect();
    let mut child = command(&refs)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stderr = lines(child.stderr.take().unwrap());
    let stdout = lines(child.stdout.take().unwrap());
    let result = tokio::task::block_in_place(|| exchange(&stdout, &stderr, want));
    kill(&mut child);
    result
}

fn lines(from: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

fn exchange(
    stdout: &mpsc::Receiver<String>,
    stderr: &mpsc::Receiver<String>,
    want: fn(&str) -> bool,
) -> String {
    let first = stdout.recv_timeout(TIMEOUT).expect("Forwarding from …");
    let addr = first
        .strip_prefix("Forwarding from ")
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("{first}"))
        .to_owned();
    let mut conn = std::net::TcpStream::connect(&addr).expect("connect to the forward");
    conn.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut got = Vec::new();
    let _ = conn.read_to_end(&mut got);
    drop(conn);
    let mut seen = Vec::new();
    loop {
        let line = stderr
            .recv_timeout(TIMEOUT)
            .unwrap_or_else(|_| panic!("no error line; stderr so far: {seen:?}"));
        if want(&line) {
            assert!(!line.contains("panicked"), "{line}");
            return line;
        }
        seen.push(line);
    }
}

/// An unmasked server frame: FIN, `opcode`, `payload` (short).
fn frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let len = u8::try_from(payload.len())
        .ok()
        .filter(|n| *n < 126)
        .expect("short");
    [&[0x80 | opcode, len][..], payload].concat()
}

/// A hostile port-forward: what the server writes after the 101, whether it
/// then closes the connection, and the error line wanted.
type Case = (Vec<u8>, bool, fn(&str) -> bool);

/// Port-forward streams that break the protocol end with a line naming
/// what was wrong; before, the connection just closed, with no message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn port_forward_reports_hostile_streams() {
    let open = frame(2, &[0, 80, 0]);
    let mut oversized = vec![0x82, 127];
    oversized.extend_from_slice(&(8u64 << 20).to_be_bytes());
    let cases: [Case; 5] = [
        ([open.clone(), frame(2, &[7, 1])].concat(), false, |l| {
            l.contains("channel 7")
        }),
        ([open.clone(), frame(2, &[1, 80])].concat(), false, |l| {
            l.contains("error channel of port 80")
        }),
        (frame(2, &[0, 0x90, 0x1f]), false, |l| {
            l.contains("for port 8080")
        }),
        ([open.clone(), oversized].concat(), false, |l| {
            l.to_lowercase().contains("too long")
        }),
        (
            [open.clone(), frame(2, &[0, b'h', b'i'])].concat(),
            true,
            |l| l.contains("closed the stream before it ended"),
        ),
    ];
    for (script, close, want) in cases {
        let (url, task) = routed(cluster, Upgrade::Script(script, close)).await;
        let line = port_forward_error(&url, want).await;
        assert!(
            line.starts_with("error: forwarding port 80 of pod \"p\""),
            "{line}"
        );
        task.abort();
    }
}
