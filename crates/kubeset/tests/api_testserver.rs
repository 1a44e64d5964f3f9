//! The typed and dynamic APIs against the embedded API server, over real
//! sockets.

use std::collections::BTreeMap;

use futures::{StreamExt as _, TryStreamExt as _};
use kubeset::api::apps::v1::{Deployment, DeploymentSpec};
use kubeset::api::core::v1::{ConfigMap, Container, Namespace, PodSpec, PodTemplateSpec};
use kubeset::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kubeset::discovery::Discovery;
use kubeset::dynamic::{ApiResource, DynamicObject};
use kubeset::params::{DeleteParams, ListParams, PatchParams, PostParams, WatchParams};
use kubeset::rest::{RestClient, RestConfig};
use kubeset::{Api, Client, Deleted, Patch, WatchEvent};
use kubeset_testserver::TestServer;
use serde_json::json;

async fn setup() -> (TestServer, Client) {
    let server = TestServer::start().await.expect("test server starts");
    let rest = RestClient::new(RestConfig::new(server.url()).with_qps_burst(-1.0, 0))
        .expect("client builds");
    (server, Client::new(rest, "default"))
}

fn cm(name: &str, labels: &[(&str, &str)], data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..ObjectMeta::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        ..ConfigMap::default()
    }
}

#[tokio::test]
async fn typed_crud_list_and_conflict() {
    let (_server, client) = setup().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());

    let created = cms
        .create(
            &PostParams::default(),
            &cm("a", &[("app", "web")], &[("k", "v")]),
        )
        .await
        .unwrap();
    assert_eq!(created.metadata.name.as_deref(), Some("a"));
    assert!(created.metadata.uid.is_some(), "server assigns a uid");
    cms.create(&PostParams::default(), &cm("b", &[("app", "db")], &[]))
        .await
        .unwrap();

    let again = cms
        .create(&PostParams::default(), &cm("a", &[], &[]))
        .await
        .unwrap_err();
    assert!(again.is_already_exists(), "{again}");

    let got = cms.get("a").await.unwrap();
    assert_eq!(
        got.data,
        Some(BTreeMap::from([("k".to_owned(), "v".to_owned())]))
    );
    assert!(cms.get_opt("missing").await.unwrap().is_none());
    assert!(cms.get("missing").await.unwrap_err().is_not_found());

    let web = cms
        .list(&ListParams::default().labels("app=web"))
        .await
        .unwrap();
    assert_eq!(web.items.len(), 1);
    assert_eq!(web.items[0].metadata.name.as_deref(), Some("a"));

    // Replace with the current resourceVersion works; with a stale one it conflicts.
    let mut fresh = got.clone();
    fresh.data = Some(BTreeMap::from([("k".to_owned(), "v2".to_owned())]));
    let replaced = cms
        .replace("a", &PostParams::default(), &fresh)
        .await
        .unwrap();
    assert_ne!(
        replaced.metadata.resource_version,
        got.metadata.resource_version
    );
    let stale = cms
        .replace("a", &PostParams::default(), &got)
        .await
        .unwrap_err();
    assert!(stale.is_conflict(), "{stale}");

    // kube-apiserver answers a ConfigMap's DELETE with a Success Status.
    match cms.delete("b", &DeleteParams::default()).await.unwrap() {
        Deleted::Gone(status) => assert_eq!(status.status.as_deref(), Some("Success")),
        Deleted::Pending(obj) => panic!("configmap should be gone, got {obj:?}"),
    }
    assert!(cms.get_opt("b").await.unwrap().is_none());
}

#[tokio::test]
async fn paginated_list_sees_every_object_once() {
    let (_server, client) = setup().await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    for i in 0..23 {
        cms.create(&PostParams::default(), &cm(&format!("cm-{i:02}"), &[], &[]))
            .await
            .unwrap();
    }
    let names: Vec<String> = cms
        .list_paginated(ListParams::default().limit(5))
        .map_ok(|c| c.metadata.name.unwrap_or_default())
        .try_collect()
        .await
        .unwrap();
    let expected: Vec<String> = (0..23).map(|i| format!("cm-{i:02}")).collect();
    assert_eq!(names, expected);
}

