//! Benchmarks of kubeset side by side with its peers, measured in one
//! process with the same `serde_json`: kube-rs (`kube` 5) and k8s-openapi
//! 0.29 (`v1_35`). client-go is measured by the Go program under `go/`
//! with the same inputs and the same JSON result records.
//!
//! Everything here is driven by `cargo xtask bench`, which builds this
//! crate in release, runs the `kubeset-bench` binary and the Go peer, and
//! writes `docs/benchmarks.md` from their [`Record`]s.

pub mod cli;
pub mod codec;
pub mod codec_protobuf;
pub mod failover;
pub mod memory;
pub mod proc;
pub mod roundtrip;
pub mod scale;
pub mod stats;
pub mod watch;
pub mod watch_protobuf;

use std::path::PathBuf;

use k8s_openapi::api::core::v1::Pod as KubePod;
use kube::runtime::{reflector, watcher};
use serde::Serialize;

/// A kube-rs client of the server at `url` (kube's default config).
pub(crate) fn kube_client(url: &str) -> Result<kube::Client, Error> {
    let uri: http::Uri = url.parse().map_err(|source| Error::BadUrl {
        url: url.to_owned(),
        source,
    })?;
    kube::Client::try_from(kube::Config::new(uri)).map_err(|source| Error::Kube { source })
}

/// What kube-rs's watcher of Pods yields.
type KubePodEvent = Result<watcher::Event<KubePod>, watcher::Error>;

/// A kube-rs cache of every Pod at `url`: `kube::runtime::reflector` over
/// `watcher` with the default `watcher::Config` (a paginated list). The
/// store, and the events that fill it once polled.
pub(crate) fn kube_pod_cache(
    url: &str,
) -> Result<
    (
        reflector::Store<KubePod>,
        impl futures::Stream<Item = KubePodEvent>,
    ),
    Error,
> {
    let api = kube::Api::all(kube_client(url)?);
    let (reader, writer) = reflector::store();
    let events = reflector(writer, watcher(api, watcher::Config::default()));
    Ok((reader, events))
}

