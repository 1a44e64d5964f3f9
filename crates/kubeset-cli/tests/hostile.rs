//! The built binary against servers that stall or cut streams (issue 20):
//! a watch or a log that cannot end normally ends non-zero, on time.

mod common;

use std::process::Child;
use std::time::{Duration, Instant};

use common::*;
use kubeset_testserver::TestServer;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Waits (bounded) for the child to exit; its code and stderr.
fn wait_exit(child: &mut Child) -> (i32, String) {
    let until = Instant::now() + TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        assert!(Instant::now() < until, "still running after {TIMEOUT:?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
    }
    (status.code().unwrap_or(-1), stderr)
}

fn cm(name: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": "default", "labels": {"app": "h"}}})
}

/// Starts `watch cm -l app=h` with `extra` args and waits until it
/// streams (an event created after it started has arrived).
fn open_watch(s: &TestServer, kc: &std::path::Path, extra: &[&str]) -> Lines {
    s.create(cm("h0")).unwrap();
    let mut args = vec![
        "--kubeconfig",
        kc.to_str().unwrap(),
        "watch",
        "cm",
        "-l",
        "app=h",
    ];
    args.extend_from_slice(extra);
    let w = Lines::spawn(command(&args));
    assert!(w.next().starts_with("ADDED configmap/h0 "));
    s.create(cm("h1")).unwrap();
    assert!(w.next().starts_with("ADDED configmap/h1 "));
    w
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_with_a_timeout_on_a_stalled_server_ends_non_zero_after_it() {
    let (s, _dir, kc) = server().await;
    let mut w = open_watch(&s, &kc, &["--timeout", "2"]);
    s.faults(0).unwrap().hang();
    let (code, stderr) = tokio::task::block_in_place(|| wait_exit(&mut w.child));
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("did not end within 3s"), "{stderr}");
    s.faults(0).unwrap().up().await.unwrap();
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_cut_mid_event_ends_non_zero() {
    let (s, _dir, kc) = server().await;
    let mut w = open_watch(&s, &kc, &["--timeout", "60"]);
    s.faults(0).unwrap().cut_watches();
    s.create(cm("h2")).unwrap();
    let (code, stderr) = tokio::task::block_in_place(|| wait_exit(&mut w.child));
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("watching configmaps"), "{stderr}");
    s.shutdown().await;
}

/// A server answering every request with a chunked 200, one chunk, then
/// silence.
async fn stalling_server() -> (String, tokio::task::JoinHandle<()>) {
    scripted("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nline1\n\r\n").await
}

/// A server answering every request with `head`, then silence.
async fn scripted(head: &'static str) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = sock.read(&mut buf).await;
                let _ = sock.write_all(head.as_bytes()).await;
                tokio::time::sleep(Duration::from_secs(3600)).await;
            });
        }
    });
    (url, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_do_not_run_past_the_request_timeout() {
    let (url, task) = stalling_server().await;
    let args = [
        "--server",
        &url,
        "--request-timeout",
        "2s",
        "logs",
        "p",
        "-f",
    ];
    let run = tokio::time::timeout(TIMEOUT, run_raw(args.map(str::to_owned).to_vec()))
        .await
        .expect("logs must end at the request timeout");
    assert_eq!(run.stdout, "line1\n");
    let line = run.fails(1);
    assert!(line.contains("did not end within 2s"), "{line}");
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminal_escapes_in_server_errors_are_printed_escaped() {
    let body = r#"{"kind":"Status","status":"Failure","reason":"NotFound","code":404,"message":"pods \"p\u001b[2J\u009b31m\" not found"}"#;
    let head: &'static str = Box::leak(
        format!(
            "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_boxed_str(),
    );
    let (url, task) = scripted(head).await;
    let args = ["--server", &url, "--request-timeout", "10s", "logs", "p"];
    let run = run_raw(args.map(str::to_owned).to_vec()).await;
    let line = run.fails(1);
    assert!(
        !line.contains('\u{1b}') && !line.contains('\u{9b}'),
        "{line:?}"
    );
    assert!(line.contains("p\\u{1b}[2J\\u{9b}31m"), "{line}");
    task.abort();
}
