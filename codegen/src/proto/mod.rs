//! Protobuf field numbers for the built-in models: the upstream
//! `generated.proto` files of a Kubernetes version (k8s.io/api,
//! apimachinery, apiextensions-apiserver, kube-aggregator), read beside
//! the OpenAPI documents (`<spec dir>/proto/`), joined to the IR.
//!
//! Stages: [`parse`] (the proto2 subset those files use) → [`join`] (each
//! message to its definition, `k8s.io.api.core.v1.Pod` ↔
//! `io.k8s.api.core.v1.Pod`, each field by JSON name; a field in one and
//! not the other fails the run unless a named [`join::FIXUPS`] entry covers
//! it; which zeros are unset comes from [`GoValues`]) → [`emit`] (per-struct encode/decode in `kubeset-api`'s
//! `src/protobuf/generated/`, behind the cargo feature `protobuf`).
//!
//! A version without a `proto/` directory generates JSON-only models.

pub mod emit;
pub mod go_values;
pub mod join;
pub mod parse;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The directory (relative to `kubeset-api`) the codecs are generated into
/// ([`emit::emit_dir`]); named here, below the emitters, because the
/// models' emitter lists it among the directories it owns.
pub const GENERATED_DIR: &str = "src/protobuf/generated";

/// The cargo feature of the codecs, in the generated features block.
pub const FEATURE: &str = "# The protobuf codecs of every compiled built-in model (`kubeset_api::protobuf`).\nprotobuf = []\n";

pub use go_values::GoValues;
pub use join::{Codec, Codecs, Elem, FieldCodec, Scalar, Shape};
pub use parse::Message;

/// What went wrong reading or joining the proto files.
#[derive(Debug, thiserror::Error)]
pub enum ProtoError {
    /// A file or directory could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A file is not in the proto2 subset the parser knows.
    #[error("{path}: token {token}: {reason}")]
    Syntax {
        /// The file.
        path: String,
        /// Index of the offending token.
        token: usize,
        /// What was expected.
        reason: String,
    },
    /// A message and its definition disagree.
    #[error("{definition} ↔ {message}: {reason}")]
    Mismatch {
        /// The OpenAPI definition.
        definition: String,
        /// The proto message.
        message: String,
        /// Which field, and how.
        reason: String,
    },
    /// Several definitions disagree with their messages.
    #[error("{count} definitions disagree with their proto messages:{list}")]
    Mismatches {
        /// How many.
        count: usize,
        /// One line per disagreement.
        list: String,
    },
    /// The Go value-field table is malformed or does not describe the join.
    #[error("{file}: {reason}")]
    GoValues {
        /// The table's file.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// A named fixup found nothing to fix: upstream changed, remove it.
    #[error("proto fixup {fixup} no longer applies: {reason}")]
    FixupNoLongerApplies {
        /// The fixup's name.
        fixup: &'static str,
        /// What it looked for.
        reason: String,
    },
}

/// Every message of every `generated.proto` under a directory, by fully
/// qualified name.
#[derive(Debug, Clone, Default)]
pub struct ProtoSet {
    /// Messages by `package.Name`.
    pub messages: BTreeMap<String, Message>,
}

/// Reads `<spec dir>/proto/**/*.proto`; `None` when the version has no
/// proto files (its models are JSON-only).
pub fn load(spec_dir: &Path) -> Result<Option<ProtoSet>, ProtoError> {
    let dir = spec_dir.join("proto");
    if !dir.is_dir() {
        return Ok(None);
    }
    let mut files = Vec::new();
    proto_files(&dir, &mut files)?;
    files.sort();
    let mut set = ProtoSet::default();
    for file in &files {
        let text = std::fs::read_to_string(file).map_err(|source| ProtoError::Read {
            path: file.clone(),
            source,
        })?;
        let label = file
            .strip_prefix(spec_dir)
            .unwrap_or(file)
            .to_string_lossy()
            .replace('\\', "/");
        parse::parse_file(&label, &text, &mut set.messages)?;
    }
    Ok(Some(set))
}

fn proto_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ProtoError> {
    let read = |source| ProtoError::Read {
        path: dir.to_owned(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(read)? {
        let path = entry.map_err(read)?.path();
        if path.is_dir() {
            proto_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "proto") {
            out.push(path);
        }
    }
    Ok(())
}

/// The proto message name of an OpenAPI definition:
/// `io.k8s.api.core.v1.Pod` → `k8s.io.api.core.v1.Pod`,
/// `io.k8s.apiextensions-apiserver.…` → `k8s.io.apiextensions_apiserver.…`.
pub fn message_name(definition: &str) -> Option<String> {
    let rest = definition.strip_prefix("io.k8s.")?;
    Some(format!("k8s.io.{}", rest.replace('-', "_")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names() {
        assert_eq!(
            message_name("io.k8s.api.core.v1.Pod").as_deref(),
            Some("k8s.io.api.core.v1.Pod")
        );
        assert_eq!(
            message_name("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON")
                .as_deref(),
            Some("k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON")
        );
        assert_eq!(message_name("com.example.v1.Foo"), None);
    }
}
