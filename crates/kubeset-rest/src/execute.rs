//! The attempt loop: rate limit, backoff, credentials, send, retry.
//!
//! **Invariant:** a [`Prepared`] request holds only the path and query; the
//! server origin is joined per attempt, so attempts can be retargeted.
//! The description is prepared once per call (`desc.rs`); nothing here
//! rebuilds it per attempt.

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures::{StreamExt, stream::BoxStream};
use http::{HeaderMap, HeaderValue, StatusCode};
use tokio::time::Instant;

use crate::{
    budget::{self, Budget, Wait, WaitCause},
    client::{Inner, Sender},
    decide::{Attempt, Next, Node, State, decide},
    desc::Prepared,
    discovery,
    error::EndpointFailure,
    error::Error,
    failover::{Endpoint, calculate_timeouts},
    rate_limit::{AdaptivePermit, Answer},
    response::{Response, decode},
    retry::{TRANSPORT_RETRY_WAIT, status_may_retry, wrap_previous},
    sent::Sent,
    service::Body,
    transport::classify,
    verb::Verb,
    warning::{self, Warning},
};

pub(crate) use crate::desc::Mode;

/// Waits longer than this are logged at debug level.
const LONG_THROTTLE: Duration = Duration::from_millis(50);
/// Waits longer than this are also logged at info level (rate-limited).
const EXTRA_LONG_THROTTLE: Duration = Duration::from_secs(1);

enum Payload {
    Full(Bytes),
    /// Boxed: every outcome is moved through the attempt loop's async
    /// layers, and only a watch or stream has this one.
    Streaming(Box<Sent>),
}

struct Outcome {
    status: StatusCode,
    headers: HeaderMap,
    payload: Payload,
    /// The origin of the endpoint that answered.
    served_by: String,
    /// The parsed `Warning` headers (of the final outcome only).
    warnings: Vec<Warning>,
}

/// The full URL of `p` at `origin` (for errors and logs; attempts use
/// [`Endpoint::url`]).
fn full_url(origin: &str, p: &Prepared) -> String {
    if p.query.is_empty() {
        return format!("{origin}{}", p.path());
    }
    format!("{origin}{}?{}", p.path(), p.query)
}

fn transport_error(verb: Verb, url: String, source: reqwest::Error) -> Error {
    Error::Transport {
        kind: classify(&source),
        verb,
        url,
        source: source.without_url(),
    }
}

/// Wait for the rate limiter, within what is left of the budget.
async fn throttle(
    inner: &Inner,
    p: &Prepared,
    origin: &str,
    reason: &str,
    budget: &Budget,
) -> Result<(), Error> {
    let Some(limiter) = &inner.rate_limiter else {
        return Ok(());
    };
    // A wait the budget cannot cover takes no slot (`reserve_within`), so
    // a call that fails at once does not delay the ones behind it.
    let wait = match limiter.reserve_within(budget.remaining(Instant::now())) {
        Ok(wait) => wait,
        Err(wait) => {
            return Err(exhausted(
                p,
                origin,
                WaitCause::RateLimiter,
                wait,
                budget,
                None,
            ));
        }
    };
    if wait.is_zero() {
        return Ok(());
    }
    inner.sleep(wait).await;
    if let Some(m) = &inner.metrics {
        m.rate_limiter_latency(p.verb, &p.url_template, wait);
    }
    if wait > LONG_THROTTLE {
        let url = full_url(origin, p);
        tracing::debug!(verb = %p.verb, url, reason, ?wait, "waited for client-side throttling");
        if wait > EXTRA_LONG_THROTTLE && inner.allow_throttle_info() {
            tracing::info!(verb = %p.verb, url, reason, ?wait, "waited for client-side throttling, not priority and fairness");
        }
    }
    Ok(())
}

/// A slot of the adaptive limiter for one attempt (none without one),
/// within what is left of the budget.
async fn admit(
    inner: &Inner,
    p: &Prepared,
    origin: &str,
    budget: &Budget,
) -> Result<Option<AdaptivePermit>, Error> {
    let Some(limiter) = &inner.adaptive else {
        return Ok(None);
    };
    let route = format!("{} {}", p.verb, p.url_template);
    match limiter
        .acquire(route, budget.remaining(Instant::now()))
        .await
    {
        Ok(permit) => Ok(Some(permit)),
        Err(wait) => Err(exhausted(
            p,
            origin,
            WaitCause::RateLimiter,
            wait,
            budget,
            None,
        )),
    }
}

