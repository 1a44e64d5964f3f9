//! The table of every resource the generated API knows.
//!
//! This module is always compiled, whatever features are enabled, so that
//! discovery (the embedded API server, the CLI's `api-resources`) does not
//! need the models. The tables themselves are generated from the spec's
//! paths (`cargo xtask codegen`).

#[rustfmt::skip]
mod generated;

pub use self::generated::{RESOURCES, SUBRESOURCES};

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

    /// Kind of the list, e.g. `PodList`.
    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    /// Whether the resource supports `verb`.
    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.contains(&verb)
    }

    /// The subresources of this resource, with their verbs and kinds.
    pub fn subresource_infos(&self) -> impl Iterator<Item = &'static SubresourceInfo> + '_ {
        SUBRESOURCES.iter().filter(move |s| {
            s.group == self.group && s.version == self.version && s.resource == self.plural
        })
    }
}

/// A group-version-kind named by a subresource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindRef {
    /// API group, empty for core.
    pub group: &'static str,
    /// API version.
    pub version: &'static str,
    /// Kind.
    pub kind: &'static str,
}

/// One subresource (`pods/log`, `deployments/scale`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubresourceInfo {
    /// API group of the parent resource.
    pub group: &'static str,
    /// API version of the parent resource.
    pub version: &'static str,
    /// Plural of the parent resource.
    pub resource: &'static str,
    /// Subresource name, e.g. `scale`.
    pub name: &'static str,
    /// Discovery verbs (`get`, `update`, `patch`, `create`; a connect
    /// subresource such as `exec` lists those of its HTTP methods).
    pub verbs: &'static [&'static str],
    /// The kind it takes or returns when that is not the parent's own kind
    /// (`autoscaling/v1 Scale` for `scale`, `policy/v1 Eviction` for
    /// `eviction`); `None` for the parent's kind (`status`) or untyped
    /// streams (`log`, `exec`).
    pub kind: Option<KindRef>,
}

/// Finds a resource by group, version and plural.
pub fn find(group: &str, version: &str, plural: &str) -> Option<&'static ResourceInfo> {
    RESOURCES
        .iter()
        .find(|r| r.group == group && r.version == version && r.plural == plural)
}

/// Finds a resource by group, version and kind.
pub fn find_kind(group: &str, version: &str, kind: &str) -> Option<&'static ResourceInfo> {
    RESOURCES
        .iter()
        .find(|r| r.group == group && r.version == version && r.kind == kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_unique() {
        let keys: Vec<_> = RESOURCES
            .iter()
            .map(|r| (r.group, r.version, r.plural))
            .collect();
        let mut sorted = keys.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(keys, sorted);
    }

    #[test]
    fn well_known_resources() {
        let pods = find("", "v1", "pods").expect("pods");
        assert_eq!(pods.kind, "Pod");
        assert_eq!(pods.singular, "pod");
        assert!(pods.namespaced);
        assert_eq!(pods.short_names, &["po"]);
        for sub in [
            "status",
            "log",
            "eviction",
            "binding",
            "exec",
            "ephemeralcontainers",
            "resize",
        ] {
            assert!(pods.subresources.contains(&sub), "pods/{sub}");
        }
        assert_eq!(
            pods.verbs,
            &[
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch"
            ]
        );
        let eviction = pods
            .subresource_infos()
            .find(|s| s.name == "eviction")
            .expect("eviction");
        assert_eq!(
            eviction.kind.map(|k| (k.group, k.kind)),
            Some(("policy", "Eviction"))
        );
        assert_eq!(eviction.verbs, &["create"]);

        let ns = find("", "v1", "namespaces").expect("namespaces");
        assert!(!ns.namespaced);
        assert!(ns.subresources.contains(&"finalize"));

        let deploy = find_kind("apps", "v1", "Deployment").expect("deployments");
        assert_eq!(deploy.plural, "deployments");
        assert_eq!(deploy.api_version(), "apps/v1");
        assert_eq!(deploy.list_kind(), "DeploymentList");
        let scale = deploy
            .subresource_infos()
            .find(|s| s.name == "scale")
            .expect("scale");
        assert_eq!(
            scale.kind.map(|k| (k.group, k.version, k.kind)),
            Some(("autoscaling", "v1", "Scale"))
        );
        assert!(
            deploy
                .subresource_infos()
                .any(|s| s.name == "status" && s.kind.is_none())
        );

        let crd = find("apiextensions.k8s.io", "v1", "customresourcedefinitions").expect("crd");
        assert!(!crd.namespaced);
        assert_eq!(crd.short_names, &["crd", "crds"]);

        let tokenreviews =
            find("authentication.k8s.io", "v1", "tokenreviews").expect("tokenreviews");
        assert_eq!(tokenreviews.verbs, &["create"]);

        let csr = find("certificates.k8s.io", "v1", "certificatesigningrequests").expect("csr");
        assert!(csr.subresources.contains(&"approval"));
        assert!(
            find("", "v1", "serviceaccounts").is_some_and(|s| s.subresources.contains(&"token"))
        );
    }
}
