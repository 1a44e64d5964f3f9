//! `cargo xtask bench [--quick]`: kubeset side by side with kube-rs /
//! k8s-openapi and client-go, in one run on this machine, written to
//! `docs/benchmarks.md`.
//!
//! 1. Records the machine (CPUs, model, load average), versions.
//! 2. Generates PodLists with `../shared/bench/gen_podlist.py` (or
//!    `$KUBESET_BENCH_GEN`) into `<target>/bench-data/` (never committed).
//! 3. Builds `kubeset-bench` in release and the Go peer
//!    (`crates/kubeset-bench/go`).
//! 4. Runs: PodList decode/encode, watch-stream decode, GET round trips
//!    against one embedded server process (`kubeset-bench serve`) that
//!    every client talks to.
//! 5. Writes the raw records to `<target>/bench-data/results.json` and the
//!    report to `docs/benchmarks.md`, keeping the hand-written section
//!    between `<!-- BEGIN NOTES -->` and `<!-- END NOTES -->`.
//!
//! On a machine too loaded for the full plan, these override it (the
//! report states the sizes used): `KUBESET_BENCH_LIST_RUNS`,
//! `KUBESET_BENCH_WATCH_EVENTS`, `KUBESET_BENCH_WATCH_RUNS`,
//! `KUBESET_BENCH_SEQUENTIAL`, `KUBESET_BENCH_CONCURRENT_TOTAL`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::{Error, workspace_root};

const NOTES_BEGIN: &str = "<!-- BEGIN NOTES -->";
const NOTES_END: &str = "<!-- END NOTES -->";

/// Sizes and repetitions of one run.
struct Plan {
    lists: Vec<(usize, usize)>,
    watch_events: usize,
    watch_runs: usize,
    sequential: usize,
    concurrency: usize,
    concurrent_total: usize,
}

impl Plan {
    fn new(quick: bool) -> Self {
        let env = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|n| *n > 0)
        };
        let mut plan = Self::default_for(quick);
        if let Some(runs) = env("KUBESET_BENCH_LIST_RUNS") {
            plan.lists.iter_mut().for_each(|l| l.1 = runs);
        }
        plan.watch_events = env("KUBESET_BENCH_WATCH_EVENTS").unwrap_or(plan.watch_events);
        plan.watch_runs = env("KUBESET_BENCH_WATCH_RUNS").unwrap_or(plan.watch_runs);
        plan.sequential = env("KUBESET_BENCH_SEQUENTIAL").unwrap_or(plan.sequential);
        plan.concurrent_total =
            env("KUBESET_BENCH_CONCURRENT_TOTAL").unwrap_or(plan.concurrent_total);
        plan
    }

    fn default_for(quick: bool) -> Self {
        if quick {
            Self {
                lists: vec![(100, 1), (1000, 1)],
                watch_events: 2000,
                watch_runs: 1,
                sequential: 200,
                concurrency: 64,
                concurrent_total: 2000,
            }
        } else {
            Self {
                lists: vec![(1000, 15), (10_000, 5)],
                watch_events: 100_000,
                watch_runs: 3,
                sequential: 5000,
                concurrency: 64,
                concurrent_total: 50_000,
            }
        }
    }
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
}

