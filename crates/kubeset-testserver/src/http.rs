//! HTTP routing: turns a request into a store operation, a watch, a
//! discovery document or an error `Status`.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited, combinators::UnsyncBoxBody};
use serde_json::Value;

use crate::auth;
use crate::discovery;
use crate::faults::{FaultState, Verdict};
use crate::inflight::{self, Guarded};
use crate::limits;
use crate::openapi;
use crate::resources::Resource;
use crate::selectors::{FieldSelector, LabelSelector};
use crate::status::ApiError;
use crate::store::Store;
use crate::subresource::{self, Desired, Sub};
use crate::validation;
use crate::verbs::{self, PatchKind};

/// Response body: whole or streamed.
pub(crate) type Body = UnsyncBoxBody<Bytes, io::Error>;

/// What every replica shares.
pub(crate) struct Shared {
    pub(crate) store: Arc<Store>,
    pub(crate) token: Option<String>,
    pub(crate) bookmark_interval: Duration,
    /// OpenAPI specs read at start, if a directory was given.
    pub(crate) openapi: Option<Arc<openapi::Specs>>,
    /// The simulated container runtime (exec, attach, port-forward), if on.
    pub(crate) runtime: Option<Arc<crate::stream::Runtime>>,
    /// Connection bounds and slots, shared with the admin endpoint.
    pub(crate) conns: Arc<crate::server::Connections>,
    /// What the watches share (initial states, the open count).
    pub(crate) watches: Arc<crate::fanout::Watches>,
}

pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

