//! The shape of an object as structured-merge-diff sees it: which nodes
//! are structs (named fields), maps (free keys), lists and scalars, and how
//! each list and map is owned — atomically, as a set of values
//! (`listType=set`), or item by item under its keys (`listType=map`).
//!
//! kube-apiserver reads this from the OpenAPI schema of the kind
//! (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
//! `x-kubernetes-map-type`); so does this module: the built-in kinds' from
//! the schemas compiled into kubeset-api (the `schemas` feature), a custom
//! resource's from its CRD version's `openAPIV3Schema`, with `metadata`
//! always `ObjectMeta`'s (as the CRD handler adds it). A kind without a
//! schema, and a node that keeps unknown fields, is *deduced* from the
//! value: objects are maps of their keys, lists are atomic.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use kubeset_api::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset_api::schema::{
    Definition, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool, JsonSchema,
};
use serde_json::Value;

use crate::resources::Resource;

/// How the items of a list are owned.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ListKind {
    /// The list is one value (the default).
    Atomic,
    /// Scalar items owned one by one, by value (`v:"x"`).
    Set,
    /// Object items owned one by one, by their key fields (`k:{...}`);
    /// each key with its schema default, used when an item omits it.
    Map(Vec<(String, Option<Value>)>),
}

/// The type of a scalar node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scalar {
    /// Any scalar (int-or-string, or untyped).
    Any,
    /// `type: string`.
    String,
    /// `type: integer`.
    Integer,
    /// `type: number`.
    Number,
    /// `type: boolean`.
    Boolean,
}

impl Scalar {
    /// Whether `v` is a value of this type (null fits every type).
    pub(crate) fn fits(self, v: &Value) -> bool {
        match self {
            _ if v.is_null() => true,
            Scalar::Any => !v.is_object() && !v.is_array(),
            Scalar::String => v.is_string(),
            Scalar::Integer => v.is_i64() || v.is_u64(),
            Scalar::Number => v.is_number(),
            Scalar::Boolean => v.is_boolean(),
        }
    }

    /// The type's name in structured-merge-diff's errors.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Scalar::Any => "scalar",
            Scalar::String => "string",
            Scalar::Integer => "integer",
            Scalar::Number => "numeric",
            Scalar::Boolean => "boolean",
        }
    }
}

/// One node of an object's shape.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shape {
    /// A string, number or boolean.
    Scalar(Scalar),
    /// Unknown: deduced from the value at hand.
    Deduced,
    /// An object: declared `fields`, and `rest` for any other key (a map's
    /// values; `None` in a closed struct). `atomic` owns it as one value.
    Object {
        /// The declared fields.
        fields: BTreeMap<String, Arc<Shape>>,
        /// The shape of undeclared keys, if they are allowed.
        rest: Option<Arc<Shape>>,
        /// `x-kubernetes-map-type: atomic`.
        atomic: bool,
    },
    /// A list of `item`s.
    List {
        /// The items' shape.
        item: Arc<Shape>,
        /// How they are owned.
        kind: ListKind,
    },
}

impl Shape {
    /// The shape of the field or map key `key` of an object node; `None`
    /// when a closed struct does not declare it.
    pub(crate) fn field(&self, key: &str) -> Option<&Shape> {
        match self {
            Shape::Object { fields, rest, .. } => fields.get(key).or(rest.as_ref()).map(|s| &**s),
            _ => Some(&Shape::Deduced),
        }
    }

    /// Whether `key` is a declared field (not a map key) of this node.
    pub(crate) fn declares(&self, key: &str) -> bool {
        matches!(self, Shape::Object { fields, .. } if fields.contains_key(key))
    }

    /// The shape a value is walked with: a deduced node becomes a map of
    /// deduced values, an atomic list or a scalar, by the value's type.
    pub(crate) fn resolve<'a>(&'a self, v: Option<&Value>) -> &'a Shape {
        static MAP: OnceLock<Shape> = OnceLock::new();
        static LIST: OnceLock<Shape> = OnceLock::new();
        match (self, v) {
            (Shape::Deduced, Some(Value::Object(_))) => MAP.get_or_init(|| Shape::Object {
                fields: BTreeMap::new(),
                rest: Some(Arc::new(Shape::Deduced)),
                atomic: false,
            }),
            (Shape::Deduced, Some(Value::Array(_))) => LIST.get_or_init(|| Shape::List {
                item: Arc::new(Shape::Deduced),
                kind: ListKind::Atomic,
            }),
            (Shape::Deduced, _) => &Shape::Scalar(Scalar::Any),
            _ => self,
        }
    }
}

