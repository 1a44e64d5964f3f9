//! The request **description**, sans-IO: what one call sends (verb, path,
//! query, headers, body, content type, retry class, time budget), built and
//! validated with client-go's URL rules without a client, then turned into
//! an [`http::Request`] by the pure [`to_http`], as kube-core's `Request`
//! does. The transport ([`execute`](crate::Request::send)) consumes a
//! [`Prepared`] description; nothing here does I/O or reads a clock.
//!
//! ```
//! use kubeset_rest::desc::{Base, Defaults, RequestDesc, to_http};
//! use kubeset_rest::Verb;
//! let base = Base::parse("https://h:6443/p", "/api/v1")?;
//! let desc = RequestDesc::new(Verb::Get, &base)
//!     .namespace("ns")
//!     .resource("Pods")
//!     .name("web-0")
//!     .param("pretty", "true");
//! let defaults = Defaults::default();
//! let req = to_http(&desc.prepare(&defaults)?, base.origin(), &defaults)?;
//! assert_eq!(req.uri(), "https://h:6443/p/api/v1/namespaces/ns/pods/web-0?pretty=true");
//! assert_eq!(req.headers()["accept"], "application/json, */*");
//! # Ok::<(), kubeset_rest::Error>(())
//! ```

use std::{fmt, sync::Arc, time::Duration};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;

use crate::{
    budget,
    collection::{CollectionInner, CollectionPath},
    error::Error,
    url::{Params, go_duration, go_list, go_quote, join, path_escape, segment_problems},
    verb::{PatchType, Verb},
};

/// client-go's default maximum number of retries.
pub const DEFAULT_MAX_RETRIES: u32 = 10;
/// The default `Accept` header.
pub const DEFAULT_ACCEPT: &str = "application/json, */*";
/// The default request body Content-Type.
pub const DEFAULT_CONTENT_TYPE: &str = "application/json";

/// How a request is consumed; decides which transport errors are retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `send`: the whole body is read in the attempt.
    Do,
    /// `watch`: the body is streamed as events.
    Watch,
    /// `stream`: the body is streamed as bytes.
    Stream,
}

/// Where a client's requests start: the server's origin, the base URL's
/// path and the API prefix (base path + API path). Cheap to clone.
#[derive(Clone, PartialEq, Eq)]
pub struct Base(Arc<BaseInner>);

#[derive(PartialEq, Eq)]
struct BaseInner {
    /// `scheme://host[:port]`, no path.
    origin: String,
    /// `host:port` (the per-host backoff key).
    host_key: String,
    /// The base URL's path (for `abs_path`).
    base_path: Arc<str>,
    /// `join("/", base path, api path)`: every request's starting prefix.
    api_prefix: Arc<str>,
}

impl fmt::Debug for Base {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Base")
            .field("origin", &self.0.origin)
            .field("api_prefix", &self.0.api_prefix)
            .finish_non_exhaustive()
    }
}

fn invalid_config(reason: String) -> Error {
    Error::InvalidConfig { reason }
}

impl Base {
    /// The base of `base_url` (`http` or `https`, with a host; its path
    /// prefixes every request) with the versioned `api_path` (`/api/v1`,
    /// `/apis/apps/v1`, or empty).
    pub fn parse(base_url: &str, api_path: &str) -> Result<Self, Error> {
        let url = url::Url::parse(base_url)
            .map_err(|e| invalid_config(format!("base URL {base_url:?}: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid_config(format!(
                "base URL {base_url:?}: scheme must be http or https"
            )));
        }
        let host = url
            .host_str()
            .ok_or_else(|| invalid_config(format!("base URL {base_url:?} has no host")))?;
        let port = url.port_or_known_default().unwrap_or(443);
        let base_path: Arc<str> = url.path().into();
        Ok(Self(Arc::new(BaseInner {
            origin: url.origin().ascii_serialization(),
            host_key: format!("{host}:{port}"),
            api_prefix: join(["/", &*base_path, api_path]).into(),
            base_path,
        })))
    }

    /// `scheme://host[:port]` of the server.
    pub fn origin(&self) -> &str {
        &self.0.origin
    }

    /// The base URL's path.
    pub(crate) fn base_path(&self) -> &str {
        &self.0.base_path
    }

    /// `host:port` of the server.
    pub(crate) fn host_key(&self) -> &str {
        &self.0.host_key
    }

    /// The path every request starts from (base URL path + API path).
    pub fn api_prefix(&self) -> &str {
        &self.0.api_prefix
    }

    /// The collection of `resource` under `abs_path` (`["api", "v1"]`,
    /// `["apis", group, version]`), in `namespace` when given, validated
    /// and joined once for [`RequestDesc::collection`].
    pub fn collection(
        &self,
        abs_path: &[&str],
        namespace: Option<&str>,
        resource: &str,
    ) -> CollectionPath {
        let req = RequestDesc::new(Verb::Get, self).abs_path(abs_path);
        let req = match namespace {
            Some(ns) => req.namespace(ns),
            None => req,
        };
        let req = req.resource(resource);
        let error = req.err.as_deref().map(|e| match e {
            Error::InvalidRequest { message } => message.clone(),
            other => other.to_string(),
        });
        let path = req.path();
        let mut escaped = String::with_capacity(path.len());
        path_escape(&path, &mut escaped);
        let template = req.template_path();
        let url = collection_url(&self.0.origin, &escaped);
        CollectionPath {
            inner: Arc::new(CollectionInner {
                base_path: self.0.base_path.clone(),
                abs: abs_path.iter().map(|s| (*s).to_owned()).collect(),
                namespace_arg: namespace.map(str::to_owned),
                resource_arg: resource.to_owned(),
                prefix: req.path_prefix.clone(),
                namespace: req.namespace_set.then(|| req.namespace.clone()),
                resource: req.resource.clone(),
                error,
                path,
                escaped,
                template,
                url,
            }),
        }
    }
}