fn json_response(code: u16, v: &Value) -> Response<Body> {
    let body = serde_json::to_vec(v).unwrap_or_default();
    let mut r = Response::new(full(body));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn error_response(e: &ApiError) -> Response<Body> {
    if e.reason == crate::status::PAGE_NOT_FOUND {
        return text_response(404, "404 page not found\n");
    }
    json_response(e.code, &e.to_status())
}

pub(crate) fn text_response(code: u16, text: &'static str) -> Response<Body> {
    let mut r = Response::new(full(text));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// Decodes a query component (`+` is a space).
pub(crate) fn percent_decode(s: &str) -> String {
    decode(s, true)
}

/// Decodes a URL path as Go's `url.URL.Path` is, before it is split at `/`
/// (so `%2e%2e` is the name `..`, and `a%2Fb` two segments).
fn percent_decode_path(s: &str) -> String {
    decode(s, false)
}

fn decode(s: &str, plus_is_space: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' if plus_is_space => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Decoded query parameters.
pub(crate) struct Query(Vec<(String, String)>);

impl Query {
    pub(crate) fn parse(q: Option<&str>) -> Self {
        Self(
            q.unwrap_or("")
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|p| match p.split_once('=') {
                    Some((k, v)) => (percent_decode(k), percent_decode(v)),
                    None => (percent_decode(p), String::new()),
                })
                .collect(),
        )
    }

    pub(crate) fn get(&self, k: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `k`, in order (`dryRun=All&dryRun=All`).
    pub(crate) fn all<'a>(&'a self, k: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn flag(&self, k: &str) -> bool {
        matches!(self.get(k), Some("true" | "1" | ""))
    }
}

/// A request addressed at a resource.
struct Target {
    res: Arc<Resource>,
    namespace: Option<String>,
    name: Option<String>,
    sub: Option<String>,
}

fn route_resource(store: &Store, segs: &[&str]) -> Result<Target, ApiError> {
    // segs: group-version stripped, e.g. ["namespaces","ns","pods","x","status"].
    let (group, version, rest) = match segs {
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Err(ApiError::path_not_found()),
    };
    if let ["namespaces", ns, plural, tail @ ..] = rest
        && let Some(res) = store
            .lookup(group, version, plural)
            .filter(|r| r.namespaced)
    {
        return Ok(Target {
            res,
            namespace: Some((*ns).to_owned()),
            name: tail.first().map(|s| (*s).to_owned()),
            sub: (tail.len() > 1).then(|| tail[1..].join("/")),
        });
    }
    let [plural, tail @ ..] = rest else {
        return Err(ApiError::path_not_found());
    };
    let res = store.lookup(group, version, plural).ok_or_else(|| {
        // A group the server does not have is not routed at all.
        if group.is_empty() || store.resources().iter().any(|r| r.group == group) {
            ApiError::path_not_found()
        } else {
            ApiError::page_not_found()
        }
    })?;
    Ok(Target {
        res,
        namespace: None,
        name: tail.first().map(|s| (*s).to_owned()),
        sub: (tail.len() > 1).then(|| tail[1..].join("/")),
    })
}

fn malformed() -> Response<Body> {
    let mut r = Response::new(full(
        &b"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"sta"[..],
    ));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// Entry point for one request on one replica.
pub(crate) async fn handle(
    req: Request<hyper::body::Incoming>,
    shared: Arc<Shared>,
    faults: Arc<FaultState>,
    local: SocketAddr,
) -> Result<Response<Body>, Infallible> {
    match faults.before_request().await {
        Verdict::Serve => {}
        Verdict::Malformed => return Ok(malformed()),
        Verdict::Fail {
            status,
            retry_after,
        } => {
            let mut r = error_response(&ApiError::injected(status));
            if let Some(s) = retry_after
                && let Ok(v) = HeaderValue::from_str(&s.to_string())
            {
                r.headers_mut().insert(header::RETRY_AFTER, v);
            }
            return Ok(r);
        }
    }
    let path = req.uri().path().to_owned();
    let public = matches!(
        path.as_str(),
        "/healthz" | "/livez" | "/readyz" | "/version"
    ) || path.starts_with("/healthz/")
        || path.starts_with("/livez/")
        || path.starts_with("/readyz/");
    if let (Some(token), false) = (&shared.token, public)
        && !auth::bearer_ok(req.headers(), token)
    {
        return Ok(error_response(&ApiError::unauthorized()));
    }
    // kube-apiserver's max-in-flight filter, after authentication.
    let kind = inflight::kind_of(req.method(), req.uri().path(), req.uri().query());
    let slot = match shared.conns.in_flight.admit(kind) {
        Ok(slot) => slot,
        Err(refused) => return Ok(refused.response()),
    };
    let req = match crate::stream::intercept(req, &shared, &faults).await {
        Ok(upgraded) => return Ok(upgraded),
        Err(req) => req,
    };
    let negotiation = crate::protobuf::Negotiation::of(&req);
    let http1 = req.version() < http::Version::HTTP_2;
    let mut resp = match route(req, &shared, &faults, local).await {
        Ok(r) => r,
        Err(e) => error_response(&e),
    };
    // The one 504 this server answers is a body that did not arrive in
    // time: its rest is never read, so the connection cannot carry
    // another request (hyper closes it; the header says so).
    if http1 && resp.status() == StatusCode::GATEWAY_TIMEOUT {
        resp.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    let resp = crate::protobuf::encode_response(&negotiation, resp).await;
    // The slot is held until the answer is sent.
    Ok(match slot {
        Some(slot) => Guarded::wrap(resp, slot),
        None => resp,
    })
}

/// kube-apiserver's answer to a request that did not complete within
/// `--request-timeout` (its timeout filter's `NewTimeoutError`).
fn request_timeout() -> ApiError {
    ApiError {
        code: 504,
        reason: "Timeout",
        message:
            "Timeout: request did not complete within requested timeout - context deadline exceeded"
                .into(),
        details: Some(serde_json::json!({})),
    }
}

/// Reads a request body, at most [`limits::MAX_REQUEST_BODY`] bytes and
/// for at most `timeout` (then `504 Timeout`; the rest is never read and
/// the connection is closed, see [`handle`]).
async fn read_body(
    req: Request<hyper::body::Incoming>,
    timeout: Duration,
) -> Result<(http::request::Parts, Bytes), ApiError> {
    let (parts, body) = req.into_parts();
    // A declared length over the limit is refused unread; otherwise the
    // body is read up to the limit and no further (never unbounded).
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|h| h.to_str().ok())
        .and_then(|s| s.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits::MAX_REQUEST_BODY as u64) {
        return Err(limits::body_too_large());
    }
    let collected = tokio::time::timeout(
        timeout,
        Limited::new(body, limits::MAX_REQUEST_BODY).collect(),
    )
    .await
    .map_err(|_| request_timeout())?;
    let bytes = collected
        .map_err(|e| {
            if e.is::<http_body_util::LengthLimitError>() {
                limits::body_too_large()
            } else {
                ApiError::bad_request(format!("reading the request body: {e}"))
            }
        })?
        .to_bytes();
    Ok((parts, bytes))
}

/// Refuses request bodies this server cannot decode (CBOR) before they
/// are read; protobuf bodies are turned into JSON by
/// [`crate::protobuf::decode_body`] first.
pub(crate) fn check_content_type(content_type: &str) -> Result<(), ApiError> {
    if content_type.contains("cbor") {
        return Err(ApiError::unsupported_media_type(content_type));
    }
    Ok(())
}

/// Request-body decoding: the one place a request body becomes an object
/// (JSON, or YAML when the content type says so).
pub(crate) fn decode_object(bytes: &[u8], content_type: &str) -> Result<Value, ApiError> {
    check_content_type(content_type)?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    match serde_json::from_slice(bytes) {
        Ok(v) => Ok(v),
        Err(json_err) => {
            if content_type.contains("yaml") {
                serde_norway::from_slice::<Value>(bytes)
                    .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))
            } else {
                Err(ApiError::bad_request(format!(
                    "Object 'Kind' is missing in '{}': {json_err}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
                )))
            }
        }
    }
}

/// Response encoding: the one place an object, list, Table or Status
/// answering a resource request becomes a response (`accept`: the
/// request's Accept header; this writes JSON, and
/// [`crate::protobuf::encode_response`] re-encodes it when protobuf was
/// negotiated).
pub(crate) fn respond(code: u16, v: &Value, accept: &str) -> Response<Body> {
    let _ = accept;
    json_response(code, v)
}

async fn route(
    req: Request<hyper::body::Incoming>,
    shared: &Arc<Shared>,
    faults: &Arc<FaultState>,
    local: SocketAddr,
) -> Result<Response<Body>, ApiError> {
    let path = percent_decode_path(req.uri().path());
    let path = path.trim_end_matches('/').to_owned();
    let path = if path.is_empty() {
        "/".to_owned()
    } else {
        path
    };
    let query = Query::parse(req.uri().query());
    let store = &shared.store;
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let get = req.method() == Method::GET;
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("")
        .to_owned();
    if get && matches!(segs.as_slice(), ["api"] | ["apis"]) && discovery::wants_aggregated(&accept)
    {
        let doc = discovery::aggregated(&store.resources(), segs == ["api"]);
        let mut r = json_response(200, &doc);
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(discovery::AGGREGATED),
        );
        return Ok(r);
    }
    match segs.as_slice() {
        ["healthz" | "livez" | "readyz", ..] if get => return Ok(text_response(200, "ok")),
        ["version"] if get => return Ok(json_response(200, &discovery::version())),
        ["api"] if get => {
            return Ok(json_response(
                200,
                &discovery::core_versions(&local.to_string()),
            ));
        }
        ["apis"] if get => {
            return Ok(json_response(
                200,
                &discovery::group_list(&store.resources()),
            ));
        }
        ["api", v] if get => {
            return discovery::resource_list(&store.resources(), "", v)
                .map(|d| json_response(200, &d))
                .ok_or_else(ApiError::path_not_found);
        }
        ["apis", g] if get => {
            return discovery::group(&store.resources(), g)
                .map(|d| json_response(200, &d))
                .ok_or_else(ApiError::path_not_found);
        }
        ["apis", g, v] if get => {
            return discovery::resource_list(&store.resources(), g, v)
                .map(|d| json_response(200, &d))
                .ok_or_else(ApiError::path_not_found);
        }
        ["openapi", "v3"] if get => {
            let index = openapi::v3_index(shared.openapi.as_deref(), &store.resources());
            return Ok(json_response(200, &index));
        }
        ["openapi", "v3", rest @ ..] if get => {
            let doc = openapi::v3_doc(
                shared.openapi.as_deref(),
                &store.resources(),
                &rest.join("/"),
            );
            return doc_response(doc, &req, &query);
        }
        ["openapi", "v2"] if get => {
            let doc = openapi::v2(shared.openapi.as_deref(), &store.resources());
            return doc_response(doc, &req, &query);
        }
        ["api" | "apis", ..] => {}
        _ => return Err(ApiError::page_not_found()),
    }
    // Legacy watch paths: /api/v1/watch/... and /apis/<g>/<v>/watch/...
    let mut segs = segs;
    let mut query = query;
    let watch_at = if segs.first() == Some(&"api") { 2 } else { 3 };
    if segs.get(watch_at) == Some(&"watch") {
        segs.remove(watch_at);
        query.0.push(("watch".to_owned(), "true".to_owned()));
    }
    let target = route_resource(store, &segs)?;
    // An unknown subresource, which is also what a resource the group does
    // not have under a namespace's path looks like (`namespaces/x/frobs`,
    // `namespaces/x/nodes`), is 404 as kube-apiserver answers, not 405.
    if let Some(sub) = &target.sub
        && !target.res.subresources.iter().any(|s| s == sub)
    {
        return Err(ApiError::path_not_found());
    }
    if let Some(n) = &target.name {
        validation::check_url_name(n)?;
    }
    let warning = target.res.deprecation.clone();
    let mut resp = dispatch(req, shared, faults, target, &query, &accept).await?;
    if let Some(w) = warning {
        let escaped = w.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(v) = HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
            // First, as kube-apiserver records it before the handler runs;
            // the handler's own warnings (admission, typed decoding) after.
            let headers = resp.headers_mut();
            let rest: Vec<HeaderValue> = headers.get_all(header::WARNING).iter().cloned().collect();
            headers.insert(header::WARNING, v);
            for r in rest {
                headers.append(header::WARNING, r);
            }
        }
    }
    Ok(resp)
}

