//! An embedded Kubernetes API server on loopback, for tests, demos and
//! failover work.
//!
//! # Bird's-eye view
//!
//! [`TestServer::builder`] starts N *replicas*: N listeners on distinct
//! `127.0.0.1` ports that share one in-memory store of JSON objects. Each replica has its own fault state ([`Faults`]): it can be
//! taken down (the port really refuses connections), hung (accepts, never
//! answers), slowed, made to fail the next requests with a status and
//! `Retry-After`, to cut its watch streams mid-line, or to return
//! malformed bodies. An optional admin endpoint (HTTPS when the API is)
//! exposes the same controls for black-box use, and [`TestServer::kubeconfig_yaml`] writes
//! a kubeconfig for the replicas.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kubeset_testserver::Error> {
//! use kubeset_testserver::TestServer;
//! let server = TestServer::builder().replicas(3).tls(true).start().await?;
//! let faults = server.faults(0).expect("replica 0");
//! faults.down().await; // replica 0 now refuses connections
//! println!("{}", server.urls()[1]);
//! server.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # Code map
//!
//! - `store`: objects, the global resourceVersion, event history, CRDs.
//!   **Invariant:** one mutex, one counter bump and one event per write.
//! - `resources`: the served resource table (`kubeset_api::resources`
//!   plus CRDs), qualified names for messages.
//! - `http`: routing from URL and verb to store operations; `Status`
//!   errors come from `status`.
//! - `selectors`, `patch`, `apply`: label/field selectors, JSON / merge /
//!   strategic merge patch, server-side apply with `managedFields`.
//! - `watch`: streaming events, resume, bookmarks, `410 Expired`.
//! - `discovery`, `openapi`, `table`, `printers`: `/api`, `/apis`,
//!   `/version`, `/openapi/v2|v3`, and Table output for kubectl.
//! - `fields`, `events`: field-selector labels per kind; one Event store
//!   for both Event APIs.
//! - `controllers`: opt-in controllers-lite.
//! - `validation`, `limits`, `auth`: kube-apiserver's name rules, size
//!   limits and bearer parsing (with their upstream sources).
//! - `options`: query parameters checked as upstream's `Validate*Options`;
//!   `typed`: built-in kinds read into their model (wrong types refused,
//!   empty and unknown fields dropped, with warnings).
//! - `webhooks`: the admission webhooks stored in the server called on
//!   writes, over HTTPS, outside the store's lock (the matching rules in
//!   `admission/webhook.rs`).
//! - `server`: replicas' accept loops and the one bounded way every
//!   connection is served; `bounds`: its timeouts and caps (kube-apiserver's
//!   numbers); `faults`: per-replica faults;
//!   `admin`: the admin endpoint; `tls`: generated certificates;
//!   `kubeconfig`: rendering.
//!
//! # What it does not do
//!
//! No controllers run unless [`TestServerBuilder::controllers`] asks for
//! the lite ones (namespaces are deleted at once with their contents), no
//! admission or schema validation beyond names and sizes (both as
//! kube-apiserver 1.35 checks them), no protobuf watch streams (objects,
//! lists and Status speak protobuf for built-in kinds), no authorization
//! beyond one optional bearer token. The full list is in the crate README.

mod admin;
mod admission;
mod apply;
mod auth;
mod bounds;
mod conns;
mod controllers;
mod conversion;
mod defaults;
mod deletion;
mod discovery;
mod error;
mod events;
mod fanout;
mod faults;
mod fields;
mod fieldset;
#[doc(hidden)]
pub mod fuzz_hooks;
mod gc;
mod http;
mod immutable;
mod inflight;
mod kubeconfig;
mod limits;
mod names;
mod openapi;
mod options;
mod owners;
mod partial;
mod patch;
mod printers;
mod protobuf;
mod registry;
mod replica;
mod resources;
mod review;
mod selectors;
mod server;
mod services;
mod shape;
mod shared;
mod smd;
mod status;
mod store;
mod stream;
mod subresource;
mod table;
mod tls;
mod typed;
mod util;
mod validation;
mod verbs;
mod watch;
mod webhook_client;
mod webhooks;
mod wire;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use crate::error::Error;
pub use crate::faults::Mode;
pub use crate::replica::{Faults, ReplicaHandle};
pub use crate::util::human_duration;

