//! The one place where spec names become Rust names: fields, types,
//! modules and features of the models, and the clientset's accessors,
//! methods and parameter structs.
//!
//! Every mapping is total and deterministic, and gives plain ASCII
//! identifiers whatever the input (CRDs are hostile input):
//!
//! - characters outside ASCII become words of their code point
//!   (`é` → `u00e9` in snake_case, `U00e9` in UpperCamelCase);
//! - keywords get a trailing `_` (`type` → `type_`, `self` → `self_`,
//!   `Self` → `Self_`), as do the prelude names generated code uses
//!   (`String` → `String_`, [`PRELUDE_TYPES`]);
//! - a name starting with a digit gets a prefix (`_` for fields, `T` for
//!   types, `V` for enum variants);
//! - a name with nothing left is `field` for a field; a type or module
//!   name then cannot be made ([`type_name`] gives `None`, the caller
//!   reports the input that was wrong).
//!
//! Collisions after mapping are resolved where names are claimed
//! (`schema.rs`: `_2`, `2` suffixes in walk order; CRD kinds: an error).
//! [`escape_text`] is the same rule for text: what goes into comments and
//! doc comments never carries control or bidirectional characters.

use std::borrow::Cow;
use std::fmt::Write as _;

use proc_macro2::{Ident, Span};

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
    let chars: Vec<char> = ascii_words(name, 'u')
        .chars()
        .filter(|c| *c != '$')
        .collect();
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

/// `name` with every character outside ASCII replaced by a word of its
/// code point, `prefix` and lowercase hex (`é` → `u00e9` with `u`),
/// separated from its neighbours by `-` (`aé` → `a-u00e9`). Borrowed when
/// `name` is ASCII.
fn ascii_words(name: &str, prefix: char) -> Cow<'_, str> {
    if name.is_ascii() {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() * 2);
    let mut after_escape = false;
    for c in name.chars() {
        if c.is_ascii() {
            if after_escape && c.is_ascii_alphanumeric() {
                out.push('-');
            }
            out.push(c);
            after_escape = false;
        } else {
            if !out.is_empty() && !out.ends_with('-') {
                out.push('-');
            }
            // Writing to a String cannot fail.
            let _ = write!(out, "{prefix}{:04x}", u32::from(c));
            after_escape = true;
        }
    }
    Cow::Owned(out)
}

/// UpperCamelCase of a JSON property for a type name: the pieces between
/// non-alphanumeric characters with their first letter upper-cased, the
/// rest kept (`privateKey` → `PrivateKey`, `x-kubernetes-foo` →
/// `XKubernetesFoo`, `http01` → `Http01`, `$ref` → `Ref`); characters
/// outside ASCII are pieces of their code point (`größe` → `GrU00f6U00dfE`).
pub fn upper_camel(name: &str) -> String {
    let words = ascii_words(name, 'U');
    let mut out = String::with_capacity(words.len());
    for piece in words.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = piece.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    out
}

/// Type names from the prelude that generated code uses unqualified
/// (`Option<…>`, `impl Default`, `From<&str>`, `Result<…>`): a generated
/// type of that name would shadow them in its own file.
pub const PRELUDE_TYPES: &[&str] = &[
    "Box",
    "Clone",
    "Copy",
    "Debug",
    "Default",
    "Eq",
    "Err",
    "From",
    "Hash",
    "Into",
    "None",
    "Ok",
    "Option",
    "Ord",
    "PartialEq",
    "PartialOrd",
    "Result",
    "Self",
    "Send",
    "Sized",
    "Some",
    "String",
    "Sync",
    "ToOwned",
    "ToString",
    "Vec",
];

/// Whether a type name cannot be used as it is: `Self` or a prelude name
/// ([`PRELUDE_TYPES`]).
pub fn is_reserved_type(name: &str) -> bool {
    PRELUDE_TYPES.contains(&name)
}

/// Whether `name` is a Rust keyword (strict, reserved or weak-but-reserved
/// in edition 2024, such as `gen`).
pub fn is_keyword(name: &str) -> bool {
    KEYWORDS.contains(&name)
}

