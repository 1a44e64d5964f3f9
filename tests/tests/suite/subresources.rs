//! Subresources (status, scale, eviction, binding) and a Lease renewed as
//! a leader elector does.

use kubeset::api::apps::v1::Deployment;
use kubeset::api::autoscaling::v1::Scale;
use kubeset::api::coordination::v1::Lease;
use kubeset::api::core::v1::{Binding, Pod};
use kubeset::api::policy::v1::{Eviction, PodDisruptionBudget};
use kubeset::apimachinery::pkg::apis::meta::v1::MicroTime;
use kubeset::params::{DeleteParams, PatchParams, PostParams};
use kubeset::rest::Verb;
use kubeset::{Api, Patch};
use serde_json::json;

use crate::common::{connect, ok, typed};

fn deployment(name: &str, replicas: i32) -> Deployment {
    typed(json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "registry.invalid/app:1"}]}
            }
        }
    }))
}

fn spec_replicas(d: &Deployment) -> Option<i32> {
    d.spec.as_ref().and_then(|s| s.replicas)
}

fn status_replicas(d: &Deployment) -> Option<i32> {
    d.status.as_ref().and_then(|s| s.replicas)
}

#[tokio::test]
async fn status_subresource_is_separate_from_the_main_resource() {
    let ctx = connect!("status");
    let deploys: Api<Deployment> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    ok(
        "create",
        deploys
            .create(&PostParams::default(), &deployment("web", 2))
            .await,
    );

    // Through /status: status changes, spec changes are ignored.
    let d = ok(
        "patch status",
        deploys
            .patch_status(
                "web",
                &PatchParams::default(),
                &Patch::Merge(json!({
                    "spec": {"replicas": 9},
                    "status": {"replicas": 2, "readyReplicas": 1, "observedGeneration": 1}
                })),
            )
            .await,
    );
    assert_eq!(status_replicas(&d), Some(2));
    assert_eq!(
        spec_replicas(&d),
        Some(2),
        "spec is ignored through /status"
    );

    // Through the main resource: status changes are ignored.
    let d = ok(
        "patch main",
        deploys
            .patch(
                "web",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"replicas": 3}, "status": {"replicas": 7}})),
            )
            .await,
    );
    assert_eq!(spec_replicas(&d), Some(3));
    assert_eq!(
        status_replicas(&d),
        Some(2),
        "status is ignored through the main resource"
    );

    // replace_status with the object read through get_status.
    let mut d = ok("get status", deploys.get_status("web").await);
    if let Some(s) = d.status.as_mut() {
        s.ready_replicas = Some(2);
    }
    let d = ok(
        "replace status",
        deploys
            .replace_status("web", &PostParams::default(), &d)
            .await,
    );
    assert_eq!(d.status.and_then(|s| s.ready_replicas), Some(2));
}

#[tokio::test]
async fn scale_subresource_reads_and_writes_replicas() {
    let ctx = connect!("scale");
    let deploys: Api<Deployment> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    ok(
        "create",
        deploys
            .create(&PostParams::default(), &deployment("web", 2))
            .await,
    );
    let scale: Scale = ok("get scale", deploys.get_subresource("scale", "web").await);
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(2));
    assert_eq!(
        scale.status.as_ref().and_then(|s| s.selector.as_deref()),
        Some("app=web")
    );

    let scale: Scale = ok(
        "patch scale",
        deploys
            .patch_subresource(
                "scale",
                "web",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"replicas": 4}})),
            )
            .await,
    );
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(4));
    assert_eq!(spec_replicas(&ok("get", deploys.get("web").await)), Some(4));

    let mut body = scale.clone();
    body.spec.get_or_insert_with(Default::default).replicas = Some(5);
    let scale: Scale = ok(
        "replace scale",
        deploys
            .replace_subresource("scale", "web", &PostParams::default(), &body)
            .await,
    );
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(5));
    assert_eq!(spec_replicas(&ok("get", deploys.get("web").await)), Some(5));

    // The scale's resourceVersion is the deployment's: a stale one conflicts.
    let stale: Result<Scale, _> = deploys
        .replace_subresource("scale", "web", &PostParams::default(), &body)
        .await;
    assert!(
        stale.as_ref().is_err_and(kubeset::Error::is_conflict),
        "{stale:?}"
    );
}

fn pod(name: &str, app: &str) -> Pod {
    typed(json!({
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"containers": [{"name": "c", "image": "registry.invalid/c:1"}]}
    }))
}

fn eviction(name: &str) -> Eviction {
    typed(json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}))
}

