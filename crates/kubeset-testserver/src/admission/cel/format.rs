//! Kubernetes' CEL format library (`k8s.io/apiserver/pkg/cel/library`,
//! `format.go`): `format.named(name)` (an optional format) and one
//! function per format, `format.dns1123Label()`,
//! `format.dns1123Subdomain()`, `format.dns1035Label()`,
//! `format.qualifiedName()`, `format.dns1123LabelPrefix()`,
//! `format.dns1123SubdomainPrefix()`, `format.dns1035LabelPrefix()`,
//! `format.labelValue()`, `format.uri()`, `format.uuid()`, `format.byte()`,
//! `format.date()`, `format.datetime()`; and `<format>.validate(s)`: none
//! when `s` is valid, else the list of its problems, worded as
//! apimachinery's validation functions word them (`NameIsDNSLabel`,
//! `IsQualifiedName`, `IsValidLabelValue`, ...; [`crate::names`]),
//! Go's `url.ParseRequestURI` for `uri`, and the fixed texts of the
//! library for the strfmt formats (`uuid`, `byte`, `date`, `datetime`,
//! checked as CRD `format`s are, [`crate::admission::format`]).
//!
//! Every check is linear in the string: no regex backtracking, no
//! allocation beyond the messages.

use std::sync::Arc;

use cel::extractors::This;
use cel::objects::{Opaque, OptionalValue};
use cel::{Context, FunctionContext, ResolveResult, Value};

use crate::admission::schema::Format as Strfmt;
use crate::names::{self, NameRule};

/// A named format (`apiservercel.Format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Dns1123Label,
    Dns1123Subdomain,
    Dns1035Label,
    QualifiedName,
    Dns1123LabelPrefix,
    Dns1123SubdomainPrefix,
    Dns1035LabelPrefix,
    LabelValue,
    Uri,
    Uuid,
    Byte,
    Date,
    Datetime,
}

impl Opaque for Format {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.NamedFormat"
    }
}

/// The formats by the names `format.named` and the functions know.
const NAMES: &[(&str, Format)] = &[
    ("dns1123Label", Format::Dns1123Label),
    ("dns1123Subdomain", Format::Dns1123Subdomain),
    ("dns1035Label", Format::Dns1035Label),
    ("qualifiedName", Format::QualifiedName),
    ("dns1123LabelPrefix", Format::Dns1123LabelPrefix),
    ("dns1123SubdomainPrefix", Format::Dns1123SubdomainPrefix),
    ("dns1035LabelPrefix", Format::Dns1035LabelPrefix),
    ("labelValue", Format::LabelValue),
    ("uri", Format::Uri),
    ("uuid", Format::Uuid),
    ("byte", Format::Byte),
    ("date", Format::Date),
    ("datetime", Format::Datetime),
];

/// Adds the library's functions to `ctx`.
pub(super) fn register(ctx: &mut Context<'_, '_>) {
    for &(name, f) in NAMES {
        let _ = ctx.add_function(&format!("format.{name}"), move || {
            Value::Opaque(Arc::new(f))
        });
    }
    let _ = ctx.add_function("format.named", |This(name): This<Arc<String>>| {
        let found = NAMES.iter().find(|(n, _)| *n == name.as_str());
        Value::Opaque(Arc::new(match found {
            Some(&(_, f)) => OptionalValue::of(Value::Opaque(Arc::new(f))),
            None => OptionalValue::none(),
        }))
    });
    let _ = ctx.add_function("validate", validate);
}

fn validate(f: &FunctionContext<'_, '_>, This(v): This<Value>, s: Arc<String>) -> ResolveResult {
    let format = match &v {
        Value::Opaque(o) => o.downcast_ref::<Format>().copied(),
        _ => None,
    }
    .ok_or_else(|| {
        f.error(format!(
            "no such overload: {}.validate(string)",
            v.type_of()
        ))
    })?;
    let problems = problems(format, &s);
    Ok(Value::Opaque(Arc::new(if problems.is_empty() {
        OptionalValue::none()
    } else {
        OptionalValue::of(Value::List(Arc::new(
            problems
                .into_iter()
                .map(|p| Value::String(Arc::new(p)))
                .collect(),
        )))
    })))
}

