//! `kubeset::testing` as a user reaches for it: a server and a client in
//! one call (plain and over TLS with a token), waits whose timeout names
//! the object, the condition and the last seen state, and kube-rs's
//! reference operator (`kube-rs/controller-rs`) run as written there —
//! `#[derive(CustomResource)]` Document with a status, the runtime's
//! `finalizer()`, the status applied server-side through `/status` with no
//! `metadata.name` in the body, Events, and cleanup on delete.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt as _;
use kubeset::api::core::v1::{ConfigMap, Namespace};
use kubeset::api::events::v1::Event as EventV1;
use kubeset::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kubeset::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset::params::{DeleteParams, ListParams, PatchParams, PostParams};
use kubeset::runtime::events::{Event, EventType, Recorder, Reporter};
use kubeset::runtime::finalizer::{Event as Finalizer, finalizer};
use kubeset::runtime::{Action, Controller, WatcherConfig};
use kubeset::testing::{Error as TestingError, TestServer, is_deleted, until, wait_for};
use kubeset::{
    Api, Client, CustomResource, CustomResourceExt as _, JsonSchema, Patch, Resource as _,
    ResourceExt as _,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[tokio::test]
async fn one_call_gives_a_server_and_a_client() -> Result<(), BoxError> {
    let server = TestServer::start().await?;
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client()?);
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some("settings".into()),
            ..ObjectMeta::default()
        },
        data: Some([("a".to_owned(), "1".to_owned())].into()),
        ..ConfigMap::default()
    };
    cms.create(&PostParams::default(), &cm).await?;
    // The server's own view (Deref to kubeset-testserver's TestServer).
    let stored = server.get("v1", "ConfigMap", Some("default"), "settings")?;
    assert_eq!(stored["data"]["a"], "1");
    Ok(())
}

#[tokio::test]
async fn the_client_follows_tls_and_the_token() -> Result<(), BoxError> {
    let token = kubeset_testserver::generate_token();
    let server = TestServer::start_with(TestServer::builder().tls(true).token(Some(token))).await?;
    assert!(server.url().starts_with("https://"), "{}", server.url());
    let namespaces: Api<Namespace> = Api::cluster(server.client()?);
    let names: Vec<String> = namespaces
        .list(&ListParams::default())
        .await?
        .iter()
        .map(|n| n.name_any())
        .collect();
    assert!(names.contains(&"default".to_owned()), "{names:?}");
    Ok(())
}

