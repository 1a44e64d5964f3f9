//! `/openapi/v2` and `/openapi/v3` (index and per group-version documents,
//! with ETags), plus a document for every CRD group-version built from the
//! CRDs' schemas.
//!
//! By default the built-in group-versions' documents are built from the
//! schemas compiled into kubeset-api (its `schemas` feature: every model's
//! properties, descriptions, list and map types), each kind's definition
//! under its upstream name (`io.k8s.api.apps.v1.Deployment`) with its
//! `x-kubernetes-group-version-kind`, and the PATCH operations kubectl looks
//! for. They are built on the first request for them and kept for the life
//! of the process (they do not change), so a server starts without them.
//! Each definition is written once under its upstream name and referred to
//! by `$ref` (kubeset-api's `schema::openapi::components`), as
//! kube-apiserver does, so `kubectl explain` names a nested object's type
//! (`<DeploymentStrategy>`) and prints its definition's description. What
//! still differs from a real server: the spec directory codegen reads
//! (`kubernetes/v1.35`, collected by kubectl-validate) has no `enum`
//! values and no "Possible enum values" in descriptions, which
//! kube-apiserver's own documents have, so `explain` of a field with an
//! enum type (`deployment.spec.strategy.type`) lacks the `ENUM:` list and
//! those lines.
//!
//! [`crate::TestServerBuilder::openapi_specs`] (`kubeset serve
//! --openapi-specs` or `$KUBESET_SPECS`) overrides them with the specs
//! upstream publishes, read from a directory at server start:
//! `swagger.json` and `openapi-v3/api/v1.json`,
//! `openapi-v3/apis/<group>/<version>.json` (about 15 MB for 1.35; nothing
//! of it is copied into this repository). `/openapi/v2` is the swagger of
//! that directory; without one it has only the CRDs' definitions.

use std::collections::{BTreeMap, HashMap};
use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use serde_json::{Map, Value, json};

use kubeset_api::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset_api::schema::{self, JsonSchema};

use crate::discovery;
use crate::resources::Resource;
use crate::shape;

/// `ObjectMeta`'s definition name, which CRD documents refer to.
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// Largest spec file read (upstream's biggest, api/v1.json, is ~2 MB).
const MAX_SPEC_FILE: u64 = 64 << 20;

/// One served document and its ETag.
#[derive(Debug, Clone)]
pub(crate) struct Doc {
    pub(crate) bytes: Bytes,
    pub(crate) etag: String,
}

impl Doc {
    fn new(bytes: Vec<u8>) -> Self {
        let mut h = DefaultHasher::new();
        h.write(&bytes);
        Self {
            etag: format!("{:016X}", h.finish()),
            bytes: Bytes::from(bytes),
        }
    }

    fn of(v: &Value) -> Self {
        Self::new(serde_json::to_vec(v).unwrap_or_default())
    }
}

/// The specs read at start.
#[derive(Debug)]
pub(crate) struct Specs {
    v2: Value,
    v3: BTreeMap<String, Doc>,
    /// `io.k8s.apimachinery.pkg.apis.meta.v1.*` schemas, for CRD documents.
    meta: Map<String, Value>,
}

fn read_bounded(path: &Path) -> Result<Vec<u8>, std::io::Error> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_SPEC_FILE + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SPEC_FILE {
        return Err(std::io::Error::other(format!(
            "larger than {MAX_SPEC_FILE} bytes"
        )));
    }
    Ok(bytes)
}

fn read_json(path: &Path) -> Result<(Vec<u8>, Value), std::io::Error> {
    let bytes = read_bounded(path)?;
    let v = serde_json::from_slice(&bytes).map_err(std::io::Error::other)?;
    Ok((bytes, v))
}

/// Reads `dir` (a `kubernetes/<version>` spec directory).
pub(crate) fn load(dir: &Path) -> Result<Specs, (PathBuf, std::io::Error)> {
    let at = |p: PathBuf| move |e| (p, e);
    let swagger = dir.join("swagger.json");
    let (_, v2) = read_json(&swagger).map_err(at(swagger.clone()))?;
    let mut v3 = BTreeMap::new();
    let mut meta = Map::new();
    let core = dir.join("openapi-v3/api/v1.json");
    let (bytes, doc) = read_json(&core).map_err(at(core.clone()))?;
    if let Some(schemas) = doc
        .pointer("/components/schemas")
        .and_then(Value::as_object)
    {
        meta.extend(
            schemas
                .iter()
                .filter(|(k, _)| k.starts_with("io.k8s.apimachinery.pkg.apis.meta.v1."))
                .map(|(k, v)| (k.clone(), v.clone())),
        );
    }
    v3.insert("api/v1".to_owned(), Doc::new(bytes));
    let apis = dir.join("openapi-v3/apis");
    for group in std::fs::read_dir(&apis).map_err(at(apis.clone()))? {
        let group = group.map_err(at(apis.clone()))?.path();
        let Some(g) = group
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_owned)
        else {
            continue;
        };
        for file in std::fs::read_dir(&group).map_err(at(group.clone()))? {
            let path = file.map_err(at(group.clone()))?.path();
            let Some(v) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".json"))
            else {
                continue;
            };
            let v = v.to_owned();
            let bytes = read_bounded(&path).map_err(at(path.clone()))?;
            v3.insert(format!("apis/{g}/{v}"), Doc::new(bytes));
        }
    }
    Ok(Specs { v2, v3, meta })
}

