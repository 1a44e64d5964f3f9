//! Server-side apply you can read back: [`extract`] gives the apply
//! configuration of exactly the fields one field manager owns, read from
//! the live object's `metadata.managedFields`, so a controller can change
//! one field and apply again without dropping (or claiming) the rest —
//! client-go's `ExtractDeployment(obj, manager)` /
//! `ExtractDeploymentStatus`, at the JSON level.
//!
//! The verbs are [`Api::apply`](crate::Api::apply),
//! [`Api::apply_status`](crate::Api::apply_status) and
//! [`Api::apply_scale`](crate::Api::apply_scale) with
//! [`ApplyParams`](crate::params::ApplyParams); a 409 of another owner is
//! typed by [`Error::apply_conflicts`](crate::Error::apply_conflicts).
//!
//! ```
//! use kubeset_client::api::apps::v1::Deployment;
//! use kubeset_client::apply::{Subresource, extract};
//! use kubeset_client::params::ApplyParams;
//! use kubeset_client::Api;
//! use serde_json::{Value, json};
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let server = kubeset_testserver::TestServer::start().await?;
//! # let rest = kubeset_client::rest::RestClient::new(kubeset_client::rest::RestConfig::new(server.url()))?;
//! # let client = kubeset_client::Client::new(rest, "default");
//! let deployments: Api<Deployment> = Api::default_namespaced(client);
//! let intent = json!({
//!     "metadata": {"name": "web"},
//!     "spec": {
//!         "selector": {"matchLabels": {"app": "web"}},
//!         "template": {
//!             "metadata": {"labels": {"app": "web"}},
//!             "spec": {"containers": [{"name": "app", "image": "nginx:1"}]},
//!         },
//!     },
//! });
//! let live = deployments.apply("web", &intent, &ApplyParams::new("me")).await?;
//! // Later: what do I own? Change the image, apply the rest unchanged.
//! let mut mine: Value = extract(&live, "me", Subresource::Main)?;
//! mine["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
//! let live = deployments.apply("web", &mine, &ApplyParams::new("me")).await?;
//! let image = &live.spec.unwrap().template.spec.unwrap().containers[0].image;
//! assert_eq!(image.as_deref(), Some("nginx:2"));
//! # Ok(()) }
//! ```
//!
//! With kubeset-api's cargo feature `apply` (the facade's `apply`), the
//! generated apply types replace the JSON: `extract::<DeploymentApply>`
//! and builders.
//!
//! ```
//! use kubeset_client::api::apps::v1::{Deployment, DeploymentApply, DeploymentSpecApply};
//! use kubeset_client::api::core::v1::{ContainerApply, PodSpecApply, PodTemplateSpecApply};
//! use kubeset_client::apimachinery::pkg::apis::meta::v1::{LabelSelectorApply, ObjectMetaApply};
//! use kubeset_client::apply::{Subresource, extract};
//! use kubeset_client::params::ApplyParams;
//! use kubeset_client::Api;
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let server = kubeset_testserver::TestServer::start().await?;
//! # let rest = kubeset_client::rest::RestClient::new(kubeset_client::rest::RestConfig::new(server.url()))?;
//! # let client = kubeset_client::Client::new(rest, "default");
//! let deployments: Api<Deployment> = Api::default_namespaced(client);
//! let pod = PodSpecApply::default().with_containers([ContainerApply::new("app").with_image("nginx:1")]);
//! let intent = DeploymentApply::new("web", "default").with_spec(
//!     DeploymentSpecApply::default()
//!         .with_selector(LabelSelectorApply::default().with_match_labels([("app", "web")]))
//!         .with_template(
//!             PodTemplateSpecApply::default()
//!                 .with_metadata(ObjectMetaApply::default().with_labels([("app", "web")]))
//!                 .with_spec(pod),
//!         ),
//! );
//! let live = deployments.apply("web", &intent, &ApplyParams::new("me")).await?;
//! let mine: DeploymentApply = extract(&live, "me", Subresource::Main)?;
//! assert_eq!(mine, intent);
//! # Ok(()) }
//! ```
//!
//! # How `FieldsV1` is read
//!
//! The entry is the one with `operation: Apply`, the manager's name and
//! the subresource (none for the main resource); a manager that has not
//! applied there owns nothing and gets the bare configuration
//! (`apiVersion`, `kind`, `metadata.name`, `metadata.namespace`), as
//! client-go's. Its `fieldsV1` is walked with the live object:
//!
//! - `f:<name>`: the field `name` of a map;
//! - `k:{"name":"app"}`: the item of a `listType=map` list whose key
//!   fields have these values; the extracted item always carries its key
//!   fields;
//! - `v:<json>`: the item of a set (`listType=set`) equal to the value;
//! - `i:<n>`: the item at a position;
//! - `.`: the node itself is owned (it is kept, empty, when nothing owned
//!   under it is left).
//!
//! A node without children is a leaf: its whole live value is kept.
//! Atomic maps and lists (a `LabelSelector`, a container's `args`) are
//! recorded that way, so they come back whole. A granular map or list a
//! manager applied empty (`labels: {}`) is a leaf too. kube-apiserver hands
//! it to the first updater that fills it (the applier then owns nothing
//! there), but should an applier still own it while another entry owns
//! something inside, it comes back empty (no entry can own inside an atomic
//! one). Without the schema, such a map whose other keys nobody owns comes
//! back whole; the generated apply types will carry the schema.
//!
//! Everything read is bounded ([`MAX_ENTRIES`], [`MAX_FIELD_NODES`],
//! [`MAX_DEPTH`]); an element of an unknown kind or an unreadable key is an
//! [`ExtractError`] naming where it was, never a panic.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::Resource;

