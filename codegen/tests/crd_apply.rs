//! `kubeset-codegen crd --apply`: apply configurations of a real CRD
//! (cert-manager's Certificate, read from `../shared/crds`) and of a CRD
//! embedding a pod template (which reuses `kubeset::api::core::v1::
//! PodTemplateSpec`, so its apply type is kubeset's
//! `PodTemplateSpecApply`), compiled in a user crate whose test builds
//! them with the generated builders and checks the JSON they write.

mod common;

use std::sync::Arc;

use kubeset_codegen::crd::reuse::{Builtins, DEFAULT_FEATURES};
use kubeset_codegen::crd::{self, Options};
use kubeset_codegen::spec_dir;
use serde_json::json;

fn builtins() -> Arc<Builtins> {
    let ws = common::workspace();
    let root = spec_dir::root(None, &ws);
    // The catalogue of the models this test is built with (a workspace
    // test build selects v1.35, the real server's version; the pinned
    // spec is v1.37): the CRDs below embed those models' schemas.
    let dir = spec_dir::release(&root, kubeset::KUBERNETES_VERSION);
    Arc::new(Builtins::from_spec_dir(&dir, DEFAULT_FEATURES).expect("built-in catalogue"))
}

/// A CRD whose spec holds a pod template (kubeset's own structural schema).
fn runner_crd() -> crd::CustomResourceDefinition {
    use kubeset::schema::JsonSchema as _;
    let template =
        kubeset::schema::strip_descriptions(kubeset::api::core::v1::PodTemplateSpec::json_schema());
    let value = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "runners.batch.example.com"},
        "spec": {
            "group": "batch.example.com",
            "names": {"kind": "Runner", "plural": "runners"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object",
                    "properties": {
                        "template": serde_json::to_value(template).expect("schema"),
                        "replicas": {"type": "integer", "format": "int32"}
                    }
                }}}}}]
        }
    });
    crd::decode(value, "test".as_ref()).expect("a CRD")
}

#[test]
fn apply_types_are_opt_in() {
    let out = crd::generate(&[runner_crd()], &Options::default()).expect("generates");
    assert!(out.files.keys().all(|f| !f.ends_with("_apply.rs")));
    let out = crd::generate(&[runner_crd()], &Options::default().apply(true)).expect("generates");
    assert!(
        out.files
            .contains_key("batch_example_com/v1/runner_apply.rs")
    );
    let module = &out.files["batch_example_com/v1/mod.rs"];
    assert!(
        module.contains("pub use self::runner_apply::RunnerApply;"),
        "{module}"
    );
    assert!(
        !module.contains("cfg(feature"),
        "ungated without a feature: {module}"
    );
    let gated = crd::generate(
        &[runner_crd()],
        &Options::default().apply(true).apply_feature("apply"),
    )
    .expect("generates");
    let module = &gated.files["batch_example_com/v1/mod.rs"];
    assert!(module.contains("#[cfg(feature = \"apply\")]"), "{module}");
}

#[test]
fn a_real_crd_s_apply_types_compile_and_write_what_they_set() {
    let path = common::shared_crds().join("certificates.cert-manager.io.yaml");
    let (mut crds, _) = crd::read_paths(&[path]).expect("the Certificate CRD");
    crds.push(runner_crd());
    let options = Options::default().builtins(builtins()).apply(true);
    let out = crd::generate(&crds, &options).expect("generates");
    let runner_spec = &out.files["batch_example_com/v1/runner_spec_apply.rs"];
    assert!(
        runner_spec.contains("Option<kubeset::api::core::v1::PodTemplateSpecApply>"),
        "a reused model's apply type is kubeset's:\n{runner_spec}"
    );
    let conditions = &out.files["cert_manager_io/v1/certificate_status_conditions_apply.rs"];
    assert!(
        conditions.contains("pub fn new(type_: impl Into<String>) -> Self"),
        "keyed by `type`:\n{conditions}"
    );
    let mut files = common::under_src_crds(&out.files);
    files.insert(
        "src/lib.rs".into(),
        "#![deny(warnings)]\n#[rustfmt::skip]\npub mod crds;\n".into(),
    );
    files.insert("tests/apply.rs".into(), USER_TEST.into());
    let run = common::cargo_in_user_crate_with(
        "crd-apply",
        &files,
        &["test", "--quiet"],
        false,
        &["apply"],
    );
    eprintln!("cargo test in the user crate: {:?}", run.elapsed);
    assert!(run.ok, "the user crate failed:\n{}", run.output);
    assert!(run.output.contains("2 passed"), "{}", run.output);
}

/// The user crate's test: builders → JSON (exactly what was set, with
/// `apiVersion` and `kind`) → back to the apply type.
const USER_TEST: &str = r#"
use crd_apply::crds::batch_example_com::v1::{RunnerApply, RunnerSpecApply};
use crd_apply::crds::cert_manager_io::v1::{
    CertificateApply, CertificateSpecApply, CertificateSpecIssuerRefApply, CertificateStatusApply,
    CertificateStatusConditionsApply,
};
use kubeset::api::core::v1::{ContainerApply, PodSpecApply, PodTemplateSpecApply};
use serde_json::json;

#[test]
fn certificate() {
    let cert = CertificateApply::new("web", "prod")
        .with_label("team", "a")
        .with_spec(
            CertificateSpecApply::default()
                .with_secret_name("web-tls")
                .with_dns_names(["web.example.com".to_owned()])
                .with_issuer_ref(CertificateSpecIssuerRefApply::default().with_name("ca")),
        );
    let written = serde_json::to_value(&cert).expect("encodes");
    assert_eq!(written, json!({
        "apiVersion": "cert-manager.io/v1", "kind": "Certificate",
        "metadata": {"name": "web", "namespace": "prod", "labels": {"team": "a"}},
        "spec": {"secretName": "web-tls", "dnsNames": ["web.example.com"], "issuerRef": {"name": "ca"}},
    }));
    let back: CertificateApply = serde_json::from_value(written).expect("decodes");
    assert_eq!(back, cert);
    let status = CertificateApply::new("web", "prod").with_status(
        CertificateStatusApply::default()
            .with_conditions([CertificateStatusConditionsApply::new("Ready").with_reason("Issued")]),
    );
    assert_eq!(
        serde_json::to_value(&status).expect("encodes")["status"],
        json!({"conditions": [{"type": "Ready", "reason": "Issued"}]})
    );
}

#[test]
fn runner_with_a_reused_pod_template() {
    let runner = RunnerApply::new("r", "default").with_spec(
        RunnerSpecApply::default().with_replicas(2).with_template(
            PodTemplateSpecApply::default().with_spec(
                PodSpecApply::default()
                    .with_containers([ContainerApply::new("main").with_image("busybox:1.36")]),
            ),
        ),
    );
    assert_eq!(serde_json::to_value(&runner).expect("encodes"), json!({
        "apiVersion": "batch.example.com/v1", "kind": "Runner",
        "metadata": {"name": "r", "namespace": "default"},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]}}},
    }));
}
"#;
