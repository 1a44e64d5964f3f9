//! The generated `Clientset` and its typed subresource methods against the
//! real kube-apiserver: bind, evict, logs (no kubelet: empty, or a typed 404),
//! scale, token, ephemeral containers, resize, namespace finalize and
//! CertificateSigningRequest approval.

use futures::TryStreamExt as _;
use kubeset::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use kubeset::api::autoscaling::v1::Scale;
use kubeset::api::core::v1::{
    Binding, EphemeralContainer, Namespace, NamespaceSpec, Pod, ServiceAccount,
};
use kubeset::api::policy::v1::Eviction;
use kubeset::clientset::core_v1::PodLogParams;
use kubeset::params::{DeleteParams, PatchParams, PostParams};
use kubeset::{Clientset, Patch};
use serde_json::json;

use crate::common::{connect, ok, typed};

fn pod(name: &str) -> Pod {
    typed(json!({
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "registry.invalid/app:1"}]}
    }))
}

#[tokio::test]
async fn clientset_bind_evict_and_logs() {
    let ctx = connect!("cs-pods");
    let cs = Clientset::new(ctx.client.clone());
    let pods = cs.core_v1().pods(&ctx.ns);
    let post = PostParams::default();
    ok("create", pods.create(&post, &pod("bound")).await);
    ok("create", pods.create(&post, &pod("free")).await);

    // No kubelet. An unscheduled pod has no log location: the server
    // answers 200 with an empty body, in both forms.
    let params = PodLogParams::default().container("app");
    assert_eq!(ok("logs", pods.logs("free", &params).await), "");
    let chunks: Vec<_> = ok(
        "log stream",
        ok(
            "open log stream",
            pods.log_stream("free", &params.clone().follow(true)).await,
        )
        .try_collect()
        .await,
    );
    assert_eq!(chunks.iter().map(|c| c.len()).sum::<usize>(), 0);
    let err = pods
        .logs("ghost", &PodLogParams::default())
        .await
        .expect_err("no such pod");
    assert!(err.is_not_found(), "{err:?}");

    let binding: Binding = typed(json!({
        "metadata": {"name": "bound"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "node-a"}
    }));
    let status = ok("bind", pods.bind("bound", &post, &binding).await);
    assert_eq!(status.status.as_deref(), Some("Success"), "{status:?}");
    let bound = ok("get", pods.get("bound").await);
    assert_eq!(
        bound.spec.as_ref().and_then(|s| s.node_name.as_deref()),
        Some("node-a")
    );
    // Bound to a node that does not exist: the server cannot find where
    // the log lives, a typed 404.
    let err = pods
        .logs("bound", &params)
        .await
        .expect_err("the node does not exist");
    assert!(err.is_not_found(), "{err:?}");
    let again = pods.bind("bound", &post, &binding).await;
    assert!(
        again.as_ref().is_err_and(kubeset::Error::is_conflict),
        "{again:?}"
    );

    let eviction: Eviction = typed(json!({"metadata": {"name": "free"}}));
    let status = ok("evict", pods.evict("free", &post, &eviction).await);
    assert_eq!(status.status.as_deref(), Some("Success"), "{status:?}");
    assert!(ok("get", pods.get_opt("free").await).is_none());
    let err = pods
        .evict("free", &post, &eviction)
        .await
        .expect_err("already gone");
    assert!(err.is_not_found(), "{err:?}");
}

#[tokio::test]
async fn clientset_ephemeral_containers() {
    let ctx = connect!("cs-ephemeral");
    let cs = Clientset::new(ctx.client.clone());
    let pods = cs.core_v1().pods(&ctx.ns);
    ok(
        "create",
        pods.create(&PostParams::default(), &pod("p")).await,
    );

    let mut live = ok("get", pods.get_ephemeral_containers("p").await);
    assert!(
        live.spec
            .as_ref()
            .is_some_and(|s| s.ephemeral_containers.is_none())
    );
    let debug: EphemeralContainer = typed(json!({
        "name": "debug", "image": "registry.invalid/debug:1",
        "targetContainerName": "app"
    }));
    if let Some(spec) = live.spec.as_mut() {
        spec.ephemeral_containers = Some(vec![debug]);
    }
    let updated = ok(
        "replace ephemeralcontainers",
        pods.replace_ephemeral_containers("p", &PostParams::default(), &live)
            .await,
    );
    let names: Vec<String> = updated
        .spec
        .and_then(|s| s.ephemeral_containers)
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, ["debug"]);

    // A second one by strategic-merge patch.
    let patched = ok(
        "patch ephemeralcontainers",
        pods.patch_ephemeral_containers(
            "p",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"ephemeralContainers": [
                {"name": "debug2", "image": "registry.invalid/debug:2"}
            ]}})),
        )
        .await,
    );
    let count = patched
        .spec
        .and_then(|s| s.ephemeral_containers)
        .map_or(0, |v| v.len());
    assert_eq!(count, 2);
}

