//! The `Resource` trait (what the typed client needs to know about a kind)
//! and its supertrait `Metadata`, shaped as k8s-openapi's pair.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::apimachinery::pkg::apis::meta::v1::{
    ManagedFieldsEntry, ObjectMeta, OwnerReference, Time,
};

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

/// An object with metadata, as k8s-openapi's `Metadata`: the accessors
/// that [`Resource`] builds on (`Resource: Metadata<Ty = ObjectMeta>`).
///
/// Every kind implements it beside [`Resource`]: the generated kinds and
/// `#[derive(Resource)]`/`#[derive(CustomResource)]` write both impls; a
/// kind written by hand writes both, as for k8s-openapi (below). It has
/// no supertrait (k8s-openapi's has `Resource`), so that `Resource` can
/// require it. Call [`Resource::meta`] (kube-rs's name) when only
/// `Resource` is imported; `K: Resource` in a bound reaches
/// `metadata()` through the supertrait.
///
/// A kind the models lack, implemented by hand as for k8s-openapi (this is
/// kubectl-view-allocations' `PodMetrics` after the rename):
///
/// ```
/// use kubeset_api::apimachinery::pkg::apis::meta::v1::ObjectMeta;
/// use kubeset_api::{Metadata, NamespaceResourceScope, Resource, ResourceExt};
///
/// #[derive(Default)]
/// struct PodMetrics {
///     metadata: ObjectMeta,
/// }
///
/// impl Resource for PodMetrics {
///     const GROUP: &'static str = "metrics.k8s.io";
///     const KIND: &'static str = "PodMetrics";
///     const VERSION: &'static str = "v1beta1";
///     const API_VERSION: &'static str = "metrics.k8s.io/v1beta1";
///     const URL_PATH_SEGMENT: &'static str = "pods";
///     type Scope = NamespaceResourceScope;
/// }
///
/// impl Metadata for PodMetrics {
///     type Ty = ObjectMeta;
///     fn metadata(&self) -> &ObjectMeta {
///         &self.metadata
///     }
///     fn metadata_mut(&mut self) -> &mut ObjectMeta {
///         &mut self.metadata
///     }
/// }
///
/// let mut m = PodMetrics::default();
/// m.meta_mut().name = Some("web-0".into());
/// assert_eq!(m.name_any(), "web-0");
/// assert_eq!(PodMetrics::PLURAL, "pods", "PLURAL follows URL_PATH_SEGMENT");
/// assert_eq!(
///     PodMetrics::url_path(&(), Some("ns")),
///     "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods"
/// );
/// ```
pub trait Metadata {
    /// The type of the metadata: [`ObjectMeta`] for every [`Resource`].
    type Ty;

    /// The object's metadata.
    fn metadata(&self) -> &Self::Ty;

    /// The object's metadata, mutably.
    fn metadata_mut(&mut self) -> &mut Self::Ty;
}

