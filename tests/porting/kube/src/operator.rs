//! An operator in controller-rs's shape: `Controller` over the Database
//! kind with `owns` (its ConfigMap) and `watches` (a Secret mapped back by
//! `ObjectRef::new(..).within(..)`), the runtime's `finalizer`, Events
//! through `Recorder`, the status patched server-side; and a
//! `reflector` store fed by a `watcher` with `default_backoff`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::api::events::v1::Event as EventV1;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{Event as Finalizer, finalizer};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::wait::{await_condition, conditions};
use kube::runtime::{Controller, WatchStreamExt, reflector, watcher};
use kube::{Client, CustomResourceExt, Resource, ResourceExt};
use serde_json::json;

use crate::crd::{Database, DatabaseSpec, DatabaseStatus};
use crate::support::{BoxError, server, within};

const FINALIZER: &str = "databases.porting.example.com/cleanup";
const MANAGER: &str = "porting-operator";
const DB_LABEL: &str = "porting.example.com/database";

/// The reconciler's error, as controller-rs writes one.
#[derive(Debug, thiserror::Error)]
enum Error {
    #[error("kube error: {0}")]
    Kube(#[from] kube::Error),
    #[error("finalizer error: {0}")]
    Finalizer(#[source] Box<kube::runtime::finalizer::Error<Error>>),
    #[error("the object has no namespace")]
    NoNamespace,
}

struct Context {
    client: Client,
    recorder: Recorder,
}

async fn reconcile(db: Arc<Database>, ctx: Arc<Context>) -> Result<Action, Error> {
    let ns = db.namespace().ok_or(Error::NoNamespace)?;
    let dbs: Api<Database> = Api::namespaced(ctx.client.clone(), &ns);
    finalizer(&dbs, FINALIZER, db, |event| async {
        match event {
            Finalizer::Apply(db) => apply(&db, &ctx).await,
            Finalizer::Cleanup(db) => cleanup(&db, &ctx).await,
        }
    })
    .await
    .map_err(|e| Error::Finalizer(Box::new(e)))
}

/// Owns a ConfigMap that says whether the Database's Secret exists, and
/// reports in the status and an Event.
async fn apply(db: &Database, ctx: &Context) -> Result<Action, Error> {
    let ns = db.namespace().ok_or(Error::NoNamespace)?;
    let name = db.name_any();
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &ns);
    let has_secret = secrets
        .get_opt(&format!("{name}-credentials"))
        .await?
        .is_some();
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("{name}-config")),
            owner_references: db.controller_owner_ref(&()).map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([
            ("engine".to_owned(), db.spec.engine.clone()),
            ("credentials".to_owned(), has_secret.to_string()),
        ])),
        ..ConfigMap::default()
    };
    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ns);
    let params = PatchParams::apply(MANAGER).force();
    cms.patch(&format!("{name}-config"), &params, &Patch::Apply(&cm))
        .await?;

    let status = json!({
        "apiVersion": "porting.example.com/v1",
        "kind": "Database",
        "status": DatabaseStatus { replicas: db.spec.replicas, ready: has_secret },
    });
    let dbs: Api<Database> = Api::namespaced(ctx.client.clone(), &ns);
    dbs.patch_status(&name, &params, &Patch::Apply(&status))
        .await?;
    let event = Event {
        type_: EventType::Normal,
        reason: "Reconciled".into(),
        note: Some(format!("credentials present: {has_secret}")),
        action: "Reconciling".into(),
        secondary: None,
    };
    ctx.recorder.publish(&event, &db.object_ref(&())).await?;
    Ok(Action::requeue(Duration::from_secs(300)))
}

async fn cleanup(db: &Database, ctx: &Context) -> Result<Action, Error> {
    let event = Event {
        type_: EventType::Normal,
        reason: "DeleteRequested".into(),
        note: Some(format!("deleting {}", db.name_any())),
        action: "Deleting".into(),
        secondary: None,
    };
    ctx.recorder.publish(&event, &db.object_ref(&())).await?;
    Ok(Action::await_change())
}

fn error_policy(_db: Arc<Database>, _error: &Error, _ctx: Arc<Context>) -> Action {
    Action::requeue(Duration::from_secs(1))
}

