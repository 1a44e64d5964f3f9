//! The field labels kube-apiserver v1.35 accepts in `fieldSelector`, per
//! kind, with the JSON path each one reads and the real server's error
//! text for any other label. From the `AddFieldLabelConversionFunc` calls
//! in k8s.io/kubernetes v1.35 `pkg/apis/*/v1/conversion.go` and the
//! `ToSelectableFields`/`GetAttrs` functions of the registries; kinds
//! without one get apimachinery's `DefaultMetaV1FieldSelectorConversion`;
//! custom resources their CRD version's `selectableFields` (a missing
//! field reads `""` there, not a zero value).

use std::sync::Arc;

use serde_json::Value;

/// How a field's value is written in a selector (Go's zero value when the
/// field is absent: `""`, `false`, `0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Render {
    Str,
    Bool,
    Int,
    /// `status.podIP`: the first of `status.podIPs`, else `status.podIP`
    /// (the internal Pod has only the list).
    PodIp,
    /// A label the conversion accepts but the field set never fills
    /// (`status.podIPs`): always `""`.
    Never,
}

/// One selectable field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Field {
    pub(crate) label: &'static str,
    pointer: &'static str,
    render: Render,
}

const fn f(label: &'static str, pointer: &'static str, render: Render) -> Field {
    Field {
        label,
        pointer,
        render,
    }
}

const NAME: Field = f("metadata.name", "/metadata/name", Render::Str);
const NAMESPACE: Field = f("metadata.namespace", "/metadata/namespace", Render::Str);

/// How the real server words a label it does not support.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unknown {
    /// `field label not supported: X`
    NotSupported,
    /// `"X" is not a known field selector: only "metadata.name", "metadata.namespace"`
    Default,
    /// `field label "X" not supported for Job`
    Job,
    /// `field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: X`
    ResourceSlice,
}

/// The selectable fields of one kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldSet {
    fields: &'static [Field],
    /// A custom resource's `selectableFields` (labels, which are also
    /// their paths).
    custom: Option<Arc<[String]>>,
    unknown: Unknown,
}

const DEFAULT: FieldSet = FieldSet {
    fields: &[NAME, NAMESPACE],
    custom: None,
    unknown: Unknown::Default,
};

impl Default for FieldSet {
    fn default() -> Self {
        DEFAULT
    }
}

use Render::{Bool, Int, Never, PodIp, Str};

pub(crate) const PODS: &[Field] = &[
    NAME,
    NAMESPACE,
    f("spec.nodeName", "/spec/nodeName", Str),
    f("spec.restartPolicy", "/spec/restartPolicy", Str),
    f("spec.schedulerName", "/spec/schedulerName", Str),
    f("spec.serviceAccountName", "/spec/serviceAccountName", Str),
    f("spec.hostNetwork", "/spec/hostNetwork", Bool),
    f("status.phase", "/status/phase", Str),
    f("status.podIP", "/status/podIP", PodIp),
    f("status.podIPs", "/status/podIPs", Never),
    f("status.nominatedNodeName", "/status/nominatedNodeName", Str),
];
pub(crate) const CORE_EVENTS: &[Field] = &[
    f("involvedObject.kind", "/involvedObject/kind", Str),
    f("involvedObject.namespace", "/involvedObject/namespace", Str),
    f("involvedObject.name", "/involvedObject/name", Str),
    f("involvedObject.uid", "/involvedObject/uid", Str),
    f(
        "involvedObject.apiVersion",
        "/involvedObject/apiVersion",
        Str,
    ),
    f(
        "involvedObject.resourceVersion",
        "/involvedObject/resourceVersion",
        Str,
    ),
    f("involvedObject.fieldPath", "/involvedObject/fieldPath", Str),
    f("reason", "/reason", Str),
    f("reportingComponent", "/reportingComponent", Str),
    f("source", "/source/component", Str),
    f("type", "/type", Str),
    NAMESPACE,
    NAME,
];
/// events.k8s.io labels, read from the stored core shape (the real server
/// maps them onto core's field set the same way).
pub(crate) const EVENTS_V1: &[Field] = &[
    f("reason", "/reason", Str),
    f("regarding.kind", "/involvedObject/kind", Str),
    f("regarding.namespace", "/involvedObject/namespace", Str),
    f("regarding.name", "/involvedObject/name", Str),
    f("regarding.uid", "/involvedObject/uid", Str),
    f("regarding.apiVersion", "/involvedObject/apiVersion", Str),
    f(
        "regarding.resourceVersion",
        "/involvedObject/resourceVersion",
        Str,
    ),
    f("regarding.fieldPath", "/involvedObject/fieldPath", Str),
    f("reportingController", "/reportingComponent", Str),
    f("type", "/type", Str),
    NAMESPACE,
    NAME,
];
pub(crate) const NODES: &[Field] = &[NAME, f("spec.unschedulable", "/spec/unschedulable", Bool)];
pub(crate) const RCS: &[Field] = &[
    NAME,
    NAMESPACE,
    f("status.replicas", "/status/replicas", Int),
];
pub(crate) const NAMESPACES: &[Field] = &[f("status.phase", "/status/phase", Str), NAME];
pub(crate) const SECRETS: &[Field] = &[f("type", "/type", Str), NAMESPACE, NAME];
pub(crate) const SERVICES: &[Field] = &[
    NAMESPACE,
    NAME,
    f("spec.clusterIP", "/spec/clusterIP", Str),
    f("spec.type", "/spec/type", Str),
];
pub(crate) const CSRS: &[Field] = &[NAME, f("spec.signerName", "/spec/signerName", Str)];
pub(crate) const JOBS: &[Field] = &[
    NAME,
    NAMESPACE,
    f("status.successful", "/status/succeeded", Int),
];
pub(crate) const SLICES: &[Field] = &[
    NAME,
    f("spec.nodeName", "/spec/nodeName", Str),
    f("spec.driver", "/spec/driver", Str),
];

