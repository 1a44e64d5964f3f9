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

mod admission;
mod scale;

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
    /// Interleaved rounds of the round-trip clients.
    rounds: usize,
    /// Failovers measured per fault.
    failover_trials: usize,
    /// Pods in the cache of the memory row (one of `lists`).
    cache_pods: usize,
    /// Watch updates the cache applies.
    cache_updates: usize,
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
        plan.rounds = env("KUBESET_BENCH_ROUNDS").unwrap_or(plan.rounds);
        plan.failover_trials = env("KUBESET_BENCH_FAILOVER_TRIALS").unwrap_or(plan.failover_trials);
        plan.cache_updates = env("KUBESET_BENCH_CACHE_UPDATES").unwrap_or(plan.cache_updates);
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
                rounds: 2,
                failover_trials: 2,
                cache_pods: 1000,
                cache_updates: 1000,
            }
        } else {
            Self {
                lists: vec![(1000, 15), (10_000, 5)],
                watch_events: 100_000,
                watch_runs: 3,
                sequential: 3000,
                concurrency: 64,
                concurrent_total: 30_000,
                rounds: 5,
                failover_trials: 5,
                cache_pods: 10_000,
                cache_updates: 10_000,
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
    stdout: Option<BufReader<std::process::ChildStdout>>,
}

impl Server {
    fn start(bin: &Path) -> Result<Self, Error> {
        Self::start_with(bin, &["serve".into()])
    }

    fn start_with(bin: &Path, args: &[std::ffi::OsString]) -> Result<Self, Error> {
        let mut child = Command::new(bin)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("kubeset-bench serve: cannot start: {e}"))?;
        let mut url = String::new();
        let mut stdout = child.stdout.take().map(BufReader::new);
        if let Some(out) = &mut stdout {
            out.read_line(&mut url)?;
        }
        let url = url.trim().to_owned();
        if !url.starts_with("http") {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("kubeset-bench serve printed {url:?}, not a URL").into());
        }
        Ok(Self { child, url, stdout })
    }

    /// Send one line to the server's stdin and wait for one line back.
    fn ask(&mut self, line: &str) -> Result<String, Error> {
        use std::io::Write as _;
        let stdin = self.child.stdin.as_mut().ok_or("server stdin closed")?;
        writeln!(stdin, "{line}")?;
        stdin.flush()?;
        let mut answer = String::new();
        self.stdout
            .as_mut()
            .ok_or("server stdout closed")?
            .read_line(&mut answer)?;
        Ok(answer.trim().to_owned())
    }
}

impl Server {
    /// CPU seconds the server process has used so far.
    fn cpu_s(&self) -> Option<f64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).ok()?;
        let rest = &stat[stat.rfind(')')? + 1..];
        let mut f = rest.split_whitespace();
        let utime: f64 = f.nth(11)?.parse().ok()?;
        let stime: f64 = f.next()?.parse().ok()?;
        Some((utime + stime) / 100.0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// The rows of the report, selectable with `--only a,b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Row {
    Codec,
    Watch,
    Roundtrip,
    Failover,
    Memory,
    Build,
    Admission,
    /// Only when named, and alone (see [`scale`]).
    Scale,
}

const ROWS: [(Row, &str); 8] = [
    (Row::Codec, "codec"),
    (Row::Watch, "watch"),
    (Row::Roundtrip, "roundtrip"),
    (Row::Failover, "failover"),
    (Row::Memory, "memory"),
    (Row::Build, "build"),
    (Row::Admission, "admission"),
    (Row::Scale, "scale"),
];

impl Row {
    fn name(self) -> &'static str {
        ROWS.iter()
            .find(|(r, _)| *r == self)
            .map_or("?", |(_, n)| *n)
    }
}

/// Which rows this run measures; `None` is all of them.
struct Rows(Option<Vec<Row>>);

impl Rows {
    /// `--only a,b[,…]` from the command line (xtask's own parser leaves
    /// unknown words to us).
    fn from_args() -> Result<Self, Error> {
        let args: Vec<String> = std::env::args().collect();
        let Some(i) = args.iter().position(|a| a == "--only") else {
            return Ok(Self(None));
        };
        let list = args.get(i + 1).ok_or(
            "--only needs a list: codec,watch,roundtrip,failover,memory,build,admission (or scale alone)",
        )?;
        let mut rows = Vec::new();
        for name in list.split(',').filter(|n| !n.is_empty()) {
            let row = ROWS
                .iter()
                .find(|(_, n)| *n == name)
                .map(|(r, _)| *r)
                .ok_or_else(|| format!("--only: unknown row {name:?}"))?;
            rows.push(row);
        }
        Ok(Self(Some(rows)))
    }

