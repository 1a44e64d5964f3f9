//! The checks kube-apiserver makes of a CustomResourceDefinition itself
//! (apiextensions-apiserver `pkg/apis/apiextensions/validation`), those a
//! served CRD depends on: its name is `<plural>.<group>`, exactly one
//! version is the storage version, every version has a schema, and the
//! schema is structural (a `type` on every node that is not
//! `x-kubernetes-int-or-string` or `x-kubernetes-preserve-unknown-fields`,
//! list-map keys required or defaulted, patterns that compile). One 422
//! Invalid with every cause, named as the real server names them: a schema
//! shared by every version under `spec.validation.openAPIV3Schema` (the
//! internal form the real server validates), else under
//! `spec.versions[i].schema.openAPIV3Schema`.

use serde_json::Value;

use super::schema::Schema;
use super::validate::go_value;

type Causes = Vec<(String, &'static str, String)>;

/// The causes of an invalid CRD `obj`, empty when it is valid; with
/// `compile` false, the schemas' structure is checked but they are not
/// compiled (a CRD installed with `TestServer::register_crd`: its schemas
/// compile on first use).
pub(crate) fn problems(obj: &Value, compile: bool) -> Causes {
    let mut out = Causes::new();
    let spec = &obj["spec"];
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let plural = spec
        .pointer("/names/plural")
        .and_then(Value::as_str)
        .unwrap_or("");
    let group = spec["group"].as_str().unwrap_or("");
    if name != format!("{plural}.{group}") {
        out.push((
            "metadata.name".into(),
            "FieldValueInvalid",
            format!(
                "Invalid value: {}: must be spec.names.plural+\".\"+spec.group",
                go_value(&Value::from(name))
            ),
        ));
    }
    let versions = spec["versions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    storage(versions, &mut out);
    schemas(versions, compile, &mut out);
    out
}

fn storage(versions: &[Value], out: &mut Causes) {
    let storage: Vec<&str> = versions
        .iter()
        .filter(|v| v["storage"].as_bool() == Some(true))
        .filter_map(|v| v["name"].as_str())
        .collect();
    if versions.is_empty() || storage.len() == 1 {
        return;
    }
    let shown: Vec<Value> = versions
        .iter()
        .map(|v| {
            serde_json::json!({"Name": v["name"], "Served": v["served"], "Storage": v["storage"]})
        })
        .collect();
    out.push((
        "spec.versions".into(),
        "FieldValueInvalid",
        format!(
            "Invalid value: {}: must have exactly one version marked as storage version",
            Value::Array(shown)
        ),
    ));
    // The stored versions the real server computed before validating:
    // the first storage version, or none.
    match storage.first() {
        None => out.push((
            "status.storedVersions".into(),
            "FieldValueInvalid",
            "Invalid value: null: must have at least one stored version".into(),
        )),
        Some(first) => {
            let last = storage.last().copied().unwrap_or(first);
            out.push((
                "status.storedVersions".into(),
                "FieldValueInvalid",
                format!("Invalid value: [\"{first}\"]: must have the storage version {last}"),
            ));
        }
    }
}

fn schemas(versions: &[Value], compile: bool, out: &mut Causes) {
    let all: Vec<Option<&Value>> = versions
        .iter()
        .map(|v| v.pointer("/schema/openAPIV3Schema"))
        .collect();
    let shared = all
        .first()
        .is_some_and(|first| first.is_some() && all.iter().all(|s| s == first));
    for (i, s) in all.iter().enumerate() {
        let base = if shared {
            "spec.validation.openAPIV3Schema".to_owned()
        } else {
            format!("spec.versions[{i}].schema.openAPIV3Schema")
        };
        match s {
            None => out.push((base, "FieldValueRequired", "Required value".into())),
            Some(s) => structural(s, &base, compile, out),
        }
        if shared {
            break;
        }
    }
}

/// The structural rules a schema must follow, then whether it compiles.
fn structural(s: &Value, base: &str, compile: bool, out: &mut Causes) {
    node(s, base, out);
    if !compile {
        return;
    }
    if let Err(problems) = Schema::compile(s) {
        for p in problems {
            out.push((format!("{base}{}", p.path), p.reason, p.message));
        }
    }
}

fn node(s: &Value, path: &str, out: &mut Causes) {
    let flag = |k: &str| s.get(k).and_then(Value::as_bool).unwrap_or(false);
    let typed = s
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| !t.is_empty());
    if !typed
        && !flag("x-kubernetes-int-or-string")
        && !flag("x-kubernetes-preserve-unknown-fields")
    {
        out.push((
            format!("{path}.type"),
            "FieldValueRequired",
            "Required value: must not be empty for specified object fields".into(),
        ));
    }
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        for (k, p) in props {
            node(p, &format!("{path}.properties[{k}]"), out);
        }
    }
    if let Some(a) = s.get("additionalProperties").filter(|a| a.is_object()) {
        node(a, &format!("{path}.additionalProperties"), out);
    }
    if let Some(items) = s.get("items").filter(|i| i.is_object()) {
        node(items, &format!("{path}.items"), out);
        list_map_keys(s, items, &format!("{path}.items"), out);
    }
}

