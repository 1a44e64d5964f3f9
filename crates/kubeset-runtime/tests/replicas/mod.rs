//! The harness of the multi-process tests (`shard.rs`, `leader_warm.rs`):
//! the test binary re-executes itself as a replica of the example
//! operator (`examples/sharded/replica.rs`, included here with the span
//! logs of `examples/sharded/spans.rs`), against the embedded server or
//! the realkube instance named by `KUBESET_REALKUBE_ENV`.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use kubeset_client::api::core::v1::{ConfigMap, Namespace};
use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset_client::params::{DeleteParams, ListParams, PatchParams, PostParams};
use kubeset_client::{Api, Client, Patch};
use kubeset_testserver::TestServer;
use tokio::time::Instant;

use crate::common;

/// The example operator's replica: the test binary runs it when
/// `KUBESET_SHARD_REPLICA` is set.
#[path = "../../examples/sharded/replica.rs"]
pub mod replica;
/// Its span logs, read back.
#[path = "../../examples/sharded/spans.rs"]
pub mod spans;

pub use spans::now_ns;

/// A failure bound for convergence (never a performance assertion).
pub const CONVERGE_LIMIT: Duration = Duration::from_secs(90);

/// The client of a replica process, from the environment its test set.
pub async fn replica_client() -> Client {
    if let Ok(url) = std::env::var("KUBESET_SHARD_URL") {
        return common::client(&[url]);
    }
    let path = std::env::var("KUBESET_SHARD_KUBECONFIG").expect("a URL or a kubeconfig");
    common::kubeconfig_client(&path).await
}

/// The replica's settings that come from its test: identity, namespace,
/// span log.
pub fn replica_env() -> (String, String, PathBuf) {
    (
        std::env::var("KUBESET_SHARD_REPLICA").expect("KUBESET_SHARD_REPLICA"),
        std::env::var("KUBESET_SHARD_NS").expect("KUBESET_SHARD_NS"),
        std::env::var("KUBESET_SHARD_LOG")
            .expect("KUBESET_SHARD_LOG")
            .into(),
    )
}

/// A server the replicas run against.
pub struct Target {
    /// `embedded` or `realkube`.
    pub name: &'static str,
    /// The test's client.
    pub client: Client,
    /// Environment for a replica to reach the server.
    pub env: Vec<(String, String)>,
    /// The namespace of the objects and Leases.
    pub namespace: String,
    /// Whether the server applies `shardSelector`.
    pub server_filter: bool,
    /// The realkube settings (`KUBESET_REALKUBE_*`), if realkube.
    pub realkube: Option<BTreeMap<String, String>>,
}

/// The embedded server and a target on it (keep the server alive).
pub async fn embedded() -> (TestServer, Target) {
    let server = TestServer::start().await.expect("server starts");
    let url = server.urls()[0].clone();
    let target = Target {
        name: "embedded",
        client: common::client(std::slice::from_ref(&url)),
        env: vec![("KUBESET_SHARD_URL".to_owned(), url)],
        namespace: "default".to_owned(),
        server_filter: true,
        realkube: None,
    };
    (server, target)
}

/// A target on realkube in a fresh namespace `<prefix>-…`, or `None`
/// (with the reason printed) when `KUBESET_REALKUBE_ENV` is not set.
pub async fn realkube(prefix: &str) -> Option<Target> {
    let Some(env) = common::realkube_env() else {
        println!(
            "realkube: skipped, KUBESET_REALKUBE_ENV is not set (see tests/realkube/README.md)"
        );
        return None;
    };
    let kubeconfig = env["KUBESET_REALKUBE_KUBECONFIG"].clone();
    let client = common::kubeconfig_client(&kubeconfig).await;
    let namespace = format!(
        "{prefix}-{}-{:x}",
        std::process::id(),
        now_ns() & 0x00ff_ffff
    );
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(namespace.clone()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .expect("namespace");
    Some(Target {
        name: "realkube",
        client,
        env: vec![("KUBESET_SHARD_KUBECONFIG".to_owned(), kubeconfig)],
        namespace,
        server_filter: env
            .get("KUBESET_REALKUBE_FEATURE_GATES")
            .is_some_and(|g| g.contains("ShardedListAndWatch=true")),
        realkube: Some(env),
    })
}

impl Target {
    /// Deletes the realkube namespace (the embedded server goes away).
    pub async fn cleanup(&self) {
        if self.realkube.is_some() {
            let _ = Api::<Namespace>::all(self.client.clone())
                .delete(&self.namespace, &DeleteParams::default())
                .await;
        }
    }
}

/// A replica process.
pub struct Replica {
    /// Its identity.
    pub identity: String,
    /// The process.
    pub child: Child,
}

/// The replicas of one scenario and their logs.
pub struct Run<'a> {
    /// Where they run.
    pub target: &'a Target,
    /// Their span logs (`<identity>.log`) and stderr (`<identity>.stderr`).
    pub dir: PathBuf,
    /// The replicas started.
    pub replicas: Vec<Replica>,
    /// identity → when it was killed or stopped (ns since the epoch).
    pub killed: HashMap<String, u128>,
}