/// Most `managedFields` entries read.
pub const MAX_ENTRIES: usize = 4096;

/// Most `fieldsV1` nodes walked for one manager.
pub const MAX_FIELD_NODES: usize = 200_000;

/// Deepest `fieldsV1` nesting walked.
pub const MAX_DEPTH: usize = 100;

/// Which writes of a manager [`extract`] reads: the subresource its
/// `managedFields` entry names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Subresource {
    /// The main resource (no `subresource` in the entry): [`Api::apply`](crate::Api::apply).
    Main,
    /// `status`: [`Api::apply_status`](crate::Api::apply_status).
    Status,
    /// `scale`: [`Api::apply_scale`](crate::Api::apply_scale).
    Scale,
}

impl Subresource {
    /// The entry's `subresource` value (`""` for the main resource).
    pub fn as_str(self) -> &'static str {
        match self {
            Subresource::Main => "",
            Subresource::Status => "status",
            Subresource::Scale => "scale",
        }
    }
}

/// Why [`extract`] could not read a manager's fields.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExtractError {
    /// The live object did not serialize.
    #[error("serializing the live object")]
    Serialize {
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// The live object is not a JSON object.
    #[error("the live object is not a JSON object")]
    NotAnObject,
    /// A field every apply configuration carries is missing or not a string.
    #[error("the live object has no {field}")]
    MissingField {
        /// `apiVersion`, `kind` or `metadata.name`.
        field: &'static str,
    },
    /// `metadata.managedFields` is not what the API server writes.
    #[error("metadata.managedFields{}: {reason}", index.map(|i| format!("[{i}]")).unwrap_or_default())]
    ManagedFields {
        /// The entry, when one is at fault.
        index: Option<usize>,
        /// What is wrong.
        reason: String,
    },
    /// More to read than the bounds allow.
    #[error("{what}: more than {limit}")]
    TooLarge {
        /// What overflowed (`managedFields entries`, `fieldsV1 nodes`, `fieldsV1 depth`).
        what: &'static str,
        /// The bound.
        limit: usize,
    },
    /// A `fieldsV1` element of an unknown kind (not `f:`, `k:`, `v:`, `i:`
    /// or `.`), or one whose value is not an object.
    #[error("fieldsV1 at {at:?}: unknown element {element:?}")]
    UnknownElement {
        /// The path to it, in `fieldsV1` elements.
        at: String,
        /// The element.
        element: String,
    },
    /// A `k:` or `v:` element whose JSON does not parse, or an `i:` that is
    /// no index.
    #[error("fieldsV1 at {at:?}: unreadable element {element:?}")]
    BadElement {
        /// The path to it.
        at: String,
        /// The element.
        element: String,
        /// The JSON error, for `k:` and `v:`.
        #[source]
        source: Option<serde_json::Error>,
    },
    /// The configuration did not decode as the type asked for.
    #[error("decoding the extracted configuration as {type_name}")]
    Decode {
        /// The Rust type.
        type_name: &'static str,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
}

/// The apply configuration of the fields `field_manager` owns in `live`
/// through `subresource`, as `T` (`serde_json::Value`, or an apply type
/// whose fields are all optional). `live` must serialize with `apiVersion`
/// and `kind`, as every generated model and `DynamicObject` do; for a
/// `#[derive(Resource)]` struct without them use [`extract_resource`].
/// See the [module docs](self) for an example and the rules.
pub fn extract<T: DeserializeOwned>(
    live: &impl Serialize,
    field_manager: &str,
    subresource: Subresource,
) -> Result<T, ExtractError> {
    let value = serde_json::to_value(live).map_err(|source| ExtractError::Serialize { source })?;
    decode(extract_value(&value, field_manager, subresource)?)
}

/// [`extract`] for a kind `K` whose serialized form may lack `apiVersion`
/// and `kind`: they are taken from `K`'s constants then.
///
/// ```
/// use kubeset_client::api::core::v1::ConfigMap;
/// use kubeset_client::apply::{Subresource, extract_resource};
/// let cm: ConfigMap = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "a", "managedFields": [{"manager": "me", "operation": "Apply",
///         "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:k": {}}}}]},
///     "data": {"k": "v", "other": "x"},
/// }))?;
/// let mine: serde_json::Value = extract_resource(&cm, "me", Subresource::Main)?;
/// assert_eq!(mine, serde_json::json!({
///     "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"},
/// }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn extract_resource<K: Resource + Serialize, T: DeserializeOwned>(
    live: &K,
    field_manager: &str,
    subresource: Subresource,
) -> Result<T, ExtractError> {
    let mut value =
        serde_json::to_value(live).map_err(|source| ExtractError::Serialize { source })?;
    if let Value::Object(m) = &mut value {
        m.entry("apiVersion")
            .or_insert_with(|| K::API_VERSION.into());
        m.entry("kind").or_insert_with(|| K::KIND.into());
    }
    decode(extract_value(&value, field_manager, subresource)?)
}

