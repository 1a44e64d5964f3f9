//! kube-apiserver's built-in validation of the kinds' own fields, as
//! k8s.io/kubernetes v1.35 `pkg/apis/*/validation` does it: the same
//! causes (field path, reason) in the same order, with messages in
//! apimachinery's `field.Error` wording. Pure functions over the JSON
//! object; one module per API group ([`core`] and [`pod`] for the core
//! group, [`apps`], [`batch`], [`coordination`], [`rbac`]). Which kind is
//! validated by which is its strategy's: each kind's
//! [`crate::registry::Strategy::validate`] (`Validate`/`ValidateUpdate`)
//! calls its function here through [`collect`], as kube-apiserver's
//! strategies call `pkg/apis/<group>/validation`; admission runs it for
//! the built-in kinds. Nothing here depends on the rest of admission, so
//! the registry, below admission, may call it.
//!
//! The real server validates an object after its defaults, so a field the
//! defaults fill (a pod's `restartPolicy`, a port's `protocol`, a
//! Deployment's `strategy`, a Service's `type`, …) is read here as its
//! default when it is absent: validation neither depends on nor fails for
//! the defaults being written before it runs.
//!
//! Metadata (names, labels, annotations, finalizers, owner references) and
//! ConfigMap/Secret keys are `crate::validation`'s; immutable fields that
//! the registry carries over (a Service's cluster IPs, a Job's template)
//! are `crate::immutable`'s.

pub(crate) mod apps;
pub(crate) mod batch;
pub(crate) mod coordination;
pub(crate) mod core;
pub(crate) mod pod;
pub(crate) mod rbac;

use serde_json::Value;

use crate::validation::{self, Cause, NameRule};

/// Runs `check`, a kind's validation (called by its strategy's
/// [`crate::registry::Strategy::validate`]), and returns the causes it
/// found, in its order.
pub(crate) fn collect(check: impl FnOnce(&mut Errs)) -> Vec<Cause> {
    let mut e = Errs::default();
    check(&mut e);
    e.0
}

/// The causes collected so far, written as apimachinery's `field.Error`s.
#[derive(Debug, Default)]
pub(crate) struct Errs(pub(crate) Vec<Cause>);

impl Errs {
    fn push(&mut self, path: &str, reason: &'static str, message: String) {
        self.0.push((path.to_owned(), reason, message));
    }

    /// `field.Required`.
    pub(crate) fn required(&mut self, path: &str, detail: &str) {
        let msg = if detail.is_empty() {
            "Required value".to_owned()
        } else {
            format!("Required value: {detail}")
        };
        self.push(path, "FieldValueRequired", msg);
    }

    /// `field.Invalid`.
    pub(crate) fn invalid(&mut self, path: &str, value: &Value, detail: &str) {
        self.push(
            path,
            "FieldValueInvalid",
            format!("Invalid value: {}: {detail}", shown(value)),
        );
    }

    /// `field.Invalid` of a value already written as Go prints it.
    pub(crate) fn invalid_shown(&mut self, path: &str, shown: &str, detail: &str) {
        self.push(
            path,
            "FieldValueInvalid",
            format!("Invalid value: {shown}: {detail}"),
        );
    }

    /// `field.Invalid` of a label selector, written as Go's JSON writes
    /// one (`matchLabels` first).
    pub(crate) fn invalid_selector(&mut self, path: &str, sel: &Value, detail: &str) {
        self.push(
            path,
            "FieldValueInvalid",
            format!(
                "Invalid value: {}: {detail}",
                crate::immutable::shown_selector(sel)
            ),
        );
    }

    /// `field.NotSupported`.
    pub(crate) fn not_supported(&mut self, path: &str, value: &Value, supported: &[&str]) {
        let list: Vec<String> = supported.iter().map(|s| validation::go_quote(s)).collect();
        self.push(
            path,
            "FieldValueNotSupported",
            format!(
                "Unsupported value: {}: supported values: {}",
                shown(value),
                list.join(", ")
            ),
        );
    }

