//! Controllers-lite (opt-in, [`crate::TestServerBuilder::controllers`]):
//! what tests and `kubectl rollout status` / `kubectl wait` need from
//! kube-controller-manager, none of its scheduling or retries.
//!
//! One task wakes on every write and runs a pass until nothing changes:
//! - Deployment → one ReplicaSet per pod template (`<name>-<hash>`, label
//!   `pod-template-hash`), the newest scaled to `spec.replicas` and older
//!   ones to 0 (a rollout in one step), status (`replicas`,
//!   `updatedReplicas`, `readyReplicas`, `availableReplicas`,
//!   `observedGeneration`, `Available` and `Progressing` conditions) and
//!   `ScalingReplicaSet` events;
//! - ReplicaSet → Pods (`SuccessfulCreate`/`SuccessfulDelete` events) and
//!   its status;
//! - Pods are marked `Running` and ready (no container runs);
//! - Jobs complete at once (`succeeded = completions`, `Complete`);
//! - garbage collection: an object whose every owner (by uid) is gone is
//!   deleted (background propagation); owners deleted in the foreground
//!   or with orphaning are finished by [`crate::gc::propagate`].

use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::apply::Scope;
use crate::deletion::DeleteOptions;
use crate::resources::Resource;
use crate::selectors::{FieldSelector, LabelSelector};
use crate::store::{Store, WriteCtx};
use crate::util;

/// Passes per wake-up before waiting for the next write (a pass that
/// changes something wakes the loop again anyway).
const MAX_PASSES: usize = 8;

/// Runs until `cancel`.
pub(crate) async fn run(store: Arc<Store>, cancel: CancellationToken) {
    let mut rx = store.subscribe();
    loop {
        for _ in 0..MAX_PASSES {
            if !pass(&store) {
                break;
            }
        }
        tokio::select! {
            () = cancel.cancelled() => return,
            changed = rx.changed() => if changed.is_err() { return },
        }
    }
}

fn ctx(manager: &str) -> WriteCtx {
    WriteCtx {
        manager: manager.to_owned(),
        dry_run: false,
        applied: false,
        admission: crate::admission::Options::default(),
    }
}

fn res(store: &Store, group: &str, plural: &str) -> Option<Arc<Resource>> {
    store.lookup(group, "v1", plural)
}

fn all(store: &Store, r: &Resource) -> Vec<Value> {
    store
        .list_all(
            r,
            None,
            &LabelSelector::default(),
            &FieldSelector::default(),
        )
        .0
}

/// The objects of `r` not being deleted, each with the replicas it wants
/// (`spec.replicas`, 1 when unset).
fn scaled(store: &Store, r: &Resource) -> Vec<(Value, i64)> {
    all(store, r)
        .into_iter()
        .filter(|o| o.pointer("/metadata/deletionTimestamp").is_none())
        .map(|o| {
            let want = o
                .pointer("/spec/replicas")
                .and_then(Value::as_i64)
                .unwrap_or(1);
            (o, want)
        })
        .collect()
}

fn meta<'a>(o: &'a Value, k: &str) -> &'a str {
    o.pointer(&format!("/metadata/{k}"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn owned_by<'a>(items: &'a [Value], owner_uid: &str) -> Vec<&'a Value> {
    items
        .iter()
        .filter(|o| {
            o.pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .is_some_and(|refs| refs.iter().any(|r| r["uid"] == owner_uid))
        })
        .collect()
}

fn owner_ref(o: &Value, api_version: &str, kind: &str) -> Value {
    json!([{"apiVersion": api_version, "kind": kind, "name": meta(o, "name"), "uid": meta(o, "uid"),
            "controller": true, "blockOwnerDeletion": true}])
}

/// One pass over every controller; whether it wrote anything.
fn pass(store: &Store) -> bool {
    let mut changed = false;
    changed |= deployments(store);
    changed |= replicasets(store);
    changed |= pods(store);
    changed |= jobs(store);
    changed |= garbage_collect(store);
    changed |= crate::gc::propagate(store);
    changed |= namespaces(store);
    changed
}