/// Free an attempt's adaptive slot, telling the limiter how it went.
fn settle(permit: Option<AdaptivePermit>, result: &Result<Outcome, Error>) {
    let Some(permit) = permit else {
        return;
    };
    permit.finish(match result {
        Ok(o) => Answer {
            status: Some(o.status.as_u16()),
            retry_after: decode::retry_after(&o.headers, SystemTime::now()),
            headers: Some(&o.headers),
        },
        Err(_) => Answer {
            status: None,
            retry_after: None,
            headers: None,
        },
    });
}

/// [`Error::BudgetExhausted`] for a wait the budget cannot cover.
fn exhausted(
    p: &Prepared,
    origin: &str,
    cause: WaitCause,
    wait: Duration,
    budget: &Budget,
    last: Option<Error>,
) -> Error {
    Error::BudgetExhausted {
        verb: p.verb,
        url: full_url(origin, p),
        cause,
        wait,
        budget: budget.total,
        remaining: budget.remaining(Instant::now()),
        last: last.map(Box::new),
    }
}

/// The server's error in a full (error-status) outcome, for
/// [`Error::BudgetExhausted::last`].
fn outcome_error(p: &Prepared, outcome: &Outcome) -> Option<Error> {
    let Payload::Full(body) = &outcome.payload else {
        return None;
    };
    let content_type = outcome
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let retry_after = decode::retry_after(&outcome.headers, SystemTime::now());
    let err = decode::error_for(
        outcome.status.as_u16(),
        p.verb,
        content_type,
        retry_after,
        body,
    );
    Some(err.into())
}

/// The budget of a call to open it: for `send` the whole call (the
/// request's `timeout` and the client's, the shorter), for `watch` and
/// `stream` until the response headers (the client's `timeout`, never longer
/// than the request's, which is how long the stream may run).
fn open_budget(p: &Prepared, client: Option<Duration>) -> Option<Duration> {
    match (p.timeout, client) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (Some(a), None) if p.mode == Mode::Do => Some(a),
        (_, b) => b,
    }
}

/// One attempt: send, and for `Do` (or an error status) read the body.
///
/// The request is built from the URL prepared once per call when the
/// endpoint is the client's server (else from the endpoint's parsed base
/// URL: only path and query are parsed) and the prepared headers; the
/// response's headers are moved out, not copied.
async fn attempt(inner: &Inner, p: &Prepared, ep: &Endpoint) -> Result<Outcome, Error> {
    // The credentials first: the request is then built and sent with no
    // await in between, so it is not part of the attempt's async state.
    let authorization = match &inner.authenticator {
        Some(auth) => auth
            .authorization()
            .await
            .map_err(|source| Error::Auth { source })?,
        None => None,
    };
    let mut resp = match &inner.http {
        Sender::Reqwest(http) => {
            let pending = http.execute(reqwest_request(inner, p, ep, authorization));
            Sent::Reqwest(
                pending
                    .await
                    .map_err(|e| transport_error(p.verb, full_url(&ep.origin, p), e))?,
            )
        }
        Sender::Service(service) => {
            let req = service_request(inner, p, ep, authorization)?;
            let resp = service.call(req).await.map_err(|source| Error::Service {
                verb: p.verb,
                url: full_url(&ep.origin, p),
                source,
            })?;
            Sent::Service(resp)
        }
    };
    let status = resp.status();
    let headers = resp.take_headers();
    let streaming_ok = p.mode != Mode::Do && status.is_success();
    if streaming_ok {
        return Ok(Outcome {
            status,
            headers,
            payload: Payload::Streaming(Box::new(resp)),
            served_by: String::new(),
            warnings: Vec::new(),
        });
    }
    let body = read_body(inner, p, &ep.origin, resp).await?;
    Ok(Outcome {
        status,
        headers,
        payload: Payload::Full(body),
        served_by: String::new(),
        warnings: Vec::new(),
    })
}

