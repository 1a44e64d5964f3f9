//! Typed CRUD round trips on 24 kinds of 11 API groups: what was written
//! comes back unchanged (defaults allowed), replace is compare-and-swap,
//! delete makes the object go.

use std::collections::BTreeMap;

use kubeset::Api;
use kubeset::api::admissionregistration::v1::ValidatingAdmissionPolicy;
use kubeset::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use kubeset::api::autoscaling::v2::HorizontalPodAutoscaler;
use kubeset::api::batch::v1::{CronJob, Job};
use kubeset::api::coordination::v1::Lease;
use kubeset::api::core::v1::{
    ConfigMap, LimitRange, PersistentVolumeClaim, Pod, ResourceQuota, Secret, Service,
    ServiceAccount,
};
use kubeset::api::networking::v1::{Ingress, NetworkPolicy};
use kubeset::api::policy::v1::PodDisruptionBudget;
use kubeset::api::rbac::v1::{ClusterRole, Role, RoleBinding};
use kubeset::api::storage::v1::StorageClass;
use kubeset::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kubeset_tests::unique_name;
use serde_json::json;

use crate::common::{DeleteAnswer, connect, crud, relabel, typed};

fn report(kind: &str, answer: DeleteAnswer) {
    println!("DELETE {kind}: answered {answer:?}");
}

fn pod_template(app: &str) -> serde_json::Value {
    json!({
        "metadata": {"labels": {"app": app}},
        "spec": {
            "containers": [{"name": "app", "image": "registry.invalid/app:1", "args": ["serve"]}],
            "restartPolicy": "Always"
        }
    })
}

#[tokio::test]
async fn crud_core_v1() {
    let ctx = connect!("crud-core");
    let c = || ctx.client.clone();
    let ns = ctx.ns.as_str();

    let cm: ConfigMap = typed(json!({
        "metadata": {"name": "cm", "labels": {"a": "b"}, "annotations": {"note": "x"}},
        "data": {"k": "v", "empty": ""},
        "binaryData": {"bin": "AAEC"},
        "immutable": false
    }));
    let cms: Api<ConfigMap> = Api::namespaced(c(), ns);
    report("ConfigMap", crud(&cms, cm, relabel).await);

    let secret: Secret = typed(json!({
        "metadata": {"name": "secret"},
        "type": "Opaque",
        "data": {"password": "aHVudGVyMg=="}
    }));
    report(
        "Secret",
        crud(&Api::<Secret>::namespaced(c(), ns), secret, relabel).await,
    );

    let svc: Service = typed(json!({
        "metadata": {"name": "svc"},
        "spec": {
            "type": "ClusterIP",
            "selector": {"app": "web"},
            "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"},
                      {"name": "named", "port": 81, "targetPort": "metrics"}]
        }
    }));
    report(
        "Service",
        crud(
            &Api::<Service>::namespaced(c(), ns),
            svc,
            |s: &mut Service| {
                if let Some(spec) = s.spec.as_mut() {
                    spec.selector = Some(BTreeMap::from([("app".to_owned(), "api".to_owned())]));
                }
            },
        )
        .await,
    );

    let sa: ServiceAccount = typed(json!({
        "metadata": {"name": "sa"},
        "automountServiceAccountToken": false
    }));
    report(
        "ServiceAccount",
        crud(&Api::<ServiceAccount>::namespaced(c(), ns), sa, relabel).await,
    );

    let pod: Pod = typed(json!({
        "metadata": {"name": "pod", "labels": {"app": "web"}},
        "spec": {
            "containers": [{
                "name": "app",
                "image": "registry.invalid/app:1",
                "env": [{"name": "A", "value": "1"}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}}
            }],
            "terminationGracePeriodSeconds": 0
        }
    }));
    report(
        "Pod",
        crud(&Api::<Pod>::namespaced(c(), ns), pod, |p: &mut Pod| {
            // The image is one of the few mutable fields of a pod's spec.
            if let Some(spec) = p.spec.as_mut() {
                spec.containers[0].image = Some("registry.invalid/app:2".to_owned());
            }
        })
        .await,
    );

    let pvc: PersistentVolumeClaim = typed(json!({
        "metadata": {"name": "pvc"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "none",
            "resources": {"requests": {"storage": "1Gi"}}
        }
    }));
    report(
        "PersistentVolumeClaim",
        crud(
            &Api::<PersistentVolumeClaim>::namespaced(c(), ns),
            pvc,
            relabel,
        )
        .await,
    );

    let lr: LimitRange = typed(json!({
        "metadata": {"name": "limits"},
        "spec": {"limits": [{"type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "250m"}}]}
    }));
    report(
        "LimitRange",
        crud(&Api::<LimitRange>::namespaced(c(), ns), lr, relabel).await,
    );

    // Last: without a quota controller its status stays empty.
    let rq: ResourceQuota = typed(json!({
        "metadata": {"name": "quota"},
        "spec": {"hard": {"pods": "10", "requests.cpu": "2"}}
    }));
    report(
        "ResourceQuota",
        crud(&Api::<ResourceQuota>::namespaced(c(), ns), rq, relabel).await,
    );
}

#[tokio::test]
async fn crud_apps_v1() {
    let ctx = connect!("crud-apps");
    let ns = ctx.ns.as_str();

    let deploy: Deployment = typed(json!({
        "metadata": {"name": "deploy"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "deploy"}},
            "template": pod_template("deploy"),
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "25%"}}
        }
    }));
    report(
        "Deployment",
        crud(
            &Api::<Deployment>::namespaced(ctx.client.clone(), ns),
            deploy,
            |d: &mut Deployment| {
                if let Some(spec) = d.spec.as_mut() {
                    spec.replicas = Some(3);
                }
            },
        )
        .await,
    );

    let sts: StatefulSet = typed(json!({
        "metadata": {"name": "sts"},
        "spec": {
            "replicas": 1,
            "serviceName": "sts",
            "selector": {"matchLabels": {"app": "sts"}},
            "template": pod_template("sts"),
            "volumeClaimTemplates": [{
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
            }]
        }
    }));
    report(
        "StatefulSet",
        crud(
            &Api::<StatefulSet>::namespaced(ctx.client.clone(), ns),
            sts,
            relabel,
        )
        .await,
    );

    let ds: DaemonSet = typed(json!({
        "metadata": {"name": "ds"},
        "spec": {
            "selector": {"matchLabels": {"app": "ds"}},
            "template": pod_template("ds"),
            "updateStrategy": {"type": "OnDelete"}
        }
    }));
    report(
        "DaemonSet",
        crud(
            &Api::<DaemonSet>::namespaced(ctx.client.clone(), ns),
            ds,
            relabel,
        )
        .await,
    );
}

