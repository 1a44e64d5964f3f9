//! Opening a watch in protobuf: [`Request::watch_protobuf`] and
//! [`Request::watch_resumable_protobuf`] send client-go's protobuf
//! `Accept` and read the stream by the response's `Content-Type`
//! (protobuf frames with the caller's decoder, see
//! [`FrameDecoder`](crate::watch::FrameDecoder), or JSON lines). A layer
//! above `request`.

use std::sync::Arc;

use serde::de::DeserializeOwned;

use crate::RestClient;
use crate::content::PROTOBUF_ACCEPT;
use crate::desc::{Mode, Prepared};
use crate::error::Error;
use crate::execute::Opened;
use crate::request::Request;
use crate::watch::{ObjectDecoder, ResumableWatch, WatchStream};

impl Request {
    /// Start a watch that asks for protobuf (client-go's protobuf
    /// `Accept`: protobuf, else JSON) and reads whichever the server
    /// answers: `;stream=watch` frames with `decoder`, or JSON lines.
    pub async fn watch_protobuf<T: DeserializeOwned>(
        self,
        decoder: Arc<dyn ObjectDecoder<T>>,
    ) -> Result<WatchStream<T>, Error> {
        let (_, _, opened) = self.open_protobuf(&decoder).await?;
        Ok(WatchStream::for_content_type(
            opened.body,
            opened.content_type.as_deref(),
            Some(&decoder),
        ))
    }

    /// [`watch_protobuf`](Self::watch_protobuf) that resumes as
    /// [`watch_resumable`](Self::watch_resumable) does; every reopened
    /// stream is read by its own Content-Type.
    pub async fn watch_resumable_protobuf<T: DeserializeOwned + Send + 'static>(
        self,
        decoder: Arc<dyn ObjectDecoder<T>>,
    ) -> Result<ResumableWatch<T>, Error> {
        let (client, prepared, opened) = self.open_protobuf(&decoder).await?;
        Ok(ResumableWatch::with_decoder(
            client,
            prepared,
            opened,
            Some(decoder),
        ))
    }

    /// Opens the watch with client-go's protobuf `Accept`.
    async fn open_protobuf<T>(
        self,
        decoder: &Arc<dyn ObjectDecoder<T>>,
    ) -> Result<(RestClient, Prepared, Opened), Error> {
        let accept = http::HeaderValue::from_static(PROTOBUF_ACCEPT);
        let (client, prepared) = self
            .header(http::header::ACCEPT, accept)
            .prepare_to_send(Mode::Watch)?;
        let opened = crate::watch::open(&client.inner, &prepared, Some(decoder)).await?;
        Ok((client, prepared, opened))
    }
}
