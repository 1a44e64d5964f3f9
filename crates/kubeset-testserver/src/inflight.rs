//! kube-apiserver's max-in-flight filter: at most so many read-only and so
//! many mutating requests served at once (`--max-requests-inflight` 400,
//! `--max-mutating-requests-inflight` 200); one more is answered `429`
//! with `Retry-After: 1` at once, and long-running requests (watches,
//! exec, attach, port-forward, proxy, logs) are not counted.
//!
//! A request holds its slot until its answer's body is sent or dropped
//! (Go's handler returns once it has written the body), through
//! [`Guarded`]; the HTTP/2 idle clock of `server::serve_bounded` counts
//! open streams the same way.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, Method, Response, header};
use http_body_util::BodyExt;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::wire::{Body, text_response};

/// What the filter sees in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Not counted: a watch, or the subresources `exec`, `attach`,
    /// `portforward`, `proxy` and `log` (kube-apiserver's
    /// `BasicLongRunningRequestCheck`).
    LongRunning,
    /// `GET` and `HEAD` (the verbs `get`, `list`).
    ReadOnly,
    /// Every other method.
    Mutating,
}

/// Subresources that are long-running.
const LONG_RUNNING: [&str; 5] = ["exec", "attach", "portforward", "proxy", "log"];

/// The kind of a request, from its method, path and query as
/// kube-apiserver's `RequestInfo` reads them: `?watch=` with any value but
/// `false` or `0`, a legacy `/watch/` path, or a long-running subresource
/// (`namespaces/{ns}/{resource}/{name}/{sub}` or `{resource}/{name}/{sub}`).
pub(crate) fn kind_of(method: &Method, path: &str, query: Option<&str>) -> Kind {
    let watch_param = query.unwrap_or_default().split('&').any(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        key == "watch" && !matches!(value.to_ascii_lowercase().as_str(), "false" | "0")
    });
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let rest = match segs.first() {
        Some(&"api") => segs.get(2..),
        Some(&"apis") => segs.get(3..),
        _ => None,
    }
    .unwrap_or_default();
    let rest = match rest {
        ["namespaces", _, next, more @ ..] if !matches!(*next, "status" | "finalize") => {
            let mut r = vec![*next];
            r.extend_from_slice(more);
            r
        }
        other => other.to_vec(),
    };
    let long_running = watch_param
        || rest.first() == Some(&"watch")
        || rest.get(2).is_some_and(|sub| LONG_RUNNING.contains(sub));
    if long_running {
        Kind::LongRunning
    } else if matches!(*method, Method::GET | Method::HEAD) {
        Kind::ReadOnly
    } else {
        Kind::Mutating
    }
}

/// The read-only and mutating slots of one server (every replica).
pub(crate) struct InFlight {
    read_only: Arc<Semaphore>,
    mutating: Arc<Semaphore>,
}

impl InFlight {
    pub(crate) fn new(read_only: usize, mutating: usize) -> Self {
        Self {
            read_only: Arc::new(Semaphore::new(read_only.max(1))),
            mutating: Arc::new(Semaphore::new(mutating.max(1))),
        }
    }

    /// A slot for a request of `kind`: `Ok(None)` for a long-running one,
    /// `Err` when every slot of its kind is taken.
    pub(crate) fn admit(&self, kind: Kind) -> Result<Option<OwnedSemaphorePermit>, Refused> {
        let slots = match kind {
            Kind::LongRunning => return Ok(None),
            Kind::ReadOnly => &self.read_only,
            Kind::Mutating => &self.mutating,
        };
        match slots.clone().try_acquire_owned() {
            Ok(permit) => Ok(Some(permit)),
            Err(_) => {
                tracing::debug!(?kind, "request refused: too many requests in flight");
                Err(Refused)
            }
        }
    }
}

/// Every slot of a request's kind is taken.
#[derive(Debug)]
pub(crate) struct Refused;

impl Refused {
    /// kube-apiserver's answer (`tooManyRequests` of its max-in-flight
    /// filter, through Go's `http.Error`): plain text, `Retry-After: 1`.
    pub(crate) fn response(self) -> Response<Body> {
        too_many_requests()
    }
}

fn too_many_requests() -> Response<Body> {
    let mut r = text_response(429, "Too many requests, please try again later.\n");
    let headers = r.headers_mut();
    headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// A response body that holds `guard` until it is sent or dropped.
pub(crate) struct Guarded<G> {
    body: Body,
    _guard: G,
}

impl<G: Send + Unpin + 'static> Guarded<G> {
    /// `response` with `guard` held by its body.
    pub(crate) fn wrap(response: Response<Body>, guard: G) -> Response<Body> {
        response.map(|body| {
            Guarded {
                body,
                _guard: guard,
            }
            .boxed_unsync()
        })
    }
}

impl<G: Unpin> HttpBody for Guarded<G> {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_sorted_as_kube_apiserver_sorts_them() {
        let cases = [
            (
                Method::GET,
                "/api/v1/namespaces/d/pods",
                None,
                Kind::ReadOnly,
            ),
            (Method::HEAD, "/version", None, Kind::ReadOnly),
            (
                Method::GET,
                "/api/v1/pods",
                Some("watch=true"),
                Kind::LongRunning,
            ),
            (
                Method::GET,
                "/api/v1/pods",
                Some("a=b&watch=1"),
                Kind::LongRunning,
            ),
            (
                Method::GET,
                "/api/v1/pods",
                Some("watch=false"),
                Kind::ReadOnly,
            ),
            (Method::GET, "/api/v1/pods", Some("watch=0"), Kind::ReadOnly),
            (Method::GET, "/api/v1/watch/pods", None, Kind::LongRunning),
            (
                Method::GET,
                "/apis/apps/v1/watch/namespaces/d/deployments",
                None,
                Kind::LongRunning,
            ),
            (
                Method::GET,
                "/api/v1/namespaces/d/pods/p/log",
                None,
                Kind::LongRunning,
            ),
            (
                Method::POST,
                "/api/v1/namespaces/d/pods/p/exec",
                None,
                Kind::LongRunning,
            ),
            (
                Method::GET,
                "/api/v1/nodes/n/proxy",
                None,
                Kind::LongRunning,
            ),
            // A ConfigMap named `log` is not the log subresource.
            (
                Method::GET,
                "/api/v1/namespaces/d/configmaps/log",
                None,
                Kind::ReadOnly,
            ),
            (
                Method::PUT,
                "/api/v1/namespaces/d/status",
                None,
                Kind::Mutating,
            ),
            (
                Method::POST,
                "/api/v1/namespaces/d/configmaps",
                None,
                Kind::Mutating,
            ),
            (
                Method::DELETE,
                "/apis/apps/v1/namespaces/d/deployments/x",
                None,
                Kind::Mutating,
            ),
            (
                Method::PATCH,
                "/api/v1/namespaces/d/pods/p/status",
                None,
                Kind::Mutating,
            ),
        ];
        for (method, path, query, kind) in cases {
            assert_eq!(
                kind_of(&method, path, query),
                kind,
                "{method} {path} {query:?}"
            );
        }
    }
}