#[tokio::test]
async fn crud_batch_v1() {
    let ctx = connect!("crud-batch");
    let ns = ctx.ns.as_str();
    let job_spec = json!({
        "backoffLimit": 2,
        "template": {
            "metadata": {"labels": {"app": "job"}},
            "spec": {
                "containers": [{"name": "run", "image": "registry.invalid/job:1", "command": ["true"]}],
                "restartPolicy": "Never"
            }
        }
    });
    let job: Job = typed(json!({"metadata": {"name": "job"}, "spec": job_spec}));
    report(
        "Job",
        crud(
            &Api::<Job>::namespaced(ctx.client.clone(), ns),
            job,
            relabel,
        )
        .await,
    );

    let cron: CronJob = typed(json!({
        "metadata": {"name": "cron"},
        "spec": {
            "schedule": "*/5 * * * *",
            "concurrencyPolicy": "Forbid",
            "jobTemplate": {"spec": job_spec}
        }
    }));
    report(
        "CronJob",
        crud(
            &Api::<CronJob>::namespaced(ctx.client.clone(), ns),
            cron,
            |c: &mut CronJob| {
                if let Some(spec) = c.spec.as_mut() {
                    spec.suspend = Some(true);
                }
            },
        )
        .await,
    );
}

#[tokio::test]
async fn crud_rbac_v1() {
    let ctx = connect!("crud-rbac");
    let ns = ctx.ns.as_str();
    let rules = json!([
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["apps"], "resources": ["deployments/scale"], "verbs": ["update"], "resourceNames": ["web"]}
    ]);
    let role: Role = typed(json!({"metadata": {"name": "reader"}, "rules": rules}));
    report(
        "Role",
        crud(
            &Api::<Role>::namespaced(ctx.client.clone(), ns),
            role,
            relabel,
        )
        .await,
    );

    let binding: RoleBinding = typed(json!({
        "metadata": {"name": "reader-binding"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
        "subjects": [
            {"kind": "ServiceAccount", "name": "default", "namespace": ns},
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "kubeset:readers"}
        ]
    }));
    report(
        "RoleBinding",
        crud(
            &Api::<RoleBinding>::namespaced(ctx.client.clone(), ns),
            binding,
            relabel,
        )
        .await,
    );

    let cr: ClusterRole = typed(json!({
        "metadata": {"name": unique_name("kubeset-suite-cr")},
        "rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]
    }));
    report(
        "ClusterRole",
        crud(
            &Api::<ClusterRole>::cluster(ctx.client.clone()),
            cr,
            relabel,
        )
        .await,
    );
}

