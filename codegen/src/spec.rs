//! Serde model of the two input formats: OpenAPI 3.0 documents (one per
//! group-version, as served at `/openapi/v3/...`) and Swagger 2.0
//! (`swagger.json`). Only the parts the generator reads are modelled;
//! everything else is ignored.

use std::collections::BTreeMap;

use serde::Deserialize;

/// A JSON schema as Kubernetes writes it, in either format.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Schema {
    /// `$ref` to another definition.
    #[serde(rename = "$ref")]
    pub reference: Option<String>,
    /// `allOf`; v3 wraps a single `$ref` in it to attach a description.
    #[serde(rename = "allOf")]
    pub all_of: Vec<Schema>,
    /// `type`.
    #[serde(rename = "type")]
    pub ty: Option<String>,
    /// `format`.
    pub format: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `properties` of an object.
    pub properties: BTreeMap<String, Schema>,
    /// Names of required properties.
    pub required: Vec<String>,
    /// `items` of an array.
    pub items: Option<Box<Schema>>,
    /// `additionalProperties` of a map.
    #[serde(rename = "additionalProperties")]
    pub additional_properties: Option<AdditionalProperties>,
    /// `x-kubernetes-group-version-kind`.
    #[serde(rename = "x-kubernetes-group-version-kind")]
    pub gvk: Vec<Gvk>,
    /// `x-kubernetes-int-or-string`.
    #[serde(rename = "x-kubernetes-int-or-string")]
    pub int_or_string: bool,
    /// `x-kubernetes-preserve-unknown-fields`.
    #[serde(rename = "x-kubernetes-preserve-unknown-fields")]
    pub preserve_unknown_fields: bool,
    /// `x-kubernetes-embedded-resource`: the value is a whole object with
    /// `apiVersion`, `kind` and `metadata`.
    #[serde(rename = "x-kubernetes-embedded-resource")]
    pub embedded_resource: bool,
    /// `enum`: the allowed values.
    #[serde(rename = "enum")]
    pub enum_values: Vec<serde_json::Value>,
    /// `nullable`: `null` is a valid value.
    pub nullable: bool,
    /// `default`: what the server fills in when the field is absent.
    pub default: Option<serde_json::Value>,
    /// `oneOf` alternatives.
    #[serde(rename = "oneOf")]
    pub one_of: Vec<Schema>,
    /// `anyOf` alternatives.
    #[serde(rename = "anyOf")]
    pub any_of: Vec<Schema>,
    /// `not`.
    pub not: Option<Box<Schema>>,
    /// `x-kubernetes-validations`: CEL rules.
    #[serde(rename = "x-kubernetes-validations")]
    pub validations: Vec<CelRule>,
    /// `x-kubernetes-list-type`: `atomic`, `set` or `map`.
    #[serde(rename = "x-kubernetes-list-type")]
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys` of a `map` list.
    #[serde(rename = "x-kubernetes-list-map-keys")]
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-patch-merge-key`: the key of a list's items in
    /// strategic merge patch.
    #[serde(rename = "x-kubernetes-patch-merge-key")]
    pub patch_merge_key: Option<String>,
    /// `x-kubernetes-map-type`: `atomic` or `granular`.
    #[serde(rename = "x-kubernetes-map-type")]
    pub map_type: Option<String>,
    /// `pattern` of a string.
    pub pattern: Option<String>,
    /// `minLength`.
    #[serde(rename = "minLength")]
    pub min_length: Option<u64>,
    /// `maxLength`.
    #[serde(rename = "maxLength")]
    pub max_length: Option<u64>,
    /// `minimum`.
    pub minimum: Option<serde_json::Number>,
    /// `maximum`.
    pub maximum: Option<serde_json::Number>,
    /// `exclusiveMinimum`.
    #[serde(rename = "exclusiveMinimum")]
    pub exclusive_minimum: bool,
    /// `exclusiveMaximum`.
    #[serde(rename = "exclusiveMaximum")]
    pub exclusive_maximum: bool,
    /// `minItems`.
    #[serde(rename = "minItems")]
    pub min_items: Option<u64>,
    /// `maxItems`.
    #[serde(rename = "maxItems")]
    pub max_items: Option<u64>,
    /// `minProperties`.
    #[serde(rename = "minProperties")]
    pub min_properties: Option<u64>,
    /// `maxProperties`.
    #[serde(rename = "maxProperties")]
    pub max_properties: Option<u64>,
}

