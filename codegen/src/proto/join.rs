//! The join of proto messages to IR structs: every field of a joined
//! struct gets its number and wire shape, or the run fails.

use std::collections::{BTreeMap, BTreeSet};

use super::parse::{Label, Message, ProtoField};
use super::{GoValues, ProtoError, ProtoSet, message_name};
use crate::ir::Field;
use crate::ir::{Ir, Ty, TypeKind, hand_written};

/// A scalar on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    /// `string` ↔ `String`.
    String,
    /// `bytes` ↔ `ByteString`.
    Bytes,
    /// `bool`.
    Bool,
    /// `int32` (varint, negative values sign-extended).
    Int32,
    /// `int64` (varint).
    Int64,
    /// `double` (fixed64).
    Double,
}

impl Scalar {
    /// The helper suffix in `kubeset_api::protobuf::wire` (`string`, …).
    pub fn helper(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Bytes => "bytes",
            Self::Bool => "bool",
            Self::Int32 => "int32",
            Self::Int64 => "int64",
            Self::Double => "double",
        }
    }

    /// Numbers, which a reader must also accept packed (one
    /// length-delimited record of values).
    pub fn packable(self) -> bool {
        matches!(self, Self::Bool | Self::Int32 | Self::Int64 | Self::Double)
    }

    fn of(ty: &Ty, proto: &str) -> Option<Self> {
        Some(match (ty, proto) {
            (Ty::String, "string") => Self::String,
            (Ty::Bytes, "bytes") => Self::Bytes,
            (Ty::Bool, "bool") => Self::Bool,
            (Ty::I32, "int32") => Self::Int32,
            (Ty::I64, "int64") => Self::Int64,
            (Ty::F64, "double") => Self::Double,
            _ => return None,
        })
    }
}

/// One value on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elem {
    /// A scalar.
    Scalar(Scalar),
    /// A message: a generated struct or a hand-written type with its own
    /// codec (`Quantity`, `IntOrString`, …).
    Message,
    /// `Time` (`micro: false`) or `MicroTime`: an empty message is an
    /// unset time (Go's zero time), so it reads as `None`.
    Time {
        /// `MicroTime` rather than `Time`.
        micro: bool,
    },
    /// A list wrapped in a message `{ repeated T items = 1; }` (Go's named
    /// slice types `ExtraValue`, `Verbs`): `Vec<T>` in the model.
    Wrapped(Scalar),
}

/// How a field is laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// `optional T`.
    One(Elem),
    /// `repeated T`, one record per element.
    Repeated(Elem),
    /// `map<string, T>`: repeated `{ key = 1; value = 2; }` entries.
    Map(Elem),
    /// A Go embedded struct: a nested message whose fields are fields of
    /// the model itself (`Probe`'s `ProbeHandler`, `Volume`'s
    /// `VolumeSource`). Always written, as Go writes it.
    Embedded(Vec<FieldCodec>),
}

/// One field of a joined struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldCodec {
    /// The Rust field name.
    pub rust: String,
    /// The JSON (and proto) field name.
    pub json: String,
    /// The field number.
    pub number: u32,
    /// Wire layout.
    pub shape: Shape,
    /// A plain field in the model (not `Option`).
    pub required: bool,
    /// Behind a `Box` in the model.
    pub boxed: bool,
    /// A Go value field (not a pointer) of a scalar type with `omitempty`:
    /// Go writes its zero value on the wire when unset, so a zero reads as
    /// `None` ([`GoValues`]).
    pub zero_is_unset: bool,
    /// The versions that have the field, when not every one that has its
    /// struct does (the IR field's gate).
    pub gate: Option<crate::versions::Gate>,
}

/// The codec of one generated struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Codec {
    /// The proto message's full name.
    pub message: String,
    /// Fields in field-number order.
    pub fields: Vec<FieldCodec>,
    /// The model is an opaque JSON map (an empty message on the wire).
    pub opaque: bool,
}

/// Every joined struct, by definition name.
#[derive(Debug, Clone, Default)]
pub struct Codecs {
    /// Codecs by OpenAPI definition name.
    pub types: BTreeMap<String, Codec>,
}

