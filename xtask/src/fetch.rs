//! Spec pins (`specs/kubernetes-<version>.sha256`) and `cargo xtask
//! fetch-specs`.
//!
//! A pin file lists `<sha256>  <path>` for every file of a version's spec
//! directory (`swagger.json`, `openapi-v3/api/v1.json`,
//! `openapi-v3/apis/<group>/<version>.json` and, where the version has
//! them, the protobuf field numbers `proto/k8s.io/.../generated.proto`).
//! `codegen` refuses spec files that do not match the pins of the version
//! it generates from.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest as _, Sha256};

use crate::{Error, workspace_root};

/// Upstream location of a release's specs; `$KUBESET_SPECS_UPSTREAM`
/// replaces it (a mirror with the same layout).
const UPSTREAM: &str = "https://raw.githubusercontent.com/kubernetes/kubernetes";

fn pin_file(version: &str) -> PathBuf {
    workspace_root().join(format!("specs/kubernetes-{version}.sha256"))
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Reads a pin file: path → sha256.
fn read_pins(version: &str) -> Result<BTreeMap<String, String>, Error> {
    let path = pin_file(version);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "cannot read {}: {e} (pin the version with `cargo xtask pin-specs {version}`)",
            path.display()
        )
    })?;
    let mut pins = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (hash, file) = line
            .split_once("  ")
            .ok_or_else(|| format!("{}:{}: expected `<sha256>  <path>`", path.display(), n + 1))?;
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("{}:{}: bad sha256", path.display(), n + 1).into());
        }
        pins.insert(file.to_owned(), hash.to_ascii_lowercase());
    }
    Ok(pins)
}

/// Every spec file (`.json`, `.proto`) below `dir`, relative to it.
fn spec_files(dir: &Path) -> Result<Vec<String>, Error> {
    files_below(dir, |path| {
        path.extension()
            .is_some_and(|e| e == "json" || e == "proto")
    })
}

/// The files below `dir` that `keep` takes, relative to it with `/`
/// separators, sorted.
fn files_below(dir: &Path, keep: impl Fn(&Path) -> bool) -> Result<Vec<String>, Error> {
    fn walk(
        dir: &Path,
        base: &Path,
        keep: &dyn Fn(&Path) -> bool,
        out: &mut Vec<String>,
    ) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(&path, base, keep, out)?;
            } else if keep(&path)
                && let Ok(rel) = path.strip_prefix(base)
            {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, dir, &keep, &mut out)?;
    out.sort();
    Ok(out)
}

/// Checks a spec directory against the pins of `version`.
pub fn verify(version: &str, dir: &Path) -> Result<(), Error> {
    let pins = read_pins(version)?;
    let files = spec_files(dir)?;
    for file in &files {
        if !pins.contains_key(file) {
            return Err(format!(
                "{}/{file} is not pinned in {}",
                dir.display(),
                pin_file(version).display()
            )
            .into());
        }
    }
    for (file, want) in &pins {
        let bytes = std::fs::read(dir.join(file))
            .map_err(|e| format!("pinned file {}/{file}: {e}", dir.display()))?;
        let got = sha256_hex(&bytes);
        if &got != want {
            return Err(format!("{}/{file}: sha256 {got}, pinned {want}", dir.display()).into());
        }
    }
    Ok(())
}

