//! Watch streams: newline-delimited JSON events decoded straight from a
//! byte buffer (no `String` per line, the object decoded once), or
//! protobuf `;stream=watch` frames ([`FrameDecoder`]), chosen by the response's
//! `Content-Type`.

mod frames;
mod reopen;

pub use crate::error::FrameError;
pub(crate) use frames::open;
pub use frames::{BoxError, FrameDecoder, ObjectDecoder, is_protobuf};
pub use reopen::{
    HEALTHY_STREAM, MIN_WATCH_TIMEOUT, Verdict, WatchProgress, random_watch_timeout_seconds,
    watch_timeout_seconds,
};

use std::{
    fmt,
    future::Future,
    marker::PhantomData,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
    time::Duration,
};

use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt, stream::BoxStream};
use serde::{
    Deserialize, Deserializer,
    de::{self, DeserializeOwned, IgnoredAny, MapAccess, Visitor},
};

use crate::{
    backoff::Backoff,
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
    /// An `ERROR` with an object, read again from the line by
    /// [`error_event`] (the object may be anything).
    Error,
    Invalid(String),
}

fn finish<T>(kind: Kind, object: Option<T>, error_object: bool) -> Option<Decoded<T>> {
    Some(Decoded::Event(match kind {
        Kind::Added => WatchEvent::Added(object?),
        Kind::Modified => WatchEvent::Modified(object?),
        Kind::Deleted => WatchEvent::Deleted(object?),
        Kind::Bookmark => WatchEvent::Bookmark(object?),
        Kind::Error => return error_object.then_some(Decoded::Error),
    }))
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
                let mut error_object = false;
                // Only when `object` precedes `type` (kube-apiserver sends
                // `type` first; a server that writes its keys sorted, as
                // the embedded one does, does not): keep its text, borrowed
                // from the line, and decode it once the type is known. Not
                // a `Value`: a tree of the whole object, built and dropped
                // per event, costs more than decoding the object itself.
                let mut early: Option<&'de serde_json::value::RawValue> = None;
                while let Some(field) = map.next_key::<Field>()? {
                    match field {
                        Field::Type => kind = Some(map.next_value()?),
                        Field::Object => match &kind {
                            Some(EventType::Known(Kind::Error)) => {
                                map.next_value::<IgnoredAny>()?;
                                error_object = true;
                            }
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
                        error_object = true;
                    } else {
                        object = Some(T::deserialize(value).map_err(de::Error::custom)?);
                    }
                }
                finish(kind, object, error_object).ok_or_else(|| de::Error::missing_field("object"))
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

/// Decode one event line.
fn decode_line<T: DeserializeOwned>(line: &[u8]) -> Result<WatchEvent<T>, Error> {
    match crate::from_json::<Decoded<T>>(line) {
        Ok(Decoded::Event(e)) => Ok(e),
        Ok(Decoded::Error) => Ok(WatchEvent::Error(error_event(line))),
        Ok(Decoded::Invalid(event_type)) => Err(Error::InvalidWatchEventType { event_type }),
        Err(source) => Err(Error::WatchDecode { source }),
    }
}

/// `{"object": <a Status>}`.
#[derive(Deserialize)]
struct StatusLine {
    object: StatusBody,
}

/// `{"object": {"kind": "…"}}`, everything else skipped.
#[derive(Deserialize)]
struct KindLine<'a> {
    #[serde(borrow)]
    object: KindOnly<'a>,
}

#[derive(Deserialize)]
struct KindOnly<'a> {
    #[serde(borrow)]
    kind: Option<std::borrow::Cow<'a, str>>,
}

/// The bytes of an event quoted in an error about it.
const EXCERPT_BYTES: usize = 200;

