//! How long a connection may take over each phase, how many connections
//! are served at once, and how much a watch may queue: the numbers, with
//! where kube-apiserver 1.35 takes them from. Pure data; `server.rs`,
//! `http.rs` and `watch.rs` apply them.

use std::time::Duration;

/// The serving bounds of one server (every replica and the admin endpoint).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounds {
    /// From the accepted TCP connection to the end of the TLS handshake.
    /// Go's `http.Server` bounds the handshake by the smallest positive
    /// of its read/write timeouts: kube-apiserver sets only
    /// `ReadHeaderTimeout`, so 32 s (`secure_serving.go`).
    pub(crate) handshake: Duration,
    /// From the first byte of a connection's first request to the end of
    /// its head (this also covers hyper's HTTP/1-or-2 sniffing, which has
    /// no timeout of its own). kube-apiserver: `ReadHeaderTimeout: 32 *
    /// time.Second` (Go counts it from the connection's first moment; a
    /// connection that has sent nothing yet is bounded by `idle` here, see
    /// `server::serve_bounded`).
    pub(crate) header: Duration,
    /// Until the first request's first byte has arrived (from the end of
    /// the handshake), and each later request's head on a kept-alive
    /// HTTP/1.1 connection (from the end of the previous answer): Go
    /// waits `IdleTimeout` (kube-apiserver: 90 s, "matches
    /// http.DefaultTransport keep-alive timeout") for the next request and
    /// then `ReadHeaderTimeout` for its head; hyper has one clock for both,
    /// so this is the 90 s. Clients drop idle connections at 90 s too.
    /// An HTTP/2 connection with no stream open for this long is sent
    /// GOAWAY and closed (Go's HTTP/2 server takes the same `IdleTimeout`).
    pub(crate) idle: Duration,
    /// Reading a request body: past it the request is answered `504
    /// Timeout` and the connection closed, as kube-apiserver's timeout
    /// filter answers a non-long-running request after `--request-timeout`
    /// (default 1 minute).
    pub(crate) body: Duration,
    /// Connections served at once, over every replica and the admin
    /// endpoint; one more is accepted and closed at once (the client sees
    /// the connection reset before any answer). kube-apiserver has no such
    /// number (Go raises the process's file limit instead); ours refuses a
    /// flood at the door rather than at the descriptor limit.
    pub(crate) max_connections: usize,
    /// HTTP/2 streams a connection may have open at once (the
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` it announces; a stream past it is
    /// refused). kube-apiserver: 100 unless
    /// `--http2-max-streams-per-connection` is set, "to match
    /// http2.initialMaxConcurrentStreams used by clients".
    pub(crate) h2_max_streams: u32,
    /// Read-only requests (`GET`, `HEAD`) served at once, long-running
    /// ones not counted; one more is answered `429` with `Retry-After: 1`
    /// (kube-apiserver's `--max-requests-inflight`, 400; `inflight.rs`).
    pub(crate) max_read_only_inflight: usize,
    /// The same for every other method (`--max-mutating-requests-inflight`, 200).
    pub(crate) max_mutating_inflight: usize,
    /// Bytes a watch may have queued and not yet taken by the connection
    /// (an event larger than this is sent a frame at a time).
    pub(crate) watch_queue_bytes: usize,
    /// How long a watch may wait for room in its queue before it is ended
    /// (the stream closes without an ERROR event, as kube-apiserver's
    /// cacher closes a watcher whose buffer stays full: "Forcing watcher
    /// close due to unresponsiveness"; the client re-watches from its last
    /// resourceVersion).
    pub(crate) slow_watcher: Duration,
}

/// What an HTTP/2 stream may send ahead of the server's reading, and the
/// largest frame it reads: kube-apiserver's 256 KiB ("at least 99% of
/// serialized resources in surveyed clusters were smaller than 256kb");
/// a connection's window is this times [`Bounds::h2_max_streams`].
pub(crate) const H2_STREAM_WINDOW: u32 = 256 * 1024;

impl Default for Bounds {
    fn default() -> Self {
        Self {
            handshake: Duration::from_secs(32),
            header: Duration::from_secs(32),
            idle: Duration::from_secs(90),
            body: Duration::from_secs(60),
            max_connections: 4096,
            h2_max_streams: 100,
            max_read_only_inflight: 400,
            max_mutating_inflight: 200,
            watch_queue_bytes: 64 * 1024,
            slow_watcher: Duration::from_secs(10),
        }
    }
}
