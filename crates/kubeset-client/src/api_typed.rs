//! [`Api<K>`]: every verb of the API server for one typed kind.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use bytes::Bytes;
use futures::{Stream, StreamExt as _, stream};
use kubeset_api::apimachinery::pkg::apis::meta::v1::Status;
use kubeset_api::{ClusterResourceScope, List, NamespaceResourceScope, Resource};
use kubeset_rest::{Error, Request, ResumableWatch, Verb, WatchStream};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Client;
use crate::params::{
    ApplyParams, DeleteParams, ListParams, PatchParams, PostParams, QueryParams, WatchParams,
};
use crate::patch::Patch;
use crate::url::{ResourceUrl, with_params};

/// The typed verbs for kind `K` in one namespace, or across all of them.
///
/// Scope is a type-level fact: [`Api::namespaced`] compiles only for
/// namespaced kinds and [`Api::cluster`] only for cluster-scoped ones;
/// [`Api::all`] works for both (every namespace, for namespaced kinds).
pub struct Api<K> {
    client: Client,
    /// What the clones share: worked out once, when the API is built.
    shared: Arc<Shared>,
    _kind: PhantomData<fn() -> K>,
}

struct Shared {
    url: ResourceUrl,
    /// `apiVersion` and `kind` written into bodies that lack them.
    api_version: String,
    kind: String,
}

impl<K> Clone for Api<K> {
    fn clone(&self) -> Self {
        Api {
            client: self.client.clone(),
            shared: self.shared.clone(),
            _kind: PhantomData,
        }
    }
}

impl<K> fmt::Debug for Api<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Api")
            .field("url", &self.shared.url)
            .finish_non_exhaustive()
    }
}

/// What a delete returned: the object (still there, e.g. waiting for
/// finalizers or a grace period) or the server's `Status` (gone).
#[derive(Debug, Clone, PartialEq)]
pub enum Deleted<T> {
    /// The object, now carrying `deletionTimestamp`.
    Pending(T),
    /// The object is gone.
    Gone(Box<Status>),
}

impl<K: Resource> Api<K> {
    fn with_namespace(client: Client, namespace: Option<&str>) -> Self {
        let url = ResourceUrl::new(client.rest(), K::GROUP, K::VERSION, K::PLURAL, namespace);
        Api::from_parts(client, url, K::API_VERSION.to_owned(), K::KIND.to_owned())
    }

    /// Every object of the kind: all namespaces for namespaced kinds (list
    /// and watch only make sense then), or the cluster-scoped collection.
    pub fn all(client: Client) -> Self {
        Self::with_namespace(client, None)
    }

    /// Objects of a namespaced kind in `namespace`. Scope is a type-level
    /// fact, as in kube-rs: a cluster-scoped kind does not compile here.
    ///
    /// ```
    /// # fn f(client: kubeset_client::Client) {
    /// use kubeset_client::{Api, api::core::v1::ConfigMap};
    /// let cms: Api<ConfigMap> = Api::namespaced(client, "kube-system");
    /// # }
    /// ```
    ///
    /// ```compile_fail
    /// # fn f(client: kubeset_client::Client) {
    /// use kubeset_client::{Api, api::core::v1::Namespace};
    /// // Namespaces are cluster-scoped: use `Api::cluster` or `Api::all`.
    /// let namespaces: Api<Namespace> = Api::namespaced(client, "default");
    /// # }
    /// ```
    pub fn namespaced(client: Client, namespace: &str) -> Self
    where
        K: Resource<Scope = NamespaceResourceScope>,
    {
        Self::with_namespace(client, Some(namespace))
    }

    /// Objects of a namespaced kind in the client's default namespace.
    pub fn default_namespaced(client: Client) -> Self
    where
        K: Resource<Scope = NamespaceResourceScope>,
    {
        let ns = client.default_namespace().to_owned();
        Self::with_namespace(client, Some(&ns))
    }

    /// Objects of a cluster-scoped kind; a namespaced kind does not
    /// compile here.
    ///
    /// ```
    /// # fn f(client: kubeset_client::Client) {
    /// use kubeset_client::{Api, api::core::v1::Namespace};
    /// let namespaces: Api<Namespace> = Api::cluster(client);
    /// # }
    /// ```
    ///
    /// ```compile_fail
    /// # fn f(client: kubeset_client::Client) {
    /// use kubeset_client::{Api, api::core::v1::ConfigMap};
    /// // ConfigMaps live in a namespace: `Api::namespaced` or `Api::all`.
    /// let cms: Api<ConfigMap> = Api::cluster(client);
    /// # }
    /// ```
    pub fn cluster(client: Client) -> Self
    where
        K: Resource<Scope = ClusterResourceScope>,
    {
        Self::with_namespace(client, None)
    }
}

impl<K> Api<K> {
    /// An API over objects addressed at run time (`K` is usually
    /// [`DynamicObject`](crate::dynamic::DynamicObject)).
    pub fn dynamic(
        client: Client,
        resource: &crate::dynamic::ApiResource,
        namespace: Option<&str>,
    ) -> Self {
        let url = ResourceUrl::new(
            client.rest(),
            &resource.group,
            &resource.version,
            &resource.plural,
            namespace.filter(|_| resource.namespaced),
        );
        Api::from_parts(client, url, resource.api_version(), resource.kind.clone())
    }

    /// kube-rs's `Api::namespaced_with(client, ns, &resource)`: the
    /// [`dynamic`](Self::dynamic) API in `namespace`.
    pub fn namespaced_with(
        client: Client,
        namespace: &str,
        resource: &crate::dynamic::ApiResource,
    ) -> Self {
        Self::dynamic(client, resource, Some(namespace))
    }

    /// kube-rs's `Api::default_namespaced_with`: the [`dynamic`](Self::dynamic)
    /// API in the client's default namespace.
    pub fn default_namespaced_with(client: Client, resource: &crate::dynamic::ApiResource) -> Self {
        let ns = client.default_namespace().to_owned();
        Self::dynamic(client, resource, Some(&ns))
    }

