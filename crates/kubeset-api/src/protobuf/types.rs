//! The codecs of the hand-written types, as Go's custom marshallers write
//! them.

use super::wire::{self, Budget, Value};
use super::{DecodeError, Message};
use crate::apimachinery::pkg::apis::meta::v1::ListMeta;
use crate::types::{FieldsV1, IntOrString, List, Quantity, RawExtension};

fn json_error(what: &'static str) -> impl Fn(serde_json::Error) -> DecodeError {
    move |e| DecodeError::EmbeddedJson {
        what,
        reason: e.to_string(),
    }
}

/// What a parsed JSON value may take per byte of its text, charged before
/// parsing: a `serde_json::Value` is 32 bytes, and `[0,0,…]` makes one of
/// every two bytes (a map of one-letter keys, about one entry of 56 bytes
/// and its node share per six).
const JSON_PER_BYTE: usize = 16;

/// JSON bytes of an embedded value (`RawExtension`, `JSON`); empty is null.
fn json_value(
    value: Value<'_>,
    what: &'static str,
    budget: &mut Budget,
) -> Result<serde_json::Value, DecodeError> {
    let b = wire::raw(value)?;
    if b.is_empty() {
        return Ok(serde_json::Value::Null);
    }
    budget.charge_bytes(b.len().saturating_mul(JSON_PER_BYTE), 1, || what.to_owned())?;
    serde_json::from_slice(b).map_err(json_error(what))
}

fn put_json(buf: &mut Vec<u8>, number: u32, v: &serde_json::Value) {
    // Writing a `Value` to a `Vec` cannot fail.
    let text = serde_json::to_vec(v).unwrap_or_default();
    wire::put_raw(buf, number, &text);
}

/// `{ string = 1 }`: the quantity's text.
impl Message for Quantity {
    fn encode_fields(&self, buf: &mut Vec<u8>) {
        wire::put_string(buf, 1, &self.0);
    }
    fn merge_field(
        &mut self,
        number: u32,
        value: Value<'_>,
        _: &mut Budget,
    ) -> Result<(), DecodeError> {
        if number == 1 {
            self.0 = wire::string(value)?;
        }
        Ok(())
    }
}

