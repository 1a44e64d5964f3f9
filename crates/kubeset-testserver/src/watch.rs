//! Watch streams: newline-delimited JSON events over a chunked response,
//! or kube-apiserver's protobuf frames when negotiated
//! ([`crate::protobuf::watch_frame`]).
//!
//! A stream starts from a resourceVersion (resuming from the history, or
//! `410 Expired` as an ERROR event when it is older than the kept history),
//! or from the current state (synthetic ADDED events, then with
//! `sendInitialEvents=true` a BOOKMARK annotated
//! `k8s.io/initial-events-end`). It ends at `timeoutSeconds`, when the
//! replica goes down, or mid-line when the replica cuts its watches.
//!
//! **Memory** (`fanout.rs`): the initial state is one copy per storage
//! key and resourceVersion, shared by the watches starting there; events
//! are read from the store's shared history; what a watch holds of its
//! own is its queue, bounded in bytes. A watch whose client does not read
//! for the slow-watcher timeout is cut, and a watch whose client went
//! away ends at its next send or wake-up, freeing all of it.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use kubeset_api::protobuf::dynamic;
use serde_json::{Value, json};

use crate::fanout::{Gone, QueueTx, Watches};
use crate::faults::{FaultState, Mode};
use crate::partial::{self, Target};
use crate::resources::Resource;
use crate::selectors::{FieldSelector, LabelSelector};
use crate::status::ApiError;
use crate::store::{self, EventType, Store, Stored, Writing};
use crate::table;

/// What a watch request asked for.
pub(crate) struct WatchRequest {
    pub(crate) res: Arc<Resource>,
    pub(crate) namespace: Option<String>,
    pub(crate) label: LabelSelector,
    pub(crate) field: FieldSelector,
    /// `None` (or `Some(0)`) starts with the current state.
    pub(crate) resource_version: Option<u64>,
    pub(crate) send_initial_events: bool,
    pub(crate) bookmarks: bool,
    pub(crate) timeout: Option<Duration>,
    pub(crate) table: bool,
    /// `as=PartialObjectMetadata`: events carry the metadata only.
    pub(crate) partial: Target,
    /// Protobuf frames instead of JSON lines.
    pub(crate) protobuf: bool,
    pub(crate) bookmark_interval: Duration,
}

struct Writer {
    tx: QueueTx,
    /// The resource whose printer columns to send, for Table watches.
    table: Option<Arc<Resource>>,
    /// What `as=` asked the events' objects to be.
    partial: Target,
    protobuf: bool,
    /// The kind's codec, for a protobuf watch.
    codec: Option<&'static dynamic::Kind>,
    /// How an event's object is written: from the stored text for a
    /// watch of a kind read as stored (JSON, protobuf or its metadata;
    /// not a Table), else parsed per event.
    how: Writing,
}

impl Writer {
    /// An event of `kind` whose object is `obj`, written from its stored
    /// text as this watch writes it: the JSON line, the protobuf frame
    /// (the text read straight into the model), or the
    /// `PartialObjectMetadata` of its metadata. `None` when the object
    /// must be parsed.
    fn text_event(&self, kind: &str, obj: &Stored) -> Option<Vec<u8>> {
        if self.table.is_some() {
            return None;
        }
        match self.partial {
            Target::Whole if self.protobuf => {
                let text = self.how.text(obj)?;
                crate::protobuf::watch_frame_of_text(self.codec?, kind, text)
            }
            Target::Whole => store::event_line(&self.how, kind, obj),
            Target::Object(version) => {
                let metadata = partial::metadata_text(self.how.text(obj)?);
                let mut line = Vec::with_capacity(metadata.map_or(0, str::len) + 128);
                line.extend_from_slice(b"{\"type\":");
                let _ = serde_json::to_writer(&mut line, kind);
                line.extend_from_slice(b",\"object\":");
                partial::write_object(metadata, version, &mut line);
                line.extend_from_slice(b"}\n");
                Some(line)
            }
            Target::List(_) | Target::NotAcceptable => None,
        }
    }

