//! Counted cache memory: an estimate of what each cached object costs,
//! per-cache gauges, and a [`MemoryBudget`] that fails the watcher before
//! the OOM killer does.
//!
//! **The estimate** is a deep-size walk of the decoded object, done once
//! when it enters the cache and kept beside it: the block its `Arc` holds
//! (16 bytes of counts and the object's own size), plus the heap it owns,
//! found by walking its `Serialize` implementation without writing
//! anything. Every heap block counts what the allocator takes for it, not
//! only the bytes asked for (glibc's rule, see below): every string and
//! byte string one block of its length (the decoders allocate exactly
//! that: kubeset's models shrink their lists and copy strings to their
//! length); every list one block of its elements' inline sizes; every map
//! the nodes of a B-tree of entries of the inline key and value sizes (one
//! 11-slot node up to 11 entries, about one node per 7 beyond); then the
//! store adds the key (namespace and name) and its table slot. serde hands
//! list elements and map entries over by reference, so their inline size
//! is read from what they write: a string is a `String`, a number its
//! width, and a struct the distance between the same field of two
//! neighbours in its list (learned per type for the lists of one), else
//! the span of the fields it wrote. Values written with `collect_str`
//! (timestamps) count 16 inline bytes.
//!
//! **What a block costs** (`allocation`): glibc's malloc on 64-bit Linux
//! puts an 8-byte size header in front of every block and rounds the whole
//! up to a multiple of 16, 32 bytes at least: a 5-byte label key costs 32,
//! a 24-byte list of one `String` 32, a 40-byte one 48. An empty `String`
//! or `Vec` allocates nothing and costs nothing. (Blocks of 128 KiB and
//! more are mapped pages of their own; the rule is then off by under a page
//! each, and a cached object has none.) Other allocators round
//! differently (jemalloc and mimalloc by size classes, with no header):
//! the estimate is glibc's.
//!
//! Not counted: the `apiVersion` and `kind` a model's `Serialize` writes
//! (constants, not in the object), a `Box` inside an object (only
//! recursive schemas have one; serde does not show it), the indexes, and
//! what RSS adds beyond the blocks: the allocator's free lists and
//! fragmentation (the decode's transient buffers, freed but kept by the
//! allocator), and the rest of the process. Checked against a counting
//! allocator that records each block's chunk on real objects (the
//! runtime's `memory` test, which states the margin), and against RSS in
//! the scale bench (docs/benchmarks.md).
//!
//! Why a walk and not the bytes each object came from: a decoded object
//! is not its body. A small ConfigMap is about 300 bytes of JSON and 1.5
//! KB of memory (a 24-byte `Option<String>` per unset field, a 560-byte
//! B-tree node for one label), a Pod with managedFields less than its
//! JSON; protobuf bodies are smaller again. The walk costs a fraction of
//! the decode it follows and is opt-in
//! ([`StoreConfig::count_memory`](crate::StoreConfig::count_memory)).

use std::collections::HashMap;
use std::fmt;
use std::mem::{size_of, size_of_val};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use serde::Serialize;
use serde::ser;

/// The estimated bytes of `obj` as a cache holds it: `Arc` header, inline
/// size and owned heap (see the module docs; the key and table slot are
/// added by the store).
///
/// ```
/// use kubeset_client::api::core::v1::ConfigMap;
/// let small = ConfigMap::default();
/// let mut big = ConfigMap::default();
/// big.data = Some([("k".to_owned(), "v".repeat(10_000))].into());
/// let (s, b) = (kubeset_runtime::memory::estimate(&small), kubeset_runtime::memory::estimate(&big));
/// assert!(s >= std::mem::size_of::<ConfigMap>() as u64);
/// assert!(b >= s + 10_000);
/// ```
pub fn estimate<T: Serialize>(obj: &T) -> u64 {
    let start = std::ptr::from_ref(obj).cast::<u8>().addr();
    let mut walk = Walk {
        root: start..start + size_of_val(obj),
        ..Walk::default()
    };
    // The walk itself never fails; a type whose Serialize fails (a custom
    // one) is counted up to where it stopped.
    let _ = obj.serialize(&mut walk);
    (allocation(ARC_HEADER + size_of_val(obj)) + walk.heap) as u64
}

