//! One handler per verb on a resource: `get`, `list`, `watch`, `create`,
//! `update` (PUT), `patch`, `apply`, `delete`, `deletecollection`, and the
//! pod `eviction` and `log` that answer as their verbs do.
//!
//! [`crate::http`] routes a request to the resource it addresses, builds
//! the [`Call`] (everything the handlers read from the request head) and
//! picks the handler; the request body is decoded and the answer encoded
//! there, in one function each ([`crate::http::decode_object`],
//! [`crate::http::respond`]). Subresources that write one part of their
//! parent (`scale`, `binding`, `token`, …) are in [`crate::subresource`].

use std::sync::Arc;

use futures::StreamExt;
use http::{HeaderValue, Response, header};
use http_body_util::{BodyExt, StreamBody};
use serde_json::{Value, json};

use crate::admission::{self, Verb};
use crate::apply::{self, Scope, Writer};
use crate::deletion::DeleteOptions;
use crate::faults::FaultState;
use crate::limits;
use crate::options;
use crate::patch::{self, PatchError};
use crate::registry;
use crate::resources::Resource;
use crate::selectors::{FieldSelector, LabelSelector};
use crate::shared::Shared;
use crate::status::{self, ApiError};
use crate::store::{self, Store, WriteCtx, check_rv, rv_of};
use crate::table;
use crate::typed::{self, FieldValidation, Source};
use crate::util;
use crate::watch::{self, WatchRequest};
use crate::wire::{Body, Query, decode_object, json_body_response, respond, text_response};

/// What the handlers of one request read: the resource addressed, the
/// parsed query and the request head.
pub(crate) struct Call<'a> {
    pub(crate) shared: &'a Arc<Shared>,
    pub(crate) faults: &'a Arc<FaultState>,
    pub(crate) res: Arc<Resource>,
    /// The namespace of the URL (`None`: a cluster-wide path).
    pub(crate) namespace: Option<String>,
    /// The namespace of the URL, empty for cluster-wide paths.
    pub(crate) ns: String,
    pub(crate) query: &'a Query,
    pub(crate) accept: &'a str,
    pub(crate) content_type: String,
    pub(crate) user_agent: Option<String>,
    /// `?dryRun=All`.
    pub(crate) dry_run: bool,
    pub(crate) label: LabelSelector,
    pub(crate) field: FieldSelector,
    /// Whether the status is a separate subresource of `res`.
    pub(crate) status_separate: bool,
    /// The webhook pass this run of the write is ([`crate::webhooks`]).
    pub(crate) webhooks: Option<Arc<admission::webhook::Pass>>,
    /// The `resourceVersion` a DELETE's webhooks were sent: the delete
    /// is made on it (a precondition, unless the client set one).
    pub(crate) delete_rv: Option<String>,
}

impl Call<'_> {
    pub(crate) fn store(&self) -> &Store {
        &self.shared.store
    }

    /// The answer `v` with status `code`, encoded as the client accepts.
    pub(crate) fn reply(&self, code: u16, v: &Value) -> Response<Body> {
        respond(code, v, self.accept)
    }

    /// Whether a `meta.k8s.io` Table is asked for.
    fn wants_table(&self) -> bool {
        table::wants_table(self.accept)
    }

    /// `?fieldValidation`.
    fn field_validation(&self) -> FieldValidation {
        FieldValidation::parse(self.query.get("fieldValidation"))
    }

    fn include_object(&self) -> &str {
        self.query.get("includeObject").unwrap_or("Metadata")
    }

    /// The write context: the field manager named by the query, else the
    /// user agent's product, else `default`.
    pub(crate) fn write_ctx(&self, default: &str) -> WriteCtx {
        WriteCtx {
            manager: field_manager(self.query, self.user_agent.as_deref(), default),
            dry_run: self.dry_run,
            applied: false,
            admission: admission::Options {
                webhooks: self.webhooks.clone(),
                ..admission::Options::default()
            },
        }
    }

    /// The write context of a request of `verb`: admission reports unknown
    /// fields as `?fieldValidation=` asks.
    fn write_ctx_as(&self, default: &str, verb: Verb) -> WriteCtx {
        WriteCtx {
            admission: admission::Options {
                field_validation: self.field_validation(),
                verb: Some(verb),
                warnings: admission::Warnings::default(),
                webhooks: self.webhooks.clone(),
                defer_crd_schemas: false,
            },
            ..self.write_ctx(default)
        }
    }

    /// The answer of a write, `code` on success: the object or the
    /// failure, with the `Warning` headers admission collected (a refused
    /// write still carries them, as the real server's does).
    fn answer(
        &self,
        code: u16,
        out: Result<Value, ApiError>,
        ctx: &WriteCtx,
    ) -> Result<Response<Body>, ApiError> {
        let warnings = ctx.admission.warnings.take();
        let resp = match out {
            Ok(v) => self.reply(code, &v),
            Err(e) if warnings.is_empty() => return Err(e),
            Err(e) => self.reply(e.code, &e.to_status()),
        };
        Ok(with_warnings(resp, &warnings))
    }

    /// The scope of a write to the object (`status`: `true`) or its status.
    fn scope(&self, status: bool) -> Scope {
        if status {
            Scope::Status
        } else {
            Scope::Main {
                status_separate: self.status_separate,
            }
        }
    }
}

