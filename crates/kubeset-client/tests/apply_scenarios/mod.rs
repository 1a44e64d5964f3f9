//! The server-side apply scenarios of issue 35, written once and run
//! against both servers: the embedded one by `crates/kubeset-client/tests/apply.rs`
//! and a real kube-apiserver by `tests/tests/suite/apply.rs`. The includer
//! names the client crate `k` (`kubeset_client` or the `kubeset` facade,
//! which re-exports it) and hands each scenario a client and a namespace.

use std::future::Future;
use std::time::Duration;

use serde_json::{Value, json};

use super::k;

/// The same scenarios with the generated apply types (kubeset-api's `apply`).
pub mod typed;
use k::api::apps::v1::Deployment;
use k::api::core::v1::ConfigMap;
use k::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k::apply::{Subresource, extract, extract_value};
use k::dynamic::ApiResource;
use k::params::{ApplyParams, PatchParams, PostParams};
use k::{Api, ApplyConflict, Client, Patch};

/// The conflicts of an apply error as (manager, field, subresource,
/// apiVersion), sorted: kube-apiserver lists owners in no fixed order (a
/// Go map), each owner's fields sorted.
fn conflict_tuples(conflicts: &[ApplyConflict]) -> Vec<(&str, &str, Option<&str>, Option<&str>)> {
    let mut got: Vec<_> = conflicts
        .iter()
        .map(|c| {
            (
                c.manager.as_str(),
                c.field.as_str(),
                c.subresource.as_deref(),
                c.api_version.as_deref(),
            )
        })
        .collect();
    got.sort();
    got
}

/// The error with its causes, for a failure message.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cur = c.source();
    }
    out
}

fn ok<T, E: std::error::Error>(what: &str, r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{what}: {}", chain(&e)))
}

/// Polls `check` until it answers `Some`, failing after `within`.
async fn eventually<T, F, Fut>(within: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {within:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// What manager A applies: name, one label, selector, template labels,
/// one container's name and image, nothing else.
fn a_config(name: &str, image: &str, with_label: bool) -> Value {
    let mut cfg = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": image}]},
            },
        },
    });
    if with_label {
        cfg["metadata"]["labels"] = json!({"owner-a": "yes"});
    }
    cfg
}

fn image(d: &Deployment) -> Option<String> {
    d.spec.as_ref()?.template.spec.as_ref()?.containers[0]
        .image
        .clone()
}

fn labels(d: &Deployment) -> Vec<(String, String)> {
    d.metadata
        .labels
        .clone()
        .unwrap_or_default()
        .into_iter()
        .collect()
}

fn with_ns(mut cfg: Value, ns: &str) -> Value {
    cfg["metadata"]["namespace"] = json!(ns);
    cfg
}

