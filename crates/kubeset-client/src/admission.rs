//! The `admission.k8s.io/v1` `AdmissionReview` protocol, typed, with
//! kube-rs's names and shapes (`kube::core::admission`): what an
//! admission webhook receives ([`AdmissionReview`] holding an
//! [`AdmissionRequest<T>`]) and answers ([`AdmissionResponse`] wrapped by
//! [`AdmissionResponse::into_review`]).
//!
//! These are plain serde types, always compiled. A server that receives
//! them over TLS, with typed handlers, is `kubeset::runtime::webhook`
//! (feature `webhook`).
//!
//! ```
//! use kubeset_client::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
//! use kubeset_client::dynamic::DynamicObject;
//!
//! let body = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{
//!   "uid":"705ab4f5","kind":{"group":"","version":"v1","kind":"ConfigMap"},
//!   "resource":{"group":"","version":"v1","resource":"configmaps"},
//!   "namespace":"default","operation":"CREATE","userInfo":{"username":"admin"},
//!   "object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}},"dryRun":false}}"#;
//! let review: AdmissionReview<DynamicObject> = serde_json::from_str(body).unwrap();
//! let req: AdmissionRequest<DynamicObject> = review.try_into().unwrap();
//! assert_eq!(req.operation, Operation::Create);
//!
//! let answer = AdmissionResponse::from(&req)
//!     .deny("names must start with app-")
//!     .with_warning("checked by the example")
//!     .into_review();
//! let json = serde_json::to_value(&answer).unwrap();
//! assert_eq!(json["response"]["uid"], "705ab4f5");
//! assert_eq!(json["response"]["allowed"], false);
//! assert_eq!(json["response"]["status"]["message"], "names must start with app-");
//! ```
//!
//! Differences from kube-rs: the types carry no `T: Resource` bound (a
//! review of `serde_json::Value` works too); [`UserInfo`],
//! [`GroupVersionKind`], [`GroupVersionResource`] and [`TypeMeta`] are
//! this module's own plain structs (kube-rs takes `UserInfo` from
//! k8s-openapi's `authentication/v1`, which a build without
//! `authentication-v1` would not have); [`AdmissionResponse::with_patch`]
//! takes any serializable RFC 6902 patch (kube-rs: `json_patch::Patch`,
//! which still works, being serializable).

use std::collections::{BTreeMap, HashMap};

use kubeset_api::ByteString;
use kubeset_api::apimachinery::pkg::apis::meta::v1::Status;
use serde::ser::SerializeStruct as _;
use serde::{Deserialize, Serialize};

use crate::dynamic::DynamicObject;

/// The `apiVersion` of the reviews this module reads and writes.
pub const API_VERSION: &str = "admission.k8s.io/v1";
/// The `kind` of a review.
pub const KIND: &str = "AdmissionReview";

/// `apiVersion` and `kind` of a review (kube-rs's `TypeMeta`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeMeta {
    /// `apiVersion`, e.g. `admission.k8s.io/v1`.
    #[serde(rename = "apiVersion", default)]
    pub api_version: String,
    /// `kind`, e.g. `AdmissionReview`.
    #[serde(default)]
    pub kind: String,
}

impl TypeMeta {
    /// `admission.k8s.io/v1` `AdmissionReview`.
    ///
    /// ```
    /// let t = kubeset_client::admission::TypeMeta::review();
    /// assert_eq!((t.api_version.as_str(), t.kind.as_str()), ("admission.k8s.io/v1", "AdmissionReview"));
    /// ```
    pub fn review() -> Self {
        TypeMeta {
            api_version: API_VERSION.to_owned(),
            kind: KIND.to_owned(),
        }
    }
}

/// A group, version and kind (`{"group":"apps","version":"v1","kind":"Deployment"}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GroupVersionKind {
    /// The API group, `""` for the core group.
    #[serde(default)]
    pub group: String,
    /// The version.
    #[serde(default)]
    pub version: String,
    /// The kind.
    #[serde(default)]
    pub kind: String,
}

impl GroupVersionKind {
    /// kube-rs's `GroupVersionKind::gvk(group, version, kind)`.
    ///
    /// ```
    /// use kubeset_client::admission::GroupVersionKind;
    /// let gvk = GroupVersionKind::gvk("apps", "v1", "Deployment");
    /// assert_eq!((gvk.group.as_str(), gvk.kind.as_str()), ("apps", "Deployment"));
    /// ```
    pub fn gvk(group: &str, version: &str, kind: &str) -> Self {
        GroupVersionKind {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
        }
    }
}

