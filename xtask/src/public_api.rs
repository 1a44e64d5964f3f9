//! `cargo xtask public-api [--bless]`: the facade's public API as one
//! sorted line per item, compared with `crates/kubeset/public-api.txt`.
//!
//! `kubeset` only re-exports `kubeset-client` (glob), `kubeset-rest` (as
//! `rest`) and `kubeset-runtime` (as `runtime`), so the snapshot walks
//! those three crates' rustdoc JSON from their roots and writes their
//! items under the facade's paths: modules, structs with their public
//! fields, enums with their variants, traits with their items, functions
//! and inherent methods with their signatures, trait impls. Each item is
//! listed once, under its canonical path (where it is defined, when that
//! is public; else its shortest path); every other path to it is one
//! `alias KIND PATH = CANONICAL` line, and each alias needs a reason in
//! `public_api/aliases.rs` (kube-rs's paths, mostly). The generated
//! models of `kubeset-api` are pinned by `codegen --check` instead; their
//! re-exports show as `pub use kubeset_api::…` lines.
//!
//! The facade's own module `testing` (cargo feature `testing`) is walked
//! from the facade's rustdoc JSON, alone: the rest of that crate is the
//! re-exports above (and kube-rs's path aliases).
//!
//! Why not cargo-semver-checks: it does not see items of other crates,
//! re-exports included, so on the facade it checks nothing. Why
//! `RUSTC_BOOTSTRAP=1`: rustdoc's JSON output is unstable, and stable
//! rustdoc gives it only this way (cargo-semver-checks does the same);
//! it affects only this check, in its own target directory, never a build
//! of the crates. A new toolchain may change the JSON format: the walker
//! reads only long-stable fields, and `--bless` rewrites the snapshot.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::{Error, workspace_root};

mod aliases;

/// (crate, its path in the facade).
const CRATES: [(&str, &str); 3] = [
    ("kubeset-client", "kubeset"),
    ("kubeset-rest", "kubeset::rest"),
    ("kubeset-runtime", "kubeset::runtime"),
];

/// Generates the API lines and compares (or, with `bless`, writes) them.
pub fn run(bless: bool) -> Result<(), Error> {
    let root = workspace_root();
    let target = root.join("target/public-api");
    let mut lines = BTreeSet::new();
    for (krate, facade) in CRATES {
        let json = rustdoc_json(&root, &target, krate)?;
        Walker::new(&json, facade)?.walk(None, facade, &mut lines);
    }
    let json = rustdoc_json(&root, &target, "kubeset")?;
    Walker::new(&json, "kubeset")?.walk(Some("testing"), "kubeset", &mut lines);
    let problems = aliases::problems(lines.iter().map(String::as_str));
    if !problems.is_empty() {
        return Err(problems.join("\n").into());
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let snapshot = root.join("crates/kubeset/public-api.txt");
    if bless {
        std::fs::write(&snapshot, &text)?;
        println!(
            "public-api: wrote {} ({} items)",
            snapshot.display(),
            lines.len()
        );
        return Ok(());
    }
    let old = std::fs::read_to_string(&snapshot).unwrap_or_default();
    let before: BTreeSet<&str> = old.lines().collect();
    let after: BTreeSet<&str> = text.lines().collect();
    let removed: Vec<&&str> = before.difference(&after).collect();
    let added: Vec<&&str> = after.difference(&before).collect();
    if removed.is_empty() && added.is_empty() {
        println!("public-api: {} items, as in the snapshot", lines.len());
        return Ok(());
    }
    for l in &removed {
        println!("- {l}");
    }
    for l in &added {
        println!("+ {l}");
    }
    Err(format!(
        "the public API of kubeset changed ({} removed, {} added); if that is meant, \
         note it in CHANGELOG.md (a removal or a changed signature is a breaking change) \
         and run `cargo xtask public-api --bless`",
        removed.len(),
        added.len()
    )
    .into())
}

/// The features a crate is documented with: the runtime's optional parts
/// are part of the facade's API (`kubeset` features `leader`, `events`,
/// `metrics`, `conditions`, `shard`, `webhook`), so the snapshot holds them too.
fn features_of(krate: &str) -> &'static [&'static str] {
    match krate {
        "kubeset-runtime" => &[
            "--features",
            "leader,events,metrics,conditions,shard,webhook",
        ],
        "kubeset-rest" => &["--features", "ws"],
        "kubeset-client" => &["--features", "ws,protobuf"],
        "kubeset" => &["--features", "testing"],
        _ => &[],
    }
}

