//! The error type of the config layer.

use std::{
    io::{self, Read as _},
    path::{Path, PathBuf},
};

/// The largest file the config layer reads (kubeconfig, token, CA,
/// client certificate and key): 16 MiB. A kubeconfig with a hundred
/// contexts and embedded certificates is well under 1 MiB; a larger file
/// is not a configuration (a device, a log), and reading it whole would
/// use memory without bound.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Read `path` whole, at most [`MAX_FILE_BYTES`]: a regular file's size is
/// checked before reading; anything else (a pipe such as `<(cat config)`,
/// a device) is read up to the limit and refused beyond it. `io` maps a
/// read failure to the caller's error.
pub(crate) fn read_bounded(
    path: &Path,
    io: impl FnOnce(io::Error) -> ConfigError,
) -> Result<Vec<u8>, ConfigError> {
    let too_large = || ConfigError::FileTooLarge {
        path: path.to_owned(),
        limit: MAX_FILE_BYTES,
    };
    let read = || -> io::Result<Option<Vec<u8>>> {
        let file = std::fs::File::open(path)?;
        let meta = file.metadata()?;
        if meta.is_file() && meta.len() > MAX_FILE_BYTES {
            return Ok(None);
        }
        let mut bytes = Vec::new();
        file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
        Ok((bytes.len() as u64 <= MAX_FILE_BYTES).then_some(bytes))
    };
    read().map_err(io)?.ok_or_else(too_large)
}

/// [`read_bounded`] as UTF-8 text (invalid UTF-8 is an I/O error of kind
/// `InvalidData`, as `std::fs::read_to_string`'s).
pub(crate) fn read_bounded_text(
    path: &Path,
    io: impl Fn(io::Error) -> ConfigError,
) -> Result<String, ConfigError> {
    let bytes = read_bounded(path, &io)?;
    String::from_utf8(bytes).map_err(|e| io(io::Error::new(io::ErrorKind::InvalidData, e)))
}

/// A token endpoint's refusal (OIDC's issuer, Google's OAuth endpoint): the
/// status and OAuth's `error` and `error_description`, cut to 200 and 500
/// characters (never the body otherwise: it may echo secrets).
#[cfg(any(feature = "oidc", feature = "oauth"))]
pub(crate) fn oauth_refusal(status: http::StatusCode, body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct OAuthError {
        error: String,
        #[serde(default)]
        error_description: Option<String>,
    }
    match serde_json::from_slice::<OAuthError>(body) {
        Ok(e) => {
            let mut text: String = e.error.chars().take(200).collect();
            if let Some(d) = e.error_description {
                text.push_str(": ");
                text.extend(d.chars().take(500));
            }
            format!("status {status}, {text}")
        }
        Err(_) => format!("status {status}"),
    }
}

