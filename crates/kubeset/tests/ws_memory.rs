//! A large stdin and stdout through exec with bounded memory: the bytes
//! stream through (bounded pipes, bounded channels, WebSocket
//! backpressure), never pile up. Its own test binary, so no other test
//! moves the process's peak RSS.

use std::time::Duration;

use kubeset::api::core::v1::Pod;
use kubeset::rest::{RestClient, RestConfig};
use kubeset::ws::{AttachParams, exit_code};
use kubeset::{Api, Client};
use kubeset_testserver::TestServer;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Bytes sent through `cat` (and counted by `wc -c`).
const TOTAL: u64 = 100 << 20;
/// How much the peak RSS may grow while they pass.
const MAX_GROWTH: u64 = 48 << 20;

/// Peak resident set size (`VmHWM`), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM");
    kb * 1024
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundred_mib_through_cat_with_bounded_memory() {
    let server = TestServer::builder()
        .container_runtime(true)
        .start()
        .await
        .unwrap();
    server
        .create(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "big", "namespace": "default"},
            "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "x"}]}}))
        .unwrap();
    let rest = RestClient::new(RestConfig::new(server.url()).with_qps_burst(-1.0, 0)).unwrap();
    let pods: Api<Pod> = Api::default_namespaced(Client::new(rest, "default"));
    let before = peak_rss();

    let mut p = pods
        .exec("big", ["cat"], &AttachParams::default().stdin(true))
        .await
        .unwrap();
    let mut stdin = p.stdin().unwrap();
    let mut stdout = p.stdout().unwrap();
    let writer = tokio::spawn(async move {
        let chunk = vec![0x5au8; 256 << 10];
        let mut sent = 0u64;
        while sent < TOTAL {
            stdin.write_all(&chunk).await.unwrap();
            sent += chunk.len() as u64;
        }
        stdin.shutdown().await.unwrap();
    });
    let work = async {
        let mut buf = vec![0u8; 64 << 10];
        let mut got = 0u64;
        loop {
            let n = stdout.read(&mut buf).await.unwrap();
            if n == 0 {
                break got;
            }
            assert!(buf[..n].iter().all(|&b| b == 0x5a));
            got += n as u64;
        }
    };
    let got = tokio::time::timeout(Duration::from_secs(300), work)
        .await
        .expect("in time");
    writer.await.unwrap();
    assert_eq!(got, TOTAL);
    let status = p.take_status().unwrap().await.expect("a status");
    assert_eq!(exit_code(&status), Some(0));

    // stdin only, counted on the other side.
    let mut p = pods
        .exec("big", ["wc", "-c"], &AttachParams::default().stdin(true))
        .await
        .unwrap();
    let mut stdin = p.stdin().unwrap();
    let chunk = vec![1u8; 1 << 20];
    for _ in 0..(TOTAL >> 20) {
        stdin.write_all(&chunk).await.unwrap();
    }
    stdin.shutdown().await.unwrap();
    drop(stdin);
    let mut out = String::new();
    p.stdout().unwrap().read_to_string(&mut out).await.unwrap();
    assert_eq!(out.trim(), TOTAL.to_string());

    let growth = peak_rss().saturating_sub(before);
    eprintln!(
        "peak RSS growth while 2 x {} MiB passed: {} KiB",
        TOTAL >> 20,
        growth >> 10
    );
    assert!(growth < MAX_GROWTH, "peak RSS grew by {growth} bytes");
}
