//! The differential suite: the same request sequences sent to the real
//! kube-apiserver and to the embedded server, their answers compared.
//!
//! The cases are data, in `tests/differential/*.cases` (format below). Each
//! case runs in a namespace of its own. Every answer is reduced to what is
//! compared ([`essence`]): the status code, the `Warning` headers, for an
//! error the Status `reason` and its causes' `field` and `reason`, for a
//! success the returned object after [`normalise`] (or the parts a step
//! names). The real server's essences are recorded in
//! `tests/golden/differential.json`; the embedded server's are compared with
//! them and the result written as `FIDELITY.md`, which must be current
//! (`KUBESET_UPDATE_FIDELITY=1` rewrites it). With a realkube instance
//! (`KUBESET_REALKUBE_ENV`), the cases also run against it and a recording
//! that no longer matches fails (`KUBESET_RECORD_GOLDEN=1` rewrites it).
//!
//! A case whose answers differ must say why (`why:`), and a case that says
//! why but agrees fails: the note is stale. So FIDELITY.md lists every
//! difference, each with its cause, and nothing else. A cause shared by many
//! cases is written once, as a note (`note TAG: text`, in
//! `00-notes.cases`), and named by its cases (`why: #TAG`); FIDELITY.md
//! counts the differences by cause.
//!
//! # Case files
//!
//! ```text
//! # a comment
//! == JSON patch                       a category: the cases below belong to it
//! case test against a missing path    a case: its name is unique in the suite
//! why: the reason it differs          only on a case that differs
//! why: #tag                           the text of `note tag: ...`
//! note tag: text                      a note many cases name
//! - POST cm {"metadata":{"name":"a"}} a step: `-` compares the code only
//! PATCH cm/a jp [{"op":"test",...}]   METHOD PATH [TYPE] [BODY]
//! @/metadata/finalizers GET cm/a      `@` compares only these parts of the body
//! ~ POST cm?dryRun=All {...}          `~` repeats the step until an admission
//!                                     policy shows (a refusal or a warning)
//! + POST cm?dryRun=All {...}          `+` repeats the step until it succeeds
//! ^ POST cm?dryRun=All {...}          `^` repeats the step until a mutating
//!                                     policy shows (a change, a refusal, a
//!                                     warning)
//! ```
//!
//! A `~` step waits for the real server's policy informer, which applies a
//! new ValidatingAdmissionPolicy or binding about a second after it is
//! stored: it is sent again (every 250 ms, at most 30 s, a hang guard) until
//! its answer is not a 2xx without warnings; the last answer is compared
//! whole. A `+` step waits the other way, until a 2xx: for a policy with
//! `paramKind`, whose parameters the real server reads through an
//! informer of their own, started with the policy (until it has synced,
//! the binding finds no parameters). A `^` step waits for a
//! MutatingAdmissionPolicy: until the answer is not a 2xx, has warnings, or
//! differs from the body sent in `data`, `spec` or `metadata`'s `labels` and
//! `annotations` (so send a kind the server does not default there, such as
//! a ConfigMap); only those parts of a success are compared. Make each a dry run, so that an attempt before the policy
//! applies leaves nothing behind.
//!
//! `KUBESET_DIFFERENTIAL_CASES=a,b` runs only the cases whose names start
//! with `a` or `b` against realkube, and with `KUBESET_RECORD_GOLDEN`
//! records only those (the others keep their recordings); the embedded
//! server still runs every case.
//!
//! PATH is absolute (`/api/v1/...`) or starts with an alias of a collection
//! in the case's namespace ([`ALIASES`]: `cm/a` is
//! `/api/v1/namespaces/{ns}/configmaps/a`). `{ns}` anywhere is the case's
//! namespace. TYPE is the body's content type: `json` (the default), `merge`,
//! `smp` (strategic merge), `jp` (JSON patch), `apply` (apply YAML; JSON is
//! YAML), `yaml`. BODY is one line of JSON.

mod common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use kubeset_testserver::TestServer;
use serde_json::{Map, Value, json};

/// Collections by short name; `{ns}` is the case's namespace.
const ALIASES: &[(&str, &str)] = &[
    ("cm", "/api/v1/namespaces/{ns}/configmaps"),
    ("secret", "/api/v1/namespaces/{ns}/secrets"),
    ("pod", "/api/v1/namespaces/{ns}/pods"),
    ("svc", "/api/v1/namespaces/{ns}/services"),
    ("sa", "/api/v1/namespaces/{ns}/serviceaccounts"),
    ("ev", "/api/v1/namespaces/{ns}/events"),
    ("deploy", "/apis/apps/v1/namespaces/{ns}/deployments"),
    ("rs", "/apis/apps/v1/namespaces/{ns}/replicasets"),
    ("job", "/apis/batch/v1/namespaces/{ns}/jobs"),
    (
        "lease",
        "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
    ),
    (
        "role",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    ),
    (
        "widget",
        "/apis/diff.kubeset.dev/v1/namespaces/{ns}/widgets",
    ),
    (
        "gadget",
        "/apis/diff.kubeset.dev/v1/namespaces/{ns}/gadgets",
    ),
    (
        "hr",
        "/apis/gateway.networking.k8s.io/v1/namespaces/{ns}/httproutes",
    ),
    ("gc", "/apis/gateway.networking.k8s.io/v1/gatewayclasses"),
    ("ruler", "/apis/diff.kubeset.dev/v1/namespaces/{ns}/rulers"),
    (
        "checker",
        "/apis/diff.kubeset.dev/v1/namespaces/{ns}/checkers",
    ),
    ("so", "/apis/keda.sh/v1alpha1/namespaces/{ns}/scaledobjects"),
    ("issuer", "/apis/cert-manager.io/v1/namespaces/{ns}/issuers"),
    (
        "pa",
        "/apis/security.istio.io/v1/namespaces/{ns}/peerauthentications",
    ),
    (
        "cert",
        "/apis/cert-manager.io/v1/namespaces/{ns}/certificates",
    ),
    (
        "crd",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    ),
    ("ns", "/api/v1/namespaces"),
    ("crole", "/apis/rbac.authorization.k8s.io/v1/clusterroles"),
];

