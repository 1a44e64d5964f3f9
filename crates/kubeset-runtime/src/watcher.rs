//! The watcher: a stream of [`Event`]s that reflects a collection exactly,
//! across disconnects, expired versions and server restarts.
//!
//! One state machine, advanced one event at a time:
//!
//! 1. **Initial state**, either by a streaming list (`watch` with
//!    `sendInitialEvents=true`, ended by a BOOKMARK annotated
//!    `k8s.io/initial-events-end`) or by a paginated list (`limit`, default
//!    500, following `continue`). [`InitialList::Auto`] tries streaming first
//!    and falls back to paging for good when the server rejects it (400/422)
//!    or answers with events a streaming list cannot contain.
//! 2. **Watch** from the last resourceVersion with bookmarks and a server
//!    timeout (`timeoutSeconds`, 290 by default). A clean end or an idle
//!    guard (no line, not even a bookmark, for longer than the server
//!    timeout plus a margin) reopens the watch at once from the last version.
//! 3. **410 Gone** (on open or as an ERROR event) starts over at 1; the
//!    consumer sees `Init` … `InitDone` again and swaps its state.
//!
//! Failures are yielded as `Err` items and the stream carries on after a
//! backoff ([`Backoff`]: 800 ms doubling to 30 s with jitter, reset after
//! 2 healthy minutes). The stream never ends on its own.
//!
//! When a watch is reopened, and which events are replays, is the rule of
//! kubeset-rest's [`WatchProgress`], the one `ResumableWatch` follows: a
//! stream that ends (cleanly, cut or silent) without moving the
//! resourceVersion forward, and before 2 minutes or its `timeoutSeconds`,
//! waits the next backoff delay before the next one (client-go's reflector
//! reopens at once after any event); an event not newer than the version
//! the watch resumed from, or the last one delivered, is a replay and is
//! dropped, never handed out twice. The watcher keeps its own loop rather
//! than wrapping `ResumableWatch`: it lists, relists on 410, skips objects
//! that do not decode and falls back from protobuf per stream, none of
//! which a `ResumableWatch` (which ends on an `ERROR`) does.

use std::collections::VecDeque;
use std::time::Duration;

use futures::{Stream, StreamExt as _, stream};
use http::HeaderValue;
use http::header::ACCEPT;
use kubeset_client::params::{ListParams, QueryParams as _, VersionMatch, WatchParams};
use kubeset_client::rest::watch::{Verdict, WatchProgress};
use kubeset_client::rest::{Request, Verb};
use kubeset_client::{
    Api, ApiError, List, PARTIAL_METADATA_ACCEPT, PARTIAL_METADATA_LIST_ACCEPT, Resource,
    WatchEvent, WatchStream,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

#[cfg(feature = "protobuf")]
mod protobuf;

use crate::metadata::PartialObjectMetadata;
use kubeset_client::rest::backoff::Backoff;

/// kube-rs's name of [`WatcherConfig`] (`watcher::Config`).
pub use self::WatcherConfig as Config;
/// kube-rs's name of [`WatcherError`] (`watcher::Error`).
pub use self::WatcherError as Error;

/// The annotation on the BOOKMARK that ends a streaming list.
pub const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// What happened to the watched collection.
#[derive(Debug, Clone, PartialEq)]
pub enum Event<K> {
    /// A new initial state starts: collect the `InitApply` objects aside.
    Init,
    /// One object of the initial state.
    InitApply(K),
    /// The initial state is complete: replace the old one with it.
    InitDone,
    /// An object was created or changed.
    Apply(K),
    /// An object was deleted (its last state).
    Delete(K),
}

impl<K> Event<K> {
    /// The object carried, if any.
    pub fn object(&self) -> Option<&K> {
        match self {
            Event::InitApply(k) | Event::Apply(k) | Event::Delete(k) => Some(k),
            Event::Init | Event::InitDone => None,
        }
    }

    /// The same event with its object changed in place by `f` (kube-rs's
    /// `Event::modify`): a transform before the object is stored or
    /// handed on, such as clearing fields nobody reads.
    ///
    /// ```
    /// # use kubeset_runtime::Event;
    /// let ev = Event::Apply(String::from("pod")).modify(|s| s.push_str("-a"));
    /// assert_eq!(ev, Event::Apply(String::from("pod-a")));
    /// assert_eq!(Event::<String>::InitDone.modify(|s| s.clear()), Event::InitDone);
    /// ```
    #[must_use]
    pub fn modify(mut self, f: impl FnOnce(&mut K)) -> Self {
        match &mut self {
            Event::InitApply(k) | Event::Apply(k) | Event::Delete(k) => f(k),
            Event::Init | Event::InitDone => {}
        }
        self
    }

    /// The same event with its object mapped.
    pub fn map<T>(self, f: impl FnOnce(K) -> T) -> Event<T> {
        match self {
            Event::Init => Event::Init,
            Event::InitApply(k) => Event::InitApply(f(k)),
            Event::InitDone => Event::InitDone,
            Event::Apply(k) => Event::Apply(f(k)),
            Event::Delete(k) => Event::Delete(f(k)),
        }
    }
}

/// How the watcher gets the initial state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InitialList {
    /// Streaming list when the server supports it, else paginated list.
    #[default]
    Auto,
    /// Paginated list only.
    Paginated,
    /// Streaming list only (errors if the server rejects it).
    Streaming,
}

