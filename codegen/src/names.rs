//! The one place where spec names become Rust names.

/// Rust keywords (strict and reserved) that cannot be field names.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe",
    "use", "where", "while", "abstract", "become", "box", "do", "final", "macro", "override",
    "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// Converts a JSON property or type name to snake_case.
///
/// Acronyms stay together and a plural `s` after an acronym joins it:
/// `podCIDRs` → `pod_cidrs`, `HTTPGetAction` → `http_get_action`,
/// `x-kubernetes-list-type` → `x_kubernetes_list_type`, `$ref` → `ref`.
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().filter(|c| *c != '$').collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c == '-' || c == '.' || c == '_' {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            continue;
        }
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next = chars.get(i + 1).copied();
            let after = chars.get(i + 2).copied();
            let plural_s = next == Some('s') && after.is_none_or(|a| a.is_ascii_uppercase());
            let boundary = prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase()
                    && next.is_some_and(|n| n.is_ascii_lowercase())
                    && !plural_s);
            if boundary && !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// UpperCamelCase of a JSON property for a type name: the pieces between
/// non-alphanumeric characters with their first letter upper-cased, the
/// rest kept (`privateKey` → `PrivateKey`, `x-kubernetes-foo` →
/// `XKubernetesFoo`, `http01` → `Http01`, `$ref` → `Ref`).
pub fn upper_camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for piece in name.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = piece.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    out
}

/// The Rust field name for a JSON property: snake_case, keywords escaped
/// with a trailing underscore (`type` → `type_`).
pub fn field_name(json: &str) -> String {
    let mut s: String = snake_case(json)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    if KEYWORDS.contains(&s.as_str()) {
        s.push('_');
    }
    s
}

