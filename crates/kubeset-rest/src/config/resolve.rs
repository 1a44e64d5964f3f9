//! The stages of [`Config::from_custom_kubeconfig`](super::Config::from_custom_kubeconfig),
//! split as client-go's `clientcmd.DirectClientConfig` splits them: pick
//! the context, then its cluster and user (`getContext`, `getCluster`,
//! `getAuthInfo`); the server URL, proxy and trust of the cluster
//! (`getServerIdentificationPartialConfig`); the credentials of the user
//! (`getUserIdentificationPartialConfig`: client certificate, token or
//! token file, basic auth, exec plugin); impersonation. Each stage takes
//! the parsed kubeconfig pieces and returns its part of the `Config` or a
//! [`ConfigError`] naming the file, the entry and the field. Only reading
//! the files an entry names is I/O.

use std::{path::PathBuf, sync::Arc};

use base64::Engine as _;
use rustls::pki_types::CertificateDer;
use url::Url;

use super::{
    AuthInfo, BasicAuth, ClientIdentity, Cluster, Config, ConfigError, Context,
    DEFAULT_EXEC_TIMEOUT, ExecAuthenticator, ExecConfig, Impersonation, KubeConfigOptions,
    Kubeconfig, Secret, StaticToken, TokenFile, error, exec, kubeconfig, parse_server, tls,
};
use crate::auth::Authenticator;

/// A kubeconfig entry as chosen, with where it came from for errors.
#[derive(Debug)]
pub(super) struct Chosen<T> {
    /// The entry's value (its default when the entry has none).
    pub value: T,
    /// The file the entry was read from.
    pub file: String,
    /// `context "name"`, `cluster "name"`, `user "name"`.
    pub label: String,
}

impl<T> Chosen<T> {
    fn loader(&self) -> Loader<'_> {
        Loader {
            file: &self.file,
            entry: &self.label,
        }
    }

    /// `user "alice" in /home/a/.kube/config`.
    fn described(&self) -> String {
        format!("{} in {}", self.label, self.file)
    }
}

/// The context, cluster and user a kubeconfig and the options pick.
#[derive(Debug)]
pub(super) struct Selection {
    /// The context (namespace).
    pub context: Chosen<Context>,
    /// The cluster: the context's, or the one the options name.
    pub cluster: Chosen<Cluster>,
    /// The user: the context's, or the one the options name; an empty
    /// name is a user without credentials.
    pub user: Chosen<AuthInfo>,
}

/// Picks the context (`options.context`, else `current-context`), then its
/// cluster and user, each overridable by the options (`--cluster`,
/// `--user`), as client-go's `getContext`/`getCluster`/`getAuthInfo`.
pub(super) fn select(
    kubeconfig: &Kubeconfig,
    options: &KubeConfigOptions,
) -> Result<Selection, ConfigError> {
    let files = kubeconfig.describe_files();
    let context = select_context(kubeconfig, options.context.as_deref(), &files)?;
    let cluster = select_cluster(kubeconfig, options.cluster.as_deref(), &context, &files)?;
    let user = select_user(kubeconfig, options.user.as_deref(), &context, &files)?;
    Ok(Selection {
        context,
        cluster,
        user,
    })
}

/// One entry a kubeconfig is asked for, and who asked (for errors).
struct Wanted<'a> {
    /// `context`, `cluster`, `user`.
    kind: &'static str,
    name: &'a str,
    /// The field that named it.
    field: &'static str,
    /// `options`, `current-context` or the context entry.
    referrer: String,
    /// The kubeconfig's files, for a name no entry has.
    files: &'a str,
}

impl Wanted<'_> {
    /// The named entry of `entries` (`parts`: its name, value and origin).
    fn find<'e, E, T: Clone + Default + 'e>(
        self,
        kubeconfig: &Kubeconfig,
        entries: &'e [E],
        parts: impl Fn(&'e E) -> (&'e str, Option<&'e T>, Option<&'e PathBuf>),
    ) -> Result<Chosen<T>, ConfigError> {
        let Some((_, value, origin)) = entries.iter().map(parts).find(|p| p.0 == self.name) else {
            return Err(ConfigError::NotFound {
                file: self.files.to_owned(),
                kind: self.kind,
                name: self.name.to_owned(),
                field: self.field,
                referrer: self.referrer,
            });
        };
        Ok(Chosen {
            value: value.cloned().unwrap_or_default(),
            file: kubeconfig::origin_name(origin, kubeconfig),
            label: format!("{} {:?}", self.kind, self.name),
        })
    }
}

