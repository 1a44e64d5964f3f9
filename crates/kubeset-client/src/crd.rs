//! CustomResourceDefinitions from Rust types: [`CustomResourceExt`]
//! (kube-rs's name and methods), implemented by `#[derive(CustomResource)]`,
//! and [`merge_crds`] for several versions of one kind.
//!
//! ```
//! use kubeset_client::{CustomResource, CustomResourceExt, JsonSchema};
//! use serde::{Deserialize, Serialize};
//!
//! /// A widget.
//! #[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
//! #[kube(crates(kubeset = "kubeset_client"))]
//! #[schema(crate = "kubeset_client")]
//! #[kube(group = "example.com", version = "v1", kind = "Widget", namespaced)]
//! #[kube(status = "WidgetStatus", shortname = "wd", category = "all")]
//! #[kube(printcolumn = r#"{"name":"Size","type":"integer","jsonPath":".spec.size"}"#)]
//! #[kube(scale(spec_replicas_path = ".spec.size", status_replicas_path = ".status.size"))]
//! struct WidgetSpec {
//!     #[schema(minimum = 0, maximum = 10)]
//!     size: i32,
//! }
//!
//! #[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
//! #[schema(crate = "kubeset_client")]
//! struct WidgetStatus {
//!     size: i32,
//! }
//!
//! let crd = Widget::crd();
//! assert_eq!(Widget::crd_name(), "widgets.example.com");
//! assert_eq!(crd.spec.names.plural, "widgets");
//! assert_eq!(crd.spec.names.short_names, Some(vec!["wd".to_owned()]));
//! let w = Widget::new("w1", WidgetSpec { size: 3 });
//! assert_eq!(w.metadata.name.as_deref(), Some("w1"));
//! // Written whole, as the generated models are: apiVersion and kind first.
//! let json = serde_json::to_value(&w).unwrap();
//! assert_eq!(json["apiVersion"], "example.com/v1");
//! assert_eq!(json["kind"], "Widget");
//! assert!(json.get("status").is_none());
//! // The apply configuration the derive writes beside it: only what this
//! // field manager sets (`Api::apply`, `extract::<WidgetApply>`).
//! let cfg = WidgetApply::new("w1", "default")
//!     .with_label("team", "a")
//!     .with_spec(serde_json::json!({"size": 3}));
//! assert_eq!(serde_json::to_value(&cfg).unwrap(), serde_json::json!({
//!     "apiVersion": "example.com/v1", "kind": "Widget",
//!     "metadata": {"name": "w1", "namespace": "default", "labels": {"team": "a"}},
//!     "spec": {"size": 3},
//! }));
//! ```

use std::collections::BTreeMap;

use kubeset_api::Resource;
use kubeset_api::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceConversion, CustomResourceDefinition,
    CustomResourceDefinitionNames, CustomResourceDefinitionSpec, CustomResourceDefinitionVersion,
    CustomResourceSubresourceScale, CustomResourceSubresourceStatus, CustomResourceSubresources,
    CustomResourceValidation, JSONSchemaProps, SelectableField, WebhookClientConfig,
    WebhookConversion,
};
use kubeset_api::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::dynamic::ApiResource;

/// A custom resource kind that knows its CustomResourceDefinition.
/// `#[derive(CustomResource)]` implements it.
pub trait CustomResourceExt: Resource {
    /// The CRD of this kind, with this version as the only one (served and
    /// stored unless the attributes say otherwise). Several versions:
    /// [`merge_crds`].
    fn crd() -> CustomResourceDefinition;
    /// `<plural>.<group>`, the CRD's name.
    fn crd_name() -> &'static str;
    /// The kind's [`ApiResource`], for the dynamic client.
    fn api_resource() -> ApiResource;
    /// The short names (`kubectl get wd`).
    fn shortnames() -> &'static [&'static str];
}

/// The `scale` subresource's paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScalePaths {
    /// `.spec.replicas`-like path of the desired count.
    pub spec_replicas_path: &'static str,
    /// `.status.replicas`-like path of the observed count.
    pub status_replicas_path: &'static str,
    /// `.status.selector`-like path of the selector (string form), if any.
    pub label_selector_path: Option<&'static str>,
}

