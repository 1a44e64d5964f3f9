//! `/openapi/v2` and `/openapi/v3` (index and per group-version documents,
//! with ETags) from the OpenAPI specs the models were generated from, plus
//! a document for every CRD group-version built from the CRDs' schemas.
//!
//! The specs are read from a directory at server start
//! ([`crate::TestServerBuilder::openapi_specs`]; `kubeset serve` takes
//! `--openapi-specs` or `$KUBESET_SPECS`), laid out as upstream publishes
//! them: `swagger.json` and `openapi-v3/api/v1.json`,
//! `openapi-v3/apis/<group>/<version>.json` (about 15 MB for 1.35; nothing
//! of it is embedded in the binary or copied into this repository).
//! Without a directory the built-in group-versions get permissive stub
//! documents (`discovery::openapi_doc`) and `/openapi/v2` has only CRDs.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Map, Value, json};

use crate::discovery;
use crate::resources::Resource;

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
        .filter(|r| r.custom && format!("apis/{}/{}", r.group, r.version) == gv)
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
    let mut s = r
        .schema
        .clone()
        .unwrap_or_else(|| json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
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
    let meta_ref = specs
        .filter(|s| !s.meta.is_empty())
        .map(|_| "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
    for r in crds {
        schemas.insert(definition_name(r), crd_schema(r, meta_ref));
    }
    if let Some(s) = specs {
        schemas.extend(s.meta.clone());
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
    if let Some(d) = specs.and_then(|s| s.v3.get(gv)) {
        return Some(d.clone());
    }
    discovery::openapi_doc(resources, gv).map(|d| Doc::of(&d))
}

/// `/openapi/v3`: every served group-version with its document's hash.
pub(crate) fn v3_index(specs: Option<&Specs>, resources: &[Arc<Resource>]) -> Value {
    let mut paths = Map::new();
    for gv in discovery::group_versions(resources) {
        if let Some(d) = v3_doc(specs, resources, &gv) {
            paths.insert(
                gv.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{gv}?hash={}", d.etag)}),
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
