//! A scripted HTTP/1.1 server on 127.0.0.1 for the REST tests: each
//! connection serves one request with the next scripted reply, then closes.

#![allow(dead_code)]

use std::{
    collections::VecDeque,
    fmt,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use kubeset_rest::backoff::{SleepFuture, Sleeper};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

/// What the server does with one request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A complete response with Content-Length.
    Http {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// A chunked response: each chunk written after its delay; the final
    /// zero chunk is written only when `finish` is true.
    Chunked {
        status: u16,
        headers: Vec<(String, String)>,
        chunks: Vec<(Duration, Vec<u8>)>,
        finish: bool,
    },
    /// These bytes verbatim, then close.
    Raw(Vec<u8>),
    /// Close the connection without answering (unexpected EOF).
    Close,
    /// Reset the connection (RST) without answering.
    Reset,
    /// Never answer (until the client gives up).
    Hang,
}

impl Reply {
    pub fn json(status: u16, body: &str) -> Self {
        Reply::Http {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
        }
    }

    pub fn text(status: u16, body: &str) -> Self {
        Reply::Http {
            status,
            headers: vec![("Content-Type".into(), "text/plain; charset=utf-8".into())],
            body: body.as_bytes().to_vec(),
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        match &mut self {
            Reply::Http { headers, .. } | Reply::Chunked { headers, .. } => {
                headers.push((name.into(), value.into()))
            }
            _ => {}
        }
        self
    }
}

/// One request as received.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub struct Server {
    pub addr: SocketAddr,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    requests: Arc<Mutex<Vec<Recorded>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    pub async fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (r, q) = (replies.clone(), requests.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    return;
                };
                let (r, q) = (r.clone(), q.clone());
                tokio::spawn(async move {
                    let _ = serve(sock, r, q).await;
                });
            }
        });
        Self {
            addr,
            replies,
            requests,
            task,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    pub fn remaining(&self) -> usize {
        self.replies.lock().unwrap().len()
    }
}

async fn read_request(sock: &mut TcpStream) -> std::io::Result<Option<Recorded>> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let mut parts = first.split(' ');
    let method = parts.next().unwrap_or_default().to_owned();
    let target = parts.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < len {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    Ok(Some(Recorded {
        method,
        target,
        headers,
        body,
    }))
}

fn head(status: u16, headers: &[(String, String)], extra: &str) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} Scripted\r\nConnection: close\r\n{extra}");
    for (n, v) in headers {
        out.push_str(&format!("{n}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.into_bytes()
}

async fn serve(
    mut sock: TcpStream,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    requests: Arc<Mutex<Vec<Recorded>>>,
) -> std::io::Result<()> {
    let Some(req) = read_request(&mut sock).await? else {
        return Ok(());
    };
    requests.lock().unwrap().push(req);
    let reply = replies
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or_else(|| Reply::text(599, "script exhausted"));
    match reply {
        Reply::Http {
            status,
            headers,
            body,
        } => {
            let mut out = head(
                status,
                &headers,
                &format!("Content-Length: {}\r\n", body.len()),
            );
            out.extend_from_slice(&body);
            sock.write_all(&out).await?;
            sock.shutdown().await?;
        }
        Reply::Chunked {
            status,
            headers,
            chunks,
            finish,
        } => {
            sock.write_all(&head(status, &headers, "Transfer-Encoding: chunked\r\n"))
                .await?;
            for (delay, chunk) in chunks {
                tokio::time::sleep(delay).await;
                let mut out = format!("{:x}\r\n", chunk.len()).into_bytes();
                out.extend_from_slice(&chunk);
                out.extend_from_slice(b"\r\n");
                sock.write_all(&out).await?;
                sock.flush().await?;
            }
            if finish {
                sock.write_all(b"0\r\n\r\n").await?;
                sock.shutdown().await?;
            }
        }
        Reply::Raw(bytes) => {
            sock.write_all(&bytes).await?;
            sock.shutdown().await?;
        }
        Reply::Close => {
            sock.shutdown().await?;
        }
        Reply::Reset => {
            sock.set_zero_linger()?;
            drop(sock);
        }
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
    }
    Ok(())
}

/// Records every wait instead of sleeping.
#[derive(Default)]
pub struct RecordingSleeper {
    pub waits: Mutex<Vec<Duration>>,
}

impl fmt::Debug for RecordingSleeper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RecordingSleeper")
    }
}

impl RecordingSleeper {
    pub fn secs(&self) -> Vec<u64> {
        self.waits
            .lock()
            .unwrap()
            .iter()
            .map(|d| d.as_secs())
            .collect()
    }
}

impl Sleeper for RecordingSleeper {
    fn sleep(&self, duration: Duration) -> SleepFuture {
        self.waits.lock().unwrap().push(duration);
        Box::pin(async {})
    }
}
