//! [`Request`]: a [`RequestDesc`] and the client that sends it (client-go's
//! `rest.Request`). The URL rules live in [`desc`](crate::desc); this is
//! the top layer, where a description meets the transport.

use std::{fmt, time::Duration};

use bytes::Bytes;
use futures::Stream;
use http::{HeaderName, HeaderValue};
use serde::{Serialize, de::DeserializeOwned};

use crate::{
    client::RestClient,
    collection::CollectionPath,
    desc::{Prepared, RequestDesc},
    error::Error,
    execute::{self, Mode},
    response::Response,
    verb::{PatchType, Verb},
    watch::{ResumableWatch, WatchStream},
};

/// One request to the API server, built like client-go's `rest.Request`:
/// a [`RequestDesc`] (every builder method is the description's) sent by
/// its [`RestClient`].
///
/// The first builder error sticks: later calls are ignored and `send`
/// returns it without touching the network.
#[must_use = "a request does nothing until it is sent"]
pub struct Request {
    client: RestClient,
    desc: RequestDesc,
}

impl fmt::Debug for Request {
    /// Headers and body may carry secrets: only their size is shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.desc, f)
    }
}

impl RestClient {
    /// A request with this verb.
    #[inline]
    pub fn verb(&self, verb: Verb) -> Request {
        Request::new(self.clone(), RequestDesc::new(verb, &self.inner.base))
    }

    /// The collection of `resource` under `abs_path` (`["api", "v1"]`,
    /// `["apis", group, version]`), in `namespace` when given, validated
    /// and joined once for [`Request::collection`].
    pub fn collection(
        &self,
        abs_path: &[&str],
        namespace: Option<&str>,
        resource: &str,
    ) -> CollectionPath {
        self.inner.base.collection(abs_path, namespace, resource)
    }

    /// A GET request.
    pub fn get(&self) -> Request {
        self.verb(Verb::Get)
    }

    /// A POST request.
    pub fn post(&self) -> Request {
        self.verb(Verb::Post)
    }

    /// A PUT request.
    pub fn put(&self) -> Request {
        self.verb(Verb::Put)
    }

    /// A DELETE request.
    pub fn delete(&self) -> Request {
        self.verb(Verb::Delete)
    }

    /// A PATCH request of this type (sets the Content-Type; for apply also
    /// `fieldManager` and `force`).
    pub fn patch(&self, patch: PatchType) -> Request {
        Request::new(self.clone(), RequestDesc::patch(&self.inner.base, patch))
    }
}

impl Request {
    /// `desc`, to be sent by `client` (its base should be the client's:
    /// [`RestClient::verb`] makes sure of it).
    #[inline]
    pub fn new(client: RestClient, desc: RequestDesc) -> Self {
        Self { client, desc }
    }

    /// The client and the description.
    pub fn into_parts(self) -> (RestClient, RequestDesc) {
        (self.client, self.desc)
    }

    /// The description.
    pub fn desc(&self) -> &RequestDesc {
        &self.desc
    }

    /// The verb.
    pub fn verb(&self) -> Verb {
        self.desc.verb()
    }

    /// The builder error, if any.
    pub fn error(&self) -> Option<&Error> {
        self.desc.error()
    }

    /// Start at `collection`: the same as `abs_path(..)`, `namespace(..)`
    /// and `resource(..)` with its arguments, without validating, joining
    /// and escaping them again (see [`RequestDesc::collection`]).
    // Inline (as `name`): the caller's request is then updated where it
    // is, not moved in and out of the call.
    #[inline]
    pub fn collection(mut self, collection: &CollectionPath) -> Self {
        self.desc.set_collection(collection);
        self
    }

    /// Append segments to the path prefix (before namespace/resource).
    pub fn prefix<I, S>(mut self, segments: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.desc = self.desc.prefix(segments);
        self
    }

    /// Append segments after everything else (client-go's `Suffix`).
    pub fn suffix<I, S>(mut self, segments: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.desc = self.desc.suffix(segments);
        self
    }

    /// Replace the prefix with the base URL path plus these segments (API
    /// path dropped); a single segment keeps its trailing slash.
    pub fn abs_path<I, S>(mut self, segments: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.desc = self.desc.abs_path(segments);
        self
    }