#[tokio::test]
async fn crud_networking_policy_coordination() {
    let ctx = connect!("crud-net");
    let ns = ctx.ns.as_str();

    let np: NetworkPolicy = typed(json!({
        "metadata": {"name": "np"},
        "spec": {
            "podSelector": {"matchLabels": {"app": "db"}},
            "policyTypes": ["Ingress"],
            "ingress": [{
                "from": [{"podSelector": {"matchLabels": {"app": "web"}}}, {"ipBlock": {"cidr": "10.1.0.0/16", "except": ["10.1.2.0/24"]}}],
                "ports": [{"protocol": "TCP", "port": 5432}]
            }]
        }
    }));
    report(
        "NetworkPolicy",
        crud(
            &Api::<NetworkPolicy>::namespaced(ctx.client.clone(), ns),
            np,
            relabel,
        )
        .await,
    );

    let ing: Ingress = typed(json!({
        "metadata": {"name": "ing"},
        "spec": {
            "rules": [{
                "host": "web.example.com",
                "http": {"paths": [{
                    "path": "/",
                    "pathType": "Prefix",
                    "backend": {"service": {"name": "web", "port": {"number": 80}}}
                }]}
            }]
        }
    }));
    report(
        "Ingress",
        crud(
            &Api::<Ingress>::namespaced(ctx.client.clone(), ns),
            ing,
            relabel,
        )
        .await,
    );

    let pdb: PodDisruptionBudget = typed(json!({
        "metadata": {"name": "pdb"},
        "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}
    }));
    report(
        "PodDisruptionBudget",
        crud(
            &Api::<PodDisruptionBudget>::namespaced(ctx.client.clone(), ns),
            pdb,
            relabel,
        )
        .await,
    );

    let lease: Lease = typed(json!({
        "metadata": {"name": "lease"},
        "spec": {"holderIdentity": "suite", "leaseDurationSeconds": 15, "leaseTransitions": 0}
    }));
    report(
        "Lease",
        crud(
            &Api::<Lease>::namespaced(ctx.client.clone(), ns),
            lease,
            |l: &mut Lease| {
                if let Some(spec) = l.spec.as_mut() {
                    spec.holder_identity = Some("other".to_owned());
                    spec.lease_transitions = Some(1);
                }
            },
        )
        .await,
    );
}

#[tokio::test]
async fn crud_storage_autoscaling_admission_apiextensions() {
    let ctx = connect!("crud-cluster");
    let ns = ctx.ns.as_str();

    let sc: StorageClass = typed(json!({
        "metadata": {"name": unique_name("kubeset-suite-sc")},
        "provisioner": "example.com/none",
        "parameters": {"tier": "gold"},
        "reclaimPolicy": "Retain",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": true,
        "mountOptions": ["ro"]
    }));
    report(
        "StorageClass",
        crud(
            &Api::<StorageClass>::cluster(ctx.client.clone()),
            sc,
            relabel,
        )
        .await,
    );

    let hpa: HorizontalPodAutoscaler = typed(json!({
        "metadata": {"name": "hpa"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 5,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
        }
    }));
    report(
        "HorizontalPodAutoscaler",
        crud(
            &Api::<HorizontalPodAutoscaler>::namespaced(ctx.client.clone(), ns),
            hpa,
            |h: &mut HorizontalPodAutoscaler| {
                if let Some(spec) = h.spec.as_mut() {
                    spec.max_replicas = 7;
                }
            },
        )
        .await,
    );

    // Without a binding the policy admits everything: harmless to others.
    let vap: ValidatingAdmissionPolicy = typed(json!({
        "metadata": {"name": unique_name("kubeset-suite-vap")},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{
                "apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]
            }]},
            "validations": [{"expression": "object.metadata.name != 'forbidden'", "message": "no"}]
        }
    }));
    report(
        "ValidatingAdmissionPolicy",
        crud(
            &Api::<ValidatingAdmissionPolicy>::cluster(ctx.client.clone()),
            vap,
            relabel,
        )
        .await,
    );

    let group = format!("{}.kubeset.dev", unique_name("g"));
    let crd: CustomResourceDefinition = typed(json!({
        "metadata": {"name": format!("things.{group}")},
        "spec": {
            "group": group,
            "names": {"kind": "Thing", "plural": "things", "singular": "thing", "listKind": "ThingList"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}
                }}}
            }]
        }
    }));
    report(
        "CustomResourceDefinition",
        crud(
            &Api::<CustomResourceDefinition>::cluster(ctx.client.clone()),
            crd,
            relabel,
        )
        .await,
    );
}
