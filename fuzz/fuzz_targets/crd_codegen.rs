//! `kubeset-codegen crd` on CRDs built from the fuzzer's bytes
//! (`kubeset_codegen::crd::fuzz_hooks`: hostile names, every schema
//! construct, nesting up to 6 levels): no panic; an error only for a name
//! nothing can be made of or a collision (never "generated code is not
//! valid Rust"); every file it emits, comments included, parses with
//! `syn`, and so does the single-file form.
#![no_main]

use kubeset_codegen::CodegenError;
use kubeset_codegen::crd::{self, Options, fuzz_hooks};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let crd = fuzz_hooks::crd(data, 6);
    match crd::generate(std::slice::from_ref(&crd), &Options::default()) {
        Ok(out) => {
            for (path, text) in &out.files {
                assert!(path.is_ascii(), "{path}");
                if let Err(e) = syn::parse_file(text) {
                    panic!("{path} does not parse: {e}\n{text}");
                }
            }
            let single = out.single_file().expect("the tree inlines");
            syn::parse_file(&single).expect("the single file parses");
        }
        Err(
            CodegenError::BadName { .. }
            | CodegenError::BadModuleName { .. }
            | CodegenError::NameCollision { .. },
        ) => {}
        Err(other) => panic!("unexpected error: {other}"),
    }
});
