//! The facade's `Cargo.toml` as the docs tests read it: its features and
//! its examples. Included by `tests/feature_table.rs` here and by
//! kubeset-cli's `tests/readme_commands.rs` (`#[path]`), each using part.
#![allow(dead_code)]

use std::collections::BTreeMap;

const MANIFEST: &str = include_str!("../../Cargo.toml");

/// The `[features]` table: each feature and the facade's own features it
/// turns on (entries naming another crate or a dependency left out).
pub fn features() -> BTreeMap<String, Vec<String>> {
    let mut features = BTreeMap::new();
    let mut inside = false;
    for line in MANIFEST.lines() {
        let line = line.trim();
        if line.starts_with('[') && !line.starts_with("[\"") {
            inside = line == "[features]";
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let Some((name, list)) = line.split_once(" = ").filter(|_| inside) else {
            continue;
        };
        let own = list_items(list)
            .into_iter()
            .filter(|s| !s.contains('/') && !s.starts_with("dep:"))
            .collect();
        features.insert(name.trim().to_owned(), own);
    }
    features
}

/// Each `[[example]]`: its required features.
pub fn examples() -> BTreeMap<String, Vec<String>> {
    let mut examples = BTreeMap::new();
    for block in MANIFEST.split("[[example]]").skip(1) {
        let field = |key: &str| {
            block
                .lines()
                .find_map(|l| l.trim().strip_prefix(key)?.trim().strip_prefix('='))
                .map(str::trim)
        };
        let Some(name) = field("name") else { continue };
        let required = list_items(field("required-features").unwrap_or("[]"));
        examples.insert(name.trim_matches('"').to_owned(), required);
    }
    examples
}

/// The quoted items of a one-line TOML array.
fn list_items(list: &str) -> Vec<String> {
    list.trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .map(|s| s.trim().trim_matches('"').to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}
