//! `kubeset_rest::from_json`'s charge for objects in nested arrays, against
//! the models: every element type fits the charge, and real bodies pass.

use kubeset_client::List;
use kubeset_client::api::core::v1::{
    Container, EphemeralContainer, PersistentVolumeClaim, Pod, Volume,
};
use kubeset_rest::fuzz_hooks::NESTED_ELEMENT;

/// The largest element types of nested arrays in the models, by the
/// generator's layout table (`kubeset-api/src/layout/generated.rs`):
/// `Volume` is the largest; a `StatefulSet`'s `volumeClaimTemplates`
/// hold whole `PersistentVolumeClaim`s.
#[test]
fn the_models_element_types_fit_the_nested_charge() {
    let largest = [
        ("Volume", size_of::<Volume>()),
        ("EphemeralContainer", size_of::<EphemeralContainer>()),
        ("Container", size_of::<Container>()),
        ("PersistentVolumeClaim", size_of::<PersistentVolumeClaim>()),
    ];
    for (name, size) in largest {
        assert!(size <= NESTED_ELEMENT, "{name}: {size} > {NESTED_ELEMENT}");
    }
    // The charge is not far above what it must cover.
    assert!(size_of::<Volume>() * 11 / 10 > NESTED_ELEMENT);
}

/// A list of 1,000 copies of a real Pod (the first of
/// `shared/bench/gen_podlist.py`'s list: two containers, probes, ports,
/// env, volumes, managedFields) decodes: real lists are never refused.
#[test]
fn a_real_pod_list_decodes() {
    let pod = include_str!("fixtures/pod.json");
    let body = format!(
        r#"{{"apiVersion":"v1","kind":"PodList","metadata":{{"resourceVersion":"1"}},"items":[{}]}}"#,
        vec![pod; 1000].join(",")
    );
    let list: List<Pod> = kubeset_rest::from_json(body.as_bytes()).expect("a real list decodes");
    assert_eq!(list.items.len(), 1000);
    let one: Pod = kubeset_rest::from_json(pod.as_bytes()).expect("a real pod decodes");
    assert!(!one.spec.unwrap_or_default().containers.is_empty());
}
