//! The generator's error type.

use std::path::PathBuf;

/// Everything that can stop generation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodegenError {
    /// A spec file or directory could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A spec file is not a valid OpenAPI document.
    #[error("cannot parse {path}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// The spec directory holds neither `openapi-v3/` nor `swagger.json`.
    #[error("no OpenAPI input in {dir} (expected openapi-v3/ or swagger.json)")]
    NoInput {
        /// The directory searched.
        dir: PathBuf,
    },
    /// A property has another type in an older version than in a newer one
    /// (the merged tree has one type per field).
    #[error("{definition}.{property} changes type between the merged versions")]
    VersionConflict {
        /// The definition.
        definition: String,
        /// The JSON property.
        property: String,
    },
    /// A definition name does not follow `io.k8s.<path>.<Type>`.
    #[error("definition {definition:?} does not map to a Rust path")]
    BadDefinitionName {
        /// The definition.
        definition: String,
    },
    /// A schema uses a construct the generator does not support.
    #[error("unsupported schema at {definition}.{property}: {reason}")]
    UnsupportedSchema {
        /// The definition.
        definition: String,
        /// The property, empty for the definition itself.
        property: String,
        /// What is unsupported.
        reason: String,
    },
    /// A `$ref` names no definition.
    #[error("{definition} refers to unknown {reference:?}")]
    UnresolvedRef {
        /// The referring definition.
        definition: String,
        /// The reference.
        reference: String,
    },
    /// Two spec names map to the same Rust name.
    #[error("{first:?} and {second:?} both map to {rust:?} in {scope}")]
    NameCollision {
        /// Where the collision is (a type or module).
        scope: String,
        /// The Rust name.
        rust: String,
        /// One spec name.
        first: String,
        /// The other spec name.
        second: String,
    },
    /// A named fixup found nothing to fix: upstream changed, remove or update it.
    #[error("fixup {fixup} no longer applies: {reason}")]
    FixupNoLongerApplies {
        /// The fixup's name.
        fixup: &'static str,
        /// What it expected.
        reason: String,
    },
    /// A hand-written type's definition is missing from the input.
    #[error("hand-written type for {definition} has no definition in the input")]
    MissingHandWritten {
        /// The definition.
        definition: String,
    },
    /// A definition produced no type, or more than one.
    #[error("definition {definition} produced {count} types, expected exactly one")]
    TypeCount {
        /// The definition.
        definition: String,
        /// How many types it produced.
        count: usize,
    },
    /// The always-compiled apimachinery types refer to a feature-gated type.
    #[error("{definition} (always compiled) refers to {target} behind feature {feature}")]
    UngatedReference {
        /// The referring definition.
        definition: String,
        /// The referenced definition.
        target: String,
        /// Its feature.
        feature: String,
    },
    /// A type whose inline size is unknown: a hand-written type missing
    /// from the layout table, or a reference to a type not yet laid out.
    #[error("no layout for {target} (needed by {definition})")]
    UnknownLayout {
        /// The definition being laid out.
        definition: String,
        /// The type without a layout.
        target: String,
    },
    /// A type holds itself inline (a cycle the `Box` pass missed).
    #[error("{definition} contains itself without a Box")]
    InlineCycle {
        /// A definition on the cycle.
        definition: String,
    },
    /// A manifest file is not valid YAML or JSON.
    #[error("cannot parse {path} as YAML or JSON")]
    Yaml {
        /// The file.
        path: PathBuf,
        /// The YAML error.
        #[source]
        source: serde_norway::Error,
    },
    /// A CustomResourceDefinition in a manifest does not have the shape of
    /// `apiextensions.k8s.io/v1`.
    #[error("{path}: CustomResourceDefinition {name:?} is malformed")]
    Manifest {
        /// The file (or `cluster`).
        path: PathBuf,
        /// `metadata.name`, when present.
        name: String,
        /// The decode error.
        #[source]
        source: serde_json::Error,
    },
    /// A manifest file is larger than [`crate::crd::MAX_MANIFEST_BYTES`].
    #[error("{path} is {size} bytes, more than the {limit} a manifest may have")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// A CRD's group or version does not make a Rust module name.
    #[error("CustomResourceDefinition {crd:?}: {what} {value:?} does not make a Rust module name")]
    BadModuleName {
        /// The CRD's name.
        crd: String,
        /// `group` or `version`.
        what: &'static str,
        /// The value.
        value: String,
    },
    /// A CRD name (kind, group, version) from which no Rust name can be made.
    #[error("CustomResourceDefinition {crd:?}: {what} {value:?} makes no Rust name ({reason})")]
    BadName {
        /// The CRD's `metadata.name`.
        crd: String,
        /// Where the name is (`spec.names.kind`, `spec.group`, `spec.versions[].name`).
        what: &'static str,
        /// The name.
        value: String,
        /// Why.
        reason: &'static str,
    },
    /// A manifest nests collections deeper than the limit (checked before
    /// parsing, so that the parser's work stays linear).
    #[error("{path}: nesting deeper than {limit} levels at line {line}")]
    TooDeep {
        /// The file.
        path: PathBuf,
        /// The line (1-based) where the limit was passed.
        line: usize,
        /// The limit ([`crate::crd::MAX_NESTING`]).
        limit: usize,
    },
    /// A schema nests deeper than [`crate::schema::MAX_SCHEMA_DEPTH`].
    #[error("schema of {definition} nests deeper than {limit} levels at {path}")]
    SchemaTooDeep {
        /// The definition (a CRD kind: `<group>/<version>/<Kind>`).
        definition: String,
        /// The JSON path where the limit was passed (its last 200 bytes).
        path: String,
        /// The limit.
        limit: usize,
    },
    /// An output file could not be written.
    #[error("cannot write {path}")]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Generated code did not parse as Rust (a generator bug).
    #[error("generated code for {file} is not valid Rust")]
    InvalidOutput {
        /// The output file.
        file: String,
        /// The parse error.
        #[source]
        source: syn::Error,
    },
    /// The proto files of the version could not be read or joined.
    #[error(transparent)]
    Proto(#[from] crate::proto::ProtoError),
    /// `--crate NAME` is no valid package name.
    #[error(
        "crate name {name:?} is not a package name (an ASCII letter, then letters, digits, `-` or `_`; at most 64)"
    )]
    BadCrateName {
        /// The name given.
        name: String,
    },
    /// `--crate` would overwrite a `Cargo.toml` the generator did not write.
    #[error("{path} exists and was not written by `kubeset-codegen crd --crate`; not overwritten")]
    ForeignManifest {
        /// The manifest.
        path: PathBuf,
    },
}
