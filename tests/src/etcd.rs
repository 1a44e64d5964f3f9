//! etcd's JSON gateway, spoken over a plain TCP socket: the current
//! revision and a compaction (to provoke `410 Gone` from the API server).
//!
//! Deliberately not through kubeset: this is test machinery, and the
//! client under test should not be trusted to set up its own test.

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::HarnessError;

const TIMEOUT: Duration = Duration::from_secs(30);

fn etcd_error(reason: impl Into<String>) -> HarnessError {
    HarnessError::Etcd {
        reason: reason.into(),
    }
}

/// POSTs `body` to `path` of etcd at `url` (`http://host:port`), answers
/// the response body as JSON.
async fn post(url: &str, path: &str, body: &str) -> Result<serde_json::Value, HarnessError> {
    let authority = url
        .strip_prefix("http://")
        .ok_or_else(|| etcd_error(format!("{url} is not an http:// URL")))?
        .trim_end_matches('/');
    let exchange = async {
        let mut stream = TcpStream::connect(authority)
            .await
            .map_err(|e| etcd_error(format!("connecting to {authority}: {e}")))?;
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream
            .write_all(request.as_bytes())
            .await
            .map_err(|e| etcd_error(format!("writing to {authority}: {e}")))?;
        let mut response = Vec::new();
        stream
            .read_to_end(&mut response)
            .await
            .map_err(|e| etcd_error(format!("reading from {authority}: {e}")))?;
        Ok::<_, HarnessError>(response)
    };
    let response = tokio::time::timeout(TIMEOUT, exchange)
        .await
        .map_err(|_| etcd_error(format!("no answer from {authority} within {TIMEOUT:?}")))??;
    let text = String::from_utf8_lossy(&response);
    let (head, rest) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| etcd_error("response without a header end"))?;
    if !head.starts_with("HTTP/1.1 200") {
        return Err(etcd_error(format!("{path}: {head} {rest}")));
    }
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(rest)?
    } else {
        rest.to_owned()
    };
    serde_json::from_str(&body).map_err(|e| etcd_error(format!("{path}: {e}: {body}")))
}

fn dechunk(mut rest: &str) -> Result<String, HarnessError> {
    let mut out = String::new();
    loop {
        let (size, after) = rest
            .split_once("\r\n")
            .ok_or_else(|| etcd_error("bad chunked body"))?;
        let size = usize::from_str_radix(size.trim(), 16)
            .map_err(|_| etcd_error(format!("bad chunk size {size:?}")))?;
        if size == 0 {
            return Ok(out);
        }
        let chunk = after
            .get(..size)
            .ok_or_else(|| etcd_error("chunk shorter than its size"))?;
        out.push_str(chunk);
        rest = after
            .get(size..)
            .and_then(|r| r.strip_prefix("\r\n"))
            .ok_or_else(|| etcd_error("chunk without its CRLF"))?;
    }
}

/// etcd's current revision.
pub async fn revision(url: &str) -> Result<i64, HarnessError> {
    // A range over key "\0" (base64 "AA==") matches nothing but carries the header.
    let answer = post(url, "/v3/kv/range", r#"{"key":"AA=="}"#).await?;
    answer["header"]["revision"]
        .as_str()
        .and_then(|r| r.parse().ok())
        .ok_or_else(|| etcd_error(format!("no revision in {answer}")))
}

/// Compacts etcd at its current revision (physically); answers that revision.
pub async fn compact(url: &str) -> Result<i64, HarnessError> {
    let rev = revision(url).await?;
    let body = format!(r#"{{"revision":"{rev}","physical":true}}"#);
    match post(url, "/v3/kv/compaction", &body).await {
        Ok(_) => Ok(rev),
        // The API server's own compactor got there first: just as good.
        Err(HarnessError::Etcd { reason }) if reason.contains("has been compacted") => Ok(rev),
        Err(e) => Err(e),
    }
}
