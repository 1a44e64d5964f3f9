//! The fault matrix (issue 20 item 7): kubeset's client against the real
//! kube-apiserver through [`FaultProxy`], one cell per fault × call.
//!
//! Every cell runs at once (each with its own proxy and client, a 5 s
//! request timeout), so the matrix costs about its slowest cell, capped at
//! [`CELL_CAP`]. For each cell it records what the client did: the outcome
//! (success or the error's kind), the elapsed time as a bucket, the
//! attempts (the metrics hook's results; for watches the resumes) and the
//! proxy's connections, and for watch cells the events received against
//! those written.
//!
//! `KUBESET_WRITE_RELIABILITY=1` writes the table to `docs/reliability.md`
//! (`KUBESET_FAULT_CELLS=TEXT` runs only the cells whose name contains
//! TEXT, for a look at one; never with the write).
//! Otherwise the test checks the invariants of every cell: no panic, done
//! within the cap, the outcome the cell expects, no watch event lost
//! without the caller learning of it. Cells that break an invariant on
//! today's code are marked `known_bad` with what fixes them; they are
//! checked by the ignored test `fault_matrix_known_bad_cells`, to be
//! un-ignored when the fix lands.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use kubeset::api::core::v1::ConfigMap;
use kubeset::params::{ListParams, PostParams, WatchParams};
use kubeset::rest::metrics::Metrics;
use kubeset::rest::{RestClient, TransportKind, Verb};
use kubeset::{Api, Client, Error, WatchEvent};
use kubeset_tests::fault_proxy::{Fault, FaultProxy, Upstream};
use kubeset_tests::{Identity, RealKube, TestContext, error_chain, meta};

use crate::common::connect;

/// The request timeout of every client under test.
const TIMEOUT: Duration = Duration::from_secs(5);
/// A cell still running after this is abandoned (and recorded so).
const CELL_CAP: Duration = Duration::from_secs(25);
/// ConfigMaps in the namespace the list cells read (a body of some KiB).
const LISTED: usize = 12;
/// A call that is not a watch must end within this (a client that keeps
/// its timeout ends at about [`TIMEOUT`]; the rest is a busy machine's slack).
const CALL_BOUND: Duration = Duration::from_secs(2 * 5);
/// ConfigMaps the watch cells write.
const WRITTEN: usize = 8;

/// The call a cell makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    /// `Api::list` of the prepared namespace.
    List,
    /// `Api::watch` (one stream), while [`WRITTEN`] objects are created.
    Watch,
    /// `Api::watch_resumable`, while [`WRITTEN`] objects are created.
    WatchResumable,
}

/// What a cell must show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// The call succeeds (failover, or a fault that passes after a while).
    Ok,
    /// The call fails, within the cap.
    Err,
    /// Every written event arrives (resumable watches).
    AllEvents,
    /// The stream either delivers everything or ends with an error item.
    NoSilentLoss,
}

/// One cell of the matrix.
#[derive(Debug, Clone)]
struct Cell {
    name: &'static str,
    fault: Fault,
    /// Connections the fault applies to (`None`: all).
    times: Option<u64>,
    /// A second endpoint (the server, direct) for failover.
    failover: bool,
    call: Call,
    want: Want,
    /// Why the cell breaks its invariant on today's code, and where the fix is.
    known_bad: Option<&'static str>,
}

fn respond(status: u16, retry_after: Option<&str>) -> Fault {
    Fault::Respond {
        status,
        retry_after: retry_after.map(str::to_owned),
    }
}

/// Cells that break their invariant on today's code: name, what and where
/// it is fixed. Such a cell is still run and written to the table when
/// `KUBESET_WRITE_RELIABILITY=1`, but `fault_matrix` skips its check. The
/// eight bad cells of the first run (Retry-After outside the timeout, the
/// `i64::MAX` panic, a watch cut mid-event ending cleanly, a stalled plain
/// watch) were fixed by issue 20's client work; none is left.
const KNOWN_BAD: &[(&str, &str)] = &[];

