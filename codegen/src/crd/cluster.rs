//! `--from-cluster`: the CRDs of a live server, read through kubeset's own
//! client (cargo feature `cluster`).

use std::path::{Path, PathBuf};

use kubeset::dynamic::ApiResource;
use kubeset::params::ListParams;
use kubeset::{Api, Client, Config, KubeConfigOptions};
use serde_json::Value;

use super::{CustomResourceDefinition, decode};
use crate::error::CodegenError;

/// Where `--from-cluster` connects.
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct ClusterOptions {
    /// Kubeconfig file (`--kubeconfig`); else `$KUBECONFIG` / `~/.kube/config`.
    pub kubeconfig: Option<PathBuf>,
    /// Context (`--context`); else the current one.
    pub context: Option<String>,
    /// Only CRDs of these API groups; all when empty.
    pub groups: Vec<String>,
}

/// Why the CRDs of a cluster could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// The kubeconfig could not be loaded or resolved.
    #[error("loading the kubeconfig")]
    Config {
        /// The config error.
        #[source]
        source: kubeset::ConfigError,
    },
    /// The client could not be built.
    #[error("building the client")]
    Client {
        /// The client error.
        #[source]
        source: kubeset::ClientError,
    },
    /// The list request failed.
    #[error("listing customresourcedefinitions")]
    List {
        /// The request error.
        #[source]
        source: kubeset::Error,
    },
    /// A returned object is not a valid CRD.
    #[error("decoding a CustomResourceDefinition of the cluster")]
    Decode {
        /// The decode error.
        #[source]
        source: CodegenError,
    },
}

fn crd_resource() -> ApiResource {
    ApiResource {
        group: "apiextensions.k8s.io".into(),
        version: "v1".into(),
        kind: "CustomResourceDefinition".into(),
        plural: "customresourcedefinitions".into(),
        namespaced: false,
    }
}

/// Builds a client from `options`.
pub fn client(options: &ClusterOptions) -> Result<Client, ClusterError> {
    let mut kc = KubeConfigOptions::default();
    if let Some(c) = &options.context {
        kc = kc.with_context(c.clone());
    }
    let config = match &options.kubeconfig {
        Some(path) => kubeset::rest::config::Kubeconfig::read_from(path)
            .and_then(|k| Config::from_custom_kubeconfig_sync(k, &kc)),
        None => Config::from_kubeconfig_sync(&kc),
    }
    .map_err(|source| ClusterError::Config { source })?;
    Client::try_from_config(&config).map_err(|source| ClusterError::Client { source })
}

/// Lists the CRDs (of `groups`, or all) in name order, as the same
/// objects reading their manifests gives.
pub async fn read_cluster(
    client: Client,
    groups: &[String],
) -> Result<Vec<CustomResourceDefinition>, ClusterError> {
    let resource = crd_resource();
    let api: Api<kubeset::dynamic::DynamicObject> = Api::dynamic(client, &resource, None);
    let list = api
        .list(&ListParams::default())
        .await
        .map_err(|source| ClusterError::List { source })?;
    let mut crds = Vec::new();
    for item in list.items {
        let mut value = serde_json::to_value(&item).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.insert("apiVersion".into(), Value::String(resource.api_version()));
            map.insert("kind".into(), Value::String(resource.kind.clone()));
        }
        crds.push(
            decode(value, Path::new("cluster"))
                .map_err(|source| ClusterError::Decode { source })?,
        );
    }
    crds.retain(|c| groups.is_empty() || groups.contains(&c.spec.group));
    crds.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    Ok(crds)
}