/// A applies, B applies replicas only, an editor updates a label and an
/// annotation; A extracts, changes the image and applies: B's replicas and
/// the editor's fields stay, and A's extract is exactly what A applied.
/// Then A drops a label it owned: it is removed.
pub async fn extract_change_apply(client: Client, ns: &str) {
    let d: Api<Deployment> = Api::namespaced(client, ns);
    let name = "extract-apply";
    let a = ApplyParams::new("a");
    ok(
        "A applies",
        d.apply(name, &a_config(name, "nginx:1", true), &a).await,
    );
    let b_cfg = json!({"metadata": {"name": name}, "spec": {"replicas": 3}});
    ok(
        "B applies",
        d.apply(name, &b_cfg, &ApplyParams::new("b")).await,
    );
    let edit =
        json!({"metadata": {"labels": {"edited": "yes"}, "annotations": {"note": "by hand"}}});
    let params = PatchParams {
        field_manager: Some("kubectl-edit".into()),
        ..PatchParams::default()
    };
    let live = ok(
        "the edit",
        d.patch(name, &params, &Patch::Merge(&edit)).await,
    );

    // A's extract is exactly A's configuration (plus the namespace).
    let mut mine: Value = ok("A extracts", extract(&live, "a", Subresource::Main));
    assert_eq!(mine, with_ns(a_config(name, "nginx:1", true), ns));
    let theirs: Value = ok("B extracts", extract(&live, "b", Subresource::Main));
    assert_eq!(
        theirs,
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": name, "namespace": ns}, "spec": {"replicas": 3}})
    );
    let defaults = live
        .spec
        .as_ref()
        .map(|s| (s.strategy.clone(), s.revision_history_limit));

    mine["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
    let live = ok("A applies the change", d.apply(name, &mine, &a).await);
    assert_eq!(image(&live).as_deref(), Some("nginx:2"));
    let spec = live.spec.as_ref().expect("a spec");
    assert_eq!(spec.replicas, Some(3), "B's replicas");
    assert_eq!(
        Some((spec.strategy.clone(), spec.revision_history_limit)),
        defaults,
        "fields nobody applied"
    );
    assert_eq!(
        labels(&live),
        [
            ("edited".to_owned(), "yes".to_owned()),
            ("owner-a".to_owned(), "yes".to_owned())
        ]
    );
    let note = live
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("note"));
    assert_eq!(note.map(String::as_str), Some("by hand"));
    let again: Value = ok("A extracts again", extract(&live, "a", Subresource::Main));
    assert_eq!(again, with_ns(a_config(name, "nginx:2", true), ns));

    // A applies without the label it owned: the label goes, the editor's stays.
    let live = ok(
        "A drops its label",
        d.apply(name, &a_config(name, "nginx:2", false), &a).await,
    );
    assert_eq!(labels(&live), [("edited".to_owned(), "yes".to_owned())]);
    let after: Value = ok("A extracts", extract(&live, "a", Subresource::Main));
    assert_eq!(after, with_ns(a_config(name, "nginx:2", false), ns));
    assert_eq!(live.spec.as_ref().and_then(|s| s.replicas), Some(3));
    // Who owns what, as the server records it (times left out).
    assert_eq!(
        managed_without_times(&live),
        json!([
            {"manager": "a", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:selector": {}, "f:template": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}}},
            {"manager": "b", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:replicas": {}}}},
            {"manager": "kubectl-edit", "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:note": {}}, "f:labels": {"f:edited": {}}}}},
        ])
    );
}

/// The object's managedFields without their `time`s, in manager order
/// within each operation. Both servers sort applies first, then by the
/// entry's time in whole seconds, then by manager: so A's entry comes
/// after B's when A's last apply fell in a later second than B's, and
/// before it otherwise (a comparison of the server's order failed once
/// that way on realkube). The sort itself is checked by the embedded
/// server's unit test and the differential suite.
fn managed_without_times(d: &Deployment) -> Value {
    let mut managed = serde_json::to_value(&d.metadata.managed_fields).expect("serializes");
    let Some(entries) = managed.as_array_mut() else {
        return managed;
    };
    for e in entries.iter_mut() {
        if let Some(e) = e.as_object_mut() {
            e.remove("time");
        }
    }
    let key = |e: &Value| (e["operation"].to_string(), e["manager"].to_string());
    entries.sort_by_key(key);
    managed
}

