//! The layer rule's reader, shared by every crate's `tests/layers.rs`
//! (included with `#[path]`; ARCHITECTURE.md, "Layers"): a crate's modules
//! import each other without a cycle, each module of the crate's table
//! imports only modules of lower layers, every module has its place in the
//! table, and no function is longer than a screen or two.
//!
//! Read from the sources, not the compiler: a file's `crate::…`,
//! `super::…` and `self::…` paths (and the entries of their use trees)
//! outside comments and its `#[cfg(test)]` part. A node is a top-level
//! module unless the crate's test maps a module path to another node.

#![allow(dead_code)] // each crate's test uses the parts it needs

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// node → the nodes it imports.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// The longest a hand-written function may be (the style guide's "a screen
/// or two").
pub const MAX_FN_LINES: usize = 120;

/// Every `.rs` file under `dir`, in a stable order.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let entries = fs::read_dir(&d).unwrap_or_else(|e| panic!("read {}: {e}", d.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The module path of a source file (`admission/cel/check.rs` →
/// `[admission, cel, check]`, `stream/mod.rs` → `[stream]`, `lib.rs` → `[]`).
pub fn module_path(path: &Path, src: &Path) -> Vec<String> {
    let rel = path.strip_prefix(src).expect("under src");
    let mut segs: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = segs.pop() {
        let stem = last.trim_end_matches(".rs");
        if !matches!(stem, "mod" | "lib" | "main") {
            segs.push(stem.to_owned());
        }
    }
    segs
}

/// The default node of a module path: its top-level module (`None` for
/// the crate root).
pub fn top_level(path: &[String]) -> Option<String> {
    path.first().cloned()
}

/// The code of a file: before its test part (`#[cfg(test)]`,
/// `#[cfg(all(test, …))]`), comment lines out.
pub fn code(text: &str) -> String {
    text.lines()
        .take_while(|l| {
            let l = l.trim_start();
            !(l.starts_with("#[cfg(test)]") || l.starts_with("#[cfg(all(test,"))
        })
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The first two segments of the path at the start of `s` (`a::b::c(…` →
/// `[a, b]`), stopping at anything but `::` and a name.
fn segments(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s.trim_start();
    while out.len() < 2 {
        let name = ident(rest);
        if name.is_empty() {
            break;
        }
        rest = &rest[name.len()..];
        out.push(name);
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => break,
        }
    }
    out
}

/// The paths (first two segments at most) a use tree at `s` (just after
/// its `{`) names: `{a::b::C, d, e::{f, g}}` → `[a, b]`, `[d]`, `[e]`.
fn tree_paths(s: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut depth = 1usize;
    let mut item = String::new();
    for c in s.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if depth == 0 || (depth == 1 && c == ',') {
            out.push(item.trim().to_owned());
            item.clear();
            if depth == 0 {
                break;
            }
            continue;
        }
        item.push(c);
    }
    out.iter()
        .filter(|i| !i.is_empty())
        .map(|i| segments(i))
        .filter(|p| !p.is_empty())
        .collect()
}

/// Every crate path a file's code names, resolved from the file's module
/// path `own`: `crate::a::b`, `super::x` (repeated), `self::y`, and the
/// entries of their use trees; the first two segments of each.
pub fn crate_paths(code: &str, own: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for (start, _) in code.char_indices() {
        let before = start.checked_sub(1).map(|i| bytes[i]);
        if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':') {
            continue;
        }
        let rest = &code[start..];
        let (mut base, mut at) = if rest.starts_with("crate::") {
            (Vec::new(), "crate::".len())
        } else if rest.starts_with("self::") {
            (own.to_vec(), "self::".len())
        } else if rest.starts_with("super::") {
            (own.to_vec(), 0)
        } else {
            continue;
        };
        while code[start + at..].starts_with("super::") {
            base.pop();
            at += "super::".len();
        }
        let tail = &code[start + at..];
        let tails = match tail.strip_prefix('{') {
            Some(tree) => tree_paths(tree),
            None => vec![segments(tail)],
        };
        for t in tails {
            let mut full = base.clone();
            full.extend(t);
            out.push(full);
        }
    }
    out
}

/// `pub use a::b::{X, Y};` in the crate root: re-exported name → module `a`.
pub fn re_exports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for stmt in code(lib).split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let rest = rest.strip_prefix("crate::").unwrap_or(rest);
        let rest = rest.strip_prefix("self::").unwrap_or(rest);
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