/// A group, version and resource (`{"group":"","version":"v1","resource":"configmaps"}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GroupVersionResource {
    /// The API group, `""` for the core group.
    #[serde(default)]
    pub group: String,
    /// The version.
    #[serde(default)]
    pub version: String,
    /// The resource (plural).
    #[serde(default)]
    pub resource: String,
}

/// Who made the request (authentication/v1 `UserInfo`'s fields).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserInfo {
    /// The user's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// A unique value for the user across time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The groups the user is in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
    /// Extra information from the authenticator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<BTreeMap<String, Vec<String>>>,
}

/// The operation of an [`AdmissionRequest`] (`"CREATE"`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Operation {
    /// `CREATE`.
    Create,
    /// `UPDATE`.
    Update,
    /// `DELETE`.
    Delete,
    /// `CONNECT` (exec, attach, port-forward, proxy).
    Connect,
}

impl Operation {
    /// The wire name (`"CREATE"`).
    ///
    /// ```
    /// assert_eq!(kubeset_client::admission::Operation::Delete.as_str(), "DELETE");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The type of [`AdmissionResponse::patch`]: only `"JSONPatch"` exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PatchType {
    /// RFC 6902 JSON patch.
    #[serde(rename = "JSONPatch")]
    JsonPatch,
}

/// An admission review: a `request` from the API server or a `response`
/// to it, with `apiVersion: admission.k8s.io/v1` and `kind: AdmissionReview`.
///
/// Decoding does not buffer (no `flatten`), so a failure names its path
/// (`request.object.data.x`) through `serde_path_to_error`.
#[derive(Debug, Clone, PartialEq)]
pub struct AdmissionReview<T> {
    /// `apiVersion` and `kind`.
    pub types: TypeMeta,
    /// The request (set by the API server).
    pub request: Option<AdmissionRequest<T>>,
    /// The response (set by the webhook).
    pub response: Option<AdmissionResponse>,
}

/// The envelope of both reviews (`AdmissionReview`, `ConversionReview`):
/// `apiVersion`, `kind`, and a `request` or a `response`. Decoded without
/// `flatten`, so a failure names its path (`request.uid`).
#[derive(Deserialize)]
struct ReviewWire<Q, R> {
    #[serde(rename = "apiVersion", default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default = "none")]
    request: Option<Q>,
    #[serde(default = "none")]
    response: Option<R>,
}

fn none<T>() -> Option<T> {
    None
}

/// A review's envelope as read: its type, request and response.
pub(crate) type Envelope<Q, R> = (TypeMeta, Option<Q>, Option<R>);

/// Reads a review's envelope (both reviews' `Deserialize`).
pub(crate) fn read_review<'de, D, Q, R>(deserializer: D) -> Result<Envelope<Q, R>, D::Error>
where
    D: serde::Deserializer<'de>,
    Q: Deserialize<'de>,
    R: Deserialize<'de>,
{
    let wire = ReviewWire::<Q, R>::deserialize(deserializer)?;
    let types = TypeMeta {
        api_version: wire.api_version,
        kind: wire.kind,
    };
    Ok((types, wire.request, wire.response))
}

/// Writes a review's envelope, `name` being its kind (both reviews'
/// `Serialize`): `apiVersion`, `kind`, then `request` and `response` when
/// set.
pub(crate) fn write_review<S: serde::Serializer>(
    serializer: S,
    name: &'static str,
    types: &TypeMeta,
    request: Option<&impl Serialize>,
    response: Option<&impl Serialize>,
) -> Result<S::Ok, S::Error> {
    let len = 2 + usize::from(request.is_some()) + usize::from(response.is_some());
    let mut state = serializer.serialize_struct(name, len)?;
    state.serialize_field("apiVersion", &types.api_version)?;
    state.serialize_field("kind", &types.kind)?;
    if let Some(request) = request {
        state.serialize_field("request", request)?;
    }
    if let Some(response) = response {
        state.serialize_field("response", response)?;
    }
    state.end()
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for AdmissionReview<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (types, request, response) =
            read_review::<D, AdmissionRequest<T>, AdmissionResponse>(deserializer)?;
        let request = request.map(|mut r| {
            r.types = types.clone();
            r
        });
        Ok(AdmissionReview {
            types,
            request,
            response,
        })
    }
}

impl<T: Serialize> Serialize for AdmissionReview<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        write_review(
            serializer,
            "AdmissionReview",
            &self.types,
            self.request.as_ref(),
            self.response.as_ref(),
        )
    }
}

/// A review without a request could not become an [`AdmissionRequest`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertAdmissionReviewError {
    /// The review has no `request`.
    #[error("the AdmissionReview has no request")]
    MissingRequest,
}