    /// kube-rs's `Api::all_with(client, &resource)`: the
    /// [`dynamic`](Self::dynamic) API over every namespace (or the
    /// cluster-scoped collection).
    pub fn all_with(client: Client, resource: &crate::dynamic::ApiResource) -> Self {
        Self::dynamic(client, resource, None)
    }

    fn from_parts(client: Client, url: ResourceUrl, api_version: String, kind: String) -> Self {
        Api {
            client,
            shared: Arc::new(Shared {
                url,
                api_version,
                kind,
            }),
            _kind: PhantomData,
        }
    }

    /// The client this API uses.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The namespace this API is bound to, if any.
    pub fn namespace(&self) -> Option<&str> {
        self.shared.url.namespace.as_deref()
    }

    /// A raw request on this kind's collection (`name = None`) or object,
    /// for calls the typed methods do not cover.
    pub fn request(&self, verb: Verb, name: Option<&str>) -> Request {
        self.shared.url.request(self.client.rest(), verb, name)
    }

    /// The `GET …?watch=true` request of [`Api::watch`] and
    /// [`Api::watch_resumable`], from `resource_version` (`""`: from the
    /// server's current state), not yet sent: the runtime's watcher opens
    /// its watches with it too, so there is one rule for a watch's query.
    ///
    /// ```
    /// use kubeset_client::{Api, api::core::v1::Pod, params::WatchParams};
    /// # let rest = kubeset_client::rest::RestClient::new(kubeset_client::rest::RestConfig::new("https://h:6443"))?;
    /// # let client = kubeset_client::Client::new(rest, "default");
    /// let pods: Api<Pod> = Api::namespaced(client, "default");
    /// let params = WatchParams::default().labels("app=web").timeout(60).bookmarks();
    /// let req = pods.watch_request(&params, "1234");
    /// assert_eq!(
    ///     req.path_and_query(),
    ///     "/api/v1/namespaces/default/pods?allowWatchBookmarks=true&labelSelector=app%3Dweb&resourceVersion=1234&timeoutSeconds=60&watch=true"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn watch_request(&self, params: &WatchParams, resource_version: &str) -> Request {
        let mut pairs = Vec::new();
        params.watch_pairs(resource_version, &mut pairs);
        let mut req = self.request(Verb::Get, None);
        for (k, v) in pairs {
            req = req.param(k, v);
        }
        req
    }

    /// Serializes `obj`, adding `apiVersion` and `kind` in front when it
    /// lacks them (user structs with `#[derive(Resource)]` need not carry
    /// them). Serialized once; only the top-level keys are scanned again.
    fn typed_body(&self, obj: &impl Serialize) -> Result<Vec<u8>, Error> {
        typed_body_as(obj, &self.shared.api_version, &self.shared.kind)
    }
}

/// The `apiVersion` of the `Scale` that every `scale` subresource serves.
const SCALE_API_VERSION: &str = "autoscaling/v1";

/// Serializes `obj`, adding `apiVersion` and `kind` in front when it
/// lacks them (see [`Api::typed_body`]).
fn typed_body_as(obj: &impl Serialize, api_version: &str, kind: &str) -> Result<Vec<u8>, Error> {
    let body = serde_json::to_vec(obj).map_err(|source| Error::SerializeBody { source })?;
    let Some(rest) = body.strip_prefix(b"{") else {
        return Ok(body);
    };
    let (has_api_version, has_kind) = type_meta_keys(&body);
    if has_api_version && has_kind {
        return Ok(body);
    }
    let mut out = Vec::with_capacity(body.len() + 64);
    out.push(b'{');
    let mut put = |key: &str, value: &str| -> Result<(), Error> {
        serde_json::to_writer(&mut out, key)
            .and_then(|()| {
                out.push(b':');
                serde_json::to_writer(&mut out, value)
            })
            .map_err(|source| Error::SerializeBody { source })?;
        out.push(b',');
        Ok(())
    };
    if !has_api_version {
        put("apiVersion", api_version)?;
    }
    if !has_kind {
        put("kind", kind)?;
    }
    if rest == b"}" {
        out.pop();
    }
    out.extend_from_slice(rest);
    Ok(out)
}

