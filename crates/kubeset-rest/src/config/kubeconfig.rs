//! The kubeconfig file format, loading and merging (client-go's rules).

use std::{
    collections::BTreeMap,
    ffi::OsStr,
    fmt,
    path::{Path, PathBuf},
};

use serde::Deserialize;

use super::{ConfigError, Secret};

/// A kubeconfig: clusters, users and the contexts that pair them.
///
/// Relative paths in a file are resolved against that file's directory when
/// it is read, so a merged `Kubeconfig` holds absolute paths.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub struct Kubeconfig {
    /// `apiVersion` (normally `v1`).
    #[serde(rename = "apiVersion", default)]
    pub api_version: Option<String>,
    /// `kind` (normally `Config`).
    #[serde(default)]
    pub kind: Option<String>,
    /// Named clusters.
    #[serde(default, deserialize_with = "null_as_default")]
    pub clusters: Vec<NamedCluster>,
    /// Named users (`AuthInfo`s).
    #[serde(default, deserialize_with = "null_as_default")]
    pub users: Vec<NamedAuthInfo>,
    /// Named contexts.
    #[serde(default, deserialize_with = "null_as_default")]
    pub contexts: Vec<NamedContext>,
    /// The context used when none is requested.
    #[serde(default)]
    pub current_context: Option<String>,
    /// The files this kubeconfig was read from, in merge order.
    #[serde(skip)]
    pub files: Vec<PathBuf>,
}

/// A cluster with its name.
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct NamedCluster {
    /// The name contexts refer to.
    pub name: String,
    /// The cluster.
    #[serde(default)]
    pub cluster: Option<Cluster>,
    /// The file this entry was read from.
    #[serde(skip)]
    pub origin: Option<PathBuf>,
}

/// How to reach an API server. `Debug` hides a password in `proxy-url`.
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub struct Cluster {
    /// The API server URL.
    #[serde(default)]
    pub server: Option<String>,
    /// Name checked against the server certificate instead of the URL host.
    #[serde(default)]
    pub tls_server_name: Option<String>,
    /// Skip server certificate verification.
    #[serde(default)]
    pub insecure_skip_tls_verify: bool,
    /// Path to a PEM CA bundle.
    #[serde(default)]
    pub certificate_authority: Option<String>,
    /// Base64 of a PEM CA bundle; wins over `certificate-authority`.
    #[serde(default)]
    pub certificate_authority_data: Option<String>,
    /// HTTP(S) or SOCKS proxy.
    #[serde(default)]
    pub proxy_url: Option<String>,
    /// Extensions; `client.authentication.k8s.io/exec` is passed to exec
    /// plugins that ask for cluster info.
    #[serde(default, deserialize_with = "null_as_default")]
    pub extensions: Vec<NamedExtension>,
}

impl fmt::Debug for Cluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let proxy = self.proxy_url.as_deref().map(|p| match url::Url::parse(p) {
            Ok(mut u) if u.password().is_some() => {
                let _ = u.set_password(Some("redacted"));
                u.to_string()
            }
            Ok(_) => p.to_owned(),
            Err(_) => "<unparsable>".to_owned(),
        });
        f.debug_struct("Cluster")
            .field("server", &self.server)
            .field("tls_server_name", &self.tls_server_name)
            .field("insecure_skip_tls_verify", &self.insecure_skip_tls_verify)
            .field("certificate_authority", &self.certificate_authority)
            .field(
                "certificate_authority_data",
                &self.certificate_authority_data.as_ref().map(String::len),
            )
            .field("proxy_url", &proxy)
            .field("extensions", &self.extensions.len())
            .finish()
    }
}

/// A named extension object.
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct NamedExtension {
    /// The extension name.
    pub name: String,
    /// Its value.
    #[serde(default)]
    pub extension: serde_json::Value,
}

/// A user with its name.
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct NamedAuthInfo {
    /// The name contexts refer to.
    pub name: String,
    /// The credentials.
    #[serde(default)]
    pub user: Option<AuthInfo>,
    /// The file this entry was read from.
    #[serde(skip)]
    pub origin: Option<PathBuf>,
}

