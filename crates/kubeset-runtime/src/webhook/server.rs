//! The HTTPS server: accept, TLS, HTTP/1.1, bounded reading, dispatch.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use kubeset_client::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview};
use kubeset_client::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use super::certs::{Reloading, TlsStats};
use super::convert::ErasedConversion;
use super::handler::{Route, SideEffects};
use super::rotator::Background;
use super::{CertSource, Webhook, WebhookError};

/// How long a client may take to finish the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// A bound webhook server; [`run`](Self::run) serves until shutdown.
///
/// ```no_run
/// use kubeset_runtime::webhook::{CertFiles, Webhook};
/// # async fn f() -> Result<(), kubeset_runtime::webhook::WebhookError> {
/// let server = Webhook::new().bind("127.0.0.1:0", CertFiles::new("tls.crt", "tls.key")).await?;
/// let url = format!("https://{}/validate", server.local_addr());
/// let stop = tokio_util::sync::CancellationToken::new();
/// let task = tokio::spawn(server.run(stop.clone().cancelled_owned()));
/// # let _ = url;
/// stop.cancel();
/// let _ = task.await;
/// # Ok(()) }
/// ```
pub struct WebhookServer {
    listener: TcpListener,
    addr: SocketAddr,
    acceptor: TlsAcceptor,
    certs: Arc<Reloading>,
    app: Arc<App>,
    /// The Secret watch or the rotator, run beside the server.
    background: Option<Background>,
}

impl std::fmt::Debug for WebhookServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookServer")
            .field("addr", &self.addr)
            .field("certs", &self.certs)
            .finish_non_exhaustive()
    }
}

/// What every connection shares.
struct App {
    webhook: Webhook,
    certs: Arc<Reloading>,
}

impl Webhook {
    /// Loads the first certificate from `certs` (a [`CertFiles`](super::CertFiles),
    /// a [`SecretCert`](super::SecretCert), a [`CertRotator`](super::CertRotator))
    /// and binds `addr` (`127.0.0.1:0` picks a port). A Secret is read and
    /// a rotator makes its CA and registers it now; they keep the
    /// certificate current while [`WebhookServer::run`] runs.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), kubeset_runtime::webhook::WebhookError> {
    /// use kubeset_runtime::webhook::{CertFiles, Webhook};
    /// let server = Webhook::new().bind("0.0.0.0:8443", CertFiles::new("tls.crt", "tls.key")).await?;
    /// println!("listening on {}", server.local_addr());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// A file that does not load ([`WebhookError::ReadFile`],
    /// [`WebhookError::Pem`], [`WebhookError::KeyMismatch`]), a Secret that
    /// does not ([`WebhookError::SecretRead`], [`WebhookError::SecretContent`],
    /// [`WebhookError::SecretKeyMismatch`]),
    /// a rotator's settings ([`WebhookError::Lifetime`]) or registration
    /// ([`WebhookError::Register`]), or an address
    /// that does not bind ([`WebhookError::Bind`]); a conversion table
    /// that is wrong or a path with both admission and conversion handlers
    /// ([`WebhookError::Routes`]).
    pub async fn bind(
        self,
        addr: impl ToSocketAddrs + std::fmt::Debug,
        certs: impl Into<CertSource>,
    ) -> Result<WebhookServer, WebhookError> {
        self.check_routes()?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let (certs, background) = certs.into().start(provider.clone()).await?;
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|source| WebhookError::Tls { source })?
            .with_no_client_auth()
            .with_cert_resolver(certs.clone());
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let bind_err = |source| WebhookError::Bind {
            addr: format!("{addr:?}"),
            source,
        };
        let listener = TcpListener::bind(&addr).await.map_err(bind_err)?;
        let local = listener.local_addr().map_err(bind_err)?;
        Ok(WebhookServer {
            listener,
            addr: local,
            acceptor: TlsAcceptor::from(Arc::new(config)),
            certs: certs.clone(),
            app: Arc::new(App {
                webhook: self,
                certs,
            }),
            background,
        })
    }
}