impl FieldSet {
    /// The field set of a built-in kind: `fields` (which list name and
    /// namespace where the kind selects on them), and how the real server
    /// words any other label.
    pub(crate) const fn builtin(fields: &'static [Field], unknown: Unknown) -> Self {
        Self {
            fields,
            custom: None,
            unknown,
        }
    }

    /// The field set of a custom resource: name, namespace and its CRD
    /// version's `selectableFields`.
    pub(crate) fn custom(selectable: Arc<[String]>) -> Self {
        Self {
            fields: &[NAME, NAMESPACE],
            custom: Some(selectable),
            unknown: Unknown::NotSupported,
        }
    }

    /// The canonical label for `label` (pods still take `spec.host`), or
    /// the real server's error text.
    pub(crate) fn resolve(&self, label: &str) -> Result<String, String> {
        let label = if label == "spec.host" && self.fields == PODS {
            "spec.nodeName"
        } else {
            label
        };
        if let Some(found) = self.fields.iter().find(|x| x.label == label) {
            return Ok(found.label.to_owned());
        }
        if let Some(found) = self
            .custom
            .iter()
            .flat_map(|c| c.iter())
            .find(|c| *c == label)
        {
            return Ok(found.clone());
        }
        Err(match self.unknown {
            Unknown::NotSupported => format!("field label not supported: {label}"),
            Unknown::Default => format!(
                "\"{label}\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
            ),
            Unknown::Job => format!("field label \"{label}\" not supported for Job"),
            Unknown::ResourceSlice => {
                format!(
                    "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: {label}"
                )
            }
        })
    }

    /// The value of a (resolved) label on `obj`, as the server's field set
    /// writes it; labels outside the set read as `""`.
    pub(crate) fn value(&self, obj: &Value, label: &str) -> String {
        if let Some(custom) = self
            .custom
            .iter()
            .flat_map(|c| c.iter())
            .find(|c| *c == label)
        {
            return custom_value(obj, custom);
        }
        let Some(field) = self
            .fields
            .iter()
            .chain([NAME, NAMESPACE].iter())
            .find(|x| x.label == label)
        else {
            return String::new();
        };
        let v = obj.pointer(field.pointer);
        match field.render {
            Str => v.and_then(Value::as_str).unwrap_or("").to_owned(),
            Bool => v.and_then(Value::as_bool).unwrap_or(false).to_string(),
            Int => v.and_then(Value::as_i64).unwrap_or(0).to_string(),
            PodIp => obj
                .pointer("/status/podIPs/0/ip")
                .or(v)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            Never => String::new(),
        }
    }
}

/// A selectable field of a custom resource at the dotted `path`: strings
/// as they are, numbers and booleans as written, anything missing `""`.
fn custom_value(obj: &Value, path: &str) -> String {
    let v = path.split('.').try_fold(obj, |cur, key| cur.get(key));
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}
