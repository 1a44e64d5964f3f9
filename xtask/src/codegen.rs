//! `cargo xtask codegen` and `cargo xtask codegen-compat`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;

use kubeset_codegen::{InputFormat, Output, emit, emit_client, spec_dir};

use crate::{Error, workspace_root};

/// The pinned Kubernetes version (`specs/kubernetes-version`).
fn pinned_version() -> Result<String, Error> {
    Ok(spec_dir::pinned_version(&workspace_root())?)
}

/// Progress on stderr: one rewritten line on a terminal, a line per
/// thousand files otherwise.
struct Progress {
    tty: bool,
    total: usize,
    done: usize,
}

impl Progress {
    fn new(total: usize) -> Self {
        Self {
            tty: std::io::stderr().is_terminal(),
            total,
            done: 0,
        }
    }

    fn step(&mut self, what: &str) {
        self.done += 1;
        let mut err = std::io::stderr();
        if self.tty {
            let _ = write!(err, "\r\x1b[K[{}/{}] {what}", self.done, self.total);
        } else if self.done.is_multiple_of(1000) || self.done == self.total {
            let _ = writeln!(err, "[{}/{}] {what}", self.done, self.total);
        }
    }

    fn finish(&self) {
        if self.tty {
            let _ = writeln!(std::io::stderr());
        }
    }
}

fn generate(dir: &Path, format: InputFormat, label: &str) -> Result<Output, Error> {
    eprintln!("reading {}", dir.display());
    let input = kubeset_codegen::load(dir, format)?;
    eprintln!("generating from {} definitions", input.definitions.len());
    Ok(kubeset_codegen::generate(input, label)?)
}

fn existing_files(
    crate_dir: &Path,
    owned_dirs: &[String],
    owned_files: &[String],
) -> Result<BTreeSet<String>, Error> {
    fn walk(dir: &Path, base: &Path, out: &mut BTreeSet<String>) -> std::io::Result<()> {
        if !dir.is_dir() {
            return Ok(());
        }
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(&path, base, out)?;
            } else if let Ok(rel) = path.strip_prefix(base) {
                out.insert(rel.to_string_lossy().replace('\\', "/"));
            }
        }
        Ok(())
    }
    let mut out = BTreeSet::new();
    for dir in owned_dirs {
        walk(&crate_dir.join(dir), crate_dir, &mut out)?;
    }
    for file in owned_files {
        if crate_dir.join(file).is_file() {
            out.insert(file.clone());
        }
    }
    Ok(out)
}

/// All files the generator owns, with their wanted content.
fn wanted(crate_dir: &Path, output: &Output) -> Result<BTreeMap<String, String>, Error> {
    let mut files = output.files.clone();
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml"))?;
    files.insert(
        "Cargo.toml".to_owned(),
        emit::splice_features(&manifest, &output.features),
    );
    Ok(files)
}

/// One crate's generated files: the wanted content and what the generator owns there.
struct Target {
    crate_dir: PathBuf,
    files: BTreeMap<String, String>,
    owned_dirs: Vec<String>,
    owned_files: Vec<String>,
}

impl Target {
    fn existing(&self) -> Result<BTreeSet<String>, Error> {
        existing_files(&self.crate_dir, &self.owned_dirs, &self.owned_files)
    }
}

fn splice_manifest(
    crate_dir: &Path,
    features: &str,
    files: &mut BTreeMap<String, String>,
) -> Result<(), Error> {
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml"))?;
    if !manifest.contains(emit::FEATURES_BEGIN) {
        return Err(format!(
            "{}/Cargo.toml lacks the generated features markers inside [features]",
            crate_dir.display()
        )
        .into());
    }
    files.insert(
        "Cargo.toml".to_owned(),
        emit::splice_features(&manifest, features),
    );
    Ok(())
}

/// Real CRDs whose generated types the realkube suite uses
/// (`tests/tests/suite/crdin.rs`), by file name below the CRD directory.
const SUITE_CRDS: &[&str] = &[
    "certificates.cert-manager.io",
    "gatewayclasses.gateway.networking.k8s.io",
    "referencegrants.gateway.networking.k8s.io",
    "scaledobjects.keda.sh",
];