/// `code` without the re-exports (`pub use …;`, `pub(crate) use …;`)
/// that `drop` picks by their path: what a module offers under its own
/// path is not always what its code uses.
fn without_re_exports(code: &str, drop: impl Fn(&str) -> bool) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let head = rest[..at].trim_end();
        let end = rest[at..].find(';').map_or(rest.len(), |e| at + e + 1);
        let re_export = head
            .strip_suffix("pub(crate)")
            .or_else(|| head.strip_suffix("pub(super)"))
            .or_else(|| head.strip_suffix("pub"))
            .filter(|before| before.is_empty() || before.ends_with(['\n', ';', '{', '}', ']']))
            .filter(|_| drop(rest[at + "use ".len()..end].trim_start()));
        match re_export {
            Some(before) => out.push_str(before),
            None => out.push_str(&rest[..end]),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The code the graph reads of one file: its test part and comments out;
/// a folder module's re-exports of its own parts (`pub use self::…`: what
/// the folder offers, each part may be a node of its own) out; and in a
/// generated file every re-export (the generator's re-exports of
/// hand-written types at their definition's path are not uses). A
/// hand-written `pub use crate::…` stays: it also brings the names into
/// the module's scope, where its code uses them.
fn read_code(file: &Path, text: &str) -> String {
    let code = code(text);
    if text.starts_with("// Generated by") {
        without_re_exports(&code, |_| true)
    } else if file.ends_with("mod.rs") {
        without_re_exports(&code, |path| path.starts_with("self::"))
    } else {
        code
    }
}

/// The crate's import graph: `src` is its source folder (the root is
/// `lib.rs`, else `main.rs`), `node_of` maps a module path to its node
/// (`None`: the root, which declares every module).
pub fn graph(src: &Path, node_of: impl Fn(&[String]) -> Option<String>) -> Graph {
    // `src/bin/*.rs` are crates of their own.
    let files: Vec<PathBuf> = rust_files(src)
        .into_iter()
        .filter(|f| !f.starts_with(src.join("bin")))
        .collect();
    let root = ["lib.rs", "main.rs"]
        .iter()
        .find_map(|f| fs::read_to_string(src.join(f)).ok())
        .expect("lib.rs or main.rs");
    let exports = re_exports(&root);
    // `pub use sub::Item` in a folder module's `mod.rs`: `a::Item` is
    // `a::sub`'s, which may be a node of its own.
    let nested: BTreeMap<String, BTreeMap<String, String>> = files
        .iter()
        .filter(|f| f.ends_with("mod.rs"))
        .filter_map(|f| {
            let [module] = module_path(f, src).try_into().ok()?;
            Some((module, re_exports(&fs::read_to_string(f).ok()?)))
        })
        .collect();
    let resolve = |mut path: Vec<String>| {
        if let [module, item, ..] = path.as_slice()
            && let Some(sub) = nested.get(module).and_then(|m| m.get(item))
        {
            path = vec![module.clone(), sub.clone()];
        }
        node_of(&path)
    };
    let nodes: BTreeSet<String> = files
        .iter()
        .filter_map(|f| node_of(&module_path(f, src)))
        .collect();
    let mut graph = Graph::new();
    for file in &files {
        let own = module_path(file, src);
        let Some(node) = node_of(&own) else {
            continue;
        };
        let text = fs::read_to_string(file).expect("source");
        let text = read_code(file, &text);
        let deps = graph.entry(node.clone()).or_default();
        for path in crate_paths(&text, &own) {
            let target = match resolve(path) {
                Some(n) if nodes.contains(&n) => n,
                Some(n) => match exports.get(&n) {
                    Some(m) if nodes.contains(m) => m.clone(),
                    _ => continue, // another crate's item, re-exported
                },
                None => continue,
            };
            if target != node {
                deps.insert(target);
            }
        }
    }
    graph
}

/// A cycle of `graph`, if any (depth-first search).
pub fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
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
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

/// Panics with the cycle when `graph` has one.
pub fn assert_no_cycle(graph: &Graph) {
    if let Some(cycle) = find_cycle(graph) {
        panic!("import cycle: {}", cycle.join(" → "));
    }
}

/// Panics when a node of `graph` has no place in `layers` (lowest first)
/// or imports a node of its own layer or a higher one.
pub fn assert_layers(graph: &Graph, layers: &[&[&str]]) {
    let layer_of: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, mods)| mods.iter().map(move |m| (*m, i)))
        .collect();
    let unlisted: Vec<&String> = graph
        .keys()
        .filter(|m| !layer_of.contains_key(m.as_str()))
        .collect();
    assert!(
        unlisted.is_empty(),
        "modules missing from LAYERS: {unlisted:?}"
    );
    let stale: Vec<&&str> = layer_of
        .keys()
        .filter(|m| !graph.contains_key(**m))
        .collect();
    assert!(
        stale.is_empty(),
        "LAYERS names modules that do not exist: {stale:?}"
    );
    let mut wrong = Vec::new();
    for (module, deps) in graph {
        let own = layer_of[module.as_str()];
        for dep in deps {
            if layer_of.get(dep.as_str()).is_some_and(|&l| l >= own) {
                wrong.push(format!("{module} (layer {own}) imports {dep}"));
            }
        }
    }
    assert!(wrong.is_empty(), "layer rule broken: {wrong:#?}");
}