fn output(cmd: &mut Command, what: &str) -> Result<String, Error> {
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("{what}: cannot start: {e}"))?;
    if !out.status.success() {
        return Err(format!("{what} failed ({})", out.status).into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn first_line(cmd: &mut Command) -> String {
    cmd.output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_owned()
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

fn records(cmd: &mut Command, what: &str) -> Result<Vec<Value>, Error> {
    eprintln!("=== xtask bench: {what}");
    let text = output(cmd, what)?;
    match serde_json::from_str(&text)? {
        Value::Array(v) => Ok(v),
        _ => Err(format!("{what}: output is not a JSON array").into()),
    }
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_owned())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Versions of a crate in Cargo.lock.
fn locked(name: &str) -> String {
    let lock = std::fs::read_to_string(workspace_root().join("Cargo.lock")).unwrap_or_default();
    let mut versions = Vec::new();
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l == format!("name = \"{name}\"")
            && let Some(v) = lines.next().and_then(|v| v.strip_prefix("version = "))
        {
            versions.push(v.trim_matches('"').to_owned());
        }
    }
    if versions.is_empty() {
        "unknown".to_owned()
    } else {
        versions.join(", ")
    }
}

fn go_module_version(module: &str) -> String {
    let gomod = workspace_root().join("crates/kubeset-bench/go/go.mod");
    std::fs::read_to_string(gomod)
        .ok()
        .and_then(|s| {
            s.lines()
                .map(str::trim)
                .find(|l| l.starts_with(&format!("{module} ")))
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_owned))
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

/// The embedded API server as its own process; stops when dropped (its
/// stdin closes).
struct Server {
    child: std::process::Child,
    url: String,
}

impl Server {
    fn start(bin: &Path) -> Result<Self, Error> {
        let mut child = Command::new(bin)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("kubeset-bench serve: cannot start: {e}"))?;
        let mut url = String::new();
        if let Some(out) = child.stdout.take() {
            BufReader::new(out).read_line(&mut url)?;
        }
        let url = url.trim().to_owned();
        if !url.starts_with("http") {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("kubeset-bench serve printed {url:?}, not a URL").into());
        }
        Ok(Self { child, url })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

pub fn run(quick: bool) -> Result<(), Error> {
    let root = workspace_root();
    let plan = Plan::new(quick);
    let target = target_dir();
    let data = target.join("bench-data");
    std::fs::create_dir_all(&data)?;
    let load_start = load();
    let started = first_line(Command::new("date").args(["-u", "+%Y-%m-%d %H:%M UTC"]));

    let gen_script = std::env::var_os("KUBESET_BENCH_GEN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/bench/gen_podlist.py"));
    let mut lists = Vec::new();
    for &(n, runs) in &plan.lists {
        let file = data.join(format!("podlist_{n}.json"));
        if !file.exists() {
            eprintln!("=== xtask bench: generating {n} pods");
            output(
                Command::new("python3")
                    .arg(&gen_script)
                    .arg(n.to_string())
                    .arg(&file),
                "gen_podlist.py",
            )?;
        }
        lists.push((file, runs));
    }

    eprintln!("=== xtask bench: cargo build --release -p kubeset-bench");
    output(
        Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .args(["build", "--release", "-p", "kubeset-bench"])
            .current_dir(&root),
        "cargo build",
    )?;
    let rust = target.join("release/kubeset-bench");
    let go = target.join("bench-go/kubeset-bench-go");
    eprintln!("=== xtask bench: go build");
    output(
        Command::new("go")
            .args(["build", "-o"])
            .arg(&go)
            .arg(".")
            .current_dir(root.join("crates/kubeset-bench/go")),
        "go build",
    )?;

    let mut all = Vec::new();
    for (file, runs) in &lists {
        let runs = runs.to_string();
        let name = file.display().to_string();
        all.extend(records(
            Command::new(&rust).arg("codec").arg(file).arg(&runs),
            &format!("Rust codec {name}"),
        )?);
        all.extend(records(
            Command::new(&go).arg("codec").arg(file).arg(&runs),
            &format!("Go codec {name}"),
        )?);
    }

    let stream = data.join(format!("watch_{}.jsonl", plan.watch_events));
    if let Some((small, _)) = lists.first() {
        output(
            Command::new(&rust)
                .arg("make-watch")
                .arg(small)
                .arg(plan.watch_events.to_string())
                .arg(&stream),
            "make-watch",
        )?;
    }
    let runs = plan.watch_runs.to_string();
    all.extend(records(
        Command::new(&rust).arg("watch").arg(&stream).arg(&runs),
        "Rust watch",
    )?);
    all.extend(records(
        Command::new(&go).arg("watch").arg(&stream).arg(&runs),
        "Go watch",
    )?);
    std::fs::remove_file(&stream)?;

    {
        let server = Server::start(&rust)?;
        let args = [
            plan.sequential.to_string(),
            plan.concurrency.to_string(),
            plan.concurrent_total.to_string(),
        ];
        all.extend(records(
            Command::new(&rust)
                .arg("roundtrip")
                .arg(&server.url)
                .args(&args),
            "Rust round trips",
        )?);
        all.extend(records(
            Command::new(&go)
                .arg("roundtrip")
                .arg(&server.url)
                .args(&args),
            "Go round trips",
        )?);
    }

    std::fs::write(
        data.join("results.json"),
        serde_json::to_string_pretty(&all)?,
    )?;
    let machine = Machine {
        started,
        cpus: std::thread::available_parallelism().map_or(0, usize::from),
        cpu_model: cpu_model(),
        load_start,
        load_end: load(),
        rustc: first_line(Command::new("rustc").arg("-V")),
        go: first_line(Command::new("go").arg("version")),
        quick,
    };
    let docs = root.join("docs/benchmarks.md");
    let notes = std::fs::read_to_string(&docs)
        .ok()
        .and_then(|s| {
            let a = s.find(NOTES_BEGIN)?;
            let b = s.find(NOTES_END)?;
            (a < b).then(|| s[a..b + NOTES_END.len()].to_owned())
        })
        .unwrap_or_else(|| format!("{NOTES_BEGIN}\n{NOTES_END}"));
    std::fs::create_dir_all(root.join("docs"))?;
    std::fs::write(&docs, report(&machine, &plan, &all, &notes))?;
    eprintln!("=== xtask bench: wrote {}", docs.display());
    Ok(())
}

struct Machine {
    started: String,
    cpus: usize,
    cpu_model: String,
    load_start: String,
    load_end: String,
    rustc: String,
    go: String,
    quick: bool,
}

fn field(r: &Value, key: &str) -> Option<f64> {
    r.get(key).and_then(Value::as_f64)
}

fn text<'a>(r: &'a Value, key: &str) -> &'a str {
    r.get(key).and_then(Value::as_str).unwrap_or("")
}