/// The URL of `p` at `ep`: the one prepared with the call when `ep` is the
/// client's server.
fn attempt_url(p: &Prepared, ep: &Endpoint) -> reqwest::Url {
    match p.url_at(&ep.origin) {
        Some(url) => url.clone(),
        None => ep.url(p.path(), &p.query),
    }
}

/// The reqwest request of one attempt.
fn reqwest_request(
    inner: &Inner,
    p: &Prepared,
    ep: &Endpoint,
    authorization: Option<HeaderValue>,
) -> reqwest::Request {
    let mut req = reqwest::Request::new(p.verb.method(), attempt_url(p, ep));
    *req.headers_mut() = p.headers(&inner.defaults).clone();
    if let Some(body) = &p.body {
        *req.body_mut() = Some(body.clone().into());
    }
    if let Some(value) = authorization {
        req.headers_mut().insert(http::header::AUTHORIZATION, value);
    }
    req
}

/// The `http::Request` of one attempt through a service: the path and
/// query only, written as kube-rs writes them, when the client was given
/// no base URL (kube-rs's `Client::new`), else the full URL.
fn service_request(
    inner: &Inner,
    p: &Prepared,
    ep: &Endpoint,
    authorization: Option<HeaderValue>,
) -> Result<http::Request<Body>, Error> {
    let target = if inner.origin.is_empty() {
        crate::kube_uri::path_and_query(p)
    } else {
        attempt_url(p, ep).into()
    };
    let uri = http::Uri::try_from(target.as_str()).map_err(|e| Error::InvalidRequest {
        message: format!("{target:?} is not a valid URI: {e}"),
    })?;
    let mut req = http::Request::new(p.body.clone().map_or_else(Body::empty, Body::from));
    *req.method_mut() = p.verb.method();
    *req.uri_mut() = uri;
    *req.headers_mut() = p.headers(&inner.defaults).clone();
    if let Some(value) = authorization {
        req.headers_mut().insert(http::header::AUTHORIZATION, value);
    }
    Ok(req)
}

/// Read a whole body, at most [`Inner::max_response_body`] bytes: a
/// `Content-Length` above it fails before reading, a body without one is
/// counted as it arrives.
async fn read_body(
    inner: &Inner,
    p: &Prepared,
    origin: &str,
    mut resp: Sent,
) -> Result<Bytes, Error> {
    let limit = inner.max_response_body;
    let too_large = |content_length| Error::ResponseTooLarge {
        verb: p.verb,
        url: full_url(origin, p),
        limit,
        content_length,
    };
    let announced = resp.content_length();
    if announced.is_some_and(|n| n > limit as u64) {
        return Err(too_large(announced));
    }
    let capacity = announced.map_or(0, |n| usize::try_from(n).unwrap_or(limit));
    // The first chunk is kept as it is: a body that comes in one chunk is
    // neither copied nor given a buffer.
    let mut first: Option<Bytes> = None;
    let mut body = bytes::BytesMut::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| e.named(p.verb, full_url(origin, p)))?
    {
        let read = first.as_ref().map_or(body.len(), Bytes::len);
        if chunk.len() > limit - read {
            return Err(too_large(announced));
        }
        match first.take() {
            None if body.is_empty() => first = Some(chunk),
            Some(head) => {
                body.reserve(capacity.max(head.len() + chunk.len()));
                body.extend_from_slice(&head);
                body.extend_from_slice(&chunk);
            }
            None => body.extend_from_slice(&chunk),
        }
    }
    Ok(first.unwrap_or_else(|| body.freeze()))
}

/// A streamed body that ends after its first error (reqwest's read
/// timeout would repeat its error forever); with a `deadline`, it yields
/// [`Error::StreamDeadline`] and ends when that passes.
fn body_stream(resp: Sent, deadline: Option<Duration>) -> BoxStream<'static, Result<Bytes, Error>> {
    let body = resp.into_stream();
    let timer = deadline.map(|d| Box::pin(tokio::time::sleep(d)));
    futures::stream::unfold(
        (body, timer, false),
        move |(mut body, mut timer, ended)| async move {
            if ended {
                return None;
            }
            let item = match &mut timer {
                None => body.next().await?,
                Some(t) => tokio::select! {
                    item = body.next() => item?,
                    () = t.as_mut() => Err(Error::StreamDeadline {
                        deadline: deadline.unwrap_or_default(),
                    }),
                },
            };
            let ended = item.is_err();
            Some((item, (body, timer, ended)))
        },
    )
    .boxed()
}

