//! CEL validation rules as kube-rs's `kube::core::{Rule, Message, Reason}`
//! write them: built in Rust, serialised as one entry of a schema's
//! `x-kubernetes-validations`, and added to a schema with [`validate_rule`]
//! (what `#[kube(validation = Rule::new("…"))]` expands to).

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{JSONSchemaProps, ValidationRule};

/// A CEL validation rule: one entry of `x-kubernetes-validations`.
///
/// Serialises as kube-rs's `Rule` does (camelCase keys, unset fields
/// left out, the message as `message` or `messageExpression`):
///
/// ```
/// use kubeset_api::schema::{Message, Reason, Rule};
/// let r = Rule::new("self.size > 0")
///     .message(Message::Expression("'size is ' + string(self.size)".into()))
///     .reason(Reason::FieldValueForbidden)
///     .field_path(".size");
/// assert_eq!(
///     serde_json::to_string(&r).unwrap(),
///     r#"{"rule":"self.size > 0","messageExpression":"'size is ' + string(self.size)","fieldPath":".size","reason":"FieldValueForbidden"}"#,
/// );
/// ```
#[derive(Default, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// The CEL expression; `self` is the value at the schema's node.
    pub rule: String,
    /// The message on failure (the server's default is
    /// `failed rule: {rule}`).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// The path, relative to the node, the failure is reported at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field_path: Option<String>,
    /// The machine-readable reason of the failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    /// Whether a transition rule (one reading `oldSelf`) also runs on
    /// create, with `oldSelf` an optional.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optional_old_self: Option<bool>,
}

impl Rule {
    /// A rule with only its expression.
    ///
    /// ```
    /// use kubeset_api::schema::Rule;
    /// assert_eq!(Rule::new("self == oldSelf").rule, "self == oldSelf");
    /// ```
    #[must_use]
    pub fn new(rule: impl Into<String>) -> Self {
        Self {
            rule: rule.into(),
            ..Self::default()
        }
    }

    /// Sets the failure message (a `&str` is a plain message).
    ///
    /// ```
    /// use kubeset_api::schema::{Message, Rule};
    /// let r = Rule::new("self == oldSelf").message("is immutable");
    /// assert_eq!(r.message, Some(Message::Message("is immutable".into())));
    /// ```
    #[must_use]
    pub fn message(mut self, message: impl Into<Message>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// Sets the failure reason.
    ///
    /// ```
    /// use kubeset_api::schema::{Reason, Rule};
    /// let r = Rule::new("self == oldSelf").reason(Reason::default());
    /// assert_eq!(r.reason, Some(Reason::FieldValueInvalid));
    /// ```
    #[must_use]
    pub fn reason(mut self, reason: impl Into<Reason>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// Sets the field path the failure is reported at.
    ///
    /// ```
    /// use kubeset_api::schema::Rule;
    /// let r = Rule::new("self.a == self.b").field_path(".b");
    /// assert_eq!(r.field_path.as_deref(), Some(".b"));
    /// ```
    #[must_use]
    pub fn field_path(mut self, field_path: impl Into<String>) -> Self {
        self.field_path = Some(field_path.into());
        self
    }

    /// Sets `optionalOldSelf`.
    ///
    /// ```
    /// use kubeset_api::schema::Rule;
    /// let r = Rule::new("oldSelf.optMap(o, o == self).orValue(true)").optional_old_self(true);
    /// assert_eq!(r.optional_old_self, Some(true));
    /// ```
    #[must_use]
    pub fn optional_old_self(mut self, optional: bool) -> Self {
        self.optional_old_self = Some(optional);
        self
    }
}

impl From<&str> for Rule {
    fn from(rule: &str) -> Self {
        Self::new(rule)
    }
}

impl From<(&str, &str)> for Rule {
    fn from((rule, message): (&str, &str)) -> Self {
        Self::new(rule).message(message)
    }
}

impl From<Rule> for ValidationRule {
    fn from(r: Rule) -> Self {
        let (message, message_expression) = match r.message {
            Some(Message::Message(m)) => (Some(m), None),
            Some(Message::Expression(e)) => (None, Some(e)),
            None => (None, None),
        };
        ValidationRule {
            rule: r.rule,
            message,
            message_expression,
            field_path: r.field_path,
            reason: r.reason.map(|reason| reason.as_str().to_owned()),
            optional_old_self: r.optional_old_self,
        }
    }
}

/// A rule's failure message: fixed text or a CEL expression giving it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Message {
    /// The message as written (`message`); one line.
    Message(String),
    /// A CEL expression evaluating to the message (`messageExpression`),
    /// with the rule's variables.
    #[serde(rename = "messageExpression")]
    Expression(String),
}

impl From<&str> for Message {
    fn from(message: &str) -> Self {
        Message::Message(message.to_owned())
    }
}

/// Why a rule failed, as the server reports it
/// ([the field's docs](https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#field-reason)).
#[derive(Serialize, Deserialize, Clone, Copy, Default, Debug, PartialEq, Eq)]
pub enum Reason {
    /// A malformed value (the default).
    #[default]
    FieldValueInvalid,
    /// A well-formed value not allowed here.
    FieldValueForbidden,
    /// A missing value.
    FieldValueRequired,
    /// A value colliding with another that must be unique.
    FieldValueDuplicate,
}

impl Reason {
    /// The name the schema holds (`"FieldValueInvalid"`, …).
    ///
    /// ```
    /// use kubeset_api::schema::Reason;
    /// assert_eq!(Reason::FieldValueRequired.as_str(), "FieldValueRequired");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::FieldValueInvalid => "FieldValueInvalid",
            Reason::FieldValueForbidden => "FieldValueForbidden",
            Reason::FieldValueRequired => "FieldValueRequired",
            Reason::FieldValueDuplicate => "FieldValueDuplicate",
        }
    }
}

