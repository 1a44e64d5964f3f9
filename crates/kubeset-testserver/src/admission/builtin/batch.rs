//! The batch group (`pkg/apis/batch/validation`): Jobs (counts, completion
//! mode, a template that restarts `OnFailure` or `Never`, the generated or
//! manual selector) and CronJobs (the schedule as robfig/cron's standard
//! parser reads it, the concurrency policy, the job template).

use serde_json::{Value, json};

use super::pod::template;
use super::{Errs, has, int, label_selector, list, s, selects_template};

/// The template labels and selector keys the Job registry generates.
const GENERATED: &[&str] = &[
    "controller-uid",
    "job-name",
    "batch.kubernetes.io/controller-uid",
    "batch.kubernetes.io/job-name",
];

/// `validateJobSpec` of the Job spec at `path` (a Job's `spec`, a
/// CronJob's `spec.jobTemplate.spec`).
fn job_spec(e: &mut Errs, spec: &Value, path: &str) {
    for key in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
    ] {
        e.nonnegative(&format!("{path}.{key}"), int(spec, key));
    }
    if has(spec, "maxFailedIndexes") && !has(spec, "backoffLimitPerIndex") {
        e.required(
            &format!("{path}.backoffLimitPerIndex"),
            "when maxFailedIndexes is specified",
        );
    }
    let mode = spec.get("completionMode").and_then(Value::as_str);
    if let Some(m) = mode.filter(|m| !["NonIndexed", "Indexed"].contains(m)) {
        e.not_supported(
            &format!("{path}.completionMode"),
            &json!(m),
            &["NonIndexed", "Indexed"],
        );
    }
    if mode != Some("Indexed") {
        for key in ["backoffLimitPerIndex", "maxFailedIndexes"] {
            if let Some(v) = spec.get(key).filter(|v| !v.is_null()) {
                e.invalid(
                    &format!("{path}.{key}"),
                    v,
                    "requires indexed completion mode",
                );
            }
        }
    }
    let tp = format!("{path}.template");
    template(e, &spec["template"], &tp);
    let rp = s(&spec["template"]["spec"], "restartPolicy");
    let rpath = format!("{tp}.spec.restartPolicy");
    match rp {
        "" | "Always" => e.required(&rpath, "valid values: \"OnFailure\", \"Never\""),
        "OnFailure" | "Never" => {
            if has(spec, "podFailurePolicy") && rp != "Never" {
                e.invalid(
                    &rpath,
                    &json!(rp),
                    "only \"Never\" is supported when podFailurePolicy is specified",
                );
            }
        }
        other => e.not_supported(&rpath, &json!(other), &["OnFailure", "Never"]),
    }
}

/// `ValidateJob` / `ValidateJobUpdate`. On create without
/// `manualSelector` the registry generates the selector: one the client
/// gave is refused unless it only names the generated labels. An update
/// checks the spec twice (the registry runs `ValidateJob` and then
/// `ValidateJobUpdate`); its selector rules and the template's
/// immutability are `crate::immutable`'s, pinned with their messages.
pub(crate) fn job(e: &mut Errs, obj: &Value, old: Option<&Value>) {
    let spec = &obj["spec"];
    if old.is_some() {
        job_spec(e, spec, "spec");
        job_spec(e, spec, "spec");
        return;
    }
    let manual = spec.get("manualSelector").and_then(Value::as_bool) == Some(true);
    let sel = &spec["selector"];
    let generated = !manual;
    if generated && !sel.is_null() && !only_generated(sel) {
        e.invalid_selector("spec.selector", sel, "`selector` not auto-generated");
    }
    job_spec(e, spec, "spec");
    if generated {
        // The generated selector selects the generated labels; what the
        // client's selector adds is checked against its labels.
        if !sel.is_null() {
            label_selector(e, sel, "spec.selector");
        }
        return;
    }
    if sel.is_null() {
        e.required("spec.selector", "");
    } else if !label_selector(e, sel, "spec.selector") {
        return;
    }
    selects_template(e, sel, &spec["template"]);
}

/// Whether a selector names only the labels the registry generates.
fn only_generated(sel: &Value) -> bool {
    list(sel, "matchExpressions").is_empty()
        && sel
            .get("matchLabels")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .all(|(k, _)| GENERATED.contains(&k.as_str()))
}

/// `ValidateCronJobCreate` / `ValidateCronJobUpdate` (the
/// concurrencyPolicy defaults to Allow).
pub(crate) fn cronjob(e: &mut Errs, obj: &Value, old: Option<&Value>) {
    let spec = &obj["spec"];
    let schedule = s(spec, "schedule");
    if schedule.is_empty() {
        e.required("spec.schedule", "");
    } else {
        if let Err(msg) = parse_schedule(schedule) {
            e.invalid("spec.schedule", &json!(schedule), &msg);
        }
        let allow_tz = old.is_some_and(|o| s(&o["spec"], "schedule").contains("TZ"));
        if !allow_tz && schedule.contains("TZ") {
            e.invalid(
                "spec.schedule",
                &json!(schedule),
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            );
        }
    }
    e.nonnegative(
        "spec.startingDeadlineSeconds",
        int(spec, "startingDeadlineSeconds"),
    );
    let cp = s(spec, "concurrencyPolicy");
    if !["", "Allow", "Forbid", "Replace"].contains(&cp) {
        e.not_supported(
            "spec.concurrencyPolicy",
            &json!(cp),
            &["Allow", "Forbid", "Replace"],
        );
    }
    let jt = &spec["jobTemplate"]["spec"];
    job_spec(e, jt, "spec.jobTemplate.spec");
    if let Some(sel) = jt.get("selector").filter(|v| !v.is_null()) {
        e.invalid_selector(
            "spec.jobTemplate.spec.selector",
            sel,
            "`selector` will be auto-generated",
        );
    }
    if jt.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        e.not_supported(
            "spec.jobTemplate.spec.manualSelector",
            &json!(true),
            &["nil", "false"],
        );
    }
    for key in ["successfulJobsHistoryLimit", "failedJobsHistoryLimit"] {
        e.nonnegative(&format!("spec.{key}"), int(spec, key));
    }
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if old.is_none() && name.len() > 52 {
        e.invalid(
            "metadata.name",
            &json!(name),
            "must be no more than 52 characters",
        );
    }
}