/// Which resourceVersion a paginated initial list asks for (kube-rs's
/// `watcher::ListSemantic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListSemantic {
    /// The most recent state: a quorum read from etcd (no
    /// `resourceVersion`), as client-go's and kube-rs's default.
    #[default]
    MostRecent,
    /// Any state at least as new as the watch cache's
    /// (`resourceVersion=0`, `resourceVersionMatch=NotOlderThan`): served
    /// from the API server's cache, cheaper on large collections, possibly
    /// stale; the watch then catches up from it.
    Any,
}

/// Why a watcher step failed. The stream continues after each of these.
#[derive(Debug, thiserror::Error)]
pub enum WatcherError {
    /// A page of the initial list could not be read.
    #[error("initial list failed: {source}")]
    InitialList {
        /// The request layer's error.
        #[source]
        source: kubeset_client::Error,
    },
    /// A watch (or streaming list) could not be opened.
    #[error("opening the watch failed: {source}")]
    WatchOpen {
        /// The request layer's error.
        #[source]
        source: kubeset_client::Error,
    },
    /// An open watch broke (cut connection, undecodable line).
    #[error("the watch stream broke: {source}")]
    WatchStream {
        /// The request layer's error.
        #[source]
        source: kubeset_client::Error,
    },
    /// The server sent an ERROR event other than 410 Gone.
    #[error("the server ended the watch with an error: {source}")]
    WatchEvent {
        /// The server's status.
        #[source]
        source: ApiError,
    },
    /// An object of a list or watch event did not decode as the watched
    /// kind. The object is skipped (the watch carries on, at once, past
    /// it), as client-go logs and continues. A new object is not cached
    /// until a version of it decodes; a cached one keeps its last
    /// decodable version until then, and a DELETED event whose object
    /// does not decode leaves it cached until the next relist.
    #[error(
        "object {}/{} (resourceVersion {}) did not decode as {type_name} at `{path}`: {source}; skipped",
        namespace.as_deref().unwrap_or("-"),
        name.as_deref().unwrap_or("-"),
        resource_version.as_deref().unwrap_or("-")
    )]
    Decode {
        /// The Rust type.
        type_name: &'static str,
        /// The object's namespace, when its metadata could be read.
        namespace: Option<String>,
        /// The object's name, when its metadata could be read.
        name: Option<String>,
        /// The object's resourceVersion, when its metadata could be read.
        resource_version: Option<String>,
        /// Where in the object decoding failed (`spec.replicas`, `.` for
        /// the top level).
        path: String,
        /// The decoder's error (the reason, with line and column).
        #[source]
        source: serde_json::Error,
    },
    /// A protobuf object of a watch event did not decode as the watched
    /// kind; skipped as [`Decode`](Self::Decode) is.
    #[error(
        "object {}/{} (resourceVersion {}) did not decode from protobuf as {type_name}: {source}; skipped",
        namespace.as_deref().unwrap_or("-"),
        name.as_deref().unwrap_or("-"),
        resource_version.as_deref().unwrap_or("-")
    )]
    DecodeProtobuf {
        /// The Rust type.
        type_name: &'static str,
        /// The object's namespace, when its metadata could be read.
        namespace: Option<String>,
        /// The object's name, when its metadata could be read.
        name: Option<String>,
        /// The object's resourceVersion, when its metadata could be read.
        resource_version: Option<String>,
        /// The decoder's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A watch ended within a second without sending anything.
    #[error("the watch closed at once without any event")]
    WatchClosedEarly,
    /// A streaming list ended before its initial-events-end bookmark.
    #[error("the streaming list ended before the initial-events-end bookmark")]
    StreamingListIncomplete,
    /// The cache's [`MemoryBudget`](crate::memory::MemoryBudget) refused an
    /// object. Unlike the others this one is final: the
    /// [`reflector`](fn@crate::reflector) ends after it and the watch stops.
    #[error("the cache stopped at its memory budget: {source}")]
    MemoryBudget {
        /// The kind, objects and bytes.
        #[from]
        source: crate::memory::MemoryBudgetExceeded,
    },
}