/// `cargo xtask pin-specs <version>`: writes the pin file from the spec
/// directory.
pub fn pin(version: &str, specs_root: &Path) -> Result<(), Error> {
    let dir = specs_root.join("kubernetes").join(version);
    let files = spec_files(&dir)?;
    if files.is_empty() {
        return Err(format!("no spec files in {}", dir.display()).into());
    }
    let mut text = format!(
        "# sha256 of the Kubernetes {version} OpenAPI (and protobuf) files kubeset generates from.\n\
         # Written by `cargo xtask pin-specs {version}`; checked by `cargo xtask codegen`\n\
         # and `cargo xtask fetch-specs {version}`.\n"
    );
    if let Ok(patch) = std::fs::read_to_string(dir.join(GO_PROXY_MARKER)) {
        text.push_str(&format!(
            "# Assembled by `cargo xtask fetch-specs {version} --go-proxy` from the Go modules of:\n{GO_PROXY_PIN}{}\n",
            patch.trim()
        ));
    } else if let Some(patch) = pinned_patch(version) {
        text.push_str(&format!("{GO_PROXY_PIN}{patch}\n"));
    }
    for file in &files {
        let bytes = std::fs::read(dir.join(file))?;
        text.push_str(&format!("{}  {file}\n", sha256_hex(&bytes)));
    }
    std::fs::write(pin_file(version), text)?;
    eprintln!("pinned {} files of {version}", files.len());
    Ok(())
}

/// Upstream path of a local spec file: `openapi-v3/apis/apps/v1.json` →
/// `api/openapi-spec/v3/apis__apps__v1_openapi.json`;
/// `proto/k8s.io/api/core/v1/generated.proto` →
/// `staging/src/k8s.io/api/core/v1/generated.proto` (the Go modules'
/// sources in the kubernetes repository).
fn upstream_path(file: &str) -> Option<String> {
    if file == "swagger.json" {
        return Some("api/openapi-spec/swagger.json".to_owned());
    }
    if let Some(module_path) = file.strip_prefix("proto/") {
        return module_path
            .ends_with("/generated.proto")
            .then(|| format!("staging/src/{module_path}"));
    }
    let rest = file.strip_prefix("openapi-v3/")?.strip_suffix(".json")?;
    Some(format!(
        "api/openapi-spec/v3/{}_openapi.json",
        rest.replace('/', "__")
    ))
}

/// `cargo xtask fetch-specs <version>`: downloads every pinned file of a
/// release from upstream (or `$KUBESET_SPECS_UPSTREAM`) into
/// `<specs_root>/kubernetes/<version>/` and checks its sha256.
pub fn run(version: &str, specs_root: PathBuf) -> Result<(), Error> {
    let base = std::env::var("KUBESET_SPECS_UPSTREAM").unwrap_or_else(|_| UPSTREAM.to_owned());
    fetch_from(&base, version, &specs_root)
}

/// [`run`] from `base` (`<base>/release-1.NN/api/openapi-spec/...`).
fn fetch_from(base: &str, version: &str, specs_root: &Path) -> Result<(), Error> {
    let base = base.trim_end_matches('/');
    let pins = read_pins(version)?;
    let release = version
        .strip_prefix('v')
        .ok_or("version must look like v1.35")?;
    let dir = specs_root.join("kubernetes").join(version);
    let total = pins.len();
    for (i, (file, want)) in pins.iter().enumerate() {
        let upstream = upstream_path(file).ok_or_else(|| format!("no upstream path for {file}"))?;
        let url = format!("{base}/release-{release}/{upstream}");
        eprintln!("[{}/{total}] {url}", i + 1);
        let out = Command::new("curl")
            .args(["--fail", "--silent", "--show-error", "--location", &url])
            .output()
            .map_err(|e| format!("cannot run curl: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "download of {url} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )
            .into());
        }
        let got = sha256_hex(&out.stdout);
        if &got != want {
            return Err(format!("{url}: sha256 {got}, pinned {want}").into());
        }
        let target = dir.join(file);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&target, &out.stdout)?;
    }
    eprintln!("{total} files of {version} in {}", dir.display());
    Ok(())
}

/// The Go modules that hold a release's specs: `k8s.io/kubernetes` (the
/// OpenAPI documents under `api/openapi-spec/`) and the staging modules
/// whose `generated.proto` files the protobuf codecs read.
const GO_MODULES: &[&str] = &[
    "k8s.io/api",
    "k8s.io/apimachinery",
    "k8s.io/apiextensions-apiserver",
    "k8s.io/kube-aggregator",
];

