//! kube-rs's and k8s-openapi's module paths, so code written for them
//! compiles after renaming `kube::` and `k8s_openapi::` to `kubeset::`.
//!
//! Every item here is a re-export of kubeset's own; the module a name
//! lives in is kube-rs's. Where kube-rs and k8s-openapi use one path for
//! two things, both resolve: `kubeset::api` holds kube-rs's `kube::api`
//! items and k8s-openapi's model groups (`kubeset::api::core::v1::Pod`),
//! and one [`Resource`](crate::Resource) trait carries k8s-openapi's
//! constants (`Pod::KIND`) and kube-rs's methods (`Pod::kind(&())`,
//! `pod.object_ref(&())`).

/// kube-rs's `kube::Result`: a result with the crate's [`Error`](crate::Error).
pub type Result<T, E = crate::Error> = std::result::Result<T, E>;

/// kube-rs's `kube::api` beside k8s-openapi's `k8s_openapi::api`: the typed
/// [`Api`](crate::Api), its parameters, [`Patch`](crate::Patch), dynamic
/// objects and [`entry`](api::entry) with the generated model groups
/// (`kubeset::api::core::v1::Pod`).
///
/// ```
/// use kubeset::api::core::v1::ConfigMap;
/// use kubeset::api::{Api, ListParams, Patch, PatchParams, ResourceExt};
/// # fn f(client: kubeset::Client) {
/// let cms: Api<ConfigMap> = Api::namespaced(client, "default");
/// let _ = (cms, ListParams::default().timeout(5), PatchParams::apply("me"));
/// let _patch: Patch<()> = Patch::Merge(());
/// # }
/// ```
pub mod api {
    // The generated model groups: `core`, `apps`, `batch`, …
    pub use kubeset_client::api::*;

    #[cfg(feature = "ws")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ws")))]
    pub use kubeset_client::ws::{AttachParams, AttachedProcess, Portforwarder, TerminalSize};
    // kube-rs's `ObjectList<K>` is kubeset's `List<K>` (iterate it with
    // `for x in list` or `&list`).
    pub use kubeset_client::{
        Api, ClusterResourceScope, List as ObjectList, NamespaceResourceScope, PartialObjectMeta,
        PartialObjectMetaExt, Patch, Resource, ResourceExt, ResourceScope, WatchEvent,
        admission::{GroupVersionKind, TypeMeta},
        apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta, OwnerReference},
        dynamic::{ApiResource, DynamicObject},
        params::{
            DeleteParams, FieldValidation as ValidationDirective, ListParams, PatchParams,
            PostParams, PropagationPolicy, VersionMatch, WatchParams,
        },
    };

    /// kube-rs's `kube::api::entry`: get-or-create and modify-and-commit.
    pub mod entry {
        pub use kubeset_client::{CommitError, Entry, OccupiedEntry, VacantEntry};
    }
}