/// Settings of a watcher.
#[derive(Debug, Clone)]
#[must_use]
pub struct WatcherConfig {
    /// `labelSelector` of both list and watch.
    pub label_selector: Option<String>,
    /// `fieldSelector` of both list and watch.
    pub field_selector: Option<String>,
    /// Page size of the paginated initial list.
    pub page_size: u32,
    /// How the initial state is read.
    pub initial_list: InitialList,
    /// `timeoutSeconds` of each watch request.
    pub timeout_seconds: u32,
    /// Reopen a watch that sent nothing (not even a bookmark) for this long.
    pub idle_timeout: Duration,
    /// Delay schedule after failures.
    pub backoff: Backoff,
    /// The resourceVersion of the first page of a paginated initial list
    /// ([`any_semantic`](Self::any_semantic)).
    pub list_semantic: ListSemantic,
    /// `shardSelector` of both list and watch (KEP-5866; see
    /// [`ListParams::shard_selector`](kubeset_client::params::ListParams::shard_selector)).
    pub shard_selector: Option<String>,
}

impl Default for WatcherConfig {
    /// Pages of 500, streaming list when supported, 290 s server timeout,
    /// 320 s idle guard, client-go's backoff.
    fn default() -> Self {
        WatcherConfig {
            label_selector: None,
            field_selector: None,
            page_size: 500,
            initial_list: InitialList::Auto,
            timeout_seconds: 290,
            idle_timeout: Duration::from_secs(320),
            backoff: Backoff::default(),
            list_semantic: ListSemantic::MostRecent,
            shard_selector: None,
        }
    }
}

impl WatcherConfig {
    /// Filters by a label selector.
    pub fn labels(mut self, selector: &str) -> Self {
        self.label_selector = Some(selector.to_owned());
        self
    }

    /// Filters by a field selector.
    pub fn fields(mut self, selector: &str) -> Self {
        self.field_selector = Some(selector.to_owned());
        self
    }

    /// Filters by a `shardSelector`, which a Kubernetes 1.36+ server with
    /// `ShardedListAndWatch` on applies and other servers ignore (the
    /// `shard` module, feature `shard`, has the controller that picks it).
    ///
    /// ```
    /// use kubeset_runtime::WatcherConfig;
    /// let sel = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
    /// assert_eq!(WatcherConfig::default().shards(sel).shard_selector.as_deref(), Some(sel));
    /// ```
    pub fn shards(mut self, selector: &str) -> Self {
        self.shard_selector = Some(selector.to_owned());
        self
    }

    /// Sets the page size of paginated lists (at least 1).
    pub fn page_size(mut self, n: u32) -> Self {
        self.page_size = n.max(1);
        self
    }

    /// Chooses how the initial state is read.
    pub fn initial_list(mut self, how: InitialList) -> Self {
        self.initial_list = how;
        self
    }

    /// Sets the server-side watch timeout (`timeoutSeconds`, at least 1;
    /// kube-rs's `timeout`), with the idle guard 30 s above it.
    pub fn timeout(self, seconds: u32) -> Self {
        self.timeout_with_margin(seconds, Duration::from_secs(30))
    }

    /// Sets the server-side watch timeout and an idle guard `margin` above it.
    pub fn timeout_with_margin(mut self, seconds: u32, margin: Duration) -> Self {
        self.timeout_seconds = seconds.max(1);
        self.idle_timeout = Duration::from_secs(u64::from(self.timeout_seconds)) + margin;
        self
    }

    /// Lets a paginated initial list be served from the API server's watch
    /// cache ([`ListSemantic::Any`], kube-rs's `any_semantic`).
    pub fn any_semantic(self) -> Self {
        self.list_semantic(ListSemantic::Any)
    }

    /// Sets the [`ListSemantic`] of a paginated initial list.
    pub fn list_semantic(mut self, semantic: ListSemantic) -> Self {
        self.list_semantic = semantic;
        self
    }

