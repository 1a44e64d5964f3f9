//! `-o yaml` byte for byte as kubectl prints it: sigs.k8s.io/yaml turns
//! the object's JSON into YAML with go-yaml v2, whose emitter is libyaml's.
//!
//! The rules reproduced here, from go-yaml's encoder and libyaml's emitter:
//! - keys in go-yaml's order ([`key_order`]: runs of digits compare as
//!   numbers, a non-letter sorts before a letter);
//! - block style, two-space indent, a sequence inside a mapping not
//!   indented (`containers:` then `- name: …` at the key's column), empty
//!   maps and lists as `{}` and `[]`;
//! - a string that would read back as something else unquoted (`"10"`,
//!   `"true"`, `"yes"`, `""`, `"2026-12-01T16:08:22Z"`) in double quotes; one
//!   that YAML's syntax forbids plain (`': x'`, `'- a'`, `'#c'`, a leading
//!   or trailing space) in single quotes; one with a line break as a
//!   literal block (`|`, `|-`, `|+`); one with characters libyaml will not
//!   print (a tab, a control character, a character outside the BMP)
//!   double-quoted with escapes;
//! - long plain and quoted scalars folded at a space once the line is past
//!   column 80, as libyaml's `best_width`;
//! - a key over 128 characters or with a line break written as a complex
//!   key (`? key` then `: value`);
//! - numbers as kubectl holds them ([`gonum::yaml_float`]).

use std::cmp::Ordering;

use serde_json::Value;

use crate::gonum::{self, GoNumber};

/// libyaml's `best_width`: a scalar folds at a space past this column.
const WIDTH: usize = 80;
/// libyaml's longest simple key.
const SIMPLE_KEY_MAX: usize = 128;

/// `value` as kubectl's `-o yaml` prints it.
pub fn to_yaml(value: &Value) -> String {
    let mut e = Emitter::default();
    e.node(value, 0, Context::Root);
    e.finish()
}

/// `value` as one item of a top-level `items:` list (`- ` then the object
/// at indent 2, folded where kubectl folds it there).
pub fn list_item(value: &Value) -> String {
    let mut e = Emitter::default();
    e.sequence_item(value, 0);
    e.finish()
}