    /// One event's bytes: a JSON line or a protobuf frame (`None`: the
    /// object does not fit its model; the watch ends).
    fn encode(&self, v: &Value) -> Option<Vec<u8>> {
        let shaped;
        let v = match self.partial {
            // Events and bookmarks alike, as kube-apiserver transforms
            // every event's object; an ERROR's Status stays whole.
            Target::Object(version) if v["type"] != "ERROR" => {
                shaped =
                    json!({"type": v["type"], "object": partial::object(&v["object"], version)});
                &shaped
            }
            // kube-apiserver cannot make an event's object a list: it
            // ends such a watch, with no event, at its first one.
            Target::List(_) => return None,
            _ => v,
        };
        if self.protobuf {
            return crate::protobuf::watch_frame(v);
        }
        Some(json_line(v))
    }

    /// Sends one line; `false` ends the watch. A watcher that stayed full
    /// for the slow-watcher timeout is cut, as kube-apiserver's cacher
    /// forces an unresponsive watcher closed.
    async fn send_line(&self, v: &Value) -> bool {
        let Some(bytes) = self.encode(v) else {
            return false;
        };
        self.send_bytes(bytes).await
    }

    /// Sends one encoded line or frame; `false` ends the watch.
    async fn send_bytes(&self, bytes: Vec<u8>) -> bool {
        match self.tx.send(Bytes::from(bytes)).await {
            Ok(()) => true,
            Err(Gone::Closed) => false,
            Err(Gone::Slow) => {
                tracing::debug!(
                    "watch closed: its client did not read for the slow-watcher timeout"
                );
                self.tx
                    .abort("watcher closed due to unresponsiveness", true);
                false
            }
        }
    }

    async fn event(&self, kind: &str, obj: Value, rv: u64) -> bool {
        let object = if let Some(res) = &self.table {
            table::table(
                res,
                std::slice::from_ref(&obj),
                &rv.to_string(),
                None,
                "Object",
            )
        } else {
            obj
        };
        self.send_line(&json!({"type": kind, "object": object}))
            .await
    }

    async fn error(&self, e: &ApiError) -> bool {
        self.send_line(&json!({"type": "ERROR", "object": e.to_status()}))
            .await
    }
}

/// One event as a JSON line, `type` before `object` as kube-apiserver
/// writes it (its `WatchEvent` struct's order; a `Value` would sort the
/// keys): a client that reads the type first can decode the object
/// straight into the kind it names.
fn json_line(v: &Value) -> Vec<u8> {
    let mut line = Vec::with_capacity(256);
    line.extend_from_slice(b"{\"type\":");
    let _ = serde_json::to_writer(&mut line, &v["type"]);
    line.extend_from_slice(b",\"object\":");
    let _ = serde_json::to_writer(&mut line, &v["object"]);
    line.extend_from_slice(b"}\n");
    line
}

fn bookmark(res: &Resource, rv: u64, initial_end: bool) -> Value {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    json!({"type": "BOOKMARK", "object": {"kind": res.kind, "apiVersion": res.api_version(), "metadata": meta}})
}

impl WatchRequest {
    fn matches(&self, obj: &Stored) -> bool {
        obj.matches(&self.label, &self.field)
    }

    /// The initial ADDED events (the objects that match, converted to the
    /// watched version one at a time); `false` when the watch ended. Each
    /// object is parsed from the store's text as it is sent, so a watch of
    /// many objects holds one of them parsed at a time.
    ///
    /// A resource with a conversion webhook converts them in one review
    /// ([`crate::conversion::call::read`]); a failed conversion ends the
    /// watch with an `ERROR` event, the 429 kube-apiserver refuses such a
    /// watch with ([`crate::conversion::not_ready`]).
    async fn send_initial(&self, w: &Writer, items: &[(String, Arc<Stored>)], rv: u64) -> bool {
        let matching = items
            .iter()
            .filter(|(ns, obj)| {
                self.namespace.as_ref().is_none_or(|want| want == ns) && self.matches(obj)
            })
            .map(|(_, obj)| obj);
        if self.res.conversion.is_none() {
            for obj in matching {
                let sent = match w.text_event("ADDED", obj) {
                    Some(line) => w.send_bytes(line).await,
                    None => {
                        let obj = store::as_version(&self.res, obj.to_value());
                        w.event("ADDED", obj, rv).await
                    }
                };
                if !sent {
                    return false;
                }
            }
            return true;
        }
        let shown = matching
            .map(|obj| store::as_version(&self.res, obj.to_value()))
            .collect();
        let shown = match crate::conversion::call::read(&self.res, shown).await {
            Ok(s) => s,
            Err(e) => {
                w.error(&crate::conversion::not_ready(&self.res, &e)).await;
                return false;
            }
        };
        for obj in shown {
            if !w.event("ADDED", obj, rv).await {
                return false;
            }
        }
        true
    }
}