fn decode<T: DeserializeOwned>(value: Value) -> Result<T, ExtractError> {
    serde_json::from_value(value).map_err(|source| ExtractError::Decode {
        type_name: std::any::type_name::<T>(),
        source,
    })
}

/// [`extract`] on a JSON object, answering JSON: the pure core.
///
/// ```
/// use kubeset_client::apply::{Subresource, extract_value};
/// use serde_json::json;
/// let live = json!({"apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"name": "a", "namespace": "ns", "managedFields": [
///         {"manager": "me", "operation": "Apply", "apiVersion": "v1",
///          "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:mine": {}}}},
///         {"manager": "ed", "operation": "Update", "apiVersion": "v1",
///          "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:theirs": {}}}}]},
///     "data": {"mine": "1", "theirs": "2"}});
/// assert_eq!(
///     extract_value(&live, "me", Subresource::Main)?,
///     json!({"apiVersion": "v1", "kind": "ConfigMap",
///            "metadata": {"name": "a", "namespace": "ns"}, "data": {"mine": "1"}})
/// );
/// // An updater (`ed`) or an unknown manager applied nothing.
/// assert_eq!(extract_value(&live, "ed", Subresource::Main)?["data"], json!(null));
/// # Ok::<(), kubeset_client::apply::ExtractError>(())
/// ```
pub fn extract_value(
    live: &Value,
    field_manager: &str,
    subresource: Subresource,
) -> Result<Value, ExtractError> {
    let obj = live.as_object().ok_or(ExtractError::NotAnObject)?;
    let text = |v: Option<&Value>, field| {
        v.and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or(ExtractError::MissingField { field })
    };
    let api_version = text(obj.get("apiVersion"), "apiVersion")?;
    let kind = text(obj.get("kind"), "kind")?;
    let name = text(live.pointer("/metadata/name"), "metadata.name")?;
    let owned = owned_fields(
        live.pointer("/metadata/managedFields"),
        field_manager,
        subresource,
    )?;
    let mut walk = Walk {
        nodes: 0,
        at: Vec::new(),
        raw: Vec::new(),
        others: owned.others,
    };
    let picked = match owned.mine {
        Some(f) => walk.pick(live, f)?,
        None => None,
    };
    let mut out = match picked {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    out.insert("apiVersion".into(), api_version.into());
    out.insert("kind".into(), kind.into());
    let meta = out
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.insert("name".into(), name.into());
        if let Some(ns) = live.pointer("/metadata/namespace").and_then(Value::as_str) {
            meta.insert("namespace".into(), ns.into());
        }
    }
    Ok(Value::Object(out))
}