use crate::server::Replica;
use crate::shared::Shared;
use crate::store::{Store, WriteCtx};

/// A fresh random bearer token (32 hex digits, 128 bits from the OS-seeded
/// thread RNG), for a server that should not be open to every local user;
/// `kubeset serve --tls` uses one when no `--require-token` is given.
pub fn generate_token() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    (0..16)
        .map(|_| format!("{:02x}", rng.random::<u8>()))
        .collect()
}

/// What a server's watches hold, by its own accounting
/// ([`TestServer::watch_memory`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WatchMemory {
    /// Watches whose task is running.
    pub open: usize,
    /// Bytes encoded and queued, not yet taken by their connections (at
    /// most [`TestServerBuilder::watch_queue_bytes`] per watch).
    pub queued_bytes: usize,
    /// Initial states held for watches still sending them (one per kind
    /// and resourceVersion, shared by the watches that started there).
    pub snapshots: usize,
    /// Their size as JSON.
    pub snapshot_bytes: usize,
}

/// Configures and starts a [`TestServer`].
#[derive(Debug, Clone)]
#[must_use]
pub struct TestServerBuilder {
    replicas: usize,
    tls: bool,
    token: Option<String>,
    history: usize,
    base_port: u16,
    admin: bool,
    admin_port: u16,
    bookmark_interval: Duration,
    openapi_specs: Option<std::path::PathBuf>,
    controllers: bool,
    container_runtime: bool,
    bounds: bounds::Bounds,
}

impl Default for TestServerBuilder {
    fn default() -> Self {
        Self {
            replicas: 1,
            tls: false,
            token: None,
            history: 1000,
            base_port: 0,
            admin: false,
            admin_port: 0,
            bookmark_interval: Duration::from_secs(10),
            openapi_specs: None,
            controllers: false,
            container_runtime: false,
            bounds: bounds::Bounds::default(),
        }
    }
}

impl TestServerBuilder {
    /// Number of replicas (listeners sharing the store); at least 1.
    pub fn replicas(mut self, n: usize) -> Self {
        self.replicas = n.max(1);
        self
    }

    /// Serve HTTPS with a generated CA (see [`TestServer::ca_pem`]).
    pub fn tls(mut self, on: bool) -> Self {
        self.tls = on;
        self
    }

    /// Require `Authorization: Bearer <token>` (401 otherwise).
    pub fn token(mut self, token: Option<String>) -> Self {
        self.token = token;
        self
    }

    /// How many events the watch history keeps; older resourceVersions
    /// get `410 Expired`.
    pub fn history(mut self, events: usize) -> Self {
        self.history = events.max(1);
        self
    }

    /// Replica `i` listens on `port + i`; 0 (the default) lets the OS pick.
    pub fn base_port(mut self, port: u16) -> Self {
        self.base_port = port;
        self
    }

    /// Also start the admin endpoint (on `127.0.0.1:port`, 0 for any; see
    /// [`TestServer::admin_url`]). On loopback, over TLS with the API's
    /// certificate when [`tls`](Self::tls) is on (it hands out the token),
    /// behind the same bearer token as the API when [`token`](Self::token)
    /// is set (401 otherwise; `GET /healthz` is open):
    ///
    /// | request | effect |
    /// |---|---|
    /// | `GET /replicas` | every replica: index, url, mode, latencyMs, pending faults, requests served |
    /// | `POST /replicas/{i}/down` | close the listener, drop its connections |
    /// | `POST /replicas/{i}/up` | reopen the same port, end a hang |
    /// | `POST /replicas/{i}/hang` | accept, never answer |
    /// | `POST /replicas/{i}/latency?ms=N` | delay every request |
    /// | `POST /replicas/{i}/fail?count=K&code=C&retryAfter=S` | answer C (default 503) for the next K (default 1) requests |
    /// | `POST /replicas/{i}/cut-watches` | cut open watches mid-line |
    /// | `POST /replicas/{i}/malformed?count=K` | truncated JSON for the next K requests |
    /// | `POST /replicas/{i}/reset` | up, no latency, nothing pending |
    /// | `GET /kubeconfig` | the kubeconfig YAML |
    ///
    /// Every `POST` answers the replica's state as JSON.
    pub fn admin(mut self, on: bool, port: u16) -> Self {
        self.admin = on;
        self.admin_port = port;
        self
    }

