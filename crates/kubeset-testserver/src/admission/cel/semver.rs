//! Kubernetes' CEL semver library (`k8s.io/apiserver/pkg/cel/library`,
//! `semverlib.go`, version 1 as kube-apiserver's base environment has it
//! since 1.33): `semver(s)`, `semver(s, normalize)`, `isSemver(s)`,
//! `isSemver(s, normalize)`, and on a version `major()`, `minor()`,
//! `patch()`, `isLessThan(v)`, `isGreaterThan(v)`, `compareTo(v)`.
//!
//! Parsing is blang/semver v4's `Parse` (`MAJOR.MINOR.PATCH`, optional
//! `-prerelease` and `+build` identifiers, no leading zeros), with its
//! error texts; `normalize` first drops a leading `v`, leading zeros and
//! fills a missing minor or patch with `0` (the library's
//! `normalizeAndParse`). Ordering is semver's precedence (build metadata
//! ignored). The comparison functions share their names with the quantity
//! library's ([`super::quantity`]): they are registered here, for both.

use std::cmp::Ordering;
use std::sync::Arc;

use cel::extractors::{Arguments, This};
use cel::objects::Opaque;
use cel::{Context, ExecutionError, FunctionContext, ResolveResult, Value};

use super::format::go_quote;

/// A prerelease identifier: numeric ones order before alphanumeric ones.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Pre {
    Num(u64),
    Str(String),
}

/// A parsed version (`semver.Version`).
#[derive(Debug, Clone)]
struct Semver {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<Pre>,
    build: Vec<String>,
}

impl PartialEq for Semver {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Semver {}

impl PartialOrd for Semver {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Semver {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(o.major, o.minor, o.patch))
            .then_with(|| match (self.pre.is_empty(), o.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                // A release ranks above its prereleases.
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => self.pre.cmp(&o.pre),
            })
    }
}

impl Opaque for Semver {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Semver"
    }
}

const DIGITS: &str = "0123456789";

fn only(s: &str, set: &str) -> bool {
    s.chars().all(|c| set.contains(c))
}

fn alphanumeric(s: &str) -> bool {
    s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

fn leading_zero(s: &str) -> bool {
    s.len() > 1 && s.starts_with('0')
}

/// Go's `strconv.ParseUint(s, 10, 64)` on digits only.
fn number(s: &str) -> Result<u64, String> {
    if s.is_empty() {
        return Err(format!(
            "strconv.ParseUint: parsing {}: invalid syntax",
            go_quote(s)
        ));
    }
    s.parse().map_err(|_| {
        format!(
            "strconv.ParseUint: parsing {}: value out of range",
            go_quote(s)
        )
    })
}

/// One of `major`, `minor`, `patch`.
fn part(s: &str, what: &str) -> Result<u64, String> {
    if !only(s, DIGITS) {
        return Err(format!(
            "Invalid character(s) found in {what} number {}",
            go_quote(s)
        ));
    }
    if leading_zero(s) {
        let mut w = what.chars();
        let cap: String = w
            .next()
            .map(|c| c.to_ascii_uppercase())
            .into_iter()
            .chain(w)
            .collect();
        return Err(format!(
            "{cap} number must not contain leading zeroes {}",
            go_quote(s)
        ));
    }
    number(s)
}

/// blang/semver v4's `Parse`.
fn parse(s: &str) -> Result<Semver, String> {
    if s.is_empty() {
        return Err("Version string empty".into());
    }
    let parts: Vec<&str> = s.splitn(3, '.').collect();
    let [major, minor, rest] = parts[..] else {
        return Err("No Major.Minor.Patch elements found".into());
    };
    let major = part(major, "major")?;
    let minor = part(minor, "minor")?;
    let (rest, build) = match rest.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (rest, None),
    };
    let (patch, pre) = match rest.split_once('-') {
        Some((p, pre)) => (p, Some(pre)),
        None => (rest, None),
    };
    let patch = part(patch, "patch")?;
    let mut v = Semver {
        major,
        minor,
        patch,
        pre: Vec::new(),
        build: Vec::new(),
    };
    for p in pre.map(|p| p.split('.')).into_iter().flatten() {
        v.pre.push(if p.is_empty() {
            return Err("Prerelease is empty".into());
        } else if only(p, DIGITS) {
            if leading_zero(p) {
                return Err(format!(
                    "Numeric PreRelease version must not contain leading zeroes {}",
                    go_quote(p)
                ));
            }
            Pre::Num(number(p)?)
        } else if alphanumeric(p) {
            Pre::Str(p.to_owned())
        } else {
            return Err(format!(
                "Invalid character(s) found in prerelease {}",
                go_quote(p)
            ));
        });
    }
    for b in build.map(|b| b.split('.')).into_iter().flatten() {
        if b.is_empty() {
            return Err("Build meta data is empty".into());
        }
        if !alphanumeric(b) {
            return Err(format!(
                "Invalid character(s) found in build meta data {}",
                go_quote(b)
            ));
        }
        v.build.push(b.to_owned());
    }
    Ok(v)
}

/// The library's `normalizeAndParse`.
fn normalize_and_parse(s: &str) -> Result<Semver, String> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s
        .splitn(3, '.')
        .map(|p| {
            if p.len() <= 1 {
                return p.to_owned();
            }
            let t = p.trim_start_matches('0');
            if t.starts_with(|c: char| c.is_ascii_digit()) {
                t.to_owned()
            } else {
                format!("0{t}")
            }
        })
        .collect();
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".into());
        }
        parts.resize(3, "0".to_owned());
    }
    parse(&parts.join("."))
}

