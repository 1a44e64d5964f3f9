//! Wire primitives of proto2 as Kubernetes' gogo-protobuf writes them,
//! hand-written (about as long as the glue a crate would need): varints,
//! length-delimited records, and the typed helpers the generated codecs
//! call. Writers append to a `Vec<u8>`; readers take one field's
//! [`Value`] and check its wire type.

use std::collections::BTreeMap;

use super::{DecodeError, MAX_DEPTH, MEMORY_FLOOR, MEMORY_PER_BYTE, Message};
use crate::types::{ByteString, MicroTime, Time};

/// One field's value as read from the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1.
    Fixed64(u64),
    /// Wire type 2: the record's bytes.
    Len(&'a [u8]),
    /// Wire type 5.
    Fixed32(u32),
}

impl Value<'_> {
    fn wire_name(&self) -> &'static str {
        match self {
            Self::Varint(_) => "varint",
            Self::Fixed64(_) => "fixed64",
            Self::Len(_) => "length-delimited",
            Self::Fixed32(_) => "fixed32",
        }
    }
}

fn wrong(value: &Value<'_>, want: &'static str) -> DecodeError {
    DecodeError::WireType {
        want,
        got: value.wire_name(),
    }
}

/// What one decode may still take: the nesting depth it is at (at most
/// [`MAX_DEPTH`]) and the memory its input allows.
///
/// Every allocation a decode makes beyond the copies of the input's bytes
/// (strings, bytes) is charged here first: an element pushed on a list
/// (its `size_of`), a map entry (twice its `size_of`, for the tree's
/// nodes), a boxed message, an embedded JSON value. The limit is
/// [`MEMORY_PER_BYTE`] per byte of the body plus [`MEMORY_FLOOR`], so that
/// memory stays proportional to the input however it is shaped (a list of
/// ten million empty items is 20 MB of body and would be gigabytes of
/// models).
///
/// ```
/// use kubeset_api::protobuf::wire::Budget;
/// let mut b = Budget::for_body(100);
/// assert!(b.charge::<u64>(1).is_ok());
/// assert!(b.charge::<[u8; 1 << 20]>(1).is_err());
/// ```
#[derive(Debug, Clone)]
pub struct Budget {
    depth: u32,
    left: usize,
    limit: usize,
    body: usize,
    elements: usize,
}

impl Budget {
    /// The budget of decoding a body of `len` bytes.
    pub fn for_body(len: usize) -> Self {
        let limit = len
            .saturating_mul(MEMORY_PER_BYTE)
            .saturating_add(MEMORY_FLOOR);
        Self {
            depth: 0,
            left: limit,
            limit,
            body: len,
            elements: 0,
        }
    }

    /// The bytes charged so far.
    pub fn spent(&self) -> usize {
        self.limit - self.left
    }

    /// The nesting depth of the message being read (0 at the top).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Charges `n` values of `T` (`n × size_of::<T>()` bytes); the error
    /// names `T`, the values charged so far and the body's size.
    ///
    /// Only the size and the name are generic: the charge itself is one
    /// function for every `T` (it is called for every list element and map
    /// entry of every type).
    #[inline]
    pub fn charge<T>(&mut self, n: usize) -> Result<(), DecodeError> {
        self.charge_named(size_of::<T>(), n, std::any::type_name::<T>())
    }

    /// Charges `n` values of `size` bytes, of the type named `full`.
    #[inline(never)]
    fn charge_named(
        &mut self,
        size: usize,
        n: usize,
        full: &'static str,
    ) -> Result<(), DecodeError> {
        self.charge_bytes(n.saturating_mul(size), n, || short_name(full))
    }

