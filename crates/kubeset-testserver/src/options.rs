//! The query parameters of a verb, read and checked as kube-apiserver's
//! handlers read and check them before the verb runs.
//!
//! Two steps, as upstream:
//! 1. **Decoding** (`ParameterCodec.DecodeParameters`): a number that is
//!    not one (`limit=x`, `timeoutSeconds=x`) is `400 BadRequest`.
//! 2. **Validation** (apimachinery's `ValidateCreateOptions`,
//!    `ValidateUpdateOptions`, `ValidatePatchOptions`, `ValidateListOptions`):
//!    `422 Invalid` on the options' kind in `meta.k8s.io`, with one cause
//!    per wrong field: `dryRun` other than `All`, `fieldValidation` other
//!    than `Ignore`/`Warn`/`Strict`, `fieldManager` over 128 bytes or with
//!    a character that is not printable, `force` on a patch that is not an
//!    apply, apply without `fieldManager`, `resourceVersionMatch` unknown,
//!    without a `resourceVersion`, with `continue`, or `Exact` with `0`.
//!
//! A list's `resourceVersion` that is not a number is `400` too (the
//! storage's `invalid resource version`). Unknown parameters are ignored,
//! as upstream ignores them. Boolean parameters are lenient as Go's query
//! conversion is: `0` and `false` (any case) are false, anything else true.

use std::time::Duration;

use crate::status::ApiError;
use crate::wire::Query;

/// `validation.FieldManagerMaxLength`.
const FIELD_MANAGER_MAX: usize = 128;

/// A write verb whose options are validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Write {
    /// POST (`CreateOptions`).
    Create,
    /// PUT (`UpdateOptions`).
    Update,
    /// PATCH (`PatchOptions`); `apply`: server-side apply.
    Patch {
        /// The patch is an apply configuration.
        apply: bool,
    },
}

impl Write {
    fn options_kind(self) -> &'static str {
        match self {
            Self::Create => "CreateOptions",
            Self::Update => "UpdateOptions",
            Self::Patch { .. } => "PatchOptions",
        }
    }
}

/// One failed check: the field, the cause's reason, its message.
type Cause = (&'static str, &'static str, String);

/// Checks the options of a create, update or patch.
pub(crate) fn check_write(query: &Query, verb: Write) -> Result<(), ApiError> {
    let mut causes = Vec::new();
    if let Write::Patch { apply } = verb {
        if !apply && query.get("force").is_some() {
            causes.push((
                "force",
                "FieldValueForbidden",
                "Forbidden: may not be specified for non-apply patch".to_owned(),
            ));
        }
        if apply && query.get("fieldManager").is_none_or(str::is_empty) {
            causes.push((
                "fieldManager",
                "FieldValueRequired",
                "Required value: is required for apply patch".to_owned(),
            ));
        }
    }
    field_manager(query.get("fieldManager").unwrap_or(""), &mut causes);
    dry_run(query, &mut causes);
    field_validation(query.get("fieldValidation").unwrap_or(""), &mut causes);
    invalid(verb.options_kind(), &causes)
}

fn invalid(kind: &str, causes: &[Cause]) -> Result<(), ApiError> {
    if causes.is_empty() {
        return Ok(());
    }
    let causes: Vec<(&str, &str, String)> =
        causes.iter().map(|(f, r, m)| (*f, *r, m.clone())).collect();
    Err(ApiError::invalid_kind(kind, "meta.k8s.io", "", &causes))
}

fn field_manager(m: &str, causes: &mut Vec<Cause>) {
    if m.len() > FIELD_MANAGER_MAX {
        causes.push((
            "fieldManager",
            "FieldValueTooLong",
            format!("Too long: may not be more than {FIELD_MANAGER_MAX} bytes"),
        ));
    }
    for (i, c) in m.char_indices().filter(|(_, c)| !is_printable(*c)) {
        causes.push((
            "fieldManager",
            "FieldValueInvalid",
            format!(
                "Invalid value: {}: invalid character U+{:04X} (at position {i})",
                quote(m),
                u32::from(c)
            ),
        ));
    }
}

/// Go's `unicode.IsPrint` for what a query can carry: no control
/// characters, and of the spaces only U+0020.
fn is_printable(c: char) -> bool {
    !c.is_control() && (c == ' ' || !c.is_whitespace())
}

fn dry_run(query: &Query, causes: &mut Vec<Cause>) {
    let values: Vec<&str> = query.all("dryRun").collect();
    if values.iter().any(|v| *v != "All") {
        let list = values.iter().map(|v| quote(v)).collect::<Vec<_>>();
        causes.push((
            "dryRun",
            "FieldValueNotSupported",
            format!(
                "Unsupported value: []string{{{}}}: supported values: \"All\"",
                list.join(", ")
            ),
        ));
    }
}

fn field_validation(v: &str, causes: &mut Vec<Cause>) {
    if !["", "Ignore", "Warn", "Strict"].contains(&v) {
        causes.push((
            "fieldValidation",
            "FieldValueNotSupported",
            format!(
                "Unsupported value: {}: supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"",
                quote(v)
            ),
        ));
    }
}

