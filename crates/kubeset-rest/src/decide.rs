//! What follows one attempt, as a pure function: [`decide`] maps the
//! attempt's outcome and the call's [`State`] to a [`Next`] step. Both
//! attempt loops (one server, and failover over several) ask it, so the
//! retry, re-authentication and failover rules are written once; the loops
//! only carry the step out (sleep, invalidate credentials, move on).
//!
//! The rules: client-go's `with_retry.go` (a 429 or 5xx with a
//! `Retry-After` is retried on the same server, up to `max_retries`; a
//! transport error by [`transport_may_retry`]), one re-authentication after
//! a 401 (client-go's exec and OIDC providers refresh on 401), and
//! Patroni's failover (a transport failure moves to the next endpoint after
//! the node's own retries; HTTP statuses never fail over).

use std::time::Duration;

use crate::{
    desc::Mode,
    retry::{TRANSPORT_RETRY_WAIT, status_may_retry, transport_may_retry},
    transport::TransportKind,
    verb::Verb,
};

/// How one attempt ended, reduced to what the decision reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// A response: its status and its parsed `Retry-After`, if any.
    Status {
        /// The status code.
        code: u16,
        /// The server's wait (seconds or HTTP-date), if any.
        retry_after: Option<Duration>,
    },
    /// The connection failed (or the attempt timed out).
    Transport(TransportKind),
    /// Any other error (credentials, an invalid request, a body too
    /// large): never retried.
    Other,
}

/// The call's state the decision reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct State {
    pub(crate) verb: Verb,
    pub(crate) mode: Mode,
    pub(crate) max_retries: u32,
    /// Retries spent so far (status and transport retries of the call).
    pub(crate) retries: u32,
    /// Whether the client has credentials that can be refreshed.
    pub(crate) can_reauth: bool,
    /// Whether the one re-authentication of the call was spent.
    pub(crate) reauthed: bool,
    /// `Some` over several endpoints: the current node's transport
    /// failures so far and how many it may have.
    pub(crate) node: Option<Node>,
}

/// A failover node's share of the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Node {
    /// Transport failures retried on this node so far.
    pub(crate) tries: u32,
    /// How many it may retry ([`calculate_timeouts`](crate::failover::calculate_timeouts)).
    pub(crate) retries: u32,
}

/// The step after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Hand the response to the caller (success, or a final status).
    Return,
    /// Hand the error to the caller.
    Fail,
    /// Invalidate the credentials and attempt again at once (a 401).
    ReAuth,
    /// Attempt again on the same server after the server's wait (or the
    /// transport retry's); the per-host backoff may make it longer.
    Retry {
        /// The wait asked for.
        wait: Duration,
    },
    /// Failover: attempt again on the same endpoint (its own retries).
    SameEndpoint,
    /// Failover: move to the next endpoint.
    FailOver,
}

impl Next {
    /// Whether the step is a retry the metrics count.
    pub(crate) fn is_retry(self) -> bool {
        matches!(
            self,
            Next::Retry { .. } | Next::SameEndpoint | Next::FailOver
        )
    }
}

/// The step after `attempt` in `state`. Pure.
pub(crate) fn decide(attempt: Attempt, state: &State) -> Next {
    let retries_left = state.retries < state.max_retries;
    match attempt {
        Attempt::Status { code: 401, .. } if state.can_reauth && !state.reauthed => Next::ReAuth,
        Attempt::Status {
            code,
            retry_after: Some(wait),
        } if status_may_retry(code) && retries_left => Next::Retry { wait },
        Attempt::Status { .. } => Next::Return,
        Attempt::Other => Next::Fail,
        Attempt::Transport(_) if state.node.is_some() => match state.node {
            Some(node) if node.tries < node.retries => Next::SameEndpoint,
            _ => Next::FailOver,
        },
        Attempt::Transport(kind)
            if retries_left && transport_may_retry(state.mode, state.verb, kind) =>
        {
            Next::Retry {
                wait: TRANSPORT_RETRY_WAIT,
            }
        }
        Attempt::Transport(_) => Next::Fail,
    }
}

