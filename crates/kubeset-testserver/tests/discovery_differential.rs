//! Discovery held to the real kube-apiserver: what kubectl, RESTMappers and
//! controllers read from `/api`, `/apis` and every group-version, compared
//! between the embedded server and a real kube-apiserver.
//!
//! # What is compared
//!
//! Each server's discovery is reduced to facts ([`Facts`]), keyed by what
//! they describe:
//! - `/api`: the core versions, in order.
//! - `/apis`: every group, in order (a RESTMapper's priority), with its
//!   versions in order and its `preferredVersion`.
//! - `<groupVersion> <resource>` for every resource of every
//!   `/api/v1` and `/apis/<group>/<version>` list: `singularName`,
//!   `namespaced`, `kind`, `verbs` (as a list: kube-apiserver's order is
//!   fixed, sorted for built-in resources and apiextensions-apiserver's own
//!   for custom resources, and `kubectl api-resources -o wide` prints it),
//!   `shortNames` and `categories` (lists, in order: kubectl prints them),
//!   `storageVersionHash`, and `group`/`version` where a list names them.
//! - `<groupVersion> <resource>/<subresource>`: `namespaced`, `kind`,
//!   `group`/`version` where named, `verbs`.
//!
//! Both servers serve the built-in kinds and one custom resource, created
//! through the API first ([`crd`]: two versions, the older one stored,
//! status and scale, short names and categories).
//!
//! Aggregated discovery (`Accept: application/json;g=apidiscovery.k8s.io;
//! v=v2;as=APIGroupDiscoveryList` on `/api` and `/apis`, what kubectl 1.30+
//! reads) is reduced to the same facts (`scope` read as `namespaced`,
//! `responseKind` as `kind` and, where they are another group-version's,
//! `group`/`version`) and must agree with the legacy documents of the same
//! server, fact for fact, except `storageVersionHash`, which the
//! aggregated format does not carry; each of its versions must be
//! `freshness: Current`. That holds for both servers, so the recording
//! keeps the legacy facts, plus the one fact only the aggregated format
//! has: whether a `responseKind` names the resource's own group and
//! version rather than leaving them empty ([`NAMES_OWN`]).
//!
//! The real server's facts are recorded in `tests/golden/discovery.json`,
//! one fact a line. With a realkube instance (`KUBESET_REALKUBE_ENV`) they
//! are fetched live and a recording that no longer matches fails
//! (`KUBESET_RECORD_GOLDEN=1` rewrites it); without one, the embedded
//! server is compared with the recording.
//!
//! # Named normalisations
//!
//! Every difference that stays is named here, exactly, and a name that no
//! longer applies fails the test (a new gap fails it too):
//! - [`NOT_SERVED_BY_DEFAULT`]: group-versions the embedded server serves
//!   that a default kube-apiserver does not (alpha and beta APIs, off
//!   unless `--runtime-config` turns them on; the embedded server serves
//!   every version in its table). Removed from the embedded facts, and from
//!   its groups' version lists; removed from the real server's too, which
//!   serves some of them when realkube is started with `--runtime-config`
//!   (`cargo xtask test` starts it so).
//! - [`NOT_EMBEDDED`]: group-versions the real server serves that the
//!   embedded server does not. Removed from the real facts. (None today.)
//! - [`KNOWN`]: single differences of a fact, each with its reason. (None
//!   today: every other fact agrees.)
//!
//! - Groups of other custom resources: the realkube instance may be shared
//!   with other suites that install their own CRDs while this test runs
//!   (`cargo xtask test` runs every suite against one), so only the
//!   built-in groups (kubeset-api's resource table, [`compared`]) and this
//!   test's own group are compared, on both servers. kube-apiserver orders
//!   CRD groups of equal priority differently in the legacy and the
//!   aggregated `/apis` (seen with `keda.sh`), which the aggregated-vs-legacy
//!   check would otherwise trip on.
//!
//! Not compared: `/apis/<group>` (the `/apis` entry again), `/version`,
//! and the OpenAPI documents.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use kubeset_testserver::TestServer;
use serde_json::{Map, Value, json};

