//! `kubeset demo`: an embedded 3-replica API server and the typed work a
//! controller does, each step checked, in plain sentences.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use futures::{Stream, StreamExt as _};
use kubeset::api::apps::v1::{Deployment, DeploymentSpec};
use kubeset::api::core::v1::{ConfigMap, Container, Namespace, PodSpec, PodTemplateSpec};
use kubeset::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kubeset::params::{ListParams, PatchParams, PostParams, WatchParams};
use kubeset::rest::{ResumableWatch, Verb};
use kubeset::{Api, Client, Config, Patch, WatchEvent, WatchStream};
use kubeset_testserver::TestServer;
use serde_json::json;

use super::print;
use crate::cli::client_for;
use crate::error::CliError;

const NS: &str = "demo";
/// Generous: the demo may run on a loaded machine.
const STEP_TIMEOUT: Duration = Duration::from_secs(20);

/// Fails step `step` with `reason` unless `cond`.
fn check(cond: bool, step: &'static str, reason: impl FnOnce() -> String) -> Result<(), CliError> {
    if cond {
        Ok(())
    } else {
        Err(CliError::Demo {
            step,
            reason: reason(),
        })
    }
}

/// Awaits `fut` within [`STEP_TIMEOUT`]; a request error fails `step`.
async fn within<T>(
    step: &'static str,
    what: &str,
    fut: impl Future<Output = Result<T, kubeset::Error>>,
) -> Result<T, CliError> {
    match tokio::time::timeout(STEP_TIMEOUT, fut).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(CliError::Demo {
            step,
            reason: format!("{what}: {}", crate::error::chain(&e)),
        }),
        Err(_) => Err(CliError::Demo {
            step,
            reason: format!("{what}: no answer within {}s", STEP_TIMEOUT.as_secs()),
        }),
    }
}

fn say(text: &str) -> Result<(), CliError> {
    print(&format!("{text}\n"))
}

fn meta(name: &str, labels: &[(&str, &str)]) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: Some(NS.to_owned()),
        labels: Some(
            labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        ),
        ..ObjectMeta::default()
    }
}

fn config_map(name: &str, app: &str, data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: meta(name, &[("app", app)]),
        data: Some(
            data.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        ),
        ..ConfigMap::default()
    }
}

fn container(name: &str, image: &str) -> Container {
    Container {
        name: name.to_owned(),
        image: Some(image.to_owned()),
        ..Container::default()
    }
}

fn deployment() -> Deployment {
    let labels = BTreeMap::from([("app".to_owned(), "web".to_owned())]);
    Deployment {
        metadata: meta("web", &[("app", "web")]),
        // `spec` is required from v1.37 (a `DeploymentSpec`) and optional
        // before (`Option`): `into` gives either form.
        spec: DeploymentSpec {
            replicas: Some(2),
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
                        container("web", "nginx:1.27"),
                        container("log-shipper", "fluent-bit:3"),
                    ],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }
        .into(),
        ..Deployment::default()
    }
}

fn name_of(cm: &ConfigMap) -> &str {
    cm.metadata.name.as_deref().unwrap_or_default()
}

fn rv_of(meta: &ObjectMeta) -> String {
    meta.resource_version.clone().unwrap_or_default()
}

