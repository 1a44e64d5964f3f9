//! The `apiextensions.k8s.io/v1` `ConversionReview` protocol with
//! kube-rs's names and shapes (`kube::core::conversion`): what a CRD's
//! conversion webhook receives ([`ConversionReview`] holding a
//! [`ConversionRequest`]: `uid`, `desiredAPIVersion`, `objects`) and
//! answers ([`ConversionResponse`]: `uid`, `convertedObjects`, `result`).
//!
//! Plain serde types, always compiled. A server that converts typed
//! versions through a hub is `kubeset::runtime::webhook::Conversion`
//! (feature `webhook`).
//!
//! ```
//! use kubeset_client::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
//!
//! let body = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{
//!   "uid":"c1","desiredAPIVersion":"example.com/v2",
//!   "objects":[{"apiVersion":"example.com/v1","kind":"Person","metadata":{"name":"a"},"spec":{"name":"Ada Lovelace"}}]}}"#;
//! let review: ConversionReview = serde_json::from_str(body).unwrap();
//! let req = ConversionRequest::from_review(review).unwrap();
//! assert_eq!(req.desired_api_version, "example.com/v2");
//!
//! let mut converted = req.objects.clone();
//! converted[0]["apiVersion"] = "example.com/v2".into();
//! let answer = ConversionResponse::for_request(req).success(converted).into_review();
//! let json = serde_json::to_value(&answer).unwrap();
//! assert_eq!(json["response"]["uid"], "c1");
//! assert_eq!(json["response"]["result"]["status"], "Success");
//! assert_eq!(json["response"]["convertedObjects"][0]["apiVersion"], "example.com/v2");
//! ```
//!
//! Differences from kube-rs: [`TypeMeta`] is `kubeset_client::admission`'s
//! (the same two fields); [`ConversionResponse::failure_message`] builds
//! the failed `result` from a message.

use kubeset_api::apimachinery::pkg::apis::meta::v1::Status;
use serde::{Deserialize, Serialize};

pub use crate::admission::TypeMeta;
use crate::admission::{read_review, write_review};

/// The `apiVersion` of the reviews this module reads and writes (`v1`;
/// a CRD's `conversionReviewVersions` must list it).
pub const META_API_VERSION_V1: &str = "apiextensions.k8s.io/v1";
/// The `kind` of a review.
pub const META_KIND: &str = "ConversionReview";

/// A conversion review: a `request` from the API server or a `response`
/// to it.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversionReview {
    /// `apiVersion` and `kind`.
    pub types: TypeMeta,
    /// The request (set by the API server).
    pub request: Option<ConversionRequest>,
    /// The response (set by the webhook).
    pub response: Option<ConversionResponse>,
}

impl<'de> Deserialize<'de> for ConversionReview {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (types, request, response) =
            read_review::<D, ConversionRequest, ConversionResponse>(deserializer)?;
        Ok(ConversionReview {
            request: request.map(|mut r: ConversionRequest| {
                r.types = Some(types.clone());
                r
            }),
            response,
            types,
        })
    }
}

impl Serialize for ConversionReview {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        write_review(
            serializer,
            "ConversionReview",
            &self.types,
            self.request.as_ref(),
            self.response.as_ref(),
        )
    }
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<serde_json::Value>, D::Error> {
    Ok(Option::<Vec<serde_json::Value>>::deserialize(deserializer)?.unwrap_or_default())
}

/// A review without a request could not become a [`ConversionRequest`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("request missing in ConversionReview")]
pub struct ConvertConversionReviewError;

/// What the API server asks a conversion webhook (`ConversionReview.request`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversionRequest {
    /// The enclosing review's `apiVersion` and `kind` (copied when the
    /// review is decoded; not on the wire of the request itself).
    #[serde(skip)]
    pub types: Option<TypeMeta>,
    /// Identifies this round trip; the response must echo it.
    pub uid: String,
    /// The group and version to convert every object to (`example.com/v2`).
    #[serde(rename = "desiredAPIVersion")]
    pub desired_api_version: String,
    /// The objects, in one or more versions.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub objects: Vec<serde_json::Value>,
}

impl ConversionRequest {
    /// The review's request, with the review's `types`.
    ///
    /// ```
    /// use kubeset_client::conversion::{ConversionRequest, ConversionReview};
    /// let review: ConversionReview = serde_json::from_str(
    ///     r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}"#).unwrap();
    /// assert!(ConversionRequest::from_review(review).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`ConvertConversionReviewError`] when the review has no request.
    pub fn from_review(review: ConversionReview) -> Result<Self, ConvertConversionReviewError> {
        let mut request = review.request.ok_or(ConvertConversionReviewError)?;
        request.types = Some(review.types);
        Ok(request)
    }
}