    /// How often watches with `allowWatchBookmarks` get a BOOKMARK.
    pub fn bookmark_interval(mut self, every: Duration) -> Self {
        self.bookmark_interval = every.max(Duration::from_millis(10));
        self
    }

    /// Serve `/openapi/v2` and `/openapi/v3` from the Kubernetes OpenAPI
    /// specs in `dir` (a `kubernetes/<version>` directory as upstream
    /// publishes it: `swagger.json`, `openapi-v3/api/v1.json`,
    /// `openapi-v3/apis/<group>/<version>.json`), read once at start, plus
    /// documents built from each CRD's schema. Without it the built-in
    /// group-versions' documents are built from the schemas compiled into
    /// kubeset-api (enough for `kubectl explain`).
    pub fn openapi_specs(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.openapi_specs = Some(dir.into());
        self
    }

    /// Run controllers-lite (see the crate README): Deployments make
    /// ReplicaSets and Pods, Pods turn `Running` and ready, Jobs complete,
    /// objects whose owners are gone are garbage-collected — enough for
    /// `kubectl rollout status` and `kubectl wait`. Off by default.
    pub fn controllers(mut self, on: bool) -> Self {
        self.controllers = on;
        self
    }

    /// Serve `pods/exec`, `pods/attach` and `pods/portforward` over
    /// WebSocket (`v5.channel.k8s.io`, `v4.channel.k8s.io`) with a
    /// simulated, sandboxed runtime: a fixed set of built-in commands
    /// (`echo`, `cat`, `env`, `sh -c 'exit N'`, `sleep`, `tar` for
    /// `kubectl cp`, …) over in-memory files, and a TCP echo or an HTTP
    /// hello on each declared container port. No host process ever runs.
    /// A pod needs `spec.nodeName` (as on kube-apiserver). Off by default:
    /// the subresources then answer 405.
    pub fn container_runtime(mut self, on: bool) -> Self {
        self.container_runtime = on;
        self
    }

    /// How long a client may take for the TLS handshake after connecting
    /// (default 32 s, as kube-apiserver: Go bounds the handshake by its
    /// `ReadHeaderTimeout`); past it the connection is closed.
    pub fn handshake_timeout(mut self, d: Duration) -> Self {
        self.bounds.handshake = d;
        self
    }

    /// How long a connection's first request head may take from its
    /// first byte (default 32 s, kube-apiserver's `ReadHeaderTimeout`);
    /// past it the connection is closed without an answer. (A connection
    /// that sends nothing is closed after [`idle_timeout`](Self::idle_timeout).)
    pub fn header_timeout(mut self, d: Duration) -> Self {
        self.bounds.header = d;
        self
    }

    /// How long a new connection may wait (after the TLS handshake) for
    /// its first request's first byte, and a kept-alive HTTP/1.1
    /// connection after an answer for the next request's head (default
    /// 90 s, kube-apiserver's `IdleTimeout`, which clients match); past it
    /// the connection is closed.
    pub fn idle_timeout(mut self, d: Duration) -> Self {
        self.bounds.idle = d;
        self
    }

    /// How long a client may take to send a request body (default 60 s,
    /// kube-apiserver's `--request-timeout`): past it the request gets
    /// `504 Timeout` ("request did not complete within requested
    /// timeout") and the connection is closed.
    pub fn body_timeout(mut self, d: Duration) -> Self {
        self.bounds.body = d;
        self
    }

