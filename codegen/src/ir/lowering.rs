//! Definitions → types: names, references, boxes, features.

use std::collections::{BTreeMap, BTreeSet};

use super::tables::{HAND_WRITTEN, hand_written};
use super::{Field, Ir, ResourceRef, Ty, TypeDef, TypeKind, fixups, paths};
use crate::error::CodegenError;
use crate::names;
use crate::schema::{Lowerer, Mode, Scope};
use crate::spec::{Input, Schema};

/// Lowers a Kubernetes spec input into the IR, after [`fixups::ALL`].
pub fn lower(input: Input) -> Result<Ir, CodegenError> {
    lower_with(input, fixups::ALL)
}

/// Lowers with a chosen list of fixups (small test specs have none of
/// the upstream quirks).
pub fn lower_with(mut input: Input, fixups: &[(&str, fixups::Fixup)]) -> Result<Ir, CodegenError> {
    for (_, fixup) in fixups {
        if let fixups::Fixup::Input(f) = fixup {
            f(&mut input)?;
        }
    }
    for hand in HAND_WRITTEN {
        if !input.definitions.contains_key(hand.definition) {
            return Err(CodegenError::MissingHandWritten {
                definition: hand.definition.to_owned(),
            });
        }
    }
    let resources = paths::resources_from_paths(&input);
    let mut ir = Ir::default();
    let paths = definition_paths(&input)?;
    let taken = paths.values().cloned().collect();
    let mut lowerer = Lowerer::new(Mode::BuiltIn, &input.definitions, taken);
    for (definition, schema) in &input.definitions {
        let (modules, name) = paths[definition].clone();
        let gvk = match schema.gvk.as_slice() {
            [one]
                if schema.properties.contains_key("kind")
                    && schema.properties.contains_key("apiVersion") =>
            {
                Some(one.clone())
            }
            _ => None,
        };
        let resource = gvk.as_ref().and_then(|g| {
            let meta = schema
                .properties
                .get("metadata")
                .and_then(Schema::referenced);
            if meta != Some("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta") {
                return None;
            }
            resources
                .iter()
                .find(|r| r.group == g.group && r.version == g.version && r.kind == g.kind)
                .map(|r| ResourceRef {
                    plural: r.plural.clone(),
                    namespaced: r.namespaced,
                })
        });
        let feature = names::feature_of(&modules);
        let source = input.sources.get(definition).cloned().unwrap_or_default();
        lowerer.set_scope(Scope {
            definition: definition.clone(),
            modules: modules.clone(),
            feature: feature.clone(),
            source: source.clone(),
            origin: format!("definition {definition}"),
        });
        let kind = if let Some(hand) = hand_written(definition) {
            TypeKind::HandWritten { path: hand.path }
        } else if schema.properties.is_empty() {
            TypeKind::Opaque
        } else {
            let skip: &[&str] = if gvk.is_some() {
                &["apiVersion", "kind"]
            } else {
                &[]
            };
            lowerer.struct_type(schema, "", &name, definition, skip)?;
            let mut lowered = lowerer.types.remove(definition).map(|t| t.kind);
            if let (Some(TypeKind::Struct { fields }), true) = (&mut lowered, gvk.is_some()) {
                // Top-level objects always carry metadata.
                for f in fields.iter_mut().filter(|f| f.json == "metadata") {
                    f.required = true;
                }
            }
            lowered.unwrap_or(TypeKind::Opaque)
        };
        ir.types.insert(
            definition.clone(),
            TypeDef {
                modules,
                description: schema.description.clone(),
                gvk,
                resource,
                feature,
                source,
                ..TypeDef::new(definition.clone(), name, kind)
            },
        );
    }
    ir.types.append(&mut lowerer.types);
    set_gates(&mut ir, &input.versions);
    mark_cycles(&mut ir);
    ir.features = feature_dependencies(&ir)?;
    ir.resources = resources;
    ir.subresource_operations = paths::subresource_operations(&input);
    check_one_type_per_definition(&input, &ir)?;
    for (_, fixup) in fixups {
        if let fixups::Fixup::Ir(f) = fixup {
            f(&mut ir)?;
        }
    }
    Ok(ir)
}

/// The gates of the types (an inline type shares its definition's) and
/// of the fields of the definitions' own structs, from the merged
/// versions.
fn set_gates(ir: &mut Ir, versions: &crate::versions::Versions) {
    ir.versions = versions.all.clone();
    for t in ir.types.values_mut() {
        let owner = t.inline_of.as_deref().unwrap_or(&t.definition);
        t.gate = versions.definition(owner);
        if owner != t.definition {
            continue;
        }
        if let TypeKind::Struct { fields } = &mut t.kind {
            *fields = std::mem::take(fields)
                .into_iter()
                .flat_map(|f| gated_forms(versions, &t.definition, f))
                .collect();
        }
    }
}

