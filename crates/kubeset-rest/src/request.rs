//! The request builder, with client-go's URL rules.

use std::{fmt, sync::Arc, time::Duration};

use bytes::Bytes;
use futures::Stream;
use http::{HeaderMap, HeaderName, HeaderValue};
use serde::{Serialize, de::DeserializeOwned};

use crate::{
    client::RestClient,
    error::Error,
    execute::{self, Mode, Prepared},
    response::Response,
    url::{Params, go_duration, go_list, go_quote, join, path_escape, segment_problems},
    watch::{ResumableWatch, WatchStream},
};

/// HTTP verb of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Verb {
    /// GET.
    Get,
    /// POST.
    Post,
    /// PUT.
    Put,
    /// PATCH.
    Patch,
    /// DELETE.
    Delete,
    /// HEAD.
    Head,
}

impl Verb {
    /// The method name (`GET`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Post => "POST",
            Verb::Put => "PUT",
            Verb::Patch => "PATCH",
            Verb::Delete => "DELETE",
            Verb::Head => "HEAD",
        }
    }

    pub(crate) fn method(self) -> reqwest::Method {
        match self {
            Verb::Get => reqwest::Method::GET,
            Verb::Post => reqwest::Method::POST,
            Verb::Put => reqwest::Method::PUT,
            Verb::Patch => reqwest::Method::PATCH,
            Verb::Delete => reqwest::Method::DELETE,
            Verb::Head => reqwest::Method::HEAD,
        }
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind of a PATCH body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 6902 JSON patch.
    Json,
    /// RFC 7386 merge patch.
    Merge,
    /// Kubernetes strategic merge patch.
    StrategicMerge,
    /// Server-side apply.
    Apply {
        /// The `fieldManager` parameter (required by the server).
        field_manager: String,
        /// Take ownership of conflicting fields (`force=true`).
        force: bool,
    },
}

impl PatchType {
    /// The Content-Type of this patch.
    pub fn content_type(&self) -> &'static str {
        match self {
            PatchType::Json => "application/json-patch+json",
            PatchType::Merge => "application/merge-patch+json",
            PatchType::StrategicMerge => "application/strategic-merge-patch+json",
            PatchType::Apply { .. } => "application/apply-patch+yaml",
        }
    }
}

/// Where a resource collection lives for one client: what
/// `abs_path(segments)`, `namespace(ns)` (when given) and `resource(r)`
/// make of a request, validated, joined and escaped once.
///
/// [`Request::collection`] starts a request there without doing that work
/// again, so a typed API that keeps one builds each request with one
/// allocation for its path. Built with [`RestClient::collection`]; cheap to
/// clone. The rules are [`Request`]'s: an invalid namespace or resource is
/// the error of every request started from it.
#[derive(Clone)]
pub struct CollectionPath {
    inner: Arc<CollectionInner>,
}

struct CollectionInner {
    /// The base URL path it was built for (`abs_path` depends on it).
    base_path: Arc<str>,
    /// The arguments, to replay the builder calls when the fast path does
    /// not apply.
    abs: Vec<String>,
    namespace_arg: Option<String>,
    resource_arg: String,
    /// The request's state after the three builder calls.
    prefix: Arc<str>,
    namespace: Option<String>,
    resource: String,
    /// The builder error, if any (always an invalid request).
    error: Option<String>,
    /// `prefix/namespaces/<ns>/<resource>`, cleaned (resource lowercased).
    path: String,
    /// `path`, escaped.
    escaped: String,
    /// `path` with `{namespace}` for the namespace (metrics).
    template: String,
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
    /// The collection of `resource` under `abs_path` (e.g. `["api", "v1"]`
    /// or `["apis", group, version]`), in `namespace` when given.
    pub(crate) fn new(
        client: &RestClient,
        abs_path: &[&str],
        namespace: Option<&str>,
        resource: &str,
    ) -> Self {
        let req = Request::new(client.clone(), Verb::Get).abs_path(abs_path);
        let req = match namespace {
            Some(ns) => req.namespace(ns),
            None => req,
        };
        let req = req.resource(resource);
        let error = req.err.as_ref().map(|e| match e {
            Error::InvalidRequest { message } => message.clone(),
            other => other.to_string(),
        });
        let path = req.path(false);
        let mut escaped = String::with_capacity(path.len());
        path_escape(&path, &mut escaped);
        let template = req.path(true);
        Self {
            inner: Arc::new(CollectionInner {
                base_path: client.inner.base_path.clone(),
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
            }),
        }
    }