    /// Connections open at once over every replica and the admin endpoint
    /// (default 4096, at least 1); one more is accepted and closed at once.
    pub fn max_connections(mut self, n: usize) -> Self {
        self.bounds.max_connections = n.max(1);
        self
    }

    /// HTTP/2 streams a connection may have open at once (default 100, as
    /// kube-apiserver; at least 1): the `SETTINGS_MAX_CONCURRENT_STREAMS`
    /// the server announces, past which a stream is refused.
    pub fn http2_max_streams(mut self, n: u32) -> Self {
        self.bounds.h2_max_streams = n.max(1);
        self
    }

    /// Read-only requests (`GET`, `HEAD`) served at once over every
    /// replica (default 400, kube-apiserver's `--max-requests-inflight`;
    /// at least 1). One more is answered `429 Too Many Requests` with
    /// `Retry-After: 1`; watches, logs, exec, attach, port-forward and
    /// proxy are not counted.
    pub fn max_requests_inflight(mut self, n: usize) -> Self {
        self.bounds.max_read_only_inflight = n.max(1);
        self
    }

    /// The same for every other method (default 200, kube-apiserver's
    /// `--max-mutating-requests-inflight`; at least 1).
    pub fn max_mutating_requests_inflight(mut self, n: usize) -> Self {
        self.bounds.max_mutating_inflight = n.max(1);
        self
    }

    /// Bytes a watch may have queued ahead of its connection (default
    /// 64 KiB; a larger event is sent a frame at a time). With
    /// [`slow_watcher_timeout`](Self::slow_watcher_timeout) this bounds a
    /// watch's memory.
    pub fn watch_queue_bytes(mut self, n: usize) -> Self {
        self.bounds.watch_queue_bytes = n.max(1);
        self
    }

    /// How long a watch whose queue is full waits for its client to read
    /// before the server ends it (default 10 s). The stream then ends
    /// without an ERROR event, as kube-apiserver's watch cache closes a
    /// watcher that does not keep up; the client watches again from the
    /// last resourceVersion it saw. A client that reads loses nothing.
    pub fn slow_watcher_timeout(mut self, d: Duration) -> Self {
        self.bounds.slow_watcher = d;
        self
    }

    /// Binds every replica (and the admin endpoint) and starts serving.
    pub async fn start(self) -> Result<TestServer, Error> {
        let tls = if self.tls {
            Some(tls::generate()?)
        } else {
            None
        };
        let store = Arc::new(Store::new(self.history));
        let openapi = match &self.openapi_specs {
            Some(dir) => {
                Some(Arc::new(openapi::load(dir).map_err(|(path, source)| {
                    Error::ReadSpecs { path, source }
                })?))
            }
            None => None,
        };
        let root = CancellationToken::new();
        let conns = Arc::new(conns::Connections::new(self.bounds));
        let watches: Arc<fanout::Watches> = Arc::default();
        let shared = Arc::new(Shared {
            conns: conns.clone(),
            watches: watches.clone(),
            runtime: self
                .container_runtime
                .then(|| Arc::new(stream::Runtime::new(root.child_token()))),
            store: store.clone(),
            token: self.token.clone(),
            bookmark_interval: self.bookmark_interval,
            openapi,
        });
        let mut replicas = Vec::with_capacity(self.replicas);
        for i in 0..self.replicas {
            let port = if self.base_port == 0 {
                0
            } else {
                u16::try_from(usize::from(self.base_port) + i).unwrap_or(0)
            };
            let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
            let r = Replica::start(
                i,
                addr,
                shared.clone(),
                tls.as_ref().map(|t| t.acceptor.clone()),
                root.clone(),
            )
            .await
            .map_err(|source| Error::Bind {
                replica: i,
                addr,
                source,
            })?;
            replicas.push(r);
        }
        let acceptor = tls.as_ref().map(|t| t.acceptor.clone());
        let inner = Arc::new(Inner {
            store,
            replicas,
            ca_pem: tls.map(|t| t.ca_pem),
            token: self.token,
            root,
            admin: std::sync::Mutex::new(None),
            watches,
            conns: conns.clone(),
        });
        let server = TestServer { inner };
        server.seed_system_objects();
        if self.controllers {
            tokio::spawn(controllers::run(
                server.inner.store.clone(),
                server.inner.root.child_token(),
            ));
        }
        if self.admin {
            let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.admin_port));
            let listener = server::bind(addr)
                .await
                .map_err(|source| Error::BindAdmin { addr, source })?;
            let local = listener
                .local_addr()
                .map_err(|source| Error::BindAdmin { addr, source })?;
            let st = Arc::new(admin::AdminState {
                faults: server.all_faults(),
                kubeconfig: server.kubeconfig_yaml(),
                token: server.inner.token.clone(),
            });
            let task = tokio::spawn(admin::serve(
                listener,
                st,
                acceptor,
                conns,
                server.inner.root.child_token(),
            ));
            if let Ok(mut a) = server.inner.admin.lock() {
                *a = Some((local, task));
            }
        }
        Ok(server)
    }
}

