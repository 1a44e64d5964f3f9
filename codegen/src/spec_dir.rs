//! Where the Kubernetes specs are: the one lookup `cargo xtask` and the
//! tests share.
//!
//! The spec root holds `kubernetes/<version>/` (one directory per release,
//! `openapi-v3/` and `swagger.json`) and, beside it, `../crds/` (real
//! CustomResourceDefinitions). It is `--specs DIR` when given, else
//! `$KUBESET_SPECS`, else `../shared/specs` next to the workspace.

use std::path::{Path, PathBuf};

use crate::error::CodegenError;

/// The environment variable naming the spec root.
pub const ENV: &str = "KUBESET_SPECS";

/// The spec root: `flag`, else `$KUBESET_SPECS`, else `../shared/specs`
/// next to `workspace`.
pub fn root(flag: Option<PathBuf>, workspace: &Path) -> PathBuf {
    flag.or_else(|| std::env::var_os(ENV).map(PathBuf::from))
        .unwrap_or_else(|| workspace.join("../shared/specs"))
}

/// The Kubernetes version the workspace is generated from
/// (`specs/kubernetes-version`, e.g. `v1.35`).
pub fn pinned_version(workspace: &Path) -> Result<String, CodegenError> {
    let path = workspace.join("specs/kubernetes-version");
    let text = std::fs::read_to_string(&path).map_err(|source| CodegenError::Read {
        path: path.clone(),
        source,
    })?;
    Ok(text.trim().to_owned())
}

/// The directory of one release below the spec root.
pub fn release(root: &Path, version: &str) -> PathBuf {
    root.join("kubernetes").join(version)
}

/// The real CRDs beside the spec root (`<root>/../crds`).
pub fn crds(root: &Path) -> PathBuf {
    root.join("../crds")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_wins_and_paths_hang_off_the_root() {
        let root = root(Some("/specs".into()), Path::new("/ws"));
        assert_eq!(root, Path::new("/specs"));
        assert_eq!(
            release(&root, "v1.35"),
            Path::new("/specs/kubernetes/v1.35")
        );
        assert_eq!(crds(&root), Path::new("/specs/../crds"));
    }

    #[test]
    fn the_pinned_version_is_read_trimmed() {
        let ws = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let v = pinned_version(&ws).unwrap();
        assert!(v.starts_with("v1.") && !v.contains('\n'), "{v:?}");
        assert!(matches!(
            pinned_version(Path::new("/nonexistent")),
            Err(CodegenError::Read { .. })
        ));
    }
}