    /// Charges `bytes` for `n` values named by `what` (called only for the
    /// error).
    pub(crate) fn charge_bytes(
        &mut self,
        bytes: usize,
        n: usize,
        what: impl FnOnce() -> String,
    ) -> Result<(), DecodeError> {
        self.elements = self.elements.saturating_add(n);
        match self.left.checked_sub(bytes) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(DecodeError::MemoryLimit {
                what: what(),
                items: self.elements,
                body: self.body,
                limit: self.limit,
            }),
        }
    }

    /// One message deeper; nesting beyond [`MAX_DEPTH`] is an error.
    fn enter(&mut self) -> Result<(), DecodeError> {
        if self.depth >= MAX_DEPTH {
            return Err(DecodeError::TooDeep { limit: MAX_DEPTH });
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// `read` one message deeper.
    fn nested<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<T, DecodeError> {
        self.enter()?;
        let out = read(self);
        self.leave();
        out
    }
}

/// A type's name without module paths (`Container`, `Vec<u8>`,
/// `(String, JSONSchemaProps)`).
fn short_name(full: &str) -> String {
    let mut out = String::with_capacity(full.len());
    for part in full.split_inclusive(['<', '>', '(', ')', ',', ' ']) {
        let (name, sep) =
            part.split_at(part.trim_end_matches(['<', '>', '(', ')', ',', ' ']).len());
        out.push_str(name.rsplit("::").next().unwrap_or(name));
        out.push_str(sep);
    }
    out
}

// ---- writing ----

/// Appends `v` as a base-128 varint.
pub fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

fn put_key(buf: &mut Vec<u8>, number: u32, wire: u8) {
    put_varint(buf, (u64::from(number) << 3) | u64::from(wire));
}

/// Field `number` as a length-delimited record whose content `write`
/// appends; the length is back-patched (one byte reserved, moved when the
/// content is 128 bytes or more).
pub fn put_record(buf: &mut Vec<u8>, number: u32, write: impl FnOnce(&mut Vec<u8>)) {
    put_key(buf, number, 2);
    let at = buf.len();
    buf.push(0);
    write(buf);
    let len = buf.len() - at - 1;
    if len < 0x80 {
        buf[at] = len as u8;
        return;
    }
    let mut prefix = Vec::with_capacity(10);
    put_varint(&mut prefix, len as u64);
    let extra = prefix.len() - 1;
    buf.resize(buf.len() + extra, 0);
    buf.copy_within(at + 1..at + 1 + len, at + 1 + extra);
    buf[at..at + prefix.len()].copy_from_slice(&prefix);
}

/// `string` field.
pub fn put_string(buf: &mut Vec<u8>, number: u32, v: &String) {
    put_key(buf, number, 2);
    put_varint(buf, v.len() as u64);
    buf.extend_from_slice(v.as_bytes());
}

/// `bytes` field.
pub fn put_bytes(buf: &mut Vec<u8>, number: u32, v: &ByteString) {
    put_raw(buf, number, &v.0);
}

/// `bytes` field from a slice.
pub fn put_raw(buf: &mut Vec<u8>, number: u32, v: &[u8]) {
    put_key(buf, number, 2);
    put_varint(buf, v.len() as u64);
    buf.extend_from_slice(v);
}

/// `bool` field.
pub fn put_bool(buf: &mut Vec<u8>, number: u32, v: &bool) {
    put_key(buf, number, 0);
    buf.push(u8::from(*v));
}

/// `int32` field (negative values take ten bytes, sign-extended, as in Go).
pub fn put_int32(buf: &mut Vec<u8>, number: u32, v: &i32) {
    put_key(buf, number, 0);
    put_varint(buf, i64::from(*v) as u64);
}

/// `int64` field.
pub fn put_int64(buf: &mut Vec<u8>, number: u32, v: &i64) {
    put_key(buf, number, 0);
    put_varint(buf, *v as u64);
}

/// `double` field.
pub fn put_double(buf: &mut Vec<u8>, number: u32, v: &f64) {
    put_key(buf, number, 1);
    buf.extend_from_slice(&v.to_bits().to_le_bytes());
}

/// A message field.
pub fn put_message(buf: &mut Vec<u8>, number: u32, v: &dyn Message) {
    put_record(buf, number, |buf| v.encode_fields(buf));
}

/// A Go embedded struct: a message field written by `write`.
pub fn put_embedded(buf: &mut Vec<u8>, number: u32, write: impl FnOnce(&mut Vec<u8>)) {
    put_record(buf, number, write);
}

/// `metav1.Time`: `{ seconds = 1; nanos = 2 }` with the nanoseconds
/// dropped, as Go writes it (its JSON holds whole seconds).
pub fn put_time(buf: &mut Vec<u8>, number: u32, v: &Time) {
    put_record(buf, number, |buf| {
        put_int64(buf, 1, &v.unix_seconds());
        put_int32(buf, 2, &0);
    });
}

/// `metav1.MicroTime`: `{ seconds = 1; nanos = 2 }`.
pub fn put_micro_time(buf: &mut Vec<u8>, number: u32, v: &MicroTime) {
    put_record(buf, number, |buf| {
        put_int64(buf, 1, &v.unix_seconds());
        put_int32(buf, 2, &(v.subsec_nanos() as i32));
    });
}

/// A list wrapped in a message `{ repeated T items = 1; }`.
pub fn put_wrapped<T>(buf: &mut Vec<u8>, number: u32, v: &[T], put: fn(&mut Vec<u8>, u32, &T)) {
    put_record(buf, number, |buf| {
        for item in v {
            put(buf, 1, item);
        }
    });
}

/// A `map<string, V>`: one `{ key = 1; value = 2; }` record per entry;
/// `put` writes the value as field 2.
pub fn put_map<V>(
    buf: &mut Vec<u8>,
    number: u32,
    map: &BTreeMap<String, V>,
    put: impl Fn(&mut Vec<u8>, &V),
) {
    for (k, v) in map {
        put_record(buf, number, |buf| {
            put_string(buf, 1, k);
            put(buf, v);
        });
    }
}

// ---- reading ----

/// Reads a varint at `*at`.
///
/// Errors are built only on the error path (`DecodeError` has `String`
/// variants: an eager `ok_or(DecodeError::…)` is built and dropped on
/// every byte).
#[inline]
pub(crate) fn varint(b: &[u8], at: &mut usize) -> Result<u64, DecodeError> {
    // One-byte varints (keys, small lengths, bools) are most of them.
    if let Some(&byte) = b.get(*at)
        && byte < 0x80
    {
        *at += 1;
        return Ok(u64::from(byte));
    }
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let Some(&byte) = b.get(*at) else {
            return Err(DecodeError::Truncated);
        };
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Ok(v);
        }
    }
    Err(DecodeError::VarintTooLong)
}

