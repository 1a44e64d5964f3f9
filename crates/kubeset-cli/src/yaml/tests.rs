//! The emitter's rules one by one; `tests/output_kubectl.rs` compares
//! whole documents with the real kubectl's.

use serde_json::json;

use super::*;

fn one(s: &str) -> String {
    to_yaml(&json!({ "k": s }))
}

#[test]
fn strings_that_read_back_as_something_else_are_double_quoted() {
    for s in [
        "10",
        "-1",
        "+5",
        "0755",
        "09",
        "1e3",
        "0x1F",
        "0b101",
        ".5",
        "1_000",
        "1:20",
        "true",
        "True",
        "yes",
        "on",
        "Off",
        "y",
        "N",
        "null",
        "~",
        "",
        ".inf",
        "-.Inf",
        ".nan",
        "2026-12-01T16:08:22Z",
        "2026-12-01",
        "2026-1-2 3:04:05",
        "2026-12-01t16:08:22.5+01:00",
    ] {
        assert_eq!(one(s), format!("k: \"{s}\"\n"), "{s:?}");
    }
}

#[test]
fn other_strings_are_plain_where_the_syntax_allows() {
    for s in [
        "nginx",
        "1.2.3",
        "2026-13-01",
        "2026-02-30",
        "2026-12-01T25:00:00Z",
        "a#b",
        "a:b",
        "http://x/y",
        "yess",
        "0x",
        "-",
        "héllo",
        "-a",
        "?a",
        "a,b",
        "[a",
        "<<",
    ] {
        let plain = format!("k: {s}\n");
        let out = one(s);
        if matches!(s, "-" | "[a") {
            assert_eq!(out, format!("k: '{s}'\n"), "{s:?}");
        } else {
            assert_eq!(out, plain, "{s:?}");
        }
    }
}

#[test]
fn indicators_and_edge_spaces_single_quote() {
    assert_eq!(one("- a"), "k: '- a'\n");
    assert_eq!(one(": x"), "k: ': x'\n");
    assert_eq!(one("a: b"), "k: 'a: b'\n");
    assert_eq!(one("a #b"), "k: 'a #b'\n");
    assert_eq!(one(" lead"), "k: ' lead'\n");
    assert_eq!(one("trail "), "k: 'trail '\n");
    assert_eq!(one("it's: x"), "k: 'it''s: x'\n");
    assert_eq!(one("*a"), "k: '*a'\n");
    assert_eq!(one("---x"), "k: '---x'\n");
}

#[test]
fn unprintable_characters_are_escaped_in_double_quotes() {
    assert_eq!(one("a\tb"), "k: \"a\\tb\"\n");
    assert_eq!(one("\u{1F600}"), "k: \"\\U0001F600\"\n");
    assert_eq!(one("a\u{7f}"), "k: \"a\\x7F\"\n");
    assert_eq!(one("\u{feff}x"), "k: \"\\uFEFFx\"\n");
    // A line break with a trailing space before it: no literal block.
    assert_eq!(one("a \nb"), "k: \"a \\nb\"\n");
}

#[test]
fn line_breaks_make_literal_blocks_with_chomping() {
    assert_eq!(one("a\nb"), "k: |-\n  a\n  b\n");
    assert_eq!(one("a\nb\n"), "k: |\n  a\n  b\n");
    assert_eq!(one("a\n\n"), "k: |+\n  a\n\n...\n");
    assert_eq!(one(" a\nb"), "k: |2-\n   a\n  b\n");
    assert_eq!(one("a\n\nb"), "k: |-\n  a\n\n  b\n");
    assert_eq!(
        to_yaml(&json!({"m": {"k": "a\nb"}})),
        "m:\n  k: |-\n    a\n    b\n"
    );
}

#[test]
fn layout_of_maps_and_lists() {
    // YAML 1.1 reads a plain `n` as false: go-yaml quotes the key.
    assert_eq!(to_yaml(&json!({"n": 1})), "\"n\": 1\n");
    let doc = json!({
        "b": [1, "x", {"q": 1, "m": [true, null]}, [], {}, [["a"]]],
        "a": {"c": {}, "d": []},
    });
    assert_eq!(
        to_yaml(&doc),
        "a:\n  c: {}\n  d: []\nb:\n- 1\n- x\n- m:\n  - true\n  - null\n  q: 1\n- []\n- {}\n- - - a\n"
    );
    assert_eq!(
        list_item(&json!({"a": 1, "b": {"c": [2]}})),
        "- a: 1\n  b:\n    c:\n    - 2\n"
    );
}

#[test]
fn numbers_as_kubectl_holds_them() {
    assert_eq!(
        to_yaml(&json!({"i": 3, "f": 1.5, "e": 1e21, "big": 18446744073709551615u64})),
        // Above i64::MAX kubectl holds a float64.
        "big: 1.8446744073709552e+19\ne: 1e+21\nf: 1.5\ni: 3\n"
    );
}

#[test]
fn keys_in_go_yaml_order() {
    let mut keys = vec![
        "a10", "a9", "a", "B", "_x", "1", "a.b", "a-b", "b", "A", "a01", "a1",
    ];
    keys.sort_by(|a, b| key_order(a, b));
    assert_eq!(
        keys,
        // A digit run against none compares as a number against 0; equal
        // numbers, the shorter run first.
        [
            "_x", "1", "A", "B", "a", "a-b", "a.b", "a1", "a01", "a9", "a10", "b"
        ]
    );
}

#[test]
fn long_scalars_fold_past_column_80() {
    let words = "word ".repeat(30);
    let s = words.trim_end();
    let out = one(s);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() > 1, "{out}");
    assert!(lines[1].starts_with("  word"), "{out}");
    assert!(
        lines[0].len() > WIDTH && lines[0].len() < WIDTH + 8,
        "{out}"
    );
    // Unfolded again, the text is the same.
    assert_eq!(out.trim_end().replace("\n  ", " "), format!("k: {s}"));
    // Keys never fold.
    let key = format!("{}: v\n", "k ".repeat(50).trim_end());
    assert_eq!(to_yaml(&json!({ "k ".repeat(50).trim_end(): "v" })), key);
}

#[test]
fn long_and_multi_line_keys_are_complex_keys() {
    let long = "k".repeat(129);
    assert_eq!(to_yaml(&json!({ &long: "v" })), format!("? {long}\n: v\n"));
    assert_eq!(to_yaml(&json!({ "a\nb": 1 })), "? |-\n  a\n  b\n: 1\n");
}
