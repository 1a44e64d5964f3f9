//! The report: `docs/benchmarks.md`'s sections and tables from the
//! records of a run (pure: records in, Markdown out).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::build::build_table;
use super::measure::{MIMALLOC, ROUND_TRIP_CLIENTS};
use super::{Machine, Plan, Row, go_module_version, locked};
use super::{admission, cli_size};
use crate::workspace_root;

/// The rows that failed, with their errors, appended to the report so a
/// published table never hides a missing row.
pub(super) fn failed_section(out: &mut String, failed: &[(Row, String)]) {
    if failed.is_empty() {
        return;
    }
    out.push_str("\n## Rows that failed in this run\n\n");
    for (row, why) in failed {
        let _ = writeln!(out, "- `{}`: {}", row.name(), why.replace('\n', " "));
    }
}

pub(super) fn field(r: &Value, key: &str) -> Option<f64> {
    r.get(key).and_then(Value::as_f64)
}

pub(super) fn text<'a>(r: &'a Value, key: &str) -> &'a str {
    r.get(key).and_then(Value::as_str).unwrap_or("")
}

pub(super) fn ratio(peer: Option<f64>, ours: Option<f64>) -> String {
    match (peer, ours) {
        (Some(p), Some(o)) if o > 0.0 => format!("{:.2}×", p / o),
        _ => "–".to_owned(),
    }
}

/// Records of `bench`, grouped by item count, kubeset first in each group.
pub(super) fn groups<'a>(all: &'a [Value], bench: &str) -> BTreeMap<u64, Vec<&'a Value>> {
    let mut out: BTreeMap<u64, Vec<&Value>> = BTreeMap::new();
    for r in all.iter().filter(|r| text(r, "bench") == bench) {
        let items = r.get("items").and_then(Value::as_u64).unwrap_or(0);
        out.entry(items).or_default().push(r);
    }
    for v in out.values_mut() {
        v.sort_by_key(|r| text(r, "impl") != "kubeset");
    }
    out
}

pub(super) fn kubeset_of<'a>(group: &[&'a Value]) -> Option<&'a Value> {
    group.iter().copied().find(|r| text(r, "impl") == "kubeset")
}

pub(super) fn throughput_table(out: &mut String, all: &[Value], bench: &str, what: &str) {
    let _ = writeln!(
        out,
        "| {what} | MB | implementation | median ms | MB/s | {what}/s | peer / kubeset (time) |\n|---:|---:|---|---:|---:|---:|---:|"
    );
    for (items, group) in groups(all, bench) {
        let ours = kubeset_of(&group).and_then(|r| field(r, "median_s"));
        for r in group {
            let median = field(r, "median_s").unwrap_or(0.0);
            let mb = field(r, "bytes").unwrap_or(0.0) / 1e6;
            let per_s = |x: f64| if median > 0.0 { x / median } else { 0.0 };
            let impl_ = text(r, "impl");
            let ratio = if impl_ == "kubeset" {
                "1.00×".to_owned()
            } else {
                ratio(Some(median), ours)
            };
            let _ = writeln!(
                out,
                "| {items} | {mb:.1} | {impl_} | {:.1} | {:.0} | {:.0} | {ratio} |",
                median * 1e3,
                per_s(mb),
                per_s(items as f64),
            );
        }
    }
    out.push('\n');
}

/// How a round-trip client is named in the tables.
pub(super) fn round_trip_label(name: &str) -> String {
    match name {
        "reqwest" | "hyper" => format!("{name} (transport floor)"),
        _ => name.to_owned(),
    }
}

/// The median of the record of `bench` by `implementation` for `items`.
pub(super) fn median_of(
    all: &[Value],
    bench: &str,
    implementation: &str,
    items: u64,
) -> Option<f64> {
    all.iter()
        .find(|r| {
            text(r, "bench") == bench
                && text(r, "impl") == implementation
                && r.get("items").and_then(Value::as_u64) == Some(items)
        })
        .and_then(|r| field(r, "median_s"))
}