/// Everything a CRD of one version says: what `#[derive(CustomResource)]`
/// fills in from `#[kube(...)]`; build one by hand for a kind without the
/// derive. [`CrdParts::into_crd`] makes the CRD.
#[derive(Debug, Clone, PartialEq)]
pub struct CrdParts {
    /// API group (not empty: custom resources live in a named group).
    pub group: &'static str,
    /// Version name, e.g. `v1`.
    pub version: &'static str,
    /// Kind, e.g. `Widget`.
    pub kind: &'static str,
    /// Lowercase plural, e.g. `widgets`.
    pub plural: &'static str,
    /// Lowercase singular, e.g. `widget`.
    pub singular: &'static str,
    /// `shortNames`.
    pub short_names: &'static [&'static str],
    /// `categories` (`all` makes `kubectl get all` list it).
    pub categories: &'static [&'static str],
    /// `Namespaced` or `Cluster` scope.
    pub namespaced: bool,
    /// The `openAPIV3Schema` of the whole object.
    pub schema: JSONSchemaProps,
    /// Whether the `status` subresource is on.
    pub status: bool,
    /// The `scale` subresource, if on.
    pub scale: Option<ScalePaths>,
    /// `additionalPrinterColumns`.
    pub printer_columns: Vec<CustomResourceColumnDefinition>,
    /// `selectableFields` (JSON paths).
    pub selectable_fields: &'static [&'static str],
    /// Whether the version is served.
    pub served: bool,
    /// Whether the version is the storage version.
    pub storage: bool,
    /// Whether the version is deprecated.
    pub deprecated: bool,
    /// Warning sent to clients of a deprecated version (the server's
    /// default when `None`).
    pub deprecation_warning: Option<&'static str>,
    /// Labels of the CRD object.
    pub labels: &'static [(&'static str, &'static str)],
    /// Annotations of the CRD object.
    pub annotations: &'static [(&'static str, &'static str)],
}

fn strings(items: &[&str]) -> Option<Vec<String>> {
    (!items.is_empty()).then(|| items.iter().map(|s| (*s).to_owned()).collect())
}

fn string_map(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
    (!pairs.is_empty()).then(|| {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    })
}

impl CrdParts {
    /// The CustomResourceDefinition of this one version.
    pub fn into_crd(self) -> CustomResourceDefinition {
        let subresources =
            (self.status || self.scale.is_some()).then(|| CustomResourceSubresources {
                status: self
                    .status
                    .then(|| CustomResourceSubresourceStatus(serde_json::Map::new())),
                scale: self.scale.map(|s| CustomResourceSubresourceScale {
                    spec_replicas_path: s.spec_replicas_path.to_owned(),
                    status_replicas_path: s.status_replicas_path.to_owned(),
                    label_selector_path: s.label_selector_path.map(str::to_owned),
                }),
            });
        let version = CustomResourceDefinitionVersion {
            name: self.version.to_owned(),
            served: self.served,
            storage: self.storage,
            deprecated: self.deprecated.then_some(true),
            deprecation_warning: self.deprecation_warning.map(str::to_owned),
            schema: Some(CustomResourceValidation {
                open_api_v3_schema: Some(self.schema),
            }),
            subresources,
            additional_printer_columns: (!self.printer_columns.is_empty())
                .then_some(self.printer_columns),
            selectable_fields: (!self.selectable_fields.is_empty()).then(|| {
                self.selectable_fields
                    .iter()
                    .map(|p| SelectableField {
                        json_path: (*p).to_owned(),
                    })
                    .collect()
            }),
        };
        CustomResourceDefinition {
            metadata: ObjectMeta {
                name: Some(format!("{}.{}", self.plural, self.group)),
                labels: string_map(self.labels),
                annotations: string_map(self.annotations),
                ..ObjectMeta::default()
            },
            spec: CustomResourceDefinitionSpec {
                group: self.group.to_owned(),
                names: CustomResourceDefinitionNames {
                    kind: self.kind.to_owned(),
                    list_kind: Some(format!("{}List", self.kind)),
                    plural: self.plural.to_owned(),
                    singular: Some(self.singular.to_owned()),
                    short_names: strings(self.short_names),
                    categories: strings(self.categories),
                },
                scope: if self.namespaced {
                    "Namespaced"
                } else {
                    "Cluster"
                }
                .to_owned(),
                versions: vec![version],
                conversion: None,
                preserve_unknown_fields: None,
            },
            status: None,
        }
    }
}

