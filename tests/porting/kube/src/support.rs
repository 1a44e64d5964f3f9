//! The embedded API server and a kube-rs client talking to it over a
//! real socket (plain HTTP on loopback).

use std::future::Future;
use std::time::Duration;

use kube::{Client, Config};
use kubeset_testserver::TestServer;

/// Generous bound for anything a busy CI machine does; every wait in the
/// tests is bounded by it.
pub(crate) const DEADLINE: Duration = Duration::from_secs(60);

/// The boxed error of the tests' `?`.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Runs `f` within [`DEADLINE`], or fails naming what was waited for.
pub(crate) async fn within<T>(what: &str, f: impl Future<Output = T>) -> Result<T, BoxError> {
    tokio::time::timeout(DEADLINE, f)
        .await
        .map_err(|_| format!("{what}: not done within {DEADLINE:?}").into())
}

/// Starts the embedded server (with its simulated container runtime, for
/// exec and port-forward) and a client configured as kube-rs users
/// configure one by hand: `Config::new(url)`, `Client::try_from(config)`.
pub(crate) async fn server() -> Result<(TestServer, Client), BoxError> {
    let server = TestServer::builder()
        .container_runtime(true)
        .start()
        .await?;
    let config = Config::new(server.url().parse()?);
    Ok((server, client(config)?))
}

/// `Client::try_from(config)` into kube-rs's `Result`.
fn client(config: Config) -> kube::Result<Client> {
    let client = Client::try_from(config)?;
    Ok(client)
}