/// Two appliers of one container list (`listType=map`, keyed by `name`):
/// each owns its own item, the items merge, and an applier that stops
/// applying its item removes it and only it.
pub async fn containers_merge_by_name(client: Client, ns: &str) {
    let d: Api<Deployment> = Api::namespaced(client, ns);
    let name = "containers";
    ok(
        "A applies",
        d.apply(
            name,
            &a_config(name, "nginx:1", false),
            &ApplyParams::new("a"),
        )
        .await,
    );
    let side = |containers: Value| json!({"metadata": {"name": name}, "spec": {"template": {"spec": {"containers": containers}}}});
    let c_cfg = side(json!([{"name": "sidecar", "image": "envoy:1"}]));
    let live = ok(
        "C applies",
        d.apply(name, &c_cfg, &ApplyParams::new("c")).await,
    );
    let names = |d: &Deployment| -> Vec<(String, Option<String>)> {
        d.spec
            .as_ref()
            .and_then(|s| s.template.spec.as_ref())
            .map(|p| {
                p.containers
                    .iter()
                    .map(|c| (c.name.clone(), c.image.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(
        names(&live),
        [
            ("app".to_owned(), Some("nginx:1".to_owned())),
            ("sidecar".to_owned(), Some("envoy:1".to_owned()))
        ]
    );
    let a_mine: Value = ok("A extracts", extract(&live, "a", Subresource::Main));
    assert_eq!(a_mine, with_ns(a_config(name, "nginx:1", false), ns));
    let c_mine: Value = ok("C extracts", extract(&live, "c", Subresource::Main));
    assert_eq!(
        c_mine,
        with_ns(
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name}, "spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "envoy:1"}]}}}}),
            ns
        )
    );
    // C stops applying its container: it goes; A's stays.
    let live = ok(
        "C applies none",
        d.apply(name, &side(json!([])), &ApplyParams::new("c"))
            .await,
    );
    assert_eq!(
        names(&live),
        [("app".to_owned(), Some("nginx:1".to_owned()))]
    );
}

/// B applies a different image: a typed 409 naming A and the image's
/// field path; with force B takes it, and A's extract loses the image.
pub async fn conflict_then_force(client: Client, ns: &str) {
    let d: Api<Deployment> = Api::namespaced(client, ns);
    let name = "conflict";
    ok(
        "A applies",
        d.apply(
            name,
            &a_config(name, "nginx:1", false),
            &ApplyParams::new("a"),
        )
        .await,
    );
    let b_cfg = json!({"metadata": {"name": name}, "spec": {"replicas": 2, "template": {"spec": {
        "containers": [{"name": "app", "image": "nginx:3"}]}}}});
    b_conflicts_with_a(&d, name, &b_cfg).await;
    conflicts_name_every_owner(&d, name).await;
    b_forces(&d, name, ns, &b_cfg).await;
    dry_run_changes_nothing(&d, name).await;
}

/// B's image conflicts with A's: one typed conflict, the real message.
async fn b_conflicts_with_a(d: &Api<Deployment>, name: &str, b_cfg: &Value) {
    let err = d
        .apply(name, b_cfg, &ApplyParams::new("b"))
        .await
        .expect_err("B must conflict with A");
    assert!(err.is_conflict(), "{}", chain(&err));
    let conflicts = err.apply_conflicts().expect("typed conflicts");
    assert_eq!(
        conflict_tuples(&conflicts),
        [(
            "a",
            ".spec.template.spec.containers[name=\"app\"].image",
            None,
            None
        )]
    );
    let api = err.api_error().expect("an API error");
    assert_eq!(api.code, 409);
    assert_eq!(
        api.message,
        "Apply failed with 1 conflict: conflict with \"a\": .spec.template.spec.containers[name=\"app\"].image"
    );
}

/// A conflict with two fields of A and one of an updater.
async fn conflicts_name_every_owner(d: &Api<Deployment>, name: &str) {
    // Two fields of A and one of an updater: every one named, grouped by
    // owner in the message, one cause each.
    let params = PatchParams {
        field_manager: Some("kubectl-edit".into()),
        ..PatchParams::default()
    };
    let edit = json!({"metadata": {"annotations": {"note": "by hand"}}});
    ok(
        "the edit",
        d.patch(name, &params, &Patch::Merge(&edit)).await,
    );
    let grab = json!({"metadata": {"name": name, "annotations": {"note": "mine"}},
        "spec": {"selector": {"matchLabels": {"app": name, "tier": "x"}},
        "template": {"spec": {"containers": [{"name": "app", "image": "nginx:3"}]}}}});
    let err = d
        .apply(name, &grab, &ApplyParams::new("b"))
        .await
        .expect_err("B must conflict with A and the editor");
    let conflicts = err.apply_conflicts().expect("typed conflicts");
    // Compared sorted, and the message in either owner order.
    assert_eq!(
        conflict_tuples(&conflicts),
        [
            ("a", ".spec.selector", None, None),
            (
                "a",
                ".spec.template.spec.containers[name=\"app\"].image",
                None,
                None
            ),
            (
                "kubectl-edit",
                ".metadata.annotations.note",
                None,
                Some("apps/v1")
            ),
        ]
    );
    let by_a = "conflicts with \"a\":\n- .spec.selector\n\
        - .spec.template.spec.containers[name=\"app\"].image";
    let by_edit = "conflicts with \"kubectl-edit\" using apps/v1:\n- .metadata.annotations.note";
    let message = err
        .api_error()
        .map(|e| e.message.clone())
        .unwrap_or_default();
    assert!(
        [
            format!("Apply failed with 3 conflicts: {by_a}\n{by_edit}"),
            format!("Apply failed with 3 conflicts: {by_edit}\n{by_a}"),
        ]
        .contains(&message),
        "{message}"
    );
    // Nothing changed.
    assert_eq!(
        image(&ok("get", d.get(name).await)).as_deref(),
        Some("nginx:1")
    );
}

/// B forces: it takes the image, and A keeps the item only.
async fn b_forces(d: &Api<Deployment>, name: &str, ns: &str, b_cfg: &Value) {
    let live = ok(
        "B forces",
        d.apply(name, b_cfg, &ApplyParams::new("b").force()).await,
    );
    assert_eq!(image(&live).as_deref(), Some("nginx:3"));
    let a_now: Value = ok("A extracts", extract(&live, "a", Subresource::Main));
    assert_eq!(
        a_now["spec"]["template"]["spec"]["containers"],
        json!([{"name": "app"}]),
        "A keeps the item, not the image"
    );
    let b_now: Value = ok("B extracts", extract(&live, "b", Subresource::Main));
    assert_eq!(
        b_now,
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": name, "namespace": ns},
               "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "app", "image": "nginx:3"}]}}}})
    );
}

/// A dry run changes nothing and answers what would be.
async fn dry_run_changes_nothing(d: &Api<Deployment>, name: &str) {
    let dry = json!({"metadata": {"name": name}, "spec": {"replicas": 7}});
    let would = ok(
        "dry run",
        d.apply(name, &dry, &ApplyParams::new("c").force().dry_run())
            .await,
    );
    assert_eq!(would.spec.and_then(|s| s.replicas), Some(7));
    assert_eq!(
        ok("get", d.get(name).await).spec.and_then(|s| s.replicas),
        Some(2)
    );
}

const CRD_GROUP: &str = "apply.kubeset.dev";
const CRD_NAME: &str = "gadgets.apply.kubeset.dev";

fn gadget_crd() -> CustomResourceDefinition {
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": CRD_GROUP,
            "names": {"kind": "Gadget", "plural": "gadgets", "singular": "gadget", "listKind": "GadgetList"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                    "status": {"type": "object", "properties": {
                        "phase": {"type": "string"},
                        "count": {"type": "integer"},
                        "conditions": {"type": "array", "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["type"],
                            "items": {"type": "object", "required": ["type"], "properties": {
                                "type": {"type": "string"}, "status": {"type": "string"}}}}
                    }}
                }}}
            }]
        }
    });
    ok("the CRD", serde_json::from_value(crd))
}

