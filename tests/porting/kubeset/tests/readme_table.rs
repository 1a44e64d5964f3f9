//! The README's "Porting from kube-rs" table is checked against the
//! porting crate: every row that says kubeset has "the same" names kube-rs
//! or k8s-openapi paths, and every item of those paths is used by
//! tests/porting/kube's source, which builds both ways.

use std::collections::BTreeSet;
use std::path::Path;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The porting table: the rows between its header and the first blank line.
fn table_rows(readme: &str) -> Vec<(String, String)> {
    let start = readme
        .find("| kube-rs / k8s-openapi | kubeset, after the rename |")
        .expect("the README's porting table");
    readme[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").collect();
            Some((
                cells.first()?.trim().to_owned(),
                cells.get(1)?.trim().to_owned(),
            ))
        })
        .collect()
}

/// The items a code span such as `kube::api::{Api, entry}` or
/// `k8s_openapi::apimachinery::…` names: the identifiers after the crate.
fn items(span: &str) -> Vec<String> {
    let rest = span
        .strip_prefix("kube::")
        .or_else(|| span.strip_prefix("k8s_openapi::"))
        .unwrap_or_default();
    rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

fn code_spans(cell: &str) -> impl Iterator<Item = &str> {
    cell.split('`').skip(1).step_by(2)
}

#[test]
fn every_same_row_of_the_readme_is_used_by_the_porting_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let readme = read(&root.join("README.md"));
    let src_dir = root.join("tests/porting/kube/src");
    let mut source = String::new();
    for entry in std::fs::read_dir(&src_dir).expect("the porting source") {
        source.push_str(&read(&entry.expect("an entry").path()));
    }
    let words: BTreeSet<&str> = source
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();

    let rows = table_rows(&readme);
    assert!(rows.len() >= 10, "the table was not found whole: {rows:?}");
    let mut checked = 0;
    let mut missing = Vec::new();
    for (kube_side, kubeset_side) in &rows {
        if !kubeset_side.starts_with("the same") {
            continue;
        }
        for span in code_spans(kube_side)
            .filter(|s| s.starts_with("kube::") || s.starts_with("k8s_openapi::"))
        {
            for item in items(span) {
                checked += 1;
                if !words.contains(item.as_str()) {
                    missing.push(format!("{item} (from `{span}`)"));
                }
            }
        }
    }
    assert!(checked >= 30, "only {checked} items checked");
    assert!(
        missing.is_empty(),
        "README rows not covered by tests/porting/kube: {missing:#?}"
    );
}