impl<K> Api<K>
where
    K: Serialize + DeserializeOwned + 'static,
{
    /// A create or replace request with its body: protobuf with `codec`,
    /// else JSON.
    #[cfg(feature = "protobuf")]
    fn write(
        &self,
        verb: Verb,
        name: Option<&str>,
        params: &PostParams,
        obj: &K,
        codec: Option<&kubeset_api::protobuf::dynamic::Typed<K>>,
    ) -> Result<Request, Error> {
        let req = with_params(self.request(verb, name), params);
        Ok(match codec {
            Some(c) => crate::protobuf::with_body(req, c, obj),
            None => req.body(self.typed_body(obj)?),
        })
    }

    /// `K`'s protobuf codec when the client negotiates protobuf.
    #[cfg(feature = "protobuf")]
    fn protobuf(&self) -> Option<kubeset_api::protobuf::dynamic::Typed<K>> {
        crate::protobuf::negotiated::<K>(self.client.rest())
    }

    /// Reads one object (404 is `Err`: `err.is_not_found()`; see
    /// [`get_opt`](Self::get_opt)).
    ///
    /// ```
    /// use kubeset_client::api::core::v1::ConfigMap;
    /// use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    /// use kubeset_client::params::{DeleteParams, ListParams, PatchParams, PostParams, WatchParams};
    /// use kubeset_client::{Api, Deleted, Patch, WatchEvent};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let server = kubeset_testserver::TestServer::start().await?;
    /// # let rest = kubeset_client::rest::RestClient::new(kubeset_client::rest::RestConfig::new(server.url()))?;
    /// # let client = kubeset_client::Client::new(rest, "default");
    /// # let cm = |name: &str| ConfigMap {
    /// #     metadata: ObjectMeta { name: Some(name.into()), ..ObjectMeta::default() },
    /// #     ..ConfigMap::default()
    /// # };
    /// let cms: Api<ConfigMap> = Api::default_namespaced(client);
    /// # cms.create(&PostParams::default(), &cm("settings")).await?;
    /// let cm = cms.get("settings").await?;
    /// assert_eq!(cm.metadata.name.as_deref(), Some("settings"));
    /// assert!(cms.get("missing").await.unwrap_err().is_not_found());
    /// # Ok(()) }
    /// ```
    pub async fn get(&self, name: &str) -> Result<K, Error> {
        #[cfg(feature = "protobuf")]
        if let Some(pb) = self.protobuf() {
            let build = |_| Ok(self.request(Verb::Get, Some(name)));
            return crate::protobuf::send(&pb, build).await;
        }
        self.request(Verb::Get, Some(name)).send_json().await
    }

    /// Reads one object, `None` when it does not exist (404 Not Found;
    /// every other failure, 403 included, is an `Err`). kube-rs's
    /// `Api::get_opt`.
    ///
    /// ```no_run
    /// # use kubeset_client::{Api, api::core::v1::ConfigMap};
    /// # async fn run(cms: Api<ConfigMap>) -> Result<(), kubeset_client::Error> {
    /// match cms.get_opt("settings").await? {
    ///     Some(cm) => println!("found {:?}", cm.metadata.resource_version),
    ///     None => println!("not there"),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn get_opt(&self, name: &str) -> Result<Option<K>, Error> {
        match self.get(name).await {
            Ok(obj) => Ok(Some(obj)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Lists objects (one page when `params.limit` is set).
    ///
    /// ```
    /// use kubeset_client::api::core::v1::ConfigMap;
    /// use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    /// use kubeset_client::params::{DeleteParams, ListParams, PatchParams, PostParams, WatchParams};
    /// use kubeset_client::{Api, Deleted, Patch, WatchEvent};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let server = kubeset_testserver::TestServer::start().await?;
    /// # let rest = kubeset_client::rest::RestClient::new(kubeset_client::rest::RestConfig::new(server.url()))?;
    /// # let client = kubeset_client::Client::new(rest, "default");
    /// # let cm = |name: &str| ConfigMap {
    /// #     metadata: ObjectMeta { name: Some(name.into()), ..ObjectMeta::default() },
    /// #     ..ConfigMap::default()
    /// # };
    /// let cms: Api<ConfigMap> = Api::default_namespaced(client);
    /// # cms.create(&PostParams::default(), &cm("a")).await?;
    /// # cms.create(&PostParams::default(), &cm("b")).await?;
    /// let list = cms.list(&ListParams::default().labels("app=web")).await?;
    /// assert!(list.items.is_empty());
    /// let all = cms.list(&ListParams::default()).await?;
    /// assert_eq!(all.items.len(), 2);
    /// # Ok(()) }
    /// ```
    pub async fn list(&self, params: &ListParams) -> Result<List<K>, Error> {
        #[cfg(feature = "protobuf")]
        if let Some(pb) = self.protobuf() {
            let build = |_| Ok(with_params(self.request(Verb::Get, None), params));
            return crate::protobuf::send(&pb, build).await;
        }
        with_params(self.request(Verb::Get, None), params)
            .send_json()
            .await
    }

    /// Lists every object page by page (`limit` per page, default 500),
    /// following `continue` tokens; yields objects as pages arrive.
    pub fn list_paginated(&self, params: ListParams) -> impl Stream<Item = Result<K, Error>> + '_ {
        let params = ListParams {
            limit: params.limit.or(Some(500)),
            ..params
        };
        let pages = stream::try_unfold(Some(params), move |state| async move {
            let Some(params) = state else { return Ok(None) };
            let page = self.list(&params).await?;
            let next = match page.metadata.continue_.as_deref() {
                Some(token) if !token.is_empty() => Some(ListParams {
                    continue_token: Some(token.to_owned()),
                    ..params
                }),
                _ => None,
            };
            Ok(Some((stream::iter(page.items.into_iter().map(Ok)), next)))
        });
        pages
            .map(|page| match page {
                Ok(items) => items.left_stream(),
                Err(e) => stream::once(async { Err(e) }).right_stream(),
            })
            .flatten()
    }

    /// Creates an object; `apiVersion` and `kind` are filled in when the
    /// serialized object lacks them.
    ///
    /// ```
    /// use kubeset_client::api::core::v1::ConfigMap;
    /// use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    /// use kubeset_client::params::{DeleteParams, ListParams, PatchParams, PostParams, WatchParams};
    /// use kubeset_client::{Api, Deleted, Patch, WatchEvent};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let server = kubeset_testserver::TestServer::start().await?;
    /// # let rest = kubeset_client::rest::RestClient::new(kubeset_client::rest::RestConfig::new(server.url()))?;
    /// # let client = kubeset_client::Client::new(rest, "default");
    /// # let cm = |name: &str| ConfigMap {
    /// #     metadata: ObjectMeta { name: Some(name.into()), ..ObjectMeta::default() },
    /// #     ..ConfigMap::default()
    /// # };
    /// let cms: Api<ConfigMap> = Api::default_namespaced(client);
    /// let created = cms.create(&PostParams::default(), &cm("settings")).await?;
    /// assert!(created.metadata.uid.is_some());
    /// let again = cms.create(&PostParams::default(), &cm("settings")).await;
    /// assert!(again.unwrap_err().is_already_exists());
    /// # Ok(()) }
    /// ```
    pub async fn create(&self, params: &PostParams, obj: &K) -> Result<K, Error> {
        #[cfg(feature = "protobuf")]
        if let Some(pb) = self.protobuf() {
            let build =
                |protobuf: bool| self.write(Verb::Post, None, params, obj, protobuf.then_some(&pb));
            return crate::protobuf::send(&pb, build).await;
        }
        let body = self.typed_body(obj)?;
        with_params(self.request(Verb::Post, None), params)
            .body(body)
            .send_json()
            .await
    }

    /// Replaces an object (`PUT`); `metadata.resourceVersion` makes it a
    /// compare-and-swap (409 Conflict when stale).
    ///
    /// ```
    /// use kubeset_client::api::core::v1::ConfigMap;
    /// use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    /// use kubeset_client::params::{DeleteParams, ListParams, PatchParams, PostParams, WatchParams};
    /// use kubeset_client::{Api, Deleted, Patch, WatchEvent};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let server = kubeset_testserver::TestServer::start().await?;
    /// # let rest = kubeset_client::rest::RestClient::new(kubeset_client::rest::RestConfig::new(server.url()))?;
    /// # let client = kubeset_client::Client::new(rest, "default");
    /// # let cm = |name: &str| ConfigMap {
    /// #     metadata: ObjectMeta { name: Some(name.into()), ..ObjectMeta::default() },
    /// #     ..ConfigMap::default()
    /// # };
    /// let cms: Api<ConfigMap> = Api::default_namespaced(client);
    /// # cms.create(&PostParams::default(), &cm("settings")).await?;
    /// let mut current = cms.get("settings").await?;
    /// current.data = Some([("k".to_owned(), "v".to_owned())].into());
    /// let replaced = cms.replace("settings", &PostParams::default(), &current).await?;
    /// // `current` still carries the old resourceVersion: a second write is stale.
    /// let stale = cms.replace("settings", &PostParams::default(), &current).await;
    /// assert!(stale.unwrap_err().is_conflict());
    /// assert_ne!(replaced.metadata.resource_version, current.metadata.resource_version);
    /// # Ok(()) }
    /// ```
    pub async fn replace(&self, name: &str, params: &PostParams, obj: &K) -> Result<K, Error> {
        #[cfg(feature = "protobuf")]
        if let Some(pb) = self.protobuf() {
            let build = |protobuf: bool| {
                self.write(Verb::Put, Some(name), params, obj, protobuf.then_some(&pb))
            };
            return crate::protobuf::send(&pb, build).await;
        }
        let body = self.typed_body(obj)?;
        with_params(self.request(Verb::Put, Some(name)), params)
            .body(body)
            .send_json()
            .await
    }

    /// Patches an object with any [`Patch`] flavour, including server-side apply
    /// (`fieldManager` from [`PatchParams::apply`], required by the server).
    ///
    /// ```
    /// use kubeset_client::api::core::v1::ConfigMap;
    /// use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    /// use kubeset_client::params::{DeleteParams, ListParams, PatchParams, PostParams, WatchParams};
    /// use kubeset_client::{Api, Deleted, Patch, WatchEvent};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let server = kubeset_testserver::TestServer::start().await?;
    /// # let rest = kubeset_client::rest::RestClient::new(kubeset_client::rest::RestConfig::new(server.url()))?;
    /// # let client = kubeset_client::Client::new(rest, "default");
    /// # let cm = |name: &str| ConfigMap {
    /// #     metadata: ObjectMeta { name: Some(name.into()), ..ObjectMeta::default() },
    /// #     ..ConfigMap::default()
    /// # };
    /// let cms: Api<ConfigMap> = Api::default_namespaced(client);
    /// # cms.create(&PostParams::default(), &cm("settings")).await?;
    /// let merge = serde_json::json!({"data": {"k": "v"}});
    /// let patched = cms.patch("settings", &PatchParams::default(), &Patch::Merge(&merge)).await?;
    /// assert_eq!(patched.data.unwrap()["k"], "v");
    /// let intent = serde_json::json!({
    ///     "apiVersion": "v1", "kind": "ConfigMap",
    ///     "metadata": {"name": "applied"}, "data": {"owner": "me"},
    /// });
    /// let applied = cms.patch("applied", &PatchParams::apply("docs"), &Patch::Apply(&intent)).await?;
    /// assert_eq!(applied.data.unwrap()["owner"], "me");
    /// # Ok(()) }
    /// ```
    pub async fn patch<P: Serialize>(
        &self,
        name: &str,
        params: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<K, Error> {
        self.patch_request(name, params, patch, &[])
            .send_json()
            .await
    }

    /// Server-side apply of `config` as `params.field_manager`: the object
    /// (created if missing) with the fields of `config` set and owned by the
    /// manager, the fields it owned before and no longer applies removed
    /// (unless another manager owns them too), and every other field
    /// untouched. `config` is any serializable apply configuration — JSON,
    /// or one from [`extract`](crate::apply::extract); `apiVersion` and
    /// `kind` are filled in when it lacks them. Sent as
    /// `application/apply-patch+yaml` with `fieldManager` and `force`.
    ///
    /// A field another manager owns is a 409 whose fields and managers
    /// [`Error::apply_conflicts`](crate::Error::apply_conflicts) types;
    /// [`ApplyParams::force`] takes them.
    ///
    /// ```
    /// use kubeset_client::api::core::v1::ConfigMap;
    /// use kubeset_client::params::ApplyParams;
    /// use kubeset_client::Api;
    /// use serde_json::json;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let server = kubeset_testserver::TestServer::start().await?;
    /// # let rest = kubeset_client::rest::RestClient::new(kubeset_client::rest::RestConfig::new(server.url()))?;
    /// # let client = kubeset_client::Client::new(rest, "default");
    /// let cms: Api<ConfigMap> = Api::default_namespaced(client);
    /// let mine = json!({"metadata": {"name": "settings"}, "data": {"mode": "fast"}});
    /// cms.apply("settings", &mine, &ApplyParams::new("alice")).await?;
    /// let theirs = json!({"metadata": {"name": "settings"}, "data": {"mode": "slow"}});
    /// let err = cms.apply("settings", &theirs, &ApplyParams::new("bob")).await.unwrap_err();
    /// let conflicts = err.apply_conflicts().expect("a conflict of field managers");
    /// assert_eq!(conflicts[0].manager, "alice");
    /// assert_eq!(conflicts[0].field, ".data.mode");
    /// let taken = cms.apply("settings", &theirs, &ApplyParams::new("bob").force()).await?;
    /// assert_eq!(taken.data.unwrap()["mode"], "slow");
    /// # Ok(()) }
    /// ```
    pub async fn apply(
        &self,
        name: &str,
        config: &impl Serialize,
        params: &ApplyParams,
    ) -> Result<K, Error> {
        self.patch(name, &PatchParams::from(params), &Patch::Apply(config))
            .await
    }

    /// [`apply`](Self::apply) to the `status` subresource: `config`'s
    /// `status` is applied and owned (recorded with `subresource: status`,
    /// read back by [`extract`](crate::apply::extract) with
    /// [`Subresource::Status`](crate::apply::Subresource::Status)); the
    /// server ignores the rest of it.
    ///
    /// ```
    /// use kubeset_client::api::apps::v1::Deployment;
    /// use kubeset_client::apply::{Subresource, extract};
    /// use kubeset_client::params::ApplyParams;
    /// use kubeset_client::Api;
    /// use serde_json::{Value, json};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let server = kubeset_testserver::TestServer::start().await?;
    /// # let rest = kubeset_client::rest::RestClient::new(kubeset_client::rest::RestConfig::new(server.url()))?;
    /// # let client = kubeset_client::Client::new(rest, "default");
    /// let deployments: Api<Deployment> = Api::default_namespaced(client);
    /// # let web = json!({"metadata": {"name": "web"}, "spec": {
    /// #     "selector": {"matchLabels": {"app": "web"}},
    /// #     "template": {"metadata": {"labels": {"app": "web"}},
    /// #         "spec": {"containers": [{"name": "app", "image": "nginx:1"}]}}}});
    /// # deployments.apply("web", &web, &ApplyParams::new("owner")).await?;
    /// let checked = json!({"metadata": {"name": "web"}, "status": {"conditions": [
    ///     {"type": "Checked", "status": "True", "reason": "Probed"}]}});
    /// let live = deployments.apply_status("web", &checked, &ApplyParams::new("checker")).await?;
    /// let mine: Value = extract(&live, "checker", Subresource::Status)?;
    /// assert_eq!(mine["status"]["conditions"][0]["type"], "Checked");
    /// # Ok(()) }
    /// ```
    pub async fn apply_status(
        &self,
        name: &str,
        config: &impl Serialize,
        params: &ApplyParams,
    ) -> Result<K, Error> {
        self.patch_status(name, &PatchParams::from(params), &Patch::Apply(config))
            .await
    }

    /// [`apply`](Self::apply) to the `scale` subresource: `config` is an
    /// `autoscaling/v1` `Scale` configuration
    /// (`{"spec": {"replicas": 3}}`; `apiVersion` and `kind` are filled in
    /// when missing), answering the new `Scale`. The server records the
    /// manager as owning the parent's replicas field with
    /// `subresource: scale` (unless it owned it before through the main
    /// resource); the `Scale` that [`get_subresource`](Self::get_subresource)
    /// reads carries no managedFields (as kube-apiserver's): extract from
    /// the parent, which answers the parent's replicas path.
    ///
    /// ```
    /// use kubeset_client::api::apps::v1::Deployment;
    /// use kubeset_client::params::ApplyParams;
    /// use kubeset_client::Api;
    /// use serde_json::json;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let server = kubeset_testserver::TestServer::start().await?;
    /// # let rest = kubeset_client::rest::RestClient::new(kubeset_client::rest::RestConfig::new(server.url()))?;
    /// # let client = kubeset_client::Client::new(rest, "default");
    /// let deployments: Api<Deployment> = Api::default_namespaced(client);
    /// # let web = json!({"metadata": {"name": "web"}, "spec": {
    /// #     "selector": {"matchLabels": {"app": "web"}},
    /// #     "template": {"metadata": {"labels": {"app": "web"}},
    /// #         "spec": {"containers": [{"name": "app", "image": "nginx:1"}]}}}});
    /// # deployments.apply("web", &web, &ApplyParams::new("owner")).await?;
    /// let scale = json!({"metadata": {"name": "web"}, "spec": {"replicas": 3}});
    /// // Nobody owns the defaulted replicas: the first apply through the
    /// // Scale conflicts with "before-first-apply", as on kube-apiserver.
    /// let err = deployments.apply_scale("web", &scale, &ApplyParams::new("autoscaler")).await;
    /// assert_eq!(err.unwrap_err().apply_conflicts().unwrap()[0].manager, "before-first-apply");
    /// let s = deployments.apply_scale("web", &scale, &ApplyParams::new("autoscaler").force()).await?;
    /// assert_eq!(s.spec.unwrap().replicas, Some(3));
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "autoscaling-v1")]
    pub async fn apply_scale(
        &self,
        name: &str,
        config: &impl Serialize,
        params: &ApplyParams,
    ) -> Result<kubeset_api::api::autoscaling::v1::Scale, Error> {
        let patch = Patch::Apply(config);
        self.patch_subresource("scale", name, &PatchParams::from(params), &patch)
            .await
    }

    pub(crate) fn patch_request<P: Serialize>(
        &self,
        name: &str,
        params: &PatchParams,
        patch: &Patch<P>,
        subresource: &[&str],
    ) -> Request {
        let (kind, query) = patch.request_parts(params);
        let req = self.shared.url.patch(self.client.rest(), kind, name);
        let req = if subresource.is_empty() {
            req
        } else {
            req.sub_resource(subresource)
        };
        let req = with_params(req, &query);
        if patch.is_apply() {
            // A `Scale` is its own kind, whatever the parent's.
            let typed = match subresource {
                ["scale"] => typed_body_as(patch.body(), SCALE_API_VERSION, "Scale"),
                _ => self.typed_body(patch.body()),
            };
            match typed {
                Ok(body) => req.body(body),
                Err(_) => req.json_body(patch.body()),
            }
        } else {
            req.json_body(patch.body())
        }
    }

    /// Deletes an object: [`Deleted::Gone`] when it is gone, or
    /// [`Deleted::Pending`] while finalizers hold it.
    ///
    /// ```
    /// use kubeset_client::api::core::v1::ConfigMap;
    /// use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    /// use kubeset_client::params::{DeleteParams, ListParams, PatchParams, PostParams, WatchParams};
    /// use kubeset_client::{Api, Deleted, Patch, WatchEvent};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let server = kubeset_testserver::TestServer::start().await?;
    /// # let rest = kubeset_client::rest::RestClient::new(kubeset_client::rest::RestConfig::new(server.url()))?;
    /// # let client = kubeset_client::Client::new(rest, "default");
    /// # let cm = |name: &str| ConfigMap {
    /// #     metadata: ObjectMeta { name: Some(name.into()), ..ObjectMeta::default() },
    /// #     ..ConfigMap::default()
    /// # };
    /// let cms: Api<ConfigMap> = Api::default_namespaced(client);
    /// # cms.create(&PostParams::default(), &cm("settings")).await?;
    /// match cms.delete("settings", &DeleteParams::default()).await? {
    ///     Deleted::Gone(status) => println!("deleted: {:?}", status.status),
    ///     Deleted::Pending(cm) => println!("finalizing {:?}", cm.metadata.deletion_timestamp),
    /// }
    /// assert!(cms.get_opt("settings").await?.is_none());
    /// # Ok(()) }
    /// ```
    pub async fn delete(&self, name: &str, params: &DeleteParams) -> Result<Deleted<K>, Error> {
        let mut req = self.request(Verb::Delete, Some(name));
        if let Some(body) = params.body() {
            req = req.json_body(&body);
        }
        let resp = req.send().await?;
        decode_deleted(&resp.body).map_err(|source| Error::Decode {
            type_name: std::any::type_name::<Deleted<K>>(),
            source,
        })
    }

    /// Deletes every object matched by `list` (`deletecollection`).
    pub async fn delete_collection(
        &self,
        params: &DeleteParams,
        list: &ListParams,
    ) -> Result<Deleted<List<K>>, Error> {
        let mut req = with_params(self.request(Verb::Delete, None), list);
        if let Some(body) = params.body() {
            req = req.json_body(&body);
        }
        let resp = req.send().await?;
        decode_deleted(&resp.body).map_err(|source| Error::Decode {
            type_name: std::any::type_name::<Deleted<List<K>>>(),
            source,
        })
    }

    /// Watches changes after `resource_version` (`""` or `"0"`: from any
    /// recent state). The stream ends when the server closes the watch;
    /// resume from the last event's resourceVersion. With protobuf
    /// negotiated (feature `protobuf`) a built-in kind is watched in
    /// protobuf `;stream=watch` frames, JSON again on 406/415.
    ///
    /// Bounded in time as client-go's reflector bounds its watches: without
    /// `params.timeout_seconds` the request asks for a random
    /// `timeoutSeconds` in `[300, 600)`
    /// ([`watch_timeout_seconds`](crate::rest::watch::watch_timeout_seconds)),
    /// and the client ends the stream with
    /// [`Error::StreamDeadline`](crate::Error::StreamDeadline) (a timeout)
    /// 1 s after the timeout it asked for, so a stalled connection (open,
    /// no bytes) ends within the timeout, never hangs. There is no shorter
    /// read-idle timer: a quiet watch without bookmarks rightly sends
    /// nothing for its whole timeout (set
    /// [`RestConfig::with_read_timeout`](crate::rest::RestConfig::with_read_timeout)
    /// for a bound on each read). kube-rs's `Api::watch` sends no timeout of
    /// its own and relies on its client's 295 s read timeout.
    ///
    /// ```
    /// use kubeset_client::api::core::v1::ConfigMap;
    /// use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    /// use kubeset_client::params::{DeleteParams, ListParams, PatchParams, PostParams, WatchParams};
    /// use kubeset_client::{Api, Deleted, Patch, WatchEvent};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let server = kubeset_testserver::TestServer::start().await?;
    /// # let rest = kubeset_client::rest::RestClient::new(kubeset_client::rest::RestConfig::new(server.url()))?;
    /// # let client = kubeset_client::Client::new(rest, "default");
    /// # let cm = |name: &str| ConfigMap {
    /// #     metadata: ObjectMeta { name: Some(name.into()), ..ObjectMeta::default() },
    /// #     ..ConfigMap::default()
    /// # };
    /// let cms: Api<ConfigMap> = Api::default_namespaced(client);
    /// use futures::StreamExt as _;
    /// let rv = cms.list(&ListParams::default()).await?.metadata.resource_version.unwrap_or_default();
    /// let mut events = cms.watch(&WatchParams::default().timeout(10), &rv).await?;
    /// cms.create(&PostParams::default(), &cm("new")).await?;
    /// match events.next().await.transpose()? {
    ///     Some(WatchEvent::Added(cm)) => assert_eq!(cm.metadata.name.as_deref(), Some("new")),
    ///     other => panic!("{other:?}"),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn watch(
        &self,
        params: &WatchParams,
        resource_version: &str,
    ) -> Result<WatchStream<K>, Error> {
        let params = params.bounded();
        let json = || self.watch_request(&params, resource_version).watch();
        #[cfg(feature = "protobuf")]
        if let Some(pb) = self.protobuf() {
            let req = self.watch_request(&params, resource_version);
            return crate::protobuf::or_json(pb, |d| req.watch_protobuf(d), json).await;
        }
        json().await
    }

    /// Like [`watch`](Self::watch), but the stream survives its API
    /// server: when the server dies, resets or stays silent past the
    /// client's watch idle timeout, it reopens on the next endpoint from
    /// the last resourceVersion it handed out, so no event is lost or
    /// repeated. It ends only when the server ends the watch normally
    /// (`timeoutSeconds`) or with an error item (410 Gone: relist). Ask for
    /// bookmarks (`WatchParams::bookmarks`) on quiet resources so silence
    /// is not mistaken for a hang.
    pub async fn watch_resumable(
        &self,
        params: &WatchParams,
        resource_version: &str,
    ) -> Result<ResumableWatch<K>, Error>
    where
        K: Send + 'static,
    {
        let json = || {
            self.watch_request(params, resource_version)
                .watch_resumable()
        };
        #[cfg(feature = "protobuf")]
        if let Some(pb) = self.protobuf() {
            let req = self.watch_request(params, resource_version);
            return crate::protobuf::or_json(pb, |d| req.watch_resumable_protobuf(d), json).await;
        }
        json().await
    }

    /// Reads a subresource (`status`, `scale`, …) as `T`.
    pub async fn get_subresource<T: DeserializeOwned>(
        &self,
        subresource: &str,
        name: &str,
    ) -> Result<T, Error> {
        self.subresource_request(Verb::Get, subresource, name)
            .send_json()
            .await
    }

    /// Patches a subresource, answering its new state as `T`.
    pub async fn patch_subresource<P: Serialize, T: DeserializeOwned>(
        &self,
        subresource: &str,
        name: &str,
        params: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<T, Error> {
        self.patch_request(name, params, patch, &[subresource])
            .send_json()
            .await
    }

    /// Replaces a subresource (`PUT`), answering its new state as `T`.
    pub async fn replace_subresource<B: Serialize, T: DeserializeOwned>(
        &self,
        subresource: &str,
        name: &str,
        params: &PostParams,
        body: &B,
    ) -> Result<T, Error> {
        self.write_subresource(Verb::Put, subresource, name, params, body)
            .await
    }

    /// Creates a subresource (`POST`: eviction, binding, token…).
    pub async fn create_subresource<B: Serialize, T: DeserializeOwned>(
        &self,
        subresource: &str,
        name: &str,
        params: &PostParams,
        body: &B,
    ) -> Result<T, Error> {
        self.write_subresource(Verb::Post, subresource, name, params, body)
            .await
    }

    /// Reads a subresource (`GET`) with typed query parameters as `T`.
    pub async fn get_subresource_with<T: DeserializeOwned>(
        &self,
        subresource: &str,
        name: &str,
        params: &impl QueryParams,
    ) -> Result<T, Error> {
        with_params(
            self.subresource_request(Verb::Get, subresource, name),
            params,
        )
        .send_json()
        .await
    }

    /// Reads a plain-text subresource (`pods/log`); bytes that are not
    /// UTF-8 become U+FFFD.
    pub async fn get_subresource_text(
        &self,
        subresource: &str,
        name: &str,
        params: &impl QueryParams,
    ) -> Result<String, Error> {
        let resp = with_params(
            self.subresource_request(Verb::Get, subresource, name),
            params,
        )
        .send()
        .await?;
        Ok(String::from_utf8_lossy(&resp.body).into_owned())
    }

    /// Reads a subresource as a byte stream (`pods/log` with `follow`): the
    /// chunks as they arrive; a non-2xx answer is the error.
    pub async fn get_subresource_stream(
        &self,
        subresource: &str,
        name: &str,
        params: &impl QueryParams,
    ) -> Result<impl Stream<Item = Result<Bytes, Error>> + Send + 'static, Error> {
        with_params(
            self.subresource_request(Verb::Get, subresource, name),
            params,
        )
        .stream()
        .await
    }

    /// `<verb> …/{name}/{subresource}`.
    pub(crate) fn subresource_request(&self, verb: Verb, subresource: &str, name: &str) -> Request {
        self.request(verb, Some(name)).sub_resource([subresource])
    }

    /// `PUT` or `POST` of `body` to a subresource, answering `T`.
    async fn write_subresource<B: Serialize, T: DeserializeOwned>(
        &self,
        verb: Verb,
        subresource: &str,
        name: &str,
        params: &PostParams,
        body: &B,
    ) -> Result<T, Error> {
        with_params(self.subresource_request(verb, subresource, name), params)
            .json_body(body)
            .send_json()
            .await
    }

    /// Reads the object with its `status` (the `status` subresource).
    pub async fn get_status(&self, name: &str) -> Result<K, Error> {
        self.get_subresource("status", name).await
    }

    /// Patches the `status` subresource.
    pub async fn patch_status<P: Serialize>(
        &self,
        name: &str,
        params: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<K, Error> {
        self.patch_subresource("status", name, params, patch).await
    }

    /// Replaces the `status` subresource.
    pub async fn replace_status(
        &self,
        name: &str,
        params: &PostParams,
        obj: &K,
    ) -> Result<K, Error> {
        let body = self.typed_body(obj)?;
        with_params(self.subresource_request(Verb::Put, "status", name), params)
            .body(body)
            .send_json()
            .await
    }
}