fn parse_with(s: &str, normalize: bool) -> Result<Semver, String> {
    if normalize {
        normalize_and_parse(s)
    } else {
        parse(s)
    }
}

/// `s` and the optional `normalize` of a call.
fn string_and_flag(
    f: &FunctionContext<'_, '_>,
    args: &[Value],
) -> Result<(Arc<String>, bool), ExecutionError> {
    match args {
        [Value::String(s)] => Ok((Arc::clone(s), false)),
        [Value::String(s), Value::Bool(n)] => Ok((Arc::clone(s), *n)),
        _ => Err(f.error(format!("no such overload: {}", f.name))),
    }
}

/// Adds the library's functions to `ctx`.
pub(super) fn register(ctx: &mut Context<'_, '_>) {
    let _ = ctx.add_function(
        "semver",
        |f: &FunctionContext<'_, '_>, Arguments(args): Arguments| -> ResolveResult {
            let (s, normalize) = string_and_flag(f, &args)?;
            parse_with(&s, normalize)
                .map(|v| Value::Opaque(Arc::new(v)))
                .map_err(|e| f.error(e))
        },
    );
    let _ = ctx.add_function(
        "isSemver",
        |f: &FunctionContext<'_, '_>, Arguments(args): Arguments| -> ResolveResult {
            let (s, normalize) = string_and_flag(f, &args)?;
            Ok(Value::Bool(parse_with(&s, normalize).is_ok()))
        },
    );
    let field = |get: fn(&Semver) -> u64| {
        move |f: &FunctionContext<'_, '_>, This(v): This<Value>| -> ResolveResult {
            // Go's `types.Int(v.Major)`: a uint64 as an int64, wrapping.
            Ok(Value::Int(get(&as_semver(f, &v)?) as i64))
        }
    };
    let _ = ctx.add_function("major", field(|v| v.major));
    let _ = ctx.add_function("minor", field(|v| v.minor));
    let _ = ctx.add_function("patch", field(|v| v.patch));
    let _ = ctx.add_function(
        "isGreaterThan",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>, o: Value| -> ResolveResult {
            Ok(Value::Bool(compare(f, &v, &o)? == Ordering::Greater))
        },
    );
    let _ = ctx.add_function(
        "isLessThan",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>, o: Value| -> ResolveResult {
            Ok(Value::Bool(compare(f, &v, &o)? == Ordering::Less))
        },
    );
    let _ = ctx.add_function(
        "compareTo",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>, o: Value| -> ResolveResult {
            Ok(Value::Int(compare(f, &v, &o)? as i64))
        },
    );
}

fn semver_of(v: &Value) -> Option<&Semver> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<Semver>(),
        _ => None,
    }
}

fn as_semver(f: &FunctionContext<'_, '_>, v: &Value) -> Result<Semver, ExecutionError> {
    semver_of(v)
        .cloned()
        .ok_or_else(|| f.error(format!("no such overload: {}.{}()", v.type_of(), f.name)))
}

/// Two versions, else two quantities, compared.
fn compare(f: &FunctionContext<'_, '_>, a: &Value, b: &Value) -> Result<Ordering, ExecutionError> {
    match (semver_of(a), semver_of(b)) {
        (Some(x), Some(y)) => Ok(x.cmp(y)),
        (Some(_), None) => Err(f.error(format!("no such overload: {}", f.name))),
        _ => super::quantity::compare(f, a, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Semver {
        parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn parses_as_blang_semver() {
        let x = v("1.2.3-alpha.1+build.5");
        assert_eq!((x.major, x.minor, x.patch), (1, 2, 3));
        assert_eq!(x.pre, [Pre::Str("alpha".into()), Pre::Num(1)]);
        let errors = [
            ("", "Version string empty"),
            ("1.2", "No Major.Minor.Patch elements found"),
            (
                "v1.2.3",
                "Invalid character(s) found in major number \"v1\"",
            ),
            (
                "01.2.3",
                "Major number must not contain leading zeroes \"01\"",
            ),
            (
                "1.02.3",
                "Minor number must not contain leading zeroes \"02\"",
            ),
            ("1.2.x", "Invalid character(s) found in patch number \"x\""),
            ("1..3", "strconv.ParseUint: parsing \"\": invalid syntax"),
            ("1.2.3-", "Prerelease is empty"),
            (
                "1.2.3-01",
                "Numeric PreRelease version must not contain leading zeroes \"01\"",
            ),
            (
                "1.2.3-a_b",
                "Invalid character(s) found in prerelease \"a_b\"",
            ),
            ("1.2.3+", "Build meta data is empty"),
            (
                "1.2.3+a/b",
                "Invalid character(s) found in build meta data \"a/b\"",
            ),
            (
                "99999999999999999999.0.0",
                "strconv.ParseUint: parsing \"99999999999999999999\": value out of range",
            ),
        ];
        for (s, want) in errors {
            assert_eq!(parse(s).err().as_deref(), Some(want), "{s}");
        }
    }

    #[test]
    fn normalizes() {
        let x = normalize_and_parse("v01.1").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((x.major, x.minor, x.patch), (1, 1, 0));
        assert!(normalize_and_parse("1.0-rc").is_err());
        assert!(normalize_and_parse("1.00.000").is_ok());
        assert!(parse("1.0").is_err());
    }

    #[test]
    fn precedence() {
        let order = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
            "1.0.1",
            "1.1.0",
            "2.0.0",
        ];
        for w in order.windows(2) {
            assert_eq!(v(w[0]).cmp(&v(w[1])), Ordering::Less, "{w:?}");
        }
        assert_eq!(v("1.0.0+a"), v("1.0.0+b"));
    }
}