/// The error of an `ERROR` event (a line that decoded): its `Status`, or,
/// when the object is not one, [`unexpected_object`] with a bounded
/// excerpt of the event.
fn error_event(line: &[u8]) -> ApiError {
    if let Ok(StatusLine { object }) = serde_json::from_slice(line)
        && is_status(&object)
    {
        return ApiError::from_status(object, 500);
    }
    let kind = serde_json::from_slice::<KindLine<'_>>(line)
        .ok()
        .and_then(|l| l.object.kind);
    unexpected_object(kind.as_deref(), line)
}

/// The error of a protobuf `ERROR` event whose object was converted to
/// JSON: as [`error_event`].
pub(crate) fn error_from_json(object: &serde_json::Value) -> ApiError {
    if let Ok(status) = StatusBody::deserialize(object)
        && is_status(&status)
    {
        return ApiError::from_status(status, 500);
    }
    let mut text = Bounded(Vec::new());
    // Stops with an error once the excerpt is full: nothing more is built.
    let _ = serde_json::to_writer(&mut text, object);
    let kind = object.get("kind").and_then(serde_json::Value::as_str);
    unexpected_object(kind, &text.0)
}

/// A `Status` says it is one, or has no `kind` but a Status's fields.
fn is_status(status: &StatusBody) -> bool {
    let has_fields = status.code.is_some() || status.message.is_some() || status.reason.is_some();
    match status.kind.as_deref() {
        Some(kind) => kind == "Status",
        None => has_fields,
    }
}

/// An `ERROR` event whose object is not a `Status`: an InternalError (500)
/// naming its kind, with a bounded excerpt of the event, as client-go's
/// `unexpected object` error.
fn unexpected_object(kind: Option<&str>, text: &[u8]) -> ApiError {
    let kind = kind.map_or_else(
        || "no kind".to_owned(),
        |k| format!("kind \"{}\"", excerpt(k.as_bytes(), 64)),
    );
    ApiError::new(
        crate::status::StatusReason::InternalError,
        500,
        format!(
            "unexpected object in a watch ERROR event ({kind}), not a Status: {}",
            excerpt(text, EXCERPT_BYTES)
        ),
    )
}

/// A writer that takes one byte more than an excerpt, then refuses.
struct Bounded(Vec<u8>);

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = (EXCERPT_BYTES + 1).saturating_sub(self.0.len());
        if room == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        let n = buf.len().min(room);
        self.0.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// At most `limit` bytes of `bytes` as text: invalid UTF-8 replaced,
