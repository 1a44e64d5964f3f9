//! Cargo runs in crates outside the workspace, with a target dir shared by
//! every run (`target/crd-user`), so only the crate itself is rebuilt each
//! time: a fresh user crate in a temp dir that depends only on the
//! `kubeset` facade (by path), `serde` and `serde_json`, or any crate dir
//! ([`run_cargo`]).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("codegen is inside the workspace")
        .to_owned()
}

/// `<spec root>/../crds` (`$KUBESET_SPECS/../crds`, else `../shared/crds`
/// next to the workspace: `kubeset_codegen::spec_dir`, as xtask).
pub fn shared_crds() -> PathBuf {
    let dir = kubeset_codegen::spec_dir::crds(&kubeset_codegen::spec_dir::root(None, &workspace()));
    assert!(
        dir.is_dir(),
        "{} is missing: the real CRDs live in ../shared/crds next to the workspace",
        dir.display()
    );
    dir
}

/// What a `cargo` run in the user crate gave.
pub struct Run {
    /// Whether it succeeded.
    pub ok: bool,
    /// stdout and stderr.
    pub output: String,
    /// Wall clock (for the report only; never asserted).
    pub elapsed: Duration,
}

/// Writes a crate named `name` with `files` (paths relative to the crate
/// root) into a new temp dir, runs `cargo <args>` in it and returns the
/// outcome. The workspace's `Cargo.lock` is used, offline. With `doctests`
/// false, rustdoc does not scan the library (the largest share of the cost
/// for a big generated tree); the library has no unit tests either way.
pub fn cargo_in_user_crate(
    name: &str,
    files: &BTreeMap<String, String>,
    args: &[&str],
    doctests: bool,
) -> Run {
    cargo_in_user_crate_with(name, files, args, doctests, &[])
}

/// [`cargo_in_user_crate`] with the facade's cargo `features` on.
pub fn cargo_in_user_crate_with(
    name: &str,
    files: &BTreeMap<String, String>,
    args: &[&str],
    doctests: bool,
    features: &[&str],
) -> Run {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = workspace();
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [lib]\ntest = false\ndoctest = {doctests}\n\n[workspace]\n\n[dependencies]\n\
         kubeset = {{ path = {:?}, features = {features:?} }}\nserde = {{ version = \"1\", features = [\"derive\"] }}\nserde_json = \"1\"\n",
        root.join("crates/kubeset").to_string_lossy()
    );
    write(dir.path(), "Cargo.toml", &manifest);
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).expect("workspace Cargo.lock");
    write(dir.path(), "Cargo.lock", &lock);
    for (path, text) in files {
        write(dir.path(), path, text);
    }
    run_cargo(dir.path(), args)
}

/// `cargo <args> --offline` in `dir`, with the shared target dir.
pub fn run_cargo(dir: &Path, args: &[&str]) -> Run {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let start = Instant::now();
    let out = Command::new(cargo)
        .args(args)
        .arg("--offline")
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", workspace().join("target/crd-user"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    Run {
        ok: out.status.success(),
        output: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        elapsed: start.elapsed(),
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(&path, text).expect("write");
}

/// The generated files placed under `src/crds/`.
pub fn under_src_crds(files: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(p, t)| (format!("src/crds/{p}"), t.clone()))
        .collect()
}
