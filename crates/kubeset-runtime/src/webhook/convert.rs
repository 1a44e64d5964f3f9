//! Conversion between the versions of a custom resource through a hub
//! (controller-runtime's `conversion.Hub`/`Convertible`): the table of
//! versions and the pure conversion of a `ConversionRequest`.

use std::fmt::Display;
use std::marker::PhantomData;
use std::sync::Arc;

use kubeset_client::Resource;
use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset_client::conversion::{ConversionRequest, ConversionResponse};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why one object of a `ConversionReview` was not converted; its message
/// is the review's failed `result.message`, which the API server's client
/// sees (`conversion webhook for <gvk> failed: <message>`).
///
/// ```
/// use kubeset_runtime::webhook::ConversionError;
/// let e = ConversionError::UnknownVersion {
///     object: "desiredAPIVersion".into(),
///     api_version: "example.com/v3".into(),
///     known: vec!["example.com/v1".into(), "example.com/v2".into()],
/// };
/// assert_eq!(
///     e.to_string(),
///     "desiredAPIVersion: apiVersion example.com/v3 is not one this webhook converts (it knows example.com/v1, example.com/v2)"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConversionError {
    /// An `apiVersion` (an object's or the `desiredAPIVersion`) that no
    /// registered version has.
    #[error("{object}: apiVersion {api_version} is not one this webhook converts (it knows {})", known.join(", "))]
    UnknownVersion {
        /// `object 2 (ns/name)` or `desiredAPIVersion`.
        object: String,
        /// The version asked for.
        api_version: String,
        /// The registered versions.
        known: Vec<String>,
    },
    /// An object of another kind than the hub's.
    #[error("{object}: kind {kind:?} is not {expected}")]
    WrongKind {
        /// `object 2 (ns/name)`.
        object: String,
        /// The object's kind.
        kind: String,
        /// The hub's kind.
        expected: &'static str,
    },
    /// An object that does not decode as its version's type.
    #[error("{object}: does not decode as {api_version} at {path}: {message}")]
    Decode {
        /// `object 2 (ns/name)`.
        object: String,
        /// The object's version.
        api_version: String,
        /// The serde path (`spec.name`, `.` for the whole object).
        path: String,
        /// serde's message.
        message: String,
    },
    /// A conversion function (`TryFrom`) refused.
    #[error("{object}: converting {from} to {to}: {message}")]
    Convert {
        /// `object 2 (ns/name)`.
        object: String,
        /// The version converted from.
        from: String,
        /// The version converted to.
        to: String,
        /// The function's error.
        message: String,
    },
    /// A converted object that does not serialize.
    #[error("{object}: the converted object does not serialize: {message}")]
    Encode {
        /// `object 2 (ns/name)`.
        object: String,
        /// serde's message.
        message: String,
    },
    /// A conversion changed `metadata` beyond labels and annotations
    /// (kube-apiserver allows nothing else to change).
    #[error("{object}: the conversion changed metadata.{} (only labels and annotations may change)", fields.join(", metadata."))]
    Metadata {
        /// `object 2 (ns/name)`.
        object: String,
        /// The changed fields (`name`, `uid`, …).
        fields: Vec<String>,
    },
    /// The versions registered do not make one kind's table (another
    /// kind or group, a version twice).
    #[error("the conversion table is wrong: {reason}")]
    Misconfigured {
        /// What is wrong.
        reason: String,
    },
}

/// One review a [`Conversion`] answered, as its observer sees it
/// ([`Conversion::observe`]): for logs and metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reviewed<'a> {
    /// The review's `uid`.
    pub uid: &'a str,
    /// The version asked for.
    pub desired_api_version: &'a str,
    /// How many objects the review carried.
    pub objects: usize,
    /// The failure's message, when it failed.
    pub error: Option<&'a str>,
}

