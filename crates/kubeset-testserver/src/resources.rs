//! The resources the server serves: the static table of `kubeset-api`
//! plus CustomResourceDefinitions registered at run time.

use std::sync::Arc;

use base64::Engine;
use kubeset_api::resources::{RESOURCES, ResourceInfo};
use serde_json::Value;

use crate::util::strings;

/// Paths of the scale subresource inside the object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScalePaths {
    /// `.spec.replicas` for built-ins.
    pub(crate) spec_replicas: Vec<String>,
    /// `.status.replicas` for built-ins.
    pub(crate) status_replicas: Vec<String>,
    /// Where the label selector lives (a string for CRDs, a LabelSelector
    /// object at `.spec.selector` for built-ins).
    pub(crate) label_selector: Option<Vec<String>>,
}

fn parse_json_path(p: &str) -> Vec<String> {
    p.trim_start_matches('.')
        .split('.')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// One served resource of one group-version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resource {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) kind: String,
    pub(crate) plural: String,
    pub(crate) singular: String,
    pub(crate) namespaced: bool,
    pub(crate) verbs: Vec<String>,
    pub(crate) short_names: Vec<String>,
    pub(crate) subresources: Vec<String>,
    pub(crate) scale: Option<ScalePaths>,
    /// Served from a CRD (lists keep `apiVersion`/`kind` on items).
    pub(crate) custom: bool,
    /// Deprecation warning to send in a `Warning` header.
    pub(crate) deprecation: Option<String>,
    /// Discovery categories (`all` makes `kubectl get all` list it).
    pub(crate) categories: Vec<String>,
    /// Discovery's `storageVersionHash` ([`storage_version_hash`] of the
    /// kind the resource is stored as); `None` for a resource with no
    /// storage (reviews, `bindings`, `componentstatuses`).
    pub(crate) storage_version_hash: Option<String>,
    /// A CRD version's `schema.openAPIV3Schema`, for `/openapi`.
    pub(crate) schema: Option<Arc<Value>>,
    /// The same schema, compiled for admission on its first use (`None`:
    /// none).
    pub(crate) compiled: Option<crate::admission::schema::Lazy>,
    /// A CRD version's `additionalPrinterColumns`, for Tables.
    pub(crate) printer_columns: Vec<Value>,
    /// A CRD version's `selectableFields` (`spec.color` for the JSON path
    /// `.spec.color`), selectable in `fieldSelector` besides
    /// `metadata.name` and `metadata.namespace`.
    pub(crate) selectable_fields: Arc<[String]>,
    /// The CRD's conversion webhook (`conversion.strategy: Webhook`):
    /// objects are stored in its storage version and converted by it
    /// ([`crate::conversion`]); `None` for every other resource.
    pub(crate) conversion: Option<Arc<ConversionWebhook>>,
}

