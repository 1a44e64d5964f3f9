//! The `shardSelector` of list and watch (KEP-5866), as kube-apiserver
//! 1.36 with the `ShardedListAndWatch` feature gate on parses and applies
//! it (`k8s.io/apiserver/pkg/sharding.Parse`,
//! `k8s.io/apimachinery/pkg/sharding`): `shardRange(FIELD, 'START', 'END')`
//! terms joined by `||` (parentheses allowed), FIELD one of
//! `object.metadata.uid` and `object.metadata.namespace` (the same in every
//! term), START and END 0x-prefixed 16-digit lowercase hex (END may be
//! `0x10000000000000000`, 2⁶⁴), START < END. An object matches when the
//! FNV-1a 64 hash of the field's value lies in some `[START, END)`.
//!
//! kube-apiserver only walks the syntax tree of a CEL expression; this
//! parser reads the same subset directly. A selector it refuses is
//! refused by both; the messages are kube-apiserver's, except for CEL
//! syntax errors, whose wording is ours.

use serde_json::Value;

use super::SelectorError;

const FIELDS: [&str; 2] = ["object.metadata.uid", "object.metadata.namespace"];

/// A parsed, non-empty `shardSelector`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShardSelector {
    /// `object.metadata.uid` or `object.metadata.namespace`.
    key: &'static str,
    /// `[start, end)` ranges of the hash, with their literal text.
    ranges: Vec<(u128, u128, String, String)>,
}

/// FNV-1a 64 of `value`'s bytes (`sharding.HashField`).
fn fnv1a(value: &str) -> u64 {
    value.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Str(String),
    Punct(&'static str),
}

fn err(msg: impl Into<String>) -> SelectorError {
    SelectorError(format!("invalid shard selector: {}", msg.into()))
}

fn lex(s: &str) -> Result<Vec<Tok>, SelectorError> {
    let mut out = Vec::new();
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        match c {
            c if c.is_whitespace() => {}
            '(' | ')' | ',' | '.' => out.push(Tok::Punct(match c {
                '(' => "(",
                ')' => ")",
                ',' => ",",
                _ => ".",
            })),
            '|' if it.next_if(|(_, n)| *n == '|').is_some() => out.push(Tok::Punct("||")),
            '\'' | '"' => {
                let rest = &s[i + 1..];
                let end = rest
                    .find(c)
                    .ok_or_else(|| err("CEL parse error: unterminated string literal"))?;
                out.push(Tok::Str(rest[..end].to_owned()));
                for _ in 0..rest[..=end].chars().count() {
                    it.next();
                }
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut id = c.to_string();
                while let Some((_, n)) = it.next_if(|(_, n)| n.is_ascii_alphanumeric() || *n == '_')
                {
                    id.push(n);
                }
                out.push(Tok::Ident(id));
            }
            c => {
                return Err(err(format!(
                    "CEL parse error: unexpected character {c:?} at offset {i}"
                )));
            }
        }
    }
    Ok(out)
}

/// A hex bound as `extractHexLiteral` checks it.
fn hex(name: &str, s: &str) -> Result<u128, SelectorError> {
    let digits = s
        .strip_prefix("0x")
        .ok_or_else(|| err(format!("{name} must have '0x' prefix, got {s:?}")))?;
    if digits.is_empty() {
        return Err(err(format!("{name}: hex value is required after '0x'")));
    }
    if digits.len() > 17 {
        return Err(err(format!(
            "{name}: hex value too long ({} chars, max 17): {digits:?}",
            digits.len()
        )));
    }
    if let Some(c) = digits.chars().find(|c| !matches!(c, '0'..='9' | 'a'..='f')) {
        return Err(err(format!(
            "{name}: invalid hex character {:?} in {s:?}",
            c.to_string()
        )));
    }
    if digits.len() == 17 && s != "0x10000000000000000" {
        return Err(err(format!(
            "{name}: 17-digit hex value must be '0x10000000000000000' (2^64), got {s:?}"
        )));
    }
    if digits.len() < 16 {
        let padded = format!("0x{digits:0>16}");
        return Err(err(format!(
            "{name} must be a 0x-prefixed 16-digit hex value, got {s:?} (did you mean {padded:?}?)"
        )));
    }
    u128::from_str_radix(digits, 16).map_err(|e| err(format!("{name}: {e}")))
}

struct Parser {
    toks: Vec<Tok>,
    at: usize,
    ranges: Vec<(&'static str, u128, u128, String, String)>,
}

impl Parser {
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn expect(&mut self, p: &'static str) -> Result<(), SelectorError> {
        match self.next() {
            Some(Tok::Punct(q)) if q == p => Ok(()),
            other => Err(err(format!(
                "CEL parse error: expected '{p}', found {other:?}"
            ))),
        }
    }

    /// `term ('||' term)*`
    fn or(&mut self) -> Result<(), SelectorError> {
        self.term()?;
        while self.toks.get(self.at) == Some(&Tok::Punct("||")) {
            self.at += 1;
            self.term()?;
        }
        Ok(())
    }

    /// `'(' or ')'` or `shardRange(path, 'start', 'end')`.
    fn term(&mut self) -> Result<(), SelectorError> {
        match self.next() {
            Some(Tok::Punct("(")) => {
                self.or()?;
                self.expect(")")
            }
            Some(Tok::Ident(f)) if self.toks.get(self.at) == Some(&Tok::Punct("(")) => {
                if f != "shardRange" {
                    return Err(err(format!(
                        "unsupported function {f:?}; only shardRange() and || are allowed"
                    )));
                }
                self.at += 1;
                self.call()
            }
            Some(Tok::Str(_) | Tok::Ident(_)) => Err(err(
                "unexpected expression kind; expected shardRange() call or || operator",
            )),
            other => Err(err(format!("CEL parse error: unexpected {other:?}"))),
        }
    }

