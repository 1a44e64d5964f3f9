//! The operator toolkit against a real kube-apiserver: `Api::entry` and
//! `Api::modify` (conflict retry), and `finalizer()`'s guarded patches
//! under concurrent writers.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use kubeset::api::core::v1::ConfigMap;
use kubeset::params::{DeleteParams, PostParams};
use kubeset::runtime::Action;
use kubeset::runtime::finalizer::{self, finalizer};
use kubeset::{Api, CommitError, Entry, ResourceExt as _};
use kubeset_tests::meta;

use crate::common::connect;

fn cm(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: meta(name),
        data: Some([("v".to_owned(), "1".to_owned())].into()),
        ..ConfigMap::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entry_gets_or_creates_and_modify_retries_conflicts() {
    let ctx = connect!("toolkit-entry");
    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ctx.ns);

    // Vacant → inserted → created on commit, name and namespace filled in.
    let entry = cms.entry("settings").await.expect("entry");
    assert!(matches!(entry, Entry::Vacant(_)));
    let mut created = entry.or_insert(ConfigMap::default);
    created
        .commit(&PostParams::default())
        .await
        .expect("create");
    assert!(created.get().resource_version().is_some());

    // Occupied → modified → replaced on commit.
    let mut e = cms
        .entry("settings")
        .await
        .expect("entry")
        .or_insert(|| unreachable!("it exists"))
        .and_modify(|cm| {
            cm.labels_mut().insert("tier".into(), "web".into());
        });
    e.commit(&PostParams::default()).await.expect("replace");
    assert_eq!(
        cms.get("settings").await.expect("get").labels()["tier"],
        "web"
    );

    // A stale entry's commit is a conflict, reported as such.
    let mut stale = cms
        .entry("settings")
        .await
        .expect("entry")
        .or_insert(ConfigMap::default);
    cms.modify("settings", &PostParams::default(), |cm| {
        cm.labels_mut().insert("tier".into(), "db".into());
    })
    .await
    .expect("modify");
    stale.get_mut().labels_mut().insert("x".into(), "y".into());
    match stale.commit(&PostParams::default()).await {
        Err(CommitError::Save { source }) => assert!(source.is_conflict(), "{source}"),
        other => panic!("expected a conflict, got {other:?}"),
    }

    // modify retries: a concurrent writer changes the object during the
    // first attempt; the second attempt reads it again and wins.
    cms.create(&PostParams::default(), &cm("counter"))
        .await
        .expect("create");
    let attempts = Arc::new(AtomicU32::new(0));
    let other = cms.clone();
    let handle = tokio::runtime::Handle::current();
    let saved = cms
        .modify("counter", &PostParams::default(), |cm| {
            if attempts.fetch_add(1, Ordering::SeqCst) == 0 {
                tokio::task::block_in_place(|| {
                    handle.block_on(async {
                        other
                            .modify("counter", &PostParams::default(), |c| {
                                c.labels_mut().insert("by".into(), "other".into());
                            })
                            .await
                            .expect("concurrent write")
                    })
                });
            }
            cm.data
                .get_or_insert_default()
                .insert("v".into(), "2".into());
        })
        .await
        .expect("modify after a conflict");
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        2,
        "one conflict, one retry"
    );
    assert_eq!(
        saved.labels()["by"],
        "other",
        "the concurrent change is kept"
    );
    assert_eq!(
        saved
            .data
            .as_ref()
            .and_then(|d| d.get("v"))
            .map(String::as_str),
        Some("2")
    );
}

#[derive(Debug, thiserror::Error)]
#[error("never")]
struct Never;

#[tokio::test]
async fn finalizer_writes_are_guarded_against_concurrent_changes() {
    const F: &str = "suite.kubeset.dev/cleanup";
    const KEEP: &str = "suite.kubeset.dev/keep";
    let ctx = connect!("toolkit-finalizer");
    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let mut obj = cm("guarded");
    obj.finalizers_mut().push(KEEP.into());
    let stale = Arc::new(
        cms.create(&PostParams::default(), &obj)
            .await
            .expect("create"),
    );
    cms.modify("guarded", &PostParams::default(), |c| {
        c.labels_mut().insert("changed".into(), "yes".into());
    })
    .await
    .expect("someone else writes");

    let calls = AtomicU32::new(0);
    let run = |obj: Arc<ConfigMap>| {
        let calls = &calls;
        let cms = &cms;
        async move {
            finalizer(cms, F, obj, |_ev| async move {
                calls.fetch_add(1, Ordering::SeqCst);
                Ok::<_, Never>(Action::await_change())
            })
            .await
        }
    };
    // Adding from a stale read fails its resourceVersion test: no write.
    match run(stale).await {
        Err(finalizer::Error::AddFinalizer(source)) => {
            assert!(
                source.api_error().is_some_and(|e| e.code == 422),
                "{source}"
            )
        }
        other => panic!("expected a failed test op, got {other:?}"),
    }
    assert_eq!(cms.get("guarded").await.expect("get").finalizers(), [KEEP]);

    // From a fresh read it is added, and nothing else runs yet.
    let fresh = Arc::new(cms.get("guarded").await.expect("get"));
    assert_eq!(run(fresh).await.expect("add"), Action::await_change());
    assert_eq!(calls.load(Ordering::SeqCst), 0, "added before any apply");
    let with_ours = Arc::new(cms.get("guarded").await.expect("get"));
    assert_eq!(with_ours.finalizers(), [KEEP, F]);
    run(with_ours).await.expect("apply");
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    // Deleting: the object stays (two finalizers). If our finalizer moved
    // since the read (KEEP removed meanwhile), the guarded remove fails
    // rather than removing the wrong entry.
    cms.delete("guarded", &DeleteParams::default())
        .await
        .expect("delete");
    let deleting = Arc::new(cms.get("guarded").await.expect("get"));
    assert!(deleting.metadata.deletion_timestamp.is_some());
    cms.modify("guarded", &PostParams::default(), |c| {
        c.finalizers_mut().retain(|f| f != KEEP)
    })
    .await
    .expect("drop KEEP");
    match run(deleting).await {
        Err(finalizer::Error::RemoveFinalizer(source)) => {
            assert!(
                source.api_error().is_some_and(|e| e.code == 422),
                "{source}"
            )
        }
        other => panic!("expected a failed test op, got {other:?}"),
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "cleanup ran, its finalizer stays"
    );
    // Read again: cleanup runs again (it must be idempotent), then the
    // finalizer goes and so does the object.
    let deleting = Arc::new(cms.get("guarded").await.expect("get"));
    run(deleting).await.expect("cleanup");
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert!(cms.get_opt("guarded").await.expect("get").is_none(), "gone");
}