struct Inner {
    store: Arc<Store>,
    replicas: Vec<Arc<Replica>>,
    ca_pem: Option<String>,
    token: Option<String>,
    root: CancellationToken,
    admin: std::sync::Mutex<Option<(SocketAddr, JoinHandle<()>)>>,
    watches: Arc<fanout::Watches>,
    conns: Arc<conns::Connections>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.root.cancel();
    }
}

/// A running embedded API server. Dropping it stops every listener.
pub struct TestServer {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for TestServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestServer")
            .field("urls", &self.urls())
            .finish_non_exhaustive()
    }
}

impl TestServer {
    /// A builder with one plain-HTTP replica, no token, 1000 events of history.
    pub fn builder() -> TestServerBuilder {
        TestServerBuilder::default()
    }

    /// Starts a server with the defaults of [`builder`](Self::builder).
    pub async fn start() -> Result<Self, Error> {
        Self::builder().start().await
    }

    /// Replica `i`, if it exists.
    pub fn replica(&self, i: usize) -> Option<ReplicaHandle> {
        self.inner
            .replicas
            .get(i)
            .map(|r| ReplicaHandle::new(r.clone()))
    }

    /// Every replica.
    pub fn replicas(&self) -> Vec<ReplicaHandle> {
        self.inner
            .replicas
            .iter()
            .map(|r| ReplicaHandle::new(r.clone()))
            .collect()
    }

    /// The fault controls of replica `i`.
    pub fn faults(&self, i: usize) -> Option<Faults> {
        self.replica(i).map(|r| r.faults())
    }

    fn all_faults(&self) -> Vec<Faults> {
        self.replicas().iter().map(ReplicaHandle::faults).collect()
    }

    /// URL of replica 0.
    pub fn url(&self) -> String {
        self.urls().into_iter().next().unwrap_or_default()
    }

    /// URLs of every replica, in order.
    pub fn urls(&self) -> Vec<String> {
        self.inner.replicas.iter().map(|r| r.url()).collect()
    }

    /// `http://127.0.0.1:<port>` of the admin endpoint, if started
    /// (`https://` with TLS: it is served with the API's certificate).
    pub fn admin_url(&self) -> Option<String> {
        let a = self.inner.admin.lock().ok()?;
        let scheme = if self.inner.ca_pem.is_some() {
            "https"
        } else {
            "http"
        };
        a.as_ref().map(|(addr, _)| format!("{scheme}://{addr}"))
    }

    /// PEM of the CA that signed the serving certificate (TLS only).
    pub fn ca_pem(&self) -> Option<&str> {
        self.inner.ca_pem.as_deref()
    }

    /// The bearer token clients must send, if any.
    pub fn token(&self) -> Option<&str> {
        self.inner.token.as_deref()
    }