/// Records an Event as the named controller.
fn event(
    store: &Store,
    involved: &Value,
    kind: &str,
    reason: &str,
    message: String,
    component: &str,
) {
    let Some(r) = res(store, "", "events") else {
        return;
    };
    let now = util::now_rfc3339();
    let ns = meta(involved, "namespace");
    let ev = json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("{}.{}", meta(involved, "name"), util::name_suffix()), "namespace": ns},
        "involvedObject": {"kind": kind, "namespace": ns, "name": meta(involved, "name"), "uid": meta(involved, "uid"),
            "apiVersion": involved["apiVersion"], "resourceVersion": meta(involved, "resourceVersion")},
        "reason": reason, "message": message, "type": "Normal", "count": 1,
        "source": {"component": component}, "reportingComponent": component, "reportingInstance": "",
        "firstTimestamp": now, "lastTimestamp": now, "eventTime": null});
    let _ = store.create(&r, ns, ev, &ctx(component));
}

/// Writes `status` on `o` (a no-op when unchanged); whether it changed.
fn set_status(store: &Store, r: &Resource, o: &Value, status: Value, manager: &str) -> bool {
    if o.get("status") == Some(&status) {
        return false;
    }
    store
        .modify(
            r,
            meta(o, "namespace"),
            meta(o, "name"),
            Scope::Status,
            &ctx(manager),
            |live| {
                let mut new = live.cloned().unwrap_or(Value::Null);
                new["status"] = status;
                Ok(new)
            },
        )
        .is_ok()
}

fn template_hash(template: &Value) -> String {
    use std::hash::{DefaultHasher, Hasher};
    let mut h = DefaultHasher::new();
    h.write(
        serde_json::to_string(template)
            .unwrap_or_default()
            .as_bytes(),
    );
    // Ten lowercase alphanumerics, like kube-controller-manager's.
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut n = h.finish();
    (0..10)
        .map(|_| {
            let c = ALPHABET[(n % ALPHABET.len() as u64) as usize] as char;
            n /= ALPHABET.len() as u64;
            c
        })
        .collect()
}

fn i(o: &Value, ptr: &str) -> i64 {
    o.pointer(ptr).and_then(Value::as_i64).unwrap_or(0)
}

fn deployments(store: &Store) -> bool {
    let (Some(dr), Some(rr)) = (
        res(store, "apps", "deployments"),
        res(store, "apps", "replicasets"),
    ) else {
        return false;
    };
    let sets = all(store, &rr);
    let mut changed = false;
    for (d, want) in scaled(store, &dr) {
        let hash = template_hash(&d["spec"]["template"]);
        let name = format!("{}-{hash}", meta(&d, "name"));
        let owned = owned_by(&sets, meta(&d, "uid"));
        let ns = meta(&d, "namespace");
        match owned.iter().find(|s| meta(s, "name") == name) {
            None => {
                let mut template = d["spec"]["template"].clone();
                template["metadata"]["labels"]["pod-template-hash"] = json!(hash);
                let mut selector = d["spec"]["selector"].clone();
                selector["matchLabels"]["pod-template-hash"] = json!(hash);
                let revision = owned.len() + 1;
                let rs = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "metadata": {"name": name, "namespace": ns, "labels": template["metadata"]["labels"],
                        "annotations": {"deployment.kubernetes.io/revision": revision.to_string()},
                        "ownerReferences": owner_ref(&d, "apps/v1", "Deployment")},
                    "spec": {"replicas": want, "selector": selector, "template": template}});
                if store
                    .create(&rr, ns, rs, &ctx("deployment-controller"))
                    .is_ok()
                {
                    event(
                        store,
                        &d,
                        "Deployment",
                        "ScalingReplicaSet",
                        format!("Scaled up replica set {name} from 0 to {want}"),
                        "deployment-controller",
                    );
                    changed = true;
                }
            }
            Some(rs) => changed |= scale(store, &rr, &d, rs, want),
        }
        for old in owned.iter().filter(|s| meta(s, "name") != name) {
            changed |= scale(store, &rr, &d, old, 0);
        }
        changed |= deployment_status(store, &dr, &d, &owned, &name, want);
    }
    changed
}

fn scale(store: &Store, rr: &Resource, d: &Value, rs: &Value, want: i64) -> bool {
    let have = i(rs, "/spec/replicas");
    if have == want {
        return false;
    }
    let ok = store
        .modify(
            rr,
            meta(rs, "namespace"),
            meta(rs, "name"),
            Scope::Main {
                status_separate: true,
            },
            &ctx("deployment-controller"),
            |live| {
                let mut new = live.cloned().unwrap_or(Value::Null);
                new["spec"]["replicas"] = json!(want);
                Ok(new)
            },
        )
        .is_ok();
    if ok {
        let dir = if want > have { "up" } else { "down" };
        event(
            store,
            d,
            "Deployment",
            "ScalingReplicaSet",
            format!(
                "Scaled {dir} replica set {} from {have} to {want}",
                meta(rs, "name")
            ),
            "deployment-controller",
        );
    }
    ok
}

