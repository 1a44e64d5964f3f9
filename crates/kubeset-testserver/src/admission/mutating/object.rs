//! The values a mutation's expression builds: `Object{...}` apply
//! configurations and `JSONPatch{...}` operations.
//!
//! kube-apiserver types these with CEL object types whose names spell the
//! field path (`Object.spec.template{...}`). cel-rust constructs only
//! structs it knows by name, so before evaluation every struct literal is
//! rewritten into a map literal that carries its type name under
//! [`TYPE_KEY`]; [`to_json`] checks the names against the field paths (as
//! the real server's `CheckTypeNamesMatchFieldPathNames`) and drops them.
//! `jsonpatch.escapeKey(k)` is rewritten into the two `replace` calls it
//! stands for.

use cel::common::ast::{
    CallExpr, EntryExpr, Expr, IdedEntryExpr, IdedExpr, LiteralValue, MapEntryExpr, MapExpr,
};
use cel::common::types::CelString;
use serde_json::Value;

use super::super::cel as rules;
use super::super::policy;

/// The map key a rewritten struct literal keeps its type name under: not
/// a key an object may have (a NUL is in no field name).
pub(super) const TYPE_KEY: &str = "\u{0}type";

/// The deepest value [`to_json`] converts (an apply configuration deeper
/// than an object may be is refused, not walked).
const MAX_DEPTH: usize = 64;

/// The deepest expression node [`rewrite`] walks (the parser bounds
/// nesting; a longer chain is left as written, and fails to evaluate).
const MAX_AST_DEPTH: usize = 512;

/// Evaluates a mutation's `source` with `vars`: its value, or the error
/// text the real server words.
pub(super) fn eval(source: &str, vars: &[(&str, cel::Value)]) -> Result<cel::Value, String> {
    rules::bounded(source)?;
    let program = policy::compile(source).map_err(|e| format!("compilation failed: {e}"))?;
    let mut expr = program.expression().clone();
    rewrite(&mut expr, 0);
    rules::BASE.with(|base| {
        let mut ctx = base.new_inner_scope();
        for (k, v) in vars {
            ctx.add_variable_from_value(*k, v.clone());
        }
        cel::Value::resolve(&expr, &ctx).map_err(|e| rules::go_error(&e))
    })
}

fn string_literal(id: u64, s: &str) -> IdedExpr {
    IdedExpr {
        id,
        expr: Expr::Literal(LiteralValue::String(CelString::from(s.to_owned()))),
    }
}

/// Rewrites struct literals into typed maps and `jsonpatch.escapeKey`
/// into `replace` calls, everywhere in `e` (the parser bounded its depth).
fn rewrite(e: &mut IdedExpr, depth: usize) {
    if depth > MAX_AST_DEPTH {
        return;
    }
    let id = e.id;
    match &mut e.expr {
        Expr::Struct(s) => {
            let mut entries = vec![IdedEntryExpr {
                id,
                expr: EntryExpr::MapEntry(MapEntryExpr {
                    key: string_literal(id, TYPE_KEY),
                    value: string_literal(id, &s.type_name),
                    optional: false,
                }),
            }];
            for entry in std::mem::take(&mut s.entries) {
                let expr = match entry.expr {
                    EntryExpr::StructField(mut f) => {
                        rewrite(&mut f.value, depth + 1);
                        EntryExpr::MapEntry(MapEntryExpr {
                            key: string_literal(entry.id, &f.field),
                            value: f.value,
                            optional: f.optional,
                        })
                    }
                    other => other,
                };
                entries.push(IdedEntryExpr { id: entry.id, expr });
            }
            e.expr = Expr::Map(MapExpr { entries });
        }
        Expr::Call(c) if is_escape_key(c) => {
            let mut arg = c.args.pop().unwrap_or_default();
            rewrite(&mut arg, depth + 1);
            let replace = |target: IdedExpr, from: &str, to: &str| IdedExpr {
                id,
                expr: Expr::Call(CallExpr {
                    func_name: "replace".into(),
                    target: Some(Box::new(target)),
                    args: vec![string_literal(id, from), string_literal(id, to)],
                }),
            };
            *e = replace(replace(arg, "~", "~0"), "/", "~1");
        }
        Expr::Call(c) => {
            if let Some(t) = &mut c.target {
                rewrite(t, depth + 1);
            }
            c.args.iter_mut().for_each(|a| rewrite(a, depth + 1));
        }
        Expr::Comprehension(c) => {
            for x in [
                &mut c.iter_range,
                &mut c.accu_init,
                &mut c.loop_cond,
                &mut c.loop_step,
                &mut c.result,
            ] {
                rewrite(x, depth + 1);
            }
        }
        Expr::List(l) => l.elements.iter_mut().for_each(|x| rewrite(x, depth + 1)),
        Expr::Map(m) => {
            for entry in &mut m.entries {
                if let EntryExpr::MapEntry(me) = &mut entry.expr {
                    rewrite(&mut me.key, depth + 1);
                    rewrite(&mut me.value, depth + 1);
                }
            }
        }
        Expr::Select(s) => rewrite(&mut s.operand, depth + 1),
        _ => {}
    }
}

