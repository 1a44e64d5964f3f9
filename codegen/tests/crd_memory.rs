//! Memory in proportion to the output (issue 29): emitting an enum of
//! tens of thousands of values holds the token and syntax trees of one
//! chunk at a time, not of the whole enum (which took 606 MB for 100,000
//! values, 40 times the 15 MB of text). Its own test binary: the
//! allocator counts every allocation.

use std::alloc::System;
use std::path::Path;

use kubeset_codegen::crd::{self, Options};
use peakmem_alloc::{INSTRUMENTED_SYSTEM, PeakMemAlloc, PeakMemAllocTrait};
use serde_json::json;

#[global_allocator]
static ALLOCATOR: &PeakMemAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn a_large_enum_is_emitted_in_memory_proportional_to_its_text() {
    let values: Vec<String> = (0..20_000).map(|i| format!("value-{i}")).collect();
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.big.example.com"},
        "spec": {
            "group": "big.example.com",
            "names": {"kind": "Thing", "plural": "things"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "e": {"type": "string", "enum": values}}}}}}}]
        }
    });
    let crds = [crd::decode(crd, Path::new("big.json")).expect("a CRD")];
    let (ir, _) = crd::lower(&crds).expect("lowers");
    ALLOCATOR.reset_peak_memory();
    let files = crd::emit(&ir, &crds, &Options::default()).expect("emits");
    let peak = ALLOCATOR.get_peak_memory();
    let text: usize = files.values().map(String::len).sum();
    let e = &files["big_example_com/v1/thing_spec_e.rs"];
    assert!(e.contains("\"value-19999\" => Self::Value19999,"));
    // The text itself, its spare capacity and one chunk's trees: a small
    // multiple of the text (the whole enum's trees were 40 times it).
    assert!(
        peak <= 4 * text,
        "{peak} bytes live at the peak for {text} bytes of text"
    );
    eprintln!(
        "peak {peak} bytes for {text} bytes of text ({:.1}x)",
        peak as f64 / text as f64
    );
}
