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

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::{Error, workspace_root};
use build::build_cost;
use measure::{codec_row, memory, round_trips, watch_decode};
use report::{failed_section, field, fmt_opt, ratio, report, text};

mod admission;
mod build;
mod cli_size;
mod measure;
mod report;
mod scale;
mod shard;

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
    /// One client against this server: start it, wait for `synced`, have the
    /// server patch `updates` pods, read its records.
    fn run_client(
        &mut self,
        mut cmd: Command,
        updates: usize,
        what: &str,
    ) -> Result<Vec<Value>, Error> {
        eprintln!("=== xtask bench: {what}");
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("{what}: cannot start: {e}"))?;
        let mut out = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut line = String::new();
        out.read_line(&mut line)?;
        let answer = if line.trim() == "synced" {
            self.ask(&format!("update {updates}"))?
        } else {
            format!("(client printed {line:?} before syncing)")
        };
        if answer != format!("updated {updates}") {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{what}: {answer}").into());
        }
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut out, &mut rest)?;
        let status = child.wait()?;
        if !status.success() {
            return Err(format!("{what} failed ({status})").into());
        }
        match serde_json::from_str(&rest)? {
            Value::Array(v) => Ok(v),
            _ => Err(format!("{what}: output is not a JSON array").into()),
        }
    }

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
    /// The dist binary's size and where it goes (a dist build: slow).
    CliSize,
    /// Only when named, and alone (see [`scale`]).
    Scale,
    /// Only when named, and alone (see [`shard`]).
    Shard,
}

const ROWS: [(Row, &str); 10] = [
    (Row::Codec, "codec"),
    (Row::Watch, "watch"),
    (Row::Roundtrip, "roundtrip"),
    (Row::Failover, "failover"),
    (Row::Memory, "memory"),
    (Row::Build, "build"),
    (Row::Admission, "admission"),
    (Row::CliSize, "cli-size"),
    (Row::Scale, "scale"),
    (Row::Shard, "shard"),
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
            "--only needs a list: codec,watch,roundtrip,failover,memory,build,admission,cli-size (or scale or shard alone)",
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
    if let Some(named) = rows.0.as_ref().filter(|r| r.contains(&Row::Shard)) {
        if named.len() > 1 {
            return Err("--only shard runs alone".into());
        }
        return shard::run(&root, &target, quick);
    }
    let data = target.join("bench-data");
    std::fs::create_dir_all(&data)?;
    let load_start = load();
    let started = first_line(Command::new("date").args(["-u", "+%Y-%m-%d %H:%M UTC"]));
    let lists = podlists(&root, &plan, &rows, &data)?;
    let Recorder {
        records: all,
        failed,
    } = measure_rows(&root, &target, &plan, quick, &rows, &lists, &data)?;
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
    write_report(&root, &data, &machine, &plan, &rows, &all, &failed)?;
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

/// The generator's PodLists the rows need (written once into `data`),
/// with the number of decode runs of each.
fn podlists(
    root: &Path,
    plan: &Plan,
    rows: &Rows,
    data: &Path,
) -> Result<Vec<(PathBuf, usize)>, Error> {
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
    Ok(lists)
}

/// Runs every selected row (a failing one is recorded, the others run).
fn measure_rows(
    root: &Path,
    target: &Path,
    plan: &Plan,
    quick: bool,
    rows: &Rows,
    lists: &[(PathBuf, usize)],
    data: &Path,
) -> Result<Recorder, Error> {
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
        build_peers(root, target)?
    } else {
        peer_paths(target)
    };

    let mut rec = Recorder::default();
    let mimalloc = target.join("release/kubeset-bench-mimalloc");
    if rows.has(Row::Codec) {
        rec.row(Row::Codec, || {
            let mut all = Vec::new();
            for (file, runs) in lists {
                all.extend(codec_row(&rust, &mimalloc, &go, file, *runs)?);
            }
            Ok(all)
        });
    }
    if rows.has(Row::Watch) {
        rec.row(Row::Watch, || watch_decode(&rust, &go, plan, lists, data));
    }
    if rows.has(Row::Roundtrip) {
        rec.row(Row::Roundtrip, || round_trips(&rust, &go, plan));
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
        rec.row(Row::Build, || build_cost(root, target, quick));
    }
    if rows.has(Row::Admission) {
        rec.row(Row::Admission, || admission::run(root, quick));
    }
    if rows.has(Row::CliSize) {
        rec.row(Row::CliSize, || cli_size::run(root, target));
    }
    Ok(rec)
}

/// The records into `data`, and the report: `docs/benchmarks.md` after a
/// full run (its notes and the scale and shard rows' sections kept), beside the data
/// after a partial one (`--only`), which never overwrites the published
/// report.
fn write_report(
    root: &Path,
    data: &Path,
    machine: &Machine,
    plan: &Plan,
    rows: &Rows,
    all: &[Value],
    failed: &[(Row, String)],
) -> Result<(), Error> {
    let suffix = if rows.all() {
        String::new()
    } else {
        format!("-{}", rows.names().replace(',', "-"))
    };
    std::fs::write(
        data.join(format!("results{suffix}.json")),
        serde_json::to_string_pretty(all)?,
    )?;
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
    let mut text = report(machine, plan, all, &notes);
    failed_section(&mut text, failed);
    let text = scale::keep_section(text, scale::section_of(&old, scale::MARKS).unwrap_or(""));
    let text = scale::keep_section(text, scale::section_of(&old, shard::MARKS).unwrap_or(""));
    std::fs::write(&out, text)?;
    eprintln!("=== xtask bench: wrote {}", out.display());
    Ok(())
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