/// The bytes glibc's malloc (64-bit) takes for a request of `n` bytes:
/// the request and an 8-byte size header, rounded up to a multiple of 16,
/// at least 32; nothing for nothing (Rust does not allocate zero bytes:
/// an empty `String` or `Vec` owns no block).
pub(crate) const fn allocation(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let chunk = (n + CHUNK_HEADER + CHUNK_ALIGN - 1) & !(CHUNK_ALIGN - 1);
    if chunk < MIN_CHUNK { MIN_CHUNK } else { chunk }
}

/// glibc's size header in front of every block (`SIZE_SZ`).
const CHUNK_HEADER: usize = 8;
/// Its alignment of blocks (`MALLOC_ALIGNMENT`, two `size_t`s).
const CHUNK_ALIGN: usize = 16;
/// Its smallest block (`MINSIZE`: room for the free list's two links).
const MIN_CHUNK: usize = 32;

/// Strong and weak counts in front of every `Arc`'s value.
const ARC_HEADER: usize = 16;
/// Slots of a B-tree node (std's `B = 6`: `2·B − 1`).
const NODE_SLOTS: usize = 11;
/// Entries per node when a map is built in order (std splits a full node
/// 6 + 1 + 4, and the left part is not filled again).
const NODE_FILL: usize = 7;
/// A `String`, `Vec` or `BTreeMap` header.
const HEADER: usize = 24;
/// Fields of an element remembered to find the list's stride.
const PROBE_FIELDS: usize = 4;

/// Bytes of the nodes of a `BTreeMap` of `n` entries of `entry` inline
/// bytes each, each node a block of its own.
fn btree_bytes(n: usize, entry: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let leaf = 16 + NODE_SLOTS * entry;
    let internal = leaf + (NODE_SLOTS + 1) * 8;
    if n <= NODE_SLOTS {
        return allocation(leaf);
    }
    let leaves = n.div_ceil(NODE_FILL);
    leaves * allocation(leaf) + leaves.div_ceil(NODE_FILL) * allocation(internal)
}

/// Inline sizes of struct types met as list elements, learned from the
/// stride of lists of two or more (serde hands list elements over by
/// reference, so `size_of_val` sees a pointer; the distance between the
/// same field of two neighbours is the element's size).
fn learned() -> &'static RwLock<HashMap<&'static str, usize>> {
    static LEARNED: OnceLock<RwLock<HashMap<&'static str, usize>>> = OnceLock::new();
    LEARNED.get_or_init(RwLock::default)
}

/// The serializer that counts instead of writing.
#[derive(Default)]
struct Walk {
    heap: usize,
    /// The addresses of the object walked.
    root: std::ops::Range<usize>,
    /// How many structs deep the walk is.
    depth: usize,
    /// The list element or map entry being measured.
    probe: Option<Probe>,
}