/// Converts a structural schema node.
pub(crate) fn from_schema(s: &JSONSchemaProps) -> Shape {
    if s.x_kubernetes_int_or_string == Some(true) {
        return Shape::Scalar(Scalar::Any);
    }
    let keeps_unknown = s.x_kubernetes_preserve_unknown_fields == Some(true);
    match s.type_.as_deref() {
        Some("array") => {
            let item = match &s.items {
                Some(JSONSchemaPropsOrArray::Schema(i)) => from_schema(i),
                _ => Shape::Deduced,
            };
            let kind = match s.x_kubernetes_list_type.as_deref() {
                Some("set") => ListKind::Set,
                Some("map") => ListKind::Map(map_keys(s)),
                _ => ListKind::Atomic,
            };
            Shape::List {
                item: Arc::new(item),
                kind,
            }
        }
        Some("object") | None if s.properties.is_some() || s.additional_properties.is_some() => {
            let fields = s
                .properties
                .iter()
                .flatten()
                .map(|(k, v)| (k.clone(), Arc::new(from_schema(v))))
                .collect();
            let rest = match &s.additional_properties {
                Some(JSONSchemaPropsOrBool::Schema(v)) => Some(Arc::new(from_schema(v))),
                Some(JSONSchemaPropsOrBool::Bool(true)) => Some(Arc::new(Shape::Deduced)),
                _ if keeps_unknown => Some(Arc::new(Shape::Deduced)),
                _ => None,
            };
            Shape::Object {
                fields,
                rest,
                atomic: s.x_kubernetes_map_type.as_deref() == Some("atomic"),
            }
        }
        // An object without properties (RawExtension): its keys are
        // deduced, as kube-openapi's conversion leaves them.
        Some("object") if s.x_kubernetes_map_type.as_deref() == Some("atomic") => Shape::Object {
            fields: BTreeMap::new(),
            rest: Some(Arc::new(Shape::Deduced)),
            atomic: true,
        },
        Some("object") | None => Shape::Deduced,
        Some("string") => Shape::Scalar(Scalar::String),
        Some("integer") => Shape::Scalar(Scalar::Integer),
        Some("number") => Shape::Scalar(Scalar::Number),
        Some("boolean") => Shape::Scalar(Scalar::Boolean),
        Some(_) => Shape::Scalar(Scalar::Any),
    }
}

/// A `listType=map` list's keys with the defaults their items' schema
/// gives them.
fn map_keys(s: &JSONSchemaProps) -> Vec<(String, Option<Value>)> {
    let item = match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(i)) => Some(&**i),
        _ => None,
    };
    s.x_kubernetes_list_map_keys
        .iter()
        .flatten()
        .map(|k| {
            let default = item
                .and_then(|i| i.properties.as_ref())
                .and_then(|p| p.get(k))
                .and_then(|p| p.default.as_ref())
                .map(|d| d.0.clone());
            (k.clone(), default)
        })
        .collect()
}

/// The root shape of a kind: its schema's, with `apiVersion` and `kind`
/// scalars and `metadata` `ObjectMeta`'s.
fn root(schema: Option<&JSONSchemaProps>) -> Shape {
    let mut shape = schema.map_or(Shape::Deduced, from_schema);
    if !matches!(shape, Shape::Object { .. }) {
        shape = Shape::Object {
            fields: BTreeMap::new(),
            rest: Some(Arc::new(Shape::Deduced)),
            atomic: false,
        };
    }
    if let Shape::Object { fields, atomic, .. } = &mut shape {
        *atomic = false;
        static META: OnceLock<Arc<Shape>> = OnceLock::new();
        let meta = META.get_or_init(|| Arc::new(from_schema(&ObjectMeta::json_schema())));
        fields.insert("metadata".into(), meta.clone());
        fields.insert("apiVersion".into(), Arc::new(Shape::Scalar(Scalar::String)));
        fields.insert("kind".into(), Arc::new(Shape::Scalar(Scalar::String)));
    }
    shape
}