/// A kind served as a REST resource. Implement it with
/// `#[derive(Resource)]` (crate `kubeset-derive`, re-exported by the
/// `kubeset` facade); the generated kinds write their impls out. Its
/// supertrait [`Metadata`] holds `metadata()`/`metadata_mut()`, as
/// k8s-openapi's pair does, so a hand-written impl is the two impls
/// k8s-openapi's users write (example on [`Metadata`]).
///
/// The plural goes by either name: [`PLURAL`](Self::PLURAL) (kubeset's)
/// or [`URL_PATH_SEGMENT`](Self::URL_PATH_SEGMENT) (k8s-openapi's); an
/// impl gives one of them and the other follows. An impl that gives
/// neither compiles under `cargo check` and fails to build where the
/// plural is first used (in a monomorphised use such as `Api<K>`'s
/// URLs), with ``error[E0391]: cycle detected when simplifying constant
/// for the type system `Resource::PLURAL` `` pointing at the two defaults,
/// whose lines say `cycle? the impl gave no plural`, and a last note
/// naming the use with the kind (``cycle used when collecting items used
/// by `ApiResource::of::<PodMetrics>` ``): give one of the two.
///
/// ```compile_fail,E0391
/// # use kubeset_api::apimachinery::pkg::apis::meta::v1::ObjectMeta;
/// # use kubeset_api::{Metadata, NamespaceResourceScope, Resource};
/// struct NoPlural {
///     metadata: ObjectMeta,
/// }
///
/// impl Resource for NoPlural {
///     const GROUP: &'static str = "example.com";
///     const VERSION: &'static str = "v1";
///     const KIND: &'static str = "NoPlural";
///     const API_VERSION: &'static str = "example.com/v1";
///     type Scope = NamespaceResourceScope;
///     // neither PLURAL nor URL_PATH_SEGMENT
/// }
/// # impl Metadata for NoPlural {
/// #     type Ty = ObjectMeta;
/// #     fn metadata(&self) -> &ObjectMeta { &self.metadata }
/// #     fn metadata_mut(&mut self) -> &mut ObjectMeta { &mut self.metadata }
/// # }
///
/// println!("{}", NoPlural::url_path(&(), None));
/// ```
pub trait Resource: Metadata<Ty = ObjectMeta> {
    /// API group, empty for the core group.
    const GROUP: &'static str;
    /// API version, e.g. `v1`.
    const VERSION: &'static str;
    /// Kind, e.g. `Deployment`.
    const KIND: &'static str;
    /// Lowercase plural used in URLs, e.g. `deployments`; the same as
    /// [`URL_PATH_SEGMENT`](Self::URL_PATH_SEGMENT), which it defaults to.
    const PLURAL: &'static str = Self::URL_PATH_SEGMENT; // cycle? the impl gave no plural
    /// The plural by k8s-openapi's name; defaults to
    /// [`PLURAL`](Self::PLURAL). An impl gives one of the two.
    const URL_PATH_SEGMENT: &'static str = Self::PLURAL; // cycle? the impl gave no plural
    /// `group/version`, or `version` for the core group.
    const API_VERSION: &'static str;
    /// [`NamespaceResourceScope`] or [`ClusterResourceScope`].
    type Scope: ResourceScope;

    /// The metadata, by kube-rs's name (`Resource::meta`; k8s-openapi's
    /// is [`Metadata::metadata`]).
    fn meta(&self) -> &ObjectMeta {
        self.metadata()
    }

    /// The metadata, mutably, by kube-rs's name (`Resource::meta_mut`): a
    /// file that imports only `Resource` calls it, as with kube-rs.
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        self.metadata_mut()
    }

    /// [`KIND`](Self::KIND), as kube-rs's `Resource::kind(&dt)`. The
    /// argument is kube-rs's dynamic type: a kubeset kind knows its
    /// group, version and kind at compile time, so it is always `&()`.
    fn kind(_dt: &()) -> Cow<'static, str> {
        Cow::Borrowed(Self::KIND)
    }

    /// [`GROUP`](Self::GROUP), as kube-rs's `Resource::group(&())`.
    fn group(_dt: &()) -> Cow<'static, str> {
        Cow::Borrowed(Self::GROUP)
    }

    /// [`VERSION`](Self::VERSION), as kube-rs's `Resource::version(&())`.
    fn version(_dt: &()) -> Cow<'static, str> {
        Cow::Borrowed(Self::VERSION)
    }

    /// [`API_VERSION`](Self::API_VERSION), as kube-rs's
    /// `Resource::api_version(&())`.
    fn api_version(_dt: &()) -> Cow<'static, str> {
        Cow::Borrowed(Self::API_VERSION)
    }

    /// [`PLURAL`](Self::PLURAL), as kube-rs's `Resource::plural(&())`.
    fn plural(_dt: &()) -> Cow<'static, str> {
        Cow::Borrowed(Self::PLURAL)
    }

    /// The collection's URL path, as kube-rs's `Resource::url_path(&(),
    /// namespace)`: `/api/v1/namespaces/{ns}/pods`,
    /// `/apis/apps/v1/deployments`.
    fn url_path(_dt: &(), namespace: Option<&str>) -> String {
        let root = if Self::GROUP.is_empty() {
            "api"
        } else {
            "apis"
        };
        match namespace {
            Some(ns) => format!(
                "/{root}/{}/namespaces/{ns}/{}",
                Self::API_VERSION,
                Self::PLURAL
            ),
            None => format!("/{root}/{}/{}", Self::API_VERSION, Self::PLURAL),
        }
    }

    /// An owner reference to this object with `controller: true` and
    /// `blockOwnerDeletion: true`, for the children it manages (kube-rs's
    /// `Resource::controller_owner_ref(&())`). `None` when the object has
    /// no name or UID yet (it was not read back from the server).
    fn controller_owner_ref(&self, dt: &()) -> Option<OwnerReference> {
        Some(OwnerReference {
            controller: Some(true),
            block_owner_deletion: Some(true),
            ..self.owner_ref(dt)?
        })
    }

    /// A plain owner reference to this object (not the controller;
    /// kube-rs's `Resource::owner_ref(&())`). `None` when the object has no
    /// name or UID yet.
    fn owner_ref(&self, _dt: &()) -> Option<OwnerReference> {
        let meta = self.metadata();
        Some(OwnerReference {
            api_version: Self::API_VERSION.to_owned(),
            kind: Self::KIND.to_owned(),
            name: meta.name.clone()?,
            uid: meta.uid.clone()?,
            block_owner_deletion: None,
            controller: None,
        })
    }

    /// A `core/v1` `ObjectReference` to this object (the `regarding` of
    /// an Event, the `involvedObject` of a core Event; kube-rs's
    /// `Resource::object_ref(&())`).
    #[cfg(feature = "core-v1")]
    fn object_ref(&self, _dt: &()) -> crate::api::core::v1::ObjectReference {
        let meta = self.metadata();
        crate::api::core::v1::ObjectReference {
            api_version: Some(Self::API_VERSION.to_owned()),
            kind: Some(Self::KIND.to_owned()),
            name: meta.name.clone(),
            namespace: meta.namespace.clone(),
            resource_version: meta.resource_version.clone(),
            uid: meta.uid.clone(),
            field_path: None,
        }
    }
}