    /// A kubeconfig: clusters and contexts `kubeset-<i>` per replica, the
    /// current context `kubeset` on replica 0, CA data with TLS, the token
    /// when set.
    pub fn kubeconfig_yaml(&self) -> String {
        kubeconfig::render(&kubeconfig::KubeconfigInput {
            urls: &self.urls(),
            ca_pem: self.ca_pem(),
            token: self.token(),
        })
    }

    /// Writes [`kubeconfig_yaml`](Self::kubeconfig_yaml) to `path`, created
    /// with mode 0600 on Unix (it may hold the token), as kubectl writes
    /// its own; an existing file is truncated and set to 0600.
    pub fn write_kubeconfig(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path.as_ref();
        auth::write_private(path, self.kubeconfig_yaml().as_bytes()).map_err(|source| {
            Error::WriteKubeconfig {
                path: path.to_owned(),
                source,
            }
        })
    }

    /// Creates any object from its JSON (`apiVersion`, `kind`,
    /// `metadata.name`, and `metadata.namespace` for namespaced kinds), as a
    /// POST would; returns the stored object.
    pub fn create(&self, obj: Value) -> Result<Value, Error> {
        self.create_with(obj, crate::admission::Options::default())
    }

    fn create_with(
        &self,
        obj: Value,
        admission: crate::admission::Options,
    ) -> Result<Value, Error> {
        let api_version = obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
        let res = self.resource_for(api_version, kind)?;
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("default")
            .to_owned();
        let ctx = WriteCtx {
            manager: "kubeset-testserver".into(),
            dry_run: false,
            applied: false,
            admission,
        };
        Ok(self.inner.store.create(&res, &ns, obj, &ctx)?)
    }