fn field_manager(query: &Query, user_agent: Option<&str>, default: &str) -> String {
    if let Some(m) = query.get("fieldManager").filter(|m| !m.is_empty()) {
        return m.to_owned();
    }
    user_agent
        .and_then(|ua| ua.split('/').next())
        .filter(|s| !s.is_empty())
        .map(|s| s.chars().take(128).collect())
        .unwrap_or_else(|| default.to_owned())
}

/// `?watch=true` on a collection or (`name`) one object: a stream of
/// watch events (`conn`: the HTTP/1.x connection, closed when the watch
/// is ended as a slow watcher).
pub(crate) fn watch(
    call: Call<'_>,
    name: Option<&str>,
    conn: Option<crate::conns::ConnHandle>,
) -> Result<Response<Body>, ApiError> {
    let table = call.wants_table();
    let partial = crate::partial::target(call.accept);
    if partial == crate::partial::Target::NotAcceptable {
        return Err(crate::partial::refusal());
    }
    let protobuf = !table
        && partial == crate::partial::Target::Whole
        && crate::protobuf::watch_in_protobuf(&call.res, call.accept);
    let Call {
        shared,
        faults,
        res,
        namespace,
        query,
        label,
        field,
        ..
    } = call;
    let field = match name {
        Some(n) => field.and(FieldSelector::with_name(n)),
        None => field,
    };
    let opts = options::list(query, true)?;
    let wreq = WatchRequest {
        res,
        namespace,
        label,
        field,
        resource_version: opts.resource_version,
        send_initial_events: query.get("sendInitialEvents") == Some("true"),
        bookmarks: query.flag("allowWatchBookmarks"),
        timeout: opts.timeout,
        table,
        partial,
        protobuf,
        bookmark_interval: shared.bookmark_interval,
    };
    let (tx, rx) = shared.watches.queue(&shared.conns.bounds, conn);
    tokio::spawn(watch::run(
        shared.store.clone(),
        shared.watches.clone(),
        faults.clone(),
        wreq,
        tx,
    ));
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|item| (item.map(hyper::body::Frame::data), rx))
    });
    let mut r = Response::new(StreamBody::new(stream.boxed()).boxed_unsync());
    let content_type = if protobuf {
        crate::protobuf::WATCH_CONTENT_TYPE
    } else {
        "application/json"
    };
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    Ok(r)
}

