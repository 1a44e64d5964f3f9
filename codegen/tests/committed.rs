//! The committed `kubeset-api` output is what the generator makes from the
//! pinned spec merged with the older releases beside it (the same check
//! as `cargo xtask codegen --check`, in memory).

use std::path::{Path, PathBuf};

use kubeset_codegen::{InputFormat, Output, emit, generate, load_versions, spec_dir};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The pinned version and its spec directory ([`spec_dir`], as xtask).
fn pinned() -> (String, PathBuf) {
    let version = spec_dir::pinned_version(&workspace()).unwrap();
    let dir = spec_dir::release(&spec_dir::root(None, &workspace()), &version);
    assert!(
        dir.is_dir(),
        "spec directory {} is missing: set {} to the folder holding kubernetes/{version}/",
        dir.display(),
        spec_dir::ENV
    );
    (version, dir)
}

#[test]
fn committed_output_is_current() {
    let (version, dir) = pinned();
    let output = generate(
        load_versions(&dir, InputFormat::Both).unwrap().1,
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
    let (version, dir) = pinned();
    let input = load_versions(&dir, InputFormat::Both).unwrap().1;
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
