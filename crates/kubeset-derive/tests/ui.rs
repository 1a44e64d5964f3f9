//! Compile errors of bad `#[resource]`, `#[kube]` and `#[schema]`
//! attributes and unsupported types, pinned with trybuild.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
