//! Kubernetes' CEL URL library: `url(s)`, `isURL(s)` and `getScheme`,
//! `getHost`, `getHostname`, `getPort`, `getEscapedPath`, `getQuery`. A
//! URL is an absolute URI or an absolute path (Go's `url.ParseRequestURI`).

use std::collections::HashMap;
use std::sync::Arc;

use cel::extractors::This;
use cel::objects::{Key, Map, Opaque};
use cel::{Context, ExecutionError, FunctionContext, ResolveResult, Value};

/// A parsed URL.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Url {
    scheme: String,
    host: String,
    path: String,
    query: String,
}

impl Opaque for Url {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.URL"
    }
}

fn parse(s: &str) -> Option<Url> {
    if s.is_empty() || s.chars().any(|c| c.is_control() || c == ' ') {
        return None;
    }
    let s = s.split('#').next().unwrap_or_default();
    let (scheme, rest) = match s.split_once(':') {
        Some((sch, rest))
            if !sch.is_empty()
                && sch.starts_with(|c: char| c.is_ascii_alphabetic())
                && sch
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
        {
            (sch.to_owned(), rest)
        }
        _ if s.starts_with('/') => (String::new(), s),
        _ => return None,
    };
    let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (host, path) = match before_query.strip_prefix("//") {
        Some(hp) => {
            let end = hp.find('/').unwrap_or(hp.len());
            let host = &hp[..end];
            let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
            (host.to_owned(), hp[end..].to_owned())
        }
        None => (String::new(), before_query.to_owned()),
    };
    Some(Url {
        scheme,
        host,
        path,
        query: query.to_owned(),
    })
}

/// Adds the library's functions to `ctx`.
pub(super) fn register(ctx: &mut Context<'_, '_>) {
    let _ = ctx.add_function("url", url);
    let _ = ctx.add_function("isURL", |This(s): This<Arc<String>>| parse(&s).is_some());
    let _ = ctx.add_function(
        "getScheme",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>| {
            Ok::<_, ExecutionError>(Value::String(Arc::new(as_url(f, &v)?.scheme)))
        },
    );
    let _ = ctx.add_function(
        "getHost",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>| {
            Ok::<_, ExecutionError>(Value::String(Arc::new(as_url(f, &v)?.host)))
        },
    );
    let _ = ctx.add_function(
        "getHostname",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>| {
            Ok::<_, ExecutionError>(Value::String(Arc::new(split_host(&as_url(f, &v)?.host).0)))
        },
    );
    let _ = ctx.add_function(
        "getPort",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>| {
            Ok::<_, ExecutionError>(Value::String(Arc::new(split_host(&as_url(f, &v)?.host).1)))
        },
    );
    let _ = ctx.add_function(
        "getEscapedPath",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>| {
            Ok::<_, ExecutionError>(Value::String(Arc::new(as_url(f, &v)?.path)))
        },
    );
    let _ = ctx.add_function("getQuery", get_query);
}

/// A host's name (IPv6 brackets dropped) and port.
fn split_host(h: &str) -> (String, String) {
    if let Some(r) = h.strip_prefix('[') {
        let (name, rest) = r.split_once(']').unwrap_or((r, ""));
        return (
            name.to_owned(),
            rest.strip_prefix(':').unwrap_or_default().to_owned(),
        );
    }
    match h.rsplit_once(':') {
        Some((n, p)) => (n.to_owned(), p.to_owned()),
        None => (h.to_owned(), String::new()),
    }
}

fn url(f: &FunctionContext<'_, '_>, This(s): This<Arc<String>>) -> ResolveResult {
    parse(&s)
        .map(|u| Value::Opaque(Arc::new(u)))
        .ok_or_else(|| f.error(format!("URL parse error during conversion from string: parse \"{s}\": invalid URI for request")))
}

fn as_url(f: &FunctionContext<'_, '_>, v: &Value) -> Result<Url, ExecutionError> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<Url>().cloned(),
        _ => None,
    }
    .ok_or_else(|| f.error("no such overload: wants a URL"))
}

fn get_query(f: &FunctionContext<'_, '_>, This(v): This<Value>) -> ResolveResult {
    let u = as_url(f, &v)?;
    let mut out: HashMap<Key, Vec<Value>> = HashMap::new();
    for pair in u.query.split(['&', ';']).filter(|p| !p.is_empty()) {
        let (k, val) = pair.split_once('=').unwrap_or((pair, ""));
        out.entry(Key::from(k))
            .or_default()
            .push(Value::String(Arc::new(val.to_owned())));
    }
    let map: HashMap<Key, Value> = out
        .into_iter()
        .map(|(k, v)| (k, Value::List(Arc::new(v))))
        .collect();
    Ok(Value::Map(Map { map: Arc::new(map) }))
}