#[rustfmt::skip]
fn cells() -> Vec<Cell> {
    use Call::*;
    let c = |name, fault, times, failover, call, want| Cell {
        name, fault, times, failover, call, want,
        known_bad: KNOWN_BAD.iter().find(|(n, _)| *n == name).map(|(_, why)| *why),
    };
    vec![
        c("refused", Fault::Refuse, None, false, List, Want::Err),
        c("refused, failover", Fault::Refuse, None, true, List, Want::Ok),
        c("TLS handshake stall", Fault::StallHandshake, None, false, List, Want::Err),
        c("TLS handshake stall, failover", Fault::StallHandshake, None, true, List, Want::Ok),
        c("hang before headers", Fault::HangBeforeHeaders, None, false, List, Want::Err),
        c("hang before headers, failover", Fault::HangBeforeHeaders, None, true, List, Want::Ok),
        c("hang after headers", Fault::HangAfterHeaders, None, false, List, Want::Err),
        c("reset mid-body", Fault::ResetMidBody { after: 200 }, None, false, List, Want::Err),
        c("reset mid-body, once", Fault::ResetMidBody { after: 200 }, Some(1), false, List, Want::Ok),
        c("slow drip (64 B / 250 ms)", Fault::Drip { bytes: 64, every: Duration::from_millis(250) }, None, false, List, Want::Err),
        c("429 ×3, Retry-After: 1", respond(429, Some("1")), Some(3), false, List, Want::Ok),
        c("429 storm, Retry-After: 2", respond(429, Some("2")), None, false, List, Want::Err),
        c("429 storm, Retry-After: 3600", respond(429, Some("3600")), None, false, List, Want::Err),
        c("429 storm, Retry-After: 2099 date", respond(429, Some("Thu, 01 Jan 2099 00:00:00 GMT")), None, false, List, Want::Err),
        c("429, Retry-After: i64::MAX, failover", respond(429, Some("9223372036854775807")), None, true, List, Want::Err),
        c("500 storm", respond(500, None), None, false, List, Want::Err),
        c("503 storm, Retry-After: 2", respond(503, Some("2")), None, false, List, Want::Err),
        c("503 storm, Retry-After: 1, failover", respond(503, Some("1")), None, true, List, Want::Err),
        c("truncated watch (mid-event)", Fault::TruncateWatch { events: 3 }, Some(1), false, Watch, Want::NoSilentLoss),
        c("truncated watch ×3, resumable", Fault::TruncateWatch { events: 2 }, Some(3), false, WatchResumable, Want::AllEvents),
        c("reset mid-watch ×2, resumable", Fault::ResetMidBody { after: 600 }, Some(2), false, WatchResumable, Want::AllEvents),
        c("hang after watch headers", Fault::HangAfterHeaders, Some(1), false, Watch, Want::NoSilentLoss),
        c("hang after watch headers, resumable", Fault::HangAfterHeaders, Some(1), false, WatchResumable, Want::AllEvents),
    ]
}

/// Counts the client's attempts through the metrics hook.
#[derive(Debug, Default)]
struct Attempts(Mutex<Vec<Option<u16>>>);

impl Metrics for Attempts {
    fn request_result(&self, _verb: Verb, _host: &str, code: Option<u16>) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(code);
    }
}

