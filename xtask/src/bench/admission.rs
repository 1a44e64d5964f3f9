//! The admission-cost row (`--only admission`): what the embedded server's
//! admission (structural schema, defaults, CEL rules) costs a write, beside
//! a real kube-apiserver doing the same, and the embedded server's start
//! time with 10 CRDs (issue 31 wants it under 50 ms).
//!
//! Runs `kubeset-testserver`'s example `admission_bench` in release: HTTP
//! creates of a Gateway API HTTPRoute (the CRD from `../shared/crds`, or
//! `KUBESET_BENCH_CRDS`), 8 in flight, on the embedded server with the
//! CRD's CEL rules and without them, and on the realkube instance that
//! `KUBESET_REALKUBE_ENV` names (the row says so when none does: start one
//! with `tests/realkube/realkube.sh start`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::{field, fmt_opt, records, text};
use crate::Error;

/// Creates per round and rounds: full and `--quick`.
const PLAN: [(usize, usize); 2] = [(2000, 3), (200, 1)];

/// Measures the row.
pub(super) fn run(root: &Path, quick: bool) -> Result<Vec<Value>, Error> {
    let (writes, rounds) = PLAN[usize::from(quick)];
    let crds = std::env::var_os("KUBESET_BENCH_CRDS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/crds"));
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.args(["run", "--release", "-q", "-p", "kubeset-testserver"])
        .args(["--example", "admission_bench", "--"])
        .arg(&crds)
        .arg(writes.to_string())
        .arg(rounds.to_string())
        .current_dir(root);
    records(&mut cmd, "admission: HTTPRoute writes and start time")
}

/// The row's tables.
pub(super) fn table(out: &mut String, all: &[Value]) {
    let rows: Vec<&Value> = all
        .iter()
        .filter(|r| text(r, "bench") == "admission-writes")
        .collect();
    let Some(first) = rows.first() else {
        return;
    };
    let embedded = rows
        .iter()
        .find(|r| text(r, "server") == "embedded" && r["rules"] == true)
        .and_then(|r| field(r, "writes_per_sec"));
    let _ = writeln!(
        out,
        "### Admission cost: HTTPRoute writes\n\n\
         Creates of a Gateway API HTTPRoute (`../shared/crds`, its structural schema and its CEL rules checked on \
         every write: two rules, parentRefs, hostnames, matches, a filter, weighted backends), {} per round, \
         {} in flight over HTTP, median of {} rounds after 200 untimed ones. The embedded server is \
         kubeset-testserver in release on plain HTTP; kube-apiserver is realkube (etcd on loopback, TLS, a bearer \
         token). Ratio: kubeset / peer of writes per second.\n\n\
         | server | CEL rules | writes/s | embedded / this |\n|---|---|---:|---:|",
        first["writes"], first["concurrency"], first["rounds"]
    );
    for r in &rows {
        let server = match text(r, "server") {
            "embedded" => "embedded (kubeset-testserver)".to_owned(),
            s => format!("{s} {}", text(r, "version")),
        };
        let _ = writeln!(
            out,
            "| {server} | {} | {} | {} |",
            if r["rules"] == true { "yes" } else { "removed" },
            fmt_opt(field(r, "writes_per_sec"), 0),
            super::ratio(embedded, field(r, "writes_per_sec")),
        );
    }
    if !rows.iter().any(|r| text(r, "server") == "kube-apiserver") {
        out.push_str(
            "| kube-apiserver | yes | not measured: no realkube (`KUBESET_REALKUBE_ENV`) | |\n",
        );
    }
    out.push('\n');
    if let Some(s) = all.iter().find(|r| text(r, "bench") == "admission-start") {
        let _ = writeln!(
            out,
            "### Embedded server start with {} CRDs\n\n\
             `TestServer::start`, the shared CRDs (Gateway API, cert-manager, KEDA, Istio; copies in other groups up \
             to {}) installed with `register_crd`, one list answered over HTTP; release build. The process's first \
             server compiles the CRDs' schemas and CEL rules; the {} after it find them compiled (kept by their JSON \
             for the process, as in a test binary whose tests each start a server).\n\n\
             | first ms | then: min ms | median ms | p90 ms | max ms |\n|---:|---:|---:|---:|---:|\n| {} | {} | {} | {} | {} |\n",
            s["crds"],
            s["crds"],
            s["rounds"],
            fmt_opt(field(s, "first_ms"), 1),
            fmt_opt(field(s, "min_ms"), 1),
            fmt_opt(field(s, "median_ms"), 1),
            fmt_opt(field(s, "p90_ms"), 1),
            fmt_opt(field(s, "max_ms"), 1),
        );
    }
}