/// The comment of a pin file naming the patch release its files come
/// from on the Go module proxy: `# go-proxy: v1.36.3`.
const GO_PROXY_PIN: &str = "# go-proxy: ";

/// Marker file `fetch-specs --go-proxy` leaves in the release directory
/// (neither `.json` nor `.proto`, so not a spec file): the patch release,
/// which `pin-specs` records as [`GO_PROXY_PIN`].
const GO_PROXY_MARKER: &str = "go-proxy-version";

/// The patch release a pin file names (`# go-proxy: v1.36.3`), if any.
fn pinned_patch(version: &str) -> Option<String> {
    let text = std::fs::read_to_string(pin_file(version)).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(GO_PROXY_PIN))
        .map(|v| v.trim().to_owned())
}

/// `v1.36` or `v1.36.3` → (`v1.36`, the patch release if given).
fn split_version(version: &str) -> Result<(String, Option<String>), Error> {
    let parts: Vec<&str> = version
        .strip_prefix("v1.")
        .ok_or("version must look like v1.36 or v1.36.3")?
        .split('.')
        .collect();
    if parts.is_empty() || parts.len() > 2 || parts.iter().any(|p| p.parse::<u32>().is_err()) {
        return Err(format!("version {version} must look like v1.36 or v1.36.3").into());
    }
    let minor = format!("v1.{}", parts[0]);
    Ok((minor, (parts.len() == 2).then(|| version.to_owned())))
}