    fn has(&self, row: Row) -> bool {
        self.0.as_ref().is_none_or(|rows| rows.contains(&row))
    }

    fn all(&self) -> bool {
        self.0.is_none()
    }

    fn names(&self) -> String {
        ROWS.iter()
            .filter(|(r, _)| self.has(*r))
            .map(|(_, n)| *n)
            .collect::<Vec<_>>()
            .join(",")
    }
}

pub fn run(quick: bool) -> Result<(), Error> {
    let root = workspace_root();
    let plan = Plan::new(quick);
    let rows = Rows::from_args()?;
    let target = target_dir();
    if let Some(named) = rows.0.as_ref().filter(|r| r.contains(&Row::Scale)) {
        if named.len() > 1 {
            return Err("--only scale runs alone".into());
        }
        return scale::run(&root, &target, quick);
    }
    let data = target.join("bench-data");
    std::fs::create_dir_all(&data)?;
    let load_start = load();
    let started = first_line(Command::new("date").args(["-u", "+%Y-%m-%d %H:%M UTC"]));

    let gen_script = std::env::var_os("KUBESET_BENCH_GEN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/bench/gen_podlist.py"));
    let mut lists = Vec::new();
    let needs_lists = rows.has(Row::Codec) || rows.has(Row::Watch) || rows.has(Row::Memory);
    for &(n, runs) in plan.lists.iter().filter(|_| needs_lists) {
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

    // The build row builds its own throw-away crates: it needs neither the
    // bench binary nor the Go peer (and building them would load the machine
    // it measures).
    let needs_binaries = [
        Row::Codec,
        Row::Watch,
        Row::Roundtrip,
        Row::Failover,
        Row::Memory,
    ]
    .into_iter()
    .any(|r| rows.has(r));
    let (rust, go) = if needs_binaries {
        build_peers(&root, &target)?
    } else {
        peer_paths(&target)
    };

    let mut rec = Recorder::default();
    let mimalloc = target.join("release/kubeset-bench-mimalloc");
    if rows.has(Row::Codec) {
        rec.row(Row::Codec, || {
            let mut all = Vec::new();
            for (file, runs) in &lists {
                all.extend(codec_row(&rust, &mimalloc, &go, file, *runs)?);
            }
            Ok(all)
        });
    }
    if rows.has(Row::Watch) {
        rec.row(Row::Watch, || {
            watch_decode(&rust, &go, &plan, &lists, &data)
        });
    }
    if rows.has(Row::Roundtrip) {
        rec.row(Row::Roundtrip, || round_trips(&rust, &go, &plan));
    }
    if rows.has(Row::Failover) {
        rec.row(Row::Failover, || {
            records(
                Command::new(&rust)
                    .arg("failover")
                    .arg(plan.failover_trials.to_string()),
                "failover",
            )
        });
    }
    if rows.has(Row::Memory)
        && let Some((file, _)) = lists.iter().find(|(f, _)| {
            f.file_name()
                .is_some_and(|n| n.to_string_lossy() == format!("podlist_{}.json", plan.cache_pods))
        })
    {
        rec.row(Row::Memory, || memory(&rust, &go, file, plan.cache_updates));
    }
    if rows.has(Row::Build) {
        rec.row(Row::Build, || build_cost(&root, &target, quick));
    }
    if rows.has(Row::Admission) {
        rec.row(Row::Admission, || admission::run(&root, quick));
    }
    let Recorder {
        records: all,
        failed,
    } = rec;

    // A partial run (`--only`) never overwrites the published report: the
    // table in docs/ comes from one full run.
    let suffix = if rows.all() {
        String::new()
    } else {
        format!("-{}", rows.names().replace(',', "-"))
    };
    std::fs::write(
        data.join(format!("results{suffix}.json")),
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
    let old = std::fs::read_to_string(&docs).unwrap_or_default();
    let notes = Some(old.as_str())
        .and_then(|s| {
            let a = s.find(NOTES_BEGIN)?;
            let b = s.find(NOTES_END)?;
            (a < b).then(|| s[a..b + NOTES_END.len()].to_owned())
        })
        .unwrap_or_else(|| format!("{NOTES_BEGIN}\n{NOTES_END}"));
    let out = if rows.all() {
        std::fs::create_dir_all(root.join("docs"))?;
        docs
    } else {
        data.join(format!("benchmarks{suffix}.md"))
    };
    // The scale row's section (its own run) stays as it was.
    let mut text = report(&machine, &plan, &all, &notes);
    failed_section(&mut text, &failed);
    let text = scale::keep_section(text, scale::section_of(&old).unwrap_or(""));
    std::fs::write(&out, text)?;
    eprintln!("=== xtask bench: wrote {}", out.display());
    if failed.is_empty() {
        Ok(())
    } else {
        let names: Vec<&str> = failed.iter().map(|(row, _)| row.name()).collect();
        Err(format!(
            "rows failed (the others are in the report): {}",
            names.join(", ")
        )
        .into())
    }
}

/// The records of the rows measured so far, and the rows that failed: a
/// failing row is reported beside the others instead of ending the run
/// (a full run takes most of an hour).
#[derive(Default)]
struct Recorder {
    records: Vec<Value>,
    failed: Vec<(Row, String)>,
}

impl Recorder {
    fn row(&mut self, row: Row, measure: impl FnOnce() -> Result<Vec<Value>, Error>) {
        eprintln!("=== xtask bench: row {}", row.name());
        match measure() {
            Ok(records) => self.records.extend(records),
            Err(e) => {
                let mut why = e.to_string();
                let mut cause = e.source();
                while let Some(c) = cause {
                    why.push_str(&format!(": {c}"));
                    cause = c.source();
                }
                eprintln!("=== xtask bench: row {} failed: {why}", row.name());
                self.failed.push((row, why));
            }
        }
    }
}

/// The rows that failed, with their errors, appended to the report so a
/// published table never hides a missing row.
fn failed_section(out: &mut String, failed: &[(Row, String)]) {
    if failed.is_empty() {
        return;
    }
    out.push_str("\n## Rows that failed in this run\n\n");
    for (row, why) in failed {
        let _ = writeln!(out, "- `{}`: {}", row.name(), why.replace('\n', " "));
    }
}

/// The codec rows of one pod list: Rust (system allocator and mimalloc),
/// Go, and both codecs' protobuf.
fn codec_row(
    rust: &Path,
    mimalloc: &Path,
    go: &Path,
    file: &Path,
    runs: usize,
) -> Result<Vec<Value>, Error> {
    let runs = runs.to_string();
    let name = file.display().to_string();
    let mut all = records(
        Command::new(rust).arg("codec").arg(file).arg(&runs),
        &format!("Rust codec {name}"),
    )?;
    all.extend(on_mimalloc(records(
        Command::new(mimalloc).arg("codec").arg(file).arg(&runs),
        &format!("Rust codec {name} (mimalloc)"),
    )?));
    all.extend(records(
        Command::new(go).arg("codec").arg(file).arg(&runs),
        &format!("Go codec {name}"),
    )?);
    all.extend(codec_protobuf([rust, mimalloc], go, file, &runs)?);
    Ok(all)
}

fn peer_paths(target: &Path) -> (PathBuf, PathBuf) {
    (
        target.join("release/kubeset-bench"),
        target.join("bench-go/kubeset-bench-go"),
    )
}

/// Builds `kubeset-bench` in release and the Go peer; their paths.
fn build_peers(root: &Path, target: &Path) -> Result<(PathBuf, PathBuf), Error> {
    let (rust, go) = peer_paths(target);
    eprintln!("=== xtask bench: cargo build --release -p kubeset-bench");
    output(
        Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .args(["build", "--release", "-p", "kubeset-bench"])
            .current_dir(root),
        "cargo build",
    )?;
    eprintln!("=== xtask bench: go build");
    output(
        Command::new("go")
            .args(["build", "-o"])
            .arg(&go)
            .arg(".")
            .current_dir(root.join("crates/kubeset-bench/go")),
        "go build",
    )?;
    Ok((rust, go))
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

/// The round-trip clients, in table order: the Kubernetes clients, then
/// the transport floors (plain reqwest, plain hyper-util), which are not
/// peers but the least a client on that HTTP stack can cost.
const ROUND_TRIP_CLIENTS: [&str; 5] = ["kubeset", "kube-rs", "client-go", "reqwest", "hyper"];

/// How a round-trip client is named in the tables.
fn round_trip_label(name: &str) -> String {
    match name {
        "reqwest" | "hyper" => format!("{name} (transport floor)"),
        _ => name.to_owned(),
    }
}

/// GET round trips: `plan.rounds` rounds of every client against one
/// server process, the order rotating each round (kubeset, kube-rs,
/// client-go, reqwest, hyper; then kube-rs, client-go, reqwest, hyper,
/// kubeset; …) so that no client is always first on a machine whose load
/// drifts. Each record gets its
/// `round` and the server's CPU seconds during that client's phase
/// (`server_cpu_s`, read from `/proc/<pid>/stat`).
fn round_trips(rust: &Path, go: &Path, plan: &Plan) -> Result<Vec<Value>, Error> {
    let server = Server::start(rust)?;
    let args = [
        plan.sequential.to_string(),
        plan.concurrency.to_string(),
        plan.concurrent_total.to_string(),
    ];
    let clients = ROUND_TRIP_CLIENTS;
    let mut all = Vec::new();
    for round in 0..plan.rounds.max(1) {
        for k in 0..clients.len() {
            let client = clients[(round + k) % clients.len()];
            let mut cmd = if client == "client-go" {
                let mut c = Command::new(go);
                c.arg("roundtrip").arg(&server.url);
                c
            } else {
                let mut c = Command::new(rust);
                c.arg("roundtrip").arg(&server.url).arg(client);
                c
            };
            cmd.args(&args);
            let before = server.cpu_s();
            let mut recs = records(&mut cmd, &format!("round {round}: {client} round trips"))?;
            let server_cpu = match (before, server.cpu_s()) {
                (Some(a), Some(b)) => Some(b - a),
                _ => None,
            };
            for r in &mut recs {
                if let Value::Object(o) = r {
                    o.insert("round".into(), round.into());
                    if let Some(c) = server_cpu {
                        // Both phases of the process (and its warm-up)
                        // share this figure; per request it is read
                        // against every request the process made.
                        o.insert("server_cpu_s".into(), c.into());
                    }
                }
            }
            all.extend(recs);
        }
    }
    Ok(all)
}

/// Memory: one process per cache against one seeded server process. Each
/// client lists every pod, prints `synced`; the server then patches
/// `updates` pods; the client exits once it has seen them all and reports
/// its peak RSS. Clients run one at a time.
fn memory(rust: &Path, go: &Path, podlist: &Path, updates: usize) -> Result<Vec<Value>, Error> {
    eprintln!(
        "=== xtask bench: seeding the server with {}",
        podlist.display()
    );
    let mut server = Server::start_with(rust, &["serve-pods".into(), podlist.into()])?;
    let cases: [(&str, &[&str]); 9] = [
        ("kubeset", &["kubeset", "full"]),
        ("kubeset", &["kubeset", "no-managed-fields"]),
        ("kubeset", &["kubeset", "metadata"]),
        ("kubeset", &["kubeset", "two-caches"]),
        ("kubeset", &["kubeset", "shared"]),
        ("kubeset", &["kubeset", "protobuf"]),
        ("kube-rs", &["kube-rs", "full"]),
        ("client-go", &[]),
        ("client-go", &["protobuf"]),
    ];
    let mut all = Vec::new();
    for (name, args) in cases {
        let what = format!("cache: {name} {}", args.last().unwrap_or(&"full"));
        eprintln!("=== xtask bench: {what}");
        let mut cmd = if name == "client-go" {
            // kubeset-bench-go cache URL UPDATES [protobuf]
            let mut c = Command::new(go);
            c.arg("cache")
                .arg(&server.url)
                .arg(updates.to_string())
                .args(args);
            c
        } else {
            let mut c = Command::new(rust);
            c.arg("cache")
                .arg(&server.url)
                .args(args)
                .arg(updates.to_string());
            c
        };
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("{what}: cannot start: {e}"))?;
        let mut out = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut line = String::new();
        out.read_line(&mut line)?;
        if line.trim() != "synced" {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{what}: printed {line:?} before syncing").into());
        }
        let answer = server.ask(&format!("update {updates}"))?;
        if answer != format!("updated {updates}") {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{what}: server answered {answer:?}").into());
        }
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut out, &mut rest)?;
        let status = child.wait()?;
        if !status.success() {
            return Err(format!("{what} failed ({status})").into());
        }
        match serde_json::from_str(&rest)? {
            Value::Array(v) => all.extend(v),
            _ => return Err(format!("{what}: output is not a JSON array").into()),
        }
    }
    Ok(all)
}