/// Creates the CRD (a run before may have left it) and waits until its
/// objects are served.
async fn ensure_gadgets(client: &Client, ns: &str) -> Api<Value> {
    ensure_crd(client, &gadget_crd()).await;
    let resource = ApiResource {
        group: CRD_GROUP.into(),
        version: "v1".into(),
        kind: "Gadget".into(),
        plural: "gadgets".into(),
        namespaced: true,
    };
    let gadgets = Api::dynamic(client.clone(), &resource, Some(ns));
    served(&gadgets).await;
    gadgets
}

/// Waits until `api`'s collection answers a LIST. `Established` is
/// written by whichever kube-apiserver's controller saw the CRD first;
/// the server this client talks to serves the resource only once its own
/// informer has seen that condition (seen in CI: the first apply after
/// `Established` answered 404 from another of the three servers). A LIST
/// of a served collection is 200 even when empty, so unlike a GET of an
/// object its 404 means "not served yet".
async fn served<K>(api: &Api<K>)
where
    K: serde::Serialize + serde::de::DeserializeOwned + 'static,
{
    eventually(
        Duration::from_secs(60),
        "the custom resource to be served",
        || async {
            match api.list(&Default::default()).await {
                Ok(_) => Some(()),
                Err(e) if e.is_not_found() => None,
                Err(e) => panic!("listing the custom resource: {}", chain(&e)),
            }
        },
    )
    .await;
}

/// Creates `crd` unless it exists, then waits for its `Established`
/// condition: before it the resource is not served, and a GET of a missing
/// object cannot tell (both answer 404), so a probe is no wait.
async fn ensure_crd(client: &Client, crd: &CustomResourceDefinition) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    match crds.create(&PostParams::default(), crd).await {
        Ok(_) => {}
        Err(e) if e.is_already_exists() => {}
        Err(e) => panic!("creating the CRD: {}", chain(&e)),
    }
    let name = crd.metadata.name.clone().unwrap_or_default();
    eventually(
        Duration::from_secs(60),
        "the CRD to be established",
        || async {
            let live = ok("get the CRD", crds.get(&name).await);
            let status = serde_json::to_value(&live.status).expect("serializes");
            status["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
                .then_some(())
        },
    )
    .await;
}

