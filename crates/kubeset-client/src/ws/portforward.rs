//! [`Portforwarder`]: the channel protocol of `pods/portforward`
//! (`v4.channel.k8s.io`): port `i` of the request has data channel `2i`
//! and error channel `2i + 1`, each opened by the server with the port
//! number (2 bytes, little-endian), which is checked.

use std::collections::HashMap;
use std::future::Future;

use bytes::Bytes;
use futures::{Sink, SinkExt, Stream, StreamExt};
use kubeset_rest::ws::UpgradeError;
use kubeset_rest::ws::tungstenite::{Error as WsError, Message};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream, WriteHalf};
use tokio::sync::{mpsc, oneshot};

use super::{DEFAULT_BUF_SIZE, Frame, StreamTask, V4, read_frame, violation};
use crate::Error;

/// Largest error message kept per port.
const MAX_ERROR: usize = 16 << 10;

/// A running port-forward (kube-rs's shape): one bidirectional stream per
/// requested port.
pub struct Portforwarder {
    streams: HashMap<u16, DuplexStream>,
    errors: HashMap<u16, oneshot::Receiver<String>>,
    /// Dropping the forwarder aborts it (the connection closes).
    task: StreamTask,
}

impl std::fmt::Debug for Portforwarder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Portforwarder")
            .field("ports", &self.streams.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

struct Port {
    port: u16,
    /// Where the pod's bytes go (the user reads the other end).
    to_user: Option<WriteHalf<DuplexStream>>,
    /// Whether each channel's port prefix was seen (data, error).
    opened: [bool; 2],
    error: Vec<u8>,
    error_tx: Option<oneshot::Sender<String>>,
}

impl Portforwarder {
    /// Starts forwarding `ports` over `ws`, an upgraded
    /// `v4.channel.k8s.io` stream (any stream of messages: the fuzz target
    /// feeds it bytes).
    pub(crate) fn start<W>(ws: W, ports: &[u16]) -> Self
    where
        W: Stream<Item = Result<Message, WsError>>
            + Sink<Message, Error = WsError>
            + Send
            + 'static,
    {
        let mut streams = HashMap::new();
        let mut errors = HashMap::new();
        let mut state = Vec::with_capacity(ports.len());
        let (up_tx, up_rx) = mpsc::channel::<(usize, Option<Bytes>)>(16);
        let mut readers = Vec::new();
        for (i, &port) in ports.iter().enumerate() {
            let (user, task_end) = tokio::io::duplex(DEFAULT_BUF_SIZE);
            let (mut from_user, to_user) = tokio::io::split(task_end);
            let (etx, erx) = oneshot::channel();
            streams.insert(port, user);
            errors.insert(port, erx);
            state.push(Port {
                port,
                to_user: Some(to_user),
                opened: [false; 2],
                error: Vec::new(),
                error_tx: Some(etx),
            });
            let tx = up_tx.clone();
            readers.push(tokio::spawn(async move {
                let mut buf = vec![0u8; 32 << 10];
                loop {
                    match from_user.read(&mut buf).await {
                        Ok(0) | Err(_) => {
                            let _ = tx.send((i, None)).await;
                            return;
                        }
                        Ok(n) => {
                            if tx
                                .send((i, Some(Bytes::copy_from_slice(&buf[..n]))))
                                .await
                                .is_err()
                            {
                                return;
                            }
                        }
                    }
                }
            }));
        }
        drop(up_tx);
        let task = StreamTask::spawn(async move {
            let r = drive(ws, state, up_rx).await;
            for h in readers {
                h.abort();
            }
            r
        });
        Self {
            streams,
            errors,
            task,
        }
    }

    /// The stream of `port` (once): write to send to the pod's port, read
    /// what it answers.
    pub fn take_stream(
        &mut self,
        port: u16,
    ) -> Option<impl AsyncRead + AsyncWrite + Unpin + use<>> {
        self.streams.remove(&port)
    }

    /// The error the server reports for `port` (once): resolves to the
    /// message, or `None` when the forward ends without one.
    pub fn take_error(
        &mut self,
        port: u16,
    ) -> Option<impl Future<Output = Option<String>> + use<>> {
        self.errors
            .remove(&port)
            .map(|rx| async move { rx.await.ok() })
    }

    /// Stops forwarding (the connection is closed).
    pub fn abort(&self) {
        self.task.abort();
    }

    /// Waits until the forward ends: `Ok` when every stream was closed by
    /// the user or the server closed cleanly, else the error.
    pub async fn join(mut self) -> Result<(), Error> {
        self.task.join().await
    }
}

/// Moves bytes between the WebSocket and the ports' streams. Reads and
/// writes run side by side, so a write the server is not taking yet never
/// stops the reads that would let it (see `process::drive`).
async fn drive<W>(
    ws: W,
    mut ports: Vec<Port>,
    mut up: mpsc::Receiver<(usize, Option<Bytes>)>,
) -> Result<(), UpgradeError>
where
    W: Stream<Item = Result<Message, WsError>> + Sink<Message, Error = WsError>,
{
    let mut open = ports.len();
    let (mut sink, mut source) = ws.split();
    let result = {
        let reader = async {
            while let Some(msg) = source.next().await {
                match read_frame(msg, V4)? {
                    Frame::Data(ch, data) => incoming(&mut ports, ch, &data).await?,
                    Frame::End => return Ok(()),
                    Frame::Skip => {}
                }
            }
            Err(UpgradeError::Closed)
        };
        let writer = async {
            loop {
                if open == 0 {
                    let _ = sink.close().await;
                    return Ok(());
                }
                match up.recv().await {
                    Some((i, Some(data))) => {
                        let Ok(ch) = u8::try_from(2 * i) else {
                            continue;
                        };
                        let msg = [&[ch][..], &data].concat();
                        sink.send(Message::Binary(Bytes::from(msg)))
                            .await
                            .map_err(|e| UpgradeError::WebSocket {
                                source: Box::new(e),
                            })?;
                    }
                    // The user closed this port's stream; the channel
                    // protocol has no half-close, so the forward ends with
                    // the last one.
                    Some((_, None)) => open = open.saturating_sub(1),
                    None => open = 0,
                }
            }
        };
        tokio::select! {
            r = reader => r,
            w = writer => w,
        }
    };
    for p in &mut ports {
        if let Some(tx) = p.error_tx.take()
            && !p.error.is_empty()
        {
            let _ = tx.send(String::from_utf8_lossy(&p.error).into_owned());
        }
    }
    result
}

/// Which channel `ch` is, in messages: `data channel of port 80`.
fn channel_name(kind: usize, port: u16) -> String {
    let what = if kind == 0 { "data" } else { "error" };
    format!("{what} channel of port {port}")
}

async fn incoming(ports: &mut [Port], ch: u8, mut data: &[u8]) -> Result<(), UpgradeError> {
    let n = ports.len();
    let Some(p) = ports.get_mut(usize::from(ch / 2)) else {
        let channels = match n {
            0 => "no ports were requested".to_owned(),
            n => format!("{n} port(s) were requested, channels 0 to {}", 2 * n - 1),
        };
        return Err(violation(format!("a message on channel {ch}; {channels}")));
    };
    let kind = usize::from(ch % 2);
    if !p.opened[kind] {
        let name = channel_name(kind, p.port);
        let Some((prefix, rest)) = data.split_at_checked(2) else {
            return Err(violation(format!(
                "the {name} (channel {ch}) opened with {} byte(s), not its 2-byte port number",
                data.len()
            )));
        };
        let got = u16::from_le_bytes([prefix[0], prefix[1]]);
        if got != p.port {
            return Err(violation(format!(
                "the {name} (channel {ch}) opened for port {got}"
            )));
        }
        p.opened[kind] = true;
        data = rest;
    }
    if kind == 0 {
        if let Some(w) = &mut p.to_user
            && w.write_all(data).await.is_err()
        {
            p.to_user = None;
        }
    } else {
        let room = MAX_ERROR.saturating_sub(p.error.len());
        p.error.extend_from_slice(&data[..data.len().min(room)]);
        if !p.error.is_empty()
            && let Some(tx) = p.error_tx.take()
        {
            let _ = tx.send(String::from_utf8_lossy(&p.error).into_owned());
        }
    }
    Ok(())
}