/// What a client adds to every request it prepares: default headers,
/// `Accept`, the body's default Content-Type, the retry limit.
#[derive(Debug, Clone)]
pub struct Defaults {
    /// Sent with every request unless the request sets the same name; all
    /// values of a name are kept.
    pub(crate) default_headers: HeaderMap,
    pub(crate) accept: HeaderValue,
    pub(crate) content_type: HeaderValue,
    /// The headers of a request that sets none and has no body: the
    /// default headers and `Accept`, built once.
    pub(crate) request_headers: HeaderMap,
    pub(crate) max_retries: u32,
    /// Whether prepared requests carry their URL template (only a metrics
    /// hook reads it).
    pub(crate) url_templates: bool,
    /// The client's `User-Agent`, sent unless the request or the default
    /// headers set one (added last, where reqwest added it before).
    pub(crate) user_agent: Option<HeaderValue>,
}

impl Default for Defaults {
    /// No default headers, client-go's `Accept` and Content-Type, 10
    /// retries.
    fn default() -> Self {
        Self::new(
            HeaderMap::new(),
            HeaderValue::from_static(DEFAULT_ACCEPT),
            HeaderValue::from_static(DEFAULT_CONTENT_TYPE),
            DEFAULT_MAX_RETRIES,
        )
    }
}

impl Defaults {
    /// These defaults (headers of a repeated name all sent).
    pub fn new(
        default_headers: HeaderMap,
        accept: HeaderValue,
        content_type: HeaderValue,
        max_retries: u32,
    ) -> Self {
        let request_headers = with_defaults(HeaderMap::new(), &default_headers, &accept);
        Self {
            default_headers,
            accept,
            content_type,
            request_headers,
            max_retries,
            url_templates: false,
            user_agent: None,
        }
    }

    /// These defaults with the client's `User-Agent` in every request's
    /// headers (sent with the prepared ones: no per-request insertion by
    /// reqwest).
    pub(crate) fn with_user_agent(mut self, user_agent: HeaderValue) -> Self {
        add_user_agent(&mut self.request_headers, Some(&user_agent));
        self.user_agent = Some(user_agent);
        self
    }
}

/// `user_agent` unless `headers` has one.
fn add_user_agent(headers: &mut HeaderMap, user_agent: Option<&HeaderValue>) {
    if let Some(ua) = user_agent
        && !headers.contains_key(http::header::USER_AGENT)
    {
        headers.insert(http::header::USER_AGENT, ua.clone());
    }
}

/// A request's own `headers` with the client's defaults for the names it
/// does not set (all values of each), and `accept` unless it has one.
fn with_defaults(mut headers: HeaderMap, defaults: &HeaderMap, accept: &HeaderValue) -> HeaderMap {
    // Default header names are distinct, so checking the map being filled
    // is checking the request's own headers.
    for name in defaults.keys() {
        if !headers.contains_key(name) {
            for value in defaults.get_all(name) {
                headers.append(name.clone(), value.clone());
            }
        }
    }
    if !headers.contains_key(http::header::ACCEPT) {
        headers.insert(http::header::ACCEPT, accept.clone());
    }
    headers
}

/// `escaped` (a collection's escaped path) at `origin`, when the `url`
/// crate keeps it byte for byte and an appended segment cannot merge with
/// it (no trailing `/`): the start of [`attempt_url`].
fn collection_url(origin: &str, escaped: &str) -> Option<url::Url> {
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

fn invalid(message: String) -> Error {
    Error::InvalidRequest { message }
}

/// Go's `path.Join` of builder arguments.
fn join_segments<I, S>(segments: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let segments: Vec<S> = segments.into_iter().collect();
    join(segments.iter().map(AsRef::as_ref))
}

/// client-go's set-once rule: `what` was set to `current` already.
fn already_set(what: &str, current: &str, new: &str) -> Error {
    invalid(format!(
        "{what} already set to {}, cannot change to {}",
        go_quote(current),
        go_quote(new)
    ))
}

/// client-go's segment rule for `what` (a namespace, resource, name or
/// subresource part): not `.` or `..`, no `/` or `%`.
fn check_segment(what: &str, value: &str) -> Result<(), Error> {
    let problems = segment_problems(value);
    if problems.is_empty() {
        return Ok(());
    }
    Err(invalid(format!(
        "invalid {what} {}: {}",
        go_quote(value),
        go_list(&problems)
    )))
}

/// One request, described (client-go's `rest.Request` without the client).
///
/// The first builder error sticks: later calls are ignored and
/// [`prepare`](Self::prepare) returns it.
#[must_use = "a description does nothing until it is prepared"]
pub struct RequestDesc {
    base: Base,
    verb: Verb,
    /// Prefix, namespace and resource taken together from a
    /// [`CollectionPath`]; while set, `path_prefix`, `namespace*` and
    /// `resource` are unused (see [`RequestDesc::unshare`]).
    collection: Option<CollectionPath>,
    path_prefix: Arc<str>,
    /// `Box<str>`, as `subresource`: rarely set, and a request is moved
    /// through every builder call (a `String` is 8 bytes more).
    sub_path: Box<str>,
    namespace: String,
    namespace_set: bool,
    resource: String,
    resource_name: String,
    subresource: Box<str>,
    params: Params,
    /// `None`: none set (boxed for the same reason as `err`).
    headers: Option<Box<HeaderMap>>,
    /// A patch's Content-Type (a static: see `PatchType::content_type_header`).
    content_type: Option<&'static HeaderValue>,
    timeout: Option<Duration>,
    body: Option<Bytes>,
    /// `None`: the client's.
    max_retries: Option<u32>,
    /// Boxed: a request is moved through every builder call and async
    /// state, and an error is rare.
    err: Option<Box<Error>>,
}

impl fmt::Debug for RequestDesc {
    /// Headers and body may carry secrets: only their size is shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestDesc")
            .field("verb", &self.verb)
            .field("url", &self.url())
            .field("headers", &self.headers.as_ref().map_or(0, |h| h.len()))
            .field("body_len", &self.body.as_ref().map(Bytes::len))
            .field("error", &self.error())
            .finish_non_exhaustive()
    }
}

