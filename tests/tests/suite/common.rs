//! Helpers shared by the suite's modules.

use std::fmt::Debug;
use std::time::Duration;

use kubeset::params::{DeleteParams, ListParams, PatchParams, PostParams};
use kubeset::{Api, Deleted, Patch, Resource};
use kubeset_tests::json::assert_subset;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Connects or returns from the test (loud skip only with
/// `KUBESET_SKIP_REALKUBE=1`; otherwise a missing realkube fails).
macro_rules! connect {
    ($name:expr) => {
        match kubeset_tests::connect($name).await {
            Some(ctx) => ctx,
            None => return,
        }
    };
}
pub(crate) use connect;

/// A typed object from JSON (terser than nested `Option` literals; the
/// result is the generated type, checked by serde).
pub fn typed<K: DeserializeOwned>(value: serde_json::Value) -> K {
    match serde_json::from_value(value) {
        Ok(k) => k,
        Err(e) => panic!("{}: {e}", std::any::type_name::<K>()),
    }
}

/// Panics with the whole error chain.
pub fn ok<T>(what: &str, result: Result<T, kubeset::Error>) -> T {
    match result {
        Ok(v) => v,
        Err(e) => panic!("{what}: {}", kubeset_tests::error_chain(&e)),
    }
}

/// What a DELETE answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteAnswer {
    /// The object (with deletionTimestamp, or as it was last).
    Object,
    /// A `Status`.
    Status,
}

/// Create → read back → list → replace (CAS with the read resourceVersion)
/// → read back → delete → gone, through `Api<K>` against the real server.
///
/// `obj` must carry a name; `update` changes the object for the replace.
/// Everything written must come back unchanged (the server may add
/// defaults). Answers what the DELETE returned.
pub async fn crud<K>(api: &Api<K>, obj: K, update: impl Fn(&mut K)) -> DeleteAnswer
where
    K: Resource + Clone + Debug + Serialize + DeserializeOwned + 'static,
{
    let kind = K::KIND;
    let name = obj.metadata().name.clone().unwrap_or_default();
    let what = format!("{kind} {name}");

    let created = ok(&what, api.create(&PostParams::default(), &obj).await);
    assert_subset(&format!("{what} (create answer)"), &obj, &created);
    assert!(created.metadata().uid.is_some(), "{what}: no uid");
    let rv1 = created.metadata().resource_version.clone();
    assert!(rv1.is_some(), "{what}: no resourceVersion");

    let got = ok(&what, api.get(&name).await);
    assert_subset(&format!("{what} (get)"), &obj, &got);
    if got.metadata().resource_version == rv1 {
        // Unless something else (a controller in the server) wrote it since.
        assert_eq!(
            serde_json::to_value(&created).ok(),
            serde_json::to_value(&got).ok(),
            "{what}: the create answer and a get at the same resourceVersion differ"
        );
    }

    let listed = ok(
        &what,
        api.list(&ListParams::default().fields(&format!("metadata.name={name}")))
            .await,
    );
    assert_eq!(listed.items.len(), 1, "{what}: list by metadata.name");
    assert_subset(&format!("{what} (list item)"), &obj, &listed.items[0]);

    let mut intent = obj.clone();
    update(&mut intent);
    let mut body = got.clone();
    update(&mut body);
    let mut conflicts = 0;
    let replaced = loop {
        match api.replace(&name, &PostParams::default(), &body).await {
            Ok(replaced) => break replaced,
            // A controller inside the server may write the object between
            // our read and our replace (a CRD's NamesAccepted/Established
            // conditions): read again and redo the change, as a client must.
            Err(e) if e.is_conflict() && conflicts < 5 => {
                conflicts += 1;
                body = ok(&what, api.get(&name).await);
                update(&mut body);
            }
            Err(e) => break ok(&what, Err(e)),
        }
    };
    assert_subset(&format!("{what} (replace answer)"), &intent, &replaced);
    assert_ne!(
        replaced.metadata().resource_version,
        rv1,
        "{what}: replace kept the resourceVersion"
    );
    // The same body again is stale now: compare-and-swap must refuse it.
    let stale = api.replace(&name, &PostParams::default(), &body).await;
    assert!(
        stale.as_ref().is_err_and(kubeset::Error::is_conflict),
        "{what}: stale replace answered {stale:?}"
    );
    let got = ok(&what, api.get(&name).await);
    assert_subset(&format!("{what} (get after replace)"), &intent, &got);

    let answer = match ok(&what, api.delete(&name, &DeleteParams::background()).await) {
        Deleted::Pending(_) => DeleteAnswer::Object,
        Deleted::Gone(_) => DeleteAnswer::Status,
    };
    // Finalizers of controllers realkube does not run (pvc-protection,
    // customresourcecleanup is run by the server itself): the object stays
    // with a deletionTimestamp until they are removed.
    if let Some(left) = ok(&what, api.get_opt(&name).await)
        && left.metadata().deletion_timestamp.is_some()
        && left.metadata().finalizers.as_ref().is_some_and(|f| {
            f.iter()
                .any(|f| f.starts_with("kubernetes.io/") || f == "orphan")
        })
    {
        let patch = Patch::Merge(serde_json::json!({"metadata": {"finalizers": null}}));
        ok(
            &format!("{what}: removing finalizers"),
            api.patch(&name, &PatchParams::default(), &patch).await,
        );
    }
    kubeset_tests::eventually(
        Duration::from_secs(60),
        &format!("{what} to go"),
        || async {
            match api.get_opt(&name).await {
                Ok(None) => Some(()),
                Ok(Some(_)) => None,
                Err(e) => panic!("{what}: {}", kubeset_tests::error_chain(&e)),
            }
        },
    )
    .await;
    answer
}

/// Adds a label (the update used by most round trips).
pub fn relabel<K: Resource>(obj: &mut K) {
    obj.metadata_mut()
        .labels
        .get_or_insert_with(Default::default)
        .insert("kubeset.dev/updated".to_owned(), "yes".to_owned());
}
