//! API semantics over real sockets: CRUD, errors, concurrency, patches,
//! apply, subresources, selectors, pagination, namespaces, CRDs, discovery.

mod common;

use common::*;
use kubeset_testserver::TestServer;
use serde_json::{Value, json};

fn cm(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}, "data": {"k": "v"}})
}

fn deployment(name: &str, replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
                {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}]},
                {"name": "side", "image": "side:1"}
            ]}}
        }
    })
}

#[tokio::test]
async fn create_get_and_real_error_statuses() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let base = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    let (code, created) = post(&c, &base, &cm("a", json!({}))).await;
    assert_eq!(code, 201);
    assert_eq!(created["metadata"]["namespace"], "default");
    assert_eq!(created["metadata"]["uid"].as_str().unwrap().len(), 36);
    assert!(
        created["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );
    assert!(rv(&created) > 0);
    assert_eq!(
        created["metadata"]["managedFields"][0]["operation"],
        "Update"
    );

    let (code, got) = get(&c, &format!("{base}/a")).await;
    assert_eq!(code, 200);
    assert_eq!(got, created);

    let (code, st) = post(&c, &base, &cm("a", json!({}))).await;
    assert_eq!(code, 409);
    assert_eq!(st["kind"], "Status");
    assert_eq!(st["reason"], "AlreadyExists");
    assert_eq!(st["message"], "configmaps \"a\" already exists");
    assert_eq!(st["details"], json!({"name": "a", "kind": "configmaps"}));

    let (code, st) = get(&c, &format!("{base}/missing")).await;
    assert_eq!((code, st["reason"].as_str()), (404, Some("NotFound")));
    assert_eq!(st["message"], "configmaps \"missing\" not found");

    let (code, st) = get(
        &c,
        &format!(
            "{}/apis/apps/v1/namespaces/default/deployments/nope",
            s.url()
        ),
    )
    .await;
    assert_eq!(code, 404);
    assert_eq!(st["message"], "deployments.apps \"nope\" not found");
    assert_eq!(st["details"]["group"], "apps");

    // Missing namespace: 404 on the namespace, like kube-apiserver.
    let (code, st) = post(
        &c,
        &format!("{}/api/v1/namespaces/nope/configmaps", s.url()),
        &cm("b", json!({})),
    )
    .await;
    assert_eq!(code, 404);
    assert_eq!(st["message"], "namespaces \"nope\" not found");

    // No name: 422 Invalid with the field cause.
    let (code, st) = post(&c, &base, &json!({"metadata": {}})).await;
    assert_eq!(code, 422);
    assert_eq!(st["reason"], "Invalid");
    assert_eq!(
        st["message"],
        "ConfigMap \"\" is invalid: metadata.name: Required value: name or generateName is required"
    );
    assert_eq!(st["details"]["causes"][0]["field"], "metadata.name");
    let (code, st) = post(&c, &base, &cm("Bad_Name", json!({}))).await;
    assert_eq!((code, st["reason"].as_str()), (422, Some("Invalid")));

    // generateName: prefix plus five characters.
    let (code, g) = post(&c, &base, &json!({"metadata": {"generateName": "gen-"}})).await;
    assert_eq!(code, 201);
    let name = g["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");

    // dryRun=All validates and answers without storing.
    let (code, dry) = post(&c, &format!("{base}?dryRun=All"), &cm("dry", json!({}))).await;
    assert_eq!((code, dry["metadata"]["name"].as_str()), (201, Some("dry")));
    let (code, _) = get(&c, &format!("{base}/dry")).await;
    assert_eq!(code, 404);

    // Unknown resource path.
    let (code, st) = get(&c, &format!("{}/api/v1/widgets", s.url())).await;
    assert_eq!((code, st["reason"].as_str()), (404, Some("NotFound")));
}

#[tokio::test]
async fn update_uses_optimistic_concurrency_and_versions_are_monotonic() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let base = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    let (_, a) = post(&c, &base, &cm("a", json!({}))).await;
    let mut stale = a.clone();
    let mut fresh = a.clone();
    fresh["data"]["k"] = json!("v2");
    let (code, updated) = put(&c, &format!("{base}/a"), &fresh).await;
    assert_eq!(code, 200);
    assert!(rv(&updated) > rv(&a));
    assert_eq!(updated["metadata"]["uid"], a["metadata"]["uid"]);
    stale["data"]["k"] = json!("v3");
    let (code, st) = put(&c, &format!("{base}/a"), &stale).await;
    assert_eq!(code, 409);
    assert_eq!(st["reason"], "Conflict");
    assert_eq!(
        st["message"],
        "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again"
    );
    // Without a resourceVersion the update is unconditional.
    let mut uncond = a.clone();
    uncond["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    uncond["data"]["k"] = json!("v4");
    let (code, u) = put(&c, &format!("{base}/a"), &uncond).await;
    assert_eq!(code, 200);
    assert!(rv(&u) > rv(&updated));
    // A no-op update keeps the resourceVersion.
    let (code, same) = put(&c, &format!("{base}/a"), &u).await;
    assert_eq!(code, 200);
    assert_eq!(rv(&same), rv(&u));
    // A different uid is a failed precondition.
    let mut other_uid = same.clone();
    other_uid["metadata"]["uid"] = json!("00000000-0000-4000-8000-000000000000");
    let (code, st) = put(&c, &format!("{base}/a"), &other_uid).await;
    assert_eq!((code, st["reason"].as_str()), (409, Some("Conflict")));
    assert!(
        st["message"]
            .as_str()
            .unwrap()
            .contains("Precondition failed: UID in precondition")
    );
    // Creating with a resourceVersion is refused, as kube-apiserver
    // refuses it: a 500 with no reason (a plain error there).
    let mut with_rv = cm("rv", json!({}));
    with_rv["metadata"]["resourceVersion"] = json!("5");
    let (code, st) = post(&c, &base, &with_rv).await;
    assert_eq!(
        (code, st["reason"].as_str(), st["message"].as_str()),
        (
            500,
            None,
            Some("resourceVersion should not be set on objects to be created")
        )
    );
    // Name mismatch with the URL.
    let (code, _) = put(&c, &format!("{base}/other"), &u).await;
    assert!(code == 400 || code == 404);
    // Global counter across resources.
    let (_, b) = post(
        &c,
        &format!("{}/api/v1/namespaces/default/secrets", s.url()),
        &json!({"metadata": {"name": "s"}}),
    )
    .await;
    assert!(rv(&b) > rv(&u));
}

#[tokio::test]
async fn json_merge_and_strategic_patches() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let deps = format!("{}/apis/apps/v1/namespaces/default/deployments", s.url());
    let (code, _) = post(&c, &deps, &deployment("web", 1)).await;
    assert_eq!(code, 201);

    let (code, d) = patch(
        &c,
        &format!("{deps}/web"),
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"a": "b"}}}),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(d["metadata"]["labels"]["a"], "b");
    assert_eq!(
        d["metadata"]["generation"], 1,
        "metadata changes keep the generation"
    );

    let (code, d) = patch(
        &c,
        &format!("{deps}/web"),
        "application/strategic-merge-patch+json",
        &json!({"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "app:2", "env": [{"name": "B", "value": "2"}]}
        ]}}}}),
    )
    .await;
    assert_eq!(code, 200);
    let containers = &d["spec"]["template"]["spec"]["containers"];
    assert_eq!(
        containers.as_array().unwrap().len(),
        2,
        "merged by name, not replaced"
    );
    assert_eq!(containers[0]["image"], "app:2");
    // As kube-apiserver orders a merged list: the patch's new item first.
    assert_eq!(
        containers[0]["env"],
        json!([{"name": "B", "value": "2"}, {"name": "A", "value": "1"}])
    );
    assert_eq!(containers[1]["name"], "side");
    assert_eq!(d["metadata"]["generation"], 2);

    let (code, d) = patch(
        &c,
        &format!("{deps}/web"),
        "application/json-patch+json",
        &json!([{"op": "test", "path": "/spec/replicas", "value": 1}, {"op": "replace", "path": "/spec/replicas", "value": 4}]),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(d["spec"]["replicas"], 4);
    let (code, st) = patch(
        &c,
        &format!("{deps}/web"),
        "application/json-patch+json",
        &json!([{"op": "test", "path": "/spec/replicas", "value": 1}]),
    )
    .await;
    assert_eq!((code, st["kind"].as_str()), (422, Some("Status")));

    // A JSON patch may not turn the object into something else.
    let (code, st) = patch(
        &c,
        &format!("{deps}/web"),
        "application/json-patch+json",
        &json!([{"op": "replace", "path": "", "value": 1}]),
    )
    .await;
    assert_eq!((code, st["reason"].as_str()), (422, Some("Invalid")));

    // A patch carrying a stale resourceVersion is a conflict.
    let (code, st) = patch(
        &c,
        &format!("{deps}/web"),
        "application/merge-patch+json",
        &json!({"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 9}}),
    )
    .await;
    assert_eq!((code, st["reason"].as_str()), (409, Some("Conflict")));
    let (code, st) = patch(
        &c,
        &format!("{deps}/nope"),
        "application/merge-patch+json",
        &json!({}),
    )
    .await;
    assert_eq!((code, st["reason"].as_str()), (404, Some("NotFound")));
    let (code, st) = patch(&c, &format!("{deps}/web"), "text/plain", &json!({})).await;
    assert_eq!(
        (code, st["reason"].as_str()),
        (415, Some("UnsupportedMediaType"))
    );
}

#[tokio::test]
async fn server_side_apply_owns_fields_and_conflicts() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let url = format!(
        "{}/apis/apps/v1/namespaces/default/deployments/web",
        s.url()
    );
    let apply = "application/apply-patch+yaml";
    let (code, d) = patch(
        &c,
        &format!("{url}?fieldManager=alice"),
        apply,
        &deployment("web", 2),
    )
    .await;
    // An apply that creates answers 201, as kube-apiserver does.
    assert_eq!(code, 201, "{d}");
    assert_eq!(d["spec"]["replicas"], 2);
    let mf = &d["metadata"]["managedFields"][0];
    assert_eq!(
        (mf["manager"].as_str(), mf["operation"].as_str()),
        (Some("alice"), Some("Apply"))
    );
    assert_eq!(mf["fieldsV1"]["f:spec"]["f:replicas"], json!({}));

    // YAML bodies are accepted for apply.
    let yaml =
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n";
    let resp = c
        .patch(format!("{url}?fieldManager=bob"))
        .header("content-type", apply)
        .body(yaml)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 409);
    let st: Value = resp.json().await.unwrap();
    assert_eq!(st["reason"], "Conflict");
    // An applier is named without its apiVersion (kube-apiserver 1.35
    // names only an updater's: `"ed" using apps/v1`).
    assert_eq!(
        st["message"],
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.replicas"
    );
    assert_eq!(st["details"]["causes"][0]["reason"], "FieldManagerConflict");
    assert_eq!(st["details"]["causes"][0]["field"], ".spec.replicas");

    let resp = c
        .patch(format!("{url}?fieldManager=bob&force=true"))
        .header("content-type", apply)
        .body(yaml)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let d: Value = resp.json().await.unwrap();
    assert_eq!(d["spec"]["replicas"], 3);
    let owners: Vec<&str> = d["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["manager"].as_str().unwrap())
        .collect();
    assert!(owners.contains(&"bob"));
    // alice lost .spec.replicas: her next apply with the old value conflicts with bob.
    let (code, st) = patch(
        &c,
        &format!("{url}?fieldManager=alice"),
        apply,
        &deployment("web", 2),
    )
    .await;
    assert_eq!(code, 409);
    assert!(st["message"].as_str().unwrap().contains("\"bob\""));
    // Missing fieldManager is invalid PatchOptions (422, as kube-apiserver
    // 1.35 answers; the differential suite records it).
    let (code, st) = patch(&c, &url, apply, &deployment("web", 2)).await;
    assert_eq!(code, 422);
    assert_eq!(st["details"]["causes"][0]["field"], "fieldManager");
}

/// controller-rs's status update: an apply through `/status` whose body
/// names no object takes the name from the URL and the live object, as
/// kube-apiserver does; creating by apply still needs the name, and a
/// subresource of a missing object is 404.
#[tokio::test]
async fn apply_takes_the_name_from_the_url_and_the_live_object() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let apply = "application/apply-patch+yaml";
    let url = format!(
        "{}/apis/apps/v1/namespaces/default/deployments/web",
        s.url()
    );
    let status =
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "status": {"observedGeneration": 1}});
    let (code, st) = patch(
        &c,
        &format!("{url}/status?fieldManager=ctrl"),
        apply,
        &status,
    )
    .await;
    assert_eq!(
        (code, st["reason"].as_str()),
        (404, Some("NotFound")),
        "{st}"
    );
    let nameless = json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 1}});
    let (code, st) = patch(&c, &format!("{url}?fieldManager=ctrl"), apply, &nameless).await;
    assert_eq!(
        (code, st["reason"].as_str()),
        (400, Some("BadRequest")),
        "{st}"
    );
    let (code, d) = post(
        &c,
        &format!("{}/apis/apps/v1/namespaces/default/deployments", s.url()),
        &deployment("web", 1),
    )
    .await;
    assert_eq!(code, 201, "{d}");
    let (code, d) = patch(
        &c,
        &format!("{url}/status?fieldManager=ctrl&force=true"),
        apply,
        &status,
    )
    .await;
    assert_eq!(code, 200, "{d}");
    assert_eq!(d["metadata"]["name"], "web");
    assert_eq!(d["status"]["observedGeneration"], 1);
    let (code, d) = patch(&c, &format!("{url}?fieldManager=ctrl"), apply, &nameless).await;
    assert_eq!(code, 200, "{d}");
    let other =
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "other"}});
    let (code, st) = patch(&c, &format!("{url}?fieldManager=ctrl"), apply, &other).await;
    assert_eq!(
        (code, st["reason"].as_str()),
        (400, Some("BadRequest")),
        "{st}"
    );
}

