//! Workspace tasks.
//!
//! - `cargo xtask test`: the whole suite as CI runs it (realkube, workspace
//!   tests, every group-version's round trips, codegen-compat); see
//!   [`mod@test`].
//! - `cargo xtask codegen [--check] [--specs DIR]`: regenerate `kubeset-api`
//!   from the Kubernetes version pinned in `specs/kubernetes-version`.
//!   It needs nothing beside the spec directory.
//! - `cargo xtask suite-crds [--check] [--crds DIR]`: regenerate the realkube
//!   suite's CRD types (`tests/tests/suite/crds/`) from real CRDs in `DIR`
//!   (default: `crds/` beside the spec root, `../shared/crds`).
//! - `cargo xtask codegen-compat [--specs DIR]`: generate from v1.35 (v3
//!   input only) and v1.36 (v2 input only) into a temporary crate and
//!   `cargo check` it with every feature.
//! - `cargo xtask fixtures [--specs DIR]`: rewrite the generated
//!   round-trip fixtures of `kubeset-api` (one full object per resource kind).
//! - `cargo xtask pin-specs <version> [--specs DIR]`: write
//!   `specs/kubernetes-<version>.sha256` from a spec directory.
//! - `cargo xtask fetch-specs <version>... [--dest DIR]`: download the
//!   pinned specs of one release or several from upstream and check their sha256.
//! - `cargo xtask fetch-specs <version>... --go-proxy [--dest DIR]`: assemble
//!   them from the release's Go modules (`go mod download`) into `DIR`
//!   (default `target/specs`), check their sha256, and link the spec
//!   root's other releases beside them (`KUBESET_SPECS=DIR` then sees all).
//! - `cargo xtask go-values`: write `specs/kubernetes-<version>.go-values`
//!   (which protobuf fields are Go values) from Go's types; see
//!   [`go_values`].
//! - `cargo xtask bench [--quick] [--only ROWS]`: kubeset vs
//!   kube-rs/k8s-openapi and client-go, written to `docs/benchmarks.md`
//!   (a partial `--only` run writes beside its data instead); see [`mod@bench`].
//! - `cargo xtask public-api [--bless]`: the facade's public API against
//!   `crates/kubeset/public-api.txt`; see [`public_api`].
//! - `cargo xtask fuzz [--smoke] [--seconds N] [TARGET...]`: build the
//!   libFuzzer targets of `fuzz/` on stable and run each for a bounded
//!   time (CI: `--smoke`); see [`fuzz`].

mod bench;
mod codegen;
mod fetch;
mod fuzz;
mod go_values;
mod public_api;
mod test;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// The directory holding `kubernetes/<version>/`: `--specs DIR`, else
/// `$KUBESET_SPECS`, else `../shared/specs` next to the workspace
/// ([`kubeset_codegen::spec_dir::root`], shared with the codegen tests).
fn specs_root(flag: Option<PathBuf>) -> PathBuf {
    kubeset_codegen::spec_dir::root(flag, &workspace_root())
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: cargo xtask test\n       \
         cargo xtask codegen [--check] [--specs DIR]\n       \
         cargo xtask suite-crds [--check] [--crds DIR]\n       \
         cargo xtask codegen-compat [--specs DIR]\n       \
         cargo xtask fixtures [--specs DIR]\n       \
         cargo xtask pin-specs <version> [--specs DIR]\n       \
         cargo xtask fetch-specs <version>... [--go-proxy] [--dest DIR]\n       \
         cargo xtask go-values\n       \
         cargo xtask bench [--quick] [--only codec,watch,roundtrip,failover,memory,build,admission,cli-size]\n       \
         cargo xtask public-api [--bless]\n       \
         cargo xtask fuzz [--smoke] [--seconds N] [TARGET...]"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut check = false;
    let mut quick = false;
    let mut bless = false;
    let mut smoke = false;
    let mut go_proxy = false;
    let mut seconds = None;
    let mut specs = None;
    let mut dest = None;
    let mut crds = None;
    let mut positional = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--check" => check = true,
            "--quick" => quick = true,
            "--bless" => bless = true,
            "--smoke" => smoke = true,
            "--go-proxy" => go_proxy = true,
            "--seconds" => match it.next().and_then(|v| v.parse().ok()) {
                Some(v) => seconds = Some(v),
                None => return usage(),
            },
            "--specs" => match it.next() {
                Some(v) => specs = Some(PathBuf::from(v)),
                None => return usage(),
            },
            "--crds" => match it.next() {
                Some(v) => crds = Some(PathBuf::from(v)),
                None => return usage(),
            },
            "--dest" => match it.next() {
                Some(v) => dest = Some(PathBuf::from(v)),
                None => return usage(),
            },
            "-h" | "--help" => return usage(),
            other => positional.push(other.to_owned()),
        }
    }
    let result = match positional.first().map(String::as_str) {
        Some("codegen") => codegen::run(&specs_root(specs), check),
        Some("suite-crds") => codegen::run_suite_crds(
            &crds.unwrap_or_else(|| kubeset_codegen::spec_dir::crds(&specs_root(specs.clone()))),
            &specs_root(specs),
            check,
        ),
        Some("codegen-compat") => codegen::compat(&specs_root(specs)),
        Some("fixtures") => codegen::fixtures(&specs_root(specs)),
        Some("test") => test::run_all(&specs_root(specs)),
        Some("go-values") => go_values::run(),
        Some("bench") => bench::run(quick),
        Some("public-api") => public_api::run(bless),
        Some("fuzz") => fuzz::run(smoke, seconds, &positional[1..]),
        Some("pin-specs") => match positional.get(1) {
            Some(version) => fetch::pin(version, &specs_root(specs)),
            None => return usage(),
        },
        Some("fetch-specs") if positional.len() > 1 => {
            let versions = &positional[1..];
            if go_proxy {
                let dest = dest.unwrap_or_else(|| workspace_root().join("target/specs"));
                let source = specs_root(specs);
                versions
                    .iter()
                    .try_for_each(|v| fetch::run_go_proxy(v, &dest, &source))
            } else {
                let dest = dest.unwrap_or_else(|| specs_root(specs));
                versions
                    .iter()
                    .try_for_each(|v| fetch::run(v, dest.clone()))
            }
        }
        _ => return usage(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            let mut source = std::error::Error::source(e.as_ref());
            while let Some(s) = source {
                eprintln!("  caused by: {s}");
                source = s.source();
            }
            ExitCode::FAILURE
        }
    }
}

type Error = Box<dyn std::error::Error>;