/// The protobuf rows: PodList decode and encode, the watch stream, and
/// kubeset's protobuf decode against its own JSON decode.
pub(super) fn protobuf_tables(out: &mut String, all: &[Value]) {
    if !all.iter().any(|r| text(r, "bench").ends_with("-protobuf")) {
        return;
    }
    let none = "kube-rs / k8s-openapi: no protobuf (kube-rs#725).\n\n";
    if !groups(all, "decode-podlist-protobuf").is_empty() {
        out.push_str("### Decode a PodList in protobuf (protobuf → typed)\n\n");
        throughput_table(out, all, "decode-podlist-protobuf", "pods");
        out.push_str(none);
        out.push_str(
            "kubeset in protobuf against kubeset in JSON (the same list; time of the JSON decode / time of the \
             protobuf decode; target ≥ 2×) and against client-go in protobuf (target ≥ 1×), on glibc's malloc and on \
             mimalloc (`kubeset-bench-mimalloc`, the same code with mimalloc as the global allocator). The floor is \
             `List<Pod>::clone` and its drop: the same allocations and bytes copied as a decode, with no input to read.\n\n\
             | pods | allocator | floor (clone) ms | JSON ms | protobuf ms | JSON / protobuf | client-go protobuf / kubeset protobuf |\n\
             |---:|---|---:|---:|---:|---:|---:|\n",
        );
        for items in groups(all, "decode-podlist-protobuf").keys() {
            let go = median_of(all, "decode-podlist-protobuf", "client-go", *items);
            for (allocator, suffix) in [("glibc malloc", ""), ("mimalloc", MIMALLOC)] {
                let ours = format!("kubeset{suffix}");
                let floor = median_of(all, "clone-podlist", &ours, *items);
                let json = median_of(all, "decode-podlist", &ours, *items);
                let pb = median_of(all, "decode-podlist-protobuf", &ours, *items);
                if pb.is_none() {
                    continue;
                }
                let ms = |v: Option<f64>| fmt_opt(v.map(|s| s * 1e3), 1);
                let _ = writeln!(
                    out,
                    "| {items} | {allocator} | {} | {} | {} | {} | {} |",
                    ms(floor),
                    ms(json),
                    ms(pb),
                    ratio(json, pb),
                    ratio(go, pb),
                );
            }
        }
        out.push_str("\n### Encode a PodList in protobuf (typed → protobuf)\n\n");
        throughput_table(out, all, "encode-podlist-protobuf", "pods");
        out.push_str(none);
    }
    if !groups(all, "decode-watch-protobuf").is_empty() {
        out.push_str("### Decode a watch stream in protobuf (typed events)\n\n");
        throughput_table(out, all, "decode-watch-protobuf", "events");
        out.push_str(none);
    }
}

/// Per implementation (kubeset first, then in the order seen), the values
/// of `f` over the rounds of `bench`.
pub(super) fn per_impl(
    all: &[Value],
    bench: &str,
    f: impl Fn(&Value) -> Option<f64>,
) -> Vec<(String, Vec<f64>)> {
    let mut out: Vec<(String, Vec<f64>)> = Vec::new();
    for r in all.iter().filter(|r| text(r, "bench") == bench) {
        let name = text(r, "impl").to_owned();
        let i = match out.iter().position(|(n, _)| *n == name) {
            Some(i) => i,
            None => {
                out.push((name, Vec::new()));
                out.len() - 1
            }
        };
        if let Some(v) = f(r) {
            out[i].1.push(v);
        }
    }
    out.sort_by_key(|(n, _)| n != "kubeset");
    out
}

pub(super) fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

pub(super) fn of<'a>(table: &'a [(String, Vec<f64>)], name: &str) -> &'a [f64] {
    table
        .iter()
        .find(|(n, _)| n == name)
        .map_or(&[], |(_, v)| v.as_slice())
}

pub(super) fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "–".to_owned(), |v| format!("{v:.digits$}"))
}

