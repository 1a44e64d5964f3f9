//! Exec credential plugins (`client.authentication.k8s.io` v1 and v1beta1).

use std::{
    fmt,
    process::Command,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, SystemTime},
};

use base64::Engine as _;
use http::HeaderValue;
use rustls::sign::CertifiedKey;
use serde::Deserialize;

use super::{
    ConfigError, Secret,
    kubeconfig::ExecConfig,
    plugin::{self, RunError},
    tls::certified_key,
};
use crate::auth::{AuthFuture, Authenticator};

const V1: &str = "client.authentication.k8s.io/v1";
const V1BETA1: &str = "client.authentication.k8s.io/v1beta1";
pub(super) const MAX_STDERR: usize = 1024;

/// How long a plugin may run unless configured otherwise
/// ([`Config::with_exec_timeout`](crate::config::Config::with_exec_timeout)).
/// client-go sets none and has no setting for it (a hung plugin hangs the
/// client for ever); kube-rs neither. Three minutes is the authentication
/// timeout of kubelogin, the slowest common plugin (it waits for a browser
/// login), so no working plugin is cut. A call that gives up earlier (its
/// own budget) kills the plugin then.
pub const DEFAULT_EXEC_TIMEOUT: Duration = Duration::from_secs(180);

/// The shortest exec plugin timeout accepted: 1 s (a plugin has to start a
/// process at least; below this every run would fail on a busy machine).
pub const MIN_EXEC_TIMEOUT: Duration = Duration::from_secs(1);

/// The longest exec plugin timeout accepted: 1 h. A plugin that needs
/// longer is waiting for something that will not come, and the client
/// (and its process, blocked on the credential) would wait with it.
pub const MAX_EXEC_TIMEOUT: Duration = Duration::from_secs(3600);

/// `timeout` if it is within [`MIN_EXEC_TIMEOUT`]..=[`MAX_EXEC_TIMEOUT`].
pub(crate) fn check_exec_timeout(timeout: Duration) -> Result<Duration, ConfigError> {
    if (MIN_EXEC_TIMEOUT..=MAX_EXEC_TIMEOUT).contains(&timeout) {
        Ok(timeout)
    } else {
        Err(ConfigError::ExecTimeoutOutOfRange {
            timeout,
            min: MIN_EXEC_TIMEOUT,
            max: MAX_EXEC_TIMEOUT,
        })
    }
}

/// The most a plugin may print on standard output: 1 MiB. An
/// `ExecCredential` with a token, a certificate chain and a key is a few
/// KiB; anything near this is not a credential, and reading it whole
/// would use memory without bound.
pub const MAX_EXEC_OUTPUT: usize = 1024 * 1024;

/// Runs an exec plugin and caches what it returns (a bearer token and/or a
/// client certificate) until its `expirationTimestamp`, or until
/// [`invalidate`](Authenticator::invalidate) after a 401.
pub struct ExecAuthenticator {
    spec: Arc<ExecSpec>,
    cache: Mutex<Option<Credential>>,
    refresh: tokio::sync::Mutex<()>,
}

/// What is needed to run the plugin, shareable with a blocking thread.
#[derive(Clone)]
struct ExecSpec {
    user: String,
    command: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    api_version: &'static str,
    install_hint: Option<String>,
    exec_info: String,
    timeout: Duration,
}

#[derive(Clone)]
struct Credential {
    token: Option<HeaderValue>,
    identity: Option<Arc<CertifiedKey>>,
    expires: Option<SystemTime>,
    stale: bool,
}

impl Credential {
    fn fresh(&self) -> bool {
        !self.stale && self.expires.is_none_or(|t| SystemTime::now() < t)
    }
}

