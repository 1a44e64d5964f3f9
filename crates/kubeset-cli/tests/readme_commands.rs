//! The README's commands exist as written: every `cargo run -p kubeset-cli
//! -- …` line of its shell blocks parses (the built binary, the line's
//! arguments and `--help`: clap refuses an unknown subcommand or flag
//! before it reaches `--help`), every flag the README gives `kubeset serve`
//! in its prose is in `kubeset serve --help`, and every `cargo run -p
//! kubeset … --example NAME` names an example whose required features the
//! line's `--features` (with the defaults) turn on.

mod common;
#[path = "../../kubeset/tests/manifest/mod.rs"]
mod manifest;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use common::BIN;

const README: &str = include_str!("../../../README.md");

/// The lines of the README's `sh` blocks, comments and a trailing `&`
/// dropped.
fn shell_lines() -> Vec<String> {
    let mut lines = Vec::new();
    let mut inside = false;
    for line in README.lines() {
        if line.starts_with("```") {
            inside = !inside && line.trim_start_matches('`') == "sh";
            continue;
        }
        if inside {
            let code = line.split(" #").next().unwrap_or("").trim();
            let code = code.trim_end_matches('&').trim();
            if !code.is_empty() {
                lines.push(code.to_owned());
            }
        }
    }
    lines
}

/// `kubeset ARGS --help` succeeds: ARGS name real subcommands and flags.
fn parses(args: &[&str]) -> Result<(), String> {
    let out = Command::new(BIN)
        .args(args)
        .arg("--help")
        .output()
        .map_err(|e| format!("running {BIN}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn the_readme_cli_lines_parse() {
    let mut checked = 0;
    for line in shell_lines() {
        let Some((_, args)) = line.split_once("cargo run -p kubeset-cli -- ") else {
            continue;
        };
        let args: Vec<&str> = args.split_whitespace().collect();
        if let Err(e) = parses(&args) {
            panic!("README: `{line}` does not parse: {e}");
        }
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} CLI lines found in the README");
}

#[test]
fn the_serve_flags_the_readme_names_exist() {
    let start = README
        .find("`kubeset serve` is an in-memory API server")
        .expect("the README describes `kubeset serve`");
    let paragraph = README[start..].split("\n\n").next().unwrap_or("");
    let flags: BTreeSet<&str> = paragraph
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|code| code.starts_with("--"))
        .map(|code| code.split_whitespace().next().unwrap_or(code))
        .collect();
    assert!(flags.len() >= 3, "flags read from the README: {flags:?}");
    let help = Command::new(BIN)
        .args(["serve", "--help"])
        .output()
        .expect("kubeset serve --help runs");
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in flags {
        assert!(
            help.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .any(|word| word == flag),
            "README names `kubeset serve {flag}`, which `kubeset serve --help` does not list"
        );
    }
}

/// `start` and every feature it turns on, transitively.
fn closure(features: &BTreeMap<String, Vec<String>>, start: &[&str]) -> BTreeSet<String> {
    let mut on = BTreeSet::new();
    let mut todo: Vec<String> = start.iter().map(|s| (*s).to_owned()).collect();
    while let Some(f) = todo.pop() {
        if on.insert(f.clone()) {
            todo.extend(features.get(&f).into_iter().flatten().cloned());
        }
    }
    on
}

#[test]
fn the_readme_examples_exist_with_their_features() {
    let features = manifest::features();
    let examples = manifest::examples();
    let mut checked = 0;
    for line in shell_lines() {
        let Some((_, rest)) = line.split_once("cargo run -p kubeset ") else {
            continue;
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        let after = |flag: &str| {
            let at = words.iter().position(|w| *w == flag)?;
            words.get(at + 1).copied()
        };
        let name = after("--example").unwrap_or_else(|| panic!("README: `{line}` runs no example"));
        let mut asked = vec!["default"];
        asked.extend(after("--features").into_iter().flat_map(|f| f.split(',')));
        let on = closure(&features, &asked);
        let file = format!(
            "{}/../kubeset/examples/{name}.rs",
            env!("CARGO_MANIFEST_DIR")
        );
        let required = match examples.get(name) {
            Some(required) => required.clone(),
            None if std::path::Path::new(&file).exists() => Vec::new(),
            None => panic!("README: `{line}`: the facade has no example `{name}`"),
        };
        let missing: Vec<&String> = required.iter().filter(|f| !on.contains(*f)).collect();
        assert!(
            missing.is_empty(),
            "README: `{line}` lacks the example's required features {missing:?}"
        );
        checked += 1;
    }
    assert!(
        checked >= 3,
        "only {checked} example lines found in the README"
    );
}