/// Credentials of a user. Secret fields are redacted in `Debug`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub struct AuthInfo {
    /// Path to a PEM client certificate.
    #[serde(default)]
    pub client_certificate: Option<String>,
    /// Base64 of a PEM client certificate; wins over `client-certificate`.
    #[serde(default)]
    pub client_certificate_data: Option<String>,
    /// Path to a PEM private key.
    #[serde(default)]
    pub client_key: Option<String>,
    /// Base64 of a PEM private key; wins over `client-key`.
    #[serde(default)]
    pub client_key_data: Option<Secret<String>>,
    /// Bearer token.
    #[serde(default)]
    pub token: Option<Secret<String>>,
    /// Path to a file holding a bearer token; re-read when it changes.
    #[serde(default, rename = "tokenFile")]
    pub token_file: Option<String>,
    /// User to impersonate.
    #[serde(default, rename = "as")]
    pub impersonate: Option<String>,
    /// UID to impersonate.
    #[serde(default, rename = "as-uid")]
    pub impersonate_uid: Option<String>,
    /// Groups to impersonate.
    #[serde(default, rename = "as-groups", deserialize_with = "null_as_default")]
    pub impersonate_groups: Vec<String>,
    /// Extra fields to impersonate.
    #[serde(
        default,
        rename = "as-user-extra",
        deserialize_with = "null_as_default"
    )]
    pub impersonate_extra: BTreeMap<String, Vec<String>>,
    /// Basic-auth user name.
    #[serde(default)]
    pub username: Option<String>,
    /// Basic-auth password.
    #[serde(default)]
    pub password: Option<Secret<String>>,
    /// Legacy auth provider: `gcp` (Google application default credentials
    /// with kubeset-rest's feature `oauth`) and `oidc` with kubeset-rest's
    /// feature `oidc`; any other is reported as an error.
    #[serde(default)]
    pub auth_provider: Option<AuthProvider>,
    /// Exec credential plugin.
    #[serde(default)]
    pub exec: Option<ExecConfig>,
}

/// A legacy `auth-provider` entry.
#[derive(Clone, Deserialize)]
#[non_exhaustive]
pub struct AuthProvider {
    /// The provider name (`oidc`, `gcp`, `azure`).
    pub name: String,
    /// The provider's settings (`oidc`: `id-token`, `refresh-token`,
    /// `client-id`, `client-secret`, `idp-issuer-url`,
    /// `idp-certificate-authority(-data)`; `gcp`: `access-token`, `expiry`,
    /// `cmd-path`, `cmd-args`, `token-key`, `expiry-key`, `scopes`); values
    /// are secret.
    #[serde(default)]
    pub config: BTreeMap<String, String>,
}

impl fmt::Debug for AuthProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthProvider")
            .field("name", &self.name)
            .field("config", &self.config.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// An exec credential plugin (`client.authentication.k8s.io`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ExecConfig {
    /// The program; a relative path with a separator resolves against the
    /// kubeconfig's directory, a bare name is looked up in `PATH`.
    #[serde(default)]
    pub command: String,
    /// Arguments.
    #[serde(default, deserialize_with = "null_as_default")]
    pub args: Vec<String>,
    /// Extra environment variables.
    #[serde(default, deserialize_with = "null_as_default")]
    pub env: Vec<ExecEnvVar>,
    /// `client.authentication.k8s.io/v1` or `/v1beta1`.
    #[serde(default)]
    pub api_version: Option<String>,
    /// Shown when the command cannot be started.
    #[serde(default)]
    pub install_hint: Option<String>,
    /// Pass the cluster in `KUBERNETES_EXEC_INFO`.
    #[serde(default)]
    pub provide_cluster_info: bool,
    /// `Never`, `IfAvailable` or `Always` (required for v1).
    #[serde(default)]
    pub interactive_mode: Option<String>,
}