/// Content types by their short name in a case file.
const TYPES: &[(&str, &str)] = &[
    ("json", "application/json"),
    ("merge", "application/merge-patch+json"),
    ("smp", "application/strategic-merge-patch+json"),
    ("jp", "application/json-patch+json"),
    ("apply", "application/apply-patch+yaml"),
    ("yaml", "application/yaml"),
];

/// What of a step's answer is compared.
#[derive(Debug, Clone)]
enum Compare {
    /// The status code only (setup steps).
    Code,
    /// The whole answer.
    Full,
    /// The whole answer, once an admission policy shows in it (`~`).
    Wait,
    /// The whole answer, once it is a success (`+`).
    WaitOk,
    /// The whole answer, once a mutating policy shows in it (`^`).
    WaitMutated,
    /// The code, warnings and error essence, and these JSON pointers of a
    /// successful answer's body.
    Parts(Vec<String>),
}

#[derive(Debug, Clone)]
struct Step {
    method: String,
    path: String,
    content_type: &'static str,
    body: Option<String>,
    compare: Compare,
}

#[derive(Debug, Clone)]
struct Case {
    category: String,
    name: String,
    why: Option<String>,
    steps: Vec<Step>,
}

fn cases_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/differential")
}

/// Every case of every `*.cases` file, in file and line order.
fn load_cases() -> Vec<Case> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .expect("tests/differential")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "cases"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    let mut notes = BTreeMap::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("case file");
        parse_file(&text, f, &mut cases, &mut notes);
    }
    for c in &mut cases {
        if let Some(tag) = c.why.as_deref().and_then(|w| w.strip_prefix('#')) {
            let text = notes
                .get(tag)
                .unwrap_or_else(|| panic!("case {:?}: no `note {tag}:`", c.name));
            c.why = Some(text.clone());
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for c in &cases {
        assert!(seen.insert(&c.name), "case {:?} is defined twice", c.name);
        assert!(!c.steps.is_empty(), "case {:?} has no steps", c.name);
    }
    cases
}

fn parse_file(text: &str, file: &Path, out: &mut Vec<Case>, notes: &mut BTreeMap<String, String>) {
    let mut category = String::from("uncategorised");
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let at = || format!("{}:{}", file.display(), i + 1);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(c) = line.strip_prefix("== ") {
            c.trim().clone_into(&mut category);
        } else if let Some(n) = line.strip_prefix("note ") {
            let (tag, text) = n
                .split_once(':')
                .unwrap_or_else(|| panic!("{}: `note TAG: text`", at()));
            let old = notes.insert(tag.trim().to_owned(), text.trim().to_owned());
            assert!(old.is_none(), "{}: note {tag} is defined twice", at());
        } else if let Some(n) = line.strip_prefix("case ") {
            out.push(Case {
                category: category.clone(),
                name: n.trim().to_owned(),
                why: None,
                steps: Vec::new(),
            });
        } else {
            let case = out
                .last_mut()
                .unwrap_or_else(|| panic!("{}: a step before any case", at()));
            if let Some(w) = line.strip_prefix("why:") {
                case.why = Some(w.trim().to_owned());
            } else {
                let step = parse_step(line).unwrap_or_else(|e| panic!("{}: {e}", at()));
                case.steps.push(step);
            }
        }
    }
}

/// `[-|@ptr,ptr] METHOD PATH [TYPE] [BODY]`.
fn parse_step(line: &str) -> Result<Step, String> {
    let (compare, rest) = if let Some(r) = line.strip_prefix("- ") {
        (Compare::Code, r)
    } else if let Some(r) = line.strip_prefix("~ ") {
        (Compare::Wait, r)
    } else if let Some(r) = line.strip_prefix("+ ") {
        (Compare::WaitOk, r)
    } else if let Some(r) = line.strip_prefix("^ ") {
        (Compare::WaitMutated, r)
    } else if let Some(r) = line.strip_prefix('@') {
        let (ptrs, r) = r.split_once(' ').ok_or("`@` needs pointers and a step")?;
        let ptrs = ptrs.split(',').map(str::to_owned).collect();
        (Compare::Parts(ptrs), r)
    } else {
        (Compare::Full, line)
    };
    let mut parts = rest.trim().splitn(3, ' ');
    let method = parts.next().unwrap_or_default().to_owned();
    if !["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&method.as_str()) {
        return Err(format!("unknown method {method:?}"));
    }
    let path = resolve(parts.next().ok_or("a step needs a path")?)?;
    let rest = parts.next().unwrap_or_default().trim();
    let (content_type, body) = match rest.split_once(' ') {
        _ if rest.is_empty() => ("application/json", None),
        _ if rest.starts_with(['{', '[']) => ("application/json", Some(rest)),
        Some((t, b)) => (content_type(t)?, Some(b.trim())),
        None => (content_type(rest)?, None),
    };
    if let Some(b) = body {
        serde_json::from_str::<Value>(b).map_err(|e| format!("body is not JSON: {e}"))?;
    }
    Ok(Step {
        method,
        path,
        content_type,
        body: body.map(str::to_owned),
        compare,
    })
}

fn content_type(short: &str) -> Result<&'static str, String> {
    TYPES
        .iter()
        .find(|(s, _)| *s == short)
        .map(|(_, t)| *t)
        .ok_or_else(|| format!("unknown content type {short:?}"))
}

fn resolve(path: &str) -> Result<String, String> {
    if path.starts_with('/') {
        return Ok(path.to_owned());
    }
    let end = path.find(['/', '?']).unwrap_or(path.len());
    let (alias, rest) = path.split_at(end);
    let base = ALIASES
        .iter()
        .find(|(a, _)| *a == alias)
        .map(|(_, b)| *b)
        .ok_or_else(|| format!("unknown alias {alias:?}"))?;
    Ok(format!("{base}{rest}"))
}

