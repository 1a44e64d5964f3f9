//! Google application default credentials for `auth-provider: gcp`
//! (feature `oauth`), found as Google's libraries find them: the file
//! named by `GOOGLE_APPLICATION_CREDENTIALS`, else gcloud's
//! `application_default_credentials.json` (in `$CLOUDSDK_CONFIG`, else
//! `~/.config/gcloud`, on Windows `%APPDATA%\gcloud`).
//!
//! - `service_account`: an RS256-signed JWT (RFC 7523) for the `scopes`,
//!   signed with the file's `private_key` (ring, which rustls already
//!   builds), posted to its `token_uri`;
//! - `authorized_user` (written by `gcloud auth application-default
//!   login`): its `refresh_token` posted to the token endpoint.
//!
//! The access token is kept until near its `expires_in`. Other types
//! (`external_account`, `impersonated_service_account`) are refused naming
//! the type. The GCE metadata server, the last place Google's libraries
//! look, is not asked: it needs a probe of 169.254.169.254 on every
//! machine without credentials (a connect timeout off GCE), and a workload
//! on GKE uses its in-cluster service account instead; the error says so.
//! The file is read on the first request that needs it, as kube-rs does
//! (through tame-oauth), and kept; a failure is retried on the next one.

use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex, PoisonError},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use base64::Engine as _;
use http::header;
use ring::{
    rand::SystemRandom,
    signature::{RSA_PKCS1_SHA256, RsaKeyPair},
};
use rustls::pki_types::{PrivateKeyDer, pem::PemObject};
use serde::Deserialize;
use url::Url;

use super::error::{oauth_refusal, read_bounded};
use super::{ConfigError, Secret, TlsSettings};

/// client-go's default scopes (its gcp plugin's `defaultScopes`).
const DEFAULT_SCOPES: [&str; 2] = [
    "https://www.googleapis.com/auth/cloud-platform",
    "https://www.googleapis.com/auth/userinfo.email",
];
/// Google's token endpoint, for files that do not name one.
const GOOGLE_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
/// The lifetime asked for a service account's assertion (Google's maximum).
const ASSERTION_LIFETIME: u64 = 3600;
/// The time limit of each request to the token endpoint.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest answer read from the token endpoint.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// The credentials of one file.
enum Credentials {
    ServiceAccount {
        email: String,
        key: Box<RsaKeyPair>,
        key_id: Option<String>,
        token_uri: Url,
    },
    AuthorizedUser {
        client_id: String,
        client_secret: Secret<String>,
        refresh_token: Secret<String>,
        token_uri: Url,
    },
}

/// The file as written (every field optional: what a type needs is
/// checked for that type).
#[derive(Deserialize)]
struct File {
    #[serde(rename = "type")]
    kind: Option<String>,
    client_email: Option<String>,
    private_key: Option<String>,
    private_key_id: Option<String>,
    token_uri: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    refresh_token: Option<String>,
}

/// The application default credentials source.
pub(super) struct Adc {
    scopes: Vec<String>,
    http: reqwest::Client,
    /// The file found and read by the first fetch.
    loaded: Mutex<Option<(PathBuf, Arc<Credentials>)>>,
}

