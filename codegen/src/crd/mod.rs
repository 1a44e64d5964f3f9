//! CustomResourceDefinitions → typed Rust for the user's own crate
//! (`kubeset-codegen crd`, or a `build.rs`).
//!
//! Stages, as for the built-in specs: [`read_paths`] / [`parse_manifests`]
//! read `apiextensions.k8s.io/v1` CRDs (YAML or JSON, multi-document
//! streams, `List`s; other kinds are skipped with a note); [`lower`] runs
//! each served version's `openAPIV3Schema` through the shared
//! [`crate::schema`] lowering into an [`Ir`]; [`emit`] writes the module
//! tree. [`generate`] does the last two; [`from_openapi_v3`] takes a
//! group-version document of a live `/openapi/v3` instead of CRDs.
//!
//! With [`Options::builtins`], object schemas that a built-in model
//! deserializes losslessly use it ([`reuse`]: a pod template becomes
//! `kubeset::api::core::v1::PodTemplateSpec`), and [`Generated::near_misses`]
//! says which came close and why not. Structurally identical nested types
//! of one group-version become one type, named by what their names have in
//! common ([`share`]; the rule is in its docs).
//! [`Generated::write_crate`] writes the tree as a crate of its own, so an
//! operator's rebuilds do not recompile the types.
//!
//! The generated code depends only on the `kubeset` facade, `serde` and
//! `serde_json`. Each kind is at `<group module>::<version>::<Kind>` (group
//! with `.` and `-` as `_`), implements `kubeset::Resource`, and has a
//! `<Kind>List` alias of `kubeset::List<Kind>`.
//!
//! # Example (`build.rs`)
//!
//! ```no_run
//! use std::path::{Path, PathBuf};
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     println!("cargo::rerun-if-changed=crds");
//!     let (crds, notes) = kubeset_codegen::crd::read_paths(&[PathBuf::from("crds")])?;
//!     for note in notes {
//!         println!("cargo::warning={note}");
//!     }
//!     let out = kubeset_codegen::crd::generate(&crds, &kubeset_codegen::crd::Options::default())?;
//!     for warning in &out.warnings {
//!         println!("cargo::warning={warning}");
//!     }
//!     let file = Path::new(&std::env::var("OUT_DIR")?).join("crds.rs");
//!     std::fs::write(file, out.single_file()?)?;
//!     Ok(())
//! }
//! ```
//!
//! For `OUT_DIR`, write [`Generated::single_file`] instead of the tree
//! (`mod x;` cannot find files there) and include it:
//! `mod crds { include!(concat!(env!("OUT_DIR"), "/crds.rs")); }`. Or generate
//! into `src/crds/` once with the command, commit it and declare it
//! `#[rustfmt::skip] mod crds;`.

#[cfg(feature = "cluster")]
pub mod cluster;
mod emit;
#[doc(hidden)]
pub mod fuzz_hooks;
mod output;
mod pieces;
mod read;
pub mod reuse;
pub mod share;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::error::CodegenError;
use crate::ir::{Ir, ResourceIr, ResourceRef, TypeDef, TypeKind, Verb};
use crate::schema::{Lowerer, Mode, OBJECT_META, Scope, Warning};
use crate::spec::{self, Gvk, OpenApiV3, Schema};

pub use emit::emit;
pub use output::KubesetDependency;
use output::collect_files;
pub use read::{
    MAX_MANIFEST_BYTES, MAX_NESTING, collect_objects, decode, manifest_values, parse_manifests,
    read_paths,
};

/// A CustomResourceDefinition (`apiextensions.k8s.io/v1`), only the parts
/// the generator reads.
#[derive(Debug, Clone, Deserialize)]
pub struct CustomResourceDefinition {
    /// Metadata; only the name is read.
    pub metadata: CrdMeta,
    /// The spec.
    pub spec: CrdSpec,
}

/// `metadata` of a CRD.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CrdMeta {
    /// `<plural>.<group>`.
    pub name: String,
}

