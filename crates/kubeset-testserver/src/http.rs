//! HTTP routing: turns a request into a store operation, a watch, a
//! discovery document or an error `Status`.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited, StreamBody, combinators::UnsyncBoxBody};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::apply::{self, Scope, Writer};
use crate::auth;
use crate::discovery;
use crate::faults::{FaultState, Verdict};
use crate::limits;
use crate::openapi;
use crate::patch::{self, PatchError};
use crate::resources::Resource;
use crate::selectors::{FieldSelector, LabelSelector, selector_to_string};
use crate::status::{self, ApiError};
use crate::store::{Store, WriteCtx};
use crate::subresource::{self, Desired, Sub};
use crate::table;
use crate::util;
use crate::validation;
use crate::watch::{self, WatchRequest};

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
    json_response(e.code, &e.to_status())
}

fn text_response(code: u16, text: &'static str) -> Response<Body> {
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

    fn flag(&self, k: &str) -> bool {
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
    let res = store
        .lookup(group, version, plural)
        .ok_or_else(ApiError::path_not_found)?;
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
    let req = match crate::stream::intercept(req, &shared, &faults).await {
        Ok(upgraded) => return Ok(upgraded),
        Err(req) => req,
    };
    Ok(match route(req, &shared, &faults, local).await {
        Ok(r) => r,
        Err(e) => error_response(&e),
    })
}

async fn read_body(
    req: Request<hyper::body::Incoming>,
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
    let bytes = Limited::new(body, limits::MAX_REQUEST_BODY)
        .collect()
        .await
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

pub(crate) fn parse_object(bytes: &[u8], content_type: &str) -> Result<Value, ApiError> {
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
        _ => return Err(ApiError::path_not_found()),
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
    if let Some(n) = &target.name {
        validation::check_url_name(n)?;
    }
    let warning = target.res.deprecation.clone();
    let mut resp = dispatch(req, shared, faults, target, &query, &accept).await?;
    if let Some(w) = warning {
        let escaped = w.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(v) = HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
            resp.headers_mut().insert(header::WARNING, v);
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

fn field_manager(query: &Query, parts_ua: Option<&str>, default: &str) -> String {
    if let Some(m) = query.get("fieldManager").filter(|m| !m.is_empty()) {
        return m.to_owned();
    }
    parts_ua
        .and_then(|ua| ua.split('/').next())
        .filter(|s| !s.is_empty())
        .map(|s| s.chars().take(128).collect())
        .unwrap_or_else(|| default.to_owned())
}

fn list_object(
    res: &Resource,
    items: Vec<Value>,
    rv: u64,
    cont: Option<String>,
    remaining: Option<usize>,
) -> Value {
    let items: Vec<Value> = items
        .into_iter()
        .map(|mut v| {
            if !res.custom
                && let Value::Object(m) = &mut v
            {
                m.remove("apiVersion");
                m.remove("kind");
            }
            v
        })
        .collect();
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if let Some(c) = cont {
        meta["continue"] = json!(c);
    }
    if let Some(n) = remaining {
        meta["remainingItemCount"] = json!(n);
    }
    json!({"kind": format!("{}List", res.kind), "apiVersion": res.api_version(), "metadata": meta, "items": items})
}

fn scale_of(res: &Resource, obj: &Value) -> Result<Value, ApiError> {
    let paths = res.scale.as_ref().ok_or_else(ApiError::path_not_found)?;
    let spec = apply::get_path(obj, &paths.spec_replicas)
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let status = apply::get_path(obj, &paths.status_replicas)
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let selector = paths
        .label_selector
        .as_ref()
        .and_then(|p| apply::get_path(obj, p))
        .map(|s| match s {
            Value::String(s) => s.clone(),
            other => selector_to_string(other),
        })
        .unwrap_or_default();
    let m = obj.get("metadata").cloned().unwrap_or_else(|| json!({}));
    let mut status_v = json!({"replicas": status});
    if !selector.is_empty() {
        status_v["selector"] = json!(selector);
    }
    Ok(json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": m.get("name"),
            "namespace": m.get("namespace"),
            "uid": m.get("uid"),
            "resourceVersion": m.get("resourceVersion"),
            "creationTimestamp": m.get("creationTimestamp"),
        },
        "spec": {"replicas": spec},
        "status": status_v,
    }))
}

fn set_replicas(res: &Resource, obj: &mut Value, replicas: i64) {
    let Some(paths) = &res.scale else { return };
    let mut cur = obj;
    for (i, k) in paths.spec_replicas.iter().enumerate() {
        if !cur.is_object() {
            *cur = json!({});
        }
        let Some(m) = cur.as_object_mut() else { return };
        if i + 1 == paths.spec_replicas.len() {
            m.insert(k.clone(), json!(replicas));
            return;
        }
        cur = m.entry(k.clone()).or_insert_with(|| json!({}));
    }
}

fn patch_err(e: PatchError) -> ApiError {
    match e {
        PatchError::BadRequest(m) => ApiError::bad_request(m),
        PatchError::Invalid(m) => ApiError::unprocessable(m),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PatchKind {
    Json,
    Merge,
    Strategic,
    Apply,
}

fn patch_kind(ct: &str) -> Result<PatchKind, ApiError> {
    let base = ct.split(';').next().unwrap_or("").trim();
    Ok(match base {
        "application/json-patch+json" => PatchKind::Json,
        "application/merge-patch+json" => PatchKind::Merge,
        "application/strategic-merge-patch+json" => PatchKind::Strategic,
        "application/apply-patch+yaml" | "application/apply-patch+json" => PatchKind::Apply,
        other => return Err(ApiError::unsupported_media_type(other)),
    })
}

fn apply_patch(kind: PatchKind, target: &mut Value, p: &Value) -> Result<(), ApiError> {
    match kind {
        PatchKind::Json => {
            limits::check_json_patch(p)?;
            patch::json_patch(target, p).map_err(patch_err)
        }
        PatchKind::Merge => {
            patch::merge_patch(target, p);
            Ok(())
        }
        PatchKind::Strategic => patch::strategic_merge(target, p).map_err(patch_err),
        PatchKind::Apply => Err(ApiError::bad_request(
            "apply is not a patch of an existing value",
        )),
    }
}

fn rv_of(v: &Value) -> &str {
    v.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
}

async fn dispatch(
    req: Request<hyper::body::Incoming>,
    shared: &Arc<Shared>,
    faults: &Arc<FaultState>,
    t: Target,
    query: &Query,
    accept: &str,
) -> Result<Response<Body>, ApiError> {
    let store = &shared.store;
    let res = t.res.clone();
    let method = req.method().clone();
    let ua = req
        .headers()
        .get(header::USER_AGENT)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned);
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("application/json")
        .to_owned();
    let dry_run = query.get("dryRun") == Some("All");
    let label = LabelSelector::parse(query.get("labelSelector").unwrap_or(""))
        .map_err(|e| ApiError::bad_request(format!("unable to parse requirement: {}", e.0)))?;
    let fields = crate::fields::field_set(&res.group, &res.plural);
    let field = FieldSelector::parse_for(fields, query.get("fieldSelector").unwrap_or(""))
        .map_err(|e| ApiError::bad_request(e.0))?;
    let ns = t.namespace.clone().unwrap_or_default();
    if res.namespaced && t.namespace.is_none() && t.name.is_some() {
        return Err(ApiError::path_not_found());
    }
    let wants_table = table::wants_table(accept);
    let include = query.get("includeObject").unwrap_or("Metadata").to_owned();
    let status_separate = res.has_status();

    let sub = t.sub.as_deref();
    let name = t.name.clone();
    match (&method, name.as_deref(), sub) {
        (&Method::GET, None, None) | (&Method::GET, Some(_), None) if query.flag("watch") => {
            let field = match &name {
                Some(n) => field.and(FieldSelector::with_name(n)),
                None => field,
            };
            let rv = match query.get("resourceVersion").filter(|s| !s.is_empty()) {
                Some(s) => Some(s.parse::<u64>().map_err(|_| {
                    ApiError::bad_request(format!("invalid resource version: {s}"))
                })?),
                None => None,
            };
            let timeout = query
                .get("timeoutSeconds")
                .and_then(|s| s.parse::<u64>().ok())
                .map(Duration::from_secs);
            let wreq = WatchRequest {
                res,
                namespace: t.namespace,
                label,
                field,
                resource_version: rv,
                send_initial_events: query.get("sendInitialEvents") == Some("true"),
                bookmarks: query.flag("allowWatchBookmarks"),
                timeout,
                table: wants_table,
                bookmark_interval: shared.bookmark_interval,
            };
            let (tx, rx) = mpsc::channel::<Result<Bytes, io::Error>>(64);
            tokio::spawn(watch::run(store.clone(), faults.clone(), wreq, tx));
            let stream = futures::stream::unfold(rx, |mut rx| async move {
                rx.recv()
                    .await
                    .map(|item| (item.map(hyper::body::Frame::data), rx))
            });
            let mut r = Response::new(StreamBody::new(stream.boxed()).boxed_unsync());
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            return Ok(r);
        }
        (&Method::GET, None, None) => {
            let limit = query.get("limit").and_then(|s| s.parse::<usize>().ok());
            let page = store.list_page(
                &res,
                t.namespace.as_deref(),
                &label,
                &field,
                limit,
                query.get("continue").filter(|c| !c.is_empty()),
            )?;
            if wants_table {
                return Ok(json_response(
                    200,
                    &table::table(
                        &res,
                        &page.items,
                        &page.rv.to_string(),
                        page.continue_token.as_deref(),
                        &include,
                    ),
                ));
            }
            return Ok(json_response(
                200,
                &list_object(
                    &res,
                    page.items,
                    page.rv,
                    page.continue_token,
                    page.remaining,
                ),
            ));
        }
        (&Method::GET, Some(n), None) => {
            let obj = store.get(&res, &ns, n)?;
            if wants_table {
                return Ok(json_response(
                    200,
                    &table::table(
                        &res,
                        std::slice::from_ref(&obj),
                        rv_of(&obj),
                        None,
                        &include,
                    ),
                ));
            }
            return Ok(json_response(200, &obj));
        }
        (&Method::GET, Some(n), Some("status")) if status_separate => {
            return Ok(json_response(200, &store.get(&res, &ns, n)?));
        }
        (&Method::GET, Some(n), Some("scale")) => {
            return Ok(json_response(
                200,
                &scale_of(&res, &store.get(&res, &ns, n)?)?,
            ));
        }
        (&Method::GET, Some(n), Some("log")) if res.group.is_empty() && res.plural == "pods" => {
            store.get(&res, &ns, n)?;
            return Ok(text_response(200, ""));
        }
        _ => {}
    }
    if content_type.contains("protobuf") || content_type.contains("cbor") {
        return Err(ApiError::unsupported_media_type(&content_type));
    }
    let (parts, body) = read_body(req).await?;
    let ua = ua.or_else(|| {
        parts
            .headers
            .get(header::USER_AGENT)
            .and_then(|h| h.to_str().ok())
            .map(str::to_owned)
    });
    let ctx = |default: &str| WriteCtx {
        manager: field_manager(query, ua.as_deref(), default),
        dry_run,
        applied: false,
    };
    if let (Some(n), Some(which)) = (name.as_deref(), sub.and_then(|s| Sub::of(&res, s))) {
        let write = ctx("unknown");
        let call = subresource::Call {
            store,
            res: &res,
            ns: &ns,
            name: n,
            sub: which,
            method: &method,
            ctx: &write,
        };
        let (code, out) = match method {
            Method::GET => subresource::serve(&call, None)?,
            Method::PATCH => {
                let kind = patch_kind(&content_type)?;
                if kind == PatchKind::Apply {
                    return Err(ApiError::unsupported_media_type(&content_type));
                }
                let p = parse_object(&body, &content_type)?;
                let patch = |obj: &mut Value| apply_patch(kind, obj, &p);
                subresource::serve(&call, Some(Desired::Patch(&patch)))?
            }
            _ => subresource::serve(
                &call,
                Some(Desired::Object(parse_object(&body, &content_type)?)),
            )?,
        };
        return Ok(json_response(code, &out));
    }
    match (&method, name.as_deref(), sub) {
        (&Method::POST, None, None) => {
            if res.namespaced && t.namespace.is_none() {
                return Err(ApiError::method_not_allowed());
            }
            let obj = parse_object(&body, &content_type)?;
            let created = store.create(&res, &ns, obj, &ctx("unknown"))?;
            Ok(json_response(201, &created))
        }
        (&Method::POST, Some(n), Some("eviction"))
            if res.group.is_empty() && res.plural == "pods" =>
        {
            store.delete(&res, &ns, n, &Value::Null, dry_run)?;
            Ok(json_response(201, &status::success(None)))
        }
        (&Method::PUT, Some(n), None | Some("status")) => {
            if sub == Some("status") && !status_separate {
                return Err(ApiError::path_not_found());
            }
            let scope = if sub.is_some() {
                Scope::Status
            } else {
                Scope::Main { status_separate }
            };
            let obj = parse_object(&body, &content_type)?;
            let r2 = res.clone();
            let out = store.modify(&res, &ns, n, scope, &ctx("unknown"), |live| {
                let live = live.ok_or_else(|| ApiError::not_found(&r2, n))?;
                let want = rv_of(&obj);
                if !want.is_empty() && want != rv_of(live) {
                    return Err(ApiError::modified(&r2, n));
                }
                Ok(obj)
            })?;
            Ok(json_response(200, &out))
        }
        (&Method::PUT, Some(n), Some("scale")) => {
            let body = parse_object(&body, &content_type)?;
            let replicas = body
                .pointer("/spec/replicas")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let r2 = res.clone();
            let out = store.modify(
                &res,
                &ns,
                n,
                Scope::Main { status_separate },
                &ctx("unknown"),
                |live| {
                    let live = live.ok_or_else(|| ApiError::not_found(&r2, n))?;
                    let want = rv_of(&body);
                    if !want.is_empty() && want != rv_of(live) {
                        return Err(ApiError::modified(&r2, n));
                    }
                    let mut new = live.clone();
                    set_replicas(&r2, &mut new, replicas);
                    Ok(new)
                },
            )?;
            Ok(json_response(200, &scale_of(&res, &out)?))
        }
        (&Method::PATCH, Some(n), None | Some("status") | Some("scale")) => {
            if sub == Some("status") && !status_separate {
                return Err(ApiError::path_not_found());
            }
            let kind = patch_kind(&content_type)?;
            if kind == PatchKind::Strategic && res.custom {
                return Err(ApiError::unsupported_media_type(&content_type));
            }
            let p = parse_object(
                &body,
                if kind == PatchKind::Apply {
                    "yaml"
                } else {
                    &content_type
                },
            )?;
            let r2 = res.clone();
            if sub == Some("scale") {
                let out = store.modify(
                    &res,
                    &ns,
                    n,
                    Scope::Main { status_separate },
                    &ctx("unknown"),
                    |live| {
                        let live = live.ok_or_else(|| ApiError::not_found(&r2, n))?;
                        let mut scale = scale_of(&r2, live)?;
                        apply_patch(
                            if kind == PatchKind::Apply {
                                PatchKind::Merge
                            } else {
                                kind
                            },
                            &mut scale,
                            &p,
                        )?;
                        let replicas = scale
                            .pointer("/spec/replicas")
                            .and_then(Value::as_i64)
                            .unwrap_or(0);
                        let mut new = live.clone();
                        set_replicas(&r2, &mut new, replicas);
                        Ok(new)
                    },
                )?;
                return Ok(json_response(200, &scale_of(&res, &out)?));
            }
            let scope = if sub == Some("status") {
                Scope::Status
            } else {
                Scope::Main { status_separate }
            };
            if kind == PatchKind::Apply {
                let manager = query
                    .get("fieldManager")
                    .filter(|m| !m.is_empty())
                    .ok_or_else(|| ApiError::bad_request("PATCH, application/apply-patch+yaml requests must provide a fieldManager"))?
                    .to_owned();
                let force = query.flag("force");
                let ns2 = ns.clone();
                let out = store.modify(&res, &ns, n, scope, &WriteCtx { applied: true, ..ctx(&manager) }, |live| {
                    if !p.is_object() {
                        return Err(ApiError::bad_request("apply configuration must be an object"));
                    }
                    if p.get("kind").and_then(Value::as_str).is_none_or(str::is_empty) {
                        return Err(ApiError::bad_request("Object 'Kind' is missing in apply configuration"));
                    }
                    let Some(applied_name) = p.pointer("/metadata/name").and_then(Value::as_str).filter(|s| !s.is_empty()) else {
                        return Err(ApiError::bad_request(format!(
                            "the name of the object ({n} based on URL) was undeterminable: name must be provided"
                        )));
                    };
                    if applied_name != n {
                        return Err(ApiError::bad_request(format!(
                            "the name of the object ({applied_name}) does not match the name on the URL ({n})"
                        )));
                    }
                    let skeleton;
                    let base = match live {
                        Some(l) => l,
                        None => {
                            let mut s = json!({"apiVersion": r2.api_version(), "kind": r2.kind, "metadata": {"name": n}});
                            if r2.namespaced {
                                s["metadata"]["namespace"] = json!(ns2);
                            }
                            skeleton = s;
                            &skeleton
                        }
                    };
                    let now = util::now_rfc3339();
                    let writer = Writer { manager: &manager, api_version: &r2.api_version(), now: &now, scope };
                    apply::apply(base, &p, &writer, force).map_err(|c| ApiError::apply_conflicts(&r2, n, &c))
                })?;
                return Ok(json_response(200, &out));
            }
            let out = store.modify(&res, &ns, n, scope, &ctx("unknown"), |live| {
                let live = live.ok_or_else(|| ApiError::not_found(&r2, n))?;
                let mut new = live.clone();
                apply_patch(kind, &mut new, &p)?;
                let want = rv_of(&new);
                if !want.is_empty() && want != rv_of(live) {
                    return Err(ApiError::modified(&r2, n));
                }
                Ok(new)
            })?;
            Ok(json_response(200, &out))
        }
        (&Method::DELETE, Some(n), None) => {
            let opts = if body.iter().all(u8::is_ascii_whitespace) {
                Value::Null
            } else {
                parse_object(&body, &content_type)?
            };
            let dry = dry_run
                || opts
                    .get("dryRun")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|x| x == "All"));
            let pre = opts.get("preconditions").cloned().unwrap_or(Value::Null);
            let last = store.delete(&res, &ns, n, &pre, dry)?;
            Ok(json_response(200, &delete_answer(&res, last)))
        }
        (&Method::DELETE, None, None) => {
            let deleted =
                store.delete_collection(&res, t.namespace.as_deref(), &label, &field, dry_run)?;
            let rv = store.current_rv();
            Ok(json_response(
                200,
                &list_object(&res, deleted, rv, None, None),
            ))
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

/// Kinds whose registry answers a DELETE with the object's last state, as
/// kube-apiserver 1.35 does (checked against it by the real-server suite);
/// every other kind answers a `Status` once the object is gone.
const DELETE_RETURNS_OBJECT: &[(&str, &str)] = &[
    ("", "pods"),
    ("", "services"),
    ("", "serviceaccounts"),
    ("", "persistentvolumeclaims"),
    ("", "resourcequotas"),
    ("storage.k8s.io", "storageclasses"),
    ("apiextensions.k8s.io", "customresourcedefinitions"),
];

/// What a DELETE of one object answers: the object while finalizers hold
/// it (it now carries `deletionTimestamp`), the object for the kinds in
/// [`DELETE_RETURNS_OBJECT`], else a `Success` Status naming it.
fn delete_answer(res: &Resource, last: Value) -> Value {
    let pending = last.pointer("/metadata/deletionTimestamp").is_some();
    let returns_object = DELETE_RETURNS_OBJECT
        .iter()
        .any(|(g, p)| *g == res.group && *p == res.plural);
    if pending || returns_object {
        return last;
    }
    let mut details = json!({
        "name": last.pointer("/metadata/name").cloned().unwrap_or(Value::Null),
        "kind": res.plural,
        "uid": last.pointer("/metadata/uid").cloned().unwrap_or(Value::Null),
    });
    if !res.group.is_empty() {
        details["group"] = json!(res.group);
    }
    status::success(Some(details))
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