/// The `fieldsV1` of the manager's apply entry for `subresource`, `None`
/// when it has none.
fn owned_fields<'a>(
    managed: Option<&'a Value>,
    field_manager: &str,
    subresource: Subresource,
) -> Result<Owned<'a>, ExtractError> {
    let mut owned = Owned {
        mine: None,
        others: Vec::new(),
    };
    let Some(managed) = managed.filter(|m| !m.is_null()) else {
        return Ok(owned);
    };
    let entries = managed
        .as_array()
        .ok_or_else(|| ExtractError::ManagedFields {
            index: None,
            reason: "not a list".into(),
        })?;
    if entries.len() > MAX_ENTRIES {
        return Err(ExtractError::TooLarge {
            what: "managedFields entries",
            limit: MAX_ENTRIES,
        });
    }
    let bad = |index, reason: &str| ExtractError::ManagedFields {
        index: Some(index),
        reason: reason.to_owned(),
    };
    for (i, e) in entries.iter().enumerate() {
        let e = e.as_object().ok_or_else(|| bad(i, "not an object"))?;
        let s = |k: &str| e.get(k).and_then(Value::as_str);
        let sub = s("subresource").unwrap_or_default();
        let fields = e.get("fieldsV1").and_then(Value::as_object);
        if owned.mine.is_some()
            || s("manager") != Some(field_manager)
            || s("operation") != Some("Apply")
            || sub != subresource.as_str()
        {
            owned.others.extend(fields);
            continue;
        }
        if s("fieldsType") != Some("FieldsV1") {
            return Err(bad(i, "fieldsType is not FieldsV1"));
        }
        match e.get("fieldsV1") {
            None | Some(Value::Null) | Some(Value::Object(_)) => owned.mine = fields,
            Some(_) => return Err(bad(i, "fieldsV1 is not an object")),
        }
    }
    Ok(owned)
}

/// The `fieldsV1` of the manager's apply entry (`None`: it has none) and
/// those of every other entry.
struct Owned<'a> {
    mine: Option<&'a Map<String, Value>>,
    others: Vec<&'a Map<String, Value>>,
}

/// A walk of one `fieldsV1` tree along the live object.
struct Walk<'a> {
    /// Nodes visited so far (bounded by [`MAX_FIELD_NODES`]).
    nodes: usize,
    /// The path from the root to where the walk is, as errors print it.
    at: Vec<String>,
    /// The same path in `fieldsV1` elements.
    raw: Vec<String>,
    /// The other entries' `fieldsV1`: a leaf under which one of them owns
    /// something is a granular map or list, not an atomic one.
    others: Vec<&'a Map<String, Value>>,
}

/// How a list element of `fieldsV1` finds its live item.
enum Item {
    /// `k:{…}`: an object whose key fields have these values.
    Keys(Map<String, Value>),
    /// `v:<json>`: an item equal to this value.
    Value(Value),
    /// `i:<n>`: the item at this position.
    Index(usize),
}

impl Item {
    fn matches(&self, position: usize, item: &Value) -> bool {
        match self {
            Item::Keys(keys) => keys.iter().all(|(k, v)| item.get(k) == Some(v)),
            Item::Value(v) => item == v,
            Item::Index(i) => *i == position,
        }
    }
}

