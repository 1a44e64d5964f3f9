//! A kubectl plugin's idiom (kubectl-view-allocations): the client built
//! from a kubeconfig file read with `Kubeconfig::read_from` and a context
//! chosen with `KubeConfigOptions`, kube-rs's `KubeconfigError` kept in
//! the plugin's own error enum; then nodes and pods listed and their
//! quantities read (`Quantity`'s `.0`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::{Container, Node, NodeStatus, Pod, PodSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::api::{Api, ListParams, ObjectMeta, PostParams};

use crate::support::{BoxError, server};

/// The plugin's error: what it was doing, and kube-rs's error as the cause.
#[derive(Debug, thiserror::Error)]
enum PluginError {
    #[error("{context}: {source}")]
    KubeConfig {
        context: String,
        #[source]
        source: kube::config::KubeconfigError,
    },
    #[error("{context}: {source}")]
    Kube {
        context: String,
        #[source]
        source: kube::Error,
    },
}

/// The client as the plugin builds it from `--kubeconfig` and `--context`.
async fn client_from(
    path: &Path,
    context: Option<String>,
    accept_invalid_certs: bool,
) -> Result<kube::Client, PluginError> {
    let options = kube::config::KubeConfigOptions {
        context,
        ..Default::default()
    };
    let kubeconfig =
        kube::config::Kubeconfig::read_from(path).map_err(|source| PluginError::KubeConfig {
            context: format!("read kubeconfig from {}", path.display()),
            source,
        })?;
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|source| PluginError::KubeConfig {
            context: "create the client config".to_owned(),
            source,
        })?;
    assert!(!config.cluster_url.to_string().is_empty());
    config.accept_invalid_certs = config.accept_invalid_certs || accept_invalid_certs;
    kube::Client::try_from(config).map_err(|source| PluginError::Kube {
        context: "create the client".to_owned(),
        source,
    })
}

/// A kubeconfig file naming `url` under the context `test`.
fn write_kubeconfig(url: &str, name: &str) -> Result<PathBuf, BoxError> {
    let path = std::env::temp_dir().join(format!(
        "porting-kubeconfig-{}-{name}.yaml",
        std::process::id()
    ));
    let text = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: test\n\
         clusters:\n- name: test\n  cluster:\n    server: {url}\n\
         users:\n- name: test\n  user: {{}}\n\
         contexts:\n- name: test\n  context:\n    cluster: test\n    user: test\n"
    );
    std::fs::write(&path, text)?;
    Ok(path)
}

fn quantities(pairs: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Quantity((*v).to_owned())))
        .collect()
}

#[tokio::test]
async fn a_plugin_reads_allocatable_and_requests() -> Result<(), BoxError> {
    let (server, _) = server().await?;
    let path = write_kubeconfig(&server.url().to_string(), "ok")?;
    let client = client_from(&path, Some("test".to_owned()), false).await;
    std::fs::remove_file(&path)?;
    let client = client?;

    let nodes: Api<Node> = Api::all(client.clone());
    let node = Node {
        metadata: ObjectMeta {
            name: Some("node-a".to_owned()),
            labels: Some(BTreeMap::from([("pool".to_owned(), "a".to_owned())])),
            ..ObjectMeta::default()
        },
        status: Some(NodeStatus {
            allocatable: Some(quantities(&[("cpu", "4"), ("memory", "8Gi")])),
            ..NodeStatus::default()
        }),
        ..Node::default()
    };
    nodes.create(&PostParams::default(), &node).await?;
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let pod = Pod {
        metadata: ObjectMeta {
            name: Some("web".to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            node_name: Some("node-a".to_owned()),
            containers: vec![Container {
                name: "web".to_owned(),
                image: Some("nginx".to_owned()),
                resources: Some(ResourceRequirements {
                    requests: Some(quantities(&[("cpu", "250m")])),
                    ..ResourceRequirements::default()
                }),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    };
    pods.create(&PostParams::default(), &pod).await?;

    let listed = nodes
        .list(&ListParams::default().labels("pool=a"))
        .await?
        .items;
    let mut allocatable = Vec::new();
    for node in listed {
        if let Some(als) = node.status.and_then(|s| s.allocatable) {
            for (kind, value) in als.iter() {
                allocatable.push(format!("{kind}={}", value.0));
            }
        }
    }
    assert_eq!(allocatable, ["cpu=4", "memory=8Gi"]);
    let requests: Vec<String> = pods
        .list(&ListParams::default())
        .await?
        .items
        .iter()
        .flat_map(|p| {
            p.spec
                .as_ref()
                .map(|s| s.containers.clone())
                .unwrap_or_default()
        })
        .filter_map(|c| c.resources.and_then(|r| r.requests))
        .flat_map(|r| r.into_iter().map(|(k, v)| format!("{k}={}", v.0)))
        .collect();
    assert_eq!(requests, ["cpu=250m"]);
    Ok(())
}

#[tokio::test]
async fn kubeconfig_errors_carry_the_plugins_context() -> Result<(), BoxError> {
    let missing = std::env::temp_dir().join("porting-kubeconfig-missing/config");
    let Err(err) = client_from(&missing, None, false).await else {
        return Err("a missing kubeconfig was read".into());
    };
    assert!(matches!(err, PluginError::KubeConfig { .. }), "{err:?}");
    assert!(err.to_string().contains("read kubeconfig from"), "{err}");
    assert!(std::error::Error::source(&err).is_some());

    let path = write_kubeconfig("http://127.0.0.1:1", "ctx")?;
    let result = client_from(&path, Some("nope".to_owned()), true).await;
    std::fs::remove_file(&path)?;
    let Err(err) = result else {
        return Err("an unknown context was accepted".into());
    };
    assert!(matches!(err, PluginError::KubeConfig { .. }), "{err:?}");
    assert!(
        err.to_string().starts_with("create the client config: "),
        "{err}"
    );
    Ok(())
}
