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
    collection::CollectionPath,
    error::Error,
    url::{Params, go_list, go_quote, join, segment_problems},
    verb::{PatchType, Verb},
};

mod base;
mod defaults;
mod path;
mod prepare;
#[cfg(test)]
mod tests;

pub use base::Base;
pub use defaults::Defaults;
pub use prepare::{Prepared, to_http};

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

/// One request, described (client-go's `rest.Request`), with the client
/// that will send it (`C`; `()` while none).
///
/// The builder methods are written once, here, for both forms: a
/// `RequestDesc` (no client: pure, testable without I/O, turned into a
/// [`Prepared`] by [`prepare`](Self::prepare)), and a
/// [`Request`](crate::Request), the same description
/// [`bound`](Self::bind) to a [`RestClient`](crate::RestClient), which
/// sends it.
///
/// The first builder error sticks: later calls are ignored and
/// [`prepare`](Self::prepare) (or the sending call) returns it.
#[must_use = "a request does nothing until it is prepared or sent"]
pub struct RequestDesc<C = ()> {
    /// Who sends it: `()`, or a [`RestClient`](crate::RestClient).
    client: C,
    /// What it sends: the same for every `C` (its rules are compiled
    /// once, and [`bind`](Self::bind) moves it whole to another client).
    spec: Spec,
}

/// A request's state, without its client.
struct Spec {
    base: Base,
    verb: Verb,
    /// Prefix, namespace and resource taken together from a
    /// [`CollectionPath`]; while set, `path_prefix`, `namespace*` and
    /// `resource` are unused (see [`Spec::unshare`]).
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

impl<C> fmt::Debug for RequestDesc<C> {
    /// Headers and body may carry secrets: only their size is shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spec = &self.spec;
        f.debug_struct("RequestDesc")
            .field("verb", &spec.verb)
            .field("url", &self.url())
            .field("headers", &spec.headers.as_ref().map_or(0, |h| h.len()))
            .field("body_len", &spec.body.as_ref().map(Bytes::len))
            .field("error", &self.error())
            .finish_non_exhaustive()
    }
}

impl RequestDesc {
    /// A request with this verb at `base`'s API prefix.
    pub fn new(verb: Verb, base: &Base) -> Self {
        let spec = Spec {
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
        };
        Self { client: (), spec }
    }

    /// A PATCH of this kind: its Content-Type and, for server-side apply,
    /// its `fieldManager` and `force` parameters.
    pub fn patch(base: &Base, patch: PatchType) -> Self {
        Self::new(Verb::Patch, base).patch_type(patch)
    }
}

impl<C> RequestDesc<C> {
    /// The same description, to be sent by `client` (a
    /// [`RestClient`](crate::RestClient) makes it a
    /// [`Request`](crate::Request)).
    pub fn bind<D>(self, client: D) -> RequestDesc<D> {
        self.rebind(client).1
    }

    /// The client, and the description without it.
    pub fn into_parts(self) -> (C, RequestDesc) {
        self.rebind(())
    }

    /// The client, and the same description for another one.
    fn rebind<D>(self, client: D) -> (C, RequestDesc<D>) {
        let spec = self.spec;
        (self.client, RequestDesc { client, spec })
    }

    /// The client that will send it.
    pub fn client(&self) -> &C {
        &self.client
    }

    /// The builder error, if any.
    pub fn error(&self) -> Option<&Error> {
        self.spec.err.as_deref()
    }

    fn fail(mut self, err: Error) -> Self {
        self.spec.err = Some(Box::new(err));
        self
    }

    /// Start at `collection`: the same as `abs_path(..)`, `namespace(..)`
    /// and `resource(..)` with its arguments, without validating, joining
    /// and escaping them again (when this request has no namespace or
    /// resource yet and `collection` was built for a client with the same
    /// base URL path; otherwise those calls are made).
    // Inline (as `name`): the caller's request is then updated where it
    // is, not moved in and out of the call.
    #[inline]
    pub fn collection(mut self, collection: &CollectionPath) -> Self {
        self.spec.set_collection(collection);
        self
    }

    /// The verb.
    pub fn verb(&self) -> Verb {
        self.spec.verb
    }

