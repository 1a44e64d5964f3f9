//! The codecs by `apiVersion` and `kind` or by type: the envelope names
//! the kind, a generated table finds its model. Kinds without a codec
//! (custom resources, and kinds behind a cargo feature that is off) are
//! not found.
//!
//! Protobuf ↔ JSON of any kind (`to_json`, `from_json`, `Kind::decode`,
//! `Kind::encode`), for code that holds objects as
//! JSON (the embedded API server), needs the cargo feature
//! `protobuf-json`: it goes through each model's serde, which instantiates
//! serde for `serde_json::Value` over every model — more than the codecs
//! themselves cost to build. The typed codecs ([`typed`]) and a `Status`
//! as JSON ([`status_json`]) need only `protobuf`.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::OnceLock;

#[cfg(feature = "protobuf-json")]
use serde::Serialize;
#[cfg(feature = "protobuf-json")]
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::wire::Budget;
use super::{DecodeError, Message, Unknown, wire};
use crate::List;
use crate::apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta, Status};

/// A conversion failed.
#[derive(Debug, thiserror::Error)]
pub enum DynamicError {
    /// The bytes are not a valid encoding.
    #[error("invalid protobuf: {source}")]
    Decode {
        /// The cause.
        #[from]
        source: DecodeError,
    },
    /// No compiled model has a codec for this kind.
    #[error("no protobuf codec for {api_version}/{kind}")]
    UnknownKind {
        /// The apiVersion.
        api_version: String,
        /// The kind.
        kind: String,
    },
    /// The JSON is not a valid object of the kind.
    #[error("{kind}: {source}")]
    Json {
        /// The Rust type.
        kind: &'static str,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
}

/// A model's decoder behind `dyn Any` (downcast by [`Typed`]), charging
/// the budget; the value is decoded into the `Option<T>` behind the `Any`
/// (made when `None`), and left there half-made on an error: the caller
/// drops it, so this crate compiles no drop glue for the decoded kinds.
type DecodeAny = fn(&[u8], &mut Budget, &mut dyn Any) -> Result<(), DecodeError>;

/// One kind's codec: JSON object ↔ protobuf bytes with the envelope.
#[derive(Debug, Clone, Copy)]
pub struct Kind {
    /// `apiVersion` (`v1`, `apps/v1`).
    pub api_version: &'static str,
    /// `kind`.
    pub kind: &'static str,
    #[cfg(feature = "protobuf-json")]
    decode: fn(&[u8], &mut Budget) -> Result<Value, DynamicError>,
    /// JSON text → the object's message bytes (no envelope).
    #[cfg(feature = "protobuf-json")]
    encode: fn(&[u8]) -> Result<Vec<u8>, DynamicError>,
    type_id: fn() -> TypeId,
    decode_any: DecodeAny,
    encode_any: fn(&dyn Any, &mut Vec<u8>) -> bool,
}

impl Kind {
    #[cfg(not(feature = "protobuf-json"))]
    pub(crate) const fn of<T>(api_version: &'static str, kind: &'static str) -> Self
    where
        T: Message + Default + 'static,
    {
        Self {
            api_version,
            kind,
            type_id: TypeId::of::<T>,
            decode_any: decode_any::<T>,
            encode_any: encode_any::<T>,
        }
    }

    #[cfg(feature = "protobuf-json")]
    pub(crate) const fn of<T>(api_version: &'static str, kind: &'static str) -> Self
    where
        T: Message + Default + Serialize + DeserializeOwned + 'static,
    {
        Self {
            api_version,
            kind,
            decode: decode_as::<T>,
            encode: encode_as::<T>,
            type_id: TypeId::of::<T>,
            decode_any: decode_any::<T>,
            encode_any: encode_any::<T>,
        }
    }

    /// The object (the message bytes inside the envelope) as JSON, with
    /// `apiVersion` and `kind` set (cargo feature `protobuf-json`).
    #[cfg(feature = "protobuf-json")]
    pub fn decode(&self, raw: &[u8]) -> Result<Value, DynamicError> {
        let mut v = (self.decode)(raw, &mut Budget::for_body(raw.len()))?;
        if let Value::Object(m) = &mut v {
            m.insert("apiVersion".into(), self.api_version.into());
            m.insert("kind".into(), self.kind.into());
        }
        Ok(v)
    }