/// The shape of a served resource's objects, built once per kind (a
/// custom resource's again when its CRD changes).
pub(crate) fn of(res: &Resource) -> Arc<Shape> {
    type Cache = Mutex<HashMap<(String, String), (Option<Arc<Value>>, Arc<Shape>)>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let key = (res.api_version(), res.kind.to_string());
    let cache = CACHE.get_or_init(Cache::default);
    if let Some((schema, shape)) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key)
        && same_schema(schema.as_ref(), res.schema.as_ref())
    {
        return shape.clone();
    }
    let shape = Arc::new(build(res));
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, (res.schema.clone(), shape.clone()));
    shape
}

/// Whether two resources' schemas are the same: the same `Arc` (a CRD
/// unchanged) first, then equal JSON.
fn same_schema(a: Option<&Arc<Value>>, b: Option<&Arc<Value>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
        (None, None) => true,
        _ => false,
    }
}

fn build(res: &Resource) -> Shape {
    if res.custom {
        let schema = res
            .schema
            .as_ref()
            .and_then(|s| <JSONSchemaProps as serde::Deserialize>::deserialize(&**s).ok());
        return root(schema.as_ref());
    }
    root(builtin_schema(&res.api_version(), &res.kind).as_ref())
}

/// The schema compiled into kubeset-api of a built-in kind (`apps/v1`,
/// `Deployment`), built on each call; `None` for a kind without one.
pub(crate) fn builtin_schema(api_version: &str, kind: &str) -> Option<JSONSchemaProps> {
    builtin(api_version, kind).map(|c| (c.build)())
}

/// The compiled schema of a built-in kind as data (its properties'
/// facts, [`Definition`]); `None` for a kind without one.
pub(crate) fn builtin_definition(api_version: &str, kind: &str) -> Option<Definition> {
    builtin(api_version, kind).and_then(|c| c.definition)
}

fn builtin(api_version: &str, kind: &str) -> Option<Compiled> {
    BUILTIN
        .binary_search_by(|(av, k, _)| (*av, *k).cmp(&(api_version, kind)))
        .ok()
        .map(|i| BUILTIN[i].2)
}

/// A kind's compiled schema: built on demand, and as data.
#[derive(Clone, Copy)]
struct Compiled {
    build: fn() -> JSONSchemaProps,
    definition: Option<Definition>,
}

const fn schema_of<T: JsonSchema>() -> Compiled {
    Compiled {
        build: T::json_schema,
        definition: T::DEFINITION,
    }
}