fn images(d: &Deployment) -> Vec<(String, String)> {
    Option::<&DeploymentSpec>::from(&d.spec)
        .and_then(|s| s.template.spec.as_ref())
        .map(|p| {
            p.containers
                .iter()
                .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default()
}

/// A client for one replica (plain HTTP, no kubeconfig needed).
fn replica_client(url: &str) -> Result<Client, CliError> {
    let url = url::Url::parse(url)
        .map_err(|e| CliError::usage(format!("replica URL {url:?} is not a URL: {e}")))?;
    let mut config = Config::new(url);
    config.default_namespace = NS.to_owned();
    config.qps = 100.0;
    config.burst = 200;
    client_for(&config)
}

/// The next item of a watch within [`STEP_TIMEOUT`] (`None`: it ended);
/// no item in time fails `step`.
async fn next_within<S: Stream + Unpin>(
    step: &'static str,
    watch: &mut S,
) -> Result<Option<S::Item>, CliError> {
    tokio::time::timeout(STEP_TIMEOUT, watch.next())
        .await
        .map_err(|_| CliError::Demo {
            step,
            reason: format!("no watch event within {}s", STEP_TIMEOUT.as_secs()),
        })
}

/// The next ADDED/MODIFIED/DELETED event of a watch, within the step
/// timeout; `Ok(None)` when the stream ended.
async fn next_event(
    step: &'static str,
    stream: &mut WatchStream<ConfigMap>,
) -> Result<Option<(&'static str, ConfigMap)>, CliError> {
    loop {
        let item = next_within(step, stream).await?;
        return match item {
            None => Ok(None),
            Some(Err(e)) => {
                tracing::info!(error = %crate::error::chain(&e), "watch stream failed");
                Ok(None)
            }
            Some(Ok(WatchEvent::Added(o))) => Ok(Some(("ADDED", o))),
            Some(Ok(WatchEvent::Modified(o))) => Ok(Some(("MODIFIED", o))),
            Some(Ok(WatchEvent::Deleted(o))) => Ok(Some(("DELETED", o))),
            Some(Ok(WatchEvent::Bookmark(_))) => continue,
            Some(Ok(WatchEvent::Error(e))) => Err(CliError::Demo {
                step,
                reason: format!("the watch answered an error: {e}"),
            }),
        };
    }
}

/// Runs the demo; any expectation that fails ends it with an error.
pub async fn run() -> Result<(), CliError> {
    let server = TestServer::builder()
        .replicas(3)
        .start()
        .await
        .map_err(|source| CliError::Server { source })?;
    let urls = server.urls();
    say(&format!(
        "Started an embedded Kubernetes API server with 3 replicas sharing one store: {}.",
        urls.join(", ")
    ))?;
    let result = walk(&server, &urls).await;
    server.shutdown().await;
    result?;
    say("All steps checked out. The demo server is stopped.")?;
    say(NEXT)
}

/// The demo's last words: what to try next.
const NEXT: &str = "Next: `kubeset serve --kubeconfig-out /tmp/kc`, then in another shell \
`kubeset --kubeconfig /tmp/kc get all` (or kubectl with the same kubeconfig), \
and `KUBECONFIG=/tmp/kc cargo run -p kubeset --example quickstart`; \
the README's Quick start and porting tables are the way in.";

/// Steps 1 to 8 on replica 0, then the failover (step 9).
async fn walk(server: &TestServer, urls: &[String]) -> Result<(), CliError> {
    let (Some(url0), Some(_)) = (urls.first(), urls.get(2)) else {
        return Err(CliError::Demo {
            step: "start",
            reason: "the server did not start 3 replicas".to_owned(),
        });
    };
    let client = replica_client(url0)?;
    say(&format!(
        "The typed client talks to replica 0 ({url0}) until that replica goes down."
    ))?;
    create_namespace(&client).await?;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), NS);
    create_deployment(&deployments).await?;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), NS);
    create_config_maps(&cms).await?;
    let list_rv = list_selected(&cms).await?;
    watch_a_change(&cms, &list_rv).await?;
    strategic_patch(&deployments).await?;
    server_side_apply(&cms).await?;
    conflict_and_retry(&cms).await?;
    failover(server, &client, urls).await
}

