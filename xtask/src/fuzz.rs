//! `cargo xtask fuzz [--smoke] [--seconds N] [TARGET...]`: builds the
//! libFuzzer targets of `fuzz/` on the stable toolchain and runs each for a
//! bounded time.
//!
//! The build is what `cargo fuzz build --sanitizer none` does, without
//! needing cargo-fuzz or nightly: rustc's stable `-C passes=sancov-module`
//! and `-C llvm-args=-sanitizer-coverage-*` flags instrument the code for
//! libFuzzer (linked by `libfuzzer-sys`, which builds it from its C++
//! source), `--cfg fuzzing` is set, and `--target` is explicit so that the
//! flags reach neither build scripts nor proc macros. Release profile with
//! debug assertions and overflow checks (`fuzz/Cargo.toml`).
//!
//! Each target runs on `fuzz/corpus/<target>` (grown by the run, not
//! committed) and `fuzz/seeds/<target>` (the committed seeds), with a
//! per-input timeout and a memory limit; a crash, a timeout or an
//! out-of-memory input fails the run and is written to
//! `fuzz/artifacts/<target>/`. `--smoke` is CI's bounded run (20 s per
//! target unless `--seconds`); without it, 60 s per target.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::{Error, workspace_root};

/// The coverage flags `cargo fuzz` passes for `--sanitizer none` (all stable).
const RUSTFLAGS: &[&str] = &[
    "--cfg",
    "fuzzing",
    "-Cpasses=sancov-module",
    "-Cllvm-args=-sanitizer-coverage-level=4",
    "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
    "-Cllvm-args=-sanitizer-coverage-pc-table",
    "-Cllvm-args=-sanitizer-coverage-trace-compares",
    "-Cllvm-args=-sanitizer-coverage-stack-depth",
    "-Cllvm-args=-simplifycfg-branch-fold-threshold=0",
];

/// libFuzzer's limits for one input: time, memory and size.
const LIBFUZZER_LIMITS: &[&str] = &["-timeout=10", "-rss_limit_mb=2048", "-max_len=65536"];

fn host_triple() -> Result<String, Error> {
    let out = Command::new("rustc").arg("-vV").output()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .ok_or_else(|| "rustc -vV names no host".into())
}

/// Every target: the file stems of `fuzz/fuzz_targets/`, sorted.
fn all_targets(fuzz: &Path) -> Result<Vec<String>, Error> {
    let mut names: Vec<String> = std::fs::read_dir(fuzz.join("fuzz_targets"))?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let p = e.path();
            let stem = p.file_stem()?.to_string_lossy().into_owned();
            (p.extension()? == "rs").then_some(stem)
        })
        .collect();
    names.sort();
    Ok(names)
}

fn build(fuzz: &Path, host: &str) -> Result<(), Error> {
    let started = Instant::now();
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--release", "--bins", "--target", host])
        .arg("--manifest-path")
        .arg(fuzz.join("Cargo.toml"))
        .env("RUSTFLAGS", RUSTFLAGS.join(" "))
        .status()?;
    if !status.success() {
        return Err(format!("building the fuzz targets failed ({status})").into());
    }
    eprintln!("xtask fuzz: built in {:.0?}", started.elapsed());
    Ok(())
}

/// What one target's run did.
struct Outcome {
    target: String,
    seconds: u64,
    execs: u64,
    ok: bool,
}

/// libFuzzer's `-print_final_stats=1` line `stat::number_of_executed_units: N`.
fn executed_units(stderr: &str) -> u64 {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

fn run_target(fuzz: &Path, bin: &Path, target: &str, seconds: u64) -> Result<Outcome, Error> {
    let corpus = fuzz.join("corpus").join(target);
    let artifacts = fuzz.join("artifacts").join(target);
    std::fs::create_dir_all(&corpus)?;
    std::fs::create_dir_all(&artifacts)?;
    let mut cmd = Command::new(bin);
    cmd.args(LIBFUZZER_LIMITS)
        .arg(format!("-max_total_time={seconds}"))
        .arg("-print_final_stats=1")
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .arg(&corpus);
    let seeds = fuzz.join("seeds").join(target);
    if seeds.is_dir() {
        cmd.arg(&seeds);
    }
    let started = Instant::now();
    let out = cmd.output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        let tail: Vec<&str> = stderr.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        eprintln!("--- {target} failed:\n{}", tail.join("\n"));
    }
    Ok(Outcome {
        target: target.to_owned(),
        seconds: started.elapsed().as_secs(),
        execs: executed_units(&stderr),
        ok: out.status.success(),
    })
}

/// Builds and runs `targets` (every target when empty) for `seconds` each
/// (default: 20 with `smoke`, else 60).
pub fn run(smoke: bool, seconds: Option<u64>, targets: &[String]) -> Result<(), Error> {
    let fuzz: PathBuf = workspace_root().join("fuzz");
    let host = host_triple()?;
    build(&fuzz, &host)?;
    let seconds = seconds.unwrap_or(if smoke { 20 } else { 60 });
    let targets = if targets.is_empty() {
        all_targets(&fuzz)?
    } else {
        targets.to_vec()
    };
    let bins = fuzz.join("target").join(&host).join("release");
    let mut failed = Vec::new();
    eprintln!("| target | seconds | executions |\n| --- | ---: | ---: |");
    for target in &targets {
        let o = run_target(&fuzz, &bins.join(target), target, seconds)?;
        eprintln!(
            "| {} | {} | {} |{}",
            o.target,
            o.seconds,
            o.execs,
            if o.ok { "" } else { " FAILED" }
        );
        if !o.ok {
            failed.push(o.target);
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "fuzz targets failed (inputs in fuzz/artifacts/): {}",
            failed.join(", ")
        )
        .into())
    }
}
