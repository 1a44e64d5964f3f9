//! Discovery documents: `/api`, `/api/v1`, `/apis`, `/apis/<g>`,
//! `/apis/<g>/<v>`, `/version` and the `/openapi/v3` index.
//!
//! `/api` and `/apis` answer in the aggregated format
//! (`apidiscovery.k8s.io/v2`, one request for everything) when the Accept
//! header asks for it, as kubectl does, and in the legacy format otherwise.

use std::sync::Arc;

use serde_json::{Value, json};

use kubeset_api::resources::SUBRESOURCES;

use crate::resources::{Resource, version_priority};

/// The groups a kube-apiserver 1.35 serves by default, in the order its
/// discovery lists them: by the `groupPriorityMinimum` of their
/// APIServices (`apiVersionPriorities` in kube-apiserver's
/// `cmd/kube-apiserver/app/aggregator.go`), highest first, then by name.
/// A RESTMapper built from discovery prefers the earlier group when two
/// serve a resource of one name.
const GROUP_ORDER: &[&str] = &[
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "resource.k8s.io",
    "flowcontrol.apiserver.k8s.io",
];

/// Groups in kube-apiserver's order ([`GROUP_ORDER`]), the others (groups
/// off by default, custom resources) after them in first-seen order, each
/// with its versions by priority.
pub(crate) fn groups(resources: &[Arc<Resource>]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for r in resources.iter().filter(|r| !r.group.is_empty()) {
        match out.iter_mut().find(|(g, _)| *g == r.group) {
            Some((_, vs)) => {
                if !vs.contains(&r.version) {
                    vs.push(r.version.clone());
                }
            }
            None => out.push((r.group.clone(), vec![r.version.clone()])),
        }
    }
    for (_, vs) in &mut out {
        vs.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
    }
    // Stable: the others keep their first-seen order.
    out.sort_by_key(|(g, _)| {
        GROUP_ORDER
            .iter()
            .position(|o| o == g)
            .unwrap_or(GROUP_ORDER.len())
    });
    out
}

fn group_doc(name: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    json!({
        "name": name,
        "versions": vs,
        "preferredVersion": vs.first().cloned().unwrap_or(Value::Null),
    })
}

/// `/api`.
pub(crate) fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