#[tokio::test]
async fn clientset_deployment_scale() {
    let ctx = connect!("cs-scale");
    let cs = Clientset::new(ctx.client.clone());
    let deploys = cs.apps_v1().deployments(&ctx.ns);
    let d = typed(json!({
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "registry.invalid/app:1"}]}
            }
        }
    }));
    ok("create", deploys.create(&PostParams::default(), &d).await);

    let mut scale: Scale = ok("get scale", deploys.get_scale("web").await);
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(1));
    assert_eq!(scale.metadata.name.as_deref(), Some("web"));
    if let Some(spec) = scale.spec.as_mut() {
        spec.replicas = Some(3);
    }
    let replaced = ok(
        "replace scale",
        deploys
            .replace_scale("web", &PostParams::default(), &scale)
            .await,
    );
    assert_eq!(replaced.spec.and_then(|s| s.replicas), Some(3));
    // The resourceVersion read with the scale is stale now: 409.
    let stale = deploys
        .replace_scale("web", &PostParams::default(), &scale)
        .await;
    assert!(
        stale.as_ref().is_err_and(kubeset::Error::is_conflict),
        "{stale:?}"
    );

    let patched = ok(
        "patch scale",
        deploys
            .patch_scale(
                "web",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"replicas": 4}})),
            )
            .await,
    );
    assert_eq!(patched.spec.and_then(|s| s.replicas), Some(4));
    let live = ok("get", deploys.get("web").await);
    assert_eq!(live.spec.and_then(|s| s.replicas), Some(4));
}

#[tokio::test]
async fn clientset_service_account_token() {
    let ctx = connect!("cs-token");
    let cs = Clientset::new(ctx.client.clone());
    let sas = cs.core_v1().service_accounts(&ctx.ns);
    let sa: ServiceAccount = typed(json!({"metadata": {"name": "robot"}}));
    ok("create", sas.create(&PostParams::default(), &sa).await);

    // The suite's models are v1.35's (`v1_35`), where `spec`, its
    // `audiences` and the status' `token` are required (plain values; v1.36
    // makes them `Option`).
    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: vec!["kubeset-test".into()],
            expiration_seconds: Some(600),
            ..TokenRequestSpec::default()
        },
        ..TokenRequest::default()
    };
    let answer = ok(
        "create token",
        sas.create_token("robot", &PostParams::default(), &request)
            .await,
    );
    let status = answer.status.expect("the server fills status");
    // A JWT: three base64url parts.
    let token = status.token;
    assert_eq!(token.split('.').count(), 3, "{token}");
    assert_eq!(answer.spec.audiences, ["kubeset-test"]);

    let err = sas
        .create_token("ghost", &PostParams::default(), &request)
        .await
        .expect_err("no such service account");
    assert!(err.is_not_found(), "{err:?}");
}

#[tokio::test]
async fn clientset_namespace_finalize() {
    let ctx = connect!("cs-finalize");
    let cs = Clientset::new(ctx.client.clone());
    let namespaces = cs.core_v1().namespaces();
    let name = format!("{}-fin", ctx.ns);
    let ns: Namespace = typed(json!({"metadata": {"name": name}}));
    ok(
        "create",
        namespaces.create(&PostParams::default(), &ns).await,
    );
    // No namespace controller runs in realkube: deleting leaves the
    // namespace Terminating, held by the `kubernetes` finalizer.
    ok(
        "delete",
        namespaces.delete(&name, &DeleteParams::default()).await,
    );
    let mut live = ok("get", namespaces.get(&name).await);
    assert!(live.metadata.deletion_timestamp.is_some());
    assert_eq!(
        live.spec.as_ref().and_then(|s| s.finalizers.clone()),
        Some(vec!["kubernetes".to_owned()])
    );
    // What the namespace controller does once the namespace is empty.
    live.spec = Some(NamespaceSpec {
        finalizers: Some(Vec::new()),
    });
    // The server answers with the namespace as finalized, then removes it.
    let finalized = ok(
        "finalize",
        namespaces
            .finalize(&name, &PostParams::default(), &live)
            .await,
    );
    assert!(
        finalized
            .spec
            .and_then(|s| s.finalizers)
            .unwrap_or_default()
            .is_empty(),
        "finalizers cleared"
    );
    assert!(
        ok("get", namespaces.get_opt(&name).await).is_none(),
        "finalized namespace is gone"
    );
}