impl TryFrom<ConversionReview> for ConversionRequest {
    type Error = ConvertConversionReviewError;

    fn try_from(review: ConversionReview) -> Result<Self, Self::Error> {
        ConversionRequest::from_review(review)
    }
}

/// A conversion webhook's answer (`ConversionReview.response`), made with
/// [`for_request`](Self::for_request) and finished with
/// [`success`](Self::success) or [`failure`](Self::failure).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionResponse {
    /// The review's `apiVersion` and `kind`, for [`into_review`](Self::into_review).
    #[serde(skip)]
    pub types: Option<TypeMeta>,
    /// The request's `uid`.
    pub uid: String,
    /// `status: Success`, or `Failure` with a message the client sees.
    pub result: Status,
    /// The converted objects, in the request's order (empty on failure).
    /// kube-apiserver sends `null` here in the empty response of its
    /// request; it reads as empty.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub converted_objects: Vec<serde_json::Value>,
}

impl From<ConversionRequest> for ConversionResponse {
    fn from(request: ConversionRequest) -> Self {
        ConversionResponse::for_request(request)
    }
}

impl From<ConversionResponse> for ConversionReview {
    fn from(response: ConversionResponse) -> Self {
        response.into_review()
    }
}

impl ConversionResponse {
    /// An unfinished answer to `request` (its `uid` and review type); the
    /// `result` is empty until [`success`](Self::success) or
    /// [`failure`](Self::failure).
    ///
    /// ```
    /// # use kubeset_client::conversion::{ConversionRequest, ConversionResponse};
    /// # fn f(req: ConversionRequest) {
    /// let uid = req.uid.clone();
    /// assert_eq!(ConversionResponse::for_request(req).uid, uid);
    /// # }
    /// ```
    #[must_use]
    pub fn for_request(request: ConversionRequest) -> Self {
        ConversionResponse {
            types: request.types,
            uid: request.uid,
            result: Status::default(),
            converted_objects: Vec::new(),
        }
    }

    /// Succeeds with `converted_objects`, in the request's order.
    ///
    /// ```
    /// # use kubeset_client::conversion::{ConversionRequest, ConversionResponse};
    /// # fn f(req: ConversionRequest) {
    /// let r = ConversionResponse::for_request(req).success(vec![]);
    /// assert_eq!(r.result.status.as_deref(), Some("Success"));
    /// # }
    /// ```
    #[must_use]
    pub fn success(mut self, converted_objects: Vec<serde_json::Value>) -> Self {
        self.result = Status {
            status: Some("Success".to_owned()),
            ..Status::default()
        };
        self.converted_objects = converted_objects;
        self
    }

    /// Fails with `status` (its `status` is set to `Failure`); no objects.
    ///
    /// ```
    /// # use kubeset_client::conversion::{ConversionRequest, ConversionResponse};
    /// # use kubeset_client::apimachinery::pkg::apis::meta::v1::Status;
    /// # fn f(req: ConversionRequest) {
    /// let status = Status { message: Some("v3 is unknown".into()), ..Status::default() };
    /// let r = ConversionResponse::for_request(req).failure(status);
    /// assert_eq!(r.result.status.as_deref(), Some("Failure"));
    /// # }
    /// ```
    #[must_use]
    pub fn failure(mut self, mut status: Status) -> Self {
        status.status = Some("Failure".to_owned());
        self.result = status;
        self.converted_objects = Vec::new();
        self
    }

    /// [`failure`](Self::failure) with `message` (the client sees it after
    /// kube-apiserver's `conversion webhook for <gvk> failed: `).
    ///
    /// ```
    /// # use kubeset_client::conversion::{ConversionRequest, ConversionResponse};
    /// # fn f(req: ConversionRequest) {
    /// let r = ConversionResponse::for_request(req).failure_message("v3 is unknown");
    /// assert_eq!(r.result.message.as_deref(), Some("v3 is unknown"));
    /// # }
    /// ```
    #[must_use]
    pub fn failure_message(self, message: impl Into<String>) -> Self {
        self.failure(Status {
            message: Some(message.into()),
            ..Status::default()
        })
    }

