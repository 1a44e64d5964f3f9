//! Why the facade reaches some items by a second path.
//!
//! The snapshot lists each item's members once, under its canonical path
//! (where it is defined, when that is public), and every other path as one
//! `alias` line. Each alias needs a reason here: a new second path fails
//! `cargo xtask public-api` until it is given one (or removed), and a
//! reason whose alias is gone fails too.

/// kube-rs's own path (`kube::runtime::…`): a kube-rs port compiles by
/// renaming the crate.
const KUBE: &str = "kube-rs's path";
/// kubeset's root re-export of a type most controllers name, so one
/// `use kubeset::runtime::{…}` line serves (kube-rs has these under their
/// modules only).
const RUNTIME_ROOT: &str = "kubeset's runtime root";
/// The facade's root: the client's entry points beside `Api` and `Client`.
const CLIENT_ROOT: &str = "kubeset's root";
/// The REST crate's watch types at its root (`kubeset::rest::WatchEvent`),
/// as the client and runtime name them.
const REST_ROOT: &str = "kubeset::rest's root";
/// The queue types under `controller::`, where `Controller`'s docs name
/// them (they are defined in a private module).
const CONTROLLER: &str = "beside Controller";
/// Each review module (`admission`, `conversion`) holds the `TypeMeta` its
/// review types carry.
const REVIEW: &str = "beside its review types";

/// Every second path, with its reason.
pub(super) const ALIASES: &[(&str, &str)] = &[
    ("kubeset::Clientset", CLIENT_ROOT),
    ("kubeset::CustomResourceExt", KUBE),
    ("kubeset::merge_crds", CLIENT_ROOT),
    ("kubeset::conversion::TypeMeta", REVIEW),
    ("kubeset::rest::ResumableWatch", REST_ROOT),
    ("kubeset::rest::WatchEvent", REST_ROOT),
    ("kubeset::rest::WatchStream", REST_ROOT),
    ("kubeset::runtime::Config", KUBE),
    ("kubeset::runtime::Controller", KUBE),
    ("kubeset::runtime::Predicate", KUBE),
    ("kubeset::runtime::WatchStreamExt", KUBE),
    ("kubeset::runtime::finalizer", KUBE),
    ("kubeset::runtime::metadata_watcher", KUBE),
    ("kubeset::runtime::reflector", KUBE),
    ("kubeset::runtime::watcher", KUBE),
    ("kubeset::runtime::reflector::ObjectRef", KUBE),
    ("kubeset::runtime::reflector::Store", KUBE),
    ("kubeset::runtime::reflector::reflector", KUBE),
    ("kubeset::runtime::reflector::store", KUBE),
    ("kubeset::runtime::utils::Predicate", KUBE),
    ("kubeset::runtime::utils::WatchStreamExt", KUBE),
    ("kubeset::runtime::utils::predicates", KUBE),
    ("kubeset::runtime::watcher::Config", KUBE),
    ("kubeset::runtime::watcher::Error", KUBE),
    ("kubeset::runtime::Action", RUNTIME_ROOT),
    ("kubeset::runtime::Event", RUNTIME_ROOT),
    ("kubeset::runtime::InitialList", RUNTIME_ROOT),
    ("kubeset::runtime::LeaderElector", RUNTIME_ROOT),
    ("kubeset::runtime::LeaderError", RUNTIME_ROOT),
    ("kubeset::runtime::LeaseConfig", RUNTIME_ROOT),
    ("kubeset::runtime::LeaderMetrics", RUNTIME_ROOT),
    ("kubeset::runtime::MemoryBudget", RUNTIME_ROOT),
    ("kubeset::runtime::ObjectKey", RUNTIME_ROOT),
    ("kubeset::runtime::ObjectRef", RUNTIME_ROOT),
    ("kubeset::runtime::PartialObjectMetadata", RUNTIME_ROOT),
    ("kubeset::runtime::SharedCache", RUNTIME_ROOT),
    ("kubeset::runtime::SharedCaches", RUNTIME_ROOT),
    ("kubeset::runtime::Store", RUNTIME_ROOT),
    ("kubeset::runtime::StoreConfig", RUNTIME_ROOT),
    ("kubeset::runtime::WatcherConfig", RUNTIME_ROOT),
    ("kubeset::runtime::WatcherError", RUNTIME_ROOT),
    ("kubeset::runtime::Writer", RUNTIME_ROOT),
    ("kubeset::runtime::WriterDropped", RUNTIME_ROOT),
    ("kubeset::runtime::controller::Priority", CONTROLLER),
    ("kubeset::runtime::controller::RetryBackoff", CONTROLLER),
    ("kubeset::runtime::controller::WorkQueue", CONTROLLER),
];

/// The alias path of a snapshot line (`alias KIND PATH = CANONICAL`).
fn alias_path(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("alias ")?;
    let (_kind, rest) = rest.split_once(' ')?;
    rest.split_once(" = ").map(|(path, _)| path)
}

/// What is wrong with the snapshot's aliases against [`ALIASES`]: second
/// paths without a reason, and reasons without their path.
pub(super) fn problems<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let seen: std::collections::BTreeSet<&str> = lines.into_iter().filter_map(alias_path).collect();
    let known: std::collections::BTreeSet<&str> = ALIASES.iter().map(|(p, _)| *p).collect();
    let unexplained = seen
        .difference(&known)
        .map(|p| format!("{p} is a second path with no reason in xtask/src/public_api/aliases.rs"));
    let stale = known
        .difference(&seen)
        .map(|p| format!("{p} has a reason in xtask/src/public_api/aliases.rs but is no alias"));
    unexplained.chain(stale).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_alias_needs_a_reason_and_a_reason_its_alias() {
        let mut lines: Vec<String> = ALIASES
            .iter()
            .map(|(p, _)| format!("alias struct {p} = kubeset::x::Y"))
            .collect();
        assert!(problems(lines.iter().map(String::as_str)).is_empty());
        lines.push("alias fn kubeset::runtime::new_path = kubeset::runtime::x::f".into());
        lines.remove(0);
        let found = problems(lines.iter().map(String::as_str));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("kubeset::runtime::new_path is a second path"));
        assert!(found[1].starts_with("kubeset::Clientset has a reason"));
    }

    #[test]
    fn alias_lines_are_read_by_their_path() {
        assert_eq!(
            alias_path("alias mod kubeset::runtime::reflector::store = kubeset::runtime::store"),
            Some("kubeset::runtime::reflector::store")
        );
        assert_eq!(alias_path("struct kubeset::Api<K>"), None);
    }
}