    /// Reads the initial state with a streaming list only
    /// ([`InitialList::Streaming`], kube-rs's `streaming_lists`).
    pub fn streaming_lists(self) -> Self {
        self.initial_list(InitialList::Streaming)
    }

    /// Sets the idle guard alone.
    pub fn idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = idle;
        self
    }

    /// Sets the backoff schedule.
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }
}

/// Watches every object of `api` (see the module docs).
pub fn watcher<K>(
    api: Api<K>,
    config: WatcherConfig,
) -> impl Stream<Item = Result<Event<K>, WatcherError>> + Send + 'static
where
    K: Resource + DeserializeOwned + Send + 'static,
{
    run(api, config, false)
}

/// Watches only the metadata of the objects of `api`, asking the server for
/// `PartialObjectMetadata` (servers that ignore the header send full objects,
/// which are decoded into metadata alone all the same).
pub fn metadata_watcher<K>(
    api: Api<K>,
    config: WatcherConfig,
) -> impl Stream<Item = Result<Event<PartialObjectMetadata<K>>, WatcherError>> + Send + 'static
where
    K: Resource + Send + 'static,
{
    let api: Api<PartialObjectMetadata<K>> = retype(&api);
    run(api, config, true)
}

/// The same API (client, URL) decoding into another type.
pub(crate) fn retype<K: Resource, T>(api: &Api<K>) -> Api<T> {
    Api::dynamic(
        api.client().clone(),
        &kubeset_client::dynamic::ApiResource::of::<K>(),
        api.namespace(),
    )
}

fn run<T>(
    api: Api<T>,
    config: WatcherConfig,
    metadata_only: bool,
) -> impl Stream<Item = Result<Event<T>, WatcherError>> + Send + 'static
where
    T: Resource + DeserializeOwned + Send + 'static,
{
    let progress = WatchProgress::new(config.backoff.clone());
    let state = State {
        api,
        streaming: match config.initial_list {
            InitialList::Paginated => Support::No,
            InitialList::Auto => Support::Unknown,
            InitialList::Streaming => Support::Yes,
        },
        config,
        metadata_only,
        phase: Phase::Start,
        page: VecDeque::new(),
        pending: VecDeque::new(),
        resource_version: String::new(),
        delay: None,
        progress,
        watch_opened: tokio::time::Instant::now(),
        watch_lines: 0,
    };
    stream::unfold(state, |mut s| async move {
        let item = s.step().await;
        Some((item, s))
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Support {
    Unknown,
    Yes,
    No,
}

/// The items of a paginated list page stay undecoded until the consumer
/// takes them: one decoded object at a time is in flight, not a page.
enum Raw {
    /// A JSON object.
    Json(Box<RawValue>),
    /// A protobuf object (`k8s\0` + envelope), from a protobuf list.
    #[cfg(feature = "protobuf")]
    Protobuf(Vec<u8>),
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(d).map(Raw::Json)
    }
}

/// A watch event's object. A JSON one is decoded as `T` straight from the
/// event's line, borrowed where the line is buffered (no copy of its text,
/// no allocation but the object's own); only one that does not decode is
/// kept as text: a BOOKMARK of a kind with required fields (it carries
/// only metadata), or an object to report ([`WatcherError::Decode`]).
enum Object<T> {
    /// Decoded.
    Decoded(T),
    /// Did not decode as `T`: its text and the decoder's error.
    Undecoded(Box<RawValue>, serde_json::Error),
    /// A protobuf object (`k8s\0` + envelope), from a protobuf watch,
    /// decoded when the event's type is known.
    #[cfg(feature = "protobuf")]
    Protobuf(Vec<u8>),
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Object<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // The watch stream decodes its lines from their buffer, so the
        // object's text is borrowed, not copied.
        let text = <&'de RawValue>::deserialize(d)?;
        Ok(match serde_json::from_str(text.get()) {
            Ok(obj) => Object::Decoded(obj),
            Err(e) => Object::Undecoded(text.to_owned(), e),
        })
    }
}

enum Phase<T> {
    /// Begin a new initial state.
    Start,
    /// Paginated list in progress; the next page's token.
    Listing(Option<String>),
    /// Streaming list in progress.
    InitStream(WatchStream<Object<T>>),
    /// Watching; `None` until (re)opened.
    Watch(Option<WatchStream<Object<T>>>),
}

/// What a BOOKMARK says, and what identifies an object that did not
/// decode.
#[derive(Deserialize, Default)]
struct BookmarkMeta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(rename = "resourceVersion", default)]
    resource_version: Option<String>,
    #[serde(default)]
    annotations: Option<std::collections::BTreeMap<String, String>>,
}