/// Each line's braces outside string, char and raw-string literals and
/// comments, so that the braces left are the code's. A string that goes on
/// over several lines (a `\` continuation, a multi-line literal) is
/// followed across them.
fn brace_lines(text: &str) -> Vec<String> {
    #[derive(Clone, Copy, PartialEq)]
    enum In {
        Code,
        Str,
        /// A raw string closed by `"` and this many `#`.
        Raw(usize),
    }
    let mut state = In::Code;
    let mut out = Vec::new();
    for line in text.lines() {
        let mut braces = String::new();
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            match state {
                In::Str => match c {
                    '\\' => i += 1,
                    '"' => state = In::Code,
                    _ => {}
                },
                In::Raw(hashes) => {
                    if c == '"'
                        && chars[i + 1..].iter().take_while(|&&h| h == '#').count() >= hashes
                    {
                        state = In::Code;
                        i += hashes;
                    }
                }
                In::Code => match c {
                    '/' if chars.get(i + 1) == Some(&'/') => break,
                    '"' => state = In::Str,
                    'r' if !chars
                        .get(i.wrapping_sub(1))
                        .is_some_and(|p| p.is_alphanumeric() || *p == '_') =>
                    {
                        let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
                        if chars.get(i + 1 + hashes) == Some(&'"') {
                            state = In::Raw(hashes);
                            i += 1 + hashes;
                        }
                    }
                    // A char literal ('{', '\''), not a lifetime ('a).
                    '\'' => {
                        if chars.get(i + 1) == Some(&'\\') {
                            i += chars[i + 2..]
                                .iter()
                                .position(|&q| q == '\'')
                                .map_or(0, |p| p + 2);
                        } else if chars.get(i + 2) == Some(&'\'') {
                            i += 2;
                        }
                    }
                    '{' | '}' => braces.push(c),
                    _ => {}
                },
            }
            i += 1;
        }
        out.push(braces);
    }
    out
}

/// `(name, first line, length)` of every `fn` with a body in `text`.
pub fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let braces = brace_lines(text);
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let Some(at) = code.find("fn ") else {
            continue;
        };
        let is_fn = code[..at].split_whitespace().all(|w| {
            matches!(w, "pub" | "async" | "const" | "unsafe" | "extern") || w.starts_with("pub(")
        });
        if !is_fn {
            continue;
        }
        let name = ident(&code[at + 3..]);
        let mut depth = 0i64;
        let mut opened = false;
        for (j, l) in lines.iter().enumerate().skip(i) {
            for b in braces[j].chars() {
                depth += if b == '{' { 1 } else { -1 };
                opened = true;
            }
            if opened && depth <= 0 {
                out.push((name.clone(), i + 1, j - i + 1));
                break;
            }
            if !opened && braces[j].is_empty() && l.trim_end().ends_with(';') {
                break; // a declaration without a body
            }
        }
    }
    out
}

