//! Compile errors of bad `#[resource]` attributes, pinned with trybuild.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