impl Attempts {
    fn count(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// What a cell's call did.
#[derive(Debug, Clone)]
enum Outcome {
    Ok,
    Err(String),
    Panic(String),
    Abandoned,
}

/// What the matrix records of one cell.
#[derive(Debug, Clone)]
struct Record {
    outcome: Outcome,
    elapsed: Duration,
    attempts: usize,
    connections: u64,
    /// Watch cells: (distinct objects received, written, how the stream ended).
    events: Option<(usize, usize, String)>,
}

/// A short name for an error: its variant and what it carries that matters.
fn kind(e: &Error) -> String {
    match e {
        Error::Api(api) => format!("Api {} {}", api.code, api.status_reason),
        Error::Transport { kind, .. } => format!("Transport {}", transport(*kind)),
        Error::Timeout { timeout, .. } => format!("Timeout ({timeout:?})"),
        Error::Body { kind, .. } => format!("Body {}", transport(*kind)),
        Error::Retried { last, .. } => format!("{} (after retries)", kind(last)),
        other => {
            let debug = format!("{other:?}");
            debug
                .split(|c: char| !c.is_alphanumeric())
                .next()
                .unwrap_or("Error")
                .to_owned()
        }
    }
}

fn transport(k: TransportKind) -> String {
    format!("{k:?}")
}

/// A client of the proxy (and of the server direct when `failover`).
fn client_for(
    kube: &RealKube,
    proxy: &FaultProxy,
    failover: bool,
    attempts: Arc<Attempts>,
) -> Client {
    let mut config = kube
        .config(Some(&proxy.url()), Identity::Admin)
        .unwrap_or_else(|e| panic!("{}", error_chain(&e)));
    config.tls.root_certs.push(proxy.ca());
    config.timeout = Some(TIMEOUT);
    // A plain watch is bounded by the read timeout (as the CLI's 5 min); a
    // resumable one by the watch idle timeout, after which it resumes.
    config.read_timeout = Some(Duration::from_secs(3));
    config.watch_idle_timeout = Some(Duration::from_secs(3));
    if failover {
        let direct = kube.env.servers[0].parse().expect("the server URL parses");
        config.extra_endpoints = vec![direct];
    }
    let rest = config
        .rest_config()
        .unwrap_or_else(|e| panic!("{}", error_chain(&e)))
        .with_metrics(attempts);
    Client::new(RestClient::new(rest).expect("a rest client"), "default")
}

async fn list_call(client: Client, ns: String) -> Result<(), Error> {
    let list = Api::<ConfigMap>::namespaced(client, &ns)
        .list(&ListParams::default())
        .await?;
    assert!(
        list.items.len() >= LISTED,
        "a list of {} items",
        list.items.len()
    );
    Ok(())
}

/// Opens a watch through `client` on a fresh namespace, writes
/// [`WRITTEN`] ConfigMaps directly, and counts what arrives.
async fn watch_call(client: Client, direct: Client, resumable: bool) -> (usize, String) {
    let ns = kubeset_tests::create_namespace(&direct, "faults-watch")
        .await
        .unwrap_or_else(|e| panic!("{}", error_chain(&e)));
    let writer = Api::<ConfigMap>::namespaced(direct, &ns);
    let rv = writer
        .list(&ListParams::default())
        .await
        .unwrap_or_else(|e| panic!("{}", error_chain(&e)))
        .metadata
        .resource_version
        .unwrap_or_default();
    let api = Api::<ConfigMap>::namespaced(client, &ns);
    let params = WatchParams::default();
    let mut stream = if resumable {
        match api.watch_resumable(&params, &rv).await {
            Ok(w) => w.boxed(),
            Err(e) => return (0, format!("open failed: {}", kind(&e))),
        }
    } else {
        match api.watch(&params, &rv).await {
            Ok(w) => w.boxed(),
            Err(e) => return (0, format!("open failed: {}", kind(&e))),
        }
    };
    let write = tokio::spawn(async move { create_configmaps(&writer, "cm", WRITTEN, 64).await });
    let mut seen = std::collections::BTreeSet::new();
    let end = loop {
        match stream.next().await {
            Some(Ok(WatchEvent::Added(cm))) => {
                if std::env::var_os("KUBESET_FAULT_TRACE").is_some() {
                    eprintln!("{:?} {:?}", Instant::now(), cm.metadata.name);
                }
                seen.insert(cm.metadata.name.unwrap_or_default());
                if seen.len() == WRITTEN {
                    break "open (all received)".to_owned();
                }
            }
            Some(Ok(WatchEvent::Error(e))) => break format!("error event {}", e.code),
            Some(Ok(_)) => {}
            Some(Err(e)) => break format!("error item: {}", kind(&e)),
            None => break "clean end".to_owned(),
        }
    };
    write.await.expect("the writer");
    (seen.len(), end)
}

/// Runs one cell (in its own task, so that a panic is recorded, not fatal).
async fn run_cell(kube: RealKube, direct: Client, ns: String, cell: Cell) -> Record {
    let upstream = Upstream::realkube(&kube.env).unwrap_or_else(|e| panic!("{}", error_chain(&e)));
    let proxy = FaultProxy::start(upstream, cell.fault.clone(), cell.times)
        .await
        .unwrap_or_else(|e| panic!("{}", error_chain(&e)));
    let attempts = Arc::new(Attempts::default());
    let client = client_for(&kube, &proxy, cell.failover, attempts.clone());
    let started = Instant::now();
    let call = cell.call;
    let task = tokio::spawn(async move {
        match call {
            Call::List => (list_call(client, ns).await.map_err(|e| kind(&e)), None),
            Call::Watch | Call::WatchResumable => {
                let (got, end) = watch_call(client, direct, call == Call::WatchResumable).await;
                (Ok(()), Some((got, WRITTEN, end)))
            }
        }
    });
    let abort = task.abort_handle();
    let (outcome, events) = match tokio::time::timeout(CELL_CAP, task).await {
        Ok(Ok((Ok(()), events))) => (Outcome::Ok, events),
        Ok(Ok((Err(e), events))) => (Outcome::Err(e), events),
        Ok(Err(join)) if join.is_panic() => {
            let payload = join.into_panic();
            let text = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            (Outcome::Panic(text), None)
        }
        Ok(Err(_)) => (Outcome::Panic("cancelled".to_owned()), None),
        Err(_) => {
            abort.abort();
            (Outcome::Abandoned, None)
        }
    };
    Record {
        outcome,
        elapsed: started.elapsed(),
        attempts: attempts.count(),
        connections: proxy.connections(),
        events,
    }
}

/// The cell's invariant; `Err` says how it is broken.
fn check(cell: &Cell, r: &Record) -> Result<(), String> {
    match &r.outcome {
        Outcome::Panic(p) => return Err(format!("panicked: {p}")),
        Outcome::Abandoned => return Err(format!("still running after {CELL_CAP:?}")),
        _ => {}
    }
    if cell.call == Call::List && r.elapsed > CALL_BOUND {
        // The exact time is in the test's log; the table stays stable.
        return Err(format!(
            "took more than {CALL_BOUND:?} with a {TIMEOUT:?} timeout"
        ));
    }
    let watch = r.events.as_ref();
    let ok = match cell.want {
        Want::Ok => matches!(r.outcome, Outcome::Ok),
        Want::Err => matches!(r.outcome, Outcome::Err(_)),
        Want::AllEvents => watch.is_some_and(|(got, written, _)| got == written),
        Want::NoSilentLoss => {
            watch.is_some_and(|(got, written, end)| got == written || end.starts_with("error"))
        }
    };
    if ok {
        Ok(())
    } else {
        let got = watch.map_or_else(
            || outcome_text(r),
            |(got, written, end)| format!("{got} / {written} events, {end}"),
        );
        Err(format!("wanted {:?}, got {got}", cell.want))
    }
}

fn outcome_text(r: &Record) -> String {
    match &r.outcome {
        Outcome::Ok if r.events.is_some() => "watch opened".to_owned(),
        Outcome::Ok => "ok".to_owned(),
        Outcome::Err(e) => format!("error: {e}"),
        Outcome::Panic(p) => format!("**panic**: {}", p.lines().next().unwrap_or("")),
        Outcome::Abandoned => format!("**still running at {}s** (abandoned)", CELL_CAP.as_secs()),
    }
}

/// Elapsed time as a bucket: the table must not change with machine load.
fn bucket(d: Duration) -> &'static str {
    match d.as_millis() {
        0..1_000 => "< 1 s",
        1_000..3_000 => "1–3 s",
        3_000..7_000 => "3–7 s",
        7_000..15_000 => "7–15 s",
        15_000..25_000 => "15–25 s",
        _ => "≥ 25 s",
    }
}

fn fault_text(f: &Fault) -> String {
    match f {
        Fault::Respond {
            status,
            retry_after,
        } => match retry_after {
            Some(ra) => format!("answers {status}, `Retry-After: {ra}`"),
            None => format!("answers {status}"),
        },
        other => format!("`{other:?}`"),
    }
}

fn table(kube: &RealKube, rows: &[(Cell, Record)]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Reliability: the fault matrix\n\n\
         Generated by `tests/tests/suite/faults.rs` (`KUBESET_WRITE_RELIABILITY=1 \
         cargo test -p kubeset-tests --test suite -- faults::fault_matrix`) against the real \
         kube-apiserver {} through the fault proxy (`tests/src/fault_proxy.rs`). Do not edit by hand.\n\n\
         Each cell: one client (request timeout {}s, read timeout 3 s, watch idle timeout 3 s, default retries) talks to \
         the proxy; *failover* cells also know the server directly as a second endpoint. A cell is \
         abandoned after {}s. Time is a bucket. *Attempts*: attempts the client reported \
         through its metrics hook; *conns*: TCP connections the proxy accepted. Watch cells write {} \
         ConfigMaps directly while the client watches through the proxy.\n\n\
         HTTP-level faults terminate TLS in the proxy (its own CA, trusted by the client) and re-originate \
         to the server with the admin certificate; refusal and the handshake stall are TCP-level. \
         429/500/503 are the proxy's own answers (a `Status` body), so their `Retry-After` is chosen; \
         the real server's own 429 is covered by `suite/throttle.rs`.\n",
        kube.env.kubernetes_version,
        TIMEOUT.as_secs(),
        CELL_CAP.as_secs(),
        WRITTEN,
    );
    out.push_str("| cell | fault | call | outcome | time | attempts | conns | events (got / written, end) | invariant |\n");
    out.push_str("| --- | --- | --- | --- | --- | ---: | ---: | --- | --- |\n");
    for (cell, r) in rows {
        let events = r.events.as_ref().map_or_else(
            || "–".to_owned(),
            |(got, written, end)| format!("{got} / {written}, {end}"),
        );
        let invariant = match check(cell, r) {
            Ok(()) => "holds".to_owned(),
            Err(why) => format!(
                "**broken**: {why}{}",
                cell.known_bad.map_or(String::new(), |k| format!(" ({k})"))
            ),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {:?}{} | {} | {} | {} | {} | {} | {} |",
            cell.name,
            fault_text(&cell.fault),
            cell.call,
            if cell.failover { " (failover)" } else { "" },
            outcome_text(r),
            bucket(r.elapsed),
            r.attempts,
            r.connections,
            events,
            invariant,
        );
    }
    out
}