impl<'a> Run<'a> {
    /// A run with a fresh log directory `kubeset-<what>-<target>-<pid>`.
    pub fn new(target: &'a Target, what: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "kubeset-{what}-{}-{}",
            target.name,
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("log dir");
        Run {
            target,
            dir,
            replicas: Vec::new(),
            killed: HashMap::new(),
        }
    }

    /// Starts this test binary as replica `identity`.
    pub fn spawn(&mut self, identity: &str) {
        self.spawn_with(identity, &[]);
    }

    /// [`spawn`](Self::spawn) with more environment.
    pub fn spawn_with(&mut self, identity: &str, env: &[(&str, &str)]) {
        let exe = std::env::current_exe().expect("the test binary");
        let stderr = std::fs::File::create(self.dir.join(format!("{identity}.stderr")))
            .expect("stderr file");
        let child = Command::new(exe)
            .env("KUBESET_SHARD_REPLICA", identity)
            .env("KUBESET_SHARD_NS", &self.target.namespace)
            .env(
                "KUBESET_SHARD_LOG",
                self.dir.join(format!("{identity}.log")),
            )
            .envs(self.target.env.iter().map(|(k, v)| (k, v)))
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("a replica starts");
        self.replicas.push(Replica {
            identity: identity.to_owned(),
            child,
        });
    }

    fn replica(&mut self, identity: &str) -> &mut Replica {
        self.replicas
            .iter_mut()
            .find(|r| r.identity == identity)
            .expect("a replica of that name")
    }

    /// `kill -9`; returns when (ns since the epoch).
    pub fn kill9(&mut self, identity: &str) -> u128 {
        let r = self.replica(identity);
        r.child.kill().expect("SIGKILL");
        let _ = r.child.wait();
        let at = now_ns();
        self.killed.insert(identity.to_owned(), at);
        at
    }

    /// SIGTERM; it must exit cleanly.
    pub fn terminate(&mut self, identity: &str) {
        let r = self.replica(identity);
        let status = Command::new("kill")
            .args(["-TERM", &r.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        let exit = r.child.wait().expect("the replica exits");
        assert!(
            exit.success(),
            "{identity} exits cleanly on SIGTERM: {exit}"
        );
        // It ran its reconciles to an end (cancelled or finished).
        self.killed.insert(identity.to_owned(), now_ns());
    }

    /// The replica's stderr so far.
    pub fn stderr(&self, identity: &str) -> String {
        std::fs::read_to_string(self.dir.join(format!("{identity}.stderr"))).unwrap_or_default()
    }

    /// Waits until the replica's stderr contains `what` (a log line).
    pub async fn logged(&self, identity: &str, what: &str, limit: Duration) -> bool {
        let end = Instant::now() + limit;
        loop {
            if self.stderr(identity).contains(what) {
                return true;
            }
            if Instant::now() >= end {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Run<'_> {
    fn drop(&mut self) {
        for r in &mut self.replicas {
            let _ = r.child.kill();
            let _ = r.child.wait();
        }
    }
}

/// The name of object `i`.
pub fn name(i: usize) -> String {
    format!("cm-{i:03}")
}

/// Creates `n` ConfigMaps `cm-000`… with `want=1`.
pub async fn create_objects(api: &Api<ConfigMap>, n: usize) {
    for i in 0..n {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(name(i)),
                ..ObjectMeta::default()
            },
            data: Some([("want".to_owned(), "1".to_owned())].into()),
            ..ConfigMap::default()
        };
        api.create(&PostParams::default(), &cm)
            .await
            .expect("create");
    }
}

/// Sets `want` on the `n` ConfigMaps.
pub async fn set_want(api: &Api<ConfigMap>, n: usize, want: u32) {
    for i in 0..n {
        let patch = serde_json::json!({"data": {"want": want.to_string()}});
        api.patch(&name(i), &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("patch");
    }
}

/// Waits until every one of the `n` ConfigMaps' `done` is `want`; returns
/// who did the last write of each (replica → count). `where_` describes a
/// stuck object (its shard, say).
pub async fn converged(
    api: &Api<ConfigMap>,
    n: usize,
    want: u32,
    where_: impl Fn(&ConfigMap) -> String,
) -> BTreeMap<String, usize> {
    let end = Instant::now() + CONVERGE_LIMIT;
    let want_s = want.to_string();
    let done = |cm: &ConfigMap| {
        cm.metadata.annotations.as_ref().and_then(|a| a.get("done")) == Some(&want_s)
    };
    loop {
        let list = api.list(&ListParams::default()).await.expect("list");
        let count = list.items.iter().filter(|cm| done(cm)).count();
        if count == n && list.items.len() == n {
            let mut by = BTreeMap::new();
            for cm in &list.items {
                let who = cm
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get("by"))
                    .cloned()
                    .unwrap_or_default();
                *by.entry(who).or_insert(0) += 1;
            }
            return by;
        }
        if Instant::now() >= end {
            let stuck: Vec<String> = list
                .items
                .iter()
                .filter(|cm| !done(cm))
                .map(|cm| {
                    format!(
                        "{} ({})",
                        cm.metadata.name.as_deref().unwrap_or_default(),
                        where_(cm)
                    )
                })
                .collect();
            panic!("{count} of {n} converged to {want} after {CONVERGE_LIMIT:?}; not: {stuck:?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