    /// The collection's path (unescaped; the request builder's error, if
    /// any, is not shown here).
    pub fn path(&self) -> &str {
        &self.inner.path
    }
}

/// One request to the API server, built like client-go's `rest.Request`.
///
/// The first builder error sticks: later calls are ignored and `send`
/// returns it without touching the network.
#[must_use = "a request does nothing until it is sent"]
pub struct Request {
    client: RestClient,
    verb: Verb,
    /// Prefix, namespace and resource taken together from a
    /// [`CollectionPath`]; while set, `path_prefix`, `namespace*` and
    /// `resource` are unused (see [`Request::unshare`]).
    collection: Option<CollectionPath>,
    path_prefix: Arc<str>,
    sub_path: String,
    namespace: String,
    namespace_set: bool,
    resource: String,
    resource_name: String,
    subresource: String,
    params: Params,
    headers: HeaderMap,
    content_type: Option<HeaderValue>,
    timeout: Option<Duration>,
    body: Option<Bytes>,
    max_retries: u32,
    err: Option<Error>,
}

impl fmt::Debug for Request {
    /// Headers and body may carry secrets: only their size is shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request")
            .field("verb", &self.verb)
            .field("url", &self.url())
            .field("headers", &self.headers.len())
            .field("body_len", &self.body.as_ref().map(Bytes::len))
            .field("error", &self.err)
            .finish_non_exhaustive()
    }
}

