//! The kubeconfig's `auth-provider: oidc` (kube-rs's feature `oidc`):
//! the `id-token` sent as a bearer token, refreshed with the
//! `refresh-token` at the issuer's token endpoint (found through
//! `/.well-known/openid-configuration`) when its `exp` is past, or after
//! the API server answered 401.
//!
//! Refreshed tokens are kept in memory, as kube-rs keeps them; client-go
//! also writes them back to the kubeconfig file, kubeset does not (a
//! program's next start refreshes again with the file's refresh-token, so
//! an issuer that rotates refresh-tokens and refuses used ones will refuse
//! that start).

use std::{
    collections::BTreeMap,
    fmt,
    sync::atomic::{AtomicBool, Ordering},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use base64::Engine as _;
use http::{HeaderValue, StatusCode, header};
use serde::Deserialize;
use url::Url;

use super::{ConfigError, TlsSettings, error::oauth_refusal, tls};
use crate::auth::{AuthFuture, Authenticator};

/// A token whose `exp` is this close is refreshed already (client-go's
/// `expiryDelta`).
const EXPIRY_SKEW: Duration = Duration::from_secs(10);
/// The time limit of each request to the issuer.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest answer read from the issuer.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// Why the provider's `config` map cannot be used: a missing or an invalid
/// field (the resolver turns it into a [`ConfigError`] naming the entry).
#[derive(Debug)]
pub(super) enum SetupError {
    /// A required key is absent or empty.
    Missing(&'static str),
    /// A key holds an unusable value.
    Invalid(&'static str, String),
}

/// The tokens, replaced together by a refresh.
struct Tokens {
    id_token: Option<String>,
    refresh_token: Option<String>,
    token_endpoint: Option<Url>,
}

/// An [`Authenticator`] for `auth-provider: oidc`.
pub struct OidcAuthenticator {
    user: String,
    issuer: Url,
    client_id: String,
    client_secret: Option<String>,
    http: reqwest::Client,
    tokens: tokio::sync::Mutex<Tokens>,
    /// Set by a 401: the next request refreshes whatever `exp` says.
    stale: AtomicBool,
}

impl fmt::Debug for OidcAuthenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OidcAuthenticator")
            .field("user", &self.user)
            .field("issuer", &self.issuer.as_str())
            .field("client_id", &self.client_id)
            .field("tokens", &"<redacted>")
            .finish_non_exhaustive()
    }
}

impl OidcAuthenticator {
    /// Reads the provider's `config` map (`id-token`, `refresh-token`,
    /// `client-id`, `client-secret`, `idp-issuer-url`); `ca_pem` is the
    /// issuer's CA bundle from `idp-certificate-authority(-data)`, else
    /// the platform's trust store is used. `user` names the entry in errors.
    pub(super) fn new(
        config: &BTreeMap<String, String>,
        ca_pem: Option<&[u8]>,
        user: String,
    ) -> Result<Self, SetupError> {
        let get = |k: &str| config.get(k).filter(|v| !v.trim().is_empty()).cloned();
        let issuer_text = get("idp-issuer-url").ok_or(SetupError::Missing("idp-issuer-url"))?;
        let issuer =
            https_url(&issuer_text).map_err(|r| SetupError::Invalid("idp-issuer-url", r))?;
        let client_id = get("client-id").ok_or(SetupError::Missing("client-id"))?;
        let id_token = get("id-token");
        let refresh_token = get("refresh-token");
        if id_token.is_none() && refresh_token.is_none() {
            return Err(SetupError::Missing("id-token"));
        }
        let mut settings = TlsSettings::default();
        if let Some(pem) = ca_pem {
            settings.root_certs = tls::parse_certs(pem)
                .map_err(|r| SetupError::Invalid("idp-certificate-authority", r))?;
        }
        let tls = settings
            .client_config()
            .map_err(|e| SetupError::Invalid("idp-certificate-authority", e.to_string()))?;
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| SetupError::Invalid("idp-issuer-url", e.to_string()))?;
        Ok(Self {
            user,
            issuer,
            client_id,
            client_secret: get("client-secret"),
            http,
            tokens: tokio::sync::Mutex::new(Tokens {
                id_token,
                refresh_token,
                token_endpoint: None,
            }),
            stale: AtomicBool::new(false),
        })
    }

    async fn current(&self) -> Result<HeaderValue, ConfigError> {
        let mut tokens = self.tokens.lock().await;
        let stale = self.stale.swap(false, Ordering::AcqRel);
        if let Some(id) = &tokens.id_token
            && !stale
            && !expired(id, SystemTime::now())
        {
            return self.bearer(id);
        }
        let refresh_token = tokens.refresh_token.clone().ok_or_else(|| {
            self.answer_error(
                self.issuer.as_str(),
                "the id-token has expired and there is no refresh-token".to_owned(),
            )
        })?;
        let endpoint = match &tokens.token_endpoint {
            Some(url) => url.clone(),
            None => {
                let url = self.discover().await?;
                tokens.token_endpoint = Some(url.clone());
                url
            }
        };
        let answer = self.refresh(&endpoint, &refresh_token).await?;
        tokens.id_token = Some(answer.id_token);
        if let Some(rotated) = answer.refresh_token.filter(|t| !t.is_empty()) {
            tokens.refresh_token = Some(rotated);
        }
        let id = tokens.id_token.as_deref().unwrap_or_default();
        self.bearer(id)
    }

    fn bearer(&self, token: &str) -> Result<HeaderValue, ConfigError> {
        let mut value =
            HeaderValue::try_from(format!("Bearer {}", token.trim())).map_err(|_| {
                ConfigError::InvalidHeader {
                    entry: self.user.clone(),
                    field: "id-token".to_owned(),
                }
            })?;
        value.set_sensitive(true);
        Ok(value)
    }

    /// The token endpoint from the issuer's discovery document.
    async fn discover(&self) -> Result<Url, ConfigError> {
        let mut url = self.issuer.clone();
        let path = format!(
            "{}/.well-known/openid-configuration",
            url.path().trim_end_matches('/')
        );
        url.set_path(&path);
        let (status, body) = self.send(self.http.get(url.clone()), &url).await?;
        if !status.is_success() {
            return Err(self.answer_error(url.as_str(), format!("status {status}")));
        }
        #[derive(Deserialize)]
        struct Discovery {
            token_endpoint: String,
        }
        let doc: Discovery = serde_json::from_slice(&body).map_err(|e| {
            self.answer_error(url.as_str(), format!("not an OpenID configuration: {e}"))
        })?;
        https_url(&doc.token_endpoint)
            .map_err(|r| self.answer_error(url.as_str(), format!("token_endpoint: {r}")))
    }

    /// The refresh-token grant: client credentials in a basic-auth header
    /// first, then in the form if the issuer refused them there (Go's
    /// oauth2 `AuthStyleAutoDetect`, which client-go uses).
    async fn refresh(&self, endpoint: &Url, refresh_token: &str) -> Result<Answer, ConfigError> {
        let form = |with_client: bool| {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("grant_type", "refresh_token")
                .append_pair("refresh_token", refresh_token);
            if with_client {
                form.append_pair("client_id", &self.client_id);
                if let Some(secret) = &self.client_secret {
                    form.append_pair("client_secret", secret);
                }
            }
            form.finish()
        };
        let in_header = self.token_request(endpoint, form(false), true);
        let (mut status, mut body) = self.send(in_header, endpoint).await?;
        if matches!(status, StatusCode::BAD_REQUEST | StatusCode::UNAUTHORIZED) {
            let in_form = self.token_request(endpoint, form(true), false);
            (status, body) = self.send(in_form, endpoint).await?;
        }
        if !status.is_success() {
            return Err(self.answer_error(endpoint.as_str(), oauth_refusal(status, &body)));
        }
        let answer: Answer = serde_json::from_slice(&body).map_err(|e| {
            self.answer_error(endpoint.as_str(), format!("not a token answer: {e}"))
        })?;
        if answer.id_token.trim().is_empty() {
            return Err(self.answer_error(endpoint.as_str(), "no id_token".to_owned()));
        }
        Ok(answer)
    }

    fn token_request(&self, endpoint: &Url, form: String, basic: bool) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .post(endpoint.clone())
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "application/json")
            .body(form);
        if basic {
            // RFC 6749 2.3.1: both form-encoded before base64.
            let enc =
                |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let secret = self.client_secret.as_deref().unwrap_or_default();
            let pair = format!("{}:{}", enc(&self.client_id), enc(secret));
            let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
            if let Ok(mut value) = HeaderValue::try_from(format!("Basic {encoded}")) {
                value.set_sensitive(true);
                request = request.header(header::AUTHORIZATION, value);
            }
        }
        request
    }

    /// Sends and reads at most [`MAX_ANSWER_BYTES`] of the answer.
    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        url: &Url,
    ) -> Result<(StatusCode, Vec<u8>), ConfigError> {
        let request_error = |source| ConfigError::OidcRequest {
            user: self.user.clone(),
            url: url.to_string(),
            source,
        };
        let mut response = request.send().await.map_err(request_error)?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(request_error)? {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                let reason = format!("the answer is larger than {MAX_ANSWER_BYTES} bytes");
                return Err(self.answer_error(url.as_str(), reason));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((status, body))
    }

    fn answer_error(&self, url: &str, reason: String) -> ConfigError {
        ConfigError::OidcAnswer {
            user: self.user.clone(),
            url: url.to_owned(),
            reason,
        }
    }
}