impl State {
    /// The state after `next` was taken.
    pub(crate) fn after(mut self, next: Next) -> Self {
        match next {
            Next::ReAuth => self.reauthed = true,
            Next::Retry { .. } => self.retries = self.retries.saturating_add(1),
            Next::SameEndpoint => {
                if let Some(node) = &mut self.node {
                    node.tries = node.tries.saturating_add(1);
                }
            }
            Next::FailOver => {
                if let Some(node) = &mut self.node {
                    node.tries = 0;
                }
            }
            Next::Return | Next::Fail => {}
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TransportKind as K;

    const S: fn(u64) -> Duration = Duration::from_secs;

    fn single(verb: Verb, mode: Mode) -> State {
        State {
            verb,
            mode,
            max_retries: 10,
            retries: 0,
            can_reauth: false,
            reauthed: false,
            node: None,
        }
    }

    fn status(code: u16, retry_after: Option<Duration>) -> Attempt {
        Attempt::Status { code, retry_after }
    }

    #[test]
    fn statuses_table() {
        let get = single(Verb::Get, Mode::Do);
        // REFERENCE-BEHAVIOUR 11: 429 or >= 500 with a Retry-After (0 is
        // valid) is retried; without one, or any other code, it is not.
        let cases = [
            (status(200, None), Next::Return),
            (status(200, Some(S(1))), Next::Return),
            (status(404, Some(S(1))), Next::Return),
            (status(409, None), Next::Return),
            (status(428, Some(S(1))), Next::Return),
            (status(429, None), Next::Return),
            (status(429, Some(S(1))), Next::Retry { wait: S(1) }),
            (status(429, Some(S(0))), Next::Retry { wait: S(0) }),
            (status(500, Some(S(5))), Next::Retry { wait: S(5) }),
            (status(503, None), Next::Return),
            (status(599, Some(S(2))), Next::Retry { wait: S(2) }),
            (status(401, None), Next::Return),
            (Attempt::Other, Next::Fail),
        ];
        for (attempt, want) in cases {
            assert_eq!(decide(attempt, &get), want, "{attempt:?}");
            // Statuses never fail over (27).
            let node = State {
                node: Some(Node {
                    tries: 0,
                    retries: 1,
                }),
                ..get
            };
            assert_eq!(decide(attempt, &node), want, "failover {attempt:?}");
        }
    }

    #[test]
    fn retry_limit_counts_status_and_transport_retries() {
        // Four `429 Retry-After: 1` then 200 (14), and the default 10.
        let mut state = single(Verb::Get, Mode::Do);
        for _ in 0..4 {
            let next = decide(status(429, Some(S(1))), &state);
            assert_eq!(next, Next::Retry { wait: S(1) });
            state = state.after(next);
        }
        assert_eq!(decide(status(200, None), &state), Next::Return);
        for _ in 4..10 {
            let next = decide(Attempt::Transport(K::Reset), &state);
            assert_eq!(next, Next::Retry { wait: S(1) });
            state = state.after(next);
        }
        assert_eq!(state.retries, 10);
        assert_eq!(decide(status(503, Some(S(1))), &state), Next::Return);
        assert_eq!(decide(Attempt::Transport(K::Reset), &state), Next::Fail);
        let none = State {
            max_retries: 0,
            ..single(Verb::Get, Mode::Do)
        };
        assert_eq!(decide(status(429, Some(S(1))), &none), Next::Return);
    }

    #[test]
    fn transport_table() {
        // REFERENCE-BEHAVIOUR 12, through the decision (a retried transport
        // error waits client-go's artificial 1 s).
        let retry = Next::Retry {
            wait: TRANSPORT_RETRY_WAIT,
        };
        let rows = [
            (Mode::Do, Verb::Get, K::Reset, retry),
            (Mode::Do, Verb::Get, K::UnexpectedEof, retry),
            (Mode::Do, Verb::Get, K::Refused, Next::Fail),
            (Mode::Do, Verb::Get, K::Timeout, Next::Fail),
            (Mode::Do, Verb::Get, K::Tls, Next::Fail),
            (Mode::Do, Verb::Post, K::Reset, Next::Fail),
            (Mode::Do, Verb::Delete, K::UnexpectedEof, Next::Fail),
            (Mode::Watch, Verb::Get, K::Timeout, retry),
            (Mode::Watch, Verb::Post, K::UnexpectedEof, retry),
            (Mode::Watch, Verb::Put, K::Reset, retry),
            (Mode::Watch, Verb::Get, K::Refused, Next::Fail),
            (Mode::Watch, Verb::Get, K::Other, Next::Fail),
            (Mode::Stream, Verb::Get, K::Reset, Next::Fail),
            (Mode::Stream, Verb::Get, K::Timeout, Next::Fail),
        ];
        for (mode, verb, kind, want) in rows {
            let got = decide(Attempt::Transport(kind), &single(verb, mode));
            assert_eq!(got, want, "{mode:?} {verb} {kind}");
        }
    }

    #[test]
    fn reauth_once_per_call() {
        let state = State {
            can_reauth: true,
            ..single(Verb::Get, Mode::Do)
        };
        let next = decide(status(401, None), &state);
        assert_eq!(next, Next::ReAuth);
        let state = state.after(next);
        assert_eq!(state.retries, 0, "a re-authentication is not a retry");
        assert_eq!(decide(status(401, None), &state), Next::Return);
        // Over several endpoints too.
        let node = State {
            can_reauth: true,
            node: Some(Node {
                tries: 0,
                retries: 0,
            }),
            ..single(Verb::Post, Mode::Do)
        };
        assert_eq!(decide(status(401, Some(S(1))), &node), Next::ReAuth);
    }

    #[test]
    fn failover_table() {
        // REFERENCE-BEHAVIOUR 26-27: any transport failure (refused too,
        // any verb, any mode) moves on after the node's own retries
        // (`calculate_timeouts`: 1 for a single node with 10 s).
        let mut state = State {
            node: Some(Node {
                tries: 0,
                retries: 1,
            }),
            ..single(Verb::Post, Mode::Stream)
        };
        let next = decide(Attempt::Transport(K::Refused), &state);
        assert_eq!(next, Next::SameEndpoint);
        assert!(next.is_retry());
        state = state.after(next);
        let next = decide(Attempt::Transport(K::Timeout), &state);
        assert_eq!(next, Next::FailOver);
        state = state.after(next);
        assert_eq!(state.node.map(|n| n.tries), Some(0));
        assert_eq!(state.retries, 0, "failover moves are not status retries");
        for kind in [K::Tls, K::Other, K::Reset] {
            let no_retries = State {
                node: Some(Node {
                    tries: 0,
                    retries: 0,
                }),
                ..state
            };
            assert_eq!(
                decide(Attempt::Transport(kind), &no_retries),
                Next::FailOver
            );
        }
        assert_eq!(decide(Attempt::Other, &state), Next::Fail);
        assert!(!Next::Return.is_retry() && !Next::ReAuth.is_retry());
    }
}
