//! `List<T>`: any kind's list, generically.

use serde::ser::SerializeStruct as _;
use serde::{Deserialize, Serialize, Serializer};

use crate::Resource;
use crate::apimachinery::pkg::apis::meta::v1::ListMeta;

/// A list of `T` as the server returns it (`PodList`, `DeploymentList`):
/// `metadata.resourceVersion` and `metadata.continue` drive watches and
/// pagination. Written with `apiVersion` and `kind` (`<Kind>List`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(bound(deserialize = "T: Deserialize<'de>"))]
pub struct List<T> {
    /// List metadata.
    #[serde(default, deserialize_with = "crate::serde_util::null_as_default")]
    pub metadata: ListMeta,
    /// The objects. Items read from a list usually lack `apiVersion` and
    /// `kind`; the typed models do not need them.
    #[serde(
        default = "Vec::new",
        deserialize_with = "crate::serde_util::null_as_default"
    )]
    pub items: Vec<T>,
}

impl<T: Resource + Serialize> Serialize for List<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("List", 4)?;
        s.serialize_field("apiVersion", T::API_VERSION)?;
        s.serialize_field("kind", &format!("{}List", T::KIND))?;
        s.serialize_field("metadata", &self.metadata)?;
        s.serialize_field("items", &self.items)?;
        s.end()
    }
}
