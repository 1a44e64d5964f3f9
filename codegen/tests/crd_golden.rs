//! Golden tests of `kubeset-codegen crd`: the small hand-written CRDs of
//! `tests/crd_golden/crds/` (one per group of constructs) must give exactly
//! `tests/crd_golden/expected/` (`UPDATE_GOLDEN=1` rewrites it), and that
//! code must compile in a fresh user crate and pass
//! `tests/crd_golden/roundtrip.rs` there.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kubeset_codegen::crd::{self, Generated, Options};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/crd_golden")
}

fn generated() -> (Generated, Vec<String>) {
    let dir = golden_dir();
    let (crds, notes) = crd::read_paths(&[dir.join("crds")]).expect("golden CRDs parse");
    // Notes name the files relative to the test's working directory.
    let notes = notes
        .into_iter()
        .map(|n| n.replace(&dir.display().to_string(), "crd_golden"))
        .collect();
    (
        crd::generate(&crds, &Options::default()).expect("golden CRDs generate"),
        notes,
    )
}

fn read_tree(dir: &Path, base: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).expect("expected dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            read_tree(&path, base, out);
        } else {
            let rel = path.strip_prefix(base).expect("under base");
            out.insert(
                rel.to_string_lossy().replace('\\', "/"),
                std::fs::read_to_string(&path).expect("read"),
            );
        }
    }
}

#[test]
fn golden_crds_match_expected() {
    let (out, notes) = generated();
    assert_eq!(
        notes,
        [
            "crd_golden/crds/stream.yaml: skipped ConfigMap \"not-a-crd\" (not a CustomResourceDefinition)",
            "crd_golden/crds/stream.yaml: skipped Secret \"skipped-too\" (not a CustomResourceDefinition)",
        ]
    );
    let warnings: Vec<String> = out.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            "CRD routes.golden.example.com version v1 at .spec.ambiguous: oneOf/anyOf alternatives \
          that are not distinguishable by JSON type; kept as serde_json::Value"
        ]
    );
    let expected_dir = golden_dir().join("expected");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        out.write_to(&expected_dir).expect("rewrite goldens");
    }
    let mut expected = BTreeMap::new();
    read_tree(&expected_dir, &expected_dir, &mut expected);
    let names = |m: &BTreeMap<String, String>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&out.files),
        names(&expected),
        "file set differs (UPDATE_GOLDEN=1 rewrites)"
    );
    for (path, text) in &out.files {
        assert_eq!(
            text, &expected[path],
            "{path} differs (UPDATE_GOLDEN=1 rewrites)"
        );
    }
    // Deterministic: a second run gives the same bytes.
    assert_eq!(generated().0.files, out.files);
}

#[test]
fn golden_output_compiles_and_round_trips_in_a_user_crate() {
    let (out, _) = generated();
    let mut files = common::under_src_crds(&out.files);
    files.insert(
        "src/lib.rs".into(),
        "#![deny(warnings)]\n//! Golden CRD types.\npub mod crds;\n".into(),
    );
    files.insert(
        "tests/roundtrip.rs".into(),
        std::fs::read_to_string(golden_dir().join("roundtrip.rs")).expect("roundtrip.rs"),
    );
    let run = common::cargo_in_user_crate("crd-golden", &files, &["test", "--quiet"], true);
    assert!(run.ok, "the golden user crate failed:\n{}", run.output);
    // The five tests of roundtrip.rs ran (and no description became a doctest).
    assert!(run.output.contains("5 passed"), "{}", run.output);
    eprintln!("golden user crate: cargo test in {:?}", run.elapsed);
}
