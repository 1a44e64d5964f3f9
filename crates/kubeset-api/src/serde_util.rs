//! Serde support for the generated models, written once here so that the
//! generated code stays short and monomorphises into few, small functions.
//!
//! Every generated struct implements [`DeStruct`]: its JSON field names, a
//! non-generic `index` function matching a key to a field (compiled once, in
//! this crate) and one generic `read` function with a `match` on the
//! field's index. One generic visitor ([`StructVisitor`])
//! drives them all:
//!
//! - unknown keys (including `apiVersion`/`kind` of top-level objects) are
//!   skipped with [`IgnoredAny`];
//! - `null` for an optional field reads as `None` (`Option`'s own impl);
//! - `null` for a required field reads as the default value ([`required`]);
//! - a `null` value in a map (of anything but arbitrary JSON) is an absent
//!   entry ([`optional_map`]);
//! - a missing field keeps its default value;
//! - a repeated key: the last value wins, as in Go's `encoding/json`;
//! - a type error inside a field's value names the innermost struct and
//!   field (`in `ContainerPort.containerPort`: invalid type: …`); syntax,
//!   EOF and I/O errors keep their message and category.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// A struct read key by key by [`deserialize_struct`]; implemented by the
/// generated code.
pub(crate) trait DeStruct: Default {
    /// Type name, for messages.
    const NAME: &'static str;
    /// JSON field names; a name's position is its index. Fields the
    /// selected Kubernetes version lacks are listed too (and a field with
    /// a form per version twice), so positions are the same in every
    /// version.
    const FIELDS: &'static [&'static str];
    /// The index of the field named `key`, `None` for an unknown key.
    fn index(key: &str) -> Option<usize>;
    /// Reads the value of field `FIELDS[index]` from `map` into `self`.
    fn read<'de, A: MapAccess<'de>>(&mut self, index: usize, map: &mut A) -> Result<(), A::Error>;
}

/// `Deserialize::deserialize` of every generated struct.
pub(crate) fn deserialize_struct<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeStruct,
{
    deserializer.deserialize_struct(T::NAME, T::FIELDS, StructVisitor(PhantomData))
}

/// The one map visitor of the generated structs.
struct StructVisitor<T>(PhantomData<fn() -> T>);

impl<'de, T: DeStruct> Visitor<'de> for StructVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "struct {}", T::NAME)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut out = T::default();
        while let Some(key) = map.next_key_seed(Key(T::index))? {
            match key {
                Some(index) => out
                    .read(index, &mut map)
                    .map_err(|e| in_field(T::NAME, T::FIELDS, index, e))?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(out)
    }
}

/// A map key: the index of a known field, `None` for an unknown one. Not
/// generic over the struct, so one instantiation serves them all.
struct Key(fn(&str) -> Option<usize>);

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl Visitor<'_> for Key {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok((self.0)(v))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        match std::str::from_utf8(v) {
            Ok(s) => self.visit_str(s),
            Err(_) => Ok(None),
        }
    }
}

/// Prefix of the messages of [`in_field`].
const IN_FIELD: &str = "in `";

/// Messages of serde's type errors (`de::Error::invalid_type`,
/// `invalid_value`, `invalid_length`): the ones [`in_field`] names a field in.
const TYPE_ERRORS: &[&str] = &["invalid type: ", "invalid value: ", "invalid length "];

/// Names the innermost struct and field in a type error from a field's
/// value (`in `Pod.spec`: invalid type: …`). Other errors (syntax, EOF, I/O,
/// custom) are returned as they are, so that serde_json's category
/// (`is_eof()`, `is_syntax()`) survives. Outer structs leave a named message
/// alone, and the position the format added to the inner message
/// (serde_json's ` at line L column C`) is dropped: the format adds the
/// position again when the error leaves the struct.
#[cold]
#[inline(never)]
fn in_field<E: de::Error>(ty: &str, fields: &[&str], index: usize, e: E) -> E {
    let msg = e.to_string();
    if !TYPE_ERRORS.iter().any(|p| msg.starts_with(p)) {
        return e;
    }
    let field = fields.get(index).copied().unwrap_or("?");
    E::custom(format_args!(
        "{IN_FIELD}{ty}.{field}`: {}",
        without_position(&msg)
    ))
}

