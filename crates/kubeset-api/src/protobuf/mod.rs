//! Protobuf on the wire (cargo feature `protobuf`): the encoding
//! kube-apiserver speaks as `application/vnd.kubernetes.protobuf` for
//! built-in kinds, as client-go reads and writes it.
//!
//! Every built-in model implements [`Message`] (generated per struct from
//! the upstream `generated.proto` field numbers by `cargo xtask codegen`;
//! the hand-written types have theirs in this module). [`encode_object`]
//! and [`decode_object`] add and check the envelope: the magic `k8s\0`
//! followed by a `runtime.Unknown` holding `apiVersion`, `kind` and the
//! object's bytes.
//!
//! ```
//! # #[cfg(feature = "core-v1")] {
//! use kubeset_api::api::core::v1::ConfigMap;
//! use kubeset_api::protobuf;
//!
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("x".into());
//! let bytes = protobuf::encode_object(&cm);
//! assert!(bytes.starts_with(b"k8s\0"));
//! let back: ConfigMap = protobuf::decode_object(&bytes).unwrap();
//! assert_eq!(back, cm);
//! # }
//! ```
//!
//! Special encodings, exactly as Go's: `Time` is `{seconds, nanos}` with
//! whole seconds (nanoseconds dropped both ways), `MicroTime` keeps them;
//! an empty time message is Go's zero time and reads as `None`;
//! `Quantity` is its string; `IntOrString` `{type, intVal, strVal}`;
//! `RawExtension`, `FieldsV1` and `JSON` carry their JSON text as bytes
//! (`FieldsV1`'s is checked to be JSON when it is written as JSON);
//! maps are repeated `{key, value}` entries; proto2 presence maps to
//! `Option` (a field present on the wire is `Some`, even when zero).
//!
//! Hostile bodies: every decode's allocations beyond copies of the body's
//! own bytes are charged to a [`wire::Budget`] of [`MEMORY_PER_BYTE`] per
//! byte of the body plus [`MEMORY_FLOOR`], so memory stays proportional to
//! the input however it is shaped: a `PodList` of a million empty items
//! (2 MB) is refused before anything is allocated, naming the kind, the
//! item count and the body's size ([`DecodeError::MemoryLimit`]). The
//! factor leaves room for what real servers send: the smallest object of
//! every kind (a name, a uid, a resourceVersion and a creation time, Go's
//! zeros for the rest) is charged at most about 53 bytes per byte (a
//! PersistentVolume: 64 bytes on the wire, a struct of 3.4 kB since the
//! models hold their optional structs inline, as k8s-openapi's), real CRDs
//! take 5 to 24 times their bytes. The owned models cost their `size_of`
//! however little they hold: a list of tiny ConfigMaps (82 bytes each on
//! the wire) takes about 6 times its body. Nesting is bounded by
//! [`MAX_DEPTH`]; an envelope without its object, or the magic alone, is an
//! error, never an empty answer.

// Formatted by the generator (prettyplease), not rustfmt.
#[rustfmt::skip]
mod generated;
pub mod dynamic;
pub(crate) mod field;
mod types;
pub mod wire;

use crate::Resource;

/// Deepest nesting of messages a decode accepts. Go's gogo-protobuf
/// decoder has no limit (kube-apiserver serves any schema its JSON reader,
/// limited to 10,000 levels, accepted); this one recurses, so the bound is
/// the stack: a CRD's schema level is two messages (the `properties` entry
/// and the schema), about 5.4 KiB of stack in a release build, so 256 (126
/// schema levels under a CRD list) take about 700 KiB, within a tokio
/// worker's 2 MiB. A debug build's frames are about ten times larger.
pub const MAX_DEPTH: u32 = 256;

/// Memory a decode may take per byte of its body (beyond copies of the
/// body's own strings and bytes), as charged by [`wire::Budget`]: enough
/// for the smallest object a real kube-apiserver sends of every kind,
/// refusing a list of empty items that would take gigabytes. The smallest
/// real PersistentVolume is charged about 53 per byte (its struct is
/// 3.4 kB, unboxed as k8s-openapi's): 64 leaves a margin.
pub const MEMORY_PER_BYTE: usize = 64;

