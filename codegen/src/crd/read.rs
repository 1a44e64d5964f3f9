//! Reading CRD manifests: files and folders, YAML or JSON, multi-document
//! streams and `List`s, bounded in size and nesting.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::CustomResourceDefinition;
use crate::error::CodegenError;

/// The largest manifest file read (64 MiB; the biggest real CRDs are a few MB).
pub const MAX_MANIFEST_BYTES: u64 = 64 << 20;

/// Reads CRDs from files and directories (recursively: `.yaml`, `.yml`,
/// `.json`, in name order). Returns them with notes on what was skipped.
pub fn read_paths(
    paths: &[PathBuf],
) -> Result<(Vec<CustomResourceDefinition>, Vec<String>), CodegenError> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            manifest_files(p, &mut files)?;
        } else {
            files.push(p.clone());
        }
    }
    let mut crds = Vec::new();
    let mut notes = Vec::new();
    for file in files {
        let read_err = |source| CodegenError::Read {
            path: file.clone(),
            source,
        };
        let size = std::fs::metadata(&file).map_err(read_err)?.len();
        if size > MAX_MANIFEST_BYTES {
            return Err(CodegenError::TooLarge {
                path: file,
                size,
                limit: MAX_MANIFEST_BYTES,
            });
        }
        let text = std::fs::read_to_string(&file).map_err(read_err)?;
        let (mut found, mut skipped) = parse_manifests(&text, &file)?;
        crds.append(&mut found);
        notes.append(&mut skipped);
    }
    Ok((crds, notes))
}

pub(super) fn manifest_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), CodegenError> {
    let read_err = |source| CodegenError::Read {
        path: dir.to_owned(),
        source,
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(read_err)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(read_err)?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            manifest_files(&path, out)?;
        } else if path
            .extension()
            .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
        {
            out.push(path);
        }
    }
    Ok(())
}

/// How deep `{…}`/`[…]` collections may nest in a manifest (the deepest
/// real CRDs nest under 40). Checked by a linear scan before parsing:
/// the YAML reader's work grows with the square of that nesting. Block
/// (indented) YAML is limited by the YAML reader itself, at 128 levels.
pub const MAX_NESTING: usize = 100;

/// The 1-based line where `text` nests flow collections (`{`, `[`) deeper
/// than [`MAX_NESTING`], if it does. Brackets in quoted strings (opened
/// after a space, `:`, `,`, `[`, `{` or at a line start) and in comments do
/// not count.
pub(super) fn too_deep_at(text: &str) -> Option<usize> {
    let (mut depth, mut line) = (0usize, 1usize);
    let mut quote: Option<u8> = None;
    let mut prev = b'\n';
    let mut bytes = text.bytes().peekable();
    while let Some(b) = bytes.next() {
        if b == b'\n' {
            line += 1;
        }
        match (quote, b) {
            // An escape: the next byte is the escaped one.
            (Some(b'"'), b'\\') => line += usize::from(bytes.next() == Some(b'\n')),
            (Some(b'\''), b'\'') if bytes.peek() == Some(&b'\'') => {
                bytes.next();
            }
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') if b" \t\r\n:,[{".contains(&prev) => quote = Some(b),
            (None, b'#') if b" \t\r\n".contains(&prev) => {
                for c in bytes.by_ref() {
                    if c == b'\n' {
                        line += 1;
                        break;
                    }
                }
                prev = b'\n';
                continue;
            }
            (None, b'{' | b'[') => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(line);
                }
            }
            (None, b'}' | b']') => depth = depth.saturating_sub(1),
            _ => {}
        }
        prev = b;
    }
    None
}

/// The documents of a JSON text (one value or several in a row), or
/// `None` when it is not JSON. Read with `serde_json`, which also takes
/// what YAML's reader refuses (escaped surrogate pairs, `"\ud83d\ude00"`).
pub(super) fn json_documents(text: &str) -> Option<Vec<Value>> {
    let start = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
    if !start.starts_with(['{', '[']) {
        return None;
    }
    serde_json::Deserializer::from_str(start)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .ok()
}

/// The CRD objects of a YAML or JSON text as they are (`path` names it in
/// errors and notes): every document of the stream, the items of `List`s.
/// Returns them with a note for each other object. A text nesting deeper
/// than [`MAX_NESTING`] is refused before it is parsed.
pub fn manifest_values(text: &str, path: &Path) -> Result<(Vec<Value>, Vec<String>), CodegenError> {
    if let Some(line) = too_deep_at(text) {
        return Err(CodegenError::TooDeep {
            path: path.to_owned(),
            line,
            limit: MAX_NESTING,
        });
    }
    let mut crds = Vec::new();
    let mut notes = Vec::new();
    if let Some(docs) = json_documents(text) {
        for value in docs {
            collect_objects(value, path, &mut crds, &mut notes);
        }
        return Ok((crds, notes));
    }
    for doc in serde_norway::Deserializer::from_str(text) {
        let value = Value::deserialize(doc).map_err(|source| CodegenError::Yaml {
            path: path.to_owned(),
            source,
        })?;
        collect_objects(value, path, &mut crds, &mut notes);
    }
    Ok((crds, notes))
}

/// [`manifest_values`], decoded.
pub fn parse_manifests(
    text: &str,
    path: &Path,
) -> Result<(Vec<CustomResourceDefinition>, Vec<String>), CodegenError> {
    let (values, notes) = manifest_values(text, path)?;
    let crds = values
        .into_iter()
        .map(|v| decode(v, path))
        .collect::<Result<_, _>>()?;
    Ok((crds, notes))
}

/// Decodes one CRD object.
pub fn decode(value: Value, path: &Path) -> Result<CustomResourceDefinition, CodegenError> {
    let name = value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    serde_json::from_value(value).map_err(|source| CodegenError::Manifest {
        path: path.to_owned(),
        name,
        source,
    })
}

/// Sorts one decoded object into CRDs (`apiextensions.k8s.io/v1`) and
/// notes; `List`s are opened.
pub fn collect_objects(value: Value, path: &Path, crds: &mut Vec<Value>, notes: &mut Vec<String>) {
    if value.is_null() {
        return;
    }
    let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (text("apiVersion").to_owned(), text("kind").to_owned());
    let name = value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if kind == "List" || (kind.ends_with("List") && value.get("items").is_some()) {
        if let Some(Value::Array(items)) = value.get("items").cloned() {
            for item in items {
                collect_objects(item, path, crds, notes);
            }
        }
        return;
    }
    if kind != "CustomResourceDefinition" {
        notes.push(format!(
            "{}: skipped {} {name:?} (not a CustomResourceDefinition)",
            path.display(),
            crate::names::escape_text(&kind)
        ));
    } else if api_version != "apiextensions.k8s.io/v1" {
        notes.push(format!(
            "{}: skipped CustomResourceDefinition {name:?} of {} (only apiextensions.k8s.io/v1 is read)",
            path.display(),
            crate::names::escape_text(&api_version)
        ));
    } else {
        crds.push(value);
    }
}
