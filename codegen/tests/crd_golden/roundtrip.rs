//! Runs inside the golden user crate (`crd_golden`): the generated types
//! decode objects in the shape the server serves and write them back equal.

use crd_golden::crds::golden_example_com::v1::{
    Gadget, GadgetSpecAlgorithm, GadgetSpecProtocol, Route, RouteSpecPort, RouteSpecTarget,
    Widget, WidgetList, WidgetSpec,
};
use crd_golden::crds::golden_x_k8s_io::{v1, v1beta1};
use kubeset::{ClusterResourceScope, NamespaceResourceScope, Resource};
use serde_json::{Value, json};

/// Decodes `value` as `K`, encodes it again and checks nothing was lost.
fn round_trip<K: serde::de::DeserializeOwned + serde::Serialize>(value: Value) -> K {
    let typed: K = serde_json::from_value(value.clone()).expect("decodes");
    let back = serde_json::to_value(&typed).expect("encodes");
    assert_eq!(back, value, "round trip changed the object");
    typed
}

fn meta(name: &str) -> Value {
    json!({
        "name": name,
        "namespace": "default",
        "uid": "0b1c6a3e-4b0e-4d57-9a43-2f8f0c1c9d10",
        "resourceVersion": "4211",
        "generation": 2,
        "creationTimestamp": "2026-12-01T10:00:00Z",
        "labels": {"app": "golden"},
        "managedFields": [{
            "apiVersion": "golden.example.com/v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:size": {}}},
            "manager": "kubectl",
            "operation": "Update",
            "time": "2026-12-01T10:00:00Z"
        }]
    })
}

#[test]
fn nested_objects_keywords_and_snake_case_collisions() {
    let w: Widget = round_trip(json!({
        "apiVersion": "golden.example.com/v1",
        "kind": "Widget",
        "metadata": meta("w1"),
        "spec": {
            "size": 3,
            "type": "round",
            "mirrorPercent": 10,
            "mirror_percent": 20,
            "fooBar": {"x": "1"},
            "foo": {"bar": {"y": "2"}},
            "parts": [{"name": "a", "weight": 1.5}],
            "labelsByZone": {"eu": {"zone": "eu-1"}}
        },
        "status": {"ready": true, "observedGeneration": 2}
    }));
    let spec = w.spec.as_ref().expect("spec");
    assert_eq!(spec.type_.as_deref(), Some("round"));
    assert_eq!((spec.mirror_percent_2, spec.mirror_percent), (Some(10), Some(20)));
    assert_eq!(spec.foo_bar.as_ref().and_then(|f| f.x.as_deref()), Some("1"));
    let bar = spec.foo.as_ref().and_then(|f| f.bar.as_ref()).and_then(|b| b.y.as_deref());
    assert_eq!(bar, Some("2"));
    assert_eq!(w.metadata.name.as_deref(), Some("w1"));
    // A freshly built object carries apiVersion and kind.
    let new = Widget::new("w2", WidgetSpec { size: 1, ..WidgetSpec::default() });
    let v = serde_json::to_value(&new).expect("encodes");
    assert_eq!(v["apiVersion"], "golden.example.com/v1");
    assert_eq!(v["kind"], "Widget");
    assert_eq!(v["spec"], json!({"size": 1}));
    // Lists as the server returns them (items without apiVersion/kind).
    let list: WidgetList = serde_json::from_value(json!({
        "apiVersion": "golden.example.com/v1",
        "kind": "WidgetList",
        "metadata": {"resourceVersion": "4300"},
        "items": [{"metadata": {"name": "w1"}, "spec": {"size": 1}}]
    }))
    .expect("list decodes");
    assert_eq!(list.items[0].spec.as_ref().map(|s| s.size), Some(1));
}

#[test]
fn resource_constants_follow_the_crd() {
    fn namespaced<K: Resource<Scope = NamespaceResourceScope>>() -> (&'static str, &'static str) {
        (K::API_VERSION, K::PLURAL)
    }
    fn cluster<K: Resource<Scope = ClusterResourceScope>>() -> (&'static str, &'static str) {
        (K::API_VERSION, K::PLURAL)
    }
    assert_eq!(namespaced::<Widget>(), ("golden.example.com/v1", "widgets"));
    assert_eq!(Widget::SHORT_NAMES, ["wd"]);
    assert_eq!(Widget::RESOURCE_INFO.subresources, ["status"]);
    assert_eq!(cluster::<v1::Backend>(), ("golden.x-k8s.io/v1", "backends"));
    assert_eq!(v1::Backend::RESOURCE_INFO.subresources, ["scale", "status"]);
    assert_eq!(v1::Backend::SHORT_NAMES, ["be", "bes"]);
    assert_eq!(cluster::<v1beta1::Backend>().0, "golden.x-k8s.io/v1beta1");
    // The single-file form (for build.rs) has the same types.
    use crd_golden::single::golden_example_com::v1 as single;
    assert_eq!(namespaced::<single::Widget>(), namespaced::<Widget>());
    let w: single::Widget = serde_json::from_value(json!({"metadata": {"name": "s"}, "spec": {"size": 2}}))
        .expect("decodes");
    assert_eq!(w.spec.map(|s| s.size), Some(2));
}