pub(super) fn round_trip_tables(out: &mut String, plan: &Plan, all: &[Value]) {
    let items = |r: &Value| r.get("items").and_then(Value::as_f64).filter(|n| *n > 0.0);
    let p50 = per_impl(all, "get-sequential", |r| field(r, "p50_us"));
    let p99 = per_impl(all, "get-sequential", |r| field(r, "p99_us"));
    let seq_cpu = per_impl(all, "get-sequential", |r| {
        Some(field(r, "cpu_s")? / items(r)? * 1e6)
    });
    let rate = per_impl(all, "get-concurrent", |r| {
        Some(items(r)? / field(r, "median_s").filter(|s| *s > 0.0)?)
    });
    let conc_cpu = per_impl(all, "get-concurrent", |r| {
        Some(field(r, "cpu_s")? / items(r)? * 1e6)
    });
    // The server's CPU over the client's whole process: warm-up,
    // sequential and concurrent requests.
    let per_process =
        (plan.sequential.clamp(1, 200) + plan.sequential + plan.concurrent_total) as f64;
    let server_cpu = per_impl(all, "get-concurrent", |r| {
        Some(field(r, "server_cpu_s")? / per_process * 1e6)
    });
    if p50.is_empty() && rate.is_empty() {
        return;
    }
    let rounds = plan.rounds.max(1);
    let ours = |t: &[(String, Vec<f64>)]| median(of(t, "kubeset"));
    let order = |v: &mut Vec<(String, Vec<f64>)>| {
        v.sort_by_key(|(n, _)| {
            ROUND_TRIP_CLIENTS
                .iter()
                .position(|c| c == n)
                .unwrap_or(usize::MAX)
        });
    };
    let (mut p50, mut rate) = (p50, rate);
    order(&mut p50);
    order(&mut rate);
    let _ = writeln!(
        out,
        "### GET round trip, sequential (latency)\n\n\
         Medians over {rounds} interleaved rounds of {} requests each. CPU: the client process's user + system \
         time in the timed phase per request (`/proc/self/stat`, 10 ms ticks), the load-independent figure. \
         The transport floors are not Kubernetes clients: the same GET and decode on bare reqwest and bare \
         hyper-util, the least a client on each stack can cost.\n\n\
         | implementation | p50 µs | p99 µs | client CPU µs/req | p50 peer / kubeset | p99 peer / kubeset | CPU peer / kubeset |\n\
         |---|---:|---:|---:|---:|---:|---:|",
        plan.sequential
    );
    for (name, v) in &p50 {
        let (a, b, c) = (
            median(v),
            median(of(&p99, name)),
            median(of(&seq_cpu, name)),
        );
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            round_trip_label(name),
            fmt_opt(a, 0),
            fmt_opt(b, 0),
            fmt_opt(c, 1),
            ratio(a, ours(&p50)),
            ratio(b, ours(&p99)),
            ratio(c, ours(&seq_cpu)),
        );
    }
    let _ = writeln!(
        out,
        "\n### GET round trip, {} concurrent (throughput)\n\n\
         Medians over {rounds} interleaved rounds of {} requests each (min–max over rounds in brackets). \
         Server CPU: the server process's CPU per request over the client's whole run (warm-up, sequential, concurrent).\n\n\
         | implementation | requests/s | client CPU µs/req | server CPU µs/req | kubeset / peer (rate) | CPU peer / kubeset |\n\
         |---|---:|---:|---:|---:|---:|",
        plan.concurrency, plan.concurrent_total
    );
    for (name, v) in &rate {
        let r = median(v);
        let lo = v.iter().copied().reduce(f64::min);
        let hi = v.iter().copied().reduce(f64::max);
        let c = median(of(&conc_cpu, name));
        let _ = writeln!(
            out,
            "| {} | {} ({}–{}) | {} | {} | {} | {} |",
            round_trip_label(name),
            fmt_opt(r, 0),
            fmt_opt(lo, 0),
            fmt_opt(hi, 0),
            fmt_opt(c, 1),
            fmt_opt(median(of(&server_cpu, name)), 1),
            ratio(ours(&rate), r),
            ratio(c, ours(&conc_cpu)),
        );
    }
    out.push('\n');
}

