//! The apply scenarios with the generated apply types (`DeploymentApply`,
//! `ContainerApply`, …) and a `#[derive(CustomResource)]` kind's
//! `FooApply` instead of `json!` blobs; run against both servers with the
//! JSON ones (`apply_scenarios/mod.rs`). Needs kubeset-api's `apply`.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{k, ok};
use k::api::apps::v1::{Deployment, DeploymentApply, DeploymentSpecApply};
use k::api::core::v1::{ContainerApply, PodSpecApply, PodTemplateSpecApply};
use k::apimachinery::pkg::apis::meta::v1::{LabelSelectorApply, ObjectMetaApply};
use k::apply::{Subresource, extract, extract_value};
use k::params::ApplyParams;
use k::{Api, Client, CustomResourceExt};

/// What manager A applies: name, namespace, optionally one label, the
/// selector, the template's labels and one container's name and image.
fn a_config(name: &str, ns: &str, image: &str, with_label: bool) -> DeploymentApply {
    let template = PodTemplateSpecApply::default()
        .with_metadata(ObjectMetaApply::default().with_labels([("app", name)]))
        .with_spec(
            PodSpecApply::default().with_containers([ContainerApply::new("app").with_image(image)]),
        );
    let cfg = DeploymentApply::new(name, ns).with_spec(
        DeploymentSpecApply::default()
            .with_selector(LabelSelectorApply::default().with_match_labels([("app", name)]))
            .with_template(template),
    );
    if with_label {
        cfg.with_label("owner-a", "yes")
    } else {
        cfg
    }
}

fn image(d: &Deployment) -> Option<String> {
    d.spec.as_ref()?.template.spec.as_ref()?.containers[0]
        .image
        .clone()
}

/// The first container of an apply configuration's template.
fn first_container(cfg: &mut DeploymentApply) -> &mut ContainerApply {
    cfg.spec
        .as_mut()
        .and_then(|s| s.template.as_mut())
        .and_then(|t| t.spec.as_mut())
        .and_then(|s| s.containers.as_mut())
        .and_then(|c| c.first_mut())
        .expect("the extracted configuration has A's container")
}

/// A applies with `DeploymentApply`, B applies replicas; A extracts its
/// configuration as a `DeploymentApply` (equal to what it applied),
/// changes the image with a builder and applies: B's replicas and the
/// fields nobody applied stay. Then A applies without its label: the
/// label is removed, B's replicas stay.
pub async fn typed_extract_change_apply(client: Client, ns: &str) {
    let d: Api<Deployment> = Api::namespaced(client, ns);
    let name = "typed-extract";
    let a = ApplyParams::new("a");
    ok(
        "A applies",
        d.apply(name, &a_config(name, ns, "nginx:1", true), &a)
            .await,
    );
    let b_cfg =
        DeploymentApply::new(name, ns).with_spec(DeploymentSpecApply::default().with_replicas(3));
    let live = ok(
        "B applies",
        d.apply(name, &b_cfg, &ApplyParams::new("b")).await,
    );
    let defaults = live
        .spec
        .as_ref()
        .map(|s| (s.strategy.clone(), s.revision_history_limit));

    let mut mine: DeploymentApply = ok("A extracts", extract(&live, "a", Subresource::Main));
    assert_eq!(mine, a_config(name, ns, "nginx:1", true));
    let theirs: DeploymentApply = ok("B extracts", extract(&live, "b", Subresource::Main));
    assert_eq!(theirs, b_cfg);

    let container = first_container(&mut mine);
    *container = std::mem::take(container).with_image("nginx:2");
    let live = ok("A applies the change", d.apply(name, &mine, &a).await);
    assert_eq!(image(&live).as_deref(), Some("nginx:2"));
    let spec = live.spec.as_ref().expect("a spec");
    assert_eq!(spec.replicas, Some(3), "B's replicas");
    assert_eq!(
        Some((spec.strategy.clone(), spec.revision_history_limit)),
        defaults,
        "fields nobody applied"
    );
    let label = live.metadata.labels.as_ref().and_then(|l| l.get("owner-a"));
    assert_eq!(label.map(String::as_str), Some("yes"));
    let again: DeploymentApply = ok("A extracts again", extract(&live, "a", Subresource::Main));
    assert_eq!(again, a_config(name, ns, "nginx:2", true));

    let live = ok(
        "A applies without its label",
        d.apply(name, &a_config(name, ns, "nginx:2", false), &a)
            .await,
    );
    assert_eq!(live.metadata.labels, None, "A's label is removed");
    assert_eq!(live.spec.as_ref().and_then(|s| s.replicas), Some(3));
    let after: DeploymentApply = ok("A extracts", extract(&live, "a", Subresource::Main));
    assert_eq!(after, a_config(name, ns, "nginx:2", false));
}