#[tokio::test]
async fn pod_binding_and_eviction_without_nodes() {
    let ctx = connect!("evict");
    let pods: Api<Pod> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    ok(
        "create",
        pods.create(&PostParams::default(), &pod("bound", "a"))
            .await,
    );
    ok(
        "create",
        pods.create(&PostParams::default(), &pod("free", "b")).await,
    );

    // Binding: what a scheduler does; the node need not exist.
    let binding: Binding = typed(json!({
        "apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": "bound"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "node-that-does-not-exist"}
    }));
    let answer: serde_json::Value = ok(
        "binding",
        pods.create_subresource("binding", "bound", &PostParams::default(), &binding)
            .await,
    );
    assert_eq!(answer["status"], "Success", "{answer}");
    let bound = ok("get", pods.get("bound").await);
    assert_eq!(
        bound.spec.as_ref().and_then(|s| s.node_name.as_deref()),
        Some("node-that-does-not-exist")
    );
    // A second binding is refused: the pod is already assigned.
    let again: Result<serde_json::Value, _> = pods
        .create_subresource("binding", "bound", &PostParams::default(), &binding)
        .await;
    assert!(
        again.as_ref().is_err_and(kubeset::Error::is_conflict),
        "{again:?}"
    );

    // Evicting an unscheduled pod deletes it at once.
    let _: serde_json::Value = ok(
        "evict free",
        pods.create_subresource(
            "eviction",
            "free",
            &PostParams::default(),
            &eviction("free"),
        )
        .await,
    );
    assert!(ok("get", pods.get_opt("free").await).is_none());

    // A scheduled one waits for its kubelet (there is none): Terminating.
    let _: serde_json::Value = ok(
        "evict bound",
        pods.create_subresource(
            "eviction",
            "bound",
            &PostParams::default(),
            &eviction("bound"),
        )
        .await,
    );
    let terminating = ok("get", pods.get("bound").await);
    assert!(terminating.metadata.deletion_timestamp.is_some());
    ok(
        "force delete",
        pods.delete(
            "bound",
            &DeleteParams::default().grace_period(std::time::Duration::ZERO),
        )
        .await,
    );
    assert!(ok("get", pods.get_opt("bound").await).is_none());

    // A PodDisruptionBudget the (absent) disruption controller never
    // processed blocks the eviction of a running pod (pending ones may
    // always go): 429, typed. No retries for this call.
    let pdbs: Api<PodDisruptionBudget> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let pdb: PodDisruptionBudget = typed(json!({
        "metadata": {"name": "guard"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}
    }));
    ok(
        "create pdb",
        pdbs.create(&PostParams::default(), &pdb).await,
    );
    ok(
        "create",
        pods.create(&PostParams::default(), &pod("guarded", "guarded"))
            .await,
    );
    let running = ok(
        "mark running",
        pods.patch_status(
            "guarded",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Running"}})),
        )
        .await,
    );
    assert_eq!(
        running.status.and_then(|s| s.phase).as_deref(),
        Some("Running")
    );
    let err = pods
        .request(Verb::Post, Some("guarded"))
        .sub_resource(["eviction"])
        .json_body(&eviction("guarded"))
        .max_retries(0)
        .send()
        .await
        .expect_err("eviction must be refused by the budget");
    assert!(err.is_too_many_requests(), "{err}");
    println!("eviction blocked by a PDB: {err}");
    assert!(ok("get", pods.get_opt("guarded").await).is_some());
}

#[tokio::test]
async fn lease_create_and_renew_like_a_leader() {
    let ctx = connect!("lease");
    let leases: Api<Lease> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let now = MicroTime::now();
    let lease: Lease = typed(json!({
        "metadata": {"name": "leader"},
        "spec": {
            "holderIdentity": "candidate-a",
            "leaseDurationSeconds": 15,
            "acquireTime": now,
            "renewTime": now,
            "leaseTransitions": 0
        }
    }));
    let created = ok(
        "acquire",
        leases.create(&PostParams::default(), &lease).await,
    );
    let spec = created.spec.clone().unwrap_or_default();
    assert_eq!(
        serde_json::to_value(spec.renew_time).ok(),
        serde_json::to_value(Some(&now)).ok(),
        "renewTime round-trips at microsecond precision"
    );

    // A second candidate cannot create it.
    let err = leases
        .create(&PostParams::default(), &lease)
        .await
        .expect_err("already held");
    assert!(err.is_already_exists(), "{err}");

    // Renew: replace with the read resourceVersion (compare-and-swap).
    let mut renew = created.clone();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let later = MicroTime::now();
    renew.spec.get_or_insert_with(Default::default).renew_time = Some(later);
    let renewed = ok(
        "renew",
        leases
            .replace("leader", &PostParams::default(), &renew)
            .await,
    );
    let renewed_spec = renewed.spec.clone().unwrap_or_default();
    assert_eq!(
        serde_json::to_value(renewed_spec.renew_time).ok(),
        serde_json::to_value(Some(&later)).ok()
    );
    assert!(
        renewed_spec.renew_time > spec.renew_time,
        "renewTime moved forward"
    );

    // Candidate b, with the stale copy, loses the race.
    let mut takeover = created.clone();
    let spec_b = takeover.spec.get_or_insert_with(Default::default);
    spec_b.holder_identity = Some("candidate-b".to_owned());
    spec_b.lease_transitions = Some(1);
    let err = leases
        .replace("leader", &PostParams::default(), &takeover)
        .await
        .expect_err("stale takeover");
    assert!(err.is_conflict(), "{err}");

    // With the current copy it takes over.
    let mut takeover = renewed.clone();
    let spec_b = takeover.spec.get_or_insert_with(Default::default);
    spec_b.holder_identity = Some("candidate-b".to_owned());
    spec_b.lease_transitions = Some(1);
    spec_b.acquire_time = Some(MicroTime::now());
    let taken = ok(
        "takeover",
        leases
            .replace("leader", &PostParams::default(), &takeover)
            .await,
    );
    let taken = taken.spec.unwrap_or_default();
    assert_eq!(taken.holder_identity.as_deref(), Some("candidate-b"));
    assert_eq!(taken.lease_transitions, Some(1));
}