/// A known disagreement between definitions and their messages: JSON
/// fields whose proto field has another name (the Go field name where the
/// `protobuf` tag differs from the `json` tag). Every rename must be
/// needed, or the run fails.
#[derive(Debug, Clone, Copy)]
pub struct Fixup {
    /// Name in errors.
    pub name: &'static str,
    /// `(definition, JSON field, proto field)`.
    pub renames: &'static [(&'static str, &'static str, &'static str)],
}

impl Fixup {
    fn rename(&self, definition: &str, json: &str) -> Option<&'static str> {
        self.renames
            .iter()
            .find(|(d, j, _)| *d == definition && *j == json)
            .map(|(_, _, p)| *p)
    }
}

/// Every fixup of the upstream files.
pub const FIXUPS: &[Fixup] = &[
    Fixup {
        name: "capitalised_go_names",
        renames: &[
            (
                "io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration",
                "webhooks",
                "Webhooks",
            ),
            (
                "io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration",
                "webhooks",
                "Webhooks",
            ),
            (
                "io.k8s.api.admissionregistration.v1.Validation",
                "expression",
                "Expression",
            ),
            (
                "io.k8s.api.admissionregistration.v1.Variable",
                "name",
                "Name",
            ),
            (
                "io.k8s.api.admissionregistration.v1.Variable",
                "expression",
                "Expression",
            ),
            (
                "io.k8s.api.admissionregistration.v1alpha1.Variable",
                "name",
                "Name",
            ),
            (
                "io.k8s.api.admissionregistration.v1alpha1.Variable",
                "expression",
                "Expression",
            ),
            (
                "io.k8s.api.admissionregistration.v1beta1.Variable",
                "name",
                "Name",
            ),
            (
                "io.k8s.api.admissionregistration.v1beta1.Variable",
                "expression",
                "Expression",
            ),
        ],
    },
    Fixup {
        name: "initialism_go_names",
        renames: &[
            (
                "io.k8s.api.authentication.v1.BoundObjectReference",
                "uid",
                "uID",
            ),
            (
                "io.k8s.api.networking.v1.IngressClassParametersReference",
                "apiGroup",
                "aPIGroup",
            ),
        ],
    },
    Fixup {
        name: "json_schema_dollar_names",
        renames: &[
            (
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
                "$schema",
                "schema",
            ),
            (
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
                "$ref",
                "ref",
            ),
            (
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
                "x-kubernetes-preserve-unknown-fields",
                "xKubernetesPreserveUnknownFields",
            ),
            (
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
                "x-kubernetes-embedded-resource",
                "xKubernetesEmbeddedResource",
            ),
            (
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
                "x-kubernetes-int-or-string",
                "xKubernetesIntOrString",
            ),
            (
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
                "x-kubernetes-list-map-keys",
                "xKubernetesListMapKeys",
            ),
            (
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
                "x-kubernetes-list-type",
                "xKubernetesListType",
            ),
            (
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
                "x-kubernetes-map-type",
                "xKubernetesMapType",
            ),
            (
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
                "x-kubernetes-validations",
                "xKubernetesValidations",
            ),
        ],
    },
];

struct Joiner<'a> {
    set: &'a ProtoSet,
    ir: &'a Ir,
    go_values: &'a GoValues,
    used: BTreeSet<&'static str>,
}

/// Joins every IR struct that has a message; fails on any disagreement
/// not covered by [`FIXUPS`], on a fixup that matched nothing, and on a
/// [`GoValues`] table (`label` names its file) that does not describe the
/// result.
pub fn join(
    ir: &Ir,
    set: &ProtoSet,
    go_values: &GoValues,
    label: &str,
) -> Result<Codecs, ProtoError> {
    join_with(ir, set, FIXUPS, go_values, label)
}