/// An environment variable for an exec plugin; the value is redacted in `Debug`.
#[derive(Clone, Deserialize)]
#[non_exhaustive]
pub struct ExecEnvVar {
    /// Name.
    pub name: String,
    /// Value.
    pub value: String,
}

impl fmt::Debug for ExecEnvVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecEnvVar")
            .field("name", &self.name)
            .field("value", &"<redacted>")
            .finish()
    }
}

/// A context with its name.
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct NamedContext {
    /// The context name.
    pub name: String,
    /// The context.
    #[serde(default)]
    pub context: Option<Context>,
    /// The file this entry was read from.
    #[serde(skip)]
    pub origin: Option<PathBuf>,
}

/// A cluster, a user and a default namespace.
#[derive(Debug, Clone, Default, Deserialize)]
#[non_exhaustive]
pub struct Context {
    /// Cluster name.
    #[serde(default)]
    pub cluster: String,
    /// User name.
    #[serde(default)]
    pub user: String,
    /// Default namespace.
    #[serde(default)]
    pub namespace: Option<String>,
}

fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Resolves `path` against `base` unless it is empty or absolute.
fn resolve(path: &mut Option<String>, base: &Path) {
    if let Some(p) = path.as_mut()
        && !p.is_empty()
        && Path::new(p.as_str()).is_relative()
    {
        *p = base.join(p.as_str()).to_string_lossy().into_owned();
    }
}

impl Kubeconfig {
    /// Parses kubeconfig YAML that was not read from a file. Relative paths
    /// stay relative (to the process's working directory).
    pub fn from_yaml(text: &str) -> Result<Self, ConfigError> {
        Self::parse(text, "<in-memory kubeconfig>")
    }