/// One of the two servers.
struct Target {
    base: String,
    token: Option<String>,
    client: reqwest::Client,
}

/// What a request answered.
struct Answer {
    code: u16,
    warnings: Vec<String>,
    body: Value,
}

impl Target {
    async fn send(&self, method: &str, path: &str, ct: &str, body: Option<String>) -> Answer {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut rb = self
            .client
            .request(method, format!("{}{path}", self.base))
            .header("accept", "application/json");
        if let Some(t) = &self.token {
            rb = rb.bearer_auth(t);
        }
        if let Some(b) = body {
            rb = rb.header("content-type", ct).body(b);
        }
        let resp = rb.send().await.unwrap_or_else(|e| panic!("{path}: {e}"));
        let code = resp.status().as_u16();
        let warnings = resp
            .headers()
            .get_all("warning")
            .iter()
            .map(|w| warning_text(&String::from_utf8_lossy(w.as_bytes())))
            .collect();
        let bytes = resp.bytes().await.expect("body");
        let body = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).trim().to_owned()));
        Answer {
            code,
            warnings,
            body,
        }
    }
}

/// The text of a `Warning: 299 - "text"` header.
fn warning_text(h: &str) -> String {
    h.strip_prefix("299 - ")
        .map(|t| t.trim_matches('"').to_owned())
        .unwrap_or_else(|| h.to_owned())
}

/// The namespace of case number `i` in run `run`.
fn namespace(run: &str, i: usize) -> String {
    format!("kd-{run}-{i}")
}

/// The custom resource the `widget` cases use: a status and a scale
/// subresource, a `listType=map` list (`spec.ports`, keyed by `name`), a
/// `listType=set` list, an atomic list and a free-form map.
fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.diff.kubeset.dev"},
        "spec": {"group": "diff.kubeset.dev", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                    "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "replicas": {"type": "integer"}, "color": {"type": "string"}, "size": {"type": "integer"},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                            "items": {"type": "object", "required": ["name"], "properties": {
                                "name": {"type": "string"}, "port": {"type": "integer"}, "protocol": {"type": "string"}}}},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                    "status": {"type": "object", "properties": {
                        "replicas": {"type": "integer"}, "phase": {"type": "string"}, "selector": {"type": "string"}}}}}}}]}
    })
}

/// The custom resource the admission cases use: one field per schema
/// construct kube-apiserver checks (types, bounds, lengths, patterns,
/// formats, enums, nullable, int-or-string, defaults, preserved and
/// embedded objects, list types, value validations).
/// A CRD whose CEL rules use what the real CRDs of `../shared/crds` do
/// not: `messageExpression`, `reason`, `fieldPath`, transition rules with
/// and without `optionalOldSelf`, a rule at the root, and the Kubernetes
/// libraries (quantity, URL, IP/CIDR, lists, regex, strings).
fn ruler_crd() -> Value {
    let s = |max: u64| json!({"type": "string", "maxLength": max});
    let rule = |r: &str, m: &str| json!({"rule": r, "message": m});
    let properties = json!({
        "min": {"type": "integer"}, "max": {"type": "integer"},
        "mem": s(20), "endpoint": s(200), "ip": s(40), "tag": s(20),
        "ports": {"type": "array", "maxItems": 10, "items": {"type": "integer"}},
        "items": {"type": "array", "maxItems": 10, "items": s(10), "default": []},
        "name": {"type": "string", "maxLength": 20,
            "x-kubernetes-validations": [rule("self == oldSelf", "name is immutable")]},
        "counter": {"type": "integer",
            "x-kubernetes-validations": [rule("self >= oldSelf", "counter may not decrease")]},
        "seed": {"type": "string", "maxLength": 20, "x-kubernetes-validations": [
            {"rule": "oldSelf.hasValue() || self.startsWith('init-')", "optionalOldSelf": true,
             "message": "a new seed starts with init-"}]},
        "note": s(10),
        "entries": {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["k"],
            "items": {"type": "object", "required": ["k"],
                "properties": {"k": s(10), "v": {"type": "integer"}},
                "x-kubernetes-validations": [rule("self.v >= oldSelf.v", "entry values may not decrease")]}}
    });
    let rules = json!([
        {"rule": "self.min <= self.max", "reason": "FieldValueForbidden", "fieldPath": ".min",
         "messageExpression": "'min %d is above max %d'.format([self.min, self.max])"},
        rule("!has(self.mem) || quantity(self.mem).isLessThan(quantity('1Gi'))", "mem must be under 1Gi"),
        rule("!has(self.endpoint) || (isURL(self.endpoint) && url(self.endpoint).getScheme() == 'https')", "endpoint must be an https URL"),
        rule("!has(self.ip) || (isIP(self.ip) && cidr('10.0.0.0/8').containsIP(ip(self.ip)))", "ip must be in 10.0.0.0/8"),
        rule("!has(self.ports) || (self.ports.isSorted() && self.ports.sum() <= 1000)", "ports must be sorted and sum to at most 1000"),
        rule("!has(self.tag) || (self.tag.find('[0-9]+') != '' && self.tag.lowerAscii() == self.tag)", "tag must be lower case with a number"),
        {"rule": "self.items.all(x, self.items.exists_one(y, y == x))", "reason": "FieldValueDuplicate", "fieldPath": ".items"},
        {"rule": "!has(self.note) || self.note != 'bad'", "message": "note is bad",
         "messageExpression": "'note ' + self.note.substring(50)"}
    ]);
    let spec = json!({"type": "object", "required": ["min", "max"],
        "x-kubernetes-validations": rules, "properties": properties});
    let schema = json!({"type": "object", "properties": {"spec": spec},
        "x-kubernetes-validations": [rule("self.metadata.name.startsWith('r')", "name must start with r")]});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "rulers.diff.kubeset.dev"},
        "spec": {"group": "diff.kubeset.dev", "scope": "Namespaced",
            "names": {"plural": "rulers", "singular": "ruler", "kind": "Ruler", "listKind": "RulerList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": schema}}]}
    })
}

