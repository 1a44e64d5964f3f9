//! Admission of custom resources: what kube-apiserver does to a custom
//! resource between decoding a write and storing it, from the CRD
//! version's structural schema compiled once ([`schema::Schema`], kept on
//! the served [`Resource`] as a [`schema::Lazy`]: compiled on its first
//! use, once per process for the same JSON). A CRD created through the API
//! has its schemas compiled when it is admitted ([`crd`]), so that a rule
//! that does not compile or is too expensive refuses it; one installed
//! with `TestServer::register_crd` is checked for structure only, and a
//! schema of it that does not compile fails its first write (500).
//!
//! In the real server's order ([`admit`]):
//! 1. **Pruning** ([`shape::prune`]): fields the schema does not declare
//!    are dropped (kept under `x-kubernetes-preserve-unknown-fields`).
//!    `fieldValidation` decides what the client hears: `Warn` (the
//!    default) a `Warning: unknown field "spec.x"` per field, `Strict` a
//!    400 (`strict decoding error: …`; 422 on field `patch` for a patch),
//!    `Ignore` nothing. A server-side apply whose configuration has such a
//!    field, or a value of the wrong type, fails as structured-merge-diff
//!    fails it: 500, `failed to create typed patch object`.
//! 2. **Defaults** ([`shape::default`]), after dropping `null`s a field
//!    may not hold.
//! 3. **Validation** ([`validate::validate`]): every error of the object
//!    at once, as one 422 Invalid with the real server's causes; on an
//!    update only the changed values (ratcheting).
//! 4. **CEL rules** ([`cel::validate`], `x-kubernetes-validations`), unless
//!    the schema already refused a value in a way that blocks them; their
//!    causes join the schema's in the same 422.
//!
//! Admission policies and webhooks ([`policies`]: [`mutating`], the
//! mutating [`webhook`]s, then [`policy`] and the validating webhooks)
//! run after, once the object is stamped, from the store's write hook.
//!
//! Reads go through [`on_read`] (pruning and defaults, as the real
//! server's storage decoder), so defaults added to a CRD later show on
//! objects stored before. [`crd`] checks CustomResourceDefinitions
//! themselves.
//!
//! A built-in kind's object is held to metadata's rules
//! ([`crate::validation`]) and to its kind's own, which its strategy
//! names ([`crate::registry::Strategy::validate`], the rules in
//! [`builtin`]).
//!
//! Not yet: the scale
//! subresource's checks, ObjectMeta rules of embedded resources beyond
//! `apiVersion`/`kind`.

pub(crate) mod builtin;
mod cel;
pub(crate) mod crd;
mod format;
mod mutating;
pub(crate) mod policy;
pub(crate) mod schema;
mod shape;
mod validate;
pub(crate) mod webhook;

use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::resources::Resource;
use crate::status::ApiError;

/// `?fieldValidation=`: what an unknown field costs a write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum FieldValidation {
    /// Dropped silently.
    Ignore,
    /// Dropped with a `Warning` header per field (the default).
    #[default]
    Warn,
    /// The write fails.
    Strict,
}

impl FieldValidation {
    /// The query parameter's value; anything else is `Warn` (refusing an
    /// unknown value is the query parameters' check, not admission's).
    pub(crate) fn parse(s: Option<&str>) -> Self {
        match s {
            Some("Strict") => Self::Strict,
            Some("Ignore") => Self::Ignore,
            _ => Self::Warn,
        }
    }
}

/// How a write reached admission: the verb decides the shape of a
/// refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verb {
    /// POST or PUT: the body was decoded.
    Write,
    /// A JSON, merge or strategic merge patch: the patched object was.
    Patch,
    /// Server-side apply: the configuration was typed against the schema.
    Apply,
}

/// The `Warning` texts a write collects, shared by the handler (which
/// sends them) and the store (which runs admission).
#[derive(Debug, Clone, Default)]
pub(crate) struct Warnings(Arc<Mutex<Vec<String>>>);

impl Warnings {
    pub(crate) fn extend(&self, w: impl IntoIterator<Item = String>) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).extend(w);
    }

    /// The warnings collected so far.
    pub(crate) fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// What a write asks of admission.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    pub(crate) field_validation: FieldValidation,
    /// `None`: an internal write (controllers, the collector), not checked
    /// for unknown fields.
    pub(crate) verb: Option<Verb>,
    pub(crate) warnings: Warnings,
    /// The webhook pass of a client's write when webhooks are configured
    /// ([`webhook::Pass`]); `None` otherwise (and for internal writes).
    pub(crate) webhooks: Option<Arc<webhook::Pass>>,
    /// A CRD installed with `TestServer::register_crd`: its schemas are
    /// checked for structure here and compiled on first use
    /// ([`schema::Lazy`]), not now.
    pub(crate) defer_crd_schemas: bool,
}

