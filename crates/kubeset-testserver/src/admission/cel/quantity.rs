//! Kubernetes' CEL quantity library: `quantity(s)`, `isQuantity(s)` and
//! `sign`, `isInteger`, `asInteger`, `asApproximateFloat`, `add`, `sub`,
//! `isGreaterThan`, `isLessThan`, `compareTo`. A quantity is held exactly,
//! in nano-units (`resource.Quantity`'s smallest scale; finer fractions
//! round up, as it rounds them).

use std::sync::Arc;

use cel::extractors::This;
use cel::objects::Opaque;
use cel::{Context, ExecutionError, FunctionContext, ResolveResult, Value};

/// A quantity in nano-units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Quantity(i128);

impl Opaque for Quantity {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Quantity"
    }
}

const NANO: i128 = 1_000_000_000;

/// Parses `s` as `resource.ParseQuantity` does.
fn parse(s: &str) -> Option<Quantity> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let num_end = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let (num, suffix) = body.split_at(num_end);
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if (int.is_empty() && frac.is_empty()) || frac.contains('.') || int.len() + frac.len() > 30 {
        return None;
    }
    // Mantissa over 10^frac.len(), times the suffix's factor.
    let mantissa: i128 = format!("{int}{frac}").parse().ok()?;
    let (mul, exp10): (i128, i32) = match suffix {
        "" => (1, 0),
        "Ki" => (1 << 10, 0),
        "Mi" => (1 << 20, 0),
        "Gi" => (1 << 30, 0),
        "Ti" => (1 << 40, 0),
        "Pi" => (1 << 50, 0),
        "Ei" => (1 << 60, 0),
        "n" => (1, -9),
        "u" => (1, -6),
        "m" => (1, -3),
        "k" => (1, 3),
        "M" => (1, 6),
        "G" => (1, 9),
        "T" => (1, 12),
        "P" => (1, 15),
        "E" => (1, 18),
        e if e.starts_with(['e', 'E']) => {
            (1, e[1..].parse::<i32>().ok().filter(|x| x.abs() <= 18)?)
        }
        _ => return None,
    };
    let scale = exp10 + 9 - i32::try_from(frac.len()).ok()?;
    let base = mantissa.checked_mul(mul)?;
    let v = if scale >= 0 {
        base.checked_mul(10i128.checked_pow(u32::try_from(scale).ok()?)?)?
    } else {
        let d = 10i128.checked_pow(u32::try_from(-scale).ok()?)?;
        (base + d - 1) / d
    };
    Some(Quantity(if neg { -v } else { v }))
}

/// Adds the library's functions to `ctx`.
pub(super) fn register(ctx: &mut Context<'_, '_>) {
    let _ = ctx.add_function("quantity", quantity);
    let _ = ctx.add_function("isQuantity", |This(s): This<Arc<String>>| {
        parse(&s).is_some()
    });
    let _ = ctx.add_function(
        "sign",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>| {
            Ok::<_, ExecutionError>(Value::Int(as_q(f, &v)?.0.signum() as i64))
        },
    );
    let _ = ctx.add_function(
        "isInteger",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>| {
            let q = as_q(f, &v)?.0;
            Ok::<_, ExecutionError>(q % NANO == 0 && i64::try_from(q / NANO).is_ok())
        },
    );
    let _ = ctx.add_function(
        "asInteger",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>| {
            let q = as_q(f, &v)?.0;
            if q % NANO != 0 {
                return Err(f.error("cannot convert value to integer"));
            }
            i64::try_from(q / NANO)
                .map(Value::Int)
                .map_err(|_| f.error("cannot convert value to integer"))
        },
    );
    let _ = ctx.add_function(
        "asApproximateFloat",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>| {
            Ok::<_, ExecutionError>(Value::Float(as_q(f, &v)?.0 as f64 / NANO as f64))
        },
    );
    let _ = ctx.add_function(
        "add",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>, o: Value| arith(f, &v, &o, 1),
    );
    let _ = ctx.add_function(
        "sub",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>, o: Value| arith(f, &v, &o, -1),
    );
    // `isGreaterThan`, `isLessThan` and `compareTo` are the semver
    // library's names too: registered there ([`super::semver`]), for both.
}

fn quantity(f: &FunctionContext<'_, '_>, This(s): This<Arc<String>>) -> ResolveResult {
    parse(&s)
        .map(|q| Value::Opaque(Arc::new(q)))
        .ok_or_else(|| f.error("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"))
}

fn as_q(f: &FunctionContext<'_, '_>, v: &Value) -> Result<Quantity, ExecutionError> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<Quantity>().copied(),
        Value::Int(i) => i128::from(*i).checked_mul(NANO).map(Quantity),
        _ => None,
    }
    .ok_or_else(|| f.error("no such overload: wants a quantity"))
}

/// Two quantities (or integers) compared, for `isGreaterThan`,
/// `isLessThan` and `compareTo`.
pub(super) fn compare(
    f: &FunctionContext<'_, '_>,
    a: &Value,
    b: &Value,
) -> Result<std::cmp::Ordering, ExecutionError> {
    Ok(as_q(f, a)?.0.cmp(&as_q(f, b)?.0))
}

fn arith(f: &FunctionContext<'_, '_>, a: &Value, b: &Value, sign: i128) -> ResolveResult {
    let (a, b) = (as_q(f, a)?.0, as_q(f, b)?.0);
    a.checked_add(sign * b)
        .map(|q| Value::Opaque(Arc::new(Quantity(q))))
        .ok_or_else(|| f.error("quantity overflow"))
}