impl Walk<'_> {
    fn at(&self) -> String {
        self.at.concat()
    }

    /// What of `live` the node with these children owns: `None` when
    /// nothing owned is there.
    fn pick(
        &mut self,
        live: &Value,
        node: &Map<String, Value>,
    ) -> Result<Option<Value>, ExtractError> {
        if self.at.len() > MAX_DEPTH {
            return Err(ExtractError::TooLarge {
                what: "fieldsV1 depth",
                limit: MAX_DEPTH,
            });
        }
        self.nodes += node.len();
        if self.nodes > MAX_FIELD_NODES {
            return Err(ExtractError::TooLarge {
                what: "fieldsV1 nodes",
                limit: MAX_FIELD_NODES,
            });
        }
        let member = node.contains_key(".");
        if node.keys().all(|k| k == ".") {
            return self.leaf(live).map(Some);
        }
        let picked = match live {
            Value::Object(m) => self.pick_fields(m, node)?,
            Value::Array(items) => self.pick_items(items, node)?,
            _ => {
                self.check_elements(node)?;
                return Ok(member.then(|| live.clone()));
            }
        };
        Ok(picked.or_else(|| {
            member.then(|| match live {
                Value::Array(_) => Value::Array(Vec::new()),
                _ => Value::Object(Map::new()),
            })
        }))
    }

    /// A leaf's value: the live one whole (an atomic map or list, a
    /// scalar), or an empty map or list when another manager owns
    /// something inside it (a granular one the manager applied empty).
    fn leaf(&mut self, live: &Value) -> Result<Value, ExtractError> {
        let container = match live {
            Value::Object(m) if !m.is_empty() => Value::Object(Map::new()),
            Value::Array(a) if !a.is_empty() => Value::Array(Vec::new()),
            _ => return Ok(live.clone()),
        };
        self.nodes += self.others.len() * (self.raw.len() + 1);
        if self.nodes > MAX_FIELD_NODES {
            return Err(ExtractError::TooLarge {
                what: "fieldsV1 nodes",
                limit: MAX_FIELD_NODES,
            });
        }
        let inside = |root: &&Map<String, Value>| {
            let mut cur: &Map<String, Value> = root;
            for e in &self.raw {
                match cur.get(e) {
                    Some(Value::Object(c)) => cur = c,
                    _ => return false,
                }
            }
            cur.keys().any(|k| k != ".")
        };
        Ok(if self.others.iter().any(inside) {
            container
        } else {
            live.clone()
        })
    }

    /// The child's own children, or an error naming an element of no
    /// known kind or one that is not an object.
    fn children<'a>(
        &self,
        element: &str,
        child: &'a Value,
    ) -> Result<&'a Map<String, Value>, ExtractError> {
        let known = ["f:", "k:", "v:", "i:"]
            .iter()
            .any(|t| element.starts_with(t));
        match child {
            Value::Object(c) if known => Ok(c),
            _ => Err(ExtractError::UnknownElement {
                at: self.at(),
                element: element.to_owned(),
            }),
        }
    }

    /// Every element of `node` is of a known kind (for nodes whose live
    /// value has no place for them).
    fn check_elements(&self, node: &Map<String, Value>) -> Result<(), ExtractError> {
        for (element, child) in node.iter().filter(|(k, _)| *k != ".") {
            self.children(element, child)?;
        }
        Ok(())
    }

    fn pick_fields(
        &mut self,
        live: &Map<String, Value>,
        node: &Map<String, Value>,
    ) -> Result<Option<Value>, ExtractError> {
        let mut out = Map::new();
        for (element, child) in node.iter().filter(|(k, _)| *k != ".") {
            let children = self.children(element, child)?;
            // List elements under a map have no live item to find.
            let Some(name) = element.strip_prefix("f:") else {
                continue;
            };
            let Some(value) = live.get(name) else {
                continue;
            };
            self.at.push(format!(".{name}"));
            self.raw.push(element.clone());
            let picked = self.pick(value, children)?;
            self.at.pop();
            self.raw.pop();
            if let Some(v) = picked {
                out.insert(name.to_owned(), v);
            }
        }
        Ok((!out.is_empty()).then_some(Value::Object(out)))
    }

    fn parse_item(&self, element: &str) -> Result<Option<Item>, ExtractError> {
        let bad = |source| ExtractError::BadElement {
            at: self.at(),
            element: element.to_owned(),
            source,
        };
        let (tag, rest) = element.split_at(element.len().min(2));
        Ok(Some(match tag {
            "k:" => Item::Keys(serde_json::from_str(rest).map_err(|e| bad(Some(e)))?),
            "v:" => Item::Value(serde_json::from_str(rest).map_err(|e| bad(Some(e)))?),
            "i:" => Item::Index(rest.parse().map_err(|_| bad(None))?),
            _ => return Ok(None),
        }))
    }

    fn pick_items(
        &mut self,
        live: &[Value],
        node: &Map<String, Value>,
    ) -> Result<Option<Value>, ExtractError> {
        let mut wanted = Vec::new();
        for (element, child) in node.iter().filter(|(k, _)| *k != ".") {
            let children = self.children(element, child)?;
            if let Some(item) = self.parse_item(element)? {
                wanted.push((element, item, children));
            }
        }
        let mut out = Vec::new();
        for (position, value) in live.iter().enumerate() {
            let Some((element, item, children)) = wanted
                .iter()
                .find(|(_, item, _)| item.matches(position, value))
            else {
                continue;
            };
            self.at.push(format!("[{}]", element));
            self.raw.push((*element).clone());
            let picked = self.pick(value, children)?;
            self.at.pop();
            self.raw.pop();
            let picked = match (item, picked) {
                (Item::Keys(keys), picked) => {
                    let mut m = match picked {
                        Some(Value::Object(m)) => m,
                        _ => Map::new(),
                    };
                    for (k, v) in keys {
                        m.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                    Value::Object(m)
                }
                (_, Some(v)) => v,
                // A set item is its value.
                (Item::Value(v), None) => v.clone(),
                (Item::Index(_), None) => continue,
            };
            out.push(picked);
        }
        Ok((!out.is_empty()).then_some(Value::Array(out)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn live(fields: Value, body: Value) -> Value {
        let mut obj = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "ns", "uid": "u", "resourceVersion": "7",
            "managedFields": [
                {"manager": "other", "operation": "Apply", "apiVersion": "apps/v1",
                 "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}},
                {"manager": "me", "operation": "Apply", "apiVersion": "apps/v1",
                 "fieldsType": "FieldsV1", "fieldsV1": fields},
            ]}});
        merge_top(&mut obj, body);
        obj
    }

    /// `body`'s keys into `obj`, objects one level deep merged
    /// (`metadata`).
    fn merge_top(obj: &mut Value, body: Value) {
        if let (Value::Object(o), Value::Object(b)) = (obj, body) {
            for (k, v) in b {
                match (o.get_mut(&k), v) {
                    (Some(Value::Object(have)), Value::Object(add)) => have.extend(add),
                    (_, v) => {
                        o.insert(k, v);
                    }
                }
            }
        }
    }

    fn mine(fields: Value, body: Value) -> Value {
        extract_value(&live(fields, body), "me", Subresource::Main).unwrap()
    }

    fn with_meta(body: Value) -> Value {
        let mut out = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "ns"}});
        merge_top(&mut out, body);
        out
    }

    #[test]
    fn a_list_keyed_by_several_keys_keeps_each_item_with_its_keys() {
        let fields = json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"app\"}": {".": {}, "f:ports": {
                "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:name": {}},
            }},
        }}}}});
        let body = json!({"spec": {"replicas": 3, "template": {"spec": {"containers": [
            {"name": "side", "image": "s"},
            {"name": "app", "image": "a", "ports": [
                {"containerPort": 80, "protocol": "TCP", "name": "http", "hostPort": 8080},
                {"containerPort": 80, "protocol": "UDP", "name": "dns"},
            ]},
        ]}}}});
        assert_eq!(
            mine(fields, body),
            with_meta(json!({"spec": {"template": {"spec": {"containers": [
                {"name": "app", "ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}]},
            ]}}}}))
        );
    }

    #[test]
    fn set_items_positions_and_leaves_keep_their_live_values() {
        let fields = json!({"f:metadata": {"f:finalizers": {".": {}, "v:\"b\"": {}, "v:{\"x\":1}": {}}},
            "f:spec": {"f:selector": {}, "f:list": {"i:1": {"f:a": {}}}}});
        let body = json!({"metadata": {"finalizers": ["a", "b", {"x": 1}]},
            "spec": {"selector": {"matchLabels": {"app": "d"}}, "list": [{"a": 0}, {"a": 1, "b": 2}]}});
        assert_eq!(
            mine(fields, body),
            with_meta(json!({"metadata": {"finalizers": ["b", {"x": 1}]},
                "spec": {"selector": {"matchLabels": {"app": "d"}}, "list": [{"a": 1}]}}))
        );
    }

    #[test]
    fn nested_members_stay_as_empty_nodes_when_their_fields_are_gone() {
        // `.` on labels: owned itself; its owned key is no longer live.
        let fields = json!({"f:metadata": {"f:labels": {".": {}, "f:gone": {}},
            "f:annotations": {"f:gone": {}}},
            "f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"x\"}": {".": {}, "f:image": {}}}}}}});
        let body = json!({"metadata": {"labels": {"theirs": "1"}, "annotations": {"theirs": "2"}},
            "spec": {"template": {"spec": {"containers": [{"name": "x"}]}}}});
        assert_eq!(
            mine(fields, body),
            with_meta(json!({"metadata": {"labels": {}},
                "spec": {"template": {"spec": {"containers": [{"name": "x"}]}}}}))
        );
    }

    #[test]
    fn a_leaf_others_own_inside_is_granular_and_comes_back_empty() {
        let mut obj = live(
            json!({"f:metadata": {"f:labels": {}, "f:annotations": {}}, "f:spec": {"f:selector": {}}}),
            json!({"metadata": {"labels": {"x": "1"}, "annotations": {"y": "2"}},
                "spec": {"selector": {"matchLabels": {"app": "d"}}}}),
        );
        obj["metadata"]["managedFields"]
            .as_array_mut()
            .unwrap()
            .push(
                json!({"manager": "ed", "operation": "Update", "apiVersion": "apps/v1",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"f:x": {}}}}}),
            );
        // `labels`: "ed" owns a key in it; `annotations`: nobody does (kept
        // whole, as an atomic map would be); `selector`: atomic.
        assert_eq!(
            extract_value(&obj, "me", Subresource::Main).unwrap(),
            with_meta(
                json!({"metadata": {"labels": {}, "annotations": {"y": "2"}},
                "spec": {"selector": {"matchLabels": {"app": "d"}}}})
            )
        );
    }

    #[test]
    fn the_entry_is_the_managers_apply_for_the_subresource() {
        let mut obj = live(
            json!({"f:spec": {"f:paused": {}}}),
            json!({"spec": {"paused": true},
            "status": {"replicas": 2, "readyReplicas": 1}}),
        );
        obj["metadata"]["managedFields"]
            .as_array_mut()
            .unwrap()
            .extend([
                json!({"manager": "me", "operation": "Apply", "apiVersion": "apps/v1", "subresource": "status",
                    "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:replicas": {}}}}),
                json!({"manager": "me", "operation": "Update", "apiVersion": "apps/v1",
                    "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:readyReplicas": {}}}}),
            ]);
        let main = extract_value(&obj, "me", Subresource::Main).unwrap();
        assert_eq!(main, with_meta(json!({"spec": {"paused": true}})));
        let status = extract_value(&obj, "me", Subresource::Status).unwrap();
        assert_eq!(status, with_meta(json!({"status": {"replicas": 2}})));
        let none = extract_value(&obj, "me", Subresource::Scale).unwrap();
        assert_eq!(none, with_meta(json!({})));
        let nobody = extract_value(&obj, "nobody", Subresource::Main).unwrap();
        assert_eq!(nobody, with_meta(json!({})));
    }

    #[test]
    fn typed_extract_decodes_into_the_type_asked_for() {
        use crate::api::apps::v1::Deployment;
        let obj: Deployment = serde_json::from_value(live(
            json!({"f:spec": {"f:paused": {}}}),
            json!({"spec": {"paused": true, "replicas": 2, "selector": {}, "template": {}}}),
        ))
        .unwrap();
        let v: Value = extract(&obj, "me", Subresource::Main).unwrap();
        assert_eq!(v, with_meta(json!({"spec": {"paused": true}})));
        let typed: Deployment = extract(&obj, "me", Subresource::Main).unwrap();
        assert_eq!(typed.spec.unwrap().paused, Some(true));
        // A type that cannot hold it is an error naming the type.
        let err = extract::<u8>(&obj, "me", Subresource::Main).unwrap_err();
        assert!(
            matches!(
                err,
                ExtractError::Decode {
                    type_name: "u8",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn hostile_managed_fields_are_errors_never_panics() {
        let err = |fields: Value| {
            extract_value(
                &live(fields, json!({"spec": {"a": [1]}})),
                "me",
                Subresource::Main,
            )
            .unwrap_err()
            .to_string()
        };
        assert_eq!(
            err(json!({"x:y": {}})),
            "fieldsV1 at \"\": unknown element \"x:y\""
        );
        assert_eq!(
            err(json!({"f:spec": {"f:a": {"k:{bad": {}}}})),
            "fieldsV1 at \".spec.a\": unreadable element \"k:{bad\""
        );
        assert!(err(json!({"f:spec": {"f:a": {"i:-1": {}}}})).contains("unreadable element"));
        assert!(err(json!({"f:spec": "no"})).contains("unknown element \"f:spec\""));
        // Unknown elements are refused even where the live value has no place.
        assert!(err(json!({"f:spec": {"f:a": {"i:0": {"zz": {}}}}})).contains("unknown element"));
        let mut deep = json!({});
        for _ in 0..(MAX_DEPTH + 5) {
            deep = json!({"f:spec": deep});
        }
        let mut nested = json!(1);
        for _ in 0..(MAX_DEPTH + 5) {
            nested = json!({"spec": nested});
        }
        let obj = live(deep, nested);
        assert_too_large(&obj, "fieldsV1 depth");
        // Malformed entries and lists.
        let mut obj = live(json!({}), json!({}));
        obj["metadata"]["managedFields"] = json!("x");
        let e = extract_value(&obj, "me", Subresource::Main).unwrap_err();
        assert_eq!(e.to_string(), "metadata.managedFields: not a list");
        obj["metadata"]["managedFields"] =
            json!([{"manager": "me", "operation": "Apply", "fieldsType": "FieldsV2"}]);
        let e = extract_value(&obj, "me", Subresource::Main).unwrap_err();
        assert_eq!(
            e.to_string(),
            "metadata.managedFields[0]: fieldsType is not FieldsV1"
        );
        obj["metadata"]["managedFields"] = json!([7]);
        assert!(extract_value(&obj, "me", Subresource::Main).is_err());
        obj["metadata"]["managedFields"] = Value::Array(vec![json!({}); MAX_ENTRIES + 1]);
        assert_too_large(&obj, "managedFields entries");
        // Not an object, no kind, no name.
        assert!(matches!(
            extract_value(&json!([]), "me", Subresource::Main),
            Err(ExtractError::NotAnObject)
        ));
        let e = extract_value(
            &json!({"apiVersion": "v1", "metadata": {"name": "a"}}),
            "me",
            Subresource::Main,
        );
        assert!(matches!(
            e,
            Err(ExtractError::MissingField { field: "kind" })
        ));
        let e = extract_value(
            &json!({"apiVersion": "v1", "kind": "K"}),
            "me",
            Subresource::Main,
        );
        assert!(matches!(
            e,
            Err(ExtractError::MissingField {
                field: "metadata.name"
            })
        ));
    }

    /// Extracting from `obj` fails with `TooLarge` for `what`.
    fn assert_too_large(obj: &Value, what: &str) {
        let e = extract_value(obj, "me", Subresource::Main).unwrap_err();
        assert!(
            matches!(&e, ExtractError::TooLarge { what: w, .. } if *w == what),
            "{e}"
        );
    }

    #[test]
    fn too_many_nodes_is_an_error() {
        let wide: Map<String, Value> = (0..=MAX_FIELD_NODES)
            .map(|i| (format!("f:k{i}"), json!({})))
            .collect();
        let obj = live(json!({"f:data": wide}), json!({"data": {"k1": "v"}}));
        assert_too_large(&obj, "fieldsV1 nodes");
    }
}
