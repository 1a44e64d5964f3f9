//! CRDs made from arbitrary bytes, for the `crd_codegen` fuzz target and
//! the seeded tests of `tests/crd_hostile.rs`: the same structured
//! generator turns the fuzzer's input, or a seeded pseudo-random stream,
//! into a [`CustomResourceDefinition`] whose names and schema reach every
//! construct the generator handles, with the hostile names it must survive
//! (keywords, `_`, empty, non-ASCII, bidirectional controls, prelude
//! names, names colliding after mapping).
//!
//! Not API: its output may change with any release.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{
    CrdMeta, CrdNames, CrdSpec, CrdSubresources, CrdValidation, CrdVersion,
    CustomResourceDefinition,
};
use crate::spec::{AdditionalProperties, CelRule, Schema};

/// Names that have broken, or could break, the mapping to Rust.
const NAMES: &[&str] = &[
    "",
    "_",
    "__",
    "$",
    "self",
    "Self",
    "super",
    "crate",
    "mod",
    "type",
    "gen",
    "async",
    "r#x",
    "my-kind",
    "postgresql",
    "Größe",
    "日本",
    "a\u{202e}b",
    "x\ny",
    "x\r",
    "\u{200b}",
    "🙂",
    "3d",
    "String",
    "Option",
    "Default",
    "Result",
    "Vec",
    "FooList",
    "Foo",
    "fooBar",
    "foo_bar",
    "foo-bar",
    "FOO",
    "other",
    "Other",
    "unknown_fields",
    "apiVersion",
    "kind",
    "metadata",
    "spec",
    "status",
    "*/",
    "/*",
    "```",
    "\t",
    "a\"b",
    "\\",
    "'",
    "x-kubernetes-foo",
    "mirrorPercent",
    "mirror_percent",
];

/// Characters of the made-up names.
const ALPHABET: &[char] = &[
    'a', 'b', 'Z', '0', '9', '_', '-', '.', ' ', '$', 'é', 'ß', '日', '\u{202e}', '\u{2066}', '\n',
    '\r', '\0', '"', '\\', '*', '/', '`', '#',
];

/// Reads the input a byte at a time; zeros once it is used up, so that
/// generation always ends.
#[derive(Debug)]
pub struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Bytes<'a> {
    /// A reader over `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    /// A number below `n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n.max(1)
    }

    fn chance(&mut self, in_256: u8) -> bool {
        self.byte() < in_256
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.below(from.len())]
    }

    /// A name: from [`NAMES`] most of the time, else made of [`ALPHABET`].
    fn name(&mut self) -> String {
        if self.chance(200) {
            return self.pick(NAMES).to_owned();
        }
        let len = self.below(6);
        (0..len).map(|_| self.pick(ALPHABET)).collect()
    }

    /// A description: plain text, or text with hostile characters.
    fn text(&mut self) -> Option<String> {
        match self.below(4) {
            0 => None,
            1 => Some("Plain text.\n\n```\nfn main() {}\n```\n    indented".into()),
            _ => Some(format!("{} then {}", self.name(), self.name())),
        }
    }
}

/// A CRD from `data`: names from `NAMES` (or made up), a schema of at
/// most `max_depth` levels and 6 properties per object.
pub fn crd(data: &[u8], max_depth: usize) -> CustomResourceDefinition {
    let mut b = Bytes::new(data);
    // Mostly names the server would accept (keywords among them), at
    // times one it would not.
    let groups = ["example.com", "self.io", "mod.x", "a-b.c", "crate", "type"];
    let bad_groups = ["Ünï.com", "9a.b", "", "_"];
    let versions = ["v1", "self", "mod", "v1beta1", "super", "gen", "v-1"];
    let bad_versions = ["_", "", "V1", "1"];
    let group = if b.chance(240) {
        b.pick(&groups)
    } else {
        b.pick(&bad_groups)
    }
    .to_owned();
    let kind = if b.chance(230) {
        b.pick(NAMES).to_owned()
    } else {
        b.name()
    };
    let count = 1 + b.below(2);
    let versions = (0..count)
        .map(|_| CrdVersion {
            name: if b.chance(240) {
                b.pick(&versions)
            } else {
                b.pick(&bad_versions)
            }
            .to_owned(),
            served: b.chance(240),
            schema: b.chance(240).then(|| CrdValidation {
                open_api_v3_schema: Some(root_schema(&mut b, max_depth)),
            }),
            subresources: b.chance(128).then(|| CrdSubresources {
                status: Some(json!({})),
                scale: b.chance(64).then(|| json!({})),
            }),
        })
        .collect();
    CustomResourceDefinition {
        metadata: CrdMeta {
            name: format!("{}.{group}", b.name()),
        },
        spec: CrdSpec {
            group,
            names: CrdNames {
                kind,
                plural: b.name(),
                singular: b.chance(64).then(|| b.name()),
                short_names: (0..b.below(3)).map(|_| b.name()).collect(),
            },
            scope: if b.chance(128) {
                "Namespaced"
            } else {
                "Cluster"
            }
            .into(),
            versions,
        },
    }
}

