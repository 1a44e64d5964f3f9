//! Standalone copies of workspace crates with other generated files: the
//! crate's hand-written sources, the given generated files in place of the
//! committed ones, and (for `kubeset-api`, [`ApiCrate`]) a manifest of its
//! own outside the workspace, so that `cargo check` shows whether generated
//! code compiles against the real hand-written runtime (`Resource`,
//! `types`, `serde_util`, the `Resource` derive; for the clientset, `Api`).
//! Used by `cargo xtask codegen-compat` (other Kubernetes versions) and by
//! the golden tests (the small specs' models and clientset).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::CodegenError;

/// What to put together.
#[derive(Debug, Clone)]
pub struct ApiCrate<'a> {
    /// The workspace's `crates/kubeset-api`.
    pub api_dir: &'a Path,
    /// The workspace's `crates/kubeset-derive`.
    pub derive_dir: &'a Path,
    /// Paths (relative to the crate, directories or files) whose
    /// committed content is left out.
    pub replaced: &'a [String],
    /// Generated files by path relative to the crate.
    pub files: &'a BTreeMap<String, String>,
    /// The `[features]` block.
    pub features: &'a str,
}

fn read(path: &Path) -> impl FnOnce(std::io::Error) -> CodegenError + '_ {
    move |source| CodegenError::Read {
        path: path.to_owned(),
        source,
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CodegenError + '_ {
    move |source| CodegenError::Write {
        path: path.to_owned(),
        source,
    }
}

fn copy_dir(from: &Path, to: &Path, skip: &[PathBuf]) -> Result<(), CodegenError> {
    std::fs::create_dir_all(to).map_err(io(to))?;
    for entry in std::fs::read_dir(from).map_err(read(from))? {
        let path = entry.map_err(read(from))?.path();
        if skip.contains(&path) {
            continue;
        }
        let target = to.join(path.file_name().unwrap_or_default());
        if path.is_dir() {
            copy_dir(&path, &target, skip)?;
        } else {
            std::fs::copy(&path, &target).map_err(io(&path))?;
        }
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), CodegenError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    std::fs::write(path, text).map_err(io(path))
}

/// Copies `crate_dir/src` into `work/src` without the `replaced` paths
/// (relative to `crate_dir`) and writes `files` (relative to `work`) over
/// it, and copies the workspace's `Cargo.lock` (two levels above
/// `crate_dir`) into `work`, so that an offline build resolves the same
/// versions.
pub fn write_sources(
    crate_dir: &Path,
    replaced: &[String],
    files: &BTreeMap<String, String>,
    work: &Path,
) -> Result<(), CodegenError> {
    let skip: Vec<PathBuf> = replaced.iter().map(|p| crate_dir.join(p)).collect();
    copy_dir(&crate_dir.join("src"), &work.join("src"), &skip)?;
    for (path, text) in files {
        write(&work.join(path), text)?;
    }
    let lock = crate_dir.join("../../Cargo.lock");
    if lock.is_file() {
        std::fs::copy(&lock, work.join("Cargo.lock")).map_err(io(&lock))?;
    }
    Ok(())
}

/// The features `kubeset-api`'s manifest declares by hand after its
/// generated block (`schemas`, `jiff`, …), which the standalone crate must
/// offer too because `kubeset-client` forwards them.
fn hand_written_features(manifest: &str) -> String {
    manifest
        .split_once("# END GENERATED FEATURES\n")
        .map(|(_, rest)| rest.split("\n[").next().unwrap_or_default())
        .unwrap_or_default()
        .trim_end()
        .to_owned()
}

/// The lines of a manifest's `[section]` (up to the next table).
fn section<'m>(manifest: &'m str, name: &str) -> impl Iterator<Item = &'m str> {
    manifest
        .split_once(&format!("\n[{name}]\n"))
        .map(|(_, rest)| rest.split("\n[").next().unwrap_or_default())
        .unwrap_or_default()
        .lines()
}

/// The optional dependencies of `own` (`jiff = { workspace = true,
/// optional = true }`), written out from the workspace's `workspace`
/// manifest, so that a hand-written feature naming `dep:jiff` still has
/// its crate (the client's default features turn `jiff` on); one that is
/// not the workspace's (`schemars08 = { package = "schemars", … }`) is
/// copied as it is.
fn optional_dependencies(own: &str, workspace: &str) -> String {
    let mut out = String::new();
    for line in section(own, "dependencies").filter(|l| l.contains("optional = true")) {
        if !line.contains("workspace = true") {
            out.push_str(line.trim());
            out.push('\n');
            continue;
        }
        let Some((name, _)) = line.split_once(" = ") else {
            continue;
        };
        let name = name.trim();
        let Some(entry) = section(workspace, "workspace.dependencies")
            .filter_map(|l| l.split_once(" = "))
            .find(|(n, _)| n.trim() == name)
            .map(|(_, e)| e.trim())
        else {
            continue;
        };
        let entry = match entry.strip_prefix('{').and_then(|e| e.strip_suffix('}')) {
            Some(inner) => format!("{{ {}, optional = true }}", inner.trim()),
            None => format!("{{ version = {entry}, optional = true }}"),
        };
        out.push_str(&format!("{name} = {entry}\n"));
    }
    out
}

impl ApiCrate<'_> {
    /// Writes the crate into `work` (which should not exist or be empty).
    pub fn write_to(&self, work: &Path) -> Result<(), CodegenError> {
        write_sources(self.api_dir, self.replaced, self.files, work)?;
        let own_manifest = self.api_dir.join("Cargo.toml");
        let own = std::fs::read_to_string(&own_manifest).map_err(read(&own_manifest))?;
        let workspace_manifest = self.api_dir.join("../../Cargo.toml");
        let workspace =
            std::fs::read_to_string(&workspace_manifest).map_err(read(&workspace_manifest))?;
        let manifest = format!(
            "[package]\nname = \"kubeset-api\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
             [lib]\ndoctest = false\n\n[workspace]\n\n[lints.rust]\nmissing_docs = \"deny\"\nunsafe_code = \"forbid\"\n\n\
             [dependencies]\nserde = {{ version = \"1\", features = [\"derive\"] }}\n\
             serde_json = {{ version = \"1\", features = [\"raw_value\"] }}\n\
             thiserror = \"2\"\n\
             kubeset-derive = {{ path = {:?} }}\n{}\n{}\n{}",
            self.derive_dir.display().to_string(),
            optional_dependencies(&own, &workspace),
            self.features,
            hand_written_features(&own)
        );
        write(&work.join("Cargo.toml"), &manifest)
    }
}

#[cfg(test)]
mod tests {
    use super::optional_dependencies;

    #[test]
    fn optional_dependencies_are_written_out_from_the_workspace() {
        let own = "[package]\nname = \"a\"\n\n[dependencies]\nserde.workspace = true\n\
                   jiff = { workspace = true, optional = true }\nb = { workspace = true, optional = true }\n\
                   c = { package = \"cc\", version = \"0.8\", optional = true }\n\n[features]\n";
        let workspace = "[workspace]\n\n[workspace.dependencies]\nserde = \"1\"\n\
                         jiff = { version = \"0.2\", default-features = false, features = [\"std\"] }\nb = \"3\"\n";
        assert_eq!(
            optional_dependencies(own, workspace),
            "jiff = { version = \"0.2\", default-features = false, features = [\"std\"], optional = true }\n\
             b = { version = \"3\", optional = true }\n\
             c = { package = \"cc\", version = \"0.8\", optional = true }\n"
        );
    }
}