/// `go mod download -json` of `k8s.io/kubernetes@<patch>` and the staging
/// modules (`v0.NN.P`): each module's directory in the module cache.
fn go_download(patch: &str) -> Result<Vec<(String, PathBuf)>, Error> {
    let staging = format!("v0.{}", patch.strip_prefix("v1.").unwrap_or(patch));
    let mut wanted = vec![format!("k8s.io/kubernetes@{patch}")];
    wanted.extend(GO_MODULES.iter().map(|m| format!("{m}@{staging}")));
    eprintln!("go mod download -json {}", wanted.join(" "));
    // Outside any Go module (the workspace holds some under tests/).
    let out = Command::new("go")
        .args(["mod", "download", "-json"])
        .args(&wanted)
        .current_dir(std::env::temp_dir())
        .output()
        .map_err(|e| format!("cannot run go: {e}"))?;
    let mut dirs = Vec::new();
    for value in serde_json::Deserializer::from_slice(&out.stdout).into_iter::<serde_json::Value>()
    {
        let value = value?;
        let path = value["Path"].as_str().unwrap_or_default().to_owned();
        if let Some(err) = value["Error"].as_str() {
            return Err(format!("go mod download {path}: {err}").into());
        }
        let dir = value["Dir"]
            .as_str()
            .ok_or_else(|| format!("go mod download {path}: no Dir"))?;
        dirs.push((path, PathBuf::from(dir)));
    }
    if !out.status.success() || dirs.len() != wanted.len() {
        return Err(format!(
            "go mod download failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )
        .into());
    }
    Ok(dirs)
}

/// A release's spec files in our layout (path → bytes) from the modules'
/// directories: `k8s.io/kubernetes`'s `api/openapi-spec/swagger.json` and
/// its `v3/api__v1_openapi.json` / `v3/apis__<group>__<version>_openapi.json`
/// (not the group or root documents), and every `generated.proto` of the
/// staging modules as `proto/<module>/<path>`.
fn assemble(modules: &[(String, PathBuf)]) -> Result<BTreeMap<String, Vec<u8>>, Error> {
    let mut files = BTreeMap::new();
    for (module, dir) in modules {
        if module == "k8s.io/kubernetes" {
            let spec = dir.join("api/openapi-spec");
            files.insert(
                "swagger.json".to_owned(),
                std::fs::read(spec.join("swagger.json"))?,
            );
            for entry in std::fs::read_dir(spec.join("v3"))? {
                let path = entry?.path();
                let name = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or_default();
                if let Some(local) = local_v3_path(name) {
                    files.insert(local, std::fs::read(&path)?);
                }
            }
        } else {
            for rel in proto_files(dir)? {
                files.insert(
                    format!("proto/{module}/{rel}"),
                    std::fs::read(dir.join(&rel))?,
                );
            }
        }
    }
    Ok(files)
}

/// `apis__apps__v1_openapi.json` → `openapi-v3/apis/apps/v1.json`;
/// `api__v1_openapi.json` → `openapi-v3/api/v1.json`; a group's or the
/// root's document (`apis__apps_openapi.json`, `version_openapi.json`) →
/// `None`.
fn local_v3_path(name: &str) -> Option<String> {
    let parts: Vec<&str> = name.strip_suffix("_openapi.json")?.split("__").collect();
    match parts.as_slice() {
        ["api", "v1"] | ["apis", _, _] => Some(format!("openapi-v3/{}.json", parts.join("/"))),
        _ => None,
    }
}

/// Every `generated.proto` below a module directory, relative to it.
fn proto_files(dir: &Path) -> Result<Vec<String>, Error> {
    files_below(dir, |path| {
        path.file_name().is_some_and(|n| n == "generated.proto")
    })
}

/// Checks assembled files against a version's pins: the same set of
/// paths, each with its pinned sha256.
fn check_pins(
    files: &BTreeMap<String, Vec<u8>>,
    pins: &BTreeMap<String, String>,
    version: &str,
) -> Result<(), Error> {
    if let Some(extra) = files.keys().find(|f| !pins.contains_key(*f)) {
        return Err(format!("{extra} is not pinned in {}", pin_file(version).display()).into());
    }
    for (file, want) in pins {
        let bytes = files
            .get(file)
            .ok_or_else(|| format!("pinned file {file} is not in the Go modules"))?;
        let got = sha256_hex(bytes);
        if &got != want {
            return Err(format!("{file}: sha256 {got}, pinned {want}").into());
        }
    }
    Ok(())
}

/// `cargo xtask fetch-specs <version> --go-proxy`: assembles
/// `<dest>/kubernetes/v1.NN/` from the Go modules of the release (the
/// patch pinned in the pin file's `# go-proxy:` line, or `v1.NN.P` given)
/// and checks every file against the pins (an unpinned version is written
/// for `pin-specs` to pin). Beside it, `<dest>` gets links to the other
/// releases of `source_root` and to its `../crds`, so that `<dest>` is a
/// whole spec root (`KUBESET_SPECS=<dest>`).
pub fn run_go_proxy(version: &str, dest: &Path, source_root: &Path) -> Result<(), Error> {
    let (minor, given) = split_version(version)?;
    let patch = given.or_else(|| pinned_patch(&minor)).ok_or_else(|| {
        format!(
            "{} names no `{GO_PROXY_PIN}v1.NN.P`: give the patch release (fetch-specs {minor}.P --go-proxy)",
            pin_file(&minor).display()
        )
    })?;
    let files = assemble(&go_download(&patch)?)?;
    let pinned = pin_file(&minor).exists();
    if pinned {
        check_pins(&files, &read_pins(&minor)?, &minor)?;
    }
    write_release(&files, &dest.join("kubernetes").join(&minor), &patch)?;
    link_siblings(dest, source_root, &minor)?;
    if !pinned {
        eprintln!(
            "{minor} is not pinned: review, then `cargo xtask pin-specs {minor} --specs {}`",
            dest.display()
        );
    }
    Ok(())
}

/// Replaces `dir` with `files` and the [`GO_PROXY_MARKER`].
fn write_release(files: &BTreeMap<String, Vec<u8>>, dir: &Path, patch: &str) -> Result<(), Error> {
    if dir.symlink_metadata().is_ok() {
        if dir.is_symlink() {
            std::fs::remove_file(dir)?;
        } else {
            std::fs::remove_dir_all(dir)?;
        }
    }
    for (file, bytes) in files {
        let target = dir.join(file);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&target, bytes)?;
    }
    std::fs::write(dir.join(GO_PROXY_MARKER), format!("{patch}\n"))?;
    eprintln!("{} files of {patch} in {}", files.len(), dir.display());
    Ok(())
}

