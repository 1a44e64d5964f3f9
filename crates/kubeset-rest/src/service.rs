//! A swappable transport: requests sent through a `tower::Service` instead
//! of reqwest (kube-rs's `Client::new(service, namespace)`).
//!
//! The default transport stays reqwest's pooled client; a service is for
//! tests (a `tower_test::mock` pair) and for stacks of tower layers in front
//! of a connection the user owns. Through a service:
//! - requests carry the path and query only (`/api/v1/pods?limit=1`) unless
//!   the config has a base URL, as kube-rs's `Client::new` sends them;
//! - WebSocket upgrades (exec, attach, port-forward) are not available;
//! - a service error is final (no retry: it is not a connection error this
//!   layer can classify), while status retries follow the config.

use std::{
    error::Error as StdError,
    fmt,
    pin::Pin,
    sync::Mutex,
    task::{Context, Poll},
};

use bytes::Bytes;
use futures::future::BoxFuture;
use http_body::{Body as HttpBody, Frame, SizeHint};
use http_body_util::{BodyExt, combinators::UnsyncBoxBody};
use tower::{Service, ServiceExt, buffer::Buffer, util::BoxService};

/// The error type a service's failures are carried in.
pub type BoxError = Box<dyn StdError + Send + Sync>;

/// Requests a [`Buffer`]ed service holds before callers wait (kube-rs's
/// figure).
const BUFFER_CAPACITY: usize = 1024;

/// The body of requests to, and responses from, a service transport
/// (kube-rs's `kube::client::Body`).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use kubeset_rest::service::Body;
/// let body = Body::from(b"{\"kind\":\"Pod\"}".to_vec());
/// assert_eq!(&body.collect_bytes().await.unwrap()[..], b"{\"kind\":\"Pod\"}");
/// # }
/// ```
pub struct Body {
    kind: Kind,
}

enum Kind {
    Once(Option<Bytes>),
    Wrap(UnsyncBoxBody<Bytes, BoxError>),
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Once(Some(b)) => f.debug_tuple("Body").field(&b.len()).finish(),
            Kind::Once(None) => f.write_str("Body(empty)"),
            Kind::Wrap(_) => f.write_str("Body(streaming)"),
        }
    }
}

impl Body {
    /// A body with no bytes.
    pub fn empty() -> Self {
        Self {
            kind: Kind::Once(None),
        }
    }

    /// Any `http_body::Body` of `Bytes` (hyper's `Incoming`, a
    /// `Full<Bytes>`, a stream body) as a `Body`.
    ///
    /// ```
    /// use kubeset_rest::service::Body;
    /// let body = Body::wrap_body(http_body_util::Full::new(bytes::Bytes::from_static(b"{}")));
    /// # let _ = body;
    /// ```
    pub fn wrap_body<B>(body: B) -> Self
    where
        B: HttpBody<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        Self {
            kind: Kind::Wrap(body.map_err(Into::into).boxed_unsync()),
        }
    }

    /// The whole body, read to its end (kube-rs's `collect_bytes`).
    pub async fn collect_bytes(self) -> Result<Bytes, BoxError> {
        match self.kind {
            Kind::Once(b) => Ok(b.unwrap_or_default()),
            Kind::Wrap(body) => Ok(body.collect().await?.to_bytes()),
        }
    }

    /// The next chunk of data (trailers skipped), `None` at the end.
    pub(crate) async fn chunk(&mut self) -> Result<Option<Bytes>, BoxError> {
        loop {
            match self.frame().await {
                None => return Ok(None),
                Some(Err(e)) => return Err(e),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        return Ok(Some(data));
                    }
                }
            }
        }
    }
}

impl Default for Body {
    fn default() -> Self {
        Self::empty()
    }
}

impl From<Bytes> for Body {
    fn from(bytes: Bytes) -> Self {
        Self {
            kind: Kind::Once((!bytes.is_empty()).then_some(bytes)),
        }
    }
}

impl From<Vec<u8>> for Body {
    fn from(bytes: Vec<u8>) -> Self {
        Bytes::from(bytes).into()
    }
}

impl From<String> for Body {
    fn from(text: String) -> Self {
        Bytes::from(text).into()
    }
}

impl From<&'static str> for Body {
    fn from(text: &'static str) -> Self {
        Bytes::from_static(text.as_bytes()).into()
    }
}

impl HttpBody for Body {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match &mut self.kind {
            Kind::Once(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Kind::Wrap(body) => Pin::new(body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Once(b) => b.is_none(),
            Kind::Wrap(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Once(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Wrap(body) => body.size_hint(),
        }
    }
}

type ResponseFuture = BoxFuture<'static, Result<http::Response<Body>, BoxError>>;

/// A service as the client keeps it: boxed and buffered (as kube-rs keeps
/// it), so it is `Send` and `Sync` whatever the user's service is.
///
/// The buffer's worker is a task spawned by the first request, not by the
/// constructor: a client can be built outside a tokio runtime (kube-rs's
/// `Client::new` panics there).
pub(crate) struct HttpService {
    buffer: Buffered,
    worker: Mutex<Option<BoxFuture<'static, ()>>>,
}

type Buffered = Buffer<http::Request<Body>, ResponseFuture>;

impl fmt::Debug for HttpService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HttpService")
    }
}

impl HttpService {
    /// Box and buffer `service`.
    pub(crate) fn new<S, B>(service: S) -> Self
    where
        S: Service<http::Request<Body>, Response = http::Response<B>> + Send + 'static,
        S::Future: Send + 'static,
        S::Error: Into<BoxError>,
        B: HttpBody<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let service = service
            .map_response(|resp: http::Response<B>| resp.map(Body::wrap_body))
            .map_err(Into::into);
        let (buffer, worker) = Buffer::pair(BoxService::new(service), BUFFER_CAPACITY);
        Self {
            buffer,
            worker: Mutex::new(Some(Box::pin(worker))),
        }
    }

    /// Send one request (waits for the service to be ready first).
    ///
    /// Boxed here, where its type is concrete: awaited unboxed inside the
    /// attempt loop, the buffer's projected future type defeats rustc's
    /// proof that the loop's future is `Send` ("implementation of `Send`
    /// is not general enough").
    pub(crate) fn call(&self, req: http::Request<Body>) -> ResponseFuture {
        let worker = self.worker.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(worker) = worker {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => drop(runtime.spawn(worker)),
                Err(_) => {
                    *self.worker.lock().unwrap_or_else(|p| p.into_inner()) = Some(worker);
                    return Box::pin(std::future::ready(Err(
                        "a client over a tower service sends from a tokio runtime only".into(),
                    )));
                }
            }
        }
        Box::pin(self.buffer.clone().oneshot(req))
    }
}
