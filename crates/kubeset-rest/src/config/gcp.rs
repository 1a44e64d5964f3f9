//! The kubeconfig's `auth-provider: gcp` (client-go's old gcp plugin,
//! kube-rs's `gcp` provider): an access token sent as a bearer token,
//! taken from the provider's `config` map
//!
//! - `access-token` with its `expiry` (RFC 3339), cached there by an earlier
//!   run of a client (`id-token`, which kube-rs also reads, is sent as is);
//! - else, or once that has expired or the API server answered 401, from
//!   `cmd-path` run with `cmd-args` (`gcloud config config-helper
//!   --format=json`), its JSON output read at `token-key` and `expiry-key`
//!   (defaults `{.access_token}` and `{.token_expiry}`, client-go's; output
//!   that is not JSON, with no `token-key`, is the token itself, as in
//!   kube-rs);
//! - else, with the feature `oauth`, from Google application default
//!   credentials (`gcp_adc.rs`) for the `scopes`.
//!
//! The command runs as an exec plugin does (stdin closed, output capped at
//! [`MAX_EXEC_OUTPUT`], killed with its process group after the exec
//! timeout, [`Config::with_exec_timeout`](super::Config::with_exec_timeout)).
//! Tokens are kept in memory until 10 s before their expiry (client-go's
//! `expiryDelta`); client-go also writes them back to the kubeconfig
//! file, kubeset does not, as kube-rs.

use std::{
    collections::BTreeMap,
    fmt,
    process::Command,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, SystemTime},
};

use http::HeaderValue;

use super::{
    ConfigError, MAX_EXEC_OUTPUT, Secret,
    exec::{self, CancelOnDrop, MAX_STDERR},
    jsonpath::JsonPath,
    plugin, rfc3339,
};
use crate::auth::{AuthFuture, Authenticator};

/// A token this close to its expiry is replaced already.
const EXPIRY_SKEW: Duration = Duration::from_secs(10);

/// Why the provider's `config` map cannot be used: a missing or an invalid
/// key (the resolver turns it into a [`ConfigError`] naming the entry).
#[derive(Debug)]
pub(super) enum SetupError {
    /// A key holds an unusable value.
    Invalid(&'static str, String),
}

/// A bearer token and when it stops being usable (`None`: until a 401).
/// `Debug` shows the header as `Sensitive`.
#[derive(Clone, Debug)]
pub(super) struct Token {
    value: HeaderValue,
    expires: Option<SystemTime>,
}

impl Token {
    /// `Bearer <token>`; `None` if it is empty or cannot be a header.
    pub(super) fn new(token: &str, expires: Option<SystemTime>) -> Option<Self> {
        let token = token.trim();
        if token.is_empty() {
            return None;
        }
        let mut value = HeaderValue::try_from(format!("Bearer {token}")).ok()?;
        value.set_sensitive(true);
        Some(Self { value, expires })
    }

    fn fresh(&self, now: SystemTime) -> bool {
        self.expires.is_none_or(|e| now + EXPIRY_SKEW < e)
    }
}

/// Where new tokens come from.
#[derive(Clone)]
enum Source {
    /// Nowhere: the cached token is all there is (without `oauth`).
    #[cfg_attr(feature = "oauth", allow(dead_code))]
    None,
    Command(Arc<CommandSource>),
    #[cfg(feature = "oauth")]
    Google(Arc<super::gcp_adc::Adc>),
}

/// `cmd-path` and how to read its output.
#[derive(Clone)]
struct CommandSource {
    command: String,
    args: Vec<String>,
    /// kube-rs's `cmd-drop-env`: variables not passed to the command.
    drop_env: Vec<String>,
    token_key: Option<JsonPath>,
    expiry_key: Option<JsonPath>,
    timeout: Duration,
}

/// An [`Authenticator`] for `auth-provider: gcp`.
pub(crate) struct GcpAuthenticator {
    user: String,
    /// The kubeconfig's cached token, the start of every copy.
    initial: Option<Token>,
    source: Source,
    cached: tokio::sync::Mutex<Option<Token>>,
    /// Set by a 401: the next request fetches a new token.
    stale: AtomicBool,
}

impl fmt::Debug for GcpAuthenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = match &self.source {
            Source::None => "cached access-token".to_owned(),
            Source::Command(c) => format!("cmd-path {:?}", c.command),
            #[cfg(feature = "oauth")]
            Source::Google(_) => "Google application default credentials".to_owned(),
        };
        f.debug_struct("GcpAuthenticator")
            .field("user", &self.user)
            .field("source", &source)
            .field("token", &"<redacted>")
            .finish_non_exhaustive()
    }
}

