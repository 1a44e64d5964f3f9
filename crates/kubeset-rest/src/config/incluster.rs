//! In-cluster configuration from the service-account mount.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use url::Url;

use super::{Config, ConfigError, TlsSettings, auth::ServiceAccountToken, tls::parse_certs};

/// The default service-account directory.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// Inputs of the in-cluster loader; [`InClusterOptions::from_env`] reads the
/// process environment, tests can fill the fields directly.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct InClusterOptions {
    /// `KUBERNETES_SERVICE_HOST`.
    pub host: Option<String>,
    /// `KUBERNETES_SERVICE_PORT`.
    pub port: Option<String>,
    /// Directory holding `token`, `ca.crt` and `namespace`.
    pub root: PathBuf,
}

impl InClusterOptions {
    /// Reads `KUBERNETES_SERVICE_HOST` / `KUBERNETES_SERVICE_PORT`; the
    /// root is [`SERVICE_ACCOUNT_DIR`].
    pub fn from_env() -> Self {
        Self {
            host: std::env::var("KUBERNETES_SERVICE_HOST").ok(),
            port: std::env::var("KUBERNETES_SERVICE_PORT").ok(),
            root: PathBuf::from(SERVICE_ACCOUNT_DIR),
        }
    }

    /// Explicit host, port and service-account directory.
    pub fn new(host: Option<String>, port: Option<String>, root: impl Into<PathBuf>) -> Self {
        Self {
            host,
            port,
            root: root.into(),
        }
    }

    /// Replaces the service-account directory.
    #[must_use]
    pub fn with_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.root = root.into();
        self
    }
}

fn read_nonempty(path: &Path, what: &'static str) -> Result<Vec<u8>, ConfigError> {
    let bytes = super::error::read_bounded(path, |source| ConfigError::InClusterFileMissing {
        what,
        path: path.to_owned(),
        source,
    })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ConfigError::InClusterFileEmpty {
            what,
            path: path.to_owned(),
        });
    }
    Ok(bytes)
}

/// The API server URL from host and port; IPv6 hosts are bracketed.
pub(crate) fn server_url(host: &str, port: &str) -> Result<Url, ConfigError> {
    let host = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_owned()
    };
    let text = format!("https://{host}:{port}");
    Url::parse(&text).map_err(|e| ConfigError::InvalidField {
        file: "environment".to_owned(),
        entry: "in-cluster".to_owned(),
        field: "KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT",
        reason: format!("{text:?} is not a URL ({e})"),
    })
}

impl Config {
    /// In-cluster configuration from the environment and
    /// [`SERVICE_ACCOUNT_DIR`].
    pub fn incluster() -> Result<Self, ConfigError> {
        Self::incluster_from(&InClusterOptions::from_env())
    }

    /// In-cluster configuration with another service-account directory.
    pub fn incluster_with_root(root: impl AsRef<Path>) -> Result<Self, ConfigError> {
        Self::incluster_from(&InClusterOptions::from_env().with_root(root.as_ref()))
    }

    /// In-cluster configuration from explicit inputs. Errors come in this
    /// order: host/port not set, set but empty, CA missing, CA empty, token
    /// missing, token empty.
    pub fn incluster_from(options: &InClusterOptions) -> Result<Self, ConfigError> {
        let host = options
            .host
            .as_deref()
            .ok_or(ConfigError::InClusterEnvNotSet {
                var: "KUBERNETES_SERVICE_HOST",
            })?;
        let port = options
            .port
            .as_deref()
            .ok_or(ConfigError::InClusterEnvNotSet {
                var: "KUBERNETES_SERVICE_PORT",
            })?;
        if host.trim().is_empty() {
            return Err(ConfigError::InClusterEnvEmpty {
                var: "KUBERNETES_SERVICE_HOST",
            });
        }
        if port.trim().is_empty() {
            return Err(ConfigError::InClusterEnvEmpty {
                var: "KUBERNETES_SERVICE_PORT",
            });
        }
        let ca_path = options.root.join("ca.crt");
        let ca = read_nonempty(&ca_path, "CA certificate")?;
        let token = ServiceAccountToken::new(options.root.join("token"))?;
        let root_certs = parse_certs(&ca).map_err(|reason| ConfigError::InvalidField {
            file: ca_path.display().to_string(),
            entry: "in-cluster".to_owned(),
            field: "ca.crt",
            reason,
        })?;
        let namespace = std::fs::read_to_string(options.root.join("namespace"))
            .ok()
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default".to_owned());
        let mut config = Config::new(server_url(host.trim(), port.trim())?);
        config.default_namespace = namespace;
        config.tls = TlsSettings {
            root_certs,
            ..TlsSettings::default()
        };
        config.authenticator = Some(Arc::new(token));
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::server_url;

    #[test]
    fn ipv6_hosts_are_bracketed() {
        assert_eq!(
            server_url("fd00::1", "443").unwrap().as_str(),
            "https://[fd00::1]/"
        );
        assert_eq!(
            server_url("10.0.0.1", "6443").unwrap().as_str(),
            "https://10.0.0.1:6443/"
        );
        assert_eq!(
            server_url("[::1]", "6443").unwrap().host_str(),
            Some("[::1]")
        );
    }
}
