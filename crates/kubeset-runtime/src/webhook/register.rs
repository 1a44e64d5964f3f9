//! Self-registration: the CA into the webhook configurations' `caBundle`
//! and into a CRD's conversion webhook.

use kubeset_client::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kubeset_client::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kubeset_client::params::PatchParams;
use kubeset_client::{Api, ByteString, Client, Patch, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::WebhookError;

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::ValidatingWebhookConfiguration {}
    impl Sealed for super::MutatingWebhookConfiguration {}
}

/// `ValidatingWebhookConfiguration` or `MutatingWebhookConfiguration`.
pub trait WebhookConfiguration:
    Resource + Serialize + DeserializeOwned + Clone + std::fmt::Debug + Send + 'static + sealed::Sealed
{
    /// How many webhooks it lists.
    fn webhook_count(&self) -> usize;
}

impl WebhookConfiguration for ValidatingWebhookConfiguration {
    fn webhook_count(&self) -> usize {
        self.webhooks.as_ref().map_or(0, Vec::len)
    }
}

impl WebhookConfiguration for MutatingWebhookConfiguration {
    fn webhook_count(&self) -> usize {
        self.webhooks.as_ref().map_or(0, Vec::len)
    }
}

/// Sets `clientConfig.caBundle` of every webhook of the configuration
/// `name` to `ca_pem` (a JSON patch guarded by the resourceVersion read,
/// so a concurrent edit makes it fail instead of being overwritten) and
/// answers the stored configuration. Run it at start and after changing
/// the CA.
///
/// ```no_run
/// use kubeset_client::api::admissionregistration::v1::ValidatingWebhookConfiguration;
/// use kubeset_runtime::webhook::{SelfSignedCa, set_ca_bundle};
/// # async fn f(client: kubeset_client::Client) -> Result<(), Box<dyn std::error::Error>> {
/// let ca = SelfSignedCa::generate("my-webhook-ca")?;
/// set_ca_bundle::<ValidatingWebhookConfiguration>(&client, "my-webhook", ca.cert_pem()).await?;
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// [`WebhookError::Register`] with the API error (not found, conflict).
pub async fn set_ca_bundle<K: WebhookConfiguration>(
    client: &Client,
    name: &str,
    ca_pem: &str,
) -> Result<K, WebhookError> {
    patch_ca_bundle(client, name, ca_pem, |current: &K, bundle| {
        let mut ops = vec![serde_json::json!({
            "op": "test",
            "path": "/metadata/resourceVersion",
            "value": current.metadata().resource_version,
        })];
        for i in 0..current.webhook_count() {
            ops.push(serde_json::json!({
                "op": "add",
                "path": format!("/webhooks/{i}/clientConfig/caBundle"),
                "value": bundle,
            }));
        }
        Ok(ops)
    })
    .await
}

/// Sets `spec.conversion.webhook.clientConfig.caBundle` of the CRD `name`
/// to `ca_pem` (a JSON patch that fails if the conversion strategy is no
/// longer `Webhook` when it is applied; not guarded by the resourceVersion
/// as [`set_ca_bundle`] is, since the CRD's own controllers update its
/// status) and answers the stored CRD: a conversion webhook's
/// self-registration, at start and after changing the CA. The CRD must
/// already have `conversion.strategy: Webhook`
/// ([`kubeset_client::crd::with_conversion_webhook`]).
///
/// ```no_run
/// use kubeset_runtime::webhook::{SelfSignedCa, set_conversion_ca_bundle};
/// # async fn f(client: kubeset_client::Client) -> Result<(), Box<dyn std::error::Error>> {
/// let ca = SelfSignedCa::generate("my-conversion-ca")?;
/// set_conversion_ca_bundle(&client, "people.example.com", ca.cert_pem()).await?;
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// [`WebhookError::Register`] with the API error (not found, conflict);
/// [`WebhookError::NoConversionWebhook`] when the CRD converts otherwise.
pub async fn set_conversion_ca_bundle(
    client: &Client,
    name: &str,
    ca_pem: &str,
) -> Result<CustomResourceDefinition, WebhookError> {
    patch_ca_bundle(
        client,
        name,
        ca_pem,
        |current: &CustomResourceDefinition, bundle| {
            let webhook = current
                .spec
                .conversion
                .as_ref()
                .filter(|c| c.strategy == "Webhook")
                .and_then(|c| c.webhook.as_ref());
            let Some(webhook) = webhook else {
                return Err(WebhookError::NoConversionWebhook {
                    name: name.to_owned(),
                });
            };
            // Guarded by the strategy, not the resourceVersion: the CRD's
            // controllers write its status right after it is created.
            let mut ops = vec![serde_json::json!({
                "op": "test",
                "path": "/spec/conversion/strategy",
                "value": "Webhook",
            })];
            if webhook.client_config.is_none() {
                ops.push(serde_json::json!({
                    "op": "add",
                    "path": "/spec/conversion/webhook/clientConfig",
                    "value": {},
                }));
            }
            ops.push(serde_json::json!({
                "op": "add",
                "path": "/spec/conversion/webhook/clientConfig/caBundle",
                "value": bundle,
            }));
            Ok(ops)
        },
    )
    .await
}

/// Reads the cluster-scoped object `name`, has `ops` write the JSON patch
/// that puts `ca_pem` (as `caBundle` bytes: base64 in JSON) into it, and
/// applies the patch; answers the stored object.
async fn patch_ca_bundle<K>(
    client: &Client,
    name: &str,
    ca_pem: &str,
    ops: impl FnOnce(&K, serde_json::Value) -> Result<Vec<serde_json::Value>, WebhookError>,
) -> Result<K, WebhookError>
where
    K: Resource + Serialize + DeserializeOwned + Clone + std::fmt::Debug + Send + 'static,
{
    let err = |source| WebhookError::Register {
        kind: K::KIND,
        name: name.to_owned(),
        source: Box::new(source),
    };
    let api: Api<K> = Api::all(client.clone());
    let current = api.get(name).await.map_err(err)?;
    let bundle = serde_json::to_value(ByteString(ca_pem.as_bytes().to_vec()))
        .unwrap_or(serde_json::Value::Null);
    let ops = ops(&current, bundle)?;
    api.patch(name, &PatchParams::default(), &Patch::Json(ops))
        .await
        .map_err(err)
}