fn rustdoc_json(root: &Path, target: &Path, krate: &str) -> Result<Value, Error> {
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .env("RUSTC_BOOTSTRAP", "1")
        .env("CARGO_TARGET_DIR", target)
        .args(["rustdoc", "-q", "-p", krate, "--lib"])
        .args(features_of(krate))
        .arg("--")
        .args(["-Z", "unstable-options", "--output-format", "json"])
        .status()?;
    if !status.success() {
        return Err(format!("cargo rustdoc -p {krate} (JSON) failed: {status}").into());
    }
    let file = target
        .join("doc")
        .join(format!("{}.json", krate.replace('-', "_")));
    Ok(serde_json::from_slice(&std::fs::read(&file)?)?)
}

/// Walks one crate's rustdoc JSON, twice: the first walk finds every path
/// each item is reachable by, the second lists each item's members once,
/// under its canonical path, and every other path as one `alias` line.
struct Walker<'a> {
    index: HashMap<String, &'a Value>,
    root: String,
    /// Where each of the crate's own items is defined (rustdoc's `paths`),
    /// under the facade's path.
    defined: HashMap<String, String>,
    /// The one path each item's members are listed under (empty during
    /// the first walk).
    canonical: HashMap<String, String>,
}

/// What a walk writes.
#[derive(Default)]
struct Sink {
    lines: BTreeSet<String>,
    /// Module paths walked (a module re-exported into itself is walked
    /// once per path, never recursively).
    seen: BTreeSet<String>,
    /// Item id → every path the item is reachable by.
    reach: HashMap<String, BTreeSet<String>>,
}

fn id_key(id: &Value) -> String {
    id.to_string().trim_matches('"').to_owned()
}

