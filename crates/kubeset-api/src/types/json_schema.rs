//! The `JSON` and `JSONSchemaPropsOr*` types of CustomResourceDefinition
//! schemas, which the spec leaves empty.

use serde::{Deserialize, Serialize};

use crate::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;

/// Any JSON value (`default`, `enum` and `example` of a schema).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JSON(pub serde_json::Value);

/// `items`: one schema, or one schema per position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JSONSchemaPropsOrArray {
    /// One schema for every item.
    Schema(Box<JSONSchemaProps>),
    /// A schema per position.
    Schemas(Vec<JSONSchemaProps>),
}

/// `additionalProperties` and `additionalItems`: a schema, or a boolean.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JSONSchemaPropsOrBool {
    /// Allowed (`true`) or not (`false`).
    Bool(bool),
    /// A schema the values must match.
    Schema(Box<JSONSchemaProps>),
}

/// `dependencies` values: a schema, or a list of property names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JSONSchemaPropsOrStringArray {
    /// Required property names.
    Strings(Vec<String>),
    /// A schema.
    Schema(Box<JSONSchemaProps>),
}
