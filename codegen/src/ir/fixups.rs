//! Upstream quirks and facts the spec lacks, each applied by a named
//! function that fails when it no longer applies (so a new Kubernetes
//! version cannot silently change them): [`Fixup::Input`] ones edit the
//! spec before lowering, [`Fixup::Ir`] ones the lowered IR.

use super::tables::{RESPONSE_OVERRIDES, SHORT_NAMES};
use super::{Ir, OperationResponse};
use crate::error::CodegenError;
use crate::names;
use crate::spec::Input;

/// `events.k8s.io/v1` `Event.eventTime` is marked required, but events
/// written through the core/v1 API come back with `"eventTime": null`.
/// Make it optional so that such events round-trip.
pub fn event_time_nullable(input: &mut Input) -> Result<(), CodegenError> {
    optionalise(
        input,
        "event_time_nullable",
        "io.k8s.api.events.v1.Event",
        "eventTime",
    )
}

/// `core/v1` `Event.eventTime` (optional) is fine; the events/v1 series
/// `lastObservedTime` is required but can equally be unset on old
/// events written through core/v1.
pub fn event_series_last_observed_nullable(input: &mut Input) -> Result<(), CodegenError> {
    optionalise(
        input,
        "event_series_last_observed_nullable",
        "io.k8s.api.events.v1.EventSeries",
        "lastObservedTime",
    )
}

fn optionalise(
    input: &mut Input,
    fixup: &'static str,
    definition: &str,
    property: &str,
) -> Result<(), CodegenError> {
    let Some(schema) = input.definitions.get_mut(definition) else {
        return Err(no_longer(fixup, format!("{definition} is not in the spec")));
    };
    let before = schema.required.len();
    schema.required.retain(|r| r != property);
    if schema.required.len() == before {
        return Err(no_longer(
            fixup,
            format!("{definition}.{property} is no longer required"),
        ));
    }
    // Optional in every version, whatever an older one said.
    input
        .versions
        .required
        .remove(&(definition.to_owned(), property.to_owned()));
    Ok(())
}

/// Puts the kubectl short names of [`SHORT_NAMES`] on their resources
/// (every version of the group); fails for an entry whose resource is no
/// longer in the spec or already has short names.
pub fn short_names(ir: &mut Ir) -> Result<(), CodegenError> {
    for (group, plural, names) in SHORT_NAMES {
        let mut found = false;
        for r in ir
            .resources
            .iter_mut()
            .filter(|r| r.group == *group && r.plural == *plural)
        {
            if !r.short_names.is_empty() {
                return Err(no_longer(
                    "short_names",
                    format!("{group}/{plural} already has short names"),
                ));
            }
            r.short_names = names.iter().map(|n| (*n).to_owned()).collect();
            found = true;
        }
        if !found {
            return Err(no_longer(
                "short_names",
                format!("no resource {plural} in group {group:?}"),
            ));
        }
    }
    Ok(())
}

/// Answers of [`RESPONSE_OVERRIDES`]: the response of every matching
/// subresource operation becomes the definition the server really sends;
/// fails when the definition or the operation is gone, or the spec already
/// names that response.
pub fn status_responses(ir: &mut Ir) -> Result<(), CodegenError> {
    const NAME: &str = "status_responses";
    for (sub, method, definition) in RESPONSE_OVERRIDES {
        if !ir.types.contains_key(*definition) {
            return Err(no_longer(NAME, format!("{definition} is not in the spec")));
        }
        let mut found = false;
        for op in ir
            .subresource_operations
            .iter_mut()
            .filter(|op| op.subresource == *sub && op.method == *method)
        {
            let wanted = OperationResponse::Definition((*definition).to_owned());
            if op.response == wanted {
                return Err(no_longer(
                    NAME,
                    format!(
                        "the spec now names {definition} for {method} {}/{sub}",
                        op.plural
                    ),
                ));
            }
            op.response = wanted;
            found = true;
        }
        if !found {
            return Err(no_longer(
                NAME,
                format!("no {method} operation on a …/{{name}}/{sub} path"),
            ));
        }
    }
    Ok(())
}

/// The clientset's naming tables ([`names::RENAMES`],
/// [`names::SUBRESOURCE_WORDS`]) still name operations of the spec: fails
/// for an entry no subresource operation matches. Checks only.
pub fn client_names(ir: &mut Ir) -> Result<(), CodegenError> {
    let has = |sub: &str, method: Option<&str>| {
        ir.subresource_operations
            .iter()
            .any(|op| op.subresource == sub && method.is_none_or(|m| op.method == m))
    };
    for (sub, method, name) in names::RENAMES {
        if !has(sub, Some(method)) {
            return Err(no_longer(
                "client_names",
                format!("no {method} …/{{name}}/{sub} operation for `{name}`"),
            ));
        }
    }
    for (sub, _) in names::SUBRESOURCE_WORDS {
        if !has(sub, None) {
            return Err(no_longer("client_names", format!("no subresource {sub}")));
        }
    }
    Ok(())
}

fn no_longer(fixup: &'static str, reason: String) -> CodegenError {
    CodegenError::FixupNoLongerApplies { fixup, reason }
}

/// A fixup: edits the input or the IR, fails when its quirk is gone.
#[derive(Debug, Clone, Copy)]
pub enum Fixup {
    /// Applied to the spec input, before lowering.
    Input(fn(&mut Input) -> Result<(), CodegenError>),
    /// Applied to the lowered IR.
    Ir(fn(&mut Ir) -> Result<(), CodegenError>),
}