fn deployment(name: &str, image: &str) -> Deployment {
    let labels = BTreeMap::from([("app".to_owned(), name.to_owned())]);
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(DeploymentSpec {
            replicas: Some(1),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![
                        Container {
                            name: "app".into(),
                            image: Some(image.into()),
                            ..Container::default()
                        },
                        Container {
                            name: "sidecar".into(),
                            image: Some("proxy:1".into()),
                            ..Container::default()
                        },
                    ],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    }
}

#[tokio::test]
async fn patches_of_every_kind() {
    let (_server, client) = setup().await;
    let deploys: Api<Deployment> = Api::namespaced(client, "default");
    deploys
        .create(&PostParams::default(), &deployment("web", "nginx:1"))
        .await
        .unwrap();

    // Strategic merge: the container list merges by name, the sidecar stays.
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}});
    let d = deploys
        .patch("web", &PatchParams::default(), &Patch::Strategic(&patch))
        .await
        .unwrap();
    let containers = &d
        .spec
        .as_ref()
        .unwrap()
        .template
        .spec
        .as_ref()
        .unwrap()
        .containers;
    assert_eq!(containers.len(), 2);
    assert_eq!(containers[0].image.as_deref(), Some("nginx:2"));
    assert_eq!(containers[1].name, "sidecar");

    // Merge patch and JSON patch.
    let d = deploys
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"tier": "fe"}}})),
        )
        .await
        .unwrap();
    assert_eq!(d.metadata.labels.as_ref().unwrap()["tier"], "fe");
    let d = deploys
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Json(json!([{"op": "replace", "path": "/spec/replicas", "value": 3}])),
        )
        .await
        .unwrap();
    assert_eq!(d.spec.unwrap().replicas, Some(3));

    // Server-side apply by two managers: a conflict, then force.
    let intent = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"owner": "one"}});
    let cms: Api<ConfigMap> = Api::namespaced(deploys.client().clone(), "default");
    cms.patch(
        "applied",
        &PatchParams::apply("one"),
        &Patch::Apply(&intent),
    )
    .await
    .unwrap();
    let other = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"owner": "two"}});
    let conflict = cms
        .patch("applied", &PatchParams::apply("two"), &Patch::Apply(&other))
        .await
        .unwrap_err();
    assert!(conflict.is_conflict(), "{conflict}");
    let forced = cms
        .patch(
            "applied",
            &PatchParams::apply("two").force(),
            &Patch::Apply(&other),
        )
        .await
        .unwrap();
    assert_eq!(forced.data.unwrap()["owner"], "two");
}

#[tokio::test]
async fn watch_sees_changes_in_order_and_resumes() {
    let (_server, client) = setup().await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    let list = cms.list(&ListParams::default()).await.unwrap();
    let start = list.metadata.resource_version.clone().unwrap_or_default();

    let mut watch = cms
        .watch(&WatchParams::default().bookmarks().timeout(30), &start)
        .await
        .unwrap();
    cms.create(&PostParams::default(), &cm("w", &[], &[("n", "1")]))
        .await
        .unwrap();
    cms.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"n": "2"}})),
    )
    .await
    .unwrap();
    cms.delete("w", &DeleteParams::default()).await.unwrap();

    let mut seen = Vec::new();
    let mut last_rv = String::new();
    while seen.len() < 3 {
        let ev = tokio::time::timeout(std::time::Duration::from_secs(10), watch.next())
            .await
            .expect("event within 10 s")
            .expect("stream open")
            .expect("event decodes");
        match ev {
            WatchEvent::Added(c) => {
                last_rv = c.metadata.resource_version.clone().unwrap();
                seen.push("ADDED")
            }
            WatchEvent::Modified(c) => {
                last_rv = c.metadata.resource_version.clone().unwrap();
                seen.push("MODIFIED")
            }
            WatchEvent::Deleted(c) => {
                last_rv = c.metadata.resource_version.clone().unwrap();
                seen.push("DELETED")
            }
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(e) => panic!("watch error {e}"),
        }
    }
    assert_eq!(seen, ["ADDED", "MODIFIED", "DELETED"]);

    // Resuming from the last seen version replays nothing old.
    cms.create(&PostParams::default(), &cm("after", &[], &[]))
        .await
        .unwrap();
    let mut resumed = cms.watch(&WatchParams::default(), &last_rv).await.unwrap();
    let ev = tokio::time::timeout(std::time::Duration::from_secs(10), resumed.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    match ev {
        WatchEvent::Added(c) => assert_eq!(c.metadata.name.as_deref(), Some("after")),
        other => panic!("expected ADDED of 'after', got {other:?}"),
    }
}

