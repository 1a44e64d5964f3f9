//! The embedded server calling admission webhooks, as kube-apiserver's
//! `MutatingAdmissionWebhook` and `ValidatingAdmissionWebhook` plugins do
//! ([`crate::admission::webhook`] has the rules; this module the I/O).
//!
//! A client's create, update, patch or apply of a served resource (or
//! subresource) goes through webhook admission only when a stored
//! webhook may match it: its `rules` (operation, group, version,
//! resource and subresource, `scope`) and its `namespaceSelector` are
//! checked first, from the stored configurations alone
//! ([`crate::admission::webhook::may_match`]); any other write is
//! answered as without webhooks, with no extra pass. The `objectSelector`
//! and `matchConditions` need the object as admission sees it (a patch or
//! an apply computed, the mutating policies applied), so a webhook with
//! either still takes the passes, which decide. Such a write runs as
//! passes through the store ([`drive`]):
//! 1. a dry run records, at the admission chain's webhook points, the
//!    object the mutating webhooks are sent and which webhooks match; the
//!    object is validated only after the mutating admission, as in
//!    kube-apiserver (a validation refusal of the object as sent is held
//!    until then: a mutating webhook may make it valid);
//! 2. the mutating webhooks are called one after the other (configurations
//!    by name, webhooks in their order), each sent the previous one's
//!    result; their JSON patches are kept; a webhook with
//!    `reinvocationPolicy: IfNeeded` is called once more when a later
//!    webhook changed the object (upstream's reinvocation round);
//! 3. when a webhook patched, a second dry run replays the patches to get
//!    the object the validating webhooks are sent (after the mutating
//!    policies, defaults and validation); when none patched, the first
//!    pass's refusal (validation, a validating policy) stands;
//! 4. the validating webhooks are called at once (in parallel); the first
//!    refusal in their order decides;
//! 5. the write itself replays the patches; when the stored object changed
//!    since pass 1 (its `resourceVersion`), everything is run again (at
//!    most [`ATTEMPTS`] times), as kube-apiserver re-runs admission when
//!    its update loses a race.
//!
//! What the server makes up for a new object (a `generateName` name, the
//! `uid`, `creationTimestamp`) is made once per run and kept by every
//! pass, so the validating webhooks see what is stored; the mutating
//! webhooks of a create are sent the object without them (and an empty
//! request `name` for a generated one), as kube-apiserver sets them after
//! the mutating admission.
//!
//! No store lock is held while a webhook is called: each pass takes and
//! releases it as a write does.
//!
//! A DELETE of one object is sent to the webhooks with `oldObject` (the
//! live object, read without holding the lock during the calls) and
//! `object: null`; the delete is then made on that object's
//! `resourceVersion` (a precondition, unless the client set one) and run
//! again when it moved.
//!
//! A custom resource whose CRD has `conversion.strategy: Webhook` is
//! stored in its storage version and converted by its webhook on every
//! boundary ([`crate::conversion::call`], rules in [`crate::conversion`]): a get, a list
//! page (one review for the objects not in the version asked for), each
//! watch event (a watch's initial objects in one review); a write reads
//! the stored object in the request's version, converts what it stores
//! to the storage version and its answer back (create, update, patch,
//! apply, status; a delete's answer). Nothing is sent for an object
//! already in the version asked for. A failed conversion answers as
//! kube-apiserver v1.35 does (checked by the shared scenarios): a get or a
//! write 500 with no reason and upstream's `conversion webhook for
//! <group/version>, Kind=<kind> failed: …`, storing nothing; a list 429
//! `storage is (re)initializing: failed to list …` (its watch cache not
//! ready); a watch ends with an `ERROR` event carrying that 429 (upstream
//! refuses to open it); a watch of a custom resource ends when its CRD's
//! spec changes (kube-apiserver replaces the resource's storage), without
//! an error. The `None` strategy shares storage across versions (only
//! `apiVersion` is rewritten).
//!
//! Not done for conversion: kube-apiserver's watch cache, which converts
//! each object when it is written and serves lists and watches from what
//! it converted (the embedded server converts per request, so the reviews
//! a webhook sees differ in number and timing, never in what a client
//! reads); a write whose conversion is fetched after its admission
//! webhooks were called calls them once more (its run before stored
//! nothing); the answer of a collection's DELETE and the server's own
//! writes (garbage collection, namespace deletion) keep the storage
//! version (they change metadata only, as upstream's); labels and
//! annotations a conversion changes are only checked to be strings
//! (upstream validates them as on a write); an answer past 3 MiB fails
//! (upstream reads it whole); a JSON error's words are serde's, not Go's;
//! `clientConfig.service` cannot be resolved (the conversion fails as an
//! unreachable webhook), and a webhook without `caBundle` is not trusted
//! (no system roots).
//!
//! Not done: a collection's DELETE and CONNECT are not sent to webhooks; a
//! DELETE's `dryRun` is read from the query only (not the body's
//! `DeleteOptions`); the reinvocation round calls only the `IfNeeded`
//! webhooks again, not the mutating admission policies (upstream re-runs
//! its in-tree plugins too), and the webhooks' `objectSelector` and
//! `matchConditions` are evaluated once, on the object before the first
//! webhook (upstream evaluates each on the object as the webhooks before
//! it left it); `userInfo` is always the server's one user
//! (`kubeset:admin`; the embedded server authenticates no other);
//! `clientConfig.service` cannot be resolved in-process
//! (the call fails as an unreachable webhook would, under the
//! `failurePolicy`); a webhook without `caBundle` is not trusted (no
//! system roots); `matchPolicy: Equivalent` across versions;
//! `auditAnnotations` are read and dropped.

