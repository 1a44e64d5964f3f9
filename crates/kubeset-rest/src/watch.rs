//! Watch streams: newline-delimited JSON events decoded straight from a
//! byte buffer (no `String` per line, the object decoded once).

use std::{
    fmt,
    marker::PhantomData,
    pin::Pin,
    task::{Context, Poll},
};

use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt, stream::BoxStream};
use serde::{
    Deserialize, Deserializer,
    de::{self, DeserializeOwned, IgnoredAny, MapAccess, Visitor},
};

use crate::{
    error::{ApiError, Error},
    status::StatusBody,
    transport::TransportKind,
};

/// A line longer than this (without a newline) ends the watch with
/// [`Error::WatchLineTooLong`].
pub const MAX_EVENT_BYTES: usize = 128 * 1024 * 1024;

/// One watch event.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchEvent<T> {
    /// `ADDED`.
    Added(T),
    /// `MODIFIED`.
    Modified(T),
    /// `DELETED`: the last state of the object.
    Deleted(T),
    /// `BOOKMARK`: only the resourceVersion is meaningful.
    Bookmark(T),
    /// `ERROR`: the server's `Status` (e.g. 410 Expired: relist).
    Error(ApiError),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Added,
    Modified,
    Deleted,
    Bookmark,
    Error,
}

/// The event type, or the unknown string.
enum EventType {
    Known(Kind),
    Invalid(String),
}

impl<'de> Deserialize<'de> for EventType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = EventType;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a watch event type")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<EventType, E> {
                Ok(match v {
                    "ADDED" => EventType::Known(Kind::Added),
                    "MODIFIED" => EventType::Known(Kind::Modified),
                    "DELETED" => EventType::Known(Kind::Deleted),
                    "BOOKMARK" => EventType::Known(Kind::Bookmark),
                    "ERROR" => EventType::Known(Kind::Error),
                    other => EventType::Invalid(other.to_owned()),
                })
            }
        }
        d.deserialize_str(V)
    }
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Field {
    Type,
    Object,
    #[serde(other)]
    Other,
}

/// What one line decoded to.
enum Decoded<T> {
    Event(WatchEvent<T>),
    Invalid(String),
}