/// Files, bytes and lines of the `.rs` files under `dir`.
fn source_size(dir: &Path) -> (u64, u64, u64) {
    let (mut files, mut bytes, mut lines) = (0, 0, 0);
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs")
                && let Ok(text) = std::fs::read(&p)
            {
                files += 1;
                bytes += text.len() as u64;
                lines += text.iter().filter(|b| **b == b'\n').count() as u64;
            }
        }
    }
    (files, bytes, lines)
}

/// k8s-openapi's source in cargo's registry (the locked version).
fn k8s_openapi_src() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let version = locked("k8s-openapi");
    let name = format!("k8s-openapi-{}", version.split(", ").next().unwrap_or(""));
    std::fs::read_dir(home.join("registry/src"))
        .ok()?
        .flatten()
        .map(|d| d.path().join(&name))
        .find(|p| p.is_dir())
}

const CONTROLLER_KUBESET: &str = r#"//! Lists Pods and Deployments (build-cost benchmark; generated by cargo xtask bench).
use kubeset::api::apps::v1::Deployment;
use kubeset::api::core::v1::Pod;
use kubeset::params::ListParams;
use kubeset::{Api, Client};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::try_default().await?;
    let pods: Api<Pod> = Api::all(client.clone());
    for p in pods.list(&ListParams::default()).await?.items {
        println!("pod {}", p.metadata.name.unwrap_or_default());
    }
    let deployments: Api<Deployment> = Api::all(client);
    for d in deployments.list(&ListParams::default()).await?.items {
        println!("deployment {}", d.metadata.name.unwrap_or_default());
    }
    Ok(())
}
"#;