impl Options {
    /// A value the server makes up for a new object (`key`: its generated
    /// `name`, its `uid`, its `creationTimestamp`): the same in every pass
    /// of a write through webhooks ([`webhook::Pass::made_up`]), so that
    /// the webhooks see what is stored.
    pub(crate) fn made_up(&self, key: &'static str, make: impl FnOnce() -> String) -> String {
        match &self.webhooks {
            Some(pass) => pass.made_up(key, make),
            None => make(),
        }
    }
}

/// The schema errors after which kube-apiserver does not evaluate CEL
/// rules (`hasBlockingErr`).
const BLOCKING: &[&str] = &[
    "FieldValueNotSupported",
    "FieldValueRequired",
    "FieldValueTooLong",
    "FieldValueTooMany",
    "FieldValueTypeInvalid",
];

/// Admits `obj` (named `name`) as a write of `res`, `old` being the stored
/// object on an update: prunes and defaults it in place, collects the
/// unknown-field warnings in `opts`, and refuses it as the real server
/// would.
pub(crate) fn admit(
    res: &Resource,
    name: &str,
    obj: &mut Value,
    old: Option<&Value>,
    opts: &Options,
) -> Result<(), ApiError> {
    if res.group == "apiextensions.k8s.io" && res.plural == "customresourcedefinitions" {
        return settle(res, name, crd::problems(obj, !opts.defer_crd_schemas), opts);
    }
    if !res.custom {
        let mut causes = crate::validation::builtin_problems(res, obj, old);
        // An update that is no client's write of the kind (a subresource:
        // binding, scale, status; the controllers' and the store's own
        // writes) is not held to the kind's update rules: the real server
        // validates those by the subresource's own.
        if old.is_none() || opts.verb.is_some() {
            causes.extend(crate::registry::of(res).validate(res, obj, old));
        }
        causes.extend(policy::problems(res, obj));
        if res.group == policy::GROUP {
            causes.extend(mutating::problems(&res.plural, obj));
            causes.extend(webhook::problems(&res.plural, obj));
        }
        return settle(res, name, causes, opts);
    }
    let Some(lazy) = &res.compiled else {
        return Ok(());
    };
    let schema = lazy.get().map_err(|p| uncompiled(res, p))?;
    let root = &schema.root;
    let before = (opts.field_validation == FieldValidation::Strict
        && opts.verb == Some(Verb::Patch))
    .then(|| obj.to_string());
    let unknown = shape::prune(root, obj);
    if opts.verb == Some(Verb::Apply) {
        if let Some(first) = unknown.first() {
            return Err(typed_patch_error(
                res,
                name,
                &format!(".{first}: field not declared in schema"),
            ));
        }
        if let Some(c) = validate::validate(root, obj, old)
            .into_iter()
            .find(|c| c.reason == "FieldValueTypeInvalid")
        {
            return Err(typed_patch_error(
                res,
                name,
                &format!(".{}: {}", c.field, c.message),
            ));
        }
    }
    if !unknown.is_empty() && opts.verb.is_some() {
        match opts.field_validation {
            FieldValidation::Strict => return Err(strict_error(res, &unknown, before)),
            FieldValidation::Warn => opts
                .warnings
                .extend(unknown.iter().map(|p| format!("unknown field \"{p}\""))),
            FieldValidation::Ignore => {}
        }
    }
    shape::default(root, obj);
    shape::integral_numbers(obj);
    let mut causes: Vec<_> = validate::validate(root, obj, old)
        .into_iter()
        .map(|c| (c.field, c.reason, c.message))
        .collect();
    if !schema.has_rules {
        return settle(res, name, causes, opts);
    }
    if !causes.iter().any(|c| BLOCKING.contains(&c.1)) {
        let outcome = cel::validate(root, obj, old);
        opts.warnings.extend(outcome.warnings);
        causes.extend(
            outcome
                .causes
                .into_iter()
                .map(|c| (c.field, c.reason, c.message)),
        );
    } else {
        // The real server skips CEL rules on an object its schema already
        // refuses this way, and says so.
        causes.push((
            "<nil>".into(),
            "FieldValueInvalid",
            "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation".into(),
        ));
    }
    settle(res, name, causes, opts)
}

