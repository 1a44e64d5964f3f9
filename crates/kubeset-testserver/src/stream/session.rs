//! One exec or attach session on an upgraded connection: the client's
//! messages go to the command's stdin and terminal size, the command's
//! output goes back on its channels, then the exit `Status` on the error
//! channel and a close frame.
//!
//! **Invariant:** the session ends when the command ends, when the client
//! goes away (the command is dropped at its next await) or at
//! [`MAX_SESSION`]; every buffer between the two sides is a bounded channel.

use std::time::Duration;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};

use super::channel::{self, ERROR, Incoming, STDERR, STDIN, STDOUT};
use super::runtime::{self, Container, Stdio};
use super::{ExecTarget, Runtime};

/// Longest session.
pub(crate) const MAX_SESSION: Duration = Duration::from_secs(900);
/// Largest WebSocket message accepted from a client.
pub(crate) const MAX_MESSAGE: usize = 1 << 20;
/// Chunks in flight each way.
const DEPTH: usize = 16;

pub(crate) type Ws = WebSocketStream<TokioIo<Upgraded>>;

pub(crate) fn ws_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE))
}

pub(crate) async fn websocket(up: Upgraded) -> Ws {
    WebSocketStream::from_raw_socket(TokioIo::new(up), Role::Server, Some(ws_config())).await
}

/// Client → command: stdin chunks, terminal sizes, v5's stdin close
/// (`on_stdin_close` too). Ends on a close frame, a broken socket or the
/// end of the session; dropping `stdin` is the command's EOF.
pub(crate) async fn client_reader(
    source: &mut futures::stream::SplitStream<Ws>,
    v5: bool,
    mut stdin: Option<mpsc::Sender<Bytes>>,
    size: &watch::Sender<Option<(u16, u16)>>,
    mut on_stdin_close: impl FnMut(),
) {
    while let Some(Ok(msg)) = source.next().await {
        let data = match msg {
            Message::Binary(b) => b,
            Message::Close(_) => break,
            _ => continue,
        };
        match channel::classify(&data, v5) {
            Incoming::Stdin(d) => {
                if let Some(tx) = &stdin
                    && tx.send(data.slice_ref(d)).await.is_err()
                {
                    stdin = None;
                }
            }
            Incoming::Resize { width, height } => {
                size.send_replace(Some((width, height)));
            }
            Incoming::Close(STDIN) => {
                stdin = None;
                on_stdin_close();
            }
            Incoming::Close(_) | Incoming::Ignored => {}
        }
    }
}

/// The exit status on the error channel, then a close frame.
pub(crate) async fn finish(
    sink: &mut futures::stream::SplitSink<Ws, Message>,
    argv: &[String],
    code: i32,
) {
    let status = channel::exit_status(argv, code).to_string();
    let _ = sink
        .send(Message::Binary(
            channel::frame(ERROR, status.as_bytes()).into(),
        ))
        .await;
    let _ = sink
        .send(Message::Close(Some(CloseFrame {
            code: CloseCode::Normal,
            reason: "".into(),
        })))
        .await;
    let _ = sink.close().await;
}

/// How long after the upgrade an exec's process starts: the latency of
/// the kubelet and the container runtime that kubectl's stream setup
/// relies on (see [`run`]).
const PROCESS_START: Duration = Duration::from_millis(50);

/// Runs one exec session to its end.
pub(crate) async fn run(rt: &Runtime, ws: Ws, protocol: &'static str, t: ExecTarget) {
    let v5 = protocol == channel::V5;
    let (mut sink, mut source) = ws.split();
    let (stdin_tx, stdin_rx) = mpsc::channel::<Bytes>(DEPTH);
    let (out_tx, mut out_rx) = mpsc::channel::<(u8, Bytes)>(DEPTH);
    let (size_tx, size_rx) = watch::channel(None);
    // What the client asked to receive (with a TTY, stderr is merged).
    let wants = [t.stdout, t.stderr && !t.tty];

    let reader = client_reader(&mut source, v5, Some(stdin_tx), &size_tx, || {});

    let process = async move {
        // A real exec starts after kube-apiserver dialled the kubelet and
        // the runtime started the process; kubectl's WebSocket client
        // (client-go 1.32's, this machine's kubectl) creates its streams after its read
        // loop started and drops output that arrives first ("Unknown stream
        // id 1"). Starting at once, as nothing else here makes us wait,
        // lost `echo`'s output under load.
        tokio::time::sleep(PROCESS_START).await;
        let fs = rt.fs(&t.uid, &t.container);
        let c = Container {
            hostname: &t.pod,
            env: &t.env,
            fs: &fs,
        };
        let mut io = Stdio::new(
            t.stdin.then_some(stdin_rx),
            out_tx,
            t.tty.then_some(size_rx),
        );
        let code = runtime::run(&t.command, &mut io, &c).await;
        (code, t.command)
    };

    // Command → client, then the status and the close frame.
    let writer = async {
        let mut process = std::pin::pin!(process);
        let mut finished = None;
        loop {
            tokio::select! {
                biased;
                item = out_rx.recv() => match item {
                    Some((ch, data)) => {
                        let wanted = match ch { STDOUT => wants[0], STDERR => wants[1], _ => true };
                        if wanted && sink.send(Message::Binary(channel::frame(ch, &data).into())).await.is_err() {
                            return;
                        }
                    }
                    None => break,
                },
                done = &mut process, if finished.is_none() => finished = Some(done),
            }
        }
        let Some((code, argv)) = finished else { return };
        finish(&mut sink, &argv, code).await;
    };

    tokio::select! {
        () = writer => {}
        () = reader => {
            // The client is gone: nothing more can be delivered.
        }
        () = tokio::time::sleep(MAX_SESSION) => {}
    }
}