/// Panics naming every hand-written function under `src` longer than
/// [`MAX_FN_LINES`]. Generated files (their first line is the generators'
/// preamble, `// Generated by …`) are not held to it.
pub fn assert_short_functions(src: &Path) {
    let mut long = Vec::new();
    for file in rust_files(src) {
        let rel = file
            .strip_prefix(src)
            .expect("under src")
            .to_string_lossy()
            .into_owned();
        let text = fs::read_to_string(&file).expect("source");
        if text.starts_with("// Generated by") {
            continue;
        }
        for (name, line, len) in functions(&text) {
            if len > MAX_FN_LINES {
                long.push(format!("{rel}:{line} {name}: {len} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines: {long:#?}"
    );
}

/// The three checks of a crate's `tests/layers.rs`, as tests: no import
/// cycle (and the reader sees the named import `from → to`, so a reader
/// that finds nothing cannot pass), the layer table, short functions.
/// `node_of` maps a module path to its node ([`top_level`] for plain
/// top-level modules).
///
/// ```ignore
/// layers::layer_tests!(LAYERS, layers::top_level, "api_typed" => "url");
/// ```
#[allow(unused_macros)] // `error_display.rs` uses the reader only
macro_rules! layer_tests {
    ($layers:expr, $node_of:expr, $from:literal => $to:literal) => {
        fn src_dir() -> std::path::PathBuf {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
        }

        #[test]
        fn modules_import_without_a_cycle() {
            let graph = layers::graph(&src_dir(), $node_of);
            assert!(
                graph.get($from).is_some_and(|deps| deps.contains($to)),
                "the reader sees {} → {}",
                $from,
                $to
            );
            layers::assert_no_cycle(&graph);
        }

        #[test]
        fn each_layer_imports_only_lower_layers() {
            layers::assert_layers(&layers::graph(&src_dir(), $node_of), $layers);
        }

        #[test]
        fn functions_fit_a_screen_or_two() {
            layers::assert_short_functions(&src_dir());
        }
    };
}
#[allow(unused_imports)]
pub(crate) use layer_tests;

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// The reader itself, on known text (run in every crate that includes it).
#[test]
fn the_reader_sees_imports_and_measures_functions() {
    let own = strings(&["admission", "cel", "check"]);
    let paths = crate_paths(
        "use crate::{a::{B, c::D}, e, f::G};\nlet x = crate::h::i(crate::J);\nuse super::value::x;\nuse super::super::schema::Node;\nuse self::inner::Y;",
        &own,
    );
    let want: Vec<Vec<String>> = vec![
        strings(&["a"]),
        strings(&["e"]),
        strings(&["f", "G"]),
        strings(&["h", "i"]),
        strings(&["J"]),
        strings(&["admission", "cel", "value", "x"]),
        strings(&["admission", "schema", "Node"]),
        strings(&["admission", "cel", "check", "inner", "Y"]),
    ];
    assert_eq!(paths, want);
    let text = "pub use self::a::B;\nuse self::c::D;\npub(crate) use crate::e::{F,\n G};\nfn f() { let reuse = 1; }";
    assert_eq!(
        without_re_exports(text, |_| true),
        "\nuse self::c::D;\n\nfn f() { let reuse = 1; }"
    );
    assert_eq!(
        without_re_exports(text, |path| path.starts_with("self::")),
        "\nuse self::c::D;\npub(crate) use crate::e::{F,\n G};\nfn f() { let reuse = 1; }"
    );
    let exports =
        re_exports("pub use a::{B, C};\npub use crate::d::e::F;\npub use self::h::I;\npub mod g;");
    assert_eq!(exports.get("I").map(String::as_str), Some("h"));
    assert_eq!(exports.get("C").map(String::as_str), Some("a"));
    assert_eq!(exports.get("F").map(String::as_str), Some("d"));
    let looped: Graph = [
        ("a".to_owned(), ["b".to_owned()].into()),
        ("b".to_owned(), ["a".to_owned()].into()),
    ]
    .into();
    assert_eq!(find_cycle(&looped), Some(strings(&["a", "b", "a"])));
    let text = "fn a() {\n    let s = \"{\";\n    let c = '}';\n}\n\npub(crate) async fn b<'x>(v: &'x str) -> &'x str {\n    // {\n    v\n}\ntrait T {\n    fn c(&self);\n}\n";
    let found = functions(text);
    assert_eq!(found, vec![("a".to_owned(), 1, 4), ("b".to_owned(), 6, 4)]);
    let strings_over_lines = r##"fn c() {
    let s = "{\
        }}{";
    let r = r#"{"}"#;
    let q = '\'';
}
fn d() {}
"##;
    assert_eq!(
        functions(strings_over_lines),
        vec![("c".to_owned(), 1, 6), ("d".to_owned(), 7, 1)]
    );
}