/// Why [`merge_crds`] could not merge.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    /// No CRDs were given.
    #[error("no CRDs to merge")]
    MissingCrds,
    /// The storage version is not among the CRDs' versions.
    #[error("storage version {version:?} is not among the versions {have:?}")]
    MissingStoredVersion {
        /// The version asked for.
        version: String,
        /// The versions given.
        have: Vec<String>,
    },
    /// The CRDs disagree on a property that all versions share.
    #[error("CRD {index} has {property} {found:?}, the first has {expected:?}")]
    PropertyMismatch {
        /// Position of the disagreeing CRD.
        index: usize,
        /// `name`, `group`, `names` or `scope`.
        property: &'static str,
        /// The first CRD's value.
        expected: String,
        /// This CRD's value.
        found: String,
    },
    /// A version appears twice.
    #[error("version {version:?} appears twice")]
    DuplicateVersion {
        /// The version.
        version: String,
    },
}

/// Merges the CRDs of several versions of one kind into one CRD whose
/// storage version is `stored_apiversion` (a version name such as `v2`, or
/// `group/v2`); every other version is served and not stored. As kube-rs's
/// `merge_crds`: name, group, names and scope must agree.
pub fn merge_crds(
    crds: Vec<CustomResourceDefinition>,
    stored_apiversion: &str,
) -> Result<CustomResourceDefinition, MergeError> {
    let mut iter = crds.into_iter();
    let mut merged = iter.next().ok_or(MergeError::MissingCrds)?;
    for (i, crd) in iter.enumerate() {
        let index = i + 1;
        let (first, this) = (&merged, &crd);
        let shared = [
            differ("name", &first.metadata.name, &this.metadata.name, debug),
            differ("group", &first.spec.group, &this.spec.group, String::clone),
            differ("names", &first.spec.names, &this.spec.names, debug),
            differ("scope", &first.spec.scope, &this.spec.scope, String::clone),
        ];
        if let Some((property, expected, found)) = shared.into_iter().flatten().next() {
            return Err(MergeError::PropertyMismatch {
                index,
                property,
                expected,
                found,
            });
        }
        for v in crd.spec.versions {
            if merged.spec.versions.iter().any(|m| m.name == v.name) {
                return Err(MergeError::DuplicateVersion { version: v.name });
            }
            merged.spec.versions.push(v);
        }
    }
    let stored = stored_apiversion
        .rsplit_once('/')
        .map_or(stored_apiversion, |(_, v)| v);
    if !merged.spec.versions.iter().any(|v| v.name == stored) {
        return Err(MergeError::MissingStoredVersion {
            version: stored.to_owned(),
            have: merged
                .spec
                .versions
                .iter()
                .map(|v| v.name.clone())
                .collect(),
        });
    }
    for v in &mut merged.spec.versions {
        v.storage = v.name == stored;
    }
    Ok(merged)
}

/// `None` when the CRDs agree on `property`; else it and both values,
/// written by `show`.
fn differ<T: PartialEq>(
    property: &'static str,
    first: &T,
    this: &T,
    show: fn(&T) -> String,
) -> Option<(&'static str, String, String)> {
    (first != this).then(|| (property, show(first), show(this)))
}

/// A mismatch's value as `{:?}` writes it.
fn debug<T: std::fmt::Debug>(value: &T) -> String {
    format!("{value:?}")
}