/// The media type of aggregated discovery.
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Group-versions the embedded server serves that a default kube-apiserver
/// 1.35 does not: alpha and beta APIs, off by default (the embedded server
/// serves every version of its resource table).
const NOT_SERVED_BY_DEFAULT: &[&str] = &[
    "admissionregistration.k8s.io/v1alpha1",
    "admissionregistration.k8s.io/v1beta1",
    "certificates.k8s.io/v1alpha1",
    "certificates.k8s.io/v1beta1",
    "coordination.k8s.io/v1alpha2",
    "coordination.k8s.io/v1beta1",
    "internal.apiserver.k8s.io/v1alpha1",
    "networking.k8s.io/v1beta1",
    "resource.k8s.io/v1alpha3",
    "resource.k8s.io/v1beta1",
    "resource.k8s.io/v1beta2",
    "scheduling.k8s.io/v1alpha1",
    "storage.k8s.io/v1beta1",
    "storagemigration.k8s.io/v1beta1",
];

/// Group-versions a default kube-apiserver 1.35 serves that the embedded
/// server does not.
const NOT_EMBEDDED: &[&str] = &[];

/// Differences of one fact that stay, as the difference line starts, with
/// the reason.
const KNOWN: &[(&str, &str)] = &[];

/// Facts by what they describe (module docs).
type Facts = BTreeMap<String, Value>;

/// The group of this test's custom resource ([`crd`]).
const OWN_GROUP: &str = "discovery.kubeset.dev";

/// Whether the group `name` is compared: a built-in group (one of
/// kubeset-api's resource table) or [`OWN_GROUP`]; other suites' CRDs on a
/// shared realkube are not (module docs).
fn compared(name: &str) -> bool {
    name == OWN_GROUP
        || kubeset_api::resources::RESOURCES
            .iter()
            .any(|r| r.group == name)
}

/// A server to ask.
struct Target {
    base: String,
    token: Option<String>,
    client: reqwest::Client,
}

impl Target {
    /// Sends a request (a JSON body with POST); the status and the body,
    /// JSON or else a string.
    async fn send(&self, path: &str, accept: &str, body: Option<&Value>) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        let mut rb = match body {
            Some(b) => self.client.post(url).json(b),
            None => self.client.get(url),
        }
        .header("accept", accept);
        if let Some(t) = &self.token {
            rb = rb.bearer_auth(t);
        }
        let resp = rb.send().await.expect("request");
        let status = resp.status().as_u16();
        let body = resp.bytes().await.expect("body");
        let v = serde_json::from_slice(&body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
        (status, v)
    }

    /// GETs `path` with `accept`; anything but a 200 with JSON fails.
    async fn get(&self, path: &str, accept: &str) -> Value {
        let (status, v) = self.send(path, accept, None).await;
        assert!(
            status == 200 && !v.is_string(),
            "GET {path} ({accept}): {status} {v}"
        );
        v
    }
}

/// The custom resource whose discovery is compared too: two versions, the
/// second stored (so its storageVersionHash is not the served version's),
/// status and scale, short names and categories.
fn crd() -> Value {
    let schema = json!({"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gizmos.discovery.kubeset.dev"},
        "spec": {
            "group": OWN_GROUP,
            "scope": "Namespaced",
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList",
                      "shortNames": ["gz", "gzm"], "categories": ["all", "kubeset"]},
            "versions": [
                {"name": "v1", "served": true, "storage": false, "schema": schema,
                 "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}},
                {"name": "v1beta1", "served": true, "storage": true, "schema": schema},
            ],
        },
    })
}