impl Resource {
    /// `pods`, `deployments.apps`: the group-resource of error messages.
    pub(crate) fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// `v1` or `apps/v1`.
    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether this is `events.k8s.io/v1` events (stored with core/v1's).
    pub(crate) fn is_events_v1(&self) -> bool {
        self.group == "events.k8s.io" && self.plural == "events"
    }

    /// Storage key shared by all versions of the resource.
    /// `events.k8s.io` events share core/v1's store, as on kube-apiserver.
    pub(crate) fn storage_key(&self) -> (String, String) {
        if self.is_events_v1() {
            return (String::new(), "events".to_owned());
        }
        (self.group.clone(), self.plural.clone())
    }

    /// Whether `status` is a subresource (so main writes ignore it).
    pub(crate) fn has_status(&self) -> bool {
        self.subresources.iter().any(|s| s == "status")
    }

    fn from_static(r: &ResourceInfo) -> Self {
        let subresources: Vec<String> = r.subresources.iter().map(|s| (*s).to_owned()).collect();
        let scale = subresources
            .iter()
            .any(|s| s == "scale")
            .then(|| ScalePaths {
                spec_replicas: vec!["spec".into(), "replicas".into()],
                status_replicas: vec!["status".into(), "replicas".into()],
                label_selector: Some(vec!["spec".into(), "selector".into()]),
            });
        Self {
            group: r.group.to_owned(),
            version: r.version.to_owned(),
            kind: r.kind.to_owned(),
            plural: r.plural.to_owned(),
            singular: r.singular.to_owned(),
            namespaced: r.namespaced,
            verbs: r.verbs.iter().map(|s| (*s).to_owned()).collect(),
            short_names: r.short_names.iter().map(|s| (*s).to_owned()).collect(),
            subresources,
            scale,
            custom: false,
            deprecation: deprecation(r.group, r.version, r.kind),
            categories: builtin_categories(r.group, r.plural),
            storage_version_hash: builtin_storage(r).map(|(g, v, k)| storage_version_hash(g, v, k)),
            schema: None,
            compiled: None,
            printer_columns: Vec::new(),
            selectable_fields: Arc::from([]),
            conversion: None,
        }
    }
}

/// Kubernetes version priority: GA before beta before alpha, then higher
/// numbers first (`v2 > v1 > v1beta2 > v1beta1 > v1alpha1`).
pub(crate) fn version_priority(v: &str) -> (u8, u32, u32) {
    let Some(rest) = v.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let major: u32 = digits.parse().unwrap_or(0);
    let tail = &rest[digits.len()..];
    let (tier, minor) = if tail.is_empty() {
        (3, 0)
    } else if let Some(n) = tail.strip_prefix("beta") {
        (2, n.parse().unwrap_or(0))
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, n.parse().unwrap_or(0))
    } else {
        (0, 0)
    };
    (tier, major, minor)
}

/// kube-apiserver's `storageVersionHash` of the kind `group`/`version`/
/// `kind` (`k8s.io/apiserver/pkg/endpoints/discovery`): the first 8 bytes
/// of the SHA-256 of `group/version/kind` (`/v1/Pod` for the core group),
/// in standard base64. Clients compare it to notice that a resource's
/// storage version changed (the storage version migrator does).
pub(crate) fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(format!("{group}/{version}/{kind}"));
    base64::engine::general_purpose::STANDARD.encode(&digest[..8])
}

/// Built-in resources kube-apiserver 1.35 stores in a version other than
/// the group's highest: `(group, plural, storage version)`. CRDs are still
/// stored as `v1beta1`; VolumeAttributesClass, GA in 1.34, as `v1beta1`
/// for one more release, so that a downgrade can read it.
const STORAGE_VERSIONS: &[(&str, &str, &str)] = &[
    (
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "v1beta1",
    ),
    ("storage.k8s.io", "volumeattributesclasses", "v1beta1"),
];

/// The group, version and kind a built-in resource is stored as, `None`
/// for one with no storage. Stored resources are the watchable ones (a
/// review, `bindings` or `componentstatuses` has no store to watch);
/// events of `events.k8s.io` are stored as core/v1 Events; every other is
/// stored in [`STORAGE_VERSIONS`]'s version, or else in the group's
/// highest version that serves it (`autoscaling/v2` for both versions of
/// HorizontalPodAutoscaler).
fn builtin_storage(r: &ResourceInfo) -> Option<(&'static str, &'static str, &'static str)> {
    if !r.verbs.contains(&"watch") {
        return None;
    }
    if r.group == "events.k8s.io" && r.plural == "events" {
        return Some(("", "v1", "Event"));
    }
    if let Some((_, _, v)) = STORAGE_VERSIONS
        .iter()
        .find(|(g, p, _)| *g == r.group && *p == r.plural)
    {
        return Some((r.group, v, r.kind));
    }
    let highest = RESOURCES
        .iter()
        .filter(|o| o.group == r.group && o.plural == r.plural)
        .max_by_key(|o| version_priority(o.version))?;
    Some((r.group, highest.version, r.kind))
}

