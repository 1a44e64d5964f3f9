//! `/metrics` over plain HTTP/1.1: the one endpoint a Prometheus scrape
//! needs, so an operator does not write its own server for it.
//!
//! The request is read with bounds (its head at most [`MAX_HEAD`] bytes,
//! within [`HEAD_TIMEOUT`]), answered, and the connection closed, as a
//! scrape expects; each connection is its own task, so a slow client never
//! holds up another. `GET /metrics` (a query string is ignored) answers the
//! registry in the OpenMetrics text format; `HEAD` the same without a body;
//! any other path 404, any other method 405.

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::registry::Registry;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};

/// The most bytes of a request head read before it is refused (431).
pub const MAX_HEAD: usize = 8 * 1024;

/// How long a client has to send its request head.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Binds `addr` and serves `registry` on `/metrics` until the task is
/// dropped; fails only if the address cannot be bound.
///
/// ```no_run
/// # async fn doc() -> std::io::Result<()> {
/// use std::sync::Arc;
/// use kubeset_runtime::metrics::{Metrics, prometheus_client::registry::Registry};
///
/// let mut registry = Registry::default();
/// let metrics = Metrics::register(&mut registry);
/// tokio::spawn(kubeset_runtime::metrics::serve("0.0.0.0:8080", Arc::new(registry)));
/// # let _ = metrics; Ok(()) }
/// ```
pub async fn serve(addr: impl ToSocketAddrs, registry: Arc<Registry>) -> std::io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    serve_listener(listener, registry).await;
    Ok(())
}

/// Serves `registry` on `/metrics` from a listener bound already (an
/// ephemeral port, say); runs until the task is dropped.
///
/// ```no_run
/// # async fn doc() -> std::io::Result<()> {
/// use std::sync::Arc;
/// use kubeset_runtime::metrics::prometheus_client::registry::Registry;
///
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// println!("metrics on http://{}/metrics", listener.local_addr()?);
/// tokio::spawn(kubeset_runtime::metrics::serve_listener(listener, Arc::new(Registry::default())));
/// # Ok(()) }
/// ```
pub async fn serve_listener(listener: TcpListener, registry: Arc<Registry>) {
    loop {
        match listener.accept().await {
            Ok((conn, _)) => {
                tokio::spawn(answer(conn, registry.clone()));
            }
            // Out of descriptors and the like: wait instead of spinning.
            Err(e) => {
                tracing::warn!(error = %e, "metrics: accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// What a request asked for, from its head.
#[derive(Debug, PartialEq, Eq)]
enum Ask {
    Metrics { body: bool },
    NotFound,
    BadMethod,
    Malformed,
}

/// The pure rule: the request line of `head` → what to answer.
fn ask(head: &[u8]) -> Ask {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let Ok(line) = std::str::from_utf8(line) else {
        return Ask::Malformed;
    };
    let mut parts = line.trim_end_matches('\r').split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Ask::Malformed;
    };
    if !version.starts_with("HTTP/1.") || parts.next().is_some() {
        return Ask::Malformed;
    }
    let path = target.split('?').next().unwrap_or_default();
    match (method, path) {
        ("GET", "/metrics") => Ask::Metrics { body: true },
        ("HEAD", "/metrics") => Ask::Metrics { body: false },
        (_, "/metrics") => Ask::BadMethod,
        _ => Ask::NotFound,
    }
}

/// Reads the head (bounded in size and time), then writes one answer.
async fn answer(mut conn: TcpStream, registry: Arc<Registry>) {
    let mut head = Vec::with_capacity(1024);
    let read = tokio::time::timeout(HEAD_TIMEOUT, async {
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
            let n = conn.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        std::io::Result::Ok(())
    })
    .await;
    if !matches!(read, Ok(Ok(()))) {
        return;
    }
    let (status, body) = if head.len() >= MAX_HEAD {
        ("431 Request Header Fields Too Large", None)
    } else {
        match ask(&head) {
            Ask::Metrics { body } => match encode(&registry) {
                Ok(text) => ("200 OK", Some((text, body))),
                Err(_) => ("500 Internal Server Error", None),
            },
            Ask::NotFound => ("404 Not Found", None),
            Ask::BadMethod => ("405 Method Not Allowed", None),
            Ask::Malformed => ("400 Bad Request", None),
        }
    };
    let (text, send_body) = body.unwrap_or_default();
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {CONTENT_TYPE}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        text.len()
    );
    let _ = conn.write_all(reply.as_bytes()).await;
    if send_body {
        let _ = conn.write_all(text.as_bytes()).await;
    }
    let _ = conn.shutdown().await;
}

fn encode(registry: &Registry) -> Result<String, std::fmt::Error> {
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, registry)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_line_decides() {
        assert_eq!(
            ask(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"),
            Ask::Metrics { body: true }
        );
        assert_eq!(
            ask(b"GET /metrics?x=1 HTTP/1.0\r\n\r\n"),
            Ask::Metrics { body: true }
        );
        assert_eq!(
            ask(b"HEAD /metrics HTTP/1.1\r\n\r\n"),
            Ask::Metrics { body: false }
        );
        assert_eq!(ask(b"POST /metrics HTTP/1.1\r\n\r\n"), Ask::BadMethod);
        assert_eq!(ask(b"GET / HTTP/1.1\r\n\r\n"), Ask::NotFound);
        assert_eq!(ask(b"GET /metrics\r\n\r\n"), Ask::Malformed);
        assert_eq!(ask(b"GET /metrics SPDY/3 x\r\n\r\n"), Ask::Malformed);
        assert_eq!(ask(b"\xff\xfe /metrics HTTP/1.1\r\n\r\n"), Ask::Malformed);
        assert_eq!(ask(b""), Ask::Malformed);
    }

    async fn request(addr: std::net::SocketAddr, raw: &[u8]) -> String {
        let mut conn = TcpStream::connect(addr).await.unwrap();
        conn.write_all(raw).await.unwrap();
        let mut out = String::new();
        conn.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn a_scrape_gets_the_registry_and_other_requests_do_not() {
        let mut registry = Registry::default();
        let metrics = crate::metrics::Metrics::register(&mut registry);
        metrics.controller("scraped").queue_add();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(serve_listener(listener, Arc::new(registry)));

        let ok = request(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").await;
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.contains(CONTENT_TYPE), "{ok}");
        assert!(
            ok.contains("workqueue_adds_total{name=\"scraped\"} 1"),
            "{ok}"
        );
        assert!(ok.trim_end().ends_with("# EOF"), "{ok}");

        let head = request(addr, b"HEAD /metrics HTTP/1.1\r\n\r\n").await;
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(head.ends_with("\r\n\r\n"), "a HEAD has no body: {head}");

        let missing = request(addr, b"GET /healthz HTTP/1.1\r\n\r\n").await;
        assert!(missing.starts_with("HTTP/1.1 404 "), "{missing}");
        let post = request(addr, b"POST /metrics HTTP/1.1\r\n\r\n").await;
        assert!(post.starts_with("HTTP/1.1 405 "), "{post}");

        // Exactly the limit and no end of head: all of it is read, so the
        // close after the answer resets nothing the client still sends.
        let mut huge = b"GET /metrics HTTP/1.1\r\n".to_vec();
        huge.resize(MAX_HEAD, b'a');
        let refused = request(addr, &huge).await;
        assert!(refused.starts_with("HTTP/1.1 431 "), "{refused}");
        server.abort();
    }
}
