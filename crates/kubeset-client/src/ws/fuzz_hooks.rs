//! Entry points for the fuzz target `ws_frames` in `fuzz/` (hidden, not
//! API: they change whenever the readers do). Each feeds a server's bytes
//! after the upgrade, in the given chunks, to the real reader
//! ([`AttachedProcess`]'s or [`Portforwarder`]'s) over an in-memory
//! connection whose writes are discarded, and reports what the user saw.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

use super::{AttachParams, AttachedProcess, Portforwarder};

/// What the user of a stream saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The bytes each pipe delivered: exec's stdout and stderr, or one
    /// entry per forwarded port.
    pub delivered: Vec<Vec<u8>>,
    /// exec: the final `Status` (`Debug`); port-forward: each port's
    /// error message.
    pub reports: Vec<Option<String>>,
    /// How the stream ended: `Ok`, or the error with its causes on one
    /// line.
    pub end: Result<(), String>,
}

/// A connection that reads `chunks` (one per read, split further when the
/// reader's buffer is smaller), then EOF, and takes every write.
struct Script(VecDeque<Vec<u8>>);

impl AsyncRead for Script {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(chunk) = self.0.front_mut() {
            let n = chunk.len().min(buf.remaining());
            buf.put_slice(&chunk[..n]);
            chunk.drain(..n);
            if chunk.is_empty() {
                self.0.pop_front();
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Script {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, b: &[u8]) -> Poll<io::Result<usize>> {
        Poll::Ready(Ok(b.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

fn script(chunks: Vec<Vec<u8>>) -> Script {
    Script(chunks.into_iter().filter(|c| !c.is_empty()).collect())
}

/// An error and its causes, `: `-separated.
fn chain(e: &crate::Error) -> String {
    let mut text = e.to_string();
    let mut cur = std::error::Error::source(e);
    while let Some(c) = cur {
        text = format!("{text}: {c}");
        cur = c.source();
    }
    text
}

async fn read_all(r: Option<impl AsyncRead + Unpin>) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(mut r) = r {
        let _ = r.read_to_end(&mut out).await;
    }
    out
}

fn run<F: Future<Output = Outcome>>(f: F) -> Outcome {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime")
        .block_on(f)
}

/// An exec whose server sent `chunks` after the upgrade (`v5`: on
/// `v5.channel.k8s.io`, else `v4`), with stdin (closed at once), stdout and
/// stderr.
pub fn exec(chunks: Vec<Vec<u8>>, v5: bool) -> Outcome {
    run(async move {
        let ws = kubeset_rest::ws::client_over(script(chunks)).await;
        let mut p = AttachedProcess::start(ws, v5, &AttachParams::default().stdin(true));
        drop(p.stdin());
        let (stdout, stderr) = (p.stdout(), p.stderr());
        let status = p.take_status().expect("a status receiver");
        let (out, err, status, end) =
            tokio::join!(read_all(stdout), read_all(stderr), status, p.join());
        Outcome {
            delivered: vec![out, err],
            reports: vec![status.map(|s| format!("{s:?}"))],
            end: end.map_err(|e| chain(&e)),
        }
    })
}

/// A port-forward of `ports` whose server sent `chunks` after the upgrade.
pub fn portforward(chunks: Vec<Vec<u8>>, ports: &[u16]) -> Outcome {
    run(async move {
        let ws = kubeset_rest::ws::client_over(script(chunks)).await;
        let mut pf = Portforwarder::start(ws, ports);
        let streams: Vec<_> = ports.iter().map(|p| pf.take_stream(*p)).collect();
        let errors: Vec<_> = ports.iter().map(|p| pf.take_error(*p)).collect();
        let delivered = futures::future::join_all(streams.into_iter().map(read_all));
        let reports = futures::future::join_all(errors.into_iter().map(|e| async move {
            match e {
                Some(e) => e.await,
                None => None,
            }
        }));
        let (delivered, reports, end) = tokio::join!(delivered, reports, pf.join());
        Outcome {
            delivered,
            reports,
            end: end.map_err(|e| chain(&e)),
        }
    })
}