use crate::webhook_client as client;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use http::Response;
use serde_json::{Value, json};

use crate::admission::policy::Operation;
use crate::admission::webhook::{self, Attributes, Hook, Pass, Recorded};
use crate::status::ApiError;
use crate::verbs::{self, Call};
use crate::wire::Body;

/// How many times a write is run again when the object it read changed
/// while its webhooks were called.
const ATTEMPTS: usize = 5;

/// The identity the webhooks are told made the request (the embedded
/// server has one user, its admin token).
fn user_info() -> Value {
    json!({"username": "kubeset:admin", "groups": ["system:masters", "system:authenticated"]})
}

/// Runs the write `write` of `call` (of subresource `sub`, empty for the
/// object) with the webhooks as kube-apiserver calls them.
pub(crate) async fn drive(
    call: &mut Call<'_>,
    sub: &str,
    write: impl Fn(&Call<'_>) -> Result<Response<Body>, ApiError>,
) -> Result<Response<Body>, ApiError> {
    let client_dry = call.dry_run;
    let mut last = None;
    for _ in 0..ATTEMPTS {
        match attempt(call, sub, client_dry, &write).await {
            Attempt::Done(r) => return r,
            Attempt::Stale(e) => last = Some(e),
        }
    }
    call.webhooks = None;
    call.dry_run = client_dry;
    Err(last.unwrap_or_else(|| ApiError::internal("webhook admission did not settle")))
}

enum Attempt {
    Done(Result<Response<Body>, ApiError>),
    Stale(ApiError),
}

/// Runs the DELETE `write` of the object `name` with the webhooks.
pub(crate) async fn drive_delete(
    call: &mut Call<'_>,
    name: &str,
    write: impl Fn(&Call<'_>) -> Result<Response<Body>, ApiError>,
) -> Result<Response<Body>, ApiError> {
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let pass = Pass::default();
        let found =
            call.store()
                .webhooks_for_delete(&call.res, &call.ns, name, &pass, call.dry_run);
        let rec = pass.take();
        let Some(mut attrs) = rec.attrs.clone().filter(|_| found.is_some()) else {
            return write(call);
        };
        if let Some(e) = rec.refused.clone() {
            return Err(e);
        }
        if rec.mutating.is_empty() && rec.validating.is_empty() {
            return write(call);
        }
        attrs.dry_run = call.dry_run;
        let mut warnings = Vec::new();
        let checked = async {
            mutate(call, "", &attrs, &rec, &mut warnings).await?;
            validate(call, "", &attrs, &rec, &mut warnings).await
        }
        .await;
        if let Err(e) = checked {
            return refusal(call, e, &warnings);
        }
        let rv = rec.old_rv.clone().unwrap_or_default();
        call.delete_rv = Some(rv.clone());
        let r = write(call);
        call.delete_rv = None;
        match r {
            Err(e)
                if e.code == 409
                    && e.message
                        .contains(&format!("ResourceVersion in precondition: {rv},")) =>
            {
                last = Some(e);
            }
            Ok(resp) => return Ok(verbs::with_warnings(resp, &warnings)),
            Err(e) => return refusal(call, e, &warnings),
        }
    }
    Err(last.unwrap_or_else(stale))
}

/// One run of a write through the webhooks.
async fn attempt(
    call: &mut Call<'_>,
    sub: &str,
    client_dry: bool,
    write: &impl Fn(&Call<'_>) -> Result<Response<Body>, ApiError>,
) -> Attempt {
    let made_up = Arc::default();
    let pass = |patches, expect| Pass {
        subresource: sub.to_owned(),
        patches,
        expect_old_rv: expect,
        made_up: Arc::clone(&made_up),
        ..Pass::default()
    };
    let first = Arc::new(pass(Vec::new(), None));
    let r1 = run(call, &first, true, write);
    let rec1 = first.take();
    let Some(mut attrs) = rec1.attrs.clone() else {
        // Never reached the webhooks' points: refused before, or exempt.
        return Attempt::Done(match r1 {
            Err(e) => Err(e),
            Ok(_) => plain(call, client_dry, write),
        });
    };
    attrs.dry_run = client_dry;
    if let Some(e) = rec1.refused.clone() {
        return Attempt::Done(Err(e));
    }
    if rec1.mutating.is_empty() && (r1.is_err() || rec1.validating.is_empty()) {
        return Attempt::Done(plain(call, client_dry, write));
    }
    let mut warnings = Vec::new();
    let patches = match mutate(call, sub, &attrs, &rec1, &mut warnings).await {
        Ok(p) => p,
        Err(e) => return Attempt::Done(refusal(call, e, &warnings)),
    };
    let expect = Some(rec1.old_rv.clone());
    let checked = if patches.is_empty() {
        // Nothing mutated: pass 1's answer stands (its validation refusal
        // or a validating policy's; the validating webhooks are not
        // called for a write refused before them).
        if let Err(e) = r1 {
            return Attempt::Done(refusal(call, e, &warnings));
        }
        rec1
    } else {
        let second = Arc::new(pass(patches.clone(), expect.clone()));
        let r2 = run(call, &second, true, write);
        if second.stale.load(Ordering::SeqCst) {
            return Attempt::Stale(r2.err().unwrap_or_else(stale));
        }
        if let Err(e) = r2 {
            return Attempt::Done(refusal(call, e, &warnings));
        }
        second.take()
    };
    if let Err(e) = validate(call, sub, &attrs, &checked, &mut warnings).await {
        return Attempt::Done(refusal(call, e, &warnings));
    }
    let last = Arc::new(pass(patches, expect));
    let r = run(call, &last, client_dry, write);
    if last.stale.load(Ordering::SeqCst) {
        return Attempt::Stale(r.err().unwrap_or_else(stale));
    }
    call.webhooks = None;
    Attempt::Done(match r {
        Ok(resp) => Ok(verbs::with_warnings(resp, &warnings)),
        Err(e) => refusal(call, e, &warnings),
    })
}

fn stale() -> ApiError {
    ApiError::internal("the object changed while its webhooks were called")
}

/// One pass of the write (`dry_run`: whether it may store).
fn run(
    call: &mut Call<'_>,
    pass: &Arc<Pass>,
    dry_run: bool,
    write: &impl Fn(&Call<'_>) -> Result<Response<Body>, ApiError>,
) -> Result<Response<Body>, ApiError> {
    call.webhooks = Some(pass.clone());
    call.dry_run = dry_run;
    write(call)
}

/// The write without webhooks (none matched).
fn plain(
    call: &mut Call<'_>,
    client_dry: bool,
    write: &impl Fn(&Call<'_>) -> Result<Response<Body>, ApiError>,
) -> Result<Response<Body>, ApiError> {
    call.webhooks = None;
    call.dry_run = client_dry;
    write(call)
}

/// A refusal, with the warnings the webhooks sent before it.
fn refusal(
    call: &mut Call<'_>,
    e: ApiError,
    warnings: &[String],
) -> Result<Response<Body>, ApiError> {
    call.webhooks = None;
    if warnings.is_empty() {
        return Err(e);
    }
    Ok(verbs::with_warnings(
        call.reply(e.code, &e.to_status()),
        warnings,
    ))
}

/// The mutating webhooks, one after the other, as upstream's mutating
/// dispatcher with its reinvocation: the patches of those that patched,
/// in order.
///
/// A webhook with `reinvocationPolicy: IfNeeded` is called once more
/// (one more round, in the webhooks' order) when a webhook after it
/// changed the object; a change it made itself does not call it again.
async fn mutate(
    call: &Call<'_>,
    sub: &str,
    attrs: &Attributes,
    rec: &Recorded,
    warnings: &mut Vec<String>,
) -> Result<Vec<Value>, ApiError> {
    let mut round = Round {
        object: rec.to_mutate.clone(),
        patches: Vec::new(),
        invoked: Vec::new(),
        reinvoke: Vec::new(),
    };
    for (i, hook) in rec.mutating.iter().enumerate() {
        round.call(call, hook, i, attrs, sub, warnings).await?;
    }
    let again = std::mem::take(&mut round.reinvoke);
    for (i, hook) in rec.mutating.iter().enumerate() {
        if again.contains(&i) {
            round.call(call, hook, i, attrs, sub, warnings).await?;
        }
    }
    Ok(round.patches)
}

/// The mutating webhooks' state through their rounds.
struct Round {
    /// The object as the webhooks called so far left it.
    object: Option<Value>,
    patches: Vec<Value>,
    /// `IfNeeded` webhooks called since the object last changed.
    invoked: Vec<usize>,
    /// Those to call again: invoked before a later webhook's change.
    reinvoke: Vec<usize>,
}

impl Round {
    /// Calls the mutating webhook `hook` (the `i`th) and applies its patch.
    async fn call(
        &mut self,
        call: &Call<'_>,
        hook: &Hook,
        i: usize,
        attrs: &Attributes,
        sub: &str,
        warnings: &mut Vec<String>,
    ) -> Result<(), ApiError> {
        let answer = call_one(call, hook, attrs, sub, self.object.as_ref(), true).await?;
        if let Some(answer) = answer {
            warnings.extend(answer.warnings);
            if !answer.allowed {
                return Err(webhook::denied(&hook.name, &answer.status));
            }
            if let (Some(patch), Some(obj)) = (answer.patch, self.object.as_mut()) {
                let before = obj.clone();
                match crate::patch::json_patch(obj, &patch) {
                    Ok(()) => {
                        if *obj != before {
                            self.reinvoke.append(&mut self.invoked);
                        }
                        self.patches.push(patch);
                    }
                    Err(e) if hook.fails_open() => {
                        *obj = before;
                        tracing::debug!(webhook = %hook.name, ?e, "patch not applied (failurePolicy Ignore)");
                    }
                    Err(e) => {
                        return Err(webhook::call_failed(
                            &hook.name,
                            &format!("JSON patch could not be applied: {e:?}"),
                        ));
                    }
                }
            }
        }
        if hook.reinvoke_if_needed() {
            self.invoked.push(i);
        }
        Ok(())
    }
}

/// The validating webhooks, all at once; the first refusal in their order.
async fn validate(
    call: &Call<'_>,
    sub: &str,
    attrs: &Attributes,
    rec: &Recorded,
    warnings: &mut Vec<String>,
) -> Result<(), ApiError> {
    if let Some(e) = &rec.refused {
        return Err(e.clone());
    }
    let attrs = rec.attrs.as_ref().map_or_else(
        || attrs.clone(),
        |a| Attributes {
            dry_run: attrs.dry_run,
            name: rec.validated_name.clone().unwrap_or_else(|| a.name.clone()),
            ..a.clone()
        },
    );
    let calls = rec
        .validating
        .iter()
        .map(|h| call_one(call, h, &attrs, sub, rec.to_validate.as_ref(), false));
    let answers = futures::future::join_all(calls).await;
    let mut first = None;
    for (hook, answer) in rec.validating.iter().zip(answers) {
        match answer {
            Ok(Some(a)) => {
                warnings.extend(a.warnings);
                if !a.allowed && first.is_none() {
                    first = Some(webhook::denied(&hook.name, &a.status));
                }
            }
            Ok(None) => {}
            Err(e) if first.is_none() => first = Some(e),
            Err(_) => {}
        }
    }
    first.map_or(Ok(()), Err)
}

/// Calls one webhook: its answer; `None` when the call failed and the
/// webhook's `failurePolicy` is `Ignore`; `Err` the refusal of a failed
/// call under `Fail`, or of a dry run it may not be sent.
async fn call_one(
    call: &Call<'_>,
    hook: &Hook,
    attrs: &Attributes,
    sub: &str,
    object: Option<&Value>,
    mutating: bool,
) -> Result<Option<webhook::Answer>, ApiError> {
    if attrs.dry_run && !hook.allows_dry_run() {
        return Err(webhook::dry_run_unsupported(&hook.name));
    }
    let uid = crate::util::uid();
    let review = webhook::review(
        attrs,
        sub,
        object,
        &user_info(),
        &options(call, attrs),
        &uid,
    );
    let result = async {
        let url = hook.url()?;
        let ca = hook.ca_pem()?;
        let body = serde_json::to_vec(&review).map_err(|e| e.to_string())?;
        let timeout = Duration::from_secs(hook.timeout_secs());
        let answer = client::post(url, ca.as_deref(), body, timeout).await?;
        webhook::read_answer(&answer, &uid, mutating)
    }
    .await;
    match result {
        Ok(a) => Ok(Some(a)),
        Err(why) if hook.fails_open() => {
            tracing::debug!(webhook = %hook.name, %why, "webhook call failed (failurePolicy Ignore)");
            Ok(None)
        }
        Err(why) => Err(webhook::call_failed(&hook.name, &why)),
    }
}

/// `request.options`: the write's options, as the create or update of
/// the operation (a patch's and an apply's too, as upstream converts
/// them).
fn options(call: &Call<'_>, attrs: &Attributes) -> Value {
    let kind = match attrs.operation {
        Operation::Create => "CreateOptions",
        Operation::Update => "UpdateOptions",
        Operation::Delete => "DeleteOptions",
    };
    let mut o = json!({"apiVersion": "meta.k8s.io/v1", "kind": kind});
    if attrs.dry_run {
        o["dryRun"] = json!(["All"]);
    }
    if let Some(m) = call.query.get("fieldManager") {
        o["fieldManager"] = json!(m);
    }
    o
}