fn finish<T>(kind: Kind, object: Option<T>, status: Option<StatusBody>) -> Option<WatchEvent<T>> {
    Some(match kind {
        Kind::Added => WatchEvent::Added(object?),
        Kind::Modified => WatchEvent::Modified(object?),
        Kind::Deleted => WatchEvent::Deleted(object?),
        Kind::Bookmark => WatchEvent::Bookmark(object?),
        Kind::Error => WatchEvent::Error(ApiError::from_status(status?, 500)),
    })
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Decoded<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<fn() -> T>);
        impl<'de, T: DeserializeOwned> Visitor<'de> for V<T> {
            type Value = Decoded<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a watch event object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Decoded<T>, A::Error> {
                let mut kind: Option<EventType> = None;
                let mut object: Option<T> = None;
                let mut status: Option<StatusBody> = None;
                // Only when `object` precedes `type` (the API server sends
                // `type` first): keep it generic and convert at the end.
                let mut early: Option<serde_json::Value> = None;
                while let Some(field) = map.next_key::<Field>()? {
                    match field {
                        Field::Type => kind = Some(map.next_value()?),
                        Field::Object => match &kind {
                            Some(EventType::Known(Kind::Error)) => status = Some(map.next_value()?),
                            Some(EventType::Known(_)) => object = Some(map.next_value()?),
                            Some(EventType::Invalid(_)) => {
                                map.next_value::<IgnoredAny>()?;
                            }
                            None => early = Some(map.next_value()?),
                        },
                        Field::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let kind = match kind {
                    None => return Err(de::Error::missing_field("type")),
                    Some(EventType::Invalid(t)) => return Ok(Decoded::Invalid(t)),
                    Some(EventType::Known(k)) => k,
                };
                if let Some(value) = early {
                    if kind == Kind::Error {
                        status = Some(StatusBody::deserialize(value).map_err(de::Error::custom)?);
                    } else {
                        object = Some(T::deserialize(value).map_err(de::Error::custom)?);
                    }
                }
                finish(kind, object, status)
                    .map(Decoded::Event)
                    .ok_or_else(|| de::Error::missing_field("object"))
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

/// Decode one event line.
fn decode_line<T: DeserializeOwned>(line: &[u8]) -> Result<WatchEvent<T>, Error> {
    match serde_json::from_slice::<Decoded<T>>(line) {
        Ok(Decoded::Event(e)) => Ok(e),
        Ok(Decoded::Invalid(event_type)) => Err(Error::InvalidWatchEventType { event_type }),
        Err(source) => Err(Error::WatchDecode { source }),
    }
}

/// A stream of typed watch events.
///
/// Ends quietly on EOF (even mid-line) and on a timeout or a connection cut
/// short; yields one `Err` and ends on anything else (undecodable line,
/// unknown event type, other transport error).
pub struct WatchStream<T> {
    body: BoxStream<'static, Result<Bytes, Error>>,
    buf: BytesMut,
    scanned: usize,
    done: bool,
    _type: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for WatchStream<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchStream")
            .field("buffered", &self.buf.len())
            .field("done", &self.done)
            .finish()
    }
}

impl<T: DeserializeOwned> WatchStream<T> {
    /// Decode events from any byte stream (chunks may split lines anywhere).
    pub fn from_bytes(body: impl Stream<Item = Result<Bytes, Error>> + Send + 'static) -> Self {
        Self {
            body: body.boxed(),
            buf: BytesMut::new(),
            scanned: 0,
            done: false,
            _type: PhantomData,
        }
    }

    /// The next complete line's event, if a complete line is buffered.
    fn next_buffered(&mut self) -> Option<Result<WatchEvent<T>, Error>> {
        loop {
            let pos = self.buf[self.scanned..].iter().position(|b| *b == b'\n');
            let Some(pos) = pos else {
                self.scanned = self.buf.len();
                return None;
            };
            let line = self.buf.split_to(self.scanned + pos + 1);
            self.scanned = 0;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let item = decode_line(&line);
            if item.is_err() {
                self.end();
            }
            return Some(item);
        }
    }

    fn end(&mut self) {
        self.done = true;
        self.buf = BytesMut::new();
        self.scanned = 0;
    }
}

impl<T: DeserializeOwned> Stream for WatchStream<T> {
    type Item = Result<WatchEvent<T>, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(item) = this.next_buffered() {
                return Poll::Ready(Some(item));
            }
            if this.done {
                return Poll::Ready(None);
            }
            match this.body.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(chunk))) => {
                    this.buf.extend_from_slice(&chunk);
                    if this.buf.len() > MAX_EVENT_BYTES
                        && !this.buf[this.scanned..].contains(&b'\n')
                    {
                        this.end();
                        return Poll::Ready(Some(Err(Error::WatchLineTooLong {
                            limit: MAX_EVENT_BYTES,
                        })));
                    }
                }
                Poll::Ready(Some(Err(e))) => {
                    this.end();
                    let quiet = matches!(
                        e.transport_kind(),
                        Some(TransportKind::UnexpectedEof | TransportKind::Timeout)
                    );
                    return Poll::Ready(if quiet { None } else { Some(Err(e)) });
                }
                Poll::Ready(None) => {
                    let rest = std::mem::take(&mut this.buf);
                    this.end();
                    if rest.iter().all(u8::is_ascii_whitespace) {
                        return Poll::Ready(None);
                    }
                    // A last event without its newline still counts; a
                    // truncated one ends the watch quietly.
                    return Poll::Ready(match decode_line::<T>(&rest) {
                        Ok(ev) => Some(Ok(ev)),
                        Err(Error::WatchDecode { source }) if source.is_eof() => None,
                        Err(e) => Some(Err(e)),
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::stream;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Obj {
        name: String,
    }

    async fn collect(chunks: Vec<&'static [u8]>) -> Vec<Result<WatchEvent<Obj>, Error>> {
        let s = stream::iter(chunks.into_iter().map(|c| Ok(Bytes::from_static(c))));
        WatchStream::<Obj>::from_bytes(s).collect().await
    }

    fn obj(n: &str) -> Obj {
        Obj { name: n.into() }
    }

    #[tokio::test]
    async fn all_event_types_split_anywhere() {
        let text: &'static str = concat!(
            r#"{"type":"ADDED","object":{"name":"a"}}"#,
            "\n",
            r#"{"type":"MODIFIED","object":{"name":"b"}}"#,
            "\n\n",
            r#"{"object":{"name":"c"},"type":"DELETED"}"#,
            "\n",
            r#"{"type":"BOOKMARK","object":{"name":"d"},"extra":[1,2]}"#,
            "\n",
            r#"{"type":"ERROR","object":{"kind":"Status","status":"Failure","message":"too old","reason":"Expired","code":410}}"#,
            "\n"
        );
        for split in [1usize, 3, 7, 40, 1000] {
            let chunks: Vec<&'static [u8]> = text.as_bytes().chunks(split).collect();
            let got = collect(chunks).await;
            let got: Vec<_> = got.into_iter().map(|r| r.unwrap()).collect();
            assert_eq!(got.len(), 5, "split {split}");
            assert_eq!(got[0], WatchEvent::Added(obj("a")));
            assert_eq!(got[1], WatchEvent::Modified(obj("b")));
            assert_eq!(got[2], WatchEvent::Deleted(obj("c")));
            assert_eq!(got[3], WatchEvent::Bookmark(obj("d")));
            match &got[4] {
                WatchEvent::Error(e) => {
                    assert!(e.is_gone());
                    assert_eq!(e.code, 410);
                    assert_eq!(e.message, "too old");
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[tokio::test]
    async fn unknown_type_is_one_error_then_end() {
        let got = collect(vec![
            b"{\"type\":\"SNAPSHOT\",\"object\":{\"name\":\"a\"}}\n",
            b"{\"type\":\"ADDED\",\"object\":{\"name\":\"a\"}}\n",
        ])
        .await;
        assert_eq!(got.len(), 1);
        let err = got.into_iter().next().unwrap().unwrap_err();
        assert_eq!(err.to_string(), "got invalid watch event type: SNAPSHOT");
    }

    #[tokio::test]
    async fn malformed_line_is_one_error_then_end() {
        let got = collect(vec![
            b"{\"type\":\"ADDED\",\"object\":{\"name\":\"a\"}}\n",
            b"{\"type\":\"ADDED\",\"object\":{\"nme\":1}}\nnot json\n",
            b"{\"type\":\"ADDED\",\"object\":{\"name\":\"z\"}}\n",
        ])
        .await;
        assert_eq!(got.len(), 2);
        assert!(matches!(got[0], Ok(WatchEvent::Added(_))));
        assert!(matches!(got[1], Err(Error::WatchDecode { .. })));
    }

    #[tokio::test]
    async fn eof_mid_line_is_quiet_and_last_line_without_newline_counts() {
        let got = collect(vec![
            b"{\"type\":\"ADDED\",\"object\":{\"name\":\"a\"}}\n{\"type\":\"ADD",
        ])
        .await;
        assert_eq!(got.len(), 1);
        let got = collect(vec![b"{\"type\":\"ADDED\",\"object\":{\"name\":\"a\"}}"]).await;
        assert_eq!(got.len(), 1);
        assert!(matches!(got[0], Ok(WatchEvent::Added(_))));
        assert!(collect(vec![]).await.is_empty());
    }

    #[tokio::test]
    async fn missing_object_or_type_is_an_error() {
        let got = collect(vec![b"{\"type\":\"ADDED\"}\n"]).await;
        assert!(matches!(got[0], Err(Error::WatchDecode { .. })));
        let got = collect(vec![b"{\"object\":{}}\n"]).await;
        assert!(matches!(got[0], Err(Error::WatchDecode { .. })));
        let got = collect(vec![b"[1,2]\n"]).await;
        assert!(matches!(got[0], Err(Error::WatchDecode { .. })));
    }
}
