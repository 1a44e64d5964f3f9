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

/// Iterates the items by value, as kube-rs's `ObjectList` (`for pod in
/// list`).
///
/// ```
/// use kubeset_api::List;
/// let list = List { items: vec![1, 2], ..List::default() };
/// assert_eq!(list.into_iter().sum::<i32>(), 3);
/// ```
impl<T> IntoIterator for List<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

/// Iterates the items by reference (`for pod in &list`).
impl<'a, T> IntoIterator for &'a List<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

/// Iterates the items mutably (`for pod in &mut list`).
impl<'a, T> IntoIterator for &'a mut List<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.iter_mut()
    }
}

impl<T> List<T> {
    /// The items by reference, as kube-rs's `ObjectList::iter`.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// The items mutably, as kube-rs's `ObjectList::iter_mut`.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.items.iter_mut()
    }
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
