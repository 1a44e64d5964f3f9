//! The memory a JSON list may cost, bounded by its body.
//!
//! A list's items are owned values whose size does not depend on their
//! text: `{"items":[{},{},…]}` spends three bytes of body per `Pod` of
//! several hundred bytes, so a 30 MB body of empty items would ask for
//! gigabytes. `decode` charges each element of the arrays that are values
//! of the top-level object (a list's `items`) its `size_of` against
//! [`MEMORY_PER_BYTE`] bytes per body byte plus [`MEMORY_FLOOR`] — the rule
//! kubeset-api's protobuf decoder applies (`protobuf::wire::Budget`) — and
//! refuses the body before the rest is allocated. The smallest real object
//! of any kind stays well inside it: the worst is a PersistentVolume with
//! only its name, uid, resourceVersion and creation time, about 130 bytes
//! of JSON for a 3.4 kB struct (the models hold their optional structs
//! inline, as k8s-openapi's), a factor of about 26.
//!
//! Only the top level is wrapped: each element is decoded by the plain
//! serde_json deserializer, so the models' decode code is not compiled a
//! second time and costs nothing more per field.
//!
//! Arrays nested deeper (a Pod's containers, in a list or alone) are
//! bounded before decoding by [`nested_objects`], a linear scan of the
//! body that allocates nothing: every object that is an element of such
//! an array is charged [`NESTED_ELEMENT`] bytes — at least the `size_of`
//! of every model element type, whose type the scan does not know —
//! against [`NESTED_PER_BYTE`] (272) bytes per body byte plus
//! [`MEMORY_FLOOR`]. The higher rate pays for not knowing the type: the
//! smallest real element (`{"port":80},`, 12 bytes) pays for itself, so
//! real bodies pass whatever they hold, while `[{},{},…]` (3 bytes per
//! element) is refused past the floor: nested elements cost at most 272×
//! their body instead of over 1,000×. Scalars and
//! arrays as elements need no charge: a `String`, a `Quantity` or a
//! `Value` is at most 32 bytes for at least two bytes of body. Not
//! covered: maps of objects (`JSONSchemaProps.properties`), and element
//! types of the user's own (derived) resources larger than
//! [`NESTED_ELEMENT`].

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// Bytes of decoded list elements allowed per byte of body.
pub(crate) const MEMORY_PER_BYTE: usize = 64;

/// Bytes allowed whatever the body's size.
pub(crate) const MEMORY_FLOOR: usize = 1024 * 1024;

/// What an object nested in an array is charged: at least the `size_of`
/// of every model type that is an element of a nested array (the largest
/// is `Volume`, 3,208 bytes, by the generator's layout table;
/// `kubeset-client/tests/nested_budget.rs` checks the largest ones).
pub(crate) const NESTED_ELEMENT: usize = 3264;

/// Bytes of nested array elements allowed per byte of body: an object of
/// 11 bytes of text (`{"port":80}`, 12 with its comma), the smallest real
/// one, pays for itself.
pub(crate) const NESTED_PER_BYTE: usize = NESTED_ELEMENT / 12;

/// Open containers the scan tracks: serde_json refuses deeper bodies.
const MAX_DEPTH: usize = 128;

/// What [`nested_objects`] looks at: a string's start, an opening or a
/// closing bracket; everything else is skipped.
const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = 1;
    t[b'{' as usize] = 2;
    t[b'[' as usize] = 3;
    t[b'}' as usize] = 4;
    t[b']' as usize] = 4;
    t
};

