//! [`AttachedProcess`]: one exec or attach session, driven by a task that
//! owns the WebSocket and moves bytes between it and the user's pipes.

use std::convert::Infallible;
use std::future::Future;

use bytes::Bytes;
use futures::{Sink, SinkExt, Stream, StreamExt};
use kubeset_api::apimachinery::pkg::apis::meta::v1::Status;
use kubeset_rest::ws::UpgradeError;
use kubeset_rest::ws::tungstenite::{Error as WsError, Message};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream, ReadHalf};
use tokio::sync::{mpsc, oneshot};

use super::{AttachParams, DEFAULT_BUF_SIZE, Frame, StreamTask, V4, V5, read_frame, violation};
use crate::Error;

const STDIN: u8 = 0;
const STDOUT: u8 = 1;
const STDERR: u8 = 2;
const ERROR: u8 = 3;
const RESIZE: u8 = 4;
const CLOSE: u8 = 255;
/// Largest status accepted on the error channel.
const MAX_STATUS: usize = 64 << 10;
/// Most bytes of a malformed status quoted in its error.
const EXCERPT: usize = 128;

/// A terminal size, sent on the resize channel as `{"Width":…,"Height":…}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TerminalSize {
    /// Columns.
    #[serde(rename = "Width")]
    pub width: u16,
    /// Rows.
    #[serde(rename = "Height")]
    pub height: u16,
}

/// Sends terminal sizes to a TTY session ([`AttachedProcess::terminal_size`]).
pub type TerminalSizeSender = mpsc::Sender<TerminalSize>;

/// A running exec or attach (kube-rs's shape): take its pipes, then wait
/// for its status.
pub struct AttachedProcess {
    stdin: Option<DuplexStream>,
    stdout: Option<DuplexStream>,
    stderr: Option<DuplexStream>,
    status: Option<oneshot::Receiver<Status>>,
    size: Option<TerminalSizeSender>,
    /// Dropping the process aborts it (the connection closes).
    task: StreamTask,
}

impl std::fmt::Debug for AttachedProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AttachedProcess")
            .field("finished", &self.task.is_finished())
            .finish_non_exhaustive()
    }
}

struct Pipes {
    stdin: Option<ReadHalf<DuplexStream>>,
    stdout: Option<DuplexStream>,
    stderr: Option<DuplexStream>,
    status: oneshot::Sender<Status>,
    sizes: Option<mpsc::Receiver<TerminalSize>>,
}

fn pipe(on: bool, size: Option<usize>) -> (Option<DuplexStream>, Option<DuplexStream>) {
    if !on {
        return (None, None);
    }
    let (a, b) = tokio::io::duplex(size.unwrap_or(DEFAULT_BUF_SIZE).max(1));
    (Some(a), Some(b))
}

