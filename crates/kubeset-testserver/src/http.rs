//! HTTP routing: turns a request into a store operation, a watch, a
//! discovery document or an error `Status`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use serde_json::Value;

use crate::auth;
use crate::discovery;
use crate::faults::{FaultState, Verdict};
use crate::inflight::{self, Guarded};
use crate::limits;
use crate::openapi;
use crate::resources::Resource;
use crate::selectors::{FieldSelector, LabelSelector};
use crate::shared::Shared;
use crate::status::ApiError;
use crate::store::Store;
use crate::subresource::{self, Desired, Sub};
use crate::validation;
use crate::verbs::{self, PatchKind};
use crate::wire::{
    Body, Query, check_content_type, decode_object, error_response, full, json_response,
    percent_decode_path, text_response,
};

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
    let req = match crate::stream::intercept(req, &shared.store, shared.runtime.as_ref(), &faults)
        .await
    {
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
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("")
        .to_owned();
    if let Some(answer) = non_resource(&req, shared, local, &segs, &accept, &query) {
        return answer;
    }
    // Legacy watch paths: /api/v1/watch/... and /apis/<g>/<v>/watch/...
    let mut segs = segs;
    let mut query = query;
    let watch_at = if segs.first() == Some(&"api") { 2 } else { 3 };
    if segs.get(watch_at) == Some(&"watch") {
        segs.remove(watch_at);
        query.push("watch", "true");
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
    let get = req.method() == Method::GET;
    let resp = match dispatch(req, shared, faults, target, &query, &accept).await {
        Ok(r) => r,
        // A GET of a kind reaches its (list) handler, which refuses a verb
        // the kind does not serve after the deprecation warning is
        // recorded; other methods find no route, so no warning.
        Err(e) if get && e.code == 405 => error_response(&e),
        Err(e) => return Err(e),
    };
    Ok(with_deprecation(resp, warning.as_deref()))
}

/// The answers outside the resources of `/api` and `/apis`: health,
/// version, discovery and the OpenAPI documents, and 404 for a path that
/// is none of them; `None` for a path into `/api` or `/apis` (a
/// resource's, a watch's).
fn non_resource(
    req: &Request<hyper::body::Incoming>,
    shared: &Shared,
    local: SocketAddr,
    segs: &[&str],
    accept: &str,
    query: &Query,
) -> Option<Result<Response<Body>, ApiError>> {
    let store = &shared.store;
    let get = req.method() == Method::GET;
    if get && matches!(segs, ["api"] | ["apis"]) && discovery::wants_aggregated(accept) {
        let doc = discovery::aggregated(&store.resources(), segs == ["api"]);
        let mut r = json_response(200, &doc);
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(discovery::AGGREGATED),
        );
        return Some(Ok(r));
    }
    Some(match segs {
        ["healthz" | "livez" | "readyz", ..] if get => Ok(text_response(200, "ok")),
        ["version"] if get => Ok(json_response(200, &discovery::version())),
        ["api"] if get => Ok(json_response(
            200,
            &discovery::core_versions(&local.to_string()),
        )),
        ["apis"] if get => Ok(json_response(
            200,
            &discovery::group_list(&store.resources()),
        )),
        ["api", v] if get => discovery::resource_list(&store.resources(), "", v)
            .map(|d| json_response(200, &d))
            .ok_or_else(ApiError::path_not_found),
        ["apis", g] if get => discovery::group(&store.resources(), g)
            .map(|d| json_response(200, &d))
            .ok_or_else(ApiError::path_not_found),
        ["apis", g, v] if get => discovery::resource_list(&store.resources(), g, v)
            .map(|d| json_response(200, &d))
            .ok_or_else(ApiError::path_not_found),
        ["openapi", "v3"] if get => {
            let index = openapi::v3_index(shared.openapi.as_deref(), &store.resources());
            Ok(json_response(200, &index))
        }
        ["openapi", "v3", rest @ ..] if get => {
            let doc = openapi::v3_doc(
                shared.openapi.as_deref(),
                &store.resources(),
                &rest.join("/"),
            );
            doc_response(doc, req, query)
        }
        ["openapi", "v2"] if get => {
            let doc = openapi::v2(shared.openapi.as_deref(), &store.resources());
            doc_response(doc, req, query)
        }
        ["api" | "apis", ..] => return None,
        _ => Err(ApiError::page_not_found()),
    })
}

