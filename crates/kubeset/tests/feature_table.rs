//! The crate docs' feature tables match `Cargo.toml`: every feature the
//! facade declares is in one of the two tables ("Features", and "Features
//! of kube-rs and k8s-openapi"), every name a table gives is a feature,
//! and no feature has two rows in one table (kube-rs's names may repeat
//! the first table's, as `runtime` and `ws` do). The group-version features (`core-v1`,
//! `apps-v1`, …) share one row of the first table; `default` is its
//! second column.

mod manifest;

use std::collections::BTreeMap;

const DOCS: &str = include_str!("../src/lib.rs");

/// A group-version feature (`core-v1`, `resource-v1beta2`): one row names
/// them all.
fn is_group_version(name: &str) -> bool {
    name.rsplit_once("-v")
        .is_some_and(|(_, v)| v.starts_with(|c: char| c.is_ascii_digit()))
}

/// The backticked names of a table row's first cell.
fn first_cell_names(row: &str) -> Vec<String> {
    let cell = row.trim_start_matches('|').split('|').next().unwrap_or("");
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// Each table under `# Features` (up to the next heading of that level):
/// its rows' count per name.
fn documented() -> Vec<BTreeMap<String, usize>> {
    let docs: Vec<&str> = DOCS
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(str::trim)
        .collect();
    let start = docs
        .iter()
        .position(|l| *l == "# Features")
        .expect("the crate docs have a `# Features` section");
    let mut tables: Vec<BTreeMap<String, usize>> = Vec::new();
    for line in &docs[start + 1..] {
        if line.starts_with("# ") {
            break;
        }
        if line.starts_with("| feature") {
            tables.push(BTreeMap::new());
        } else if line.starts_with('|') && !line.starts_with("|---") {
            let table = tables.last_mut().expect("a table row after its header");
            for name in first_cell_names(line) {
                *table.entry(name).or_insert(0) += 1;
            }
        }
    }
    tables
}

#[test]
fn every_feature_has_one_row_and_every_row_names_features() {
    let features: Vec<String> = manifest::features().into_keys().collect();
    assert!(
        features.len() > 40,
        "read {} features from Cargo.toml: the parser lost its way",
        features.len()
    );
    let tables = documented();
    assert_eq!(tables.len(), 2, "the two feature tables");
    let rows: BTreeMap<&String, usize> = tables.iter().flatten().map(|(k, v)| (k, *v)).collect();
    let missing: Vec<&String> = features
        .iter()
        .filter(|f| *f != "default" && !is_group_version(f) && !rows.contains_key(f))
        .collect();
    assert!(
        missing.is_empty(),
        "features of Cargo.toml the crate docs' tables do not describe: {missing:?}"
    );
    assert!(
        tables[0].contains_key("core-v1") && tables[0].contains_key("apps-v1"),
        "the row for the group-version features is missing"
    );
    let unknown: Vec<&&String> = rows.keys().filter(|n| !features.contains(n)).collect();
    assert!(
        unknown.is_empty(),
        "names in the crate docs' feature tables that Cargo.toml does not declare: {unknown:?}"
    );
    for (i, table) in tables.iter().enumerate() {
        let twice: Vec<(&String, &usize)> = table.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            twice.is_empty(),
            "features with more than one row in the crate docs' table {}: {twice:?}",
            i + 1
        );
    }
}

/// k8s-openapi's version features select the models' version: `earliest`
/// and `latest` name the oldest and newest, each `v1_3x` turns on the
/// default group-versions and is forwarded to the models (v1.36 and
/// v1.37 among them: no `compile_error!` for either).
#[test]
fn the_version_features_select_a_version() {
    let features = manifest::features();
    assert_eq!(features["earliest"], ["v1_33"]);
    assert_eq!(features["latest"], ["v1_37"]);
    for v in ["v1_33", "v1_34", "v1_35", "v1_36", "v1_37"] {
        assert_eq!(features[v], ["api-default"], "{v}");
    }
    let manifest = include_str!("../Cargo.toml");
    for v in ["v1_33", "v1_34", "v1_35", "v1_36", "v1_37"] {
        assert!(
            manifest.contains(&format!("\"kubeset-client/{v}\"")),
            "{v} is forwarded to the models"
        );
    }
    for v in ["v1_36", "v1_37"] {
        assert!(
            !DOCS.contains(&format!("#[cfg(feature = \"{v}\")]\ncompile_error!(")),
            "{v} compiles"
        );
    }
}

#[test]
fn the_parsers_read_what_they_should() {
    assert!(is_group_version("core-v1"));
    assert!(is_group_version("resource-v1beta2"));
    assert!(!is_group_version("runtime-core"));
    assert!(!is_group_version("v1_35"));
    assert_eq!(
        first_cell_names("| `leader`, `metrics` | no | `x` in the text |"),
        ["leader", "metrics"]
    );
}