/// Every built-in kind with a compiled schema, sorted by apiVersion and
/// kind (the top-level kinds of kubeset-api's protobuf table that have a
/// `JsonSchema` impl; `CustomResourceDefinition`, in a reference cycle,
/// has none and is deduced, and so have v1.37's `scheduling.k8s.io`
/// `v1alpha3`/`v1beta1` `Workload`, whose composite pod group templates
/// nest: the tests' `WITHOUT_SCHEMA`). A kind the selected Kubernetes
/// version lacks (the `v1_*` features, forwarded to kubeset-api) is left
/// out, and one only older versions serve is in under them (v1.37's rows:
/// `not(any(.., v1_36))`; v1.36's only, `scheduling.k8s.io/v1alpha2`:
/// `v1_36`).
#[rustfmt::skip]
const BUILTIN: &[(&str, &str, Compiled)] = &[
    #[cfg(not(any(feature = "v1_33", feature = "v1_34", feature = "v1_35")))]
    ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy", schema_of::<kubeset_api::api::admissionregistration::v1::MutatingAdmissionPolicy>()),
    #[cfg(not(any(feature = "v1_33", feature = "v1_34", feature = "v1_35")))]
    ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicyBinding", schema_of::<kubeset_api::api::admissionregistration::v1::MutatingAdmissionPolicyBinding>()),
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", schema_of::<kubeset_api::api::admissionregistration::v1::MutatingWebhookConfiguration>()),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", schema_of::<kubeset_api::api::admissionregistration::v1::ValidatingAdmissionPolicy>()),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", schema_of::<kubeset_api::api::admissionregistration::v1::ValidatingAdmissionPolicyBinding>()),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", schema_of::<kubeset_api::api::admissionregistration::v1::ValidatingWebhookConfiguration>()),
    ("admissionregistration.k8s.io/v1alpha1", "MutatingAdmissionPolicy", schema_of::<kubeset_api::api::admissionregistration::v1alpha1::MutatingAdmissionPolicy>()),
    ("admissionregistration.k8s.io/v1alpha1", "MutatingAdmissionPolicyBinding", schema_of::<kubeset_api::api::admissionregistration::v1alpha1::MutatingAdmissionPolicyBinding>()),
    #[cfg(not(feature = "v1_33"))]
    ("admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicy", schema_of::<kubeset_api::api::admissionregistration::v1beta1::MutatingAdmissionPolicy>()),
    #[cfg(not(feature = "v1_33"))]
    ("admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicyBinding", schema_of::<kubeset_api::api::admissionregistration::v1beta1::MutatingAdmissionPolicyBinding>()),
    #[cfg(feature = "v1_33")]
    ("admissionregistration.k8s.io/v1beta1", "ValidatingAdmissionPolicy", schema_of::<kubeset_api::api::admissionregistration::v1beta1::ValidatingAdmissionPolicy>()),
    #[cfg(feature = "v1_33")]
    ("admissionregistration.k8s.io/v1beta1", "ValidatingAdmissionPolicyBinding", schema_of::<kubeset_api::api::admissionregistration::v1beta1::ValidatingAdmissionPolicyBinding>()),
    ("apiregistration.k8s.io/v1", "APIService", schema_of::<kubeset_api::kube_aggregator::pkg::apis::apiregistration::v1::APIService>()),
    ("apps/v1", "ControllerRevision", schema_of::<kubeset_api::api::apps::v1::ControllerRevision>()),
    ("apps/v1", "DaemonSet", schema_of::<kubeset_api::api::apps::v1::DaemonSet>()),
    ("apps/v1", "Deployment", schema_of::<kubeset_api::api::apps::v1::Deployment>()),
    ("apps/v1", "ReplicaSet", schema_of::<kubeset_api::api::apps::v1::ReplicaSet>()),
    ("apps/v1", "StatefulSet", schema_of::<kubeset_api::api::apps::v1::StatefulSet>()),
    ("authentication.k8s.io/v1", "SelfSubjectReview", schema_of::<kubeset_api::api::authentication::v1::SelfSubjectReview>()),
    ("authentication.k8s.io/v1", "TokenRequest", schema_of::<kubeset_api::api::authentication::v1::TokenRequest>()),
    ("authentication.k8s.io/v1", "TokenReview", schema_of::<kubeset_api::api::authentication::v1::TokenReview>()),
    ("authorization.k8s.io/v1", "LocalSubjectAccessReview", schema_of::<kubeset_api::api::authorization::v1::LocalSubjectAccessReview>()),
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview", schema_of::<kubeset_api::api::authorization::v1::SelfSubjectAccessReview>()),
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview", schema_of::<kubeset_api::api::authorization::v1::SelfSubjectRulesReview>()),
    ("authorization.k8s.io/v1", "SubjectAccessReview", schema_of::<kubeset_api::api::authorization::v1::SubjectAccessReview>()),
    ("autoscaling/v1", "HorizontalPodAutoscaler", schema_of::<kubeset_api::api::autoscaling::v1::HorizontalPodAutoscaler>()),
    ("autoscaling/v1", "Scale", schema_of::<kubeset_api::api::autoscaling::v1::Scale>()),
    ("autoscaling/v2", "HorizontalPodAutoscaler", schema_of::<kubeset_api::api::autoscaling::v2::HorizontalPodAutoscaler>()),
    ("batch/v1", "CronJob", schema_of::<kubeset_api::api::batch::v1::CronJob>()),
    ("batch/v1", "Job", schema_of::<kubeset_api::api::batch::v1::Job>()),
    ("certificates.k8s.io/v1", "CertificateSigningRequest", schema_of::<kubeset_api::api::certificates::v1::CertificateSigningRequest>()),
    #[cfg(not(any(feature = "v1_33", feature = "v1_34", feature = "v1_35", feature = "v1_36")))]
    ("certificates.k8s.io/v1", "ClusterTrustBundle", schema_of::<kubeset_api::api::certificates::v1::ClusterTrustBundle>()),
    #[cfg(not(any(feature = "v1_33", feature = "v1_34", feature = "v1_35", feature = "v1_36")))]
    ("certificates.k8s.io/v1", "PodCertificateRequest", schema_of::<kubeset_api::api::certificates::v1::PodCertificateRequest>()),
    #[cfg(any(feature = "v1_33", feature = "v1_34", feature = "v1_35", feature = "v1_36"))]
    ("certificates.k8s.io/v1alpha1", "ClusterTrustBundle", schema_of::<kubeset_api::api::certificates::v1alpha1::ClusterTrustBundle>()),
    #[cfg(feature = "v1_34")]
    ("certificates.k8s.io/v1alpha1", "PodCertificateRequest", schema_of::<kubeset_api::api::certificates::v1alpha1::PodCertificateRequest>()),
    ("certificates.k8s.io/v1beta1", "ClusterTrustBundle", schema_of::<kubeset_api::api::certificates::v1beta1::ClusterTrustBundle>()),
    #[cfg(not(any(feature = "v1_33", feature = "v1_34")))]
    ("certificates.k8s.io/v1beta1", "PodCertificateRequest", schema_of::<kubeset_api::api::certificates::v1beta1::PodCertificateRequest>()),
    ("coordination.k8s.io/v1", "Lease", schema_of::<kubeset_api::api::coordination::v1::Lease>()),
    ("coordination.k8s.io/v1alpha2", "LeaseCandidate", schema_of::<kubeset_api::api::coordination::v1alpha2::LeaseCandidate>()),
    ("coordination.k8s.io/v1beta1", "LeaseCandidate", schema_of::<kubeset_api::api::coordination::v1beta1::LeaseCandidate>()),
    ("discovery.k8s.io/v1", "EndpointSlice", schema_of::<kubeset_api::api::discovery::v1::EndpointSlice>()),
    ("events.k8s.io/v1", "Event", schema_of::<kubeset_api::api::events::v1::Event>()),
    ("flowcontrol.apiserver.k8s.io/v1", "FlowSchema", schema_of::<kubeset_api::api::flowcontrol::v1::FlowSchema>()),
    ("flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfiguration", schema_of::<kubeset_api::api::flowcontrol::v1::PriorityLevelConfiguration>()),
    ("internal.apiserver.k8s.io/v1alpha1", "StorageVersion", schema_of::<kubeset_api::api::apiserverinternal::v1alpha1::StorageVersion>()),
    #[cfg(not(any(feature = "v1_33", feature = "v1_34", feature = "v1_35", feature = "v1_36")))]
    ("lifecycle.k8s.io/v1alpha1", "Eviction", schema_of::<kubeset_api::api::lifecycle::v1alpha1::Eviction>()),
    #[cfg(not(any(feature = "v1_33", feature = "v1_34", feature = "v1_35", feature = "v1_36")))]
    ("lifecycle.k8s.io/v1alpha1", "EvictionRequest", schema_of::<kubeset_api::api::lifecycle::v1alpha1::EvictionRequest>()),
    ("networking.k8s.io/v1", "IPAddress", schema_of::<kubeset_api::api::networking::v1::IPAddress>()),
    ("networking.k8s.io/v1", "Ingress", schema_of::<kubeset_api::api::networking::v1::Ingress>()),
    ("networking.k8s.io/v1", "IngressClass", schema_of::<kubeset_api::api::networking::v1::IngressClass>()),
    ("networking.k8s.io/v1", "NetworkPolicy", schema_of::<kubeset_api::api::networking::v1::NetworkPolicy>()),
    ("networking.k8s.io/v1", "ServiceCIDR", schema_of::<kubeset_api::api::networking::v1::ServiceCIDR>()),
    #[cfg(any(feature = "v1_33", feature = "v1_34", feature = "v1_35", feature = "v1_36"))]
    ("networking.k8s.io/v1beta1", "IPAddress", schema_of::<kubeset_api::api::networking::v1beta1::IPAddress>()),
    #[cfg(any(feature = "v1_33", feature = "v1_34", feature = "v1_35", feature = "v1_36"))]
    ("networking.k8s.io/v1beta1", "ServiceCIDR", schema_of::<kubeset_api::api::networking::v1beta1::ServiceCIDR>()),
    ("node.k8s.io/v1", "RuntimeClass", schema_of::<kubeset_api::api::node::v1::RuntimeClass>()),
    ("policy/v1", "Eviction", schema_of::<kubeset_api::api::policy::v1::Eviction>()),
    ("policy/v1", "PodDisruptionBudget", schema_of::<kubeset_api::api::policy::v1::PodDisruptionBudget>()),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", schema_of::<kubeset_api::api::rbac::v1::ClusterRole>()),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", schema_of::<kubeset_api::api::rbac::v1::ClusterRoleBinding>()),
    ("rbac.authorization.k8s.io/v1", "Role", schema_of::<kubeset_api::api::rbac::v1::Role>()),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", schema_of::<kubeset_api::api::rbac::v1::RoleBinding>()),
    #[cfg(not(feature = "v1_33"))]
    ("resource.k8s.io/v1", "DeviceClass", schema_of::<kubeset_api::api::resource::v1::DeviceClass>()),
    #[cfg(not(any(feature = "v1_33", feature = "v1_34", feature = "v1_35", feature = "v1_36")))]
    ("resource.k8s.io/v1", "DeviceTaintRule", schema_of::<kubeset_api::api::resource::v1::DeviceTaintRule>()),
    #[cfg(not(feature = "v1_33"))]
    ("resource.k8s.io/v1", "ResourceClaim", schema_of::<kubeset_api::api::resource::v1::ResourceClaim>()),
    #[cfg(not(feature = "v1_33"))]
    ("resource.k8s.io/v1", "ResourceClaimTemplate", schema_of::<kubeset_api::api::resource::v1::ResourceClaimTemplate>()),
    #[cfg(not(feature = "v1_33"))]
    ("resource.k8s.io/v1", "ResourceSlice", schema_of::<kubeset_api::api::resource::v1::ResourceSlice>()),
    #[cfg(feature = "v1_33")]
    ("resource.k8s.io/v1alpha3", "DeviceClass", schema_of::<kubeset_api::api::resource::v1alpha3::DeviceClass>()),
    ("resource.k8s.io/v1alpha3", "DeviceTaintRule", schema_of::<kubeset_api::api::resource::v1alpha3::DeviceTaintRule>()),
    #[cfg(feature = "v1_33")]
    ("resource.k8s.io/v1alpha3", "ResourceClaim", schema_of::<kubeset_api::api::resource::v1alpha3::ResourceClaim>()),
    #[cfg(feature = "v1_33")]
    ("resource.k8s.io/v1alpha3", "ResourceClaimTemplate", schema_of::<kubeset_api::api::resource::v1alpha3::ResourceClaimTemplate>()),
    #[cfg(not(any(feature = "v1_33", feature = "v1_34", feature = "v1_35")))]
    ("resource.k8s.io/v1alpha3", "ResourcePoolStatusRequest", schema_of::<kubeset_api::api::resource::v1alpha3::ResourcePoolStatusRequest>()),
    #[cfg(feature = "v1_33")]
    ("resource.k8s.io/v1alpha3", "ResourceSlice", schema_of::<kubeset_api::api::resource::v1alpha3::ResourceSlice>()),
    ("resource.k8s.io/v1beta1", "DeviceClass", schema_of::<kubeset_api::api::resource::v1beta1::DeviceClass>()),
    ("resource.k8s.io/v1beta1", "ResourceClaim", schema_of::<kubeset_api::api::resource::v1beta1::ResourceClaim>()),
    ("resource.k8s.io/v1beta1", "ResourceClaimTemplate", schema_of::<kubeset_api::api::resource::v1beta1::ResourceClaimTemplate>()),
    ("resource.k8s.io/v1beta1", "ResourceSlice", schema_of::<kubeset_api::api::resource::v1beta1::ResourceSlice>()),
    ("resource.k8s.io/v1beta2", "DeviceClass", schema_of::<kubeset_api::api::resource::v1beta2::DeviceClass>()),
    #[cfg(not(any(feature = "v1_33", feature = "v1_34", feature = "v1_35")))]
    ("resource.k8s.io/v1beta2", "DeviceTaintRule", schema_of::<kubeset_api::api::resource::v1beta2::DeviceTaintRule>()),
    ("resource.k8s.io/v1beta2", "ResourceClaim", schema_of::<kubeset_api::api::resource::v1beta2::ResourceClaim>()),
    ("resource.k8s.io/v1beta2", "ResourceClaimTemplate", schema_of::<kubeset_api::api::resource::v1beta2::ResourceClaimTemplate>()),
    ("resource.k8s.io/v1beta2", "ResourceSlice", schema_of::<kubeset_api::api::resource::v1beta2::ResourceSlice>()),
    ("scheduling.k8s.io/v1", "PriorityClass", schema_of::<kubeset_api::api::scheduling::v1::PriorityClass>()),
    #[cfg(feature = "v1_35")]
    ("scheduling.k8s.io/v1alpha1", "Workload", schema_of::<kubeset_api::api::scheduling::v1alpha1::Workload>()),
    #[cfg(feature = "v1_36")]
    ("scheduling.k8s.io/v1alpha2", "PodGroup", schema_of::<kubeset_api::api::scheduling::v1alpha2::PodGroup>()),
    #[cfg(feature = "v1_36")]
    ("scheduling.k8s.io/v1alpha2", "Workload", schema_of::<kubeset_api::api::scheduling::v1alpha2::Workload>()),
    #[cfg(not(any(feature = "v1_33", feature = "v1_34", feature = "v1_35", feature = "v1_36")))]
    ("scheduling.k8s.io/v1alpha3", "CompositePodGroup", schema_of::<kubeset_api::api::scheduling::v1alpha3::CompositePodGroup>()),
    #[cfg(not(any(feature = "v1_33", feature = "v1_34", feature = "v1_35", feature = "v1_36")))]
    ("scheduling.k8s.io/v1alpha3", "PodGroup", schema_of::<kubeset_api::api::scheduling::v1alpha3::PodGroup>()),
    #[cfg(not(any(feature = "v1_33", feature = "v1_34", feature = "v1_35", feature = "v1_36")))]
    ("scheduling.k8s.io/v1beta1", "PodGroup", schema_of::<kubeset_api::api::scheduling::v1beta1::PodGroup>()),
    ("storage.k8s.io/v1", "CSIDriver", schema_of::<kubeset_api::api::storage::v1::CSIDriver>()),
    ("storage.k8s.io/v1", "CSINode", schema_of::<kubeset_api::api::storage::v1::CSINode>()),
    ("storage.k8s.io/v1", "CSIStorageCapacity", schema_of::<kubeset_api::api::storage::v1::CSIStorageCapacity>()),
    ("storage.k8s.io/v1", "StorageClass", schema_of::<kubeset_api::api::storage::v1::StorageClass>()),
    ("storage.k8s.io/v1", "VolumeAttachment", schema_of::<kubeset_api::api::storage::v1::VolumeAttachment>()),
    #[cfg(not(feature = "v1_33"))]
    ("storage.k8s.io/v1", "VolumeAttributesClass", schema_of::<kubeset_api::api::storage::v1::VolumeAttributesClass>()),
    #[cfg(any(feature = "v1_33", feature = "v1_34"))]
    ("storage.k8s.io/v1alpha1", "VolumeAttributesClass", schema_of::<kubeset_api::api::storage::v1alpha1::VolumeAttributesClass>()),
    #[cfg(any(feature = "v1_33", feature = "v1_34", feature = "v1_35", feature = "v1_36"))]
    ("storage.k8s.io/v1beta1", "VolumeAttributesClass", schema_of::<kubeset_api::api::storage::v1beta1::VolumeAttributesClass>()),
    #[cfg(not(any(feature = "v1_33", feature = "v1_34", feature = "v1_35", feature = "v1_36")))]
    ("storagemigration.k8s.io/v1", "StorageVersionMigration", schema_of::<kubeset_api::api::storagemigration::v1::StorageVersionMigration>()),
    #[cfg(any(feature = "v1_33", feature = "v1_34"))]
    ("storagemigration.k8s.io/v1alpha1", "StorageVersionMigration", schema_of::<kubeset_api::api::storagemigration::v1alpha1::StorageVersionMigration>()),
    #[cfg(not(any(feature = "v1_33", feature = "v1_34")))]
    ("storagemigration.k8s.io/v1beta1", "StorageVersionMigration", schema_of::<kubeset_api::api::storagemigration::v1beta1::StorageVersionMigration>()),
    ("v1", "APIGroup", schema_of::<kubeset_api::apimachinery::pkg::apis::meta::v1::APIGroup>()),
    ("v1", "APIVersions", schema_of::<kubeset_api::apimachinery::pkg::apis::meta::v1::APIVersions>()),
    ("v1", "Binding", schema_of::<kubeset_api::api::core::v1::Binding>()),
    ("v1", "ComponentStatus", schema_of::<kubeset_api::api::core::v1::ComponentStatus>()),
    ("v1", "ConfigMap", schema_of::<kubeset_api::api::core::v1::ConfigMap>()),
    ("v1", "Endpoints", schema_of::<kubeset_api::api::core::v1::Endpoints>()),
    ("v1", "Event", schema_of::<kubeset_api::api::core::v1::Event>()),
    ("v1", "LimitRange", schema_of::<kubeset_api::api::core::v1::LimitRange>()),
    ("v1", "Namespace", schema_of::<kubeset_api::api::core::v1::Namespace>()),
    ("v1", "Node", schema_of::<kubeset_api::api::core::v1::Node>()),
    ("v1", "PersistentVolume", schema_of::<kubeset_api::api::core::v1::PersistentVolume>()),
    ("v1", "PersistentVolumeClaim", schema_of::<kubeset_api::api::core::v1::PersistentVolumeClaim>()),
    ("v1", "Pod", schema_of::<kubeset_api::api::core::v1::Pod>()),
    ("v1", "PodTemplate", schema_of::<kubeset_api::api::core::v1::PodTemplate>()),
    ("v1", "ReplicationController", schema_of::<kubeset_api::api::core::v1::ReplicationController>()),
    ("v1", "ResourceQuota", schema_of::<kubeset_api::api::core::v1::ResourceQuota>()),
    ("v1", "Secret", schema_of::<kubeset_api::api::core::v1::Secret>()),
    ("v1", "Service", schema_of::<kubeset_api::api::core::v1::Service>()),
    ("v1", "ServiceAccount", schema_of::<kubeset_api::api::core::v1::ServiceAccount>()),
    ("v1", "Status", schema_of::<kubeset_api::apimachinery::pkg::apis::meta::v1::Status>()),
];

