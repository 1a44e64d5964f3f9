//! Numbers printed as kubectl prints them.
//!
//! kubectl holds an object's numbers as Go does after
//! `k8s.io/apimachinery`'s JSON decoding: an `int64` when the literal is an
//! integer that fits, a `float64` otherwise. kube-apiserver stores custom
//! resources the same way, so `18446744073709551617` comes back as the
//! float64 `18446744073709552000` (measured against kube-apiserver 1.35).
//! serde_json reads integers up to `u64::MAX` exactly and anything larger
//! as `f64`; [`GoNumber::of`] maps that onto Go's model (an integer above
//! `i64::MAX` is a float64, as in kubectl), and the functions below print
//! it in each of kubectl's notations:
//!
//! | output | float64 formatting | `1e21` | `0.000001` | `1.8446744073709552e19` |
//! |---|---|---|---|---|
//! | `-o json` (encoding/json) | [`json_float`] | `1e+21` | `0.000001` | `18446744073709552000` |
//! | `-o yaml` (sigs.k8s.io/yaml over go-yaml) | [`yaml_float`] | `1e+21` | `1e-06` | `1.8446744073709552e+19` |
//! | jsonpath, table cells (`fmt` `%v`) | [`g_float`] | `1e+21` | `1e-06` | `1.8446744073709552e+19` |
//!
//! The numbers stay `f64` in [`serde_json::Value`] (no
//! `arbitrary_precision`: cargo's feature unification would turn it on for
//! every crate of a build that uses serde_json); only their text changes.

use std::fmt::Write as _;
use std::io;

use serde::Serialize as _;
use serde_json::{Number, Value, ser::Formatter};

/// A JSON number as kubectl holds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GoNumber {
    /// An integer that fits `int64`.
    Int(i64),
    /// Anything else (a fraction, an exponent, an integer beyond `int64`).
    Float(f64),
}

impl GoNumber {
    /// The Go value of a serde_json number.
    pub fn of(n: &Number) -> Self {
        match n.as_i64() {
            Some(i) => Self::Int(i),
            None => Self::Float(n.as_f64().unwrap_or(f64::NAN)),
        }
    }

    /// As `fmt.Sprint` prints it (jsonpath results, table cells).
    pub fn display(self) -> String {
        match self {
            Self::Int(i) => i.to_string(),
            Self::Float(f) => g_float(f),
        }
    }
}

/// The shortest decimal digits that read back as `x` (finite, not zero)
/// and the exponent of the first: `x = 0.d1d2… × 10^(exp+1)`, so
/// `1.5e300` is (`"15"`, 300).
fn shortest(x: f64) -> (String, i32) {
    // Rust's `{:e}` and Go's strconv both print the shortest digits that
    // round-trip, choosing the closest when several are as short.
    let text = format!("{:e}", x.abs());
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits, exp.parse().unwrap_or(0))
}

/// Go's `strconv.FormatFloat(x, 'e', -1, 64)`: `1.5e+300`, `1e-07`.
fn e_format(sign: &str, digits: &str, exp: i32) -> String {
    let (first, rest) = digits.split_at(1);
    let point = if rest.is_empty() { "" } else { "." };
    let exp_sign = if exp < 0 { '-' } else { '+' };
    format!(
        "{sign}{first}{point}{rest}e{exp_sign}{:02}",
        exp.unsigned_abs()
    )
}

/// Go's `strconv.FormatFloat(x, 'f', -1, 64)`: plain digits.
fn f_format(sign: &str, digits: &str, exp: i32) -> String {
    let len = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    let mut out = String::from(sign);
    if exp < 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', exp.unsigned_abs() as usize - 1));
        out.push_str(digits);
    } else if exp + 1 >= len {
        out.push_str(digits);
        out.extend(std::iter::repeat_n('0', (exp + 1 - len) as usize));
    } else {
        let (int, frac) = digits.split_at((exp + 1) as usize);
        let _ = write!(out, "{int}.{frac}");
    }
    out
}

/// Non-finite floats cannot come from JSON; Go would refuse to encode them.
/// Printed as Go's strconv does, so that nothing panics.
fn special(x: f64) -> Option<String> {
    if x.is_nan() {
        Some("NaN".to_owned())
    } else if x.is_infinite() {
        Some(if x > 0.0 { "+Inf" } else { "-Inf" }.to_owned())
    } else if x == 0.0 {
        Some(if x.is_sign_negative() { "-0" } else { "0" }.to_owned())
    } else {
        None
    }
}

fn sign(x: f64) -> &'static str {
    if x.is_sign_negative() { "-" } else { "" }
}

