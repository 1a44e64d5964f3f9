//! Regular expressions: CEL's `matches` and Kubernetes' regex library,
//! `find` (the first match, or `""`) and `findAll` (every match, or the
//! first `n`), RE2 syntax. `matches` is here rather than cel-rust's (its
//! `regex` feature is off) so that a pattern is compiled once per thread,
//! not at every evaluation: Gateway API's path rule runs on every match of
//! every HTTPRoute.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use cel::extractors::{Arguments, This};
use cel::{Context, FunctionContext, ResolveResult, Value};

/// The largest compiled pattern accepted (the schema's own bound).
const SIZE_LIMIT: usize = 1 << 20;

/// The most compiled patterns a thread keeps (emptied when full).
const CACHED: usize = 256;

thread_local! {
    static COMPILED: RefCell<HashMap<String, ::regex::Regex>> = RefCell::new(HashMap::new());
}

/// Adds the library's functions to `ctx`.
pub(super) fn register(ctx: &mut Context<'_, '_>) {
    let _ = ctx.add_function("matches", matches);
    let _ = ctx.add_function("find", find);
    let _ = ctx.add_function("findAll", find_all);
}

/// Pattern `p` compiled, from this thread's cache when it was before.
fn compile(f: &FunctionContext<'_, '_>, p: &str) -> Result<::regex::Regex, cel::ExecutionError> {
    if let Some(re) = COMPILED.with(|c| c.borrow().get(p).cloned()) {
        return Ok(re);
    }
    let re = ::regex::RegexBuilder::new(p)
        .size_limit(SIZE_LIMIT)
        .build()
        .map_err(|e| f.error(format!("error parsing regexp: {e}")))?;
    COMPILED.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= CACHED {
            c.clear();
        }
        c.insert(p.to_owned(), re.clone());
    });
    Ok(re)
}

fn matches(
    f: &FunctionContext<'_, '_>,
    This(s): This<Arc<String>>,
    p: Arc<String>,
) -> ResolveResult {
    Ok(Value::Bool(compile(f, &p)?.is_match(&s)))
}

fn find(f: &FunctionContext<'_, '_>, This(s): This<Arc<String>>, p: Arc<String>) -> ResolveResult {
    let re = compile(f, &p)?;
    Ok(Value::String(Arc::new(
        re.find(&s)
            .map(|m| m.as_str().to_owned())
            .unwrap_or_default(),
    )))
}

fn find_all(
    f: &FunctionContext<'_, '_>,
    This(s): This<Arc<String>>,
    Arguments(args): Arguments,
) -> ResolveResult {
    let p = match args.first() {
        Some(Value::String(p)) => p,
        _ => return Err(f.error("no such overload: findAll wants a pattern")),
    };
    let limit = match args.get(1) {
        None => usize::MAX,
        Some(Value::Int(n)) if *n < 0 => usize::MAX,
        Some(Value::Int(n)) => usize::try_from(*n).unwrap_or(usize::MAX),
        Some(_) => return Err(f.error("no such overload: findAll wants an int limit")),
    };
    let re = compile(f, p)?;
    let found: Vec<Value> = re
        .find_iter(&s)
        .take(limit)
        .map(|m| Value::String(Arc::new(m.as_str().to_owned())))
        .collect();
    Ok(Value::List(Arc::new(found)))
}