impl Webhook {
    fn check_routes(&self) -> Result<(), WebhookError> {
        for (path, conversion) in &self.conversions {
            if self.routes.contains_key(path) {
                return Err(WebhookError::Routes {
                    path: path.clone(),
                    reason: "it has both admission and conversion handlers".to_owned(),
                });
            }
            conversion.check().map_err(|e| WebhookError::Routes {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        }
        Ok(())
    }
}

impl WebhookServer {
    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The serving certificate's generation and handshake counts.
    pub fn tls_stats(&self) -> TlsStats {
        self.certs.stats()
    }

    /// Serves until `shutdown` completes; then stops accepting, lets each
    /// connection finish the request it is answering and closes it.
    pub async fn run(mut self, shutdown: impl Future<Output = ()> + Send) {
        let stop = CancellationToken::new();
        let mut connections = JoinSet::new();
        let background = self.background.take().map(tokio::spawn);
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                accepted = self.listener.accept() => match accepted {
                    Ok((tcp, peer)) => {
                        let conn = Connection {
                            acceptor: self.acceptor.clone(),
                            app: self.app.clone(),
                            stop: stop.clone(),
                        };
                        connections.spawn(conn.serve(tcp, peer));
                    }
                    Err(e) => {
                        // Out of descriptors and the like: wait, then go on.
                        tracing::warn!("webhook: accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                },
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        stop.cancel();
        while connections.join_next().await.is_some() {}
        if let Some(task) = background {
            task.abort();
        }
    }
}

struct Connection {
    acceptor: TlsAcceptor,
    app: Arc<App>,
    stop: CancellationToken,
}

impl Connection {
    async fn serve(self, tcp: TcpStream, peer: SocketAddr) {
        // The generation is read before the handshake: if a reload slips in
        // between, the connection is closed once more than needed, never less.
        let generation = self.app.certs.refresh();
        let tls = match tokio::time::timeout(HANDSHAKE_TIMEOUT, self.acceptor.accept(tcp)).await {
            Ok(Ok(tls)) => tls,
            Ok(Err(e)) => {
                tracing::debug!("webhook: TLS handshake with {peer} failed: {e}");
                return;
            }
            Err(_) => {
                tracing::debug!("webhook: TLS handshake with {peer} timed out");
                return;
            }
        };
        let app = self.app.clone();
        let service = hyper::service::service_fn(move |req| {
            let app = app.clone();
            async move { Ok::<_, Infallible>(app.answer(req, generation).await) }
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(HEADER_TIMEOUT);
        let conn = builder.serve_connection(TokioIo::new(tls), service);
        tokio::pin!(conn);
        let result = tokio::select! {
            result = conn.as_mut() => result,
            () = self.stop.cancelled() => {
                conn.as_mut().graceful_shutdown();
                conn.await
            }
        };
        if let Err(e) = result {
            tracing::debug!("webhook: connection from {peer}: {e}");
        }
    }
}

type Body = Full<Bytes>;

fn plain(status: StatusCode, message: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(message)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn json(review: &impl Serialize) -> Response<Body> {
    match serde_json::to_vec(review) {
        Ok(bytes) => {
            let mut response = Response::new(Full::new(Bytes::from(bytes)));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        }
        Err(e) => plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("serializing the review: {e}"),
        ),
    }
}

impl App {
    /// One HTTP request → one HTTP response; connections made with an older
    /// certificate are told to close after it.
    async fn answer(&self, req: Request<Incoming>, generation: usize) -> Response<Body> {
        let mut response = self.answer_inner(req).await;
        if self.certs.refresh() > generation {
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }

    async fn answer_inner(&self, req: Request<Incoming>) -> Response<Body> {
        let path = req.uri().path().to_owned();
        if let Some(conversion) = self.webhook.conversions.get(&path) {
            return self.answer_conversion(&path, conversion.clone(), req).await;
        }
        let Some(routes) = self.webhook.routes.get(&path) else {
            return plain(StatusCode::NOT_FOUND, format!("no webhook at {path}"));
        };
        let review: AdmissionReview<serde_json::Value> =
            match self.read_review(&path, "AdmissionReview", req).await {
                Ok(review) => review,
                Err(response) => return response,
            };
        let Ok(request) = AdmissionRequest::try_from(review) else {
            return plain(
                StatusCode::BAD_REQUEST,
                "the AdmissionReview has no request".to_owned(),
            );
        };
        let side_effects = self
            .webhook
            .side_effects
            .get(&path)
            .copied()
            .unwrap_or_default();
        match self.dispatch(&path, routes, side_effects, request).await {
            Ok(response) => json(&response.into_review()),
            Err(response) => response,
        }
    }

    /// The review a webhook was sent (`kind` names it in the answer): a
    /// `POST` whose body, read by [`read_body`](Self::read_body), is JSON of
    /// that shape; otherwise the answer that says why not (405, the body's
    /// refusals, or 400 naming where the JSON went wrong).
    async fn read_review<R: DeserializeOwned>(
        &self,
        path: &str,
        kind: &str,
        req: Request<Incoming>,
    ) -> Result<R, Response<Body>> {
        if req.method() != Method::POST {
            return Err(plain(
                StatusCode::METHOD_NOT_ALLOWED,
                format!("{} {path}: a webhook takes POST", req.method()),
            ));
        }
        let body = self.read_body(req).await?;
        let mut de = serde_json::Deserializer::from_slice(&body);
        serde_path_to_error::deserialize(&mut de).map_err(|e| {
            plain(
                StatusCode::BAD_REQUEST,
                format!("malformed {kind} at {}: {}", e.path(), e.inner()),
            )
        })
    }

    /// The body, at most `max_body` bytes (else 413), within `body_timeout` (else 408).
    async fn read_body(&self, req: Request<Incoming>) -> Result<Bytes, Response<Body>> {
        let limit = self.webhook.max_body;
        let too_large = || {
            plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the review is over the webhook's limit of {limit} bytes"),
            )
        };
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|len| len > limit as u64) {
            return Err(too_large());
        }
        let timeout = self.webhook.body_timeout;
        let read = Limited::new(req.into_body(), limit).collect();
        match tokio::time::timeout(timeout, read).await {
            Ok(Ok(collected)) => Ok(collected.to_bytes()),
            Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
            Ok(Err(e)) => Err(plain(
                StatusCode::BAD_REQUEST,
                format!("reading the request body: {e}"),
            )),
            Err(_) => Err(plain(
                StatusCode::REQUEST_TIMEOUT,
                format!("the request body did not arrive within {timeout:?}"),
            )),
        }
    }

    /// Finds the handler of the request's kind and operation and runs it
    /// under the deadline.
    async fn dispatch(
        &self,
        path: &str,
        routes: &[Route],
        side_effects: SideEffects,
        request: AdmissionRequest<serde_json::Value>,
    ) -> Result<AdmissionResponse, Response<Body>> {
        let base = AdmissionResponse::from(&request);
        let (group, kind, operation) = (&request.kind.group, &request.kind.kind, request.operation);
        let Some(route) = routes.iter().find(|r| r.matches(group, kind, operation)) else {
            let gk = if group.is_empty() {
                kind.clone()
            } else {
                format!("{kind}.{group}")
            };
            return Ok(base.deny_with_code(
                400,
                format!("the webhook at {path} has no handler for {operation} of {gk}"),
            ));
        };
        if request.dry_run && side_effects == SideEffects::Some {
            return Ok(base.deny_with_code(
                400,
                format!("the webhook at {path} has side effects and refuses a dry-run request"),
            ));
        }
        let answer = route.handler.call(request).map_err(|failure| {
            plain(
                StatusCode::BAD_REQUEST,
                format!(
                    "malformed AdmissionReview at {}: {} (the webhook at {path} reads {})",
                    failure.path, failure.message, route.kind
                ),
            )
        })?;
        let deadline = self.webhook.deadline;
        let mut task = tokio::spawn(answer);
        match tokio::time::timeout(deadline, &mut task).await {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(e)) => {
                Ok(base.deny_with_code(500, format!("the webhook handler at {path} failed: {e}")))
            }
            Err(_) => {
                task.abort();
                Ok(base.deny_with_code(
                    500,
                    format!("the webhook handler at {path} did not answer within {deadline:?}"),
                ))
            }
        }
    }

    /// A `ConversionReview` → its answer, converted off the async threads
    /// (the conversion functions are synchronous) under the deadline.
    async fn answer_conversion(
        &self,
        path: &str,
        conversion: Arc<dyn ErasedConversion>,
        req: Request<Incoming>,
    ) -> Response<Body> {
        let review: ConversionReview = match self.read_review(path, "ConversionReview", req).await {
            Ok(review) => review,
            Err(response) => return response,
        };
        let Ok(request) = ConversionRequest::from_review(review) else {
            return plain(
                StatusCode::BAD_REQUEST,
                "the ConversionReview has no request".to_owned(),
            );
        };
        let base = ConversionResponse::for_request(ConversionRequest {
            types: request.types.clone(),
            uid: request.uid.clone(),
            desired_api_version: String::new(),
            objects: Vec::new(),
        });
        let deadline = self.webhook.deadline;
        let task = tokio::task::spawn_blocking(move || conversion.convert(request));
        let response = match tokio::time::timeout(deadline, task).await {
            Ok(Ok(response)) => response,
            Ok(Err(e)) => base.failure_message(format!("the conversion at {path} failed: {e}")),
            Err(_) => base.failure_message(format!(
                "the conversion at {path} did not answer within {deadline:?}"
            )),
        };
        json(&response.into_review())
    }
}