/// A Deployment with the fields controllers commonly set: metadata labels
/// and annotations, replicas, strategy, selector, and a template with two
/// containers (ports, env, resources, probes, mounts, security context),
/// volumes, tolerations, node selector and affinity.
fn rich_config(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name, "tier": "web"},
                     "annotations": {"note": "rich"}},
        "spec": {
            "replicas": 2,
            "minReadySeconds": 5,
            "revisionHistoryLimit": 4,
            "progressDeadlineSeconds": 120,
            "strategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxSurge": "50%", "maxUnavailable": 1}},
            "selector": {"matchLabels": {"app": name},
                         "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]},
            "template": {
                "metadata": {"labels": {"app": name, "tier": "web"},
                             "annotations": {"checksum": "abc"}},
                "spec": {
                    "serviceAccountName": "default",
                    "terminationGracePeriodSeconds": 10,
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "tolerations": [{"key": "k", "operator": "Equal", "value": "v",
                                     "effect": "NoSchedule"}],
                    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 10, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                            "labelSelector": {"matchLabels": {"app": name}}}}]}},
                    "securityContext": {"runAsNonRoot": true, "runAsUser": 1000, "fsGroup": 2000},
                    "volumes": [
                        {"name": "config", "configMap": {"name": "cfg", "defaultMode": 420,
                            "items": [{"key": "a", "path": "a.txt"}]}},
                        {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}}
                    ],
                    "initContainers": [{"name": "init", "image": "busybox:1", "command": ["true"]}],
                    "containers": containers(),
                }
            }
        }
    })
}

/// The containers of [`rich_config`].
fn containers() -> Value {
    let app = json!({"name": "app", "image": "nginx:1", "imagePullPolicy": "IfNotPresent",
                         "args": ["--port", "8080"],
                         "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                         "env": [{"name": "MODE", "value": "prod"},
                                 {"name": "POD", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
                         "envFrom": [{"configMapRef": {"name": "cfg"}}],
                         "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                       "limits": {"cpu": "1", "memory": "128Mi"}},
                         "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080},
                                            "periodSeconds": 5, "failureThreshold": 3},
                         "livenessProbe": {"tcpSocket": {"port": "http"}, "initialDelaySeconds": 3},
                         "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": true},
                                          {"name": "scratch", "mountPath": "/tmp"}],
                         "securityContext": {"allowPrivilegeEscalation": false,
                                             "capabilities": {"drop": ["ALL"]}}});
    let sidecar = json!({"name": "sidecar", "image": "busybox:1",
                         "command": ["sh", "-c", "sleep 3600"],
                         "lifecycle": {"preStop": {"exec": {"command": ["true"]}}}});
    json!([app, sidecar])
}

