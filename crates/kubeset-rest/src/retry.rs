//! When an attempt is retried (client-go's `with_retry.go` rules, plus
//! HTTP-date `Retry-After`), and how errors of several attempts combine.

use std::time::Duration;

pub(crate) use crate::desc::Mode;
use crate::{error::Error, transport::TransportKind, verb::Verb};

/// The wait client-go uses for a retried transport error (its artificial
/// `Retry-After: 1`).
pub(crate) const TRANSPORT_RETRY_WAIT: Duration = Duration::from_secs(1);

/// A response may be retried when its status is 429 or 5xx and it carries
/// a `Retry-After`.
pub(crate) fn status_may_retry(code: u16) -> bool {
    code == 429 || code >= 500
}

/// Whether a transport failure is retried: `send` retries only GET on a
/// reset or cut-short connection (never on refused: that is for failover);
/// `watch` retries a reset, cut-short or timed-out connect for any verb;
/// `stream` never retries.
pub(crate) fn transport_may_retry(mode: Mode, verb: Verb, kind: TransportKind) -> bool {
    use TransportKind as K;
    match mode {
        Mode::Do => verb == Verb::Get && matches!(kind, K::Reset | K::UnexpectedEof),
        Mode::Watch => matches!(kind, K::Reset | K::UnexpectedEof | K::Timeout),
        Mode::Stream => false,
    }
}

/// client-go's `WrapPreviousError`: mention the latest earlier failure
/// unless it reads the same as the final one.
pub(crate) fn wrap_previous(last: Error, previous: Option<Error>) -> Error {
    match previous {
        Some(previous) if previous.to_string() != last.to_string() => Error::Retried {
            last: Box::new(last),
            previous: Box::new(previous),
        },
        _ => last,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_table() {
        use TransportKind as K;
        let all = [
            K::Refused,
            K::Reset,
            K::UnexpectedEof,
            K::Timeout,
            K::Tls,
            K::Other,
        ];
        for kind in all {
            for verb in [Verb::Get, Verb::Post, Verb::Put, Verb::Patch, Verb::Delete] {
                let do_ = transport_may_retry(Mode::Do, verb, kind);
                assert_eq!(
                    do_,
                    verb == Verb::Get && matches!(kind, K::Reset | K::UnexpectedEof),
                    "do {verb} {kind}"
                );
                let watch = transport_may_retry(Mode::Watch, verb, kind);
                assert_eq!(
                    watch,
                    matches!(kind, K::Reset | K::UnexpectedEof | K::Timeout),
                    "watch {verb} {kind}"
                );
                assert!(!transport_may_retry(Mode::Stream, verb, kind));
            }
        }
    }

    #[test]
    fn statuses() {
        for code in [429, 500, 501, 502, 503, 504, 599] {
            assert!(status_may_retry(code), "{code}");
        }
        for code in [200, 300, 400, 401, 404, 409, 428] {
            assert!(!status_may_retry(code), "{code}");
        }
    }

    #[test]
    fn previous_error_wrapping() {
        let e = |m: &str| Error::InvalidRequest { message: m.into() };
        assert_eq!(wrap_previous(e("a"), None).to_string(), "a");
        assert_eq!(wrap_previous(e("a"), Some(e("a"))).to_string(), "a");
        assert_eq!(
            wrap_previous(e("a"), Some(e("b"))).to_string(),
            "a - error from a previous attempt: b"
        );
    }
}
