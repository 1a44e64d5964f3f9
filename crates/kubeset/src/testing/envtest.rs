//! The `envtest` crate's shape (kube-rs's test environment:
//! `Environment::default().with_crds(..)?.create().await?.client()?`)
//! over the embedded server, so a kube-rs project's integration tests run
//! with no etcd, no kube-apiserver binary, no Go toolchain and no download.
//!
//! A renamed project keeps `use envtest::Environment;` and points Cargo at
//! kubeset's `envtest` crate (`crates/kubeset-envtest`, which re-exports
//! this module) with one `[patch.crates-io]` line; or it writes
//! `kubeset::testing::envtest::Environment`.
//!
//! ```
//! use kubeset::testing::envtest::Environment;
//! use kubeset::api::core::v1::ConfigMap;
//! use kubeset::Api;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let crd = serde_json::json!({
//!     "metadata": {"name": "widgets.example.com"},
//!     "spec": {"group": "example.com", "scope": "Namespaced",
//!              "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
//!              "versions": [{"name": "v1", "served": true, "storage": true,
//!                            "schema": {"openAPIV3Schema": {"type": "object",
//!                                       "x-kubernetes-preserve-unknown-fields": true}}}]}
//! });
//! let server = Environment::default().with_crds(vec![crd])?.create().await?;
//! let cms: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
//! assert!(cms.get_opt("absent").await?.is_none());
//! server.destroy().await?;
//! # Ok(()) }
//! ```

use std::sync::Arc;

use kubeset_client::Client;
use serde_json::Value;

use super::TestServer;

/// The most CRDs one environment installs (a bound on what a test hands in).
const MAX_CRDS: usize = 1024;

/// Why an environment did not start (envtest's `EnvironmentError`).
#[derive(Debug, thiserror::Error)]
pub enum EnvironmentError {
    /// A CRD did not serialize to JSON.
    #[error("CRD serialization error: {source}")]
    CrdSerialize {
        /// serde_json's error.
        #[source]
        source: serde_json::Error,
    },
    /// `with_crds` was given something other than an object or an array
    /// of objects.
    #[error("Unsupported CRD type. Expected object, or array of those.")]
    UnsupportedCrdType,
    /// More CRDs than one environment installs.
    #[error("too many CRDs: {count}, at most {MAX_CRDS}")]
    TooManyCrds {
        /// How many were given.
        count: usize,
    },
    /// The embedded server did not start.
    #[error("Start environment error: {source}")]
    StartEnvironment {
        /// The server's error.
        #[source]
        source: Box<super::Error>,
    },
    /// The server refused a CRD (its schema, its names).
    #[error("CRD decode error: {name}: {source}")]
    DecodeCrd {
        /// The CRD's `metadata.name` (or `?`).
        name: String,
        /// The server's answer.
        #[source]
        source: Box<kubeset_testserver::Error>,
    },
}

/// Why a server's client or its stop failed (envtest's `ServerError`).
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The server's kubeconfig gave no client.
    #[error("Opening client error: {source}")]
    Client {
        /// The testing module's error.
        #[source]
        source: Box<super::Error>,
    },
}

/// What to start: the CRDs to install (envtest's `Environment`; its
/// binary-asset settings have nothing to do here, the server is in the
/// test's process).
#[derive(Debug, Clone, Default)]
pub struct Environment {
    crds: Vec<Value>,
}

impl Environment {
    /// Adds CRDs to install: one CRD (a typed `CustomResourceDefinition`,
    /// `MyKind::crd()`, or JSON) or an array of them.
    pub fn with_crds(mut self, crds: impl serde::Serialize) -> Result<Self, EnvironmentError> {
        let value = serde_json::to_value(crds)
            .map_err(|source| EnvironmentError::CrdSerialize { source })?;
        match value {
            Value::Array(items) if items.iter().all(Value::is_object) => self.crds.extend(items),
            Value::Object(_) => self.crds.push(value),
            _ => return Err(EnvironmentError::UnsupportedCrdType),
        }
        if self.crds.len() > MAX_CRDS {
            return Err(EnvironmentError::TooManyCrds {
                count: self.crds.len(),
            });
        }
        Ok(self)
    }

    /// Starts an embedded server with the CRDs installed and served.
    pub async fn create(&self) -> Result<Server, EnvironmentError> {
        let server =
            TestServer::start()
                .await
                .map_err(|source| EnvironmentError::StartEnvironment {
                    source: Box::new(source),
                })?;
        for crd in &self.crds {
            server.register_crd(crd.clone()).map_err(|source| {
                let name = crd
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("?");
                EnvironmentError::DecodeCrd {
                    name: name.to_owned(),
                    source: Box::new(source),
                }
            })?;
        }
        Ok(Server {
            inner: Arc::new(server),
        })
    }
}

/// A started environment (envtest's `Server`): clones share one server,
/// which stops when the last clone is dropped.
#[derive(Debug, Clone)]
pub struct Server {
    inner: Arc<TestServer>,
}

impl Server {
    /// A client for the server, default namespace `default`.
    pub fn client(&self) -> Result<Client, ServerError> {
        self.inner.client().map_err(|source| ServerError::Client {
            source: Box::new(source),
        })
    }

    /// The server's kubeconfig as YAML.
    pub fn kubeconfig_yaml(&self) -> String {
        self.inner.kubeconfig_yaml()
    }

    /// Whether the server is running (it runs while a clone is held).
    pub fn exist(&self) -> bool {
        true
    }

    /// envtest's explicit stop: here the server stops when the last clone
    /// is dropped, so this only reports success.
    pub async fn destroy(&self) -> Result<(), ServerError> {
        Ok(())
    }

    /// The embedded server (its store, faults, watch counts).
    pub fn server(&self) -> &TestServer {
        &self.inner
    }
}