fn select_context(
    kubeconfig: &Kubeconfig,
    requested: Option<&str>,
    files: &str,
) -> Result<Chosen<Context>, ConfigError> {
    let (name, field, referrer) = match (requested, kubeconfig.current_context.as_deref()) {
        (Some(c), _) => (c, "context", "options"),
        (None, Some(c)) if !c.is_empty() => (c, "current-context", "current-context"),
        _ => {
            return Err(ConfigError::NoCurrentContext {
                file: files.to_owned(),
            });
        }
    };
    let wanted = Wanted {
        kind: "context",
        name,
        field,
        referrer: referrer.to_owned(),
        files,
    };
    wanted.find(kubeconfig, &kubeconfig.contexts, |e| {
        (&e.name, e.context.as_ref(), e.origin.as_ref())
    })
}

fn select_cluster(
    kubeconfig: &Kubeconfig,
    requested: Option<&str>,
    context: &Chosen<Context>,
    files: &str,
) -> Result<Chosen<Cluster>, ConfigError> {
    let (name, referrer) = match requested {
        Some(c) => (c, "options".to_owned()),
        None => (context.value.cluster.as_str(), context.described()),
    };
    if name.is_empty() {
        return Err(context.loader().missing("cluster"));
    }
    let wanted = Wanted {
        kind: "cluster",
        name,
        field: "cluster",
        referrer,
        files,
    };
    wanted.find(kubeconfig, &kubeconfig.clusters, |e| {
        (&e.name, e.cluster.as_ref(), e.origin.as_ref())
    })
}

fn select_user(
    kubeconfig: &Kubeconfig,
    requested: Option<&str>,
    context: &Chosen<Context>,
    files: &str,
) -> Result<Chosen<AuthInfo>, ConfigError> {
    let name = requested.unwrap_or(&context.value.user);
    if name.is_empty() {
        // A context without a user: no credentials.
        return Ok(Chosen {
            value: AuthInfo::default(),
            file: context.file.clone(),
            label: "user \"\"".to_owned(),
        });
    }
    let wanted = Wanted {
        kind: "user",
        name,
        field: "user",
        referrer: match requested {
            Some(_) => "options".to_owned(),
            None => context.described(),
        },
        files,
    };
    wanted.find(kubeconfig, &kubeconfig.users, |e| {
        (&e.name, e.user.as_ref(), e.origin.as_ref())
    })
}

/// The context's namespace, if it names one.
pub(super) fn namespace(context: &Context) -> Option<String> {
    context.namespace.clone().filter(|n| !n.is_empty())
}

/// The cluster's `server`, parsed by [`parse_server`].
pub(super) fn server(cluster: &Chosen<Cluster>) -> Result<Url, ConfigError> {
    let l = cluster.loader();
    let server = cluster.value.server.as_deref().unwrap_or("");
    if server.trim().is_empty() {
        return Err(l.missing("server"));
    }
    parse_server(server).map_err(|e| l.invalid("server", e.to_string()))
}

/// The cluster's `proxy-url`, if it has one.
pub(super) fn proxy(cluster: &Chosen<Cluster>) -> Result<Option<Url>, ConfigError> {
    match cluster.value.proxy_url.as_deref().filter(|p| !p.is_empty()) {
        None => Ok(None),
        Some(p) => Url::parse(p)
            .map(Some)
            .map_err(|e| cluster.loader().invalid("proxy-url", e.to_string())),
    }
}

/// How the cluster entry says to trust the server.
#[derive(Debug)]
pub(super) struct Trust {
    /// The CA bundle as PEM (`certificate-authority-data` wins over
    /// `certificate-authority`), for exec plugins' cluster info.
    pub ca_pem: Option<Vec<u8>>,
    /// The certificates of `ca_pem`.
    pub root_certs: Vec<CertificateDer<'static>>,
    /// `insecure-skip-tls-verify`.
    pub insecure_skip_verify: bool,
    /// `tls-server-name`, if not empty.
    pub server_name: Option<String>,
}