/// A Go `%q` of a string, near enough for messages.
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// What a list or watch reads from its query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ListOptions {
    /// `limit`; `None` for none, zero or negative (no limit, as upstream).
    pub(crate) limit: Option<usize>,
    /// `resourceVersion`; `None` when absent or empty.
    pub(crate) resource_version: Option<u64>,
    /// `timeoutSeconds`.
    pub(crate) timeout: Option<Duration>,
}

/// Decodes and validates the options of a list (`watch`: of a watch).
pub(crate) fn list(query: &Query, watch: bool) -> Result<ListOptions, ApiError> {
    let limit = number(query, "limit")?;
    let timeout = number(query, "timeoutSeconds")?;
    let mut causes = Vec::new();
    if watch {
        watch_match(query, &mut causes);
    } else {
        list_match(query, &mut causes);
    }
    invalid("ListOptions", &causes)?;
    let resource_version = match query.get("resourceVersion").filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => Some(s.parse::<u64>().map_err(|e| {
            ApiError::bad_request(format!(
                "invalid resource version: resourceVersion: Invalid value: {}: strconv.ParseUint: parsing {}: {}",
                quote(s),
                quote(s),
                parse_reason(&e)
            ))
        })?),
    };
    Ok(ListOptions {
        limit: limit
            .filter(|n| *n > 0)
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        resource_version,
        timeout: timeout
            .filter(|n| *n > 0)
            .map(|n| Duration::from_secs(n.unsigned_abs())),
    })
}

/// An `int64` parameter; empty or absent is `None`.
fn number(query: &Query, key: &str) -> Result<Option<i64>, ApiError> {
    match query.get(key).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => s.parse::<i64>().map(Some).map_err(|e| {
            ApiError::bad_request(format!(
                "strconv.ParseInt: parsing {}: {}",
                quote(s),
                parse_reason(&e)
            ))
        }),
    }
}

fn parse_reason(e: &std::num::ParseIntError) -> &'static str {
    use std::num::IntErrorKind::{NegOverflow, PosOverflow};
    match e.kind() {
        PosOverflow | NegOverflow => "value out of range",
        _ => "invalid syntax",
    }
}

const MATCH: &str = "resourceVersionMatch";

/// `ValidateListOptions` of a list.
fn list_match(query: &Query, causes: &mut Vec<Cause>) {
    if query.get("sendInitialEvents").is_some() {
        causes.push((
            "sendInitialEvents",
            "FieldValueForbidden",
            "Forbidden: sendInitialEvents is forbidden for list".to_owned(),
        ));
    }
    let Some(m) = query.get(MATCH).filter(|m| !m.is_empty()) else {
        return;
    };
    let rv = query.get("resourceVersion").unwrap_or("");
    let forbidden = |why: &str| (MATCH, "FieldValueForbidden", format!("Forbidden: {why}"));
    if rv.is_empty() {
        causes.push(forbidden(
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        ));
    }
    if query.get("continue").is_some_and(|c| !c.is_empty()) {
        causes.push(forbidden(
            "resourceVersionMatch is forbidden when continue is provided",
        ));
    }
    if m != "Exact" && m != "NotOlderThan" {
        causes.push((
            MATCH,
            "FieldValueNotSupported",
            format!(
                "Unsupported value: {}: supported values: \"Exact\", \"NotOlderThan\", \"\"",
                quote(m)
            ),
        ));
    }
    if m == "Exact" && rv == "0" {
        causes.push(forbidden(
            "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
        ));
    }
}

