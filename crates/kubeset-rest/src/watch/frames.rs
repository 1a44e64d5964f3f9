//! Protobuf watch streams, sans-IO: kube-apiserver's
//! `application/vnd.kubernetes.protobuf;stream=watch` body is a sequence
//! of frames, each a 4-byte big-endian length and that many bytes of a
//! bare `metav1.WatchEvent` message (no `k8s\0` magic, no envelope):
//! field 1 the event `type`, field 2 a `runtime.RawExtension` whose field
//! 1 holds the object's own `k8s\0` + `runtime.Unknown` bytes (a `Status`
//! for `ERROR`). Checked against kube-apiserver 1.35 (`ADDED`, `DELETED`,
//! `BOOKMARK` frames of a ConfigMap watch).
//!
//! This layer knows no models: the caller's [`ObjectDecoder`] turns the
//! object bytes into `T` (and an `ERROR`'s `Status` into JSON). The events
//! are the same [`WatchEvent`]s as the JSON [`WatchStream`]'s, with the
//! same errors and end rules: a frame announcing more than
//! [`MAX_EVENT_BYTES`] is [`Error::WatchLineTooLong`], a body cut inside a
//! frame is [`Error::WatchCut`], bytes that are not a `WatchEvent` are
//! [`Error::WatchFrame`].

use std::sync::Arc;

use bytes::{Buf as _, Bytes, BytesMut};
use futures::Stream;
use serde::de::DeserializeOwned;

use super::{MAX_EVENT_BYTES, WatchEvent, WatchStream};
use crate::content::PROTOBUF;
use crate::error::{Error, FrameError};

/// The error of an [`ObjectDecoder`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What the REST layer needs from the model layer to read protobuf watch
/// events (kubeset-client implements it with the generated codecs).
pub trait ObjectDecoder<T>: Send + Sync {
    /// One object from its bytes (`k8s\0` + `runtime.Unknown`).
    fn object(&self, bytes: &[u8]) -> Result<T, BoxError>;
    /// An `ERROR` event's `Status` (same bytes layout) as its JSON form.
    fn status(&self, bytes: &[u8]) -> Result<serde_json::Value, BoxError>;
    /// The object's `metadata.resourceVersion`, read from its bytes
    /// (resumable watches resume from it); `None` when absent or empty.
    fn resource_version(&self, bytes: &[u8]) -> Option<String>;
}

/// Whether `content_type` is a protobuf body (any parameters, e.g.
/// `;stream=watch`).
pub fn is_protobuf(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| ct.split(';').next().unwrap_or("").trim() == PROTOBUF)
}

/// One decoded frame: the event and, for all but `ERROR`, its object's
/// resourceVersion.
pub(super) type Frame<T> = (WatchEvent<T>, Option<String>);

/// Bytes in, events out, for kube-apiserver's
/// `application/vnd.kubernetes.protobuf;stream=watch` bodies: each frame
/// is a 4-byte big-endian length and a bare `metav1.WatchEvent` (`type` =
/// 1, `object` = 2, a `RawExtension` whose field 1 holds the object's own
/// `k8s\0` + `runtime.Unknown` bytes, a `Status` for `ERROR`). Frames
/// split across chunks anywhere are joined; nothing beyond one frame (at
/// most [`MAX_EVENT_BYTES`], refused from its length alone as
/// [`Error::WatchLineTooLong`]) plus one chunk is ever buffered; a body
/// cut inside a frame is [`Error::WatchCut`]; bytes that are not a
/// `WatchEvent` are [`Error::WatchFrame`], never a panic.
///
/// ```
/// use std::sync::Arc;
/// use kubeset_rest::watch::{BoxError, FrameDecoder, ObjectDecoder, WatchEvent};
///
/// /// Objects are their bytes after the magic, as text.
/// struct Text;
/// impl ObjectDecoder<String> for Text {
///     fn object(&self, bytes: &[u8]) -> Result<String, BoxError> {
///         Ok(String::from_utf8(bytes[4..].to_vec())?)
///     }
///     fn status(&self, _: &[u8]) -> Result<serde_json::Value, BoxError> {
///         Err("no status".into())
///     }
///     fn resource_version(&self, _: &[u8]) -> Option<String> {
///         None
///     }
/// }
///
/// // type = "ADDED", object = { raw = "k8s\0hi" }
/// let event = b"\x0a\x05ADDED\x12\x08\x0a\x06k8s\x00hi";
/// let mut frame = (event.len() as u32).to_be_bytes().to_vec();
/// frame.extend_from_slice(event);
///
/// let mut d = FrameDecoder::new(Arc::new(Text));
/// d.push(&frame[..5]);
/// assert!(d.next_event().is_none(), "half a frame");
/// d.push(&frame[5..]);
/// assert_eq!(d.next_event().unwrap().unwrap(), WatchEvent::Added("hi".to_owned()));
/// assert!(d.finish().is_ok());
/// ```
pub struct FrameDecoder<T> {
    buf: BytesMut,
    decoder: Arc<dyn ObjectDecoder<T>>,
    limit: usize,
}