/// `jsonpatch.escapeKey(x)`: a member call on the identifier `jsonpatch`.
fn is_escape_key(c: &CallExpr) -> bool {
    c.func_name == "escapeKey"
        && c.args.len() == 1
        && c.target
            .as_deref()
            .is_some_and(|t| matches!(&t.expr, Expr::Ident(n) if n == "jsonpatch"))
}

/// The type name a typed map carries, if it is one.
pub(super) fn type_name(v: &cel::Value) -> Option<&str> {
    match v {
        cel::Value::Map(m) => m.map.iter().find_map(|(k, v)| match (k, v) {
            (cel::objects::Key::String(k), cel::Value::String(s)) if k.as_str() == TYPE_KEY => {
                Some(s.as_str())
            }
            _ => None,
        }),
        _ => None,
    }
}

/// `v` as JSON. `ty` is the type name `v` must have when it is a typed
/// map (`None`: any, below a plain map); a typed map's fields must be
/// named `ty.field`.
pub(super) fn to_json(v: &cel::Value, ty: Option<&str>, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err("the value is nested too deeply".into());
    }
    Ok(match v {
        cel::Value::Map(m) => {
            let own = type_name(v);
            if let (Some(own), Some(want)) = (own, ty)
                && own != want
            {
                return Err(format!(
                    "type mismatch: field path name {want:?} does not match type name {own:?}"
                ));
            }
            let mut out = serde_json::Map::new();
            for (k, x) in m.map.iter() {
                let key = match k {
                    cel::objects::Key::String(s) if s.as_str() == TYPE_KEY => continue,
                    cel::objects::Key::String(s) => s.to_string(),
                    cel::objects::Key::Int(i) => i.to_string(),
                    cel::objects::Key::Uint(u) => u.to_string(),
                    cel::objects::Key::Bool(b) => b.to_string(),
                };
                let child = own.map(|t| format!("{t}.{key}"));
                out.insert(key, to_json(x, child.as_deref(), depth + 1)?);
            }
            Value::Object(out)
        }
        cel::Value::List(l) => Value::Array(
            l.iter()
                .map(|x| to_json(x, ty, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        cel::Value::Int(i) => (*i).into(),
        cel::Value::UInt(u) => (*u).into(),
        cel::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .ok_or_else(|| format!("{f} is not a JSON number"))?,
        cel::Value::String(s) => Value::String(s.to_string()),
        cel::Value::Bool(b) => Value::Bool(*b),
        cel::Value::Null => Value::Null,
        cel::Value::Timestamp(t) => Value::String(t.to_rfc3339()),
        other => {
            return Err(format!(
                "a value of type {} cannot be written into an object",
                other.type_of()
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn run(src: &str) -> Result<Value, String> {
        let v = eval(src, &[("object", cel::Value::Null)])?;
        to_json(&v, Some("Object"), 0)
    }

    #[test]
    fn an_object_literal_becomes_its_apply_configuration() {
        let v = run("Object{metadata: Object.metadata{labels: {'a': 'b'}}, \
                     spec: Object.spec{items: [Object.spec.items{name: 'x'}]}}")
        .unwrap();
        assert_eq!(
            v,
            json!({"metadata": {"labels": {"a": "b"}}, "spec": {"items": [{"name": "x"}]}})
        );
    }

    #[test]
    fn a_type_name_that_is_not_the_field_path_is_refused() {
        let e = run("Object{spec: Object.wrong{replicas: 1}}").unwrap_err();
        assert!(e.contains("type mismatch"), "{e}");
    }

    #[test]
    fn escape_key_escapes_tilde_and_slash() {
        let v = eval("jsonpatch.escapeKey('a/b~c')", &[]).unwrap();
        assert_eq!(to_json(&v, None, 0).unwrap(), json!("a~1b~0c"));
    }

    #[test]
    fn json_patch_literals_keep_their_fields() {
        let v = eval("[JSONPatch{op: 'add', path: '/data/x', value: 'y'}]", &[]).unwrap();
        let cel::Value::List(l) = &v else {
            panic!("{v:?}")
        };
        assert_eq!(type_name(&l[0]), Some("JSONPatch"));
        assert_eq!(
            to_json(&v, None, 0).unwrap(),
            json!([{"op": "add", "path": "/data/x", "value": "y"}])
        );
    }
}
