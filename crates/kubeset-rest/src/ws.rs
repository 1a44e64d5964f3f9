//! WebSocket upgrades for the streaming subresources (`pods/exec`,
//! `pods/attach`, `pods/portforward`), feature `ws`.
//!
//! [`RestClient::connect_websocket`] dials the API server itself (one
//! fresh connection per stream, HTTP/1.1 only, since an HTTP/2
//! connection cannot be upgraded) with the client's TLS configuration
//! (CA, client certificate), its [`Authenticator`](crate::auth::Authenticator),
//! user agent and default headers (impersonation), then hands back the
//! upgraded socket as a [`WebSocket`] and the subprotocol the server chose.
//!
//! Failover as client-go's dialer sees it: a server that cannot be
//! reached (refused, TLS failure, connect timeout) is skipped for the
//! next endpoint; an HTTP answer from a server is final (a non-101 answer
//! is its [`ApiError`](crate::ApiError), as [`Error::Api`]). Once
//! upgraded, a stream belongs to its one connection: when it breaks, the
//! stream fails; it is never resumed elsewhere (a command would run
//! twice). HTTP proxies are not used for streams.

use std::io;
use std::time::Duration;

use http::{Request as HttpRequest, StatusCode, header};
use http_body_util::{BodyExt, Empty, Limited};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};

use crate::{Error, Request, RestClient, Verb};
use crate::{failover::Endpoint, upgrade::StreamParts};

pub use tokio_tungstenite::tungstenite;

/// An upgraded stream: tokio-tungstenite's WebSocket over hyper's upgraded
/// connection (kube-rs's shape).
pub type WebSocket = WebSocketStream<TokioIo<Upgraded>>;

/// Largest WebSocket message accepted from the server.
pub const MAX_MESSAGE: usize = 4 << 20;
/// Time to connect, finish TLS and get the upgrade answer, per endpoint,
/// when the client has no [`timeout`](crate::RestConfig::with_timeout).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// Largest error body read from a refused upgrade.
const MAX_ERROR_BODY: usize = 64 << 10;

pub use crate::upgrade::UpgradeError;

fn ws_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE))
}

/// A client-side WebSocket with a real stream's limits over any
/// connection: how the fuzz targets and tests feed bytes to the stream
/// readers of `kubeset-client` without a server. Hidden, not API.
#[doc(hidden)]
pub async fn client_over<S>(io: S) -> WebSocketStream<S>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    WebSocketStream::from_raw_socket(io, Role::Client, Some(ws_config())).await
}

/// The endpoints to try, in order of preference.
fn candidates(client: &RestClient) -> Vec<Endpoint> {
    let inner = &client.inner;
    if inner.endpoints.active() {
        let all = inner.endpoints.snapshot();
        if !all.is_empty() {
            return all;
        }
    }
    vec![inner.server.clone()]
}

enum Dial {
    /// Could not reach this server: try the next one.
    Unreachable(UpgradeError),
    /// The server answered: final.
    Answered(Box<Result<(WebSocket, String), Error>>),
}

fn answered_err(e: impl Into<Error>) -> Dial {
    Dial::Answered(Box::new(Err(e.into())))
}