#[derive(Deserialize)]
struct Bookmark {
    #[serde(default)]
    metadata: BookmarkMeta,
}

/// What a JSON object says about itself (nothing when its metadata does
/// not read).
fn json_meta(raw: &RawValue) -> BookmarkMeta {
    serde_json::from_str::<Bookmark>(raw.get())
        .map(|b| b.metadata)
        .unwrap_or_default()
}

/// What a watch event's object says about itself (a BOOKMARK's version
/// and annotations).
fn object_meta<T: Resource>(obj: &Object<T>) -> BookmarkMeta {
    match obj {
        Object::Decoded(obj) => {
            let meta = obj.metadata();
            BookmarkMeta {
                name: meta.name.clone(),
                namespace: meta.namespace.clone(),
                resource_version: meta.resource_version.clone(),
                annotations: meta.annotations.clone(),
            }
        }
        Object::Undecoded(raw, _) => json_meta(raw),
        #[cfg(feature = "protobuf")]
        Object::Protobuf(bytes) => protobuf::meta(bytes),
    }
}

/// Decodes a list item (see [`decode_json`]).
fn decode<T: DeserializeOwned + 'static>(raw: &Raw) -> Result<T, WatcherError> {
    match raw {
        Raw::Json(json) => serde_json::from_str(json.get()).map_err(|e| decode_json::<T>(json, e)),
        #[cfg(feature = "protobuf")]
        Raw::Protobuf(bytes) => protobuf::decode(bytes),
    }
}

/// The object of an ADDED, MODIFIED or DELETED event (see [`decode_json`]).
fn take<T: DeserializeOwned + 'static>(obj: Object<T>) -> Result<T, WatcherError> {
    match obj {
        Object::Decoded(obj) => Ok(obj),
        Object::Undecoded(json, first) => Err(decode_json::<T>(&json, first)),
        #[cfg(feature = "protobuf")]
        Object::Protobuf(bytes) => protobuf::decode(&bytes),
    }
}

/// The report of a JSON object that did not decode (`first`, the
/// decoder's error): decodes it again tracking the path, and reads just
/// its metadata.
fn decode_json<T: DeserializeOwned>(json: &RawValue, first: serde_json::Error) -> WatcherError {
    let mut de = serde_json::Deserializer::from_str(json.get());
    let (path, source) = match serde_path_to_error::deserialize::<_, T>(&mut de) {
        Err(e) => (e.path().to_string(), e.into_inner()),
        Ok(_) => (String::from("."), first),
    };
    let meta = json_meta(json);
    WatcherError::Decode {
        type_name: std::any::type_name::<T>(),
        namespace: meta.namespace,
        name: meta.name,
        resource_version: meta.resource_version,
        path,
        source,
    }
}

/// The resourceVersion of an object that did not decode.
fn skipped_version(err: &WatcherError) -> Option<String> {
    match err {
        WatcherError::Decode {
            resource_version, ..
        }
        | WatcherError::DecodeProtobuf {
            resource_version, ..
        } => resource_version.clone().filter(|rv| !rv.is_empty()),
        _ => None,
    }
}

struct State<T> {
    api: Api<T>,
    config: WatcherConfig,
    metadata_only: bool,
    streaming: Support,
    phase: Phase<T>,
    /// Items of the current list page, still undecoded: one decoded object
    /// at a time is in flight, not a whole page of them.
    page: VecDeque<Raw>,
    pending: VecDeque<Event<T>>,
    resource_version: String,
    delay: Option<Duration>,
    /// The reopen rule (replays, stream health) and the backoff of every
    /// failure.
    progress: WatchProgress,
    /// When the current watch was opened, and how many lines it sent.
    watch_opened: tokio::time::Instant,
    watch_lines: u64,
}

enum Next<T> {
    Line(Result<WatchEvent<Object<T>>, kubeset_client::Error>),
    End,
    Idle,
}

async fn next_line<T: DeserializeOwned>(
    idle: Duration,
    stream: &mut WatchStream<Object<T>>,
) -> Next<T> {
    match tokio::time::timeout(idle, stream.next()).await {
        Ok(Some(line)) => Next::Line(line),
        Ok(None) => Next::End,
        Err(_) => Next::Idle,
    }
}