fn root_schema(b: &mut Bytes<'_>, max_depth: usize) -> Schema {
    let mut properties = BTreeMap::new();
    for json in ["spec", "status"] {
        if b.chance(200) {
            properties.insert(json.to_owned(), schema(b, max_depth));
        }
    }
    Schema {
        ty: Some("object".into()),
        description: b.text(),
        properties,
        preserve_unknown_fields: b.chance(32),
        required: if b.chance(128) {
            vec!["spec".into()]
        } else {
            Vec::new()
        },
        ..Schema::default()
    }
}

/// One schema node, at most `depth` levels deep.
pub fn schema(b: &mut Bytes<'_>, depth: usize) -> Schema {
    let leaf = depth <= 1;
    let mut s = Schema {
        description: b.text(),
        nullable: b.chance(24),
        ..Schema::default()
    };
    match b.below(if leaf { 5 } else { 11 }) {
        0 => string(b, &mut s),
        1 => {
            s.ty = Some("integer".into());
            s.format = b.chance(128).then(|| "int32".into());
            s.minimum = b.chance(64).then(|| 0.into());
            s.default = b.chance(64).then_some(json!(3));
        }
        2 => {
            s.ty = Some("number".into());
            s.default = b.chance(64).then_some(json!(1.5));
        }
        3 => {
            s.ty = Some("boolean".into());
            s.default = b.chance(64).then_some(json!(true));
        }
        4 => s.int_or_string = true,
        5 | 6 => object(b, &mut s, depth),
        7 => {
            s.ty = Some("array".into());
            s.items = b.chance(240).then(|| Box::new(schema(b, depth - 1)));
            s.list_type = b.chance(64).then(|| "map".into());
            s.list_map_keys = vec![b.name()];
        }
        8 => {
            s.ty = Some("object".into());
            s.additional_properties = Some(if b.chance(64) {
                AdditionalProperties::Bool(true)
            } else {
                AdditionalProperties::Schema(Box::new(schema(b, depth - 1)))
            });
        }
        9 => {
            let alternatives = (0..1 + b.below(3)).map(|_| schema(b, depth - 1)).collect();
            if b.chance(128) {
                s.one_of = alternatives;
            } else {
                s.any_of = alternatives;
            }
        }
        _ => {
            object(b, &mut s, depth);
            s.embedded_resource = true;
        }
    }
    if b.chance(24) {
        s.validations.push(CelRule {
            rule: b.name(),
            message: b.chance(128).then(|| b.name()),
            ..CelRule::default()
        });
    }
    s
}

fn string(b: &mut Bytes<'_>, s: &mut Schema) {
    s.ty = Some("string".into());
    match b.below(5) {
        0 => s.format = Some("date-time".into()),
        1 => s.format = Some("byte".into()),
        2 => {
            let n = b.below(6);
            s.enum_values = (0..n).map(|_| Value::String(b.name())).collect();
            if b.chance(64) {
                s.enum_values.push(Value::Null);
            }
        }
        3 => s.pattern = Some(b.name()),
        _ => {}
    }
    if b.chance(48) {
        s.default = Some(match s.enum_values.first() {
            Some(v) if b.chance(200) => v.clone(),
            _ => Value::String(b.name()),
        });
    }
}

fn object(b: &mut Bytes<'_>, s: &mut Schema, depth: usize) {
    s.ty = if b.chance(230) {
        Some("object".into())
    } else {
        None
    };
    for _ in 0..b.below(7) {
        let name = b.name();
        if b.chance(64) {
            s.required.push(name.clone());
        }
        s.properties.insert(name, schema(b, depth - 1));
    }
    s.preserve_unknown_fields = b.chance(40);
}

/// Deterministic pseudo-random bytes (SplitMix64) for seeded tests: the
/// same `seed` gives the same bytes on every platform.
pub fn seeded_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(len);
    out
}
