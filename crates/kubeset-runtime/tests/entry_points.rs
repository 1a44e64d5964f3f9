//! `Controller::for_stream` against the embedded server, and
//! `Controller::shutdown_on_signal` with real signals to a child process
//! (this test binary run again, filtered to its child test).

mod common;

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{Stream, StreamExt as _};
use kubeset_client::api::core::v1::ConfigMap;
use kubeset_client::params::{PatchParams, PostParams};
use kubeset_client::{Api, Patch, ResourceExt as _};
use kubeset_runtime::controller::Error;
use kubeset_runtime::{
    Action, Config, Controller, ObjectRef, StoreConfig, WatchStreamExt as _, WatcherConfig, Writer,
    predicates, reflector, watcher,
};
use kubeset_testserver::TestServer;

use common::{client, cm};

type Item = Result<(ObjectRef<ConfigMap>, Action), Error<std::io::Error>>;

/// The next successful item (queue errors are skipped), within 20 s.
async fn next_done(s: &mut (impl Stream<Item = Item> + Unpin)) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let item = tokio::time::timeout_at(deadline, s.next())
            .await
            .expect("a reconcile within 20 s")
            .expect("the stream runs until shutdown");
        match item {
            Ok((obj, _)) => return obj.name.clone(),
            Err(Error::QueueError { .. }) => continue,
            Err(e) => panic!("{e}"),
        }
    }
}

/// What reconcile saw: the name, the `app` label and the `v` data, read
/// from the controller's store.
type Seen = Arc<Mutex<Vec<(String, String, String)>>>;

/// kube-rs's `for_stream`: the trigger stream is a predicate-filtered
/// reflector (a data-only change of `a` triggers nothing), and reconcile
/// reads the object from the store the reflector feeds (a later label
/// change of `a` reconciles it with the data the untriggered change
/// wrote). One reconcile at a time, so they come in trigger order.
#[tokio::test]
async fn for_stream_reconciles_what_the_filtered_stream_triggers_reading_the_store() {
    let server = TestServer::start().await.expect("server");
    let api: Api<ConfigMap> = Api::namespaced(client(&server.urls()), "default");
    let writer = Writer::new(StoreConfig::new());
    let reader = writer.store();
    let trigger = reflector(writer, watcher(api.clone(), WatcherConfig::default()))
        .applied_objects()
        .predicate_filter(predicates::labels::<ConfigMap>);
    let seen: Seen = Arc::default();
    let mut results = Box::pin(
        Controller::for_stream(trigger, reader.clone())
            .with_config(Config::default().concurrency(1))
            .run(
                |o: Arc<ConfigMap>, seen: Arc<Mutex<Vec<(String, String, String)>>>| async move {
                    let label = o.labels().get("app").cloned().unwrap_or_default();
                    let data = o.data.as_ref().and_then(|d| d.get("v")).cloned();
                    seen.lock()
                        .unwrap()
                        .push((o.name_any(), label, data.unwrap_or_default()));
                    Ok(Action::await_change())
                },
                |_, _: &std::io::Error, _| Action::await_change(),
                seen.clone(),
            ),
    );
    let pp = PostParams::default();
    api.create(&pp, &cm("default", "a", "x"))
        .await
        .expect("create a");
    assert_eq!(next_done(&mut results).await, "a");

    // Data only: the reflector stores it, the label predicate drops it.
    let data = serde_json::json!({"data": {"v": "changed"}});
    api.patch("a", &PatchParams::default(), &Patch::Merge(&data))
        .await
        .expect("patch a");
    api.create(&pp, &cm("default", "b", "x"))
        .await
        .expect("create b");
    assert_eq!(next_done(&mut results).await, "b");
    assert_eq!(
        reader
            .get(&ObjectRef::<ConfigMap>::new("a").within("default"))
            .and_then(|a| a.data.clone())
            .and_then(|d| d.get("v").cloned())
            .as_deref(),
        Some("changed"),
        "the store has the change the trigger dropped"
    );

    // A label change passes; reconcile reads `a` from the store.
    let label = serde_json::json!({"metadata": {"labels": {"app": "y"}}});
    api.patch("a", &PatchParams::default(), &Patch::Merge(&label))
        .await
        .expect("relabel a");
    assert_eq!(next_done(&mut results).await, "a");
    let seen = seen.lock().unwrap().clone();
    let own = |n: &str, l: &str, v: &str| (n.to_owned(), l.to_owned(), v.to_owned());
    assert_eq!(
        seen,
        [
            own("a", "x", "x"),
            own("b", "x", "x"),
            own("a", "y", "changed")
        ]
    );
}

/// The environment variable that makes [`signal_child`] run.
const CHILD: &str = "KUBESET_TEST_SIGNAL_CHILD";

/// Run by [`shutdown_on_signal_stops_the_controller_gracefully`] in a child
/// process: a controller with `shutdown_on_signal` over the embedded
/// server; prints `ready` from its first reconcile (the signal handlers are
/// installed before: the runner polls the shutdown future while the first
/// list is on the network), then `stopped` when the result stream ends.
#[tokio::test]
#[ignore = "a child process of shutdown_on_signal_stops_the_controller_gracefully"]
async fn signal_child() {
    assert!(std::env::var_os(CHILD).is_some(), "run by the parent test");
    let server = TestServer::start().await.expect("server");
    let api: Api<ConfigMap> = Api::namespaced(client(&server.urls()), "default");
    api.create(&PostParams::default(), &cm("default", "c", "x"))
        .await
        .expect("create");
    let results = Controller::new(api, WatcherConfig::default())
        .shutdown_on_signal()
        .run(
            |_: Arc<ConfigMap>, _: Arc<()>| async {
                println!("ready");
                Ok::<_, std::io::Error>(Action::await_change())
            },
            |_, _, _| Action::await_change(),
            Arc::new(()),
        );
    let reconciled = tokio::time::timeout(Duration::from_secs(120), results.count())
        .await
        .expect("the signal ends the stream");
    assert_eq!(reconciled, 1);
    println!("stopped");
}

/// SIGTERM and SIGINT (Ctrl-C) each end a controller's result stream: the
/// child process exits by itself with success, not by the signal.
#[test]
fn shutdown_on_signal_stops_the_controller_gracefully() {
    for signal in ["TERM", "INT"] {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "signal_child", "--ignored", "--nocapture"])
            .env(CHILD, "1")
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the child");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            if out.read_line(&mut line).unwrap() == 0 {
                let _ = child.kill();
                panic!("the child ended before it was ready: {lines:?}");
            }
            let ready = line.trim() == "ready";
            lines.push(line);
            if ready {
                break;
            }
        }
        let kill = Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(kill.success());
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
        let status = child.wait().unwrap();
        assert!(status.success(), "SIG{signal}: {status}; {rest}");
        assert!(
            rest.lines().any(|l| l.trim() == "stopped"),
            "SIG{signal}: {rest}"
        );
        assert!(rest.contains("1 passed"), "SIG{signal}: {rest}");
    }
}