/// What one list element or map key or value showed of its inline size.
#[derive(Default)]
struct Probe {
    /// The struct depth of its own fields.
    depth: usize,
    /// Its inline size when it is not a struct (from the first thing it
    /// wrote: a string is a `String`, a number its width).
    scalar: Option<usize>,
    is_struct: bool,
    /// Its first fields: name and address.
    fields: [(&'static str, usize); PROBE_FIELDS],
    n: usize,
    /// The lowest field address and the highest field end.
    min: usize,
    max_end: usize,
}

impl Probe {
    /// The distance between a field of `self` and the same field of the
    /// next element, `next`.
    fn stride(&self, next: &Probe) -> Option<usize> {
        let (a, b) = (&self.fields[..self.n], &next.fields[..next.n]);
        a.iter().find_map(|(ka, aa)| {
            b.iter()
                .find(|(kb, ab)| kb == ka && ab > aa)
                .map(|(_, ab)| ab - aa)
        })
    }

    /// Its inline size: a scalar's, a list's stride, a size learned for
    /// `type_name`, or the span of the fields it wrote.
    fn inline_size(&self, prev: Option<&Probe>, type_name: &'static str) -> usize {
        if !self.is_struct {
            return self.scalar.unwrap_or(HEADER);
        }
        let span = self.max_end.saturating_sub(self.min);
        if let Some(stride) = prev.filter(|p| p.is_struct).and_then(|p| p.stride(self)) {
            let stride = stride.max(span);
            let known = learned()
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .get(type_name)
                .copied();
            if known != Some(stride) {
                learned()
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(type_name, stride);
            }
            return stride;
        }
        learned()
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(type_name)
            .copied()
            .unwrap_or(span)
            .max(span)
    }
}

impl Walk {
    /// Walks `value`, a list element or map key or value, watching what it
    /// shows of its inline size.
    fn probe<T: Serialize + ?Sized>(&mut self, value: &T) -> Probe {
        let fresh = Probe {
            depth: self.depth + 1,
            min: usize::MAX,
            ..Probe::default()
        };
        let saved = self.probe.replace(fresh);
        let _ = value.serialize(&mut *self);
        std::mem::replace(&mut self.probe, saved).unwrap_or_default()
    }

    /// Whether the element being probed has not written anything yet.
    fn first_call(&mut self) -> Option<&mut Probe> {
        let depth = self.depth;
        self.probe
            .as_mut()
            .filter(|p| p.depth == depth + 1 && p.scalar.is_none() && !p.is_struct)
    }

    fn scalar(&mut self, size: usize) -> Result<(), Never> {
        if let Some(p) = self.first_call() {
            p.scalar = Some(size);
        }
        Ok(())
    }

    fn enter_struct(&mut self) -> Inline<'_> {
        if let Some(p) = self.first_call() {
            p.is_struct = true;
        }
        self.depth += 1;
        Inline(self)
    }

    /// Whether `value`, a field of the object walked, is a constant its
    /// `Serialize` writes and it does not hold: a `str` from outside the
    /// object (the models' `apiVersion` and `kind`).
    fn constant<T: ?Sized>(&self, value: &T) -> bool {
        let addr = std::ptr::from_ref(value).cast::<u8>().addr();
        self.depth == 1 && std::any::type_name::<T>() == "str" && !self.root.contains(&addr)
    }

    /// Notes a field of the struct being probed (not of structs in it).
    fn field<T: ?Sized>(&mut self, key: &'static str, value: &T) {
        let depth = self.depth;
        let Some(p) = self.probe.as_mut().filter(|p| p.depth == depth) else {
            return;
        };
        let addr = std::ptr::from_ref(value).cast::<u8>().addr();
        p.min = p.min.min(addr);
        p.max_end = p.max_end.max(addr + size_of_val(value));
        if p.n < PROBE_FIELDS {
            p.fields[p.n] = (key, addr);
            p.n += 1;
        }
    }
}

/// The walk never fails; serde needs an error type all the same.
#[derive(Debug)]
struct Never;

impl fmt::Display for Never {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a custom Serialize implementation failed")
    }
}

impl std::error::Error for Never {}

impl ser::Error for Never {
    fn custom<T: fmt::Display>(_msg: T) -> Self {
        Never
    }
}

macro_rules! scalars {
    ($($f:ident: $t:ty),*) => {
        $(fn $f(self, _v: $t) -> Result<(), Never> { self.scalar(size_of::<$t>()) })*
    };
}

impl<'a> ser::Serializer for &'a mut Walk {
    type Ok = ();
    type Error = Never;
    type SerializeSeq = SeqWalk<'a>;
    type SerializeTuple = Inline<'a>;
    type SerializeTupleStruct = Inline<'a>;
    type SerializeTupleVariant = Inline<'a>;
    type SerializeMap = MapWalk<'a>;
    type SerializeStruct = Inline<'a>;
    type SerializeStructVariant = Inline<'a>;