/// `ValidateListOptions` of a watch (the `WatchList` feature is on).
fn watch_match(query: &Query, causes: &mut Vec<Cause>) {
    let m = query.get(MATCH).unwrap_or("");
    let initial = query.get("sendInitialEvents").is_some();
    let forbidden = |why: &str| (MATCH, "FieldValueForbidden", format!("Forbidden: {why}"));
    if initial && m != "NotOlderThan" {
        causes.push(forbidden(
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ));
    }
    if m.is_empty() {
        return;
    }
    if !initial {
        causes.push(forbidden(
            "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        ));
    }
    if m != "NotOlderThan" {
        causes.push((
            MATCH,
            "FieldValueNotSupported",
            format!(
                "Unsupported value: {}: supported values: \"NotOlderThan\"",
                quote(m)
            ),
        ));
    }
    if query.get("continue").is_some_and(|c| !c.is_empty()) {
        causes.push(forbidden(
            "resourceVersionMatch is forbidden when continue is provided",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(q: &str, verb: Write) -> Result<(), ApiError> {
        check_write(&Query::parse(Some(q)), verb)
    }

    fn fields(e: &ApiError) -> Vec<(String, String)> {
        let d = e.details.as_ref().expect("details");
        d["causes"]
            .as_array()
            .expect("causes")
            .iter()
            .map(|c| {
                (
                    c["field"].as_str().unwrap().to_owned(),
                    c["reason"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn write_options_are_validated_as_upstream() {
        assert!(
            write(
                "dryRun=All&fieldManager=m&fieldValidation=Strict",
                Write::Create
            )
            .is_ok()
        );
        let e = write("dryRun=Maybe", Write::Create).unwrap_err();
        assert_eq!((e.code, e.reason), (422, "Invalid"));
        assert_eq!(e.details.as_ref().unwrap()["kind"], "CreateOptions");
        assert_eq!(e.details.as_ref().unwrap()["group"], "meta.k8s.io");
        assert_eq!(
            fields(&e),
            [("dryRun".into(), "FieldValueNotSupported".into())]
        );
        let e = write("dryRun=All&dryRun=x", Write::Update).unwrap_err();
        assert_eq!(e.details.as_ref().unwrap()["kind"], "UpdateOptions");
        let long = format!("fieldManager={}", "m".repeat(129));
        let e = write(&long, Write::Create).unwrap_err();
        assert_eq!(
            fields(&e),
            [("fieldManager".into(), "FieldValueTooLong".into())]
        );
        assert!(write(&format!("fieldManager={}", "m".repeat(128)), Write::Create).is_ok());
        let e = write("fieldManager=a%01", Write::Create).unwrap_err();
        assert_eq!(
            fields(&e),
            [("fieldManager".into(), "FieldValueInvalid".into())]
        );
        let e = write("fieldValidation=Loud", Write::Create).unwrap_err();
        assert_eq!(
            fields(&e),
            [("fieldValidation".into(), "FieldValueNotSupported".into())]
        );
    }

    #[test]
    fn force_and_field_manager_depend_on_the_patch_type() {
        let e = write("force=false", Write::Patch { apply: false }).unwrap_err();
        assert_eq!(e.details.as_ref().unwrap()["kind"], "PatchOptions");
        assert_eq!(fields(&e), [("force".into(), "FieldValueForbidden".into())]);
        assert!(write("force=true&fieldManager=m", Write::Patch { apply: true }).is_ok());
        let e = write("force=true", Write::Patch { apply: true }).unwrap_err();
        assert_eq!(
            fields(&e),
            [("fieldManager".into(), "FieldValueRequired".into())]
        );
        // Every cause at once, in upstream's order.
        let e = write(
            "force=1&dryRun=x&fieldValidation=y",
            Write::Patch { apply: false },
        )
        .unwrap_err();
        let names: Vec<String> = fields(&e).into_iter().map(|f| f.0).collect();
        assert_eq!(names, ["force", "dryRun", "fieldValidation"]);
    }

    fn list_of(q: &str) -> Result<ListOptions, ApiError> {
        list(&Query::parse(Some(q)), false)
    }

    #[test]
    fn list_options_decode_then_validate() {
        let ok = list_of("limit=5&resourceVersion=7&timeoutSeconds=3").unwrap();
        assert_eq!(ok.limit, Some(5));
        assert_eq!(ok.resource_version, Some(7));
        assert_eq!(ok.timeout, Some(Duration::from_secs(3)));
        assert_eq!(list_of("limit=-1").unwrap().limit, None);
        assert_eq!(list_of("limit=").unwrap().limit, None);
        for q in ["limit=x", "timeoutSeconds=1.5", "resourceVersion=abc"] {
            let e = list_of(q).unwrap_err();
            assert_eq!((e.code, e.reason), (400, "BadRequest"), "{q}");
        }
        let cases = [
            ("resourceVersionMatch=NotOlderThan", "FieldValueForbidden"),
            (
                "resourceVersion=0&resourceVersionMatch=Exact",
                "FieldValueForbidden",
            ),
            (
                "resourceVersion=1&resourceVersionMatch=Sometimes",
                "FieldValueNotSupported",
            ),
            ("sendInitialEvents=true", "FieldValueForbidden"),
        ];
        for (q, reason) in cases {
            let e = list_of(q).unwrap_err();
            assert_eq!((e.code, e.reason), (422, "Invalid"), "{q}");
            assert_eq!(e.details.as_ref().unwrap()["kind"], "ListOptions");
            assert_eq!(fields(&e)[0].1, reason, "{q}");
        }
        assert!(list_of("resourceVersion=0&resourceVersionMatch=NotOlderThan").is_ok());
        assert!(list_of("resourceVersion=5&resourceVersionMatch=Exact").is_ok());
    }

    #[test]
    fn watch_options_allow_only_a_streaming_list_match() {
        let w = |q: &str| list(&Query::parse(Some(q)), true);
        assert!(
            w("sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
                .is_ok()
        );
        assert!(w("resourceVersion=5&timeoutSeconds=10").is_ok());
        assert_eq!(
            w("resourceVersionMatch=NotOlderThan").unwrap_err().code,
            422
        );
        assert_eq!(w("sendInitialEvents=true").unwrap_err().code, 422);
        assert_eq!(w("resourceVersion=x").unwrap_err().code, 400);
    }
}
