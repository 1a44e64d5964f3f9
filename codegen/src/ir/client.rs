//! The client pass: which resources get accessors in the clientset and
//! which subresource operations become typed methods on `Api<Kind>`, with
//! their names (all from [`names`]), model types, parameters and the
//! features they need — as progenitor's `OperationMethod`. The client
//! emitter only writes what this decides.

use std::collections::{BTreeMap, BTreeSet};

use super::{Action, Ir, OperationResponse, QueryParam, SubresourceOperation, Ty, TypeDef};
use crate::error::CodegenError;
use crate::names;

/// Query parameters covered by `PostParams`/`PatchParams` or never sent.
pub const COMMON_QUERY: &[&str] = &[
    "dryRun",
    "fieldManager",
    "fieldValidation",
    "force",
    "pretty",
];

/// A model type of `kubeset-api`, by its path below the crate root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelType {
    /// Module segments (`api`, `core`, `v1`).
    pub modules: Vec<String>,
    /// Type name (`Pod`).
    pub name: String,
}

impl ModelType {
    fn of(t: &TypeDef) -> Self {
        Self {
            modules: t.modules.clone(),
            name: t.name.clone(),
        }
    }
}

/// A resource accessor of a group-version struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accessor {
    /// Method name (`pods`).
    pub name: String,
    /// The every-namespace accessor of a namespaced resource (`pods_all`);
    /// `None` for a cluster-scoped one.
    pub all_namespaces: Option<String>,
    /// The served kind.
    pub ty: ModelType,
    /// Lowercase plural.
    pub plural: String,
    /// `/api/v1` or `/apis/<group>/<version>`.
    pub prefix: String,
    /// First sentence of the kind's description.
    pub summary: Option<String>,
    /// The versions that serve the resource, when not every merged one does.
    pub gate: Option<super::Gate>,
}

/// What a subresource method answers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MethodResponse {
    /// A model object.
    Object(ModelType),
    /// Plain text (`String`).
    Text,
}

/// How a subresource method calls the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// GET; with `params`, the query struct of [`ParamsStruct`] (and, for a
    /// text answer, a byte-stream twin named `stream`).
    Get {
        /// The parameter struct's name.
        params: Option<String>,
        /// The stream method of a plain-text GET with parameters.
        stream: Option<String>,
    },
    /// PATCH with `PatchParams` and any `Patch`.
    Patch,
    /// PUT (`replace_subresource`) with `PostParams` and a body.
    Replace {
        /// The body's type.
        request: ModelType,
    },
    /// POST (`create_subresource`) with `PostParams` and a body.
    Create {
        /// The body's type.
        request: ModelType,
    },
}

/// One typed subresource method on `Api<parent>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationMethod {
    /// Method name (`get_scale`, `logs`).
    pub name: String,
    /// The kind whose `Api` gets the method.
    pub parent: ModelType,
    /// Subresource name as the server spells it (`scale`, `log`).
    pub subresource: String,
    /// `GET /api/v1/namespaces/{namespace}/pods/{name}/log`.
    pub route: String,
    /// The operation's description as one sentence.
    pub description: String,
    /// The answer.
    pub response: MethodResponse,
    /// The call.
    pub call: Call,
    /// The versions that have the operation, when not every merged one does.
    pub gate: Option<super::Gate>,
}

/// The type of a query parameter field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    /// `bool`.
    Bool,
    /// `i64`.
    I64,
    /// `String` (setter takes `impl Into<String>`).
    String,
}

/// One field of a [`ParamsStruct`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamField {
    /// Wire name (`tailLines`).
    pub wire: String,
    /// Field and setter name (`tail_lines`).
    pub rust: String,
    /// Its type.
    pub ty: ParamType,
    /// Description from the spec.
    pub description: String,
}

/// The generated query-parameter struct of a subresource GET.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamsStruct {
    /// Struct name (`PodLogParams`).
    pub name: String,
    /// The method that takes it.
    pub method: String,
    /// The method's route.
    pub route: String,
    /// Fields in wire-name order.
    pub fields: Vec<ParamField>,
    /// The versions that have the operation, when not every merged one does.
    pub gate: Option<super::Gate>,
}

/// One group-version of the clientset.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GroupVersion {
    /// Module name (`core_v1`).
    pub module: String,
    /// Struct name (`CoreV1`).
    pub struct_name: String,
    /// `core/v1`, `apps/v1`, … (more than one when groups share a feature).
    pub groups: BTreeSet<String>,
    /// Resource accessors, in resource order.
    pub accessors: Vec<Accessor>,
    /// Query-parameter structs of its methods.
    pub params: Vec<ParamsStruct>,
    /// Subresource methods, in operation order.
    pub methods: Vec<OperationMethod>,
    /// Other group-version features its methods' types need.
    pub needs: BTreeSet<String>,
}