/// kube-apiserver's categories of a built-in resource: `all` (what
/// `kubectl get all` lists) and `api-extensions` (the resources that
/// extend the API or its admission: every admissionregistration.k8s.io
/// resource, CRDs and APIServices).
fn builtin_categories(group: &str, plural: &str) -> Vec<String> {
    let extension = group == "admissionregistration.k8s.io"
        || matches!(
            (group, plural),
            ("apiextensions.k8s.io", "customresourcedefinitions")
                | ("apiregistration.k8s.io", "apiservices")
        );
    if extension {
        return vec!["api-extensions".to_owned()];
    }
    let all = matches!(
        (group, plural),
        ("", "pods" | "services" | "replicationcontrollers")
            | (
                "apps",
                "deployments" | "replicasets" | "statefulsets" | "daemonsets"
            )
            | ("batch", "jobs" | "cronjobs")
            | ("autoscaling", "horizontalpodautoscalers")
    );
    if all {
        vec!["all".to_owned()]
    } else {
        Vec::new()
    }
}

/// Deprecated built-in group-versions, with kube-apiserver's warning text.
fn deprecation(group: &str, version: &str, kind: &str) -> Option<String> {
    let replacement = match (group, version) {
        ("", "v1") if kind == "Endpoints" => "discovery.k8s.io/v1 EndpointSlice",
        ("", "v1") if kind == "ComponentStatus" => "",
        ("autoscaling", "v2beta2") => "autoscaling/v2 HorizontalPodAutoscaler",
        ("batch", "v1beta1") => "batch/v1 CronJob",
        ("policy", "v1beta1") => "policy/v1",
        ("flowcontrol.apiserver.k8s.io", "v1beta3") => "flowcontrol.apiserver.k8s.io/v1",
        _ => return None,
    };
    let gv = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    Some(if replacement.is_empty() {
        // ComponentStatus, deprecated without a replacement since v1.19.
        format!("{gv} {kind} is deprecated in v1.19+")
    } else if group.is_empty() && version == "v1" {
        format!("{gv} {kind} is deprecated in v1.33+; use {replacement}")
    } else {
        format!("{gv} {kind} is deprecated; use {replacement}")
    })
}

/// The built-in resources.
pub(crate) fn builtin() -> Vec<Arc<Resource>> {
    RESOURCES
        .iter()
        .map(|r| Arc::new(Resource::from_static(r)))
        .collect()
}

/// The versions a CustomResourceDefinition object serves.
fn served_versions(crd: &Value) -> impl Iterator<Item = &Value> {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v["served"].as_bool().unwrap_or(true))
}

