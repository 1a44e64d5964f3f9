//! kube-rs's view of discovery by group: [`ApiGroup`] with its versions
//! and the preferred one, resources paired with their [`ApiCapabilities`].

use super::DiscoveredResource;
use crate::dynamic::ApiResource;

/// Whether a resource's objects live in namespaces (kube-rs's
/// `discovery::Scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Cluster-scoped objects (`Node`, `Namespace`).
    Cluster,
    /// Objects in a namespace (`Pod`, `ConfigMap`).
    Namespaced,
}

/// What discovery says a resource supports (kube-rs's
/// `discovery::ApiCapabilities`): its scope, its subresources and its
/// verbs.
///
/// ```
/// use kubeset_client::discovery::{ApiCapabilities, Scope};
/// let caps = ApiCapabilities { scope: Scope::Namespaced, subresources: vec![], operations: vec!["get".into()] };
/// assert!(caps.supports_operation("get"));
/// assert!(!caps.supports_operation("watch"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiCapabilities {
    /// The scope.
    pub scope: Scope,
    /// The subresources, each named by its own name as `plural` (`status`,
    /// `scale`), in the parent's group and version, with the kind it
    /// answers with (`Scale`; `status`: the parent's kind; empty where
    /// the server did not say).
    pub subresources: Vec<(ApiResource, ApiCapabilities)>,
    /// The verbs (`get`, `list`, `watch`, `patch`, …).
    pub operations: Vec<String>,
}

impl ApiCapabilities {
    /// Whether `operation` (a verb) is supported.
    pub fn supports_operation(&self, operation: &str) -> bool {
        self.operations.iter().any(|op| op == operation)
    }
}

/// One served API group with its versions (kube-rs's
/// `discovery::ApiGroup`), from [`Discovery::groups`](super::Discovery::groups)
/// or [`Discovery::get`](super::Discovery::get).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiGroup {
    name: String,
    /// The versions in the server's preference order.
    versions: Vec<String>,
    preferred: Option<String>,
    resources: Vec<DiscoveredResource>,
}

impl ApiGroup {
    /// The core group's name (`""`), as kube-rs's `ApiGroup::CORE_GROUP`.
    pub const CORE_GROUP: &'static str = "";

    /// Groups the resources by group, in the order discovery listed them.
    pub(super) fn collect(resources: &[DiscoveredResource]) -> Vec<ApiGroup> {
        let mut groups: Vec<ApiGroup> = Vec::new();
        for r in resources {
            let name = &r.resource.group;
            let at = match groups.iter().position(|g| g.name == *name) {
                Some(at) => at,
                None => {
                    groups.push(ApiGroup {
                        name: name.clone(),
                        versions: Vec::new(),
                        preferred: None,
                        resources: Vec::new(),
                    });
                    groups.len() - 1
                }
            };
            let group = &mut groups[at];
            if !group.versions.contains(&r.resource.version) {
                group.versions.push(r.resource.version.clone());
            }
            if r.preferred && group.preferred.is_none() {
                group.preferred = Some(r.resource.version.clone());
            }
            group.resources.push(r.clone());
        }
        groups
    }

    /// The group's name (`""` for the core group).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The served versions, the server's preferred one first.
    pub fn versions(&self) -> impl Iterator<Item = &str> {
        self.versions.iter().map(String::as_str)
    }

    /// The version the server prefers, when it names one.
    pub fn preferred_version(&self) -> Option<&str> {
        self.preferred.as_deref()
    }

    /// The preferred version, else the first listed.
    pub fn preferred_version_or_latest(&self) -> &str {
        self.preferred
            .as_deref()
            .or_else(|| self.versions.first().map(String::as_str))
            .unwrap_or_default()
    }

    /// The resources of version `version` with their capabilities (empty
    /// when the group does not serve it).
    pub fn versioned_resources(&self, version: &str) -> Vec<(ApiResource, ApiCapabilities)> {
        self.resources
            .iter()
            .filter(|r| r.resource.version == version)
            .map(pair)
            .collect()
    }

    /// The resources of the preferred version.
    pub fn recommended_resources(&self) -> Vec<(ApiResource, ApiCapabilities)> {
        self.versioned_resources(self.preferred_version_or_latest())
    }

    /// The resource serving `kind` in the preferred version.
    pub fn recommended_kind(&self, kind: &str) -> Option<(ApiResource, ApiCapabilities)> {
        let version = self.preferred_version_or_latest();
        self.resources
            .iter()
            .find(|r| r.resource.version == version && r.resource.kind == kind)
            .map(pair)
    }
}

/// A discovered resource as kube-rs pairs it.
pub(super) fn pair(r: &DiscoveredResource) -> (ApiResource, ApiCapabilities) {
    let scope = if r.resource.namespaced {
        Scope::Namespaced
    } else {
        Scope::Cluster
    };
    let subresources = r
        .subresources
        .iter()
        .map(|sub| {
            let resource = ApiResource {
                group: r.resource.group.clone(),
                version: r.resource.version.clone(),
                kind: r.subresource_kinds.get(sub).cloned().unwrap_or_default(),
                plural: sub.clone(),
                namespaced: r.resource.namespaced,
            };
            let caps = ApiCapabilities {
                scope,
                subresources: Vec::new(),
                operations: Vec::new(),
            };
            (resource, caps)
        })
        .collect();
    let caps = ApiCapabilities {
        scope,
        subresources,
        operations: r.verbs.clone(),
    };
    (r.resource.clone(), caps)
}