impl<'a> Walker<'a> {
    fn new(json: &'a Value, facade: &str) -> Result<Self, Error> {
        let index = json
            .get("index")
            .and_then(Value::as_object)
            .ok_or("rustdoc JSON without an index")?
            .iter()
            .map(|(k, v)| (k.clone(), v))
            .collect();
        let root = json
            .get("root")
            .map(id_key)
            .ok_or("rustdoc JSON without a root")?;
        let defined = json
            .get("paths")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(_, p)| p.get("crate_id").and_then(Value::as_u64) == Some(0))
            .filter_map(|(id, p)| {
                let segments: Vec<&str> = p
                    .get("path")?
                    .as_array()?
                    .iter()
                    .skip(1)
                    .filter_map(Value::as_str)
                    .collect();
                let path = std::iter::once(facade)
                    .chain(segments)
                    .collect::<Vec<_>>()
                    .join("::");
                Some((id.clone(), path))
            })
            .collect();
        Ok(Walker {
            index,
            root,
            defined,
            canonical: HashMap::new(),
        })
    }

    fn item(&self, id: &Value) -> Option<&'a Value> {
        self.index.get(&id_key(id)).copied()
    }

    /// The items named by the id list at `pointer` in `v` (ids rustdoc did
    /// not index are passed over).
    fn items_at(&self, v: Option<&Value>, pointer: &str) -> Vec<&'a Value> {
        array_at(v, pointer)
            .filter_map(|id| self.item(id))
            .collect()
    }

    /// The crate's public items under `facade` (only the root's public
    /// module `only`, when given), into `out`.
    fn walk(&mut self, only: Option<&str>, facade: &str, out: &mut BTreeSet<String>) {
        let mut first = Sink::default();
        self.walk_once(only, facade, &mut first);
        self.canonical = first
            .reach
            .iter()
            .map(|(id, paths)| (id.clone(), self.choose(id, paths)))
            .collect();
        let mut second = Sink::default();
        self.walk_once(only, facade, &mut second);
        out.extend(second.lines);
    }

    /// An item's canonical path: where it is defined when that is public,
    /// else its shortest path (then the first in byte order).
    fn choose(&self, id: &str, paths: &BTreeSet<String>) -> String {
        if let Some(defined) = self.defined.get(id).filter(|d| paths.contains(*d)) {
            return defined.clone();
        }
        paths
            .iter()
            .min_by_key(|p| (p.matches("::").count(), p.as_str()))
            .cloned()
            .unwrap_or_default()
    }

    fn walk_once(&self, only: Option<&str>, facade: &str, sink: &mut Sink) {
        let Some(root) = self.index.get(&self.root).copied() else {
            return;
        };
        let Some(only) = only else {
            self.module(root, facade, sink);
            return;
        };
        for item in self.items_at(Some(root), "/inner/module/items") {
            if is_public(item) && item.get("name").and_then(Value::as_str) == Some(only) {
                self.public_item(item, facade, sink);
            }
        }
    }

    fn module(&self, module: &Value, path: &str, sink: &mut Sink) {
        for item in self.items_at(Some(module), "/inner/module/items") {
            if is_public(item) {
                self.public_item(item, path, sink);
            }
        }
    }

    fn public_item(&self, item: &Value, path: &str, sink: &mut Sink) {
        let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
        let here = format!("{path}::{name}");
        let Some((kind, inner)) = kind_of(item) else {
            return;
        };
        if kind == "use" {
            self.re_export(inner, path, sink);
            return;
        }
        let id = item.get("id").map(id_key).unwrap_or_default();
        sink.reach
            .entry(id.clone())
            .or_default()
            .insert(here.clone());
        if let Some(canonical) = self.canonical.get(&id).filter(|c| **c != here) {
            let word = match kind.as_str() {
                "module" => "mod",
                "function" => "fn",
                other => other,
            };
            sink.lines
                .insert(format!("alias {word} {here} = {canonical}"));
            return;
        }
        let out = &mut sink.lines;
        match kind.as_str() {
            "module" => {
                out.insert(format!("mod {here}"));
                // Never recursively into itself.
                if sink.seen.insert(here.clone()) {
                    self.module(item, &here, sink);
                }
            }
            "struct" => {
                out.insert(format!("struct {here}{}", generics(inner.get("generics"))));
                self.fields(inner, &here, out);
                self.impls(inner, &here, out);
            }
            "enum" => {
                out.insert(format!("enum {here}{}", generics(inner.get("generics"))));
                for v in self.items_at(Some(inner), "/variants") {
                    out.insert(format!("variant {here}::{}", self.variant(v)));
                }
                self.impls(inner, &here, out);
            }
            "trait" => {
                out.insert(format!("trait {here}{}", generics(inner.get("generics"))));
                for i in self.items_at(Some(inner), "/items") {
                    self.member(i, &here, out);
                }
            }
            "function" => {
                out.insert(format!("fn {here}{}", signature(inner)));
            }
            other => {
                out.insert(format!("{} {here}", other.replace('_', " ")));
            }
        }
    }

    /// `pub use`: local items are listed where they are re-exported (as
    /// rustdoc inlines them); other crates' items as the `use` line.
    fn re_export(&self, inner: &Value, path: &str, sink: &mut Sink) {
        let source = inner
            .get("source")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let name = inner
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let glob = inner
            .get("is_glob")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let target = inner.get("id").and_then(|id| self.item(id));
        match target {
            Some(t) if glob => self.module(t, path, sink),
            Some(t) => {
                let mut renamed = t.clone();
                renamed["name"] = Value::String(name.to_owned());
                self.public_item(&renamed, path, sink);
            }
            None if glob => {
                sink.lines.insert(format!("pub use {source}::* in {path}"));
            }
            None => {
                sink.lines
                    .insert(format!("pub use {source} as {path}::{name}"));
            }
        }
    }

    fn fields(&self, inner: &Value, here: &str, out: &mut BTreeSet<String>) {
        let plain = inner.pointer("/kind/plain");
        for f in self.items_at(plain, "/fields") {
            if is_public(f) {
                let name = f.get("name").and_then(Value::as_str).unwrap_or_default();
                let ty = f.pointer("/inner/struct_field").map(ty).unwrap_or_default();
                out.insert(format!("field {here}.{name}: {ty}"));
            }
        }
        if plain
            .and_then(|p| p.get("has_stripped_fields"))
            .and_then(Value::as_bool)
            == Some(true)
        {
            out.insert(format!("field {here}.(private fields)"));
        }
    }

    fn impls(&self, inner: &Value, here: &str, out: &mut BTreeSet<String>) {
        for imp in self.items_at(Some(inner), "/impls") {
            let Some(i) = imp.pointer("/inner/impl") else {
                continue;
            };
            let synthetic = i
                .get("is_synthetic")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let blanket = i.get("blanket_impl").is_some_and(|b| !b.is_null());
            if synthetic || blanket {
                continue;
            }
            match i.get("trait").filter(|t| !t.is_null()) {
                Some(t) => {
                    out.insert(format!("impl {} for {here}", path_ty(t)));
                }
                None => {
                    for m in self.items_at(Some(i), "/items") {
                        if is_public(m) {
                            self.member(m, here, out);
                        }
                    }
                }
            }
        }
    }

    /// A method, associated type or constant of a type or trait.
    fn member(&self, m: &Value, here: &str, out: &mut BTreeSet<String>) {
        let name = m.get("name").and_then(Value::as_str).unwrap_or_default();
        let Some((kind, inner)) = kind_of(m) else {
            return;
        };
        let line = match kind.as_str() {
            "function" => format!("fn {here}::{name}{}", signature(inner)),
            "assoc_type" => format!("type {here}::{name}"),
            "assoc_const" => format!(
                "const {here}::{name}: {}",
                inner.get("type").map(ty).unwrap_or_default()
            ),
            other => format!("{other} {here}::{name}"),
        };
        out.insert(line);
    }

    fn variant(&self, v: &Value) -> String {
        let name = v.get("name").and_then(Value::as_str).unwrap_or_default();
        let kind = v.pointer("/inner/variant/kind");
        let fields = |key: &str| -> Vec<String> {
            self.items_at(kind, key)
                .into_iter()
                .map(|f| {
                    let fname = f.get("name").and_then(Value::as_str).unwrap_or_default();
                    let t = f.pointer("/inner/struct_field").map(ty).unwrap_or_default();
                    if key.contains("tuple") {
                        t
                    } else {
                        format!("{fname}: {t}")
                    }
                })
                .collect()
        };
        match kind {
            Some(Value::Object(k)) if k.contains_key("tuple") => {
                format!("{name}({})", fields("/tuple").join(", "))
            }
            Some(Value::Object(k)) if k.contains_key("struct") => {
                format!("{name} {{ {} }}", fields("/struct/fields").join(", "))
            }
            _ => name.to_owned(),
        }
    }
}

