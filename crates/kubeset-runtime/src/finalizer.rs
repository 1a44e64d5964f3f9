//! [`finalizer()`]: run cleanup before an object goes away, with
//! kube-rs's semantics (`kube::runtime::finalizer`).
//!
//! One call per reconcile; which branch runs depends on the object alone
//! ([`FinalizerState`]):
//!
//! | finalizer present | deleting | what happens                                   |
//! |-------------------|----------|------------------------------------------------|
//! | no                | no       | add the finalizer, return (the write triggers the next reconcile) |
//! | yes               | no       | [`Event::Apply`]                               |
//! | yes               | yes      | [`Event::Cleanup`]; on success remove the finalizer |
//! | no                | yes      | nothing (cleanup already done)                 |
//!
//! The writes are JSON patches guarded by a `test` operation, so they are
//! safe when several writers race: adding tests the resourceVersion (or
//! that there are no finalizers yet), removing tests that the finalizer is
//! still at the index it was read at. A lost race is a failed patch (an
//! `Err`), never a lost or duplicated finalizer; the next reconcile sees the
//! new state. Cleanup runs again only if removing the finalizer failed, so
//! it must be idempotent (as in kube-rs and controller-runtime).

use std::future::Future;
use std::sync::Arc;

use kubeset_client::params::PatchParams;
use kubeset_client::{Api, Patch, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::controller::Action;

/// What the reconcile closure of [`finalizer()`] is asked to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Event<K> {
    /// The object exists and carries the finalizer: make the world match it.
    Apply(Arc<K>),
    /// The object is being deleted: undo what Apply did outside the
    /// cluster. The finalizer is removed when this returns `Ok`.
    Cleanup(Arc<K>),
}

/// Why [`finalizer()`] failed: kube-rs's `finalizer::Error`, variant for
/// variant and message for message, so matches (`Error::ApplyFailed(e)`),
/// logs and metric labels derived from `Display` or `Debug` read the same.
/// As kube-rs, the message also quotes the cause (`failed to apply
/// object: {cause}`) and the cause is the error's `source()`.
#[derive(Debug, thiserror::Error)]
pub enum Error<E: std::error::Error + 'static> {
    /// The Apply branch of the reconcile closure failed.
    #[error("failed to apply object: {0}")]
    ApplyFailed(#[source] E),
    /// The Cleanup branch failed; the finalizer stays.
    #[error("failed to clean up object: {0}")]
    CleanupFailed(#[source] E),
    /// Adding the finalizer failed (a 422 with a failed `test` op is a
    /// lost race: the object changed since it was read).
    #[error("failed to add finalizer: {0}")]
    AddFinalizer(#[source] kubeset_client::Error),
    /// Removing the finalizer failed; cleanup will run again.
    #[error("failed to remove finalizer: {0}")]
    RemoveFinalizer(#[source] kubeset_client::Error),
    /// The object has no name.
    #[error("object has no name")]
    UnnamedObject,
    /// The finalizer name is empty.
    #[error("invalid finalizer")]
    InvalidFinalizer,
}

/// Where the object is in the finalizer's life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FinalizerState {
    /// Index of our finalizer in `metadata.finalizers`, if present.
    pub finalizer_index: Option<usize>,
    /// Whether `metadata.deletionTimestamp` is set.
    pub is_deleting: bool,
}

impl FinalizerState {
    /// The state of `obj` for the finalizer `name`.
    pub fn for_object<K: Resource>(obj: &K, name: &str) -> Self {
        let meta = obj.metadata();
        FinalizerState {
            finalizer_index: meta.finalizers.iter().flatten().position(|f| f == name),
            is_deleting: meta.deletion_timestamp.is_some(),
        }
    }
}

/// The JSON patch that adds `name`: guarded by the resourceVersion, or by
/// the absence of finalizers when there are none (kube-rs's two forms).
pub fn add_patch<K: Resource>(obj: &K, name: &str) -> Value {
    let meta = obj.metadata();
    match &meta.finalizers {
        None => json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
            {"op": "add", "path": "/metadata/finalizers", "value": [name]},
        ]),
        Some(_) => json!([
            {"op": "test", "path": "/metadata/resourceVersion", "value": meta.resource_version},
            {"op": "add", "path": "/metadata/finalizers/-", "value": name},
        ]),
    }
}

/// The JSON patch that removes `name` from `index`, guarded by a test that
/// it is still there.
pub fn remove_patch(index: usize, name: &str) -> Value {
    let path = format!("/metadata/finalizers/{index}");
    json!([
        {"op": "test", "path": path, "value": name},
        {"op": "remove", "path": path},
    ])
}

