//! The embedded server never reads an unbounded body into memory: eight
//! concurrent 60 MiB uploads (chunked, no declared length, so the server
//! must stop reading by itself) leave the peak RSS of this process (one
//! test, its own process) far below the 480 MiB they add up to. Before
//! the limit, the same uploads peaked at 1.98 GB (issue 20).

use std::time::Duration;

use kubeset_testserver::TestServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Sends up to 60 MiB in 64 KiB chunks; returns the status line.
async fn upload(addr: std::net::SocketAddr) -> String {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let head = "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    s.write_all(head.as_bytes()).await.expect("head");
    let chunk = vec![b'x'; 64 * 1024];
    let frame = [
        format!("{:x}\r\n", chunk.len()).into_bytes(),
        chunk,
        b"\r\n".to_vec(),
    ]
    .concat();
    for _ in 0..960 {
        // The server answers and closes once past its limit: stop then.
        if s.write_all(&frame).await.is_err() {
            break;
        }
    }
    let _ = s.write_all(b"0\r\n\r\n").await;
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(60), s.read(&mut buf))
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or(0);
    String::from_utf8_lossy(&buf[..n])
        .lines()
        .next()
        .unwrap_or("")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_60_mib_uploads_stay_bounded() {
    let s = TestServer::start().await.unwrap();
    let addr = s.replicas()[0].addr();
    let before = peak_rss_kib();
    let tasks: Vec<_> = (0..8).map(|_| tokio::spawn(upload(addr))).collect();
    for t in tasks {
        let status = t.await.unwrap();
        assert!(status.starts_with("HTTP/1.1 413"), "{status:?}");
    }
    let grown_mib = peak_rss_kib().saturating_sub(before) / 1024;
    // 8 bodies of at most 3 MiB each, plus buffers: well under 480 MiB.
    assert!(grown_mib < 150, "peak RSS grew by {grown_mib} MiB");
    eprintln!("peak RSS grew by {grown_mib} MiB for 8 concurrent 60 MiB uploads");
    s.shutdown().await;
}