/// `(a: T, b: U) -> R`, with `async`/`const`/`unsafe` and generics.
fn signature(f: &Value) -> String {
    let header = f.get("header");
    let flag = |k: &str| header.and_then(|h| h.get(k)).and_then(Value::as_bool) == Some(true);
    let mut prefix = String::new();
    for (k, word) in [
        ("is_const", "const "),
        ("is_async", "async "),
        ("is_unsafe", "unsafe "),
    ] {
        if flag(k) {
            prefix.push_str(word);
        }
    }
    let inputs: Vec<String> = array_at(Some(f), "/sig/inputs")
        .map(|pair| {
            let name = pair.get(0).and_then(Value::as_str).unwrap_or("_");
            let t = pair.get(1).map(ty).unwrap_or_default();
            if name == "self" {
                t
            } else {
                format!("{name}: {t}")
            }
        })
        .collect();
    let output = match f.pointer("/sig/output") {
        Some(Value::Null) | None => String::new(),
        Some(t) => format!(" -> {}", ty(t)),
    };
    let generics = generics(f.get("generics"));
    let mut s = format!("{generics}({}){output}", inputs.join(", "));
    if !prefix.is_empty() {
        s = format!(" [{}]{s}", prefix.trim_end());
    }
    s
}

/// `<T: Bound, 'a>` of a generics object (bounds of type parameters and
/// where-predicates inline).
fn generics(g: Option<&Value>) -> String {
    let Some(g) = g else { return String::new() };
    let mut params: Vec<String> = Vec::new();
    for p in array_at(Some(g), "/params") {
        let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
        let kind = p.get("kind");
        if let Some(t) = kind.and_then(|k| k.get("type")) {
            if t.get("is_synthetic").and_then(Value::as_bool) == Some(true) {
                continue;
            }
            params.push(with_bounds(name, t.get("bounds")));
        } else if let Some(c) = kind.and_then(|k| k.get("const")) {
            params.push(format!(
                "const {name}: {}",
                c.get("type").map(ty).unwrap_or_default()
            ));
        } else {
            params.push(name.to_owned());
        }
    }
    let mut wheres: Vec<String> = Vec::new();
    for w in array_at(Some(g), "/where_predicates") {
        if let Some(b) = w.get("bound_predicate") {
            let t = b.get("type").map(ty).unwrap_or_default();
            wheres.push(with_bounds(&t, b.get("bounds")));
        }
    }
    let mut s = String::new();
    if !params.is_empty() {
        s = format!("<{}>", params.join(", "));
    }
    if !wheres.is_empty() {
        s.push_str(&format!(" where {}", wheres.join(", ")));
    }
    s
}

