//! Testing against a real API server in the test's own process: the
//! embedded server of `kubeset-testserver` with a client in one call, and
//! waits whose failures say what they waited for.
//!
//! Where Go operators start envtest (an etcd and a kube-apiserver binary,
//! seconds per start) and kube-rs tests script a `tower_test::mock`
//! service, here a test starts [`TestServer`]: an API server on a local
//! socket that keeps objects, versions, watches, finalizers, server-side
//! apply, CRDs and their schemas, so the code under test sends its real
//! requests and reads real answers. `docs/testing.md` ports an envtest
//! test and a tower-mock test to it.
//!
//! ```
//! use kubeset::api::core::v1::ConfigMap;
//! use kubeset::apimachinery::pkg::apis::meta::v1::ObjectMeta;
//! use kubeset::params::PostParams;
//! use kubeset::testing::{TestServer, until, wait_for};
//! use kubeset::Api;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = TestServer::start().await?;
//! let cms: Api<ConfigMap> = Api::default_namespaced(server.client()?);
//! let cm = ConfigMap {
//!     metadata: ObjectMeta { name: Some("settings".into()), ..ObjectMeta::default() },
//!     ..ConfigMap::default()
//! };
//! cms.create(&PostParams::default(), &cm).await?;
//! let seen = wait_for(&cms, "settings", until("exists", |cm: Option<&ConfigMap>| cm.is_some())).await?;
//! assert!(seen.is_some());
//! # Ok(()) }
//! ```
//!
//! Cargo feature `testing` (it turns on `runtime`, whose watcher the waits
//! use); add it under `[dev-dependencies]`:
//! `kubeset = { version = "…", features = ["testing"] }`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kubeset_client::rest::config::Kubeconfig;
use kubeset_client::rest::{RestClient, RestConfig};
use kubeset_client::{Api, Client, Config, KubeConfigOptions, Resource};
use kubeset_runtime::wait::{Condition, await_condition};
use serde::Serialize;
use serde::de::DeserializeOwned;

#[doc(no_inline)]
pub use kubeset_testserver::{Faults, TestServerBuilder};

pub mod envtest;

/// How long [`wait_for`] waits unless the condition says otherwise
/// ([`Until::within`]): long enough for a loaded CI machine, short enough
/// that a test that cannot pass fails instead of hanging.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(60);

/// How much of the last seen object a timeout error quotes.
const LAST_SEEN_LIMIT: usize = 4096;

/// What went wrong starting a test server or waiting in a test.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The embedded server did not start (a port taken, TLS material).
    #[error("the embedded API server did not start")]
    Start {
        /// The server's error.
        #[source]
        source: Box<kubeset_testserver::Error>,
    },
    /// The server's kubeconfig did not give a client.
    #[error("no client for the embedded API server at {url}")]
    Client {
        /// The server's URL.
        url: String,
        /// Why.
        #[source]
        source: Box<kubeset_client::Error>,
    },
    /// The condition did not hold in time.
    #[error(
        "timed out after {waited:?} waiting for {object} to satisfy \"{condition}\"; last seen: {last_seen}"
    )]
    Timeout {
        /// The object waited on (`ConfigMap default/settings`).
        object: String,
        /// The condition's description.
        condition: String,
        /// How long it waited.
        waited: Duration,
        /// The object as last seen, as JSON (cut at 4 KiB), or `absent`.
        last_seen: String,
    },
    /// Watching the object failed in a way retrying does not fix (it does
    /// not decode as the type asked for, access is forbidden).
    #[error("waiting for {object} to satisfy \"{condition}\" failed")]
    Watch {
        /// The object waited on.
        object: String,
        /// The condition's description.
        condition: String,
        /// The watch's error.
        #[source]
        source: Box<kubeset_runtime::wait::Error>,
    },
}

/// The embedded API server with a client for it: kubeset-testserver's
/// [`TestServer`](kubeset_testserver::TestServer) (all of whose methods
/// it derefs to), plus [`client`](Self::client). Dropping it stops the
/// server.
///
/// ```
/// use kubeset::testing::TestServer;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), kubeset::testing::Error> {
/// // With controllers-lite: Deployments make ReplicaSets and Pods.
/// let server = TestServer::start_with(TestServer::builder().controllers(true)).await?;
/// let client = server.client()?;
/// assert_eq!(client.default_namespace(), "default");
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct TestServer {
    inner: kubeset_testserver::TestServer,
}

impl TestServer {
    /// Starts a server with the defaults: plain HTTP on a free local port,
    /// no token, no controllers.
    pub async fn start() -> Result<Self, Error> {
        Self::start_with(Self::builder()).await
    }