impl RequestDesc {
    /// A request with this verb at `base`'s API prefix.
    pub fn new(verb: Verb, base: &Base) -> Self {
        Self {
            base: base.clone(),
            verb,
            collection: None,
            path_prefix: base.0.api_prefix.clone(),
            sub_path: Box::default(),
            namespace: String::new(),
            namespace_set: false,
            resource: String::new(),
            resource_name: String::new(),
            subresource: Box::default(),
            params: Params::default(),
            headers: None,
            content_type: None,
            timeout: None,
            body: None,
            max_retries: None,
            err: None,
        }
    }

    /// A PATCH of this kind: its Content-Type and, for server-side apply,
    /// its `fieldManager` and `force` parameters.
    pub fn patch(base: &Base, patch: PatchType) -> Self {
        Self::new(Verb::Patch, base).patch_type(patch)
    }

    /// The builder error, if any.
    pub fn error(&self) -> Option<&Error> {
        self.err.as_deref()
    }

    fn fail(mut self, err: Error) -> Self {
        self.err = Some(Box::new(err));
        self
    }

    /// Start at `collection`: the same as `abs_path(..)`, `namespace(..)`
    /// and `resource(..)` with its arguments, without validating, joining
    /// and escaping them again (when this request has no namespace or
    /// resource yet and `collection` was built for a client with the same
    /// base URL path; otherwise those calls are made).
    pub fn collection(mut self, collection: &CollectionPath) -> Self {
        self.set_collection(collection);
        self
    }

    /// [`collection`](Self::collection) in place (a [`Request`](crate::Request)
    /// builder call then moves its request once, not three times).
    pub(crate) fn set_collection(&mut self, collection: &CollectionPath) {
        if self.err.is_some() {
            return;
        }
        let c = &*collection.inner;
        if self.collection.is_none()
            && !self.namespace_set
            && self.resource.is_empty()
            && c.base_path == self.base.0.base_path
        {
            self.collection = Some(collection.clone());
            if let Some(message) = &c.error {
                // The state those calls leave behind, and their error.
                self.unshare();
                self.err = Some(Box::new(invalid(message.clone())));
            }
            return;
        }
        let placeholder = RequestDesc::new(self.verb, &self.base);
        let req = std::mem::replace(self, placeholder).abs_path(&c.abs);
        let req = match &c.namespace_arg {
            Some(ns) => req.namespace(ns),
            None => req,
        };
        *self = req.resource(&c.resource_arg);
    }

    /// Move a shared [`CollectionPath`] into the request's own fields,
    /// before a builder call that changes one of them.
    fn unshare(&mut self) {
        if let Some(c) = self.collection.take() {
            let c = &*c.inner;
            self.path_prefix = c.prefix.clone();
            self.namespace_set = c.namespace.is_some();
            self.namespace = c.namespace.clone().unwrap_or_default();
            self.resource = c.resource.clone();
        }
    }

    /// The namespace as set (`None`: never set).
    fn namespace_value(&self) -> Option<&str> {
        match &self.collection {
            Some(c) => c.inner.namespace.as_deref(),
            None => self.namespace_set.then_some(self.namespace.as_str()),
        }
    }

    /// The verb.
    pub fn verb(&self) -> Verb {
        self.verb
    }

    /// The one place where a patch's kind becomes request state: its
    /// Content-Type and, for server-side apply, the `fieldManager` (when
    /// not empty) and `force=true` (when set) parameters.
    fn patch_type(mut self, patch: PatchType) -> Self {
        self.content_type = Some(patch.content_type_header());
        if let PatchType::Apply {
            field_manager,
            force,
        } = &patch
        {
            if !field_manager.is_empty() {
                self.params.add("fieldManager", field_manager);
            }
            if *force {
                self.params.add("force", "true");
            }
        }
        self
    }

    /// Append segments to the path prefix (before namespace/resource).
    pub fn prefix<I, S>(self, segments: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.update(|r| {
            r.unshare();
            let joined = join_segments(segments);
            r.path_prefix = join([&*r.path_prefix, joined.as_str()]).into();
            Ok(())
        })
    }