/// Everything that can go wrong in a benchmark run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An input file could not be read or written.
    #[error("cannot access {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// A peer could not decode or encode the input.
    #[error("{peer} could not decode or encode the input")]
    Json {
        /// Which implementation failed.
        peer: &'static str,
        /// The serde_json error.
        #[source]
        source: serde_json::Error,
    },
    /// kubeset's protobuf codec refused the input.
    #[error("{peer} could not decode the protobuf input")]
    Protobuf {
        /// Which decode failed.
        peer: &'static str,
        /// The codec's error.
        #[source]
        source: kubeset_api::protobuf::DecodeError,
    },
    /// The compiled models have no protobuf codec for a kind.
    #[error("no protobuf codec for {kind}")]
    NoCodec {
        /// The kind.
        kind: &'static str,
    },
    /// kubeset's protobuf encoding of a list is longer than Go's.
    #[error("kubeset wrote {ours} bytes, more than Go's {theirs}")]
    Size {
        /// kubeset's length.
        ours: usize,
        /// Go's length.
        theirs: usize,
    },
    /// Two decodes that must agree did not.
    #[error("{what} disagree")]
    Disagree {
        /// Which.
        what: &'static str,
    },
    /// The input is not a PodList with items.
    #[error("the input has no items array")]
    NotAList,
    /// The input is not UTF-8 (kube-client refuses such a body).
    #[error("the input is not UTF-8")]
    NotUtf8,
    /// A watch stream decoded to fewer events than it holds.
    #[error("{peer} decoded {got} of {want} watch events")]
    ShortStream {
        /// Which implementation.
        peer: &'static str,
        /// Events decoded.
        got: usize,
        /// Events in the stream.
        want: usize,
    },
    /// kubeset's watch decoder or client failed.
    #[error("kubeset failed")]
    Kubeset {
        /// kubeset's error.
        #[source]
        source: kubeset_rest::Error,
    },
    /// kube-rs's client failed.
    #[error("kube-rs failed")]
    Kube {
        /// kube's error.
        #[source]
        source: kube::Error,
    },
    /// kube-rs's watch line decoding (LinesCodec) failed.
    #[error("kube-rs line framing failed")]
    KubeLines {
        /// The codec's error.
        #[source]
        source: tokio_util::codec::LinesCodecError,
    },
    /// A transport floor's reqwest client failed.
    #[error("reqwest failed")]
    Reqwest {
        /// reqwest's error.
        #[source]
        source: reqwest::Error,
    },
    /// A transport floor's hyper-util client failed.
    #[error("the hyper-util client failed")]
    HyperClient {
        /// hyper-util's error.
        #[source]
        source: hyper_util::client::legacy::Error,
    },
    /// Reading a response body through hyper failed.
    #[error("hyper failed to read a body")]
    Hyper {
        /// hyper's error.
        #[source]
        source: hyper::Error,
    },
    /// A transport floor got a status other than 2xx.
    #[error("{peer} got HTTP status {status}")]
    Status {
        /// Which implementation.
        peer: &'static str,
        /// The status code.
        status: u16,
    },
    /// The server URL does not parse as a URI.
    #[error("bad server URL {url:?}")]
    BadUrl {
        /// The URL.
        url: String,
        /// Why.
        #[source]
        source: http::uri::InvalidUri,
    },
    /// The embedded API server failed to start.
    #[error("the embedded API server failed")]
    Server {
        /// The server's error.
        #[source]
        source: kubeset_testserver::Error,
    },
    /// The tokio runtime could not be built.
    #[error("cannot build the tokio runtime")]
    Runtime {
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// No replica of the embedded server has the URL the client prefers.
    #[error("no replica serves {url}")]
    NoReplica {
        /// The client's preferred endpoint.
        url: String,
    },
    /// A cache stopped before it saw every update.
    #[error("the cache saw {seen} of {want} updates")]
    Cache {
        /// Updates seen.
        seen: usize,
        /// Updates expected.
        want: usize,
    },
    /// A concurrent request task panicked or was cancelled.
    #[error("a request task did not finish")]
    Join {
        /// tokio's error.
        #[source]
        source: tokio::task::JoinError,
    },
}

/// One measured result, the record both this crate and the Go peer print
/// (a JSON array of these on stdout).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Record {
    /// The benchmark: `decode-podlist`, `encode-podlist`, `decode-watch`,
    /// `get-sequential`, `get-concurrent`.
    pub bench: String,
    /// Implementation: `kubeset`, `k8s-openapi`, `kube-rs`, `client-go`, …
    #[serde(rename = "impl")]
    pub implementation: String,
    /// Objects (pods, events, requests) per run.
    pub items: u64,
    /// Bytes processed per run (input of a decode, output of an encode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Seconds per run, every run, in order.
    pub samples_s: Vec<f64>,
    /// Median of `samples_s`.
    pub median_s: f64,
    /// Median latency of one request (round trips only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p50_us: Option<f64>,
    /// 99th percentile latency of one request (round trips only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_us: Option<f64>,
    /// CPU time (user + system) the measuring process spent in the timed
    /// phase, in seconds (round trips only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<f64>,
    /// Peak resident set size of the measuring process (`VmHWM`), in KiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_rss_kib: Option<u64>,
    /// What the record's variant is (e.g. a store option, a fault kind).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
}

impl Record {
    /// A record of timed runs that each processed `items` objects.
    pub fn timed(bench: &str, implementation: &str, items: u64, samples_s: Vec<f64>) -> Self {
        let median_s = stats::median(&samples_s);
        Self {
            bench: bench.to_owned(),
            implementation: implementation.to_owned(),
            items,
            bytes: None,
            samples_s,
            median_s,
            p50_us: None,
            p99_us: None,
            cpu_s: None,
            peak_rss_kib: None,
            variant: None,
        }
    }

    /// With the bytes processed per run.
    #[must_use]
    pub fn with_bytes(mut self, bytes: u64) -> Self {
        self.bytes = Some(bytes);
        self
    }
}
