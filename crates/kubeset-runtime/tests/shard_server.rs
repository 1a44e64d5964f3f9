//! The server-side shard filter (`shardSelector`, KEP-5866) against the
//! client-side one (feature `shard`): object for object, the API server
//! and [`shard_of`]`(`[`uid_hash`]`(uid))` put every object in the same
//! shard, on lists (paginated too) and watches.
//!
//! Against the embedded server always, and against the realkube instance
//! named by `KUBESET_REALKUBE_ENV`: a kube-apiserver 1.36 started with
//! `--kubernetes 1.36 --feature-gates ShardedListAndWatch=true` filters
//! and is checked the same way; any other (CI's 1.35) must ignore the
//! parameter, which is checked instead, with a printed line saying the
//! agreement was not checked there. Budget: about 10 s per server.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures::StreamExt as _;
use kubeset_client::api::core::v1::{ConfigMap, Namespace};
use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset_client::params::{DeleteParams, ListParams, PostParams};
use kubeset_client::rest::Verb;
use kubeset_client::{Api, Client};
use kubeset_runtime::shard::{server_filters, shard_of, shard_selector, uid_hash};
use kubeset_runtime::{Event, WatcherConfig, watcher};
use kubeset_testserver::TestServer;

const OBJECTS: usize = 300;

async fn create(api: &Api<ConfigMap>, prefix: &str, n: usize) -> BTreeMap<String, String> {
    let mut uids = BTreeMap::new();
    for i in 0..n {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("{prefix}-{i:03}")),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        let made = api
            .create(&PostParams::default(), &cm)
            .await
            .expect("create");
        let uid = made.metadata.uid.expect("a uid");
        uids.insert(uid, made.metadata.name.expect("a name"));
    }
    uids
}

/// Every uid a list with `selector` returns, following `continue`.
async fn list_uids(api: &Api<ConfigMap>, selector: &str, page: Option<u32>) -> Vec<String> {
    let mut params = ListParams::default().shards(selector);
    params.limit = page;
    let mut uids = Vec::new();
    loop {
        let list = api.list(&params).await.expect("sharded list");
        uids.extend(list.items.into_iter().filter_map(|cm| cm.metadata.uid));
        match list.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(next) => params = params.continue_token(&next),
            None => return uids,
        }
    }
}

/// Lists (whole and in pages of 7) agree with the client-side shard of
/// every object, for 2, 3 and 64 shards and a two-range selector.
async fn lists_agree(api: &Api<ConfigMap>, uids: &BTreeMap<String, String>) {
    for shards in [2u32, 3, 64] {
        let mut seen = BTreeSet::new();
        for s in 0..shards {
            let sel = shard_selector([s], shards).expect("a selector");
            let page = if shards == 3 { Some(7) } else { None };
            for uid in list_uids(api, &sel, page).await {
                let name = &uids[&uid];
                assert_eq!(
                    shard_of(uid_hash(&uid), shards),
                    s,
                    "{name} ({uid}) came in shard {s} of {shards}"
                );
                assert!(seen.insert(uid), "{name} came in two shards of {shards}");
            }
        }
        assert_eq!(seen.len(), uids.len(), "every object in one of {shards}");
    }
    let two = shard_selector([0, 2], 4).expect("a selector");
    assert!(two.contains(" || "), "{two}");
    let got: BTreeSet<String> = list_uids(api, &two, None).await.into_iter().collect();
    let want: BTreeSet<String> = uids
        .keys()
        .filter(|u| [0, 2].contains(&shard_of(uid_hash(u), 4)))
        .cloned()
        .collect();
    assert_eq!(got, want, "shards 0 and 2 of 4");
}

/// The list echoes the selector in `metadata.shardInfo`; a malformed one
/// is refused with kube-apiserver's 500 and message.
async fn echo_and_refusal(api: &Api<ConfigMap>) {
    let sel = shard_selector([1], 2).expect("a selector");
    let raw: serde_json::Value = api
        .request(Verb::Get, None)
        .param("shardSelector", &sel)
        .send_json()
        .await
        .expect("list");
    assert_eq!(raw["metadata"]["shardInfo"]["selector"], sel.as_str());
    let bad = "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')";
    let err = api
        .list(&ListParams::default().shards(bad))
        .await
        .expect_err("a malformed selector");
    let status = err.api_error().expect("a Status");
    assert_eq!(status.code, 500, "{err}");
    assert!(
        status
            .message
            .contains("invalid shard selector: hexStart must be a 0x-prefixed 16-digit hex value"),
        "{err}"
    );
}