type Observer = Arc<dyn Fn(Reviewed<'_>) + Send + Sync>;

/// One step of a conversion that failed, before it knows which object.
enum Step {
    Decode { path: String, message: String },
    Convert(String),
    Encode(String),
}

type ToHub<H> = fn(Value) -> Result<H, Step>;
type FromHub<H> = fn(H) -> Result<Value, Step>;

struct Version<H> {
    api_version: &'static str,
    to_hub: ToHub<H>,
    from_hub: FromHub<H>,
}

impl<H> Clone for Version<H> {
    fn clone(&self) -> Self {
        Version {
            api_version: self.api_version,
            to_hub: self.to_hub,
            from_hub: self.from_hub,
        }
    }
}

/// The versions of one custom resource kind and how each converts to and
/// from the hub `H` (one of them, usually the storage version). A spoke
/// `V` converts with `TryFrom` both ways (`impl From<Hub> for V` and
/// `impl From<V> for Hub` are enough: `From` gives `TryFrom`); an object
/// at `V1` asked for at `V2` goes `V1 → H → V2`, one already at the
/// desired version is answered as it came.
///
/// [`Webhook::convert`](super::Webhook::convert) serves it; [`convert`](Self::convert)
/// is the conversion itself, without I/O.
///
/// ```
/// use kubeset_client::conversion::ConversionRequest;
/// use kubeset_runtime::webhook::Conversion;
///
/// mod v1 {
///     use kubeset_client::{CustomResource, JsonSchema};
///     use serde::{Deserialize, Serialize};
///     /// A person, v1: one name.
///     #[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
///     #[kube(crates(kubeset = "kubeset_client"))]
///     #[schema(crate = "kubeset_client")]
///     #[kube(group = "example.com", version = "v1", kind = "Person", namespaced)]
///     pub struct PersonSpec { pub name: String }
/// }
/// mod v2 {
///     use kubeset_client::{CustomResource, JsonSchema};
///     use serde::{Deserialize, Serialize};
///     /// A person, v2: first and last names (the hub).
///     #[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
///     #[kube(crates(kubeset = "kubeset_client"))]
///     #[schema(crate = "kubeset_client")]
///     #[kube(group = "example.com", version = "v2", kind = "Person", namespaced)]
///     pub struct PersonSpec { pub first: String, pub last: String }
/// }
///
/// impl From<v1::Person> for v2::Person {
///     fn from(p: v1::Person) -> Self {
///         let (first, last) = p.spec.name.split_once(' ').unwrap_or((&p.spec.name, ""));
///         let spec = v2::PersonSpec { first: first.into(), last: last.into() };
///         v2::Person { metadata: p.metadata, spec }
///     }
/// }
/// impl From<v2::Person> for v1::Person {
///     fn from(p: v2::Person) -> Self {
///         let name = format!("{} {}", p.spec.first, p.spec.last).trim().to_owned();
///         v1::Person { metadata: p.metadata, spec: v1::PersonSpec { name } }
///     }
/// }
///
/// let conversion = Conversion::<v2::Person>::new().spoke::<v1::Person>();
/// let request: ConversionRequest = serde_json::from_value(serde_json::json!({
///     "uid": "u", "desiredAPIVersion": "example.com/v2",
///     "objects": [{"apiVersion": "example.com/v1", "kind": "Person",
///                  "metadata": {"name": "ada"}, "spec": {"name": "Ada Lovelace"}}]
/// })).unwrap();
/// let response = conversion.convert(request);
/// assert_eq!(response.result.status.as_deref(), Some("Success"));
/// assert_eq!(response.converted_objects[0]["spec"], serde_json::json!({"first": "Ada", "last": "Lovelace"}));
/// ```
#[must_use]
pub struct Conversion<H> {
    versions: Vec<Version<H>>,
    problems: Vec<String>,
    observer: Option<Observer>,
    hub: PhantomData<fn() -> H>,
}

impl<H> Clone for Conversion<H> {
    fn clone(&self) -> Self {
        Conversion {
            versions: self.versions.clone(),
            problems: self.problems.clone(),
            observer: self.observer.clone(),
            hub: PhantomData,
        }
    }
}

impl<H> std::fmt::Debug for Conversion<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conversion")
            .field(
                "api_versions",
                &self
                    .versions
                    .iter()
                    .map(|v| v.api_version)
                    .collect::<Vec<_>>(),
            )
            .field("problems", &self.problems)
            .finish()
    }
}