impl<T> TryFrom<AdmissionReview<T>> for AdmissionRequest<T> {
    type Error = ConvertAdmissionReviewError;

    fn try_from(review: AdmissionReview<T>) -> Result<Self, Self::Error> {
        let mut request = review
            .request
            .ok_or(ConvertAdmissionReviewError::MissingRequest)?;
        request.types = review.types;
        Ok(request)
    }
}

/// What the API server asks a webhook about (`AdmissionReview.request`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest<T> {
    /// The enclosing review's `apiVersion` and `kind` (copied when the
    /// review is decoded; not on the wire of the request itself).
    #[serde(skip)]
    pub types: TypeMeta,
    /// Identifies this round trip; the response must echo it.
    pub uid: String,
    /// The kind of the object (for example `v1 ConfigMap`, `autoscaling/v1 Scale`).
    pub kind: GroupVersionKind,
    /// The resource requested.
    pub resource: GroupVersionResource,
    /// The subresource (`status`, `scale`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_resource: Option<String>,
    /// The kind of the original request, when the server converted it to
    /// the webhook's version (`matchPolicy: Equivalent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_kind: Option<GroupVersionKind>,
    /// The resource of the original request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_resource: Option<GroupVersionResource>,
    /// The subresource of the original request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_sub_resource: Option<String>,
    /// The object's name (empty on a create with `generateName`).
    #[serde(default)]
    pub name: String,
    /// The namespace, for namespaced kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The operation.
    pub operation: Operation,
    /// The requesting user.
    #[serde(default)]
    pub user_info: UserInfo,
    /// The object as it would be stored (none on DELETE).
    #[serde(default = "none", skip_serializing_if = "Option::is_none")]
    pub object: Option<T>,
    /// The object before the operation (UPDATE and DELETE).
    #[serde(default = "none", skip_serializing_if = "Option::is_none")]
    pub old_object: Option<T>,
    /// A dry run: a webhook must have no side effects for it.
    #[serde(default)]
    pub dry_run: bool,
    /// The operation's options (`CreateOptions`, `UpdateOptions`, …) as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<serde_json::Value>,
}

/// A webhook's answer (`AdmissionReview.response`), built from the
/// request it answers with [`AdmissionResponse::from`].
///
/// ```
/// use kubeset_client::admission::{AdmissionRequest, AdmissionResponse, SerializePatchError};
/// # fn f(req: &AdmissionRequest<serde_json::Value>) -> Result<(), SerializePatchError> {
/// let patch = serde_json::json!([{"op": "add", "path": "/metadata/labels/team", "value": "a"}]);
/// let review = AdmissionResponse::from(req).with_patch(patch)?.into_review();
/// # let _ = review; Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    /// The review's `apiVersion` and `kind`, for [`into_review`](Self::into_review).
    #[serde(skip)]
    pub types: TypeMeta,
    /// The request's `uid`.
    pub uid: String,
    /// Whether the request is admitted.
    pub allowed: bool,
    /// Why not (`status` on the wire): message, reason and code of a denial.
    #[serde(rename = "status", default)]
    pub result: Status,
    /// An RFC 6902 JSON patch (raw bytes; base64 on the wire).
    #[serde(default, with = "patch_bytes", skip_serializing_if = "Option::is_none")]
    pub patch: Option<Vec<u8>>,
    /// `JSONPatch` when `patch` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<PatchType>,
    /// Annotations the API server adds to the audit event (keys are
    /// prefixed with the webhook's name there).
    #[serde(default, skip_serializing_if = "HashMap::is_empty")]
    pub audit_annotations: HashMap<String, String>,
    /// Warnings the API server passes to the client (`Warning` headers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
}