/// The kind's deprecation `Warning` first, as kube-apiserver records it
/// before the handler runs; the handler's own warnings (admission, typed
/// decoding) after.
fn with_deprecation(mut resp: Response<Body>, warning: Option<&str>) -> Response<Body> {
    let Some(w) = warning else { return resp };
    let escaped = w.replace('\\', "\\\\").replace('"', "\\\"");
    if let Ok(v) = HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
        let headers = resp.headers_mut();
        let rest: Vec<HeaderValue> = headers.get_all(header::WARNING).iter().cloned().collect();
        headers.insert(header::WARNING, v);
        for r in rest {
            headers.append(header::WARNING, r);
        }
    }
    resp
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
    let fields = crate::registry::of(&res).fields(&res);
    let field = FieldSelector::parse_for(fields, query.get("fieldSelector").unwrap_or(""))
        .map_err(|e| ApiError::bad_request(e.0))?;
    // kube-apiserver 1.36 (ShardedListAndWatch on) parses it in the
    // registry, so a bad one is a plain error there: 500, no reason.
    // A read of one object ignores it, as its GetOptions have none.
    let shard = if t.name.is_none() || query.flag("watch") {
        crate::selectors::ShardSelector::parse(query.get("shardSelector"))
            .map_err(|e| ApiError::client_mistake_500(e.0))?
    } else {
        None
    };
    let field = field.with_shard(shard);
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
        webhooks: None,
        delete_rv: None,
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
    if sub.is_none() {
        check_served_verb(&call.res, &method, name.is_some(), query.flag("watch"))?;
    }
    match (&method, name, sub) {
        (&Method::GET, _, None) if query.flag("watch") => {
            let conn = req.extensions().get::<crate::conns::ConnHandle>().cloned();
            return verbs::watch(call, name, conn);
        }
        (&Method::GET, None, None) => return verbs::list(&call).await,
        (&Method::GET, Some(n), None) => return verbs::get(&call, n).await,
        (&Method::GET, Some(n), Some("status")) if call.status_separate => {
            let obj = call.store().get(&call.res, &call.ns, n)?;
            let obj = crate::conversion::call::read_one(&call.res, obj).await?;
            return Ok(call.reply(200, &obj));
        }
        (&Method::GET, Some(n), Some("log")) if is_pods => return verbs::log(&call, n),
        _ => {}
    }
    check_content_type(&call.content_type)?;
    let (_, body) = read_body(req, shared.conns.bounds.body).await?;
    let (content_type, body) =
        crate::protobuf::decode_body(&call.res, std::mem::take(&mut call.content_type), body)?;
    call.content_type = content_type;
    let Some(hook) = call.res.conversion.clone() else {
        return admitted(&mut call, &method, name, sub, &body).await;
    };
    // A custom resource with a conversion webhook: the write runs with
    // the conversions it needs, fetched before it and when it finds one
    // missing (then nothing was stored and it runs again).
    let memo = Arc::new(crate::conversion::Memo::default());
    let stored = name.and_then(|n| call.store().get_stored(&call.res, &call.ns, n));
    crate::conversion::call::prefetch(&call.res, &hook, stored, &memo).await?;
    for _ in 0..CONVERSION_ROUNDS {
        let r = memo
            .scope(admitted(&mut call, &method, name, sub, &body))
            .await;
        let missing = memo.take_missing();
        if memo.committed() || missing.is_empty() {
            return r;
        }
        crate::conversion::call::fetch(&call.res, &hook, &memo, missing).await?;
    }
    Err(ApiError::internal(
        "the conversions of the write did not settle (the object kept changing)",
    ))
}

/// How many times a write of a resource with a conversion webhook is run
/// when it finds conversions missing (the stored object changing between
/// runs asks for another).
const CONVERSION_ROUNDS: usize = 5;