/// Each `x-kubernetes-list-map-keys` property must be required or have a
/// default.
fn list_map_keys(list: &Value, items: &Value, path: &str, out: &mut Causes) {
    if list.get("x-kubernetes-list-type").and_then(Value::as_str) != Some("map") {
        return;
    }
    let required: Vec<&str> = items["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for k in list["x-kubernetes-list-map-keys"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let prop = items.pointer(&format!(
            "/properties/{}",
            k.replace('~', "~0").replace('/', "~1")
        ));
        if !required.contains(&k) && prop.is_some_and(|p| p.get("default").is_none()) {
            out.push((
                format!("{path}.properties[{k}].default"),
                "FieldValueRequired",
                "Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property".into(),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(name: &str, versions: Value) -> Value {
        json!({"metadata": {"name": name}, "spec": {"group": "x.dev", "names": {"plural": "things", "kind": "Thing"},
               "versions": versions}})
    }

    fn fields(c: &Causes) -> Vec<(&str, &str)> {
        c.iter().map(|(f, r, _)| (f.as_str(), *r)).collect()
    }

    #[test]
    fn a_valid_crd_has_no_problems() {
        let v = json!([{"name": "v1", "served": true, "storage": true,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
                "x-kubernetes-preserve-unknown-fields": true}}}}}]);
        assert!(problems(&crd("things.x.dev", v), true).is_empty());
    }

    #[test]
    fn name_storage_and_structure_are_refused_as_the_real_server_names_them() {
        let s = json!({"openAPIV3Schema": {"type": "object", "properties": {"spec": {"properties": {
            "a": {"type": "string", "pattern": "(bad"}}}}}});
        let v = json!([{"name": "v1", "storage": false, "schema": s}, {"name": "v2", "storage": false, "schema": s}]);
        assert_eq!(
            fields(&problems(&crd("wrong.x.dev", v), true)),
            [
                ("metadata.name", "FieldValueInvalid"),
                ("spec.versions", "FieldValueInvalid"),
                ("status.storedVersions", "FieldValueInvalid"),
                (
                    "spec.validation.openAPIV3Schema.properties[spec].type",
                    "FieldValueRequired"
                ),
                (
                    "spec.validation.openAPIV3Schema.properties[spec].properties[a].pattern",
                    "FieldValueInvalid"
                ),
            ]
        );
        let v = json!([{"name": "v1", "storage": true}]);
        assert_eq!(
            fields(&problems(&crd("things.x.dev", v), true)),
            [(
                "spec.versions[0].schema.openAPIV3Schema",
                "FieldValueRequired"
            )]
        );
    }
}