    /// Reads an object straight from the store (no faults, no auth);
    /// `namespace` is ignored for cluster-scoped kinds.
    pub fn get(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, Error> {
        let res = self.resource_for(api_version, kind)?;
        let ns = if res.namespaced {
            namespace.unwrap_or("default")
        } else {
            ""
        };
        Ok(self.inner.store.get(&res, ns, name)?)
    }

    fn resource_for(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Result<Arc<resources::Resource>, Error> {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        self.inner
            .store
            .resources()
            .into_iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
            .ok_or_else(|| Error::UnknownKind {
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
            })
    }

    /// Registers a CustomResourceDefinition (`apiextensions.k8s.io/v1`
    /// JSON); its resources are served and discoverable at once. CRDs
    /// created through the API are served the same way.
    ///
    /// It is checked as kube-apiserver checks a CRD created through the
    /// API (its name, one storage version, a structural schema on every
    /// version: an `Err` otherwise), except that the schemas are not
    /// compiled here: each version's schema and its CEL rules compile on
    /// the first write or read of that version's objects, so that a server
    /// started with many CRDs does not wait for them. A schema that does
    /// not compile (a CEL rule that does not parse or is too expensive, an
    /// invalid `pattern`) makes every write of that version's objects
    /// answer `500 InternalError` naming the CRD and its problems. A CRD
    /// created through the API with such a schema is refused at creation
    /// (`422 Invalid`), as kube-apiserver refuses it.
    pub fn register_crd(&self, crd: Value) -> Result<Value, Error> {
        let mut crd = crd;
        if !crd.is_object() {
            return Err(Error::Rejected {
                code: 400,
                reason: "BadRequest",
                message: "a CustomResourceDefinition must be a JSON object".into(),
            });
        }
        if crd.get("apiVersion").is_none() {
            crd["apiVersion"] = json!("apiextensions.k8s.io/v1");
        }
        if crd.get("kind").is_none() {
            crd["kind"] = json!("CustomResourceDefinition");
        }
        let admission = crate::admission::Options {
            defer_crd_schemas: true,
            ..crate::admission::Options::default()
        };
        self.create_with(crd, admission)
    }

    /// Watch streams open now over every replica: a watch is counted from
    /// its request until its task has ended and freed what it held (its
    /// client went away, it timed out, it was cut, or it was ended as a
    /// slow watcher).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kubeset_testserver::Error> {
    /// let server = kubeset_testserver::TestServer::start().await?;
    /// assert_eq!(server.open_watches(), 0);
    /// # Ok(()) }
    /// ```
    pub fn open_watches(&self) -> usize {
        self.inner.watches.memory().open
    }

    /// What the watches hold now, by the server's own accounting: how
    /// many are open, the bytes queued ahead of their connections, and
    /// the shared initial states they send from. Every number is back to
    /// 0 once the watches have ended.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kubeset_testserver::Error> {
    /// let server = kubeset_testserver::TestServer::start().await?;
    /// let m = server.watch_memory();
    /// assert_eq!((m.open, m.queued_bytes, m.snapshots), (0, 0, 0));
    /// # Ok(()) }
    /// ```
    pub fn watch_memory(&self) -> WatchMemory {
        self.inner.watches.memory()
    }

    /// Connections open now over every replica and the admin endpoint
    /// (at most [`TestServerBuilder::max_connections`]).
    pub fn open_connections(&self) -> usize {
        self.inner.conns.open()
    }

    /// How many client writes went through the webhook passes (a write
    /// for which a stored admission webhook's `rules` and
    /// `namespaceSelector` match; each such write is counted once,
    /// however many passes it takes). A write no stored webhook may match
    /// is answered as without webhooks and not counted.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kubeset_testserver::Error> {
    /// let server = kubeset_testserver::TestServer::start().await?;
    /// assert_eq!(server.webhook_writes(), 0);
    /// # Ok(()) }
    /// ```
    pub fn webhook_writes(&self) -> u64 {
        self.inner.store.webhook_writes()
    }

    /// The current global resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.inner.store.current_rv()
    }

    /// Stops every listener and connection.
    pub async fn shutdown(self) {
        for r in &self.inner.replicas {
            r.down().await;
        }
        let admin = self.inner.admin.lock().ok().and_then(|mut a| a.take());
        self.inner.root.cancel();
        if let Some((_, task)) = admin {
            let _ = task.await;
        }
    }

    /// System namespaces, and the `kubernetes` Service with Endpoints and
    /// one EndpointSlice per replica.
    fn seed_system_objects(&self) {
        let store = &self.inner.store;
        for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            store.put_system("", "v1", "namespaces", json!({
                "apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": ns, "uid": util::uid(), "creationTimestamp": util::now_rfc3339(),
                             "labels": {"kubernetes.io/metadata.name": ns}},
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            }));
        }
        let ports: Vec<u16> = self.inner.replicas.iter().map(|r| r.addr.port()).collect();
        let first = ports.first().copied().unwrap_or(443);
        let now = util::now_rfc3339();
        store.put_system("", "v1", "services", json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "kubernetes", "namespace": "default", "uid": util::uid(), "creationTimestamp": now,
                         "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"type": "ClusterIP", "clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"],
                     "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": first}],
                     "sessionAffinity": "None", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack"},
            "status": {"loadBalancer": {}},
        }));
        let subsets: Vec<Value> = ports
            .iter()
            .map(|p| json!({"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": p, "protocol": "TCP"}]}))
            .collect();
        store.put_system("", "v1", "endpoints", json!({
            "apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": "kubernetes", "namespace": "default", "uid": util::uid(), "creationTimestamp": now,
                         "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
            "subsets": subsets,
        }));
        for (i, p) in ports.iter().enumerate() {
            let name = if i == 0 {
                "kubernetes".to_owned()
            } else {
                format!("kubernetes-{i}")
            };
            store.put_system("discovery.k8s.io", "v1", "endpointslices", json!({
                "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": name, "namespace": "default", "uid": util::uid(), "creationTimestamp": now,
                             "labels": {"kubernetes.io/service-name": "kubernetes", "endpointslice.kubernetes.io/managed-by": "kubeset-testserver"}},
                "addressType": "IPv4",
                "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}],
                "ports": [{"name": "https", "port": p, "protocol": "TCP"}],
            }));
        }
    }
}