/// Where the suite's CRD types go, below `tests/`.
const SUITE_CRD_DIR: &str = "tests/suite/crds";

/// `kubeset-codegen crd --apply` of [`SUITE_CRDS`] (read from `crd_dir`)
/// into `tests/tests/suite/crds/`, reusing the built-in models of the
/// pinned release under `specs_root` (the facade's default
/// group-versions), with the apply types the suite applies.
fn suite_crds(crd_dir: &Path, specs_root: &Path, root: &Path) -> Result<Target, Error> {
    let paths: Vec<PathBuf> = SUITE_CRDS
        .iter()
        .map(|name| crd_dir.join(format!("{name}.yaml")))
        .collect();
    let (crds, _) = kubeset_codegen::crd::read_paths(&paths)?;
    let release = spec_dir::release(specs_root, &pinned_version()?);
    let builtins = kubeset_codegen::crd::reuse::Builtins::from_spec_dir(
        &release,
        kubeset_codegen::crd::reuse::DEFAULT_FEATURES,
    )?;
    let options = kubeset_codegen::crd::Options::default()
        .command("cargo xtask suite-crds")
        .builtins(std::sync::Arc::new(builtins))
        .apply(true);
    let out = kubeset_codegen::crd::generate(&crds, &options)?;
    if let Some(w) = out.warnings.first() {
        return Err(format!("suite CRDs: {w}").into());
    }
    Ok(Target {
        crate_dir: root.join("tests"),
        files: out
            .files
            .into_iter()
            .map(|(path, text)| (format!("{SUITE_CRD_DIR}/{path}"), text))
            .collect(),
        owned_dirs: vec![SUITE_CRD_DIR.to_owned()],
        owned_files: Vec::new(),
    })
}

/// `cargo xtask suite-crds [--check] [--crds DIR]`: the realkube suite's
/// CRD types, a step of their own so that `cargo xtask codegen --specs DIR`
/// needs nothing beside the spec directory. `crd_dir` defaults to the
/// spec root's sibling `crds/` (`../shared/crds`); the built-in models the
/// types reuse come from the pinned release under `specs_root`.
pub fn run_suite_crds(crd_dir: &Path, specs_root: &Path, check: bool) -> Result<(), Error> {
    let target = suite_crds(crd_dir, specs_root, &workspace_root())?;
    write_targets(&[target], check, "cargo xtask suite-crds")
}

pub fn run(specs_root: &Path, check: bool) -> Result<(), Error> {
    let version = pinned_version()?;
    let dir = spec_dir::release(specs_root, &version);
    let label = format!("kubernetes/{version}");
    // The pinned release and the older ones beside it, merged (one tree,
    // gated by the `v1_*` features).
    for (older, older_dir) in kubeset_codegen::merge::siblings(&dir) {
        crate::fetch::verify(&older, &older_dir)?;
        eprintln!("reading {}", older_dir.display());
    }
    let (versions, input) = kubeset_codegen::load_versions(&dir, InputFormat::Both)?;
    eprintln!(
        "generating from {} definitions of {}",
        input.definitions.len(),
        versions.join(", ")
    );
    let definitions = input.definitions.clone();
    let ir = kubeset_codegen::ir::lower(input)?;
    let mut output = emit::emit(&ir, &label)?;
    kubeset_codegen::emit_schema::add(&ir, &definitions, &label, &mut output)?;
    let go_values = crate::go_values::path(&version);
    kubeset_codegen::proto::emit::emit_dir(&dir, &go_values, &ir, &label, &mut output)?;
    let client = emit_client::emit(&ir, &label)?;
    let root = workspace_root();
    let api_dir = root.join("crates/kubeset-api");
    let client_dir = root.join("crates/kubeset-client");
    let facade_dir = root.join("crates/kubeset");
    let mut client_files = client.files.clone();
    splice_manifest(&client_dir, &client.client_features, &mut client_files)?;
    let mut facade_files = BTreeMap::new();
    splice_manifest(&facade_dir, &client.facade_features, &mut facade_files)?;
    let targets = [
        Target {
            files: wanted(&api_dir, &output)?,
            crate_dir: api_dir,
            owned_dirs: [
                Output::owned_dirs(),
                vec![kubeset_codegen::emit_schema::SCHEMA_DIR.to_owned()],
            ]
            .concat(),
            owned_files: Output::owned_files(),
        },
        Target {
            crate_dir: client_dir,
            files: client_files,
            owned_dirs: vec![emit_client::CLIENT_DIR.to_owned()],
            owned_files: Vec::new(),
        },
        Target {
            crate_dir: facade_dir,
            files: facade_files,
            owned_dirs: Vec::new(),
            owned_files: Vec::new(),
        },
    ];
    write_targets(&targets, check, "cargo xtask codegen")?;
    if check {
        return Ok(());
    }
    let bytes: usize = output.files.values().map(String::len).sum::<usize>()
        + client.files.values().map(String::len).sum::<usize>();
    eprintln!(
        "generated source: {} files, {:.2} MB",
        output.files.len() + client.files.len(),
        bytes as f64 / 1_000_000.0
    );
    Ok(())
}