/// An OpenAPI document with its ETag: `304` for a matching
/// `If-None-Match`; immutable caching when asked for by `?hash=`.
fn doc_response(
    doc: Option<openapi::Doc>,
    req: &Request<hyper::body::Incoming>,
    query: &Query,
) -> Result<Response<Body>, ApiError> {
    let doc = doc.ok_or_else(ApiError::path_not_found)?;
    let etag = format!("\"{}\"", doc.etag);
    let unchanged = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|h| h.split(',').any(|t| t.trim() == etag));
    let mut r = if unchanged {
        let mut r = Response::new(full(Bytes::new()));
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        let mut r = Response::new(full(doc.bytes));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        r
    };
    let cache = if query.get("hash").is_some() {
        "public, immutable"
    } else {
        "no-cache, private"
    };
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        r.headers_mut().insert(header::ETAG, v);
    }
    Ok(r)
}

/// The head of a resource request turned into a [`verbs::Call`].
fn call_of<'a>(
    req: &Request<hyper::body::Incoming>,
    shared: &'a Arc<Shared>,
    faults: &'a Arc<FaultState>,
    t: &Target,
    query: &'a Query,
    accept: &'a str,
) -> Result<verbs::Call<'a>, ApiError> {
    let header = |name: header::HeaderName| {
        req.headers()
            .get(name)
            .and_then(|h| h.to_str().ok())
            .map(str::to_owned)
    };
    let res = t.res.clone();
    let label = LabelSelector::parse(query.get("labelSelector").unwrap_or(""))
        .map_err(|e| ApiError::bad_request(format!("unable to parse requirement: {}", e.0)))?;
    let fields = crate::fields::for_resource(&res);
    let field = FieldSelector::parse_for(fields, query.get("fieldSelector").unwrap_or(""))
        .map_err(|e| ApiError::bad_request(e.0))?;
    if res.namespaced && t.namespace.is_none() && t.name.is_some() {
        return Err(ApiError::path_not_found());
    }
    Ok(verbs::Call {
        shared,
        faults,
        status_separate: res.has_status(),
        res,
        namespace: t.namespace.clone(),
        ns: t.namespace.clone().unwrap_or_default(),
        query,
        accept,
        content_type: header(header::CONTENT_TYPE).unwrap_or_else(|| "application/json".into()),
        user_agent: header(header::USER_AGENT),
        dry_run: query.get("dryRun") == Some("All"),
        label,
        field,
    })
}