impl Adc {
    /// `scopes`: the provider's comma-separated list (absent: client-go's
    /// defaults; empty: none).
    pub(super) fn new(scopes: Option<&str>) -> Result<Self, String> {
        let scopes = match scopes {
            None => DEFAULT_SCOPES.map(str::to_owned).to_vec(),
            Some(list) => list
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        };
        let tls = TlsSettings::default()
            .client_config()
            .map_err(|e| format!("gcp: the token endpoint's TLS configuration: {e}"))?;
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| format!("gcp: the token endpoint's HTTP client: {e}"))?;
        Ok(Self {
            scopes,
            http,
            loaded: Mutex::new(None),
        })
    }

    /// A new access token and its expiry. `user` names the entry in errors.
    pub(super) async fn fetch(
        &self,
        user: &str,
    ) -> Result<(String, Option<SystemTime>), ConfigError> {
        let (path, credentials) = self.credentials(user)?;
        let file_error = |reason: String| ConfigError::GcpToken {
            user: user.to_owned(),
            origin: path.display().to_string(),
            reason,
        };
        let now = SystemTime::now();
        let (token_uri, form) = match &*credentials {
            Credentials::ServiceAccount {
                email,
                key,
                key_id,
                token_uri,
            } => {
                let assertion =
                    assertion(email, key, key_id.as_deref(), &self.scopes, token_uri, now)
                        .map_err(file_error)?;
                let form = url::form_urlencoded::Serializer::new(String::new())
                    .append_pair("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer")
                    .append_pair("assertion", &assertion)
                    .finish();
                (token_uri, form)
            }
            Credentials::AuthorizedUser {
                client_id,
                client_secret,
                refresh_token,
                token_uri,
            } => {
                let form = url::form_urlencoded::Serializer::new(String::new())
                    .append_pair("grant_type", "refresh_token")
                    .append_pair("client_id", client_id)
                    .append_pair("client_secret", client_secret.expose())
                    .append_pair("refresh_token", refresh_token.expose())
                    .finish();
                (token_uri, form)
            }
        };
        let answer = self.post(user, token_uri, form).await?;
        let expires = answer
            .expires_in
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| now + Duration::from_secs_f64(s.min(1e9)));
        Ok((answer.access_token, expires))
    }

    /// The credentials read before, or found and read now.
    fn credentials(&self, user: &str) -> Result<(PathBuf, Arc<Credentials>), ConfigError> {
        let mut loaded = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((path, credentials)) = &*loaded {
            return Ok((path.clone(), credentials.clone()));
        }
        let error = |origin: String, reason: String| ConfigError::GcpToken {
            user: user.to_owned(),
            origin,
            reason,
        };
        let path = locate().map_err(|r| error("application default credentials".to_owned(), r))?;
        let bytes = read_bounded(&path, |e| {
            error(path.display().to_string(), format!("cannot be read ({e})"))
        })?;
        let credentials = parse(&bytes).map_err(|r| error(path.display().to_string(), r))?;
        let credentials = Arc::new(credentials);
        *loaded = Some((path.clone(), credentials.clone()));
        Ok((path, credentials))
    }

    /// Posts the grant and reads the answer (at most [`MAX_ANSWER_BYTES`]).
    async fn post(&self, user: &str, url: &Url, form: String) -> Result<Answer, ConfigError> {
        let answer_error = |reason: String| ConfigError::GcpToken {
            user: user.to_owned(),
            origin: url.to_string(),
            reason,
        };
        let request_error = |source| ConfigError::GcpTokenRequest {
            user: user.to_owned(),
            url: url.to_string(),
            source,
        };
        let request = self
            .http
            .post(url.clone())
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "application/json")
            .body(form);
        let mut response = request.send().await.map_err(request_error)?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(request_error)? {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(answer_error(format!(
                    "the answer is larger than {MAX_ANSWER_BYTES} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            return Err(answer_error(oauth_refusal(status, &body)));
        }
        serde_json::from_slice(&body).map_err(|e| answer_error(format!("not a token answer: {e}")))
    }
}

/// The token endpoint's answer.
#[derive(Deserialize)]
struct Answer {
    access_token: String,
    #[serde(default)]
    expires_in: Option<f64>,
}

/// Where the credentials are: `GOOGLE_APPLICATION_CREDENTIALS`, else
/// gcloud's well-known file if it exists.
fn locate() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("GOOGLE_APPLICATION_CREDENTIALS").filter(|p| !p.is_empty())
    {
        return Ok(PathBuf::from(path));
    }
    let dir = match std::env::var_os("CLOUDSDK_CONFIG").filter(|p| !p.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None if cfg!(windows) => std::env::var_os("APPDATA").map(|d| Path::new(&d).join("gcloud")),
        None => std::env::var_os("HOME").map(|h| Path::new(&h).join(".config").join("gcloud")),
    };
    let well_known = dir.map(|d| d.join("application_default_credentials.json"));
    match well_known {
        Some(path) if path.is_file() => Ok(path),
        other => Err(format!(
            "none found: GOOGLE_APPLICATION_CREDENTIALS is not set and {} does not exist \
             (the GCE metadata server is not asked; on GKE use the in-cluster configuration)",
            other.map_or_else(
                || "gcloud's application_default_credentials.json".to_owned(),
                |p| p.display().to_string()
            )
        )),
    }
}

/// The credentials in a file's text; the error names the field (never a
/// secret).
fn parse(bytes: &[u8]) -> Result<Credentials, String> {
    let file: File =
        serde_json::from_slice(bytes).map_err(|e| format!("not a credentials file ({e})"))?;
    let need = |field: &str, value: Option<String>| {
        value
            .filter(|v| !v.trim().is_empty())
            .ok_or_else(|| format!("{field} is missing"))
    };
    let token_uri = |uri: Option<String>| {
        let text = uri.filter(|u| !u.trim().is_empty());
        token_url(text.as_deref().unwrap_or(GOOGLE_TOKEN_URI))
            .map_err(|r| format!("token_uri: {r}"))
    };
    match file.kind.as_deref() {
        Some("service_account") => {
            let pem = need("private_key", file.private_key)?;
            Ok(Credentials::ServiceAccount {
                email: need("client_email", file.client_email)?,
                key: Box::new(rsa_key(pem.as_bytes()).map_err(|r| format!("private_key: {r}"))?),
                key_id: file.private_key_id.filter(|k| !k.is_empty()),
                token_uri: token_uri(file.token_uri)?,
            })
        }
        Some("authorized_user") => Ok(Credentials::AuthorizedUser {
            client_id: need("client_id", file.client_id)?,
            client_secret: Secret::new(need("client_secret", file.client_secret)?),
            refresh_token: Secret::new(need("refresh_token", file.refresh_token)?),
            token_uri: token_uri(file.token_uri)?,
        }),
        Some(other) => Err(format!(
            "type {:?} is not supported (only \"service_account\" and \"authorized_user\")",
            other.chars().take(64).collect::<String>()
        )),
        None => Err("type is missing".to_owned()),
    }
}