/// All fixups, in order.
pub const ALL: &[(&str, Fixup)] = &[
    ("event_time_nullable", Fixup::Input(event_time_nullable)),
    (
        "event_series_last_observed_nullable",
        Fixup::Input(event_series_last_observed_nullable),
    ),
    ("short_names", Fixup::Ir(short_names)),
    ("status_responses", Fixup::Ir(status_responses)),
    ("client_names", Fixup::Ir(client_names)),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Action, ResourceIr, SubresourceOperation, TypeDef, TypeKind};
    use crate::spec::Schema;

    #[test]
    fn fixups_fail_once_upstream_is_fixed() {
        let mut input = Input::default();
        let err = event_time_nullable(&mut input).unwrap_err();
        assert!(matches!(
            err,
            CodegenError::FixupNoLongerApplies {
                fixup: "event_time_nullable",
                ..
            }
        ));
        input.definitions.insert(
            "io.k8s.api.events.v1.Event".into(),
            Schema {
                required: vec!["eventTime".into()],
                ..Schema::default()
            },
        );
        event_time_nullable(&mut input).unwrap();
        assert!(
            input.definitions["io.k8s.api.events.v1.Event"]
                .required
                .is_empty()
        );
        // Applied twice: the quirk is gone, the fixup says so.
        assert!(event_time_nullable(&mut input).is_err());
    }

    fn resource(group: &str, version: &str, plural: &str) -> ResourceIr {
        ResourceIr {
            group: group.into(),
            version: version.into(),
            plural: plural.into(),
            ..ResourceIr::default()
        }
    }

    /// Every resource of the table, in two versions where the group has two.
    fn table_ir() -> Ir {
        let mut ir = Ir::default();
        for (group, plural, _) in SHORT_NAMES {
            ir.resources.push(resource(group, "v1", plural));
        }
        ir.resources
            .push(resource("autoscaling", "v2", "horizontalpodautoscalers"));
        ir
    }

    #[test]
    fn short_names_go_on_every_version_and_fail_for_a_missing_resource() {
        let mut ir = table_ir();
        short_names(&mut ir).unwrap();
        let names = |version: &str, plural: &str| {
            ir.resources
                .iter()
                .find(|r| r.version == version && r.plural == plural)
                .map(|r| r.short_names.clone())
        };
        assert_eq!(names("v1", "pods"), Some(vec!["po".to_owned()]));
        assert_eq!(
            names("v2", "horizontalpodautoscalers"),
            Some(vec!["hpa".to_owned()])
        );
        // Applied twice: the names are already there.
        assert!(matches!(
            short_names(&mut ir),
            Err(CodegenError::FixupNoLongerApplies {
                fixup: "short_names",
                ..
            })
        ));
        // A resource gone from the spec.
        let mut ir = table_ir();
        ir.resources.retain(|r| r.plural != "componentstatuses");
        let err = short_names(&mut ir).unwrap_err();
        assert!(err.to_string().contains("componentstatuses"), "{err}");
    }

    fn operation(sub: &str, response: &str) -> SubresourceOperation {
        SubresourceOperation {
            group: String::new(),
            version: "v1".into(),
            plural: "pods".into(),
            subresource: sub.into(),
            namespaced: true,
            method: "post".into(),
            action: Action::Post,
            description: None,
            request: Some(response.into()),
            response: OperationResponse::Definition(response.into()),
            query: Vec::new(),
            gate: None,
        }
    }

    #[test]
    fn client_names_fail_for_an_operation_gone() {
        let mut ir = Ir::default();
        for (sub, method, _) in names::RENAMES {
            let mut op = operation(sub, "x");
            op.method = (*method).to_owned();
            ir.subresource_operations.push(op);
        }
        let err = client_names(&mut ir).unwrap_err();
        assert!(err.to_string().contains("ephemeralcontainers"), "{err}");
        ir.subresource_operations
            .push(operation("ephemeralcontainers", "x"));
        client_names(&mut ir).unwrap();
        ir.subresource_operations
            .retain(|op| op.subresource != "log");
        let err = client_names(&mut ir).unwrap_err();
        assert!(err.to_string().contains("`logs`"), "{err}");
    }

    #[test]
    fn status_responses_replace_the_named_response_once() {
        const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
        let base = || {
            let mut ir = Ir::default();
            ir.types.insert(
                STATUS.into(),
                TypeDef::new(STATUS.into(), "Status".into(), TypeKind::Opaque),
            );
            ir.subresource_operations = vec![
                operation("binding", "io.k8s.api.core.v1.Binding"),
                operation("eviction", "io.k8s.api.policy.v1.Eviction"),
            ];
            ir
        };
        let mut ir = base();
        status_responses(&mut ir).unwrap();
        for op in &ir.subresource_operations {
            assert_eq!(op.response, OperationResponse::Definition(STATUS.into()));
        }
        // Upstream now names Status itself: the fixup says so.
        assert!(status_responses(&mut ir).is_err());
        // The operation is gone.
        let mut ir = base();
        ir.subresource_operations
            .retain(|op| op.subresource != "binding");
        let err = status_responses(&mut ir).unwrap_err();
        assert!(err.to_string().contains("binding"), "{err}");
        // Status is gone.
        let mut ir = base();
        ir.types.clear();
        assert!(status_responses(&mut ir).is_err());
    }
}