/// One CEL rule of `x-kubernetes-validations`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CelRule {
    /// The CEL expression.
    pub rule: String,
    /// Message shown when it fails.
    pub message: Option<String>,
    /// CEL expression computing the message.
    #[serde(rename = "messageExpression")]
    pub message_expression: Option<String>,
    /// `reason` (`FieldValueInvalid`, …).
    pub reason: Option<String>,
    /// `fieldPath` the failure is reported at.
    #[serde(rename = "fieldPath")]
    pub field_path: Option<String>,
}

/// `additionalProperties`: a schema, or a boolean.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum AdditionalProperties {
    /// `true`/`false`.
    Bool(bool),
    /// A schema for the values.
    Schema(Box<Schema>),
}

/// A group-version-kind triple.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
pub struct Gvk {
    /// API group, empty for core.
    #[serde(default)]
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

impl Gvk {
    /// The `apiVersion` of the kind: `group/version`, or the version alone
    /// in the core group.
    ///
    /// ```
    /// use kubeset_codegen::spec::Gvk;
    /// let gvk = |group: &str| Gvk { group: group.into(), version: "v1".into(), kind: "K".into() };
    /// assert_eq!(gvk("").api_version(), "v1");
    /// assert_eq!(gvk("apps").api_version(), "apps/v1");
    /// ```
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// One operation of a path item.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Operation {
    /// `x-kubernetes-action`: get, list, post, put, patch, delete,
    /// deletecollection, watch, watchlist, connect.
    #[serde(rename = "x-kubernetes-action")]
    pub action: Option<String>,
    /// `x-kubernetes-group-version-kind` of the object the operation is about.
    #[serde(rename = "x-kubernetes-group-version-kind")]
    pub gvk: Option<Gvk>,
    /// `description`.
    pub description: Option<String>,
    /// Parameters of this operation (added to the path item's).
    pub parameters: Vec<Parameter>,
    /// v3 `requestBody`.
    #[serde(rename = "requestBody")]
    pub request_body: Option<RequestBody>,
    /// Responses by status code.
    pub responses: BTreeMap<String, Response>,
}

impl Operation {
    /// The request body schema: v3 `requestBody`, or v2's `in: body` parameter.
    pub fn request_schema(&self) -> Option<&Schema> {
        if let Some(body) = &self.request_body {
            return body.content.values().next().map(|m| &m.schema);
        }
        self.parameters
            .iter()
            .find(|p| p.location == "body")
            .and_then(|p| p.schema.as_ref())
    }

    /// The schema of the `200` response, in either format.
    pub fn ok_schema(&self) -> Option<&Schema> {
        let ok = self.responses.get("200")?;
        if let Some(schema) = &ok.schema {
            return Some(schema);
        }
        // v3: every media type carries the same schema; JSON first.
        ok.content
            .get("application/json")
            .or_else(|| ok.content.values().next())
            .map(|m| &m.schema)
    }
}

/// One parameter of an operation or a path item.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Parameter {
    /// v2 `$ref` to a shared parameter (`#/parameters/...`), resolved on input.
    #[serde(rename = "$ref")]
    pub reference: Option<String>,
    /// Name.
    pub name: String,
    /// `in`: `query`, `path`, `body`.
    #[serde(rename = "in")]
    pub location: String,
    /// `description`.
    pub description: Option<String>,
    /// Whether required.
    pub required: bool,
    /// v3 (and v2 `in: body`) schema.
    pub schema: Option<Schema>,
    /// v2 `type` of a non-body parameter.
    #[serde(rename = "type")]
    pub ty: Option<String>,
}

impl Parameter {
    /// The JSON type of a non-body parameter (`string`, `boolean`, `integer`).
    pub fn json_type(&self) -> Option<&str> {
        self.ty
            .as_deref()
            .or_else(|| self.schema.as_ref().and_then(|s| s.ty.as_deref()))
    }
}

/// A v3 `requestBody`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct RequestBody {
    /// Schemas by media type.
    pub content: BTreeMap<String, MediaType>,
}

/// A v3 media type entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct MediaType {
    /// Schema.
    pub schema: Schema,
}

/// One response of an operation.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Response {
    /// v2 schema.
    pub schema: Option<Schema>,
    /// v3 schemas by media type.
    pub content: BTreeMap<String, MediaType>,
}

/// A path item: operations by HTTP method.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PathItem {
    /// GET.
    pub get: Option<Operation>,
    /// PUT.
    pub put: Option<Operation>,
    /// POST.
    pub post: Option<Operation>,
    /// DELETE.
    pub delete: Option<Operation>,
    /// PATCH.
    pub patch: Option<Operation>,
    /// HEAD.
    pub head: Option<Operation>,
    /// OPTIONS.
    pub options: Option<Operation>,
    /// Parameters shared by every operation of the path.
    pub parameters: Vec<Parameter>,
}