/// GET of a collection: one page, as a list or a Table. A plain list
/// (no Table, no conversion webhook) is written from the stored text:
/// in JSON ([`store::list_json`]), in protobuf item by item
/// ([`store::protobuf_list`]), or as
/// `as=PartialObjectMetadataList` from each item's metadata
/// ([`store::partial_list_json`]); the others parse the page's objects.
pub(crate) async fn list(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let limit = options::list(call.query, false)?.limit;
    let page = call.store().list_page(
        &call.res,
        call.namespace.as_deref(),
        &call.label,
        &call.field,
        limit,
        call.query.get("continue").filter(|c| !c.is_empty()),
    )?;
    let from_text = !call.wants_table() && call.res.conversion.is_none();
    match crate::partial::target(call.accept) {
        crate::partial::Target::Whole if from_text => {
            let envelope = list_envelope(call, &page, Vec::new());
            if crate::protobuf::prefers_protobuf(call.accept)
                && let Some(r) = store::protobuf_list(&call.res, &envelope, &page.items)
            {
                return Ok(r);
            }
            let body = store::list_json(&call.res, &envelope, &page.items);
            return Ok(json_body_response(200, body));
        }
        crate::partial::Target::List(version) if from_text => {
            let envelope = list_envelope(call, &page, Vec::new());
            let body = store::partial_list_json(&call.res, &envelope, &page.items, version);
            return Ok(json_body_response(200, body));
        }
        _ => {}
    }
    let items = store::as_served(&call.res, &page.items);
    let items = crate::conversion::call::read(&call.res, items)
        .await
        .map_err(|e| crate::conversion::not_ready(&call.res, &e))?;
    if call.wants_table() {
        let t = table::table(
            &call.res,
            &items,
            &page.rv.to_string(),
            page.continue_token.as_deref(),
            call.include_object(),
        );
        return Ok(call.reply(200, &t));
    }
    Ok(call.reply(200, &list_envelope(call, &page, items)))
}

/// The list answering `call` with `page`'s place and `items`.
fn list_envelope(call: &Call<'_>, page: &store::Page, items: Vec<Value>) -> Value {
    // kube-apiserver counts the remaining items only of an unselected list
    // (its storage's predicate is empty), and its custom resource lists
    // (unstructured) always carry `continue`, empty on the last page.
    let selected = ["labelSelector", "fieldSelector"]
        .iter()
        .any(|k| call.query.get(k).is_some_and(|s| !s.is_empty()));
    let cont = page
        .continue_token
        .clone()
        .or_else(|| call.res.custom.then(String::new));
    let mut list = list_object(
        &call.res,
        items,
        page.rv,
        cont,
        page.remaining.filter(|_| !selected),
    );
    // 1.36 echoes the shard selector applied (KEP-5866); its
    // remainingItemCount ignores it (the predicate counts as empty).
    if let Some(shard) = call.field.shard() {
        list["metadata"]["shardInfo"] = json!({"selector": shard.text()});
    }
    list
}

/// GET of one object, as itself or a one-row Table.
pub(crate) async fn get(call: &Call<'_>, name: &str) -> Result<Response<Body>, ApiError> {
    let obj = call.store().get(&call.res, &call.ns, name)?;
    let obj = crate::conversion::call::read_one(&call.res, obj).await?;
    if call.wants_table() {
        let t = table::table(
            &call.res,
            std::slice::from_ref(&obj),
            rv_of(&obj),
            None,
            call.include_object(),
        );
        return Ok(call.reply(200, &t));
    }
    Ok(call.reply(200, &obj))
}

/// GET `pods/log`: the pod must exist; no container runs, so the log is
/// empty.
pub(crate) fn log(call: &Call<'_>, name: &str) -> Result<Response<Body>, ApiError> {
    call.store().get(&call.res, &call.ns, name)?;
    Ok(text_response(200, ""))
}

/// POST to a collection.
pub(crate) fn create(call: &Call<'_>, body: &[u8]) -> Result<Response<Body>, ApiError> {
    if call.res.namespaced && call.namespace.is_none() {
        return Err(ApiError::method_not_allowed());
    }
    options::check_write(call.query, options::Write::Create)?;
    let obj = decode_object(body, &call.content_type)?;
    if let Some(review) = crate::review::answer(&call.res, obj.clone())? {
        return Ok(call.reply(201, &review));
    }
    let (obj, warnings) = typed_body(call, obj, body)?;
    let ctx = call.write_ctx_as("unknown", Verb::Write);
    let created = call.store().create(&call.res, &call.ns, obj, &ctx);
    Ok(with_warnings(call.answer(201, created, &ctx)?, &warnings))
}