const CONTROLLER_KUBE: &str = r#"//! Lists Pods and Deployments (build-cost benchmark; generated by cargo xtask bench).
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::ListParams;
use kube::{Api, Client};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::try_default().await?;
    let pods: Api<Pod> = Api::all(client.clone());
    for p in pods.list(&ListParams::default()).await?.items {
        println!("pod {}", p.metadata.name.unwrap_or_default());
    }
    let deployments: Api<Deployment> = Api::all(client);
    for d in deployments.list(&ListParams::default()).await?.items {
        println!("deployment {}", d.metadata.name.unwrap_or_default());
    }
    Ok(())
}
"#;

/// `/usr/bin/time -v` figures: wall seconds, max RSS (KiB) and CPU
/// seconds (user + system, of cargo and every rustc it ran).
fn time_v(stderr: &str) -> (Option<f64>, Option<u64>, Option<f64>) {
    let mut wall = None;
    let mut rss = None;
    let mut cpu: Option<f64> = None;
    for l in stderr.lines().map(str::trim) {
        let secs = l
            .strip_prefix("User time (seconds): ")
            .or_else(|| l.strip_prefix("System time (seconds): "))
            .and_then(|v| v.parse::<f64>().ok());
        if let Some(v) = secs {
            cpu = Some(cpu.unwrap_or(0.0) + v);
        }
        if let Some(v) = l.strip_prefix("Elapsed (wall clock) time (h:mm:ss or m:ss): ") {
            let parts: Vec<f64> = v.split(':').filter_map(|p| p.parse().ok()).collect();
            wall = Some(parts.iter().fold(0.0, |acc, p| acc * 60.0 + p));
        } else if let Some(v) = l.strip_prefix("Maximum resident set size (kbytes): ") {
            rss = v.parse().ok();
        }
    }
    (wall, rss, cpu)
}

