//! The CLI-size row (`--only cli-size`): how big the shipped `kubeset`
//! binary is (`cargo build --profile dist -p kubeset-cli`, issue 37's
//! target: under 20 MB) and where its bytes go.
//!
//! Builds the dist profile once with symbols kept
//! (`--config profile.dist.strip=false`, in `<target>/bench-cli-size`; a
//! dist build takes 10–20 minutes on 2 loaded cores, so this is a bench
//! row and not a CI check), then reports:
//! - the size after `strip --strip-all` (what `strip = true` ships; the
//!   two agree to within a few KB),
//! - the ELF sections (`size -A`): code, unwind tables, read-only data,
//!   relocations,
//! - `.text` by crate and by kind of code, from the sized symbols of
//!   `nm -S -C` (a trait impl `<T as Trait>::f` and drop glue counted for
//!   `T`'s crate, other code for the first path segment).
//!
//! `KUBESET_BENCH_CLI_BIN=PATH` measures an unstripped binary already
//! built instead of building one.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use super::{field, output, text};
use crate::Error;

/// Sections and crates listed in the table (the rest summed as "other").
const TOP: usize = 14;

/// Builds (unless `KUBESET_BENCH_CLI_BIN` names a binary) and measures.
pub(super) fn run(root: &Path, target: &Path) -> Result<Vec<Value>, Error> {
    let binary = match std::env::var_os("KUBESET_BENCH_CLI_BIN") {
        Some(path) => PathBuf::from(path),
        None => build(root, target)?,
    };
    let unstripped = std::fs::metadata(&binary)
        .map_err(|e| format!("cli-size: {}: {e}", binary.display()))?
        .len();
    let copy = target.join("bench-cli-size/kubeset-stripped");
    std::fs::create_dir_all(copy.parent().unwrap_or(target))?;
    output(
        Command::new("strip")
            .arg("--strip-all")
            .arg("-o")
            .arg(&copy)
            .arg(&binary),
        "strip --strip-all",
    )?;
    let stripped = std::fs::metadata(&copy)?.len();
    let sections = sections(&output(
        Command::new("size").arg("-A").arg(&binary),
        "size -A",
    )?);
    let symbols = output(
        Command::new("nm")
            .args(["-S", "--size-sort", "-C"])
            .arg(&binary),
        "nm -S -C",
    )?;
    let (crates, kinds) = text_by_crate_and_kind(&symbols);
    Ok(vec![json!({
        "bench": "cli-size",
        "impl": "kubeset (dist)",
        "items": 1,
        "samples_s": [],
        "median_s": 0.0,
        "bytes": stripped,
        "unstripped_bytes": unstripped,
        "sections": sections,
        "text_by_crate": crates,
        "text_by_kind": kinds,
    })])
}

/// `cargo build --profile dist -p kubeset-cli`, symbols kept.
fn build(root: &Path, target: &Path) -> Result<PathBuf, Error> {
    let dir = target.join("bench-cli-size");
    eprintln!("=== xtask bench: dist build of kubeset-cli (symbols kept; 10–20 minutes)");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    output(
        Command::new(cargo)
            .args(["build", "--quiet", "--profile", "dist", "-p", "kubeset-cli"])
            .args(["--config", "profile.dist.strip=false"])
            .env("CARGO_TARGET_DIR", &dir)
            .current_dir(root),
        "dist build of kubeset-cli",
    )?;
    Ok(dir.join("dist/kubeset"))
}

/// `size -A`'s sections as `[name, bytes]`, biggest first.
fn sections(size_a: &str) -> Sizes {
    let mut out: Sizes = size_a
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let name = parts.next().filter(|n| n.starts_with('.'))?;
            let bytes = parts.next()?.parse().ok()?;
            Some((name.to_owned(), bytes))
        })
        .collect();
    out.sort_by_key(|s| std::cmp::Reverse(s.1));
    out
}

/// Bytes by name, biggest first.
type Sizes = Vec<(String, u64)>;

/// The sized code symbols of `nm -S -C` summed by crate and by kind, each
/// biggest first.
fn text_by_crate_and_kind(nm: &str) -> (Sizes, Sizes) {
    let (mut crates, mut kinds) = (BTreeMap::new(), BTreeMap::new());
    for line in nm.lines() {
        let mut parts = line.splitn(4, ' ');
        let (Some(_addr), Some(size), Some(kind), Some(name)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if !matches!(kind, "t" | "T" | "w" | "W") {
            continue;
        }
        let Ok(size) = u64::from_str_radix(size, 16) else {
            continue;
        };
        *crates.entry(crate_of(name).to_owned()).or_insert(0) += size;
        *kinds.entry(kind_of(name)).or_insert(0) += size;
    }
    let sorted = |m: BTreeMap<String, u64>| {
        let mut v: Sizes = m.into_iter().collect();
        v.sort_by_key(|s| std::cmp::Reverse(s.1));
        v
    };
    let kinds = kinds.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    (sorted(crates), sorted(kinds))
}

/// The crate a demangled symbol's code belongs to: `T`'s for
/// `<T as Trait>::f` and `drop_in_place<T>` (the trait's for a type
/// parameter, `<&mut A as Trait>::f`), else the first path segment; ring's
/// C and assembly by their prefix, other unmangled code as "(C, asm)".
fn crate_of(name: &str) -> &str {
    let mut n = name;
    for glue in ["core::ptr::drop_in_place<", "alloc::ptr::drop_in_place<"] {
        if let Some(rest) = n.strip_prefix(glue) {
            n = rest;
        }
    }
    if n.starts_with("ring_core_") {
        return "ring";
    }
    n = n.trim_start_matches(['<', '&', '*', '(', ' ', '_']);
    n = n.strip_prefix("dyn ").unwrap_or(n);
    n = n.strip_prefix("mut ").unwrap_or(n);
    n = n.trim_start_matches(['<', '&', '*', '(', ' ']);
    let end = n
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(n.len());
    if end > 0 && n[end..].starts_with("::") {
        &n[..end]
    } else if let Some((_, tr)) = n.split_once(" as ") {
        crate_of(tr)
    } else {
        "(C, asm)"
    }
}

/// What a symbol's code does, by its name.
fn kind_of(name: &str) -> &'static str {
    let has = |words: &[&str]| words.iter().any(|w| name.contains(w));
    if name.contains("drop_in_place") {
        "drop glue"
    } else if has(&["protobuf", "merge_field", "encode_fields"]) {
        "protobuf codecs"
    } else if has(&["Deserializ", "Visitor", "visit_", "deserialize"]) {
        "serde: deserialize"
    } else if has(&["Serializ", "serialize"]) {
        "serde: serialize"
    } else {
        "other"
    }
}