    scalars!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_f32: f32, serialize_f64: f64, serialize_char: char);

    fn serialize_str(self, v: &str) -> Result<(), Never> {
        self.heap += allocation(v.len());
        self.scalar(HEADER)
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Never> {
        self.heap += allocation(v.len());
        self.scalar(HEADER)
    }

    fn collect_str<T: fmt::Display + ?Sized>(self, _value: &T) -> Result<(), Never> {
        // Timestamps and other values written as text are held inline.
        self.scalar(16)
    }

    fn serialize_none(self) -> Result<(), Never> {
        Ok(())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Never> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Never> {
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Never> {
        Ok(())
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Never> {
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Never> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        value: &T,
    ) -> Result<(), Never> {
        value.serialize(self)
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<SeqWalk<'a>, Never> {
        self.scalar(HEADER)?;
        Ok(SeqWalk {
            walk: self,
            prev: None,
            bytes: 0,
        })
    }

    fn serialize_tuple(self, _len: usize) -> Result<Inline<'a>, Never> {
        Ok(self.enter_struct())
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Inline<'a>, Never> {
        Ok(self.enter_struct())
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Inline<'a>, Never> {
        Ok(self.enter_struct())
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<MapWalk<'a>, Never> {
        self.scalar(HEADER)?;
        Ok(MapWalk {
            walk: self,
            entries: 0,
            entry: 0,
        })
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Inline<'a>, Never> {
        Ok(self.enter_struct())
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Inline<'a>, Never> {
        Ok(self.enter_struct())
    }
}

/// A list: its elements live in one heap block, each its inline size.
struct SeqWalk<'a> {
    walk: &'a mut Walk,
    prev: Option<Probe>,
    /// The inline sizes of the elements so far.
    bytes: usize,
}

impl ser::SerializeSeq for SeqWalk<'_> {
    type Ok = ();
    type Error = Never;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Never> {
        let probe = self.walk.probe(value);
        self.bytes += probe.inline_size(self.prev.as_ref(), std::any::type_name::<T>());
        self.prev = Some(probe);
        Ok(())
    }

    fn end(self) -> Result<(), Never> {
        self.walk.heap += allocation(self.bytes);
        Ok(())
    }
}

/// Fields of a struct, tuple or variant: inline in their parent, only
/// their own heap counts.
struct Inline<'a>(&'a mut Walk);

impl Inline<'_> {
    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Never> {
        if self.0.constant(value) {
            return Ok(());
        }
        self.0.field(key, value);
        value.serialize(&mut *self.0)
    }

    fn leave(self) -> Result<(), Never> {
        self.0.depth -= 1;
        Ok(())
    }
}

/// The struct and struct variant parts of [`Inline`]: each field by name.
macro_rules! named_fields {
    ($($tr:ident),*) => {
        $(impl ser::$tr for Inline<'_> {
            type Ok = ();
            type Error = Never;

            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Never> {
                self.field(key, value)
            }

            fn end(self) -> Result<(), Never> {
                self.leave()
            }
        })*
    };
}

named_fields!(SerializeStruct, SerializeStructVariant);

/// The tuple parts of [`Inline`]: fields without names.
macro_rules! unnamed_fields {
    ($($tr:ident :: $m:ident),*) => {
        $(impl ser::$tr for Inline<'_> {
            type Ok = ();
            type Error = Never;

            fn $m<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Never> {
                self.field("", value)
            }

            fn end(self) -> Result<(), Never> {
                self.leave()
            }
        })*
    };
}

unnamed_fields!(
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// A map being walked: entries so far and the inline size of one.
struct MapWalk<'a> {
    walk: &'a mut Walk,
    entries: usize,
    entry: usize,
}

impl ser::SerializeMap for MapWalk<'_> {
    type Ok = ();
    type Error = Never;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Never> {
        self.entries += 1;
        self.entry = self
            .walk
            .probe(key)
            .inline_size(None, std::any::type_name::<T>());
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Never> {
        self.entry += self
            .walk
            .probe(value)
            .inline_size(None, std::any::type_name::<T>());
        Ok(())
    }

    fn end(self) -> Result<(), Never> {
        self.walk.heap += btree_bytes(self.entries, self.entry);
        Ok(())
    }
}

/// What a cache holds now: objects and their estimated bytes (zero bytes
/// when the cache does not count them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheMemory {
    /// Objects in the cache (and, during a relist, the new ones beside it).
    pub objects: u64,
    /// Their estimated bytes (see the module docs).
    pub bytes: u64,
}

