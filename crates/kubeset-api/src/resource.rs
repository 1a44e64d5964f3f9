//! The `Resource` trait: what the typed client needs to know about a kind.

use crate::apimachinery::pkg::apis::meta::v1::ObjectMeta;

mod sealed {
    pub trait Sealed {}
}

/// Scope of a resource, as a type: [`NamespaceResourceScope`] or
/// [`ClusterResourceScope`]. Sealed.
pub trait ResourceScope: sealed::Sealed {
    /// Whether objects live in a namespace.
    const NAMESPACED: bool;
}

/// Marker for namespaced kinds (`Pod`, `Deployment`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamespaceResourceScope {}

/// Marker for cluster-scoped kinds (`Node`, `Namespace`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterResourceScope {}

impl sealed::Sealed for NamespaceResourceScope {}
impl sealed::Sealed for ClusterResourceScope {}

impl ResourceScope for NamespaceResourceScope {
    const NAMESPACED: bool = true;
}

impl ResourceScope for ClusterResourceScope {
    const NAMESPACED: bool = false;
}

/// A kind served as a REST resource. Implement it with
/// `#[derive(Resource)]` (crate `kubeset-derive`).
pub trait Resource {
    /// API group, empty for the core group.
    const GROUP: &'static str;
    /// API version, e.g. `v1`.
    const VERSION: &'static str;
    /// Kind, e.g. `Deployment`.
    const KIND: &'static str;
    /// Lowercase plural used in URLs, e.g. `deployments`.
    const PLURAL: &'static str;
    /// `group/version`, or `version` for the core group.
    const API_VERSION: &'static str;
    /// [`NamespaceResourceScope`] or [`ClusterResourceScope`].
    type Scope: ResourceScope;

    /// The object's metadata.
    fn metadata(&self) -> &ObjectMeta;

    /// The object's metadata, mutably.
    fn metadata_mut(&mut self) -> &mut ObjectMeta;
}
