//! Layout tests of the models: the generator's size estimates match
//! `size_of`, and optional structs are held inline, as k8s-openapi's.

use std::mem::size_of;

#[rustfmt::skip]
mod generated;

/// Records `name` in `wrong` unless `T` and `Option<T>` have the estimated
/// sizes.
fn check<T>(name: &str, size: usize, option: usize, wrong: &mut Vec<String>) {
    let (real, real_option) = (size_of::<T>(), size_of::<Option<T>>());
    if (real, real_option) != (size, option) {
        wrong.push(format!(
            "{name}: size_of {real} (estimate {size}), Option {real_option} (estimate {option})"
        ));
    }
}

/// The structs of a pod are shaped as k8s-openapi's: optional structs
/// inline (`Option<T>`, no `Box`), so a literal written for k8s-openapi
/// compiles; the sizes that costs are the generated checks' (`size_of` of
/// each, pinned against the generator's estimate).
#[cfg(feature = "core-v1")]
#[test]
fn pod_structs_hold_optional_structs_inline() {
    use crate::api::core::v1::{Container, PodSpec, Probe, SecurityContext, Volume, VolumeMount};
    let probe = Probe {
        period_seconds: Some(5),
        ..Probe::default()
    };
    let container = Container {
        name: "app".to_owned(),
        liveness_probe: Some(probe),
        security_context: Some(SecurityContext::default()),
        volume_mounts: Some(vec![VolumeMount::default()]),
        ..Container::default()
    };
    let spec = PodSpec {
        containers: vec![container],
        volumes: Some(vec![Volume::default()]),
        ..PodSpec::default()
    };
    let probe: Option<&Probe> = spec.containers[0].liveness_probe.as_ref();
    assert_eq!(probe.and_then(|p| p.period_seconds), Some(5));
}