impl AttachedProcess {
    /// Starts the session over `ws`, an upgraded `v5.channel.k8s.io`
    /// (`v5`) or `v4.channel.k8s.io` stream (any stream of messages: the
    /// fuzz target feeds it bytes).
    pub(crate) fn start<W>(ws: W, v5: bool, ap: &AttachParams) -> Self
    where
        W: Stream<Item = Result<Message, WsError>>
            + Sink<Message, Error = WsError>
            + Send
            + 'static,
    {
        let (stdin_user, stdin_task) = pipe(ap.stdin, ap.max_stdin_buf_size);
        let (stdout_user, stdout_task) = pipe(ap.stdout, ap.max_stdout_buf_size);
        let (stderr_user, stderr_task) = pipe(ap.stderr && !ap.tty, ap.max_stderr_buf_size);
        let (status_tx, status_rx) = oneshot::channel();
        let (size_tx, size_rx) = if ap.tty {
            let (tx, rx) = mpsc::channel(4);
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let pipes = Pipes {
            // The task only reads stdin; its write half is dropped.
            stdin: stdin_task.map(|s| tokio::io::split(s).0),
            stdout: stdout_task,
            stderr: stderr_task,
            status: status_tx,
            sizes: size_rx,
        };
        Self {
            stdin: stdin_user,
            stdout: stdout_user,
            stderr: stderr_user,
            status: Some(status_rx),
            size: size_tx,
            task: StreamTask::spawn(drive(ws, v5, pipes)),
        }
    }

    /// The command's stdin (once; `None` without `stdin`). Shutting it
    /// down (or dropping it) closes stdin on `v5.channel.k8s.io`; `v4`
    /// cannot say so.
    pub fn stdin(&mut self) -> Option<impl AsyncWrite + Unpin + use<>> {
        self.stdin.take()
    }

    /// The command's stdout (once; `None` without `stdout`).
    pub fn stdout(&mut self) -> Option<impl AsyncRead + Unpin + use<>> {
        self.stdout.take()
    }

    /// The command's stderr (once; `None` without `stderr` or with a TTY).
    pub fn stderr(&mut self) -> Option<impl AsyncRead + Unpin + use<>> {
        self.stderr.take()
    }

    /// The final `Status` (once): `None` when the stream ended without one
    /// (see [`join`](Self::join) for why). [`exit_code`](super::exit_code)
    /// reads the exit code from it.
    pub fn take_status(&mut self) -> Option<impl Future<Output = Option<Status>> + use<>> {
        self.status.take().map(|rx| async move { rx.await.ok() })
    }

    /// Sends terminal sizes (once; `None` without a TTY).
    pub fn terminal_size(&mut self) -> Option<TerminalSizeSender> {
        self.size.take()
    }

    /// Waits until the session ends: `Ok` after the server's status and
    /// close, the error when the connection broke first.
    pub async fn join(mut self) -> Result<(), Error> {
        self.task.join().await
    }

    /// Stops the session (the connection is closed).
    pub fn abort(&self) {
        self.task.abort();
    }
}

fn broke(e: WsError) -> UpgradeError {
    UpgradeError::WebSocket {
        source: Box::new(e),
    }
}

async fn deliver(pipe: &mut Option<DuplexStream>, data: &[u8]) {
    if let Some(p) = pipe
        && p.write_all(data).await.is_err()
    {
        // The user dropped the reader: discard the rest of this channel.
        *pipe = None;
    }
}

/// Moves bytes between the WebSocket and the pipes until the session
/// ends. Reads and writes run side by side: a stdin write the server is not
/// taking yet (its process blocked on stdout that nobody reads) must not
/// stop the reads that unblock it, or both sides wait for each other.
async fn drive<W>(ws: W, v5: bool, p: Pipes) -> Result<(), UpgradeError>
where
    W: Stream<Item = Result<Message, WsError>> + Sink<Message, Error = WsError>,
{
    let Pipes {
        stdin,
        mut stdout,
        mut stderr,
        status: status_tx,
        sizes,
    } = p;
    let (mut sink, mut source) = ws.split();
    let mut status = Vec::new();
    let protocol = if v5 { V5 } else { V4 };
    let result = {
        let reader = read_loop(&mut source, protocol, &mut stdout, &mut stderr, &mut status);
        let writer = write_loop(&mut sink, v5, stdin, sizes);
        tokio::select! {
            r = reader => r,
            e = writer => match e {
                Ok(never) => match never {},
                Err(e) => Err(e),
            },
        }
    };
    // Readers see EOF now (their write ends are dropped here).
    drop(stdout);
    drop(stderr);
    match (result, parse_status(&status)) {
        // The status is the end of the session: how the socket closed
        // after it does not matter.
        (_, Ok(Some(s))) => {
            let _ = status_tx.send(s);
            Ok(())
        }
        (Ok(()), Ok(None)) => Err(UpgradeError::Closed),
        // A connection that broke mid-status: the break is the cause.
        (Ok(()), Err(e)) | (Err(e), _) => Err(e),
    }
}

/// The error channel's bytes as the final `Status` (client-go's v4
/// error decoder): `None` when the server sent none, an error quoting a
/// bounded excerpt when they are not one.
fn parse_status(bytes: &[u8]) -> Result<Option<Status>, UpgradeError> {
    if bytes.is_empty() {
        return Ok(None);
    }
    serde_json::from_slice::<Status>(bytes)
        .map(Some)
        .map_err(|e| {
            let cut = &bytes[..bytes.len().min(EXCERPT)];
            violation(format!(
                "the error channel (3) sent {} bytes that are not a Status ({e}): \"{}\"{}",
                bytes.len(),
                String::from_utf8_lossy(cut).escape_debug(),
                if cut.len() < bytes.len() { "…" } else { "" }
            ))
        })
}

/// The error for a message on a channel the server never writes.
fn unknown_channel(channel: u8) -> UpgradeError {
    violation(format!(
        "a message on channel {channel}; the server sends on stdout (1), stderr (2) \
         and the error channel (3) only"
    ))
}

/// Server → user: stdout and stderr into their pipes, the error channel
/// into `status`, until the server's normal Close (`Ok`), a broken
/// connection or a message the protocol does not allow (an error naming
/// it). A channel the session did not ask for is discarded.
async fn read_loop<S>(
    source: &mut S,
    protocol: &str,
    stdout: &mut Option<DuplexStream>,
    stderr: &mut Option<DuplexStream>,
    status: &mut Vec<u8>,
) -> Result<(), UpgradeError>
where
    S: Stream<Item = Result<Message, WsError>> + Unpin,
{
    while let Some(msg) = source.next().await {
        let (channel, data) = match read_frame(msg, protocol)? {
            Frame::Data(channel, data) => (channel, data),
            Frame::End => return Ok(()),
            Frame::Skip => continue,
        };
        match channel {
            STDOUT => deliver(stdout, &data).await,
            STDERR => deliver(stderr, &data).await,
            ERROR => {
                if status.len() + data.len() > MAX_STATUS {
                    return Err(violation(format!(
                        "the error channel (3) sent {} bytes, over the {MAX_STATUS} a Status may take",
                        status.len() + data.len()
                    )));
                }
                status.extend_from_slice(&data);
            }
            other => return Err(unknown_channel(other)),
        }
    }
    Err(UpgradeError::Closed)
}

/// User → server: stdin (then, in v5, its close) and terminal sizes; runs
/// until a write fails.
async fn write_loop<S>(
    sink: &mut S,
    v5: bool,
    mut stdin: Option<ReadHalf<DuplexStream>>,
    mut sizes: Option<mpsc::Receiver<TerminalSize>>,
) -> Result<Infallible, UpgradeError>
where
    S: Sink<Message, Error = WsError> + Unpin,
{
    let mut buf = vec![0u8; 32 << 10];
    loop {
        tokio::select! {
            n = read_stdin(&mut stdin, &mut buf) => match n {
                Some(n) => {
                    let msg = [&[STDIN][..], &buf[..n]].concat();
                    sink.send(Message::Binary(Bytes::from(msg))).await.map_err(broke)?;
                }
                None => {
                    stdin = None;
                    if v5 {
                        sink.send(Message::Binary(Bytes::from_static(&[CLOSE, STDIN])))
                            .await
                            .map_err(broke)?;
                    }
                }
            },
            Some(size) = next_size(&mut sizes) => {
                let mut msg = vec![RESIZE];
                msg.extend_from_slice(&serde_json::to_vec(&size).unwrap_or_default());
                sink.send(Message::Binary(Bytes::from(msg))).await.map_err(broke)?;
            }
        }
    }
}

/// The next chunk of the user's stdin; never resolves without stdin.
async fn read_stdin(stdin: &mut Option<ReadHalf<DuplexStream>>, buf: &mut [u8]) -> Option<usize> {
    match stdin {
        Some(s) => match s.read(buf).await {
            Ok(0) | Err(_) => None,
            Ok(n) => Some(n),
        },
        None => std::future::pending().await,
    }
}

async fn next_size(sizes: &mut Option<mpsc::Receiver<TerminalSize>>) -> Option<TerminalSize> {
    match sizes {
        Some(rx) => match rx.recv().await {
            Some(s) => Some(s),
            None => {
                *sizes = None;
                std::future::pending().await
            }
        },
        None => std::future::pending().await,
    }
}