#[test]
fn string_enums_keep_unknown_values_and_defaults_apply() {
    let g: Gadget = round_trip(json!({
        "apiVersion": "golden.example.com/v1",
        "kind": "Gadget",
        "metadata": meta("g1"),
        "spec": {
            "algorithm": "Quantum",
            "protocol": "HTTP/1.1",
            "mode": "Fast",
            "replicas": 5,
            "enabled": false,
            "ratio": 0.25,
            "name": "g"
        }
    }));
    let spec = g.spec.expect("spec");
    assert_eq!(spec.algorithm, GadgetSpecAlgorithm::Other("Quantum".into()));
    assert_eq!(spec.protocol, Some(GadgetSpecProtocol::Http11));
    // "Other" is a listed value here: the fallback variant moved aside.
    let other: GadgetSpecProtocol = serde_json::from_value(json!("Other")).expect("decodes");
    assert_eq!(other, GadgetSpecProtocol::Other);
    let empty: GadgetSpecProtocol = serde_json::from_value(json!("")).expect("decodes");
    assert_eq!(empty, GadgetSpecProtocol::Empty);
    // Absent fields with a schema default read as that default; null for a
    // nullable enum is None.
    let g: Gadget = serde_json::from_value(json!({
        "metadata": {"name": "g2"},
        "spec": {"mode": null}
    }))
    .expect("decodes");
    let spec = g.spec.expect("spec");
    assert_eq!(spec.algorithm, GadgetSpecAlgorithm::Rsa);
    assert_eq!((spec.replicas, spec.enabled, spec.ratio), (3, true, 0.5));
    assert_eq!(spec.name, "gadget");
    assert_eq!(spec.mode, None);
}

#[test]
fn one_of_alternatives_decode_by_json_type() {
    let r: Route = round_trip(json!({
        "apiVersion": "golden.example.com/v1",
        "kind": "Route",
        "metadata": meta("r1"),
        "spec": {"exact": "/a", "port": 8080, "target": "svc", "ambiguous": {"a": "x", "z": 1}}
    }));
    let spec = r.spec.expect("spec");
    assert_eq!(spec.port, Some(RouteSpecPort::Int(8080)));
    assert_eq!(spec.target, Some(RouteSpecTarget::String("svc".into())));
    assert_eq!(spec.ambiguous, Some(json!({"a": "x", "z": 1})));
    let r: Route = round_trip(json!({
        "apiVersion": "golden.example.com/v1",
        "kind": "Route",
        "metadata": meta("r2"),
        "spec": {"prefix": "/b", "port": ["http", "https"], "target": {"host": "h"}}
    }));
    let spec = r.spec.expect("spec");
    assert_eq!(spec.port, Some(RouteSpecPort::List(vec!["http".into(), "https".into()])));
    assert!(matches!(spec.target, Some(RouteSpecTarget::Object(_))));
}

#[test]
fn kubernetes_extensions_and_formats() {
    let b: v1::Backend = round_trip(json!({
        "apiVersion": "golden.x-k8s.io/v1",
        "kind": "Backend",
        "metadata": {"name": "b1", "uid": "u", "resourceVersion": "1"},
        "spec": {
            "port": "http",
            "config": {"any": ["thing", 1, null]},
            "extra": {"known": "k", "unknown": {"deep": true}},
            "template": {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "inner", "labels": {"a": "b"}},
                "data": {"k": "v"}
            },
            "annotations": {"a": "b"},
            "anything": {"n": 1},
            "note": "n",
            "since": "2026-12-01T10:00:00Z",
            "small": 2147483647,
            "big": 9007199254740993i64,
            "plain": -1,
            "weight": 0.5,
            "cert": "aGVsbG8=",
            "replicas": 2
        },
        "status": {"replicas": 2}
    }));
    let spec = b.spec.expect("spec");
    let extra = spec.extra.expect("extra");
    assert_eq!(extra.unknown_fields["unknown"], json!({"deep": true}));
    let template = spec.template.expect("template");
    assert_eq!(template.kind.as_deref(), Some("ConfigMap"));
    assert_eq!(template.metadata.and_then(|m| m.name).as_deref(), Some("inner"));
    assert_eq!(template.unknown_fields["data"], json!({"k": "v"}));
    assert_eq!(spec.big, Some(9007199254740993));
    assert_eq!(serde_json::to_value(spec.since).expect("time"), json!("2026-12-01T10:00:00Z"));
    // A version whose schema only preserves unknown fields keeps them all.
    let old: v1beta1::Backend = serde_json::from_value(json!({
        "apiVersion": "golden.x-k8s.io/v1beta1",
        "kind": "Backend",
        "metadata": {"name": "b0"},
        "spec": {"whatever": 1}
    }))
    .expect("decodes");
    assert_eq!(old.unknown_fields["spec"], json!({"whatever": 1}));
    assert!(!old.unknown_fields.contains_key("apiVersion") && !old.unknown_fields.contains_key("kind"));
    let back = serde_json::to_value(&old).expect("encodes");
    assert_eq!(back["spec"], json!({"whatever": 1}));
    assert_eq!(back["apiVersion"], "golden.x-k8s.io/v1beta1");
}