/// control and bidi characters escaped (nothing can steer a terminal),
/// `…` when cut.
fn excerpt(bytes: &[u8], limit: usize) -> String {
    let text = String::from_utf8_lossy(bytes.get(..limit).unwrap_or(bytes));
    let mut out = String::with_capacity(text.len());
    for c in text.trim_end().chars() {
        let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}');
        if c.is_control() || bidi {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    if bytes.len() > limit {
        out.push('…');
    }
    out
}

/// A stream of typed watch events.
///
/// Ends quietly only when the body ends cleanly between events. Anything
/// else yields one `Err` and ends: a body cut in the middle of an event
/// ([`Error::WatchCut`]; client-go drops the partial event silently), any
/// transport error or timeout of the body (client-go ends quietly on EOF
/// and timeouts: we tell the caller the stream broke), an undecodable line,
/// an unknown event type, a line over [`MAX_EVENT_BYTES`].
pub struct WatchStream<T> {
    body: BoxStream<'static, Result<Bytes, Error>>,
    buf: BytesMut,
    scanned: usize,
    done: bool,
    /// Whether to read each event's resourceVersion (resumable watches).
    track_rv: bool,
    /// The resourceVersion of the last non-ERROR event.
    last_rv: Option<String>,
    /// The body ended with a transport error or mid-line (not cleanly).
    broken: bool,
    /// Protobuf frames instead of JSON lines.
    frames: Option<FrameDecoder<T>>,
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
            track_rv: false,
            last_rv: None,
            broken: false,
            frames: None,
            _type: PhantomData,
        }
    }

    fn tracking(mut self) -> Self {
        self.track_rv = true;
        self
    }

    /// The next complete line's event, if a complete line is buffered.
    fn next_buffered(&mut self) -> Option<Result<WatchEvent<T>, Error>> {
        if let Some(frames) = &mut self.frames {
            return Some(match frames.next_frame()? {
                Ok((ev, rv)) => {
                    if self.track_rv && rv.is_some() {
                        self.last_rv = rv;
                    }
                    Ok(ev)
                }
                Err(e) => {
                    self.end();
                    Err(e)
                }
            });
        }
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
            match &item {
                Err(_) => self.end(),
                Ok(WatchEvent::Error(_)) => {}
                Ok(_) if self.track_rv => {
                    if let Some(rv) = resource_version(&line) {
                        self.last_rv = Some(rv);
                    }
                }
                Ok(_) => {}
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
                    if let Some(frames) = &mut this.frames {
                        frames.push(&chunk);
                        continue;
                    }
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
                    // Whatever broke the body (reset, cut short, a read or
                    // stream timeout), the caller learns it: the stream did
                    // not end cleanly.
                    let received =
                        (this.frames.as_ref()).map_or(this.buf.len(), FrameDecoder::buffered);
                    this.end();
                    this.broken = true;
                    let cut_mid_event =
                        e.transport_kind() == Some(TransportKind::UnexpectedEof) && received > 0;
                    return Poll::Ready(Some(Err(if cut_mid_event {
                        Error::WatchCut { received }
                    } else {
                        e
                    })));
                }
                Poll::Ready(None) if this.frames.is_some() => {
                    let end = this.frames.as_mut().map_or(Ok(()), FrameDecoder::finish);
                    this.end();
                    this.broken = end.is_err();
                    return Poll::Ready(end.err().map(Err));
                }
                Poll::Ready(None) => {
                    let rest = std::mem::take(&mut this.buf);
                    this.end();
                    if rest.iter().all(u8::is_ascii_whitespace) {
                        return Poll::Ready(None);
                    }
                    // A last event without its newline still counts; a
                    // truncated one is an error: the event is lost.
                    return Poll::Ready(Some(match decode_line::<T>(&rest) {
                        Ok(ev) => {
                            if this.track_rv
                                && !matches!(ev, WatchEvent::Error(_))
                                && let Some(rv) = resource_version(&rest)
                            {
                                this.last_rv = Some(rv);
                            }
                            Ok(ev)
                        }
                        Err(Error::WatchDecode { source }) if source.is_eof() => {
                            this.broken = true;
                            Err(Error::WatchCut {
                                received: rest.len(),
                            })
                        }
                        Err(e) => Err(e),
                    }));
                }
            }
        }
    }
}

/// `{"object":{"metadata":{"resourceVersion":…}}}`, everything else
/// skipped without being built.
#[derive(Deserialize)]
struct RvLine<'a> {
    #[serde(borrow)]
    object: Option<RvObject<'a>>,
}

#[derive(Deserialize)]
struct RvObject<'a> {
    #[serde(borrow)]
    metadata: Option<RvMeta<'a>>,
}

#[derive(Deserialize)]
struct RvMeta<'a> {
    #[serde(borrow, rename = "resourceVersion")]
    resource_version: Option<std::borrow::Cow<'a, str>>,
}

/// The `object.metadata.resourceVersion` of an event line, read from the
/// same bytes as the event (a second, skipping parse: nothing but the
/// version is allocated). `None` when absent or empty.
pub fn resource_version(line: &[u8]) -> Option<String> {
    let parsed: RvLine<'_> = serde_json::from_slice(line).ok()?;
    let rv = parsed.object?.metadata?.resource_version?;
    (!rv.is_empty()).then(|| rv.into_owned())
}

