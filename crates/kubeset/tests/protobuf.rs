//! `Api<K>` with protobuf negotiated (`WireFormat::Protobuf`) against the
//! embedded server, over real sockets: create, get, list, replace of a
//! built-in kind; errors as protobuf `Status`; JSON again, once, when the
//! server refuses protobuf (406/415); custom resources stay JSON.

use kubeset::api::core::v1::ConfigMap;
use kubeset::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset::params::{ListParams, PostParams};
use kubeset::rest::content::{PROTOBUF, PROTOBUF_ACCEPT, WireFormat};
use kubeset::rest::{RestClient, RestConfig};
use kubeset::{Api, Client};
use kubeset_testserver::TestServer;

fn client(server: &TestServer, format: WireFormat) -> Client {
    let rest = RestClient::new(
        RestConfig::new(server.url())
            .with_qps_burst(-1.0, 0)
            .with_wire_format(format),
    )
    .expect("client builds");
    Client::new(rest, "default")
}

fn cm(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        data: Some([("k".to_owned(), value.to_owned())].into()),
        ..ConfigMap::default()
    }
}

#[tokio::test]
async fn crud_in_protobuf() {
    let server = TestServer::start().await.expect("test server starts");
    let c = client(&server, WireFormat::Protobuf);
    assert_eq!(c.rest().wire_format(), WireFormat::Protobuf);
    let cms: Api<ConfigMap> = Api::default_namespaced(c.clone());

    let created = cms
        .create(&PostParams::default(), &cm("a", "1"))
        .await
        .unwrap();
    assert_eq!(created.data, cm("a", "1").data);
    assert!(created.metadata.uid.is_some());
    let got = cms.get("a").await.unwrap();
    assert_eq!(got, created);
    let mut changed = got.clone();
    changed.data = cm("a", "2").data;
    let replaced = cms
        .replace("a", &PostParams::default(), &changed)
        .await
        .unwrap();
    assert_eq!(replaced.data, changed.data);
    let list = cms.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].data, changed.data);
    assert!(list.metadata.resource_version.is_some());

    // The same objects a JSON client reads.
    let json: Api<ConfigMap> = Api::default_namespaced(client(&server, WireFormat::Json));
    assert_eq!(json.get("a").await.unwrap(), replaced);

    // The answers the Api decoded were protobuf: the server writes it for
    // the Accept header the Api sends.
    let resp = c
        .rest()
        .get()
        .namespace("default")
        .resource("configmaps")
        .name("a")
        .header(
            http::header::ACCEPT,
            http::HeaderValue::from_static(PROTOBUF_ACCEPT),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.content_type.as_deref(), Some(PROTOBUF));

    // A protobuf Status is the same typed error.
    let err = cms.get("missing").await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let err = cms
        .create(&PostParams::default(), &cm("a", "3"))
        .await
        .unwrap_err();
    assert!(err.is_already_exists(), "{err}");
}

#[tokio::test]
async fn json_again_when_the_server_refuses_protobuf() {
    let server = TestServer::start().await.expect("test server starts");
    let cms: Api<ConfigMap> = Api::default_namespaced(client(&server, WireFormat::Protobuf));
    let faults = server.replica(0).expect("one replica").faults();
    // 415 for the protobuf body: the create is sent again in JSON.
    faults.fail_next(1, 415, None);
    let before = faults.requests_served();
    let created = cms
        .create(&PostParams::default(), &cm("b", "1"))
        .await
        .unwrap();
    assert_eq!(created.data, cm("b", "1").data);
    assert_eq!(
        faults.requests_served() - before,
        2,
        "one refused, one in JSON"
    );
    // 406 for the Accept header: the get is asked again in JSON.
    faults.fail_next(1, 406, None);
    assert_eq!(cms.get("b").await.unwrap(), created);
    // A JSON client does not retry a 415: it is the caller's error.
    let json: Api<ConfigMap> = Api::default_namespaced(client(&server, WireFormat::Json));
    faults.fail_next(1, 415, None);
    assert!(json.get("b").await.is_err());
}
