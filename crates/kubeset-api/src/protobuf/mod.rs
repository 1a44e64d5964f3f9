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

// Formatted by the generator (prettyplease), not rustfmt.
#[rustfmt::skip]
mod generated;
pub mod dynamic;
mod types;
pub mod wire;

use crate::Resource;

/// Deepest nesting of messages a decode accepts (protobuf's default
/// recursion limit).
pub const MAX_DEPTH: u32 = 100;

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
        depth: u32,
    ) -> Result<(), DecodeError>;
}

/// The message's bytes (no envelope).
pub fn encode<M: Message + ?Sized>(m: &M) -> Vec<u8> {
    let mut buf = Vec::new();
    m.encode_fields(&mut buf);
    buf
}

/// A message from its bytes (no envelope).
pub fn decode<M: Message + Default>(bytes: &[u8]) -> Result<M, DecodeError> {
    let mut m = M::default();
    merge_bytes(&mut m, bytes, 0)?;
    Ok(m)
}

fn merge_bytes(m: &mut dyn Message, bytes: &[u8], depth: u32) -> Result<(), DecodeError> {
    wire::fields(bytes, &mut |n, v| m.merge_field(n, v, depth))
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
    /// Reads `k8s\0` + `runtime.Unknown`.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let body = bytes.strip_prefix(MAGIC).ok_or(DecodeError::NoMagic)?;
        let mut u = Unknown::default();
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
                2 => u.raw = wire::raw(v)?,
                3 => u.content_encoding = wire::string(v)?,
                4 => u.content_type = wire::string(v)?,
                _ => {}
            }
            Ok(())
        })?;
        Ok(u)
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
    let mut buf = Vec::with_capacity(raw.len() + 64);
    write_envelope(&mut buf, [api_version, kind], raw, ["", ""]);
    buf
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
    if !u.content_encoding.is_empty() {
        return Err(DecodeError::ContentEncoding {
            encoding: u.content_encoding,
        });
    }
    // Go's decoder accepts an empty TypeMeta when the target is known.
    let typed = !u.api_version.is_empty() || !u.kind.is_empty();
    if typed && (u.api_version != api_version || u.kind != kind) {
        return Err(DecodeError::WrongKind {
            api_version: u.api_version,
            kind: u.kind,
            want_api_version: api_version.to_owned(),
            want_kind: kind.to_owned(),
        });
    }
    decode(u.raw)
}