/// Module segments and type name of a definition: the `io.k8s.` prefix is
/// dropped, dots separate modules and `-` becomes `_`.
///
/// `io.k8s.api.core.v1.Pod` → (`["api", "core", "v1"]`, `Pod`).
pub fn rust_path(definition: &str) -> Option<(Vec<String>, String)> {
    let rest = definition.strip_prefix("io.k8s.")?;
    let mut parts: Vec<String> = rest.split('.').map(|p| p.replace('-', "_")).collect();
    let name = parts.pop()?;
    if parts.is_empty()
        || name.is_empty()
        || !name.starts_with(|c: char| c.is_ascii_uppercase())
        || !name.chars().all(|c| c.is_ascii_alphanumeric())
        || parts
            .iter()
            .any(|p| !p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        || parts
            .iter()
            .any(|p| p.is_empty() || p.starts_with(|c: char| c.is_ascii_digit()))
    {
        return None;
    }
    Some((parts, name))
}

/// The cargo feature of a group-version module, or `None` for modules that
/// are always compiled (`apimachinery`).
///
/// `["api", "core", "v1"]` → `core-v1`;
/// `["apiextensions_apiserver", "pkg", "apis", "apiextensions", "v1"]` → `apiextensions-v1`.
pub fn feature_of(modules: &[String]) -> Option<String> {
    if modules.first().map(String::as_str) == Some("apimachinery") {
        return None;
    }
    match modules {
        [.., group, version] => Some(format!("{}-{}", group.replace('_', "-"), version)),
        _ => None,
    }
}

/// Where a custom resource's definition goes (a live `/openapi/v3` serves
/// CRD group-versions too, named `<reversed group>.<version>.<Kind>`): under
/// `api::<group with . and - as _>::<version>`, so `things.example.com/v1`
/// `Thing` is `api::example_com::v1::Thing` (feature `example-com-v1`).
/// Only definitions whose name is exactly what their single
/// `x-kubernetes-group-version-kind` says; others stay errors.
pub fn custom_resource_path(
    definition: &str,
    schema: &crate::spec::Schema,
) -> Option<(Vec<String>, String)> {
    let [gvk] = schema.gvk.as_slice() else {
        return None;
    };
    if !gvk.group.contains('.') {
        return None;
    }
    let reversed: Vec<&str> = gvk.group.split('.').rev().collect();
    let list_kind = format!("{}List", gvk.kind);
    let expected = format!("{}.{}.", reversed.join("."), gvk.version);
    let name = definition.strip_prefix(&expected)?;
    if name != gvk.kind && name != list_kind {
        return None;
    }
    let module = gvk.group.replace(['.', '-'], "_");
    let valid = |s: &str| {
        !s.is_empty()
            && s.starts_with(|c: char| c.is_ascii_lowercase())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if !valid(&module)
        || !valid(&gvk.version)
        || !name.starts_with(|c: char| c.is_ascii_uppercase())
        || !name.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return None;
    }
    Some((
        vec!["api".to_owned(), module, gvk.version.clone()],
        name.to_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Gvk, Schema};

    #[test]
    fn custom_resources_map_under_their_group() {
        let schema = |group: &str, kind: &str| Schema {
            gvk: vec![Gvk {
                group: group.into(),
                version: "v1".into(),
                kind: kind.into(),
            }],
            ..Schema::default()
        };
        let path = |d: &str, s: &Schema| custom_resource_path(d, s);
        assert_eq!(
            path(
                "dev.kubeset.oa-x1.v1.Thing",
                &schema("oa-x1.kubeset.dev", "Thing")
            ),
            Some((
                vec!["api".into(), "oa_x1_kubeset_dev".into(), "v1".into()],
                "Thing".into()
            ))
        );
        assert_eq!(
            path(
                "dev.kubeset.oa-x1.v1.ThingList",
                &schema("oa-x1.kubeset.dev", "ThingList")
            )
            .map(|p| p.1),
            Some("ThingList".into())
        );
        // The name must be what the group-version-kind says.
        assert_eq!(
            path("dev.other.v1.Thing", &schema("oa.kubeset.dev", "Thing")),
            None
        );
        // Built-in groups have no dot; groups starting with a digit make no module.
        assert_eq!(path("apps.v1.Thing", &schema("apps", "Thing")), None);
        assert_eq!(
            path("com.x.9a.v1.Thing", &schema("9a.x.com", "Thing")),
            None
        );
    }

    #[test]
    fn upper_camel_names_nested_types() {
        for (json, want) in [
            ("privateKey", "PrivateKey"),
            ("x-kubernetes-foo", "XKubernetesFoo"),
            ("http01", "Http01"),
            ("$ref", "Ref"),
            ("dnsNames", "DnsNames"),
            ("mirror_percent", "MirrorPercent"),
        ] {
            assert_eq!(upper_camel(json), want, "{json}");
        }
    }

    #[test]
    fn snake_case_keeps_acronyms_together() {
        let cases = [
            ("podCIDRs", "pod_cidrs"),
            ("podCIDR", "pod_cidr"),
            ("podIPs", "pod_ips"),
            ("hostIP", "host_ip"),
            ("externalIPs", "external_ips"),
            ("targetWWNs", "target_wwns"),
            ("HTTPGetAction", "http_get_action"),
            ("JSONSchemaProps", "json_schema_props"),
            ("apiVersion", "api_version"),
            ("x-kubernetes-list-type", "x_kubernetes_list_type"),
            ("$ref", "ref"),
            ("$schema", "schema"),
            ("fsGroup", "fs_group"),
            ("v1beta1", "v1beta1"),
            ("Pod", "pod"),
            ("APIResourceList", "api_resource_list"),
            ("IPAddress", "ip_address"),
            ("seLinuxOptions", "se_linux_options"),
            ("int64Value", "int64_value"),
            ("URLs", "urls"),
        ];
        for (input, want) in cases {
            assert_eq!(snake_case(input), want, "{input}");
        }
    }

    #[test]
    fn field_names_escape_keywords() {
        assert_eq!(field_name("type"), "type_");
        assert_eq!(field_name("continue"), "continue_");
        assert_eq!(field_name("$ref"), "ref_");
        assert_eq!(field_name("enum"), "enum_");
        assert_eq!(field_name("namespace"), "namespace");
        assert_eq!(field_name("1x"), "_1x");
    }

    #[test]
    fn module_path_rule() {
        assert_eq!(
            rust_path("io.k8s.api.core.v1.Pod"),
            Some((vec!["api".into(), "core".into(), "v1".into()], "Pod".into()))
        );
        let (m, n) = rust_path(
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
        )
        .unwrap();
        assert_eq!(
            m.join("::"),
            "apiextensions_apiserver::pkg::apis::apiextensions::v1"
        );
        assert_eq!(n, "CustomResourceDefinition");
        assert_eq!(rust_path("com.example.Foo"), None);
        assert_eq!(rust_path("io.k8s.Foo"), None);
    }

    #[test]
    fn features_per_group_version() {
        let f = |s: &str| feature_of(&s.split("::").map(String::from).collect::<Vec<_>>());
        assert_eq!(f("api::core::v1").as_deref(), Some("core-v1"));
        assert_eq!(f("api::rbac::v1").as_deref(), Some("rbac-v1"));
        assert_eq!(
            f("apiextensions_apiserver::pkg::apis::apiextensions::v1").as_deref(),
            Some("apiextensions-v1")
        );
        assert_eq!(
            f("kube_aggregator::pkg::apis::apiregistration::v1").as_deref(),
            Some("apiregistration-v1")
        );
        assert_eq!(f("apimachinery::pkg::apis::meta::v1"), None);
    }
}
