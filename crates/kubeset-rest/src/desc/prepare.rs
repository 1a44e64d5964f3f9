//! A description validated and fixed for any server ([`Prepared`]), and
//! the pure [`to_http`] of one.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue};

use super::defaults::{add_user_agent, with_defaults};
use super::{Defaults, Mode, RequestDesc, Spec, invalid};
use crate::{
    budget,
    error::Error,
    url::{Params, go_duration},
    verb::Verb,
};

impl<C> RequestDesc<C> {
    /// [`Spec::preflight`], for the tests.
    #[cfg(test)]
    pub(crate) fn preflight(&self) -> Result<(), Error> {
        self.spec.preflight()
    }

    /// Validate and fix the request for any server: the sticky builder
    /// error or the preflight check fails it; otherwise the escaped path,
    /// the encoded query (with the `timeout` parameter), the headers with
    /// `defaults` merged in, the body and the retry limit, all computed
    /// once per call (for `send`: a fully read response).
    pub fn prepare(self, defaults: &Defaults) -> Result<Prepared, Error> {
        self.spec.prepare_for(Mode::Do, defaults)
    }

    /// [`prepare`](Self::prepare) for a call consumed as `mode`.
    pub(crate) fn prepare_for(self, mode: Mode, defaults: &Defaults) -> Result<Prepared, Error> {
        self.spec.prepare_for(mode, defaults)
    }
}

impl Spec {
    /// client-go's preflight check: an explicitly empty namespace is
    /// refused for creation, and for GET/PUT/DELETE of a named object.
    fn preflight(&self) -> Result<(), Error> {
        if self.namespace_value() != Some("") {
            return Ok(());
        }
        match self.verb {
            Verb::Post => Err(invalid(
                "an empty namespace may not be set during creation".to_owned(),
            )),
            Verb::Get | Verb::Put | Verb::Delete if !self.resource_name.is_empty() => Err(invalid(
                "an empty namespace may not be set when a resource name is provided".to_owned(),
            )),
            _ => Ok(()),
        }
    }

    /// [`RequestDesc::prepare_for`].
    fn prepare_for(mut self, mode: Mode, defaults: &Defaults) -> Result<Prepared, Error> {
        if let Some(err) = self.err.take() {
            return Err(*err);
        }
        self.preflight()?;
        let headers = self.prepared_headers(defaults);
        let url_template = if defaults.url_templates {
            self.template_path()
        } else {
            String::new()
        };
        let mut params = std::mem::take(&mut self.params);
        if let Some(t) = self.timeout {
            params.set("timeout", &go_duration(t));
        }
        let stream_deadline = match mode {
            Mode::Do => None,
            _ => budget::stream_deadline(self.timeout.or_else(|| {
                let secs = params.get("timeoutSeconds")?.trim().parse().ok()?;
                Some(Duration::from_secs(secs))
            })),
        };
        let query = params.encode();
        let url = self.attempt_url(&query);
        // kube-rs's `get`/`get_subresource` (not its `logs`) put no `?`
        // after the path when they have no parameter.
        let bare_get =
            self.verb == Verb::Get && !self.resource_name.is_empty() && &*self.subresource != "log";
        // A URL built here holds the escaped path: not built twice.
        let path = match url {
            Some(_) => String::new(),
            None => self.escaped_path(),
        };
        Ok(Prepared {
            verb: self.verb,
            url,
            query,
            params,
            bare_get,
            path,
            url_template,
            headers,
            body: self.body.take(),
            max_retries: self.max_retries.unwrap_or(defaults.max_retries),
            timeout: self.timeout,
            stream_deadline,
            mode,
        })
    }

    /// The URL of an attempt at the base URL's origin, from a shared
    /// collection's parsed URL with the name and subresource appended, when
    /// that gives what parsing the whole path gives (see
    /// [`is_unreserved`]); `None`: each attempt parses the path.
    fn attempt_url(&self, query: &str) -> Option<url::Url> {
        let c = self.collection.as_ref()?;
        let base = c.inner.url.as_ref()?;
        let segments = [self.resource_name.as_str(), &self.subresource];
        if !self.sub_path.is_empty() || !segments.iter().all(|s| is_unreserved(s)) {
            return None;
        }
        let mut url = base.clone();
        {
            let mut path = url.path_segments_mut().ok()?;
            for segment in segments.iter().filter(|s| !s.is_empty()) {
                path.push(segment);
            }
        }
        if !query.is_empty() {
            url.set_query(Some(query));
        }
        Some(url)
    }

    /// The headers to send: `None` for a request without headers or body
    /// of its own (the client's prepared set, cloned per attempt, never
    /// built here), else its own merged with `defaults` and the body's
    /// Content-Type.
    fn prepared_headers(&mut self, defaults: &Defaults) -> Option<HeaderMap> {
        if self.headers.is_none() && self.body.is_none() {
            return None;
        }
        let mut headers = with_defaults(
            self.headers.take().map(|h| *h).unwrap_or_default(),
            &defaults.default_headers,
            &defaults.accept,
        );
        if self.body.is_some() && !headers.contains_key(http::header::CONTENT_TYPE) {
            let ct = self
                .content_type
                .map_or_else(|| defaults.content_type.clone(), HeaderValue::clone);
            headers.insert(http::header::CONTENT_TYPE, ct);
        }
        add_user_agent(&mut headers, defaults.user_agent.as_ref());
        Some(headers)
    }
}