/// POST `pods/eviction`: deletes the pod (no disruption budgets here).
pub(crate) fn evict(call: &Call<'_>, name: &str) -> Result<Response<Body>, ApiError> {
    let opts = DeleteOptions {
        dry_run: call.dry_run,
        ..DeleteOptions::default()
    };
    call.store().delete(&call.res, &call.ns, name, &opts)?;
    Ok(call.reply(201, &status::success(None)))
}

/// PUT of an object (`status`: of its status subresource, which the
/// caller checked exists), honouring the body's `resourceVersion`.
pub(crate) fn update(
    call: &Call<'_>,
    name: &str,
    status: bool,
    body: &[u8],
) -> Result<Response<Body>, ApiError> {
    options::check_write(call.query, options::Write::Update)?;
    let obj = decode_object(body, &call.content_type)?;
    let (obj, warnings) = typed_body(call, obj, body)?;
    check_name(&obj, name)?;
    let r = rewrite(call, name, status, Verb::Write, |live| {
        if !registry::of(&call.res).allow_unconditional_update() && rv_of(&obj).is_empty() {
            return Err(unconditional_update(&call.res, name));
        }
        check_rv(&call.res, name, &obj, live)?;
        Ok(obj)
    })?;
    Ok(with_warnings(r, &warnings))
}

/// A create or update body `obj` (decoded from `body`) as kube-apiserver
/// reads it: repeated keys merged and warned about, then read into its
/// kind's model ([`typed::decode`]); with the warnings to send.
fn typed_body(call: &Call<'_>, obj: Value, body: &[u8]) -> Result<(Value, Vec<String>), ApiError> {
    let (obj, mut warnings) = match typed::duplicates(body, &call.content_type) {
        Some((v, paths)) => {
            let w = paths.iter().map(|p| format!("duplicate field \"{p}\""));
            (v, w.collect())
        }
        None => (obj, Vec::new()),
    };
    let (obj, w) = typed::decode(&call.res, obj, Source::Body, call.field_validation())?;
    warnings.extend(w);
    Ok((obj, warnings))
}

/// A PUT body must name the object the URL names (upstream's
/// `checkName`): 400 otherwise, a missing name included.
fn check_name(obj: &Value, name: &str) -> Result<(), ApiError> {
    match obj.pointer("/metadata/name").and_then(Value::as_str) {
        None | Some("") => Err(ApiError::bad_request(format!(
            "the name of the object ({name} based on URL) was undeterminable: name must be provided"
        ))),
        Some(n) if n != name => Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({name})"
        ))),
        Some(_) => Ok(()),
    }
}

/// `r` with one `Warning: 299 - "text"` header per warning, at most 4 KiB
/// of them (kube-apiserver truncates its warnings too).
pub(crate) fn with_warnings(mut r: Response<Body>, warnings: &[String]) -> Response<Body> {
    let mut budget = 4096usize;
    for w in warnings {
        let escaped = w.replace('\\', "\\\\").replace('"', "\\\"");
        let Some(left) = budget.checked_sub(escaped.len()) else {
            break;
        };
        budget = left;
        if let Ok(v) = HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
            r.headers_mut().append(header::WARNING, v);
        }
    }
    r
}

/// A custom resource (and its status) is never updated unconditionally:
/// kube-apiserver's CRD strategy refuses a PUT without `resourceVersion`
/// (`AllowUnconditionalUpdate` is false), where most built-ins take it.
fn unconditional_update(res: &Resource, name: &str) -> ApiError {
    ApiError::invalid(
        res,
        name,
        &[(
            "metadata.resourceVersion",
            "FieldValueInvalid",
            "Invalid value: 0: must be specified for an update".into(),
        )],
    )
}

/// Read-modify-write of an existing object (`status`: of its status) by
/// `f`; 404 when it does not exist.
fn rewrite(
    call: &Call<'_>,
    name: &str,
    status: bool,
    verb: Verb,
    f: impl FnOnce(&Value) -> Result<Value, ApiError>,
) -> Result<Response<Body>, ApiError> {
    let res = &call.res;
    let ctx = call.write_ctx_as("unknown", verb);
    let out = call
        .store()
        .modify(res, &call.ns, name, call.scope(status), &ctx, |live| {
            f(live.ok_or_else(|| ApiError::not_found(res, name))?)
        });
    call.answer(200, out, &ctx)
}