/// `apply_status` on a custom resource: the status applier owns exactly
/// the status it applied, read back with `Subresource::Status`; another
/// status applier conflicts with it, named with its subresource.
pub async fn status_apply(client: Client, ns: &str) {
    let gadgets = ensure_gadgets(&client, ns).await;
    let name = "g1";
    let spec = json!({"apiVersion": "apply.kubeset.dev/v1", "kind": "Gadget",
        "metadata": {"name": name}, "spec": {"size": 2}});
    ok(
        "the owner applies",
        gadgets.apply(name, &spec, &ApplyParams::new("owner")).await,
    );
    let status = json!({"apiVersion": "apply.kubeset.dev/v1", "kind": "Gadget",
        "metadata": {"name": name},
        "status": {"phase": "Ready", "conditions": [{"type": "Up", "status": "True"}]}});
    let live = ok(
        "S applies status",
        gadgets
            .apply_status(name, &status, &ApplyParams::new("s"))
            .await,
    );
    assert_eq!(live["status"]["phase"], "Ready");
    assert_eq!(live["spec"]["size"], 2);
    // The same status applied again changes nothing: nothing is stored,
    // the resourceVersion stays (a controller that applies its status on
    // every reconcile must not wake itself up).
    let again = ok(
        "S applies the same status again",
        gadgets
            .apply_status(name, &status, &ApplyParams::new("s"))
            .await,
    );
    assert_eq!(
        again["metadata"]["resourceVersion"], live["metadata"]["resourceVersion"],
        "a status apply that changes nothing is not a write"
    );
    let entry = live["metadata"]["managedFields"]
        .as_array()
        .and_then(|m| m.iter().find(|e| e["manager"] == "s"))
        .cloned()
        .expect("an entry for S");
    assert_eq!(
        (entry["operation"].as_str(), entry["subresource"].as_str()),
        (Some("Apply"), Some("status"))
    );
    assert_eq!(
        ok(
            "S extracts status",
            extract_value(&live, "s", Subresource::Status)
        ),
        with_ns(status.clone(), ns)
    );
    let main = ok(
        "S extracts main",
        extract_value(&live, "s", Subresource::Main),
    );
    assert_eq!(
        main,
        json!({"apiVersion": "apply.kubeset.dev/v1", "kind": "Gadget",
        "metadata": {"name": name, "namespace": ns}})
    );
    let owner = ok(
        "owner extracts",
        extract_value(&live, "owner", Subresource::Main),
    );
    assert_eq!(owner, with_ns(spec, ns));

    // Another status applier takes the phase: a conflict with S's status write.
    let other = json!({"metadata": {"name": name}, "status": {"phase": "Broken"}});
    let err = gadgets
        .apply_status(name, &other, &ApplyParams::new("t"))
        .await
        .expect_err("T must conflict with S");
    let conflicts = err.apply_conflicts().expect("typed conflicts");
    let got = conflict_tuples(&conflicts);
    assert_eq!(
        got.iter().map(|c| (c.0, c.1, c.2)).collect::<Vec<_>>(),
        [("s", ".status.phase", Some("status"))]
    );
    // S drops its condition: it is removed; the phase stays.
    let fewer = json!({"metadata": {"name": name}, "status": {"phase": "Ready"}});
    let live = ok(
        "S applies less",
        gadgets
            .apply_status(name, &fewer, &ApplyParams::new("s"))
            .await,
    );
    assert_eq!(live["status"], json!({"phase": "Ready"}));
}