/// Runs one watch, writing lines into `tx` until it ends.
pub(crate) async fn run(
    store: Arc<Store>,
    watches: Arc<Watches>,
    faults: Arc<FaultState>,
    req: WatchRequest,
    tx: QueueTx,
) {
    let _open = watches.enter();
    let from_text = !req.table && matches!(req.partial, Target::Whole | Target::Object(_));
    let w = Writer {
        tx,
        table: req.table.then(|| req.res.clone()),
        partial: req.partial,
        protobuf: req.protobuf,
        codec: dynamic::kind(&req.res.api_version(), &req.res.kind),
        how: if from_text {
            Writing::of(&req.res)
        } else {
            Writing::Parsed
        },
    };
    let mut rv_rx = store.subscribe();
    let mut cut = faults.subscribe_cut();
    cut.borrow_and_update();
    let mut mode = faults.subscribe_mode();
    mode.borrow_and_update();
    let deadline = req.timeout.map(|t| tokio::time::Instant::now() + t);
    let key = req.res.storage_key();

    let mut cursor = match req.resource_version {
        Some(rv) if rv > 0 && !req.send_initial_events => rv,
        _ => {
            let snapshot = watches.snapshot(&store, &req.res);
            let rv = snapshot.rv;
            if !req.send_initial(&w, &snapshot.items, rv).await {
                return;
            }
            drop(snapshot);
            if req.send_initial_events
                && req.bookmarks
                && !w.send_line(&bookmark(&req.res, rv, true)).await
            {
                return;
            }
            rv
        }
    };
    let mut ticker = tokio::time::interval(req.bookmark_interval);
    ticker.tick().await;
    loop {
        if faults.mode() == Mode::Hang && faults.wait_not_hung().await == Mode::Down {
            return;
        }
        rv_rx.borrow_and_update();
        match store.events_since(cursor) {
            Err(oldest) => {
                let e = ApiError::expired(format!("too old resource version: {cursor} ({oldest})"));
                w.error(&e).await;
                return;
            }
            Ok(events) => {
                for ev in events {
                    cursor = ev.rv;
                    if ev.key != key {
                        continue;
                    }
                    if let Some(ns) = &req.namespace
                        && &ev.namespace != ns
                    {
                        continue;
                    }
                    let new_match = req.matches(&ev.object);
                    let old_match = ev.old.as_ref().is_some_and(|o| req.matches(o));
                    let Some(kind) = seen_as(ev.kind, old_match, new_match) else {
                        continue;
                    };
                    if !send_event(&w, &req.res, &ev, kind).await {
                        return;
                    }
                }
            }
        }
        if definition_changed(&store, &req.res) {
            return;
        }
        tokio::select! {
            changed = rv_rx.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            _ = cut.changed() => {
                cut_midway(&w, &req, cursor).await;
                return;
            }
            changed = mode.changed() => {
                if changed.is_err() || *mode.borrow_and_update() == Mode::Down {
                    return;
                }
            }
            _ = ticker.tick(), if req.bookmarks => {
                if !w.send_line(&bookmark(&req.res, cursor, false)).await {
                    return;
                }
            }
            _ = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            } => return,
            () = w.tx.closed() => return,
        }
    }
}

/// Whether the custom resource `res` a watch follows is no longer served
/// as it was (its CRD's spec changed, or the CRD is gone): kube-apiserver
/// then replaces the resource's storage, which ends its watches (the
/// events already made are sent first), and a client watches again.
fn definition_changed(store: &Store, res: &Resource) -> bool {
    res.custom
        && store
            .lookup(&res.group, &res.version, &res.plural)
            .as_deref()
            != Some(res)
}