/// The whole clientset.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Clientset {
    /// Group-versions by model feature (`core-v1`).
    pub group_versions: BTreeMap<String, GroupVersion>,
    /// Operations without a method: (route, reason) → HTTP methods.
    pub skipped: BTreeMap<(String, &'static str), Vec<String>>,
}

/// Why an operation gets no method, or the method it gets.
type Decided = Result<(OperationMethod, Option<ParamsStruct>, BTreeSet<String>), &'static str>;

/// The client pass over a lowered IR (after its fixups).
pub fn clientset(ir: &Ir) -> Result<Clientset, CodegenError> {
    let mut out = Clientset::default();
    // (group, version, plural) → the kind's type and feature.
    let mut parents: BTreeMap<(&str, &str, &str), (&TypeDef, &str)> = BTreeMap::new();
    for (r, t, feature) in served(ir) {
        parents.insert((&r.group, &r.version, &r.plural), (t, feature));
        let gv = out
            .group_versions
            .entry(feature.to_owned())
            .or_insert_with(|| GroupVersion {
                module: names::group_version_module(feature),
                struct_name: names::group_version_struct(feature),
                ..GroupVersion::default()
            });
        let group = if r.group.is_empty() { "core" } else { &r.group };
        gv.groups.insert(format!("{group}/{}", r.version));
        let name = names::resource_method(&r.kind, &r.plural);
        gv.accessors.push(Accessor {
            all_namespaces: r.namespaced.then(|| names::all_namespaces_method(&name)),
            name,
            ty: ModelType::of(t),
            plural: r.plural.clone(),
            prefix: api_prefix(&r.group, &r.version),
            summary: first_sentence(t.description.as_deref()),
            gate: r.gate.clone().or_else(|| t.gate.clone()),
        });
    }
    for op in &ir.subresource_operations {
        let parent = parents.get(&(op.group.as_str(), op.version.as_str(), op.plural.as_str()));
        let decided = match parent {
            None => Err("the parent resource has no model type"),
            // Served for every kind by Api::get_status/replace_status/patch_status.
            Some(_) if op.subresource == "status" && op.action != Action::Connect => continue,
            Some((t, feature)) => method(ir, op, t, feature),
        };
        match decided {
            Ok((method, params, needs)) => {
                let feature = parent.map(|(_, f)| *f).unwrap_or_default();
                let gv = out.group_versions.entry(feature.to_owned()).or_default();
                // The group-version's feature turns on the features its
                // methods' types need (`core-v1` → `policy-v1` for `evict`).
                gv.needs.extend(needs);
                gv.params.extend(params);
                gv.methods.push(method);
            }
            Err(why) => out
                .skipped
                .entry((route_of(op), why))
                .or_default()
                .push(op.method.to_uppercase()),
        }
    }
    check_names(&out)?;
    Ok(out)
}

/// The resources with a model type: resource, type, feature.
fn served(ir: &Ir) -> impl Iterator<Item = (&super::ResourceIr, &TypeDef, &str)> {
    let mut kinds: BTreeMap<(&str, &str, &str), &TypeDef> = BTreeMap::new();
    for t in ir.types.values() {
        if let (Some(gvk), Some(_), Some(_)) = (&t.gvk, &t.resource, &t.feature) {
            kinds.insert((&gvk.group, &gvk.version, &gvk.kind), t);
        }
    }
    ir.resources.iter().filter_map(move |r| {
        let t = *kinds.get(&(r.group.as_str(), r.version.as_str(), r.kind.as_str()))?;
        // The kind's own resource, not another served with the same kind.
        let own = t
            .resource
            .as_ref()
            .is_some_and(|own| own.plural == r.plural);
        Some((r, t, t.feature.as_deref()?)).filter(|_| own)
    })
}

