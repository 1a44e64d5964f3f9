//! [`Authenticator`]s for static tokens, token files, basic auth and the
//! in-cluster service-account token.

use std::{
    fmt,
    path::{Path, PathBuf},
    sync::{Mutex, PoisonError},
    time::{Duration, SystemTime},
};

use base64::Engine as _;
use http::HeaderValue;
use tokio::time::Instant;

use super::{ConfigError, Secret};
use crate::auth::{AuthFuture, Authenticator};

fn bearer(token: &str, entry: &str) -> Result<HeaderValue, ConfigError> {
    let mut v = HeaderValue::try_from(format!("Bearer {token}")).map_err(|_| {
        ConfigError::InvalidHeader {
            entry: entry.to_owned(),
            field: "token".to_owned(),
        }
    })?;
    v.set_sensitive(true);
    Ok(v)
}

/// A fixed bearer token.
pub struct StaticToken {
    header: HeaderValue,
}

impl StaticToken {
    /// Sends `Authorization: Bearer <token>`.
    pub fn new(token: &Secret<String>) -> Result<Self, ConfigError> {
        Ok(Self {
            header: bearer(token.expose().trim(), "token")?,
        })
    }
}

impl fmt::Debug for StaticToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StaticToken(<redacted>)")
    }
}

impl Authenticator for StaticToken {
    fn authorization(&self) -> AuthFuture<'_> {
        Box::pin(async move { Ok(Some(self.header.clone())) })
    }
}

/// HTTP basic authentication.
pub struct BasicAuth {
    username: String,
    header: HeaderValue,
}

impl BasicAuth {
    /// Sends `Authorization: Basic base64(username:password)`.
    pub fn new(username: &str, password: &Secret<String>) -> Result<Self, ConfigError> {
        let encoded = base64::engine::general_purpose::STANDARD
            .encode(format!("{username}:{}", password.expose()));
        let mut header = HeaderValue::try_from(format!("Basic {encoded}")).map_err(|_| {
            ConfigError::InvalidHeader {
                entry: format!("user {username:?}"),
                field: "password".to_owned(),
            }
        })?;
        header.set_sensitive(true);
        Ok(Self {
            username: username.to_owned(),
            header,
        })
    }
}

impl fmt::Debug for BasicAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BasicAuth")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

impl Authenticator for BasicAuth {
    fn authorization(&self) -> AuthFuture<'_> {
        Box::pin(async move { Ok(Some(self.header.clone())) })
    }
}

fn read_token(path: &Path) -> Result<HeaderValue, ConfigError> {
    let text = super::error::read_bounded_text(path, |source| ConfigError::ReadFile {
        path: path.to_owned(),
        source,
    })?;
    let token = text.trim();
    if token.is_empty() {
        return Err(ConfigError::EmptyTokenFile {
            path: path.to_owned(),
        });
    }
    bearer(token, &format!("token file {}", path.display()))
}

/// A bearer token read from a file, re-read whenever the file's
/// modification time changes (one `stat` per request). If a re-read fails,
/// the previous token is kept and a warning logged.
pub struct TokenFile {
    path: PathBuf,
    state: Mutex<Option<(Option<SystemTime>, HeaderValue)>>,
}

impl TokenFile {
    /// Reads the token now; fails if the file is missing or empty.
    pub fn new(path: impl Into<PathBuf>) -> Result<Self, ConfigError> {
        let path = path.into();
        let mtime = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
        let header = read_token(&path)?;
        Ok(Self {
            path,
            state: Mutex::new(Some((mtime, header))),
        })
    }

    fn current(&self) -> Result<HeaderValue, ConfigError> {
        let mtime = std::fs::metadata(&self.path)
            .and_then(|m| m.modified())
            .ok();
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((seen, header)) = state.as_ref()
            && mtime.is_some()
            && *seen == mtime
        {
            return Ok(header.clone());
        }
        match read_token(&self.path) {
            Ok(header) => {
                *state = Some((mtime, header.clone()));
                Ok(header)
            }
            Err(e) => match state.as_ref() {
                Some((_, old)) => {
                    tracing::warn!(error = %e, "keeping the previous token");
                    Ok(old.clone())
                }
                None => Err(e),
            },
        }
    }
}

impl fmt::Debug for TokenFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenFile")
            .field("path", &self.path)
            .field("token", &"<redacted>")
            .finish()
    }
}

impl Authenticator for TokenFile {
    fn authorization(&self) -> AuthFuture<'_> {
        Box::pin(async move { Ok(Some(self.current()?)) })
    }

    fn invalidate(&self) {
        // Force a re-read on the next request even if the mtime is unchanged.
        if let Some((seen, _)) = self
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            *seen = None;
        }
    }
}

/// The in-cluster service-account token: re-read every minute (by default);
/// a failed re-read keeps the old token (Patroni's behaviour).
pub struct ServiceAccountToken {
    path: PathBuf,
    interval: Duration,
    state: Mutex<(HeaderValue, Option<Instant>)>,
}

impl ServiceAccountToken {
    /// How often the token file is re-read.
    pub const REFRESH_INTERVAL: Duration = Duration::from_secs(60);

    /// Reads the token now. Errors distinguish a missing from an empty file.
    pub fn new(path: impl Into<PathBuf>) -> Result<Self, ConfigError> {
        let path = path.into();
        let text =
            super::error::read_bounded_text(&path, |source| ConfigError::InClusterFileMissing {
                what: "token",
                path: path.clone(),
                source,
            })?;
        let token = text.trim();
        if token.is_empty() {
            return Err(ConfigError::InClusterFileEmpty {
                what: "token",
                path,
            });
        }
        let header = bearer(token, &format!("token file {}", path.display()))?;
        Ok(Self {
            path,
            interval: Self::REFRESH_INTERVAL,
            state: Mutex::new((header, Some(Instant::now()))),
        })
    }

    /// Changes the re-read interval.
    #[must_use]
    pub fn with_refresh_interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    fn current(&self) -> HeaderValue {
        let now = Instant::now();
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let due = state
            .1
            .is_none_or(|last| now.saturating_duration_since(last) >= self.interval);
        if due {
            match read_token(&self.path) {
                Ok(header) => state.0 = header,
                Err(e) => tracing::warn!(error = %e, "keeping the previous service-account token"),
            }
            state.1 = Some(now);
        }
        state.0.clone()
    }
}

impl fmt::Debug for ServiceAccountToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceAccountToken")
            .field("path", &self.path)
            .field("interval", &self.interval)
            .field("token", &"<redacted>")
            .finish()
    }
}

impl Authenticator for ServiceAccountToken {
    fn authorization(&self) -> AuthFuture<'_> {
        Box::pin(async move { Ok(Some(self.current())) })
    }

    fn invalidate(&self) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).1 = None;
    }
}