/// The built-in kinds without a compiled schema (their models reach a
/// reference cycle, so kubeset-api gives them no `JsonSchema`; the server
/// deduces their shape): `CustomResourceDefinition`
/// (`JSONSchemaProps`), and from v1.37 `scheduling.k8s.io`'s `Workload`
/// (a `CompositePodGroupTemplate` nests `CompositePodGroupTemplate`s).
#[cfg(test)]
const WITHOUT_SCHEMA: &[(&str, &str)] = &[
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("scheduling.k8s.io/v1alpha3", "Workload"),
    ("scheduling.k8s.io/v1beta1", "Workload"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_table_is_sorted() {
        assert!(
            BUILTIN
                .windows(2)
                .all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1))
        );
    }

    /// Every kind kubeset-api serves has its row (so its defaults,
    /// pruning, unknown-field warnings and apply shapes come from its
    /// schema), but the kinds whose models are in a reference cycle and
    /// have no compiled schema ([`WITHOUT_SCHEMA`]).
    #[test]
    fn every_builtin_kind_has_its_schema() {
        let missing: Vec<_> = kubeset_api::resources::RESOURCES
            .iter()
            .map(|r| {
                let api_version = match r.group {
                    "" => r.version.to_owned(),
                    g => format!("{g}/{}", r.version),
                };
                (api_version, r.kind)
            })
            .filter(|(av, k)| {
                builtin(av, k).is_none() && !WITHOUT_SCHEMA.contains(&(av.as_str(), *k))
            })
            .collect();
        assert!(missing.is_empty(), "no schema row: {missing:?}");
    }

    #[test]
    fn a_pod_knows_its_list_types() {
        let schema = (BUILTIN
            .iter()
            .find(|(av, k, _)| *av == "v1" && *k == "Pod")
            .unwrap()
            .2
            .build)();
        let pod = root(Some(&schema));
        let spec = pod.field("spec").unwrap();
        let Shape::List { kind, .. } = spec.field("containers").unwrap() else {
            panic!("containers is a list");
        };
        assert_eq!(kind, &ListKind::Map(vec![("name".into(), None)]));
        let meta = pod.field("metadata").unwrap();
        let Shape::List { kind, .. } = meta.field("finalizers").unwrap() else {
            panic!("finalizers is a list");
        };
        assert_eq!(kind, &ListKind::Set);
        assert!(matches!(
            spec.field("nodeSelector").unwrap(),
            Shape::Object { atomic: true, .. }
        ));
    }
}
