//! What an upgraded stream (exec, attach, port-forward; feature `ws`)
//! needs of the client's configuration, and how it fails: plain types the
//! client and the error enum hold, apart from the connection code in
//! `ws.rs` so that the layers stay acyclic.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use http::HeaderValue;
use tokio_tungstenite::tungstenite;

/// What the stream layer needs of the client's configuration, kept at
/// build time (reqwest keeps its own copies private).
#[derive(Clone)]
pub(crate) struct StreamParts {
    pub(crate) tls: Arc<rustls::ClientConfig>,
    pub(crate) user_agent: HeaderValue,
    pub(crate) proxied: bool,
}

impl StreamParts {
    /// From the client's TLS configuration: the same roots and client
    /// certificate, ALPN `http/1.1` only.
    pub(crate) fn new(tls: &rustls::ClientConfig, user_agent: &str, proxied: bool) -> Self {
        let mut tls = tls.clone();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        Self {
            tls: Arc::new(tls),
            user_agent: HeaderValue::from_str(user_agent)
                .unwrap_or_else(|_| HeaderValue::from_static("kubeset")),
            proxied,
        }
    }
}

/// Why a stream could not be opened or broke (the REST layer's
/// `Error::Upgrade`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UpgradeError {
    /// No endpoint could be reached; the last endpoint's failure.
    #[error("connecting to {origin}")]
    Connect {
        /// The server tried last.
        origin: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// Connecting, TLS and the upgrade answer took longer than the
    /// client's timeout, or `ws::HANDSHAKE_TIMEOUT` without one.
    #[error("no upgrade answer from {origin} within {after:?}")]
    Timeout {
        /// The server.
        origin: String,
        /// The limit.
        after: Duration,
    },
    /// The HTTP/1.1 exchange before the upgrade failed.
    #[error("upgrade request to {origin}")]
    Http {
        /// The server.
        origin: String,
        /// The cause.
        #[source]
        source: hyper::Error,
    },
    /// The server answered 101 but not as RFC 6455 requires.
    #[error("{origin} did not upgrade to WebSocket: {reason}")]
    Handshake {
        /// The server.
        origin: String,
        /// What was wrong.
        reason: &'static str,
    },
    /// The server chose no subprotocol, or one the client did not offer.
    #[error("{origin} chose subprotocol {chosen:?}; offered {offered:?}")]
    Protocol {
        /// The server.
        origin: String,
        /// The answer's `Sec-WebSocket-Protocol`, if any.
        chosen: Option<String>,
        /// What the client offered.
        offered: Vec<String>,
    },
    /// The client is configured with an HTTP proxy, which streams do not use.
    #[error("streams (exec, attach, port-forward) do not go through an HTTP proxy")]
    Proxy,
    /// The client sends through a tower service
    /// ([`RestClient::from_service`](crate::RestClient::from_service)),
    /// which has no connection to upgrade.
    #[error(
        "streams (exec, attach, port-forward) need the built-in transport, not a tower service"
    )]
    Service,
    /// The WebSocket broke after the upgrade.
    #[error("the stream broke")]
    WebSocket {
        /// The cause.
        #[source]
        source: Box<tungstenite::Error>,
    },
    /// The server closed the connection before the stream ended (no exit
    /// status was received).
    #[error("the server closed the stream before it ended")]
    Closed,
    /// The server sent a message the protocol does not allow.
    #[error("protocol violation: {reason}")]
    Violation {
        /// What was wrong.
        reason: String,
    },
}