    /// A JSON object of this kind, encoded with the envelope (cargo
    /// feature `protobuf-json`).
    #[cfg(feature = "protobuf-json")]
    pub fn encode(&self, obj: &Value) -> Result<Vec<u8>, DynamicError> {
        // Printed and read as text: one deserializer per model (the
        // text's) serves both entry points.
        let json = serde_json::to_vec(obj).map_err(|source| DynamicError::Json {
            kind: self.kind,
            source,
        })?;
        self.encode_json(&json)
    }

    /// An object of this kind as JSON text, encoded with the envelope
    /// (cargo feature `protobuf-json`): what [`Kind::encode`] does with
    /// a parsed object, read straight from the text into the model, with
    /// no `Value` in between (the embedded API server keeps objects as
    /// text).
    ///
    /// ```
    /// use kubeset_api::protobuf::dynamic;
    /// let cm = dynamic::kind("v1", "ConfigMap").unwrap();
    /// let pb = cm.encode_json(br#"{"metadata":{"name":"a"},"data":{"k":"v"}}"#).unwrap();
    /// assert_eq!(dynamic::to_json(&pb).unwrap()["data"]["k"], "v");
    /// ```
    #[cfg(feature = "protobuf-json")]
    pub fn encode_json(&self, json: &[u8]) -> Result<Vec<u8>, DynamicError> {
        let raw = (self.encode)(json)?;
        Ok(super::envelope(self.api_version, self.kind, &raw))
    }

    /// An object of this kind as JSON text, encoded as its bare message
    /// (no `k8s\0`, no envelope): a list's item, written into the list's
    /// `items` field one at a time (cargo feature `protobuf-json`).
    ///
    /// ```
    /// use kubeset_api::protobuf::{dynamic, Unknown};
    /// let cm = dynamic::kind("v1", "ConfigMap").unwrap();
    /// let json = br#"{"metadata":{"name":"a"}}"#;
    /// let enveloped = cm.encode_json(json).unwrap();
    /// assert_eq!(cm.message_from_json(json).unwrap(), Unknown::parse(&enveloped).unwrap().raw);
    /// ```
    #[cfg(feature = "protobuf-json")]
    pub fn message_from_json(&self, json: &[u8]) -> Result<Vec<u8>, DynamicError> {
        (self.encode)(json)
    }
}

fn decode_any<T: Message + Default + 'static>(
    raw: &[u8],
    budget: &mut Budget,
    out: &mut dyn Any,
) -> Result<(), DecodeError> {
    // Into the caller's slot, not a value of our own: a value made here
    // would be dropped here on an error, compiling every kind's drop glue
    // (the largest part of this feature's code). Another type behind the
    // `Any` is left alone (`Typed` maps its `K` to this entry).
    match out.downcast_mut::<Option<T>>() {
        Some(slot) => {
            let mut t = super::field::filled::<T>(slot, T::default);
            super::merge_bytes(raw, budget, &mut t)
        }
        None => Ok(()),
    }
}

fn encode_any<T: Message + 'static>(obj: &dyn Any, buf: &mut Vec<u8>) -> bool {
    match obj.downcast_ref::<T>() {
        Some(t) => {
            t.encode_fields(buf);
            true
        }
        None => false,
    }
}

#[cfg(feature = "protobuf-json")]
fn decode_as<T: Message + Default + Serialize>(
    raw: &[u8],
    budget: &mut Budget,
) -> Result<Value, DynamicError> {
    let obj: T = super::decode_with(raw, budget)?;
    // A model always serializes to a JSON value.
    serde_json::to_value(&obj).map_err(|source| DynamicError::Json {
        kind: std::any::type_name::<T>(),
        source,
    })
}

#[cfg(feature = "protobuf-json")]
fn encode_as<T: Message + DeserializeOwned>(json: &[u8]) -> Result<Vec<u8>, DynamicError> {
    let typed: T = serde_json::from_slice(json).map_err(|source| DynamicError::Json {
        kind: std::any::type_name::<T>(),
        source,
    })?;
    Ok(super::encode(&typed))
}

