//! Byte-level agreement with Go's protobuf encoder: every kind of the
//! default features, from its full fixture, encoded by kubeset decodes in
//! Go (k8s.io/api through client-go's scheme) to the object Go reads from
//! the fixture's JSON; Go's encoding decodes in kubeset to the same object.
//! The Go side is `crates/kubeset-bench/go/protocheck` (the bench's Go
//! module); without `go` on the PATH the test says so and passes.
#![cfg(all(
    feature = "protobuf",
    feature = "core-v1",
    feature = "apps-v1",
    feature = "batch-v1",
    feature = "coordination-v1",
    feature = "discovery-v1",
    feature = "rbac-v1",
    feature = "networking-v1",
    feature = "policy-v1"
))]

use std::path::{Path, PathBuf};
use std::process::Command;

use kubeset_api::protobuf;
use serde_json::Value;

/// One kind: writes its fixture and kubeset's encoding into the work
/// directory; after Go ran, checks both directions.
struct Case {
    name: &'static str,
    fixture: &'static str,
    encode: fn(&str) -> Vec<u8>,
    decode: fn(&[u8]) -> Value,
}

fn encode<K>(json: &str) -> Vec<u8>
where
    K: serde::de::DeserializeOwned + kubeset_api::Resource + protobuf::Message,
{
    let obj: K = serde_json::from_str(json).expect("fixture deserializes");
    protobuf::encode_object(&obj)
}

fn decode<K>(bytes: &[u8]) -> Value
where
    K: serde::Serialize + Default + kubeset_api::Resource + protobuf::Message,
{
    let obj: K = protobuf::decode_object(bytes).expect("Go's encoding decodes");
    serde_json::to_value(&obj).expect("serializes")
}

macro_rules! cases {
    ($($feature:literal $($seg:ident)::+ = $file:literal;)*) => {
        vec![$(
            #[cfg(feature = $feature)]
            Case {
                name: stringify!($($seg)::+),
                fixture: include_str!($file),
                encode: encode::<kubeset_api::$($seg)::+>,
                decode: decode::<kubeset_api::$($seg)::+>,
            },
        )*]
    };
}

/// Sparse objects as users write them: Go's protobuf carries the zero of
/// every Go value field they leave out (`nodePort`, `protocol`,
/// `hostNetwork`, `dnsPolicy`…), which kubeset must read as unset, and the
/// zero of a pointer they set (`replicas: 0`), which it must keep.
fn sparse_cases() -> Vec<Case> {
    use kubeset_api::api::{apps::v1::Deployment, core::v1::Pod, core::v1::Service};
    vec![
        Case {
            name: "sparse Pod",
            fixture: r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
                "spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}]}}"#,
            encode: encode::<Pod>,
            decode: decode::<Pod>,
        },
        Case {
            name: "sparse Service",
            fixture: r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},
                "spec":{"ports":[{"port":80}],"selector":{"app":"a"}}}"#,
            encode: encode::<Service>,
            decode: decode::<Service>,
        },
        Case {
            name: "sparse Deployment",
            fixture: r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
                "spec":{"replicas":0,"selector":{"matchLabels":{"app":"a"}},
                "template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}"#,
            encode: encode::<Deployment>,
            decode: decode::<Deployment>,
        },
    ]
}

fn cases() -> Vec<Case> {
    let mut all = full_cases();
    all.extend(sparse_cases());
    all
}

fn full_cases() -> Vec<Case> {
    cases! {
        "apps-v1" api::apps::v1::ControllerRevision = "fixtures/generated/apps-v1/controller_revision.json";
        "apps-v1" api::apps::v1::DaemonSet = "fixtures/generated/apps-v1/daemon_set.json";
        "apps-v1" api::apps::v1::Deployment = "fixtures/generated/apps-v1/deployment.json";
        "apps-v1" api::apps::v1::ReplicaSet = "fixtures/generated/apps-v1/replica_set.json";
        "apps-v1" api::apps::v1::StatefulSet = "fixtures/generated/apps-v1/stateful_set.json";
        "batch-v1" api::batch::v1::CronJob = "fixtures/generated/batch-v1/cron_job.json";
        "batch-v1" api::batch::v1::Job = "fixtures/generated/batch-v1/job.json";
        "coordination-v1" api::coordination::v1::Lease = "fixtures/generated/coordination-v1/lease.json";
        "core-v1" api::core::v1::Binding = "fixtures/generated/core-v1/binding.json";
        "core-v1" api::core::v1::ComponentStatus = "fixtures/generated/core-v1/component_status.json";
        "core-v1" api::core::v1::ConfigMap = "fixtures/generated/core-v1/config_map.json";
        "core-v1" api::core::v1::Endpoints = "fixtures/generated/core-v1/endpoints.json";
        "core-v1" api::core::v1::Event = "fixtures/generated/core-v1/event.json";
        "core-v1" api::core::v1::LimitRange = "fixtures/generated/core-v1/limit_range.json";
        "core-v1" api::core::v1::Namespace = "fixtures/generated/core-v1/namespace.json";
        "core-v1" api::core::v1::Node = "fixtures/generated/core-v1/node.json";
        "core-v1" api::core::v1::PersistentVolume = "fixtures/generated/core-v1/persistent_volume.json";
        "core-v1" api::core::v1::PersistentVolumeClaim = "fixtures/generated/core-v1/persistent_volume_claim.json";
        "core-v1" api::core::v1::Pod = "fixtures/generated/core-v1/pod.json";
        "core-v1" api::core::v1::PodTemplate = "fixtures/generated/core-v1/pod_template.json";
        "core-v1" api::core::v1::ReplicationController = "fixtures/generated/core-v1/replication_controller.json";
        "core-v1" api::core::v1::ResourceQuota = "fixtures/generated/core-v1/resource_quota.json";
        "core-v1" api::core::v1::Secret = "fixtures/generated/core-v1/secret.json";
        "core-v1" api::core::v1::Service = "fixtures/generated/core-v1/service.json";
        "core-v1" api::core::v1::ServiceAccount = "fixtures/generated/core-v1/service_account.json";
        "discovery-v1" api::discovery::v1::EndpointSlice = "fixtures/generated/discovery-v1/endpoint_slice.json";
        "networking-v1" api::networking::v1::IPAddress = "fixtures/generated/networking-v1/ip_address.json";
        "networking-v1" api::networking::v1::Ingress = "fixtures/generated/networking-v1/ingress.json";
        "networking-v1" api::networking::v1::IngressClass = "fixtures/generated/networking-v1/ingress_class.json";
        "networking-v1" api::networking::v1::NetworkPolicy = "fixtures/generated/networking-v1/network_policy.json";
        "networking-v1" api::networking::v1::ServiceCIDR = "fixtures/generated/networking-v1/service_cidr.json";
        "policy-v1" api::policy::v1::PodDisruptionBudget = "fixtures/generated/policy-v1/pod_disruption_budget.json";
        "rbac-v1" api::rbac::v1::ClusterRole = "fixtures/generated/rbac-v1/cluster_role.json";
        "rbac-v1" api::rbac::v1::ClusterRoleBinding = "fixtures/generated/rbac-v1/cluster_role_binding.json";
        "rbac-v1" api::rbac::v1::Role = "fixtures/generated/rbac-v1/role.json";
        "rbac-v1" api::rbac::v1::RoleBinding = "fixtures/generated/rbac-v1/role_binding.json";
    }
}