/// Whether a CustomResourceDefinition object serves a resource: what
/// [`from_crd`] needs (a group, a plural, a kind, a served version with a
/// name), without compiling its schemas.
pub(crate) fn serves_any(crd: &Value) -> bool {
    let named = |p: &str| {
        crd.pointer(p)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    named("/spec/group")
        && named("/spec/names/plural")
        && named("/spec/names/kind")
        && served_versions(crd).any(|v| v["name"].is_string())
}

/// Resources a CustomResourceDefinition object serves, one per served version.
pub(crate) fn from_crd(crd: &Value) -> Vec<Arc<Resource>> {
    let spec = &crd["spec"];
    let names = &spec["names"];
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let group = s(&spec["group"]);
    let plural = s(&names["plural"]);
    let kind = s(&names["kind"]);
    if group.is_empty() || plural.is_empty() || kind.is_empty() {
        return Vec::new();
    }
    let storage_version_hash = spec["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["storage"].as_bool() == Some(true))
        .and_then(|v| v["name"].as_str())
        .map(|v| storage_version_hash(&group, v, &kind));
    let singular = match names["singular"].as_str() {
        Some(x) if !x.is_empty() => x.to_owned(),
        _ => kind.to_lowercase(),
    };
    let base = Resource {
        group,
        version: String::new(),
        kind,
        plural,
        singular,
        namespaced: spec["scope"].as_str() != Some("Cluster"),
        // In apiextensions-apiserver's order, not sorted (`kubectl
        // api-resources -o wide` prints them so).
        verbs: [
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "create",
            "update",
            "watch",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect(),
        short_names: strings(&names["shortNames"]),
        subresources: Vec::new(),
        scale: None,
        custom: true,
        deprecation: None,
        schema: None,
        compiled: None,
        printer_columns: Vec::new(),
        selectable_fields: Arc::from([]),
        categories: strings(&names["categories"]),
        storage_version_hash,
        conversion: ConversionWebhook::of_crd(crd),
    };
    served_versions(crd)
        .filter_map(|v| version_resource(&base, spec, v))
        .map(Arc::new)
        .collect()
}

/// The resource of the served CRD version `v`: `base` (the CRD's names,
/// scope and verbs) with the version's subresources, deprecation, schema,
/// columns and selectable fields. `None` for a version without a name.
fn version_resource(base: &Resource, spec: &Value, v: &Value) -> Option<Resource> {
    let version = v["name"].as_str()?.to_owned();
    let (subresources, scale) =
        subresources_of(v.get("subresources").or_else(|| spec.get("subresources")));
    let deprecation = v["deprecated"].as_bool().unwrap_or(false).then(|| {
        v["deprecationWarning"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| format!("{}/{version} {} is deprecated", base.group, base.kind))
    });
    // Compiled on first use; `/openapi` shares its source.
    let compiled = v
        .pointer("/schema/openAPIV3Schema")
        .map(crate::admission::schema::Lazy::of);
    let schema = compiled
        .as_ref()
        .map(crate::admission::schema::Lazy::source);
    Some(Resource {
        version,
        subresources,
        scale,
        deprecation,
        schema,
        compiled,
        printer_columns: v["additionalPrinterColumns"]
            .as_array()
            .cloned()
            .unwrap_or_default(),
        selectable_fields: v["selectableFields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["jsonPath"].as_str())
            .map(|p| p.trim_start_matches('.').to_owned())
            .collect(),
        ..base.clone()
    })
}

/// A CRD version's subresources (`status`, `scale`) and its scale paths.
fn subresources_of(sub: Option<&Value>) -> (Vec<String>, Option<ScalePaths>) {
    let mut subresources = Vec::new();
    if sub.and_then(|s| s.get("status")).is_some() {
        subresources.push("status".to_owned());
    }
    let scale = sub.and_then(|s| s.get("scale")).map(|sc| {
        subresources.push("scale".to_owned());
        ScalePaths {
            spec_replicas: parse_json_path(
                sc["specReplicasPath"].as_str().unwrap_or(".spec.replicas"),
            ),
            status_replicas: parse_json_path(
                sc["statusReplicasPath"]
                    .as_str()
                    .unwrap_or(".status.replicas"),
            ),
            label_selector: sc["labelSelectorPath"].as_str().map(parse_json_path),
        }
    });
    (subresources, scale)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn crd() -> Value {
        json!({"spec": {
            "group": "example.com", "scope": "Cluster",
            "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"], "categories": ["all"]},
            "subresources": {"status": {}},
            "versions": [
                {"name": "v1", "served": true, "storage": true,
                 "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size", "labelSelectorPath": ".status.sel"}},
                 "schema": {"openAPIV3Schema": {"type": "object"}},
                 "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
                 "selectableFields": [{"jsonPath": ".spec.color"}]},
                {"name": "v1beta1", "deprecated": true},
                {"name": "v1alpha1", "served": false, "deprecated": true, "deprecationWarning": "gone"},
            ],
        }})
    }

    #[test]
    fn a_crd_serves_one_resource_per_served_version() {
        let served = from_crd(&crd());
        let versions: Vec<&str> = served.iter().map(|r| r.version.as_str()).collect();
        assert_eq!(versions, ["v1", "v1beta1"]);
        for r in &served {
            assert_eq!(
                (
                    r.group.as_str(),
                    r.kind.as_str(),
                    r.plural.as_str(),
                    r.singular.as_str()
                ),
                ("example.com", "Widget", "widgets", "widget")
            );
            assert!(!r.namespaced && r.custom);
            assert_eq!(r.short_names, ["wd"]);
            assert_eq!(r.categories, ["all"]);
            assert_eq!(r.verbs.len(), 8);
        }
        let (v1, beta) = (&served[0], &served[1]);
        assert_eq!(v1.subresources, ["status", "scale"]);
        assert_eq!(
            v1.scale,
            Some(ScalePaths {
                spec_replicas: vec!["spec".to_owned(), "size".to_owned()],
                status_replicas: vec!["status".to_owned(), "size".to_owned()],
                label_selector: Some(vec!["status".to_owned(), "sel".to_owned()]),
            })
        );
        assert_eq!(v1.deprecation, None);
        assert_eq!(v1.schema.as_deref(), Some(&json!({"type": "object"})));
        assert!(v1.compiled.as_ref().is_some_and(|c| c.get().is_ok()));
        assert_eq!(v1.printer_columns.len(), 1);
        assert_eq!(&*v1.selectable_fields, ["spec.color".to_owned()]);
        // The CRD-level subresources hold for a version without its own.
        assert_eq!(beta.subresources, ["status"]);
        assert_eq!(beta.scale, None);
        assert_eq!(
            beta.deprecation.as_deref(),
            Some("example.com/v1beta1 Widget is deprecated")
        );
        assert_eq!((beta.schema.as_ref(), beta.compiled.as_ref()), (None, None));
        assert!(beta.printer_columns.is_empty() && beta.selectable_fields.is_empty());
    }

    #[test]
    fn versions_sort_by_kubernetes_priority() {
        let mut vs = vec!["v1beta1", "v1", "v2", "v1alpha1", "v2beta2", "v1beta2"];
        vs.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
        assert_eq!(
            vs,
            ["v2", "v1", "v2beta2", "v1beta2", "v1beta1", "v1alpha1"]
        );
    }

    #[test]
    fn storage_version_hashes_are_kube_apiservers() {
        // As kube-apiserver v1.35.4 answers in /api/v1 and /apis/apps/v1.
        assert_eq!(storage_version_hash("", "v1", "Pod"), "xPOwRZ+Yhw8=");
        assert_eq!(
            storage_version_hash("apps", "v1", "Deployment"),
            "8aSe+NMegvE="
        );
        let hash = |group: &str, version: &str, plural: &str| {
            builtin()
                .iter()
                .find(|r| r.group == group && r.version == version && r.plural == plural)
                .map(|r| r.storage_version_hash.clone())
                .expect("served")
        };
        // Stored in another version or group: the answers of v1.35.4.
        let stored_elsewhere = [
            (
                "autoscaling",
                "v1",
                "horizontalpodautoscalers",
                "qwQve8ut294=",
            ),
            (
                "autoscaling",
                "v2",
                "horizontalpodautoscalers",
                "qwQve8ut294=",
            ),
            ("events.k8s.io", "v1", "events", "r2yiGXH7wu8="),
            ("", "v1", "events", "r2yiGXH7wu8="),
            (
                "apiextensions.k8s.io",
                "v1",
                "customresourcedefinitions",
                "jfWCUB31mvA=",
            ),
            (
                "storage.k8s.io",
                "v1",
                "volumeattributesclasses",
                "Bl3MtjZ/n/s=",
            ),
        ];
        for (g, v, p, want) in stored_elsewhere {
            assert_eq!(hash(g, v, p).as_deref(), Some(want), "{g}/{v} {p}");
        }
        // No storage, no hash.
        for (g, v, p) in [
            ("", "v1", "bindings"),
            ("", "v1", "componentstatuses"),
            ("authentication.k8s.io", "v1", "tokenreviews"),
            ("authorization.k8s.io", "v1", "subjectaccessreviews"),
        ] {
            assert_eq!(hash(g, v, p), None, "{g}/{v} {p}");
        }
    }

    #[test]
    fn a_crd_is_hashed_by_its_storage_version() {
        let mut crd = crd();
        crd["spec"]["versions"][0]["storage"] = json!(false);
        crd["spec"]["versions"][1]["storage"] = json!(true);
        let want = storage_version_hash("example.com", "v1beta1", "Widget");
        for r in from_crd(&crd) {
            assert_eq!(r.storage_version_hash.as_deref(), Some(want.as_str()));
        }
        assert_ne!(want, storage_version_hash("example.com", "v1", "Widget"));
    }

    #[test]
    fn a_crd_without_group_plural_or_kind_serves_nothing() {
        for missing in ["/spec/group", "/spec/names/plural", "/spec/names/kind"] {
            let mut crd = crd();
            *crd.pointer_mut(missing).expect("present") = json!("");
            assert!(from_crd(&crd).is_empty(), "{missing}");
        }
    }
}