/// [`join`] with a chosen fixup list (tests).
pub fn join_with(
    ir: &Ir,
    set: &ProtoSet,
    fixups: &[Fixup],
    go_values: &GoValues,
    label: &str,
) -> Result<Codecs, ProtoError> {
    let mut j = Joiner {
        set,
        ir,
        go_values,
        used: BTreeSet::new(),
    };
    let mut codecs = Codecs::default();
    let mut errors = Vec::new();
    for (definition, t) in &ir.types {
        let Some(name) = message_name(definition) else {
            continue;
        };
        let Some(message) = set.messages.get(&name) else {
            continue;
        };
        // A type only older versions serve is JSON-only: the proto files
        // are the newest's, whose message of that name may have moved on.
        if t.gate.as_ref().is_some_and(|g| !g.has_newest()) {
            continue;
        }
        let mismatch = |reason: String| ProtoError::Mismatch {
            definition: definition.clone(),
            message: name.clone(),
            reason,
        };
        let codec = match &t.kind {
            TypeKind::Struct { .. } => match j.struct_codec(definition, &name, message, fixups) {
                Ok(c) => c,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            },
            TypeKind::Opaque if message.fields.is_empty() => Codec {
                message: name.clone(),
                fields: Vec::new(),
                opaque: true,
            },
            TypeKind::Opaque => {
                return Err(mismatch("an opaque JSON map, a message with fields".into()));
            }
            // Its codec, if any, is hand-written (`ir::HAND_WRITTEN`); a
            // reference to one without is refused by `message_ref`.
            TypeKind::HandWritten { .. } => continue,
            TypeKind::Enum { .. } | TypeKind::Untagged { .. } | TypeKind::Reuse { .. } => {
                return Err(mismatch("a CRD-only kind of type".into()));
            }
        };
        codecs.types.insert(definition.clone(), codec);
    }
    if !errors.is_empty() {
        return Err(ProtoError::Mismatches {
            count: errors.len(),
            list: errors.iter().map(|e| format!("\n  {e}")).collect(),
        });
    }
    go_values.check(label, ir, &codecs)?;
    if let Some(f) = fixups.iter().find(|f| !j.used.contains(f.name)) {
        return Err(ProtoError::FixupNoLongerApplies {
            fixup: f.name,
            reason: format!("none of its renames {:?} is needed", f.renames),
        });
    }
    Ok(codecs)
}