/// Meta kinds written in every group's version (`DeleteOptions` of
/// `apps/v1` is `meta/v1`'s); looked up by kind when the apiVersion is not
/// in the table.
const ANY_VERSION: &[&str] = &["DeleteOptions"];

/// The codec of `api_version`/`kind`, if a compiled model has one.
pub fn kind(api_version: &str, kind: &str) -> Option<&'static Kind> {
    let table = super::generated::kinds::KINDS;
    let exact = table
        .binary_search_by(|k| (k.api_version, k.kind).cmp(&(api_version, kind)))
        .ok()
        .map(|i| &table[i]);
    exact.or_else(|| {
        ANY_VERSION
            .contains(&kind)
            .then(|| {
                table
                    .iter()
                    .find(|k| k.api_version == "v1" && k.kind == kind)
            })
            .flatten()
    })
}

/// Decodes `k8s\0` + envelope + object into JSON (with `apiVersion` and
/// `kind` from the envelope; cargo feature `protobuf-json`).
#[cfg(feature = "protobuf-json")]
pub fn to_json(bytes: &[u8]) -> Result<Value, DynamicError> {
    let (u, k) = envelope_kind(bytes)?;
    let v = k.decode(u.raw)?;
    Ok(with_type(v, u.api_version, k.kind))
}

/// The envelope of `bytes` and the table's entry for the kind it names
/// (any kind the table has: checked against itself).
fn envelope_kind(bytes: &[u8]) -> Result<(Unknown<'_>, &'static Kind), DynamicError> {
    let u = Unknown::parse(bytes)?;
    u.check(&u.api_version, &u.kind)?;
    match kind(&u.api_version, &u.kind) {
        Some(k) => Ok((u, k)),
        None => Err(unknown_kind(&u)),
    }
}

fn unknown_kind(u: &Unknown<'_>) -> DynamicError {
    DynamicError::UnknownKind {
        api_version: u.api_version.clone(),
        kind: u.kind.clone(),
    }
}

/// `v` with the `apiVersion` as sent (a meta kind of another group keeps
/// its own) and the table's `kind`.
fn with_type(mut v: Value, api_version: String, kind: &str) -> Value {
    if let Value::Object(m) = &mut v {
        m.insert("apiVersion".into(), api_version.into());
        m.insert("kind".into(), kind.into());
    }
    v
}

/// Encodes a JSON object by its own `apiVersion` and `kind`; `Ok(None)`
/// when no compiled model has a codec for it (it stays JSON; cargo feature
/// `protobuf-json`).
#[cfg(feature = "protobuf-json")]
pub fn from_json(obj: &Value) -> Result<Option<Vec<u8>>, DynamicError> {
    let field = |f: &str| obj.get(f).and_then(Value::as_str).unwrap_or("");
    match kind(field("apiVersion"), field("kind")) {
        Some(k) => k.encode(obj).map(Some),
        None => Ok(None),
    }
}

/// Decodes a `Status` in `k8s\0` + envelope (an error response's body, a
/// watch's `ERROR` event) into JSON, as `to_json` does, without the
/// JSON conversion of every other kind: only `Status`'s serde is
/// instantiated. Any other kind is [`DynamicError::UnknownKind`].
///
/// ```
/// use kubeset_api::apimachinery::pkg::apis::meta::v1::Status;
/// use kubeset_api::protobuf::{dynamic, encode_with_type};
/// let status = Status { code: Some(404), reason: Some("NotFound".into()), ..Status::default() };
/// let json = dynamic::status_json(&encode_with_type(&status, "v1", "Status")).unwrap();
/// assert_eq!(json["code"], 404);
/// assert_eq!(json["kind"], "Status");
/// ```
pub fn status_json(bytes: &[u8]) -> Result<Value, DynamicError> {
    let (u, k) = envelope_kind(bytes)?;
    if (k.type_id)() != TypeId::of::<Status>() {
        return Err(unknown_kind(&u));
    }
    let status: Status = super::decode(u.raw)?;
    let v = serde_json::to_value(&status).map_err(|source| DynamicError::Json {
        kind: std::any::type_name::<Status>(),
        source,
    })?;
    // As `to_json`.
    Ok(with_type(v, u.api_version, k.kind))
}