/// 1. The namespace.
async fn create_namespace(client: &Client) -> Result<(), CliError> {
    let step = "namespace";
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(NS.to_owned()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    let ns = within(
        step,
        "creating the namespace",
        namespaces.create(&PostParams::default(), &ns),
    )
    .await?;
    check(ns.metadata.uid.is_some(), step, || {
        "the namespace came back without a uid".to_owned()
    })?;
    say(&format!("1. Created the namespace {NS:?}."))
}

/// 2. The Deployment, from typed structs.
async fn create_deployment(deployments: &Api<Deployment>) -> Result<(), CliError> {
    let step = "deployment";
    let created = within(
        step,
        "creating the Deployment",
        deployments.create(&PostParams::default(), &deployment()),
    )
    .await?;
    check(created.metadata.generation == Some(1), step, || {
        format!(
            "generation is {:?}, expected 1",
            created.metadata.generation
        )
    })?;
    check(
        created.metadata.uid.is_some() && !rv_of(&created.metadata).is_empty(),
        step,
        || "the Deployment came back without uid or resourceVersion".to_owned(),
    )?;
    say(&format!(
        "2. Created the Deployment {NS}/web from typed structs (2 replicas, containers web=nginx:1.27 and log-shipper=fluent-bit:3); the server gave it uid {}, resourceVersion {} and generation 1.",
        created.metadata.uid.as_deref().unwrap_or_default(),
        rv_of(&created.metadata)
    ))
}

/// 3. Three ConfigMaps, two of them labelled app=web.
async fn create_config_maps(cms: &Api<ConfigMap>) -> Result<(), CliError> {
    let step = "configmaps";
    for cm in [
        config_map("web-config", "web", &[("color", "blue")]),
        config_map("web-flags", "web", &[("mode", "safe")]),
        config_map("db-config", "db", &[("pool", "10")]),
    ] {
        within(
            step,
            "creating a ConfigMap",
            cms.create(&PostParams::default(), &cm),
        )
        .await?;
    }
    say(
        "3. Created the ConfigMaps web-config and web-flags (label app=web) and db-config (label app=db).",
    )
}

/// 4. A list with a label selector; answers the list's resourceVersion.
async fn list_selected(cms: &Api<ConfigMap>) -> Result<String, CliError> {
    let step = "list";
    let list = within(
        step,
        "listing ConfigMaps",
        cms.list(&ListParams::default().labels("app=web")),
    )
    .await?;
    let names: Vec<&str> = list.items.iter().map(name_of).collect();
    check(names == ["web-config", "web-flags"], step, || {
        format!("app=web listed {names:?}, expected web-config and web-flags")
    })?;
    let list_rv = list.metadata.resource_version.clone().unwrap_or_default();
    say(&format!(
        "4. Listed ConfigMaps with the label selector app=web: {} (db-config is left out); the list is at resourceVersion {list_rv}.",
        names.join(" and ")
    ))?;
    Ok(list_rv)
}

/// 5. A watch from the list's resourceVersion sees a merge patch.
async fn watch_a_change(cms: &Api<ConfigMap>, list_rv: &str) -> Result<(), CliError> {
    let step = "watch";
    let mut stream = within(
        step,
        "starting the watch",
        cms.watch(&WatchParams::default().labels("app=web"), list_rv),
    )
    .await?;
    set_data(cms, step, "changing web-config", ("color", "green")).await?;
    let event = next_event(step, &mut stream).await?;
    let Some((kind, obj)) = event else {
        return Err(CliError::Demo {
            step,
            reason: "the watch ended before any event".to_owned(),
        });
    };
    let color = data_of(&obj, "color");
    check(
        kind == "MODIFIED" && name_of(&obj) == "web-config" && color == "green",
        step,
        || {
            format!(
                "expected MODIFIED web-config with color=green, got {kind} {} color={color}",
                name_of(&obj)
            )
        },
    )?;
    drop(stream);
    say(&format!(
        "5. Watched app=web ConfigMaps from the list's resourceVersion, changed web-config with a merge patch, and the watch delivered MODIFIED web-config (color=green) at resourceVersion {}.",
        rv_of(&obj.metadata)
    ))
}

/// `data[key]` of a ConfigMap, empty when unset.
fn data_of(cm: &ConfigMap, key: &str) -> String {
    cm.data
        .as_ref()
        .and_then(|d| d.get(key))
        .cloned()
        .unwrap_or_default()
}

/// 6. A strategic merge patch merges the containers by name.
async fn strategic_patch(deployments: &Api<Deployment>) -> Result<(), CliError> {
    let step = "strategic-patch";
    let patched = within(
        step,
        "patching the Deployment",
        deployments.patch(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"template": {"spec": {
                "containers": [{"name": "web", "image": "nginx:1.28"}]
            }}}})),
        ),
    )
    .await?;
    let imgs = images(&patched);
    let want = vec![
        ("web".to_owned(), "nginx:1.28".to_owned()),
        ("log-shipper".to_owned(), "fluent-bit:3".to_owned()),
    ];
    check(imgs == want, step, || {
        format!("containers after the patch are {imgs:?}, expected {want:?}")
    })?;
    check(patched.metadata.generation == Some(2), step, || {
        format!(
            "generation is {:?} after a spec change, expected 2",
            patched.metadata.generation
        )
    })?;
    say(
        "6. A strategic merge patch naming only container \"web\" changed its image to nginx:1.28; the list was merged by container name, so log-shipper kept fluent-bit:3, and generation went to 2.",
    )
}

