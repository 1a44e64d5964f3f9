//! The written-out `Serialize`/`Deserialize` of the generated structs, on
//! real models: output key order, `null` for required fields, unknown keys,
//! repeated keys, errors naming the field, and every serde_json reader.

#![cfg(feature = "core-v1")]

use kubeset_api::api::core::v1::{Container, ContainerPort, Pod, PodSpec};
use kubeset_api::apimachinery::pkg::apis::meta::v1::ObjectMeta;

fn pod() -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some("p".into()),
            namespace: Some("ns".into()),
            labels: Some(
                [
                    ("b".to_owned(), "2".to_owned()),
                    ("a".to_owned(), "1".to_owned()),
                ]
                .into(),
            ),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "c".into(),
                image: Some("i".into()),
                ports: Some(vec![ContainerPort {
                    container_port: 80,
                    protocol: Some("TCP".into()),
                    ..ContainerPort::default()
                }]),
                ..Container::default()
            }],
            node_name: Some("n".into()),
            ..PodSpec::default()
        }),
        status: None,
    }
}

#[test]
fn output_has_type_meta_first_then_fields_in_json_name_order() {
    let json = serde_json::to_string(&pod()).unwrap();
    assert_eq!(
        json,
        concat!(
            r#"{"apiVersion":"v1","kind":"Pod","#,
            r#""metadata":{"labels":{"a":"1","b":"2"},"name":"p","namespace":"ns"},"#,
            r#""spec":{"containers":[{"image":"i","name":"c","#,
            r#""ports":[{"containerPort":80,"protocol":"TCP"}]}],"nodeName":"n"}}"#
        )
    );
}

#[test]
fn every_reader_gives_the_same_object() {
    let json = serde_json::to_string(&pod()).unwrap();
    let from_str: Pod = serde_json::from_str(&json).unwrap();
    let from_slice: Pod = serde_json::from_slice(json.as_bytes()).unwrap();
    // A reader yields keys that do not borrow from the input.
    let from_reader: Pod = serde_json::from_reader(json.as_bytes()).unwrap();
    let value = serde_json::to_value(pod()).unwrap();
    let from_value: Pod = serde_json::from_value(value).unwrap();
    for p in [from_str, from_slice, from_reader, from_value] {
        assert_eq!(p, pod());
    }
}

#[test]
fn null_for_required_fields_reads_as_default() {
    let p: Pod = serde_json::from_str(
        r#"{"metadata":null,"spec":{"containers":[{"name":null,"ports":[{"containerPort":null}]}]}}"#,
    )
    .unwrap();
    assert_eq!(p.metadata, ObjectMeta::default());
    let c = &p.spec.unwrap().containers[0];
    assert_eq!(c.name, "");
    assert_eq!(c.ports.as_ref().unwrap()[0].container_port, 0);

    let p: Pod = serde_json::from_str(r#"{"spec":{"containers":null}}"#).unwrap();
    assert!(p.spec.unwrap().containers.is_empty());
}

#[test]
fn unknown_keys_and_any_type_meta_are_ignored_on_input() {
    let p: Pod = serde_json::from_str(
        r#"{"apiVersion":"apps/v1","kind":"Deployment","future":{"x":[1,2,{"y":null}]},
            "metadata":{"name":"p","futureMeta":true}}"#,
    )
    .unwrap();
    assert_eq!(p.metadata.name.as_deref(), Some("p"));
    assert_eq!(p.spec, None);
}

#[test]
fn a_repeated_key_takes_the_last_value() {
    let p: Pod =
        serde_json::from_str(r#"{"metadata":{"name":"a","name":"b"},"spec":null}"#).unwrap();
    assert_eq!(p.metadata.name.as_deref(), Some("b"));
}

#[test]
fn a_wrong_type_names_the_innermost_struct_and_field() {
    let e = serde_json::from_str::<Pod>(
        r#"{"spec":{"containers":[{"name":"c","ports":[{"containerPort":"80"}]}]}}"#,
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with(
            "in `ContainerPort.containerPort`: invalid type: string \"80\", expected i32 at line 1"
        ),
        "{msg}"
    );
    assert!(e.is_data(), "{msg}");

    let msg = serde_json::from_str::<Pod>(r#"{"metadata":{"labels":{"a":1}}}"#)
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with("in `ObjectMeta.labels`: invalid type: integer `1`"),
        "{msg}"
    );

    let msg = serde_json::from_str::<Pod>(r#"{"spec":[]}"#)
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with("in `Pod.spec`: invalid type: sequence, expected struct PodSpec"),
        "{msg}"
    );
}

#[test]
fn syntax_errors_stay_syntax_errors() {
    let e = serde_json::from_str::<Pod>(r#"{"metadata":{"name":"p"#).unwrap_err();
    assert!(e.is_eof(), "{e}");
    let e = serde_json::from_str::<Pod>(r#"{"metadata":{"name" "p"}}"#).unwrap_err();
    assert!(e.is_syntax(), "{e}");
}

#[test]
fn decoded_lists_keep_no_spare_capacity() {
    let spec: PodSpec = serde_json::from_value(serde_json::json!({
        "containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
        "volumes": [{"name": "v1"}, {"name": "v2"}, {"name": "v3"}, {"name": "v4"}, {"name": "v5"}],
    }))
    .unwrap();
    assert_eq!(spec.containers.len(), 3);
    assert_eq!(spec.containers.capacity(), 3);
    let volumes = spec.volumes.as_ref().unwrap();
    assert_eq!(volumes.len(), 5);
    assert_eq!(volumes.capacity(), 5);
    let empty: PodSpec = serde_json::from_str(r#"{"containers": null, "volumes": []}"#).unwrap();
    assert!(empty.containers.is_empty());
    assert_eq!(empty.volumes.map(|v| v.capacity()), Some(0));
}