/// kube-apiserver answers 404 for what it does not serve: an unknown
/// resource under a namespace, a cluster-scoped resource under a
/// namespace, an unknown subresource; 405 only for a known path and an
/// unsupported verb.
#[tokio::test]
async fn unknown_resources_and_subresources_are_404() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let ns = format!("{}/api/v1/namespaces/default", s.url());
    let (code, _) = post(&c, &format!("{ns}/configmaps"), &cm("a", json!({}))).await;
    assert_eq!(code, 201);
    for path in [
        "frobs",
        "frobs/x",
        "nodes",
        "nodes/n",
        "configmaps/a/frob",
        "configmaps/a/status",
    ] {
        let (code, st) = get(&c, &format!("{ns}/{path}")).await;
        assert_eq!(
            (code, st["reason"].as_str()),
            (404, Some("NotFound")),
            "GET {path}: {st}"
        );
    }
    let (code, st) = put(&c, &format!("{ns}/configmaps"), &cm("a", json!({}))).await;
    assert_eq!(
        (code, st["reason"].as_str()),
        (405, Some("MethodNotAllowed")),
        "{st}"
    );
}

#[tokio::test]
async fn status_and_scale_subresources() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let deps = format!("{}/apis/apps/v1/namespaces/default/deployments", s.url());
    let mut body = deployment("web", 1);
    body["status"] = json!({"replicas": 7});
    let (_, d) = post(&c, &deps, &body).await;
    assert_eq!(d["metadata"]["generation"], 1);
    assert_eq!(
        d["status"],
        json!({}),
        "status is reset on create (answered as the empty Go struct)"
    );

    // A status write ignores spec changes and keeps the generation.
    let mut st_write = d.clone();
    st_write["spec"]["replicas"] = json!(99);
    st_write["status"] = json!({"replicas": 1, "readyReplicas": 1});
    let (code, d2) = put(&c, &format!("{deps}/web/status"), &st_write).await;
    assert_eq!(code, 200);
    assert_eq!(d2["spec"]["replicas"], 1);
    assert_eq!(d2["status"]["readyReplicas"], 1);
    assert_eq!(d2["metadata"]["generation"], 1);

    // A main write ignores status and bumps the generation on spec change.
    let mut main = d2.clone();
    main["spec"]["replicas"] = json!(2);
    main["status"] = json!({"replicas": 42});
    let (code, d3) = put(&c, &format!("{deps}/web"), &main).await;
    assert_eq!(code, 200);
    assert_eq!(d3["status"]["replicas"], 1);
    assert_eq!(d3["metadata"]["generation"], 2);

    let (code, d4) = patch(
        &c,
        &format!("{deps}/web/status"),
        "application/merge-patch+json",
        &json!({"status": {"availableReplicas": 1}}),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(d4["status"]["availableReplicas"], 1);
    assert_eq!(d4["metadata"]["generation"], 2);

    let (code, scale) = get(&c, &format!("{deps}/web/scale")).await;
    assert_eq!(code, 200);
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["apiVersion"], "autoscaling/v1");
    assert_eq!(scale["spec"]["replicas"], 2);
    assert_eq!(scale["status"]["replicas"], 1);
    assert_eq!(scale["status"]["selector"], "app=web");

    let mut sc = scale.clone();
    sc["spec"]["replicas"] = json!(5);
    let (code, sc2) = put(&c, &format!("{deps}/web/scale"), &sc).await;
    assert_eq!(code, 200);
    assert_eq!(sc2["spec"]["replicas"], 5);
    let (code, st) = put(&c, &format!("{deps}/web/scale"), &sc).await;
    assert_eq!(
        (code, st["reason"].as_str()),
        (409, Some("Conflict")),
        "stale scale write"
    );
    let (code, sc3) = patch(
        &c,
        &format!("{deps}/web/scale"),
        "application/merge-patch+json",
        &json!({"spec": {"replicas": 6}}),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(sc3["spec"]["replicas"], 6);
    let (_, d5) = get(&c, &format!("{deps}/web")).await;
    assert_eq!(d5["spec"]["replicas"], 6);
    assert_eq!(d5["metadata"]["generation"], 4);
}