/// The first reopen backoff (client-go's reflector: 800 ms, doubling).
pub const REOPEN_BACKOFF_BASE: Duration = Duration::from_millis(800);
/// The largest reopen backoff before jitter (client-go's 30 s).
pub const REOPEN_BACKOFF_MAX: Duration = Duration::from_secs(30);

/// The wait before the reopen that follows `failures` consecutive
/// unhealthy streams (see [`WatchProgress`]): none after a healthy stream
/// (`failures == 0`), else the `failures`-th delay of
/// [`Backoff::reflector`](crate::backoff::Backoff::reflector), client-go's
/// reflector backoff: 800 ms doubling up to 30 s, plus a jitter of up to
/// 100 % (`jitter` in `[0, 1)`), so waits lie in `[d, 2d)`. Pure: the
/// caller supplies the randomness. [`ResumableWatch`]'s
/// [`WatchProgress`] holds one [`Backoff`] with this schedule.
pub fn reopen_backoff(failures: u32, jitter: f64) -> Duration {
    if failures == 0 {
        return Duration::ZERO;
    }
    let mut backoff = Backoff::reflector();
    let now = std::time::Instant::now();
    // The cap is reached long before: the loop is bounded.
    for _ in 1..failures.min(REOPEN_STEPS) {
        backoff.next_delay_at(now, 0.0);
    }
    backoff.next_delay_at(now, jitter)
}

/// More steps than [`reopen_backoff`]'s schedule takes to reach its cap.
const REOPEN_STEPS: u32 = 17;

type Reopen =
    Pin<Box<dyn std::future::Future<Output = Result<crate::execute::Opened, Error>> + Send>>;

/// A watch that survives the death of its API server: when the stream
/// breaks (reset, cut short, or nothing received for the client's
/// [watch idle timeout](crate::RestConfig::with_watch_idle_timeout)), the
/// endpoint that served it is moved last and the watch is reopened through
/// the failover loop with `resourceVersion` set to the last event seen
/// (bookmarks included), so no event is lost or repeated.
///
/// Like client-go's `RetryWatcher` it does not end on its own: a clean end
/// of the stream (the server's `timeoutSeconds`, or a server shutting down
/// gracefully) is followed by a reopen from the last resourceVersion on the
/// same endpoint order; drop it to stop.
///
/// When to reopen and what to drop is [`WatchProgress`]'s rule, shared with
/// kubeset-runtime's watcher: a stream is healthy when it moved the
/// resourceVersion forward or stayed open for 2 minutes (or its whole
/// `timeoutSeconds`); a healthy stream is reopened at once and resets the
/// backoff, the reopen after the n-th unhealthy one in a row waits
/// [`reopen_backoff`]`(n)` (client-go's reflector: 800 ms doubling to
/// 30 s, jittered, starting over after 2 minutes without failures). An
/// event that is not newer than the version the stream opened from or the
/// last one delivered is a replay: dropped, never handed out twice
/// ([`replays`](Self::replays) counts them). So a server that cuts every
/// stream after replaying the same event is backed off, not hammered.
///
/// An `ERROR` event is yielded as `Err(Error::Api)` and ends
/// the watch: a 410 (`err.is_gone()`) means the caller must relist; so does
/// a failed reopen (its error is yielded, then the end).
/// Start it with a `resourceVersion` (from a list): a watch without one
/// replays the current state when reopened before any event was seen.
pub struct ResumableWatch<T> {
    client: crate::RestClient,
    /// The request, prepared once; a reopen changes only its
    /// `resourceVersion` parameter.
    template: crate::desc::Prepared,
    current: Option<WatchStream<T>>,
    /// The object decoder of protobuf streams (JSON only without one).
    decoder: Option<Arc<dyn ObjectDecoder<T>>>,
    reopening: Option<Reopen>,
    /// Origin of the endpoint serving `current`.
    serving: String,
    idle: Option<Pin<Box<tokio::time::Sleep>>>,
    last_rv: Option<String>,
    resumes: u64,
    replays: u64,
    /// The reopen rule: replays, health of the current stream, backoff.
    progress: WatchProgress,
    /// The `timeoutSeconds` (or `timeout`) each stream asks for.
    timeout: Option<Duration>,
    done: bool,
}

