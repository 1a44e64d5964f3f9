//! The admin HTTP endpoint: fault injection for black-box use.
//!
//! | request | effect |
//! |---|---|
//! | `GET /replicas` | every replica: index, url, mode, latency, pending faults |
//! | `POST /replicas/{i}/down` | close the listener, drop connections |
//! | `POST /replicas/{i}/up` | reopen the port, clear hang |
//! | `POST /replicas/{i}/hang` | accept and never answer |
//! | `POST /replicas/{i}/latency?ms=N` | delay every request |
//! | `POST /replicas/{i}/fail?count=K&code=C&retryAfter=S` | answer C for the next K requests |
//! | `POST /replicas/{i}/cut-watches` | cut open watch streams mid-line |
//! | `POST /replicas/{i}/malformed?count=K` | truncated bodies for the next K requests |
//! | `POST /replicas/{i}/reset` | up, no latency, no pending faults |
//! | `GET /kubeconfig` | the kubeconfig YAML |
//!
//! Served over TLS with the API's certificate when the API is (it hands
//! out the token), plain HTTP otherwise.
//!
//! With a token ([`crate::TestServerBuilder::token`]) every request but
//! `GET /healthz` needs the same `Authorization: Bearer` as the API, and
//! gets the API's `401 Unauthorized` Status without it: the endpoint hands
//! out the token and can take replicas down.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use http::{Method, Request, Response, StatusCode, header};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::Faults;
use crate::auth;
use crate::conns::Connections;
use crate::server::serve_bounded;
use crate::status::ApiError;
use crate::wire::{Body, Query, full};

/// What the admin endpoint controls.
pub(crate) struct AdminState {
    pub(crate) faults: Vec<Faults>,
    pub(crate) kubeconfig: String,
    /// The API's bearer token; required here too when set.
    pub(crate) token: Option<String>,
}

fn reply(code: StatusCode, v: &Value) -> Response<Body> {
    let mut r = Response::new(full(serde_json::to_vec(v).unwrap_or_default()));
    *r.status_mut() = code;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

fn describe(f: &Faults) -> Value {
    let fail = f.state().pending_fail();
    json!({
        "index": f.index(),
        "url": f.url(),
        "mode": f.mode().as_str(),
        "latencyMs": u64::try_from(f.state().latency().as_millis()).unwrap_or(u64::MAX),
        "pendingFailures": fail.map(|x| x.remaining).unwrap_or(0),
        "failStatus": fail.map(|x| x.status),
        "pendingMalformed": f.state().pending_malformed(),
        "served": f.state().served(),
    })
}

fn bad(msg: &str) -> Response<Body> {
    reply(StatusCode::BAD_REQUEST, &json!({"error": msg}))
}

async fn handle(
    req: Request<hyper::body::Incoming>,
    st: Arc<AdminState>,
) -> Result<Response<Body>, Infallible> {
    let path = req.uri().path().trim_end_matches('/').to_owned();
    let query = Query::parse(req.uri().query());
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let method = req.method().clone();
    let public = method == Method::GET && segs.as_slice() == ["healthz"];
    if let (Some(token), false) = (&st.token, public)
        && !auth::bearer_ok(req.headers(), token)
    {
        let e = ApiError::unauthorized();
        return Ok(reply(StatusCode::UNAUTHORIZED, &e.to_status()));
    }
    Ok(match (method, segs.as_slice()) {
        (Method::GET, ["replicas"]) => reply(
            StatusCode::OK,
            &Value::Array(st.faults.iter().map(describe).collect()),
        ),
        (Method::GET, ["kubeconfig"]) => {
            let mut r = Response::new(full(st.kubeconfig.clone()));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/yaml"),
            );
            r
        }
        (Method::GET, ["healthz"]) => reply(StatusCode::OK, &json!({"ok": true})),
        (Method::POST, ["replicas", i, action]) => {
            let Some(f) = i.parse::<usize>().ok().and_then(|i| st.faults.get(i)) else {
                return Ok(reply(
                    StatusCode::NOT_FOUND,
                    &json!({"error": format!("no replica {i}")}),
                ));
            };
            let num = |k: &str| query.get(k).and_then(|v| v.parse::<u64>().ok());
            match *action {
                "down" => f.down().await,
                "up" => {
                    if let Err(e) = f.up().await {
                        return Ok(reply(
                            StatusCode::INTERNAL_SERVER_ERROR,
                            &json!({"error": e.to_string()}),
                        ));
                    }
                }
                "hang" => f.hang(),
                "latency" => match num("ms") {
                    Some(ms) => f.latency(Duration::from_millis(ms)),
                    None => return Ok(bad("latency needs ms=<milliseconds>")),
                },
                "fail" => {
                    let count = num("count").unwrap_or(1);
                    let code = num("code").unwrap_or(503);
                    let Ok(code) = u16::try_from(code) else {
                        return Ok(bad("code out of range"));
                    };
                    if !(400..=599).contains(&code) {
                        return Ok(bad("code must be 400..=599"));
                    }
                    let ra = num("retryAfter").map(Duration::from_secs);
                    f.fail_next(u32::try_from(count).unwrap_or(u32::MAX), code, ra);
                }
                "cut-watches" => f.cut_watches(),
                "malformed" => {
                    f.malformed_next(u32::try_from(num("count").unwrap_or(1)).unwrap_or(u32::MAX))
                }
                "reset" => {
                    if let Err(e) = f.reset().await {
                        return Ok(reply(
                            StatusCode::INTERNAL_SERVER_ERROR,
                            &json!({"error": e.to_string()}),
                        ));
                    }
                }
                other => {
                    return Ok(reply(
                        StatusCode::NOT_FOUND,
                        &json!({"error": format!("unknown action {other}")}),
                    ));
                }
            }
            reply(StatusCode::OK, &describe(f))
        }
        _ => reply(StatusCode::NOT_FOUND, &json!({"error": "not found"})),
    })
}

/// Serves the admin endpoint until `cancel`: over TLS with the API's
/// certificate when the API is (`acceptor`), each connection under the
/// server's bounds and holding one of its connection slots.
pub(crate) async fn serve(
    listener: TcpListener,
    st: Arc<AdminState>,
    acceptor: Option<TlsAcceptor>,
    conns: Arc<Connections>,
    cancel: CancellationToken,
) {
    loop {
        tokio::select! {
            () = cancel.cancelled() => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                let Some(slot) = conns.admit() else {
                    continue;
                };
                let st = st.clone();
                let acceptor = acceptor.clone();
                let bounds = conns.bounds;
                let conn_cancel = cancel.clone();
                tokio::spawn(async move {
                    let handler = move |req| handle(req, st.clone());
                    tokio::select! {
                        () = conn_cancel.cancelled() => {}
                        () = serve_bounded(stream, acceptor.as_ref(), bounds, handler) => {}
                    }
                    drop(slot);
                });
            }
        }
    }
}