fn with_bounds(name: &str, bounds: Option<&Value>) -> String {
    let b = bounds_text(bounds);
    if b.is_empty() {
        name.to_owned()
    } else {
        format!("{name}: {b}")
    }
}

/// The elements of the array at `pointer` in `v` (`""`: `v` itself); none
/// where there is no array.
fn array_at<'v>(v: Option<&'v Value>, pointer: &str) -> impl Iterator<Item = &'v Value> + use<'v> {
    v.and_then(|v| v.pointer(pointer))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// An item's kind (`struct`, `function`, …) and what rustdoc says of it
/// as that kind: the one entry of its `inner`.
fn kind_of(item: &Value) -> Option<(&String, &Value)> {
    item.get("inner")
        .and_then(Value::as_object)
        .and_then(|m| m.iter().next())
}

/// Whether rustdoc marks `item` public.
fn is_public(item: &Value) -> bool {
    item.get("visibility").and_then(Value::as_str) == Some("public")
}

fn bounds_text(bounds: Option<&Value>) -> String {
    let list: Vec<String> = array_at(bounds, "")
        .filter_map(|b| {
            if let Some(t) = b.get("trait_bound") {
                let maybe = t.get("modifier").and_then(Value::as_str) == Some("maybe");
                let p = t.get("trait").map(path_ty).unwrap_or_default();
                Some(if maybe { format!("?{p}") } else { p })
            } else {
                b.get("outlives").and_then(Value::as_str).map(str::to_owned)
            }
        })
        .collect();
    list.join(" + ")
}

/// A path with its generic arguments: `Vec<String>`, `Fn(u8) -> bool`.
fn path_ty(p: &Value) -> String {
    let name = p
        .get("path")
        .or_else(|| p.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("?");
    let args = p.get("args").filter(|a| !a.is_null());
    let Some(args) = args else {
        return name.to_owned();
    };
    if let Some(ab) = args.get("angle_bracketed") {
        let mut parts: Vec<String> = array_at(Some(ab), "/args")
            .map(|a| match a {
                Value::Object(m) => match m.iter().next() {
                    Some((k, v)) if k == "type" => ty(v),
                    Some((_, v)) => v
                        .as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| v.to_string()),
                    None => String::new(),
                },
                other => other.to_string(),
            })
            .collect();
        for c in ab
            .get("constraints")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let n = c.get("name").and_then(Value::as_str).unwrap_or_default();
            let binding = c.get("binding");
            let rhs = binding
                .and_then(|b| b.pointer("/equality/type"))
                .map(ty)
                .or_else(|| {
                    binding
                        .and_then(|b| b.get("constraint"))
                        .map(|b| bounds_text(Some(b)))
                })
                .unwrap_or_default();
            parts.push(format!("{n} = {rhs}"));
        }
        if parts.is_empty() {
            return name.to_owned();
        }
        return format!("{name}<{}>", parts.join(", "));
    }
    if let Some(pa) = args.get("parenthesized") {
        let inputs: Vec<String> = array_at(Some(pa), "/inputs").map(ty).collect();
        let out = pa
            .get("output")
            .filter(|o| !o.is_null())
            .map(|o| format!(" -> {}", ty(o)))
            .unwrap_or_default();
        return format!("{name}({}){out}", inputs.join(", "));
    }
    name.to_owned()
}

