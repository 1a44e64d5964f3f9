//! kubectl's `-o jsonpath=TEMPLATE` (client-go's `util/jsonpath`): text
//! with `{…}` actions. An action is a path (`.metadata.name`,
//! `.items[*].metadata.name`, `['a.b']`, `[0]`, `[-1]`, `[1:3]`, `.*`,
//! `..name`, `[?(@.status.phase=="Running")]`), a string literal (`{"\n"}`),
//! or `range PATH` … `end`. As kubectl's `get`, a missing key prints
//! nothing; several results of one path are joined by a space; strings
//! print raw, maps and arrays as compact JSON. Pure: parse once, then
//! [`Template::render`] on a value.

use std::fmt::Write as _;

use serde_json::Value;

/// The longest template accepted (a command-line argument).
const MAX_TEMPLATE: usize = 4096;
/// How deeply `range` may nest.
const MAX_NESTING: usize = 16;

/// Why a template does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("jsonpath template: {reason} at byte {at}")]
pub struct TemplateError {
    /// Byte offset into the template.
    pub at: usize,
    /// What is wrong.
    pub reason: &'static str,
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    nodes: Vec<Node>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Text(String),
    Path(Vec<Step>),
    Range(Vec<Step>, Vec<Node>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Field(String),
    Recursive(String),
    Index(i64),
    Slice(Option<i64>, Option<i64>),
    Wildcard,
    Filter(Filter),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Filter {
    path: Vec<Step>,
    test: Option<(Op, Value)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

fn err(at: usize, reason: &'static str) -> TemplateError {
    TemplateError { at, reason }
}

impl Template {
    /// Parses a template.
    pub fn parse(text: &str) -> Result<Self, TemplateError> {
        if text.len() > MAX_TEMPLATE {
            return Err(err(MAX_TEMPLATE, "template longer than 4096 bytes"));
        }
        let mut root = Vec::new();
        // The open ranges: (path, nodes so far).
        let mut open: Vec<(Vec<Step>, Vec<Node>)> = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let at = text.len() - rest.len();
            let Some(brace) = rest.find('{') else {
                push_text(current(&mut root, &mut open), rest);
                break;
            };
            push_text(current(&mut root, &mut open), &rest[..brace]);
            let close = action_end(&rest[brace + 1..]).ok_or(err(at + brace, "unclosed {"))?;
            let action = rest[brace + 1..brace + 1 + close].trim();
            let action_at = at + brace + 1;
            rest = &rest[brace + 1 + close + 1..];
            if action == "end" {
                let (path, nodes) = open.pop().ok_or(err(action_at, "{end} without {range}"))?;
                current(&mut root, &mut open).push(Node::Range(path, nodes));
            } else if let Some(path) = action.strip_prefix("range ") {
                if open.len() >= MAX_NESTING {
                    return Err(err(action_at, "range nested too deeply"));
                }
                open.push((parse_path(path.trim(), action_at)?, Vec::new()));
            } else if action.starts_with(['"', '\'']) {
                let lit = parse_string(action, action_at)?;
                current(&mut root, &mut open).push(Node::Text(lit));
            } else {
                let path = parse_path(action, action_at)?;
                current(&mut root, &mut open).push(Node::Path(path));
            }
        }
        if !open.is_empty() {
            return Err(err(text.len(), "{range} without {end}"));
        }
        Ok(Template { nodes: root })
    }

    /// Renders the template on `root`.
    pub fn render(&self, root: &Value) -> String {
        let mut out = String::new();
        render_nodes(&self.nodes, root, &mut out);
        out
    }
}

/// Where the next node goes: the innermost open range, else the template.
fn current<'a>(
    root: &'a mut Vec<Node>,
    open: &'a mut [(Vec<Step>, Vec<Node>)],
) -> &'a mut Vec<Node> {
    match open.last_mut() {
        Some((_, nodes)) => nodes,
        None => root,
    }
}

fn push_text(nodes: &mut Vec<Node>, text: &str) {
    if !text.is_empty() {
        nodes.push(Node::Text(text.to_owned()));
    }
}

/// The offset of the `}` closing an action, skipping quoted strings.
fn action_end(text: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(_), '\\') if !escaped => {
                escaped = true;
                continue;
            }
            (Some(q), c) if c == q && !escaped => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, '}') => return Some(i),
            _ => {}
        }
        escaped = false;
    }
    None
}

/// A double- or single-quoted literal with `\n`, `\t`, `\r`, `\\`, `\"`.
fn parse_string(text: &str, at: usize) -> Result<String, TemplateError> {
    let quote = text.chars().next().ok_or(err(at, "empty string"))?;
    let body = text
        .strip_prefix(quote)
        .and_then(|t| t.strip_suffix(quote))
        .ok_or(err(at, "unterminated string"))?;
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(c @ ('\\' | '"' | '\'')) => out.push(c),
            _ => return Err(err(at, "unknown escape in string")),
        }
    }
    Ok(out)
}