/// Polls `check` until it answers `Some`, within the deadline.
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> Result<T, BoxError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>, BoxError>>,
{
    let poll = async {
        loop {
            if let Some(found) = check().await? {
                return Ok::<T, BoxError>(found);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    within(what, poll).await?
}

#[tokio::test]
async fn controller_owns_watches_finalizes_and_records() -> Result<(), BoxError> {
    let (_server, client) = server().await?;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Database::crd())
        .await?;
    let established = await_condition(
        crds,
        "databases.porting.example.com",
        conditions::is_crd_established(),
    );
    within("the CRD's Established condition", established).await??;

    let dbs: Api<Database> = Api::namespaced(client.clone(), "default");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    let ctx = Arc::new(Context {
        client: client.clone(),
        recorder: Recorder::new(client.clone(), Reporter::from(MANAGER)),
    });
    let controller = Controller::new(dbs.clone(), watcher::Config::default().any_semantic())
        .owns(cms.clone(), watcher::Config::default())
        .watches(
            secrets.clone(),
            watcher::Config::default(),
            |secret: Secret| {
                let db = secret.labels().get(DB_LABEL)?.clone();
                Some(ObjectRef::new(&db).within(&secret.namespace()?))
            },
        )
        .run(reconcile, error_policy, ctx)
        .for_each(|_| futures::future::ready(()));
    let controller = tokio::spawn(controller);

    let db = Database::new(
        "orders",
        DatabaseSpec {
            engine: "postgres".into(),
            replicas: 2,
        },
    );
    dbs.create(&PostParams::default(), &db).await?;

    // owns: the ConfigMap, owned by the Database; the finalizer is on.
    let cm = eventually("the owned ConfigMap", || async {
        Ok(cms.get_opt("orders-config").await?)
    })
    .await?;
    let owner = &cm.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.controller),
        ("Database", Some(true))
    );
    assert_eq!(cm.data.unwrap()["credentials"], "false");
    let stored = dbs.get("orders").await?;
    assert_eq!(stored.finalizers(), [FINALIZER.to_owned()]);

    // watches: the labelled Secret maps back to the Database.
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some("orders-credentials".into()),
            labels: Some(BTreeMap::from([(DB_LABEL.to_owned(), "orders".to_owned())])),
            ..ObjectMeta::default()
        },
        string_data: Some(BTreeMap::from([(
            "password".to_owned(),
            "s3cret".to_owned(),
        )])),
        ..Secret::default()
    };
    secrets.create(&PostParams::default(), &secret).await?;
    eventually("the Secret seen through watches", || async {
        let cm = cms.get("orders-config").await?;
        let seen = cm.data.is_some_and(|d| d["credentials"] == "true");
        Ok(seen.then_some(()))
    })
    .await?;
    let status = eventually("the status", || async {
        Ok(dbs.get_status("orders").await?.status.filter(|s| s.ready))
    })
    .await?;
    assert_eq!(status.replicas, 2);

    // finalizer: delete runs cleanup, then the object goes.
    dbs.delete("orders", &DeleteParams::default()).await?;
    eventually("the Database's deletion", || async {
        Ok(dbs.get_opt("orders").await?.is_none().then_some(()))
    })
    .await?;

    // Recorder: the Events (events.k8s.io/v1, as both recorders write them).
    let events: Api<EventV1> = Api::namespaced(client, "default");
    let reasons = eventually("both Events", || async {
        let reasons: Vec<String> = events
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("orders"))
            .filter_map(|e| e.reason)
            .collect();
        let both = reasons.iter().any(|r| r == "Reconciled")
            && reasons.iter().any(|r| r == "DeleteRequested");
        Ok(both.then_some(reasons))
    })
    .await?;
    assert!(
        reasons
            .iter()
            .all(|r| r == "Reconciled" || r == "DeleteRequested"),
        "{reasons:?}"
    );
    controller.abort();
    Ok(())
}

#[tokio::test]
async fn reflector_store_fed_by_a_watcher() -> Result<(), BoxError> {
    let (_server, client) = server().await?;
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    for name in ["a", "b"] {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        cms.create(&PostParams::default(), &cm).await?;
    }
    let (reader, writer) = reflector::store();
    let stream = reflector(writer, watcher(cms.clone(), watcher::Config::default()))
        .default_backoff()
        .applied_objects();
    let drain = tokio::spawn(stream.for_each(|_| futures::future::ready(())));

    let names = eventually("the store's first state", || async {
        let mut names: Vec<String> = reader.state().iter().map(|cm| cm.name_any()).collect();
        names.sort();
        Ok((names.len() >= 2).then_some(names))
    })
    .await?;
    assert!(
        names.contains(&"a".to_owned()) && names.contains(&"b".to_owned()),
        "{names:?}"
    );
    let found = reader.get(&ObjectRef::new("a").within("default"));
    assert_eq!(found.map(|cm| cm.name_any()).as_deref(), Some("a"));
    drain.abort();
    Ok(())
}