/// The admission policies of a write, in kube-apiserver's order: the
/// mutating policies change `object` ([`mutating::admit`]); what they
/// changed is defaulted and validated again ([`admit`], as the real
/// server validates after all mutating admission); then the validating
/// policies decide ([`policy::admit`]). Their warnings join `opts`'.
/// `req.object` is not read: `object` is the one written (`None` on a
/// delete).
pub(crate) fn policies(
    world: &dyn policy::Lookup,
    req: &policy::Request<'_>,
    object: Option<&mut Value>,
    opts: &Options,
) -> Result<(), ApiError> {
    let mut object = object;
    if let Some(obj) = object.as_deref_mut() {
        let mut changed = mutating::admit(world, req, obj)?;
        // The mutating webhooks after the mutating policies, as
        // kube-apiserver orders its plugins.
        if let Some(pass) = &opts.webhooks {
            changed |= pass.mutate(world, req, obj)?;
            // The object as sent was invalid and nothing mutated it: its
            // validation refusal stands. Mutated, it is validated again.
            let deferred = pass.take_deferred();
            if let Some(e) = deferred.filter(|_| !changed) {
                return Err(e);
            }
        }
        if changed {
            crate::registry::of(req.res).on_decode(obj);
            let again = Options {
                field_validation: FieldValidation::Ignore,
                verb: opts.verb.map(|_| Verb::Write),
                warnings: Warnings::default(),
                webhooks: None,
                defer_crd_schemas: opts.defer_crd_schemas,
            };
            admit(req.res, req.name, obj, req.old, &again)?;
        }
    }
    let req = policy::Request {
        object: object.as_deref(),
        ..*req
    };
    let decision = policy::admit(world, &req);
    opts.warnings.extend(decision.warnings);
    if let Some(denied) = decision.denied {
        return Err(denied);
    }
    // The validating webhooks after the validating policies.
    if let Some(pass) = &opts.webhooks {
        pass.validate(world, &req);
    }
    Ok(())
}

/// The validation verdict of a write: a 422 Invalid with `causes`, held
/// by the write's webhook pass until its mutating admission has run
/// ([`webhook::Pass::defer`]; [`policies`] answers it), or nothing when
/// there are none.
fn settle(
    res: &Resource,
    name: &str,
    causes: Vec<(String, &'static str, String)>,
    opts: &Options,
) -> Result<(), ApiError> {
    match (ApiError::invalid_if_any(res, name, &causes), &opts.webhooks) {
        (Err(e), Some(pass)) => {
            pass.defer(e);
            Ok(())
        }
        (r, _) => r,
    }
}

/// The answer to a write of a custom resource whose CRD's schema does not
/// compile: only a CRD installed with `TestServer::register_crd`, whose
/// schema is compiled on first use, gets here (one created through the API
/// was refused); a 500 naming the CRD and its first problems.
fn uncompiled(res: &Resource, problems: &[schema::Problem]) -> ApiError {
    let shown: Vec<String> = problems
        .iter()
        .take(8)
        .map(|p| format!("openAPIV3Schema{}: {}", p.path, p.message))
        .collect();
    ApiError::internal(&format!(
        "the schema of {}.{} version {} does not compile (registered with register_crd, \
         compiled on first use): {}",
        res.plural,
        res.group,
        res.version,
        shown.join("; ")
    ))
}

/// A stored object as a read returns it: pruned and defaulted by the
/// schema of the version it is read in.
pub(crate) fn on_read(res: &Resource, obj: &mut Value) {
    if let Some(Ok(schema)) = res.compiled.as_ref().map(schema::Lazy::get) {
        shape::prune(&schema.root, obj);
        shape::default(&schema.root, obj);
    }
}

/// structured-merge-diff refusing an apply configuration: a 500 without a
/// reason.
fn typed_patch_error(res: &Resource, name: &str, what: &str) -> ApiError {
    ApiError {
        code: 500,
        reason: "",
        message: format!(
            "failed to create typed patch object (/{name}; {}, Kind={}): {what}",
            res.api_version(),
            res.kind
        ),
        details: None,
    }
}

fn strict_error(res: &Resource, unknown: &[String], patched: Option<String>) -> ApiError {
    let fields: Vec<String> = unknown
        .iter()
        .map(|p| format!("unknown field \"{p}\""))
        .collect();
    let text = format!("strict decoding error: {}", fields.join(", "));
    match patched {
        Some(obj) => ApiError::invalid_patch(obj, &text),
        None => ApiError::bad_request(format!(
            "{kind} in version \"{v}\" cannot be handled as a {kind}: {text}",
            kind = res.kind,
            v = res.version
        )),
    }
}
