//! A response as the transport returned it: reqwest's, or a tower
//! service's ([`crate::service`]). The attempt loop reads both the same way.

use bytes::Bytes;
use futures::{StreamExt, stream::BoxStream};
use http::{HeaderMap, StatusCode};
use http_body::Body as _;

use crate::{error::Error, service::Body, transport::classify, verb::Verb};

/// One response, its body not read yet.
pub(crate) enum Sent {
    Reqwest(reqwest::Response),
    Service(http::Response<Body>),
}

impl Sent {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Sent::Reqwest(r) => r.status(),
            Sent::Service(r) => r.status(),
        }
    }

    /// The headers, moved out (not copied).
    pub(crate) fn take_headers(&mut self) -> HeaderMap {
        match self {
            Sent::Reqwest(r) => std::mem::take(r.headers_mut()),
            Sent::Service(r) => std::mem::take(r.headers_mut()),
        }
    }

    /// The body's length when it is known before reading it.
    pub(crate) fn content_length(&self) -> Option<u64> {
        match self {
            Sent::Reqwest(r) => r.content_length(),
            Sent::Service(r) => r.body().size_hint().exact(),
        }
    }

    /// The next chunk of the body.
    pub(crate) async fn chunk(&mut self) -> Result<Option<Bytes>, ChunkError> {
        match self {
            Sent::Reqwest(r) => r.chunk().await.map_err(ChunkError::Reqwest),
            Sent::Service(r) => r.body_mut().chunk().await.map_err(ChunkError::Service),
        }
    }

    /// The body as a stream of chunks.
    pub(crate) fn into_stream(self) -> BoxStream<'static, Result<Bytes, Error>> {
        match self {
            Sent::Reqwest(r) => r
                .bytes_stream()
                .map(|r| {
                    r.map_err(|e| Error::Body {
                        kind: classify(&e),
                        source: e.without_url(),
                    })
                })
                .boxed(),
            Sent::Service(r) => futures::stream::unfold(r.into_body(), |mut body| async move {
                match body.chunk().await {
                    Ok(Some(data)) => Some((Ok(data), body)),
                    Ok(None) => None,
                    Err(source) => Some((Err(Error::ServiceBody { source }), body)),
                }
            })
            .boxed(),
        }
    }
}

/// A chunk that could not be read, before it is named ([`ChunkError::named`]).
pub(crate) enum ChunkError {
    Reqwest(reqwest::Error),
    Service(crate::service::BoxError),
}

impl ChunkError {
    /// The error, naming the request it was read for.
    pub(crate) fn named(self, verb: Verb, url: String) -> Error {
        match self {
            ChunkError::Reqwest(e) => Error::Transport {
                kind: classify(&e),
                verb,
                url,
                source: e.without_url(),
            },
            ChunkError::Service(source) => Error::ServiceBody { source },
        }
    }
}