/// `{ type = 1; intVal = 2; strVal = 3 }`, every field written, as Go does.
impl Message for IntOrString {
    fn encode_fields(&self, buf: &mut Vec<u8>) {
        let (kind, int, s) = match self {
            Self::Int(i) => (0, *i, ""),
            Self::String(s) => (1, 0, s.as_str()),
        };
        wire::put_int64(buf, 1, &kind);
        wire::put_int32(buf, 2, &int);
        wire::put_raw(buf, 3, s.as_bytes());
    }
    fn merge_field(
        &mut self,
        number: u32,
        value: Value<'_>,
        _: &mut Budget,
    ) -> Result<(), DecodeError> {
        match number {
            1 => match wire::int64(value)? {
                0 if matches!(self, Self::String(_)) => *self = Self::Int(0),
                0 => {}
                1 => {
                    if let Self::Int(_) = self {
                        *self = Self::String(String::new());
                    }
                }
                other => return Err(DecodeError::IntOrStringType { value: other }),
            },
            2 => {
                let v = wire::int32(value)?;
                if let Self::Int(i) = self {
                    *i = v;
                }
            }
            3 => {
                let v = wire::string(value)?;
                if let Self::String(s) = self {
                    *s = v;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// The codec of a JSON value on the wire (`RawExtension`, `JSON`):
/// `{ raw = 1 }`, the value's JSON text; a decode error names the type.
macro_rules! raw_json {
    ($ty:ident) => {
        impl Message for $ty {
            fn encode_fields(&self, buf: &mut Vec<u8>) {
                put_json(buf, 1, &self.0);
            }
            fn merge_field(
                &mut self,
                number: u32,
                value: Value<'_>,
                budget: &mut Budget,
            ) -> Result<(), DecodeError> {
                if number == 1 {
                    self.0 = json_value(value, stringify!($ty), budget)?;
                }
                Ok(())
            }
        }
    };
}

raw_json!(RawExtension);

/// `{ Raw = 1 }`: the field set's JSON text, kept as received (checked to
/// be JSON when written as JSON, as Go does; see [`FieldsV1`]).
impl Message for FieldsV1 {
    fn encode_fields(&self, buf: &mut Vec<u8>) {
        wire::put_raw(buf, 1, self.as_json().as_bytes());
    }
    fn merge_field(
        &mut self,
        number: u32,
        value: Value<'_>,
        _: &mut Budget,
    ) -> Result<(), DecodeError> {
        if number == 1 {
            let b = wire::raw(value)?;
            if b.is_empty() {
                *self = Self::default();
            } else {
                let text = std::str::from_utf8(b).map_err(|_| DecodeError::Utf8)?;
                *self = Self::from_wire(text);
            }
        }
        Ok(())
    }
}

/// `{ metadata = 1; repeated items = 2 }`, the shape of every `…List`.
impl<T: Message + Default> Message for List<T> {
    fn encode_fields(&self, buf: &mut Vec<u8>) {
        wire::put_message(buf, 1, &self.metadata);
        for item in &self.items {
            wire::put_message(buf, 2, item);
        }
    }
    fn merge_field(
        &mut self,
        number: u32,
        value: Value<'_>,
        budget: &mut Budget,
    ) -> Result<(), DecodeError> {
        match number {
            1 => wire::merge(&mut self.metadata as &mut ListMeta, value, budget)?,
            2 => {
                let item = wire::message(value, budget)?;
                wire::push(&mut self.items, item, budget)?;
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(feature = "apiextensions-v1")]
mod json_schema {
    use super::*;
    use crate::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
    use crate::types::{
        JSON, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool, JSONSchemaPropsOrStringArray,
    };

    raw_json!(JSON);

    /// A schema read into a new box, charged.
    fn boxed(value: Value<'_>, budget: &mut Budget) -> Result<Box<JSONSchemaProps>, DecodeError> {
        budget.charge::<JSONSchemaProps>(1)?;
        Ok(Box::new(wire::message(value, budget)?))
    }

    /// Go's zero value: no schemas.
    impl Default for JSONSchemaPropsOrArray {
        fn default() -> Self {
            Self::Schemas(Vec::new())
        }
    }

    /// Go's zero value: not allowed.
    impl Default for JSONSchemaPropsOrBool {
        fn default() -> Self {
            Self::Bool(false)
        }
    }

    /// `{ allows = 1; schema = 2 }`; a schema implies `allows: true`.
    impl Message for JSONSchemaPropsOrBool {
        fn encode_fields(&self, buf: &mut Vec<u8>) {
            match self {
                Self::Bool(b) => wire::put_bool(buf, 1, b),
                Self::Schema(s) => {
                    wire::put_bool(buf, 1, &true);
                    wire::put_message(buf, 2, &**s);
                }
            }
        }
        fn merge_field(
            &mut self,
            number: u32,
            value: Value<'_>,
            budget: &mut Budget,
        ) -> Result<(), DecodeError> {
            match (number, &mut *self) {
                (1, Self::Bool(b)) => *b = wire::bool(value)?,
                (2, Self::Schema(s)) => wire::merge(&mut **s, value, budget)?,
                (2, Self::Bool(_)) => {
                    *self = Self::Schema(boxed(value, budget)?);
                }
                _ => {}
            }
            Ok(())
        }
    }

    /// Go's zero value: no property names.
    impl Default for JSONSchemaPropsOrStringArray {
        fn default() -> Self {
            Self::Strings(Vec::new())
        }
    }

    /// The codec of a schema or a list (`JSONSchemaPropsOrArray`'s
    /// `{ schema = 1; repeated jSONSchemas = 2 }`,
    /// `JSONSchemaPropsOrStringArray`'s `{ schema = 1; repeated property =
    /// 2 }`): Go writes one of them. Read, a schema is taken while no item
    /// is; an item after a schema starts the list.
    macro_rules! schema_or_list {
        ($ty:ident::$list:ident, put: $put:path, read: $read:expr) => {
            impl Message for $ty {
                fn encode_fields(&self, buf: &mut Vec<u8>) {
                    match self {
                        Self::Schema(s) => wire::put_message(buf, 1, &**s),
                        Self::$list(list) => {
                            for item in list {
                                $put(buf, 2, item);
                            }
                        }
                    }
                }
                fn merge_field(
                    &mut self,
                    number: u32,
                    value: Value<'_>,
                    budget: &mut Budget,
                ) -> Result<(), DecodeError> {
                    match (number, &mut *self) {
                        (1, Self::Schema(s)) => wire::merge(&mut **s, value, budget)?,
                        (1, Self::$list(list)) if list.is_empty() => {
                            *self = Self::Schema(boxed(value, budget)?);
                        }
                        (2, Self::$list(list)) => wire::push(list, $read(value, budget)?, budget)?,
                        (2, Self::Schema(_)) => {
                            let mut list = Vec::new();
                            wire::push(&mut list, $read(value, budget)?, budget)?;
                            *self = Self::$list(list);
                        }
                        _ => {}
                    }
                    Ok(())
                }
            }
        };
    }

    schema_or_list!(JSONSchemaPropsOrArray::Schemas, put: wire::put_message, read: wire::message);
    schema_or_list!(
        JSONSchemaPropsOrStringArray::Strings,
        put: wire::put_string,
        read: |value, _: &mut Budget| wire::string(value)
    );

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::protobuf::{decode, encode};

        fn schema(description: &str) -> JSONSchemaProps {
            JSONSchemaProps {
                description: Some(description.to_owned()),
                ..Default::default()
            }
        }

        fn round_trip<M: Message + Default>(m: &M) -> M {
            decode(&encode(m)).expect("decodes")
        }

        #[test]
        fn json_round_trips_and_names_itself_when_not_json() {
            let v = JSON(serde_json::json!({"a": [1, "b", null]}));
            assert_eq!(round_trip(&v), v);
            let mut bad = Vec::new();
            wire::put_raw(&mut bad, 1, b"{not json");
            match decode::<JSON>(&bad) {
                Err(DecodeError::EmbeddedJson { what, .. }) => assert_eq!(what, "JSON"),
                other => panic!("{other:?}"),
            }
        }

        #[test]
        fn schema_or_array_round_trips_either_form() {
            let one = JSONSchemaPropsOrArray::Schema(Box::new(schema("a")));
            assert_eq!(round_trip(&one), one);
            let many = JSONSchemaPropsOrArray::Schemas(vec![schema("a"), schema("b")]);
            assert_eq!(round_trip(&many), many);
            assert_eq!(
                round_trip(&JSONSchemaPropsOrArray::default()),
                JSONSchemaPropsOrArray::default()
            );
        }

        #[test]
        fn schema_or_string_array_round_trips_either_form() {
            let one = JSONSchemaPropsOrStringArray::Schema(Box::new(schema("a")));
            assert_eq!(round_trip(&one), one);
            let names = JSONSchemaPropsOrStringArray::Strings(vec!["x".into(), "y".into()]);
            assert_eq!(round_trip(&names), names);
        }

        /// Both fields on the wire (Go writes one): a list item after a
        /// schema starts a list; a schema after list items is dropped.
        #[test]
        fn both_fields_keep_the_list() {
            let one = encode(&JSONSchemaPropsOrArray::Schema(Box::new(schema("a"))));
            let many = encode(&JSONSchemaPropsOrArray::Schemas(vec![schema("b")]));
            let got: JSONSchemaPropsOrArray =
                decode(&[one.clone(), many.clone()].concat()).unwrap();
            assert_eq!(got, JSONSchemaPropsOrArray::Schemas(vec![schema("b")]));
            let got: JSONSchemaPropsOrArray = decode(&[many, one].concat()).unwrap();
            assert_eq!(got, JSONSchemaPropsOrArray::Schemas(vec![schema("b")]));

            let one = encode(&JSONSchemaPropsOrStringArray::Schema(Box::new(schema("a"))));
            let names = encode(&JSONSchemaPropsOrStringArray::Strings(vec!["x".into()]));
            let got: JSONSchemaPropsOrStringArray =
                decode(&[one.clone(), names.clone()].concat()).unwrap();
            assert_eq!(got, JSONSchemaPropsOrStringArray::Strings(vec!["x".into()]));
            let got: JSONSchemaPropsOrStringArray = decode(&[names, one].concat()).unwrap();
            assert_eq!(got, JSONSchemaPropsOrStringArray::Strings(vec!["x".into()]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protobuf::{decode, encode};

    #[test]
    fn raw_extension_round_trips_and_names_itself_when_not_json() {
        let v = RawExtension(serde_json::json!({"kind": "Pod", "n": [1, 2]}));
        assert_eq!(decode::<RawExtension>(&encode(&v)).unwrap(), v);
        assert_eq!(
            decode::<RawExtension>(&[]).unwrap(),
            RawExtension(serde_json::Value::Null)
        );
        let mut bad = Vec::new();
        wire::put_raw(&mut bad, 1, b"{not json");
        match decode::<RawExtension>(&bad) {
            Err(DecodeError::EmbeddedJson { what, .. }) => assert_eq!(what, "RawExtension"),
            other => panic!("{other:?}"),
        }
    }
}
