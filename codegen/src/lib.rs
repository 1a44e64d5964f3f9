//! The kubeset code generator: Kubernetes OpenAPI specs to Rust models.
//!
//! Stages, each testable alone:
//! 1. [`spec`]: serde model of OpenAPI 3.0 documents (one per
//!    group-version) and of Swagger 2.0 (`swagger.json`);
//! 2. [`ir`]: lowering into an IR with normalised names, resolved
//!    references and `BTreeMap` order, with named [`ir::fixups`] before
//!    and after; [`layout`] boxes large optional struct fields;
//!    [`ir::client`], a pass over the result, decides the clientset's
//!    accessors and methods;
//! 3. [`emit`]: Rust code with `quote!`, formatted by `prettyplease`;
//!    [`emit_client`]: writes the `Clientset` and subresource methods of
//!    `kubeset-client` the client pass decided.
//!
//! All naming is in [`names`]; [`spec_dir`] finds the spec directory.
//!
//! [`generate`] runs them all; `cargo xtask codegen` is a thin front end.

pub mod crd;
pub mod emit;
pub mod emit_client;
pub mod emit_schema;
pub mod error;
pub mod examples;
pub mod ir;
pub mod layout;
pub mod merge;
pub mod names;
pub mod proto;
pub mod schema;
pub mod spec;
pub mod spec_dir;
pub mod standalone;
pub mod versions;

use std::path::{Path, PathBuf};

pub use emit::Output;
pub use error::CodegenError;
pub use ir::Ir;

/// Which spec formats to read from a spec directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InputFormat {
    /// The v3 documents of `openapi-v3/`, completed by the definitions and
    /// paths of `swagger.json` that they lack (the v3 set only holds the
    /// group-versions the collecting server enabled).
    #[default]
    Both,
    /// Only `openapi-v3/**.json`.
    V3,
    /// Only `swagger.json`.
    V2,
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, CodegenError> {
    let bytes = std::fs::read(path).map_err(|source| CodegenError::Read {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|source| CodegenError::Parse {
        path: path.to_owned(),
        source,
    })
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), CodegenError> {
    let entries = std::fs::read_dir(dir).map_err(|source| CodegenError::Read {
        path: dir.to_owned(),
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| CodegenError::Read {
            path: dir.to_owned(),
            source,
        })?;
        let path = entry.path();
        if path.is_dir() {
            json_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    Ok(())
}

fn relative(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Reads a spec directory (one Kubernetes version: `openapi-v3/` and/or
/// `swagger.json`).
pub fn load(dir: &Path, format: InputFormat) -> Result<spec::Input, CodegenError> {
    let mut input = spec::Input::default();
    let v3_dir = dir.join("openapi-v3");
    let v2_file = dir.join("swagger.json");
    let mut found = false;
    if matches!(format, InputFormat::Both | InputFormat::V3) && v3_dir.is_dir() {
        let mut files = Vec::new();
        json_files(&v3_dir, &mut files)?;
        // Core first, then groups in name order: deterministic sources.
        files.sort();
        for file in files {
            let doc: spec::OpenApiV3 = read_json(&file)?;
            input.add_v3(&relative(&file, dir), doc);
            found = true;
        }
    }
    if matches!(format, InputFormat::Both | InputFormat::V2) && v2_file.is_file() {
        let doc: spec::SwaggerV2 = read_json(&v2_file)?;
        input.add_v2(&relative(&v2_file, dir), doc);
        found = true;
    }
    if !found {
        return Err(CodegenError::NoInput {
            dir: dir.to_owned(),
        });
    }
    Ok(input)
}

/// Reads the spec directory `dir` merged with its older siblings
/// ([`merge::siblings`]): one union input whose [`spec::Input::versions`]
/// says which version has what. Returns the versions read, oldest first.
pub fn load_versions(
    dir: &Path,
    format: InputFormat,
) -> Result<(Vec<String>, spec::Input), CodegenError> {
    let mut inputs = Vec::new();
    for (version, path) in merge::siblings(dir) {
        inputs.push((version, load(&path, format)?));
    }
    let names = inputs.iter().map(|(v, _)| v.clone()).collect();
    Ok((names, merge::merge(inputs)?))
}

/// Lowers (with every fixup) and emits: the whole generated content of
/// `kubeset-api`.
pub fn generate(input: spec::Input, spec_label: &str) -> Result<Output, CodegenError> {
    let definitions = input.definitions.clone();
    let ir = ir::lower(input)?;
    let mut out = emit::emit(&ir, spec_label)?;
    emit_schema::add(&ir, &definitions, spec_label, &mut out)?;
    Ok(out)
}