/// The same object, but for what protobuf cannot carry: an empty list or
/// map is absent on the wire, and Go's JSON writes a zero `Time` as `null`.
/// Scalars must agree exactly: a Go value field's zero (`nodePort: 0`,
/// `hostNetwork: false`), which Go's protobuf writes and its JSON omits,
/// decodes in kubeset as unset (`specs/kubernetes-<v>.go-values`).
fn same_object(go: &Value, rs: &Value) -> Result<(), String> {
    let zero = |v: &Value| match v {
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Null => true,
        Value::String(_) | Value::Number(_) | Value::Bool(_) => false,
    };
    match (go, rs) {
        (Value::Object(g), Value::Object(r)) => {
            for (k, gv) in g {
                match r.get(k) {
                    Some(rv) => same_object(gv, rv).map_err(|e| format!("{k}.{e}"))?,
                    None if zero(gv) => {}
                    None => return Err(format!("{k}: missing in kubeset's")),
                }
            }
            match r.iter().find(|(k, rv)| !g.contains_key(*k) && !zero(rv)) {
                Some((k, rv)) => Err(format!("{k}: {rv} only in kubeset's")),
                None => Ok(()),
            }
        }
        (Value::Array(g), Value::Array(r)) if g.len() == r.len() => {
            for (i, (gv, rv)) in g.iter().zip(r).enumerate() {
                same_object(gv, rv).map_err(|e| format!("[{i}].{e}"))?;
            }
            Ok(())
        }
        _ if go == rs => Ok(()),
        _ => Err(format!(": Go {go}, kubeset {rs}")),
    }
}

fn go_module() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kubeset-bench/go")
}

#[test]
fn go_and_kubeset_read_each_others_protobuf() {
    if Command::new("go").arg("version").output().is_err() {
        eprintln!("go is not on the PATH: the Go side of the protobuf agreement is not checked");
        return;
    }
    let dir = std::env::temp_dir().join(format!("kubeset-protobuf-go-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = cases();
    assert!(cases.len() >= 30, "the default features hold the kinds");
    for (i, c) in cases.iter().enumerate() {
        std::fs::write(dir.join(format!("{i}.json")), c.fixture).unwrap();
        std::fs::write(dir.join(format!("{i}.rs.pb")), (c.encode)(c.fixture)).unwrap();
    }
    let out = Command::new("go")
        .args(["run", "./protocheck"])
        .arg(&dir)
        .current_dir(go_module())
        .output()
        .expect("go runs");
    assert!(
        out.status.success(),
        "protocheck failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read_json = |file: String| -> Value {
        serde_json::from_slice(&std::fs::read(dir.join(file)).unwrap()).unwrap()
    };
    let mut wrong = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let go = read_json(format!("{i}.go.json"));
        // kubeset → Go: Go reads kubeset's bytes as it reads its own
        // encoding of the same object.
        let from_rs = read_json(format!("{i}.rs.json"));
        let from_go = read_json(format!("{i}.gopb.json"));
        if from_rs != from_go {
            let at = same_object(&from_go, &from_rs)
                .err()
                .unwrap_or_else(|| "a zero value".into());
            wrong.push(format!(
                "{}: Go reads kubeset's protobuf differently at {at}",
                c.name
            ));
        }
        // Go → kubeset: kubeset reads Go's bytes as Go's JSON says.
        let go_pb = std::fs::read(dir.join(format!("{i}.go.pb"))).unwrap();
        assert!(go_pb.starts_with(protobuf::MAGIC));
        if let Err(e) = same_object(&go, &(c.decode)(&go_pb)) {
            wrong.push(format!(
                "{}: kubeset reads Go's protobuf differently at {e}",
                c.name
            ));
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(wrong.is_empty(), "{wrong:#?}");
}
