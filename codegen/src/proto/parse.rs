//! A parser of the subset of proto2 that the upstream `generated.proto`
//! files use: `syntax`, `package`, `import`, `option`, top-level
//! `message`s of `optional`/`repeated`/`map<string, T>` fields. Anything
//! else is an error, so a new construct upstream fails generation.

use std::collections::BTreeMap;

use super::ProtoError;

/// How a field repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Label {
    /// `optional T` (proto2 presence).
    Optional,
    /// `repeated T`.
    Repeated,
    /// `map<string, T>`.
    Map,
}

/// One field of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtoField {
    /// The field name (the JSON name for Kubernetes' messages).
    pub name: String,
    /// The field number.
    pub number: u32,
    /// `optional`, `repeated` or `map`.
    pub label: Label,
    /// A scalar type name (`string`, `int32`, …) or a message name,
    /// fully qualified without the leading dot.
    pub ty: String,
}

/// One message, by its fully qualified name (`k8s.io.api.core.v1.Pod`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Message {
    /// Fields in file order.
    pub fields: Vec<ProtoField>,
}

/// The scalar types of proto2 that the Kubernetes files use.
pub const SCALARS: &[&str] = &["string", "bytes", "bool", "int32", "int64", "double"];

/// Splits proto text into tokens: identifiers (with dots), numbers and
/// single punctuation characters; comments and string literals dropped
/// (strings are kept as one token with their quotes).
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if text[i..].starts_with("//") {
            i = text[i..].find('\n').map_or(b.len(), |n| i + n);
        } else if text[i..].starts_with("/*") {
            i = text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
        } else if c == b'"' {
            let end = text[i + 1..].find('"').map_or(b.len(), |n| i + 1 + n + 1);
            out.push(&text[i..end]);
            i = end;
        } else if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            out.push(&text[start..i]);
        } else {
            out.push(&text[i..i + 1]);
            i += 1;
        }
    }
    out
}

struct Cursor<'a> {
    tokens: Vec<&'a str>,
    at: usize,
    path: &'a str,
}

impl<'a> Cursor<'a> {
    fn error(&self, reason: impl Into<String>) -> ProtoError {
        ProtoError::Syntax {
            path: self.path.to_owned(),
            token: self.at,
            reason: reason.into(),
        }
    }

    fn next(&mut self) -> Result<&'a str, ProtoError> {
        let t = self
            .tokens
            .get(self.at)
            .copied()
            .ok_or_else(|| self.error("unexpected end of file"))?;
        self.at += 1;
        Ok(t)
    }

    fn expect(&mut self, want: &str) -> Result<(), ProtoError> {
        let got = self.next()?;
        if got == want {
            Ok(())
        } else {
            Err(self.error(format!("expected {want:?}, found {got:?}")))
        }
    }

    fn skip_statement(&mut self) -> Result<(), ProtoError> {
        while self.next()? != ";" {}
        Ok(())
    }
}

/// Parses one file; adds its messages to `out` under `package.Name`.
/// `path` names the file in errors.
pub fn parse_file(
    path: &str,
    text: &str,
    out: &mut BTreeMap<String, Message>,
) -> Result<(), ProtoError> {
    let mut c = Cursor {
        tokens: tokens(text),
        at: 0,
        path,
    };
    let mut package = String::new();
    while c.at < c.tokens.len() {
        match c.next()? {
            "syntax" => {
                c.expect("=")?;
                let s = c.next()?;
                if s != "\"proto2\"" {
                    return Err(c.error(format!("syntax {s}, expected \"proto2\"")));
                }
                c.expect(";")?;
            }
            "package" => {
                package = c.next()?.to_owned();
                c.expect(";")?;
            }
            "import" | "option" => c.skip_statement()?,
            "message" => {
                let name = c.next()?;
                let message = parse_message(&mut c, &package)?;
                let full = format!("{package}.{name}");
                if out.insert(full.clone(), message).is_some() {
                    return Err(c.error(format!("message {full} defined twice")));
                }
            }
            other => return Err(c.error(format!("unexpected {other:?} at top level"))),
        }
    }
    Ok(())
}

/// A type name as written, resolved against the file's package: `.a.b.C`
/// is absolute, a scalar stays, anything else is in `package`.
fn resolve(ty: &str, package: &str) -> String {
    if let Some(abs) = ty.strip_prefix('.') {
        abs.to_owned()
    } else if SCALARS.contains(&ty) {
        ty.to_owned()
    } else {
        format!("{package}.{ty}")
    }
}

fn parse_message(c: &mut Cursor<'_>, package: &str) -> Result<Message, ProtoError> {
    c.expect("{")?;
    let mut message = Message::default();
    loop {
        let (label, ty) = match c.next()? {
            "}" => return Ok(message),
            "optional" => (Label::Optional, c.next()?),
            "repeated" => (Label::Repeated, c.next()?),
            "map" => {
                c.expect("<")?;
                c.expect("string")?;
                c.expect(",")?;
                let value = c.next()?;
                c.expect(">")?;
                (Label::Map, value)
            }
            other => return Err(c.error(format!("unexpected {other:?} in a message"))),
        };
        let name = c.next()?.to_owned();
        c.expect("=")?;
        let number = c.next()?;
        let number: u32 = number
            .parse()
            .ok()
            .filter(|n| (1..=536_870_911).contains(n))
            .ok_or_else(|| c.error(format!("bad field number {number:?}")))?;
        c.expect(";")?;
        if message.fields.iter().any(|f| f.number == number) {
            return Err(c.error(format!("field number {number} used twice")));
        }
        message.fields.push(ProtoField {
            name,
            number,
            label,
            ty: resolve(ty, package),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kubernetes_subset() {
        let text = r#"
/* licence */
syntax = "proto2";
package k8s.io.api.x.v1;
import "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto";
// Package-wide variables from generator "generated".
option go_package = "k8s.io/api/x/v1";
// A thing.
message Thing {
  // +optional
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  repeated Other items = 2;
  map<string, string> labels = 3;
  optional int32 count = 4;
}
message Other {
}
"#;
        let mut out = BTreeMap::new();
        parse_file("x.proto", text, &mut out).unwrap();
        let thing = &out["k8s.io.api.x.v1.Thing"];
        assert_eq!(thing.fields.len(), 4);
        assert_eq!(
            thing.fields[0].ty,
            "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        assert_eq!(thing.fields[1].ty, "k8s.io.api.x.v1.Other");
        assert_eq!(thing.fields[1].label, Label::Repeated);
        assert_eq!(thing.fields[2].label, Label::Map);
        assert_eq!(thing.fields[2].ty, "string");
        assert_eq!(
            (thing.fields[3].number, thing.fields[3].ty.as_str()),
            (4, "int32")
        );
        assert!(out["k8s.io.api.x.v1.Other"].fields.is_empty());
    }

    #[test]
    fn rejects_what_it_does_not_know() {
        let mut out = BTreeMap::new();
        for bad in [
            "syntax = \"proto3\";",
            "package a; enum E { A = 0; }",
            "package a; message M { oneof x { string a = 1; } }",
            "package a; message M { optional string a = 0; }",
            "package a; message M { optional string a = 1; optional string b = 1; }",
            "package a; message M { optional string a = 1;",
        ] {
            assert!(parse_file("bad.proto", bad, &mut out).is_err(), "{bad}");
        }
    }
}