/// `spec` of a CRD.
#[derive(Debug, Clone, Deserialize)]
pub struct CrdSpec {
    /// API group.
    pub group: String,
    /// Kind and resource names.
    pub names: CrdNames,
    /// `Namespaced` or `Cluster`.
    pub scope: String,
    /// Versions.
    #[serde(default)]
    pub versions: Vec<CrdVersion>,
}

/// `spec.names` of a CRD.
#[derive(Debug, Clone, Deserialize)]
pub struct CrdNames {
    /// Kind.
    pub kind: String,
    /// Lowercase plural.
    pub plural: String,
    /// Lowercase singular (defaults to the lowercase kind).
    #[serde(default)]
    pub singular: Option<String>,
    /// kubectl short names.
    #[serde(default, rename = "shortNames")]
    pub short_names: Vec<String>,
}

/// One version of a CRD.
#[derive(Debug, Clone, Deserialize)]
pub struct CrdVersion {
    /// Version name (`v1`, `v1beta1`).
    pub name: String,
    /// Whether the server serves it (unserved versions are skipped).
    #[serde(default)]
    pub served: bool,
    /// Its schema.
    #[serde(default)]
    pub schema: Option<CrdValidation>,
    /// Its subresources.
    #[serde(default)]
    pub subresources: Option<CrdSubresources>,
}

/// `schema` of a CRD version.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CrdValidation {
    /// The structural schema of the whole object.
    #[serde(rename = "openAPIV3Schema")]
    pub open_api_v3_schema: Option<Schema>,
}

/// `subresources` of a CRD version.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CrdSubresources {
    /// `status` when enabled.
    pub status: Option<Value>,
    /// `scale` when enabled.
    pub scale: Option<Value>,
}

/// What the generator is told about the run.
#[derive(Debug, Clone)]
#[must_use]
pub struct Options {
    /// The command named in the first line of `mod.rs`.
    pub command: String,
    /// The built-in models schemas may reuse ([`reuse`]); none when unset.
    pub builtins: Option<std::sync::Arc<reuse::Builtins>>,
    /// Whether to write apply configurations (`FooApply` beside each
    /// struct `Foo`, [`Options::apply`]).
    pub apply: bool,
    /// The cargo feature of the user crate the apply types are compiled
    /// behind; none: always compiled.
    pub apply_feature: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            command: "kubeset-codegen crd".into(),
            builtins: None,
            apply: false,
            apply_feature: None,
        }
    }
}

impl Options {
    /// Names `command` in the generated `mod.rs`.
    pub fn command(mut self, command: impl Into<String>) -> Self {
        self.command = command.into();
        self
    }

    /// Lets matching schemas use the built-in models of `builtins`
    /// (`kubeset::api::core::v1::Container`, …) instead of generated copies.
    ///
    /// ```no_run
    /// use std::{path::Path, sync::Arc};
    /// use kubeset_codegen::crd::{Options, reuse::{Builtins, DEFAULT_FEATURES}};
    /// let builtins = Builtins::from_spec_dir(Path::new("specs/kubernetes/v1.35"), DEFAULT_FEATURES)?;
    /// let options = Options::default().builtins(Arc::new(builtins));
    /// # Ok::<(), kubeset_codegen::CodegenError>(())
    /// ```
    pub fn builtins(mut self, builtins: std::sync::Arc<reuse::Builtins>) -> Self {
        self.builtins = Some(builtins);
        self
    }

    /// Also writes apply configurations for server-side apply, as
    /// kubeset-api has for the built-in models: `FooApply` beside each
    /// struct `Foo` (file `foo_apply.rs`), every field optional, nested
    /// structs as their apply types (a reused built-in model as its
    /// `kubeset::api::…::FooApply`, which needs the facade's `apply`
    /// feature), `#[must_use]` `with_*` builders, the kind's
    /// `new(name[, namespace])` writing `apiVersion` and `kind`, and
    /// `new(keys…)` on the items of keyed lists
    /// (`x-kubernetes-list-map-keys`). They roughly double the types'
    /// build, so they are opt-in.
    ///
    /// ```
    /// let options = kubeset_codegen::crd::Options::default().apply(true);
    /// assert!(options.apply);
    /// ```
    pub fn apply(mut self, on: bool) -> Self {
        self.apply = on;
        self
    }

