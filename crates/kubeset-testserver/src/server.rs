//! Replicas: one listener each on 127.0.0.1, an accept loop with
//! per-connection control, and `down`/`up` that really close and reopen
//! the port.
//!
//! **Invariant:** after `down()` returns, the listening socket is closed
//! (connections are refused) and every connection of the replica has been
//! told to drop, which ends its watches.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::faults::{FaultState, Mode};
use crate::http::{self, Shared};

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
                    tokio::spawn(serve_connection(replica.clone(), stream, cancel.child_token()));
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

async fn serve_connection(replica: Arc<Replica>, stream: TcpStream, cancel: CancellationToken) {
    let _ = stream.set_nodelay(true);
    let local = replica.addr;
    let shared = replica.shared.clone();
    let faults = replica.faults.clone();
    let work = async move {
        // A hung replica accepts but does nothing, not even the TLS handshake.
        if faults.wait_not_hung().await == Mode::Down {
            return;
        }
        let svc = service_fn(move |req| http::handle(req, shared.clone(), faults.clone(), local));
        let builder = auto::Builder::new(TokioExecutor::new());
        match &replica.acceptor {
            Some(acceptor) => {
                let Ok(tls) = acceptor.accept(stream).await else {
                    return;
                };
                let _ = builder
                    .serve_connection_with_upgrades(TokioIo::new(tls), svc)
                    .await;
            }
            None => {
                let _ = builder
                    .serve_connection_with_upgrades(TokioIo::new(stream), svc)
                    .await;
            }
        }
    };
    tokio::select! {
        () = cancel.cancelled() => {}
        () = work => {}
    }
}
