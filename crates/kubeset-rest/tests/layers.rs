//! The layer rule of ARCHITECTURE.md ("kubeset-rest"): the crate's modules
//! import each other without a cycle, and each module of the table below
//! imports only modules of lower layers. Read from the sources (a module's
//! `crate::…` paths outside comments and its `#[cfg(test)]` part), so the
//! import cycle the request path once had cannot come back unseen.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
};

/// The layers, lowest first: a module may import only modules of a lower
/// layer. Modules not listed (added later) are held to the no-cycle rule
/// only.
const LAYERS: &[&[&str]] = &[
    // Leaves: pure rules and plain types, no crate imports but these.
    &[
        "verb",
        "url",
        "status",
        "transport",
        "budget",
        "auth",
        "backoff",
        "rate_limit",
        "warning",
        "collection",
        "content",
        "upgrade",
        "service",
    ],
    // The error enum and what only needs it; the sans-IO description.
    &["metrics", "error"],
    &["failover", "response", "desc", "sent"],
    // kube-rs's form of a prepared request's URI.
    &["kube_uri"],
    // When to retry, and the pure attempt decision.
    &["retry"],
    &["decide"],
    // The client's shared state, then the transport over it.
    &["client"],
    &["discovery"],
    &["execute"],
    &["watch"],
    // The builder that meets the transport; config builds clients.
    &["request", "config", "fuzz_hooks"],
    // Watches opened in protobuf, on the builder.
    &["watch_protobuf"],
    // The streaming subresources: their own connection over the client.
    &["ws"],
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The module a source file belongs to (`response/decode.rs` → `response`).
fn module_of(path: &Path, src: &Path) -> String {
    let rel = path.strip_prefix(src).expect("under src");
    let first = rel.components().next().expect("a component");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_owned()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file: before its `#[cfg(test)]` part, comment lines out.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level names a file reaches through `crate::`: `crate::a::…`,
/// `crate::Name`, and each first segment inside `use crate::{a::…, b}`.
fn crate_names(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while let Some(found) = code[at..].find("crate::") {
        let start = at + found + "crate::".len();
        at = start;
        if bytes.get(start) == Some(&b'{') {
            // A use tree: first segments at brace depth 1.
            let mut depth = 0usize;
            let mut segment = String::new();
            let mut first = true;
            for &b in &bytes[start..] {
                match b {
                    b'{' => {
                        depth += 1;
                        if depth > 1 {
                            first = false;
                        }
                    }
                    b'}' => {
                        if depth == 1 && first && !segment.is_empty() {
                            names.insert(std::mem::take(&mut segment));
                        }
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    b',' if depth == 1 => {
                        if first && !segment.is_empty() {
                            names.insert(std::mem::take(&mut segment));
                        }
                        segment.clear();
                        first = true;
                    }
                    b':' if depth == 1 => {
                        if first && !segment.is_empty() {
                            names.insert(std::mem::take(&mut segment));
                        }
                        first = false;
                    }
                    c if depth == 1 && first && (c.is_ascii_alphanumeric() || c == b'_') => {
                        segment.push(c as char);
                    }
                    _ => {}
                }
            }
        } else {
            let name: String = code[start..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    names
}

/// `pub use a::b::{X, Y};` in lib.rs: re-exported name → module `a`.
fn re_exports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let lib = code(lib);
    for stmt in lib.split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let module = rest.split("::").next().unwrap_or_default().trim();
        let items = rest.rsplit_once("::").map_or(rest, |(_, i)| i);
        let items = items.trim_matches(|c: char| c == '{' || c == '}' || c.is_whitespace());
        for item in items.split(',') {
            let item = item.split("::").last().unwrap_or_default();
            let item = item.trim_matches(|c: char| c == '{' || c == '}' || c.is_whitespace());
            if !item.is_empty() {
                map.insert(item.to_owned(), module.to_owned());
            }
        }
    }
    map
}

/// module → the crate modules it imports.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let lib = fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let exports = re_exports(&lib);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| module_of(f, &src))
        .filter(|m| m != "lib")
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let module = module_of(file, &src);
        if module == "lib" {
            continue;
        }
        let text = fs::read_to_string(file).expect("source");
        let deps = graph.entry(module.clone()).or_default();
        for name in crate_names(&code(&text)) {
            let target = if modules.contains(&name) {
                name
            } else if let Some(m) = exports.get(&name) {
                m.clone()
            } else {
                continue;
            };
            if target != module {
                deps.insert(target);
            }
        }
    }
    graph
}

/// A cycle of `graph`, if any (depth-first search).
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[i..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(c) = visit(node, graph, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn the_reader_sees_imports() {
    let names = crate_names("use crate::{a::{B, c::D}, e, f::G};\nlet x = crate::h::i(crate::J);");
    let want: BTreeSet<String> = ["a", "e", "f", "h", "J"].map(String::from).into();
    assert_eq!(names, want);
    let exports = re_exports("pub use a::{B, C};\npub use d::e::F;\npub mod g;");
    assert_eq!(exports.get("C").map(String::as_str), Some("a"));
    assert_eq!(exports.get("F").map(String::as_str), Some("d"));
    let looped: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_owned(), ["b".to_owned()].into()),
        ("b".to_owned(), ["a".to_owned()].into()),
    ]
    .into();
    assert_eq!(
        find_cycle(&looped),
        Some(vec!["a".into(), "b".into(), "a".into()])
    );
}

#[test]
fn modules_import_without_a_cycle() {
    let graph = graph();
    assert!(graph.contains_key("request") && graph.contains_key("execute"));
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle: {}", cycle.join(" → "));
    }
}

#[test]
fn each_layer_imports_only_lower_layers() {
    let layer_of: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, mods)| mods.iter().map(move |m| (*m, i)))
        .collect();
    let mut wrong = Vec::new();
    for (module, deps) in graph() {
        let Some(&own) = layer_of.get(module.as_str()) else {
            continue;
        };
        for dep in deps {
            if layer_of.get(dep.as_str()).is_some_and(|&l| l >= own) {
                wrong.push(format!("{module} (layer {own}) imports {dep}"));
            }
        }
    }
    assert!(wrong.is_empty(), "layer rule broken: {wrong:#?}");
}