/// Memory a decode may take whatever the body's size: a small object with
/// a few list elements, or a CRD whose schema nests deep and narrow (each
/// level a map of one entry, about 1.7 KiB charged for 40 bytes).
pub const MEMORY_FLOOR: usize = 1 << 20;

/// The magic prefix of a protobuf-encoded Kubernetes object.
pub const MAGIC: &[u8; 4] = b"k8s\0";

/// The media type of the encoding.
pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// Bytes that are not a valid encoding of the expected message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The input ends inside a field.
    #[error("truncated protobuf input")]
    Truncated,
    /// A varint longer than ten bytes.
    #[error("varint longer than 64 bits")]
    VarintTooLong,
    /// Field number 0 or above 2³².
    #[error("invalid field number")]
    FieldNumber,
    /// Wire types 3 and 4 (groups) or 6 and 7.
    #[error("unsupported wire type {wire}")]
    UnknownWireType {
        /// The wire type.
        wire: u8,
    },
    /// A field of the wrong wire type.
    #[error("expected a {want} field, found {got}")]
    WireType {
        /// What the schema says.
        want: &'static str,
        /// What the input has.
        got: &'static str,
    },
    /// A `string` that is not UTF-8.
    #[error("string field is not UTF-8")]
    Utf8,
    /// Messages nested deeper than [`MAX_DEPTH`].
    #[error("messages nested deeper than {limit}")]
    TooDeep {
        /// The limit.
        limit: u32,
    },
    /// A time outside years 1–9999 or with bad nanoseconds.
    #[error("time {secs}s {nanos}ns out of range")]
    TimeOutOfRange {
        /// Seconds since the epoch.
        secs: i64,
        /// Nanoseconds.
        nanos: i32,
    },
    /// `RawExtension` or `JSON` bytes that are not JSON (a `FieldsV1`'s
    /// are checked when it is written as JSON, as Go does).
    #[error("embedded {what} is not JSON: {reason}")]
    EmbeddedJson {
        /// Which type.
        what: &'static str,
        /// The parser's message.
        reason: String,
    },
    /// `IntOrString.type` other than 0 (int) or 1 (string).
    #[error("IntOrString type {value} is neither 0 nor 1")]
    IntOrStringType {
        /// The value.
        value: i64,
    },
    /// Decoding would take more memory than the body's size allows
    /// ([`MEMORY_PER_BYTE`]): more values than bytes can describe.
    #[error(
        "decoding {what} from a body of {body} bytes would take more than {limit} bytes of memory ({items} values so far): no real object is that small"
    )]
    MemoryLimit {
        /// What was being allocated when the limit was reached: a type, or
        /// a list's items (`1000000 PodList items`).
        what: String,
        /// How many values were charged, the last included (a list's item
        /// count, for its items).
        items: usize,
        /// The body's size.
        body: usize,
        /// The limit for that body.
        limit: usize,
    },
    /// The body is the `k8s\0` magic alone.
    #[error("empty protobuf body: nothing after the k8s\\0 magic")]
    Empty,
    /// The envelope has no `raw` field (the object's bytes): Go writes it
    /// for every object, so its absence is not an empty object.
    #[error("protobuf envelope {api_version:?}/{kind:?} has no object (no raw field)")]
    NoRaw {
        /// The envelope's apiVersion (may be empty).
        api_version: String,
        /// The envelope's kind (may be empty).
        kind: String,
    },
    /// The envelope's `contentType` names another encoding than protobuf.
    #[error("unsupported content type {content_type:?} in a protobuf envelope")]
    ContentType {
        /// The value.
        content_type: String,
    },
    /// The input lacks the `k8s\0` magic.
    #[error("not a protobuf-encoded Kubernetes object (no k8s\\0 prefix)")]
    NoMagic,
    /// The envelope names another kind than the one asked for.
    #[error("envelope holds {api_version}/{kind}, expected {want_api_version}/{want_kind}")]
    WrongKind {
        /// The envelope's apiVersion.
        api_version: String,
        /// The envelope's kind.
        kind: String,
        /// The expected apiVersion.
        want_api_version: String,
        /// The expected kind.
        want_kind: String,
    },
    /// The envelope's `contentEncoding` is set (none is defined).
    #[error("unsupported content encoding {encoding:?}")]
    ContentEncoding {
        /// The value.
        encoding: String,
    },
}

