//! Facts about the built-in API the spec does not carry, kept by hand.

use super::size::{JSON_VALUE, Layout, VEC};

/// A definition `kubeset-api` implements by hand (the spec cannot say
/// what it is): the one table every emitter reads.
#[derive(Debug, Clone, Copy)]
pub struct HandWritten {
    /// The OpenAPI definition name.
    pub definition: &'static str,
    /// Its path under `kubeset_api`'s root.
    pub path: &'static str,
    /// It has a `JsonSchema` impl in `kubeset-api`'s `schema` module, so
    /// the generated schema impls may refer to it.
    pub schema: bool,
    /// It has a protobuf codec of its own in `kubeset-api`.
    pub codec: bool,
    /// Its inline layout (checked against `size_of` by `kubeset-api`'s
    /// generated `layout` test).
    pub layout: Layout,
}

/// The hand-written definitions.
pub const HAND_WRITTEN: &[HandWritten] = &[
    HandWritten {
        definition: "io.k8s.apimachinery.pkg.api.resource.Quantity",
        path: "types::Quantity",
        schema: true,
        codec: true,
        // `String` inside.
        layout: VEC,
    },
    HandWritten {
        definition: "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
        path: "types::Time",
        schema: true,
        codec: true,
        // i64 seconds, u32 nanos, u8 digits, `Option<i16>` offset (its tag is
        // the niche).
        layout: Layout::new(24, 8, 254),
    },
    HandWritten {
        definition: "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
        path: "types::MicroTime",
        schema: true,
        codec: true,
        // As `Time`.
        layout: Layout::new(24, 8, 254),
    },
    HandWritten {
        definition: "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
        path: "types::FieldsV1",
        schema: true,
        codec: true,
        // Two variants of a fat pointer (checked `Box<RawValue>`, unchecked
        // `Box<str>`): a tag of its own.
        layout: Layout::new(24, 8, 254),
    },
    HandWritten {
        definition: "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
        path: "types::Patch",
        schema: false,
        codec: false,
        // Values and lists of values, and a tag of its own.
        layout: Layout::new(40, 8, 250),
    },
    HandWritten {
        definition: "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
        path: "types::WatchEvent",
        schema: false,
        codec: false,
        // Five variants of 32 B: a tag of its own.
        layout: Layout::new(40, 8, 1),
    },
    HandWritten {
        definition: "io.k8s.apimachinery.pkg.runtime.RawExtension",
        path: "types::RawExtension",
        schema: true,
        codec: true,
        // `serde_json::Value` inside.
        layout: JSON_VALUE,
    },
    HandWritten {
        definition: "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
        path: "types::IntOrString",
        schema: true,
        codec: true,
        // `Int(i32)` fits beside the `String`, taking one of its capacity
        // niches and leaving the others.
        layout: Layout::new(24, 8, 1 << 62),
    },
    HandWritten {
        definition: "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
        path: "types::JSON",
        schema: false,
        codec: true,
        // `serde_json::Value` inside.
        layout: JSON_VALUE,
    },
    HandWritten {
        definition: "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
        path: "types::JSONSchemaPropsOrArray",
        schema: false,
        codec: true,
        // A boxed schema or a list of schemas, and a tag of its own.
        layout: Layout::new(24, 8, 1),
    },
    HandWritten {
        definition: "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
        path: "types::JSONSchemaPropsOrBool",
        schema: false,
        codec: true,
        // A boxed schema or a bool, and a tag of its own.
        layout: Layout::new(16, 8, 1),
    },
    HandWritten {
        definition: "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
        path: "types::JSONSchemaPropsOrStringArray",
        schema: false,
        codec: true,
        // A boxed schema or a list of strings, and a tag of its own.
        layout: Layout::new(24, 8, 1),
    },
];

/// The hand-written type of `definition`, if it is one.
pub fn hand_written(definition: &str) -> Option<&'static HandWritten> {
    HAND_WRITTEN.iter().find(|h| h.definition == definition)
}

/// Short names kubectl knows, keyed by (group, plural), for every version
/// of the group. The spec does not carry them; discovery does. Applied by
/// the fixup [`short_names`](super::fixups::short_names), which fails when
/// a resource is no longer in the spec.
pub const SHORT_NAMES: &[(&str, &str, &[&str])] = &[
    ("", "componentstatuses", &["cs"]),
    ("", "configmaps", &["cm"]),
    ("", "endpoints", &["ep"]),
    ("", "events", &["ev"]),
    ("", "limitranges", &["limits"]),
    ("", "namespaces", &["ns"]),
    ("", "nodes", &["no"]),
    ("", "persistentvolumeclaims", &["pvc"]),
    ("", "persistentvolumes", &["pv"]),
    ("", "pods", &["po"]),
    ("", "replicationcontrollers", &["rc"]),
    ("", "resourcequotas", &["quota"]),
    ("", "serviceaccounts", &["sa"]),
    ("", "services", &["svc"]),
    (
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        &["crd", "crds"],
    ),
    ("apps", "daemonsets", &["ds"]),
    ("apps", "deployments", &["deploy"]),
    ("apps", "replicasets", &["rs"]),
    ("apps", "statefulsets", &["sts"]),
    ("autoscaling", "horizontalpodautoscalers", &["hpa"]),
    ("batch", "cronjobs", &["cj"]),
    (
        "certificates.k8s.io",
        "certificatesigningrequests",
        &["csr"],
    ),
    ("events.k8s.io", "events", &["ev"]),
    ("networking.k8s.io", "ingresses", &["ing"]),
    ("networking.k8s.io", "ipaddresses", &["ip"]),
    ("networking.k8s.io", "networkpolicies", &["netpol"]),
    ("policy", "poddisruptionbudgets", &["pdb"]),
    ("scheduling.k8s.io", "priorityclasses", &["pc"]),
    ("storage.k8s.io", "storageclasses", &["sc"]),
    ("storage.k8s.io", "volumeattributesclasses", &["vac"]),
];

/// Responses the spec names wrongly: (subresource, HTTP method, definition
/// the server really answers with). kube-apiserver answers a successful
/// eviction and binding with a `Status` (`status: Success`), not with the
/// posted object the spec names. Applied by the fixup
/// [`status_responses`](super::fixups::status_responses), which fails when
/// the spec no longer has the operation or already names that response.
pub const RESPONSE_OVERRIDES: &[(&str, &str, &str)] = &[
    (
        "eviction",
        "post",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
    ),
    (
        "binding",
        "post",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
    ),
];