/// A memory budget for one cache or a set of caches: the sum of their
/// estimated bytes may not cross `limit`. A cache whose next object would
/// cross it stops: its watcher fails with [`MemoryBudgetExceeded`]
/// (through [`WatcherError::MemoryBudget`](crate::WatcherError::MemoryBudget)),
/// and a `WARN` log is written once the budget is 80 % used. Cheap to
/// clone; clones share the budget.
///
/// ```
/// use kubeset_client::api::core::v1::{ConfigMap, Secret};
/// use kubeset_runtime::{StoreConfig, memory::MemoryBudget};
///
/// // One budget for both caches of an operator.
/// let budget = MemoryBudget::new(256 << 20);
/// let cms = StoreConfig::<ConfigMap>::new().memory_budget(&budget);
/// let secrets = StoreConfig::<Secret>::new().memory_budget(&budget);
/// assert_eq!(budget.used(), 0);
/// # drop((cms, secrets));
/// ```
#[derive(Clone)]
pub struct MemoryBudget {
    inner: Arc<BudgetInner>,
}

struct BudgetInner {
    limit: u64,
    used: AtomicU64,
    warned: AtomicBool,
}

impl fmt::Debug for MemoryBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryBudget")
            .field("limit", &self.limit())
            .field("used", &self.used())
            .finish()
    }
}

impl MemoryBudget {
    /// A budget of `limit` estimated bytes.
    pub fn new(limit: u64) -> Self {
        MemoryBudget {
            inner: Arc::new(BudgetInner {
                limit,
                used: AtomicU64::new(0),
                warned: AtomicBool::new(false),
            }),
        }
    }

    /// The limit in bytes.
    pub fn limit(&self) -> u64 {
        self.inner.limit
    }

    /// The estimated bytes of every cache charged to it now.
    pub fn used(&self) -> u64 {
        self.inner.used.load(Ordering::Relaxed)
    }

    /// Adds `bytes`; returns the new total, or `Err(total)` without
    /// adding when it would cross the limit.
    pub(crate) fn charge(&self, bytes: u64) -> Result<u64, u64> {
        let i = &self.inner;
        let mut now = i.used.load(Ordering::Relaxed);
        loop {
            let next = now.saturating_add(bytes);
            if next > i.limit {
                return Err(next);
            }
            match i
                .used
                .compare_exchange_weak(now, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Ok(next),
                Err(seen) => now = seen,
            }
        }
    }

    /// Takes `bytes` back.
    pub(crate) fn release(&self, bytes: u64) {
        let _ = self
            .inner
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
                Some(u.saturating_sub(bytes))
            });
        if self.used() < self.limit() / 10 * 7 {
            self.inner.warned.store(false, Ordering::Relaxed);
        }
    }

    /// Whether `used` crossed 80 % for the first time since it was last
    /// under 70 % (the caller logs the warning).
    pub(crate) fn should_warn(&self, used: u64) -> bool {
        used >= self.limit() / 10 * 8 && !self.inner.warned.swap(true, Ordering::Relaxed)
    }
}

/// A cache would cross its memory budget: it stopped before taking the
/// object. Names the kind, what the cache holds, and the budget.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the cache of {kind} would hold {objects} objects in an estimated {bytes} bytes, \
     crossing its memory budget ({used} of {limit} bytes)"
)]
pub struct MemoryBudgetExceeded {
    /// The cached kind.
    pub kind: &'static str,
    /// Objects the cache would hold with the one refused.
    pub objects: u64,
    /// Their estimated bytes.
    pub bytes: u64,
    /// What the budget would hold with it (every cache charged to it).
    pub used: u64,
    /// The budget's limit.
    pub limit: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_costs_its_glibc_chunk() {
        // Nothing asked, nothing taken: an empty String or Vec.
        assert_eq!(allocation(0), 0);
        // 1 + 8 = 9, up to 16, then the 32-byte minimum.
        assert_eq!(allocation(1), 32);
        // A 5-byte label key: 13 → 16 → 32.
        assert_eq!(allocation(5), 32);
        // 24 + 8 = 32 exactly: the largest request of the smallest chunk.
        assert_eq!(allocation(24), 32);
        // 25 + 8 = 33 → 48.
        assert_eq!(allocation(25), 48);
        assert_eq!(allocation(40), 48);
        // A B-tree leaf of String keys and values: 16 + 11 · 48 = 544,
        // + 8 = 552 → 560.
        assert_eq!(allocation(544), 560);
        assert_eq!(allocation(1000), 1008);
        for n in 1..4096 {
            let c = allocation(n);
            assert!(c >= n + 8 && c < n + 8 + 16 || c == 32, "{n} → {c}");
            assert_eq!(c % 16, 0, "{n} → {c}");
        }
    }