/// The timeout error says which object, which condition, and what the
/// object looked like when the wait gave up; a condition that holds
/// returns the object's state.
#[tokio::test]
async fn a_timed_out_wait_names_object_condition_and_last_state() -> Result<(), BoxError> {
    let server = TestServer::start().await?;
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client()?);
    cms.create(
        &PostParams::default(),
        &ConfigMap {
            metadata: ObjectMeta {
                name: Some("settings".into()),
                ..ObjectMeta::default()
            },
            data: Some([("a".to_owned(), "1".to_owned())].into()),
            ..ConfigMap::default()
        },
    )
    .await?;
    let has_b = |cm: Option<&ConfigMap>| {
        cm.and_then(|c| c.data.as_ref())
            .is_some_and(|d| d.contains_key("b"))
    };
    let err = wait_for(
        &cms,
        "settings",
        until("has key b", has_b).within(Duration::from_millis(300)),
    )
    .await
    .unwrap_err();
    let TestingError::Timeout {
        object,
        condition,
        last_seen,
        ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(object, "ConfigMap default/settings");
    assert_eq!(condition, "has key b");
    assert!(last_seen.contains(r#""data":{"a":"1"}"#), "{last_seen}");
    let message = err.to_string();
    assert!(
        message.contains("ConfigMap default/settings")
            && message.contains("\"has key b\"")
            && message.contains(r#""a":"1""#),
        "{message}"
    );

    // The same wait passes once the object gets there.
    let patch = json!({"data": {"b": "2"}});
    cms.patch("settings", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    let seen = wait_for(&cms, "settings", until("has key b", has_b)).await?;
    assert_eq!(seen.and_then(|c| c.data).unwrap()["b"], "2");
    Ok(())
}

/// A failure that waiting cannot fix — the object does not decode as the
/// type asked for — ends the wait at once with `Error::Watch`, naming the
/// object and the condition, instead of running into the time limit.
#[tokio::test]
async fn an_undecodable_object_ends_the_wait_with_the_watch_error() -> Result<(), BoxError> {
    let server = TestServer::start().await?;
    let mut crd = serde_json::to_value(Document::crd())?;
    // Any fields kept, so the server stores what `Document` cannot read.
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] =
        json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    server.register_crd(crd)?;
    server.create(json!({"apiVersion": "kube.rs/v1", "kind": "Document",
        "metadata": {"name": "odd", "namespace": "default"},
        "spec": {"title": 5}}))?;
    let docs: Api<Document> = Api::namespaced(server.client()?, "default");
    let err = wait_for(
        &docs,
        "odd",
        kubeset::testing::exists().within(Duration::from_secs(600)),
    )
    .await
    .unwrap_err();
    let TestingError::Watch {
        object, condition, ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(object, "Document default/odd");
    assert_eq!(condition, "exists");
    assert!(std::error::Error::source(&err).is_some(), "{err}");
    Ok(())
}

// ---- kube-rs/controller-rs, as written there (src/controller.rs) ----

/// controller-rs's `Document`.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(kind = "Document", group = "kube.rs", version = "v1", namespaced)]
#[kube(status = "DocumentStatus", shortname = "doc")]
pub struct DocumentSpec {
    /// The title.
    pub title: String,
    /// Whether to hide it.
    pub hide: bool,
    /// The text.
    pub content: String,
}

/// controller-rs's `DocumentStatus`.
#[derive(Deserialize, Serialize, Clone, Default, Debug, JsonSchema)]
pub struct DocumentStatus {
    /// Whether it is hidden.
    pub hidden: bool,
}

const DOCUMENT_FINALIZER: &str = "documents.kube.rs";

#[derive(Debug, thiserror::Error)]
enum Error {
    #[error("kube error: {0}")]
    Kube(#[source] kubeset::Error),
    #[error("finalizer error: {0}")]
    Finalizer(#[source] Box<kubeset::runtime::finalizer::Error<Error>>),
}

struct Context {
    client: Client,
    recorder: Recorder,
    cleanups: AtomicUsize,
}

impl Document {
    fn was_hidden(&self) -> bool {
        self.status.as_ref().is_some_and(|s| s.hidden)
    }

    async fn reconcile(&self, ctx: Arc<Context>) -> Result<Action, Error> {
        let ns = self.namespace().unwrap_or_default();
        let name = self.name_any();
        let docs: Api<Document> = Api::namespaced(ctx.client.clone(), &ns);
        let should_hide = self.spec.hide;
        if !self.was_hidden() && should_hide {
            ctx.recorder
                .publish(
                    &Event {
                        type_: EventType::Normal,
                        reason: "HideRequested".into(),
                        note: Some(format!("Hiding `{name}`")),
                        action: "Hiding".into(),
                        secondary: None,
                    },
                    &self.object_ref(&()),
                )
                .await
                .map_err(Error::Kube)?;
        }
        // Server-side apply through /status, no metadata.name in the body.
        let new_status = Patch::Apply(json!({
            "apiVersion": "kube.rs/v1",
            "kind": "Document",
            "status": DocumentStatus { hidden: should_hide }
        }));
        let ps = PatchParams::apply("cntrlr").force();
        docs.patch_status(&name, &ps, &new_status)
            .await
            .map_err(Error::Kube)?;
        Ok(Action::requeue(Duration::from_secs(5 * 60)))
    }

    async fn cleanup(&self, ctx: Arc<Context>) -> Result<Action, Error> {
        ctx.recorder
            .publish(
                &Event {
                    type_: EventType::Normal,
                    reason: "DeleteRequested".into(),
                    note: Some(format!("Delete `{}`", self.name_any())),
                    action: "Deleting".into(),
                    secondary: None,
                },
                &self.object_ref(&()),
            )
            .await
            .map_err(Error::Kube)?;
        ctx.cleanups.fetch_add(1, Ordering::SeqCst);
        Ok(Action::await_change())
    }
}

async fn reconcile(doc: Arc<Document>, ctx: Arc<Context>) -> Result<Action, Error> {
    let ns = doc.namespace().unwrap_or_default();
    let docs: Api<Document> = Api::namespaced(ctx.client.clone(), &ns);
    finalizer(&docs, DOCUMENT_FINALIZER, doc, |event| async {
        match event {
            Finalizer::Apply(doc) => doc.reconcile(ctx.clone()).await,
            Finalizer::Cleanup(doc) => doc.cleanup(ctx.clone()).await,
        }
    })
    .await
    .map_err(|e| Error::Finalizer(Box::new(e)))
}

fn error_policy(_doc: Arc<Document>, _error: &Error, _ctx: Arc<Context>) -> Action {
    Action::requeue(Duration::from_secs(1))
}

/// controller-rs's flow on the embedded server: the CRD from
/// `Document::crd()`, the controller running; a new Document gets the
/// finalizer (JSON patch `test` of the missing finalizers against null,
/// then `add`), its status by server-side apply through `/status` and a
/// `HideRequested` Event; deleting it runs the cleanup (a
/// `DeleteRequested` Event), the finalizer comes off and it is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controller_rs_flow_on_the_embedded_server() -> Result<(), BoxError> {
    let server = TestServer::start().await?;
    let client = server.client()?;
    let crds: Api<CustomResourceDefinition> = Api::cluster(client.clone());
    crds.create(&PostParams::default(), &Document::crd())
        .await?;
    wait_for(
        &crds,
        Document::crd_name(),
        until(
            "is Established",
            |crd: Option<&CustomResourceDefinition>| {
                crd.and_then(|c| c.status.as_ref())
                    .and_then(|s| s.conditions.as_ref())
                    .is_some_and(|cs| {
                        cs.iter()
                            .any(|c| c.type_ == "Established" && c.status == "True")
                    })
            },
        ),
    )
    .await?;

    let ctx = Arc::new(Context {
        client: client.clone(),
        recorder: Recorder::new(client.clone(), Reporter::from("doc-controller")),
        cleanups: AtomicUsize::new(0),
    });
    let docs: Api<Document> = Api::all(client.clone());
    let controller = Controller::new(docs, WatcherConfig::default().any_semantic())
        .run(reconcile, error_policy, ctx.clone())
        .for_each(|_| futures::future::ready(()));
    let running = tokio::spawn(controller);

    let docs: Api<Document> = Api::namespaced(client.clone(), "default");
    let mut doc = Document::new(
        "samuel",
        DocumentSpec {
            title: "Hello".into(),
            hide: true,
            content: "A document.".into(),
        },
    );
    doc.metadata.namespace = Some("default".into());
    docs.create(&PostParams::default(), &doc).await?;
    let reconciled = wait_for(
        &docs,
        "samuel",
        until(
            "has the finalizer and status.hidden",
            |d: Option<&Document>| {
                d.is_some_and(|d| {
                    d.finalizers().iter().any(|f| f == DOCUMENT_FINALIZER) && d.was_hidden()
                })
            },
        ),
    )
    .await?
    .expect("the document exists");
    // The status apply's field manager owns status.hidden, by /status.
    let managed = reconciled.metadata.managed_fields.unwrap_or_default();
    assert!(
        managed
            .iter()
            .any(|m| m.manager.as_deref() == Some("cntrlr")
                && m.operation.as_deref() == Some("Apply")
                && m.subresource.as_deref() == Some("status")),
        "{managed:?}"
    );
    let events: Api<EventV1> = Api::namespaced(client.clone(), "default");
    let has_event = |reason: &'static str| {
        move |list: &[EventV1]| {
            list.iter().any(|e| {
                e.reason.as_deref() == Some(reason)
                    && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("samuel")
                    && e.reporting_controller.as_deref() == Some("doc-controller")
            })
        }
    };
    let listed = events.list(&ListParams::default()).await?;
    assert!(has_event("HideRequested")(&listed.items), "{listed:?}");

    docs.delete("samuel", &DeleteParams::default()).await?;
    wait_for(&docs, "samuel", is_deleted()).await?;
    // At least once: a reconcile queued by the deletion's event may read
    // the cache before the finalizer's removal reaches it and clean up
    // again (as on any cluster: kube-rs requires an idempotent cleanup).
    assert!(ctx.cleanups.load(Ordering::SeqCst) >= 1);
    let listed = events.list(&ListParams::default()).await?;
    assert!(has_event("DeleteRequested")(&listed.items), "{listed:?}");
    running.abort();
    Ok(())
}