/// A field with its gate, or, where the versions that have it disagree on
/// whether it is required, its two forms of one name under complementary
/// gates: plain where required, `Option` elsewhere (a field the lowering
/// made required on its own, a kind's `metadata`, stays as it is).
fn gated_forms(versions: &crate::versions::Versions, definition: &str, mut f: Field) -> Vec<Field> {
    f.gate = versions.field(definition, &f.json);
    let split = (!f.required)
        .then(|| versions.required_split(definition, &f.json, f.gate.as_ref()))
        .flatten();
    let Some((required, optional)) = split else {
        return vec![f];
    };
    let plain = Field {
        required: true,
        gate: Some(required),
        ..f.clone()
    };
    f.gate = Some(optional);
    vec![plain, f]
}

/// The Rust path (modules, name) of every definition; two definitions
/// whose files would collide are an error.
fn definition_paths(
    input: &Input,
) -> Result<BTreeMap<String, (Vec<String>, String)>, CodegenError> {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for (definition, schema) in &input.definitions {
        let (modules, name) = names::custom_resource_path(definition, schema)
            .or_else(|| names::rust_path(definition))
            .ok_or_else(|| CodegenError::BadDefinitionName {
                definition: definition.clone(),
            })?;
        let file_key = format!("{}::{}", modules.join("::"), names::snake_case(&name));
        if let Some(first) = seen.insert(file_key.clone(), definition.clone()) {
            return Err(CodegenError::NameCollision {
                scope: "module".into(),
                rust: file_key,
                first,
                second: definition.clone(),
            });
        }
        out.insert(definition.clone(), (modules, name));
    }
    Ok(out)
}

fn check_one_type_per_definition(input: &Input, ir: &Ir) -> Result<(), CodegenError> {
    let mut paths: BTreeMap<(Vec<String>, String), usize> = BTreeMap::new();
    for t in ir.types.values() {
        *paths
            .entry((t.modules.clone(), t.name.clone()))
            .or_default() += 1;
    }
    for definition in input.definitions.keys() {
        let count = ir
            .types
            .get(definition)
            .map(|t| {
                paths
                    .get(&(t.modules.clone(), t.name.clone()))
                    .copied()
                    .unwrap_or(0)
            })
            .unwrap_or(0);
        if count != 1 {
            return Err(CodegenError::TypeCount {
                definition: definition.clone(),
                count,
            });
        }
    }
    let own = ir.types.values().filter(|t| t.inline_of.is_none()).count();
    if own != input.definitions.len() {
        return Err(CodegenError::TypeCount {
            definition: "<all>".into(),
            count: ir.types.len(),
        });
    }
    Ok(())
}

/// Marks fields that hold (through `Option` but not `Vec`/map) a type that
/// contains the struct itself, so the emitter boxes them.
fn mark_cycles(ir: &mut Ir) {
    let direct: BTreeMap<String, Vec<String>> = ir
        .types
        .iter()
        .map(|(name, t)| {
            let refs = match &t.kind {
                TypeKind::Struct { fields } => fields
                    .iter()
                    .filter_map(|f| match &f.ty {
                        Ty::Ref(r) => Some(r.clone()),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            (name.clone(), refs)
        })
        .collect();
    let reaches = |from: &str, target: &str| -> bool {
        let mut stack = vec![from.to_owned()];
        let mut seen = BTreeSet::new();
        while let Some(n) = stack.pop() {
            if n == target {
                return true;
            }
            if seen.insert(n.clone()) {
                stack.extend(direct.get(&n).into_iter().flatten().cloned());
            }
        }
        false
    };
    for (name, t) in ir.types.iter_mut() {
        if let TypeKind::Struct { fields } = &mut t.kind {
            for f in fields {
                if let Ty::Ref(r) = &f.ty {
                    f.boxed = reaches(r, name);
                }
            }
        }
    }
}

fn collect_refs(ty: &Ty, out: &mut BTreeSet<String>) {
    match ty {
        Ty::Ref(r) => {
            out.insert(r.clone());
        }
        Ty::Vec(t) | Ty::Map(t) => collect_refs(t, out),
        _ => {}
    }
}

/// Feature → features its types refer to (cross-group references).
fn feature_dependencies(ir: &Ir) -> Result<BTreeMap<String, BTreeSet<String>>, CodegenError> {
    let mut features: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for t in ir.types.values() {
        if let Some(f) = &t.feature {
            features.entry(f.clone()).or_default();
        }
        let mut refs = BTreeSet::new();
        if let TypeKind::Struct { fields } = &t.kind {
            for field in fields {
                collect_refs(&field.ty, &mut refs);
            }
        }
        for target in refs {
            let Some(target_feature) = ir.types.get(&target).and_then(|t| t.feature.clone()) else {
                continue;
            };
            match &t.feature {
                None => {
                    return Err(CodegenError::UngatedReference {
                        definition: t.definition.clone(),
                        target,
                        feature: target_feature,
                    });
                }
                Some(own) if *own != target_feature => {
                    features
                        .entry(own.clone())
                        .or_default()
                        .insert(target_feature);
                }
                Some(_) => {}
            }
        }
    }
    Ok(features)
}