impl fmt::Debug for ExecAuthenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecAuthenticator")
            .field("user", &self.spec.user)
            .field("command", &self.spec.command)
            .field("args", &self.spec.args.len())
            .field("api_version", &self.spec.api_version)
            .field("timeout", &self.spec.timeout)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredential {
    #[serde(default)]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    status: Option<ExecCredentialStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredentialStatus {
    #[serde(default)]
    expiration_timestamp: Option<String>,
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    client_certificate_data: Option<String>,
    #[serde(default)]
    client_key_data: Option<String>,
}

/// The cluster as passed to a plugin with `provideClusterInfo: true`.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClusterInfo {
    pub server: String,
    pub tls_server_name: Option<String>,
    pub insecure_skip_tls_verify: bool,
    pub ca_pem: Option<Vec<u8>>,
    pub proxy_url: Option<String>,
    pub exec_extension: Option<serde_json::Value>,
}

impl ExecAuthenticator {
    /// Validates an exec configuration. `user` names the kubeconfig entry
    /// in errors (e.g. `user "alice" in /home/a/.kube/config`); `timeout`
    /// is checked by the caller ([`check_exec_timeout`]).
    pub(crate) fn new(
        user: String,
        exec: &ExecConfig,
        cluster: Option<ClusterInfo>,
        timeout: Duration,
    ) -> Result<Self, ConfigError> {
        let invalid = |field: &'static str, reason: String| ConfigError::InvalidField {
            file: String::new(),
            entry: user.clone(),
            field,
            reason,
        };
        if exec.command.is_empty() {
            return Err(invalid("exec.command", "must not be empty".to_owned()));
        }
        let api_version = match exec.api_version.as_deref() {
            Some(V1) => V1,
            Some(V1BETA1) => V1BETA1,
            other => {
                return Err(invalid(
                    "exec.apiVersion",
                    format!("{other:?} is not {V1:?} or {V1BETA1:?}"),
                ));
            }
        };
        let interactive = match exec.interactive_mode.as_deref() {
            None if api_version == V1 => {
                return Err(invalid(
                    "exec.interactiveMode",
                    format!("must be set for {V1}"),
                ));
            }
            None | Some("Never") | Some("IfAvailable") => false,
            Some("Always") => {
                return Err(invalid(
                    "exec.interactiveMode",
                    "Always needs a terminal, which a library client does not have".to_owned(),
                ));
            }
            Some(other) => {
                return Err(invalid(
                    "exec.interactiveMode",
                    format!("{other:?} is not Never, IfAvailable or Always"),
                ));
            }
        };
        let mut spec = serde_json::json!({ "interactive": interactive });
        if let (true, Some(c)) = (exec.provide_cluster_info, cluster) {
            let mut cluster = serde_json::json!({
                "server": c.server,
                "insecure-skip-tls-verify": c.insecure_skip_tls_verify,
            });
            if let Some(n) = c.tls_server_name {
                cluster["tls-server-name"] = n.into();
            }
            if let Some(ca) = c.ca_pem {
                cluster["certificate-authority-data"] =
                    base64::engine::general_purpose::STANDARD.encode(ca).into();
            }
            if let Some(p) = c.proxy_url {
                cluster["proxy-url"] = p.into();
            }
            if let Some(cfg) = c.exec_extension {
                cluster["config"] = cfg;
            }
            spec["cluster"] = cluster;
        }
        let exec_info = serde_json::json!({
            "kind": "ExecCredential",
            "apiVersion": api_version,
            "spec": spec,
        })
        .to_string();
        let spec = ExecSpec {
            user,
            command: exec.command.clone(),
            args: exec.args.clone(),
            env: exec
                .env
                .iter()
                .map(|e| (e.name.clone(), e.value.clone()))
                .collect(),
            api_version,
            install_hint: exec.install_hint.clone(),
            exec_info,
            timeout,
        };
        Ok(Self::from_spec(spec))
    }

    fn from_spec(spec: ExecSpec) -> Self {
        Self {
            spec: Arc::new(spec),
            cache: Mutex::new(None),
            refresh: tokio::sync::Mutex::new(()),
        }
    }

    /// How long one run of the plugin may take before it (and its process
    /// group) is killed.
    pub fn timeout(&self) -> Duration {
        self.spec.timeout
    }

    /// The same plugin with another timeout, within
    /// [`MIN_EXEC_TIMEOUT`]..=[`MAX_EXEC_TIMEOUT`] (else
    /// [`ConfigError::ExecTimeoutOutOfRange`]). The new authenticator starts
    /// with no cached credential.
    pub fn with_timeout(&self, timeout: Duration) -> Result<Self, ConfigError> {
        let mut spec = ExecSpec::clone(&self.spec);
        spec.timeout = check_exec_timeout(timeout)?;
        Ok(Self::from_spec(spec))
    }

    fn store(&self, credential: &Credential) {
        *self.cache.lock().unwrap_or_else(PoisonError::into_inner) = Some(credential.clone());
    }

    fn cached(&self) -> Option<Credential> {
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The latest client certificate the plugin returned. Runs the plugin
    /// (blocking) if it has never run.
    pub fn current_certificate(&self) -> Option<Arc<CertifiedKey>> {
        if let Some(c) = self.cached() {
            return c.identity;
        }
        match self.spec.run(&AtomicBool::new(false)) {
            Ok(c) => {
                self.store(&c);
                c.identity
            }
            Err(e) => {
                tracing::warn!(error = %e, "exec plugin for the client certificate failed");
                None
            }
        }
    }

    /// Returns the cached credential or runs the plugin (off the async
    /// runtime's worker threads). Concurrent callers share one run.
    async fn credential(&self) -> Result<Credential, ConfigError> {
        let _guard = self.refresh.lock().await;
        if let Some(c) = self.cached().filter(Credential::fresh) {
            return Ok(c);
        }
        let credential = match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                let spec = self.spec.clone();
                // The call may give up (its budget) before the plugin
                // ends: dropping this future then kills the plugin.
                let cancel = CancelOnDrop(Arc::new(AtomicBool::new(false)));
                let flag = cancel.0.clone();
                handle
                    .spawn_blocking(move || spec.run(&flag))
                    .await
                    .map_err(|e| ConfigError::ExecFailed {
                        user: self.spec.user.clone(),
                        command: self.spec.command.clone(),
                        status: format!("plugin task ended abnormally: {e}"),
                        stderr: String::new(),
                    })??
            }
            Err(_) => self.spec.run(&AtomicBool::new(false))?,
        };
        self.store(&credential);
        Ok(credential)
    }
}