/// kube-rs's `kube::core` (the `kube-core` crate): the resource traits,
/// dynamic objects, list and metadata types, watch events and parameters.
pub mod core {
    /// kube-core's CEL rule types, for `#[kube(validation = Rule::new(…))]`.
    #[cfg(feature = "apiextensions-v1")]
    #[cfg_attr(docsrs, doc(cfg(feature = "apiextensions-v1")))]
    pub use kubeset_client::schema::{Message, Reason, Rule};
    pub use kubeset_client::{
        ClusterResourceScope, List as ObjectList, NamespaceResourceScope, PartialObjectMeta,
        PartialObjectMetaExt, Resource, ResourceExt, ResourceScope, WatchEvent,
        admission::{GroupVersionKind, TypeMeta},
        apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta, OwnerReference, Status},
        dynamic::{ApiResource, DynamicObject},
    };
    #[cfg(feature = "apiextensions-v1")]
    #[cfg_attr(docsrs, doc(cfg(feature = "apiextensions-v1")))]
    pub use kubeset_client::{CustomResourceExt, crd::merge_crds};

    /// kube-core's `cel`: the CEL rule types of `x-kubernetes-validations`
    /// (kube-rs's client-side evaluation, its `cel` feature, is not here).
    /// `#[kube(validation = …)]` takes a string or an expression giving a
    /// [`Rule`]; the derive brings `Rule`, `Message` and `Reason` into
    /// scope of the expression, as kube-rs's does.
    ///
    /// ```
    /// use kubeset::core::cel::{Reason, Rule};
    /// use kubeset::{CustomResource, CustomResourceExt, JsonSchema};
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug)]
    /// #[kube(group = "example.com", version = "v1", kind = "Volume")]
    /// #[kube(validation = Rule::new("self.spec.size == oldSelf.spec.size").message("size is immutable"))]
    /// struct VolumeSpec {
    ///     size: i64,
    /// }
    ///
    /// let rule = Rule::new("self == oldSelf").message("is immutable").reason(Reason::FieldValueForbidden);
    /// # let _ = rule;
    /// let crd = serde_json::to_value(Volume::crd()).unwrap();
    /// let rules = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"];
    /// assert_eq!(rules[0]["message"], "size is immutable");
    /// ```
    ///
    /// An expression that is not a rule does not compile (`Rule: From<{integer}>`
    /// is not satisfied, reported at the `42`):
    ///
    /// ```compile_fail,E0277
    /// use kubeset::{CustomResource, JsonSchema};
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug)]
    /// #[kube(group = "example.com", version = "v1", kind = "Volume", validation = 42)]
    /// struct VolumeSpec {
    ///     size: i64,
    /// }
    /// ```
    #[cfg(feature = "apiextensions-v1")]
    #[cfg_attr(docsrs, doc(cfg(feature = "apiextensions-v1")))]
    pub mod cel {
        pub use kubeset_client::schema::{Message, Reason, Rule};
    }

    /// kube-core's `admission`: the `admission.k8s.io/v1` `AdmissionReview`
    /// types of admission webhooks (kube-rs's `admission` feature; always
    /// built here). A server for them is `kubeset::runtime::webhook`
    /// (feature `webhook`).
    ///
    /// ```
    /// use kubeset::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
    /// use kubeset::core::DynamicObject;
    /// fn answer(review: AdmissionReview<DynamicObject>) -> AdmissionReview<DynamicObject> {
    ///     let Ok(req) = AdmissionRequest::try_from(review) else {
    ///         return AdmissionResponse::invalid("no request").into_review();
    ///     };
    ///     if req.operation == Operation::Delete {
    ///         return AdmissionResponse::from(&req).deny("deletes are not allowed").into_review();
    ///     }
    ///     AdmissionResponse::from(&req).into_review()
    /// }
    /// # let _ = answer;
    /// ```
    pub mod admission {
        pub use kubeset_client::admission::*;
    }

    /// kube-core's `conversion`: the `apiextensions.k8s.io/v1`
    /// `ConversionReview` types of CRD conversion webhooks (always built
    /// here). A server converting typed versions through a hub is
    /// `kubeset::runtime::webhook::Conversion` (feature `webhook`).
    ///
    /// ```
    /// use kubeset::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
    /// fn answer(review: ConversionReview) -> ConversionReview {
    ///     let Ok(req) = ConversionRequest::from_review(review) else {
    ///         return ConversionResponse::invalid(Default::default()).into_review();
    ///     };
    ///     let objects = req.objects.clone();
    ///     ConversionResponse::for_request(req).success(objects).into_review()
    /// }
    /// # let _ = answer;
    /// ```
    pub mod conversion {
        pub use kubeset_client::conversion::*;
    }

    /// kube-core's `params`: the verbs' parameters.
    pub mod params {
        pub use kubeset_client::Patch;
        pub use kubeset_client::params::{
            DeleteParams, FieldValidation as ValidationDirective, ListParams, PatchParams,
            PostParams, PropagationPolicy, VersionMatch, WatchParams,
        };
    }

    /// kube-core's `dynamic`: objects addressed at run time.
    pub mod dynamic {
        pub use kubeset_client::dynamic::{ApiResource, DynamicObject};
    }

    /// kube-core's `crd`: CRD helpers.
    #[cfg(feature = "apiextensions-v1")]
    #[cfg_attr(docsrs, doc(cfg(feature = "apiextensions-v1")))]
    pub mod crd {
        pub use kubeset_client::{CustomResourceExt, crd::merge_crds};
    }
}

/// kube-rs's `kube::config`: [`Config`](crate::Config), the kubeconfig
/// file's types and the options choosing a context.
///
/// ```
/// use kubeset::config::KubeConfigOptions;
/// let options = KubeConfigOptions { context: Some("kind-dev".into()), cluster: None, user: None };
/// # let _ = options;
/// ```
pub mod config {
    pub use kubeset_client::rest::config::{
        AuthInfo, AuthProvider, Cluster, Config, ConfigError, Context, ExecConfig,
        KubeConfigOptions, Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext, NamedExtension,
    };

    /// kube-rs's `kube::config::KubeconfigError`, the error of
    /// `Config::from_kubeconfig`, `Config::from_custom_kubeconfig` and
    /// `Kubeconfig::read_from`: kubeset has one [`ConfigError`] for every
    /// way of loading a configuration.
    ///
    /// ```
    /// fn read(path: &str) -> Result<kubeset::config::Kubeconfig, kubeset::config::KubeconfigError> {
    ///     kubeset::config::Kubeconfig::read_from(path)
    /// }
    /// assert!(read("/nonexistent/kubeconfig").is_err());
    /// ```
    pub type KubeconfigError = ConfigError;

    /// kube-rs's `kube::config::InferConfigError`, the error of
    /// `Config::infer`: kubeset's [`ConfigError`] (its message names the
    /// in-cluster and kubeconfig attempts).
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), kubeset::config::InferConfigError> {
    /// let config = kubeset::Config::infer().await?;
    /// # let _ = config; Ok(()) }
    /// ```
    pub type InferConfigError = ConfigError;
}

/// kube-rs's `kube::client`: the [`Client`](crate::Client) and its
/// configuration.
pub mod client {
    pub use kubeset_client::rest::service::Body;
    pub use kubeset_client::{Client, ClientError, Config};
}

/// kube-rs's `kube::error`: the crate's error and the server's.
pub mod error {
    pub use kubeset_client::{ApiError, Error};
}