#[tokio::test]
async fn label_and_field_selectors_and_pagination() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let base = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    for i in 0..10 {
        let tier = if i % 2 == 0 { "front" } else { "back" };
        let mut labels = json!({"app": "web", "tier": tier});
        if i < 3 {
            labels["canary"] = json!("yes");
        }
        post(&c, &base, &cm(&format!("cm-{i:02}"), labels)).await;
    }
    let count = |v: &Value| v["items"].as_array().unwrap().len();
    let names = |v: &Value| -> Vec<String> {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let enc = |s: &str| {
        s.replace('=', "%3D")
            .replace(',', "%2C")
            .replace(' ', "+")
            .replace('!', "%21")
            .replace('(', "%28")
            .replace(')', "%29")
    };
    for (sel, want) in [
        ("tier=front", 5),
        ("tier==back", 5),
        ("tier!=front", 5),
        ("tier in (front,back)", 10),
        ("tier notin (front)", 5),
        ("canary", 3),
        ("!canary", 7),
        ("app=web,canary,tier=front", 2),
    ] {
        let (code, l) = get(&c, &format!("{base}?labelSelector={}", enc(sel))).await;
        assert_eq!(code, 200);
        assert_eq!(count(&l), want, "{sel}");
    }
    let (code, st) = get(&c, &format!("{base}?labelSelector={}", enc("tier in ()"))).await;
    assert_eq!((code, st["reason"].as_str()), (400, Some("BadRequest")));

    let (_, l) = get(
        &c,
        &format!("{base}?fieldSelector={}", enc("metadata.name=cm-03")),
    )
    .await;
    assert_eq!(names(&l), ["cm-03"]);
    let (_, l) = get(
        &c,
        &format!(
            "{}/api/v1/configmaps?fieldSelector={}",
            s.url(),
            enc("metadata.namespace=default,metadata.name!=cm-03")
        ),
    )
    .await;
    assert_eq!(count(&l), 9);
    assert_eq!(l["kind"], "ConfigMapList");
    assert!(
        l["items"][0].get("kind").is_none(),
        "built-in list items carry no kind, like kube-apiserver"
    );

    // Pagination: a consistent snapshot across pages.
    let (_, p1) = get(&c, &format!("{base}?limit=4")).await;
    assert_eq!(names(&p1), ["cm-00", "cm-01", "cm-02", "cm-03"]);
    assert_eq!(p1["metadata"]["remainingItemCount"], 6);
    let tok = p1["metadata"]["continue"].as_str().unwrap().to_owned();
    post(&c, &base, &cm("cm-05a", json!({}))).await;
    let (_, p2) = get(&c, &format!("{base}?limit=4&continue={tok}")).await;
    assert_eq!(names(&p2), ["cm-04", "cm-05", "cm-06", "cm-07"]);
    assert_eq!(
        p2["metadata"]["resourceVersion"],
        p1["metadata"]["resourceVersion"]
    );
    let tok = p2["metadata"]["continue"].as_str().unwrap().to_owned();
    let (_, p3) = get(&c, &format!("{base}?limit=4&continue={tok}")).await;
    assert_eq!(names(&p3), ["cm-08", "cm-09"]);
    assert!(p3["metadata"].get("continue").is_none());
    let (code, _) = get(&c, &format!("{base}?limit=4&continue=garbage!")).await;
    assert_eq!(code, 400);
}

