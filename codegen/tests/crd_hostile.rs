//! `kubeset-codegen crd` on hostile and unusual CRDs (issue 29, issue 37):
//! names that are keywords, empty, `_`, not ASCII, not UpperCamelCase or
//! that collide after mapping; bidirectional and control characters in
//! text; sizes and nesting that used to take quadratic time; JSON the YAML
//! reader refused. Then a few hundred seeded random CRDs
//! (`crd::fuzz_hooks`, the fuzz target's generator): none panics, all that
//! generate parse with `syn` and compile together in one user crate.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use kubeset_codegen::CodegenError;
use kubeset_codegen::crd::{self, CustomResourceDefinition, Generated, Options, fuzz_hooks};
use serde_json::{Value, json};

fn crd_value(group: &str, kind: &str, version: &str, schema: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("things.{group}")},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": "things"},
            "scope": "Namespaced",
            "versions": [{"name": version, "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": schema}}]
        }
    })
}

fn with_spec(properties: Value) -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object", "properties": properties}}})
}

fn simple() -> Value {
    with_spec(json!({"a": {"type": "string"}}))
}

fn parse(value: &Value) -> CustomResourceDefinition {
    crd::decode(value.clone(), Path::new("test.json")).expect("a CRD")
}

fn generate(values: &[Value]) -> Result<Generated, CodegenError> {
    let crds: Vec<_> = values.iter().map(parse).collect();
    crd::generate(&crds, &Options::default())
}

/// Runs `f` on another thread and waits for it at most `limit`: a guard
/// against the quadratic paths coming back as a hang, not a timing check.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .expect("still running after the hang guard")
}

/// The CRDs whose names used to panic the generator or give code that
/// does not compile, each in its own group.
fn hostile_name_crds() -> Vec<Value> {
    vec![
        // A field named `_` (panicked).
        crd_value(
            "underscore.example.com",
            "Thing",
            "v1",
            with_spec(
                json!({"_": {"type": "string"}, "__": {"type": "string"}, "": {"type": "string"}}),
            ),
        ),
        // Kind `my-kind` (panicked).
        crd_value("dash.example.com", "my-kind", "v1", simple()),
        // Kind `Self`, version `self` (did not compile).
        crd_value("self.example.com", "Self", "self", simple()),
        // Version `mod` (did not compile).
        crd_value("mod.example.com", "Thing", "mod", simple()),
        // Kinds whose file would be a keyword.
        crd_value("kw.example.com", "Mod", "crate", simple()),
        crd_value("kw2.example.com", "Type", "gen", simple()),
        // A kind outside ASCII (did not compile).
        crd_value(
            "nonascii.example.com",
            "Größe",
            "v1",
            with_spec(
                json!({"日本": {"type": "string"}, "é": {"type": "object", "properties": {"ß": {"type": "string"}}}}),
            ),
        ),
        // Zalando's lowercase kind (issue 37: the type met its module).
        crd_value("acid.zalan.do", "postgresql", "v1", simple()),
        // A kind starting with digits, one with digits inside.
        crd_value("digits.example.com", "3dModel", "v1", simple()),
        crd_value("digits2.example.com", "S3Bucket2", "v2beta1", simple()),
        // Prelude names.
        crd_value(
            "prelude.example.com",
            "String",
            "v1",
            with_spec(
                json!({"option": {"type": "object", "properties": {"x": {"type": "string"}}}}),
            ),
        ),
        // A field name with U+202E (copied raw into a doc comment).
        crd_value(
            "bidi.example.com",
            "Thing",
            "v1",
            with_spec(json!({
                "a\u{202e}b": {"type": "string", "description": "x\u{202e}y\u{2066}z\rq"},
                "e": {"type": "string", "enum": ["\u{202e}", "a\u{2067}"]}
            })),
        ),
    ]
}

