//! Memory budgets against the embedded server: a cache whose objects
//! would cross its budget fails its watcher with an error naming the
//! kind, the objects and the bytes, warns at 80 %, and the process (and
//! every other cache) carries on; one budget shared by two caches.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use kubeset_client::Api;
use kubeset_client::api::core::v1::{ConfigMap, Secret};
use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset_client::params::PostParams;
use kubeset_runtime::controller::Error;
use kubeset_runtime::memory::MemoryBudgetExceeded;
use kubeset_runtime::{
    Action, Controller, MemoryBudget, StoreConfig, WatcherConfig, WatcherError, Writer, reflector,
    watcher,
};
use kubeset_testserver::TestServer;

/// The tests of this file one at a time. The first reads the `WARN` line
/// its own thread-local `tracing` subscriber wrote; run beside another test
/// that reaches the same `warn!` first on a thread without a subscriber,
/// that callsite's cached interest could miss the subscriber (seen once in a
/// loaded workspace run).
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// `n` ConfigMaps of about 2 KB of data each.
async fn config_maps(api: &Api<ConfigMap>, n: usize) {
    for i in 0..n {
        let mut cm = common::cm("default", &format!("cm-{i:03}"), "x");
        cm.data = Some([("blob".to_owned(), "x".repeat(2000))].into());
        api.create(&PostParams::default(), &cm)
            .await
            .expect("create");
    }
}

/// What the `tracing` subscriber of a test wrote.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("lock")).into_owned()
    }
}

#[tokio::test]
async fn a_budget_smaller_than_the_data_fails_the_watcher_and_the_process_stays_up() {
    let _serial = SERIAL.lock().await;
    let logs = Logs::default();
    let sink = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || sink.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let server = TestServer::start().await.expect("server");
    let api: Api<ConfigMap> = Api::namespaced(common::client(&server.urls()), "default");
    config_maps(&api, 60).await;

    let budget = MemoryBudget::new(100_000);
    let controller = Controller::with_store(
        api.clone(),
        WatcherConfig::default(),
        StoreConfig::new().memory_budget(&budget),
    );
    let store = controller.store();
    let mut results = Box::pin(controller.run(
        |_: Arc<ConfigMap>, _: Arc<()>| async { Ok::<_, std::io::Error>(Action::await_change()) },
        |_, _, _| Action::await_change(),
        Arc::new(()),
    ));
    let first = tokio::time::timeout(Duration::from_secs(20), results.next())
        .await
        .expect("an item within 20 s")
        .expect("the error");
    let Err(Error::QueueError {
        source: WatcherError::MemoryBudget { source: e },
    }) = first
    else {
        panic!("expected the budget error, got {first:?}");
    };
    let MemoryBudgetExceeded {
        kind,
        objects,
        bytes,
        used,
        limit,
    } = e.clone();
    assert_eq!((kind, limit), ("ConfigMap", 100_000));
    assert!(
        objects > 1 && objects < 60,
        "stopped within the list: {objects}"
    );
    assert!(used > limit && bytes == used, "{e}");
    assert!(
        e.to_string().starts_with(&format!(
            "the cache of ConfigMap would hold {objects} objects in an estimated {bytes} bytes"
        )),
        "{e}"
    );
    let ended = tokio::time::timeout(Duration::from_secs(20), results.next())
        .await
        .expect("the stream ends within 20 s");
    assert!(ended.is_none(), "the controller stops: {ended:?}");
    assert!(store.is_empty(), "the refused relist was never shown");
    assert_eq!(budget.used(), 0, "the dropped relist gave its bytes back");
    let text = logs.text();
    assert!(
        text.contains("WARN") && text.contains("memory budget is 80 % used"),
        "{text}"
    );
    assert!(text.contains("kind=\"ConfigMap\""), "{text}");

    // The process stays up: the same kind cached with room to spare.
    let roomy = MemoryBudget::new(10 << 20);
    let writer = Writer::new(StoreConfig::<ConfigMap>::new().memory_budget(&roomy));
    let store = writer.store();
    let mut events = Box::pin(reflector(writer, watcher(api, WatcherConfig::default())));
    while !store.is_ready() {
        let ev = tokio::time::timeout(Duration::from_secs(20), events.next())
            .await
            .expect("in time")
            .expect("runs");
        ev.expect("no error");
    }
    assert_eq!(store.memory().objects, 60);
    assert_eq!(roomy.used(), store.memory().bytes);
    assert!(roomy.used() > 100_000);
}

#[tokio::test]
async fn one_budget_shared_by_two_caches_stops_the_one_that_crosses_it() {
    let _serial = SERIAL.lock().await;
    let server = TestServer::start().await.expect("server");
    let client = common::client(&server.urls());
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let secrets: Api<Secret> = Api::namespaced(client, "default");
    config_maps(&cms, 40).await;
    for i in 0..40 {
        let s = Secret {
            metadata: ObjectMeta {
                name: Some(format!("s-{i:03}")),
                namespace: Some("default".into()),
                ..ObjectMeta::default()
            },
            string_data: Some([("blob".to_owned(), "y".repeat(2000))].into()),
            ..Secret::default()
        };
        secrets
            .create(&PostParams::default(), &s)
            .await
            .expect("create");
    }
    // Room for the ConfigMaps and a few Secrets.
    let budget = MemoryBudget::new(200_000);
    let writer = Writer::new(StoreConfig::<ConfigMap>::new().memory_budget(&budget));
    let cm_store = writer.store();
    let mut cm_events = Box::pin(reflector(writer, watcher(cms, WatcherConfig::default())));
    while !cm_store.is_ready() {
        let ev = tokio::time::timeout(Duration::from_secs(20), cm_events.next())
            .await
            .expect("in time")
            .expect("runs");
        ev.expect("the ConfigMaps fit");
    }
    let cm_bytes = cm_store.memory().bytes;
    assert_eq!(budget.used(), cm_bytes);

    let writer = Writer::new(StoreConfig::<Secret>::new().memory_budget(&budget));
    let mut secret_events = Box::pin(reflector(
        writer,
        watcher(secrets, WatcherConfig::default()),
    ));
    let failure = loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), secret_events.next())
            .await
            .expect("in time")
            .expect("runs until the budget");
        if let Err(e) = ev {
            break e;
        }
    };
    let WatcherError::MemoryBudget { source } = &failure else {
        panic!("{failure}");
    };
    assert_eq!(source.kind, "Secret");
    assert!(source.objects < 40 && source.used > 200_000, "{source}");
    assert!(
        source.bytes < source.used,
        "the Secrets' own bytes, the budget's total: {source}"
    );
    assert!(secret_events.next().await.is_none(), "the reflector ended");
    assert_eq!(budget.used(), cm_bytes, "the ConfigMaps keep theirs");
    assert_eq!(cm_store.memory().objects, 40);
}