/// A float64 as Go's `encoding/json` writes it (`kubectl -o json`): plain
/// digits for `1e-6 <= |x| < 1e21`, else the exponent form with a
/// one-digit negative exponent kept short (`1e-7`, `1e+21`).
pub fn json_float(x: f64) -> String {
    if let Some(s) = special(x) {
        return s;
    }
    let (digits, exp) = shortest(x);
    let abs = x.abs();
    if (1e-6..1e21).contains(&abs) {
        return f_format(sign(x), &digits, exp);
    }
    let mut s = e_format(sign(x), &digits, exp);
    // encoding/json: "clean up e-09 to e-9".
    let n = s.len();
    if s.as_bytes()[n - 4..n - 1] == *b"e-0" {
        s.remove(n - 2);
    }
    s
}

/// A float64 as Go's `fmt` `%v` (`strconv` `'g'`, shortest) prints it
/// (kubectl's jsonpath results and table cells): the exponent form when
/// the exponent is below -4 or at least 6 (`1e+06`, `1.2345675e+06`),
/// plain digits otherwise.
pub fn g_float(x: f64) -> String {
    if let Some(s) = special(x) {
        return s;
    }
    let (digits, exp) = shortest(x);
    // strconv: "if precision was the shortest possible, use precision 6
    // for this decision".
    if !(-4..6).contains(&exp) {
        e_format(sign(x), &digits, exp)
    } else {
        f_format(sign(x), &digits, exp)
    }
}

/// A float64 as `kubectl -o yaml` prints it: sigs.k8s.io/yaml reads the
/// JSON text of the object ([`json_float`]) with go-yaml, which takes a
/// literal that fits `int64` or `uint64` as an integer (printed as it is)
/// and anything else as a float64, printed with `'g'` and the shortest
/// digits (`1e-06`, `1.8446744073709552e+19`).
pub fn yaml_float(x: f64) -> String {
    let json = json_float(x);
    // go-yaml reads an integer literal as an integer: `-0` prints as `0`.
    if let Ok(i) = json.parse::<i64>() {
        return i.to_string();
    }
    if let Ok(u) = json.parse::<u64>() {
        return u.to_string();
    }
    go_yaml_g(x)
}

/// go-yaml's float64 text: [`g_float`] with `.inf`, `-.inf` and `.nan`
/// for the special values.
fn go_yaml_g(x: f64) -> String {
    match g_float(x).as_str() {
        "+Inf" => ".inf".to_owned(),
        "-Inf" => "-.inf".to_owned(),
        "NaN" => ".nan".to_owned(),
        other => other.to_owned(),
    }
}

/// A serde_json [`Formatter`] that writes numbers as Go's `encoding/json`:
/// floats by [`json_float`], integers above `i64::MAX` as the float64
/// kubectl holds them. Structure and strings are `F`'s.
pub struct GoJson<F>(pub F);

macro_rules! forward {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            fn $name<W: ?Sized + io::Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> io::Result<()> {
                self.0.$name(w $(, $arg)*)
            }
        )*
    };
}

impl<F: Formatter> Formatter for GoJson<F> {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        w.write_all(json_float(value).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(w, f64::from(value))
    }

    fn write_u64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: u64) -> io::Result<()> {
        match i64::try_from(value) {
            Ok(_) => self.0.write_u64(w, value),
            // Exact: an integer above i64::MAX is held as a float64.
            #[allow(clippy::cast_precision_loss)]
            Err(_) => self.write_f64(w, value as f64),
        }
    }

    /// Go's `encoding/json` escapes `<`, `>`, `&`, U+2028 and U+2029 in
    /// strings (HTML-safe), and kubectl prints what it wrote.
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut rest = fragment;
        while let Some(at) = rest.find(['<', '>', '&', '\u{2028}', '\u{2029}']) {
            w.write_all(&rest.as_bytes()[..at])?;
            let c = rest[at..].chars().next().unwrap_or('&');
            write!(w, "\\u{:04x}", u32::from(c))?;
            rest = &rest[at + c.len_utf8()..];
        }
        w.write_all(rest.as_bytes())
    }

    forward! {
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        begin_object();
        end_object();
        begin_object_key(first: bool);
        end_object_key();
        begin_object_value();
        end_object_value();
    }
}