/// Writes (or with `check`, compares) every target's files; stale files
/// the generator owns are removed. `command` is what the error of a failed
/// check tells the user to run.
fn write_targets(targets: &[Target], check: bool, command: &str) -> Result<(), Error> {
    let mut changed = Vec::new();
    let mut stale = Vec::new();
    let total: usize = targets.iter().map(|t| t.files.len()).sum();
    let mut progress = Progress::new(total);
    for target in targets {
        let existing = target.existing()?;
        stale.extend(
            existing
                .iter()
                .filter(|f| !target.files.contains_key(*f))
                .map(|f| target.crate_dir.join(f)),
        );
        for (path, text) in &target.files {
            progress.step(path);
            let full = target.crate_dir.join(path);
            let current = std::fs::read_to_string(&full).ok();
            if current.as_deref() != Some(text.as_str()) {
                changed.push(full.clone());
                if !check {
                    if let Some(parent) = full.parent() {
                        std::fs::create_dir_all(parent)?;
                    }
                    std::fs::write(&full, text)?;
                }
            }
        }
    }
    progress.finish();
    if check {
        if changed.is_empty() && stale.is_empty() {
            eprintln!("{total} generated files are up to date");
            return Ok(());
        }
        let example = changed
            .first()
            .or(stale.first())
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        return Err(format!(
            "generated code is out of date ({} changed or missing, {} stale, e.g. {example}): run `{command}`",
            changed.len(),
            stale.len()
        )
        .into());
    }
    for path in &stale {
        std::fs::remove_file(path)?;
    }
    for target in targets {
        for dir in &target.owned_dirs {
            remove_empty_dirs(&target.crate_dir.join(dir))?;
        }
    }
    eprintln!(
        "wrote {} of {total} files ({} stale removed)",
        changed.len(),
        stale.len()
    );
    Ok(())
}

fn remove_empty_dirs(dir: &Path) -> std::io::Result<bool> {
    if !dir.is_dir() {
        return Ok(false);
    }
    let mut empty = true;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if !(path.is_dir() && remove_empty_dirs(&path)?) {
            empty = false;
        }
    }
    if empty {
        std::fs::remove_dir(dir)?;
    }
    Ok(empty)
}

/// Generates from older versions and other input formats into a temporary
/// crate and type-checks it with every feature.
pub fn compat(specs_root: &Path) -> Result<(), Error> {
    let root = workspace_root();
    let api_dir = root.join("crates/kubeset-api");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    for (version, format) in [("v1.35", InputFormat::V3), ("v1.36", InputFormat::V2)] {
        let dir = spec_dir::release(specs_root, version);
        crate::fetch::verify(version, &dir)?;
        let output = generate(&dir, format, &format!("kubernetes/{version}"))?;
        let work = target.join("codegen-compat").join(version);
        if work.exists() {
            std::fs::remove_dir_all(&work)?;
        }
        let replaced: Vec<String> = Output::owned_dirs()
            .into_iter()
            .chain(Output::owned_files())
            .collect();
        kubeset_codegen::standalone::ApiCrate {
            api_dir: &api_dir,
            derive_dir: &root.join("crates/kubeset-derive"),
            replaced: &replaced,
            files: &output.files,
            features: &output.features,
        }
        .write_to(&work)?;
        eprintln!(
            "{version}: {} files generated; cargo check --features all",
            output.files.len()
        );
        let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .args(["check", "--quiet", "--features", "all", "--manifest-path"])
            .arg(work.join("Cargo.toml"))
            .env(
                "CARGO_TARGET_DIR",
                target.join("codegen-compat").join("target"),
            )
            .status()?;
        if !status.success() {
            return Err(format!("generated crate for {version} does not compile").into());
        }
        eprintln!("{version}: ok");
    }
    Ok(())
}