fn crd_resources<'a>(resources: &'a [Arc<Resource>], gv: &str) -> Vec<&'a Arc<Resource>> {
    resources
        .iter()
        .filter(|r| r.custom && gv_of(r) == gv)
        .collect()
}

/// `stable.example.com`, `v1`, `CronTab` → `com.example.stable.v1.CronTab`.
fn definition_name(r: &Resource) -> String {
    let group: Vec<&str> = r.group.split('.').rev().collect();
    format!("{}.{}.{}", group.join("."), r.version, r.kind)
}

/// A CRD version's schema with `apiVersion`, `kind`, `metadata` and the
/// GVK extension, as the apiextensions server publishes it.
fn crd_schema(r: &Resource, meta_ref: Option<&str>) -> Value {
    let mut s =
        r.schema.as_deref().cloned().unwrap_or_else(
            || json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
        );
    if !s.is_object() {
        s = json!({"type": "object"});
    }
    let props = s
        .as_object_mut()
        .map(|m| m.entry("properties").or_insert_with(|| json!({})));
    if let Some(Value::Object(p)) = props {
        p.insert("apiVersion".into(), json!({"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."}));
        p.insert("kind".into(), json!({"type": "string", "description": "Kind is a string value representing the REST resource this object represents."}));
        let metadata = match meta_ref {
            Some(reference) => {
                json!({"allOf": [{"$ref": reference}], "description": "Standard object's metadata."})
            }
            None => json!({"type": "object", "description": "Standard object's metadata."}),
        };
        p.insert("metadata".into(), metadata);
    }
    s["x-kubernetes-group-version-kind"] =
        json!([{"group": r.group, "version": r.version, "kind": r.kind}]);
    s
}

fn crd_doc(
    specs: Option<&Specs>,
    resources: &[Arc<Resource>],
    gv: &str,
    crds: &[&Arc<Resource>],
) -> Value {
    let mut doc = discovery::openapi_doc(resources, gv)
        .unwrap_or_else(|| json!({"openapi": "3.0.0", "paths": {}}));
    let mut schemas = Map::new();
    let meta_ref = format!("#/components/schemas/{OBJECT_META}");
    for r in crds {
        schemas.insert(definition_name(r), crd_schema(r, Some(&meta_ref)));
    }
    match specs {
        Some(s) if s.meta.contains_key(OBJECT_META) => schemas.extend(s.meta.clone()),
        _ => schemas.extend(compiled_object_meta().clone()),
    }
    doc["components"] = json!({"schemas": schemas});
    doc
}

/// `/openapi/v3/<gv>`.
pub(crate) fn v3_doc(specs: Option<&Specs>, resources: &[Arc<Resource>], gv: &str) -> Option<Doc> {
    let crds = crd_resources(resources, gv);
    if !crds.is_empty() {
        return Some(Doc::of(&crd_doc(specs, resources, gv, &crds)));
    }
    match specs {
        Some(s) => {
            s.v3.get(gv)
                .cloned()
                .or_else(|| discovery::openapi_doc(resources, gv).map(|d| Doc::of(&d)))
        }
        None => compiled_doc(resources, gv),
    }
}

/// `ObjectMeta`'s compiled definition and those it refers to, built once.
fn compiled_object_meta() -> &'static Map<String, Value> {
    static META: OnceLock<Map<String, Value>> = OnceLock::new();
    META.get_or_init(|| {
        let roots: Vec<_> = ObjectMeta::DEFINITION.into_iter().collect();
        schema::openapi::components(&roots)
    })
}

/// A built-in kind's upstream definition name: `apps`, `v1`, `Deployment`
/// → `io.k8s.api.apps.v1.Deployment` (the Go package's path reversed).
fn builtin_definition_name(r: &Resource) -> String {
    let package = match r.group.as_str() {
        "" => "io.k8s.api.core",
        "internal.apiserver.k8s.io" => "io.k8s.api.apiserverinternal",
        "apiregistration.k8s.io" => "io.k8s.kube-aggregator.pkg.apis.apiregistration",
        "apiextensions.k8s.io" => "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions",
        g => {
            let short = g.split('.').next().unwrap_or(g);
            return format!("io.k8s.api.{short}.{}.{}", r.version, r.kind);
        }
    };
    format!("{package}.{}.{}", r.version, r.kind)
}

