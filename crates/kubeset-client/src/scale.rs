//! kube-rs's `Api::get_scale`, `patch_scale` and `replace_scale` on
//! custom kinds whose CRD has a `scale` subresource. The built-in kinds
//! with one (`Deployment`, `ReplicaSet`, `StatefulSet`,
//! `ReplicationController`) have their own generated methods of the same
//! names; a custom kind opts in through [`ScaleSubresource`], which
//! `#[derive(CustomResource)]` implements when `#[kube(scale(...))]` is
//! set.

use kubeset_api::Resource;
#[cfg(feature = "autoscaling-v1")]
use kubeset_api::api::autoscaling::v1::Scale;

#[cfg(feature = "autoscaling-v1")]
use crate::params::{PatchParams, PostParams};
#[cfg(feature = "autoscaling-v1")]
use crate::{Api, Error, Patch};

/// A custom kind served with a `scale` subresource
/// (`autoscaling/v1` `Scale` at `…/{name}/scale`): `Api<K>` gets
/// `get_scale`, `patch_scale` and `replace_scale`, as kube-rs's `Api`
/// has for every kind. `#[derive(CustomResource)]` implements it for a
/// kind declared with `#[kube(scale(...))]`; implement it by hand for a
/// kind whose CRD is written elsewhere.
pub trait ScaleSubresource: Resource {}

/// The `scale` subresource of custom kinds (its own `impl` block: the
/// built-in kinds' methods of the same names are generated per kind).
#[cfg(feature = "autoscaling-v1")]
impl<K> Api<K>
where
    K: ScaleSubresource + serde::Serialize + serde::de::DeserializeOwned + 'static,
{
    /// Reads `name`'s scale (`GET …/{name}/scale`).
    ///
    /// ```no_run
    /// # #[derive(Clone, Debug, serde::Serialize, serde::Deserialize, kubeset_client::JsonSchema, kubeset_client::CustomResource)]
    /// # #[kube(crate = "kubeset_client", group = "example.com", version = "v1", kind = "Pool", namespaced,
    /// #        scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas"))]
    /// # #[schema(crate = "kubeset_client")]
    /// # struct PoolSpec { replicas: i32 }
    /// # async fn f(client: kubeset_client::Client) -> Result<(), kubeset_client::Error> {
    /// use kubeset_client::{Api, Patch, params::PatchParams};
    /// let pools: Api<Pool> = Api::namespaced(client, "default");
    /// let scale = pools.get_scale("web").await?;
    /// let patch = Patch::Merge(serde_json::json!({"spec": {"replicas": 3}}));
    /// pools.patch_scale("web", &PatchParams::default(), &patch).await?;
    /// # let _ = scale; Ok(()) }
    /// ```
    pub async fn get_scale(&self, name: &str) -> Result<Scale, Error> {
        self.get_subresource("scale", name).await
    }

    /// Patches `name`'s scale (`PATCH …/{name}/scale`).
    pub async fn patch_scale<P: serde::Serialize>(
        &self,
        name: &str,
        params: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<Scale, Error> {
        self.patch_subresource("scale", name, params, patch).await
    }

    /// Replaces `name`'s scale (`PUT …/{name}/scale`; the body's
    /// `metadata.resourceVersion`, when set, must be current).
    pub async fn replace_scale(
        &self,
        name: &str,
        params: &PostParams,
        body: &Scale,
    ) -> Result<Scale, Error> {
        self.replace_subresource("scale", name, params, body).await
    }
}
