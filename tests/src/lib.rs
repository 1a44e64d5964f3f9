//! Harness of kubeset's integration suite against a real kube-apiserver
//! (realkube, see `tests/realkube/README.md`).
//!
//! - [`connect`] finds the running instance (`.cache/realkube/env`, or the
//!   `KUBESET_REALKUBE_*` variables), builds a [`Client`] from the
//!   kubeconfig it names and creates a namespace of the test's own. When
//!   realkube is not running it **fails** the test, unless
//!   `KUBESET_SKIP_REALKUBE=1` is set: then it prints a loud skip line
//!   (past libtest's output capture) and answers `None`.
//! - [`RealKube`] builds clients for any API server of the instance and
//!   either identity ([`Identity`]).
//! - [`instance::Instance`] starts extra instances (429, failover) that a
//!   test owns and stops; [`etcd`] compacts etcd (410 Gone).
//! - [`json::assert_subset`]: read-back equality where the server defaults.
//! - [`fault_proxy::FaultProxy`]: a loopback proxy that breaks connections
//!   to the real server in chosen ways (the fault matrix, `suite/faults.rs`).

pub mod env;
pub mod etcd;
pub mod fault_proxy;
pub mod instance;
pub mod json;

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kubeset::api::core::v1::Namespace;
use kubeset::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset::params::PostParams;
use kubeset::rest::config::{ConfigError, Kubeconfig};
use kubeset::{Api, Client, ClientError, Config, KubeConfigOptions};

pub use env::RealkubeEnv;

/// Set to `1` to skip (loudly) instead of failing when realkube is not running.
pub const SKIP_VAR: &str = "KUBESET_SKIP_REALKUBE";

/// Label put on every namespace the suite creates.
pub const SUITE_LABEL: &str = "kubeset.dev/suite";

/// Errors of the harness itself (not of the client under test).
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// A `KUBESET_REALKUBE_*` setting is missing.
    #[error("realkube setting {name} is missing")]
    MissingSetting {
        /// The variable.
        name: String,
    },
    /// A `KUBESET_REALKUBE_*` setting has an unusable value.
    #[error("realkube setting {name} has an unusable value {value:?}")]
    BadSetting {
        /// The variable.
        name: String,
        /// Its value.
        value: String,
    },
    /// A file or process operation failed.
    #[error("{what}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A command exited unsuccessfully.
    #[error("{command} exited with {status}: {stderr}")]
    Command {
        /// The command line.
        command: String,
        /// Its exit status.
        status: String,
        /// Its standard error.
        stderr: String,
    },
    /// The kubeconfig of the instance could not be loaded.
    #[error("loading the realkube kubeconfig")]
    Config {
        /// The config layer's error.
        #[source]
        source: ConfigError,
    },
    /// The client could not be built.
    #[error("building a client for realkube")]
    Client {
        /// The facade's error.
        #[source]
        source: ClientError,
    },
    /// etcd's gateway did not answer as expected.
    #[error("etcd: {reason}")]
    Etcd {
        /// What went wrong.
        reason: String,
    },
}

/// Which identity a client authenticates as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// `CN=kubeset-admin, O=system:masters`: exempt from max-in-flight and APF.
    Admin,
    /// `CN=kubeset-tester, O=kubeset:testers`: cluster-admin through RBAC,
    /// subject to max-in-flight limits and APF (use it to provoke 429).
    User,
}

/// A running realkube instance.
#[derive(Debug, Clone)]
pub struct RealKube {
    /// Its settings.
    pub env: RealkubeEnv,
}

impl RealKube {
    /// The instance's kubeconfig, pointed at `server` (default: apiserver
    /// 0) and authenticating as `identity`.
    pub fn kubeconfig(
        &self,
        server: Option<&str>,
        identity: Identity,
    ) -> Result<Kubeconfig, HarnessError> {
        let mut kubeconfig = Kubeconfig::read_from(&self.env.kubeconfig)
            .map_err(|source| HarnessError::Config { source })?;
        if let Some(server) = server {
            for named in &mut kubeconfig.clusters {
                if let Some(cluster) = named.cluster.as_mut() {
                    cluster.server = Some(server.to_owned());
                }
            }
        }
        if identity == Identity::User {
            let path = |p: &PathBuf| Some(p.to_string_lossy().into_owned());
            for named in &mut kubeconfig.users {
                if let Some(user) = named.user.as_mut() {
                    user.client_certificate = path(&self.env.user_cert);
                    user.client_key = path(&self.env.user_key);
                }
            }
        }
        Ok(kubeconfig)
    }

    /// The resolved [`Config`] for `server` and `identity`, with the
    /// client-side rate limit off (the suite measures the server, not the
    /// token bucket) and a generous timeout for a loaded machine.
    pub fn config(&self, server: Option<&str>, identity: Identity) -> Result<Config, HarnessError> {
        let kubeconfig = self.kubeconfig(server, identity)?;
        let mut config =
            Config::from_custom_kubeconfig_sync(kubeconfig, &KubeConfigOptions::default())
                .map_err(|source| HarnessError::Config { source })?;
        config.qps = -1.0;
        config.timeout = Some(Duration::from_secs(60));
        Ok(config)
    }

