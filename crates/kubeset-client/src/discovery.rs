//! What a server serves: groups, versions, resources, and a mapper from
//! kinds and names (`deploy`, `deployments`, `Deployment`) to resources.
//!
//! Aggregated discovery (`apidiscovery.k8s.io/v2`, two requests in all) is
//! asked for first; a server that answers with the legacy documents gets the
//! legacy walk (`/api`, `/api/v1`, `/apis`, then one request per
//! group-version).

use std::collections::BTreeMap;

use kubeset_api::apimachinery::pkg::apis::meta::v1::{APIGroupList, APIResourceList, APIVersions};
use kubeset_rest::Error;
use serde::Deserialize;

use crate::Client;
use crate::admission::{GroupVersionKind, TypeMeta};
use crate::dynamic::{ApiResource, DynamicObject};

mod apigroup;

pub use apigroup::{ApiCapabilities, ApiGroup, Scope};

/// Accept header asking for aggregated discovery, with the legacy
/// documents as the fallback.
const AGGREGATED_ACCEPT: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";

/// One served resource, with what discovery says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredResource {
    /// Where it is served.
    pub resource: ApiResource,
    /// Lowercase singular name.
    pub singular: String,
    /// Short names (`po`, `deploy`).
    pub short_names: Vec<String>,
    /// Verbs.
    pub verbs: Vec<String>,
    /// Subresources (`status`, `scale`, …).
    pub subresources: Vec<String>,
    /// The kind each subresource answers with, by subresource name
    /// (`scale` → `Scale`, `status` → the parent's kind), where discovery
    /// says it.
    pub subresource_kinds: BTreeMap<String, String>,
    /// Whether this group-version is the group's preferred one.
    pub preferred: bool,
    /// Categories (`all` is what `kubectl get all` lists).
    pub categories: Vec<String>,
}

/// The result of discovery: every resource of every served group-version.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    resources: Vec<DiscoveredResource>,
    groups: Vec<ApiGroup>,
}

/// kube-rs's `Discovery::new(client)`: discovery not yet run, with
/// kube-rs's group filters; [`run`](Self::run) asks the server.
///
/// ```no_run
/// # async fn f(client: kubeset_client::Client) -> Result<(), kubeset_client::Error> {
/// use kubeset_client::discovery::Discovery;
/// let discovery = Discovery::new(client).filter(&["apps"]).run().await?;
/// assert!(discovery.has_group("apps"));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use = "nothing is asked until `run`"]
pub struct PendingDiscovery {
    client: Client,
    allow: Option<Vec<String>>,
    deny: Vec<String>,
}

impl PendingDiscovery {
    /// Keeps only these groups (`""` is the core group).
    pub fn filter(mut self, allow: &[&str]) -> Self {
        self.allow = Some(allow.iter().map(|g| (*g).to_owned()).collect());
        self
    }

    /// Drops these groups.
    pub fn exclude(mut self, deny: &[&str]) -> Self {
        self.deny = deny.iter().map(|g| (*g).to_owned()).collect();
        self
    }

    /// Asks the server what it serves (as [`Discovery::run`]) and keeps
    /// the groups the filters let through.
    pub async fn run(self) -> Result<Discovery, Error> {
        let mut resources = Discovery::run(&self.client).await?.resources;
        resources.retain(|r| {
            let group = &r.resource.group;
            self.allow.as_ref().is_none_or(|a| a.contains(group)) && !self.deny.contains(group)
        });
        Ok(Discovery::from_resources(resources))
    }

    /// kube-rs's `Discovery::run_aggregated`: the same as
    /// [`run`](Self::run), which already asks for aggregated discovery
    /// (`apidiscovery.k8s.io/v2`) first and walks the legacy documents
    /// only when the server does not answer with it.
    pub async fn run_aggregated(self) -> Result<Discovery, Error> {
        self.run().await
    }
}