/// Whether the JSON object in `body` has the top-level keys `apiVersion`
/// and `kind`; walks the keys without building any value.
fn type_meta_keys(body: &[u8]) -> (bool, bool) {
    use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};

    enum Key {
        ApiVersion,
        Kind,
        Other,
    }
    impl<'de> serde::Deserialize<'de> for Key {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct KeyVisitor;
            impl Visitor<'_> for KeyVisitor {
                type Value = Key;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an object key")
                }
                fn visit_str<E>(self, key: &str) -> Result<Key, E> {
                    Ok(match key {
                        "apiVersion" => Key::ApiVersion,
                        "kind" => Key::Kind,
                        _ => Key::Other,
                    })
                }
            }
            d.deserialize_identifier(KeyVisitor)
        }
    }
    struct Keys;
    impl<'de> Visitor<'de> for Keys {
        type Value = (bool, bool);
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(bool, bool), A::Error> {
            let (mut api_version, mut kind) = (false, false);
            while let Some(key) = map.next_key::<Key>()? {
                match key {
                    Key::ApiVersion => api_version = true,
                    Key::Kind => kind = true,
                    Key::Other => {}
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok((api_version, kind))
        }
    }
    // `body` is serde_json's own output: an error cannot happen; if it
    // did, claiming both keys leaves the body untouched.
    serde_json::Deserializer::from_slice(body)
        .deserialize_map(Keys)
        .unwrap_or((true, true))
}

fn decode_deleted<T: DeserializeOwned>(body: &[u8]) -> Result<Deleted<T>, serde_json::Error> {
    #[derive(serde::Deserialize)]
    struct Peek<'a> {
        #[serde(borrow)]
        kind: Option<std::borrow::Cow<'a, str>>,
    }
    let peek: Peek<'_> = serde_json::from_slice(body)?;
    if peek.kind.as_deref() == Some("Status") {
        Ok(Deleted::Gone(Box::new(serde_json::from_slice(body)?)))
    } else {
        Ok(Deleted::Pending(serde_json::from_slice(body)?))
    }
}