/// 7. Server-side apply as a field manager.
async fn server_side_apply(cms: &Api<ConfigMap>) -> Result<(), CliError> {
    let step = "apply";
    let intent = ConfigMap {
        metadata: ObjectMeta {
            name: Some("web-flags".to_owned()),
            namespace: Some(NS.to_owned()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("mode".to_owned(), "fast".to_owned())])),
        ..ConfigMap::default()
    };
    let applied = within(
        step,
        "applying web-flags",
        cms.patch(
            "web-flags",
            &PatchParams::apply("demo-controller").force(),
            &Patch::Apply(&intent),
        ),
    )
    .await?;
    let mode = data_of(&applied, "mode");
    let managers: Vec<String> = applied
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.clone())
        .collect();
    check(
        mode == "fast" && managers.iter().any(|m| m == "demo-controller"),
        step,
        || format!("after apply: mode={mode:?}, managers {managers:?}"),
    )?;
    say(&format!(
        "7. Server-side apply as field manager \"demo-controller\" set web-flags data.mode=fast; managedFields now lists {}.",
        managers.join(", ")
    ))
}

/// Sets one key of web-config's data with a merge patch (`what` names
/// the write in `step`'s failure).
async fn set_data(
    cms: &Api<ConfigMap>,
    step: &'static str,
    what: &str,
    (key, value): (&str, &str),
) -> Result<ConfigMap, CliError> {
    let patch = Patch::Merge(json!({"data": {key: value}}));
    within(
        step,
        what,
        cms.patch("web-config", &PatchParams::default(), &patch),
    )
    .await
}

/// 8. A replace with a stale resourceVersion is refused; re-read, retry.
async fn conflict_and_retry(cms: &Api<ConfigMap>) -> Result<(), CliError> {
    let step = "conflict";
    let mine = within(step, "reading web-config", cms.get("web-config")).await?;
    let stale_rv = rv_of(&mine.metadata);
    set_data(
        cms,
        step,
        "updating web-config as another writer",
        ("owner", "someone-else"),
    )
    .await?;
    let err = stale_replace_conflicts(step, cms, mine).await?;
    let fresh = within(step, "re-reading web-config", cms.get("web-config")).await?;
    let fresh_rv = rv_of(&fresh.metadata);
    let done = within(
        step,
        "replacing web-config again",
        cms.replace("web-config", &PostParams::default(), &with_hint(fresh)),
    )
    .await?;
    let data = done.data.clone().unwrap_or_default();
    check(
        data.get("owner").map(String::as_str) == Some("someone-else")
            && data.get("replicas-hint").map(String::as_str) == Some("3"),
        step,
        || format!("after the retry web-config data is {data:?}"),
    )?;
    say(&format!(
        "8. A replace of web-config carrying the stale resourceVersion {stale_rv} was refused with 409 Conflict ({}); the client re-read it at resourceVersion {fresh_rv}, re-applied its change and the replace succeeded at {}, keeping the other writer's data.",
        crate::error::flatten(&err.to_string()),
        rv_of(&done.metadata)
    ))
}

/// The demo's change to web-config: `data.replicas-hint=3`.
fn with_hint(mut cm: ConfigMap) -> ConfigMap {
    cm.data
        .get_or_insert_with(BTreeMap::new)
        .insert("replicas-hint".to_owned(), "3".to_owned());
    cm
}

/// Replaces web-config with the change made to the stale copy `mine`:
/// the answer must be 409 Conflict, which is returned.
async fn stale_replace_conflicts(
    step: &'static str,
    cms: &Api<ConfigMap>,
    mine: ConfigMap,
) -> Result<kubeset::Error, CliError> {
    let fail = |reason: String| Err(CliError::Demo { step, reason });
    match tokio::time::timeout(
        STEP_TIMEOUT,
        cms.replace("web-config", &PostParams::default(), &with_hint(mine)),
    )
    .await
    {
        Ok(Err(e)) if e.is_conflict() => Ok(e),
        Ok(Err(e)) => fail(format!(
            "expected 409 Conflict, got: {}",
            crate::error::chain(&e)
        )),
        Ok(Ok(_)) => fail("a replace with a stale resourceVersion succeeded".to_owned()),
        Err(_) => fail("the replace got no answer".to_owned()),
    }
}