static EMPTY_MAP: BTreeMap<String, String> = BTreeMap::new();

/// Helpers over [`Metadata::metadata`] with kube-rs's names and shapes
/// (`kube::ResourceExt`; `meta` and `meta_mut` are on [`Resource`], as
/// in kube-rs), implemented
/// for every [`Resource`]. The reference builders (`object_ref`,
/// `owner_ref`, `controller_owner_ref`) are on [`Resource`], with
/// kube-rs's `&()` argument.
///
/// ```
/// # use kubeset_api::{Resource, ResourceExt, apimachinery::pkg::apis::meta::v1::ObjectMeta};
/// # #[derive(Default)] struct Cm { metadata: ObjectMeta }
/// # impl Resource for Cm { const GROUP: &'static str = ""; const VERSION: &'static str = "v1";
/// #   const KIND: &'static str = "ConfigMap"; const PLURAL: &'static str = "configmaps";
/// #   const API_VERSION: &'static str = "v1"; type Scope = kubeset_api::NamespaceResourceScope; }
/// # impl kubeset_api::Metadata for Cm { type Ty = ObjectMeta;
/// #   fn metadata(&self) -> &ObjectMeta { &self.metadata }
/// #   fn metadata_mut(&mut self) -> &mut ObjectMeta { &mut self.metadata } }
/// let mut cm = Cm::default();
/// cm.meta_mut().generate_name = Some("web-".into());
/// assert_eq!(cm.name_any(), "web-");
/// cm.labels_mut().insert("app".into(), "web".into());
/// cm.finalizers_mut().push("example.com/cleanup".into());
/// assert_eq!(cm.labels()["app"], "web");
/// assert!(cm.owner_references().is_empty());
/// ```
pub trait ResourceExt: Resource {
    /// The name.
    ///
    /// # Panics
    ///
    /// When `metadata.name` is unset (an object that has not been created
    /// yet may carry only `generateName`). Objects read from the server
    /// always have one; elsewhere use [`name_any`](Self::name_any).
    fn name_unchecked(&self) -> String {
        self.metadata()
            .name
            .clone()
            .expect("metadata.name is unset (use name_any)")
    }

    /// The name, else `generateName`, else the empty string.
    fn name_any(&self) -> String {
        let meta = self.metadata();
        meta.name
            .clone()
            .or_else(|| meta.generate_name.clone())
            .unwrap_or_default()
    }

    /// The namespace (`None` for cluster-scoped objects).
    fn namespace(&self) -> Option<String> {
        self.metadata().namespace.clone()
    }

    /// The resourceVersion.
    fn resource_version(&self) -> Option<String> {
        self.metadata().resource_version.clone()
    }

    /// The UID (a new object of the same name has another).
    fn uid(&self) -> Option<String> {
        self.metadata().uid.clone()
    }

    /// When the object was created.
    fn creation_timestamp(&self) -> Option<Time> {
        self.metadata().creation_timestamp
    }

