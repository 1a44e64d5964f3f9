//! `Api<K>` with protobuf negotiated (`WireFormat::Protobuf`) against the
//! embedded server, over real sockets: create, get, list, replace of a
//! built-in kind; errors as protobuf `Status`; JSON again, once, when the
//! server refuses protobuf (406/415); custom resources stay JSON; watch
//! in protobuf `;stream=watch` frames (plain, resumable across a cut, and
//! the frames' bytes read by the REST layer's decoder).

use kubeset::api::core::v1::ConfigMap;
use kubeset::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::time::Duration;

use futures::StreamExt as _;
use kubeset::params::{DeleteParams, ListParams, PostParams, WatchParams};
use kubeset::rest::content::{PROTOBUF, PROTOBUF_ACCEPT, WireFormat};
use kubeset::rest::watch::FrameDecoder;
use kubeset::rest::{RestClient, RestConfig};
use kubeset::{Api, Client, WatchEvent};
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
    assert_eq!(resp.content_type(), Some(PROTOBUF));

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

/// The next event of `events`, within a generous bound.
async fn next<S, T>(events: &mut S) -> WatchEvent<T>
where
    S: futures::Stream<Item = Result<WatchEvent<T>, kubeset::Error>> + Unpin,
{
    tokio::time::timeout(Duration::from_secs(30), events.next())
        .await
        .expect("an event within 30 s")
        .expect("the stream is open")
        .expect("the event decodes")
}

fn name_of(ev: &WatchEvent<ConfigMap>) -> (&'static str, Option<&str>) {
    let (kind, cm) = match ev {
        WatchEvent::Added(cm) => ("ADDED", cm),
        WatchEvent::Modified(cm) => ("MODIFIED", cm),
        WatchEvent::Deleted(cm) => ("DELETED", cm),
        WatchEvent::Bookmark(cm) => ("BOOKMARK", cm),
        WatchEvent::Error(e) => panic!("{e}"),
    };
    (kind, cm.metadata.name.as_deref())
}

/// A server, a protobuf client, its ConfigMaps and their resourceVersion.
async fn protobuf_setup() -> (TestServer, Client, Api<ConfigMap>, String) {
    let server = TestServer::start().await.expect("test server starts");
    let c = client(&server, WireFormat::Protobuf);
    let cms: Api<ConfigMap> = Api::default_namespaced(c.clone());
    let rv = cms.list(&ListParams::default()).await.unwrap();
    let rv = rv.metadata.resource_version.unwrap_or_default();
    (server, c, cms, rv)
}

#[tokio::test]
async fn watch_in_protobuf() {
    let (_server, c, cms, rv) = protobuf_setup().await;

    let mut events = cms
        .watch(&WatchParams::default().timeout(60), &rv)
        .await
        .unwrap();
    let created = cms
        .create(&PostParams::default(), &cm("w", "1"))
        .await
        .unwrap();
    let mut changed = created.clone();
    changed.data = cm("w", "2").data;
    cms.replace("w", &PostParams::default(), &changed)
        .await
        .unwrap();
    cms.delete("w", &DeleteParams::default()).await.unwrap();
    match next(&mut events).await {
        WatchEvent::Added(got) => assert_eq!(got, created),
        other => panic!("{other:?}"),
    }
    match next(&mut events).await {
        WatchEvent::Modified(got) => assert_eq!(got.data, changed.data),
        other => panic!("{other:?}"),
    }
    assert_eq!(name_of(&next(&mut events).await), ("DELETED", Some("w")));

    // What the Api read was protobuf: the same watch, asked with the same
    // Accept, answers `;stream=watch` frames that the REST layer's frame
    // decoder reads (the server ends it after one second).
    let resp = c
        .rest()
        .get()
        .namespace("default")
        .resource("configmaps")
        .param("watch", "true")
        .param("resourceVersion", &rv)
        .param("timeoutSeconds", "1")
        .header(
            http::header::ACCEPT,
            http::HeaderValue::from_static(PROTOBUF_ACCEPT),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.content_type(),
        Some("application/vnd.kubernetes.protobuf;stream=watch")
    );
    let decoder = kubeset::protobuf::watch_decoder::<ConfigMap>().expect("a codec");
    let mut frames = FrameDecoder::new(decoder);
    frames.push(&resp.body);
    let mut kinds = Vec::new();
    while let Some(ev) = frames.next_event() {
        kinds.push(name_of(&ev.unwrap()).0);
    }
    assert_eq!(kinds, ["ADDED", "MODIFIED", "DELETED"]);
    assert!(frames.finish().is_ok(), "whole frames only");

    // A watch the server refuses answers a protobuf Status: the same
    // typed error as in JSON.
    let err = cms
        .watch(&WatchParams::default(), "not-a-version")
        .await
        .unwrap_err();
    let api = err.api_error().expect("the server's Status");
    assert_eq!(api.code, 400, "{err}");
    assert!(api.message.contains("not-a-version"), "{err}");

    // A bookmark: the end of the initial events, in protobuf.
    let mut initial = cms
        .watch(
            &WatchParams::default()
                .initial_events()
                .bookmarks()
                .timeout(60),
            "",
        )
        .await
        .unwrap();
    match next(&mut initial).await {
        WatchEvent::Bookmark(b) => {
            let annotations = b.metadata.annotations.unwrap_or_default();
            assert_eq!(annotations["k8s.io/initial-events-end"], "true");
            assert!(b.metadata.resource_version.is_some());
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn resumable_watch_in_protobuf_and_json_again_on_406() {
    let (server, _, cms, rv) = protobuf_setup().await;
    let faults = server.replica(0).expect("one replica").faults();

    let mut events = cms
        .watch_resumable(&WatchParams::default().timeout(60), &rv)
        .await
        .unwrap();
    cms.create(&PostParams::default(), &cm("r1", "1"))
        .await
        .unwrap();
    assert_eq!(name_of(&next(&mut events).await), ("ADDED", Some("r1")));
    // Cut in the middle of a frame: reopened from the last resourceVersion,
    // nothing lost or repeated.
    faults.cut_watches();
    cms.create(&PostParams::default(), &cm("r2", "1"))
        .await
        .unwrap();
    assert_eq!(name_of(&next(&mut events).await), ("ADDED", Some("r2")));
    assert!(events.resumes() >= 1, "the cut watch was reopened");

    // A server refusing protobuf for the watch: opened again in JSON.
    faults.fail_next(1, 406, None);
    let before = faults.requests_served();
    let mut json = cms
        .watch(&WatchParams::default().timeout(60), &rv)
        .await
        .unwrap();
    assert_eq!(
        faults.requests_served() - before,
        2,
        "one refused, one in JSON"
    );
    assert_eq!(name_of(&next(&mut json).await), ("ADDED", Some("r1")));
}