/// A cron schedule as robfig/cron v3's standard parser takes it: five
/// fields (minute, hour, day of month, month, day of week) or a
/// descriptor (`@hourly`, `@every 5m`, …), optionally after `TZ=`.
pub(crate) fn parse_schedule(spec: &str) -> Result<(), String> {
    let mut spec = spec.trim();
    if let Some(rest) = spec
        .strip_prefix("TZ=")
        .or_else(|| spec.strip_prefix("CRON_TZ="))
    {
        let (_, after) = rest
            .split_once(' ')
            .ok_or_else(|| format!("provided bad location {rest}: unknown time zone {rest}"))?;
        spec = after.trim();
    }
    if let Some(d) = spec.strip_prefix('@') {
        return descriptor(d, spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    const BOUNDS: [(u32, u32, &[&str]); 5] = [
        (0, 59, &[]),
        (0, 23, &[]),
        (1, 31, &[]),
        (
            1,
            12,
            &[
                "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
            ],
        ),
        (0, 6, &["sun", "mon", "tue", "wed", "thu", "fri", "sat"]),
    ];
    for (f, (lo, hi, names)) in fields.iter().zip(BOUNDS) {
        for part in f.split(',') {
            cron_range(part, lo, hi, names)?;
        }
    }
    Ok(())
}

fn descriptor(d: &str, spec: &str) -> Result<(), String> {
    const NAMED: &[&str] = &[
        "yearly", "annually", "monthly", "weekly", "daily", "midnight", "hourly",
    ];
    if NAMED.contains(&d) {
        return Ok(());
    }
    if let Some(dur) = d.strip_prefix("every ") {
        return go_duration(dur.trim()).then_some(()).ok_or_else(|| {
            format!(
                "failed to parse duration {spec}: time: invalid duration \"{}\"",
                dur.trim()
            )
        });
    }
    Err(format!("unrecognized descriptor: {spec}"))
}

/// Whether `d` is a Go duration (`1h30m`, `90s`, `1.5h`).
fn go_duration(d: &str) -> bool {
    let mut rest = d;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if n == 0 {
            return false;
        }
        rest = &rest[n..];
        let unit = ["ns", "us", "µs", "ms", "s", "m", "h"]
            .iter()
            .filter(|u| rest.starts_with(**u))
            .max_by_key(|u| u.len());
        let Some(u) = unit else { return false };
        rest = &rest[u.len()..];
    }
    true
}

/// One comma-separated part of a field: `*`, `?`, `N`, `N-M`, each with
/// an optional `/step`.
fn cron_range(part: &str, lo: u32, hi: u32, names: &[&str]) -> Result<(), String> {
    let (range, step) = match part.split_once('/') {
        Some((r, s)) => (r, Some(s)),
        None => (part, None),
    };
    let value = |s: &str| -> Result<u32, String> {
        if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(s)) {
            return Ok(lo + u32::try_from(i).unwrap_or(0));
        }
        s.parse::<u32>().map_err(|_| {
            format!("failed to parse int from {s}: strconv.Atoi: parsing \"{s}\": invalid syntax")
        })
    };
    let (start, end) = if range == "*" || range == "?" {
        (lo, hi)
    } else if let Some((a, b)) = range.split_once('-') {
        (value(a)?, value(b)?)
    } else {
        let v = value(range)?;
        (v, if step.is_some() { hi } else { v })
    };
    if start < lo {
        return Err(format!(
            "beginning of range ({start}) below minimum ({lo}): {part}"
        ));
    }
    if end > hi {
        return Err(format!("end of range ({end}) above maximum ({hi}): {part}"));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {part}"
        ));
    }
    if let Some(st) = step {
        let n = st.parse::<u32>().map_err(|_| {
            format!("failed to parse int from {st}: strconv.Atoi: parsing \"{st}\": invalid syntax")
        })?;
        if n == 0 {
            return Err(format!("step of range should be a positive number: {part}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_as_robfig_cron() {
        for ok in [
            "*/5 * * * *",
            "0 0 1 jan mon",
            "@hourly",
            "@every 1h30m",
            "0-30/10 9-17 * * 1-5",
            "TZ=UTC 0 * * * *",
        ] {
            assert_eq!(parse_schedule(ok), Ok(()), "{ok}");
        }
        for bad in [
            "every day",
            "61 * * * *",
            "* * * *",
            "@often",
            "@every x",
            "*/0 * * * *",
        ] {
            assert!(parse_schedule(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn jobs() {
        let mut e = Errs::default();
        let obj =
            json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}});
        job(&mut e, &obj, None);
        assert_eq!(e.0[0].0, "spec.template.spec.restartPolicy");
        let mut e = Errs::default();
        let obj = json!({"spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}});
        job(&mut e, &obj, None);
        let fields: Vec<_> = e.0.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(fields, ["spec.selector"]);
    }
}
