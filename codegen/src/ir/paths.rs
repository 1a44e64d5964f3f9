//! What the spec's paths say: the resource table (plural, scope, verbs
//! from `x-kubernetes-action`, subresources and their kinds) and every
//! operation on a `…/{name}/<subresource>` path.

use std::collections::BTreeMap;

use super::{Action, OperationResponse, QueryParam, ResourceIr, SubresourceOperation, Ty};
use crate::spec::{Input, Schema};

/// Splits a path into (group, version, namespaced, resource, subresource).
fn parse_path(path: &str) -> Option<(String, String, bool, String, Option<String>)> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segments.as_slice() {
        ["api", version, rest @ ..] => (String::new(), (*version).to_owned(), rest),
        ["apis", group, version, rest @ ..] => ((*group).to_owned(), (*version).to_owned(), rest),
        _ => return None,
    };
    let rest = match rest {
        ["watch", rest @ ..] => rest,
        rest => rest,
    };
    let (namespaced, rest) = match rest {
        ["namespaces", "{namespace}", rest @ ..] if !rest.is_empty() => (true, rest),
        rest => (false, rest),
    };
    match rest {
        [resource] => Some((group, version, namespaced, (*resource).to_owned(), None)),
        [resource, name] if name.starts_with('{') => {
            Some((group, version, namespaced, (*resource).to_owned(), None))
        }
        [resource, name, sub, ..] if name.starts_with('{') => Some((
            group,
            version,
            namespaced,
            (*resource).to_owned(),
            Some((*sub).to_owned()),
        )),
        _ => None,
    }
}

/// Derives the resource table from the paths and their `x-kubernetes-action`s.
pub fn resources_from_paths(input: &Input) -> Vec<ResourceIr> {
    let mut by_key: BTreeMap<(String, String, String), ResourceIr> = BTreeMap::new();
    // Resource → (its own paths, each subresource's paths), for the gates.
    type Paths<'a> = (Vec<&'a str>, BTreeMap<String, Vec<&'a str>>);
    let mut paths_of: BTreeMap<(String, String, String), Paths<'_>> = BTreeMap::new();
    for (path, item) in &input.paths {
        let Some((group, version, namespaced, plural, sub)) = parse_path(path) else {
            continue;
        };
        let key = (group.clone(), version.clone(), plural.clone());
        let seen = paths_of.entry(key).or_default();
        match &sub {
            None => seen.0.push(path.as_str()),
            Some(s) => seen.1.entry(s.clone()).or_default().push(path.as_str()),
        }
        for (method, op) in item.methods() {
            let (Some(action), Some(gvk)) = (op.action.as_deref(), op.gvk.as_ref()) else {
                continue;
            };
            let Some(verb) = Action::parse(action).and_then(|a| a.verb(method)) else {
                continue;
            };
            let entry = by_key
                .entry((group.clone(), version.clone(), plural.clone()))
                .or_insert_with(|| ResourceIr {
                    group: group.clone(),
                    version: version.clone(),
                    plural: plural.clone(),
                    ..ResourceIr::default()
                });
            entry.namespaced |= namespaced;
            match &sub {
                None => {
                    entry.verbs.insert(verb);
                    if entry.kind.is_empty() {
                        entry.kind = gvk.kind.clone();
                    }
                }
                Some(sub) => {
                    let s = entry.subresources.entry(sub.clone()).or_default();
                    s.verbs.insert(verb);
                    let own = gvk.group == group && gvk.version == version;
                    let parent_kind = !entry.kind.is_empty() && entry.kind == gvk.kind && own;
                    if s.kind.is_none() && !parent_kind {
                        s.kind = Some(gvk.clone());
                    }
                }
            }
        }
    }
    let mut out: Vec<ResourceIr> = by_key
        .into_values()
        .filter(|r| !r.kind.is_empty())
        .map(|mut r| {
            let key = (r.group.clone(), r.version.clone(), r.plural.clone());
            if let Some((own, subs)) = paths_of.get(&key) {
                let own_gate = input.versions.paths(own.iter().copied());
                for (name, s) in &mut r.subresources {
                    let gate = subs
                        .get(name)
                        .and_then(|p| input.versions.paths(p.iter().copied()));
                    s.gate = gate.filter(|g| own_gate.as_ref() != Some(g));
                }
                r.gate = own_gate;
            }
            r.singular = r.kind.to_ascii_lowercase();
            // A subresource typed with the parent's own kind (status) has no
            // separate kind.
            for s in r.subresources.values_mut() {
                if s.kind.as_ref().is_some_and(|k| {
                    k.kind == r.kind && k.group == r.group && k.version == r.version
                }) {
                    s.kind = None;
                }
            }
            r
        })
        .collect();
    out.sort_by(|a, b| (&a.group, &a.version, &a.plural).cmp(&(&b.group, &b.version, &b.plural)));
    out
}