#[tokio::test]
async fn delete_preconditions_finalizers_and_collections() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let base = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    let (_, a) = post(&c, &base, &cm("a", json!({"x": "1"}))).await;
    let (code, _, st) = send(
        &c,
        reqwest::Method::DELETE,
        &format!("{base}/a"),
        "application/json",
        Some(&json!({"preconditions": {"uid": "wrong"}})),
    )
    .await;
    assert_eq!((code, st["reason"].as_str()), (409, Some("Conflict")));
    let uid = a["metadata"]["uid"].as_str().unwrap();
    assert!(
        st["message"].as_str().unwrap().ends_with(&format!(
            "Precondition failed: UID in precondition: wrong, UID in object meta: {uid}"
        )),
        "{st}"
    );
    let (code, _, st) = send(
        &c,
        reqwest::Method::DELETE,
        &format!("{base}/a"),
        "application/json",
        Some(&json!({"preconditions": {"uid": uid, "resourceVersion": "999999"}})),
    )
    .await;
    assert_eq!((code, st["reason"].as_str()), (409, Some("Conflict")));
    let have = a["metadata"]["resourceVersion"].as_str().unwrap();
    assert!(
        st["message"].as_str().unwrap().ends_with(&format!(
            "Precondition failed: ResourceVersion in precondition: 999999, ResourceVersion in object meta: {have}"
        )),
        "{st}"
    );
    // A ConfigMap's DELETE answers a Success Status naming it, as
    // kube-apiserver does; pods answer their last state (below).
    let (code, gone) = delete(&c, &format!("{base}/a")).await;
    assert_eq!(code, 200);
    assert_eq!(gone["kind"], "Status");
    assert_eq!(gone["status"], "Success");
    assert_eq!(gone["details"]["name"], "a");
    assert_eq!(gone["details"]["kind"], "configmaps");
    assert_eq!(gone["details"]["uid"], a["metadata"]["uid"]);
    let pods = format!("{}/api/v1/namespaces/default/pods", s.url());
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    let (_, p) = post(&c, &pods, &pod).await;
    let (code, last) = delete(&c, &format!("{pods}/p")).await;
    assert_eq!(code, 200);
    assert_eq!(last["kind"], "Pod");
    assert_eq!(last["metadata"]["uid"], p["metadata"]["uid"]);
    let (code, _) = get(&c, &format!("{base}/a")).await;
    assert_eq!(code, 404);
    let (code, _) = delete(&c, &format!("{base}/a")).await;
    assert_eq!(code, 404);

    // Finalizers: delete marks, clearing the finalizers removes.
    let mut f = cm("f", json!({}));
    f["metadata"]["finalizers"] = json!(["example.com/hold"]);
    post(&c, &base, &f).await;
    let (code, marked) = delete(&c, &format!("{base}/f")).await;
    assert_eq!(code, 200);
    assert!(marked["metadata"]["deletionTimestamp"].is_string());
    let (code, _) = get(&c, &format!("{base}/f")).await;
    assert_eq!(code, 200);
    let (code, _) = patch(
        &c,
        &format!("{base}/f"),
        "application/merge-patch+json",
        &json!({"metadata": {"finalizers": null}}),
    )
    .await;
    assert_eq!(code, 200);
    let (code, _) = get(&c, &format!("{base}/f")).await;
    assert_eq!(code, 404);

    for i in 0..4 {
        post(
            &c,
            &base,
            &cm(
                &format!("d{i}"),
                json!({"del": if i < 3 { "yes" } else { "no" }}),
            ),
        )
        .await;
    }
    let (code, l) = delete(&c, &format!("{base}?labelSelector=del%3Dyes")).await;
    assert_eq!(code, 200);
    assert_eq!(l["items"].as_array().unwrap().len(), 3);
    let (_, left) = get(&c, &base).await;
    assert_eq!(left["items"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn namespaces_exist_and_take_their_objects_along() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let (_, l) = get(&c, &format!("{}/api/v1/namespaces", s.url())).await;
    let names: Vec<&str> = l["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["metadata"]["name"].as_str().unwrap())
        .collect();
    for ns in ["default", "kube-system", "kube-public"] {
        assert!(names.contains(&ns), "{ns} in {names:?}");
    }
    let (code, ns) = post(
        &c,
        &format!("{}/api/v1/namespaces", s.url()),
        &json!({"metadata": {"name": "team"}}),
    )
    .await;
    assert_eq!(code, 201);
    assert_eq!(ns["status"]["phase"], "Active");
    assert!(ns["metadata"].get("namespace").is_none());
    let (code, _) = post(
        &c,
        &format!("{}/api/v1/namespaces/team/configmaps", s.url()),
        &cm("x", json!({})),
    )
    .await;
    assert_eq!(code, 201);
    // Deleting marks it Terminating, as kube-apiserver does: its objects
    // stay readable and creates in it are refused until it is finalized.
    let (code, gone) = delete(&c, &format!("{}/api/v1/namespaces/team", s.url())).await;
    assert_eq!(code, 200);
    assert_eq!(gone["status"]["phase"], "Terminating");
    assert_eq!(gone["spec"]["finalizers"], json!(["kubernetes"]));
    assert!(gone["metadata"]["deletionTimestamp"].is_string());
    let cm_x = format!("{}/api/v1/namespaces/team/configmaps/x", s.url());
    let (code, _) = get(&c, &cm_x).await;
    assert_eq!(code, 200);
    let (code, st) = post(
        &c,
        &format!("{}/api/v1/namespaces/team/configmaps", s.url()),
        &cm("y", json!({})),
    )
    .await;
    assert_eq!(
        (
            code,
            st["reason"].as_str(),
            &st["details"]["causes"][0]["reason"]
        ),
        (403, Some("Forbidden"), &json!("NamespaceTerminating")),
        "{st}"
    );
    // Finalizing it (what the namespace controller does once it is empty)
    // removes it and what is left in it.
    let mut fin = gone.clone();
    fin["spec"]["finalizers"] = json!([]);
    let (code, _) = put(
        &c,
        &format!("{}/api/v1/namespaces/team/finalize", s.url()),
        &fin,
    )
    .await;
    assert_eq!(code, 200);
    let (code, _) = get(&c, &cm_x).await;
    assert_eq!(code, 404);
    let (code, st) = post(
        &c,
        &format!("{}/api/v1/namespaces/team/configmaps", s.url()),
        &cm("y", json!({})),
    )
    .await;
    assert_eq!(
        (code, st["message"].as_str()),
        (404, Some("namespaces \"team\" not found"))
    );
}

#[tokio::test]
async fn the_namespace_controller_empties_and_removes_a_deleted_namespace() {
    let s = TestServer::builder()
        .controllers(true)
        .start()
        .await
        .unwrap();
    let c = client();
    let u = s.url();
    let (code, _) = post(
        &c,
        &format!("{u}/api/v1/namespaces"),
        &json!({"metadata": {"name": "team"}}),
    )
    .await;
    assert_eq!(code, 201);
    let mut held = cm("held", json!({}));
    held["metadata"]["finalizers"] = json!(["x.dev/hold"]);
    for body in [cm("x", json!({})), held] {
        let (code, _) = post(&c, &format!("{u}/api/v1/namespaces/team/configmaps"), &body).await;
        assert_eq!(code, 201);
    }
    let (code, _) = delete(&c, &format!("{u}/api/v1/namespaces/team")).await;
    assert_eq!(code, 200);
    // The controller deletes what it can; the held object waits for its
    // finalizer, and the namespace for it.
    let held_url = format!("{u}/api/v1/namespaces/team/configmaps/held");
    let x_url = format!("{u}/api/v1/namespaces/team/configmaps/x");
    wait_for_code(&c, &x_url, 404).await;
    let (code, h) = get(&c, &held_url).await;
    assert_eq!(code, 200);
    assert!(h["metadata"]["deletionTimestamp"].is_string(), "{h}");
    let (code, n) = get(&c, &format!("{u}/api/v1/namespaces/team")).await;
    assert_eq!((code, &n["status"]["phase"]), (200, &json!("Terminating")));
    let (code, _) = patch(
        &c,
        &held_url,
        "application/merge-patch+json",
        &json!({"metadata": {"finalizers": null}}),
    )
    .await;
    assert_eq!(code, 200);
    wait_for_code(&c, &format!("{u}/api/v1/namespaces/team"), 404).await;
}

/// Polls `url` until it answers `code` (a generous bound only against a
/// hang; the controller's pace is not asserted).
async fn wait_for_code(c: &reqwest::Client, url: &str, code: u16) {
    for _ in 0..600 {
        if get(c, url).await.0 == code {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{url} never answered {code}");
}

#[tokio::test]
async fn discovery_version_openapi_health_and_kubernetes_endpoints() {
    let s = TestServer::builder().replicas(3).start().await.unwrap();
    let c = client();
    let u = s.url();
    core_discovery(&c, &u).await;
    group_discovery(&c, &u).await;
    version_openapi_and_health(&c, &u).await;
    kubernetes_endpoints(&c, &u, &s).await;
}

/// `/api` and `/api/v1`: the core group's resources, their categories and
/// the subresources' own kinds and verbs.
async fn core_discovery(c: &reqwest::Client, u: &str) {
    let (_, api) = get(c, &format!("{u}/api")).await;
    assert_eq!(api["kind"], "APIVersions");
    assert_eq!(api["versions"], json!(["v1"]));
    let (_, v1) = get(c, &format!("{u}/api/v1")).await;
    let names: Vec<&str> = v1["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"pods") && names.contains(&"pods/status") && names.contains(&"configmaps"),
        "{names:?}"
    );
    let pods = v1["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "pods")
        .unwrap();
    assert_eq!(
        pods["categories"],
        json!(["all"]),
        "kubectl get all needs the category"
    );
    assert_eq!(pods["namespaced"], true);
    // Subresources name their own kinds and verbs.
    let sub = |name: &str| {
        v1["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in /api/v1"))
    };
    let token = sub("serviceaccounts/token");
    assert_eq!(
        (
            &token["group"],
            &token["version"],
            &token["kind"],
            &token["verbs"]
        ),
        (
            &json!("authentication.k8s.io"),
            &json!("v1"),
            &json!("TokenRequest"),
            &json!(["create"])
        )
    );
    assert_eq!(sub("pods/binding")["kind"], "Binding");
    assert_eq!(sub("pods/binding")["verbs"], json!(["create"]));
    assert_eq!(sub("pods/ephemeralcontainers")["kind"], "Pod");
    assert_eq!(sub("namespaces/finalize")["verbs"], json!(["update"]));
}

/// `/apis`, a group's version, and aggregated discovery when asked (as
/// kubectl asks).
async fn group_discovery(c: &reqwest::Client, u: &str) {
    let (_, apis) = get(c, &format!("{u}/apis")).await;
    assert_eq!(apis["kind"], "APIGroupList");
    let apps = apis["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "apps")
        .unwrap();
    assert_eq!(apps["preferredVersion"]["groupVersion"], "apps/v1");
    let (_, appsv1) = get(c, &format!("{u}/apis/apps/v1")).await;
    let scale = appsv1["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "deployments/scale")
        .unwrap();
    assert_eq!(
        (scale["group"].as_str(), scale["kind"].as_str()),
        (Some("autoscaling"), Some("Scale"))
    );
    // Every short name kube-apiserver's registry gives (its REST's
    // ShortNames), these two among them: `kubectl get ip`, `kubectl get vac`.
    for (gv, plural, short) in [
        ("networking.k8s.io/v1", "ipaddresses", "ip"),
        ("storage.k8s.io/v1", "volumeattributesclasses", "vac"),
    ] {
        let (_, list) = get(c, &format!("{u}/apis/{gv}")).await;
        let r = list["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == plural)
            .unwrap_or_else(|| panic!("{plural} in {gv}"));
        assert_eq!(r["shortNames"], json!([short]), "{plural}");
    }
    // Aggregated discovery when asked, as kubectl does.
    let resp = c
        .get(format!("{u}/apis"))
        .header(
            "accept",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.headers()["content-type"],
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    let agg: Value = resp.json().await.unwrap();
    assert_eq!(agg["kind"], "APIGroupDiscoveryList");
    let apps = agg["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metadata"]["name"] == "apps")
        .unwrap();
    let deploy = apps["versions"][0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "deployments")
        .unwrap();
    assert_eq!(deploy["scope"], "Namespaced");
    assert_eq!(deploy["responseKind"]["kind"], "Deployment");
    assert!(
        deploy["subresources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["subresource"] == "scale" && s["responseKind"]["kind"] == "Scale")
    );
    let resp = c
        .get(format!("{u}/api"))
        .header(
            "accept",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        )
        .send()
        .await
        .unwrap();
    let core: Value = resp.json().await.unwrap();
    assert_eq!(core["items"][0]["versions"][0]["version"], "v1");
    let (_, g) = get(c, &format!("{u}/apis/apps")).await;
    assert_eq!(g["kind"], "APIGroup");
}

/// `/version`, `/openapi/v3` and the health endpoints.
async fn version_openapi_and_health(c: &reqwest::Client, u: &str) {
    let (_, ver) = get(c, &format!("{u}/version")).await;
    assert_eq!(ver["major"], "1");
    let (_, oa) = get(c, &format!("{u}/openapi/v3")).await;
    assert!(
        oa["paths"]["api/v1"]["serverRelativeURL"]
            .as_str()
            .unwrap()
            .starts_with("/openapi/v3/api/v1")
    );
    assert!(oa["paths"]["apis/apps/v1"].is_object());
    for h in ["healthz", "readyz", "livez"] {
        let resp = c.get(format!("{u}/{h}")).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        assert_eq!(resp.text().await.unwrap(), "ok");
    }
}

/// The `kubernetes` Service's Endpoints and EndpointSlices: one per
/// replica.
async fn kubernetes_endpoints(c: &reqwest::Client, u: &str, s: &TestServer) {
    let ports: Vec<u16> = s.replicas().iter().map(|r| r.addr().port()).collect();
    let resp = c
        .get(format!(
            "{u}/api/v1/namespaces/default/endpoints/kubernetes"
        ))
        .send()
        .await
        .unwrap();
    let warning = resp
        .headers()
        .get("warning")
        .map(|w| w.to_str().unwrap().to_owned());
    assert!(
        warning
            .unwrap()
            .starts_with("299 - \"v1 Endpoints is deprecated")
    );
    let ep: Value = resp.json().await.unwrap();
    let subsets = ep["subsets"].as_array().unwrap();
    assert_eq!(subsets.len(), 3);
    for (sub, port) in subsets.iter().zip(&ports) {
        assert_eq!(sub["addresses"][0]["ip"], "127.0.0.1");
        assert_eq!(
            sub["ports"][0],
            json!({"name": "https", "port": port, "protocol": "TCP"})
        );
    }
    let (_, slices) = get(c, &format!("{u}/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dkubernetes")).await;
    let got: Vec<u64> = slices["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|sl| sl["ports"][0]["port"].as_u64().unwrap())
        .collect();
    assert_eq!(got.len(), 3);
    for p in &ports {
        assert!(got.contains(&u64::from(*p)));
    }
    let (code, svc) = get(
        c,
        &format!("{u}/api/v1/namespaces/default/services/kubernetes"),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(svc["spec"]["ports"][0]["name"], "https");
}

fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size"}}}]
        }
    })
}

/// A custom resource is never updated unconditionally (422 without a
/// `resourceVersion`, as the CRD strategy answers), and a `resourceVersion`
/// in an apply configuration is a precondition (409 when stale).
#[tokio::test]
async fn custom_resource_updates_need_a_resource_version() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let u = s.url();
    let crds = format!("{u}/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
    assert_eq!(post(&c, &crds, &widget_crd()).await.0, 201);
    let widgets = format!("{u}/apis/example.com/v1/namespaces/default/widgets");
    let w = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1}});
    let (code, live) = post(&c, &widgets, &w).await;
    assert_eq!(code, 201, "{live}");
    for path in ["w", "w/status"] {
        let (code, st) = put(&c, &format!("{widgets}/{path}"), &w).await;
        assert_eq!(
            (code, st["reason"].as_str()),
            (422, Some("Invalid")),
            "{st}"
        );
        assert_eq!(
            st["details"]["causes"][0]["field"],
            "metadata.resourceVersion"
        );
    }
    let mut current = w.clone();
    current["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"].clone();
    current["spec"]["size"] = json!(2);
    assert_eq!(put(&c, &format!("{widgets}/w"), &current).await.0, 200);
    let apply = "application/apply-patch+yaml";
    let mut stale = w.clone();
    stale["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"].clone();
    let (code, st) = patch(&c, &format!("{widgets}/w?fieldManager=m"), apply, &stale).await;
    assert_eq!(
        (code, st["reason"].as_str()),
        (409, Some("Conflict")),
        "{st}"
    );
}

#[tokio::test]
async fn crds_become_served_and_discoverable() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let u = s.url();
    let widgets = format!("{u}/apis/example.com/v1/namespaces/default/widgets");
    let (code, _) = get(&c, &widgets).await;
    assert_eq!(code, 404);
    let (code, crd) = post(
        &c,
        &format!("{u}/apis/apiextensions.k8s.io/v1/customresourcedefinitions"),
        &widget_crd(),
    )
    .await;
    assert_eq!(code, 201);
    let established = crd["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["type"] == "Established" && c["status"] == "True");
    assert!(established);
    let (_, apis) = get(&c, &format!("{u}/apis")).await;
    assert!(
        apis["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["name"] == "example.com")
    );
    let (_, rl) = get(&c, &format!("{u}/apis/example.com/v1")).await;
    assert_eq!(rl["resources"][0]["shortNames"], json!(["wd"]));

    let (code, w) = post(&c, &widgets, &json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 2}})).await;
    assert_eq!(code, 201, "{w}");
    let (_, l) = get(&c, &widgets).await;
    assert_eq!(l["kind"], "WidgetList");
    assert_eq!(
        l["items"][0]["kind"], "Widget",
        "custom resource list items keep their kind"
    );
    let (_, scale) = get(&c, &format!("{widgets}/w1/scale")).await;
    assert_eq!(scale["spec"]["replicas"], 2);
    let (code, _) = patch(
        &c,
        &format!("{widgets}/w1"),
        "application/strategic-merge-patch+json",
        &json!({"spec": {"size": 3}}),
    )
    .await;
    assert_eq!(code, 415, "no strategic merge for custom resources");

    // From Rust too, for a second CRD.
    let mut gadget = widget_crd();
    gadget["metadata"]["name"] = json!("gadgets.example.com");
    gadget["spec"]["names"] = json!({"plural": "gadgets", "kind": "Gadget"});
    gadget["spec"]["scope"] = json!("Cluster");
    s.register_crd(gadget).unwrap();
    let (code, _) = post(
        &c,
        &format!("{u}/apis/example.com/v1/gadgets"),
        &json!({"metadata": {"name": "g"}}),
    )
    .await;
    assert_eq!(code, 201);

    let (code, _) = delete(
        &c,
        &format!("{u}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com"),
    )
    .await;
    assert_eq!(code, 200);
    let (code, _) = get(&c, &widgets).await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn table_output_when_asked() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let base = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    post(&c, &base, &cm("t", json!({}))).await;
    let resp = c
        .get(&base)
        .header(
            "accept",
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        )
        .send()
        .await
        .unwrap();
    let t: Value = resp.json().await.unwrap();
    assert_eq!(t["kind"], "Table");
    assert_eq!(t["columnDefinitions"][0]["name"], "Name");
    assert_eq!(t["rows"][0]["cells"][0], "t");
    assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
}

#[tokio::test]
async fn rust_api_seeds_and_reads_objects() {
    let s = TestServer::start().await.unwrap();
    let created = s
        .create(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "seed", "namespace": "kube-system"}}))
        .unwrap();
    assert_eq!(created["metadata"]["namespace"], "kube-system");
    let (code, got) = get(
        &client(),
        &format!("{}/api/v1/namespaces/kube-system/configmaps/seed", s.url()),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(got["metadata"]["uid"], created["metadata"]["uid"]);
    let again = s
        .get("v1", "ConfigMap", Some("kube-system"), "seed")
        .unwrap();
    assert_eq!(again, got);
    let ns = s.get("v1", "Namespace", None, "default").unwrap();
    assert_eq!(ns["status"]["phase"], "Active");
    assert!(matches!(
        s.get("v1", "ConfigMap", Some("default"), "nope"),
        Err(kubeset_testserver::Error::Rejected { code: 404, .. })
    ));
    assert!(matches!(
        s.create(json!({"apiVersion": "v9", "kind": "Nope", "metadata": {"name": "x"}})),
        Err(kubeset_testserver::Error::UnknownKind { .. })
    ));
    assert!(s.register_crd(json!("not an object")).is_err());
    assert!(s.resource_version() >= rv(&created));
}

