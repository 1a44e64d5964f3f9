//! Copies tests/porting/kube's source into OUT_DIR with `kube::` and
//! `k8s_openapi::` renamed to `kubeset::` (nothing else changes), as one
//! file that src/lib.rs includes: every `src/*.rs` of that crate but
//! `lib.rs` becomes an inline `#[cfg(test)] mod name { … }`.

use std::path::Path;
use std::{env, fs};

/// The crate paths the rename replaces, as a port's search-and-replace does.
const RENAMES: [&str; 2] = ["kube::", "k8s_openapi::"];

fn main() {
    // The manifest directory of this build, read at run time: a build
    // script binary reused from another checkout (a seeded target dir)
    // would otherwise read that checkout's sources.
    let manifest = env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let src = Path::new(&manifest).join("../kube/src");
    println!("cargo::rerun-if-changed={}", src.display());
    let mut files: Vec<_> = fs::read_dir(&src)
        .expect("tests/porting/kube/src")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .filter(|p| p.file_name().is_some_and(|n| n != "lib.rs"))
        .collect();
    files.sort();
    let mut out = String::new();
    for path in files {
        println!("cargo::rerun-if-changed={}", path.display());
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a UTF-8 name");
        let text = fs::read_to_string(&path).expect("a source file");
        out.push_str(&format!(
            "#[cfg(test)]\nmod {name} {{\n{}\n}}\n",
            rename(&text)
        ));
    }
    let dest = Path::new(&env::var("OUT_DIR").expect("OUT_DIR")).join("porting.rs");
    fs::write(dest, out).expect("writing the renamed source");
}

/// Replaces each crate path where it starts a path segment (not inside a
/// longer name such as `my_kube::`).
fn rename(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'outer: while !rest.is_empty() {
        let at_boundary = out
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if at_boundary {
            for from in RENAMES {
                if let Some(after) = rest.strip_prefix(from) {
                    out.push_str("kubeset::");
                    rest = after;
                    continue 'outer;
                }
            }
        }
        let c = rest.chars().next().expect("not empty");
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}