/// A client that knows every replica: the REST layer fails over between
/// them (requests and resumable watches).
fn failover_client(urls: &[String]) -> Result<Client, CliError> {
    let parse = |u: &String| {
        url::Url::parse(u)
            .map_err(|e| CliError::usage(format!("replica URL {u:?} is not a URL: {e}")))
    };
    let Some(first) = urls.first() else {
        return Err(CliError::usage("no replica URLs"));
    };
    let mut config = Config::new(parse(first)?);
    config.extra_endpoints = urls.iter().skip(1).map(parse).collect::<Result<_, _>>()?;
    config.default_namespace = NS.to_owned();
    config.qps = 100.0;
    config.burst = 200;
    client_for(&config)
}

fn origin(url: &str) -> &str {
    url.trim_end_matches('/')
}

async fn failover(server: &TestServer, replica0: &Client, urls: &[String]) -> Result<(), CliError> {
    let step = "failover";
    let client = failover_client(urls)?;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), NS);
    let (mut watch, last_rv) = watch_on_replica0(&cms, urls).await?;

    let faults = server.faults(0).ok_or_else(|| CliError::Demo {
        step,
        reason: "replica 0 is missing".to_owned(),
    })?;
    faults.down().await;
    let direct: Api<ConfigMap> = Api::namespaced(replica0.clone(), NS);
    let refused = tokio::time::timeout(STEP_TIMEOUT, direct.get("job-1")).await;
    check(matches!(refused, Ok(Err(_))), step, || {
        "replica 0 still answered after it was taken down".to_owned()
    })?;
    say(
        "   Took replica 0 down in the middle of the watch: its port now refuses connections and its open watch connection is cut.",
    )?;

    create_with_replica0_down(&client, &cms, urls).await?;
    watch_resumed_elsewhere(&mut watch, urls, &last_rv).await?;
    drop(watch);

    faults.up().await.map_err(|e| CliError::Demo {
        step,
        reason: format!("replica 0 could not come back up: {e}"),
    })?;
    let back = within(step, "reading job-4 through replica 0", direct.get("job-4")).await?;
    check(name_of(&back) == "job-4", step, || {
        "replica 0 answered with the wrong object".to_owned()
    })?;
    say("10. Brought replica 0 back up; it serves job-4 from the shared store.")
}

/// Step 9's start: a resumable watch on app=batch ConfigMaps served by
/// replica 0, which sees job-1 and job-2 created. Returns the watch and the
/// last resourceVersion it saw.
async fn watch_on_replica0(
    cms: &Api<ConfigMap>,
    urls: &[String],
) -> Result<(ResumableWatch<ConfigMap>, String), CliError> {
    let step = "failover";
    let start = within(
        step,
        "listing ConfigMaps",
        cms.list(&ListParams::default().labels("app=batch")),
    )
    .await?;
    let start_rv = start.metadata.resource_version.clone().unwrap_or_default();
    let mut pairs = Vec::new();
    WatchParams::default()
        .labels("app=batch")
        .bookmarks()
        .watch_pairs(&start_rv, &mut pairs);
    let mut req = cms.request(Verb::Get, None);
    for (k, v) in pairs {
        req = req.param(k, v);
    }
    let mut watch: ResumableWatch<ConfigMap> =
        within(step, "starting the watch", req.watch_resumable()).await?;
    let first_endpoint = watch.endpoint().to_owned();
    check(origin(&first_endpoint) == origin(&urls[0]), step, || {
        format!("the watch started on {first_endpoint}, expected replica 0")
    })?;
    let mut seen: Vec<String> = Vec::new();
    for name in ["job-1", "job-2"] {
        create_job(cms, name, "creating a ConfigMap").await?;
        let (kind, obj) = next_resumed(step, &mut watch).await?;
        seen.push(format!("{kind} {}", name_of(&obj)));
    }
    check(seen == ["ADDED job-1", "ADDED job-2"], step, || {
        format!("the watch delivered {seen:?}, expected ADDED job-1 then ADDED job-2")
    })?;
    let last_rv = watch.resource_version().unwrap_or_default().to_owned();
    say(&format!(
        "9. A failover client knows all 3 replicas. Its resumable watch on app=batch ConfigMaps is served by replica 0 ({first_endpoint}); created job-1 and job-2 and it saw ADDED job-1 and ADDED job-2 (last resourceVersion {last_rv})."
    ))?;
    Ok((watch, last_rv))
}