/// A CRD for the Kubernetes CEL libraries of `75-cel-libs.cases`:
/// `spec.formats` has a property per named format, each valid only if the
/// format's `validate` finds nothing; `spec.named` compares what
/// `format.named(format).validate(value)` says with the messages the
/// object expects (`errors`), so the messages themselves are compared;
/// `spec.sets` checks `sets.*` against expected results; `spec.semver`
/// checks parsing, normalisation, the parts and the ordering.
fn checker_crd() -> Value {
    let s = |max: u64| json!({"type": "string", "maxLength": max});
    let at = |r: &str, path: &str, m: &str| json!({"rule": r, "fieldPath": path, "message": m});
    let names = [
        "dns1123Label",
        "dns1123Subdomain",
        "dns1035Label",
        "qualifiedName",
        "dns1123LabelPrefix",
        "dns1123SubdomainPrefix",
        "dns1035LabelPrefix",
        "labelValue",
        "uri",
        "uuid",
        "byte",
        "date",
        "datetime",
    ];
    let formats: Map<String, Value> = names
        .iter()
        .map(|n| {
            let mut p = s(300);
            p["x-kubernetes-validations"] = json!([{
                "rule": format!("!format.{n}().validate(self).hasValue()"),
                "message": format!("not a {n}")}]);
            ((*n).to_owned(), p)
        })
        .collect();
    let named = json!({"type": "object", "required": ["format", "value"], "properties": {
            "format": s(30), "value": s(300),
            "errors": {"type": "array", "maxItems": 4, "items": s(1000), "default": []}},
        "x-kubernetes-validations": [
            at("format.named(self.format).hasValue()", ".format", "unknown format"),
            at("!format.named(self.format).hasValue() || format.named(self.format).value().validate(self.value).orValue([]) == self.errors",
                ".errors", "the format's messages are not the expected ones")]});
    let list =
        |items: Value| json!({"type": "array", "maxItems": 10, "items": items, "default": []});
    let sets = json!({"type": "object", "properties": {
            "a": list(s(10)), "b": list(s(10)), "ints": list(json!({"type": "integer"})),
            "nums": list(json!({"type": "number"})),
            "contains": {"type": "boolean"}, "equivalent": {"type": "boolean"},
            "intersects": {"type": "boolean"}, "numbersEquivalent": {"type": "boolean"}},
        "x-kubernetes-validations": [
            at("!has(self.contains) || sets.contains(self.a, self.b) == self.contains", ".contains", "contains"),
            at("!has(self.equivalent) || sets.equivalent(self.a, self.b) == self.equivalent", ".equivalent", "equivalent"),
            at("!has(self.intersects) || sets.intersects(self.a, self.b) == self.intersects", ".intersects", "intersects"),
            at("!has(self.numbersEquivalent) || sets.equivalent(self.ints.map(x, double(x)), self.nums) == self.numbersEquivalent",
                ".numbersEquivalent", "numbers equivalent")]});
    let int = json!({"type": "integer"});
    let both = "!has(self.w) || !has(self.cmp) || !isSemver(self.v) || !isSemver(self.w) || ";
    let semver = json!({"type": "object", "required": ["v"], "properties": {
            "v": s(64), "w": s(64), "raw": s(64), "normalize": {"type": "boolean", "default": false},
            "major": int, "minor": int, "patch": int, "cmp": int},
        "x-kubernetes-validations": [
            at("isSemver(self.v, self.normalize)", ".v", "not a version"),
            at("!has(self.major) || !isSemver(self.v, self.normalize) || semver(self.v, self.normalize).major() == self.major", ".major", "major"),
            at("!has(self.minor) || !isSemver(self.v, self.normalize) || semver(self.v, self.normalize).minor() == self.minor", ".minor", "minor"),
            at("!has(self.patch) || !isSemver(self.v, self.normalize) || semver(self.v, self.normalize).patch() == self.patch", ".patch", "patch"),
            at(&format!("{both}semver(self.v).compareTo(semver(self.w)) == self.cmp"), ".cmp", "compareTo"),
            at(&format!("{both}(semver(self.v).isLessThan(semver(self.w)) == (self.cmp < 0) && semver(self.v).isGreaterThan(semver(self.w)) == (self.cmp > 0))"),
                ".w", "isLessThan, isGreaterThan"),
            at("!has(self.raw) || semver(self.raw).major() >= 0", ".raw", "raw")]});
    let spec = json!({"type": "object", "properties": {
        "formats": {"type": "object", "properties": formats},
        "named": named, "sets": sets, "semver": semver}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "checkers.diff.kubeset.dev"},
        "spec": {"group": "diff.kubeset.dev", "scope": "Namespaced",
            "names": {"plural": "checkers", "singular": "checker", "kind": "Checker", "listKind": "CheckerList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]}
    })
}

fn gadget_crd() -> Value {
    // JSON text: too deep for `json!`'s recursion limit.
    let spec: Value = serde_json::from_str(GADGET_SPEC).expect("the gadget schema is JSON");
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.diff.kubeset.dev"},
        "spec": {"group": "diff.kubeset.dev", "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "required": ["spec"], "properties": {
                    "spec": spec,
                    "status": {"type": "object", "properties": {
                        "phase": {"type": "string", "enum": ["Ok", "Bad"]},
                        "seen": {"type": "integer", "minimum": 0}}}}}}}]}
    })
}

