//! Typed handlers and their type-erased form the server dispatches to.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

use kubeset_client::admission::{AdmissionRequest, AdmissionResponse, Operation};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::patch::json_diff;

/// A validating handler's rejection: the message the client sees (after
/// kube-apiserver's `admission webhook "<name>" denied the request: `),
/// an HTTP code (default 403) and warnings.
///
/// ```
/// use kubeset_runtime::webhook::Denied;
/// let d = Denied::new("replicas must be odd").with_code(422).with_warning("see the docs");
/// assert_eq!(d.to_string(), "replicas must be odd");
/// assert_eq!(d.code, 422);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    /// Why.
    pub message: String,
    /// The HTTP code (400 and up; kube-apiserver makes smaller ones 403).
    pub code: u16,
    /// Warnings for the client.
    pub warnings: Vec<String>,
}

impl Denied {
    /// A denial with `message`, code 403.
    ///
    /// ```
    /// assert_eq!(kubeset_runtime::webhook::Denied::new("no").code, 403);
    /// ```
    #[must_use]
    pub fn new(message: impl Into<String>) -> Self {
        Denied {
            message: message.into(),
            code: 403,
            warnings: Vec::new(),
        }
    }

    /// Another HTTP code.
    ///
    /// ```
    /// assert_eq!(kubeset_runtime::webhook::Denied::new("no").with_code(400).code, 400);
    /// ```
    #[must_use]
    pub fn with_code(mut self, code: u16) -> Self {
        self.code = code;
        self
    }

    /// Adds a warning.
    ///
    /// ```
    /// let d = kubeset_runtime::webhook::Denied::new("no").with_warning("w");
    /// assert_eq!(d.warnings, ["w"]);
    /// ```
    #[must_use]
    pub fn with_warning(mut self, warning: impl Into<String>) -> Self {
        self.warnings.push(warning.into());
        self
    }

    fn answer(self, base: AdmissionResponse) -> AdmissionResponse {
        with_warnings(base, self.warnings).deny_with_code(self.code, self.message)
    }
}

impl std::fmt::Display for Denied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Denied {}

/// A mutating handler's answer: the object as it should be stored, and
/// warnings for the client.
///
/// ```
/// use kubeset_client::api::core::v1::ConfigMap;
/// use kubeset_runtime::webhook::Mutated;
/// let m = Mutated::new(ConfigMap::default()).with_warning("defaulted data");
/// assert_eq!(m.warnings, ["defaulted data"]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Mutated<K> {
    /// The changed object.
    pub object: K,
    /// Warnings for the client.
    pub warnings: Vec<String>,
}

impl<K> Mutated<K> {
    /// The changed object, no warnings.
    ///
    /// ```
    /// let m = kubeset_runtime::webhook::Mutated::new(1);
    /// assert!(m.warnings.is_empty());
    /// ```
    #[must_use]
    pub fn new(object: K) -> Self {
        Mutated {
            object,
            warnings: Vec::new(),
        }
    }

    /// Adds a warning.
    ///
    /// ```
    /// let m = kubeset_runtime::webhook::Mutated::new(1).with_warning("w");
    /// assert_eq!(m.warnings, ["w"]);
    /// ```
    #[must_use]
    pub fn with_warning(mut self, warning: impl Into<String>) -> Self {
        self.warnings.push(warning.into());
        self
    }
}

/// What a path's handlers do besides answering (the configuration's
/// `sideEffects`).
///
/// ```
/// use kubeset_runtime::webhook::SideEffects;
/// assert_eq!(SideEffects::default(), SideEffects::None);
/// assert_eq!(SideEffects::NoneOnDryRun.as_str(), "NoneOnDryRun");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SideEffects {
    /// Nothing: dry-run requests are handled as any other.
    #[default]
    None,
    /// Something, except when `dryRun` is true: the handler reads
    /// `req.dry_run` and skips it.
    NoneOnDryRun,
    /// Something: a dry-run request is denied without calling the handler
    /// (kube-apiserver does not send one to such a webhook; this guards a
    /// configuration that says otherwise).
    Some,
}

impl SideEffects {
    /// The configuration's spelling.
    ///
    /// ```
    /// assert_eq!(kubeset_runtime::webhook::SideEffects::Some.as_str(), "Some");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            SideEffects::None => "None",
            SideEffects::NoneOnDryRun => "NoneOnDryRun",
            SideEffects::Some => "Some",
        }
    }
}

/// A validating handler: any `Fn(AdmissionRequest<K>) -> impl Future<Output
/// = Result<Vec<String>, Denied>>` (the `Ok` holds warnings).
pub trait ValidateHandler<K>: Send + Sync + 'static {
    /// The handler's future.
    type Future: Future<Output = Result<Vec<String>, Denied>> + Send + 'static;
    /// Handles one request.
    fn call(&self, req: AdmissionRequest<K>) -> Self::Future;
}

impl<K, F, Fut> ValidateHandler<K> for F
where
    F: Fn(AdmissionRequest<K>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<String>, Denied>> + Send + 'static,
{
    type Future = Fut;
    fn call(&self, req: AdmissionRequest<K>) -> Fut {
        self(req)
    }
}

/// A mutating handler: any `Fn(AdmissionRequest<K>) -> impl Future<Output
/// = Result<Mutated<K>, Denied>>`.
pub trait MutateHandler<K>: Send + Sync + 'static {
    /// The handler's future.
    type Future: Future<Output = Result<Mutated<K>, Denied>> + Send + 'static;
    /// Handles one request.
    fn call(&self, req: AdmissionRequest<K>) -> Self::Future;
}