    /// Compiles the apply types behind cargo feature `feature` of the user
    /// crate (`#[cfg(feature = …)]`; [`Generated::write_crate`] declares
    /// it, enabling the facade's `apply`).
    ///
    /// ```
    /// let options = kubeset_codegen::crd::Options::default().apply(true).apply_feature("apply");
    /// assert_eq!(options.apply_feature.as_deref(), Some("apply"));
    /// ```
    pub fn apply_feature(mut self, feature: impl Into<String>) -> Self {
        self.apply_feature = Some(feature.into());
        self
    }
}

/// The generated module tree.
#[derive(Debug, Clone, Default)]
pub struct Generated {
    /// Files by path relative to the output directory (`mod.rs`,
    /// `cert_manager_io/v1/certificate.rs`).
    pub files: BTreeMap<String, String>,
    /// Constructs kept as `serde_json::Value`.
    pub warnings: Vec<Warning>,
    /// Schemas close to a built-in model that could not use it, and why.
    pub near_misses: Vec<reuse::NearMiss>,
    /// Schemas that use a built-in model: (origin, JSON path, Rust path).
    pub reused: Vec<(String, String, String)>,
    /// Identical nested types made one ([`share`]).
    pub shared: Vec<share::Shared>,
    /// The cargo feature the apply types are behind ([`Options::apply_feature`]).
    pub apply_feature: Option<String>,
}

impl Generated {
    /// Writes the files under `dir`, removing `.rs` files there that an
    /// earlier run generated (first line ``// Generated by `kubeset-codegen …``)
    /// and this one did not.
    pub fn write_to(&self, dir: &Path) -> Result<(), CodegenError> {
        let write_err = |path: &Path| {
            let path = path.to_owned();
            move |source| CodegenError::Write { path, source }
        };
        let mut stale = Vec::new();
        collect_files(dir, dir, &mut stale);
        for rel in stale {
            let path = dir.join(&rel);
            let ours =
                std::fs::read_to_string(&path).is_ok_and(|t| t.starts_with(emit::MARKER_START));
            if ours && !self.files.contains_key(&rel) {
                std::fs::remove_file(&path).map_err(write_err(&path))?;
            }
        }
        for (rel, text) in &self.files {
            let path = dir.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(write_err(parent))?;
            }
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
                std::fs::write(&path, text).map_err(write_err(&path))?;
            }
        }
        Ok(())
    }
}

/// Lowers then emits: the module tree of `crds`.
pub fn generate(
    crds: &[CustomResourceDefinition],
    options: &Options,
) -> Result<Generated, CodegenError> {
    let lowered = lower_with(crds, options.builtins.as_deref())?;
    let files = emit(&lowered.ir, crds, options)?;
    Ok(Generated {
        files,
        warnings: lowered.warnings,
        near_misses: lowered.near_misses,
        reused: lowered.reused,
        shared: lowered.shared,
        apply_feature: options.apply_feature.clone().filter(|_| options.apply),
    })
}

/// What [`lower_with`] gives.
#[derive(Debug)]
pub struct Lowered {
    /// The types and resources.
    pub ir: Ir,
    /// Constructs kept as `serde_json::Value`.
    pub warnings: Vec<Warning>,
    /// Schemas close to a built-in model that could not use it.
    pub near_misses: Vec<reuse::NearMiss>,
    /// Schemas that use a built-in model: (origin, JSON path, Rust path).
    pub reused: Vec<(String, String, String)>,
    /// Identical nested types made one ([`share`]).
    pub shared: Vec<share::Shared>,
}

