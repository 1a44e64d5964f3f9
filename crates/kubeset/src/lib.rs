//! kubeset: a Kubernetes client for Rust.
//!
//! - [`Client`]: one connection pool to an API server (or several, with
//!   failover), built from a [`Config`] (kubeconfig, in-cluster).
//! - [`Api<K>`]: the typed verbs for any kind `K` implementing [`Resource`]
//!   — the generated models in [`api`], [`apimachinery`],
//!   [`apiextensions_apiserver`], [`kube_aggregator`], or your own
//!   [`#[derive(Resource)]`](#deriveresource) structs. Scope is checked by
//!   the type system: [`Api::namespaced`] only compiles for namespaced
//!   kinds.
//! - Custom resources: `#[derive(CustomResource, JsonSchema)]` on a spec
//!   struct (kube-rs's `#[kube(...)]` keys) generates the kind, its
//!   structural schema (`schema`) and `CustomResourceExt::crd`; several
//!   versions merge with `merge_crds` (these three with the
//!   `apiextensions-v1` feature, on by default); `runtime::wait` waits for
//!   `Established` (example `crd_print`; attribute tables and the shapes
//!   checked against a real API server in the `kubeset-derive` README).
//! - [`Clientset`]: client-go's typed clientset (`cs.apps_v1().deployments("ns")`),
//!   with subresources as typed methods ([`clientset`]).
//! - [`dynamic`]: the same verbs on untyped objects addressed by
//!   group/version/resource, and [`discovery`] of what a server serves.
//! - [`params`]: the options of each verb (`ListParams`, `PatchParams`, …),
//!   [`Patch`] the patch flavours, [`Error`] / [`ApiError`] the errors.
//! - [`apply`]: server-side apply you can read back: `extract` the fields a
//!   field manager owns, `Api::apply`/`apply_status`/`apply_scale` with
//!   [`ApplyParams`](params::ApplyParams), conflicts typed by
//!   [`Error::apply_conflicts`].
//! - [`rest`]: the REST layer (request builder, retries, rate limiting,
//!   watch streams, failover, kubeconfig in [`rest::config`]).
//! - `runtime` (feature `runtime`): watcher, cached store with indexers,
//!   work-queue controller and leader election (the `kubeset-runtime`
//!   crate).
//!
//! ```no_run
//! use kubeset::{Api, Client, api::core::v1::ConfigMap, params::ListParams};
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::try_default().await?;
//! let cms: Api<ConfigMap> = Api::namespaced(client, "default");
//! for cm in cms.list(&ListParams::default().labels("app=web")).await?.items {
//!     println!("{:?}", cm.metadata.name);
//! }
//! # Ok(()) }
//! ```
//!
//! Errors are typed: `err.is_not_found()`, `err.is_conflict()`,
//! `err.is_already_exists()`, and `err.api_error()` gives the server's
//! `Status` reason, code and message:
//!
//! ```no_run
//! # use kubeset::{Api, api::core::v1::ConfigMap};
//! # async fn run(cms: Api<ConfigMap>) -> Result<(), kubeset::Error> {
//! match cms.get("maybe").await {
//!     Ok(cm) => println!("found {:?}", cm.metadata.name),
//!     Err(e) if e.is_not_found() => println!("not there"),
//!     Err(e) => return Err(e),
//! }
//! // Or: `get_opt` answers `None` for a 404.
//! let _maybe: Option<ConfigMap> = cms.get_opt("maybe").await?;
//! # Ok(()) }
//! ```
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `api-default` | yes | the group-versions `core-v1`, `apps-v1`, `batch-v1`, `coordination-v1`, `discovery-v1`, `rbac-v1`, `networking-v1`, `policy-v1`, `apiextensions-v1` |
//! | `core-v1`, `apps-v1`, … | some | one feature per API group-version: its models in [`api`] and its [`Clientset`] accessors |
//! | `all` | no | every group-version the Kubernetes specs have |
//! | `http2` | yes | HTTP/2 to the API server (ALPN `h2`, keepalive pings), as client-go; without it HTTP/1.1 only, as kube-rs by default, and no `h2` crate in the build |
//! | `runtime` | no | `kubeset::runtime`, as kube-rs's `runtime`: watcher, store, controller, finalizer, the Event recorder (`events`) and the typed wait conditions (`conditions`) |
//! | `runtime-core` | no | `kubeset::runtime` without the recorder and the typed conditions: no group-version of its own |
//! | `events` | with `runtime` | `kubeset::runtime::events`: the Event recorder (events.k8s.io/v1, core/v1 when the server has no events.k8s.io) |
//! | `conditions` | with `runtime` | `kubeset::runtime::wait::conditions`: typed wait conditions (`is_crd_established`, `is_pod_running`, `is_job_completed`, …) and the models they read |
//! | `leader` | no | `kubeset::runtime::leader`: leader election on a coordination.k8s.io/v1 Lease |
//! | `shard` | no | `kubeset::runtime::shard`: a controller sharded across replicas on Leases (with `leader`) |
//! | `metrics` | no | `kubeset::runtime::metrics`: controller-runtime's controller and work-queue metrics (prometheus-client), served by `metrics::serve` |
//! | `webhook` | no | `kubeset::runtime::webhook`: validating and mutating admission webhooks typed per kind ([`core::admission`]'s review types) and CRD conversion webhooks through a hub version ([`core::conversion`]'s), served over TLS from certificate files reloaded when they change, from a `kubernetes.io/tls` Secret watched through the API, or by a self-managed `CertRotator` (CA and leaf renewed before expiry, `caBundle` re-registered on the webhook configurations and a CRD's conversion) |
//! | `protobuf` | no | protobuf on the wire for built-in kinds, opted into per client: [`Config::with_wire_format`] (client-go's `ContentConfig`) or [`RestConfig::with_wire_format`](rest::RestConfig::with_wire_format); custom resources stay JSON |
//! | `protobuf-json` | no | with `protobuf`: protobuf ↔ JSON of any built-in kind by `apiVersion`/`kind` (`protobuf::dynamic::{to_json, from_json}`), for code that holds objects as JSON |
//! | `ws` | no | exec, attach and port-forward over WebSocket (`kubeset::ws`, `Api::exec`) |
//! | `apply` | no | the generated apply configurations of the built-in models (`api::apps::v1::DeploymentApply`, `ContainerApply::new("app")`): typed input for `Api::apply` and `apply::extract`; apimachinery's (`ObjectMetaApply`) are always there. It about doubles kubeset-api's build |
//! | `schemas` | no | `JsonSchema` for every generated model (k8s-openapi's `schemars`), so a `#[derive(CustomResource)]` spec can embed `PodTemplateSpec` |
//! | `testing` | no | `kubeset::testing`: the embedded API server with a client in one call, and waits that name what they waited for; for `[dev-dependencies]` |
//! | `jiff` | yes | `Time`/`MicroTime` ⇄ `jiff::Timestamp` (`From` both ways), `kubeset::jiff`, jiff's `serde` (as with k8s-openapi) |
//!
//! A controller that needs few kinds builds fastest with
//! `default-features = false, features = ["core-v1", "runtime-core"]`.
//!
//! ## Features of kube-rs and k8s-openapi
//!
//! A `kube` or `k8s-openapi` line of `Cargo.toml` renamed to `kubeset`
//! keeps its feature list: every feature name of kube-rs 5 and of
//! k8s-openapi is accepted.
//!
//! | feature | here |
//! |---|---|
//! | `client`, `config`, `rustls-tls`, `ring`, `unstable-client` | always built in: [`Client`], [`Config`], rustls with ring; `client` also turns on the default group-versions (`api-default`), so a line with `default-features = false` still has the models k8s-openapi gave it |
//! | `derive` | `#[derive(CustomResource)]` is always built in; `derive` lets its spec and status derive schemars' `JsonSchema`, 1 (kube-rs 2 on) or 0.8 (kube-rs 1 and older), as in kube-rs (the schema made structural: `Option` as `nullable`, unit enums as `enum`, subschemas inlined) |
//! | `runtime`, `ws` | as kube-rs's: `kubeset::runtime` and `kubeset::ws` |
//! | `unstable-runtime` | `runtime` (kubeset's runtime includes what kube-rs keeps unstable: predicates, `reconcile_on`, shared caches) |
//! | `jsonpatch` | always: [`Patch::Json`] takes any serializable body, `json_patch::Patch` included |
//! | `http-proxy` | always: the kubeconfig's `proxy-url` (http and https proxies) |
//! | `schemars` (k8s-openapi) | `schemas`: `JsonSchema` for every model |
//! | `gzip` | as kube-rs's: `Accept-Encoding: gzip`, compressed responses inflated as they are read (the body cap counts inflated bytes) |
//! | `socks5` | as kube-rs's: a kubeconfig `proxy-url` of `socks5://` or `socks5h://` |
//! | `proxy` | accepted, nothing to turn on: the kubeconfig's `proxy-url` is always honoured for requests (http and https; socks5 with `socks5`); exec, attach and port-forward streams do not go through a proxy |
//! | `oidc` | as kube-rs's: the kubeconfig's `auth-provider: oidc`; the `id-token` is sent, refreshed with the `refresh-token` at the issuer's token endpoint (from `/.well-known/openid-configuration`, `idp-certificate-authority(-data)` trusted) when its `exp` is past or after a 401; refreshed tokens stay in memory, as kube-rs (client-go writes them back to the file) |
//! | `oauth` | as kube-rs's: Google application default credentials for the kubeconfig's `auth-provider: gcp` (`GOOGLE_APPLICATION_CREDENTIALS` or gcloud's `application_default_credentials.json`: a service account's RS256 JWT grant, an authorized user's refresh token; not the GCE metadata server). `auth-provider: gcp` with a cached `access-token` or a `cmd-path` works without the feature |
//! | `aws-lc-rs`, `openssl-tls`, `webpki-roots` | accepted, not yet implemented: TLS is rustls with ring and the kubeconfig's CA |
//! | `admission` | always: [`core::admission`] (kube-rs's `kube::core::admission` types); the typed webhook server is `runtime::webhook` (feature `webhook`) |
//! | `kubelet-debug`, `cel`, `hyper-util-tracing` | accepted, not yet implemented: no kubelet debug API, no CEL validation, no hyper tracing |
//! | `v1_33`, `v1_34`, `v1_35`, `v1_36`, `v1_37`, `earliest`, `latest` (k8s-openapi) | `earliest` is `v1_33`, `latest` is `v1_37`: the Kubernetes version of the models, and the default group-versions (`api-default`): a kind, field, clientset method or discovery row the version lacks is absent ([`KUBERNETES_VERSION`] names the selected one); none is the newest, v1.37; two are a compile error naming both, as k8s-openapi |
//!
//! # Porting from kube-rs and k8s-openapi
//!
//! Rename `kube::` and `k8s_openapi::` to `kubeset::`: kube-rs's module
//! paths resolve here ([`api`] holds `kube::api`'s items beside the model
//! groups, [`core`], [`config`], [`client`], [`error`], `runtime`), the
//! models are shaped as k8s-openapi's (a field is boxed only where a type
//! holds itself, so `spec: Some(PodSpec { .. })` compiles as written), and
//! one [`Resource`] trait has k8s-openapi's constants (`Pod::KIND`) and
//! kube-rs's methods (`Pod::kind(&())`, `pod.object_ref(&())`).
//!
//! ```no_run
//! use kubeset::api::core::v1::ConfigMap;
//! use kubeset::api::{Api, ListParams, ResourceExt};
//! use kubeset::config::{Config, KubeConfigOptions};
//! use kubeset::Client;
//!
//! # async fn run() -> kubeset::Result<()> {
//! let options = KubeConfigOptions { context: Some("kind-dev".into()), ..Default::default() };
//! let client = Client::try_from(Config::from_kubeconfig(&options).await?)?;
//! let cms: Api<ConfigMap> = Api::default_namespaced(client);
//! for cm in cms.list(&ListParams::default().timeout(10)).await? {
//!     println!("{}", cm.name_any());
//! }
//! # Ok(()) }
//! ```
//!
//! With `protobuf`, a client speaks protobuf to the API server for
//! built-in kinds when its [`Config`] asks for it (the default is JSON, as
//! client-go's and kube-rs's):
//!
//! ```no_run
//! use kubeset::{Client, Config, rest::content::WireFormat};
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = Config::infer().await?.with_wire_format(WireFormat::Protobuf);
//! let client = Client::try_from(config)?;
//! assert_eq!(client.rest().wire_format(), WireFormat::Protobuf);
//! # Ok(()) }
//! ```
//!
//! # `#[derive(Resource)]`
//!
//! Makes your own struct a kind that [`Api<K>`] serves (a custom resource,
//! or a slimmer view of a built-in kind). Keys of `#[resource(...)]`:
//!
//! | key | required | meaning |
//! |---|---|---|
//! | `group = "example.com"` | yes | the API group; `""` for the core group |
//! | `version = "v1"` | yes | the API version |
//! | `kind = "Widget"` | yes | the kind, as in `kind:` of a manifest |
//! | `plural = "widgets"` | yes | the lowercase plural of the URLs (`/apis/example.com/v1/namespaces/x/widgets`) |
//! | `namespaced` or `cluster` | exactly one | the scope: [`Api::namespaced`] compiles only for `namespaced`, [`Api::all`] for both |
//! | `crate = "path"` | no | the crate that exports `Resource`, the scope markers and `apimachinery` (default `::kubeset`; `kubeset_client` inside this workspace) |
//!
//! The struct needs a field `metadata` of type
//! [`ObjectMeta`](apimachinery::pkg::apis::meta::v1::ObjectMeta); with
//! serde's derives it goes over the wire as is. `apiVersion` and `kind` are
//! filled in from the keys ([`Resource::API_VERSION`], [`Resource::KIND`]).
//! Bad keys are compile errors naming the key.
//!
//! ```
//! use kubeset::apimachinery::pkg::apis::meta::v1::ObjectMeta;
//! use kubeset::{Api, Client, Resource};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, Clone, Default, Serialize, Deserialize, Resource)]
//! #[resource(group = "example.com", version = "v1", kind = "Widget", plural = "widgets", namespaced)]
//! struct Widget {
//!     metadata: ObjectMeta,
//!     spec: WidgetSpec,
//! }
//!
//! #[derive(Debug, Clone, Default, Serialize, Deserialize)]
//! struct WidgetSpec {
//!     size: u32,
//! }
//!
//! assert_eq!(Widget::API_VERSION, "example.com/v1");
//! assert_eq!(Widget::PLURAL, "widgets");
//! # fn typed(client: Client) {
//! let widgets: Api<Widget> = Api::namespaced(client, "default");
//! # let _ = widgets; }
//! ```
//!
//! The CRD itself is an ordinary object
//! (`apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition`,
//! feature `apiextensions-v1`);
//! `crates/kubeset/examples/configmap_owner.rs` registers one and runs a
//! controller for it.
//!
//! # Where things come from
//!
//! The crate only re-exports: the client layer lives in `kubeset-client`,
//! the models in `kubeset-api`, the REST layer in `kubeset-rest` (also as
//! [`rest`]), the runtime in `kubeset-runtime`. Depend on `kubeset` alone;
//! the others are its implementation and follow its version.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use kubeset_client::*;

#[cfg(feature = "runtime-core")]
#[cfg_attr(docsrs, doc(cfg(feature = "runtime-core")))]
#[doc(inline)]
pub use kubeset_runtime as runtime;

#[cfg(feature = "jiff")]
#[cfg_attr(docsrs, doc(cfg(feature = "jiff")))]
#[doc(no_inline)]
pub use jiff;

#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

mod kube_paths;

pub use kube_paths::{Result, api, client, config, core, error};
/// kube-rs's `kube::Discovery` (here [`discovery::Discovery`]).
pub use kubeset_client::discovery::Discovery;

/// The README's Rust blocks, compiled by `cargo test --doc -p kubeset`
/// (blocks that need a server are `no_run`; `tests/readme.rs` runs the
/// Quick start against servers).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// `docs/testing.md`'s Rust blocks (the envtest and tower-mock ports), run
/// by `cargo test --doc -p kubeset --features testing,events`.
#[cfg(all(doctest, feature = "testing", feature = "events"))]
#[doc = include_str!("../../../docs/testing.md")]
pub struct TestingGuideDoctests;