/// The `n` bytes at `*at`.
#[inline]
fn take<'a>(b: &'a [u8], at: &mut usize, n: usize) -> Result<&'a [u8], DecodeError> {
    match at
        .checked_add(n)
        .and_then(|end| Some((end, b.get(*at..end)?)))
    {
        Some((end, s)) => {
            *at = end;
            Ok(s)
        }
        None => Err(DecodeError::Truncated),
    }
}

/// `N` bytes at `*at`, as an array.
#[inline]
fn take_array<const N: usize>(b: &[u8], at: &mut usize) -> Result<[u8; N], DecodeError> {
    match take(b, at, N)?.try_into() {
        Ok(a) => Ok(a),
        Err(_) => Err(DecodeError::Truncated),
    }
}

/// Reads one field (key and value) at `*at`.
#[inline]
pub(crate) fn field<'a>(b: &'a [u8], at: &mut usize) -> Result<(u32, Value<'a>), DecodeError> {
    let key = varint(b, at)?;
    let number = match u32::try_from(key >> 3) {
        Ok(n) if n != 0 => n,
        _ => return Err(DecodeError::FieldNumber),
    };
    let value = match key & 7 {
        0 => Value::Varint(varint(b, at)?),
        1 => Value::Fixed64(u64::from_le_bytes(take_array(b, at)?)),
        2 => {
            let Ok(len) = usize::try_from(varint(b, at)?) else {
                return Err(DecodeError::Truncated);
            };
            Value::Len(take(b, at, len)?)
        }
        5 => Value::Fixed32(u32::from_le_bytes(take_array(b, at)?)),
        w => return Err(DecodeError::UnknownWireType { wire: w as u8 }),
    };
    Ok((number, value))
}