impl PathItem {
    /// The operations present, in a fixed order.
    pub fn operations(&self) -> impl Iterator<Item = &Operation> {
        self.methods().map(|(_, op)| op)
    }

    /// The operations present with their HTTP methods (`GET`, …), in the
    /// order of [`PathItem::operations`].
    pub fn methods(&self) -> impl Iterator<Item = (&'static str, &Operation)> {
        [
            ("GET", &self.get),
            ("PUT", &self.put),
            ("POST", &self.post),
            ("DELETE", &self.delete),
            ("PATCH", &self.patch),
            ("HEAD", &self.head),
            ("OPTIONS", &self.options),
        ]
        .into_iter()
        .filter_map(|(m, op)| Some((m, op.as_ref()?)))
    }
}

/// `components` of an OpenAPI 3 document.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Components {
    /// Schemas by definition name.
    pub schemas: BTreeMap<String, Schema>,
}

/// One OpenAPI 3.0 document (`/openapi/v3/apis/<group>/<version>`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct OpenApiV3 {
    /// `openapi` version string, `3.0.0`.
    pub openapi: String,
    /// Paths.
    pub paths: BTreeMap<String, PathItem>,
    /// Components.
    pub components: Components,
}

/// A Swagger 2.0 document (`swagger.json`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SwaggerV2 {
    /// `swagger` version string, `2.0`.
    pub swagger: String,
    /// Paths.
    pub paths: BTreeMap<String, PathItem>,
    /// Definitions by name.
    pub definitions: BTreeMap<String, Schema>,
    /// Shared parameters by name (`#/parameters/<name>`).
    pub parameters: BTreeMap<String, Parameter>,
}

impl Schema {
    /// The definition this schema refers to, by name: its `$ref`, or the
    /// `$ref` of its one `allOf` entry (how v3 documents give a reference a
    /// description of its own). One rule for the lowering and the merge: a
    /// property that gains a description between two versions keeps its
    /// type.
    pub fn referenced(&self) -> Option<&str> {
        match (&self.reference, self.all_of.as_slice()) {
            (Some(r), _) => ref_name(r),
            (None, [one]) => one.reference.as_deref().and_then(ref_name),
            _ => None,
        }
    }
}

/// The definition name a `$ref` points to, for both formats.
pub fn ref_name(reference: &str) -> Option<&str> {
    reference
        .strip_prefix("#/components/schemas/")
        .or_else(|| reference.strip_prefix("#/definitions/"))
}

/// Definitions and paths of one input, whatever its format, with the file
/// each definition was read from.
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// Definitions by name.
    pub definitions: BTreeMap<String, Schema>,
    /// The spec file (relative to the spec directory) each definition came from.
    pub sources: BTreeMap<String, String>,
    /// Paths, merged across documents.
    pub paths: BTreeMap<String, PathItem>,
    /// Which versions have which items, when several were merged
    /// ([`crate::merge::merge`]).
    pub versions: crate::versions::Versions,
}

impl Input {
    /// Adds a v3 document read from `file`. Definitions already present are
    /// kept (each v3 document repeats the shared ones).
    pub fn add_v3(&mut self, file: &str, doc: OpenApiV3) {
        for (name, schema) in doc.components.schemas {
            if !self.definitions.contains_key(&name) {
                self.sources.insert(name.clone(), file.to_owned());
                self.definitions.insert(name, schema);
            }
        }
        for (path, item) in doc.paths {
            self.paths.entry(path).or_insert(item);
        }
    }

    /// Adds a v2 document read from `file`; definitions and paths already
    /// present are kept.
    pub fn add_v2(&mut self, file: &str, doc: SwaggerV2) {
        for (name, schema) in doc.definitions {
            if !self.definitions.contains_key(&name) {
                self.sources.insert(name.clone(), file.to_owned());
                self.definitions.insert(name, schema);
            }
        }
        let shared = doc.parameters;
        for (path, mut item) in doc.paths {
            resolve_parameters(&mut item.parameters, &shared);
            for op in [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
                &mut item.head,
                &mut item.options,
            ]
            .into_iter()
            .flatten()
            {
                resolve_parameters(&mut op.parameters, &shared);
            }
            self.paths.entry(path).or_insert(item);
        }
    }
}

/// Replaces v2 `$ref` parameters by the shared ones they name (unknown
/// references are kept as they are).
fn resolve_parameters(params: &mut [Parameter], shared: &BTreeMap<String, Parameter>) {
    for p in params {
        let target = p
            .reference
            .as_deref()
            .and_then(|r| r.strip_prefix("#/parameters/"))
            .and_then(|name| shared.get(name));
        if let Some(target) = target {
            *p = target.clone();
        }
    }
}