/// Picks the handler of a resource request by verb, name and subresource.
async fn dispatch(
    req: Request<hyper::body::Incoming>,
    shared: &Arc<Shared>,
    faults: &Arc<FaultState>,
    t: Target,
    query: &Query,
    accept: &str,
) -> Result<Response<Body>, ApiError> {
    let mut call = call_of(&req, shared, faults, &t, query, accept)?;
    let method = req.method().clone();
    let is_pods = call.res.group.is_empty() && call.res.plural == "pods";
    let (name, sub) = (t.name.as_deref(), t.sub.as_deref());
    match (&method, name, sub) {
        (&Method::GET, _, None) if query.flag("watch") => {
            let conn = req.extensions().get::<crate::server::ConnHandle>().cloned();
            return verbs::watch(call, name, conn);
        }
        (&Method::GET, None, None) => return verbs::list(&call),
        (&Method::GET, Some(n), None) => return verbs::get(&call, n),
        (&Method::GET, Some(n), Some("status")) if call.status_separate => {
            return Ok(call.reply(200, &call.store().get(&call.res, &call.ns, n)?));
        }
        (&Method::GET, Some(n), Some("log")) if is_pods => return verbs::log(&call, n),
        _ => {}
    }
    check_content_type(&call.content_type)?;
    let (_, body) = read_body(req, shared.conns.bounds.body).await?;
    let (content_type, body) =
        crate::protobuf::decode_body(&call.res, std::mem::take(&mut call.content_type), body)?;
    call.content_type = content_type;
    if let (Some(n), Some(which)) = (name, sub.and_then(|s| Sub::of(&call.res, s))) {
        return serve_subresource(&call, &method, n, which, &body);
    }
    match (&method, name, sub) {
        (&Method::POST, None, None) => verbs::create(&call, &body),
        (&Method::POST, Some(n), Some("eviction")) if is_pods => verbs::evict(&call, n),
        (&Method::PUT | &Method::PATCH, Some(_), Some("status")) if !call.status_separate => {
            Err(ApiError::path_not_found())
        }
        (&Method::PUT, Some(n), None | Some("status")) => {
            verbs::update(&call, n, sub.is_some(), &body)
        }
        (&Method::PATCH, Some(n), None | Some("status")) => {
            verbs::patch(&call, n, sub.is_some(), &body)
        }
        (&Method::DELETE, Some(n), None) => verbs::delete(&call, n, &body),
        (&Method::DELETE, None, None) => verbs::delete_collection(&call, &body),
        _ => Err(ApiError::method_not_allowed()),
    }
}