/// The CA (inline data over a file, as client-go), `insecure-skip-tls-verify`
/// (which excludes a CA, as client-go's validation) and `tls-server-name`.
pub(super) fn trust(cluster: &Chosen<Cluster>) -> Result<Trust, ConfigError> {
    let (c, l) = (&cluster.value, cluster.loader());
    let (field, ca_pem) = match (&c.certificate_authority_data, &c.certificate_authority) {
        (Some(data), _) if !data.is_empty() => (
            "certificate-authority-data",
            Some(l.base64("certificate-authority-data", data)?),
        ),
        (_, Some(path)) if !path.is_empty() => (
            "certificate-authority",
            Some(l.read("certificate-authority", path)?),
        ),
        _ => ("", None),
    };
    if c.insecure_skip_tls_verify && ca_pem.is_some() {
        return Err(ConfigError::Conflict {
            file: cluster.file.clone(),
            entry: cluster.label.clone(),
            reason: "certificate-authority(-data) and insecure-skip-tls-verify exclude each other"
                .to_owned(),
        });
    }
    let root_certs = match &ca_pem {
        Some(pem) => tls::parse_certs(pem).map_err(|reason| l.invalid(field, reason))?,
        None => Vec::new(),
    };
    Ok(Trust {
        ca_pem,
        root_certs,
        insecure_skip_verify: c.insecure_skip_tls_verify,
        server_name: c.tls_server_name.clone().filter(|n| !n.is_empty()),
    })
}

/// The legacy `auth-provider` (removed from client-go in 1.26): `gcp`, and
/// `oidc` with the feature `oidc` (kube-rs's); any other is refused, naming
/// it.
pub(super) fn auth_provider(
    config: &mut Config,
    user: &Chosen<AuthInfo>,
) -> Result<(), ConfigError> {
    let Some(provider) = &user.value.auth_provider else {
        return Ok(());
    };
    let l = user.loader();
    if provider.name == "gcp" {
        let timeout = exec::check_exec_timeout(DEFAULT_EXEC_TIMEOUT)?;
        let gcp = super::gcp::GcpAuthenticator::new(&provider.config, user.described(), timeout)
            .map_err(|super::gcp::SetupError::Invalid(field, reason)| l.invalid(field, reason))?;
        let gcp = Arc::new(gcp);
        config.authenticator = Some(gcp.clone());
        config.gcp = Some(gcp);
        return Ok(());
    }
    #[cfg(feature = "oidc")]
    if provider.name == "oidc" {
        let get = |k: &str| provider.config.get(k).filter(|v| !v.trim().is_empty());
        let ca = match (
            get("idp-certificate-authority-data"),
            get("idp-certificate-authority"),
        ) {
            (Some(data), _) => Some(l.base64("idp-certificate-authority-data", data)?),
            (_, Some(path)) => Some(l.read("idp-certificate-authority", path)?),
            _ => None,
        };
        let oidc =
            super::oidc::OidcAuthenticator::new(&provider.config, ca.as_deref(), user.described())
                .map_err(|e| match e {
                    super::oidc::SetupError::Missing(field) => l.missing(field),
                    super::oidc::SetupError::Invalid(field, reason) => l.invalid(field, reason),
                })?;
        config.authenticator = Some(std::sync::Arc::new(oidc));
        return Ok(());
    }
    let hint = if provider.name == "oidc" {
        "build with kubeset's feature `oidc`"
    } else {
        "use an exec plugin"
    };
    Err(l.invalid(
        "auth-provider",
        format!("auth provider {:?} is not supported; {hint}", provider.name),
    ))
}