/// A CRD installed with `register_crd` has its schema compiled on first
/// use: one whose CEL rule does not compile is registered, and every write
/// of its objects then answers 500 naming the CRD and the rule's problem;
/// the same CRD created through the API is refused at once (422), as
/// kube-apiserver refuses it.
#[tokio::test]
async fn a_registered_crd_whose_schema_does_not_compile_fails_on_first_write() {
    let s = TestServer::start().await.unwrap();
    let crd = |group: &str| {
        json!({"metadata": {"name": format!("gizmos.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object",
                        "properties": {"size": {"type": "integer"}},
                        "x-kubernetes-validations": [{"rule": "self.size >"}]}}}}}]}})
    };
    s.register_crd(crd("a.example.com")).unwrap();
    for _ in 0..2 {
        let err = s
            .create(json!({"apiVersion": "a.example.com/v1", "kind": "Gizmo",
                "metadata": {"name": "g", "namespace": "default"}, "spec": {"size": 1}}))
            .unwrap_err();
        let kubeset_testserver::Error::Rejected {
            code,
            reason,
            message,
        } = err
        else {
            panic!("not a refusal: {err:?}");
        };
        assert_eq!((code, reason), (500, "InternalError"), "{message}");
        assert!(
            message.contains("gizmos.a.example.com")
                && message.contains("x-kubernetes-validations[0].rule"),
            "{message}"
        );
    }
    // Over HTTP, as a client sees it.
    let url = format!(
        "{}/apis/a.example.com/v1/namespaces/default/gizmos",
        s.url()
    );
    let resp = client()
        .post(&url)
        .json(&json!({"apiVersion": "a.example.com/v1", "kind": "Gizmo",
            "metadata": {"name": "h"}, "spec": {"size": 1}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 500);
    // Through the API: refused when created.
    let mut api = crd("b.example.com");
    api["apiVersion"] = json!("apiextensions.k8s.io/v1");
    api["kind"] = json!("CustomResourceDefinition");
    let err = s.create(api).unwrap_err();
    assert!(
        matches!(err, kubeset_testserver::Error::Rejected { code: 422, .. }),
        "{err:?}"
    );
}

/// A ValidatingAdmissionPolicy's refusals and warnings, with the texts
/// kube-apiserver v1.35.4 gave for the same policy, binding and requests
/// (observed on a realkube instance; the differential suite compares
/// codes, reasons and warnings, not messages).
#[tokio::test]
async fn admission_policy_refusals_carry_the_real_servers_status() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let adm = format!("{}/apis/admissionregistration.k8s.io/v1", s.url());
    let policy = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "p1"},
        "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "resources": ["configmaps"], "operations": ["CREATE", "UPDATE"]}]},
            "validations": [
                {"expression": "object.data.size() < 2", "message": "too many keys"},
                {"expression": "!has(object.data.bad)", "reason": "Forbidden",
                 "messageExpression": "'bad key in ' + object.metadata.name"},
                {"expression": "object.data.x == 'y'"}]}});
    let binding = |actions: Value| {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "b1"}, "spec": {"policyName": "p1", "validationActions": actions}})
    };
    assert_eq!(
        post(&c, &format!("{adm}/validatingadmissionpolicies"), &policy)
            .await
            .0,
        201
    );
    let bindings = format!("{adm}/validatingadmissionpolicybindings");
    assert_eq!(post(&c, &bindings, &binding(json!(["Deny"]))).await.0, 201);
    let base = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    let cmd = |name: &str, data: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data});
    let denied = "ValidatingAdmissionPolicy 'p1' with binding 'b1' denied request: ";
    for (name, data, code, reason, text) in [
        (
            "a",
            json!({"a": "1", "b": "2", "x": "y"}),
            422,
            "Invalid",
            "too many keys".to_owned(),
        ),
        (
            "zz",
            json!({"bad": "1"}),
            403,
            "Forbidden",
            "bad key in zz".to_owned(),
        ),
        (
            "c",
            json!({"x": "z"}),
            422,
            "Invalid",
            "failed expression: object.data.x == 'y'".to_owned(),
        ),
        (
            "d",
            json!({}),
            422,
            "Invalid",
            "expression 'object.data.size() < 2' resulted in error: no such key: data".to_owned(),
        ),
    ] {
        let mut obj = cmd(name, data.clone());
        if data.as_object().is_some_and(serde_json::Map::is_empty) {
            obj.as_object_mut().unwrap().remove("data");
        }
        let (got, body) = post(&c, &base, &obj).await;
        assert_eq!(
            (got, body["reason"].as_str()),
            (code, Some(reason)),
            "{name}: {body}"
        );
        let cause = format!("{denied}{text}");
        assert_eq!(
            body["message"],
            format!("configmaps \"{name}\" is forbidden: {cause}")
        );
        assert_eq!(
            body["details"],
            json!({"name": name, "kind": "configmaps", "causes": [{"message": cause}]})
        );
    }
    let (ok, _) = post(&c, &base, &cmd("e", json!({"x": "y"}))).await;
    assert_eq!(ok, 201);
    // Warn instead of Deny: the write passes with one Warning per failure.
    let (code, _) = put(
        &c,
        &format!("{bindings}/b1"),
        &binding(json!(["Warn", "Audit"])),
    )
    .await;
    assert_eq!(code, 200);
    let w = cmd("w1", json!({"a": "1", "bad": "2"}));
    let (code, headers, _) = send(
        &c,
        reqwest::Method::POST,
        &format!("{base}?dryRun=All"),
        "application/json",
        Some(&w),
    )
    .await;
    assert_eq!(code, 201);
    let warnings: Vec<_> = headers
        .get_all("warning")
        .iter()
        .map(|h| h.to_str().unwrap().to_owned())
        .collect();
    let warned = "299 - \"Validation failed for ValidatingAdmissionPolicy 'p1' with binding 'b1': ";
    assert_eq!(
        warnings,
        [
            format!("{warned}too many keys\""),
            format!("{warned}bad key in w1\""),
            format!(
                "{warned}expression 'object.data.x == 'y'' resulted in error: no such key: x\""
            ),
        ]
    );
}