fn parse_path(text: &str, at: usize) -> Result<Vec<Step>, TemplateError> {
    let mut steps = Vec::new();
    let mut rest = text.strip_prefix(['$', '@']).unwrap_or(text);
    while !rest.is_empty() {
        let here = at + text.len() - rest.len();
        if let Some(after) = rest.strip_prefix("..") {
            let (name, tail) = split_name(after);
            if name.is_empty() {
                return Err(err(here, "`..` needs a field name"));
            }
            steps.push(Step::Recursive(name.to_owned()));
            rest = tail;
        } else if let Some(after) = rest.strip_prefix(".*") {
            steps.push(Step::Wildcard);
            rest = after;
        } else if let Some(after) = rest.strip_prefix('.') {
            let (name, tail) = split_name(after);
            if !name.is_empty() {
                steps.push(Step::Field(name.to_owned()));
            }
            rest = tail;
        } else if rest.starts_with('[') {
            let close = bracket_end(rest).ok_or(err(here, "unclosed ["))?;
            steps.push(parse_bracket(&rest[1..close], here)?);
            rest = &rest[close + 1..];
        } else {
            return Err(err(here, "expected `.field` or `[…]`"));
        }
    }
    Ok(steps)
}

fn split_name(text: &str) -> (&str, &str) {
    let end = text.find(['.', '[']).unwrap_or(text.len());
    (&text[..end], &text[end..])
}

/// The offset of the `]` closing the `[` at 0, skipping quotes and nested
/// brackets (filters contain paths).
fn bracket_end(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[') => depth += 1,
            (None, ']') => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn parse_bracket(inner: &str, at: usize) -> Result<Step, TemplateError> {
    let inner = inner.trim();
    if inner == "*" {
        return Ok(Step::Wildcard);
    }
    if inner.starts_with(['\'', '"']) {
        return Ok(Step::Field(parse_string(inner, at)?));
    }
    if let Some(filter) = inner.strip_prefix("?(").and_then(|f| f.strip_suffix(')')) {
        return parse_filter(filter.trim(), at);
    }
    let int = |t: &str| -> Result<Option<i64>, TemplateError> {
        let t = t.trim();
        if t.is_empty() {
            return Ok(None);
        }
        t.parse().map(Some).map_err(|_| err(at, "bad index"))
    };
    match inner.split_once(':') {
        Some((a, b)) => Ok(Step::Slice(int(a)?, int(b)?)),
        None => int(inner)?
            .map(Step::Index)
            .ok_or(err(at, "empty [] (use [*] for every element)")),
    }
}

fn parse_filter(text: &str, at: usize) -> Result<Step, TemplateError> {
    const OPS: [(&str, Op); 6] = [
        ("==", Op::Eq),
        ("!=", Op::Ne),
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("<", Op::Lt),
        (">", Op::Gt),
    ];
    let found = OPS
        .iter()
        .find_map(|(s, op)| text.split_once(s).map(|(l, r)| (l, *op, r)));
    let (left, test) = match found {
        Some((left, op, right)) => {
            let right = right.trim();
            let value = if right.starts_with(['"', '\'']) {
                Value::String(parse_string(right, at)?)
            } else {
                serde_json::from_str(right).map_err(|_| err(at, "bad literal in filter"))?
            };
            (left.trim(), Some((op, value)))
        }
        None => (text, None),
    };
    if !left.starts_with('@') {
        return Err(err(at, "a filter starts with @"));
    }
    Ok(Step::Filter(Filter {
        path: parse_path(left, at)?,
        test,
    }))
}

fn render_nodes(nodes: &[Node], data: &Value, out: &mut String) {
    for node in nodes {
        match node {
            Node::Text(t) => out.push_str(t),
            Node::Path(path) => {
                let values = eval(path, data);
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    print_value(v, out);
                }
            }
            Node::Range(path, body) => {
                for v in eval(path, data) {
                    render_nodes(body, v, out);
                }
            }
        }
    }
}

/// One result as kubectl's jsonpath prints it: strings bare, numbers as
/// Go's `%v` (`1.8446744073709552e+19`), objects and arrays as compact
/// JSON with encoding/json's numbers.
fn print_value(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => out.push_str(s),
        Value::Null => {}
        Value::Number(n) => out.push_str(&crate::gonum::GoNumber::of(n).display()),
        other => match crate::gonum::to_json_compact(other) {
            Ok(text) => out.push_str(&text),
            Err(_) => {
                let _ = write!(out, "{other}");
            }
        },
    }
}

/// Every value `path` selects under `data`.
fn eval<'a>(path: &[Step], data: &'a Value) -> Vec<&'a Value> {
    let mut cur = vec![data];
    for step in path {
        let mut next = Vec::new();
        for v in cur {
            apply(step, v, &mut next);
        }
        cur = next;
    }
    cur
}