/// `apply_scale` on a Deployment: a conflict with the owner of the
/// replicas, then forced; what kube-apiserver records (in the
/// Deployment's managedFields: `operation: Apply`, `subresource: scale`,
/// `apiVersion: apps/v1`, `f:spec.f:replicas`, no `time`; the `Scale` it
/// serves has no managedFields), so `extract` with `Subresource::Scale`
/// reads the Deployment and answers the Deployment's path.
pub async fn scale_apply(client: Client, ns: &str) {
    let d: Api<Deployment> = Api::namespaced(client, ns);
    let name = "scaled";
    ok(
        "A applies",
        d.apply(
            name,
            &a_config(name, "nginx:1", false),
            &ApplyParams::new("a"),
        )
        .await,
    );
    first_scale_apply_meets_the_server(&d, name).await;
    let b_cfg = json!({"metadata": {"name": name}, "spec": {"replicas": 2}});
    ok(
        "B applies",
        d.apply(name, &b_cfg, &ApplyParams::new("b")).await,
    );

    let live = scaler_takes_the_replicas(&d, name).await;
    scale_extracts(&d, name, ns, &live).await;
    // B wants its replicas back through the main resource: a conflict
    // with the scaler, named with its subresource.
    let err = d
        .apply(name, &b_cfg, &ApplyParams::new("b"))
        .await
        .expect_err("B must conflict with the scaler");
    let conflicts = err.apply_conflicts().expect("typed conflicts");
    assert_eq!(
        conflict_tuples(&conflicts),
        [("scaler", ".spec.replicas", Some("scale"), None)]
    );

    kubectl_scale_updates(&d, name).await;
}

/// Nobody owns the defaulted replicas yet: the Scale has no
/// managedFields, so the first apply through it meets the server's
/// "before-first-apply" owner of everything the Scale holds.
async fn first_scale_apply_meets_the_server(d: &Api<Deployment>, name: &str) {
    let first = json!({"metadata": {"name": name}, "spec": {"replicas": 2}});
    let err = d
        .apply_scale(name, &first, &ApplyParams::new("scaler"))
        .await
        .expect_err("the first scale apply must conflict");
    assert_eq!(
        err.api_error().map(|e| e.message.as_str()),
        Some(
            "Apply failed with 1 conflict: conflict with \"before-first-apply\" \
             with subresource \"scale\" using autoscaling/v1: .spec.replicas"
        )
    );
    let conflicts = err.apply_conflicts().expect("typed conflicts");
    let got = conflict_tuples(&conflicts);
    assert_eq!(
        got.first().map(|c| (c.0, c.2, c.3)),
        Some(("before-first-apply", Some("scale"), Some("autoscaling/v1")))
    );
}

/// The scaler conflicts with B, then forces: what the Deployment's
/// managedFields record for it. Returns the Deployment.
async fn scaler_takes_the_replicas(d: &Api<Deployment>, name: &str) -> Deployment {
    let scale = json!({"metadata": {"name": name}, "spec": {"replicas": 5}});
    let err = d
        .apply_scale(name, &scale, &ApplyParams::new("scaler"))
        .await
        .expect_err("the scaler must conflict with B");
    let conflicts = err.apply_conflicts().expect("typed conflicts");
    let got = conflict_tuples(&conflicts);
    assert_eq!(
        got.iter().map(|c| (c.0, c.1)).collect::<Vec<_>>(),
        [("b", ".spec.replicas")]
    );

    let s = ok(
        "forced scale",
        d.apply_scale(name, &scale, &ApplyParams::new("scaler").force())
            .await,
    );
    assert_eq!(s.spec.and_then(|s| s.replicas), Some(5));
    let live = ok("get", d.get(name).await);
    assert_eq!(live.spec.as_ref().and_then(|s| s.replicas), Some(5));
    let managed = serde_json::to_value(&live.metadata.managed_fields).expect("serializes");
    let entry = managed
        .as_array()
        .and_then(|m| m.iter().find(|e| e["manager"] == "scaler"))
        .cloned()
        .unwrap_or_else(|| panic!("no entry for the scaler in {managed:#}"));
    assert_eq!(entry["operation"], "Apply");
    assert_eq!(entry["subresource"], "scale");
    assert_eq!(entry["apiVersion"], "apps/v1");
    assert_eq!(entry["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    assert_eq!(
        entry.get("time"),
        None,
        "the real server records no time here"
    );
    // B no longer owns the replicas, so it has nothing left.
    assert!(
        !managed
            .as_array()
            .is_some_and(|m| m.iter().any(|e| e["manager"] == "b")),
        "{managed:#}"
    );

    live
}

/// Extract for the scale subresource, from the Deployment and from the
/// Scale, and the extract applied again.
async fn scale_extracts(d: &Api<Deployment>, name: &str, ns: &str, live: &Deployment) {
    // From the Deployment: the Deployment's path.
    let from_parent: Value = ok(
        "extract from the Deployment",
        extract(live, "scaler", Subresource::Scale),
    );
    assert_eq!(
        from_parent,
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": name, "namespace": ns}, "spec": {"replicas": 5}})
    );
    // The Scale itself carries no managedFields (kube-apiserver v1.35
    // builds it from the Deployment without them): nothing to extract.
    let scale_obj: Value = ok("get the Scale", d.get_subresource("scale", name).await);
    assert_eq!(
        scale_obj["metadata"].get("managedFields"),
        None,
        "{scale_obj:#}"
    );
    let from_scale = ok(
        "extract from the Scale",
        extract_value(&scale_obj, "scaler", Subresource::Scale),
    );
    assert_eq!(
        from_scale,
        json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
               "metadata": {"name": name, "namespace": ns}})
    );
    // A Scale configuration made from the Deployment's extract, applied again.
    let mut again = from_scale;
    again["spec"] = json!({"replicas": from_parent["spec"]["replicas"].as_i64().map(|n| n - 1)});
    let s = ok(
        "re-apply the extract",
        d.apply_scale(name, &again, &ApplyParams::new("scaler"))
            .await,
    );
    assert_eq!(s.spec.and_then(|s| s.replicas), Some(4));
}