impl Discovery {
    /// kube-rs's `Discovery::new(client).run().await?`: discovery to
    /// [`run`](PendingDiscovery::run), optionally filtered by group.
    // kube-rs's shape: `new` returns the not-yet-run discovery.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(client: Client) -> PendingDiscovery {
        PendingDiscovery {
            client,
            allow: None,
            deny: Vec::new(),
        }
    }

    /// Whether the server serves `group` (`""`: the core group).
    pub fn has_group(&self, group: &str) -> bool {
        self.resources.iter().any(|r| r.resource.group == group)
    }

    /// Asks the server what it serves.
    pub async fn run(client: &Client) -> Result<Self, Error> {
        let mut resources = Vec::new();
        let legacy_core = aggregated(client, &["api"], &mut resources).await?;
        if !legacy_core {
            let versions: APIVersions = client.rest().get().abs_path(["api"]).send_json().await?;
            for v in versions.versions {
                let list: APIResourceList = client
                    .rest()
                    .get()
                    .abs_path(["api", v.as_str()])
                    .send_json()
                    .await?;
                push_legacy(&mut resources, "", &v, true, list);
            }
        }
        let legacy_groups = aggregated(client, &["apis"], &mut resources).await?;
        if !legacy_groups {
            let groups: APIGroupList = client.rest().get().abs_path(["apis"]).send_json().await?;
            for group in groups.groups {
                let preferred = group.preferred_version.as_ref().map(|p| p.version.clone());
                for gv in &group.versions {
                    let list: APIResourceList = client
                        .rest()
                        .get()
                        .abs_path(["apis", group.name.as_str(), gv.version.as_str()])
                        .send_json()
                        .await?;
                    let is_preferred = preferred.as_deref().is_none_or(|p| p == gv.version);
                    push_legacy(&mut resources, &group.name, &gv.version, is_preferred, list);
                }
            }
        }
        Ok(Discovery::from_resources(resources))
    }

    fn from_resources(resources: Vec<DiscoveredResource>) -> Self {
        let groups = ApiGroup::collect(&resources);
        Discovery { resources, groups }
    }

    /// The served groups, in discovery order (the core group first), as
    /// kube-rs's `Discovery::groups`.
    ///
    /// ```no_run
    /// # async fn f(client: kubeset_client::Client) -> Result<(), kubeset_client::Error> {
    /// use kubeset_client::discovery::Discovery;
    /// let discovery = Discovery::new(client).run().await?;
    /// for group in discovery.groups() {
    ///     for (ar, caps) in group.recommended_resources() {
    ///         println!("{}/{} {} {:?}", group.name(), ar.version, ar.plural, caps.scope);
    ///     }
    /// }
    /// let apps = discovery.get("apps").expect("apps is served");
    /// assert_eq!(apps.preferred_version(), Some("v1"));
    /// # Ok(()) }
    /// ```
    pub fn groups(&self) -> impl Iterator<Item = &ApiGroup> {
        self.groups.iter()
    }

    /// The served groups sorted by name (kube-rs's `groups_alphabetical`).
    pub fn groups_alphabetical(&self) -> Vec<&ApiGroup> {
        let mut groups: Vec<&ApiGroup> = self.groups.iter().collect();
        groups.sort_by(|a, b| a.name().cmp(b.name()));
        groups
    }

    /// The group named `group` (`""`: the core group), if served.
    pub fn get(&self, group: &str) -> Option<&ApiGroup> {
        self.groups.iter().find(|g| g.name() == group)
    }

    /// The resource serving exactly this group, version and kind, with
    /// its capabilities (kube-rs's `Discovery::resolve_gvk`).
    pub fn resolve_gvk(&self, gvk: &GroupVersionKind) -> Option<(ApiResource, ApiCapabilities)> {
        self.resources
            .iter()
            .find(|r| {
                r.resource.group == gvk.group
                    && r.resource.version == gvk.version
                    && r.resource.kind == gvk.kind
            })
            .map(apigroup::pair)
    }

    /// The resource serving a `TypeMeta`'s `apiVersion` and `kind`, with
    /// its capabilities (kube-rs's `Discovery::resolve_typemeta`); `None`
    /// when either is empty, the `apiVersion` is not `version` or
    /// `group/version`, or the kind was not discovered.
    ///
    /// ```no_run
    /// # async fn f(client: kubeset_client::Client) -> Result<(), kubeset_client::Error> {
    /// use kubeset_client::admission::TypeMeta;
    /// use kubeset_client::discovery::Discovery;
    /// let discovery = Discovery::new(client).run().await?;
    /// let tm = TypeMeta { api_version: "apps/v1".into(), kind: "Deployment".into() };
    /// let (deployments, _caps) = discovery.resolve_typemeta(&tm).expect("served");
    /// assert_eq!(deployments.plural, "deployments");
    /// # Ok(()) }
    /// ```
    pub fn resolve_typemeta(&self, tm: &TypeMeta) -> Option<(ApiResource, ApiCapabilities)> {
        self.resolve_type(&tm.api_version, &tm.kind)
    }

    /// The resource serving a dynamic object's `apiVersion` and `kind`
    /// (kube-rs's `Discovery::resolve_object`), to build an `Api` for an
    /// object met at run time; `None` as for
    /// [`resolve_typemeta`](Self::resolve_typemeta) (a list item without
    /// its type fields included).
    pub fn resolve_object(&self, obj: &DynamicObject) -> Option<(ApiResource, ApiCapabilities)> {
        self.resolve_type(&obj.api_version, &obj.kind)
    }

    fn resolve_type(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Option<(ApiResource, ApiCapabilities)> {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        if kind.is_empty() || version.is_empty() || version.contains('/') {
            return None;
        }
        self.resolve_gvk(&GroupVersionKind::gvk(group, version, kind))
    }

    /// Every discovered resource (subresources are folded into their parent).
    pub fn resources(&self) -> &[DiscoveredResource] {
        &self.resources
    }

    /// The resource serving `kind` in `group` (preferred version first).
    pub fn resolve_kind(&self, group: &str, kind: &str) -> Option<&DiscoveredResource> {
        self.best(|r| r.resource.group == group && r.resource.kind == kind)
    }

    /// The preferred-version resources of a category, in discovery order
    /// (`category("all")`: what `kubectl get all` lists).
    pub fn category<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = &'a DiscoveredResource> + 'a {
        self.resources
            .iter()
            .filter(move |r| r.preferred && r.categories.iter().any(|c| c == name))
    }

    /// Resolves what a user typed, as kubectl does: a plural, singular or
    /// short name, a kind, optionally qualified by group (`deployments.apps`)
    /// or group and version (`deployments.v1.apps`). Case-insensitive.
    pub fn resolve_name(&self, typed: &str) -> Option<&DiscoveredResource> {
        let typed = typed.to_ascii_lowercase();
        let (name, qualifier) = match typed.split_once('.') {
            Some((n, q)) => (n.to_owned(), Some(q.to_owned())),
            None => (typed.clone(), None),
        };
        self.best(|r| {
            let names_match = r.resource.plural == name
                || r.singular == name
                || r.resource.kind.eq_ignore_ascii_case(&name)
                || r.short_names.contains(&name);
            let qualifier_matches = match &qualifier {
                None => true,
                Some(q) => {
                    *q == r.resource.group
                        || *q == format!("{}.{}", r.resource.version, r.resource.group)
                }
            };
            names_match && qualifier_matches
        })
    }

    fn best(&self, pred: impl Fn(&DiscoveredResource) -> bool) -> Option<&DiscoveredResource> {
        // Preferred versions first; among groups, the core group wins (as kubectl).
        self.resources
            .iter()
            .filter(|r| pred(r))
            .min_by_key(|r| (!r.preferred, !r.resource.group.is_empty()))
    }
}