/// `msg` without a trailing ` at line L column C`.
fn without_position(msg: &str) -> &str {
    let Some(at) = msg.rfind(" at line ") else {
        return msg;
    };
    let rest = &msg[at + " at line ".len()..];
    let mut parts = rest.splitn(3, ' ');
    let digits =
        |s: Option<&str>| s.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    let line = parts.next();
    let column_word = parts.next();
    let column = parts.next();
    if digits(line) && column_word == Some("column") && digits(column) {
        &msg[..at]
    } else {
        msg
    }
}

/// A required field's value: `null` reads as the default value.
pub(crate) fn required<'de, A, T>(map: &mut A) -> Result<T, A::Error>
where
    A: MapAccess<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(map.next_value::<Option<T>>()?.unwrap_or_default())
}

/// A required list field (`null` reads as empty), without spare capacity.
///
/// JSON arrays carry no length, so a `Vec` grows by doubling while it is
/// read and keeps up to half its capacity unused. Objects are decoded to
/// be kept (caches of thousands of them), and list elements are large
/// (`Volume` is over 3 KB): measured on 10,000 realistic Pods, spare
/// capacity was about 7 KB of the 37 KB each Pod held.
pub(crate) fn required_vec<'de, A, T>(map: &mut A) -> Result<Vec<T>, A::Error>
where
    A: MapAccess<'de>,
    T: Deserialize<'de>,
{
    let mut list = map.next_value::<Option<Vec<T>>>()?.unwrap_or_default();
    list.shrink_to_fit();
    Ok(list)
}

/// An optional list field, without spare capacity (see [`required_vec`]).
pub(crate) fn optional_vec<'de, A, T>(map: &mut A) -> Result<Option<Vec<T>>, A::Error>
where
    A: MapAccess<'de>,
    T: Deserialize<'de>,
{
    let mut list = map.next_value::<Option<Vec<T>>>()?;
    if let Some(list) = list.as_mut() {
        list.shrink_to_fit();
    }
    Ok(list)
}

/// A map field's entries, a `null` value read as an absent entry: Go
/// writes a zero `Time` in a `map[string]metav1.Time` as `null`, and
/// kube-apiserver keeps such a `null` as it was sent; one must not fail the
/// whole object. (Maps of arbitrary JSON keep their `null`s: they are not
/// read through this.)
struct SkipNulls<T>(BTreeMap<String, T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for SkipNulls<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = SkipNulls<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = BTreeMap::new();
                while let Some((k, v)) = map.next_entry::<String, Option<T>>()? {
                    if let Some(v) = v {
                        out.insert(k, v);
                    }
                }
                Ok(SkipNulls(out))
            }
        }
        deserializer.deserialize_map(V(PhantomData))
    }
}

/// An optional map field; `null` values are absent entries ([`SkipNulls`]).
pub(crate) fn optional_map<'de, A, T>(map: &mut A) -> Result<Option<BTreeMap<String, T>>, A::Error>
where
    A: MapAccess<'de>,
    T: Deserialize<'de>,
{
    Ok(map.next_value::<Option<SkipNulls<T>>>()?.map(|m| m.0))
}

/// A required map field (`null` reads as empty); `null` values are
/// absent entries ([`SkipNulls`]). Only group-versions outside the default
/// features have required maps (resource.k8s.io's `counters`).
#[allow(dead_code)]
pub(crate) fn required_map<'de, A, T>(map: &mut A) -> Result<BTreeMap<String, T>, A::Error>
where
    A: MapAccess<'de>,
    T: Deserialize<'de>,
{
    Ok(map
        .next_value::<Option<SkipNulls<T>>>()?
        .map(|m| m.0)
        .unwrap_or_default())
}

