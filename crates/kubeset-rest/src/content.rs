//! The wire format a client asks for: client-go's `ContentConfig`
//! (`AcceptContentTypes` + `ContentType`) reduced to its one choice, JSON
//! or protobuf. The REST layer only carries the choice and its header
//! values; the client layer (which knows the models) encodes and decodes,
//! and falls back to JSON for a kind without a protobuf codec or a server
//! that answers `406 Not Acceptable`/`415 Unsupported Media Type`.

/// The protobuf media type of Kubernetes objects.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// client-go's `Accept` for a protobuf client: protobuf preferred, JSON
/// for what the server cannot write in protobuf (custom resources).
pub const PROTOBUF_ACCEPT: &str = "application/vnd.kubernetes.protobuf, application/json";

/// What a client speaks for built-in kinds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireFormat {
    /// JSON everywhere (the default, as client-go's).
    #[default]
    Json,
    /// Protobuf for built-in kinds (`Accept: PROTOBUF_ACCEPT`, bodies as
    /// `PROTOBUF`), JSON for the rest; what kube-controller-manager and
    /// kubectl use. Needs the client layer's `protobuf` feature.
    Protobuf,
}
