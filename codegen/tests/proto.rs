//! The protobuf join against the pinned spec (merged with the older
//! releases beside it, as `cargo xtask codegen` reads it) and its upstream
//! `generated.proto` files: the committed codecs are current, every
//! disagreement fails the run, a fixup that matches nothing fails it, Go
//! embedded structs become nested messages, and a version without proto
//! files generates JSON-only models.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use kubeset_codegen::proto::{self, GoValues, ProtoError, ProtoSet, Shape, join};
use kubeset_codegen::{InputFormat, Ir, Output, load_versions};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn spec_dir() -> (PathBuf, String) {
    let version = std::fs::read_to_string(workspace().join("specs/kubernetes-version")).unwrap();
    let version = version.trim().to_owned();
    let root = std::env::var_os("KUBESET_SPECS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("../shared/specs"));
    (root.join("kubernetes").join(&version), version)
}

fn inputs() -> &'static (Ir, ProtoSet, String) {
    static INPUTS: OnceLock<(Ir, ProtoSet, String)> = OnceLock::new();
    INPUTS.get_or_init(|| {
        let (dir, version) = spec_dir();
        let input = load_versions(&dir, InputFormat::Both).unwrap().1;
        let ir = kubeset_codegen::ir::lower(input).unwrap();
        let set = proto::load(&dir).unwrap().expect("v1.35 has proto files");
        (ir, set, version)
    })
}

const GO_VALUES: &str = "go-values";

/// The committed Go value-field table of the pinned version.
fn go_values_text() -> String {
    let (_, version) = spec_dir();
    let path = workspace().join(format!("specs/kubernetes-{version}.go-values"));
    std::fs::read_to_string(path).unwrap()
}

fn go_values() -> &'static GoValues {
    static VALUES: OnceLock<GoValues> = OnceLock::new();
    VALUES.get_or_init(|| GoValues::parse(GO_VALUES, &go_values_text()).unwrap())
}

fn join(ir: &Ir, set: &ProtoSet) -> Result<proto::Codecs, ProtoError> {
    join::join(ir, set, go_values(), GO_VALUES)
}

fn join_with(ir: &Ir, set: &ProtoSet, fixups: &[join::Fixup]) -> Result<proto::Codecs, ProtoError> {
    join::join_with(ir, set, fixups, go_values(), GO_VALUES)
}

#[test]
fn committed_codecs_are_current() {
    let (ir, set, version) = inputs();
    let codecs = join(ir, set).unwrap();
    assert!(codecs.types.len() > 700, "{}", codecs.types.len());
    let mut out = Output::default();
    proto::emit::emit(
        ir,
        Some(&codecs),
        &format!("kubernetes/{version}"),
        &mut out,
    )
    .unwrap();
    let api = workspace().join("crates/kubeset-api");
    let stale: Vec<_> = out
        .files
        .iter()
        .filter(|(path, text)| {
            std::fs::read_to_string(api.join(path)).ok().as_deref() != Some(text)
        })
        .map(|(path, _)| path.clone())
        .collect();
    assert!(stale.is_empty(), "run `cargo xtask codegen`: {stale:?}");
}

#[test]
fn embedded_go_structs_are_nested_messages() {
    let (ir, set, _) = inputs();
    let codecs = join(ir, set).unwrap();
    let probe = &codecs.types["io.k8s.api.core.v1.Probe"];
    let handler = probe.fields.iter().find(|f| f.number == 1).unwrap();
    let Shape::Embedded(inner) = &handler.shape else {
        panic!("Probe.handler is {:?}", handler.shape);
    };
    let names: Vec<&str> = inner.iter().map(|f| f.json.as_str()).collect();
    assert_eq!(names, ["exec", "httpGet", "tcpSocket", "grpc"]);
    let meta = &codecs.types["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"];
    let name = meta.fields.iter().find(|f| f.json == "name").unwrap();
    assert!(name.zero_is_unset, "ObjectMeta.name is a Go value field");
    let deploy = &codecs.types["io.k8s.api.apps.v1.DeploymentSpec"];
    let replicas = deploy.fields.iter().find(|f| f.json == "replicas").unwrap();
    assert!(!replicas.zero_is_unset, "replicas: 0 is kept");
}