impl RestClient {
    /// Opens a WebSocket for `request` (a GET of `pods/exec` and the like,
    /// its query set), offering `protocols` in order of preference, and
    /// returns it with the subprotocol the server chose. Of the request,
    /// its path and query are used; its own headers and timeout are not.
    ///
    /// The upgrade (connecting, TLS, the credential, the `101` answer, over
    /// every endpoint tried) is bounded by the client's
    /// [`timeout`](crate::RestConfig::with_timeout) as kubectl's
    /// `--request-timeout` bounds a single server request; without one, by
    /// [`HANDSHAKE_TIMEOUT`] per endpoint. The stream itself is bounded by
    /// nothing: an exec may run for hours, as with kubectl. No retries and
    /// no client-side rate limit, as client-go's stream executors.
    ///
    /// A server that answers anything but `101` gives its `Status` as
    /// [`Error::Api`] (`pods "x" not found`, `pod x does not have a host
    /// assigned`, 401, …); transport and handshake failures are
    /// [`Error::Upgrade`].
    pub async fn connect_websocket(
        &self,
        request: &Request,
        protocols: &[&str],
    ) -> Result<(WebSocket, String), Error> {
        if let Some(e) = request.error() {
            return Err(Error::InvalidRequest {
                message: e.to_string(),
            });
        }
        let Some(stream) = &self.inner.stream else {
            return Err(UpgradeError::Service.into());
        };
        if stream.proxied {
            return Err(UpgradeError::Proxy.into());
        }
        let path = request.path_and_query();
        let budget = self.inner.timeout;
        let deadline = budget.and_then(|b| tokio::time::Instant::now().checked_add(b));
        let mut last = None;
        for ep in candidates(self) {
            let limit = deadline.map_or(HANDSHAKE_TIMEOUT, |d| {
                d.saturating_duration_since(tokio::time::Instant::now())
            });
            let timed_out = || UpgradeError::Timeout {
                origin: ep.origin.clone(),
                after: budget.unwrap_or(HANDSHAKE_TIMEOUT),
            };
            if limit.is_zero() {
                last = Some(timed_out());
                break;
            }
            let dial = tokio::time::timeout(limit, self.dial(stream, &ep, &path, protocols));
            match dial.await {
                Ok(Dial::Answered(r)) => {
                    let r = *r;
                    match &r {
                        Ok(_) => self.inner.endpoints.prefer(&ep.origin),
                        // As for any request: cached credentials are
                        // refreshed for the next call (a stream is not retried).
                        Err(Error::Api(e)) if e.code == 401 => {
                            if let Some(auth) = &self.inner.authenticator {
                                auth.invalidate();
                            }
                        }
                        Err(_) => {}
                    }
                    return r;
                }
                Ok(Dial::Unreachable(e)) => last = Some(e),
                Err(_) => last = Some(timed_out()),
            }
            self.inner.endpoints.demote(&ep.origin);
        }
        Err(last
            .unwrap_or(UpgradeError::Connect {
                origin: self.inner.origin.clone(),
                source: io::Error::new(io::ErrorKind::NotFound, "no endpoint"),
            })
            .into())
    }

    async fn dial(
        &self,
        stream: &StreamParts,
        ep: &Endpoint,
        path: &str,
        protocols: &[&str],
    ) -> Dial {
        let origin = ep.origin.clone();
        let unreachable = |source| {
            Dial::Unreachable(UpgradeError::Connect {
                origin: origin.clone(),
                source,
            })
        };
        let host = ep
            .base
            .host_str()
            .unwrap_or("")
            .trim_matches(['[', ']'])
            .to_owned();
        let port = ep.base.port_or_known_default().unwrap_or(443);
        let tcp = match TcpStream::connect((host.as_str(), port)).await {
            Ok(t) => t,
            Err(e) => return unreachable(e),
        };
        let _ = tcp.set_nodelay(true);
        let req = match self.upgrade_request(stream, ep, path, protocols).await {
            Ok(r) => r,
            Err(e) => return answered_err(e),
        };
        if ep.base.scheme() == "https" {
            let name = match rustls::pki_types::ServerName::try_from(host.clone()) {
                Ok(n) => n,
                Err(e) => return unreachable(io::Error::new(io::ErrorKind::InvalidInput, e)),
            };
            let tls = TlsConnector::from(stream.tls.clone());
            match tls.connect(name, tcp).await {
                Ok(s) => handshake(s, req, &origin, protocols).await,
                Err(e) => unreachable(e),
            }
        } else {
            handshake(tcp, req, &origin, protocols).await
        }
    }

    async fn upgrade_request(
        &self,
        stream: &StreamParts,
        ep: &Endpoint,
        path: &str,
        protocols: &[&str],
    ) -> Result<(HttpRequest<Empty<bytes::Bytes>>, String), Error> {
        let inner = &self.inner;
        let key = tungstenite::handshake::client::generate_key();
        let mut b = HttpRequest::get(path)
            .header(header::HOST, ep.host_key.as_str())
            .header(header::CONNECTION, "Upgrade")
            .header(header::UPGRADE, "websocket")
            .header(header::SEC_WEBSOCKET_VERSION, "13")
            .header(header::SEC_WEBSOCKET_KEY, key.as_str())
            .header(header::SEC_WEBSOCKET_PROTOCOL, protocols.join(", "))
            .header(header::USER_AGENT, stream.user_agent.clone());
        for (name, value) in &inner.defaults.default_headers {
            b = b.header(name, value);
        }
        if let Some(auth) = &inner.authenticator {
            match auth.authorization().await {
                Ok(Some(v)) => b = b.header(header::AUTHORIZATION, v),
                Ok(None) => {}
                Err(source) => return Err(Error::Auth { source }),
            }
        }
        b.body(Empty::new())
            .map(|r| (r, key))
            .map_err(|e| Error::InvalidRequest {
                message: format!("upgrade request: {e}"),
            })
    }
}

