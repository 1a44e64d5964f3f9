//! Typed projections: paying only for what is read.
//!
//! A projection is your own struct with the subset of a kind's fields a
//! controller reads (always `metadata`, then any nested part of `spec` or
//! `status`), declared as a view of that kind with [`projection!`](crate::projection!). It takes
//! the kind's group, version, kind, plural and scope, so an `Api` of it
//! lists and watches the kind's own URLs, and it is a [`Resource`] like any
//! other: a [`watcher`](crate::watcher()), a [`reflector`](crate::reflector())
//! store, a [`Controller`](crate::Controller) and a shared cache take it as
//! they take the full kind. Decoding skips what the struct does not name
//! (serde's `IgnoredAny`: no allocation for the skipped values), so the
//! cache holds only what you declared.
//!
//! Writes go through the full kind (a projection is for reading: a `PUT`
//! of it would drop every field it does not name); a patch of the fields
//! you own works from either.
//!
//! Beside it: [`StoreConfig::transform`](crate::StoreConfig::transform)
//! and [`Event::modify`](crate::Event::modify) change objects before they
//! are stored, and [`StoreConfig::drop_managed_fields`](crate::StoreConfig::drop_managed_fields)
//! drops `managedFields`; a projection's `metadata` still decodes them
//! unless dropped.
//!
//! ```
//! use kubeset_client::api::core::v1::Pod;
//! use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
//! use kubeset_client::Resource as _;
//! use kubeset_runtime::projection::Projection;
//!
//! /// The fields of a Pod a scheduler-watching controller reads.
//! #[derive(Clone, Debug, Default, serde::Deserialize, serde::Serialize)]
//! pub struct PodPlacement {
//!     pub metadata: ObjectMeta,
//!     #[serde(default)]
//!     pub spec: PlacementSpec,
//!     #[serde(default)]
//!     pub status: PlacementStatus,
//! }
//! #[derive(Clone, Debug, Default, serde::Deserialize, serde::Serialize)]
//! #[serde(rename_all = "camelCase")]
//! pub struct PlacementSpec {
//!     pub node_name: Option<String>,
//! }
//! #[derive(Clone, Debug, Default, serde::Deserialize, serde::Serialize)]
//! pub struct PlacementStatus {
//!     pub phase: Option<String>,
//! }
//! kubeset_runtime::projection!(PodPlacement => Pod);
//!
//! assert_eq!(PodPlacement::PLURAL, "pods");
//! assert_eq!(<PodPlacement as Projection>::Full::KIND, "Pod");
//! let p: PodPlacement = serde_json::from_str(
//!     r#"{"metadata":{"name":"a"},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}]},"status":{"phase":"Running"}}"#,
//! ).unwrap();
//! assert_eq!(p.spec.node_name.as_deref(), Some("n1"));
//! ```

use kubeset_client::{Api, Resource};
use serde::de::DeserializeOwned;

/// A struct declared as a view of the kind [`Full`](Self::Full) (with
/// [`projection!`](crate::projection!)): the same group, version, kind, plural and scope, a
/// subset of the fields.
pub trait Projection: Resource + DeserializeOwned {
    /// The full kind this is a view of.
    type Full: Resource;
}

/// The `Api` of projection `P` at the same client and namespace as `api`,
/// the full kind's.
///
/// ```
/// # use kubeset_client::{Api, Client, api::core::v1::Pod};
/// # use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
/// # #[derive(Clone, Debug, serde::Deserialize)]
/// # struct PodNames { metadata: ObjectMeta }
/// # kubeset_runtime::projection!(PodNames => Pod);
/// # fn f(pods: Api<Pod>) {
/// let names: Api<PodNames> = kubeset_runtime::projection::api(&pods);
/// # }
/// ```
pub fn api<P: Projection>(api: &Api<P::Full>) -> Api<P> {
    crate::watcher::retype(api)
}

/// Names the macro uses (not part of the API).
#[doc(hidden)]
pub mod __private {
    pub use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    pub use kubeset_client::{Metadata, Resource};
}

/// Declares `View` a projection of the kind `Full`: implements
/// [`Resource`] with `Full`'s group, version, kind, plural, apiVersion and
/// scope, [`Metadata`](kubeset_client::Metadata) over the struct's
/// `metadata: ObjectMeta` field, and
/// [`Projection`] with `Full`. See the [module docs](mod@crate::projection).
///
/// ```
/// # use kubeset_client::api::core::v1::ConfigMap;
/// # use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
/// #[derive(Clone, Debug, serde::Deserialize)]
/// struct ConfigMapKeys {
///     metadata: ObjectMeta,
///     // `data` is not named: a ConfigMap's values are never decoded.
/// }
/// kubeset_runtime::projection!(ConfigMapKeys => ConfigMap);
/// ```
#[macro_export]
macro_rules! projection {
    ($view:ty => $full:ty) => {
        impl $crate::projection::__private::Resource for $view {
            const GROUP: &'static str = <$full as $crate::projection::__private::Resource>::GROUP;
            const VERSION: &'static str =
                <$full as $crate::projection::__private::Resource>::VERSION;
            const KIND: &'static str = <$full as $crate::projection::__private::Resource>::KIND;
            const PLURAL: &'static str = <$full as $crate::projection::__private::Resource>::PLURAL;
            const API_VERSION: &'static str =
                <$full as $crate::projection::__private::Resource>::API_VERSION;
            type Scope = <$full as $crate::projection::__private::Resource>::Scope;
        }

        impl $crate::projection::__private::Metadata for $view {
            type Ty = $crate::projection::__private::ObjectMeta;

            fn metadata(&self) -> &$crate::projection::__private::ObjectMeta {
                &self.metadata
            }

            fn metadata_mut(&mut self) -> &mut $crate::projection::__private::ObjectMeta {
                &mut self.metadata
            }
        }

        impl $crate::projection::Projection for $view {
            type Full = $full;
        }
    };
}