/// Writes one full example object per resource kind under
/// `crates/kubeset-api/tests/fixtures/generated/` and the test file that
/// round-trips them.
pub fn fixtures(specs_root: &Path) -> Result<(), Error> {
    let version = pinned_version()?;
    let dir = spec_dir::release(specs_root, &version);
    let input = kubeset_codegen::load(&dir, InputFormat::Both)?;
    let ir = kubeset_codegen::ir::lower(input)?;
    let tests_dir = workspace_root().join("crates/kubeset-api/tests");
    let fixtures_dir = tests_dir.join("fixtures/generated");
    if fixtures_dir.exists() {
        std::fs::remove_dir_all(&fixtures_dir)?;
    }
    let mut tests = String::from(
        "// Generated by `cargo xtask fixtures`, do not edit.\n\
         //! Round-trips one full example object (every field set) per resource kind.\n\n\
         #![allow(unused)]\n",
    );
    // The examples are the pinned (newest) version's objects: under an
    // older version's feature their kinds or fields may not exist.
    let older: Vec<String> = kubeset_codegen::merge::siblings(&dir)
        .into_iter()
        .map(|(v, _)| v)
        .filter(|v| *v != version)
        .collect();
    if !older.is_empty() {
        let features: Vec<String> = older
            .iter()
            .map(|v| {
                format!(
                    "feature = \"{}\"",
                    kubeset_codegen::versions::Gate::feature(v)
                )
            })
            .collect();
        tests.push_str(&format!(
            "// The examples are {version}'s objects: not under an older version's feature.\n\
             #![cfg(not(any({})))]\n",
            features.join(", ")
        ));
    }
    tests.push_str("\nmod common;\n");
    let mut count = 0;
    let mut bytes = 0;
    for t in ir.types.values() {
        let (Some(feature), Some(_)) = (&t.feature, &t.resource) else {
            continue;
        };
        let Some(value) = kubeset_codegen::examples::example(&ir, &t.definition) else {
            continue;
        };
        let file = format!(
            "{feature}/{}.json",
            kubeset_codegen::names::snake_case(&t.name)
        );
        let text = serde_json_pretty(&value)?;
        bytes += text.len();
        let full = fixtures_dir.join(&file);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&full, text)?;
        let test_name = format!(
            "{}_{}",
            kubeset_codegen::names::group_version_module(feature),
            kubeset_codegen::names::snake_case(&t.name)
        );
        tests.push_str(&format!(
            "\n#[cfg(feature = \"{feature}\")]\n#[test]\nfn {test_name}() {{\n    \
             common::round_trip::<kubeset_api::{}::{}>(include_str!(\"fixtures/generated/{file}\"));\n}}\n",
            t.modules.join("::"),
            t.name
        ));
        count += 1;
    }
    let test_file = tests_dir.join("roundtrip_generated.rs");
    std::fs::write(&test_file, tests)?;
    // Keep `cargo fmt --check` green: the file is ordinary test code.
    let status = Command::new("rustfmt")
        .args(["--edition", "2024"])
        .arg(&test_file)
        .status()?;
    if !status.success() {
        return Err(format!("rustfmt {} failed", test_file.display()).into());
    }
    eprintln!(
        "wrote {count} fixtures ({:.2} MB) and tests/roundtrip_generated.rs",
        bytes as f64 / 1e6
    );
    Ok(())
}

fn serde_json_pretty(value: &serde_json::Value) -> Result<String, Error> {
    let mut s = serde_json::to_string_pretty(value)?;
    s.push('\n');
    Ok(s)
}