/// A request's own `headers` with the client's defaults for the names it
/// does not set (all values of each), and `accept` unless it has one.
pub(crate) fn with_defaults(
    mut headers: HeaderMap,
    defaults: &HeaderMap,
    accept: &HeaderValue,
) -> HeaderMap {
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

fn invalid(message: String) -> Error {
    Error::InvalidRequest { message }
}

impl Request {
    pub(crate) fn new(client: RestClient, verb: Verb) -> Self {
        let path_prefix = client.inner.api_prefix.clone();
        let max_retries = client.inner.max_retries;
        Self {
            client,
            verb,
            collection: None,
            path_prefix,
            sub_path: String::new(),
            namespace: String::new(),
            namespace_set: false,
            resource: String::new(),
            resource_name: String::new(),
            subresource: String::new(),
            params: Params::default(),
            headers: HeaderMap::new(),
            content_type: None,
            timeout: None,
            body: None,
            max_retries,
            err: None,
        }
    }

    fn fail(mut self, err: Error) -> Self {
        self.err = Some(err);
        self
    }

    /// Start at `collection`: the same as `abs_path(..)`, `namespace(..)`
    /// and `resource(..)` with its arguments, without validating, joining
    /// and escaping them again (when this request has no namespace or
    /// resource yet and `collection` was built for a client with the same
    /// base URL path; otherwise those calls are made).
    pub fn collection(mut self, collection: &CollectionPath) -> Self {
        if self.err.is_some() {
            return self;
        }
        let c = &*collection.inner;
        if self.collection.is_none()
            && !self.namespace_set
            && self.resource.is_empty()
            && c.base_path == self.client.inner.base_path
        {
            self.collection = Some(collection.clone());
            if let Some(message) = &c.error {
                // The state those calls leave behind, and their error.
                self.unshare();
                return self.fail(invalid(message.clone()));
            }
            return self;
        }
        let req = self.abs_path(&c.abs);
        let req = match &c.namespace_arg {
            Some(ns) => req.namespace(ns),
            None => req,
        };
        req.resource(&c.resource_arg)
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

    /// The builder error, if any.
    pub fn error(&self) -> Option<&Error> {
        self.err.as_ref()
    }

    pub(crate) fn patch_type(mut self, patch: PatchType) -> Self {
        self.content_type = Some(HeaderValue::from_static(patch.content_type()));
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
    pub fn prefix<I, S>(mut self, segments: I) -> Self
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
        self.path_prefix = join([&*self.path_prefix, joined.as_str()]).into();
        self
    }

    /// Append segments after everything else (client-go's `Suffix`).
    pub fn suffix<I, S>(mut self, segments: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        if self.err.is_some() {
            return self;
        }
        let segments: Vec<S> = segments.into_iter().collect();
        let joined = join(segments.iter().map(AsRef::as_ref));
        self.sub_path = join([self.sub_path.as_str(), joined.as_str()]);
        self
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
        let base_path = &*self.client.inner.base_path;
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

    /// The namespace; `""` leaves the segment out (and arms the preflight
    /// checks). Setting it twice is an error.
    pub fn namespace(mut self, namespace: &str) -> Self {
        if self.err.is_some() {
            return self;
        }
        self.unshare();
        if self.namespace_set {
            let msg = format!(
                "namespace already set to {}, cannot change to {}",
                go_quote(&self.namespace),
                go_quote(namespace)
            );
            return self.fail(invalid(msg));
        }
        let problems = segment_problems(namespace);
        if !problems.is_empty() {
            let msg = format!(
                "invalid namespace {}: {}",
                go_quote(namespace),
                go_list(&problems)
            );
            return self.fail(invalid(msg));
        }
        self.namespace_set = true;
        self.namespace = namespace.to_owned();
        self
    }

    /// The resource (lowercased in the URL). Setting it twice is an error.
    pub fn resource(mut self, resource: &str) -> Self {
        if self.err.is_some() {
            return self;
        }
        self.unshare();
        if !self.resource.is_empty() {
            let msg = format!(
                "resource already set to {}, cannot change to {}",
                go_quote(&self.resource),
                go_quote(resource)
            );
            return self.fail(invalid(msg));
        }
        let problems = segment_problems(resource);
        if !problems.is_empty() {
            let msg = format!(
                "invalid resource {}: {}",
                go_quote(resource),
                go_list(&problems)
            );
            return self.fail(invalid(msg));
        }
        self.resource = resource.to_owned();
        self
    }

    /// The object name; empty or set twice is an error.
    pub fn name(mut self, name: &str) -> Self {
        if self.err.is_some() {
            return self;
        }
        if name.is_empty() {
            return self.fail(invalid("resource name may not be empty".to_owned()));
        }
        if !self.resource_name.is_empty() {
            let msg = format!(
                "resource name already set to {}, cannot change to {}",
                go_quote(&self.resource_name),
                go_quote(name)
            );
            return self.fail(invalid(msg));
        }
        let problems = segment_problems(name);
        if !problems.is_empty() {
            let msg = format!(
                "invalid resource name {}: {}",
                go_quote(name),
                go_list(&problems)
            );
            return self.fail(invalid(msg));
        }
        self.resource_name = name.to_owned();
        self
    }

    /// Subresource path parts (`status`, `scale`, …). Set twice is an error.
    pub fn sub_resource<I, S>(mut self, parts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        if self.err.is_some() {
            return self;
        }
        let parts: Vec<S> = parts.into_iter().collect();
        let subresource = join(parts.iter().map(AsRef::as_ref));
        if !self.subresource.is_empty() {
            let msg = format!(
                "subresource already set to {}, cannot change to {}",
                go_quote(&self.subresource),
                go_quote(&subresource)
            );
            return self.fail(invalid(msg));
        }
        for part in &parts {
            let part = part.as_ref();
            let problems = segment_problems(part);
            if !problems.is_empty() {
                let msg = format!(
                    "invalid subresource {}: {}",
                    go_quote(part),
                    go_list(&problems)
                );
                return self.fail(invalid(msg));
            }
        }
        self.subresource = subresource;
        self
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
            self.headers.append(name, value);
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
        self.max_retries = max_retries;
        self
    }

    /// prefix / `namespaces/<ns>` / resource / name / subresource / suffix,
    /// as one Go `path.Join` (the same result as joining step by step:
    /// cleaning is a left-to-right pass, so cleaning early changes nothing).
    fn path(&self, template: bool) -> String {
        if let Some(c) = &self.collection {
            let c = &*c.inner;
            let name = if template && !self.resource_name.is_empty() {
                "{name}"
            } else {
                &self.resource_name
            };
            let collection = if template { &c.template } else { &c.path };
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
            elems[2] = if template {
                "{namespace}"
            } else {
                &self.namespace
            };
        }
        if named {
            elems[4] = if template && !self.resource_name.is_empty() {
                "{name}"
            } else {
                &self.resource_name
            };
            elems[5] = &self.subresource;
            elems[6] = &self.sub_path;
        }
        join(elems)
    }

    /// Escaped path and query, independent of the server (so an attempt
    /// can be sent to any base URL).
    pub fn path_and_query(&self) -> String {
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
                for segment in [&self.resource_name, &self.subresource] {
                    if !segment.is_empty() {
                        out.push('/');
                        path_escape(segment, &mut out);
                    }
                }
            }
            _ => {
                let path = self.path(false);
                out = String::with_capacity(path.len() + 16);
                path_escape(&path, &mut out);
            }
        }
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

    /// The full URL.
    pub fn url(&self) -> String {
        format!("{}{}", self.client.inner.origin, self.path_and_query())
    }

    /// The path with namespace and name replaced by `{namespace}` and
    /// `{name}` (for metrics).
    pub fn url_template(&self) -> String {
        self.path(true)
    }

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

    fn prepare(mut self, mode: Mode) -> Result<(RestClient, Prepared), Error> {
        if let Some(err) = self.err.take() {
            return Err(err);
        }
        self.preflight()?;
        let inner = &self.client.inner;
        // A request without headers or body of its own sends the client's
        // prepared set (cloned per attempt, never built here).
        let headers = if self.headers.is_empty() && self.body.is_none() {
            None
        } else {
            let mut headers = with_defaults(
                std::mem::take(&mut self.headers),
                &inner.default_headers,
                &inner.accept,
            );
            if self.body.is_some() && !headers.contains_key(http::header::CONTENT_TYPE) {
                let ct = self
                    .content_type
                    .clone()
                    .unwrap_or_else(|| inner.content_type.clone());
                headers.insert(http::header::CONTENT_TYPE, ct);
            }
            Some(headers)
        };
        let prepared = Prepared {
            verb: self.verb,
            path_and_query: self.path_and_query(),
            // Only a metrics hook reads the template.
            url_template: if inner.metrics.is_some() {
                self.url_template()
            } else {
                String::new()
            },
            headers,
            body: self.body.take(),
            max_retries: self.max_retries,
            timeout: self.timeout,
            stream_deadline: match mode {
                Mode::Do => None,
                _ => crate::budget::stream_deadline(self.timeout.or_else(|| {
                    let secs = self.params.get("timeoutSeconds")?.trim().parse().ok()?;
                    Some(Duration::from_secs(secs))
                })),
            },
            mode,
        };
        Ok((self.client, prepared))
    }

    /// Send and return the final response whatever its status (after
    /// retries). Transport and builder errors are `Err`.
    pub async fn send_raw(self) -> Result<Response, Error> {
        let (client, prepared) = self.prepare(Mode::Do)?;
        execute::send(&client.inner, prepared).await
    }

    /// Send (client-go's `Do`): a 200–206 response, or the server's error
    /// as [`Error::Api`].
    pub async fn send(self) -> Result<Response, Error> {
        self.send_raw().await?.into_result()
    }

    /// Send and decode the body as JSON into `T`.
    pub async fn send_json<T: DeserializeOwned>(self) -> Result<T, Error> {
        self.send().await?.json()
    }

    /// Start a watch: a stream of typed events.
    pub async fn watch<T: DeserializeOwned>(self) -> Result<WatchStream<T>, Error> {
        let (client, prepared) = self.prepare(Mode::Watch)?;
        let body = execute::open(&client.inner, prepared).await?;
        Ok(WatchStream::from_bytes(body))
    }

    /// Start a watch that resumes on the next API server when its server
    /// dies or hangs, from the last resourceVersion seen (see
    /// [`ResumableWatch`]). Set `resourceVersion` (from a list) and, for
    /// quiet resources, `allowWatchBookmarks=true` so the idle timeout
    /// ([`RestConfig::with_watch_idle_timeout`](crate::RestConfig::with_watch_idle_timeout))
    /// is not mistaken for a hang. Works with one endpoint too (it then
    /// reconnects to the same server).
    pub async fn watch_resumable<T: DeserializeOwned + Send + 'static>(
        self,
    ) -> Result<ResumableWatch<T>, Error> {
        let mut path = String::new();
        path_escape(&self.path(false), &mut path);
        let mut params = self.params.clone();
        if let Some(t) = self.timeout {
            params.set("timeout", &go_duration(t));
        }
        let (client, prepared) = self.prepare(Mode::Watch)?;
        let (body, origin) = execute::open_at(&client.inner, &prepared).await?;
        Ok(ResumableWatch::new(
            client, prepared, path, params, body, origin,
        ))
    }

    /// The raw body as a byte stream (e.g. logs). Any 2xx is success;
    /// transport errors are not retried.
    pub async fn stream(
        self,
    ) -> Result<impl Stream<Item = Result<Bytes, Error>> + Send + 'static, Error> {
        let (client, prepared) = self.prepare(Mode::Stream)?;
        execute::open(&client.inner, prepared).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RestConfig;

    fn client(base: &str, api_path: &str) -> RestClient {
        RestClient::new(RestConfig::new(base).with_api_path(api_path)).unwrap()
    }

    fn c() -> RestClient {
        client("https://h:6443", "")
    }

    fn err(r: Request) -> String {
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
        let cases: Vec<(Request, &str)> = vec![
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
}
