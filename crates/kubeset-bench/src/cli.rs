//! The command line of `kubeset-bench`, the Rust side of `cargo xtask
//! bench`, and of `kubeset-bench-mimalloc` (the same commands with
//! mimalloc as the global allocator). Prints a JSON array of
//! [`Record`]s on stdout.
//!
//! ```text
//! kubeset-bench codec FILE RUNS            PodList decode/encode
//! kubeset-bench codec-protobuf FILE RUNS OUT  the same in protobuf (FILE:
//!                                          Go's bytes; OUT: kubeset's)
//! kubeset-bench make-watch FILE EVENTS OUT write a watch stream
//! kubeset-bench watch STREAM RUNS          watch-stream decode
//! kubeset-bench watch-protobuf STREAM RUNS the same in protobuf (STREAM:
//!                                          Go's frames)
//! kubeset-bench serve [PORT]               embedded server; prints its URL
//! kubeset-bench roundtrip URL kubeset|kube-rs|reqwest|hyper SEQ CONC TOTAL
//! kubeset-bench failover TRIALS             fault → next successful GET
//! kubeset-bench serve-pods FILE            seeded server; `update N` on stdin
//! kubeset-bench cache URL kubeset|kube-rs VARIANT UPDATES
//! kubeset-bench serve-scale FILE           seeded server (streamed seed)
//! kubeset-bench scale URL kubeset|kube-rs VARIANT UPDATES
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::memory::Variant;
use crate::roundtrip::{Peer, Plan};
use crate::{
    Error, Record, codec, codec_protobuf, failover, memory, roundtrip, scale, watch, watch_protobuf,
};

const USAGE: &str = "usage: kubeset-bench codec FILE RUNS | codec-protobuf FILE RUNS OUT | make-watch FILE EVENTS OUT | \
                     watch STREAM RUNS | watch-protobuf STREAM RUNS | serve [PORT] | roundtrip URL kubeset|kube-rs|reqwest|hyper SEQ CONC TOTAL | failover TRIALS | \
                     serve-pods FILE | cache URL kubeset|kube-rs full|no-managed-fields|metadata|two-caches|shared UPDATES | \
                     serve-scale FILE | scale URL kubeset|kube-rs json|json-paged|protobuf|metadata|projection UPDATES";

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })
}

fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| Error::Runtime { source })
}

enum Cmd {
    Codec(PathBuf, usize),
    CodecProtobuf(PathBuf, usize, PathBuf),
    MakeWatch(PathBuf, usize, PathBuf),
    Watch(PathBuf, usize),
    WatchProtobuf(PathBuf, usize),
    Serve(u16),
    Roundtrip(String, Peer, Plan),
    Failover(usize),
    ServePods(PathBuf),
    Cache(String, String, Variant, usize),
    ServeScale(PathBuf),
    Scale(String, String, scale::Variant, usize),
}

fn parse(args: &[String]) -> Option<Cmd> {
    let num = |i: usize| args.get(i)?.parse::<usize>().ok();
    let path = |i: usize| args.get(i).map(PathBuf::from);
    Some(match args.first()?.as_str() {
        "codec" => Cmd::Codec(path(1)?, num(2)?),
        "codec-protobuf" => Cmd::CodecProtobuf(path(1)?, num(2)?, path(3)?),
        "make-watch" => Cmd::MakeWatch(path(1)?, num(2)?, path(3)?),
        "watch" => Cmd::Watch(path(1)?, num(2)?),
        "watch-protobuf" => Cmd::WatchProtobuf(path(1)?, num(2)?),
        "serve" => Cmd::Serve(match args.get(1) {
            Some(p) => p.parse().ok()?,
            None => 0,
        }),
        "roundtrip" => Cmd::Roundtrip(
            args.get(1)?.clone(),
            Peer::parse(args.get(2)?)?,
            Plan {
                sequential: num(3)?,
                concurrency: num(4)?,
                total: num(5)?,
            },
        ),
        "failover" => Cmd::Failover(num(1)?),
        "serve-pods" => Cmd::ServePods(path(1)?),
        "cache" => Cmd::Cache(
            args.get(1)?.clone(),
            args.get(2)?.clone(),
            Variant::parse(args.get(3)?)?,
            num(4)?,
        ),
        "serve-scale" => Cmd::ServeScale(path(1)?),
        "scale" => Cmd::Scale(
            args.get(1)?.clone(),
            args.get(2)?.clone(),
            scale::Variant::parse(args.get(3)?)?,
            num(4)?,
        ),
        _ => return None,
    })
}