/// PATCH of an object (`status`: of its status subresource); server-side
/// apply goes to [`apply()`].
pub(crate) fn patch(
    call: &Call<'_>,
    name: &str,
    status: bool,
    body: &[u8],
) -> Result<Response<Body>, ApiError> {
    let (kind, p) = patch_body(call, body)?;
    if kind == PatchKind::Apply {
        return apply(call, name, status, &p);
    }
    let mut warnings = Vec::new();
    let r = rewrite(call, name, status, Verb::Patch, |live| {
        let mut new = live.clone();
        apply_patch(kind, &mut new, &p)?;
        check_type_kept(&call.res, &new, live)?;
        check_uid_kept(&call.res, name, &new, live)?;
        let (new, w) = typed::decode(&call.res, new, Source::Patch, call.field_validation())?;
        warnings = w;
        check_rv(&call.res, name, &new, live)?;
        Ok(new)
    })?;
    Ok(with_warnings(r, &warnings))
}

/// A patch may not change `metadata.uid`: 422, as kube-apiserver's
/// metadata validation answers (which reports it twice); a PUT's uid is a
/// precondition instead (409, in the store).
fn check_uid_kept(res: &Resource, name: &str, new: &Value, live: &Value) -> Result<(), ApiError> {
    let uid = |v: &Value| {
        v.pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let (new, live) = (uid(new), uid(live));
    if new.is_empty() || new == live {
        return Ok(());
    }
    let cause = (
        "metadata.uid",
        "FieldValueInvalid",
        format!("Invalid value: \"{new}\": field is immutable"),
    );
    Err(ApiError::invalid(res, name, &[cause.clone(), cause]))
}

/// A patch may not change a typed object's `kind` or `apiVersion`: the real
/// server fails decoding the patched object into its Go type and answers
/// 422 on the field `patch`.
fn check_type_kept(res: &Resource, new: &Value, live: &Value) -> Result<(), ApiError> {
    if res.custom {
        return Ok(());
    }
    // A removed kind or apiVersion is no change: decoding restores it.
    for k in ["kind", "apiVersion"] {
        if let Some(v) = new.get(k).filter(|v| !v.is_null())
            && Some(v) != live.get(k)
        {
            let text = format!(
                "Invalid value: the patched object's {k} {v} is not {}",
                live.get(k).unwrap_or(&Value::Null)
            );
            return Err(ApiError::invalid_kind(
                "",
                "",
                "",
                &[("patch", "FieldValueInvalid", text)],
            ));
        }
    }
    Ok(())
}

/// The kind of a PATCH and its decoded body (an apply configuration is
/// YAML or JSON whatever the content type says); strategic merge is
/// refused for custom resources, as upstream does.
pub(crate) fn patch_body(call: &Call<'_>, body: &[u8]) -> Result<(PatchKind, Value), ApiError> {
    let kind = patch_kind(&call.content_type)?;
    options::check_write(
        call.query,
        options::Write::Patch {
            apply: kind == PatchKind::Apply,
        },
    )?;
    if kind == PatchKind::Strategic && call.res.custom {
        return Err(ApiError::unsupported_media_type(&call.content_type));
    }
    let ct = if kind == PatchKind::Apply {
        "yaml"
    } else {
        &call.content_type
    };
    Ok((kind, decode_object(body, ct)?))
}

/// Server-side apply of the configuration `p`: creates the object when it
/// is missing, else merges `p` into it under `fieldManager`, refusing
/// conflicts unless `force`.
fn apply(call: &Call<'_>, name: &str, status: bool, p: &Value) -> Result<Response<Body>, ApiError> {
    // Checked by `patch_body` (`options::check_write`).
    let manager = call
        .query
        .get("fieldManager")
        .unwrap_or_default()
        .to_owned();
    check_apply_config(name, p)?;
    check_apply_target(call, p)?;
    let force = call.query.flag("force");
    let res = &call.res;
    let scope = call.scope(status);
    let ctx = WriteCtx {
        applied: true,
        ..call.write_ctx_as(&manager, Verb::Apply)
    };
    let mut created = false;
    let out = call
        .store()
        .modify(res, &call.ns, name, scope, &ctx, |live| {
            let skeleton;
            let base = match live {
                Some(l) => {
                    // A resourceVersion in the configuration is a
                    // precondition, as for every other write.
                    check_rv(res, name, p, l)?;
                    l
                }
                None => {
                    check_creating_apply(res, name, status, p)?;
                    created = true;
                    skeleton = skeleton_of(res, &call.ns, name);
                    &skeleton
                }
            };
            let now = util::now_rfc3339();
            let writer = Writer {
                manager: &manager,
                api_version: &res.api_version(),
                now: &now,
                scope,
                res,
            };
            let merged =
                apply::apply(base, p, &writer, force).map_err(|e| e.into_api(res, name))?;
            // As the real server converts the merged value to the Go type:
            // what it cannot hold (an empty map, an emptied list) is gone,
            // while the managedFields keep the applier's members.
            let (merged, _) = typed::decode(res, merged, Source::Patch, FieldValidation::Ignore)?;
            Ok(merged)
        });
    call.answer(if created { 201 } else { 200 }, out, &ctx)
}

/// An apply that finds no object creates it, as kube-apiserver does, but
/// only through the main resource (a subresource of a missing object is
/// 404) and only when the configuration names it: the name of an apply to
/// an existing object may come from the URL and the live object alone.
fn check_creating_apply(
    res: &Resource,
    name: &str,
    status: bool,
    p: &Value,
) -> Result<(), ApiError> {
    if status {
        return Err(ApiError::not_found(res, name));
    }
    if p.pointer("/metadata/name")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name} based on URL) was undeterminable: name must be provided"
        )));
    }
    Ok(())
}