impl ExecSpec {
    /// Runs the plugin now (blocking), killed after its timeout or when
    /// `cancel` is set.
    fn run(&self, cancel: &AtomicBool) -> Result<Credential, ConfigError> {
        let mut cmd = Command::new(&self.command);
        cmd.args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("KUBERNETES_EXEC_INFO", &self.exec_info);
        let output = plugin::run(cmd, self.timeout, cancel, MAX_EXEC_OUTPUT, MAX_STDERR * 4)
            .map_err(|e| {
                let hint = self
                    .install_hint
                    .as_deref()
                    .map(|h| format!(": {}", h.trim()))
                    .unwrap_or_default();
                run_error(&self.user, &self.command, hint, self.timeout, e)
            })?;
        if !output.status.success() {
            return Err(exit_error(&self.user, &self.command, &output));
        }
        self.parse(&Secret::new(output.stdout))
    }

    fn parse(&self, stdout: &Secret<Vec<u8>>) -> Result<Credential, ConfigError> {
        let bad = |reason: String| ConfigError::ExecOutput {
            user: self.user.clone(),
            command: self.command.clone(),
            reason,
        };
        let cred: ExecCredential = serde_json::from_slice(stdout.expose())
            .map_err(|e| bad(format!("not JSON of the expected shape ({e})")))?;
        if cred.kind.as_deref() != Some("ExecCredential") {
            return Err(bad(format!(
                "kind is {:?}, not \"ExecCredential\"",
                cred.kind
            )));
        }
        if cred.api_version.as_deref() != Some(self.api_version) {
            return Err(bad(format!(
                "apiVersion is {:?}, expected {:?}",
                cred.api_version, self.api_version
            )));
        }
        let status = cred
            .status
            .ok_or_else(|| bad("status is missing".to_owned()))?;
        let expires = status
            .expiration_timestamp
            .as_deref()
            .map(|t| {
                super::rfc3339::parse(t)
                    .map_err(|e| bad(format!("expirationTimestamp {t:?} is not RFC 3339 ({e})")))
            })
            .transpose()?;
        let token = match status.token.as_deref() {
            Some(t) if !t.is_empty() => {
                let mut v = HeaderValue::try_from(format!("Bearer {t}")).map_err(|_| {
                    bad("token contains characters not allowed in a header".to_owned())
                })?;
                v.set_sensitive(true);
                Some(v)
            }
            _ => None,
        };
        let identity = match (
            status.client_certificate_data.as_deref(),
            status.client_key_data.as_deref(),
        ) {
            (Some(c), Some(k)) if !c.is_empty() && !k.is_empty() => Some(Arc::new(
                certified_key(c.as_bytes(), k.as_bytes())
                    .map_err(|e| bad(format!("clientCertificateData/clientKeyData: {e}")))?,
            )),
            (None, None) => None,
            (Some(c), Some(k)) if c.is_empty() && k.is_empty() => None,
            _ => {
                return Err(bad(
                    "clientCertificateData and clientKeyData must be set together".to_owned(),
                ));
            }
        };
        if token.is_none() && identity.is_none() {
            return Err(bad(
                "neither token nor client certificate returned".to_owned()
            ));
        }
        Ok(Credential {
            token,
            identity,
            expires,
            stale: false,
        })
    }
}

