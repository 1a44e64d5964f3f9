//! `pods/exec`, `pods/attach` and `pods/portforward` over WebSocket
//! (feature `ws`): kube-rs's [`Api::exec`], [`Api::attach`] and
//! [`Api::portforward`] with its names and shapes ([`AttachParams`],
//! [`AttachedProcess`], [`TerminalSize`], [`Portforwarder`]); the exit
//! status is also decoded into a code ([`exit_code`]), as kubectl uses it.
//!
//! Protocols: `v5.channel.k8s.io` (stdin half-close) with
//! `v4.channel.k8s.io` as the fallback, as client-go offers since 1.30;
//! port-forward on `v4.channel.k8s.io` (kube-rs's choice; client-go's SPDY
//! tunnel is not spoken). Connections, TLS, credentials and the choice of
//! endpoint are the REST layer's ([`RestClient::connect_websocket`](kubeset_rest::RestClient::connect_websocket)).
//!
//! **A stream is never resumed.** If its connection breaks, the readers
//! see EOF, [`AttachedProcess::take_status`] resolves to `None` and
//! [`AttachedProcess::join`] returns the error
//! ([`UpgradeError::Closed`] or
//! the WebSocket's).
//!
//! Dropping an [`AttachedProcess`] or a [`Portforwarder`] closes its
//! connection (the server ends the session); keep it until its pipes are
//! read.
//!
//! Memory is bounded: every pipe between the user and the connection
//! holds at most its `max_*_buf_size` (default 64 KiB), and a reader that
//! does not keep up slows the server (TCP backpressure), never buffers.
//!
//! ```no_run
//! # async fn demo(pods: kubeset_client::Api<kubeset_client::api::core::v1::Pod>) -> Result<(), kubeset_client::Error> {
//! use kubeset_client::ws::{AttachParams, exit_code};
//! use tokio::io::AsyncReadExt;
//! let mut p = pods.exec("web-0", ["sh", "-c", "echo hi; exit 3"], &AttachParams::default()).await?;
//! let mut out = String::new();
//! p.stdout().expect("stdout").read_to_string(&mut out).await.ok();
//! let status = p.take_status().expect("status").await;
//! assert_eq!(status.as_ref().and_then(exit_code), Some(3));
//! # Ok(()) }
//! ```

#[doc(hidden)]
pub mod fuzz_hooks;
mod portforward;
mod process;

use bytes::Bytes;
use kubeset_api::api::core::v1::Pod;
use kubeset_api::apimachinery::pkg::apis::meta::v1::Status;
use kubeset_rest::Verb;
use kubeset_rest::ws::UpgradeError;
use kubeset_rest::ws::tungstenite::error::ProtocolError;
use kubeset_rest::ws::tungstenite::protocol::CloseFrame;
use kubeset_rest::ws::tungstenite::protocol::frame::coding::CloseCode;
use kubeset_rest::ws::tungstenite::{Error as WsError, Message};

pub use portforward::Portforwarder;
pub use process::{AttachedProcess, TerminalSize, TerminalSizeSender};

use crate::{Api, Error};

/// `v5.channel.k8s.io`.
pub const V5: &str = "v5.channel.k8s.io";
/// `v4.channel.k8s.io`.
pub const V4: &str = "v4.channel.k8s.io";
/// Default size of each pipe between the user and the connection.
pub const DEFAULT_BUF_SIZE: usize = 64 << 10;

/// What an exec or attach connects (kube-rs's `AttachParams`): stdout and
/// stderr by default, no stdin, no TTY.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct AttachParams {
    /// The container; the server picks the only one when unset.
    pub container: Option<String>,
    /// Attach stdin ([`AttachedProcess::stdin`]).
    pub stdin: bool,
    /// Attach stdout.
    pub stdout: bool,
    /// Attach stderr (not with a TTY, where it is merged into stdout).
    pub stderr: bool,
    /// Allocate a TTY ([`AttachedProcess::terminal_size`]).
    pub tty: bool,
    /// Pipe size for stdin (default [`DEFAULT_BUF_SIZE`]).
    pub max_stdin_buf_size: Option<usize>,
    /// Pipe size for stdout.
    pub max_stdout_buf_size: Option<usize>,
    /// Pipe size for stderr.
    pub max_stderr_buf_size: Option<usize>,
}

