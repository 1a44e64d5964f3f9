//! The committed `kubeset-api` output is what the generator makes from the
//! pinned spec (the same check as `cargo xtask codegen --check`, in memory).

use std::path::{Path, PathBuf};

use kubeset_codegen::{InputFormat, Output, emit, generate, load};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn committed_output_is_current() {
    let version = std::fs::read_to_string(workspace().join("specs/kubernetes-version")).unwrap();
    let version = version.trim();
    let root = std::env::var_os("KUBESET_SPECS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("../shared/specs"));
    let dir = root.join("kubernetes").join(version);
    assert!(
        dir.is_dir(),
        "spec directory {} is missing: set KUBESET_SPECS to the folder holding kubernetes/{version}/",
        dir.display()
    );
    let output = generate(
        load(&dir, InputFormat::Both).unwrap(),
        &format!("kubernetes/{version}"),
    )
    .unwrap();
    let api = workspace().join("crates/kubeset-api");
    let mut stale = Vec::new();
    for (path, text) in &output.files {
        if std::fs::read_to_string(api.join(path)).ok().as_deref() != Some(text.as_str()) {
            stale.push(path.clone());
        }
    }
    let manifest = std::fs::read_to_string(api.join("Cargo.toml")).unwrap();
    if emit::splice_features(&manifest, &output.features) != manifest {
        stale.push("Cargo.toml".into());
    }
    assert!(
        stale.is_empty(),
        "run `cargo xtask codegen`: {} files differ, e.g. {:?}",
        stale.len(),
        stale.first()
    );
    assert!(output.files.len() > 700);
    assert_eq!(
        Output::owned_dirs().len(),
        5,
        "four modules and the protobuf codecs"
    );
}

/// The committed clientset of `kubeset-client` and the generated features
/// of `kubeset-client` and `kubeset` are current.
#[test]
fn committed_clientset_is_current() {
    let version = std::fs::read_to_string(workspace().join("specs/kubernetes-version")).unwrap();
    let version = version.trim();
    let root = std::env::var_os("KUBESET_SPECS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("../shared/specs"));
    let input = load(&root.join("kubernetes").join(version), InputFormat::Both).unwrap();
    let ir = kubeset_codegen::ir::lower(input).unwrap();
    let out = kubeset_codegen::emit_client::emit(&ir, &format!("kubernetes/{version}")).unwrap();
    let client = workspace().join("crates/kubeset-client");
    let mut stale = Vec::new();
    for (path, text) in &out.files {
        if std::fs::read_to_string(client.join(path)).ok().as_deref() != Some(text.as_str()) {
            stale.push(path.clone());
        }
    }
    for (dir, features) in [
        ("crates/kubeset-client", &out.client_features),
        ("crates/kubeset", &out.facade_features),
    ] {
        let manifest = std::fs::read_to_string(workspace().join(dir).join("Cargo.toml")).unwrap();
        if emit::splice_features(&manifest, features) != manifest {
            stale.push(format!("{dir}/Cargo.toml"));
        }
    }
    assert!(
        stale.is_empty(),
        "run `cargo xtask codegen`: {} files differ, e.g. {:?}",
        stale.len(),
        stale.first()
    );
    assert!(out.files.contains_key("src/clientset/core_v1.rs"));
}
