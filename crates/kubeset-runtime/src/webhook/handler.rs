//! Typed handlers and their type-erased form the server dispatches to.

use std::future::Future;
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

/// A handler with its kind erased: what [`validator`] and [`mutator`] make
/// of a typed handler.
pub(crate) trait Erased: Send + Sync {
    fn call(&self, req: AdmissionRequest<serde_json::Value>) -> Result<Answer, DecodeFailure>;
}

impl<F> Erased for F
where
    F: Fn(AdmissionRequest<serde_json::Value>) -> Result<Answer, DecodeFailure> + Send + Sync,
{
    fn call(&self, req: AdmissionRequest<serde_json::Value>) -> Result<Answer, DecodeFailure> {
        self(req)
    }
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

/// A validating handler of `K`, erased: `Ok(warnings)` admits with them.
pub(crate) fn validator<K, H>(handler: H) -> Arc<dyn Erased>
where
    K: DeserializeOwned + Send + 'static,
    H: ValidateHandler<K>,
{
    erase(move |req| {
        let typed = decode::<K>(req)?;
        let base = AdmissionResponse::from(&typed);
        Ok(answer(base, handler.call(typed), with_warnings))
    })
}

/// A mutating handler of `K`, erased: `Ok(mutated)` admits with the patch
/// from the object received to the one answered. A request without an
/// object (DELETE) is admitted without calling it.
pub(crate) fn mutator<K, H>(handler: H) -> Arc<dyn Erased>
where
    K: Serialize + DeserializeOwned + Send + 'static,
    H: MutateHandler<K>,
{
    erase(move |req| {
        let typed = decode::<K>(req)?;
        let base = AdmissionResponse::from(&typed);
        let Some(object) = &typed.object else {
            return Ok(Box::pin(std::future::ready(base)));
        };
        let before = serde_json::to_value(object).map_err(|e| DecodeFailure {
            path: "request.object".to_owned(),
            message: format!("does not serialize back to JSON: {e}"),
        })?;
        let admitted = move |base, mutated| patch_answer(base, &before, mutated);
        Ok(answer(base, handler.call(typed), admitted))
    })
}

/// `call` as an [`Erased`] handler.
fn erase<F>(call: F) -> Arc<dyn Erased>
where
    F: Fn(AdmissionRequest<serde_json::Value>) -> Result<Answer, DecodeFailure>
        + Send
        + Sync
        + 'static,
{
    Arc::new(call)
}

/// The answer to come of a handler's `call`: `admitted` of its `Ok`, or
/// its denial, on the `base` response to the request.
fn answer<T, F>(
    base: AdmissionResponse,
    call: impl Future<Output = Result<T, Denied>> + Send + 'static,
    admitted: F,
) -> Answer
where
    F: FnOnce(AdmissionResponse, T) -> AdmissionResponse + Send + 'static,
{
    Box::pin(async move {
        match call.await {
            Ok(value) => admitted(base, value),
            Err(denied) => denied.answer(base),
        }
    })
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use kubeset_client::admission::PatchType;
    use kubeset_client::api::core::v1::ConfigMap;
    use serde_json::{Value, json};

    use super::*;
    use crate::webhook::Webhook;

    fn request(operation: &str, object: Option<Value>) -> AdmissionRequest<Value> {
        let mut req = json!({
            "uid": "u-1",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "name": "cm",
            "namespace": "ns",
            "operation": operation,
        });
        if let Some(object) = object {
            req["object"] = object;
        }
        serde_json::from_value(req).expect("an AdmissionRequest")
    }

    fn cm(data: Value) -> Option<Value> {
        Some(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": data}),
        )
    }

    /// The answer of the one handler registered at `path`.
    async fn answer(
        webhook: &Webhook,
        path: &str,
        req: AdmissionRequest<Value>,
    ) -> Result<AdmissionResponse, DecodeFailure> {
        let routes = &webhook.routes[path];
        assert_eq!(routes.len(), 1, "one handler at {path}");
        Ok(routes[0].handler.call(req)?.await)
    }

    fn patch_of(response: &AdmissionResponse) -> Value {
        serde_json::from_slice(response.patch.as_deref().expect("a patch")).expect("patch JSON")
    }

    #[tokio::test]
    async fn a_validator_answers_its_warnings_or_its_denial() {
        let webhook = Webhook::new().validate::<ConfigMap, _>(
            "/v",
            |req: AdmissionRequest<ConfigMap>| async move {
                let data = req.object.and_then(|cm| cm.data).unwrap_or_default();
                if data.contains_key("password") {
                    return Err(Denied::new("no passwords")
                        .with_code(422)
                        .with_warning("use a Secret"));
                }
                Ok(vec!["looked".to_owned(), "twice".to_owned()])
            },
        );
        let admitted = answer(&webhook, "/v", request("CREATE", cm(json!({"k": "v"}))))
            .await
            .expect("decodes");
        assert_eq!(admitted.uid, "u-1");
        assert!(admitted.allowed);
        assert_eq!(
            admitted.warnings,
            Some(vec!["looked".to_owned(), "twice".to_owned()])
        );
        assert_eq!(admitted.patch, None);

        let denied = answer(
            &webhook,
            "/v",
            request("CREATE", cm(json!({"password": "x"}))),
        )
        .await
        .expect("decodes");
        assert!(!denied.allowed);
        assert_eq!(denied.result.code, Some(422));
        assert_eq!(denied.result.message.as_deref(), Some("no passwords"));
        assert_eq!(denied.warnings, Some(vec!["use a Secret".to_owned()]));
    }

    #[tokio::test]
    async fn an_object_that_does_not_decode_names_its_path_for_both_handlers() {
        let webhook = Webhook::new()
            .validate::<ConfigMap, _>("/v", |_req: AdmissionRequest<ConfigMap>| async {
                Ok(vec![])
            })
            .mutate::<ConfigMap, _>("/m", |req: AdmissionRequest<ConfigMap>| async move {
                Ok(Mutated::new(req.object.unwrap_or_default()))
            });
        for path in ["/v", "/m"] {
            let Err(failure) = answer(&webhook, path, request("CREATE", cm(json!({"k": 5})))).await
            else {
                panic!("{path}: a number in data decoded as a string");
            };
            assert_eq!(failure.path, "request.object.data.k", "{path}");
        }
    }

    #[tokio::test]
    async fn a_mutator_answers_the_patch_its_warnings_or_its_denial() {
        let webhook = Webhook::new().mutate::<ConfigMap, _>(
            "/m",
            |req: AdmissionRequest<ConfigMap>| async move {
                let mut cm = req.object.unwrap_or_default();
                let data = cm.data.get_or_insert_default();
                if data.contains_key("deny") {
                    return Err(Denied::new("denied by the mutator"));
                }
                if data.contains_key("keep") {
                    return Ok(Mutated::new(cm).with_warning("unchanged"));
                }
                data.insert("mode".to_owned(), "default".to_owned());
                Ok(Mutated::new(cm).with_warning("defaulted"))
            },
        );
        let changed = answer(&webhook, "/m", request("CREATE", cm(json!({"k": "v"}))))
            .await
            .expect("decodes");
        assert!(changed.allowed);
        assert_eq!(changed.patch_type, Some(PatchType::JsonPatch));
        assert_eq!(
            patch_of(&changed),
            json!([{"op": "add", "path": "/data/mode", "value": "default"}])
        );
        assert_eq!(changed.warnings, Some(vec!["defaulted".to_owned()]));

        let unchanged = answer(&webhook, "/m", request("UPDATE", cm(json!({"keep": "1"}))))
            .await
            .expect("decodes");
        assert!(unchanged.allowed);
        assert_eq!((unchanged.patch, unchanged.patch_type), (None, None));
        assert_eq!(unchanged.warnings, Some(vec!["unchanged".to_owned()]));

        let denied = answer(&webhook, "/m", request("CREATE", cm(json!({"deny": "1"}))))
            .await
            .expect("decodes");
        assert!(!denied.allowed);
        assert_eq!(denied.result.code, Some(403));
        assert_eq!(denied.patch, None);
    }

    #[tokio::test]
    async fn a_mutator_is_not_called_without_an_object() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let webhook =
            Webhook::new().mutate::<ConfigMap, _>("/m", move |req: AdmissionRequest<ConfigMap>| {
                counted.fetch_add(1, Ordering::SeqCst);
                async move { Ok(Mutated::new(req.object.unwrap_or_default())) }
            });
        let response = answer(&webhook, "/m", request("DELETE", None))
            .await
            .expect("decodes");
        assert!(response.allowed);
        assert_eq!(response.uid, "u-1");
        assert_eq!(response.patch, None);
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    }
}