impl Authenticator for OidcAuthenticator {
    fn authorization(&self) -> AuthFuture<'_> {
        Box::pin(async move { Ok(Some(self.current().await?)) })
    }

    fn invalidate(&self) {
        self.stale.store(true, Ordering::Release);
    }
}

/// The token endpoint's answer (the access token is not used: the API
/// server takes the id-token).
#[derive(Deserialize)]
struct Answer {
    id_token: String,
    #[serde(default)]
    refresh_token: Option<String>,
}

/// An absolute `https` URL.
fn https_url(text: &str) -> Result<Url, String> {
    let url = Url::parse(text.trim()).map_err(|e| format!("not a URL ({e})"))?;
    if url.scheme() != "https" {
        return Err(format!("{text:?}: the scheme must be https"));
    }
    Ok(url)
}

/// Whether a JWT's `exp` is past (or within [`EXPIRY_SKEW`]) at `now`; a
/// token that is not a JWT with a numeric `exp` counts as expired, as
/// client-go's provider treats it.
pub(super) fn expired(token: &str, now: SystemTime) -> bool {
    match jwt_expiry(token) {
        Some(exp) => now + EXPIRY_SKEW >= UNIX_EPOCH + Duration::from_secs(exp),
        None => true,
    }
}

/// The `exp` claim (seconds since the epoch) of a JWT's payload.
fn jwt_expiry(token: &str) -> Option<u64> {
    let mut parts = token.trim().split('.');
    let (_header, payload, _signature) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || payload.len() > MAX_ANSWER_BYTES {
        return None;
    }
    let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    #[derive(Deserialize)]
    struct Claims {
        exp: f64,
    }
    let claims: Claims = serde_json::from_slice(&json).ok()?;
    (claims.exp.is_finite() && claims.exp >= 0.0).then_some(claims.exp as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &str) -> String {
        let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        format!("{}.{}.sig", b64(r#"{"alg":"none"}"#), b64(claims))
    }

    #[test]
    fn expiry_is_read_from_the_payload() {
        let at = |secs| UNIX_EPOCH + Duration::from_secs(secs);
        let token = jwt(r#"{"exp": 1000, "sub": "a"}"#);
        assert_eq!(jwt_expiry(&token), Some(1000));
        assert!(!expired(&token, at(900)));
        assert!(expired(&token, at(995)), "within the skew");
        assert!(expired(&token, at(1000)));
        assert!(!expired(&jwt(r#"{"exp": 1.5e3}"#), at(100)));
    }

    #[test]
    fn tokens_without_a_usable_exp_count_as_expired() {
        let now = SystemTime::now();
        for token in [
            "opaque",
            "a.b",
            "a.b.c.d",
            &jwt(r#"{"sub": "no exp"}"#),
            &jwt(r#"{"exp": "soon"}"#),
            &jwt(r#"{"exp": -1}"#),
            "a.!!!.c",
        ] {
            assert!(expired(token, now), "{token}");
        }
    }

    #[test]
    fn the_config_map_is_checked() {
        let map = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        let new = |m| OidcAuthenticator::new(&m, None, "user \"a\"".to_owned());
        let err = new(map(&[("client-id", "c"), ("id-token", "t")])).unwrap_err();
        assert!(
            matches!(err, SetupError::Missing("idp-issuer-url")),
            "{err:?}"
        );
        let err = new(map(&[("idp-issuer-url", "http://idp"), ("client-id", "c")])).unwrap_err();
        assert!(
            matches!(&err, SetupError::Invalid("idp-issuer-url", r) if r.contains("https")),
            "{err:?}"
        );
        let err = new(map(&[
            ("idp-issuer-url", "https://idp"),
            ("client-id", "c"),
        ]))
        .unwrap_err();
        assert!(matches!(err, SetupError::Missing("id-token")), "{err:?}");
        let ok = new(map(&[
            ("idp-issuer-url", "https://idp"),
            ("client-id", "c"),
            ("refresh-token", "r"),
        ]));
        let debug = format!("{:?}", ok.expect("a refresh-token alone is enough"));
        assert!(!debug.contains("\"r\""), "{debug}");
    }
}