    /// Starts a server configured by `builder` (TLS, a token, controllers,
    /// a container runtime, …).
    pub async fn start_with(builder: TestServerBuilder) -> Result<Self, Error> {
        builder
            .start()
            .await
            .map(|inner| TestServer { inner })
            .map_err(|source| Error::Start {
                source: Box::new(source),
            })
    }

    /// The builder [`start_with`](Self::start_with) takes.
    pub fn builder() -> TestServerBuilder {
        kubeset_testserver::TestServer::builder()
    }

    /// A client for this server, default namespace `default`, without the
    /// client-side rate limit (QPS 5 would slow a test, not make it more
    /// real). Over TLS or with a token it goes through the server's own
    /// kubeconfig, as any program would; a plain HTTP server without a
    /// token gets the REST layer's default configuration directly (a
    /// `Config` builds a TLS verifier per client, tens of milliseconds in
    /// a debug build, unused over HTTP). Each call builds a new client.
    pub fn client(&self) -> Result<Client, Error> {
        let failed = |source: kubeset_client::Error| Error::Client {
            url: self.inner.url(),
            source: Box::new(source),
        };
        if self.inner.ca_pem().is_none() && self.inner.token().is_none() {
            let config = RestConfig::new(self.inner.url()).with_qps_burst(-1.0, 0);
            let rest = RestClient::new(config).map_err(failed)?;
            return Ok(Client::new(rest, "default"));
        }
        let kubeconfig =
            Kubeconfig::from_yaml(&self.inner.kubeconfig_yaml()).map_err(|e| failed(e.into()))?;
        let mut config =
            Config::from_custom_kubeconfig_sync(kubeconfig, &KubeConfigOptions::default())
                .map_err(|e| failed(e.into()))?;
        config.qps = -1.0;
        Client::try_from(config).map_err(failed)
    }

    /// The server itself (also reached through `Deref`).
    pub fn server(&self) -> &kubeset_testserver::TestServer {
        &self.inner
    }

    /// Stops the server and waits for its connections to close.
    pub async fn shutdown(self) {
        self.inner.shutdown().await;
    }
}

impl std::ops::Deref for TestServer {
    type Target = kubeset_testserver::TestServer;

    fn deref(&self) -> &Self::Target {
        &self.inner
    }
}

impl From<kubeset_testserver::TestServer> for TestServer {
    fn from(inner: kubeset_testserver::TestServer) -> Self {
        TestServer { inner }
    }
}

/// A condition with a description and a time limit, for [`wait_for`]:
/// made by [`until`], [`exists`] or [`is_deleted`].
///
/// ```
/// use std::time::Duration;
/// use kubeset::api::core::v1::Pod;
/// use kubeset::testing::until;
///
/// let running = until("is Running", |p: Option<&Pod>| {
///     p.and_then(|p| p.status.as_ref()).and_then(|s| s.phase.as_deref()) == Some("Running")
/// })
/// .within(Duration::from_secs(10));
/// assert_eq!(running.description(), "is Running");
/// ```
#[must_use]
pub struct Until<C> {
    what: String,
    check: C,
    within: Duration,
}

impl<C> std::fmt::Debug for Until<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Until")
            .field("what", &self.what)
            .field("within", &self.within)
            .finish_non_exhaustive()
    }
}

impl<C> Until<C> {
    /// Waits at most `limit` (default [`DEFAULT_WAIT`]).
    pub fn within(mut self, limit: Duration) -> Self {
        self.within = limit;
        self
    }

    /// The description a timeout error quotes.
    pub fn description(&self) -> &str {
        &self.what
    }
}

/// `check` (any runtime [`Condition`]: a closure over the object's state,
/// `None` while it does not exist, or one of
/// `kubeset::runtime::wait::conditions`) described as `what`.
///
/// ```
/// use kubeset::api::core::v1::ConfigMap;
/// use kubeset::runtime::wait::conditions;
/// use kubeset::testing::until;
///
/// let uid = "0c5a3e5e-0000-4000-8000-000000000001";
/// let gone = until("is deleted or replaced", conditions::is_deleted::<ConfigMap>(uid));
/// let filled = until("has data", |c: Option<&ConfigMap>| c.is_some_and(|c| c.data.is_some()));
/// # let _ = (gone, filled);
/// ```
pub fn until<K, C: Condition<K>>(what: impl Into<String>, check: C) -> Until<C> {
    Until {
        what: what.into(),
        check,
        within: DEFAULT_WAIT,
    }
}