/// Links `<dest>/kubernetes/<v>` to every other release directory of
/// `source_root` and `<dest>/../crds` to `<source_root>/../crds`, where
/// `dest` lacks them (nothing when both are the same folder).
fn link_siblings(dest: &Path, source_root: &Path, fetched: &str) -> Result<(), Error> {
    let (Ok(dest), Ok(source)) = (dest.canonicalize(), source_root.canonicalize()) else {
        return Ok(());
    };
    if dest == source {
        return Ok(());
    }
    let mut links = Vec::new();
    for entry in std::fs::read_dir(source.join("kubernetes"))
        .into_iter()
        .flatten()
    {
        let entry = entry?;
        let name = entry.file_name();
        if name != fetched && entry.path().is_dir() {
            links.push((entry.path(), dest.join("kubernetes").join(&name)));
        }
    }
    if let (Some(crds), Some(parent)) = (source.parent().map(|p| p.join("crds")), dest.parent())
        && crds.is_dir()
    {
        links.push((crds, parent.join("crds")));
    }
    for (target, link) in links {
        if link.symlink_metadata().is_err() {
            std::os::unix::fs::symlink(&target, &link)?;
            eprintln!("{} -> {}", link.display(), target.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_known_vectors() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    /// OpenAPI v3 documents: our path and upstream's file name (in
    /// `api/openapi-spec/v3/`), each mapping to the other.
    const V3_DOCUMENTS: [(&str, &str); 2] = [
        (
            "openapi-v3/apis/apps/v1.json",
            "apis__apps__v1_openapi.json",
        ),
        ("openapi-v3/api/v1.json", "api__v1_openapi.json"),
    ];

    #[test]
    fn upstream_paths() {
        for (local, file) in V3_DOCUMENTS {
            let upstream = format!("api/openapi-spec/v3/{file}");
            assert_eq!(upstream_path(local), Some(upstream), "{local}");
        }
        assert_eq!(
            upstream_path("swagger.json").as_deref(),
            Some("api/openapi-spec/swagger.json")
        );
        assert_eq!(
            upstream_path("proto/k8s.io/api/core/v1/generated.proto").as_deref(),
            Some("staging/src/k8s.io/api/core/v1/generated.proto")
        );
        assert_eq!(upstream_path("proto/k8s.io/api/core/v1/other.proto"), None);
        assert_eq!(upstream_path("other.txt"), None);
    }

    /// Serves `<dir>` in upstream's layout over HTTP on 127.0.0.1 (one
    /// request per connection, as curl makes them here); a path in
    /// `tampered` is served with one byte appended.
    fn mirror(dir: PathBuf, release: &'static str, tampered: Option<&'static str>) -> String {
        use std::io::{BufRead as _, BufReader, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut request_line = String::new();
                if reader.read_line(&mut request_line).is_err() {
                    continue;
                }
                let mut header = String::new();
                while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                    header.clear();
                }
                let path = request_line.split(' ').nth(1).unwrap_or("");
                let prefix = format!("/release-{release}/api/openapi-spec/");
                let staging = format!("/release-{release}/staging/src/");
                let proto = path.strip_prefix(&staging).map(|p| format!("proto/{p}"));
                let local = proto.or_else(|| {
                    path.strip_prefix(&prefix).and_then(|p| {
                        if p == "swagger.json" {
                            Some(p.to_owned())
                        } else {
                            let rest = p.strip_prefix("v3/")?.strip_suffix("_openapi.json")?;
                            Some(format!("openapi-v3/{}.json", rest.replace("__", "/")))
                        }
                    })
                });
                let body = local.and_then(|l| {
                    let mut bytes = std::fs::read(dir.join(&l)).ok()?;
                    if tampered == Some(l.as_str()) {
                        bytes.push(b' ');
                    }
                    Some(bytes)
                });
                let _ = match body {
                    Some(b) => conn
                        .write_all(
                            format!(
                                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                                b.len()
                            )
                            .as_bytes(),
                        )
                        .and_then(|()| conn.write_all(&b)),
                    None => conn.write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    ),
                };
            }
        });
        format!("http://{addr}")
    }

    fn shared_v135() -> PathBuf {
        crate::specs_root(None).join("kubernetes/v1.35")
    }

    #[test]
    fn fetch_downloads_every_pinned_file_and_checks_it() {
        let base = mirror(shared_v135(), "1.35", None);
        let dest = std::env::temp_dir().join(format!("kubeset-fetch-ok-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dest);
        fetch_from(&base, "v1.35", &dest).unwrap();
        // What was fetched is exactly what the pins describe.
        verify("v1.35", &dest.join("kubernetes/v1.35")).unwrap();
        assert_eq!(
            spec_files(&dest.join("kubernetes/v1.35")).unwrap().len(),
            read_pins("v1.35").unwrap().len()
        );
        std::fs::remove_dir_all(&dest).unwrap();
    }

    #[test]
    fn fetch_refuses_a_file_that_differs_from_its_pin() {
        let base = mirror(shared_v135(), "1.35", Some("openapi-v3/apis/apps/v1.json"));
        let dest = std::env::temp_dir().join(format!("kubeset-fetch-bad-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dest);
        let err = fetch_from(&base, "v1.35", &dest).unwrap_err().to_string();
        assert!(
            err.contains("apis__apps__v1_openapi.json") && err.contains("pinned"),
            "{err}"
        );
        assert!(
            !dest
                .join("kubernetes/v1.35/openapi-v3/apis/apps/v1.json")
                .exists()
        );
        let _ = std::fs::remove_dir_all(&dest);
    }

    #[test]
    fn fetch_names_the_url_that_failed() {
        let base = mirror(
            std::env::temp_dir().join("kubeset-no-such-dir"),
            "1.35",
            None,
        );
        let dest = std::env::temp_dir().join(format!("kubeset-fetch-404-{}", std::process::id()));
        let err = fetch_from(&base, "v1.35", &dest).unwrap_err().to_string();
        assert!(err.contains("download of http://127.0.0.1:"), "{err}");
        assert!(err.contains("404"), "{err}");
        let _ = std::fs::remove_dir_all(&dest);
    }

    #[test]
    fn v3_documents_map_to_our_layout_and_group_documents_are_skipped() {
        // Each maps back to the upstream file (`upstream_paths`).
        for (local, file) in V3_DOCUMENTS {
            assert_eq!(local_v3_path(file).as_deref(), Some(local), "{file}");
        }
        for skipped in [
            "apis__apps_openapi.json",
            "api_openapi.json",
            "apis_openapi.json",
            "version_openapi.json",
            "openid__v1__jwks_openapi.json",
            "swagger.json",
        ] {
            assert_eq!(local_v3_path(skipped), None, "{skipped}");
        }
    }

    #[test]
    fn versions_name_a_minor_and_maybe_a_patch() {
        assert_eq!(split_version("v1.36").unwrap(), ("v1.36".into(), None));
        assert_eq!(
            split_version("v1.36.3").unwrap(),
            ("v1.36".into(), Some("v1.36.3".into()))
        );
        for bad in ["1.36", "v1.", "v1.36.x", "v1.36.3.1", "v2.0"] {
            assert!(split_version(bad).is_err(), "{bad}");
        }
    }

    /// Module directories laid out as the Go module cache holds them
    /// (`k8s.io/kubernetes`'s `api/openapi-spec/`, the staging modules'
    /// `generated.proto`), from the shared v1.35 specs, with the documents
    /// and files `assemble` must leave out.
    fn module_dirs(root: &Path) -> Vec<(String, PathBuf)> {
        let src = shared_v135();
        let k8s = root.join("kubernetes");
        let v3 = k8s.join("api/openapi-spec/v3");
        std::fs::create_dir_all(&v3).unwrap();
        std::fs::copy(
            src.join("swagger.json"),
            k8s.join("api/openapi-spec/swagger.json"),
        )
        .unwrap();
        let mut modules = vec![("k8s.io/kubernetes".to_owned(), k8s.clone())];
        for file in spec_files(&src).unwrap() {
            if let Some(up) = upstream_path(&file).filter(|_| file.starts_with("openapi-v3/")) {
                std::fs::copy(src.join(&file), k8s.join(up)).unwrap();
            }
        }
        std::fs::write(v3.join("apis__apps_openapi.json"), "{}").unwrap();
        std::fs::write(v3.join("version_openapi.json"), "{}").unwrap();
        for module in GO_MODULES {
            let dir = root.join(module.trim_start_matches("k8s.io/"));
            let from = src.join("proto").join(module);
            for rel in proto_files(&from).unwrap() {
                let to = dir.join(&rel);
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(from.join(&rel), &to).unwrap();
            }
            std::fs::write(dir.join("other.proto"), "syntax = \"proto2\";").unwrap();
            modules.push(((*module).to_owned(), dir));
        }
        modules
    }

    #[test]
    fn go_modules_assemble_into_the_pinned_release() {
        let root = std::env::temp_dir().join(format!("kubeset-gomod-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let modules = module_dirs(&root);
        let mut files = assemble(&modules).unwrap();
        let pins = read_pins("v1.35").unwrap();
        check_pins(&files, &pins, "v1.35").unwrap();
        // Written out, the release directory is exactly what the pins say.
        let dest = root.join("out");
        write_release(&files, &dest.join("kubernetes/v1.35"), "v1.35.0").unwrap();
        verify("v1.35", &dest.join("kubernetes/v1.35")).unwrap();
        // A changed byte, a missing file or an extra one is refused.
        files
            .get_mut("openapi-v3/apis/apps/v1.json")
            .unwrap()
            .push(b' ');
        let err = check_pins(&files, &pins, "v1.35").unwrap_err().to_string();
        assert!(
            err.contains("openapi-v3/apis/apps/v1.json: sha256"),
            "{err}"
        );
        files.remove("openapi-v3/apis/apps/v1.json");
        let err = check_pins(&files, &pins, "v1.35").unwrap_err().to_string();
        assert!(err.contains("is not in the Go modules"), "{err}");
        files.insert("proto/k8s.io/api/x/v1/generated.proto".into(), Vec::new());
        let err = check_pins(&files, &pins, "v1.35").unwrap_err().to_string();
        assert!(err.contains("is not pinned"), "{err}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_fetched_release_sits_beside_links_to_the_others() {
        let root = std::env::temp_dir().join(format!("kubeset-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let source = root.join("shared/specs");
        for v in ["v1.1", "v1.2"] {
            std::fs::create_dir_all(source.join("kubernetes").join(v)).unwrap();
        }
        std::fs::create_dir_all(root.join("shared/crds")).unwrap();
        let dest = root.join("target/specs");
        let files = BTreeMap::from([("swagger.json".to_owned(), b"{}".to_vec())]);
        write_release(&files, &dest.join("kubernetes/v1.2"), "v1.2.0").unwrap();
        link_siblings(&dest, &source, "v1.2").unwrap();
        let v1 = dest.join("kubernetes/v1.1");
        assert!(v1.is_symlink() && v1.is_dir());
        assert!(!dest.join("kubernetes/v1.2").is_symlink());
        assert!(root.join("target/crds").is_symlink());
        // Again: nothing changes, nothing fails.
        link_siblings(&dest, &source, "v1.2").unwrap();
        std::fs::remove_dir_all(&root).unwrap();
    }
}