/// Calls `each` for every field of a message's bytes (generic, so that the
/// per-field call is inlined into the caller's loop).
#[inline]
pub(crate) fn fields<'a>(
    b: &'a [u8],
    mut each: impl FnMut(u32, Value<'a>) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    let mut at = 0;
    while at < b.len() {
        let (number, value) = field(b, &mut at)?;
        each(number, value)?;
    }
    Ok(())
}

fn len<'a>(value: Value<'a>) -> Result<&'a [u8], DecodeError> {
    match value {
        Value::Len(b) => Ok(b),
        other => Err(wrong(&other, "length-delimited")),
    }
}

fn varint_of(value: Value<'_>) -> Result<u64, DecodeError> {
    match value {
        Value::Varint(v) => Ok(v),
        other => Err(wrong(&other, "varint")),
    }
}

/// `string`.
pub fn string(value: Value<'_>) -> Result<String, DecodeError> {
    let b = len(value)?;
    std::str::from_utf8(b)
        .map(str::to_owned)
        .map_err(|_| DecodeError::Utf8)
}

/// `bytes`.
pub fn bytes(value: Value<'_>) -> Result<ByteString, DecodeError> {
    len(value).map(|b| ByteString(b.to_vec()))
}

/// `bytes` as a slice.
pub fn raw<'a>(value: Value<'a>) -> Result<&'a [u8], DecodeError> {
    len(value)
}

/// `bool`.
pub fn bool(value: Value<'_>) -> Result<bool, DecodeError> {
    varint_of(value).map(|v| v != 0)
}

/// `int32` (the low 32 bits of the varint, as protobuf reads it).
pub fn int32(value: Value<'_>) -> Result<i32, DecodeError> {
    varint_of(value).map(|v| v as i32)
}

/// `int64`.
pub fn int64(value: Value<'_>) -> Result<i64, DecodeError> {
    varint_of(value).map(|v| v as i64)
}

/// `double`.
pub fn double(value: Value<'_>) -> Result<f64, DecodeError> {
    match value {
        Value::Fixed64(v) => Ok(f64::from_bits(v)),
        other => Err(wrong(&other, "fixed64")),
    }
}

/// Merges a message field into `into` (a repeated occurrence merges, as
/// protobuf says); nesting deeper than [`MAX_DEPTH`] is an error.
pub fn merge(
    into: &mut dyn Message,
    value: Value<'_>,
    budget: &mut Budget,
) -> Result<(), DecodeError> {
    let b = len(value)?;
    budget.nested(|budget| fields(b, |n, v| into.merge_field(n, v, budget)))
}

/// Merges a message field into a boxed one, charging the box when it is
/// made.
pub fn merge_boxed<M: Message + Default>(
    slot: &mut Option<Box<M>>,
    value: Value<'_>,
    budget: &mut Budget,
) -> Result<(), DecodeError> {
    let m = match slot {
        Some(m) => m,
        None => {
            budget.charge::<M>(1)?;
            slot.insert(Box::default())
        }
    };
    merge(&mut **m, value, budget)
}

/// A new message read from a field (its own memory is charged where it is
/// kept: [`push`], [`entry`]).
pub fn message<M: Message + Default>(
    value: Value<'_>,
    budget: &mut Budget,
) -> Result<M, DecodeError> {
    let mut m = M::default();
    merge(&mut m, value, budget)?;
    Ok(m)
}

/// Appends an element to a repeated field, charging it.
pub fn push<T>(list: &mut Vec<T>, item: T, budget: &mut Budget) -> Result<(), DecodeError> {
    budget.charge::<T>(1)?;
    list.push(item);
    Ok(())
}