fn deployment_status(
    store: &Store,
    dr: &Resource,
    d: &Value,
    owned: &[&Value],
    new_name: &str,
    want: i64,
) -> bool {
    let sum = |ptr: &str| owned.iter().map(|s| i(s, ptr)).sum::<i64>();
    let updated = owned
        .iter()
        .find(|s| meta(s, "name") == new_name)
        .map_or(0, |s| i(s, "/status/replicas"));
    let available = sum("/status/availableReplicas");
    let complete = updated == want && sum("/status/replicas") == want && available == want;
    let old_conditions = d
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let cond = |ty: &str, status: &str, reason: &str, message: String| {
        let kept = old_conditions
            .iter()
            .find(|c| c["type"] == ty && c["status"] == status && c["reason"] == reason);
        let now = util::now_rfc3339();
        let since = kept
            .and_then(|c| c["lastTransitionTime"].as_str())
            .unwrap_or(&now)
            .to_owned();
        let updated_at = kept
            .and_then(|c| c["lastUpdateTime"].as_str())
            .unwrap_or(&now)
            .to_owned();
        json!({"type": ty, "status": status, "reason": reason, "message": message,
               "lastTransitionTime": since, "lastUpdateTime": updated_at})
    };
    let available_cond = if available >= want {
        cond(
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.".into(),
        )
    } else {
        cond(
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.".into(),
        )
    };
    let progressing = if complete {
        cond(
            "Progressing",
            "True",
            "NewReplicaSetAvailable",
            format!("ReplicaSet \"{new_name}\" has successfully progressed."),
        )
    } else {
        cond(
            "Progressing",
            "True",
            "ReplicaSetUpdated",
            format!("ReplicaSet \"{new_name}\" is progressing."),
        )
    };
    let status = json!({
        "observedGeneration": i(d, "/metadata/generation"),
        "replicas": sum("/status/replicas"),
        "updatedReplicas": updated,
        "readyReplicas": sum("/status/readyReplicas"),
        "availableReplicas": available,
        "unavailableReplicas": (want - available).max(0),
        "conditions": [available_cond, progressing],
    });
    let mut status = status;
    if let Value::Object(m) = &mut status {
        // As upstream: zero counts are left out.
        m.retain(|_, v| v.as_i64() != Some(0));
    }
    set_status(store, dr, d, status, "deployment-controller")
}

fn pod_ready(p: &Value) -> bool {
    p.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

fn replicasets(store: &Store) -> bool {
    let (Some(rr), Some(pr)) = (res(store, "apps", "replicasets"), res(store, "", "pods")) else {
        return false;
    };
    let pods = all(store, &pr);
    let mut changed = false;
    for (rs, want) in scaled(store, &rr) {
        let owned: Vec<&Value> = owned_by(&pods, meta(&rs, "uid"))
            .into_iter()
            .filter(|p| p.pointer("/metadata/deletionTimestamp").is_none())
            .collect();
        let ns = meta(&rs, "namespace");
        let have = i64::try_from(owned.len()).unwrap_or(i64::MAX);
        for _ in have..want {
            let template = &rs["spec"]["template"];
            let name = format!("{}-{}", meta(&rs, "name"), util::name_suffix());
            let pod = json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": ns, "labels": template["metadata"]["labels"],
                    "ownerReferences": owner_ref(&rs, "apps/v1", "ReplicaSet")},
                "spec": template["spec"]});
            if store
                .create(&pr, ns, pod, &ctx("replicaset-controller"))
                .is_ok()
            {
                event(
                    store,
                    &rs,
                    "ReplicaSet",
                    "SuccessfulCreate",
                    format!("Created pod: {name}"),
                    "replicaset-controller",
                );
                changed = true;
            }
        }
        for p in owned.iter().skip(usize::try_from(want.max(0)).unwrap_or(0)) {
            if store
                .delete(&pr, ns, meta(p, "name"), &DeleteOptions::default())
                .is_ok()
            {
                event(
                    store,
                    &rs,
                    "ReplicaSet",
                    "SuccessfulDelete",
                    format!("Deleted pod: {}", meta(p, "name")),
                    "replicaset-controller",
                );
                changed = true;
            }
        }
        let kept: Vec<&&Value> = owned
            .iter()
            .take(usize::try_from(want.max(0)).unwrap_or(0))
            .collect();
        let ready = i64::try_from(kept.iter().filter(|p| pod_ready(p)).count()).unwrap_or(0);
        let mut status = json!({"replicas": kept.len(), "fullyLabeledReplicas": kept.len(), "readyReplicas": ready,
            "availableReplicas": ready, "observedGeneration": i(&rs, "/metadata/generation")});
        if let Value::Object(m) = &mut status {
            m.retain(|k, v| k == "replicas" || v.as_i64() != Some(0));
        }
        changed |= set_status(store, &rr, &rs, status, "replicaset-controller");
    }
    changed
}