/// With replica 0 down, the failover client creates job-3 and job-4: the
/// first call fails over within itself and the client puts another replica
/// first from then on.
async fn create_with_replica0_down(
    client: &Client,
    cms: &Api<ConfigMap>,
    urls: &[String],
) -> Result<(), CliError> {
    let step = "failover";
    for name in ["job-3", "job-4"] {
        create_job(cms, name, "creating a ConfigMap with replica 0 down").await?;
    }
    let answering = client
        .rest()
        .endpoints()
        .first()
        .cloned()
        .unwrap_or_default();
    check(origin(&answering) != origin(&urls[0]), step, || {
        "the failover client still puts replica 0 first".to_owned()
    })?;
    say(&format!(
        "   The same client created job-3 and job-4 with replica 0 down: the first call failed over from replica 0 within the call, and the client now tries {answering} first."
    ))
}

/// The watch resumed by itself on another replica and delivers job-3 and
/// job-4, and nothing else: no repeat of job-1/job-2, nothing invented.
async fn watch_resumed_elsewhere(
    watch: &mut ResumableWatch<ConfigMap>,
    urls: &[String],
    last_rv: &str,
) -> Result<(), CliError> {
    let step = "failover";
    let mut resumed: Vec<String> = Vec::new();
    while resumed.len() < 2 {
        let (kind, obj) = next_resumed(step, watch).await?;
        resumed.push(format!("{kind} {}", name_of(&obj)));
    }
    check(resumed == ["ADDED job-3", "ADDED job-4"], step, || {
        format!(
            "after the failover the watch delivered {resumed:?}, expected ADDED job-3 then ADDED job-4"
        )
    })?;
    let now_serving = watch.endpoint().to_owned();
    check(
        origin(&now_serving) != origin(&urls[0]) && watch.resumes() >= 1,
        step,
        || {
            format!(
                "the watch is served by {now_serving} after {} resumes",
                watch.resumes()
            )
        },
    )?;
    let extra = tokio::time::timeout(Duration::from_millis(500), async {
        loop {
            match watch.next().await {
                Some(Ok(WatchEvent::Bookmark(_))) => {}
                other => return other,
            }
        }
    })
    .await;
    let repeated = match extra {
        Ok(Some(Ok(WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o)))) => {
            Some(name_of(&o).to_owned())
        }
        _ => None,
    };
    check(repeated.is_none(), step, || {
        format!("the resumed watch repeated or invented an event for {repeated:?}")
    })?;
    say(&format!(
        "   The watch resumed by itself on {now_serving} from the last resourceVersion it had seen ({last_rv}) and delivered ADDED job-3 and ADDED job-4: nothing lost and nothing repeated ({} resume).",
        watch.resumes()
    ))
}

/// Creates the failover step's `app=batch` ConfigMap `name` (data
/// `n: name`); `what` says what failed.
async fn create_job(cms: &Api<ConfigMap>, name: &str, what: &str) -> Result<(), CliError> {
    let cm = config_map(name, "batch", &[("n", name)]);
    within("failover", what, cms.create(&PostParams::default(), &cm)).await?;
    Ok(())
}

/// The next ADDED/MODIFIED/DELETED event of a resumable watch (bookmarks
/// skipped); an error or the end of the watch fails `step`.
async fn next_resumed(
    step: &'static str,
    watch: &mut ResumableWatch<ConfigMap>,
) -> Result<(&'static str, ConfigMap), CliError> {
    loop {
        let item = next_within(step, watch).await?;
        return match item {
            None => Err(CliError::Demo {
                step,
                reason: "the resumable watch ended".to_owned(),
            }),
            Some(Err(e)) => Err(CliError::Demo {
                step,
                reason: format!("the resumable watch failed: {}", crate::error::chain(&e)),
            }),
            Some(Ok(WatchEvent::Added(o))) => Ok(("ADDED", o)),
            Some(Ok(WatchEvent::Modified(o))) => Ok(("MODIFIED", o)),
            Some(Ok(WatchEvent::Deleted(o))) => Ok(("DELETED", o)),
            Some(Ok(WatchEvent::Bookmark(_))) => continue,
            Some(Ok(WatchEvent::Error(e))) => Err(CliError::Demo {
                step,
                reason: format!("the watch answered an error: {e}"),
            }),
        };
    }
}