/// The user's static client certificate and key (inline data over files),
/// both or neither.
pub(super) fn client_certificate(
    user: &Chosen<AuthInfo>,
) -> Result<Option<ClientIdentity>, ConfigError> {
    let (u, l) = (&user.value, user.loader());
    let cert_pem = match (&u.client_certificate_data, &u.client_certificate) {
        (Some(d), _) if !d.is_empty() => Some(l.base64("client-certificate-data", d)?),
        (_, Some(p)) if !p.is_empty() => Some(l.read("client-certificate", p)?),
        _ => None,
    };
    let key_pem = match (&u.client_key_data, &u.client_key) {
        (Some(d), _) if !d.expose().is_empty() => {
            Some(Secret::new(l.base64("client-key-data", d.expose())?))
        }
        (_, Some(p)) if !p.is_empty() => Some(Secret::new(l.read("client-key", p)?)),
        _ => None,
    };
    match (cert_pem, key_pem) {
        (Some(cert), Some(key)) => {
            let ck = tls::certified_key(&cert, key.expose())
                .map_err(|reason| l.invalid("client-certificate/client-key", reason))?;
            Ok(Some(ClientIdentity::Static(Arc::new(ck))))
        }
        (Some(_), None) => Err(l.missing("client-key")),
        (None, Some(_)) => Err(l.missing("client-certificate")),
        (None, None) => Ok(None),
    }
}

/// The user's static credential, as client-go ranks them: `tokenFile`
/// (re-read, wins over `token` as client-go's `BearerTokenFile`), `token`,
/// basic auth. Basic auth with a token is a conflict (client-go's "more
/// than one authentication method").
#[derive(Debug)]
pub(super) enum Credential {
    /// `tokenFile`.
    TokenFile(String),
    /// `token`.
    Token(Secret<String>),
    /// `username`/`password`.
    Basic,
    /// None of them (an exec plugin, if any, authenticates).
    None,
}

impl Credential {
    /// Which credential the user has; no I/O.
    pub(super) fn of(user: &Chosen<AuthInfo>) -> Result<Self, ConfigError> {
        let u = &user.value;
        let token = u.token.clone().filter(|t| !t.expose().is_empty());
        let token_file = u.token_file.clone().filter(|t| !t.is_empty());
        let basic = u.username.as_deref().is_some_and(|n| !n.is_empty())
            || u.password.as_ref().is_some_and(|p| !p.expose().is_empty());
        if basic && (token.is_some() || token_file.is_some()) {
            return Err(ConfigError::Conflict {
                file: user.file.clone(),
                entry: user.label.clone(),
                reason: "username/password and token/tokenFile exclude each other".to_owned(),
            });
        }
        Ok(match (token_file, token) {
            (Some(path), _) => Self::TokenFile(path),
            (None, Some(token)) => Self::Token(token),
            (None, None) if basic => Self::Basic,
            (None, None) => Self::None,
        })
    }

    /// Whether an exec plugin's token is overridden (a token or token
    /// file); basic auth set beside a plugin also wins, as client-go's exec
    /// round tripper keeps an `Authorization` header already set.
    fn is_token(&self) -> bool {
        matches!(self, Self::TokenFile(_) | Self::Token(_))
    }

    /// The authenticator; reads the token file once to check it.
    pub(super) fn authenticator(
        self,
        user: &Chosen<AuthInfo>,
    ) -> Result<Option<Arc<dyn Authenticator>>, ConfigError> {
        let invalid_header = |field: &str| ConfigError::InvalidHeader {
            entry: user.described(),
            field: field.to_owned(),
        };
        Ok(match self {
            Self::TokenFile(path) => Some(Arc::new(token_file(user, path)?)),
            Self::Token(token) => Some(Arc::new(
                StaticToken::new(&token).map_err(|_| invalid_header("token"))?,
            )),
            Self::Basic => {
                let u = &user.value;
                let password = u.password.clone().unwrap_or_default();
                Some(Arc::new(
                    BasicAuth::new(u.username.as_deref().unwrap_or(""), &password)
                        .map_err(|_| invalid_header("username/password"))?,
                ))
            }
            Self::None => None,
        })
    }
}

fn token_file(user: &Chosen<AuthInfo>, path: String) -> Result<TokenFile, ConfigError> {
    TokenFile::new(PathBuf::from(&path)).map_err(|e| match e {
        ConfigError::ReadFile { path, source } => ConfigError::ReadReferencedFile {
            file: user.file.clone(),
            entry: user.label.clone(),
            field: "tokenFile",
            path,
            source,
        },
        ConfigError::EmptyTokenFile { path } => user
            .loader()
            .invalid("tokenFile", format!("{} is empty", path.display())),
        other => other,
    })
}