/// The problems of `s` as `format`.
fn problems(format: Format, s: &str) -> Vec<String> {
    let strfmt = |f: Strfmt, message: &str| {
        if crate::admission::format::check(f, s) {
            Vec::new()
        } else {
            vec![message.to_owned()]
        }
    };
    match format {
        Format::Dns1123Label => names::problems(NameRule::Label, s),
        Format::Dns1123Subdomain => names::problems(NameRule::Subdomain, s),
        Format::Dns1035Label => names::problems(NameRule::Label1035, s),
        // v1.35's `IsQualifiedName` names the value a label key when it
        // has more than one `/` (the real server's text).
        Format::QualifiedName => names::qualified_name_problems(s, "label key"),
        Format::Dns1123LabelPrefix => {
            names::problems(NameRule::Label, &names::mask_trailing_dash(s))
        }
        Format::Dns1123SubdomainPrefix => {
            names::problems(NameRule::Subdomain, &names::mask_trailing_dash(s))
        }
        Format::Dns1035LabelPrefix => {
            names::problems(NameRule::Label1035, &names::mask_trailing_dash(s))
        }
        Format::LabelValue => names::label_value_problems(s),
        Format::Uri => match parse_request_uri(s) {
            Ok(()) => Vec::new(),
            Err(e) => vec![format!("parse {}: {e}", go_quote(s))],
        },
        Format::Uuid => strfmt(Strfmt::Uuid, "does not match the UUID format"),
        Format::Byte => strfmt(Strfmt::Byte, "invalid base64"),
        Format::Date => strfmt(Strfmt::Date, "invalid date"),
        Format::Datetime => strfmt(Strfmt::DateTime, "invalid datetime"),
    }
}

/// Go's `%q` of a string.
pub(super) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `url.ParseRequestURI`: `Err` is the text of the error it wraps.
fn parse_request_uri(s: &str) -> Result<(), String> {
    if s.bytes().any(|b| b < b' ' || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    if s.is_empty() {
        return Err("empty url".into());
    }
    if s == "*" {
        return Ok(());
    }
    let (scheme, rest) = scheme(s)?;
    let rest = if rest.ends_with('?') && rest.matches('?').count() == 1 {
        &rest[..rest.len() - 1]
    } else {
        rest.split_once('?').map_or(rest, |(before, _)| before)
    };
    if !rest.starts_with('/') {
        if !scheme.is_empty() {
            // An opaque URI (`mailto:x`).
            return Ok(());
        }
        return Err("invalid URI for request".into());
    }
    let path = match rest.strip_prefix("//") {
        Some(after) if !scheme.is_empty() => {
            let (authority, path) = match after.find('/') {
                Some(i) => after.split_at(i),
                None => (after, ""),
            };
            parse_authority(authority)?;
            path
        }
        _ => rest,
    };
    unescape(path, Mode::Path)
}

/// `getScheme`: the scheme and the rest, or the whole as the rest when
/// there is none.
fn scheme(s: &str) -> Result<(&str, &str), String> {
    for (i, c) in s.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i == 0 => return Ok(("", s)),
            b'0'..=b'9' | b'+' | b'-' | b'.' => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((&s[..i], &s[i + 1..])),
            _ => return Ok(("", s)),
        }
    }
    Ok(("", s))
}

fn parse_authority(authority: &str) -> Result<(), String> {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    parse_host(host)?;
    if let Some(u) = userinfo {
        let valid = u
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(&c) || c >= 0x80);
        if !valid {
            return Err("net/url: invalid userinfo".into());
        }
        let (user, password) = u.split_once(':').unwrap_or((u, ""));
        unescape(user, Mode::Userinfo)?;
        unescape(password, Mode::Userinfo)?;
    }
    Ok(())
}

fn valid_optional_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

fn parse_host(host: &str) -> Result<(), String> {
    if host.starts_with('[') {
        let Some(i) = host.rfind(']') else {
            return Err("missing ']' in host".into());
        };
        let port = &host[i + 1..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {} after host", go_quote(port)));
        }
        return unescape(&host[..=i], Mode::Host);
    }
    if let Some(i) = host.rfind(':') {
        let port = &host[i..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {} after host", go_quote(port)));
        }
    }
    unescape(host, Mode::Host)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Userinfo,
}