/// A Rust module name for a group or version: `.` and `-` as `_`, a
/// keyword with a trailing `_` (`self` → `self_`, `mod` → `mod_`). What
/// does not start with a lowercase ASCII letter or holds other characters
/// (the API server accepts only DNS names there) is an error.
pub fn module_name(crd: &str, what: &'static str, value: &str) -> Result<String, CodegenError> {
    let mut m = value.replace(['.', '-'], "_");
    let valid = m.starts_with(|c: char| c.is_ascii_lowercase())
        && m.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(CodegenError::BadModuleName {
            crd: crd.to_owned(),
            what,
            value: value.to_owned(),
        });
    }
    // One `_` per run (rustc's `non_snake_case` refuses `a__b`).
    while m.contains("__") {
        m = m.replace("__", "_");
    }
    if crate::names::is_keyword(&m) {
        m.push('_');
    }
    Ok(m)
}

/// The Rust type name of a CRD's kind ([`crate::names::type_name`]:
/// `postgresql` → `Postgresql`, `my-kind` → `MyKind`, `Self` → `Self_`);
/// an error naming the CRD when none can be made (an empty kind).
pub fn kind_type_name(crd: &CustomResourceDefinition) -> Result<String, CodegenError> {
    crate::names::type_name(&crd.spec.names.kind).ok_or_else(|| CodegenError::BadName {
        crd: crd.metadata.name.clone(),
        what: "spec.names.kind",
        value: crd.spec.names.kind.clone(),
        reason: "no ASCII letter or digit",
    })
}

/// The key of a kind's type in the IR: `<group>/<version>/<Kind>`.
pub fn kind_key(group: &str, version: &str, kind: &str) -> String {
    format!("{group}/{version}/{kind}")
}

/// One served version of a CRD to lower, with its Rust names.
struct Served<'c> {
    crd: &'c CustomResourceDefinition,
    version: &'c CrdVersion,
    modules: Vec<String>,
    type_name: String,
}

/// The served versions of `crds` (sorted by group, kind), each once: an
/// exact repeat (same CRD, version and kind) is dropped; two kinds whose
/// Rust names, or `<Kind>List` aliases, meet in one module (`Foo-bar` and
/// `FooBar`, `Foo` and `FooList`) are an error naming both.
fn served_versions(crds: &[CustomResourceDefinition]) -> Result<Vec<Served<'_>>, CodegenError> {
    let mut sorted: Vec<&CustomResourceDefinition> = crds.iter().collect();
    sorted.sort_by(|a, b| {
        (&a.spec.group, &a.spec.names.kind).cmp(&(&b.spec.group, &b.spec.names.kind))
    });
    // (modules, file name) → who has it.
    let mut owners: BTreeMap<(Vec<String>, String), (String, String, String)> = BTreeMap::new();
    let mut out = Vec::new();
    for crd in sorted {
        let group = module_name(&crd.metadata.name, "group", &crd.spec.group)?;
        let type_name = kind_type_name(crd)?;
        for version in crd.spec.versions.iter().filter(|v| v.served) {
            let modules = vec![
                group.clone(),
                module_name(&crd.metadata.name, "version", &version.name)?,
            ];
            let owner = (
                crd.metadata.name.clone(),
                version.name.clone(),
                crd.spec.names.kind.clone(),
            );
            let own = crate::names::snake_case(&type_name);
            let list = crate::names::snake_case(&crate::names::list_alias(&type_name));
            let key = (modules.clone(), own);
            if owners.get(&key) == Some(&owner) {
                continue;
            }
            for file in [key.1.clone(), list] {
                if let Some(first) = owners.insert((modules.clone(), file.clone()), owner.clone()) {
                    return Err(CodegenError::NameCollision {
                        scope: format!("module {}", modules.join("::")),
                        rust: file,
                        first: format!("kind {:?} of {} {}", first.2, first.0, first.1),
                        second: format!("kind {:?} of {} {}", owner.2, owner.0, owner.1),
                    });
                }
            }
            out.push(Served {
                crd,
                version,
                modules,
                type_name: type_name.clone(),
            });
        }
    }
    Ok(out)
}

