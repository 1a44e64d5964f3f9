//! The attempt loop: rate limit, backoff, credentials, send, retry.
//!
//! **Invariant:** a [`Prepared`] request holds only the path and query; the
//! server origin is joined per attempt, so attempts can be retargeted.

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures::{StreamExt, stream::BoxStream};
use http::{HeaderMap, StatusCode};
use tokio::time::Instant;

use crate::{
    client::Inner,
    error::Error,
    failover::{self, Endpoint, EndpointFailure, calculate_timeouts},
    request::Verb,
    response::{Response, decode},
    retry::{TRANSPORT_RETRY_WAIT, status_may_retry, transport_may_retry, wrap_previous},
    transport::classify,
    warning::{self, Warning},
};

pub(crate) use crate::retry::Mode;

/// Waits longer than this are logged at debug level.
const LONG_THROTTLE: Duration = Duration::from_millis(50);
/// Waits longer than this are also logged at info level (rate-limited).
const EXTRA_LONG_THROTTLE: Duration = Duration::from_secs(1);

/// A request ready to be sent, independent of the server.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub(crate) verb: Verb,
    pub(crate) path_and_query: String,
    pub(crate) url_template: String,
    /// `None`: the client's [`request_headers`](Inner::request_headers).
    pub(crate) headers: Option<HeaderMap>,
    pub(crate) body: Option<Bytes>,
    pub(crate) max_retries: u32,
    /// Deadline of the whole request, retries included.
    pub(crate) timeout: Option<Duration>,
    pub(crate) mode: Mode,
}

enum Payload {
    Full(Bytes),
    Streaming(reqwest::Response),
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
    format!("{origin}{}", p.path_and_query)
}

fn transport_error(verb: Verb, url: String, source: reqwest::Error) -> Error {
    Error::Transport {
        kind: classify(&source),
        verb,
        url,
        source: source.without_url(),
    }
}

fn body_error(source: reqwest::Error) -> Error {
    Error::Body {
        kind: classify(&source),
        source: source.without_url(),
    }
}