/// Creates `n` ConfigMaps `<prefix>-<i>`, each with a value of `size` bytes.
async fn create_configmaps(api: &Api<ConfigMap>, prefix: &str, n: usize, size: usize) {
    for i in 0..n {
        let cm = ConfigMap {
            metadata: meta(&format!("{prefix}-{i}")),
            data: Some([("k".to_owned(), "v".repeat(size))].into()),
            ..ConfigMap::default()
        };
        if let Err(e) = api.create(&PostParams::default(), &cm).await {
            panic!("creating {prefix}-{i}: {}", error_chain(&e));
        }
    }
}

/// Prepares the namespace the list cells read.
async fn prepare(ctx: &TestContext) {
    let api = Api::<ConfigMap>::namespaced(ctx.client.clone(), &ctx.ns);
    create_configmaps(&api, "listed", LISTED, 200).await;
}

async fn run_matrix(ctx: &TestContext, only: impl Fn(&Cell) -> bool) -> Vec<(Cell, Record)> {
    prepare(ctx).await;
    // KUBESET_FAULT_CELLS=text: only the cells whose name contains it.
    let pick = std::env::var("KUBESET_FAULT_CELLS").unwrap_or_default();
    let chosen: Vec<Cell> = cells()
        .into_iter()
        .filter(|c| only(c) && c.name.contains(pick.as_str()))
        .collect();
    let runs = chosen.iter().map(|cell| {
        run_cell(
            ctx.kube.clone(),
            ctx.client.clone(),
            ctx.ns.clone(),
            cell.clone(),
        )
    });
    let records = futures::future::join_all(runs).await;
    for (cell, r) in chosen.iter().zip(&records) {
        eprintln!("{}: {} in {:.1?}", cell.name, outcome_text(r), r.elapsed);
    }
    chosen.into_iter().zip(records).collect()
}

fn assert_invariants(rows: &[(Cell, Record)]) {
    let broken: Vec<String> = rows
        .iter()
        .filter_map(|(cell, r)| {
            check(cell, r)
                .err()
                .map(|why| format!("{}: {why}", cell.name))
        })
        .collect();
    assert!(
        broken.is_empty(),
        "fault matrix cells broken:\n{}",
        broken.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_matrix() {
    let ctx = connect!("faults");
    let write = std::env::var("KUBESET_WRITE_RELIABILITY").as_deref() == Ok("1");
    assert!(
        !write || std::env::var_os("KUBESET_FAULT_CELLS").is_none(),
        "the table is written from every cell: unset KUBESET_FAULT_CELLS"
    );
    let rows = run_matrix(&ctx, |c| write || c.known_bad.is_none()).await;
    if write {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/reliability.md");
        std::fs::write(&path, table(&ctx.kube, &rows)).expect("writing docs/reliability.md");
        eprintln!("wrote {}", path.display());
        let rows: Vec<_> = rows
            .into_iter()
            .filter(|(c, _)| c.known_bad.is_none())
            .collect();
        assert_invariants(&rows);
    } else {
        assert_invariants(&rows);
    }
}