/// `/openapi/v3/<gv>` of a built-in group-version from the compiled
/// schemas, built on first use and cached for the process (keyed by the
/// group-version and the kinds served in it).
fn compiled_doc(resources: &[Arc<Resource>], gv: &str) -> Option<Doc> {
    type Cache = Mutex<HashMap<String, Doc>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let (key, in_gv) = compiled_key(resources, gv)?;
    let cache = CACHE.get_or_init(Cache::default);
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = cache.get(&key) {
        return Some(d.clone());
    }
    let mut doc = discovery::openapi_doc(resources, gv)?;
    let mut roots = Vec::new();
    let mut deduced = Vec::new();
    for r in &in_gv {
        match schema::definition(&builtin_definition_name(r)) {
            Some(d) => roots.push(d),
            None => deduced.push(r),
        }
    }
    let mut schemas = schema::openapi::components(&roots);
    // A kind without a compiled definition (`CustomResourceDefinition`,
    // in a reference cycle) is published inlined, or open.
    for r in deduced {
        let schema = shape::builtin_schema(&r.api_version(), &r.kind)
            .and_then(|s| serde_json::to_value(s).ok())
            .unwrap_or_else(
                || json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
            );
        schemas.insert(builtin_definition_name(r), schema);
    }
    for r in in_gv {
        if let Some(Value::Object(s)) = schemas.get_mut(&builtin_definition_name(r)) {
            s.insert(
                "x-kubernetes-group-version-kind".to_owned(),
                json!([{"group": r.group, "kind": r.kind, "version": r.version}]),
            );
        }
    }
    doc["components"] = json!({"schemas": schemas});
    let d = Doc {
        bytes: Bytes::from(serde_json::to_vec(&doc).unwrap_or_default()),
        etag: compiled_etag(&key),
    };
    cache.insert(key, d.clone());
    Some(d)
}

/// What a compiled document is a function of: the group-version and the
/// built-in kinds served in it (`None` when there are none), with those
/// resources.
fn compiled_key<'a>(
    resources: &'a [Arc<Resource>],
    gv: &str,
) -> Option<(String, Vec<&'a Arc<Resource>>)> {
    let in_gv: Vec<&Arc<Resource>> = resources
        .iter()
        .filter(|r| !r.custom && gv_of(r) == gv)
        .collect();
    if in_gv.is_empty() {
        return None;
    }
    let key = in_gv.iter().fold(gv.to_owned(), |mut k, r| {
        k.push(' ');
        k.push_str(&r.kind);
        k
    });
    Some((key, in_gv))
}

/// A compiled document's ETag, from its key and this build (the schemas
/// are compiled in): the `/openapi/v3` index lists it without building
/// the document, which only the documents asked for are.
fn compiled_etag(key: &str) -> String {
    let mut h = DefaultHasher::new();
    h.write(b"kubeset-compiled-schemas ");
    h.write(env!("CARGO_PKG_VERSION").as_bytes());
    h.write(key.as_bytes());
    format!("{:016X}", h.finish())
}

/// The hash the index lists for `gv` (its document's ETag).
fn v3_hash(specs: Option<&Specs>, resources: &[Arc<Resource>], gv: &str) -> Option<String> {
    if specs.is_none() && crd_resources(resources, gv).is_empty() {
        return compiled_key(resources, gv).map(|(key, _)| compiled_etag(&key));
    }
    v3_doc(specs, resources, gv).map(|d| d.etag)
}

/// `api/v1` or `apis/<group>/<version>`.
fn gv_of(r: &Resource) -> String {
    if r.group.is_empty() {
        format!("api/{}", r.version)
    } else {
        format!("apis/{}/{}", r.group, r.version)
    }
}

/// `/openapi/v3`: every served group-version with its document's hash.
pub(crate) fn v3_index(specs: Option<&Specs>, resources: &[Arc<Resource>]) -> Value {
    let mut paths = Map::new();
    for gv in discovery::group_versions(resources) {
        if let Some(hash) = v3_hash(specs, resources, &gv) {
            paths.insert(
                gv.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{gv}?hash={hash}")}),
            );
        }
    }
    json!({"paths": paths})
}

/// `/openapi/v2`: the release's swagger plus one definition per CRD
/// version (`None` without specs and CRDs).
pub(crate) fn v2(specs: Option<&Specs>, resources: &[Arc<Resource>]) -> Option<Doc> {
    let crds: Vec<&Arc<Resource>> = resources.iter().filter(|r| r.custom).collect();
    let mut doc = match specs {
        Some(s) => s.v2.clone(),
        None if crds.is_empty() => return None,
        None => {
            json!({"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.35.0"}, "paths": {}, "definitions": {}})
        }
    };
    let meta_ref = specs.map(|_| "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
    if let Some(Value::Object(defs)) = doc.get_mut("definitions") {
        for r in crds {
            defs.insert(definition_name(r), crd_schema(r, meta_ref));
        }
    }
    Some(Doc::of(&doc))
}