/// Sends one event of the history as a watch of `res` sees it (`seen`);
/// `false` ends the watch. The object is written from the stored text
/// when the watch and the kind allow ([`Writing`]): every watcher of a
/// kind then sends the text the store keeps, none parses it.
async fn send_event(w: &Writer, res: &Resource, ev: &store::Event, seen: &str) -> bool {
    if !shows_old(ev, seen)
        && let Some(line) = w.text_event(seen, &ev.object)
    {
        return w.send_bytes(line).await;
    }
    let obj = store::as_version(res, shown_object(ev, seen));
    match crate::conversion::call::read_one(res, obj).await {
        Ok(obj) => w.event(seen, obj, ev.rv).await,
        Err(e) => {
            w.error(&e).await;
            false
        }
    }
}

/// Whether an event is shown with its old object: a MODIFIED seen as
/// DELETED (the object left the watch's selectors).
fn shows_old(ev: &store::Event, seen: &str) -> bool {
    ev.old.is_some() && ev.kind == EventType::Modified && seen == "DELETED"
}

/// The object an event carries: an object leaving the watch's selectors
/// (a MODIFIED seen as DELETED) is shown as it was, with the event's
/// resourceVersion, as kube-apiserver's watchers send it.
fn shown_object(ev: &store::Event, seen: &str) -> Value {
    match &ev.old {
        Some(old) if shows_old(ev, seen) => {
            let mut o = old.to_value();
            if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
                m.insert("resourceVersion".into(), Value::String(ev.rv.to_string()));
            }
            o
        }
        _ => ev.object.to_value(),
    }
}

/// How a watch sees a change: its kind, whether the object matched the
/// watch's selectors before and after. `None`: not seen at all.
fn seen_as(kind: EventType, old_match: bool, new_match: bool) -> Option<&'static str> {
    Some(match (kind, old_match, new_match) {
        (EventType::Added, _, true) => "ADDED",
        (EventType::Modified, true, true) => "MODIFIED",
        (EventType::Modified, false, true) => "ADDED",
        (EventType::Modified, true, false) => "DELETED",
        (EventType::Deleted, true, _) | (EventType::Deleted, _, true) => "DELETED",
        _ => return None,
    })
}

/// Fault injection's cut: half a bookmark line, then the connection is
/// aborted once hyper has taken it.
async fn cut_midway(w: &Writer, req: &WatchRequest, cursor: u64) {
    let line = w
        .encode(&bookmark(&req.res, cursor, false))
        .unwrap_or_default();
    let half = line.len() / 2;
    let partial = Bytes::from(line).slice(..half);
    if w.tx.send(partial).await.is_ok() {
        // Let hyper take the partial line and write it out before
        // the error aborts the connection.
        for _ in 0..100 {
            if w.tx.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        w.tx.abort("watch cut by fault injection", false);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn an_event_line_has_its_type_before_its_object() {
        let v = json!({"type": "ADDED", "object": {"kind": "ConfigMap", "data": {"a": "1"}}});
        let line = super::json_line(&v);
        assert_eq!(
            String::from_utf8(line).expect("utf-8"),
            "{\"type\":\"ADDED\",\"object\":{\"data\":{\"a\":\"1\"},\"kind\":\"ConfigMap\"}}\n"
        );
    }

    /// An event line written from the stored text is the line printed
    /// from the parsed object; an object stored in another version than
    /// the one watched is left to the parsed path.
    #[test]
    fn an_event_line_from_the_stored_text_is_the_printed_line() {
        use crate::store::{self, Stored, Writing};
        let res = crate::resources::builtin()
            .into_iter()
            .find(|r| r.group.is_empty() && r.plural == "configmaps")
            .expect("served");
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "labels": {"k": "\u{e9}\"\n"}},
            "data": {"big": "x"}, "n": [u64::MAX, -1, 0.5, 1e300, [[]]]});
        let stored = Stored::new(&res.storage_key(), &obj);
        let how = Writing::of(&res);
        let line = store::event_line(&how, "MODIFIED", &stored).expect("written from the text");
        let printed = super::json_line(&json!({"type": "MODIFIED",
            "object": store::as_version(&res, stored.to_value())}));
        assert_eq!(
            String::from_utf8(line).ok(),
            String::from_utf8(printed).ok()
        );
        let mut other = obj.clone();
        other["apiVersion"] = json!("v2");
        let stored = Stored::new(&res.storage_key(), &other);
        assert!(store::event_line(&how, "ADDED", &stored).is_none());
        assert!(store::event_line(&Writing::Parsed, "ADDED", &stored).is_none());
    }
}