/// The error of a credential command run that left no output: not
/// started (`hint` is appended), killed at `timeout`, too much output, or
/// not waited for. Shared with `auth-provider: gcp`'s `cmd-path`.
pub(super) fn run_error(
    user: &str,
    command: &str,
    hint: String,
    timeout: Duration,
    e: RunError,
) -> ConfigError {
    let (user, command) = (user.to_owned(), command.to_owned());
    match e {
        RunError::Spawn(source) => ConfigError::ExecSpawn {
            user,
            command,
            hint,
            source,
        },
        RunError::Timeout => ConfigError::ExecTimeout {
            user,
            command,
            timeout,
        },
        RunError::TooLarge => ConfigError::ExecOutputTooLarge {
            user,
            command,
            limit: MAX_EXEC_OUTPUT,
        },
        RunError::Wait(e) => ConfigError::ExecFailed {
            user,
            command,
            status: format!("waiting for the plugin failed: {e}"),
            stderr: String::new(),
        },
    }
}

/// The error of a credential command that exited unsuccessfully, with the
/// start of its standard error (at most 1 KiB).
pub(super) fn exit_error(user: &str, command: &str, output: &plugin::Finished) -> ConfigError {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let mut stderr = stderr.trim().to_owned();
    if stderr.len() > MAX_STDERR {
        let mut cut = MAX_STDERR;
        while !stderr.is_char_boundary(cut) {
            cut -= 1;
        }
        stderr.truncate(cut);
        stderr.push('…');
    }
    ConfigError::ExecFailed {
        user: user.to_owned(),
        command: command.to_owned(),
        status: output.status.to_string(),
        stderr: if stderr.is_empty() {
            String::new()
        } else {
            format!(": {stderr}")
        },
    }
}

/// Sets its flag when dropped: a cancelled credential future stops the
/// plugin it started.
pub(super) struct CancelOnDrop(pub(super) Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Authenticator for ExecAuthenticator {
    fn authorization(&self) -> AuthFuture<'_> {
        Box::pin(async move {
            let c = self.credential().await?;
            Ok(c.token)
        })
    }

    fn invalidate(&self) {
        if let Some(c) = self
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            c.stale = true;
        }
    }
}