/// Checks, before decoding, that the objects which are elements of arrays
/// below the top-level object's values (charged by type in [`decode`])
/// cost at most [`NESTED_PER_BYTE`] per body byte plus [`MEMORY_FLOOR`],
/// at [`NESTED_ELEMENT`] each. One pass, no allocation; a body that is not
/// JSON is left to the decoder's error.
pub(crate) fn nested_objects<E: de::Error>(body: &[u8]) -> Result<(), E> {
    let limit = body
        .len()
        .saturating_mul(NESTED_PER_BYTE)
        .saturating_add(MEMORY_FLOOR);
    let allowed = limit / NESTED_ELEMENT;
    // Every such object has a `{`: real bodies have few enough that the
    // structural scan is not needed (a count runs at memory speed).
    if count_braces(body) <= allowed {
        return Ok(());
    }
    // Bit d: the container open at depth d + 1 is an array.
    let mut arrays: u128 = 0;
    let (mut depth, mut count, mut i) = (0usize, 0usize, 0usize);
    while i < body.len() {
        match CLASS[usize::from(body[i])] {
            1 => i = string_end(body, i + 1),
            class @ (2 | 3) => {
                if depth >= MAX_DEPTH {
                    return Ok(());
                }
                // An object whose parent is an array at depth 3 or more.
                if class == 2 && depth >= 3 && (arrays >> (depth - 1)) & 1 == 1 {
                    count += 1;
                    if count > allowed {
                        return Err(E::custom(format_args!(
                            "{count} or more objects in nested arrays (the last at byte {i}) \
                             from a body of {} bytes exceed the decode memory limit of {limit} \
                             bytes ({NESTED_ELEMENT} per object, {NESTED_PER_BYTE} per body \
                             byte + {MEMORY_FLOOR})",
                            body.len()
                        )));
                    }
                }
                let bit = 1u128 << depth;
                arrays = if class == 3 {
                    arrays | bit
                } else {
                    arrays & !bit
                };
                depth += 1;
            }
            4 => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// How many `{` bytes `body` holds, strings included: per chunk of 255
/// into a `u8`, which the compiler turns into wide vector compares.
fn count_braces(body: &[u8]) -> usize {
    body.chunks(255)
        .map(|chunk| {
            let n: u8 = chunk.iter().map(|&b| u8::from(b == b'{')).sum();
            usize::from(n)
        })
        .sum()
}

/// The index of the quote that ends the string whose text starts at
/// `from` (the body's length when it never ends).
fn string_end(body: &[u8], mut from: usize) -> usize {
    while let Some(at) = memchr::memchr2(b'"', b'\\', body.get(from..).unwrap_or_default()) {
        let at = from + at;
        if body[at] == b'"' {
            return at;
        }
        // An escape: skip the escaped byte.
        from = at + 2;
    }
    body.len()
}

/// Decodes `T` from `de`, charging the top-level arrays' elements against
/// the limit of a body of `body_len` bytes.
pub(crate) fn decode<'de, T, D>(de: D, body_len: usize) -> Result<T, D::Error>
where
    T: de::Deserialize<'de>,
    D: Deserializer<'de>,
{
    let limit = body_len
        .saturating_mul(MEMORY_PER_BYTE)
        .saturating_add(MEMORY_FLOOR);
    let budget = Budget {
        spent: Cell::new(0),
        items: Cell::new(0),
        limit,
        body_len,
    };
    T::deserialize(Top {
        de,
        budget: &budget,
    })
}

struct Budget {
    spent: Cell<usize>,
    items: Cell<usize>,
    limit: usize,
    body_len: usize,
}

impl Budget {
    fn charge<E: de::Error>(&self, size: usize) -> Result<(), E> {
        let spent = self.spent.get().saturating_add(size);
        let items = self.items.get() + 1;
        if spent > self.limit {
            return Err(E::custom(format_args!(
                "a list of {items} or more items of {size} bytes each from a body of {} bytes \
                 exceeds the decode memory limit of {} bytes ({MEMORY_PER_BYTE} per body byte \
                 + {MEMORY_FLOOR})",
                self.body_len, self.limit
            )));
        }
        self.spent.set(spent);
        self.items.set(items);
        Ok(())
    }
}

/// The deserializer of the top-level value (`depth` 0) or of one of its
/// map's values (`depth` 1): both see arrays charged; only the top level
/// passes the charge on to its values.
struct Top<'b, D> {
    de: D,
    budget: &'b Budget,
}

struct Value<'b, D> {
    de: D,
    budget: &'b Budget,
}

/// Wraps a visitor so that a sequence it visits is charged, and (at the
/// top level) a map's values get [`Value`] deserializers.
struct Charging<'b, V> {
    visitor: V,
    budget: &'b Budget,
    top: bool,
}

/// `deserialize_<what>(self, <args>, v)` → the same on the inner
/// deserializer, the visitor wrapped: every method keeps its own meaning
/// (no funnelling through `deserialize_any`).
macro_rules! forward {
    ($top:expr; $($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* v: V) -> Result<V::Value, D::Error> {
                self.de.$method($($arg,)* self.budget.wrap(v, $top))
            }
        )*
    };
}

