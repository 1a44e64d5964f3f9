//! Reading manifests: a file or stdin, YAML (several documents) or JSON,
//! `kind: List` expanded; each object matched to a served resource.

use std::io::Read as _;

use kubeset::discovery::Discovery;
use kubeset::dynamic::{ApiResource, DynamicObject};
use serde::Deserialize as _;
use serde_json::Value;

use crate::error::CliError;

/// One object of a manifest and where it is served.
#[derive(Debug)]
pub struct Item {
    /// Where the object's kind is served.
    pub resource: ApiResource,
    /// The object.
    pub object: DynamicObject,
}

/// Reads `path` (`-` for stdin).
pub fn read(path: &str) -> Result<String, CliError> {
    if path == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| CliError::io("reading the manifest from stdin", e))?;
        Ok(text)
    } else {
        std::fs::read_to_string(path).map_err(|e| CliError::Manifest {
            path: path.to_owned(),
            reason: e.to_string(),
        })
    }
}

/// Parses the documents of a manifest into JSON objects: JSON when it
/// starts with `{` or `[`, else YAML with `---` separators. Empty
/// documents are skipped and `List`s (and JSON arrays) expanded.
pub fn parse(path: &str, text: &str) -> Result<Vec<Value>, CliError> {
    let bad = |reason: String| CliError::Manifest {
        path: path.to_owned(),
        reason,
    };
    let mut docs = Vec::new();
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        let stream = serde_json::Deserializer::from_str(trimmed).into_iter::<Value>();
        for doc in stream {
            docs.push(doc.map_err(|e| bad(format!("invalid JSON: {e}")))?);
        }
    } else {
        for doc in serde_norway::Deserializer::from_str(text) {
            let value = Value::deserialize(doc).map_err(|e| bad(format!("invalid YAML: {e}")))?;
            docs.push(value);
        }
    }
    let mut out = Vec::new();
    for doc in docs {
        expand(doc, &mut out);
    }
    for (i, obj) in out.iter().enumerate() {
        if !obj.is_object() {
            return Err(bad(format!("document {} is not an object", i + 1)));
        }
    }
    if out.is_empty() {
        return Err(bad("no objects found".to_owned()));
    }
    Ok(out)
}

fn expand(doc: Value, out: &mut Vec<Value>) {
    match doc {
        Value::Null => {}
        Value::Array(items) => items.into_iter().for_each(|i| expand(i, out)),
        Value::Object(mut map)
            if map
                .get("kind")
                .and_then(Value::as_str)
                .is_some_and(|k| k == "List" || k.ends_with("List"))
                && map.get("items").is_some_and(Value::is_array) =>
        {
            if let Some(Value::Array(items)) = map.remove("items") {
                items.into_iter().for_each(|i| expand(i, out));
            }
        }
        other => out.push(other),
    }
}

/// Matches each object to a served resource and sets its namespace: the
/// object's own, which must agree with `-n` when both are given, else
/// `namespace`.
pub fn resolve(
    path: &str,
    discovery: &Discovery,
    values: Vec<Value>,
    namespace: &str,
    explicit_namespace: bool,
) -> Result<Vec<Item>, CliError> {
    let bad = |reason: String| CliError::Manifest {
        path: path.to_owned(),
        reason,
    };
    let mut items = Vec::new();
    for value in values {
        let object: DynamicObject = serde_json::from_value(value)
            .map_err(|e| bad(format!("not a Kubernetes object: {e}")))?;
        if object.api_version.is_empty() || object.kind.is_empty() {
            return Err(bad(format!(
                "object {:?} must set apiVersion and kind",
                object.name()
            )));
        }
        if object.name().is_empty() && object.metadata.generate_name.is_none() {
            return Err(bad(format!("a {} must set metadata.name", object.kind)));
        }
        let (group, version) = object
            .api_version
            .split_once('/')
            .unwrap_or(("", object.api_version.as_str()));
        let found = discovery
            .resources()
            .iter()
            .find(|r| {
                r.resource.group == group
                    && r.resource.version == version
                    && r.resource.kind == object.kind
            })
            .ok_or_else(|| CliError::UnknownResource {
                name: format!("{} {}", object.api_version, object.kind),
            })?;
        let resource = found.resource.clone();
        let mut object = object;
        if resource.namespaced {
            match object.metadata.namespace.as_deref() {
                Some(own) if explicit_namespace && own != namespace => {
                    return Err(CliError::usage(format!(
                        "the namespace from the provided object {own:?} does not match the namespace {namespace:?}. You must pass '--namespace={own}' to perform this operation."
                    )));
                }
                Some(own) if !own.is_empty() => {}
                _ => object.metadata.namespace = Some(namespace.to_owned()),
            }
        } else {
            object.metadata.namespace = None;
        }
        items.push(Item { resource, object });
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_documents_lists_and_json() {
        let yaml = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n";
        let docs = parse("m.yaml", yaml).unwrap();
        let names: Vec<&str> = docs
            .iter()
            .map(|d| d["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["a", "b", "c"]);

        let json = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j"}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"k"}}"#;
        assert_eq!(parse("m.json", json).unwrap().len(), 2);
        assert_eq!(parse("m.json", "[{\"a\":1},{\"b\":2}]").unwrap().len(), 2);
    }

    #[test]
    fn bad_manifests_are_usage_errors() {
        for text in [
            "",
            "---\n",
            "{not json",
            "a: [",
            "- 1\n- 2\n",
            "just a string",
        ] {
            let err = parse("m", text).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{text:?}: {err}");
        }
    }
}