impl<T> std::fmt::Debug for FrameDecoder<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameDecoder")
            .field("buffered", &self.buf.len())
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl<T> FrameDecoder<T> {
    /// A decoder of frames whose objects `decoder` reads.
    pub fn new(decoder: Arc<dyn ObjectDecoder<T>>) -> Self {
        Self {
            buf: BytesMut::new(),
            decoder,
            limit: MAX_EVENT_BYTES,
        }
    }

    /// A smaller frame limit than [`MAX_EVENT_BYTES`] (a larger one is
    /// capped to it).
    #[must_use]
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = limit.min(MAX_EVENT_BYTES);
        self
    }

    /// Bytes received and not yet decoded.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Appends a chunk of the body.
    pub fn push(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
    }

    /// The next complete frame's event, `None` until one is buffered. After
    /// an `Err` the decoder holds nothing; the stream is over.
    pub fn next_event(&mut self) -> Option<Result<WatchEvent<T>, Error>> {
        self.next_frame().map(|r| r.map(|(ev, _)| ev))
    }

    pub(super) fn next_frame(&mut self) -> Option<Result<Frame<T>, Error>> {
        let header: [u8; 4] = self.buf.get(..4)?.try_into().ok()?;
        let len = u32::from_be_bytes(header) as usize;
        if len > self.limit {
            self.buf = BytesMut::new();
            return Some(Err(Error::WatchLineTooLong { limit: self.limit }));
        }
        if self.buf.len() < 4 + len {
            // Room for the rest of the frame, once.
            self.buf.reserve(4 + len - self.buf.len());
            return None;
        }
        self.buf.advance(4);
        let frame = self.buf.split_to(len).freeze();
        let item = decode_frame(&*self.decoder, &frame);
        if item.is_err() {
            self.buf = BytesMut::new();
        }
        Some(item)
    }

    /// The body ended: an error when it ended inside a frame.
    pub fn finish(&mut self) -> Result<(), Error> {
        let received = std::mem::take(&mut self.buf).len();
        if received == 0 {
            Ok(())
        } else {
            Err(Error::WatchCut { received })
        }
    }
}

/// One `metav1.WatchEvent` message.
fn decode_frame<T>(decoder: &dyn ObjectDecoder<T>, frame: &[u8]) -> Result<Frame<T>, Error> {
    let wire = |reason| Error::WatchFrame {
        source: FrameError::Wire { reason },
    };
    let (event_type, raw) = parse_event(frame).map_err(wire)?;
    let event_type = event_type.ok_or(Error::WatchFrame {
        source: FrameError::MissingType,
    })?;
    let event_type: &'static str = match event_type {
        b"ADDED" => "ADDED",
        b"MODIFIED" => "MODIFIED",
        b"DELETED" => "DELETED",
        b"BOOKMARK" => "BOOKMARK",
        b"ERROR" => "ERROR",
        other => {
            return Err(Error::InvalidWatchEventType {
                event_type: String::from_utf8_lossy(other).into_owned(),
            });
        }
    };
    let raw = raw.ok_or(Error::WatchFrame {
        source: FrameError::MissingObject { event_type },
    })?;
    let failed = |source| Error::WatchFrame {
        source: FrameError::Object { event_type, source },
    };
    if event_type == "ERROR" {
        let json = decoder.status(raw).map_err(failed)?;
        return Ok((WatchEvent::Error(super::error_from_json(&json)), None));
    }
    let object = decoder.object(raw).map_err(failed)?;
    let rv = decoder.resource_version(raw);
    let event = match event_type {
        "ADDED" => WatchEvent::Added(object),
        "MODIFIED" => WatchEvent::Modified(object),
        "DELETED" => WatchEvent::Deleted(object),
        _ => WatchEvent::Bookmark(object),
    };
    Ok((event, rv))
}