/// A request to one of [`subresource`]'s subresources: PATCH applies to
/// the subresource's view (apply only to `scale`).
fn serve_subresource(
    call: &verbs::Call<'_>,
    method: &Method,
    name: &str,
    which: Sub,
    body: &[u8],
) -> Result<Response<Body>, ApiError> {
    let write = call.write_ctx("unknown");
    let sub_call = subresource::Call {
        store: call.store(),
        res: &call.res,
        ns: &call.ns,
        name,
        sub: which,
        method,
        ctx: &write,
    };
    let (code, out) = match *method {
        Method::GET => subresource::serve(&sub_call, None)?,
        Method::PATCH => {
            let (kind, p) = if which == Sub::Scale {
                verbs::patch_body(call, body)?
            } else {
                let kind = verbs::patch_kind(&call.content_type)?;
                if kind == PatchKind::Apply {
                    return Err(ApiError::unsupported_media_type(&call.content_type));
                }
                (kind, decode_object(body, &call.content_type)?)
            };
            if kind == PatchKind::Apply {
                let force = call.query.flag("force");
                subresource::serve(&sub_call, Some(Desired::Apply { config: &p, force }))?
            } else {
                let patch = |obj: &mut Value| verbs::apply_patch(kind, obj, &p);
                subresource::serve(&sub_call, Some(Desired::Patch(&patch)))?
            }
        }
        _ => subresource::serve(
            &sub_call,
            Some(Desired::Object(decode_object(body, &call.content_type)?)),
        )?,
    };
    Ok(call.reply(code, &out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_decoding() {
        let q = Query::parse(Some("labelSelector=app%3Dweb%2Ctier+in+%28a%29&watch=1&x"));
        assert_eq!(q.get("labelSelector"), Some("app=web,tier in (a)"));
        assert!(q.flag("watch"));
        assert!(q.flag("x"));
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }
}
