//! `cargo xtask test`: the whole test suite, as CI runs it.
//!
//! 1. Starts realkube (a real kube-apiserver + etcd on loopback,
//!    `tests/realkube/realkube.sh`) unless one is already running. Without
//!    Go it cannot be built: that is an error, unless
//!    `KUBESET_SKIP_REALKUBE=1` asks to skip those tests, which is printed
//!    loudly. CI never sets it.
//! 2. `cargo test --workspace --no-fail-fast --features kubeset/runtime`, with
//!    `KUBESET_REALKUBE_ENV` naming the running instance's env file (unless
//!    set already), so that the embedded server's comparisons with the real
//!    one (kubeset-testserver's `validation.rs` goldens and `kubectl.rs`
//!    script) run live, not only against their recordings.
//! 3. `cargo test -p kubeset-api --features all`: the round trips of every
//!    group-version.
//! 4. `cargo xtask codegen-compat`: v1.35 (v3) and v1.36 (v2) generate and
//!    compile.
//! 5. Stops realkube if it started it, whatever the outcome.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Error, workspace_root};

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn run(step: &str, mut cmd: Command) -> Result<(), Error> {
    eprintln!("\n=== xtask test: {step}");
    let status = cmd
        .current_dir(workspace_root())
        .status()
        .map_err(|e| format!("{step}: cannot start: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{step} failed ({status})").into())
    }
}

fn realkube(arg: &[&str]) -> Command {
    let mut cmd = Command::new("bash");
    cmd.arg(workspace_root().join("tests/realkube/realkube.sh"))
        .args(arg);
    cmd
}

/// The env file `realkube.sh start` writes: `$REALKUBE_CACHE/env`, by
/// default `<workspace>/.cache/realkube/env`, as the script resolves it.
fn realkube_env_file() -> PathBuf {
    let root = workspace_root();
    std::env::var_os("REALKUBE_CACHE")
        .map(|c| root.join(c))
        .unwrap_or_else(|| root.join(".cache/realkube"))
        .join("env")
}

fn has_go() -> bool {
    Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

pub fn run_all(specs_root: &Path) -> Result<(), Error> {
    let mut started = false;
    let mut skip_realkube = false;
    let already = realkube(&["status"])
        .output()
        .is_ok_and(|o| o.status.success());
    if already {
        eprintln!("xtask test: realkube is already running; using it");
    } else if has_go() {
        run("build realkube", realkube(&["build"]))?;
        run(
            "start realkube",
            // The differential suite's MutatingAdmissionPolicy cases need the beta API.
            realkube(&[
                "start",
                "--apiservers",
                "3",
                "--routable-addresses",
                "--feature-gates",
                "MutatingAdmissionPolicy=true",
                "--runtime-config",
                "admissionregistration.k8s.io/v1beta1=true",
            ]),
        )?;
        started = true;
    } else if std::env::var("KUBESET_SKIP_REALKUBE").is_ok_and(|v| v == "1") {
        eprintln!(
            "\n!!!!!!!! xtask test: KUBESET_SKIP_REALKUBE=1: the real kube-apiserver tests are SKIPPED !!!!!!!!\n"
        );
        skip_realkube = true;
    } else {
        return Err(
            "Go is needed to build the real kube-apiserver for the integration suite: \
                    install Go, or set KUBESET_SKIP_REALKUBE=1 to skip that suite (loudly)"
                .into(),
        );
    }
    let result = (|| {
        let mut t = cargo();
        // `runtime` on the facade: its tests and the controller examples.
        // `--no-fail-fast`: one failing binary must not hide the others'.
        t.args([
            "test",
            "--workspace",
            "--no-fail-fast",
            "--features",
            "kubeset/runtime",
        ]);
        if skip_realkube {
            t.env("KUBESET_SKIP_REALKUBE", "1");
        } else if std::env::var_os("KUBESET_REALKUBE_ENV").is_none() {
            t.env("KUBESET_REALKUBE_ENV", realkube_env_file());
        }
        run("cargo test --workspace", t)?;
        let mut api = cargo();
        api.args(["test", "-p", "kubeset-api", "--features", "all"]);
        run("cargo test -p kubeset-api --features all", api)?;
        eprintln!("\n=== xtask test: codegen-compat");
        crate::codegen::compat(specs_root)
    })();
    if started {
        let stop = run("stop realkube", realkube(&["stop"]));
        if let Err(e) = stop {
            eprintln!("xtask test: {e}");
        }
    }
    result
}