fn pods(store: &Store) -> bool {
    let Some(pr) = res(store, "", "pods") else {
        return false;
    };
    let mut changed = false;
    let mut node = None;
    for (n, p) in all(store, &pr).iter().enumerate() {
        let unbound = p
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty);
        if unbound && p.pointer("/metadata/deletionTimestamp").is_none() {
            if node.is_none() {
                node = the_node(store);
            }
            if let Some(node) = &node {
                changed |= bind(store, &pr, p, node);
            }
            continue;
        }
        if p.pointer("/metadata/deletionTimestamp").is_some()
            || matches!(
                p.pointer("/status/phase").and_then(Value::as_str),
                Some("Running" | "Succeeded" | "Failed")
            )
        {
            continue;
        }
        let now = util::now_rfc3339();
        let containers: Vec<Value> = p.pointer("/spec/containers").and_then(Value::as_array).cloned().unwrap_or_default()
            .iter()
            .map(|c| json!({"name": c["name"], "image": c["image"], "imageID": "", "ready": true, "started": true,
                "restartCount": 0, "state": {"running": {"startedAt": now}}}))
            .collect();
        let cond = |t: &str| json!({"type": t, "status": "True", "lastProbeTime": null, "lastTransitionTime": now});
        let ip = format!("10.244.{}.{}", (n / 250) % 250, n % 250 + 2);
        let qos = p
            .pointer("/status/qosClass")
            .cloned()
            .unwrap_or_else(|| json!("BestEffort"));
        let status = json!({"phase": "Running", "qosClass": qos, "startTime": now,
            "hostIP": "127.0.0.1", "podIP": ip, "podIPs": [{"ip": ip}],
            "conditions": [cond("PodReadyToStartContainers"), cond("Initialized"), cond("Ready"), cond("ContainersReady"), cond("PodScheduled")],
            "containerStatuses": containers});
        changed |= set_status(store, &pr, p, status, "kubelet");
    }
    changed
}

/// The node controllers-lite registers when there is none.
const NODE: &str = "kubeset-node";

/// The one-node scheduler's node: the first Node by name, or `kubeset-node`
/// registered (Ready, as a kubelet registers it, its `not-ready` taint
/// lifted as the node lifecycle controller lifts it) when there is none.
fn the_node(store: &Store) -> Option<String> {
    let nr = res(store, "", "nodes")?;
    if let Some(n) = all(store, &nr).first() {
        return Some(meta(n, "name").to_owned());
    }
    let now = util::now_rfc3339();
    let node = json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE, "kubernetes.io/os": "linux"}},
        "status": {"capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                "message": "kubelet is posting ready status", "lastHeartbeatTime": now, "lastTransitionTime": now}],
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": NODE}]}});
    store.create(&nr, "", node, &ctx("kubelet")).ok()?;
    let scope = Scope::Main {
        status_separate: true,
    };
    let lifted = store.modify(&nr, "", NODE, scope, &ctx("node-controller"), |live| {
        let mut new = live.cloned().unwrap_or(Value::Null);
        if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
            spec.remove("taints");
        }
        Ok(new)
    });
    lifted.ok().map(|_| NODE.to_owned())
}

/// Binds pod `p` to `node`, as kube-scheduler does through `pods/binding`:
/// `spec.nodeName` and the `PodScheduled` condition.
fn bind(store: &Store, pr: &Resource, p: &Value, node: &str) -> bool {
    let scope = Scope::Main {
        status_separate: true,
    };
    let bound = store.modify(
        pr,
        meta(p, "namespace"),
        meta(p, "name"),
        scope,
        &ctx("default-scheduler"),
        |live| {
            let mut new = live.cloned().unwrap_or(Value::Null);
            new["spec"]["nodeName"] = json!(node);
            Ok(new)
        },
    );
    bound.is_ok()
}

