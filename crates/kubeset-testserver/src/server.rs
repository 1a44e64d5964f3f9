//! Replicas: one listener each on 127.0.0.1, an accept loop with
//! per-connection control, and `down`/`up` that really close and reopen
//! the port.
//!
//! Every connection, here and on the admin endpoint, is served by
//! [`serve_bounded`] under the server's [`Bounds`] and holds one of its
//! [`Connections`](crate::conns::Connections) slots.
//!
//! **Invariant:** after `down()` returns, the listening socket is closed
//! (connections are refused) and every connection of the replica has been
//! told to drop, which ends its watches.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use ::http::{Request, Response};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::bounds::{Bounds, H2_STREAM_WINDOW};
use crate::conns::{ConnHandle, Slot};
use crate::faults::{FaultState, Mode};
use crate::http;
use crate::inflight::Guarded;
use crate::shared::Shared;
use crate::wire::Body;

struct Running {
    cancel: CancellationToken,
    task: JoinHandle<()>,
}

/// One replica: a port, its fault state and its accept loop.
pub(crate) struct Replica {
    pub(crate) index: usize,
    pub(crate) addr: SocketAddr,
    pub(crate) faults: Arc<FaultState>,
    pub(crate) tls: bool,
    shared: Arc<Shared>,
    acceptor: Option<TlsAcceptor>,
    running: tokio::sync::Mutex<Option<Running>>,
    /// Cancelled when the whole server shuts down.
    root: CancellationToken,
}

/// Binds with SO_REUSEADDR so `up()` can take the same port back at once.
pub(crate) async fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let mut last = None;
    // The old socket may linger briefly after `down()`; retry for ~2 s.
    for _ in 0..40 {
        let sock = if addr.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        sock.set_reuseaddr(true)?;
        match sock.bind(addr).and_then(|()| sock.listen(1024)) {
            Ok(l) => return Ok(l),
            Err(e) if e.kind() == io::ErrorKind::AddrInUse && addr.port() != 0 => {
                last = Some(e);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::AddrInUse, "address in use")))
}

impl Replica {
    /// Binds the replica's port and starts serving.
    pub(crate) async fn start(
        index: usize,
        addr: SocketAddr,
        shared: Arc<Shared>,
        acceptor: Option<TlsAcceptor>,
        root: CancellationToken,
    ) -> io::Result<Arc<Self>> {
        let listener = bind(addr).await?;
        let addr = listener.local_addr()?;
        let r = Arc::new(Self {
            index,
            addr,
            faults: Arc::new(FaultState::new()),
            tls: acceptor.is_some(),
            shared,
            acceptor,
            running: tokio::sync::Mutex::new(None),
            root,
        });
        r.spawn(listener).await;
        Ok(r)
    }

    async fn spawn(self: &Arc<Self>, listener: TcpListener) {
        let cancel = self.root.child_token();
        let task = tokio::spawn(accept_loop(self.clone(), listener, cancel.clone()));
        *self.running.lock().await = Some(Running { cancel, task });
    }

    /// `http://127.0.0.1:port` or `https://…`.
    pub(crate) fn url(&self) -> String {
        format!(
            "{}://{}",
            if self.tls { "https" } else { "http" },
            self.addr
        )
    }

    /// Closes the listener and drops every open connection.
    pub(crate) async fn down(&self) {
        self.faults.set_mode(Mode::Down);
        if let Some(run) = self.running.lock().await.take() {
            run.cancel.cancel();
            let _ = run.task.await;
        }
    }

    /// Reopens the same port (if down) and serves normally again.
    pub(crate) async fn up(self: &Arc<Self>) -> io::Result<()> {
        let mut running = self.running.lock().await;
        if running.is_none() {
            let listener = bind(self.addr).await?;
            let cancel = self.root.child_token();
            let task = tokio::spawn(accept_loop(self.clone(), listener, cancel.clone()));
            *running = Some(Running { cancel, task });
        }
        self.faults.set_mode(Mode::Up);
        Ok(())
    }
}

async fn accept_loop(replica: Arc<Replica>, listener: TcpListener, cancel: CancellationToken) {
    loop {
        tokio::select! {
            () = cancel.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    // Past the bound the connection is closed at once.
                    let Some(slot) = replica.shared.conns.admit() else {
                        drop(stream);
                        continue;
                    };
                    tokio::spawn(serve_connection(replica.clone(), stream, slot, cancel.child_token()));
                }
                Err(e) => {
                    tracing::debug!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
        }
    }
    drop(listener);
}

async fn serve_connection(
    replica: Arc<Replica>,
    stream: TcpStream,
    slot: Slot,
    cancel: CancellationToken,
) {
    let local = replica.addr;
    let shared = replica.shared.clone();
    let faults = replica.faults.clone();
    let work = async move {
        // A hung replica accepts but does nothing, not even the TLS
        // handshake; the bounds start when it serves.
        if faults.wait_not_hung().await == Mode::Down {
            return;
        }
        let bounds = shared.conns.bounds;
        let acceptor = replica.acceptor.clone();
        let handler = move |req| http::handle(req, shared.clone(), faults.clone(), local);
        serve_bounded(stream, acceptor.as_ref(), bounds, handler).await;
    };
    tokio::select! {
        () = cancel.cancelled() => {}
        () = work => {}
    }
    drop(slot);
}

/// An accepted stream that tells `first` when its first bytes arrive.
struct FirstByte<T> {
    inner: T,
    first: Option<Arc<Notify>>,
}