/// The `metadata.resourceVersion` of an object in `k8s\0` + envelope,
/// read without decoding the object (every kind's `metadata` is field 1,
/// `ObjectMeta.resourceVersion` field 6): what a resumable watch needs
/// from each event. `None` when absent, empty or not a valid encoding.
pub fn resource_version(bytes: &[u8]) -> Option<String> {
    let u = Unknown::parse(bytes).ok()?;
    let mut rv = None;
    wire::fields(u.raw, &mut |n, v| {
        if n == 1 {
            wire::fields(wire::raw(v)?, &mut |n, v| {
                if n == 6 {
                    rv = Some(wire::string(v)?);
                }
                Ok(())
            })?;
        }
        Ok(())
    })
    .ok()?;
    rv.filter(|rv| !rv.is_empty())
}

/// The `metadata` of an object in `k8s\0` + envelope, decoded alone (a
/// BOOKMARK's object carries nothing else; a report on an object that did
/// not decode names it).
pub fn object_meta(bytes: &[u8]) -> Result<ObjectMeta, DecodeError> {
    let u = Unknown::parse(bytes)?;
    let mut meta = ObjectMeta::default();
    let mut budget = Budget::for_body(u.raw.len());
    wire::fields(u.raw, &mut |n, v| {
        if n == 1 {
            wire::merge(&mut meta, v, &mut budget)?;
        }
        Ok(())
    })?;
    Ok(meta)
}

/// The codec of a model type `K`, found by its `TypeId` (so that code
/// generic over any `K`, custom resources included, can use protobuf for
/// the built-in kinds without a trait bound).
#[derive(Debug, Clone, Copy)]
pub struct Typed<K> {
    kind: &'static Kind,
    _k: std::marker::PhantomData<fn() -> K>,
}

/// The codec of `K`, if `K` is a built-in model with one.
pub fn typed<K: 'static>() -> Option<Typed<K>> {
    static BY_TYPE: OnceLock<HashMap<TypeId, usize>> = OnceLock::new();
    let table = super::generated::kinds::KINDS;
    let map = BY_TYPE.get_or_init(|| {
        table
            .iter()
            .enumerate()
            .map(|(i, k)| ((k.type_id)(), i))
            .collect()
    });
    map.get(&TypeId::of::<K>()).map(|&i| Typed {
        kind: &table[i],
        _k: std::marker::PhantomData,
    })
}

