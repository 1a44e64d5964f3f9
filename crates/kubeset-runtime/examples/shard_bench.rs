//! The bench row `cargo xtask bench --only shard`: the example sharded
//! operator (`examples/sharded/`) run as 1, 2 and 4 replica processes
//! against one embedded API server process, over 2,000 ConfigMaps whose
//! reconcile does 20 ms of pretend I/O.
//!
//! ```sh
//! cargo build --release -p kubeset-runtime --features shard --example sharded --example shard_bench
//! target/release/examples/shard_bench target/release/examples/sharded [--quick] [--leader-only] > records.json
//! ```
//!
//! Prints a JSON array of records (progress on stderr):
//!
//! - `shard-throughput`, per filter (`server`, `client`) and replica count:
//!   with every replica a member and the shard Leases settled, every
//!   object's `want` is changed (64 writes in flight); the time from the
//!   first write until a watch has seen every object's `done` equal it;
//! - `shard-memory`, per replica of those runs once converged: the cache
//!   (objects, `memory::estimate` bytes, from the replica's SIGUSR1
//!   answer), the shards held and the process's RSS;
//! - `shard-takeover`, per standby kind and trial: two replicas, `kill -9`
//!   of one, then its objects' `want` changed; from the kill to the
//!   survivor's first reconcile of one of them (its span log) and to all
//!   of them converged (the watch). `warm`: `ShardFilter::Client`, the
//!   survivor's cache already holds the dead replica's objects; `cold`:
//!   `ShardFilter::Server`, it lists them once it holds their shards.
//!   Plain leader election on the same line (`standby` `leader-warm`,
//!   `leader-cold`, filter `leader`): the leader is killed with two
//!   replicas running, then every object's `want` changed; `leader-warm`:
//!   `Controller::leader_elected`, the standby's cache synced before the
//!   kill; `leader-cold`: the old way, the standby starts its controller
//!   (and lists) after it wins the Lease.
//!   These records also carry `led_s` (kill → the standby's `leading`
//!   line) and `led_to_first_s` (→ its first reconcile: what the standby
//!   does after winning, a relist when cold). `--leader-only` runs only
//!   these.
//!
//! `shard_bench serve` is the server process: it prints its URL and stops
//! when its stdin closes.

// The span log's writer is the replicas'; this reads.
#[allow(dead_code)]
#[path = "sharded/spans.rs"]
mod spans;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use futures::{StreamExt as _, TryStreamExt as _};
use kubeset_client::api::coordination::v1::Lease;
use kubeset_client::api::core::v1::{ConfigMap, Namespace};
use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset_client::params::{ListParams, PatchParams, PostParams};
use kubeset_client::rest::{RestClient, RestConfig};
use kubeset_client::{Api, Client, Patch};
use kubeset_runtime::shard::{shard_of, uid_hash};
use kubeset_runtime::{Event, WatcherConfig, watcher};
use serde_json::{Value, json};
use spans::now_ns;

type Error = Box<dyn std::error::Error + Send + Sync>;

const SHARDS: u32 = 64;
/// The example's Lease group.
const GROUP: &str = "sharded-example";
/// Lease duration, renew deadline, retry period (seconds): the runtime's
/// multi-process test's, shorter than client-go's 15/10/2.
const DURATIONS: (u64, u64, u64) = (8, 5, 1);
/// Reconciles at once per replica.
const CONCURRENCY: usize = 4;
/// Writes in flight when the bench changes objects.
const IN_FLIGHT: usize = 64;
/// A failure bound for every wait (never a figure).
const LIMIT: Duration = Duration::from_secs(300);

struct Plan {
    objects: usize,
    replicas: Vec<usize>,
    trials: usize,
    /// `--leader-only`: only the plain leader election takeovers.
    leader_only: bool,
}

fn secs(ns: u128) -> f64 {
    ns as f64 / 1e9
}

// ------------------------------------------------------------ processes