mod patch_bytes {
    use super::ByteString;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer>(
        patch: &Option<Vec<u8>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match patch {
            Some(bytes) => ByteString(bytes.clone()).serialize(serializer),
            None => serializer.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Vec<u8>>, D::Error> {
        Ok(Option::<ByteString>::deserialize(deserializer)?.map(|b| b.0))
    }
}

/// A patch that did not serialize ([`AdmissionResponse::with_patch`]).
#[derive(Debug, thiserror::Error)]
#[error("serializing the admission patch")]
pub struct SerializePatchError {
    /// serde_json's error.
    #[source]
    pub source: serde_json::Error,
}

impl<T> From<&AdmissionRequest<T>> for AdmissionResponse {
    /// An allowing answer to `req` (its `uid`, the review's type).
    fn from(req: &AdmissionRequest<T>) -> Self {
        let types = if req.types.kind.is_empty() {
            TypeMeta::review()
        } else {
            req.types.clone()
        };
        AdmissionResponse {
            types,
            uid: req.uid.clone(),
            allowed: true,
            result: Status::default(),
            patch: None,
            patch_type: None,
            audit_annotations: HashMap::new(),
            warnings: None,
        }
    }
}

impl AdmissionResponse {
    /// An answer to a request that could not be read (no `uid` to echo):
    /// denied with `reason`, code 400.
    ///
    /// ```
    /// let r = kubeset_client::admission::AdmissionResponse::invalid("no request");
    /// assert!(!r.allowed);
    /// assert_eq!(r.result.code, Some(400));
    /// ```
    #[must_use]
    pub fn invalid(reason: impl std::fmt::Display) -> Self {
        let mut response = AdmissionResponse::from(&AdmissionRequest::<()>::placeholder());
        response.allowed = false;
        response.result = failure(400, "BadRequest", reason.to_string());
        response
    }

    /// Denies the request with `reason` (code 403, reason `Forbidden`): the
    /// client sees `admission webhook "<name>" denied the request: <reason>`.
    ///
    /// ```
    /// # use kubeset_client::admission::{AdmissionRequest, AdmissionResponse};
    /// # fn f(req: &AdmissionRequest<()>) {
    /// let r = AdmissionResponse::from(req).deny("too big");
    /// assert_eq!(r.result.message.as_deref(), Some("too big"));
    /// # }
    /// ```
    #[must_use]
    pub fn deny(self, reason: impl std::fmt::Display) -> Self {
        self.deny_with_code(403, reason)
    }

    /// Denies with an HTTP `code` of your own (400 and up; the API server
    /// turns smaller codes into 403).
    ///
    /// ```
    /// # use kubeset_client::admission::{AdmissionRequest, AdmissionResponse};
    /// # fn f(req: &AdmissionRequest<()>) {
    /// let r = AdmissionResponse::from(req).deny_with_code(422, "bad field");
    /// assert_eq!(r.result.code, Some(422));
    /// # }
    /// ```
    #[must_use]
    pub fn deny_with_code(mut self, code: u16, reason: impl std::fmt::Display) -> Self {
        self.allowed = false;
        let reason_name = match code {
            400 => "BadRequest",
            403 => "Forbidden",
            404 => "NotFound",
            409 => "Conflict",
            422 => "Invalid",
            429 => "TooManyRequests",
            504 => "Timeout",
            _ => "",
        };
        self.result = failure(code, reason_name, reason.to_string());
        self
    }

    /// Adds a warning for the client (a `Warning: 299` header there).
    ///
    /// ```
    /// # use kubeset_client::admission::{AdmissionRequest, AdmissionResponse};
    /// # fn f(req: &AdmissionRequest<()>) {
    /// let r = AdmissionResponse::from(req).with_warning("field x is deprecated");
    /// assert_eq!(r.warnings, Some(vec!["field x is deprecated".to_owned()]));
    /// # }
    /// ```
    #[must_use]
    pub fn with_warning(mut self, warning: impl Into<String>) -> Self {
        self.warnings
            .get_or_insert_with(Vec::new)
            .push(warning.into());
        self
    }

    /// Adds an audit annotation.
    ///
    /// ```
    /// # use kubeset_client::admission::{AdmissionRequest, AdmissionResponse};
    /// # fn f(req: &AdmissionRequest<()>) {
    /// let r = AdmissionResponse::from(req).with_audit_annotation("checked", "yes");
    /// assert_eq!(r.audit_annotations["checked"], "yes");
    /// # }
    /// ```
    #[must_use]
    pub fn with_audit_annotation(
        mut self,
        key: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        self.audit_annotations.insert(key.into(), value.into());
        self
    }

    /// Sets an RFC 6902 JSON patch (any serializable list of operations:
    /// a `serde_json::Value` array, `json_patch::Patch`, …); `patchType`
    /// becomes `JSONPatch`.
    ///
    /// # Errors
    ///
    /// [`SerializePatchError`] when `patch` does not serialize.
    pub fn with_patch(mut self, patch: impl Serialize) -> Result<Self, SerializePatchError> {
        let bytes = serde_json::to_vec(&patch).map_err(|source| SerializePatchError { source })?;
        self.patch = Some(bytes);
        self.patch_type = Some(PatchType::JsonPatch);
        Ok(self)
    }

    /// The review that carries this answer back to the API server.
    ///
    /// ```
    /// # use kubeset_client::admission::{AdmissionRequest, AdmissionResponse};
    /// # fn f(req: &AdmissionRequest<()>) {
    /// let review = AdmissionResponse::from(req).into_review();
    /// assert_eq!(review.types.kind, "AdmissionReview");
    /// # }
    /// ```
    pub fn into_review(self) -> AdmissionReview<DynamicObject> {
        AdmissionReview {
            types: self.types.clone(),
            request: None,
            response: Some(self),
        }
    }
}

impl AdmissionRequest<()> {
    fn placeholder() -> Self {
        AdmissionRequest {
            types: TypeMeta::review(),
            uid: String::new(),
            kind: GroupVersionKind::default(),
            resource: GroupVersionResource::default(),
            sub_resource: None,
            request_kind: None,
            request_resource: None,
            request_sub_resource: None,
            name: String::new(),
            namespace: None,
            operation: Operation::Create,
            user_info: UserInfo::default(),
            object: None,
            old_object: None,
            dry_run: false,
            options: None,
        }
    }
}

fn failure(code: u16, reason: &str, message: String) -> Status {
    Status {
        code: Some(i32::from(code)),
        message: Some(message),
        reason: (!reason.is_empty()).then(|| reason.to_owned()),
        status: Some("Failure".to_owned()),
        ..Status::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review_json() -> serde_json::Value {
        serde_json::json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u-1",
                "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "resource": {"group": "", "version": "v1", "resource": "configmaps"},
                "requestKind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "name": "cm",
                "namespace": "ns",
                "operation": "UPDATE",
                "userInfo": {"username": "u", "groups": ["g"], "extra": {"k": ["v"]}},
                "object": {"metadata": {"name": "cm"}},
                "oldObject": {"metadata": {"name": "cm"}},
                "dryRun": true,
                "options": {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"}
            }
        })
    }

    #[test]
    fn request_reads_every_field_and_writes_them_back() {
        let review: AdmissionReview<serde_json::Value> =
            serde_json::from_value(review_json()).unwrap();
        let req = AdmissionRequest::try_from(review.clone()).unwrap();
        assert_eq!(req.types, TypeMeta::review());
        assert_eq!(req.operation, Operation::Update);
        assert!(req.dry_run);
        assert_eq!(req.user_info.groups, Some(vec!["g".to_owned()]));
        assert_eq!(req.request_kind.as_ref().unwrap().kind, "ConfigMap");
        assert!(req.old_object.is_some());
        assert_eq!(serde_json::to_value(&review).unwrap(), review_json());
    }

    #[test]
    fn response_wire_names_and_base64_patch() {
        let review: AdmissionReview<serde_json::Value> =
            serde_json::from_value(review_json()).unwrap();
        let req = AdmissionRequest::try_from(review).unwrap();
        let patch = serde_json::json!([{"op": "add", "path": "/data", "value": {}}]);
        let out = AdmissionResponse::from(&req)
            .with_patch(&patch)
            .unwrap()
            .with_warning("w")
            .with_audit_annotation("a", "b")
            .into_review();
        let json = serde_json::to_value(&out).unwrap();
        let response = &json["response"];
        assert_eq!(json["apiVersion"], "admission.k8s.io/v1");
        assert_eq!(response["uid"], "u-1");
        assert_eq!(response["allowed"], true);
        assert_eq!(response["patchType"], "JSONPatch");
        assert_eq!(response["warnings"], serde_json::json!(["w"]));
        assert_eq!(response["auditAnnotations"], serde_json::json!({"a": "b"}));
        let encoded: ByteString = serde_json::from_value(response["patch"].clone()).unwrap();
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&encoded.0).unwrap(),
            patch
        );
        let back: AdmissionReview<DynamicObject> = serde_json::from_value(json).unwrap();
        assert_eq!(
            back.response.unwrap().patch,
            Some(serde_json::to_vec(&patch).unwrap())
        );
    }

    #[test]
    fn a_decoding_error_names_its_path() {
        let mut sent = review_json();
        sent["request"]["operation"] = serde_json::json!("PATCH");
        let err = serde_path_to_error::deserialize::<_, AdmissionReview<serde_json::Value>>(sent)
            .unwrap_err();
        assert_eq!(err.path().to_string(), "request.operation");
        let response = serde_json::json!({"response": {"uid": "u", "allowed": "yes"}});
        let err = serde_path_to_error::deserialize::<_, AdmissionReview<()>>(response).unwrap_err();
        assert_eq!(err.path().to_string(), "response.allowed");
    }

    #[test]
    fn missing_request_is_an_error() {
        let review: AdmissionReview<serde_json::Value> = serde_json::from_value(
            serde_json::json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}),
        )
        .unwrap();
        assert_eq!(
            AdmissionRequest::try_from(review).unwrap_err(),
            ConvertAdmissionReviewError::MissingRequest
        );
    }
}
