//! The runtime's errors print their cause, as kube-rs's do
//! (`failed to apply object: {0}`): every `#[error("…")]` variant of
//! `src/` with a `#[source]` or `#[from]` field names that field in its
//! message, so `{error}` in a log line says why, not only what. (The
//! cause stays in `source()` too; a printer that walks the chain skips a
//! cause its message already ends with, as `kubeset`'s CLI does.)
//!
//! Read from the source text with the layer tests' reader
//! (`tests/layers/mod.rs`): a new error variant is held to the rule without
//! a test of its own.

#[path = "../../../tests/layers/mod.rs"]
mod layers;

use std::path::Path;

/// One error variant: its message attribute and its body's lines.
struct Variant {
    line: usize,
    message: String,
    body: Vec<String>,
}

/// The variants with an `#[error(...)]` attribute in `text` (not
/// `transparent`): the attribute's text, and the variant's lines up to
/// where its braces or parentheses close (a unit variant has none).
fn variants(text: &str) -> Vec<Variant> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if !line.starts_with("#[error(") || line.contains("transparent") {
            i += 1;
            continue;
        }
        let start = i;
        let mut message = String::new();
        while i < lines.len() {
            message.push_str(lines[i].trim());
            i += 1;
            if message.ends_with(")]") {
                break;
            }
        }
        let mut body = Vec::new();
        let mut depth = 0i32;
        while i < lines.len() {
            let l = lines[i].trim();
            i += 1;
            if l.starts_with("///") || l.starts_with("//") {
                continue;
            }
            depth += count(l, &['{', '(']) - count(l, &['}', ')']);
            body.push(l.to_owned());
            if depth <= 0 {
                break;
            }
        }
        found.push(Variant {
            line: start + 1,
            message,
            body,
        });
    }
    found
}

fn count(line: &str, chars: &[char]) -> i32 {
    line.chars().filter(|c| chars.contains(c)).count() as i32
}

/// The name the message must use for the variant's cause: the field after
/// `#[source]`/`#[from]` (`0` in a tuple variant); `None` without one.
fn cause_field(body: &[String]) -> Option<String> {
    let at = body
        .iter()
        .position(|l| l.contains("#[source]") || l.contains("#[from]"))?;
    let tuple = body[0].contains('(') && !body[0].contains('{');
    if tuple {
        return Some("0".to_owned());
    }
    let after = body[at]
        .split(']')
        .next_back()
        .filter(|rest| rest.contains(':'))
        .map(str::to_owned)
        .or_else(|| body.get(at + 1).cloned())?;
    let name = after.trim().trim_start_matches("pub ").split(':').next()?;
    Some(name.trim().to_owned())
}

#[test]
fn every_error_with_a_cause_prints_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = layers::rust_files(&src);
    let mut checked = 0;
    let mut silent = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("source is UTF-8");
        for v in variants(&text) {
            let Some(field) = cause_field(&v.body) else {
                continue;
            };
            checked += 1;
            let named = v.message.contains(&format!("{{{field}}}"))
                || v.message.contains(&format!("{{{field}:"));
            if !named {
                let at = file.strip_prefix(&src).unwrap_or(&file).display();
                silent.push(format!(
                    "src/{at}:{}: {} (cause `{field}`)",
                    v.line, v.message
                ));
            }
        }
    }
    assert!(
        checked >= 15,
        "only {checked} error variants with a cause found: the reader lost its way"
    );
    assert!(
        silent.is_empty(),
        "error messages that do not print their cause:\n{}",
        silent.join("\n")
    );
}

#[test]
fn the_reader_finds_causes_in_each_shape() {
    let text = r#"
    #[error("named: {source}")]
    Named {
        /// Doc.
        #[source]
        source: std::io::Error,
    },
    #[error("tuple")]
    Tuple(#[from] std::io::Error),
    #[error("inline")]
    Inline {
        #[source] cause: std::io::Error,
    },
    #[error("unit")]
    Unit,
    #[error(transparent)]
    Passed(#[from] std::fmt::Error),
"#;
    let found = variants(text);
    let causes: Vec<Option<String>> = found.iter().map(|v| cause_field(&v.body)).collect();
    assert_eq!(
        causes,
        [
            Some("source".to_owned()),
            Some("0".to_owned()),
            Some("cause".to_owned()),
            None
        ]
    );
    assert_eq!(found[0].message, r#"#[error("named: {source}")]"#);
}