/// A write through the admission webhooks that may match it
/// ([`crate::webhooks`]), or straight to its handler.
async fn admitted(
    call: &mut verbs::Call<'_>,
    method: &Method,
    name: Option<&str>,
    sub: Option<&str>,
    body: &[u8],
) -> Result<Response<Body>, ApiError> {
    let write = |call: &verbs::Call<'_>| write(call, method, name, sub, body);
    if !webhooks_may_match(call, method, name, sub) {
        return write(call);
    }
    call.store().count_webhook_write();
    match (method, name) {
        (&Method::DELETE, Some(n)) => crate::webhooks::drive_delete(call, n, write).await,
        _ => crate::webhooks::drive(call, sub.unwrap_or_default(), write).await,
    }
}

/// Whether a stored webhook may be called for this write
/// ([`crate::store::Store::webhooks_may_match`]): a POST creates, a PUT
/// or PATCH updates or creates (an apply, a create-on-update), a DELETE
/// of one object deletes; a collection's DELETE (and a subresource's) is
/// not sent to webhooks.
fn webhooks_may_match(
    call: &verbs::Call<'_>,
    method: &Method,
    name: Option<&str>,
    sub: Option<&str>,
) -> bool {
    use crate::admission::policy::Operation;
    let operations: &[Operation] = match (method, name, sub) {
        (&Method::POST, _, _) => &[Operation::Create],
        (&Method::PUT | &Method::PATCH, _, _) => &[Operation::Update, Operation::Create],
        (&Method::DELETE, Some(_), None) => &[Operation::Delete],
        _ => &[],
    };
    !operations.is_empty()
        && call
            .store()
            .webhooks_may_match(&call.res, &call.ns, sub.unwrap_or_default(), operations)
}

/// The handler of a write (the body read) by verb, name and subresource.
fn write(
    call: &verbs::Call<'_>,
    method: &Method,
    name: Option<&str>,
    sub: Option<&str>,
    body: &[u8],
) -> Result<Response<Body>, ApiError> {
    let is_pods = call.res.group.is_empty() && call.res.plural == "pods";
    if let (Some(n), Some(which)) = (
        name,
        sub.and_then(|s| crate::registry::of(&call.res).subresource(s)),
    ) {
        return serve_subresource(call, method, n, which, body);
    }
    match (method, name, sub) {
        (&Method::POST, None, None) => verbs::create(call, body),
        (&Method::POST, Some(n), Some("eviction")) if is_pods => verbs::evict(call, n),
        (&Method::PUT | &Method::PATCH, Some(_), Some("status")) if !call.status_separate => {
            Err(ApiError::path_not_found())
        }
        (&Method::PUT, Some(n), None | Some("status")) => {
            verbs::update(call, n, sub.is_some(), body)
        }
        (&Method::PATCH, Some(n), None | Some("status")) => {
            verbs::patch(call, n, sub.is_some(), body)
        }
        (&Method::DELETE, Some(n), None) => verbs::delete(call, n, body),
        (&Method::DELETE, None, None) => verbs::delete_collection(call, body),
        _ => Err(ApiError::method_not_allowed()),
    }
}

/// 405 MethodNotAllowed for a verb `res` does not serve (its discovery
/// `verbs`), as kube-apiserver registers no route for it: a
/// `deletecollection` of namespaces, a `create` of componentstatuses.
fn check_served_verb(
    res: &crate::resources::Resource,
    method: &Method,
    named: bool,
    watch: bool,
) -> Result<(), ApiError> {
    let verb = match (method, named) {
        (&Method::GET, _) if watch => "watch",
        (&Method::GET, false) => "list",
        (&Method::GET, true) => "get",
        (&Method::POST, false) => "create",
        (&Method::PUT, true) => "update",
        (&Method::PATCH, true) => "patch",
        (&Method::DELETE, true) => "delete",
        (&Method::DELETE, false) => "deletecollection",
        _ => return Ok(()),
    };
    if res.verbs.is_empty() || res.verbs.iter().any(|v| v == verb) {
        return Ok(());
    }
    Err(ApiError::method_not_allowed())
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