fn apply<'a>(step: &Step, v: &'a Value, out: &mut Vec<&'a Value>) {
    match step {
        Step::Field(name) => out.extend(v.get(name.as_str())),
        Step::Recursive(name) => recurse(name, v, out),
        Step::Wildcard => match v {
            Value::Array(a) => out.extend(a.iter()),
            Value::Object(m) => out.extend(m.values()),
            _ => {}
        },
        Step::Index(i) => {
            if let Value::Array(a) = v {
                out.extend(index(a.len(), *i).and_then(|i| a.get(i)));
            }
        }
        Step::Slice(start, end) => {
            if let Value::Array(a) = v {
                let len = a.len();
                let from = start.map_or(0, |s| clamp(len, s));
                let to = end.map_or(len, |e| clamp(len, e));
                if from < to {
                    out.extend(&a[from..to]);
                }
            }
        }
        Step::Filter(f) => {
            if let Value::Array(a) = v {
                out.extend(a.iter().filter(|item| matches(f, item)));
            }
        }
    }
}

fn recurse<'a>(name: &str, v: &'a Value, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(m) => {
            out.extend(m.get(name));
            for child in m.values() {
                recurse(name, child, out);
            }
        }
        Value::Array(a) => {
            for child in a {
                recurse(name, child, out);
            }
        }
        _ => {}
    }
}

fn index(len: usize, i: i64) -> Option<usize> {
    let len = i64::try_from(len).ok()?;
    let i = if i < 0 { len + i } else { i };
    (0..len)
        .contains(&i)
        .then(|| usize::try_from(i).ok())
        .flatten()
}

fn clamp(len: usize, i: i64) -> usize {
    let n = i64::try_from(len).unwrap_or(i64::MAX);
    let i = if i < 0 { (n + i).max(0) } else { i.min(n) };
    usize::try_from(i).unwrap_or(0)
}

fn matches(f: &Filter, item: &Value) -> bool {
    let found = eval(&f.path, item);
    let Some((op, want)) = &f.test else {
        return !found.is_empty();
    };
    found.iter().any(|got| compare(*op, got, want))
}

fn compare(op: Op, got: &Value, want: &Value) -> bool {
    let ord = match (got, want) {
        (Value::Number(a), Value::Number(b)) => a
            .as_f64()
            .zip(b.as_f64())
            .and_then(|(a, b)| a.partial_cmp(&b)),
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        _ => None,
    };
    match (op, ord) {
        (Op::Eq, _) => got == want,
        (Op::Ne, _) => got != want,
        (Op::Lt, Some(o)) => o.is_lt(),
        (Op::Le, Some(o)) => o.is_le(),
        (Op::Gt, Some(o)) => o.is_gt(),
        (Op::Ge, Some(o)) => o.is_ge(),
        (_, None) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn list() -> Value {
        json!({"kind": "List", "items": [
            {"metadata": {"name": "a", "labels": {"app": "web"}}, "status": {"phase": "Running"}, "n": 3},
            {"metadata": {"name": "b"}, "status": {"phase": "Pending"}, "n": 1},
        ]})
    }

    fn run(t: &str, v: &Value) -> String {
        Template::parse(t).unwrap().render(v)
    }

    #[test]
    fn paths_as_kubectl_prints_them() {
        let l = list();
        assert_eq!(run("{.items[*].metadata.name}", &l), "a b");
        assert_eq!(run("{.items[0].metadata.name}", &l), "a");
        assert_eq!(run("{.items[-1].metadata.name}", &l), "b");
        assert_eq!(run("{.items[0:1].metadata.name}", &l), "a");
        assert_eq!(run("{.items[0].metadata.labels}", &l), r#"{"app":"web"}"#);
        assert_eq!(run("{.items[0]['metadata'].name}", &l), "a");
        assert_eq!(run("{..name}", &l), "a b");
        assert_eq!(run("{.missing.key}", &l), "");
        assert_eq!(run("{.items[5].metadata.name}", &l), "");
        assert_eq!(run("{.items[*].n}", &l), "3 1");
        assert_eq!(run("kind={.kind}", &l), "kind=List");
    }

    #[test]
    fn range_literals_and_filters() {
        let l = list();
        assert_eq!(
            run(
                r#"{range .items[*]}{.metadata.name}{"\t"}{.status.phase}{"\n"}{end}"#,
                &l
            ),
            "a\tRunning\nb\tPending\n"
        );
        assert_eq!(
            run(
                r#"{.items[?(@.status.phase=="Pending")].metadata.name}"#,
                &l
            ),
            "b"
        );
        assert_eq!(run("{.items[?(@.n>2)].metadata.name}", &l), "a");
        assert_eq!(run("{.items[?(@.metadata.labels)].metadata.name}", &l), "a");
    }

    #[test]
    fn bad_templates_are_errors() {
        for bad in [
            "{.a",
            "{range .items[*]}",
            "{end}",
            "{.items[}",
            "{.items[x]}",
            r#"{"\q"}"#,
            "{a}",
            "{.items[?(x==1)]}",
        ] {
            assert!(Template::parse(bad).is_err(), "{bad}");
        }
        assert!(Template::parse(&"x".repeat(MAX_TEMPLATE + 1)).is_err());
    }
}