impl GcpAuthenticator {
    /// Reads the provider's `config` map; `user` names the entry in
    /// errors, `timeout` bounds each run of `cmd-path`.
    pub(super) fn new(
        config: &BTreeMap<String, String>,
        user: String,
        timeout: Duration,
    ) -> Result<Self, SetupError> {
        let get = |k: &str| config.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
        let header = |key| SetupError::Invalid(key, "not allowed in a header".to_owned());
        let initial = match (get("id-token"), get("access-token")) {
            (Some(id), _) => Some(Token::new(id, None).ok_or_else(|| header("id-token"))?),
            (None, Some(token)) => {
                let expires = get("expiry")
                    .map(|e| {
                        rfc3339::parse(e).map_err(|err| {
                            SetupError::Invalid("expiry", format!("{e:?} is not RFC 3339 ({err})"))
                        })
                    })
                    .transpose()?;
                Some(Token::new(token, expires).ok_or_else(|| header("access-token"))?)
            }
            (None, None) => None,
        };
        let source = if config.contains_key("cmd-path") {
            Source::Command(Arc::new(CommandSource::new(config, timeout)?))
        } else {
            google(config)?
        };
        if matches!(source, Source::None)
            && initial.as_ref().is_none_or(|t| !t.fresh(SystemTime::now()))
        {
            return Err(SetupError::Invalid(
                "auth-provider",
                format!("gcp: {NO_SOURCE}"),
            ));
        }
        Ok(Self {
            user,
            cached: tokio::sync::Mutex::new(initial.clone()),
            initial,
            source,
            stale: AtomicBool::new(false),
        })
    }

    /// How long one run of `cmd-path` may take, if there is one.
    pub(super) fn timeout(&self) -> Option<Duration> {
        match &self.source {
            Source::Command(c) => Some(c.timeout),
            _ => None,
        }
    }

    /// The same provider with `cmd-path` limited to `timeout` (checked by
    /// the caller), starting again from the kubeconfig's cached token.
    pub(super) fn with_timeout(&self, timeout: Duration) -> Self {
        let source = match &self.source {
            Source::Command(c) => Source::Command(Arc::new(CommandSource {
                timeout,
                ..CommandSource::clone(c)
            })),
            other => other.clone(),
        };
        Self {
            user: self.user.clone(),
            initial: self.initial.clone(),
            cached: tokio::sync::Mutex::new(self.initial.clone()),
            source,
            stale: AtomicBool::new(false),
        }
    }

    /// The cached token while fresh (and not refused), else a new one.
    /// Concurrent callers share one fetch.
    async fn current(&self) -> Result<HeaderValue, ConfigError> {
        let mut cached = self.cached.lock().await;
        // With nowhere to get another, a refused token is sent again (the
        // API server's 401 then reaches the caller).
        let stale =
            self.stale.swap(false, Ordering::AcqRel) && !matches!(self.source, Source::None);
        if let Some(token) = cached.as_ref()
            && !stale
            && token.fresh(SystemTime::now())
        {
            return Ok(token.value.clone());
        }
        let token = match &self.source {
            Source::None => {
                return Err(ConfigError::GcpToken {
                    user: self.user.clone(),
                    origin: "access-token".to_owned(),
                    reason: format!("it has expired; {NO_SOURCE}"),
                });
            }
            Source::Command(c) => c.clone().fetch(&self.user).await?,
            #[cfg(feature = "oauth")]
            Source::Google(adc) => {
                let (token, expires) = adc.fetch(&self.user).await?;
                Token::new(&token, expires).ok_or_else(|| ConfigError::GcpToken {
                    user: self.user.clone(),
                    origin: "the token endpoint".to_owned(),
                    reason: "the access_token is empty or not allowed in a header".to_owned(),
                })?
            }
        };
        *cached = Some(token.clone());
        Ok(token.value)
    }
}

