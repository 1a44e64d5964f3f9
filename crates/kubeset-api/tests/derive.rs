//! `#[derive(Resource)]` on a user's own CRD struct, against the real trait.

use kubeset_api::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset_api::{
    ClusterResourceScope, List, Metadata, NamespaceResourceScope, Resource, ResourceScope,
};
use kubeset_derive::Resource;
use serde::{Deserialize, Serialize};

/// A user's custom resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, Resource)]
#[resource(
    crate = "kubeset_api",
    group = "example.com",
    version = "v1alpha1",
    kind = "Widget",
    plural = "widgets",
    namespaced
)]
struct Widget {
    metadata: ObjectMeta,
    spec: WidgetSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct WidgetSpec {
    size: u32,
}

/// A cluster-scoped one.
#[derive(Clone, Debug, Default, Resource)]
#[resource(
    crate = "kubeset_api",
    group = "example.com",
    version = "v1",
    kind = "Gadget",
    plural = "gadgets",
    cluster
)]
struct Gadget {
    metadata: ObjectMeta,
}

fn namespaced_only<K: Resource<Scope = NamespaceResourceScope>>() -> &'static str {
    K::PLURAL
}

fn scope_of<K: Resource>() -> bool {
    K::Scope::NAMESPACED
}

#[test]
fn user_kinds_implement_resource() {
    assert_eq!(Widget::API_VERSION, "example.com/v1alpha1");
    assert_eq!(Widget::GROUP, "example.com");
    assert_eq!(Widget::VERSION, "v1alpha1");
    assert_eq!(Widget::KIND, "Widget");
    assert_eq!(namespaced_only::<Widget>(), "widgets");
    assert!(scope_of::<Widget>());
    assert!(!scope_of::<Gadget>());
    let _: Option<<Gadget as Resource>::Scope> = None::<ClusterResourceScope>;

    let mut w = Widget::default();
    w.metadata_mut().name = Some("w1".into());
    assert_eq!(w.metadata().name.as_deref(), Some("w1"));
    let g = Gadget::default();
    assert_eq!(g.metadata().name, None);

    let list = List {
        metadata: Default::default(),
        items: vec![w.clone()],
    };
    let json = serde_json::to_value(&list).unwrap();
    assert_eq!(json["kind"], "WidgetList");
    assert_eq!(json["apiVersion"], "example.com/v1alpha1");
    let back: List<Widget> = serde_json::from_value(json).unwrap();
    assert_eq!(back.items, vec![w]);
}

#[cfg(feature = "core-v1")]
#[test]
fn generated_kinds_carry_their_scope() {
    use kubeset_api::api::core::v1::{Namespace, Pod};
    assert_eq!(namespaced_only::<Pod>(), "pods");
    assert!(!scope_of::<Namespace>());
    assert_eq!(<Namespace as Resource>::PLURAL, "namespaces");
}