/// The embedded API server in a process of its own (this binary, `serve`).
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start() -> Result<Self, Error> {
        let mut child = Command::new(std::env::current_exe()?)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let mut url = String::new();
        BufReader::new(child.stdout.take().ok_or("no stdout")?).read_line(&mut url)?;
        let url = url.trim().to_owned();
        if !url.starts_with("http") {
            let _ = child.kill();
            return Err(format!("the server printed {url:?}, not a URL").into());
        }
        Ok(Server { child, url })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

async fn serve() -> Result<(), Error> {
    let server = kubeset_testserver::TestServer::start().await?;
    println!("{}", server.urls()[0]);
    std::io::stdout().flush()?;
    // Until the bench closes our stdin.
    tokio::task::spawn_blocking(|| std::io::stdin().lines().count()).await?;
    Ok(())
}

/// One replica process of the example operator.
struct Replica {
    identity: String,
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Replica {
    fn pid(&self) -> String {
        self.child.id().to_string()
    }

    fn signal(&self, sig: &str) -> Result<(), Error> {
        let status = Command::new("kill").args([sig, &self.pid()]).status()?;
        if !status.success() {
            return Err(format!("kill {sig} {}: {status}", self.identity).into());
        }
        Ok(())
    }

    /// The replica's cache and shards (its SIGUSR1 answer) and its RSS.
    fn stats(&self) -> Result<Value, Error> {
        while self.lines.try_recv().is_ok() {}
        self.signal("-USR1")?;
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .map_err(|e| format!("{}: no answer to SIGUSR1: {e}", self.identity))?;
        let mut v: Value = serde_json::from_str(&line)?;
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))?;
        let kib = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|r| r.split_whitespace().next())
                .and_then(|n| n.parse::<u64>().ok())
        };
        v["rss_kib"] = json!(kib("VmRSS:"));
        v["peak_rss_kib"] = json!(kib("VmHWM:"));
        v["replica"] = json!(self.identity);
        Ok(v)
    }

    fn stop(mut self) -> Result<(), Error> {
        self.signal("-TERM")?;
        let status = self.child.wait()?;
        if !status.success() {
            return Err(format!("{} exited with {status} on SIGTERM", self.identity).into());
        }
        Ok(())
    }

    fn kill9(mut self) -> Result<u128, Error> {
        self.child.kill()?;
        let at = now_ns();
        self.child.wait()?;
        Ok(at)
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Where a run's replicas find the server, log and write their stderr.
struct Run {
    bin: PathBuf,
    dir: PathBuf,
    kubeconfig: PathBuf,
    filter: &'static str,
    /// `SHARDED_MODE`: `shard`, `leader-warm`, `leader-cold`.
    mode: &'static str,
}

impl Run {
    fn new(bin: &Path, url: &str, namespace: &str, filter: &'static str) -> Result<Self, Error> {
        let dir = std::env::temp_dir().join(format!(
            "kubeset-shard-bench-{}-{namespace}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("spans"))?;
        let kubeconfig = dir.join("kubeconfig");
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\ncurrent-context: bench\n\
                 clusters:\n- name: bench\n  cluster:\n    server: {url}\n\
                 users:\n- name: bench\n  user: {{}}\n\
                 contexts:\n- name: bench\n  context:\n    cluster: bench\n    user: bench\n    namespace: {namespace}\n"
            ),
        )?;
        Ok(Run {
            bin: bin.to_owned(),
            dir,
            kubeconfig,
            filter,
            mode: "shard",
        })
    }

    fn spawn(&self, identity: &str) -> Result<Replica, Error> {
        let (lease, renew, retry) = DURATIONS;
        let mut child = Command::new(&self.bin)
            .arg(identity)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("SHARDED_FILTER", self.filter)
            .env("SHARDED_MODE", self.mode)
            .env("SHARDED_CONCURRENCY", CONCURRENCY.to_string())
            .env("SHARDED_DURATIONS", format!("{lease},{renew},{retry}"))
            .env("SHARDED_QPS", "0")
            .env(
                "SHARDED_SPAN_LOG",
                self.dir.join("spans").join(format!("{identity}.log")),
            )
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(
                self.dir.join(format!("{identity}.stderr")),
            )?)
            .spawn()?;
        let out = child.stdout.take().ok_or("no stdout")?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Replica {
            identity: identity.to_owned(),
            child,
            lines,
        })
    }

    /// Waits until the replica's stderr (its log) contains `what`.
    async fn logged(&self, identity: &str, what: &str) -> Result<(), Error> {
        let path = self.dir.join(format!("{identity}.stderr"));
        let end = Instant::now() + LIMIT;
        while !std::fs::read_to_string(&path)
            .unwrap_or_default()
            .contains(what)
        {
            if Instant::now() >= end {
                return Err(format!("{identity} never logged {what:?}").into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    fn spans(&self, stopped: &HashMap<String, u128>) -> Result<Vec<spans::Span>, Error> {
        Ok(spans::read_spans(&self.dir.join("spans"), stopped)?)
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

// ------------------------------------------------------------ the server

fn client(url: &str) -> Result<Client, Error> {
    let config = RestConfig::new(url.to_owned())
        .with_qps_burst(-1.0, 0)
        .with_request_deadline(Duration::from_secs(30));
    Ok(Client::new(RestClient::new(config)?, "default"))
}

/// A fresh namespace with `n` ConfigMaps labelled for the example, each
/// already converged at `want=0`.
async fn objects(client: &Client, namespace: &str, n: usize) -> Result<Api<ConfigMap>, Error> {
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(namespace.to_owned()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await?;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    futures::stream::iter(0..n)
        .map(|i| {
            let api = api.clone();
            async move {
                let cm = ConfigMap {
                    metadata: ObjectMeta {
                        name: Some(format!("cm-{i:04}")),
                        labels: Some([("sharded".to_owned(), "yes".to_owned())].into()),
                        annotations: Some([("done".to_owned(), "0".to_owned())].into()),
                        ..ObjectMeta::default()
                    },
                    data: Some([("want".to_owned(), "0".to_owned())].into()),
                    ..ConfigMap::default()
                };
                api.create(&PostParams::default(), &cm).await.map(drop)
            }
        })
        .buffer_unordered(IN_FLIGHT)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(api)
}

/// Sets `want` of every named object; returns how long the writes took.
async fn set_want(api: &Api<ConfigMap>, names: &[String], want: u32) -> Result<f64, Error> {
    let t = Instant::now();
    futures::stream::iter(names)
        .map(|name| {
            let patch = json!({"data": {"want": want.to_string()}});
            let api = api.clone();
            async move {
                api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .map(drop)
            }
        })
        .buffer_unordered(IN_FLIGHT)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(t.elapsed().as_secs_f64())
}

/// A watch of the namespace's ConfigMaps, listed before it returns; it
/// resolves (ns since the epoch) once every object of `names` has
/// `done == want`.
async fn converged(
    api: &Api<ConfigMap>,
    names: &[String],
    want: u32,
) -> Result<tokio::task::JoinHandle<Result<u128, String>>, Error> {
    let mut pending: BTreeSet<String> = names.iter().cloned().collect();
    let want = want.to_string();
    let mut events = watcher(api.clone(), WatcherConfig::default()).boxed();
    // The initial list first: the changes come after it.
    loop {
        match events.next().await {
            Some(Ok(Event::InitDone)) => break,
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e.into()),
            None => return Err("the watch ended".into()),
        }
    }
    Ok(tokio::spawn(async move {
        let deadline = tokio::time::Instant::now() + LIMIT;
        while !pending.is_empty() {
            let next = tokio::time::timeout_at(deadline, events.next()).await;
            let cm = match next {
                Err(_) => return Err(format!("{} objects not converged", pending.len())),
                Ok(None) => return Err("the watch ended".to_owned()),
                Ok(Some(Ok(Event::Apply(cm) | Event::InitApply(cm)))) => cm,
                Ok(Some(_)) => continue,
            };
            let done = cm.metadata.annotations.as_ref().and_then(|a| a.get("done"));
            if done == Some(&want) {
                pending.remove(cm.metadata.name.as_deref().unwrap_or_default());
            }
        }
        Ok(now_ns())
    }))
}

/// shard → holder of the example's shard Leases in `namespace`.
async fn holders(leases: &Api<Lease>) -> Result<BTreeMap<u32, String>, Error> {
    let prefix = format!("{GROUP}-shard-");
    Ok(leases
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter_map(|l| {
            let shard = l
                .metadata
                .name
                .as_deref()?
                .strip_prefix(&prefix)?
                .parse()
                .ok()?;
            let holder = l.spec?.holder_identity.filter(|h| !h.is_empty())?;
            Some((shard, holder))
        })
        .collect())
}

/// Waits until every shard is held, each replica holds some, and the
/// holders have not changed for three retry periods (every replica is a
/// member with a synced cache: it joins only then).
async fn settled(leases: &Api<Lease>, replicas: &[Replica]) -> Result<(), Error> {
    let end = Instant::now() + LIMIT;
    let (mut last, mut since) = (BTreeMap::new(), Instant::now());
    let ids: Vec<&str> = replicas.iter().map(|r| r.identity.as_str()).collect();
    loop {
        let h = holders(leases).await?;
        let full = h.len() == SHARDS as usize
            && ids.iter().all(|id| h.values().any(|v| v == id))
            && h.values().all(|v| ids.contains(&v.as_str()));
        if h != last || !full {
            (last, since) = (h, Instant::now());
        } else if since.elapsed() >= Duration::from_secs(3 * DURATIONS.2) {
            return Ok(());
        }
        if Instant::now() >= end {
            return Err(format!("the shards never settled: {last:?}").into());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

// ---------------------------------------------------------------- rows

async fn throughput(
    url: &str,
    bin: &Path,
    plan: &Plan,
    filter: &'static str,
    n: usize,
) -> Result<Vec<Value>, Error> {
    let namespace = format!("throughput-{filter}-{n}");
    eprintln!("shard bench: {namespace}");
    let client = client(url)?;
    let api = objects(&client, &namespace, plan.objects).await?;
    let leases: Api<Lease> = Api::namespaced(client, &namespace);
    let run = Run::new(bin, url, &namespace, filter)?;
    let replicas = (0..n)
        .map(|i| run.spawn(&format!("r{i}")))
        .collect::<Result<Vec<_>, _>>()?;
    settled(&leases, &replicas).await?;
    let names: Vec<String> = (0..plan.objects).map(|i| format!("cm-{i:04}")).collect();
    let watch = converged(&api, &names, 1).await?;
    let start = now_ns();
    let writes_s = set_want(&api, &names, 1).await?;
    let end = watch.await??;
    let took = secs(end - start);
    let mut out = vec![json!({
        "bench": "shard-throughput", "filter": filter, "replicas": n,
        "objects": plan.objects, "converged_s": took,
        "per_sec": plan.objects as f64 / took, "writes_s": writes_s,
        "concurrency": CONCURRENCY, "work_ms": 20,
    })];
    for r in &replicas {
        let mut stats = r.stats()?;
        stats["bench"] = json!("shard-memory");
        stats["filter"] = json!(filter);
        stats["replicas"] = json!(n);
        out.push(stats);
    }
    let mut stopped = HashMap::new();
    for r in replicas {
        let id = r.identity.clone();
        r.stop()?;
        stopped.insert(id, now_ns());
    }
    let spans = run.spans(&stopped)?;
    out[0]["reconciles"] = json!(spans.len());
    out[0]["overlaps"] = json!(spans::overlaps(&spans).len());
    eprintln!("shard bench: {}", out[0]);
    Ok(out)
}

async fn takeover(
    url: &str,
    bin: &Path,
    plan: &Plan,
    standby: &'static str,
    trial: usize,
) -> Result<Value, Error> {
    let filter = if standby == "warm" {
        "client"
    } else {
        "server"
    };
    let namespace = format!("takeover-{standby}-{trial}");
    eprintln!("shard bench: {namespace}");
    let client = client(url)?;
    let api = objects(&client, &namespace, plan.objects).await?;
    let leases: Api<Lease> = Api::namespaced(client, &namespace);
    let run = Run::new(bin, url, &namespace, filter)?;
    let (a, b) = (run.spawn("a")?, run.spawn("b")?);
    let both = [a, b];
    settled(&leases, &both).await?;
    let [a, b] = both;
    let b_shards: BTreeSet<u32> = holders(&leases)
        .await?
        .into_iter()
        .filter(|(_, h)| h == "b")
        .map(|(s, _)| s)
        .collect();
    let b_names: Vec<String> = api
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|cm| {
            let uid = cm.metadata.uid.as_deref().unwrap_or_default();
            b_shards.contains(&shard_of(uid_hash(uid), SHARDS))
        })
        .filter_map(|cm| cm.metadata.name)
        .collect();
    let watch = converged(&api, &b_names, 1).await?;
    let killed = b.kill9()?;
    let writes_s = set_want(&api, &b_names, 1).await?;
    let all = watch.await??;
    a.stop()?;
    let stopped: HashMap<String, u128> =
        [("a".to_owned(), now_ns()), ("b".to_owned(), killed)].into();
    let spans = run.spans(&stopped)?;
    let b_keys: BTreeSet<&str> = b_names.iter().map(String::as_str).collect();
    let first = spans
        .iter()
        .filter(|s| s.replica == "a" && s.want == "1" && b_keys.contains(s.key.as_str()))
        .map(|s| s.start)
        .min()
        .ok_or("a never reconciled b's objects")?;
    let (lease, renew, retry) = DURATIONS;
    let v = json!({
        "bench": "shard-takeover", "standby": standby, "filter": filter, "trial": trial,
        "objects": plan.objects, "killed_shards": b_shards.len(), "killed_objects": b_names.len(),
        "first_s": secs(first.saturating_sub(killed)), "all_s": secs(all.saturating_sub(killed)),
        "writes_s": writes_s, "overlaps": spans::overlaps(&spans).len(),
        "lease_s": lease, "renew_s": renew, "retry_s": retry,
    });
    eprintln!("shard bench: {v}");
    Ok(v)
}

/// Waits until `who` holds the example's leader Lease.
async fn leads(leases: &Api<Lease>, who: &str) -> Result<(), Error> {
    let end = Instant::now() + LIMIT;
    loop {
        let holder = leases
            .get_opt(&format!("{GROUP}-leader"))
            .await?
            .and_then(|l| l.spec?.holder_identity);
        if holder.as_deref() == Some(who) {
            return Ok(());
        }
        if Instant::now() >= end {
            return Err(format!("{who} never led: {holder:?}").into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Plain leader election: `a` leads, `b` stands by (`warm` or `cold`),
/// `kill -9` of `a`, every object's `want` changed.
async fn leader_takeover(
    url: &str,
    bin: &Path,
    plan: &Plan,
    standby: &'static str,
    trial: usize,
) -> Result<Value, Error> {
    let namespace = format!("leader-{standby}-{trial}");
    eprintln!("shard bench: {namespace}");
    let client = client(url)?;
    let api = objects(&client, &namespace, plan.objects).await?;
    let leases: Api<Lease> = Api::namespaced(client, &namespace);
    let mut run = Run::new(bin, url, &namespace, "client")?;
    run.mode = if standby == "warm" {
        "leader-warm"
    } else {
        "leader-cold"
    };
    let a = run.spawn("a")?;
    leads(&leases, "a").await?;
    let b = run.spawn("b")?;
    let ready = if standby == "warm" {
        "replica warm"
    } else {
        "replica campaigning"
    };
    run.logged("b", ready).await?;
    let names: Vec<String> = (0..plan.objects).map(|i| format!("cm-{i:04}")).collect();
    let watch = converged(&api, &names, 1).await?;
    let killed = a.kill9()?;
    let writes_s = set_want(&api, &names, 1).await?;
    let all = watch.await??;
    b.stop()?;
    let stopped: HashMap<String, u128> =
        [("b".to_owned(), now_ns()), ("a".to_owned(), killed)].into();
    let spans = run.spans(&stopped)?;
    let first = spans
        .iter()
        .filter(|s| s.replica == "b" && s.want == "1")
        .map(|s| s.start)
        .min()
        .ok_or("b never reconciled")?;
    // When b led (its span log), so the Lease's share of the takeover
    // and the rest (a relist, for the cold standby) show apart.
    let led = spans::read_events(&run.dir.join("spans"))?
        .into_iter()
        .filter(|(what, who, _)| what == "leading" && who == "b")
        .map(|(_, _, t)| t)
        .min()
        .ok_or("b never logged that it leads")?;
    let (lease, renew, retry) = DURATIONS;
    let v = json!({
        "bench": "shard-takeover", "standby": format!("leader-{standby}"), "filter": "leader",
        "trial": trial, "objects": plan.objects, "killed_shards": 1, "killed_objects": plan.objects,
        "led_s": secs(led.saturating_sub(killed)),
        "led_to_first_s": secs(first.saturating_sub(led)),
        "first_s": secs(first.saturating_sub(killed)), "all_s": secs(all.saturating_sub(killed)),
        "writes_s": writes_s, "overlaps": spans::overlaps(&spans).len(),
        "lease_s": lease, "renew_s": renew, "retry_s": retry,
    });
    eprintln!("shard bench: {v}");
    Ok(v)
}

async fn bench(bin: PathBuf, plan: Plan) -> Result<Vec<Value>, Error> {
    let server = Server::start()?;
    let mut all = Vec::new();
    if plan.leader_only {
        for trial in 0..plan.trials {
            for standby in ["warm", "cold"] {
                all.push(leader_takeover(&server.url, &bin, &plan, standby, trial).await?);
            }
        }
        return Ok(all);
    }
    for filter in ["server", "client"] {
        for &n in &plan.replicas {
            all.extend(throughput(&server.url, &bin, &plan, filter, n).await?);
        }
    }
    for trial in 0..plan.trials {
        for standby in ["warm", "cold"] {
            all.push(takeover(&server.url, &bin, &plan, standby, trial).await?);
        }
        for standby in ["warm", "cold"] {
            all.push(leader_takeover(&server.url, &bin, &plan, standby, trial).await?);
        }
    }
    Ok(all)
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    if args.first().map(String::as_str) == Some("serve") {
        return rt.block_on(serve());
    }
    let bin = args.first().map(PathBuf::from).ok_or(
        "usage: shard_bench <the sharded example's binary> [--quick] [--leader-only] | serve",
    )?;
    let leader_only = args.iter().any(|a| a == "--leader-only");
    let plan = if args.iter().any(|a| a == "--quick") {
        Plan {
            objects: 200,
            replicas: vec![1, 2, 4],
            trials: 1,
            leader_only,
        }
    } else {
        Plan {
            objects: 2000,
            replicas: vec![1, 2, 4],
            trials: 3,
            leader_only,
        }
    };
    let all = rt.block_on(bench(bin, plan))?;
    println!("{}", serde_json::to_string_pretty(&all)?);
    Ok(())
}
