//! Layout tests of the models: the generator's size estimates (used to
//! decide which optional fields are boxed) match `size_of`, and the structs
//! of a pod stay small.

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

/// Upper bounds on the structs a pod cache holds most of: each large
/// optional struct inside them is one pointer, as in Go.
#[cfg(feature = "core-v1")]
#[test]
fn pod_structs_stay_small() {
    use crate::api::core::v1::{Container, EnvVar, Pod, PodSpec, Volume};
    let sizes = [
        ("Pod", size_of::<Pod>(), 400),
        ("PodSpec", size_of::<PodSpec>(), 768),
        ("Container", size_of::<Container>(), 448),
        ("Volume", size_of::<Volume>(), 384),
        ("EnvVar", size_of::<EnvVar>(), 64),
    ];
    for (name, size, bound) in sizes {
        assert!(size <= bound, "size_of::<{name}>() = {size} > {bound}");
    }
}