/// The schema of a gadget's `spec`.
const GADGET_SPEC: &str = r#"{
 "type": "object",
 "required": [
  "mode"
 ],
 "properties": {
  "mode": {
   "type": "string",
   "enum": [
    "A",
    "B"
   ]
  },
  "name": {
   "type": "string",
   "minLength": 2,
   "maxLength": 5,
   "pattern": "^[a-z]+$"
  },
  "count": {
   "type": "integer",
   "minimum": 1,
   "maximum": 10,
   "default": 3
  },
  "ratio": {
   "type": "number",
   "multipleOf": 0.5,
   "maximum": 5,
   "exclusiveMaximum": true
  },
  "even": {
   "type": "integer",
   "multipleOf": 2,
   "minimum": 0,
   "exclusiveMinimum": true
  },
  "url": {
   "type": "string",
   "format": "uri"
  },
  "ip": {
   "type": "string",
   "format": "ipv4"
  },
  "ip6": {
   "type": "string",
   "format": "ipv6"
  },
  "cidr": {
   "type": "string",
   "format": "cidr"
  },
  "when": {
   "type": "string",
   "format": "date-time"
  },
  "day": {
   "type": "string",
   "format": "date"
  },
  "wait": {
   "type": "string",
   "format": "duration"
  },
  "host": {
   "type": "string",
   "format": "hostname"
  },
  "id": {
   "type": "string",
   "format": "uuid"
  },
  "data": {
   "type": "string",
   "format": "byte"
  },
  "mac": {
   "type": "string",
   "format": "mac"
  },
  "mail": {
   "type": "string",
   "format": "email"
  },
  "i32": {
   "type": "integer",
   "format": "int32"
  },
  "port": {
   "x-kubernetes-int-or-string": true
  },
  "flag": {
   "type": "boolean"
  },
  "tags": {
   "type": "array",
   "minItems": 1,
   "maxItems": 2,
   "items": {
    "type": "string"
   }
  },
  "opts": {
   "type": "object",
   "minProperties": 1,
   "maxProperties": 2,
   "additionalProperties": {
    "type": "string"
   }
  },
  "nums": {
   "type": "object",
   "additionalProperties": {
    "type": "integer",
    "minimum": 0
   }
  },
  "nul": {
   "type": "string",
   "nullable": true
  },
  "nonnul": {
   "type": "string"
  },
  "defobj": {
   "type": "object",
   "default": {},
   "properties": {
    "a": {
     "type": "string",
     "default": "x"
    }
   }
  },
  "free": {
   "type": "object",
   "x-kubernetes-preserve-unknown-fields": true,
   "properties": {
    "k": {
     "type": "integer"
    }
   }
  },
  "emb": {
   "type": "object",
   "x-kubernetes-embedded-resource": true,
   "x-kubernetes-preserve-unknown-fields": true
  },
  "set": {
   "type": "array",
   "x-kubernetes-list-type": "set",
   "items": {
    "type": "integer"
   }
  },
  "ports": {
   "type": "array",
   "x-kubernetes-list-type": "map",
   "x-kubernetes-list-map-keys": [
    "name",
    "proto"
   ],
   "items": {
    "type": "object",
    "required": [
     "name"
    ],
    "properties": {
     "name": {
      "type": "string"
     },
     "proto": {
      "type": "string",
      "default": "TCP"
     },
     "n": {
      "type": "integer"
     }
    }
   }
  },
  "choice": {
   "type": "object",
   "properties": {
    "a": {
     "type": "string"
    },
    "b": {
     "type": "string"
    }
   },
   "oneOf": [
    {
     "required": [
      "a"
     ]
    },
    {
     "required": [
      "b"
     ]
    }
   ]
  },
  "deep": {
   "type": "object",
   "properties": {
    "list": {
     "type": "array",
     "items": {
      "type": "object",
      "properties": {
       "v": {
        "type": "integer",
        "maximum": 9
       },
       "w": {
        "type": "string",
        "default": "w"
       }
      }
     }
    }
   }
  }
 }
}"#;

/// The real CRDs of `../shared/crds` the admission cases use
/// (`$KUBESET_SPECS/../crds` when set): Gateway API's HTTPRoute and
/// GatewayClass, cert-manager's Certificate and Issuer, KEDA's
/// ScaledObject, Istio's PeerAuthentication.
fn shared_crds() -> Vec<Value> {
    let dir = std::env::var_os("KUBESET_SPECS")
        .map(|s| PathBuf::from(s).join("../crds"))
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/crds"));
    [
        "httproutes.gateway.networking.k8s.io",
        "gatewayclasses.gateway.networking.k8s.io",
        "certificates.cert-manager.io",
        "issuers.cert-manager.io",
        "scaledobjects.keda.sh",
        "peerauthentications.security.istio.io",
    ]
    .iter()
    .map(|n| {
        let f = dir.join(format!("{n}.yaml"));
        let text = std::fs::read_to_string(&f)
            .unwrap_or_else(|e| panic!("{}: {e} (the real CRDs of ../shared/crds)", f.display()));
        serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()))
    })
    .collect()
}

/// Installs the CRDs the cases use (they may exist from an earlier run
/// against the same real server) and waits until each is served.
async fn install_crds(t: &Target) {
    let mut crds = vec![widget_crd(), gadget_crd(), ruler_crd(), checker_crd()];
    crds.extend(shared_crds());
    for crd in &crds {
        let a = t
            .send(
                "POST",
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                "application/json",
                Some(crd.to_string()),
            )
            .await;
        assert!(
            a.code == 201 || a.code == 409,
            "installing {}: {} {}",
            crd["metadata"]["name"],
            a.code,
            a.body
        );
    }
    for crd in &crds {
        let spec = &crd["spec"];
        let version = spec["versions"]
            .as_array()
            .and_then(|vs| vs.iter().find(|v| v["storage"] == true))
            .and_then(|v| v["name"].as_str())
            .expect("a storage version");
        let path = format!(
            "/apis/{}/{version}/{}",
            spec["group"].as_str().unwrap_or_default(),
            spec["names"]["plural"].as_str().unwrap_or_default()
        );
        served(t, &path).await;
    }
}