impl<T> fmt::Debug for ResumableWatch<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResumableWatch")
            .field("serving", &self.serving)
            .field("last_rv", &self.last_rv)
            .field("resumes", &self.resumes)
            .field("replays", &self.replays)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<T: DeserializeOwned + Send + 'static> ResumableWatch<T> {
    pub(crate) fn new(
        client: crate::RestClient,
        template: crate::desc::Prepared,
        body: BoxStream<'static, Result<Bytes, Error>>,
        serving: String,
    ) -> Self {
        let opened = crate::execute::Opened {
            body,
            origin: serving,
            content_type: None,
        };
        Self::with_decoder(client, template, opened, None)
    }

    /// A resumable watch over `opened`, read by its Content-Type (and
    /// every reopened stream by its own) with `decoder` for protobuf.
    pub(crate) fn with_decoder(
        client: crate::RestClient,
        template: crate::desc::Prepared,
        opened: crate::execute::Opened,
        decoder: Option<Arc<dyn ObjectDecoder<T>>>,
    ) -> Self {
        let last_rv = template.params.get("resourceVersion").map(str::to_owned);
        let current = WatchStream::for_content_type(
            opened.body,
            opened.content_type.as_deref(),
            decoder.as_ref(),
        );
        let timeout = template
            .stream_deadline
            .map(|d| d.saturating_sub(crate::budget::STREAM_GRACE));
        let mut progress = WatchProgress::new(Backoff::reflector());
        progress.opened(last_rv.as_deref().unwrap_or(""), timeout);
        let mut w = Self {
            client,
            template,
            current: Some(current.tracking()),
            decoder,
            reopening: None,
            serving: opened.origin,
            idle: None,
            last_rv: last_rv.filter(|rv| !rv.is_empty()),
            resumes: 0,
            replays: 0,
            progress,
            timeout,
            done: false,
        };
        w.reset_idle();
        w
    }

    /// The last resourceVersion seen (or the one the watch started from).
    pub fn resource_version(&self) -> Option<&str> {
        self.last_rv.as_deref()
    }

    /// The endpoint serving the watch now.
    pub fn endpoint(&self) -> &str {
        &self.serving
    }

    /// How many times the watch was reopened after a break.
    pub fn resumes(&self) -> u64 {
        self.resumes
    }

    /// Reopens after unhealthy streams with this schedule instead of
    /// client-go's reflector's ([`Backoff::reflector`]), as kube-rs's
    /// `WatchStreamExt::backoff` does.
    #[must_use]
    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.progress = self.progress.with_backoff(backoff);
        self
    }

    /// How many replayed events were dropped (see [`WatchProgress`]).
    pub fn replays(&self) -> u64 {
        self.replays
    }

    fn reset_idle(&mut self) {
        let idle = self.client.inner.watch_idle_timeout;
        let at = tokio::time::Instant::now() + idle;
        match &mut self.idle {
            Some(sleep) => sleep.as_mut().reset(at),
            None => self.idle = Some(Box::pin(tokio::time::sleep_until(at))),
        }
    }

    /// Drop the stream and start reopening; a broken stream's endpoint is
    /// moved last first.
    fn resume(&mut self, why: &str, broken: bool) {
        tracing::debug!(endpoint = %self.serving, rv = ?self.last_rv, why, "resuming a watch");
        self.current = None;
        if broken {
            self.client.inner.endpoints.demote(&self.serving);
        }
        // A server that cuts or ends watches without moving the
        // resourceVersion must not be hammered.
        let pause = self.progress.ended();
        self.resumes += 1;
        if let Some(rv) = &self.last_rv {
            self.template.set_param("resourceVersion", rv);
        }
        let p = self.template.clone();
        let client = self.client.clone();
        let decoder = self.decoder.clone();
        self.reopening = Some(Box::pin(async move {
            if !pause.is_zero() {
                tokio::time::sleep(pause).await;
            }
            open(&client.inner, &p, decoder.as_ref()).await
        }));
    }
}