/// Everything that can go wrong while loading a configuration or obtaining
/// credentials.
///
/// Errors about a kubeconfig name the file (`file`), the entry (`entry`,
/// e.g. `user "alice"` or `context "dev"`) and the field; none of them
/// carries a secret value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A file could not be read.
    #[error("cannot read {}", path.display())]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },

    /// A file (kubeconfig, token, certificate) is larger than
    /// [`MAX_FILE_BYTES`](crate::config::MAX_FILE_BYTES): not what it should
    /// be (`KUBECONFIG=/dev/zero`), and not read further.
    #[error("{} is larger than the limit of {limit} bytes", path.display())]
    FileTooLarge {
        /// The file.
        path: PathBuf,
        /// The limit in bytes.
        limit: u64,
    },

    /// A server URL ([`parse_server`](crate::config::parse_server)) is not
    /// a URL at all.
    #[error("{server:?} is not a URL ({reason})")]
    ServerNotUrl {
        /// The server as written.
        server: String,
        /// What the URL parser said.
        reason: url::ParseError,
    },

    /// A server URL has a scheme other than http or https.
    #[error("{server:?}: the scheme must be http or https")]
    ServerScheme {
        /// The server as written.
        server: String,
    },

    /// A server URL has no host.
    #[error("{server:?} has no host")]
    ServerNoHost {
        /// The server as written.
        server: String,
    },

    /// A server URL's host is one the URL standard reads as an IPv4
    /// address although it is not written in dotted form (`12345`,
    /// `127.1`, `0x7f.0.0.1`).
    #[error(
        "{server:?}: the host {written:?} would be dialled as the IPv4 address {ip}; write the address in dotted form, or a DNS name"
    )]
    ServerNumericHost {
        /// The server as written.
        server: String,
        /// The host as written.
        written: String,
        /// The address the URL standard makes of it.
        ip: std::net::Ipv4Addr,
    },

    /// A kubeconfig file is not valid YAML or does not have the kubeconfig shape.
    #[error("{file} is not a valid kubeconfig")]
    ParseKubeconfig {
        /// The kubeconfig file.
        file: String,
        /// The YAML error.
        #[source]
        source: serde_norway::Error,
    },

    /// Neither `KUBECONFIG` nor `~/.kube/config` names an existing file.
    #[error("no kubeconfig found (looked at {searched})")]
    KubeconfigNotFound {
        /// The paths looked at.
        searched: String,
    },

    /// No context was requested and the kubeconfig has no `current-context`.
    #[error("{file}: no context requested and current-context is not set")]
    NoCurrentContext {
        /// The kubeconfig file(s).
        file: String,
    },

    /// A named context, cluster or user does not exist.
    #[error("{file}: {kind} {name:?} (field {field} of {referrer}) does not exist")]
    NotFound {
        /// The kubeconfig file(s).
        file: String,
        /// `context`, `cluster` or `user`.
        kind: &'static str,
        /// The name looked up.
        name: String,
        /// The field that named it.
        field: &'static str,
        /// What named it: `context "dev"` or `options`.
        referrer: String,
    },

    /// A required field is missing.
    #[error("{file}: {entry} has no {field}")]
    MissingField {
        /// The kubeconfig file.
        file: String,
        /// The entry, e.g. `cluster "prod"`.
        entry: String,
        /// The missing field.
        field: &'static str,
    },

    /// A field holds a value that cannot be used.
    #[error("{file}: {entry}: invalid {field}: {reason}")]
    InvalidField {
        /// The kubeconfig file (or the in-cluster directory).
        file: String,
        /// The entry, e.g. `user "alice"`.
        entry: String,
        /// The field.
        field: &'static str,
        /// What is wrong, without the value when the value is secret.
        reason: String,
    },

    /// A file named by a kubeconfig field cannot be read.
    #[error("{file}: {entry}: cannot read {field} {}", path.display())]
    ReadReferencedFile {
        /// The kubeconfig file.
        file: String,
        /// The entry, e.g. `user "alice"`.
        entry: String,
        /// The field that names the file.
        field: &'static str,
        /// The file named by the field.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },

    /// Two settings that exclude each other are both set.
    #[error("{file}: {entry}: {reason}")]
    Conflict {
        /// The kubeconfig file.
        file: String,
        /// The entry.
        entry: String,
        /// Which settings conflict.
        reason: String,
    },

    /// An exec credential plugin could not be started.
    #[error("{user}: cannot run exec plugin {command:?}{hint}")]
    ExecSpawn {
        /// The user entry, e.g. `user "alice"`.
        user: String,
        /// The command.
        command: String,
        /// The plugin's `installHint`, prefixed with `: ` when present.
        hint: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },

    /// An exec credential plugin exited unsuccessfully.
    #[error("{user}: exec plugin {command:?} failed ({status}){stderr}")]
    ExecFailed {
        /// The user entry.
        user: String,
        /// The command.
        command: String,
        /// The exit status.
        status: String,
        /// The plugin's standard error (at most 1 KiB), prefixed with `: `.
        stderr: String,
    },

    /// An exec credential plugin did not finish within its timeout (or the
    /// call that needed it gave up); it and its process group were killed.
    #[error("{user}: exec plugin {command:?} did not finish within {}; killed", crate::go_duration(*timeout))]
    ExecTimeout {
        /// The user entry.
        user: String,
        /// The command.
        command: String,
        /// The timeout.
        timeout: std::time::Duration,
    },

    /// An exec plugin timeout outside
    /// [`MIN_EXEC_TIMEOUT`](crate::config::MIN_EXEC_TIMEOUT)..=[`MAX_EXEC_TIMEOUT`](crate::config::MAX_EXEC_TIMEOUT)
    /// was asked for.
    #[error(
        "exec plugin timeout {} is outside {}..={}",
        crate::go_duration(*timeout),
        crate::go_duration(*min),
        crate::go_duration(*max)
    )]
    ExecTimeoutOutOfRange {
        /// The timeout asked for.
        timeout: std::time::Duration,
        /// The shortest accepted.
        min: std::time::Duration,
        /// The longest accepted.
        max: std::time::Duration,
    },

    /// An exec credential plugin printed more than
    /// [`MAX_EXEC_OUTPUT`](crate::config::MAX_EXEC_OUTPUT) on standard
    /// output; it was killed and its output dropped.
    #[error("{user}: exec plugin {command:?} printed more than {limit} bytes; killed")]
    ExecOutputTooLarge {
        /// The user entry.
        user: String,
        /// The command.
        command: String,
        /// The limit in bytes.
        limit: usize,
    },

    /// An exec credential plugin printed something that is not a usable
    /// `ExecCredential`. Its output is never included.
    #[error("{user}: exec plugin {command:?} returned an invalid ExecCredential: {reason}")]
    ExecOutput {
        /// The user entry.
        user: String,
        /// The command.
        command: String,
        /// What is wrong.
        reason: String,
    },

    /// `auth-provider: oidc`: a request to the issuer failed.
    #[error("{user}: OIDC request to {url} failed")]
    OidcRequest {
        /// The user entry.
        user: String,
        /// The issuer's discovery document or token endpoint.
        url: String,
        /// The transport error.
        #[source]
        source: reqwest::Error,
    },

    /// `auth-provider: oidc`: the issuer's answer cannot be used (a
    /// refusal, no `id_token`, no `token_endpoint`), or the id-token has
    /// expired with no refresh-token. Tokens are never included.
    #[error("{user}: OIDC: {url}: {reason}")]
    OidcAnswer {
        /// The user entry.
        user: String,
        /// The issuer's discovery document or token endpoint.
        url: String,
        /// What is wrong.
        reason: String,
    },

    /// `auth-provider: gcp`: no token could be had from `origin` (the
    /// output of `cmd-path`, the credentials file, the token endpoint's
    /// answer), or the cached access-token expired with nothing to renew
    /// it. Tokens, keys and the output are never included.
    #[error("{user}: auth-provider gcp: {origin}: {reason}")]
    GcpToken {
        /// The user entry.
        user: String,
        /// Where the token was to come from.
        origin: String,
        /// What is wrong.
        reason: String,
    },

    /// `auth-provider: gcp` (feature `oauth`): a request to the token
    /// endpoint of the Google credentials failed.
    #[error("{user}: auth-provider gcp: request to {url} failed")]
    GcpTokenRequest {
        /// The user entry.
        user: String,
        /// The token endpoint.
        url: String,
        /// The transport error.
        #[source]
        source: reqwest::Error,
    },

    /// In-cluster: an environment variable is not set.
    #[error("not running in a cluster: {var} is not set")]
    InClusterEnvNotSet {
        /// The variable.
        var: &'static str,
    },

    /// In-cluster: an environment variable is set but empty.
    #[error("not running in a cluster: {var} is set but empty")]
    InClusterEnvEmpty {
        /// The variable.
        var: &'static str,
    },

    /// In-cluster: a service-account file is missing or unreadable.
    #[error("in-cluster {what} {} cannot be read", path.display())]
    InClusterFileMissing {
        /// `CA certificate` or `token`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },

    /// In-cluster: a service-account file is empty.
    #[error("in-cluster {what} {} is empty", path.display())]
    InClusterFileEmpty {
        /// `CA certificate` or `token`.
        what: &'static str,
        /// The file.
        path: PathBuf,
    },

    /// A token file re-read at request time failed and no earlier token is
    /// available.
    #[error("token file {} is empty", path.display())]
    EmptyTokenFile {
        /// The file.
        path: PathBuf,
    },

    /// The rustls client configuration could not be built.
    #[error("cannot build the TLS configuration: {what}")]
    Tls {
        /// What was being built.
        what: String,
        /// The rustls error.
        #[source]
        source: rustls::Error,
    },

    /// A header (impersonation, authorization) would not be a valid HTTP header.
    #[error("{entry}: {field} cannot be sent as an HTTP header")]
    InvalidHeader {
        /// The entry.
        entry: String,
        /// The field.
        field: String,
    },

    /// `infer()` found neither a kubeconfig nor an in-cluster environment.
    #[error("no configuration found: kubeconfig: {kubeconfig}; in-cluster: {incluster}")]
    Infer {
        /// Why the kubeconfig could not be used.
        kubeconfig: Box<ConfigError>,
        /// Why the in-cluster configuration could not be used.
        incluster: Box<ConfigError>,
    },
}

/// `?` from a configuration step into a function returning the REST
/// layer's [`Error`](crate::Error) (kube-rs's `Config::infer().await?` in a
/// function returning `kube::Error`).
impl From<ConfigError> for crate::Error {
    fn from(e: ConfigError) -> Self {
        crate::Error::Config {
            source: Box::new(e),
        }
    }
}

#[cfg(all(test, any(feature = "oidc", feature = "oauth")))]
mod tests {
    use http::StatusCode;

    use super::oauth_refusal;

    #[test]
    fn refusals_keep_only_the_oauth_error() {
        let body =
            br#"{"error": "invalid_grant", "error_description": "expired", "refresh_token": "x"}"#;
        let text = oauth_refusal(StatusCode::BAD_REQUEST, body);
        assert_eq!(text, "status 400 Bad Request, invalid_grant: expired");
        assert_eq!(
            oauth_refusal(StatusCode::BAD_GATEWAY, b"<html>"),
            "status 502 Bad Gateway"
        );
    }
}