impl Default for AttachParams {
    fn default() -> Self {
        Self {
            container: None,
            stdin: false,
            stdout: true,
            stderr: true,
            tty: false,
            max_stdin_buf_size: None,
            max_stdout_buf_size: None,
            max_stderr_buf_size: None,
        }
    }
}

impl AttachParams {
    /// stdin, stdout and a TTY, no stderr (kube-rs's `interactive_tty`).
    pub fn interactive_tty() -> Self {
        Self {
            stdin: true,
            stdout: true,
            stderr: false,
            tty: true,
            ..Self::default()
        }
    }
    /// The container.
    pub fn container(mut self, container: impl Into<String>) -> Self {
        self.container = Some(container.into());
        self
    }
    /// Attach stdin.
    pub fn stdin(mut self, on: bool) -> Self {
        self.stdin = on;
        self
    }
    /// Attach stdout.
    pub fn stdout(mut self, on: bool) -> Self {
        self.stdout = on;
        self
    }
    /// Attach stderr.
    pub fn stderr(mut self, on: bool) -> Self {
        self.stderr = on;
        self
    }
    /// Allocate a TTY.
    pub fn tty(mut self, on: bool) -> Self {
        self.tty = on;
        self
    }
    /// Pipe size for stdin.
    pub fn max_stdin_buf_size(mut self, size: usize) -> Self {
        self.max_stdin_buf_size = Some(size);
        self
    }
    /// Pipe size for stdout.
    pub fn max_stdout_buf_size(mut self, size: usize) -> Self {
        self.max_stdout_buf_size = Some(size);
        self
    }
    /// Pipe size for stderr.
    pub fn max_stderr_buf_size(mut self, size: usize) -> Self {
        self.max_stderr_buf_size = Some(size);
        self
    }

    /// The request's query, as kube-apiserver reads it.
    fn apply(&self, mut req: kubeset_rest::Request) -> kubeset_rest::Request {
        if let Some(c) = &self.container {
            req = req.param("container", c);
        }
        for (k, on) in [
            ("stdin", self.stdin),
            ("stdout", self.stdout),
            ("stderr", self.stderr && !self.tty),
            ("tty", self.tty),
        ] {
            if on {
                req = req.param(k, "true");
            }
        }
        req
    }
}

/// The exit code in an exec's final `Status`: 0 for `Success`, the
/// `ExitCode` cause of a `NonZeroExitCode` failure, `None` for any other
/// failure (the command did not run).
pub fn exit_code(status: &Status) -> Option<i32> {
    match status.status.as_deref() {
        Some("Success") => Some(0),
        _ if status.reason.as_deref() == Some("NonZeroExitCode") => status
            .details
            .as_ref()?
            .causes
            .as_ref()?
            .iter()
            .find(|c| c.reason.as_deref() == Some("ExitCode"))?
            .message
            .as_deref()?
            .parse()
            .ok(),
        _ => None,
    }
}

/// One read of a channel stream, as both channel protocols (exec/attach
/// and port-forward) take it.
pub(crate) enum Frame {
    /// A binary message: its channel byte and the data after it.
    Data(u8, Bytes),
    /// Nothing for the protocol: a ping or a pong (tungstenite answers
    /// pings itself).
    Skip,
    /// The server's normal Close: code 1000, 1001 or none.
    End,
}

pub(crate) fn violation(reason: String) -> UpgradeError {
    UpgradeError::Violation { reason }
}

/// Reads one message of a `protocol` stream (`v4.channel.k8s.io`, …):
/// every binary message starts with its channel byte; a text or empty
/// message, or a Close with another code, is an error that says so; a
/// connection that ends without a Close is [`UpgradeError::Closed`].
pub(crate) fn read_frame(
    msg: Result<Message, WsError>,
    protocol: &str,
) -> Result<Frame, UpgradeError> {
    let msg = match msg {
        Ok(msg) => msg,
        Err(WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake)) => {
            return Err(UpgradeError::Closed);
        }
        Err(e) => {
            return Err(UpgradeError::WebSocket {
                source: Box::new(e),
            });
        }
    };
    match msg {
        Message::Binary(b) => {
            if b.is_empty() {
                return Err(violation(format!(
                    "an empty message (no channel byte) on {protocol}"
                )));
            }
            Ok(Frame::Data(b[0], b.slice(1..)))
        }
        Message::Text(t) => Err(violation(format!(
            "a text message ({} bytes) where {protocol} sends binary channel data",
            t.len()
        ))),
        Message::Close(frame) => closed(frame),
        // Raw frames are never returned by a read.
        Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => Ok(Frame::Skip),
    }
}