impl<T: DeserializeOwned + Send + 'static> Stream for ResumableWatch<T> {
    type Item = Result<WatchEvent<T>, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            if let Some(fut) = &mut this.reopening {
                match fut.as_mut().poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Ok(opened)) => {
                        this.reopening = None;
                        let current = WatchStream::for_content_type(
                            opened.body,
                            opened.content_type.as_deref(),
                            this.decoder.as_ref(),
                        );
                        this.serving = opened.origin;
                        this.current = Some(current.tracking());
                        let rv = this.last_rv.as_deref().unwrap_or("");
                        this.progress.opened(rv, this.timeout);
                        this.reset_idle();
                    }
                    Poll::Ready(Err(e)) => {
                        this.reopening = None;
                        this.done = true;
                        return Poll::Ready(Some(Err(e)));
                    }
                }
            }
            let Some(current) = &mut this.current else {
                this.done = true;
                return Poll::Ready(None);
            };
            match current.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(WatchEvent::Error(e)))) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(e.into())));
                }
                Poll::Ready(Some(Ok(ev))) => {
                    let rv = current.last_rv.take();
                    if this.progress.event(rv.as_deref()) == Verdict::Replay {
                        this.replays += 1;
                        tracing::debug!(rv = ?rv, endpoint = %this.serving, "dropped a replayed watch event");
                        continue;
                    }
                    if rv.as_deref().is_some_and(|rv| rv != "0") {
                        this.last_rv = rv;
                    }
                    this.reset_idle();
                    return Poll::Ready(Some(Ok(ev)));
                }
                Poll::Ready(Some(Err(e))) => {
                    if e.transport_kind().is_some() {
                        this.resume("stream error", true);
                        continue;
                    }
                    this.done = true;
                    return Poll::Ready(Some(Err(e)));
                }
                Poll::Ready(None) => {
                    if current.broken {
                        this.resume("stream cut short", true);
                    } else {
                        this.resume("stream ended", false);
                    }
                    continue;
                }
                Poll::Pending => {
                    if let Some(idle) = &mut this.idle
                        && idle.as_mut().poll(cx).is_ready()
                    {
                        this.resume("idle timeout", true);
                        continue;
                    }
                    return Poll::Pending;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::stream;

    /// The object of the watch tests here and in `frames`.
    #[derive(Debug, Deserialize, PartialEq)]
    pub(super) struct Obj {
        name: String,
    }

    async fn collect(chunks: Vec<&'static [u8]>) -> Vec<Result<WatchEvent<Obj>, Error>> {
        let s = stream::iter(chunks.into_iter().map(|c| Ok(Bytes::from_static(c))));
        WatchStream::<Obj>::from_bytes(s).collect().await
    }

    pub(super) fn obj(n: &str) -> Obj {
        Obj { name: n.into() }
    }

    /// `got` is the five events of the all-event-types bodies of the JSON
    /// and protobuf tests (read in chunks of `split` bytes): ADDED `a`,
    /// MODIFIED `b`, DELETED `c`, BOOKMARK `bookmark`, and the ERROR of a
    /// 410 Expired "too old" Status.
    pub(super) fn assert_all_event_types(got: &[WatchEvent<Obj>], bookmark: &str, split: usize) {
        assert_eq!(got.len(), 5, "split {split}");
        assert_eq!(got[0], WatchEvent::Added(obj("a")));
        assert_eq!(got[1], WatchEvent::Modified(obj("b")));
        assert_eq!(got[2], WatchEvent::Deleted(obj("c")));
        assert_eq!(got[3], WatchEvent::Bookmark(obj(bookmark)));
        match &got[4] {
            WatchEvent::Error(e) => {
                assert!(e.is_gone());
                assert_eq!((e.code, e.message.as_str()), (410, "too old"));
            }
            other => panic!("{other:?}"),
        }
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
            assert_all_event_types(&got, "d", split);
        }
    }

    /// An object type that reads its object's text, borrowed from the line
    /// (kubeset-runtime's watcher decodes its objects that way, without a
    /// copy): it gets the text whichever key comes first.
    #[derive(Debug, PartialEq)]
    struct Text(String);

    impl<'de> Deserialize<'de> for Text {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            <&'de serde_json::value::RawValue>::deserialize(d).map(|raw| Text(raw.get().to_owned()))
        }
    }

    #[tokio::test]
    async fn an_object_before_its_type_is_read_from_its_text() {
        let text: &'static str = concat!(
            r#"{"object":{"name":"a", "n":[1,{"x":"\u00e9"}]},"type":"ADDED"}"#,
            "\n",
            r#"{"type":"MODIFIED","object":{"name":"b"}}"#,
            "\n",
            r#"{"object":{"kind":"Status","code":410,"reason":"Expired"},"type":"ERROR"}"#,
            "\n"
        );
        let s = stream::iter([Ok(Bytes::from_static(text.as_bytes()))]);
        let got: Vec<_> = WatchStream::<Text>::from_bytes(s).collect().await;
        let got: Vec<_> = got.into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(got.len(), 3);
        assert_eq!(
            got[0],
            WatchEvent::Added(Text(r#"{"name":"a", "n":[1,{"x":"\u00e9"}]}"#.to_owned()))
        );
        assert_eq!(
            got[1],
            WatchEvent::Modified(Text(r#"{"name":"b"}"#.to_owned()))
        );
        assert!(matches!(&got[2], WatchEvent::Error(e) if e.is_gone()));
        // A typed object first decodes as it does after its type, its
        // error naming the place in the object.
        let bad = concat!(r#"{"object":{"name":7},"type":"ADDED"}"#, "\n");
        let s = stream::iter([Ok(Bytes::from_static(bad.as_bytes()))]);
        let got: Vec<_> = WatchStream::<Obj>::from_bytes(s).collect().await;
        match &got[..] {
            [Err(Error::WatchDecode { source })] => {
                assert!(source.to_string().contains("column"), "{source}");
            }
            other => panic!("expected one decode error, got {other:?}"),
        }
    }

    fn error_of(line: &str) -> ApiError {
        match decode_line::<Obj>(line.as_bytes()) {
            Ok(WatchEvent::Error(e)) => e,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_error_event_that_is_not_a_status_says_what_it_was() {
        // Before: a ConfigMap decoded as an empty Status (no message), and
        // a Pod's `status` map failed the whole line.
        for (line, kind) in [
            (
                r#"{"type":"ERROR","object":{"kind":"ConfigMap","data":{"a":"b"}}}"#,
                r#"kind "ConfigMap""#,
            ),
            (
                r#"{"type":"ERROR","object":{"kind":"Pod","status":{"phase":"Running"}}}"#,
                r#"kind "Pod""#,
            ),
            (r#"{"object":{"data":{}},"type":"ERROR"}"#, "no kind"),
            (r#"{"type":"ERROR","object":[1,2,3]}"#, "no kind"),
            (r#"{"type":"ERROR","object":"text"}"#, "no kind"),
            (r#"{"type":"ERROR","object":{"kind":7}}"#, "no kind"),
        ] {
            let e = error_of(line);
            assert_eq!(e.code, 500, "{line}");
            assert_eq!(e.status_reason, crate::StatusReason::InternalError);
            assert!(
                e.message
                    .starts_with("unexpected object in a watch ERROR event")
                    && e.message.contains(kind),
                "{line}: {}",
                e.message
            );
        }
        let e =
            error_of(r#"{"type":"ERROR","object":{"kind":"Pod","status":{"phase":"Running"}}}"#);
        assert!(e.message.contains(r#""phase":"Running""#), "{}", e.message);
        // A Status, with or without its kind, is read as before.
        let e = error_of(
            r#"{"type":"ERROR","object":{"code":410,"reason":"Expired","message":"old"}}"#,
        );
        assert!(e.is_gone() && e.message == "old", "{e:?}");
        let e = error_of(r#"{"type":"ERROR","object":{"kind":"Status","status":"Failure"}}"#);
        assert_eq!((e.code, e.message.as_str()), (500, ""));
    }

    #[test]
    fn the_excerpt_is_bounded_and_cannot_steer_a_terminal() {
        let hostile = format!(
            r#"{{"type":"ERROR","object":{{"kind":"X\u001b[2J\u202e","data":"{}"}}}}"#,
            "é".repeat(10_000)
        );
        let e = error_of(&hostile);
        assert!(e.message.len() < 600, "{}", e.message.len());
        assert!(e.message.ends_with('…'));
        assert!(
            !e.message.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{:?}",
            e.message
        );
        assert!(
            e.message.contains(r"\u{1b}") && e.message.contains(r"\u{202e}"),
            "{}",
            e.message
        );
        assert_eq!(excerpt(b"\xff\xfeab", 10), "\u{fffd}\u{fffd}ab");
        assert_eq!(excerpt("aé".as_bytes(), 2), "a\u{fffd}…");
    }

    #[test]
    fn reopen_backoff_table() {
        let ms = |n: u32, j: f64| reopen_backoff(n, j).as_millis();
        assert_eq!(ms(0, 0.5), 0);
        // (failures, no jitter, most jitter): client-go's 800 ms → 30 s.
        for (n, low) in [
            (1, 800),
            (2, 1600),
            (3, 3200),
            (6, 25_600),
            (7, 30_000),
            (1000, 30_000),
        ] {
            assert_eq!(ms(n, 0.0), low, "{n}");
            assert_eq!(ms(n, 0.999_999), low * 2 - 1, "{n}");
        }
        assert_eq!(ms(u32::MAX, 7.0), 60_000);
        for _ in 0..100 {
            let j = crate::backoff::jitter();
            assert!((0.0..1.0).contains(&j), "{j}");
        }
    }

    #[test]
    fn resource_version_of_a_line() {
        let rv = |s: &str| resource_version(s.as_bytes());
        assert_eq!(
            rv(
                r#"{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"42"},"spec":{"x":[1,{"y":null}]}}}"#
            ),
            Some("42".to_owned())
        );
        // Object before type, escapes, nested decoys.
        assert_eq!(
            rv(
                r#"{"object":{"spec":{"metadata":{"resourceVersion":"no"}},"metadata":{"resourceVersion":"4\u0032"}},"type":"MODIFIED"}"#
            ),
            Some("42".to_owned())
        );
        assert_eq!(
            rv(r#"{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":""}}}"#),
            None
        );
        assert_eq!(rv(r#"{"type":"ADDED","object":{"metadata":{}}}"#), None);
        assert_eq!(rv(r#"{"type":"ADDED"}"#), None);
        assert_eq!(rv("not json"), None);
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
    async fn eof_mid_line_is_an_error_and_last_line_without_newline_counts() {
        let got = collect(vec![
            b"{\"type\":\"ADDED\",\"object\":{\"name\":\"a\"}}\n{\"type\":\"ADD",
        ])
        .await;
        assert_eq!(got.len(), 2);
        assert!(matches!(got[0], Ok(WatchEvent::Added(_))));
        assert!(
            matches!(got[1], Err(Error::WatchCut { received: 12 })),
            "{:?}",
            got[1]
        );
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