/// A type as Rust writes it (the common shapes; anything else `?`).
fn ty(t: &Value) -> String {
    let Some((kind, v)) = t.as_object().and_then(|m| m.iter().next()) else {
        return t
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| "?".to_owned());
    };
    match kind.as_str() {
        "resolved_path" => path_ty(v),
        "generic" | "primitive" => v.as_str().unwrap_or("?").to_owned(),
        "borrowed_ref" => {
            let lt = v
                .get("lifetime")
                .and_then(Value::as_str)
                .map(|l| format!("{l} "))
                .unwrap_or_default();
            let m = if v.get("is_mutable").and_then(Value::as_bool) == Some(true) {
                "mut "
            } else {
                ""
            };
            format!("&{lt}{m}{}", v.get("type").map(ty).unwrap_or_default())
        }
        "raw_pointer" => {
            let m = if v.get("is_mutable").and_then(Value::as_bool) == Some(true) {
                "mut"
            } else {
                "const"
            };
            format!("*{m} {}", v.get("type").map(ty).unwrap_or_default())
        }
        "tuple" => {
            let parts: Vec<String> = v.as_array().into_iter().flatten().map(ty).collect();
            format!("({})", parts.join(", "))
        }
        "slice" => format!("[{}]", ty(v)),
        "array" => format!(
            "[{}; {}]",
            v.get("type").map(ty).unwrap_or_default(),
            v.get("len").and_then(Value::as_str).unwrap_or("?")
        ),
        "impl_trait" => format!("impl {}", bounds_text(Some(v))),
        "dyn_trait" => {
            let traits: Vec<String> = array_at(Some(v), "/traits")
                .filter_map(|p| p.get("trait").map(path_ty))
                .collect();
            let lt = v
                .get("lifetime")
                .and_then(Value::as_str)
                .map(|l| format!(" + {l}"))
                .unwrap_or_default();
            format!("dyn {}{lt}", traits.join(" + "))
        }
        "qualified_path" => {
            let name = v.get("name").and_then(Value::as_str).unwrap_or_default();
            let self_ty = v.get("self_type").map(ty).unwrap_or_default();
            match v.get("trait").filter(|t| !t.is_null()) {
                Some(tr) => format!("<{self_ty} as {}>::{name}", path_ty(tr)),
                None => format!("{self_ty}::{name}"),
            }
        }
        "function_pointer" => {
            let inputs: Vec<String> = array_at(Some(v), "/sig/inputs")
                .filter_map(|p| p.get(1).map(ty))
                .collect();
            let out = v
                .pointer("/sig/output")
                .filter(|o| !o.is_null())
                .map(|o| format!(" -> {}", ty(o)))
                .unwrap_or_default();
            format!("fn({}){out}", inputs.join(", "))
        }
        _ => "?".to_owned(),
    }
}