/// Required fields outside the generated structs (`List<T>`): `null` reads
/// as the default value.
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

// The float helper is named by generated code only where a spec has
// `number` fields (today: CRD schemas, feature `apiextensions-v1`).

/// A float written as Go's `encoding/json` writes it: integral values
/// without a fraction (`1`, not `1.0`), so that schema bounds round-trip.
#[allow(dead_code)]
pub(crate) struct GoFloat(pub(crate) f64);

/// Largest integer an `f64` holds exactly.
#[allow(dead_code)]
const EXACT: f64 = 9_007_199_254_740_992.0;

impl serde::Serialize for GoFloat {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let v = self.0;
        if v.fract() == 0.0 && v.abs() <= EXACT {
            // Exact: |v| ≤ 2^53 and integral.
            serializer.serialize_i64(v as i64)
        } else {
            serializer.serialize_f64(v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-written `DeStruct`, as the generator writes them.
    #[derive(Debug, Default, PartialEq)]
    struct Port {
        container_port: i32,
        name: Option<String>,
        labels: Option<std::collections::BTreeMap<String, String>>,
        inner: Option<Inner>,
        items: Vec<Inner>,
    }

    #[derive(Debug, Default, PartialEq)]
    struct Inner {
        value: String,
    }

    impl DeStruct for Port {
        const NAME: &'static str = "Port";
        const FIELDS: &'static [&'static str] =
            &["containerPort", "inner", "items", "labels", "name"];
        fn index(key: &str) -> Option<usize> {
            Self::FIELDS.iter().position(|f| *f == key)
        }
        fn read<'de, A: MapAccess<'de>>(
            &mut self,
            index: usize,
            map: &mut A,
        ) -> Result<(), A::Error> {
            match index {
                0 => self.container_port = required(map)?,
                1 => self.inner = map.next_value()?,
                2 => self.items = required(map)?,
                3 => self.labels = optional_map(map)?,
                4 => self.name = map.next_value()?,
                _ => {}
            }
            Ok(())
        }
    }

    impl<'de> Deserialize<'de> for Port {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            deserialize_struct(d)
        }
    }