/// Why a provider with no `cmd-path` has no way to a new token.
#[cfg(not(feature = "oauth"))]
const NO_SOURCE: &str = "there is no valid access-token and no cmd-path; Google application \
                         default credentials need kubeset's feature `oauth`";
#[cfg(feature = "oauth")]
const NO_SOURCE: &str = "there is no valid access-token and no cmd-path";

/// The application default credentials source (feature `oauth`), else none.
fn google(config: &BTreeMap<String, String>) -> Result<Source, SetupError> {
    #[cfg(feature = "oauth")]
    {
        let adc = super::gcp_adc::Adc::new(config.get("scopes").map(String::as_str))
            .map_err(|reason| SetupError::Invalid("auth-provider", reason))?;
        Ok(Source::Google(Arc::new(adc)))
    }
    #[cfg(not(feature = "oauth"))]
    {
        let _ = config;
        Ok(Source::None)
    }
}

impl Authenticator for GcpAuthenticator {
    fn authorization(&self) -> AuthFuture<'_> {
        Box::pin(async move { Ok(Some(self.current().await?)) })
    }

    fn invalidate(&self) {
        self.stale.store(true, Ordering::Release);
    }
}

impl CommandSource {
    /// `cmd-path`, `cmd-args` (split at whitespace; without it, `cmd-path`
    /// itself is split, as client-go does), `cmd-drop-env`, `token-key`,
    /// `expiry-key` and `time-fmt` (only RFC 3339 is read).
    fn new(config: &BTreeMap<String, String>, timeout: Duration) -> Result<Self, SetupError> {
        let get = |k: &str| config.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
        let path = get("cmd-path")
            .ok_or_else(|| SetupError::Invalid("cmd-path", "must not be empty".to_owned()))?;
        let (command, args) = match config.get("cmd-args") {
            Some(args) => (path.to_owned(), fields(args)),
            None => match fields(path).split_first() {
                Some((command, args)) => (command.clone(), args.to_vec()),
                None => (path.to_owned(), Vec::new()),
            },
        };
        let key = |k: &'static str| {
            get(k)
                .map(|p| JsonPath::parse(p).map_err(|r| SetupError::Invalid(k, r)))
                .transpose()
        };
        if let Some(format) = get("time-fmt")
            && !GO_RFC3339.contains(&format)
        {
            return Err(SetupError::Invalid(
                "time-fmt",
                format!("{format:?}: only RFC 3339 expiry times are read"),
            ));
        }
        Ok(Self {
            command,
            args,
            drop_env: get("cmd-drop-env").map(fields).unwrap_or_default(),
            token_key: key("token-key")?,
            expiry_key: key("expiry-key")?,
            timeout,
        })
    }

    /// Runs the command off the async runtime's worker threads; dropping
    /// the future kills it.
    async fn fetch(self: Arc<Self>, user: &str) -> Result<Token, ConfigError> {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return self.run(user, &AtomicBool::new(false));
        };
        let cancel = CancelOnDrop(Arc::new(AtomicBool::new(false)));
        let (flag, owned_user, this) = (cancel.0.clone(), user.to_owned(), self.clone());
        handle
            .spawn_blocking(move || this.run(&owned_user, &flag))
            .await
            .map_err(|e| ConfigError::ExecFailed {
                user: user.to_owned(),
                command: self.command.clone(),
                status: format!("the command's task ended abnormally: {e}"),
                stderr: String::new(),
            })?
    }

    /// Runs the command now (blocking) and reads the token it printed.
    fn run(&self, user: &str, cancel: &AtomicBool) -> Result<Token, ConfigError> {
        let mut cmd = Command::new(&self.command);
        cmd.args(&self.args);
        for name in &self.drop_env {
            cmd.env_remove(name);
        }
        let output = plugin::run(cmd, self.timeout, cancel, MAX_EXEC_OUTPUT, MAX_STDERR * 4)
            .map_err(|e| exec::run_error(user, &self.command, String::new(), self.timeout, e))?;
        if !output.status.success() {
            return Err(exec::exit_error(user, &self.command, &output));
        }
        self.parse(&Secret::new(output.stdout))
            .map_err(|reason| ConfigError::GcpToken {
                user: user.to_owned(),
                origin: format!("the output of {:?}", self.command),
                reason,
            })
    }

    /// The token and expiry in the command's output (never quoted in
    /// errors).
    fn parse(&self, stdout: &Secret<Vec<u8>>) -> Result<Token, String> {
        let json = serde_json::from_slice::<serde_json::Value>(stdout.expose());
        let default_token = JsonPath::parse("{.access_token}")?;
        let token = match (&self.token_key, &json) {
            (Some(key), Ok(v)) => key.string_in(v).map_err(|r| format!("token-key {r}"))?,
            (Some(_), Err(e)) => return Err(format!("not JSON ({e}), which token-key needs")),
            (None, Ok(v)) => default_token
                .string_in(v)
                .map_err(|r| format!("token-key (default) {r}"))?,
            (None, Err(_)) => std::str::from_utf8(stdout.expose())
                .map_err(|_| "neither JSON nor UTF-8 text".to_owned())?,
        };
        let expiry = match (&self.expiry_key, &json) {
            (Some(key), Ok(v)) => Some(key.string_in(v).map_err(|r| format!("expiry-key {r}"))?),
            (Some(_), Err(e)) => return Err(format!("not JSON ({e}), which expiry-key needs")),
            // client-go's default key, when the output has it.
            (None, Ok(v)) => JsonPath::parse("{.token_expiry}")?.string_in(v).ok(),
            (None, Err(_)) => None,
        };
        let expires = expiry
            .map(|e| {
                rfc3339::parse(e).map_err(|err| format!("expiry {e:?} is not RFC 3339 ({err})"))
            })
            .transpose()?;
        Token::new(token, expires)
            .ok_or_else(|| "the token is empty or not allowed in a header".to_owned())
    }
}