/// The decision's view of an attempt's result (the `Retry-After` parsed
/// once, here).
fn attempt_of(result: &Result<Outcome, Error>) -> Attempt {
    match result {
        Ok(o) => Attempt::Status {
            code: o.status.as_u16(),
            retry_after: if status_may_retry(o.status.as_u16()) {
                decode::retry_after(&o.headers, SystemTime::now())
            } else {
                None
            },
        },
        Err(e) => e
            .transport_kind()
            .map_or(Attempt::Other, Attempt::Transport),
    }
}

/// The call's decision state at its start.
fn start_state(inner: &Inner, p: &Prepared, node: Option<Node>) -> State {
    State {
        verb: p.verb,
        mode: p.mode,
        max_retries: p.max_retries,
        retries: 0,
        can_reauth: inner.authenticator.is_some(),
        reauthed: false,
        node,
    }
}

/// What every attempt leaves behind, whichever loop made it: the metrics
/// of the attempt (latency, result) and of a retry, and the per-host
/// backoff's update.
fn record_attempt(
    inner: &Inner,
    p: &Prepared,
    host: &str,
    started: Option<Instant>,
    code: Option<u16>,
    next: Next,
) {
    if let Some(m) = &inner.metrics {
        if let Some(started) = started {
            m.request_latency(p.verb, &p.url_template, started.elapsed());
        }
        m.request_result(p.verb, host, code);
        if next.is_retry() {
            m.request_retry(p.verb, host, code);
        }
    }
    if let Some(b) = &inner.backoff {
        b.update(host, code.unwrap_or(0), std::time::Instant::now());
    }
}

/// The decision on an attempt's `result` and its records (metrics,
/// backoff, a 401's invalidation). `started`: [`attempt_clock`].
#[inline]
fn conclude(
    inner: &Inner,
    p: &Prepared,
    ep: &Endpoint,
    started: Option<Instant>,
    result: &Result<Outcome, Error>,
    state: &State,
) -> Next {
    let next = decide(attempt_of(result), state);
    let code = result.as_ref().ok().map(|o| o.status.as_u16());
    record_attempt(inner, p, &ep.host_key, started, code, next);
    if next == Next::ReAuth
        && let Some(auth) = &inner.authenticator
    {
        auth.invalidate();
    }
    next
}

/// The start of an attempt, read only for a metrics hook (the only reader
/// of its duration).
#[inline]
fn attempt_clock(inner: &Inner) -> Option<Instant> {
    inner.metrics.is_some().then(Instant::now)
}

/// The final outcome's warnings, parsed and dispatched.
fn finish(inner: &Inner, outcome: &mut Outcome) {
    outcome.warnings = warning::from_headers(&outcome.headers);
    warning::dispatch(inner.warning_handler.as_ref(), &outcome.warnings);
}

/// [`finish`] for the one server, which answered (only `open_at` reports
/// who did).
#[inline]
fn finish_single(inner: &Inner, p: &Prepared, outcome: &mut Outcome) {
    finish(inner, outcome);
    if p.mode != Mode::Do {
        outcome.served_by.clone_from(&inner.origin);
    }
}

/// What to wait before the next attempt to `host`, for both attempt
/// loops: its backoff and a server's `Retry-After` (`retry`), within what
/// is left of `budget`.
fn next_wait(inner: &Inner, host: &str, budget: &Budget, retry: Option<Duration>) -> Wait {
    let backoff = inner
        .backoff
        .as_ref()
        .map_or(Duration::ZERO, |b| b.get(host));
    budget::retry_wait(budget.remaining_at(Instant::now), retry, backoff)
}

