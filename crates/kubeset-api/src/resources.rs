//! The table of every resource the generated API knows.
//!
//! This module is always compiled, whatever features are enabled, so that
//! discovery (the embedded API server, the CLI's `api-resources`) does not
//! need the models.

/// One REST resource of a group-version, as discovery reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceInfo {
    /// API group, empty for the core (legacy) group.
    pub group: &'static str,
    /// API version, e.g. `v1`.
    pub version: &'static str,
    /// Kind, e.g. `Pod`.
    pub kind: &'static str,
    /// Lowercase plural used in URLs, e.g. `pods`.
    pub plural: &'static str,
    /// Lowercase singular, e.g. `pod`.
    pub singular: &'static str,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Verbs the server supports on the collection and objects.
    pub verbs: &'static [&'static str],
    /// Subresources such as `status`, `scale`, `log`.
    pub subresources: &'static [&'static str],
    /// Short names (`po`, `deploy`) as kubectl knows them.
    pub short_names: &'static [&'static str],
}

impl ResourceInfo {
    /// `group/version`, or just `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_owned()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// Seed table, replaced by the generated one (`cargo xtask codegen`).
pub static RESOURCES: &[ResourceInfo] = &[
    ResourceInfo { group: "", version: "v1", kind: "Namespace", plural: "namespaces", singular: "namespace", namespaced: false, verbs: ALL_VERBS, subresources: &["status", "finalize"], short_names: &["ns"] },
    ResourceInfo { group: "", version: "v1", kind: "Pod", plural: "pods", singular: "pod", namespaced: true, verbs: ALL_VERBS, subresources: &["status", "log", "eviction", "binding"], short_names: &["po"] },
    ResourceInfo { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", singular: "configmap", namespaced: true, verbs: ALL_VERBS, subresources: &[], short_names: &["cm"] },
    ResourceInfo { group: "", version: "v1", kind: "Secret", plural: "secrets", singular: "secret", namespaced: true, verbs: ALL_VERBS, subresources: &[], short_names: &[] },
    ResourceInfo { group: "", version: "v1", kind: "Service", plural: "services", singular: "service", namespaced: true, verbs: ALL_VERBS, subresources: &["status"], short_names: &["svc"] },
    ResourceInfo { group: "", version: "v1", kind: "Endpoints", plural: "endpoints", singular: "endpoints", namespaced: true, verbs: ALL_VERBS, subresources: &[], short_names: &["ep"] },
    ResourceInfo { group: "apps", version: "v1", kind: "Deployment", plural: "deployments", singular: "deployment", namespaced: true, verbs: ALL_VERBS, subresources: &["status", "scale"], short_names: &["deploy"] },
    ResourceInfo { group: "coordination.k8s.io", version: "v1", kind: "Lease", plural: "leases", singular: "lease", namespaced: true, verbs: ALL_VERBS, subresources: &[], short_names: &[] },
    ResourceInfo { group: "discovery.k8s.io", version: "v1", kind: "EndpointSlice", plural: "endpointslices", singular: "endpointslice", namespaced: true, verbs: ALL_VERBS, subresources: &[], short_names: &[] },
    ResourceInfo { group: "apiextensions.k8s.io", version: "v1", kind: "CustomResourceDefinition", plural: "customresourcedefinitions", singular: "customresourcedefinition", namespaced: false, verbs: ALL_VERBS, subresources: &["status"], short_names: &["crd", "crds"] },
];

const ALL_VERBS: &[&str] = &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];
