//! The field helpers the generated codecs call: one call per field, to a
//! helper generic over the field's element type only and never inlined.
//!
//! A codec's `encode_fields` is a list of `put*` calls and its
//! `merge_field` a `match` whose arms are one call each, so the code
//! LLVM optimises per struct is a jump table and a few calls; the reading,
//! writing, charging and `Default`s live in one instance per element type
//! (`list::<Container>` serves every `Vec<Container>` field). Inlining
//! them into every `merge_field` cost 8–10× kubeset-api's release build
//! (docs/benchmarks.md, "Build cost of `protobuf`"). The bytes are those of
//! [`super::wire`]'s helpers, which these call.

// Which helpers the codecs call depends on the API groups compiled in.
#![allow(dead_code)]

use std::collections::BTreeMap;

use super::wire::{self, Budget, Packed, Value};
use super::{DecodeError, Message};
use crate::types::{ByteString, MicroTime, Time};

/// One value of a field: a scalar, a time, a message or a wrapped list of
/// strings (`Elem` of the generator's join).
pub(crate) trait Elem: Sized {
    /// Writes the value as field `number`.
    fn put(&self, buf: &mut Vec<u8>, number: u32);
    /// Reads a new value (a message from its record, charging `budget`).
    fn read(value: Value<'_>, budget: &mut Budget) -> Result<Self, DecodeError>;
    /// A singular field seen on the wire: replaces the value (a message
    /// merges into it, as protobuf says).
    fn merge_into(&mut self, value: Value<'_>, budget: &mut Budget) -> Result<(), DecodeError> {
        *self = Self::read(value, budget)?;
        Ok(())
    }
    /// An optional field seen on the wire: `Some` of the value (a message
    /// merges into the one present; an empty time is `None`).
    fn merge_opt(
        slot: &mut Option<Self>,
        value: Value<'_>,
        budget: &mut Budget,
    ) -> Result<(), DecodeError> {
        *slot = Some(Self::read(value, budget)?);
        Ok(())
    }
    /// One occurrence of a repeated field, charged (numbers also packed).
    fn push(
        list: &mut Vec<Self>,
        value: Value<'_>,
        budget: &mut Budget,
    ) -> Result<(), DecodeError> {
        let v = Self::read(value, budget)?;
        wire::push(list, v, budget)
    }
}

macro_rules! scalar {
    ($ty:ty, $put:ident, $read:ident) => {
        impl Elem for $ty {
            fn put(&self, buf: &mut Vec<u8>, number: u32) {
                wire::$put(buf, number, self);
            }
            fn read(value: Value<'_>, _: &mut Budget) -> Result<Self, DecodeError> {
                wire::$read(value)
            }
        }
    };
    ($ty:ty, $put:ident, $read:ident, $packed:expr) => {
        impl Elem for $ty {
            fn put(&self, buf: &mut Vec<u8>, number: u32) {
                wire::$put(buf, number, self);
            }
            fn read(value: Value<'_>, _: &mut Budget) -> Result<Self, DecodeError> {
                wire::$read(value)
            }
            fn push(
                list: &mut Vec<Self>,
                value: Value<'_>,
                budget: &mut Budget,
            ) -> Result<(), DecodeError> {
                wire::repeated(list, value, wire::$read, $packed, budget)
            }
        }
    };
}

scalar!(String, put_string, string);
scalar!(ByteString, put_bytes, bytes);
scalar!(bool, put_bool, bool, Packed::Varint);
scalar!(i32, put_int32, int32, Packed::Varint);
scalar!(i64, put_int64, int64, Packed::Varint);
scalar!(f64, put_double, double, Packed::Fixed64);

macro_rules! time {
    ($ty:ty, $put:ident, $read:ident) => {
        impl Elem for $ty {
            fn put(&self, buf: &mut Vec<u8>, number: u32) {
                wire::$put(buf, number, self);
            }
            fn read(value: Value<'_>, _: &mut Budget) -> Result<Self, DecodeError> {
                Ok(wire::$read(value)?.unwrap_or_default())
            }
            fn merge_opt(
                slot: &mut Option<Self>,
                value: Value<'_>,
                _: &mut Budget,
            ) -> Result<(), DecodeError> {
                *slot = wire::$read(value)?;
                Ok(())
            }
        }
    };
}

time!(Time, put_time, time);
time!(MicroTime, put_micro_time, micro_time);

/// A list wrapped in a message `{ repeated string items = 1; }` (Go's
/// named slice types: `ExtraValue`, `Verbs`).
impl Elem for Vec<String> {
    fn put(&self, buf: &mut Vec<u8>, number: u32) {
        wire::put_wrapped(buf, number, self, wire::put_string);
    }
    fn read(value: Value<'_>, budget: &mut Budget) -> Result<Self, DecodeError> {
        wire::wrapped(value, wire::string, budget)
    }
}

/// A message is written and merged as a reference behind a trait object
/// ([`wire::MergeRef`], [`wire::EncodeRef`]), not as `dyn Message`: that
/// vtable would name `M`'s drop glue, and so compile the drop of every
/// message type (once a third of this feature's code). Inlined into the
/// one helper that calls each (`opt`, `list`, …), which is never inlined:
/// one instance per message type, not two.
impl<M: Message + Default> Elem for M {
    #[inline(always)]
    fn put(&self, buf: &mut Vec<u8>, number: u32) {
        wire::put_ref(buf, number, &self);
    }
    fn read(value: Value<'_>, budget: &mut Budget) -> Result<Self, DecodeError> {
        let mut m = M::default();
        merge_message(&mut m, value, budget)?;
        Ok(m)
    }
    #[inline(always)]
    fn merge_into(&mut self, value: Value<'_>, budget: &mut Budget) -> Result<(), DecodeError> {
        merge_message(self, value, budget)
    }
    #[inline(always)]
    fn merge_opt(
        slot: &mut Option<Self>,
        value: Value<'_>,
        budget: &mut Budget,
    ) -> Result<(), DecodeError> {
        merge_message(filled::<M>(slot, M::default), value, budget)
    }
    /// Merged in place: the element is pushed (its slot charged first) and
    /// the record merged into it, so no value of `M` is moved or dropped
    /// here (a failed decode drops the whole object where it was made).
    #[inline(always)]
    fn push(
        list: &mut Vec<Self>,
        value: Value<'_>,
        budget: &mut Budget,
    ) -> Result<(), DecodeError> {
        budget.charge::<M>(1)?;
        // Not `push`: it holds the value while it may grow (and panic), so
        // it names `M`'s drop glue; a trusted-length extend makes room
        // first, then makes the value in place.
        list.extend(std::iter::once_with(M::default));
        match list.last_mut() {
            Some(m) => merge_message(m, value, budget),
            None => Ok(()),
        }
    }
}

/// A message record merged into `m` (as [`wire::merge`], whose
/// `&mut dyn Message` would name `M`'s drop glue).
#[inline(always)]
pub(crate) fn merge_message<M: Message>(
    mut m: &mut M,
    value: Value<'_>,
    budget: &mut Budget,
) -> Result<(), DecodeError> {
    wire::merge_ref(&mut m, value, budget)
}

/// The value in `slot`, `make`'s when it is `None` — as
/// `Option::get_or_insert_with`, without compiling `T`'s drop glue (which
/// that assignment needs, for every message, list and map type): an empty
/// slot has nothing to drop.
#[inline(always)]
pub(crate) fn filled<T>(slot: &mut Option<T>, make: fn() -> T) -> &mut T {
    if slot.is_none() {
        // The `None` replaced: nothing to drop.
        std::mem::forget(slot.replace(make()));
    }
    match slot {
        Some(v) => v,
        None => unreachable!("filled above"),
    }
}

// ---- reading: one call per field in `merge_field` ----

/// A plain (required) field.
#[inline(never)]
pub(crate) fn one<T: Elem>(
    slot: &mut T,
    value: Value<'_>,
    budget: &mut Budget,
) -> Result<(), DecodeError> {
    slot.merge_into(value, budget)
}

/// An `Option` field: present on the wire is `Some`, even when zero.
#[inline(never)]
pub(crate) fn opt<T: Elem>(
    slot: &mut Option<T>,
    value: Value<'_>,
    budget: &mut Budget,
) -> Result<(), DecodeError> {
    T::merge_opt(slot, value, budget)
}

/// A Go value field: its zero (which Go writes when unset) is `None`.
#[inline(never)]
pub(crate) fn nonzero<T: Elem + Default + PartialEq>(
    slot: &mut Option<T>,
    value: Value<'_>,
    budget: &mut Budget,
) -> Result<(), DecodeError> {
    *slot = wire::nonzero(T::read(value, budget)?);
    Ok(())
}

/// One element of a plain repeated field.
#[inline(never)]
pub(crate) fn list<T: Elem>(
    list: &mut Vec<T>,
    value: Value<'_>,
    budget: &mut Budget,
) -> Result<(), DecodeError> {
    T::push(list, value, budget)
}

/// One element of an `Option` repeated field.
#[inline(never)]
pub(crate) fn opt_list<T: Elem>(
    list: &mut Option<Vec<T>>,
    value: Value<'_>,
    budget: &mut Budget,
) -> Result<(), DecodeError> {
    T::push(filled(list, Vec::new), value, budget)
}

/// One entry of a plain map field (a missing value is the default).
#[inline(never)]
pub(crate) fn map<V: Elem + Default>(
    map: &mut BTreeMap<String, V>,
    value: Value<'_>,
    budget: &mut Budget,
) -> Result<(), DecodeError> {
    let (k, v) = wire::entry(value, budget, V::read)?;
    map.insert(k, v);
    Ok(())
}

/// One entry of an `Option` map field.
#[inline(never)]
pub(crate) fn opt_map<V: Elem + Default>(
    slot: &mut Option<BTreeMap<String, V>>,
    value: Value<'_>,
    budget: &mut Budget,
) -> Result<(), DecodeError> {
    let (k, v) = wire::entry(value, budget, V::read)?;
    filled(slot, BTreeMap::new).insert(k, v);
    Ok(())
}

// ---- writing: one call per field in `encode_fields` ----

/// A plain field, always written.
#[inline(never)]
pub(crate) fn put<T: Elem>(buf: &mut Vec<u8>, number: u32, v: &T) {
    v.put(buf, number);
}

/// An `Option` field, written when `Some`.
#[inline(never)]
pub(crate) fn put_opt<T: Elem>(buf: &mut Vec<u8>, number: u32, v: &Option<T>) {
    if let Some(v) = v {
        v.put(buf, number);
    }
}

/// A Go value field: written always, its zero when unset (as Go writes
/// it).
#[inline(never)]
pub(crate) fn put_or_zero<T: Elem + Default>(buf: &mut Vec<u8>, number: u32, v: &Option<T>) {
    match v {
        Some(v) => v.put(buf, number),
        None => T::default().put(buf, number),
    }
}

/// A repeated field: one record per element.
#[inline(never)]
pub(crate) fn put_list<T: Elem>(buf: &mut Vec<u8>, number: u32, v: &[T]) {
    for v in v {
        v.put(buf, number);
    }
}

/// An `Option` repeated field.
#[inline(never)]
pub(crate) fn put_opt_list<T: Elem>(buf: &mut Vec<u8>, number: u32, v: &Option<Vec<T>>) {
    if let Some(v) = v {
        put_list(buf, number, v);
    }
}

/// A map field: one `{ key = 1; value = 2; }` record per entry.
#[inline(never)]
pub(crate) fn put_map<V: Elem>(buf: &mut Vec<u8>, number: u32, v: &BTreeMap<String, V>) {
    wire::put_map(buf, number, v, |buf, v| v.put(buf, 2));
}

/// An `Option` map field.
#[inline(never)]
pub(crate) fn put_opt_map<V: Elem>(
    buf: &mut Vec<u8>,
    number: u32,
    v: &Option<BTreeMap<String, V>>,
) {
    if let Some(v) = v {
        put_map(buf, number, v);
    }
}

/// A Go embedded struct: a record whose content `write` appends (not
/// generic: one instance for every embedded field).
#[inline(never)]
pub(crate) fn put_embedded(buf: &mut Vec<u8>, number: u32, write: &dyn Fn(&mut Vec<u8>)) {
    wire::put_embedded(buf, number, write);
}