    impl DeStruct for Inner {
        const NAME: &'static str = "Inner";
        const FIELDS: &'static [&'static str] = &["value"];
        fn index(key: &str) -> Option<usize> {
            (key == "value").then_some(0)
        }
        fn read<'de, A: MapAccess<'de>>(
            &mut self,
            index: usize,
            map: &mut A,
        ) -> Result<(), A::Error> {
            if index == 0 {
                self.value = required(map)?;
            }
            Ok(())
        }
    }

    impl<'de> Deserialize<'de> for Inner {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            deserialize_struct(d)
        }
    }

    fn port(json: &str) -> Result<Port, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn fields_are_read_by_name() {
        let p = port(
            r#"{"name":"http","containerPort":8080,"labels":{"a":"b"},
                "inner":{"value":"x"},"items":[{"value":"y"},{}]}"#,
        )
        .unwrap();
        assert_eq!(p.container_port, 8080);
        assert_eq!(p.name.as_deref(), Some("http"));
        assert_eq!(p.labels.unwrap()["a"], "b");
        assert_eq!(p.inner.unwrap().value, "x");
        assert_eq!(p.items.len(), 2);
        assert_eq!(p.items[0].value, "y");
        assert_eq!(p.items[1].value, "");
    }

    #[test]
    fn null_for_a_required_field_is_the_default() {
        let p = port(r#"{"containerPort":null,"items":null,"inner":{"value":null}}"#).unwrap();
        assert_eq!(p.container_port, 0);
        assert!(p.items.is_empty());
        assert_eq!(p.inner.unwrap().value, "");
    }

    #[test]
    fn null_for_an_optional_field_is_none() {
        let p = port(r#"{"name":null,"labels":null,"inner":null,"containerPort":1}"#).unwrap();
        assert_eq!(
            p,
            Port {
                container_port: 1,
                ..Port::default()
            }
        );
    }

    #[test]
    fn a_null_value_in_a_map_is_an_absent_entry() {
        let p = port(r#"{"labels":{"a":"1","b":null,"c":"3"}}"#).unwrap();
        let labels = p.labels.unwrap();
        assert_eq!(labels.keys().collect::<Vec<_>>(), ["a", "c"]);
        // Other values of the wrong type still fail, naming the field.
        let e = port(r#"{"labels":{"a":1}}"#).unwrap_err().to_string();
        assert!(e.contains("Port.labels"), "{e}");
    }

    #[test]
    fn missing_fields_are_defaults() {
        assert_eq!(port("{}").unwrap(), Port::default());
    }

    #[test]
    fn unknown_fields_of_any_shape_are_skipped() {
        let p = port(
            r#"{"apiVersion":"v1","kind":"Port","x":{"deep":[1,{"a":null}]},
                "containerPort":7,"y":[],"z":"s","Name":"case matters"}"#,
        )
        .unwrap();
        assert_eq!(p.container_port, 7);
        assert_eq!(p.name, None);
    }

    #[test]
    fn a_repeated_key_takes_the_last_value() {
        let p = port(r#"{"containerPort":1,"name":"a","containerPort":2,"name":null}"#).unwrap();
        assert_eq!(p.container_port, 2);
        assert_eq!(p.name, None);
    }

    #[test]
    fn a_wrong_type_names_the_innermost_field() {
        let e = port(r#"{"containerPort":"80"}"#).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "in `Port.containerPort`: invalid type: string \"80\", expected i32 at line 1 column"
            ),
            "{e}"
        );
        assert_eq!(e.matches(" at line ").count(), 1, "{e}");

        let e = port(r#"{"items":[{"value":"a"},{"value":5}]}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("in `Inner.value`: invalid type: integer `5`, expected a string"),
            "{e}"
        );
        assert_eq!(e.matches(" at line ").count(), 1, "{e}");
        // The position is where the error left `Inner`: its closing brace.
        assert!(e.ends_with("line 1 column 35"), "{e}");
    }

    #[test]
    fn a_struct_must_be_an_object() {
        let e = port(r#"[1]"#).unwrap_err().to_string();
        assert!(
            e.starts_with("invalid type: sequence, expected struct Port"),
            "{e}"
        );
        let e = port(r#"{"inner":"x"}"#).unwrap_err().to_string();
        assert!(
            e.starts_with("in `Port.inner`: invalid type: string \"x\", expected struct Inner"),
            "{e}"
        );
    }

    #[test]
    fn truncated_input_is_an_eof_error() {
        for json in [r#"{"containerPort":1"#, r#"{"inner":{"value":"#, r#"{"#] {
            let e = port(json).unwrap_err();
            assert!(e.is_eof(), "{json}: {e}");
        }
        let e = port(r#"{"inner":{"value" 1}}"#).unwrap_err();
        assert!(e.is_syntax(), "{e}");
        assert!(!e.to_string().starts_with(IN_FIELD), "{e}");
    }

    #[test]
    fn positions_are_only_stripped_when_well_formed() {
        assert_eq!(without_position("bad at line 3 column 14"), "bad");
        assert_eq!(
            without_position("bad at line x column 14"),
            "bad at line x column 14"
        );
        assert_eq!(without_position("bad at line 3"), "bad at line 3");
        assert_eq!(without_position("bad"), "bad");
    }

    #[test]
    fn floats_are_written_like_go() {
        let s = |v: f64| serde_json::to_string(&GoFloat(v)).unwrap();
        assert_eq!(s(1.0), "1");
        assert_eq!(s(-10.0), "-10");
        assert_eq!(s(1.5), "1.5");
        assert_eq!(s(1e300), "1e+300");
        assert_eq!(s(0.0), "0");
    }
}