    /// `field.NotSupported` of a value already written as Go prints it.
    pub(crate) fn not_supported_shown(&mut self, path: &str, shown: &str, supported: &[&str]) {
        let list: Vec<String> = supported.iter().map(|s| validation::go_quote(s)).collect();
        self.push(
            path,
            "FieldValueNotSupported",
            format!(
                "Unsupported value: {shown}: supported values: {}",
                list.join(", ")
            ),
        );
    }

    /// `field.Duplicate`.
    pub(crate) fn duplicate(&mut self, path: &str, value: &Value) {
        self.push(
            path,
            "FieldValueDuplicate",
            format!("Duplicate value: {}", shown(value)),
        );
    }

    /// `field.Forbidden`.
    pub(crate) fn forbidden(&mut self, path: &str, detail: &str) {
        self.push(path, "FieldValueForbidden", format!("Forbidden: {detail}"));
    }

    /// `field.NotFound`.
    pub(crate) fn not_found(&mut self, path: &str, value: &Value) {
        self.push(
            path,
            "FieldValueNotFound",
            format!("Not found: {}", shown(value)),
        );
    }

    /// One `field.Invalid` of the string `value` per message.
    pub(crate) fn invalid_each(&mut self, path: &str, value: &str, msgs: Vec<String>) {
        for m in msgs {
            self.invalid(path, &Value::String(value.to_owned()), &m);
        }
    }

    /// `ValidateNonnegativeField`.
    pub(crate) fn nonnegative(&mut self, path: &str, v: Option<i64>) {
        if let Some(n) = v.filter(|n| *n < 0) {
            self.invalid(path, &n.into(), "must be greater than or equal to 0");
        }
    }

    /// `ValidateDNS1123Label`.
    pub(crate) fn dns_label(&mut self, path: &str, v: &str) {
        self.invalid_each(path, v, validation::problems(NameRule::Label, v));
    }

    /// `ValidateDNS1123Subdomain`.
    pub(crate) fn dns_subdomain(&mut self, path: &str, v: &str) {
        self.invalid_each(path, v, validation::problems(NameRule::Subdomain, v));
    }

    /// `ValidateLabels` of a map at `path` (`nodeSelector`, a Service's
    /// `selector`, a template's labels).
    pub(crate) fn labels(&mut self, path: &str, map: &Value) {
        for (k, v) in map.as_object().into_iter().flatten() {
            self.invalid_each(path, k, validation::qualified_name_problems(k, "label key"));
            let v = v.as_str().unwrap_or_default();
            self.invalid_each(path, v, validation::label_value_problems(v));
        }
    }

    /// `ValidateLabelName` (a qualified name) of one key at `path`.
    pub(crate) fn label_name(&mut self, path: &str, key: &str) {
        self.invalid_each(
            path,
            key,
            validation::qualified_name_problems(key, "label key"),
        );
    }
}

/// A value as `field.Error` prints it: strings quoted, numbers plain, the
/// rest as compact JSON.
fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => validation::go_quote(s),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

/// An update strategy as Go prints the internal struct in a message
/// (`{"Type":"Bad","RollingUpdate":null}`: exported field names, declared
/// order); `fields` maps the rolling update's JSON keys to its Go fields,
/// `ints` naming the non-pointer integers (printed as 0 when absent).
pub(crate) fn go_strategy(st: &Value, fields: &[(&str, &str)], ints: &[&str]) -> String {
    let ru = st
        .get("rollingUpdate")
        .filter(|v| !v.is_null())
        .map_or_else(|| "null".to_owned(), |ru| go_fields(ru, fields, ints));
    format!(
        "{{\"Type\":{},\"RollingUpdate\":{ru}}}",
        Value::String(s(st, "type").to_owned())
    )
}

/// An object's `fields` (JSON key, Go field) as Go prints the internal
/// struct: `null` for an absent pointer, 0 for an absent one of `ints`.
pub(crate) fn go_fields(v: &Value, fields: &[(&str, &str)], ints: &[&str]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .map(|(json, go)| {
            let text = match v.get(*json).filter(|x| !x.is_null()) {
                Some(x) => x.to_string(),
                None if ints.contains(json) => "0".to_owned(),
                None => "null".to_owned(),
            };
            format!("\"{go}\":{text}")
        })
        .collect();
    format!("{{{}}}", parts.join(","))
}