/// Go's `time.RFC3339` and `time.RFC3339Nano` layouts (`time-fmt`).
const GO_RFC3339: [&str; 2] = [
    "2006-01-02T15:04:05Z07:00",
    "2006-01-02T15:04:05.999999999Z07:00",
];

/// Whitespace-separated words (Go's `strings.Fields`).
fn fields(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn new(pairs: &[(&str, &str)]) -> Result<GcpAuthenticator, SetupError> {
        GcpAuthenticator::new(&map(pairs), "user \"u\"".to_owned(), Duration::from_secs(5))
    }

    fn command(pairs: &[(&str, &str)]) -> CommandSource {
        match new(pairs).unwrap().source {
            Source::Command(c) => CommandSource::clone(&c),
            _ => panic!("no command"),
        }
    }

    #[test]
    fn cmd_args_split_as_client_go_splits_them() {
        let c = command(&[
            ("cmd-path", "/bin/gcloud"),
            ("cmd-args", " config  config-helper --format=json "),
        ]);
        assert_eq!(
            (c.command.as_str(), c.args.as_slice()),
            (
                "/bin/gcloud",
                &["config", "config-helper", "--format=json"].map(String::from)[..]
            )
        );
        let c = command(&[("cmd-path", "/bin/gcloud config config-helper")]);
        assert_eq!((c.command.as_str(), c.args.len()), ("/bin/gcloud", 2));
        let c = command(&[("cmd-path", "/bin/gcloud a"), ("cmd-args", "")]);
        assert_eq!((c.command.as_str(), c.args.len()), ("/bin/gcloud a", 0));
    }

    #[test]
    fn bad_keys_are_named() {
        let invalid = |pairs: &[(&str, &str)]| match new(pairs) {
            Err(SetupError::Invalid(key, reason)) => (key, reason),
            Ok(_) => panic!("{pairs:?} accepted"),
        };
        assert_eq!(invalid(&[("cmd-path", " ")]).0, "cmd-path");
        let (key, reason) = invalid(&[("cmd-path", "g"), ("token-key", "{.items[*]}")]);
        assert_eq!(key, "token-key");
        assert!(reason.contains("[*]"), "{reason}");
        assert_eq!(
            invalid(&[("cmd-path", "g"), ("expiry-key", "{..x}")]).0,
            "expiry-key"
        );
        let (key, reason) = invalid(&[("cmd-path", "g"), ("time-fmt", "2006-01-02")]);
        assert!(key == "time-fmt" && reason.contains("RFC 3339"), "{reason}");
        let (key, reason) = invalid(&[("access-token", "t"), ("expiry", "tomorrow")]);
        assert!(
            key == "expiry" && reason.contains("\"tomorrow\""),
            "{reason}"
        );
        assert_eq!(invalid(&[("access-token", "a\nb")]).0, "access-token");
        command(&[("cmd-path", "g"), ("time-fmt", GO_RFC3339[1])]);
    }

    #[cfg(not(feature = "oauth"))]
    #[test]
    fn without_oauth_an_expired_token_and_no_command_is_refused_at_load() {
        for pairs in [
            &[][..],
            &[("access-token", "t"), ("expiry", "2001-01-01T00:00:00Z")][..],
        ] {
            match new(pairs) {
                Err(SetupError::Invalid("auth-provider", r)) => {
                    assert!(r.contains("feature `oauth`"), "{r}")
                }
                _ => panic!("{pairs:?} accepted"),
            }
        }
        let ok = new(&[("access-token", "t"), ("expiry", "2999-01-01T00:00:00Z")]).unwrap();
        assert!(!format!("{ok:?}").contains("\"t\""));
    }

    #[test]
    fn the_output_is_read_at_the_keys_or_as_the_token_itself() {
        let out = |c: &CommandSource, s: &str| c.parse(&Secret::new(s.as_bytes().to_vec()));
        let gcloud = command(&[
            ("cmd-path", "g"),
            ("token-key", "{.credential.access_token}"),
            ("expiry-key", "{.credential.token_expiry}"),
        ]);
        let t = out(
            &gcloud,
            r#"{"credential": {"access_token": "ya29", "token_expiry": "2999-01-02T03:04:05Z"}}"#,
        )
        .unwrap();
        assert_eq!(t.value, "Bearer ya29");
        assert_eq!(
            t.expires,
            Some(rfc3339::parse("2999-01-02T03:04:05Z").unwrap())
        );
        let e = out(&gcloud, "ya29.token").unwrap_err();
        assert!(e.starts_with("not JSON"), "{e}");
        let e = out(&gcloud, r#"{"credential": {"access_token": "s3cret"}}"#).unwrap_err();
        assert!(
            e.contains("expiry-key") && e.contains("token_expiry") && !e.contains("s3cret"),
            "{e}"
        );
        let e = out(
            &gcloud,
            r#"{"credential": {"access_token": "a", "token_expiry": "soon"}}"#,
        )
        .unwrap_err();
        assert!(e.contains("\"soon\" is not RFC 3339"), "{e}");

        let plain = command(&[("cmd-path", "g")]);
        let t = out(&plain, "  raw-token\n").unwrap();
        assert_eq!(
            (t.value.to_str().unwrap(), t.expires),
            ("Bearer raw-token", None)
        );
        let t = out(
            &plain,
            r#"{"access_token": "a", "token_expiry": "2999-01-01T00:00:00Z"}"#,
        )
        .unwrap();
        assert!(t.value == "Bearer a" && t.expires.is_some());
        let e = out(&plain, r#"{"token": "a"}"#).unwrap_err();
        assert!(e.contains("no field \"access_token\""), "{e}");
        assert!(out(&plain, "").unwrap_err().contains("empty"));
        assert!(out(&plain, "a\u{0}b").unwrap_err().contains("header"));
    }
}