/// An apply configuration must be an object with a kind, and a name, if
/// it has one, that is the URL's.
fn check_apply_config(name: &str, p: &Value) -> Result<(), ApiError> {
    if !p.is_object() {
        return Err(ApiError::bad_request(
            "apply configuration must be an object",
        ));
    }
    if p.get("kind")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err(ApiError::bad_request(
            "Object 'Kind' is missing in apply configuration",
        ));
    }
    // Without a name the object's own is kept (checked on create).
    let applied = p.pointer("/metadata/name").and_then(Value::as_str);
    if let Some(applied) = applied.filter(|s| !s.is_empty() && *s != name) {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({applied}) does not match the name on the URL ({name})"
        )));
    }
    Ok(())
}

/// An apply configuration must be of the resource's apiVersion and kind
/// (kube-apiserver's version check: `invalid object type: /v1,
/// Kind=Secret`) and in the URL's namespace.
fn check_apply_target(call: &Call<'_>, p: &Value) -> Result<(), ApiError> {
    let s = |ptr: &str| p.pointer(ptr).and_then(Value::as_str).unwrap_or("");
    let (api_version, kind) = (s("/apiVersion"), s("/kind"));
    if api_version != call.res.api_version() || kind != call.res.kind {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        return Err(ApiError::bad_request(format!(
            "invalid object type: {group}/{version}, Kind={kind}"
        )));
    }
    let ns = s("/metadata/namespace");
    if call.res.namespaced && !ns.is_empty() && ns != call.ns {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    Ok(())
}

/// The empty object an apply that creates starts from.
fn skeleton_of(res: &Resource, ns: &str, name: &str) -> Value {
    let mut s =
        json!({"apiVersion": res.api_version(), "kind": res.kind, "metadata": {"name": name}});
    if res.namespaced {
        s["metadata"]["namespace"] = json!(ns);
    }
    s
}

/// The `DeleteOptions` of a DELETE: the body's (none when it is empty)
/// and the query's.
fn delete_options(call: &Call<'_>, body: &[u8]) -> Result<DeleteOptions, ApiError> {
    let opts = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        decode_object(body, &call.content_type)?
    };
    if !opts.is_object() && !opts.is_null() {
        return Err(ApiError::bad_request(format!(
            "json: cannot unmarshal {} into Go value of type v1.DeleteOptions",
            match opts {
                Value::Array(_) => "array",
                Value::String(_) => "string",
                Value::Number(_) => "number",
                _ => "bool",
            }
        )));
    }
    let mut parsed = DeleteOptions::parse(&opts, call.query)?;
    if let Some(rv) = &call.delete_rv
        && parsed.preconditions.get("resourceVersion").is_none()
    {
        if !parsed.preconditions.is_object() {
            parsed.preconditions = json!({});
        }
        parsed.preconditions["resourceVersion"] = json!(rv);
    }
    Ok(parsed)
}