/// Runs `reconcile` for `obj` under the finalizer `name` (see the module
/// docs); `api` must address `obj`'s namespace. The kube-rs signature.
///
/// ```no_run
/// use std::sync::Arc;
/// use kubeset_client::{Api, api::core::v1::ConfigMap};
/// use kubeset_runtime::{Action, finalizer::{Event, finalizer}};
///
/// # async fn reconcile(obj: Arc<ConfigMap>, api: Api<ConfigMap>) -> Result<Action, Box<dyn std::error::Error>> {
/// let action = finalizer(&api, "example.com/cleanup", obj, |event| async move {
///     match event {
///         Event::Apply(cm) => { /* create what cm asks for */ let _ = cm; }
///         Event::Cleanup(cm) => { /* delete it again */ let _ = cm; }
///     }
///     Ok::<_, std::io::Error>(Action::await_change())
/// })
/// .await?;
/// # Ok(action) }
/// ```
pub async fn finalizer<K, F, Fut, E>(
    api: &Api<K>,
    name: &str,
    obj: Arc<K>,
    reconcile: F,
) -> Result<Action, Error<E>>
where
    K: Resource + Serialize + DeserializeOwned + 'static,
    F: FnOnce(Event<K>) -> Fut,
    Fut: Future<Output = Result<Action, E>>,
    E: std::error::Error + 'static,
{
    if name.is_empty() {
        return Err(Error::InvalidFinalizer);
    }
    let state = FinalizerState::for_object(&*obj, name);
    let object_name = || obj.metadata().name.clone().ok_or(Error::UnnamedObject);
    match (state.finalizer_index, state.is_deleting) {
        (Some(_), false) => reconcile(Event::Apply(obj))
            .await
            .map_err(Error::ApplyFailed),
        (Some(index), true) => {
            let object = object_name()?;
            let action = reconcile(Event::Cleanup(obj))
                .await
                .map_err(Error::CleanupFailed)?;
            api.patch(
                &object,
                &PatchParams::default(),
                &Patch::Json(remove_patch(index, name)),
            )
            .await
            .map_err(Error::RemoveFinalizer)?;
            Ok(action)
        }
        (None, false) => {
            let object = object_name()?;
            api.patch(
                &object,
                &PatchParams::default(),
                &Patch::Json(add_patch(&*obj, name)),
            )
            .await
            .map_err(Error::AddFinalizer)?;
            // The write is a change: it triggers the reconcile that applies.
            Ok(Action::await_change())
        }
        (None, true) => Ok(Action::await_change()),
    }
}

#[cfg(test)]
mod tests {
    use kubeset_client::api::core::v1::ConfigMap;
    use kubeset_client::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

    use super::*;

    const F: &str = "example.com/cleanup";

    fn cm(finalizers: Option<&[&str]>, deleting: bool) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("a".into()),
                resource_version: Some("42".into()),
                finalizers: finalizers.map(|f| f.iter().map(|s| (*s).to_owned()).collect()),
                deletion_timestamp: deleting.then(Time::now),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    #[test]
    fn state_follows_finalizers_and_deletion() {
        let s = |f, d| FinalizerState::for_object(&cm(f, d), F);
        let st = |i, d| FinalizerState {
            finalizer_index: i,
            is_deleting: d,
        };
        assert_eq!(s(None, false), st(None, false));
        assert_eq!(s(Some(&["other", F]), false), st(Some(1), false));
        assert_eq!(s(Some(&[F]), true), st(Some(0), true));
        assert_eq!(s(Some(&["other"]), true), st(None, true));
    }

    #[test]
    fn patches_are_guarded_by_a_test_op() {
        assert_eq!(
            add_patch(&cm(None, false), F),
            json!([
                {"op": "test", "path": "/metadata/finalizers", "value": null},
                {"op": "add", "path": "/metadata/finalizers", "value": [F]},
            ])
        );
        assert_eq!(
            add_patch(&cm(Some(&["other"]), false), F),
            json!([
                {"op": "test", "path": "/metadata/resourceVersion", "value": "42"},
                {"op": "add", "path": "/metadata/finalizers/-", "value": F},
            ])
        );
        assert_eq!(
            remove_patch(2, F),
            json!([
                {"op": "test", "path": "/metadata/finalizers/2", "value": F},
                {"op": "remove", "path": "/metadata/finalizers/2"},
            ])
        );
    }

    #[derive(Debug, thiserror::Error)]
    #[error("boom")]
    struct Boom;

    /// The branches that write nothing run without a server: an `Api` at
    /// an unroutable address fails any request it would make.
    #[tokio::test]
    async fn branches_without_writes() {
        let rest = kubeset_client::rest::RestClient::new(
            kubeset_client::rest::RestConfig::new("http://127.0.0.1:9".to_owned())
                .with_request_deadline(std::time::Duration::from_secs(2)),
        )
        .expect("client");
        let api: Api<ConfigMap> =
            Api::namespaced(kubeset_client::Client::new(rest, "default"), "default");
        let seen = std::cell::Cell::new("");
        let run = |obj: ConfigMap, fail: bool| {
            let seen = &seen;
            finalizer(&api, F, Arc::new(obj), move |ev| async move {
                seen.set(match ev {
                    Event::Apply(_) => "apply",
                    Event::Cleanup(_) => "cleanup",
                });
                if fail {
                    Err(Boom)
                } else {
                    Ok(Action::requeue(std::time::Duration::from_secs(7)))
                }
            })
        };
        let applied = run(cm(Some(&[F]), false), false).await.expect("apply");
        assert_eq!(
            (seen.get(), applied),
            ("apply", Action::requeue(std::time::Duration::from_secs(7)))
        );
        seen.set("");
        assert!(matches!(
            run(cm(Some(&[F]), false), true).await,
            Err(Error::ApplyFailed { .. })
        ));
        seen.set("");
        assert!(matches!(
            run(cm(Some(&[F]), true), true).await,
            Err(Error::CleanupFailed { .. })
        ));
        assert_eq!(
            seen.get(),
            "cleanup",
            "a failed cleanup keeps the finalizer: no patch sent"
        );
        seen.set("");
        assert_eq!(
            run(cm(Some(&["other"]), true), false).await.expect("gone"),
            Action::await_change()
        );
        assert_eq!(seen.get(), "", "cleanup already done: closure not called");
        assert!(matches!(
            run(cm(None, false), false).await,
            Err(Error::AddFinalizer { .. })
        ));
        assert_eq!(seen.get(), "", "the finalizer is added before any apply");
    }
}