#[cfg(test)]
mod tests {
    use kubeset_rest::{RestClient, RestConfig};
    use serde_json::{Value, json};

    use super::*;
    use crate::dynamic::ApiResource;

    fn api() -> Api<Value> {
        // Never connects: only the body encoding is under test.
        let rest = RestClient::new(RestConfig::new("http://127.0.0.1:9")).expect("client builds");
        let resource = ApiResource {
            group: "example.com".to_owned(),
            version: "v1".to_owned(),
            kind: "Widget".to_owned(),
            plural: "widgets".to_owned(),
            namespaced: true,
        };
        Api::dynamic(Client::new(rest, "default"), &resource, Some("default"))
    }

    fn body(obj: &Value) -> Value {
        let bytes = api().typed_body(obj).expect("serializes");
        serde_json::from_slice(&bytes).expect("valid JSON")
    }

    #[test]
    fn type_meta_is_added_in_front_when_missing() {
        let obj = json!({"metadata": {"name": "a"}, "spec": {"kind": "inner"}});
        let bytes = api().typed_body(&obj).unwrap();
        assert!(bytes.starts_with(br#"{"apiVersion":"example.com/v1","kind":"Widget","#));
        assert_eq!(
            body(&obj),
            json!({"apiVersion": "example.com/v1", "kind": "Widget",
                   "metadata": {"name": "a"}, "spec": {"kind": "inner"}})
        );
    }

    #[test]
    fn present_type_meta_is_kept_byte_for_byte() {
        let obj = json!({"apiVersion": "other/v2", "kind": "Other", "x": 1});
        let bytes = api().typed_body(&obj).unwrap();
        assert_eq!(bytes, serde_json::to_vec(&obj).unwrap());
    }

    #[test]
    fn only_the_missing_key_is_added() {
        assert_eq!(
            body(&json!({"kind": "Mine"})),
            json!({"apiVersion": "example.com/v1", "kind": "Mine"})
        );
        assert_eq!(
            body(&json!({"apiVersion": "x/v9"})),
            json!({"apiVersion": "x/v9", "kind": "Widget"})
        );
    }

    /// A server that answers one request with a watch's headers and then
    /// never sends a byte; the request's target comes out of the channel.
    async fn stalling_server() -> (String, tokio::sync::oneshot::Receiver<String>) {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let (mut sock, _) = listener.accept().await.unwrap();
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = sock.read(&mut buf).await.unwrap();
                assert!(n > 0, "the client closed before its request");
                head.extend_from_slice(&buf[..n]);
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let _ = tx.send(head.split(' ').nth(1).unwrap_or_default().to_owned());
            let reply = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
            sock.write_all(reply.as_bytes()).await.unwrap();
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
        });
        (url, rx)
    }