/// A Close from the server: the end of the stream when normal (1000,
/// 1001 or no code), else an error naming its code and reason.
fn closed(frame: Option<CloseFrame>) -> Result<Frame, UpgradeError> {
    match frame {
        None => Ok(Frame::End),
        Some(f) if matches!(f.code, CloseCode::Normal | CloseCode::Away) => Ok(Frame::End),
        Some(f) => Err(violation(format!(
            "the server closed the stream with code {}{}",
            u16::from(f.code),
            if f.reason.is_empty() {
                String::new()
            } else {
                format!(": {}", f.reason.as_str().escape_debug())
            }
        ))),
    }
}

/// The task that owns a stream's WebSocket: aborted when dropped (so a
/// dropped process or forwarder closes its connection), joined once.
pub(crate) struct StreamTask(Option<tokio::task::JoinHandle<Result<(), UpgradeError>>>);

impl StreamTask {
    pub(crate) fn spawn(
        f: impl std::future::Future<Output = Result<(), UpgradeError>> + Send + 'static,
    ) -> Self {
        Self(Some(tokio::spawn(f)))
    }

    pub(crate) fn abort(&self) {
        if let Some(t) = &self.0 {
            t.abort();
        }
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.0
            .as_ref()
            .is_none_or(tokio::task::JoinHandle::is_finished)
    }

    pub(crate) async fn join(&mut self) -> Result<(), Error> {
        let Some(task) = self.0.take() else {
            return Ok(());
        };
        match task.await {
            Ok(r) => r.map_err(Error::from),
            Err(e) => Err(UpgradeError::Violation {
                reason: format!("stream task: {e}"),
            }
            .into()),
        }
    }
}

impl Drop for StreamTask {
    fn drop(&mut self) {
        self.abort();
    }
}

impl Api<Pod> {
    /// Runs `command` in a container of pod `name`
    /// (`GET …/pods/{name}/exec` upgraded to WebSocket).
    pub async fn exec<I, T>(
        &self,
        name: &str,
        command: I,
        ap: &AttachParams,
    ) -> Result<AttachedProcess, Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        let mut req = ap.apply(self.subresource_request(Verb::Get, "exec", name));
        for arg in command {
            req = req.param("command", arg.into());
        }
        self.open_process(&req, ap).await
    }

    /// Attaches to the main process of a container of pod `name`
    /// (`GET …/pods/{name}/attach`).
    pub async fn attach(&self, name: &str, ap: &AttachParams) -> Result<AttachedProcess, Error> {
        let req = ap.apply(self.subresource_request(Verb::Get, "attach", name));
        self.open_process(&req, ap).await
    }

    async fn open_process(
        &self,
        req: &kubeset_rest::Request,
        ap: &AttachParams,
    ) -> Result<AttachedProcess, Error> {
        let (ws, protocol) = self
            .client()
            .rest()
            .connect_websocket(req, &[V5, V4])
            .await?;
        Ok(AttachedProcess::start(ws, protocol == V5, ap))
    }

    /// Forwards `ports` of pod `name` (`GET …/pods/{name}/portforward`):
    /// one stream per port ([`Portforwarder::take_stream`]).
    pub async fn portforward(&self, name: &str, ports: &[u16]) -> Result<Portforwarder, Error> {
        let list = ports
            .iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let req = self
            .subresource_request(Verb::Get, "portforward", name)
            .param("ports", list);
        let (ws, _) = self.client().rest().connect_websocket(&req, &[V4]).await?;
        Ok(Portforwarder::start(ws, ports))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(json: serde_json::Value) -> Status {
        serde_json::from_value(json).expect("a Status")
    }

    #[test]
    fn exit_codes() {
        assert_eq!(
            exit_code(&status(
                serde_json::json!({"metadata": {}, "status": "Success"})
            )),
            Some(0)
        );
        let failed = serde_json::json!({"metadata": {}, "status": "Failure", "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": "42"}]}});
        assert_eq!(exit_code(&status(failed)), Some(42));
        let internal =
            serde_json::json!({"metadata": {}, "status": "Failure", "reason": "InternalError"});
        assert_eq!(exit_code(&status(internal)), None);
    }
}