/// What an exec plugin with `provideClusterInfo` is told about the cluster.
pub(super) fn cluster_info(server: &Url, cluster: &Cluster, trust: &Trust) -> exec::ClusterInfo {
    exec::ClusterInfo {
        server: server.to_string(),
        tls_server_name: trust.server_name.clone(),
        insecure_skip_tls_verify: cluster.insecure_skip_tls_verify,
        ca_pem: trust.ca_pem.clone(),
        proxy_url: cluster.proxy_url.clone(),
        exec_extension: cluster
            .extensions
            .iter()
            .find(|e| e.name == "client.authentication.k8s.io/exec")
            .map(|e| e.extension.clone()),
    }
}

/// The user's exec credential plugin, checked now (command, API version,
/// timeout) and run on the first request.
pub(super) fn exec_plugin(
    user: &Chosen<AuthInfo>,
    exec: &ExecConfig,
    cluster: exec::ClusterInfo,
) -> Result<Arc<ExecAuthenticator>, ConfigError> {
    let timeout = exec::check_exec_timeout(DEFAULT_EXEC_TIMEOUT)?;
    ExecAuthenticator::new(user.described(), exec, Some(cluster), timeout)
        .map(Arc::new)
        .map_err(|e| match e {
            ConfigError::InvalidField { field, reason, .. } => user.loader().invalid(field, reason),
            other => other,
        })
}

/// The user's credentials into `config`: the exec plugin (client
/// certificate unless a static one is set; token unless `token`/`tokenFile`
/// or basic auth is set), then the static credential.
pub(super) fn credentials(
    config: &mut Config,
    user: &Chosen<AuthInfo>,
    cluster: exec::ClusterInfo,
) -> Result<(), ConfigError> {
    let credential = Credential::of(user)?;
    if let Some(exec) = &user.value.exec {
        let plugin = exec_plugin(user, exec, cluster)?;
        if config.tls.client_identity.is_none() {
            config.tls.client_identity = Some(ClientIdentity::Exec(plugin.clone()));
        }
        if !credential.is_token() {
            config.authenticator = Some(plugin.clone());
        }
        config.exec = Some(plugin);
    }
    if let Some(auth) = credential.authenticator(user)? {
        config.authenticator = Some(auth);
    }
    Ok(())
}

/// The user's `as`, `as-uid`, `as-groups` and `as-user-extra`.
pub(super) fn impersonation(user: &AuthInfo) -> Impersonation {
    Impersonation {
        user: user.impersonate.clone().filter(|u| !u.is_empty()),
        uid: user.impersonate_uid.clone().filter(|u| !u.is_empty()),
        groups: user.impersonate_groups.clone(),
        extra: user.impersonate_extra.clone(),
    }
}

/// Builds the default headers once, so a bad impersonation value fails at
/// load naming the user rather than on the first request.
pub(super) fn check_headers(config: &Config, user: &Chosen<AuthInfo>) -> Result<(), ConfigError> {
    config.default_headers().map(drop).map_err(|e| match e {
        ConfigError::InvalidHeader { field, .. } => ConfigError::InvalidHeader {
            entry: user.described(),
            field,
        },
        other => other,
    })
}

/// Error context for one kubeconfig entry.
struct Loader<'a> {
    file: &'a str,
    entry: &'a str,
}