#[tokio::test]
async fn cluster_scoped_and_dynamic_and_discovery() {
    let (_server, client) = setup().await;
    let namespaces: Api<Namespace> = Api::cluster(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &Namespace {
                metadata: ObjectMeta {
                    name: Some("team-a".into()),
                    ..ObjectMeta::default()
                },
                ..Namespace::default()
            },
        )
        .await
        .unwrap();
    let all = namespaces.list(&ListParams::default()).await.unwrap();
    assert!(
        all.items
            .iter()
            .any(|n| n.metadata.name.as_deref() == Some("team-a"))
    );

    let discovery = Discovery::run(&client).await.unwrap();
    let deploy = discovery
        .resolve_name("deploy")
        .expect("deployments are discovered");
    assert_eq!(deploy.resource, ApiResource::of::<Deployment>());
    assert_eq!(
        discovery.resolve_name("configmaps").unwrap().resource.kind,
        "ConfigMap"
    );
    assert_eq!(
        discovery
            .resolve_kind("apps", "Deployment")
            .unwrap()
            .resource
            .plural,
        "deployments"
    );

    let res = ApiResource::of::<ConfigMap>();
    let dynamic: Api<DynamicObject> = Api::dynamic(client.clone(), &res, Some("team-a"));
    let obj = DynamicObject::new("dyn", &res).with("data", json!({"x": "1"}));
    let created = dynamic.create(&PostParams::default(), &obj).await.unwrap();
    assert_eq!(created.name(), "dyn");
    assert_eq!(created.data["data"]["x"], "1");
    // The typed API reads what the dynamic one wrote.
    let typed: Api<ConfigMap> = Api::namespaced(client, "team-a");
    assert_eq!(typed.get("dyn").await.unwrap().data.unwrap()["x"], "1");
}

#[tokio::test]
async fn typed_resumable_watch_follows_the_cluster_when_its_server_dies() {
    let server = TestServer::builder()
        .replicas(2)
        .bookmark_interval(std::time::Duration::from_millis(200))
        .start()
        .await
        .expect("test server starts");
    let urls = server.urls();
    // The failover settings come from the user-level Config.
    let mut config = kubeset::Config::new(urls[0].parse().expect("a URL"));
    config.extra_endpoints = vec![urls[1].parse().expect("a URL")];
    config.qps = -1.0;
    config.request_deadline = Some(std::time::Duration::from_secs(6));
    config.watch_idle_timeout = Some(std::time::Duration::from_millis(1500));
    let client = Client::try_from_config(&config).expect("client builds");
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");

    let list = cms.list(&ListParams::default()).await.expect("list");
    let rv = list.metadata.resource_version.clone().unwrap_or_default();
    let mut w = cms
        .watch_resumable(&WatchParams::default().bookmarks(), &rv)
        .await
        .expect("watch opens");
    let mut seen = Vec::new();
    let next_added = async |w: &mut kubeset::ResumableWatch<ConfigMap>| loop {
        let ev = tokio::time::timeout(std::time::Duration::from_secs(20), w.next())
            .await
            .expect("an event within 20 s")
            .expect("the watch goes on")
            .expect("no error item");
        match ev {
            WatchEvent::Added(cm) => return cm.metadata.name.expect("named"),
            WatchEvent::Bookmark(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    };
    cms.create(&PostParams::default(), &cm("w0", &[], &[]))
        .await
        .expect("create w0");
    seen.push(next_added(&mut w).await);
    let serving = urls
        .iter()
        .position(|u| u == w.endpoint())
        .expect("a replica");
    server.faults(serving).expect("replica").down().await;
    for name in ["w1", "w2"] {
        cms.create(&PostParams::default(), &cm(name, &[], &[]))
            .await
            .expect("create fails over");
    }
    seen.push(next_added(&mut w).await);
    seen.push(next_added(&mut w).await);
    assert_eq!(seen, ["w0", "w1", "w2"], "every event once, in order");
    assert_ne!(w.endpoint(), urls[serving]);
    assert!(w.resumes() >= 1);
}