impl<K: 'static> Typed<K> {
    /// The kind's table entry.
    pub fn kind(&self) -> &'static Kind {
        self.kind
    }

    fn item(&self, raw: &[u8], budget: &mut Budget) -> Result<K, DecodeError> {
        let mut out: Option<K> = None;
        (self.kind.decode_any)(raw, budget, &mut out)?;
        // The table maps `TypeId::of::<K>()` to this entry.
        out.ok_or_else(|| DecodeError::WrongKind {
            api_version: self.kind.api_version.to_owned(),
            kind: self.kind.kind.to_owned(),
            want_api_version: String::new(),
            want_kind: std::any::type_name::<K>().to_owned(),
        })
    }

    /// One object from `k8s\0` + envelope, its memory bounded by the
    /// body's length ([`Budget`]).
    pub fn decode(&self, bytes: &[u8]) -> Result<K, DecodeError> {
        let u = Unknown::parse(bytes)?;
        u.check(self.kind.api_version, self.kind.kind)?;
        self.item(u.raw, &mut Budget::for_body(bytes.len()))
    }

    /// A `<Kind>List` from `k8s\0` + envelope, items decoded as `K`; the
    /// items and what they hold are charged to one [`Budget`] of the
    /// body's length, so a list of many tiny items is refused before it is
    /// allocated, naming the kind, the item count and the body's size.
    pub fn decode_list(&self, bytes: &[u8]) -> Result<List<K>, DecodeError> {
        let (metadata, items) =
            self.list_with(bytes, size_of::<K>(), |raw, budget| self.item(raw, budget))?;
        Ok(List { metadata, items })
    }

    /// A `<Kind>List` from `k8s\0` + envelope, its items left undecoded:
    /// each is wrapped as an object of its own (`k8s\0` + an envelope naming
    /// the kind), as a watch event carries one, for [`Typed::decode`] or
    /// [`object_meta`] when it is taken. Each item's copy is charged to the
    /// body's [`Budget`], as [`Typed::decode_list`]'s items are.
    pub fn list_objects(&self, bytes: &[u8]) -> Result<(ListMeta, Vec<Vec<u8>>), DecodeError> {
        let (api_version, kind) = (self.kind.api_version, self.kind.kind);
        self.list_with(bytes, size_of::<Vec<u8>>(), |raw, budget| {
            let len = super::envelope_len(api_version, kind, raw.len());
            budget.charge_bytes(len, 0, || kind.to_owned())?;
            Ok(self.wrap(raw))
        })
    }

    /// A `<Kind>List`'s metadata and its items, each item's message bytes
    /// read by `item`. The items are counted first: their slots
    /// (`item_size` each) are charged at once, and allocated exactly.
    fn list_with<T>(
        &self,
        bytes: &[u8],
        item_size: usize,
        mut item: impl FnMut(&[u8], &mut Budget) -> Result<T, DecodeError>,
    ) -> Result<(ListMeta, Vec<T>), DecodeError> {
        let u = Unknown::parse(bytes)?;
        let list_kind = format!("{}List", self.kind.kind);
        u.check(self.kind.api_version, &list_kind)?;
        let mut count = 0usize;
        wire::fields(u.raw, |n, _| {
            count += usize::from(n == 2);
            Ok(())
        })?;
        let mut budget = Budget::for_body(bytes.len());
        budget.charge_bytes(count.saturating_mul(item_size), count, || {
            format!("{count} {list_kind} items")
        })?;
        let mut metadata = ListMeta::default();
        let mut items = Vec::with_capacity(count);
        wire::fields(u.raw, &mut |n, v| {
            match n {
                1 => wire::merge(&mut metadata, v, &mut budget)?,
                2 => items.push(item(wire::raw(v)?, &mut budget)?),
                _ => {}
            }
            Ok(())
        })?;
        Ok((metadata, items))
    }

    /// `raw` (an object's message) with the kind's envelope.
    fn wrap(&self, raw: &[u8]) -> Vec<u8> {
        super::envelope(self.kind.api_version, self.kind.kind, raw)
    }

    /// `obj` with its envelope.
    pub fn encode(&self, obj: &K) -> Vec<u8> {
        let mut raw = Vec::new();
        // Always true: the entry is `K`'s.
        let _ = (self.kind.encode_any)(obj, &mut raw);
        self.wrap(&raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_unique() {
        let t = super::super::generated::kinds::KINDS;
        assert!(
            t.windows(2)
                .all(|w| (w[0].api_version, w[0].kind) < (w[1].api_version, w[1].kind))
        );
        assert!(kind("v1", "Status").is_some());
        assert!(kind("example.com/v1", "Foo").is_none());
    }

    /// The smallest object a real kube-apiserver serves of a kind: a name,
    /// the uid, resourceVersion and creationTimestamp it sets, managed
    /// fields cleared, every other field Go's zero (which Go writes).
    /// `None` for a kind whose field 1 is not `ObjectMeta`.
    #[cfg(feature = "protobuf-json")]
    fn smallest(item: &Kind) -> Option<Vec<u8>> {
        let mut meta = Vec::new();
        wire::put_string(&mut meta, 1, &"a".to_owned());
        wire::put_string(
            &mut meta,
            5,
            &"0d1ba2e4-2b1d-4b7c-9d0e-3c5f6a7b8c9d".to_owned(),
        );
        wire::put_string(&mut meta, 6, &"1".to_owned());
        wire::put_record(&mut meta, 8, |b| wire::put_int64(b, 1, &1_700_000_000));
        let mut raw = Vec::new();
        wire::put_raw(&mut raw, 1, &meta);
        // Through the model and back: Go's zeros of the kind's other fields.
        let json = item.decode(&raw).ok()?;
        let bytes = item.encode(&json).expect("the model's JSON encodes");
        Some(Unknown::parse(&bytes).expect("an envelope").raw.to_vec())
    }

    /// The budget never refuses a list of the smallest real objects of any
    /// kind: the memory charged per byte of such a list (the worst ratio of
    /// any body a real server sends) stays below `MEMORY_PER_BYTE`.
    #[cfg(feature = "protobuf-json")]
    #[test]
    fn the_smallest_real_objects_of_every_kind_fit_the_budget() {
        let table = super::super::generated::kinds::KINDS;
        let (mut worst, mut checked) = ((0.0f64, ""), 0);
        for list in table.iter().filter(|k| k.kind.ends_with("List")) {
            let Some(item) = kind(list.api_version, &list.kind[..list.kind.len() - 4]) else {
                continue;
            };
            let Some(one) = smallest(item) else {
                continue;
            };
            checked += 1;
            let mut raw = vec![0x0a, 0x00];
            for _ in 0..1000 {
                wire::put_raw(&mut raw, 2, &one);
            }
            let bytes = super::super::envelope(list.api_version, list.kind, &raw);
            let mut budget = Budget::for_body(usize::MAX / 64);
            (list.decode)(&raw, &mut budget).expect("decodes");
            let ratio = budget.spent() as f64 / bytes.len() as f64;
            if ratio > worst.0 {
                worst = (ratio, list.kind);
            }
            assert!(
                to_json(&bytes).is_ok(),
                "{}: {} bytes per item refused",
                list.kind,
                one.len()
            );
        }
        eprintln!(
            "{checked} kinds; worst charge per body byte: {:.2} ({})",
            worst.0, worst.1
        );
        assert!(checked > 20, "only {checked} kinds checked");
        assert!(worst.0 < super::super::MEMORY_PER_BYTE as f64);
    }

    #[cfg(all(feature = "core-v1", feature = "protobuf-json"))]
    #[test]
    fn json_round_trips_by_kind() {
        let cm = serde_json::json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "x", "namespace": "default"},
            "data": {"a": "b"},
        });
        let bytes = from_json(&cm).unwrap().expect("ConfigMap has a codec");
        assert!(bytes.starts_with(super::super::MAGIC));
        assert_eq!(to_json(&bytes).unwrap(), cm);
        let crd = serde_json::json!({"apiVersion": "example.com/v1", "kind": "Foo"});
        assert!(from_json(&crd).unwrap().is_none());
        assert!(matches!(to_json(b"{}"), Err(DynamicError::Decode { .. })));
    }

    /// `status_json` answers what `to_json` answers for a `Status`, the
    /// apiVersion as sent included.
    #[cfg(feature = "protobuf-json")]
    #[test]
    fn status_json_is_to_json_of_a_status() {
        use crate::apimachinery::pkg::apis::meta::v1::StatusDetails;
        let status = Status {
            code: Some(409),
            message: Some("conflict".into()),
            reason: Some("AlreadyExists".into()),
            status: Some("Failure".into()),
            details: Some(StatusDetails {
                name: Some("x".into()),
                ..StatusDetails::default()
            }),
            ..Status::default()
        };
        for api_version in ["v1", "meta.k8s.io/v1"] {
            let bytes = super::super::encode_with_type(&status, api_version, "Status");
            let json = status_json(&bytes).ok();
            assert_eq!(json, to_json(&bytes).ok(), "{api_version}");
        }
        let bytes = super::super::encode_with_type(&status, "v1", "Status");
        let json = status_json(&bytes).unwrap();
        assert_eq!(json["apiVersion"], "v1");
        assert_eq!(json["details"]["name"], "x");
    }

    #[cfg(feature = "core-v1")]
    #[test]
    fn status_json_is_only_for_a_status() {
        use crate::api::core::v1::ConfigMap;
        let bytes = super::super::encode_object(&ConfigMap::default());
        assert!(matches!(
            status_json(&bytes),
            Err(DynamicError::UnknownKind { kind, .. }) if kind == "ConfigMap"
        ));
        assert!(matches!(
            status_json(b"{}"),
            Err(DynamicError::Decode { .. })
        ));
        let status = Status {
            code: Some(404),
            ..Status::default()
        };
        let json = status_json(&super::super::encode_with_type(&status, "v1", "Status"));
        assert_eq!(json.unwrap()["code"], 404);
    }

    /// JSON text is encoded as the parsed object is, enveloped or bare;
    /// text that is not the model's is an error naming the kind.
    #[cfg(all(feature = "core-v1", feature = "protobuf-json"))]
    #[test]
    fn json_text_encodes_as_the_parsed_object() {
        let cm = kind("v1", "ConfigMap").expect("a codec");
        let obj = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "labels": {"k": "\u{e9}\"\n"}},
            "data": {"x": "1"}, "binaryData": {"b": "AAE="}});
        let text = obj.to_string();
        let enveloped = cm.encode_json(text.as_bytes()).unwrap();
        assert_eq!(enveloped, cm.encode(&obj).unwrap());
        assert_eq!(from_json(&obj).unwrap().unwrap(), enveloped);
        let u = Unknown::parse(&enveloped).unwrap();
        assert_eq!(
            (u.api_version.as_str(), u.kind.as_str()),
            ("v1", "ConfigMap")
        );
        assert_eq!(cm.message_from_json(text.as_bytes()).unwrap(), u.raw);
        assert_eq!(to_json(&enveloped).unwrap(), obj);
        let e = cm.encode_json(br#"{"data": {"x": 1}}"#).unwrap_err();
        assert!(matches!(e, DynamicError::Json { .. }), "{e}");
        assert!(cm.message_from_json(b"{").is_err());
    }

    #[cfg(feature = "core-v1")]
    #[test]
    fn typed_by_type_id() {
        use crate::api::core::v1::ConfigMap;
        let t = typed::<ConfigMap>().expect("ConfigMap has a codec");
        assert!(typed::<String>().is_none());
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("x".into());
        let bytes = t.encode(&cm);
        assert_eq!(bytes, super::super::encode_object(&cm));
        assert_eq!(t.decode(&bytes).unwrap(), cm);
        let list = List {
            metadata: ListMeta::default(),
            items: vec![cm.clone(), cm],
        };
        let bytes = super::super::encode_with_type(&list, "v1", "ConfigMapList");
        assert_eq!(t.decode_list(&bytes).unwrap(), list);
        assert!(t.decode(&bytes).is_err(), "a list is not a ConfigMap");
    }

    #[test]
    fn list_items_kept_as_objects() {
        use crate::api::core::v1::ConfigMap;
        let t = typed::<ConfigMap>().expect("ConfigMap has a codec");
        let items: Vec<ConfigMap> = ["a", "b", "c"]
            .iter()
            .map(|name| {
                let mut cm = ConfigMap::default();
                cm.metadata.name = Some((*name).into());
                cm.metadata.resource_version = Some(format!("{name}1"));
                cm
            })
            .collect();
        let list = List {
            metadata: ListMeta {
                continue_: Some("next".into()),
                resource_version: Some("42".into()),
                ..ListMeta::default()
            },
            items: items.clone(),
        };
        let bytes = super::super::encode_with_type(&list, "v1", "ConfigMapList");
        let (meta, objects) = t.list_objects(&bytes).unwrap();
        assert_eq!(meta, list.metadata);
        assert_eq!(objects.len(), 3);
        for (object, item) in objects.iter().zip(&items) {
            // Each is what a watch event would carry: the object's own
            // envelope, decoded only when taken.
            assert_eq!(object, &t.encode(item));
            assert_eq!(&t.decode(object).unwrap(), item);
            assert_eq!(resource_version(object), item.metadata.resource_version);
        }
        assert!(
            t.list_objects(&t.encode(&items[0])).is_err(),
            "one object is not a list"
        );
        assert!(
            t.list_objects(&bytes[..bytes.len() - 1]).is_err(),
            "cut short"
        );
    }

    #[cfg(feature = "core-v1")]
    #[test]
    fn resource_version_without_decoding() {
        use crate::api::core::v1::ConfigMap;
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("x".into());
        assert_eq!(resource_version(&super::super::encode_object(&cm)), None);
        cm.metadata.resource_version = Some("42".into());
        cm.data = Some([("k".to_owned(), "v".to_owned())].into());
        let bytes = super::super::encode_object(&cm);
        assert_eq!(resource_version(&bytes).as_deref(), Some("42"));
        assert_eq!(resource_version(&bytes[..bytes.len() - 3]), None);
        assert_eq!(object_meta(&bytes).unwrap(), cm.metadata);
        assert_eq!(resource_version(b"{}"), None);
    }
}