/// A CRD's `spec.conversion` with `strategy: Webhook` (called by
/// [`crate::conversion`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConversionWebhook {
    /// The storage version's `apiVersion` (`group/version`).
    pub(crate) storage: String,
    /// `clientConfig.url` (`None`: a `service`, which the embedded server
    /// cannot resolve, or nothing).
    pub(crate) url: Option<String>,
    /// `clientConfig.service` is set.
    service: bool,
    /// `clientConfig.caBundle` as it is stored (base64).
    ca_bundle: Option<String>,
    /// The review version to send: the first of `conversionReviewVersions`
    /// known (`None`: none is, and every call fails).
    pub(crate) review_version: Option<&'static str>,
}

impl ConversionWebhook {
    /// The conversion webhook of the CRD `crd` (`None`: another strategy).
    pub(crate) fn of_crd(crd: &Value) -> Option<Arc<ConversionWebhook>> {
        let spec = &crd["spec"];
        let conversion = &spec["conversion"];
        if conversion["strategy"].as_str() != Some("Webhook") {
            return None;
        }
        let group = spec["group"].as_str().unwrap_or_default();
        let storage = spec["versions"]
            .as_array()?
            .iter()
            .find(|v| v["storage"].as_bool() == Some(true))?["name"]
            .as_str()?;
        let hook = &conversion["webhook"];
        let cc = &hook["clientConfig"];
        let review_version = hook["conversionReviewVersions"]
            .as_array()
            .into_iter()
            .flatten()
            .find_map(|v| match v.as_str() {
                Some("v1") => Some("v1"),
                Some("v1beta1") => Some("v1beta1"),
                _ => None,
            });
        Some(Arc::new(ConversionWebhook {
            storage: format!("{group}/{storage}"),
            url: cc["url"].as_str().map(str::to_owned),
            service: cc["service"].is_object(),
            ca_bundle: cc["caBundle"].as_str().map(str::to_owned),
            review_version,
        }))
    }

    /// The URL to POST to, or why there is none.
    pub(crate) fn target(&self) -> Result<&str, String> {
        match (&self.url, self.service) {
            (Some(u), _) => Ok(u),
            (None, true) => Err(
                "the embedded server cannot resolve clientConfig.service (use clientConfig.url)"
                    .into(),
            ),
            (None, false) => Err("webhook configuration must have either service or URL".into()),
        }
    }

    /// The CA to trust, PEM (from `caBundle`, base64 on the wire).
    pub(crate) fn ca_pem(&self) -> Result<Option<Vec<u8>>, String> {
        match self.ca_bundle.as_deref() {
            None | Some("") => Ok(None),
            Some(b) => base64::engine::general_purpose::STANDARD
                .decode(b)
                .map(Some)
                .map_err(|e| format!("caBundle is not base64: {e}")),
        }
    }
}
