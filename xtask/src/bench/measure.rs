//! The measuring rows: each runs the benchmark binaries (ours and the
//! peers') and returns their records.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::report::text;
use super::{Plan, Server, output, records};
use crate::Error;

/// The codec rows of one pod list: Rust (system allocator and mimalloc),
/// Go, and both codecs' protobuf.
pub(super) fn codec_row(
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

/// The round-trip clients, in table order: the Kubernetes clients, then
/// the transport floors (plain reqwest, plain hyper-util), which are not
/// peers but the least a client on that HTTP stack can cost.
pub(super) const ROUND_TRIP_CLIENTS: [&str; 5] =
    ["kubeset", "kube-rs", "client-go", "reqwest", "hyper"];

/// GET round trips: `plan.rounds` rounds of every client against one
/// server process, the order rotating each round (kubeset, kube-rs,
/// client-go, reqwest, hyper; then kube-rs, client-go, reqwest, hyper,
/// kubeset; …) so that no client is always first on a machine whose load
/// drifts. Each record gets its
/// `round` and the server's CPU seconds during that client's phase
/// (`server_cpu_s`, read from `/proc/<pid>/stat`).
pub(super) fn round_trips(rust: &Path, go: &Path, plan: &Plan) -> Result<Vec<Value>, Error> {
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
pub(super) fn memory(
    rust: &Path,
    go: &Path,
    podlist: &Path,
    updates: usize,
) -> Result<Vec<Value>, Error> {
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
        let cmd = if name == "client-go" {
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
        all.extend(server.run_client(cmd, updates, &what)?);
    }
    Ok(all)
}

/// The protobuf codec rows of one PodList: Go converts the JSON list to
/// protobuf (as kube-apiserver writes it), kubeset decodes Go's bytes,
/// checks that its own encoding is as long and writes it; Go decodes
/// kubeset's bytes to an equal list, then both are timed.
/// `rust`: the system allocator's binary and mimalloc's.
pub(super) fn codec_protobuf(
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
pub(super) fn on_mimalloc(mut records: Vec<Value>) -> Vec<Value> {
    for r in &mut records {
        let name = format!("{}{MIMALLOC}", text(r, "impl"));
        r["impl"] = Value::String(name);
    }
    records
}

/// What [`on_mimalloc`] appends to an implementation's name.
pub(super) const MIMALLOC: &str = " + mimalloc";

/// The protobuf watch stream (`stream` converted by Go's encoder, framed
/// as kube-apiserver frames it) decoded by client-go. kubeset's side is
/// `kubeset_bench::watch_protobuf::run_kubeset`, given its protobuf watch
/// decoder; its command is added beside this one when that decoder lands.
pub(super) fn watch_decode_protobuf(
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

pub(super) fn watch_decode(
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