pub(super) fn failover_table(out: &mut String, all: &[Value]) {
    let rows: Vec<&Value> = all
        .iter()
        .filter(|r| text(r, "bench") == "failover")
        .collect();
    if rows.is_empty() {
        return;
    }
    out.push_str(
        "### Failover: API server death → next successful GET\n\n\
         Three replicas of the embedded server (one process with the client); the client has all three \
         endpoints and kubeset's default request budget of 10 s, which Patroni's rule spreads to 3.33 s per \
         endpoint (connect timeout max(1 s, 3.33 s / 2)). Each trial: 20 GETs to warm the keep-alive \
         connections, then the replica the client prefers is faulted and one GET is timed from the fault \
         to its response; the replica is brought back. *refused*: listener closed and open connections \
         dropped; *hung*: connections accepted, requests never answered (also on open connections).\n\n\
         | implementation | fault | trials | median ms | min–max ms |\n|---|---|---:|---:|---:|\n",
    );
    for r in rows {
        let samples: Vec<f64> = r
            .get("samples_s")
            .and_then(Value::as_array)
            .map(|v| v.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default();
        let lo = samples.iter().copied().reduce(f64::min).unwrap_or(0.0);
        let hi = samples.iter().copied().reduce(f64::max).unwrap_or(0.0);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.1} | {:.1}–{:.1} |",
            text(r, "impl"),
            text(r, "variant"),
            samples.len(),
            field(r, "median_s").unwrap_or(0.0) * 1e3,
            lo * 1e3,
            hi * 1e3,
        );
    }
    out.push_str(
        "| kube-rs | refused / hung | – | no failover: one endpoint; requests fail (refused) or wait for their timeout (hung) until that server returns | – |\n\
         | client-go | refused / hung | – | no failover: one endpoint; same | – |\n\n",
    );
}

pub(super) fn memory_table(out: &mut String, plan: &Plan, all: &[Value]) {
    let rows: Vec<&Value> = all
        .iter()
        .filter(|r| text(r, "bench") == "cache-memory")
        .collect();
    if rows.is_empty() {
        return;
    }
    let kib = |r: &Value| r.get("peak_rss_kib").and_then(Value::as_f64);
    let ours = rows
        .iter()
        .find(|r| text(r, "impl") == "kubeset" && text(r, "variant") == "full")
        .and_then(|r| kib(r));
    let _ = writeln!(
        out,
        "### Memory: informer cache of {} pods plus {} watch updates\n\n\
         One process per client, run one at a time against one embedded server process seeded with the \
         {}-pod list; each lists every pod into its cache (each client's default initial list), prints \
         `synced`, then the server merge-patches {} pods (one annotation each: one `MODIFIED` event carrying \
         the whole pod) and the client exits once it has applied them all. Peak RSS is the client's `VmHWM`. \
         kubeset: `kubeset_runtime::watcher` + `reflector` into a `Store`; kube-rs: `kube::runtime::watcher` + \
         `reflector::store`; client-go: `SharedInformerFactory` Pod informer (indexer) with an update handler. \
         kubeset `two-caches` and `shared` are two controllers in one process, each subscribed to its cache \
         and seeing every update: two `SharedCache`s (two watches, two stores) or one `SharedCaches` cache \
         both read (one watch, one store); objects are those one controller sees. \
         kubeset `protobuf`: `full` with `RestConfig::with_wire_format(WireFormat::Protobuf)` — the watcher's \
         streaming list and its watch in protobuf; client-go \
         `full, protobuf`: `rest.Config{{ContentType: \"application/vnd.kubernetes.protobuf\"}}`, list and watch in \
         protobuf. kube-rs has no protobuf.\n\n\
         | implementation | cache | objects | peak RSS MB | peer / kubeset (full) |\n|---|---|---:|---:|---:|",
        plan.cache_pods, plan.cache_updates, plan.cache_pods, plan.cache_updates
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            text(r, "impl"),
            text(r, "variant"),
            r.get("items").and_then(Value::as_u64).unwrap_or(0),
            fmt_opt(kib(r).map(|k| k / 1024.0), 0),
            ratio(kib(r), ours),
        );
    }
    out.push('\n');
}

pub(super) fn report(m: &Machine, plan: &Plan, all: &[Value], notes: &str) -> String {
    let mut out = String::new();
    title(&mut out, m);
    machine_section(&mut out, m);
    versions_section(&mut out);
    method_section(&mut out, plan);
    results(&mut out, plan, all);
    out.push_str("## Reproduce\n\n```sh\ncargo xtask bench          # full run (about 40 minutes on 2 loaded cores, a dist build of the CLI included)\ncargo xtask bench --quick  # smoke run\ncargo xtask bench --only roundtrip,failover   # some rows (codec, watch, roundtrip, failover, memory, build, admission, cli-size);\n                           # written to <target>/bench-data/benchmarks-<rows>.md, never to docs/\ncargo xtask bench --only scale   # the scale row alone (1k/10k/100k pods; long, run alone): its own\n                           # section of docs/benchmarks.md and docs/benchmarks-scale.svg\ncargo xtask bench --only shard   # the sharding row alone (1/2/4 replica processes, takeover; about 5 minutes):\n                           # its own section of docs/benchmarks.md\n```\n\nNeeds python3 (input generator), Go (client-go peer; modules from the proxy or the module cache) and `../shared/bench/gen_podlist.py` (or `KUBESET_BENCH_GEN=path`).\n\n## Notes\n\n");
    out.push_str(notes);
    out.push('\n');
    out
}