#[test]
fn hostile_names_generate_valid_names() {
    let out = generate(&hostile_name_crds()).expect("every hostile name maps");
    let files = &out.files;
    let has = |path: &str, text: &str| {
        let file = files
            .get(path)
            .unwrap_or_else(|| panic!("no {path} in {:?}", files.keys()));
        assert!(file.contains(text), "{path} lacks {text:?}:\n{file}");
    };
    has(
        "underscore_example_com/v1/thing_spec.rs",
        "pub field: Option<String>",
    );
    has(
        "underscore_example_com/v1/thing_spec.rs",
        "pub field_2: Option<String>",
    );
    has("dash_example_com/v1/my_kind.rs", "pub struct MyKind {");
    has(
        "dash_example_com/v1/my_kind.rs",
        "const KIND: &'static str = \"my-kind\";",
    );
    has("self_example_com/self_/self_.rs", "pub struct Self_ {");
    has(
        "self_example_com/self_/self_.rs",
        "pub type SelfList = kubeset::List<Self_>;",
    );
    has(
        "self_example_com/self_/self_.rs",
        "const VERSION: &'static str = \"self\";",
    );
    has("self_example_com/mod.rs", "pub mod self_;");
    has("mod_example_com/mod.rs", "pub mod mod_;");
    has("kw_example_com/crate_/mod.rs", "mod mod_;");
    has("kw2_example_com/gen_/mod.rs", "mod type_;");
    has(
        "nonascii_example_com/v1/gr_u00f6_u00df_e.rs",
        "pub struct GrU00f6U00dfE {",
    );
    has(
        "nonascii_example_com/v1/gr_u00f6_u00df_e_spec.rs",
        "pub u65e5_u672c: Option<String>",
    );
    has("acid_zalan_do/v1/postgresql.rs", "pub struct Postgresql {");
    has(
        "acid_zalan_do/v1/postgresql.rs",
        "const KIND: &'static str = \"postgresql\";",
    );
    has(
        "acid_zalan_do/v1/mod.rs",
        "pub use self::postgresql::{Postgresql, PostgresqlList};",
    );
    has("prelude_example_com/v1/string_.rs", "pub struct String_ {");
    has(
        "prelude_example_com/v1/string_.rs",
        "pub spec: Option<super::StringSpec>",
    );
    has(
        "prelude_example_com/v1/string_spec.rs",
        "pub option: Option<super::StringSpecOption>",
    );
    for (path, text) in files {
        assert!(path.is_ascii(), "{path}");
        let raw = text
            .chars()
            .find(|c| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\r'));
        assert_eq!(raw, None, "{path} carries a raw control character:\n{text}");
        syn::parse_file(text).unwrap_or_else(|e| panic!("{path}: {e}\n{text}"));
    }
    has(
        "bidi_example_com/v1/thing_spec.rs",
        "x\\u{202e}y\\u{2066}z\\u{d}q",
    );
}

#[test]
fn hostile_names_compile_in_a_user_crate() {
    let out = generate(&hostile_name_crds()).expect("every hostile name maps");
    let mut files = common::under_src_crds(&out.files);
    files.insert(
        "src/lib.rs".into(),
        "#![deny(warnings)]\n#[rustfmt::skip]\npub mod crds;\n\
         pub fn use_them() -> usize {\n\
             let p = crds::acid_zalan_do::v1::Postgresql::new(\"x\", Default::default());\n\
             let s = crds::self_example_com::self_::Self_::new(\"y\", Default::default());\n\
             let k = <crds::dash_example_com::v1::MyKind as kubeset::Resource>::KIND;\n\
             let _ = crds::digits_example_com::v1::T3dModel::new(\"d\", Default::default());\n\
             let _ = crds::digits2_example_com::v2beta1::S3Bucket2::new(\"e\", Default::default());\n\
             p.metadata.name.map_or(0, |n| n.len()) + s.metadata.name.map_or(0, |n| n.len()) + k.len()\n\
         }\n"
            .into(),
    );
    let run =
        common::cargo_in_user_crate("crd-hostile-names", &files, &["check", "--quiet"], false);
    assert!(run.ok, "the hostile names did not compile:\n{}", run.output);
}

#[test]
fn names_that_make_nothing_or_collide_are_errors_naming_the_crd() {
    let err = generate(&[crd_value("empty.example.com", "", "v1", simple())])
        .expect_err("an empty kind makes no type");
    assert!(
        matches!(&err, CodegenError::BadName { crd, what: "spec.names.kind", .. } if crd == "things.empty.example.com"),
        "{err:?}"
    );
    let mut other = crd_value("c.example.com", "FooBar", "v1", simple());
    other["metadata"]["name"] = json!("others.c.example.com");
    let err = generate(&[crd_value("c.example.com", "Foo-bar", "v1", simple()), other])
        .expect_err("two kinds meet in one type");
    let text = err.to_string();
    assert!(
        text.contains("things.c.example.com") && text.contains("others.c.example.com"),
        "{text}"
    );
    // `Foo` and `FooList` meet in the list alias.
    let mut list = crd_value("l.example.com", "FooList", "v1", simple());
    list["metadata"]["name"] = json!("lists.l.example.com");
    let err = generate(&[crd_value("l.example.com", "Foo", "v1", simple()), list])
        .expect_err("an alias meets a kind");
    assert!(matches!(err, CodegenError::NameCollision { .. }), "{err:?}");
    // The same CRD twice is one CRD.
    let one = crd_value("t.example.com", "Foo", "v1", simple());
    let twice = generate(&[one.clone(), one]).expect("a repeat");
    assert!(twice.files.contains_key("t_example_com/v1/foo.rs"));
}

#[test]
fn crd_names_do_not_inject_code_into_comments() {
    let mut v = crd_value("inject.example.com", "Thing", "v1", simple());
    v["metadata"]["name"] = json!("things.inject.example.com\npub fn injected() {}\n//\u{202e}");
    let out = generate(&[v]).expect("generates");
    for (path, text) in &out.files {
        assert!(!text.contains("\npub fn injected"), "{path}:\n{text}");
        assert!(!text.contains('\u{202e}'), "{path}:\n{text}");
        syn::parse_file(text).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
}

#[test]
fn escaped_surrogate_pairs_in_json_are_read() {
    let text = r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.s.example.com"},
        "spec": {"group": "s.example.com", "names": {"kind": "Thing", "plural": "things"},
        "scope": "Namespaced", "versions": [{"name": "v1", "served": true,
        "schema": {"openAPIV3Schema": {"type": "object", "description": "smile \ud83d\ude00"}}}]}}"#;
    let (crds, _) = crd::parse_manifests(text, Path::new("s.json")).expect("valid JSON");
    let schema = crds[0].spec.versions[0]
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref());
    assert_eq!(
        schema.and_then(|s| s.description.as_deref()),
        Some("smile 😀")
    );
}