impl<H> Conversion<H>
where
    H: Resource + Serialize + DeserializeOwned + 'static,
{
    /// The hub alone (objects at `H` are decoded and written as `H`).
    ///
    /// ```
    /// use kubeset_client::api::core::v1::ConfigMap;
    /// let c = kubeset_runtime::webhook::Conversion::<ConfigMap>::new();
    /// assert_eq!(c.api_versions(), ["v1"]);
    /// ```
    pub fn new() -> Self {
        Conversion {
            versions: vec![Version {
                api_version: H::API_VERSION,
                to_hub: decode::<H>,
                from_hub: encode::<H>,
            }],
            problems: Vec::new(),
            observer: None,
            hub: PhantomData,
        }
    }

    /// Calls `observer` after every review with what it was (objects,
    /// version, failure), for logs and metrics.
    ///
    /// ```
    /// use kubeset_client::api::core::v1::ConfigMap;
    /// use kubeset_runtime::webhook::{Conversion, Reviewed};
    /// let c = Conversion::<ConfigMap>::new().observe(|r: Reviewed<'_>| {
    ///     println!("review {} of {} objects to {}: {:?}", r.uid, r.objects, r.desired_api_version, r.error);
    /// });
    /// # let _ = c;
    /// ```
    pub fn observe(mut self, observer: impl Fn(Reviewed<'_>) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// Adds the spoke version `V`: its kind and group must be the hub's,
    /// its version another. A table that breaks this fails every review
    /// (naming why) and makes [`Webhook::bind`](super::Webhook::bind) fail.
    ///
    /// See [`Conversion`] for an example.
    pub fn spoke<V>(mut self) -> Self
    where
        V: Resource + Serialize + DeserializeOwned + TryFrom<H> + 'static,
        H: TryFrom<V>,
        <V as TryFrom<H>>::Error: Display,
        <H as TryFrom<V>>::Error: Display,
    {
        if V::KIND != H::KIND || V::GROUP != H::GROUP {
            self.problems.push(format!(
                "{} {} is not a version of the hub's kind {} {}",
                V::API_VERSION,
                V::KIND,
                H::API_VERSION,
                H::KIND
            ));
        } else if self.find(V::API_VERSION).is_some() {
            self.problems
                .push(format!("{} is registered twice", V::API_VERSION));
        }
        self.versions.push(Version {
            api_version: V::API_VERSION,
            to_hub: spoke_to_hub::<V, H>,
            from_hub: hub_to_spoke::<V, H>,
        });
        self
    }

    /// The registered `apiVersion`s, the hub's first.
    ///
    /// ```
    /// use kubeset_client::api::core::v1::ConfigMap;
    /// assert_eq!(kubeset_runtime::webhook::Conversion::<ConfigMap>::new().api_versions().len(), 1);
    /// ```
    pub fn api_versions(&self) -> Vec<&'static str> {
        self.versions.iter().map(|v| v.api_version).collect()
    }

    /// Converts every object of `request` to its `desiredAPIVersion`: a
    /// success with the objects in order, or a failure naming the first
    /// object that did not convert and why ([`ConversionError`]).
    ///
    /// See [`Conversion`] for an example.
    pub fn convert(&self, mut request: ConversionRequest) -> ConversionResponse {
        let objects = std::mem::take(&mut request.objects);
        let count = objects.len();
        let desired = std::mem::take(&mut request.desired_api_version);
        let response = ConversionResponse::for_request(request);
        let response = match self.convert_all(objects, &desired) {
            Ok(converted) => response.success(converted),
            Err(e) => response.failure_message(e.to_string()),
        };
        if let Some(observer) = &self.observer {
            observer(Reviewed {
                uid: &response.uid,
                desired_api_version: &desired,
                objects: count,
                error: response.result.message.as_deref(),
            });
        }
        response
    }

    /// The table's problems, if any.
    ///
    /// # Errors
    ///
    /// [`ConversionError::Misconfigured`] naming them.
    pub fn check(&self) -> Result<(), ConversionError> {
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(ConversionError::Misconfigured {
                reason: self.problems.join("; "),
            })
        }
    }

    fn convert_all(
        &self,
        objects: Vec<Value>,
        desired: &str,
    ) -> Result<Vec<Value>, ConversionError> {
        self.check()?;
        let target = self
            .find(desired)
            .ok_or_else(|| self.unknown("desiredAPIVersion".to_owned(), desired))?;
        objects
            .into_iter()
            .enumerate()
            .map(|(index, object)| self.convert_one(index, object, target))
            .collect()
    }

    fn find(&self, api_version: &str) -> Option<&Version<H>> {
        self.versions.iter().find(|v| v.api_version == api_version)
    }

    fn unknown(&self, object: String, api_version: &str) -> ConversionError {
        ConversionError::UnknownVersion {
            object,
            api_version: api_version.to_owned(),
            known: self
                .api_versions()
                .iter()
                .map(|v| (*v).to_owned())
                .collect(),
        }
    }

    fn convert_one(
        &self,
        index: usize,
        object: Value,
        target: &Version<H>,
    ) -> Result<Value, ConversionError> {
        let name = describe(index, &object);
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind != H::KIND {
            return Err(ConversionError::WrongKind {
                object: name,
                kind: kind.to_owned(),
                expected: H::KIND,
            });
        }
        let api_version = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if api_version == target.api_version {
            return Ok(object);
        }
        let source = self
            .find(&api_version)
            .ok_or_else(|| self.unknown(name.clone(), &api_version))?;
        let before = object.get("metadata").cloned().unwrap_or(Value::Null);
        let failed = |step: Step| match step {
            Step::Decode { path, message } => ConversionError::Decode {
                object: name.clone(),
                api_version: api_version.clone(),
                path,
                message,
            },
            Step::Convert(message) => ConversionError::Convert {
                object: name.clone(),
                from: api_version.clone(),
                to: target.api_version.to_owned(),
                message,
            },
            Step::Encode(message) => ConversionError::Encode {
                object: name.clone(),
                message,
            },
        };
        let hub = (source.to_hub)(object).map_err(failed)?;
        let mut converted = (target.from_hub)(hub).map_err(failed)?;
        let metadata = kept_metadata(&before, converted.get("metadata")).map_err(|fields| {
            ConversionError::Metadata {
                object: name.clone(),
                fields,
            }
        })?;
        if let Some(map) = converted.as_object_mut() {
            map.insert("metadata".to_owned(), metadata);
        }
        Ok(converted)
    }
}