    #[test]
    fn strings_lists_and_maps_count_their_blocks() {
        // The Arc block: 16 bytes of counts + a 24-byte Vec header = 40,
        // + 8 → 48. An empty list owns no block.
        let empty: Vec<String> = Vec::new();
        let base = estimate(&empty);
        assert_eq!(base, 48);
        // The list's block (one 24-byte String: 32) and the string's (4
        // bytes: 32).
        let one = vec!["abcd".to_owned()];
        assert_eq!(estimate(&one), base + 32 + 32);
        // An empty string in a list: the list's block, none for the string.
        assert_eq!(estimate(&vec![String::new()]), base + 32);
        // Struct elements: the stride of two neighbours is their size
        // (String 24 + Option<u64> 16 + [u64; 4] 32 = 72).
        #[derive(Serialize)]
        struct E {
            a: String,
            b: Option<u64>,
            c: [u64; 4],
        }
        assert_eq!(size_of::<E>(), 72);
        let e = |a: &str| E {
            a: a.to_owned(),
            b: None,
            c: [0; 4],
        };
        // Two: one block of 144 (+ 8 → 160) and the strings "x" and "yz"
        // (32 each).
        let two = vec![e("x"), e("yz")];
        assert_eq!(estimate(&two), base + 160 + 2 * 32);
        // One, its size learned from the lists of two: 72 + 8 → 80.
        let one = vec![e("x")];
        assert_eq!(estimate(&one), base + 80 + 32, "learned");
        // A map of one entry: the Arc block (16 + 24 → 48), the strings
        // "a" and "bc" (32 each) and one leaf of 11 String pairs (544 →
        // 560).
        let map: std::collections::BTreeMap<String, String> =
            [("a".to_owned(), "bc".to_owned())].into();
        assert_eq!(estimate(&map), 48 + 2 * 32 + 560);
        assert_eq!(btree_bytes(0, 48), 0);
        assert!(btree_bytes(100, 48) > 100 * 48, "nodes are not full");
    }

    #[test]
    fn a_config_map_counts_every_block() {
        use kubeset_client::api::core::v1::ConfigMap;
        let empty = ConfigMap::default();
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("web".to_owned());
        cm.data = Some([("k".to_owned(), "v".repeat(100))].into());
        // Beyond the empty one: the name (3 → 32), the key (1 → 32), the
        // value (100 + 8 → 112) and one leaf of 11 String pairs (560).
        assert_eq!(estimate(&cm), estimate(&empty) + 32 + 32 + 112 + 560);
        // The empty one is its Arc block alone: every field unset.
        let block = (16 + size_of::<ConfigMap>() + 8).next_multiple_of(16);
        assert_eq!(estimate(&empty), block as u64);
    }

    #[test]
    fn a_budget_refuses_what_would_cross_it_and_warns_once_at_80_percent() {
        let b = MemoryBudget::new(1000);
        assert_eq!(b.charge(700), Ok(700));
        assert!(!b.should_warn(700));
        assert_eq!(b.charge(150), Ok(850));
        assert!(b.should_warn(850));
        assert!(!b.should_warn(900), "once");
        assert_eq!(b.charge(151), Err(1001));
        assert_eq!(b.used(), 850, "a refused charge is not kept");
        b.release(200);
        assert!(b.should_warn(b.charge(200).unwrap()), "re-armed under 70 %");
        b.release(10_000);
        assert_eq!(b.used(), 0);
    }
}