/// `/apis`.
pub(crate) fn group_list(resources: &[Arc<Resource>]) -> Value {
    let groups: Vec<Value> = groups(resources)
        .iter()
        .map(|(g, vs)| group_doc(g, vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/<group>`, if the group is served.
pub(crate) fn group(resources: &[Arc<Resource>], name: &str) -> Option<Value> {
    groups(resources)
        .iter()
        .find(|(g, _)| g == name)
        .map(|(g, vs)| {
            let mut d = group_doc(g, vs);
            d["kind"] = json!("APIGroup");
            d["apiVersion"] = json!("v1");
            d
        })
}

/// The resources of `group`/`version`.
fn in_version<'a>(
    resources: &'a [Arc<Resource>],
    group: &str,
    version: &str,
) -> impl Iterator<Item = &'a Arc<Resource>> {
    resources
        .iter()
        .filter(move |r| r.group == group && r.version == version)
}

/// The resources of `group`/`version`, if it serves any.
fn served<'a>(
    resources: &'a [Arc<Resource>],
    group: &str,
    version: &str,
) -> Option<Vec<&'a Arc<Resource>>> {
    let rs: Vec<_> = in_version(resources, group, version).collect();
    (!rs.is_empty()).then_some(rs)
}

/// `/api/v1` or `/apis/<group>/<version>`, if served.
pub(crate) fn resource_list(
    resources: &[Arc<Resource>],
    group: &str,
    version: &str,
) -> Option<Value> {
    let rs = served(resources, group, version)?;
    let mut list = Vec::new();
    for r in rs {
        let mut main = json!({
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": r.verbs,
        });
        names_and_categories(&mut main, r);
        if let Some(hash) = &r.storage_version_hash {
            main["storageVersionHash"] = json!(hash);
        }
        list.push(main);
        for sub in &r.subresources {
            let (gvk, verbs) = subresource_kind(r, sub);
            let kind = gvk.kind;
            let mut s = json!({
                "name": format!("{}/{sub}", r.plural),
                "singularName": "",
                "namespaced": r.namespaced,
                "kind": kind,
                "verbs": verbs,
            });
            if (gvk.group, gvk.version) != (r.group.as_str(), r.version.as_str()) {
                s["group"] = json!(gvk.group);
                s["version"] = json!(gvk.version);
            }
            list.push(s);
        }
    }
    let gv = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": list}),
    )
}

/// Content type of aggregated discovery responses.
pub(crate) const AGGREGATED: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether an Accept header asks for aggregated discovery v2.
pub(crate) fn wants_aggregated(accept: &str) -> bool {
    accept.split(',').any(|entry| {
        let params: Vec<&str> = entry.split(';').map(str::trim).collect();
        params.contains(&"g=apidiscovery.k8s.io")
            && params.contains(&"v=v2")
            && params.contains(&"as=APIGroupDiscoveryList")
    })
}

/// The kind and verbs of subresource `sub` of `r`: from kubeset-api's
/// table for built-in resources (`scale` → autoscaling/v1 Scale, `token` →
/// authentication.k8s.io/v1 TokenRequest, `log` → Pod), the parent's kind
/// with get/patch/update otherwise (a custom resource's status and scale
/// are the only others, and scale is autoscaling/v1 Scale there too).
fn subresource_kind<'a>(r: &'a Resource, sub: &str) -> (KindRef<'a>, &'static [&'static str]) {
    const READ_WRITE: &[&str] = &["get", "patch", "update"];
    let parent = KindRef {
        group: &r.group,
        version: &r.version,
        kind: &r.kind,
    };
    if r.custom {
        let kind = if sub == "scale" {
            KindRef {
                group: "autoscaling",
                version: "v1",
                kind: "Scale",
            }
        } else {
            parent
        };
        return (kind, READ_WRITE);
    }
    let info = SUBRESOURCES.iter().find(|s| {
        s.group == r.group && s.version == r.version && s.resource == r.plural && s.name == sub
    });
    match info {
        // No kind in the table: the parent's own (`status`), or a stream
        // (`log`), for which discovery names the parent's kind too.
        Some(info) => (
            info.kind.map_or(parent, |k| KindRef {
                group: k.group,
                version: k.version,
                kind: k.kind,
            }),
            info.verbs,
        ),
        None => (parent, READ_WRITE),
    }
}

/// A group-version-kind borrowed from the resource or the static table.
#[derive(Clone, Copy)]
struct KindRef<'a> {
    group: &'a str,
    version: &'a str,
    kind: &'a str,
}

/// A resource's `shortNames` and `categories`, where it has them (both
/// discovery documents omit them when empty).
fn names_and_categories(d: &mut Value, r: &Resource) {
    if !r.short_names.is_empty() {
        d["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        d["categories"] = json!(r.categories);
    }
}

/// An aggregated `responseKind` as kube-apiserver writes it: for a
/// built-in resource, group and version empty when they are the
/// resource's own (only a subresource of another group-version, such as
/// `scale`, names them); for a custom resource, always named.
fn response_kind(r: &Resource, gvk: KindRef<'_>) -> Value {
    if !r.custom && (gvk.group, gvk.version) == (r.group.as_str(), r.version.as_str()) {
        json!({"group": "", "version": "", "kind": gvk.kind})
    } else {
        json!({"group": gvk.group, "version": gvk.version, "kind": gvk.kind})
    }
}

fn resource_discovery(r: &Resource) -> Value {
    let subresources: Vec<Value> = r
        .subresources
        .iter()
        .map(|sub| {
            let (gvk, verbs) = subresource_kind(r, sub);
            json!({"subresource": sub, "responseKind": response_kind(r, gvk), "verbs": verbs})
        })
        .collect();
    let own = KindRef {
        group: &r.group,
        version: &r.version,
        kind: &r.kind,
    };
    let mut d = json!({
        "resource": r.plural,
        "responseKind": response_kind(r, own),
        "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": r.singular,
        "verbs": r.verbs,
    });
    names_and_categories(&mut d, r);
    if !subresources.is_empty() {
        d["subresources"] = Value::Array(subresources);
    }
    d
}

fn version_discovery(resources: &[Arc<Resource>], group: &str, version: &str) -> Value {
    let rs: Vec<Value> = in_version(resources, group, version)
        .map(|r| resource_discovery(r))
        .collect();
    json!({"version": version, "resources": rs, "freshness": "Current"})
}

/// Aggregated discovery: the core group for `/api`, every other group for
/// `/apis`.
pub(crate) fn aggregated(resources: &[Arc<Resource>], core: bool) -> Value {
    let items: Vec<Value> = if core {
        vec![json!({"metadata": {}, "versions": [version_discovery(resources, "", "v1")]})]
    } else {
        groups(resources)
            .iter()
            .map(|(g, vs)| {
                let versions: Vec<Value> = vs
                    .iter()
                    .map(|v| version_discovery(resources, g, v))
                    .collect();
                json!({"metadata": {"name": g}, "versions": versions})
            })
            .collect()
    };
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items})
}

/// `/version`.
pub(crate) fn version() -> Value {
    json!({
        "major": "1",
        "minor": "35",
        "emulationMajor": "1",
        "emulationMinor": "35",
        "gitVersion": "v1.35.0-kubeset",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.25.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

/// Every served group-version, as `api/v1` or `apis/<g>/<v>`.
pub(crate) fn group_versions(resources: &[Arc<Resource>]) -> Vec<String> {
    let mut out = vec!["api/v1".to_owned()];
    for (g, vs) in groups(resources) {
        for v in vs {
            out.push(format!("apis/{g}/{v}"));
        }
    }
    out
}

/// `/openapi/v3/<gv>`: a permissive document, one schema per kind that
/// accepts any fields, so clients that validate against it accept anything.
pub(crate) fn openapi_doc(resources: &[Arc<Resource>], gv: &str) -> Option<Value> {
    let (group, version) = if let Some(v) = gv.strip_prefix("api/") {
        (String::new(), v.to_owned())
    } else {
        let rest = gv.strip_prefix("apis/")?;
        let (g, v) = rest.split_once('/')?;
        (g.to_owned(), v.to_owned())
    };
    let rs = served(resources, &group, &version)?;
    let mut schemas = serde_json::Map::new();
    let mut paths = serde_json::Map::new();
    for r in rs {
        let gvk = json!({"group": r.group, "version": r.version, "kind": r.kind});
        let name = if r.group.is_empty() {
            format!("io.k8s.api.core.{}.{}", r.version, r.kind)
        } else {
            format!("kubeset.{}.{}.{}", r.group, r.version, r.kind)
        };
        schemas.insert(
            name,
            json!({
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": true,
                "x-kubernetes-group-version-kind": [gvk.clone()],
            }),
        );
        // kubectl looks for a PATCH operation of the kind that declares the
        // `fieldValidation` and `dryRun` query parameters before it relies
        // on server-side field validation.
        let prefix = if r.group.is_empty() {
            "/api/v1".to_owned()
        } else {
            format!("/apis/{}/{}", r.group, r.version)
        };
        let path = if r.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", r.plural)
        } else {
            format!("{prefix}/{}/{{name}}", r.plural)
        };
        let query = |n: &str| json!({"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": true}});
        paths.insert(
            path,
            json!({"patch": {
                "operationId": format!("patch{}", r.kind),
                "x-kubernetes-action": "patch",
                "x-kubernetes-group-version-kind": gvk,
                "parameters": [query("dryRun"), query("fieldManager"), query("fieldValidation"), query("force")],
                "responses": {"200": {"description": "OK"}},
            }}),
        );
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.35.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_in_kube_apiservers_order_then_first_seen() {
        let mut resources = crate::resources::builtin();
        // A custom resource's group, seen after the built-in ones.
        resources.extend(crate::resources::from_crd(&json!({"spec": {
            "group": "a.example.com", "names": {"plural": "things", "kind": "Thing"},
            "versions": [{"name": "v1"}],
        }})));
        let names: Vec<String> = groups(&resources).into_iter().map(|(g, _)| g).collect();
        let known: Vec<&str> = GROUP_ORDER
            .iter()
            .copied()
            .filter(|g| names.iter().any(|n| n == g))
            .collect();
        assert_eq!(names[..known.len()], known[..]);
        assert_eq!(names.last().map(String::as_str), Some("a.example.com"));
        let autoscaling = groups(&resources)
            .into_iter()
            .find(|(g, _)| g == "autoscaling")
            .map(|(_, vs)| vs);
        assert_eq!(
            autoscaling.as_deref(),
            Some(&["v2".to_owned(), "v1".to_owned()][..])
        );
    }
}