/// The object exists.
///
/// ```
/// use kubeset::api::core::v1::ConfigMap;
/// let c = kubeset::testing::exists::<ConfigMap>();
/// assert_eq!(c.description(), "exists");
/// ```
pub fn exists<K>() -> Until<fn(Option<&K>) -> bool> {
    until(
        "exists",
        (|o: Option<&K>| o.is_some()) as fn(Option<&K>) -> bool,
    )
}

/// The object is gone (deleted, its finalizers done).
///
/// ```
/// use kubeset::api::core::v1::ConfigMap;
/// let c = kubeset::testing::is_deleted::<ConfigMap>();
/// assert_eq!(c.description(), "is deleted");
/// ```
pub fn is_deleted<K>() -> Until<fn(Option<&K>) -> bool> {
    until(
        "is deleted",
        (|o: Option<&K>| o.is_none()) as fn(Option<&K>) -> bool,
    )
}

/// Waits until the object `name` of `api` satisfies `condition`, and
/// returns its state then (`None` when the condition holds for an absent
/// object). It watches (no polling): the current state is checked first,
/// then every change. Past the condition's limit it fails with
/// [`Error::Timeout`], which names the object, the condition and the
/// object as last seen:
///
/// ```text
/// timed out after 60s waiting for ConfigMap default/settings to satisfy
/// "has key b"; last seen: {"apiVersion":"v1","data":{"a":"1"},…}
/// ```
///
/// ```
/// use std::time::Duration;
/// use kubeset::api::core::v1::ConfigMap;
/// use kubeset::testing::{Error, TestServer, until, wait_for};
/// use kubeset::Api;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = TestServer::start().await?;
/// let cms: Api<ConfigMap> = Api::default_namespaced(server.client()?);
/// let never = until("exists", |c: Option<&ConfigMap>| c.is_some()).within(Duration::from_millis(200));
/// match wait_for(&cms, "missing", never).await {
///     Err(Error::Timeout { object, last_seen, .. }) => {
///         assert_eq!(object, "ConfigMap default/missing");
///         assert_eq!(last_seen, "absent");
///     }
///     other => panic!("{other:?}"),
/// }
/// # Ok(()) }
/// ```
pub async fn wait_for<K, C>(
    api: &Api<K>,
    name: &str,
    condition: Until<C>,
) -> Result<Option<K>, Error>
where
    K: Resource + Serialize + DeserializeOwned + Clone + Send + 'static,
    C: Condition<K>,
{
    let object = match api.namespace() {
        Some(ns) => format!("{} {ns}/{name}", K::KIND),
        None => format!("{} {name}", K::KIND),
    };
    // Every state the condition is shown, the last one kept for the error.
    let last: Arc<Mutex<Option<K>>> = Arc::default();
    let seen = last.clone();
    let check = condition.check;
    let watching = await_condition(api.clone(), name, move |obj: Option<&K>| {
        *seen.lock().unwrap_or_else(|e| e.into_inner()) = obj.cloned();
        check.matches_object(obj)
    });
    match tokio::time::timeout(condition.within, watching).await {
        Ok(Ok(state)) => Ok(state),
        Ok(Err(source)) => Err(Error::Watch {
            object,
            condition: condition.what,
            source: Box::new(source),
        }),
        Err(_elapsed) => {
            let last = last.lock().unwrap_or_else(|e| e.into_inner()).take();
            Err(Error::Timeout {
                object,
                condition: condition.what,
                waited: condition.within,
                last_seen: describe(last.as_ref()),
            })
        }
    }
}

/// The object as JSON, cut at [`LAST_SEEN_LIMIT`] bytes, or `absent`.
fn describe<K: Serialize>(obj: Option<&K>) -> String {
    let Some(obj) = obj else {
        return "absent".to_owned();
    };
    let mut text = serde_json::to_string(obj).unwrap_or_else(|e| format!("(unprintable: {e})"));
    if text.len() > LAST_SEEN_LIMIT {
        let mut cut = LAST_SEEN_LIMIT;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let more = text.len() - cut;
        text.truncate(cut);
        text.push_str(&format!("… ({more} bytes more)"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_seen_is_cut_on_a_char_boundary() {
        let long = "é".repeat(LAST_SEEN_LIMIT);
        let text = describe(Some(&long));
        assert!(text.ends_with("bytes more)"), "{text}");
        assert!(text.len() < LAST_SEEN_LIMIT + 40);
        assert_eq!(describe::<String>(None), "absent");
        assert_eq!(describe(Some(&"x")), "\"x\"");
    }
}