    fn call(&mut self) -> Result<(), SelectorError> {
        let mut path = match self.next() {
            Some(Tok::Ident(id)) => id,
            _ => {
                return Err(err(
                    "shardRange() first argument: expected field path (e.g. object.metadata.uid)",
                ));
            }
        };
        while self.toks.get(self.at) == Some(&Tok::Punct(".")) {
            self.at += 1;
            match self.next() {
                Some(Tok::Ident(id)) => {
                    path.push('.');
                    path.push_str(&id);
                }
                other => return Err(err(format!("CEL parse error: unexpected {other:?}"))),
            }
        }
        let key = FIELDS.into_iter().find(|f| *f == path).ok_or_else(|| {
            err(format!(
                "shardRange() first argument: unsupported field path {path:?}; supported: object.metadata.uid, object.metadata.namespace"
            ))
        })?;
        let mut bounds = Vec::new();
        for name in ["hexStart", "hexEnd"] {
            self.expect(",")?;
            match self.next() {
                Some(Tok::Str(s)) => bounds.push((hex(name, &s)?, s)),
                _ => {
                    return Err(err(format!(
                        "{name} must be a string literal (e.g. '0xff')"
                    )));
                }
            }
        }
        self.expect(")")?;
        let [(start, start_s), (end, end_s)] = <[_; 2]>::try_from(bounds)
            .map_err(|_| err("shardRange() requires exactly 3 arguments"))?;
        if start >= end {
            return Err(err(format!(
                "shard range start {start_s} must be less than end {end_s}"
            )));
        }
        self.ranges.push((key, start, end, start_s, end_s));
        Ok(())
    }
}

impl ShardSelector {
    /// Parses the `shardSelector` parameter; `None` when it is absent.
    /// kube-apiserver refuses an empty one (present but blank).
    pub(crate) fn parse(s: Option<&str>) -> Result<Option<Self>, SelectorError> {
        let Some(s) = s else { return Ok(None) };
        if s.trim().is_empty() {
            return Err(err(
                "empty shard selector is not allowed; omit the parameter for unfiltered lists",
            ));
        }
        let mut p = Parser {
            toks: lex(s)?,
            at: 0,
            ranges: Vec::new(),
        };
        p.or()?;
        if let Some(t) = p.toks.get(p.at) {
            return Err(err(format!("CEL parse error: unexpected {t:?}")));
        }
        let key = p.ranges[0].0;
        if let Some(other) = p.ranges.iter().find(|r| r.0 != key) {
            return Err(err(format!(
                "all shard ranges must use the same field, got {key:?} and {:?}",
                other.0
            )));
        }
        let ranges = p
            .ranges
            .into_iter()
            .map(|(_, a, b, sa, sb)| (a, b, sa, sb))
            .collect();
        Ok(Some(Self { key, ranges }))
    }

    /// Whether `obj`'s field hashes into one of the ranges.
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        let field = if self.key == FIELDS[0] {
            "uid"
        } else {
            "namespace"
        };
        let value = obj
            .get("metadata")
            .and_then(|m| m.get(field))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let h = u128::from(fnv1a(value));
        self.ranges.iter().any(|(a, b, _, _)| *a <= h && h < *b)
    }

    /// The canonical text the list answer echoes in `metadata.shardInfo`.
    pub(crate) fn text(&self) -> String {
        self.ranges
            .iter()
            .map(|(_, _, a, b)| format!("shardRange({}, '{a}', '{b}')", self.key))
            .collect::<Vec<_>>()
            .join(" || ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_ors_and_matches_by_the_uid_hash() {
        let s = ShardSelector::parse(Some(
            "(shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000')) || \
             shardRange(object.metadata.uid, \"0x8000000000000000\", '0x10000000000000000')",
        ))
        .expect("parses")
        .expect("present");
        assert_eq!(
            s.text(),
            "shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') || \
             shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
        );
        // Hashes printed by k8s.io/apimachinery v0.36 (`HashField`).
        let uid = |u: &str| json!({"metadata": {"uid": u}});
        assert!(s.matches(&uid("abc")), "0xe71fa2190541574b");
        assert!(
            !s.matches(&uid("00000000-0000-0000-0000-000000000000")),
            "0x7c38…"
        );
        assert!(s.matches(&uid("")), "0xcbf29ce484222325");
    }

    #[test]
    fn refuses_what_kube_apiserver_refuses() {
        for (sel, want) in [
            ("", "empty shard selector"),
            (
                "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
                "did you mean \"0x0000000000000000\"",
            ),
            (
                "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
                "unsupported field path",
            ),
            (
                "shardRange(object.metadata.uid, '0x8000000000000000', '0x0000000000000000')",
                "must be less than",
            ),
            (
                "shardRange(object.metadata.uid, '0000000000000000', '0x8000000000000000')",
                "'0x' prefix",
            ),
            (
                "shardRange(object.metadata.uid, '0x000000000000000G', '0x8000000000000000')",
                "invalid hex character",
            ),
            (
                "shardRange(object.metadata.uid, '0x0000000000000000', '0x20000000000000000')",
                "17-digit",
            ),
            ("size(object.metadata.uid)", "unsupported function \"size\""),
            (
                "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || \
                 shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')",
                "same field",
            ),
            (
                "shardRange(object.metadata.uid, '0x0000000000000000'",
                "CEL parse error",
            ),
        ] {
            let e = ShardSelector::parse(Some(sel)).expect_err(sel);
            assert!(e.0.starts_with("invalid shard selector: "), "{}", e.0);
            assert!(e.0.contains(want), "{sel}: {}", e.0);
        }
        assert_eq!(ShardSelector::parse(None), Ok(None));
    }
}