fn push_legacy(
    out: &mut Vec<DiscoveredResource>,
    group: &str,
    version: &str,
    preferred: bool,
    list: APIResourceList,
) {
    // (parent, subresource, kind)
    let mut subresources: Vec<(String, String, String)> = Vec::new();
    for r in &list.resources {
        if let Some((parent, sub)) = r.name.split_once('/') {
            subresources.push((parent.to_owned(), sub.to_owned(), r.kind.clone()));
        }
    }
    for r in list.resources {
        if r.name.contains('/') {
            continue;
        }
        let own: Vec<_> = subresources
            .iter()
            .filter(|(p, _, _)| *p == r.name)
            .collect();
        let subs = own.iter().map(|(_, s, _)| s.clone()).collect();
        let subresource_kinds = own
            .iter()
            .filter(|(_, _, k)| !k.is_empty())
            .map(|(_, s, k)| (s.clone(), k.clone()))
            .collect();
        out.push(DiscoveredResource {
            singular: if r.singular_name.is_empty() {
                r.kind.to_ascii_lowercase()
            } else {
                r.singular_name
            },
            resource: ApiResource {
                group: group.to_owned(),
                version: version.to_owned(),
                kind: r.kind,
                plural: r.name,
                namespaced: r.namespaced,
            },
            short_names: r.short_names.unwrap_or_default(),
            verbs: r.verbs,
            subresources: subs,
            subresource_kinds,
            preferred,
            categories: r.categories.unwrap_or_default(),
        });
    }
}

