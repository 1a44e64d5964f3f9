//! Facts about the built-in API the spec does not carry, kept by hand.

/// Definitions implemented by hand in `kubeset-api` (the spec cannot say
/// what they are), with their path under the crate root.
pub const HAND_WRITTEN: &[(&str, &str)] = &[
    (
        "io.k8s.apimachinery.pkg.api.resource.Quantity",
        "types::Quantity",
    ),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.Time", "types::Time"),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
        "types::MicroTime",
    ),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
        "types::FieldsV1",
    ),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.Patch", "types::Patch"),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
        "types::WatchEvent",
    ),
    (
        "io.k8s.apimachinery.pkg.runtime.RawExtension",
        "types::RawExtension",
    ),
    (
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
        "types::IntOrString",
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
        "types::JSON",
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
        "types::JSONSchemaPropsOrArray",
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
        "types::JSONSchemaPropsOrBool",
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
        "types::JSONSchemaPropsOrStringArray",
    ),
];

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
    ("networking.k8s.io", "networkpolicies", &["netpol"]),
    ("policy", "poddisruptionbudgets", &["pdb"]),
    ("scheduling.k8s.io", "priorityclasses", &["pc"]),
    ("storage.k8s.io", "storageclasses", &["sc"]),
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

pub(super) fn hand_written(definition: &str) -> Option<&'static str> {
    HAND_WRITTEN
        .iter()
        .find(|(d, _)| *d == definition)
        .map(|(_, p)| *p)
}