    fn api_at(url: &str) -> Api<Value> {
        let rest = RestClient::new(RestConfig::new(url)).expect("client builds");
        let resource = ApiResource::of::<crate::api::core::v1::ConfigMap>();
        Api::dynamic(Client::new(rest, "default"), &resource, Some("default"))
    }

    #[tokio::test]
    async fn a_plain_watch_asks_for_a_timeout_and_a_stall_ends_with_a_timeout_error() {
        use crate::params::WatchParams;
        // No timeout given: client-go's reflector's random [300, 600) s.
        let (url, target) = stalling_server().await;
        let watch = api_at(&url).watch(&WatchParams::default(), "5").await;
        let target = target.await.unwrap();
        let secs: u32 = target
            .split(['?', '&'])
            .find_map(|p| p.strip_prefix("timeoutSeconds="))
            .unwrap_or_else(|| panic!("no timeoutSeconds in {target}"))
            .parse()
            .unwrap();
        assert!((300..600).contains(&secs), "{secs}");
        drop(watch);
        // A given one is kept, and bounds a stalled stream (open, no
        // bytes): it ends with a timeout error 1 s after it.
        let (url, target) = stalling_server().await;
        let params = WatchParams::default().timeout(1);
        let mut watch = api_at(&url).watch(&params, "5").await.unwrap();
        let target = target.await.unwrap();
        assert!(
            target.split(['?', '&']).any(|p| p == "timeoutSeconds=1"),
            "{target}"
        );
        let end = tokio::time::timeout(std::time::Duration::from_secs(60), watch.next())
            .await
            .expect("the stalled watch must end, not hang");
        match end {
            Some(Err(e @ Error::StreamDeadline { .. })) => assert!(e.is_timeout()),
            other => panic!("{other:?}"),
        }
    }