/// Build cost: a minimal controller (lists Pods and Deployments) on
/// kubeset (`kubeset-api` with `core-v1`, `apps-v1` only) and on kube 5 +
/// k8s-openapi (`v1_35`), each generated under `<target>/bench-build/`,
/// fetched first, then built clean with `cargo build --release` and
/// `CARGO_BUILD_JOBS=2` under `/usr/bin/time -v` in its own target dir.
/// Plus the generated source size of each model crate.
fn build_cost(root: &Path, target: &Path, quick: bool) -> Result<Vec<Value>, Error> {
    let base = target.join("bench-build");
    let crates = root.join("crates");
    let kubeset_toml = format!(
        "[package]\nname = \"controller-kubeset\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
         [workspace]\n\n[dependencies]\n\
         kubeset = {{ path = {:?}, default-features = false }}\n\
         kubeset-api = {{ path = {:?}, default-features = false, features = [\"core-v1\", \"apps-v1\"] }}\n\
         tokio = {{ version = \"1\", features = [\"macros\", \"rt-multi-thread\"] }}\n",
        crates.join("kubeset"),
        crates.join("kubeset-api"),
    );
    let kube_toml = format!(
        "[package]\nname = \"controller-kube\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
         [workspace]\n\n[dependencies]\n\
         kube = \"={}\"\n\
         k8s-openapi = {{ version = \"={}\", features = [\"v1_35\"] }}\n\
         tokio = {{ version = \"1\", features = [\"macros\", \"rt-multi-thread\"] }}\n",
        locked("kube"),
        locked("k8s-openapi"),
    );
    let mut all = Vec::new();
    for (name, toml, main) in [
        ("kubeset", kubeset_toml, CONTROLLER_KUBESET),
        ("kube + k8s-openapi", kube_toml, CONTROLLER_KUBE),
    ] {
        let dir = base.join(if name == "kubeset" { "kubeset" } else { "kube" });
        std::fs::create_dir_all(dir.join("src"))?;
        std::fs::write(dir.join("Cargo.toml"), toml)?;
        std::fs::write(dir.join("src/main.rs"), main)?;
        // The workspace's lock file pins the versions both share.
        std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock"))?;
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        output(
            Command::new(&cargo).arg("fetch").current_dir(&dir),
            &format!("cargo fetch ({name})"),
        )?;
        let build_target = dir.join("target");
        let _ = std::fs::remove_dir_all(&build_target);
        eprintln!("=== xtask bench: clean release build of the {name} controller");
        let mut cmd = Command::new("/usr/bin/time");
        cmd.arg("-v")
            .arg(&cargo)
            .args(["build", "--release", "--quiet"])
            .current_dir(&dir)
            .env("CARGO_TARGET_DIR", &build_target)
            .env("CARGO_BUILD_JOBS", "2")
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .stdout(Stdio::inherit())
            .stderr(Stdio::piped());
        let out = cmd
            .output()
            .map_err(|e| format!("/usr/bin/time: cannot start: {e}"))?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            eprintln!("{stderr}");
            return Err(format!("release build of the {name} controller failed").into());
        }
        let (wall, rss, cpu) = time_v(&stderr);
        let binary = build_target.join("release").join(if name == "kubeset" {
            "controller-kubeset"
        } else {
            "controller-kube"
        });
        let size = std::fs::metadata(&binary).map(|m| m.len()).unwrap_or(0);
        all.push(serde_json::json!({
            "bench": "build-controller",
            "impl": name,
            "items": 1,
            "samples_s": [wall.unwrap_or(0.0)],
            "median_s": wall.unwrap_or(0.0),
            "peak_rss_kib": rss,
            "cpu_s": cpu,
            "bytes": size,
        }));
        if quick {
            // Keep the disk small after a smoke run.
            let _ = std::fs::remove_dir_all(&build_target);
        }
    }
    let (files, bytes, lines) = source_size(&root.join("crates/kubeset-api/src"));
    all.push(serde_json::json!({
        "bench": "source-size", "impl": "kubeset-api (v1.35, every group)", "items": files,
        "bytes": bytes, "lines": lines, "samples_s": [], "median_s": 0.0,
    }));
    if let Some(src) = k8s_openapi_src() {
        let (files, bytes, lines) = source_size(&src.join("src/v1_35"));
        all.push(serde_json::json!({
            "bench": "source-size", "impl": "k8s-openapi (v1_35 only)", "items": files,
            "bytes": bytes, "lines": lines, "samples_s": [], "median_s": 0.0,
        }));
        let (files, bytes, lines) = source_size(&src.join("src"));
        all.push(serde_json::json!({
            "bench": "source-size", "impl": "k8s-openapi (crate, five versions)", "items": files,
            "bytes": bytes, "lines": lines, "samples_s": [], "median_s": 0.0,
        }));
    }
    Ok(all)
}

/// The protobuf codec rows of one PodList: Go converts the JSON list to
/// protobuf (as kube-apiserver writes it), kubeset decodes Go's bytes,
/// checks that its own encoding is as long and writes it; Go decodes
/// kubeset's bytes to an equal list, then both are timed.
/// `rust`: the system allocator's binary and mimalloc's.
fn codec_protobuf(
    rust: [&Path; 2],
    go: &Path,
    json: &Path,
    runs: &str,
) -> Result<Vec<Value>, Error> {
    let pb = json.with_extension("pb");
    let ours = json.with_extension("kubeset.pb");
    output(
        Command::new(go).arg("to-protobuf").arg(json).arg(&pb),
        "Go to-protobuf",
    )?;
    let name = pb.display().to_string();
    let run = |bin: &Path, what: &str| {
        records(
            Command::new(bin)
                .arg("codec-protobuf")
                .arg(&pb)
                .arg(runs)
                .arg(&ours),
            &format!("Rust codec-protobuf {name}{what}"),
        )
    };
    let mut all = on_mimalloc(run(rust[1], " (mimalloc)")?);
    // The system allocator's run last: Go checks the bytes it wrote.
    all.extend(run(rust[0], "")?);
    all.extend(records(
        Command::new(go)
            .arg("codec-protobuf")
            .arg(&pb)
            .arg(runs)
            .arg(&ours),
        &format!("Go codec-protobuf {name}"),
    )?);
    std::fs::remove_file(&ours)?;
    std::fs::remove_file(&pb)?;
    Ok(all)
}

/// Records of `kubeset-bench-mimalloc`: each implementation's name gets
/// `MIMALLOC` appended, so its rows stand beside the system allocator's.
fn on_mimalloc(mut records: Vec<Value>) -> Vec<Value> {
    for r in &mut records {
        let name = format!("{}{MIMALLOC}", text(r, "impl"));
        r["impl"] = Value::String(name);
    }
    records
}

/// What [`on_mimalloc`] appends to an implementation's name.
const MIMALLOC: &str = " + mimalloc";

/// The protobuf watch stream (`stream` converted by Go's encoder, framed
/// as kube-apiserver frames it) decoded by client-go. kubeset's side is
/// `kubeset_bench::watch_protobuf::run_kubeset`, given its protobuf watch
/// decoder; its command is added beside this one when that decoder lands.
fn watch_decode_protobuf(
    rust: &Path,
    go: &Path,
    stream: &Path,
    runs: &str,
) -> Result<Vec<Value>, Error> {
    let pb = stream.with_extension("pb");
    output(
        Command::new(go)
            .arg("watch-to-protobuf")
            .arg(stream)
            .arg(&pb),
        "Go watch-to-protobuf",
    )?;
    let mut all = records(
        Command::new(rust).arg("watch-protobuf").arg(&pb).arg(runs),
        "Rust watch-protobuf",
    )?;
    all.extend(records(
        Command::new(go).arg("watch-protobuf").arg(&pb).arg(runs),
        "Go watch-protobuf",
    )?);
    std::fs::remove_file(&pb)?;
    Ok(all)
}

fn watch_decode(
    rust: &Path,
    go: &Path,
    plan: &Plan,
    lists: &[(PathBuf, usize)],
    data: &Path,
) -> Result<Vec<Value>, Error> {
    let mut all = Vec::new();
    let stream = data.join(format!("watch_{}.jsonl", plan.watch_events));
    if let Some((small, _)) = lists.first() {
        output(
            Command::new(rust)
                .arg("make-watch")
                .arg(small)
                .arg(plan.watch_events.to_string())
                .arg(&stream),
            "make-watch",
        )?;
    }
    let runs = plan.watch_runs.to_string();
    all.extend(records(
        Command::new(rust).arg("watch").arg(&stream).arg(&runs),
        "Rust watch",
    )?);
    all.extend(records(
        Command::new(go).arg("watch").arg(&stream).arg(&runs),
        "Go watch",
    )?);
    all.extend(watch_decode_protobuf(rust, go, &stream, &runs)?);
    std::fs::remove_file(&stream)?;
    Ok(all)
}

/// The median of the record of `bench` by `implementation` for `items`.
fn median_of(all: &[Value], bench: &str, implementation: &str, items: u64) -> Option<f64> {
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
fn protobuf_tables(out: &mut String, all: &[Value]) {
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
fn per_impl(
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

fn median(v: &[f64]) -> Option<f64> {
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

fn of<'a>(table: &'a [(String, Vec<f64>)], name: &str) -> &'a [f64] {
    table
        .iter()
        .find(|(n, _)| n == name)
        .map_or(&[], |(_, v)| v.as_slice())
}

fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "–".to_owned(), |v| format!("{v:.digits$}"))
}

fn round_trip_tables(out: &mut String, plan: &Plan, all: &[Value]) {
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

fn failover_table(out: &mut String, all: &[Value]) {
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

fn memory_table(out: &mut String, plan: &Plan, all: &[Value]) {
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

fn build_table(out: &mut String, all: &[Value]) {
    let builds: Vec<&Value> = all
        .iter()
        .filter(|r| text(r, "bench") == "build-controller")
        .collect();
    if !builds.is_empty() {
        let ours = builds
            .iter()
            .find(|r| text(r, "impl") == "kubeset")
            .and_then(|r| field(r, "median_s"));
        let ours_rss = builds
            .iter()
            .find(|r| text(r, "impl") == "kubeset")
            .and_then(|r| field(r, "peak_rss_kib"));
        let ours_cpu = builds
            .iter()
            .find(|r| text(r, "impl") == "kubeset")
            .and_then(|r| field(r, "cpu_s"));
        out.push_str(
            "### Build cost: minimal controller (lists Pods and Deployments)\n\n\
             Two throw-away crates generated under `<target>/bench-build/` with the same `main.rs` shape: kubeset \
             (path dependency on this workspace, `kubeset` without default features, `kubeset-api` with `core-v1` and \
             `apps-v1` only) and kube (default features: client, rustls, kubeconfig) + k8s-openapi (`v1_35`). \
             Dependencies fetched first; then a clean `cargo build --release` with `CARGO_BUILD_JOBS=2` in a fresh \
             target dir under `/usr/bin/time -v`: wall time, CPU time (user + system of cargo and every rustc; less \
             sensitive to other load on the machine than wall time) and the peak RSS of the largest process (rustc).\n\n\
             | crate | wall s | CPU s | peak RSS MB | binary MB | peer / kubeset (wall) | peer / kubeset (CPU) | peer / kubeset (RSS) |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        for r in builds {
            let _ = writeln!(
                out,
                "| {} | {:.1} | {} | {} | {:.1} | {} | {} | {} |",
                text(r, "impl"),
                field(r, "median_s").unwrap_or(0.0),
                fmt_opt(field(r, "cpu_s"), 1),
                fmt_opt(field(r, "peak_rss_kib").map(|k| k / 1024.0), 0),
                field(r, "bytes").unwrap_or(0.0) / 1e6,
                ratio(field(r, "median_s"), ours),
                ratio(field(r, "cpu_s"), ours_cpu),
                ratio(field(r, "peak_rss_kib"), ours_rss),
            );
        }
        out.push('\n');
    }
    let sizes: Vec<&Value> = all
        .iter()
        .filter(|r| text(r, "bench") == "source-size")
        .collect();
    if !sizes.is_empty() {
        out.push_str(
            "### Generated model source\n\n\
             `.rs` files under `crates/kubeset-api/src` (generated and hand-written; one Kubernetes version, every \
             group, feature-gated) and under k8s-openapi's `src/` in cargo's registry.\n\n\
             | source | files | MB | lines |\n|---|---:|---:|---:|\n",
        );
        for r in sizes {
            let _ = writeln!(
                out,
                "| {} | {} | {:.1} | {} |",
                text(r, "impl"),
                r.get("items").and_then(Value::as_u64).unwrap_or(0),
                field(r, "bytes").unwrap_or(0.0) / 1e6,
                r.get("lines").and_then(Value::as_u64).unwrap_or(0),
            );
        }
        out.push('\n');
    }
}

fn report(m: &Machine, plan: &Plan, all: &[Value], notes: &str) -> String {
    let mut out = String::new();
    title(&mut out, m);
    machine_section(&mut out, m);
    versions_section(&mut out);
    method_section(&mut out, plan);
    results(&mut out, plan, all);
    out.push_str("## Reproduce\n\n```sh\ncargo xtask bench          # full run (about 20 minutes on 2 loaded cores)\ncargo xtask bench --quick  # smoke run\ncargo xtask bench --only roundtrip,failover   # some rows (codec, watch, roundtrip, failover, memory, build, admission);\n                           # written to <target>/bench-data/benchmarks-<rows>.md, never to docs/\ncargo xtask bench --only scale   # the scale row alone (1k/10k/100k pods; long, run alone): its own\n                           # section of docs/benchmarks.md and docs/benchmarks-scale.svg\n```\n\nNeeds python3 (input generator), Go (client-go peer; modules from the proxy or the module cache) and `../shared/bench/gen_podlist.py` (or `KUBESET_BENCH_GEN=path`).\n\n## Notes\n\n");
    out.push_str(notes);
    out.push('\n');
    out
}

/// The title and what the report is, with the run's start.
fn title(out: &mut String, m: &Machine) {
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
fn machine_section(out: &mut String, m: &Machine) {
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
fn versions_section(out: &mut String) {
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
fn method_section(out: &mut String, plan: &Plan) {
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
fn results(out: &mut String, plan: &Plan, all: &[Value]) {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> Machine {
        Machine {
            started: "2026-01-01 00:00 UTC".to_owned(),
            cpus: 2,
            cpu_model: "Test CPU".to_owned(),
            load_start: "0.1 0.2 0.3".to_owned(),
            load_end: "0.4 0.5 0.6".to_owned(),
            rustc: "rustc 1.0".to_owned(),
            go: "go1.0".to_owned(),
            quick: true,
        }
    }

    /// A report without records: every section in order, the machine's
    /// facts, the plan's sizes, and the notes last.
    #[test]
    fn report_has_its_sections_in_order() {
        let plan = Plan::new(true);
        let text = report(&machine(), &plan, &[], "NOTES-KEPT");
        let (n, runs) = plan.lists[0];
        let sizes = format!("{n} pods × {runs} runs");
        let events = format!("{} events", plan.watch_events);
        let mut from = 0;
        for needle in [
            "# Benchmarks: kubeset",
            "`cargo xtask bench --quick` (2026-01-01 00:00 UTC)",
            "**Quick (smoke) run",
            "## Machine",
            "- CPUs: 2 × Test CPU",
            "at start: 0.1 0.2 0.3; at end: 0.4 0.5 0.6",
            "- rustc 1.0; go1.0",
            "## Versions",
            "- kubeset: this workspace",
            "## Method",
            &sizes,
            &events,
            "## Results",
            "### Decode a PodList (JSON → typed)",
            "### Encode a PodList (typed → JSON)",
            "### Decode a watch stream (typed events)",
            "## Reproduce",
            "## Notes\n\nNOTES-KEPT\n",
        ] {
            let Some(at) = text[from..].find(needle) else {
                panic!("{needle:?} missing after byte {from} of:\n{text}");
            };
            from += at + needle.len();
        }
        assert_eq!(from, text.len(), "the notes end the report");
    }
}
