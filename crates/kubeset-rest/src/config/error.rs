//! The error type of the config layer.

use std::{io, path::PathBuf};

/// Everything that can go wrong while loading a configuration or obtaining
/// credentials.
///
/// Errors about a kubeconfig name the file (`file`), the entry (`entry`,
/// e.g. `user "alice"` or `context "dev"`) and the field; none of them
/// carries a secret value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A file could not be read.
    #[error("cannot read {}", path.display())]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },

    /// A kubeconfig file is not valid YAML or does not have the kubeconfig shape.
    #[error("{file} is not a valid kubeconfig")]
    ParseKubeconfig {
        /// The kubeconfig file.
        file: String,
        /// The YAML error.
        #[source]
        source: serde_norway::Error,
    },

    /// Neither `KUBECONFIG` nor `~/.kube/config` names an existing file.
    #[error("no kubeconfig found (looked at {searched})")]
    KubeconfigNotFound {
        /// The paths looked at.
        searched: String,
    },

    /// No context was requested and the kubeconfig has no `current-context`.
    #[error("{file}: no context requested and current-context is not set")]
    NoCurrentContext {
        /// The kubeconfig file(s).
        file: String,
    },

    /// A named context, cluster or user does not exist.
    #[error("{file}: {kind} {name:?} (field {field} of {referrer}) does not exist")]
    NotFound {
        /// The kubeconfig file(s).
        file: String,
        /// `context`, `cluster` or `user`.
        kind: &'static str,
        /// The name looked up.
        name: String,
        /// The field that named it.
        field: &'static str,
        /// What named it: `context "dev"` or `options`.
        referrer: String,
    },

    /// A required field is missing.
    #[error("{file}: {entry} has no {field}")]
    MissingField {
        /// The kubeconfig file.
        file: String,
        /// The entry, e.g. `cluster "prod"`.
        entry: String,
        /// The missing field.
        field: &'static str,
    },

    /// A field holds a value that cannot be used.
    #[error("{file}: {entry}: invalid {field}: {reason}")]
    InvalidField {
        /// The kubeconfig file (or the in-cluster directory).
        file: String,
        /// The entry, e.g. `user "alice"`.
        entry: String,
        /// The field.
        field: &'static str,
        /// What is wrong, without the value when the value is secret.
        reason: String,
    },

    /// A file named by a kubeconfig field cannot be read.
    #[error("{file}: {entry}: cannot read {field} {}", path.display())]
    ReadReferencedFile {
        /// The kubeconfig file.
        file: String,
        /// The entry, e.g. `user "alice"`.
        entry: String,
        /// The field that names the file.
        field: &'static str,
        /// The file named by the field.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },

    /// Two settings that exclude each other are both set.
    #[error("{file}: {entry}: {reason}")]
    Conflict {
        /// The kubeconfig file.
        file: String,
        /// The entry.
        entry: String,
        /// Which settings conflict.
        reason: String,
    },

    /// An exec credential plugin could not be started.
    #[error("{user}: cannot run exec plugin {command:?}{hint}")]
    ExecSpawn {
        /// The user entry, e.g. `user "alice"`.
        user: String,
        /// The command.
        command: String,
        /// The plugin's `installHint`, prefixed with `: ` when present.
        hint: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },

    /// An exec credential plugin exited unsuccessfully.
    #[error("{user}: exec plugin {command:?} failed ({status}){stderr}")]
    ExecFailed {
        /// The user entry.
        user: String,
        /// The command.
        command: String,
        /// The exit status.
        status: String,
        /// The plugin's standard error (at most 1 KiB), prefixed with `: `.
        stderr: String,
    },

    /// An exec credential plugin printed something that is not a usable
    /// `ExecCredential`. Its output is never included.
    #[error("{user}: exec plugin {command:?} returned an invalid ExecCredential: {reason}")]
    ExecOutput {
        /// The user entry.
        user: String,
        /// The command.
        command: String,
        /// What is wrong.
        reason: String,
    },

    /// In-cluster: an environment variable is not set.
    #[error("not running in a cluster: {var} is not set")]
    InClusterEnvNotSet {
        /// The variable.
        var: &'static str,
    },

    /// In-cluster: an environment variable is set but empty.
    #[error("not running in a cluster: {var} is set but empty")]
    InClusterEnvEmpty {
        /// The variable.
        var: &'static str,
    },

    /// In-cluster: a service-account file is missing or unreadable.
    #[error("in-cluster {what} {} cannot be read", path.display())]
    InClusterFileMissing {
        /// `CA certificate` or `token`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },

    /// In-cluster: a service-account file is empty.
    #[error("in-cluster {what} {} is empty", path.display())]
    InClusterFileEmpty {
        /// `CA certificate` or `token`.
        what: &'static str,
        /// The file.
        path: PathBuf,
    },

    /// A token file re-read at request time failed and no earlier token is
    /// available.
    #[error("token file {} is empty", path.display())]
    EmptyTokenFile {
        /// The file.
        path: PathBuf,
    },

    /// The rustls client configuration could not be built.
    #[error("cannot build the TLS configuration: {what}")]
    Tls {
        /// What was being built.
        what: String,
        /// The rustls error.
        #[source]
        source: rustls::Error,
    },

    /// A header (impersonation, authorization) would not be a valid HTTP header.
    #[error("{entry}: {field} cannot be sent as an HTTP header")]
    InvalidHeader {
        /// The entry.
        entry: String,
        /// The field.
        field: String,
    },

    /// `infer()` found neither a kubeconfig nor an in-cluster environment.
    #[error("no configuration found: kubeconfig: {kubeconfig}; in-cluster: {incluster}")]
    Infer {
        /// Why the kubeconfig could not be used.
        kubeconfig: Box<ConfigError>,
        /// Why the in-cluster configuration could not be used.
        incluster: Box<ConfigError>,
    },
}