macro_rules! forward_deserializer {
    ($wrapper:ident, $top:expr) => {
        impl<'de, 'b, D: Deserializer<'de>> Deserializer<'de> for $wrapper<'b, D> {
            type Error = D::Error;

            forward! { $top;
                deserialize_any(); deserialize_bool(); deserialize_i8(); deserialize_i16();
                deserialize_i32(); deserialize_i64(); deserialize_i128(); deserialize_u8();
                deserialize_u16(); deserialize_u32(); deserialize_u64(); deserialize_u128();
                deserialize_f32(); deserialize_f64(); deserialize_char(); deserialize_str();
                deserialize_string(); deserialize_bytes(); deserialize_byte_buf();
                deserialize_option(); deserialize_unit(); deserialize_seq(); deserialize_map();
                deserialize_identifier(); deserialize_ignored_any();
                deserialize_unit_struct(name: &'static str);
                deserialize_newtype_struct(name: &'static str);
                deserialize_tuple(len: usize);
                deserialize_tuple_struct(name: &'static str, len: usize);
                deserialize_struct(name: &'static str, fields: &'static [&'static str]);
                deserialize_enum(name: &'static str, variants: &'static [&'static str]);
            }

            fn is_human_readable(&self) -> bool {
                self.de.is_human_readable()
            }
        }
    };
}

forward_deserializer!(Top, true);
forward_deserializer!(Value, false);

impl Budget {
    fn wrap<V>(&self, visitor: V, top: bool) -> Charging<'_, V> {
        Charging {
            visitor,
            budget: self,
            top,
        }
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Charging<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_seq(ChargedSeq {
            seq,
            budget: self.budget,
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        if self.top {
            self.visitor.visit_map(TopMap {
                map,
                budget: self.budget,
            })
        } else {
            self.visitor.visit_map(map)
        }
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        if self.top {
            self.visitor.visit_some(Top {
                de: d,
                budget: self.budget,
            })
        } else {
            self.visitor.visit_some(Value {
                de: d,
                budget: self.budget,
            })
        }
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_newtype_struct(d)
    }
    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_none()
    }
    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_unit()
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<V::Value, E> {
        self.visitor.visit_bool(v)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<V::Value, E> {
        self.visitor.visit_i64(v)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<V::Value, E> {
        self.visitor.visit_u64(v)
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<V::Value, E> {
        self.visitor.visit_i128(v)
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<V::Value, E> {
        self.visitor.visit_u128(v)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<V::Value, E> {
        self.visitor.visit_f64(v)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        self.visitor.visit_str(v)
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        self.visitor.visit_borrowed_str(v)
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        self.visitor.visit_string(v)
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<V::Value, E> {
        self.visitor.visit_bytes(v)
    }
    fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<V::Value, E> {
        self.visitor.visit_borrowed_bytes(v)
    }
    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<V::Value, E> {
        self.visitor.visit_byte_buf(v)
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_enum(data)
    }
}

/// A sequence whose every element is charged its `size_of` first.
struct ChargedSeq<'b, A> {
    seq: A,
    budget: &'b Budget,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for ChargedSeq<'_, A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        // Charged once decoded: the vector may hold one element past the
        // limit before the body is refused.
        let element = self.seq.next_element_seed(seed)?;
        if element.is_some() {
            self.budget
                .charge::<A::Error>(std::mem::size_of::<T::Value>())?;
        }
        Ok(element)
    }

    fn size_hint(&self) -> Option<usize> {
        self.seq.size_hint()
    }
}

/// The top-level map: its values are decoded through [`Value`].
struct TopMap<'b, A> {
    map: A,
    budget: &'b Budget,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for TopMap<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.map.next_key_seed(seed)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(ValueSeed {
            seed,
            budget: self.budget,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

struct ValueSeed<'b, S> {
    seed: S,
    budget: &'b Budget,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for ValueSeed<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(Value {
            de,
            budget: self.budget,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use crate::response::decode::from_json;

    /// A list item the size of a small model, whatever its text.
    #[derive(Debug, Default, Deserialize, PartialEq)]
    #[serde(default)]
    struct Item {
        name: Option<String>,
        pad: Option<([u64; 30], [u64; 30])>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct List {
        kind: String,
        items: Option<Vec<Item>>,
        phase: Option<Phase>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    enum Phase {
        Running,
    }

    fn body(items: usize, item: &str) -> Vec<u8> {
        let mut b = br#"{"kind":"ItemList","items":["#.to_vec();
        for i in 0..items {
            if i > 0 {
                b.push(b',');
            }
            b.extend_from_slice(item.as_bytes());
        }
        b.extend_from_slice(b"]}");
        b
    }

    #[test]
    fn a_list_of_empty_items_is_refused_before_it_is_allocated() {
        // 100,000 items of 512 bytes from 300 kB: 51 MB, past 64 × 300 kB + 1 MiB.
        let size = std::mem::size_of::<Item>();
        assert!(size >= 480, "{size}");
        let e = from_json::<List>(&body(100_000, "{}")).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("exceeds the decode memory limit"), "{text}");
        assert!(
            text.contains(&format!("items of {size} bytes each")),
            "{text}"
        );
        // A serde_json Value element (32 bytes) costs at most 16 per body
        // byte (`[],`): such lists stay within the limit and decode.
        let v = from_json::<serde_json::Value>(&body(100_000, "[]")).map(|_| ());
        assert!(v.is_ok(), "{}", v.unwrap_err());
    }

    /// `{"spec":{"containers":[E,E,…]}}`, wrapped in a list's `items`
    /// when `in_list`.
    fn pod(elements: usize, element: &str, in_list: bool) -> Vec<u8> {
        let list = vec![element; elements].join(",");
        let pod = format!(r#"{{"spec":{{"containers":[{list}]}}}}"#);
        if in_list {
            format!(r#"{{"items":[{pod}]}}"#).into_bytes()
        } else {
            pod.into_bytes()
        }
    }

    #[test]
    fn a_pod_of_empty_containers_is_refused_before_it_is_allocated() {
        // 100,000 × 3,264 bytes charged for 300 kB, past 272 per byte + 1 MiB;
        // it decoded to about 214 MB of Containers before.
        for in_list in [false, true] {
            let e = from_json::<serde_json::Value>(&pod(100_000, "{}", in_list)).unwrap_err();
            let text = e.to_string();
            assert!(text.contains("objects in nested arrays"), "{text}");
            assert!(text.contains("exceed the decode memory limit"), "{text}");
        }
        // Below the floor, and past it with elements that pay for themselves.
        assert!(from_json::<serde_json::Value>(&pod(300, "{}", false)).is_ok());
        let port = r#"{"port":80}"#;
        let v = from_json::<serde_json::Value>(&pod(100_000, port, true)).map(|_| ());
        assert!(v.is_ok(), "{}", v.unwrap_err());
    }

    #[test]
    fn brackets_in_strings_and_the_top_level_arrays_are_not_counted() {
        // 400,000 `{}` inside a nested array's string, escaped quotes
        // included: text, not objects.
        let text = r#"\"[{},{}]\" "#.repeat(40_000);
        let body = format!(r#"{{"spec":{{"args":["{text}"]}}}}"#);
        assert!(from_json::<serde_json::Value>(body.as_bytes()).is_ok());
        // The elements of a list's items are charged by their type instead.
        let list = format!(r#"{{"items":[{}]}}"#, vec!["{}"; 100_000].join(","));
        let v: serde_json::Value = from_json(list.as_bytes()).unwrap();
        assert_eq!(v["items"].as_array().map(Vec::len), Some(100_000));
    }

    #[test]
    fn real_sized_items_and_everything_else_decode_as_before() {
        let item = r#"{"name":"a-config-map-with-a-name-as-real-ones-have-0000000000000000"}"#;
        let list: List = from_json(&body(20_000, item)).unwrap();
        assert_eq!(list.items.as_ref().map(Vec::len), Some(20_000));
        // Below the floor any list decodes.
        let small: List = from_json(&body(1_000, "{}")).unwrap();
        assert_eq!(small.items.map(|i| i.len()), Some(1_000));
        // An enum at the top level, null, trailing white space, a top-level array.
        let l: List = from_json(br#"{"kind":"K","items":null,"phase":"Running"} "#).unwrap();
        assert_eq!((l.items, l.phase), (None, Some(Phase::Running)));
        let v: Vec<u32> = from_json(b"[1,2,3]").unwrap();
        assert_eq!(v, [1, 2, 3]);
        assert!(from_json::<List>(br#"{"kind":"K"} x"#).is_err());
    }
}