impl Loader<'_> {
    fn missing(&self, field: &'static str) -> ConfigError {
        ConfigError::MissingField {
            file: self.file.to_owned(),
            entry: self.entry.to_owned(),
            field,
        }
    }

    fn invalid(&self, field: &'static str, reason: String) -> ConfigError {
        ConfigError::InvalidField {
            file: self.file.to_owned(),
            entry: self.entry.to_owned(),
            field,
            reason,
        }
    }

    fn base64(&self, field: &'static str, data: &str) -> Result<Vec<u8>, ConfigError> {
        let compact: String = data.chars().filter(|c| !c.is_whitespace()).collect();
        base64::engine::general_purpose::STANDARD
            .decode(compact)
            .map_err(|_| self.invalid(field, "not valid base64".to_owned()))
    }

    fn read(&self, field: &'static str, path: &str) -> Result<Vec<u8>, ConfigError> {
        error::read_bounded(std::path::Path::new(path), |source| {
            ConfigError::ReadReferencedFile {
                file: self.file.to_owned(),
                entry: self.entry.to_owned(),
                field,
                path: PathBuf::from(path),
                source,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CA: &str = "certs/ca.crt";

    /// Two contexts, two clusters, two users; `current-context: cur`.
    fn kubeconfig(cluster_extra: &str, user: &str) -> Kubeconfig {
        Kubeconfig::from_yaml(&format!(
            r#"
current-context: cur
contexts:
- {{name: cur, context: {{cluster: c1, user: u1, namespace: ns1}}}}
- {{name: other, context: {{cluster: c2, user: u2}}}}
- {{name: no-cluster, context: {{user: u1}}}}
- {{name: no-user, context: {{cluster: c1}}}}
clusters:
- {{name: c1, cluster: {{server: "https://one:6443"{cluster_extra}}}}}
- {{name: c2, cluster: {{server: "https://two:6443"}}}}
users:
- {{name: u1, user: {user}}}
- {{name: u2, user: {{token: two}}}}
"#
        ))
        .unwrap()
    }

    fn plain() -> Kubeconfig {
        kubeconfig("", "{token: one}")
    }

    fn options() -> KubeConfigOptions {
        KubeConfigOptions::default()
    }

    fn labels(s: &Selection) -> [&str; 3] {
        [&s.context.label, &s.cluster.label, &s.user.label]
    }

    #[test]
    fn the_context_option_wins_over_current_context() {
        let s = select(&plain(), &options()).unwrap();
        assert_eq!(
            labels(&s),
            ["context \"cur\"", "cluster \"c1\"", "user \"u1\""]
        );
        assert_eq!(namespace(&s.context.value).as_deref(), Some("ns1"));
        let s = select(&plain(), &options().with_context("other")).unwrap();
        assert_eq!(
            labels(&s),
            ["context \"other\"", "cluster \"c2\"", "user \"u2\""]
        );
        assert_eq!(namespace(&s.context.value), None);
    }

    #[test]
    fn a_missing_context_names_who_asked_for_it() {
        let err = select(&plain(), &options().with_context("nope")).unwrap_err();
        assert!(
            matches!(&err, ConfigError::NotFound { kind: "context", name, field: "context", referrer, .. }
                if name == "nope" && referrer == "options"),
            "{err:?}"
        );
        let mut kc = plain();
        kc.current_context = Some("gone".to_owned());
        let err = select(&kc, &options()).unwrap_err();
        assert!(
            matches!(&err, ConfigError::NotFound { kind: "context", field: "current-context", referrer, .. }
                if referrer == "current-context"),
            "{err:?}"
        );
        // An empty current-context is no current context (client-go's
        // "current-context is not set"); the option still works.
        kc.current_context = Some(String::new());
        let err = select(&kc, &options()).unwrap_err();
        assert!(
            matches!(err, ConfigError::NoCurrentContext { .. }),
            "{err:?}"
        );
        assert!(select(&kc, &options().with_context("cur")).is_ok());
    }

    #[test]
    fn cluster_and_user_options_override_the_context() {
        let s = select(&plain(), &options().with_cluster("c2").with_user("u2")).unwrap();
        assert_eq!(
            labels(&s),
            ["context \"cur\"", "cluster \"c2\"", "user \"u2\""]
        );
        assert_eq!(server(&s.cluster).unwrap().as_str(), "https://two:6443/");
        // The context's namespace stays.
        assert_eq!(namespace(&s.context.value).as_deref(), Some("ns1"));
        // A cluster override rescues a context without a cluster.
        let s = select(
            &plain(),
            &options().with_context("no-cluster").with_cluster("c2"),
        );
        assert_eq!(s.unwrap().cluster.label, "cluster \"c2\"");

        let err = select(&plain(), &options().with_cluster("nope")).unwrap_err();
        assert!(
            matches!(&err, ConfigError::NotFound { kind: "cluster", referrer, .. } if referrer == "options"),
            "{err:?}"
        );
        let err = select(&plain(), &options().with_user("nope")).unwrap_err();
        assert!(
            matches!(&err, ConfigError::NotFound { kind: "user", referrer, .. } if referrer == "options"),
            "{err:?}"
        );
        let mut kc = plain();
        kc.contexts[0].context.as_mut().unwrap().user = "gone".to_owned();
        let err = select(&kc, &options()).unwrap_err();
        assert!(
            matches!(&err, ConfigError::NotFound { kind: "user", referrer, .. }
                if referrer.starts_with("context \"cur\" in ")),
            "{err:?}"
        );
    }

    #[test]
    fn a_context_without_a_cluster_is_an_error_and_without_a_user_has_no_credentials() {
        let err = select(&plain(), &options().with_context("no-cluster")).unwrap_err();
        assert!(
            matches!(&err, ConfigError::MissingField { entry, field: "cluster", .. }
                if entry == "context \"no-cluster\""),
            "{err:?}"
        );
        let s = select(&plain(), &options().with_context("no-user")).unwrap();
        assert_eq!(s.user.label, "user \"\"");
        assert!(matches!(Credential::of(&s.user), Ok(Credential::None)));
    }

    #[test]
    fn insecure_skip_tls_verify_excludes_a_ca_in_either_form() {
        // As client-go's validation: the conflict is found before the CA
        // is parsed, so any bytes do.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ca.crt");
        std::fs::write(&file, "not parsed").unwrap();
        let b64 = base64::engine::general_purpose::STANDARD.encode("not parsed");
        for extra in [
            format!(", insecure-skip-tls-verify: true, certificate-authority-data: {b64}"),
            format!(
                ", insecure-skip-tls-verify: true, certificate-authority: {:?}",
                file.display()
            ),
        ] {
            let kc = kubeconfig(&extra, "{}");
            let err = trust(&select(&kc, &options()).unwrap().cluster).unwrap_err();
            assert!(
                matches!(&err, ConfigError::Conflict { entry, .. } if entry == "cluster \"c1\""),
                "{extra}: {err:?}"
            );
        }
        let insecure = kubeconfig(
            ", insecure-skip-tls-verify: true, tls-server-name: ''",
            "{}",
        );
        let t = trust(&select(&insecure, &options()).unwrap().cluster).unwrap();
        assert!(t.insecure_skip_verify && t.root_certs.is_empty() && t.ca_pem.is_none());
        assert_eq!(t.server_name, None, "an empty tls-server-name is none");
    }

    #[test]
    fn ca_data_wins_over_the_ca_file() {
        // The file is never read when the data is set (client-go's rule).
        let b64 = base64::engine::general_purpose::STANDARD.encode("no certificate here");
        let kc = kubeconfig(
            &format!(", certificate-authority-data: {b64}, certificate-authority: {CA}"),
            "{}",
        );
        let err = match trust(&select(&kc, &options()).unwrap().cluster) {
            Err(e) => e,
            Ok(_) => panic!("a PEM without certificates is accepted"),
        };
        assert!(
            matches!(
                &err,
                ConfigError::InvalidField {
                    field: "certificate-authority-data",
                    ..
                }
            ),
            "{err:?}"
        );
        let kc = kubeconfig(", certificate-authority-data: '!!'", "{}");
        let err = trust(&select(&kc, &options()).unwrap().cluster).err();
        assert!(
            matches!(&err, Some(ConfigError::InvalidField { field: "certificate-authority-data", reason, .. })
                if reason == "not valid base64"),
            "{err:?}"
        );
    }

    fn credential(user: &str) -> Result<Credential, ConfigError> {
        Credential::of(&select(&kubeconfig("", user), &options()).unwrap().user)
    }

    #[test]
    fn token_file_wins_over_token_and_basic_auth_excludes_both() {
        // client-go: BearerTokenFile's last read value takes precedence
        // over BearerToken.
        assert!(matches!(
            credential("{token: t, tokenFile: /f}"),
            Ok(Credential::TokenFile(p)) if p == "/f"
        ));
        assert!(matches!(
            credential("{token: t, tokenFile: ''}"),
            Ok(Credential::Token(t)) if t.expose() == "t"
        ));
        assert!(matches!(
            credential("{token: '', username: a, password: b}"),
            Ok(Credential::Basic)
        ));
        assert!(matches!(credential("{password: b}"), Ok(Credential::Basic)));
        assert!(matches!(credential("{username: ''}"), Ok(Credential::None)));
        for both in ["{username: a, token: t}", "{password: b, tokenFile: /f}"] {
            assert!(
                matches!(credential(both), Err(ConfigError::Conflict { ref entry, .. }) if entry == "user \"u1\""),
                "{both}"
            );
        }
    }

    #[test]
    fn a_missing_or_empty_token_file_names_the_user() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "").unwrap();
        for (path, want_read) in [(dir.path().join("missing"), true), (empty, false)] {
            let kc = kubeconfig("", &format!("{{tokenFile: {:?}}}", path.display()));
            let user = select(&kc, &options()).unwrap().user;
            let err = Credential::of(&user)
                .unwrap()
                .authenticator(&user)
                .err()
                .unwrap();
            let ok = if want_read {
                matches!(&err, ConfigError::ReadReferencedFile { entry, field: "tokenFile", .. } if entry == "user \"u1\"")
            } else {
                matches!(&err, ConfigError::InvalidField { entry, field: "tokenFile", .. } if entry == "user \"u1\"")
            };
            assert!(ok, "{err:?}");
        }
    }

    const EXEC: &str = "exec: {apiVersion: client.authentication.k8s.io/v1, command: plugin, interactiveMode: Never}";

    fn load(user: &str) -> Config {
        Config::from_custom_kubeconfig_sync(kubeconfig("", user), &options()).unwrap()
    }

    fn is_exec(config: &Config) -> bool {
        let (Some(auth), Some(exec)) = (&config.authenticator, &config.exec) else {
            return false;
        };
        std::ptr::addr_eq(Arc::as_ptr(auth), Arc::as_ptr(exec))
    }

    #[test]
    fn an_exec_plugin_authenticates_unless_a_static_credential_is_set() {
        let only = load(&format!("{{{EXEC}}}"));
        assert!(is_exec(&only));
        assert!(matches!(
            only.tls.client_identity,
            Some(ClientIdentity::Exec(_))
        ));
        for user in [
            format!("{{token: t, {EXEC}}}"),
            format!("{{username: a, password: b, {EXEC}}}"),
        ] {
            let c = load(&user);
            assert!(c.exec.is_some() && c.authenticator.is_some(), "{user}");
            assert!(!is_exec(&c), "{user}: the static credential wins");
        }
        assert_eq!(
            format!("{:?}", load(&format!("{{token: t, {EXEC}}}")).authenticator),
            "Some(StaticToken(<redacted>))"
        );
        let err = Config::from_custom_kubeconfig_sync(
            kubeconfig("", "{exec: {command: plugin}}"),
            &options(),
        )
        .unwrap_err();
        assert!(
            matches!(&err, ConfigError::InvalidField { entry, field: "exec.apiVersion", .. } if entry == "user \"u1\""),
            "{err:?}"
        );
    }

    #[test]
    fn an_exec_plugin_is_told_the_cluster_as_loaded() {
        let kc = kubeconfig(
            ", insecure-skip-tls-verify: true, tls-server-name: api, proxy-url: 'http://p:3128', \
             extensions: [{name: client.authentication.k8s.io/exec, extension: {audience: x}}]",
            "{}",
        );
        let s = select(&kc, &options()).unwrap();
        let url = server(&s.cluster).unwrap();
        let info = cluster_info(&url, &s.cluster.value, &trust(&s.cluster).unwrap());
        assert_eq!(info.server, "https://one:6443/");
        assert_eq!(info.tls_server_name.as_deref(), Some("api"));
        assert!(info.insecure_skip_tls_verify && info.ca_pem.is_none());
        assert_eq!(info.proxy_url.as_deref(), Some("http://p:3128"));
        assert_eq!(
            info.exec_extension,
            Some(serde_json::json!({"audience": "x"}))
        );
        assert_eq!(
            proxy(&s.cluster).unwrap().unwrap().as_str(),
            "http://p:3128/"
        );
    }

    #[test]
    fn a_legacy_auth_provider_is_refused_naming_it() {
        let err = Config::from_custom_kubeconfig_sync(
            kubeconfig("", "{auth-provider: {name: azure}}"),
            &options(),
        )
        .unwrap_err();
        assert!(
            matches!(&err, ConfigError::InvalidField { field: "auth-provider", reason, .. } if reason.contains("\"azure\"")),
            "{err:?}"
        );
    }
}
