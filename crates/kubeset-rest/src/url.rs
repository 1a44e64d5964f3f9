//! URL rules shared with client-go: Go's `path.Join`/`path.Clean`, path
//! segment validation, query encoding and Go duration strings.
//!
//! Everything here is pure and host-independent: a request's path and query
//! are computed once and can be sent to any API server base URL.

use std::{fmt::Write as _, time::Duration};

/// Go's `path.Clean`: collapse `//`, resolve `.` and `..`, drop a trailing
/// slash. An empty path becomes `.`.
pub(crate) fn clean(path: &str) -> String {
    if path.is_empty() {
        return ".".to_owned();
    }
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_owned(),
        (false, false) => joined,
    }
}

/// Whether [`clean`] would return `path` unchanged: not empty, no empty,
/// `.` or `..` segment, no trailing slash (except the root `/` itself).
/// One scan, no allocation.
fn is_clean(path: &str) -> bool {
    if path == "/" {
        return true;
    }
    let rest = path.strip_prefix('/').unwrap_or(path);
    !rest.is_empty()
        && rest
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
}

/// Go's `path.Join`: join the non-empty elements with `/` and clean the
/// result; all elements empty gives the empty string. The joined string is
/// returned as it is when it is already clean (the common case: validated
/// segments after a cleaned prefix), so [`clean`] runs only when needed.
pub(crate) fn join<'a>(elems: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for e in elems {
        if e.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(e);
    }
    if out.is_empty() || is_clean(&out) {
        out
    } else {
        clean(&out)
    }
}

/// client-go's `IsValidPathSegmentName`: the reasons `segment` cannot be
/// used as one path segment (empty when it is fine).
pub(crate) fn segment_problems(segment: &str) -> Vec<&'static str> {
    match segment {
        "." => return vec!["may not be '.'"],
        ".." => return vec!["may not be '..'"],
        _ => {}
    }
    let mut problems = Vec::new();
    if segment.contains('/') {
        problems.push("may not contain '/'");
    }
    if segment.contains('%') {
        problems.push("may not contain '%'");
    }
    problems
}

/// Render a list like Go's `%v` of a `[]string`: `[a b]`.
pub(crate) fn go_list(items: &[&str]) -> String {
    format!("[{}]", items.join(" "))
}

