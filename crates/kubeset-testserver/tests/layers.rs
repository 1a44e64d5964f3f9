//! The layer rule of ARCHITECTURE.md ("kubeset-testserver"): the crate's
//! modules import each other without a cycle, and each module of the table
//! below imports only modules of lower layers. Read from the sources (a
//! module's `crate::…`, `super::…` and `self::…` paths outside comments
//! and its `#[cfg(test)]` part), so the import cycle the request path once
//! had (`http → verbs → store → deletion → http`) cannot come back unseen.
//!
//! It also holds every function of the crate (all hand-written) to the
//! style guide's 120 lines.
//!
//! A node is a top-level module, except two parts of `admission`: the CRD
//! schema compiler (its `schema`, `cel`, `validate`, `format` and
//! `shape`), which imports nothing of the crate but itself and the name
//! rules (`names`) and is the node `admission::schema`: `resources` keeps
//! a CRD version's compiled schema, so it sits below `resources` while the
//! rest of `admission` sits above; and the built-in validation of the
//! kinds' own fields (`builtin`), the node `admission::builtin`: each
//! kind's strategy in `registry` calls it, so it sits below `registry`,
//! which sits below the rest of `admission` (which looks the strategies
//! up).

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
};

/// The schema compiler's submodules of `admission` (one node).
const COMPILER: &[&str] = &["schema", "cel", "validate", "format", "shape"];

/// The built-in validation's submodule of `admission` (a node of its own).
const BUILTIN: &str = "builtin";