/// Two watches (shard 0 and 1 of 2) see every new object exactly once,
/// each in its own shard.
async fn watches_agree(api: &Api<ConfigMap>) {
    let mut streams = Vec::new();
    for s in 0..2u32 {
        let sel = shard_selector([s], 2).expect("a selector");
        let mut w = watcher(api.clone(), WatcherConfig::default().shards(&sel)).boxed();
        // The initial state first.
        loop {
            match w.next().await.expect("the watch runs") {
                Ok(Event::InitDone) => break,
                Ok(_) => {}
                Err(e) => panic!("watch {s}: {e}"),
            }
        }
        streams.push(w);
    }
    let fresh = create(api, "late", 40).await;
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let mut both = futures::stream::select_all(
        streams
            .into_iter()
            .enumerate()
            .map(|(s, w)| w.map(move |e| (u32::try_from(s).unwrap_or(0), e))),
    );
    while seen.len() < fresh.len() {
        let (s, ev) = tokio::time::timeout_at(deadline, both.next())
            .await
            .expect("every new object is watched in time")
            .expect("the watches run");
        let Ok(Event::Apply(cm)) = ev else { continue };
        let uid = cm.metadata.uid.clone().unwrap_or_default();
        if !fresh.contains_key(&uid) {
            continue;
        }
        assert_eq!(shard_of(uid_hash(&uid), 2), s, "{uid} came on watch {s}");
        assert!(seen.insert(uid.clone(), s).is_none(), "{uid} came twice");
    }
}

async fn check(client: Client, ns: &str, name: &str) {
    let api: Api<ConfigMap> = Api::namespaced(client, ns);
    let uids = create(&api, "cm", OBJECTS).await;
    lists_agree(&api, &uids).await;
    echo_and_refusal(&api).await;
    watches_agree(&api).await;
    println!("[{name}] server and client shard filters agree on {OBJECTS} objects");
}

#[tokio::test]
async fn embedded_server_filters_like_kube_apiserver_1_36() {
    let server = TestServer::start().await.expect("server starts");
    let client = common::client(&server.urls());
    assert!(
        server_filters(&Api::<ConfigMap>::namespaced(client.clone(), "default"))
            .await
            .expect("probe")
    );
    check(client, "default", "embedded").await;
}

#[tokio::test]
async fn realkube_server_filter_agrees_or_is_ignored() {
    let Some(env) = common::realkube_env() else {
        println!(
            "realkube: skipped, KUBESET_REALKUBE_ENV is not set (see tests/realkube/README.md)"
        );
        return;
    };
    let client = common::kubeconfig_client(&env["KUBESET_REALKUBE_KUBECONFIG"]).await;
    let ns = format!("shard-server-{}", std::process::id());
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let meta = ObjectMeta {
        name: Some(ns.clone()),
        ..ObjectMeta::default()
    };
    let made = Namespace {
        metadata: meta,
        ..Namespace::default()
    };
    namespaces
        .create(&PostParams::default(), &made)
        .await
        .expect("namespace");
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let gated = env
        .get("KUBESET_REALKUBE_FEATURE_GATES")
        .is_some_and(|g| g.contains("ShardedListAndWatch=true"));
    let filters = server_filters(&api).await.expect("probe");
    let version = env.get("KUBESET_REALKUBE_KUBERNETES_VERSION").cloned();
    assert_eq!(filters, gated, "the probe on {version:?} (gates: {gated})");
    if filters {
        check(client, &ns, "realkube").await;
    } else {
        // The parameter is ignored: a selector of half the space lists all.
        let uids = create(&api, "cm", 20).await;
        let sel = shard_selector([0], 2).expect("a selector");
        assert_eq!(list_uids(&api, &sel, None).await.len(), uids.len());
        println!(
            "realkube {version:?}: no server-side shard filter (ShardedListAndWatch off); \
             the parameter is ignored; agreement NOT checked here \
             (start realkube with --kubernetes 1.36 --feature-gates ShardedListAndWatch=true)"
        );
    }
    let _ = namespaces.delete(&ns, &DeleteParams::default()).await;
}
