//! CRD schemas that match a built-in model use it (`crd/reuse.rs`),
//! identical nested schemas become one type (`crd/share.rs`), and
//! `--crate` output is a crate of its own.
//!
//! The built-in models come from the pinned release of the spec root
//! (`../shared/specs`, as `cargo xtask codegen`); the user crates depend
//! on the `kubeset` facade by path and build in `target/crd-user`.

mod common;

use std::sync::Arc;

use kubeset::schema::JsonSchema as _;
use kubeset_codegen::crd::reuse::{Builtins, DEFAULT_FEATURES};
use kubeset_codegen::crd::{self, CustomResourceDefinition, KubesetDependency, Options};
use kubeset_codegen::spec_dir;
use serde_json::{Value, json};

fn builtins() -> Arc<Builtins> {
    let ws = common::workspace();
    let root = spec_dir::root(None, &ws);
    // The catalogue of the models this test is built with (a workspace
    // test build selects v1.35, the real server's version; the pinned
    // spec is v1.36): the CRDs below embed those models' schemas.
    let dir = spec_dir::release(&root, kubeset::KUBERNETES_VERSION);
    Arc::new(Builtins::from_spec_dir(&dir, DEFAULT_FEATURES).expect("built-in catalogue"))
}

fn crd(group: &str, kind: &str, spec: Value) -> CustomResourceDefinition {
    let value = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{}s.{group}", kind.to_ascii_lowercase())},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": format!("{}s", kind.to_ascii_lowercase())},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]
        }
    });
    crd::decode(value, "test".as_ref()).expect("a CRD")
}

/// A CRD whose spec holds a pod template as a CRD generator writes it:
/// the structural schema of `PodTemplateSpec` (kubeset's own, what
/// `#[derive(JsonSchema)]` embeds), without descriptions.
fn pod_template_crd() -> CustomResourceDefinition {
    let template =
        kubeset::schema::strip_descriptions(kubeset::api::core::v1::PodTemplateSpec::json_schema());
    let spec = json!({
        "type": "object",
        "required": ["template"],
        "properties": {
            "template": serde_json::to_value(template).expect("schema"),
            "replicas": {"type": "integer", "format": "int32"}
        }
    });
    crd("batch.example.com", "Runner", spec)
}

#[test]
fn a_pod_template_reuses_the_built_in_model_and_passes_into_a_deployment() {
    let options = Options::default().builtins(builtins());
    let out = crd::generate(&[pod_template_crd()], &options).expect("generates");
    let reused: Vec<(&str, &str)> = out
        .reused
        .iter()
        .map(|(_, path, rust)| (path.as_str(), rust.as_str()))
        .collect();
    assert_eq!(
        reused,
        [(".spec.template", "kubeset::api::core::v1::PodTemplateSpec")]
    );
    let spec = &out.files["batch_example_com/v1/runner_spec.rs"];
    assert!(
        spec.contains("pub template: kubeset::api::core::v1::PodTemplateSpec,"),
        "{spec}"
    );
    // Nothing of the pod template is generated.
    assert!(
        out.files.keys().all(|f| !f.contains("template")),
        "{:?}",
        out.files.keys()
    );
    let mut files = common::under_src_crds(&out.files);
    files.insert(
        "src/lib.rs".into(),
        "#![deny(warnings)]\n#[rustfmt::skip]\npub mod crds;\n".into(),
    );
    files.insert("tests/deployment.rs".into(), DEPLOYMENT_TEST.into());
    let run = common::cargo_in_user_crate("crd-reuse", &files, &["test", "--quiet"], false);
    assert!(run.ok, "the user crate failed:\n{}", run.output);
}

/// The user crate's test: a `Runner` read from JSON hands its template to
/// a `Deployment` as it is (no conversion), and the template's JSON is
/// unchanged on the way, a CPU given as a number (valid for the CRD's
/// int-or-string quantity) included.
const DEPLOYMENT_TEST: &str = r#"
use crd_reuse::crds::batch_example_com::v1::Runner;
use kubeset::api::apps::v1::{Deployment, DeploymentSpec};
use kubeset::apimachinery::pkg::apis::meta::v1::LabelSelector;