/// A `WatchEvent`'s `type` and `object.raw` bytes, when present.
type EventFields<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// `type` (field 1) and `object.raw` (field 2, then field 1) of a
/// `WatchEvent`; unknown fields skipped, the last occurrence wins (as
/// protobuf's merge rule).
fn parse_event(b: &[u8]) -> Result<EventFields<'_>, &'static str> {
    let (mut event_type, mut raw) = (None, None);
    let mut at = 0;
    while at < b.len() {
        match field(b, &mut at)? {
            (1, Some(v)) => event_type = Some(v),
            (2, Some(ext)) => {
                let mut i = 0;
                while i < ext.len() {
                    if let (1, Some(v)) = field(ext, &mut i)? {
                        raw = Some(v);
                    }
                }
            }
            (1 | 2, None) => return Err("a WatchEvent field is not length-delimited"),
            _ => {}
        }
    }
    Ok((event_type, raw))
}

/// One field at `*at`: its number and, when length-delimited, its bytes.
fn field<'a>(b: &'a [u8], at: &mut usize) -> Result<(u64, Option<&'a [u8]>), &'static str> {
    let tag = varint(b, at)?;
    let skip = |at: &mut usize, n: usize| -> Result<(), &'static str> {
        *at = at
            .checked_add(n)
            .filter(|end| *end <= b.len())
            .ok_or("a field runs past the end of the frame")?;
        Ok(())
    };
    match tag & 7 {
        0 => varint(b, at).map(|_| (tag >> 3, None)),
        1 => skip(at, 8).map(|()| (tag >> 3, None)),
        5 => skip(at, 4).map(|()| (tag >> 3, None)),
        2 => {
            let len = usize::try_from(varint(b, at)?).map_err(|_| "a length overflows")?;
            let start = *at;
            skip(at, len)?;
            Ok((tag >> 3, Some(&b[start..*at])))
        }
        _ => Err("an unsupported wire type"),
    }
}

fn varint(b: &[u8], at: &mut usize) -> Result<u64, &'static str> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b
            .get(*at)
            .ok_or("a varint runs past the end of the frame")?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("a varint is longer than 10 bytes")
}

impl<T: DeserializeOwned> WatchStream<T> {
    /// Decode protobuf watch frames (`;stream=watch`) from any byte stream
    /// (chunks may split frames anywhere), objects read by `decoder`
    /// (kubeset-client's `protobuf::watch_decoder::<K>()` for a built-in
    /// kind). Events, errors and end rules are [`WatchStream`]'s; the
    /// frames are [`FrameDecoder`]'s.
    pub fn from_protobuf_bytes(
        body: impl Stream<Item = Result<Bytes, Error>> + Send + 'static,
        decoder: Arc<dyn ObjectDecoder<T>>,
    ) -> Self {
        let mut s = Self::from_bytes(body);
        s.frames = Some(FrameDecoder::new(decoder));
        s
    }

    /// The stream of an opened watch: protobuf frames when the server
    /// answered in protobuf and a decoder is given, else JSON lines.
    pub(crate) fn for_content_type(
        body: impl Stream<Item = Result<Bytes, Error>> + Send + 'static,
        content_type: Option<&str>,
        decoder: Option<&Arc<dyn ObjectDecoder<T>>>,
    ) -> Self {
        match decoder {
            Some(d) if is_protobuf(content_type) => Self::from_protobuf_bytes(body, d.clone()),
            _ => Self::from_bytes(body),
        }
    }
}

/// Opens a watch; a refusal in protobuf (kube-apiserver writes a watch's
/// error `Status` in the negotiated format) is read with `decoder`, so it
/// is the same typed [`Error::Api`] as a JSON one.
pub(crate) async fn open<T>(
    inner: &crate::client::Inner,
    p: &crate::desc::Prepared,
    decoder: Option<&Arc<dyn ObjectDecoder<T>>>,
) -> Result<crate::execute::Opened, Error> {
    crate::execute::open_response(inner, p)
        .await?
        .map_err(|mut resp| {
            if let Some(d) = decoder
                && is_protobuf(resp.content_type())
                && let Ok(json) = d.status(&resp.body)
                && let Ok(body) = serde_json::to_vec(&json)
            {
                resp.body = body.into();
                resp.set_content_type(http::HeaderValue::from_static("application/json"));
            }
            crate::execute::open_error(resp)
        })
}

#[cfg(test)]
mod tests;