/// Waits until `path` lists. A hang guard, not a timing assumption: the
/// real server serves a new CRD within a second or two.
async fn served(t: &Target, path: &str) {
    for _ in 0..120 {
        if t.send("GET", path, "", None).await.code == 200 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    panic!("{path} is not served after 30 s");
}

type Essences = BTreeMap<String, Vec<Value>>;

/// Runs every case against `t` and keeps the essence of every answer.
async fn run(t: &Target, cases: &[Case], run: &str) -> Essences {
    install_crds(t).await;
    let mut out = BTreeMap::new();
    for (i, case) in cases.iter().enumerate() {
        let ns = namespace(run, i);
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        let a = t
            .send(
                "POST",
                "/api/v1/namespaces",
                "application/json",
                Some(body.to_string()),
            )
            .await;
        assert_eq!(a.code, 201, "creating namespace {ns}: {}", a.body);
        let mut got = Vec::new();
        for s in &case.steps {
            let path = s.path.replace("{ns}", &ns);
            let body = s.body.as_ref().map(|b| b.replace("{ns}", &ns));
            let mut a = t.send(&s.method, &path, s.content_type, body.clone()).await;
            if matches!(
                s.compare,
                Compare::Wait | Compare::WaitOk | Compare::WaitMutated
            ) {
                for _ in 0..120 {
                    let mut shows = a.code >= 300 || !a.warnings.is_empty();
                    if matches!(s.compare, Compare::WaitMutated) {
                        shows = shows || mutated(body.as_deref(), &a.body);
                    }
                    if shows == !matches!(s.compare, Compare::WaitOk) {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(250)).await;
                    a = t.send(&s.method, &path, s.content_type, body.clone()).await;
                }
            }
            got.push(essence(&a, &s.compare, &ns));
        }
        out.insert(case.name.clone(), got);
    }
    out
}

/// What a `^` step watches for a mutating policy's change, and compares.
const MUTABLE: [&str; 4] = [
    "/data",
    "/spec",
    "/metadata/labels",
    "/metadata/annotations",
];

/// Whether a mutating policy changed `sent` into `got` ([`MUTABLE`]).
fn mutated(sent: Option<&str>, got: &Value) -> bool {
    let sent: Value = sent
        .and_then(|b| serde_json::from_str(b).ok())
        .unwrap_or_default();
    MUTABLE.iter().any(|p| sent.pointer(p) != got.pointer(p))
}

/// What is compared of an answer (see the module docs).
fn essence(a: &Answer, compare: &Compare, ns: &str) -> Value {
    let mut out = json!({"code": a.code});
    if matches!(compare, Compare::Code) {
        return out;
    }
    if !a.warnings.is_empty() {
        out["warnings"] = json!(a.warnings);
    }
    let mut body = a.body.clone();
    normalise(&mut body);
    if a.code >= 300 {
        out["reason"] = body.get("reason").cloned().unwrap_or(Value::Null);
        let causes: Vec<Value> = body
            .pointer("/details/causes")
            .and_then(Value::as_array)
            .map(|cs| {
                cs.iter()
                    .map(|c| json!({"field": c.get("field"), "reason": c.get("reason")}))
                    .collect()
            })
            .unwrap_or_default();
        if !causes.is_empty() {
            out["causes"] = json!(causes);
        }
    } else {
        let parts = |ptrs: &mut dyn Iterator<Item = &str>| {
            Value::Object(
                ptrs.map(|p| {
                    (
                        p.to_owned(),
                        body.pointer(p).cloned().unwrap_or(Value::Null),
                    )
                })
                .collect(),
            )
        };
        out["body"] = match compare {
            Compare::Parts(ptrs) => parts(&mut ptrs.iter().map(String::as_str)),
            Compare::WaitMutated => parts(&mut MUTABLE.iter().copied()),
            _ => body,
        };
    }
    // The namespace is the run's own: named `{ns}` in what is compared.
    let mut out: Value =
        serde_json::from_str(&out.to_string().replace(ns, "{ns}")).expect("still JSON");
    order_managed_fields(&mut out);
    out
}

/// Puts every `managedFields` list (also one a step picked out as
/// `/metadata/managedFields`) in one order: by operation, manager,
/// apiVersion and subresource. Both servers sort entries by operation,
/// then by their time in whole seconds, then by manager; with times
/// normalised, which of two entries written a second apart comes first is
/// wall clock, so that order is not compared (whether an entry has a time
/// still is).
fn order_managed_fields(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k.ends_with("managedFields")
                    && let Value::Array(entries) = x
                {
                    let key = |e: &Value| {
                        ["operation", "manager", "apiVersion", "subresource"]
                            .map(|f| e.get(f).and_then(Value::as_str).unwrap_or("").to_owned())
                    };
                    entries.sort_by_key(key);
                }
                order_managed_fields(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(order_managed_fields),
        _ => {}
    }
}

/// Replaces what legitimately differs between two servers by a
/// placeholder, wherever it appears:
/// - `uid` of an object (and of a Status's details): random per server.
/// - `resourceVersion` (objects and lists): etcd's revision counter against
///   the embedded store's; only their presence is compared.
/// - `continue`: an opaque token encoding a resourceVersion.
/// - Timestamps (`creationTimestamp`, `deletionTimestamp`, any `*Time` field,
///   `managedFields[].time`): wall clock; and so the order of managedFields
///   entries of one operation ([`order_managed_fields`]).
/// - The random suffix of a `generateName` name: random per server.
/// - `clusterIP`/`clusterIPs`/`nodePort`: allocated from a range.
/// - The labels `batch.kubernetes.io/controller-uid` and `controller-uid`
///   (a Job's generated selector and its pods' labels): the Job's uid.
fn normalise(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Object(meta)) = m.get_mut("metadata") {
                normalise_meta(meta);
            }
            if let Some(Value::Object(d)) = m.get_mut("details")
                && d.get("uid").is_some_and(Value::is_string)
            {
                d.insert("uid".into(), json!("<uid>"));
            }
            for (k, x) in m.iter_mut() {
                normalise_field(k, x);
                normalise(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(normalise),
        _ => {}
    }
}

fn normalise_meta(meta: &mut Map<String, Value>) {
    for (k, placeholder) in [
        ("uid", "<uid>"),
        ("resourceVersion", "<rv>"),
        ("continue", "<continue>"),
    ] {
        if meta
            .get(k)
            .is_some_and(|v| v.as_str().is_some_and(|s| !s.is_empty()))
        {
            meta.insert(k.into(), json!(placeholder));
        }
    }
    if let (Some(Value::String(g)), Some(Value::String(n))) =
        (meta.get("generateName"), meta.get("name"))
        && n.starts_with(g.as_str())
        && n.len() == g.len() + 5
    {
        let n = format!("{g}<suffix>");
        meta.insert("name".into(), json!(n));
    }
}

fn normalise_field(key: &str, v: &mut Value) {
    let time = key == "time" || key.ends_with("Timestamp") || key.ends_with("Time");
    if time && v.is_string() {
        *v = json!("<time>");
    }
    if key == "clusterIP" && v.as_str().is_some_and(|s| s != "None" && !s.is_empty()) {
        *v = json!("<ip>");
    }
    if key == "clusterIPs"
        && let Value::Array(a) = v
    {
        for ip in a.iter_mut().filter(|ip| *ip != "None") {
            *ip = json!("<ip>");
        }
    }
    if (key == "batch.kubernetes.io/controller-uid" || key == "controller-uid") && v.is_string() {
        *v = json!("<uid>");
    }
    if (key == "nodePort" || key == "healthCheckNodePort") && v.is_number() {
        *v = json!("<port>");
    }
}

fn recording() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/differential.json")
}

