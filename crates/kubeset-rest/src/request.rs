//! [`Request`]: a [`RequestDesc`] bound to the client that sends it
//! (client-go's `rest.Request`). The URL rules and the builder live in
//! [`desc`](crate::desc); this is the top layer, where a description meets
//! the transport.

use bytes::Bytes;
use futures::Stream;

use serde::de::DeserializeOwned;

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
/// a [`RequestDesc`] bound to the [`RestClient`] that sends it. The
/// builder methods are the description's ([`RequestDesc::namespace`], …:
/// written once, for both); the sending calls are here.
///
/// The first builder error sticks: later calls are ignored and `send`
/// returns it without touching the network.
pub type Request = RequestDesc<RestClient>;

impl RestClient {
    /// A request with this verb.
    #[inline]
    pub fn verb(&self, verb: Verb) -> Request {
        RequestDesc::new(verb, &self.inner.base).bind(self.clone())
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
        RequestDesc::patch(&self.inner.base, patch).bind(self.clone())
    }
}

impl Request {
    pub(crate) fn prepare_to_send(self, mode: Mode) -> Result<(RestClient, Prepared), Error> {
        let (client, desc) = self.into_parts();
        let prepared = desc.prepare_for(mode, &client.inner.defaults)?;
        Ok((client, prepared))
    }

    /// The `http::Request` the first attempt would send to the first
    /// endpoint, with the client's default headers and its credentials
    /// (`Authorization` from the authenticator): what an upgrade (exec,
    /// attach, port-forward over WebSocket) sends through its own
    /// connection. Builder and preflight errors are returned here.
    pub async fn into_http(self) -> Result<http::Request<Bytes>, Error> {
        let (client, prepared) = self.prepare_to_send(Mode::Stream)?;
        client.http_request(&prepared).await
    }

    /// Send and return the final response whatever its status (after
    /// retries). Transport and builder errors are `Err`.
    pub async fn send_raw(self) -> Result<Response, Error> {
        let (client, prepared) = self.prepare_to_send(Mode::Do)?;
        execute::send(&client.inner, &prepared).await
    }

    /// Send (client-go's `Do`): a 200–206 response, or the server's error
    /// as [`Error::Api`].
    pub async fn send(self) -> Result<Response, Error> {
        // Not `send_raw().await`: one async state fewer to move per call.
        let (client, prepared) = self.prepare_to_send(Mode::Do)?;
        execute::send(&client.inner, &prepared).await?.into_result()
    }

    /// Send and decode the body as JSON into `T`.
    pub async fn send_json<T: DeserializeOwned>(self) -> Result<T, Error> {
        // `send().await?.json()` without its async state (`json` returns the
        // same error for a failed status as `send`).
        let (client, prepared) = self.prepare_to_send(Mode::Do)?;
        execute::send(&client.inner, &prepared).await?.json()
    }

    /// Start a watch: a stream of typed events.
    pub async fn watch<T: DeserializeOwned>(self) -> Result<WatchStream<T>, Error> {
        let (client, prepared) = self.prepare_to_send(Mode::Watch)?;
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
        let (client, prepared) = self.prepare_to_send(Mode::Watch)?;
        let (body, origin) = execute::open_at(&client.inner, &prepared).await?;
        Ok(ResumableWatch::new(client, prepared, body, origin))
    }

    /// The raw body as a byte stream (e.g. logs). Any 2xx is success;
    /// transport errors are not retried.
    pub async fn stream(
        self,
    ) -> Result<impl Stream<Item = Result<Bytes, Error>> + Send + 'static, Error> {
        let (client, prepared) = self.prepare_to_send(Mode::Stream)?;
        execute::open(&client.inner, prepared).await
    }
}