/// Creates [`crd`] (or finds it from an earlier run) and waits until both
/// discovery formats serve both its versions (the real server publishes a
/// new CRD's discovery a moment after it is established; at most 30 s).
async fn register_crd(t: &Target) {
    let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let (status, v) = t.send(path, "application/json", Some(&crd())).await;
    assert!(matches!(status, 201 | 409), "create the CRD: {status} {v}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let mut ready = true;
        for v in ["v1", "v1beta1"] {
            let p = format!("/apis/discovery.kubeset.dev/{v}");
            ready &= t.send(&p, "application/json", None).await.0 == 200;
        }
        let (_, agg) = t.send("/apis", AGGREGATED, None).await;
        ready &= items(&agg["items"]).any(|g| {
            g["metadata"]["name"] == OWN_GROUP
                && items(&g["versions"])
                    .filter(|v| items(&v["resources"]).count() > 0)
                    .count()
                    == 2
        });
        if ready {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the CRD's discovery within 30 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
}

fn items(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

fn strs(v: &Value) -> Vec<&str> {
    items(v).filter_map(Value::as_str).collect()
}

/// Copies the fields `keys` of `from` that are present (and not null).
fn pick(from: &Value, keys: &[&str]) -> Map<String, Value> {
    keys.iter()
        .filter_map(|k| {
            Some((
                (*k).to_owned(),
                from.get(*k).filter(|v| !v.is_null())?.clone(),
            ))
        })
        .collect()
}

/// The facts of `/api`, `/apis` and every group-version's resource list.
async fn legacy_facts(t: &Target) -> Facts {
    let mut facts = Facts::new();
    let api = t.get("/api", "application/json").await;
    let mut lists: Vec<String> = strs(&api["versions"])
        .iter()
        .map(|v| format!("/api/{v}"))
        .collect();
    facts.insert("/api".into(), json!(strs(&api["versions"])));
    let apis = t.get("/apis", "application/json").await;
    let mut groups = Vec::new();
    for g in items(&apis["groups"]).filter(|g| compared(g["name"].as_str().unwrap_or_default())) {
        let versions: Vec<&str> = items(&g["versions"])
            .filter_map(|v| v["version"].as_str())
            .collect();
        groups.push(json!([
            g["name"],
            versions,
            g["preferredVersion"]["version"]
        ]));
        for v in items(&g["versions"]).filter_map(|v| v["groupVersion"].as_str()) {
            lists.push(format!("/apis/{v}"));
        }
    }
    facts.insert("/apis".into(), Value::Array(groups));
    for path in lists {
        let list = t.get(&path, "application/json").await;
        let gv = list["groupVersion"].as_str().expect("groupVersion");
        for r in items(&list["resources"]) {
            let name = r["name"].as_str().expect("name");
            let keys: &[&str] = if name.contains('/') {
                &["namespaced", "kind", "group", "version", "verbs"]
            } else {
                &[
                    "singularName",
                    "namespaced",
                    "kind",
                    "group",
                    "version",
                    "verbs",
                    "shortNames",
                    "categories",
                    "storageVersionHash",
                ]
            };
            facts.insert(format!("{gv} {name}"), Value::Object(pick(r, keys)));
        }
    }
    facts
}

/// The aggregated-only fact: a `responseKind` that names the resource's
/// own group and version (kube-apiserver leaves them empty for built-in
/// resources and names them for custom resources; clients read both the
/// same, and the legacy documents do not name them).
const NAMES_OWN: &str = "aggregatedResponseKindNamesOwnGroupVersion";

/// `responseKind` as `kind`, `group`/`version` where they are another
/// group-version's, [`NAMES_OWN`] where they are `own`'s.
fn response_kind(m: &mut Map<String, Value>, rk: &Value, own: (&str, &str)) {
    m.insert("kind".into(), rk["kind"].clone());
    let named = (rk["group"].as_str(), rk["version"].as_str());
    match named {
        (Some(""), Some("")) => {}
        (Some(g), Some(v)) if (g, v) == own => {
            m.insert(NAMES_OWN.into(), json!(true));
        }
        _ => {
            m.insert("group".into(), rk["group"].clone());
            m.insert("version".into(), rk["version"].clone());
        }
    }
}

/// One aggregated resource (and its subresources) as facts of `gv`.
fn aggregated_resource(facts: &mut Facts, gv: &str, r: &Value) {
    let own = gv.split_once('/').unwrap_or(("", gv));
    let name = r["resource"].as_str().expect("resource");
    let namespaced = json!(r["scope"] == "Namespaced");
    let mut m = Map::new();
    m.insert("singularName".into(), r["singularResource"].clone());
    m.insert("namespaced".into(), namespaced.clone());
    response_kind(&mut m, &r["responseKind"], own);
    m.extend(pick(r, &["verbs", "shortNames", "categories"]));
    facts.insert(format!("{gv} {name}"), Value::Object(m));
    for s in items(&r["subresources"]) {
        let mut m = Map::new();
        m.insert("namespaced".into(), namespaced.clone());
        response_kind(&mut m, &s["responseKind"], own);
        m.extend(pick(s, &["verbs"]));
        let sub = s["subresource"].as_str().expect("subresource");
        facts.insert(format!("{gv} {name}/{sub}"), Value::Object(m));
    }
}

/// The facts of aggregated `/api` and `/apis`; fails on a version that is
/// not `freshness: Current`.
async fn aggregated_facts(t: &Target) -> Facts {
    let mut facts = Facts::new();
    let core = t.get("/api", AGGREGATED).await;
    let apis = t.get("/apis", AGGREGATED).await;
    let mut groups = Vec::new();
    for (doc, is_core) in [(&core, true), (&apis, false)] {
        assert_eq!(doc["kind"], "APIGroupDiscoveryList", "{doc}");
        for item in items(&doc["items"]) {
            let group = item["metadata"]["name"].as_str().unwrap_or_default();
            if !is_core && !compared(group) {
                continue;
            }
            let versions: Vec<&str> = items(&item["versions"])
                .filter_map(|v| v["version"].as_str())
                .collect();
            if is_core {
                facts.insert("/api".into(), json!(versions));
            } else {
                groups.push(json!([group, versions, versions.first()]));
            }
            for v in items(&item["versions"]) {
                let version = v["version"].as_str().expect("version");
                assert_eq!(v["freshness"], "Current", "{group}/{version}");
                let gv = if is_core {
                    version.to_owned()
                } else {
                    format!("{group}/{version}")
                };
                for r in items(&v["resources"]) {
                    aggregated_resource(&mut facts, &gv, r);
                }
            }
        }
    }
    facts.insert("/apis".into(), Value::Array(groups));
    facts
}

/// Every fact that differs, one line each: `key: expected X, got Y`,
/// a field of a resource as `key field: ...`.
fn differences(expected: &Facts, got: &Facts, what: (&str, &str)) -> Vec<String> {
    let keys: BTreeSet<&String> = expected.keys().chain(got.keys()).collect();
    let mut out = Vec::new();
    let none = Value::Null;
    for k in keys {
        let (e, g) = (
            expected.get(k).unwrap_or(&none),
            got.get(k).unwrap_or(&none),
        );
        match (e, g) {
            _ if e == g => {}
            (Value::Object(e), Value::Object(g)) => {
                let fields: BTreeSet<&String> = e.keys().chain(g.keys()).collect();
                for f in fields.into_iter().filter(|f| e.get(*f) != g.get(*f)) {
                    out.push(format!(
                        "{k} {f}: {} {}, {} {}",
                        what.0,
                        e.get(f).unwrap_or(&none),
                        what.1,
                        g.get(f).unwrap_or(&none)
                    ));
                }
            }
            _ => out.push(format!("{k}: {} {e}, {} {g}", what.0, what.1)),
        }
    }
    out
}

/// Removes the field `key` from every fact.
fn without_field(facts: &Facts, key: &str) -> Facts {
    let mut out = facts.clone();
    for v in out.values_mut() {
        if let Value::Object(m) = v {
            m.remove(key);
        }
    }
    out
}

/// A server's facts: the legacy documents', which the aggregated ones must
/// agree with (module docs), plus the aggregated-only [`NAMES_OWN`].
async fn facts_of(t: &Target, name: &str) -> Facts {
    let mut legacy = legacy_facts(t).await;
    let aggregated = aggregated_facts(t).await;
    let diff = differences(
        &without_field(&legacy, "storageVersionHash"),
        &without_field(&aggregated, NAMES_OWN),
        ("legacy", "aggregated"),
    );
    assert!(
        diff.is_empty(),
        "{name}: aggregated discovery differs from the legacy documents:\n{}",
        diff.join("\n")
    );
    for (k, v) in &aggregated {
        if let (Some(own), Some(Value::Object(m))) = (v.get(NAMES_OWN), legacy.get_mut(k)) {
            m.insert(NAMES_OWN.into(), own.clone());
        }
    }
    legacy
}

/// The group-version a fact key names (`None`: `/api`, `/apis`).
fn group_version(key: &str) -> Option<&str> {
    key.split_once(' ').map(|(gv, _)| gv)
}

/// The served group-versions of `facts`, from `/api` and `/apis`.
fn served(facts: &Facts) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = strs(&facts["/api"])
        .into_iter()
        .map(str::to_owned)
        .collect();
    for g in items(&facts["/apis"]) {
        let name = g[0].as_str().unwrap_or_default();
        out.extend(strs(&g[1]).iter().map(|v| format!("{name}/{v}")));
    }
    out
}

/// Removes the group-versions `gone` from `facts`: their resources, and
/// their versions from `/apis` (a group left with none goes too).
fn without(facts: &mut Facts, gone: &[&str]) {
    facts.retain(|k, _| group_version(k).is_none_or(|gv| !gone.contains(&gv)));
    let groups = facts.get_mut("/apis").expect("/apis");
    let kept: Vec<Value> = items(groups)
        .filter_map(|g| {
            let name = g[0].as_str().unwrap_or_default();
            let versions: Vec<&str> = strs(&g[1])
                .into_iter()
                .filter(|v| !gone.contains(&format!("{name}/{v}").as_str()))
                .collect();
            (!versions.is_empty()).then(|| json!([name, versions, g[2]]))
        })
        .collect();
    *groups = Value::Array(kept);
}

/// Checks that the group-versions only one server serves are exactly the
/// named ones, then removes them.
fn normalise(real: &mut Facts, ours: &mut Facts) -> Vec<String> {
    let (r, o) = (served(real), served(ours));
    let only_ours: Vec<&String> = o.difference(&r).collect();
    let only_real: Vec<&String> = r.difference(&o).collect();
    let mut out = Vec::new();
    if only_ours != NOT_SERVED_BY_DEFAULT {
        out.push(format!(
            "served only by the embedded server: {only_ours:?}, named in NOT_SERVED_BY_DEFAULT: {NOT_SERVED_BY_DEFAULT:?}"
        ));
    }
    if only_real != NOT_EMBEDDED {
        out.push(format!(
            "served only by the real server: {only_real:?}, named in NOT_EMBEDDED: {NOT_EMBEDDED:?}"
        ));
    }
    without(ours, NOT_SERVED_BY_DEFAULT);
    without(real, NOT_EMBEDDED);
    out
}

fn recording() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/discovery.json")
}

/// The recording's text: one fact a line, so that a change reads as one.
fn recording_text(facts: &Facts) -> String {
    let lines: Vec<String> = facts
        .iter()
        .map(|(k, v)| format!("  {}: {v}", json!(k)))
        .collect();
    format!("{{\n{}\n}}\n", lines.join(",\n"))
}

/// The real server's facts: live from realkube (checked against the
/// recording, or recorded), or the recording.
async fn real_facts() -> Facts {
    let read = || -> Facts {
        let text = std::fs::read_to_string(recording()).expect("recording");
        serde_json::from_str(&text).expect("recording is JSON")
    };
    let Some(env) = common::realkube_env() else {
        return read();
    };
    let ca = std::fs::read_to_string(&env["KUBESET_REALKUBE_CA"]).expect("realkube CA");
    let real = Target {
        base: common::realkube_server(&env),
        token: Some(env["KUBESET_REALKUBE_ADMIN_TOKEN"].clone()),
        client: common::tls_client(&ca, common::TIMEOUT),
    };
    register_crd(&real).await;
    let mut live = facts_of(&real, "the real server").await;
    // A realkube started with `--runtime-config` serves some of them
    // (`cargo xtask test` turns on admissionregistration.k8s.io/v1beta1):
    // recorded and compared as a default kube-apiserver serves.
    without(&mut live, NOT_SERVED_BY_DEFAULT);
    if std::env::var_os("KUBESET_RECORD_GOLDEN").is_some() {
        std::fs::write(recording(), recording_text(&live)).expect("write the recording");
    }
    let stale = differences(&read(), &live, ("recorded", "live"));
    assert!(
        stale.is_empty(),
        "the real server no longer answers as recorded (KUBESET_RECORD_GOLDEN=1 rewrites):\n{}",
        stale.join("\n")
    );
    live
}

#[tokio::test]
async fn embedded_discovery_answers_as_kube_apiserver() {
    let mut real = real_facts().await;
    let s = TestServer::start().await.unwrap();
    let ours = Target {
        base: s.replicas()[0].url(),
        token: None,
        client: common::client(),
    };
    register_crd(&ours).await;
    let mut got = facts_of(&ours, "the embedded server").await;
    s.shutdown().await;
    let mut problems = normalise(&mut real, &mut got);
    let diff = differences(&real, &got, ("real", "embedded"));
    for (known, why) in KNOWN {
        if !diff.iter().any(|d| d.starts_with(known)) {
            problems.push(format!(
                "KNOWN names a difference that is gone: {known} ({why})"
            ));
        }
    }
    problems.extend(
        diff.into_iter()
            .filter(|d| !KNOWN.iter().any(|(known, _)| d.starts_with(known))),
    );
    assert!(
        problems.is_empty(),
        "{} discovery differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_recording_is_one_fact_a_line() {
    let text = std::fs::read_to_string(recording()).expect("recording");
    let facts: Facts = serde_json::from_str(&text).expect("recording is JSON");
    assert!(facts.contains_key("/api") && facts.contains_key("/apis"));
    assert!(facts.len() > 100, "{} facts", facts.len());
    assert_eq!(
        text,
        recording_text(&facts),
        "rewrite with KUBESET_RECORD_GOLDEN=1"
    );
}