    /// The one place where a patch's kind becomes request state: its
    /// Content-Type and, for server-side apply, the `fieldManager` (when
    /// not empty) and `force=true` (when set) parameters.
    fn patch_type(mut self, patch: PatchType) -> Self {
        self.spec.content_type = Some(patch.content_type_header());
        if let PatchType::Apply {
            field_manager,
            force,
        } = &patch
        {
            if !field_manager.is_empty() {
                self.spec.params.add("fieldManager", field_manager);
            }
            if *force {
                self.spec.params.add("force", "true");
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
        self.spec.set_abs_path(segments);
        self
    }

    /// Apply a builder step unless an error stuck; its error sticks.
    fn update(mut self, step: impl FnOnce(&mut Spec) -> Result<(), Error>) -> Self {
        self.spec.update_in_place(step);
        self
    }

    /// The namespace; `""` leaves the segment out (and arms the preflight
    /// checks). Setting it twice is an error.
    pub fn namespace(mut self, namespace: &str) -> Self {
        self.spec.set_namespace(namespace);
        self
    }

    /// The resource (lowercased in the URL). Setting it twice is an error.
    pub fn resource(mut self, resource: &str) -> Self {
        self.spec.set_resource(resource);
        self
    }

    /// The object name; empty or set twice is an error.
    #[inline]
    pub fn name(mut self, name: &str) -> Self {
        self.spec.set_name(name);
        self
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
        if self.spec.err.is_none() {
            self.spec.params.add(key, value.as_ref());
        }
        self
    }

    /// Add a request header (overrides `Accept` and `Content-Type` defaults).
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        if self.spec.err.is_none() {
            self.spec
                .headers
                .get_or_insert_default()
                .append(name, value);
        }
        self
    }

    /// Timeout for the whole request including retries; also sent as the
    /// `timeout` parameter (replacing one set with `param`). Zero: none.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        if self.spec.err.is_none() {
            self.spec.timeout = (!timeout.is_zero()).then_some(timeout);
        }
        self
    }

    /// The request body, sent whole on every attempt.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        if self.spec.err.is_none() {
            self.spec.body = Some(body.into());
        }
        self
    }

    /// Serialize `value` as JSON for the body.
    pub fn json_body<T: Serialize + ?Sized>(self, value: &T) -> Self {
        if self.spec.err.is_some() {
            return self;
        }
        match serde_json::to_vec(value) {
            Ok(v) => self.body(v),
            Err(source) => self.fail(Error::SerializeBody { source }),
        }
    }

    /// Maximum number of retries for this request.
    pub fn max_retries(mut self, max_retries: u32) -> Self {
        self.spec.max_retries = Some(max_retries);
        self
    }
}

/// The builder steps that change the state in place (and the rules they
/// check), for every `C` at once.
impl Spec {
    /// [`RequestDesc::collection`] in place.
    fn set_collection(&mut self, collection: &CollectionPath) {
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
        self.set_abs_path(&c.abs);
        if let Some(ns) = &c.namespace_arg {
            self.set_namespace(ns);
        }
        self.set_resource(&c.resource_arg);
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

    /// [`RequestDesc::abs_path`] in place.
    fn set_abs_path<I, S>(&mut self, segments: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        if self.err.is_some() {
            return;
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
    }

    /// Apply a builder step unless an error stuck; its error sticks.
    fn update_in_place(&mut self, step: impl FnOnce(&mut Self) -> Result<(), Error>) {
        if self.err.is_none()
            && let Err(err) = step(self)
        {
            self.err = Some(Box::new(err));
        }
    }

    /// [`RequestDesc::namespace`] in place.
    fn set_namespace(&mut self, namespace: &str) {
        self.update_in_place(|r| {
            r.unshare();
            if r.namespace_set {
                return Err(already_set("namespace", &r.namespace, namespace));
            }
            check_segment("namespace", namespace)?;
            r.namespace_set = true;
            r.namespace = namespace.to_owned();
            Ok(())
        });
    }

    /// [`RequestDesc::resource`] in place.
    fn set_resource(&mut self, resource: &str) {
        self.update_in_place(|r| {
            r.unshare();
            if !r.resource.is_empty() {
                return Err(already_set("resource", &r.resource, resource));
            }
            check_segment("resource", resource)?;
            r.resource = resource.to_owned();
            Ok(())
        });
    }

    /// [`RequestDesc::name`] in place.
    fn set_name(&mut self, name: &str) {
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
}