    /// `watch_metadata` is bounded as `watch` is: a drawn timeout when
    /// none is given, the given one kept.
    #[tokio::test]
    async fn a_metadata_watch_asks_for_a_timeout_too() {
        use crate::params::WatchParams;
        let cms = |url: &str| -> Api<crate::api::core::v1::ConfigMap> {
            let rest = RestClient::new(RestConfig::new(url)).expect("client builds");
            Api::namespaced(Client::new(rest, "default"), "default")
        };
        let query = |target: &str, key: &str| -> Option<String> {
            target
                .split(['?', '&'])
                .find_map(|p| p.strip_prefix(key)?.strip_prefix('='))
                .map(str::to_owned)
        };
        let (url, target) = stalling_server().await;
        let watch = cms(&url).watch_metadata(&WatchParams::default(), "5").await;
        let target = target.await.unwrap();
        let secs: u32 = query(&target, "timeoutSeconds")
            .unwrap_or_else(|| panic!("no timeoutSeconds in {target}"))
            .parse()
            .unwrap();
        assert!((300..600).contains(&secs), "{secs}");
        assert_eq!(query(&target, "watch").as_deref(), Some("true"), "{target}");
        assert_eq!(
            query(&target, "resourceVersion").as_deref(),
            Some("5"),
            "{target}"
        );
        drop(watch);
        let (url, target) = stalling_server().await;
        let params = WatchParams::default().timeout(7).labels("app=web");
        let watch = cms(&url).watch_metadata(&params, "5").await;
        let target = target.await.unwrap();
        assert_eq!(
            query(&target, "timeoutSeconds").as_deref(),
            Some("7"),
            "{target}"
        );
        assert_eq!(
            query(&target, "labelSelector").as_deref(),
            Some("app%3Dweb"),
            "{target}"
        );
        drop(watch);
    }

    #[test]
    fn empty_object_and_non_objects() {
        assert_eq!(
            body(&json!({})),
            json!({"apiVersion": "example.com/v1", "kind": "Widget"})
        );
        assert_eq!(body(&json!([1, 2])), json!([1, 2]));
        assert_eq!(body(&json!("s")), json!("s"));
    }
}
