//! [`CollectionPath`]: a collection's path worked out once for a client
//! (built in [`desc`](crate::desc), which owns the URL rules).

use std::{fmt, sync::Arc};

/// Where a resource collection lives for one client: what
/// `abs_path(segments)`, `namespace(ns)` (when given) and `resource(r)`
/// make of a request, validated, joined and escaped once.
///
/// [`Request::collection`](crate::Request::collection) starts a request
/// there without doing that work again, so a typed API that keeps one
/// builds each request with one allocation for its path. Built with
/// [`RestClient::collection`](crate::RestClient::collection) or
/// [`Base::collection`](crate::desc::Base::collection); cheap to clone. The
/// rules are [`Request`](crate::Request)'s: an invalid namespace or
/// resource is the error of every request started from it.
#[derive(Clone)]
pub struct CollectionPath {
    pub(crate) inner: Arc<CollectionInner>,
}

pub(crate) struct CollectionInner {
    /// The base URL path it was built for (`abs_path` depends on it).
    pub(crate) base_path: Arc<str>,
    /// The arguments, to replay the builder calls when the fast path does
    /// not apply.
    pub(crate) abs: Vec<String>,
    pub(crate) namespace_arg: Option<String>,
    pub(crate) resource_arg: String,
    /// The request's state after the three builder calls.
    pub(crate) prefix: Arc<str>,
    pub(crate) namespace: Option<String>,
    pub(crate) resource: String,
    /// The builder error, if any (always an invalid request).
    pub(crate) error: Option<String>,
    /// `prefix/namespaces/<ns>/<resource>`, cleaned (resource lowercased).
    pub(crate) path: String,
    /// `path`, escaped.
    pub(crate) escaped: String,
    /// `path` with `{namespace}` for the namespace (metrics).
    pub(crate) template: String,
    /// `escaped` at the client's origin, parsed once, so that a request's
    /// URL appends its name instead of parsing its whole path again.
    /// `None` when the `url` crate would not keep `escaped` as it is.
    pub(crate) url: Option<url::Url>,
}

impl fmt::Debug for CollectionPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CollectionPath")
            .field("path", &self.inner.path)
            .field("error", &self.inner.error)
            .finish_non_exhaustive()
    }
}

impl PartialEq for CollectionPath {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&*self.inner, &*other.inner);
        a.base_path == b.base_path
            && a.abs == b.abs
            && a.namespace_arg == b.namespace_arg
            && a.resource_arg == b.resource_arg
    }
}

impl Eq for CollectionPath {}

impl CollectionPath {
    /// The collection's path (unescaped; the request builder's error, if
    /// any, is not shown here).
    pub fn path(&self) -> &str {
        &self.inner.path
    }
}