/// A type with a protobuf codec. Generated for every built-in model;
/// object safe, so the shared helpers of [`wire`] are not generic.
pub trait Message {
    /// Appends the message's fields (without a length prefix).
    fn encode_fields(&self, buf: &mut Vec<u8>);
    /// Merges one field read from the wire; unknown numbers are skipped.
    fn merge_field(
        &mut self,
        number: u32,
        value: wire::Value<'_>,
        budget: &mut wire::Budget,
    ) -> Result<(), DecodeError>;
}

/// The message's bytes (no envelope).
pub fn encode<M: Message + ?Sized>(m: &M) -> Vec<u8> {
    let mut buf = Vec::new();
    m.encode_fields(&mut buf);
    buf
}

/// A message from its bytes (no envelope), its memory bounded by their
/// length ([`wire::Budget::for_body`]).
pub fn decode<M: Message + Default>(bytes: &[u8]) -> Result<M, DecodeError> {
    decode_with(bytes, &mut wire::Budget::for_body(bytes.len()))
}

/// A message from its bytes, charging `budget`.
pub(crate) fn decode_with<M: Message + Default>(
    bytes: &[u8],
    budget: &mut wire::Budget,
) -> Result<M, DecodeError> {
    let mut m = M::default();
    merge_bytes(bytes, budget, &mut &mut m)?;
    Ok(m)
}

/// Merges a message's bytes field by field: one loop for every type
/// (generic, it was compiled again with each kind's `merge_field`
/// inlined into it); [`wire::MergeRef`], not `&mut dyn Message`, whose
/// vtable would name the message's drop glue.
#[inline(never)]
pub(crate) fn merge_bytes(
    bytes: &[u8],
    budget: &mut wire::Budget,
    m: &mut dyn wire::MergeRef,
) -> Result<(), DecodeError> {
    wire::fields(bytes, |n, v| m.merge_one(n, v, budget))
}

/// `runtime.Unknown`: the envelope of a protobuf-encoded object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unknown<'a> {
    /// `typeMeta.apiVersion`.
    pub api_version: String,
    /// `typeMeta.kind`.
    pub kind: String,
    /// The object's message bytes.
    pub raw: &'a [u8],
    /// `contentEncoding` (empty).
    pub content_encoding: String,
    /// `contentType` (empty: protobuf).
    pub content_type: String,
}