#[test]
fn the_template_goes_into_a_deployment_unchanged() {
    let template = serde_json::json!({
        "metadata": {"labels": {"app": "runner"}},
        "spec": {
            "containers": [{
                "name": "main",
                "image": "busybox:1.36",
                "args": ["sleep", "3600"],
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "resources": {"limits": {"memory": "64Mi"}, "requests": {"cpu": "100m"}}
            }],
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
        }
    });
    let runner: Runner = serde_json::from_value(serde_json::json!({
        "apiVersion": "batch.example.com/v1",
        "kind": "Runner",
        "metadata": {"name": "r", "namespace": "default"},
        "spec": {"replicas": 2, "template": template}
    }))
    .expect("a Runner");
    let deployment = Deployment {
        metadata: runner.metadata.clone(),
        // `spec` is required from v1.37 (a `DeploymentSpec`), an `Option`
        // before: `into` gives either, whichever version the facade has.
        spec: DeploymentSpec {
            replicas: runner.spec.as_ref().and_then(|s| s.replicas),
            selector: LabelSelector {
                match_labels: Some([("app".to_owned(), "runner".to_owned())].into()),
                ..Default::default()
            },
            template: runner.spec.clone().expect("spec").template,
            ..Default::default()
        }
        .into(),
        ..Default::default()
    };
    let written = serde_json::to_value(&deployment).expect("encodes");
    assert_eq!(written["spec"]["template"], template);
    assert_eq!(written["spec"]["replicas"], 2);

    // A number where the CRD allows int-or-string reads as the quantity's text.
    let with_number: Runner = serde_json::from_value(serde_json::json!({
        "apiVersion": "batch.example.com/v1", "kind": "Runner", "metadata": {"name": "n"},
        "spec": {"template": {"spec": {"containers": [
            {"name": "c", "resources": {"limits": {"cpu": 2}}}
        ]}}}
    }))
    .expect("a number quantity decodes");
    let spec = with_number.spec.expect("spec").template.spec.expect("pod spec");
    let limits = spec.containers[0].resources.as_ref().and_then(|r| r.limits.as_ref()).expect("limits");
    assert_eq!(limits["cpu"].0, "2");
}
"#;

#[test]
fn without_built_ins_the_pod_template_is_generated() {
    let out = crd::generate(&[pod_template_crd()], &Options::default()).expect("generates");
    assert!(out.reused.is_empty());
    assert!(
        out.files
            .contains_key("batch_example_com/v1/runner_spec_template.rs"),
        "{:?}",
        out.files.keys()
    );
}

#[test]
fn a_schema_with_a_field_the_built_in_lacks_is_a_near_miss() {
    let mut template = serde_json::to_value(kubeset::schema::strip_descriptions(
        kubeset::api::core::v1::Toleration::json_schema(),
    ))
    .expect("schema");
    template["properties"]["weight"] = json!({"type": "integer"});
    let spec = json!({"type": "object", "properties": {
        "tolerations": {"type": "array", "items": template},
        "other": {"type": "array", "items": serde_json::to_value(kubeset::schema::strip_descriptions(
            kubeset::api::core::v1::Toleration::json_schema())).expect("schema")}
    }});
    let out = crd::generate(
        &[crd("near.example.com", "Thing", spec)],
        &Options::default().builtins(builtins()),
    )
    .expect("generates");
    let reused: Vec<&str> = out.reused.iter().map(|(_, p, _)| p.as_str()).collect();
    assert_eq!(
        reused,
        [".spec.other[]"],
        "an exact copy is reused under any name"
    );
    let [miss] = out.near_misses.as_slice() else {
        panic!("one near miss: {:?}", out.near_misses);
    };
    assert_eq!(miss.path, ".spec.tolerations[]");
    assert_eq!(miss.builtin, "kubeset::api::core::v1::Toleration");
    assert_eq!((miss.matching, miss.properties), (5, 6));
    assert_eq!(miss.reasons, ["not its fields: weight"]);
    assert!(
        miss.to_string()
            .contains("near kubeset::api::core::v1::Toleration (5 of 6")
    );
}

#[test]
fn int64_where_the_built_in_has_int32_is_no_match() {
    let mut schema = serde_json::to_value(kubeset::schema::strip_descriptions(
        kubeset::api::core::v1::ContainerPort::json_schema(),
    ))
    .expect("schema");
    schema["properties"]["containerPort"] = json!({"type": "integer"});
    let spec =
        json!({"type": "object", "properties": {"ports": {"type": "array", "items": schema}}});
    let out = crd::generate(
        &[crd("ports.example.com", "Thing", spec)],
        &Options::default().builtins(builtins()),
    )
    .expect("generates");
    assert!(out.reused.is_empty(), "{:?}", out.reused);
    assert!(
        out.files
            .contains_key("ports_example_com/v1/thing_spec_ports.rs")
    );
    assert_eq!(
        out.near_misses[0].reasons,
        ["`containerPort`: integer where the built-in type is int32"]
    );
}