impl<H> Default for Conversion<H>
where
    H: Resource + Serialize + DeserializeOwned + 'static,
{
    fn default() -> Self {
        Self::new()
    }
}

/// `object 2 (ns/name)`.
fn describe(index: usize, object: &Value) -> String {
    let meta = object.get("metadata");
    let field = |f: &str| meta.and_then(|m| m.get(f)).and_then(Value::as_str);
    match (field("namespace"), field("name")) {
        (Some(ns), Some(name)) => format!("object {index} ({ns}/{name})"),
        (None, Some(name)) => format!("object {index} ({name})"),
        _ => format!("object {index}"),
    }
}

/// The metadata to answer: the request's as it came, with the converted
/// object's labels and annotations; or the fields (other than those two)
/// the conversion changed. Both sides are compared as `ObjectMeta` reads
/// and writes them, so a field's spelling is not a change.
fn kept_metadata(before: &Value, after: Option<&Value>) -> Result<Value, Vec<String>> {
    let after = after.cloned().unwrap_or(Value::Null);
    let normal = |v: &Value| -> serde_json::Map<String, Value> {
        let meta: ObjectMeta = serde_json::from_value(v.clone()).unwrap_or_default();
        match serde_json::to_value(meta) {
            Ok(Value::Object(mut map)) => {
                map.remove("labels");
                map.remove("annotations");
                map
            }
            _ => serde_json::Map::new(),
        }
    };
    let (old, new) = (normal(before), normal(&after));
    let mut changed: Vec<String> = old
        .iter()
        .filter(|(k, v)| new.get(*k) != Some(*v))
        .map(|(k, _)| k.clone())
        .chain(new.keys().filter(|k| !old.contains_key(*k)).cloned())
        .collect();
    if !changed.is_empty() {
        changed.sort();
        return Err(changed);
    }
    let mut kept = match before {
        Value::Object(map) => map.clone(),
        _ => serde_json::Map::new(),
    };
    for field in ["labels", "annotations"] {
        match after.get(field).filter(|v| !v.is_null()) {
            Some(v) => kept.insert(field.to_owned(), v.clone()),
            None => kept.remove(field),
        };
    }
    Ok(Value::Object(kept))
}

fn decode<K: DeserializeOwned>(object: Value) -> Result<K, Step> {
    serde_path_to_error::deserialize::<_, K>(object).map_err(|e| Step::Decode {
        path: e.path().to_string(),
        message: e.into_inner().to_string(),
    })
}

fn encode<K: Serialize>(object: K) -> Result<Value, Step> {
    serde_json::to_value(&object).map_err(|e| Step::Encode(e.to_string()))
}

fn spoke_to_hub<V, H>(object: Value) -> Result<H, Step>
where
    V: DeserializeOwned,
    H: TryFrom<V>,
    <H as TryFrom<V>>::Error: Display,
{
    H::try_from(decode::<V>(object)?).map_err(|e| Step::Convert(e.to_string()))
}

fn hub_to_spoke<V, H>(hub: H) -> Result<Value, Step>
where
    V: Serialize + TryFrom<H>,
    <V as TryFrom<H>>::Error: Display,
{
    encode(V::try_from(hub).map_err(|e| Step::Convert(e.to_string()))?)
}

/// A conversion table with its hub erased, as the server holds it.
pub(crate) trait ErasedConversion: Send + Sync {
    fn convert(&self, request: ConversionRequest) -> ConversionResponse;
    fn check(&self) -> Result<(), ConversionError>;
}

impl<H> ErasedConversion for Conversion<H>
where
    H: Resource + Serialize + DeserializeOwned + 'static,
{
    fn convert(&self, request: ConversionRequest) -> ConversionResponse {
        Conversion::convert(self, request)
    }

    fn check(&self) -> Result<(), ConversionError> {
        Conversion::check(self)
    }
}