    /// The namespace; `""` leaves the segment out (and arms the preflight
    /// checks). Setting it twice is an error.
    pub fn namespace(mut self, namespace: &str) -> Self {
        self.desc = self.desc.namespace(namespace);
        self
    }

    /// The resource (lowercased in the URL). Setting it twice is an error.
    pub fn resource(mut self, resource: &str) -> Self {
        self.desc = self.desc.resource(resource);
        self
    }

    /// The object name; empty or set twice is an error.
    #[inline]
    pub fn name(mut self, name: &str) -> Self {
        self.desc.set_name(name);
        self
    }

    /// Subresource path parts (`status`, `scale`, …). Set twice is an error.
    pub fn sub_resource<I, S>(mut self, parts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.desc = self.desc.sub_resource(parts);
        self
    }

    /// Add a query parameter (values accumulate per key).
    pub fn param(mut self, key: &str, value: impl AsRef<str>) -> Self {
        self.desc = self.desc.param(key, value);
        self
    }

    /// Add a request header (overrides `Accept` and `Content-Type` defaults).
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.desc = self.desc.header(name, value);
        self
    }

    /// Timeout for the whole request including retries; also sent as the
    /// `timeout` parameter (replacing one set with `param`). Zero: none.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.desc = self.desc.timeout(timeout);
        self
    }

    /// The request body, sent whole on every attempt.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.desc = self.desc.body(body);
        self
    }

    /// Serialize `value` as JSON for the body.
    pub fn json_body<T: Serialize + ?Sized>(mut self, value: &T) -> Self {
        self.desc = self.desc.json_body(value);
        self
    }

    /// Maximum number of retries for this request.
    pub fn max_retries(mut self, max_retries: u32) -> Self {
        self.desc = self.desc.max_retries(max_retries);
        self
    }

    /// Escaped path and query, independent of the server (so an attempt
    /// can be sent to any base URL).
    pub fn path_and_query(&self) -> String {
        self.desc.path_and_query()
    }

    /// The full URL.
    pub fn url(&self) -> String {
        self.desc.url()
    }

    /// The path with namespace and name replaced by `{namespace}` and
    /// `{name}` (for metrics).
    pub fn url_template(&self) -> String {
        self.desc.url_template()
    }

    pub(crate) fn prepare(self, mode: Mode) -> Result<(RestClient, Prepared), Error> {
        let prepared = self.desc.prepare_for(mode, &self.client.inner.defaults)?;
        Ok((self.client, prepared))
    }

    /// The `http::Request` the first attempt would send to the first
    /// endpoint, with the client's default headers and its credentials
    /// (`Authorization` from the authenticator): what an upgrade (exec,
    /// attach, port-forward over WebSocket) sends through its own
    /// connection. Builder and preflight errors are returned here.
    pub async fn into_http(self) -> Result<http::Request<Bytes>, Error> {
        let (client, prepared) = self.prepare(Mode::Stream)?;
        client.http_request(&prepared).await
    }

    /// Send and return the final response whatever its status (after
    /// retries). Transport and builder errors are `Err`.
    pub async fn send_raw(self) -> Result<Response, Error> {
        let (client, prepared) = self.prepare(Mode::Do)?;
        execute::send(&client.inner, &prepared).await
    }

    /// Send (client-go's `Do`): a 200–206 response, or the server's error
    /// as [`Error::Api`].
    pub async fn send(self) -> Result<Response, Error> {
        // Not `send_raw().await`: one async state fewer to move per call.
        let (client, prepared) = self.prepare(Mode::Do)?;
        execute::send(&client.inner, &prepared).await?.into_result()
    }

    /// Send and decode the body as JSON into `T`.
    pub async fn send_json<T: DeserializeOwned>(self) -> Result<T, Error> {
        // `send().await?.json()` without its async state (`json` returns the
        // same error for a failed status as `send`).
        let (client, prepared) = self.prepare(Mode::Do)?;
        execute::send(&client.inner, &prepared).await?.json()
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
        let (client, prepared) = self.prepare(Mode::Watch)?;
        let (body, origin) = execute::open_at(&client.inner, &prepared).await?;
        Ok(ResumableWatch::new(client, prepared, body, origin))
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
