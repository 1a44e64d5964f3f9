//! Kubernetes' CEL lists library (`k8s.io/apiserver/pkg/cel/library`):
//! `isSorted`, `sum`, `min` and `max` on a list. (`indexOf` and
//! `lastIndexOf` on lists are not here: cel-rust declares those names for
//! strings only.)

use std::cmp::Ordering;
use std::sync::Arc;

use cel::extractors::This;
use cel::{Context, ExecutionError, FunctionContext, ResolveResult, Value};

/// Adds the library's functions to `ctx`.
pub(super) fn register(ctx: &mut Context<'_, '_>) {
    // The names are not cel-rust's: registering cannot fail.
    let _ = ctx.add_function("isSorted", is_sorted);
    let _ = ctx.add_function("sum", sum);
    let _ = ctx.add_function(
        "min",
        |f: &FunctionContext<'_, '_>, This(l): This<Value>| extreme(f, l, Ordering::Less),
    );
    let _ = ctx.add_function(
        "max",
        |f: &FunctionContext<'_, '_>, This(l): This<Value>| extreme(f, l, Ordering::Greater),
    );
}

fn items(f: &FunctionContext<'_, '_>, l: &Value) -> Result<Arc<Vec<Value>>, ExecutionError> {
    match l {
        Value::List(items) => Ok(Arc::clone(items)),
        other => Err(f.error(format!("no such overload: {}", other.type_of()))),
    }
}

fn compare(f: &FunctionContext<'_, '_>, a: &Value, b: &Value) -> Result<Ordering, ExecutionError> {
    a.partial_cmp(b).ok_or_else(|| {
        f.error(format!(
            "no such overload: {} < {}",
            a.type_of(),
            b.type_of()
        ))
    })
}

fn is_sorted(f: &FunctionContext<'_, '_>, This(l): This<Value>) -> ResolveResult {
    let items = items(f, &l)?;
    for w in items.windows(2) {
        if compare(f, &w[0], &w[1])? == Ordering::Greater {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

fn sum(f: &FunctionContext<'_, '_>, This(l): This<Value>) -> ResolveResult {
    let items = items(f, &l)?;
    let mut acc = match items.first() {
        None | Some(Value::Int(_)) => Value::Int(0),
        Some(Value::UInt(_)) => Value::UInt(0),
        Some(Value::Float(_)) => Value::Float(0.0),
        Some(other) => return Err(f.error(format!("no such overload: sum of {}", other.type_of()))),
    };
    for x in items.iter() {
        acc = match (&acc, x) {
            (Value::Int(a), Value::Int(b)) => Value::Int(
                a.checked_add(*b)
                    .ok_or_else(|| f.error("integer overflow"))?,
            ),
            (Value::UInt(a), Value::UInt(b)) => Value::UInt(
                a.checked_add(*b)
                    .ok_or_else(|| f.error("unsigned integer overflow"))?,
            ),
            (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            _ => return Err(f.error("no such overload: sum of mixed types")),
        };
    }
    Ok(acc)
}

fn extreme(f: &FunctionContext<'_, '_>, l: Value, want: Ordering) -> ResolveResult {
    let items = items(f, &l)?;
    let mut best = items
        .first()
        .cloned()
        .ok_or_else(|| f.error(format!("{}() called on empty list", f.name)))?;
    for x in items.iter().skip(1) {
        if compare(f, x, &best)? == want {
            best = x.clone();
        }
    }
    Ok(best)
}