/// The CRD with `spec.conversion` set to `strategy: Webhook`: the API
/// server converts between its versions by calling `client_config` (a
/// `url`, or a `service` in the cluster, with the `caBundle` that signs
/// the webhook's certificate; self-registration may set it later) with
/// `ConversionReview` `v1` ([`crate::conversion`]).
///
/// ```
/// use kubeset_client::crd::with_conversion_webhook;
/// use kubeset_client::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
///     CustomResourceDefinition, WebhookClientConfig,
/// };
/// let crd = with_conversion_webhook(
///     CustomResourceDefinition::default(),
///     WebhookClientConfig { url: Some("https://127.0.0.1:8443/convert".into()), ..Default::default() },
/// );
/// let conversion = crd.spec.conversion.unwrap();
/// assert_eq!(conversion.strategy, "Webhook");
/// assert_eq!(conversion.webhook.unwrap().conversion_review_versions, ["v1"]);
/// ```
#[must_use]
pub fn with_conversion_webhook(
    mut crd: CustomResourceDefinition,
    client_config: WebhookClientConfig,
) -> CustomResourceDefinition {
    crd.spec.conversion = Some(CustomResourceConversion {
        strategy: "Webhook".to_owned(),
        webhook: Some(WebhookConversion {
            client_config: Some(client_config),
            conversion_review_versions: vec!["v1".to_owned()],
        }),
    });
    crd
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(version: &'static str) -> CrdParts {
        CrdParts {
            group: "example.com",
            version,
            kind: "Widget",
            plural: "widgets",
            singular: "widget",
            short_names: &[],
            categories: &[],
            namespaced: true,
            schema: JSONSchemaProps::default(),
            status: false,
            scale: None,
            printer_columns: Vec::new(),
            selectable_fields: &[],
            served: true,
            storage: true,
            deprecated: false,
            deprecation_warning: None,
            labels: &[],
            annotations: &[],
        }
    }

    #[test]
    fn merge_keeps_one_storage_version() {
        let crd = merge_crds(
            vec![parts("v1").into_crd(), parts("v2").into_crd()],
            "example.com/v2",
        )
        .unwrap();
        let v: Vec<_> = crd
            .spec
            .versions
            .iter()
            .map(|v| (v.name.as_str(), v.storage))
            .collect();
        assert_eq!(v, [("v1", false), ("v2", true)]);
    }

    #[test]
    fn merge_errors() {
        assert_eq!(merge_crds(vec![], "v1"), Err(MergeError::MissingCrds));
        assert!(matches!(
            merge_crds(vec![parts("v1").into_crd()], "v3"),
            Err(MergeError::MissingStoredVersion { .. })
        ));
        assert!(matches!(
            merge_crds(vec![parts("v1").into_crd(), parts("v1").into_crd()], "v1"),
            Err(MergeError::DuplicateVersion { .. })
        ));
        let mut other = parts("v2");
        other.namespaced = false;
        assert!(matches!(
            merge_crds(vec![parts("v1").into_crd(), other.into_crd()], "v1"),
            Err(MergeError::PropertyMismatch {
                property: "scope",
                ..
            })
        ));
    }

    #[test]
    fn each_shared_property_is_compared_and_both_values_named() {
        let mismatch = |change: fn(&mut CustomResourceDefinition)| {
            let mut other = parts("v2").into_crd();
            change(&mut other);
            merge_crds(vec![parts("v1").into_crd(), other], "v1").unwrap_err()
        };
        let expect = |property, expected: &str, found: &str| MergeError::PropertyMismatch {
            index: 1,
            property,
            expected: expected.to_owned(),
            found: found.to_owned(),
        };
        assert_eq!(
            mismatch(|c| c.metadata.name = Some("gadgets.example.com".into())),
            expect(
                "name",
                "Some(\"widgets.example.com\")",
                "Some(\"gadgets.example.com\")"
            )
        );
        assert_eq!(
            mismatch(|c| c.spec.group = "example.org".into()),
            expect("group", "example.com", "example.org")
        );
        let names = parts("v1").into_crd().spec.names;
        let mut renamed = names.clone();
        renamed.singular = Some("gadget".into());
        assert_eq!(
            mismatch(|c| c.spec.names.singular = Some("gadget".into())),
            expect("names", &format!("{names:?}"), &format!("{renamed:?}"))
        );
        assert_eq!(
            mismatch(|c| c.spec.scope = "Cluster".into()),
            expect("scope", "Namespaced", "Cluster")
        );
    }

    #[test]
    fn subresources_and_names() {
        let mut p = parts("v1");
        p.status = true;
        p.scale = Some(ScalePaths {
            spec_replicas_path: ".spec.replicas",
            status_replicas_path: ".status.replicas",
            label_selector_path: None,
        });
        let crd = p.into_crd();
        assert_eq!(crd.metadata.name.as_deref(), Some("widgets.example.com"));
        assert_eq!(crd.spec.names.list_kind.as_deref(), Some("WidgetList"));
        let sub = crd.spec.versions[0].subresources.as_ref().unwrap();
        assert!(sub.status.is_some());
        assert_eq!(
            sub.scale.as_ref().unwrap().spec_replicas_path,
            ".spec.replicas"
        );
    }
}