impl<'a> Unknown<'a> {
    /// Reads `k8s\0` + `runtime.Unknown`. An envelope must hold the object
    /// (`raw`, which Go always writes) and, when it says, protobuf as its
    /// content type: `k8s\0` alone, or an envelope without its object, is
    /// an error, not an empty object.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let body = bytes.strip_prefix(MAGIC).ok_or(DecodeError::NoMagic)?;
        if body.is_empty() {
            return Err(DecodeError::Empty);
        }
        let mut u = Unknown::default();
        let mut raw = None;
        wire::fields(body, &mut |n, v| {
            match n {
                1 => wire::fields(wire::raw(v)?, &mut |n, v| {
                    match n {
                        1 => u.api_version = wire::string(v)?,
                        2 => u.kind = wire::string(v)?,
                        _ => {}
                    }
                    Ok(())
                })?,
                2 => raw = Some(wire::raw(v)?),
                3 => u.content_encoding = wire::string(v)?,
                4 => u.content_type = wire::string(v)?,
                _ => {}
            }
            Ok(())
        })?;
        let Some(raw) = raw else {
            return Err(DecodeError::NoRaw {
                api_version: u.api_version,
                kind: u.kind,
            });
        };
        u.raw = raw;
        Ok(u)
    }

    /// Checks that the envelope holds plain protobuf of
    /// `api_version`/`kind`. An empty `TypeMeta` is accepted, as Go's
    /// decoder does when the target type is known.
    pub(crate) fn check(&self, api_version: &str, kind: &str) -> Result<(), DecodeError> {
        if !self.content_encoding.is_empty() {
            return Err(DecodeError::ContentEncoding {
                encoding: self.content_encoding.clone(),
            });
        }
        if !self.content_type.is_empty() && self.content_type != CONTENT_TYPE {
            return Err(DecodeError::ContentType {
                content_type: self.content_type.clone(),
            });
        }
        let typed = !self.api_version.is_empty() || !self.kind.is_empty();
        if typed && (self.api_version != api_version || self.kind != kind) {
            return Err(DecodeError::WrongKind {
                api_version: self.api_version.clone(),
                kind: self.kind.clone(),
                want_api_version: api_version.to_owned(),
                want_kind: kind.to_owned(),
            });
        }
        Ok(())
    }

    /// Writes `k8s\0` + the envelope, as Go writes it (every field).
    pub fn write(&self, buf: &mut Vec<u8>) {
        write_envelope(
            buf,
            [&self.api_version, &self.kind],
            self.raw,
            [&self.content_encoding, &self.content_type],
        );
    }
}

/// `k8s\0` + `runtime.Unknown` of `raw` typed `[apiVersion, kind]`, with
/// `[contentEncoding, contentType]`: every field, as Go writes them.
fn write_envelope(buf: &mut Vec<u8>, type_meta: [&str; 2], raw: &[u8], content: [&str; 2]) {
    buf.extend_from_slice(MAGIC);
    wire::put_record(buf, 1, |buf| {
        wire::put_raw(buf, 1, type_meta[0].as_bytes());
        wire::put_raw(buf, 2, type_meta[1].as_bytes());
    });
    wire::put_raw(buf, 2, raw);
    wire::put_raw(buf, 3, content[0].as_bytes());
    wire::put_raw(buf, 4, content[1].as_bytes());
}

/// `raw` (an object's message) in the envelope of `api_version`/`kind`,
/// content encoding and type empty (protobuf, as kube-apiserver writes).
pub(crate) fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut buf = Vec::with_capacity(envelope_len(api_version, kind, raw.len()));
    write_envelope(&mut buf, [api_version, kind], raw, ["", ""]);
    buf
}

/// At least the length of [`envelope`]'s bytes: the magic, four keys, five
/// length varints (a short one for the small fields, ten bytes for `raw`'s)
/// and the contents.
pub(crate) fn envelope_len(api_version: &str, kind: &str, raw: usize) -> usize {
    MAGIC.len() + 4 + 3 * 2 + 10 + 3 + api_version.len() + kind.len() + raw
}

/// Encodes any message in the envelope with the given type.
pub fn encode_with_type(m: &dyn Message, api_version: &str, kind: &str) -> Vec<u8> {
    envelope(api_version, kind, &encode(m))
}

/// Encodes an object with its envelope (`k8s\0` + `runtime.Unknown`).
pub fn encode_object<K: Resource + Message>(obj: &K) -> Vec<u8> {
    encode_with_type(obj, K::API_VERSION, K::KIND)
}

/// Decodes an object from its envelope, checking its kind.
pub fn decode_object<K: Resource + Message + Default>(bytes: &[u8]) -> Result<K, DecodeError> {
    decode_typed(bytes, K::API_VERSION, K::KIND)
}

/// Decodes any message from an envelope naming `api_version`/`kind`.
pub fn decode_typed<M: Message + Default>(
    bytes: &[u8],
    api_version: &str,
    kind: &str,
) -> Result<M, DecodeError> {
    let u = Unknown::parse(bytes)?;
    u.check(api_version, kind)?;
    decode(u.raw)
}