    /// The labels (empty when unset).
    fn labels(&self) -> &BTreeMap<String, String> {
        self.metadata().labels.as_ref().unwrap_or(&EMPTY_MAP)
    }

    /// The labels, mutably (created when unset).
    fn labels_mut(&mut self) -> &mut BTreeMap<String, String> {
        self.metadata_mut().labels.get_or_insert_with(BTreeMap::new)
    }

    /// The annotations (empty when unset).
    fn annotations(&self) -> &BTreeMap<String, String> {
        self.metadata().annotations.as_ref().unwrap_or(&EMPTY_MAP)
    }

    /// The annotations, mutably (created when unset).
    fn annotations_mut(&mut self) -> &mut BTreeMap<String, String> {
        self.metadata_mut()
            .annotations
            .get_or_insert_with(BTreeMap::new)
    }

    /// The owner references (empty when unset).
    fn owner_references(&self) -> &[OwnerReference] {
        self.metadata().owner_references.as_deref().unwrap_or(&[])
    }

    /// The owner references, mutably (created when unset).
    fn owner_references_mut(&mut self) -> &mut Vec<OwnerReference> {
        self.metadata_mut()
            .owner_references
            .get_or_insert_with(Vec::new)
    }

    /// The finalizers (empty when unset).
    fn finalizers(&self) -> &[String] {
        self.metadata().finalizers.as_deref().unwrap_or(&[])
    }

    /// The finalizers, mutably (created when unset).
    fn finalizers_mut(&mut self) -> &mut Vec<String> {
        self.metadata_mut().finalizers.get_or_insert_with(Vec::new)
    }

    /// The managed fields (empty when unset).
    fn managed_fields(&self) -> &[ManagedFieldsEntry] {
        self.metadata().managed_fields.as_deref().unwrap_or(&[])
    }

    /// The managed fields, mutably (created when unset).
    fn managed_fields_mut(&mut self) -> &mut Vec<ManagedFieldsEntry> {
        self.metadata_mut()
            .managed_fields
            .get_or_insert_with(Vec::new)
    }
}

impl<K: Resource + ?Sized> ResourceExt for K {}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Thing {
        metadata: ObjectMeta,
    }

    impl Resource for Thing {
        const GROUP: &'static str = "example.com";
        const VERSION: &'static str = "v1";
        const KIND: &'static str = "Thing";
        const PLURAL: &'static str = "things";
        const API_VERSION: &'static str = "example.com/v1";
        type Scope = NamespaceResourceScope;
    }

    impl Metadata for Thing {
        type Ty = ObjectMeta;
        fn metadata(&self) -> &ObjectMeta {
            &self.metadata
        }
        fn metadata_mut(&mut self) -> &mut ObjectMeta {
            &mut self.metadata
        }
    }

    #[test]
    fn owner_refs_need_name_and_uid() {
        let mut t = Thing::default();
        t.metadata.name = Some("a".into());
        assert_eq!(t.owner_ref(&()), None, "no uid yet");
        t.metadata.uid = Some("u-1".into());
        let c = t.controller_owner_ref(&()).unwrap();
        assert_eq!(
            (
                c.api_version.as_str(),
                c.kind.as_str(),
                c.name.as_str(),
                c.uid.as_str()
            ),
            ("example.com/v1", "Thing", "a", "u-1")
        );
        assert_eq!(
            (c.controller, c.block_owner_deletion),
            (Some(true), Some(true))
        );
        let o = t.owner_ref(&()).unwrap();
        assert_eq!((o.controller, o.block_owner_deletion), (None, None));
        assert_eq!(Thing::kind(&()), "Thing");
        assert_eq!(
            Thing::url_path(&(), Some("ns")),
            "/apis/example.com/v1/namespaces/ns/things"
        );
    }

    #[test]
    fn accessors_default_to_empty_and_create_on_mut() {
        let mut t = Thing::default();
        assert!(t.labels().is_empty() && t.finalizers().is_empty());
        assert_eq!(t.name_any(), "");
        t.finalizers_mut().push("f".into());
        t.annotations_mut().insert("k".into(), "v".into());
        assert_eq!(
            t.metadata.finalizers.as_deref(),
            Some(&["f".to_owned()][..])
        );
        assert_eq!(t.annotations()["k"], "v");
        t.metadata.name = Some("n".into());
        assert_eq!(t.name_unchecked(), "n");
    }
}