/// The attempt loop against the one configured server, within one
/// [`Budget`] for the whole call (rate limiter, attempts, waits).
async fn run_single(inner: &Inner, p: &Prepared) -> Result<Outcome, Error> {
    let ep = &inner.server;
    let host = ep.host_key.as_str();
    let total = open_budget(p, inner.timeout);
    // No clock read for a call without a budget (the common one).
    let budget = match total {
        Some(_) => Budget::new(total, Instant::now()),
        None => Budget::UNBOUNDED,
    };
    // Without a limiter there is no async state to build (the common call).
    if inner.rate_limiter.is_some() {
        throttle(inner, p, &ep.origin, "", &budget).await?;
    }

    let mut state = start_state(inner, p, None);
    let mut retry_wait: Option<Duration> = None;
    let mut previous: Option<Error> = None;
    let mut last_status: Option<Error> = None;
    loop {
        match next_wait(inner, host, &budget, retry_wait) {
            Wait::Sleep(wait) if inner.sleeps(wait) => inner.sleep(wait).await,
            Wait::Sleep(_) => {}
            Wait::Exhausted { wait } => {
                let last = last_status.take().or(previous.take());
                return Err(exhausted(
                    p,
                    &ep.origin,
                    WaitCause::Retry,
                    wait,
                    &budget,
                    last,
                ));
            }
        }
        if retry_wait.is_some() {
            throttle(inner, p, &ep.origin, "retry", &budget).await?;
        }
        // Streaming attempts return at the headers: the budget bounds the
        // wait for them, never the stream itself.
        let limit = budget.remaining_at(Instant::now);
        if limit.is_some_and(|l| l.is_zero()) {
            let last = last_status.take().or(previous.take());
            return Err(wrap_previous(timed_out(p, &ep.origin, &budget), last));
        }
        let permit = match inner.adaptive {
            Some(_) => admit(inner, p, &ep.origin, &budget).await?,
            None => None,
        };
        // A wait for an adaptive slot spent some of the budget.
        let limit = match permit {
            Some(_) => budget.remaining_at(Instant::now),
            None => limit,
        };
        let started = attempt_clock(inner);
        let result = match limit {
            Some(limit) => attempt_within(inner, p, ep, limit).await,
            None => attempt(inner, p, ep).await,
        };
        settle(permit, &result);
        let next = conclude(inner, p, ep, started, &result, &state);
        state = state.after(next);
        retry_wait = None;
        match (result, next) {
            (Ok(mut outcome), Next::Return) => {
                finish_single(inner, p, &mut outcome);
                return Ok(outcome);
            }
            (Ok(outcome), Next::Retry { wait }) => {
                retry_wait = Some(wait);
                last_status = outcome_error(p, &outcome);
            }
            (Err(err), Next::Retry { wait }) => {
                tracing::debug!(verb = %p.verb, url = full_url(&ep.origin, p), error = %err, "retrying after a transport error");
                retry_wait = Some(wait);
                last_status = None;
                previous = Some(err);
            }
            (_, Next::ReAuth) => {}
            (Err(err), _) => return Err(wrap_previous(err, previous)),
            // A status is never failed over (and `Fail` is for errors).
            (Ok(mut outcome), _) => {
                finish_single(inner, p, &mut outcome);
                return Ok(outcome);
            }
        }
    }
}

/// [`Error::Timeout`] for a spent budget.
fn timed_out(p: &Prepared, origin: &str, budget: &Budget) -> Error {
    Error::Timeout {
        verb: p.verb,
        url: full_url(origin, p),
        timeout: budget.total.unwrap_or_default(),
    }
}

/// One attempt within `limit` (a timeout becomes [`Error::Timeout`]).
async fn attempt_within(
    inner: &Inner,
    p: &Prepared,
    ep: &Endpoint,
    limit: Duration,
) -> Result<Outcome, Error> {
    match tokio::time::timeout(limit, attempt(inner, p, ep)).await {
        Ok(r) => r,
        Err(_) => Err(Error::Timeout {
            verb: p.verb,
            url: full_url(&ep.origin, p),
            timeout: limit,
        }),
    }
}

fn all_failed(attempts: Vec<EndpointFailure>) -> Error {
    Error::AllEndpointsFailed { attempts }
}