/// DELETE of one object, with its `DeleteOptions` (preconditions, dry
/// run, propagation policy).
pub(crate) fn delete(call: &Call<'_>, name: &str, body: &[u8]) -> Result<Response<Body>, ApiError> {
    let opts = delete_options(call, body)?;
    let last = call.store().delete(&call.res, &call.ns, name, &opts)?;
    Ok(call.reply(200, &delete_answer(&call.res, last)))
}

/// DELETE of a collection: the list of what was deleted (or marked), as
/// it was before.
pub(crate) fn delete_collection(call: &Call<'_>, body: &[u8]) -> Result<Response<Body>, ApiError> {
    let opts = delete_options(call, body)?;
    let store = call.store();
    let deleted = store.delete_collection(
        &call.res,
        call.namespace.as_deref(),
        &call.label,
        &call.field,
        &opts,
    )?;
    let list = list_object(&call.res, deleted, store.current_rv(), None, None);
    Ok(call.reply(200, &list))
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
/// it (it carries `deletionTimestamp` and finalizers), the object for the kinds in
/// [`DELETE_RETURNS_OBJECT`], else a `Success` Status naming it.
fn delete_answer(res: &Resource, last: Value) -> Value {
    // Finalizers (a namespace's `spec.finalizers` too) hold it: the
    // marked object is the answer.
    let held = |ptr: &str| {
        last.pointer(ptr)
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty())
    };
    let pending = last.pointer("/metadata/deletionTimestamp").is_some()
        && (held("/metadata/finalizers") || held("/spec/finalizers"));
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

fn patch_err(e: PatchError) -> ApiError {
    match e {
        PatchError::BadRequest(m) => ApiError::bad_request(m),
        PatchError::Invalid(m) => ApiError::unprocessable(m),
        PatchError::Unknown(m) => ApiError::client_mistake_500(m),
    }
}

/// The four PATCH content types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PatchKind {
    Json,
    Merge,
    Strategic,
    Apply,
}

pub(crate) fn patch_kind(ct: &str) -> Result<PatchKind, ApiError> {
    let base = ct.split(';').next().unwrap_or("").trim();
    Ok(match base {
        "application/json-patch+json" => PatchKind::Json,
        "application/merge-patch+json" => PatchKind::Merge,
        "application/strategic-merge-patch+json" => PatchKind::Strategic,
        "application/apply-patch+yaml" | "application/apply-patch+json" => PatchKind::Apply,
        other => return Err(ApiError::unsupported_media_type(other)),
    })
}

