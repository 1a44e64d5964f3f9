//! cel-go's sets extension (`ext.Sets()`, in kube-apiserver's base
//! environment since 1.29): `sets.contains(list, sublist)` (every element
//! of `sublist` is in `list`; true for an empty `sublist`),
//! `sets.equivalent(a, b)` (each contains the other, duplicates aside) and
//! `sets.intersects(a, b)` (an element in common). Elements are compared
//! with CEL's equality, numbers across types (`1 == 1.0 == 1u`).
//!
//! Scalar elements (strings, booleans, numbers, bytes, null) are looked up
//! in a hash set, so the work is linear in the lists; only other elements
//! (lists, maps, ...) are compared pairwise, which the static cost estimate
//! ([`super::check`]) bounds by the lists' declared sizes.

use std::collections::HashSet;
use std::sync::Arc;

use cel::{Context, ExecutionError, FunctionContext, ResolveResult, Value};

/// Adds the library's functions to `ctx`.
pub(super) fn register(ctx: &mut Context<'_, '_>) {
    let _ = ctx.add_function(
        "sets.contains",
        |f: &FunctionContext<'_, '_>, a: Value, b: Value| -> ResolveResult {
            let (a, b) = (list(f, &a)?, list(f, &b)?);
            Ok(Value::Bool(contains(&a, &b)))
        },
    );
    let _ = ctx.add_function(
        "sets.equivalent",
        |f: &FunctionContext<'_, '_>, a: Value, b: Value| -> ResolveResult {
            let (a, b) = (list(f, &a)?, list(f, &b)?);
            Ok(Value::Bool(contains(&a, &b) && contains(&b, &a)))
        },
    );
    let _ = ctx.add_function(
        "sets.intersects",
        |f: &FunctionContext<'_, '_>, a: Value, b: Value| -> ResolveResult {
            let (a, b) = (list(f, &a)?, list(f, &b)?);
            let set = Set::of(&a);
            Ok(Value::Bool(b.iter().any(|x| set.has(x))))
        },
    );
}

fn list(f: &FunctionContext<'_, '_>, v: &Value) -> Result<Arc<Vec<Value>>, ExecutionError> {
    match v {
        Value::List(l) => Ok(Arc::clone(l)),
        other => Err(f.error(format!(
            "no such overload: {}.{}(list)",
            f.name,
            other.type_of()
        ))),
    }
}

fn contains(list: &[Value], sub: &[Value]) -> bool {
    let set = Set::of(list);
    sub.iter().all(|x| set.has(x))
}

/// A scalar as a hash key: numbers by value, whatever their type.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Key<'a> {
    /// An integral number.
    Int(i128),
    /// Any other double, by its bits (NaN equals nothing: never a key).
    Float(u64),
    Str(&'a str),
    Bytes(&'a [u8]),
    Bool(bool),
    Null,
}

fn key(v: &Value) -> Option<Key<'_>> {
    Some(match v {
        Value::Int(i) => Key::Int(i128::from(*i)),
        Value::UInt(u) => Key::Int(i128::from(*u)),
        Value::Float(x) if x.is_nan() => return None,
        Value::Float(x) if x.fract() == 0.0 && x.abs() < 1e30 => Key::Int(*x as i128),
        // `-0.0 == 0.0`: both integral, above.
        Value::Float(x) => Key::Float(x.to_bits()),
        Value::String(s) => Key::Str(s),
        Value::Bytes(b) => Key::Bytes(b),
        Value::Bool(b) => Key::Bool(*b),
        Value::Null => Key::Null,
        _ => return None,
    })
}

/// A list's elements, for membership.
struct Set<'a> {
    scalars: HashSet<Key<'a>>,
    others: Vec<&'a Value>,
}

impl<'a> Set<'a> {
    fn of(list: &'a [Value]) -> Self {
        let mut s = Set {
            scalars: HashSet::with_capacity(list.len()),
            others: Vec::new(),
        };
        for x in list {
            match key(x) {
                Some(k) => {
                    s.scalars.insert(k);
                }
                None => s.others.push(x),
            }
        }
        s
    }

    fn has(&self, x: &Value) -> bool {
        match key(x) {
            Some(k) => self.scalars.contains(&k),
            None if matches!(x, Value::Float(f) if f.is_nan()) => false,
            None => self.others.contains(&x),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(xs: &[Value]) -> Vec<Value> {
        xs.to_vec()
    }

    fn s(x: &str) -> Value {
        Value::String(Arc::new(x.to_owned()))
    }

    #[test]
    fn membership_with_numbers_across_types() {
        let a = l(&[Value::Int(1), Value::Float(2.0), Value::UInt(3)]);
        let b = l(&[Value::Float(1.0), Value::Int(2), Value::Int(3)]);
        assert!(contains(&a, &b) && contains(&b, &a));
        assert!(!contains(&a, &[Value::Float(1.5)]));
        assert!(contains(&a, &[]));
        assert!(!contains(&[], &a));
        assert!(!contains(
            &[Value::Float(f64::NAN)],
            &[Value::Float(f64::NAN)]
        ));
        let strs = l(&[s("a"), s("b"), s("b")]);
        assert!(contains(&strs, &[s("b"), s("a")]));
        assert!(!Set::of(&strs).has(&s("c")));
        let nested = l(&[Value::List(Arc::new(vec![s("x")]))]);
        assert!(contains(&nested, &nested));
    }

    #[test]
    fn large_lists_are_linear() {
        let a: Vec<Value> = (0..200_000).map(Value::Int).collect();
        let b: Vec<Value> = (0..200_000).rev().map(|i| Value::Float(i as f64)).collect();
        assert!(contains(&a, &b) && contains(&b, &a));
    }
}