/// The string at `key` of `v`, `""` when absent or not a string (Go's
/// zero value).
pub(crate) fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The integer at `key` of `v`, if any.
pub(crate) fn int(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(Value::as_i64)
}

/// The list at `key` of `v` (empty when absent).
pub(crate) fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Whether `key` of `v` holds something other than `null`.
pub(crate) fn has(v: &Value, key: &str) -> bool {
    v.get(key).is_some_and(|x| !x.is_null())
}

/// `ValidateLabelSelector` at `path`; returns whether the selector also
/// converts (`LabelSelectorAsSelector` succeeds), as the callers check
/// the template against it only then.
pub(crate) fn label_selector(e: &mut Errs, sel: &Value, path: &str) -> bool {
    let before = e.0.len();
    for (i, req) in list(sel, "matchExpressions").iter().enumerate() {
        let p = format!("{path}.matchExpressions[{i}]");
        let values = list(req, "values");
        match s(req, "operator") {
            "In" | "NotIn" => {
                if values.is_empty() {
                    e.required(
                        &format!("{p}.values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    );
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    e.forbidden(
                        &format!("{p}.values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    );
                }
            }
            op => e.invalid(
                &format!("{p}.operator"),
                &op.into(),
                "not a valid selector operator",
            ),
        }
        e.label_name(&format!("{p}.key"), s(req, "key"));
    }
    if let Some(m) = sel.get("matchLabels") {
        e.labels(&format!("{path}.matchLabels"), m);
    }
    e.0.len() == before
}

/// The selector selects the template's labels (a missing selector selects
/// nothing, an empty one everything).
pub(crate) fn selects_template(e: &mut Errs, sel: &Value, tmpl: &Value) {
    let labels = tmpl
        .pointer("/metadata/labels")
        .cloned()
        .unwrap_or(Value::Null);
    if !selects(sel, &labels) {
        e.invalid(
            "spec.template.metadata.labels",
            &labels,
            "`selector` does not match template `labels`",
        );
    }
}

/// Whether the label selector `sel` selects `labels` (`null` selects
/// nothing, `{}` everything).
pub(crate) fn selects(sel: &Value, labels: &Value) -> bool {
    if sel.is_null() {
        return false;
    }
    let get = |k: &str| labels.get(k).and_then(Value::as_str);
    let by_labels = sel
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .all(|(k, v)| get(k) == v.as_str());
    by_labels
        && list(sel, "matchExpressions").iter().all(|r| {
            let have = get(s(r, "key"));
            let among = |x: &str| list(r, "values").iter().any(|v| v.as_str() == Some(x));
            match s(r, "operator") {
                "In" => have.is_some_and(among),
                "NotIn" => !have.is_some_and(among),
                "Exists" => have.is_some(),
                "DoesNotExist" => have.is_none(),
                _ => false,
            }
        })
}

/// Whether a selector has neither `matchLabels` nor `matchExpressions`
/// entries (`labels.Selector.Empty()` of a converted `{}`).
pub(crate) fn selector_is_empty(sel: &Value) -> bool {
    let n = |k: &str| {
        sel.get(k)
            .map(|v| v.as_object().map_or(0, |o| o.len()) + v.as_array().map_or(0, Vec::len))
            .unwrap_or(0)
    };
    n("matchLabels") + n("matchExpressions") == 0
}

/// `IsValidPortNum`.
pub(crate) fn port_num_problems(n: i64) -> Vec<String> {
    if (1..=65535).contains(&n) {
        Vec::new()
    } else {
        vec!["must be between 1 and 65535, inclusive".into()]
    }
}

/// `IsValidPortName` (IANA_SVC_NAME).
pub(crate) fn port_name_problems(p: &str) -> Vec<String> {
    let mut out = Vec::new();
    if p.len() > 15 {
        out.push("must be no more than 15 characters".into());
    }
    if p.is_empty()
        || !p
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
    {
        out.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !p.bytes().any(|c| c.is_ascii_lowercase()) {
        out.push("must contain at least one letter (a-z)".into());
    }
    if p.contains("--") {
        out.push("must not contain consecutive hyphens".into());
    }
    if p.starts_with('-') || p.ends_with('-') {
        out.push("must not begin or end with a hyphen".into());
    }
    out
}

/// An int-or-string as intstr holds it: the number, or the percentage of
/// a valid `N%` string.
pub(crate) enum IntOrPercent {
    Int(i64),
    Percent(Option<i64>),
}

impl IntOrPercent {
    pub(crate) fn of(v: &Value) -> Self {
        match v {
            Value::String(s) => Self::Percent(
                s.strip_suffix('%')
                    .filter(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()))
                    .and_then(|d| d.parse().ok()),
            ),
            other => Self::Int(other.as_i64().unwrap_or(0)),
        }
    }

    /// `getIntOrPercentValue`: an invalid percentage counts as 0.
    pub(crate) fn value(&self) -> i64 {
        match self {
            Self::Int(n) | Self::Percent(Some(n)) => *n,
            Self::Percent(None) => 0,
        }
    }
}

/// `ValidatePositiveIntOrPercent` and, with `max100`,
/// `IsNotMoreThan100Percent`.
pub(crate) fn int_or_percent(e: &mut Errs, v: &Value, path: &str, max100: bool) {
    match IntOrPercent::of(v) {
        IntOrPercent::Percent(None) => e.invalid(
            path,
            v,
            "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
        ),
        IntOrPercent::Int(n) => e.nonnegative(path, Some(n)),
        IntOrPercent::Percent(Some(_)) => {}
    }
    if max100 && matches!(IntOrPercent::of(v), IntOrPercent::Percent(Some(p)) if p > 100) {
        e.invalid(path, v, "must not be greater than 100%");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn selectors_as_apimachinery() {
        let labels = json!({"app": "a", "tier": "web"});
        assert!(selects(&json!({}), &labels));
        assert!(!selects(&Value::Null, &labels));
        assert!(selects(&json!({"matchLabels": {"app": "a"}}), &labels));
        assert!(!selects(
            &json!({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["web"]}]}),
            &labels
        ));
        let mut e = Errs::default();
        let ok = label_selector(
            &mut e,
            &json!({"matchExpressions": [{"key": "a", "operator": "Near"}]}),
            "spec.selector",
        );
        assert!(!ok);
        assert_eq!(e.0[0].0, "spec.selector.matchExpressions[0].operator");
        assert!(selector_is_empty(&json!({"matchLabels": {}})));
    }

    #[test]
    fn strategies_as_go_prints_them() {
        let f = &[
            ("maxUnavailable", "MaxUnavailable"),
            ("maxSurge", "MaxSurge"),
        ];
        assert_eq!(
            go_strategy(&json!({"type": "Bad"}), f, &[]),
            r#"{"Type":"Bad","RollingUpdate":null}"#
        );
        assert_eq!(
            go_strategy(
                &json!({"type": "X", "rollingUpdate": {"maxSurge": "10%"}}),
                f,
                &[]
            ),
            r#"{"Type":"X","RollingUpdate":{"MaxUnavailable":null,"MaxSurge":"10%"}}"#
        );
    }

    #[test]
    fn ports_and_percentages() {
        assert!(port_name_problems("http-2").is_empty());
        assert_eq!(port_name_problems("123").len(), 1);
        assert_eq!(port_name_problems("Web_1").len(), 1);
        assert_eq!(port_num_problems(0).len(), 1);
        assert_eq!(IntOrPercent::of(&json!("25%")).value(), 25);
        assert_eq!(IntOrPercent::of(&json!("x")).value(), 0);
        let mut e = Errs::default();
        int_or_percent(&mut e, &json!("150%"), "m", true);
        int_or_percent(&mut e, &json!(-1), "n", false);
        let reasons: Vec<_> = e.0.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(reasons, ["m", "n"]);
    }
}