/// go-yaml v2's order of mapping keys (`keyList.Less`).
pub fn key_order(a: &str, b: &str) -> Ordering {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    for i in 0..a.len().min(b.len()) {
        if a[i] == b[i] {
            continue;
        }
        let (al, bl) = (a[i].is_alphabetic(), b[i].is_alphabetic());
        if al && bl {
            return a[i].cmp(&b[i]);
        }
        if al || bl {
            return if bl {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        // Digits compare as numbers; inside a run that already has a
        // non-zero digit, a zero here counts (go-yaml starts both at 1).
        let start = i64::from(
            (a[i] == '0' || b[i] == '0')
                && a[..i]
                    .iter()
                    .rev()
                    .take_while(|c| c.is_ascii_digit())
                    .any(|c| *c != '0'),
        );
        let number = |s: &[char]| {
            let end = (i..s.len())
                .find(|&j| !s[j].is_ascii_digit())
                .unwrap_or(s.len());
            let n = s[i..end].iter().fold(start, |n, c| {
                n.wrapping_mul(10).wrapping_add(i64::from(*c as u8 - b'0'))
            });
            (n, end)
        };
        let (an, ae) = number(&a);
        let (bn, be) = number(&b);
        if an != bn {
            return an.cmp(&bn);
        }
        if ae != be {
            return ae.cmp(&be);
        }
        return a[i].cmp(&b[i]);
    }
    a.len().cmp(&b.len())
}

/// Where a node is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    /// The document itself.
    Root,
    /// After `key:`.
    MappingValue,
    /// After `- `.
    SequenceItem,
}

/// How a scalar is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

struct Emitter {
    out: String,
    column: usize,
    /// Only indentation (and indicators) on the line so far.
    indention: bool,
    /// The last character written is a space or nothing was written yet.
    whitespace: bool,
    /// The last block scalar keeps its trailing line breaks (`|+`): libyaml
    /// then ends the stream with `...`.
    open_ended: bool,
}

impl Default for Emitter {
    fn default() -> Self {
        Self {
            out: String::new(),
            column: 0,
            indention: true,
            whitespace: true,
            open_ended: false,
        }
    }
}

impl Emitter {
    fn finish(mut self) -> String {
        if !self.out.ends_with('\n') {
            self.out.push('\n');
        }
        if self.open_ended {
            self.out.push_str("...\n");
        }
        self.out
    }

    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
        self.whitespace = c == ' ';
        self.indention = self.indention && c == ' ';
    }

    fn put_str(&mut self, s: &str) {
        s.chars().for_each(|c| self.put(c));
    }

    fn newline(&mut self) {
        self.out.push('\n');
        self.column = 0;
        self.whitespace = true;
        self.indention = true;
    }

    /// libyaml's `write_break`: a line feed as a new line, another line
    /// break (U+2028, U+2029) written as itself; either way the next
    /// character starts a line.
    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.newline();
        } else {
            self.out.push(c);
            self.column = 0;
            self.indention = true;
        }
    }

    /// libyaml's `write_indent`: a new line unless only indentation is on
    /// this one, then spaces up to `indent`.
    fn indent(&mut self, indent: usize) {
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.newline();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.indention = true;
        self.whitespace = true;
    }

    /// An indicator (`-`, `:`, `?`, a quote, `|`), after a space if
    /// `need_whitespace` and the line does not end in one.
    fn indicator(&mut self, s: &str, need_whitespace: bool, is_indention: bool) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        let keep = self.indention && is_indention;
        self.put_str(s);
        self.indention = keep;
        self.whitespace = false;
    }

    /// A node whose parent container is at `indent`.
    fn node(&mut self, value: &Value, indent: usize, ctx: Context) {
        match value {
            Value::Object(map) if !map.is_empty() => self.mapping(map, indent, ctx),
            Value::Array(items) if !items.is_empty() => self.sequence(items, indent, ctx),
            Value::Object(_) => self.flow_empty("{}"),
            Value::Array(_) => self.flow_empty("[]"),
            Value::String(s) => self.string(s, indent, false),
            other => {
                let text = match other {
                    Value::Null => "null".to_owned(),
                    Value::Bool(b) => b.to_string(),
                    Value::Number(n) => match GoNumber::of(n) {
                        GoNumber::Int(i) => i.to_string(),
                        GoNumber::Float(f) => gonum::yaml_float(f),
                    },
                    _ => String::new(),
                };
                if !self.whitespace {
                    self.put(' ');
                }
                self.put_str(&text);
            }
        }
    }

    fn flow_empty(&mut self, text: &str) {
        if !self.whitespace {
            self.put(' ');
        }
        self.put_str(text);
    }

    fn mapping(&mut self, map: &serde_json::Map<String, Value>, parent: usize, ctx: Context) {
        let indent = if ctx == Context::Root { 0 } else { parent + 2 };
        let mut keys: Vec<&String> = map.keys().collect();
        keys.sort_by(|a, b| key_order(a, b));
        for key in keys {
            self.indent(indent);
            // libyaml counts the key's bytes.
            let simple = key.len() <= SIMPLE_KEY_MAX && !key.chars().any(is_break);
            if simple {
                self.string(key, indent, true);
                self.indicator(":", false, false);
            } else {
                self.indicator("?", true, true);
                self.string(key, indent, false);
                self.indent(indent);
                self.indicator(":", true, true);
            }
            self.node(&map[key], indent, Context::MappingValue);
        }
    }

    fn sequence(&mut self, items: &[Value], parent: usize, ctx: Context) {
        // A sequence that is a mapping's value is not indented.
        let indent = match ctx {
            Context::Root | Context::MappingValue => parent,
            Context::SequenceItem => parent + 2,
        };
        for item in items {
            self.sequence_item(item, indent);
        }
    }

    fn sequence_item(&mut self, item: &Value, indent: usize) {
        self.indent(indent);
        self.indicator("-", true, true);
        self.node(item, indent, Context::SequenceItem);
    }

    /// A string scalar of a node whose container is at `indent` (its own
    /// lines go at `indent + 2`); `key` for a simple key (never folded).
    fn string(&mut self, s: &str, indent: usize, key: bool) {
        let indent = indent + 2;
        match style(s, key) {
            Style::Plain => self.plain(s, indent, !key),
            Style::SingleQuoted => self.single_quoted(s, indent, !key),
            Style::DoubleQuoted => self.double_quoted(s, indent, !key),
            Style::Literal => self.literal(s, indent),
        }
    }

    fn plain(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if allow_breaks && !spaces && self.column > WIDTH && chars.get(i + 1) != Some(&' ')
                {
                    self.indent(indent);
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
    }

    fn single_quoted(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        self.indicator("'", true, false);
        let chars: Vec<char> = s.chars().collect();
        let (mut spaces, mut breaks) = (false, false);
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let inner = i != 0 && i + 1 != chars.len();
                if allow_breaks
                    && !spaces
                    && self.column > WIDTH
                    && inner
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.indent(indent);
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                // A line separator (U+2028, U+2029) that libyaml lets
                // through: written as itself, then the next line indented.
                if !breaks && c == '\n' {
                    self.newline();
                }
                self.write_break(c);
                breaks = true;
            } else {
                if breaks {
                    self.indent(indent);
                    breaks = false;
                }
                spaces = false;
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
            }
        }
        self.put('\'');
    }

    fn double_quoted(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        self.indicator("\"", true, false);
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !printable(c) || c == '\u{feff}' || is_break(c) || c == '"' || c == '\\' {
                self.put_str(&escape(c));
                spaces = false;
            } else if c == ' ' {
                let inner = i != 0 && i + 1 != chars.len();
                if allow_breaks && !spaces && self.column > WIDTH && inner {
                    self.indent(indent);
                    if chars.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.put('"');
    }

    fn literal(&mut self, s: &str, indent: usize) {
        self.indicator("|", true, false);
        let first = s.chars().next();
        if first.is_some_and(|c| c == ' ' || is_break(c)) {
            self.put('2');
        }
        let mut tail = s.chars().rev();
        let keep = match (tail.next(), tail.next()) {
            (Some(last), _) if !is_break(last) => Some('-'),
            (Some(_), None) => Some('+'),
            (Some(_), Some(before)) if is_break(before) => Some('+'),
            _ => None,
        };
        if let Some(c) = keep {
            self.put(c);
        }
        self.open_ended = keep == Some('+');
        self.newline();
        let mut breaks = true;
        for c in s.chars() {
            if is_break(c) {
                self.write_break(c);
                breaks = true;
            } else {
                if breaks {
                    self.indent(indent);
                }
                self.put(c);
                breaks = false;
            }
        }
    }
}

/// The style go-yaml asks for and libyaml settles on.
fn style(s: &str, key: bool) -> Style {
    let asked = if s.contains('\n') {
        Style::Literal
    } else if resolves_as_string(s) {
        Style::Plain
    } else {
        Style::DoubleQuoted
    };
    let a = analyze(s);
    match asked {
        Style::Plain if !a.block_plain || (s.is_empty() && key) => {
            if a.single_quoted {
                Style::SingleQuoted
            } else {
                Style::DoubleQuoted
            }
        }
        Style::Literal if !a.block || key => Style::DoubleQuoted,
        other => other,
    }
}

/// What libyaml's `analyze_scalar` allows.
struct Analysis {
    block_plain: bool,
    single_quoted: bool,
    block: bool,
}

fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            block_plain: true,
            single_quoted: true,
            block: false,
        };
    }
    let chars: Vec<char> = s.chars().collect();
    let mut indicators = s.starts_with("---") || s.starts_with("...");
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break, mut special, mut line_breaks) =
        (false, false, false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;
    for (i, &c) in chars.iter().enumerate() {
        // libyaml: the end or a blank (space, tab), not a line break.
        let followed_by_whitespace = chars.get(i + 1).is_none_or(|&c| c == ' ' || c == '\t');
        let (first, last) = (i == 0, i + 1 == chars.len());
        if first {
            indicators |= "#,[]{}&*!|>'\"%@`".contains(c)
                || (matches!(c, '?' | ':' | '-') && followed_by_whitespace);
        } else {
            indicators |=
                (c == ':' && followed_by_whitespace) || (c == '#' && preceded_by_whitespace);
        }
        special |= !printable(c) || c == '\u{feff}';
        line_breaks |= is_break(c);
        if c == ' ' {
            leading_space |= first;
            trailing_space |= last;
            break_space |= previous_break;
            (previous_space, previous_break) = (true, false);
        } else if is_break(c) {
            leading_break |= first;
            trailing_break |= last;
            space_break |= previous_space;
            (previous_space, previous_break) = (false, true);
        } else {
            (previous_space, previous_break) = (false, false);
        }
        preceded_by_whitespace = c == ' ' || c == '\t' || is_break(c);
    }
    let mut a = Analysis {
        block_plain: true,
        single_quoted: true,
        block: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain = false;
    }
    if trailing_space {
        a.block = false;
    }
    if break_space {
        a.block_plain = false;
        a.single_quoted = false;
    }
    if space_break || special {
        a = Analysis {
            block_plain: false,
            single_quoted: false,
            block: false,
        };
    }
    if line_breaks || indicators {
        a.block_plain = false;
    }
    a
}