fn mb(bytes: f64) -> String {
    format!("{:.2}", bytes / 1e6)
}

/// `[name, bytes]` pairs of a record's field.
fn pairs<'a>(r: &'a Value, key: &str) -> Vec<(&'a str, f64)> {
    r.get(key)
        .and_then(Value::as_array)
        .map(|v| {
            v.iter()
                .filter_map(|p| Some((p.get(0)?.as_str()?, p.get(1)?.as_f64()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// The row's section of the report.
pub(super) fn table(out: &mut String, all: &[Value]) {
    let Some(r) = all.iter().find(|r| text(r, "bench") == "cli-size") else {
        return;
    };
    let stripped = field(r, "bytes").unwrap_or(0.0);
    let sections = pairs(r, "sections");
    let text_bytes = sections
        .iter()
        .find(|(n, _)| *n == ".text")
        .map_or(0.0, |s| s.1);
    let _ = writeln!(
        out,
        "### CLI binary size (`cargo build --profile dist -p kubeset-cli`)\n\n\
         **{} MB** shipped (stripped; target < 20 MB), {} MB with symbols. \
         In the crate table `kubeset` is the CLI's own code (its binary crate \
         is named `kubeset`; the facade library is re-exports).\n\n\
         | section (what strip keeps) | MB |\n|---|---:|",
        mb(stripped),
        mb(field(r, "unstripped_bytes").unwrap_or(0.0)),
    );
    for (name, bytes) in sections
        .iter()
        .filter(|(n, _)| {
            ![".symtab", ".strtab", ".debug"]
                .iter()
                .any(|p| n.starts_with(p))
        })
        .take(8)
    {
        let _ = writeln!(out, "| `{name}` | {} |", mb(*bytes));
    }
    let _ = writeln!(
        out,
        "\n| `.text` by crate | MB | % of `.text` |\n|---|---:|---:|"
    );
    let crates = pairs(r, "text_by_crate");
    let pct = |b: f64| {
        if text_bytes > 0.0 {
            100.0 * b / text_bytes
        } else {
            0.0
        }
    };
    for (name, bytes) in crates.iter().take(TOP) {
        let _ = writeln!(out, "| {name} | {} | {:.1} |", mb(*bytes), pct(*bytes));
    }
    let rest: f64 = crates.iter().skip(TOP).map(|c| c.1).sum();
    let _ = writeln!(out, "| (others) | {} | {:.1} |", mb(rest), pct(rest));
    let _ = writeln!(
        out,
        "\n| `.text` by kind | MB | % of `.text` |\n|---|---:|---:|"
    );
    for (name, bytes) in pairs(r, "text_by_kind") {
        let _ = writeln!(out, "| {name} | {} | {:.1} |", mb(bytes), pct(bytes));
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_are_counted_for_the_crate_of_their_type() {
        assert_eq!(
            crate_of(
                "<kubeset_api::api::core::v1::Pod as serde_core::de::Deserialize>::deserialize"
            ),
            "kubeset_api"
        );
        assert_eq!(
            crate_of("core::ptr::drop_in_place<kubeset_testserver::store::Store>"),
            "kubeset_testserver"
        );
        assert_eq!(
            crate_of("serde_json::de::from_trait::<serde_json::read::SliceRead, u8>"),
            "serde_json"
        );
        assert_eq!(
            crate_of("<&mut A as serde_core::de::MapAccess>::next_value"),
            "serde_core"
        );
        assert_eq!(
            crate_of("ring_core_0_17_14__x25519_ge_scalarmult_base"),
            "ring"
        );
        assert_eq!(crate_of("main"), "(C, asm)");
    }

    #[test]
    fn nm_lines_sum_by_crate_and_kind() {
        let nm = "0000000000001000 0000000000000100 t <kubeset_api::X as serde_core::ser::Serialize>::serialize\n\
                  0000000000002000 0000000000000010 T regex_automata::meta::Regex::new\n\
                  0000000000003000 0000000000000200 r some_table\n";
        let (crates, kinds) = text_by_crate_and_kind(nm);
        assert_eq!(
            crates,
            vec![
                ("kubeset_api".to_owned(), 256),
                ("regex_automata".to_owned(), 16)
            ]
        );
        assert!(kinds.contains(&("serde: serialize".to_owned(), 256)));
        assert!(kinds.contains(&("other".to_owned(), 16)));
    }
}
