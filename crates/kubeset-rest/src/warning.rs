//! `Warning` response headers (RFC 7234 §5.5, as the API server sends
//! deprecation and validation warnings) and what to do with them.

use std::{collections::HashSet, fmt, sync::Arc, sync::Mutex};

use http::HeaderMap;

/// One parsed warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The 3-digit warn-code (the API server uses 299).
    pub code: u16,
    /// The warn-agent (`-` when unknown).
    pub agent: String,
    /// The unquoted warn-text.
    pub text: String,
}

/// Parse a quoted string at the start of `s`; returns the unescaped text and
/// the rest after the closing quote.
fn parse_quoted(s: &str) -> Option<(String, &str)> {
    let rest = s.strip_prefix('"')?;
    let mut out = String::new();
    let mut escaping = false;
    for (i, c) in rest.char_indices() {
        match c {
            '"' if !escaping => return Some((out, &rest[i + 1..])),
            '\\' if !escaping => escaping = true,
            c => {
                out.push(c);
                escaping = false;
            }
        }
    }
    None
}

/// Parse the first warning of `header`; returns it and the rest after a
/// comma (empty when done). `None` on a malformed entry.
fn parse_one(header: &str) -> Option<(Warning, &str)> {
    let header = header.trim();
    let (code, rest) = header.split_once(' ')?;
    let (agent, rest) = rest.split_once(' ')?;
    let code: u16 = code.parse().ok().filter(|c| (100..=999).contains(c))?;
    if agent.is_empty() || agent.chars().any(char::is_control) || rest.is_empty() {
        return None;
    }
    let (text, mut rest) = parse_quoted(rest)?;
    if text.chars().any(char::is_control) {
        return None;
    }
    if let Some(date) = rest.strip_prefix(' ')
        && date.starts_with('"')
    {
        rest = parse_quoted(date)?.1;
    }
    let rest = match rest.as_bytes().first() {
        None => rest,
        Some(b',') => &rest[1..],
        Some(_) => return None,
    };
    Some((
        Warning {
            code,
            agent: agent.to_owned(),
            text,
        },
        rest,
    ))
}

/// Parse every `Warning` header value: several comma-separated entries per
/// value; a malformed entry drops the rest of that value.
pub fn parse_warnings<'a>(values: impl IntoIterator<Item = &'a str>) -> Vec<Warning> {
    let mut out = Vec::new();
    for value in values {
        let mut rest = value;
        while !rest.trim().is_empty() {
            match parse_one(rest) {
                Some((w, r)) => {
                    out.push(w);
                    rest = r;
                }
                None => {
                    tracing::debug!(header = value, "ignoring malformed Warning header");
                    break;
                }
            }
        }
    }
    out
}

/// The warnings of a response's headers.
pub(crate) fn from_headers(headers: &HeaderMap) -> Vec<Warning> {
    parse_warnings(
        headers
            .get_all(http::header::WARNING)
            .iter()
            .filter_map(|v| v.to_str().ok()),
    )
}

/// Receives code-299 warnings with a non-empty text.
pub trait WarningHandler: Send + Sync + fmt::Debug {
    /// Handle one warning.
    fn handle_warning(&self, warning: &Warning);
}

/// The default handler: logs `Warning: <text>` through `tracing`.
#[derive(Debug, Default, Clone, Copy)]
pub struct LogWarnings;

impl WarningHandler for LogWarnings {
    fn handle_warning(&self, warning: &Warning) {
        tracing::warn!("Warning: {}", warning.text);
    }
}

/// Drops all warnings.
#[derive(Debug, Default, Clone, Copy)]
pub struct IgnoreWarnings;

impl WarningHandler for IgnoreWarnings {
    fn handle_warning(&self, _warning: &Warning) {}
}

/// Passes each distinct warning text to the inner handler once.
#[derive(Debug)]
pub struct DedupWarnings {
    inner: Arc<dyn WarningHandler>,
    seen: Mutex<HashSet<String>>,
}

impl DedupWarnings {
    /// Deduplicate in front of `inner`.
    pub fn new(inner: Arc<dyn WarningHandler>) -> Self {
        Self {
            inner,
            seen: Mutex::new(HashSet::new()),
        }
    }
}

impl WarningHandler for DedupWarnings {
    fn handle_warning(&self, warning: &Warning) {
        let first = self
            .seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(warning.text.clone());
        if first {
            self.inner.handle_warning(warning);
        }
    }
}

/// Pass the warnings that client-go hands to its handler (code 299,
/// non-empty text).
pub(crate) fn dispatch(handler: &dyn WarningHandler, warnings: &[Warning]) {
    for w in warnings {
        if w.code == 299 && !w.text.is_empty() {
            handler.handle_warning(w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(code: u16, agent: &str, text: &str) -> Warning {
        Warning {
            code,
            agent: agent.into(),
            text: text.into(),
        }
    }

    #[test]
    fn vectors() {
        let cases: Vec<(&str, Vec<Warning>)> = vec![
            ("", vec![]),
            ("299 - \"text\"", vec![w(299, "-", "text")]),
            (
                r#"299 - "text\"\\\a\b\c""#,
                vec![w(299, "-", "text\"\\abc")],
            ),
            (
                r#"299 - "a", 299 - "b""#,
                vec![w(299, "-", "a"), w(299, "-", "b")],
            ),
            (
                r#"299 - "a" "Sat, 25 Aug 2012 23:34:45 GMT",299 - "b""#,
                vec![w(299, "-", "a"), w(299, "-", "b")],
            ),
            (r#"199 agent:1 "x""#, vec![w(199, "agent:1", "x")]),
            // A malformed entry drops the rest of the header.
            (r#"299 - "a", 99 - "b", 299 - "c""#, vec![w(299, "-", "a")]),
            (r#"299 - "unterminated"#, vec![]),
            (r#"299 - noquote"#, vec![]),
            (r#"299 -"#, vec![]),
            (r#"abc - "x""#, vec![]),
            (r#"299 - "a" junk"#, vec![]),
        ];
        for (header, want) in cases {
            assert_eq!(parse_warnings([header]), want, "{header}");
        }
    }

    #[test]
    fn several_headers_parse_independently() {
        let got = parse_warnings([r#"299 - "a", bad"#, r#"299 - "b""#]);
        assert_eq!(got, vec![w(299, "-", "a"), w(299, "-", "b")]);
    }

    #[derive(Debug, Default)]
    struct Collect(Mutex<Vec<String>>);
    impl WarningHandler for Collect {
        fn handle_warning(&self, warning: &Warning) {
            self.0.lock().unwrap().push(warning.text.clone());
        }
    }

    #[test]
    fn dedup_and_dispatch_filter() {
        let inner = Arc::new(Collect::default());
        let dedup = DedupWarnings::new(inner.clone());
        dispatch(
            &dedup,
            &[
                w(299, "-", "a"),
                w(299, "-", "a"),
                w(199, "-", "other code"),
                w(299, "-", ""),
                w(299, "-", "b"),
            ],
        );
        assert_eq!(*inner.0.lock().unwrap(), vec!["a", "b"]);
    }
}
