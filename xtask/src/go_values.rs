//! `cargo xtask go-values`: writes `specs/kubernetes-<version>.go-values`,
//! which optional scalar fields of the built-in types are Go values with
//! `omitempty` (read from Go's own types by `xtask/govalues`, a Go program
//! in its own module pinned to the Kubernetes version's Go modules).
//!
//! Go's protobuf encoder writes such a field even when it is zero; its JSON
//! omits it. The protobuf codecs read that zero as unset, so an object
//! decodes the same from either format (`kubeset_codegen::proto::GoValues`).

use std::process::Command;

use crate::{Error, workspace_root};

/// The file's path for `version`.
pub fn path(version: &str) -> std::path::PathBuf {
    workspace_root().join(format!("specs/kubernetes-{version}.go-values"))
}

/// Runs the Go program and writes the pinned version's file.
pub fn run() -> Result<(), Error> {
    let version = kubeset_codegen::spec_dir::pinned_version(&workspace_root())?;
    let module = workspace_root().join("xtask/govalues");
    let go_mod = std::fs::read_to_string(module.join("go.mod"))?;
    let minor = version
        .strip_prefix("v1.")
        .ok_or_else(|| format!("pinned version {version} is not v1.NN"))?;
    let want = format!("k8s.io/api v0.{minor}.");
    if !go_mod.lines().any(|l| l.trim().starts_with(&want)) {
        return Err(format!(
            "{}: needs `{want}*` for {version} (`go get k8s.io/api@v0.{minor}.N …` there)",
            module.join("go.mod").display()
        )
        .into());
    }
    let out = Command::new("go")
        .args(["run", "."])
        .current_dir(&module)
        .output()
        .map_err(|e| format!("cannot run go: {e}"))?;
    if !out.status.success() {
        return Err(format!("govalues failed: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    let body = String::from_utf8(out.stdout)?;
    let text = format!(
        "# Optional scalar fields that are Go values with `omitempty`, by OpenAPI definition\n\
         # (one line per Go struct: the definition, then those fields' JSON names).\n\
         # Written by `cargo xtask go-values` from the Go types of {}'s modules;\n\
         # read by `cargo xtask codegen` for the protobuf codecs (a zero there is unset).\n{body}",
        version
    );
    let file = path(&version);
    std::fs::write(&file, text)?;
    eprintln!(
        "wrote {} ({} structs)",
        file.display(),
        body.lines().count()
    );
    Ok(())
}