/// An RSA key from a PKCS#8 PEM block (what Google writes).
fn rsa_key(pem: &[u8]) -> Result<RsaKeyPair, String> {
    match PrivateKeyDer::from_pem_slice(pem) {
        Ok(PrivateKeyDer::Pkcs8(der)) => RsaKeyPair::from_pkcs8(der.secret_pkcs8_der())
            .map_err(|e| format!("not a usable RSA key ({e})")),
        Ok(_) => Err("not a PKCS#8 private key (BEGIN PRIVATE KEY)".to_owned()),
        Err(_) => Err("no PEM private key".to_owned()),
    }
}

/// An `https` URL, or `http` to a loopback address (a local token
/// endpoint; anywhere else the grant would cross the network in clear).
fn token_url(text: &str) -> Result<Url, String> {
    let url = Url::parse(text.trim()).map_err(|e| format!("{text:?} is not a URL ({e})"))?;
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost",
        None => false,
    };
    match url.scheme() {
        "https" => Ok(url),
        "http" if loopback => Ok(url),
        _ => Err(format!("{text:?}: the scheme must be https")),
    }
}

/// The signed JWT of a service account's grant (RFC 7523): `iss` the
/// account, `scope` the scopes, `aud` the token endpoint, valid for an hour
/// from `now`.
fn assertion(
    email: &str,
    key: &RsaKeyPair,
    key_id: Option<&str>,
    scopes: &[String],
    token_uri: &Url,
    now: SystemTime,
) -> Result<String, String> {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let mut head = serde_json::json!({"alg": "RS256", "typ": "JWT"});
    if let Some(id) = key_id {
        head["kid"] = id.into();
    }
    let iat = now
        .duration_since(UNIX_EPOCH)
        .map_err(|_| "the clock is before 1970".to_owned())?
        .as_secs();
    let claims = serde_json::json!({
        "iss": email,
        "scope": scopes.join(" "),
        "aud": token_uri.as_str(),
        "iat": iat,
        "exp": iat + ASSERTION_LIFETIME,
    });
    let input = format!(
        "{}.{}",
        b64(head.to_string().as_bytes()),
        b64(claims.to_string().as_bytes())
    );
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(
        &RSA_PKCS1_SHA256,
        &SystemRandom::new(),
        input.as_bytes(),
        &mut signature,
    )
    .map_err(|_| "private_key: signing failed".to_owned())?;
    Ok(format!("{input}.{}", b64(&signature)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_checked_naming_the_field_or_type() {
        let err = |json: &str| parse(json.as_bytes()).err().expect(json);
        assert!(err("[1]").starts_with("not a credentials file"));
        assert_eq!(err("{}"), "type is missing");
        assert_eq!(
            err(r#"{"type": "external_account", "audience": "x"}"#),
            "type \"external_account\" is not supported (only \"service_account\" and \"authorized_user\")"
        );
        assert_eq!(
            err(r#"{"type": "service_account", "client_email": "a@b"}"#),
            "private_key is missing"
        );
        let e = err(
            r#"{"type": "service_account", "client_email": "a@b", "private_key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}"#,
        );
        assert!(e.starts_with("private_key: not a usable RSA key"), "{e}");
        let e = err(
            r#"{"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r", "token_uri": "http://example.com/token"}"#,
        );
        assert!(e.contains("token_uri") && e.contains("https"), "{e}");
        assert_eq!(
            err(r#"{"type": "authorized_user", "client_id": "c", "client_secret": "s"}"#),
            "refresh_token is missing"
        );
    }

    #[test]
    fn plain_http_is_for_loopback_only() {
        assert!(token_url("http://127.0.0.1:1/t").is_ok());
        assert!(token_url("http://[::1]:1/t").is_ok());
        assert!(token_url("http://localhost/t").is_ok());
        assert!(token_url("https://oauth2.googleapis.com/token").is_ok());
        assert!(token_url("http://10.0.0.1/t").is_err());
        assert!(token_url("ftp://127.0.0.1/t").is_err());
    }

    #[test]
    fn scopes_default_to_client_gos_and_an_empty_list_is_none() {
        assert_eq!(Adc::new(None).unwrap().scopes, DEFAULT_SCOPES);
        assert!(Adc::new(Some("")).unwrap().scopes.is_empty());
        assert_eq!(Adc::new(Some(" a, b,,")).unwrap().scopes, ["a", "b"]);
    }
}