impl FromStr for Reason {
    type Err = serde_json::Error;

    /// Parses a reason as kube-rs does: a JSON string (`"\"FieldValueInvalid\""`);
    /// the bare name is accepted too.
    ///
    /// ```
    /// use kubeset_api::schema::Reason;
    /// assert_eq!("\"FieldValueDuplicate\"".parse::<Reason>().unwrap(), Reason::FieldValueDuplicate);
    /// assert_eq!("FieldValueDuplicate".parse::<Reason>().unwrap(), Reason::FieldValueDuplicate);
    /// assert!("Other".parse::<Reason>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        serde_json::from_str(s).or_else(|_| serde_json::from_value(s.into()))
    }
}

/// Appends `rule` to the node's `x-kubernetes-validations`, after the
/// rules already there.
///
/// ```
/// use kubeset_api::schema::{JSONSchemaProps, Rule, validate_rule};
/// let mut s = JSONSchemaProps::default();
/// validate_rule(&mut s, "self.a > 0");
/// validate_rule(&mut s, Rule::new("self == oldSelf").message("is immutable"));
/// let rules = s.x_kubernetes_validations.unwrap();
/// assert_eq!(rules[1].message.as_deref(), Some("is immutable"));
/// ```
pub fn validate_rule(schema: &mut JSONSchemaProps, rule: impl Into<Rule>) {
    schema
        .x_kubernetes_validations
        .get_or_insert_with(Vec::new)
        .push(rule.into().into());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule, written as JSON and as the model, has the same keys and
    /// values: what kube-rs puts in the CRD is what lands in ours.
    #[test]
    fn serialisation_matches_the_model() {
        let cases = [
            Rule::new("self == oldSelf"),
            Rule::new("a")
                .message("m")
                .reason(Reason::FieldValueRequired),
            Rule::new("b")
                .message(Message::Expression("'x'".into()))
                .field_path(".f")
                .optional_old_self(true)
                .reason(Reason::FieldValueDuplicate),
        ];
        for rule in cases {
            let ours = serde_json::to_value(&rule).unwrap();
            let model = serde_json::to_value(ValidationRule::from(rule.clone())).unwrap();
            assert_eq!(ours, model, "{rule:?}");
            let back: Rule = serde_json::from_value(ours).unwrap();
            assert_eq!(back, rule);
        }
    }

    #[test]
    fn exact_json_of_a_message_rule() {
        let r = Rule::new("self == oldSelf").message("field is immutable");
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"rule":"self == oldSelf","message":"field is immutable"}"#
        );
        let r: Rule = ("x > 1", "too small").into();
        assert_eq!(r.message, Some(Message::Message("too small".into())));
    }
}