fn fidelity_md() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("FIDELITY.md")
}

/// A short run id, so that reruns against the same real server use fresh
/// namespaces.
fn run_id() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "{:x}",
        (t.as_nanos() as u64 ^ u64::from(std::process::id())) & 0xff_ffff
    )
}

async fn real_target(env: &BTreeMap<String, String>) -> Target {
    let ca = std::fs::read_to_string(&env["KUBESET_REALKUBE_CA"]).expect("realkube CA");
    Target {
        base: common::realkube_server(env),
        token: Some(env["KUBESET_REALKUBE_ADMIN_TOKEN"].clone()),
        client: common::tls_client(&ca, common::TIMEOUT),
    }
}

#[tokio::test]
async fn embedded_server_answers_as_kube_apiserver() {
    let cases = load_cases();
    let read = || -> Essences {
        let mut recorded: Essences =
            serde_json::from_str(&std::fs::read_to_string(recording()).expect("recording"))
                .expect("recording is JSON");
        recorded
            .values_mut()
            .flatten()
            .for_each(order_managed_fields);
        recorded
    };
    let recorded = if let Some(env) = common::realkube_env() {
        let live = live_cases(&cases);
        let real = run(&real_target(&env).await, &live, &run_id()).await;
        if std::env::var_os("KUBESET_RECORD_GOLDEN").is_some() {
            let mut all = read();
            all.extend(real.clone());
            let text = serde_json::to_string_pretty(&all).unwrap() + "\n";
            std::fs::write(recording(), text).expect("write the recording");
        }
        let mut before = read();
        if live.len() < cases.len() {
            // Only these cases ran: the others keep their recordings.
            before.retain(|k, _| live.iter().any(|c| &c.name == k));
        }
        let stale = differences(&real, &before);
        assert!(
            stale.is_empty(),
            "the real server no longer answers as recorded (KUBESET_RECORD_GOLDEN=1 rewrites):\n{}",
            stale.join("\n")
        );
        let mut all = read();
        all.extend(real);
        all
    } else {
        read()
    };
    let s = TestServer::start().await.unwrap();
    let ours = Target {
        base: s.replicas()[0].url(),
        token: None,
        client: common::client(),
    };
    let got = run(&ours, &cases, "e").await;
    s.shutdown().await;
    check_and_report(&cases, &got, &recorded);
}

/// The cases `KUBESET_DIFFERENTIAL_CASES` names (by prefix, comma
/// separated), or all.
fn live_cases(cases: &[Case]) -> Vec<Case> {
    let Ok(only) = std::env::var("KUBESET_DIFFERENTIAL_CASES") else {
        return cases.to_vec();
    };
    let prefixes: Vec<&str> = only
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    cases
        .iter()
        .filter(|c| prefixes.iter().any(|p| c.name.starts_with(p)))
        .cloned()
        .collect()
}

/// One line per case whose answers differ between `a` and `b`.
fn differences(a: &Essences, b: &Essences) -> Vec<String> {
    let names: std::collections::BTreeSet<_> = a.keys().chain(b.keys()).collect();
    names
        .into_iter()
        .filter(|n| a.get(*n) != b.get(*n))
        .map(|n| format!("{n}: {}", first_difference(a.get(n), b.get(n))))
        .collect()
}

/// Where two essences first differ, as `pointer: a != b`.
fn first_difference(a: Option<&Vec<Value>>, b: Option<&Vec<Value>>) -> String {
    let (Some(a), Some(b)) = (a, b) else {
        return "missing on one side".into();
    };
    fn walk(a: &Value, b: &Value, at: String) -> Option<String> {
        match (a, b) {
            _ if a == b => None,
            (Value::Object(x), Value::Object(y)) => {
                let keys: std::collections::BTreeSet<_> = x.keys().chain(y.keys()).collect();
                keys.into_iter().find_map(|k| {
                    let n = Value::Null;
                    walk(
                        x.get(k).unwrap_or(&n),
                        y.get(k).unwrap_or(&n),
                        format!("{at}/{k}"),
                    )
                })
            }
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
                .iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (p, q))| walk(p, q, format!("{at}/{i}"))),
            _ => Some(format!("`{at}`: {} != {}", short(a), short(b))),
        }
    }
    let steps = a.len().max(b.len());
    (0..steps)
        .find_map(|i| {
            let n = Value::Null;
            walk(
                a.get(i).unwrap_or(&n),
                b.get(i).unwrap_or(&n),
                format!("step {}", i + 1),
            )
        })
        .unwrap_or_default()
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 120 {
        format!("{}…", s.chars().take(117).collect::<String>())
    } else {
        s
    }
}