/// `extract` of a Deployment with every common field, read as a
/// `DeploymentApply` and written back, is the same JSON; and it is what
/// was applied.
pub async fn typed_round_trip(client: Client, ns: &str) {
    let d: Api<Deployment> = Api::namespaced(client, ns);
    let name = "typed-round-trip";
    let cfg = rich_config(name);
    let live = ok(
        "the rich apply",
        d.apply(name, &cfg, &ApplyParams::new("rich")).await,
    );
    let live = ok("serializes", serde_json::to_value(&live));
    let extracted = ok("extract", extract_value(&live, "rich", Subresource::Main));
    let mut expected = cfg;
    expected["metadata"]["namespace"] = json!(ns);
    assert_eq!(extracted, expected, "extract gives back what was applied");
    let typed: DeploymentApply = ok("reads", serde_json::from_value(extracted.clone()));
    let back = ok("writes", serde_json::to_value(&typed));
    assert_eq!(
        back, extracted,
        "DeploymentApply round-trips extract's output"
    );
}

/// A kind defined in Rust; the derive writes `SprocketApply`.
#[derive(k::CustomResource, k::JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(crates(kubeset = "k"))]
#[schema(crate = "k")]
#[kube(
    group = "typed.apply.kubeset.dev",
    version = "v1",
    kind = "Sprocket",
    namespaced
)]
#[kube(status = "SprocketStatus")]
pub struct SprocketSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    color: Option<String>,
}

/// The status of a [`Sprocket`].
#[derive(k::JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[schema(crate = "k")]
pub struct SprocketStatus {
    phase: Option<String>,
}

/// A partial spec: only the field its manager owns.
#[derive(Serialize)]
struct ColorOnly<'a> {
    color: &'a str,
}

/// The derive's `SprocketApply`: the owner applies `size`, a painter
/// `color` (through `try_with_spec` of a partial struct), a status
/// manager the status through `apply_status`; each extracts exactly its
/// configuration as a `SprocketApply`, and the owner dropping `size`
/// leaves the painter's `color`.
pub async fn derived_apply(client: Client, ns: &str) {
    super::ensure_crd(&client, &Sprocket::crd()).await;
    let sprockets: Api<Sprocket> = Api::namespaced(client, ns);
    super::served(&sprockets).await;
    let name = "s1";
    let owner_cfg = SprocketApply::new(name, ns)
        .with_label("team", "a")
        .with_spec(json!({"size": 2}));
    ok(
        "the owner applies",
        sprockets
            .apply(name, &owner_cfg, &ApplyParams::new("owner"))
            .await,
    );
    let painter_cfg = ok(
        "the partial spec",
        SprocketApply::new(name, ns).try_with_spec(&ColorOnly { color: "red" }),
    );
    ok(
        "the painter applies",
        sprockets
            .apply(name, &painter_cfg, &ApplyParams::new("painter"))
            .await,
    );
    let status_cfg = SprocketApply::new(name, ns).with_status(json!({"phase": "Ready"}));
    let live = ok(
        "the status applies",
        sprockets
            .apply_status(name, &status_cfg, &ApplyParams::new("status"))
            .await,
    );
    assert_eq!(live.spec.size, Some(2));
    assert_eq!(live.spec.color.as_deref(), Some("red"));
    assert_eq!(
        live.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Ready")
    );
    let owner: SprocketApply = ok("owner extracts", extract(&live, "owner", Subresource::Main));
    assert_eq!(owner, owner_cfg);
    let painter: SprocketApply = ok(
        "painter extracts",
        extract(&live, "painter", Subresource::Main),
    );
    assert_eq!(painter, painter_cfg);
    let status: SprocketApply = ok(
        "status extracts",
        extract(&live, "status", Subresource::Status),
    );
    assert_eq!(status, status_cfg);

    // The owner applies without `size` (the CRD does not require it): it is removed.
    let live = ok(
        "the owner drops size",
        sprockets
            .apply(
                name,
                &SprocketApply::new(name, ns).with_spec(json!({})),
                &ApplyParams::new("owner"),
            )
            .await,
    );
    let spec = ok("the live spec", serde_json::to_value(&live.spec));
    assert_eq!(spec, json!({"color": "red"}), "size removed, color kept");
}
