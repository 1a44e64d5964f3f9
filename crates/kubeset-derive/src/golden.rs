//! Golden expansions for the derives' tests: the expansion of fixed
//! inputs, one top-level item a line, compared with a file under
//! `tests/expand/` (`UPDATE_GOLDEN=1` rewrites it). A refactoring of a
//! derive must leave its golden unchanged token for token.

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// `tokens`, one top-level item a line (an item ends at a `{…}` group or
/// a `;`), so that a change shows as changed items.
pub(crate) fn items(tokens: TokenStream) -> String {
    let mut out = String::new();
    let mut item = TokenStream::new();
    for tt in tokens {
        let ends = match &tt {
            TokenTree::Group(g) => g.delimiter() == Delimiter::Brace,
            TokenTree::Punct(p) => p.as_char() == ';',
            _ => false,
        };
        item.extend([tt]);
        if ends {
            out.push_str(&std::mem::take(&mut item).to_string());
            out.push('\n');
        }
    }
    out.push_str(&item.to_string());
    out
}

/// Compares the expansions of `inputs` by `derive` with
/// `tests/expand/<file>`, or writes it under `UPDATE_GOLDEN=1`.
pub(crate) fn check(
    file: &str,
    derive: fn(TokenStream) -> syn::Result<TokenStream>,
    inputs: Vec<(&str, TokenStream)>,
) {
    let mut got = String::new();
    for (name, input) in inputs {
        let tokens = derive(input).unwrap_or_else(|e| panic!("{name}: derive failed: {e}"));
        got.push_str(&format!("=== {name}\n{}\n", items(tokens)));
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/expand")
        .join(file);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
        std::fs::write(&path, &got).expect("write golden");
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    if got != want {
        let first = got
            .lines()
            .zip(want.lines())
            .position(|(g, w)| g != w)
            .unwrap_or(got.lines().count().min(want.lines().count()));
        panic!(
            "expansion differs from {} at line {}:\n got: {}\nwant: {}",
            path.display(),
            first + 1,
            got.lines().nth(first).unwrap_or("<end>"),
            want.lines().nth(first).unwrap_or("<end>"),
        );
    }
}