fn print(records: &[Record]) -> Result<(), Error> {
    let text = serde_json::to_string_pretty(records).map_err(|source| Error::Json {
        peer: "report",
        source,
    })?;
    println!("{text}");
    Ok(())
}

fn run(cmd: Cmd) -> Result<(), Error> {
    match cmd {
        Cmd::Codec(file, runs) => print(&codec::run(&read(&file)?, runs)?),
        Cmd::CodecProtobuf(file, runs, out) => {
            let go_bytes = read(&file)?;
            let ours = codec_protobuf::agree(&go_bytes)?;
            std::fs::write(&out, ours).map_err(|source| Error::Io {
                path: out.clone(),
                source,
            })?;
            print(&codec_protobuf::run(&go_bytes, runs)?)
        }
        Cmd::MakeWatch(file, events, out) => {
            let stream = watch::make_stream(&read(&file)?, events)?;
            std::fs::write(&out, stream).map_err(|source| Error::Io { path: out, source })
        }
        Cmd::Watch(file, runs) => {
            let stream = bytes::Bytes::from(read(&file)?);
            let events = stream.iter().filter(|b| **b == b'\n').count();
            print(&watch::run(&stream, events, runs)?)
        }
        Cmd::WatchProtobuf(file, runs) => {
            let stream = bytes::Bytes::from(read(&file)?);
            print(&watch_protobuf::run_kubeset(
                &stream,
                runs,
                watch_protobuf::decode_kubeset,
            )?)
        }
        Cmd::Serve(port) => runtime()?.block_on(async {
            let server = roundtrip::serve(port).await?;
            println!("{}", server.url());
            // Serve until stdin closes or the process is told to stop.
            let stdin_closed = tokio::task::spawn_blocking(|| {
                let mut sink = String::new();
                while std::io::stdin().read_line(&mut sink).is_ok_and(|n| n > 0) {
                    sink.clear();
                }
            });
            tokio::select! {
                _ = stdin_closed => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            server.shutdown().await;
            Ok(())
        }),
        Cmd::ServePods(file) => runtime()?.block_on(memory::serve_pods(&read(&file)?)),
        Cmd::Cache(url, peer, variant, updates) => {
            let record = runtime()?.block_on(async {
                if peer == "kube-rs" {
                    memory::cache_kube(&url, updates).await
                } else {
                    memory::cache_kubeset(&url, variant, updates).await
                }
            })?;
            print(&[record])
        }
        Cmd::ServeScale(file) => runtime()?.block_on(scale::serve_scale(&file)),
        Cmd::Scale(url, peer, variant, updates) => {
            let record = runtime()?.block_on(async {
                if peer == "kube-rs" {
                    scale::run_kube(&url, updates).await
                } else {
                    scale::run_kubeset(&url, variant, updates).await
                }
            })?;
            let text = serde_json::to_string(&[record]).map_err(|source| Error::Json {
                peer: "report",
                source,
            })?;
            println!("{text}");
            Ok(())
        }
        Cmd::Failover(trials) => print(&runtime()?.block_on(failover::run(trials))?),
        Cmd::Roundtrip(url, peer, plan) => {
            let records = runtime()?.block_on(roundtrip::run(&url, peer, plan))?;
            print(&records)
        }
    }
}

/// Runs the command in the process's arguments.
pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = parse(&args) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    match run(cmd) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                eprintln!("  caused by: {s}");
                source = s.source();
            }
            ExitCode::FAILURE
        }
    }
}