    /// A client for `server` (default: apiserver 0) as `identity`.
    pub fn client_for(
        &self,
        server: Option<&str>,
        identity: Identity,
    ) -> Result<Client, HarnessError> {
        let config = self.config(server, identity)?;
        Client::try_from_config(&config).map_err(|source| HarnessError::Client { source })
    }

    /// The admin client of apiserver 0.
    pub fn client(&self) -> Result<Client, HarnessError> {
        self.client_for(None, Identity::Admin)
    }
}

/// What a test gets from [`connect`].
#[derive(Debug, Clone)]
pub struct TestContext {
    /// The instance.
    pub kube: RealKube,
    /// Admin client of apiserver 0.
    pub client: Client,
    /// A namespace created for this test alone.
    pub ns: String,
}

/// Connects to the running realkube and creates a namespace for `test`.
///
/// Fails the test when realkube is not running, unless
/// `KUBESET_SKIP_REALKUBE=1`: then it prints a loud skip line and answers
/// `None` (the test should return).
pub async fn connect(test: &str) -> Option<TestContext> {
    let kube = realkube(test).await?;
    let client = match kube.client() {
        Ok(c) => c,
        Err(e) => panic!("{test}: {}", error_chain(&e)),
    };
    let ns = match create_namespace(&client, test).await {
        Ok(ns) => ns,
        Err(e) => panic!("{test}: creating its namespace: {}", error_chain(&e)),
    };
    Some(TestContext { kube, client, ns })
}

/// Finds the running realkube (checking that apiserver 0 answers
/// `/readyz`); see [`connect`] for what happens when it is not running.
pub async fn realkube(test: &str) -> Option<RealKube> {
    let env = match RealkubeEnv::discover() {
        Ok(Some(env)) => env,
        Ok(None) => {
            return not_running(
                test,
                &format!(
                    "no env file ({} or $KUBESET_REALKUBE_ENV) and no KUBESET_REALKUBE_KUBECONFIG",
                    env::default_env_file().display()
                ),
            );
        }
        Err(e) => return not_running(test, &error_chain(&e)),
    };
    let kube = RealKube { env };
    let client = match kube.client() {
        Ok(c) => c,
        Err(e) => return not_running(test, &error_chain(&e)),
    };
    let ready = client
        .rest()
        .get()
        .abs_path(["readyz"])
        .timeout(Duration::from_secs(20))
        .max_retries(2)
        .send()
        .await;
    match ready {
        Ok(_) => Some(kube),
        Err(e) => not_running(
            test,
            &format!(
                "{} does not answer /readyz: {}",
                kube.env.servers[0],
                error_chain(&e)
            ),
        ),
    }
}

fn not_running<T>(test: &str, why: &str) -> Option<T> {
    if std::env::var(SKIP_VAR).as_deref() == Ok("1") {
        // Straight to the process's stderr: libtest captures print macros
        // only, and a skip must never be silent.
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "\n!!!!!!!! SKIPPED {test}: realkube is not running ({why}); {SKIP_VAR}=1 allows it. CI never sets it. !!!!!!!!"
        );
        None
    } else {
        panic!(
            "{test}: realkube (a real kube-apiserver) is not running: {why}.\n\
             Start it with `cargo xtask test` or `tests/realkube/realkube.sh start --apiservers 3 --routable-addresses`,\n\
             or set {SKIP_VAR}=1 to skip these tests on purpose."
        )
    }
}

/// `error` and its sources, `: `-separated.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// A DNS-label name unique in this run and across runs: `prefix` (cut to
/// fit) and a suffix from the clock, the process id and a counter.
pub fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let stamp = (nanos as u64) ^ (u64::from(std::process::id()) << 40);
    let suffix = format!("{:x}{n}", stamp & 0xff_ffff_ffff);
    let mut clean: String = prefix
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    clean.truncate(62 - suffix.len());
    let clean = clean.trim_matches('-');
    if clean.is_empty() {
        format!("t{suffix}")
    } else {
        format!("{clean}-{suffix}")
    }
}

/// `ObjectMeta` with a name.
pub fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        ..ObjectMeta::default()
    }
}

/// Creates a namespace named after `test` (labelled [`SUITE_LABEL`]).
/// There is no namespace controller in realkube, so nothing waits for
/// namespaces to go away: the names are unique instead.
pub async fn create_namespace(client: &Client, test: &str) -> Result<String, kubeset::Error> {
    let name = unique_name(test);
    let ns = Namespace {
        metadata: ObjectMeta {
            labels: Some([(SUITE_LABEL.to_owned(), "true".to_owned())].into()),
            ..meta(&name)
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await?;
    Ok(name)
}

/// Polls `check` every 100 ms until it answers `Some`, for at most
/// `timeout`; panics with `what` on timeout.
pub async fn eventually<T, F, Fut>(timeout: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        if tokio::time::Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