/// Collects the operations of every `…/{name}/<subresource>` path.
pub fn subresource_operations(input: &Input) -> Vec<SubresourceOperation> {
    let mut out = Vec::new();
    for (path, item) in &input.paths {
        if path.contains("/watch/") {
            continue;
        }
        let Some((group, version, namespaced, plural, Some(sub))) = parse_path(path) else {
            continue;
        };
        // Only `…/{name}/<sub>` itself, not `…/proxy/{path}`.
        if !path.ends_with(&format!("}}/{sub}")) {
            continue;
        }
        let methods = [
            ("get", &item.get),
            ("put", &item.put),
            ("post", &item.post),
            ("delete", &item.delete),
            ("patch", &item.patch),
        ];
        for (method, op) in methods {
            let Some(op) = op else { continue };
            let Some(action) = op.action.as_deref().and_then(Action::parse) else {
                continue;
            };
            let mut query: BTreeMap<String, QueryParam> = BTreeMap::new();
            for p in item.parameters.iter().chain(&op.parameters) {
                if p.location != "query" {
                    continue;
                }
                let ty = match p.json_type() {
                    Some("boolean") => Ty::Bool,
                    Some("integer") => Ty::I64,
                    _ => Ty::String,
                };
                query.insert(
                    p.name.clone(),
                    QueryParam {
                        name: p.name.clone(),
                        ty,
                        description: p.description.clone(),
                    },
                );
            }
            let request = op
                .request_schema()
                .and_then(Schema::referenced)
                .map(str::to_owned);
            let response = match op.ok_schema() {
                Some(schema) => match schema.referenced() {
                    Some(r) => OperationResponse::Definition(r.to_owned()),
                    None if schema.ty.as_deref() == Some("string") => OperationResponse::Text,
                    None => OperationResponse::Untyped,
                },
                None => OperationResponse::Untyped,
            };
            out.push(SubresourceOperation {
                group: group.clone(),
                version: version.clone(),
                plural: plural.clone(),
                subresource: sub.clone(),
                namespaced,
                method: method.to_owned(),
                action,
                description: op.description.clone(),
                request,
                response,
                query: query.into_values().collect(),
                gate: input.versions.paths([path.as_str()]),
            });
        }
    }
    out.sort_by(|a, b| {
        (&a.group, &a.version, &a.plural, &a.subresource, &a.method).cmp(&(
            &b.group,
            &b.version,
            &b.plural,
            &b.subresource,
            &b.method,
        ))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_into_resource_and_subresource() {
        // (path, group, version, namespaced, plural, subresource)
        let cases = [
            (
                "/api/v1/namespaces/{namespace}/pods/{name}/log",
                "",
                "v1",
                true,
                "pods",
                Some("log"),
            ),
            (
                "/apis/apps/v1/watch/namespaces/{namespace}/deployments",
                "apps",
                "v1",
                true,
                "deployments",
                None,
            ),
            (
                "/api/v1/namespaces/{name}/finalize",
                "",
                "v1",
                false,
                "namespaces",
                Some("finalize"),
            ),
            (
                "/api/v1/namespaces/{namespace}/pods/{name}/proxy/{path}",
                "",
                "v1",
                true,
                "pods",
                Some("proxy"),
            ),
            ("/api/v1/namespaces", "", "v1", false, "namespaces", None),
        ];
        for (path, group, version, namespaced, plural, sub) in cases {
            let want = (
                group.to_owned(),
                version.to_owned(),
                namespaced,
                plural.to_owned(),
                sub.map(str::to_owned),
            );
            assert_eq!(parse_path(path), Some(want), "{path}");
        }
        assert_eq!(parse_path("/apis/apps/v1/"), None);
        assert_eq!(parse_path("/version/"), None);
    }
}