/// The method of one operation on a served resource, or why there is none.
fn method(ir: &Ir, op: &SubresourceOperation, parent: &TypeDef, feature: &str) -> Decided {
    if op.action == Action::Connect {
        return Err(
            "connect: needs a protocol upgrade (SPDY/WebSocket) or proxies arbitrary traffic",
        );
    }
    if !matches!(op.method.as_str(), "get" | "put" | "post" | "patch") {
        return Err("no typed method for this HTTP method");
    }
    let response_ty = match &op.response {
        OperationResponse::Definition(d) => Some(
            ir.types
                .get(d)
                .ok_or("the response type is not in the spec")?,
        ),
        OperationResponse::Text => None,
        OperationResponse::Untyped => return Err("the spec names no response type"),
    };
    let request_ty = match (&op.request, op.method.as_str()) {
        (_, "get" | "patch") => None,
        (Some(d), _) => Some(
            ir.types
                .get(d)
                .ok_or("the request type is not in the spec")?,
        ),
        (None, _) => return Err("the spec names no request body"),
    };
    let needs = [request_ty, response_ty]
        .into_iter()
        .flatten()
        .filter_map(|t| t.feature.clone())
        .filter(|f| f != feature)
        .collect();
    let name = names::subresource_method(&op.subresource, &op.method);
    let route = format!("{} {}", op.method.to_uppercase(), route_of(op));
    let params = (op.method == "get")
        .then(|| params_struct(op, parent, &name, &route))
        .flatten();
    let call = match op.method.as_str() {
        "get" => Call::Get {
            params: params.as_ref().map(|p| p.name.clone()),
            stream: (params.is_some() && response_ty.is_none())
                .then(|| names::stream_method(&op.subresource)),
        },
        "patch" => Call::Patch,
        verb => {
            let request = request_ty
                .map(ModelType::of)
                .ok_or("the spec names no request body")?;
            if verb == "put" {
                Call::Replace { request }
            } else {
                Call::Create { request }
            }
        }
    };
    let method = OperationMethod {
        description: sentence(op.description.as_deref(), &format!("{name}.")),
        name,
        parent: ModelType::of(parent),
        subresource: op.subresource.clone(),
        route,
        response: response_ty.map_or(MethodResponse::Text, |t| {
            MethodResponse::Object(ModelType::of(t))
        }),
        call,
        gate: op.gate.clone(),
    };
    Ok((method, params, needs))
}

/// The query struct of a GET's parameters beyond [`COMMON_QUERY`], if any.
fn params_struct(
    op: &SubresourceOperation,
    parent: &TypeDef,
    method: &str,
    route: &str,
) -> Option<ParamsStruct> {
    let fields: Vec<ParamField> = op
        .query
        .iter()
        .filter(|q| !COMMON_QUERY.contains(&q.name.as_str()))
        .map(param_field)
        .collect();
    (!fields.is_empty()).then(|| ParamsStruct {
        name: names::params_struct(&parent.name, &op.subresource),
        method: method.to_owned(),
        route: route.to_owned(),
        fields,
        gate: op.gate.clone(),
    })
}

fn param_field(q: &QueryParam) -> ParamField {
    ParamField {
        wire: q.name.clone(),
        rust: names::field_name(&q.name),
        ty: match q.ty {
            Ty::Bool => ParamType::Bool,
            Ty::I64 => ParamType::I64,
            _ => ParamType::String,
        },
        description: q.description.clone().unwrap_or_default(),
    }
}

/// Accessor names are unique within a group-version, module names across.
fn check_names(set: &Clientset) -> Result<(), CodegenError> {
    let mut modules: BTreeMap<&str, &str> = BTreeMap::new();
    for (feature, gv) in &set.group_versions {
        let mut here: BTreeMap<&str, &str> = BTreeMap::new();
        for a in &gv.accessors {
            for n in std::iter::once(&a.name).chain(&a.all_namespaces) {
                if let Some(first) = here.insert(n, &a.plural) {
                    return Err(CodegenError::NameCollision {
                        scope: feature.clone(),
                        rust: n.clone(),
                        first: first.to_owned(),
                        second: a.plural.clone(),
                    });
                }
            }
        }
        if let Some(first) = modules.insert(&gv.module, feature) {
            return Err(CodegenError::NameCollision {
                scope: "clientset".into(),
                rust: gv.module.clone(),
                first: first.to_owned(),
                second: feature.clone(),
            });
        }
    }
    Ok(())
}

fn api_prefix(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    }
}

/// `/api/v1/namespaces/{namespace}/pods/{name}/log`.
fn route_of(op: &SubresourceOperation) -> String {
    let namespace = if op.namespaced {
        "/namespaces/{namespace}"
    } else {
        ""
    };
    format!(
        "{}{namespace}/{}/{{name}}/{}",
        api_prefix(&op.group, &op.version),
        op.plural,
        op.subresource
    )
}

/// `text` (or `fallback`) with a capital first letter and a final period.
fn sentence(text: Option<&str>, fallback: &str) -> String {
    let text = text
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .unwrap_or(fallback);
    let mut c = text.chars();
    let mut s = match c.next() {
        Some(f) => f.to_uppercase().to_string() + c.as_str(),
        None => String::new(),
    };
    if !s.ends_with('.') {
        s.push('.');
    }
    s
}

/// The first sentence of a description.
fn first_sentence(text: Option<&str>) -> Option<String> {
    let text = text?.trim();
    let end = [text.find(". "), text.find(".\n")]
        .into_iter()
        .flatten()
        .min()
        .map(|i| i + 1)
        .unwrap_or(text.len());
    Some(text[..end].to_owned())
}