fn object(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

#[test]
fn identical_nested_schemas_become_one_type_named_by_what_they_share() {
    let endpoint = object(json!({"host": {"type": "string"}, "port": {"type": "integer"}}));
    let spec = object(json!({
        "primary": endpoint,
        "replicas": {"type": "array", "items": endpoint},
        "backup": object(json!({"target": endpoint, "note": {"type": "string"}})),
        "restore": object(json!({"target": endpoint, "note": {"type": "string"}})),
        "other": object(json!({"host": {"type": "string"}, "port": {"type": "string"}}))
    }));
    let out = crd::generate(&[crd("share.example.com", "Db", spec)], &Options::default())
        .expect("generates");
    let spec = &out.files["share_example_com/v1/db_spec.rs"];
    for field in [
        // `DbSpecPrimary`, `DbSpecReplicas`, `DbSpecBackupTarget`,
        // `DbSpecRestoreTarget` share `DbSpec`, their parent's name: the
        // words where they part, joined.
        "pub primary: Option<super::DbSpecPrimaryOrReplicasOrTarget>,",
        "pub replicas: Option<Vec<super::DbSpecPrimaryOrReplicasOrTarget>>,",
        // Siblings with nothing in common but their parent's name.
        "pub backup: Option<super::DbSpecBackupOrRestore>,",
        "pub restore: Option<super::DbSpecBackupOrRestore>,",
        "pub other: Option<super::DbSpecOther>,",
    ] {
        assert!(spec.contains(field), "{field} in\n{spec}");
    }
    let backup = &out.files["share_example_com/v1/db_spec_backup_or_restore.rs"];
    assert!(backup.contains("pub target: Option<super::DbSpecPrimaryOrReplicasOrTarget>,"));
    assert!(backup.contains("Shared by identical schemas at `.spec.backup`, `.spec.restore`"));
    let shared: Vec<(&str, usize)> = out
        .shared
        .iter()
        .map(|s| (s.name.as_str(), s.members.len()))
        .collect();
    assert_eq!(
        shared,
        [
            ("DbSpecBackupOrRestore", 2),
            ("DbSpecPrimaryOrReplicasOrTarget", 4)
        ]
    );
}

/// #37's three names that lied, on the real CRDs: KEDA's `scaleDown` was
/// typed `…ScaleUp`, cert-manager's conditions were the built-in
/// `CustomResourceDefinitionCondition`; and two kinds' identical `type`
/// enums took one kind's name (`InternalSpecActions.type:
/// FlattenEnumSpecType`, the suite's `crdout_gen.rs`).
#[test]
fn shared_and_reused_types_are_named_for_every_use() {
    let (crds, _) = crd::read_paths(&[common::shared_crds()]).expect("shared CRDs parse");
    let out = crd::generate(&crds, &Options::default().builtins(builtins())).expect("generates");
    let behavior = &out.files["keda_sh/v1alpha1/scaled_object_spec_advanced_horizontal_pod_autoscaler_config_behavior.rs"];
    assert!(!behavior.contains("ScaleUp"), "{behavior}");
    assert_eq!(
        behavior
            .matches("super::ScaledObjectSpecAdvancedHorizontalPodAutoscalerConfigBehaviorScale,")
            .count(),
        2,
        "scaleUp and scaleDown share `…BehaviorScale`:\n{behavior}"
    );
    let reused: Vec<(&str, &str)> = out
        .reused
        .iter()
        .filter(|(_, path, _)| path.ends_with("conditions[]"))
        .map(|(origin, _, rust)| (origin.as_str(), rust.as_str()))
        .collect();
    assert!(
        reused
            .iter()
            .all(|(_, rust)| *rust == "kubeset::apimachinery::pkg::apis::meta::v1::Condition"),
        "conditions reuse meta/v1 Condition or nothing: {reused:?}"
    );
    assert!(
        reused.iter().any(|(origin, _)| origin.contains("gateway")),
        "Gateway API's conditions are meta/v1 Condition: {reused:?}"
    );
    let status = &out.files["cert_manager_io/v1/certificate_status.rs"];
    assert!(
        !status.contains("CustomResourceDefinitionCondition"),
        "{status}"
    );

    let kind = |kind: &str, spec: Value| crd("enums.example.com", kind, spec);
    let ty = json!({"type": "string", "enum": ["Scale", "Restart"]});
    let flatten = kind(
        "FlattenEnum",
        json!({"type": "object", "required": ["type"], "properties": {"type": ty}}),
    );
    let internal = kind(
        "Internal",
        json!({"type": "object", "properties": {"actions": {"type": "array", "items": {
            "type": "object", "required": ["type"],
            "properties": {"type": ty, "replicas": {"type": "integer"}}}}}}),
    );
    let out = crd::generate(&[flatten, internal], &Options::default()).expect("generates");
    let actions = &out.files["enums_example_com/v1/internal_spec_actions.rs"];
    assert!(actions.contains("pub type_: super::SpecType,"), "{actions}");
    let flatten = &out.files["enums_example_com/v1/flatten_enum_spec.rs"];
    assert!(flatten.contains("pub type_: super::SpecType,"), "{flatten}");
}

#[test]
fn the_output_does_not_depend_on_the_order_of_the_input() {
    let (mut crds, _) = crd::read_paths(&[common::shared_crds()]).expect("shared CRDs parse");
    let options = Options::default().builtins(builtins());
    let first = crd::generate(&crds, &options).expect("generates");
    crds.reverse();
    let second = crd::generate(&crds, &options).expect("generates");
    assert_eq!(first.files, second.files);
    assert_eq!(first.near_misses, second.near_misses);
}

#[test]
fn crate_output_builds_as_a_dependency_of_an_operator() {
    let out = crd::generate(
        &[pod_template_crd()],
        &Options::default().builtins(builtins()),
    )
    .expect("generates");
    let dir = tempfile::tempdir().expect("temp dir");
    let crds_dir = dir.path().join("runner-crds");
    let facade = common::workspace().join("crates/kubeset");
    out.write_crate(
        &crds_dir,
        "runner-crds",
        &KubesetDependency::Path(facade.clone()),
    )
    .expect("writes the crate");
    let manifest = std::fs::read_to_string(crds_dir.join("Cargo.toml")).expect("Cargo.toml");
    assert!(manifest.starts_with("# Generated by `kubeset-codegen crd --crate`"));
    assert!(manifest.contains("name = \"runner-crds\""), "{manifest}");
    assert!(crds_dir.join("src/lib.rs").is_file());
    assert!(
        crds_dir
            .join("src/batch_example_com/v1/runner.rs")
            .is_file()
    );
    // Written again: unchanged, and a foreign manifest is refused.
    out.write_crate(
        &crds_dir,
        "runner-crds",
        &KubesetDependency::Path(facade.clone()),
    )
    .expect("rewrites its own crate");
    let foreign = dir.path().join("foreign");
    std::fs::create_dir_all(&foreign).expect("mkdir");
    std::fs::write(foreign.join("Cargo.toml"), "[package]\nname = \"mine\"\n").expect("write");
    let err = out
        .write_crate(&foreign, "x", &KubesetDependency::default())
        .expect_err("a foreign manifest is kept");
    assert!(
        matches!(err, kubeset_codegen::CodegenError::ForeignManifest { .. }),
        "{err}"
    );
    let err = out
        .write_crate(&foreign, "bad name", &KubesetDependency::default())
        .expect_err("a bad name is refused");
    assert!(
        matches!(err, kubeset_codegen::CodegenError::BadCrateName { .. }),
        "{err}"
    );
    // The operator: its own crate, depending on the generated one.
    let operator = dir.path().join("operator");
    std::fs::create_dir_all(operator.join("src")).expect("mkdir");
    std::fs::write(
        operator.join("Cargo.toml"),
        format!(
            "[package]\nname = \"operator\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n[workspace]\n\n\
             [dependencies]\nrunner-crds = {{ path = \"../runner-crds\" }}\nkubeset = {{ path = {:?} }}\nserde_json = \"1\"\n",
            facade.to_string_lossy()
        ),
    )
    .expect("write");
    std::fs::write(
        operator.join("src/main.rs"),
        "fn main() {\n    let r = runner_crds::batch_example_com::v1::Runner::new(\"r\", Default::default());\n    \
         let t: kubeset::api::core::v1::PodTemplateSpec = r.spec.expect(\"spec\").template;\n    \
         println!(\"{}\", serde_json::to_string(&t).unwrap());\n}\n",
    )
    .expect("write");
    std::fs::copy(
        common::workspace().join("Cargo.lock"),
        operator.join("Cargo.lock"),
    )
    .expect("lock");
    let run = common::run_cargo(&operator, &["run", "--quiet"]);
    assert!(run.ok, "the operator did not build:\n{}", run.output);
    assert!(run.output.contains("{}"), "{}", run.output);
}