fn to_json<F: Formatter>(value: &Value, formatter: F) -> Result<String, serde_json::Error> {
    let mut out = Vec::with_capacity(128);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, GoJson(formatter));
    value.serialize(&mut ser)?;
    // The serializer writes only what `str`s and the formatter give it.
    Ok(String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// `value` as kubectl's `-o json` prints it: indented by four spaces
/// (`json.MarshalIndent(obj, "", "    ")`), Go's numbers and escapes.
pub fn to_json_pretty(value: &Value) -> Result<String, serde_json::Error> {
    to_json(
        value,
        serde_json::ser::PrettyFormatter::with_indent(b"    "),
    )
}

/// `value` as compact JSON with Go's numbers: jsonpath's objects and arrays.
pub fn to_json_compact(value: &Value) -> Result<String, serde_json::Error> {
    to_json(value, serde_json::ser::CompactFormatter)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pairs measured with kubectl 1.35 against kube-apiserver 1.35.4: the
    /// JSON the server sent for a custom resource, and what `kubectl get
    /// -o json`, `-o yaml` and `-o jsonpath` printed for it.
    const KUBECTL: &[(&str, &str, &str, &str)] = &[
        // server JSON, -o json, -o yaml, -o jsonpath
        (
            "18446744073709552000",
            "18446744073709552000",
            "1.8446744073709552e+19",
            "1.8446744073709552e+19",
        ),
        (
            "9223372036854776000",
            "9223372036854776000",
            "9223372036854776000",
            "9.223372036854776e+18",
        ),
        (
            "9223372036854775807",
            "9223372036854775807",
            "9223372036854775807",
            "9223372036854775807",
        ),
        ("100000000", "100000000", "100000000", "100000000"),
        ("123456.789", "123456.789", "123456.789", "123456.789"),
        ("0.5", "0.5", "0.5", "0.5"),
        ("1e+21", "1e+21", "1e+21", "1e+21"),
        ("1.5e+300", "1.5e+300", "1.5e+300", "1.5e+300"),
        ("-2.5e-9", "-2.5e-9", "-2.5e-09", "-2.5e-09"),
        ("0.000001", "0.000001", "1e-06", "1e-06"),
        ("1e-7", "1e-7", "1e-07", "1e-07"),
        ("1234567.5", "1234567.5", "1.2345675e+06", "1.2345675e+06"),
        (
            "123456789012345680000",
            "123456789012345680000",
            "1.2345678901234568e+20",
            "1.2345678901234568e+20",
        ),
        (
            "100000000000000000000",
            "100000000000000000000",
            "1e+20",
            "1e+20",
        ),
        ("-1e+21", "-1e+21", "-1e+21", "-1e+21"),
        ("0.1", "0.1", "0.1", "0.1"),
        ("5e-324", "5e-324", "5e-324", "5e-324"),
        (
            "1.7976931348623157e+308",
            "1.7976931348623157e+308",
            "1.7976931348623157e+308",
            "1.7976931348623157e+308",
        ),
        ("0", "0", "0", "0"),
    ];

    #[test]
    fn numbers_print_as_kubectl_prints_them() {
        for &(server, json, yaml, jsonpath) in KUBECTL {
            let v: Value = serde_json::from_str(server).unwrap();
            assert_eq!(to_json_compact(&v).unwrap(), json, "json of {server}");
            // (Not `n`: YAML 1.1 reads that key as false, go-yaml quotes it.)
            let doc = serde_json::json!({ "num": v });
            assert_eq!(
                crate::yaml::to_yaml(&doc),
                format!("num: {yaml}\n"),
                "yaml of {server}"
            );
            let Value::Number(n) = &v else {
                panic!("{server}")
            };
            assert_eq!(GoNumber::of(n).display(), jsonpath, "jsonpath of {server}");
        }
    }

    #[test]
    fn go_formats_of_values_the_server_does_not_send() {
        // The same rules, for floats a user's file may hold.
        assert_eq!(json_float(-0.0), "-0");
        assert_eq!(yaml_float(-0.0), "0");
        assert_eq!(json_float(1e20), "100000000000000000000");
        assert_eq!(json_float(3.0), "3");
        assert_eq!(g_float(1e20), "1e+20");
        assert_eq!(g_float(1e6), "1e+06");
        assert_eq!(g_float(999999.0), "999999");
        assert_eq!(g_float(3.0), "3");
        assert_eq!(g_float(0.0001), "0.0001");
        assert_eq!(g_float(0.00001), "1e-05");
        assert_eq!(json_float(f64::NAN), "NaN");
        assert_eq!(yaml_float(f64::INFINITY), ".inf");
        assert_eq!(
            GoNumber::of(&Number::from(u64::MAX)),
            GoNumber::Float(1.8446744073709552e19)
        );
    }

    #[test]
    fn pretty_json_is_go_s_marshal_indent() {
        let doc = serde_json::json!({
            "a": [1, 2.5, {"b": 18446744073709551615u64}],
            "c": {},
            "d": [],
            "h": "<a href=\"x\">&</a>\u{2028}\n",
        });
        assert_eq!(
            to_json_pretty(&doc).unwrap(),
            "{\n    \"a\": [\n        1,\n        2.5,\n        {\n            \"b\": 18446744073709552000\n        }\n    ],\n    \"c\": {},\n    \"d\": [],\n    \"h\": \"\\u003ca href=\\\"x\\\"\\u003e\\u0026\\u003c/a\\u003e\\u2028\\n\"\n}"
        );
    }
}