    fn parse(text: &str, file: &str) -> Result<Self, ConfigError> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        let parsed: Option<Self> =
            serde_norway::from_str(text).map_err(|source| ConfigError::ParseKubeconfig {
                file: file.to_owned(),
                source,
            })?;
        Ok(parsed.unwrap_or_default())
    }

    /// Reads one kubeconfig file, resolving relative paths against its
    /// directory.
    pub fn read_from(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let text = super::error::read_bounded_text(path, |source| ConfigError::ReadFile {
            path: path.to_owned(),
            source,
        })?;
        let mut config = Self::parse(&text, &path.display().to_string())?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let base = if base.as_os_str().is_empty() {
            std::env::current_dir().unwrap_or_default()
        } else {
            base
        };
        for c in &mut config.clusters {
            c.origin = Some(path.to_owned());
            if let Some(cluster) = c.cluster.as_mut() {
                resolve(&mut cluster.certificate_authority, &base);
            }
        }
        for u in &mut config.users {
            u.origin = Some(path.to_owned());
            if let Some(user) = u.user.as_mut() {
                resolve(&mut user.client_certificate, &base);
                resolve(&mut user.client_key, &base);
                resolve(&mut user.token_file, &base);
                if let Some(exec) = user.exec.as_mut()
                    && exec.command.contains(std::path::MAIN_SEPARATOR)
                {
                    let mut cmd = Some(std::mem::take(&mut exec.command));
                    resolve(&mut cmd, &base);
                    exec.command = cmd.unwrap_or_default();
                }
            }
        }
        for c in &mut config.contexts {
            c.origin = Some(path.to_owned());
        }
        config.files = vec![path.to_owned()];
        Ok(config)
    }

    /// Merges `other` into `self` with client-go's rules: an entry already
    /// present (same name) wins; `current-context` is kept if set.
    #[must_use]
    pub fn merge(mut self, other: Kubeconfig) -> Kubeconfig {
        fn add<T>(into: &mut Vec<T>, from: Vec<T>, name: impl Fn(&T) -> &str) {
            for item in from {
                if !into.iter().any(|x| name(x) == name(&item)) {
                    into.push(item);
                }
            }
        }
        add(&mut self.clusters, other.clusters, |c| &c.name);
        add(&mut self.users, other.users, |u| &u.name);
        add(&mut self.contexts, other.contexts, |c| &c.name);
        if self.current_context.as_deref().unwrap_or("").is_empty() {
            self.current_context = other.current_context;
        }
        if self.api_version.is_none() {
            self.api_version = other.api_version;
        }
        if self.kind.is_none() {
            self.kind = other.kind;
        }
        self.files.extend(other.files);
        self
    }

    /// Reads and merges the files in order, skipping files that do not
    /// exist (as client-go does for `KUBECONFIG`). Fails if none exists.
    pub fn merge_files<P: AsRef<Path>>(paths: &[P]) -> Result<Self, ConfigError> {
        let mut merged: Option<Kubeconfig> = None;
        let mut seen: Vec<&Path> = Vec::new();
        for p in paths {
            let p = p.as_ref();
            if p.as_os_str().is_empty() || seen.contains(&p) {
                continue;
            }
            seen.push(p);
            if !p.exists() {
                continue;
            }
            let config = Self::read_from(p)?;
            merged = Some(match merged {
                None => config,
                Some(m) => m.merge(config),
            });
        }
        merged.ok_or_else(|| ConfigError::KubeconfigNotFound {
            searched: describe(paths),
        })
    }

    /// Loads the kubeconfig the way kubectl does: the files listed in
    /// `KUBECONFIG` (merged), else `~/.kube/config`.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_env_values(
            std::env::var_os("KUBECONFIG").as_deref(),
            std::env::home_dir().as_deref(),
        )
    }

    /// [`from_env`](Self::from_env) with the value of `KUBECONFIG` and the
    /// home directory given explicitly.
    pub fn from_env_values(
        kubeconfig_var: Option<&OsStr>,
        home: Option<&Path>,
    ) -> Result<Self, ConfigError> {
        let listed: Vec<PathBuf> = kubeconfig_var
            .map(|v| std::env::split_paths(v).collect())
            .unwrap_or_default();
        if listed.iter().any(|p| !p.as_os_str().is_empty()) {
            return Self::merge_files(&listed);
        }
        match home {
            Some(home) => Self::merge_files(&[home.join(".kube").join("config")]),
            None => Err(ConfigError::KubeconfigNotFound {
                searched: "KUBECONFIG (unset) and ~/.kube/config (no home directory)".to_owned(),
            }),
        }
    }

    /// The file(s) this kubeconfig came from, for error messages.
    pub(crate) fn describe_files(&self) -> String {
        if self.files.is_empty() {
            "<in-memory kubeconfig>".to_owned()
        } else {
            describe(&self.files)
        }
    }
}

fn describe<P: AsRef<Path>>(paths: &[P]) -> String {
    paths
        .iter()
        .map(|p| p.as_ref().display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn origin_name(origin: Option<&PathBuf>, fallback: &Kubeconfig) -> String {
    match origin {
        Some(p) => p.display().to_string(),
        None => fallback.describe_files(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_null_documents_are_empty_configs() {
        assert!(Kubeconfig::from_yaml("").unwrap().contexts.is_empty());
        assert!(Kubeconfig::from_yaml("~\n").unwrap().clusters.is_empty());
        let k = Kubeconfig::from_yaml("clusters: null\nusers:\ncontexts: []\n").unwrap();
        assert!(k.clusters.is_empty() && k.users.is_empty());
    }

    #[test]
    fn merge_is_first_wins() {
        let a = Kubeconfig::from_yaml(
            "clusters: [{name: c, cluster: {server: 'https://a'}}]\ncurrent-context: ''\n",
        )
        .unwrap();
        let b = Kubeconfig::from_yaml(
            "clusters: [{name: c, cluster: {server: 'https://b'}}, {name: d, cluster: {server: 'https://d'}}]\ncurrent-context: x\n",
        )
        .unwrap();
        let m = a.merge(b);
        assert_eq!(m.clusters.len(), 2);
        assert_eq!(
            m.clusters[0].cluster.as_ref().unwrap().server.as_deref(),
            Some("https://a")
        );
        assert_eq!(m.current_context.as_deref(), Some("x"));
    }
}