/// Tries aggregated discovery at `path`; `Ok(false)` when the server
/// answered with a legacy document instead.
async fn aggregated(
    client: &Client,
    path: &[&str],
    out: &mut Vec<DiscoveredResource>,
) -> Result<bool, Error> {
    let resp = client
        .rest()
        .get()
        .abs_path(path)
        .header(
            http::header::ACCEPT,
            http::HeaderValue::from_static(AGGREGATED_ACCEPT),
        )
        .send()
        .await?;
    let Ok(list) = serde_json::from_slice::<GroupDiscoveryList>(&resp.body) else {
        return Ok(false);
    };
    if list.kind != "APIGroupDiscoveryList" {
        return Ok(false);
    }
    for group in list.items {
        let group_name = group.metadata.name.unwrap_or_default();
        for (i, version) in group.versions.into_iter().enumerate() {
            for r in version.resources {
                out.push(DiscoveredResource {
                    singular: r.singular_resource.unwrap_or_default(),
                    resource: ApiResource {
                        group: group_name.clone(),
                        version: version.version.clone(),
                        kind: r.response_kind.map(|k| k.kind).unwrap_or_default(),
                        plural: r.resource,
                        namespaced: r.scope == "Namespaced",
                    },
                    short_names: r.short_names,
                    verbs: r.verbs,
                    subresource_kinds: r
                        .subresources
                        .iter()
                        .filter_map(|s| {
                            let kind = &s.response_kind.as_ref()?.kind;
                            (!kind.is_empty()).then(|| (s.subresource.clone(), kind.clone()))
                        })
                        .collect(),
                    subresources: r.subresources.into_iter().map(|s| s.subresource).collect(),
                    // Versions are listed in preference order.
                    preferred: i == 0,
                    categories: r.categories,
                });
            }
        }
    }
    Ok(true)
}

// The aggregated discovery documents (apidiscovery.k8s.io/v2); only the
// fields used here.
#[derive(Deserialize)]
struct GroupDiscoveryList {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    items: Vec<GroupDiscovery>,
}

#[derive(Deserialize)]
struct GroupDiscovery {
    #[serde(default)]
    metadata: NameOnly,
    #[serde(default)]
    versions: Vec<VersionDiscovery>,
}

#[derive(Deserialize, Default)]
struct NameOnly {
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize)]
struct VersionDiscovery {
    version: String,
    #[serde(default)]
    resources: Vec<ResourceDiscovery>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResourceDiscovery {
    resource: String,
    #[serde(default)]
    response_kind: Option<ResponseKind>,
    #[serde(default)]
    scope: String,
    #[serde(default)]
    singular_resource: Option<String>,
    #[serde(default)]
    short_names: Vec<String>,
    #[serde(default)]
    verbs: Vec<String>,
    #[serde(default)]
    subresources: Vec<SubresourceDiscovery>,
    #[serde(default)]
    categories: Vec<String>,
}

#[derive(Deserialize)]
struct ResponseKind {
    kind: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SubresourceDiscovery {
    subresource: String,
    #[serde(default)]
    response_kind: Option<ResponseKind>,
}
