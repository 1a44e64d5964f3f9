//! Classification of transport failures.
//!
//! **Invariant:** this is the only place that looks inside transport
//! errors. Retry rules (and failover, later) decide on [`TransportKind`].

use std::{error::Error as StdError, fmt, io};

/// What kind of connection failure happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransportKind {
    /// Nothing listens there (the request never reached a server).
    Refused,
    /// The peer reset or aborted the connection, or the pipe broke.
    Reset,
    /// The connection closed before the message was complete.
    UnexpectedEof,
    /// Connecting or waiting for the response timed out.
    Timeout,
    /// The TLS handshake or certificate check failed.
    Tls,
    /// Any other failure (DNS, invalid response, protocol error).
    Other,
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Refused => "connection refused",
            Self::Reset => "connection reset",
            Self::UnexpectedEof => "unexpected EOF",
            Self::Timeout => "timeout",
            Self::Tls => "TLS failure",
            Self::Other => "transport error",
        })
    }
}

/// Classify a transport error by walking its source chain.
pub fn classify(err: &(dyn StdError + 'static)) -> TransportKind {
    if let Some(e) = err.downcast_ref::<reqwest::Error>()
        && e.is_timeout()
    {
        return TransportKind::Timeout;
    }
    let mut current: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = current {
        if e.downcast_ref::<rustls::Error>().is_some() {
            return TransportKind::Tls;
        }
        if let Some(io) = e.downcast_ref::<io::Error>() {
            if io
                .get_ref()
                .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some())
            {
                return TransportKind::Tls;
            }
            match io.kind() {
                io::ErrorKind::ConnectionRefused => return TransportKind::Refused,
                io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionAborted
                | io::ErrorKind::BrokenPipe => return TransportKind::Reset,
                io::ErrorKind::UnexpectedEof => return TransportKind::UnexpectedEof,
                io::ErrorKind::TimedOut => return TransportKind::Timeout,
                _ => {}
            }
        }
        if let Some(h) = e.downcast_ref::<hyper::Error>() {
            if h.is_incomplete_message() {
                return TransportKind::UnexpectedEof;
            }
            if h.is_timeout() {
                return TransportKind::Timeout;
            }
        }
        current = e.source();
    }
    TransportKind::Other
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Wrap(io::Error);
    impl fmt::Display for Wrap {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("wrapped")
        }
    }
    impl StdError for Wrap {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn io_kinds_through_chain() {
        let cases = [
            (io::ErrorKind::ConnectionRefused, TransportKind::Refused),
            (io::ErrorKind::ConnectionReset, TransportKind::Reset),
            (io::ErrorKind::BrokenPipe, TransportKind::Reset),
            (io::ErrorKind::UnexpectedEof, TransportKind::UnexpectedEof),
            (io::ErrorKind::TimedOut, TransportKind::Timeout),
            (io::ErrorKind::Other, TransportKind::Other),
        ];
        for (kind, want) in cases {
            let e = Wrap(io::Error::new(kind, "x"));
            assert_eq!(classify(&e), want, "{kind:?}");
        }
        let tls = Wrap(io::Error::new(
            io::ErrorKind::InvalidData,
            rustls::Error::DecryptError,
        ));
        assert_eq!(classify(&tls), TransportKind::Tls);
    }
}

/// A redirect the client refused to follow, in the source chain of the
/// transport error ([`TransportKind::Other`]). client-go (Go's HTTP client)
/// follows up to 10 redirects anywhere, `https` to `http` included, and
/// drops the `Authorization` header on a change of host. We follow
/// redirects only within the origin of the request (same scheme, host and
/// port), so neither a downgrade to plain HTTP nor another host ever sees
/// the request's credentials.
#[derive(Debug, thiserror::Error)]
#[error("refused to follow a redirect from {from} to {to}: {reason}")]
#[non_exhaustive]
pub struct RedirectRefused {
    /// The URL that answered with the redirect.
    pub from: String,
    /// Where it pointed.
    pub to: String,
    /// Why it was refused.
    pub reason: &'static str,
}

/// The most redirects followed within one origin (Go's limit).
const MAX_REDIRECTS: usize = 10;

/// Why a redirect from a request to `first` (after `hops` responses) to
/// `to` is refused, if it is.
fn redirect_refusal(first: &reqwest::Url, to: &reqwest::Url, hops: usize) -> Option<&'static str> {
    if first.scheme() == "https" && to.scheme() != "https" {
        Some("a downgrade from https")
    } else if first.origin() != to.origin() {
        Some("another origin would receive the credentials")
    } else if hops > MAX_REDIRECTS {
        Some("too many redirects")
    } else {
        None
    }
}

/// reqwest's redirect policy implementing [`RedirectRefused`]'s rule.
pub(crate) fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let (Some(first), Some(last)) = (attempt.previous().first(), attempt.previous().last())
        else {
            return attempt.stop();
        };
        let refuse = |reason| RedirectRefused {
            from: last.to_string(),
            to: attempt.url().to_string(),
            reason,
        };
        match redirect_refusal(first, attempt.url(), attempt.previous().len()) {
            Some(reason) => {
                let err = refuse(reason);
                attempt.error(err)
            }
            None => attempt.follow(),
        }
    })
}

#[cfg(test)]
mod redirect_tests {
    use super::*;

    #[test]
    fn redirects_stay_within_the_origin() {
        let u = |s: &str| reqwest::Url::parse(s).unwrap();
        let cases = [
            ("https://h:6443/a", "https://h:6443/b", 1, None),
            ("http://h:8080/a", "http://h:8080/b?x", 1, None),
            (
                "https://h:6443/a",
                "http://h:6443/a",
                1,
                Some("a downgrade from https"),
            ),
            (
                "https://h:6443/a",
                "http://evil/a",
                1,
                Some("a downgrade from https"),
            ),
            (
                "https://h:6443/a",
                "https://evil:6443/a",
                1,
                Some("another origin would receive the credentials"),
            ),
            (
                "https://h:6443/a",
                "https://h:6444/a",
                1,
                Some("another origin would receive the credentials"),
            ),
            (
                "http://h/a",
                "https://h/a",
                1,
                Some("another origin would receive the credentials"),
            ),
            ("https://h/a", "https://h/b", 11, Some("too many redirects")),
        ];
        for (first, to, hops, want) in cases {
            assert_eq!(
                redirect_refusal(&u(first), &u(to), hops),
                want,
                "{first} -> {to}"
            );
        }
    }
}