fn resource_version<T: Resource>(obj: &T) -> Option<&str> {
    obj.metadata()
        .resource_version
        .as_deref()
        .filter(|rv| !rv.is_empty())
}

fn rejects_streaming(e: &ApiError) -> bool {
    e.is_bad_request() || e.is_invalid()
}

impl<T> State<T>
where
    T: Resource + DeserializeOwned + Send + 'static,
{
    fn fail(&mut self, err: WatcherError) -> Result<Event<T>, WatcherError> {
        self.delay = Some(self.progress.failed());
        tracing::debug!(error = %err, "watcher step failed; backing off");
        Err(err)
    }

    /// The watch stream ended: reopen at once after a healthy stream, else
    /// after the next backoff delay ([`WatchProgress::ended`]).
    fn stream_ended(&mut self, why: &str) {
        self.phase = Phase::Watch(None);
        let pause = self.progress.ended();
        tracing::debug!(why, ?pause, rv = %self.resource_version, "reopening the watch");
        self.delay = (!pause.is_zero()).then_some(pause);
    }

    /// A stream was opened (or a streaming list turned into a watch) from
    /// `self.resource_version`.
    fn watch_started(&mut self) {
        self.watch_opened = tokio::time::Instant::now();
        self.watch_lines = 0;
        let timeout = Duration::from_secs(u64::from(self.config.timeout_seconds));
        self.progress.opened(&self.resource_version, Some(timeout));
    }

    /// Reports an object that did not decode and moves past it: the watch
    /// stays open, no backoff, the next version comes after it. `None`:
    /// a replay of one reported already.
    fn skip(&mut self, err: WatcherError) -> Option<Result<Event<T>, WatcherError>> {
        let rv = skipped_version(&err);
        if self.progress.event(rv.as_deref()) == Verdict::Replay {
            return None;
        }
        if let Some(rv) = rv {
            self.resource_version = rv;
        }
        Some(Err(err))
    }

    fn request(&self, accept: &'static str) -> Request {
        let req = self.api.request(Verb::Get, None);
        if self.metadata_only {
            req.header(ACCEPT, HeaderValue::from_static(accept))
        } else {
            req
        }
    }

    fn watch_params(&self) -> WatchParams {
        WatchParams {
            label_selector: self.config.label_selector.clone(),
            field_selector: self.config.field_selector.clone(),
            timeout_seconds: Some(self.config.timeout_seconds),
            bookmarks: true,
            send_initial_events: false,
            shard_selector: self.config.shard_selector.clone(),
        }
    }

    /// [`Api::watch_request`], asking for metadata only when this watcher
    /// keeps metadata.
    fn watch_request(&self, params: &WatchParams, rv: &str) -> Request {
        let req = self.api.watch_request(params, rv);
        if self.metadata_only {
            req.header(ACCEPT, HeaderValue::from_static(PARTIAL_METADATA_ACCEPT))
        } else {
            req
        }
    }

    /// Opens a watch: in protobuf when the client negotiates it and the
    /// kind has a codec (JSON again on 406/415), else JSON. The requests
    /// are built before the future, which holds no borrow of the state.
    fn open_watch(
        &self,
        params: &WatchParams,
        rv: &str,
    ) -> impl Future<Output = Result<WatchStream<Object<T>>, kubeset_client::Error>> + Send + 'static
    {
        let json = self.watch_request(params, rv);
        #[cfg(feature = "protobuf")]
        let pb = (!self.metadata_only && protobuf::negotiated::<T>(&self.api))
            .then(|| self.watch_request(params, rv));
        async move {
            #[cfg(feature = "protobuf")]
            if let Some(req) = pb {
                match req.watch_protobuf(protobuf::decoder::<T>()).await {
                    Err(e) if kubeset_client::protobuf::refused(&e) => {}
                    opened => return opened,
                }
            }
            json.watch::<Object<T>>().await
        }
    }

    /// A page of the paginated list: in protobuf when the client
    /// negotiates it and the kind has a codec (JSON again on 406/415), its
    /// items kept undecoded as JSON ones are; else JSON.
    fn list_page(
        &self,
        token: Option<&str>,
    ) -> impl Future<Output = Result<List<Raw>, kubeset_client::Error>> + Send + 'static {
        let json = self.list_request(token);
        #[cfg(feature = "protobuf")]
        let pb = (!self.metadata_only && protobuf::negotiated::<T>(&self.api))
            .then(|| self.list_request(token));
        async move {
            #[cfg(feature = "protobuf")]
            if let Some(req) = pb {
                return protobuf::list_page::<T>(req, json).await;
            }
            json.send_json::<List<Raw>>().await
        }
    }

    fn list_request(&self, token: Option<&str>) -> Request {
        let params = ListParams {
            label_selector: self.config.label_selector.clone(),
            field_selector: self.config.field_selector.clone(),
            limit: Some(self.config.page_size),
            continue_token: token.map(str::to_owned),
            shard_selector: self.config.shard_selector.clone(),
            ..ListParams::default()
        };
        // The first page only: a continue token carries its own version.
        let params = match (self.config.list_semantic, token) {
            (ListSemantic::Any, None) => params.at("0").matching(VersionMatch::NotOlderThan),
            _ => params,
        };
        let mut pairs = Vec::new();
        params.query_pairs(&mut pairs);
        let mut req = self.request(PARTIAL_METADATA_LIST_ACCEPT);
        for (k, v) in pairs {
            req = req.param(k, v);
        }
        req
    }

    /// Advances until there is an event or an error to yield.
    async fn step(&mut self) -> Result<Event<T>, WatcherError> {
        loop {
            // A page's items come before what follows them (`InitDone`).
            if let Some(raw) = self.page.pop_front() {
                // An object that does not decode is reported and left out
                // of the state; listing again would only meet it again.
                return decode::<T>(&raw).map(Event::InitApply);
            }
            if let Some(ev) = self.pending.pop_front() {
                return Ok(ev);
            }
            if let Some(d) = self.delay.take() {
                tokio::time::sleep(d).await;
            }
            match std::mem::replace(&mut self.phase, Phase::Start) {
                Phase::Start => {
                    if self.streaming == Support::No {
                        self.phase = Phase::Listing(None);
                        return Ok(Event::Init);
                    }
                    let params = WatchParams {
                        send_initial_events: true,
                        ..self.watch_params()
                    };
                    match self.open_watch(&params, "").await {
                        Ok(stream) => {
                            self.phase = Phase::InitStream(stream);
                            return Ok(Event::Init);
                        }
                        Err(e)
                            if self.streaming == Support::Unknown
                                && e.api_error().is_some_and(rejects_streaming) =>
                        {
                            tracing::debug!(error = %e, "streaming list rejected; paginated lists from now on");
                            self.streaming = Support::No;
                        }
                        Err(source) => return self.fail(WatcherError::WatchOpen { source }),
                    }
                }
                Phase::Listing(token) => match self.list_page(token.as_deref()).await {
                    Ok(page) => {
                        // The response body is dropped here; the items stay
                        // undecoded (JSON, or protobuf objects) until the
                        // consumer takes them.
                        self.page = page.items.into();
                        match page.metadata.continue_.filter(|c| !c.is_empty()) {
                            Some(next) => self.phase = Phase::Listing(Some(next)),
                            None => {
                                self.resource_version =
                                    page.metadata.resource_version.unwrap_or_default();
                                self.pending.push_back(Event::InitDone);
                                self.phase = Phase::Watch(None);
                            }
                        }
                    }
                    Err(e) if e.is_gone() => {
                        // The continue token expired: list again from scratch.
                        self.phase = Phase::Start;
                    }
                    Err(source) => {
                        self.phase = Phase::Start;
                        return self.fail(WatcherError::InitialList { source });
                    }
                },
                Phase::InitStream(mut stream) => {
                    let line = next_line(self.config.idle_timeout, &mut stream).await;
                    if let Some(out) = self.on_init_line(stream, line) {
                        return out;
                    }
                }
                Phase::Watch(None) => {
                    let params = self.watch_params();
                    let rv = self.resource_version.clone();
                    match self.open_watch(&params, &rv).await {
                        Ok(stream) => {
                            self.watch_started();
                            self.phase = Phase::Watch(Some(stream));
                        }
                        Err(e) if e.is_gone() => self.phase = Phase::Start,
                        Err(source) => {
                            self.phase = Phase::Watch(None);
                            return self.fail(WatcherError::WatchOpen { source });
                        }
                    }
                }
                Phase::Watch(Some(mut stream)) => {
                    let line = next_line(self.config.idle_timeout, &mut stream).await;
                    self.phase = Phase::Watch(Some(stream));
                    if let Some(out) = self.on_watch_line(line) {
                        return out;
                    }
                }
            }
        }
    }
}

