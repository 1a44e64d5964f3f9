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