/// Quote a string like Go's `%q` (strconv.Quote), so messages match
/// client-go's byte for byte.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let code = c as u32;
                if code <= 0xffff {
                    let _ = write!(out, "\\u{code:04x}");
                } else {
                    let _ = write!(out, "\\U{code:08x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `time.Duration.String`: `0s`, `500ms`, `1.5s`, `1m0s`, `1h0m0s`.
pub fn go_duration(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".to_owned();
    }
    if nanos < 1_000 {
        return format!("{nanos}ns");
    }
    if nanos < 1_000_000 {
        return format!("{}µs", fraction(nanos, 1_000));
    }
    if nanos < 1_000_000_000 {
        return format!("{}ms", fraction(nanos, 1_000_000));
    }
    let total_secs = nanos / 1_000_000_000;
    let sub = nanos % 1_000_000_000;
    let hours = total_secs / 3600;
    let minutes = (total_secs % 3600) / 60;
    let secs = total_secs % 60;
    let secs_str = fraction(u128::from(secs as u64) * 1_000_000_000 + sub, 1_000_000_000);
    if hours > 0 {
        format!("{hours}h{minutes}m{secs_str}s")
    } else if minutes > 0 {
        format!("{minutes}m{secs_str}s")
    } else {
        format!("{secs_str}s")
    }
}

/// `value / unit` as a decimal with trailing zeros of the fraction removed.
fn fraction(value: u128, unit: u128) -> String {
    let whole = value / unit;
    let rest = value % unit;
    if rest == 0 {
        return whole.to_string();
    }
    let width = unit.to_string().len() - 1;
    let digits = format!("{rest:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// Go's `url.QueryEscape`: unreserved bytes stay, space becomes `+`,
/// everything else is percent-encoded.
pub(crate) fn query_escape(s: &str, out: &mut String) {
    escape_query_with(s, b'~', out);
}

/// `application/x-www-form-urlencoded` escaping, as Rust's
/// `form_urlencoded` (kube-rs's): Go's rule but `*` stays and `~` does not.
pub(crate) fn form_escape(s: &str, out: &mut String) {
    escape_query_with(s, b'*', out);
}

/// Alphanumerics, `-`, `_`, `.` and `also` stay, space becomes `+`,
/// everything else is percent-encoded.
fn escape_query_with(s: &str, also: u8, out: &mut String) {
    for &b in s.as_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => {
                out.push(b as char);
            }
            b if b == also => out.push(b as char),
            b' ' => out.push('+'),
            _ => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
}

/// Go's `url.PathEscape` for a whole path (slashes kept): bytes that are
/// not allowed in a path are percent-encoded.
pub(crate) fn path_escape(path: &str, out: &mut String) {
    for &b in path.as_bytes() {
        match b {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'-'
            | b'_'
            | b'.'
            | b'~'
            | b'/'
            | b'$'
            | b'&'
            | b'+'
            | b','
            | b';'
            | b'='
            | b':'
            | b'@'
            | b'!'
            | b'\''
            | b'('
            | b')'
            | b'*' => out.push(b as char),
            _ => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
}

/// Query parameters: every value kept per key, keys encoded in sorted order
/// (Go's `url.Values.Encode`). A vector sorted by key: a request has a
/// handful of keys at most, most have none (an empty one is free to build,
/// move and drop, which a `BTreeMap` is not quite).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Params {
    entries: Vec<(String, Vec<String>)>,
}

impl Params {
    /// The values of `key`, inserted empty where missing.
    fn values_mut(&mut self, key: &str) -> &mut Vec<String> {
        let i = match self.entries.binary_search_by(|(k, _)| k.as_str().cmp(key)) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (key.to_owned(), Vec::new()));
                i
            }
        };
        &mut self.entries[i].1
    }

    /// Append a value to `key`.
    pub(crate) fn add(&mut self, key: &str, value: &str) {
        self.values_mut(key).push(value.to_owned());
    }

    /// Replace all values of `key` with `value`.
    pub(crate) fn set(&mut self, key: &str, value: &str) {
        let values = self.values_mut(key);
        values.clear();
        values.push(value.to_owned());
    }

    /// The first value of `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        let i = self
            .entries
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
            .ok()?;
        self.entries[i].1.first().map(String::as_str)
    }

    /// Every (key, value), keys sorted, values in insertion order.
    pub(crate) fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries
            .iter()
            .flat_map(|(k, vs)| vs.iter().map(move |v| (k.as_str(), v.as_str())))
    }

    /// Encode as `a=1&b=2&b=3` (keys sorted, values in insertion order).
    pub(crate) fn encode(&self) -> String {
        let mut out = String::new();
        for (key, value) in self.pairs() {
            if !out.is_empty() {
                out.push('&');
            }
            query_escape(key, &mut out);
            out.push('=');
            query_escape(value, &mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_matches_go() {
        assert_eq!(clean(""), ".");
        assert_eq!(clean("/"), "/");
        assert_eq!(clean("/test/"), "/test");
        assert_eq!(clean("a//b/./c/.."), "a/b");
        assert_eq!(clean("/../a"), "/a");
        assert_eq!(clean("../a"), "../a");
        assert_eq!(clean("a/.."), ".");
    }

    #[test]
    fn join_matches_go() {
        assert_eq!(join(["", ""]), "");
        assert_eq!(join(["/", "p", "/api/v1"]), "/p/api/v1");
        assert_eq!(
            join(["/test/", "namespaces", "foo"]),
            "/test/namespaces/foo"
        );
        assert_eq!(join(["a", ""]), "a");
        assert_eq!(join(["/"]), "/");
        assert_eq!(join(["/p1/", "api/"]), "/p1/api");
        assert_eq!(join(["/a", "..", "b"]), "/b");
        assert_eq!(join(["a", ".", "b"]), "a/b");
        assert_eq!(join(["..", "a"]), "../a");
        assert_eq!(join(["."]), ".");
    }

    #[test]
    fn clean_check_never_skips_a_needed_clean() {
        for p in [
            "/", "/a", "a", "a/b", "/a/b", "/a/", "a//b", "./a", "/a/./b", "/a/..", "..", ".",
            "../a", "/..", "a/b/", "//a",
        ] {
            // Conservative: "clean" only when `clean` would change nothing
            // (`..` alone is left to `clean`).
            if is_clean(p) {
                assert_eq!(clean(p), p, "{p}");
            }
            assert_eq!(is_clean(p), clean(p) == p && !p.contains('.'), "{p}");
        }
    }

    #[test]
    fn segment_rules() {
        assert_eq!(segment_problems("a.b"), Vec::<&str>::new());
        assert_eq!(segment_problems(""), Vec::<&str>::new());
        assert_eq!(segment_problems("."), vec!["may not be '.'"]);
        assert_eq!(segment_problems(".."), vec!["may not be '..'"]);
        assert_eq!(segment_problems("a/b"), vec!["may not contain '/'"]);
        assert_eq!(
            segment_problems("a/%"),
            vec!["may not contain '/'", "may not contain '%'"]
        );
        assert_eq!(go_list(&segment_problems("a/b")), "[may not contain '/']");
    }

    #[test]
    fn go_durations() {
        let cases = [
            (Duration::from_secs(1), "1s"),
            (Duration::from_secs(60), "1m0s"),
            (Duration::from_millis(1500), "1.5s"),
            (Duration::from_millis(500), "500ms"),
            (Duration::ZERO, "0s"),
            (Duration::from_secs(3600), "1h0m0s"),
            (Duration::from_secs(3661), "1h1m1s"),
            (Duration::from_micros(1500), "1.5ms"),
            (Duration::from_nanos(1), "1ns"),
            (Duration::from_nanos(1_100), "1.1µs"),
            (Duration::from_millis(90_250), "1m30.25s"),
        ];
        for (d, want) in cases {
            assert_eq!(go_duration(d), want, "{d:?}");
        }
    }

    #[test]
    fn params_sorted_and_multi_valued() {
        let mut p = Params::default();
        p.add("foo", "a b");
        p.add("bar", "1");
        p.add("bar", "2");
        p.add("x", "é&=");
        assert_eq!(p.encode(), "bar=1&bar=2&foo=a+b&x=%C3%A9%26%3D");
        p.set("bar", "3");
        assert_eq!(p.encode(), "bar=3&foo=a+b&x=%C3%A9%26%3D");
        p.set("a", "0");
        assert_eq!(p.encode(), "a=0&bar=3&foo=a+b&x=%C3%A9%26%3D");
        assert_eq!(
            (p.get("bar"), p.get("a"), p.get("b")),
            (Some("3"), Some("0"), None)
        );
        let pairs: Vec<_> = p.pairs().collect();
        assert_eq!(pairs[..2], [("a", "0"), ("bar", "3")]);
    }

    #[test]
    fn quoting_like_go() {
        assert_eq!(go_quote("bar"), "\"bar\"");
        assert_eq!(go_quote("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\x01\"");
    }

    #[test]
    fn path_escaping() {
        let mut out = String::new();
        path_escape("/api/v1/a b?c#d:e@f", &mut out);
        assert_eq!(out, "/api/v1/a%20b%3Fc%23d:e@f");
    }
}
