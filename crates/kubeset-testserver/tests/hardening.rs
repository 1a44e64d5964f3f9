//! Issue 20, server side, over real sockets: the admin endpoint behind the
//! API's token, secret files written 0600, case-insensitive `Bearer`,
//! concurrent applies creating one object, request and object size limits.

mod common;

use std::sync::Arc;

use common::*;
use kubeset_testserver::TestServer;
use serde_json::{Value, json};

const TOKEN: &str = "s3cret-token";

async fn with_token(
    c: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    auth: Option<&str>,
) -> (u16, String) {
    let mut rb = c.request(method, url);
    if let Some(a) = auth {
        rb = rb.header("authorization", a);
    }
    let resp = rb.send().await.expect("request");
    let code = resp.status().as_u16();
    (code, resp.text().await.expect("body"))
}

#[tokio::test]
async fn admin_endpoint_needs_the_api_token() {
    let s = TestServer::builder()
        .token(Some(TOKEN.into()))
        .admin(true, 0)
        .start()
        .await
        .unwrap();
    let admin = s.admin_url().expect("admin url");
    let c = client();
    let bearer = format!("Bearer {TOKEN}");
    // Without (or with a wrong) token: 401 and a Status, nothing done.
    for auth in [None, Some("Bearer wrong"), Some("Basic czNjcmV0")] {
        let (code, body) = with_token(
            &c,
            reqwest::Method::GET,
            &format!("{admin}/kubeconfig"),
            auth,
        )
        .await;
        assert_eq!(code, 401, "{auth:?}: {body}");
        assert!(!body.contains(TOKEN), "the token leaked: {body}");
        let status: Value = serde_json::from_str(&body).expect("a Status");
        assert_eq!(status["reason"], "Unauthorized");
        let (code, _) = with_token(
            &c,
            reqwest::Method::POST,
            &format!("{admin}/replicas/0/down"),
            auth,
        )
        .await;
        assert_eq!(code, 401);
        let (code, _) =
            with_token(&c, reqwest::Method::GET, &format!("{admin}/replicas"), auth).await;
        assert_eq!(code, 401);
    }
    // The API port is still up after the refused "down".
    let (code, _) = with_token(
        &c,
        reqwest::Method::GET,
        &format!("{}/api/v1/namespaces", s.url()),
        Some(&bearer),
    )
    .await;
    assert_eq!(code, 200);
    // Health stays open; with the token everything works.
    let (code, _) = with_token(&c, reqwest::Method::GET, &format!("{admin}/healthz"), None).await;
    assert_eq!(code, 200);
    let (code, body) = with_token(
        &c,
        reqwest::Method::GET,
        &format!("{admin}/kubeconfig"),
        Some(&bearer),
    )
    .await;
    assert_eq!(code, 200);
    assert!(body.contains(TOKEN));
    let (code, _) = with_token(
        &c,
        reqwest::Method::POST,
        &format!("{admin}/replicas/0/down"),
        Some("bearer s3cret-token"),
    )
    .await;
    assert_eq!(code, 200);
    assert!(
        c.get(format!("{}/version", s.url())).send().await.is_err(),
        "replica 0 is down"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn bearer_scheme_is_case_insensitive_as_kube_apiserver() {
    let s = TestServer::builder()
        .token(Some(TOKEN.into()))
        .start()
        .await
        .unwrap();
    let c = client();
    let url = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let (code, body) = with_token(
            &c,
            reqwest::Method::GET,
            &url,
            Some(&format!("{scheme} {TOKEN}")),
        )
        .await;
        assert_eq!(code, 200, "{scheme}: {body}");
    }
    for bad in [
        "Bearer  s3cret-token",
        "Bearer",
        "Token s3cret-token",
        "bearer s3cret-tokenX",
    ] {
        let (code, _) = with_token(&c, reqwest::Method::GET, &url, Some(bad)).await;
        assert_eq!(code, 401, "{bad:?}");
    }
    s.shutdown().await;
}

#[cfg(unix)]
#[tokio::test]
async fn kubeconfig_is_written_0600() {
    use std::os::unix::fs::PermissionsExt;
    let s = TestServer::builder()
        .token(Some(TOKEN.into()))
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("fresh");
    s.write_kubeconfig(&fresh).unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&fresh), 0o600);
    // An existing world-readable file is truncated and made private too.
    let old = dir.path().join("old");
    std::fs::write(&old, "x".repeat(10_000)).unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
    s.write_kubeconfig(&old).unwrap();
    assert_eq!(mode(&old), 0o600);
    assert_eq!(std::fs::read_to_string(&old).unwrap(), s.kubeconfig_yaml());
    s.shutdown().await;
}