/// A Go embedded struct: its fields go to `each` (the model's own fields).
pub fn embedded(
    value: Value<'_>,
    budget: &mut Budget,
    each: &mut dyn FnMut(u32, Value<'_>, &mut Budget) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    let b = len(value)?;
    budget.nested(|budget| fields(b, |n, v| each(n, v, budget)))
}

fn timestamp(value: Value<'_>) -> Result<Option<(i64, i32)>, DecodeError> {
    let b = len(value)?;
    if b.is_empty() {
        return Ok(None);
    }
    let (mut secs, mut nanos) = (0i64, 0i32);
    fields(b, |n, v| {
        match n {
            1 => secs = int64(v)?,
            2 => nanos = int32(v)?,
            _ => {}
        }
        Ok(())
    })?;
    Ok(Some((secs, nanos)))
}

fn out_of_range(secs: i64, nanos: i32) -> DecodeError {
    DecodeError::TimeOutOfRange { secs, nanos }
}

/// A message behind `&mut`, as a trait object: `&mut dyn Message` has
/// `M`'s drop glue in its vtable (so every message type's drop would be
/// compiled), `&mut dyn FnMut` a `call_once` shim; this vtable has one
/// method and `&mut M`'s drop, which is nothing.
pub(crate) trait MergeRef {
    /// `Message::merge_field` of the message referred to.
    fn merge_one(
        &mut self,
        number: u32,
        value: Value<'_>,
        budget: &mut Budget,
    ) -> Result<(), DecodeError>;
}

impl<M: Message> MergeRef for &mut M {
    fn merge_one(
        &mut self,
        number: u32,
        value: Value<'_>,
        budget: &mut Budget,
    ) -> Result<(), DecodeError> {
        (**self).merge_field(number, value, budget)
    }
}

/// A message behind `&`, as a trait object (why: [`MergeRef`]).
pub(crate) trait EncodeRef {
    /// `Message::encode_fields` of the message referred to.
    fn encode_to(&self, buf: &mut Vec<u8>);
}

impl<M: Message> EncodeRef for &M {
    fn encode_to(&self, buf: &mut Vec<u8>) {
        (**self).encode_fields(buf);
    }
}

/// A message record merged into `into` (as [`merge`]).
pub(crate) fn merge_ref(
    into: &mut dyn MergeRef,
    value: Value<'_>,
    budget: &mut Budget,
) -> Result<(), DecodeError> {
    let b = len(value)?;
    budget.nested(|budget| fields(b, |n, v| into.merge_one(n, v, budget)))
}

/// A message field (as [`put_message`]).
pub(crate) fn put_ref(buf: &mut Vec<u8>, number: u32, v: &dyn EncodeRef) {
    put_record(buf, number, |buf| v.encode_to(buf));
}

/// `metav1.Time`: `None` for an empty message (Go's zero time); the
/// nanoseconds are dropped, as Go reads them.
pub fn time(value: Value<'_>) -> Result<Option<Time>, DecodeError> {
    match timestamp(value)? {
        None => Ok(None),
        Some((s, n)) => Time::from_unix(s, 0)
            .map(Some)
            .ok_or_else(|| out_of_range(s, n)),
    }
}

/// `metav1.MicroTime`: `None` for an empty message.
pub fn micro_time(value: Value<'_>) -> Result<Option<MicroTime>, DecodeError> {
    match timestamp(value)? {
        None => Ok(None),
        Some((s, n)) => u32::try_from(n)
            .ok()
            .and_then(|nanos| MicroTime::from_unix(s, nanos))
            .map(Some)
            .ok_or_else(|| out_of_range(s, n)),
    }
}

/// A Go value field read back: its zero value (which Go writes for an
/// unset field) is `None`.
pub fn nonzero<T: Default + PartialEq>(v: T) -> Option<T> {
    (v != T::default()).then_some(v)
}

/// A list wrapped in `{ repeated T items = 1; }`.
pub fn wrapped<T>(
    value: Value<'_>,
    read: fn(Value<'_>) -> Result<T, DecodeError>,
    budget: &mut Budget,
) -> Result<Vec<T>, DecodeError> {
    let mut out = Vec::new();
    fields(len(value)?, |n, v| {
        if n == 1 {
            push(&mut out, read(v)?, budget)?;
        }
        Ok(())
    })?;
    Ok(out)
}

/// The wire type of a packed number's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packed {
    /// `int32`, `int64`, `bool`.
    Varint,
    /// `double`.
    Fixed64,
}

/// One element of a repeated number, or a packed record of them (proto2
/// writers do not pack, readers must accept both).
pub fn repeated<T>(
    into: &mut Vec<T>,
    value: Value<'_>,
    read: fn(Value<'_>) -> Result<T, DecodeError>,
    packed: Packed,
    budget: &mut Budget,
) -> Result<(), DecodeError> {
    let Value::Len(b) = value else {
        return push(into, read(value)?, budget);
    };
    let mut at = 0;
    while at < b.len() {
        let v = if packed == Packed::Fixed64 {
            Value::Fixed64(u64::from_le_bytes(take_array(b, &mut at)?))
        } else {
            Value::Varint(varint(b, &mut at)?)
        };
        push(into, read(v)?, budget)?;
    }
    Ok(())
}

/// One `map<string, V>` entry; a missing value is `V::default()`. Charged
/// twice its size: a `BTreeMap` built in key order keeps its nodes about
/// half full.
pub fn entry<V: Default>(
    value: Value<'_>,
    budget: &mut Budget,
    read: impl Fn(Value<'_>, &mut Budget) -> Result<V, DecodeError>,
) -> Result<(String, V), DecodeError> {
    let b = len(value)?;
    budget.charge::<(String, V)>(2)?;
    budget.nested(|budget| {
        let (mut k, mut out) = (String::new(), V::default());
        fields(b, |n, v| {
            match n {
                1 => k = string(v)?,
                2 => out = read(v, budget)?,
                _ => {}
            }
            Ok(())
        })?;
        Ok((k, out))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_records() {
        let mut buf = Vec::new();
        put_varint(&mut buf, 300);
        assert_eq!(buf, [0xac, 0x02]);
        let mut at = 0;
        assert_eq!(varint(&buf, &mut at).unwrap(), 300);
        // A record longer than 127 bytes gets a two-byte length.
        let mut buf = Vec::new();
        put_record(&mut buf, 1, |b| b.extend_from_slice(&[7; 200]));
        assert_eq!(&buf[..3], &[0x0a, 0xc8, 0x01]);
        assert_eq!(buf.len(), 203);
        assert!(buf[3..].iter().all(|b| *b == 7));
        // Negative int32 is ten bytes, as Go writes it.
        let mut buf = Vec::new();
        put_int32(&mut buf, 1, &-1);
        assert_eq!(buf.len(), 11);
        let mut at = 0;
        let (n, v) = field(&buf, &mut at).unwrap();
        assert_eq!((n, int32(v).unwrap()), (1, -1));
    }

    #[test]
    fn bad_input_is_an_error() {
        let mut at = 0;
        assert_eq!(field(&[0x0a, 5, 1], &mut at), Err(DecodeError::Truncated));
        let mut at = 0;
        assert_eq!(
            varint(&[0xff; 11], &mut at),
            Err(DecodeError::VarintTooLong)
        );
        let mut at = 0;
        assert!(field(&[0x0b], &mut at).is_err());
        assert!(string(Value::Varint(1)).is_err());
        assert!(string(Value::Len(&[0xff])).is_err());
        let mut v = Vec::new();
        let mut budget = Budget::for_body(3);
        repeated(
            &mut v,
            Value::Len(&[1, 0x96, 0x01]),
            int32,
            Packed::Varint,
            &mut budget,
        )
        .unwrap();
        assert_eq!(v, [1, 150]);
    }
}