#[test]
fn go_value_fields_come_from_the_table() {
    let (ir, set, _) = inputs();
    let codecs = join(ir, set).unwrap();
    let field = |definition: &str, json: &str| {
        codecs.types[definition]
            .fields
            .iter()
            .find(|f| f.json == json)
            .unwrap_or_else(|| panic!("{definition}.{json}"))
            .zero_is_unset
    };
    // Go `int32` with omitempty: 0 is what Go writes for "not set".
    assert!(field("io.k8s.api.core.v1.ServicePort", "nodePort"));
    assert!(field("io.k8s.api.core.v1.PodSpec", "hostNetwork"));
    // `*int64` and a plain required value keep what the wire says.
    assert!(!field(
        "io.k8s.api.core.v1.PodSpec",
        "terminationGracePeriodSeconds"
    ));
    assert!(!field("io.k8s.api.core.v1.ServicePort", "port"));
}

#[test]
fn a_stale_go_value_table_fails_the_run() {
    let (ir, set, _) = inputs();
    let text = go_values_text();
    let without_pod_spec: String = text
        .lines()
        .filter(|l| !l.starts_with("io.k8s.api.core.v1.PodSpec "))
        .map(|l| format!("{l}\n"))
        .collect();
    let values = GoValues::parse(GO_VALUES, &without_pod_spec).unwrap();
    let err = join::join(ir, set, &values, GO_VALUES)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("io.k8s.api.core.v1.PodSpec is joined but not listed")
            && err.contains("cargo xtask go-values"),
        "{err}"
    );
    let renamed = text.replace(" nodePort ", " nodePortNumber ");
    let values = GoValues::parse(GO_VALUES, &renamed).unwrap();
    let err = join::join(ir, set, &values, GO_VALUES)
        .unwrap_err()
        .to_string();
    assert!(err.contains("has no field \"nodePortNumber\""), "{err}");
}

#[test]
fn a_disagreement_fails_the_run() {
    let (ir, set, _) = inputs();
    let mut set = set.clone();
    let pod = set.messages.get_mut("k8s.io.api.core.v1.PodSpec").unwrap();
    pod.fields.retain(|f| f.name != "nodeName");
    let err = join(ir, &set).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, ProtoError::Mismatches { count: 1, .. }),
        "{text}"
    );
    assert!(
        text.contains("io.k8s.api.core.v1.PodSpec") && text.contains("nodeName"),
        "{text}"
    );
}

#[test]
fn a_fixup_that_matches_nothing_fails_the_run() {
    let (ir, set, _) = inputs();
    let mut fixups = join::FIXUPS.to_vec();
    fixups.push(join::Fixup {
        name: "gone_upstream",
        renames: &[("io.k8s.api.core.v1.Pod", "nothing", "Nothing")],
    });
    let err = join_with(ir, set, &fixups).unwrap_err();
    assert!(
        matches!(
            err,
            ProtoError::FixupNoLongerApplies {
                fixup: "gone_upstream",
                ..
            }
        ),
        "{err}"
    );
    // Each of the real fixups is needed.
    for skip in join::FIXUPS {
        let fewer: Vec<_> = join::FIXUPS
            .iter()
            .filter(|f| f.name != skip.name)
            .copied()
            .collect();
        assert!(
            join_with(ir, set, &fewer).is_err(),
            "{} is not needed",
            skip.name
        );
    }
}

#[test]
fn no_proto_files_means_json_only() {
    let dir = tempfile::tempdir().unwrap();
    assert!(proto::load(dir.path()).unwrap().is_none());
    let (ir, _, _) = inputs();
    let mut out = Output::default();
    proto::emit::emit(ir, None, "kubernetes/test", &mut out).unwrap();
    let files: Vec<&str> = out.files.keys().map(String::as_str).collect();
    assert_eq!(
        files,
        [
            "src/protobuf/generated/kinds.rs",
            "src/protobuf/generated/mod.rs"
        ]
    );
    assert!(out.files["src/protobuf/generated/mod.rs"].contains("JSON-only"));
}