/// Runs every served version of `crds` (sorted by group, version, kind)
/// through the shared lowering, without built-in models.
pub fn lower(crds: &[CustomResourceDefinition]) -> Result<(Ir, Vec<Warning>), CodegenError> {
    let lowered = lower_with(crds, None)?;
    Ok((lowered.ir, lowered.warnings))
}

/// Runs every served version of `crds` (sorted by group, version, kind)
/// through the shared lowering; object schemas that match a model of
/// `builtins` use it ([`reuse`]); then structurally identical nested types
/// of one module become one (`share.rs`).
pub fn lower_with(
    crds: &[CustomResourceDefinition],
    builtins: Option<&reuse::Builtins>,
) -> Result<Lowered, CodegenError> {
    let served = served_versions(crds)?;
    let mut taken = BTreeSet::new();
    for s in &served {
        taken.insert((s.modules.clone(), s.type_name.clone()));
        taken.insert((s.modules.clone(), crate::names::list_alias(&s.type_name)));
    }
    let no_definitions = BTreeMap::new();
    let mut matcher = builtins.map(reuse::Matcher::new);
    let mut ir = Ir::default();
    let mut warnings = {
        let mut lowerer = Lowerer::new(Mode::Crd, &no_definitions, taken);
        if let Some(m) = matcher.as_mut() {
            lowerer.set_reuser(m);
        }
        for s in &served {
            lower_version(s, &mut lowerer, &mut ir)?;
        }
        ir.types.append(&mut lowerer.types);
        lowerer.warnings
    };
    let shared = share::share(&mut ir);
    ir.resources
        .sort_by(|a, b| (&a.group, &a.version, &a.plural).cmp(&(&b.group, &b.version, &b.plural)));
    warnings.sort();
    let (mut near_misses, reused) = matcher
        .map(|m| (m.near_misses, m.reused))
        .unwrap_or_default();
    near_misses.sort();
    Ok(Lowered {
        ir,
        warnings,
        near_misses,
        reused,
        shared,
    })
}

/// The schema of a version (borrowed: a CRD may be large; the lowering
/// adds `metadata` when it is missing); a version without a schema keeps
/// everything as unknown fields.
fn object_schema(version: &CrdVersion) -> std::borrow::Cow<'_, Schema> {
    match version
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
    {
        Some(schema) => std::borrow::Cow::Borrowed(schema),
        None => std::borrow::Cow::Owned(Schema {
            ty: Some("object".into()),
            preserve_unknown_fields: true,
            ..Schema::default()
        }),
    }
}

fn lower_version(
    served: &Served<'_>,
    lowerer: &mut Lowerer<'_>,
    ir: &mut Ir,
) -> Result<(), CodegenError> {
    let (crd, version, modules) = (served.crd, served.version, &served.modules);
    let (group, names) = (&crd.spec.group, &crd.spec.names);
    let key = kind_key(group, &version.name, &names.kind);
    let source = format!(
        "CustomResourceDefinition `{}`, version `{}`",
        crd.metadata.name, version.name
    );
    lowerer.set_scope(Scope {
        definition: key.clone(),
        modules: modules.clone(),
        feature: None,
        source: source.clone(),
        origin: format!("CRD {} version {}", crd.metadata.name, version.name),
    });
    let schema = object_schema(version);
    lowerer.struct_type(
        &schema,
        "",
        &served.type_name,
        &key,
        &["apiVersion", "kind"],
    )?;
    let Some(mut kind_type) = lowerer.types.remove(&key) else {
        return Ok(());
    };
    if let TypeKind::Struct { fields } = &mut kind_type.kind {
        for f in fields.iter_mut().filter(|f| f.json == "metadata") {
            f.required = true;
            f.ty = crate::ir::Ty::Ref(OBJECT_META.into());
            f.description
                .get_or_insert_with(|| "Standard object metadata.".into());
        }
    }
    let namespaced = crd.spec.scope == "Namespaced";
    kind_type.gvk = Some(Gvk {
        group: group.clone(),
        version: version.name.clone(),
        kind: names.kind.clone(),
    });
    kind_type.resource = Some(ResourceRef {
        plural: names.plural.clone(),
        namespaced,
    });
    kind_type.inline_of = None;
    kind_type.source = source;
    ir.types.insert(key, TypeDef { ..kind_type });
    let subresources = version.subresources.clone().unwrap_or_default();
    let mut resource = ResourceIr {
        group: group.clone(),
        version: version.name.clone(),
        kind: names.kind.clone(),
        plural: names.plural.clone(),
        singular: names
            .singular
            .clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| names.kind.to_ascii_lowercase()),
        namespaced,
        verbs: Verb::CUSTOM_RESOURCE.into_iter().collect(),
        short_names: names.short_names.clone(),
        ..ResourceIr::default()
    };
    for (name, on) in [
        ("scale", subresources.scale.is_some()),
        ("status", subresources.status.is_some()),
    ] {
        if on {
            resource
                .subresources
                .insert(name.into(), crate::ir::SubresourceIr::default());
        }
    }
    ir.resources.push(resource);
    Ok(())
}