#[test]
fn deep_nesting_is_refused_early_naming_the_limit() {
    let depth = 20_000;
    let text = format!(
        "{{\"kind\": \"CustomResourceDefinition\", \"spec\": {}{{}}{}}}",
        "{\"properties\": {\"a\": ".repeat(depth),
        "}}".repeat(depth)
    );
    let err = within(Duration::from_secs(60), move || {
        crd::parse_manifests(&text, Path::new("deep.json")).map(|_| ())
    })
    .expect_err("too deep");
    assert!(
        matches!(
            err,
            CodegenError::TooDeep {
                limit: crd::MAX_NESTING,
                line: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("deeper than 100 levels"), "{err}");
    // YAML flow collections count too; brackets in strings and comments do not.
    let yaml = format!(
        "a: {}{}\nb: \"{}\" # {}\n",
        "[".repeat(101),
        "]".repeat(101),
        "[".repeat(500),
        "{".repeat(500)
    );
    assert!(matches!(
        crd::parse_manifests(&yaml, Path::new("deep.yaml")),
        Err(CodegenError::TooDeep { line: 1, .. })
    ));
    let fine = format!(
        "b: \"{}\" # {}\nc: '{}'\n",
        "[".repeat(500),
        "{".repeat(500),
        "{".repeat(500)
    );
    assert!(crd::parse_manifests(&fine, Path::new("fine.yaml")).is_ok());
}

#[test]
fn schemas_built_in_memory_are_refused_past_the_depth_limit() {
    // Parsed manifests cannot nest that deep: build the CRD by hand.
    let mut crd = parse(&crd_value("deep.example.com", "Thing", "v1", simple()));
    let mut s = kubeset_codegen::spec::Schema {
        ty: Some("string".into()),
        ..Default::default()
    };
    for _ in 0..200 {
        s = kubeset_codegen::spec::Schema {
            ty: Some("array".into()),
            items: Some(Box::new(s)),
            ..Default::default()
        };
    }
    let root = crd.spec.versions[0]
        .schema
        .as_mut()
        .and_then(|v| v.open_api_v3_schema.as_mut())
        .expect("schema");
    root.properties.insert("deep".into(), s);
    let err = crd::generate(&[crd], &Options::default()).expect_err("too deep");
    assert!(
        matches!(&err, CodegenError::SchemaTooDeep { limit: 128, .. }),
        "{err:?}"
    );
}

/// `i` written in the digits `digits` (at least one).
fn spelled(mut i: usize, digits: &[char]) -> String {
    let mut out = String::new();
    loop {
        out.push(digits[i % digits.len()]);
        i /= digits.len();
        if i == 0 {
            return out;
        }
    }
}

/// What lowering the shapes that used to be quadratic gives at size `n`:
/// an enum of `n` distinct values that all make the variant `Symbol`, `n`
/// properties that all make the field `x_`, `n / 5` objects that all want
/// the type name `SX`. Returns the variant count, the field names and the
/// type names.
fn lower_colliding(n: usize) -> (usize, Vec<String>, BTreeSet<String>) {
    use kubeset_codegen::ir::{Ty, TypeKind};
    use kubeset_codegen::schema::{Lowerer, Mode, Scope};
    use kubeset_codegen::spec::Schema;
    let symbols = [
        '!', '#', '%', '&', '*', '+', '/', ':', '<', '=', '>', '?', '@', '^', '|', '~',
    ];
    let string = || Schema {
        ty: Some("string".into()),
        ..Schema::default()
    };
    let object = |properties: BTreeMap<String, Schema>| Schema {
        ty: Some("object".into()),
        properties,
        ..Schema::default()
    };
    let enum_schema = Schema {
        enum_values: (0..n)
            .map(|i| Value::String(spelled(i, &symbols)))
            .collect(),
        ..string()
    };
    let fields = (0..n)
        .map(|i| (format!("x{}", spelled(i, &['-', '.', '_'])), string()))
        .collect();
    let objects = (0..n / 5)
        .map(|i| {
            let inner = [("y".to_owned(), string())].into();
            (format!("x{}", spelled(i, &['-', '.', '_'])), object(inner))
        })
        .collect();
    let defs = BTreeMap::new();
    let mut l = Lowerer::new(Mode::Crd, &defs, Default::default());
    l.set_scope(Scope {
        definition: "d".into(),
        modules: vec!["m".into()],
        ..Scope::default()
    });
    let Ok(Ty::Ref(e)) = l.ty(&enum_schema, ".e", "E") else {
        panic!("an enum")
    };
    let Ok(Ty::Ref(f)) = l.ty(&object(fields), ".f", "F") else {
        panic!("a struct")
    };
    let Ok(Ty::Ref(_)) = l.ty(&object(objects), ".s", "S") else {
        panic!("a struct")
    };
    let variants = match &l.types[&e].kind {
        TypeKind::Enum { variants, .. } => variants.len(),
        _ => 0,
    };
    let field_names = match &l.types[&f].kind {
        TypeKind::Struct { fields } => fields.iter().map(|f| f.rust.clone()).collect(),
        _ => Vec::new(),
    };
    let type_names = l.types.values().map(|t| t.name.clone()).collect();
    (variants, field_names, type_names)
}

/// The shortest of three runs of `f`, and what the last one gave.
fn fastest_of_three<T>(f: impl Fn() -> T) -> (Duration, T) {
    let mut fastest = Duration::MAX;
    let mut last = None;
    for _ in 0..3 {
        let start = std::time::Instant::now();
        last = Some(f());
        fastest = fastest.min(start.elapsed());
    }
    (fastest, last.expect("three runs"))
}

#[test]
fn large_enums_and_many_colliding_names_lower_in_linear_time() {
    // Each of these was quadratic (an enum of 100,000 values took 106.7 s).
    // Eight times the size: about eight times the time when linear, 64
    // times when quadratic. A ratio with a wide margin, of the fastest of
    // three runs each (a busy machine slows runs, it does not speed them).
    let n = 16_000;
    let ((small, _), (large, lowered)) = within(Duration::from_secs(300), move || {
        let small = fastest_of_three(|| lower_colliding(n / 8));
        (small, fastest_of_three(|| lower_colliding(n)))
    });
    let (variants, field_names, type_names) = lowered;
    assert_eq!(variants, n);
    let distinct: BTreeSet<&String> = field_names.iter().collect();
    assert_eq!(distinct.len(), n, "every field has its own name");
    assert!(field_names.contains(&format!("x_{n}")), "the last suffix");
    assert!(
        type_names.contains(&format!("SX{}", n / 5)),
        "the last type name"
    );
    let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-6);
    assert!(
        ratio < 32.0,
        "8x the size took {ratio:.1}x the time ({small:?} -> {large:?}): not linear"
    );
    eprintln!("8x the size: {ratio:.1}x the time ({small:?} -> {large:?})");
}

#[test]
fn a_large_enum_generates_every_variant() {
    let values: Vec<String> = (0..5_000).map(|i| format!("value{i}")).collect();
    let v = crd_value(
        "big.example.com",
        "Thing",
        "v1",
        with_spec(json!({"e": {"type": "string", "enum": values}})),
    );
    let out = generate(&[v]).expect("generates");
    let e = &out.files["big_example_com/v1/thing_spec_e.rs"];
    assert!(e.contains("Value4999,"), "the last value has its variant");
    assert!(e.contains("\"value4999\" => Self::Value4999,"));
}

/// The seeded random CRDs: (seed, CRD) of those that generate.
fn seeded() -> (Vec<(u64, Generated)>, usize) {
    let mut ok = Vec::new();
    let mut refused = 0;
    for seed in 0..300u64 {
        let bytes = fuzz_hooks::seeded_bytes(seed, 2048);
        let crd = fuzz_hooks::crd(&bytes, 4);
        match crd::generate(std::slice::from_ref(&crd), &Options::default()) {
            Ok(out) => {
                for (path, text) in &out.files {
                    assert!(path.is_ascii(), "seed {seed}: {path}");
                    syn::parse_file(text).unwrap_or_else(|e| panic!("seed {seed}: {path}: {e}"));
                    out.single_file()
                        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
                }
                ok.push((seed, out));
            }
            Err(CodegenError::InvalidOutput { file, source }) => {
                panic!("seed {seed}: {file} is not valid Rust: {source}")
            }
            Err(
                CodegenError::BadName { .. }
                | CodegenError::BadModuleName { .. }
                | CodegenError::NameCollision { .. },
            ) => refused += 1,
            Err(other) => panic!("seed {seed}: unexpected error {other}"),
        }
    }
    (ok, refused)
}

#[test]
fn seeded_random_crds_generate_parse_and_compile_together() {
    let (ok, refused) = seeded();
    assert!(
        ok.len() >= 150,
        "only {} of 300 seeded CRDs generated ({refused} refused)",
        ok.len()
    );
    let mut files = BTreeMap::new();
    let mut lib = String::from("#![deny(warnings)]\n");
    for (seed, out) in &ok {
        lib.push_str(&format!("#[rustfmt::skip]\npub mod c{seed};\n"));
        for (path, text) in &out.files {
            files.insert(format!("src/c{seed}/{path}"), text.clone());
        }
    }
    files.insert("src/lib.rs".into(), lib);
    let all: String = files.values().cloned().collect();
    for needle in [
        "Self_",
        "self_",
        "mod_",
        "Option_",
        "u00f6",
        "\\u{202e}",
        "field",
    ] {
        assert!(all.contains(needle), "no seeded CRD exercised {needle:?}");
    }
    let run =
        common::cargo_in_user_crate("crd-hostile-seeded", &files, &["check", "--quiet"], false);
    assert!(run.ok, "the seeded CRDs did not compile:\n{}", run.output);
    eprintln!(
        "{} seeded CRDs ({refused} refused), {} files: cargo check in {:?}",
        ok.len(),
        files.len(),
        run.elapsed
    );
}

#[test]
fn a_one_of_of_a_string_enum_and_an_object_names_its_variants_apart() {
    // Found by the seeded test: both alternatives lower to named types and
    // were both called `Object`.
    let v = crd_value(
        "oneof.example.com",
        "Thing",
        "v1",
        with_spec(json!({"u": {"oneOf": [
            {"type": "string", "enum": ["a", "b"]},
            {"type": "object", "properties": {"x": {"type": "string"}}}
        ]}})),
    );
    let out = generate(&[v]).expect("generates");
    let u = &out.files["oneof_example_com/v1/thing_spec_u.rs"];
    assert!(u.contains("String(super::ThingSpecU1)"), "{u}");
    assert!(u.contains("Object(super::ThingSpecU2)"), "{u}");
}
