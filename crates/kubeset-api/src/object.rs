//! Access to an object's `spec` and `status` through traits, as kube-rs's
//! `kube_core::object::{HasSpec, HasStatus}` (same names and methods, so
//! generic code ports): `#[derive(CustomResource)]` implements both for
//! the kinds it generates (`HasStatus` when `#[kube(status = ...)]` is
//! given), and `kubeset-codegen crd` for the kinds it generates with a
//! required `spec` / any `status`.

/// An object with a desired state.
///
/// ```
/// use kubeset_api::HasSpec;
///
/// fn replicas<K: HasSpec<Spec = Vec<u32>>>(k: &K) -> usize {
///     k.spec().len()
/// }
/// ```
pub trait HasSpec {
    /// The type of the `spec`.
    type Spec;

    /// The desired state.
    fn spec(&self) -> &Self::Spec;

    /// The desired state, to change.
    fn spec_mut(&mut self) -> &mut Self::Spec;
}

/// An object with an observed state, absent until a controller writes it.
pub trait HasStatus {
    /// The type of the `status`.
    type Status;

    /// The observed state, if any.
    fn status(&self) -> Option<&Self::Status>;

    /// The observed state, to set or change.
    fn status_mut(&mut self) -> &mut Option<Self::Status>;
}