    /// A failed answer to a review that could not be read (no `uid` to echo).
    ///
    /// ```
    /// use kubeset_client::apimachinery::pkg::apis::meta::v1::Status;
    /// let r = kubeset_client::conversion::ConversionResponse::invalid(Status::default());
    /// assert!(r.uid.is_empty());
    /// ```
    #[must_use]
    pub fn invalid(status: Status) -> Self {
        ConversionResponse {
            types: None,
            uid: String::new(),
            result: Status::default(),
            converted_objects: Vec::new(),
        }
        .failure(status)
    }

    /// The review that carries this answer back (`apiextensions.k8s.io/v1`
    /// unless the request said otherwise).
    ///
    /// ```
    /// # use kubeset_client::conversion::{ConversionRequest, ConversionResponse};
    /// # fn f(req: ConversionRequest) {
    /// let review = ConversionResponse::for_request(req).success(vec![]).into_review();
    /// assert_eq!(review.types.kind, "ConversionReview");
    /// # }
    /// ```
    pub fn into_review(self) -> ConversionReview {
        let types = self
            .types
            .clone()
            .filter(|t| !t.kind.is_empty())
            .unwrap_or_else(|| TypeMeta {
                api_version: META_API_VERSION_V1.to_owned(),
                kind: META_KIND.to_owned(),
            });
        ConversionReview {
            types,
            request: None,
            response: Some(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review_json() -> serde_json::Value {
        serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {
                "uid": "u-1",
                "desiredAPIVersion": "example.com/v2",
                "objects": [{"apiVersion": "example.com/v1", "kind": "Person", "metadata": {"name": "a"}}]
            }
        })
    }

    #[test]
    fn request_round_trips_with_wire_names() {
        let review: ConversionReview = serde_json::from_value(review_json()).unwrap();
        assert_eq!(serde_json::to_value(&review).unwrap(), review_json());
        let req = ConversionRequest::try_from(review).unwrap();
        assert_eq!(req.types.as_ref().unwrap().kind, "ConversionReview");
        assert_eq!(req.uid, "u-1");
        assert_eq!(req.objects.len(), 1);
    }

    #[test]
    fn response_wire_names() {
        let review: ConversionReview = serde_json::from_value(review_json()).unwrap();
        let req = ConversionRequest::from_review(review).unwrap();
        let objects = req.objects.clone();
        let ok = serde_json::to_value(ConversionReview::from(
            ConversionResponse::from(req.clone()).success(objects.clone()),
        ))
        .unwrap();
        assert_eq!(
            ok,
            serde_json::json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "ConversionReview",
                "response": {"uid": "u-1", "convertedObjects": objects, "result": {
                    "apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Success"}}
            })
        );
        let failed = serde_json::to_value(
            ConversionResponse::for_request(req)
                .failure_message("no")
                .into_review(),
        )
        .unwrap();
        assert_eq!(
            failed["response"],
            serde_json::json!({"uid": "u-1", "convertedObjects": [], "result": {
                "apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure", "message": "no"}})
        );
    }

    #[test]
    fn the_api_servers_empty_response_with_null_objects_reads() {
        // kube-apiserver v1.35 sends this `response` beside its request.
        let mut sent = review_json();
        sent["response"] =
            serde_json::json!({"uid": "", "convertedObjects": null, "result": {"metadata": {}}});
        let review: ConversionReview = serde_json::from_value(sent).unwrap();
        assert_eq!(
            review.response.unwrap().converted_objects,
            Vec::<serde_json::Value>::new()
        );
        assert_eq!(review.request.unwrap().objects.len(), 1);
    }

    #[test]
    fn a_decoding_error_names_its_path() {
        let mut sent = review_json();
        sent["request"]["objects"] = serde_json::json!({"not": "a list"});
        let err = serde_path_to_error::deserialize::<_, ConversionReview>(sent).unwrap_err();
        assert_eq!(err.path().to_string(), "request.objects");
        let response = serde_json::json!({"kind": "ConversionReview", "response": {"uid": 7}});
        let err = serde_path_to_error::deserialize::<_, ConversionReview>(response).unwrap_err();
        assert_eq!(err.path().to_string(), "response.uid");
    }

    #[test]
    fn review_without_request_is_an_error() {
        let review: ConversionReview = serde_json::from_value(serde_json::json!({})).unwrap();
        assert_eq!(
            ConversionRequest::from_review(review).unwrap_err(),
            ConvertConversionReviewError
        );
        assert_eq!(
            ConversionResponse::invalid(Status::default())
                .into_review()
                .types
                .api_version,
            META_API_VERSION_V1
        );
    }
}