/// libyaml's printable characters (with `unicode` on, as go-yaml sets it):
/// a line feed, printable ASCII, and the BMP from U+00A0 but surrogates and
/// U+FFFE/U+FFFF. Nothing beyond the BMP.
fn printable(c: char) -> bool {
    matches!(c, '\n' | '\u{20}'..='\u{7e}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// libyaml's escape of a character in a double-quoted scalar.
fn escape(c: char) -> String {
    match c {
        '\0' => "\\0".into(),
        '\u{7}' => "\\a".into(),
        '\u{8}' => "\\b".into(),
        '\t' => "\\t".into(),
        '\n' => "\\n".into(),
        '\u{b}' => "\\v".into(),
        '\u{c}' => "\\f".into(),
        '\r' => "\\r".into(),
        '\u{1b}' => "\\e".into(),
        '"' => "\\\"".into(),
        '\\' => "\\\\".into(),
        '\u{85}' => "\\N".into(),
        '\u{a0}' => "\\_".into(),
        '\u{2028}' => "\\L".into(),
        '\u{2029}' => "\\P".into(),
        c if u32::from(c) <= 0xff => format!("\\x{:02X}", u32::from(c)),
        c if u32::from(c) <= 0xffff => format!("\\u{:04X}", u32::from(c)),
        c => format!("\\U{:08X}", u32::from(c)),
    }
}

/// Whether go-yaml reads `s` back as a string when written plain (its
/// `resolve`, plus its base-60 float check): not a bool (YAML 1.1's `yes`,
/// `on`…), null, number or timestamp.
fn resolves_as_string(s: &str) -> bool {
    const SPECIAL: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "n", "N", "no",
        "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", "", "~", "null", "Null",
        "NULL", ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
        "-.Inf", "-.INF",
    ];
    let Some(first) = s.bytes().next() else {
        return false;
    };
    let hinted =
        matches!(first, b'+' | b'-' | b'0'..=b'9' | b'.') || b"yYnNtTfFoO~".contains(&first);
    if !hinted {
        return !is_base60_float(s);
    }
    if SPECIAL.contains(&s) {
        return false;
    }
    let number = match first {
        b'.' => go_float(s),
        b'+' | b'-' | b'0'..=b'9' => {
            let plain = s.replace('_', "");
            (first.is_ascii_digit() && is_timestamp(s))
                || go_int(&plain)
                || (yaml_style_float(&plain) && go_float(&plain))
                || binary(&plain)
        }
        _ => false,
    };
    !number && !is_base60_float(s)
}

/// Go's `strconv.ParseInt(s, 0, 64)` or `ParseUint` accepts `s`.
fn go_int(s: &str) -> bool {
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (digits, radix) =
        if let Some(h) = unsigned.strip_prefix("0x").or(unsigned.strip_prefix("0X")) {
            (h, 16)
        } else if let Some(b) = unsigned.strip_prefix("0b").or(unsigned.strip_prefix("0B")) {
            (b, 2)
        } else if let Some(o) = unsigned.strip_prefix("0o").or(unsigned.strip_prefix("0O")) {
            (o, 8)
        } else if unsigned.len() > 1 && unsigned.starts_with('0') {
            (&unsigned[1..], 8)
        } else {
            (unsigned, 10)
        };
    !digits.is_empty()
        && digits.chars().all(|c| c.is_digit(radix))
        && (i64::from_str_radix(
            &format!("{}{digits}", if s.starts_with('-') { "-" } else { "" }),
            radix,
        )
        .is_ok()
            || (!s.starts_with('-') && u64::from_str_radix(digits, radix).is_ok()))
}

/// go-yaml's `-0b…` form.
fn binary(s: &str) -> bool {
    s.strip_prefix("-0b")
        .is_some_and(|b| !b.is_empty() && i64::from_str_radix(b, 2).is_ok())
}

/// go-yaml's float pattern `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn yaml_style_float(s: &str) -> bool {
    let b = s.strip_prefix(['+', '-']).unwrap_or(s).as_bytes();
    let digits = |b: &[u8], at: &mut usize| {
        let start = *at;
        while b.get(*at).is_some_and(u8::is_ascii_digit) {
            *at += 1;
        }
        *at > start
    };
    let mut at = 0;
    if b.first() == Some(&b'.') {
        at = 1;
        if !digits(b, &mut at) {
            return false;
        }
    } else {
        if !digits(b, &mut at) {
            return false;
        }
        if b.get(at) == Some(&b'.') {
            at += 1;
            digits(b, &mut at);
        }
    }
    if matches!(b.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(b.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        if !digits(b, &mut at) {
            return false;
        }
    }
    at == b.len()
}

/// Go's `strconv.ParseFloat(s, 64)` accepts `s` (the forms go-yaml reaches
/// it with: decimal, with `inf`/`nan` words and hex floats too).
fn go_float(s: &str) -> bool {
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let word = ["inf", "infinity", "nan"]
        .iter()
        .any(|w| unsigned.eq_ignore_ascii_case(w));
    // Go refuses a decimal out of float64's range (ErrRange); Rust reads
    // it as infinity.
    word || (unsigned
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        && s.parse::<f64>().is_ok_and(f64::is_finite))
}

/// go-yaml's base-60 float check (`1:20`, YAML 1.1's sexagesimal).
fn is_base60_float(s: &str) -> bool {
    let b = s.strip_prefix(['+', '-']).unwrap_or(s);
    let mut parts = b.split(':');
    let head = parts.next().unwrap_or("");
    if !head.starts_with(|c: char| c.is_ascii_digit())
        || !head.bytes().all(|c| c.is_ascii_digit() || c == b'_')
    {
        return false;
    }
    let rest: Vec<&str> = parts.collect();
    let Some((last, middle)) = rest.split_last() else {
        return false;
    };
    let sixty = |p: &str| {
        matches!(p.len(), 1 | 2)
            && p.bytes().all(|c| c.is_ascii_digit())
            && (p.len() == 1 || p.as_bytes()[0] <= b'5')
    };
    let (last, fraction) = match last.split_once('.') {
        Some((l, f)) => (l, Some(f)),
        None => (*last, None),
    };
    middle.iter().all(|p| sixty(p))
        && sixty(last)
        && fraction.is_none_or(|f| f.bytes().all(|c| c.is_ascii_digit() || c == b'_'))
}

/// go-yaml's timestamps: `YYYY-M-D`, optionally `T`/`t`/` ` and
/// `h:m:s[.frac]`, with a zone (`Z`, `±hh:mm`) after `T`/`t`, none after a
/// space; a valid date and time, as Go's `time.Parse` checks.
fn is_timestamp(s: &str) -> bool {
    fn num(s: &str, min: usize, max: usize) -> Option<(u32, &str)> {
        let n = s.bytes().take_while(u8::is_ascii_digit).count();
        if n < min || n > max {
            return None;
        }
        Some((s[..n].parse().ok()?, &s[n..]))
    }
    let date = || -> Option<&str> {
        let (year, rest) = num(s, 4, 4)?;
        let (month, rest) = num(rest.strip_prefix('-')?, 1, 2)?;
        let (day, rest) = num(rest.strip_prefix('-')?, 1, 2)?;
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
        let days = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return None,
        };
        (1..=days).contains(&day).then_some(rest)
    };
    let Some(rest) = date() else {
        return false;
    };
    if rest.is_empty() {
        return true;
    }
    let (zoned, time) = match rest.as_bytes()[0] {
        b'T' | b't' => (true, &rest[1..]),
        b' ' => (false, &rest[1..]),
        _ => return false,
    };
    let clock = || -> Option<&str> {
        let (h, rest) = num(time, 1, 2)?;
        let (m, rest) = num(rest.strip_prefix(':')?, 1, 2)?;
        let (sec, mut rest) = num(rest.strip_prefix(':')?, 1, 2)?;
        if h > 23 || m > 59 || sec > 59 {
            return None;
        }
        if let Some(frac) = rest.strip_prefix('.') {
            let n = frac.bytes().take_while(u8::is_ascii_digit).count();
            if n == 0 || n > 9 {
                return None;
            }
            rest = &frac[n..];
        }
        Some(rest)
    };
    let Some(zone) = clock() else {
        return false;
    };
    if !zoned {
        return zone.is_empty();
    }
    if zone == "Z" {
        return true;
    }
    let Some(offset) = zone.strip_prefix(['+', '-']) else {
        return false;
    };
    let b = offset.as_bytes();
    b.len() == 5 && b[2] == b':' && offset.bytes().filter(u8::is_ascii_digit).count() == 4
}

#[cfg(test)]
mod tests;