/// The layers, lowest first: a module may import only modules of a lower
/// layer. Every module has its place here (a new one is placed when it is
/// added).
const LAYERS: &[&[&str]] = &[
    // Leaves: plain types and pure rules that import nothing of the crate.
    &[
        "util", "auth", "bounds", "owners", "fieldset", "faults", "names",
    ],
    // The CRD schema compiler (its CEL format library uses `names`).
    &["admission::schema"],
    // The served resources (a CRD version keeps its compiled schema).
    &["resources"],
    // What only needs a resource: errors as Status, selectable fields,
    // list types and map keys, events' two versions, discovery documents.
    &["status", "fields", "shape", "events", "discovery"],
    // The wire plumbing, selectors, structured merge, bounds, the rules
    // every kind's strategy names.
    &[
        "error",
        "wire",
        "selectors",
        "smd",
        "limits",
        "services",
        "validation",
        "review",
    ],
    &[
        "immutable",
        "patch",
        "printers",
        "defaults",
        "inflight",
        "options",
        "protobuf",
        "deletion",
        "openapi",
        "kubeconfig",
        "tls",
    ],
    // The built-in validation of the kinds' own fields.
    &["admission::builtin"],
    // One strategy per kind, looked up from a table: each names its
    // kind's defaults and built-in validation.
    &["registry"],
    // Admission, field management, Tables, connection state.
    &["admission", "apply", "conns"],
    // Typed decoding; the webhooks' HTTPS client.
    &["typed", "webhook_client"],
    // CRD conversion webhooks: the rules the store converts by, and
    // their calls, which reads make after the store answered.
    &["conversion"],
    // The generic store: the strategies' hooks in kube-apiserver's order;
    // Tables by the strategies' printers.
    &["store", "table"],
    // What works over the store.
    &["gc", "fanout", "subresource", "stream"],
    &["watch", "shared", "controllers"],
    // The verbs, then routing, then the connections that call it.
    &["verbs"],
    // Admission webhooks called around the verbs' writes.
    &["webhooks"],
    &["http", "fuzz_hooks"],
    &["server"],
    &["replica"],
    &["admin"],
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The module path of a source file (`admission/cel/check.rs` →
/// `[admission, cel, check]`, `stream/mod.rs` → `[stream]`, `lib.rs` → `[]`).
fn module_path(path: &Path, src: &Path) -> Vec<String> {
    let rel = path.strip_prefix(src).expect("under src");
    let mut segs: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = segs.pop() {
        let stem = last.trim_end_matches(".rs");
        if stem != "mod" && stem != "lib" {
            segs.push(stem.to_owned());
        }
    }
    segs
}

/// The node of a module path: its top-level module, or
/// `admission::schema` for the schema compiler, `admission::builtin` for
/// the built-in validation.
fn node_of(path: &[String]) -> Option<String> {
    let first = path.first()?;
    if first == "admission" && path.get(1).is_some_and(|s| COMPILER.contains(&s.as_str())) {
        return Some("admission::schema".to_owned());
    }
    if first == "admission" && path.get(1).is_some_and(|s| s == BUILTIN) {
        return Some("admission::builtin".to_owned());
    }
    Some(first.clone())
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
fn crate_paths(code: &str, own: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for (start, _) in code.char_indices() {
        let before_ok = start == 0
            || !(bytes[start - 1].is_ascii_alphanumeric()
                || bytes[start - 1] == b'_'
                || bytes[start - 1] == b':');
        if !before_ok {
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
        let tails = if let Some(tree) = tail.strip_prefix('{') {
            tree_paths(tree)
        } else {
            vec![segments(tail)]
        };
        for t in tails {
            let mut full = base.clone();
            full.extend(t);
            out.push(full);
        }
    }
    out
}

/// `pub use a::b::{X, Y};` in lib.rs: re-exported name → module `a`.
fn re_exports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let lib = code(lib);
    for stmt in lib.split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let rest = rest.strip_prefix("crate::").unwrap_or(rest);
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

/// node → the nodes it imports.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let lib = fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let exports = re_exports(&lib);
    let nodes: BTreeSet<String> = files
        .iter()
        .filter_map(|f| node_of(&module_path(f, &src)))
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let own = module_path(file, &src);
        let Some(node) = node_of(&own) else {
            continue; // lib.rs: the root, which declares every module
        };
        let text = fs::read_to_string(file).expect("source");
        let deps = graph.entry(node.clone()).or_default();
        for path in crate_paths(&code(&text), &own) {
            let target = match node_of(&path) {
                Some(n) if nodes.contains(&n) => n,
                Some(n) => match exports.get(&n) {
                    Some(m) => m.clone(),
                    None => continue,
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

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn the_reader_sees_imports() {
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
    assert_eq!(
        node_of(&strings(&["admission", "cel", "value"])).as_deref(),
        Some("admission::schema")
    );
    assert_eq!(
        node_of(&strings(&["admission", "policy"])).as_deref(),
        Some("admission")
    );
    assert_eq!(
        node_of(&strings(&["admission", "builtin", "pod"])).as_deref(),
        Some("admission::builtin")
    );
    let exports = re_exports("pub use a::{B, C};\npub use crate::d::e::F;\npub mod g;");
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
    assert!(graph.contains_key("http") && graph.contains_key("store"));
    assert!(
        graph["http"].contains("verbs"),
        "the reader sees http → verbs"
    );
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
    let graph = graph();
    let unlisted: Vec<&String> = graph
        .keys()
        .filter(|m| !layer_of.contains_key(m.as_str()))
        .collect();
    assert!(
        unlisted.is_empty(),
        "modules missing from LAYERS: {unlisted:?}"
    );
    let mut wrong = Vec::new();
    for (module, deps) in &graph {
        let own = layer_of[module.as_str()];
        for dep in deps {
            if layer_of.get(dep.as_str()).is_some_and(|&l| l >= own) {
                wrong.push(format!("{module} (layer {own}) imports {dep}"));
            }
        }
    }
    assert!(wrong.is_empty(), "layer rule broken: {wrong:#?}");
}

/// The longest a function may be (the style guide's "a screen or two").
const MAX_FN_LINES: usize = 120;

/// A line with its string and char literals blanked and its `//` comment
/// cut, so that the braces left are the code's.
fn braces_of(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(d) = chars.next() {
                    match d {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            // A char literal ('{', '\''), not a lifetime ('a).
            '\'' => {
                let rest: String = chars.clone().take(3).collect();
                if rest.starts_with('\\') {
                    chars.nth(2);
                } else if rest.chars().nth(1) == Some('\'') {
                    chars.nth(1);
                }
            }
            '/' if chars.peek() == Some(&'/') => break,
            '{' | '}' => out.push(c),
            _ => {}
        }
    }
    out
}

/// `(name, first line, length)` of every `fn` with a body in `text`.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let Some(at) = code.find("fn ") else {
            continue;
        };
        let head = &code[..at];
        let is_fn = head.split_whitespace().all(|w| {
            matches!(w, "pub" | "async" | "const" | "unsafe" | "extern") || w.starts_with("pub(")
        });
        if !is_fn {
            continue;
        }
        let name = ident(&code[at + 3..]);
        let mut depth = 0i64;
        let mut opened = false;
        for (j, l) in lines.iter().enumerate().skip(i) {
            for b in braces_of(l).chars() {
                depth += if b == '{' { 1 } else { -1 };
                opened = true;
            }
            if opened && depth <= 0 {
                out.push((name.clone(), i + 1, j - i + 1));
                break;
            }
            if !opened && braces_of(l).is_empty() && l.trim_end().ends_with(';') {
                break; // a declaration without a body
            }
        }
    }
    out
}

#[test]
fn the_reader_measures_functions() {
    let text = "fn a() {\n    let s = \"{\";\n    let c = '}';\n}\n\npub(crate) async fn b<'x>(v: &'x str) -> &'x str {\n    // {\n    v\n}\ntrait T {\n    fn c(&self);\n}\n";
    let found = functions(text);
    let want = vec![("a".to_owned(), 1, 4), ("b".to_owned(), 6, 4)];
    assert_eq!(found, want);
}

#[test]
fn functions_fit_a_screen_or_two() {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut long = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("source");
        for (name, line, len) in functions(&text) {
            if len > MAX_FN_LINES {
                let rel = file.strip_prefix(&src).expect("under src").display();
                long.push(format!("{rel}:{line} {name}: {len} lines"));
            }
        }
    }
    assert!(files.len() > 50, "the crate's sources are read");
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines: {long:#?}"
    );
}