fn jobs(store: &Store) -> bool {
    let Some(jr) = store.lookup("batch", "v1", "jobs") else {
        return false;
    };
    let mut changed = false;
    for j in all(store, &jr) {
        let done = j
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Complete"));
        if done || j.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        let now = util::now_rfc3339();
        let completions = j
            .pointer("/spec/completions")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let cond = |t: &str, reason: &str, message: &str| {
            json!({"type": t, "status": "True", "reason": reason, "message": message,
            "lastProbeTime": now, "lastTransitionTime": now})
        };
        let status = json!({"startTime": now, "completionTime": now, "succeeded": completions, "ready": 0, "terminating": 0,
            "uncountedTerminatedPods": {},
            "conditions": [cond("SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods"),
                           cond("Complete", "CompletionsReached", "Reached expected number of succeeded pods")]});
        changed |= set_status(store, &jr, &j, status, "job-controller");
    }
    changed
}

/// Deletes objects whose every owner reference names a uid that no longer
/// exists (owners are looked up by kind in the same namespace, or cluster
/// scope).
fn garbage_collect(store: &Store) -> bool {
    let resources = store.resources();
    let mut changed = false;
    for r in resources.iter().filter(|r| r.version == "v1" || r.custom) {
        for o in all(store, r) {
            let Some(refs) = o
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
            else {
                continue;
            };
            if refs.is_empty() {
                continue;
            }
            let ns = meta(&o, "namespace");
            let alive = refs.iter().any(|owner| {
                let api = owner["apiVersion"].as_str().unwrap_or("");
                let (g, v) = api.split_once('/').unwrap_or(("", api));
                let kind = owner["kind"].as_str().unwrap_or("");
                let Some(or) = resources
                    .iter()
                    .find(|x| x.group == g && x.version == v && x.kind == kind)
                else {
                    return true; // an owner kind we do not serve: leave it
                };
                store
                    .get(or, ns, owner["name"].as_str().unwrap_or(""))
                    .is_ok_and(|live| live.pointer("/metadata/uid") == owner.get("uid"))
            });
            if !alive
                && store
                    .delete(r, ns, meta(&o, "name"), &DeleteOptions::default())
                    .is_ok()
            {
                changed = true;
            }
        }
    }
    changed
}

/// The namespace controller: a Terminating namespace's objects are
/// deleted (finalizers still hold theirs), and once none is left its
/// `kubernetes` finalizer is removed, which lets the store remove it.
fn namespaces(store: &Store) -> bool {
    let Some(nr) = res(store, "", "namespaces") else {
        return false;
    };
    let mut changed = false;
    for n in all(store, &nr) {
        if n.pointer("/metadata/deletionTimestamp").is_none() {
            continue;
        }
        let ns = meta(&n, "name").to_owned();
        let (left, deleted) = empty_namespace(store, &ns);
        changed |= deleted;
        if left == 0 {
            changed |= finalize_namespace(store, &nr, &ns);
        }
    }
    changed
}

/// Deletes every object of namespace `ns` not being deleted yet; how many
/// objects are left, and whether any delete was made.
fn empty_namespace(store: &Store, ns: &str) -> (usize, bool) {
    let (mut left, mut deleted) = (0, false);
    let mut seen = Vec::new();
    for r in store.resources().iter().filter(|r| r.namespaced) {
        if seen.contains(&r.storage_key()) {
            continue;
        }
        seen.push(r.storage_key());
        let items = store
            .list_all(
                r,
                Some(ns),
                &LabelSelector::default(),
                &FieldSelector::default(),
            )
            .0;
        left += items.len();
        for o in items {
            if o.pointer("/metadata/deletionTimestamp").is_none() {
                deleted |= store
                    .delete(r, ns, meta(&o, "name"), &DeleteOptions::default())
                    .is_ok();
            }
        }
    }
    (left, deleted)
}

/// Removes the `kubernetes` finalizer of an emptied namespace (what
/// `namespaces/finalize` does for kube-controller-manager).
fn finalize_namespace(store: &Store, nr: &Resource, ns: &str) -> bool {
    let scope = Scope::Main {
        status_separate: true,
    };
    store
        .modify(nr, "", ns, scope, &ctx("namespace-controller"), |live| {
            let mut new = live.cloned().unwrap_or(Value::Null);
            if let Some(f) = new
                .pointer_mut("/spec/finalizers")
                .and_then(Value::as_array_mut)
            {
                f.retain(|x| x != "kubernetes");
            }
            Ok(new)
        })
        .is_ok()
}