/// Applies a JSON, merge or strategic merge patch `p` to `target`.
pub(crate) fn apply_patch(kind: PatchKind, target: &mut Value, p: &Value) -> Result<(), ApiError> {
    match kind {
        PatchKind::Json => {
            limits::check_json_patch(p)?;
            patch::json_patch(target, p).map_err(patch_err)
        }
        // kube-apiserver's merge patch library refuses a patch that is
        // not an object (`Invalid JSON Patch`).
        PatchKind::Merge if !p.is_object() => Err(ApiError::bad_request("Invalid JSON Patch")),
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{Value, json};

    use super::list_object;
    use crate::resources::{self, Resource};
    use crate::store::{self, Stored};

    /// A pod as kube-apiserver keeps one: managedFields, nested lists,
    /// non-ASCII and escaped text, big and negative integers, floats.
    fn pod(name: &str) -> Value {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": name, "namespace": "default", "uid": "4f1c", "resourceVersion": "17",
                "labels": {"app": "café", "tier": "web"},
                "annotations": {"note": "line\nbreak \"quoted\" \\ tab\t \u{1F600} \u{7f}"},
                "managedFields": [{"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:containers": {"k:{\"name\":\"a\"}": {".": {}}}}}}]
            },
            "spec": {
                "containers": [{"name": "a", "image": "nginx:1.27", "args": [["x", 1], [], [[{}]]],
                    "resources": {"limits": {"cpu": "500m"}}, "ports": [{"containerPort": 8080}]}],
                "big": u64::MAX, "neg": i64::MIN, "f": 0.1, "tiny": 5e-324, "huge": 1.7976931348623157e308,
                "whole": 2.0, "null": null, "t": true
            },
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
            "Zeta": 1, "_first": "sorts before apiVersion"
        })
    }

    /// The list written from the stored text and the list printed from
    /// the parsed objects, as `list` answered before.
    fn both(res: &Resource, objs: &[Value]) -> (String, String) {
        let key = res.storage_key();
        let stored: Vec<Arc<Stored>> = objs
            .iter()
            .map(|o| Arc::new(Stored::new(&key, o)))
            .collect();
        let envelope = |items| {
            let mut l = list_object(res, items, 42, Some("tok".into()), Some(3));
            l["metadata"]["shardInfo"] = json!({"selector": "x"});
            l
        };
        let written = store::list_json(res, &envelope(Vec::new()), &stored);
        let printed = serde_json::to_string(&envelope(store::as_served(res, &stored)));
        (
            String::from_utf8(written).unwrap_or_default(),
            printed.unwrap_or_default(),
        )
    }

    fn builtin(group: &str, version: &str, plural: &str) -> Arc<Resource> {
        resources::builtin()
            .into_iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
            .expect("served")
    }

    #[test]
    fn a_list_written_from_the_stored_text_is_the_printed_list() {
        let mut odd = pod("odd");
        odd.as_object_mut().map(|m| m.remove("apiVersion"));
        let only_type = json!({"apiVersion": "v1", "kind": "Pod"});
        let objs = [
            pod("a"),
            odd,
            only_type,
            json!({"kind": "Pod", "z": []}),
            pod("é"),
        ];
        let pods = builtin("", "v1", "pods");
        for items in [&objs[..], &objs[..1], &[]] {
            let (written, printed) = both(&pods, items);
            assert_eq!(written, printed);
        }
        // A kind stored in another version than the one listed, and core
        // Events listed as events.k8s.io/v1 (renamed fields: parsed).
        let mut hpa = pod("h");
        hpa["apiVersion"] = json!("autoscaling/v2");
        hpa["kind"] = json!("HorizontalPodAutoscaler");
        let (written, printed) = both(
            &builtin("autoscaling", "v1", "horizontalpodautoscalers"),
            &[hpa],
        );
        assert_eq!(written, printed);
        let event = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"},
            "involvedObject": {"name": "p"}, "message": "m", "count": 2});
        let (written, printed) = both(&builtin("events.k8s.io", "v1", "events"), &[event]);
        assert!(written.contains("\"regarding\"") && written.contains("\"note\":\"m\""));
        assert_eq!(written, printed);
    }

    #[test]
    fn a_custom_resource_list_is_the_printed_list_in_each_version() {
        let crd = json!({"spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                    "type": "object", "properties": {"spec": {"type": "object", "properties": {
                        "size": {"type": "integer", "default": 3}}}}}}},
                {"name": "v1beta1", "served": true}]}});
        let mut v1 = pod("w1");
        v1["apiVersion"] = json!("example.com/v1");
        v1["kind"] = json!("Widget");
        let mut beta = v1.clone();
        beta["apiVersion"] = json!("example.com/v1beta1");
        let objs = [v1, beta];
        for res in resources::from_crd(&crd) {
            let (written, printed) = both(&res, &objs);
            assert_eq!(written, printed, "{}", res.version);
        }
    }
}