/// The checks of Go's `unescape` (the value itself is not needed).
fn unescape(s: &str, mode: Mode) -> Result<(), String> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                if i + 2 >= b.len()
                    || !b[i + 1].is_ascii_hexdigit()
                    || !b[i + 2].is_ascii_hexdigit()
                {
                    let end = (i + 3).min(b.len());
                    return Err(format!(
                        "invalid URL escape {}",
                        go_quote(&String::from_utf8_lossy(&b[i..end]))
                    ));
                }
                if mode == Mode::Host && b[i + 1] < b'8' && &s[i..i + 3] != "%25" {
                    return Err(format!("invalid URL escape {}", go_quote(&s[i..i + 3])));
                }
                i += 3;
            }
            c if mode == Mode::Host && c < 0x80 && !host_char(c) => {
                return Err(format!(
                    "invalid character {} in host name",
                    go_quote(&s[i..i + 1])
                ));
            }
            _ => i += 1,
        }
    }
    Ok(())
}

/// The ASCII bytes a host may hold unescaped (`shouldEscape` in host
/// mode).
fn host_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-_.~!$&'()*+,;=:[]<>\"".contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_prefixes() {
        assert!(problems(Format::Dns1123Label, "my-name").is_empty());
        assert_eq!(
            problems(Format::Dns1123Label, "a.b"),
            ["must not contain dots"]
        );
        assert_eq!(problems(Format::Dns1123Label, "A").len(), 1);
        assert_eq!(problems(Format::Dns1123Label, &"a".repeat(64)).len(), 1);
        assert!(problems(Format::Dns1123LabelPrefix, "my-prefix-").is_empty());
        assert!(problems(Format::Dns1123SubdomainPrefix, "a.b-").is_empty());
        assert!(!problems(Format::Dns1035Label, "1abc").is_empty());
        assert!(problems(Format::Dns1035LabelPrefix, "abc-").is_empty());
        assert!(problems(Format::QualifiedName, "example.com/My_Name").is_empty());
        assert_eq!(
            problems(Format::QualifiedName, "/x"),
            ["prefix part must be non-empty"]
        );
        assert!(problems(Format::LabelValue, "").is_empty());
        assert!(!problems(Format::LabelValue, "-x").is_empty());
    }

    #[test]
    fn request_uris_as_go_parses_them() {
        let ok = [
            "http://example.com/x?y",
            "/abs/path",
            "mailto:a@b",
            "*",
            "https://u:p@h:8080/",
            "http://[::1]:80/",
        ];
        for s in ok {
            assert!(problems(Format::Uri, s).is_empty(), "{s}");
        }
        let bad = [
            ("", "parse \"\": empty url"),
            (
                "example.com",
                "parse \"example.com\": invalid URI for request",
            ),
            (":x", "parse \":x\": missing protocol scheme"),
            (
                "http://a b/",
                "parse \"http://a b/\": invalid character \" \" in host name",
            ),
            (
                "http://h:x/",
                "parse \"http://h:x/\": invalid port \":x\" after host",
            ),
            ("/a%zz", "parse \"/a%zz\": invalid URL escape \"%zz\""),
            ("/a%", "parse \"/a%\": invalid URL escape \"%\""),
            (
                "http://a\tb/",
                "parse \"http://a\\tb/\": net/url: invalid control character in URL",
            ),
            (
                "http://[::1/",
                "parse \"http://[::1/\": missing ']' in host",
            ),
        ];
        for (s, want) in bad {
            assert_eq!(problems(Format::Uri, s), [want], "{s}");
        }
    }

    #[test]
    fn strfmt_formats() {
        assert!(problems(Format::Uuid, "123e4567-e89b-12d3-a456-426614174000").is_empty());
        assert_eq!(
            problems(Format::Uuid, "nope"),
            ["does not match the UUID format"]
        );
        assert_eq!(problems(Format::Byte, "a"), ["invalid base64"]);
        assert_eq!(problems(Format::Date, "2023-02-29"), ["invalid date"]);
        assert!(problems(Format::Datetime, "2021-01-01T00:00:00Z").is_empty());
        assert_eq!(problems(Format::Datetime, "x"), ["invalid datetime"]);
    }

    #[test]
    fn hostile_input_is_linear() {
        let long = "%".repeat(1 << 20);
        assert_eq!(problems(Format::Uri, &format!("/{long}")).len(), 1);
        assert_eq!(
            problems(Format::QualifiedName, &"/".repeat(1 << 20)).len(),
            1
        );
    }
}