/// The title and what the report is, with the run's start.
pub(super) fn title(out: &mut String, m: &Machine) {
    let _ = writeln!(
        out,
        "# Benchmarks: kubeset, kube-rs / k8s-openapi, client-go\n\n\
         Generated by `cargo xtask bench{}` ({}); every number below comes from that one run. \
         Raw records: `<target>/bench-data/results.json`. Ratios are **peer / kubeset** of the \
         time taken (or kubeset / peer of a rate): above 1 means kubeset is faster.\n",
        if m.quick { " --quick" } else { "" },
        m.started
    );
    if m.quick {
        out.push_str(
            "**Quick (smoke) run: small inputs, one repetition — not a measurement.**\n\n",
        );
    }
}

/// The machine the run measured on.
pub(super) fn machine_section(out: &mut String, m: &Machine) {
    let _ = writeln!(
        out,
        "## Machine\n\n\
         - CPUs: {} × {}\n\
         - load average (1/5/15 min) at start: {}; at end: {} — the machine is shared with other \
         builds, so absolute numbers are pessimistic and noisy; the ratios are what to read.\n\
         - {}; {}\n",
        m.cpus, m.cpu_model, m.load_start, m.load_end, m.rustc, m.go
    );
}

/// The versions of kubeset's peers (from Cargo.lock and the Go module).
pub(super) fn versions_section(out: &mut String) {
    let _ = writeln!(
        out,
        "## Versions\n\n\
         - kubeset: this workspace (kubeset-api generated for Kubernetes {}), serde_json {}\n\
         - kube {} (`client` feature, no TLS: plain HTTP on loopback), k8s-openapi {} (feature `v1_35`)\n\
         - k8s.io/client-go {}, k8s.io/api {}, k8s.io/apimachinery {}\n",
        std::fs::read_to_string(workspace_root().join("specs/kubernetes-version"))
            .map(|s| s.trim().to_owned())
            .unwrap_or_else(|_| "unknown".to_owned()),
        locked("serde_json"),
        locked("kube"),
        locked("k8s-openapi"),
        go_module_version("k8s.io/client-go"),
        go_module_version("k8s.io/api"),
        go_module_version("k8s.io/apimachinery"),
    );
}