impl<T> FirstByte<T> {
    fn new(inner: T, first: Arc<Notify>) -> Self {
        Self {
            inner,
            first: Some(first),
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for FirstByte<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before
            && let Some(first) = self.first.take()
        {
            first.notify_one();
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for FirstByte<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// One request open on a connection, from its head until its answer's
/// body is sent or dropped: counted in the connection's [`Open`].
struct OpenRequest(Arc<watch::Sender<usize>>);

impl OpenRequest {
    fn new(open: &Arc<watch::Sender<usize>>) -> Self {
        open.send_modify(|n| *n += 1);
        Self(open.clone())
    }
}

impl Drop for OpenRequest {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// Resolves once no request has been open on the connection for `idle`
/// (Go's `IdleTimeout`, which its HTTP/2 server applies to a connection
/// without open streams; hyper's HTTP/2 has no such clock).
async fn idle_for(mut open: watch::Receiver<usize>, idle: Duration) {
    loop {
        if *open.borrow_and_update() == 0 {
            if tokio::time::timeout(idle, open.changed()).await.is_err() {
                return;
            }
        } else if open.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// How long an idle connection told to close (GOAWAY on HTTP/2) may take
/// to finish (Go's HTTP/2 server: `goAwayTimeout`, 1 s).
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// A connection's stream after the TLS handshake, if any.
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// hyper's builder with the bounds: HTTP/1 heads within `bounds.idle`;
/// HTTP/2 streams, windows and frames as kube-apiserver's.
fn builder(bounds: Bounds) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(bounds.idle);
    let streams = bounds.h2_max_streams.max(1);
    builder
        .http2()
        .max_concurrent_streams(streams)
        .initial_stream_window_size(H2_STREAM_WINDOW)
        .initial_connection_window_size(H2_STREAM_WINDOW.saturating_mul(streams))
        .max_frame_size(H2_STREAM_WINDOW)
        // What an HTTP/2 stream buffers ahead of its flow-control window
        // (400 KB by default), so that a stuck watch stream holds little.
        .max_send_buf_size(64 * 1024);
    builder
}

/// Serves one accepted connection (HTTP/1.1 or h2, with upgrades) under
/// `bounds`: the TLS handshake within `bounds.handshake`; the first
/// request's first byte within `bounds.idle` after it and its head within
/// `bounds.header` of that byte (this also covers hyper's protocol
/// sniffing, which has no timeout of its own); later heads within
/// `bounds.idle` of the previous answer (hyper's `header_read_timeout`).
/// A phase that overruns closes the connection without an answer, as
/// Go's `http.Server` does. A connection on which no request has been
/// open for `bounds.idle` is closed too (an HTTP/2 one with GOAWAY), and
/// HTTP/2 takes kube-apiserver's settings ([`builder`]).
///
/// Go gives a new connection `ReadHeaderTimeout` from its first moment;
/// here a connection that has sent nothing yet is idle, not slow: clients
/// (hyper's, Go's) dial ahead and park connections unused in their pools,
/// and closing one at 32 s races with its first request (a reset that
/// reqwest does not retry). Idle connections are closed at the same 90 s
/// as kept-alive ones, which is when clients drop them.
pub(crate) async fn serve_bounded<F, Fut>(
    stream: TcpStream,
    acceptor: Option<&TlsAcceptor>,
    bounds: Bounds,
    handler: F,
) where
    F: Fn(Request<Incoming>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Response<Body>, Infallible>> + Send + 'static,
{
    let _ = stream.set_nodelay(true);
    let started = Arc::new(Notify::new());
    let seen = started.clone();
    let first_byte = Arc::new(Notify::new());
    let closer = CancellationToken::new();
    let handle = ConnHandle::new(closer.clone());
    let open = Arc::new(watch::Sender::new(0usize));
    let idle = idle_for(open.subscribe(), bounds.idle);
    let svc = service_fn(move |mut req: Request<Incoming>| {
        seen.notify_one();
        let request = OpenRequest::new(&open);
        if req.version() < ::http::Version::HTTP_2 {
            req.extensions_mut().insert(handle.clone());
        }
        let answer = handler(req);
        async move {
            let response = answer.await?;
            Ok::<_, Infallible>(Guarded::wrap(response, request))
        }
    });
    // The first request: its first byte within the idle timeout, its head
    // within the header timeout of that byte.
    let first_head = async {
        if tokio::time::timeout(bounds.idle, first_byte.notified())
            .await
            .is_ok()
            && tokio::time::timeout(bounds.header, started.notified())
                .await
                .is_ok()
        {
            std::future::pending::<()>().await;
        }
    };
    let io: Box<dyn Io> = match acceptor {
        Some(acceptor) => {
            let Ok(Ok(tls)) = tokio::time::timeout(bounds.handshake, acceptor.accept(stream)).await
            else {
                return;
            };
            Box::new(FirstByte::new(tls, first_byte.clone()))
        }
        None => Box::new(FirstByte::new(stream, first_byte.clone())),
    };
    let builder = builder(bounds);
    let conn = builder.serve_connection_with_upgrades(TokioIo::new(io), svc);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        () = first_head => return,
        () = closer.cancelled() => return,
        () = idle => {}
    }
    // Idle: GOAWAY on HTTP/2 (a plain close on HTTP/1), then a short wait
    // for the connection to end.
    conn.as_mut().graceful_shutdown();
    let _ = tokio::time::timeout(CLOSE_GRACE, conn).await;
}