/// CRDs equivalent to the custom kinds of one `/openapi/v3` group-version
/// document (the kinds named `<reversed group>.<version>.<Kind>`, with
/// plural and scope from its paths), for [`generate`]. Kinds without a
/// path are left out.
pub fn crds_from_openapi_v3(doc: &OpenApiV3) -> Vec<CustomResourceDefinition> {
    let mut input = spec::Input::default();
    input.add_v3("openapi-v3", doc.clone());
    let resources = crate::ir::resources_from_paths(&input);
    let mut out: BTreeMap<(String, String), CustomResourceDefinition> = BTreeMap::new();
    for (definition, schema) in &input.definitions {
        let Some((_, name)) = crate::names::custom_resource_path(definition, schema) else {
            continue;
        };
        let [gvk] = schema.gvk.as_slice() else {
            continue;
        };
        let Some(r) = resources
            .iter()
            .find(|r| r.group == gvk.group && r.version == gvk.version && r.kind == gvk.kind)
        else {
            continue;
        };
        if name != gvk.kind {
            continue;
        }
        let mut schema = schema.clone();
        schema.gvk.clear();
        if let Some(meta) = schema.properties.get_mut("metadata") {
            *meta = Schema {
                ty: Some("object".into()),
                ..Schema::default()
            };
        }
        let crd = out
            .entry((gvk.group.clone(), r.plural.clone()))
            .or_insert_with(|| CustomResourceDefinition {
                metadata: CrdMeta {
                    name: format!("{}.{}", r.plural, gvk.group),
                },
                spec: CrdSpec {
                    group: gvk.group.clone(),
                    names: CrdNames {
                        kind: gvk.kind.clone(),
                        plural: r.plural.clone(),
                        singular: None,
                        short_names: Vec::new(),
                    },
                    scope: if r.namespaced {
                        "Namespaced"
                    } else {
                        "Cluster"
                    }
                    .into(),
                    versions: Vec::new(),
                },
            });
        crd.spec.versions.push(CrdVersion {
            name: gvk.version.clone(),
            served: true,
            schema: Some(CrdValidation {
                open_api_v3_schema: Some(schema),
            }),
            subresources: Some(CrdSubresources {
                status: r
                    .subresources
                    .contains_key("status")
                    .then(|| Value::Object(Default::default())),
                scale: r
                    .subresources
                    .contains_key("scale")
                    .then(|| Value::Object(Default::default())),
            }),
        });
    }
    out.into_values().collect()
}

/// [`generate`] for one `/openapi/v3` group-version document of a live
/// server (`/openapi/v3/apis/<group>/<version>`).
pub fn from_openapi_v3(doc: &OpenApiV3, options: &Options) -> Result<Generated, CodegenError> {
    generate(&crds_from_openapi_v3(doc), options)
}