/// The HTTP/1.1 upgrade on an established connection.
async fn handshake<S>(
    io: S,
    (req, key): (HttpRequest<Empty<bytes::Bytes>>, String),
    origin: &str,
    protocols: &[&str],
) -> Dial
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let http_err = |source| {
        answered_err(UpgradeError::Http {
            origin: origin.to_owned(),
            source,
        })
    };
    let (mut send, conn) = match hyper::client::conn::http1::handshake(TokioIo::new(io)).await {
        Ok(x) => x,
        Err(e) => return http_err(e),
    };
    tokio::spawn(conn.with_upgrades());
    let resp = match send.send_request(req).await {
        Ok(r) => r,
        Err(e) => return http_err(e),
    };
    if resp.status() != StatusCode::SWITCHING_PROTOCOLS {
        return answered_err(refused(resp).await);
    }
    let bad = |reason| {
        answered_err(UpgradeError::Handshake {
            origin: origin.to_owned(),
            reason,
        })
    };
    let h = resp.headers();
    let is = |name, want: &str| {
        h.get(name)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.split(',').any(|p| p.trim().eq_ignore_ascii_case(want)))
    };
    if !is(header::UPGRADE, "websocket") || !is(header::CONNECTION, "upgrade") {
        return bad("no Upgrade: websocket / Connection: Upgrade");
    }
    let want = derive_accept_key(key.as_bytes());
    if h.get(header::SEC_WEBSOCKET_ACCEPT)
        .and_then(|v| v.to_str().ok())
        != Some(&want)
    {
        return bad("wrong Sec-WebSocket-Accept");
    }
    let chosen = h
        .get(header::SEC_WEBSOCKET_PROTOCOL)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let Some(chosen) = chosen.filter(|c| protocols.contains(&c.as_str())) else {
        return answered_err(UpgradeError::Protocol {
            origin: origin.to_owned(),
            chosen: h
                .get(header::SEC_WEBSOCKET_PROTOCOL)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
            offered: protocols.iter().map(|p| (*p).to_owned()).collect(),
        });
    };
    match hyper::upgrade::on(resp).await {
        Ok(up) => {
            let ws =
                WebSocketStream::from_raw_socket(TokioIo::new(up), Role::Client, Some(ws_config()))
                    .await;
            Dial::Answered(Box::new(Ok((ws, chosen))))
        }
        Err(e) => http_err(e),
    }
}

/// The server's refusal as its `Status` (bounded read).
async fn refused(resp: http::Response<hyper::body::Incoming>) -> Error {
    let code = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = match Limited::new(resp.into_body(), MAX_ERROR_BODY)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(_) => bytes::Bytes::new(),
    };
    crate::response::decode::error_for(code, Verb::Get, content_type.as_deref(), None, &body).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RestConfig;
    use tokio::io::AsyncReadExt;

    /// A server that accepts, reads the upgrade request and never answers.
    async fn silent() -> (String, tokio::task::JoinHandle<()>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((mut sock, _)) = listener.accept().await {
                let mut buf = [0u8; 4096];
                let _ = sock.read(&mut buf).await;
                held.push(sock);
            }
        });
        (url, task)
    }

    /// The client's timeout (kubectl's `--request-timeout`) bounds the
    /// upgrade, and the error names it; before, a fixed 30 s did. The outer
    /// timeout is a hang guard.
    #[tokio::test]
    async fn the_client_timeout_bounds_the_upgrade() {
        let (url, task) = silent().await;
        let client =
            RestClient::new(RestConfig::new(&url).with_timeout(Duration::from_secs(1))).unwrap();
        let req = client
            .get()
            .abs_path(["api", "v1", "namespaces", "d", "pods", "p", "exec"]);
        let r = tokio::time::timeout(
            Duration::from_secs(20),
            client.connect_websocket(&req, &["v5.channel.k8s.io"]),
        )
        .await
        .expect("the upgrade must end at the client's timeout");
        match r {
            Err(Error::Upgrade {
                source: UpgradeError::Timeout { after, .. },
            }) => assert_eq!(after, Duration::from_secs(1)),
            other => panic!("expected the upgrade timeout, got {:?}", other.err()),
        }
        task.abort();
    }
}
