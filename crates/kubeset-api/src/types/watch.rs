//! `WatchEvent<T>`: one line of a watch stream.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeStruct as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::RawExtension;
use crate::apimachinery::pkg::apis::meta::v1::Status;

/// An event of a watch stream: `{"type": "ADDED", "object": {...}}`.
///
/// `ERROR` events carry a [`Status`] (for instance `410 Gone` when the
/// resource version is too old) rather than a `T`.
#[derive(Clone, Debug, PartialEq)]
pub enum WatchEvent<T = RawExtension> {
    /// `ADDED`.
    Added(T),
    /// `MODIFIED`.
    Modified(T),
    /// `DELETED`: the last state of the object.
    Deleted(T),
    /// `BOOKMARK`: only `metadata.resourceVersion` (and the
    /// `k8s.io/initial-events-end` annotation) are meaningful.
    Bookmark(T),
    /// `ERROR`.
    Error(Box<Status>),
}

impl<T> WatchEvent<T> {
    /// The event type as written on the wire.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Added(_) => "ADDED",
            Self::Modified(_) => "MODIFIED",
            Self::Deleted(_) => "DELETED",
            Self::Bookmark(_) => "BOOKMARK",
            Self::Error(_) => "ERROR",
        }
    }
}

impl<T: Serialize> Serialize for WatchEvent<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("WatchEvent", 2)?;
        s.serialize_field("type", self.type_name())?;
        match self {
            Self::Added(o) | Self::Modified(o) | Self::Deleted(o) | Self::Bookmark(o) => {
                s.serialize_field("object", o)?;
            }
            Self::Error(status) => s.serialize_field("object", status)?,
        }
        s.end()
    }
}

enum Payload<T> {
    Object(T),
    Status(Box<Status>),
}

fn build<T, E: de::Error>(kind: &str, payload: Payload<T>) -> Result<WatchEvent<T>, E> {
    match (kind, payload) {
        ("ADDED", Payload::Object(o)) => Ok(WatchEvent::Added(o)),
        ("MODIFIED", Payload::Object(o)) => Ok(WatchEvent::Modified(o)),
        ("DELETED", Payload::Object(o)) => Ok(WatchEvent::Deleted(o)),
        ("BOOKMARK", Payload::Object(o)) => Ok(WatchEvent::Bookmark(o)),
        ("ERROR", Payload::Status(s)) => Ok(WatchEvent::Error(s)),
        (other, _) => Err(E::unknown_variant(
            other,
            &["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"],
        )),
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for WatchEvent<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: DeserializeOwned> Visitor<'de> for V<T> {
            type Value = WatchEvent<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a watch event {type, object}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WatchEvent<T>, A::Error> {
                let mut kind: Option<String> = None;
                let mut payload: Option<Payload<T>> = None;
                // `object` before `type`: kept as JSON until the type is known.
                let mut early: Option<serde_json::Value> = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match key.as_ref() {
                        "type" => kind = Some(map.next_value()?),
                        "object" => match kind.as_deref() {
                            Some("ERROR") => {
                                payload = Some(Payload::Status(Box::new(map.next_value()?)))
                            }
                            Some(_) => payload = Some(Payload::Object(map.next_value()?)),
                            None => early = Some(map.next_value()?),
                        },
                        _ => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                let kind = kind.ok_or_else(|| de::Error::missing_field("type"))?;
                let payload = match (payload, early) {
                    (Some(p), _) => p,
                    (None, Some(v)) if kind == "ERROR" => Payload::Status(Box::new(
                        serde_json::from_value(v).map_err(de::Error::custom)?,
                    )),
                    (None, Some(v)) => {
                        Payload::Object(serde_json::from_value(v).map_err(de::Error::custom)?)
                    }
                    (None, None) => return Err(de::Error::missing_field("object")),
                };
                build(&kind, payload)
            }
        }
        deserializer.deserialize_map(V(PhantomData))
    }
}