    /// Append segments after everything else (client-go's `Suffix`).
    pub fn suffix<I, S>(self, segments: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.update(|r| {
            let joined = join_segments(segments);
            r.sub_path = join([&*r.sub_path, joined.as_str()]).into();
            Ok(())
        })
    }

    /// Replace the prefix with the base URL path plus these segments (API
    /// path dropped); a single segment keeps its trailing slash.
    pub fn abs_path<I, S>(mut self, segments: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        if self.err.is_some() {
            return self;
        }
        self.unshare();
        let segments: Vec<S> = segments.into_iter().collect();
        let joined = join(segments.iter().map(AsRef::as_ref));
        let base_path = &*self.base.0.base_path;
        let mut prefix = join([base_path, joined.as_str()]);
        if let [only] = segments.as_slice() {
            let only = only.as_ref();
            if (base_path.len() > 1 || only.len() > 1) && only.ends_with('/') {
                prefix.push('/');
            }
        }
        self.path_prefix = prefix.into();
        self
    }

    /// Apply a builder step unless an error stuck; its error sticks.
    fn update(mut self, step: impl FnOnce(&mut Self) -> Result<(), Error>) -> Self {
        self.update_in_place(step);
        self
    }

    /// [`update`](Self::update) in place.
    fn update_in_place(&mut self, step: impl FnOnce(&mut Self) -> Result<(), Error>) {
        if self.err.is_none()
            && let Err(err) = step(self)
        {
            self.err = Some(Box::new(err));
        }
    }

    /// The namespace; `""` leaves the segment out (and arms the preflight
    /// checks). Setting it twice is an error.
    pub fn namespace(self, namespace: &str) -> Self {
        self.update(|r| {
            r.unshare();
            if r.namespace_set {
                return Err(already_set("namespace", &r.namespace, namespace));
            }
            check_segment("namespace", namespace)?;
            r.namespace_set = true;
            r.namespace = namespace.to_owned();
            Ok(())
        })
    }

    /// The resource (lowercased in the URL). Setting it twice is an error.
    pub fn resource(self, resource: &str) -> Self {
        self.update(|r| {
            r.unshare();
            if !r.resource.is_empty() {
                return Err(already_set("resource", &r.resource, resource));
            }
            check_segment("resource", resource)?;
            r.resource = resource.to_owned();
            Ok(())
        })
    }

    /// The object name; empty or set twice is an error.
    pub fn name(mut self, name: &str) -> Self {
        self.set_name(name);
        self
    }

    /// [`name`](Self::name) in place.
    pub(crate) fn set_name(&mut self, name: &str) {
        self.update_in_place(|r| {
            if name.is_empty() {
                return Err(invalid("resource name may not be empty".to_owned()));
            }
            if !r.resource_name.is_empty() {
                return Err(already_set("resource name", &r.resource_name, name));
            }
            check_segment("resource name", name)?;
            r.resource_name = name.to_owned();
            Ok(())
        });
    }

    /// Subresource path parts (`status`, `scale`, …). Set twice is an error.
    pub fn sub_resource<I, S>(self, parts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.update(|r| {
            let parts: Vec<S> = parts.into_iter().collect();
            let subresource = join(parts.iter().map(AsRef::as_ref));
            if !r.subresource.is_empty() {
                return Err(already_set("subresource", &r.subresource, &subresource));
            }
            for part in &parts {
                check_segment("subresource", part.as_ref())?;
            }
            r.subresource = subresource.into();
            Ok(())
        })
    }

    /// Add a query parameter (values accumulate per key).
    pub fn param(mut self, key: &str, value: impl AsRef<str>) -> Self {
        if self.err.is_none() {
            self.params.add(key, value.as_ref());
        }
        self
    }

