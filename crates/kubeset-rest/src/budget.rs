//! The time budget of one call, as pure rules (no clock, no I/O): the
//! attempt loops in `execute.rs` ask these functions how long to wait and
//! whether the budget still covers it.
//!
//! client-go sleeps `max(backoff, Retry-After)` whatever the server asks and
//! counts none of it against the client's `Timeout`; Patroni gives each call
//! one deadline and fails at once when a `Retry-After` would pass it. We do
//! as Patroni: every wait (rate limiter, backoff, `Retry-After`, the pause
//! between failover rounds) is taken from the call's budget, a wait the
//! budget cannot cover fails at once, and without any budget a server may
//! not make a call wait longer than [`MAX_SERVER_WAIT`] per retry.
//! All arithmetic saturates: no server value can overflow a clock.

use std::{fmt, time::Duration};

use tokio::time::Instant;

/// Without a budget, the longest single wait a server may ask for
/// (`Retry-After` seconds or HTTP-date, `details.retryAfterSeconds`); a
/// longer one fails the call at once with
/// [`Error::BudgetExhausted`](crate::Error::BudgetExhausted) instead of
/// sleeping for it. kube-apiserver asks for 1 s (priority and fairness,
/// max-in-flight) up to a few seconds; five minutes is well above any real
/// answer and short enough that a hostile one cannot park a client.
pub const MAX_SERVER_WAIT: Duration = Duration::from_secs(5 * 60);

/// What a wait before an attempt was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WaitCause {
    /// The server's `Retry-After` (or the transport retry's 1 s), or the
    /// per-host backoff when it is longer.
    Retry,
    /// The client-side rate limiter.
    RateLimiter,
    /// The pause between two failover rounds over the endpoints.
    Failover,
}

impl fmt::Display for WaitCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Retry => "retry wait",
            Self::RateLimiter => "rate limiter wait",
            Self::Failover => "failover pause",
        })
    }
}

/// The deadline of one call; `None` fields: no budget.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    /// The whole budget.
    pub(crate) total: Option<Duration>,
    deadline: Option<Instant>,
}

impl Budget {
    /// No budget.
    pub(crate) const UNBOUNDED: Self = Self {
        total: None,
        deadline: None,
    };

    /// A budget of `total` from `now`. A total the clock cannot represent
    /// (years) is no budget, never a panic.
    pub(crate) fn new(total: Option<Duration>, now: Instant) -> Self {
        let deadline = total.and_then(|t| now.checked_add(t));
        Self {
            total: deadline.and(total),
            deadline,
        }
    }

    /// What is left at `now` (`None`: unbounded).
    pub(crate) fn remaining(&self, now: Instant) -> Option<Duration> {
        self.deadline.map(|d| d.saturating_duration_since(now))
    }

    /// [`remaining`](Self::remaining) at the time `now` gives, asked only
    /// when there is a deadline (no clock read per step of an unbounded
    /// call).
    pub(crate) fn remaining_at(&self, now: impl FnOnce() -> Instant) -> Option<Duration> {
        self.deadline.map(|d| d.saturating_duration_since(now()))
    }
}

/// The decision before an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Sleep this long (maybe zero), then send.
    Sleep(Duration),
    /// The wait would use up the budget (or is a server wait above
    /// [`MAX_SERVER_WAIT`] without a budget): fail now.
    Exhausted {
        /// The wait that was asked for.
        wait: Duration,
    },
}

/// The wait before a retry: `max(backoff, server)` as client-go, where
/// `server` is the `Retry-After` (or the transport retry's wait); refused
/// when it would leave no time for the attempt, or, without a budget, when
/// the server asks for more than [`MAX_SERVER_WAIT`].
pub(crate) fn retry_wait(
    remaining: Option<Duration>,
    server: Option<Duration>,
    backoff: Duration,
) -> Wait {
    let wait = server.map_or(backoff, |s| s.max(backoff));
    match remaining {
        Some(left) => plain_wait(Some(left), wait),
        None if server.is_some_and(|s| s > MAX_SERVER_WAIT) => Wait::Exhausted { wait },
        None => Wait::Sleep(wait),
    }
}

/// Any other wait (rate limiter, failover pause): refused when it would
/// leave no time for the attempt. A zero wait is always allowed.
pub(crate) fn plain_wait(remaining: Option<Duration>, wait: Duration) -> Wait {
    match remaining {
        Some(left) if !wait.is_zero() && wait >= left => Wait::Exhausted { wait },
        _ => Wait::Sleep(wait),
    }
}

/// How long a streamed body may run on the client's clock when the request
/// asked the server to end it after `timeout` (the `timeout` or
/// `timeoutSeconds` parameter of a watch): the server's own end gets
/// [`STREAM_GRACE`] to arrive.
pub(crate) fn stream_deadline(timeout: Option<Duration>) -> Option<Duration> {
    timeout.map(|t| t.saturating_add(STREAM_GRACE))
}

/// Slack given to a server to end a watch at its `timeout` before the
/// client ends it.
pub(crate) const STREAM_GRACE: Duration = Duration::from_secs(1);

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn retry_wait_table() {
        let huge = Duration::from_secs(i64::MAX as u64);
        // (remaining, server, backoff) → decision
        let cases = [
            (None, None, S(0), Wait::Sleep(S(0))),
            (None, Some(S(1)), S(0), Wait::Sleep(S(1))),
            (None, Some(S(2)), S(4), Wait::Sleep(S(4))),
            (None, Some(S(5)), S(1), Wait::Sleep(S(5))),
            (
                None,
                Some(MAX_SERVER_WAIT),
                S(0),
                Wait::Sleep(MAX_SERVER_WAIT),
            ),
            (None, Some(S(3600)), S(0), Wait::Exhausted { wait: S(3600) }),
            (None, Some(huge), S(0), Wait::Exhausted { wait: huge }),
            (Some(S(2)), Some(S(1)), S(0), Wait::Sleep(S(1))),
            (Some(S(2)), Some(S(2)), S(0), Wait::Exhausted { wait: S(2) }),
            (Some(S(2)), Some(huge), S(0), Wait::Exhausted { wait: huge }),
            (Some(S(2)), Some(S(0)), S(3), Wait::Exhausted { wait: S(3) }),
            (Some(S(0)), Some(S(0)), S(0), Wait::Sleep(S(0))),
            (Some(S(9)), None, S(0), Wait::Sleep(S(0))),
        ];
        for (remaining, server, backoff, want) in cases {
            assert_eq!(
                retry_wait(remaining, server, backoff),
                want,
                "{remaining:?} {server:?} {backoff:?}"
            );
        }
    }

    #[test]
    fn plain_waits() {
        assert_eq!(plain_wait(None, S(99)), Wait::Sleep(S(99)));
        assert_eq!(plain_wait(Some(S(1)), S(0)), Wait::Sleep(S(0)));
        assert_eq!(plain_wait(Some(S(1)), S(1)), Wait::Exhausted { wait: S(1) });
    }

    #[test]
    fn budgets_saturate() {
        let now = Instant::now();
        let b = Budget::new(Some(Duration::MAX), now);
        assert_eq!((b.total, b.remaining(now)), (None, None));
        let b = Budget::new(Some(S(2)), now);
        assert_eq!(b.remaining(now), Some(S(2)));
        assert_eq!(b.remaining(now + S(5)), Some(S(0)));
        assert_eq!(stream_deadline(Some(Duration::MAX)), Some(Duration::MAX));
        assert_eq!(stream_deadline(Some(S(5))), Some(S(6)));
        assert_eq!(stream_deadline(None), None);
    }
}