/// The failover loop (Patroni's): the call's budget is spread over the
/// endpoints with [`calculate_timeouts`]; a transport failure moves to the
/// next endpoint at once; statuses follow the usual rules on the same
/// endpoint; when all failed and time is left, the budget is recomputed
/// from the remaining time and the first `nodes` endpoints are tried again
/// after [`TRANSPORT_RETRY_WAIT`].
async fn run_failover(inner: &Inner, p: &Prepared) -> Result<Outcome, Error> {
    discovery::refresh_if_stale(inner).await;
    let first = inner.endpoints.snapshot();
    let first_origin = first
        .first()
        .map_or_else(|| inner.origin.clone(), |e| e.origin.clone());
    // A watch's or stream's `timeout` is how long it may run; its budget to
    // get the response headers is the client's (never longer than that).
    let total = open_budget(p, Some(inner.budget)).unwrap_or(inner.budget);
    let budget = Budget::new(Some(total), Instant::now());
    throttle(inner, p, &first_origin, "", &budget).await?;

    let mut failures: Vec<EndpointFailure> = Vec::new();
    let mut state = start_state(inner, p, None);
    let mut first_round = true;
    loop {
        let list = inner.endpoints.snapshot();
        // The first round spends the whole budget (the few microseconds
        // since the deadline was set must not cost a node); later rounds
        // what is left of it.
        let remaining = if first_round {
            total
        } else {
            budget.remaining(Instant::now()).unwrap_or(total)
        };
        let (mut nodes, mut per_node, mut per_node_retries) =
            calculate_timeouts(list.len(), remaining);
        // A budget under 1 s gives Patroni zero nodes; the first endpoint
        // still gets one attempt with all of it.
        if first_round && nodes == 0 && !list.is_empty() && !remaining.is_zero() {
            (nodes, per_node, per_node_retries) = (1, remaining, 0);
        }
        first_round = false;
        if nodes == 0 {
            return Err(all_failed(failures));
        }
        for (index, ep) in list.iter().take(nodes).enumerate() {
            let host = ep.host_key.as_str();
            state.node = Some(Node {
                tries: 0,
                retries: per_node_retries,
            });
            let mut retry_after: Option<Duration> = None;
            let mut last_status: Option<Error> = None;
            loop {
                match next_wait(inner, host, &budget, retry_after) {
                    Wait::Sleep(wait) if inner.sleeps(wait) => inner.sleep(wait).await,
                    Wait::Sleep(_) => {}
                    Wait::Exhausted { wait } if last_status.is_some() || retry_after.is_some() => {
                        return Err(exhausted(
                            p,
                            &ep.origin,
                            WaitCause::Retry,
                            wait,
                            &budget,
                            last_status,
                        ));
                    }
                    Wait::Exhausted { .. } => return Err(all_failed(failures)),
                }
                if retry_after.take().is_some() {
                    throttle(inner, p, &ep.origin, "retry", &budget).await?;
                }
                let remaining = budget.remaining(Instant::now()).unwrap_or(total);
                if remaining.is_zero() {
                    return Err(all_failed(failures));
                }
                let permit = admit(inner, p, &ep.origin, &budget).await?;
                let remaining = budget.remaining(Instant::now()).unwrap_or(total);
                let limit = per_node.min(remaining);
                let started = attempt_clock(inner);
                let result = attempt_within(inner, p, ep, limit).await;
                settle(permit, &result);
                let next = conclude(inner, p, ep, started, &result, &state);
                state = state.after(next);
                match (result, next) {
                    (Ok(outcome), Next::Retry { wait }) => {
                        retry_after = Some(wait);
                        last_status = outcome_error(p, &outcome);
                    }
                    (_, Next::ReAuth) => {}
                    (Ok(mut outcome), _) => {
                        if index != 0 || !failures.is_empty() {
                            tracing::debug!(endpoint = %ep.origin, "API server answered after a failover");
                            inner.endpoints.prefer(&ep.origin);
                            inner.endpoints.mark_stale();
                        }
                        finish(inner, &mut outcome);
                        outcome.served_by.clone_from(&ep.origin);
                        return Ok(outcome);
                    }
                    (Err(err), Next::SameEndpoint | Next::FailOver) => {
                        tracing::debug!(verb = %p.verb, url = full_url(&ep.origin, p), error = %err, "API server failed; trying the next one");
                        let kind = err.transport_kind().unwrap_or(crate::TransportKind::Other);
                        failures.push(EndpointFailure {
                            endpoint: ep.origin.clone(),
                            kind,
                            error: err,
                        });
                        last_status = None;
                        if next == Next::FailOver {
                            break;
                        }
                    }
                    (Err(err), _) => return Err(err),
                }
            }
        }
        // Every node of this round failed: wait, then try again if a node
        // still gets its minimum time.
        let remaining = budget.remaining(Instant::now()).unwrap_or_default();
        let after_wait = remaining.saturating_sub(TRANSPORT_RETRY_WAIT);
        if calculate_timeouts(list.len(), after_wait).0 == 0 {
            return Err(all_failed(failures));
        }
        inner.sleep(TRANSPORT_RETRY_WAIT).await;
        throttle(inner, p, &first_origin, "retry", &budget).await?;
    }
}