impl<T> State<T>
where
    T: Resource + DeserializeOwned + Send + 'static,
{
    /// What one step of a streaming list yields (`None`: nothing, go on);
    /// `stream` is put back unless the list is over.
    fn on_init_line(
        &mut self,
        stream: WatchStream<Object<T>>,
        line: Next<T>,
    ) -> Option<Result<Event<T>, WatcherError>> {
        match line {
            Next::Line(Ok(WatchEvent::Added(obj))) => {
                self.phase = Phase::InitStream(stream);
                Some(take(obj).map(Event::InitApply))
            }
            Next::Line(Ok(WatchEvent::Bookmark(obj))) => {
                let meta = object_meta(&obj);
                let end = meta
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(INITIAL_EVENTS_END))
                    .is_some_and(|v| v == "true");
                if !end {
                    self.phase = Phase::InitStream(stream);
                    return None;
                }
                self.streaming = Support::Yes;
                if let Some(rv) = meta.resource_version.filter(|rv| !rv.is_empty()) {
                    self.resource_version = rv;
                }
                self.phase = Phase::Watch(Some(stream));
                self.watch_started();
                Some(Ok(Event::InitDone))
            }
            Next::Line(Ok(WatchEvent::Modified(_) | WatchEvent::Deleted(_))) => {
                // Not a streaming list: the server ignored sendInitialEvents.
                if self.streaming == Support::Unknown {
                    self.streaming = Support::No;
                }
                self.phase = Phase::Start;
                None
            }
            Next::Line(Ok(WatchEvent::Error(e))) => {
                self.phase = Phase::Start;
                if e.is_gone() {
                    return None;
                }
                if self.streaming == Support::Unknown && rejects_streaming(&e) {
                    self.streaming = Support::No;
                    return None;
                }
                Some(self.fail(WatcherError::WatchEvent { source: e }))
            }
            Next::Line(Err(source)) => Some(self.fail(WatcherError::WatchStream { source })),
            Next::End | Next::Idle => {
                // Ended before the initial-events-end bookmark.
                if self.streaming == Support::Unknown {
                    self.streaming = Support::No;
                    return None;
                }
                Some(self.fail(WatcherError::StreamingListIncomplete))
            }
        }
    }

    /// What one step of an open watch yields (`None`: nothing, go on).
    fn on_watch_line(&mut self, line: Next<T>) -> Option<Result<Event<T>, WatcherError>> {
        let ev = match line {
            Next::Line(Ok(ev)) => ev,
            Next::Line(Err(source)) => {
                self.watch_lines += 1;
                self.stream_ended("the stream broke");
                return Some(Err(WatcherError::WatchStream { source }));
            }
            Next::End => {
                self.stream_ended("the stream ended");
                // client-go: a watch that ends within a second without a
                // single line is a failure, not a normal timeout.
                let early = self.watch_opened.elapsed() < Duration::from_secs(1);
                return (self.watch_lines == 0 && early)
                    .then_some(Err(WatcherError::WatchClosedEarly));
            }
            Next::Idle => {
                self.stream_ended("the stream stayed silent");
                return None;
            }
        };
        self.watch_lines += 1;
        let (out, rv) = match ev {
            WatchEvent::Added(obj) | WatchEvent::Modified(obj) => match take(obj) {
                Ok(obj) => {
                    let rv = resource_version(&obj).map(str::to_owned);
                    (Some(Event::Apply(obj)), rv)
                }
                Err(e) => return self.skip(e),
            },
            WatchEvent::Deleted(obj) => match take(obj) {
                Ok(obj) => {
                    let rv = resource_version(&obj).map(str::to_owned);
                    (Some(Event::Delete(obj)), rv)
                }
                Err(e) => return self.skip(e),
            },
            WatchEvent::Bookmark(obj) => (None, object_meta(&obj).resource_version),
            WatchEvent::Error(e) if e.is_gone() => {
                self.phase = Phase::Start;
                return None;
            }
            WatchEvent::Error(e) => {
                self.phase = Phase::Watch(None);
                return Some(self.fail(WatcherError::WatchEvent { source: e }));
            }
        };
        let rv = rv.filter(|rv| !rv.is_empty());
        if self.progress.event(rv.as_deref()) == Verdict::Replay {
            tracing::debug!(rv = ?rv, "dropped a replayed watch event");
            return None;
        }
        if let Some(rv) = rv {
            self.resource_version = rv;
        }
        out.map(Ok)
    }
}