/// How each row is measured, with the plan's sizes.
pub(super) fn method_section(out: &mut String, plan: &Plan) {
    let sizes: Vec<String> = plan
        .lists
        .iter()
        .map(|(n, r)| format!("{n} pods × {r} runs"))
        .collect();
    let _ = writeln!(
        out,
        "## Method\n\n\
         - Inputs: `gen_podlist.py N` — a deterministic PodList as kube-apiserver returns it \
         (items without apiVersion/kind, three managedFields entries with fieldsV1). {}. \
         Each measurement is preceded by one untimed warm-up; the median of the runs is reported.\n\
         - Decode: the whole file in memory → typed list. each Rust peer as its client decodes a response body: kubeset \
         `kubeset_rest::from_json::<kubeset_api::List<Pod>>` (one UTF-8 check of the body, then `serde_json::from_str`); \
         k8s-openapi as kube-client does: `String::from_utf8` of a copy, then `serde_json::from_str::<k8s_openapi::List<Pod>>` \
         (same process, same serde_json); \
         client-go: `encoding/json.Unmarshal` into `corev1.PodList`, and \
         “client-go (apimachinery)”: `scheme.Codecs.UniversalDeserializer().Decode`.\n\
         - Encode: the decoded list → JSON bytes (`serde_json::to_vec`; `json.Marshal`; the apimachinery JSON serializer). \
         MB/s counts the bytes each implementation wrote.\n\
         - Allocator: the Rust rows run on glibc's malloc; rows named “… + mimalloc” are the same code in \
         `kubeset-bench-mimalloc`, whose global allocator is mimalloc (Go always has its own). Floor: \
         `List<Pod>::clone` of the decoded list and its drop, timed as the decodes are.\n\
         - Protobuf (`application/vnd.kubernetes.protobuf`): each list converted by the Go peer \
         (`kubeset-bench-go to-protobuf`: client-go's protobuf serializer, `k8s\\0` + `runtime.Unknown`, the bytes \
         kube-apiserver answers a list with). Before timing, kubeset decodes Go's bytes and re-encodes them to the same \
         length, and Go decodes kubeset's bytes to a list `reflect.DeepEqual` to its own. Decode: kubeset \
         `protobuf::dynamic::typed::<Pod>().decode_list` (the codec found by `TypeId`, as a client generic over `K` finds \
         it) and “kubeset (static)” `protobuf::decode_typed::<List<Pod>>`; client-go \
         `scheme.Codecs.UniversalDeserializer().Decode` into `*corev1.PodList`. Encode: kubeset \
         `protobuf::encode_with_type(&list, \"v1\", \"PodList\")`; client-go the protobuf serializer of `scheme.Codecs`. \
         Watch: the JSON stream below converted by Go as kube-apiserver's watch handler writes `;stream=watch` (the object \
         through the protobuf serializer into `metav1.WatchEvent.object.raw`, the event through the raw stream \
         serializer, each frame a 4-byte big-endian length + the event); client-go: length-delimited framer → \
         `streaming.NewDecoder` (raw protobuf) → `rest/watch.NewDecoder` → `watch.NewStreamWatcher`.\n\
         - Watch: {} events (`ADDED` then `MODIFIED`, each a full pod from the first list, with \
         apiVersion/kind), fed in 16 KiB chunks, {} runs. kubeset: `kubeset_rest::WatchStream::<Pod>::from_bytes`; \
         kube-rs: kube-client's pipeline (`FramedRead` + `LinesCodec`, a `String` per line, \
         `serde_json::from_str::<kube::core::WatchEvent<Pod>>`); client-go: JSON framer → `streaming.NewDecoder` → \
         `rest/watch.NewDecoder` (UniversalDeserializer for the object) → `watch.NewStreamWatcher`, read from its channel.\n\
         - Round trips: one embedded API server process (`kubeset-bench serve`: kubeset-testserver, release build, \
         plain HTTP on 127.0.0.1) for every client. GET of a ConfigMap with three data keys, keep-alive. \
         Sequential: {} requests after up to 200 warm-up ones, p50/p99 of each request's latency. \
         Concurrent: {} requests by {} workers (tokio tasks on the default multi-thread runtime; goroutines), requests/s. \
         kubeset: `Api<ConfigMap>::get`, rate limiter off (`with_qps_burst(-1.0, 0)`); kube-rs: `kube::Api<ConfigMap>::get`; \
         client-go: `CoreV1().ConfigMaps().Get`, `QPS: -1` (no limiter), other settings default \
         (its transport keeps at most 25 idle connections per host). \
         Transport floors (not peers; the same GET, `Accept: application/json, */*`, body read whole and decoded \
         into kubeset's `ConfigMap` with `kubeset_rest::from_json`): “reqwest”, a plain `reqwest::Client` of the \
         reqwest build kubeset uses, URL parsed once; “hyper”, hyper-util's legacy client over HTTP/1 \
         (`build_http`), URI parsed once. The server shares the 2 CPUs with the client, \
         so these rows measure client CPU cost as much as latency.\n",
        sizes.join(", "),
        plan.watch_events,
        plan.watch_runs,
        plan.sequential,
        plan.concurrent_total,
        plan.concurrency,
    );
}

/// The tables of every row.
pub(super) fn results(out: &mut String, plan: &Plan, all: &[Value]) {
    out.push_str("## Results\n\n### Decode a PodList (JSON → typed)\n\n");
    throughput_table(out, all, "decode-podlist", "pods");
    out.push_str("### Encode a PodList (typed → JSON)\n\n");
    throughput_table(out, all, "encode-podlist", "pods");
    out.push_str("### Decode a watch stream (typed events)\n\n");
    throughput_table(out, all, "decode-watch", "events");
    protobuf_tables(out, all);

    round_trip_tables(out, plan, all);

    failover_table(out, all);
    memory_table(out, plan, all);
    build_table(out, all);
    admission::table(out, all);
    cli_size::table(out, all);
}