/// `escaped` (a collection's escaped path) at `origin`, when the `url`
/// crate keeps it byte for byte and an appended segment cannot merge with
/// it (no trailing `/`): the start of [`attempt_url`].
pub(super) fn collection_url(origin: &str, escaped: &str) -> Option<url::Url> {
    let mut url = url::Url::parse(origin).ok()?;
    url.set_path(escaped);
    let kept = url.path() == escaped && !escaped.ends_with('/') && url.query().is_none();
    kept.then_some(url)
}

/// Whether `segment` is RFC 3986 unreserved characters only: our escaping
/// and the `url` crate's both leave it as it is, so appending it to a
/// parsed path gives what parsing the joined path gives.
fn is_unreserved(segment: &str) -> bool {
    segment
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// A validated request, independent of the server: what every attempt of
/// a call sends, computed once. Retargeted per attempt (failover): only the
/// origin is joined.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub(crate) verb: Verb,
    /// The attempt's URL at the base URL's origin, built once (see
    /// [`Prepared::url_at`]); `None`: built per attempt from `path` and
    /// `query`.
    pub(crate) url: Option<url::Url>,
    /// The escaped path; empty while `url` holds it (see
    /// [`Prepared::path`]).
    pub(crate) path: String,
    /// The query's parameters (a resumable watch changes one per reopen).
    pub(crate) params: Params,
    /// `params`, encoded.
    pub(crate) query: String,
    /// A GET of a named object or of its subresource (but its log): how
    /// kube-rs writes the URI of one ([`crate::kube_uri`]).
    pub(crate) bare_get: bool,
    pub(crate) url_template: String,
    /// `None`: the client's prepared default set.
    pub(crate) headers: Option<HeaderMap>,
    pub(crate) body: Option<Bytes>,
    pub(crate) max_retries: u32,
    /// Deadline of the whole request, retries included.
    pub(crate) timeout: Option<Duration>,
    /// How long a streamed body may run: the request's `timeout` (or its
    /// `timeoutSeconds` parameter) plus [`budget::STREAM_GRACE`].
    pub(crate) stream_deadline: Option<Duration>,
    pub(crate) mode: Mode,
}

impl Prepared {
    /// The verb.
    pub fn verb(&self) -> Verb {
        self.verb
    }

    /// The escaped path.
    pub fn path(&self) -> &str {
        match &self.url {
            // Built from the same escaped segments (see `attempt_url`).
            Some(url) if self.path.is_empty() => url.path(),
            _ => &self.path,
        }
    }

    /// The encoded query (empty: none).
    pub fn query(&self) -> &str {
        &self.query
    }

    /// Path and query, as sent (`/api/v1/pods?limit=5`).
    pub fn path_and_query(&self) -> String {
        if self.query.is_empty() {
            return self.path().to_owned();
        }
        format!("{}?{}", self.path(), self.query)
    }

    /// The body, if any.
    pub fn body(&self) -> Option<&Bytes> {
        self.body.as_ref()
    }

    /// Replace every value of a query parameter (a resumable watch's
    /// `resourceVersion`).
    pub(crate) fn set_param(&mut self, key: &str, value: &str) {
        self.params.set(key, value);
        self.query = self.params.encode();
        if self.path.is_empty() {
            self.path = self.path().to_owned();
        }
        self.url = None;
    }

    /// The URL built at prepare time, when it is at `origin`
    /// (`scheme://host[:port]`).
    pub(crate) fn url_at(&self, origin: &str) -> Option<&url::Url> {
        let url = self.url.as_ref()?;
        let s = url.as_str();
        (s.len() > origin.len() && s.as_bytes()[origin.len()] == b'/' && s.starts_with(origin))
            .then_some(url)
    }

    /// The headers of an attempt: the request's merged set, or the
    /// client's default one.
    pub(crate) fn headers<'a>(&'a self, defaults: &'a Defaults) -> &'a HeaderMap {
        self.headers.as_ref().unwrap_or(&defaults.request_headers)
    }
}

/// The `http::Request` of `prepared` at `origin` (`scheme://host[:port]`):
/// method, URL, headers (the request's merged set, else `defaults`' for a
/// request that set none: pass the ones it was prepared with), body. Pure:
/// no credentials (an [`Authenticator`](crate::auth::Authenticator) adds
/// its header per attempt), no client.
pub fn to_http(
    prepared: &Prepared,
    origin: &str,
    defaults: &Defaults,
) -> Result<http::Request<Bytes>, Error> {
    let uri = format!("{origin}{}", prepared.path_and_query());
    let mut req = http::Request::builder()
        .method(prepared.verb.method())
        .uri(&uri)
        .body(prepared.body.clone().unwrap_or_default())
        .map_err(|e| invalid(format!("URL {uri:?}: {e}")))?;
    *req.headers_mut() = prepared.headers(defaults).clone();
    Ok(req)
}
