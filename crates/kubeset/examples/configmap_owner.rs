//! An example controller: every `Widget` (a custom resource) owns a
//! ConfigMap holding the widget's `spec.data`; changing or deleting the
//! ConfigMap by hand is undone.
//!
//! Runs against an embedded API server (registers the CRD, creates a few
//! widgets, waits until every ConfigMap is in place, then shuts down
//! gracefully):
//!
//! ```text
//! cargo run -p kubeset --features runtime --example configmap_owner
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kubeset::api::core::v1::ConfigMap;
use kubeset::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kubeset::params::PostParams;
use kubeset::rest::{RestClient, RestConfig};
use kubeset::runtime::{Action, Controller, WatcherConfig};
use kubeset::{Api, Client, Resource};
use kubeset_testserver::TestServer;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The custom resource.
#[derive(Debug, Clone, Serialize, Deserialize, Resource)]
#[resource(
    group = "example.com",
    version = "v1",
    kind = "Widget",
    plural = "widgets",
    namespaced
)]
struct Widget {
    #[serde(default)]
    metadata: ObjectMeta,
    spec: WidgetSpec,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct WidgetSpec {
    #[serde(default)]
    data: BTreeMap<String, String>,
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
enum ReconcileError {
    #[error("widget has no name or namespace")]
    Unnamed,
    #[error("writing ConfigMap {name}")]
    Write {
        name: String,
        #[source]
        source: kubeset::Error,
    },
}

struct Ctx {
    client: Client,
}

fn desired(widget: &Widget) -> Result<ConfigMap, ReconcileError> {
    let meta = &widget.metadata;
    let (Some(name), Some(ns)) = (meta.name.as_deref(), meta.namespace.as_deref()) else {
        return Err(ReconcileError::Unnamed);
    };
    Ok(ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("{name}-config")),
            namespace: Some(ns.to_owned()),
            owner_references: Some(vec![OwnerReference {
                api_version: Widget::API_VERSION.to_owned(),
                kind: Widget::KIND.to_owned(),
                name: name.to_owned(),
                uid: meta.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..ObjectMeta::default()
        },
        data: Some(widget.spec.data.clone()),
        ..ConfigMap::default()
    })
}

async fn reconcile(widget: Arc<Widget>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let want = desired(&widget)?;
    let ns = want.metadata.namespace.clone().unwrap_or_default();
    let name = want.metadata.name.clone().unwrap_or_default();
    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ns);
    let write = |source| ReconcileError::Write {
        name: name.clone(),
        source,
    };
    match cms.get_opt(&name).await.map_err(write)? {
        None => {
            cms.create(&PostParams::default(), &want)
                .await
                .map_err(write)?;
            println!("created {ns}/{name}");
        }
        Some(have) if have.data != want.data => {
            let fixed = ConfigMap {
                metadata: ObjectMeta {
                    resource_version: have.metadata.resource_version,
                    ..want.metadata
                },
                ..want
            };
            cms.replace(&name, &PostParams::default(), &fixed)
                .await
                .map_err(write)?;
            println!("updated {ns}/{name}");
        }
        Some(_) => {}
    }
    // Resync now and then even without changes.
    Ok(Action::requeue(Duration::from_secs(300)))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::start().await?;
    server.register_crd(json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]
        }
    }))?;
    let client = Client::new(
        RestClient::new(RestConfig::new(server.url()).with_qps_burst(50.0, 100))?,
        "default",
    );
    let widgets: Api<Widget> = Api::namespaced(client.clone(), "default");
    for i in 0..3 {
        let w = Widget {
            metadata: ObjectMeta {
                name: Some(format!("w{i}")),
                ..ObjectMeta::default()
            },
            spec: WidgetSpec {
                data: [("size".to_owned(), i.to_string())].into(),
            },
        };
        widgets.create(&PostParams::default(), &w).await?;
    }

    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let controller = Controller::new(widgets.clone(), WatcherConfig::default())
        .owns(
            Api::<ConfigMap>::namespaced(client.clone(), "default"),
            WatcherConfig::default(),
        )
        .graceful_shutdown_on(async move {
            let _ = stopped.await;
        });
    let running = tokio::spawn(controller.run_until_shutdown(
        reconcile,
        Arc::new(Ctx {
            client: client.clone(),
        }),
    ));

    // Wait for the ConfigMaps, then tamper with one: the controller puts it back.
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let all_there = || async {
        for i in 0..3 {
            match cms.get_opt(&format!("w{i}-config")).await {
                Ok(Some(cm))
                    if cm.data.as_ref().and_then(|d| d.get("size")) == Some(&i.to_string()) => {}
                _ => return false,
            }
        }
        true
    };
    let mut ok = false;
    for _ in 0..200 {
        if all_there().await {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if ok {
        let mut cm = cms.get("w1-config").await?;
        cm.data = Some([("size".to_owned(), "tampered".to_owned())].into());
        cms.replace("w1-config", &PostParams::default(), &cm)
            .await?;
        println!("tampered with default/w1-config");
        ok = false;
        for _ in 0..200 {
            tokio::time::sleep(Duration::from_millis(50)).await;
            if all_there().await {
                ok = true;
                break;
            }
        }
    }
    let _ = stop.send(());
    running.await?;
    if ok {
        println!("every widget owns its ConfigMap");
        Ok(())
    } else {
        Err("the controller did not converge in 10 s".into())
    }
}