impl Joiner<'_> {
    fn struct_codec(
        &mut self,
        definition: &str,
        name: &str,
        message: &Message,
        fixups: &[Fixup],
    ) -> Result<Codec, ProtoError> {
        let mismatch = |reason: String| ProtoError::Mismatch {
            definition: definition.to_owned(),
            message: name.to_owned(),
            reason,
        };
        let Some(TypeKind::Struct { fields }) = self.ir.types.get(definition).map(|t| &t.kind)
        else {
            return Err(mismatch("not a struct".into()));
        };
        let mut left: Vec<&Field> = fields.iter().collect();
        let out = self
            .match_message(definition, message, &mut left, fixups)
            .map_err(mismatch)?;
        // TypeMeta is inlined in Go and absent from the message: the
        // envelope (`runtime.Unknown`) carries apiVersion and kind.
        left.retain(|f| f.json != "apiVersion" && f.json != "kind");
        // A field only older versions have is not in the newest's proto
        // files: JSON-only.
        left.retain(|f| {
            f.gate
                .as_ref()
                .is_none_or(crate::versions::Gate::has_newest)
        });
        if let Some(f) = left.first() {
            return Err(mismatch(format!("field {:?} has no proto field", f.json)));
        }
        Ok(Codec {
            message: name.to_owned(),
            fields: out,
            opaque: false,
        })
    }

    /// Matches every field of `message` to a JSON field of `left` (which
    /// loses the ones matched): by name (or a [`FIXUPS`] rename), or, for a
    /// message-typed field with no JSON field of its name, as a Go embedded
    /// struct whose fields are the struct's own JSON fields.
    fn match_message(
        &mut self,
        definition: &str,
        message: &Message,
        left: &mut Vec<&Field>,
        fixups: &[Fixup],
    ) -> Result<Vec<FieldCodec>, String> {
        let mut out = Vec::new();
        for p in &message.fields {
            // One JSON field, or its two forms under complementary version
            // gates (required in some versions, optional in others).
            let matches = |f: &&Field| {
                let renamed = fixups.iter().find_map(|x| x.rename(definition, &f.json));
                renamed.unwrap_or(f.json.as_str()) == p.name
            };
            let found: Vec<&Field> = left.iter().copied().filter(matches).collect();
            left.retain(|f| !matches(f));
            for f in &found {
                if let Some(x) = fixups
                    .iter()
                    .find(|x| x.rename(definition, &f.json).is_some())
                {
                    self.used.insert(x.name);
                }
                let shape = self
                    .shape(&f.ty, p)
                    .map_err(|reason| format!("field {:?}: {reason}", f.json))?;
                let zero_is_unset = !f.required
                    && matches!(shape, Shape::One(Elem::Scalar(_)))
                    && self.go_values.zero_is_unset(definition, &f.json);
                out.push(FieldCodec {
                    rust: f.rust.clone(),
                    json: f.json.clone(),
                    number: p.number,
                    shape,
                    required: f.required,
                    boxed: f.boxed,
                    zero_is_unset,
                    gate: f.gate.clone(),
                });
            }
            if !found.is_empty() {
                continue;
            }
            let embedded = match (&p.label, self.set.messages.get(&p.ty)) {
                (Label::Optional, Some(inner)) if !inner.fields.is_empty() => inner,
                _ => {
                    return Err(format!(
                        "proto field {:?} ({}) has no JSON field",
                        p.name, p.number
                    ));
                }
            };
            let inner = self
                .match_message(definition, embedded, left, fixups)
                .map_err(|reason| format!("embedded {:?} ({}): {reason}", p.name, p.ty))?;
            out.push(FieldCodec {
                rust: String::new(),
                json: p.name.clone(),
                number: p.number,
                shape: Shape::Embedded(inner),
                required: true,
                boxed: false,
                zero_is_unset: false,
                gate: None,
            });
        }
        Ok(out)
    }

    fn shape(&self, ty: &Ty, p: &ProtoField) -> Result<Shape, String> {
        match (&p.label, ty) {
            (Label::Optional, _) => self.elem(ty, &p.ty).map(Shape::One),
            (Label::Repeated, Ty::Vec(inner)) => self.elem(inner, &p.ty).map(Shape::Repeated),
            (Label::Map, Ty::Map(inner)) => self.elem(inner, &p.ty).map(Shape::Map),
            (label, ty) => Err(format!("{label:?} {} against {ty:?}", p.ty)),
        }
    }

    fn elem(&self, ty: &Ty, proto: &str) -> Result<Elem, String> {
        if let Some(s) = Scalar::of(ty, proto) {
            return Ok(Elem::Scalar(s));
        }
        match ty {
            Ty::Ref(d) if message_name(d).as_deref() == Some(proto) => match d.as_str() {
                "io.k8s.apimachinery.pkg.apis.meta.v1.Time" => Ok(Elem::Time { micro: false }),
                "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime" => Ok(Elem::Time { micro: true }),
                _ => self.message_ref(d).map(|()| Elem::Message),
            },
            Ty::Vec(inner) => {
                let wrapper = self
                    .set
                    .messages
                    .get(proto)
                    .ok_or_else(|| format!("{proto} against a list"))?;
                match wrapper.fields.as_slice() {
                    [f] if f.name == "items" && f.number == 1 && f.label == Label::Repeated => {
                        Scalar::of(inner, &f.ty)
                            .map(Elem::Wrapped)
                            .ok_or_else(|| format!("wrapper {proto} of {} against {inner:?}", f.ty))
                    }
                    _ => Err(format!("{proto} is no list wrapper")),
                }
            }
            _ => Err(format!("{proto} against {ty:?}")),
        }
    }

    /// A referenced definition must have a codec: a struct with a message
    /// (joined in the same run) or a hand-written type with its own.
    fn message_ref(&self, definition: &str) -> Result<(), String> {
        match self.ir.types.get(definition).map(|t| &t.kind) {
            Some(TypeKind::HandWritten { .. })
                if hand_written(definition).is_some_and(|h| h.codec) =>
            {
                Ok(())
            }
            Some(TypeKind::HandWritten { .. }) => {
                Err(format!("hand-written {definition} has no protobuf codec"))
            }
            Some(_) => match message_name(definition) {
                Some(m) if self.set.messages.contains_key(&m) => Ok(()),
                _ => Err(format!("{definition} has no proto message")),
            },
            None => Err(format!("unknown definition {definition}")),
        }
    }
}