impl<K, F, Fut> MutateHandler<K> for F
where
    F: Fn(AdmissionRequest<K>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Mutated<K>, Denied>> + Send + 'static,
{
    type Future = Fut;
    fn call(&self, req: AdmissionRequest<K>) -> Fut {
        self(req)
    }
}

pub(crate) type Answer = Pin<Box<dyn Future<Output = AdmissionResponse> + Send>>;

/// A request whose object did not decode as the handler's kind.
#[derive(Debug)]
pub(crate) struct DecodeFailure {
    /// `request.object.data.x`.
    pub(crate) path: String,
    /// serde's message.
    pub(crate) message: String,
}

/// A handler with its kind erased.
pub(crate) trait Erased: Send + Sync {
    fn call(&self, req: AdmissionRequest<serde_json::Value>) -> Result<Answer, DecodeFailure>;
}

/// One handler of a path.
#[derive(Clone)]
pub(crate) struct Route {
    pub(crate) group: &'static str,
    pub(crate) kind: &'static str,
    /// Empty: all.
    pub(crate) operations: Vec<Operation>,
    pub(crate) handler: Arc<dyn Erased>,
}

impl Route {
    pub(crate) fn matches(&self, group: &str, kind: &str, operation: Operation) -> bool {
        self.group == group
            && self.kind == kind
            && (self.operations.is_empty() || self.operations.contains(&operation))
    }
}

pub(crate) struct Validator<K, H> {
    handler: H,
    kind: PhantomData<fn() -> K>,
}

impl<K, H> Validator<K, H> {
    pub(crate) fn new(handler: H) -> Self {
        Validator {
            handler,
            kind: PhantomData,
        }
    }
}

impl<K, H> Erased for Validator<K, H>
where
    K: DeserializeOwned + Send + 'static,
    H: ValidateHandler<K>,
{
    fn call(&self, req: AdmissionRequest<serde_json::Value>) -> Result<Answer, DecodeFailure> {
        let typed = decode::<K>(req)?;
        let base = AdmissionResponse::from(&typed);
        let answer = self.handler.call(typed);
        Ok(Box::pin(async move {
            match answer.await {
                Ok(warnings) => with_warnings(base, warnings),
                Err(denied) => denied.answer(base),
            }
        }))
    }
}

pub(crate) struct Mutator<K, H> {
    handler: H,
    kind: PhantomData<fn() -> K>,
}

impl<K, H> Mutator<K, H> {
    pub(crate) fn new(handler: H) -> Self {
        Mutator {
            handler,
            kind: PhantomData,
        }
    }
}

impl<K, H> Erased for Mutator<K, H>
where
    K: Serialize + DeserializeOwned + Send + 'static,
    H: MutateHandler<K>,
{
    fn call(&self, req: AdmissionRequest<serde_json::Value>) -> Result<Answer, DecodeFailure> {
        let typed = decode::<K>(req)?;
        let base = AdmissionResponse::from(&typed);
        let Some(object) = &typed.object else {
            // DELETE: nothing to mutate.
            return Ok(Box::pin(std::future::ready(base)));
        };
        let before = serde_json::to_value(object).map_err(|e| DecodeFailure {
            path: "request.object".to_owned(),
            message: format!("does not serialize back to JSON: {e}"),
        })?;
        let answer = self.handler.call(typed);
        Ok(Box::pin(async move {
            match answer.await {
                Ok(mutated) => patch_answer(base, &before, mutated),
                Err(denied) => denied.answer(base),
            }
        }))
    }
}

/// The response for a mutation: the patch from `before` to the answered
/// object, and the warnings.
fn patch_answer<K: Serialize>(
    base: AdmissionResponse,
    before: &serde_json::Value,
    mutated: Mutated<K>,
) -> AdmissionResponse {
    let base = with_warnings(base, mutated.warnings);
    let after = match serde_json::to_value(&mutated.object) {
        Ok(after) => after,
        Err(e) => {
            return base.deny_with_code(500, format!("the mutated object does not serialize: {e}"));
        }
    };
    let ops = json_diff(before, &after);
    if ops.is_empty() {
        return base;
    }
    match base.clone().with_patch(&ops) {
        Ok(response) => response,
        Err(e) => base.deny_with_code(500, format!("the patch does not serialize: {e}")),
    }
}

fn with_warnings(base: AdmissionResponse, warnings: Vec<String>) -> AdmissionResponse {
    warnings
        .into_iter()
        .fold(base, AdmissionResponse::with_warning)
}

/// The request with its objects decoded as `K`; a failure names the path.
fn decode<K: DeserializeOwned>(
    req: AdmissionRequest<serde_json::Value>,
) -> Result<AdmissionRequest<K>, DecodeFailure> {
    let object = decode_object::<K>("request.object", req.object)?;
    let old_object = decode_object::<K>("request.oldObject", req.old_object)?;
    Ok(AdmissionRequest {
        types: req.types,
        uid: req.uid,
        kind: req.kind,
        resource: req.resource,
        sub_resource: req.sub_resource,
        request_kind: req.request_kind,
        request_resource: req.request_resource,
        request_sub_resource: req.request_sub_resource,
        name: req.name,
        namespace: req.namespace,
        operation: req.operation,
        user_info: req.user_info,
        object,
        old_object,
        dry_run: req.dry_run,
        options: req.options,
    })
}

fn decode_object<K: DeserializeOwned>(
    field: &str,
    value: Option<serde_json::Value>,
) -> Result<Option<K>, DecodeFailure> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    serde_path_to_error::deserialize::<_, K>(value)
        .map(Some)
        .map_err(|e| {
            let path = e.path().to_string();
            DecodeFailure {
                path: if path == "." {
                    field.to_owned()
                } else {
                    format!("{field}.{path}")
                },
                message: e.into_inner().to_string(),
            }
        })
}
