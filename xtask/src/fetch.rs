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

fn spec_files(dir: &Path) -> Result<Vec<String>, Error> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(&path, base, out)?;
            } else if path
                .extension()
                .is_some_and(|e| e == "json" || e == "proto")
                && let Ok(rel) = path.strip_prefix(base)
            {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out)?;
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

    #[test]
    fn upstream_paths() {
        assert_eq!(
            upstream_path("openapi-v3/apis/apps/v1.json").as_deref(),
            Some("api/openapi-spec/v3/apis__apps__v1_openapi.json")
        );
        assert_eq!(
            upstream_path("openapi-v3/api/v1.json").as_deref(),
            Some("api/openapi-spec/v3/api__v1_openapi.json")
        );
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
}