/// Fails on an unexplained difference or a stale note, then compares (or
/// with `KUBESET_UPDATE_FIDELITY` writes) FIDELITY.md.
fn check_and_report(cases: &[Case], got: &Essences, want: &Essences) {
    let mut problems = Vec::new();
    for c in cases {
        let differs = got.get(&c.name) != want.get(&c.name);
        if !want.contains_key(&c.name) {
            problems.push(format!(
                "{}: not recorded (run against realkube with KUBESET_RECORD_GOLDEN=1)",
                c.name
            ));
        } else if differs && c.why.is_none() {
            problems.push(format!(
                "{}: differs ({}) and says no `why:`",
                c.name,
                first_difference(got.get(&c.name), want.get(&c.name))
            ));
        } else if !differs && c.why.is_some() {
            problems.push(format!("{}: agrees now: remove its `why:`", c.name));
        }
    }
    let report = fidelity_report(cases, got, want);
    if std::env::var_os("KUBESET_UPDATE_FIDELITY").is_some() {
        std::fs::write(fidelity_md(), &report).expect("write FIDELITY.md");
    } else if std::fs::read_to_string(fidelity_md()).ok().as_deref() != Some(report.as_str()) {
        problems.push("FIDELITY.md is stale (KUBESET_UPDATE_FIDELITY=1 rewrites it)".into());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// FIDELITY.md: the agreement table by category and every difference.
fn fidelity_report(cases: &[Case], got: &Essences, want: &Essences) -> String {
    let mut cats: Vec<(&str, usize, usize)> = Vec::new();
    for c in cases {
        let agrees = got.get(&c.name) == want.get(&c.name);
        match cats.iter_mut().find(|(n, ..)| *n == c.category) {
            Some(e) => {
                e.1 += 1;
                e.2 += usize::from(agrees);
            }
            None => cats.push((&c.category, 1, usize::from(agrees))),
        }
    }
    let mut md = String::from(FIDELITY_HEAD);
    md.push_str("| category | cases | agree | differ |\n| --- | ---: | ---: | ---: |\n");
    for (n, all, ok) in &cats {
        let _ = writeln!(md, "| {n} | {all} | {ok} | {} |", all - ok);
    }
    let (all, ok) = cats.iter().fold((0, 0), |(a, o), c| (a + c.1, o + c.2));
    let pct = if all == 0 {
        0.0
    } else {
        100.0 * ok as f64 / all as f64
    };
    let _ = writeln!(
        md,
        "| **all** | **{all}** | **{ok} ({pct:.1} %)** | **{}** |",
        all - ok
    );
    let mut causes: BTreeMap<&str, usize> = BTreeMap::new();
    for c in cases
        .iter()
        .filter(|c| got.get(&c.name) != want.get(&c.name))
    {
        *causes
            .entry(c.why.as_deref().unwrap_or("(none)"))
            .or_default() += 1;
    }
    let mut causes: Vec<_> = causes.into_iter().collect();
    causes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    md.push_str("\n## Differences by cause\n\n| cause | cases |\n| --- | ---: |\n");
    for (why, n) in &causes {
        let _ = writeln!(md, "| {why} | {n} |");
    }
    md.push_str("\n## Known differences\n\nEach: the case, why it differs, and where the answers first differ (embedded, then real).\n");
    let mut cat = "";
    for c in cases
        .iter()
        .filter(|c| got.get(&c.name) != want.get(&c.name))
    {
        if c.category != cat {
            cat = &c.category;
            let _ = writeln!(md, "\n### {cat}\n");
        }
        let why = c.why.as_deref().unwrap_or("(none)");
        let d = first_difference(got.get(&c.name), want.get(&c.name));
        let _ = writeln!(md, "- **{}**: {why}  \n  {d}", c.name);
    }
    md.push_str(FIDELITY_TAIL);
    md
}

/// What the cases cannot show, and where it is shown instead.
const FIDELITY_TAIL: &str = "
## Outside these cases

Admission webhooks that answer need a webhook server: the scenarios of `crates/kubeset-runtime/tests/webhook_scenarios/mod.rs` (a denial, a mutation and its warning, certificate rotation under `failurePolicy: Fail`, two mutating webhooks in order, an unreachable webhook under `Fail` and `Ignore`, object and namespace selectors, a `matchCondition`, UPDATEs and DELETEs with `oldObject`, dry runs and `sideEffects`) run unchanged against the embedded server (`webhook_embedded.rs`) and kube-apiserver (`tests/tests/suite/webhook.rs`), messages included. Not done by the embedded server: webhooks on a collection's DELETE and on CONNECT, `reinvocationPolicy: IfNeeded`, `clientConfig.service` (fails as an unreachable webhook), a webhook without `caBundle` (no system roots), `matchPolicy: Equivalent`. CRD conversion webhooks likewise: the scenarios of `crates/kubeset-runtime/tests/conversion_scenarios/mod.rs` (written in one version and read in the other, a list of objects written in both, a watch seeing an update written in the other version, a merge patch and a server-side apply to the other version, a refused and an unreachable conversion, and answers a webhook must not give, with the status, reason and message) run against the embedded server (`conversion_embedded.rs`) and kube-apiserver (`tests/tests/suite/conversion.rs`).
";

const FIDELITY_HEAD: &str = "# Fidelity: the embedded server against kube-apiserver v1.35.4

Generated by `tests/differential.rs` (`KUBESET_UPDATE_FIDELITY=1 cargo test -p kubeset-testserver --test differential` rewrites it; the test fails when it is stale). Do not edit by hand.

The same request sequences (`tests/differential/*.cases`) go to a real kube-apiserver (recorded in `tests/golden/differential.json`; rerun live when `KUBESET_REALKUBE_ENV` names a running realkube) and to the embedded server. Compared: status codes, `Warning` headers, an error's Status `reason` and its causes' `field` and `reason`, and the returned objects, after replacing what legitimately differs (uids, resourceVersions, continue tokens, timestamps, `generateName` suffixes, allocated IPs and node ports; see `normalise` in the test). Status messages are not compared here (`tests/validation.rs` pins those of name validation).

";
