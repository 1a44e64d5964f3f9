//! The `KUBESET_REALKUBE_*` settings `realkube.sh start` writes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::HarnessError;

/// Prefix of every variable in the env file.
pub const PREFIX: &str = "KUBESET_REALKUBE_";

/// Where the settings came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The process environment (`KUBESET_REALKUBE_KUBECONFIG` was set).
    Process,
    /// An env file written by `realkube.sh start`.
    File(PathBuf),
}

/// One running realkube instance, as described by its env file.
#[derive(Debug, Clone)]
pub struct RealkubeEnv {
    /// Where these settings were read.
    pub source: Source,
    /// The kubeconfig (admin identity, apiserver 0).
    pub kubeconfig: PathBuf,
    /// Every API server, `https://ADDR:PORT`, apiserver 0 first.
    pub servers: Vec<String>,
    /// Process ids of the API servers, in the order of `servers`.
    pub apiserver_pids: Vec<u32>,
    /// etcd's client URL (plain HTTP).
    pub etcd_url: String,
    /// The cluster CA certificate (PEM file).
    pub ca: PathBuf,
    /// Admin client certificate (`O=system:masters`).
    pub client_cert: PathBuf,
    /// Admin client key.
    pub client_key: PathBuf,
    /// Test-user client certificate (`O=kubeset:testers`, bound to
    /// `cluster-admin`, subject to max-in-flight limits and APF).
    pub user_cert: PathBuf,
    /// Test-user client key.
    pub user_key: PathBuf,
    /// `gitVersion` of the API server build.
    pub kubernetes_version: String,
    /// etcd version.
    pub etcd_version: String,
    /// Directory holding one log per process.
    pub log_dir: PathBuf,
}

impl RealkubeEnv {
    /// Reads the process environment when `KUBESET_REALKUBE_KUBECONFIG` is
    /// set, else the env file named by `KUBESET_REALKUBE_ENV`, else the env
    /// file of the workspace's default instance
    /// (`<workspace>/.cache/realkube/env`). `Ok(None)`: nothing to read.
    pub fn discover() -> Result<Option<Self>, HarnessError> {
        if std::env::var_os(format!("{PREFIX}KUBECONFIG")).is_some() {
            let vars = std::env::vars()
                .filter(|(k, _)| k.starts_with(PREFIX))
                .collect();
            return Self::from_vars(&vars, Source::Process).map(Some);
        }
        let file = std::env::var_os(format!("{PREFIX}ENV"))
            .map(PathBuf::from)
            .unwrap_or_else(default_env_file);
        if !file.is_file() {
            return Ok(None);
        }
        Self::read_file(&file).map(Some)
    }

    /// Reads an env file written by `realkube.sh start`.
    pub fn read_file(path: &Path) -> Result<Self, HarnessError> {
        let text = std::fs::read_to_string(path).map_err(|source| HarnessError::Io {
            what: format!("reading {}", path.display()),
            source,
        })?;
        let vars = parse_env_file(&text);
        Self::from_vars(&vars, Source::File(path.to_owned()))
    }

    fn from_vars(vars: &BTreeMap<String, String>, source: Source) -> Result<Self, HarnessError> {
        let get = |name: &str| -> Result<String, HarnessError> {
            let key = format!("{PREFIX}{name}");
            vars.get(&key)
                .filter(|v| !v.is_empty())
                .cloned()
                .ok_or(HarnessError::MissingSetting { name: key })
        };
        let path = |name: &str| get(name).map(PathBuf::from);
        let servers: Vec<String> = get("SERVERS")?
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let pids_text = get("APISERVER_PIDS")?;
        let mut apiserver_pids = Vec::new();
        for pid in pids_text.split(',').filter(|s| !s.is_empty()) {
            apiserver_pids.push(pid.parse().map_err(|_| HarnessError::BadSetting {
                name: format!("{PREFIX}APISERVER_PIDS"),
                value: pids_text.clone(),
            })?);
        }
        if servers.is_empty() || servers.len() != apiserver_pids.len() {
            return Err(HarnessError::BadSetting {
                name: format!("{PREFIX}SERVERS"),
                value: servers.join(","),
            });
        }
        Ok(RealkubeEnv {
            source,
            kubeconfig: path("KUBECONFIG")?,
            servers,
            apiserver_pids,
            etcd_url: get("ETCD_URL")?,
            ca: path("CA")?,
            client_cert: path("CLIENT_CERT")?,
            client_key: path("CLIENT_KEY")?,
            user_cert: path("USER_CERT")?,
            user_key: path("USER_KEY")?,
            kubernetes_version: get("KUBERNETES_VERSION")?,
            etcd_version: get("ETCD_VERSION")?,
            log_dir: path("LOG_DIR")?,
        })
    }
}

/// The workspace root (the parent of this crate).
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// `<workspace>/.cache/realkube/env`.
pub fn default_env_file() -> PathBuf {
    workspace_root().join(".cache/realkube/env")
}

/// Parses `export NAME=VALUE` lines whose values are quoted as bash's
/// `printf %q` does (plain words with backslash escapes, or `'...'`).
pub fn parse_env_file(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
        let Some((name, value)) = line.split_once('=') else {
            continue;
        };
        out.insert(name.to_owned(), unquote(value));
    }
    out
}

fn unquote(value: &str) -> String {
    if let Some(inner) = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
        return inner.to_owned();
    }
    if value == "''" {
        return String::new();
    }
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_printf_q_values() {
        let vars = parse_env_file(
            "# comment\nexport KUBESET_REALKUBE_CA=/a\\ b/ca.crt\nexport KUBESET_REALKUBE_X=''\nexport KUBESET_REALKUBE_Y='q r'\n",
        );
        assert_eq!(vars["KUBESET_REALKUBE_CA"], "/a b/ca.crt");
        assert_eq!(vars["KUBESET_REALKUBE_X"], "");
        assert_eq!(vars["KUBESET_REALKUBE_Y"], "q r");
    }

    #[test]
    fn missing_setting_is_named() {
        let vars = parse_env_file("export KUBESET_REALKUBE_SERVERS=https://127.0.0.1:1\n");
        let err = RealkubeEnv::from_vars(&vars, Source::Process).unwrap_err();
        assert!(
            matches!(&err, HarnessError::MissingSetting { name } if name == "KUBESET_REALKUBE_APISERVER_PIDS"),
            "{err}"
        );
    }
}