fn ratio(peer: Option<f64>, ours: Option<f64>) -> String {
    match (peer, ours) {
        (Some(p), Some(o)) if o > 0.0 => format!("{:.2}×", p / o),
        _ => "–".to_owned(),
    }
}

/// Records of `bench`, grouped by item count, kubeset first in each group.
fn groups<'a>(all: &'a [Value], bench: &str) -> BTreeMap<u64, Vec<&'a Value>> {
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

fn kubeset_of<'a>(group: &[&'a Value]) -> Option<&'a Value> {
    group.iter().copied().find(|r| text(r, "impl") == "kubeset")
}

fn throughput_table(out: &mut String, all: &[Value], bench: &str, what: &str) {
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

fn report(m: &Machine, plan: &Plan, all: &[Value], notes: &str) -> String {
    let mut out = String::new();
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
    let _ = writeln!(
        out,
        "## Machine\n\n\
         - CPUs: {} × {}\n\
         - load average (1/5/15 min) at start: {}; at end: {} — the machine is shared with other \
         builds, so absolute numbers are pessimistic and noisy; the ratios are what to read.\n\
         - {}; {}\n",
        m.cpus, m.cpu_model, m.load_start, m.load_end, m.rustc, m.go
    );
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
         - Decode: the whole file in memory → typed list. kubeset: `serde_json::from_slice::<kubeset_api::List<Pod>>`; \
         k8s-openapi: `serde_json::from_slice::<k8s_openapi::List<Pod>>` (same process, same serde_json); \
         client-go: `encoding/json.Unmarshal` into `corev1.PodList`, and \
         “client-go (apimachinery)”: `scheme.Codecs.UniversalDeserializer().Decode`.\n\
         - Encode: the decoded list → JSON bytes (`serde_json::to_vec`; `json.Marshal`; the apimachinery JSON serializer). \
         MB/s counts the bytes each implementation wrote.\n\
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
         (its transport keeps at most 25 idle connections per host). The server shares the 2 CPUs with the client, \
         so these rows measure client CPU cost as much as latency.\n",
        sizes.join(", "),
        plan.watch_events,
        plan.watch_runs,
        plan.sequential,
        plan.concurrent_total,
        plan.concurrency,
    );

    out.push_str("## Results\n\n### Decode a PodList (JSON → typed)\n\n");
    throughput_table(&mut out, all, "decode-podlist", "pods");
    out.push_str("### Encode a PodList (typed → JSON)\n\n");
    throughput_table(&mut out, all, "encode-podlist", "pods");
    out.push_str("### Decode a watch stream (typed events)\n\n");
    throughput_table(&mut out, all, "decode-watch", "events");

    out.push_str(
        "### GET round trip, sequential (latency)\n\n\
         | implementation | requests | p50 µs | p99 µs | p50 peer / kubeset | p99 peer / kubeset |\n\
         |---|---:|---:|---:|---:|---:|\n",
    );
    for (items, group) in groups(all, "get-sequential") {
        let ours = kubeset_of(&group);
        for r in group {
            let _ = writeln!(
                out,
                "| {} | {items} | {:.0} | {:.0} | {} | {} |",
                text(r, "impl"),
                field(r, "p50_us").unwrap_or(0.0),
                field(r, "p99_us").unwrap_or(0.0),
                ratio(field(r, "p50_us"), ours.and_then(|o| field(o, "p50_us"))),
                ratio(field(r, "p99_us"), ours.and_then(|o| field(o, "p99_us"))),
            );
        }
    }
    out.push_str(&format!(
        "\n### GET round trip, {} concurrent (throughput)\n\n\
         | implementation | requests | seconds | requests/s | kubeset / peer (rate) |\n\
         |---|---:|---:|---:|---:|\n",
        plan.concurrency
    ));
    for (items, group) in groups(all, "get-concurrent") {
        let ours = kubeset_of(&group).and_then(|r| field(r, "median_s"));
        for r in group {
            let s = field(r, "median_s").unwrap_or(0.0);
            let rate = if s > 0.0 { items as f64 / s } else { 0.0 };
            let _ = writeln!(
                out,
                "| {} | {items} | {s:.2} | {rate:.0} | {} |",
                text(r, "impl"),
                ratio(Some(s), ours),
            );
        }
    }

    out.push_str(
        "\n### Not measured yet\n\n\
         | row | how it will be measured |\n|---|---|\n\
         | memory: peak RSS after listing 10,000 pods into a cache and applying 10,000 watch updates | \
         one process per client (kubeset-runtime store + watcher; kube-rs reflector; client-go informer) against \
         the embedded server seeded with the 10k list, then 10,000 MODIFIED events; peak RSS from `/proc/self/status` \
         `VmHWM` at the end |\n\
         | build cost of a minimal controller (Pods + Deployments) | two throw-away crates built clean with \
         `cargo build --release -j2` under `/usr/bin/time -v` (wall, max RSS): kubeset with `core-v1`,`apps-v1` only vs \
         kube + k8s-openapi `v1_35`; plus generated source bytes/lines per Kubernetes version |\n\
         | failover: server death (refused; hung) → next successful request | kubeset-testserver with 3 replicas and \
         its admin endpoint (`down`, `hang`), a kubeset client with the endpoint set, time from the fault to the next 200; \
         kube-rs and client-go have no failover across API servers (they fail until the single endpoint returns) |\n\n",
    );
    out.push_str("## Reproduce\n\n```sh\ncargo xtask bench          # full run (about 10 minutes on 2 loaded cores)\ncargo xtask bench --quick  # smoke run\n```\n\nNeeds python3 (input generator), Go (client-go peer; modules from the proxy or the module cache) and `../shared/bench/gen_podlist.py` (or `KUBESET_BENCH_GEN=path`).\n\n## Notes\n\n");
    out.push_str(notes);
    out.push('\n');
    out
}