#[tokio::test]
async fn clientset_pod_resize() {
    let ctx = connect!("cs-resize");
    let cs = Clientset::new(ctx.client.clone());
    let pods = cs.core_v1().pods(&ctx.ns);
    let p: Pod = typed(json!({
        "metadata": {"name": "r"},
        "spec": {"containers": [{
            "name": "app", "image": "registry.invalid/app:1",
            "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}
        }]}
    }));
    ok("create", pods.create(&PostParams::default(), &p).await);
    let cpu_request = |pod: &Pod| {
        pod.spec
            .as_ref()
            .and_then(|s| s.containers.first())
            .and_then(|c| c.resources.as_ref())
            .and_then(|r| r.requests.as_ref())
            .and_then(|r| r.get("cpu"))
            .map(|q| q.0.clone())
    };
    let live = ok("get resize", pods.get_resize("r").await);
    assert_eq!(cpu_request(&live).as_deref(), Some("100m"));
    let resized = ok(
        "patch resize",
        pods.patch_resize(
            "r",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"containers": [
                {"name": "app", "resources": {"requests": {"cpu": "150m"}}}
            ]}})),
        )
        .await,
    );
    assert_eq!(cpu_request(&resized).as_deref(), Some("150m"));
    // Through /resize only resources change: the server keeps the old
    // image of a replaced pod and takes the new requests.
    let mut other = resized.clone();
    if let Some(c) = other.spec.as_mut().and_then(|s| s.containers.first_mut()) {
        c.image = Some("registry.invalid/app:2".into());
        if let Some(requests) = c.resources.as_mut().and_then(|r| r.requests.as_mut()) {
            requests.insert("cpu".into(), typed(json!("180m")));
        }
    }
    let replaced = ok(
        "replace resize",
        pods.replace_resize("r", &PostParams::default(), &other)
            .await,
    );
    assert_eq!(cpu_request(&replaced).as_deref(), Some("180m"));
    let image = replaced
        .spec
        .as_ref()
        .and_then(|s| s.containers.first())
        .and_then(|c| c.image.clone());
    assert_eq!(image.as_deref(), Some("registry.invalid/app:1"));
}

#[tokio::test]
async fn clientset_csr_approval() {
    use base64::Engine as _;
    use kubeset::api::certificates::v1::{
        CertificateSigningRequest, CertificateSigningRequestCondition,
        CertificateSigningRequestStatus,
    };

    let ctx = connect!("cs-csr");
    let csrs = Clientset::new(ctx.client.clone())
        .certificates_v1()
        .certificate_signing_requests();
    let key = rcgen::KeyPair::generate().expect("key");
    let request = rcgen::CertificateParams::new(vec!["worker.example".to_owned()])
        .expect("params")
        .serialize_request(&key)
        .expect("CSR")
        .pem()
        .expect("PEM");
    let name = format!("{}-csr", ctx.ns);
    let csr: CertificateSigningRequest = typed(json!({
        "metadata": {"name": name},
        "spec": {
            "request": base64::engine::general_purpose::STANDARD.encode(request),
            "signerName": "example.com/test-signer",
            "usages": ["digital signature", "client auth"],
        }
    }));
    let mut live = ok("create", csrs.create(&PostParams::default(), &csr).await);

    let condition = |type_: &str| CertificateSigningRequestCondition {
        type_: type_.to_owned(),
        status: "True".to_owned(),
        reason: Some("KubesetSuite".to_owned()),
        message: Some(format!("{type_} by the kubeset suite")),
        ..Default::default()
    };
    live.status = Some(CertificateSigningRequestStatus {
        conditions: Some(vec![condition("Approved")]),
        ..Default::default()
    });
    let approved = ok(
        "approve",
        csrs.replace_approval(&name, &PostParams::default(), &live)
            .await,
    );
    let types: Vec<String> = approved
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.type_)
        .collect();
    assert_eq!(types, ["Approved"]);
    let read = ok("get_approval", csrs.get_approval(&name).await);
    assert_eq!(
        read.status.and_then(|s| s.conditions).map(|c| c.len()),
        Some(1)
    );

    // Approved and Denied exclude each other: a typed 422.
    let mut both = approved;
    if let Some(status) = both.status.as_mut() {
        status
            .conditions
            .get_or_insert_with(Vec::new)
            .push(condition("Denied"));
    }
    let err = csrs
        .replace_approval(&name, &PostParams::default(), &both)
        .await
        .expect_err("Approved + Denied is invalid");
    assert_eq!(err.api_error().map(|e| e.code), Some(422), "{err:?}");

    ok("delete", csrs.delete(&name, &DeleteParams::default()).await);
}