/// 16 appliers at once on each of 100 new ConfigMaps (1,600 applies in
/// four waves of 400, one manager, same content): every apply succeeds, as
/// on kube-apiserver, where a create that loses the race is retried as an
/// update. Before the fix some of them got 409 AlreadyExists.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_applies_creating_one_object_never_conflict() {
    let s = Arc::new(TestServer::start().await.unwrap());
    // Generous: a wave queues on the store's lock on a busy machine.
    let _ = client(); // installs the crypto provider reqwest wants
    let c = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(120))
        .build()
        .unwrap();
    // A larger apply configuration widens the window between "not found"
    // and the insert that the old code left open.
    let data: serde_json::Map<String, Value> = (0..300)
        .map(|i| (format!("k{i}"), json!(format!("v{i}"))))
        .collect();
    let mut failures = Vec::new();
    for wave in 0..4 {
        let mut tasks = Vec::new();
        for obj in wave * 25..(wave + 1) * 25 {
            for _ in 0..16 {
                let c = c.clone();
                let url = format!(
                    "{}/api/v1/namespaces/default/configmaps/race-{obj}?fieldManager=racer",
                    s.url()
                );
                let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("race-{obj}")}, "data": data});
                tasks.push(tokio::spawn(async move {
                    patch(&c, &url, "application/apply-patch+yaml", &body).await
                }));
            }
        }
        for t in tasks {
            let (code, body) = t.await.unwrap();
            if code != 200 && code != 201 {
                failures.push((code, body["message"].clone()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 1600 applies failed: {:?}",
        failures.len(),
        &failures[..failures.len().min(3)]
    );
    let (_, list) = get(
        &c,
        &format!("{}/api/v1/namespaces/default/configmaps", s.url()),
    )
    .await;
    let n = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["metadata"]["name"].as_str().unwrap().starts_with("race-"))
        .count();
    assert_eq!(n, 100);
}

fn configmap_with(name: &str, bytes: usize) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "x".repeat(bytes)}})
}

fn pod_template_with(name: &str, bytes: usize) -> Value {
    json!({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": name},
           "template": {"spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "A", "value": "x".repeat(bytes)}]}]}}})
}

/// The answers kube-apiserver 1.35 + etcd 3.6 gave (recorded from the
/// realkube suite instance; see src/limits.rs for the sources).
#[tokio::test]
async fn body_and_object_limits_answer_as_the_real_server() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let base = format!("{}/api/v1/namespaces/default", s.url());
    // Body over 3 MiB.
    let (code, v) = post(
        &c,
        &format!("{base}/configmaps"),
        &configmap_with("big4", 4 << 20),
    )
    .await;
    assert_eq!(code, 413);
    assert_eq!(v["reason"], "RequestEntityTooLarge");
    assert_eq!(v["message"], "Request entity too large: limit is 3145728");
    // ConfigMap data over 1 MiB.
    let (code, v) = post(
        &c,
        &format!("{base}/configmaps"),
        &configmap_with("big2", 2 << 20),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        v["message"],
        "ConfigMap \"big2\" is invalid: []: Too long: may not be more than 1048576 bytes"
    );
    assert_eq!(
        v["details"]["causes"][0],
        json!({"reason": "FieldValueTooLong", "message": "Too long: may not be more than 1048576 bytes", "field": "[]"})
    );
    // An object over etcd's 1.5 MiB.
    let (code, v) = post(
        &c,
        &format!("{base}/podtemplates"),
        &pod_template_with("pt17", 1700 * 1024),
    )
    .await;
    assert_eq!(code, 500);
    assert_eq!(v["message"], "etcdserver: request is too large");
    assert!(v.get("reason").is_none(), "{v}");
    // Just under it: stored.
    let (code, _) = post(
        &c,
        &format!("{base}/podtemplates"),
        &pod_template_with("pt15", 1500 * 1024),
    )
    .await;
    assert_eq!(code, 201);
    // A merge patch that grows an object past the limit is refused too.
    let (code, v) = patch(&c, &format!("{base}/podtemplates/pt15"), "application/merge-patch+json",
        &json!({"metadata": {"labels": {"a": "b"}}, "template": {"metadata": {"annotations": {"x": "y".repeat(200 * 1024)}}}})).await;
    assert_eq!(code, 500, "{v}");
    // JSON patch with too many operations.
    let ops: Vec<Value> = (0..10_001)
        .map(|_| json!({"op": "test", "path": "/kind", "value": "PodTemplate"}))
        .collect();
    let (code, v) = patch(
        &c,
        &format!("{base}/podtemplates/pt15"),
        "application/json-patch+json",
        &Value::Array(ops),
    )
    .await;
    assert_eq!(code, 413);
    assert_eq!(
        v["message"],
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
    );
    s.shutdown().await;
}