/// The Rust type name for a kind or other spec name: [`upper_camel`]
/// (`postgresql` → `Postgresql`, `my-kind` → `MyKind`, `Größe` →
/// `GrU00f6U00dfE`), `T` before a leading digit (`3d` → `T3d`), `_` after
/// a reserved name (`Self` → `Self_`, `String` → `String_`). `None` when
/// nothing is left (`""`, `_`, `--`).
///
/// ```
/// use kubeset_codegen::names::type_name;
/// assert_eq!(type_name("postgresql").as_deref(), Some("Postgresql"));
/// assert_eq!(type_name("Self").as_deref(), Some("Self_"));
/// assert_eq!(type_name("-"), None);
/// ```
pub fn type_name(raw: &str) -> Option<String> {
    let mut out = upper_camel(raw);
    if out.is_empty() {
        return None;
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'T');
    }
    if is_reserved_type(&out) {
        out.push('_');
    }
    Some(out)
}

/// The Rust field name for a JSON property: snake_case, keywords escaped
/// with a trailing underscore (`type` → `type_`), `_` before a leading
/// digit (`1x` → `_1x`), other characters as one `_` per run (`a  b` →
/// `a_b`), `field` when nothing is left (`""`, `_`, `$`).
pub fn field_name(json: &str) -> String {
    if let Some((_, name)) = K8S_OPENAPI_NAMES.iter().find(|(j, _)| *j == json) {
        return (*name).to_owned();
    }
    let mut s = String::with_capacity(json.len());
    // Other characters are `_`, and a run of them one `_` (rustc's
    // `non_snake_case` refuses `a__b`).
    for c in snake_case(json).chars() {
        let c = if c.is_ascii_alphanumeric() { c } else { '_' };
        if !(c == '_' && s.ends_with('_')) {
            s.push(c);
        }
    }
    if s.is_empty() || s == "_" {
        return "field".to_owned();
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    if is_keyword(&s) {
        s.push('_');
    }
    s
}

/// Field names k8s-openapi spells by its own rule rather than by snake
/// case (`open_api_v3_schema`, not `open_apiv3_schema`; `ref_path` for
/// JSON Schema's `$ref`): kubeset spells them the same, so code written
/// for k8s-openapi compiles after the rename. Every other field of its
/// v1.35 models has the snake-case name (checked field by field).
const K8S_OPENAPI_NAMES: [(&str, &str); 2] = [
    ("$ref", "ref_path"),
    ("openAPIV3Schema", "open_api_v3_schema"),
];

/// Whether `c` must not appear raw in a comment: control characters but
/// tab, the bidirectional formatting characters of Trojan Source
/// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069, which rustc
/// rejects in comments), and the other invisible ones (zero-width
/// characters, word joiner, line and paragraph separators, BOM).
fn hidden_char(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// `text` for a comment or doc comment: each character `hidden_char`
/// holds (control, bidirectional and invisible characters, newlines
/// included) written as its Rust escape (`\u{202e}`), the rest as it is.
/// Borrowed when nothing needs escaping.
///
/// ```
/// use kubeset_codegen::names::escape_text;
/// assert_eq!(escape_text("a\u{202e}b\nc"), "a\\u{202e}b\\u{a}c");
/// assert_eq!(escape_text("plain\ttext"), "plain\ttext");
/// ```
pub fn escape_text(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden_char(c) {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The one way a name becomes a Rust identifier: raw when it is a keyword
/// (`r#type`), with a trailing `_` for the keywords that cannot be raw
/// (`self`, `super`, `crate`, `Self`). Total: what is not an identifier at
/// all (`_`, `my-kind`, empty, which the mappings above never give) becomes
/// its [`field_name`] rather than a panic.
pub fn ident(name: &str) -> Ident {
    match name {
        "self" | "super" | "crate" | "Self" => Ident::new(&format!("{name}_"), Span::call_site()),
        _ => match syn::parse_str::<Ident>(name) {
            Ok(id) => id,
            Err(_) if is_keyword(name) => Ident::new_raw(name, Span::call_site()),
            Err(_) => {
                let mapped = field_name(name);
                syn::parse_str::<Ident>(&mapped)
                    .unwrap_or_else(|_| Ident::new(&format!("{mapped}_"), Span::call_site()))
            }
        },
    }
}

/// The list alias of a generated CRD kind: `<Kind>List`
/// (`= kubeset::List<Kind>`; `Self_` → `SelfList`).
pub fn list_alias(kind: &str) -> String {
    format!("{}List", kind.trim_end_matches('_'))
}

/// The file (and module) of a generated type: its snake_case, a keyword
/// with a trailing `_` (`Type` → `type_`, `Mod` → `mod_`, which as `mod`
/// would be its parent's `mod.rs`).
pub fn type_file(type_name: &str) -> String {
    let mut s = snake_case(type_name);
    if is_keyword(&s) {
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

/// Subresource methods named as client-go names them:
/// (subresource, HTTP method, Rust method).
pub const RENAMES: &[(&str, &str, &str)] = &[
    ("log", "get", "logs"),
    ("eviction", "post", "evict"),
    ("binding", "post", "bind"),
    ("finalize", "put", "finalize"),
];

/// Subresource names made of several words (the spec writes them in one).
pub const SUBRESOURCE_WORDS: &[(&str, &str)] = &[("ephemeralcontainers", "ephemeral_containers")];

/// A group-version's module in the clientset: the feature with `-` → `_`
/// (`core-v1` → `core_v1`).
pub fn group_version_module(feature: &str) -> String {
    feature.replace('-', "_")
}

/// A group-version's struct in the clientset: the feature in UpperCamelCase
/// (`core-v1` → `CoreV1`).
pub fn group_version_struct(feature: &str) -> String {
    feature
        .split(['-', '_'])
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// The accessor name of a resource: the kind's snake_case words with the
/// plural's ending (`NetworkPolicy`/`networkpolicies` → `network_policies`).
pub fn resource_method(kind: &str, plural: &str) -> String {
    let snake = snake_case(kind);
    let words: Vec<&str> = snake.split('_').collect();
    let (last, head) = match words.split_last() {
        Some(x) => x,
        None => return field_name(plural),
    };
    let prefix: String = head.concat();
    let name = match plural.strip_prefix(&prefix) {
        Some(tail) if tail.starts_with(&last[..1.min(last.len())]) => {
            let mut parts: Vec<&str> = head.to_vec();
            parts.push(tail);
            parts.join("_")
        }
        _ => plural.to_owned(),
    };
    field_name(&name)
}

/// The every-namespace accessor of a namespaced resource (`pods_all`).
pub fn all_namespaces_method(accessor: &str) -> String {
    format!("{accessor}_all")
}

/// The method name of a subresource operation: `<verb>_<subresource>` with
/// `get`, `replace` (PUT), `patch`, `create` (POST), except [`RENAMES`].
pub fn subresource_method(sub: &str, method: &str) -> String {
    if let Some((_, _, name)) = RENAMES.iter().find(|(s, m, _)| *s == sub && *m == method) {
        return (*name).to_owned();
    }
    let verb = match method {
        "get" => "get",
        "put" => "replace",
        "patch" => "patch",
        "post" => "create",
        other => other,
    };
    format!("{verb}_{}", subresource_words(sub))
}

fn subresource_words(sub: &str) -> String {
    SUBRESOURCE_WORDS
        .iter()
        .find(|(s, _)| *s == sub)
        .map(|(_, w)| (*w).to_owned())
        .unwrap_or_else(|| field_name(sub))
}

/// The byte-stream twin of a plain-text GET with parameters (`log_stream`).
pub fn stream_method(sub: &str) -> String {
    format!("{}_stream", field_name(sub))
}

/// The query-parameter struct of a subresource GET: `<Kind><Subresource>Params`
/// (`PodLogParams`).
pub fn params_struct(kind: &str, sub: &str) -> String {
    format!("{kind}{}Params", group_version_struct(sub))
}

/// The one naming rule of apply configurations, usable from any path:
/// the apply type of struct `path::Foo` is `path::FooApply`, in the same
/// module (`kubeset::api::core::v1::Container` →
/// `kubeset::api::core::v1::ContainerApply`; a bare `Foo` → `FooApply`).
/// A reserved name's `_` is dropped first (`Self_` → `SelfApply`). The
/// built-in emitter, the derive and a CRD schema replaced by a built-in
/// model all name apply types by this function.
pub fn apply_type(path: &str) -> String {
    let (module, name) = match path.rfind("::") {
        Some(at) => path.split_at(at + 2),
        None => ("", path),
    };
    format!("{module}{}Apply", name.trim_end_matches('_'))
}

/// The builder method of an apply configuration's field: `with_` and the
/// Rust field name without a keyword's trailing `_` (`type_` →
/// `with_type`).
pub fn builder_method(rust_field: &str) -> String {
    format!("with_{}", rust_field.trim_end_matches('_'))
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
        assert_eq!(field_name("$ref"), "ref_path", "k8s-openapi's name");
        assert_eq!(field_name("openAPIV3Schema"), "open_api_v3_schema");
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

    #[test]
    fn resource_method_names() {
        assert_eq!(resource_method("Pod", "pods"), "pods");
        assert_eq!(
            resource_method("NetworkPolicy", "networkpolicies"),
            "network_policies"
        );
        assert_eq!(
            resource_method("CertificateSigningRequest", "certificatesigningrequests"),
            "certificate_signing_requests"
        );
        assert_eq!(resource_method("Endpoints", "endpoints"), "endpoints");
        assert_eq!(resource_method("IPAddress", "ipaddresses"), "ip_addresses");
        assert_eq!(resource_method("Odd", "strange"), "strange");
        assert_eq!(all_namespaces_method("pods"), "pods_all");
    }

    #[test]
    fn subresource_method_names() {
        assert_eq!(subresource_method("log", "get"), "logs");
        assert_eq!(subresource_method("scale", "put"), "replace_scale");
        assert_eq!(subresource_method("token", "post"), "create_token");
        assert_eq!(
            subresource_method("ephemeralcontainers", "patch"),
            "patch_ephemeral_containers"
        );
        assert_eq!(subresource_method("finalize", "put"), "finalize");
        assert_eq!(stream_method("log"), "log_stream");
        assert_eq!(params_struct("Pod", "log"), "PodLogParams");
    }

    #[test]
    fn group_version_names() {
        assert_eq!(group_version_module("core-v1"), "core_v1");
        assert_eq!(group_version_struct("core-v1"), "CoreV1");
        assert_eq!(
            group_version_struct("apiextensions-v1beta1"),
            "ApiextensionsV1beta1"
        );
    }

    #[test]
    fn hostile_names_map_to_plain_ascii_identifiers() {
        for (raw, want) in [
            ("postgresql", Some("Postgresql")),
            ("my-kind", Some("MyKind")),
            ("Self", Some("Self_")),
            ("String", Some("String_")),
            ("3d", Some("T3d")),
            ("Größe", Some("GrU00f6U00dfE")),
            ("日本", Some("U65e5U672c")),
            ("a\u{202e}b", Some("AU202eB")),
            ("", None),
            ("_", None),
            ("--", None),
        ] {
            assert_eq!(type_name(raw).as_deref(), want, "{raw:?}");
        }
        for (raw, want) in [
            ("_", "field"),
            ("", "field"),
            ("$", "field"),
            ("__", "field"),
            ("#", "field"),
            ("Self", "self_"),
            ("gen", "gen_"),
            ("日本", "u65e5_u672c"),
            ("aé", "a_u00e9"),
            ("a\u{202e}b", "a_u202e_b"),
            ("x\ny", "x_y"),
        ] {
            assert_eq!(field_name(raw), want, "{raw:?}");
        }
        assert_eq!(type_file("Mod"), "mod_");
        assert_eq!(type_file("Self_"), "self_");
        assert_eq!(list_alias("Self_"), "SelfList");
    }

    #[test]
    fn ident_never_panics() {
        for raw in [
            "_", "", "my-kind", "self", "Self", "crate", "super", "mod", "type", "r#x", "a b",
            "1x", "é",
        ] {
            let id = ident(raw).to_string();
            assert!(
                syn::parse_str::<Ident>(&id).is_ok() || id.starts_with("r#"),
                "{raw:?} → {id}"
            );
        }
        assert_eq!(ident("_").to_string(), "field");
        assert_eq!(ident("my-kind").to_string(), "my_kind");
    }

    #[test]
    fn text_escapes_what_would_hide_or_reorder() {
        assert_eq!(escape_text("plain\ttext é 日本"), "plain\ttext é 日本");
        assert_eq!(
            escape_text("a\u{202e}b\u{2066}c\rd\ne\u{200b}f\u{feff}\u{0}"),
            "a\\u{202e}b\\u{2066}c\\u{d}d\\u{a}e\\u{200b}f\\u{feff}\\u{0}"
        );
    }

    #[test]
    fn idents_escape_keywords() {
        assert_eq!(ident("pods").to_string(), "pods");
        assert_eq!(ident("type").to_string(), "r#type");
        assert_eq!(ident("self").to_string(), "self_");
        assert_eq!(ident("Self").to_string(), "Self_");
    }

    #[test]
    fn apply_types_are_named_by_one_rule() {
        assert_eq!(
            apply_type("kubeset::api::core::v1::Container"),
            "kubeset::api::core::v1::ContainerApply"
        );
        assert_eq!(
            apply_type("crate::api::apps::v1::Deployment"),
            "crate::api::apps::v1::DeploymentApply"
        );
        assert_eq!(apply_type("Foo"), "FooApply");
        assert_eq!(apply_type("Self_"), "SelfApply");
        assert_eq!(builder_method("type_"), "with_type");
        assert_eq!(builder_method("containers"), "with_containers");
    }
}