/// `send`: the final response with its whole body.
pub(crate) async fn send(inner: &Inner, p: &Prepared) -> Result<Response, Error> {
    // The attempt loop until a final outcome: over the endpoint set when
    // failover is active, else against the one server (written out in
    // `send` and `open_response`, not behind one more async layer).
    let outcome = if inner.endpoints.active() {
        // Boxed: its state is larger than the single-endpoint loop's, and
        // every call would move it through the async states above.
        Box::pin(run_failover(inner, p)).await?
    } else {
        run_single(inner, p).await?
    };
    let body = match outcome.payload {
        Payload::Full(b) => b,
        // Not produced in `Do` mode; read it anyway rather than fail.
        Payload::Streaming(r) => read_body(inner, p, &inner.origin, *r).await?,
    };
    Ok(Response::new(
        outcome.status,
        outcome.headers,
        body,
        outcome.warnings,
        p.verb,
    ))
}

/// `watch`/`stream`: the body of a 2xx response as a byte stream, or the
/// server's error.
pub(crate) async fn open(
    inner: &Inner,
    p: Prepared,
) -> Result<BoxStream<'static, Result<Bytes, Error>>, Error> {
    open_at(inner, &p).await.map(|(body, _)| body)
}

/// [`open`], also returning the origin of the endpoint that answered.
pub(crate) async fn open_at(
    inner: &Inner,
    p: &Prepared,
) -> Result<(BoxStream<'static, Result<Bytes, Error>>, String), Error> {
    open_typed(inner, p).await.map(|o| (o.body, o.origin))
}

/// An opened stream, the origin of the endpoint that answered and the
/// response's `Content-Type` (a watch is read by it: JSON or protobuf).
pub(crate) struct Opened {
    pub(crate) body: BoxStream<'static, Result<Bytes, Error>>,
    pub(crate) origin: String,
    pub(crate) content_type: Option<String>,
}

/// [`open_at`], also returning the response's `Content-Type`.
pub(crate) async fn open_typed(inner: &Inner, p: &Prepared) -> Result<Opened, Error> {
    open_response(inner, p).await?.map_err(open_error)
}

/// [`open_typed`], with an error answer handed back whole (a protobuf
/// watch decodes its protobuf `Status` before [`open_error`]).
pub(crate) async fn open_response(
    inner: &Inner,
    p: &Prepared,
) -> Result<Result<Opened, Response>, Error> {
    let outcome = if inner.endpoints.active() {
        Box::pin(run_failover(inner, p)).await?
    } else {
        run_single(inner, p).await?
    };
    Ok(match outcome.payload {
        Payload::Streaming(resp) => Ok(Opened {
            body: body_stream(*resp, p.stream_deadline),
            origin: outcome.served_by,
            content_type: outcome
                .headers
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
        }),
        Payload::Full(body) => Err(Response::new(
            outcome.status,
            outcome.headers,
            body,
            outcome.warnings,
            p.verb,
        )),
    })
}

/// The error of a stream that did not open: the server's `Status`.
pub(crate) fn open_error(resp: Response) -> Error {
    resp.api_error()
        .unwrap_or_else(|| decode::generic(resp.status.as_u16(), resp.verb, String::new()))
        .into()
}