async fn throttle(inner: &Inner, p: &Prepared, origin: &str, reason: &str) {
    let Some(limiter) = &inner.rate_limiter else {
        return;
    };
    let wait = limiter.reserve();
    if wait.is_zero() {
        return;
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
}

/// One attempt: send, and for `Do` (or an error status) read the body.
///
/// The `reqwest::Request` is built directly from the endpoint's parsed base
/// URL (only path and query are parsed per attempt) and the prepared
/// headers; the response's headers are moved out, not copied.
async fn attempt(inner: &Inner, p: &Prepared, ep: &Endpoint) -> Result<Outcome, Error> {
    let mut req = reqwest::Request::new(p.verb.method(), ep.url(&p.path_and_query));
    *req.headers_mut() = p.headers.as_ref().unwrap_or(&inner.request_headers).clone();
    if let Some(body) = &p.body {
        *req.body_mut() = Some(body.clone().into());
    }
    if let Some(auth) = &inner.authenticator {
        match auth.authorization().await {
            Ok(Some(value)) => {
                req.headers_mut().insert(http::header::AUTHORIZATION, value);
            }
            Ok(None) => {}
            Err(source) => return Err(Error::Auth { source }),
        }
    }
    let mut resp = inner
        .http
        .execute(req)
        .await
        .map_err(|e| transport_error(p.verb, full_url(&ep.origin, p), e))?;
    let status = resp.status();
    let headers = std::mem::take(resp.headers_mut());
    let streaming_ok = p.mode != Mode::Do && status.is_success();
    if streaming_ok {
        return Ok(Outcome {
            status,
            headers,
            payload: Payload::Streaming(resp),
            served_by: String::new(),
            warnings: Vec::new(),
        });
    }
    let body = resp
        .bytes()
        .await
        .map_err(|e| transport_error(p.verb, full_url(&ep.origin, p), e))?;
    Ok(Outcome {
        status,
        headers,
        payload: Payload::Full(body),
        served_by: String::new(),
        warnings: Vec::new(),
    })
}

/// Run the attempt loop until a final outcome: over the endpoint set when
/// failover is active, else against the one server.
async fn run(inner: &Inner, p: &Prepared) -> Result<Outcome, Error> {
    if inner.endpoints.active() {
        return run_failover(inner, p).await;
    }
    let mut outcome = run_single(inner, p).await?;
    // Only `open_at` reports who answered.
    if p.mode != Mode::Do {
        outcome.served_by.clone_from(&inner.origin);
    }
    Ok(outcome)
}

/// The attempt loop against the one configured server.
async fn run_single(inner: &Inner, p: &Prepared) -> Result<Outcome, Error> {
    let ep = &inner.server;
    let host = ep.host_key.as_str();
    // client-go throttles the first try before starting the timeout.
    throttle(inner, p, &ep.origin, "").await;
    let deadline = p.timeout.map(|t| Instant::now() + t);
    let timed_out = |verb: Verb| Error::Timeout {
        verb,
        url: full_url(&ep.origin, p),
        timeout: p.timeout.unwrap_or_default(),
    };

    let mut retries = 0u32;
    let mut retry_wait: Option<Duration> = None;
    let mut previous: Option<Error> = None;
    let mut auth_retried = false;
    loop {
        let backoff = inner
            .backoff
            .as_ref()
            .map_or(Duration::ZERO, |b| b.get(host));
        let wait = retry_wait.map_or(backoff, |ra| ra.max(backoff));
        if let Some(d) = deadline
            && Instant::now() + wait >= d
            && !wait.is_zero()
        {
            return Err(wrap_previous(timed_out(p.verb), previous));
        }
        inner.sleep(wait).await;
        if retry_wait.is_some() {
            throttle(inner, p, &ep.origin, "retry").await;
        }

        // Streaming attempts return at the headers, so the client timeout
        // never cuts a watch or log stream short.
        let mut limit = inner.timeout;
        if let Some(d) = deadline {
            let remaining = d.saturating_duration_since(Instant::now());
            limit = Some(limit.map_or(remaining, |l| l.min(remaining)));
        }
        // Only a metrics hook reads the attempt's duration.
        let started = inner.metrics.is_some().then(Instant::now);
        let result = match limit {
            Some(limit) => attempt_within(inner, p, ep, limit).await,
            None => attempt(inner, p, ep).await,
        };
        let code = result.as_ref().ok().map(|o| o.status.as_u16());
        if let (Some(m), Some(started)) = (&inner.metrics, started) {
            m.request_latency(p.verb, &p.url_template, started.elapsed());
            m.request_result(p.verb, host, code);
        }
        if let Some(b) = &inner.backoff {
            b.update(host, code.unwrap_or(0), std::time::Instant::now());
        }

        match result {
            Ok(mut outcome) => {
                let code = outcome.status.as_u16();
                if code == 401
                    && !auth_retried
                    && let Some(auth) = &inner.authenticator
                {
                    auth_retried = true;
                    auth.invalidate();
                    retry_wait = None;
                    continue;
                }
                if status_may_retry(code)
                    && retries < p.max_retries
                    && let Some(ra) = decode::retry_after(&outcome.headers, SystemTime::now())
                {
                    retries += 1;
                    if let Some(m) = &inner.metrics {
                        m.request_retry(p.verb, host, Some(code));
                    }
                    retry_wait = Some(ra);
                    continue;
                }
                outcome.warnings = warning::from_headers(&outcome.headers);
                warning::dispatch(inner.warning_handler.as_ref(), &outcome.warnings);
                return Ok(outcome);
            }
            Err(err @ (Error::Auth { .. } | Error::InvalidRequest { .. })) => {
                return Err(wrap_previous(err, previous));
            }
            Err(err) => {
                let retry = retries < p.max_retries
                    && err
                        .transport_kind()
                        .is_some_and(|k| transport_may_retry(p.mode, p.verb, k));
                if !retry {
                    return Err(wrap_previous(err, previous));
                }
                retries += 1;
                if let Some(m) = &inner.metrics {
                    m.request_retry(p.verb, host, None);
                }
                tracing::debug!(verb = %p.verb, url = full_url(&ep.origin, p), error = %err, "retrying after a transport error");
                retry_wait = Some(TRANSPORT_RETRY_WAIT);
                previous = Some(err);
            }
        }
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
    failover::refresh_if_stale(inner).await;
    let first = inner.endpoints.snapshot();
    let first_origin = first
        .first()
        .map_or_else(|| inner.origin.clone(), |e| e.origin.clone());
    throttle(inner, p, &first_origin, "").await;
    // A watch's or stream's `timeout` is how long it may run; its budget to
    // get the response headers is the client's (never longer than that).
    let total = match (p.mode, p.timeout) {
        (Mode::Do, Some(t)) => t,
        (_, Some(t)) => t.min(inner.budget),
        (_, None) => inner.budget,
    };
    let deadline = Instant::now() + total;

    let mut failures: Vec<EndpointFailure> = Vec::new();
    let mut retries = 0u32;
    let mut auth_retried = false;
    let mut first_round = true;
    loop {
        let list = inner.endpoints.snapshot();
        // The first round spends the whole budget (the few microseconds
        // since the deadline was set must not cost a node); later rounds
        // what is left of it.
        let remaining = if first_round {
            total
        } else {
            deadline.saturating_duration_since(Instant::now())
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
            let mut tries = 0u32;
            loop {
                let backoff = inner
                    .backoff
                    .as_ref()
                    .map_or(Duration::ZERO, |b| b.get(host));
                if !backoff.is_zero() {
                    if Instant::now() + backoff >= deadline {
                        return Err(all_failed(failures));
                    }
                    inner.sleep(backoff).await;
                }
                let remaining = deadline.saturating_duration_since(Instant::now());
                if remaining.is_zero() {
                    return Err(all_failed(failures));
                }
                let started = Instant::now();
                let result = attempt_within(inner, p, ep, per_node.min(remaining)).await;
                let code = result.as_ref().ok().map(|o| o.status.as_u16());
                if let Some(m) = &inner.metrics {
                    m.request_latency(p.verb, &p.url_template, started.elapsed());
                    m.request_result(p.verb, host, code);
                }
                if let Some(b) = &inner.backoff {
                    b.update(host, code.unwrap_or(0), std::time::Instant::now());
                }
                match result {
                    Ok(mut outcome) => {
                        let code = outcome.status.as_u16();
                        if code == 401
                            && !auth_retried
                            && let Some(auth) = &inner.authenticator
                        {
                            auth_retried = true;
                            auth.invalidate();
                            continue;
                        }
                        if status_may_retry(code)
                            && retries < p.max_retries
                            && let Some(ra) =
                                decode::retry_after(&outcome.headers, SystemTime::now())
                        {
                            if Instant::now() + ra >= deadline {
                                return Err(Error::Timeout {
                                    verb: p.verb,
                                    url: full_url(&ep.origin, p),
                                    timeout: total,
                                });
                            }
                            retries += 1;
                            if let Some(m) = &inner.metrics {
                                m.request_retry(p.verb, host, Some(code));
                            }
                            inner.sleep(ra).await;
                            throttle(inner, p, &ep.origin, "retry").await;
                            continue;
                        }
                        if index != 0 || !failures.is_empty() {
                            tracing::debug!(endpoint = %ep.origin, "API server answered after a failover");
                            inner.endpoints.prefer(&ep.origin);
                            inner.endpoints.mark_stale();
                        }
                        outcome.warnings = warning::from_headers(&outcome.headers);
                        warning::dispatch(inner.warning_handler.as_ref(), &outcome.warnings);
                        outcome.served_by.clone_from(&ep.origin);
                        return Ok(outcome);
                    }
                    Err(err) => {
                        let Some(kind) = err.transport_kind() else {
                            return Err(err);
                        };
                        tracing::debug!(verb = %p.verb, url = full_url(&ep.origin, p), error = %err, "API server failed; trying the next one");
                        if let Some(m) = &inner.metrics {
                            m.request_retry(p.verb, host, None);
                        }
                        failures.push(EndpointFailure {
                            endpoint: ep.origin.clone(),
                            kind,
                            error: err,
                        });
                        if tries < per_node_retries {
                            tries += 1;
                            continue;
                        }
                        break;
                    }
                }
            }
        }
        // Every node of this round failed: wait, then try again if a node
        // still gets its minimum time.
        let remaining = deadline.saturating_duration_since(Instant::now());
        let after_wait = remaining.saturating_sub(TRANSPORT_RETRY_WAIT);
        if calculate_timeouts(list.len(), after_wait).0 == 0 {
            return Err(all_failed(failures));
        }
        inner.sleep(TRANSPORT_RETRY_WAIT).await;
        throttle(inner, p, &first_origin, "retry").await;
    }
}

/// `send`: the final response with its whole body.
pub(crate) async fn send(inner: &Inner, p: Prepared) -> Result<Response, Error> {
    let outcome = run(inner, &p).await?;
    let body = match outcome.payload {
        Payload::Full(b) => b,
        // Not produced in `Do` mode; read it anyway rather than fail.
        Payload::Streaming(r) => r.bytes().await.map_err(body_error)?,
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
    let outcome = run(inner, p).await?;
    match outcome.payload {
        Payload::Streaming(resp) => Ok((
            resp.bytes_stream().map(|r| r.map_err(body_error)).boxed(),
            outcome.served_by,
        )),
        Payload::Full(body) => {
            let resp = Response::new(
                outcome.status,
                outcome.headers,
                body,
                outcome.warnings,
                p.verb,
            );
            let err = resp
                .api_error()
                .unwrap_or_else(|| decode::generic(resp.status.as_u16(), p.verb, String::new()));
            Err(err.into())
        }
    }
}