/// An update through the Scale (kubectl scale's merge patch) takes the
/// replicas as an updater of the scale subresource, recorded at the
/// Deployment's apiVersion and, as every owner through the Scale, with
/// no time.
async fn kubectl_scale_updates(d: &Api<Deployment>, name: &str) {
    let params = PatchParams {
        field_manager: Some("kubectl-scale".into()),
        ..PatchParams::default()
    };
    let patch = json!({"spec": {"replicas": 1}});
    let _: Value = ok(
        "scale by merge patch",
        d.patch_subresource("scale", name, &params, &Patch::Merge(&patch))
            .await,
    );
    let live = ok("get", d.get(name).await);
    let managed = serde_json::to_value(&live.metadata.managed_fields).expect("serializes");
    let summary: Vec<(String, String, String, String, bool)> = managed
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (
                s("manager"),
                s("operation"),
                s("apiVersion"),
                s("subresource"),
                e.get("time").is_some(),
            )
        })
        .collect();
    let t = |m: &str, op: &str, sub: &str, time: bool| {
        (
            m.to_owned(),
            op.to_owned(),
            "apps/v1".to_owned(),
            sub.to_owned(),
            time,
        )
    };
    assert_eq!(
        summary,
        [
            t("a", "Apply", "", true),
            t("kubectl-scale", "Update", "scale", false)
        ],
        "{managed:#}"
    );
}

/// A manager that applied a map empty (`labels: {}`, `data: {}`) owns the
/// map as a leaf; an updater that fills it takes the map (`.`) and its
/// keys, so the applier is left with nothing and extracts a bare
/// configuration.
pub async fn empty_map_then_filled(client: Client, ns: &str) {
    let cms: Api<ConfigMap> = Api::namespaced(client, ns);
    let name = "empty-map";
    let cfg = json!({"metadata": {"name": name, "labels": {}}, "data": {}});
    let live = ok(
        "E applies",
        cms.apply(name, &cfg, &ApplyParams::new("e")).await,
    );
    let fields = serde_json::to_value(&live.metadata.managed_fields).expect("serializes");
    assert_eq!(
        fields[0]["fieldsV1"],
        json!({"f:data": {}, "f:metadata": {"f:labels": {}}}),
        "{fields:#}"
    );
    let params = PatchParams {
        field_manager: Some("ed".into()),
        ..PatchParams::default()
    };
    let fill = json!({"metadata": {"labels": {"x": "1"}}, "data": {"k": "v"}});
    let live = ok(
        "the edit",
        cms.patch(name, &params, &Patch::Merge(&fill)).await,
    );
    let fields = serde_json::to_value(&live.metadata.managed_fields).expect("serializes");
    let managers: Vec<&str> = fields
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["manager"].as_str())
        .collect();
    assert_eq!(managers, ["ed"], "{fields:#}");
    assert_eq!(
        fields[0]["fieldsV1"],
        json!({"f:data": {".": {}, "f:k": {}}, "f:metadata": {"f:labels": {".": {}, "f:x": {}}}})
    );
    let mine: Value = ok("E extracts", extract(&live, "e", Subresource::Main));
    assert_eq!(
        mine,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}})
    );
}