    /// Add a request header (overrides `Accept` and `Content-Type` defaults).
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        if self.err.is_none() {
            self.headers.get_or_insert_default().append(name, value);
        }
        self
    }

    /// Timeout for the whole request including retries; also sent as the
    /// `timeout` parameter (replacing one set with `param`). Zero: none.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        if self.err.is_none() {
            self.timeout = (!timeout.is_zero()).then_some(timeout);
        }
        self
    }

    /// The request body, sent whole on every attempt.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        if self.err.is_none() {
            self.body = Some(body.into());
        }
        self
    }

    /// Serialize `value` as JSON for the body.
    pub fn json_body<T: Serialize + ?Sized>(self, value: &T) -> Self {
        if self.err.is_some() {
            return self;
        }
        match serde_json::to_vec(value) {
            Ok(v) => self.body(v),
            Err(source) => self.fail(Error::SerializeBody { source }),
        }
    }

    /// Maximum number of retries for this request.
    pub fn max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = Some(max_retries);
        self
    }

    /// prefix / `namespaces/<ns>` / resource / name / subresource / suffix,
    /// as one Go `path.Join` (the same result as joining step by step:
    /// cleaning is a left-to-right pass, so cleaning early changes nothing).
    fn path(&self) -> String {
        let name = self.resource_name.as_str();
        self.path_with(&self.namespace, name, |c| &c.path)
    }

    /// [`path`](Self::path) with `{namespace}` and `{name}` for the
    /// namespace and the name (for metrics).
    fn template_path(&self) -> String {
        let name = if self.resource_name.is_empty() {
            ""
        } else {
            "{name}"
        };
        self.path_with("{namespace}", name, |c| &c.template)
    }

    /// The path with these words for the namespace and the name, and this
    /// form of a shared collection's path.
    fn path_with(
        &self,
        namespace: &str,
        name: &str,
        collection: fn(&CollectionInner) -> &String,
    ) -> String {
        if let Some(c) = &self.collection {
            let collection = collection(&c.inner);
            return join([collection.as_str(), name, &self.subresource, &self.sub_path]);
        }
        let namespaced = self.namespace_set && !self.namespace.is_empty();
        let named = !self.resource_name.is_empty()
            || !self.sub_path.is_empty()
            || !self.subresource.is_empty();
        if !namespaced && self.resource.is_empty() && !named {
            return self.path_prefix.to_string();
        }
        let resource: std::borrow::Cow<'_, str> = if self
            .resource
            .bytes()
            .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
        {
            self.resource.as_str().into()
        } else {
            self.resource.to_lowercase().into()
        };
        let mut elems = [&*self.path_prefix, "", "", &resource, "", "", ""];
        if namespaced {
            elems[1] = "namespaces";
            elems[2] = namespace;
        }
        if named {
            elems[4] = name;
            elems[5] = &self.subresource;
            elems[6] = &self.sub_path;
        }
        join(elems)
    }

    /// The escaped path.
    fn escaped_path(&self) -> String {
        let mut out;
        match &self.collection {
            // The collection is clean and escaped, name and subresource
            // parts are valid segments: joining is appending.
            Some(c) if self.sub_path.is_empty() => {
                let c = &*c.inner;
                out = String::with_capacity(
                    c.escaped.len() + self.resource_name.len() + self.subresource.len() + 2,
                );
                out.push_str(&c.escaped);
                for segment in [self.resource_name.as_str(), &self.subresource] {
                    if !segment.is_empty() {
                        out.push('/');
                        path_escape(segment, &mut out);
                    }
                }
            }
            _ => {
                let path = self.path();
                out = String::with_capacity(path.len() + 16);
                path_escape(&path, &mut out);
            }
        }
        out
    }

    /// Escaped path and query, independent of the server (so an attempt
    /// can be sent to any base URL).
    pub fn path_and_query(&self) -> String {
        let mut out = self.escaped_path();
        let query = match self.timeout {
            Some(t) => {
                let mut params = self.params.clone();
                params.set("timeout", &go_duration(t));
                params.encode()
            }
            None => self.params.encode(),
        };
        if !query.is_empty() {
            out.push('?');
            out.push_str(&query);
        }
        out
    }

    /// The full URL at the base URL's origin.
    pub fn url(&self) -> String {
        format!("{}{}", self.base.0.origin, self.path_and_query())
    }

    /// The path with namespace and name replaced by `{namespace}` and
    /// `{name}` (for metrics).
    pub fn url_template(&self) -> String {
        self.template_path()
    }

    /// client-go's preflight check: an explicitly empty namespace is
    /// refused for creation, and for GET/PUT/DELETE of a named object.
    pub(crate) fn preflight(&self) -> Result<(), Error> {
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

    /// Validate and fix the request for any server: the sticky builder
    /// error or the preflight check fails it; otherwise the escaped path,
    /// the encoded query (with the `timeout` parameter), the headers with
    /// `defaults` merged in, the body and the retry limit, all computed
    /// once per call (for `send`: a fully read response).
    pub fn prepare(self, defaults: &Defaults) -> Result<Prepared, Error> {
        self.prepare_for(Mode::Do, defaults)
    }

    pub(crate) fn prepare_for(
        mut self,
        mode: Mode,
        defaults: &Defaults,
    ) -> Result<Prepared, Error> {
        if let Some(err) = self.err.take() {
            return Err(*err);
        }
        self.preflight()?;
        let headers = self.prepared_headers(defaults);
        let url_template = if defaults.url_templates {
            self.url_template()
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
#[cfg(test)]
mod tests {
    //! client-go's URL vectors (REFERENCE-BEHAVIOUR.md 1-10) against the
    //! description alone: no client, no socket.
    use super::*;

    /// The verbs of a client, on a bare [`Base`].
    trait Verbs {
        fn get(&self) -> RequestDesc;
        fn post(&self) -> RequestDesc;
        fn put(&self) -> RequestDesc;
        fn delete(&self) -> RequestDesc;
        fn patch(&self, patch: PatchType) -> RequestDesc;
    }

    impl Verbs for Base {
        fn get(&self) -> RequestDesc {
            RequestDesc::new(Verb::Get, self)
        }
        fn post(&self) -> RequestDesc {
            RequestDesc::new(Verb::Post, self)
        }
        fn put(&self) -> RequestDesc {
            RequestDesc::new(Verb::Put, self)
        }
        fn delete(&self) -> RequestDesc {
            RequestDesc::new(Verb::Delete, self)
        }
        fn patch(&self, patch: PatchType) -> RequestDesc {
            RequestDesc::patch(self, patch)
        }
    }

    fn client(base: &str, api_path: &str) -> Base {
        Base::parse(base, api_path).unwrap()
    }

    fn c() -> Base {
        client("https://h:6443", "")
    }

    fn err(r: RequestDesc) -> String {
        r.error().map(ToString::to_string).unwrap_or_default()
    }

    #[test]
    fn path_order() {
        let r = c()
            .get()
            .prefix(["/test/"])
            .name("bar")
            .resource("baz")
            .namespace("foo");
        assert_eq!(r.path_and_query(), "/test/namespaces/foo/baz/bar");
        let r = c()
            .get()
            .prefix(["/test/"])
            .name("bar")
            .resource("baz")
            .namespace("foo")
            .suffix(["test"])
            .sub_resource(["a", "b"]);
        assert_eq!(r.path_and_query(), "/test/namespaces/foo/baz/bar/a/b/test");
        assert_eq!(
            r.url(),
            "https://h:6443/test/namespaces/foo/baz/bar/a/b/test"
        );
        assert_eq!(
            r.url_template(),
            "/test/namespaces/{namespace}/baz/{name}/a/b/test"
        );
        // Joined once, cleaned like Go's step-by-step joins: a suffix may
        // climb out of the name, an absolute path's trailing slash folds.
        let r = c().get().resource("Pods").name("a").suffix(["..", "b"]);
        assert_eq!(r.path_and_query(), "/pods/b");
        let r = client("https://h/p1/", "")
            .get()
            .abs_path(["/api/"])
            .namespace("ns")
            .resource("pods");
        assert_eq!(r.path_and_query(), "/p1/api/namespaces/ns/pods");
    }

    #[test]
    fn base_path_and_api_path() {
        let r = client("https://h/p", "/api/v1").get().resource("pods");
        assert_eq!(r.path_and_query(), "/p/api/v1/pods");
        let r = client("https://h/p/", "/apis/apps/v1")
            .get()
            .namespace("ns")
            .resource("deployments");
        assert_eq!(
            r.url(),
            "https://h/p/apis/apps/v1/namespaces/ns/deployments"
        );
        assert_eq!(
            client("https://h", "/api/v1").get().path_and_query(),
            "/api/v1"
        );
    }

    #[test]
    fn empty_namespace_leaves_segment_out_and_resource_lowercased() {
        let r = c().get().namespace("").resource("Pods");
        assert_eq!(r.path_and_query(), "/pods");
        let r = c().get().resource("Pods").resource("x");
        assert_eq!(
            err(r),
            r#"resource already set to "Pods", cannot change to "x""#
        );
    }

    #[test]
    fn invalid_segments() {
        let cases: Vec<(RequestDesc, &str)> = vec![
            (
                c().get().namespace("a/b"),
                r#"invalid namespace "a/b": [may not contain '/']"#,
            ),
            (
                c().get().namespace(".."),
                r#"invalid namespace "..": [may not be '..']"#,
            ),
            (
                c().get().resource("."),
                r#"invalid resource ".": [may not be '.']"#,
            ),
            (
                c().get().resource("a%b"),
                r#"invalid resource "a%b": [may not contain '%']"#,
            ),
            (
                c().get().name("a/%"),
                r#"invalid resource name "a/%": [may not contain '/' may not contain '%']"#,
            ),
            (
                c().get().sub_resource(["ok", ".."]),
                r#"invalid subresource "..": [may not be '..']"#,
            ),
            (c().get().name(""), "resource name may not be empty"),
            (
                c().get().name("bar").name("baz"),
                r#"resource name already set to "bar", cannot change to "baz""#,
            ),
            (
                c().get().namespace("bar").namespace("baz"),
                r#"namespace already set to "bar", cannot change to "baz""#,
            ),
            (
                c().get().sub_resource(["bar"]).sub_resource(["baz"]),
                r#"subresource already set to "bar", cannot change to "baz""#,
            ),
        ];
        for (r, want) in cases {
            assert_eq!(err(r), want);
        }
        for ok in ["a.b", "a..b", "..."] {
            let r = c()
                .get()
                .namespace(ok)
                .resource(ok)
                .name(ok)
                .sub_resource([ok]);
            assert!(r.error().is_none(), "{ok}");
        }
    }

    #[test]
    fn first_error_sticks() {
        let r = c()
            .get()
            .name("")
            .namespace("a/b")
            .resource("x")
            .param("a", "b");
        assert_eq!(err(r), "resource name may not be empty");
    }

    #[test]
    fn params_and_timeout() {
        let r = c()
            .get()
            .param("foo", "a b")
            .param("bar", "1")
            .param("bar", "2");
        assert_eq!(r.path_and_query(), "/?bar=1&bar=2&foo=a+b");
        let cases = [
            (Duration::from_secs(1), "1s"),
            (Duration::from_secs(60), "1m0s"),
            (Duration::from_millis(1500), "1.5s"),
            (Duration::from_millis(500), "500ms"),
        ];
        for (d, s) in cases {
            let r = c()
                .get()
                .param("timeout", "9s")
                .param("timeout", "8s")
                .timeout(d);
            assert_eq!(r.path_and_query(), format!("/?timeout={s}"));
        }
        let r = c().get().param("timeout", "9s").timeout(Duration::ZERO);
        assert_eq!(r.path_and_query(), "/?timeout=9s");
    }

    #[test]
    fn abs_path_rules() {
        let r = client("https://h/p1", "/api/v1").get().abs_path(["/"]);
        assert_eq!(r.path_and_query(), "/p1/");
        let r = client("https://h/p1/api/p2", "/api/v1")
            .get()
            .prefix(["/r1"])
            .abs_path(["/api/"]);
        assert_eq!(r.path_and_query(), "/p1/api/p2/api/");
        let r = client("https://h", "/api/v1").get().abs_path(["/healthz"]);
        assert_eq!(r.path_and_query(), "/healthz");
        let r = client("https://h", "/api/v1")
            .get()
            .abs_path(["/apis", "apps/"]);
        assert_eq!(r.path_and_query(), "/apis/apps");
    }

    #[test]
    fn preflight() {
        let post = c().post().namespace("").resource("pods");
        assert_eq!(
            post.preflight().unwrap_err().to_string(),
            "an empty namespace may not be set during creation"
        );
        for r in [
            c().get().namespace("").resource("pods").name("a"),
            c().put().namespace("").resource("pods").name("a"),
            c().delete().namespace("").resource("pods").name("a"),
        ] {
            assert_eq!(
                r.preflight().unwrap_err().to_string(),
                "an empty namespace may not be set when a resource name is provided"
            );
        }
        assert!(c().get().namespace("").resource("pods").preflight().is_ok());
        assert!(
            c().patch(PatchType::Merge)
                .namespace("")
                .resource("pods")
                .name("a")
                .preflight()
                .is_ok()
        );
        assert!(c().post().resource("pods").preflight().is_ok());
    }

    #[test]
    fn patch_types() {
        let cases = [
            (PatchType::Json, "application/json-patch+json"),
            (PatchType::Merge, "application/merge-patch+json"),
            (
                PatchType::StrategicMerge,
                "application/strategic-merge-patch+json",
            ),
        ];
        for (p, ct) in cases {
            assert_eq!(p.content_type(), ct);
        }
        let r = c().patch(PatchType::Apply {
            field_manager: "me".into(),
            force: true,
        });
        assert_eq!(r.path_and_query(), "/?fieldManager=me&force=true");
        let r = c().patch(PatchType::Apply {
            field_manager: "me".into(),
            force: false,
        });
        assert_eq!(r.path_and_query(), "/?fieldManager=me");
    }

    #[test]
    fn collection_is_the_builder_calls() {
        let rest = client("https://h/p/", "/api/v1");
        let pods = rest.collection(&["api", "v1"], Some("ns"), "Pods");
        assert_eq!(pods.path(), "/p/api/v1/namespaces/ns/pods");
        let r = rest.get().collection(&pods).name("a b");
        assert_eq!(r.path_and_query(), "/p/api/v1/namespaces/ns/pods/a%20b");
        assert_eq!(
            r.url_template(),
            "/p/api/v1/namespaces/{namespace}/pods/{name}"
        );
        let r = rest.get().collection(&pods).namespace("x");
        assert_eq!(
            err(r),
            r#"namespace already set to "ns", cannot change to "x""#
        );
        let r = rest.get().collection(&pods).resource("x");
        assert_eq!(
            err(r),
            r#"resource already set to "Pods", cannot change to "x""#
        );
        // An explicitly empty namespace arms the preflight checks.
        let empty = rest.collection(&["api", "v1"], Some(""), "pods");
        let r = rest.get().collection(&empty).name("a");
        assert_eq!(
            r.preflight().unwrap_err().to_string(),
            "an empty namespace may not be set when a resource name is provided"
        );
        assert!(rest.get().collection(&empty).preflight().is_ok());
        let bad = rest.collection(&["api", "v1"], Some("a/b"), "pods");
        let r = rest.get().collection(&bad).name("x");
        assert_eq!(err(r), r#"invalid namespace "a/b": [may not contain '/']"#);
    }

    #[test]
    fn path_is_escaped() {
        let r = c().get().resource("pods").name("a b:c");
        assert_eq!(r.path_and_query(), "/pods/a%20b:c");
    }

    #[test]
    fn to_http_is_the_description() {
        let defaults = Defaults::default();
        let http = |r: RequestDesc| {
            let p = r.prepare(&defaults).unwrap();
            to_http(&p, "https://h:6443", &defaults).unwrap()
        };
        // Vector 1 (path order) and 7 (timeout) through the whole request.
        let req = http(
            c().get()
                .prefix(["/test/"])
                .name("bar")
                .resource("baz")
                .namespace("foo")
                .timeout(Duration::from_millis(1500)),
        );
        assert_eq!(req.method(), http::Method::GET);
        assert_eq!(
            req.uri(),
            "https://h:6443/test/namespaces/foo/baz/bar?timeout=1.5s"
        );
        // Vector 9: the default Accept; no body, no Content-Type.
        assert_eq!(req.headers()["accept"], "application/json, */*");
        assert!(req.headers().get("content-type").is_none());
        assert!(req.body().is_empty());
        // A body gets the default Content-Type; a patch its own; an own
        // Accept wins; repeated default headers are all sent.
        let mut own = HeaderMap::new();
        own.append("impersonate-group", HeaderValue::from_static("a"));
        own.append("impersonate-group", HeaderValue::from_static("b"));
        let with_groups = Defaults::new(
            own,
            HeaderValue::from_static("application/json"),
            HeaderValue::from_static("application/json"),
            3,
        );
        let p = c()
            .post()
            .namespace("ns")
            .resource("configmaps")
            .body(&b"{}"[..])
            .prepare(&with_groups)
            .unwrap();
        assert_eq!(p.max_retries, 3);
        let req = to_http(&p, "http://h", &with_groups).unwrap();
        assert_eq!(req.uri(), "http://h/namespaces/ns/configmaps");
        assert_eq!(req.headers()["content-type"], "application/json");
        assert_eq!(req.headers().get_all("impersonate-group").iter().count(), 2);
        assert_eq!(&req.body()[..], b"{}");
        let req = http(
            c().patch(PatchType::StrategicMerge)
                .resource("pods")
                .name("a")
                .header(http::header::ACCEPT, HeaderValue::from_static("x/y"))
                .body(&b"{}"[..]),
        );
        assert_eq!(req.method(), http::Method::PATCH);
        assert_eq!(
            req.headers()["content-type"],
            "application/strategic-merge-patch+json"
        );
        assert_eq!(req.headers()["accept"], "x/y");
        // The client's User-Agent is in every prepared set, with and
        // without a body; a request's own (or a default header's) wins.
        let ua = Defaults::default().with_user_agent(HeaderValue::from_static("ua/1"));
        let sent = |d: RequestDesc| {
            let p = d.prepare(&ua).unwrap();
            let req = to_http(&p, "http://h", &ua).unwrap();
            req.headers()
                .get_all("user-agent")
                .iter()
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(sent(c().get().resource("pods")), ["ua/1"]);
        assert_eq!(sent(c().post().resource("pods").body(&b"{}"[..])), ["ua/1"]);
        let own = HeaderValue::from_static("own/2");
        assert_eq!(
            sent(
                c().get()
                    .resource("pods")
                    .header(http::header::USER_AGENT, own)
            ),
            ["own/2"]
        );
        let mut default_ua = HeaderMap::new();
        default_ua.insert("user-agent", HeaderValue::from_static("dflt/3"));
        let d = Defaults::new(
            default_ua,
            defaults.accept.clone(),
            defaults.content_type.clone(),
            1,
        )
        .with_user_agent(HeaderValue::from_static("ua/1"));
        let p = c().get().resource("pods").prepare(&d).unwrap();
        assert_eq!(
            to_http(&p, "http://h", &d).unwrap().headers()["user-agent"],
            "dflt/3"
        );
        // Builder and preflight errors are the description's.
        let bad = c().get().namespace("a/b").prepare(&defaults).unwrap_err();
        assert_eq!(
            bad.to_string(),
            r#"invalid namespace "a/b": [may not contain '/']"#
        );
        let bad = c().post().namespace("").resource("pods").prepare(&defaults);
        assert!(bad.is_err());
    }

    /// The URL an attempt sends, parsed per attempt from the prepared path
    /// and query at `origin` (what an endpoint without a prepared URL does).
    fn parsed(p: &Prepared, origin: &str) -> url::Url {
        let mut url = url::Url::parse(origin).unwrap();
        url.set_path(p.path());
        url.set_query((!p.query().is_empty()).then_some(p.query()));
        url
    }

    #[test]
    fn prepared_url_is_the_parsed_path() {
        let base = client("http://127.0.0.1:6443/base/", "/api/v1");
        let origin = base.origin().to_owned();
        let pods = base.collection(&["api", "v1"], Some("ns-1"), "Pods");
        let all = base.collection(&["apis", "apps", "v1"], None, "deployments");
        let cases: [(&CollectionPath, &str, &str, &str, bool); 9] = [
            (&pods, "web-0", "", "", true),
            (&pods, "a.b_c~d-9", "status", "", true),
            (&pods, "UPPER", "", "limit=5", true),
            (&all, "", "", "watch=true&resourceVersion=7", true),
            (&pods, "a:b", "", "", false),
            (&pods, "sp ace", "", "", false),
            (&pods, "caf\u{e9}", "", "", false),
            (&pods, "x", "a/b", "", false),
            (&pods, "q?#", "", "", false),
        ];
        for (collection, name, sub, query, prepared) in cases {
            let mut req = RequestDesc::new(Verb::Get, &base).collection(collection);
            if !name.is_empty() {
                req = req.name(name);
            }
            if !sub.is_empty() {
                req = req.sub_resource(sub.split('/'));
            }
            for pair in query.split('&').filter(|p| !p.is_empty()) {
                let (k, v) = pair.split_once('=').unwrap();
                req = req.param(k, v);
            }
            // The prepared path (read from the URL when one was built) is
            // the description's escaped path.
            let escaped = req.path_and_query();
            let p = req.prepare(&Defaults::default()).unwrap();
            assert_eq!(p.path_and_query(), escaped, "{name:?} {sub:?}");
            let want = parsed(&p, &origin);
            assert_eq!(p.url_at(&origin).is_some(), prepared, "{name:?} {sub:?}");
            if let Some(url) = p.url_at(&origin) {
                assert_eq!(url.as_str(), want.as_str(), "{name:?} {sub:?}");
            }
            // Another server (a failover endpoint) parses its own.
            assert!(p.url_at("http://127.0.0.1:644").is_none());
            assert!(p.url_at("http://127.0.0.1:64430").is_none());
            assert!(p.url_at("https://127.0.0.1:6443").is_none());
        }
        // A resumable watch's new resourceVersion drops the prepared URL.
        let mut p = RequestDesc::new(Verb::Get, &base)
            .collection(&all)
            .param("watch", "true")
            .prepare(&Defaults::default())
            .unwrap();
        assert!(p.url_at(&origin).is_some());
        p.set_param("resourceVersion", "8");
        assert!(p.url_at(&origin).is_none());
        let url = parsed(&p, &origin);
        assert_eq!(url.path(), "/base/apis/apps/v1/deployments");
        assert!(url.query().unwrap().contains("resourceVersion=8"));
    }
}
